//! A model's own state: arrays a class builds from the numbers its
//! constructor takes (`self.P = np.eye(dim_x)`, `self.x = np.zeros((dim_x,
//! 1))`), and what its methods compute from them alone. Such an array is
//! sized by a count a user writes when making the object (the variables of
//! a state, the levels of a factor), not by data that arrives: with nothing
//! else saying its size, heavy work on it alone is no evidence of GPU work.

use gpulens_knowledge::ApiKind;
use gpulens_syntax::NodeExt;
use gpulens_syntax::Node;

use super::*;

/// How far [`Module::model_sized`] follows expressions back (the class's
/// attributes included, each read once) before it gives up.
const STATE_TRACE_STEPS: usize = 600;

/// How far [`Module::made_from_attribute`] follows a method's names back.
const UPDATE_TRACE_STEPS: usize = 32;

/// NumPy's constructors that make an array from a shape alone.
const FROM_SHAPE: &[&str] = &["numpy.eye", "numpy.identity", "numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full"];

/// NumPy's calls whose result is larger than their array argument: an
/// update made with one grows the attribute rather than keeping its shape.
const GROWING: &[&str] = &[
    "numpy.append", "numpy.concatenate", "numpy.hstack", "numpy.vstack", "numpy.dstack", "numpy.stack", "numpy.column_stack",
    "numpy.row_stack", "numpy.block", "numpy.tile", "numpy.repeat", "numpy.kron", "numpy.outer", "numpy.insert", "numpy.pad",
    "numpy.resize", "numpy.broadcast_to",
];

/// Where a trace of [`Module::model_sized`] stands.
#[derive(Default)]
struct Trace {
    /// The attributes being worked out, innermost last (taken as state
    /// while they are: an update reaches its own attribute).
    in_progress: Vec<(String, Reading)>,
    /// Expressions followed so far.
    steps: usize,
    /// Whether an array the class makes from numbers (`np.eye(dim_x)`) was
    /// reached, not only attributes in progress: state that is made
    /// somewhere, not a cycle of stores of data from elsewhere (`self.X =
    /// X_saved` after `X_saved = self.X`, `self.X` set by a base class).
    grounded: bool,
    /// Whether an answer rested on an attribute still in progress, or on
    /// the step limit: then it is not remembered.
    provisional: bool,
    /// Attributes found made of state while another was in progress:
    /// remembered once the outermost one is found so too.
    pending_true: Vec<(String, Reading)>,
    /// The largest number met sizing the state (a literal, or a
    /// constructor's number with a default: `dimensions=32`); 0 if none.
    largest: u64,
}

/// A call's arguments: the positional ones and the values of the keywords
/// (`size=n`), in order.
fn arguments(call: Node<'_>) -> Vec<Node<'_>> {
    call.field("arguments").map_or(Vec::new(), |a| {
        let mut cursor = a.walk();
        a.named_children(&mut cursor)
            .filter_map(|n| match n.kind_name() {
                "comment" => None,
                "keyword_argument" => n.field("value"),
                _ => Some(n),
            })
            .collect()
    })
}

/// What an expression is traced for: array data, or a number that sizes one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reading {
    Data,
    Shape,
}

