//! Array code to the GPU: NumPy/SciPy → CuPy and cupyx, scikit-image →
//! cucim.skimage, `scipy.sparse.linalg.eigsh` → pylibraft (CUPY001,
//! CUCIM001, RAFT001), and `np.fromfile` → a KvikIO read (KVIKIO001).
//!
//! The unit of an array rewrite is a region: the body of the function the
//! flagged calls are in, or the module's top-level code. Inside it the
//! flagged calls, and every call with a GPU equivalent that receives data
//! they produced, switch to the GPU name; data coming in goes to the device
//! once (a parameter is converted at the top of the function, anything else
//! where it is used); data going out — returned, stored into a host array,
//! handed to a function that is not GPU code — comes back with
//! `cp.asnumpy`. Regions where that would be wrong or slow (a Python loop
//! indexing GPU arrays element by element, a closure over them) get no fix.

use gpulens_syntax::NodeExt;
use std::collections::{HashMap, HashSet};

use gpulens_knowledge::{ApiKind, ApiMapping, Support};
use gpulens_syntax::Node;

use super::{cupy_alias, indentation_at, line_end, line_start, module_path, newline, statement_of, Draft};
use crate::Code;
use crate::semantic::{Value, MODULE_SCOPE};
use crate::{Applicability, Context, Finding, Fix};

/// Functions of which every positional argument is data (not a count or axis).
const ALL_DATA: &[&str] = &[
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "power", "mod", "fmod", "maximum",
    "minimum", "fmax", "fmin", "where", "dot", "matmul", "inner", "outer", "vdot", "tensordot", "kron", "cross",
    "convolve", "correlate", "correlate2d", "convolve2d", "fftconvolve", "oaconvolve", "corrcoef", "cov", "interp",
    "polyfit", "polyval", "allclose", "isclose", "array_equal", "concatenate", "stack", "vstack", "hstack",
    "column_stack", "dstack", "searchsorted", "intersect1d", "union1d", "setdiff1d", "setxor1d", "in1d", "isin",
    "digitize", "hypot", "arctan2", "copysign", "logical_and", "logical_or", "logical_xor", "bitwise_and",
    "bitwise_or", "bitwise_xor", "solve", "lstsq", "cdist", "lfilter", "filtfilt", "sosfilt", "sosfiltfilt",
    "histogram2d", "meshgrid", "trapezoid", "trapz", "einsum", "append", "greater", "less", "equal", "not_equal",
    "greater_equal", "less_equal", "heaviside", "ldexp", "nextafter", "lcm", "gcd", "solve_triangular", "cho_solve",
    "lu_solve", "choose", "compress", "extract", "place", "put", "take", "take_along_axis", "unwrap",
    "regionprops_table", "regionprops", "mark_boundaries", "match_histograms", "structural_similarity",
    "peak_signal_noise_ratio", "mean_squared_error", "normalized_root_mse", "label2rgb", "watershed",
    "random_walker", "join_segmentations", "clear_border",
];

/// Array methods whose result lives on the host.
const HOST_METHODS: &[&str] = &["tolist", "item", "get", "tobytes", "tofile", "__len__", "__array__"];
/// Array attributes that are plain Python values.
const HOST_ATTRIBUTES: &[&str] = &["shape", "size", "ndim", "dtype", "nbytes", "itemsize", "strides", "flags"];
/// Methods that change an array in place.
const MUTATING_METHODS: &[&str] = &["fill", "sort", "put", "resize", "itemset", "setflags", "partition", "setfield"];
/// Builtins that take a GPU array as it is.
const ACCEPTS_DEVICE: &[&str] = &[
    "print", "len", "float", "int", "bool", "str", "repr", "isinstance", "type", "id", "hash", "abs", "round",
    "complex", "format", "range",
];

/// Fixes per region, so every finding of one region shares one rewrite.
/// Regions with more GPU-capable calls than this get no fix: a rewrite that
/// large is better done by hand, and the analysis stays linear.
const MAX_CANDIDATES: usize = 400;

#[derive(Default)]
pub(crate) struct Regions {
    done: HashMap<usize, Option<Fix>>,
    /// Ranges of the findings an array rewrite starts from, once per analysis.
    seeds: Option<HashSet<(usize, usize)>>,
    /// Calls per scope, once per analysis.
    calls: Option<HashMap<usize, Vec<usize>>>,
}

