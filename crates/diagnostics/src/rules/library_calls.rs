//! Calls with a GPU counterpart in the libraries whose advice is a direct
//! mapping: KvikIO (binary reads), cuCIM (scikit-image, OpenCV), cuVS
//! (vector-search indexes), cuSpatial (GeoPandas; archived), cuxfilter
//! (cross-filter dashboards; discontinued), Warp (spatial queries, rotations)
//! and Numba (CPU-jitted functions). The message carries the library's status
//! and, for inactive ones, what to use instead.

use gpulens_syntax::NodeExt;
use gpulens_knowledge::{ApiKind, Status, Support};
use gpulens_syntax::Node;

use super::{estimate_phrase, install, join, loop_phrase, short_callee, size_phrase, Call};
use crate::Code;
use crate::semantic::Value;
use crate::Finding;
use crate::registry::{declare_rule, Callers, Kind};
use crate::Severity;

declare_rule! {
    /// ## What it finds
    /// `numpy.fromfile`, `numpy.frombuffer(f.read())` and similar reads of raw binary data into an
    /// array.
    ///
    /// ## Why
    /// Data headed for the GPU normally travels disk → host memory → GPU. KvikIO reads files directly
    /// into GPU buffers, using GPUDirect Storage to skip host memory where the system supports it and
    /// parallel POSIX reads otherwise.
    ///
    /// ## Example
    /// ```python
    /// import cupy as cp
    /// import numpy as np
    ///
    /// data = np.fromfile("volume.raw", dtype=np.float32)
    /// d_data = cp.asarray(data)
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// import cupy as cp
    /// import kvikio
    ///
    /// n = 512 * 512 * 512
    /// d_data = cp.empty(n, dtype=cp.float32)
    /// with kvikio.CuFile("volume.raw", "r") as f:
    ///     f.read(d_data)
    /// ```
    pub(crate) static KVIKIO001: Rule {
        name: "binary-read-to-gpu",
        library: "kvikio",
        severity: Severity::Hint,
        summary: "Raw binary file read that KvikIO reads straight into GPU memory",
        kind: Kind::Advice,
        in_tests: false,
        callers: Callers::Stay,
        fix: true,
    }
}

declare_rule! {
    /// ## What it finds
    /// A scikit-image function that `cucim.skimage` implements with the same API (filters, morphology,
    /// measurement, colour, exposure, transforms…), or an OpenCV filter with a close cuCIM equivalent.
    /// Functions cuCIM lacks (watershed, SLIC, HOG…) get no hint.
    ///
    /// ## Why
    /// cuCIM mirrors scikit-image on CuPy arrays: move the image to the GPU once with `cp.asarray`,
    /// chain the operations there, and bring back only the result. On images of 512×512 and larger the
    /// gain is typically 10-100x.
    ///
    /// ## Example
    /// ```python
    /// from skimage.filters import gaussian
    ///
    /// smooth = gaussian(image, sigma=3)
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// import cupy as cp
    /// from cucim.skimage.filters import gaussian
    ///
    /// smooth = gaussian(cp.asarray(image), sigma=3)
    /// ```
    pub(crate) static CUCIM001: Rule {
        name: "skimage-on-cucim",
        library: "cucim",
        severity: Severity::Hint,
        summary: "scikit-image or OpenCV call that cuCIM runs on the GPU",
        kind: Kind::Advice,
        in_tests: false,
        callers: Callers::ArrayWork,
        fix: true,
    }
}

declare_rule! {
    /// ## What it finds
    /// A CPU nearest-neighbour index (Faiss flat/IVF/HNSW indexes, Annoy, hnswlib, PyNNDescent), mapped
    /// to the matching cuVS index: brute_force, ivf_flat, ivf_pq, ivf_sq, cagra or nn_descent.
    ///
    /// ## Why
    /// Building and searching vector indexes is massively parallel; cuVS's CAGRA graph index in
    /// particular is built and searched far faster on the GPU, and can be converted to HNSW for CPU
    /// serving.
    ///
    /// ## Example
    /// ```python
    /// import faiss
    /// import numpy as np
    ///
    /// vectors = np.random.rand(1_000_000, 128).astype(np.float32)
    /// queries = np.random.rand(10_000, 128).astype(np.float32)
    /// index = faiss.IndexFlatL2(128)
    /// index.add(vectors)
    /// D, I = index.search(queries, 10)
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// import cupy as cp
    /// from cuvs.neighbors import brute_force
    ///
    /// vectors = cp.random.rand(1_000_000, 128, dtype=cp.float32)
    /// queries = cp.random.rand(10_000, 128, dtype=cp.float32)
    /// index = brute_force.build(vectors)
    /// D, I = brute_force.search(index, queries, 10)
    /// ```
    pub(crate) static CUVS001: Rule {
        name: "vector-index-on-cuvs",
        library: "cuvs",
        severity: Severity::Hint,
        summary: "Faiss, Annoy, hnswlib or PyNNDescent index that cuVS builds and searches on the GPU",
        kind: Kind::Advice,
        in_tests: false,
        callers: Callers::Stay,
        fix: true,
    }
}

