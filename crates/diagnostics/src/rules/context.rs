//! What the function around a call says about its data, when the call's own
//! arguments don't: whether its arrays are small fixed-size structures
//! (geometry, components picked out one by one), and whether the function
//! draws a plot. Read from the function's own text and name and those of the
//! classes holding it, which the cache key of a function covers.

use gpulens_syntax::NodeExt;
use gpulens_syntax::Node;

use crate::{Context, Module};

/// Library calls that plot: the data behind a figure is small enough to draw,
/// and the time goes to the drawing. (A judgement of this analysis, which
/// imports mean drawing, not a fact of these libraries' API: it stays here,
/// not in the knowledge base.)
pub(crate) const PLOTTING: &[&str] = &["matplotlib", "seaborn", "plotly", "bokeh", "altair"];

/// Words in a function's or class's name that mean geometry of a few
/// dimensions: rotations, quaternions, affine maps and homographies are 2×2
/// to 4×4 matrices, however many points they are later applied to.
const GEOMETRY: &[&str] = &["rotation", "rotate", "quaternion", "quat", "euler", "affine", "homograph", "angle_axis"];

/// The innermost function around `node`.
pub(crate) fn function_of<'t>(module: &Module<'t>, node: Node<'t>) -> Option<Node<'t>> {
    module.enclosing_function(node)
}

/// Names of the function around `node` and of every function and class around that.
fn names_around<'t>(cx: &Context<'_, 't>, node: Node<'t>) -> Vec<&'t str> {
    let mut names = Vec::new();
    for n in cx.module.ancestors(node) {
        if matches!(n.kind_name(), "function_definition" | "class_definition") {
            if let Some(name) = n.field("name") {
                names.push(cx.module.text_of(name));
            }
        }
    }
    names
}

/// The call sits in geometry code: a function or class named for rotations,
/// quaternions, Euler angles, affine maps or homographies, words that name
/// matrices of 2×2 to 4×4 and nothing else. A function or class is not
/// geometry for being named "transform…": data is transformed as often as
/// space (`transform_counts` as often as `transform_points`, a
/// `ProjectiveTransform` as often as a `FunctionTransformer`), and what it
/// works on has to say how big it is.
pub(crate) fn in_geometry<'t>(cx: &Context<'_, 't>, node: Node<'t>) -> bool {
    names_around(cx, node).iter().any(|name| {
        let lower = name.to_ascii_lowercase();
        // Whole words or their starts (`quat` in `quat_mul`, `Quaternion`; not in `equations`).
        words(name).iter().any(|word| GEOMETRY.iter().any(|w| word.starts_with(w))) || lower.contains("angle_axis")
    })
}

/// The words of an identifier, lower-cased: split at underscores and at
/// lower-to-upper case changes (`RotationSequence3D` → rotation, sequence3d).
fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in name.split('_').filter(|p| !p.is_empty()) {
        let mut word = String::new();
        let mut previous_lower = false;
        for c in part.chars() {
            if c.is_ascii_uppercase() && previous_lower && !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
            word.push(c.to_ascii_lowercase());
        }
        out.push(word);
    }
    out
}

/// Names geometry code gives its small matrices: `affine`, `rot`, `quat`, ….
/// (Not `trans` or `transform`: transactions and fitted data transforms
/// are called so too.)
const GEOMETRY_OPERANDS: &[&str] = &["translation", "affine", "rotation", "rot", "quat", "quaternion", "homography", "pose"];

/// `expr` names a geometric object (`self.affine`, `rot`, `quat`).
pub(crate) fn names_a_transform(cx: &Context<'_, '_>, expr: Node<'_>) -> bool {
    let text = cx.module.text_of(expr).to_ascii_lowercase();
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .flat_map(|w| w.split('_'))
        .any(|w| GEOMETRY_OPERANDS.contains(&w))
}

/// The names code conventionally gives axes and figures (`ax.plot(...)`).
const FIGURES: &[&str] = &["ax", "axes", "fig", "plt", "axis"];

/// The function around `node` draws a plot (calls into a plotting library,
/// or onto axes and figures), or it is a method of a class another of whose
/// methods draws (a plotter's fit computes what gets drawn).
pub(crate) fn in_plotting_function<'t>(cx: &Context<'_, 't>, node: Node<'t>) -> bool {
    let module = cx.module;
    // It, or a function it is nested in (whose work it is), draws.
    let mut function = function_of(module, node);
    let mut outermost = None;
    while let Some(f) = function {
        if draws(module, f) {
            return true;
        }
        outermost = Some(f);
        function = module.enclosing_function(f);
    }
    let Some(function) = outermost else { return false };
    let Some((class, _)) = module.method_class(function) else { return false };
    module.answer_once(class, "has a method that draws", || {
        let Some(body) = class.field("body") else { return false };
        let mut cursor = body.walk();
        let methods: Vec<Node<'t>> = body
            .named_children(&mut cursor)
            .map(|m| if m.kind_name() == "decorated_definition" { m.field("definition").unwrap_or(m) } else { m })
            .filter(|m| m.kind_name() == "function_definition" && m.id() != function.id())
            .collect();
        methods.into_iter().any(|m| draws(module, m))
    })
}

