//! `GPU…` rules: mistakes in code that already uses the GPU — copies and
//! synchronisation inside loops, kernels without bounds checks, launch
//! configurations that waste or break the hardware, timings that measure
//! nothing, float64 creeping into float32 kernels, NumPy on GPU data, Python
//! UDFs in cuDF, and APIs that were removed or moved.

use gpulens_syntax::NodeExt;
use gpulens_syntax::Node;

use super::finding;
use crate::Code;
use crate::semantic::{CallSite, Value};
use crate::{Context, Finding, Module};
use crate::registry::{declare_rule, Callers, Kind};
use crate::Severity;

/// Calls the GPU rules recognise by their name alone, in files that import
/// no GPU library (`.copy_to_host()` on a device array passed in, a
/// stream's `.synchronize()`): the pre-scan keeps code that names one.
pub(crate) const NAMED_CALLS: &[&str] = &["synchronize", "copy_to_host"];

declare_rule! {
    /// ## What it finds
    /// `cp.asarray(x)` or `cuda.to_device(x)` inside a loop, where `x` does not change in the loop.
    ///
    /// ## Why
    /// Host-to-device copies cross PCIe at a few tens of GB/s, far slower than the GPU's own memory.
    /// Copying the same data again in every iteration can cost more than the computation; copy once
    /// before the loop and reuse the device array.
    ///
    /// ## Example
    /// ```python
    /// import cupy as cp
    /// import numpy as np
    ///
    /// weights = np.random.rand(4096, 4096)
    /// d_x = cp.random.rand(4096)
    /// for step in range(100):
    ///     d_weights = cp.asarray(weights)
    ///     out = d_weights @ d_x
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// import cupy as cp
    /// import numpy as np
    ///
    /// weights = np.random.rand(4096, 4096)
    /// d_x = cp.random.rand(4096)
    /// d_weights = cp.asarray(weights)
    /// for step in range(100):
    ///     out = d_weights @ d_x
    /// ```
    pub(crate) static GPU001: Rule {
        name: "transfer-in-loop",
        library: "cupy",
        severity: Severity::Warning,
        summary: "The same host data copied to the GPU in every iteration of a loop",
        kind: Kind::GpuCode,
        in_tests: true,
        callers: Callers::Stay,
        fix: false,
    }
}

declare_rule! {
    /// ## What it finds
    /// Inside a loop: `cp.asnumpy`, `.get()`, `.item()`, `.copy_to_host()`, `float()`/`int()`/`bool()`
    /// of a GPU value, an explicit `synchronize()`, or an `if`/`while` that tests a GPU value.
    ///
    /// ## Why
    /// GPU calls are queued and return at once; anything that needs a value on the host makes the CPU
    /// wait for all queued work and copies the value back. Done every iteration, the GPU idles while
    /// Python catches up. Keep results on the GPU and check them every N iterations, or after the loop.
    ///
    /// ## Example
    /// ```python
    /// import cupy as cp
    ///
    /// x = cp.random.rand(1_000_000)
    /// tol = 1e-6
    /// while True:
    ///     prev = x
    ///     x = cp.sqrt(x)
    ///     if cp.abs(x - prev).max() < tol:
    ///         break
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// import cupy as cp
    ///
    /// x = cp.random.rand(1_000_000)
    /// tol = 1e-6
    /// for i in range(10_000):
    ///     prev = x
    ///     x = cp.sqrt(x)
    ///     if i % 50 == 0 and cp.abs(x - prev).max() < tol:  # check every 50 steps
    ///         break
    /// ```
    pub(crate) static GPU002: Rule {
        name: "sync-in-loop",
        library: "cupy",
        severity: Severity::Info,
        summary: "Copy back or synchronisation in every iteration of a loop",
        kind: Kind::GpuCode,
        in_tests: true,
        callers: Callers::Stay,
        fix: false,
    }
}

declare_rule! {
    /// ## What it finds
    /// A `@cuda.jit` kernel that takes its index from `cuda.grid()` (or threadIdx/blockIdx) and never
    /// compares it with the array's size.
    ///
    /// ## Why
    /// The number of threads launched is rounded up to whole blocks, so the last block usually has
    /// threads whose index is past the end of the array. Without a check they read and write memory
    /// that isn't theirs: an illegal-address error, or silent corruption.
    ///
    /// ## Example
    /// ```python
    /// from numba import cuda
    ///
    ///
    /// @cuda.jit
    /// def scale(x, out):
    ///     i = cuda.grid(1)
    ///     out[i] = 2.0 * x[i]
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// from numba import cuda
    ///
    ///
    /// @cuda.jit
    /// def scale(x, out):
    ///     i = cuda.grid(1)
    ///     if i < out.size:
    ///         out[i] = 2.0 * x[i]
    /// ```
    pub(crate) static GPU003: Rule {
        name: "kernel-without-bounds-check",
        library: "numba",
        severity: Severity::Warning,
        summary: "Numba CUDA kernel that indexes with cuda.grid() without a bounds check",
        kind: Kind::GpuCode,
        in_tests: true,
        callers: Callers::Stay,
        fix: false,
    }
}