declare_rule! {
    /// ## What it finds
    /// GeoPandas spatial joins, point-in-polygon tests and distances that cuSpatial implements.
    ///
    /// ## Why
    /// cuSpatial ran these on the GPU, but it is archived: its last release (25.04) pins cudf 25.4 and
    /// conflicts with current RAPIDS. Keep the geometry on the CPU with GeoPandas/Shapely and move the
    /// tabular work around it to cuDF; use cuSpatial only in a separate legacy environment.
    ///
    /// ## Example
    /// ```python
    /// import geopandas as gpd
    ///
    /// points = gpd.read_file("points.gpkg")
    /// regions = gpd.read_file("regions.gpkg")
    /// joined = gpd.sjoin(points, regions, predicate="within")
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// # Keep the spatial join in GeoPandas; move the table work to cuDF:
    /// joined = gpd.sjoin(points, regions, predicate="within")
    /// summary = cudf.from_pandas(pd.DataFrame(joined.drop(columns="geometry"))).groupby("region").size()
    /// ```
    pub(crate) static CUSPATIAL001: Rule {
        name: "geopandas-on-cuspatial",
        library: "cuspatial",
        severity: Severity::Info,
        summary: "GeoPandas spatial operation with a cuSpatial equivalent (cuSpatial is archived)",
        kind: Kind::Advice,
        in_tests: false,
        callers: Callers::Stay,
        fix: false,
    }
}

declare_rule! {
    /// ## What it finds
    /// Linked-selection dashboards (HoloViews `link_selections`) and Datashader aggregation over large
    /// frames.
    ///
    /// ## Why
    /// cuxfilter built such dashboards on cuDF, but RAPIDS 26.06 was its last release. For new work,
    /// prepare the data with cuDF and keep HoloViews/hvPlot/Datashader (which accept cuDF frames)
    /// served through Panel; use cuxfilter only where it is already in use.
    ///
    /// ## Example
    /// ```python
    /// import holoviews as hv
    ///
    /// scatter = hv.Scatter(events, "x", "y")
    /// histogram = hv.Histogram(events["x"])
    /// linked = hv.link_selections(scatter + histogram)
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// import cudf
    ///
    /// df = cudf.read_parquet("events.parquet")  # cuDF frames work with hvPlot/Datashader
    /// ls = hv.link_selections.instance()
    /// ls(scatter + histogram)
    /// ```
    pub(crate) static CUXFILTER001: Rule {
        name: "dashboard-on-cuxfilter",
        library: "cuxfilter",
        severity: Severity::Info,
        summary: "Cross-filter dashboard code with a cuxfilter equivalent (cuxfilter is discontinued)",
        kind: Kind::Advice,
        in_tests: false,
        callers: Callers::Stay,
        fix: false,
    }
}

declare_rule! {
    /// ## What it finds
    /// Calls to CPU geometry libraries (trimesh ray casting and proximity queries, SciPy rotations and
    /// KD-trees, scikit-image marching cubes) whose work Warp's meshes, hash grids and quaternion types
    /// do on the GPU; trimesh's ray API (`mesh.ray.intersects_id(...)`,
    /// `intersector.intersects_location(...)`) is recognised on a mesh the code receives.
    ///
    /// ## Why
    /// Warp has BVH-accelerated mesh queries (`wp.mesh_query_ray`, `wp.mesh_query_point`), hash grids
    /// for neighbour search and vector/quaternion types, all usable inside `@wp.kernel` functions that
    /// run once per query in parallel.
    ///
    /// ## Example
    /// ```python
    /// import numpy as np
    ///
    ///
    /// def hit_distances(mesh, origins, directions):
    ///     locations, rays, tris = mesh.ray.intersects_location(origins, directions)
    ///     return np.linalg.norm(locations - origins[rays], axis=1)
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// wp_mesh = wp.Mesh(points=wp.array(mesh.vertices, dtype=wp.vec3), indices=wp.array(mesh.faces.ravel(), dtype=int))
    /// # then a @wp.kernel that calls wp.mesh_query_ray(wp_mesh.id, origin, direction, max_t)
    /// ```
    pub(crate) static WARP002: Rule {
        name: "spatial-query-on-warp",
        library: "warp",
        severity: Severity::Hint,
        summary: "Geometry query (ray casting, closest point, SDF, marching cubes, rotations) that Warp runs on the GPU",
        kind: Kind::Advice,
        in_tests: false,
        callers: Callers::Stay,
        fix: false,
    }
}

