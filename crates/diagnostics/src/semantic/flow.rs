//! What flows between a module's own functions: a parameter holds what the
//! function's callers pass it, a call of the module's own function holds
//! what that function returns, and a parameter nothing else tells about is
//! what the code does with it (`df.groupby(...)` is a pandas table's).
//!
//! A careful reader does the same: `summarize(df)` called as
//! `summarize(pd.read_csv(path))` works on a DataFrame. The evidence is
//! weaker than an annotation or a docstring, which come first; calls from
//! tests do not count (their data is small by design).
//!
//! A module-level function's callers in the project's other modules count
//! too: the project index carries what they pass (see `crate::project`).
//!
//! Values flow one call away: a caller's argument is read with the caller's
//! own evidence, a callee's return with the callee's, not with their
//! callers' or callees' in turn. So a function's findings depend on its own
//! text and on the functions it calls or that call it, and no further: the
//! edit plan re-analyses those together, and the pre-scan parses them
//! (see `plan::words::neighbours`). (FIXME: a parameter passed on as it came
//! is what the caller's callers pass; reading two callers up, tried in
//! 17177df, made the incremental analysis differ from a fresh one.)

use gpulens_syntax::{Node, NodeExt};

use super::{Module, Value};

/// Why a parameter holds what it holds, when no annotation says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evidence {
    /// The docstring gives its type (`traj : DataFrame`).
    Documented(String),
    /// A caller in this module passes it (`load` passes `pd.read_csv(...)`).
    Passed { caller: String, argument: String },
    /// The code calls on it what only one library's objects have (`.groupby`).
    UsedAs(String),
    /// It is what another module's function returns, as that function
    /// declares (`-> pd.DataFrame`, its docstring): the function's name.
    Declared(String),
}

/// The functions of the walked tree, found once, as indices into the
/// module's walk order (a cell holding nodes would make the module
/// invariant in the tree's lifetime).
#[derive(Default)]
pub(crate) struct Functions {
    /// Function node id (a scope) → its node.
    by_scope: rustc_hash::FxHashMap<usize, u32>,
    /// Name → the functions of that name, in source order.
    by_name: rustc_hash::FxHashMap<String, Vec<u32>>,
    /// Name → the calls (indices in the module's `calls`) of a function by
    /// that name, or of `self.name`/`cls.name`: where a function's callers are.
    calls_by_name: rustc_hash::FxHashMap<String, Vec<u32>>,
}

/// Of two values from different sources (two callers, two `return`s), what
/// both allow: the same kind of value, with a size only when both know one.
pub(super) fn join(a: Option<Value>, b: Value) -> Option<Value> {
    use Value::*;
    let Some(a) = a else { return Some(b) };
    let same_kind = std::mem::discriminant(&a) == std::mem::discriminant(&b);
    Some(match (a, b) {
        (Unknown, _) | (_, Unknown) => Unknown,
        (Int(x), Int(y)) if x == y => Int(x),
        (Int(_) | Scalar, Int(_) | Scalar) => Scalar,
        (Array(x), Array(y)) => Array(x.zip(y).map(|(x, y)| x.max(y))),
        (Frame(x), Frame(y)) => Frame(x.zip(y).map(|(x, y)| x.max(y))),
        (Graph(x), Graph(y)) => Graph(x.zip(y).map(|(x, y)| x.max(y))),
        (Grouped(x), Grouped(y)) => Grouped(x.zip(y).map(|(x, y)| x.max(y))),
        (Device(x), Device(y)) => Device(x.zip(y).map(|(x, y)| x.max(y))),
        (Model(x), Model(y)) if x == y => Model(x),
        (GpuFrame, GpuFrame) => GpuFrame,
        _ if same_kind => Unknown,
        _ => Unknown,
    })
}

impl<'t> Module<'t> {
    fn functions(&self) -> &Functions {
        self.functions.get_or_init(|| {
            let mut found = Functions::default();
            let kind = gpulens_syntax::grammar().function_definition;
            for (i, n) in self.order.iter().enumerate().filter(|(_, n)| n.kind_id() == kind) {
                found.by_scope.insert(n.id(), i as u32);
                if let Some(name) = n.field("name") {
                    found.by_name.entry(self.text_of(name).to_string()).or_default().push(i as u32);
                }
            }
            for (i, site) in self.calls.iter().enumerate() {
                let Some(callee) = site.node.field("function") else { continue };
                let name = match callee.kind_name() {
                    "identifier" => Some(callee),
                    "attribute" if callee.field("object").is_some_and(|o| matches!(self.text_of(o), "self" | "cls")) => {
                        callee.field("attribute")
                    }
                    _ => None,
                };
                if let Some(name) = name.map(|n| self.text_of(n)).filter(|n| found.by_name.contains_key(*n)) {
                    found.calls_by_name.entry(name.to_string()).or_default().push(i as u32);
                }
            }
            found
        })
    }

