//! The walk that collects a module's facts: imports (scoped to the module or
//! function that makes them), bindings, parameters, call sites, loops,
//! conditions and suppression comments.

use gpulens_syntax::NodeExt;

use gpulens_syntax::{grammar, Node, Tree};

use super::*;

impl<'t> Module<'t> {
    pub(super) fn add_import(&mut self, scope: std::ops::Range<usize>, name: &'t str, target: String) {
        self.imports.entry(name).or_default().push((scope, target));
    }

    /// Walks the tree (but the definitions in `skip`); false when `cancel`
    /// stopped it.
    pub(super) fn collect(&mut self, tree: &'t Tree, skip: &[usize], cancel: &dyn Fn() -> bool) -> bool {
        // One frame per entered node: what entering it changed, undone on
        // exit. A node is left when the walk next gives one no deeper than
        // it (or ends): the frames above that depth are popped then.
        struct Frame<'n> {
            node: Node<'n>,
            /// Its place in `order`.
            at: u32,
            index: Option<u32>,
            kind: u16,
            scope: bool,
            repeats: bool,
            /// It is evaluated once although inside a comprehension: the
            /// first `for … in` clause (undoes the comprehension's repeat).
            once: bool,
            check: bool,
        }
        let g = grammar();
        let mut walk = gpulens_syntax::preorder(tree.root_node());
        let mut frames: Vec<Frame> = Vec::new();
        let mut scopes: Vec<usize> = vec![MODULE_SCOPE];
        let mut scope_ranges: Vec<std::ops::Range<usize>> = Vec::new();
        scope_ranges.push(0..self.text.len());
        let mut loop_depth = 0u32;
        let mut check_depth = 0u32;
        let mut visited = 0u32;
        loop {
            let next = walk.next();
            // Leave the nodes that are done: all but the new node's ancestors.
            let depth = if next.is_some() { walk.depth() } else { 0 };
            while frames.len() > depth {
                let done = frames.pop().expect("one frame per entered node");
                self.ends[done.at as usize] = self.order.len() as u32;
                scopes.truncate(scopes.len() - done.scope as usize);
                scope_ranges.truncate(scope_ranges.len() - done.scope as usize);
                loop_depth -= done.repeats as u32;
                loop_depth += done.once as u32;
                check_depth -= done.check as u32;
            }
            let Some(node) = next else { return true };
            visited = visited.wrapping_add(1);
            if visited.is_multiple_of(2048) && cancel() {
                return false;
            }
            let kind = node.kind_id();
            let at = self.order.len() as u32;
            self.order.push(node);
            self.ends.push(at + 1);
            // Record its parent (stored when its first named child is entered).
            if let Some(parent) = frames.last_mut().filter(|_| node.is_named()) {
                let index = *parent.index.get_or_insert_with(|| {
                    self.parent_nodes.push(parent.node);
                    self.parent_nodes.len() as u32 - 1
                });
                self.parents.insert(node.id(), index);
            }
            let skipped = !skip.is_empty()
                && (kind == g.function_definition || kind == g.decorated_definition)
                && skip.binary_search(&node.id()).is_ok();
            // An import is read whole where it stands. Nothing below it
            // matters to the rules but a comment (a suppression), so without
            // one it is not walked into: a module's imports are a good part
            // of what a walk outside its functions visits, at every edit.
            let import = kind == g.import_statement || kind == g.import_from_statement;
            if import {
                self.import_nodes.push(node);
                let scope = import_scope(&scope_ranges, node);
                if kind == g.import_statement {
                    self.collect_import(node, scope);
                } else {
                    self.collect_import_from(node, scope);
                }
            }
            if skipped || (import && !self.text.as_bytes()[node.byte_range()].contains(&b'#')) {
                if kind == g.decorated_definition {
                    self.decorated.push(node);
                }
                self.ends[at as usize] |= NOT_WALKED;
                // Treat as a leaf (no frame): move on to its next sibling.
                walk.skip_children();
                continue;
            }
            let parent = frames.last().map_or(0, |f| f.kind);
            // Only these parents give a child a field the walk reads (a
            // condition, a loop's body): asking the cursor for the field
            // costs a search up its stack, at every node.
            let field = if parent == g.if_statement
                || parent == g.elif_clause
                || parent == g.while_statement
                || parent == g.for_statement
            {
                walk.field_id()
            } else {
                None
            };
            // Conditions and assertions check data; they are not the work.
            let is_condition = field == Some(g.f_condition);
            let check = is_condition || kind == g.assert_statement;
            let mut frame = Frame { node, at, index: None, kind, scope: false, repeats: false, once: false, check };
            check_depth += check as u32;
            if is_condition && (parent == g.if_statement || parent == g.elif_clause || parent == g.while_statement) {
                let repeats = loop_depth > 0 || parent == g.while_statement;
                self.conditions.push(ConditionSite { node, scope: *scopes.last().unwrap(), repeats });
            }
            if kind == g.call {
                self.calls.push(CallSite { node, scope: *scopes.last().unwrap(), loop_depth, in_check: check_depth > 0 });
                self.collect_growth(node, *scopes.last().unwrap());
            } else if kind == g.assignment {
                self.collect_assignment(node, *scopes.last().unwrap());
            } else if kind == g.function_definition || kind == g.lambda {
                if kind == g.function_definition
                    && node.field("name").is_some_and(|n| self.text[n.byte_range()].starts_with("test"))
                {
                    self.tests.push(node.byte_range());
                }
                scopes.push(node.id());
                scope_ranges.push(node.byte_range());
                frame.scope = true;
                if let Some(params) = node.field("parameters") {
                    self.collect_parameters(params, node.id());
                }
            } else if kind == g.class_definition {
                // A class body is a scope of its own, which its methods do not see.
                scopes.push(node.id());
                scope_ranges.push(node.byte_range());
                frame.scope = true;
            } else if kind == g.for_statement {
                let scope = *scopes.last().unwrap();
                self.collect_loop_target(node, scope);
                self.loops.push(LoopSite { node, scope, loop_depth });
            } else if kind == g.block {
                // Only a loop's body repeats; its iterable is evaluated once.
                frame.repeats =
                    field == Some(g.f_body) && (parent == g.for_statement || parent == g.while_statement);
            } else if kind == g.list_comprehension
                || kind == g.set_comprehension
                || kind == g.dictionary_comprehension
                || kind == g.generator_expression
            {
                frame.repeats = true;
            } else if kind == g.for_in_clause
                && (parent == g.list_comprehension
                    || parent == g.set_comprehension
                    || parent == g.dictionary_comprehension
                    || parent == g.generator_expression)
            {
                // A comprehension repeats all but its first iterable, which
                // is evaluated once, before the loop (`[f(i) for i in
                // s.sort_values()]` sorts once). (Only in one: a clause
                // that error recovery left on its own repeats nothing.)
                frame.once = node
                    .prev_named_sibling()
                    .is_some_and(|s| s.kind_id() != g.for_in_clause && s.kind_name() != "if_clause");
            } else if kind == g.decorated_definition {
                self.decorated.push(node);
                let fixture = node
                    .named_children(&mut node.walk())
                    .any(|d| d.kind_name() == "decorator" && self.text[d.byte_range()].contains("fixture"));
                // A test's decorators (`@pytest.mark.parametrize(...)`) hold its data.
                let test = node
                    .field("definition")
                    .filter(|d| d.kind_id() == g.function_definition)
                    .and_then(|d| d.field("name"))
                    .is_some_and(|n| self.text[n.byte_range()].starts_with("test"));
                if fixture || test {
                    self.tests.push(node.byte_range());
                }
            } else if kind == g.binary_operator {
                if node.child_by_field_id(g.f_operator.get()).is_some_and(|op| &self.text[op.byte_range()] == "@") {
                    let scope = *scopes.last().unwrap();
                    self.matmuls.push(CallSite { node, scope, loop_depth, in_check: check_depth > 0 });
                }
            } else if kind == g.comment {
                self.collect_comment(node);
            }
            loop_depth += frame.repeats as u32;
            loop_depth -= frame.once as u32;
            frames.push(frame);
        }
    }

    /// Records a binding that takes effect at the end of `name`'s statement.
    pub(super) fn bind(&mut self, scope: usize, name: Node<'t>, binding: Binding<'t>) {
        let at = match binding {
            Binding::Assigned(rhs) => rhs.end_byte(),
            _ => name.start_byte(),
        };
        self.bind_at(scope, name, binding, at);
    }

    /// [`Self::bind`], seen from offset `at` on.
    fn bind_at(&mut self, scope: usize, name: Node<'t>, binding: Binding<'t>, at: usize) {
        let name = &self.text[name.byte_range()];
        self.bindings.entry((scope, name)).or_default().push((at, binding));
    }

    pub(super) fn collect_parameters(&mut self, params: Node<'t>, scope: usize) {
        let function = params.parent();
        let mut documented = function.map(|f| documented_types(self.docstring(f).unwrap_or(""))).unwrap_or_default();
        // numpydoc documents a constructor's parameters in its class's
        // docstring (the `__init__`'s own entries come first).
        if let Some(class) = function.and_then(|f| constructor_class(self.text, f)) {
            documented.extend(documented_types(self.docstring(class).unwrap_or("")));
        }
        let mut cursor = params.walk();
        for param in params.named_children(&mut cursor) {
            let annotation = match param.kind_name() {
                "typed_parameter" | "typed_default_parameter" => param.field("type"),
                _ => None,
            };
            let Some(name) = parameter_name(param) else { continue };
            let text = &self.text[name.byte_range()];
            let documented_type = documented.iter().find(|(n, _)| *n == text).map(|(_, ty)| *ty);
            if let Some(ty) = documented_type {
                self.documented.insert((scope, text), ty);
            }
            let binding = match annotation {
                Some(ty) => Binding::Annotated(ty),
                None => {
                    // The docstring's word wins over the default (`n_cycles=7.0`
                    // documented as `float | array-like`).
                    let number = match documented_type {
                        Some(ty) => number_type(ty),
                        None => param.kind_name() == "default_parameter" && param.field("value").is_some_and(number_literal),
                    };
                    let default = param
                        .field("value")
                        .filter(|v| param.kind_name() == "default_parameter" && v.kind_name() == "integer")
                        .and_then(|v| parse_int(&self.text[v.byte_range()]));
                    if number { Binding::Number(default) } else { Binding::Parameter }
                }
            };
            self.bind(scope, name, binding);
        }
    }

    /// The docstring of a function or class definition: the text of the
    /// string that is its body's first statement.
    pub(crate) fn docstring(&self, function: Node<'t>) -> Option<&'t str> {
        gpulens_syntax::docstring(function).map(|s| &self.text[s.byte_range()])
    }

    pub(super) fn collect_loop_target(&mut self, node: Node<'t>, scope: usize) {
        let (Some(left), Some(right)) = (node.field("left"), node.field("right")) else {
            return;
        };
        let called = (right.kind_name() == "call").then(|| right.field("function").map(|f| self.text_of(f))).flatten();
        let names = |pattern: Node<'t>| -> Vec<Node<'t>> {
            let mut cursor = pattern.walk();
            pattern.named_children(&mut cursor).collect()
        };
        match (left.kind_name(), called) {
            ("identifier", Some("range")) => self.bind(scope, left, Binding::LoopIndex),
            ("identifier", _) => self.bind(scope, left, Binding::Element(right)),
            // `for i, x in enumerate(a)`: `i` counts like a range index, `x` is an element of `a`.
            ("pattern_list" | "tuple_pattern", Some("enumerate")) => {
                let targets = names(left);
                if let Some(index) = targets.first().filter(|i| i.kind_name() == "identifier") {
                    self.bind(scope, *index, Binding::LoopIndex);
                }
                if let (Some(item), [iterable, ..]) = (targets.get(1).filter(|i| i.kind_name() == "identifier"), positional_arguments(right).as_slice()) {
                    self.bind(scope, *item, Binding::Element(*iterable));
                }
            }
            // `for x, y in zip(a, b)`: `x` is an element of `a`, `y` of `b`.
            ("pattern_list" | "tuple_pattern", Some("zip")) => {
                let sources = positional_arguments(right);
                for (target, source) in names(left).into_iter().zip(sources) {
                    if target.kind_name() == "identifier" && source.kind_name() != "list_splat" {
                        self.bind(scope, target, Binding::Element(source));
                    }
                }
            }
            _ => {}
        }
    }

    /// `dfs.append(x)` (and `extend`, `insert`): from here on `dfs` is a
    /// list of unknown length, not the empty `[]` it was made as.
    fn collect_growth(&mut self, call: Node<'t>, scope: usize) {
        let Some(function) = call.field("function").filter(|f| f.kind_name() == "attribute") else { return };
        let (Some(object), Some(method)) = (function.field("object"), function.field("attribute")) else { return };
        if object.kind_name() == "identifier" && matches!(&self.text[method.byte_range()], "append" | "extend" | "insert") {
            self.bind(scope, object, Binding::Grown);
        }
    }

    pub(super) fn collect_assignment(&mut self, node: Node<'t>, scope: usize) {
        let (Some(left), Some(right)) = (node.field("left"), node.field("right")) else {
            // Annotated declaration without a value: `x: np.ndarray`.
            if let (Some(left), Some(ty)) = (node.field("left"), node.field("type")) {
                if left.kind_name() == "identifier" {
                    self.bind(scope, left, Binding::Annotated(ty));
                }
            }
            return;
        };
        // A module imported by name at module level (`spnd =
        // optional_package("scipy.ndimage")[0]`): an import of it.
        if scope == MODULE_SCOPE {
            if let Some((name, module)) = lazy_import(self.text_of(node)) {
                self.add_import(0..self.text.len(), name, canonical_module(module.to_string()));
                return;
            }
        }
        if left.kind_name() == "identifier" {
            self.bind(scope, left, Binding::Assigned(right));
        } else if scope != MODULE_SCOPE && matches!(left.kind_name(), "pattern_list" | "tuple_pattern") {
            let mut cursor = left.walk();
            let targets: Vec<Node<'t>> = left.named_children(&mut cursor).filter(|n| n.kind_name() != "comment").collect();
            // `a, b = x.copy(), y`: each name is its own item's value (bound
            // once the whole right side is evaluated).
            let mut cursor = right.walk();
            let items: Vec<Node<'t>> = right.named_children(&mut cursor).filter(|n| n.kind_name() != "comment").collect();
            let pairwise = matches!(right.kind_name(), "expression_list" | "tuple")
                && items.len() == targets.len()
                && !items.iter().chain(&targets).any(|n| matches!(n.kind_name(), "list_splat" | "list_splat_pattern"));
            for (index, target) in targets.iter().enumerate() {
                if target.kind_name() != "identifier" {
                    continue;
                }
                let binding = if pairwise { Binding::Assigned(items[index]) } else { Binding::Unpacked(right, index as u8) };
                self.bind_at(scope, *target, binding, right.end_byte());
            }
        }
    }

    pub(super) fn collect_import(&mut self, node: Node<'t>, scope: std::ops::Range<usize>) {
        let g = grammar();
        let mut cursor = node.walk();
        for child in node.children_by_field_id(g.f_name, &mut cursor) {
            let kind = child.kind_id();
            if kind == g.dotted_name {
                // `import a.b` binds `a` to the package `a`.
                let full = self.text_of(child);
                let first = full.split('.').next().unwrap_or(full).trim();
                self.add_import(scope.clone(), first, canonical_module(first.to_string()));
            } else if kind == g.aliased_import {
                // `import a.b as c` binds `c` to `a.b`.
                if let (Some(name), Some(alias)) = (child.child_by_field_id(g.f_name.get()), child.child_by_field_id(g.f_alias.get())) {
                    self.add_import(scope.clone(), self.text_of(alias), canonical_module(dotted(self.text_of(name))));
                }
            }
        }
    }

    pub(super) fn collect_import_from(&mut self, node: Node<'t>, scope: std::ops::Range<usize>) {
        let g = grammar();
        let Some(module) = node.child_by_field_id(g.f_module_name.get()) else { return };
        // A relative import names the user's own code: kept with its dots
        // (`.utils.load`), which name nothing the knowledge maps; the
        // project's index reads them (see `crate::project::Place`).
        let module = if module.kind_id() == g.dotted_name {
            canonical_module(dotted(self.text_of(module)))
        } else {
            let text: String = self.text_of(module).split_whitespace().collect();
            text.strip_suffix('.').map_or(text.clone(), str::to_string)
        };
        let qualified = |name: &str| {
            let mut q = String::with_capacity(module.len() + 1 + name.len());
            q.push_str(&module);
            q.push('.');
            q.push_str(&dotted(name));
            q
        };
        let mut cursor = node.walk();
        for child in node.children_by_field_id(g.f_name, &mut cursor) {
            let kind = child.kind_id();
            if kind == g.dotted_name {
                let name = self.text_of(child);
                self.add_import(scope.clone(), name, qualified(name));
            } else if kind == g.aliased_import {
                if let (Some(name), Some(alias)) = (child.child_by_field_id(g.f_name.get()), child.child_by_field_id(g.f_alias.get())) {
                    self.add_import(scope.clone(), self.text_of(alias), qualified(self.text_of(name)));
                }
            }
        }
    }

    pub(super) fn collect_comment(&mut self, node: Node<'t>) {
        if let Some(codes) = parse_suppression(self.text_of(node)) {
            self.suppressions.push(Suppression { offset: node.start_byte(), codes });
        }
    }

    /// Every module an import statement names, fully qualified, with the
    /// statement: `from a.b import c` gives `a.b` and `a.b.c`.
    pub fn import_sites(&self) -> Vec<(Node<'t>, String)> {
        let mut out = Vec::new();
        for &node in &self.import_nodes {
            let mut cursor = node.walk();
            let names: Vec<Node<'t>> = node
                .children_by_field_name("name", &mut cursor)
                .map(|n| if n.kind_name() == "aliased_import" { n.field("name").unwrap_or(n) } else { n })
                .collect();
            match node.field("module_name").filter(|m| m.kind_name() == "dotted_name") {
                Some(module) => {
                    let module = dotted(self.text_of(module));
                    for name in names {
                        out.push((node, format!("{module}.{}", dotted(self.text_of(name)))));
                    }
                    out.push((node, module));
                }
                None if node.kind_name() == "import_statement" => {
                    out.extend(names.into_iter().map(|n| (node, dotted(self.text_of(n)))));
                }
                None => {}
            }
        }
        out
    }
}

