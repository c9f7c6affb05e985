//! The rules. Each call site is resolved once (through imports, or through
//! the value its receiver holds) and handed to the rule family of the
//! library its knowledge-base entry names.

use gpulens_syntax::NodeExt;
pub(crate) mod atomics;
pub(crate) mod cudf;
pub(crate) mod cugraph;
pub(crate) mod cuml;
mod context;
pub(crate) mod cupy;
pub(crate) mod gpu;
pub(crate) mod library_calls;
mod idle_loops;
mod loop_body;
pub(crate) mod loop_headers;
pub(crate) mod loops;
mod models;
pub(crate) mod per_piece;
mod recurrences;

pub(crate) use context::{draws_on_figures, may_draw, plotting_names, PLOTTING};
pub(crate) use cupy::{light_array_operation, CHAIN as CUPY_CHAIN};
pub(crate) use models::{index_work_methods, names_a_mesh_or_ray, names_work_on_arrays, neighbour_queries, ray_queries, work as model_work};

use rustc_hash::FxHashMap as HashMap;

use gpulens_gpu::GpuProfile;
use gpulens_knowledge::{ApiMapping, Fallback, Knowledge, Library};
use gpulens_syntax::Node;

use crate::semantic::{CallSite, Value};
use crate::registry::{Code, Kind};
use crate::{Context, Finding};

pub(crate) fn run(cx: &Context<'_, '_>) -> Vec<Finding> {
    let mut out = Vec::new();
    let resolved: Vec<(&CallSite<'_>, Option<(String, &'static ApiMapping)>)> =
        cx.module.calls.iter().map(|site| (site, cx.module.resolve_call_in(site.node, site.scope))).collect();
    // Matrix products written `a @ b` on NumPy arrays: `np.matmul(a, b)`.
    let matmuls: Vec<(&CallSite<'_>, Option<(String, &'static ApiMapping)>)> = cx
        .module
        .matmuls
        .iter()
        .filter(|site| !site.in_check)
        .filter_map(|site| cx.module.resolve_matmul(site.node, site.scope).map(|r| (site, Some(r))))
        .collect();
    // CuPy candidates per scope, so light operations can be judged by the
    // chain they are part of; each call judged once.
    let mut in_scope: HashMap<usize, Vec<Node<'_>>> = HashMap::default();
    let mut candidates: HashMap<usize, Option<Value>> = HashMap::default();
    let mut heavy: rustc_hash::FxHashSet<usize> = Default::default();
    let mut summaries: rustc_hash::FxHashSet<usize> = Default::default();
    for (site, resolved) in resolved.iter().chain(&matmuls) {
        if let Some((name, api)) = resolved.clone().filter(|(_, api)| api.library == "cupy") {
            let call = Call { site, name, api, cx };
            let value = cupy::candidate(&call);
            if value.is_some() {
                in_scope.entry(site.scope).or_default().push(site.node);
                if cupy::summary(&call) {
                    summaries.insert(site.node.id());
                } else if cupy::heavy(&call) {
                    heavy.insert(site.node.id());
                }
            }
            candidates.insert(site.node.id(), value);
        }
    }
    let chains = cupy::chains(cx.module, &in_scope, &heavy, &summaries);
    let mut tables = Vec::new();
    for (i, (site, resolved)) in resolved.into_iter().enumerate() {
        if i % 256 == 255 && (cx.cancel)() {
            return out; // a newer edit: nobody will read these
        }
        if let Some((name, api)) = resolved {
            let call = Call { site, name, api, cx };
            match api.library.as_str() {
                "cupy" | "raft" => {
                    let value = candidates.get(&site.node.id()).copied().unwrap_or_else(|| cupy::candidate(&call));
                    cupy::check(&call, value, &chains, &summaries, &mut out)
                }
                "cudf" => cudf::check_function(&call, &mut tables),
                "cuml" => cuml::check(&call, &mut out),
                "cugraph" => cugraph::check(&call, &mut out),
                _ => library_calls::check(&call, &mut out),
            }
        } else {
            cudf::check_method(cx, site, &mut tables);
            models::check_method(cx, site, &mut out);
        }
    }
    cudf::keep_worthwhile(cx, tables, &mut out);
    for (site, resolved) in matmuls {
        let Some((name, api)) = resolved else { continue };
        let call = Call { site, name, api, cx };
        let value = candidates.get(&site.node.id()).copied().flatten();
        cupy::check(&call, value, &chains, &summaries, &mut out);
    }
    loops::check(cx, &mut out);
    models::ray_casting_functions(cx, &mut out);
    // The data behind a plot is what gets drawn: small, and the time goes to drawing.
    // Code Numba compiles for the CPU is machine code already, and cannot call CuPy.
    out.retain(|f| {
        f.code.rule().kind == Kind::GpuCode
            || f.code == Code::NUMBA002
            || cx
                .module
                .node_at(f.range.clone())
                .is_none_or(|node| !context::in_plotting_function(cx, node) && !context::in_cpu_jit(cx, node))
    });
    // Advice that rests on a guess about a value says what the guess rests on.
    for f in out.iter_mut().filter(|f| f.code.rule().kind == Kind::Advice) {
        if let Some(phrase) = evidence_phrase(cx, f.range.clone()) {
            f.details = join([phrase, std::mem::take(&mut f.details)]);
        }
    }
    gpu::check(cx, &mut out);
    // Several GPUs attached: the RAPIDS libraries have a distributed path.
    if cx.gpu.device_count.is_some_and(|n| n > 1) {
        for f in out.iter_mut().filter(|f| matches!(f.library, "cudf" | "cuml" | "cugraph") && f.code.rule().kind == Kind::Advice) {
            f.details = join([std::mem::take(&mut f.details), scale_out_phrase(cx, f.library, None)]);
        }
    }
    // What a zero-code-change mode the code switches on already does is not advice.
    for (library, done) in DONE_BY_MODE {
        if !done.is_empty() && mode_switched_on(cx, library) {
            out.retain(|f| !done.contains(&f.code));
        }
    }
    out
}

