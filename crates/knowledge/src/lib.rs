//! The decision framework as data: which NVIDIA library replaces which CPU
//! code, how to install it, and where it falls back to the CPU.
//!
//! Everything here is read from the TOML and Markdown files under
//! `knowledge/`, embedded at build time. This crate knows nothing of syntax
//! trees, editors or GPUs attached to the machine.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Deserialize;

mod files {
    include!(concat!(env!("OUT_DIR"), "/files.rs"));
}

/// Where a library stands upstream; advice for anything but `Active` says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Active,
    Maintenance,
    Archived,
    Discontinued,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::Maintenance => "maintenance",
            Status::Archived => "archived",
            Status::Discontinued => "discontinued",
        }
    }
}

/// A value that differs between CUDA 12 and CUDA 13 systems.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerCuda<T> {
    pub cu12: T,
    pub cu13: Option<T>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZeroCodeChange {
    /// The mode's name, e.g. `cudf.pandas`.
    pub name: String,
    /// How to run an unchanged script with it.
    pub script: String,
    /// The line(s) to put at the top of a notebook.
    pub notebook: Option<String>,
    /// The code to add at the top of a program, before the CPU library is imported.
    pub code: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Library {
    /// Short id used in rule output: `cupy`, `cudf`, …
    pub id: String,
    /// Display name: `CuPy`, `cuDF`, …
    pub name: String,
    /// One line: what CPU code it replaces.
    pub replaces: String,
    /// A paragraph on what it is best at.
    pub summary: String,
    pub status: Status,
    /// Set when status is not active: what to use instead, and why.
    pub successor: Option<String>,
    pub docs: String,
    pub install: PerCuda<String>,
    /// Extra words about installing (a separate package index, wheels only on GitHub…).
    pub install_note: Option<String>,
    pub zero_code_change: Option<ZeroCodeChange>,
    /// Minimum compute capability, as "major.minor".
    pub min_compute_capability: PerCuda<String>,
    /// Minimum NVIDIA driver version (major), per CUDA major.
    pub min_driver: PerCuda<u32>,
    pub platforms: Option<String>,
}

/// What a CPU API does to its data, which decides when a hint is right.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApiKind {
    /// Does work on array inputs: worth a hint unless the inputs are tiny.
    Compute,
    /// Produces data by computation (random numbers): worth a hint unless the requested size is tiny.
    Generate,
    /// Allocates or converts (`zeros`, `array`): never a hint by itself, but tells sizes.
    Create,
    /// Reads a file into memory.
    Read,
    /// A method on a DataFrame/Series (`cpu` is `pandas.DataFrame.groupby`).
    Method,
    /// A row-by-row loop or row-wise function (`iterrows`, `apply(axis=1)`).
    RowLoop,
    /// A machine-learning estimator or transformer class.
    Estimator,
    /// A function (model selection, metrics) that runs on what estimators produce.
    Function,
    /// A graph algorithm.
    Algorithm,
    /// A nearest-neighbour / vector-search index class (Faiss, Annoy, hnswlib…).
    Index,
    /// Builds a graph (a generator or a reader): tells the graph's size.
    Graph,
}

/// How well the GPU library covers a CPU API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Support {
    /// Same API, runs on the GPU.
    Full,
    /// Runs on the GPU with documented differences or restrictions (see `note`).
    Partial,
    /// Accepted, but the accelerator runs it on the CPU.
    Fallback,
    /// The GPU library has no equivalent: say so honestly, never promise a speedup.
    Missing,
}

/// Where a call's size (number of elements) can be read from.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SizeSpec {
    /// Positional index of the shape argument (an int or a tuple of ints).
    pub arg: Option<usize>,
    /// Keyword name of the shape argument.
    pub keyword: Option<String>,
    /// Every positional argument is a dimension (`numpy.random.rand(3, 4)`).
    #[serde(default)]
    pub varargs: bool,
    /// The argument is the data itself: a list/tuple literal whose elements are counted.
    #[serde(default)]
    pub data: bool,
}