declare_rule! {
    /// ## What it finds
    /// A kernel launch `kernel[blocks, threads](...)` whose threads per block (a literal or a known
    /// constant) is not a multiple of 32, or exceeds 1024.
    ///
    /// ## Why
    /// NVIDIA GPUs run threads in warps of 32; a block of 100 threads occupies 4 warps and leaves 28
    /// thread slots idle. More than 1024 threads per block is not allowed at all: the launch fails.
    ///
    /// ## Example
    /// ```python
    /// import numpy as np
    /// from numba import cuda
    ///
    ///
    /// @cuda.jit
    /// def double(x, out):
    ///     i = cuda.grid(1)
    ///     if i < x.size:
    ///         out[i] = 2.0 * x[i]
    ///
    ///
    /// d_x = cuda.to_device(np.ones(1_000_000))
    /// d_out = cuda.device_array_like(d_x)
    /// double[(d_x.size + 99) // 100, 100](d_x, d_out)
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// import numpy as np
    /// from numba import cuda
    ///
    ///
    /// @cuda.jit
    /// def double(x, out):
    ///     i = cuda.grid(1)
    ///     if i < x.size:
    ///         out[i] = 2.0 * x[i]
    ///
    ///
    /// d_x = cuda.to_device(np.ones(1_000_000))
    /// d_out = cuda.device_array_like(d_x)
    /// threads = 128
    /// double[(d_x.size + threads - 1) // threads, threads](d_x, d_out)
    /// ```
    pub(crate) static GPU004: Rule {
        name: "bad-block-size",
        library: "numba",
        severity: Severity::Warning,
        summary: "Threads per block not a multiple of 32, or above 1024",
        kind: Kind::GpuCode,
        in_tests: true,
        callers: Callers::Stay,
        fix: false,
    }
}

declare_rule! {
    /// ## What it finds
    /// Two clock readings (`time.time()`, `time.perf_counter()`) around GPU work with no
    /// synchronisation before the second one.
    ///
    /// ## Why
    /// Kernel launches and CuPy calls return as soon as the work is queued. Reading the clock right
    /// after measures the launch, not the computation, which makes the GPU look impossibly fast — and
    /// the cost shows up later, wherever the program next waits.
    ///
    /// ## Example
    /// ```python
    /// import time
    ///
    /// import cupy as cp
    ///
    /// x = cp.random.rand(1 << 24)
    /// t0 = time.perf_counter()
    /// y = cp.fft.fft(x)
    /// elapsed = time.perf_counter() - t0
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// import time
    ///
    /// import cupy as cp
    ///
    /// x = cp.random.rand(1 << 24)
    /// t0 = time.perf_counter()
    /// y = cp.fft.fft(x)
    /// cp.cuda.get_current_stream().synchronize()
    /// elapsed = time.perf_counter() - t0
    /// ```
    pub(crate) static GPU005: Rule {
        name: "timing-without-sync",
        library: "cupy",
        severity: Severity::Warning,
        summary: "Timing GPU work without synchronising first",
        kind: Kind::GpuCode,
        in_tests: true,
        callers: Callers::Stay,
        fix: true,
    }
}

declare_rule! {
    /// ## What it finds
    /// A float literal such as `0.5` in a `@cuda.jit` kernel whose signature declares float32 data.
    ///
    /// ## Why
    /// Numba types Python floats as float64, so `0.5 * x[i]` with float32 `x` computes in float64.
    /// Consumer and many workstation GPUs run float64 at 1/32 or 1/64 of float32 speed.
    ///
    /// ## Example
    /// ```python
    /// from numba import cuda
    ///
    ///
    /// @cuda.jit("void(float32[:], float32[:])")
    /// def half(x, out):
    ///     i = cuda.grid(1)
    ///     if i < x.size:
    ///         out[i] = 0.5 * x[i]
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// from numba import cuda, float32
    ///
    ///
    /// @cuda.jit("void(float32[:], float32[:])")
    /// def half(x, out):
    ///     i = cuda.grid(1)
    ///     if i < x.size:
    ///         out[i] = float32(0.5) * x[i]
    /// ```
    pub(crate) static GPU006: Rule {
        name: "float64-literal-in-float32-kernel",
        library: "numba",
        severity: Severity::Info,
        summary: "Python float literal in a float32 Numba kernel promotes it to float64",
        kind: Kind::GpuCode,
        in_tests: true,
        callers: Callers::Stay,
        fix: false,
    }
}

