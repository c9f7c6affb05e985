//! Rules: Python source + the knowledge base + a GPU profile → findings.
//!
//! Pure functions over a text and its tree: no I/O, no editor types, no
//! NVML. The command line and the language server both call [`check`] and
//! turn its [`Finding`]s into their own formats.

use gpulens_syntax::NodeExt;
pub mod config;
mod fixes;
mod hot;
mod plan;
mod prescan;
pub mod profile;
pub mod project;
mod registry;
mod rules;
mod semantic;
mod source;
mod suppression;

use std::ops::Range;

use rustc_hash::FxHashSet;

use gpulens_gpu::GpuProfile;
use gpulens_knowledge::Knowledge;
use gpulens_syntax::{Node, Tree};
use serde::Serialize;

pub use fixes::{apply_fixes, syntax_errors};
pub use registry::{rule, Callers, Code, Kind, Rule, RULES};
pub use rules::{estimated_speedup, Estimate};
pub use semantic::{parse_suppression, Module, Value};
pub use plan::{check_incremental, check_incremental_unless, shift_findings, Cache};
pub use prescan::might_have_findings;
use plan::*;
use prescan::*;
use suppression::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
    Hint,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
            Severity::Hint => "hint",
        }
    }
}

/// Whether a fix can change what the program does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Applicability {
    /// Behaviour is unchanged; applied by `--fix` and "fix all".
    Safe,
    /// Behaviour may change (numerics, ordering, where data lives); applied on request.
    Unsafe,
}

/// Replace `range` (bytes of the source) with `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub range: Range<usize>,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    pub applicability: Applicability,
    /// A title of about 60 characters at most ("Run pandas on the GPU with
    /// cudf.pandas").
    pub message: String,
    /// What the fix does beyond its title, and what to watch for (may be empty).
    pub details: String,
    /// Sorted by position, non-overlapping.
    pub edits: Vec<Edit>,
    /// Module-level lines not yet placed (see `fixes::resolve`); always
    /// empty in what [`check`] returns.
    pub(crate) pending: Vec<(fixes::Anchor, String)>,
    /// In a notebook (`Settings::notebook`): the fix is a new code cell
    /// holding this text, put before every other cell (a zero-code-change
    /// mode's magic, `%load_ext cudf.pandas`), and `edits` is empty. Who
    /// holds the notebook makes the cell.
    pub cell: Option<String>,
}

impl Fix {
    /// A fix whose edits are all placed (as one read back from a cache).
    pub fn new(applicability: Applicability, message: String, details: String, edits: Vec<Edit>) -> Fix {
        Fix { applicability, message, details, edits, pending: Vec::new(), cell: None }
    }

    /// A fix that is a new first cell of a notebook holding `text`.
    pub fn first_cell(applicability: Applicability, message: String, details: String, text: String) -> Fix {
        Fix { applicability, message, details, edits: Vec::new(), pending: Vec::new(), cell: Some(text) }
    }
}

/// One piece of advice about one span of source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Byte range in the source.
    pub range: Range<usize>,
    pub code: Code,
    /// Library id (`cupy`, `cudf`, …).
    pub library: &'static str,
    pub severity: Severity,
    /// One sentence, about 100 characters at most: the call, the library
    /// and why it gains. What a terminal, a problems panel or virtual text
    /// shows.
    pub message: String,
    /// Everything else, for whoever asks (hover, `--show-details`, JSON):
    /// why, caveats and fallbacks, what the guess rests on, the expected
    /// speedup with its provenance, and the install line. Sentences; empty
    /// when the message says it all.
    pub details: String,
    /// The finding says that this code stays on the CPU (a fallback of the
    /// library's GPU path, or a GPU too old for it), not that the library
    /// runs it on the GPU: what an editor's inline hint must not contradict.
    pub stays_on_cpu: bool,
    pub fix: Option<Fix>,
}

/// What the user configured (`[tool.gpulens]`, command line, editor settings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Codes or prefixes to run (`CUPY`, `CUML001`, `ALL`); empty means all.
    pub select: Vec<String>,
    /// Codes or prefixes never to report.
    pub ignore: Vec<String>,
    /// Below this many elements (or rows) the GPU loses to the CPU.
    pub min_elements: u64,
    /// The text is a notebook's cells (`Some`), and what the notebook says
    /// beyond its code. The zero-code-change modes are then offered as the
    /// magics of its first cell (`%load_ext cudf.pandas`), not as the
    /// command that runs a script. Set by whoever reads the notebook, never
    /// configured.
    pub notebook: Option<std::sync::Arc<NotebookFacts>>,
}

