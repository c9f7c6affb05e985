//! The incremental plan and cache: which definitions an edit re-analyses,
//! and what an earlier analysis found in the rest.

use std::hash::{Hash, Hasher};

use std::ops::Range;

use gpulens_syntax::NodeExt;
use rustc_hash::{FxHashMap, FxHashSet, FxHasher};

use super::*;

mod outside;
mod words;
pub(crate) use outside::*;
pub(crate) use words::*;

/// What an earlier analysis of a document found inside each function, so an
/// edit re-analyses only the functions it touched. A function's findings
/// depend on its own text, on the module-level names it mentions (imports,
/// module-level assignments, kernels), on which of the libraries the rules
/// know the module imports at all, and on the settings and GPU; the
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
    /// What hotness read of the last run's units.
    hot: crate::hot::Memo,
    /// Of the last run: (functions reused or skipped, functions in all).
    pub last_reuse: (usize, usize),
    /// Where the document sits in its project (see [`crate::project`]):
    /// what other modules' functions return. Part of every unit's key.
    place: Option<crate::project::Place>,
}

impl Cache {
    /// Sets where the document sits in its project (the language server's
    /// workspace index changed, or the document moved). Findings analysed
    /// under another index are not reused: the index is part of every key.
    pub fn set_place(&mut self, place: Option<crate::project::Place>) {
        self.place = place;
    }

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
    // (A text that calls a function of the project's index may work on a
    // value from another module, whatever it imports.)
    if !might_have_findings(text) && cache.place.as_ref().is_none_or(|p| !p.reads_index(text)) {
        let place = cache.place.take();
        *cache = Cache { place, ..Cache::default() };
        return Some(Vec::new());
    }
    let mut plan = Plan::new(text, tree, knowledge, &mut cache.scans);
    if let Some(outside) = plan.outside.as_mut() {
        outside.place = cache.place.clone();
        outside.read_notebook(settings);
    }
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
    // The zero-code-change modes the text switches on (a module-level line
    // decides whether a function's advice stands).
    crate::rules::modes_switched_on(text, settings).hash(&mut global);
    if let Some(place) = &cache.place {
        (place.index.digest(), &place.module, place.package).hash(&mut global);
    }
    let global = global.finish();
    for u in &mut plan.units {
        u.key ^= global;
        u.fix_key ^= global;
    }
    let skipped: Vec<bool> =
        plan.units.iter().map(|u| u.quiet || (u.gpu_import.is_none() && cache.reusable(u.key, u.fix_key).is_some())).collect();
    let skip: Vec<usize> = plan.unwalked(&skipped).map(|u| u.id).collect();
    let skip = sorted(skip);
    cache.last_reuse = (skip.len(), plan.units.len());
    let walked;
    let module = match &plan.outside {
        Some(outside) if skip.len() == plan.units.len() => outside,
        _ => {
            walked = {
                let mut module = Module::new_skipping_unless(text, tree, knowledge, &skip, cancel)?;
                module.place = cache.place.clone();
                module.read_notebook(settings);
                module
            };
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
    // A skipped function's cached findings are all it holds: the walk of the
    // rest can still raise one there (a kernel known from outside it), but
    // without the function's own `# gpulens: ignore` comments, which were
    // not walked.
    // (A unit walked only because a neighbour reads it keeps its cached
    // findings too: its walk saw its neighbours only as far as they were walked.)
    // A quiet unit has no findings of its own to keep: what the rules raise
    // in it stays, as `check` keeps it (found by the property test: a
    // function whose return became `[...] @ cuda.jit` by an edit, walked
    // for a neighbour, lost its matmul finding).
    if skipped.iter().any(|s| *s) {
        let skipped: Vec<&Range<usize>> =
            plan.units.iter().zip(&skipped).filter(|(u, s)| **s && !u.quiet).map(|(u, _)| &u.range).collect();
        // In source order: the one that may hold a finding is the last starting at or before it.
        findings.retain(|f| {
            let i = skipped.partition_point(|r| r.start <= f.range.start);
            !(i > 0 && skipped[i - 1].contains(&f.range.start) && f.range.end <= skipped[i - 1].end)
        });
    }
    let mut fresh: FxHashMap<u64, (u64, Vec<Finding>)> = FxHashMap::with_capacity_and_hasher(plan.units.len(), Default::default());
    let mut reused = Vec::new();
    for unit in &plan.units {
        let start = unit.range.start;
        if unit.quiet {
            continue;
        }
        let known = cache.reusable(unit.key, unit.fix_key).filter(|_| unit.gpu_import.is_none());
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
    let units = plan.units.iter().map(|u| (u.node, Some(u.key)));
    Some(crate::finish_keyed(text, tree, units, &plan.units_and_calls(), module, findings, &mut cache.hot))
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

pub(crate) fn shifted(f: &Finding, by: isize) -> Finding {
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
pub(crate) struct Unit<'t> {
    pub(crate) id: usize,
    pub(crate) node: Node<'t>,
    /// Names it calls, when it has a loop (for hotness: see `hot`).
    pub(crate) calls: std::sync::Arc<[String]>,
    pub(crate) range: Range<usize>,
    /// Its text and what its findings depend on outside itself.
    pub(crate) key: u64,
    /// `key`, and what its fixes depend on besides: where it sits (a kernel
    /// can't be written above a method) and every module-level name.
    pub(crate) fix_key: u64,
    /// It mentions nothing a rule could start from: it has no findings.
    pub(crate) quiet: bool,
    /// The other units it calls or that call it (indices): analysed with it,
    /// they are walked with it.
    pub(crate) neighbours: Vec<usize>,
    /// The code outside the units calls it, or it calls a function defined
    /// there: it is walked whenever that code is analysed (always).
    pub(crate) outside_neighbour: bool,
    /// Its text hash, when it may import a GPU library: it is walked on
    /// every analysis, so that the module's imports (which decide whether
    /// the GPU rules apply) are all seen, as by a whole analysis.
    pub(crate) gpu_import: Option<u64>,
}

/// How to analyse a document: its units, and what every unit depends on.
pub(crate) struct Plan<'t> {
    pub(crate) units: Vec<Unit<'t>>,
    /// Which libraries the rules know the module imports (the loop rules ask).
    pub(crate) global: Vec<String>,
    /// The module with every unit skipped: the analysis itself when no unit
    /// needs walking, which saves a second walk of everything outside them.
    /// None when the code outside the units was the same as last time (its
    /// summary came from memory, without a walk).
    pub(crate) outside: Option<Module<'t>>,
}

/// What a function's text says, read once per text: what does not depend
/// on the names around it.
#[derive(Debug)]
pub(crate) struct TextScan {
    /// Its distinct identifiers.
    tokens: Vec<String>,
    /// It mentions `range` or `import`, or a call the GPU rules know by its
    /// text alone (`synchronize`, `copy_to_host`).
    loops_or_imports: bool,
    /// It may import NumPy: the matrix-product rule applies only in a
    /// module that imports it somewhere, functions included.
    numpy_import: bool,
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
    /// It reads attributes of `self` (`self.coef_`): what the class's
    /// methods assign there (see `semantic::values::attribute_value`). Or
    /// it is a constructor, whose parameters the class's docstring may
    /// document.
    reads_self: bool,
    /// It holds the `@` operator (or its text an `@` that looks like one).
    matmul: bool,
    /// Its statements assigning to attributes of `self`, as written.
    self_assignments: Vec<String>,
    /// Names it calls (`name(` or `.name(`), when it has a `for` or `while` loop.
    calls: std::sync::Arc<[String]>,
    /// The calls values flow through (see `words::FlowCalls`): to and from
    /// which units.
    called: FlowCalls,
    /// It calls a method a rule reads on a value its own evidence may tell
    /// (see `words::value_method_word`): not quiet, though it mentions nothing.
    value_methods: bool,
    /// Attributes of `self` or `cls` it uses without calling them
    /// (`self.cost` passed as a weight): whether such a name is a method
    /// of the class is read from the class's text (see
    /// `rules::context::defines_method`).
    self_values: Vec<String>,
    /// Its name, unless a decorator makes it a property (which gives a
    /// value, not a method).
    method_name: Option<String>,
    /// The names its own imports bind to plotting libraries (see
    /// `rules::plotting_names`); `None` where its imports can't be read so.
    plotting: Option<Vec<String>>,
    /// It calls a drawing method on a name for axes or figures (see
    /// `rules::draws_on_figures`): with [`TextScan::tokens`] naming one of
    /// the module's plotting names, what `rules::may_draw` says of it.
    draws_on_figures: bool,
}

/// Words a function's scan counts instead of taking them for names: the
/// iterators of index loops, imports, and the calls the GPU rules recognise
/// by their name alone (each declared by its rule family)...
pub(crate) fn loop_or_import_word(token: &str) -> bool {
    token == "import" || rules::loops::INDEX_ITERATORS.contains(&token) || rules::gpu::NAMED_CALLS.contains(&token)
}
/// ...and the definitions nested in it.
pub(crate) const NESTING_WORDS: &[&str] = &["def", "lambda", "class"];

/// Which of a function's identifiers name something outside it, for the
/// outside names and module-level definitions of the moment.
#[derive(Debug)]
pub(crate) struct Named {
    /// Outside names it mentions.
    mentioned: Vec<String>,
    /// Names of module-level functions and classes it mentions (whether a
    /// name is one changes findings: a Python function passed to a library
    /// call is not GPU work).
    definitions: Vec<String>,
}

/// What a function's text mentions.
#[derive(Debug, Clone)]
pub(crate) struct Scan {
    text: std::sync::Arc<TextScan>,
    named: std::sync::Arc<Named>,
}

/// The values of the last few keys, the latest last ([`Recently::LEN`] of
/// them, found by a linear search): what the analysis made for the last
/// few texts, which an edit undone brings back.
#[derive(Debug)]
pub(crate) struct Recently<K, V> {
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

/// What the code outside a module's units (its gaps) calls, and the
/// functions it defines (a definition the parse broke is no unit): the
/// units values flow to and from there (see `semantic::flow`).
#[derive(Debug, Default)]
pub(crate) struct OutsideNames {
    calls: FxHashSet<String>,
    defined: FxHashSet<String>,
    /// The names its imports bind to plotting libraries (see
    /// `rules::plotting_names`); `None` where its imports can't be read so.
    plotting: Option<Vec<String>>,
}

impl OutsideNames {
    fn of(text: &str, found: &[(Node<'_>, Range<usize>, u8, Vec<Node<'_>>)]) -> OutsideNames {
        let mut gaps = Vec::new();
        let mut at = 0;
        for (_, range, _, _) in found {
            if range.start > at {
                gaps.push(&text[at..range.start]);
            }
            at = at.max(range.end);
        }
        gaps.push(&text[at.min(text.len())..]);
        let calls: FxHashSet<String> = gaps.iter().flat_map(|g| all_called_names(g)).collect();
        let mut defined: FxHashSet<String> = FxHashSet::default();
        for gap in &gaps {
            let mut after_def = false;
            for_each_name(gap, |token| {
                if after_def {
                    defined.insert(token.to_string());
                }
                after_def = token == "def";
            });
        }
        let plotting = gaps.iter().try_fold(Vec::new(), |mut names, gap| {
            names.extend(rules::plotting_names(gap)?.into_iter().map(str::to_string));
            Some(names)
        });
        OutsideNames { calls, defined, plotting }
    }
}

/// Token scans of function texts, valid while the set of outside names is the same.
#[derive(Debug, Default)]
pub(crate) struct Scans {
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
    /// The units to leave unwalked, of those `skipped` marks: all but the
    /// neighbours of a unit that is walked (its findings read theirs).
    pub(crate) fn unwalked<'p>(&'p self, skipped: &[bool]) -> impl Iterator<Item = &'p Unit<'t>> + 'p {
        let mut skip: Vec<bool> = skipped.iter().zip(&self.units).map(|(s, u)| *s && !u.outside_neighbour).collect();
        for (u, _) in self.units.iter().zip(skipped).filter(|(_, s)| !**s) {
            for &j in &u.neighbours {
                skip[j] = false;
            }
        }
        self.units.iter().zip(skip).filter(|(_, s)| *s).map(|(u, _)| u)
    }

    /// Every unit with the names it calls in loops' reach (see `hot`).
    pub(crate) fn units_and_calls(&self) -> Vec<(Node<'t>, &[String])> {
        self.units.iter().filter(|u| !u.calls.is_empty()).map(|u| (u.node, &u.calls[..])).collect()
    }

    pub(crate) fn new(text: &'t str, tree: &'t Tree, knowledge: &'static Knowledge, scans: &mut Scans) -> Plan<'t> {
        let found = definition_units(tree);
        let starts: Vec<usize> = found.iter().map(|(_, range, _, _)| range.start).collect();
        let fingerprint = outside_fingerprint(text, &found);
        let mut outside = None;
        let summary = scans.outside.take(&fingerprint).unwrap_or_else(|| {
            let all = sorted(found.iter().map(|(node, _, _, _)| node.id()).collect());
            let module = Module::new_skipping(text, tree, knowledge, &all);
            let summary = std::sync::Arc::new(OutsideSummary::new(&module, knowledge, &starts, OutsideNames::of(text, &found)));
            outside = Some(module);
            summary
        });
        scans.outside.keep(fingerprint, summary.clone());
        let names = &summary.names;
        let depends = &summary.depends;
        // Module-level `def`s and `class`es: rules ask whether a name is one
        // (a Python function passed as an argument), fixes avoid them. Their
        // names are in the units' own text, so they are read every time.
        let mut defined: Vec<&str> = source::top_level_definitions(text, tree);
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
                            if loop_or_import_word(token) {
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
                            for_each_name(unit_text, |token| work |= rules::model_work().contains(token));
                            work
                        };
                        std::sync::Arc::new(TextScan {
                            tokens,
                            loops_or_imports,
                            gpu_import: imports_gpu_library(unit_text),
                            numpy_import: crate::prescan::imports_numpy(unit_text),
                            own,
                            works_through_self,
                            // (A constructor's parameters may be documented
                            // in its class's docstring, which the class's key holds.)
                            reads_self: unit_text.contains("self.") || unit_text.contains("def __init__("),
                            matmul: crate::prescan::has_matmul_operator(unit_text),
                            self_assignments: semantic::self_assignments(unit_text).into_iter().map(|(_, _, s)| s.to_string()).collect(),
                            calls: called_names(unit_text).into(),
                            called: flow_calls(unit_text),
                            value_methods: {
                                let mut found = false;
                                for_each_name(unit_text, |token| found |= value_method_word(token));
                                found
                            },
                            self_values: self_values(unit_text),
                            method_name: method_name(node, text),
                            plotting: rules::plotting_names(unit_text).map(|names| names.into_iter().map(str::to_string).collect()),
                            draws_on_figures: rules::draws_on_figures(unit_text),
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
                            let special = loop_or_import_word(word) || NESTING_WORDS.contains(&word);
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
        if scanned.iter().any(|(_, scan)| scan.text.reads_self) {
            let mut assignments: FxHashMap<usize, (bool, Vec<&str>)> = FxHashMap::default();
            for ((_, range, _, around), (_, scan)) in found.iter().zip(&scanned) {
                if let Some(class) = around.last() {
                    let entry = assignments.entry(class.id()).or_insert_with(|| {
                        // The class's docstring: it may document what a
                        // parameter assigned to `self` holds (see
                        // `semantic::flow::documented_model`).
                        let doc = gpulens_syntax::docstring(*class).map_or("", |s| &text[s.byte_range()]);
                        (class.has_error(), vec![doc])
                    });
                    entry.1.extend(scan.text.self_assignments.iter().map(String::as_str));
                    // A method assigning to `self` from its parameters: their
                    // defaults and its docstring say what they hold.
                    if !scan.text.self_assignments.is_empty() {
                        entry.1.push(&text[range.clone()]);
                    }
                }
            }
            for (class, (has_error, lines)) in assignments {
                let mut h = FxHasher::default();
                // (With errors, the docstring still documents the
                // constructor's parameters: see `semantic::collect::constructor_class`.)
                if has_error { (true, lines[0]).hash(&mut h) } else { (false, lines).hash(&mut h) }
                classes.insert(Some(class), h.finish());
            }
        }
        // A method's advice is dropped when another method of its class
        // draws (see `rules::context::in_plotting_function`): the texts of
        // the methods that may draw (see `rules::context::may_draw`; all of
        // them where the imports can't be read from the bytes) are part of
        // the other methods' keys.
        // (The module's plotting names are those of its units' imports and of
        // the code outside them: read once per text, not from the whole text
        // at every edit.)
        let plotting: Option<Vec<&str>> = summary.flows.plotting.as_ref().and_then(|outside| {
            let mut names: Vec<&str> = outside.iter().map(String::as_str).collect();
            for (_, scan) in &scanned {
                names.extend(scan.text.plotting.as_ref()?.iter().map(String::as_str));
            }
            Some(names)
        });
        let mut drawing: FxHashMap<usize, Vec<(usize, u64)>> = FxHashMap::default();
        for (i, ((_, _, _, around), (text_hash, scan))) in found.iter().zip(&scanned).enumerate() {
            let Some(class) = around.last() else { continue };
            let may_draw = match &plotting {
                Some(names) => scan.text.draws_on_figures || scan.text.tokens.iter().any(|t| names.contains(&t.as_str())),
                None => true,
            };
            if may_draw {
                drawing.entry(class.id()).or_default().push((i, *text_hash));
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
        // (A function right in an error node is no method, whatever is around it.)
        let forms: Vec<Form> = found
            .iter()
            .map(|(_, _, place, classes)| match classes.last() {
                _ if *place == 2 => Form::Unknown,
                Some(class) => Form::Method(class.byte_range()),
                None => Form::Function,
            })
            .collect();
        // The class each unit is a method of (its innermost), by node id.
        let class_of: Vec<Option<usize>> = found.iter().map(|(_, _, _, around)| around.last().map(|c| c.id())).collect();
        let mut units = found
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
                        .filter(|m| !scan.text.own.contains(m) || names[m.as_str()].imported)
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
                if scan.text.reads_self {
                    classes.get(&around.last().map(|c| c.id())).hash(&mut key);
                }
                for (j, drawer) in around.last().and_then(|c| drawing.get(&c.id())).into_iter().flatten() {
                    if *j != index {
                        drawer.hash(&mut key);
                    }
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
                let quiet = mentioned.is_empty()
                    && !scan.text.loops_or_imports
                    && !scan.text.works_through_self
                    && !scan.text.value_methods
                    // (A product `a @ b` needs no name a rule looks at: its
                    // operands' values decide, from wherever they come.)
                    && !scan.text.matmul;
                let calls = scan.text.calls.clone();
                let gpu_import = scan.text.gpu_import.then_some(text_hash);
                Unit { id: node.id(), node, calls, quiet, key, fix_key, range, gpu_import, neighbours: Vec::new(), outside_neighbour: false }
            })
            .collect::<Vec<Unit<'t>>>();
        // Values flow two calls away (see `semantic::flow`): a unit's findings
        // read the units it calls and that call it, theirs, and the
        // module-level code that calls any of them. Their keys are part of its key.
        let names: Vec<Option<&str>> = units.iter().map(|u| definition_name(text, u.node)).collect();
        let called: Vec<&FlowCalls> = scanned.iter().map(|(_, scan)| &scan.text.called).collect();
        let one_call = neighbours(&names, &forms, &units.iter().map(|u| u.range.start).collect::<Vec<_>>(), &called);
        let mut near = within_two_calls(&one_call);
        // A method reading `self.x` reads what the class's methods assign
        // there, in their scopes: those are walked with it.
        let mut assigning: FxHashMap<usize, Vec<usize>> = FxHashMap::default();
        for (i, (class, (_, scan))) in class_of.iter().zip(&scanned).enumerate() {
            if let Some(class) = class.filter(|_| !scan.text.self_assignments.is_empty()) {
                assigning.entry(class).or_default().push(i);
            }
        }
        if !assigning.is_empty() {
            for (i, (class, (_, scan))) in class_of.iter().zip(&scanned).enumerate() {
                let Some(of_class) = class.filter(|_| scan.text.reads_self).and_then(|c| assigning.get(&c)) else { continue };
                for &j in of_class {
                    if j != i && !near[i].contains(&j) {
                        near[i].push(j);
                    }
                }
            }
        }
        // (What the code outside the units calls; its text is in the fingerprint.)
        let (outside_calls, outside_defined, outside_hash) = (&summary.flows.calls, &summary.flows.defined, fingerprint);
        let own_keys: Vec<(u64, u64)> = units.iter().map(|u| (u.key, u.fix_key)).collect();
        // (A unit next to the code outside: it calls the unit, or the unit
        // calls a function defined there, such as one a syntax error keeps
        // out of the units.)
        let next_outside: Vec<bool> = names
            .iter()
            .zip(&called)
            .map(|(name, called)| name.is_some_and(|n| outside_calls.contains(n)) || called.bare.iter().chain(&called.on_self).any(|c| outside_defined.contains(c)))
            .collect();
        for (((i, unit), near), one_call) in units.iter_mut().enumerate().zip(near).zip(&one_call) {
            // The code outside the units is analysed every time: the units
            // whose values it reads (or that read its functions'), and their
            // neighbours (values flow two calls away), are walked with it.
            unit.outside_neighbour = next_outside[i] || one_call.iter().any(|&j| next_outside[j]);
            if near.is_empty() && !unit.outside_neighbour {
                continue;
            }
            let mut key = FxHasher::default();
            let mut fix_key = FxHasher::default();
            unit.key.hash(&mut key);
            (unit.key, unit.fix_key).hash(&mut fix_key);
            for &j in &near {
                own_keys[j].0.hash(&mut key);
                own_keys[j].0.hash(&mut fix_key);
            }
            if unit.outside_neighbour {
                outside_hash.hash(&mut key);
                outside_hash.hash(&mut fix_key);
            }
            unit.key = key.finish();
            unit.fix_key = fix_key.finish();
            unit.neighbours = near;
        }
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
        // (So does the matrix-product rule on a NumPy import anywhere.)
        if scanned.iter().any(|(_, scan)| scan.text.numpy_import) {
            global.push("numpy imported in a function".to_string());
        }
        Plan { units, global, outside }
    }
}
