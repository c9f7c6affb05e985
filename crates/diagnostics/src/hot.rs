//! Hotness: a finding in a function that some other function (or the
//! module's top level) calls from inside a loop runs as often as that loop
//! does. Worked out after every analysis for all findings (cached ones
//! included) from the functions that call the name in their text, so it
//! never depends on which functions an edit re-analysed, and costs a walk
//! of those callers only.

use gpulens_syntax::NodeExt;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use gpulens_syntax::{Node, Tree};

use crate::registry::{Callers, Kind};
use crate::{Finding, Module, Severity};

/// Adds to each CPU-side finding in a function called from a loop where it
/// is called, and raises it from a hint to information. `callers` are the
/// functions of the module and of class bodies with the names each calls
/// (listed only for those with a loop); `outside` is the module without
/// them, whose calls in loops are the script's own (and it answers parent
/// lookups: see [`Module::parent`]).
pub(crate) fn annotate<'t>(
    text: &str,
    callers: &[(Node<'t>, &[String])],
    functions: &Functions<'t>,
    outside: &Module<'t>,
    findings: &mut [Finding],
) {
    if findings.is_empty() {
        return;
    }
    // The names of the functions holding findings, then the callers that call them.
    let wanted = functions.names_holding(text, outside, findings.iter().filter(|f| f.code.rule().kind == Kind::Advice));
    let mut by_name: HashMap<&str, Vec<Node<'_>>> = HashMap::default();
    for (unit, calls) in callers {
        for name in calls.iter().filter(|c| wanted.contains(c.as_str())) {
            by_name.entry(name.as_str()).or_default().push(*unit);
        }
    }
    // Name → the first line where the module's top level calls it in a loop.
    let mut top_level: HashMap<&str, usize> = HashMap::default();
    for site in outside.calls.iter().filter(|s| s.loop_depth > 0) {
        let Some(callee) = site.node.field("function").filter(|c| c.kind_name() == "identifier") else { continue };
        if functions.outermost(outside, site.node).is_none() {
            top_level.entry(&text[callee.byte_range()]).or_insert(site.node.start_position().row + 1);
        }
    }
    let mut known: HashMap<usize, Option<(String, usize, bool)>> = HashMap::default();
    for f in findings.iter_mut().filter(|f| f.code.rule().kind == Kind::Advice) {
        let Some(function) = functions.holding(outside, &f.range) else { continue };
        let caller = known
            .entry(function.id())
            .or_insert_with(|| called_in_loop(text, outside, functions, &by_name, &top_level, function))
            .clone();
        if let Some((caller, line, per_item)) = caller {
            let name = function.field("name").map_or("", |n| &text[n.byte_range()]);
            let note = if per_item {
                // One item per call: copying each item on its own is what
                // costs; one call on all of them is what pays off.
                format!(
                    "`{name}` is called once per item of a loop {caller} (line {line}): rather than one copy \
                     and one GPU call per item, stack the items into one array and do this work on all of them at once."
                )
            } else {
                format!(
                    "`{name}` is called inside a loop {caller} (line {line}), so this work repeats on every pass: \
                     keep its data on the GPU across the calls rather than copying it each time."
                )
            };
            f.details = crate::rules::join([std::mem::take(&mut f.details), note]);
            if f.severity == Severity::Hint && !per_item {
                f.severity = Severity::Info;
            }
        }
    }
}

/// The function (in the module or a class body) that holds `node`, past any nested ones.
fn outermost_function<'t>(module: &Module<'t>, node: Node<'t>) -> Option<Node<'t>> {
    module.ancestors(node).filter(|n| n.kind_name() == "function_definition").last()
}

/// Finds the outermost function around a node from the document's
/// definition units (the functions of the module and of class bodies,
/// which no function holds), without walking up the tree: the nodes of a
/// function an edit did not re-analyse are not in the module's parent
/// table, and tree-sitter finds a parent by searching down from the root.
pub(crate) struct Functions<'t> {
    root: Node<'t>,
    /// (start, end, the unit, its function definition, the bytes of its
    /// body), by start.
    units: Vec<(usize, usize, Node<'t>, Node<'t>, std::ops::Range<usize>)>,
    /// The calls in each unit that can call a function by name (see
    /// [`Functions::calls_in`]), listed once per unit: the rules below ask
    /// about one callee after another, often the same callers for each.
    calls: std::cell::RefCell<HashMap<usize, std::sync::Arc<[NamedCall]>>>,
    /// The same lists by the unit's key, from an earlier analysis (where the
    /// unit's text is unchanged, so are its calls' offsets from its start),
    /// then those this one made.
    calls_before: HashMap<u64, std::sync::Arc<[NamedCall]>>,
    calls_now: std::cell::RefCell<HashMap<u64, std::sync::Arc<[NamedCall]>>>,
    /// Each unit's key (its text and what it reads outside it; see
    /// `plan`), where the caller keeps them, by the unit's node id.
    keys: HashMap<usize, u64>,
    /// Whether a unit draws (see [`draws`]), by its key: what an earlier
    /// analysis found, then what this one asked.
    drawn_before: HashMap<u64, bool>,
    drawn: std::cell::RefCell<HashMap<u64, bool>>,
}