declare_rule! {
    /// ## What it finds
    /// `numba.njit`/`numba.jit` called with `parallel=True` (typically `@njit(parallel=True)` over a
    /// `prange` loop): a loop declared data-parallel, which could run on the GPU instead.
    ///
    /// ## Why
    /// A loop already compiled for the CPU with Numba is a good candidate for `@cuda.jit`: the body
    /// translates almost as is, with the loop index replaced by `cuda.grid(1)` and a bounds check. It
    /// pays off when the iterations are independent and number in the hundreds of thousands or more.
    /// The kernel is written for Numba-CUDA-MLIR (NVIDIA's successor to numba-cuda, which is in
    /// maintenance mode), or for numba-cuda on a GPU below compute capability 7.0, for a CUDA ufunc
    /// (`@vectorize`/`@guvectorize` with `target="cuda"`, which Numba-CUDA-MLIR does not support yet)
    /// and in a file that already imports numba-cuda.
    ///
    /// ## Example
    /// ```python
    /// import numpy as np
    /// from numba import njit, prange
    ///
    ///
    /// @njit(parallel=True)
    /// def scale(x, out):
    ///     for i in prange(x.size):
    ///         out[i] = 2.0 * x[i]
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// from numba_cuda_mlir import cuda
    ///
    /// @cuda.jit
    /// def scale(x, out):
    ///     i = cuda.grid(1)
    ///     if i < x.size:
    ///         out[i] = 2.0 * x[i]
    /// ```
    pub(crate) static NUMBA002: Rule {
        name: "njit-to-cuda-jit",
        library: "numba",
        severity: Severity::Hint,
        summary: "Numba CPU-compiled function that could be a CUDA kernel",
        kind: Kind::Advice,
        in_tests: false,
        callers: Callers::Stay,
        fix: false,
    }
}

