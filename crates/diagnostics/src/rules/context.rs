//! What the function around a call says about its data, when the call's own
//! arguments don't: whether its arrays are small fixed-size structures
//! (geometry, components picked out one by one), and whether the function
//! draws a plot. Read from the function's own text and name and those of the
//! classes holding it, which the cache key of a function covers.

use gpulens_syntax::{preorder, Node};

use crate::Context;

/// Library calls that plot: the data behind a figure is small enough to draw,
/// and the time goes to the drawing.
pub(crate) const PLOTTING: &[&str] = &["matplotlib", "seaborn", "plotly", "bokeh", "altair"];

/// Words in a function's or class's name that mean geometry of a few
/// dimensions: rotations, quaternions, affine maps and homographies are 2×2
/// to 4×4 matrices, however many points they are later applied to.
const GEOMETRY: &[&str] = &["rotation", "rotate", "quaternion", "quat", "euler", "affine", "homograph", "angle_axis"];

/// The innermost function around `node`.
pub(crate) fn function_of(node: Node<'_>) -> Option<Node<'_>> {
    crate::fixes::enclosing_function(node)
}

/// Names of the function around `node` and of every function and class around that.
fn names_around<'t>(cx: &Context<'_, 't>, node: Node<'_>) -> Vec<&'t str> {
    let mut names = Vec::new();
    let mut current = node.parent();
    while let Some(n) = current {
        if matches!(n.kind(), "function_definition" | "class_definition") {
            if let Some(name) = n.child_by_field_name("name") {
                names.push(cx.module.text_of(name));
            }
        }
        current = n.parent();
    }
    names
}

/// The call sits in geometry code: a function or class named for rotations
/// and the like, or a class whose name says it is a transform (a geometric
/// one: `Transformer`s are scikit-learn's data transforms).
pub(crate) fn in_geometry(cx: &Context<'_, '_>, node: Node<'_>) -> bool {
    names_around(cx, node).iter().enumerate().any(|(i, name)| {
        let lower = name.to_ascii_lowercase();
        // scikit-learn's `transform`/`fit_transform` methods transform data, not space.
        let data_method = i == 0 && matches!(*name, "transform" | "fit_transform" | "inverse_transform" | "_transform");
        GEOMETRY.iter().any(|w| lower.contains(w))
            || (name.contains("Transform") && !name.contains("Transformer"))
            || (!data_method && lower.split('_').any(|w| matches!(w, "transform" | "trans" | "transformation")))
    })
}

/// Names geometry code gives its small matrices: `trans`, `affine`, `rot`, `quat`, ….
const GEOMETRY_OPERANDS: &[&str] = &[
    "trans", "transform", "transformation", "affine", "rotation", "rot", "quat", "quaternion", "homography", "pose",
];

/// `expr` names a geometric transform (`trans["trans"]`, `self.affine`, `rot`).
pub(crate) fn names_a_transform(cx: &Context<'_, '_>, expr: Node<'_>) -> bool {
    let text = cx.module.text_of(expr).to_ascii_lowercase();
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .flat_map(|w| w.split('_'))
        .any(|w| GEOMETRY_OPERANDS.contains(&w))
}

/// The function around `node` draws a plot (calls into a plotting library,
/// or onto axes and figures).
pub(crate) fn in_plotting_function(cx: &Context<'_, '_>, node: Node<'_>) -> bool {
    let Some(function) = function_of(node) else { return false };
    let module = cx.module;
    preorder(function).filter(|n| n.kind() == "call").any(|call| {
        let Some(callee) = call.child_by_field_name("function") else { return false };
        if let Some(name) = module.qualified_name(callee) {
            return PLOTTING.iter().any(|p| name == *p || name.starts_with(&format!("{p}.")));
        }
        // Methods of axes and figures: `ax.plot(...)`, `fig.savefig(...)`.
        let text = module.text_of(callee);
        let (object, method) = text.rsplit_once('.').unwrap_or(("", text));
        matches!(object, "ax" | "axes" | "fig" | "plt" | "axis")
            && matches!(method, "plot" | "scatter" | "bar" | "hist" | "imshow" | "set_xlabel" | "set_ylabel" | "set_title" | "savefig" | "legend" | "fill_between")
    })
}

