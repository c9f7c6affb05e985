//! Models and search indexes used away from where they are built: a
//! scikit-learn estimator or a Faiss/Annoy/hnswlib index stored on `self` in
//! one method (`self.nn = NearestNeighbors(...)`) and fitted or searched in
//! another. Where it is built, CUML001/CUVS001 already speak; the methods
//! that do the work get the same advice, so that the function that spends
//! the time is the one that shows it.

use std::sync::OnceLock;

use gpulens_syntax::NodeExt;
use gpulens_knowledge::{ApiKind, Knowledge, Names};

use super::{install, join, library, short_callee, Call};
use crate::Code;
use crate::semantic::{CallSite, Value};

use crate::{Context, Finding};

/// Methods that do a model's or an index's work (not its configuration):
/// every library's `work` methods in the knowledge base.
pub(crate) fn work() -> &'static Names {
    &Knowledge::get().work_methods
}

/// scikit-learn's nearest-neighbours queries: only its neighbours models
/// (`NearestNeighbors`, `KNeighbors*`, `RadiusNeighbors*`) answer them.
pub(crate) fn neighbour_queries() -> &'static Names {
    static QUERIES: OnceLock<&'static Names> = OnceLock::new();
    QUERIES.get_or_init(|| Knowledge::get().queries("sklearn"))
}

pub(super) fn check_method(cx: &Context<'_, '_>, site: &CallSite<'_>, out: &mut Vec<Finding>) {
    let module = cx.module;
    let Some(function) = site.node.field("function").filter(|f| f.kind_name() == "attribute") else { return };
    let (Some(object), Some(method)) = (function.field("object"), function.field("attribute")) else {
        return;
    };
    if neighbour_queries().contains(module.text_of(method)) {
        neighbour_query(cx, site, object, module.text_of(method), out);
    }
    if ray_queries().contains(module.text_of(method)) {
        ray_query(cx, site, object, module.text_of(method), out);
    }
    index_work(cx, site, object, module.text_of(method), out);
    // Through `self`, a parameter (what callers pass, what the class
    // documents) or `clone(...)` of one: a model built in the same function
    // is flagged where it is built.
    if site.in_check {
        return;
    }
    let method = module.text_of(method);
    if !work().contains(method) {
        return;
    }
    let Value::Model(cpu) = module.value(object, site.scope) else { return };
    // Built in this same function: the finding where it is built says it.
    let target = module.text_of(object);
    // (Built: constructed from its class, not `clone(...)` of another.)
    let built_here = super::context::function_of(module, site.node).is_some_and(|f| {
        module.preorder(f).any(|n| {
            n.kind_name() == "assignment"
                && n.field("left").is_some_and(|l| module.text_of(l) == target)
                && n.field("right").is_some_and(|r| {
                    r.kind_name() == "call" && module.resolve_call_in(r, site.scope).is_some_and(|(_, api)| matches!(api.kind, ApiKind::Estimator | ApiKind::Index))
                })
        })
    });
    // A name bound to the construction itself (`forest = RandomForestClassifier(...)`,
    // at module level too): flagged where it is built.
    // (Or the receiver is the construction: `KMeans(8).fit(X)`.)
    let construction = |n: gpulens_syntax::Node<'_>| {
        n.kind_name() == "call" && module.resolve_call_in(n, site.scope).is_some_and(|(_, api)| matches!(api.kind, ApiKind::Estimator | ApiKind::Index))
    };
    let constructed = construction(object) || module.assigned_from(object, site.scope).is_some_and(construction);
    if built_here || constructed {
        return;
    }
    // Work on one row (`model.predict(X[0:1])`, to test that it is fitted)
    // or on data known to be small is not where the time goes.
    if module.positional(site.node).first().is_some_and(|a| {
        super::context::one_row(module, *a) || super::is_small(cx, module.value(*a, site.scope))
    }) {
        return;
    }
    let Some(api) = module.knowledge().api(cpu) else { return };
    let call = Call { site, name: cpu.to_string(), api, cx };
    if !call.matched_fallbacks().is_empty() {
        return;
    }
    let lib = library(cx, &api.library);
    let short = cpu.rsplit('.').next().unwrap_or(cpu);
    let gpu = api.gpu.as_deref().unwrap_or_default();
    let (code, how) = match api.kind {
        ApiKind::Estimator => (
            Code::CUML001,
            match lib.zero_code_change.as_ref() {
                Some(z) => format!("{}, or use `{gpu}` where the model is built.", super::run_unchanged(cx, z)),
                None => format!("Use `{gpu}` where the model is built."),
            },
        ),
        ApiKind::Index => (Code::CUVS001, format!("Build it with `{gpu}` instead, where it is built, and search that.")),
        _ => return,
    };
    let note = api.note.as_deref().map(|n| format!("Note: {}", n.split_whitespace().collect::<Vec<_>>().join(" "))).unwrap_or_default();
    let receiver = short_callee(module.text_of(object));
    out.push(call.finding(
        code,
        format!("`{receiver}.{method}()` runs a `{short}` on the CPU: {} runs it on the GPU", lib.name),
        join([
            format!(
                "`{}.{method}()` runs a `{short}` ({cpu}) built outside this function: the work happens here, on the \
                 CPU; {} runs it on the GPU.",
                module.text_of(object),
                lib.name
            ),
            how,
            note,
            format!("Install: {}.", install(cx, lib)),
        ]),
    ));
}

