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

mod reading;
mod scan;
mod statements;

pub(crate) use reading::*;
pub(crate) use statements::*;
pub use scan::might_have_findings;
pub(crate) use scan::imports_gpu_library;

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
pub(crate) fn parse_what_matters(text: &str, callers_of: &FxHashSet<String>, unread_out: bool) -> Option<Parse> {
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
    let near: std::cell::OnceCell<Vec<Vec<usize>>> = std::cell::OnceCell::new();
    let near = || near.get_or_init(|| definition_neighbours(&plain, &outline));
    let reach: std::cell::OnceCell<Vec<bool>> = std::cell::OnceCell::new();
    let reach = |i: usize| reach.get_or_init(|| flow_reach(&plain, &outline, near()))[i];
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
        for (i, near) in near().iter().enumerate() {
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
    // method from a parameter (`self.model = model` in `__init__`, read
    // with the class's documentation): in a class with such a method, the
    // methods assigning to `self` are parsed too.
    let working: FxHashSet<usize> = outline
        .definitions
        .iter()
        .zip(skipped.iter().zip(&irrelevant))
        .filter(|(d, (s, i))| {
            !**s && !**i && {
                let code = &plain[d.range.clone()];
                let mut work = false;
                for_each_name(code, |token| work |= rules::model_work().contains(token));
                work && code.contains("self.")
            }
        })
        .filter_map(|(d, _)| d.classes.last().copied())
        .collect();
    if !working.is_empty() {
        for (d, i) in outline.definitions.iter().zip(irrelevant.iter_mut()) {
            if *i && d.classes.last().is_some_and(|c| working.contains(c)) && !semantic::self_assignments(&text[d.range.clone()]).is_empty() {
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
pub(crate) fn irrelevant_definitions<'p>(
    text: &str,
    plain: &'p str,
    outline: &gpulens_syntax::outline::Outline,
    tests: &[bool],
    reach: &dyn Fn(usize) -> bool,
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
                )
                || rules::gpu::NAMED_CALLS.contains(&token)
                || rules::model_work().contains(token)
                || rules::ray_queries().contains(token)
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
    let knowledge_only: Vec<&str> = knowledge.only_words().map(|w| w.split("().").next().unwrap_or(w)).collect();
    let mirrors: Vec<&str> = knowledge.mirror_words().collect();
    for name in rules::model_work()
        .iter()
        .chain(rules::ray_queries().iter())
        .chain(table_methods().iter().copied())
        .chain(knowledge_only.iter().copied())
        .chain(mirrors.iter().copied())
        .chain(live.keys().copied())
        .chain(imported.keys().copied())
    {
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
                _ if rules::loops::LOOP_KEYWORDS.contains(&token) => loops = true,
                _ if token == "self" || rules::gpu::NAMED_CALLS.contains(&token) => starts = true,
                _ => {
                    reads = reads
                        || rules::model_work().contains(token)
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
        .enumerate()
        .map(|(index, (d, test))| {
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
            // A method a rule reads on a value that evidence beyond the
            // function's own words may tell (a parameter documented as a
            // table, or passed one): see `semantic::flow`.
            let mut reads_flows = false;
            let mut uses_only_words = false;
            let mut reads_self_flows = false;
            let mut reads_mirrors = false;
            let mut mirrors_through_self = false;
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
                    _ if rules::loops::INDEX_ITERATORS.contains(&token) => ranges = true,
                    _ if rules::loops::LOOP_KEYWORDS.contains(&token) => loops = true,
                    "self" => self_attributes = true,
                    _ if rules::gpu::NAMED_CALLS.contains(&token) => starts = true,
                    // Names none of the checks below knows: only a mesh or ray name can count.
                    _ if !notable.may_hold(token) && (local.is_empty() || !local.contains_key(token)) => {
                        reads_arrays = reads_arrays || rules::names_a_mesh_or_ray(token);
                    }
                    _ => {
                        model_work = model_work || rules::model_work().contains(token);
                        if rules::model_work().contains(token) || rules::ray_queries().contains(token) {
                            // The rules read these as methods (`nn.kneighbors(X)`):
                            // not a `def fit(...)` header, say.
                            if is_method(part, token) {
                                work_names.push(token);
                            }
                        } else {
                            reads_arrays = reads_arrays || rules::names_work_on_arrays(token);
                        }
                        reads_tables = reads_tables || (table_methods().contains(token) && is_method(part, token));
                        let only = knowledge_only.contains(&token);
                        uses_only_words |= only;
                        // An array method that mirrors a function (`a.dot(b)`),
                        // on anything but a literal or `self` itself.
                        // (Not a module's function: `np.mean(x)`.)
                        if mirrors.contains(&token) && is_method(part, token) && !receiver_is_module(part, token, &imported, &local) {
                            if let Some(through_self) = flow_receiver(part, token) {
                                reads_mirrors = true;
                                mirrors_through_self |= through_self;
                            }
                        }
                        if !reads_flows && (table_methods().contains(token) || only) && is_method(part, token) {
                            if let Some(through_self) = flow_receiver(part, token) {
                                reads_flows = true;
                                reads_self_flows |= through_self;
                            }
                        }
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
                            || rules::ray_queries().contains(w)
                            || (rules::neighbour_queries().contains(w) && sees("sklearn"))
                            || rules::index_work_methods().iter().any(|(library, methods)| methods.contains(w) && sees(library))
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
            // (A model passed in is one a caller built: only where a model
            // library is imported can one be.)
            let model_flows = work_names.iter().any(|w| {
                rules::model_work().contains(w)
                    && (sees("sklearn") || rules::index_work_methods().iter().any(|(library, methods)| methods.contains(w) && sees(library)))
            });
            // (A flow can tell a value only where one reaches the function:
            // see [`flow_reach`]; or where a method only one library's
            // objects have tells it.)
            let reads_flows = reads_flows && (reads_self_flows || uses_only_words || reach(index) || documents_a_value(&text[d.range.clone()]));
            // (A mirrored method is read on an array the function makes, or
            // one a flow or its docstring tells.)
            let reads_mirrors = reads_mirrors
                && (makes.is_some() || mirrors_through_self || reach(index) || documents_a_value(&text[d.range.clone()]));
            if starts || chain || reads_values || loop_writes || reads_flows || model_flows || reads_mirrors {
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
                        || (rules::neighbour_queries().contains(token) && sees("sklearn"))
                        || rules::index_work_methods().iter().any(|(library, methods)| methods.contains(token) && sees(library));
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

/// Whether the rules read only the value a call of `api` makes (an array's,
/// a table's or a graph's size, in the work done with it elsewhere in the
/// function), never the call itself.
pub(crate) fn makes_value_only(api: &gpulens_knowledge::ApiMapping) -> bool {
    use gpulens_knowledge::ApiKind;
    matches!((api.library.as_str(), api.kind), ("cupy" | "cudf", ApiKind::Create) | ("cugraph", ApiKind::Graph))
}

/// How a token in a function starts a rule (see `irrelevant_definitions`),
/// weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Start {
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
pub(crate) fn table_methods() -> &'static FxHashSet<&'static str> {
    static METHODS: std::sync::OnceLock<FxHashSet<&'static str>> = std::sync::OnceLock::new();
    METHODS.get_or_init(|| {
        use gpulens_knowledge::ApiKind;
        let apis = Knowledge::get().apis.iter().filter(|api| matches!(api.kind, ApiKind::Method | ApiKind::RowLoop));
        apis.filter_map(|api| api.cpu.rsplit('.').next()).collect()
    })
}

/// The neighbours (see `plan::words::neighbours`) of the outline's definitions.
pub(crate) fn definition_neighbours(plain: &str, outline: &gpulens_syntax::outline::Outline) -> Vec<Vec<usize>> {
    let names: Vec<Option<&str>> = outline.definitions.iter().map(|d| Some(d.name.as_str())).collect();
    let forms: Vec<Form> = outline
        .definitions
        .iter()
        .map(|d| match d.classes.last() {
            Some(line) => outline.classes.iter().find(|c| c.line_start == *line).map_or(Form::Unknown, |c| Form::Method(c.range.clone())),
            None => Form::Function,
        })
        .collect();
    let starts: Vec<usize> = outline.definitions.iter().map(|d| d.range.start).collect();
    let called: Vec<FlowCalls> = outline.definitions.iter().map(|d| flow_calls(&plain[d.range.clone()])).collect();
    let called: Vec<&FlowCalls> = called.iter().collect();
    neighbours(&names, &forms, &starts, &called)
}

/// Which definitions a value may flow into or out of (see `semantic::flow`):
/// those with a neighbour (`near`), those the module's code outside them
/// calls, and those calling themselves (a recursive call returns what they
/// return). By name, so a superset.
pub(crate) fn flow_reach(plain: &str, outline: &gpulens_syntax::outline::Outline, near: &[Vec<usize>]) -> Vec<bool> {
    let mut from_outside: FxHashSet<String> = FxHashSet::default();
    for r in &outline.statements {
        from_outside.extend(all_called_names(&plain[r.clone()]));
    }
    outline
        .definitions
        .iter()
        .zip(near)
        .map(|(d, near)| {
            // (Its body: past its name in its header, which `(` follows too.)
            let code = &plain[d.range.clone()];
            let body = code.find("def").and_then(|k| code[k..].find(d.name.as_str()).map(|n| k + n + d.name.len())).map_or(code, |at| &code[at..]);
            !near.is_empty() || from_outside.contains(&d.name) || all_called_names(body).contains(&d.name)
        })
        .collect()
}

/// Whether `text` (a definition) may document a parameter's type that
/// makes a value (see `semantic::docstrings`): read from every line of its
/// text, and from each line's first string on (a docstring on the `def` line).
pub(crate) fn documents_a_value(text: &str) -> bool {
    let makes = |doc: &str| semantic::documented_types(doc).iter().any(|(_, ty)| semantic::type_text_value(ty) != semantic::Value::Unknown);
    makes(text)
        || text.lines().any(|line| {
            let line = line.trim_start();
            line.find(['"', '\'']).is_some_and(|q| q > 0 && makes(&line[q..]))
        })
}

/// Whether `token` (in `code`, a method or attribute) may be read on a
/// value some flow tells (see `semantic::flow`): not on `self` or `cls`
/// themselves (no caller passes those), nor on a literal (in the blanked
/// code, a string left only blanks: `", ".join` reads `return   .join`).
/// `Some(true)` when the receiver is an attribute of `self` or `cls`
/// (`self.data.groupby`), whose value other methods set.
pub(crate) fn flow_receiver(code: &str, token: &str) -> Option<bool> {
    let bytes = code.as_bytes();
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
    let start = token.as_ptr() as usize - code.as_ptr() as usize;
    let mut dot = last_code_byte(&bytes[..start])?;
    let mut first = true;
    loop {
        let end = last_code_byte(&bytes[..dot])?;
        return match bytes[end] {
            // A call's or a subscript's result: anything.
            b')' | b']' => Some(false),
            c if is_word(c) => {
                let from = bytes[..=end].iter().rposition(|b| !is_word(*b)).map_or(0, |i| i + 1);
                let word = &code[from..=end];
                if word.as_bytes()[0].is_ascii_digit() {
                    return None;
                }
                match last_code_byte(&bytes[..from]) {
                    // An attribute: on to the name it starts from.
                    Some(k) if bytes[k] == b'.' => {
                        dot = k;
                        first = false;
                        continue;
                    }
                    _ if matches!(word, "self" | "cls") => (!first).then_some(true),
                    _ if PYTHON_KEYWORDS.contains(&word) => None,
                    _ => Some(false),
                }
            }
            // A string's closing quote (an f-string is kept), a dict or set,
            // or an operator before a blanked string.
            _ => None,
        };
    }
}

/// Whether the receiver of `token` (a method, in `code`) is a dotted name
/// starting from a module the function sees imported (`np.mean`,
/// `np.linalg.norm`): a module's function, not an array's method.
fn receiver_is_module(code: &str, token: &str, imported: &FxHashMap<&str, Vec<String>>, local: &FxHashMap<&str, Vec<String>>) -> bool {
    let bytes = code.as_bytes();
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
    let start = token.as_ptr() as usize - code.as_ptr() as usize;
    let Some(mut dot) = last_code_byte(&bytes[..start]) else { return false };
    loop {
        let Some(end) = last_code_byte(&bytes[..dot]) else { return false };
        if !is_word(bytes[end]) {
            return false;
        }
        let from = bytes[..=end].iter().rposition(|b| !is_word(*b)).map_or(0, |i| i + 1);
        match last_code_byte(&bytes[..from]) {
            Some(k) if bytes[k] == b'.' => dot = k,
            _ => {
                let root = &code[from..=end];
                return imported.contains_key(root) || local.contains_key(root);
            }
        }
    }
}

/// Python's keywords that may stand before an expression.
const PYTHON_KEYWORDS: &[&str] = &[
    "and", "as", "assert", "await", "del", "elif", "else", "for", "from", "if", "in", "is", "lambda", "not", "or", "return",
    "while", "with", "yield", "print", "case", "match",
];

/// Whether `token` (in `code`) follows a dot: an attribute or a method.
pub(crate) fn is_method(code: &str, token: &str) -> bool {
    let start = token.as_ptr() as usize - code.as_ptr() as usize;
    last_code_byte(&code.as_bytes()[..start]).map(|k| code.as_bytes()[k]) == Some(b'.')
}

/// Where the last byte of `code` stands that is not white space or a
/// backslash (a line continuation).
pub(crate) fn last_code_byte(code: &[u8]) -> Option<usize> {
    code.iter().rposition(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\\'))
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
