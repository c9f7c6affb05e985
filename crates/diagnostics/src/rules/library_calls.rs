//! Calls with a GPU counterpart in the libraries whose advice is a direct
//! mapping: KvikIO (binary reads), cuCIM (scikit-image, OpenCV), cuVS
//! (vector-search indexes), cuSpatial (GeoPandas; archived), cuxfilter
//! (cross-filter dashboards; discontinued), Warp (spatial queries, rotations)
//! and Numba (CPU-jitted functions). The message carries the library's status
//! and, for inactive ones, what to use instead.

use gpulens_syntax::NodeExt;
use gpulens_knowledge::{ApiKind, Status, Support};
use gpulens_syntax::Node;

use super::{estimate_phrase, install, loop_phrase, size_phrase, Call};
use crate::semantic::Value;
use crate::Finding;

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
        ("kvikio", ApiKind::Read) => "KVIKIO001",
        ("cucim", ApiKind::Compute | ApiKind::Function) => "CUCIM001",
        ("cuvs", ApiKind::Index | ApiKind::Function | ApiKind::Compute) => "CUVS001",
        ("cuspatial", ApiKind::Compute | ApiKind::Function | ApiKind::Create | ApiKind::Read) => "CUSPATIAL001",
        ("cuxfilter", ApiKind::Compute | ApiKind::Function) => "CUXFILTER001",
        ("warp", ApiKind::Compute | ApiKind::Function) => "WARP002",
        // Only loops declared data-parallel are clear GPU candidates.
        ("numba", ApiKind::Function) if call.cx.module.keyword(call.site.node, "parallel").is_some_and(|v| call.cx.module.text_of(v) == "True") => {
            "NUMBA002"
        }
        _ => return,
    };
    let module = call.cx.module;
    if code == "KVIKIO001" && !bulk_binary_read(call) {
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
    if code == "CUCIM001" && api.global_threshold && call.site.loop_depth == 0 {
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
        "KVIKIO001" => format!(
            "`{}` reads the file into host memory. If the data then goes to the GPU (CuPy, Numba, PyTorch), {} \
             reads it straight into GPU memory with `{gpu}` — through GPUDirect Storage where the system has it, \
             saving the copy through the CPU.",
            call.callee_text(),
            lib.name
        ),
        "CUVS001" => format!(
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
            " Careful: {} is {}{}.",
            lib.name,
            if status == Status::Maintenance { "in maintenance mode" } else { status.as_str() },
            lib.successor.as_deref().map(|s| format!(" — {s}")).unwrap_or_default()
        ),
    };
    let note = api.note.as_deref().map(|n| format!(" Note: {}", n.split_whitespace().collect::<Vec<_>>().join(" "))).unwrap_or_default();
    // A kernel is written for Numba-CUDA-MLIR or numba-cuda, as the machine and the kernel allow.
    let (package, install_line) = if code == "NUMBA002" {
        let ufunc = matches!(call.name.as_str(), "numba.vectorize" | "numba.guvectorize");
        let package = super::kernel_package(call.cx, ufunc);
        (package.why, package.install)
    } else {
        (String::new(), install(call.cx, lib))
    };
    out.push(call.finding(
        code,
        format!(
            "{why}{}{status}{note}{package}{} Install: {install_line}.",
            loop_phrase(call.site),
            if code == "KVIKIO001" { estimate_phrase(call.cx, "kvikio") } else { String::new() },
        ),
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
        "numpy.frombuffer" => {
            let Some(buffer) = module.argument(node, "buffer", 0) else { return false };
            let read = buffer.kind_name() == "call"
                && buffer
                    .field("function")
                    .and_then(|f| f.field("attribute"))
                    .is_some_and(|a| module.text_of(a) == "read");
            read && !small_count(module.argument(buffer, "size", 0)) && !small_count(module.argument(node, "count", 2))
        }
        _ => true,
    }
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