impl Regions {
    pub fn fix(&mut self, cx: &Context<'_, '_>, node: Node<'_>, findings: &[Finding]) -> Option<Fix> {
        let function = node.enclosing_function();
        let key = function.map_or(usize::MAX, |f| f.id());
        if let Some(done) = self.done.get(&key) {
            return done.clone();
        }
        let seeds = self.seeds.get_or_insert_with(|| {
            findings
                .iter()
                .filter(|f| matches!(f.code, Code::CUPY001 | Code::CUCIM001 | Code::RAFT001))
                .map(|f| (f.range.start, f.range.end))
                .collect()
        });
        let calls = self.calls.get_or_insert_with(|| {
            let mut by_scope: HashMap<usize, Vec<usize>> = HashMap::new();
            for (i, site) in cx.module.calls.iter().enumerate() {
                by_scope.entry(site.scope).or_default().push(i);
            }
            by_scope
        });
        let fix = Region::new(cx, function, seeds, calls).and_then(|r| r.rewrite());
        self.done.insert(key, fix.clone());
        fix
    }
}

struct Region<'a, 'c, 't> {
    cx: &'a Context<'c, 't>,
    function: Option<Node<'t>>,
    scope: usize,
    /// Calls with a GPU equivalent: call id → (node, GPU name, mapping).
    candidates: Vec<(Node<'t>, String, &'static ApiMapping)>,
    /// The calls the findings flag.
    seeds: HashSet<usize>,
    /// Statements-level facts of the region, from one walk.
    assignments: Vec<Node<'t>>,
    returns: Vec<Node<'t>>,
    calls: Vec<Node<'t>>,
    loops: Vec<Node<'t>>,
    closures: Vec<Node<'t>>,
    declared: Vec<&'t str>,
    /// Calls that go to the GPU, by node id.
    rewritten: HashSet<usize>,
    /// Names that hold GPU data.
    device: HashSet<&'t str>,
    /// Parameters converted once at the top of the function.
    rebind: Vec<&'t str>,
}

impl<'a, 'c, 't> Region<'a, 'c, 't> {
    fn new(
        cx: &'a Context<'c, 't>,
        function: Option<Node<'t>>,
        seed_ranges: &HashSet<(usize, usize)>,
        calls: &HashMap<usize, Vec<usize>>,
    ) -> Option<Self> {
        let module = cx.module;
        if function.is_some_and(|f| f.has_error()) {
            return None;
        }
        let scope = function.map_or(MODULE_SCOPE, |f| f.id());
        let mut region = Region {
            cx,
            function,
            scope,
            candidates: Vec::new(),
            seeds: HashSet::new(),
            assignments: Vec::new(),
            returns: Vec::new(),
            calls: Vec::new(),
            loops: Vec::new(),
            closures: Vec::new(),
            declared: Vec::new(),
            rewritten: HashSet::new(),
            device: HashSet::new(),
            rebind: Vec::new(),
        };
        for &i in calls.get(&scope).map(Vec::as_slice).unwrap_or_default() {
            let site = &module.calls[i];
            let Some((_, api)) = module.resolve_call(site.node) else { continue };
            let Some(gpu) = gpu_name(cx, site.node, api) else { continue };
            region.candidates.push((site.node, gpu, api));
            if seed_ranges.contains(&(site.node.start_byte(), site.node.end_byte())) {
                region.seeds.insert(site.node.id());
            }
            if region.candidates.len() > MAX_CANDIDATES {
                return None;
            }
        }
        if region.seeds.is_empty() {
            return None;
        }
        region.walk();
        Some(region)
    }

    /// Collects the region's statements of interest, without entering nested functions or classes.
    fn walk(&mut self) {
        let module = self.cx.module;
        let root = match self.function {
            Some(f) => f.field("body"),
            None => Some(self.cx_root()),
        };
        let Some(root) = root else { return };
        let mut walk = gpulens_syntax::preorder(root);
        while let Some(node) = walk.next() {
            match node.kind_name() {
                "function_definition" | "class_definition" | "lambda" => {
                    self.closures.push(node);
                    walk.skip_children();
                }
                "assignment" | "augmented_assignment" => self.assignments.push(node),
                "return_statement" => self.returns.push(node),
                "call" => self.calls.push(node),
                "for_statement" | "while_statement" | "list_comprehension" | "generator_expression"
                | "set_comprehension" | "dictionary_comprehension" => self.loops.push(node),
                "global_statement" | "nonlocal_statement" => {
                    let mut c = node.walk();
                    self.declared.extend(node.named_children(&mut c).map(|n| module.text_of(n)));
                }
                _ => {}
            }
        }
    }

