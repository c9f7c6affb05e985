//! Rules: Python source + the knowledge base + a GPU profile → findings.
//!
//! Pure functions over a text and its tree: no I/O, no editor types, no
//! NVML. The command line and the language server both call [`check`] and
//! turn its [`Finding`]s into their own formats.

use gpulens_syntax::NodeExt;
pub mod config;
mod fixes;
mod hot;
mod registry;
mod rules;
mod semantic;

use std::hash::{Hash, Hasher};
use std::ops::Range;

use rustc_hash::{FxHashMap, FxHashSet, FxHasher};

use gpulens_gpu::GpuProfile;
use gpulens_knowledge::Knowledge;
use gpulens_syntax::{Node, Tree};
use serde::Serialize;

pub use fixes::{apply_fixes, fix_all, syntax_errors, Fixed};
pub use registry::{rule, Rule, RULES};
pub use rules::{estimated_speedup, Estimate};
pub use semantic::{parse_suppression, Module, Value};

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
    pub message: String,
    /// Sorted by position, non-overlapping.
    pub edits: Vec<Edit>,
    /// Module-level lines not yet placed (see `fixes::resolve`); always
    /// empty in what [`check`] returns.
    pub(crate) pending: Vec<(fixes::Anchor, String)>,
}

impl Fix {
    /// A fix whose edits are all placed (as one read back from a cache).
    pub fn new(applicability: Applicability, message: String, edits: Vec<Edit>) -> Fix {
        Fix { applicability, message, edits, pending: Vec::new() }
    }
}

/// One piece of advice about one span of source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Byte range in the source.
    pub range: Range<usize>,
    pub code: &'static str,
    /// Library id (`cupy`, `cudf`, …).
    pub library: &'static str,
    pub severity: Severity,
    pub message: String,
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
}

