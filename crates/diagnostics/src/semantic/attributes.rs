//! Values set on `self`: the `self.x = …` statements of a class, read from
//! its text, and what `self.x` holds in its methods.

use gpulens_syntax::NodeExt;

use gpulens_knowledge::ApiKind;
use gpulens_syntax::Node;

use super::*;

impl<'t> Module<'t> {
    /// The `self.x = …` statements of `class`: where each starts and the attribute.
    pub(crate) fn assignments_to_self(&self, class: Node<'_>) -> Vec<(usize, &'t str)> {
        let known = self.class_assignments.borrow().get(&class.id()).cloned();
        let known = known.unwrap_or_else(|| {
            let start = class.start_byte();
            let found: Vec<(usize, usize)> =
                self_assignments(&self.text[class.byte_range()]).into_iter().map(|(at, attribute, _)| (start + at, attribute.len())).collect();
            let found = std::rc::Rc::new(found);
            self.class_assignments.borrow_mut().insert(class.id(), found.clone());
            found
        });
        // `self.` is five bytes.
        known.iter().map(|&(at, len)| (at, &self.text[at + 5..at + 5 + len])).collect()
    }

    /// The names (as byte ranges) of the methods `class` defines at
    /// `column`, as `find` reads them, read once per class and column: the
    /// rules ask about one method after another.
    pub(crate) fn class_methods(
        &self,
        class: Node<'_>,
        column: usize,
        find: impl FnOnce() -> Vec<std::ops::Range<usize>>,
    ) -> std::rc::Rc<Vec<std::ops::Range<usize>>> {
        let key = (class.id(), column);
        if let Some(known) = self.class_methods.borrow().get(&key) {
            return known.clone();
        }
        let found = std::rc::Rc::new(find());
        self.class_methods.borrow_mut().insert(key, found.clone());
        found
    }

