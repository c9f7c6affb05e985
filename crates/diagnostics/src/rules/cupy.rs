//! CUPY001 (NumPy/SciPy → CuPy) and RAFT001 (`eigsh` → pylibraft).
//!
//! Copying data to the GPU and back costs more than one cheap operation
//! saves (measured on an H200: a 10M-element float32 add is 227x NumPy on the
//! GPU alone, 0.7x once the copies are counted). So a call earns a hint when
//! its work per element is heavy (FFT, sort, matmul, transcendental math,
//! random generation on the device), or when its function runs a chain of
//! array operations on the same data (or the call works on the data of a
//! heavy one), so the data can stay on the GPU between them. An array's
//! method that mirrors a function (`a.dot(b)`, `a.sum()`) counts as that
//! function.

use gpulens_syntax::NodeExt;
use rustc_hash::FxHashMap as HashMap;

use gpulens_knowledge::{ApiKind, Support};

use super::context;
use super::{estimate_phrase, fp64_phrase, install, join, loop_phrase, scale_out_phrase, short_callee, size_on, size_phrase, tensor_core_phrase, Call};
use gpulens_syntax::Node;

use crate::Code;
use crate::semantic::{Module, Value};
use crate::Finding;
use crate::registry::{declare_rule, Callers, Kind};
use crate::Severity;

declare_rule! {
    /// ## What it finds
    /// A call to a NumPy or SciPy function — element-wise math, reductions, sorting, FFT, linear
    /// algebra, random generation, signal or image filtering — that CuPy implements with the same name,
    /// on data that is not evidently small. Calls on arrays known to hold fewer elements than
    /// `min-elements` (10,000 by default) are left alone, and so are element-wise calls and reductions
    /// on data that Python builds one element at a time (a list comprehension): building it costs more
    /// than the call.
    ///
    /// ## Why
    /// CuPy runs these functions on the GPU through NVIDIA's tuned libraries (cuBLAS, cuFFT, cuSOLVER,
    /// cuRAND, cuSPARSE). On millions of elements that is typically 10-100x faster than NumPy. The cost
    /// is moving data over PCIe, so move inputs to the GPU once, chain the work there, and bring only
    /// results back. On small arrays the launch overhead makes the GPU slower.
    ///
    /// ## Example
    /// ```python
    /// import numpy as np
    ///
    /// signal = np.random.rand(10_000_000)
    /// spectrum = np.fft.fft(signal)
    /// ordered = np.sort(spectrum.real)
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// import cupy as cp
    ///
    /// signal = cp.random.rand(10_000_000)
    /// spectrum = cp.fft.fft(signal)
    /// ordered = cp.sort(spectrum.real)
    /// result = cp.asnumpy(ordered)  # back to the CPU once
    /// ```
    pub(crate) static CUPY001: Rule {
        name: "numpy-on-cupy",
        library: "cupy",
        severity: Severity::Hint,
        summary: "NumPy/SciPy array work that CuPy runs on the GPU",
        kind: Kind::Advice,
        in_tests: false,
        callers: Callers::ArrayWork,
        fix: true,
    }
}

declare_rule! {
    /// ## What it finds
    /// `scipy.sparse.linalg.eigsh` without shift-invert (`sigma`), which pylibraft's Lanczos solver
    /// implements for CSR matrices of float32/float64.
    ///
    /// ## Why
    /// Sparse eigenproblems (spectral clustering, graph partitioning) spend their time in sparse
    /// matrix-vector products, which the GPU runs far faster. Move the matrix once with
    /// `cupyx.scipy.sparse.csr_matrix` and call pylibraft's `eigsh`.
    ///
    /// ## Example
    /// ```python
    /// from scipy.sparse.linalg import eigsh
    ///
    /// values, vectors = eigsh(A, k=10, which="LM")
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// import cupyx.scipy.sparse as gpu_sparse
    /// from pylibraft.sparse.linalg import eigsh
    ///
    /// values, vectors = eigsh(gpu_sparse.csr_matrix(A), k=10, which="LM")
    /// ```
    pub(crate) static RAFT001: Rule {
        name: "eigsh-on-raft",
        library: "raft",
        severity: Severity::Hint,
        summary: "SciPy sparse eigensolver that pylibraft runs on the GPU",
        kind: Kind::Advice,
        in_tests: false,
        callers: Callers::ArrayWork,
        fix: true,
    }
}

/// How the details of a call reported for its own heavy work say so; hotness
/// (`crate::hot`) points a caller's loop at such a call first.
pub(crate) const HEAVY_WORK: &str = "Its work per element is heavy";

/// Array operations in one function from which the data is worth keeping on the GPU.
pub(crate) const CHAIN: u32 = 3;