impl<'t> Module<'t> {
    /// Whether the data `inputs` (a call's arguments in function `scope`)
    /// are made only from the state of the instance whose method `scope`
    /// is, where every array of that state is built in the class from
    /// numbers the constructor takes (see the module's comment), or from
    /// numbers and literals. False where any of it comes from a parameter
    /// of the method, a module-level array, a file or anything not followed.
    pub fn model_sized(&self, inputs: &[Node<'_>], scope: usize) -> bool {
        self.model_dimension(inputs, scope).is_some()
    }

    /// Where [`Module::model_sized`] holds, the largest number known to
    /// size that state (a literal, or the default of a constructor's
    /// number: `np.eye(dimensions)` with `dimensions=32`); 0 where every
    /// number is one the user passes.
    pub fn model_dimension(&self, inputs: &[Node<'_>], scope: usize) -> Option<u64> {
        let function = self.function_of_scope(scope)?;
        let Some((class, true)) = self.method_class(function) else { return None };
        let mut trace = Trace::default();
        let found = inputs.iter().all(|input| self.state_made(*input, scope, class, Reading::Data, &mut trace));
        (found && trace.grounded).then_some(trace.largest)
    }

    /// Whether `expr` (in `scope`) is made from the model's state and
    /// numbers only, read as `reading` says.
    fn state_made(&self, expr: Node<'_>, scope: usize, class: Node<'t>, reading: Reading, trace: &mut Trace) -> bool {
        let mut pending: Vec<(Node<'_>, usize, Reading)> = vec![(expr, scope, reading)];
        while let Some((expr, scope, reading)) = pending.pop() {
            trace.steps += 1;
            if trace.steps > STATE_TRACE_STEPS {
                trace.provisional = true;
                return false;
            }
            match expr.kind_name() {
                "identifier" => {
                    let name = self.text_of(expr);
                    if self.import_at(name, expr.start_byte()).is_some() {
                        continue;
                    }
                    match self.lookup(scope, name, expr.start_byte()) {
                        // `_, r = qr(self.M)`: a part of what a call on the
                        // state returns is as large as the state.
                        Some(Binding::Assigned(rhs) | Binding::Unpacked(rhs, _)) => pending.push((rhs, scope, reading)),
                        Some(Binding::Number(Some(n))) => {
                            if reading == Reading::Shape {
                                trace.largest = trace.largest.max(n);
                            }
                        }
                        Some(Binding::LoopIndex) => {}
                        // A number the constructor takes sizes the state;
                        // one another method takes may be a count of data
                        // (`simulate(self, n_steps)`), and an array a caller
                        // passes is data of its own.
                        Some(Binding::Number(None)) if self.is_constructor(scope, class) => {}
                        Some(Binding::Parameter | Binding::Annotated(_)) if reading == Reading::Shape && self.is_constructor(scope, class) => {
                            if let Some(n) = self.integer_default(scope, name) {
                                trace.largest = trace.largest.max(n);
                            }
                        }
                        // `z : (dim_z, 1) array`: a shape the docstring
                        // gives in the constructor's numbers.
                        Some(Binding::Parameter | Binding::Annotated(_)) if self.documented_in_model_numbers(scope, name, class) => {}
                        // `@P.setter def P(self, value)`: the value a user
                        // sets the property to, documented for the class.
                        Some(Binding::Parameter) if reading == Reading::Data => {
                            let Some(largest) = self.setter_value_in_model_numbers(scope, name, class) else { return false };
                            trace.grounded = true;
                            trace.largest = trace.largest.max(largest);
                        }
                        // `dtype=float`
                        None if matches!(name, "float" | "int" | "bool" | "complex") => {}
                        _ => return false,
                    }
                }
                "attribute" => {
                    let Some(object) = expr.field("object") else { return false };
                    let Some(attribute) = expr.field("attribute") else { return false };
                    if self.text_of(object) == "self" {
                        // A number held on the instance (`self.alpha`, `self.dim_x`)
                        // is one of the constructor's numbers, or made from them.
                        let number = matches!(self.eval(expr, scope, 0), Value::Int(_) | Value::Scalar);
                        let reading = if number { Reading::Shape } else { reading };
                        let name = self.text_of(attribute).to_string();
                        if !self.attribute_made(&name, class, reading, trace) {
                            return false;
                        }
                        continue;
                    }
                    // `P.T`, `x.shape`: the same object's data (its shape sizes by it).
                    let reading = if matches!(self.text_of(attribute), "shape" | "size" | "ndim") { Reading::Data } else { reading };
                    pending.push((object, scope, reading));
                }
                "call" => {
                    let Some(function) = expr.field("function") else { return false };
                    let name = self.qualified_name(function);
                    let args = expr.field("arguments");
                    match name.as_deref() {
                        // An array made from a shape (`np.eye(dim_x)`) or
                        // drawn to one (`np.random.normal(0, 1, (k,))`):
                        // as large as its numbers say.
                        Some(n) if FROM_SHAPE.contains(&n) || self.knowledge.api(n).is_some_and(|api| api.kind == ApiKind::Generate) => {
                            if reading == Reading::Data {
                                trace.grounded = true;
                            }
                            for arg in arguments(expr) {
                                pending.push((arg, scope, Reading::Shape));
                            }
                            continue;
                        }
                        // `len(self.x)`: a dimension of the state.
                        Some("len") => {
                            pending.extend(super::positional_arguments(expr).into_iter().map(|a| (a, scope, Reading::Data)));
                            continue;
                        }
                        Some("int" | "float" | "abs" | "max" | "min" | "round") if reading == Reading::Shape => {
                            pending.extend(super::positional_arguments(expr).into_iter().map(|a| (a, scope, reading)));
                            continue;
                        }
                        _ => {}
                    }
                    if function.kind_name() == "attribute" {
                        let Some(object) = function.field("object") else { return false };
                        // The instance's own methods compute what this does not follow.
                        if matches!(self.text_of(object), "self" | "cls") {
                            let callable_state = self.eval(function, scope, 0) == Value::Unknown
                                && self.assignments_to_self(class).iter().any(|(_, a)| Some(*a) == function.field("attribute").map(|x| self.text_of(x)));
                            if !callable_state {
                                return false;
                            }
                        } else if self.qualified_name(object).is_none() {
                            // A method of data (`P.dot(F.T)`), not of a module.
                            pending.push((object, scope, reading));
                        }
                    } else if name.is_none() {
                        return false;
                    }
                    if let Some(args) = args {
                        let mut cursor = args.walk();
                        for arg in args.named_children(&mut cursor) {
                            match arg.kind_name() {
                                "comment" => {}
                                "keyword_argument" => pending.extend(arg.field("value").map(|v| (v, scope, reading))),
                                "list_splat" | "dictionary_splat" => return false,
                                _ => pending.push((arg, scope, reading)),
                            }
                        }
                    }
                }
                // An element or slice of the state is state; picked by an
                // index array (`self.h[inds]`), it is as large as the index.
                "subscript" => {
                    pending.extend(expr.field("value").map(|v| (v, scope, reading)));
                    let mut cursor = expr.walk();
                    pending.extend(expr.children_by_field_name("subscript", &mut cursor).map(|i| (i, scope, Reading::Data)));
                }
                "parenthesized_expression" | "unary_operator" | "binary_operator" | "tuple" | "list" | "boolean_operator" | "comparison_operator"
                | "conditional_expression" => {
                    // `G + lam * np.eye(k)`: a sum with an identity matrix has
                    // its shape (broadcasting against a k x k matrix leaves k x
                    // k), whatever the other side (a ridge added to a Gram
                    // matrix, `self.I - K @ H`).
                    let eye = (reading == Reading::Data
                        && expr.kind_name() == "binary_operator"
                        && expr.field("operator").is_some_and(|o| matches!(self.text_of(o), "+" | "-")))
                    .then(|| [expr.field("left"), expr.field("right")].into_iter().flatten().find_map(|o| self.identity_matrix(o, scope, 0)))
                    .flatten();
                    if let Some((eye, at)) = eye {
                        pending.push((eye, at, reading));
                        continue;
                    }
                    let mut cursor = expr.walk();
                    pending.extend(expr.named_children(&mut cursor).filter(|c| c.kind_name() != "comment").map(|c| (c, scope, reading)));
                }
                // `self.sim = sim = …`: what the inner assignment stores.
                "assignment" => pending.extend(expr.field("right").map(|r| (r, scope, reading))),
                "integer" => {
                    if reading == Reading::Shape {
                        trace.largest = trace.largest.max(parse_int(self.text_of(expr)).unwrap_or(u64::MAX));
                    }
                }
                "float" | "true" | "false" | "none" | "string" | "slice" | "ellipsis" => {}
                _ => return false,
            }
        }
        true
    }

    /// The identity matrix `expr` (in `scope`) is, scaled or summed
    /// (`np.eye(k)`, `lam * np.identity(k)`, `regul` assigned `a *
    /// np.eye(k) + b * np.eye(k)`, `self.I` stored as `np.eye(dim_x)` in
    /// every method that stores it): one `np.eye`/`np.identity` call of it,
    /// and the scope that call is in.
    /// (`depth`: as [`Module::eval`]'s, which it calls and is called from.)
    pub(crate) fn identity_matrix(&self, expr: Node<'t>, scope: usize, depth: u32) -> Option<(Node<'t>, usize)> {
        if self.cut(depth) {
            return None;
        }
        match expr.kind_name() {
            "call" => {
                let name = expr.field("function").and_then(|f| self.qualified_name(f))?;
                matches!(name.as_str(), "numpy.eye" | "numpy.identity").then_some((expr, scope))
            }
            "parenthesized_expression" => self.identity_matrix(expr.named_child(0)?, scope, depth + 1),
            "binary_operator" => {
                let (left, right) = (expr.field("left")?, expr.field("right")?);
                let number = |n: Node<'t>| matches!(self.eval(n, scope, depth + 1), Value::Int(_) | Value::Scalar);
                match expr.field("operator").map(|o| self.text_of(o))? {
                    "*" if number(left) => self.identity_matrix(right, scope, depth + 1),
                    "*" | "/" if number(right) => self.identity_matrix(left, scope, depth + 1),
                    "+" | "-" => {
                        let found = self.identity_matrix(left, scope, depth + 1)?;
                        self.identity_matrix(right, scope, depth + 1).map(|_| found)
                    }
                    _ => None,
                }
            }
            "identifier" => match self.lookup(scope, self.text_of(expr), expr.start_byte())? {
                Binding::Assigned(rhs) => self.identity_matrix(rhs, scope, depth + 1),
                _ => None,
            },
            "attribute" if expr.field("object").is_some_and(|o| self.text_of(o) == "self") => {
                let name = self.text_of(expr.field("attribute")?);
                let class = self.ancestors(expr).find(|c| c.kind_name() == "class_definition").filter(|c| !c.has_error())?;
                let mut found = None;
                for (at, attribute) in self.assignments_to_self(class) {
                    if attribute != name {
                        continue;
                    }
                    let assignment = self.root.descendant_for_byte_range(at, at + 5 + name.len()).and_then(|n| self.ancestors(n).find(|a| a.kind_name() == "assignment"))?;
                    let store_scope = self.enclosing_function(assignment).map_or(super::MODULE_SCOPE, |f| f.id());
                    found = Some(self.identity_matrix(assignment.field("right")?, store_scope, depth + 1)?);
                }
                found
            }
            _ => None,
        }
    }

    /// Whether every assignment to `self.name` in `class` is made from the
    /// model's state and numbers only (see [`Module::state_made`]).
    fn attribute_made(&self, name: &str, class: Node<'t>, reading: Reading, trace: &mut Trace) -> bool {
        let key = (name.to_string(), reading);
        if trace.in_progress.contains(&key) {
            trace.provisional = true;
            return true;
        }
        let memo = (class.id(), name.to_string(), reading == Reading::Shape);
        if let Some(&(known, largest)) = self.model_state.borrow().get(&memo) {
            trace.grounded |= known && reading == Reading::Data;
            trace.largest = trace.largest.max(largest);
            return known;
        }
        if trace.pending_true.contains(&key) {
            return true;
        }
        let pending_from = trace.pending_true.len();
        let outer_provisional = std::mem::take(&mut trace.provisional);
        let outer_grounded = std::mem::take(&mut trace.grounded);
        let outer_largest = std::mem::take(&mut trace.largest);
        let made = self.attribute_made_anew(name, class, reading, trace);
        let provisional = trace.provisional;
        let largest = trace.largest;
        trace.largest = trace.largest.max(outer_largest);
        // (A number is made from the constructor's: nothing more to ground it.)
        let grounded = trace.grounded || reading == Reading::Shape;
        trace.provisional |= outer_provisional;
        trace.grounded |= outer_grounded || (grounded && reading == Reading::Data);
        let outermost = trace.in_progress.is_empty();
        let remember = |known: bool| {
            self.model_state.borrow_mut().insert(memo.clone(), (known, largest));
        };
        if !made {
            // Not made of state even taking those in progress to be.
            if trace.steps <= STATE_TRACE_STEPS {
                remember(false);
            }
            trace.pending_true.truncate(pending_from);
            return false;
        }
        if !provisional || outermost {
            // Worked out whole: state if made somewhere from numbers. What
            // was taken for state while it was worked out holds with it.
            let taken = trace.pending_true.split_off(pending_from);
            if grounded {
                for (n, r) in taken {
                    self.model_state.borrow_mut().insert((class.id(), n, r == Reading::Shape), (true, largest));
                }
            }
            remember(grounded);
            return grounded;
        }
        trace.pending_true.push(key);
        true
    }

    /// [`Module::attribute_made`] worked out: every store to the attribute.
    fn attribute_made_anew(&self, name: &str, class: Node<'t>, reading: Reading, trace: &mut Trace) -> bool {
        let key = (name.to_string(), reading);
        // The class's docstring gives the attribute a shape in the
        // constructor's numbers (`P : numpy.array(dim_x, dim_x)`): whatever
        // is stored there, a setter's value included, is state that size.
        if reading == Reading::Data {
            if let Some(largest) = self.attribute_documented_in_model_numbers(name, class) {
                trace.grounded = true;
                trace.largest = trace.largest.max(largest);
                return true;
            }
        }
        // Every store to it, found in the class's text: `self.name = …` and
        // `self.name += …` give what it holds; a store this does not read
        // (an item of a tuple assigned, a loop's target) leaves it untold.
        let pattern = format!("self.{name}");
        let class_text = &self.text[class.byte_range()];
        let mut rights = Vec::new();
        for (at, _) in class_text.match_indices(&pattern) {
            let start = class.start_byte() + at;
            let end = start + pattern.len();
            if self.text[end..].starts_with(|c: char| c.is_alphanumeric() || c == '_') || self.text[..start].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '.') {
                continue;
            }
            let Some(node) = self.root.descendant_for_byte_range(start, end) else { return false };
            let Some(node) = [Some(node), self.parent(node)].into_iter().flatten().find(|n| n.kind_name() == "attribute" && n.byte_range() == (start..end)) else {
                continue; // inside a string or a comment
            };
            let Some(parent) = self.parent(node) else { continue };
            match parent.kind_name() {
                "assignment" | "augmented_assignment" if parent.field("left").is_some_and(|l| l.id() == node.id()) => {
                    let Some(right) = parent.field("right") else { return false };
                    let scope = self.enclosing_function(parent).map_or(super::MODULE_SCOPE, |f| f.id());
                    rights.push((right, scope));
                }
                "pattern_list" | "tuple_pattern" | "list_pattern" | "tuple" | "list" | "parenthesized_expression" => {
                    let stored = self.ancestors(node).take_while(|a| !matches!(a.kind_name(), "block" | "module" | "expression_statement")).any(|a| {
                        matches!(a.kind_name(), "assignment" | "for_statement" | "for_in_clause" | "with_item" | "augmented_assignment")
                            && a.field("left").or_else(|| a.field("value")).is_some_and(|l| l.start_byte() <= start && end <= l.end_byte())
                    });
                    if stored {
                        return false;
                    }
                }
                "for_statement" | "for_in_clause" if parent.field("left").is_some_and(|l| l.id() == node.id()) => return false,
                _ => {}
            }
        }
        // An update (`self.P = F @ self.P @ F.T + Q`, `self.x += K @ y`)
        // keeps the shape the other assignments give: the next step uses it
        // with the same matrices, and NumPy's in-place operators never
        // change a shape. Unless it grows it (`np.append(self.h, x)`).
        let mut made_anew = Vec::new();
        for (right, scope) in rights {
            // A Python collection on the instance grows as the code adds to it.
            if matches!(right.kind_name(), "list" | "dictionary" | "set" | "list_comprehension" | "dictionary_comprehension")
                || (right.kind_name() == "call" && right.field("function").is_some_and(|f| matches!(self.text_of(f), "list" | "dict" | "set" | "deque")))
            {
                return false;
            }
            let in_place = self.parent(right).is_some_and(|p| p.kind_name() == "augmented_assignment");
            let updates = in_place || self.made_from_attribute(right, scope, name);
            if !updates {
                made_anew.push((right, scope));
                continue;
            }
            let grows = self.preorder(right).any(|n| {
                n.kind_name() == "call"
                    && n.field("function").and_then(|f| self.qualified_name(f)).is_some_and(|q| GROWING.contains(&q.as_str()))
                    || n.kind_name() == "subscript" && n.field("value").and_then(|v| self.qualified_name(v)).is_some_and(|q| matches!(q.as_str(), "numpy.r_" | "numpy.c_"))
            });
            if grows {
                return false;
            }
        }
        if made_anew.is_empty() {
            return false;
        }
        trace.in_progress.push(key);
        let made = made_anew.into_iter().all(|(right, scope)| self.state_made(right, scope, class, reading, trace));
        trace.in_progress.pop();
        made
    }

    /// Whether `right` (in `scope`) is computed from what `self.name` held,
    /// read directly or through the method's names (`P = self.P` …
    /// `self.P = F @ P @ F.T + Q`).
    fn made_from_attribute(&self, right: Node<'t>, scope: usize, name: &str) -> bool {
        let mut pending = vec![right];
        let mut steps = 0;
        while let Some(expr) = pending.pop() {
            steps += 1;
            if steps > UPDATE_TRACE_STEPS {
                return false;
            }
            for n in self.preorder(expr) {
                match n.kind_name() {
                    "attribute" if self.is_self_attribute(n, name) => return true,
                    "identifier" if self.parent(n).is_none_or(|p| p.kind_name() != "attribute" || p.field("object").is_some_and(|o| o.id() == n.id())) => {
                        if let Some(Binding::Assigned(rhs)) = self.lookup(scope, self.text_of(n), n.start_byte()) {
                            pending.push(rhs);
                        }
                    }
                    _ => {}
                }
            }
        }
        false
    }

    /// Whether the docstring of function `scope` gives its parameter `name`
    /// a shape (or shapes) whose every dimension is a number written out or
    /// a parameter of `class`'s constructor (`z : (dim_z, 1) array_like`,
    /// with `__init__(self, dim_x, dim_z)`).
    fn documented_in_model_numbers(&self, scope: usize, name: &str, class: Node<'t>) -> bool {
        let Some(ty) = self.documented.get(&(scope, name)) else { return false };
        self.in_model_numbers(ty, class).is_some()
    }

    /// Whether `class`'s docstring documents `name` (an attribute, in its
    /// Attributes section or beside the parameters) with a shape whose every
    /// dimension is a number written out or one of the constructor's
    /// parameters, as [`Module::documented_in_model_numbers`] reads it; if
    /// so, the largest number known among them (see [`Module::in_model_numbers`]).
    fn attribute_documented_in_model_numbers(&self, name: &str, class: Node<'t>) -> Option<u64> {
        let doc = self.docstring(class)?;
        let (_, ty) = super::documented_types(doc).into_iter().find(|(n, _)| *n == name)?;
        self.in_model_numbers(ty, class)
    }

    /// Where function `scope` is the setter of a property of `class`
    /// (`@P.setter def P(self, value)`) and `name` its value, what
    /// [`Module::attribute_documented_in_model_numbers`] says of the
    /// property: the user sets it to an array of the documented shape.
    fn setter_value_in_model_numbers(&self, scope: usize, name: &str, class: Node<'t>) -> Option<u64> {
        let function = self.function_of_scope(scope)?;
        let decorated = self.parent(function).filter(|p| p.kind_name() == "decorated_definition")?;
        let property = self.text_of(function.field("name")?);
        let mut cursor = decorated.walk();
        let is_setter = decorated.named_children(&mut cursor).any(|d| {
            d.kind_name() == "decorator" && self.text_of(d).trim_start_matches('@').trim() == format!("{property}.setter")
        });
        let params = function.field("parameters")?;
        let value = params.named_children(&mut params.walk()).filter_map(super::parameter_name).nth(1)?;
        if !is_setter || self.text_of(value) != name {
            return None;
        }
        self.attribute_documented_in_model_numbers(property, class)
    }

    /// Whether the documented type `ty` gives shapes, each made of numbers
    /// written out and parameters of `class`'s constructor; if so, the
    /// largest of those numbers known (written out, or a parameter's
    /// integer default: `n_components=100`), 0 if none is.
    fn in_model_numbers(&self, ty: &str, class: Node<'t>) -> Option<u64> {
        let lower = ty.to_ascii_lowercase();
        let shapes = super::documented_shapes(&lower);
        let init = self.constructor(class)?;
        if shapes.is_empty() {
            return None;
        }
        // The constructor's numbers, lower-cased as the type is, with their defaults.
        let numbers: Vec<(String, Option<u64>)> = init
            .field("parameters")
            .map(|ps| {
                ps.named_children(&mut ps.walk())
                    .filter_map(|p| super::parameter_name(p).map(|n| (self.text_of(n).to_ascii_lowercase(), self.integer_default_of(p))))
                    .collect()
            })
            .unwrap_or_default();
        let mut largest = 0;
        for d in shapes.iter().flatten() {
            let known = match d.parse::<u64>() {
                Ok(n) => Some(n),
                Err(_) if *d == "self" => return None,
                Err(_) => numbers.iter().find(|(n, _)| n == d)?.1,
            };
            largest = largest.max(known.unwrap_or(0));
        }
        Some(largest)
    }

    /// The integer default of parameter `name` of function `scope`
    /// (`dimensions: int = 32`), if it has one.
    fn integer_default(&self, scope: usize, name: &str) -> Option<u64> {
        let params = self.function_of_scope(scope)?.field("parameters")?;
        let mut cursor = params.walk();
        let param = params.named_children(&mut cursor).find(|p| super::parameter_name(*p).is_some_and(|n| self.text_of(n) == name))?;
        self.integer_default_of(param)
    }

    /// A parameter's integer default (`n=30`, `n: int = 30`).
    fn integer_default_of(&self, param: Node<'_>) -> Option<u64> {
        if !matches!(param.kind_name(), "default_parameter" | "typed_default_parameter") {
            return None;
        }
        let value = param.field("value").filter(|v| v.kind_name() == "integer")?;
        parse_int(self.text_of(value))
    }

    /// `class`'s own `__init__`.
    fn constructor(&self, class: Node<'t>) -> Option<Node<'t>> {
        let body = class.field("body")?;
        let mut cursor = body.walk();
        let found = body.named_children(&mut cursor).find_map(|d| {
            let f = if d.kind_name() == "decorated_definition" { d.field("definition")? } else { d };
            (f.kind_name() == "function_definition" && f.field("name").is_some_and(|n| self.text_of(n) == "__init__")).then_some(f)
        });
        found
    }

    /// Whether `scope` is the `__init__` of `class`.
    fn is_constructor(&self, scope: usize, class: Node<'t>) -> bool {
        self.function_of_scope(scope).and_then(|f| super::constructor_class(self.text, f)).is_some_and(|c| c.id() == class.id())
    }
}
