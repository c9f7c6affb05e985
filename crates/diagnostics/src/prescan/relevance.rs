//! Which definitions can start no rule, judged from their tokens (see
//! [`irrelevant_definitions`]), and the words that start one: how a token
//! starts a rule ([`Start`]), the table methods rules report on.

use std::ops::Range;

use rustc_hash::{FxHashMap, FxHashSet};

use super::*;

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
    let with_imports = outline
        .statements
        .iter()
        .zip(&statements)
        .zip(facts.iter_mut())
        .filter(|((_, code), _)| code.contains("import") || code.contains("optional_package"));
    for ((range, _), facts) in with_imports {
        // A module imported by its name (`spnd = optional_package("scipy.ndimage")[0]`),
        // as the analysis reads it at module level.
        if let Some((name, target)) = semantic::lazy_import(&text[range.clone()]) {
            let target = crate::semantic::canonical_module(target.to_string());
            *facts |= import_facts(&target);
            if relevant_module(knowledge, &target) {
                imported.entry(name).or_default().push(target);
            }
            continue;
        }
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
            // A matrix product written `a @ b` (see `Module::resolve_matmul`).
            let matmul = (arrays || local_arrays) && has_matmul_operator(code[0]);
            if starts || chain || reads_values || loop_writes || reads_flows || model_flows || reads_mirrors || matmul {
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
    matches!((api.library.as_str(), api.kind), ("cupy" | "cudf", ApiKind::Create) | ("cupy", ApiKind::Layout) | ("cugraph", ApiKind::Graph))
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

/// Whether code (comments and strings blanked) holds the `@` operator: an
/// `@` with code before it on its line, or one followed by a space or a
/// parenthesis (a decorator starts its line and names a function).
pub(crate) fn has_matmul_operator(code: &str) -> bool {
    let bytes = code.as_bytes();
    memchr::memchr_iter(b'@', bytes).any(|at| {
        let line = bytes[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let before = bytes[line..at].iter().any(|b| !b.is_ascii_whitespace());
        before || matches!(bytes.get(at + 1), Some(b' ' | b'\t' | b'(' | b'='))
    })
}
