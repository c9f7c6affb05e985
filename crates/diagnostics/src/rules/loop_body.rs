//! What the body of a Python index loop does, as the loop rules read it
//! (see `loops`): the nest's variables and sizes, the elements it writes
//! and reads, the numbers it sums into, and what keeps it from being a
//! kernel (Python objects, I/O, calls a kernel cannot make).

use gpulens_syntax::NodeExt;
use gpulens_syntax::Node;

use super::idle_loops::{grows_outer_collection, python_container, subscript_base};
use super::loop_headers::{enumerate_element, enumerates_zip, range_loop, zip_of_arrays};
use crate::semantic::{LoopSite, Value};
use crate::Context;

/// Calls a kernel can make.
pub(crate) fn allowed_call(callee: &str) -> bool {
    // `be.min(x[lo:hi])`, `window.mean()`: a reduction or math function by
    // NumPy's name, on an array or through an array-API namespace.
    // Also an array's own methods that Numba compiles (`row.nonzero()`,
    // `x[i].any()`), on a name or one element or row of an array.
    let math_method = callee.rsplit_once('.').is_some_and(|(object, method)| {
        let base = object.split('[').next().unwrap_or("");
        !base.is_empty()
            && base.chars().all(|c| c.is_alphanumeric() || c == '_')
            && (object.len() == base.len() || object.ends_with(']'))
            && matches!(
                method,
                "min" | "max" | "sum" | "mean" | "abs" | "sqrt" | "exp" | "log" | "argmin" | "argmax" | "nonzero"
                    | "any" | "all" | "std" | "var" | "prod" | "argsort" | "cumsum" | "dot" | "astype" | "copy"
                    | "ravel" | "reshape" | "flatten"
            )
    });
    matches!(callee, "abs" | "min" | "max" | "int" | "float" | "round" | "pow" | "bool" | "range" | "len" | "zip" | "enumerate")
        || math_method
        || callee.starts_with("math.")
        || callee.starts_with("cmath.")
        || callee.starts_with("np.")
        || callee.starts_with("numpy.")
}

#[derive(Default)]
pub(super) struct Shape<'t> {
    /// Loop variables of the perfect nest, outermost first.
    pub(super) vars: Vec<&'t str>,
    /// (array, indices) of element writes.
    pub(super) writes: Vec<(String, Vec<String>)>,
    pub(super) reads: Vec<(String, Vec<String>)>,
    /// Scalars accumulated with `+=`, `*=`, ….
    pub(super) reductions: Vec<&'t str>,
    /// Why the loop can't be a kernel.
    pub(super) blocker: Option<String>,
    /// Arrays written a whole block at a time: at an array of indices
    /// (`r[idx + n * i] = ...`) or a whole row (`m[i] = ...` for a 2-D `m`).
    pub(super) vector_writes: Vec<String>,
    /// Names the body assigns (`loc = i - lag`): indices built from the loop's.
    pub(super) locals: Vec<&'t str>,
    /// Identifiers seen, for recognising simulations.
    pub(super) names: Vec<&'t str>,
    /// Range sizes of each nest level, when known.
    pub(super) sizes: Vec<Option<u64>>,
    /// Inner loops folded into this nest.
    pub(super) inner: Vec<usize>,
    /// The one statement of the body, when it has one.
    pub(super) single: Option<Node<'t>>,
    /// The body loops in Python itself (over neighbours, over a row's
    /// entries): each pass is a thread's own loop, not one vectorised operation.
    pub(super) inner_loop: bool,
}

