//! CUDF001 (readers), CUDF002 (DataFrame work), CUDF003 (row loops) and
//! CUDF004 (calls that cudf.pandas hands back to pandas on the CPU).

use gpulens_syntax::NodeExt;
use gpulens_knowledge::{ApiKind, ApiMapping, Fallback, Library, Support};
use super::{finding, install, is_small, join, library, loop_phrase, short_callee, size_on, size_phrase, Call};
use crate::Code;
use crate::semantic::{CallSite, Value};
use crate::{Context, Finding};
use crate::registry::{declare_rule, Callers, Kind};
use crate::Severity;

declare_rule! {
    /// ## What it finds
    /// A pandas reader (`read_csv`, `read_parquet`, `read_json`, …) that cuDF implements.
    ///
    /// ## Why
    /// cuDF parses CSV, Parquet, JSON and ORC on the GPU and leaves the table in GPU memory, ready for
    /// the filters, joins and group-bys that usually follow. With cudf.pandas the code stays unchanged:
    /// every pandas call runs on the GPU when cuDF supports it and on the CPU otherwise.
    ///
    /// ## Example
    /// ```python
    /// import pandas as pd
    ///
    /// orders = pd.read_parquet("orders.parquet")
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// # Unchanged code, run as: python -m cudf.pandas script.py
    /// # or natively:
    /// import cudf
    ///
    /// orders = cudf.read_parquet("orders.parquet")
    /// ```
    pub(crate) static CUDF001: Rule {
        name: "pandas-reader-on-cudf",
        library: "cudf",
        severity: Severity::Hint,
        summary: "pandas file reader that cuDF parses on the GPU",
        kind: Kind::Advice,
        in_tests: false,
        callers: Callers::Stay,
        fix: true,
    }
}

declare_rule! {
    /// ## What it finds
    /// A DataFrame or Series operation — `groupby`, `merge`, `join`, `sort_values`, `pivot_table`,
    /// `drop_duplicates`, aggregations — on a table that is not evidently small.
    ///
    /// ## Why
    /// Group-bys, joins and sorts over millions of rows are where cuDF gains most over pandas.
    /// cudf.pandas accelerates them without code changes and falls back to pandas for anything cuDF
    /// lacks; the gain starts somewhere between 10,000 and 100,000 rows.
    ///
    /// ## Example
    /// ```python
    /// import pandas as pd
    ///
    /// sales = pd.read_csv("sales.csv")
    /// by_region = sales.groupby("region")["amount"].sum()
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// import cudf
    ///
    /// # Or the pandas code unchanged, run as: python -m cudf.pandas script.py
    /// sales = cudf.read_csv("sales.csv")
    /// by_store = sales.groupby("store")["amount"].sum()
    /// ```
    pub(crate) static CUDF002: Rule {
        name: "dataframe-op-on-cudf",
        library: "cudf",
        severity: Severity::Hint,
        summary: "pandas DataFrame work (group-by, join, sort, aggregation) that cuDF runs on the GPU",
        kind: Kind::Advice,
        in_tests: false,
        callers: Callers::Stay,
        fix: true,
    }
}

declare_rule! {
    /// ## What it finds
    /// `iterrows()`, `itertuples()` or `apply(..., axis=1)` on a DataFrame: Python code run once per
    /// row.
    ///
    /// ## Why
    /// A Python-level loop over rows is slow on any hardware, and no GPU library can run arbitrary
    /// Python per row: under cudf.pandas, iteration falls back to the CPU, copying the table back from
    /// the GPU. Rewrite the loop as column operations (arithmetic on whole columns, `where`, `map`,
    /// `groupby`) — that alone is often 100x faster in pandas, and cuDF then runs it on the GPU.
    ///
    /// ## Example
    /// ```python
    /// import pandas as pd
    ///
    /// orders = pd.read_parquet("orders.parquet")
    /// total = 0.0
    /// for _, row in orders.iterrows():
    ///     total += row["price"] * row["qty"]
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// import pandas as pd
    ///
    /// orders = pd.read_parquet("orders.parquet")
    /// total = (orders["price"] * orders["qty"]).sum()
    /// ```
    pub(crate) static CUDF003: Rule {
        name: "dataframe-row-loop",
        library: "cudf",
        severity: Severity::Hint,
        summary: "Row-by-row DataFrame loop: vectorise it first; cudf.pandas runs it on the CPU",
        kind: Kind::Advice,
        in_tests: false,
        callers: Callers::Stay,
        fix: false,
    }
}