/// `function` calls into a plotting library, or onto axes and figures.
fn draws<'t>(module: &Module<'t>, function: Node<'t>) -> bool {
    module.answer_once(function, "plots", || {
        // Only a name imported from a plotting library (or naming axes and
        // figures) can make such a call: most functions name none.
        let plotting = |target: &str| PLOTTING.iter().any(|p| crate::semantic::within(target, p) || crate::semantic::within(p, target));
        let may_plot = module.facts_of(function).identifiers.iter().any(|r| {
            let name = &module.text[r.clone()];
            FIGURES.contains(&name) || module.imports_name_as(name, plotting)
        });
        if !may_plot {
            return false;
        }
        module.preorder(function).filter(|n| n.kind_name() == "call").any(|call| {
            let Some(callee) = call.field("function") else { return false };
            if let Some(name) = module.qualified_name(callee) {
                return PLOTTING.iter().any(|p| crate::semantic::within(&name, p));
            }
            // Methods of axes and figures: `ax.plot(...)`, `fig.savefig(...)`.
            let text = module.text_of(callee);
            let (object, method) = text.rsplit_once('.').unwrap_or(("", text));
            FIGURES.contains(&object) && DRAWING_METHODS.contains(&method)
        })
    })
}

/// The methods of axes and figures that draw (or label what is drawn).
const DRAWING_METHODS: &[&str] =
    &["plot", "scatter", "bar", "hist", "imshow", "set_xlabel", "set_ylabel", "set_title", "savefig", "legend", "fill_between"];

/// The names `text`'s imports bind to plotting libraries (`plt`, `sns`),
/// read from its bytes; `None` where its imports can't be read so.
pub(crate) fn plotting_names(text: &str) -> Option<Vec<&str>> {
    let mut names = Vec::new();
    let read = crate::prescan::local_imports(text, &mut |name, target| {
        if PLOTTING.iter().any(|p| crate::semantic::within(&target, p)) {
            names.push(name);
        }
    });
    read.then_some(names)
}

/// Whether `code` (a function's text) may draw as [`draws`] reads it, from
/// its bytes: it names one of `plotting` (see [`plotting_names`]), or calls
/// a drawing method on a name for axes or figures (`ax.plot(`). A superset.
pub(crate) fn may_draw(code: &str, plotting: &[&str]) -> bool {
    let bytes = code.as_bytes();
    let mut found = false;
    gpulens_syntax::lex::for_each_name(code, |token| {
        if found {
            return;
        }
        if plotting.contains(&token) {
            found = true;
        } else if FIGURES.contains(&token) {
            let end = token.as_ptr() as usize - code.as_ptr() as usize + token.len();
            let rest = &bytes[end..];
            let after_dot = rest.iter().position(|b| !b.is_ascii_whitespace()).filter(|&i| rest[i] == b'.').map(|i| &code[end + i + 1..]);
            if let Some(after) = after_dot {
                let method = after.trim_start();
                let word = method.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("");
                found = DRAWING_METHODS.contains(&word);
            }
        }
    });
    found
}

/// The half of [`may_draw`] that needs no plotting names: `code` calls a
/// drawing method on a name for axes or figures (`ax.plot(`). With it, a
/// text's identifiers decide the other half (the editor's plan keeps both
/// per function text).
pub(crate) fn draws_on_figures(code: &str) -> bool {
    may_draw(code, &[])
}

/// `expr` (an argument, as written) is a small fixed-size structure in the
/// function around `node`: its shape is checked against small literal sizes
/// (`m.shape != (3, 3)`, `len(v) == 3`), or its elements are picked out one
/// by one with literal indices (`m[0, 1]`, or `q[0]` and `q[3]`), or what
/// `node`'s call returns is indexed at a fixed position (`U, S, V = svd(F);
/// S[2] = 0`).
pub(crate) fn small_structure<'t>(cx: &Context<'_, 't>, node: Node<'t>, expr: Node<'t>) -> bool {
    small_structure_named(cx, node, cx.module.text_of(expr))
}