/// Drops light fits (a scaler's) in functions with no other GPU work (see
/// [`models::keep_light_fits_beside_work`]). Run on the findings that are
/// said: after tests, suppressions and disabled rules are left out, so that
/// a finding nobody sees (in a test's decorator, say) keeps no scaler.
pub(crate) fn keep_light_fits(cx: &Context<'_, '_>, findings: &mut Vec<Finding>) {
    models::keep_light_fits_beside_work(cx, findings);
}

/// The advice a library's zero-code-change mode carries out by itself:
/// with `cudf.pandas` on, pandas readers and table work already run on the
/// GPU; with `cuml.accel` on, the estimators it accelerates do. What the
/// mode leaves on the CPU (its fallbacks, CUDF004 and CUML002; a row loop,
/// CUDF003; functions it does not patch, CUML003) is still said.
const DONE_BY_MODE: &[(&str, &[Code])] = &[("cudf", &[Code::CUDF001, Code::CUDF002]), ("cuml", &[Code::CUML001])];

/// Whether the module switches on `library`'s zero-code-change mode: its
/// install call (`cudf.pandas.install()`) as a statement, or in a notebook
/// its magic (`%load_ext cudf.pandas`) as a line of its own.
pub(crate) fn mode_switched_on(cx: &Context<'_, '_>, library: &str) -> bool {
    switched_on(cx.module.text, cx.settings, library)
}

/// [`mode_switched_on`] from the text alone.
fn switched_on(text: &str, settings: &crate::Settings, library: &str) -> bool {
    let Some(mode) = Knowledge::get().library(library).and_then(|l| l.zero_code_change.as_ref()) else { return false };
    let install = mode.code.as_deref().and_then(|c| c.lines().last()).map(str::trim).filter(|c| !c.is_empty());
    // (A notebook's line magics are read as comments: `#load_ext cudf.pandas`.)
    let magic = mode.notebook.as_deref().filter(|_| settings.notebook.is_some()).map(|m| m.trim_start_matches('%'));
    // (Most texts name neither: one search over the bytes answers for them.)
    let install_name = install.and_then(|c| c.split('(').next()).filter(|n| !n.is_empty());
    let magic_name = magic.and_then(|m| m.split_whitespace().last());
    let named = |n: Option<&str>| n.is_some_and(|n| memchr::memmem::find(text.as_bytes(), n.as_bytes()).is_some());
    if !named(install_name) && !named(magic_name) {
        return false;
    }
    text.lines().map(str::trim).any(|line| {
        install.is_some_and(|call| line == call)
            || magic.is_some_and(|m| line.strip_prefix(['#', '%']).is_some_and(|rest| rest.split_whitespace().eq(m.split_whitespace())))
    })
}