impl Default for Settings {
    fn default() -> Self {
        // The decision framework: under ~10K elements the GPU's launch and
        // transfer overheads outweigh its throughput.
        Settings { select: Vec::new(), ignore: Vec::new(), min_elements: 10_000 }
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
    let plan = Plan::new(text, tree, knowledge, &mut Scans::default());
    let outside = plan.outside.as_ref().expect("a plan made without memory walks the outside");
    let quiet: Vec<usize> = plan.units.iter().filter(|u| u.quiet).map(|u| u.id).collect();
    if quiet.len() == plan.units.len() {
        return finish(text, tree, plan.units.iter().map(|u| u.node), &plan.units_and_calls(), outside, run_rules(outside, text, tree, settings, gpu, true));
    }
    let module = Module::new_skipping(text, tree, knowledge, &sorted(quiet));
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
    hidden: &[String],
    unwalked: &[usize],
    with_fixes: bool,
) -> Vec<Finding> {
    let units = definition_units(tree);
    // Definitions known to have no finding (`unwalked`: where they start) are not walked.
    let skip: Vec<usize> = units.iter().filter(|u| unwalked.binary_search(&u.1.start).is_ok()).map(|u| u.0.id()).collect();
    let mut module = Module::new_skipping(text, tree, Knowledge::get(), &sorted(skip));
    module.hidden_definitions = hidden.iter().cloned().collect();
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
    check_text_with(text, settings, gpu, true)
}

/// [`check_text`] without the fixes (`gpulens check` when its output shows
/// none): the same findings, and no rewrite is worked out.
pub fn check_text_unfixed(text: &str, settings: &Settings, gpu: &GpuProfile) -> Vec<Finding> {
    check_text_with(text, settings, gpu, false)
}

fn check_text_with(text: &str, settings: &Settings, gpu: &GpuProfile, with_fixes: bool) -> Vec<Finding> {
    if !might_have_findings(text) {
        return Vec::new();
    }
    // Hotness, and the advice a loop gets for calling a function with
    // findings, read the callers of the functions with findings: parsed
    // with the functions that call a kept one in a loop, then again with
    // those calling a function that turned out to have findings all the
    // same (rarely: a caller that got the advice of its callee).
    let mut callers_of: FxHashSet<String> = FxHashSet::default();
    for _ in 0..4 {
        let parsed = match parse_what_matters(text, &callers_of, !with_fixes) {
            Some(Parse::Part(parsed)) => parsed,
            Some(Parse::Quiet) => return Vec::new(),
            None => break,
        };
        let findings = check_once(text, &parsed.tree, settings, gpu, &parsed.hidden, &parsed.unwalked, with_fixes);
        let units = definition_units(&parsed.tree);
        // (Units are sorted and disjoint: the one that could hold a finding
        // is the last to start at or before it.)
        let unit_of = |f: &Finding| {
            let i = units.partition_point(|(_, range, _, _)| range.start <= f.range.start);
            (i > 0 && units[i - 1].1.contains(&f.range.start)).then(|| units[i - 1].0)
        };
        let before = callers_of.len();
        callers_of.extend(findings.iter().filter_map(|f| unit_of(f)).filter_map(|u| definition_name(text, u)).map(str::to_string));
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
    check_once(text, &gpulens_syntax::parse(text), settings, gpu, &[], &[], with_fixes)
}

/// Whether [`check_text`] would parse `text` only in part (for tests).
#[doc(hidden)]
pub fn parses_in_part(text: &str) -> bool {
    parse_what_matters(text, &FxHashSet::default(), false).is_some()
}

/// Whether [`check_text`] finds from the bytes alone that `text` can have
/// no finding, and parses none of it (for tests).
#[doc(hidden)]
pub fn parses_nothing(text: &str) -> bool {
    matches!(parse_what_matters(text, &FxHashSet::default(), false), Some(Parse::Quiet))
}

/// The names of the definitions [`check_text`]'s first parse of `text`
/// analyses, in order; `None` where it parses the whole text (for tests).
#[doc(hidden)]
pub fn analysed_definitions(text: &str) -> Option<Vec<String>> {
    let parsed = match parse_what_matters(text, &FxHashSet::default(), false)? {
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
    match parse_what_matters(text, &FxHashSet::default(), true) {
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

/// What [`parse_what_matters`] parsed.
struct Parsed {
    tree: Tree,
    /// The names of the module-level functions it leaves out.
    hidden: Vec<String>,
    /// Where the definitions start that it parsed but that have no finding.
    unwalked: Vec<usize>,
    /// The names each function it left out calls, of those with a loop.
    left_out_calls: Vec<Vec<String>>,
    /// The module's statements it left out (see [`Unread`]).
    left_out: Vec<Range<usize>>,
}

/// What [`parse_what_matters`] makes of a text.
enum Parse {
    /// Nothing in it can produce a finding: nothing was parsed.
    Quiet,
    /// It was parsed without the parts that cannot produce a finding.
    Part(Parsed),
}

/// The tree of `text` without the parts that cannot produce a finding
/// (none at all when no part can); `None` when the outline can't be
/// trusted (or saves nothing). Functions that call one of `callers_of` in
/// a loop are parsed too (hotness reads them). With `unread_out`, the
/// module's imports and plain assignments that start nothing and bind only
/// names nothing parsed reads are left out too (see [`Unread`]): only the
/// fixes, not the rules, read what a module binds beyond that.
fn parse_what_matters(text: &str, callers_of: &FxHashSet<String>, unread_out: bool) -> Option<Parse> {
    let outline = gpulens_syntax::outline::outline(text)?;
    let plain = plain_code(text)?;
    // The GPU rules apply in tests too, and read kernels anywhere.
    let gpu_code = imports_gpu_library(text);
    let mut skipped: Vec<bool> =
        outline.definitions.iter().map(|d| !gpu_code && d.name.starts_with("test") && !d.fixture).collect();
    let mut irrelevant = vec![false; skipped.len()];
    let mut outside_quiet = false;
    let mut unread = Unreads { statements: Vec::new(), facts: 0 };
    if !gpu_code {
        if let Some((found, quiet, statements)) = irrelevant_definitions(text, &plain, &outline, &skipped, unread_out) {
            irrelevant = found;
            outside_quiet = quiet;
            unread = statements;
        }
    }
    // Of the functions left out, those that call in a loop one of
    // `callers_of` or a function kept for its own sake (which may turn out
    // to have findings: keeping its callers now spares parsing the file
    // again once it has), and what the others call.
    let kept: FxHashSet<&str> = outline
        .definitions
        .iter()
        .zip(skipped.iter().zip(&irrelevant))
        .filter(|(_, (s, i))| !**s && !**i)
        .map(|(d, _)| d.name.as_str())
        .collect();
    let mut left_out_calls = Vec::new();
    for ((d, s), i) in outline.definitions.iter().zip(skipped.iter_mut()).zip(irrelevant.iter_mut()) {
        if *i && !*s {
            let calls = called_in_loops(&text[d.range.clone()]);
            if calls.iter().any(|c| callers_of.contains(c) || kept.contains(c.as_str())) {
                *i = false;
            } else if !calls.is_empty() {
                left_out_calls.push(calls);
            }
        }
        *s |= *i;
    }
    // Every definition left out (or a test, whose findings are never
    // shown), and nothing outside them to start a rule: nothing to parse.
    if outside_quiet && skipped.iter().all(|s| *s) {
        return Some(Parse::Quiet);
    }
    let classes = keep_class_bodies(text, &outline, &mut skipped);
    let skip = skipped_ranges(&outline, &skipped, &classes);
    let (skip, left_out) =
        if unread.statements.is_empty() { (skip, Vec::new()) } else { without_unread(text, &plain, &outline, skip, &unread)? };
    // Without fixes, runs of comment lines the tree can do without (only
    // the fixes read comments, and suppressions are kept).
    // (A run inside a skipped part joins it.)
    let skip = if unread_out && !outline.comment_runs.is_empty() {
        joined(skip.into_iter().chain(outline.comment_runs.iter().cloned()).collect())
    } else {
        skip
    };
    // Irrelevant definitions parsed after all (to keep a class body from
    // emptying) need no walk: where they start.
    let unwalked: Vec<usize> =
        outline.definitions.iter().zip(skipped.iter().zip(&irrelevant)).filter(|(_, (s, i))| !**s && **i).map(|(d, _)| d.header_start).collect();
    if skip.is_empty() {
        return None;
    }
    // (Not reusing the tree of the code outside the functions: parsing
    // again with other parts left out can give another tree than a fresh
    // parse, and findings then differ.)
    let tree = gpulens_syntax::outline::parse_excluding(text, &skip);
    let root = tree.root_node();
    if root.has_error() {
        return None;
    }
    // Every kept definition is a unit where the outline put it, and every
    // skipped docstring was a string.
    let kept: Vec<usize> = outline.definitions.iter().zip(&skipped).filter(|(_, s)| !**s).map(|(d, _)| d.header_start).collect();
    let found: Vec<usize> = definition_units(&tree).iter().map(|(_, range, _, _)| range.start).collect();
    if kept != found {
        return None;
    }
    let strings_hold = outline.long_strings.iter().all(|r| {
        let i = skip.partition_point(|s| s.start < r.start);
        let covered = i > 0 && r.end <= skip[i - 1].end;
        covered
            || root
                .descendant_for_byte_range(r.start - 1, r.start)
                .is_some_and(|n| n.kind_name() == "string_start" && n.end_byte() == r.start)
    });
    let hidden = outline.definitions.iter().zip(&skipped).filter(|(d, s)| **s && d.classes.is_empty()).map(|(d, _)| d.name.clone());
    // (A class left out whole may have been parsed after all, to keep the
    // parts few: a name both defined and hidden is defined all the same.)
    let hidden = hidden.chain(classes.iter().map(|c| outline.classes[*c].name.clone()));
    strings_hold.then(|| Parse::Part(Parsed { tree, hidden: hidden.collect(), unwalked, left_out_calls, left_out }))
}

/// `ranges` sorted, those that overlap or touch joined.
fn joined(mut ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
    ranges.sort_by_key(|r| r.start);
    let mut out: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// A class body can't be empty. A class whose every statement would be
/// skipped is left out whole when it stands in the module undecorated with
/// a one-line header that calls nothing (`class TestSolve(Base):`, a test
/// class, often): its methods were all left out, and nothing else in it can
/// start a rule. Of any other such class, its smallest definition is kept.
/// Returns the indices (in `outline.classes`) of the classes to leave out.
fn keep_class_bodies(text: &str, outline: &gpulens_syntax::outline::Outline, skipped: &mut [bool]) -> Vec<usize> {
    let mut by_class: FxHashMap<usize, Vec<usize>> = FxHashMap::default();
    for (i, d) in outline.definitions.iter().enumerate() {
        if let Some(class) = d.classes.last() {
            by_class.entry(*class).or_default().push(i);
        }
    }
    let mut whole = Vec::new();
    for (c, info) in outline.classes.iter().enumerate() {
        let inside: &[usize] = by_class.get(&info.line_start).map_or(&[], |v| &v[..]);
        let skipped_inside = inside.iter().filter(|&&i| skipped[i]).count();
        if info.statements > 0 && skipped_inside >= info.statements {
            let header = text[info.range.clone()].lines().next().unwrap_or("");
            let plain = header.matches('(').count() <= 1 && header.trim_end().ends_with(':');
            if info.indent == 0 && !info.decorated && plain {
                whole.push(c);
                continue;
            }
            let smallest = inside.iter().min_by_key(|&&i| outline.definitions[i].range.len()).expect("a statement");
            skipped[*smallest] = false;
        }
    }
    whole
}

/// Whether `r` lies within one of `ranges` (sorted and disjoint: the one
/// that could hold it is the last to start at or before it).
fn within_one(ranges: &[Range<usize>], r: &Range<usize>) -> bool {
    let i = ranges.partition_point(|s| s.start <= r.start);
    i > 0 && r.end <= ranges[i - 1].end
}

/// The skipped definitions and classes (indices in `outline.classes`) and
/// the long strings outside them, sorted and disjoint.
fn skipped_ranges(outline: &gpulens_syntax::outline::Outline, skipped: &[bool], classes: &[usize]) -> Vec<Range<usize>> {
    let mut skip: Vec<Range<usize>> = classes.iter().map(|c| outline.classes[*c].range.clone()).collect();
    // (A skipped class's definitions are inside it.)
    let definitions: Vec<Range<usize>> = outline
        .definitions
        .iter()
        .zip(skipped)
        .filter(|(d, s)| **s && !within_one(&skip, &d.range))
        .map(|(d, _)| d.range.clone())
        .collect();
    skip.extend(definitions);
    skip.sort_by_key(|r| r.start);
    let strings: Vec<Range<usize>> = outline.long_strings.iter().filter(|r| !within_one(&skip, r)).cloned().collect();
    skip.extend(strings);
    skip.sort_by_key(|r| r.start);
    skip
}

/// Which of the outline's definitions can have no finding shown (tests
/// never do), judged from the
/// module's code outside them (parsed alone) and each function's tokens
/// outside its comments and strings (`plain`: see [`plain_code`]). Every
/// rule starts from one of:
/// - a call that resolves through an import (the module's or the
///   function's own) to the knowledge base, or a module-level name whose
///   value is built from one: a dotted name spelling an entry;
/// - in a module that imports an array library, a loop over `range` that
///   writes an element or accumulates (`x[i] = …`, `s += …`);
/// - a model's or index's work through `self`.
///
/// (Functions that only call others are the caller's to keep: see
/// [`parse_what_matters`].) Also whether the whole file is quiet: every
/// definition a test (`tests`) or left out, and the code outside them
/// starting none of these either; and with `unread_out`, the module's
/// statements that start nothing and only bind names ([`Unread`]). `None` when an import can't be
/// read. Files using a GPU library are not judged here (their rules read
/// kernels and tests anywhere).
fn irrelevant_definitions<'p>(
    text: &str,
    plain: &'p str,
    outline: &gpulens_syntax::outline::Outline,
    tests: &[bool],
    unread_out: bool,
) -> Option<(Vec<bool>, bool, Unreads<'p>)> {
    let knowledge = Knowledge::get();
    // The code outside the functions, statement by statement, without its
    // comments and strings (f-strings kept).
    let statements: Vec<&str> = outline.statements.iter().map(|r| &plain[r.clone()]).collect();
    // What the module imports from the libraries the rules know, by local
    // name (in the module, its classes, or blocks around them).
    let mut imported: FxHashMap<&str, Vec<String>> = FxHashMap::default();
    // (Read from the text: the blanked copy has no module names in quotes.)
    // And the facts each statement's imports make (see [`import_facts`]).
    let mut facts: Vec<u8> = vec![0; statements.len()];
    let with_imports = outline.statements.iter().zip(&statements).zip(facts.iter_mut()).filter(|((_, code), _)| code.contains("import"));
    for ((range, _), facts) in with_imports {
        let read = local_imports(&text[range.clone()], &mut |name, target| {
            *facts |= import_facts(&target);
            if relevant_module(knowledge, &target) {
                imported.entry(name).or_default().push(target);
            }
        });
        if !read {
            return None; // an import it can't read
        }
    }
    // What a dotted name spelled through the module's imports alone starts,
    // by its text (the name and its chain) and whether it is called there:
    // a module spells the same few names again and again (`np.asarray`).
    let spelled_before: std::cell::RefCell<FxHashMap<(&'p str, bool), Option<Start>>> = Default::default();
    // How `token` (in a function's `code`) starts a rule, if it does: it
    // names a live name (as a value where that is all its statements make)
    // or spells an entry some rule reports on, or every entry it spells
    // only makes a value (see [`makes_value_only`]).
    let start_in_function = |code: &'p str, token: &'p str, local: &FxHashMap<&str, Vec<String>>, live: &FxHashMap<&str, Start>| {
        if let Some(&made) = live.get(token) {
            return Some(if made >= Start::Light { Start::Rule } else { made });
        }
        let module_targets = imported.get(token);
        let own_targets = if local.is_empty() { None } else { local.get(token) };
        if module_targets.is_none() && own_targets.is_none() {
            return None;
        }
        let end = token.as_ptr() as usize - code.as_ptr() as usize + token.len();
        let memo = own_targets.is_none().then(|| {
            let bytes = code.as_bytes();
            let last = end + dotted_chain_end(&bytes[end..]);
            let called = bytes[last..].iter().find(|b| !matches!(b, b' ' | b'\t')) == Some(&b'(');
            (&code[end - token.len()..last], called)
        });
        if let Some(known) = memo.and_then(|key| spelled_before.borrow().get(&key).copied()) {
            return known;
        }
        let found = spelled_from(code, end, [module_targets, own_targets]);
        if let Some(key) = memo {
            spelled_before.borrow_mut().insert(key, found);
        }
        found
    };
    // What a token ending at `end` of `code` spells through `targets`.
    fn spelled_from(code: &str, end: usize, targets: [Option<&Vec<String>>; 2]) -> Option<Start> {
        let knowledge = Knowledge::get();
        let mut chain: Option<Vec<&str>> = None;
        let mut found = None;
        for targets in targets.into_iter().flatten() {
            let chain = chain.get_or_insert_with(|| dotted_chain(&code.as_bytes()[end..]));
            for target in targets {
                let mut name = target.clone();
                // Called where it is spelled (not an alias made of it, whose
                // calls the bytes don't show).
                let called = || {
                    let last = chain.last().map_or(end, |p| p.as_ptr() as usize - code.as_ptr() as usize + p.len());
                    code.as_bytes()[last..].iter().find(|b| !matches!(b, b' ' | b'\t')) == Some(&b'(')
                };
                let spelled = |name: &str| match knowledge.api(name) {
                    Some(api) if rules::light_array_operation(api) && called() => Some(Start::Light),
                    Some(api) if !makes_value_only(api) => Some(Start::Rule),
                    Some(api) if api.library == "cudf" => Some(Start::Table),
                    Some(_) => Some(Start::Value),
                    None => None,
                };
                found = found.max(spelled(&name));
                for part in chain.iter() {
                    name.push('.');
                    name.push_str(part);
                    found = found.max(spelled(&name));
                }
                if found == Some(Start::Rule) {
                    return found;
                }
            }
        }
        found
    }
    // Live names, bound outside the functions where their value can't be
    // read (a loop's target, `as`), or by a statement that starts from the
    // libraries (everything it assigns to), with the strongest start of
    // their statements: a name only ever bound to a value made (an array's,
    // a table's) is read in a function as that value is.
    let mut live: FxHashMap<&str, Start> = FxHashMap::default();
    let none = FxHashMap::default();
    let strongest_start = |code: &'p str, live: &FxHashMap<&str, Start>| {
        let mut found: Option<Start> = None;
        // (Any start counts here: a value made at module level is read anywhere.)
        for_each_name(code, |token| {
            if found != Some(Start::Rule) {
                found = found.max(start_in_function(code, token, &none, live));
            }
        });
        found
    };
    // (A class body's names are the class's: its methods don't see them.
    // An import binds what the import statements above read.)
    let bound: Vec<(Vec<&str>, Vec<&str>)> = statements
        .iter()
        .zip(&outline.in_class)
        .map(|(code, in_class)| if *in_class { Default::default() } else { bound_names(code) })
        .collect();
    for ((_, unread), code) in bound.iter().zip(&statements) {
        let code = code.trim_start();
        if !(code.starts_with("import ") || code.starts_with("from ")) {
            live.extend(unread.iter().filter(|n| !imported.contains_key(*n)).map(|n| (*n, Start::Rule)));
        }
    }
    // (Until no name's start grows: a statement reading a live name makes
    // at least what that name holds.)
    loop {
        let mut grew = false;
        for (code, (assigned, _)) in statements.iter().zip(&bound) {
            let names = || assigned.iter().filter(|n| !imported.contains_key(*n));
            if names().all(|n| live.get(n) == Some(&Start::Rule)) {
                continue;
            }
            if let Some(made) = strongest_start(code, &live) {
                for name in names() {
                    if live.get(name).is_none_or(|&was| was < made) {
                        live.insert(name, made);
                        grew = true;
                    }
                }
            }
        }
        if !grew {
            break;
        }
    }
    // The module's statements that start nothing and bind only names: left
    // out of the parse where nothing parsed reads those names.
    let mut unread = Vec::new();
    for (i, ((range, code), in_class)) in outline.statements.iter().zip(&statements).zip(&outline.in_class).enumerate() {
        let line = &text[range.clone()];
        // (At the module's left margin: not in a block, which a statement
        // left out could empty. Nothing that may hold a suppression, or
        // several statements.)
        let margin = line.as_bytes().first().is_some_and(|&b| b == b'_' || b.is_ascii_alphabetic());
        if !unread_out || *in_class || !margin || line.contains("gpulens") || code.contains([';', '@', '\\']) {
            continue;
        }
        // (A whole simple statement only: a block's header, or an
        // assignment that starts with a keyword, is a compound statement or
        // part of a syntax error, and leaving it out changes how the lines
        // after it parse.)
        if outline.opens_block[i] {
            continue;
        }
        if let Some(binds) = import_bindings(code) {
            unread.push(Unread { statement: i, binds, facts: facts[i], reads: false });
            continue;
        }
        let (assigned, not_read) = &bound[i];
        let code_start = code.trim_start();
        let first = &code_start[..code_start.bytes().position(|b| !name_byte(b)).unwrap_or(code_start.len())];
        if assigned.is_empty() || !not_read.is_empty() || HARD_KEYWORDS.contains(&first) {
            continue;
        }
        let mut starts = false;
        for_each_name(code, |token| {
            starts = starts
                || matches!(
                    token,
                    "for" | "while" | "lambda" | "self" | "yield" | "await" | "import" | "def" | "class" | "global" | "nonlocal" | "del"
                        | "synchronize" | "copy_to_host"
                )
                || rules::MODEL_WORK.contains(&token)
                || rules::RAY_QUERIES.contains(&token)
                || rules::names_work_on_arrays(token)
                || rules::names_a_mesh_or_ray(token)
                || table_methods().contains(token)
                || start_in_function(code, token, &none, &live).is_some();
        });
        if !starts {
            unread.push(Unread { statement: i, binds: assigned.clone(), facts: 0, reads: true });
        }
    }
    // The names a token of a function must spell to matter below (beyond
    // a mesh or ray name): a model's or ray query's method, a table method,
    // a live name, an import (a function's own imports are asked apart).
    // Most tokens are none of these: a table by length and first byte
    // rules them out without a lookup.
    let mut notable = Signatures::default();
    for name in rules::MODEL_WORK.iter().chain(rules::RAY_QUERIES).chain(table_methods()).chain(live.keys()).chain(imported.keys()) {
        notable.insert(name);
    }
    let top = |target: &str| target.split('.').next().unwrap_or(target).to_string();
    let arrays = imported.values().flatten().any(|t| rules::loops::ARRAY_MODULES.contains(&top(t).as_str()));
    // Attributes of `self` that a statement builds from an imported name
    // (`self.nn = NearestNeighbors()`): the models and indexes whose work
    // methods elsewhere go through. Read once a function needs them.
    let model_attributes: std::cell::OnceCell<FxHashSet<&str>> = std::cell::OnceCell::new();
    let model_attributes = || {
        model_attributes.get_or_init(|| {
            let mut found = FxHashSet::default();
            for (_, attribute, statement) in semantic::self_assignments(text) {
                let value = statement.split_once('=').map_or("", |(_, v)| v);
                let mut built = false;
                for_each_name(value, |token| built = built || imported.contains_key(token));
                if built {
                    found.insert(attribute);
                }
            }
            found
        })
    };
    // Whether the code outside the definitions can start a rule, judged as
    // a function's code is below but more coarsely: a start or a light
    // operation, a loop where an array library is imported, or a value made
    // there (anywhere outside the definitions) and a work method, a mesh or
    // ray name, or a table method. Every byte outside the definitions is read (class lines and
    // bodies, the decorators of classes, blocks around definitions) but
    // import statements, which bind names and start nothing. (Asked only
    // when every definition is a test or starts nothing.)
    let outside_quiet = || {
        let import_only = |code: &str| {
            let code = code.trim_start();
            (code.starts_with("import ") || code.starts_with("from ")) && !code.contains(';')
        };
        let mut taken: Vec<Range<usize>> = outline.definitions.iter().map(|d| d.range.clone()).collect();
        taken.extend(outline.statements.iter().zip(&statements).filter(|(_, code)| import_only(code)).map(|(r, _)| r.clone()));
        taken.sort_by_key(|r| r.start);
        let mut pieces: Vec<&str> = Vec::new();
        let mut at = 0;
        for r in &taken {
            if r.start > at {
                pieces.push(&plain[at..r.start]);
            }
            at = at.max(r.end);
        }
        if at < plain.len() {
            pieces.push(&plain[at..]);
        }
        let (mut starts, mut loops, mut reads) = (false, false, false);
        let mut makes = None;
        for piece in pieces {
            for_each_name(piece, |token| match token {
                _ if starts => {}
                "for" | "while" => loops = true,
                "self" | "synchronize" | "copy_to_host" => starts = true,
                _ => {
                    reads = reads
                        || rules::MODEL_WORK.contains(&token)
                        || rules::names_work_on_arrays(token)
                        || (table_methods().contains(token) && is_method(piece, token));
                    // (Not through live names: here they only carry values,
                    // and a value needs one of the others to be worked on.)
                    match start_in_function(piece, token, &none, &FxHashMap::default()) {
                        Some(Start::Rule | Start::Light) => starts = true,
                        made => makes = makes.max(made),
                    }
                }
            });
        }
        !(starts || (loops && arrays) || (makes.is_some() && reads))
    };
    let irrelevant: Vec<bool> = outline
        .definitions
        .iter()
        .zip(tests)
        .map(|(d, test)| {
            // A test's findings are never shown (the GPU rules, the only
            // ones that report in tests, need a GPU library, and files that
            // import one are not judged here): walked or not, it shows
            // nothing, so it is not read either.
            if *test {
                return true;
            }
            // Its code: the definition without its long strings.
            // Its code, without comments and strings (f-strings kept).
            let code = [&plain[d.range.clone()]];
            let mut local: FxHashMap<&str, Vec<String>> = FxHashMap::default();
            if code.iter().any(|part| part.contains("import")) {
                let read = local_imports(&text[d.range.clone()], &mut |name, target| {
                    if relevant_module(knowledge, &target) {
                        local.entry(name).or_default().push(target);
                    }
                });
                if !read {
                    return false; // an import it can't read
                }
            }
            // A parameter hides the module's name of the same spelling (read
            // once a live name turns up).
            let mut parameters: Option<Vec<&str>> = None;
            let nothing_live = FxHashMap::default();
            let (mut ranges, mut model_work, mut self_attributes, mut starts) = (false, false, false, false);
            // Values made (`np.zeros`, `pd.DataFrame`, `nx.Graph`) matter
            // where a rule reads them: the names the model and geometry rules
            // recognise in a function that works with arrays, and for a
            // table, a method some rule reports on. (The loop rules need an
            // index loop that writes or accumulates, which keeps a function
            // on its own below.)
            let (mut makes, mut reads_arrays, mut reads_tables) = (None, false, false);
            // Model and index methods called (`.fit`, `.search`), read once the
            // function is seen whole.
            let mut work_names: Vec<&str> = Vec::new();
            // Light array operations (`np.sum`, `np.abs`) are reported only
            // in a chain of several statements, or in a loop (over a block
            // of an array the loop keeps).
            let (mut light, mut loops) = (0, false);
            let mut light_at: Vec<usize> = Vec::new();
            for part in &code {
                let mut on_token = |token: &'p str| match token {
                    _ if starts => {}
                    "range" | "enumerate" => ranges = true,
                    "for" | "while" => loops = true,
                    "self" => self_attributes = true,
                    "synchronize" | "copy_to_host" => starts = true,
                    // Names none of the checks below knows: only a mesh or ray name can count.
                    _ if !notable.may_hold(token) && (local.is_empty() || !local.contains_key(token)) => {
                        reads_arrays = reads_arrays || rules::names_a_mesh_or_ray(token);
                    }
                    _ => {
                        model_work = model_work || rules::MODEL_WORK.contains(&token);
                        if rules::MODEL_WORK.contains(&token) || rules::RAY_QUERIES.contains(&token) {
                            // The rules read these as methods (`nn.kneighbors(X)`):
                            // not a `def fit(...)` header, say.
                            if is_method(part, token) {
                                work_names.push(token);
                            }
                        } else {
                            reads_arrays = reads_arrays || rules::names_work_on_arrays(token);
                        }
                        reads_tables = reads_tables || (table_methods().contains(token) && is_method(part, token));
                        let hidden = live.contains_key(token)
                            && parameters.get_or_insert_with(|| own_parameters(code[0])).contains(&token);
                        match start_in_function(part, token, &local, if hidden { &nothing_live } else { &live }) {
                            Some(Start::Rule) => starts = true,
                            Some(Start::Light) => {
                                light += 1;
                                light_at.push(token.as_ptr() as usize - part.as_ptr() as usize);
                                makes = makes.max(Some(Start::Value));
                            }
                            made => makes = makes.max(made),
                        }
                    }
                };
                // The code between the long strings inside the definition
                // (blank in `plain`: no token lies in them).
                let base = d.range.start;
                let first = outline.long_strings.partition_point(|r| r.start < base);
                let mut at = 0;
                for r in outline.long_strings[first..].iter().take_while(|r| r.end <= d.range.end) {
                    for_each_name(&part[at..r.start - base], &mut on_token);
                    at = r.end - base;
                }
                for_each_name(&part[at..], &mut on_token);
            }
            // A model's work counts through `self` (the rule reads no other
            // receiver), a neighbour query where scikit-learn is imported, an
            // index method where its library is; a ray query always.
            let sees = |library: &str| imported.values().chain(local.values()).flatten().any(|t| semantic::within(t, library));
            reads_arrays = reads_arrays
                || (makes.is_some()
                    && work_names.iter().any(|w| {
                        self_attributes
                            || rules::RAY_QUERIES.contains(w)
                            || (rules::NEIGHBOUR_QUERIES.contains(w) && sees("sklearn"))
                            || rules::INDEX_WORK.iter().any(|(library, methods)| methods.contains(w) && sees(library))
                    }));
            let reads_values = match makes {
                Some(Start::Table) => reads_arrays || reads_tables,
                Some(_) => reads_arrays,
                None => false,
            };
            let local_arrays = local.values().flatten().any(|t| rules::loops::ARRAY_MODULES.contains(&top(t).as_str()));
            let loop_writes = (arrays || local_arrays)
                && ranges
                && writes_or_accumulates(code[0].as_bytes())
                && index_loop_may_be_kernel(&text[d.range.clone()]);
            // (In a loop, a light operation is reported only on a whole axis
            // of an array: `x[:, j]`.)
            // (A chain counts statements: several operations in one are one.)
            // (Operations in a condition or an assertion check data: no
            // chain or loop counts them.)
            let function = &text[d.range.clone()];
            let chain = light > 0 && {
                let enough = |offsets: &[usize]| statements_holding(function, offsets) >= rules::CUPY_CHAIN as usize;
                let may_chain = light >= rules::CUPY_CHAIN && enough(&light_at);
                let in_loop = loops && whole_axis_slice(code[0].as_bytes());
                (may_chain || in_loop) && {
                    let counted = outside_checks(function, light_at);
                    (may_chain && enough(&counted)) || (in_loop && !counted.is_empty())
                }
            };
            if starts || chain || reads_values || loop_writes {
                return false;
            }
            // A model's or index's work through `self`: on an attribute built
            // from an imported name, or a neighbour query (scikit-learn) or
            // an index method (Faiss, hnswlib, Annoy) where that library is
            // imported.
            let model = model_work && self_attributes && {
                let attributes = model_attributes();
                let mut kept = false;
                for_each_name(code[0], |token| {
                    kept = kept
                        || attributes.contains(token)
                        || (rules::NEIGHBOUR_QUERIES.contains(&token) && sees("sklearn"))
                        || rules::INDEX_WORK.iter().any(|(library, methods)| methods.contains(&token) && sees(library));
                });
                kept
            };
            !model
        })
        .collect();
    let quiet = irrelevant.iter().zip(tests).all(|(i, t)| *i || *t) && outside_quiet();
    // The facts the module's other imports make.
    let mut candidate = vec![false; statements.len()];
    for u in &unread {
        candidate[u.statement] = true;
    }
    let others = facts.iter().zip(&outline.in_class).zip(&candidate).filter(|((_, c), u)| !**c && !**u);
    let facts = others.fold(0, |all, ((f, _), _)| all | f);
    Some((irrelevant, quiet, Unreads { statements: unread, facts }))
}

/// The statements [`irrelevant_definitions`] finds that start nothing and
/// only bind names, and the facts the module's other imports make.
struct Unreads<'p> {
    statements: Vec<Unread<'p>>,
    facts: u8,
}

/// A statement at the module's margin that starts no rule and binds only
/// names: an import (not `*`), or an assignment whose value names no
/// library, live name, loop or model work. Where nothing parsed reads a name
/// it binds, nothing the rules see depends on it, and it need not be parsed:
/// a module's imports and constants are a good part of what is parsed
/// outside its functions. An import also makes facts of the module that
/// hold without a name read (it uses arrays, scikit-learn, a kernel
/// library: `facts`), kept by keeping some import of each.
struct Unread<'p> {
    /// Its index in the outline's statements.
    statement: usize,
    binds: Vec<&'p str>,
    /// Of [`import_facts`], for an import.
    facts: u8,
    /// It reads names (an assignment's value): kept, so are their bindings.
    reads: bool,
}

/// The facts a module-level import of `module` makes, whatever name it
/// binds, as bits: each rule that asks what the module imports, not what a
/// name is, has one.
fn import_facts(module: &str) -> u8 {
    let top = module.split('.').next().unwrap_or(module);
    let mut facts = 0;
    if rules::loops::ARRAY_MODULES.contains(&top) {
        facts |= 1;
    }
    if matches!(top, "numba" | "numba_cuda_mlir" | "warp") {
        facts |= 2;
    }
    if top == "sklearn" {
        facts |= 4;
    }
    if GPU_MODULES.contains(&top) {
        facts |= 8;
    }
    if let Some(i) = rules::INDEX_WORK.iter().position(|(library, _)| *library == top) {
        facts |= 16 << i.min(3);
    }
    facts
}

/// The names an import statement (its code, comments and strings blanked)
/// binds, when it is a plain one: `import a.b as c, d`, `from m import (x
/// as y, z)`. `None` for anything else (a star import, a statement that is
/// no import).
fn import_bindings(code: &str) -> Option<Vec<&str>> {
    let code = code.trim();
    fn name(s: &str) -> bool {
        !s.is_empty() && s.bytes().all(name_byte) && !s.as_bytes()[0].is_ascii_digit()
    }
    // `a`, `a as b`: (what it binds, given how a plain name binds; the name).
    fn item(s: &str, whole: fn(&str) -> &str) -> Option<(&str, &str)> {
        let mut words = s.split_ascii_whitespace();
        let (target, rest) = (words.next()?, (words.next(), words.next(), words.next()));
        match rest {
            (None, _, _) => Some((whole(target), target)),
            (Some("as"), Some(alias), None) if name(alias) => Some((alias, target)),
            _ => None,
        }
    }
    let mut binds = Vec::new();
    if let Some(rest) = code.strip_prefix("import ") {
        for part in rest.split(',') {
            let (bound, target) = item(part, |t| t.split('.').next().unwrap_or(t))?;
            if !is_dotted(target) {
                return None;
            }
            binds.push(bound);
        }
    } else {
        let rest = code.strip_prefix("from ")?;
        let (module, names) = rest.split_once(" import")?;
        // (`importuc` is no keyword: a syntax error, not an import.)
        if !names.starts_with([' ', '\t', '(']) {
            return None;
        }
        let module = module.trim();
        let relative = module.trim_start_matches('.');
        let dots_alone = relative.is_empty() && module.starts_with('.');
        if !dots_alone && !is_dotted(relative) {
            return None;
        }
        let names = names.trim();
        let names = match names.strip_prefix('(') {
            Some(inside) => inside.strip_suffix(')')?.trim().trim_end_matches(','),
            None => names,
        };
        for part in names.split(',') {
            let (bound, target) = item(part, |t| t)?;
            if !name(target) {
                return None;
            }
            binds.push(bound);
        }
    }
    Some(binds)
}

/// `skip` with the statements of `unread` whose names nothing parsed reads
/// (the code outside `skip` and them, and the statements kept for it),
/// keeping an import of each fact the module's imports make; and the
/// statements left out. `None` when an assignment left out has a syntax
/// error (`limit = 1 +`): it would take the error out of the parse, and the
/// rest can parse otherwise than around it. (The imports need no parse:
/// `import_bindings` reads only plain ones.)
fn without_unread(
    text: &str,
    plain: &str,
    outline: &gpulens_syntax::outline::Outline,
    skip: Vec<Range<usize>>,
    unreads: &Unreads<'_>,
) -> Option<(Vec<Range<usize>>, Vec<Range<usize>>)> {
    let unread = &unreads.statements;
    let mut by_name: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
    for (k, u) in unread.iter().enumerate() {
        for name in &u.binds {
            by_name.entry(name).or_default().push(k);
        }
    }
    let ranges: Vec<Range<usize>> = unread.iter().map(|u| outline.statements[u.statement].clone()).collect();
    let mut kept = vec![false; unread.len()];
    let mut found = Vec::new();
    let read = |token: &str, kept: &mut Vec<bool>, found: &mut Vec<usize>| {
        for &k in by_name.get(token).map_or(&[][..], |v| &v[..]) {
            if !kept[k] {
                kept[k] = true;
                found.push(k);
            }
        }
    };
    let mut out_of: Vec<&Range<usize>> = skip.iter().chain(&ranges).collect();
    out_of.sort_by_key(|r| r.start);
    let mut at = 0;
    for r in out_of.into_iter().chain(std::iter::once(&(plain.len()..plain.len()))) {
        if r.start > at {
            for_each_name(&plain[at..r.start], |t| read(t, &mut kept, &mut found));
        }
        at = at.max(r.end);
    }
    while let Some(k) = found.pop() {
        if unread[k].reads {
            for_each_name(&plain[ranges[k].clone()], |t| read(t, &mut kept, &mut found));
        }
    }
    // The facts the imports parsed make, and an import kept for each other.
    let mut facts = unreads.facts;
    for (u, kept) in unread.iter().zip(kept.iter_mut()) {
        if *kept {
            facts |= u.facts;
        } else if u.facts & !facts != 0 {
            *kept = true;
            facts |= u.facts;
        }
    }
    // The assignments left out, parsed together once.
    let mut assignments = String::new();
    for ((r, _), _) in ranges.iter().zip(unread).zip(&kept).filter(|((_, u), k)| u.reads && !**k) {
        assignments.push_str(text[r.clone()].trim_end());
        assignments.push('\n');
    }
    if !assignments.is_empty() && gpulens_syntax::parse(&assignments).root_node().has_error() {
        return None;
    }
    // Merged with `skip`, each with the blank lines after it.
    let bytes = text.as_bytes();
    let mut pieces: Vec<Range<usize>> = skip;
    for (r, _) in ranges.iter().zip(&kept).filter(|(_, k)| !**k) {
        let mut end = r.end;
        while let Some(line) = memchr::memchr(b'\n', &bytes[end..]) {
            if !bytes[end..end + line].iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
                break;
            }
            end += line + 1;
        }
        pieces.push(r.start..end);
    }
    let skip = joined(pieces);
    let left_out = ranges.into_iter().zip(kept).filter(|(r, k)| !k && within_one(&skip, r)).map(|(r, _)| r).collect();
    Some((skip, left_out))
}

/// Whether the rules read only the value a call of `api` makes (an array's,
/// a table's or a graph's size, in the work done with it elsewhere in the
/// function), never the call itself.
fn makes_value_only(api: &gpulens_knowledge::ApiMapping) -> bool {
    use gpulens_knowledge::ApiKind;
    matches!((api.library.as_str(), api.kind), ("cupy" | "cudf", ApiKind::Create) | ("cugraph", ApiKind::Graph))
}

/// How a token in a function starts a rule (see `irrelevant_definitions`),
/// weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Start {
    /// It makes an array or a graph: the rules read only its size.
    Value,
    /// It makes a table, whose methods rules report on.
    Table,
    /// It calls a light array operation, reported only in a chain.
    Light,
    /// Some rule reports on it.
    Rule,
}