/// [`small_structure`] for an operand given by its text (`m`, `self.m`).
fn small_structure_named<'t>(cx: &Context<'_, 't>, node: Node<'t>, operand: &str) -> bool {
    let Some(function) = function_of(cx.module, node) else { return false };
    let module = cx.module;
    let mut results: Vec<&str> = Vec::new();
    // What the call's result is assigned to: `x = f(...)`, `a, b = f(...)`.
    if let Some(parent) = module.parent(node).filter(|p| p.kind_name() == "assignment") {
        if let Some(left) = parent.field("left") {
            if left.kind_name() == "identifier" {
                results.push(module.text_of(left));
            } else if matches!(left.kind_name(), "pattern_list" | "tuple_pattern") {
                let mut cursor = left.walk();
                results.extend(left.named_children(&mut cursor).filter(|n| n.kind_name() == "identifier").map(|n| module.text_of(n)));
            }
        }
    }
    let mut picked: Vec<(&str, &str)> = Vec::new();
    let facts = module.facts_of(function);
    for (value, index) in &facts.subscripts {
        let target = &module.text[value.clone()];
        if target != operand && !results.contains(&target) {
            continue;
        }
        let index_text = &module.text[index.clone()];
        // `m[:3, :3]` and `m[:3, 3]`: blocks of a few rows and columns, two
        // of them (one alone may be a glimpse of a large array).
        if let Some(block) = literal_block(index_text) {
            if !picked.iter().any(|(t, l)| *t == target && *l == block) {
                picked.push((target, block));
            }
            if picked.iter().filter(|(t, l)| *t == target && l.contains(':')).count() >= 2 {
                return true;
            }
            continue;
        }
        if let Some(literal) = literal_index(index_text) {
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
    if facts.comparisons.iter().any(|c| small_shape_check(&module.text[c.clone()], operand)) {
        return true;
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

/// The subscript's index when it takes a block of a matrix by one-digit
/// numbers, a slice among them (`:3, :3`, `0:3, 3`), as written.
fn literal_block(index: &str) -> Option<&str> {
    let parts: Vec<&str> = index.split(',').map(str::trim).collect();
    let digit = |p: &str| p.len() == 1 && p.as_bytes()[0].is_ascii_digit();
    let bound = |p: &str| {
        digit(p) || p.split_once(':').is_some_and(|(start, stop)| (start.is_empty() || digit(start.trim())) && digit(stop.trim()))
    };
    (parts.len() >= 2 && parts.len() <= 3 && parts.iter().all(|p| bound(p)) && parts.iter().any(|p| p.contains(':'))).then_some(index)
}

/// `x.shape == (3, 3)`, `x.shape != (4,)`, `len(x) == 3`, `x.shape[-1] == 2`:
/// a check that `operand` has a few elements per dimension.
fn small_shape_check(text: &str, operand: &str) -> bool {
    // (Without an `=`, no `==` or `!=` either, however it is spaced.)
    if !text.as_bytes().contains(&b'=') {
        return false;
    }
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
pub(crate) fn built_for_elsewhere<'t>(cx: &Context<'_, 't>, call: Node<'t>) -> bool {
    let module = cx.module;
    let Some(parent) = module.parent(call) else { return false };
    // Returned, or a parameter's default (`estimator=KMeans()`): fitted
    // where it is used.
    if matches!(parent.kind_name(), "return_statement" | "default_parameter" | "typed_default_parameter") {
        return true;
    }
    // `TSNE().get_params()`, `AnnoyIndex(f).load(path)`: built to be read or
    // configured, and no work is done on it.
    if super::method_on_result(cx, call).is_some_and(|m| !super::model_work().contains(m)) {
        return true;
    }
    if parent.kind_name() != "assignment" || parent.field("right") != Some(call) {
        return false;
    }
    let Some(left) = parent.field("left").filter(|l| matches!(l.kind_name(), "identifier" | "attribute")) else {
        return false;
    };
    let Some(function) = function_of(cx.module, call) else { return false };
    let target = module.text_of(left);
    let mut methods = Vec::new();
    let mut other_use = false;
    let mut returned = false;
    for n in module.preorder(function) {
        if n.kind_name() != left.kind_name() || n.id() == left.id() || module.text_of(n) != target {
            continue;
        }
        let method = module
            .parent(n)
            .filter(|p| p.kind_name() == "attribute" && p.field("object") == Some(n))
            .and_then(|p| p.field("attribute"))
            .map(|a| module.text_of(a));
        match method {
            Some(m) => methods.push(m),
            None if module.parent(n).is_some_and(|p| p.kind_name() == "return_statement") => returned = true,
            None => other_use = true,
        }
    }
    let loaded = methods.iter().any(|m| m.starts_with("load") || m.starts_with("read") || *m == "deserialize");
    let worked = methods.iter().any(|m| super::model_work().contains(m));
    if loaded || (returned && !other_use) {
        // Read from disk, or made (and perhaps configured) to be returned:
        // `t = TSNE(...); return t` is `return TSNE(...)`.
        return !worked;
    }
    left.kind_name() == "attribute" && target.starts_with("self.") && methods.is_empty() && !other_use
}

/// `node` sits in a function that Numba compiles for the CPU (`@njit`,
/// `@jit`, `@numba.jit(nopython=True)`): its loops are machine code already
/// and it cannot call CuPy, so CPU-candidate advice does not apply there.
/// (`@cuda.jit` kernels are the `GPU…` checks' business.)
pub(crate) fn in_cpu_jit<'t>(cx: &Context<'_, 't>, node: Node<'t>) -> bool {
    cpu_jit_function(cx, node).is_some()
}

/// The `decorated_definition` of the function around `node` that Numba
/// compiles for the CPU, if there is one.
pub(crate) fn cpu_jit_function<'t>(cx: &Context<'_, 't>, node: Node<'t>) -> Option<Node<'t>> {
    let module = cx.module;
    module.ancestors(node).find(|n| {
        // (Inside the function: its decorators, `@njit(parallel=True)`
        // itself, are ordinary Python run once.)
        let body = n.field("definition").filter(|d| d.kind_name() == "function_definition" && d.start_byte() <= node.start_byte());
        n.kind_name() == "decorated_definition" && body.is_some() && cpu_jit_decorated(cx, *n)
    })
}

/// A decorated definition whose decorators compile it with Numba for the CPU:
/// Numba's own, or a project's wrapper of it (`from ._numba import jit`).
pub(crate) fn cpu_jit_decorated(cx: &Context<'_, '_>, decorated: Node<'_>) -> bool {
    let module = cx.module;
    module.decorators(decorated).iter().any(|(decorator, name)| {
        // (The decorator's expression, not its line: a comment may follow it.)
        let expr = decorator.named_child(0);
        let callee = expr.and_then(|e| if e.kind_name() == "call" { e.field("function") } else { Some(e) });
        let callee = callee.map_or("", |c| module.text_of(c));
        let name = name.as_deref().unwrap_or(callee);
        !name.contains("cuda") && matches!(name.rsplit('.').next(), Some("jit" | "njit" | "generated_jit"))
    })
}

/// A module-level function of this name that Numba compiles for the CPU:
/// a kernel may call it (it becomes a device function).
pub(crate) fn cpu_jit_helper(cx: &Context<'_, '_>, name: &str) -> bool {
    cx.module.decorated.iter().any(|d| {
        d.field("definition")
            .filter(|f| f.kind_name() == "function_definition")
            .and_then(|f| f.field("name"))
            .is_some_and(|n| cx.module.text_of(n) == name)
            && cpu_jit_decorated(cx, *d)
    })
}

/// `expr` is a Python function: a lambda, a `def` of the function around
/// `node` or of the module, or a function imported by name
/// (`from numpy import nanmedian`). GPU libraries cannot run Python
/// functions: CuPy wants kernels, nx-cugraph attribute names, cuDF
/// functions Numba can compile.
pub(crate) fn python_callable<'t>(cx: &Context<'_, 't>, node: Node<'t>, expr: Node<'t>) -> bool {
    let module = cx.module;
    match expr.kind_name() {
        "lambda" => true,
        // `self.distance` where the class defines `def distance(...)`.
        "attribute" => {
            let (Some(object), Some(attribute)) = (expr.field("object"), expr.field("attribute")) else {
                return false;
            };
            matches!(module.text_of(object), "self" | "cls") && defines_method(module, node, module.text_of(attribute))
        }
        "identifier" => {
            let name = module.text_of(expr);
            let nested =
                || function_of(cx.module, node).is_some_and(|f| module.facts_of(f).definitions.iter().any(|d| &module.text[d.clone()] == name));
            let imported = || {
                module.import_at(name, expr.start_byte()).is_some_and(|target| {
                    target.contains('.') && target.rsplit('.').next().is_some_and(|last| last.starts_with(|c: char| c.is_ascii_lowercase()))
                })
            };
            // A parameter or variable of the function around hides the
            // module's import or definition of that name.
            let local = || function_of(cx.module, node).is_some_and(|f| module.binds_locally(f.id(), name));
            nested()
                || (!local()
                    && (imported()
                        || (module.defined_at_module_level(name)
                            && !module.assigned_at_module_level(name)
                            && name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_'))))
        }
        _ => false,
    }
}

/// The class around the method holding `node` defines a method `name`
/// (not a property, which gives a value). Read from the text at the
/// method's indentation, so a method the pre-scan left out counts too.
fn defines_method<'t>(module: &Module<'t>, node: Node<'t>, name: &str) -> bool {
    let Some(method) = function_of(module, node) else { return false };
    let method = module.parent(method).filter(|p| p.kind_name() == "decorated_definition").unwrap_or(method);
    let Some(class) = module.parent(method).filter(|b| b.kind_name() == "block").and_then(|b| module.parent(b)) else { return false };
    if class.kind_name() != "class_definition" {
        return false;
    }
    // A class with syntax errors: its lines may not say what its tree does
    // (`)@property` is a decorator to tree-sitter, not to a reading of lines),
    // so any name may be a method, and no advice rests on it not being one.
    if class.has_error() {
        return true;
    }
    // The indentation of the line the class starts on: the column its body
    // is read against. (Its node's own column differs only where code
    // precedes it on that line, a syntax error; reading the node's column
    // there would make this answer depend on text outside every key.)
    let class_column = crate::source::indentation_at(module.text, class.start_byte()).len();
    let column = method.start_position().column;
    let text = module.text;
    let methods = module.class_methods(class, column, || {
        let body_start = text[class.start_byte()..].find('\n').map_or(text.len(), |i| class.start_byte() + i + 1);
        let mut found = Vec::new();
        let mut decorators_say_property = false;
        for line in text[body_start..].lines() {
            let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
            let code = &line[indent..];
            if code.is_empty() || code.starts_with('#') {
                continue;
            }
            if indent <= class_column {
                break;
            }
            if indent != column {
                continue;
            }
            if let Some(decorator) = code.strip_prefix('@') {
                decorators_say_property |= decorator.contains("property");
                continue;
            }
            let header = code.strip_prefix("async ").unwrap_or(code);
            if let Some(rest) = header.strip_prefix("def ").map(str::trim_start) {
                let name = &rest[..rest.find(|c: char| c.is_whitespace() || c == '(' || c == '[').unwrap_or(rest.len())];
                let after = rest[name.len()..].trim_start();
                if !name.is_empty() && after.starts_with(['(', '[']) && !decorators_say_property {
                    let at = name.as_ptr() as usize - text.as_ptr() as usize;
                    found.push(at..at + name.len());
                }
            }
            decorators_say_property = false;
        }
        found
    });
    let defined = methods.iter().any(|r| &text[r.clone()] == name);
    defined
}

/// Any argument of `call` (positional or by keyword) is a Python function.
pub(crate) fn takes_python_callable<'t>(cx: &Context<'_, 't>, call: Node<'t>) -> bool {
    let Some(args) = call.field("arguments") else { return false };
    let mut cursor = args.walk();
    let found = args.named_children(&mut cursor).any(|a| {
        let a = if a.kind_name() == "keyword_argument" { a.field("value") } else { Some(a) };
        a.is_some_and(|a| {
            python_callable(cx, call, a)
                // Among several (`agg([lambda x: ..., "sum"])`, `agg({"v": f})`).
                || (matches!(a.kind_name(), "list" | "tuple" | "dictionary") && {
                    let mut inner = a.walk();
                    let items: Vec<Node<'t>> = a.named_children(&mut inner).collect();
                    items.into_iter().any(|item| {
                        let item = if item.kind_name() == "pair" { item.field("value") } else { Some(item) };
                        item.is_some_and(|item| python_callable(cx, call, item))
                    })
                })
        })
    });
    found
}

/// Python builtins that turn an array into Python objects, one per element.
const TO_PYTHON: &[&str] = &["list", "sorted", "set", "tuple", "enumerate", "Counter", "frozenset", "dict"];

/// What `call` returns becomes Python objects, one per element: iterated by
/// a `for` (or `range(len(...))`), passed to `list`/`sorted`/`set`/…, or
/// converted with `.tolist()`. Code that does that keeps few elements (the
/// classes of a label vector, a handful of eigenvalues): converting many
/// would cost more than computing them. Where the result is as large as
/// the input (`same_size`: an element-wise call, a random draw), its truth
/// deciding a branch says the same (see [`decides_a_branch`]).
pub(crate) fn result_to_python<'t>(cx: &Context<'_, 't>, call: Node<'t>, same_size: bool) -> bool {
    let module = cx.module;
    let consumed_by_python = |module: &Module<'t>, n: Node<'t>| {
        consumed_by_python(module, n) || (same_size && (decides_a_branch(module, n) || beside_a_number(module, n)))
    };
    if consumed_by_python(module, call) {
        return true;
    }
    // `u = np.unique(y)`, then `for c in u` / `sorted(u)` / `range(len(u))`.
    let Some(parent) = module.parent(call).filter(|p| p.kind_name() == "assignment") else { return false };
    let Some(left) = parent.field("left").filter(|l| l.kind_name() == "identifier") else { return false };
    let Some(function) = function_of(cx.module, call) else { return false };
    let name = module.text_of(left);
    later_uses(module, function, name, call).any(|n| consumed_by_python(module, n))
}