declare_rule! {
    /// ## What it finds
    /// A `numpy` function given a CuPy array (or a Numba device array).
    ///
    /// ## Why
    /// `np.asarray` of a CuPy array raises a TypeError, since CuPy refuses silent copies to the host.
    /// Other NumPy functions may be dispatched to CuPy, but they read as CPU code and any that are not
    /// dispatched copy the data to the host. Call the `cupy` function.
    ///
    /// ## Example
    /// ```python
    /// import cupy as cp
    /// import numpy as np
    ///
    /// x = np.random.rand(1_000_000)
    /// d = cp.asarray(x)
    /// total = np.sum(d)
    /// host = np.asarray(d)
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// import cupy as cp
    /// import numpy as np
    ///
    /// x = np.random.rand(1_000_000)
    /// d = cp.asarray(x)
    /// total = cp.sum(d)
    /// host = cp.asnumpy(d)
    /// ```
    pub(crate) static GPU007: Rule {
        name: "numpy-on-gpu-data",
        library: "cupy",
        severity: Severity::Warning,
        summary: "NumPy function called on data that is already on the GPU",
        kind: Kind::GpuCode,
        in_tests: true,
        callers: Callers::Stay,
        fix: false,
    }
}

declare_rule! {
    /// ## What it finds
    /// `apply`, `map`, `applymap` or `apply_rows` on a cuDF DataFrame or Series with a Python function
    /// or lambda.
    ///
    /// ## Why
    /// cuDF compiles such functions with Numba to run on the GPU. Only numeric scalars (and some string
    /// operations) are supported; Python objects, containers or calls into other libraries fail to
    /// compile. Column arithmetic is faster and always runs on the GPU.
    ///
    /// ## Example
    /// ```python
    /// import cudf
    ///
    /// df = cudf.read_parquet("orders.parquet")
    /// df["total"] = df.apply(lambda r: r["price"] * r["qty"], axis=1)
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// import cudf
    ///
    /// df = cudf.read_parquet("orders.parquet")
    /// df["total"] = df["price"] * df["qty"]
    /// ```
    pub(crate) static GPU008: Rule {
        name: "cudf-python-udf",
        library: "cudf",
        severity: Severity::Info,
        summary: "Python function applied to a cuDF frame: it must compile with Numba",
        kind: Kind::GpuCode,
        in_tests: true,
        callers: Callers::Stay,
        fix: false,
    }
}

declare_rule! {
    /// ## What it finds
    /// Imports of `warp.sim` (removed in Warp 1.10), `pylibraft.neighbors` (moved to cuVS) and
    /// `cuspatial` (archived).
    ///
    /// ## Why
    /// Code on these APIs breaks on current releases or pins old ones that conflict with the rest of
    /// RAPIDS. Each message names the replacement.
    ///
    /// ## Example
    /// ```python
    /// from pylibraft.neighbors import brute_force
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// from cuvs.neighbors import brute_force
    /// ```
    pub(crate) static GPU009: Rule {
        name: "removed-gpu-api",
        library: "warp",
        severity: Severity::Warning,
        summary: "Import of a GPU API that was removed, moved or archived",
        kind: Kind::GpuCode,
        in_tests: true,
        callers: Callers::Stay,
        fix: false,
    }
}

declare_rule! {
    /// ## What it finds
    /// CuPy matrix products, linear algebra and FFTs on float64 data (the default) when the GPU advice
    /// is for (attached or targeted) has a slow FP64 unit: GeForce and most workstation cards, T4, A10,
    /// L4. Nothing is said on GPUs with full-rate FP64 such as the A100, H100 or H200.
    ///
    /// ## Why
    /// Consumer and inference GPUs have few float64 units: an RTX 4090 runs float64 at 1/64 of its
    /// float32 rate, a T4 at 1/32. Work that tolerates single precision runs many times faster in
    /// float32, and float32 matrix products can also use the tensor cores (TF32).
    ///
    /// ## Example
    /// ```python
    /// import cupy as cp
    ///
    /// a = cp.random.rand(4096, 4096)
    /// b = a @ a
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// import cupy as cp
    ///
    /// a = cp.random.rand(4096, 4096, dtype=cp.float32)
    /// b = a @ a
    /// ```
    pub(crate) static GPU010: Rule {
        name: "float64-on-slow-fp64-gpu",
        library: "cupy",
        severity: Severity::Info,
        summary: "float64 matrix work on a GPU that runs float64 at 1/32 or 1/64 speed",
        kind: Kind::GpuCode,
        in_tests: true,
        callers: Callers::Stay,
        fix: false,
    }
}

