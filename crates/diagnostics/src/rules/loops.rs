//! Python loops over array indices: NUMBA001 (a kernel would run the
//! iterations in parallel), WARP001 (the same, for particle/body simulation
//! steps) and CUPY002 (a loop whose iterations depend on each other but that
//! one library call computes, such as a running sum).
//!
//! A loop is a kernel only when its iterations are independent: it writes
//! array elements at its own index, reads neighbours only of arrays it does
//! not write, calls nothing but math, and does no I/O or Python-object work.
//! What a loop's body does is read in `loop_body`; this module judges it.

use gpulens_syntax::NodeExt;
use gpulens_syntax::Node;

use super::idle_loops::{copies_only, over_axes};
use super::recurrences::carries_scalar;
use super::loop_body::{analyse, element, mentions, Shape};
use super::loop_headers::{enumerate_element, prange_loop, range_header, range_loop};

/// Calls a kernel can make (read by the pre-scan too).
pub(crate) use super::loop_body::allowed_call;
use super::{estimate_phrase, install, library, scale_out_phrase, thousands};
use crate::Code;
use crate::semantic::{LoopSite, Value};
use crate::{Context, Finding};
use crate::registry::{declare_rule, Callers, Kind};
use crate::Severity;

declare_rule! {
    /// ## What it finds
    /// A `for i in range(...)` loop whose iterations depend on each other in the way of a running sum
    /// or product (`acc[i] = acc[i-1] + x[i]`).
    ///
    /// ## Why
    /// Iterations that need the previous iteration's result cannot run in parallel, so this loop is not
    /// a GPU kernel. The computation is a prefix scan, though, which NumPy does in one call and CuPy
    /// does on the GPU with a parallel scan.
    ///
    /// ## Example
    /// ```python
    /// import numpy as np
    ///
    /// x = np.random.rand(1_000_000)
    /// acc = np.empty_like(x)
    /// acc[0] = x[0]
    /// for i in range(1, len(x)):
    ///     acc[i] = acc[i - 1] + x[i]
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// import numpy as np
    ///
    /// x = np.random.rand(1_000_000)
    /// acc = np.cumsum(x)   # cupy.cumsum on the GPU
    /// ```
    pub(crate) static CUPY002: Rule {
        name: "running-loop-is-a-library-call",
        library: "cupy",
        severity: Severity::Info,
        summary: "Loop with a running sum or product: not a kernel, but one cumsum/cumprod call",
        kind: Kind::Advice,
        in_tests: false,
        callers: Callers::Stay,
        fix: false,
    }
}

declare_rule! {
    /// ## What it finds
    /// A `for i in range(...)` loop (or a nest of them over rows and columns) whose body writes array
    /// elements at its own index, reads only what it may (neighbours of arrays it does not write), and
    /// calls nothing but math: element-wise maps, 2-D image loops, stencils and reductions. Loops whose
    /// iterations depend on each other (including a value one branch assigns and another path reads
    /// from the previous pass), do I/O, or work on Python objects are left alone, and so are loops that
    /// only copy (a constant, another array's element, the item they enumerate, a value the loop does
    /// not change), fill a dict, or run over an array's axes. A loop that only sums into numbers that
    /// each pass of a loop around it starts afresh is left alone too, unless the loops around it run a
    /// few passes or the sum is known to be large: as a kernel it would be launched, and its sum waited
    /// for, once per outer pass.
    ///
    /// ## Why
    /// A Python loop runs one iteration at a time at interpreter speed. Numba's CUDA target compiles
    /// the body into a kernel in which thousands of GPU threads each take one index, so the whole range
    /// runs in parallel. Each thread must check that its index is inside the array, because the grid is
    /// rounded up to whole blocks. New kernels are written for Numba-CUDA-MLIR (`from numba_cuda_mlir
    /// import cuda`): NVIDIA put numba-cuda (`from numba import cuda`) in maintenance mode and develops
    /// the same `@cuda.jit` programming model there. gpulens writes numba-cuda instead where
    /// Numba-CUDA-MLIR cannot run the kernel: a GPU below compute capability 7.0, a CUDA ufunc, or a
    /// file whose kernels already import numba-cuda (the new one stays beside them; moving the file is
    /// that one import changed). Numba-CUDA-MLIR needs Python 3.11 or newer.
    ///
    /// ## Example
    /// ```python
    /// import math
    ///
    /// import numpy as np
    ///
    /// x = np.linspace(0.0, 10.0, 2_000_000)
    /// out = np.empty_like(x)
    /// for i in range(len(x)):
    ///     out[i] = math.sin(x[i]) * math.exp(-x[i])
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// from numba_cuda_mlir import cuda
    ///
    /// @cuda.jit
    /// def kernel(x, out):
    ///     i = cuda.grid(1)
    ///     if i < x.size:
    ///         out[i] = math.sin(x[i]) * math.exp(-x[i])
    ///
    /// d_x = cuda.to_device(x)
    /// d_out = cuda.device_array_like(d_x)
    /// kernel[(x.size + 255) // 256, 256](d_x, d_out)
    /// out = d_out.copy_to_host()
    /// ```
    pub(crate) static NUMBA001: Rule {
        name: "index-loop-to-cuda-kernel",
        library: "numba",
        severity: Severity::Hint,
        summary: "Python loop over array indices with independent iterations: a CUDA kernel runs them in parallel",
        kind: Kind::Advice,
        in_tests: false,
        callers: Callers::Kernel,
        fix: true,
    }
}

