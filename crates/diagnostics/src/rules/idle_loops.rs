//! Loops that compute nothing a kernel would, read from their bodies: they
//! only copy, fill a Python mapping or list, grow a collection pass by
//! pass, or step over an array's axes. The loop rules (`loops`) leave them
//! alone.

use gpulens_syntax::Node;
use gpulens_syntax::NodeExt;

use super::loop_headers::{enumerate_element, range_header};

/// Whether the loop at `node` with index `var` runs over an array's axes:
/// its `range` stops at `x.ndim` or `len(x.shape)`, or its body uses the
/// index as an axis (`x.shape[var]`, `x.strides[var]`, `axis=var`).
pub(super) fn over_axes(module: &crate::Module<'_>, node: Node<'_>, var: &str) -> bool {
    let stop = range_header(module, node).and_then(|(_, args)| match args.as_slice() {
        [stop] | [_, stop] | [_, stop, _] => Some(module.compact_text(*stop)),
        _ => None,
    });
    if stop.is_some_and(|s| s.ends_with(".ndim") || (s.starts_with("len(") && s.ends_with(".shape)"))) {
        return true;
    }
    let Some(body) = node.field("body") else { return false };
    module.preorder(body).any(|n| match n.kind_name() {
        "subscript" => {
            n.field("value").is_some_and(|v| {
                v.kind_name() == "attribute" && v.field("attribute").is_some_and(|a| matches!(module.text_of(a), "shape" | "strides"))
            }) && n.field("subscript").is_some_and(|i| i.kind_name() == "identifier" && module.text_of(i) == var)
        }
        "keyword_argument" => {
            n.field("name").is_some_and(|k| module.text_of(k) == "axis")
                && n.field("value").is_some_and(|v| v.kind_name() == "identifier" && module.text_of(v) == var)
        }
        _ => false,
    })
}

/// Whether `name` holds a Python mapping or list where it is used: its
/// value is a dict or list display or comprehension, a repeated list
/// (`[0] * n`), or a call of `dict`, `defaultdict`, `OrderedDict` or
/// `Counter`. Its entries are Python objects, which no kernel writes.
pub(super) fn python_container(module: &crate::Module<'_>, name: Node<'_>, scope: usize) -> bool {
    if name.kind_name() != "identifier" {
        return false;
    }
    let Some(value) = module.assigned_from(name, scope) else { return false };
    match value.kind_name() {
        "dictionary" | "dictionary_comprehension" | "list" | "list_comprehension" => true,
        // `[0] * n`: a list of n copies.
        "binary_operator" => value.field("left").is_some_and(|l| l.kind_name() == "list") || value.field("right").is_some_and(|r| r.kind_name() == "list"),
        "call" => value.field("function").is_some_and(|f| {
            let callee = module.text_of(f);
            matches!(callee.rsplit('.').next(), Some("dict" | "defaultdict" | "OrderedDict" | "Counter"))
        }),
        _ => false,
    }
}