/// Whether a call of `api` is reported only as part of a chain of at least
/// [`CHAIN`] statements with array operations in one function, or in a loop
/// (see `block_read_in_loop`): a CuPy candidate whose work per element is
/// light. (The pre-scan counts them.)
pub(crate) fn light_array_operation(api: &gpulens_knowledge::ApiMapping) -> bool {
    matches!(api.library.as_str(), "cupy" | "raft") && matches!(api.kind, ApiKind::Compute | ApiKind::Generate) && !api.heavy
}

/// The call's data, if it is a candidate at all: a CuPy/RAFT equivalent
/// exists, no documented fallback applies, it is not a check, and its data
/// is not evidently small.
pub(super) fn candidate(call: &Call<'_, '_>) -> Option<Value> {
    let api = call.api;
    if api.support == Support::Missing || api.gpu.is_none() || call.site.in_check {
        return None;
    }
    if !call.matched_fallbacks().is_empty() {
        // No GPU equivalent for this call as written: promising one would be wrong.
        return None;
    }
    // CuPy runs kernels, not Python functions (`generic_filter(img, func)`).
    if context::takes_python_callable(call.cx, call.site.node) {
        return None;
    }
    // Python that pandas calls once per group or row: the apply is what to advise.
    if super::per_piece::in_per_piece_callable(call.cx, call.site.node) {
        return None;
    }
    let module = call.cx.module;
    // `int(np.ceil(n / k))`: element-wise math on numbers.
    if api.elementwise && context::converted_to_a_number(module, call.site.node) {
        return None;
    }
    if context::only_checked(module, call.site.node) {
        return None;
    }
    if module.any_arg_on_device(call.site.node, call.site.scope) {
        return None; // already GPU data: GPU007's business
    }
    let value = match api.kind {
        ApiKind::Compute => module.input_value(call.site.node, call.site.scope, 0),
        ApiKind::Generate => {
            Value::Array(api.size.as_ref().and_then(|s| module.size_of_call(call.site.node, s, call.site.scope, 0)))
        }
        _ => return None,
    };
    if value.elements().is_none() && (looks_small(call) || written_into_small(call) || one_item_per_call(call) || model_state(call) || counts_of_bins(call)) {
        return None;
    }
    if made_by_python(call) || holds_python_objects(call) {
        return None;
    }
    (!call.is_small(value)).then_some(value)
}

/// An element-wise call or a reduction whose data Python builds one
/// element at a time (`np.cbrt([w(j, k) for k in nbrs]).sum()`, or a name
/// assigned such a list): the building costs far more per element than the
/// call, so the GPU would speed up the cheap part only. Rows picked by such
/// an index (`pos[np.fromiter(p[0] for p in pairs)]`) are as many as Python
/// built, and arithmetic or a comparison of built data (and numbers) is too.
fn made_by_python(call: &Call<'_, '_>) -> bool {
    if !(call.api.elementwise || call.api.reduction) {
        return false;
    }
    let module = call.cx.module;
    let scope = call.site.scope;
    fn built(module: &Module<'_>, n: Node<'_>, scope: usize, depth: u32) -> bool {
        if depth > 8 {
            return false;
        }
        match n.kind_name() {
            // One element per pass, unless each pass makes an array with
            // NumPy (`[np.dot(w, e) for e in epochs]`): then Python builds
            // rows, and NumPy their elements.
            "list_comprehension" | "generator_expression" | "set_comprehension" => {
                let element = n.named_child(0).filter(|b| b.kind_name() == "call");
                let rows = element.and_then(|c| c.field("function")).and_then(|f| module.qualified_name(f)).is_some_and(|name| {
                    name.starts_with("numpy.") && crate::Knowledge::get().api(&name).is_some_and(|api| !api.reduction)
                });
                !rows
            }
            "parenthesized_expression" => n.named_child(0).is_some_and(|i| built(module, i, scope, depth + 1)),
            // `pos[index]`: as many rows as a built index picks.
            "subscript" => {
                let mut cursor = n.walk();
                let picks: Vec<Node<'_>> = n.children_by_field_name("subscript", &mut cursor).collect();
                n.field("value").is_some_and(|v| built(module, v, scope, depth + 1))
                    || matches!(picks.as_slice(), [index] if built(module, *index, scope, depth + 1))
            }
            // `a > b`, `a * 2`: every operand that is not a number is built.
            "binary_operator" | "comparison_operator" => {
                let mut cursor = n.walk();
                // (A number is written out or a name holding one: a call's
                // value may be read as a number where its axis makes it rows.)
                let number = |o: Node<'_>| match o.kind_name() {
                    "integer" | "float" => true,
                    "identifier" | "attribute" => matches!(module.value(o, scope), Value::Int(_) | Value::Scalar),
                    _ => false,
                };
                let operands: Vec<Node<'_>> = n.named_children(&mut cursor).filter(|o| o.kind_name() != "comment" && !number(*o)).collect();
                !operands.is_empty() && operands.iter().all(|o| built(module, *o, scope, depth + 1))
            }
            "identifier" => module.assigned_from(n, scope).is_some_and(|v| built(module, v, scope, depth + 1)),
            // Through a conversion or another element-wise call
            // (`np.array([...])`, `np.cbrt([...])`): the same elements; through
            // a reduction (`np.sum(rows, 1)`), as many or fewer.
            "call" => {
                let keeps = n.field("function").and_then(|f| module.qualified_name(f)).is_some_and(|name| {
                    matches!(name.as_str(), "numpy.array" | "numpy.asarray" | "numpy.fromiter")
                        || crate::Knowledge::get().api(&name).is_some_and(|api| api.elementwise || api.reduction)
                });
                keeps && module.positional(n).first().is_some_and(|a| built(module, *a, scope, depth + 1))
            }
            _ => false,
        }
    }
    let node = call.site.node;
    let data = module.mirror_receiver(node).or_else(|| module.positional(node).first().copied());
    data.is_some_and(|d| built(module, d, scope, 0))
}

