//! Hotness: a finding in a function that some other function calls from
//! inside a loop runs as often as that loop does. Worked out from the whole
//! tree after every analysis (cached findings included), so that it never
//! depends on which functions an edit re-analysed.

use std::collections::HashMap;

use gpulens_syntax::{Node, Tree};

use crate::{Finding, Severity};

/// Adds to each CPU-side finding in a function called from a loop where it
/// is called, and raises it from a hint to information.
pub(crate) fn annotate(text: &str, tree: &Tree, findings: &mut [Finding]) {
    if findings.is_empty() {
        return;
    }
    let root = tree.root_node();
    let mut known: HashMap<usize, Option<(String, usize)>> = HashMap::new();
    for f in findings.iter_mut().filter(|f| !f.code.starts_with("GPU")) {
        let Some(node) = root.descendant_for_byte_range(f.range.start, f.range.end) else { continue };
        let Some(function) = outermost_function(node) else { continue };
        let caller = known.entry(function.id()).or_insert_with(|| called_in_loop(text, root, function)).clone();
        if let Some((caller, line)) = caller {
            let name = function.child_by_field_name("name").map_or("", |n| &text[n.byte_range()]);
            f.message.push_str(&format!(
                " `{name}` is called inside a loop in `{caller}` (line {line}), so this work repeats on every pass: \
                 keep its data on the GPU across the calls rather than copying it each time."
            ));
            if f.severity == Severity::Hint {
                f.severity = Severity::Info;
            }
        }
    }
}

/// The function (in the module or a class body) that holds `node`, past any nested ones.
fn outermost_function(node: Node<'_>) -> Option<Node<'_>> {
    let mut found = None;
    let mut current = node.parent();
    while let Some(n) = current {
        if n.kind() == "function_definition" {
            found = Some(n);
        }
        current = n.parent();
    }
    found
}

/// The first other function that calls `function` inside a loop (by name,
/// or as `self.name(...)` for a method), and the line of that call. Tests
/// don't count: their loops are not the program's.
fn called_in_loop(text: &str, root: Node<'_>, function: Node<'_>) -> Option<(String, usize)> {
    let name = &text[function.child_by_field_name("name")?.byte_range()];
    let method = function.parent().and_then(|b| b.parent()).is_some_and(|c| c.kind() == "class_definition");
    let bytes = text.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
    let mut from = 0;
    while let Some(found) = text[from..].find(name) {
        let at = from + found;
        from = at + name.len();
        if at > 0 && is_ident(bytes[at - 1]) || bytes.get(from).is_some_and(|b| is_ident(*b)) {
            continue;
        }
        let Some(ident) = root.descendant_for_byte_range(at, from).filter(|n| n.kind() == "identifier") else { continue };
        let Some(call) = call_of(text, ident, method) else { continue };
        if let Some(caller) = loop_caller(call, function) {
            let caller_name = &text[caller.child_by_field_name("name")?.byte_range()];
            if !caller_name.starts_with("test") {
                return Some((caller_name.to_string(), call.start_position().row + 1));
            }
        }
    }
    None
}

/// The call whose callee is `ident`: `name(...)` for a function, `self.name(...)` for a method.
fn call_of<'t>(text: &str, ident: Node<'t>, method: bool) -> Option<Node<'t>> {
    let parent = ident.parent()?;
    let callee = if method {
        let object = parent.child_by_field_name("object")?;
        let through_self = parent.kind() == "attribute"
            && parent.child_by_field_name("attribute") == Some(ident)
            && matches!(&text[object.byte_range()], "self" | "cls");
        through_self.then_some(parent)?
    } else {
        ident
    };
    let call = callee.parent().filter(|c| c.kind() == "call")?;
    (call.child_by_field_name("function") == Some(callee)).then_some(call)
}

/// The function holding `call`, if the call sits in a loop body (or a
/// comprehension) inside it, and it is not `callee` itself.
fn loop_caller<'t>(call: Node<'t>, callee: Node<'_>) -> Option<Node<'t>> {
    let mut in_loop = false;
    let mut child = call;
    let mut current = call.parent();
    while let Some(n) = current {
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
        current = n.parent();
    }
    None
}