    fn cx_root(&self) -> Node<'t> {
        let any = self.candidates[0].0;
        let mut node = any;
        while let Some(p) = node.parent() {
            node = p;
        }
        node
    }

    /// Propagates "lives on the GPU" through calls and assignments until nothing changes.
    fn propagate(&mut self) {
        for _ in 0..16 {
            let before = (self.rewritten.len(), self.device.len());
            for (call, _, _) in &self.candidates {
                if self.rewritten.contains(&call.id()) {
                    continue;
                }
                // Flagged, fed GPU data, or computing an argument of a GPU call (`footprint=disk(3)`).
                let feeds_gpu_call = call.parent().and_then(|p| if p.kind_name() == "keyword_argument" { p.parent() } else { Some(p) })
                    .filter(|p| p.kind_name() == "argument_list")
                    .and_then(|p| p.parent())
                    .is_some_and(|outer| self.rewritten.contains(&outer.id()));
                // (A list or tuple of GPU arrays counts for the call it is
                // given to: `np.concatenate([y, y[::-1]])`.)
                let touches = self.seeds.contains(&call.id())
                    || feeds_gpu_call
                    || arguments(*call).iter().any(|a| {
                        self.is_device(*a, 0)
                            || (matches!(a.kind_name(), "list" | "tuple") && {
                                let mut c = a.walk();
                                let any = a.named_children(&mut c).any(|e| self.is_device(e, 0));
                                any
                            })
                    });
                if touches {
                    self.rewritten.insert(call.id());
                }
            }
            for assignment in self.assignments.clone() {
                let (Some(left), Some(right)) =
                    (assignment.field("left"), assignment.field("right"))
                else {
                    continue;
                };
                if assignment.kind_name() == "assignment" && self.is_device(right, 0) {
                    for name in targets(left) {
                        self.device.insert(self.cx.module.text_of(name));
                    }
                }
            }
            // Host arrays from a GPU-capable call that meet GPU data (`gpu[mask]`,
            // `gpu * host`) must be made on the GPU too: the two can't mix.
            let met = self.meeting_device();
            for (call, _, _) in &self.candidates {
                if self.rewritten.contains(&call.id()) {
                    continue;
                }
                let Some(assignment) = call.parent().filter(|p| p.kind_name() == "assignment") else { continue };
                let Some(name) = assignment.field("left").filter(|l| l.kind_name() == "identifier") else {
                    continue;
                };
                if met.contains(self.cx.module.text_of(name)) {
                    self.rewritten.insert(call.id());
                }
            }
            if (self.rewritten.len(), self.device.len()) == before {
                return;
            }
        }
    }

    /// Whether `expr` evaluates to GPU data, given what is known so far.
    fn is_device(&self, expr: Node<'_>, depth: u32) -> bool {
        if depth > 32 {
            return false;
        }
        let module = self.cx.module;
        let d = depth + 1;
        match expr.kind_name() {
            "identifier" => self.device.contains(module.text_of(expr)),
            "call" => {
                if self.rewritten.contains(&expr.id()) {
                    return true;
                }
                let Some(function) = expr.field("function") else { return false };
                if function.kind_name() == "attribute" {
                    let method = function.field("attribute").map_or("", |a| module.text_of(a));
                    if let Some(object) = function.field("object") {
                        if self.is_device(object, d) {
                            return !HOST_METHODS.contains(&method);
                        }
                    }
                }
                let name = module.qualified_name(function).unwrap_or_default();
                (name.starts_with("cupy.") || name.starts_with("cupyx.")) && name != "cupy.asnumpy"
            }
            "attribute" => {
                let attribute = expr.field("attribute").map_or("", |a| module.text_of(a));
                !HOST_ATTRIBUTES.contains(&attribute) && expr.field("object").is_some_and(|o| self.is_device(o, d))
            }
            "subscript" => expr.field("value").is_some_and(|v| self.is_device(v, d)),
            "binary_operator" | "unary_operator" | "comparison_operator" | "parenthesized_expression"
            | "conditional_expression" => {
                let mut c = expr.walk();
                let any = expr.named_children(&mut c).any(|n| self.is_device(n, d));
                any
            }
            _ => false,
        }
    }

    /// Host names used in an index of, or an operation with, GPU data.
    fn meeting_device(&self) -> HashSet<&'t str> {
        let module = self.cx.module;
        let mut met = HashSet::new();
        let names = |node: Node<'t>, met: &mut HashSet<&'t str>| {
            visit(node, &mut |n| {
                if n.kind_name() == "identifier" {
                    met.insert(module.text_of(n));
                }
            });
        };
        for statement in self.assignments.iter().copied().chain(self.returns.iter().copied()) {
            let mut found: Vec<Node<'t>> = Vec::new();
            visit(statement, &mut |n| match n.kind_name() {
                "subscript"
                    if n.field("value").is_some_and(|v| self.is_device(v, 0)) => {
                        let mut c = n.walk();
                        found.extend(n.children_by_field_name("subscript", &mut c));
                    }
                "binary_operator" | "comparison_operator" => {
                    let mut c = n.walk();
                    let parts: Vec<Node<'t>> = n.named_children(&mut c).collect();
                    if parts.iter().any(|p| self.is_device(*p, 0)) {
                        found.extend(parts.into_iter().filter(|p| !self.is_device(*p, 0)));
                    }
                }
                _ => {}
            });
            for node in found {
                names(node, &mut met);
            }
        }
        met
    }

    fn parameters(&self) -> Vec<&'t str> {
        let module = self.cx.module;
        let Some(params) = self.function.and_then(|f| f.field("parameters")) else { return Vec::new() };
        let mut out = Vec::new();
        let mut c = params.walk();
        for p in params.named_children(&mut c) {
            let name = match p.kind_name() {
                "identifier" => Some(p),
                "typed_parameter" => p.named_child(0).filter(|n| n.kind_name() == "identifier"),
                "default_parameter" | "typed_default_parameter" => p.field("name"),
                _ => None,
            };
            if let Some(name) = name {
                let name = module.text_of(name);
                if name != "self" && name != "cls" {
                    out.push(name);
                }
            }
        }
        out
    }

    /// A parameter the region never writes into (so converting it does not
    /// hide a change the caller expects to see).
    fn read_only(&self, name: &str) -> bool {
        let module = self.cx.module;
        let written = self.assignments.iter().any(|a| {
            let Some(left) = a.field("left") else { return false };
            let base = base_name(left).map(|b| module.text_of(b));
            (left.kind_name() != "identifier" || a.kind_name() == "augmented_assignment") && base == Some(name)
        });
        let mutated = self.calls.iter().any(|c| {
            let Some(function) = c.field("function").filter(|f| f.kind_name() == "attribute") else {
                return false;
            };
            let method = function.field("attribute").map_or("", |a| module.text_of(a));
            let object = function.field("object").map_or("", |o| module.text_of(o));
            (object == name && MUTATING_METHODS.contains(&method))
                || module.keyword(*c, "out").is_some_and(|o| module.text_of(o) == name)
        });
        !written && !mutated && !self.declared.contains(&name)
    }

    /// Data arguments of a rewritten call that are still on the host.
    fn host_inputs(&self, call: Node<'t>, api: &ApiMapping) -> Vec<Node<'t>> {
        let module = self.cx.module;
        let short = api.cpu.rsplit('.').next().unwrap_or("");
        let shape_first = api.kind == ApiKind::Generate
            || (api.kind == ApiKind::Create && !matches!(short, "array" | "asarray" | "ascontiguousarray"));
        let all_data = ALL_DATA.contains(&short);
        let mut out = Vec::new();
        // `cp.array(x)`/`cp.asarray(x)` take host data themselves.
        if api.kind == ApiKind::Create && matches!(short, "array" | "asarray" | "ascontiguousarray") {
            return out;
        }
        for (i, arg) in arguments(call).into_iter().enumerate() {
            let data = if i == 0 {
                !shape_first
            } else {
                all_data || matches!(module.value(arg, self.scope), Value::Array(_) | Value::Frame(_))
            };
            if !data {
                continue;
            }
            let parts = if i == 0 && matches!(arg.kind_name(), "list" | "tuple") {
                let mut c = arg.walk();
                arg.named_children(&mut c).collect()
            } else {
                vec![arg]
            };
            for part in parts {
                if !self.is_device(part, 0) && !is_plain_value(self.cx, part, self.scope) {
                    out.push(part);
                }
            }
        }
        out
    }

    fn rewrite(mut self) -> Option<Fix> {
        let module = self.cx.module;
        // Parameters that flow into the GPU calls are converted once at the top.
        let parameters = self.parameters();
        for _ in 0..4 {
            self.propagate();
            let mut added = false;
            for (call, _, api) in self.candidates.clone() {
                if !self.rewritten.contains(&call.id()) {
                    continue;
                }
                for input in self.host_inputs(call, api) {
                    let name = module.text_of(input);
                    if input.kind_name() == "identifier"
                        && parameters.contains(&name)
                        && !self.rebind.contains(&name)
                        && self.read_only(name)
                        && !reassigned_before(module, &self.assignments, name, call.start_byte())
                    {
                        self.rebind.push(name);
                        self.device.insert(name);
                        added = true;
                    }
                }
            }
            if !added {
                break;
            }
        }
        if !self.safe_to_move() {
            return None;
        }
        let text = module.text;
        let anchor = self.candidates[0].0.start_byte();
        let in_function = self.function.is_some();
        let mut draft = Draft::new(
            Applicability::Unsafe,
            if in_function { "Run this function's array work with CuPy" } else { "Run these array calls with CuPy" },
            if in_function {
                "Puts GPU calls in place of the CPU ones, moves the inputs to the device once and copies the results \
                 back once. Floating-point results can differ in the last digits."
            } else {
                "Puts GPU calls in place of the CPU ones; their results stay in GPU memory. Floating-point results \
                 can differ in the last digits."
            },
        );
        let cp = cupy_alias(self.cx, &mut draft, self.candidates[0].0);
        let once = self.converted_once(&parameters);
        for (name, statement) in &once {
            let indent = indentation_at(text, statement.start_byte());
            draft.insert(
                line_start(text, statement.start_byte()),
                format!("{indent}{name}_gpu = {cp}.asarray({name}){}", newline(text, statement.start_byte())),
            );
        }
        // The calls themselves.
        for (call, gpu, api) in &self.candidates {
            if !self.rewritten.contains(&call.id()) {
                continue;
            }
            let function = call.field("function")?;
            let new_name = match gpu.strip_prefix("cupy.") {
                Some(rest) => format!("{cp}.{rest}"),
                None => {
                    let (path, last) = gpu.rsplit_once('.')?;
                    format!("{}.{last}", module_path(self.cx, &mut draft, path, anchor))
                }
            };
            if module.text_of(function) != new_name {
                draft.replace(function.byte_range(), new_name);
            }
            for input in self.host_inputs(*call, api) {
                if input.kind_name() == "identifier" && once.iter().any(|(n, _)| *n == module.text_of(input)) && api.library != "raft" {
                    draft.replace(input.byte_range(), format!("{}_gpu", module.text_of(input)));
                    continue;
                }
                let convert = if api.library == "raft" {
                    format!("{}.csr_matrix(", module_path(self.cx, &mut draft, "cupyx.scipy.sparse", anchor))
                } else {
                    format!("{cp}.asarray(")
                };
                draft.insert(input.start_byte(), convert);
                draft.insert(input.end_byte(), ")");
            }
        }
        let mut mixed: Vec<usize> = Vec::new();
        // Data leaving the GPU code: other calls, stores into host arrays, returns.
        let back = |draft: &mut Draft, node: Node<'_>| {
            draft.insert(node.start_byte(), format!("{cp}.asnumpy("));
            draft.insert(node.end_byte(), ")");
        };
        for call in &self.calls {
            if self.rewritten.contains(&call.id()) || self.is_device(*call, 0) {
                continue;
            }
            let Some(function) = call.field("function") else { continue };
            let callee = module.text_of(function);
            if ACCEPTS_DEVICE.contains(&callee) {
                continue;
            }
            let name = module.qualified_name(function).unwrap_or_default();
            if name.starts_with("cupy") {
                continue;
            }
            for arg in all_arguments(*call) {
                if self.is_device(arg, 0) {
                    back(&mut draft, arg);
                }
            }
        }
        // GPU and host arrays can't mix in one operation: the host side goes
        // over. So do a host array's passed to a GPU array's method
        // (`A.dot(x)`, `A` now on the GPU).
        for call in &self.calls {
            let on_device = call.field("function").filter(|f| f.kind_name() == "attribute").and_then(|f| f.field("object")).is_some_and(|o| self.is_device(o, 0));
            if !on_device {
                continue;
            }
            for arg in all_arguments(*call) {
                if !self.is_device(arg, 0) && matches!(module.value(arg, self.scope), Value::Array(_)) && !mixed.contains(&arg.id()) {
                    mixed.push(arg.id());
                    draft.insert(arg.start_byte(), format!("{cp}.asarray("));
                    draft.insert(arg.end_byte(), ")");
                }
            }
        }
        for statement in self.assignments.iter().chain(&self.returns).chain(&self.calls) {
            visit(*statement, &mut |n| {
                if n.kind_name() != "binary_operator" {
                    return;
                }
                let (Some(l), Some(r)) = (n.field("left"), n.field("right")) else { return };
                for (a, b) in [(l, r), (r, l)] {
                    if self.is_device(a, 0)
                        && !self.is_device(b, 0)
                        && !is_plain_value(self.cx, b, self.scope)
                        && matches!(b.kind_name(), "call" | "identifier" | "attribute" | "subscript" | "binary_operator" | "parenthesized_expression")
                        && !mixed.contains(&b.id())
                    {
                        mixed.push(b.id());
                        draft.insert(b.start_byte(), format!("{cp}.asarray("));
                        draft.insert(b.end_byte(), ")");
                    }
                }
            });
        }
        for assignment in &self.assignments {
            let (Some(left), Some(right)) = (assignment.field("left"), assignment.field("right"))
            else {
                continue;
            };
            let host_target = left.kind_name() == "subscript" && !self.is_device(left, 0);
            if host_target && self.is_device(right, 0) {
                back(&mut draft, right);
            }
        }
        if in_function {
            for ret in &self.returns {
                let Some(value) = ret.named_child(0) else { continue };
                if value.kind_name() == "expression_list" || value.kind_name() == "tuple" {
                    let mut c = value.walk();
                    for item in value.named_children(&mut c) {
                        if self.is_device(item, 0) {
                            back(&mut draft, item);
                        }
                    }
                } else if self.is_device(value, 0) {
                    back(&mut draft, value);
                }
            }
        }
        // Parameters converted at the top of the body (after its docstring).
        if !self.rebind.is_empty() {
            let body = self.function?.field("body")?;
            let mut first = body.named_child(0)?;
            let mut c = body.walk();
            let statements: Vec<Node<'_>> = body.named_children(&mut c).filter(|n| n.kind_name() != "comment").collect();
            let mut at = line_start(text, first.start_byte());
            if let Some(doc) = statements.first().filter(|s| is_docstring(**s)) {
                at = line_end(text, doc.end_byte());
                first = *statements.get(1)?;
            }
            let indent = indentation_at(text, first.start_byte());
            if line_start(text, first.start_byte()) + indent.len() != first.start_byte() || at > first.start_byte() {
                return None; // body on the def line
            }
            let nl = newline(text, first.start_byte());
            let mut lines = String::new();
            for p in parameters.iter().filter(|p| self.rebind.contains(p)) {
                lines.push_str(&format!("{indent}{p} = {cp}.asarray({p}){nl}"));
            }
            draft.insert(at, lines);
        }
        for line in ["import cupy as cp", "import cupy"] {
            draft.drop_line_unless_used(line, &format!("{cp}."));
        }
        // A line the user told gpulens to leave alone (`# gpulens: ignore[CUPY001]`)
        // is never rewritten: then the region gets no rewrite at all.
        let left_alone: Vec<std::ops::Range<usize>> = module
            .suppressions
            .iter()
            .filter(|s| {
                s.codes.is_empty()
                    || s.codes.iter().any(|c| [Code::CUPY001, Code::CUCIM001, Code::RAFT001].iter().any(|code| crate::matches_code(c, code.as_str())))
            })
            .map(|s| crate::logical_line(text, s.offset))
            .collect();
        if draft.touches_any(&left_alone) {
            return None;
        }
        draft.finish()
    }

    /// Host arrays (not parameters) that several GPU calls take: converted
    /// once, into `<name>_gpu`, just before the top-level statement of the
    /// region that first uses them — when nothing rebinds them after that.
    fn converted_once(&self, parameters: &[&str]) -> Vec<(&'t str, Node<'t>)> {
        let module = self.cx.module;
        let mut uses: Vec<(&'t str, Vec<Node<'t>>)> = Vec::new();
        for (call, _, api) in &self.candidates {
            if !self.rewritten.contains(&call.id()) || api.library == "raft" {
                continue;
            }
            for input in self.host_inputs(*call, api) {
                if input.kind_name() != "identifier" || parameters.contains(&module.text_of(input)) {
                    continue;
                }
                let name = module.text_of(input);
                match uses.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, list)) => list.push(input),
                    None => uses.push((name, vec![input])),
                }
            }
        }
        let mut out = Vec::new();
        for (name, list) in uses {
            if list.len() < 2 || super::name_taken(module, &format!("{name}_gpu"), list[0]) {
                continue;
            }
            let first = list.iter().map(|n| n.start_byte()).min().unwrap_or(0);
            let last = list.iter().map(|n| n.end_byte()).max().unwrap_or(0);
            let Some(statement) = self.top_statement(list[0]) else { continue };
            let statement = list.iter().filter_map(|n| self.top_statement(*n)).min_by_key(|s| s.start_byte()).unwrap_or(statement);
            let rebound = self.assignments.iter().any(|a| {
                a.start_byte() >= statement.start_byte()
                    && a.start_byte() < last
                    && a.field("left").is_some_and(|l| targets(l).iter().any(|t| module.text_of(*t) == name))
            });
            if !rebound && first >= statement.start_byte() {
                out.push((name, statement));
            }
        }
        out
    }

    /// The statement directly in the region's body (or module) that holds `node`.
    fn top_statement(&self, node: Node<'t>) -> Option<Node<'t>> {
        let body = match self.function {
            Some(f) => f.field("body")?,
            None => self.cx_root(),
        };
        let mut current = node;
        loop {
            let parent = current.parent()?;
            if parent == body {
                return Some(current);
            }
            current = parent;
        }
    }

    /// No element-by-element Python loops over GPU data, no closures over it,
    /// no globals that would change under other code's feet.
    fn safe_to_move(&self) -> bool {
        let module = self.cx.module;
        let mentions_device = |node: Node<'_>| {
            let mut found = false;
            visit(node, &mut |n| {
                if n.kind_name() == "identifier" && self.device.contains(module.text_of(n)) {
                    found = true;
                }
            });
            found
        };
        if self.closures.iter().any(|c| mentions_device(*c)) {
            return false;
        }
        if self.declared.iter().any(|d| self.device.contains(d)) {
            return false;
        }
        // A loop indexing GPU arrays one element at a time (or iterating over one).
        for l in &self.loops {
            let mut slow = false;
            if let Some(right) = l.field("right") {
                slow |= self.is_device(right, 0);
            }
            let body = l.field("body").unwrap_or(*l);
            visit(body, &mut |n| {
                if n.kind_name() == "subscript" && n.field("value").is_some_and(|v| self.is_device(v, 0)) {
                    let index = n.field("subscript").map_or("", |s| module.text_of(s));
                    if !index.contains(':') {
                        slow = true;
                    }
                }
            });
            if slow {
                return false;
            }
        }
        true
    }
}