/// The call's data is an array of Python objects (`np.array(rows,
/// dtype=object)`, `.astype(object)`), or a part, an element-wise result or
/// arithmetic of one: CuPy has no object dtype (`cupy.asarray` of one
/// raises), so that work has no GPU equivalent as written.
fn holds_python_objects(call: &Call<'_, '_>) -> bool {
    let module = call.cx.module;
    let scope = call.site.scope;
    fn object_dtype(module: &Module<'_>, call: Node<'_>) -> bool {
        let dtype = module.keyword(call, "dtype").or_else(|| {
            // `.astype(object)`: its first argument.
            let method = call.field("function").filter(|f| f.kind_name() == "attribute").and_then(|f| f.field("attribute"));
            method.filter(|m| module.text_of(*m) == "astype").and_then(|_| module.positional(call).first().copied())
        });
        dtype.is_some_and(|d| {
            matches!(module.text_of(d), "object" | "\"O\"" | "'O'" | "\"object\"" | "'object'")
                || module.qualified_name(d).as_deref() == Some("numpy.object_")
        })
    }
    fn objects(module: &Module<'_>, n: Node<'_>, scope: usize, depth: u32) -> bool {
        if depth > 6 {
            return false;
        }
        match n.kind_name() {
            "parenthesized_expression" => n.named_child(0).is_some_and(|i| objects(module, i, scope, depth + 1)),
            "subscript" => n.field("value").is_some_and(|v| objects(module, v, scope, depth + 1)),
            "binary_operator" => {
                [n.field("left"), n.field("right")].into_iter().flatten().any(|o| objects(module, o, scope, depth + 1))
            }
            "identifier" => module.assigned_from(n, scope).is_some_and(|v| objects(module, v, scope, depth + 1)),
            // `self.sims` set earlier in the same method (`self.sims = table[:, 0]`).
            "attribute" if n.field("object").is_some_and(|o| module.text_of(o) == "self") => {
                let Some(function) = module.enclosing_function(n) else { return false };
                let text = module.text_of(n);
                let stored = module
                    .preorder(function)
                    .filter(|a| a.kind_name() == "assignment" && a.end_byte() <= n.start_byte())
                    .filter(|a| a.field("left").is_some_and(|l| module.text_of(l) == text))
                    .last()
                    .and_then(|a| a.field("right"));
                stored.is_some_and(|v| objects(module, v, scope, depth + 1))
            }
            "call" => {
                if object_dtype(module, n) {
                    return true;
                }
                // An element-wise call or a reduction of such an array gives Python objects too.
                let keeps = n.field("function").and_then(|f| module.qualified_name(f)).is_some_and(|name| {
                    crate::Knowledge::get().api(&name).is_some_and(|api| api.elementwise || api.reduction)
                });
                keeps && module.positional(n).first().is_some_and(|a| objects(module, *a, scope, depth + 1))
            }
            _ => false,
        }
    }
    let node = call.site.node;
    let data = module.mirror_receiver(node).or_else(|| module.positional(node).first().copied());
    data.is_some_and(|d| objects(module, d, scope, 0))
}