/// Which of [`DONE_BY_MODE`]'s modes the text switches on, as bits: part of
/// what every cached analysis of a function depends on (a line outside it
/// decides whether its advice stands).
pub(crate) fn modes_switched_on(text: &str, settings: &crate::Settings) -> u8 {
    DONE_BY_MODE.iter().enumerate().filter(|(_, (library, _))| switched_on(text, settings, library)).fold(0, |bits, (i, _)| bits | 1 << i)
}

/// A call resolved to a knowledge-base entry.
pub(crate) struct Call<'a, 't> {
    pub site: &'a CallSite<'t>,
    /// Fully qualified CPU name.
    pub name: String,
    pub api: &'static ApiMapping,
    pub cx: &'a Context<'a, 't>,
}

impl Call<'_, '_> {
    /// The callee as written (`np.fft.fft`).
    pub fn callee_text(&self) -> &str {
        if crate::semantic::matmul_operands(self.site.node).is_some() {
            return "@";
        }
        self.site.node.field("function").map_or("", |f| self.cx.module.text_of(f))
    }

    pub fn library(&self) -> &'static Library {
        library(self.cx, &self.api.library)
    }

    pub fn finding(&self, code: Code, message: String, details: String) -> Finding {
        finding(self.site.node, code, message, details)
    }

    /// The documented fallbacks whose condition this call meets.
    pub fn matched_fallbacks(&self) -> Vec<&'static Fallback> {
        self.api.fallbacks.iter().filter(|f| fallback_applies(self.cx, self.site.node, f)).collect()
    }

    /// Whether a known size is below the point where the GPU pays off.
    pub fn is_small(&self, value: Value) -> bool {
        is_small(self.cx, value)
    }
}

/// How to run the code unchanged under a zero-code-change mode, as the
/// start of a sentence: the command for a script, the magic of a
/// notebook's first cell.
pub(crate) fn run_unchanged(cx: &Context<'_, '_>, mode: &gpulens_knowledge::ZeroCodeChange) -> String {
    match mode.notebook.as_deref().filter(|_| cx.settings.notebook.is_some()) {
        Some(magic) => format!("Run the notebook unchanged with `{magic}` in its first cell"),
        None => format!("Run the script unchanged with `{}`", mode.script),
    }
}

pub(crate) fn is_small(cx: &Context<'_, '_>, value: Value) -> bool {
    value.elements().is_some_and(|n| n < cx.settings.min_elements)
}

pub(crate) fn library(cx: &Context<'_, '_>, id: &str) -> &'static Library {
    cx.module.knowledge().library(id).expect("knowledge is checked to name only known libraries")
}

/// `message`: one sentence of about 100 characters at most; `details`: the
/// rest (see [`Finding`]).
pub(crate) fn finding(node: Node<'_>, code: Code, message: String, details: String) -> Finding {
    let rule = code.rule();
    Finding {
        range: node.byte_range(),
        code,
        library: rule.library,
        severity: rule.severity,
        message,
        details,
        stays_on_cpu: matches!(code, Code::CUML002 | Code::CUDF004),
        fix: None,
    }
}

/// Sentences (or paragraphs) joined by one space, empty ones left out and
/// each trimmed: how a finding's details are put together from phrases
/// that may or may not apply.
pub(crate) fn join<S: AsRef<str>>(parts: impl IntoIterator<Item = S>) -> String {
    let mut out = String::new();
    for part in parts {
        let part = part.as_ref().trim();
        if part.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(part);
    }
    out
}