declare_rule! {
    /// ## What it finds
    /// An index loop that updates positions, velocities or forces of many particles or bodies, usually
    /// scaled by a time step `dt`, one at a time.
    ///
    /// ## Why
    /// Each particle's update is independent within a step, so Warp can run all of them at once. Warp
    /// compiles `@wp.kernel` functions to CUDA and has vector, quaternion and transform types built in,
    /// plus spatial queries (hash grids, meshes, BVHs) for the neighbour searches simulations need.
    ///
    /// ## Example
    /// ```python
    /// import numpy as np
    ///
    ///
    /// def step(pos, vel, force, dt):
    ///     for i in range(len(pos)):
    ///         vel[i] += force[i] * dt
    ///         pos[i] += vel[i] * dt
    ///
    ///
    /// n = 100_000
    /// step(np.zeros((n, 3)), np.zeros((n, 3)), np.random.rand(n, 3), 0.01)
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// import warp as wp
    ///
    /// @wp.kernel
    /// def step(pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3),
    /// force: wp.array(dtype=wp.vec3), dt: float):
    ///     tid = wp.tid()
    ///     vel[tid] = vel[tid] + force[tid] * dt
    /// pos[tid] = pos[tid] + vel[tid] * dt
    ///
    /// wp.launch(step, dim=n, inputs=[pos, vel, force, dt], device="cuda")
    /// ```
    pub(crate) static WARP001: Rule {
        name: "simulation-loop-to-warp-kernel",
        library: "warp",
        severity: Severity::Hint,
        summary: "Particle or body update loop that a Warp kernel runs in parallel",
        kind: Kind::Advice,
        in_tests: false,
        callers: Callers::Kernel,
        fix: true,
    }
}

/// Names that mark a simulation step over particles or bodies.
const PHYSICS: &[&str] = &[
    "pos", "position", "positions", "vel", "velocity", "velocities", "force", "forces", "acc", "accel",
    "acceleration", "accelerations", "mass", "masses", "momentum",
];

/// The keywords that start a loop, and the iterators of an index loop
/// (`for i in range(n)`, `for i, x in enumerate(xs)`): where an array
/// library is imported, the pre-scan keeps code with both.
pub(crate) const LOOP_KEYWORDS: &[&str] = &["for", "while"];
pub(crate) const INDEX_ITERATORS: &[&str] = &["range", "enumerate"];

/// Libraries whose import means a module works with arrays: only then are
/// its index loops candidates. (The loop rules' own judgement of where a
/// loop may be a kernel, not an API fact.)
pub(crate) const ARRAY_MODULES: &[&str] = &["numpy", "scipy", "cupy", "numba", "numba_cuda_mlir", "warp"];