/// A product that is light work whatever the size: an array with itself
/// (`np.dot(r, r)`: a sum of squares, one pass) or a Kronecker product with
/// an array of ones (`np.kron(np.ones((1, n)), col)`: a tile, a copy).
fn light_product(call: &Call<'_, '_>) -> bool {
    let module = call.cx.module;
    let node = call.site.node;
    let (Some(a), Some(b)) = (module.argument(node, "a", 0), module.argument(node, "b", 1)) else { return false };
    // A product with a matrix of a few elements (a 4x4 transform) does a
    // few multiply-adds per element of the other operand: element-wise work.
    let tiny = |x: gpulens_syntax::Node<'_>| matches!(module.value(x, call.site.scope), Value::Array(Some(n)) if (2..=16).contains(&n));
    // A product with a vector (`np.dot(m, np.cos(t))`, `t` a grid of
    // points) is one multiply-add per element of the matrix.
    // `np.diag(v)` is a vector or a diagonal matrix: a product with either
    // is one multiply-add per element of the other operand.
    let vector = |x: gpulens_syntax::Node<'_>| {
        module.one_dimensional(x, call.site.scope)
            || (x.kind_name() == "call"
                && x.field("function").and_then(|f| module.qualified_name(f)).as_deref() == Some("numpy.diag"))
    };
    // The scatter matrix of points with a few columns (`np.dot(x.T, x)`
    // for (n, 3) points): as many multiply-adds per element as columns.
    let scatter = || module.gram_columns(a, b, call.site.scope).is_some_and(|k| k <= 16);
    // A product with the model's own state (`self.P = np.eye(dim_x)`, see
    // `Module::model_sized`) does as many multiply-adds per element of the
    // other operand as the state has rows: a count the user writes, small
    // unless a default says otherwise (`dimensions=128`).
    let state = |x: gpulens_syntax::Node<'_>| module.model_dimension(&[x], call.site.scope).is_some_and(|d| d <= 16);
    if matches!(call.name.as_str(), "numpy.dot" | "numpy.matmul" | "numpy.inner")
        && (tiny(a)
            || state(a)
            || state(b)
            || tiny(b)
            || vector(a)
            || vector(b)
            || context::one_row(module, a)
            || (call.name != "numpy.inner" && scatter())
            || returned_as_vector(module, node))
    {
        return true;
    }
    match call.name.as_str() {
        "numpy.dot" | "numpy.inner" | "numpy.vdot" => module.compact_text(a) == module.compact_text(b),
        "numpy.kron" => [a, b].iter().any(|x| {
            x.kind_name() == "call"
                && x.field("function").and_then(|f| module.qualified_name(f)).as_deref() == Some("numpy.ones")
        }),
        _ => false,
    }
}

/// The product is what its function returns (alone or in arithmetic:
/// `X @ coef + intercept`), and the function documents that result as
/// one-dimensional (`Returns: array of shape (n_samples,)`): a product
/// with a one-dimensional result is a matrix times a vector.
fn returned_as_vector(module: &Module<'_>, node: Node<'_>) -> bool {
    let mut current = node;
    while let Some(parent) = module.parent(current) {
        match parent.kind_name() {
            "parenthesized_expression" => current = parent,
            "binary_operator"
                if parent.field("operator").is_some_and(|o| matches!(module.text_of(o), "+" | "-" | "*" | "/")) =>
            {
                current = parent
            }
            "return_statement" => {
                return module
                    .enclosing_function(parent)
                    .and_then(|f| module.docstring(f))
                    .is_some_and(crate::semantic::returns_vector);
            }
            _ => return false,
        }
    }
    false
}

/// The call's data (its positional arguments: a product's operands, a
/// mirrored method's array) is one item of a collection that the function's
/// callers walk, one call per item (see
/// [`crate::semantic::Module::one_item_per_call`]): what would pay off on
/// the GPU is the items batched, not this call.
fn one_item_per_call(call: &Call<'_, '_>) -> bool {
    let module = call.cx.module;
    module.one_item_per_call(&module.positional(call.site.node), call.site.scope)
}

/// The call works on a histogram's counts, binned by a number the code
/// gives (see `Module::counts_of_bins`): as many elements as bins.
fn counts_of_bins(call: &Call<'_, '_>) -> bool {
    let module = call.cx.module;
    module.counts_of_bins(&module.positional(call.site.node), call.site.scope)
}

/// Every array the call works on is the state of the instance, built by its
/// class from the numbers its constructor takes (`self.P = np.eye(dim_x)`;
/// see `Module::model_sized`): sized by a count of variables, not by data.
fn model_state(call: &Call<'_, '_>) -> bool {
    let module = call.cx.module;
    module.model_sized(&module.positional(call.site.node), call.site.scope)
}

/// Nothing gives the data's size, but the code around the call says it is a
/// small fixed-size structure: geometry (rotations, affine maps), or an
/// argument whose shape is checked against a few elements or whose
/// components are picked out one by one.
fn looks_small(call: &Call<'_, '_>) -> bool {
    let cx = call.cx;
    let node = call.site.node;
    if context::in_geometry(cx, node)
        || context::result_to_python(cx, node, call.api.elementwise || call.api.kind == ApiKind::Generate)
        || context::in_recurrence(cx, node, call.site.scope)
        || context::in_scalar_function(cx, node)
        || (call.api.elementwise && context::in_conversion(cx, node))
    {
        return true;
    }
    // (A transform named among the arguments says the data is small only
    // where it is the data: the first operand, or either factor of a
    // product. `affine_transform(image, matrix, offset)` works on the image.)
    let product = crate::semantic::matmul_operands(node).is_some()
        || matches!(call.name.as_str(), "numpy.dot" | "numpy.matmul" | "numpy.inner" | "numpy.vdot" | "numpy.tensordot" | "numpy.kron" | "numpy.outer");
    call.cx.module.positional(node).into_iter().enumerate().any(|(i, arg)| {
        determinant_taken(call, arg)
            || context::small_structure(cx, node, arg)
            || ((i == 0 || (product && i == 1)) && context::names_a_transform(cx, arg))
            || context::small_matrix(cx, node, call.site.scope, arg)
    })
}