/// Walks a `for i in range(…)` loop (and a perfect nest of such loops inside it).
/// The loop's shape, or why it can't be a kernel. In a function Numba
/// compiles (`compiled`), what is Python only in the interpreter — a call,
/// a tuple unpacked, a list, a string, a loop over a collection — is
/// compiled code, so it neither blocks the loop nor ends the reading.
pub(super) fn analyse<'t>(cx: &Context<'_, 't>, site: &LoopSite<'t>, compiled: bool) -> Option<Shape<'t>> {
    let module = cx.module;
    let python = |shape: &mut Shape<'_>, why: &str| {
        if !compiled {
            block(shape, why);
        }
    };
    let (var, size) = range_loop(cx, site.node, site.scope)?;
    let body = site.node.field("body")?;
    let mut shape = Shape { vars: vec![var], sizes: vec![size], ..Shape::default() };
    let mut statements = body.named_children(&mut body.walk()).filter(|n| n.kind_name() != "comment").collect::<Vec<_>>();
    if statements.len() == 1 {
        shape.single = statements.first().copied();
    }
    // Fold a perfect nest: `for y …: for x …: body`.
    let mut node_body = body;
    while statements.len() == 1 && statements[0].kind_name() == "for_statement" {
        let inner = statements[0];
        let Some((v, s)) = range_loop(cx, inner, site.scope) else { break };
        shape.vars.push(v);
        shape.sizes.push(s);
        shape.inner.push(inner.id());
        node_body = inner.field("body")?;
        statements = node_body.named_children(&mut node_body.walk()).filter(|n| n.kind_name() != "comment").collect();
        shape.single = (statements.len() == 1).then(|| statements[0]);
    }
    // `for i, x in enumerate(items)`: an element measured, indexed or asked
    // for attributes (`len(x)`, `x[0]`, `x.name`) is a Python object or a
    // whole row, not one number a thread can take.
    // (Over `zip` of arrays, the element is a tuple of numbers: `w[0]` picks one.)
    if let Some(element) = enumerate_element(module, site.node).filter(|_| !enumerates_zip(cx, site.node, site.scope)) {
        let object_use = module.preorder(node_body).filter(|n| n.kind_name() == "identifier" && module.text_of(*n) == element).any(|n| {
            let Some(parent) = module.parent(n) else { return false };
            match parent.kind_name() {
                "attribute" => parent.field("object") == Some(n),
                "subscript" => parent.field("value") == Some(n),
                "argument_list" => module
                    .parent(parent)
                    .and_then(|c| c.field("function"))
                    .is_some_and(|f| matches!(module.text_of(f), "len" | "list" | "tuple" | "str" | "sorted" | "set")),
                _ => false,
            }
        });
        if object_use {
            block(&mut shape, "iterates over Python objects");
        }
    }
    // The walk's root is the body: it never leaves it.
    let mut walk = gpulens_syntax::preorder(node_body);
    while let Some(node) = walk.next() {
        match node.kind_name() {
            "function_definition" | "class_definition" | "lambda" => block(&mut shape, "defines a function"),
            // Leaving an inner loop early is a thread's own business.
            "break_statement" if inside_inner_loop(node, node_body) => {}
            "return_statement" | "break_statement" | "yield" | "raise_statement" | "try_statement" | "with_statement"
            | "global_statement" | "nonlocal_statement" | "await" | "delete_statement" | "while_statement"
            | "print_statement" | "exec_statement" | "import_statement" | "import_from_statement" => {
                block(&mut shape, node.kind_name())
            }
            // A gather of numbers (`[img[p[0], p[1]] for p in points]`): a
            // thread's own small buffer of array elements.
            "list_comprehension" if gathers_elements(node) => walk.skip_children(),
            // An option spelled as a word (`np.searchsorted(b, x, side="left")`):
            // a constant the compiled call takes, not a Python object.
            "string" if node.parent().is_some_and(|p| p.kind_name() == "keyword_argument" && p.field("value") == Some(node)) => {
                walk.skip_children()
            }
            "string" | "concatenated_string" | "dictionary" | "list" | "set" | "list_comprehension"
            | "dictionary_comprehension" | "set_comprehension" | "generator_expression" => {
                python(&mut shape, "Python objects");
                // (Compiled, its elements are read like any others.)
                if !compiled {
                    walk.skip_children();
                }
            }
            "for_statement" => {
                // An inner range loop (over neighbours, say) runs inside one thread.
                // So does one over the entries of arrays side by side
                // (`for v, j in zip(row.data, row.indices)`).
                if range_loop(cx, node, site.scope).is_none() && !zip_of_arrays(cx, node) {
                    python(&mut shape, "iterates over a Python collection");
                }
                // Its variables are indices built in the body, and its
                // passes work entry by entry where it indexes with them.
                let targets: Vec<&str> = node
                    .field("left")
                    .map(|l| module.preorder(l).filter(|t| t.kind_name() == "identifier").map(|t| module.text_of(t)).collect())
                    .unwrap_or_default();
                if let Some(inner_body) = node.field("body") {
                    shape.inner_loop |= module.preorder(inner_body).any(|n| {
                        n.kind_name() == "subscript"
                            && n.field("subscript").is_some_and(|i| targets.contains(&module.text_of(i)))
                    });
                }
                shape.locals.extend(targets);
            }
            "call" => {
                let callee = node.field("function").map_or("", |f| module.text_of(f));
                // A collection bound outside the body that each pass grows or
                // shrinks (`found.append(i)`): its order is the passes' order,
                // which threads do not keep, compiled or not.
                if grows_outer_collection(module, node, node_body) {
                    block(&mut shape, "grows a collection");
                }
                // A function Numba compiles is a device function to a kernel.
                if !allowed_call(callee) && !super::context::cpu_jit_helper(cx, callee) {
                    python(&mut shape, "calls Python functions");
                }
            }
            "assignment" | "augmented_assignment" => {
                if let Some(left) = node.field("left") {
                    match left.kind_name() {
                        // A mapping or a list (`lengths = {}`, `counts = [0] * k`):
                        // Python objects, which no kernel writes.
                        // (`spans[i][0] = x`: the list of lists is the one written.)
                        "subscript" if python_container(module, subscript_base(left), site.scope) => {
                            block(&mut shape, "writes a Python dict or list")
                        }
                        "subscript" => {
                            if let Some(access) = element(module, left) {
                                if vector_write(cx, left, site.scope) {
                                    shape.vector_writes.push(access.0.clone());
                                }
                                shape.writes.push(access);
                            }
                        }
                        // `total += x[i]`; an array updated whole (`vals |= bits << k`,
                        // `v -= step`) is one vectorised operation per pass, not a reduction.
                        "identifier" if node.kind_name() == "augmented_assignment" => {
                            if !matches!(module.value(left, site.scope), Value::Array(_)) {
                                shape.reductions.push(module.text_of(left))
                            }
                        }
                        "identifier" => shape.locals.push(module.text_of(left)),
                        // `values, counts = np.unique(...)`: the arrays a NumPy call returns.
                        "pattern_list" | "tuple_pattern"
                            if node.field("right").is_some_and(|r| {
                                r.kind_name() == "call"
                                    && r.field("function")
                                        .is_some_and(|f| matches!(module.text_of(f).split('.').next(), Some("np" | "numpy")))
                            }) && left.named_children(&mut left.walk()).all(|n| n.kind_name() == "identifier") =>
                        {
                            let names: Vec<&str> = left.named_children(&mut left.walk()).map(|n| module.text_of(n)).collect();
                            shape.locals.extend(names);
                        }
                        _ => python(&mut shape, "unpacks values"),
                    }
                }
            }
            "subscript" => {
                // (The target of a plain assignment is written, not read:
                // writes that may land on each other are checked as writes.)
                let target = node.parent().is_some_and(|p| p.kind_name() == "assignment" && p.field("left") == Some(node));
                if let Some(access) = element(module, node).filter(|_| !target) {
                    shape.reads.push(access);
                }
            }
            "identifier" => shape.names.push(module.text_of(node)),
            _ => {}
        }
        if shape.blocker.is_some() {
            break;
        }
    }
    Some(shape)
}

