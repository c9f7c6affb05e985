//! Loops to kernels: a Python index loop becomes a `@cuda.jit` kernel
//! (NUMBA001) or a `@wp.kernel` (WARP001), written above the function the
//! loop is in, and the loop becomes the launch with device arrays.
//!
//! Only loops whose bodies translate without guessing are rewritten: one or
//! two nested `range` loops with step 1, a body of arithmetic on array
//! elements and scalars (math functions allowed), no accumulation into a
//! scalar, no attribute access on objects, in a module-level function or at
//! module level.

use gpulens_syntax::NodeExt;
use gpulens_syntax::Node;

use super::arrays::visit;
use super::{alias_of, indentation_at, line_start, module_path, name_taken, newline, Anchor, Draft};
use crate::{Applicability, Context, Fix};

/// NumPy functions a kernel body may call, and their `math` names.
const NP_TO_MATH: &[(&str, &str)] = &[
    ("sqrt", "sqrt"), ("exp", "exp"), ("log", "log"), ("log10", "log10"), ("log2", "log2"), ("log1p", "log1p"),
    ("expm1", "expm1"), ("sin", "sin"), ("cos", "cos"), ("tan", "tan"), ("arcsin", "asin"), ("arccos", "acos"),
    ("arctan", "atan"), ("arctan2", "atan2"), ("sinh", "sinh"), ("cosh", "cosh"), ("tanh", "tanh"),
    ("floor", "floor"), ("ceil", "ceil"), ("fabs", "fabs"), ("hypot", "hypot"), ("isnan", "isnan"),
    ("isinf", "isinf"), ("isfinite", "isfinite"), ("copysign", "copysign"), ("erf", "erf"),
];
const NP_CONSTANTS: &[(&str, &str)] = &[("pi", "pi"), ("e", "e"), ("inf", "inf"), ("nan", "nan")];
const BUILTINS: &[&str] = &["abs", "min", "max", "int", "float", "round", "range", "len", "bool", "True", "False", "None"];
/// Warp spellings of math in a kernel body.
const TO_WARP: &[(&str, &str)] = &[
    ("numpy.linalg.norm", "wp.length"), ("numpy.dot", "wp.dot"), ("numpy.cross", "wp.cross"),
    ("numpy.sqrt", "wp.sqrt"), ("math.sqrt", "wp.sqrt"), ("numpy.exp", "wp.exp"), ("math.exp", "wp.exp"),
    ("numpy.sin", "wp.sin"), ("math.sin", "wp.sin"), ("numpy.cos", "wp.cos"), ("math.cos", "wp.cos"),
    ("numpy.abs", "abs"), ("numpy.minimum", "wp.min"), ("numpy.maximum", "wp.max"), ("numpy.clip", "wp.clamp"),
    ("numpy.floor", "wp.floor"), ("math.floor", "wp.floor"), ("numpy.log", "wp.log"), ("math.log", "wp.log"),
];
const VECTOR_NAMES: &[&str] = &[
    "pos", "position", "positions", "vel", "velocity", "velocities", "force", "forces", "acc", "accel",
    "acceleration", "accelerations", "momentum", "p", "v", "x", "f",
];

/// One level of the loop nest: `for var in range(start, stop)`.
struct Level<'t> {
    var: &'t str,
    start: Option<Node<'t>>,
    stop: Node<'t>,
}

/// What a loop body reads and writes.
struct Body<'t> {
    block: Node<'t>,
    levels: Vec<Level<'t>>,
    /// Arrays, in order of first use, and whether the loop writes each.
    arrays: Vec<(&'t str, bool)>,
    /// How many indices each array is subscripted with (the most seen).
    ranks: Vec<usize>,
    scalars: Vec<&'t str>,
    /// (range, replacement) inside the body: NumPy/`math` spellings for the target.
    renames: Vec<(std::ops::Range<usize>, String)>,
    /// Names used as range bounds inside the body (integers, not floats).
    counts: Vec<&'t str>,
}

