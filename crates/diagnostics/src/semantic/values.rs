//! What a name or an expression holds: arrays and their sizes, DataFrames,
//! graphs, data already on the GPU, evaluated on demand with a depth limit.

use gpulens_syntax::NodeExt;

use gpulens_knowledge::ApiKind;
use gpulens_syntax::Node;

use super::*;

impl<'t> Module<'t> {
    /// The binding of `name` that a use at offset `at` sees: the last one made
    /// before it in the same scope, else the module's (a global may be
    /// assigned after the function that reads it).
    pub(super) fn lookup(&self, scope: usize, name: &str, at: usize) -> Option<Binding<'t>> {
        let before = |list: &Vec<(usize, Binding<'t>)>| list.iter().rev().find(|(o, _)| *o < at).map(|(_, b)| *b);
        if let Some(local) = self.bindings.get(&(scope, name)) {
            // A function's parameters are its own: the module's names of the
            // same spelling are out of its sight.
            if scope != MODULE_SCOPE && local.iter().any(|(_, b)| matches!(b, Binding::Parameter | Binding::Number(_) | Binding::Annotated(_)) ) {
                return before(local).or(Some(Binding::Parameter));
            }
            if let Some(b) = before(local) {
                return Some(b);
            }
        }
        // A nested function sees the names of the functions around it (a
        // closure's `tside = 2` set before `def func(...)`), then the module's.
        if scope != MODULE_SCOPE && !self.bindings.contains_key(&(scope, name)) {
            if let Some(outer) = self.function_of_scope(scope).and_then(|f| self.enclosing_function(f)) {
                return self.lookup(outer.id(), name, at);
            }
        }
        let module = self.bindings.get(&(MODULE_SCOPE, name))?;
        before(module).or_else(|| (scope != MODULE_SCOPE).then(|| module.last().map(|(_, b)| *b)).flatten())
    }

    /// The size a notebook's saved output shows for the module-level `name`
    /// (see `crate::RecordedSize`), given to `value` where the code says
    /// its kind and not its size, and binds the name once at module level
    /// and nowhere in `scope`. Never in place of a size the code says.
    fn recorded_size(&self, name: &str, scope: usize, value: Value) -> Option<Value> {
        if self.recorded.sizes.is_empty() || (scope != MODULE_SCOPE && self.bindings.contains_key(&(scope, name))) {
            return None;
        }
        let recorded = self.recorded.sizes.iter().find(|r| r.name == name)?;
        if self.bindings.get(&(MODULE_SCOPE, name)).is_none_or(|b| b.len() != 1) {
            return None;
        }
        match value {
            Value::Frame(None) => recorded.rows.map(|n| Value::Frame(Some(n))),
            Value::Array(None) => recorded.elements.map(|n| Value::Array(Some(n))),
            Value::Device(None) => recorded.elements.map(|n| Value::Device(Some(n))),
            _ => None,
        }
    }