    /// The function whose node id is `scope`, if the walk entered it.
    pub(super) fn function_of_scope(&self, scope: usize) -> Option<Node<'t>> {
        self.functions().by_scope.get(&scope).map(|&i| self.order[i as usize])
    }

    /// The functions named `name`, in source order.
    fn functions_named(&self, name: &str) -> impl Iterator<Item = Node<'t>> + '_ {
        self.functions().by_name.get(name).into_iter().flatten().map(|&i| self.order[i as usize])
    }

    /// `node` as a node of this module's tree (the same node, with its lifetime).
    pub(super) fn own_node(&self, node: Node<'_>) -> Option<Node<'t>> {
        let mut n = self.root.descendant_for_byte_range(node.start_byte(), node.end_byte())?;
        loop {
            if n.id() == node.id() {
                return Some(n);
            }
            n = self.parent(n).filter(|p| p.byte_range() == node.byte_range())?;
        }
    }

    /// Whether `function` is a method (its first parameter the instance or
    /// class), and the class it is defined in.
    pub(crate) fn method_class(&self, function: Node<'t>) -> Option<(Node<'t>, bool)> {
        let mut outer = self.parent(function)?;
        let decorated = outer.kind_name() == "decorated_definition";
        if decorated {
            outer = self.parent(outer)?;
        }
        let class = self.parent(outer).filter(|c| outer.kind_name() == "block" && c.kind_name() == "class_definition")?;
        let static_method = decorated
            && self.parent(function).is_some_and(|d| {
                self.decorators(d).iter().any(|(node, _)| self.text_of(*node).trim_start_matches('@').trim() == "staticmethod")
            });
        Some((class, !static_method))
    }

    /// The parameter `name` of `function`: its position among the positional
    /// parameters a caller fills (the instance not counted), if it has one.
    fn parameter_position(&self, function: Node<'t>, name: &str) -> Option<Option<usize>> {
        let params = function.field("parameters")?;
        let skip_first = self.method_class(function).is_some_and(|(_, bound)| bound);
        let mut position = 0usize;
        let mut positional = true;
        let mut first = true;
        for param in params.named_children(&mut params.walk()) {
            let kind = param.kind_name();
            if matches!(kind, "list_splat_pattern" | "keyword_separator" | "dictionary_splat_pattern") {
                positional = false;
                continue;
            }
            if kind == "positional_separator" || kind == "comment" {
                continue;
            }
            let Some(param_name) = super::parameter_name(param) else { continue };
            if std::mem::take(&mut first) && skip_first {
                continue;
            }
            if self.text_of(param_name) == name {
                return Some(positional.then_some(position));
            }
            position += 1;
        }
        None
    }

    /// The calls of `function` in the walked tree: by its name from where it
    /// is visible (the module, or the function it is nested in), or as
    /// `self.name(...)`/`cls.name(...)` in its class. Not from tests, and
    /// not from itself.
    fn calls_of(&self, function: Node<'t>) -> Vec<&super::CallSite<'t>> {
        let Some(name) = function.field("name").map(|n| self.text_of(n)) else { return Vec::new() };
        let method = self.method_class(function);
        let visible = match method {
            Some((class, _)) => class.byte_range(),
            None => self.enclosing_function(function).map_or(0..self.text.len(), |f| f.byte_range()),
        };
        let own = function.byte_range();
        let sites = self.functions().calls_by_name.get(name).map_or(&[][..], |v| &v[..]);
        sites
            .iter()
            .map(|&i| &self.calls[i as usize])
            .filter(|site| {
                let at = site.node.start_byte();
                visible.contains(&at) && !own.contains(&at) && !self.tests.iter().any(|t| t.contains(&at))
            })
            .filter(|site| {
                let Some(callee) = site.node.field("function") else { return false };
                match (callee.kind_name(), method) {
                    ("identifier", None) => self.text_of(callee) == name,
                    ("attribute", Some(_)) => {
                        callee.field("attribute").is_some_and(|a| self.text_of(a) == name)
                            && callee.field("object").is_some_and(|o| matches!(self.text_of(o), "self" | "cls"))
                    }
                    _ => false,
                }
            })
            .collect()
    }

    /// What the callers of the function `scope` pass as its parameter `name`,
    /// and (for the evidence) the first caller that tells.
    pub(super) fn passed_value(&self, scope: usize, name: &str, depth: u32) -> (Value, Option<Evidence>) {
        // One call away only: what a caller passes is read with the caller's
        // own evidence, not with its callers' (so an edit re-analyses a
        // function and the functions it calls or is called by, no further).
        if self.in_flow.get() {
            return (Value::Unknown, None);
        }
        let Some(function) = self.function_of_scope(scope) else { return (Value::Unknown, None) };
        self.in_flow.set(true);
        let result = (|| {
            let position = self.parameter_position(function, name)?;
            let mut joined = None;
            let mut evidence = None;
            for site in self.calls_of(function) {
                let argument = self.passed_as(site.node, name, position);
                // Not passed: the default (or whatever the caller's `*args` hold).
                let value = argument.map_or(Value::Unknown, |a| self.eval(a, site.scope, depth + 1));
                if evidence.is_none() && value != Value::Unknown {
                    let caller = self.enclosing_function(site.node).and_then(|f| f.field("name")).map_or("the module", |n| self.text_of(n));
                    let argument = argument.map_or("", |a| self.text_of(a));
                    evidence = Some(Evidence::Passed { caller: caller.to_string(), argument: argument.to_string() });
                }
                joined = join(joined, value);
            }
            for passed in self.passed_from_other_modules(function) {
                let argument = passed.argument(name, position);
                let value = argument.map_or(Value::Unknown, |a| a.value);
                if let Some(argument) = argument.filter(|_| evidence.is_none() && value != Value::Unknown) {
                    evidence = Some(Evidence::Passed { caller: passed.caller.clone(), argument: argument.text.clone() });
                }
                joined = join(joined, value);
            }
            Some((joined?, evidence))
        })();
        self.in_flow.set(false);
        match result {
            Some((value, evidence)) if value != Value::Unknown => (value, evidence),
            _ => (Value::Unknown, None),
        }
    }

    /// The argument a call of a function passes as its parameter `name`,
    /// by keyword or at its `position` among the positional ones (see
    /// [`Module::parameter_position`]).
    fn passed_as<'a>(&self, call: Node<'a>, name: &str, position: Option<usize>) -> Option<Node<'a>> {
        match position {
            Some(i) => self.argument(call, name, i),
            None => self.keyword(call, name),
        }
    }

    /// What callers in the project's other modules pass a module-level
    /// `function`, as the index tells (see `crate::project`); nothing for a
    /// method or a nested function, which they cannot call by name.
    fn passed_from_other_modules(&self, function: Node<'t>) -> &[crate::project::Passed] {
        let Some(place) = &self.place else { return &[] };
        if self.method_class(function).is_some() || self.enclosing_function(function).is_some() {
            return &[];
        }
        let Some(own) = function.field("name").map(|n| self.text_of(n)) else { return &[] };
        place.index.passed_to(&format!("{}.{own}", place.module))
    }

    /// What this module passes to the functions of the project's other
    /// modules (see [`crate::project::Place::passes`]): each call of one
    /// outside tests, its arguments read with the caller's own evidence.
    pub(crate) fn passes_out(&self) -> Vec<crate::project::Passed> {
        use crate::project::{Argument, Passed};
        let Some(place) = &self.place else { return Vec::new() };
        let flow = self.in_flow.replace(true);
        let mut out = Vec::new();
        for site in &self.calls {
            let at = site.node.start_byte();
            if self.tests.iter().any(|t| t.contains(&at)) {
                continue;
            }
            let Some(callee) = site.node.field("function") else { continue };
            if !matches!(callee.kind_name(), "identifier" | "attribute") {
                continue;
            }
            let Some(absolute) = self.qualified_name(callee).and_then(|q| place.absolute(&q)) else { continue };
            let Some((module, _)) = absolute.rsplit_once('.') else { continue };
            if module == place.module || !place.index.has_module(module) {
                continue;
            }
            let argument = |node: Node<'_>| {
                let value = self.eval(node, site.scope, 1);
                let text = if value == Value::Unknown { String::new() } else { shortened(self.text_of(node)) };
                Argument { value, text }
            };
            let mut positional = Vec::new();
            let mut keywords = Vec::new();
            match site.node.field("arguments") {
                Some(args) if args.kind_name() == "argument_list" => {
                    let mut splat = false;
                    for a in args.named_children(&mut args.walk()) {
                        match a.kind_name() {
                            "comment" | "dictionary_splat" => {}
                            "keyword_argument" => {
                                if let (Some(k), Some(v)) = (a.field("name"), a.field("value")) {
                                    keywords.push((self.text_of(k).to_string(), argument(v)));
                                }
                            }
                            "list_splat" => splat = true,
                            _ if !splat => positional.push(argument(a)),
                            _ => {}
                        }
                    }
                }
                // (A generator expression as the only argument.)
                Some(_) => positional.push(Argument { value: Value::Unknown, text: String::new() }),
                None => {}
            }
            let mut caller: Vec<&str> = self
                .ancestors(site.node)
                .filter(|a| matches!(a.kind_name(), "function_definition" | "class_definition"))
                .filter_map(|a| a.field("name").map(|n| self.text_of(n)))
                .collect();
            caller.push(&place.module);
            caller.reverse();
            out.push(Passed { callee: absolute, caller: caller.join("."), positional, keywords });
        }
        self.in_flow.set(flow);
        out
    }

    /// The module's own function that `call` calls, if it calls one: by a
    /// name visible where it is called, or `self.method(...)` of its class.
    pub(crate) fn own_callee(&self, call: Node<'_>) -> Option<Node<'t>> {
        let callee = call.field("function")?;
        // (Cheap questions first: most calls are of other modules' functions.)
        let named = match callee.kind_name() {
            "identifier" => self.text_of(callee),
            "attribute" if callee.field("object").is_some_and(|o| matches!(self.text_of(o), "self" | "cls")) => {
                self.text_of(callee.field("attribute")?)
            }
            _ => return None,
        };
        if !self.functions().by_name.contains_key(named) {
            return None;
        }
        let call = self.own_node(call)?;
        match callee.kind_name() {
            "identifier" => {
                let name = named;
                // The innermost definition visible from the call: nested in a
                // function around it, or at module level (not a method).
                let around: Vec<usize> = self.ancestors(call).map(|a| a.id()).collect();
                self.functions_named(name).filter(|f| self.method_class(*f).is_none()).find(|f| {
                    match self.enclosing_function(*f) {
                        Some(outer) => around.contains(&outer.id()),
                        None => true,
                    }
                })
            }
            "attribute" => {
                let class = self.ancestors(call).find(|a| a.kind_name() == "class_definition")?;
                self.functions_named(named).find(|f| self.method_class(*f).is_some_and(|(c, _)| c.id() == class.id()))
            }
            _ => None,
        }
    }

    /// What the module's own function called by `call` returns: the values
    /// of its `return` statements, joined.
    pub(super) fn returned_value(&self, call: Node<'_>, depth: u32) -> Value {
        self.fold_own_returns(call, None, |joined, function, value| {
            join(joined, value.map_or(Value::Unknown, |e| self.eval(e, function.id(), depth + 1)))
        })
        .flatten()
        .unwrap_or(Value::Unknown)
    }

    /// Folds `step` over what the module's own function called by `call`
    /// returns: each `return`'s value (`None` for a bare `return` or a
    /// `yield`), with the function, read one call away (values flow no
    /// further while it runs). `None` where `call` calls no such function,
    /// or a flow is already being read.
    pub(super) fn fold_own_returns<A>(&self, call: Node<'_>, init: A, mut step: impl FnMut(A, Node<'t>, Option<Node<'t>>) -> A) -> Option<A> {
        if self.in_flow.get() {
            return None;
        }
        let function = self.own_callee(call)?;
        let body = function.field("body")?;
        self.in_flow.set(true);
        let mut acc = init;
        let mut walk = self.preorder(body);
        while let Some(n) = walk.next() {
            match n.kind_name() {
                // Their returns are their own.
                "function_definition" | "lambda" | "class_definition" => walk.skip_children(),
                "return_statement" => acc = step(acc, function, n.named_child(0)),
                "yield" => acc = step(acc, function, None),
                _ => {}
            }
        }
        self.in_flow.set(false);
        Some(acc)
    }

    /// What the function `scope` does with its parameter `name` that only one
    /// library's objects allow: a method or attribute of the knowledge's
    /// `only` lists (`df.groupby(...)`, `G.subgraph(...)`), or an
    /// `isinstance(name, pd.DataFrame)` test.
    pub(super) fn used_as(&self, scope: usize, name: &str) -> (Value, Option<Evidence>) {
        let Some(function) = self.function_of_scope(scope) else { return (Value::Unknown, None) };
        let Some(body) = function.field("body") else { return (Value::Unknown, None) };
        let knowledge = self.knowledge;
        // A GeoPandas attribute (`gdf.geometry`, `.to_crs(...)`) on it, anywhere
        // in the function: a GeoDataFrame, which has pandas' methods too but is
        // no table for cuDF. That outweighs any use found below, so it is
        // looked for only once one is (most parameters have none).
        let geo = || {
            self.preorder(body).any(|n| {
                n.kind_name() == "attribute"
                    && n.field("object").is_some_and(|o| o.kind_name() == "identifier" && self.text_of(o) == name)
                    && n.field("attribute").is_some_and(|a| knowledge.only_on(self.text_of(a)) == Some("geopandas"))
            })
        };
        let found = |value: Value, evidence: Evidence| if geo() { (Value::Unknown, None) } else { (value, Some(evidence)) };
        let mut walk = self.preorder(body);
        while let Some(n) = walk.next() {
            match n.kind_name() {
                "function_definition" | "lambda" | "class_definition" => walk.skip_children(),
                "attribute" => {
                    let (Some(object), Some(attribute)) = (n.field("object"), n.field("attribute")) else { continue };
                    if object.kind_name() != "identifier" || self.text_of(object) != name {
                        continue;
                    }
                    let mut attribute = self.text_of(attribute).to_string();
                    // A chain: `x.groupby(...).agg(...)` is `groupby().agg`,
                    // and so is `x.groupby(...)["v"].agg(...)` (a column of the groups).
                    let then = self
                        .parent(n)
                        .filter(|c| c.kind_name() == "call" && c.field("function") == Some(n))
                        .map(|c| {
                            let mut result = c;
                            while let Some(s) = self.parent(result).filter(|s| s.kind_name() == "subscript" && s.field("value") == Some(result)) {
                                result = s;
                            }
                            result
                        })
                        .and_then(|c| self.parent(c).filter(|a| a.kind_name() == "attribute" && a.field("object") == Some(c)))
                        .and_then(|a| a.field("attribute"))
                        .map(|m| self.text_of(m));
                    if let Some(then) = then {
                        let chain = format!("{attribute}().{then}");
                        if knowledge.only_on(&chain).is_some() {
                            attribute = chain;
                        }
                    }
                    let attribute = attribute.as_str();
                    if let Some(module) = knowledge.only_on(attribute) {
                        let value = match module {
                            "pandas" => Value::Frame(None),
                            "networkx" => Value::Graph(None),
                            _ => continue,
                        };
                        return found(value, Evidence::UsedAs(format!(".{attribute}")));
                    }
                }
                "call" => {
                    let Some(callee) = n.field("function") else { continue };
                    if self.text_of(callee) != "isinstance" {
                        continue;
                    }
                    let args = super::positional_arguments(n);
                    let [object, class] = args.as_slice() else { continue };
                    if object.kind_name() != "identifier" || self.text_of(*object) != name {
                        continue;
                    }
                    let value = self.annotation_value(*class);
                    if matches!(value, Value::Frame(_) | Value::Graph(_) | Value::Array(_)) {
                        return found(value, Evidence::UsedAs(format!("isinstance(..., {})", self.text_of(*class))));
                    }
                }
                _ => {}
            }
        }
        (Value::Unknown, None)
    }

    /// What a parameter with no annotation to go by holds: its docstring's
    /// type, what its callers pass, or what the code does with it, in that
    /// order, and why.
    pub(super) fn parameter_value(&self, scope: usize, name: &str, _depth: u32) -> (Value, Option<Evidence>) {
        // Worked out once per parameter (every use of it asks), and from a
        // fresh depth, so that the answer is the same whoever asks first.
        let key = (scope, name.to_string(), self.in_flow.get());
        if let Some(known) = self.parameters.borrow().get(&key) {
            return known.clone();
        }
        let found = self.parameter_value_anew(scope, name);
        if !self.no_memo.get() {
            self.parameters.borrow_mut().insert(key, found.clone());
        }
        found
    }

    fn parameter_value_anew(&self, scope: usize, name: &str) -> (Value, Option<Evidence>) {
        // The instance or class a method is called on is the class's own
        // business (its attributes are read from its methods).
        if matches!(name, "self" | "cls") {
            return (Value::Unknown, None);
        }
        let depth = 0;
        // A documented type is stronger than what callers pass or how the
        // code uses it: `df : GeoDataFrame` is not a table for cuDF, even
        // where the code calls `df.iloc`.
        if let Some(ty) = self.documented.get(&(scope, name)) {
            let value = super::type_text_value(ty);
            let evidence = (value != Value::Unknown).then(|| Evidence::Documented(ty.split_whitespace().collect::<Vec<_>>().join(" ")));
            return (value, evidence);
        }
        let passed = self.passed_value(scope, name, depth);
        if passed.0 != Value::Unknown {
            return passed;
        }
        self.used_as(scope, name)
    }

    /// Why `expr` (a name) holds what it holds, when that rests on a guess:
    /// a docstring, a caller, or what the code does with it. Followed through
    /// plain re-bindings (`out = df.groupby(...)`).
    pub fn evidence(&self, expr: Node<'t>, scope: usize) -> Option<(String, Evidence)> {
        let mut expr = expr;
        let mut named: Option<&str> = None;
        for _ in 0..8 {
            // What another module's function returns (`sales = utils.load(p)`).
            if let (Some(place), "call") = (&self.place, expr.kind_name()) {
                let callee = expr.field("function")?;
                if let Some(function) = self.qualified_name(callee).filter(|q| place.returns(q).is_some()) {
                    let function = place.absolute(&function)?;
                    return Some((named.unwrap_or(self.text_of(callee)).to_string(), Evidence::Declared(function)));
                }
            }
            // The object a chain starts from: `df` in `df.groupby("k").sum()`.
            while matches!(expr.kind_name(), "call" | "attribute" | "subscript") {
                expr = match expr.kind_name() {
                    "call" => expr.field("function")?,
                    "attribute" => expr.field("object")?,
                    _ => expr.field("value")?,
                };
            }
            if expr.kind_name() != "identifier" {
                return None;
            }
            let name = self.text_of(expr);
            named.get_or_insert(name);
            match self.lookup(scope, name, expr.start_byte())? {
                super::Binding::Assigned(rhs) => expr = rhs,
                super::Binding::Parameter => {
                    let (_, evidence) = self.parameter_value(scope, name, 0);
                    return evidence.map(|e| (name.to_string(), e));
                }
                _ => return None,
            }
        }
        None
    }
}