pub(super) fn numba(cx: &Context<'_, '_>, node: Node<'_>) -> Option<Fix> {
    let module = cx.module;
    let outer = std::iter::successors(Some(node), |n| n.parent()).find(|n| n.kind_name() == "for_statement")?;
    let (insert_at, function_name) = kernel_position(cx, outer)?;
    let mut draft = Draft::new(
        Applicability::Unsafe,
        "Rewrite the loop as a CUDA kernel",
        "Writes the loop's body as a `@cuda.jit` kernel: one thread per index, a bounds check, 256 threads per \
         block. The arrays are copied to the GPU, and the ones the kernel writes are copied back.",
    );
    let math_alias = alias_of(module, "math", outer.start_byte()).map(str::to_string);
    let body = analyse(cx, outer, Target::Numba, math_alias.as_deref())?;
    if body.levels.len() > 2 {
        return None;
    }
    let text = module.text;
    let nl = newline(text, outer.start_byte());
    // The `cuda` module already imported here (numba-cuda's or Numba-CUDA-MLIR's:
    // both read as numba.cuda), else the package the finding names.
    let package = crate::rules::kernel_package(cx, false);
    let cuda = match alias_of(module, "numba.cuda", outer.start_byte()) {
        Some(a) => a.to_string(),
        None if !name_taken(module, "cuda", outer) => {
            draft.module_line(Anchor::Imports, package.import_line);
            "cuda".to_string()
        }
        None => module_path(cx, &mut draft, &package.module(), outer.start_byte()),
    };
    if body.renames.iter().any(|(_, r)| r.starts_with("math.")) && math_alias.is_none() {
        draft.module_line(Anchor::Imports, "import math");
    }
    let kernel = unique_name(cx, &format!("{function_name}_kernel"), outer);
    let bounds: Vec<(String, String)> = body
        .levels
        .iter()
        .map(|l| (l.start.map_or("0".to_string(), |s| module.text_of(s).to_string()), module.text_of(l.stop).to_string()))
        .collect();
    // Kernel parameters: arrays, scalars, then each level's start and stop.
    let mut params: Vec<String> = body.arrays.iter().map(|(a, _)| a.to_string()).collect();
    params.extend(body.scalars.iter().map(|s| s.to_string()));
    let mut launch_args: Vec<String> = body.arrays.iter().map(|(a, _)| device_name(cx, a, outer)).collect();
    launch_args.extend(body.scalars.iter().map(|s| s.to_string()));
    for (level, (start, stop)) in body.levels.iter().zip(&bounds) {
        if start != "0" {
            params.push(format!("{}_start", level.var));
            launch_args.push(start.clone());
        }
        params.push(format!("{}_stop", level.var));
        launch_args.push(stop.clone());
    }
    let mut k = format!("@{cuda}.jit{nl}def {kernel}({}):{nl}", params.join(", "));
    let vars: Vec<&str> = body.levels.iter().map(|l| l.var).collect();
    // The innermost index is the fastest-moving thread coordinate (x), for coalesced access.
    let grid_vars: Vec<&str> = vars.iter().rev().copied().collect();
    k.push_str(&format!("    {} = {cuda}.grid({}){nl}", grid_vars.join(", "), vars.len()));
    let mut conditions = Vec::new();
    for (level, (start, _)) in body.levels.iter().zip(&bounds) {
        if start != "0" {
            k.push_str(&format!("    {v} += {v}_start{nl}", v = level.var));
        }
        conditions.push(format!("{v} < {v}_stop", v = level.var));
    }
    k.push_str(&format!("    if {}:{nl}", conditions.join(" and ")));
    k.push_str(&reindent(text, &body, "        ", nl)?);
    k.push_str(&format!("{nl}{nl}{nl}"));
    draft.insert(insert_at, k);

    // The launch, in place of the loop.
    let indent = indentation_at(text, outer.start_byte());
    let mut launch = String::new();
    let threads = if vars.len() == 1 { "256".to_string() } else { "(16, 16)".to_string() };
    launch.push_str(&format!("threads_per_block = {threads}{nl}"));
    let blocks: Vec<String> = bounds
        .iter()
        .rev()
        .zip(if vars.len() == 1 { vec![256] } else { vec![16, 16] })
        .map(|((start, stop), t)| {
            format!("({} + {}) // {t}", count(start, stop), t - 1)
        })
        .collect();
    let blocks = if blocks.len() == 1 { blocks[0].clone() } else { format!("({})", blocks.join(", ")) };
    launch.push_str(&format!("{indent}blocks = {blocks}{nl}"));
    for (array, _) in &body.arrays {
        launch.push_str(&format!("{indent}{} = {cuda}.to_device({array}){nl}", device_name(cx, array, outer)));
    }
    launch.push_str(&format!("{indent}{kernel}[blocks, threads_per_block]({}){nl}", launch_args.join(", ")));
    for (array, written) in &body.arrays {
        if *written {
            launch.push_str(&format!("{indent}{}.copy_to_host({array}){nl}", device_name(cx, array, outer)));
        }
    }
    draft.replace(outer.start_byte()..outer.end_byte(), launch.trim_end().to_string());
    draft.finish()
}

