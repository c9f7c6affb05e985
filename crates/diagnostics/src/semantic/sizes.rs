//! How many elements a value holds: sizes a call or shape states, a
//! comprehension's length, a histogram's bins, the columns of a matrix, and
//! whether an array is one-dimensional.

use gpulens_syntax::NodeExt;

use gpulens_knowledge::{ApiKind, SizeSpec};
use gpulens_syntax::Node;

use super::*;

impl<'t> Module<'t> {
    /// `expr` is a one-dimensional array, as far as its construction shows:
    /// a range or grid of points (`np.arange(n)`, `np.linspace(a, b, n)`),
    /// an array made from one length (`np.zeros(n)`), a flat list of
    /// numbers, or element-wise math on such arrays and numbers.
    pub fn one_dimensional(&self, expr: Node<'_>, scope: usize) -> bool {
        self.one_dimensional_at(expr, scope, 0)
    }

    /// Whether the data `inputs` (a call's arguments, in `scope`) are the
    /// counts of a histogram (`hist, _ = np.histogram(x, bins=max_bins)`),
    /// its parts, and arithmetic of them with numbers, where the bins are a
    /// number the caller gives (or edges made from one: `np.linspace(a, b,
    /// k + 1)`): as many elements as bins, a count a user writes, however
    /// large the data binned.
    pub fn counts_of_bins(&self, inputs: &[Node<'_>], scope: usize) -> bool {
        let mut found = false;
        inputs.iter().all(|i| self.counts_at(*i, scope, 0, &mut found)) && found
    }

    fn counts_at(&self, expr: Node<'_>, scope: usize, depth: u32, found: &mut bool) -> bool {
        if depth > 8 {
            return false;
        }
        let depth = depth + 1;
        if matches!(self.eval(expr, scope, depth), Value::Int(_) | Value::Scalar) {
            return true;
        }
        match expr.kind_name() {
            "identifier" => match self.lookup(scope, self.text_of(expr), expr.start_byte()) {
                Some(Binding::Assigned(rhs)) => self.counts_at(rhs, scope, depth, found),
                Some(Binding::Unpacked(rhs, 0)) if self.binned_by_a_number(rhs, scope, depth) => {
                    *found = true;
                    true
                }
                _ => false,
            },
            // `np.histogram(x, k)[0]`, or a part of the counts (`probs[probs > 0]`).
            "subscript" => {
                let Some(value) = expr.field("value") else { return false };
                if self.binned_by_a_number(value, scope, depth) {
                    *found = true;
                    return expr.field("subscript").is_some_and(|i| self.text_of(i) == "0");
                }
                self.counts_at(value, scope, depth, found)
            }
            "parenthesized_expression" | "binary_operator" | "unary_operator" => {
                let mut cursor = expr.walk();
                let parts: Vec<Node<'_>> = expr.named_children(&mut cursor).filter(|c| c.kind_name() != "comment").collect();
                parts.iter().all(|p| self.counts_at(*p, scope, depth, found))
            }
            "call" => {
                let Some(function) = expr.field("function") else { return false };
                // `hist.astype(float)`: the same counts.
                if function.kind_name() == "attribute" && function.field("attribute").is_some_and(|a| matches!(self.text_of(a), "astype" | "copy")) {
                    return function.field("object").is_some_and(|o| self.counts_at(o, scope, depth, found));
                }
                // Element-wise math on them (`np.log(probs)`).
                let elementwise = self.qualified_name(function).and_then(|q| self.knowledge.api(&q)).is_some_and(|api| api.elementwise);
                elementwise && super::positional_arguments(expr).iter().all(|a| self.counts_at(*a, scope, depth, found))
            }
            _ => false,
        }
    }

    /// `call` is a histogram (see the knowledge's `bins`) whose bins are a
    /// number, left at the default, or edges made from a number.
    fn binned_by_a_number(&self, call: Node<'_>, scope: usize, depth: u32) -> bool {
        if call.kind_name() != "call" {
            return false;
        }
        let Some((_, api)) = self.resolve_call(call) else { return false };
        let Some(spec) = api.bins.as_ref() else { return false };
        let given = spec.keyword.as_deref().and_then(|k| self.keyword(call, k)).or_else(|| spec.arg.and_then(|i| super::positional_arguments(call).get(i).copied()));
        given.is_none_or(|bins| self.made_from_a_number(bins, scope, depth))
    }

    /// `expr` is a number, or a grid made from numbers (`np.linspace(-np.pi,
    /// np.pi, k + 1)`, `np.arange(k)`).
    fn made_from_a_number(&self, expr: Node<'_>, scope: usize, depth: u32) -> bool {
        if depth > 8 {
            return false;
        }
        if matches!(self.eval(expr, scope, depth), Value::Int(_) | Value::Scalar) {
            return true;
        }
        match expr.kind_name() {
            "identifier" => match self.lookup(scope, self.text_of(expr), expr.start_byte()) {
                Some(Binding::Assigned(rhs)) => self.made_from_a_number(rhs, scope, depth + 1),
                _ => false,
            },
            "call" => {
                let grid = expr.field("function").and_then(|f| self.qualified_name(f)).is_some_and(|q| matches!(q.as_str(), "numpy.linspace" | "numpy.arange"));
                grid && super::positional_arguments(expr).iter().all(|a| matches!(self.eval(*a, scope, depth + 1), Value::Int(_) | Value::Scalar))
            }
            _ => false,
        }
    }

    /// How many elements a list comprehension makes: one per index of its
    /// one `range` of a known length, when nothing filters them.
    pub(super) fn comprehension_count(&self, expr: Node<'_>, scope: usize, depth: u32) -> Option<u64> {
        let mut cursor = expr.walk();
        let clauses: Vec<Node<'_>> = expr.named_children(&mut cursor).skip(1).collect();
        let [clause] = clauses.as_slice() else { return None };
        let right = clause.field("right").filter(|r| clause.kind_name() == "for_in_clause" && r.kind_name() == "call")?;
        if right.field("function").is_none_or(|f| self.text_of(f) != "range") {
            return None;
        }
        let args = super::positional_arguments(right);
        let value = |i: usize| args.get(i).map(|a| self.eval(*a, scope, depth + 1));
        match (args.len(), value(0), value(1)) {
            (1, Some(Value::Int(n)), _) => Some(n),
            (2, Some(Value::Int(a)), Some(Value::Int(b))) => Some(b.saturating_sub(a)),
            _ => None,
        }
    }

    /// The number of bins `rhs` asks for, when it is a call of a histogram
    /// function (see the knowledge's `bins`) given a number of them.
    pub(super) fn bin_count(&self, rhs: Node<'t>, scope: usize, depth: u32) -> Option<u64> {
        if rhs.kind_name() != "call" {
            return None;
        }
        let (_, api) = self.resolve_call(rhs)?;
        let spec = api.bins.as_ref()?;
        self.size_of_call(rhs, spec, scope, depth + 1)
    }

    pub(super) fn one_dimensional_at(&self, expr: Node<'_>, scope: usize, depth: u32) -> bool {
        if self.cut(depth) {
            return false;
        }
        let depth = depth + 1;
        let number = |e: Node<'_>| matches!(self.eval(e, scope, depth), Value::Int(_) | Value::Scalar);
        match expr.kind_name() {
            "parenthesized_expression" => expr.named_child(0).is_some_and(|e| self.one_dimensional_at(e, scope, depth)),
            "unary_operator" => expr.field("argument").is_some_and(|a| self.one_dimensional_at(a, scope, depth)),
            "list" => {
                let mut cursor = expr.walk();
                let items: Vec<Node<'_>> = expr.named_children(&mut cursor).collect();
                !items.is_empty() && items.iter().all(|i| number(*i))
            }
            "identifier" => match self.lookup(scope, self.text_of(expr), expr.start_byte()) {
                Some(Binding::Assigned(rhs)) if self.import_at(self.text_of(expr), expr.start_byte()).is_none() => {
                    self.one_dimensional_at(rhs, scope, depth)
                }
                Some(Binding::Parameter | Binding::Annotated(_)) => {
                    self.documented.get(&(scope, self.text_of(expr))).is_some_and(|ty| vector_type(ty))
                }
                _ => false,
            },
            "binary_operator" => {
                let (Some(l), Some(r)) = (expr.field("left"), expr.field("right")) else { return false };
                let (lv, rv) = (self.one_dimensional_at(l, scope, depth), self.one_dimensional_at(r, scope, depth));
                (lv && (rv || number(r))) || (rv && number(l))
            }
            "call" => {
                let Some(function) = expr.field("function") else { return false };
                // `a.ravel()`, `a.flatten()`: flat whatever `a` was.
                if function.kind_name() == "attribute"
                    && function.field("attribute").is_some_and(|m| matches!(self.text_of(m), "ravel" | "flatten"))
                    && expr.field("arguments").is_some_and(|a| a.named_child_count() == 0)
                {
                    return true;
                }
                let Some(name) = self.qualified_name(function) else { return false };
                let positional = positional_arguments(expr);
                match name.as_str() {
                    "numpy.arange" | "numpy.linspace" | "numpy.logspace" | "numpy.geomspace" => true,
                    // A length, not a shape tuple.
                    "numpy.zeros" | "numpy.ones" | "numpy.empty" | "numpy.full" => positional.first().is_some_and(|n| number(*n)),
                    // The same shape as a vector.
                    "numpy.asarray" | "numpy.asanyarray" | "numpy.array" | "numpy.copy" | "numpy.zeros_like"
                    | "numpy.ones_like" | "numpy.empty_like" | "numpy.full_like" | "numpy.cumsum" | "numpy.sort" => {
                        positional.first().is_some_and(|v| self.one_dimensional_at(*v, scope, depth))
                    }
                    // Flat by definition, whatever the input's shape.
                    "numpy.ravel" | "numpy.flatnonzero" => true,
                    // Without `axis`, np.append flattens both operands.
                    "numpy.append" => self.keyword(expr, "axis").is_none(),
                    // Joining a vector to anything gives a vector (the
                    // others must be vectors too).
                    "numpy.concatenate" | "numpy.hstack" => positional.first().is_some_and(|seq| {
                        matches!(seq.kind_name(), "tuple" | "list") && {
                            let mut cursor = seq.walk();
                            let items: Vec<Node<'_>> = seq.named_children(&mut cursor).collect();
                            items.iter().any(|i| self.one_dimensional_at(*i, scope, depth))
                        }
                    }),
                    _ if self.knowledge.elementwise(&name) => {
                        !positional.is_empty()
                            && positional.iter().any(|a| self.one_dimensional_at(*a, scope, depth))
                            && positional.iter().all(|a| number(*a) || self.one_dimensional_at(*a, scope, depth))
                    }
                    // Random numbers of one size that is a number
                    // (`np.random.rand(n)`, `rng.normal(size=n)`), not a shape.
                    _ => self.knowledge.api(&name).filter(|api| api.kind == ApiKind::Generate).and_then(|api| api.size.as_ref()).is_some_and(|spec| {
                        if spec.data {
                            false
                        } else if spec.varargs {
                            positional.len() == 1 && number(positional[0])
                        } else {
                            let size = spec.keyword.as_deref().and_then(|k| self.keyword(expr, k)).or_else(|| spec.arg.and_then(|i| positional.get(i).copied()));
                            size.is_some_and(number)
                        }
                    }),
                }
            }
            _ => false,
        }
    }

    /// The number of columns (the last dimension) of the array `expr`,
    /// when its documented shape gives it: a parameter documented as
    /// `(n, 3)`, converted (`np.asarray`) or shifted (`points - centre`).
    pub fn columns(&self, expr: Node<'_>, scope: usize) -> Option<u64> {
        self.columns_at(expr, scope, 0)
    }

    pub(super) fn columns_at(&self, expr: Node<'_>, scope: usize, depth: u32) -> Option<u64> {
        if self.cut(depth) {
            return None;
        }
        let depth = depth + 1;
        match expr.kind_name() {
            "parenthesized_expression" => self.columns_at(expr.named_child(0)?, scope, depth),
            "identifier" => {
                let name = self.text_of(expr);
                match self.lookup(scope, name, expr.start_byte())? {
                    Binding::Assigned(rhs) if self.import_at(name, expr.start_byte()).is_none() => self.columns_at(rhs, scope, depth),
                    Binding::Parameter | Binding::Annotated(_) => documented_columns(self.documented.get(&(scope, name))?),
                    _ => None,
                }
            }
            "binary_operator" => {
                let op = self.text_of(expr.field("operator")?);
                if !matches!(op, "+" | "-" | "*" | "/") {
                    return None;
                }
                let (l, r) = (expr.field("left")?, expr.field("right")?);
                self.columns_at(l, scope, depth).or_else(|| self.columns_at(r, scope, depth))
            }
            "call" => {
                let function = expr.field("function")?;
                // `x.reshape(m, n)`, `x.reshape((m, n))`: n columns, whatever x was.
                if function.kind_name() == "attribute" && function.field("attribute").is_some_and(|a| self.text_of(a) == "reshape") {
                    return self.last_dimension(&positional_arguments(expr), scope, depth);
                }
                let name = self.qualified_name(function)?;
                match name.as_str() {
                    "numpy.asarray" | "numpy.asanyarray" | "numpy.array" | "numpy.ascontiguousarray" | "numpy.copy" => {
                        self.columns_at(self.first_positional(expr)?, scope, depth)
                    }
                    // `np.reshape(x, (m, n))`.
                    "numpy.reshape" => self.last_dimension(positional_arguments(expr).get(1..)?, scope, depth),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The last of the dimensions a reshape is given (`m, n` or `(m, n)`),
    /// when there are two or more and it is a known number.
    fn last_dimension(&self, args: &[Node<'_>], scope: usize, depth: u32) -> Option<u64> {
        let dims: Vec<Node<'_>> = match args {
            [one] if matches!(one.kind_name(), "tuple" | "list") => one.named_children(&mut one.walk()).collect(),
            _ => args.to_vec(),
        };
        if dims.len() < 2 {
            return None;
        }
        match self.eval(*dims.last()?, scope, depth + 1) {
            Value::Int(n) if n > 0 => Some(n),
            _ => None,
        }
    }

    /// `a` is `x.T` and `b` has as many columns as `x`, a known number `k`:
    /// the product `x.T @ b` is a k x k matrix (a Gram or scatter matrix of
    /// points, `np.dot(x.T, x)`). `k`.
    pub fn gram_columns(&self, a: Node<'_>, b: Node<'_>, scope: usize) -> Option<u64> {
        if a.kind_name() != "attribute" || self.text_of(a.field("attribute")?) != "T" {
            return None;
        }
        let k = self.columns(a.field("object")?, scope)?;
        (self.columns(b, scope)? == k).then_some(k)
    }

    /// Number of elements a call asks for, read from its arguments as `spec` says.
    pub fn size_of_call(&self, call: Node<'_>, spec: &SizeSpec, scope: usize, depth: u32) -> Option<u64> {
        if let Some(n) = spec.fixed {
            return Some(n);
        }
        let args = call.field("arguments")?;
        let mut cursor = args.walk();
        let children: Vec<Node<'_>> = args.named_children(&mut cursor).filter(|n| n.kind_name() != "comment").collect();
        let positional: Vec<Node<'_>> = children.iter().copied().filter(|n| n.kind_name() != "keyword_argument").collect();
        if positional.iter().any(|n| matches!(n.kind_name(), "list_splat" | "dictionary_splat")) {
            return None;
        }
        if spec.varargs {
            if positional.is_empty() {
                return Some(1);
            }
            return positional.iter().try_fold(1u64, |acc, &n| match self.eval(n, scope, depth) {
                Value::Int(v) => Some(acc.saturating_mul(v)),
                _ => None,
            });
        }
        let keyword = spec.keyword.as_deref().and_then(|kw| {
            children.iter().find_map(|n| {
                (n.kind_name() == "keyword_argument"
                    && n.field("name").is_some_and(|name| self.text_of(name) == kw))
                .then(|| n.field("value"))
                .flatten()
            })
        });
        let Some(arg) = keyword.or_else(|| spec.arg.and_then(|i| positional.get(i).copied())) else {
            // Left out: as many elements as the other arguments broadcast
            // to, which for numbers alone is `absent`. (A parameter is read
            // as a number unless something says it holds an array; a
            // `**options` may hold the shape.)
            let numbers = children.iter().all(|n| {
                let value = if n.kind_name() == "keyword_argument" { n.field("value") } else { Some(*n) };
                n.kind_name() != "dictionary_splat"
                    && value.is_some_and(|v| {
                        !matches!(self.eval(v, scope, depth + 1), Value::Array(_) | Value::Device(_) | Value::Frame(_) | Value::GpuFrame)
                    })
            });
            return spec.absent.filter(|_| numbers);
        };
        if spec.data {
            return match arg.kind_name() {
                "dictionary" => {
                    // A dict of columns: pandas wants every column that is
                    // a sequence as long as the others (a number is
                    // repeated down the rows), so one column of known
                    // length gives the rows.
                    let mut cursor = arg.walk();
                    let rows = arg
                        .named_children(&mut cursor)
                        .filter_map(|pair| pair.field("value"))
                        .filter_map(|v| self.column_length(v, scope, depth))
                        .max();
                    rows
                }
                _ => self.eval(arg, scope, depth).elements(),
            };
        }
        if spec.square {
            if positional.len() > 1 {
                return None;
            }
            return match self.eval(arg, scope, depth) {
                Value::Int(n) => Some(n.saturating_mul(n)),
                _ => None,
            };
        }
        self.shape_size(arg, scope, depth)
    }

    /// The length of a column given to a table: a sequence of known length
    /// (`[1, 2, 3]`, `range(7)`, an array of known size); none for a number
    /// (repeated down the rows) or a column of unknown length.
    fn column_length(&self, column: Node<'_>, scope: usize, depth: u32) -> Option<u64> {
        if column.kind_name() == "call"
            && column.field("function").is_some_and(|f| f.kind_name() == "identifier" && self.text_of(f) == "range")
            && self.lookup(scope, "range", column.start_byte()).is_none()
        {
            let bounds: Option<Vec<u64>> = super::positional_arguments(column)
                .iter()
                .map(|a| match self.eval(*a, scope, depth) {
                    Value::Int(n) => Some(n),
                    _ => None,
                })
                .collect();
            return match bounds?.as_slice() {
                [stop] => Some(*stop),
                [start, stop] => Some(stop.saturating_sub(*start)),
                [start, stop, step] if *step > 0 => Some(stop.saturating_sub(*start).div_ceil(*step)),
                _ => None,
            };
        }
        match self.eval(column, scope, depth) {
            Value::Int(_) | Value::Scalar => None,
            v => v.elements(),
        }
    }

    /// Elements in a shape: an int, or a tuple/list of ints.
    pub(super) fn shape_size(&self, shape: Node<'_>, scope: usize, depth: u32) -> Option<u64> {
        match shape.kind_name() {
            "tuple" | "list" => {
                let mut cursor = shape.walk();
                let dims: Vec<Node<'_>> = shape.named_children(&mut cursor).collect();
                dims.into_iter().try_fold(1u64, |acc, d| match self.eval(d, scope, depth) {
                    Value::Int(v) => Some(acc.saturating_mul(v)),
                    _ => None,
                })
            }
            // `np.zeros(x.shape)`: as many elements as `x`.
            "attribute" if shape.field("attribute").is_some_and(|a| self.text_of(a) == "shape") => {
                match shape.field("object").map(|o| self.eval(o, scope, depth)) {
                    Some(Value::Array(n) | Value::Device(n)) => n,
                    _ => None,
                }
            }
            _ => match self.eval(shape, scope, depth) {
                Value::Int(v) => Some(v),
                _ => None,
            },
        }
    }
}

pub(super) fn parse_int(text: &str) -> Option<u64> {
    let t = text.replace('_', "");
    let t = t.trim_end_matches(['l', 'L']);
    let (digits, radix) = match t.get(..2) {
        Some("0x" | "0X") => (&t[2..], 16),
        Some("0o" | "0O") => (&t[2..], 8),
        Some("0b" | "0B") => (&t[2..], 2),
        _ => (t, 10),
    };
    u64::from_str_radix(digits, radix).ok()
}
/// Elements in a list/tuple literal, nested lists multiplied out.
/// How `.reshape(...)` gives its shape: one argument (an int or a tuple of
/// ints), or one dimension per argument.
pub(super) fn reshape_spec(call: Node<'_>) -> SizeSpec {
    let positional = call.field("arguments").map_or(0, |args| {
        let mut cursor = args.walk();
        let count = args.named_children(&mut cursor).filter(|n| !matches!(n.kind_name(), "comment" | "keyword_argument")).count();
        count
    });
    SizeSpec { arg: Some(0), keyword: None, varargs: positional > 1, data: false, absent: None, square: false, fixed: None }
}
pub(super) fn element_count(node: Node<'_>) -> Option<u64> {
    let mut total = 1u64;
    let mut node = node;
    // Iterative descent through the first element: [[1, 2], [3, 4]] → 2 × 2.
    for _ in 0..8 {
        let mut cursor = node.walk();
        let items: Vec<Node<'_>> = node.named_children(&mut cursor).filter(|n| n.kind_name() != "comment").collect();
        if items.iter().any(|n| matches!(n.kind_name(), "list_splat" | "list_comprehension")) {
            return None;
        }
        total = total.saturating_mul(items.len() as u64);
        match items.first() {
            Some(first) if matches!(first.kind_name(), "list" | "tuple") => node = *first,
            _ => return Some(total),
        }
    }
    Some(total)
}
/// A parameter's default is a number (`1`, `0.5`, `-3`, `1e-6`).
pub(super) fn number_literal(value: Node<'_>) -> bool {
    match value.kind_name() {
        "integer" | "float" => true,
        "unary_operator" => value.field("argument").is_some_and(|a| matches!(a.kind_name(), "integer" | "float")),
        _ => false,
    }
}
