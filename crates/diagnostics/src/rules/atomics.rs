//! GPU011: every thread of a Numba CUDA kernel updating one array element
//! with an atomic (`cuda.atomic.add(total, 0, x[i])`).

use gpulens_syntax::{Node, NodeExt};

use super::finding;
use crate::registry::{declare_rule, Callers, Kind};
use crate::{Code, Finding, Module, Severity};

declare_rule! {
    /// ## What it finds
    /// In a Numba CUDA kernel, a `cuda.atomic` update (`add`, `sub`, `max`, `min`, …) of one fixed
    /// element (`cuda.atomic.add(total, 0, x[i])`) made by every thread: the kernel is not a block
    /// reduction (no shared array, and the atomic is not limited to one thread of the block by an
    /// `if` on the thread index), and each thread handles one element or makes the update once per
    /// element of its loop.
    ///
    /// ## Why
    /// Atomic updates of the same address cannot happen at the same time: the memory system applies
    /// them one after another. The compiler may merge the updates of a warp into one, but all the
    /// warps of the grid still queue on that address, so the sum runs at the speed of one memory
    /// location rather than of the GPU. Adding up first per thread (a grid-stride loop into a local
    /// variable) or per block (a tree reduction in shared memory) leaves one atomic per thread or per
    /// block; for a plain sum of an array, CuPy's `cp.sum` does all of this already. A float32 total
    /// built one element at a time is also inexact: once it reaches 2^24 (16,777,216), adding values
    /// below 1 no longer changes it, which a tree of partial sums avoids.
    ///
    /// ## Example
    /// ```python
    /// from numba import cuda
    ///
    ///
    /// @cuda.jit
    /// def total(x, out):
    ///     i = cuda.grid(1)
    ///     if i < x.size:
    ///         cuda.atomic.add(out, 0, x[i])
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// from numba import cuda, float32
    ///
    ///
    /// @cuda.jit
    /// def total(x, out):
    ///     partial = cuda.shared.array(256, float32)
    ///     t = cuda.threadIdx.x
    ///     i = cuda.grid(1)
    ///     partial[t] = x[i] if i < x.size else 0.0
    ///     cuda.syncthreads()
    ///     step = 128
    ///     while step > 0:
    ///         if t < step:
    ///             partial[t] += partial[t + step]
    ///         cuda.syncthreads()
    ///         step //= 2
    ///     if t == 0:
    ///         cuda.atomic.add(out, 0, partial[0])  # one update per block
    /// ```
    pub(crate) static GPU011: Rule {
        name: "atomic-on-one-element",
        library: "numba",
        severity: Severity::Info,
        summary: "Every thread of a CUDA kernel updating the same element atomically",
        kind: Kind::GpuCode,
        in_tests: true,
        callers: Callers::Stay,
        fix: false,
    }
}

/// The atomic operations that read, combine and write one element.
const UPDATES: &[&str] = &["add", "sub", "max", "min", "nanmax", "nanmin", "inc", "dec", "and_", "or_", "xor"];

/// Checks the body of the kernel `name` (its `def`).
pub(super) fn check(module: &Module<'_>, def: Node<'_>, name: &str, out: &mut Vec<Finding>) {
    let Some(body) = def.field("body") else { return };
    let calls: Vec<Node<'_>> = module.preorder(body).filter(|n| n.kind_name() == "call").collect();
    // A block reduction (shared memory) has done the per-block work already.
    let callee = |call: Node<'_>| call.field("function").and_then(|f| module.qualified_name(f));
    let shares = calls.iter().any(|c| callee(*c).is_some_and(|q| q == "numba.cuda.shared.array"));
    if shares {
        return;
    }
    let has_loop = module.preorder(body).any(|n| matches!(n.kind_name(), "for_statement" | "while_statement"));
    for &call in &calls {
        let Some(operation) = callee(call).and_then(|q| q.strip_prefix("numba.cuda.atomic.").map(str::to_string)) else {
            continue;
        };
        if !UPDATES.contains(&operation.as_str()) {
            continue;
        }
        let Some(index) = module.first_positional(call).and_then(|array| array.next_named_sibling()) else { continue };
        if !is_fixed_index(module, index) {
            continue;
        }
        // In a loop, an update per element; without one, after a loop, an
        // update per thread of a grid-stride sum (the cheap kind).
        let above = ancestors_within(module, call, body);
        let in_loop = above.iter().any(|a| matches!(a.kind_name(), "for_statement" | "while_statement"));
        if has_loop && !in_loop {
            continue;
        }
        // Limited to one thread of a block (or of a warp): the last step of
        // a reduction done otherwise.
        let one_thread = above.iter().filter(|a| a.kind_name() == "if_statement").any(|a| {
            a.field("condition").is_some_and(|c| {
                let text = module.text_of(c);
                text.contains("threadIdx") || text.contains("laneid") || text.replace(' ', "").contains("==0")
            })
        });
        if one_thread {
            continue;
        }
        let array = module.first_positional(call).map_or("the array", |a| module.text_of(a));
        let element = module.text_of(index).trim_start_matches('(').trim_end_matches(')');
        let library_call = match operation.as_str() {
            "add" | "sub" => "a plain sum of an array is one `cp.sum` call",
            "max" | "nanmax" => "a plain maximum of an array is one `cp.max` call",
            "min" | "nanmin" => "a plain minimum of an array is one `cp.min` call",
            _ => "CuPy's reductions do this for whole arrays",
        };
        out.push(finding(
            call,
            Code::GPU011,
                format!("Every thread of `{name}` updates one element atomically: this runs one at a time"),
            format!(
                "Every thread of kernel `{name}` updates `{array}[{element}]` with `cuda.atomic.{operation}`: updates \
                 of one element queue one after another, so this runs at the speed of a single memory location. \
                 Combine per block in shared memory first (one atomic per block); {library_call}.",
            ),
        ));
    }
}

/// An integer literal, or a tuple of them: the same element for every thread.
fn is_fixed_index(module: &Module<'_>, index: Node<'_>) -> bool {
    match index.kind_name() {
        "integer" => true,
        "tuple" | "parenthesized_expression" => {
            let mut parts = module.preorder(index).skip(1).filter(|n| n.is_named());
            parts.all(|n| matches!(n.kind_name(), "integer" | "tuple" | "parenthesized_expression"))
        }
        _ => false,
    }
}

/// The ancestors of `node` below `top` (nearest first).
fn ancestors_within<'t>(module: &Module<'t>, node: Node<'t>, top: Node<'t>) -> Vec<Node<'t>> {
    std::iter::successors(module.parent(node), |n| module.parent(*n)).take_while(|n| n.id() != top.id()).collect()
}