    /// The source that defines `expr`'s value: its own text, or for a name,
    /// the right-hand side of the assignment its use sees.
    pub fn defining_text(&self, expr: Node<'_>, scope: usize) -> &'t str {
        if expr.kind_name() == "identifier" {
            if let Some(Binding::Assigned(rhs)) = self.lookup(scope, self.text_of(expr), expr.start_byte()) {
                return self.text_of(rhs);
            }
        }
        self.text_of(expr)
    }

    /// The right-hand side of the assignment a name's use sees (`x` in
    /// `x = KMeans(); x.fit(...)` sees `KMeans()`), if it is one.
    pub fn assigned_from(&self, expr: Node<'_>, scope: usize) -> Option<Node<'t>> {
        if expr.kind_name() != "identifier" {
            return None;
        }
        match self.lookup(scope, self.text_of(expr), expr.start_byte()) {
            Some(Binding::Assigned(rhs)) => Some(rhs),
            _ => None,
        }
    }

    /// The annotation of the parameter or annotated name a name's use sees
    /// (`dict` for `codes` in `def f(codes: dict): ... codes`), if any.
    pub fn annotation_of(&self, expr: Node<'_>, scope: usize) -> Option<&'t str> {
        if expr.kind_name() != "identifier" {
            return None;
        }
        match self.lookup(scope, self.text_of(expr), expr.start_byte()) {
            Some(Binding::Annotated(ty)) => Some(self.text_of(ty)),
            _ => None,
        }
    }

    /// What `expr`, seen from `scope`, holds.
    pub fn value(&self, expr: Node<'_>, scope: usize) -> Value {
        self.eval(expr, scope, 0)
    }

    /// Notes that an evaluation reached `depth` (see [`Module::eval`]).
    pub(super) fn reach(&self, depth: u32) {
        self.reached.set(self.reached.get().max(depth));
    }

    /// Whether the depth limit cuts an evaluation at `depth` (noted, either way).
    pub(super) fn cut(&self, depth: u32) -> bool {
        self.reach(depth);
        depth > MAX_EVAL_DEPTH
    }

    pub(super) fn eval(&self, expr: Node<'_>, scope: usize, depth: u32) -> Value {
        if self.cut(depth) {
            return Value::Unknown;
        }
        // A name or a call is worth remembering: its value comes from its
        // definitions, which every call using it would work out again.
        let g = gpulens_syntax::grammar();
        if expr.kind_id() != g.identifier && expr.kind_id() != g.call {
            return self.eval_anew(expr, scope, depth);
        }
        // The depth changes a value only where the limit cuts its
        // evaluation: one the limit cut nowhere, `height` deep below it,
        // holds at any depth that leaves that much room. Others are
        // remembered by depth.
        let key = (expr.id(), scope, self.in_flow.get());
        if let Some(&(known, height)) = self.evaluated.borrow().get(&key) {
            if depth + height <= MAX_EVAL_DEPTH {
                self.reach(depth + height);
                return known;
            }
        }
        if let Some(&known) = self.evaluated_cut.borrow().get(&(expr.id(), scope, depth, key.2)) {
            self.reach(MAX_EVAL_DEPTH + 1);
            return known;
        }
        // (Past the guard, cut as the depth limit cuts: nothing above it is remembered.)
        if self.nested.get() >= MAX_NESTED_EVALS {
            self.reach(MAX_EVAL_DEPTH + 1);
            return Value::Unknown;
        }
        self.nested.set(self.nested.get() + 1);
        let outer = self.reached.replace(depth);
        let value = self.eval_anew(expr, scope, depth);
        self.nested.set(self.nested.get() - 1);
        let reached = self.reached.get();
        if self.no_memo.get() {
        } else if reached <= MAX_EVAL_DEPTH {
            self.evaluated.borrow_mut().insert(key, (value, reached - depth));
        } else {
            self.evaluated_cut.borrow_mut().insert((expr.id(), scope, depth, key.2), value);
        }
        self.reached.set(outer.max(reached));
        value
    }

    pub(super) fn eval_anew(&self, expr: Node<'_>, scope: usize, depth: u32) -> Value {
        let depth = depth + 1;
        match expr.kind_name() {
            "integer" => parse_int(self.text_of(expr)).map_or(Value::Scalar, Value::Int),
            "float" => {
                let text = self.text_of(expr).replace('_', "");
                match text.parse::<f64>() {
                    Ok(f) if f >= 0.0 && f.fract() == 0.0 && f < 1e18 && text.contains(['e', 'E']) => {
                        Value::Int(f as u64)
                    }
                    _ => Value::Scalar,
                }
            }
            "true" | "false" | "none" | "string" | "concatenated_string" => Value::Unknown,
            "parenthesized_expression" => expr.named_child(0).map_or(Value::Unknown, |e| self.eval(e, scope, depth)),
            // `a if cond else b`: what both branches allow.
            "conditional_expression" => {
                let mut cursor = expr.walk();
                let parts: Vec<Node<'_>> = expr.named_children(&mut cursor).filter(|n| n.kind_name() != "comment").collect();
                match parts.as_slice() {
                    [then, _, otherwise] => {
                        let joined = super::flow::join(Some(self.eval(*then, scope, depth)), self.eval(*otherwise, scope, depth));
                        joined.unwrap_or(Value::Unknown)
                    }
                    _ => Value::Unknown,
                }
            }
            "unary_operator" => match expr.field("argument").map(|a| self.eval(a, scope, depth)) {
                Some(Value::Int(_) | Value::Scalar) => Value::Scalar,
                Some(v @ Value::Array(_)) => v,
                _ => Value::Unknown,
            },
            "list" | "tuple" => Value::Array(element_count(expr)),
            // `[f(k) for k in range(8)]`: as many elements as the range has.
            "list_comprehension" => Value::Array(self.comprehension_count(expr, scope, depth)),
            "identifier" => {
                let name = self.text_of(expr);
                if let Some(target) = self.import_at(name, expr.start_byte()) {
                    // A function's own parameter or variable of that name
                    // hides a module-level import (`import b`; `def solve(a, b)`).
                    let shadowed = self.binds_locally(scope, name) && self.import_at_module_level(name) == Some(target);
                    if !shadowed {
                        return if NUMBER_CONSTANTS.contains(&target) { Value::Scalar } else { Value::Unknown };
                    }
                }
                // A comprehension's own variable (which nothing outside it sees).
                let binding = self.comprehension_variable(expr, name).or_else(|| self.lookup(scope, name, expr.start_byte()));
                match binding {
                    Some(Binding::Assigned(rhs)) => {
                        let value = self.eval(rhs, scope, depth);
                        self.recorded_size(name, scope, value).unwrap_or(value)
                    }
                    // An annotation that names no data (`Any`, a protocol) leaves
                    // the other evidence a parameter has.
                    Some(Binding::Annotated(ty)) => match self.annotation_value(ty) {
                        // (`Any` says nothing; a type the rules don't know says it is that type.)
                        Value::Unknown if scope != super::MODULE_SCOPE && matches!(self.text_of(ty).trim(), "Any" | "typing.Any" | "object") => {
                            self.parameter_value(scope, name, depth).0
                        }
                        v => v,
                    },
                    Some(Binding::LoopIndex | Binding::Number(None)) => Value::Scalar,
                    Some(Binding::Number(Some(n))) => Value::Int(n),
                    // One element of a few numbers (`lat, lon = point` for a
                    // `tuple[float, float]`); anything else is not known.
                    // An element of a vector is one number.
                    Some(Binding::Element(of)) => {
                        if self.one_dimensional_at(of, scope, depth) { Value::Scalar } else { Value::Unknown }
                    }
                    Some(Binding::Unpacked(rhs, index)) => {
                        // What a validator returns: its arguments, as arrays
                        // (`X, y = check_X_y(X, y)`).
                        // `counts, edges = np.histogram(x, bins=36)`: one count per bin, one edge more.
                        if let Some(bins) = self.bin_count(rhs, scope, depth) {
                            return match index {
                                0 => Value::Array(Some(bins)),
                                1 => Value::Array(Some(bins.saturating_add(1))),
                                _ => Value::Unknown,
                            };
                        }
                        if let Some(argument) = self.validated_argument(rhs, index as usize) {
                            return match self.eval(argument, scope, depth) {
                                Value::Array(n) | Value::Frame(n) => Value::Array(n),
                                _ => Value::Unknown,
                            };
                        }
                        match self.eval(rhs, scope, depth) {
                            Value::Array(Some(n)) if n <= 16 => Value::Scalar,
                            _ => Value::Unknown,
                        }
                    }
                    Some(Binding::Parameter) => self.parameter_value(scope, name, depth).0,
                    Some(Binding::Grown) | None => Value::Unknown,
                }
            }
            "binary_operator" => {
                let (Some(l), Some(r)) = (expr.field("left"), expr.field("right")) else {
                    return Value::Unknown;
                };
                let op = expr.field("operator").map_or("", |o| self.text_of(o));
                // `x.T @ y`: a columns × columns matrix, known when both
                // operands' columns are (a Gram or covariance matrix).
                if op == "@" {
                    let transposed = l.kind_name() == "attribute"
                        && l.field("attribute").is_some_and(|a| self.text_of(a) == "T");
                    if let Some(inner) = l.field("object").filter(|_| transposed) {
                        if let (Some(a), Some(b)) = (self.columns_at(inner, scope, depth), self.columns_at(r, scope, depth)) {
                            return Value::Array(Some(a.saturating_mul(b)));
                        }
                    }
                }
                let (l, r) = (self.eval(l, scope, depth), self.eval(r, scope, depth));
                match (l, r) {
                    (v @ Value::Device(_), _) | (_, v @ Value::Device(_)) => v,
                    (Value::Int(a), Value::Int(b)) => match op {
                        "*" => Value::Int(a.saturating_mul(b)),
                        "+" => Value::Int(a.saturating_add(b)),
                        "-" => Value::Int(a.saturating_sub(b)),
                        "//" if b != 0 => Value::Int(a / b),
                        "**" => Value::Int(a.saturating_pow(b.min(64) as u32)),
                        _ => Value::Scalar,
                    },
                    (Value::Array(a), Value::Array(b)) => Value::Array(a.zip(b).map(|(a, b)| a.max(b))),
                    (v @ Value::Array(_), Value::Int(_) | Value::Scalar)
                    | (Value::Int(_) | Value::Scalar, v @ Value::Array(_)) => v,
                    (v @ Value::Frame(_), _) | (_, v @ Value::Frame(_)) => v,
                    (Value::Int(_) | Value::Scalar, Value::Int(_) | Value::Scalar) => Value::Scalar,
                    // Arithmetic with an array is an array (`x.reshape(m, n) *
                    // np.hanning(n)`), of a size the unknown side may enlarge
                    // (broadcasting never shrinks): its size is not known.
                    (Value::Array(_), Value::Unknown) | (Value::Unknown, Value::Array(_)) if op != "@" => Value::Array(None),
                    _ => Value::Unknown,
                }
            }
            "attribute" => {
                let Some(object) = expr.field("object") else { return Value::Unknown };
                if object.kind_name() == "identifier" && self.text_of(object) == "self" {
                    return self.attribute_value(expr, depth);
                }
                // An array's (or a table's) count of dimensions or elements
                // is one number, whatever the data.
                // (Not a module's: `np.size` is a function.)
                if expr.field("attribute").is_some_and(|a| matches!(self.text_of(a), "ndim" | "size" | "nbytes" | "itemsize"))
                    && self.qualified_name(object).is_none()
                {
                    return Value::Scalar;
                }
                // A shape (or the strides) is a tuple of one number per
                // dimension: at most 64 of them, NumPy's limit.
                if expr.field("attribute").is_some_and(|a| matches!(self.text_of(a), "shape" | "strides"))
                    && self.qualified_name(object).is_none()
                {
                    return Value::Array(Some(64));
                }
                // A type's limits (`np.finfo(np.float64).eps`,
                // `np.iinfo(np.int32).max`) are numbers.
                if object.kind_name() == "call"
                    && object.field("function").and_then(|f| self.qualified_name(f)).is_some_and(|n| matches!(n.as_str(), "numpy.finfo" | "numpy.iinfo"))
                    && expr.field("attribute").is_some_and(|a| self.text_of(a) != "dtype")
                {
                    return Value::Scalar;
                }
                // A named constant (`np.pi`, `math.e`) is one number.
                if let Some(name) = self.qualified_name(expr) {
                    if NUMBER_CONSTANTS.contains(&name.as_str()) || name.starts_with("scipy.constants.") {
                        return Value::Scalar;
                    }
                }
                // A table's column labels or column types (`df.columns`,
                // `df.dtypes`): one entry per column, not the table's data;
                // its row labels (`df.index`) are labels, not a table either.
                if expr.field("attribute").is_some_and(|a| matches!(self.text_of(a), "columns" | "dtypes" | "index")) {
                    return Value::Unknown;
                }
                let is_values = expr.field("attribute").is_some_and(|a| matches!(self.text_of(a), "values" | "_values"));
                match self.eval(object, scope, depth) {
                    // A table's values (`df.values`): a NumPy array of its
                    // cells (the rows times an unknown number of columns).
                    Value::Frame(_) if is_values => Value::Array(None),
                    v @ (Value::Array(_) | Value::Frame(_) | Value::Device(_) | Value::GpuFrame) => v,
                    _ => Value::Unknown,
                }
            }
            "subscript" => {
                let Some(object) = expr.field("value") else { return Value::Unknown };
                // One dimension of a shape (`x.shape[0]`): one number; some of
                // them (`x.shape[:-1]`): a few.
                if object.kind_name() == "attribute" && object.field("attribute").is_some_and(|a| self.text_of(a) == "shape") {
                    if let Some(index) = expr.field("subscript").filter(|i| i.next_named_sibling().is_none()) {
                        return if index.kind_name() == "slice" { Value::Array(Some(64)) } else { Value::Scalar };
                    }
                }
                // `m[:3, :3]`, `m[:3, 3]`: a block whose every bound is
                // written out holds that many elements at most, whatever
                // `m` holds.
                if let Some(n) = self.bounded_selection(expr, scope, depth) {
                    match self.eval(object, scope, depth) {
                        Value::Array(_) | Value::Unknown => return Value::Array(Some(n)),
                        Value::Device(_) => return Value::Device(Some(n)),
                        _ => {}
                    }
                }
                // `self.models_[label]`, items the class assigns models to.
                if object.kind_name() == "attribute" && object.field("object").is_some_and(|o| self.text_of(o) == "self") {
                    if let Some(model) = self.item_model(object, depth) {
                        return model;
                    }
                }
                match self.eval(object, scope, depth) {
                    Value::Array(n) => {
                        let mut cursor = expr.walk();
                        let indices: Vec<Node<'_>> = expr.children_by_field_name("subscript", &mut cursor).collect();
                        let sliced = indices.iter().any(|s| s.kind_name() == "slice" || s.kind_name() == "tuple");
                        // `x[x > 0]`, `x[keep]` with `keep = x > 0`: a selection of
                        // at most as many elements.
                        let masked = indices.len() == 1 && self.is_mask(indices[0], scope);
                        if masked {
                            Value::Array(n)
                        } else if sliced || (indices.len() == 1 && self.holds_indices(indices[0], scope)) {
                            Value::Array(None)
                        } else {
                            // One element (or one row): not array work by itself.
                            let _ = n;
                            Value::Scalar
                        }
                    }
                    v @ (Value::Frame(_) | Value::Grouped(_) | Value::GpuFrame) => v,
                    // An element of a CuPy array is a 0-d array, still on the GPU.
                    Value::Device(_) => Value::Device(Some(1)),
                    // `v[k]` with `k` a number, `v` a vector: one number.
                    Value::Unknown => {
                        let mut cursor = expr.walk();
                        let indices: Vec<Node<'_>> = expr.children_by_field_name("subscript", &mut cursor).collect();
                        let element = matches!(indices.as_slice(), [i] if matches!(self.eval(*i, scope, depth), Value::Int(_) | Value::Scalar));
                        if element && self.one_dimensional_at(object, scope, depth) { Value::Scalar } else { Value::Unknown }
                    }
                    _ => Value::Unknown,
                }
            }
            "comparison_operator" | "boolean_operator" | "not_operator" => {
                let mut cursor = expr.walk();
                let on_device = expr
                    .named_children(&mut cursor)
                    .any(|c| matches!(self.eval(c, scope, depth), Value::Device(_)));
                if on_device { Value::Device(Some(1)) } else { Value::Unknown }
            }
            "call" => self.eval_call(expr, scope, depth),
            _ => Value::Unknown,
        }
    }

    /// How many elements `subscript` selects when each of its indices is a
    /// number or a slice with both bounds written as numbers (`m[:3, :3]`:
    /// 9, `m[1:4, 0]`: 3). One index bounds every dimension only of an array
    /// known to have one (`point[:3]` of a matrix is three rows).
    fn bounded_selection(&self, subscript: Node<'_>, scope: usize, depth: u32) -> Option<u64> {
        let mut cursor = subscript.walk();
        let indices: Vec<Node<'_>> = subscript.children_by_field_name("subscript", &mut cursor).collect();
        let object = subscript.field("value")?;
        if indices.is_empty() || (indices.len() == 1 && !self.one_dimensional_at(object, scope, depth)) {
            return None;
        }
        let mut product: u64 = 1;
        let mut sliced = false;
        for index in &indices {
            let count = match index.kind_name() {
                "integer" => 1,
                "slice" => {
                    let text = self.compact_text(*index);
                    let parts: Vec<&str> = text.split(':').collect();
                    let bound = |t: &str| if t.is_empty() { Some(0) } else { super::sizes::parse_int(t) };
                    let (start, stop) = (bound(parts[0])?, parts.get(1).filter(|t| !t.is_empty()).and_then(|t| super::sizes::parse_int(t))?);
                    let step = match parts.get(2) {
                        None | Some(&"") => 1,
                        Some(t) => super::sizes::parse_int(t).filter(|s| *s > 0)?,
                    };
                    sliced = true;
                    stop.saturating_sub(start).div_ceil(step)
                }
                _ => return None,
            };
            product = product.saturating_mul(count);
        }
        sliced.then_some(product)
    }

    /// `index` is a boolean mask written as a comparison (`x > 0`, `~(x > 0)`,
    /// `(a > 0) & (b < 1)`), or a name bound to one.
    fn is_mask(&self, index: Node<'_>, scope: usize) -> bool {
        fn written(n: Node<'_>, text: &dyn Fn(Node<'_>) -> String) -> bool {
            match n.kind_name() {
                "comparison_operator" => true,
                "parenthesized_expression" => n.named_child(0).is_some_and(|c| written(c, text)),
                "unary_operator" => text(n).trim_start().starts_with('~') && n.field("argument").is_some_and(|a| written(a, text)),
                "binary_operator" => {
                    n.field("operator").is_some_and(|o| matches!(text(o).as_str(), "&" | "|" | "^"))
                        && n.field("left").is_some_and(|l| written(l, text))
                        && n.field("right").is_some_and(|r| written(r, text))
                }
                _ => false,
            }
        }
        let text = |n: Node<'_>| self.text_of(n).to_string();
        written(index, &text) || (index.kind_name() == "identifier" && self.assigned_from(index, scope).is_some_and(|rhs| written(rhs, &text)))
    }

    /// `index` selects several elements: the index arrays a NumPy function
    /// returns (`x[np.triu_indices(n)]`, `x[np.nonzero(m)]`, `order =
    /// np.argsort(v); x[order]`). (FIXME: any array of indices selects
    /// several, but how many is unknown, and taken as an array of unknown
    /// size a top-k selection `x[order[:k]]` would pass for data: it stays
    /// one element until sizes carry that evidence.)
    fn holds_indices(&self, index: Node<'_>, scope: usize) -> bool {
        const INDEX_FUNCTIONS: &[&str] = &[
            "numpy.triu_indices", "numpy.tril_indices", "numpy.diag_indices", "numpy.indices", "numpy.nonzero",
            "numpy.argwhere", "numpy.flatnonzero", "numpy.argsort", "numpy.unravel_index", "numpy.where",
        ];
        let made_by = |call: Node<'_>| {
            call.kind_name() == "call"
                && call.field("function").and_then(|f| self.qualified_name(f)).is_some_and(|name| {
                    // (`np.where(cond)`, one argument: the indices where it holds.)
                    INDEX_FUNCTIONS.contains(&name.as_str()) && (name != "numpy.where" || super::positional_arguments(call).len() == 1)
                })
        };
        made_by(index) || self.assigned_from(index, scope).is_some_and(made_by)
    }

    /// What the comprehension around `expr` that binds `name` binds it to,
    /// if one does: an index of `range(...)`, or an element of what it
    /// iterates over.
    fn comprehension_variable(&self, expr: Node<'_>, name: &str) -> Option<Binding<'t>> {
        let expr = self.own_node(expr)?;
        for outer in self.ancestors(expr) {
            match outer.kind_name() {
                "list_comprehension" | "set_comprehension" | "dictionary_comprehension" | "generator_expression" => {}
                "function_definition" | "lambda" | "class_definition" | "module" => return None,
                _ => continue,
            }
            let mut cursor = outer.walk();
            for clause in outer.named_children(&mut cursor).filter(|c| c.kind_name() == "for_in_clause") {
                let (Some(left), Some(right)) = (clause.field("left"), clause.field("right")) else { continue };
                if left.kind_name() == "identifier" && self.text_of(left) == name {
                    let over_range = right.kind_name() == "call" && right.field("function").is_some_and(|f| self.text_of(f) == "range");
                    return Some(if over_range { Binding::LoopIndex } else { Binding::Element(right) });
                }
                // A name among several targets (`for i, x in ...`): not read here.
                if self.text_of(left).split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|n| n == name) {
                    return Some(Binding::Grown);
                }
            }
        }
        None
    }

    /// The argument at `index` of `rhs`, when `rhs` is a call of a function
    /// that returns its arguments checked or converted (`check_X_y(X, y)`).
    fn validated_argument(&self, rhs: Node<'t>, index: usize) -> Option<Node<'t>> {
        let function = rhs.field("function").filter(|_| rhs.kind_name() == "call")?;
        let name = self.qualified_name(function)?;
        self.knowledge.converter(&name).then(|| super::positional_arguments(rhs).get(index).copied()).flatten()
    }

    pub(super) fn annotation_value(&self, ty: Node<'_>) -> Value {
        let expr = if ty.kind_name() == "type" { ty.named_child(0) } else { Some(ty) };
        // Numbers, and tuples of a few numbers (`point: tuple[float, float]`).
        let text: String = expr.map_or("", |e| self.text_of(e)).split_whitespace().collect();
        if matches!(text.as_str(), "float" | "int" | "complex" | "bool") {
            return Value::Scalar;
        }
        if let Some(items) = text.strip_prefix("tuple[").and_then(|t| t.strip_suffix(']')) {
            let items: Vec<&str> = items.split(',').collect();
            if items.iter().all(|i| matches!(*i, "float" | "int" | "complex")) {
                return Value::Array(Some(items.len() as u64));
            }
        }
        let Some(expr) = expr else { return Value::Unknown };
        self.type_expression_value(self.text_of(expr), expr.start_byte(), 0)
    }

    /// What a type written in the code holds: `pd.DataFrame`,
    /// `pd.DataFrame | None`, `Optional[pd.DataFrame]`, `Union[str, pd.DataFrame]`,
    /// `"pd.DataFrame"`, `npt.NDArray[np.float64]`, `nx.Graph`, or a name the
    /// module binds to one of these (`Frame = pd.DataFrame`). Of several
    /// alternatives, the first that is data (`str | pd.DataFrame`: a path or
    /// a table, and the table is the work).
    pub(super) fn type_expression_value(&self, text: &str, at: usize, depth: u32) -> Value {
        if depth > 3 {
            return Value::Unknown;
        }
        let text = text.trim().trim_matches(|c| c == '"' || c == '\'');
        for alternative in type_alternatives(text) {
            let head = alternative.split('[').next().unwrap_or("").trim().trim_matches(|c| c == '"' || c == '\'');
            if head.is_empty() || !head.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.') {
                continue;
            }
            let (first, rest) = head.split_once('.').map_or((head, ""), |(f, r)| (f, r));
            let qualified = match self.import_at(first, at) {
                Some(target) if rest.is_empty() => target.to_string(),
                Some(target) => format!("{target}.{rest}"),
                None => {
                    // A module-level alias of a type (`Frame = pd.DataFrame`).
                    if rest.is_empty() {
                        if let Some(super::Binding::Assigned(rhs)) = self.lookup(super::MODULE_SCOPE, first, usize::MAX) {
                            let value = self.type_expression_value(self.text_of(rhs), rhs.start_byte(), depth + 1);
                            if value != Value::Unknown {
                                return value;
                            }
                        }
                    }
                    continue;
                }
            };
            let value = match qualified.as_str() {
                "numpy.ndarray" | "numpy.typing.NDArray" | "numpy.typing.ArrayLike" => Value::Array(None),
                "pandas.DataFrame" | "pandas.Series" | "pandas.core.frame.DataFrame" | "pandas.core.series.Series" => Value::Frame(None),
                "networkx.Graph" | "networkx.DiGraph" | "networkx.MultiGraph" | "networkx.MultiDiGraph" => Value::Graph(None),
                // A type alias another module of the project defines (`util.y_type`).
                other => match self.place.as_ref().and_then(|place| place.returns(other)) {
                    Some(value @ (Value::Array(_) | Value::Frame(_) | Value::Graph(_))) => value,
                    _ => continue,
                },
            };
            return value;
        }
        Value::Unknown
    }

    pub(super) fn eval_call(&self, call: Node<'_>, scope: usize, depth: u32) -> Value {
        let Some(function) = call.field("function") else { return Value::Unknown };
        if let Some(name) = self.qualified_name(function) {
            if let Some(v) = self.gpu_call_value(&name, call, scope, depth) {
                return v;
            }
            // `X = check_array(X)`: the array it was given.
            if self.knowledge.converter(&name) {
                return match super::positional_arguments(call).first().map(|a| self.eval(*a, scope, depth)) {
                    Some(Value::Array(n) | Value::Frame(n)) => Value::Array(n),
                    _ => Value::Unknown,
                };
            }
        }
        if let Some((name, api)) = self.resolve_call(call).or_else(|| self.resolve_mirror(call, scope, depth)) {
            if matches!(name.as_str(), "numpy.dot" | "numpy.matmul") {
                let (a, b) = (self.argument(call, "a", 0), self.argument(call, "b", 1));
                if let Some(k) = a.zip(b).and_then(|(a, b)| self.gram_columns(a, b, scope)) {
                    return Value::Array(Some(k.saturating_mul(k)));
                }
            }
            let size = api.size.as_ref().and_then(|spec| self.size_of_call(call, spec, scope, depth));
            return match (api.library.as_str(), api.kind) {
                (_, ApiKind::Estimator | ApiKind::Index) => Value::Model(api.cpu.as_str()),
                ("cudf", ApiKind::Create | ApiKind::Read) => Value::Frame(size),
                ("cudf", ApiKind::Compute | ApiKind::Method) => Value::Frame(None),
                ("cugraph", ApiKind::Graph) => Value::Graph(size),
                // `x.reshape(4, 4)`, `np.reshape(x, (4, 4))`: as many elements
                // as the shape says, where it says; else as many as `x`.
                // (`np.zeros_like(x)`, `x.reshape(n, -1)`: as many elements as `x`.)
                (_, ApiKind::Create | ApiKind::Layout) if size.is_none() && api.keeps_size => {
                    if let Some(n) = (name == "numpy.reshape").then(|| self.reshaped_size(call, scope, depth)).flatten() {
                        return Value::Array(Some(n));
                    }
                    // (A mirrored method's array is its receiver: `x.reshape(shape)`.)
                    let input = self.mirror_receiver(call).or_else(|| super::positional_arguments(call).first().copied());
                    match input.map(|a| self.eval(a, scope, depth + 1)) {
                        Some(Value::Array(n) | Value::Frame(n)) => Value::Array(n),
                        _ => Value::Array(None),
                    }
                }
                (_, ApiKind::Create | ApiKind::Generate | ApiKind::Read | ApiKind::Layout) => Value::Array(size),
                // A reduction over a whole array (no `axis`) is one number.
                (_, ApiKind::Compute) if api.reduction && self.keyword(call, "axis").is_none() => Value::Scalar,
                (_, ApiKind::Compute) => self.input_value(call, scope, depth),
                _ => Value::Unknown,
            };
        }
        let qualified = self.qualified_name(function);
        // The `math` module's functions take and give numbers, and the
        // standard `random` module's draws are one number each.
        if qualified.as_deref().is_some_and(|n| n.starts_with("math.") || python_random_number(n)) {
            return Value::Scalar;
        }
        // Another NumPy or SciPy special function of numbers
        // (`np.deg2rad(lat)`, `scipy.special.comb(n, 2, exact=True)`) is one number.
        if qualified.as_deref().is_some_and(of_numbers_a_number) {
            let args = call.field("arguments");
            let positional: Vec<Node<'_>> = args.map_or(Vec::new(), |a| {
                let mut cursor = a.walk();
                a.named_children(&mut cursor).filter(|n| !matches!(n.kind_name(), "comment" | "keyword_argument")).collect()
            });
            if !positional.is_empty()
                && positional.iter().all(|a| matches!(self.eval(*a, scope, depth), Value::Scalar | Value::Int(_)))
            {
                return Value::Scalar;
            }
        }
        if function.kind_name() == "identifier" && self.text_of(function) == "len" && self.import_at("len", function.start_byte()).is_none() {
            let arg = call.field("arguments").and_then(|a| a.named_child(0));
            return match arg.map(|a| self.eval(a, scope, depth)) {
                Some(Value::Array(Some(n)) | Value::Frame(Some(n)) | Value::Graph(Some(n))) => Value::Int(n),
                // A length is one number, whatever it measures.
                _ => Value::Scalar,
            };
        }
        // A copy of a model is that model (`clone(self.estimator)`).
        if self.qualified_name(function).is_some_and(|n| matches!(n.as_str(), "sklearn.base.clone" | "sklearn.clone")) {
            if let Some(first) = self.first_positional(call) {
                if let v @ Value::Model(_) = self.eval(first, scope, depth) {
                    return v;
                }
            }
        }
        // The module's own function: what it returns.
        let returned = self.returned_value(call, depth);
        if returned != Value::Unknown {
            return returned;
        }
        // Another module's of the project: what it declares it returns.
        if let Some(place) = &self.place {
            if let Some(value) = self.qualified_name(function).and_then(|name| place.returns(&name)) {
                return value;
            }
        }
        if function.kind_name() == "attribute" {
            let Some(object) = function.field("object") else { return Value::Unknown };
            let method = function.field("attribute").map_or("", |m| self.text_of(m));
            // `.reshape((4, 4))`, `.reshape(4, 4)`: as many elements as the
            // shape says, whatever the array was.
            if method == "reshape" {
                if let Some(n) = self.size_of_call(call, &reshape_spec(call), scope, depth) {
                    return Value::Array(Some(n));
                }
            }
            // A graph's counts are numbers, whatever object asks for them
            // (NetworkX's names, kept by the graph libraries that mirror it).
            if matches!(method, "number_of_nodes" | "number_of_edges" | "number_of_selfloops") {
                return match self.eval(object, scope, depth) {
                    Value::Graph(Some(n)) if method == "number_of_nodes" => Value::Int(n),
                    _ => Value::Scalar,
                };
            }
            return match self.eval(object, scope, depth) {
                v @ Value::Array(_) => match method {
                    "astype" | "copy" | "reshape" | "ravel" | "flatten" | "transpose" | "conj" | "clip" | "round" => v,
                    _ => Value::Unknown,
                },
                Value::Frame(n) => match method {
                    "iterrows" | "itertuples" | "items" | "iteritems" | "tolist" | "to_dict" | "to_numpy" => {
                        Value::Unknown
                    }
                    "groupby" | "rolling" | "resample" | "expanding" | "ewm" => Value::Grouped(n),
                    _ => Value::Frame(n),
                },
                Value::Grouped(n) => Value::Frame(n),
                // A graph's counts are numbers.
                Value::Graph(n) => match method {
                    "number_of_nodes" | "order" => n.map_or(Value::Scalar, Value::Int),
                    "number_of_edges" | "size" | "number_of_selfloops" => Value::Scalar,
                    _ => Value::Unknown,
                },
                Value::Device(n) => match method {
                    "get" => Value::Array(n),
                    "item" | "tolist" => Value::Scalar,
                    _ => Value::Device(n),
                },
                Value::GpuFrame => match method {
                    "to_pandas" => Value::Frame(None),
                    "to_cupy" | "values" => Value::Device(None),
                    _ => Value::GpuFrame,
                },
                // `x.var(ddof=1)` on what the analysis does not know: a
                // reduction over everything, which an array, a Series, a
                // sparse matrix or a tensor makes one number (a table, one
                // per column: a few).
                _ if self.whole_reduction(method)
                    && self.keyword(call, "axis").is_none()
                    && super::positional_arguments(call).is_empty() =>
                {
                    Value::Scalar
                }
                _ => Value::Unknown,
            };
        }
        Value::Unknown
    }

    /// Whether `method`, called with nothing that picks an axis, reduces
    /// whatever holds it to one number (or one per column of a table): a
    /// NumPy reduction an array mirrors (the knowledge's `reduction`:
    /// `x.var()`, `x.sum()`), or a table's `median`, which arrays lack.
    fn whole_reduction(&self, method: &str) -> bool {
        method == "median" || self.knowledge.mirrored(method).and_then(|name| self.knowledge.api(&name)).is_some_and(|api| api.reduction)
    }

    /// Values made by GPU libraries: CuPy arrays, Numba device arrays, cuDF frames.
    pub(super) fn gpu_call_value(&self, name: &str, call: Node<'_>, scope: usize, depth: u32) -> Option<Value> {
        let first = || self.first_positional(call).map_or(Value::Unknown, |a| self.eval(a, scope, depth));
        Some(match name {
            "cupy.asnumpy" | "numba.cuda.DeviceNDArray.copy_to_host" => Value::Array(first().elements()),
            "numba.cuda.to_device" | "cupy.asarray" | "cupy.array" => Value::Device(first().elements()),
            _ if name.starts_with("cupy.") || name.starts_with("cupyx.") => Value::Device(None),
            "numba.cuda.device_array" | "numba.cuda.device_array_like" | "numba.cuda.mapped_array" => {
                Value::Device(None)
            }
            _ if name.starts_with("cudf.") && !name.starts_with("cudf.pandas") => Value::GpuFrame,
            _ => return None,
        })
    }

    /// The number of elements the shape given to a reshape says (the
    /// method's arguments, or the function's second), where it says.
    fn reshaped_size(&self, call: Node<'_>, scope: usize, depth: u32) -> Option<u64> {
        if self.mirror_receiver(call).is_some() {
            return self.size_of_call(call, &reshape_spec(call), scope, depth);
        }
        let spec = gpulens_knowledge::SizeSpec { arg: Some(1), keyword: Some("shape".to_string()), ..Default::default() };
        self.size_of_call(call, &spec, scope, depth)
    }

    /// The combined value of a call's data arguments: the largest known
    /// size, or unknown when any argument's size is unknown.
    pub fn input_value(&self, call: Node<'_>, scope: usize, depth: u32) -> Value {
        let inputs: Vec<Node<'_>> = match super::arguments::matmul_operands(call) {
            Some(operands) => operands.to_vec(),
            None => {
                let Some(args) = call.field("arguments") else { return Value::Unknown };
                let mut cursor = args.walk();
                let found = self.mirror_receiver(call).into_iter().chain(args.named_children(&mut cursor)).collect();
                found
            }
        };
        let mut merged: Option<Value> = None;
        for arg in inputs {
            let v = match arg.kind_name() {
                "keyword_argument" => continue,
                "comment" => continue,
                "list_splat" | "dictionary_splat" => Value::Unknown,
                _ => self.eval(arg, scope, depth + 1),
            };
            let v = match v {
                Value::Int(_) => Value::Scalar,
                v => v,
            };
            merged = Some(match (merged, v) {
                (None, v) => v,
                (Some(Value::Unknown), _) | (_, Value::Unknown) => Value::Unknown,
                (Some(Value::Scalar), v) | (Some(v), Value::Scalar) => v,
                (Some(m), v) => {
                    let n = m.elements().zip(v.elements()).map(|(a, b)| a.max(b));
                    match m {
                        Value::Frame(_) => Value::Frame(n),
                        Value::Graph(_) => Value::Graph(n),
                        _ => Value::Array(n),
                    }
                }
            });
        }
        merged.unwrap_or(Value::Unknown)
    }
}


