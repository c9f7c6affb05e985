//! What a name or a call refers to: qualified names through the imports,
//! and the knowledge-base entry a call resolves to (directly, through a
//! local alias, as an array's method mirroring a function, or as `a @ b`).

use gpulens_syntax::NodeExt;

use gpulens_knowledge::ApiMapping;
use gpulens_syntax::Node;

use super::*;

impl<'t> Module<'t> {
    /// The fully qualified name an expression refers to through the imports:
    /// `np.fft.fft` → `numpy.fft.fft`, `KM` → `sklearn.cluster.KMeans`.
    pub fn qualified_name(&self, expr: Node<'_>) -> Option<String> {
        self.qualified_through(expr, |name, offset| self.import_at(name, offset))
    }

    /// The dotted name `expr` (`a.b.c`) spells, its first part replaced by
    /// what `import_of(first part, offset)` says it is.
    pub(super) fn qualified_through<'s>(&'s self, expr: Node<'_>, import_of: impl Fn(&str, usize) -> Option<&'s str>) -> Option<String> {
        let mut parts: Vec<&str> = Vec::new();
        let mut node = expr;
        while node.kind_name() == "attribute" {
            parts.push(self.text_of(node.field("attribute")?));
            node = node.field("object")?;
        }
        if node.kind_name() != "identifier" {
            return None;
        }
        let mut name = import_of(self.text_of(node), node.start_byte())?.to_string();
        for part in parts.iter().rev() {
            name.push('.');
            name.push_str(part);
        }
        Some(name)
    }

    /// [`Module::qualified_name`] through the module-level imports only.
    pub(super) fn module_level_name(&self, expr: Node<'_>) -> Option<String> {
        let whole = 0..self.text.len();
        self.qualified_through(expr, |name, _| {
            self.imports.get(name)?.iter().find(|(scope, _)| *scope == whole).map(|(_, target)| target.as_str())
        })
    }

    /// The knowledge-base entry a call's callee resolves to.
    pub fn resolve_call(&self, call: Node<'_>) -> Option<(String, &'static ApiMapping)> {
        let name = self.qualified_name(call.field("function")?)?;
        let api = self.knowledge.api(&name)?;
        Some((name, api))
    }

    /// [`Module::resolve_call`], also through a local alias of a library
    /// function (`components = nx.weakly_connected_components`, then
    /// `components(G)`).
    pub fn resolve_call_in(&self, call: Node<'_>, scope: usize) -> Option<(String, &'static ApiMapping)> {
        if let Some(found) = self.resolve_call(call) {
            return Some(found);
        }
        if let Some(found) = self.resolve_mirror(call, scope, 0) {
            return Some(found);
        }
        let callee = call.field("function").filter(|f| f.kind_name() == "identifier")?;
        let Some(Binding::Assigned(value)) = self.lookup(scope, self.text_of(callee), callee.start_byte()) else { return None };
        if value.kind_name() != "attribute" {
            return None;
        }
        let name = self.qualified_name(value)?;
        let api = self.knowledge.api(&name)?;
        Some((name, api))
    }

    /// A call of an array's method that mirrors a library function
    /// (`a.dot(b)` on a NumPy array `a` is `numpy.dot(a, b)`): the function
    /// and its entry. Remembered, so that the call's arguments start with
    /// the array (see [`Module::argument`]).
    /// `depth` is how deep an evaluation asks (see [`Module::eval`]): the
    /// array is read under the same limit, so that a value defined through
    /// its own method calls (`self.b[:, d] = self.b[:, d].dot(g)`) ends.
    pub fn resolve_mirror(&self, call: Node<'_>, scope: usize, depth: u32) -> Option<(String, &'static ApiMapping)> {
        let callee = call.field("function").filter(|f| f.kind_name() == "attribute")?;
        let name = self.knowledge.mirrored(self.text_of(callee.field("attribute")?))?;
        let api = self.knowledge.api(&name)?;
        if !self.mirror_calls.borrow().contains(&call.id()) {
            // (A module that imports no NumPy holds no array of its own
            // making, as for `a @ b`: see [`Module::resolve_matmul`].)
            if !self.imports_numpy() {
                return None;
            }
            // (A NumPy array's: not a table's or a GPU array's, nor a Python
            // list's, whose `sort` is its own.)
            let object = callee.field("object")?;
            // (Nor a SciPy sparse matrix's: `D.dot(A)` with `D = sparse.diags(w)`
            // scales rows, one multiply per stored element.)
            if !matches!(self.eval(object, scope, depth), Value::Array(_))
                || self.python_sequence(object, scope, depth)
                || self.evidently_sparse(object, scope, 0)
            {
                return None;
            }
            self.mirror_calls.borrow_mut().insert(call.id());
        }
        Some((name, api))
    }

    /// Whether `expr` is a Python list or tuple, written out or built by
    /// `list(…)`, `sorted(…)` or `tuple(…)`, directly or through the names
    /// it was assigned to: the analysis counts one as an array where a
    /// NumPy function takes it, but its methods are not NumPy's.
    fn python_sequence(&self, expr: Node<'_>, scope: usize, depth: u32) -> bool {
        if depth > super::MAX_EVAL_DEPTH {
            return false;
        }
        match expr.kind_name() {
            "list" | "tuple" | "list_comprehension" => true,
            "parenthesized_expression" => expr.named_child(0).is_some_and(|e| self.python_sequence(e, scope, depth + 1)),
            "call" => expr
                .field("function")
                .is_some_and(|f| f.kind_name() == "identifier" && matches!(self.text_of(f), "list" | "sorted" | "tuple")),
            "identifier" => match self.lookup(scope, self.text_of(expr), expr.start_byte()) {
                Some(Binding::Assigned(rhs)) => self.python_sequence(rhs, scope, depth + 1),
                _ => false,
            },
            _ => false,
        }
    }

    /// Whether the module imports NumPy anywhere (asked once per module; the
    /// incremental plan keys on the same fact).
    fn imports_numpy(&self) -> bool {
        self.answer_once(self.root, "imports numpy", || {
            self.imports.values().flatten().any(|(_, target)| target == "numpy" || target.starts_with("numpy."))
        })
    }

    /// A matrix product written `a @ b` where an operand is a NumPy array
    /// (the operator of other types — PyTorch's tensors, SciPy's sparse
    /// matrices — is theirs): `numpy.matmul` and its entry.
    pub fn resolve_matmul(&self, node: Node<'_>, scope: usize) -> Option<(String, &'static ApiMapping)> {
        let operands = super::arguments::matmul_operands(node)?;
        // (A module that imports no NumPy makes no NumPy array to multiply:
        // a list literal is not one.)
        if !self.imports_numpy() {
            return None;
        }
        let values = operands.map(|o| self.value(o, scope));
        if values.iter().any(|v| matches!(v, Value::Device(_))) || !values.iter().any(|v| matches!(v, Value::Array(_))) {
            return None;
        }
        // (A SciPy sparse matrix's product is a sparse one: not `cupy.matmul`.)
        if operands.iter().any(|o| self.evidently_sparse(*o, scope, 0)) {
            return None;
        }
        let api = self.knowledge.api("numpy.matmul")?;
        Some(("numpy.matmul".to_string(), api))
    }

    /// Whether every `return` of the module's own function that `call` calls
    /// gives a SciPy sparse matrix.
    fn returns_sparse(&self, call: Node<'_>, depth: u32) -> bool {
        // (Some return, and every one sparse.)
        self.fold_own_returns(call, (false, true), |(_, all), function, value| {
            (true, all && value.is_some_and(|e| self.evidently_sparse(e, function.id(), depth + 1)))
        })
        .is_some_and(|(any, all)| any && all)
    }

    /// `expr` holds a SciPy sparse matrix: one a `scipy.sparse` function
    /// made or a conversion method (`.tocsr()`) returned, directly or a few
    /// assignments back, or a name the branch around it tested with
    /// `issparse`.
    fn evidently_sparse(&self, expr: Node<'_>, scope: usize, depth: u32) -> bool {
        // NetworkX's matrices of a graph are SciPy sparse arrays (its
        // reference: "Returns: A : SciPy sparse array").
        const NETWORKX_SPARSE: &[&str] = &[
            "networkx.adjacency_matrix",
            "networkx.to_scipy_sparse_array",
            "networkx.to_scipy_sparse_matrix",
            "networkx.laplacian_matrix",
            "networkx.normalized_laplacian_matrix",
            "networkx.incidence_matrix",
        ];
        const CONVERSIONS: &[&str] = &["tocsr", "tocsc", "tolil", "tocoo", "todia", "todok", "tobsr"];
        if depth > 3 {
            return false;
        }
        match expr.kind_name() {
            "parenthesized_expression" => expr.named_child(0).is_some_and(|e| self.evidently_sparse(e, scope, depth)),
            "attribute" if expr.field("attribute").is_some_and(|a| self.text_of(a) == "T") => {
                expr.field("object").is_some_and(|o| self.evidently_sparse(o, scope, depth))
            }
            "binary_operator" => {
                [expr.field("left"), expr.field("right")].into_iter().flatten().any(|o| self.evidently_sparse(o, scope, depth + 1))
            }
            "call" => {
                let Some(function) = expr.field("function") else { return false };
                if function.kind_name() == "attribute"
                    && function.field("attribute").is_some_and(|a| CONVERSIONS.contains(&self.text_of(a)))
                {
                    return true;
                }
                if self.qualified_name(function).is_some_and(|n| n.starts_with("scipy.sparse.") || NETWORKX_SPARSE.contains(&n.as_str())) {
                    return true;
                }
                // What the module's own function returns (`D = self._degree_inverse(g)`),
                // one call away as values flow (see `flow`).
                self.returns_sparse(expr, depth)
            }
            "identifier" => {
                let name = self.text_of(expr);
                let tested = self.ancestors(expr).any(|a| {
                    a.kind_name() == "if_statement"
                        && a.field("consequence").is_some_and(|c| c.byte_range().contains(&expr.start_byte()))
                        && a.field("condition").is_some_and(|c| {
                            let text = self.text_of(c);
                            text.contains("issparse(") && text.contains(&format!("({name})"))
                        })
                });
                tested || self.assigned_from(expr, scope).is_some_and(|rhs| self.evidently_sparse(rhs, scope, depth + 1))
            }
            _ => false,
        }
    }
}