impl Shape<'_> {
    /// Whether an index (as written) moves with the loop: it uses one of
    /// the nest's variables or a name the body assigns.
    pub(super) fn moves(&self, index: &str) -> bool {
        self.vars.iter().chain(&self.locals).any(|v| mentions(index, v))
    }
}

fn block(shape: &mut Shape<'_>, why: &str) {
    shape.blocker.get_or_insert_with(|| why.to_string());
}

/// `a[i, j]` / `a[i][j]` / `self.a[i]` → ("a", ["i", "j"]).
pub(super) fn element(module: &crate::Module<'_>, node: Node<'_>) -> Option<(String, Vec<String>)> {
    let mut indices = Vec::new();
    let mut value = node;
    for _ in 0..8 {
        if value.kind_name() != "subscript" {
            break;
        }
        let mut cursor = value.walk();
        let mut here: Vec<String> = value
            .children_by_field_name("subscript", &mut cursor)
            .map(|s| module.text_of(s).split_whitespace().collect())
            .collect();
        here.append(&mut indices);
        indices = here;
        value = value.field("value")?;
    }
    if !matches!(value.kind_name(), "identifier" | "attribute") {
        return None;
    }
    Some((module.text_of(value).to_string(), indices))
}

/// Whether an index expression (whitespace removed) uses variable `var`.
pub(super) fn mentions(index: &str, var: &str) -> bool {
    index
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|token| token == var)
}