/// `nn.kneighbors(X)` on an object whose construction this code does not
/// show (a parameter, or a model a helper of another module builds): the
/// method is scikit-learn's neighbours API, which only its neighbours models
/// answer, so the query is a k-nearest-neighbour search over the fitted
/// data for every row of `X`. Said where the module imports scikit-learn and
/// the function does other array or library work (a helper of two lines that
/// only forwards the call is left alone).
fn neighbour_query(cx: &Context<'_, '_>, site: &CallSite<'_>, object: gpulens_syntax::Node<'_>, method: &str, out: &mut Vec<Finding>) {
    let module = cx.module;
    if site.in_check || !matches!(module.value(object, site.scope), Value::Unknown) {
        return; // a known model is the other rules' business
    }
    let sklearn = module.imports_at(site.node.start_byte()).any(|(_, t)| crate::semantic::within(t, "sklearn"));
    if !sklearn {
        return;
    }
    let Some(function) = super::context::function_of(module, site.node) else { return };
    let method_of_object = module.text_of(function).contains("self.");
    if !(method_of_object || array_work(cx, function)) {
        return;
    }
    let lib = library(cx, "cuml");
    let how = match lib.zero_code_change.as_ref() {
        Some(z) => format!("{}, or build the model as `cuml.neighbors.NearestNeighbors`.", super::run_unchanged(cx, z)),
        None => " Build the model as `cuml.neighbors.NearestNeighbors`.".to_string(),
    };
    out.push(super::finding(
        site.node,
        Code::CUML001,
        format!("`{}.{method}()` searches neighbours on the CPU: cuML does it on the GPU", short_callee(module.text_of(object))),
        join([
            format!(
                "`{}.{method}()` is scikit-learn's nearest-neighbour query: for every row it is given, it searches the \
                 fitted data on the CPU. cuML's `NearestNeighbors` answers the same query on the GPU, tens to hundreds \
                 of times faster on large data.",
                module.text_of(object)
            ),
            how,
            "For a search index you build yourself, cuVS (`cuvs.neighbors.brute_force`, or CAGRA for approximate \
             search) is the GPU library underneath."
                .to_string(),
            format!("Install: {}.", install(cx, lib)),
        ]),
    ));
}

/// The function calls something the knowledge base maps (NumPy, SciPy, …):
/// it works with arrays. (Such a function is always analysed, so rules that
/// recognise an API by its method names alone can ask for it.)
fn array_work(cx: &Context<'_, '_>, function: gpulens_syntax::Node<'_>) -> bool {
    let module = cx.module;
    module.answer_once(function, "calls the knowledge base", || {
        module.calls.iter().any(|c| c.scope == function.id() && module.resolve_call_in(c.node, c.scope).is_some())
    })
}