/// What hotness read of the units of an earlier analysis, kept for the next
/// (a keystroke changes one unit; a caller's walk for whether it draws is
/// the same for the others).
#[derive(Debug, Default)]
pub(crate) struct Memo {
    drawn: HashMap<u64, bool>,
    calls: HashMap<u64, std::sync::Arc<[NamedCall]>>,
}

/// A call `name(...)`, or `self.name(...)`/`cls.name(...)` (`method`): the
/// bytes of the call and of `name`, counted from the start of the unit
/// holding it.
#[derive(Debug, Clone, Copy)]
struct NamedCall {
    call: (u32, u32),
    name: (u32, u32),
    method: bool,
}

impl<'t> Functions<'t> {
    /// `units`: the definition units of `tree`, decorated or not, in source
    /// order, each with its key where the caller has one (see [`Memo`]).
    pub(crate) fn new(tree: &'t Tree, units: impl IntoIterator<Item = (Node<'t>, Option<u64>)>, memo: Memo) -> Self {
        let mut keys = HashMap::default();
        let units = units
            .into_iter()
            .filter_map(|(unit, key)| {
                if let Some(key) = key {
                    keys.insert(unit.id(), key);
                }
                let function = if unit.kind_name() == "decorated_definition" { unit.field("definition")? } else { unit };
                let body = function.field("body").map_or(0..0, |b| b.byte_range());
                Some((unit.start_byte(), unit.end_byte(), unit, function, body))
            })
            .collect();
        Functions {
            root: tree.root_node(),
            units,
            calls: Default::default(),
            calls_before: memo.calls,
            calls_now: Default::default(),
            keys,
            drawn_before: memo.drawn,
            drawn: Default::default(),
        }
    }

    /// What to keep for the next analysis: what this one read of the units it has.
    pub(crate) fn memo(self) -> Memo {
        Memo { drawn: self.drawn.into_inner(), calls: self.calls_now.into_inner() }
    }

    /// [`draws`] of `unit`, remembered by its key.
    fn draws(&self, text: &str, module: &Module<'t>, unit: Node<'t>) -> bool {
        let Some(&key) = self.keys.get(&unit.id()) else { return draws(text, module, unit) };
        let known = self.drawn.borrow().get(&key).or_else(|| self.drawn_before.get(&key)).copied();
        let answer = known.unwrap_or_else(|| draws(text, module, unit));
        self.drawn.borrow_mut().insert(key, answer);
        answer
    }

    /// The outermost function holding the node that spans `range`.
    fn holding(&self, module: &Module<'t>, range: &std::ops::Range<usize>) -> Option<Node<'t>> {
        // Within a unit's body, the node spanning it is the body or inside
        // it: the unit's function, without a search from the root.
        let i = self.units.partition_point(|u| u.0 <= range.start);
        if let Some((_, _, _, function, body)) = i.checked_sub(1).map(|i| &self.units[i]) {
            if body.start <= range.start && range.start < range.end && range.end <= body.end {
                return Some(*function);
            }
        }
        self.root.descendant_for_byte_range(range.start, range.end).and_then(|n| self.outermost(module, n))
    }

    /// The calls in `unit` (in the order of a walk) that call a name or a
    /// method of `self` or `cls`: from an earlier analysis where the unit's
    /// key is the same, else from a walk of it.
    fn calls_in(&self, text: &str, module: &Module<'t>, unit: Node<'t>) -> std::sync::Arc<[NamedCall]> {
        if let Some(known) = self.calls.borrow().get(&unit.id()) {
            return known.clone();
        }
        let key = self.keys.get(&unit.id()).copied();
        let remembered = key.and_then(|k| self.calls_before.get(&k).cloned().or_else(|| self.calls_now.borrow().get(&k).cloned()));
        let found = remembered.unwrap_or_else(|| {
            let start = unit.start_byte();
            let relative = |r: std::ops::Range<usize>| ((r.start - start) as u32, (r.end - start) as u32);
            module
                .preorder(unit)
                .filter(|n| n.kind_name() == "call")
                .filter_map(|call| {
                    let callee = call.field("function")?;
                    match callee.kind_name() {
                        "identifier" => Some(NamedCall { call: relative(call.byte_range()), name: relative(callee.byte_range()), method: false }),
                        "attribute" if callee.field("object").is_some_and(|o| matches!(&text[o.byte_range()], "self" | "cls")) => {
                            callee.field("attribute").map(|a| NamedCall { call: relative(call.byte_range()), name: relative(a.byte_range()), method: true })
                        }
                        _ => None,
                    }
                })
                .collect()
        });
        if let Some(key) = key {
            self.calls_now.borrow_mut().insert(key, found.clone());
        }
        self.calls.borrow_mut().insert(unit.id(), found.clone());
        found
    }

    /// The calls in `unit` of `name` (of a method `name` of `self` or `cls`
    /// when `method`), in the order of a walk.
    fn calls_of<'a>(&self, text: &'a str, module: &Module<'t>, unit: Node<'t>, name: &'a str, method: bool) -> impl Iterator<Item = Node<'t>> + 'a
    where
        't: 'a,
    {
        let calls = self.calls_in(text, module, unit);
        let start = unit.start_byte();
        (0..calls.len()).filter_map(move |i| {
            let c = &calls[i];
            let at = |(from, to): (u32, u32)| start + from as usize..start + to as usize;
            if c.method != method || &text[at(c.name)] != name {
                return None;
            }
            // The call's node: the smallest spanning its bytes, or the call
            // above it with the same bytes.
            let bytes = at(c.call);
            let mut node = unit.descendant_for_byte_range(bytes.start, bytes.end)?;
            while node.kind_name() != "call" {
                node = node.parent().filter(|p| p.byte_range() == bytes)?;
            }
            Some(node)
        })
    }

    /// The names of the functions holding `findings`.
    fn names_holding<'a, 'f>(&self, text: &'a str, module: &Module<'t>, findings: impl Iterator<Item = &'f Finding>) -> HashSet<&'a str> {
        findings
            .filter_map(|f| self.holding(module, &f.range).and_then(|function| function.field("name")))
            .map(|name| &text[name.byte_range()])
            .collect()
    }

    /// What [`outermost_function`] says of `node`.
    fn outermost(&self, module: &Module<'t>, node: Node<'t>) -> Option<Node<'t>> {
        let (start, end) = (node.start_byte(), node.end_byte());
        let i = self.units.partition_point(|u| u.0 <= start);
        if let Some(&(from, to, unit, function, _)) = i.checked_sub(1).map(|i| &self.units[i]) {
            // Strictly inside the unit: the unit's function is an ancestor,
            // and no function is around the unit.
            if from <= start && end <= to && node.id() != unit.id() && node.id() != function.id() && (from, to) != (start, end) {
                return Some(function);
            }
        }
        outermost_function(module, node)
    }
}