impl<'t> Module<'t> {
    /// The estimator a parameter stands for, when `value` (the right side of
    /// `self.x = value` in `assignment`) is a parameter of the method around
    /// it that the method's or the class's docstring documents with the name
    /// of a model the knowledge maps (`estimator : LogisticRegression`,
    /// `model : object, e.g. KMeans(n_clusters=3)`), or whose default builds one.
    pub(super) fn documented_model(&self, class: Node<'t>, assignment: Node<'t>, value: Node<'t>) -> Option<&'static str> {
        if value.kind_name() != "identifier" {
            return None;
        }
        let name = self.text_of(value);
        let function = self.enclosing_function(assignment)?;
        let params = function.field("parameters")?;
        let param = params.named_children(&mut params.walk()).find(|p| super::parameter_name(*p).is_some_and(|n| self.text_of(n) == name))?;
        let knowledge = self.knowledge;
        let model = |cpu: &str| knowledge.api(cpu).filter(|api| api.kind == gpulens_knowledge::ApiKind::Estimator).map(|api| api.cpu.as_str());
        // A default that builds one: `estimator=LogisticRegression()`.
        if let Some(default) = param.field("value").filter(|v| v.kind_name() == "call") {
            if let Some(cpu) = default.field("function").and_then(|f| self.module_level_name(f)).and_then(|q| model(&q)) {
                return Some(cpu);
            }
        }
        let docstrings = [self.docstring(function), self.docstring(class)];
        for doc in docstrings.into_iter().flatten() {
            let Some(section) = super::parameter_section(doc, name) else { continue };
            if let Some(cpu) = estimator_named_in(knowledge, section) {
                return Some(cpu);
            }
        }
        // The class's own example builds it with one: `Wrapper(LinearRegression(), ...)`.
        let class_name = self.text_of(class.field("name")?);
        let doc = self.docstring(class)?;
        let pattern = format!("{class_name}(");
        doc.match_indices(&pattern).find_map(|(at, _)| {
            let inside = &doc[at + pattern.len()..];
            let mut depth = 1i32;
            let end = inside
                .char_indices()
                .find(|(_, c)| {
                    match c {
                        '(' => depth += 1,
                        ')' => depth -= 1,
                        _ => {}
                    }
                    depth == 0
                })
                .map_or(inside.len(), |(i, _)| i);
            let arguments = &inside[..end];
            estimator_named_in(knowledge, arguments).or_else(|| {
                // Or a name the example bound to one before
                // (`kmeans = KMeans(n_clusters=2)`, then `Wrapper(kmeans)`).
                arguments.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).find_map(|word| {
                    doc.lines().find_map(|line| {
                        let line = line.trim_start();
                        let rest = line.strip_prefix(word)?.trim_start().strip_prefix('=')?;
                        (!rest.starts_with('=')).then(|| estimator_named_in(knowledge, rest.split('(').next().unwrap_or(""))).flatten()
                    })
                })
            })
        })
    }
}

