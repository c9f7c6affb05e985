//! What a `for` loop's header says it iterates over: `range` (or Numba's
//! `prange`) with its length when known, `enumerate` over an array, `zip`
//! of arrays. Read by the loop rules (`loops`) and, for `range`, by the
//! kernel rewrite, which must read the same loops the rules flag.

use gpulens_syntax::Node;
use gpulens_syntax::NodeExt;

use crate::semantic::Value;
use crate::Context;

/// `for i in prange(n)` (Numba's parallel range, by any import of it).
pub(super) fn prange_loop(module: &crate::Module<'_>, node: Node<'_>) -> bool {
    node.field("right")
        .filter(|r| r.kind_name() == "call")
        .and_then(|r| r.field("function"))
        .is_some_and(|f| module.qualified_name(f).as_deref() == Some("numba.prange"))
}

/// `for v in range(…)`: the variable and `range`'s arguments. Shared with
/// the kernel rewrite, which must read the same loops the rule flags.
pub(crate) fn range_header<'t>(module: &crate::Module<'t>, node: Node<'t>) -> Option<(&'t str, Vec<Node<'t>>)> {
    let left = node.field("left").filter(|l| l.kind_name() == "identifier")?;
    let right = node.field("right").filter(|r| r.kind_name() == "call")?;
    // `range`, or Numba's parallel range (`prange`, `numba.prange`).
    let function = right.field("function")?;
    if module.text_of(function) != "range" && module.qualified_name(function).as_deref() != Some("numba.prange") {
        return None;
    }
    let args = right.field("arguments")?;
    let mut cursor = args.walk();
    let args = args.named_children(&mut cursor).filter(|n| n.kind_name() != "comment").collect();
    Some((module.text_of(left), args))
}

/// `for v in range(…)`: the variable and the number of iterations, when known.
pub(super) fn range_loop<'t>(cx: &Context<'_, 't>, node: Node<'t>, scope: usize) -> Option<(&'t str, Option<u64>)> {
    let module = cx.module;
    let Some((var, args)) = range_header(module, node) else { return enumerate_loop(cx, node, scope) };
    let int = |n: &Node<'_>| match module.value(*n, scope) {
        Value::Int(v) => Some(v),
        _ => None,
    };
    let size = match args.as_slice() {
        [stop] => int(stop),
        [start, stop, ..] => int(start).zip(int(stop)).map(|(a, b)| b.saturating_sub(a)),
        _ => None,
    };
    // Not known exactly, but at most a few passes: as good as known for
    // saying the loop is small (and only that: a bound is not a count).
    let size = size.or_else(|| {
        // (With a step, the stop may be the low end: `range(n, 0, -1)`.)
        let stop = match args.as_slice() {
            [stop] | [_, stop] => *stop,
            _ => return None,
        };
        count_bound(cx, stop, scope, 0).filter(|n| *n < cx.settings.min_elements)
    });
    Some((var, size))
}

/// The most a count (a `range`'s stop) can be when the code bounds it
/// without stating it: the variable of a loop around (`for m in range(k)`
/// inside `for k in range(1, kmax + 1)` runs at most `kmax` times), give or
/// take a number. (What a number is, a parameter's default `kmax=10`
/// included, is [`crate::Module::value`]'s.)
fn count_bound(cx: &Context<'_, '_>, expr: Node<'_>, scope: usize, depth: u32) -> Option<u64> {
    let module = cx.module;
    if depth > 4 {
        return None;
    }
    if let Value::Int(v) = module.value(expr, scope) {
        return Some(v);
    }
    match expr.kind_name() {
        "parenthesized_expression" => count_bound(cx, expr.named_child(0)?, scope, depth + 1),
        "binary_operator" => {
            let (left, right) = (expr.field("left")?, expr.field("right")?);
            let Value::Int(n) = module.value(right, scope) else { return None };
            let bound = count_bound(cx, left, scope, depth + 1)?;
            match module.text_of(expr.field("operator")?) {
                "+" => Some(bound.saturating_add(n)),
                "-" | "//" => Some(bound),
                _ => None,
            }
        }
        "identifier" => {
            let name = module.text_of(expr);
            for a in module.ancestors(expr) {
                match a.kind_name() {
                    "for_statement" if a.field("left").is_some_and(|l| module.text_of(l) == name) => {
                        let (_, args) = range_header(module, a)?;
                        let stop = match args.as_slice() {
                            [stop] | [_, stop] => *stop,
                            _ => return None,
                        };
                        return count_bound(cx, stop, scope, depth + 1);
                    }
                    "function_definition" | "lambda" => return None,
                    _ => {}
                }
            }
            None
        }
        _ => None,
    }
}