/// `expr` (an argument, as written) is a small fixed-size structure in the
/// function around `node`: its shape is checked against small literal sizes
/// (`m.shape != (3, 3)`, `len(v) == 3`), or its elements are picked out one
/// by one with literal indices (`m[0, 1]`, or `q[0]` and `q[3]`), or what
/// `node`'s call returns is indexed at a fixed position (`U, S, V = svd(F);
/// S[2] = 0`).
pub(crate) fn small_structure(cx: &Context<'_, '_>, node: Node<'_>, expr: Node<'_>) -> bool {
    let Some(function) = function_of(node) else { return false };
    let module = cx.module;
    let operand = module.text_of(expr);
    let mut results: Vec<&str> = Vec::new();
    // What the call's result is assigned to: `x = f(...)`, `a, b = f(...)`.
    if let Some(parent) = node.parent().filter(|p| p.kind() == "assignment") {
        if let Some(left) = parent.child_by_field_name("left") {
            if left.kind() == "identifier" {
                results.push(module.text_of(left));
            } else if matches!(left.kind(), "pattern_list" | "tuple_pattern") {
                let mut cursor = left.walk();
                results.extend(left.named_children(&mut cursor).filter(|n| n.kind() == "identifier").map(|n| module.text_of(n)));
            }
        }
    }
    let mut picked: Vec<(&str, &str)> = Vec::new();
    for n in preorder(function) {
        match n.kind() {
            "subscript" => {
                let (Some(value), Some(index)) = (n.child_by_field_name("value"), n.child_by_field_name("subscript")) else {
                    continue;
                };
                let target = module.text_of(value);
                if target != operand && !results.contains(&target) {
                    continue;
                }
                if let Some(literal) = literal_index(module.text_of(index)) {
                    if literal.contains(',') {
                        return true; // `m[0, 1]`: one element of a matrix
                    }
                    // A decomposition's output indexed at a fixed position past the first two.
                    if results.contains(&target) && literal.parse::<u8>().is_ok_and(|i| i >= 2) {
                        return true;
                    }
                    if !picked.iter().any(|(t, l)| *t == target && *l == literal) {
                        picked.push((target, literal));
                    }
                    // Two or more components of the same array, one of them past the first.
                    let components = picked.iter().filter(|(t, _)| *t == target).count();
                    if components >= 2 && picked.iter().any(|(t, l)| *t == target && *l != "0") {
                        return true;
                    }
                }
            }
            "comparison_operator" => {
                let text = module.text_of(n);
                if small_shape_check(text, operand) {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// The subscript's index when it is one or more small non-negative integer
/// literals (`2`, `0, 1`), as written without spaces.
fn literal_index(index: &str) -> Option<&str> {
    let parts: Vec<&str> = index.split(',').map(str::trim).collect();
    let small = |p: &str| p.len() == 1 && p.as_bytes()[0].is_ascii_digit();
    (parts.iter().all(|p| small(p)) && parts.len() <= 3).then_some(index)
}

/// `x.shape == (3, 3)`, `x.shape != (4,)`, `len(x) == 3`, `x.shape[-1] == 2`:
/// a check that `operand` has a few elements per dimension.
fn small_shape_check(text: &str, operand: &str) -> bool {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let operand: String = operand.chars().filter(|c| !c.is_whitespace()).collect();
    let Some((left, right)) = compact.split_once("==").or_else(|| compact.split_once("!=")) else { return false };
    let (subject, size) = if left.contains(&operand) { (left, right) } else if right.contains(&operand) { (right, left) } else { return false };
    let about_shape = subject == format!("{operand}.shape")
        || subject == format!("len({operand})")
        || subject.starts_with(&format!("{operand}.shape["));
    let numbers: Vec<&str> = size.trim_matches(|c| c == '(' || c == ')' || c == '[' || c == ']').split(',').filter(|p| !p.is_empty()).collect();
    about_shape && !numbers.is_empty() && numbers.iter().all(|n| n.parse::<u32>().is_ok_and(|v| v <= 4))
}

/// The model or index that `call` constructs gets no work in this function:
/// it is returned for the caller to configure and use (a factory), loaded
/// from a file (`index.load(path)`: nothing is built), or stored on `self`
/// for another method (where the `models` rule speaks if it is fitted or
/// searched there). The time is spent elsewhere, or not at all.
pub(crate) fn built_for_elsewhere(cx: &Context<'_, '_>, call: Node<'_>) -> bool {
    let module = cx.module;
    let Some(parent) = call.parent() else { return false };
    if parent.kind() == "return_statement" {
        return true;
    }
    if parent.kind() != "assignment" || parent.child_by_field_name("right") != Some(call) {
        return false;
    }
    let Some(left) = parent.child_by_field_name("left").filter(|l| matches!(l.kind(), "identifier" | "attribute")) else {
        return false;
    };
    let Some(function) = function_of(call) else { return false };
    let target = module.text_of(left);
    let mut methods = Vec::new();
    let mut other_use = false;
    for n in preorder(function) {
        if n.kind() != left.kind() || n.id() == left.id() || module.text_of(n) != target {
            continue;
        }
        let method = n
            .parent()
            .filter(|p| p.kind() == "attribute" && p.child_by_field_name("object") == Some(n))
            .and_then(|p| p.child_by_field_name("attribute"))
            .map(|a| module.text_of(a));
        match method {
            Some(m) => methods.push(m),
            None => other_use = true,
        }
    }
    let loaded = methods.iter().any(|m| m.starts_with("load") || m.starts_with("read") || *m == "deserialize");
    let worked = methods.iter().any(|m| super::MODEL_WORK.contains(m));
    if loaded {
        return !worked;
    }
    left.kind() == "attribute" && target.starts_with("self.") && methods.is_empty() && !other_use
}