/// The method names a rule reports on when called on a table (`.groupby`,
/// `.apply`, `.iterrows`): the last part of every method entry.
fn table_methods() -> &'static FxHashSet<&'static str> {
    static METHODS: std::sync::OnceLock<FxHashSet<&'static str>> = std::sync::OnceLock::new();
    METHODS.get_or_init(|| {
        use gpulens_knowledge::ApiKind;
        let apis = Knowledge::get().apis.iter().filter(|api| matches!(api.kind, ApiKind::Method | ApiKind::RowLoop));
        apis.filter_map(|api| api.cpu.rsplit('.').next()).collect()
    })
}

/// Whether `token` (in `code`) follows a dot: an attribute or a method.
fn is_method(code: &str, token: &str) -> bool {
    let start = token.as_ptr() as usize - code.as_ptr() as usize;
    last_code_byte(&code.as_bytes()[..start]).map(|k| code.as_bytes()[k]) == Some(b'.')
}

/// Where the last byte of `code` stands that is not white space or a
/// backslash (a line continuation).
fn last_code_byte(code: &[u8]) -> Option<usize> {
    code.iter().rposition(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\\'))
}

/// The names a statement (its code, comments and strings blanked) may bind,
/// over-approximated: (those bound to what it computes — every name before
/// an assignment's `=` or an augmented one, before `:=` — and those bound
/// where the value can't be read — a `for`'s targets, after `as`).
fn bound_names(part: &str) -> (Vec<&str>, Vec<&str>) {
    let (mut assigned, mut unread) = (Vec::new(), Vec::new());
    {
        // Strings and comments bind nothing: read the code without them.
        // (Where that reading is unsure, every name counts as assigned.)
        let code = without_strings(part);
        let (bytes, sure) = match &code {
            Some(code) => (code.as_bytes(), true),
            None => (part.as_bytes(), false),
        };
        // Where each assignment's `=` is: outside brackets, not part of a
        // comparison; `:=` anywhere.
        let mut equals = Vec::new();
        let mut depth = 0i32;
        for (i, &b) in bytes.iter().enumerate() {
            match b {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                b'=' => {
                    let before = i.checked_sub(1).map(|k| bytes[k]);
                    let shift = i >= 2 && matches!(&bytes[i - 2..i], b"<<" | b">>" | b"**" | b"//");
                    let comparison = bytes.get(i + 1) == Some(&b'=')
                        || (matches!(before, Some(b'=' | b'!' | b'<' | b'>')) && !shift);
                    if before == Some(b':') || (depth == 0 && !comparison) {
                        equals.push(i);
                    }
                }
                _ => {}
            }
        }
        if !sure {
            equals.push(bytes.len());
        }
        let mut previous: Option<&str> = None;
        let mut in_for = false;
        // The tokens of the code without strings, as slices of `part`.
        let read = match &code {
            Some(code) => code.as_str(),
            None => part,
        };
        // The depth of brackets where each token stands: a `for` inside
        // brackets is a comprehension's, whose names are its own (the
        // analysis binds them nowhere).
        let (mut depth, mut scanned) = (0i32, 0);
        for_each_name(read, |token| {
            let at = token.as_ptr() as usize - read.as_ptr() as usize;
            for &b in &bytes[scanned..at] {
                match b {
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' => depth -= 1,
                    _ => {}
                }
            }
            scanned = at;
            let token = &part[at..at + token.len()];
            let keyword = HARD_KEYWORDS.contains(&token);
            if !keyword && equals.iter().any(|&e| e > at) {
                assigned.push(token);
            }
            match token {
                "for" => in_for = depth == 0 || !sure,
                "in" => in_for = false,
                _ if keyword => {}
                _ if in_for || previous == Some("as") => unread.push(token),
                _ => {}
            }
            previous = Some(token);
        });
    }
    (assigned, unread)
}

/// Python's keywords, which no statement binds (soft keywords such as
/// `match` or `type` are names too).
const HARD_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
    "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or",
    "pass", "raise", "return", "try", "while", "with", "yield",
];