/// `for i, x in enumerate(a)` over an array (or what may be one: a name,
/// attribute or subscript, not a call's result, a table or a graph): an
/// index loop whose element `x` is `a[i]`. The index variable and the
/// array's length, when known.
fn enumerate_loop<'t>(cx: &Context<'_, 't>, node: Node<'t>, scope: usize) -> Option<(&'t str, Option<u64>)> {
    let module = cx.module;
    let left = node.field("left").filter(|l| matches!(l.kind_name(), "pattern_list" | "tuple_pattern"))?;
    let names: Vec<Node<'t>> = left.named_children(&mut left.walk()).collect();
    let [index, element] = names.as_slice() else { return None };
    if index.kind_name() != "identifier" || element.kind_name() != "identifier" {
        return None;
    }
    let right = node.field("right").filter(|r| r.kind_name() == "call")?;
    if right.field("function").map(|f| module.text_of(f)) != Some("enumerate") {
        return None;
    }
    let args = right.field("arguments")?;
    let args: Vec<Node<'t>> = args.named_children(&mut args.walk()).filter(|n| n.kind_name() != "comment").collect();
    let [iterable] = args.as_slice() else { return None };
    if !matches!(iterable.kind_name(), "identifier" | "attribute" | "subscript") {
        return None;
    }
    if enumerates_zip(cx, node, scope) {
        return Some((module.text_of(*index), None));
    }
    match module.value(*iterable, scope) {
        Value::Array(n) => Some((module.text_of(*index), n)),
        Value::Unknown => Some((module.text_of(*index), None)),
        _ => None,
    }
}

/// The element variable of `for i, x in enumerate(...)`.
pub(super) fn enumerate_element<'t>(module: &crate::Module<'t>, node: Node<'t>) -> Option<&'t str> {
    let right = node.field("right").filter(|r| r.kind_name() == "call")?;
    if right.field("function").map(|f| module.text_of(f)) != Some("enumerate") {
        return None;
    }
    let left = node.field("left").filter(|l| matches!(l.kind_name(), "pattern_list" | "tuple_pattern"))?;
    left.named_child(1).filter(|e| e.kind_name() == "identifier").map(|e| module.text_of(e))
}

/// `for a, b in zip(x, y)` over arrays (names, attributes or elements of
/// them, not calls' results or literals): the entries of arrays side by side.
pub(super) fn zip_of_arrays(cx: &Context<'_, '_>, node: Node<'_>) -> bool {
    let module = cx.module;
    let Some(right) = node.field("right").filter(|r| r.kind_name() == "call") else { return false };
    if right.field("function").map(|f| module.text_of(f)) != Some("zip") {
        return false;
    }
    let Some(args) = right.field("arguments") else { return false };
    let args: Vec<Node<'_>> = args.named_children(&mut args.walk()).filter(|n| n.kind_name() != "comment").collect();
    !args.is_empty() && args.iter().all(|a| matches!(a.kind_name(), "identifier" | "attribute" | "subscript"))
}

/// `for i, w in enumerate(windows)` where `windows = zip(starts, stops)`:
/// the entries of arrays side by side, numbered.
pub(super) fn enumerates_zip(cx: &Context<'_, '_>, node: Node<'_>, scope: usize) -> bool {
    let module = cx.module;
    let Some(right) = node.field("right").filter(|r| r.kind_name() == "call") else { return false };
    if right.field("function").map(|f| module.text_of(f)) != Some("enumerate") {
        return false;
    }
    let Some(iterable) = right.field("arguments").and_then(|a| a.named_child(0)) else { return false };
    if iterable.kind_name() != "identifier" {
        return false;
    }
    let defined = module.defining_text(iterable, scope);
    defined.starts_with("zip(") && !std::ptr::eq(defined, module.text_of(iterable))
}