pub(super) fn check(call: &Call<'_, '_>, out: &mut Vec<Finding>) {
    let api = call.api;
    if api.support == Support::Missing || call.site.in_check || !call.matched_fallbacks().is_empty() {
        return;
    }
    let Some(gpu) = api.gpu.as_deref() else { return };
    if api.kind == ApiKind::Index && super::context::built_for_elsewhere(call.cx, call.site.node) {
        return;
    }
    let lib = call.library();
    let code = match (lib.id.as_str(), api.kind) {
        ("kvikio", ApiKind::Read) => Code::KVIKIO001,
        ("cucim", ApiKind::Compute | ApiKind::Function) => Code::CUCIM001,
        ("cuvs", ApiKind::Index | ApiKind::Function | ApiKind::Compute) => Code::CUVS001,
        ("cuspatial", ApiKind::Compute | ApiKind::Function | ApiKind::Create | ApiKind::Read) => Code::CUSPATIAL001,
        ("cuxfilter", ApiKind::Compute | ApiKind::Function) => Code::CUXFILTER001,
        ("warp", ApiKind::Compute | ApiKind::Function) => Code::WARP002,
        // Only loops declared data-parallel are clear GPU candidates.
        ("numba", ApiKind::Function) if call.cx.module.keyword(call.site.node, "parallel").is_some_and(|v| call.cx.module.text_of(v) == "True") => {
            Code::NUMBA002
        }
        _ => return,
    };
    let module = call.cx.module;
    if code == Code::KVIKIO001 && !bulk_binary_read(call) {
        return;
    }
    let value = match api.kind {
        ApiKind::Compute | ApiKind::Function => module.input_value(call.site.node, call.site.scope, 0),
        _ => Value::Unknown,
    };
    if call.is_small(value) {
        return;
    }
    // A global threshold reduces the image to one number through its
    // histogram: one pass, which alone loses to the copy (unless it runs in
    // a loop, or next to filtering of the same scope that moves the image anyway).
    if code == Code::CUCIM001 && api.global_threshold && call.site.loop_depth == 0 {
        let other_image_work = module.calls.iter().filter(|c| c.scope == call.site.scope).any(|c| {
            module.resolve_call_in(c.node, c.scope).is_some_and(|(_, api)| {
                api.library == "cucim" && api.gpu.is_some() && !api.global_threshold
            })
        });
        if !other_image_work {
            return;
        }
    }
    let why = match code {
        Code::KVIKIO001 => format!(
            "`{}` reads the file into host memory. If the data then goes to the GPU (CuPy, Numba, PyTorch), {} \
             reads it straight into GPU memory with `{gpu}` — through GPUDirect Storage where the system has it, \
             saving the copy through the CPU.",
            call.callee_text(),
            lib.name
        ),
        Code::CUVS001 => format!(
            "`{}` ({}) builds and searches its index on the CPU; {}'s `{gpu}` does both on the GPU, typically \
             many times faster on large sets of vectors.",
            call.callee_text(),
            call.name,
            lib.name
        ),
        _ => format!(
            "`{}` ({}) runs on the CPU; {} has `{gpu}` for the GPU{}.",
            call.callee_text(),
            call.name,
            lib.name,
            size_phrase(value, "elements")
        ),
    };
    let status = match lib.status {
        Status::Active => String::new(),
        status => format!(
            "Careful: {} is {}{}.",
            lib.name,
            if status == Status::Maintenance { "in maintenance mode" } else { status.as_str() },
            lib.successor.as_deref().map(|s| format!(" — {s}")).unwrap_or_default()
        ),
    };
    let note = api.note.as_deref().map(|n| format!("Note: {}", n.split_whitespace().collect::<Vec<_>>().join(" "))).unwrap_or_default();
    // A kernel is written for Numba-CUDA-MLIR or numba-cuda, as the machine and the kernel allow.
    let (package, install_line) = if code == Code::NUMBA002 {
        let ufunc = matches!(call.name.as_str(), "numba.vectorize" | "numba.guvectorize");
        let package = super::kernel_package(call.cx, ufunc);
        (package.why, package.install)
    } else {
        (String::new(), install(call.cx, lib))
    };
    let callee = short_callee(call.callee_text());
    let message = match code {
        Code::KVIKIO001 => format!("`{callee}` reads into host memory: {} reads straight to the GPU (`{gpu}`)", lib.name),
        Code::CUVS001 => format!("`{callee}` searches on the CPU: {} searches on the GPU (`{gpu}`)", lib.name),
        _ => format!("`{callee}`{}: {} runs it on the GPU (`{gpu}`)", super::size_on(value, "elements"), lib.name),
    };
    // A library past its prime says so at once.
    let message = match lib.status {
        Status::Active => message,
        status => format!(
            "`{callee}`: {} runs it on the GPU, but it is {}",
            lib.name,
            if status == Status::Maintenance { "in maintenance" } else { status.as_str() }
        ),
    };
    out.push(call.finding(
        code,
        message,
        join([
            why,
            loop_phrase(call.site).to_string(),
            status,
            note,
            package,
            if code == Code::KVIKIO001 { estimate_phrase(call.cx, "kvikio") } else { String::new() },
            format!("Install: {install_line}."),
        ]),
    ));
}