/// `code` with the insides of its strings and its comments blanked (the
/// same length, every other byte where it was), or `None` where a string
/// doesn't end in it or is an f-string holding `:=`, which can bind a name.
fn without_strings(code: &str) -> Option<String> {
    blanked(code, |_| {})
}

/// [`without_strings`], telling `seen` each range it blanks.
fn blanked(code: &str, mut seen: impl FnMut(Range<usize>)) -> Option<String> {
    let mut out = code.as_bytes().to_vec();
    let complete = strings_and_comments(code.as_bytes(), |range| {
        out[range.clone()].iter_mut().for_each(|b| *b = b' ');
        seen(range);
    });
    complete.then(|| String::from_utf8(out).ok()).flatten()
}

/// Calls `f` with the byte range of every string (its prefix and quotes
/// included) and comment of `code`, in order; `false` where it can't tell
/// them (a string doesn't end, an f-string holds `:=`).
fn strings_and_comments(bytes: &[u8], mut f: impl FnMut(Range<usize>)) -> bool {
    let mut i = 0;
    while let Some(at) = memchr::memchr3(b'\'', b'"', b'#', &bytes[i..]) {
        i += at;
        if bytes[i] == b'#' {
            let end = memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |e| i + e);
            f(i..end);
            i = end;
            continue;
        }
        let quote = bytes[i];
        // Its prefix (`f`, `rb`...) is the name-like run before it.
        let mut p = i;
        while p > 0 && bytes[p - 1].is_ascii_alphabetic() {
            p -= 1;
        }
        let formatted = bytes[p..i].iter().any(|b| matches!(b, b'f' | b'F' | b't' | b'T'));
        let triple = bytes.len() >= i + 3 && bytes[i + 1] == quote && bytes[i + 2] == quote;
        let open = if triple { 3 } else { 1 };
        let mut j = i + open;
        let end = loop {
            // The next byte that can end it: its quote, a backslash (which
            // keeps the quote after it, in raw strings too), or a line break
            // (which ends a one-line string unfinished).
            let next = if triple { memchr::memchr2(quote, b'\\', &bytes[j..]) } else { memchr::memchr3(quote, b'\\', b'\n', &bytes[j..]) };
            let Some(at) = next else { return false };
            j += at;
            match bytes[j] {
                b'\n' => return false,
                b'\\' => j += 2,
                _ if !triple || bytes[j..].starts_with(&[quote, quote, quote]) => break j + open,
                _ => j += 1,
            }
            if j >= bytes.len() {
                return false;
            }
        };
        if formatted && memchr::memmem::find(&bytes[i..end], b":=").is_some() {
            return false;
        }
        f(p..end);
        i = end;
    }
    true
}

/// `text` with its comments and strings blanked (same length), for reading
/// the names its code uses; f- and t-strings are kept, since their braces
/// hold code. `None` when `text` holds, outside its strings and comments, a
/// character no valid Python has there: error recovery reads past it,
/// perhaps into what the outline left out, so only a whole parse gives what
/// a whole parse gives. (A text whose strings can't be told counts as
/// holding one.)
fn plain_code(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    // Bytes to look at: the stray ASCII ones, `!` (stray but in `!=`),
    // and those past ASCII (stray unless a letter or digit). Written without
    // branches, so that the test of a whole piece below runs on vectors.
    const fn looks(c: u8) -> bool {
        (c == b'$')
            | (c == b'?')
            | (c == b'`')
            | (c == b'!')
            | (c >= 0x7f)
            | ((c < 0x20) & (c != b'\t') & (c != b'\n') & (c != b'\r') & (c != 0x0c))
    }
    const LOOK: [bool; 256] = {
        let mut look = [false; 256];
        let mut c = 0;
        while c < 256 {
            look[c] = looks(c as u8);
            c += 1;
        }
        look
    };
    // Whether `code` holds any byte to look at, told without a branch per
    // byte: most code holds none, and only code that does is read byte by byte.
    let may_look = |b: &[u8]| b.iter().fold(false, |found, &c| found | looks(c));
    let stray = |code: &str| {
        let b = code.as_bytes();
        if !may_look(b) {
            return false;
        }
        let mut i = 0;
        while i < b.len() {
            if LOOK[b[i] as usize] {
                match b[i] {
                    b'!' if b.get(i + 1) == Some(&b'=') => {}
                    0x80.. => {
                        // A character past ASCII (`i` is on a boundary: every
                        // byte before was ASCII or a whole character).
                        let c = code[i..].chars().next().expect("a character");
                        if !c.is_alphanumeric() {
                            return true;
                        }
                        i += c.len_utf8();
                        continue;
                    }
                    _ => return true,
                }
            }
            i += 1;
        }
        false
    };
    // (Built from the text's own pieces and runs of spaces: no copy to
    // blank in place and check again. Every range starts and ends at an
    // ASCII byte: a prefix letter, a quote, `#`, a line break.)
    const SPACES: &str = "                                                                ";
    let mut plain = String::with_capacity(text.len());
    let mut copied = 0;
    let mut at = 0;
    let mut found = false;
    let complete = strings_and_comments(bytes, |range| {
        found = found || stray(&text[at..range.start]);
        at = range.end;
        // A string's range starts with its prefix (`f`, `rb`...).
        let prefix = bytes[range.start..range.end].iter().take_while(|b| b.is_ascii_alphabetic());
        if !prefix.clone().any(|b| matches!(b, b'f' | b'F' | b't' | b'T')) {
            plain.push_str(&text[copied..range.start]);
            let mut blank = range.len();
            while blank > 0 {
                let n = blank.min(SPACES.len());
                plain.push_str(&SPACES[..n]);
                blank -= n;
            }
            copied = range.end;
        }
    });
    if !complete || found || stray(&text[at..]) {
        return None;
    }
    plain.push_str(&text[copied..]);
    Some(plain)
}

#[cfg(test)]
fn has_stray_characters(text: &str) -> bool {
    plain_code(text).is_none()
}

/// Reads the import statements of `code` (`import a.b as c`, `from a
/// import b as c, d`), calling `bind(local name, qualified target)` for
/// each name bound; `false` when some `import` is not in a form it reads
/// (the caller must then assume the worst). Strings and comments are not
/// read, and a backslash line break is a space. Relative imports bind
/// nothing the rules know, and neither does `from a import *` (the
/// analysis resolves no name through one).
fn local_imports<'a>(code: &'a str, bind: &mut impl FnMut(&'a str, String)) -> bool {
    // The code with its strings and comments blanked, and its backslash
    // line breaks: the same length, so offsets carry over.
    let Some(plain) = without_strings(code) else { return false };
    let mut plain = plain.into_bytes();
    let mut i = 0;
    while i < plain.len() {
        if plain[i] == b'\\' {
            let end = match &plain[i + 1..] {
                [b'\r', b'\n', ..] => i + 3,
                [b'\n' | b'\r', ..] => i + 2,
                _ => return false, // a backslash outside a string is only a line break
            };
            plain[i..end].iter_mut().for_each(|b| *b = b' ');
            i = end;
        } else {
            i += 1;
        }
    }
    let Ok(plain) = String::from_utf8(plain) else { return false };
    let mut ok = true;
    let mut offsets = Vec::new();
    for_each_name(&plain, |token| {
        if token == "import" {
            offsets.push(token.as_ptr() as usize - plain.as_ptr() as usize);
        }
    });
    let bytes = plain.as_bytes();
    for at in offsets {
        let line_start = bytes[..at].iter().rposition(|&b| b == b'\n' || b == b'\r').map_or(0, |i| i + 1);
        let head = plain[line_start..at].trim();
        // The names after `import`, to the end of the line or the closing bracket.
        let rest = &plain[at + "import".len()..];
        let open = rest.trim_start_matches([' ', '\t']).starts_with('(');
        let end = if open { rest.find(')') } else { Some(rest.find(['\n', '\r', ';']).unwrap_or(rest.len())) };
        let Some(end) = end else { return false };
        let list = rest[..end].trim().trim_start_matches('(');
        // Nothing after `import` on its line (a syntax error, which the
        // parser may mend by reading the next line as the names).
        if list.trim().is_empty() {
            return false;
        }
        let from = match head.strip_prefix("from ").map(str::trim) {
            Some(module) => match module {
                m if m.starts_with('.') => continue,
                m if is_dotted(m) => Some(m),
                _ => return false,
            },
            None if head.is_empty() => None,
            None => return false,
        };
        for item in list.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let mut words = item.split_whitespace();
            let (Some(what), alias) = (words.next(), words.next().map(|w| (w, words.next(), words.next()))) else { return false };
            let alias = match alias {
                None => None,
                Some(("as", Some(a), None)) => Some(a),
                _ => return false,
            };
            if !is_dotted(what) && what != "*" {
                return false;
            }
            // The same word in `code`.
            let name_at = |word: &str| {
                let offset = word.as_ptr() as usize - plain.as_ptr() as usize;
                &code[offset..offset + word.len()]
            };
            match (from, alias) {
                (Some(_), None) if what == "*" => {}
                (None, _) | (Some(_), Some(_)) if what == "*" => ok = false,
                (Some(module), alias) => bind(name_at(alias.unwrap_or(what)), format!("{module}.{what}")),
                (None, Some(alias)) => bind(name_at(alias), what.to_string()),
                (None, None) => {
                    let first = what.split('.').next().expect("split gives one");
                    bind(name_at(first), first.to_string());
                }
            }
        }
    }
    ok
}

fn is_dotted(s: &str) -> bool {
    !s.is_empty() && s.split('.').all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

/// Whether `code` may subscript a whole axis (`x[:, j]`, `x[i, :]`,
/// `x[::]`): an element of brackets that is only colons.
fn whole_axis_slice(code: &[u8]) -> bool {
    let blank = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\\');
    code.iter().enumerate().any(|(i, &b)| {
        if !matches!(b, b'[' | b',') {
            return false;
        }
        let rest = &code[i + 1..];
        let start = rest.iter().position(|b| !blank(b)).unwrap_or(rest.len());
        let rest = &rest[start..];
        let colons = rest.iter().position(|b| !(*b == b':' || blank(b))).unwrap_or(rest.len());
        colons > 0 && rest[0] == b':' && matches!(rest.get(colons), Some(b',' | b']'))
    })
}

/// How many statements of `function` (a definition's text) hold the bytes
/// at `offsets` (sorted), at most: the text is cut at every line break,
/// `;` and `:` outside brackets (more pieces than statements, never fewer),
/// with strings and comments blanked; each offset its own piece where they
/// can't be told.
fn statements_holding(function: &str, offsets: &[usize]) -> usize {
    let Some(code) = without_strings(function) else { return offsets.len() };
    let mut pieces = 0;
    let mut piece = 0;
    let mut last: Option<usize> = None;
    let mut depth = 0i32;
    let mut next = offsets.iter().peekable();
    for (i, b) in code.bytes().enumerate() {
        while next.peek().is_some_and(|&&at| at == i) {
            next.next();
            if last != Some(piece) {
                pieces += 1;
                last = Some(piece);
            }
        }
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'\n' | b';' | b':' if depth <= 0 => piece += 1,
            _ => {}
        }
    }
    pieces + next.count()
}

/// Of `offsets` (sorted, in `function`, a definition's text), those
/// outside the conditions of its `if`, `elif` and `while` statements and
/// outside its `assert` statements (as read from its logical lines: an
/// offset counts as outside where the lines can't be told).
fn outside_checks(function: &str, mut offsets: Vec<usize>) -> Vec<usize> {
    let Some(code) = without_strings(function) else { return offsets };
    for (_, line) in logical_lines(&code) {
        let start = line.as_ptr() as usize - code.as_ptr() as usize;
        let end = match first_word(line) {
            Some("assert") => Some(start + line.len()),
            Some("if" | "elif" | "while") => header_colon(line).map(|colon| start + colon),
            _ => None,
        };
        if let Some(end) = end {
            offsets.retain(|at| !(start..end).contains(at));
        }
    }
    offsets
}

/// The first word of a logical line, past an `async`.
fn first_word(line: &str) -> Option<&str> {
    let mut words = line.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty());
    let first = words.next();
    if first == Some("async") { words.next() } else { first }
}

/// Where a compound statement's header ends in its logical line (strings
/// blanked): at its first `:` outside brackets.
fn header_colon(line: &str) -> Option<usize> {
    let mut depth = 0i32;
    line.bytes().position(|b| {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            _ => {}
        }
        b == b':' && depth == 0
    })
}

/// Words that stop a loop from being a kernel wherever they stand in its
/// body (`rules::loops` reads the statements and expressions they begin).
const NOT_IN_KERNELS: &[&str] = &[
    "return", "yield", "raise", "try", "with", "global", "nonlocal", "await", "del", "while", "import", "def",
    "class", "lambda",
];