declare_rule! {
    /// ## What it finds
    /// A pandas call that cuDF otherwise runs on the GPU, made with an argument, or followed by a
    /// method, that cuDF's own implementation rejects: `.rolling(w).median()`, `.shift(freq=...)`,
    /// `.ewm(span, min_periods=k)` with k other than 0, `.groupby(key, observed=False)`,
    /// `pd.read_csv(..., chunksize=...)`, and the other conditions recorded in
    /// knowledge/api/pandas.toml.
    ///
    /// ## Why
    /// cudf.pandas tries every call in cuDF first and, when cuDF raises (NotImplementedError, or a
    /// TypeError for an argument its signature lacks), runs the call in pandas on the CPU, copying the
    /// data back from the GPU. The program still works, but this step gets no speedup and pays for the
    /// copies. Where the argument is not essential (a different window statistic, `observed=True`, a
    /// plain `pd.read_csv` of the whole file), changing it keeps the step on the GPU.
    ///
    /// ## Example
    /// ```python
    /// import pandas as pd
    ///
    /// prices = pd.read_parquet("prices.parquet")
    /// smooth = prices.rolling(20).median()
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// import pandas as pd
    ///
    /// prices = pd.read_parquet("prices.parquet")
    /// # cuDF runs mean (and sum, min, max, var, std, count) over a window:
    /// smooth = prices.rolling(20).mean()
    /// ```
    pub(crate) static CUDF004: Rule {
        name: "cudf-pandas-cpu-fallback",
        library: "cudf",
        severity: Severity::Info,
        summary: "pandas call that cudf.pandas runs on the CPU: an argument or method cuDF does not implement",
        kind: Kind::Advice,
        in_tests: false,
        callers: Callers::Stay,
        fix: false,
    }
}

/// A cuDF finding and what it weighs in its function: light table work is
/// kept only where the function does more (see [`keep_worthwhile`]).
pub(super) struct TableWork<'t> {
    finding: Finding,
    node: gpulens_syntax::Node<'t>,
    weight: Weight,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Weight {
    /// A read cuDF does on the GPU, heavy table work (`heavy` in the
    /// knowledge), or any work on a table known to be large.
    Heavy,
    /// One cheap pass over the table (`fillna`, `dropna`, `concat`).
    Light,
    /// A step cudf.pandas hands back to pandas (CUDF004).
    Fallback,
    /// Said whatever the function does around it (row loops, reads cuDF
    /// cannot do), and no reason for the light work around it either.
    Alone,
}

impl<'t> TableWork<'t> {
    fn new(finding: Finding, node: gpulens_syntax::Node<'t>, weight: Weight) -> Self {
        TableWork { finding, node, weight }
    }
}

/// The weight of table work done by `api` on `value`.
fn weight_of(api: &ApiMapping, value: Value) -> Weight {
    // (`value` is not small here: a size known is a large one.)
    if api.heavy || value.elements().is_some() { Weight::Heavy } else { Weight::Light }
}