pub(super) fn check(cx: &Context<'_, '_>, out: &mut Vec<Finding>) {
    let module = cx.module;
    if !module.mentions_gpu_library() {
        return;
    }
    for site in &module.calls {
        let name = site.node.field("function").and_then(|f| module.qualified_name(f));
        transfers_and_syncs(cx, site, name.as_deref(), out);
        numpy_on_device(cx, site, name.as_deref(), out);
        cudf_udf(cx, site, out);
    }
    for condition in &module.conditions {
        if condition.repeats
            && matches!(module.value(condition.node, condition.scope), Value::Device(_))
            && !every_nth_iteration(module, condition.node)
        {
            out.push(finding(
                condition.node,
                Code::GPU002,
                "Testing a GPU value in a loop makes every iteration wait for the GPU".to_string(),
                "This condition tests a value that lives on the GPU, inside a loop: Python needs a real `bool`, so \
                 every iteration waits for all queued GPU work and copies the value back. Check it every N \
                 iterations, or keep the whole loop on the GPU."
                    .to_string(),
            ));
        }
    }
    for &decorated in &module.decorated {
        kernel_checks(cx, decorated, out);
    }
    let kernels = kernel_names(module);
    launch_configs(cx, &kernels, out);
    timing(cx, &kernels, out);
    deprecated_imports(cx, out);
    float64_on_slow_fp64(cx, out);
}

/// GPU010: float64 matrix work in CuPy on a GPU whose float64 rate is 1/32
/// or 1/64 of its float32 rate. Says nothing on GPUs with full-rate FP64
/// (A100, H100, H200) or when no GPU is known.
fn float64_on_slow_fp64(cx: &Context<'_, '_>, out: &mut Vec<Finding>) {
    let Some(divisor) = cx.gpu.fp64_divisor.filter(|d| *d >= 32) else { return };
    let module = cx.module;
    let single = |expr: Node<'_>, scope: usize| {
        let text = module.defining_text(expr, scope);
        ["float32", "float16", "bfloat16", "complex64", "half"].iter().any(|t| text.contains(t))
    };
    let finding_for = |node: Node<'_>, what: &str| {
        finding(
            node,
            Code::GPU010,
            format!("{what} runs in float64, at 1/{divisor} of float32 speed on {}", cx.gpu.display_name()),
            format!(
                "{what} runs in float64 unless its inputs were made float32 (CuPy, like NumPy, defaults to float64). \
                 On {}, float64 runs at 1/{divisor} of float32 speed: create the arrays with `dtype=cp.float32` (or \
                 `.astype(cp.float32)`) where the precision allows.{}",
                cx.gpu.display_name(),
                if cx.gpu.tensor_core_types.iter().any(|t| t == "TF32") {
                    " Its tensor cores can also run float32 matrix products as TF32 (set `CUPY_TF32=1`)."
                } else {
                    ""
                }
            ),
        )
    };
    for site in &module.calls {
        let Some(name) = site.node.field("function").and_then(|f| module.qualified_name(f)) else { continue };
        let matrix = matches!(name.as_str(), "cupy.matmul" | "cupy.dot" | "cupy.tensordot" | "cupy.einsum" | "cupy.inner" | "cupy.outer")
            || name.starts_with("cupy.linalg.")
            || name.starts_with("cupy.fft.");
        if !matrix || !module.any_arg_on_device(site.node, site.scope) {
            continue;
        }
        let args = site.node.field("arguments");
        let any_single = args.is_some_and(|a| {
            let mut cursor = a.walk();
            let found = a.named_children(&mut cursor).any(|arg| single(arg, site.scope));
            found
        });
        if !any_single {
            let callee = module.text_of(site.node.field("function").unwrap());
            out.push(finding_for(site.node, &format!("`{}`", super::short_callee(callee))));
        }
    }
    for &CallSite { node, scope, .. } in &module.matmuls {
        let (Some(l), Some(r)) = (node.field("left"), node.field("right")) else { continue };
        let on_device = [l, r].iter().any(|o| matches!(module.value(*o, scope), Value::Device(_)));
        if on_device && !single(l, scope) && !single(r, scope) {
            out.push(finding_for(node, "This matrix product"));
        }
    }
}