pub(super) fn warp(cx: &Context<'_, '_>, node: Node<'_>) -> Option<Fix> {
    let module = cx.module;
    let outer = std::iter::successors(Some(node), |n| n.parent()).find(|n| n.kind_name() == "for_statement")?;
    let (insert_at, function_name) = kernel_position(cx, outer)?;
    let body = analyse(cx, outer, Target::Warp, None)?;
    if body.levels.len() != 1 {
        return None;
    }
    let mut draft = Draft::new(
        Applicability::Unsafe,
        "Rewrite the loop as a Warp kernel",
        "Writes the loop's body as a `@wp.kernel` with one thread per index (`wp.tid()`), launched with \
         `wp.launch`. The arrays become float32 Warp arrays on the GPU, and the ones it writes are copied back.",
    );
    let text = module.text;
    let nl = newline(text, outer.start_byte());
    let wp = match alias_of(module, "warp", outer.start_byte()) {
        Some(a) => a.to_string(),
        None if !name_taken(module, "wp", outer) => {
            draft.module_line(Anchor::Imports, "import warp as wp");
            "wp".to_string()
        }
        None => module_path(cx, &mut draft, "warp", outer.start_byte()),
    };
    let level = &body.levels[0];
    let start = level.start.map_or("0".to_string(), |s| module.text_of(s).to_string());
    let stop = module.text_of(level.stop).to_string();
    let kernel = unique_name(cx, &format!("{function_name}_kernel"), outer);
    let mut params = Vec::new();
    let mut inputs = Vec::new();
    let mut conversions = String::new();
    let indent = indentation_at(text, outer.start_byte());
    for ((array, _), rank) in body.arrays.iter().zip(&body.ranks) {
        let scope = outer.enclosing_function().map_or(crate::semantic::MODULE_SCOPE, |f| f.id());
        let defining = first_definition(cx, outer, array, scope);
        let dtype = if *rank >= 2 {
            format!("{wp}.array2d(dtype=float)")
        } else if defining.replace(' ', "").contains(",3)") || VECTOR_NAMES.contains(&array.to_ascii_lowercase().as_str()) {
            format!("{wp}.array(dtype={wp}.vec3)")
        } else {
            format!("{wp}.array(dtype=float)")
        };
        let element = if dtype.contains("vec3") { format!("{wp}.vec3") } else { "float".to_string() };
        params.push(format!("{array}: {dtype}"));
        let device = format!("{array}_wp");
        let dtype_arg = if *rank >= 2 { "float".to_string() } else { element };
        conversions.push_str(&format!("{indent}{device} = {wp}.array({array}, dtype={dtype_arg}, device=\"cuda\"){nl}"));
        inputs.push(device);
    }
    for s in &body.scalars {
        let ty = if body.counts.contains(s) { "int" } else { "float" };
        params.push(format!("{s}: {ty}"));
        inputs.push(s.to_string());
    }
    if start != "0" {
        params.push(format!("{}_start: int", level.var));
        inputs.push(start.clone());
    }
    let mut k = format!("@{wp}.kernel{nl}def {kernel}({}):{nl}", params.join(", "));
    k.push_str(&format!("    {} = {wp}.tid()", level.var));
    if start != "0" {
        k.push_str(&format!(" + {}_start", level.var));
    }
    k.push_str(nl);
    k.push_str(&reindent(text, &body, "    ", nl)?);
    k.push_str(&format!("{nl}{nl}{nl}"));
    draft.insert(insert_at, k);
    let count = count(&start, &stop);
    let mut launch = conversions.trim_start().to_string();
    launch.push_str(&format!(
        "{indent}{wp}.launch({kernel}, dim={count}, inputs=[{}], device=\"cuda\"){nl}",
        inputs.join(", ")
    ));
    for ((array, written), _) in body.arrays.iter().zip(&body.ranks) {
        if *written {
            launch.push_str(&format!("{indent}{array}[...] = {array}_wp.numpy(){nl}"));
        }
    }
    draft.replace(outer.start_byte()..outer.end_byte(), launch.trim_end().to_string());
    draft.finish()
}