/// The GPU name a call would switch to, if the rewrite knows how.
fn gpu_name(cx: &Context<'_, '_>, call: Node<'_>, api: &'static ApiMapping) -> Option<String> {
    let gpu = api.gpu.as_deref()?;
    if api.support == Support::Missing || api.fallbacks.iter().any(|f| crate::rules::fallback_applies(cx, call, f)) {
        return None;
    }
    let known = match api.library.as_str() {
        "cupy" => gpu.starts_with("cupy.") || gpu.starts_with("cupyx."),
        "cucim" => gpu.starts_with("cucim.skimage."),
        "raft" => gpu == "pylibraft.sparse.linalg.eigsh",
        _ => false,
    };
    // Names with a module part only; methods (`Generator.normal`) are not rewritten.
    (known && !gpu.chars().any(|c| c.is_ascii_uppercase()) && api.kind != ApiKind::Method).then(|| gpu.to_string())
}

fn is_plain_value(cx: &Context<'_, '_>, node: Node<'_>, scope: usize) -> bool {
    matches!(
        node.kind_name(),
        "integer" | "float" | "string" | "true" | "false" | "none" | "concatenated_string" | "unary_operator"
    ) && !matches!(cx.module.value(node, scope), Value::Array(_))
        || matches!(cx.module.value(node, scope), Value::Int(_) | Value::Scalar)
}