pub(super) fn check(cx: &Context<'_, '_>, out: &mut Vec<Finding>) {
    let module = cx.module;
    // Loops over Python lists are not GPU work: the code must use arrays.
    let uses_arrays = |offset: usize| {
        module.imports_at(offset).any(|(_, target)| {
            ARRAY_MODULES.iter().any(|m| target == *m || target.starts_with(&format!("{m}.")))
        })
    };
    // Loops that are already compiled for the GPU (inside kernels) are not
    // candidates. (Read when there is a loop to judge: a module's decorated
    // definitions are many, its walked loops often none.)
    let compiled = std::cell::OnceCell::new();
    let compiled = || -> &Vec<usize> {
        compiled.get_or_init(|| {
            if !module.mentions_gpu_library() {
                return Vec::new(); // no import can make a decorator Numba's or Warp's
            }
            module
                .decorated
                .iter()
                .filter(|d| {
                    module.decorators(**d).iter().any(|(_, target)| {
                        target.as_deref().is_some_and(|n| n.starts_with("numba.cuda.") || n.starts_with("warp."))
                    })
                })
                .filter_map(|d| d.field("definition").map(|f| f.id()))
                .collect()
        })
    };
    let mut folded: Vec<usize> = Vec::new();
    // The loops reported as kernels, whole: a loop inside one (the loops
    // come outermost first) is each thread's own, not another kernel.
    let mut kernels: Vec<std::ops::Range<usize>> = Vec::new();
    for site in &module.loops {
        let at = site.node.byte_range();
        if kernels.iter().any(|k| k.start <= at.start && at.end <= k.end) {
            continue;
        }
        if folded.contains(&site.node.id()) || compiled().contains(&site.scope) || !uses_arrays(site.node.start_byte()) {
            continue;
        }
        // A function pandas calls once per piece (`rolling(w).apply(stat)`)
        // loops over one window or group: the apply is what to advise.
        if super::per_piece::in_per_piece_callable(cx, site.node) {
            continue;
        }
        // In a function Numba compiles, every call is to compiled code,
        // tuples unpack to registers, and lists, strings and the loops over
        // them are typed and compiled too: no Python objects are left (see
        // [`analyse`]). A `prange` loop is one its author declared free of
        // dependences between iterations.
        let jit = super::context::cpu_jit_function(cx, site.node);
        let Some(shape) = analyse(cx, site, jit.is_some()) else { continue };
        let declared = jit.is_some() && prange_loop(module, site.node);
        if shape.blocker.is_some() {
            continue;
        }
        // Copying elements to the same places, or filling them with a
        // constant, computes nothing: a GPU would move the same memory
        // (`dst[mask] = src[mask]`, `np.copyto`), after copying it there.
        if copies_only(module, site.node) {
            continue;
        }
        let outer = shape.vars[0];
        // A loop over an array's axes runs a handful of passes (NumPy
        // allows at most 64 dimensions): no work for a kernel.
        if over_axes(module, site.node, outer) {
            continue;
        }
        let element = enumerate_element(module, site.node);
        // A loop that never uses its index (nor its element) repeats a step:
        // iterations of a solver or a filter, not work over array indices.
        if !shape.names.iter().any(|n| *n == outer || Some(*n) == element) {
            continue;
        }
        // An accumulator is bound outside the loop: a name the body binds
        // afresh, or the element itself (`out *= w` on each array of a
        // list), is updated within one pass.
        // A name the body reads before it assigns it (`level = a * y[t] + (1 - a) * level`)
        // carries a value from one pass into the next: a recurrence.
        if !declared && carries_scalar(module, site.node, &shape.vars) {
            continue;
        }
        let mut shape = shape;
        let locals = shape.locals.clone();
        shape.reductions.retain(|r| !locals.contains(r) && Some(*r) != element);
        // An accumulator the body also reads (`v += step(v)`) feeds each pass
        // the last one's result: a recurrence, not a reduction.
        let fed_back = shape.reductions.iter().any(|r| {
            shape.names.iter().filter(|n| *n == r).count() > shape.reductions.iter().filter(|x| *x == r).count()
        });
        if fed_back && !declared {
            continue;
        }
        // Indices built from the loop's in the body (`i_j = i * m + j`) are
        // its own too: names the body assigns from the loop's index, looked
        // up only for a write whose index does not name the loop's.
        let derived = std::cell::OnceCell::new();
        let derived = || -> &Vec<&str> {
            derived.get_or_init(|| {
                site.node.field("body").map_or(Vec::new(), |body| {
                    module
                        .preorder(body)
                        .filter(|n| n.kind_name() == "assignment")
                        .filter_map(|a| {
                            let (left, right) = (a.field("left")?, a.field("right")?);
                            // (Arithmetic on the index; an element read at it,
                            // `lab = labels[i]`, is data: passes may share it,
                            // unless the loop is declared free of that.)
                            let gathered = !declared && module.preorder(right).any(|n| n.kind_name() == "subscript");
                            (left.kind_name() == "identifier" && mentions(module.text_of(right), outer) && !gathered)
                                .then(|| module.text_of(left))
                        })
                        .collect()
                })
            })
        };
        let own = |idx: &Vec<String>| idx.iter().any(|i| mentions(i, outer)) || idx.iter().any(|i| derived().iter().any(|d| mentions(i, d)));
        let writes_own: Vec<_> = shape.writes.iter().filter(|(_, idx)| own(idx)).collect();
        if writes_own.is_empty() && shape.reductions.is_empty() {
            continue; // not indexed by this loop: e.g. a time-step loop around a kernel-like loop
        }
        // Every write is a whole slice (`x[i + 1:] = ...`, `out[..., j] = ...`):
        // each pass is already one vectorised operation, and the loop only
        // steps between them (a lag, a bit, a channel).
        let sliced = |array: &String, idx: &Vec<String>| {
            idx.iter().any(|i| i.contains(':') || i == "...") || shape.vector_writes.contains(array)
        };
        // (Compiled, a slice per pass is a loop per pass, not one NumPy call.)
        if jit.is_none() && shape.reductions.is_empty() && !shape.inner_loop && writes_own.iter().all(|(array, idx)| sliced(array, idx)) {
            continue;
        }
        // Likewise when the data comes in whole: each pass hands whole
        // arrays or slices of them to NumPy (`out[k] = np.average(y == k,
        // weights=w)` per class, `zi[m] = np.sum(b[m + 1:] * x[:M - m])` per
        // lag) and reads no element of them at the loop's index.
        if jit.is_none() && !shape.inner_loop && vectorised_passes(cx, site, &shape) {
            continue;
        }
        // A read of a written array at another index that moves with the loop: iterations depend on each other.
        // (Against every write of that array: reading `out[i, 1:]` where the
        // body writes `out[i, 0]` and `out[i, 1:]` is its own row; trailing
        // whole-axis slices name the same elements: `out[i, :]` is `out[i]`.)
        fn position(idx: &[String]) -> Vec<&str> {
            let mut idx: Vec<&str> = idx.iter().map(String::as_str).collect();
            while idx.last().is_some_and(|i| matches!(*i, ":" | "...")) {
                idx.pop();
            }
            idx
        }
        let moving = |i: &String| shape.moves(i);
        // The same row: the same first index, and past it only fixed
        // positions or slices (`out[i, 0]` and `out[i, 1:]`).
        let same_row = |r: &[&str], w: &[&str]| {
            r.first() == w.first() && r.iter().skip(1).chain(w.iter().skip(1)).all(|i| !shape.moves(i))
        };
        let carried = !declared && shape.reads.iter().any(|(a, r)| {
            r.iter().any(moving)
                && shape.writes.iter().filter(|(array, _)| array == a).any(|(_, w)| {
                    let (r, w) = (position(r), position(w));
                    r != w && !same_row(&r, &w)
                })
        });
        // Two writes to one array at the same place shifted (`x[i]` and
        // `x[i + 1]`): a pass writes what the next one writes too. (Writes
        // built differently, `m[i, j * k:(j + 1) * k]` and `m[i, j - c]`,
        // are taken to fill different parts, as their author means.)
        let shifted = |a: &[&str], b: &[&str]| {
            let names = |i: &str| i.chars().filter(|c| c.is_alphanumeric() || *c == '_').filter(|c| !c.is_ascii_digit()).collect::<String>();
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| names(x) == names(y))
        };
        let carried = carried
            || (!declared
                && shape.writes.iter().enumerate().any(|(k, (a, w1))| {
                    shape.writes[k + 1..].iter().filter(|(b, _)| b == a).any(|(_, w2)| {
                        let (w1, w2) = (position(w1), position(w2));
                        w1 != w2 && w1.iter().chain(&w2).any(|i| moving(&i.to_string())) && !same_row(&w1, &w2) && shifted(&w1, &w2)
                    })
                }));
        // It reads what an enclosing loop writes, at another index: each pass
        // gathers the enclosing recurrence's earlier results (lagged values).
        if !carried && !declared && feeds_on_enclosing(cx, site.node, &shape) {
            continue;
        }
        let elements = shape.sizes.iter().try_fold(1u64, |acc, s| s.map(|s| acc.saturating_mul(s)));
        if elements.is_some_and(|n| n < cx.settings.min_elements) {
            continue;
        }
        // A loop that only sums into numbers (`acc += w[i] * x[i]`), each
        // started afresh by a pass of another Python loop around it (`acc =
        // 0.0` there) that goes on with them: as a
        // kernel it would be launched, and its sum waited for, once per
        // pass of the loops around it (a synchronisation per pass, the
        // mistake GPU code is checked for), and each sum is that outer
        // pass's own work. Only where those passes are few (counted, or
        // bounded as `range(1, kmax + 1)` with `kmax=10`) is the sum the
        // work to look at; else only a sum known to be large pays for the wait.
        if site.loop_depth > 0
            && writes_own.is_empty()
            && !shape.reductions.is_empty()
            && elements.is_none()
            && !few_passes_around(cx, site)
            && shape.reductions.iter().all(|r| started_per_pass(cx, site, r))
        {
            continue;
        }
        let size = elements.map(|n| format!(" ({} iterations here)", thousands(n))).unwrap_or_default();
        let count = elements.map(|n| format!(" ({} of them)", thousands(n))).unwrap_or_default();
        let hot = if site.loop_depth > 0 {
            " It sits inside another loop, so keep the arrays on the GPU across those iterations instead of copying each time."
        } else {
            ""
        };
        if carried {
            if let Some((op, down)) = running_op(cx, site.node, &shape) {
                let lib = library(cx, "cupy");
                // (Counting down, the sum runs from the end: over the array reversed.)
                let (of, reversed) = if down { (" from the end", " of the array reversed (`x[::-1]`, and the result reversed back)") } else { ("", "") };
                out.push(finding(
                    site.node,
                    Code::CUPY002,
                    format!("This loop is a running {op}{of}: `cupy.cum{op}` computes it on the GPU in one call"),
                    format!(
                        "Each iteration of this loop needs the previous one's result, so it cannot become a GPU \
                         kernel. It is a running {op}, though: `np.cum{op}`{reversed} computes it in one call, and \
                         `cupy.cum{op}` does so on the GPU (install: {}).",
                        install(cx, lib)
                    ),
                ));
            }
            continue;
        }
        folded.extend(shape.inner.iter().copied());
        // Distinct words: one accumulator named `acc` used three times is not a simulation.
        let mut physics_words: Vec<String> =
            shape.names.iter().map(|n| n.to_ascii_lowercase()).filter(|n| PHYSICS.contains(&n.as_str())).collect();
        physics_words.sort_unstable();
        physics_words.dedup();
        let physics = physics_words.len();
        let has_dt = shape.names.iter().any(|n| *n == "dt" || *n == "delta_t" || *n == "timestep");
        if physics >= 2 && (has_dt || physics >= 3) {
            let lib = library(cx, "warp");
            kernels.push(at.clone());
            out.push(finding(
                site.node,
                Code::WARP001,
                format!("This loop moves particles one at a time{count}: Warp updates them all at once"),
                format!(
                    "This loop advances particles or bodies one at a time in Python{size}; the updates are \
                     independent, so Warp can run them all at once. Write the body as a `@wp.kernel` that takes \
                     `wp.array(dtype=wp.vec3)` arguments and handles one index `tid = wp.tid()`, and run it with \
                     `wp.launch(kernel, dim=n, inputs=[...], device=\"cuda\")`.{hot} Install: {}.",
                    install(cx, lib)
                ),
            ));
            continue;
        }
        let dims = shape.vars.len().min(3);
        let kind = if !shape.reductions.is_empty() && writes_own.is_empty() {
            format!(
                "It accumulates into `{}`: in a kernel, each thread adds its part with `cuda.atomic.add` (or write \
                 it as one array expression and let CuPy reduce it).",
                shape.reductions[0]
            )
        } else if shape.reads.iter().any(|(_, r)| r.iter().any(|i| shape.vars.iter().any(|v| mentions(i, v) && i.trim() != *v))) {
            "It reads neighbouring elements (a stencil): give each thread one output element and keep the reads \
             inside the array's bounds."
                .to_string()
        } else {
            "Each iteration computes one element independently.".to_string()
        };
        let launch = if dims >= 2 {
            format!(
                "`@cuda.jit` kernel whose thread finds its element with `{} = cuda.grid({dims})`, returns when it falls \
                 outside the array, and is launched with 16x16 threads per block and enough blocks to cover the array",
                shape.vars[..dims].join(", ")
            )
        } else {
            format!(
                "`@cuda.jit` kernel whose thread takes `{outer} = cuda.grid(1)`, checks `if {outer} < n`, and is \
                 launched as `kernel[(n + 255) // 256, 256](...)` on device arrays (`cuda.to_device`)"
            )
        };
        let package = super::kernel_package(cx, false);
        if let Some(jit) = jit {
            // Compiled for the CPU already: the kernel is a change of target,
            // and the decorator that asks for `parallel=True` says so itself.
            let parallel = module.decorators(jit).iter().filter_map(|(d, _)| d.named_child(0)).any(|d| module.keyword(d, "parallel").is_some_and(|v| module.text_of(v) == "True"));
            // Compiled, a loop of a few additions per element runs at the
            // speed of memory on the CPU: the copies to the GPU and back
            // cost more. Math functions, helpers, powers or a loop of its
            // own per iteration are work a GPU thread earns its keep on.
            let heavy = site.node.field("body").is_some_and(|body| {
                module.preorder(body).any(|n| match n.kind_name() {
                    "for_statement" | "while_statement" => true,
                    "binary_operator" => n.field("operator").is_some_and(|o| module.text_of(o) == "**"),
                    "call" => !matches!(
                        n.field("function").map_or("", |f| module.text_of(f)),
                        "abs" | "min" | "max" | "int" | "float" | "round" | "bool" | "len" | "range"
                    ),
                    _ => false,
                })
            });
            if !parallel && heavy {
                let name = jit.field("definition").and_then(|d| d.field("name")).map_or("", |n| module.text_of(n));
                kernels.push(at.clone());
                out.push(finding(
                    site.node,
                    Code::NUMBA002,
                    format!("`{name}` runs independent iterations one by one: a CUDA kernel runs them at once"),
                    format!(
                        "`{name}` is compiled by Numba for the CPU, where this loop runs its iterations one after \
                         another{size}; they are independent, so on the GPU each can be a thread. {kind} Write the \
                         body as a {launch}; the function's `@njit` helpers become device functions \
                         (`@cuda.jit(device=True)`).{hot}{}{} Install: {}.",
                        estimate_phrase(cx, "numba"),
                        package.why,
                        package.install
                    ),
                ));
            }
            continue;
        }
        kernels.push(at.clone());
        out.push(finding(
            site.node,
            Code::NUMBA001,
            format!("This loop's iterations are independent{count}: a CUDA kernel runs them in parallel"),
            format!(
                "This Python loop runs its body once per index{size}, and the iterations are independent, so a GPU \
                 kernel can run them in parallel. {kind} Write the body as a {launch}.{hot}{}{}{} Install: {}.",
                scale_out_phrase(cx, "numba", elements.map(|n| n.saturating_mul(16))),
                estimate_phrase(cx, "numba"),
                package.why,
                package.install
            ),
        ));
    }
}