/// The cuDF findings worth saying, by what each function does as a whole:
/// - light table work (one cheap pass: `fillna`, `dropna`, `concat`) only
///   where its function also reads a table cuDF can read, does heavy table
///   work (a group-by, join, sort, …), or does light work in at least
///   [`super::cupy::CHAIN`] statements: alone, a cheap pass over a table
///   of unknown size gains less than the copy to the GPU costs, the same
///   judgement CuPy's light operations get;
/// - a step cudf.pandas hands back to pandas (CUDF004) only where the
///   function has table work that does run on the GPU, or where the module
///   switches cudf.pandas on: elsewhere there is nothing on the GPU for the
///   step to interrupt, and saying it stays on the CPU is not advice.
pub(super) fn keep_worthwhile(cx: &Context<'_, '_>, found: Vec<TableWork<'_>>, out: &mut Vec<Finding>) {
    if found.is_empty() {
        return;
    }
    let module = cx.module;
    let groups: Vec<Option<usize>> = found.iter().map(|w| super::context::function_of(module, w.node).map(|f| f.id())).collect();
    // Per function, in one pass: whether it has heavy work, and the
    // statements of its light work.
    #[derive(Default)]
    struct Group {
        heavy: bool,
        light_statements: Vec<usize>,
        on_gpu: bool,
    }
    let mut by_group: rustc_hash::FxHashMap<Option<usize>, Group> = Default::default();
    for (w, g) in found.iter().zip(&groups) {
        let group = by_group.entry(*g).or_default();
        match w.weight {
            Weight::Heavy => group.heavy = true,
            Weight::Light => group.light_statements.push(super::cupy::statement_of(module, w.node).id()),
            _ => {}
        }
    }
    for group in by_group.values_mut() {
        group.light_statements.sort_unstable();
        group.light_statements.dedup();
        let lights_kept = group.heavy || group.light_statements.len() as u32 >= super::cupy::CHAIN;
        group.on_gpu = group.heavy || (lights_kept && !group.light_statements.is_empty());
    }
    let mode_on = std::cell::OnceCell::new();
    for (w, g) in found.into_iter().zip(&groups) {
        let group = &by_group[g];
        let keep = match w.weight {
            Weight::Light => group.on_gpu,
            Weight::Fallback => group.on_gpu || *mode_on.get_or_init(|| super::mode_switched_on(cx, "cudf")),
            Weight::Heavy | Weight::Alone => true,
        };
        if keep {
            out.push(w.finding);
        }
    }
}

/// `pd.read_csv(...)`, `pd.merge(...)`: calls resolved through the imports.
pub(super) fn check_function<'t>(call: &Call<'_, 't>, out: &mut Vec<TableWork<'t>>) {
    let api = call.api;
    let lib = call.library();
    match api.kind {
        ApiKind::Read => {
            if bundled_file(call) || downloads(call.cx, call.site.node) || read_from_the_web(call) {
                return;
            }
            // A reader cuDF lacks, or arguments that keep the parse on the CPU.
            let fallbacks = call.matched_fallbacks();
            if !fallbacks.is_empty() || api.support == Support::Fallback {
                let mut f = call.finding(
                    Code::CUDF001,
                    format!("`{}` parses on the CPU, and cuDF cannot read it on the GPU as called here", short_callee(call.callee_text())),
                    reasons(&fallbacks, api),
                );
                f.stays_on_cpu = true;
                out.push(TableWork::new(f, call.site.node, Weight::Alone));
                return;
            }
            let gpu = api.gpu.as_deref().unwrap_or("cuDF's reader");
            let f = call.finding(
                Code::CUDF001,
                format!("`{}` parses on the CPU: {} reads it on the GPU (`{gpu}`)", short_callee(call.callee_text()), lib.name),
                join([
                    format!(
                        "`{}` parses the file on the CPU; {}'s `{gpu}` parses it on the GPU and keeps the table there \
                         for the work that follows.",
                        call.callee_text(),
                        lib.name
                    ),
                    zero_code_change(call.cx, lib),
                    format!("Install: {}.", install(call.cx, lib)),
                ]),
            );
            out.push(TableWork::new(f, call.site.node, Weight::Heavy));
        }
        ApiKind::Compute => {
            // `pd.to_datetime("2010-01-01")`: one value written out, not a table.
            let one_value = crate::semantic::positional_arguments(call.site.node)
                .first()
                .is_some_and(|a| matches!(a.kind_name(), "string" | "concatenated_string" | "integer" | "float"));
            let value = call.cx.module.input_value(call.site.node, call.site.scope, 0);
            if one_value
                || call.is_small(value)
                || reads_bundled_or_downloaded_table(call.cx, call.site)
                || super::per_piece::in_per_piece_callable(call.cx, call.site.node)
                || (value.elements().is_none()
                    && call.cx.module.one_item_per_call(&call.cx.module.positional(call.site.node), call.site.scope))
            {
                return;
            }
            let fallbacks = call.matched_fallbacks();
            let node = call.site.node;
            if fallbacks.is_empty() {
                out.push(TableWork::new(op_finding(call.cx, call.site, call.callee_text(), api, lib, value), node, weight_of(api, value)));
            } else {
                let f = cpu_finding(call.site, &callee_with_then(call.cx, call.site, call.callee_text(), &fallbacks), &fallbacks, api);
                out.push(TableWork::new(f, node, Weight::Fallback));
            }
        }
        _ => {}
    }
}