/// GPU001 (same host data copied in every iteration) and GPU002 (a copy back
/// or a synchronisation in every iteration).
fn transfers_and_syncs(cx: &Context<'_, '_>, site: &CallSite<'_>, name: Option<&str>, out: &mut Vec<Finding>) {
    if site.loop_depth == 0 {
        return;
    }
    let module = cx.module;
    match name {
        Some("cupy.asarray" | "cupy.array" | "numba.cuda.to_device") => {
            let Some(arg) = module.first_positional(site.node) else { return };
            if is_loop_invariant(module, site, arg) {
                let numba = name == Some("numba.cuda.to_device");
                out.push(library_finding(numba, finding(
                    site.node,
                    Code::GPU001,
                    format!(
                        "`{}` copies `{}` to the GPU on every pass, though it does not change",
                        module.text_of(site.node.field("function").unwrap()),
                        module.text_of(arg)
                    ),
                    "It does not change inside the loop: copy it once before the loop and reuse the GPU copy. \
                     Transfers over PCIe are the slowest step of GPU code."
                        .to_string(),
                )));
            }
            return;
        }
        Some("cupy.asnumpy") => {
            push_sync(site.node, "`cp.asnumpy`", "`cp.asnumpy` copies the array back to the host", false, out);
            return;
        }
        Some(
            "numba.cuda.synchronize"
            | "cupy.cuda.runtime.deviceSynchronize"
            | "cupy.cuda.Stream.null.synchronize"
            | "cupy.cuda.get_current_stream().synchronize",
        ) => {
            let numba = name == Some("numba.cuda.synchronize");
            push_sync(site.node, "An explicit synchronisation", "an explicit synchronisation makes the CPU wait for the GPU", numba, out);
            return;
        }
        _ => {}
    }
    let Some(function) = site.node.field("function") else { return };
    // Methods and builtins that pull a GPU value to the host.
    if function.kind_name() == "attribute" {
        let method = function.field("attribute").map_or("", |m| module.text_of(m));
        let Some(object) = function.field("object") else { return };
        let on_device = matches!(module.value(object, site.scope), Value::Device(_));
        let (short, what) = match method {
            "get" if on_device => ("`.get()`", "`.get()` copies the array back to the host"),
            "item" if on_device => ("`.item()`", "`.item()` copies one value back to the host"),
            "tolist" if on_device => ("`.tolist()`", "`.tolist()` copies the array back to the host"),
            "copy_to_host" => ("`.copy_to_host()`", "`.copy_to_host()` copies the array back to the host"),
            "synchronize" if module.text_of(object).contains("cuda") || module.text_of(object).contains("stream") => {
                ("An explicit synchronisation", "an explicit synchronisation makes the CPU wait for the GPU")
            }
            _ => return,
        };
        push_sync(site.node, short, what, method == "copy_to_host", out);
    } else if function.kind_name() == "identifier" && matches!(module.text_of(function), "float" | "int" | "bool")
        && module.first_positional(site.node).is_some_and(|a| matches!(module.value(a, site.scope), Value::Device(_))) {
            push_sync(
                site.node,
                "Converting a GPU value to a number",
                "converting a GPU value to a Python number copies it back to the host",
                false,
                out,
            );
        }
}

/// Numba's transfers and syncs belong to numba, CuPy's to cupy.
fn library_finding(numba: bool, mut f: Finding) -> Finding {
    if numba {
        f.library = "numba";
    }
    f
}

/// `short`: what waits, as a message starts (`` `.get()` ``); `what`: what it does, as a sentence goes on.
fn push_sync(node: Node<'_>, short: &str, what: &str, numba: bool, out: &mut Vec<Finding>) {
    out.push(library_finding(numba, finding(
        node,
        Code::GPU002,
        format!("{short} in a loop makes the CPU wait for the GPU on every pass"),
        format!(
            "Inside a loop, {what} and waits for all queued GPU work, every iteration: the GPU idles while Python \
             catches up. Keep results on the GPU and bring them back once after the loop (or every N iterations, \
             for a convergence check)."
        ),
    )));
}

/// Whether `arg` is the same in every iteration: a plain name that the loops
/// around the call neither iterate over nor assign.
fn is_loop_invariant(module: &Module<'_>, site: &CallSite<'_>, arg: Node<'_>) -> bool {
    if arg.kind_name() != "identifier" {
        return false;
    }
    let name = module.text_of(arg);
    let mut node = site.node;
    // Climb to each enclosing loop (bounded: statements nest shallowly).
    for _ in 0..64 {
        let Some(parent) = module.parent(node) else { return true };
        if matches!(parent.kind_name(), "function_definition" | "lambda" | "module") {
            return true;
        }
        if matches!(parent.kind_name(), "for_statement" | "while_statement") {
            if parent.field("left").is_some_and(|l| mentions_name(module, l, name)) {
                return false;
            }
            if let Some(body) = parent.field("body") {
                if assigns(module, body, name) {
                    return false;
                }
            }
        }
        node = parent;
    }
    false
}

fn mentions_name(module: &Module<'_>, node: Node<'_>, name: &str) -> bool {
    descendants(node, |n| n.kind_name() == "identifier" && module.text_of(n) == name)
}

fn assigns(module: &Module<'_>, body: Node<'_>, name: &str) -> bool {
    descendants(body, |n| {
        matches!(n.kind_name(), "assignment" | "augmented_assignment")
            && n.field("left").is_some_and(|l| mentions_name(module, l, name))
    })
}