/// What a notebook says beyond its code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NotebookFacts {
    /// Sizes its saved outputs show (see [`RecordedSize`]).
    pub sizes: Vec<RecordedSize>,
}

/// A size a notebook's saved output shows for a module-level name: the
/// output of a cell ending in `df.shape` (`(48000000, 7)`), `len(df)`,
/// `x.size`, or the display of a table (`[48000000 rows x 7 columns]`).
/// It counts for a value whose kind the code says (a table, an array) and
/// whose size it does not, and only where the module binds the name once
/// (so that the output was of that value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedSize {
    pub name: String,
    /// Its first dimension (a table's rows), where the output shows it.
    pub rows: Option<u64>,
    /// Its elements (the product of its dimensions), where the output shows them.
    pub elements: Option<u64>,
}

impl Default for Settings {
    fn default() -> Self {
        // The decision framework: under ~10K elements the GPU's launch and
        // transfer overheads outweigh its throughput.
        Settings { select: Vec::new(), ignore: Vec::new(), min_elements: 10_000, notebook: None }
    }
}

pub(crate) fn matches_code(pattern: &str, code: &str) -> bool {
    let pattern = pattern.trim();
    pattern.eq_ignore_ascii_case("ALL") || code.starts_with(&pattern.to_ascii_uppercase())
}

impl Settings {
    pub fn is_enabled(&self, code: &str) -> bool {
        let selected = self.select.is_empty() || self.select.iter().any(|p| matches_code(p, code));
        selected && !self.ignore.iter().any(|p| matches_code(p, code))
    }
}

/// Everything a rule sees.
pub(crate) struct Context<'a, 't> {
    pub module: &'a Module<'t>,
    pub settings: &'a Settings,
    pub gpu: &'a GpuProfile,
    /// Asked now and then during a long run of the rules: true means a
    /// newer edit made this analysis pointless (the rules stop early).
    pub cancel: &'a dyn Fn() -> bool,
}

/// Runs every enabled rule over `text` (whose tree is `tree`).
pub fn check(text: &str, tree: &Tree, settings: &Settings, gpu: &GpuProfile) -> Vec<Finding> {
    let knowledge = Knowledge::get();
    if !might_have_findings(text) {
        return Vec::new();
    }
    let mut plan = Plan::new(text, tree, knowledge, &mut Scans::default());
    if let Some(outside) = plan.outside.as_mut() {
        outside.read_notebook(settings);
    }
    let outside = plan.outside.as_ref().expect("a plan made without memory walks the outside");
    let quiet: Vec<bool> = plan.units.iter().map(|u| u.quiet).collect();
    let quiet: Vec<usize> = plan.unwalked(&quiet).map(|u| u.id).collect();
    if quiet.len() == plan.units.len() {
        return finish(text, tree, plan.units.iter().map(|u| u.node), &plan.units_and_calls(), outside, run_rules(outside, text, tree, settings, gpu, true));
    }
    let mut module = Module::new_skipping(text, tree, knowledge, &sorted(quiet));
    module.read_notebook(settings);
    finish(text, tree, plan.units.iter().map(|u| u.node), &plan.units_and_calls(), outside, run_rules(&module, text, tree, settings, gpu, true))
}