/// A finding on a loop's header (`for i in range(n)`), not its whole body.
fn finding(node: Node<'_>, code: Code, message: String, details: String) -> Finding {
    let mut f = super::finding(node, code, message, details);
    if let Some(right) = node.field("right") {
        f.range.end = right.end_byte();
    }
    f
}

/// Each pass of the loop is NumPy work on whole arrays: no array the body
/// reads but does not write is read at the loop's index (an element, a row
/// or a column: only whole, a slice at a time, or at a fixed place), and
/// the body calls a NumPy function on data that is not one number.
fn vectorised_passes<'t>(cx: &Context<'_, 't>, site: &LoopSite<'t>, shape: &Shape<'t>) -> bool {
    let module = cx.module;
    // (A row or column picked at the index, `x[i, ::-1]`, is the pass's
    // own data too, and so is a window both of whose ends move with it,
    // `x[k * w:(k + 1) * w]`; a suffix or prefix, `b[m + 1:]`, is not.)
    let own_part = |i: &String| {
        let mut ends = i.split(':');
        match (ends.next(), ends.next()) {
            (Some(start), Some(stop)) => shape.moves(start) && shape.moves(stop),
            _ => shape.moves(i),
        }
    };
    let element_read = shape.reads.iter().any(|(array, idx)| !shape.writes.iter().any(|(w, _)| w == array) && idx.iter().any(own_part));
    if element_read {
        return false;
    }
    let Some(body) = site.node.field("body") else { return false };
    // The loop's own names: its indices, the names its header binds
    // (`value` in `for i, value in enumerate(values)`) and its body's.
    let header: Vec<&str> = site
        .node
        .field("left")
        .map(|l| module.preorder(l).filter(|t| t.kind_name() == "identifier").map(|t| module.text_of(t)).collect())
        .unwrap_or_default();
    let loop_name = |name: &str| shape.vars.iter().chain(&shape.locals).chain(&header).any(|v| *v == name);
    // Whole data among a call's arguments: a slice, a row of an array the
    // loop writes (`proba[k]`), or a name that is not a number and not in
    // arithmetic with the loop's index (`y` in `y == k`, not `dx` in `i * dx`).
    let whole = |argument: Node<'t>| {
        module.preorder(argument).any(|n| match n.kind_name() {
            "subscript" => {
                let index = n.field("subscript").map_or("", |i| module.text_of(i));
                let array = n.field("value").map_or("", |v| module.text_of(v));
                index.contains(':') || shape.writes.iter().any(|(w, _)| w == array)
            }
            "identifier" => {
                let name = module.text_of(n);
                let label = module.parent(n).is_some_and(|p| gpulens_syntax::is_label(p, n) || p.field("function") == Some(n));
                !label
                    && !loop_name(name)
                    && module.import_at(name, n.start_byte()).is_none()
                    && !matches!(module.value(n, site.scope), Value::Int(_) | Value::Scalar)
                    && !module.ancestors(n).take_while(|a| argument.start_byte() <= a.start_byte() && a.end_byte() <= argument.end_byte()).any(|a| {
                        a.kind_name() == "binary_operator"
                            && module.preorder(a).any(|m| m.kind_name() == "identifier" && loop_name(module.text_of(m)))
                    })
            }
            _ => false,
        })
    };
    module.preorder(body).filter(|n| n.kind_name() == "call").any(|call| {
        module.resolve_call_in(call, site.scope).is_some_and(|(_, api)| api.kind == gpulens_knowledge::ApiKind::Compute)
            && call.field("arguments").is_some_and(|args| {
                args.named_children(&mut args.walk()).any(|a| match a.kind_name() {
                    "keyword_argument" => a.field("value").is_some_and(whole),
                    _ => whole(a),
                })
            })
    })
}