/// Positional arguments.
pub(crate) fn arguments(call: Node<'_>) -> Vec<Node<'_>> {
    let Some(args) = call.field("arguments").filter(|a| a.kind_name() == "argument_list") else {
        return Vec::new();
    };
    let mut c = args.walk();
    let out = args
        .named_children(&mut c)
        .filter(|n| !matches!(n.kind_name(), "keyword_argument" | "list_splat" | "dictionary_splat" | "comment"))
        .collect();
    out
}

/// Positional arguments and keyword values.
fn all_arguments(call: Node<'_>) -> Vec<Node<'_>> {
    let Some(args) = call.field("arguments").filter(|a| a.kind_name() == "argument_list") else {
        return Vec::new();
    };
    let mut c = args.walk();
    let out = args
        .named_children(&mut c)
        .filter_map(|n| match n.kind_name() {
            "keyword_argument" => n.field("value"),
            "list_splat" | "dictionary_splat" | "comment" => None,
            _ => Some(n),
        })
        .collect();
    out
}

/// The names an assignment target binds: `a`, `a, b`, `(a, b)`, `[a, b]`.
fn targets(left: Node<'_>) -> Vec<Node<'_>> {
    match left.kind_name() {
        "identifier" => vec![left],
        "pattern_list" | "tuple_pattern" | "list_pattern" | "expression_list" | "tuple" => {
            let mut c = left.walk();
            let items: Vec<Node<'_>> = left.named_children(&mut c).collect();
            items.into_iter().flat_map(targets).collect()
        }
        _ => Vec::new(),
    }
}

/// `a` of `a[i]`, `a.b[i]`, `a`.
fn base_name(node: Node<'_>) -> Option<Node<'_>> {
    match node.kind_name() {
        "identifier" => Some(node),
        "subscript" => node.field("value").and_then(base_name),
        "attribute" => node.field("object").and_then(base_name),
        _ => None,
    }
}

/// Whether `name` is assigned (as a whole) before `offset` in the region.
fn reassigned_before(module: &crate::Module<'_>, assignments: &[Node<'_>], name: &str, offset: usize) -> bool {
    assignments.iter().any(|a| {
        a.start_byte() < offset
            && a.field("left").is_some_and(|l| targets(l).iter().any(|t| module.text_of(*t) == name))
    })
}

fn is_docstring(statement: Node<'_>) -> bool {
    statement.kind_name() == "expression_statement"
        && statement.named_child_count() == 1
        && statement.named_child(0).is_some_and(|s| s.kind_name() == "string")
}

/// Calls `f` on every node under `node` (itself included), in source order.
pub(crate) fn visit<'n>(node: Node<'n>, f: &mut impl FnMut(Node<'n>)) {
    gpulens_syntax::preorder(node).for_each(f);
}

/// KVIKIO001: `x = np.fromfile(path, dtype=d)` → a GPU buffer filled by KvikIO.
pub(super) fn kvikio_read(cx: &Context<'_, '_>, node: Node<'_>) -> Option<Fix> {
    let module = cx.module;
    let call = std::iter::successors(Some(node), |n| n.parent()).find(|n| n.kind_name() == "call")?;
    let (name, _) = module.resolve_call(call)?;
    if name != "numpy.fromfile" {
        return None;
    }
    let assignment = call.parent().filter(|p| p.kind_name() == "assignment")?;
    let statement = assignment.parent().filter(|p| p.kind_name() == "expression_statement")?;
    let target = assignment.field("left").filter(|l| l.kind_name() == "identifier")?;
    if statement_of(call)? != statement || assignment.field("right")? != call {
        return None;
    }
    let args = all_arguments(call);
    let positional = arguments(call);
    let file = *positional.first()?;
    // Evaluated twice (size, then open): only for expressions without side effects.
    if !matches!(file.kind_name(), "identifier" | "string" | "attribute") || module.text_of(file).contains('\n') {
        return None;
    }
    let dtype = module.keyword(call, "dtype").or_else(|| positional.get(1).copied());
    // count/sep/offset/like change what is read: left to the user.
    if args.len() != 1 + dtype.is_some() as usize {
        return None;
    }
    let text = module.text;
    let start = statement.start_byte();
    let indent = indentation_at(text, start);
    if line_start(text, start) + indent.len() != start || text[statement.byte_range()].contains(';') {
        return None;
    }
    let mut draft = Draft::new(
        Applicability::Unsafe,
        "Read the file into GPU memory with KvikIO",
        "The array becomes a CuPy array on the GPU: code after this line that needs it on the host must call \
         `cp.asnumpy`.",
    );
    let cp = cupy_alias(cx, &mut draft, statement);
    let kvikio = module_path(cx, &mut draft, "kvikio", start);
    let os = module_path(cx, &mut draft, "os", start);
    let dtype = dtype.map_or_else(|| format!("{cp}.float64"), |d| module.text_of(d).to_string());
    let file = module.text_of(file);
    let target = module.text_of(target);
    let handle = if super::name_taken(module, "f", statement) { "cufile" } else { "f" };
    let nl = newline(text, start);
    let rewritten = format!(
        "{target} = {cp}.empty({os}.path.getsize({file}) // {cp}.dtype({dtype}).itemsize, dtype={dtype}){nl}\
         {indent}with {kvikio}.CuFile({file}, \"r\") as {handle}:{nl}\
         {indent}    {handle}.read({target})"
    );
    draft.replace(statement.byte_range(), rewritten);
    draft.finish()
}