/// For each candidate call (by node id), the length of the chain it is part
/// of: the statements of its function that hold a candidate, work on the
/// same data as it (directly or through each other: one reads what another
/// reads or makes) and can run in the same pass as it. Data that stays on
/// the GPU between operations is what a chain saves copies of; operations
/// on unrelated arrays save none. Operations in one statement
/// (`np.where(x >= 0, np.floor(x), np.ceil(x))`) are one pass over the data, and
/// operations in branches of an `if` that exclude each other never run
/// together.
pub(super) fn chains<'t>(
    module: &Module<'t>,
    in_scope: &HashMap<usize, Vec<Node<'t>>>,
    heavy: &rustc_hash::FxHashSet<usize>,
    summaries: &rustc_hash::FxHashSet<usize>,
) -> HashMap<usize, Chain<'t>> {
    let mut out = HashMap::default();
    for (&scope, calls) in in_scope {
        let statements: Vec<Node<'_>> = calls.iter().map(|c| statement_of(module, *c)).collect();
        // Past a few dozen candidates, every statement counts: the chain is
        // long anyway (and comparing each pair would be quadratic).
        if calls.len() > 64 {
            let distinct = calls.iter().zip(&statements).filter(|(c, _)| !summaries.contains(&c.id())).map(|(_, s)| s.id()).collect::<std::collections::HashSet<_>>().len() as u32;
            out.extend(calls.iter().map(|c| (c.id(), Chain { statements: distinct, heavy: None })));
            continue;
        }
        // Statements joined by the data they share (union-find over calls).
        let names: Vec<Vec<&str>> = calls.iter().zip(&statements).map(|(c, s)| data_names(module, scope, *s, *c)).collect();
        let mut group: Vec<usize> = (0..calls.len()).collect();
        fn root(group: &mut [usize], mut i: usize) -> usize {
            while group[i] != i {
                group[i] = group[group[i]];
                i = group[i];
            }
            i
        }
        for i in 0..calls.len() {
            for j in i + 1..calls.len() {
                let shared = statements[i].id() == statements[j].id() || names[i].iter().any(|n| names[j].contains(n));
                if shared {
                    let (a, b) = (root(&mut group, i), root(&mut group, j));
                    group[a] = b;
                }
            }
        }
        for (i, call) in calls.iter().enumerate() {
            let mine = root(&mut group, i);
            let mut seen: Vec<usize> = Vec::new();
            let mut partner = None;
            for (j, other) in calls.iter().enumerate() {
                // (A statistic for Python makes no chain: see `summary`.)
                if root(&mut group, j) != mine
                    || seen.contains(&statements[j].id())
                    || summaries.contains(&other.id())
                    || (i != j && exclusive(module, *call, *other))
                {
                    continue;
                }
                seen.push(statements[j].id());
                // (In another statement: one statement is one pass, its heavy
                // call's own hint.)
                if statements[j].id() != statements[i].id() && partner.is_none() && heavy.contains(&other.id()) {
                    partner = Some(*other);
                }
            }
            // (A statement holding a heavy call is that call's one pass.)
            let own_heavy = calls.iter().enumerate().any(|(j, o)| j != i && statements[j].id() == statements[i].id() && heavy.contains(&o.id()));
            let partner = partner.filter(|_| !own_heavy);
            out.insert(call.id(), Chain { statements: seen.len() as u32, heavy: partner });
        }
    }
    out
}

/// The chain a candidate call is part of (see [`chains`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Chain<'t> {
    /// How many statements it spans.
    pub(super) statements: u32,
    /// A call in it, other than this one, whose work per element is heavy
    /// (reported on its own: its data moves to the GPU anyway).
    pub(super) heavy: Option<Node<'t>>,
}

/// Whether the call's work per element is heavy enough to pay for the
/// copies on its own (a product with a vector or a tiny matrix is not).
pub(super) fn heavy(call: &Call<'_, '_>) -> bool {
    call.api.heavy && !light_product(call)
}