/// The number of iterations of `range(start, stop)`, as source.
fn count(start: &str, stop: &str) -> String {
    match start {
        "0" => stop.to_string(),
        s if s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.') => format!("{stop} - {s}"),
        s => format!("{stop} - ({s})"),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Numba,
    Warp,
}

/// Where the kernel goes (the start of the top-level statement holding the
/// loop) and the name it is derived from. Loops in methods or nested
/// functions get no fix: a kernel must live at module level, and writing it
/// there from inside a class would move code far from where the user is.
fn kernel_position(cx: &Context<'_, '_>, outer: Node<'_>) -> Option<(usize, String)> {
    // Decided from the loop's own ancestors only (what error recovery does
    // around its function must not change the answer).
    let mut functions = Vec::new();
    let mut node = outer;
    let mut top = outer;
    while let Some(parent) = node.parent() {
        match node.kind_name() {
            "function_definition" => functions.push(node),
            "class_definition" | "lambda" => return None,
            _ => {}
        }
        if !matches!(parent.kind_name(), "module" | "ERROR") {
            top = parent;
        }
        node = parent;
    }
    match functions.as_slice() {
        [] => Some((top.start_byte(), "loop".to_string())),
        [f] => {
            // A decorated function (`@numba.njit`, `@jit`…) may be compiled
            // itself: a kernel launch inside it would not compile.
            if f.parent().is_some_and(|p| p.kind_name() == "decorated_definition") {
                return None;
            }
            let start = f.start_byte();
            let name = f.field("name")?;
            Some((start, cx.module.text_of(name).to_string()))
        }
        _ => None,
    }
}

fn unique_name(cx: &Context<'_, '_>, base: &str, at: Node<'_>) -> String {
    let text = cx.module.text;
    let _ = text;
    let taken = |n: &str| name_taken(cx.module, n, at);
    if !taken(base) {
        return base.to_string();
    }
    (2..).map(|i| format!("{base}{i}")).find(|n| !taken(n)).expect("some suffix is free")
}

fn device_name(cx: &Context<'_, '_>, array: &str, at: Node<'_>) -> String {
    let candidate = format!("d_{array}");
    if name_taken(cx.module, &candidate, at) {
        format!("{array}_device")
    } else {
        candidate
    }
}

/// The text that first defines `name` as seen from the loop.
fn first_definition<'t>(cx: &Context<'_, 't>, at: Node<'t>, name: &str, scope: usize) -> String {
    let _ = at;
    // Evaluate through a synthetic lookup: the module's defining text of an identifier.
    let module = cx.module;
    let mut found = String::new();
    visit(at, &mut |n| {
        if found.is_empty() && n.kind_name() == "identifier" && module.text_of(n) == name {
            found = module.defining_text(n, scope).to_string();
        }
    });
    found
}