/// A callee as a message shows it: as written when short and on one line
/// (`np.fft.fft`), else its last name (`.sum` for
/// `np.array([...long...]).sum`).
pub(crate) fn short_callee(callee: &str) -> std::borrow::Cow<'_, str> {
    if callee.len() <= 40 && !callee.contains('\n') {
        return callee.into();
    }
    match callee.rsplit_once('.') {
        Some((_, last)) if !last.is_empty() && last.len() <= 40 && !last.contains(char::is_whitespace) => format!(".{last}").into(),
        _ => callee.chars().take(37).chain("...".chars()).collect::<String>().into(),
    }
}

/// " on 1,000,000 elements" for a message, or nothing when the size is unknown.
pub(crate) fn size_on(value: Value, unit: &str) -> String {
    match value.elements() {
        Some(n) if n > 1 => format!(" on {} {unit}", thousands(n)),
        _ => String::new(),
    }
}

pub(crate) fn fallback_applies(cx: &Context<'_, '_>, call: Node<'_>, fallback: &Fallback) -> bool {
    if !fallback.then.is_empty() || !fallback.then_not_in.is_empty() {
        let Some(method) = method_on_result(cx, call) else { return false };
        if !fallback.then.is_empty() && !fallback.then.iter().any(|m| m == method) {
            return false;
        }
        if fallback.then_not_in.iter().any(|m| m == method) {
            return false;
        }
    }
    let Some(param) = fallback.param.as_deref() else { return true };
    let value = match fallback.position {
        Some(position) => cx.module.argument(call, param, position),
        None => cx.module.keyword(call, param),
    };
    let Some(value) = value else { return fallback.absent };
    if fallback.present {
        return true;
    }
    if fallback.callable {
        return context::python_callable(cx, call, value);
    }
    let text: String = cx.module.text_of(value).split_whitespace().collect();
    if fallback.equals.contains(&text) {
        return true;
    }
    let literal = matches!(value.kind_name(), "string" | "integer" | "float" | "true" | "false" | "none");
    !fallback.not_in.is_empty() && literal && !fallback.not_in.contains(&text)
}

/// The method called on a call's result, past any `[...]` selection:
/// `median` in `df.rolling(3).median()` and in `df.rolling(3)["x"].median()`.
/// Nothing when the result is stored or passed on instead.
pub(crate) fn method_on_result<'t>(cx: &Context<'_, 't>, call: Node<'_>) -> Option<&'t str> {
    let mut current = call;
    let mut parent = current.parent()?;
    while parent.kind_name() == "subscript" && parent.field("value") == Some(current) {
        current = parent;
        parent = current.parent()?;
    }
    let method = parent.field("attribute").filter(|_| parent.kind_name() == "attribute" && parent.field("object") == Some(current))?;
    let called = parent.parent().is_some_and(|c| c.kind_name() == "call" && c.field("function") == Some(parent));
    called.then(|| cx.module.text_of(method))
}

/// The install command, for the CUDA major the GPU profile reports, or both.
pub(crate) fn install(cx: &Context<'_, '_>, lib: &Library) -> String {
    lib.install_for(cx.gpu.cuda_major, cx.gpu.compute_capability()).phrase()
}

/// The package a new CUDA kernel is written for, and why.
pub(crate) struct KernelPackage {
    /// The import the kernel needs (`from numba_cuda_mlir import cuda`).
    pub import_line: &'static str,
    /// The install command(s), as [`install`] gives them.
    pub install: String,
    /// A sentence on the choice, starting with a space.
    pub why: String,
}

impl KernelPackage {
    /// The module the import line binds: `numba_cuda_mlir.cuda`.
    pub fn module(&self) -> String {
        let line = self.import_line.trim_start_matches("from ");
        match line.split_once(" import ") {
            Some((package, name)) => format!("{package}.{name}"),
            None => line.trim_start_matches("import ").to_string(),
        }
    }
}