/// Whether `function` (a definition's text) has a `for` loop over
/// `range(…)` or `enumerate(…)` (the loops the index-loop rules read) whose
/// body writes an element or accumulates, names none of [`NOT_IN_KERNELS`]
/// outside its strings and comments and does no other Python work (see
/// [`python_work_in_loop`]). Over-approximated from indentation; `true`
/// where its strings can't be told.
fn index_loop_may_be_kernel(function: &str) -> bool {
    // (With where its strings start, its comments aside.)
    let mut strings = Vec::new();
    let Some(code) = blanked(function, |r| {
        if function.as_bytes()[r.start] != b'#' {
            strings.push(r.start);
        }
    }) else {
        return true;
    };
    let lines = logical_lines(&code);
    lines.iter().enumerate().any(|(i, &(indent, line))| {
        if first_word(line) != Some("for") {
            return false;
        }
        // Its body: after the header's `:` (outside brackets), then the
        // lines indented under it.
        let Some(colon) = header_colon(line) else { return true };
        let header = &line[..colon];
        let mut over_indices = false;
        for_each_name(header, |w| over_indices |= w == "range" || w == "enumerate");
        if !over_indices {
            return false;
        }
        let inline = &line[colon + 1..];
        let below = lines[i + 1..].iter().take_while(|(inner, _)| *inner > indent).map(|(_, l)| *l);
        let body: Vec<&str> = std::iter::once(inline).chain(below).collect();
        let mut blocked = false;
        for part in &body {
            for_each_name(part, |w| blocked |= NOT_IN_KERNELS.contains(&w));
        }
        !blocked
            && body.iter().any(|part| writes_or_accumulates(part.as_bytes()))
            && !body.iter().any(|part| python_work_in_loop(&code, part, &strings))
    })
}

/// Whether `part` (a statement of a loop's body, a slice of `code`, a
/// function's text with its strings and comments blanked; `strings`: where
/// that text's strings start) surely does what keeps the loop from being a
/// kernel (`rules::loops` walks every node of the body and stops at these):
/// an inner loop over anything but `range`, `enumerate` or `zip`, a string,
/// a dictionary or set, a call the kernel can't make. What stands inside a
/// list display or comprehension counts for nothing (the rules do not
/// always look inside one), and neither does the rest of an inner loop's
/// header (the rules may not read it).
fn python_work_in_loop(code: &str, part: &str, strings: &[usize]) -> bool {
    if first_word(part) == Some("for") {
        let header = &part[..header_colon(part).unwrap_or(part.len())];
        let mut over_indices = false;
        for_each_name(header, |w| over_indices |= matches!(w, "range" | "enumerate" | "zip"));
        return !over_indices;
    }
    let base = part.as_ptr() as usize - code.as_ptr() as usize;
    let bytes = part.as_bytes();
    // Open brackets: whether each is a list display (not a subscript).
    let mut open: Vec<bool> = Vec::new();
    let mut displays = 0;
    let mut string = strings.partition_point(|s| *s < base);
    for (i, &b) in bytes.iter().enumerate() {
        while string < strings.len() && strings[string] < base + i {
            string += 1;
        }
        if displays == 0 && strings.get(string) == Some(&(base + i)) {
            return true;
        }
        match b {
            b'[' => {
                // A subscript follows a name (not a keyword) or a bracket.
                let subscript = last_code_byte(&bytes[..i]).is_some_and(|k| match bytes[k] {
                    b')' | b']' => true,
                    c if name_byte(c) => {
                        let from = bytes[..=k].iter().rposition(|c| !name_byte(*c)).map_or(0, |j| j + 1);
                        !HARD_KEYWORDS.iter().any(|w| w.as_bytes() == &bytes[from..=k])
                    }
                    _ => false,
                });
                let display = !subscript;
                displays += display as usize;
                open.push(display);
            }
            b'{' if displays == 0 => return true,
            b'(' if displays == 0 && callee_before(&bytes[..i]).is_some_and(|callee| !rules::loops::allowed_call(callee)) => {
                return true;
            }
            b'(' | b'{' => open.push(false),
            b')' | b']' | b'}' => displays -= open.pop().unwrap_or(false) as usize,
            _ => {}
        }
    }
    false
}

/// The name called at the end of `code` (right before a `(`): a dotted
/// name spelled without spaces, as the call's function reads; `None` where
/// the `(` may not call a name so spelled (it follows a keyword, a bracket,
/// or a name with spaces around its dots).
fn callee_before(code: &[u8]) -> Option<&str> {
    let end = code.len();
    let mut start = end;
    while start > 0 && (name_byte(code[start - 1]) || code[start - 1] == b'.') {
        start -= 1;
    }
    let callee = std::str::from_utf8(&code[start..end]).ok()?;
    if callee.is_empty() || callee.starts_with('.') || callee.ends_with('.') || callee.contains("..") {
        return None;
    }
    if callee.as_bytes()[0].is_ascii_digit() || HARD_KEYWORDS.contains(&callee) {
        return None;
    }
    // Before it: nothing that could continue an expression into it.
    match last_code_byte(&code[..start]).map(|k| code[k]) {
        Some(b')' | b']' | b'.') => None,
        _ => Some(callee),
    }
}

/// The logical lines of `code` (strings and comments blanked): each with
/// its indentation, split at line breaks outside brackets and not after a
/// backslash; blank lines left out.
fn logical_lines(code: &str) -> Vec<(usize, &str)> {
    let bytes = code.as_bytes();
    let mut lines = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let start = at;
        let mut depth = 0i32;
        let mut end = at;
        while end < bytes.len() {
            match bytes[end] {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                b'\\' => end += if bytes[end + 1..].starts_with(b"\r\n") { 2 } else { 1 },
                b'\n' | b'\r' if depth <= 0 => break,
                // (Long runs where strings were blanked: eight at a time.)
                b' ' => {
                    while bytes.len() - end > 8 && bytes[end + 1..end + 9] == [b' '; 8] {
                        end += 8;
                    }
                }
                _ => {}
            }
            end += 1;
        }
        at = end + 1;
        let line = &code[start..end.min(bytes.len())];
        let body = line.trim_start_matches([' ', '\t', '\x0c']);
        if !body.trim().is_empty() {
            lines.push((line.len() - body.len(), body));
        }
    }
    lines
}

/// Whether `code` has an assignment to an element (`x[i] = …`) or an
/// augmented assignment (`s += …`): what a loop must do to be a kernel.
fn writes_or_accumulates(code: &[u8]) -> bool {
    code.iter().enumerate().any(|(i, &b)| {
        if b != b'=' || code.get(i + 1) == Some(&b'=') {
            return false;
        }
        let mut j = i;
        while j > 0 && matches!(code[j - 1], b' ' | b'\t') {
            j -= 1;
        }
        match j.checked_sub(1).map(|k| code[k]) {
            Some(b']') => true,
            Some(b'+' | b'-' | b'*' | b'/' | b'%' | b'@' | b'&' | b'|' | b'^') => j == i,
            Some(b'<' | b'>') => j == i && j >= 2 && code[j - 2] == code[j - 1],
            _ => false,
        }
    })
}

/// The attribute names after a name (`.fft.rfft` → `["fft", "rfft"]`); it
/// stops at anything but a dot and a name. Between them it reads past what
/// a chain may hold in valid Python (spaces, line breaks and comments inside
/// brackets, a backslash before a line break) and the bytes tree-sitter's
/// error recovery skips to join names into one chain (`np;.fft.fft(x)` and
/// `np.fft!.fft(x)` both parse as a call of `np.fft.fft`): bytes no Python
/// token starts with, a `;` (no statement starts with `.`), control
/// characters. Reading past too much may see a chain that isn't there,
/// which costs a parse, never a finding.
fn dotted_chain(bytes: &[u8]) -> Vec<&str> {
    let mut parts = Vec::new();
    walk_dotted_chain(bytes, |part| parts.push(part));
    parts
}

/// Where the [`dotted_chain`] of `bytes` ends: past its last name (0 for none).
fn dotted_chain_end(bytes: &[u8]) -> usize {
    let mut end = 0;
    walk_dotted_chain(bytes, |part| end = part.as_ptr() as usize - bytes.as_ptr() as usize + part.len());
    end
}

/// Calls `f` with each name of the [`dotted_chain`] of `bytes`, in order.
fn walk_dotted_chain<'b>(bytes: &'b [u8], mut f: impl FnMut(&'b str)) {
    let skip = |mut j: usize| {
        while let Some(&b) = bytes.get(j) {
            match b {
                b'#' => {
                    while j < bytes.len() && bytes[j] != b'\n' {
                        j += 1;
                    }
                }
                b' ' | b'\t' | b'\n' | b'\r' | b'\\' | b';' | b'!' | b'$' | b'?' | b'`' | 0x7f => j += 1,
                _ if b < 0x20 => j += 1,
                _ => return j,
            }
        }
        j
    };
    let mut i = 0;
    loop {
        let mut j = skip(i);
        if bytes.get(j) != Some(&b'.') {
            return;
        }
        j = skip(j + 1);
        let start = j;
        while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_' || bytes[j] >= 0x80) {
            j += 1;
        }
        match std::str::from_utf8(&bytes[start..j]) {
            Ok(part) if !part.is_empty() => f(part),
            _ => return,
        }
        i = j;
    }
}

/// Whether an import of `target` matters to some rule.
fn relevant_module(knowledge: &Knowledge, target: &str) -> bool {
    let top = target.split('.').next().unwrap_or(target);
    // (`math` and `cmath` for their constants: `math.pi` is a number.)
    matches!(top, "time" | "math" | "cmath") || GPU_MODULES.contains(&top) || rules::PLOTTING.contains(&top) || knowledge.cpu_modules.iter().any(|m| m == top)
}

/// [`check`] without any of its shortcuts (the byte pre-scan, skipping
/// functions that name nothing a rule looks at): the reference the tests
/// hold the shortcuts to.
#[doc(hidden)]
pub fn check_reference(text: &str, tree: &Tree, settings: &Settings, gpu: &GpuProfile) -> Vec<Finding> {
    check_once(text, tree, settings, gpu, &[], &[], true)
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
    let in_test = |f: &Finding| !f.code.starts_with("GPU") && module.tests.iter().any(|t| t.contains(&f.range.start));
    findings.retain(|f| settings.is_enabled(f.code) && !is_suppressed(module, text, f) && !in_test(f));
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
    mut findings: Vec<Finding>,
) -> Vec<Finding> {
    if findings.is_empty() {
        return findings;
    }
    let functions = hot::Functions::new(tree, units);
    hot::propagate(text, callers, &functions, module, &mut findings);
    findings.sort_by(|a, b| (a.range.start, a.range.end, a.code).cmp(&(b.range.start, b.range.end, b.code)));
    findings.dedup_by(|a, b| a.range == b.range && a.code == b.code);
    hot::annotate(text, callers, &functions, module, &mut findings);
    fixes::resolve(text, tree, &mut findings);
    findings
}

fn sorted(mut ids: Vec<usize>) -> Vec<usize> {
    ids.sort_unstable();
    ids
}

/// What an earlier analysis of a document found inside each function, so an
/// edit re-analyses only the functions it touched. A function's findings
/// depend on its own text, on the module-level names it mentions (imports of
/// the libraries the rules know, module-level assignments, kernels), on which
/// such libraries the module imports at all, and on the settings and GPU; the
/// key of each cached entry covers exactly that.
#[derive(Debug, Default)]
pub struct Cache {
    /// Function key → the fix key it was analysed under and its findings,
    /// with ranges relative to its start.
    units: FxHashMap<u64, (u64, Vec<Finding>)>,
    /// The entries of the run before the last, so that undoing an edit (or
    /// typing through a syntax error and out of it) finds them again.
    previous: FxHashMap<u64, (u64, Vec<Finding>)>,
    /// Which outside names each function's text mentions, by text hash.
    scans: Scans,
    /// Of the last run: (functions reused or skipped, functions in all).
    pub last_reuse: (usize, usize),
}

impl Cache {
    /// What is known about a function under `key`, if it can be reused for
    /// `fix_key`: findings are only reused with fixes made in the same context.
    fn reusable(&self, key: u64, fix_key: u64) -> Option<&Vec<Finding>> {
        let (fixed_under, findings) = self.units.get(&key).or_else(|| self.previous.get(&key))?;
        (findings.is_empty() || *fixed_under == fix_key).then_some(findings)
    }
}

/// [`check`], reusing `cache` for functions whose key has not changed. The
/// result is the same as `check`'s (a property test holds it to that).
pub fn check_incremental(text: &str, tree: &Tree, settings: &Settings, gpu: &GpuProfile, cache: &mut Cache) -> Vec<Finding> {
    check_incremental_unless(text, tree, settings, gpu, cache, &|| false).expect("never cancelled")
}

/// [`check_incremental`], asking `cancel` between its stages and giving up
/// (`None`) when it answers true: an editor's newer edit makes this
/// analysis pointless. The cache stays usable either way.
pub fn check_incremental_unless(
    text: &str,
    tree: &Tree,
    settings: &Settings,
    gpu: &GpuProfile,
    cache: &mut Cache,
    cancel: &dyn Fn() -> bool,
) -> Option<Vec<Finding>> {
    let knowledge = Knowledge::get();
    if !might_have_findings(text) {
        *cache = Cache::default();
        return Some(Vec::new());
    }
    let mut plan = Plan::new(text, tree, knowledge, &mut cache.scans);
    if cancel() {
        return None;
    }
    let mut global = FxHasher::default();
    {
        // The settings and the GPU as they print, hashed as they are written
        // (formatting them into a string first cost a growing allocation at
        // every edit).
        struct Hashing<'h>(&'h mut FxHasher);
        impl std::fmt::Write for Hashing<'_> {
            fn write_str(&mut self, s: &str) -> std::fmt::Result {
                self.0.write(s.as_bytes());
                Ok(())
            }
        }
        use std::fmt::Write as _;
        let _ = write!(Hashing(&mut global), "{settings:?}{gpu:?}");
    }
    plan.global.hash(&mut global);
    let global = global.finish();
    for u in &mut plan.units {
        u.key ^= global;
        u.fix_key ^= global;
    }
    let skip: Vec<usize> = plan
        .units
        .iter()
        .filter(|u| u.quiet || (u.gpu_import.is_none() && cache.reusable(u.key, u.fix_key).is_some()))
        .map(|u| u.id)
        .collect();
    let skip = sorted(skip);
    cache.last_reuse = (skip.len(), plan.units.len());
    let walked;
    let module = match &plan.outside {
        Some(outside) if skip.len() == plan.units.len() => outside,
        _ => {
            walked = Module::new_skipping_unless(text, tree, knowledge, &skip, cancel)?;
            &walked
        }
    };
    if cancel() {
        return None;
    }
    let mut findings = run_rules_unless(module, text, tree, settings, gpu, true, cancel);
    if cancel() {
        return None;
    }
    let mut fresh: FxHashMap<u64, (u64, Vec<Finding>)> = FxHashMap::with_capacity_and_hasher(plan.units.len(), Default::default());
    let mut reused = Vec::new();
    for unit in &plan.units {
        let start = unit.range.start;
        if unit.quiet {
            continue;
        }
        let known = cache.reusable(unit.key, unit.fix_key).filter(|_| skip.binary_search(&unit.id).is_ok());
        if let Some(known) = known {
            reused.extend(known.iter().map(|f| shifted(f, start as isize)));
            fresh.insert(unit.key, (unit.fix_key, known.clone()));
        } else {
            let inside: Vec<Finding> = findings
                .iter()
                .filter(|f| unit.range.contains(&f.range.start) && f.range.end <= unit.range.end)
                .map(|f| shifted(f, -(start as isize)))
                .collect();
            fresh.insert(unit.key, (unit.fix_key, inside));
        }
    }
    findings.extend(reused);
    cache.previous = std::mem::replace(&mut cache.units, fresh);
    // The hotness notes read the calls outside functions, which any walk has.
    Some(finish(text, tree, plan.units.iter().map(|u| u.node), &plan.units_and_calls(), module, findings))
}