/// The name a module is known by to the rules: Numba-CUDA-MLIR's `cuda`
/// compiles the same kernels through the same API as numba-cuda's
/// (`numba_cuda_mlir.cuda.jit` is `numba.cuda.jit` to every check).
pub(crate) fn canonical_module(path: String) -> String {
    match path.strip_prefix("numba_cuda_mlir") {
        Some(rest) if rest.is_empty() || rest.starts_with('.') => format!("numba{rest}"),
        _ => path,
    }
}

pub(super) fn dotted(name: &str) -> String {
    if !name.contains(char::is_whitespace) {
        return name.to_string();
    }
    name.split('.').map(str::trim).collect::<Vec<_>>().join(".")
}

/// `name` is `module` or something in it (`numpy.fft` is within `numpy`,
/// `numpyro` is not).
pub(crate) fn within(name: &str, module: &str) -> bool {
    name.strip_prefix(module).is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
}

/// Where an import is seen: the whole module for a module-level import; for
/// one inside a function or class, from the import to the end of that
/// scope, so that of two imports of one name in a function (`from a import
/// X` in one branch, `from b import X` in a later one), code after the second
/// sees the second.
pub(super) fn import_scope(scope_ranges: &[std::ops::Range<usize>], node: Node<'_>) -> std::ops::Range<usize> {
    let scope = scope_ranges.last().expect("the module scope").clone();
    if scope_ranges.len() == 1 {
        scope
    } else {
        node.start_byte()..scope.end
    }
}