/// Whether `expr` is evidently a pandas Series, not a DataFrame: one
/// column taken by its name (`df["price"]`), `pd.Series(...)`, or a name
/// bound to one of those.
fn evidently_a_series(cx: &Context<'_, '_>, expr: gpulens_syntax::Node<'_>, scope: usize) -> bool {
    let module = cx.module;
    let mut expr = expr;
    for _ in 0..8 {
        match expr.kind_name() {
            "identifier" => match module.assigned_from(expr, scope) {
                Some(rhs) => expr = rhs,
                None => return false,
            },
            "parenthesized_expression" => match expr.named_child(0) {
                Some(inner) => expr = inner,
                None => return false,
            },
            "subscript" => {
                let mut cursor = expr.walk();
                let keys: Vec<gpulens_syntax::Node<'_>> = expr.children_by_field_name("subscript", &mut cursor).collect();
                return matches!(keys.as_slice(), [key] if key.kind_name() == "string");
            }
            "call" => {
                return expr
                    .field("function")
                    .and_then(|f| module.qualified_name(f))
                    .is_some_and(|name| name == "pandas.Series");
            }
            _ => return false,
        }
    }
    false
}

/// `df.groupby(...)`, `df.iterrows()`: methods on a value known to be a DataFrame or Series.
pub(super) fn check_method<'t>(cx: &Context<'_, 't>, site: &CallSite<'t>, out: &mut Vec<TableWork<'t>>) {
    let module = cx.module;
    let Some(function) = site.node.field("function").filter(|f| f.kind_name() == "attribute") else {
        return;
    };
    let (Some(object), Some(method)) = (function.field("object"), function.field("attribute"))
    else {
        return;
    };
    // Input validation (`assert y.nunique() == 2`, `if df.isna().any():
    // raise ...`) checks the data: the work is elsewhere. (Table work in
    // another condition still costs what it costs.)
    if super::context::guards_a_raise(module, site.node) {
        return;
    }
    let value = module.value(object, site.scope);
    let Value::Frame(_) = value else { return };
    let method = module.text_of(method);
    let knowledge = module.knowledge();
    // `DataFrame.map` takes only a function: given a mapping (a dict, one
    // looked up, a Series), `.map` is a Series' lookup of each value.
    let lookup = method == "map"
        && crate::semantic::positional_arguments(site.node).first().is_some_and(|a| {
            matches!(a.kind_name(), "dictionary" | "dictionary_comprehension" | "subscript")
                || matches!(module.value(*a, site.scope), Value::Frame(_))
                || module.annotation_of(*a, site.scope).is_some_and(|ty| {
                    let ty = ty.trim_matches(|c| c == '"' || c == '\'');
                    let head = ty.split('[').next().unwrap_or(ty).rsplit('.').next().unwrap_or(ty);
                    matches!(head, "dict" | "Dict" | "Mapping" | "MutableMapping" | "Series")
                })
        });
    let own = if lookup { None } else { knowledge.api(&format!("pandas.DataFrame.{method}")) };
    let Some(api) = own.or_else(|| {
        // A Series's row loop walks the columns of a DataFrame
        // (`Series.items()` gives its rows, a DataFrame's `.items()` its
        // columns): it counts where the value is evidently one column.
        knowledge
            .api(&format!("pandas.Series.{method}"))
            .filter(|api| api.kind != ApiKind::RowLoop || evidently_a_series(cx, object, site.scope))
    }) else {
        return;
    };
    let lib = library(cx, &api.library);
    let callee = format!(".{method}()");
    let fallbacks: Vec<&Fallback> = api.fallbacks.iter().filter(|f| super::fallback_applies(cx, site.node, f)).collect();
    // Python once per row: a row loop, or a row-wise apply cuDF may hand back to pandas.
    let per_row = api.kind == ApiKind::RowLoop || (method == "apply" && !fallbacks.is_empty() && row_wise(cx, site));
    if per_row {
        let why = fallbacks
            .iter()
            .map(|f| f.reason.as_str())
            .chain(api.note.as_deref())
            .collect::<Vec<_>>()
            .join(" ");
        let f = finding(
            site.node,
            Code::CUDF003,
            format!("`{callee}` runs Python once per row: vectorise it so cuDF can run it on the GPU"),
            join([
                "Express it as operations on whole columns, which is often 100x faster even in pandas and is what \
                 cuDF can run on the GPU.",
                &why,
            ]),
        );
        out.push(TableWork::new(f, site.node, Weight::Alone));
        return;
    }
    if api.kind != ApiKind::Method
        || api.support == Support::Missing
        || is_small(cx, value)
        || reads_bundled_or_downloaded_table(cx, site)
        || super::per_piece::in_per_piece_callable(cx, site.node)
        || (value.elements().is_none() && one_table_per_call(cx, site))
    {
        return;
    }
    // An argument, or the method called on the result, that cuDF lacks: under
    // cudf.pandas this step runs in pandas on the CPU.
    if !fallbacks.is_empty() || api.support == Support::Fallback {
        out.push(TableWork::new(cpu_finding(site, &callee_with_then(cx, site, &callee, &fallbacks), &fallbacks, api), site.node, Weight::Fallback));
        return;
    }
    // A Python function per element or group, or groups handed to Python:
    // the GPU would not run that code (cudf.pandas runs it in pandas).
    let python = if method == "groupby" {
        super::per_piece::groups_in_python(cx, site.node)
    } else {
        (super::per_piece::PER_GROUP.contains(&method) || method == "map") && super::context::takes_python_callable(cx, site.node)
    };
    if python {
        return;
    }
    out.push(TableWork::new(op_finding(cx, site, &callee, api, lib, value), site.node, weight_of(api, value)));
}