/// Whether a NumPy read is what KvikIO replaces: raw bytes, many of them.
/// Not a text read (`fromfile(..., sep=" ")`), not a header field
/// (`count=1`, or any count below the size where the GPU pays off), and for
/// `frombuffer` only bytes just read from a file (`f.read()`).
fn bulk_binary_read(call: &Call<'_, '_>) -> bool {
    let module = call.cx.module;
    let node = call.site.node;
    let scope = call.site.scope;
    if sized_by_its_prefix(call) || reads_characters(call) {
        return false;
    }
    let small_count = |count: Option<Node<'_>>| {
        count.is_some_and(|c| {
            matches!(module.value(c, scope), Value::Int(n) if n < call.cx.settings.min_elements)
                || small_default(call, c).is_some_and(|n| n < call.cx.settings.min_elements)
        })
    };
    match call.name.as_str() {
        "numpy.fromfile" => {
            let text_mode = module
                .argument(node, "sep", 3)
                .is_some_and(|sep| sep.kind_name() != "string" || !matches!(module.text_of(sep), "\"\"" | "''"));
            !text_mode && !small_count(module.argument(node, "count", 2))
        }
        // Bytes just read from a file (`f.read(n)`, directly or through a
        // name bound to it), wrapped as an array.
        "numpy.frombuffer" | "numpy.ndarray" => {
            // (`np.ndarray(shape, dtype, buffer)`: the third positional argument.)
            let buffer = if call.name == "numpy.ndarray" { module.argument(node, "buffer", 2) } else { module.argument(node, "buffer", 0) };
            let Some(buffer) = buffer else { return false };
            let buffer = module.assigned_from(buffer, scope).unwrap_or(buffer);
            let read = buffer.kind_name() == "call"
                && buffer
                    .field("function")
                    .and_then(|f| f.field("attribute"))
                    .is_some_and(|a| module.text_of(a) == "read");
            // (`np.ndarray(shape=(), ..., buffer=...)`: one header record.)
            let small_shape = call.name == "numpy.ndarray" && shape_elements(module, module.argument(node, "shape", 0), scope).is_some_and(|n| n < call.cx.settings.min_elements);
            read && !small_shape && !small_count(module.argument(buffer, "size", 0)) && !small_count(module.argument(node, "count", 2))
        }
        // An .npz archive (zip members, maybe compressed): no byte range
        // of the file is an array KvikIO could read into GPU memory.
        "numpy.load" => !loads_an_archive(module, node, scope),
        // A map reads lazily: only what is indexed, or the `shape` it is given.
        "numpy.memmap" => {
            let small_shape = shape_elements(module, module.argument(node, "shape", 4), scope).is_some_and(|n| n < call.cx.settings.min_elements);
            !small_shape && !one_element_taken(module, node, scope)
        }
        _ => true,
    }
}

/// `np.load` of an `.npz` archive: the path is written ending in `.npz`
/// (directly or through a name), the call opens a `with` block (only the
/// archive's `NpzFile` is a context manager, an array is not), or what it
/// returns is asked for its `.files` in the same function.
fn loads_an_archive(module: &crate::Module<'_>, node: Node<'_>, scope: usize) -> bool {
    let npz_path = module.argument(node, "file", 0).is_some_and(|path| {
        let path = module.assigned_from(path, scope).unwrap_or(path);
        path.kind_name() == "string" && module.text_of(path).trim_end_matches(['"', '\'']).ends_with(".npz")
    });
    if npz_path {
        return true;
    }
    let Some(parent) = module.parent(node) else { return false };
    // `with np.load(path) as data:`, with or without `as`.
    if matches!(parent.kind_name(), "with_item" | "as_pattern") {
        return true;
    }
    // `data = np.load(path)` and later `data.files`.
    if parent.kind_name() != "assignment" || parent.field("right") != Some(node) {
        return false;
    }
    let Some(name) = parent.field("left").filter(|l| l.kind_name() == "identifier") else { return false };
    let name = module.text_of(name);
    // (In its function: at module level the pre-scan may leave statements out.)
    let Some(function) = module.enclosing_function(node) else { return false };
    module.preorder(function).any(|n| {
        n.kind_name() == "attribute"
            && n.field("attribute").is_some_and(|a| module.text_of(a) == "files")
            && n.field("object").is_some_and(|o| o.kind_name() == "identifier" && module.text_of(o) == name)
    })
}

/// The read's element type is characters (`'>c'`, `'S12'`, `'|S32'`,
/// `'U8'`, `np.bytes_`): a name or a label read from the file, text that
/// GPU memory has no use for, not numbers to compute on.
fn reads_characters(call: &Call<'_, '_>) -> bool {
    let module = call.cx.module;
    let Some(dtype) = module.argument(call.site.node, "dtype", 1) else { return false };
    match dtype.kind_name() {
        "string" => {
            let text = module.text_of(dtype);
            // (Past a prefix `b`, `r`, `u` or `f`; an f-string's size is `{n}`.)
            let inner = text.trim_start_matches(['b', 'r', 'u', 'f', 'B', 'R', 'U', 'F']).trim_matches(['"', '\'']);
            let code = inner.trim_start_matches(['<', '>', '|', '=']);
            code.starts_with(['c', 'S', 'a', 'U']) && (code[1..].bytes().all(|b| b.is_ascii_digit()) || code[1..].starts_with('{'))
        }
        _ => module.qualified_name(dtype).is_some_and(|n| matches!(n.as_str(), "numpy.bytes_" | "numpy.str_" | "numpy.string_" | "numpy.character")),
    }
}