/// Numba-CUDA-MLIR, NVIDIA's current package for Numba's CUDA kernels,
/// unless the kernel needs what only numba-cuda (in maintenance mode) has:
/// a GPU older than Volta, CUDA ufuncs (`ufunc`), or a file whose kernels
/// already import `numba.cuda` (a new kernel beside them uses the same
/// package; moving the file over is one import line).
pub(crate) fn kernel_package(cx: &Context<'_, '_>, ufunc: bool) -> KernelPackage {
    let lib = library(cx, "numba");
    let legacy = lib.legacy.as_ref().expect("knowledge names numba-cuda as the numba entry's legacy package");
    let cc = cx.gpu.compute_capability();
    let sites = cx.module.import_sites();
    let imports = |prefix: &str| {
        sites.iter().any(|(_, m)| m == prefix || m.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('.')))
    };
    let current_min = gpulens_knowledge::parse_cc(&lib.min_compute_capability.cu12);
    let reason = if imports("numba_cuda_mlir") {
        None
    } else if imports("numba.cuda") {
        Some(format!(
            "this file's kernels already use it (`{}`); moving the file to Numba-CUDA-MLIR is usually that one \
             line changed to `{}`",
            legacy.import_line.as_deref().unwrap_or_default(),
            lib.import_line.as_deref().unwrap_or_default()
        ))
    } else if let Some((cc, min)) = cc.zip(current_min).filter(|(cc, min)| cc < min) {
        Some(format!(
            "{} has compute capability {}.{}, below the {}.{} that Numba-CUDA-MLIR needs",
            cx.gpu.display_name(),
            cc.0,
            cc.1,
            min.0,
            min.1
        ))
    } else if ufunc {
        Some("Numba-CUDA-MLIR does not support CUDA ufuncs yet".to_string())
    } else {
        None
    };
    match reason {
        Some(reason) => KernelPackage {
            import_line: legacy.import_line.as_deref().unwrap_or("from numba import cuda"),
            install: legacy.install_for(cx.gpu.cuda_major, cc).phrase(),
            why: format!(" It is written for {} (in maintenance mode): {reason}.", legacy.name),
        },
        None => KernelPackage {
            import_line: lib.import_line.as_deref().unwrap_or("from numba_cuda_mlir import cuda"),
            install: install(cx, lib),
            why: format!(
                " It is written for Numba-CUDA-MLIR (`{}`), NVIDIA's successor to {}, which is in maintenance mode.",
                lib.import_line.as_deref().unwrap_or_default(),
                legacy.name
            ),
        },
    }
}

/// Findings for libraries the profile's GPU is too old to run: say so
/// instead of recommending them.
pub(crate) fn gate_by_compute_capability(cx: &Context<'_, '_>, findings: &mut [Finding]) {
    let Some(cc) = cx.gpu.compute_capability() else { return };
    let knowledge = cx.module.knowledge();
    for f in findings.iter_mut().filter(|f| f.code.rule().kind == Kind::Advice) {
        let Some(lib) = knowledge.library(f.library) else { continue };
        // The oldest GPU any of its packages runs on (numba-cuda runs where
        // Numba-CUDA-MLIR does not).
        let Some(min) = std::iter::once(&lib.min_compute_capability.cu12)
            .chain(lib.legacy.iter().map(|l| &l.min_compute_capability.cu12))
            .filter_map(|m| gpulens_gpu::parse_cc(m))
            .min()
        else {
            continue;
        };
        if cc < min {
            f.severity = crate::Severity::Info;
            f.stays_on_cpu = true;
            let advice = std::mem::take(&mut f.message);
            f.message = format!("{} cannot run on {} (compute capability {}.{} < {}.{})", lib.name, cx.gpu.display_name(), cc.0, cc.1, min.0, min.1);
            f.details = join([
                format!(
                    "Current {} releases need compute capability {}.{} or newer, so this code would stay on the CPU \
                     there. On a newer GPU: {advice}",
                    lib.name, min.0, min.1
                ),
                std::mem::take(&mut f.details),
            ]);
        }
    }
}

