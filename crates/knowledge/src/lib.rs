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

mod api;
mod library;

pub use api::*;
pub use library::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ApiFile {
    library: String,
    /// The CPU modules this file describes (`numpy`, `scipy`), used to decide
    /// cheaply whether a source file can produce any finding at all.
    modules: Vec<String>,
    /// Element-wise functions that have no `[[api]]` entry (an entry says
    /// it with `elementwise = true`).
    #[serde(default)]
    elementwise: Vec<String>,
    #[serde(default)]
    methods: Vec<Methods>,
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
    /// Every library's `gpu_modules`: what the `GPU…` rules check.
    pub gpu_modules: Vec<String>,
    /// The hardware table: common NVIDIA GPUs.
    pub gpus: Vec<GpuModel>,
    /// Rewrites measured on a real GPU (`measured.toml`).
    pub measured: Measured,
    /// The api files' `[[methods]]`, one per library module.
    pub methods: Vec<Methods>,
    /// Every `work` method of `methods`, each once.
    pub work_methods: Names,
    /// Every element-wise function: the entries marked `elementwise` and
    /// the api files' `elementwise` lists.
    elementwise: rustc_hash::FxHashSet<String>,
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
        let mut methods: Vec<Methods> = Vec::new();
        let mut elementwise = rustc_hash::FxHashSet::default();
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
                for group in file.methods {
                    if !file.modules.contains(&group.module) {
                        return Err(KnowledgeError(format!("knowledge/{name}: methods of {:?}, not one of the file's modules", group.module)));
                    }
                    if methods.iter().any(|m| m.module == group.module) {
                        return Err(KnowledgeError(format!("knowledge/{name}: methods of {:?} are listed twice", group.module)));
                    }
                    methods.push(group);
                }
                elementwise.extend(file.elementwise);
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
        let mut gpu_modules: Vec<String> = libraries.iter().flat_map(|l: &Library| l.gpu_modules.iter().cloned()).collect();
        gpu_modules.sort();
        gpu_modules.dedup();
        let mut by_cpu = rustc_hash::FxHashMap::default();
        // (An element-wise function with an entry says so there, not in a list.)
        if let Some(listed) = apis.iter().find(|a| elementwise.contains(&a.cpu)) {
            return Err(KnowledgeError(format!("{} is listed as element-wise: mark its entry `elementwise = true`", listed.cpu)));
        }
        for (i, api) in apis.iter().enumerate() {
            if by_cpu.insert(api.cpu.clone(), i).is_some() {
                return Err(KnowledgeError(format!("{} is mapped twice", api.cpu)));
            }
            if api.elementwise && api.reduction {
                return Err(KnowledgeError(format!("{} is marked both element-wise and a reduction", api.cpu)));
            }
            if api.elementwise {
                elementwise.insert(api.cpu.clone());
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
        let mut work_methods = Vec::new();
        for method in methods.iter().flat_map(|m| m.work.iter()) {
            if !work_methods.iter().any(|w| w == method) {
                work_methods.push(method.to_string());
            }
        }
        let work_methods = Names::from(work_methods);
        Ok(Knowledge { libraries, apis, cpu_modules, gpu_modules, gpus, measured, methods, work_methods, elementwise, by_cpu, pages })
    }

    /// Whether the function named `cpu` (`numpy.exp`) works element by
    /// element (see [`ApiMapping::elementwise`]), mapped or not.
    pub fn elementwise(&self, cpu: &str) -> bool {
        self.elementwise.contains(cpu)
    }

    /// The library module (`pandas`, `networkx`) whose objects alone have the
    /// method or attribute `name` (see [`Methods::only`]).
    pub fn only_on(&self, name: &str) -> Option<&str> {
        self.methods.iter().find(|m| m.only.contains(name)).map(|m| m.module.as_str())
    }

    /// Whether the function `qualified` returns the arrays it is given,
    /// checked or converted (see [`Methods::converters`]).
    pub fn converter(&self, qualified: &str) -> bool {
        self.methods.iter().any(|m| m.converters.contains(qualified))
    }

    /// The function an array method mirrors (`dot` → `numpy.dot`), if the
    /// method is one of a library's `mirrors` (see [`Methods::mirrors`]).
    pub fn mirrored(&self, method: &str) -> Option<String> {
        self.methods.iter().find(|m| m.mirrors.contains(method)).map(|m| format!("{}.{method}", m.module))
    }

    /// Every array method that mirrors a function (see [`Methods::mirrors`]).
    pub fn mirror_words(&self) -> impl Iterator<Item = &str> {
        self.methods.iter().flat_map(|m| m.mirrors.iter())
    }

    /// Every name of every library's `only` list (see [`Methods::only`]).
    pub fn only_words(&self) -> impl Iterator<Item = &str> {
        self.methods.iter().flat_map(|m| m.only.iter())
    }

    /// The `queries` methods of a library's objects, by its module (`sklearn`).
    pub fn queries(&self, module: &str) -> &Names {
        static NONE: Names = Names { names: Vec::new(), signatures: 0 };
        self.methods.iter().find(|m| m.module == module).map_or(&NONE, |m| &m.queries)
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
    fn every_fallback_states_one_condition() {
        let k = Knowledge::load().unwrap();
        for api in &k.apis {
            for f in &api.fallbacks {
                assert_eq!(f.problem(), None, "{}: fallback {:?}", api.cpu, f.reason);
                assert!(!f.reason.trim().is_empty(), "{}: a fallback without a reason", api.cpu);
            }
        }
    }

    #[test]
    fn fallback_on_the_method_called_on_the_result() {
        let text = "library = \"cudf\"\nmodules = [\"pandas\"]\n[[api]]\ncpu = \"pandas.DataFrame.rolling\"\nkind = \"method\"\n\
                    [[api.fallbacks]]\nthen = [\"median\"]\nreason = \"r\"\n\
                    [[api.fallbacks]]\nparam = \"on\"\npresent = true\nthen_not_in = [\"sum\"]\nreason = \"r\"\n";
        let file: ApiFile = toml::from_str(text).unwrap();
        let [only_then, both] = &file.api[0].fallbacks[..] else { panic!("two fallbacks") };
        assert_eq!((only_then.param.as_deref(), &only_then.then[..], only_then.problem()), (None, &["median".to_string()][..], None));
        assert_eq!((both.param.as_deref(), &both.then_not_in[..], both.problem()), (Some("on"), &["sum".to_string()][..], None));
        // Strict: a misspelt key is an error, not a condition silently ignored.
        let misspelt = text.replace("then_not_in", "then_not");
        assert!(toml::from_str::<ApiFile>(&misspelt).is_err());
        // A condition must say what it tests.
        for (bad, problem) in [
            ("reason = \"r\"", "neither param nor then/then_not_in"),
            ("param = \"on\"\nreason = \"r\"", "param without equals, not_in, present, absent or callable"),
            ("present = true\nreason = \"r\"", "equals, not_in, present, absent or callable without param"),
            ("callable = true\nreason = \"r\"", "equals, not_in, present, absent or callable without param"),
            ("then = [\"a\"]\nthen_not_in = [\"b\"]\nreason = \"r\"", "both then and then_not_in"),
            ("param = \"on\"\npresent = true\nabsent = true\nreason = \"r\"", "more than one of equals, not_in, present, absent and callable"),
            ("param = \"on\"\ncallable = true\nequals = [\"x\"]\nreason = \"r\"", "more than one of equals, not_in, present, absent and callable"),
        ] {
            let text = format!("library = \"cudf\"\nmodules = [\"pandas\"]\n[[api]]\ncpu = \"x\"\nkind = \"method\"\n[[api.fallbacks]]\n{bad}\n");
            let file: ApiFile = toml::from_str(&text).unwrap();
            assert_eq!(file.api[0].fallbacks[0].problem(), Some(problem), "{bad}");
        }
    }

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
            for line in lib.install_lines() {
                assert!(line.starts_with("uv add "), "{}: {line}", lib.id);
                assert!(!line.contains("pip install"), "{}: {line}", lib.id);
            }
        }
    }

    #[test]
    fn every_library_says_when_and_against_what_it_was_checked() {
        for lib in &Knowledge::get().libraries {
            let date: Vec<&str> = lib.checked.split('-').collect();
            assert!(
                date.len() == 3 && date.iter().zip([4, 2, 2]).all(|(p, n)| p.len() == n && p.bytes().all(|b| b.is_ascii_digit())),
                "{}: checked = {:?} is not YYYY-MM-DD",
                lib.id,
                lib.checked
            );
            assert!(!lib.sources.is_empty(), "{} names no source for its facts", lib.id);
            if let Some(legacy) = &lib.legacy {
                assert!(legacy.install.cu12.starts_with("uv add "), "{}", lib.id);
            }
        }
    }

    /// The install line follows the driver's CUDA major and the GPU: Warp's
    /// PyPI wheels are CUDA 13 builds from 1.18, which need compute
    /// capability 7.5; older drivers and GPUs get the CUDA 12 pin.
    #[test]
    fn the_install_line_fits_the_driver_and_the_gpu() {
        let warp = Knowledge::get().library("warp").unwrap();
        let cu12 = "uv add \"warp-lang<1.18\"";
        let cu13 = "uv add warp-lang";
        assert_eq!(warp.install_for(Some(12), Some((9, 0))), InstallChoice::One(cu12));
        assert_eq!(warp.install_for(Some(13), Some((9, 0))), InstallChoice::One(cu13));
        // A CUDA 13 driver on a Volta GPU: CUDA 13 builds do not run there.
        assert_eq!(warp.install_for(Some(13), Some((7, 0))), InstallChoice::One(cu12));
        // A target GPU without a driver: both lines, unless the GPU rules CUDA 13 out.
        assert_eq!(warp.install_for(None, Some((8, 9))), InstallChoice::Both { cu12, cu13 });
        assert_eq!(warp.install_for(None, Some((6, 1))), InstallChoice::One(cu12));
        assert_eq!(warp.install_for(None, None), InstallChoice::Both { cu12, cu13 });
        // No CUDA 13 build at all: the CUDA 12 line everywhere.
        let cuspatial = Knowledge::get().library("cuspatial").unwrap();
        assert!(matches!(cuspatial.install_for(Some(13), Some((9, 0))), InstallChoice::One(l) if l.contains("cuspatial-cu12")));
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
    /// committed as tests/knowledge/cupy-names.json, or found by the coverage
    /// introspection of the same CuPy (knowledge/coverage/cupy.json: the
    /// names a CuPy module has of its NumPy/SciPy counterpart's). A new CuPy
    /// mapping outside both needs a new run of that script.
    #[test]
    fn cupy_names_exist() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/knowledge/cupy-names.json");
        let checked: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let names = checked["names"].as_object().unwrap();
        let coverage_path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../knowledge/coverage/cupy.json");
        let coverage: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(coverage_path).unwrap()).unwrap();
        assert_eq!(coverage["versions"]["cupy"], checked["versions"]["cupy"], "both lists are of the same CuPy");
        let introspected = |gpu: &str| {
            let (module, name) = gpu.rsplit_once('.').unwrap_or(("", gpu));
            coverage["sections"].as_array().unwrap().iter().any(|s| {
                s["gpu_module"] == module && s["covered"].as_array().unwrap().iter().any(|c| c == name)
            })
        };
        let mut unchecked = Vec::new();
        for api in &Knowledge::get().apis {
            let Some(gpu) = api.gpu.as_deref() else { continue };
            if gpu.starts_with("cupy.") || gpu.starts_with("cupyx.") {
                match names.get(gpu) {
                    Some(serde_json::Value::Bool(true)) => {}
                    Some(_) => panic!("{gpu} (for {}) does not exist in CuPy {}", api.cpu, checked["versions"]["cupy"]),
                    None if introspected(gpu) => {}
                    None => unchecked.push(gpu),
                }
            }
        }
        assert!(unchecked.is_empty(), "not yet checked on a GPU machine (run tests/knowledge/gpu_names.py): {unchecked:?}");
    }

    /// The API facts the rules read beside the mappings: which functions
    /// work element-wise or reduce, and the methods of models and indexes.
    #[test]
    fn api_facts_load() {
        let k = Knowledge::get();
        // Marked on an entry, or listed where there is none.
        assert!(k.elementwise("numpy.exp") && k.api("numpy.exp").unwrap().elementwise);
        assert!(k.elementwise("numpy.deg2rad") && k.api("numpy.deg2rad").is_none());
        assert!(!k.elementwise("numpy.sum") && !k.elementwise("numpy.fft.fft"));
        assert!(k.api("numpy.linalg.norm").unwrap().reduction && !k.api("numpy.cumsum").unwrap().reduction);
        // Every `work` method once; queries by module.
        let work: Vec<&str> = k.work_methods.iter().collect();
        for method in ["fit", "predict", "search", "knn_query", "get_nns_by_item", "query"] {
            assert_eq!(work.iter().filter(|w| **w == method).count(), 1, "{method}");
        }
        assert!(k.queries("sklearn").contains("radius_neighbors_graph") && !k.work_methods.contains("radius_neighbors_graph"));
        assert!(k.queries("trimesh").contains("intersects_location") && !k.queries("trimesh").contains("intersects"));
        assert!(k.queries("faiss").contains("add_with_ids") && k.queries("pynndescent").is_empty());
        assert!(k.queries("nowhere").is_empty());
        // The pre-scan's test of a name agrees with comparing it.
        for name in ["fit", "fits", "f", "", "search", "searcher", "query", "build", "buil"] {
            assert_eq!(k.work_methods.contains(name), work.contains(&name), "{name}");
        }
    }

    #[test]
    fn api_facts_are_checked() {
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
checked = "2026-12-05"
sources = ["x"]
"#;
        let entry = "[[api]]\ncpu = \"numpy.exp\"\nkind = \"compute\"\n";
        // (The knowledge base keeps the texts it reads: leaked, in a test.)
        let error = |api: &str| {
            let api: &'static str = Box::leak(api.to_string().into_boxed_str());
            Knowledge::from_files([("libraries.toml", lib), ("api/numpy.toml", api)]).unwrap_err().0
        };
        // An entry says it is element-wise itself.
        let listed = format!("library = \"cupy\"\nmodules = [\"numpy\"]\nelementwise = [\"numpy.exp\"]\n{entry}");
        assert!(error(&listed).contains("mark its entry"), "{}", error(&listed));
        let both = format!("library = \"cupy\"\nmodules = [\"numpy\"]\n{entry}elementwise = true\nreduction = true\n");
        assert!(error(&both).contains("both element-wise and a reduction"));
        // Methods belong to one of the file's modules, once.
        let stranger = "library = \"cupy\"\nmodules = [\"numpy\"]\n[[methods]]\nmodule = \"faiss\"\nwork = [\"search\"]\n";
        assert!(error(stranger).contains("not one of the file's modules"));
        let twice = "library = \"cupy\"\nmodules = [\"numpy\"]\n[[methods]]\nmodule = \"numpy\"\n[[methods]]\nmodule = \"numpy\"\n";
        assert!(error(twice).contains("listed twice"));
        let misspelt = "library = \"cupy\"\nmodules = [\"numpy\"]\n[[methods]]\nmodule = \"numpy\"\nqueries = []\nworks = []\n";
        assert!(error(misspelt).contains("works"));
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
checked = "2026-12-05"
sources = ["x"]
"#;
        let api = "library = \"cupy\"\nmodules = [\"numpy\"]\n[[api]]\ncpu = \"numpy.sort\"\nkind = \"compute\"\n[[api]]\ncpu = \"numpy.sort\"\nkind = \"compute\"\n";
        let err = Knowledge::from_files([("libraries.toml", lib), ("api/numpy.toml", api)]).unwrap_err();
        assert!(err.0.contains("mapped twice"), "{err}");
    }
}
