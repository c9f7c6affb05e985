//! CUML001 (scikit-learn estimator → cuml.accel), CUML002 (its CPU
//! fallbacks) and CUML003 (a scikit-learn or SciPy function cuML has, which
//! cuml.accel does not replace).

use gpulens_knowledge::{ApiKind, Support};

use super::{install, join, Call};
use crate::Code;
use crate::Finding;
use crate::registry::{declare_rule, Callers, Kind};
use crate::Severity;

declare_rule! {
    /// ## What it finds
    /// A scikit-learn estimator or transformer (or UMAP/HDBSCAN) that cuml.accel accelerates,
    /// constructed with parameters the GPU implementation supports; or a nearest-neighbour query
    /// (`.kneighbors()`, `.radius_neighbors()`) on a model built where the code does not show it.
    ///
    /// ## Why
    /// cuML implements these estimators on the GPU with scikit-learn's API. `python -m cuml.accel` (or
    /// `cuml.accel.install()`) runs unchanged scikit-learn code on the GPU: from 2-10x for linear
    /// models to 50-600x for nearest neighbours, HDBSCAN and UMAP on large data. Small inputs can be
    /// slower than on the CPU.
    ///
    /// ## Example
    /// ```python
    /// from sklearn.ensemble import RandomForestClassifier
    ///
    /// model = RandomForestClassifier(n_estimators=100)
    /// model.fit(X_train, y_train)
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// # Unchanged code, run as: python -m cuml.accel script.py
    /// # or natively:
    /// from cuml.ensemble import RandomForestClassifier
    ///
    /// model = RandomForestClassifier(n_estimators=100)
    /// model.fit(X_train, y_train)
    /// ```
    pub(crate) static CUML001: Rule {
        name: "sklearn-on-cuml",
        library: "cuml",
        severity: Severity::Hint,
        summary: "scikit-learn estimator that cuML's accelerator runs on the GPU",
        kind: Kind::Advice,
        in_tests: false,
        callers: Callers::Stay,
        fix: true,
    }
}

declare_rule! {
    /// ## What it finds
    /// A scikit-learn estimator that cuml.accel normally accelerates, constructed with a parameter
    /// value its GPU implementation does not support (for example `Ridge(positive=True)` or
    /// `SVC(probability=True)`).
    ///
    /// ## Why
    /// cuml.accel checks each estimator's parameters and quietly runs unsupported configurations with
    /// scikit-learn on the CPU. Expecting a GPU speedup here would be wrong; change the parameter if
    /// the model allows it, or expect CPU speed.
    ///
    /// ## Example
    /// ```python
    /// from sklearn.linear_model import Ridge
    ///
    /// model = Ridge(alpha=1.0, positive=True)
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// from sklearn.linear_model import Ridge
    ///
    /// # Without positive=True, cuml.accel runs Ridge on the GPU.
    /// model = Ridge(alpha=1.0)
    /// ```
    pub(crate) static CUML002: Rule {
        name: "cuml-accel-cpu-fallback",
        library: "cuml",
        severity: Severity::Info,
        summary: "scikit-learn estimator with a parameter that makes cuML's accelerator fall back to the CPU",
        kind: Kind::Advice,
        in_tests: false,
        callers: Callers::Stay,
        fix: false,
    }
}

declare_rule! {
    /// ## What it finds
    /// A call of a scikit-learn or SciPy function that cuML implements on the GPU
    /// (`pairwise_distances`, `pairwise_kernels`, `trustworthiness`, `kneighbors_graph`, ...), on data
    /// not known to be small.
    ///
    /// ## Why
    /// cuml.accel replaces scikit-learn's estimators, not its functions: under it, these keep running
    /// on the CPU. cuML's own version computes on the GPU when called directly with CuPy or cuDF
    /// input. Work that grows with the square of the rows (all-pairs distances and kernels) gains
    /// the most; on a few hundred rows the copy costs more than it saves.
    ///
    /// ## Example
    /// ```python
    /// from sklearn.metrics import pairwise_distances
    ///
    /// D = pairwise_distances(X, metric="euclidean")
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// import cupy as cp
    /// from cuml.metrics import pairwise_distances
    ///
    /// D = pairwise_distances(cp.asarray(X), metric="euclidean")
    /// ```
    pub(crate) static CUML003: Rule {
        name: "sklearn-function-on-cuml",
        library: "cuml",
        severity: Severity::Hint,
        summary: "scikit-learn or SciPy function that cuML runs on the GPU when called from cuML",
        kind: Kind::Advice,
        in_tests: false,
        callers: Callers::Stay,
        fix: false,
    }
}

pub(super) fn check(call: &Call<'_, '_>, out: &mut Vec<Finding>) {
    let api = call.api;
    if api.kind == ApiKind::Function {
        return check_function(call, out);
    }
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
            Code::CUML002,
            format!("`{short}` as configured here stays on the CPU even under cuml.accel"),
            join([
                reasons.as_str(),
                "Expect scikit-learn speed for this model, or change the parameter if the model allows it.",
            ]),
        ));
        return;
    }
    let zero = lib.zero_code_change.as_ref().map(|z| format!("{}, or", super::run_unchanged(call.cx, z)));
    let native = api.gpu.as_deref().map(|g| format!("use `{g}` directly")).unwrap_or_default();
    let note = api.note.as_deref().map(|n| format!("Note: {n}")).unwrap_or_default();
    let mode = lib.zero_code_change.as_ref().map_or_else(|| lib.name.clone(), |z| z.name.clone());
    out.push(call.finding(
        Code::CUML001,
        format!("`{short}` fits on the CPU: {mode} runs it on the GPU"),
        join([
            format!("`{short}` ({}) fits on the CPU; {}'s accelerator runs it on the GPU.", call.name, lib.name),
            format!(
                "{} {}.",
                zero.unwrap_or_default(),
                if native.is_empty() { "import it from cuML".to_string() } else { native }
            ),
            note,
            "Small datasets can be slower on the GPU.".to_string(),
            format!("Install: {}.", install(call.cx, lib)),
        ]),
    ));
}

/// CUML003: a function cuML has, called on data not known to be small.
fn check_function(call: &Call<'_, '_>, out: &mut Vec<Finding>) {
    let api = call.api;
    let Some(gpu) = api.gpu.as_deref() else { return };
    if api.support == Support::Missing || call.site.in_check || !call.matched_fallbacks().is_empty() {
        return;
    }
    let cx = call.cx;
    let value = cx.module.input_value(call.site.node, call.site.scope, 0);
    if call.is_small(value) {
        return;
    }
    let short = call.name.rsplit('.').next().unwrap_or(&call.name);
    let note = api.note.as_deref().map(|n| format!("Note: {}", n.split_whitespace().collect::<Vec<_>>().join(" "))).unwrap_or_default();
    out.push(call.finding(
        Code::CUML003,
        format!("`{short}`{}: cuML computes it on the GPU (`{gpu}`)", super::size_on(value, "elements")),
        join([
            format!(
                "`{short}` ({}) computes on the CPU; cuML's `{gpu}` computes it on the GPU{}: call it with a CuPy or \
                 cuDF input.",
                call.name,
                super::size_phrase(value, "elements"),
            ),
            note,
            format!("Install: {}.", install(cx, call.library())),
        ]),
    ));
}