/// Reads the nest and body; `None` when anything would need guessing.
fn analyse<'t>(cx: &Context<'_, 't>, outer: Node<'t>, target: Target, math: Option<&str>) -> Option<Body<'t>> {
    let module = cx.module;
    let mut levels = vec![range_level(cx, outer)?];
    let mut block = outer.field("body")?;
    if target == Target::Numba {
        let statements: Vec<Node<'t>> = {
            let mut c = block.walk();
            block.named_children(&mut c).filter(|n| n.kind_name() != "comment").collect()
        };
        if statements.len() == 1 && statements[0].kind_name() == "for_statement" {
            if let Some(level) = range_level(cx, statements[0]) {
                levels.push(level);
                block = statements[0].field("body")?;
            }
        }
    }
    let loop_vars: Vec<&str> = levels.iter().map(|l| l.var).collect();
    let mut locals: Vec<&'t str> = Vec::new();
    let mut arrays: Vec<(&'t str, bool)> = Vec::new();
    let mut ranks: Vec<usize> = Vec::new();
    let mut scalars: Vec<&'t str> = Vec::new();
    let mut renames = Vec::new();
    let mut counts = Vec::new();
    let mut ok = true;
    // Pass 1: what the body binds (locals, inner loop variables).
    visit(block, &mut |n| match n.kind_name() {
        "assignment" => {
            if let Some(left) = n.field("left").filter(|l| l.kind_name() == "identifier") {
                locals.push(module.text_of(left));
            }
        }
        "for_statement" => {
            if let Some(left) = n.field("left").filter(|l| l.kind_name() == "identifier") {
                locals.push(module.text_of(left));
            }
        }
        "augmented_assignment" => {
            // Accumulating into a scalar declared outside the loop is a reduction: not mechanical.
            if let Some(left) = n.field("left") {
                if left.kind_name() == "identifier" && !locals.contains(&module.text_of(left)) {
                    ok = false;
                }
                // Warp: spell an element update out (`a[i] = a[i] + (…)`), which
                // reads the same in every Warp version.
                if let (Target::Warp, "subscript", Some(op), Some(right)) = (
                    target,
                    left.kind_name(),
                    n.field("operator"),
                    n.field("right"),
                ) {
                    let op_text = module.text_of(op).trim_end_matches('=');
                    renames.push((op.start_byte()..right.start_byte(), format!("= {} {op_text} (", module.text_of(left))));
                    renames.push((right.end_byte()..right.end_byte(), ")".to_string()));
                }
            }
        }
        "string" | "list" | "dictionary" | "set" | "lambda" | "yield" | "await" | "return_statement"
        | "break_statement" | "continue_statement" | "with_statement" | "try_statement" | "while_statement" => ok = false,
        _ => {}
    });
    if !ok {
        return None;
    }
    // Pass 2: names and calls.
    visit(block, &mut |n| {
        if !ok {
            return;
        }
        match n.kind_name() {
            "call" => {
                let Some(function) = n.field("function") else {
                    ok = false;
                    return;
                };
                let callee = module.text_of(function);
                let qualified = module.qualified_name(function).unwrap_or_default();
                if function.kind_name() == "identifier" && BUILTINS.contains(&callee) && module.qualified_name(function).is_none() {
                    if callee == "range" {
                        visit(n, &mut |a| {
                            if a.kind_name() == "identifier" && a != function {
                                counts.push(module.text_of(a));
                            }
                        });
                    }
                    return;
                }
                match target {
                    Target::Numba => {
                        if let Some(short) = qualified.strip_prefix("numpy.") {
                            match NP_TO_MATH.iter().find(|(np, _)| *np == short) {
                                Some((_, m)) => renames.push((function.byte_range(), format!("{}.{m}", math.unwrap_or("math")))),
                                None if short == "abs" || short == "absolute" => renames.push((function.byte_range(), "abs".into())),
                                None if short == "minimum" => renames.push((function.byte_range(), "min".into())),
                                None if short == "maximum" => renames.push((function.byte_range(), "max".into())),
                                None => ok = false,
                            }
                        } else if !(qualified.starts_with("math.") || qualified.starts_with("cmath.")) {
                            ok = false;
                        }
                    }
                    Target::Warp => match TO_WARP.iter().find(|(from, _)| *from == qualified) {
                        Some((_, to)) => renames.push((function.byte_range(), to.to_string())),
                        None if qualified.starts_with("warp.") => {}
                        None => ok = false,
                    },
                }
            }
            "attribute" => {
                let object = n.field("object");
                let qualified = module.qualified_name(n).unwrap_or_default();
                let is_callee = n.parent().is_some_and(|p| p.kind_name() == "call" && p.field("function") == Some(n));
                if is_callee {
                    return;
                }
                if let Some(short) = qualified.strip_prefix("numpy.") {
                    match NP_CONSTANTS.iter().find(|(np, _)| *np == short) {
                        Some((_, m)) if target == Target::Numba => {
                            renames.push((n.byte_range(), format!("{}.{m}", math.unwrap_or("math"))))
                        }
                        Some(_) if short == "pi" => renames.push((n.byte_range(), "wp.pi".into())),
                        _ => ok = false,
                    }
                    return;
                }
                if qualified.starts_with("math.") || qualified.starts_with("warp.") {
                    return;
                }
                // `a.shape[0]` on an array is fine; other attributes (objects, `self.x`) are not.
                let attribute = n.field("attribute").map_or("", |a| module.text_of(a));
                if !(matches!(attribute, "shape" | "size") && object.is_some_and(|o| o.kind_name() == "identifier")) {
                    ok = false;
                }
            }
            "identifier" => {
                let name = module.text_of(n);
                let parent = n.parent();
                // Attribute names and keyword names are not variables.
                if parent.is_some_and(|p| gpulens_syntax::is_label(p, n)) {
                    return;
                }
                if parent.is_some_and(|p| p.kind_name() == "attribute" && p.field("object") == Some(n))
                    && module.qualified_name(n).is_some()
                {
                    return; // a module: np, math, wp
                }
                if loop_vars.contains(&name) || locals.contains(&name) || BUILTINS.contains(&name) {
                    return;
                }
                if module.qualified_name(n).is_some() {
                    ok = false; // an imported function or class used as a value
                    return;
                }
                let subscripted = parent.is_some_and(|p| p.kind_name() == "subscript" && p.field("value") == Some(n));
                let shape_of = parent.is_some_and(|p| p.kind_name() == "attribute");
                if subscripted || shape_of {
                    let written = subscripted && {
                        let sub = parent.unwrap();
                        let mut top = sub;
                        while let Some(p) = top.parent().filter(|p| p.kind_name() == "subscript") {
                            top = p;
                        }
                        top.parent().is_some_and(|a| {
                            matches!(a.kind_name(), "assignment" | "augmented_assignment") && a.field("left") == Some(top)
                        })
                    };
                    let rank = if subscripted { subscript_rank(parent.unwrap()) } else { 0 };
                    match arrays.iter().position(|(a, _)| *a == name) {
                        Some(i) => {
                            arrays[i].1 |= written;
                            ranks[i] = ranks[i].max(rank);
                        }
                        None => {
                            scalars.retain(|s| *s != name);
                            arrays.push((name, written));
                            ranks.push(rank);
                        }
                    }
                } else if !arrays.iter().any(|(a, _)| *a == name) && !scalars.contains(&name) {
                    scalars.push(name);
                }
            }
            _ => {}
        }
    });
    if !ok || !arrays.iter().any(|(_, w)| *w) {
        return None;
    }
    // A stop expression is evaluated on the host when launching: only plain ones.
    for level in &levels {
        for bound in level.start.iter().chain(std::iter::once(&level.stop)) {
            if !plain_bound(module, *bound) {
                return None;
            }
        }
    }
    scalars.retain(|s| !arrays.iter().any(|(a, _)| a == s));
    Some(Body { block, levels, arrays, ranks, scalars, renames, counts })
}

