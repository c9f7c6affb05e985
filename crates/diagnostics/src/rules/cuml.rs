//! CUML001 (scikit-learn estimator → cuml.accel) and CUML002 (its CPU fallbacks).

use gpulens_knowledge::{ApiKind, Support};

use super::{install, Call};
use crate::Finding;

pub(super) fn check(call: &Call<'_, '_>, out: &mut Vec<Finding>) {
    let api = call.api;
    if api.kind != ApiKind::Estimator || api.support == Support::Missing {
        return;
    }
    if super::context::built_for_elsewhere(call.cx, call.site.node) {
        return;
    }
    let lib = call.library();
    let short = call.name.rsplit('.').next().unwrap_or(&call.name);
    let fallbacks = call.matched_fallbacks();
    if !fallbacks.is_empty() || api.support == Support::Fallback {
        let reasons: Vec<&str> = fallbacks.iter().map(|f| f.reason.as_str()).collect();
        let reasons = if reasons.is_empty() { api.note.clone().unwrap_or_default() } else { reasons.join("; ") };
        out.push(call.finding(
            "CUML002",
            format!(
                "`{short}` as configured here runs on the CPU even under cuml.accel: {reasons} Expect \
                 scikit-learn speed for this model, or change the parameter if the model allows it."
            ),
        ));
        return;
    }
    let zero = lib.zero_code_change.as_ref().map(|z| format!(" Run the script unchanged with `{}`, or", z.script));
    let native = api.gpu.as_deref().map(|g| format!(" use `{g}` directly")).unwrap_or_default();
    let note = api.note.as_deref().map(|n| format!(" Note: {n}")).unwrap_or_default();
    out.push(call.finding(
        "CUML001",
        format!(
            "`{short}` ({}) fits on the CPU; {}'s accelerator runs it on the GPU.{}{}.{} Small datasets can be \
             slower on the GPU. Install: {}.",
            call.name,
            lib.name,
            zero.unwrap_or_default(),
            if native.is_empty() { " import it from cuML".to_string() } else { native },
            note,
            install(call.cx, lib),
        ),
    ));
}