/// The identifiers `name` in `function` after `call` (the function's
/// identifiers are read once per analysis: see `Module::facts_of`).
pub(super) fn later_uses<'a>(module: &crate::Module<'_>, function: Node<'a>, name: &str, call: Node<'_>) -> impl Iterator<Item = Node<'a>> {
    let facts = module.facts_of(function);
    let at: Vec<std::ops::Range<usize>> = facts
        .identifiers
        .iter()
        .filter(|r| r.start > call.start_byte() && &module.text[(*r).clone()] == name)
        .cloned()
        .collect();
    at.into_iter().filter_map(move |r| function.descendant_for_byte_range(r.start, r.end).filter(|n| n.kind_name() == "identifier"))
}

/// `expr` is an element of a list or tuple that also holds a number written
/// out (`np.diag([c, c, c, 1.0])`, `(x, 0)`): beside a number, an element is
/// one number too (NumPy refuses a ragged array; nothing else is written so).
fn beside_a_number<'t>(module: &Module<'t>, expr: Node<'t>) -> bool {
    let Some(parent) = module.parent(expr).filter(|p| matches!(p.kind_name(), "list" | "tuple")) else { return false };
    let number = |n: Node<'_>| match n.kind_name() {
        "integer" | "float" => true,
        "unary_operator" => n.field("argument").is_some_and(|a| matches!(a.kind_name(), "integer" | "float")),
        _ => false,
    };
    let mut cursor = parent.walk();
    let found = parent.named_children(&mut cursor).any(|c| c.id() != expr.id() && number(c));
    found
}

