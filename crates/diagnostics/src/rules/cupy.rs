//! CUPY001 (NumPy/SciPy → CuPy) and RAFT001 (`eigsh` → pylibraft).

use gpulens_knowledge::{ApiKind, Support};

use super::{install, loop_phrase, size_phrase, Call};
use crate::semantic::Value;
use crate::Finding;

pub(super) fn check(call: &Call<'_, '_>, out: &mut Vec<Finding>) {
    let api = call.api;
    if api.support == Support::Missing || !call.matched_fallbacks().is_empty() {
        // No GPU equivalent for this call as written: promising one would be wrong.
        return;
    }
    let Some(gpu) = api.gpu.as_deref() else { return };
    let module = call.cx.module;
    let value = match api.kind {
        ApiKind::Compute => module.input_value(call.site.node, call.site.scope, 0),
        ApiKind::Generate => {
            Value::Array(api.size.as_ref().and_then(|s| module.size_of_call(call.site.node, s, call.site.scope, 0)))
        }
        _ => return,
    };
    if call.is_small(value) {
        return;
    }
    let lib = call.library();
    let note = api.note.as_deref().map(|n| format!(" Note: {n}")).unwrap_or_default();
    let (code, message) = if api.library == "raft" {
        (
            "RAFT001",
            format!(
                "`{}` ({}) runs on the CPU; {}'s `{gpu}` solves it on the GPU{}. Convert the matrix once with \
                 `cupyx.scipy.sparse.csr_matrix(A)` and pass that.{}{} Install: {}.",
                call.callee_text(),
                call.name,
                lib.name,
                size_phrase(value, "elements"),
                loop_phrase(call.site),
                note,
                install(call.cx, lib),
            ),
        )
    } else {
        (
            "CUPY001",
            format!(
                "`{}` ({}) runs on the CPU; {}'s `{gpu}` does the same on the GPU{}. Move the data to the GPU \
                 once (`cp.asarray`), keep the work there, and copy the result back once (`cp.asnumpy`).{}{} \
                 Install: {}.",
                call.callee_text(),
                call.name,
                lib.name,
                size_phrase(value, "elements"),
                loop_phrase(call.site),
                note,
                install(call.cx, lib),
            ),
        )
    };
    out.push(call.finding(code, message));
}