fn subscript_rank(sub: Node<'_>) -> usize {
    let mut rank = 0;
    let mut node = Some(sub);
    while let Some(n) = node.filter(|n| n.kind_name() == "subscript") {
        let mut c = n.walk();
        rank += n.children_by_field_name("subscript", &mut c).count();
        node = n.parent();
    }
    rank
}

fn plain_bound(module: &crate::Module<'_>, node: Node<'_>) -> bool {
    let mut plain = true;
    visit(node, &mut |n| match n.kind_name() {
        "call" => {
            let callee = n.field("function").map_or("", |f| module.text_of(f));
            if !matches!(callee, "len" | "int" | "min" | "max") {
                plain = false;
            }
        }
        "await" | "yield" | "lambda" | "named_expression" => plain = false,
        _ => {}
    });
    plain
}

fn range_level<'t>(cx: &Context<'_, 't>, node: Node<'t>) -> Option<Level<'t>> {
    let (var, args) = crate::rules::loop_headers::range_header(cx.module, node)?;
    if node.field("alternative").is_some() {
        return None; // for … else
    }
    match args.as_slice() {
        [stop] => Some(Level { var, start: None, stop: *stop }),
        [start, stop] => Some(Level { var, start: Some(*start), stop: *stop }),
        _ => None,
    }
}

/// The body's lines, renamed for the target and re-indented under `indent`.
fn reindent(text: &str, body: &Body<'_>, indent: &str, nl: &str) -> Option<String> {
    let start = line_start(text, body.block.start_byte());
    let end = body.block.end_byte();
    let mut source = String::new();
    let mut at = start;
    let mut renames = body.renames.clone();
    renames.sort_by_key(|r| r.0.start);
    for (range, new) in &renames {
        if range.start < at {
            return None;
        }
        source.push_str(&text[at..range.start]);
        source.push_str(new);
        at = range.end;
    }
    source.push_str(&text[at..end]);
    let old = indentation_at(text, body.block.start_byte());
    if line_start(text, body.block.start_byte()) + old.len() != body.block.start_byte() {
        return None; // `for i in range(n): out[i] = …` on one line
    }
    let mut out = Vec::new();
    for line in source.lines() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            out.push(String::new());
        } else if let Some(rest) = line.strip_prefix(old) {
            out.push(format!("{indent}{rest}"));
        } else {
            return None; // a continuation line indented less than the body
        }
    }
    Some(out.join(nl))
}