fn consumed_by_python<'t>(module: &Module<'t>, expr: Node<'t>) -> bool {
    let Some(parent) = module.parent(expr) else { return false };
    match parent.kind_name() {
        "for_statement" | "for_in_clause" => parent.field("right") == Some(expr),
        "attribute" => {
            parent.field("object") == Some(expr)
                && parent.field("attribute").is_some_and(|a| module.text_of(a) == "tolist")
        }
        "argument_list" => {
            let Some(call) = module.parent(parent).filter(|c| c.kind_name() == "call") else { return false };
            let callee = call.field("function").map_or("", |f| module.text_of(f));
            if TO_PYTHON.contains(&callee) {
                return true;
            }
            // `range(len(u))`: an index loop over the elements.
            callee == "len"
                && module
                    .parent(call)
                    .filter(|p| p.kind_name() == "argument_list")
                    .and_then(|p| module.parent(p))
                    .and_then(|c| c.field("function"))
                    .is_some_and(|f| module.text_of(f) == "range")
        }
        _ => false,
    }
}

/// `expr`'s truth decides a branch (`if p >= threshold:`, `while err > tol`,
/// `x if p else y`, `assert p`), alone or compared by value: NumPy refuses
/// the truth of an array of more than one element, so the value is one
/// number. (`is` and `in` compare no elements: `if x is None` says nothing.)
fn decides_a_branch<'t>(module: &Module<'t>, expr: Node<'t>) -> bool {
    let mut current = expr;
    while let Some(parent) = module.parent(current) {
        match parent.kind_name() {
            "parenthesized_expression" | "not_operator" | "boolean_operator" => {}
            "comparison_operator" => {
                let mut cursor = parent.walk();
                let by_identity = parent.children(&mut cursor).any(|c| !c.is_named() && matches!(module.text_of(c), "is" | "in" | "not"));
                if by_identity {
                    return false;
                }
            }
            "if_statement" | "elif_clause" | "while_statement" => return parent.field("condition") == Some(current),
            "assert_statement" => return parent.named_child(0) == Some(current),
            "conditional_expression" => return parent.named_child(1) == Some(current),
            _ => return false,
        }
        current = parent;
    }
    false
}