/// A sentence on float64, for GPUs that run it far slower than float32.
pub(crate) fn fp64_phrase(cx: &Context<'_, '_>) -> String {
    match cx.gpu.fp64_divisor {
        Some(d) if d >= 32 => format!(
            " On {}, float64 runs at 1/{d} of float32 speed, and NumPy's default is float64: use float32 \
             (`dtype=np.float32`, or `.astype(np.float32)`) where the precision allows.",
            cx.gpu.display_name()
        ),
        _ => String::new(),
    }
}

/// `12,345,678`
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// " (1,000,000 elements here)", or nothing when the size is unknown.
pub(crate) fn size_phrase(value: Value, unit: &str) -> String {
    match value.elements() {
        Some(n) if n > 1 => format!(" ({} {unit} here)", thousands(n)),
        _ => String::new(),
    }
}

pub(crate) fn loop_phrase(site: &CallSite<'_>) -> &'static str {
    if site.loop_depth > 0 {
        " It sits inside a loop, so it runs many times: keep its data on the GPU across iterations."
    } else {
        ""
    }
}

/// An expected speedup for a library's rewrite on the profile's GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    pub low: f64,
    pub high: f64,
    /// The GPU the figure is for ("NVIDIA RTX 4090"), or the measuring GPU when none is known.
    pub gpu: String,
    /// Where it comes from, in words.
    pub basis: String,
}

/// The speedups gpulens measured for this library's rewrites
/// (`knowledge/measured.toml`), carried over to the profile's GPU: the copies
/// as measured (PCIe is similar across current machines), the GPU work
/// scaled by memory bandwidth (these rewrites are bandwidth-bound). A range
/// over the library's examples; none when nothing was measured.
pub fn estimated_speedup(library: &str, gpu: &GpuProfile) -> Option<Estimate> {
    let knowledge = Knowledge::get();
    let measured = &knowledge.measured;
    // (The measuring GPU's bandwidth, looked up once: a lookup normalises
    // every model's names, and every finding asks.)
    static REFERENCE: std::sync::OnceLock<Option<f64>> = std::sync::OnceLock::new();
    let reference = (*REFERENCE.get_or_init(|| knowledge.gpu_model(&measured.gpu).map(|g| g.memory_bandwidth_gbs)))?;
    let target = gpu.memory_bandwidth_gbs.filter(|b| *b > 0.0);
    let ratio = target.map_or(1.0, |t| reference / t);
    let mut speedups = measured.runs.iter().filter(|r| r.library == library && r.status == "ran" && r.agree).filter_map(|r| {
        let (cpu, e2e) = (r.cpu_s?, r.gpu_end_to_end_s?);
        match (r.copies_s, r.gpu_alone_s) {
            (Some(copies), Some(alone)) if copies + alone > 0.0 => {
                // Copies as measured, the rest of the end-to-end time scaled.
                let rest = (e2e - copies).max(alone);
                Some(cpu / (copies.min(e2e) + rest * ratio))
            }
            _ => Some(cpu / (e2e * ratio)),
        }
    });
    let first = speedups.next()?;
    let (low, high) = speedups.fold((first, first), |(lo, hi), s| (lo.min(s), hi.max(s)));
    let basis = match target {
        Some(t) if gpu.name.as_deref() != Some(measured.gpu.as_str()) => format!(
            "gpulens's rewrites of this kind measured on an {} ({}), the GPU work scaled by memory bandwidth ({reference:.0} → {t:.0} GB/s)",
            measured.gpu, measured.date
        ),
        _ => format!("gpulens's rewrites of this kind measured on an {} ({})", measured.gpu, measured.date),
    };
    let gpu_name = if target.is_some() { gpu.display_name() } else { measured.gpu.clone() };
    Some(Estimate { low, high, gpu: gpu_name, basis })
}

/// " Expected: about 6–21× end to end on …", or nothing.
pub(crate) fn estimate_phrase(cx: &Context<'_, '_>, library: &str) -> String {
    let Some(e) = estimated_speedup(library, cx.gpu) else { return String::new() };
    let range = if e.high - e.low < 0.5 { format!("{:.0}×", e.low) } else { format!("{:.0}–{:.0}×", e.low, e.high) };
    format!(
        " Expected: about {range} end to end on {}, copies included, against one CPU core ({}; your data and machine decide).",
        e.gpu, e.basis
    )
}