/// The loop at `node` reads an array that an enclosing loop writes outside
/// it, at another index than the one written there.
fn feeds_on_enclosing<'t>(cx: &Context<'_, 't>, node: Node<'t>, shape: &Shape<'_>) -> bool {
    let module = cx.module;
    for n in module.ancestors(node) {
        if matches!(n.kind_name(), "function_definition" | "class_definition") {
            return false;
        }
        if n.kind_name() != "for_statement" {
            continue;
        }
        let Some(body) = n.field("body") else { continue };
        let outside = |w: &Node<'_>| !(node.start_byte() <= w.start_byte() && w.end_byte() <= node.end_byte());
        let writes: Vec<(String, Vec<String>)> = module.preorder(body)
            .filter(|w| matches!(w.kind_name(), "assignment" | "augmented_assignment") && outside(w))
            .filter_map(|w| w.field("left").filter(|l| l.kind_name() == "subscript"))
            .filter_map(|l| element(module, l))
            .collect();
        let feeds = shape.reads.iter().any(|(a, r)| writes.iter().any(|(wa, w)| wa == a && w != r));
        if feeds {
            return true;
        }
    }
    false
}

/// `x[i] = x[i-1] + a[i]` → "sum"; `x[i] = x[i-1] * a[i]` → "prod"; and
/// whether it runs from the end (a loop counting down, `x[i] = x[i+1] + a[i]`).
fn running_op(cx: &Context<'_, '_>, node: Node<'_>, shape: &Shape<'_>) -> Option<(&'static str, bool)> {
    let statement = shape.single?;
    let assignment = if statement.kind_name() == "expression_statement" { statement.named_child(0)? } else { statement };
    if assignment.kind_name() != "assignment" || shape.vars.len() != 1 {
        return None;
    }
    let right = assignment.field("right")?;
    if right.kind_name() != "binary_operator" {
        return None;
    }
    let op = cx.module.text_of(right.field("operator")?);
    let (array, _) = shape.writes.first()?;
    let var = shape.vars[0];
    // The element the pass before wrote: the one below, or above in a
    // loop counting down (`range(n - 1, 0, -1)`), where `x[i - 1]` is
    // still the input's and each pass is independent of the others.
    let down = range_header(cx.module, node).is_some_and(|(_, args)| {
        args.get(2).is_some_and(|step| cx.module.text_of(*step).trim_start().starts_with('-'))
    });
    let previous = if down { format!("{array}[{var}+1]") } else { format!("{array}[{var}-1]") };
    let operands = [right.field("left")?, right.field("right")?];
    let uses_previous = operands.iter().any(|o| {
        let text: String = cx.module.text_of(*o).split_whitespace().collect();
        text == previous
    });
    match (uses_previous, op) {
        (true, "+") => Some(("sum", down)),
        (true, "*") => Some(("prod", down)),
        _ => None,
    }
}