/// The functions that import a module given its name and return it (or a
/// tuple that starts with it): the standard library's, lazy_loader's,
/// pytest's, and the `optional_package` helper of nibabel and dipy.
const IMPORTERS: &[&str] = &["importlib.import_module", "import_module", "lazy_loader.load", "lazy.load", "pytest.importorskip", "optional_package"];

/// A statement that binds a name to a module imported by its name:
/// `m = importlib.import_module("scipy.ndimage")`, `spnd =
/// optional_package("scipy.ndimage")[0]`, `spnd, have, _ =
/// optional_package("scipy.ndimage")`. The name and the module. (The
/// pre-scan reads module statements with it too.)
pub(crate) fn lazy_import(statement: &str) -> Option<(&str, &str)> {
    let (left, right) = statement.trim().split_once('=')?;
    if right.starts_with('=') || left.ends_with(['!', '<', '>', '+', '-', '*', '/', '%', '&', '|', '^', ':']) {
        return None;
    }
    let is_name = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_') && !s.starts_with(|c: char| c.is_ascii_digit());
    let left = left.trim().trim_start_matches('(').trim_end_matches(')');
    let (name, tuple) = match left.split_once(',') {
        Some((first, rest)) => (first.trim(), rest.split(',').all(|n| is_name(n.trim()) || n.trim().is_empty())),
        None => (left.trim(), false),
    };
    if !is_name(name) {
        return None;
    }
    let right = right.trim();
    // `[0]` takes the module out of the tuple; a tuple target unpacks it.
    let (right, first) = match right.strip_suffix("[0]") {
        Some(r) => (r.trim_end(), true),
        None => (right, tuple),
    };
    let (callee, arguments) = right.strip_suffix(')')?.split_once('(')?;
    let callee = callee.trim();
    if !IMPORTERS.contains(&callee) || (callee == "optional_package") != first {
        return None;
    }
    let argument = arguments.split(',').next()?.trim();
    let quote = argument.chars().next().filter(|q| matches!(q, '"' | '\''))?;
    let module = argument.strip_prefix(quote)?.strip_suffix(quote)?;
    (!module.is_empty() && module.split('.').all(is_name)).then_some((name, module))
}

/// The class whose constructor `function` is: `__init__` defined directly
/// in the class's body (decorated or not).
pub(crate) fn constructor_class<'t>(text: &str, function: Node<'t>) -> Option<Node<'t>> {
    if function.field("name").map(|n| &text[n.byte_range()]) != Some("__init__") {
        return None;
    }
    let mut up = function.parent()?;
    if up.kind_name() == "decorated_definition" {
        up = up.parent()?;
    }
    let class = up.parent().filter(|_| up.kind_name() == "block")?;
    (class.kind_name() == "class_definition").then_some(class)
}