/// Data too big for one GPU, or several GPUs attached: the distributed path.
pub(crate) fn scale_out_phrase(cx: &Context<'_, '_>, library: &str, bytes: Option<u64>) -> String {
    let too_big = bytes.zip(cx.gpu.memory_bytes).filter(|(b, m)| b > m);
    let several = cx.gpu.device_count.filter(|n| *n > 1);
    let path = match library {
        "cudf" => "Dask-cuDF (`dask_cudf`, one partition per GPU)",
        "cuml" => "cuML's multi-GPU estimators on a Dask CUDA cluster (`cuml.dask`)",
        "cugraph" => "cuGraph's multi-GPU algorithms through Dask (`cugraph.dask`)",
        "raft" => "raft-dask",
        _ => "Dask arrays with CuPy chunks (`dask.array` over a `dask_cuda.LocalCUDACluster`)",
    };
    match (too_big, several) {
        (Some((b, m)), _) => format!(
            " At about {:.1} GB this data is larger than {}'s {:.1} GB of memory: a single-GPU rewrite would not fit. \
             Process it in chunks, or spread it over GPUs with {path}.",
            b as f64 / 1e9,
            cx.gpu.display_name(),
            m as f64 / 1e9
        ),
        (None, Some(n)) if matches!(library, "cudf" | "cuml" | "cugraph" | "raft") => {
            format!(" {n} GPUs are attached: {path} uses all of them.")
        }
        _ => String::new(),
    }
}

/// Tensor cores for matrix work, where the profile's GPU has them.
pub(crate) fn tensor_core_phrase(cx: &Context<'_, '_>) -> String {
    let types = &cx.gpu.tensor_core_types;
    if types.is_empty() {
        return String::new();
    }
    let mut parts = Vec::new();
    if types.iter().any(|t| t == "TF32") {
        parts.push("float32 products can run as TF32 (`CUPY_TF32=1`, about 3 decimal digits less precision)".to_string());
    }
    if types.iter().any(|t| t == "FP16") {
        parts.push("float16 inputs run on them directly".to_string());
    }
    let low: Vec<&str> = ["BF16", "FP8", "FP4"].into_iter().filter(|t| types.iter().any(|x| x == t)).collect();
    if !low.is_empty() {
        parts.push(format!("{} need PyTorch or Transformer Engine (CuPy has no such dtypes)", low.join(" and ")));
    }
    if parts.is_empty() {
        return String::new();
    }
    let name = cx.gpu.display_name();
    let name = match name.strip_prefix("the ") {
        Some(rest) => format!("The {rest}"),
        None => name,
    };
    format!(" {name} has tensor cores for matrix work: {}.", parts.join("; "))
}

/// What the value a finding is about rests on, when that is a guess: the
/// object of the method call the finding covers (`df` in `df.groupby(...)`)
/// documented as a DataFrame, passed one by a caller, or used as one.
fn evidence_phrase(cx: &Context<'_, '_>, range: std::ops::Range<usize>) -> Option<String> {
    use crate::semantic::Evidence;
    let module = cx.module;
    let node = module.node_at(range)?;
    let call = std::iter::once(node).chain(module.ancestors(node)).take(3).find(|n| n.kind_name() == "call")?;
    let function = call.field("function").filter(|f| f.kind_name() == "attribute")?;
    let object = function.field("object")?;
    let scope = module.enclosing_function(call).map_or(crate::semantic::MODULE_SCOPE, |f| f.id());
    let (name, evidence) = module.evidence(object, scope)?;
    Some(match evidence {
        Evidence::Documented(ty) => format!("`{name}` is documented as `{ty}`."),
        Evidence::Passed { caller, argument } => format!("`{name}` is what `{caller}` passes it: `{argument}`."),
        Evidence::UsedAs(what) => format!("`{name}` is used as a pandas or NetworkX object: `{what}`."),
        Evidence::Declared(function) => format!("`{name}` is what `{function}` returns, as that function declares."),
    })
}