/// Whether every loop around `site` in its function runs a counted or
/// bounded number of passes (see [`range_loop`]): a `while`, or a `for`
/// over a collection or an unbounded range, runs as many as its data has.
fn few_passes_around(cx: &Context<'_, '_>, site: &LoopSite<'_>) -> bool {
    let module = cx.module;
    let found = module
        .ancestors(site.node)
        .take_while(|a| !matches!(a.kind_name(), "function_definition" | "lambda" | "class_definition"))
        .filter(|a| matches!(a.kind_name(), "for_statement" | "while_statement"))
        .all(|a| a.kind_name() == "for_statement" && range_loop(cx, a, site.scope).is_some_and(|(_, passes)| passes.is_some()));
    found
}

/// Whether `name`, a number the loop at `site` sums into, is set afresh in
/// the body of the loop around it, outside `site` (`acc = 0.0` before the
/// inner loop): each outer pass has its own sum. One set before all the
/// loops is a sum over the whole nest.
fn started_per_pass(cx: &Context<'_, '_>, site: &LoopSite<'_>, name: &str) -> bool {
    let module = cx.module;
    let Some(outer) = module.ancestors(site.node).find(|a| matches!(a.kind_name(), "for_statement" | "while_statement" | "function_definition")) else {
        return false;
    };
    let Some(body) = outer.field("body").filter(|_| outer.kind_name() != "function_definition") else { return false };
    let at = site.node.byte_range();
    let found = module.preorder(body).any(|n| {
        n.kind_name() == "assignment"
            && !(at.start <= n.start_byte() && n.end_byte() <= at.end)
            && n.field("left").is_some_and(|l| module.preorder(l).any(|i| i.kind_name() == "identifier" && module.text_of(i) == name))
    });
    found
}