/// `findings` moved through `edits` (in order, each in the offsets the one
/// before left): what lay wholly before or after an edit keeps its place
/// in the new text; what an edit touched is dropped, and so is a fix with
/// an edit it touched. A stand-in, cheap to make, while the edited text is
/// analysed.
pub fn shift_findings(findings: &[Finding], edits: &[gpulens_syntax::ByteEdit]) -> Vec<Finding> {
    // None: the edit touched the range.
    let moved = |r: &Range<usize>, e: &gpulens_syntax::ByteEdit| -> Option<Range<usize>> {
        if r.end < e.start || (r.end == e.start && e.old_end > e.start) {
            Some(r.clone())
        } else if r.start > e.old_end || (r.start == e.old_end && e.old_end > e.start) {
            let delta = e.new_end as isize - e.old_end as isize;
            Some((r.start as isize + delta) as usize..(r.end as isize + delta) as usize)
        } else {
            None
        }
    };
    let mut out = Vec::with_capacity(findings.len());
    'findings: for finding in findings {
        let mut f = finding.clone();
        for e in edits {
            let Some(range) = moved(&f.range, e) else { continue 'findings };
            f.range = range;
            if let Some(fix) = &mut f.fix {
                let edits: Option<Vec<Range<usize>>> = fix.edits.iter().map(|x| moved(&x.range, e)).collect();
                match edits {
                    Some(ranges) => fix.edits.iter_mut().zip(ranges).for_each(|(x, r)| x.range = r),
                    None => f.fix = None,
                }
            }
        }
        out.push(f);
    }
    out
}

fn shifted(f: &Finding, by: isize) -> Finding {
    let shift = |r: &Range<usize>| (r.start as isize + by) as usize..(r.end as isize + by) as usize;
    let mut f = f.clone();
    f.range = shift(&f.range);
    if let Some(fix) = &mut f.fix {
        for e in &mut fix.edits {
            e.range = shift(&e.range);
        }
    }
    f
}

/// A top-level or class-level function definition: the unit of reuse.
struct Unit<'t> {
    id: usize,
    node: Node<'t>,
    /// Names it calls, when it has a loop (for hotness: see `hot`).
    calls: std::sync::Arc<[String]>,
    range: Range<usize>,
    /// Its text and what its findings depend on outside itself.
    key: u64,
    /// `key`, and what its fixes depend on besides: where it sits (a kernel
    /// can't be written above a method) and every module-level name.
    fix_key: u64,
    /// It mentions nothing a rule could start from: it has no findings.
    quiet: bool,
    /// Its text hash, when it may import a GPU library: it is walked on
    /// every analysis, so that the module's imports (which decide whether
    /// the GPU rules apply) are all seen, as by a whole analysis.
    gpu_import: Option<u64>,
}

/// How to analyse a document: its units, and what every unit depends on.
struct Plan<'t> {
    units: Vec<Unit<'t>>,
    /// Which libraries the rules know the module imports (the loop rules ask).
    global: Vec<String>,
    /// The module with every unit skipped: the analysis itself when no unit
    /// needs walking, which saves a second walk of everything outside them.
    /// None when the code outside the units was the same as last time (its
    /// summary came from memory, without a walk).
    outside: Option<Module<'t>>,
}

/// What the code outside a document's units tells their keys, kept from one
/// analysis to the next while that code stays the same (the usual edit is
/// inside one function). Positions are counted in units, not bytes, so
/// that they hold when the units before them change length.
#[derive(Debug)]
struct OutsideSummary {
    /// The outside names (see [`Module::outside_names`]).
    names: FxHashMap<String, NameFacts>,
    /// A hash of the sorted names.
    names_hash: u64,
    /// What each name's bindings mention among the names.
    depends: FxHashMap<String, Vec<String>>,
    /// Which libraries the rules know the module imports.
    global: Vec<String>,
    /// Imports and module-level names, for the fix keys (sorted).
    for_fixes: Vec<String>,
    /// Imports in class bodies: (name, target, the units in their scope).
    class_imports: Vec<(String, String, Range<usize>)>,
}

#[derive(Debug)]
struct NameFacts {
    imported: bool,
    hash: u64,
    /// For each module-level binding, how many units start before it.
    units_before: Vec<usize>,
}

impl OutsideSummary {
    fn new(outside: &Module<'_>, knowledge: &Knowledge, starts: &[usize]) -> OutsideSummary {
        let relevant = |target: &str| relevant_module(knowledge, target);
        let found = outside.outside_names(relevant);
        // Findings depend on which of the libraries the rules know the module
        // imports (the loop rules ask); fixes depend on every module-level
        // name besides, since they write code that uses the module's own
        // aliases (`cp`, `cuda`) and must not take a name already in use.
        let mut global: Vec<String> =
            outside.imports_at(0).filter(|(_, t)| relevant(t)).map(|(name, t)| format!("{name}={t}")).collect();
        // A GPU library imported in a class body turns the GPU rules on too.
        global.extend(
            outside
                .scoped_imports()
                .filter(|(_, _, t)| GPU_MODULES.contains(&t.split('.').next().unwrap_or(t)))
                .map(|(name, _, t)| format!("{name}={t} in a class")),
        );
        global.sort();
        let mut for_fixes: Vec<String> = outside.imports_at(0).map(|(name, t)| format!("{name}={t}")).collect();
        for_fixes.extend(outside.module_level_names().map(|n| format!("{n}=")));
        for_fixes.sort();
        for_fixes.dedup();
        let mut keys: Vec<&&str> = found.keys().collect();
        keys.sort();
        let mut names_hash = FxHasher::default();
        keys.hash(&mut names_hash);
        // What each outside name's bindings mention among the outside names:
        // a module-level value can be built from others (`a = np.sort(big)`).
        let mut depends: FxHashMap<String, Vec<String>> = FxHashMap::default();
        for (name, outside_name) in &found {
            let mut uses: Vec<String> = Vec::new();
            for bound in &outside_name.texts {
                for_each_name(bound, |token| {
                    if token != *name && found.contains_key(token) && !uses.iter().any(|u| u == token) {
                        uses.push(token.to_string());
                    }
                });
            }
            depends.insert(name.to_string(), uses);
        }
        let units_before = |offset: usize| starts.partition_point(|s| *s < offset);
        let names = found
            .iter()
            .map(|(name, o)| {
                let facts = NameFacts {
                    imported: o.imported,
                    hash: o.hash,
                    units_before: o.bound_at.iter().map(|b| units_before(*b)).collect(),
                };
                (name.to_string(), facts)
            })
            .collect();
        let class_imports = outside
            .scoped_imports()
            .map(|(name, scope, target)| {
                (name.to_string(), target.to_string(), units_before(scope.start)..units_before(scope.end))
            })
            .collect();
        OutsideSummary { names, names_hash: names_hash.finish(), depends, global, for_fixes, class_imports }
    }
}

/// A hash of everything outside the units that the outside summary reads:
/// the text between them (with where each gap ends), the units' places,
/// and the decorators and names of decorated ones, which the summary reads
/// where they make kernels, launched by name (`Module::outside_names`). In a text that
/// names neither Numba nor Warp no decorator makes one, and decorators are
/// left out: editing a docstring passed to `@doc(...)` keeps the summary.
fn outside_fingerprint(text: &str, found: &[(Node<'_>, Range<usize>, u8, Vec<Node<'_>>)]) -> u64 {
    let g = gpulens_syntax::grammar();
    let bytes = text.as_bytes();
    let kernels = text.contains("numba") || text.contains("warp");
    let mut h = FxHasher::default();
    let mut at = 0;
    for (node, range, place, _) in found {
        let gap = &bytes[at.min(range.start)..range.start];
        h.write(gap);
        h.write_usize(gap.len());
        h.write_u8(*place);
        if kernels && node.kind_id() == g.decorated_definition {
            // Its decorators and its name: what `outside_names` reads of a
            // kernel. (Its body is the unit's own: an edit inside a method
            // under `@doc(...)` keeps the summary.)
            match node.child_by_field_id(g.f_definition.get()) {
                Some(definition) => {
                    h.write(&bytes[range.start..definition.start_byte()]);
                    let name = definition.child_by_field_id(g.f_name.get()).map_or(&b""[..], |n| &bytes[n.byte_range()]);
                    h.write(name);
                    h.write_usize(name.len());
                }
                None => h.write(&bytes[range.clone()]),
            }
        }
        at = at.max(range.end);
    }
    h.write(&bytes[at.min(bytes.len())..]);
    h.write_usize(found.len());
    h.finish()
}

/// What a function's text says, read once per text: what does not depend
/// on the names around it.
#[derive(Debug)]
struct TextScan {
    /// Its distinct identifiers.
    tokens: Vec<String>,
    /// It mentions `range` or `import`, or a call the GPU rules know by its
    /// text alone (`synchronize`, `copy_to_host`).
    loops_or_imports: bool,
    /// It may import a GPU library (an import line names one). The GPU
    /// rules apply only where the module imports one, anywhere, functions
    /// included; see `Unit::gpu_import`.
    gpu_import: bool,
    /// Its parameters, when it defines no function, lambda or class inside
    /// (which would see its parameters' names differently): a use of such
    /// a name never sees a module-level binding of it.
    own: Vec<String>,
    /// It calls a method that does a model's or index's work on an attribute
    /// of `self` (`self.nn.kneighbors(...)`): what that attribute holds is
    /// read from the assignments in the other methods of its class.
    works_through_self: bool,
    /// Its statements assigning to attributes of `self`, as written.
    self_assignments: Vec<String>,
    /// Names it calls (`name(` or `.name(`), when it has a `for` or `while` loop.
    calls: std::sync::Arc<[String]>,
    /// Attributes of `self` or `cls` it uses without calling them
    /// (`self.cost` passed as a weight): whether such a name is a method
    /// of the class is read from the class's text (see
    /// `rules::context::defines_method`).
    self_values: Vec<String>,
    /// Its name, unless a decorator makes it a property (which gives a
    /// value, not a method).
    method_name: Option<String>,
}

/// Words a function's scan counts instead of taking them for names: loops,
/// imports, and the GPU rules' calls recognised by their text alone
/// (`cuda.synchronize()`, `.copy_to_host()`)...
const LOOP_OR_IMPORT_WORDS: &[&str] = &["range", "enumerate", "import", "synchronize", "copy_to_host"];
/// ...and the definitions nested in it.
const NESTING_WORDS: &[&str] = &["def", "lambda", "class"];

/// Which of a function's identifiers name something outside it, for the
/// outside names and module-level definitions of the moment.
#[derive(Debug)]
struct Named {
    /// Outside names it mentions.
    mentioned: Vec<String>,
    /// Names of module-level functions and classes it mentions (whether a
    /// name is one changes findings: a Python function passed to a library
    /// call is not GPU work).
    definitions: Vec<String>,
}

/// What a function's text mentions.
#[derive(Debug, Clone)]
struct Scan {
    text: std::sync::Arc<TextScan>,
    named: std::sync::Arc<Named>,
}

/// The values of the last few keys, the latest last ([`Recently::LEN`] of
/// them, found by a linear search): what the analysis made for the last
/// few texts, which an edit undone brings back.
#[derive(Debug)]
struct Recently<K, V> {
    items: Vec<(K, V)>,
}

impl<K, V> Default for Recently<K, V> {
    fn default() -> Self {
        Recently { items: Vec::new() }
    }
}

impl<K: PartialEq, V> Recently<K, V> {
    const LEN: usize = 4;

    /// Removes the value kept for `key`, if any.
    fn take(&mut self, key: &K) -> Option<V> {
        let at = self.items.iter().position(|(k, _)| k == key)?;
        Some(self.items.remove(at).1)
    }

    /// Keeps `value` for `key` as the latest, dropping the oldest past [`Recently::LEN`].
    fn keep(&mut self, key: K, value: V) {
        if self.items.len() == Self::LEN {
            self.items.remove(0);
        }
        self.items.push((key, value));
    }
}

/// Token scans of function texts, valid while the set of outside names is the same.
#[derive(Debug, Default)]
struct Scans {
    names: u64,
    /// Text hash → what a function of that text says.
    by_text: FxHashMap<u64, std::sync::Arc<TextScan>>,
    /// Text hash → which of its identifiers name something outside (for
    /// the outside names of `names`: a syntax error that moves a function's
    /// text outside changes them, and the texts need not be read again).
    named: FxHashMap<u64, std::sync::Arc<Named>>,
    /// The outside summaries of the last few analyses, by fingerprint: a
    /// character that breaks a function's syntax moves code outside the
    /// units, and deleting it brings the summary before it back.
    outside: Recently<u64, std::sync::Arc<OutsideSummary>>,
    /// (text hash, position among the units) → the hash of the outside
    /// names a function of that text reaches there and what they are bound
    /// to: the costly part of its key, the same at every edit elsewhere.
    reach: FxHashMap<(u64, usize), u64>,
    /// The outside fingerprint and names hash `reach` holds for.
    reach_for: (u64, u64),
    /// `named` and `reach` for the last few other names hashes and
    /// fingerprints, the latest last.
    earlier_named: Recently<u64, FxHashMap<u64, std::sync::Arc<Named>>>,
    earlier_reach: Recently<(u64, u64), FxHashMap<(u64, usize), u64>>,
    /// The last plan's tree, kept alive so that a subtree of the next tree
    /// with the same id is the same subtree (tree-sitter reuses a subtree
    /// only where the text was not edited), never a new one at a freed
    /// address: its units' text hashes are then known without reading their
    /// text again (most of the file, at every edit).
    tree: Option<Tree>,
    /// (node id, length) → text hash, for the units of `tree`.
    by_node: FxHashMap<(usize, usize), u64>,
}