/// A read in a loop that parses length-prefixed records: the loop decodes
/// a number from bytes it read (`n = struct.unpack("<i", f.read(4))[0]`)
/// and sizes a later read with it (`f.read(n * 12)`). Its reads are records
/// parsed one after another, each as small as its record, each waiting on
/// the one before.
fn sized_by_its_prefix(call: &Call<'_, '_>) -> bool {
    let module = call.cx.module;
    let node = call.site.node;
    let Some(body) = module
        .ancestors(node)
        .take_while(|a| !matches!(a.kind_name(), "function_definition" | "lambda" | "class_definition"))
        .find(|a| matches!(a.kind_name(), "for_statement" | "while_statement"))
        .and_then(|l| l.field("body"))
    else {
        return false;
    };
    module.answer_once(body, "parses length-prefixed records", || {
        // The names the loop binds to numbers decoded from bytes, and where.
        let decoded: Vec<(&str, usize)> = module
            .preorder(body)
            .filter(|n| n.kind_name() == "assignment")
            .filter_map(|n| {
                let name = n.field("left").filter(|l| l.kind_name() == "identifier")?;
                let text = module.text_of(n.field("right")?);
                (text.contains("unpack") || text.contains("from_bytes")).then(|| (module.text_of(name), n.end_byte()))
            })
            .collect();
        !decoded.is_empty()
            && module.preorder(body).any(|n| {
                n.kind_name() == "call"
                    && n.field("function").and_then(|f| f.field("attribute")).is_some_and(|a| module.text_of(a) == "read")
                    && n.field("arguments").is_some_and(|args| {
                        module.preorder(args).any(|i| {
                            i.kind_name() == "identifier" && decoded.iter().any(|(name, at)| *name == module.text_of(i) && *at <= i.start_byte())
                        })
                    })
            })
    })
}

/// How many elements a `shape` argument gives, when its dimensions are
/// known numbers (`(64, 64)`, `()`, `n` for a known `n`).
fn shape_elements(module: &crate::Module<'_>, shape: Option<Node<'_>>, scope: usize) -> Option<u64> {
    let shape = shape?;
    match shape.kind_name() {
        "tuple" | "list" => {
            let mut cursor = shape.walk();
            let dims: Vec<Node<'_>> = shape.named_children(&mut cursor).collect();
            dims.iter().try_fold(1u64, |n, d| match module.value(*d, scope) {
                Value::Int(k) => Some(n.saturating_mul(k)),
                _ => None,
            })
        }
        _ => match module.value(shape, scope) {
            Value::Int(k) => Some(k),
            _ => None,
        },
    }
}

/// `np.memmap(path, ...)[0]`, `[i, j]`: one element indexed straight off the map.
fn one_element_taken(module: &crate::Module<'_>, call: Node<'_>, scope: usize) -> bool {
    let Some(parent) = module.parent(call).filter(|p| p.kind_name() == "subscript" && p.field("value") == Some(call)) else {
        return false;
    };
    let mut cursor = parent.walk();
    let indices: Vec<Node<'_>> = parent.children_by_field_name("subscript", &mut cursor).collect();
    !indices.is_empty()
        && indices.iter().all(|i| match i.kind_name() {
            "slice" => false,
            "tuple" => {
                let mut c = i.walk();
                let all: Vec<Node<'_>> = i.named_children(&mut c).collect();
                all.iter().all(|e| e.kind_name() != "slice" && matches!(module.value(*e, scope), Value::Int(_) | Value::Scalar))
            }
            _ => matches!(module.value(*i, scope), Value::Int(_) | Value::Scalar),
        })
}

/// The default of the parameter `expr` names, when it is an integer literal
/// (`def read_double(fid, n=1)`): the count such a helper reads when called
/// plainly, a header field or a few.
fn small_default(call: &Call<'_, '_>, expr: Node<'_>) -> Option<u64> {
    let module = call.cx.module;
    if expr.kind_name() != "identifier" {
        return None;
    }
    let name = module.text_of(expr);
    let function = super::context::function_of(module, call.site.node)?;
    let parameters = function.field("parameters")?;
    let mut cursor = parameters.walk();
    let found = parameters.named_children(&mut cursor).find_map(|p| {
        if !matches!(p.kind_name(), "default_parameter" | "typed_default_parameter") {
            return None;
        }
        let named = p.field("name").is_some_and(|n| module.text_of(n) == name);
        let value = p.field("value").filter(|v| v.kind_name() == "integer")?;
        named.then(|| module.text_of(value).replace('_', "").parse::<u64>().ok()).flatten()
    });
    found
}