/// The first scikit-learn (or other mapped) estimator class a piece of
/// documentation names (`LogisticRegression`, `sklearn.cluster.KMeans`).
fn estimator_named_in(knowledge: &'static gpulens_knowledge::Knowledge, text: &str) -> Option<&'static str> {
    static BY_SHORT: std::sync::OnceLock<rustc_hash::FxHashMap<&'static str, &'static str>> = std::sync::OnceLock::new();
    let by_short = BY_SHORT.get_or_init(|| {
        let mut map = rustc_hash::FxHashMap::default();
        for api in knowledge.apis.iter().filter(|a| a.kind == gpulens_knowledge::ApiKind::Estimator && a.support != gpulens_knowledge::Support::Missing) {
            let short = api.cpu.rsplit('.').next().unwrap_or(&api.cpu);
            map.entry(short).or_insert(api.cpu.as_str());
        }
        map
    });
    text.split(|c: char| !(c.is_alphanumeric() || c == '_')).find_map(|word| by_short.get(word).copied())
}

/// At most [`crate::project::ARGUMENT_TEXT`] bytes of an argument's text,
/// on one line (cut at a character boundary, with `…` where cut).
fn shortened(text: &str) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let limit = crate::project::ARGUMENT_TEXT;
    if one_line.len() <= limit {
        return one_line;
    }
    let mut end = limit;
    while !one_line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &one_line[..end])
}