/// A documented condition under which the GPU library runs a call on the CPU.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fallback {
    /// The keyword argument that decides it.
    pub param: String,
    /// Where the argument stands when it is passed positionally (0-based),
    /// for parameters usually given that way.
    #[serde(default)]
    pub position: Option<usize>,
    /// Falls back when the argument's source text is one of these (`True`, `"lbfgs"`).
    #[serde(default)]
    pub equals: Vec<String>,
    /// Falls back when the argument is a literal not in this list.
    #[serde(default)]
    pub not_in: Vec<String>,
    /// Falls back whenever the argument is given at all.
    #[serde(default)]
    pub present: bool,
    /// Falls back when the argument is absent (the default value is the unsupported one).
    #[serde(default)]
    pub absent: bool,
    /// Why, in words for the user.
    pub reason: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiMapping {
    /// Fully qualified CPU name, e.g. `numpy.fft.fft` or `pandas.DataFrame.groupby`.
    pub cpu: String,
    /// Fully qualified GPU name, when there is one.
    pub gpu: Option<String>,
    /// Library id; defaults to the file's `library`.
    #[serde(default)]
    pub library: String,
    pub kind: ApiKind,
    #[serde(default = "default_support")]
    pub support: Support,
    pub note: Option<String>,
    pub size: Option<SizeSpec>,
    #[serde(default)]
    pub fallbacks: Vec<Fallback>,
    /// Typical speedup on a large input, when a source gives one (e.g. "5-50x").
    pub speedup: Option<String>,
    /// Much work per element (FFT, sort, matmul, transcendental math, random
    /// generation on the device): worth the GPU even as a single call. Light
    /// work (add, abs, a sum) pays only when data stays on the GPU across
    /// several operations.
    #[serde(default)]
    pub heavy: bool,
}

fn default_support() -> Support {
    Support::Full
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ApiFile {
    library: String,
    /// The CPU modules this file describes (`numpy`, `scipy`), used to decide
    /// cheaply whether a source file can produce any finding at all.
    modules: Vec<String>,
    #[serde(default)]
    api: Vec<ApiMapping>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LibrariesFile {
    library: Vec<Library>,
}

/// One GPU model from the hardware table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuModel {
    /// Full marketing name as NVML reports it, e.g. "NVIDIA H200".
    pub name: String,
    /// Other names users write ("H200 SXM", "4090", "RTX 4090").
    #[serde(default)]
    pub aliases: Vec<String>,
    pub architecture: String,
    /// "major.minor"
    pub compute_capability: String,
    /// Memory in GB as on the datasheet (NVML reports slightly less).
    pub memory_gb: f64,
    /// Peak memory bandwidth in GB/s.
    pub memory_bandwidth_gbs: f64,
    /// Streaming multiprocessors (SMs), as on the datasheet: what NVML reports
    /// only on some drivers and devices.
    pub multiprocessors: Option<u32>,
    /// FP32 throughput divided by FP64 throughput: 2 means FP64 runs at half
    /// speed, 64 means at 1/64.
    pub fp64_divisor: u32,
    /// Data types the tensor cores accelerate (`FP16`, `BF16`, `TF32`, `FP8`, `INT8`, `FP64`…).
    #[serde(default)]
    pub tensor_core_types: Vec<String>,
    /// Datacenter, workstation or consumer.
    pub segment: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HardwareFile {
    gpu: Vec<GpuModel>,
}

/// `measured.toml`: rewrites timed on a real GPU.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MeasuredFile {
    gpu: String,
    date: String,
    command: String,
    run: Vec<MeasuredRun>,
}

/// One example, run on the CPU and rewritten on the GPU (or only checked).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasuredRun {
    pub example: String,
    pub library: String,
    pub rule: String,
    /// "ran", or "syntax" when the library could not run there.
    pub status: String,
    pub elements: Option<u64>,
    pub cpu_s: Option<f64>,
    pub gpu_end_to_end_s: Option<f64>,
    pub copies_s: Option<f64>,
    pub gpu_alone_s: Option<f64>,
    pub speedup_end_to_end: Option<f64>,
    pub speedup_gpu_alone: Option<f64>,
    #[serde(default)]
    pub agree: bool,
    pub note: Option<String>,
}