fn op_finding(
    cx: &Context<'_, '_>,
    site: &CallSite<'_>,
    callee: &str,
    api: &ApiMapping,
    lib: &Library,
    value: Value,
) -> Finding {
    let gpu = api.gpu.as_deref().map(|g| format!(" (`{g}`)")).unwrap_or_default();
    let note = api.note.as_deref().map(|n| format!("Note: {n}")).unwrap_or_default();
    finding(
        site.node,
        Code::CUDF002,
        match size_on(value, "rows") {
            on if on.is_empty() => format!("`{}` on a pandas table: {} runs it on the GPU{gpu}", short_callee(callee), lib.name),
            on => format!("`{}`{on}: {} runs it on the GPU{gpu}", short_callee(callee), lib.name),
        },
        join([
            format!("`{callee}` on a pandas table{} runs on the CPU; {} runs it on the GPU{gpu}.", size_phrase(value, "rows"), lib.name),
            zero_code_change(cx, lib),
            loop_phrase(site).to_string(),
            note,
            format!("Install: {}.", install(cx, lib)),
        ]),
    )
}

/// A call cuDF would hand back to pandas: say so, and why.
fn cpu_finding(site: &CallSite<'_>, callee: &str, fallbacks: &[&Fallback], api: &ApiMapping) -> Finding {
    finding(
        site.node,
        Code::CUDF004,
        format!("`{}` runs in pandas on the CPU even under cudf.pandas", short_callee(callee)),
        join([
            reasons(fallbacks, api),
            "Expect pandas speed for this step, plus copying the data between GPU and CPU memory.".to_string(),
        ]),
    )
}

/// The reasons of the fallbacks met, or the entry's note when the call
/// always falls back.
fn reasons(fallbacks: &[&Fallback], api: &ApiMapping) -> String {
    if fallbacks.is_empty() {
        return api.note.clone().unwrap_or_default();
    }
    fallbacks.iter().map(|f| f.reason.as_str()).collect::<Vec<_>>().join(" ")
}

/// `.rolling().median()` when a fallback is about the method called on the
/// result; the callee alone otherwise.
fn callee_with_then(cx: &Context<'_, '_>, site: &CallSite<'_>, callee: &str, fallbacks: &[&Fallback]) -> String {
    let then = fallbacks.iter().any(|f| !f.then.is_empty() || !f.then_not_in.is_empty());
    match super::method_on_result(cx, site.node).filter(|_| then) {
        Some(method) => format!("{callee}.{method}()"),
        None => callee.to_string(),
    }
}

/// The call passes `axis=1` (or `"columns"`): one Python call per row.
fn row_wise(cx: &Context<'_, '_>, site: &CallSite<'_>) -> bool {
    cx.module
        .argument(site.node, "axis", 1)
        .is_some_and(|a| matches!(cx.module.text_of(a), "1" | "\"columns\"" | "'columns'"))
}