/// A reduction whose number the code takes into Python (`'q25':
/// float(np.percentile(scores, 25))`, `int(mask.sum())`; see
/// `context::statistic_for_python`): a statistic read off the data once,
/// for a report, a threshold or a count. Not worth a copy to the GPU on
/// its own, however heavy the reduction, nor a chain with other such
/// statistics, and never heavy. It is not reported; where other array work
/// keeps the data on the GPU, it links that work's statements as any
/// candidate does. (Decided once per call, in `rules::run`.)
pub(super) fn summary(call: &Call<'_, '_>) -> bool {
    call.api.reduction && context::statistic_for_python(call.cx.module, call.site.node, call.site.scope)
}

/// The data a candidate call works on: the names it reads (its arguments,
/// a mirrored method's array) and those its statement assigns, leaving out
/// modules, numbers, keywords' and attributes' names; and the names those
/// were computed from (`d = A.sum(axis=0)` is `A`'s data), a few
/// assignments back.
fn data_names<'t>(module: &Module<'t>, scope: usize, statement: Node<'t>, call: Node<'t>) -> Vec<&'t str> {
    let mut names: Vec<&'t str> = Vec::new();
    let mut roots: Vec<(Node<'t>, u32)> = Vec::new();
    if let Some(arguments) = call.field("arguments") {
        roots.push((arguments, 0));
    }
    if let Some(receiver) = module.mirror_receiver(call) {
        roots.push((receiver, 0));
    }
    roots.extend(crate::semantic::matmul_operands(call).into_iter().flatten().map(|o| (o, 0)));
    // What the statement assigns (`y = np.fft.fft(x)` makes `y`).
    let assignment = statement.named_child(0).filter(|a| matches!(a.kind_name(), "assignment" | "augmented_assignment"));
    if let Some(left) = assignment.and_then(|a| a.field("left")) {
        roots.push((left, 3));
    }
    while let Some((root, back)) = roots.pop() {
        for n in module.preorder(root).filter(|n| n.kind_name() == "identifier") {
            let label = module.parent(n).is_some_and(|p| gpulens_syntax::is_label(p, n));
            let name = module.text_of(n);
            if label || names.contains(&name) || module.import_at(name, n.start_byte()).is_some() {
                continue;
            }
            if matches!(module.value(n, scope), Value::Int(_) | Value::Scalar) {
                continue;
            }
            names.push(name);
            if back < 3 {
                if let Some(rhs) = module.assigned_from(n, scope) {
                    roots.push((rhs, back + 1));
                }
            }
        }
    }
    names
}

/// The statement holding `node`: its ancestor that sits directly in a block
/// (or the module).
pub(super) fn statement_of<'t>(module: &Module<'t>, node: Node<'t>) -> Node<'t> {
    let mut current = node;
    while let Some(parent) = module.parent(current) {
        if matches!(parent.kind_name(), "block" | "module") {
            return current;
        }
        current = parent;
    }
    current
}

/// `a` and `b` sit in branches of one `if` that exclude each other (its body
/// and an `elif` or `else`, or two `elif`s).
fn exclusive<'t>(module: &Module<'t>, a: Node<'t>, b: Node<'t>) -> bool {
    // (the `if`, the branch holding `a`) for every `if` around `a`.
    let mut branches: Vec<(usize, usize)> = Vec::new();
    let mut current = a;
    while let Some(parent) = module.parent(current) {
        if parent.kind_name() == "if_statement" && parent.field("condition") != Some(current) {
            branches.push((parent.id(), current.id()));
        }
        if matches!(parent.kind_name(), "function_definition" | "class_definition") {
            break;
        }
        current = parent;
    }
    let mut current = b;
    while let Some(parent) = module.parent(current) {
        if parent.kind_name() == "if_statement" && parent.field("condition") != Some(current)
            && branches.iter().any(|(i, branch)| *i == parent.id() && *branch != current.id()) {
                return true;
            }
        if matches!(parent.kind_name(), "function_definition" | "class_definition") {
            break;
        }
        current = parent;
    }
    false
}

/// The function takes the determinant of `arg` elsewhere: determinants are
/// taken of small matrices (a large one over- or underflows, and code
/// wanting it takes `slogdet`), so `arg` is one.
fn determinant_taken(call: &Call<'_, '_>, arg: gpulens_syntax::Node<'_>) -> bool {
    let module = call.cx.module;
    let Some(function) = context::function_of(module, call.site.node) else { return false };
    if !module.answer_once(function, "mentions det", || module.text_of(function).contains("det(")) {
        return false;
    }
    let text = module.text_of(arg);
    module.preorder(function).filter(|c| c.kind_name() == "call" && c.id() != call.site.node.id()).any(|c| {
        module.argument(c, "a", 0).is_some_and(|a| module.text_of(a) == text)
            && module
                .resolve_call_in(c, call.site.scope)
                .is_some_and(|(name, _)| matches!(name.as_str(), "numpy.linalg.det" | "scipy.linalg.det"))
    })
}