impl<'t> Plan<'t> {
    /// Every unit with the names it calls in loops' reach (see `hot`).
    fn units_and_calls(&self) -> Vec<(Node<'t>, &[String])> {
        self.units.iter().filter(|u| !u.calls.is_empty()).map(|u| (u.node, &u.calls[..])).collect()
    }

    fn new(text: &'t str, tree: &'t Tree, knowledge: &'static Knowledge, scans: &mut Scans) -> Plan<'t> {
        let found = definition_units(tree);
        let starts: Vec<usize> = found.iter().map(|(_, range, _, _)| range.start).collect();
        let fingerprint = outside_fingerprint(text, &found);
        let mut outside = None;
        let summary = scans.outside.take(&fingerprint).unwrap_or_else(|| {
            let all = sorted(found.iter().map(|(node, _, _, _)| node.id()).collect());
            let module = Module::new_skipping(text, tree, knowledge, &all);
            let summary = std::sync::Arc::new(OutsideSummary::new(&module, knowledge, &starts));
            outside = Some(module);
            summary
        });
        scans.outside.keep(fingerprint, summary.clone());
        let names = &summary.names;
        let depends = &summary.depends;
        // Module-level `def`s and `class`es: rules ask whether a name is one
        // (a Python function passed as an argument), fixes avoid them. Their
        // names are in the units' own text, so they are read every time.
        let mut defined: Vec<&str> = fixes::top_level_definitions(text, tree);
        defined.sort_unstable();
        defined.dedup();
        let fix_context = {
            let mut h = FxHasher::default();
            summary.for_fixes.hash(&mut h);
            defined.hash(&mut h);
            h.finish()
        };
        let names_hash = {
            let mut h = FxHasher::default();
            summary.names_hash.hash(&mut h);
            defined.hash(&mut h);
            h.finish()
        };
        if names_hash != scans.names {
            // Those of an earlier set of names when it comes back (the
            // character that broke a function's syntax deleted again).
            let back = scans.earlier_named.take(&names_hash).unwrap_or_default();
            let current = std::mem::replace(&mut scans.named, back);
            scans.earlier_named.keep(scans.names, current);
            scans.names = names_hash;
        }
        let mut by_node: FxHashMap<(usize, usize), u64> = FxHashMap::default();
        let mut seen: FxHashMap<u64, std::sync::Arc<TextScan>> = FxHashMap::default();
        let mut seen_named: FxHashMap<u64, std::sync::Arc<Named>> = FxHashMap::default();
        let scanned: Vec<(u64, Scan)> = found
            .iter()
            .map(|(node, range, _, _)| {
                let node = *node;
                let bytes = &text.as_bytes()[range.clone()];
                let text_hash = match scans.by_node.get(&(node.id(), range.len())) {
                    Some(known) => *known,
                    None => xxhash_rust::xxh3::xxh3_64(bytes),
                };
                by_node.insert((node.id(), range.len()), text_hash);
                let text_scan = match scans.by_text.get(&text_hash).or_else(|| seen.get(&text_hash)) {
                    Some(scan) => scan.clone(),
                    None => {
                        let mut tokens: Vec<String> = Vec::new();
                        let mut distinct: rustc_hash::FxHashSet<&str> = rustc_hash::FxHashSet::default();
                        let mut loops_or_imports = false;
                        let mut nested = 0;
                        for_each_name(&text[range.clone()], |token| {
                            if LOOP_OR_IMPORT_WORDS.contains(&token) {
                                loops_or_imports = true;
                            } else if NESTING_WORDS.contains(&token) {
                                nested += 1;
                            }
                            if distinct.insert(token) {
                                tokens.push(token.to_string());
                            }
                        });
                        let own = if nested == 1 { parameters(node, text) } else { Vec::new() };
                        let unit_text = &text[range.clone()];
                        let works_through_self = unit_text.contains("self.") && {
                            let mut work = false;
                            for_each_name(unit_text, |token| work |= rules::MODEL_WORK.contains(&token));
                            work
                        };
                        std::sync::Arc::new(TextScan {
                            tokens,
                            loops_or_imports,
                            gpu_import: imports_gpu_library(unit_text),
                            own,
                            works_through_self,
                            self_assignments: semantic::self_assignments(unit_text).into_iter().map(|(_, _, s)| s.to_string()).collect(),
                            calls: called_names(unit_text).into(),
                            self_values: self_values(unit_text),
                            method_name: method_name(node, text),
                        })
                    }
                };
                let named = match scans.named.get(&text_hash).or_else(|| seen_named.get(&text_hash)) {
                    Some(named) => named.clone(),
                    None => {
                        let mut mentioned: Vec<String> = Vec::new();
                        let mut definitions: Vec<String> = Vec::new();
                        for token in &text_scan.tokens {
                            let word = token.as_str();
                            let special = LOOP_OR_IMPORT_WORDS.contains(&word) || NESTING_WORDS.contains(&word);
                            if !special && names.contains_key(word) {
                                mentioned.push(token.clone());
                            }
                            if defined.binary_search(&token.as_str()).is_ok() {
                                definitions.push(token.clone());
                            }
                        }
                        mentioned.sort_unstable();
                        definitions.sort_unstable();
                        std::sync::Arc::new(Named { mentioned, definitions })
                    }
                };
                seen_named.insert(text_hash, named.clone());
                let scan = Scan { text: text_scan, named };
                seen.insert(text_hash, scan.text.clone());
                (text_hash, scan)
            })
            .collect();
        // Each class's assignments to `self.…`, for the key of a method that
        // works through `self`. A class without syntax errors has all its
        // methods among the units (and `self` means nothing outside them);
        // in one with errors, the rules trust no assignment.
        let mut classes: FxHashMap<Option<usize>, u64> = FxHashMap::default();
        if scanned.iter().any(|(_, scan)| scan.text.works_through_self) {
            let mut assignments: FxHashMap<usize, (bool, Vec<&str>)> = FxHashMap::default();
            for ((_, _, _, around), (_, scan)) in found.iter().zip(&scanned) {
                if let Some(class) = around.last() {
                    let entry = assignments.entry(class.id()).or_insert_with(|| (class.has_error(), Vec::new()));
                    entry.1.extend(scan.text.self_assignments.iter().map(String::as_str));
                }
            }
            for (class, (has_error, lines)) in assignments {
                let mut h = FxHasher::default();
                if has_error { true.hash(&mut h) } else { (false, lines).hash(&mut h) }
                classes.insert(Some(class), h.finish());
            }
        }
        // Each class's methods (not properties), by name, for the units that
        // use one as a value: whether `self.name` is a method, as the rules
        // read it, depends on them and on whether the class parses cleanly.
        let wanted: rustc_hash::FxHashSet<usize> = found
            .iter()
            .zip(&scanned)
            .filter(|(_, (_, scan))| !scan.text.self_values.is_empty())
            .filter_map(|((_, _, _, around), _)| around.last().map(|c| c.id()))
            .collect();
        let mut methods: FxHashMap<usize, rustc_hash::FxHashSet<&str>> = FxHashMap::default();
        if !wanted.is_empty() {
            for ((_, _, _, around), (_, scan)) in found.iter().zip(&scanned) {
                let class = around.last().filter(|c| wanted.contains(&c.id()));
                if let (Some(class), Some(name)) = (class, scan.text.method_name.as_deref()) {
                    methods.entry(class.id()).or_default().insert(name);
                }
            }
        }
        let mut reach = std::mem::take(&mut scans.reach);
        if scans.reach_for != (fingerprint, names_hash) {
            let key = (fingerprint, names_hash);
            let back = scans.earlier_reach.take(&key).unwrap_or_default();
            scans.earlier_reach.keep(scans.reach_for, std::mem::replace(&mut reach, back));
            scans.reach_for = key;
        }
        // What this run uses is kept for the next (as with `by_text`).
        let mut reach_used: FxHashMap<(u64, usize), u64> = FxHashMap::default();
        let units = found
            .into_iter()
            .zip(&scanned)
            .enumerate()
            .map(|(index, ((node, range, place, around), (text_hash, scan)))| {
                let text_hash = *text_hash;
                let mentioned = &scan.named.mentioned;
                let reached_hash = *reach_used.entry((text_hash, index)).or_insert_with(|| {
                    if let Some(known) = reach.get(&(text_hash, index)) {
                        return *known;
                    }
                    // The names it mentions and, transitively, those their bindings mention.
                    let mut reached: Vec<&str> = Vec::with_capacity(mentioned.len());
                    let mut queue: Vec<&str> = mentioned
                        .iter()
                        .filter(|m| !(scan.text.own.contains(m) && !names[m.as_str()].imported))
                        .filter_map(|m| names.get_key_value(m.as_str()).map(|(k, _)| k.as_str()))
                        .collect();
                    while let Some(name) = queue.pop() {
                        if reached.contains(&name) {
                            continue;
                        }
                        reached.push(name);
                        queue.extend(depends.get(name).into_iter().flatten().map(String::as_str));
                    }
                    reached.sort_unstable();
                    let mut h = FxHasher::default();
                    for name in &reached {
                        let facts = &names[*name];
                        name.hash(&mut h);
                        facts.hash.hash(&mut h);
                        // Which module-level binding a use sees depends on where
                        // the function is: how many bindings come before it.
                        facts.units_before.iter().filter(|before| **before <= index).count().hash(&mut h);
                    }
                    h.finish()
                });
                let mut key = FxHasher::default();
                text_hash.hash(&mut key);
                scan.named.definitions.hash(&mut key);
                // The names of the classes holding it (rules read them: a
                // `Rotation` class's matrices are small).
                for class in &around {
                    class.field("name").map(|c| &text[c.byte_range()]).hash(&mut key);
                }
                if scan.text.works_through_self {
                    classes.get(&around.last().map(|c| c.id())).hash(&mut key);
                }
                if let Some(class) = around.last().filter(|_| !scan.text.self_values.is_empty()) {
                    // (In a class with syntax errors the rules take every
                    // such name for a method.)
                    if class.has_error() {
                        true.hash(&mut key);
                    } else {
                        let named: Vec<&String> = match methods.get(&class.id()) {
                            Some(of_class) => scan.text.self_values.iter().filter(|v| of_class.contains(v.as_str())).collect(),
                            None => Vec::new(),
                        };
                        if !named.is_empty() {
                            named.hash(&mut key);
                        }
                    }
                }
                reached_hash.hash(&mut key);
                let key = key.finish();
                let fix_key = {
                    let mut h = FxHasher::default();
                    (key, place, fix_context).hash(&mut h);
                    // Imports in a class body around it (fixes see them too).
                    let mut around: Vec<(&str, &str)> = summary
                        .class_imports
                        .iter()
                        .filter(|(_, _, units)| units.contains(&index))
                        .map(|(name, target, _)| (name.as_str(), target.as_str()))
                        .collect();
                    around.sort_unstable();
                    around.hash(&mut h);
                    h.finish()
                };
                let quiet = mentioned.is_empty() && !scan.text.loops_or_imports && !scan.text.works_through_self;
                let calls = scan.text.calls.clone();
                let gpu_import = scan.text.gpu_import.then_some(text_hash);
                Unit { id: node.id(), node, calls, quiet, key, fix_key, range, gpu_import }
            })
            .collect::<Vec<Unit<'t>>>();
        scans.by_text = seen;
        scans.named = seen_named;
        scans.by_node = by_node;
        scans.tree = Some(tree.clone());
        scans.reach = reach_used;
        let mut global = summary.global.clone();
        // Whether the GPU rules apply depends on imports inside functions
        // too: the texts of the functions that may hold one are part of
        // every key (rare: a kernel module imports at the top).
        for unit in units.iter().filter_map(|u| u.gpu_import) {
            global.push(format!("function with an import {unit:x}"));
        }
        Plan { units, global, outside }
    }
}

/// The name a definition unit gives (see [`definition_name`]), unless a
/// decorator makes it a property.
fn method_name(node: Node<'_>, text: &str) -> Option<String> {
    let property = node.kind_id() == gpulens_syntax::grammar().decorated_definition
        && node.field("definition").is_some_and(|d| text[node.start_byte()..d.start_byte()].contains("property"));
    definition_name(text, node).filter(|_| !property).map(str::to_string)
}

/// Attributes of `self` or `cls` that `text` uses without calling them
/// (`self.cost`, not `self.cost(`), sorted and distinct.
fn self_values(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut out: Vec<String> = Vec::new();
    for (at, _) in text.match_indices('.') {
        let before = &text[..at];
        let object = before.trim_end_matches(|c: char| c.is_alphanumeric() || c == '_');
        let object = &before[object.len()..];
        if !matches!(object, "self" | "cls") || before[..before.len() - object.len()].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '.') {
            continue;
        }
        let rest = &text[at + 1..];
        let name_len = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
        if name_len == 0 {
            continue;
        }
        let next = bytes[at + 1 + name_len..].iter().find(|b| **b != b' ');
        if next != Some(&b'(') {
            out.push(rest[..name_len].to_string());
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Whether `bytes` hold `for` or `while` anywhere (in a word or not): without
/// either, no token is a loop's keyword.
fn says_for_or_while(bytes: &[u8]) -> bool {
    memchr::memmem::find(bytes, b"for").is_some() || memchr::memmem::find(bytes, b"while").is_some()
}

/// Names `text` calls (`name(`, `.name(`), if it has a loop at all.
fn called_names(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    if !says_for_or_while(bytes) {
        return Vec::new();
    }
    let mut names: Vec<String> = Vec::new();
    let mut seen: FxHashSet<&str> = FxHashSet::default();
    let mut loops = false;
    for_each_name(text, |token| {
        loops |= token == "for" || token == "while";
        // The byte after the token, past spaces.
        let end = token.as_ptr() as usize - bytes.as_ptr() as usize + token.len();
        let next = bytes[end..].iter().find(|b| **b != b' ');
        if next == Some(&b'(') && seen.insert(token) {
            names.push(token.to_string());
        }
    });
    if loops { names } else { Vec::new() }
}

/// Names `text` (a function) may call inside a loop: `name(` or `.name(`
/// in a `for` or `while` statement (its header too), or on a line holding a
/// comprehension. Over-approximated from the lines' indentation, with
/// strings and comments blanked; every called name where that fails.
fn called_in_loops(text: &str) -> Vec<String> {
    let Some(code) = without_strings(text) else { return called_names(text) };
    // No loop header and no comprehension without these words (most
    // functions left out): nothing to split into lines.
    if !says_for_or_while(code.as_bytes()) {
        return Vec::new();
    }
    let mut names: Vec<String> = Vec::new();
    // The indentation of the loops around the current line.
    let mut loops: Vec<usize> = Vec::new();
    for (indent, line) in logical_lines(&code) {
        while loops.last().is_some_and(|&l| indent <= l) {
            loops.pop();
        }
        let first = line.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("");
        let first = if first == "async" { line[5..].trim_start().split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("") } else { first };
        let header = matches!(first, "for" | "while");
        if header || !loops.is_empty() || holds_comprehension(line) {
            let line_bytes = line.as_bytes();
            for_each_name(line, |token| {
                let end = token.as_ptr() as usize - line.as_ptr() as usize + token.len();
                if line_bytes[end..].iter().find(|b| !matches!(b, b' ' | b'\t')) == Some(&b'(') && !names.iter().any(|n| n == token) {
                    names.push(token.to_string());
                }
            });
        }
        if header {
            loops.push(indent);
        }
    }
    names
}

/// Whether a logical line (strings blanked) has a `for` inside brackets: a
/// comprehension.
fn holds_comprehension(line: &str) -> bool {
    let bytes = line.as_bytes();
    let mut depth = 0i32;
    bytes.iter().enumerate().any(|(i, &b)| {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            _ => {}
        }
        b == b'f'
            && depth > 0
            && bytes[i..].starts_with(b"for")
            && !bytes.get(i + 3).is_some_and(|&b| name_byte(b))
            && (i == 0 || !name_byte(bytes[i - 1]))
    })
}

/// The names a function definition's parameters bind.
fn parameters(definition: Node<'_>, text: &str) -> Vec<String> {
    let g = gpulens_syntax::grammar();
    let function = if definition.kind_id() == g.decorated_definition {
        definition.field("definition")
    } else {
        Some(definition)
    };
    let Some(params) = function.and_then(|f| f.field("parameters")) else { return Vec::new() };
    let mut cursor = params.walk();
    let names = params.named_children(&mut cursor).filter_map(semantic::parameter_name);
    names.map(|n| text[n.byte_range()].to_string()).collect()
}

/// Whether `b` can be part of a name (bytes past ASCII count: names end on
/// character boundaries).
const fn name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Calls `f` with every identifier-like token of `text` (bytes past ASCII
/// count as identifier characters, so tokens end on character boundaries).
fn for_each_name<'a>(text: &'a str, mut f: impl FnMut(&'a str)) {
    const IDENT: [bool; 256] = {
        let mut ident = [false; 256];
        let mut c = 0;
        while c < 256 {
            ident[c] = name_byte(c as u8);
            c += 1;
        }
        ident
    };
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if IDENT[bytes[i] as usize] {
            let start = i;
            i += 1;
            while i < bytes.len() && IDENT[bytes[i] as usize] {
                i += 1;
            }
            if !bytes[start].is_ascii_digit() {
                f(&text[start..i]);
            }
        } else {
            i += 1;
        }
    }
}

/// A set of names that answers "surely not in it" from a name's length and
/// first byte (false positives allowed, no false negatives).
struct Signatures {
    /// Bit `len % 32` of entry `first byte`.
    bits: [u32; 256],
}

impl Default for Signatures {
    fn default() -> Self {
        Signatures { bits: [0; 256] }
    }
}

impl Signatures {
    fn insert(&mut self, name: &str) {
        if let Some(&first) = name.as_bytes().first() {
            self.bits[first as usize] |= 1 << (name.len() % 32);
        }
    }

    fn may_hold(&self, name: &str) -> bool {
        name.as_bytes().first().is_some_and(|&first| self.bits[first as usize] & (1 << (name.len() % 32)) != 0)
    }
}

/// The parameters of the definition whose code (comments and strings
/// blanked) is `code`, when it holds no function, lambda or class of its own
/// (the analysis reads a name in a nested scope from that scope and the
/// module only); none otherwise.
fn own_parameters(code: &str) -> Vec<&str> {
    let mut header = None;
    let mut nested = false;
    for_each_name(code, |token| {
        if matches!(token, "def" | "lambda" | "class") {
            match header {
                None if token == "def" => header = Some(token.as_ptr() as usize - code.as_ptr() as usize),
                _ => nested = true,
            }
        }
    });
    let (Some(at), false) = (header, nested) else { return Vec::new() };
    let Some(open) = code[at..].find('(').map(|i| at + i + 1) else { return Vec::new() };
    let bytes = code.as_bytes();
    let (mut params, mut depth, mut piece) = (Vec::new(), 0i32, open);
    for i in open..bytes.len() {
        match bytes[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' if depth > 0 => depth -= 1,
            b',' | b')' if depth == 0 => {
                let p = code[piece..i].trim_start().trim_start_matches('*').trim_start();
                let end = p.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(p.len());
                if end > 0 && matches!(p[end..].trim_start().bytes().next(), None | Some(b':' | b'=')) {
                    params.push(&p[..end]);
                }
                if bytes[i] == b')' {
                    return params;
                }
                piece = i + 1;
            }
            _ => {}
        }
    }
    Vec::new()
}

/// Function definitions directly in the module, in class bodies, or in what
/// error recovery left of them; found without walking into any function. A
/// definition with syntax errors parses differently depending on what
/// surrounds it, so it is not a unit: it is analysed afresh every time.
/// Each comes with where it sits (in the module, a class, an error node): a
/// fix depends on that (a kernel can't be written above a method).
fn definition_units(tree: &Tree) -> Vec<(Node<'_>, Range<usize>, u8, Vec<Node<'_>>)> {
    let g = gpulens_syntax::grammar();
    let mut units = Vec::new();
    // Containers to look in, with the classes around them (outermost
    // first): carried down, since asking a node for its parent makes
    // tree-sitter search from the root through every sibling.
    let mut stack = vec![(tree.root_node(), 0u8, Vec::new())];
    while let Some((container, place, classes)) = stack.pop() {
        let mut cursor = container.walk();
        for child in container.named_children(&mut cursor) {
            let kind = child.kind_id();
            let definition = if kind == g.decorated_definition { child.field("definition") } else { Some(child) };
            let Some(definition) = definition else { continue };
            if definition.kind_id() == g.function_definition {
                if !child.has_error() {
                    units.push((child, child.byte_range(), place, classes.clone()));
                }
            } else if definition.kind_id() == g.class_definition {
                if let Some(body) = definition.field("body") {
                    let mut inside = classes.clone();
                    inside.push(definition);
                    stack.push((body, 1, inside));
                }
            } else if child.is_error() {
                stack.push((child, place.max(2), classes.clone()));
            }
        }
    }
    units.sort_by_key(|u| u.1.start);
    units
}

/// Every rule starts from an import of a CPU library the knowledge base
/// covers, so a file that never names one cannot produce a finding. This
/// byte scan lets whole files skip parsing-dependent work.
pub fn might_have_findings(text: &str) -> bool {
    // One pass over the text for all the names at once, stopping at the
    // first (a search per name read a file that names none twenty times).
    static NAMES: std::sync::OnceLock<aho_corasick::AhoCorasick> = std::sync::OnceLock::new();
    NAMES
        .get_or_init(|| {
            names_searcher(Knowledge::get().cpu_modules.iter().map(String::as_str).chain(GPU_MODULES.iter().copied()))
        })
        .is_match(text)
}

/// A search for any of `names` (a few short module names). Leftmost-first
/// matching answers "is there a match" as the standard kind does, and lets
/// the search run on SIMD fingerprints of the names; the standard kind
/// walks the automaton byte by byte.
fn names_searcher<'a>(names: impl IntoIterator<Item = &'a str>) -> aho_corasick::AhoCorasick {
    aho_corasick::AhoCorasick::builder()
        .match_kind(aho_corasick::MatchKind::LeftmostFirst)
        .build(names)
        .expect("a few short module names")
}

/// Whether `text` names one of the GPU libraries anywhere (a byte scan).
pub(crate) fn names_gpu_library(text: &str) -> bool {
    // (One pass for all the names.)
    static NAMES: std::sync::OnceLock<aho_corasick::AhoCorasick> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| names_searcher(GPU_MODULES.iter().copied())).is_match(text)
}