/// A NumPy or SciPy special function that, given numbers, gives one
/// (`np.deg2rad`, `scipy.special.comb`): not those that make an array from
/// a size (`np.eye(n)`, `np.tri(n)`, `scipy.special.roots_legendre(n)`).
/// (The knowledge's functions are read from it before this.)
fn of_numbers_a_number(name: &str) -> bool {
    // A SciPy distribution's functions (`stats.t.ppf(0.975, dof)`,
    // `stats.norm.cdf(z)`) are element-wise in their arguments.
    if let Some((distribution, method)) = name.strip_prefix("scipy.stats.").and_then(|f| f.split_once('.')) {
        return !distribution.contains('.')
            && matches!(method, "pdf" | "logpdf" | "cdf" | "logcdf" | "sf" | "logsf" | "ppf" | "isf" | "pmf" | "logpmf");
    }
    if let Some(function) = name.strip_prefix("numpy.") {
        const MAKERS: &[&str] = &[
            "eye", "identity", "tri", "indices", "geomspace", "diag_indices", "tril_indices", "triu_indices", "mask_indices",
            "ones_like", "zeros_like", "empty_like", "full_like", "repeat", "tile", "broadcast_to", "atleast_1d", "atleast_2d",
            "atleast_3d", "array", "asarray", "asanyarray", "ascontiguousarray", "fromfunction", "fromiter", "frombuffer",
            "hamming", "hanning", "blackman", "bartlett", "kaiser", "meshgrid", "mgrid", "ogrid", "vander", "diag", "diagflat",
        ];
        return !function.contains('.') && !MAKERS.contains(&function);
    }
    name.strip_prefix("scipy.special.")
        .is_some_and(|f| !f.contains("roots") && !f.contains("zeros") && !matches!(f, "bernoulli" | "euler"))
}

