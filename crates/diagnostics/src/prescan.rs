//! The pre-scan: what `check_text` must parse, read from the bytes.

use std::ops::Range;

use gpulens_syntax::NodeExt;
use rustc_hash::{FxHashMap, FxHashSet};

use super::*;

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
pub(crate) struct Unreads<'p> {
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
pub(crate) struct Unread<'p> {
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
pub(crate) fn import_facts(module: &str) -> u8 {
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
pub(crate) fn import_bindings(code: &str) -> Option<Vec<&str>> {
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
/// The statements [`without_unread`] leaves out of the parse.
pub(crate) type LeftOut = Vec<Range<usize>>;

pub(crate) fn without_unread(
    text: &str,
    plain: &str,
    outline: &gpulens_syntax::outline::Outline,
    skip: Vec<Range<usize>>,
    unreads: &Unreads<'_>,
) -> Option<(Vec<Range<usize>>, LeftOut)> {
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

/// The names a statement (its code, comments and strings blanked) may bind,
/// over-approximated: (those bound to what it computes — every name before
/// an assignment's `=` or an augmented one, before `:=` — and those bound
/// where the value can't be read — a `for`'s targets, after `as`).
pub(crate) fn bound_names(part: &str) -> (Vec<&str>, Vec<&str>) {
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
pub(crate) const HARD_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
    "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or",
    "pass", "raise", "return", "try", "while", "with", "yield",
];

/// `code` with the insides of its strings and its comments blanked (the
/// same length, every other byte where it was), or `None` where a string
/// doesn't end in it or is an f-string holding `:=`, which can bind a name.
pub(crate) fn without_strings(code: &str) -> Option<String> {
    blanked(code, |_| {})
}

/// [`without_strings`], telling `seen` each range it blanks.
pub(crate) fn blanked(code: &str, mut seen: impl FnMut(Range<usize>)) -> Option<String> {
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
pub(crate) fn strings_and_comments(bytes: &[u8], mut f: impl FnMut(Range<usize>)) -> bool {
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
pub(crate) fn plain_code(text: &str) -> Option<String> {
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
pub(crate) fn has_stray_characters(text: &str) -> bool {
    plain_code(text).is_none()
}

/// Reads the import statements of `code` (`import a.b as c`, `from a
/// import b as c, d`), calling `bind(local name, qualified target)` for
/// each name bound; `false` when some `import` is not in a form it reads
/// (the caller must then assume the worst). Strings and comments are not
/// read, and a backslash line break is a space. Relative imports bind
/// nothing the rules know, and neither does `from a import *` (the
/// analysis resolves no name through one).
pub(crate) fn local_imports<'a>(code: &'a str, bind: &mut impl FnMut(&'a str, String)) -> bool {
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

pub(crate) fn is_dotted(s: &str) -> bool {
    !s.is_empty() && s.split('.').all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

/// Whether `code` may subscript a whole axis (`x[:, j]`, `x[i, :]`,
/// `x[::]`): an element of brackets that is only colons.
pub(crate) fn whole_axis_slice(code: &[u8]) -> bool {
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
pub(crate) fn statements_holding(function: &str, offsets: &[usize]) -> usize {
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
pub(crate) fn outside_checks(function: &str, mut offsets: Vec<usize>) -> Vec<usize> {
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
pub(crate) fn first_word(line: &str) -> Option<&str> {
    let mut words = line.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty());
    let first = words.next();
    if first == Some("async") { words.next() } else { first }
}

/// Where a compound statement's header ends in its logical line (strings
/// blanked): at its first `:` outside brackets.
pub(crate) fn header_colon(line: &str) -> Option<usize> {
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
pub(crate) const NOT_IN_KERNELS: &[&str] = &[
    "return", "yield", "raise", "try", "with", "global", "nonlocal", "await", "del", "while", "import", "def",
    "class", "lambda",
];

/// Whether `function` (a definition's text) has a `for` loop over
/// `range(…)` or `enumerate(…)` (the loops the index-loop rules read) whose
/// body writes an element or accumulates, names none of [`NOT_IN_KERNELS`]
/// outside its strings and comments and does no other Python work (see
/// [`python_work_in_loop`]). Over-approximated from indentation; `true`
/// where its strings can't be told.
pub(crate) fn index_loop_may_be_kernel(function: &str) -> bool {
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
pub(crate) fn python_work_in_loop(code: &str, part: &str, strings: &[usize]) -> bool {
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
pub(crate) fn callee_before(code: &[u8]) -> Option<&str> {
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
pub(crate) fn logical_lines(code: &str) -> Vec<(usize, &str)> {
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
pub(crate) fn writes_or_accumulates(code: &[u8]) -> bool {
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
pub(crate) fn dotted_chain(bytes: &[u8]) -> Vec<&str> {
    let mut parts = Vec::new();
    walk_dotted_chain(bytes, |part| parts.push(part));
    parts
}

/// Where the [`dotted_chain`] of `bytes` ends: past its last name (0 for none).
pub(crate) fn dotted_chain_end(bytes: &[u8]) -> usize {
    let mut end = 0;
    walk_dotted_chain(bytes, |part| end = part.as_ptr() as usize - bytes.as_ptr() as usize + part.len());
    end
}

/// Calls `f` with each name of the [`dotted_chain`] of `bytes`, in order.
pub(crate) fn walk_dotted_chain<'b>(bytes: &'b [u8], mut f: impl FnMut(&'b str)) {
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
pub(crate) fn relevant_module(knowledge: &Knowledge, target: &str) -> bool {
    let top = target.split('.').next().unwrap_or(target);
    // (`math` and `cmath` for their constants: `math.pi` is a number.)
    matches!(top, "time" | "math" | "cmath") || GPU_MODULES.contains(&top) || rules::PLOTTING.contains(&top) || knowledge.cpu_modules.iter().any(|m| m == top)
}

/// Whether `b` can be part of a name (bytes past ASCII count: names end on
/// character boundaries).
pub(crate) const fn name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Calls `f` with every identifier-like token of `text` (bytes past ASCII
/// count as identifier characters, so tokens end on character boundaries).
pub(crate) fn for_each_name<'a>(text: &'a str, mut f: impl FnMut(&'a str)) {
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
pub(crate) fn names_searcher<'a>(names: impl IntoIterator<Item = &'a str>) -> aho_corasick::AhoCorasick {
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