/// The call's result is the whole right-hand side of a write into an array
/// of known small size (`curve[x >= lo] = np.exp(-x[x >= lo])` for a
/// 300-point `curve`): an element-wise operation's input is no larger than
/// what it writes.
fn written_into_small(call: &Call<'_, '_>) -> bool {
    let module = call.cx.module;
    let node = call.site.node;
    if module.keyword(node, "axis").is_some() || call.api.reduction {
        return false;
    }
    // The call, alone or in arithmetic (`m[:3, :3] += np.outer(d, d) * (1 - c)`),
    // is what the assignment writes.
    let mut current = node;
    let parent = loop {
        let Some(parent) = module.parent(current) else { return false };
        match parent.kind_name() {
            "parenthesized_expression" | "binary_operator" | "unary_operator" => current = parent,
            "assignment" | "augmented_assignment" if parent.field("right") == Some(current) => break parent,
            _ => return false,
        }
    };
    let Some(target) = parent.field("left").filter(|l| l.kind_name() == "subscript") else { return false };
    let Some(array) = target.field("value") else { return false };
    // One element of a vector (`out[i] = np.sin(i * dx)`): one number.
    let indices: Vec<Node<'_>> = target.children_by_field_name("subscript", &mut target.walk()).collect();
    if let [index] = indices.as_slice() {
        if matches!(module.value(*index, call.site.scope), Value::Int(_) | Value::Scalar) && module.one_dimensional(array, call.site.scope) {
            return true;
        }
    }
    // The block written (`m[:3, :3]`: nine elements), else the whole array.
    let small = |v: Value| matches!(v, Value::Array(Some(_))) && call.is_small(v);
    small(module.value(target, call.site.scope)) || small(module.value(array, call.site.scope))
}

/// `value`: what [`candidate`] said of the call; `summaries`: the
/// candidates that are statistics for Python (see [`summary`]).
pub(super) fn check(
    call: &Call<'_, '_>,
    value: Option<Value>,
    chains: &HashMap<usize, Chain<'_>>,
    summaries: &rustc_hash::FxHashSet<usize>,
    out: &mut Vec<Finding>,
) {
    let Some(value) = value else { return };
    // (The rest of a chain holding it is reported; the statistic itself is
    // the result taken back to Python.)
    if summaries.contains(&call.site.node.id()) {
        return;
    }
    let api = call.api;
    let found = chains.get(&call.site.node.id()).copied();
    let chain = found.map_or(0, |c| c.statements);
    let heavy = heavy(call);
    let repeated = if !heavy && chain < CHAIN { block_read_in_loop(call) } else { None };
    // A cheap operation on the data of a heavy one (which goes to the GPU on
    // its own hint): kept there too, it costs no copy in.
    let with_heavy = if !heavy && chain < CHAIN && repeated.is_none() { found.and_then(|c| c.heavy) } else { None };
    if !heavy && chain < CHAIN && repeated.is_none() && with_heavy.is_none() {
        return;
    }
    let gpu = api.gpu.as_deref().unwrap_or_default();
    let lib = call.library();
    let why = if heavy {
        format!(
            " {HEAVY_WORK}, so the GPU pays off even counting the copy there and back.{}",
            fp64_phrase(call.cx)
        )
    } else if let Some(partner) = with_heavy {
        // (A product written `a @ b` has no callee: the operator names it.)
        let partner = partner.field("function").map_or("@", |f| call.cx.module.text_of(f));
        format!(
            " It works on the same data as `{partner}`, whose work is heavy enough to move to the GPU on its own: kept \
             there with it, this needs no copy of its own (one cheap operation alone would lose to the copies)."
        )
    } else if let Some((array, whole)) = repeated {
        let over = if whole {
            format!("over all of the same array (`{array}`, against one of its rows: the passes together cover every pair of rows)")
        } else {
            format!("over a block of the same array (`{array}`)")
        };
        format!(
            " It runs on every pass of the loop around it, each time {over}: moved once, before the loop, that array \
             stays on the GPU across the passes (one cheap operation alone would lose to the copies)."
        )
    } else {
        format!(
            " This code runs array operations in {chain} statements; moved together, the data stays on the GPU between them \
             (one cheap operation alone would lose to the copies)."
        )
    };
    let note = api.note.as_deref().map(|n| format!(" Note: {n}")).unwrap_or_default();
    let (code, how) = if api.library == "raft" {
        (Code::RAFT001, " Convert the matrix once with `cupyx.scipy.sparse.csr_matrix(A)` and pass that.")
    } else {
        (
            Code::CUPY001,
            " Move the inputs to the GPU once (`cp.asarray`), keep the work there, and copy the result back once \
             (`cp.asnumpy`).",
        )
    };
    let short = call.name.strip_prefix("numpy.").unwrap_or("");
    let matrix = matches!(short, "matmul" | "dot" | "tensordot" | "einsum" | "inner" | "outer" | "vdot")
        || short.starts_with("linalg.");
    let tuned = format!(
        "{}{}{}",
        if matrix { tensor_core_phrase(call.cx) } else { String::new() },
        scale_out_phrase(call.cx, &api.library, value.elements().map(|n| n.saturating_mul(8))),
        estimate_phrase(call.cx, &api.library),
    );
    let callee = call.callee_text();
    out.push(call.finding(
        code,
        // (A long GPU name is left to the details.)
        match format!("`{}`{}: {} runs it on the GPU", short_callee(callee), size_on(value, "elements"), lib.name) {
            m if m.chars().count() + gpu.chars().count() > 95 => m,
            m => format!("{m} (`{gpu}`)"),
        },
        join([
            format!("`{callee}` ({}) runs on the CPU; {}'s `{gpu}` does the same on the GPU{}.", call.name, lib.name, size_phrase(value, "elements")),
            why,
            how.to_string(),
            loop_phrase(call.site).to_string(),
            note,
            tuned,
            format!("Install: {}.", install(call.cx, lib)),
        ]),
    ));
}