/// Every statement of the loop's body (and of the `for` loops nested in it,
/// and of the `if`s without calls in their tests)
/// writes one array element with a constant (`out[i, j] = np.inf`), with
/// another array's element at the same index (`out[i, j] = cost[i, j]`), or
/// with the item the loop enumerates (`out[i] = item` in `for i, item in
/// enumerate(items)`: what `np.array(items)` or `np.stack` does), or with a
/// name the loops do not change (`out[i, i + k] = value`: a fill).
pub(super) fn copies_only(module: &crate::Module<'_>, node: Node<'_>) -> bool {
    let item = enumerate_element(module, node);
    // The names the loop and the loops nested in it bind (the body binds no
    // other: it only writes elements).
    let mut loop_names: Vec<&str> = Vec::new();
    for n in module.preorder(node).filter(|n| n.kind_name() == "for_statement") {
        if let Some(left) = n.field("left") {
            loop_names.extend(module.preorder(left).filter(|i| i.kind_name() == "identifier").map(|i| module.text_of(i)));
        }
    }
    let constant = |n: Node<'_>| match n.kind_name() {
        "integer" | "float" | "true" | "false" | "none" => true,
        "unary_operator" => n.named_child(0).is_some_and(|o| matches!(o.kind_name(), "integer" | "float")),
        // `np.inf`, `math.nan`.
        "attribute" => n.field("attribute").is_some_and(|a| matches!(module.text_of(a), "inf" | "nan" | "NaN" | "NAN" | "pi" | "e")),
        _ => false,
    };
    // Every index of a subscript (`a[i, j]` has two), as written.
    let index_of = |n: Node<'_>| {
        let mut cursor = n.walk();
        let all: Vec<String> = n.children_by_field_name("subscript", &mut cursor).map(|n| module.compact_text(n)).collect();
        all
    };
    let Some(body) = node.field("body") else { return false };
    let mut blocks = vec![body];
    let mut writes = 0;
    while let Some(block) = blocks.pop() {
        let mut cursor = block.walk();
        for statement in block.named_children(&mut cursor) {
            match statement.kind_name() {
                "comment" => {}
                "for_statement" => blocks.extend(statement.field("body")),
                // A copy or fill where a test of the elements holds (`if not
                // t[i, i]: t[i, i] = eps`): what a masked assignment does.
                // (A test that calls something computes.)
                "if_statement"
                    if statement.field("alternative").is_none()
                        && statement.field("condition").is_some_and(|c| !module.preorder(c).any(|n| n.kind_name() == "call")) =>
                {
                    blocks.extend(statement.field("consequence"))
                }
                "expression_statement" => {
                    let Some(assignment) = statement.named_child(0).filter(|a| a.kind_name() == "assignment") else { return false };
                    let (Some(left), Some(right)) = (assignment.field("left"), assignment.field("right")) else { return false };
                    if left.kind_name() != "subscript" {
                        return false;
                    }
                    let same_place = right.kind_name() == "subscript"
                        && index_of(right) == index_of(left)
                        && right.field("value").zip(left.field("value")).is_some_and(|(a, b)| module.compact_text(a) != module.compact_text(b));
                    let the_item = right.kind_name() == "identifier" && Some(module.text_of(right)) == item;
                    let unchanged = right.kind_name() == "identifier" && !loop_names.contains(&module.text_of(right));
                    if !(constant(right) || same_place || the_item || unchanged) {
                        return false;
                    }
                    writes += 1;
                }
                _ => return false,
            }
        }
    }
    writes > 0
}

/// The array or container a subscript indexes, under any further
/// subscripts (`spans` in `spans[i][0]`).
pub(super) fn subscript_base(node: Node<'_>) -> Node<'_> {
    let mut base = node;
    while base.kind_name() == "subscript" {
        match base.field("value") {
            Some(v) => base = v,
            None => break,
        }
    }
    base
}

/// `call` is `items.append(...)` (or another method that adds or removes
/// entries) on a name the loop's body does not bind itself.
pub(super) fn grows_outer_collection(module: &crate::Module<'_>, call: Node<'_>, body: Node<'_>) -> bool {
    let Some(function) = call.field("function").filter(|f| f.kind_name() == "attribute") else { return false };
    let method = function.field("attribute").map_or("", |a| module.text_of(a));
    if !matches!(method, "append" | "extend" | "insert" | "pop" | "remove" | "add" | "discard" | "appendleft" | "popleft" | "clear") {
        return false;
    }
    let Some(object) = function.field("object").filter(|o| o.kind_name() == "identifier") else { return false };
    let name = module.text_of(object);
    // (Bound in the body: a pass's own list, e.g. `parts = []` then `parts.append(x)`.)
    !module.preorder(body).any(|n| {
        n.kind_name() == "assignment" && n.field("left").is_some_and(|l| l.kind_name() == "identifier" && module.text_of(l) == name)
    })
}