/// The array an operand is a view or copy of: `m` in `m.T`, `m[:, 3]`,
/// `m[0]`, `m.copy()`, `m.real`.
fn base_array<'a>(expr: Node<'a>, module: &crate::Module<'_>) -> Node<'a> {
    let mut current = expr;
    for _ in 0..8 {
        let next = match current.kind_name() {
            "subscript" => current.field("value"),
            "attribute" => current
                .field("attribute")
                .filter(|a| matches!(module.text_of(*a), "T" | "real" | "imag"))
                .and_then(|_| current.field("object")),
            "call" => current
                .field("function")
                .filter(|f| f.kind_name() == "attribute")
                .filter(|f| f.field("attribute").is_some_and(|a| matches!(module.text_of(a), "copy" | "astype" | "ravel")))
                .and_then(|f| f.field("object")),
            _ => None,
        };
        match next {
            Some(n) => current = n,
            None => break,
        }
    }
    current
}

/// `x.T @ y`, `np.dot(x.T, y)`, `x.T.dot(y)`: a product over the rows of
/// data-shaped arrays, whose result is columns × columns (features,
/// coordinates, regressors): a handful to a few hundred a side. So is a
/// covariance or correlation matrix of data's variables (`np.cov(x, y)`,
/// `np.corrcoef(data, rowvar=False)`, a table's `.cov()` or `.corr()`):
/// the observations are summed away.
fn column_product(text: &str) -> bool {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if compact.contains(".T@") || compact.contains(".T.dot(") {
        return true;
    }
    if ["np.cov(", "numpy.cov(", "np.corrcoef(", "numpy.corrcoef(", ".cov()", ".corr()"].iter().any(|c| compact.contains(c)) {
        return true;
    }
    compact.match_indices("dot(").any(|(i, _)| {
        let rest = &compact[i + 4..];
        rest.split(',').next().is_some_and(|first| first.ends_with(".T") && !first.contains('('))
    })
}

/// `expr` (an argument of the call at `node`, as written) is a small matrix
/// by what the function shows about it: a view of an array whose components
/// are picked out one by one (`m[3, 3]`; `p = m.copy()`), a product over the
/// rows of data (`x.T @ x`: columns × columns), or what a linear-algebra
/// routine returns for one (`np.linalg.eigvalsh(x.T @ x)`).
pub(crate) fn small_matrix<'t>(cx: &Context<'_, 't>, node: Node<'t>, scope: usize, expr: Node<'t>) -> bool {
    let module = cx.module;
    if column_product(module.text_of(expr)) {
        return true;
    }
    let base = base_array(expr, module);
    if base.id() != expr.id() && small_structure(cx, node, base) {
        return true;
    }
    if base.kind_name() != "identifier" {
        return false;
    }
    let defined = module.defining_text(base, scope);
    if std::ptr::eq(defined, module.text_of(base)) || defined == module.text_of(base) {
        return false;
    }
    if column_product(defined) {
        return true;
    }
    // An alias: `p = m.copy()`, `row = m[:3, :3]`.
    let prefix_len = defined.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.')).unwrap_or(defined.len());
    let prefix = defined[..prefix_len].trim_end_matches(".copy").trim_end_matches(".T");
    !prefix.is_empty()
        && prefix != module.text_of(base)
        && !prefix.contains("np.")
        && matches!(defined[prefix_len..].chars().next(), Some('[' | '(') | None)
        && small_structure_named(cx, node, prefix)
}