/// Whether `token`, in a function that does array work (see [`array_work`]),
/// may start one of the rules here that recognise an API by its names alone:
/// model or index work, a ray query, the parameters of a ray cast or a mesh
/// query. (The pre-scan keeps such a function even when its only library
/// calls make arrays.)
pub(crate) fn names_work_on_arrays(token: &str) -> bool {
    work().contains(token) || ray_queries().contains(token) || names_a_mesh_or_ray(token)
}

/// The part of [`names_work_on_arrays`] that reads the name's spelling:
/// `mesh`, or a ray's origin or direction (`ray_origins`).
#[inline]
pub(crate) fn names_a_mesh_or_ray(token: &str) -> bool {
    match token.len() {
        4 => token.eq_ignore_ascii_case("mesh"),
        9.. => has_ignoring_case(token.as_bytes(), b"ray") && (has_ignoring_case(token.as_bytes(), b"origin") || has_ignoring_case(token.as_bytes(), b"direction")),
        _ => false,
    }
}

/// Whether `word` (lowercase ASCII letters) occurs in `bytes`, in either case.
fn has_ignoring_case(bytes: &[u8], word: &[u8]) -> bool {
    // (A byte with bit 5 set is the lowercase letter only if it was that
    // letter in either case: no other byte maps to a lowercase letter.)
    bytes.windows(word.len()).any(|w| w[0] | 0x20 == word[0] && w.iter().zip(word).all(|(b, c)| b | 0x20 == *c))
}

/// Ray casts against a triangle mesh through trimesh's ray API.
pub(crate) fn ray_queries() -> &'static Names {
    static QUERIES: OnceLock<&'static Names> = OnceLock::new();
    QUERIES.get_or_init(|| Knowledge::get().queries("trimesh"))
}

/// `mesh.ray.intersects_id(origins, directions)`, `intersector.intersects_location(...)`:
/// rays cast against a triangle mesh through trimesh's ray API, whatever
/// built the mesh (a parameter, a loader in another module). trimesh's own
/// intersector tests candidate triangles with NumPy on the CPU; Warp's BVH
/// mesh queries cast one ray per GPU thread. Said for a receiver that is a
/// mesh's `.ray` or named as an intersector, in a function that works with
/// arrays.
fn ray_query(cx: &Context<'_, '_>, site: &CallSite<'_>, object: gpulens_syntax::Node<'_>, method: &str, out: &mut Vec<Finding>) {
    let module = cx.module;
    if site.in_check || !matches!(module.value(object, site.scope), Value::Unknown) {
        return;
    }
    let receiver = module.text_of(object);
    let last = receiver.rsplit('.').next().unwrap_or(receiver).to_ascii_lowercase();
    if !(last == "ray" || last.contains("intersector")) {
        return;
    }
    let Some(function) = super::context::function_of(module, site.node) else { return };
    if !array_work(cx, function) {
        return;
    }
    let lib = library(cx, "warp");
    out.push(super::finding(
        site.node,
        Code::WARP002,
        format!("`{}.{method}()` casts rays on the CPU: Warp casts one per GPU thread", short_callee(receiver)),
        format!(
            "`{receiver}.{method}()` casts rays against a triangle mesh on the CPU (trimesh's ray API: its default \
             intersector tests candidate triangles with NumPy). NVIDIA Warp casts one ray per GPU thread against a BVH: \
             build `wp.Mesh(points=wp.array(vertices, dtype=wp.vec3), indices=wp.array(faces.ravel(), dtype=int))` \
             once and call `wp.mesh_query_ray(mesh_id, origin, direction, max_t)` in a `@wp.kernel` launched over the \
             rays. Install: {}.",
            install(cx, lib),
        ),
    ));
}

