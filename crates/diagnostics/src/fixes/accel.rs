//! Fixes that switch a whole library to its GPU backend without rewriting
//! the calls: cudf.pandas, cuml.accel, the nx-cugraph backend; and the
//! synchronisation a GPU timing needs.

use gpulens_syntax::NodeExt;
use gpulens_syntax::Node;

use super::{alias_of, indentation_at, line_start, newline, statement_of, Anchor, Draft};
use crate::{Applicability, Context, Fix};

/// `import cudf.pandas` + `cudf.pandas.install()` before anything imports pandas.
pub(super) fn cudf_pandas(cx: &Context<'_, '_>) -> Option<Fix> {
    zero_code_change(
        cx,
        "cudf",
        "Run pandas on the GPU with cudf.pandas",
        "Installs cudf.pandas before pandas is imported. Operations cuDF lacks fall back to pandas on the CPU. \
         For a script you can instead run `python -m cudf.pandas script.py`; in Jupyter, `%load_ext cudf.pandas`.",
    )
}

/// `import cuml.accel` + `cuml.accel.install()` before scikit-learn is imported.
pub(super) fn cuml_accel(cx: &Context<'_, '_>) -> Option<Fix> {
    zero_code_change(
        cx,
        "cuml",
        "Run scikit-learn on the GPU with cuml.accel",
        "Installs cuml.accel before scikit-learn is imported. Estimators or parameters cuML lacks run on the CPU \
         as before. For a script you can instead run `python -m cuml.accel script.py`; in Jupyter, \
         `%load_ext cuml.accel`.",
    )
}

/// The lines of a library's zero-code-change mode (libraries.toml's
/// `zero_code_change.code`), put before the first import, or in a notebook
/// its magic (`zero_code_change.notebook`) as a new first cell; nothing when
/// the file already switches the mode on (in code or as a notebook magic).
/// `title` and `details`: the fix's, for a script.
fn zero_code_change(cx: &Context<'_, '_>, library: &str, title: &str, details: &str) -> Option<Fix> {
    let mode = crate::rules::library(cx, library).zero_code_change.as_ref()?;
    if crate::rules::mode_switched_on(cx, library) {
        return None;
    }
    if let Some(magic) = mode.notebook.as_deref().filter(|_| cx.settings.notebook.is_some()) {
        return Some(Fix::first_cell(
            Applicability::Unsafe,
            format!("Insert a first cell with `{magic}`"),
            format!("{title}: the magic switches it on before anything is imported."),
            magic.to_string(),
        ));
    }
    let mut draft = Draft::new(Applicability::Unsafe, title, details);
    for line in mode.code.as_deref()?.lines() {
        draft.module_line(Anchor::FirstImport, line);
    }
    draft.finish()
}

/// `nx.pagerank(G)` → `nx.pagerank(G, backend="cugraph")`.
pub(super) fn nx_backend(cx: &Context<'_, '_>, node: Node<'_>) -> Option<Fix> {
    let call = std::iter::successors(Some(node), |n| n.parent()).find(|n| n.kind_name() == "call")?;
    let args = call.field("arguments").filter(|a| a.kind_name() == "argument_list")?;
    if cx.module.keyword(call, "backend").is_some() {
        return None;
    }
    let close = args.end_byte() - 1;
    let text = cx.module.text;
    if text.as_bytes().get(close) != Some(&b')') {
        return None;
    }
    let inner = text[args.start_byte() + 1..close].trim_end();
    let insertion = if args.named_child_count() == 0 {
        "backend=\"cugraph\"".to_string()
    } else if inner.ends_with(',') {
        " backend=\"cugraph\"".to_string()
    } else {
        ", backend=\"cugraph\"".to_string()
    };
    // After the last argument (before a trailing comma's whitespace and the parenthesis).
    let at = args.start_byte() + 1 + inner.len();
    let mut draft = Draft::new(
        Applicability::Unsafe,
        "Run on the GPU with the nx-cugraph backend",
        "Adds `backend=\"cugraph\"` to the call, which needs nx-cugraph installed. Setting \
         NX_CUGRAPH_AUTOCONFIG=True instead sends every supported call there without changing code.",
    );
    draft.insert(at, insertion);
    draft.finish()
}

/// GPU005: synchronise the device before the clock is read.
pub(super) fn synchronize_before_timer(cx: &Context<'_, '_>, node: Node<'_>) -> Option<Fix> {
    let module = cx.module;
    let statement = statement_of(node)?;
    let text = module.text;
    let start = statement.start_byte();
    let indent = indentation_at(text, start);
    if line_start(text, start) + indent.len() != start {
        return None; // shares its line with other code (`if x: t1 = time.time()`)
    }
    let sync = if let Some(cp) = alias_of(module, "cupy", start) {
        format!("{cp}.cuda.Device().synchronize()")
    } else if let Some(cuda) = alias_of(module, "numba.cuda", start) {
        format!("{cuda}.synchronize()")
    } else {
        return None;
    };
    let mut draft = Draft::new(
        Applicability::Safe,
        "Wait for the GPU before reading the clock",
        format!("Inserts `{sync}` before the clock is read, so the time includes the GPU work queued before it."),
    );
    draft.insert(line_start(text, start), format!("{indent}{sync}{}", newline(text, start)));
    draft.finish()
}