/// The call sits in a loop and reads a block over a whole axis
/// (`k[:, mask]`, `x[rows, :]`) of an array the loop does not bind: the same array is worked over on every
/// pass, so it can move to the GPU once and stay there. Its name, and
/// whether the pass reads all of it (`X - X[i]`: the whole array against
/// the loop's row of it).
fn block_read_in_loop<'t>(call: &Call<'_, 't>) -> Option<(&'t str, bool)> {
    let module = call.cx.module;
    let node = call.site.node;
    if call.site.loop_depth == 0 {
        return None;
    }
    let mut current = node.parent();
    let the_loop = loop {
        let n = current?;
        match n.kind_name() {
            "for_statement" | "while_statement" => break n,
            "function_definition" | "lambda" | "class_definition" => return None,
            _ => current = n.parent(),
        }
    };
    let args = node.field("arguments")?;
    let bound_in_loop = |name: &str| {
        let target = |t: Node<'_>| module.preorder(t).any(|i| i.kind_name() == "identifier" && module.text_of(i) == name);
        (the_loop.kind_name() == "for_statement" && the_loop.field("left").is_some_and(target))
            || module.preorder(the_loop).any(|n| {
                matches!(n.kind_name(), "assignment" | "augmented_assignment")
                    && n.field("left").is_some_and(|l| l.kind_name() != "subscript" && target(l))
            })
    };
    // The whole array against one of its rows picked by the loop
    // (`X - X[i]`): each pass works over all of `X`, and the passes
    // together over all pairs of its rows.
    let loop_vars: Vec<&str> = match the_loop.kind_name() {
        "for_statement" => the_loop
            .field("left")
            .map(|l| module.preorder(l).filter(|i| i.kind_name() == "identifier").map(|i| module.text_of(i)).collect())
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let row_of = |n: Node<'t>, name: &str| {
        n.kind_name() == "subscript"
            && n.field("value").is_some_and(|v| v.kind_name() == "identifier" && module.text_of(v) == name)
            && {
                let mut cursor = n.walk();
                let picks: Vec<Node<'t>> = n.children_by_field_name("subscript", &mut cursor).collect();
                picks.first().is_some_and(|i| i.kind_name() == "identifier" && loop_vars.contains(&module.text_of(*i)))
            }
    };
    let against_row = module.preorder(args).find_map(|n| {
        if n.kind_name() != "binary_operator" || !n.field("operator").is_some_and(|o| matches!(module.text_of(o), "-" | "+" | "*" | "/")) {
            return None;
        }
        let (a, b) = (n.field("left")?, n.field("right")?);
        [(a, b), (b, a)].into_iter().find_map(|(whole, row)| {
            (whole.kind_name() == "identifier"
                && !bound_in_loop(module.text_of(whole))
                && row_of(row, module.text_of(whole))
                && matches!(module.value(whole, call.site.scope), crate::semantic::Value::Array(_)))
            .then(|| module.text_of(whole))
        })
    });
    if let Some(whole) = against_row {
        return Some((whole, true));
    }
    let found = module.preorder(args).find(|n| {
        n.kind_name() == "subscript"
            && n.field("value").is_some_and(|v| v.kind_name() == "identifier")
            // A whole axis (`k[:, mask]`): a window (`x[lo:hi]`) moving with
            // the loop is a small piece each pass.
            && {
                let mut cursor = n.walk();
                let whole_axis = n.children_by_field_name("subscript", &mut cursor).any(|i| {
                    i.kind_name() == "slice" && module.text_of(i).chars().all(|c| c == ':' || c.is_whitespace())
                });
                whole_axis
            }
            && {
                let v = n.field("value").expect("checked");
                let name = module.text_of(v);
                !bound_in_loop(name) && !matches!(module.value(v, call.site.scope), crate::semantic::Value::Scalar | crate::semantic::Value::Int(_))
            }
    })?;
    found.field("value").map(|v| (module.text_of(v), false))
}