/// `call` runs inside a loop that feeds on its own earlier results: an
/// argument reads an array that the loop writes, at another index than the
/// one it writes (`phis[i] += np.dot(phis[i - j], a[j])`; `prior = out[h - 2]`
/// then `np.dot(coef, prior)`). Each step waits for the last, so the work per
/// step is one small slice: a recurrence, not data-parallel work.
pub(crate) fn in_recurrence<'t>(cx: &Context<'_, 't>, call: Node<'t>, scope: usize) -> bool {
    let module = cx.module;
    let Some(args) = call.field("arguments") else { return false };
    for n in module.ancestors(call) {
        if matches!(n.kind_name(), "function_definition" | "class_definition") {
            break;
        }
        if n.kind_name() != "for_statement" {
            continue;
        }
        let Some(body) = n.field("body") else { continue };
        // (array, index) of the element writes in the loop.
        let mut written: Vec<(String, String)> = Vec::new();
        for w in module.preorder(body).filter(|w| matches!(w.kind_name(), "assignment" | "augmented_assignment")) {
            let Some(left) = w.field("left").filter(|l| l.kind_name() == "subscript") else { continue };
            let (Some(array), Some(index)) = (left.field("value"), left.field("subscript")) else { continue };
            written.push((module.compact_text(array), module.compact_text(index)));
        }
        if written.is_empty() {
            continue;
        }
        let earlier = |array: &str, index: &str| written.iter().any(|(a, _)| a == array) && !written.iter().any(|(a, i)| a == array && i == index);
        let reads_earlier = module.preorder(args).any(|a| match a.kind_name() {
            "subscript" => {
                let (Some(array), Some(index)) = (a.field("value"), a.field("subscript")) else { return false };
                earlier(&module.compact_text(array), &module.compact_text(index))
            }
            // `prior = out[h - 2]`, then the call reads `prior`.
            "identifier" => {
                // The whole of an array the loop updates element by element
                // (`points[unvisited]` while the loop sets `unvisited[k] = False`):
                // each pass reads what the passes before it decided.
                let name = module.text_of(a);
                let whole = !module.parent(a).is_some_and(|p| p.kind_name() == "subscript" && p.field("value") == Some(a));
                if whole && written.iter().any(|(array, _)| array == name) {
                    return true;
                }
                let defined: String = module.defining_text(a, scope).split_whitespace().collect();
                defined.split_once('[').is_some_and(|(array, rest)| {
                    rest.strip_suffix(']').is_some_and(|index| !index.contains(']') && earlier(array, index))
                })
            }
            _ => false,
        });
        if reads_earlier {
            return true;
        }
    }
    false
}

/// The function around `node` is a unit conversion, named `<unit>_to_<unit>`
/// (`hz_to_mel`, `deg_to_rad`): one formula applied to what it is given,
/// typically a few values or a scalar. Whether moving data to the GPU pays
/// is decided where the data lives, by its callers, not in the formula.
pub(crate) fn in_conversion<'t>(cx: &Context<'_, 't>, node: Node<'t>) -> bool {
    let Some(function) = function_of(cx.module, node) else { return false };
    let Some(name) = function.field("name") else { return false };
    let words = words(cx.module.text_of(name));
    words.len() >= 3 && words[1..words.len() - 1].iter().any(|w| w == "to")
}

/// The function around `node` takes only numbers and returns a number, by
/// its annotations (`def f(n: int, rate: float) -> float`): a scalar
/// function, evaluated once per value by its callers (a root finder, an
/// integrator, a loop). The arrays it builds come from a few numbers.
pub(crate) fn in_scalar_function<'t>(cx: &Context<'_, 't>, node: Node<'t>) -> bool {
    let module = cx.module;
    let Some(function) = function_of(cx.module, node) else { return false };
    let scalar = |ty: Option<Node<'_>>| {
        ty.is_some_and(|t| matches!(module.text_of(t).trim(), "int" | "float" | "bool" | "complex"))
    };
    if !scalar(function.field("return_type")) {
        return false;
    }
    let Some(parameters) = function.field("parameters") else { return false };
    let mut cursor = parameters.walk();
    let all: Vec<Node<'_>> = parameters.named_children(&mut cursor).filter(|p| p.kind_name() != "comment").collect();
    !all.is_empty()
        && all.iter().all(|p| match p.kind_name() {
            "typed_parameter" | "typed_default_parameter" => scalar(p.field("type")),
            _ => false,
        })
}

/// `call`'s result, assigned to a name, is read only to decide whether to
/// raise an error (`diff = np.setdiff1d(idx, valid)`, then `if diff.size >
/// 0: raise ValueError(...)`, or an `assert`): input validation, which
/// works on what the caller gave once, not the function's work.
pub(crate) fn only_checked<'t>(module: &Module<'t>, call: Node<'t>) -> bool {
    let Some(assignment) = module.parent(call).filter(|p| p.kind_name() == "assignment" && p.field("right") == Some(call)) else {
        return false;
    };
    module.answer_once(call, "read only to raise", || assigned_only_to_raise(module, assignment, 0))
}