/// The measured table: which GPU, when, how, and the runs.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    pub gpu: String,
    pub date: String,
    pub command: String,
    pub runs: Vec<MeasuredRun>,
}

impl Measured {
    /// The range of end-to-end speedups measured for a library's rewrites
    /// whose results agreed with the CPU's.
    pub fn speedup_range(&self, library: &str) -> Option<(f64, f64)> {
        let mut found = self
            .runs
            .iter()
            .filter(|r| r.library == library && r.status == "ran" && r.agree)
            .filter_map(|r| r.speedup_end_to_end);
        let first = found.next()?;
        Some(found.fold((first, first), |(lo, hi), s| (lo.min(s), hi.max(s))))
    }
}

/// The whole knowledge base, parsed once.
#[derive(Debug)]
pub struct Knowledge {
    pub libraries: Vec<Library>,
    pub apis: Vec<ApiMapping>,
    /// Top-level CPU modules some mapping starts from (`numpy`, `pandas`, …).
    pub cpu_modules: Vec<String>,
    /// The hardware table: common NVIDIA GPUs.
    pub gpus: Vec<GpuModel>,
    /// Rewrites measured on a real GPU (`measured.toml`).
    pub measured: Measured,
    /// Looked up for most names a check meets: hashed with Fx, not SipHash.
    by_cpu: rustc_hash::FxHashMap<String, usize>,
    pages: HashMap<String, &'static str>,
}

/// An error in the embedded data: a bug in `knowledge/`, caught by the test suite.
#[derive(Debug)]
pub struct KnowledgeError(pub String);

impl std::fmt::Display for KnowledgeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for KnowledgeError {}