/// [`check`] in one walk of the tree, for a tree analysed once (`gpulens
/// check`): no plan of what an edit would re-analyse. `hidden`: module-level
/// functions the tree leaves out (their names are still taken); `unwalked`:
/// where the definitions start that are known to have no finding; without
/// `with_fixes`, findings come without their fixes.
fn check_once(
    text: &str,
    tree: &Tree,
    settings: &Settings,
    gpu: &GpuProfile,
    (hidden, unwalked): (&[String], &[usize]),
    with_fixes: bool,
    place: Option<&project::Place>,
) -> Vec<Finding> {
    let units = definition_units(tree);
    // Definitions known to have no finding (`unwalked`: where they start) are not walked.
    let skip: Vec<usize> = units.iter().filter(|u| unwalked.binary_search(&u.1.start).is_ok()).map(|u| u.0.id()).collect();
    let mut module = Module::new_skipping(text, tree, Knowledge::get(), &sorted(skip));
    module.hidden_definitions = hidden.iter().cloned().collect();
    module.place = place.cloned();
    module.read_notebook(settings);
    let findings = run_rules(&module, text, tree, settings, gpu, with_fixes);
    // The functions that call others in a loop, for hotness.
    let callers: Vec<(Node<'_>, Vec<String>)> = units
        .iter()
        .map(|(node, range, _, _)| (*node, called_names(&text[range.clone()])))
        .filter(|(_, calls)| !calls.is_empty())
        .collect();
    let callers: Vec<(Node<'_>, &[String])> = callers.iter().map(|(node, calls)| (*node, &calls[..])).collect();
    finish(text, tree, units.iter().map(|u| u.0), &callers, &module, findings)
}

/// [`check`] for text that has no tree yet, as `gpulens check` reads files:
/// parses only what can matter. A byte-level outline finds the functions;
/// the parser skips test functions (whose advice is never shown, unless the
/// file uses a GPU library), functions that name nothing a rule can start
/// from (see [`irrelevant_definitions`]) and the insides of long docstrings.
/// The tree it gives is used only when it is what the outline predicted (no
/// syntax errors, every kept definition where the outline saw it). The
/// findings are the same as `check` over the whole tree: a test holds it to
/// that over every fixture and the benchmark corpus.
pub fn check_text(text: &str, settings: &Settings, gpu: &GpuProfile) -> Vec<Finding> {
    check_text_with(text, settings, gpu, true, None)
}

/// [`check_text`] without the fixes (`gpulens check` when its output shows
/// none): the same findings, and no rewrite is worked out.
pub fn check_text_unfixed(text: &str, settings: &Settings, gpu: &GpuProfile) -> Vec<Finding> {
    check_text_with(text, settings, gpu, false, None)
}

/// [`check_text`] (or [`check_text_unfixed`], without `with_fixes`) of a
/// file of a project: what the project's other modules declare their
/// functions return is known where this file calls them (see [`project`]).
pub fn check_text_in(text: &str, settings: &Settings, gpu: &GpuProfile, place: Option<&project::Place>, with_fixes: bool) -> Vec<Finding> {
    check_text_with(text, settings, gpu, with_fixes, place)
}

fn check_text_with(text: &str, settings: &Settings, gpu: &GpuProfile, with_fixes: bool, place: Option<&project::Place>) -> Vec<Finding> {
    // (A file that calls a function the project's index knows may work on
    // a value from another module, whatever it imports.)
    let imported = place.map(|p| p.imported_names(text)).unwrap_or_default();
    let receiving: &[String] = place.map_or(&[], |p| p.receiving());
    let place = place.filter(|_| !imported.is_empty() || !receiving.is_empty());
    if place.is_none() && !might_have_findings(text) {
        return Vec::new();
    }
    // Hotness, and the advice a loop gets for calling a function with
    // findings, read the callers of the functions with findings: parsed
    // with the functions that call a kept one in a loop, then again with
    // those calling a function that turned out to have findings all the
    // same (rarely: a caller that got the advice of its callee).
    let mut callers_of: FxHashSet<String> = FxHashSet::default();
    for _ in 0..4 {
        let parsed = match parse_what_matters(text, &callers_of, !with_fixes, place.map(|_| (&imported, receiving))) {
            Some(Parse::Part(parsed)) => parsed,
            Some(Parse::Quiet) => return Vec::new(),
            None => break,
        };
        let findings = check_once(text, &parsed.tree, settings, gpu, (&parsed.hidden, &parsed.unwalked), with_fixes, place);
        let units = definition_units(&parsed.tree);
        // (Units are sorted and disjoint: the one that could hold a finding
        // is the last to start at or before it.)
        let unit_of = |f: &Finding| {
            let i = units.partition_point(|(_, range, _, _)| range.start <= f.range.start);
            (i > 0 && units[i - 1].1.contains(&f.range.start)).then(|| units[i - 1].0)
        };
        let before = callers_of.len();
        callers_of.extend(findings.iter().filter_map(&unit_of).filter_map(|u| definition_name(text, u)).map(str::to_string));
        if callers_of.len() > before && parsed.left_out_calls.iter().flatten().any(|c| callers_of.contains(c)) {
            continue;
        }
        // A rewrite of module-level code looks at every function that uses
        // its variables, skipped ones too.
        if !findings.iter().any(|f| f.fix.is_some() && unit_of(f).is_none()) {
            return findings;
        }
        break;
    }
    check_once(text, &gpulens_syntax::parse(text), settings, gpu, (&[], &[]), with_fixes, place)
}

/// [`check_text_in`] over the whole tree, with no pre-scan (for tests: the
/// pre-scan must find the same).
#[doc(hidden)]
pub fn check_whole_in(text: &str, settings: &Settings, gpu: &GpuProfile, place: Option<&project::Place>) -> Vec<Finding> {
    if !might_have_findings(text) && place.is_none_or(|p| !p.reads_index(text)) {
        return Vec::new();
    }
    check_once(text, &gpulens_syntax::parse(text), settings, gpu, (&[], &[]), true, place)
}

/// Whether [`check_text`] would parse `text` only in part (for tests).
#[doc(hidden)]
pub fn parses_in_part(text: &str) -> bool {
    parse_what_matters(text, &FxHashSet::default(), false, None).is_some()
}

/// Whether [`check_text`] finds from the bytes alone that `text` can have
/// no finding, and parses none of it (for tests).
#[doc(hidden)]
pub fn parses_nothing(text: &str) -> bool {
    matches!(parse_what_matters(text, &FxHashSet::default(), false, None), Some(Parse::Quiet))
}

/// The names of the definitions [`check_text`]'s first parse of `text`
/// analyses, in order; `None` where it parses the whole text (for tests).
#[doc(hidden)]
pub fn analysed_definitions(text: &str) -> Option<Vec<String>> {
    let parsed = match parse_what_matters(text, &FxHashSet::default(), false, None)? {
        Parse::Part(parsed) => parsed,
        Parse::Quiet => return Some(Vec::new()),
    };
    let units = definition_units(&parsed.tree);
    let walked = units.iter().filter(|u| parsed.unwalked.binary_search(&u.1.start).is_err());
    Some(walked.filter_map(|u| definition_name(text, u.0)).map(str::to_string).collect())
}

/// The module-level statements [`check_text_unfixed`]'s first parse of
/// `text` leaves out (for tests).
#[doc(hidden)]
pub fn statements_left_out(text: &str) -> Vec<&str> {
    match parse_what_matters(text, &FxHashSet::default(), true, None) {
        Some(Parse::Part(parsed)) => parsed.left_out.iter().map(|r| text[r.clone()].trim_end()).collect(),
        _ => Vec::new(),
    }
}

/// The name a definition (decorated or not) gives.
pub(crate) fn definition_name<'a>(text: &'a str, unit: Node<'_>) -> Option<&'a str> {
    let g = gpulens_syntax::grammar();
    let definition = if unit.kind_id() == g.decorated_definition { unit.field("definition")? } else { unit };
    definition.field("name").map(|n| &text[n.byte_range()])
}

/// [`check`] without any of its shortcuts (the byte pre-scan, skipping
/// functions that name nothing a rule looks at): the reference the tests
/// hold the shortcuts to.
#[doc(hidden)]
pub fn check_reference(text: &str, tree: &Tree, settings: &Settings, gpu: &GpuProfile) -> Vec<Finding> {
    check_once(text, tree, settings, gpu, (&[], &[]), true, None)
}

fn run_rules(module: &Module<'_>, text: &str, tree: &Tree, settings: &Settings, gpu: &GpuProfile, with_fixes: bool) -> Vec<Finding> {
    run_rules_unless(module, text, tree, settings, gpu, with_fixes, &|| false)
}

/// [`run_rules`], stopping early (with what it has) once `cancel` says so.
fn run_rules_unless(
    module: &Module<'_>,
    text: &str,
    tree: &Tree,
    settings: &Settings,
    gpu: &GpuProfile,
    with_fixes: bool,
    cancel: &dyn Fn() -> bool,
) -> Vec<Finding> {
    let cx = Context { module, settings, gpu, cancel };
    let mut findings = rules::run(&cx);
    rules::gate_by_compute_capability(&cx, &mut findings);
    let in_test = |f: &Finding| !f.code.rule().in_tests && module.tests.iter().any(|t| t.contains(&f.range.start));
    findings.retain(|f| settings.is_enabled(f.code.as_str()) && !is_suppressed(module, text, f) && !in_test(f));
    rules::keep_light_fits(&cx, &mut findings);
    if with_fixes {
        fixes::attach(&cx, tree, &mut findings);
    }
    findings
}

/// Sorts and dedups, marks findings in functions called from loops
/// (`callers`: functions with the names they call; `module`: its calls at
/// module level are the script's own), and places the fixes' imports.
/// `units`: the definition units (see [`definition_units`]), in source order.
fn finish<'t>(
    text: &str,
    tree: &'t Tree,
    units: impl IntoIterator<Item = Node<'t>>,
    callers: &[(Node<'t>, &[String])],
    module: &Module<'t>,
    findings: Vec<Finding>,
) -> Vec<Finding> {
    finish_keyed(text, tree, units.into_iter().map(|u| (u, None)), callers, module, findings, &mut hot::Memo::default())
}

/// [`finish`] with each unit's key (see `plan`), so that what hotness reads
/// of a unit is kept in `memo` for the next analysis.
fn finish_keyed<'t>(
    text: &str,
    tree: &'t Tree,
    units: impl IntoIterator<Item = (Node<'t>, Option<u64>)>,
    callers: &[(Node<'t>, &[String])],
    module: &Module<'t>,
    mut findings: Vec<Finding>,
    memo: &mut hot::Memo,
) -> Vec<Finding> {
    if findings.is_empty() {
        return findings;
    }
    let functions = hot::Functions::new(tree, units, std::mem::take(memo));
    hot::propagate(text, callers, &functions, module, &mut findings);
    findings.sort_by(|a, b| (a.range.start, a.range.end, a.code.as_str()).cmp(&(b.range.start, b.range.end, b.code.as_str())));
    findings.dedup_by(|a, b| a.range == b.range && a.code == b.code);
    hot::annotate(text, callers, &functions, module, &mut findings);
    *memo = functions.memo();
    fixes::resolve(text, tree, &mut findings);
    findings
}

fn sorted(mut ids: Vec<usize>) -> Vec<usize> {
    ids.sort_unstable();
    ids
}

/// Whether `top` is a module of a GPU library whose use the `GPU…` rules
/// check (libraries.toml's `gpu_modules`).
pub(crate) fn is_gpu_module(top: &str) -> bool {
    Knowledge::get().gpu_modules.iter().any(|m| m == top)
}

/// The outcome of [`fix_all`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fixed {
    pub text: String,
    /// In a notebook: the new first cells the fixes ask for (see
    /// [`Fix::cell`]), each once, in the order asked.
    pub cells: Vec<String>,
    /// Fixes applied, over all passes.
    pub applied: usize,
    /// Passes thrown away because their result had more syntax errors than
    /// the text before them (a bug in a fix; the text is left as it was).
    pub refused: usize,
}

/// Applies every fix whose applicability is allowed, re-analysing after each
/// pass so that fixes that overlapped can apply to the rewritten code, until
/// nothing changes (at most ten passes). No pass may add a syntax error.
pub fn fix_all(text: &str, settings: &Settings, gpu: &GpuProfile, unsafe_fixes: bool) -> Fixed {
    let mut current = text.to_string();
    let mut tree = gpulens_syntax::parse(&current);
    let mut errors = syntax_errors(&tree);
    let mut applied = 0;
    let mut refused = 0;
    let mut cells: Vec<String> = Vec::new();
    for _ in 0..10 {
        let findings = check(&current, &tree, settings, gpu);
        let fixes: Vec<&Fix> = findings
            .iter()
            .filter_map(|f| f.fix.as_ref())
            .filter(|x| unsafe_fixes || x.applicability == Applicability::Safe)
            .collect();
        for cell in fixes.iter().filter_map(|x| x.cell.as_ref()) {
            if !cells.contains(cell) {
                cells.push(cell.clone());
                applied += 1;
            }
        }
        let fixes: Vec<&Fix> = fixes.into_iter().filter(|x| x.cell.is_none()).collect();
        if fixes.is_empty() {
            break;
        }
        let (next, n) = apply_fixes(&current, fixes);
        if n == 0 || next == current {
            break;
        }
        let next_tree = gpulens_syntax::parse(&next);
        let next_errors = syntax_errors(&next_tree);
        if next_errors > errors {
            refused += 1;
            break;
        }
        applied += n;
        current = next;
        tree = next_tree;
        errors = next_errors;
    }
    Fixed { text: current, cells, applied, refused }
}