/// How far [`Module::one_item_per_call`] follows an expression back to the
/// parameters it is made from.
const ITEM_TRACE_STEPS: usize = 64;

/// What every caller passes a parameter (see [`Module::one_item_per_call`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Passed {
    /// One item of a collection a loop walks (by some callers, numbers by the others).
    Item,
    /// Numbers only.
    Number,
}

impl<'t> Module<'t> {
    /// Whether the data `inputs` (a call's arguments, in function `scope`)
    /// are made only from parameters that every caller in this module
    /// passes one item of a collection at a time: `embed(g)` inside
    /// `for g in graphs`, `[feature(s) for s in series]`, `f(X[i])` in a
    /// loop over `i`. Each call then sees one item, whatever the size of
    /// the collection: the GPU would need the items batched into one array,
    /// which the function's body alone cannot do. A caller may pass what it
    /// made from such an item of its own (`embed(graph)` builds `X` from one
    /// graph and calls `moments(X)`): followed two calls up, as far as the
    /// editor's plan and the pre-scan reach (`plan::words::within_two_calls`).
    /// False where a parameter
    /// has no caller in the module, where the project's other modules pass
    /// it something, or where the data also comes from elsewhere (`self`,
    /// a module-level array, a file).
    pub fn one_item_per_call(&self, inputs: &[Node<'_>], scope: usize) -> bool {
        self.one_item_per_call_at(inputs, scope, 0)
    }

    /// [`Module::one_item_per_call`], `depth` calls away from where it was asked.
    fn one_item_per_call_at(&self, inputs: &[Node<'_>], scope: usize, depth: u32) -> bool {
        let mut roots: Vec<&str> = Vec::new();
        let mut pending: Vec<Node<'_>> = inputs.to_vec();
        let mut steps = 0;
        while let Some(expr) = pending.pop() {
            steps += 1;
            if steps > ITEM_TRACE_STEPS {
                return false;
            }
            match expr.kind_name() {
                "identifier" => {
                    let name = self.text_of(expr);
                    if self.import_at(name, expr.start_byte()).is_some() {
                        continue;
                    }
                    match self.lookup(scope, name, expr.start_byte()) {
                        Some(super::Binding::Assigned(rhs)) => pending.push(rhs),
                        Some(super::Binding::Parameter | super::Binding::Annotated(_)) => {
                            if !roots.contains(&name) {
                                roots.push(name);
                            }
                        }
                        // A number, a loop's index: no data.
                        Some(super::Binding::LoopIndex | super::Binding::Number(_)) => {}
                        // Anything else (an element of a local collection, a
                        // grown list, a global): data from elsewhere.
                        _ => return false,
                    }
                }
                "call" => {
                    let Some(function) = expr.field("function") else { return false };
                    // A method's receiver is data too, but not the instance
                    // whose own method it is (`self.features(graph)`).
                    if let Some(object) = function.field("object").filter(|_| function.kind_name() == "attribute") {
                        if !matches!(self.text_of(object), "self" | "cls") {
                            pending.push(object);
                        }
                    }
                    if let Some(args) = expr.field("arguments") {
                        let mut cursor = args.walk();
                        for arg in args.named_children(&mut cursor) {
                            match arg.kind_name() {
                                "keyword_argument" | "comment" => {}
                                "list_splat" | "dictionary_splat" => return false,
                                _ => pending.push(arg),
                            }
                        }
                    }
                }
                // A setting held on the instance (`self.theta_max`) is a number, not data.
                "attribute" => {
                    if !matches!(self.eval(expr, scope, 0), Value::Int(_) | Value::Scalar) {
                        pending.extend(expr.field("object"));
                    }
                }
                "subscript" => pending.extend(expr.field("value")),
                "parenthesized_expression" | "unary_operator" | "binary_operator" | "tuple" | "list" => {
                    let mut cursor = expr.walk();
                    pending.extend(expr.named_children(&mut cursor).filter(|c| c.kind_name() != "comment"));
                }
                "integer" | "float" | "string" | "true" | "false" | "none" | "slice" | "ellipsis" => {}
                _ => return false,
            }
        }
        // Every root is passed an item or a number, and one at least an item.
        let mut any_item = false;
        for name in roots {
            match self.passed_one_item(scope, name, depth) {
                Some(Passed::Item) => any_item = true,
                Some(Passed::Number) => {}
                None => return false,
            }
        }
        any_item
    }

    /// Whether each caller of the function `scope` passes its parameter
    /// `name` one item of a loop's collection (see [`Module::one_item_per_call`]).
    /// A number a caller passes (`scale=2.0`) is no data of its own: it is
    /// told apart, so that a function given only numbers is not taken for
    /// one given an item.
    fn passed_one_item(&self, scope: usize, name: &str, depth: u32) -> Option<Passed> {
        if matches!(name, "self" | "cls") {
            return None;
        }
        let function = self.function_of_scope(scope)?;
        let position = self.parameter_position(function, name)?;
        if !self.passed_from_other_modules(function).is_empty() {
            return None;
        }
        let sites = self.calls_of(function);
        if sites.is_empty() {
            return None;
        }
        let mut passed = Passed::Number;
        for site in sites {
            let argument = self.passed_as(site.node, name, position)?;
            if self.item_of_a_loop(argument, site.node) || (depth < 1 && self.one_item_per_call_at(&[argument], site.scope, depth + 1)) {
                passed = Passed::Item;
            } else if !matches!(self.eval(argument, site.scope, 0), Value::Int(_) | Value::Scalar) {
                return None;
            }
        }
        Some(passed)
    }

    /// Whether some argument of `call` is one item of the collection a loop
    /// around it walks (see [`Module::one_item_per_call`]).
    pub(crate) fn passes_an_item(&self, call: Node<'t>) -> bool {
        self.positional(call).into_iter().any(|a| self.item_of_a_loop(a, call))
    }

    /// `argument` (of the call `call`) is one item of the collection a loop
    /// or comprehension around the call walks: its target (`g` in
    /// `for g in graphs`, `v` in `for k, v in d.items()`), or an array
    /// indexed by its counter (`X[i]` in `for i in range(n)`). Not a chunk of
    /// one dataset read piece by piece (`chunksize=`, `np.array_split`): a
    /// chunk is as large as the reader makes it.
    fn item_of_a_loop(&self, argument: Node<'_>, call: Node<'t>) -> bool {
        let (name, counter) = match argument.kind_name() {
            "identifier" => (self.text_of(argument), false),
            "subscript" => {
                let index = argument.field("subscript");
                match index.filter(|i| i.kind_name() == "identifier") {
                    Some(i) if argument.field("value").is_some_and(|v| v.kind_name() == "identifier") => (self.text_of(i), true),
                    _ => return false,
                }
            }
            _ => return false,
        };
        for outer in self.ancestors(call) {
            let clauses: Vec<Node<'t>> = match outer.kind_name() {
                "for_statement" => vec![outer],
                "list_comprehension" | "set_comprehension" | "dictionary_comprehension" | "generator_expression" => {
                    let mut cursor = outer.walk();
                    outer.named_children(&mut cursor).filter(|c| c.kind_name() == "for_in_clause").collect()
                }
                "function_definition" | "lambda" | "class_definition" | "module" => return false,
                _ => continue,
            };
            for clause in clauses {
                let (Some(left), Some(right)) = (clause.field("left"), clause.field("right")) else { continue };
                let targets: Vec<Node<'t>> = match left.kind_name() {
                    "identifier" => vec![left],
                    "pattern_list" | "tuple_pattern" => {
                        let mut cursor = left.walk();
                        left.named_children(&mut cursor).collect()
                    }
                    _ => continue,
                };
                let Some(at) = targets.iter().position(|t| t.kind_name() == "identifier" && self.text_of(*t) == name) else { continue };
                let called = (right.kind_name() == "call").then(|| right.field("function").map(|f| self.text_of(f))).flatten();
                let is_counter = matches!(called, Some("range")) || (matches!(called, Some("enumerate")) && at == 0 && targets.len() > 1);
                if counter != is_counter {
                    return false;
                }
                let chunked = right.kind_name() == "call"
                    && (self.keyword(right, "chunksize").is_some()
                        || called.is_some_and(|f| f.ends_with("array_split") || f.ends_with("gen_batches") || f.ends_with("gen_even_slices")));
                return !chunked;
            }
        }
        false
    }
}
