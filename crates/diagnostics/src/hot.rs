//! Hotness: a finding in a function that some other function (or the
//! module's top level) calls from inside a loop runs as often as that loop
//! does. Worked out after every analysis for all findings (cached ones
//! included) from the functions that call the name in their text, so it
//! never depends on which functions an edit re-analysed, and costs a walk
//! of those callers only.

use std::collections::HashMap;

use gpulens_syntax::{preorder, Node, Tree};

use crate::{Finding, Module, Severity};

/// Adds to each CPU-side finding in a function called from a loop where it
/// is called, and raises it from a hint to information. `callers` are the
/// functions of the module and of class bodies with the names each calls
/// (listed only for those with a loop); `outside` is the module without
/// them, whose calls in loops are the script's own (and it answers parent
/// lookups: see [`Module::parent`]).
pub(crate) fn annotate<'t>(text: &str, tree: &'t Tree, callers: &[(Node<'t>, &[String])], outside: &Module<'t>, findings: &mut [Finding]) {
    if findings.is_empty() {
        return;
    }
    let root = tree.root_node();
    // The names of the functions holding findings, then the callers that call them.
    let mut wanted: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for f in findings.iter().filter(|f| !f.code.starts_with("GPU")) {
        let function = root.descendant_for_byte_range(f.range.start, f.range.end).and_then(|n| outermost_function(outside, n));
        if let Some(name) = function.and_then(|f| f.child_by_field_name("name")) {
            wanted.insert(&text[name.byte_range()]);
        }
    }
    let mut by_name: HashMap<&str, Vec<Node<'_>>> = HashMap::new();
    for (unit, calls) in callers {
        for name in calls.iter().filter(|c| wanted.contains(c.as_str())) {
            by_name.entry(name.as_str()).or_default().push(*unit);
        }
    }
    // Name → the first line where the module's top level calls it in a loop.
    let mut top_level: HashMap<&str, usize> = HashMap::new();
    for site in outside.calls.iter().filter(|s| s.loop_depth > 0) {
        let Some(callee) = site.node.child_by_field_name("function").filter(|c| c.kind() == "identifier") else { continue };
        if outermost_function(outside, site.node).is_none() {
            top_level.entry(&text[callee.byte_range()]).or_insert(site.node.start_position().row + 1);
        }
    }
    let mut known: HashMap<usize, Option<(String, usize)>> = HashMap::new();
    for f in findings.iter_mut().filter(|f| !f.code.starts_with("GPU")) {
        let Some(node) = root.descendant_for_byte_range(f.range.start, f.range.end) else { continue };
        let Some(function) = outermost_function(outside, node) else { continue };
        let caller =
            known.entry(function.id()).or_insert_with(|| called_in_loop(text, outside, &by_name, &top_level, function)).clone();
        if let Some((caller, line)) = caller {
            let name = function.child_by_field_name("name").map_or("", |n| &text[n.byte_range()]);
            f.message.push_str(&format!(
                " `{name}` is called inside a loop {caller} (line {line}), so this work repeats on every pass: \
                 keep its data on the GPU across the calls rather than copying it each time."
            ));
            if f.severity == Severity::Hint {
                f.severity = Severity::Info;
            }
        }
    }
}

/// The function (in the module or a class body) that holds `node`, past any nested ones.
fn outermost_function<'t>(module: &Module<'t>, node: Node<'t>) -> Option<Node<'t>> {
    module.ancestors(node).filter(|n| n.kind() == "function_definition").last()
}

/// Where `function` is first called inside a loop by other code (by name,
/// or as `self.name(...)` for a method): which function (quoted) or the
/// module level, and the line. Tests don't count: their loops are not the
/// program's.
fn called_in_loop<'t>(
    text: &str,
    module: &Module<'t>,
    by_name: &HashMap<&str, Vec<Node<'t>>>,
    top_level: &HashMap<&str, usize>,
    function: Node<'t>,
) -> Option<(String, usize)> {
    let name = &text[function.child_by_field_name("name")?.byte_range()];
    let method = module.parent(function).and_then(|b| module.parent(b)).is_some_and(|c| c.kind() == "class_definition");
    for unit in by_name.get(name).into_iter().flatten() {
        if unit.id() == function.id() || unit_name(text, *unit).starts_with("test") {
            continue;
        }
        for call in preorder(*unit).filter(|n| n.kind() == "call") {
            if !calls_by_name(text, call, name, method) {
                continue;
            }
            if let Some(caller) = loop_caller(module, call, function) {
                let caller_name = caller.child_by_field_name("name").map_or("", |n| &text[n.byte_range()]);
                return Some((format!("in `{caller_name}`"), call.start_position().row + 1));
            }
        }
    }
    if method {
        return None;
    }
    // A script's own loops at module level.
    top_level.get(name).map(|line| ("at the module's top level".to_string(), *line))
}

/// The name a definition (decorated or not) gives.
fn unit_name<'a>(text: &'a str, unit: Node<'_>) -> &'a str {
    let definition = if unit.kind() == "decorated_definition" { unit.child_by_field_name("definition") } else { Some(unit) };
    definition.and_then(|d| d.child_by_field_name("name")).map_or("", |n| &text[n.byte_range()])
}

/// `call` calls `name(...)`, or `self.name(...)` for a method.
fn calls_by_name(text: &str, call: Node<'_>, name: &str, method: bool) -> bool {
    let Some(callee) = call.child_by_field_name("function") else { return false };
    if method {
        callee.kind() == "attribute"
            && callee.child_by_field_name("attribute").is_some_and(|a| &text[a.byte_range()] == name)
            && callee.child_by_field_name("object").is_some_and(|o| matches!(&text[o.byte_range()], "self" | "cls"))
    } else {
        callee.kind() == "identifier" && &text[callee.byte_range()] == name
    }
}

/// The function holding `call`, if the call sits in a loop body (or a
/// comprehension) inside it, and it is not `callee` itself.
fn loop_caller<'t>(module: &Module<'t>, call: Node<'t>, callee: Node<'_>) -> Option<Node<'t>> {
    let mut in_loop = false;
    let mut child = call;
    for n in module.ancestors(call) {
        match n.kind() {
            "for_statement" | "while_statement" => {
                // The body repeats; a `for`'s iterable is evaluated once.
                in_loop |= n.child_by_field_name("body") == Some(child) || n.kind() == "while_statement";
            }
            "list_comprehension" | "set_comprehension" | "dictionary_comprehension" | "generator_expression" => in_loop = true,
            "function_definition" => {
                return (in_loop && n.id() != callee.id()).then_some(n);
            }
            _ => {}
        }
        child = n;
    }
    None
}