/// A write that fills a block per iteration, not one element: its index
/// holds an array (`r[tmp + n * i]` with `tmp = np.arange(n)`), or it gives
/// fewer indices than the array has dimensions (`m[i] = ...` for
/// `m = np.empty((rows, cols))`). Each pass is one vectorised operation.
fn vector_write(cx: &Context<'_, '_>, target: Node<'_>, scope: usize) -> bool {
    let module = cx.module;
    let mut cursor = target.walk();
    let indices: Vec<Node<'_>> = target.children_by_field_name("subscript", &mut cursor).collect();
    let fancy = indices.iter().any(|index| {
        module.preorder(*index)
            .filter(|n| n.kind_name() == "identifier")
            .any(|n| matches!(module.value(n, scope), Value::Array(_)))
    });
    if fancy {
        return true;
    }
    let Some(array) = target.field("value").filter(|v| v.kind_name() == "identifier") else { return false };
    literal_dims(module.defining_text(array, scope)).is_some_and(|dims| indices.len() < dims)
}

/// Dimensions of `np.zeros((a, b))`, `np.empty((a, b, c), dtype)`, … as written.
fn literal_dims(text: &str) -> Option<usize> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let call = ["np.zeros((", "np.empty((", "np.ones((", "np.full((", "numpy.zeros((", "numpy.empty((", "numpy.ones((", "numpy.full(("]
        .iter()
        .find(|p| compact.starts_with(**p))?;
    let rest = &compact[call.len()..];
    let mut depth = 0usize;
    let mut dims = 1;
    for c in rest.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' if depth == 0 => return Some(if rest.starts_with(')') { 0 } else { dims }),
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => dims += 1,
            _ => {}
        }
    }
    None
}

/// `node` sits inside a loop nested in `body` (the loop's own body).
fn inside_inner_loop(node: Node<'_>, body: Node<'_>) -> bool {
    let mut current = node.parent();
    while let Some(n) = current {
        if n.id() == body.id() {
            return false;
        }
        if matches!(n.kind_name(), "for_statement" | "while_statement") {
            return true;
        }
        current = n.parent();
    }
    false
}

/// A list comprehension that gathers array elements: its element is a
/// subscript (`data[c[0], c[1]]`) and it iterates over a name, with no
/// condition and no calls.
fn gathers_elements(node: Node<'_>) -> bool {
    let Some(body) = node.field("body") else { return false };
    let mut cursor = node.walk();
    let clauses: Vec<Node<'_>> = node.named_children(&mut cursor).filter(|c| c.id() != body.id()).collect();
    body.kind_name() == "subscript"
        && !gpulens_syntax::preorder(node).any(|n| n.kind_name() == "call")
        && clauses.len() == 1
        && clauses[0].kind_name() == "for_in_clause"
        && clauses[0].field("right").is_some_and(|r| r.kind_name() == "identifier")
}