/// Whether some statement of `text` may import a GPU library (the
/// analysis's [`Module::mentions_gpu_library`] can only be true then): an
/// `import` whose statement (on its line, joined over backslash breaks,
/// after any `;` or `:`) is `import …` naming a GPU module among its
/// modules, or `from …` with a GPU module as the package. Read from the
/// bytes, so a docstring's example line counts too.
pub(crate) fn imports_gpu_library(text: &str) -> bool {
    if !names_gpu_library(text) {
        return false;
    }
    let bytes = text.as_bytes();
    let is_gpu = |name: &str| GPU_MODULES.contains(&name);
    memchr::memmem::find_iter(bytes, b"import").any(|at| {
        let end = at + "import".len();
        if (at > 0 && name_byte(bytes[at - 1])) || bytes.get(end).is_some_and(|&b| name_byte(b)) {
            return false;
        }
        // The logical line around it.
        let line_end = |from: usize| bytes[from..].iter().position(|&b| b == b'\n' || b == b'\r').map_or(bytes.len(), |i| from + i);
        let mut start = bytes[..at].iter().rposition(|&b| b == b'\n' || b == b'\r').map_or(0, |i| i + 1);
        loop {
            let mut before = start;
            while before > 0 && matches!(bytes[before - 1], b'\n' | b'\r') {
                before -= 1;
            }
            if before == 0 || before == start || bytes[before - 1] != b'\\' {
                break;
            }
            start = bytes[..before].iter().rposition(|&b| b == b'\n' || b == b'\r').map_or(0, |i| i + 1);
        }
        let mut stop = line_end(end);
        while stop > 0 && stop < bytes.len() && bytes[stop - 1] == b'\\' {
            let next = if bytes[stop..].starts_with(b"\r\n") { stop + 2 } else { stop + 1 };
            stop = line_end(next);
        }
        // Its statement.
        let from = text[start..at].rfind([';', ':']).map_or(start, |i| start + i + 1);
        let to = text[end..stop].find(';').map_or(stop, |i| end + i);
        let statement = &text[from..to];
        let mut words = statement.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.')).filter(|w| !w.is_empty());
        match words.next() {
            Some("import") => words.any(|w| is_gpu(w.split('.').next().unwrap_or(w))),
            Some("from") => words.next().is_some_and(|w| is_gpu(w.split('.').next().unwrap_or(w))),
            _ => false,
        }
    })
}

/// GPU libraries whose use the `GPU…` rules check.
pub(crate) const GPU_MODULES: &[&str] = &["cupy", "numba", "numba_cuda_mlir", "warp", "cudf", "pylibraft", "cuspatial"];

/// A finding is suppressed by `# gpulens: ignore[…]` on its first or last
/// line, or on a line that continues either of them with a backslash.
fn is_suppressed(module: &Module<'_>, text: &str, finding: &Finding) -> bool {
    if module.suppressions.is_empty() {
        return false;
    }
    let lines = [logical_line(text, finding.range.start), logical_line(text, finding.range.end)];
    module.suppressions.iter().any(|s| {
        lines.iter().any(|l| l.contains(&s.offset))
            && (s.codes.is_empty() || s.codes.iter().any(|c| matches_code(c, finding.code)))
    })
}

/// The line holding `offset`, extended over backslash continuations.
pub(crate) fn logical_line(text: &str, offset: usize) -> Range<usize> {
    let bytes = text.as_bytes();
    let offset = offset.min(bytes.len());
    let start = bytes[..offset].iter().rposition(|&b| b == b'\n' || b == b'\r').map_or(0, |i| i + 1);
    let mut end = offset;
    loop {
        end = bytes[end..].iter().position(|&b| b == b'\n' || b == b'\r').map_or(bytes.len(), |i| end + i);
        if end > start && end < bytes.len() && bytes[end - 1] == b'\\' {
            // Continued: skip the line break (CRLF too) and take the next line.
            end += if bytes[end] == b'\r' && bytes.get(end + 1) == Some(&b'\n') { 2 } else { 1 };
            continue;
        }
        return start..end;
    }
}



#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_never_rule_out_a_name_they_hold() {
        let mut notable = Signatures::default();
        let names = ["np", "fit", "intersects_location", "groupby", "x", "a_name_longer_than_thirty_two_bytes_"];
        for name in names {
            notable.insert(name);
        }
        assert!(names.iter().all(|n| notable.may_hold(n)));
        // Another length or first byte is ruled out; the empty name too.
        assert!(!notable.may_hold("npx") && !notable.may_hold("y") && !notable.may_hold("fix_") && !notable.may_hold(""));
    }

    #[test]
    fn strings_and_comments_are_blanked_in_place() {
        let code = "x = f'{a}' + r\"\\\"b\" # c = d\ny = '''e\nf'''";
        let blank = without_strings(code).unwrap();
        assert_eq!(blank.len(), code.len());
        assert_eq!(blank.split_whitespace().collect::<Vec<_>>(), ["x", "=", "+", "y", "="]);
        // Unsure: a string that doesn't end, an f-string that binds.
        assert_eq!(without_strings("x = 'a"), None);
        assert_eq!(without_strings("x = f'{(y := 2)}'"), None);
    }

    #[test]
    fn stray_characters_outside_strings_only() {
        for clean in ["x = '$?`!' # $?! ¿\n", "if a != b: pass\n", "π = 3.14159\n", "s = \"\"\"\n? ¡\n\"\"\"\n"] {
            assert!(!has_stray_characters(clean), "{clean:?}");
        }
        for stray in ["x = np.fft!.fft(a)\n", "x = a ? b\n", "x = $a\n", "x = a\u{1}\n", "x = a \u{fffd} b\n", "x = 'open\n"] {
            assert!(has_stray_characters(stray), "{stray:?}");
        }
    }

    #[test]
    fn statements_bind_names_not_words() {
        let (assigned, unread) = bound_names("table = load('the table of values', kind='a b')  # for the record");
        assert_eq!(assigned, ["table"]);
        assert!(unread.is_empty());
        let (assigned, unread) = bound_names("for name, value in items: print(f'{name} is {value}')");
        assert!(assigned.is_empty());
        assert_eq!(unread, ["name", "value"]);
        // A comprehension's names are its own: the loop's target is bound,
        // the comprehension's not.
        let (assigned, unread) = bound_names("ALIAS = {alias: info for info in INFOS for alias in info.aka}");
        assert_eq!(assigned, ["ALIAS"]);
        assert!(unread.is_empty(), "{unread:?}");
        let (_, unread) = bound_names("for (k, v) in [(n, n * 2) for n in range(3)]: pass");
        assert_eq!(unread, ["k", "v"]);
        // Soft keywords are names; keywords are not.
        let (assigned, _) = bound_names("match = type = None");
        assert_eq!(assigned, ["match", "type"]);
        // Unsure reading: every name counts.
        let (assigned, _) = bound_names("x = f'{(y := 2)}' if a else b");
        assert!(assigned.contains(&"y") && assigned.contains(&"a"), "{assigned:?}");
    }
}