/// Whether any node under `root` (itself included) satisfies `pred`.
fn descendants(root: Node<'_>, pred: impl FnMut(Node<'_>) -> bool) -> bool {
    gpulens_syntax::preorder(root).any(pred)
}

/// GPU007: NumPy called on data that is already on the GPU.
fn numpy_on_device(cx: &Context<'_, '_>, site: &CallSite<'_>, name: Option<&str>, out: &mut Vec<Finding>) {
    let Some(name) = name.filter(|n| n.starts_with("numpy.")) else { return };
    let module = cx.module;
    if !module.any_arg_on_device(site.node, site.scope) {
        return;
    }
    let callee = module.text_of(site.node.field("function").unwrap());
    let gpu = name.replacen("numpy.", "cp.", 1);
    let callee = super::short_callee(callee);
    let (message, details) = if matches!(name, "numpy.asarray" | "numpy.array" | "numpy.asanyarray" | "numpy.ascontiguousarray") {
        (
            format!("`{callee}` on a CuPy array raises `TypeError`: copy it with `cp.asnumpy`"),
            format!(
                "`{callee}` on a CuPy array raises `TypeError: Implicit conversion to a NumPy array is not allowed`. \
                 Copy it to the host explicitly with `cp.asnumpy(x)` or `x.get()` — once, where you really need it on \
                 the CPU."
            ),
        )
    } else {
        (
            format!("`{callee}` is given GPU data: call `{gpu}` directly"),
            format!(
                "`{callee}` is given GPU data. It may work through NumPy's dispatch to CuPy, but it reads as CPU code \
                 and any function CuPy does not dispatch copies the data back to the host."
            ),
        )
    };
    out.push(finding(site.node, Code::GPU007, message, details));
}

/// `i % 50 == 0 and <GPU test>`: the GPU value is read only on every Nth
/// iteration (`and` stops at a false host test), which is what GPU002 advises.
fn every_nth_iteration(module: &crate::Module<'_>, condition: Node<'_>) -> bool {
    let Some(left) = condition
        .field("left")
        .filter(|_| condition.kind_name() == "boolean_operator" && condition.field("operator").is_some_and(|o| module.text_of(o) == "and"))
    else {
        return false;
    };
    left.kind_name() == "comparison_operator"
        && left.named_child(0).is_some_and(|l| {
            l.kind_name() == "binary_operator" && l.field("operator").is_some_and(|o| module.text_of(o) == "%")
        })
}

/// GPU008: Python functions applied row by row to a cuDF frame.
fn cudf_udf(cx: &Context<'_, '_>, site: &CallSite<'_>, out: &mut Vec<Finding>) {
    let module = cx.module;
    let Some(function) = site.node.field("function").filter(|f| f.kind_name() == "attribute") else { return };
    let method = function.field("attribute").map_or("", |m| module.text_of(m));
    if !matches!(method, "apply" | "applymap" | "map" | "apply_rows" | "apply_chunks") {
        return;
    }
    let Some(object) = function.field("object") else { return };
    if module.value(object, site.scope) != Value::GpuFrame {
        return;
    }
    let Some(func) = module.first_positional(site.node) else { return };
    if !matches!(func.kind_name(), "lambda" | "identifier" | "attribute") {
        return;
    }
    out.push(finding(
        site.node,
        Code::GPU008,
        format!("`.{method}()` on a cuDF frame compiles the function with Numba: numbers only"),
        format!(
            "`.{method}()` with a Python function on a cuDF frame compiles that function with Numba for the GPU: \
             it must use only numbers (and simple string operations) — Python objects, lists, dicts or calls into \
             other libraries fail to compile. Where you can, write it as column arithmetic instead; it is faster \
             and always runs on the GPU."
        ),
    ));
}