impl Knowledge {
    /// The embedded knowledge base. Panics only if the embedded data is
    /// invalid, which `tests::embedded_data_loads` rules out.
    pub fn get() -> &'static Knowledge {
        static KNOWLEDGE: OnceLock<Knowledge> = OnceLock::new();
        KNOWLEDGE.get_or_init(|| Knowledge::load().expect("embedded knowledge/ is valid"))
    }

    pub fn load() -> Result<Knowledge, KnowledgeError> {
        Self::from_files(files::FILES.iter().copied())
    }

    pub fn from_files<'a>(
        files: impl IntoIterator<Item = (&'a str, &'static str)>,
    ) -> Result<Knowledge, KnowledgeError> {
        let mut libraries = Vec::new();
        let mut apis = Vec::new();
        let mut cpu_modules = Vec::new();
        let mut pages = HashMap::new();
        let mut gpus = Vec::new();
        let mut measured = Measured::default();
        for (name, text) in files {
            let err = |e: toml::de::Error| KnowledgeError(format!("knowledge/{name}: {e}"));
            if name == "libraries.toml" {
                let file: LibrariesFile = toml::from_str(text).map_err(err)?;
                libraries.extend(file.library);
            } else if name == "measured.toml" {
                let file: MeasuredFile = toml::from_str(text).map_err(err)?;
                measured = Measured { gpu: file.gpu, date: file.date, command: file.command, runs: file.run };
            } else if name == "hardware.toml" {
                let file: HardwareFile = toml::from_str(text).map_err(err)?;
                gpus.extend(file.gpu);
            } else if name.starts_with("api/") && name.ends_with(".toml") {
                let file: ApiFile = toml::from_str(text).map_err(err)?;
                for mut api in file.api {
                    if api.library.is_empty() {
                        api.library = file.library.clone();
                    }
                    apis.push(api);
                }
                cpu_modules.extend(file.modules);
            } else if let Some(page) = name.strip_prefix("reference/").and_then(|n| n.strip_suffix(".md")) {
                pages.insert(page.to_string(), text);
            }
        }
        cpu_modules.sort();
        cpu_modules.dedup();
        let mut by_cpu = rustc_hash::FxHashMap::default();
        for (i, api) in apis.iter().enumerate() {
            if by_cpu.insert(api.cpu.clone(), i).is_some() {
                return Err(KnowledgeError(format!("{} is mapped twice", api.cpu)));
            }
            if !libraries.iter().any(|l: &Library| l.id == api.library) {
                return Err(KnowledgeError(format!("{}: unknown library {:?}", api.cpu, api.library)));
            }
        }
        for run in &measured.runs {
            if !libraries.iter().any(|l: &Library| l.id == run.library) {
                return Err(KnowledgeError(format!("measured.toml: {}: unknown library {:?}", run.example, run.library)));
            }
        }
        Ok(Knowledge { libraries, apis, cpu_modules, gpus, measured, by_cpu, pages })
    }

    pub fn library(&self, id: &str) -> Option<&Library> {
        self.libraries.iter().find(|l| l.id == id)
    }

    /// The mapping for a fully qualified CPU name such as `numpy.fft.fft`.
    pub fn api(&self, cpu: &str) -> Option<&ApiMapping> {
        self.by_cpu.get(cpu).map(|&i| &self.apis[i])
    }

    /// The GPU model a user means by `name`: case-insensitive, ignoring
    /// "NVIDIA"/"GeForce" and punctuation, matching a name or an alias
    /// ("4090", "RTX 4090" and "GeForce RTX 4090" all find the RTX 4090).
    pub fn gpu_model(&self, name: &str) -> Option<&GpuModel> {
        let wanted = normalise_gpu_name(name);
        if wanted.is_empty() {
            return None;
        }
        let names = |g: &'_ GpuModel| -> Vec<String> {
            std::iter::once(&g.name).chain(&g.aliases).map(|n| normalise_gpu_name(n)).collect()
        };
        self.gpus
            .iter()
            .find(|g| names(g).contains(&wanted))
            .or_else(|| {
                // "4090" → the one model whose name ends with that token.
                let mut hits = self.gpus.iter().filter(|g| names(g).iter().any(|n| n.split(' ').any(|t| t == wanted)));
                let first = hits.next()?;
                hits.next().is_none().then_some(first)
            })
    }

    /// How the mapped API of a CPU module (`numpy`, `sklearn`…) is covered,
    /// per GPU library: (library id, full, partial, fallback, missing).
    pub fn coverage(&self, module: &str) -> Vec<(&str, usize, usize, usize, usize)> {
        let prefix = format!("{module}.");
        let mut out: Vec<(&str, usize, usize, usize, usize)> = Vec::new();
        for api in self.apis.iter().filter(|a| a.cpu.starts_with(&prefix)) {
            let at = match out.iter().position(|c| c.0 == api.library) {
                Some(i) => i,
                None => {
                    out.push((api.library.as_str(), 0, 0, 0, 0));
                    out.len() - 1
                }
            };
            let c = &mut out[at];
            match api.support {
                Support::Full => c.1 += 1,
                Support::Partial => c.2 += 1,
                Support::Fallback => c.3 += 1,
                Support::Missing => c.4 += 1,
            }
        }
        out.sort_by_key(|c| std::cmp::Reverse(c.1 + c.2));
        out
    }

    /// The reference page (Markdown) for a library, when there is one.
    pub fn reference_page(&self, library: &str) -> Option<&'static str> {
        self.pages.get(library).copied()
    }
}