/// The work methods of the vector-search libraries' indexes, by module:
/// the knowledge base's `queries` of the libraries [`index_work`] has
/// advice for.
pub(crate) fn index_work_methods() -> &'static [(&'static str, &'static Names); 3] {
    static WORK: OnceLock<[(&str, &Names); 3]> = OnceLock::new();
    WORK.get_or_init(|| ["faiss", "hnswlib", "annoy"].map(|library| (library, Knowledge::get().queries(library))))
}

/// `self.index.search(queries, k)` in a module that imports Faiss (or
/// hnswlib, Annoy), on an index whose construction the code does not show
/// (a factory method, a loader): these are that library's index methods,
/// and the search or the build is the work cuVS does on the GPU.
fn index_work(cx: &Context<'_, '_>, site: &CallSite<'_>, object: gpulens_syntax::Node<'_>, method: &str, out: &mut Vec<Finding>) {
    let module = cx.module;
    let imported = |library: &str| {
        module.imports_at(site.node.start_byte()).any(|(_, t)| crate::semantic::within(t, library))
    };
    let Some((library_module, _)) =
        index_work_methods().iter().find(|(library, methods)| methods.contains(method) && imported(library))
    else {
        return;
    };
    if site.in_check || !matches!(module.value(object, site.scope), Value::Unknown) {
        return;
    }
    let Some(function) = super::context::function_of(module, site.node) else { return };
    if !(module.text_of(function).contains("self.") || array_work(cx, function)) {
        return;
    }
    // Faiss searches take the queries and k.
    let arguments = site.node.field("arguments").map_or(0, |a| a.named_child_count());
    if matches!(method, "search" | "range_search") && arguments < 2 {
        return;
    }
    // Through `self`: the class keeps an index there (assigns that attribute somewhere).
    let receiver = module.text_of(object);
    if let Some(attribute) = receiver.strip_prefix("self.").filter(|a| !a.contains('.')) {
        let class = module.ancestors(function).find(|c| c.kind_name() == "class_definition");
        // A class with syntax errors: what its methods assign is not to be relied on.
        let Some(class) = class.filter(|c| !c.has_error()) else { return };
        let held = module.assignments_to_self(class).iter().any(|(_, a)| *a == attribute);
        if !held {
            return;
        }
    }
    let lib = library(cx, "cuvs");
    let (what, how) = match *library_module {
        "faiss" => (
            "a Faiss index",
            "Faiss's own GPU indexes (`faiss.index_cpu_to_gpu`, backed by cuVS in the faiss-gpu-cuvs build) keep the code \
             as it is; cuVS itself builds from the whole array in one call (`cuvs.neighbors.ivf_flat.build`, \
             `brute_force`, or CAGRA for graph search)",
        ),
        "hnswlib" => ("an hnswlib graph", "cuVS builds the same kind of graph index on the GPU with CAGRA (`cuvs.neighbors.cagra`), which can be saved for hnswlib to load"),
        _ => ("an Annoy index", "cuVS builds a graph index on the GPU with CAGRA (`cuvs.neighbors.cagra`) and searches whole batches at once"),
    };
    out.push(super::finding(
        site.node,
        Code::CUVS001,
        format!("`{}.{method}()` works on {what} on the CPU: cuVS does it on the GPU", short_callee(receiver)),
        format!(
            "`{receiver}.{method}()` works on {what} on the CPU (built where this code does not show it). {how}. \
             Install: {}.",
            install(cx, lib),
        ),
    ));
}

