//! The pre-scan: what `check_text` must parse, read from the bytes.
//!
//! Parsing is the biggest cost of checking a large tree of files, and most
//! of a file usually cannot produce a finding. Before tree-sitter runs, the
//! pre-scan reads the text with the byte-level lexer (`gpulens_syntax::lex`,
//! through the outline) and decides what the parse may leave out.
//!
//! # Contract
//! The findings of a text checked with the pre-scan are exactly those of
//! [`crate::check_reference`] on a whole parse. To keep that, it may leave
//! out only:
//! - **test functions** (`test…`, not fixtures) in files that import no GPU
//!   library: advice is never reported in tests, and only the GPU rules,
//!   which need such an import, report there;
//! - **definitions that start no rule**: every rule starts from a word some
//!   rule family declares (a knowledge-base entry reached through an import
//!   or a module-level value, an index loop's `for`/`range` where an array
//!   library is imported, a model's work method or a ray query, a table
//!   method, a GPU call named alone: `rules::gpu::NAMED_CALLS`,
//!   `rules::loops::{LOOP_KEYWORDS, INDEX_ITERATORS}`, the knowledge's
//!   method tables). A definition none of whose tokens is such a word is
//!   left out, unless it calls in a loop a function that is kept or that the
//!   caller asked about (hotness reads those callers);
//! - **the insides of long strings** (docstrings), which hold no code;
//! - without fixes, **module statements nothing reads** (imports and plain
//!   assignments binding only names no parsed code mentions, see
//!   [`Unread`]) and runs of comment lines without a suppression.
//!
//! It must parse whole (answer `None`) whenever it cannot be sure: an
//! import or a string it cannot read, a tree with a syntax error, kept
//! definitions not where the outline put them, a skipped string that did
//! not parse as a string. A file that imports a GPU library is not judged
//! per definition (its rules read kernels and tests anywhere).
//!
//! A new rule family declares the words its checks start from beside its
//! code, and the pre-scan reads them from there. The tests that hold it to
//! this contract are `tests/prescan.rs` (whole parse against pre-scan on the
//! fixtures and on broken code) and the `edits` fuzzer.

use std::ops::Range;

use gpulens_syntax::NodeExt;
use rustc_hash::{FxHashMap, FxHashSet};

use super::*;

mod flows;
mod reading;
mod relevance;
mod scan;
mod statements;

pub(crate) use flows::*;
pub(crate) use reading::*;
pub(crate) use relevance::*;
pub(crate) use statements::*;
pub use scan::might_have_findings;
pub(crate) use scan::{imports_gpu_library, imports_numpy};

/// What [`parse_what_matters`] parsed.
pub(crate) struct Parsed {
    pub(crate) tree: Tree,
    /// The names of the module-level functions it leaves out.
    pub(crate) hidden: Vec<String>,
    /// Where the definitions start that it parsed but that have no finding.
    pub(crate) unwalked: Vec<usize>,
    /// The names each function it left out calls, of those with a loop.
    pub(crate) left_out_calls: Vec<Vec<String>>,
    /// The module's statements it left out (see [`Unread`]).
    pub(crate) left_out: Vec<Range<usize>>,
}