    /// What `self.name` (`expr`) holds, from the assignments to it in the
    /// methods of the class around `expr`: a model or index the knowledge
    /// base maps (`self.nn = NearestNeighbors(...)` in one method,
    /// `self.nn.kneighbors(X)` in another), or data. Read as the class alone
    /// tells it (not through the methods' callers), so that it does not
    /// depend on which functions this analysis walked.
    pub(super) fn attribute_value(&self, expr: Node<'t>, depth: u32) -> Value {
        let Some(attribute) = expr.field("attribute") else { return Value::Unknown };
        let name = self.text_of(attribute);
        let class = self.ancestors(expr).find(|c| c.kind_name() == "class_definition");
        // A class with syntax errors parses differently depending on what
        // surrounds it: what its methods assign is not to be relied on.
        let Some(class) = class.filter(|c| !c.has_error()) else { return Value::Unknown };
        let key = (class.id(), name.to_string());
        // Asked again while working it out: unknown. Through its own
        // assignments (`self.n = self.n + 1`) that is the answer whichever
        // use asks first; through another attribute's (`self.a = f(self.b)`,
        // `self.b = g(self.a)`) it depends on which is asked first, so
        // nothing worked out under it is remembered (as under the depth
        // limit: see [`Module::eval`]).
        if let Some(at) = self.attributes_in_progress.borrow().iter().position(|k| *k == key) {
            if at + 1 != self.attributes_in_progress.borrow().len() {
                self.reach(super::MAX_EVAL_DEPTH + 1);
                return Value::Unknown;
            }
            // Its own self-update: it stands for what the other assignments give.
            return match &*self.provisional.borrow() {
                Some((k, v)) if *k == key => *v,
                _ => Value::Unknown,
            };
        }
        // Remembered with how deep its evaluation went, as [`Module::eval`] does.
        if let Some(&(known, height)) = self.attributes.borrow().get(&key) {
            if depth + height <= super::MAX_EVAL_DEPTH {
                self.reach(depth + height);
                return known;
            }
        }
        self.attributes_in_progress.borrow_mut().push(key.clone());
        let outer = self.reached.replace(depth);
        let mut found: Option<Value> = None;
        let mut data: Option<Value> = None;
        // Self-updates (`self.df = self.df.dropna()`), read after the others.
        let mut updates: Vec<(Node<'t>, usize)> = Vec::new();
        // The statements that assign it start a line with `self.name =`:
        // found in the class's text, then looked up in the tree (a walk of
        // a large class per attribute would cost more than the rules).
        let pattern = format!("self.{name}");
        for &(start, attribute) in self.assignments_to_self(class).iter() {
            if attribute != name {
                continue;
            }
            let Some(node) = self.root.descendant_for_byte_range(start, start + pattern.len()) else { continue };
            let Some(assignment) = [Some(node), self.parent(node)].into_iter().flatten().find_map(|n| self.parent(n).filter(|p| p.kind_name() == "assignment"))
            else {
                continue;
            };
            let (Some(left), Some(right)) = (assignment.field("left"), assignment.field("right")) else {
                continue;
            };
            if left.kind_name() != "attribute" || left.start_byte() != start {
                continue;
            }
            let model = (right.kind_name() == "call")
                .then(|| right.field("function"))
                .flatten()
                .and_then(|f| self.module_level_name(f))
                .and_then(|q| self.knowledge.api(&q))
                .filter(|api| matches!(api.kind, ApiKind::Estimator | ApiKind::Index))
                .map(|api| Value::Model(api.cpu.as_str()))
                // `self.model = model`, a parameter the class documents as a
                // scikit-learn model cuML has (or gives one as default).
                .or_else(|| self.documented_model(class, assignment, right).map(Value::Model))
                // `self.estimator_ = clone(self.model)`: a copy of another attribute's model.
                .or_else(|| {
                    let cloned = (right.kind_name() == "call")
                        .then(|| right.field("function"))
                        .flatten()
                        .and_then(|f| self.module_level_name(f))
                        .is_some_and(|n| matches!(n.as_str(), "sklearn.base.clone" | "sklearn.clone"));
                    let source = self.first_positional(right).filter(|a| cloned && a.kind_name() == "attribute")?;
                    let own = source.field("object").is_some_and(|o| self.text_of(o) == "self");
                    match self.attribute_value(self.own_node(source)?, depth + 1) {
                        v @ Value::Model(_) if own => Some(v),
                        _ => None,
                    }
                });
            // `self.x = None` and assignments of what can't be told don't
            // contradict a model assigned elsewhere; two different models do.
            match (found, model) {
                (_, None) => {}
                (None, Some(m)) => found = Some(m),
                (Some(a), Some(b)) if a == b => {}
                _ => {
                    found = Some(Value::Unknown);
                    break;
                }
            }
            // Data: what the method that assigns it computes (`self.coef_ =
            // solve(...)[1:]` in `fit`, `self.alpha = alpha` of a number in
            // `__init__`), read in that method's scope. `None` (not set yet)
            // says nothing; assignments of different kinds, or of what
            // can't be told, leave it unknown.
            if model.is_none() && right.kind_name() != "none" {
                let scope = self.enclosing_function(assignment).map_or(super::MODULE_SCOPE, |f| f.id());
                let reads_itself = self.preorder(right).any(|n| self.is_self_attribute(n, name));
                if reads_itself {
                    updates.push((right, scope));
                    continue;
                }
                // (Read as inside a flow: not through the method's callers
                // or callees, so that it depends on the class alone.)
                let flow = self.in_flow.replace(true);
                let value = self.eval(right, scope, depth + 1);
                self.in_flow.set(flow);
                let value = match value {
                    Value::Model(_) => Value::Unknown,
                    // A number set once (`self.count = 0` in `__init__`) is
                    // often a start that other code moves on: one number,
                    // of a value not known.
                    Value::Int(_) => Value::Scalar,
                    v => v,
                };
                data = super::flow::join(data, value);
            }
        }
        // A self-update keeps what the other assignments give when, read
        // with the attribute standing for that, it gives the same kind again
        // (`self.df = self.df.groupby(...).agg(...)` of a table is a
        // table); else the attribute holds values of different kinds. (Read
        // without remembering anything: it rests on the stand-in.)
        if found.is_none() && !updates.is_empty() {
            let standing = data.unwrap_or(Value::Unknown);
            let mut kept = standing != Value::Unknown;
            if kept {
                let outer_provisional = self.provisional.replace(Some((key.clone(), standing)));
                let memo = self.no_memo.replace(true);
                let flow = self.in_flow.replace(true);
                for &(right, scope) in &updates {
                    let value = match self.eval(right, scope, depth + 1) {
                        Value::Int(_) => Value::Scalar,
                        v => v,
                    };
                    if std::mem::discriminant(&value) != std::mem::discriminant(&standing) {
                        kept = false;
                        break;
                    }
                    data = super::flow::join(data, value);
                }
                self.in_flow.set(flow);
                self.no_memo.set(memo);
                *self.provisional.borrow_mut() = outer_provisional;
            }
            if !kept {
                data = Some(Value::Unknown);
            }
        }
        let value = match found {
            Some(model) => model,
            None => data.unwrap_or(Value::Unknown),
        };
        self.attributes_in_progress.borrow_mut().pop();
        let reached = self.reached.get();
        if reached <= super::MAX_EVAL_DEPTH && !self.no_memo.get() {
            self.attributes.borrow_mut().insert(key, (value, reached - depth));
        }
        self.reached.set(outer.max(reached));
        value
    }
}

impl<'t> Module<'t> {
    /// Whether `node` is `self.name`.
    pub(super) fn is_self_attribute(&self, node: Node<'_>, name: &str) -> bool {
        node.kind_name() == "attribute"
            && node.field("object").is_some_and(|o| self.text_of(o) == "self")
            && node.field("attribute").is_some_and(|a| self.text_of(a) == name)
    }