/// A function that takes rays (origins and directions) and triangles (or a
/// mesh), or a mesh and query points, and works with arrays computes
/// ray–triangle intersections or point queries against the mesh: the work
/// Warp's BVH mesh queries do with one query per GPU thread. Said once, on
/// the function's name.
pub(super) fn ray_casting_functions(cx: &Context<'_, '_>, out: &mut Vec<Finding>) {
    let module = cx.module;
    let mut seen: Vec<usize> = Vec::new();
    for site in &module.calls {
        if seen.contains(&site.scope) {
            continue;
        }
        seen.push(site.scope);
        let Some(function) = super::context::function_of(module, site.node).filter(|f| f.id() == site.scope) else { continue };
        let Some(parameters) = function.field("parameters") else { continue };
        let mut names: Vec<String> = Vec::new();
        for p in module.preorder(parameters).filter(|n| n.kind_name() == "identifier") {
            names.push(module.text_of(p).to_ascii_lowercase());
        }
        let has = |f: &dyn Fn(&str) -> bool| names.iter().any(|n| f(n));
        let rays = has(&|n| n.contains("ray") && n.contains("origin")) && has(&|n| n.contains("ray") && n.contains("direction"));
        let surface = has(&|n| matches!(n, "triangles" | "mesh" | "faces" | "tris"));
        // A whole mesh and query points: closest points, distances, containment.
        let point_query = has(&|n| n == "mesh") && has(&|n| matches!(n, "points" | "query_points" | "queries"));
        if !((rays && surface) || point_query) || !array_work(cx, function) {
            continue;
        }
        let Some(name) = function.field("name") else { continue };
        let lib = library(cx, "warp");
        let (what, query) = if rays && surface {
            ("intersects rays with triangles", "wp.mesh_query_ray(mesh_id, origin, direction, max_t)")
        } else {
            ("queries points against a mesh (closest points, distances or containment)", "wp.mesh_query_point(mesh_id, point, max_dist)")
        };
        let (short, kind) = if rays && surface { ("casts rays", "ray") } else { ("queries a mesh", "query") };
        out.push(super::finding(
            name,
            Code::WARP002,
            format!("`{}` {short} on the CPU: Warp runs one {kind} per GPU thread", module.text_of(name)),
            format!(
                "`{}` {what} on the CPU. NVIDIA Warp runs one query per GPU thread against a BVH of the mesh: build \
                 `wp.Mesh(points=wp.array(vertices, dtype=wp.vec3), indices=wp.array(faces.ravel(), dtype=int))` once \
                 and call `{query}` in a `@wp.kernel` launched over the queries. Install: {}.",
                module.text_of(name),
                install(cx, lib),
            ),
        ));
    }
}

/// A model whose fit is one cheap pass (a scaler: `light_fit` in the
/// knowledge), fitted or applied at `node`: built there, or held by the
/// object whose method is called.
fn light_model_work(cx: &Context<'_, '_>, node: gpulens_syntax::Node<'_>, scope: usize) -> bool {
    let module = cx.module;
    if node.kind_name() != "call" {
        return false;
    }
    if let Some((_, api)) = module.resolve_call_in(node, scope) {
        return api.light_fit;
    }
    let Some(object) = node.field("function").filter(|f| f.kind_name() == "attribute").and_then(|f| f.field("object")) else {
        return false;
    };
    // (`StandardScaler().fit(x)`: the construction is the receiver.)
    if object.kind_name() == "call" {
        return light_model_work(cx, object, scope);
    }
    match module.value(object, scope) {
        Value::Model(cpu) => module.knowledge().api(cpu).is_some_and(|api| api.light_fit),
        _ => false,
    }
}

/// Drops the cuML findings on light fits (a scaler's one pass) in functions
/// that do no other work the GPU pays off for: alone, one pass over the
/// data gains less than its copy to the GPU costs, the judgement light
/// array and table work gets. Beside a model cuML fits, or array work that
/// moves to the GPU, the data is there already and the scaler rides along.
pub(super) fn keep_light_fits_beside_work(cx: &Context<'_, '_>, out: &mut Vec<Finding>) {
    let module = cx.module;
    let light: Vec<bool> = out
        .iter()
        .map(|f| {
            f.library == "cuml"
                && f.code.rule().kind == crate::registry::Kind::Advice
                && module.node_at(f.range.clone()).is_some_and(|n| {
                    let scope = super::context::function_of(module, n).map_or(crate::semantic::MODULE_SCOPE, |f| f.id());
                    light_model_work(cx, n, scope)
                })
        })
        .collect();
    if !light.iter().any(|l| *l) {
        return;
    }
    let function = |f: &Finding| module.node_at(f.range.clone()).and_then(|n| super::context::function_of(module, n)).map(|f| f.id());
    let worked: rustc_hash::FxHashSet<Option<usize>> = out
        .iter()
        .zip(&light)
        .filter(|(f, l)| !**l && f.code.rule().kind == crate::registry::Kind::Advice && !f.stays_on_cpu)
        .map(|(f, _)| function(f))
        .collect();
    let mut i = 0;
    out.retain(|f| {
        let keep = !light[i] || (worked.contains(&function(f)) && !module.node_at(f.range.clone()).is_some_and(|n| fitted_on_one_column(cx, n)));
        i += 1;
        keep
    });
}