/// What [`parse_what_matters`] makes of a text.
pub(crate) enum Parse {
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
///
/// `project`: when the file is checked as part of a project, the names by
/// which it calls functions the project's index knows (see
/// [`crate::project::Place::imported_names`]), and its functions that
/// other modules pass known values to ([`crate::project::Place::receiving`]):
/// a definition that calls one of the first, or is one of the second, can
/// receive a value from another module, as from a caller or callee in this one.
pub(crate) fn parse_what_matters(
    text: &str,
    callers_of: &FxHashSet<String>,
    unread_out: bool,
    project: Option<(&FxHashSet<String>, &[String])>,
) -> Option<Parse> {
    let outline = gpulens_syntax::outline::outline(text)?;
    let plain = plain_code(text)?;
    // The GPU rules apply in tests too, and read kernels anywhere.
    let gpu_code = imports_gpu_library(text);
    let mut skipped: Vec<bool> =
        outline.definitions.iter().map(|d| !gpu_code && d.name.starts_with("test") && !d.fixture).collect();
    let mut irrelevant = vec![false; skipped.len()];
    let mut outside_quiet = false;
    let mut unread = Unreads { statements: Vec::new(), facts: 0 };
    // The calls values flow through (see `semantic::flow`): each
    // definition's neighbours, and where values may flow. Read when first asked.
    let flows: std::cell::OnceCell<(Vec<FlowCalls>, Vec<Vec<usize>>)> = std::cell::OnceCell::new();
    let flows = || flows.get_or_init(|| definition_flows(&plain, &outline));
    let reach: std::cell::OnceCell<Vec<bool>> = std::cell::OnceCell::new();
    let reach = |i: usize| {
        reach.get_or_init(|| {
            let mut reach = flow_reach(&plain, &outline, flows());
            if let Some((imported, receiving)) = project {
                for (r, d) in reach.iter_mut().zip(&outline.definitions) {
                    *r = *r
                        || (d.classes.is_empty() && receiving.contains(&d.name))
                        || all_called_names(&plain[d.range.clone()]).iter().any(|c| imported.contains(c));
                }
            }
            reach
        })[i]
    };
    if !gpu_code {
        if let Some((found, quiet, statements)) = irrelevant_definitions(text, &plain, &outline, &skipped, &reach, unread_out) {
            irrelevant = found;
            outside_quiet = quiet;
            unread = statements;
        }
    }
    // Values flow one call away (see `semantic::flow`): a definition kept
    // for its own sake reads what its callers pass and what its callees
    // return, so those are parsed and walked too. A module statement that
    // calls one is read.
    if irrelevant.iter().any(|i| *i) {
        let own_sake: Vec<bool> = skipped.iter().zip(&irrelevant).map(|(s, i)| !*s && !*i).collect();
        for (i, near) in flows().1.iter().enumerate() {
            if own_sake[i] {
                for &j in near {
                    irrelevant[j] = false;
                }
            }
        }
        let kept_names: FxHashSet<&str> =
            outline.definitions.iter().zip(skipped.iter().zip(&irrelevant)).filter(|(_, (s, i))| !**s && !**i).map(|(d, _)| d.name.as_str()).collect();
        unread.statements.retain(|u| {
            !all_called_names(&plain[outline.statements[u.statement].clone()]).iter().any(|c| kept_names.contains(c.as_str()))
        });
    }
    // What a kept method works on through `self` may be set in another
    // method (`self.model = model` in `__init__`, read with the class's
    // documentation; `self.coef_ = …` in `fit`): in a class with a kept
    // method that reads its attributes, the methods assigning to `self`
    // are parsed too.
    let working: FxHashSet<usize> = outline
        .definitions
        .iter()
        .zip(skipped.iter().zip(&irrelevant))
        .filter(|(d, (s, i))| !**s && !**i && plain[d.range.clone()].contains("self."))
        .filter_map(|(d, _)| d.classes.last().copied())
        .collect();
    if !working.is_empty() {
        for (d, i) in outline.definitions.iter().zip(irrelevant.iter_mut()) {
            if *i && d.classes.last().is_some_and(|c| working.contains(c)) && !semantic::self_assignments(&text[d.range.clone()]).is_empty() {
                *i = false;
            }
        }
    }
    // A method's advice is dropped when another method of its class draws
    // (see `rules::context::in_plotting_function`): in a class with a kept
    // method, the methods that may draw are parsed too (see
    // `rules::context::may_draw`; all of them where the imports can't be
    // read from the bytes).
    let with_kept: FxHashSet<usize> = outline
        .definitions
        .iter()
        .zip(skipped.iter().zip(&irrelevant))
        .filter(|(_, (s, i))| !**s && !**i)
        .filter_map(|(d, _)| d.classes.last().copied())
        .collect();
    if !with_kept.is_empty() {
        let plotting = rules::plotting_names(text);
        for (d, i) in outline.definitions.iter().zip(irrelevant.iter_mut()) {
            if *i && d.classes.last().is_some_and(|c| with_kept.contains(c)) && plotting.as_ref().is_none_or(|names| rules::may_draw(&text[d.range.clone()], names)) {
                *i = false;
            }
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
pub(crate) fn joined(mut ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
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
pub(crate) fn keep_class_bodies(text: &str, outline: &gpulens_syntax::outline::Outline, skipped: &mut [bool]) -> Vec<usize> {
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
pub(crate) fn within_one(ranges: &[Range<usize>], r: &Range<usize>) -> bool {
    let i = ranges.partition_point(|s| s.start <= r.start);
    i > 0 && r.end <= ranges[i - 1].end
}

/// The skipped definitions and classes (indices in `outline.classes`) and
/// the long strings outside them, sorted and disjoint.
pub(crate) fn skipped_ranges(outline: &gpulens_syntax::outline::Outline, skipped: &[bool], classes: &[usize]) -> Vec<Range<usize>> {
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
    // (A docstring left out still spans its text in the tree, from its
    // opening quotes to its closing ones: the types it documents are read.)
    let strings: Vec<Range<usize>> = outline.long_strings.iter().filter(|r| !within_one(&skip, r)).cloned().collect();
    skip.extend(strings);
    skip.sort_by_key(|r| r.start);
    skip
}

/// Whether an import of `target` matters to some rule.
pub(crate) fn relevant_module(knowledge: &Knowledge, target: &str) -> bool {
    let top = target.split('.').next().unwrap_or(target);
    // (`math` and `cmath` for their constants: `math.pi` is a number.)
    matches!(top, "time" | "math" | "cmath") || is_gpu_module(top) || rules::PLOTTING.contains(&top) || knowledge.cpu_modules.iter().any(|m| m == top)
}

#[cfg(test)]
mod tests {
    use super::*;

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