/// GPU003 (no bounds check) and GPU006 (float64 literals in a float32 kernel).
fn kernel_checks(cx: &Context<'_, '_>, decorated: Node<'_>, out: &mut Vec<Finding>) {
    let module = cx.module;
    let Some((def, decorator)) = cuda_kernel(module, decorated) else { return };
    let Some(body) = def.field("body") else { return };
    let name = def.field("name").map_or("kernel", |n| module.text_of(n));
    // Index variables taken from the grid.
    let mut index_vars: Vec<&str> = Vec::new();
    for a in module.preorder(body).filter(|n| n.kind_name() == "assignment") {
        let (Some(left), Some(right)) = (a.field("left"), a.field("right")) else { continue };
        let rhs = module.text_of(right);
        if rhs.contains("cuda.grid(") || rhs.contains("threadIdx") || rhs.contains("blockIdx") {
            index_vars.extend(module.preorder(left).filter(|n| n.kind_name() == "identifier").map(|n| module.text_of(n)));
        }
    }
    if !index_vars.is_empty() {
        let guarded = descendants(body, |n| {
            let is_test = matches!(n.kind_name(), "comparison_operator")
                || (n.kind_name() == "call" && n.field("function").is_some_and(|f| matches!(module.text_of(f), "min" | "range")));
            is_test && index_vars.iter().any(|v| mentions_name(module, n, v))
        });
        if !guarded {
            out.push(finding(
                def.field("name").unwrap_or(def),
                Code::GPU003,
                format!("Kernel `{name}` never checks its index against the array's size"),
                format!(
                    "Kernel `{name}` takes its index from the grid ({}) but never checks it against the array's size. \
                     The grid is rounded up to whole blocks, so the last threads point past the end and write memory \
                     that isn't theirs (\"an illegal memory access was encountered\", or silently wrong results). \
                     Start the body with `if {} < out.size:` (or `return` when out of range).",
                    index_vars.join(", "),
                    index_vars[0],
                ),
            ));
        }
    }
    super::atomics::check(module, def, name, out);
    // float32 signature + float literals → float64 arithmetic.
    if module.text_of(decorator).contains("float32") {
        let bare = module.preorder(body).filter(|n| n.kind_name() == "float").find(|f| {
            module.parent(*f).and_then(|p| module.parent(p)).is_none_or(|call| {
                call.kind_name() != "call"
                    || !call.field("function").is_some_and(|fun| module.text_of(fun).ends_with("float32"))
            })
        });
        if let Some(literal) = bare {
            out.push(finding(
                literal,
                Code::GPU006,
                format!("`{}` is float64 in a float32 kernel: write `float32({})`", module.text_of(literal), module.text_of(literal)),
                format!(
                    "`{}` is a Python float, which Numba treats as float64: mixed with the kernel's float32 data it \
                     promotes the arithmetic to float64, which consumer and many workstation GPUs run 32-64x slower. \
                     Write `float32({})` (from numba import float32).",
                    module.text_of(literal),
                    module.text_of(literal)
                ),
            ));
        }
    }
}


/// The function and `@cuda.jit…` decorator of a decorated definition, if it is a Numba CUDA kernel.
fn cuda_kernel<'t>(module: &Module<'t>, decorated: Node<'t>) -> Option<(Node<'t>, Node<'t>)> {
    let def = decorated.field("definition").filter(|d| d.kind_name() == "function_definition")?;
    let (decorator, _) = module
        .decorators(decorated)
        .into_iter()
        .find(|(_, target)| target.as_deref() == Some("numba.cuda.jit"))?;
    // `@cuda.jit(device=True)` is a device function, not a kernel.
    if module.text_of(decorator).replace(' ', "").contains("device=True") {
        return None;
    }
    Some((def, decorator))
}

/// Names of the Numba CUDA kernels defined in the module (launched by name).
fn kernel_names<'t>(module: &Module<'t>) -> Vec<&'t str> {
    module
        .decorated
        .iter()
        .filter_map(|d| cuda_kernel(module, *d))
        .filter_map(|(def, _)| def.field("name").map(|n| module.text_of(n)))
        .collect()
}

/// GPU004: `kernel[blocks, threads](…)` with a thread count that is not a
/// multiple of the warp size (32) or above the hardware limit (1024).
fn launch_configs(cx: &Context<'_, '_>, kernels: &[&str], out: &mut Vec<Finding>) {
    let module = cx.module;
    for site in &module.calls {
        let Some(function) = site.node.field("function").filter(|f| f.kind_name() == "subscript") else {
            continue;
        };
        let Some(value) = function.field("value") else { continue };
        if !kernels.contains(&module.text_of(value)) {
            continue;
        }
        let mut cursor = function.walk();
        let config: Vec<Node<'_>> = function.children_by_field_name("subscript", &mut cursor).collect();
        let Some(&threads) = config.get(1) else { continue };
        let dims: Vec<Node<'_>> = if threads.kind_name() == "tuple" {
            threads.named_children(&mut threads.walk()).collect()
        } else {
            vec![threads]
        };
        let values: Option<Vec<u64>> = dims
            .iter()
            .map(|d| match module.value(*d, site.scope) {
                Value::Int(v) => Some(v),
                _ => None,
            })
            .collect();
        let Some(values) = values else { continue };
        let total: u64 = values.iter().product();
        if total > 1024 {
            out.push(finding(
                threads,
                Code::GPU004,
                format!("{total} threads per block is over the limit of 1024"),
                format!(
                    "{total} threads per block is more than the 1024 every NVIDIA GPU allows: the launch fails with \
                     an invalid-configuration error. Use 256 (or 16x16 for 2-D) and more blocks."
                ),
            ));
        } else if !total.is_multiple_of(32) {
            let up = total.div_ceil(32) * 32;
            out.push(finding(
                threads,
                Code::GPU004,
                format!("{total} threads per block is not a multiple of the warp size (32)"),
                format!(
                    "{total} threads per block is not a multiple of 32, the warp size: the GPU schedules whole warps, \
                     so {} of every {up} thread slots do nothing. Use a multiple of 32 such as 128 or 256.",
                    up - total
                ),
            ));
        }
    }
}