fn normalise_gpu_name(name: &str) -> String {
    let lower = name.to_ascii_lowercase().replace(['-', '_'], " ");
    lower
        .split_whitespace()
        .filter(|t| !matches!(*t, "nvidia" | "geforce" | "tesla" | "quadro"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_gpu_has_its_multiprocessor_count_and_h200_has_132() {
        let k = Knowledge::load().unwrap();
        for g in &k.gpus {
            assert!(g.multiprocessors.is_some_and(|n| (10..=200).contains(&n)), "{}: {:?}", g.name, g.multiprocessors);
        }
        assert_eq!(k.gpu_model("NVIDIA H200").and_then(|g| g.multiprocessors), Some(132));
        // The measured table names a GPU of the hardware table and only known libraries.
        assert!(k.gpu_model(&k.measured.gpu).is_some());
        assert!(k.measured.runs.iter().any(|r| r.status == "ran" && r.agree));
    }

    #[test]
    fn embedded_data_loads() {
        let k = Knowledge::load().unwrap_or_else(|e| panic!("{e}"));
        let ids: Vec<_> = k.libraries.iter().map(|l| l.id.as_str()).collect();
        for id in [
            "cupy", "numba", "warp", "cudf", "cuml", "cugraph", "kvikio", "cuxfilter", "cucim", "cuvs",
            "cuspatial", "raft",
        ] {
            assert!(ids.contains(&id), "library {id} missing from knowledge/libraries.toml");
        }
    }

    #[test]
    fn install_lines_use_uv() {
        let k = Knowledge::get();
        for lib in &k.libraries {
            for line in std::iter::once(&lib.install.cu12).chain(lib.install.cu13.iter()) {
                assert!(line.starts_with("uv add "), "{}: {line}", lib.id);
                assert!(!line.contains("pip install"), "{}: {line}", lib.id);
            }
        }
    }

    #[test]
    fn inactive_libraries_name_a_successor() {
        for lib in &Knowledge::get().libraries {
            if lib.status != Status::Active {
                assert!(lib.successor.is_some(), "{} is {:?} but names no successor", lib.id, lib.status);
            }
        }
    }

    #[test]
    fn seed_mappings_exist() {
        let k = Knowledge::get();
        for cpu in [
            "numpy.fft.fft",
            "numpy.sort",
            "numpy.random.rand",
            "pandas.read_parquet",
            "pandas.DataFrame.groupby",
            "sklearn.ensemble.RandomForestClassifier",
            "sklearn.preprocessing.StandardScaler",
            "networkx.pagerank",
            "networkx.betweenness_centrality",
        ] {
            assert!(k.api(cpu).is_some(), "{cpu} has no mapping");
        }
    }

    /// Every CuPy name the knowledge base points users to exists: checked on a
    /// machine with CuPy by tests/knowledge/gpu_names.py, whose output is
    /// committed as tests/knowledge/cupy-names.json. A new CuPy mapping needs a
    /// new run of that script.
    #[test]
    fn cupy_names_exist() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/knowledge/cupy-names.json");
        let checked: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let names = checked["names"].as_object().unwrap();
        let mut unchecked = Vec::new();
        for api in &Knowledge::get().apis {
            let Some(gpu) = api.gpu.as_deref() else { continue };
            if gpu.starts_with("cupy.") || gpu.starts_with("cupyx.") {
                match names.get(gpu) {
                    Some(serde_json::Value::Bool(true)) => {}
                    Some(_) => panic!("{gpu} (for {}) does not exist in CuPy {}", api.cpu, checked["versions"]["cupy"]),
                    None => unchecked.push(gpu),
                }
            }
        }
        assert!(unchecked.is_empty(), "not yet checked on a GPU machine (run tests/knowledge/gpu_names.py): {unchecked:?}");
    }

    #[test]
    fn duplicate_mapping_is_an_error() {
        let lib = r#"[[library]]
id = "cupy"
name = "CuPy"
replaces = "x"
summary = "x"
status = "active"
docs = "https://docs.cupy.dev"
install = { cu12 = "uv add cupy-cuda12x" }
min_compute_capability = { cu12 = "5.0" }
min_driver = { cu12 = 525 }
"#;
        let api = "library = \"cupy\"\nmodules = [\"numpy\"]\n[[api]]\ncpu = \"numpy.sort\"\nkind = \"compute\"\n[[api]]\ncpu = \"numpy.sort\"\nkind = \"compute\"\n";
        let err = Knowledge::from_files([("libraries.toml", lib), ("api/numpy.toml", api)]).unwrap_err();
        assert!(err.0.contains("mapped twice"), "{err}");
    }
}