    /// The model the items of `self.name` (`expr`) hold, when the class's
    /// every `self.name[...] = …` assigns one the knowledge base maps, the
    /// same (`self.models_[label] = KernelDensity(...).fit(x)` in `fit`):
    /// what `self.models_[label]` is in another method.
    pub(super) fn item_model(&self, expr: Node<'t>, depth: u32) -> Option<Value> {
        let name = self.text_of(expr.field("attribute")?);
        let class = self.ancestors(expr).find(|c| c.kind_name() == "class_definition").filter(|c| !c.has_error())?;
        let pattern_len = "self.".len() + name.len();
        let mut found: Option<Value> = None;
        for &(start, attribute) in self.assignments_to_self(class).iter() {
            if attribute != name {
                continue;
            }
            let Some(node) = self.root.descendant_for_byte_range(start, start + pattern_len) else { continue };
            let Some(item) = self.parent(node).filter(|s| s.kind_name() == "subscript" && s.field("value") == Some(node)) else {
                continue;
            };
            let Some(assignment) = self.parent(item).filter(|a| a.kind_name() == "assignment" && a.field("left") == Some(item)) else {
                continue;
            };
            let mut right = assignment.field("right")?;
            // `Model(...).fit(x)`: scikit-learn's `fit` returns the model.
            while let Some(fitted) = right
                .field("function")
                .filter(|f| right.kind_name() == "call" && f.kind_name() == "attribute")
                .filter(|f| f.field("attribute").is_some_and(|a| matches!(self.text_of(a), "fit" | "set_params")))
                .and_then(|f| f.field("object"))
            {
                right = fitted;
            }
            let scope = self.enclosing_function(assignment).map_or(super::MODULE_SCOPE, |f| f.id());
            let flow = self.in_flow.replace(true);
            let value = self.eval(right, scope, depth + 1);
            self.in_flow.set(flow);
            match (found, value) {
                (None, v @ Value::Model(_)) => found = Some(v),
                (Some(a), b) if a == b => {}
                _ => return None,
            }
        }
        found
    }
}

/// Statements of `text` that assign to an attribute of `self` at the start
/// of a line (`self.nn = NearestNeighbors(...)`): where `self` starts, the
/// attribute, and the statement through its continuation lines (until
/// brackets close). What `Module::attribute_value` reads, and what the
/// cache key of a method working through `self` covers.
pub(crate) fn self_assignments(text: &str) -> Vec<(usize, &str, &str)> {
    // Only the lines holding `self.` can start one: found with a vector
    // search, not line by line (a 12,000-line class is read on every edit
    // of one of its methods that asks about an attribute).
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    // Where the next statement may start: after the last one found, with
    // its continuation lines.
    let mut next = 0;
    for at in memchr::memmem::find_iter(bytes, b"self.") {
        if at < next {
            continue;
        }
        let line_start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
        if line_start < next || !bytes[line_start..at].iter().all(|b| matches!(b, b' ' | b'\t')) {
            continue;
        }
        let line_end = memchr::memchr(b'\n', &bytes[at..]).map_or(text.len(), |i| at + i);
        let line = &text[line_start..line_end];
        let rest = &text[at + 5..line_end];
        let name_len = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
        let mut after = rest[name_len..].trim_start_matches([' ', '\t']);
        // An item of it (`self.models_[label] = ...`): past the brackets.
        if after.starts_with('[') {
            let mut depth = 0i64;
            let close = after.char_indices().find(|(_, c)| {
                depth += match c {
                    '[' => 1,
                    ']' => -1,
                    _ => 0,
                };
                depth == 0
            });
            after = close.map_or("", |(i, _)| after[i + 1..].trim_start_matches([' ', '\t']));
        }
        if name_len > 0 && after.starts_with('=') && !after.starts_with("==") {
            let mut open = bracket_depth(line);
            let mut end = line_end;
            while open > 0 && end < text.len() {
                let following = memchr::memchr(b'\n', &bytes[end + 1..]).map_or(text.len(), |i| end + 1 + i);
                open += bracket_depth(&text[end + 1..following]);
                end = following;
            }
            next = end + 1;
            out.push((at, &rest[..name_len], &text[line_start..end]));
        }
    }
    out
}

/// Brackets opened minus brackets closed in `s`.
pub(super) fn bracket_depth(s: &str) -> i64 {
    s.bytes().fold(0, |d, b| match b {
        b'(' | b'[' | b'{' => d + 1,
        b')' | b']' | b'}' => d - 1,
        _ => d,
    })
}