/// The name `assignment` binds is read, after it, only in checks that raise
/// ([`guards_a_raise`]), or to make another name read only so (`ordered =
/// np.sort(idx)`, then `assert np.all(np.diff(ordered) > 0)`).
fn assigned_only_to_raise<'t>(module: &Module<'t>, assignment: Node<'t>, depth: u32) -> bool {
    let Some(target) = assignment.field("left").filter(|l| l.kind_name() == "identifier") else { return false };
    let name = module.text_of(target);
    let Some(body) = module.enclosing_function(assignment).and_then(|f| f.field("body")) else { return false };
    let mut reads = 0;
    for n in module.preorder(body) {
        if n.kind_name() != "identifier" || module.text_of(n) != name || n.start_byte() <= assignment.end_byte() {
            continue;
        }
        reads += 1;
        if guards_a_raise(module, n) {
            continue;
        }
        // Read to make another value, itself read only to raise.
        let made = module
            .ancestors(n)
            .take_while(|a| !matches!(a.kind_name(), "block" | "function_definition" | "lambda"))
            .find(|a| a.kind_name() == "assignment");
        if depth < 3 && made.is_some_and(|m| m.field("right").is_some_and(|r| r.byte_range().contains(&n.start_byte())) && assigned_only_to_raise(module, m, depth + 1)) {
            continue;
        }
        return false;
    }
    reads > 0
}

/// `node` is inside an `assert`, a `raise`, or the condition of an `if`
/// (or `elif`) whose block starts by raising.
pub(crate) fn guards_a_raise(module: &Module<'_>, node: Node<'_>) -> bool {
    let mut child = node;
    for ancestor in module.ancestors(node) {
        match ancestor.kind_name() {
            "assert_statement" | "raise_statement" => return true,
            "if_statement" | "elif_clause" => {
                if ancestor.field("condition") != Some(child) {
                    return false;
                }
                let Some(block) = ancestor.field("consequence") else { return false };
                return block.named_child(0).is_some_and(|first| first.kind_name() == "raise_statement");
            }
            "function_definition" | "lambda" | "class_definition" | "expression_statement" | "assignment" | "return_statement"
            | "for_statement" | "while_statement" | "block" => return false,
            _ => child = ancestor,
        }
    }
    false
}

/// `call` is the one argument of `int(…)`, `float(…)` or `complex(…)`
/// (`n = int(np.round(f * n_nodes))`): its result is one number, so an
/// element-wise function's inputs were numbers too (those of an array of
/// more than one element raise there).
pub(crate) fn converted_to_a_number(module: &Module<'_>, call: Node<'_>) -> bool {
    let Some(arguments) = module.parent(call).filter(|p| p.kind_name() == "argument_list") else { return false };
    if arguments.named_child_count() != 1 {
        return false;
    }
    let Some(outer) = module.parent(arguments).filter(|p| p.kind_name() == "call") else { return false };
    outer.field("function").is_some_and(|f| {
        f.kind_name() == "identifier" && matches!(module.text_of(f), "int" | "float" | "complex") && module.qualified_name(f).is_none()
    })
}

/// `call` (a reduction) gives a number that the code converts to a Python
/// number (`float(np.percentile(scores, 25))`, `int(mask.sum())`,
/// `np.mean(hits).item()`), alone or after arithmetic with numbers
/// (`float(np.mean(s <= t) * 100)`): a statistic read off the data once and
/// handed to Python (a report, a threshold, a count), not array work that
/// goes on. Copying the data to the GPU for it costs about what the pass saves.
pub(crate) fn statistic_for_python(module: &Module<'_>, call: Node<'_>, scope: usize) -> bool {
    let number = |n: Node<'_>| match n.kind_name() {
        "integer" | "float" => true,
        "identifier" | "attribute" | "unary_operator" => matches!(module.value(n, scope), crate::semantic::Value::Int(_) | crate::semantic::Value::Scalar),
        _ => false,
    };
    let mut current = call;
    for _ in 0..8 {
        let Some(parent) = module.parent(current) else { return false };
        match parent.kind_name() {
            "parenthesized_expression" | "unary_operator" => current = parent,
            "binary_operator" => {
                let other = if parent.field("left") == Some(current) { parent.field("right") } else { parent.field("left") };
                if !other.is_some_and(number) {
                    return false;
                }
                current = parent;
            }
            // `.item()`
            "attribute" => {
                return parent.field("object") == Some(current)
                    && parent.field("attribute").is_some_and(|a| module.text_of(a) == "item")
                    && module.parent(parent).is_some_and(|c| c.kind_name() == "call");
            }
            _ => return converted_to_a_number(module, current),
        }
    }
    false
}

/// `x[i : i + 1]` (or `x[i:i+1, :]`): one row, by its bounds. A product of
/// one row is one multiply-add per element of the other side.
pub(crate) fn one_row(module: &Module<'_>, operand: Node<'_>) -> bool {
    if operand.kind_name() != "subscript" {
        return false;
    }
    let mut cursor = operand.walk();
    let Some(first) = operand.children_by_field_name("subscript", &mut cursor).next() else { return false };
    let first = if first.kind_name() == "tuple" { first.named_child(0) } else { Some(first) };
    let Some(slice) = first.filter(|s| s.kind_name() == "slice") else { return false };
    let bounds: Vec<String> = {
        let mut c = slice.walk();
        slice.named_children(&mut c).map(|n| module.compact_text(n)).collect()
    };
    match bounds.as_slice() {
        [start, stop] => {
            *stop == format!("{start}+1")
                || *stop == format!("1+{start}")
                || start.parse::<u64>().ok().zip(stop.parse::<u64>().ok()).is_some_and(|(a, b)| b == a + 1)
        }
        _ => false,
    }
}