/// A function of Python's `random` module that draws one number
/// (`random.random()`, `random.gauss(0, 1)`), not one that picks or
/// shuffles the items of a sequence.
fn python_random_number(name: &str) -> bool {
    name.strip_prefix("random.").is_some_and(|f| {
        matches!(
            f,
            "random" | "uniform" | "triangular" | "randint" | "randrange" | "getrandbits" | "gauss" | "normalvariate"
                | "lognormvariate" | "expovariate" | "vonmisesvariate" | "gammavariate" | "betavariate" | "paretovariate"
                | "weibullvariate" | "binomialvariate"
        )
    })
}

/// The alternatives of a type: `A | B`, `Optional[A]`, `Union[A, B]` (by any
/// spelling of `typing`), split at the top level; any other type is its own.
pub(super) fn type_alternatives(text: &str) -> Vec<&str> {
    let text = text.trim();
    for wrapper in ["Optional[", "Union[", "typing.Optional[", "typing.Union[", "t.Optional[", "t.Union[", "Annotated[", "typing.Annotated["] {
        if let Some(inner) = text.strip_prefix(wrapper).and_then(|t| t.strip_suffix(']')) {
            let parts = split_top(inner, ',');
            // `Annotated[T, ...]` is T.
            let parts = if wrapper.contains("Annotated") { parts.into_iter().take(1).collect() } else { parts };
            return parts.into_iter().flat_map(type_alternatives).collect();
        }
    }
    let parts = split_top(text, '|');
    if parts.len() > 1 {
        return parts.into_iter().flat_map(type_alternatives).collect();
    }
    vec![text]
}

/// `text` split at `sep` outside brackets.
fn split_top(text: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' => depth -= 1,
            c if c == sep && depth == 0 => {
                parts.push(text[start..i].trim());
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(text[start..].trim());
    parts
}