/// The model made or fitted at `node` is fitted only on one column
/// (`MinMaxScaler().fit(scores.reshape(-1, 1))`, or `s = MinMaxScaler()` then
/// `s.fit(x[:, None])`): a light fit on one column is a pass over one
/// vector, not worth the GPU beside any other work.
fn fitted_on_one_column<'t>(cx: &Context<'_, 't>, node: gpulens_syntax::Node<'t>) -> bool {
    const FITS: &[&str] = &["fit", "fit_transform", "partial_fit"];
    let module = cx.module;
    let fit_method = |call: gpulens_syntax::Node<'t>| {
        call.field("function")
            .filter(|f| f.kind_name() == "attribute")
            .and_then(|f| f.field("attribute"))
            .is_some_and(|a| FITS.contains(&module.text_of(a)))
    };
    // One column: as the shape reading has it (`x.reshape(-1, 1)`, a
    // parameter documented `(n, 1)`), or a vector given an axis (`x[:, None]`).
    let function = super::context::function_of(module, node);
    let scope = function.map_or(crate::semantic::MODULE_SCOPE, |f| f.id());
    let one_column = |call: gpulens_syntax::Node<'t>| {
        module.positional(call).first().is_some_and(|x| {
            let text: String = module.text_of(*x).chars().filter(|c| !c.is_whitespace()).collect();
            module.columns(*x, scope) == Some(1) || text.ends_with("[:,None]") || text.ends_with("[:,np.newaxis]")
        })
    };
    // The fit itself, or a construction fitted on the spot.
    if fit_method(node) {
        return one_column(node);
    }
    let fitted_here = module
        .parent(node)
        .filter(|p| p.kind_name() == "attribute")
        .and_then(|p| module.parent(p))
        .filter(|c| c.kind_name() == "call" && fit_method(*c));
    if let Some(call) = fitted_here {
        return one_column(call);
    }
    // A construction bound to a name: every fit of that name in the function.
    let Some(name) = module
        .parent(node)
        .filter(|p| p.kind_name() == "assignment" && p.field("right") == Some(node))
        .and_then(|p| p.field("left"))
        .filter(|l| l.kind_name() == "identifier")
        .map(|l| module.text_of(l))
    else {
        return false;
    };
    let Some(function) = function else { return false };
    let fits: Vec<gpulens_syntax::Node<'t>> = module
        .preorder(function)
        .filter(|c| {
            c.kind_name() == "call"
                && fit_method(*c)
                && c.field("function").and_then(|f| f.field("object")).is_some_and(|o| module.text_of(o) == name)
        })
        .collect();
    !fits.is_empty() && fits.iter().all(|c| one_column(*c))
}


#[cfg(test)]
mod tests {
    use super::names_a_mesh_or_ray;

    #[test]
    fn mesh_and_ray_names_in_either_case() {
        for name in ["mesh", "MESH", "Mesh", "ray_origins", "RAY_DIRECTIONS", "rayDirection", "origins_of_rays", "array_origin"] {
            assert!(names_a_mesh_or_ray(name), "{name}");
        }
        for name in ["meshes", "mes", "ray_dirs", "origin", "rays_from", "x_origin_", "directionally", "r_a_y_origin", "ra\u{f9}origin"] {
            assert!(!names_a_mesh_or_ray(name), "{name}");
        }
    }
}
