//! The API maps in `knowledge/api` against the GPU libraries' own coverage
//! lists in `knowledge/coverage` (written by `scripts/coverage`): every map
//! entry that promises a GPU equivalent names one the library lists, every
//! estimator cuml.accel replaces is mapped, every name CuPy and nx-cugraph
//! list is mapped or left out on purpose (`knowledge/coverage/left-out.toml`,
//! with why), and the share of each list the maps cover is kept in a snapshot
//! (`snapshots/coverage__shares.snap`), so a change in either shows in review.

use std::collections::{BTreeMap, BTreeSet};

use gpulens_knowledge::{ApiKind, Knowledge, Support};
use serde_json::Value;

fn list(name: &str) -> Value {
    let path = format!("{}/../../knowledge/coverage/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The names `knowledge/coverage/left-out.toml` leaves out on purpose for
/// `list` (`cupy`, `nx-cugraph`), each with the group's reason.
fn left_out(list: &str) -> BTreeMap<String, String> {
    let path = format!("{}/../../knowledge/coverage/left-out.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let table: toml::Table = toml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut out = BTreeMap::new();
    for group in table.get(list).and_then(|g| g.as_array()).map_or(&[][..], |g| &g[..]) {
        let why = group.get("why").and_then(|w| w.as_str()).unwrap_or_else(|| panic!("{path}: a {list} group without `why`"));
        assert!(!why.trim().is_empty(), "{path}: a {list} group with an empty `why`");
        for name in group.get("names").and_then(|n| n.as_array()).unwrap_or_else(|| panic!("{path}: a {list} group without `names`")) {
            let name = name.as_str().expect("a name").to_string();
            assert!(out.insert(name.clone(), why.to_string()).is_none(), "{path}: {name} is left out twice");
        }
    }
    out
}

/// The names nx-cugraph's function list uses for what the maps send to it:
/// a GPU name's last part (`nx_cugraph.pagerank`), and its last two joined
/// for a function of a subpackage that NetworkX dispatches under that name
/// (`nx_cugraph.bipartite.betweenness_centrality` is
/// `bipartite_betweenness_centrality`).
fn nx_cugraph_mapped(knowledge: &Knowledge) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for gpu in knowledge.apis.iter().filter_map(|a| a.gpu.as_deref()?.strip_prefix("nx_cugraph.")) {
        let parts: Vec<&str> = gpu.split('.').collect();
        names.insert(parts[parts.len() - 1].to_string());
        if parts.len() >= 2 {
            names.insert(format!("{}_{}", parts[parts.len() - 2], parts[parts.len() - 1]));
        }
    }
    names
}

fn strings(value: &Value) -> BTreeSet<String> {
    value.as_array().expect("a list").iter().map(|v| v.as_str().expect("a name").to_string()).collect()
}

/// CuPy's sections: NumPy/SciPy module → (GPU module, covered, missing, ufuncs).
struct CupySection {
    gpu_module: String,
    covered: BTreeSet<String>,
    missing: BTreeSet<String>,
    ufuncs: BTreeSet<String>,
}

fn cupy_sections() -> BTreeMap<String, CupySection> {
    let data = list("cupy");
    data["sections"]
        .as_array()
        .expect("sections")
        .iter()
        .map(|s| {
            (
                s["module"].as_str().expect("module").to_string(),
                CupySection {
                    gpu_module: s["gpu_module"].as_str().expect("gpu module").to_string(),
                    covered: strings(&s["covered"]),
                    missing: strings(&s["missing"]),
                    ufuncs: strings(&s["ufuncs"]),
                },
            )
        })
        .collect()
}

/// The section a qualified NumPy/SciPy name belongs to (the longest module
/// prefix), and the name within it.
fn section_of<'a>(sections: &'a BTreeMap<String, CupySection>, cpu: &'a str) -> Option<(&'a str, &'a CupySection, &'a str)> {
    let (module, name) = cpu.rsplit_once('.')?;
    sections.get_key_value(module).map(|(m, s)| (m.as_str(), s, name))
}

#[test]
fn cupy_maps_name_what_cupy_has() {
    let knowledge = Knowledge::get();
    let sections = cupy_sections();
    // CuPy's names, by module: each section's covered names under its GPU module.
    let cupy_has = |gpu: &str| {
        let Some((module, name)) = gpu.rsplit_once('.') else { return false };
        sections.values().any(|s| s.gpu_module == module && s.covered.contains(name))
    };
    let mut wrong = Vec::new();
    for api in knowledge.apis.iter().filter(|a| a.library == "cupy") {
        let promised = api.support != Support::Missing && api.gpu.is_some();
        if let Some(gpu) = api.gpu.as_deref().filter(|_| promised) {
            // (A GPU name of a module the lists do not cover, `cupyx.jit`, is not checked.)
            let listed_module = gpu.rsplit_once('.').is_some_and(|(m, _)| sections.values().any(|s| s.gpu_module == m));
            if listed_module && !cupy_has(gpu) {
                wrong.push(format!("{} maps to {gpu}, which CuPy {} does not have", api.cpu, version()));
            }
        }
        let Some((_, section, name)) = section_of(&sections, &api.cpu) else { continue };
        if !promised && section.covered.contains(name) {
            wrong.push(format!("{} is marked missing, but {}.{name} exists", api.cpu, section.gpu_module));
        }
    }
    assert!(wrong.is_empty(), "maps disagree with CuPy's coverage:\n{}", wrong.join("\n"));
}

fn version() -> String {
    list("cupy")["versions"]["cupy"].as_str().unwrap_or("?").to_string()
}

/// Every element-wise function CuPy has (NumPy's ufuncs, SciPy's special
/// functions) is mapped: by hand, or in `api/cupy-ufuncs.toml`, which
/// `scripts/coverage maps` writes from the list (or listed as element-wise
/// and deliberately left without an entry).
#[test]
fn every_element_wise_function_cupy_has_is_mapped() {
    let knowledge = Knowledge::get();
    let mut unmapped = Vec::new();
    for (module, section) in cupy_sections() {
        for name in section.ufuncs.iter().filter(|u| section.covered.contains(*u)) {
            let cpu = format!("{module}.{name}");
            match knowledge.api(&cpu) {
                Some(api) if api.library == "cupy" && api.elementwise => {}
                Some(api) if api.library == "cupy" && !api.elementwise && module == "numpy" => {
                    unmapped.push(format!("{cpu} is a ufunc, mapped without `elementwise = true`"))
                }
                Some(_) => {}
                None if knowledge.elementwise(&cpu) => {}
                None => unmapped.push(format!("{cpu} (run scripts/coverage maps)")),
            }
        }
    }
    assert!(unmapped.is_empty(), "element-wise functions CuPy has, not mapped:\n{}", unmapped.join("\n"));
}

#[test]
fn cuml_accel_estimators_are_all_mapped() {
    let knowledge = Knowledge::get();
    let listed = strings(&list("cuml")["estimators"]);
    let mut wrong = Vec::new();
    for name in &listed {
        match knowledge.api(name) {
            Some(api) if api.library == "cuml" && api.support != Support::Missing => {}
            Some(api) => wrong.push(format!("{name} is replaced by cuml.accel, but mapped as {} {:?}", api.library, api.support)),
            None => wrong.push(format!("{name} is replaced by cuml.accel, but not mapped")),
        }
    }
    // The other way round: an estimator mapped as running on the GPU under
    // cuml.accel is one it replaces.
    for api in knowledge.apis.iter().filter(|a| a.library == "cuml" && a.kind == ApiKind::Estimator) {
        if matches!(api.support, Support::Full | Support::Partial) && !listed.contains(&api.cpu) {
            wrong.push(format!("{} is mapped as accelerated, but cuml.accel does not replace it", api.cpu));
        }
    }
    assert!(wrong.is_empty(), "maps disagree with cuml.accel:\n{}", wrong.join("\n"));
}

#[test]
fn nx_cugraph_maps_name_what_the_backend_implements() {
    let knowledge = Knowledge::get();
    let listed = strings(&list("nx-cugraph")["functions"]);
    let mut wrong = Vec::new();
    for api in knowledge.apis.iter().filter(|a| a.library == "cugraph" && a.cpu.starts_with("networkx.")) {
        let Some(gpu) = api.gpu.as_deref().and_then(|g| g.strip_prefix("nx_cugraph.")) else { continue };
        let name = gpu.rsplit('.').next().unwrap_or(gpu);
        // (The graph classes are classes, not dispatched functions.)
        let class = name.starts_with(|c: char| c.is_ascii_uppercase());
        if api.support != Support::Missing && !class && !listed.contains(name) {
            wrong.push(format!("{} maps to {gpu}, which nx-cugraph does not implement", api.cpu));
        }
    }
    assert!(wrong.is_empty(), "maps disagree with nx-cugraph:\n{}", wrong.join("\n"));
}

/// Coverage that is complete, not sampled: every name CuPy's and
/// nx-cugraph's lists give is mapped or left out on purpose with a reason,
/// and nothing is both.
#[test]
fn every_listed_name_is_mapped_or_left_out() {
    let knowledge = Knowledge::get();
    let mut wrong = Vec::new();
    let cupy_left = left_out("cupy");
    let mut listed = BTreeSet::new();
    for (module, section) in cupy_sections() {
        for name in &section.covered {
            let cpu = format!("{module}.{name}");
            let mapped = knowledge.api(&cpu).is_some();
            match (mapped, cupy_left.contains_key(&cpu)) {
                (false, false) => wrong.push(format!("{cpu}: CuPy has it, but it is neither mapped nor left out")),
                (true, true) => wrong.push(format!("{cpu}: both mapped and left out")),
                _ => {}
            }
            listed.insert(cpu);
        }
    }
    wrong.extend(cupy_left.keys().filter(|n| !listed.contains(*n)).map(|n| format!("{n}: left out, but CuPy's list has no such name")));
    let nx = strings(&list("nx-cugraph")["functions"]);
    let nx_left = left_out("nx-cugraph");
    let mapped = nx_cugraph_mapped(knowledge);
    for name in &nx {
        match (mapped.contains(name), nx_left.contains_key(name)) {
            (false, false) => wrong.push(format!("{name}: nx-cugraph implements it, but it is neither mapped nor left out")),
            (true, true) => wrong.push(format!("{name}: both mapped and left out")),
            _ => {}
        }
    }
    wrong.extend(nx_left.keys().filter(|n| !nx.contains(*n)).map(|n| format!("{n}: left out, but nx-cugraph's list has no such name")));
    assert!(wrong.is_empty(), "coverage lists and maps disagree:\n{}", wrong.join("\n"));
}

/// How much of each list the maps cover.
#[test]
fn shares() {
    let knowledge = Knowledge::get();
    let mut report = String::from(
        "| list | section | listed | mapped | share | left out on purpose | ufuncs listed | ufuncs mapped |\n|---|---|---|---|---|---|---|---|\n",
    );
    let cupy_left = left_out("cupy");
    let share = |mapped: usize, listed: usize| if listed == 0 { "-".to_string() } else { format!("{:.0}%", 100.0 * mapped as f64 / listed as f64) };
    let cupy = list("cupy");
    for (module, section) in cupy_sections() {
        let mapped = section.covered.iter().filter(|f| knowledge.api(&format!("{module}.{f}")).is_some()).count();
        let ufuncs: Vec<&String> = section.ufuncs.iter().filter(|u| section.covered.contains(*u)).collect();
        let ufuncs_mapped = ufuncs.iter().filter(|f| knowledge.api(&format!("{module}.{f}")).is_some()).count();
        let left = section.covered.iter().filter(|f| cupy_left.contains_key(&format!("{module}.{f}"))).count();
        report.push_str(&format!(
            "| CuPy {} | {module} | {} | {mapped} | {} | {left} | {} | {ufuncs_mapped} |\n",
            cupy["versions"]["cupy"].as_str().unwrap_or("?"),
            section.covered.len(),
            share(mapped, section.covered.len()),
            ufuncs.len(),
        ));
        let _ = &section.missing;
    }
    let cuml = strings(&list("cuml")["estimators"]);
    let mapped = cuml.iter().filter(|e| knowledge.api(e).is_some()).count();
    report.push_str(&format!("| cuml.accel | estimators | {} | {mapped} | {} | 0 | | |\n", cuml.len(), share(mapped, cuml.len())));
    let nx = strings(&list("nx-cugraph")["functions"]);
    let mapped_names = nx_cugraph_mapped(knowledge);
    let mapped = nx.iter().filter(|f| mapped_names.contains(*f)).count();
    let nx_left = left_out("nx-cugraph");
    let left = nx.iter().filter(|f| nx_left.contains_key(*f)).count();
    report.push_str(&format!("| nx-cugraph | functions | {} | {mapped} | {} | {left} | | |\n", nx.len(), share(mapped, nx.len())));
    println!("{report}");
    insta::assert_snapshot!("shares", report);
}