/// Where `function` is first called inside a loop by other code (by name,
/// or as `self.name(...)` for a method): which function (quoted) or the
/// module level, and the line. Tests don't count: their loops are not the
/// program's.
fn called_in_loop<'t>(
    text: &str,
    module: &Module<'t>,
    functions: &Functions<'t>,
    by_name: &HashMap<&str, Vec<Node<'t>>>,
    top_level: &HashMap<&str, usize>,
    function: Node<'t>,
) -> Option<(String, usize, bool)> {
    let name = &text[function.field("name")?.byte_range()];
    let method = module.parent(function).and_then(|b| module.parent(b)).is_some_and(|c| c.kind_name() == "class_definition");
    for unit in by_name.get(name).into_iter().flatten() {
        if unit.id() == function.id() || unit_name(text, *unit).starts_with("test") {
            continue;
        }
        for call in functions.calls_of(text, module, *unit, name, method) {
            if let Some(caller) = loop_caller(module, call, function) {
                let caller_name = caller.field("name").map_or("", |n| &text[n.byte_range()]);
                return Some((format!("in `{caller_name}`"), call.start_position().row + 1, module.passes_an_item(call)));
            }
        }
    }
    if method {
        return None;
    }
    // A script's own loops at module level.
    top_level.get(name).map(|line| ("at the module's top level".to_string(), *line, false))
}