fn zero_code_change(cx: &crate::Context<'_, '_>, lib: &Library) -> String {
    match &lib.zero_code_change {
        Some(z) => match z.notebook.as_deref().filter(|_| cx.settings.notebook.is_some()) {
            Some(magic) => format!(" With {} the code stays unchanged: put `{magic}` in the notebook's first cell.", z.name),
            None => format!(" With {} the code stays unchanged: run `{}`.", z.name, z.script),
        },
        None => String::new(),
    }
}

/// The file read is shipped inside the package (its path is built from
/// `__file__`, directly or through a variable): example and reference data,
/// small by nature.
fn bundled_file(call: &Call<'_, '_>) -> bool {
    let module = call.cx.module;
    let Some(path) = module.argument(call.site.node, "filepath_or_buffer", 0) else { return false };
    if module.text_of(path).contains("__file__") {
        return true;
    }
    module.preorder(path)
        .filter(|n| n.kind_name() == "identifier")
        .any(|n| module.defining_text(n, call.site.scope).contains("__file__"))
}

/// The function in `scope` reads a table shipped inside the package
/// ([`bundled_file`]): the work it does on it is as small as the table.
/// Or it reads one from a web address it names ([`downloads`]): the
/// download is where its time goes, as for the read itself.
fn reads_bundled_or_downloaded_table(cx: &Context<'_, '_>, at: &CallSite<'_>) -> bool {
    let module = cx.module;
    let Some(function) = super::context::function_of(module, at.node) else { return false };
    let reads = |from: &dyn Fn(&Call<'_, '_>) -> bool| {
        module.calls.iter().filter(|site| site.scope == function.id()).any(|site| {
            module.resolve_call_in(site.node, site.scope).is_some_and(|(name, api)| {
                api.kind == ApiKind::Read && api.library == "cudf" && from(&Call { site, name, api, cx })
            })
        })
    };
    module.answer_once(function, "reads a bundled table", || module.text_of(function).contains("__file__") && reads(&bundled_file))
        || module.answer_once(function, "reads a downloaded table", || {
            let named = downloads(cx, at.node);
            reads(&|read| named || read_from_the_web(read))
        })
}

/// The path a reader is given is a web address, written out or built from
/// one through the names it is assigned from (`url = DATASETS[name]["url"]`,
/// with `DATASETS` a module-level table of addresses; `BASE + name`).
fn read_from_the_web(call: &Call<'_, '_>) -> bool {
    fn reaches(module: &crate::semantic::Module<'_>, node: gpulens_syntax::Node<'_>, scope: usize, depth: u32) -> bool {
        module.preorder(node).any(|n| match n.kind_name() {
            "string" => is_web_address(module.text_of(n)),
            "identifier" if depth < 3 => module.assigned_from(n, scope).is_some_and(|rhs| reaches(module, rhs, scope, depth + 1)),
            _ => false,
        })
    }
    let module = call.cx.module;
    module.argument(call.site.node, "filepath_or_buffer", 0).is_some_and(|path| reaches(module, path, call.site.scope, 0))
}

fn is_web_address(text: &str) -> bool {
    text.contains("http://") || text.contains("https://") || text.contains("ftp://")
}

/// The function around `node` names a web address in its code (not in its
/// docstring or comments): what it reads comes over the network, and the
/// download, not the parse, is where the time goes.
fn downloads(cx: &Context<'_, '_>, node: gpulens_syntax::Node<'_>) -> bool {
    let module = cx.module;
    let Some(function) = super::context::function_of(module, node) else { return false };
    module.answer_once(function, "names a web address", || module.preorder(function).any(|n| {
        n.kind_name() == "string"
            && module.parent(n).is_none_or(|p| p.kind_name() != "expression_statement")
            && is_web_address(module.text_of(n))
    }))
}

/// The table a method is called on is one item of a collection that the
/// function's callers walk, one call per item (a group of a `groupby` loop):
/// see [`crate::semantic::Module::one_item_per_call`].
fn one_table_per_call(cx: &Context<'_, '_>, site: &CallSite<'_>) -> bool {
    let Some(object) = site.node.field("function").filter(|f| f.kind_name() == "attribute").and_then(|f| f.field("object")) else {
        return false;
    };
    cx.module.one_item_per_call(&[object], site.scope)
}