/// GPU005: wall-clock timing around GPU work with no synchronisation before
/// the second reading: launches return at once, so it times the launch only.
fn timing(cx: &Context<'_, '_>, kernels: &[&str], out: &mut Vec<Finding>) {
    let module = cx.module;
    #[derive(PartialEq)]
    enum Event {
        Clock,
        Work,
        Sync,
    }
    let mut events: Vec<(usize, usize, Event, Node<'_>)> = Vec::new();
    for site in &module.calls {
        let Some(function) = site.node.field("function") else { continue };
        let name = module.qualified_name(function).unwrap_or_default();
        let text = module.text_of(function);
        let event = if matches!(name.as_str(), "time.time" | "time.perf_counter" | "time.monotonic" | "time.perf_counter_ns") {
            Event::Clock
        } else if name.ends_with("synchronize")
            || text.ends_with(".synchronize")
            || matches!(name.as_str(), "cupy.asnumpy")
            || text.ends_with(".get")
            || text.ends_with(".copy_to_host")
            || text.ends_with(".item")
        {
            Event::Sync
        } else if (name.starts_with("cupy.") && !name.starts_with("cupy.cuda"))
            || (function.kind_name() == "subscript"
                && function.field("value").is_some_and(|v| kernels.contains(&module.text_of(v))))
        {
            Event::Work
        } else {
            continue;
        };
        events.push((site.scope, site.node.start_byte(), event, site.node));
    }
    events.sort_by_key(|e| (e.0, e.1));
    let mut i = 0;
    while i < events.len() {
        if events[i].2 != Event::Clock {
            i += 1;
            continue;
        }
        let scope = events[i].0;
        let mut j = i + 1;
        let (mut work, mut synced_after_work) = (false, false);
        while j < events.len() && events[j].0 == scope && events[j].2 != Event::Clock {
            match events[j].2 {
                Event::Work => {
                    work = true;
                    synced_after_work = false;
                }
                Event::Sync => synced_after_work = true,
                Event::Clock => {}
            }
            j += 1;
        }
        if j < events.len() && events[j].0 == scope && work && !synced_after_work {
            out.push(finding(
                events[j].3,
                Code::GPU005,
                "Clock read after GPU work with no synchronisation: it times the launch only".to_string(),
                "This clock reading follows GPU work with no synchronisation in between. GPU calls return as soon as \
                 the work is queued, so the time measured is the launch, not the computation. Call \
                 `cp.cuda.get_current_stream().synchronize()` (CuPy) or `cuda.synchronize()` (Numba) before reading \
                 the clock, or use `cupyx.profiler.benchmark`."
                    .to_string(),
            ));
        }
        i = j;
    }
}

/// GPU009: imports of APIs that were removed or moved.
fn deprecated_imports(cx: &Context<'_, '_>, out: &mut Vec<Finding>) {
    let module = cx.module;
    for (node, target) in module.import_sites() {
        let (message, details) = if target == "warp.sim" || target.starts_with("warp.sim.") {
            ("`warp.sim` was removed in Warp 1.10: use core Warp or Newton", "`warp.sim` was removed in Warp 1.10; its simulation features moved to the separate Newton physics \
             engine. Write your own `@wp.kernel` steps on core Warp, or move to Newton.")
        } else if target == "pylibraft.neighbors" || target.starts_with("pylibraft.neighbors.") {
            ("RAFT's neighbour search moved to cuVS: import from `cuvs.neighbors`", "RAFT's nearest-neighbour and vector-search code moved to cuVS: import from `cuvs.neighbors` \
             (brute_force, ivf_flat, ivf_pq, cagra) instead (uv add cuvs-cu12).")
        } else if target == "cuspatial" || target.starts_with("cuspatial.") {
            ("cuSpatial is archived and conflicts with current RAPIDS", "cuSpatial is archived: its last release (25.04) pins cudf 25.4, which conflicts with current RAPIDS. \
             Keep geometry in GeoPandas/Shapely on the CPU and use cuDF for the tabular part, or keep cuSpatial in a \
             separate legacy environment.")
        } else {
            continue;
        };
        let mut f = finding(node, Code::GPU009, message.to_string(), details.to_string());
        f.library = if target.starts_with("warp") {
            "warp"
        } else if target.starts_with("pylibraft") {
            "raft"
        } else {
            "cuspatial"
        };
        out.push(f);
    }
}