/// The name a definition (decorated or not) gives.
fn unit_name<'a>(text: &'a str, unit: Node<'_>) -> &'a str {
    crate::definition_name(text, unit).unwrap_or("")
}

/// The function holding `call`, if the call sits in a loop body (or a
/// comprehension) inside it, and it is not `callee` itself.
fn loop_caller<'t>(module: &Module<'t>, call: Node<'t>, callee: Node<'_>) -> Option<Node<'t>> {
    let mut in_loop = false;
    let mut child = call;
    for n in module.ancestors(call) {
        match n.kind_name() {
            "for_statement" | "while_statement" => {
                // The body repeats; a `for`'s iterable is evaluated once.
                in_loop |= n.field("body") == Some(child) || n.kind_name() == "while_statement";
            }
            // A comprehension repeats all but its first iterable.
            "list_comprehension" | "set_comprehension" | "dictionary_comprehension" | "generator_expression" => {
                let first_clause = n.named_children(&mut n.walk()).find(|c| c.kind_name() == "for_in_clause");
                in_loop |= first_clause != Some(child);
            }
            "function_definition" => {
                return (in_loop && n.id() != callee.id()).then_some(n);
            }
            _ => {}
        }
        child = n;
    }
    None
}

/// Work that flows between the functions of a module, read from the whole
/// tree after every analysis (so it never depends on which functions an edit
/// re-analysed):
///
/// - a function that another calls inside a loop with one element or row of
///   an array (`dist(a[i], b[j])`) works on that element: a kernel over its
///   own small loop belongs in the caller, so its index-loop findings go;
/// - a function that calls, inside a loop, a function of the module holding
///   library work (an FFT, a solve, a fit) repeats that work on every pass:
///   the loop is where the data should move to the GPU, once, so the call
///   gets the callee's advice too.
pub(crate) fn propagate<'t>(
    text: &str,
    callers: &[(Node<'t>, &[String])],
    functions: &Functions<'t>,
    module: &Module<'t>,
    findings: &mut Vec<Finding>,
) {
    if findings.is_empty() {
        return;
    }
    let function_of = |f: &Finding| functions.holding(module, &f.range);
    // The names of the functions holding findings that can flow (index
    // loops, array work): only their callers are looked at.
    let flows = |f: &&Finding| f.code.rule().callers != Callers::Stay;
    let wanted = functions.names_holding(text, module, findings.iter().filter(flows));
    if wanted.is_empty() {
        return;
    }
    // The functions calling each of those names in a loop's reach, looked
    // up by name (one pass over `callers`, not one per function with findings).
    let mut calling: HashMap<&str, Vec<(Node<'t>, &[String])>> = HashMap::default();
    for (unit, calls) in callers {
        for name in calls.iter().filter(|c| wanted.contains(c.as_str())) {
            calling.entry(name.as_str()).or_default().push((*unit, *calls));
        }
    }
    // Index loops in functions called per element.
    let mut per_element: HashMap<usize, bool> = HashMap::default();
    findings.retain(|f| {
        if f.code.rule().callers != Callers::Kernel {
            return true;
        }
        let Some(function) = function_of(f) else { return true };
        !*per_element.entry(function.id()).or_insert_with(|| called_per_element(text, &calling, module, functions, function))
    });
    // Library work in functions that others call in loops.
    let mut work: Vec<(Node<'_>, usize)> = Vec::new();
    for (i, f) in findings.iter().enumerate() {
        // Array work, whose data can stay on the GPU across the caller's
        // loop (not a kernel of the callee's own loop, a file read or a fit).
        if f.code.rule().callers != Callers::ArrayWork {
            continue;
        }
        if let Some(function) = function_of(f) {
            // Point at the callee's heaviest work: its first call whose work
            // per element is heavy, else its first.
            let heavy = f.details.contains(crate::rules::cupy::HEAVY_WORK);
            match work.iter_mut().find(|(w, _)| w.id() == function.id()) {
                None => work.push((function, i)),
                Some((_, first)) if heavy && !findings[*first].details.contains(crate::rules::cupy::HEAVY_WORK) => *first = i,
                Some(_) => {}
            }
        }
    }
    let mut added: Vec<Finding> = Vec::new();
    // Whether a caller draws, asked once per caller (one may call many callees).
    let mut drawing: HashMap<usize, bool> = HashMap::default();
    for (callee, i) in work {
        let Some(name) = callee.field("name").map(|n| &text[n.byte_range()]) else { continue };
        let method = callee.parent().and_then(|b| b.parent()).is_some_and(|c| c.kind_name() == "class_definition");
        let source = &findings[i];
        for (unit, _) in calling.get(name).map_or(&[][..], |c| &c[..]) {
            if unit.id() == callee.id()
                || unit_name(text, *unit).starts_with("test")
                || *drawing.entry(unit.id()).or_insert_with(|| functions.draws(text, module, *unit))
            {
                continue;
            }
            let found = functions
                .calls_of(text, module, *unit, name, method)
                .find(|c| loop_caller(module, *c, callee).is_some() && data_outlives_loop(text, module, *c));
            let Some(call) = found else {
                continue;
            };
            let Some(caller) = loop_caller(module, call, callee) else { continue };
            // The caller's own advice for this library says it already.
            let has_own = findings.iter().chain(&added).any(|f| {
                f.library == source.library && caller.start_byte() <= f.range.start && f.range.start < caller.end_byte()
            });
            if has_own {
                continue;
            }
            let line = text[..source.range.start].bytes().filter(|b| *b == b'\n').count() + 1;
            let what = &text[source.range.clone()];
            let what = if what.len() > 60 || what.contains('\n') { name } else { what };
            added.push(Finding {
                range: call.byte_range(),
                code: source.code,
                library: source.library,
                severity: Severity::Info,
                message: format!("`{name}` runs GPU-ready work (line {line}) on each pass: keep its data on the GPU"),
                details: format!(
                    "`{name}` (this module) does work on the CPU that runs on the GPU (`{what}`, line {line}; see the \
                     advice there), and this loop calls it on every pass. Move its data to the GPU once, before the \
                     loop, and keep it there across the calls: copying it each time would cost more than the GPU saves."
                ),
                stays_on_cpu: false,
                fix: None,
            });
        }
    }
    findings.extend(added);
}

/// `function` is called inside a loop elsewhere in the module with an
/// element or row of an array among its arguments (`f(x[i], y[j])`,
/// `f(data[i, :])`).
fn called_per_element<'t>(
    text: &str,
    calling: &HashMap<&str, Vec<(Node<'t>, &[String])>>,
    module: &Module<'t>,
    functions: &Functions<'t>,
    function: Node<'_>,
) -> bool {
    let Some(name) = function.field("name").map(|n| &text[n.byte_range()]) else { return false };
    let method = function.parent().and_then(|b| b.parent()).is_some_and(|c| c.kind_name() == "class_definition");
    let callers = calling.get(name).map_or(&[][..], |c| &c[..]);
    callers.iter().filter(|(unit, _)| unit.id() != function.id()).any(|(unit, _)| {
        functions
            .calls_of(text, module, *unit, name, method)
            .any(|call| loop_caller(module, call, function).is_some() && element_argument(text, call))
    })
}

/// An argument of `call` is one element or row of an array: a subscript
/// whose first index is a name or a number (`x[i]`, `x[i, :]`, `x[0]`).
fn element_argument(text: &str, call: Node<'_>) -> bool {
    let Some(args) = call.field("arguments") else { return false };
    let mut cursor = args.walk();
    let found = args.named_children(&mut cursor).any(|a| {
        let a = if a.kind_name() == "keyword_argument" { a.field("value") } else { Some(a) };
        a.filter(|a| a.kind_name() == "subscript").and_then(|s| s.field("subscript")).is_some_and(|index| {
            let first = if index.kind_name() == "tuple" { index.named_child(0) } else { Some(index) };
            first.is_some_and(|i| matches!(i.kind_name(), "identifier" | "integer"))
        })
    });
    let _ = text;
    found
}

/// The data `call` works on (its first positional argument, a name or an
/// attribute) lives across the loop around it: bound before the loop and
/// not bound again inside it (updating it in place, `a[:] = ...` or
/// `a *= ...`, keeps it). Work on data the loop builds afresh each pass
/// (a subgraph, a group's indices) is as small as those pieces.
fn data_outlives_loop<'t>(text: &str, module: &Module<'t>, call: Node<'t>) -> bool {
    let Some(args) = call.field("arguments") else { return false };
    let mut cursor = args.walk();
    let first = args.named_children(&mut cursor).find(|a| a.kind_name() != "comment");
    let Some(first) = first.filter(|a| matches!(a.kind_name(), "identifier" | "attribute")) else { return false };
    let name = &text[first.byte_range()];
    let mut current = call.parent();
    let the_loop = loop {
        let Some(n) = current else { return false };
        match n.kind_name() {
            "for_statement" | "while_statement" => break n,
            "function_definition" | "lambda" => return false,
            _ => current = n.parent(),
        }
    };
    let binds = |target: Node<'t>| {
        module.preorder(target).any(|t| matches!(t.kind_name(), "identifier" | "attribute") && &text[t.byte_range()] == name && {
            // `a[i] = ...` and `a.b = ...` write into `a`; they do not rebind it.
            t.parent().is_none_or(|p| !matches!(p.kind_name(), "subscript" | "attribute"))
        })
    };
    if the_loop.kind_name() == "for_statement" && the_loop.field("left").is_some_and(&binds) {
        return false;
    }
    let rebound = module.preorder(the_loop).any(|n| {
        n.kind_name() == "assignment" && n.field("left").is_some_and(|l| l.kind_name() != "subscript" && binds(l))
    });
    !rebound
}

/// A function draws a plot: it calls into a plotting library (`plt.plot`,
/// `sns.heatmap`) or onto axes and figures, or is named for plotting. What
/// it computes is what gets drawn (small), and the time goes to the drawing.
fn draws<'t>(text: &str, module: &Module<'t>, unit: Node<'t>) -> bool {
    let name = unit_name(text, unit).to_ascii_lowercase();
    if name.split('_').any(|w| matches!(w, "plot" | "plots" | "plotting" | "draw" | "show")) {
        return true;
    }
    module.preorder(unit).filter(|n| n.kind_name() == "call").any(|call| {
        let callee = call.field("function").map_or("", |f| &text[f.byte_range()]);
        let (object, method) = callee.rsplit_once('.').unwrap_or(("", callee));
        let root = object.split('.').next().unwrap_or("");
        matches!(root, "plt" | "sns" | "matplotlib" | "seaborn" | "plotly" | "px" | "go" | "bokeh" | "altair" | "alt")
            || (matches!(object, "ax" | "axes" | "fig" | "axis")
                && matches!(method, "plot" | "scatter" | "bar" | "hist" | "imshow" | "set_xlabel" | "set_ylabel" | "set_title" | "savefig" | "legend" | "fill_between"))
    })
}
