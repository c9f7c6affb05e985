//! What a module means, as far as the rules need: which names are imported
//! from where, what values names hold (arrays, DataFrames, graphs, sizes),
//! which calls it makes and where (in a function, in a loop).
//!
//! Everything is collected in one iterative walk over the tree, so no input —
//! however deeply nested — can exhaust the stack, and values are evaluated on
//! demand with a depth limit.

use gpulens_syntax::NodeExt;
use rustc_hash::FxHashMap as HashMap;

use gpulens_knowledge::{ApiKind, ApiMapping, Knowledge, SizeSpec};
use gpulens_syntax::{grammar, Node, Tree};

/// How deep value evaluation may recurse through expressions and bindings.
const MAX_EVAL_DEPTH: u32 = 24;

/// NumPy's element-wise math: one formula per value, the shape kept.
pub(crate) const ELEMENTWISE_MATH: &[&str] = &[
    "numpy.exp", "numpy.exp2", "numpy.expm1", "numpy.log", "numpy.log10", "numpy.log2", "numpy.log1p", "numpy.sqrt",
    "numpy.cbrt", "numpy.power", "numpy.sin", "numpy.cos", "numpy.tan", "numpy.arcsin", "numpy.arccos", "numpy.arctan",
    "numpy.arctan2", "numpy.sinh", "numpy.cosh", "numpy.tanh", "numpy.hypot", "numpy.abs", "numpy.absolute",
    "numpy.floor", "numpy.ceil", "numpy.round", "numpy.rint", "numpy.sign", "numpy.where", "numpy.maximum",
    "numpy.minimum", "numpy.clip", "numpy.deg2rad", "numpy.rad2deg", "numpy.radians", "numpy.degrees",
];

/// Module attributes that are single numbers.
const NUMBER_CONSTANTS: &[&str] = &[
    "numpy.pi", "numpy.e", "numpy.euler_gamma", "numpy.inf", "numpy.nan", "math.pi", "math.e",
    "math.tau", "math.inf", "math.nan", "cmath.pi", "cmath.e", "cmath.tau",
];

/// What an expression holds, as far as sizes and types go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    Unknown,
    /// An integer whose value is known.
    Int(u64),
    /// A single number (a float literal, an array element, a loop index).
    Scalar,
    /// An array (or a Python list of numbers) with this many elements, if known.
    Array(Option<u64>),
    /// A pandas DataFrame or Series with this many rows, if known.
    Frame(Option<u64>),
    /// A NetworkX graph with this many nodes, if known.
    Graph(Option<u64>),
    /// The result of `DataFrame.groupby`/`rolling`/…: its aggregations give a
    /// DataFrame again, but are part of the call that grouped.
    Grouped(Option<u64>),
    /// Data already in GPU memory: a CuPy array (or 0-d result), a Numba
    /// device array.
    Device(Option<u64>),
    /// A cuDF DataFrame or Series (GPU memory).
    GpuFrame,
    /// A CPU model or search index from a library the knowledge base maps
    /// (the `cpu` name of its entry: `sklearn.neighbors.NearestNeighbors`).
    Model(&'static str),
}

impl Value {
    /// Number of elements the value stands for, when known.
    pub fn elements(self) -> Option<u64> {
        match self {
            Value::Int(_) | Value::Scalar => Some(1),
            Value::Array(n) | Value::Frame(n) | Value::Graph(n) | Value::Grouped(n) | Value::Device(n) => n,
            Value::Unknown | Value::GpuFrame | Value::Model(_) => None,
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Binding<'t> {
    /// `name = expr`
    Assigned(Node<'t>),
    /// `def f(name: annotation)`
    Annotated(Node<'t>),
    /// `for name in range(…)`
    LoopIndex,
    /// `a, b = expr` in a function: one element of what `expr` holds.
    Unpacked(Node<'t>),
    /// `for x in expr`, `for i, x in enumerate(expr)`, `for x, y in zip(expr, …)`:
    /// one element of what `expr` holds at a time.
    Element(Node<'t>),
    /// `def f(name)`, `def f(name=default)`, `*name`, `**name`: whatever the caller passes.
    Parameter,
    /// `def f(name=1.5)`, or a parameter the function's docstring documents
    /// as a number (`name : int`): one number. With an integer default
    /// (`m=30`), that value: the size the function is written for, unless
    /// a caller passes another.
    Number(Option<u64>),
}

/// A call site and its context.
#[derive(Debug, Clone, Copy)]
pub struct CallSite<'t> {
    pub node: Node<'t>,
    pub scope: usize,
    /// How many loops (for, while, comprehensions) enclose it.
    pub loop_depth: u32,
    /// Inside an `if`/`while` condition or an `assert`: checking data, not working on it.
    pub in_check: bool,
}

/// An `if`/`while` condition and whether it is evaluated repeatedly.
#[derive(Debug, Clone, Copy)]
pub struct ConditionSite<'t> {
    pub node: Node<'t>,
    pub scope: usize,
    /// Inside a loop body, or the condition of a `while`.
    pub repeats: bool,
}

/// A `for` loop and its context.
#[derive(Debug, Clone, Copy)]
pub struct LoopSite<'t> {
    pub node: Node<'t>,
    pub scope: usize,
    /// Loops enclosing this one.
    pub loop_depth: u32,
}

/// A `# gpulens: ignore[…]` comment.
#[derive(Debug, Clone)]
pub struct Suppression {
    pub offset: usize,
    /// Empty: every code.
    pub codes: Vec<String>,
}

/// A name that code inside a function can reach outside it (see
/// [`Module::outside_names`]).
#[derive(Debug, Default)]
pub struct OutsideName<'t> {
    /// Offsets of its module-level bindings.
    pub bound_at: Vec<usize>,
    /// A hash of everything it is bound to.
    pub hash: u64,
    /// What it is bound to (assigned values, annotations, import targets,
    /// decorators): a function that uses the name also depends on the
    /// outside names these mention.
    pub texts: Vec<&'t str>,
    /// Not only assignments bind it: an import (in the module or in some
    /// function) or a GPU kernel's definition.
    pub imported: bool,
}

/// Where a class's `self.x = …` statements start, and each attribute's length.
type SelfAssignments = std::rc::Rc<Vec<(usize, usize)>>;
/// Where the names of a class's methods at one column are.
type MethodNames = std::rc::Rc<Vec<std::ops::Range<usize>>>;

pub struct Module<'t> {
    pub text: &'t str,
    /// Local name → fully qualified module or object (`np` → `numpy`), with
    /// the byte range of the scope (module or function) the import binds it in.
    imports: rustc_hash::FxHashMap<&'t str, Vec<(std::ops::Range<usize>, String)>>,
    /// Bindings of each (scope, name), in source order, with the offset where each is made.
    bindings: rustc_hash::FxHashMap<(usize, &'t str), Vec<(usize, Binding<'t>)>>,
    /// The type each parameter's docstring gives it (`points : (n, 3) float`),
    /// by scope and name: the shape readers parse it when they ask.
    documented: rustc_hash::FxHashMap<(usize, &'t str), &'t str>,
    pub calls: Vec<CallSite<'t>>,
    pub loops: Vec<LoopSite<'t>>,
    pub conditions: Vec<ConditionSite<'t>>,
    /// `a @ b` expressions, with their scope.
    pub matmuls: Vec<(Node<'t>, usize)>,
    /// Byte ranges of test functions (`test_*`) and pytest fixtures: their data
    /// is small by design, so advice about speed is never right there.
    pub tests: Vec<std::ops::Range<usize>>,
    /// `decorated_definition` nodes (functions with decorators), in source order.
    pub decorated: Vec<Node<'t>>,
    /// `import …` and `from … import …` statements.
    import_nodes: Vec<Node<'t>>,
    pub suppressions: Vec<Suppression>,
    knowledge: &'static Knowledge,
    root: Node<'t>,
    /// Names of the module-level `def`s and `class`es, gathered on first use.
    definitions: std::cell::OnceCell<rustc_hash::FxHashSet<String>>,
    /// Module-level functions left out of the tree (a partial parse): their
    /// names are still taken.
    pub(crate) hidden_definitions: rustc_hash::FxHashSet<String>,
    /// Function node id → what the context rules read in it, gathered on
    /// first use (they read a function once per call in it). Byte ranges,
    /// not nodes: a cell holding nodes would pin the tree's lifetime.
    function_facts: std::cell::RefCell<HashMap<usize, std::rc::Rc<FunctionFacts>>>,
    /// Whether the text names a GPU library, worked out on first use.
    gpu_library: std::cell::OnceCell<bool>,
    /// (node id, question) → a yes/no answer about it worked out once.
    answers: std::cell::RefCell<HashMap<(usize, &'static str), bool>>,
    /// (class node, attribute) → what `self.attribute` holds, worked out on first use.
    attributes: std::cell::RefCell<HashMap<(usize, String), Value>>,
    /// Class node id → its `self.x = …` statements (see [`self_assignments`]):
    /// where each starts in the text, and the attribute's length after
    /// `self.`. A large class's text is read once, not once per attribute
    /// asked about. (Offsets, not text: a cell holding `&'t str` would pin
    /// the lifetime, as with `function_facts`.)
    class_assignments: std::cell::RefCell<HashMap<usize, SelfAssignments>>,
    /// (Class node id, column) → where the names of the methods it defines
    /// at that column are (see [`Module::class_methods`]).
    class_methods: std::cell::RefCell<HashMap<(usize, usize), MethodNames>>,
    /// (Expression node id, scope) → its value and the depth its
    /// evaluation reached below it, for evaluations that the depth limit
    /// cut nowhere (see [`Module::eval`]).
    evaluated: std::cell::RefCell<HashMap<(usize, usize), (Value, u32)>>,
    /// (Expression node id, scope, depth) → its value, for evaluations the
    /// limit cut somewhere.
    evaluated_cut: std::cell::RefCell<HashMap<(usize, usize, u32), Value>>,
    /// The deepest depth the evaluation under way has reached; past
    /// [`MAX_EVAL_DEPTH`] when the limit cut it.
    reached: std::cell::Cell<u32>,
    /// Node id → its parent's index in `parent_nodes`, for every named node
    /// the walk entered (see [`Module::parent`]): tree-sitter's own
    /// `parent()` walks down from the root on every call. An index, not the
    /// node, keeps the table small (it grows as the walk goes: reserving by
    /// the tree's size saved no time and took more memory).
    parents: rustc_hash::FxHashMap<usize, u32>,
    /// The nodes with a named child, each once.
    parent_nodes: Vec<Node<'t>>,
    /// Every node the walk visited, in its order (source order, each node
    /// before its children): the rules walk a function's nodes many times
    /// (its facts, its calls, its loops), and a step through this list
    /// costs a few instructions where a step of tree-sitter's cursor costs
    /// hundreds. See [`Module::preorder`].
    order: Vec<Node<'t>>,
    /// For each node in `order`, the index past its last descendant there;
    /// [`NOT_WALKED`] marks a node the walk did not enter (an import, a
    /// skipped definition), whose descendants are not in `order`.
    ends: Vec<u32>,
}

/// Marks, in [`Module::ends`], a node whose descendants the walk skipped.
const NOT_WALKED: u32 = 1 << 31;

pub(crate) const MODULE_SCOPE: usize = usize::MAX;

/// The iterator [`Module::preorder`] returns.
pub struct Preorder<'m, 't> {
    order: &'m [Node<'t>],
    ends: &'m [u32],
    /// The next node of `order` to give, and where the walk ends there.
    at: usize,
    end: usize,
    /// The descendants of a node the module's walk did not enter, walked by
    /// tree-sitter's cursor.
    below: Option<gpulens_syntax::Preorder<'t>>,
}

impl<'t> Iterator for Preorder<'_, 't> {
    type Item = Node<'t>;

    fn next(&mut self) -> Option<Node<'t>> {
        if let Some(below) = &mut self.below {
            if let Some(node) = below.next() {
                return Some(node);
            }
            self.below = None;
        }
        let node = *self.order[..self.end].get(self.at)?;
        if self.ends[self.at] & NOT_WALKED != 0 {
            let mut below = gpulens_syntax::preorder(node);
            below.next();
            self.below = Some(below);
        }
        self.at += 1;
        Some(node)
    }
}

/// What a function holds that the context rules read, in source order.
#[derive(Debug, Default)]
pub(crate) struct FunctionFacts {
    /// Subscripts: (the subscripted value, the index).
    pub subscripts: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)>,
    /// Comparisons (`a.shape == (3, 3)`).
    pub comparisons: Vec<std::ops::Range<usize>>,
    /// The names of the function definitions in it (its own first).
    pub definitions: Vec<std::ops::Range<usize>>,
    /// Every identifier.
    pub identifiers: Vec<std::ops::Range<usize>>,
}

impl<'t> Module<'t> {
    pub fn new(text: &'t str, tree: &'t Tree, knowledge: &'static Knowledge) -> Self {
        Self::new_skipping(text, tree, knowledge, &[])
    }

    /// Like [`Module::new`], but does not look inside the nodes in `skip`
    /// (definitions whose findings are already known; sorted node ids); a
    /// skipped decorated definition is still listed in `decorated`.
    pub fn new_skipping(text: &'t str, tree: &'t Tree, knowledge: &'static Knowledge, skip: &[usize]) -> Self {
        Self::new_skipping_unless(text, tree, knowledge, skip, &|| false).expect("never cancelled")
    }

    /// [`Module::new_skipping`], asking `cancel` every few thousand nodes and
    /// giving up (`None`) when it answers true.
    pub fn new_skipping_unless(
        text: &'t str,
        tree: &'t Tree,
        knowledge: &'static Knowledge,
        skip: &[usize],
        cancel: &dyn Fn() -> bool,
    ) -> Option<Self> {
        let mut module = Module {
            root: tree.root_node(),
            definitions: std::cell::OnceCell::new(),
            hidden_definitions: rustc_hash::FxHashSet::default(),
            attributes: std::cell::RefCell::new(HashMap::default()),
            class_assignments: std::cell::RefCell::new(HashMap::default()),
            class_methods: std::cell::RefCell::new(HashMap::default()),
            evaluated: std::cell::RefCell::new(HashMap::default()),
            evaluated_cut: std::cell::RefCell::new(HashMap::default()),
            reached: std::cell::Cell::new(0),
            function_facts: std::cell::RefCell::new(HashMap::default()),
            answers: std::cell::RefCell::new(HashMap::default()),
            gpu_library: std::cell::OnceCell::new(),
            text,
            imports: rustc_hash::FxHashMap::default(),
            bindings: rustc_hash::FxHashMap::default(),
            documented: rustc_hash::FxHashMap::default(),
            calls: Vec::new(),
            loops: Vec::new(),
            conditions: Vec::new(),
            matmuls: Vec::new(),
            tests: Vec::new(),
            decorated: Vec::new(),
            import_nodes: Vec::new(),
            suppressions: Vec::new(),
            knowledge,
            parents: rustc_hash::FxHashMap::default(),
            parent_nodes: Vec::new(),
            order: Vec::new(),
            ends: Vec::new(),
        };
        if skip.is_empty() {
            // The walk visits every node but those under imports: room for
            // them all at once, instead of growing the lists and the map by
            // doubling (copies and rehashes were about 2% of a cold check's
            // time). With definitions skipped (an edit's analysis) most of
            // the tree isn't walked, and the lists grow as they go.
            let nodes = tree.root_node().descendant_count();
            module.order.reserve(nodes);
            module.ends.reserve(nodes);
            module.parents.reserve(nodes * 3 / 4);
        }
        module.collect(tree, skip, cancel).then_some(module)
    }

    /// Names assigned at module level.
    pub(crate) fn module_level_names(&self) -> impl Iterator<Item = &'t str> + '_ {
        self.bindings.keys().filter(|(s, _)| *s == MODULE_SCOPE).map(|(_, n)| *n)
    }

    /// Whether the module imports a GPU library (in the code this analysis
    /// walked): without one, no value is on the GPU, no decorator makes a
    /// kernel, and no `GPU…` rule applies.
    pub(crate) fn mentions_gpu_library(&self) -> bool {
        *self.gpu_library.get_or_init(|| {
            // (The imports are few: reading them costs less than a search of the text.)
            self.imports.values().flatten().any(|(_, target)| crate::GPU_MODULES.contains(&target.split('.').next().unwrap_or(target)))
        })
    }

    /// What the context rules read in `function`, walked once.
    pub(crate) fn facts_of(&self, function: Node<'_>) -> std::rc::Rc<FunctionFacts> {
        if let Some(facts) = self.function_facts.borrow().get(&function.id()) {
            return facts.clone();
        }
        let mut facts = FunctionFacts::default();
        let g = gpulens_syntax::grammar();
        for n in self.preorder(function) {
            match n.kind_id() {
                k if k == g.subscript => {
                    if let (Some(value), Some(index)) = (n.field("value"), n.field("subscript")) {
                        // `m[0, 1]` has one `subscript` field per index: take them all.
                        let mut cursor = n.walk();
                        let end = n.children_by_field_name("subscript", &mut cursor).last().map_or(index.end_byte(), |i| i.end_byte());
                        facts.subscripts.push((value.byte_range(), index.start_byte()..end));
                    }
                }
                k if k == g.comparison_operator => facts.comparisons.push(n.byte_range()),
                k if k == g.function_definition => facts.definitions.extend(n.field("name").map(|n| n.byte_range())),
                k if k == g.identifier => facts.identifiers.push(n.byte_range()),
                _ => {}
            }
        }
        let facts = std::rc::Rc::new(facts);
        self.function_facts.borrow_mut().insert(function.id(), facts.clone());
        facts
    }

    /// `answer()`, worked out once per (node, question).
    pub(crate) fn answer_once(&self, node: Node<'_>, question: &'static str, answer: impl FnOnce() -> bool) -> bool {
        if let Some(known) = self.answers.borrow().get(&(node.id(), question)) {
            return *known;
        }
        let known = answer();
        self.answers.borrow_mut().insert((node.id(), question), known);
        known
    }

    /// Whether a module-level `def` or `class` (decorated or not) is named `name`.
    pub(crate) fn defined_at_module_level(&self, name: &str) -> bool {
        let definitions = self.definitions.get_or_init(|| {
            let mut cursor = self.root.walk();
            let children: Vec<Node<'t>> = self.root.named_children(&mut cursor).collect();
            children
                .into_iter()
                .filter_map(|child| {
                    let d = if child.kind_name() == "decorated_definition" { child.field("definition") } else { Some(child) };
                    d.and_then(|d| d.field("name")).map(|n| self.text[n.byte_range()].to_string())
                })
                .collect()
        });
        definitions.contains(name) || self.hidden_definitions.contains(name)
    }

    /// Whether the module level assigns `name`.
    pub(crate) fn assigned_at_module_level(&self, name: &str) -> bool {
        self.bindings.contains_key(&(MODULE_SCOPE, name))
    }

    /// The smallest node covering `range`.
    pub(crate) fn node_at(&self, range: std::ops::Range<usize>) -> Option<Node<'t>> {
        self.root.descendant_for_byte_range(range.start, range.end)
    }

    /// `node.parent()`, answered from the walk for the nodes it entered (a
    /// hash lookup, where tree-sitter walks down from the root); other nodes
    /// (anonymous ones, those inside skipped definitions) ask the tree.
    /// `node` must belong to this module's tree.
    pub fn parent(&self, node: Node<'t>) -> Option<Node<'t>> {
        match self.parents.get(&node.id()) {
            Some(parent) => Some(self.parent_nodes[*parent as usize]),
            None => node.parent(),
        }
    }

    /// The ancestors of `node`, innermost first (see [`Module::parent`]).
    pub fn ancestors(&self, node: Node<'t>) -> impl Iterator<Item = Node<'t>> + '_ {
        std::iter::successors(self.parent(node), move |n| self.parent(*n))
    }

    /// Every node under `node` (itself first), in source order: what
    /// [`gpulens_syntax::preorder`] gives, read from the walk's list where the
    /// walk entered `node` (see [`Module::order`]). `node` must belong to
    /// this module's tree.
    pub fn preorder(&self, node: Node<'t>) -> Preorder<'_, 't> {
        let start = node.start_byte();
        let mut at = self.order.partition_point(|n| n.start_byte() < start);
        while let Some(n) = self.order.get(at).filter(|n| n.start_byte() == start) {
            if n.id() == node.id() {
                return Preorder { order: &self.order, ends: &self.ends, at, end: self.ends[at] as usize & !(NOT_WALKED as usize), below: None };
            }
            at += 1;
        }
        Preorder { order: &[], ends: &[], at: 0, end: 0, below: Some(gpulens_syntax::preorder(node)) }
    }

    /// The innermost function definition holding `node`, if any.
    pub fn enclosing_function(&self, node: Node<'t>) -> Option<Node<'t>> {
        self.ancestors(node).find(|n| n.kind_name() == "function_definition")
    }

    pub fn knowledge(&self) -> &'static Knowledge {
        self.knowledge
    }

    pub fn text_of(&self, node: Node<'_>) -> &'t str {
        &self.text[node.byte_range()]
    }

    /// Imports made inside a scope narrower than the module (a class body, a
    /// function): local name, the scope's byte range, qualified target.
    pub(crate) fn scoped_imports(&self) -> impl Iterator<Item = (&'t str, &std::ops::Range<usize>, &str)> + '_ {
        let whole = 0..self.text.len();
        self.imports.iter().flat_map(move |(name, list)| {
            let whole = whole.clone();
            list.iter().filter(move |(scope, _)| *scope != whole).map(move |(scope, target)| (*name, scope, target.as_str()))
        })
    }

    /// Imports visible at byte `offset`, local name → qualified target.
    pub fn imports_at(&self, offset: usize) -> impl Iterator<Item = (&str, &str)> {
        self.imports.keys().filter_map(move |k| self.import_at(k, offset).map(|t| (*k, t)))
    }

    /// What code inside a function can reach outside it that a rule could
    /// use, by name: imports of the libraries the rules know (`relevant`
    /// decides), names assigned at module level, and GPU kernels (launched
    /// by name). Each name comes with the offsets of its module-level
    /// bindings (which one a use sees depends on where it is) and a hash of
    /// what it is bound to.
    pub fn outside_names<'a>(&'a self, relevant: impl Fn(&str) -> bool) -> HashMap<&'t str, OutsideName<'a>> {
        use std::hash::{Hash, Hasher};
        let mut out: HashMap<&'t str, OutsideName<'a>> = HashMap::default();
        let mut add = |name: &'t str, at: Option<usize>, what: &'a str, imported: bool| {
            let entry = out.entry(name).or_default();
            entry.imported |= imported;
            entry.bound_at.extend(at);
            let mut h = rustc_hash::FxHasher::default();
            entry.hash.hash(&mut h);
            what.hash(&mut h);
            entry.hash = h.finish();
            entry.texts.push(what);
        };
        for (name, list) in &self.imports {
            for (scope, target) in list.iter().filter(|(_, t)| relevant(t)) {
                let module_level = scope.start == 0 && scope.end == self.text.len();
                add(name, None, if module_level { "import" } else { "local import" }, true);
                add(name, None, target, true);
            }
        }
        for ((scope, name), list) in &self.bindings {
            if *scope == MODULE_SCOPE {
                for (at, binding) in list {
                    // The kind of binding and what it binds (`N = 10` and `N: 10` differ).
                    let (kind, what) = match binding {
                        Binding::Assigned(rhs) => ("=", self.text_of(*rhs)),
                        Binding::Annotated(ty) => (":", self.text_of(*ty)),
                        Binding::LoopIndex => ("for", ""),
                        Binding::Unpacked(rhs) => ("unpack", self.text_of(*rhs)),
                        Binding::Element(of) => ("element", self.text_of(*of)),
                        Binding::Parameter => ("parameter", ""),
                        Binding::Number(_) => ("number", ""),
                    };
                    add(name, Some(*at), kind, false);
                    add(name, None, what, false);
                }
            }
        }
        // Only a decorator imported from Numba or Warp makes a kernel: a
        // module that imports neither has none (pandas' `@doc(...)`s).
        let kernels = self.imports.values().flatten().any(|(_, target)| within(target, "numba") || within(target, "warp"));
        for d in self.decorated.iter().filter(|_| kernels) {
            let Some(def) = d.field("definition") else { continue };
            let on_gpu = self
                .decorators(*d)
                .iter()
                .any(|(_, target)| target.as_deref().is_some_and(|n| n.starts_with("numba.") || n.starts_with("warp.")));
            if let (true, Some(name)) = (on_gpu, def.field("name")) {
                add(self.text_of(name), None, &self.text[d.start_byte()..def.start_byte()], true);
            }
        }
        out
    }

    /// The decorators of a decorated definition, each with what it resolves
    /// to through the imports (`@cuda.jit(...)` → `numba.cuda.jit`).
    pub fn decorators<'a>(&self, decorated: Node<'a>) -> Vec<(Node<'a>, Option<String>)> {
        let mut cursor = decorated.walk();
        let found = decorated
            .named_children(&mut cursor)
            .filter(|n| n.kind_name() == "decorator")
            .map(|d| {
                let expr = d.named_child(0);
                let callee = expr.and_then(|e| if e.kind_name() == "call" { e.field("function") } else { Some(e) });
                (d, callee.and_then(|c| self.qualified_name(c)))
            })
            .collect();
        found
    }

    /// Whether some import (in any scope) binds `name` to a target `keep` accepts.
    pub(crate) fn imports_name_as(&self, name: &str, keep: impl Fn(&str) -> bool) -> bool {
        self.imports.get(name).is_some_and(|list| list.iter().any(|(_, target)| keep(target)))
    }

    /// What `name` is imported as at `offset`: the innermost scope's import wins.
    pub(crate) fn import_at(&self, name: &str, offset: usize) -> Option<&str> {
        self.imports
            .get(name)?
            .iter()
            .filter(|(scope, _)| scope.contains(&offset) || scope.end == offset)
            .min_by_key(|(scope, _)| scope.len())
            .map(|(_, target)| target.as_str())
    }

    fn add_import(&mut self, scope: std::ops::Range<usize>, name: &'t str, target: String) {
        self.imports.entry(name).or_default().push((scope, target));
    }

    /// Walks the tree (but the definitions in `skip`); false when `cancel`
    /// stopped it.
    fn collect(&mut self, tree: &'t Tree, skip: &[usize], cancel: &dyn Fn() -> bool) -> bool {
        // One frame per entered node: what entering it changed, undone on exit.
        struct Frame<'n> {
            node: Node<'n>,
            /// Its place in `order`.
            at: u32,
            index: Option<u32>,
            kind: u16,
            scope: bool,
            repeats: bool,
            check: bool,
        }
        let g = grammar();
        let mut cursor = tree.walk();
        let mut frames: Vec<Frame> = Vec::new();
        let mut scopes: Vec<usize> = vec![MODULE_SCOPE];
        let mut scope_ranges: Vec<std::ops::Range<usize>> = Vec::new();
        scope_ranges.push(0..self.text.len());
        let mut loop_depth = 0u32;
        let mut check_depth = 0u32;
        let mut visited = 0u32;
        loop {
            visited = visited.wrapping_add(1);
            if visited.is_multiple_of(2048) && cancel() {
                return false;
            }
            let node = cursor.node();
            let kind = node.kind_id();
            let at = self.order.len() as u32;
            self.order.push(node);
            self.ends.push(at + 1);
            // Record its parent (stored when its first named child is entered).
            if let Some(parent) = frames.last_mut().filter(|_| node.is_named()) {
                let index = *parent.index.get_or_insert_with(|| {
                    self.parent_nodes.push(parent.node);
                    self.parent_nodes.len() as u32 - 1
                });
                self.parents.insert(node.id(), index);
            }
            let skipped = !skip.is_empty()
                && (kind == g.function_definition || kind == g.decorated_definition)
                && skip.binary_search(&node.id()).is_ok();
            // An import is read whole where it stands. Nothing below it
            // matters to the rules but a comment (a suppression), so without
            // one it is not walked into: a module's imports are a good part
            // of what a walk outside its functions visits, at every edit.
            let import = kind == g.import_statement || kind == g.import_from_statement;
            if import {
                self.import_nodes.push(node);
                let scope = import_scope(&scope_ranges, node);
                if kind == g.import_statement {
                    self.collect_import(node, scope);
                } else {
                    self.collect_import_from(node, scope);
                }
            }
            if skipped || (import && !self.text.as_bytes()[node.byte_range()].contains(&b'#')) {
                if kind == g.decorated_definition {
                    self.decorated.push(node);
                }
                self.ends[at as usize] |= NOT_WALKED;
                // Treat as a leaf: move on to its next sibling.
                loop {
                    if cursor.goto_next_sibling() {
                        break;
                    }
                    if !cursor.goto_parent() {
                        return true;
                    }
                    let done = frames.pop().expect("one frame per entered node");
                    self.ends[done.at as usize] = self.order.len() as u32;
                    scopes.truncate(scopes.len() - done.scope as usize);
                    scope_ranges.truncate(scope_ranges.len() - done.scope as usize);
                    loop_depth -= done.repeats as u32;
                    check_depth -= done.check as u32;
                }
                continue;
            }
            let parent = frames.last().map_or(0, |f| f.kind);
            // Only these parents give a child a field the walk reads (a
            // condition, a loop's body): asking the cursor for the field
            // costs a search up its stack, at every node.
            let field = if parent == g.if_statement
                || parent == g.elif_clause
                || parent == g.while_statement
                || parent == g.for_statement
            {
                cursor.field_id()
            } else {
                None
            };
            // Conditions and assertions check data; they are not the work.
            let is_condition = field == Some(g.f_condition);
            let check = is_condition || kind == g.assert_statement;
            let mut frame = Frame { node, at, index: None, kind, scope: false, repeats: false, check };
            check_depth += check as u32;
            if is_condition && (parent == g.if_statement || parent == g.elif_clause || parent == g.while_statement) {
                let repeats = loop_depth > 0 || parent == g.while_statement;
                self.conditions.push(ConditionSite { node, scope: *scopes.last().unwrap(), repeats });
            }
            if kind == g.call {
                self.calls.push(CallSite { node, scope: *scopes.last().unwrap(), loop_depth, in_check: check_depth > 0 });
            } else if kind == g.assignment {
                self.collect_assignment(node, *scopes.last().unwrap());
            } else if kind == g.function_definition || kind == g.lambda {
                if kind == g.function_definition
                    && node.field("name").is_some_and(|n| self.text[n.byte_range()].starts_with("test"))
                {
                    self.tests.push(node.byte_range());
                }
                scopes.push(node.id());
                scope_ranges.push(node.byte_range());
                frame.scope = true;
                if let Some(params) = node.field("parameters") {
                    self.collect_parameters(params, node.id());
                }
            } else if kind == g.class_definition {
                // A class body is a scope of its own, which its methods do not see.
                scopes.push(node.id());
                scope_ranges.push(node.byte_range());
                frame.scope = true;
            } else if kind == g.for_statement {
                let scope = *scopes.last().unwrap();
                self.collect_loop_target(node, scope);
                self.loops.push(LoopSite { node, scope, loop_depth });
            } else if kind == g.block {
                // Only a loop's body repeats; its iterable is evaluated once.
                frame.repeats =
                    field == Some(g.f_body) && (parent == g.for_statement || parent == g.while_statement);
            } else if kind == g.list_comprehension
                || kind == g.set_comprehension
                || kind == g.dictionary_comprehension
                || kind == g.generator_expression
            {
                frame.repeats = true;
            } else if kind == g.decorated_definition {
                self.decorated.push(node);
                let fixture = node
                    .named_children(&mut node.walk())
                    .any(|d| d.kind_name() == "decorator" && self.text[d.byte_range()].contains("fixture"));
                // A test's decorators (`@pytest.mark.parametrize(...)`) hold its data.
                let test = node
                    .field("definition")
                    .filter(|d| d.kind_id() == g.function_definition)
                    .and_then(|d| d.field("name"))
                    .is_some_and(|n| self.text[n.byte_range()].starts_with("test"));
                if fixture || test {
                    self.tests.push(node.byte_range());
                }
            } else if kind == g.binary_operator {
                if node.child_by_field_id(g.f_operator.get()).is_some_and(|op| &self.text[op.byte_range()] == "@") {
                    self.matmuls.push((node, *scopes.last().unwrap()));
                }
            } else if kind == g.comment {
                self.collect_comment(node);
            }
            loop_depth += frame.repeats as u32;
            frames.push(frame);
            if cursor.goto_first_child() {
                continue;
            }
            // Exit finished nodes until one has a next sibling.
            loop {
                let done = frames.pop().expect("one frame per entered node");
                self.ends[done.at as usize] = self.order.len() as u32;
                scopes.truncate(scopes.len() - done.scope as usize);
                scope_ranges.truncate(scope_ranges.len() - done.scope as usize);
                loop_depth -= done.repeats as u32;
                check_depth -= done.check as u32;
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return true;
                }
            }
        }
    }

    /// Records a binding that takes effect at the end of `name`'s statement.
    fn bind(&mut self, scope: usize, name: Node<'t>, binding: Binding<'t>) {
        let at = match binding {
            Binding::Assigned(rhs) => rhs.end_byte(),
            _ => name.start_byte(),
        };
        let name = &self.text[name.byte_range()];
        self.bindings.entry((scope, name)).or_default().push((at, binding));
    }

    fn collect_parameters(&mut self, params: Node<'t>, scope: usize) {
        let documented = params.parent().map(|f| documented_types(self.docstring(f).unwrap_or(""))).unwrap_or_default();
        let mut cursor = params.walk();
        for param in params.named_children(&mut cursor) {
            let annotation = match param.kind_name() {
                "typed_parameter" | "typed_default_parameter" => param.field("type"),
                _ => None,
            };
            let Some(name) = parameter_name(param) else { continue };
            let text = &self.text[name.byte_range()];
            let documented_type = documented.iter().find(|(n, _)| *n == text).map(|(_, ty)| *ty);
            if let Some(ty) = documented_type {
                self.documented.insert((scope, text), ty);
            }
            let binding = match annotation {
                Some(ty) => Binding::Annotated(ty),
                None => {
                    // The docstring's word wins over the default (`n_cycles=7.0`
                    // documented as `float | array-like`).
                    let number = match documented_type {
                        Some(ty) => number_type(ty),
                        None => param.kind_name() == "default_parameter" && param.field("value").is_some_and(number_literal),
                    };
                    let default = param
                        .field("value")
                        .filter(|v| param.kind_name() == "default_parameter" && v.kind_name() == "integer")
                        .and_then(|v| parse_int(&self.text[v.byte_range()]));
                    if number { Binding::Number(default) } else { Binding::Parameter }
                }
            };
            self.bind(scope, name, binding);
        }
    }

    /// The docstring of a function definition: the text of the string that
    /// is its body's first statement.
    fn docstring(&self, function: Node<'t>) -> Option<&'t str> {
        let body = function.field("body")?;
        let first = body.named_child(0).filter(|s| s.kind_name() == "expression_statement")?;
        let string = first.named_child(0).filter(|s| s.kind_name() == "string")?;
        Some(&self.text[string.byte_range()])
    }

    fn collect_loop_target(&mut self, node: Node<'t>, scope: usize) {
        let (Some(left), Some(right)) = (node.field("left"), node.field("right")) else {
            return;
        };
        let called = (right.kind_name() == "call").then(|| right.field("function").map(|f| self.text_of(f))).flatten();
        let names = |pattern: Node<'t>| -> Vec<Node<'t>> {
            let mut cursor = pattern.walk();
            pattern.named_children(&mut cursor).collect()
        };
        match (left.kind_name(), called) {
            ("identifier", Some("range")) => self.bind(scope, left, Binding::LoopIndex),
            ("identifier", _) => self.bind(scope, left, Binding::Element(right)),
            // `for i, x in enumerate(a)`: `i` counts like a range index, `x` is an element of `a`.
            ("pattern_list" | "tuple_pattern", Some("enumerate")) => {
                let targets = names(left);
                if let Some(index) = targets.first().filter(|i| i.kind_name() == "identifier") {
                    self.bind(scope, *index, Binding::LoopIndex);
                }
                if let (Some(item), [iterable, ..]) = (targets.get(1).filter(|i| i.kind_name() == "identifier"), positional_arguments(right).as_slice()) {
                    self.bind(scope, *item, Binding::Element(*iterable));
                }
            }
            // `for x, y in zip(a, b)`: `x` is an element of `a`, `y` of `b`.
            ("pattern_list" | "tuple_pattern", Some("zip")) => {
                let sources = positional_arguments(right);
                for (target, source) in names(left).into_iter().zip(sources) {
                    if target.kind_name() == "identifier" && source.kind_name() != "list_splat" {
                        self.bind(scope, target, Binding::Element(source));
                    }
                }
            }
            _ => {}
        }
    }

    fn collect_assignment(&mut self, node: Node<'t>, scope: usize) {
        let (Some(left), Some(right)) = (node.field("left"), node.field("right")) else {
            // Annotated declaration without a value: `x: np.ndarray`.
            if let (Some(left), Some(ty)) = (node.field("left"), node.field("type")) {
                if left.kind_name() == "identifier" {
                    self.bind(scope, left, Binding::Annotated(ty));
                }
            }
            return;
        };
        if left.kind_name() == "identifier" {
            self.bind(scope, left, Binding::Assigned(right));
        } else if scope != MODULE_SCOPE && matches!(left.kind_name(), "pattern_list" | "tuple_pattern") {
            let mut cursor = left.walk();
            let names: Vec<Node<'t>> = left.named_children(&mut cursor).filter(|n| n.kind_name() == "identifier").collect();
            for name in names {
                self.bind(scope, name, Binding::Unpacked(right));
            }
        }
    }

    fn collect_import(&mut self, node: Node<'t>, scope: std::ops::Range<usize>) {
        let g = grammar();
        let mut cursor = node.walk();
        for child in node.children_by_field_id(g.f_name, &mut cursor) {
            let kind = child.kind_id();
            if kind == g.dotted_name {
                // `import a.b` binds `a` to the package `a`.
                let full = self.text_of(child);
                let first = full.split('.').next().unwrap_or(full).trim();
                self.add_import(scope.clone(), first, canonical_module(first.to_string()));
            } else if kind == g.aliased_import {
                // `import a.b as c` binds `c` to `a.b`.
                if let (Some(name), Some(alias)) = (child.child_by_field_id(g.f_name.get()), child.child_by_field_id(g.f_alias.get())) {
                    self.add_import(scope.clone(), self.text_of(alias), canonical_module(dotted(self.text_of(name))));
                }
            }
        }
    }

    fn collect_import_from(&mut self, node: Node<'t>, scope: std::ops::Range<usize>) {
        let g = grammar();
        let Some(module) = node.child_by_field_id(g.f_module_name.get()) else { return };
        if module.kind_id() != g.dotted_name {
            return; // relative imports name the user's own code
        }
        let module = canonical_module(dotted(self.text_of(module)));
        let qualified = |name: &str| {
            let mut q = String::with_capacity(module.len() + 1 + name.len());
            q.push_str(&module);
            q.push('.');
            q.push_str(&dotted(name));
            q
        };
        let mut cursor = node.walk();
        for child in node.children_by_field_id(g.f_name, &mut cursor) {
            let kind = child.kind_id();
            if kind == g.dotted_name {
                let name = self.text_of(child);
                self.add_import(scope.clone(), name, qualified(name));
            } else if kind == g.aliased_import {
                if let (Some(name), Some(alias)) = (child.child_by_field_id(g.f_name.get()), child.child_by_field_id(g.f_alias.get())) {
                    self.add_import(scope.clone(), self.text_of(alias), qualified(self.text_of(name)));
                }
            }
        }
    }

    fn collect_comment(&mut self, node: Node<'t>) {
        if let Some(codes) = parse_suppression(self.text_of(node)) {
            self.suppressions.push(Suppression { offset: node.start_byte(), codes });
        }
    }

    /// Every module an import statement names, fully qualified, with the
    /// statement: `from a.b import c` gives `a.b` and `a.b.c`.
    pub fn import_sites(&self) -> Vec<(Node<'t>, String)> {
        let mut out = Vec::new();
        for &node in &self.import_nodes {
            let mut cursor = node.walk();
            let names: Vec<Node<'t>> = node
                .children_by_field_name("name", &mut cursor)
                .map(|n| if n.kind_name() == "aliased_import" { n.field("name").unwrap_or(n) } else { n })
                .collect();
            match node.field("module_name").filter(|m| m.kind_name() == "dotted_name") {
                Some(module) => {
                    let module = dotted(self.text_of(module));
                    for name in names {
                        out.push((node, format!("{module}.{}", dotted(self.text_of(name)))));
                    }
                    out.push((node, module));
                }
                None if node.kind_name() == "import_statement" => {
                    out.extend(names.into_iter().map(|n| (node, dotted(self.text_of(n)))));
                }
                None => {}
            }
        }
        out
    }

    /// The fully qualified name an expression refers to through the imports:
    /// `np.fft.fft` → `numpy.fft.fft`, `KM` → `sklearn.cluster.KMeans`.
    pub fn qualified_name(&self, expr: Node<'_>) -> Option<String> {
        self.qualified_through(expr, |name, offset| self.import_at(name, offset))
    }

    /// The dotted name `expr` (`a.b.c`) spells, its first part replaced by
    /// what `import_of(first part, offset)` says it is.
    fn qualified_through<'s>(&'s self, expr: Node<'_>, import_of: impl Fn(&str, usize) -> Option<&'s str>) -> Option<String> {
        let mut parts: Vec<&str> = Vec::new();
        let mut node = expr;
        while node.kind_name() == "attribute" {
            parts.push(self.text_of(node.field("attribute")?));
            node = node.field("object")?;
        }
        if node.kind_name() != "identifier" {
            return None;
        }
        let mut name = import_of(self.text_of(node), node.start_byte())?.to_string();
        for part in parts.iter().rev() {
            name.push('.');
            name.push_str(part);
        }
        Some(name)
    }

    /// What `self.name` holds, from the assignments to it in any method of
    /// the class around `expr`, when they build one model or index from the
    /// knowledge base (and no other) (`self.nn = NearestNeighbors(...)` in
    /// one method, `self.nn.kneighbors(X)` in another). Read from the tree
    /// and the module-level imports only, so that it does not depend on
    /// which functions this analysis walked.
    /// The `self.x = …` statements of `class`: where each starts and the attribute.
    pub(crate) fn assignments_to_self(&self, class: Node<'_>) -> Vec<(usize, &'t str)> {
        let known = self.class_assignments.borrow().get(&class.id()).cloned();
        let known = known.unwrap_or_else(|| {
            let start = class.start_byte();
            let found: Vec<(usize, usize)> =
                self_assignments(&self.text[class.byte_range()]).into_iter().map(|(at, attribute, _)| (start + at, attribute.len())).collect();
            let found = std::rc::Rc::new(found);
            self.class_assignments.borrow_mut().insert(class.id(), found.clone());
            found
        });
        // `self.` is five bytes.
        known.iter().map(|&(at, len)| (at, &self.text[at + 5..at + 5 + len])).collect()
    }

    /// The names (as byte ranges) of the methods `class` defines at
    /// `column`, as `find` reads them, read once per class and column: the
    /// rules ask about one method after another.
    pub(crate) fn class_methods(
        &self,
        class: Node<'_>,
        column: usize,
        find: impl FnOnce() -> Vec<std::ops::Range<usize>>,
    ) -> std::rc::Rc<Vec<std::ops::Range<usize>>> {
        let key = (class.id(), column);
        if let Some(known) = self.class_methods.borrow().get(&key) {
            return known.clone();
        }
        let found = std::rc::Rc::new(find());
        self.class_methods.borrow_mut().insert(key, found.clone());
        found
    }

    fn attribute_value(&self, expr: Node<'t>) -> Value {
        let Some(attribute) = expr.field("attribute") else { return Value::Unknown };
        let name = self.text_of(attribute);
        let class = self.ancestors(expr).find(|c| c.kind_name() == "class_definition");
        // A class with syntax errors parses differently depending on what
        // surrounds it: what its methods assign is not to be relied on.
        let Some(class) = class.filter(|c| !c.has_error()) else { return Value::Unknown };
        let key = (class.id(), name.to_string());
        if let Some(v) = self.attributes.borrow().get(&key) {
            return *v;
        }
        let mut found: Option<Value> = None;
        // The statements that assign it start a line with `self.name =`:
        // found in the class's text, then looked up in the tree (a walk of
        // a large class per attribute would cost more than the rules).
        let pattern = format!("self.{name}");
        for &(start, attribute) in self.assignments_to_self(class).iter() {
            if attribute != name {
                continue;
            }
            let Some(node) = self.root.descendant_for_byte_range(start, start + pattern.len()) else { continue };
            let Some(assignment) = [Some(node), self.parent(node)].into_iter().flatten().find_map(|n| self.parent(n).filter(|p| p.kind_name() == "assignment"))
            else {
                continue;
            };
            let (Some(left), Some(right)) = (assignment.field("left"), assignment.field("right")) else {
                continue;
            };
            if left.kind_name() != "attribute" || left.start_byte() != start {
                continue;
            }
            let model = (right.kind_name() == "call")
                .then(|| right.field("function"))
                .flatten()
                .and_then(|f| self.module_level_name(f))
                .and_then(|q| self.knowledge.api(&q))
                .filter(|api| matches!(api.kind, ApiKind::Estimator | ApiKind::Index))
                .map(|api| Value::Model(api.cpu.as_str()));
            // `self.x = None` and assignments of what can't be told don't
            // contradict a model assigned elsewhere; two different models do.
            match (found, model) {
                (_, None) => {}
                (None, Some(m)) => found = Some(m),
                (Some(a), Some(b)) if a == b => {}
                _ => {
                    found = Some(Value::Unknown);
                    break;
                }
            }
        }
        let value = found.unwrap_or(Value::Unknown);
        self.attributes.borrow_mut().insert(key, value);
        value
    }

    /// [`Module::qualified_name`] through the module-level imports only.
    fn module_level_name(&self, expr: Node<'_>) -> Option<String> {
        let whole = 0..self.text.len();
        self.qualified_through(expr, |name, _| {
            self.imports.get(name)?.iter().find(|(scope, _)| *scope == whole).map(|(_, target)| target.as_str())
        })
    }

    /// The knowledge-base entry a call's callee resolves to.
    pub fn resolve_call(&self, call: Node<'_>) -> Option<(String, &'static ApiMapping)> {
        let name = self.qualified_name(call.field("function")?)?;
        let api = self.knowledge.api(&name)?;
        Some((name, api))
    }

    /// [`Module::resolve_call`], also through a local alias of a library
    /// function (`components = nx.weakly_connected_components`, then
    /// `components(G)`).
    pub fn resolve_call_in(&self, call: Node<'_>, scope: usize) -> Option<(String, &'static ApiMapping)> {
        if let Some(found) = self.resolve_call(call) {
            return Some(found);
        }
        let callee = call.field("function").filter(|f| f.kind_name() == "identifier")?;
        let Some(Binding::Assigned(value)) = self.lookup(scope, self.text_of(callee), callee.start_byte()) else { return None };
        if value.kind_name() != "attribute" {
            return None;
        }
        let name = self.qualified_name(value)?;
        let api = self.knowledge.api(&name)?;
        Some((name, api))
    }

    /// The binding of `name` that a use at offset `at` sees: the last one made
    /// before it in the same scope, else the module's (a global may be
    /// assigned after the function that reads it).
    fn lookup(&self, scope: usize, name: &str, at: usize) -> Option<Binding<'t>> {
        let before = |list: &Vec<(usize, Binding<'t>)>| list.iter().rev().find(|(o, _)| *o < at).map(|(_, b)| *b);
        if let Some(local) = self.bindings.get(&(scope, name)) {
            // A function's parameters are its own: the module's names of the
            // same spelling are out of its sight.
            if scope != MODULE_SCOPE && local.iter().any(|(_, b)| matches!(b, Binding::Parameter | Binding::Number(_) | Binding::Annotated(_)) ) {
                return before(local).or(Some(Binding::Parameter));
            }
            if let Some(b) = before(local) {
                return Some(b);
            }
        }
        let module = self.bindings.get(&(MODULE_SCOPE, name))?;
        before(module).or_else(|| (scope != MODULE_SCOPE).then(|| module.last().map(|(_, b)| *b)).flatten())
    }

    /// The source that defines `expr`'s value: its own text, or for a name,
    /// the right-hand side of the assignment its use sees.
    pub fn defining_text(&self, expr: Node<'_>, scope: usize) -> &'t str {
        if expr.kind_name() == "identifier" {
            if let Some(Binding::Assigned(rhs)) = self.lookup(scope, self.text_of(expr), expr.start_byte()) {
                return self.text_of(rhs);
            }
        }
        self.text_of(expr)
    }

    /// What `expr`, seen from `scope`, holds.
    pub fn value(&self, expr: Node<'_>, scope: usize) -> Value {
        self.eval(expr, scope, 0)
    }

    /// Notes that an evaluation reached `depth` (see [`Module::eval`]).
    fn reach(&self, depth: u32) {
        self.reached.set(self.reached.get().max(depth));
    }

    /// Whether the depth limit cuts an evaluation at `depth` (noted, either way).
    fn cut(&self, depth: u32) -> bool {
        self.reach(depth);
        depth > MAX_EVAL_DEPTH
    }

    fn eval(&self, expr: Node<'_>, scope: usize, depth: u32) -> Value {
        if self.cut(depth) {
            return Value::Unknown;
        }
        // A name or a call is worth remembering: its value comes from its
        // definitions, which every call using it would work out again.
        let g = gpulens_syntax::grammar();
        if expr.kind_id() != g.identifier && expr.kind_id() != g.call {
            return self.eval_anew(expr, scope, depth);
        }
        // The depth changes a value only where the limit cuts its
        // evaluation: one the limit cut nowhere, `height` deep below it,
        // holds at any depth that leaves that much room. Others are
        // remembered by depth.
        let key = (expr.id(), scope);
        if let Some(&(known, height)) = self.evaluated.borrow().get(&key) {
            if depth + height <= MAX_EVAL_DEPTH {
                self.reach(depth + height);
                return known;
            }
        }
        if let Some(&known) = self.evaluated_cut.borrow().get(&(expr.id(), scope, depth)) {
            self.reach(MAX_EVAL_DEPTH + 1);
            return known;
        }
        let outer = self.reached.replace(depth);
        let value = self.eval_anew(expr, scope, depth);
        let reached = self.reached.get();
        if reached <= MAX_EVAL_DEPTH {
            self.evaluated.borrow_mut().insert(key, (value, reached - depth));
        } else {
            self.evaluated_cut.borrow_mut().insert((expr.id(), scope, depth), value);
        }
        self.reached.set(outer.max(reached));
        value
    }

    fn eval_anew(&self, expr: Node<'_>, scope: usize, depth: u32) -> Value {
        let depth = depth + 1;
        match expr.kind_name() {
            "integer" => parse_int(self.text_of(expr)).map_or(Value::Scalar, Value::Int),
            "float" => {
                let text = self.text_of(expr).replace('_', "");
                match text.parse::<f64>() {
                    Ok(f) if f >= 0.0 && f.fract() == 0.0 && f < 1e18 && text.contains(['e', 'E']) => {
                        Value::Int(f as u64)
                    }
                    _ => Value::Scalar,
                }
            }
            "true" | "false" | "none" | "string" | "concatenated_string" => Value::Unknown,
            "parenthesized_expression" => expr.named_child(0).map_or(Value::Unknown, |e| self.eval(e, scope, depth)),
            "unary_operator" => match expr.field("argument").map(|a| self.eval(a, scope, depth)) {
                Some(Value::Int(_) | Value::Scalar) => Value::Scalar,
                Some(v @ Value::Array(_)) => v,
                _ => Value::Unknown,
            },
            "list" | "tuple" => Value::Array(element_count(expr)),
            "identifier" => {
                let name = self.text_of(expr);
                if let Some(target) = self.import_at(name, expr.start_byte()) {
                    return if NUMBER_CONSTANTS.contains(&target) { Value::Scalar } else { Value::Unknown };
                }
                match self.lookup(scope, name, expr.start_byte()) {
                    Some(Binding::Assigned(rhs)) => self.eval(rhs, scope, depth),
                    Some(Binding::Annotated(ty)) => self.annotation_value(ty),
                    Some(Binding::LoopIndex | Binding::Number(None)) => Value::Scalar,
                    Some(Binding::Number(Some(n))) => Value::Int(n),
                    // One element of a few numbers (`lat, lon = point` for a
                    // `tuple[float, float]`); anything else is not known.
                    // An element of a vector is one number.
                    Some(Binding::Element(of)) => {
                        if self.one_dimensional_at(of, scope, depth) { Value::Scalar } else { Value::Unknown }
                    }
                    Some(Binding::Unpacked(rhs)) => match self.eval(rhs, scope, depth) {
                        Value::Array(Some(n)) if n <= 16 => Value::Scalar,
                        _ => Value::Unknown,
                    },
                    Some(Binding::Parameter) | None => Value::Unknown,
                }
            }
            "binary_operator" => {
                let (Some(l), Some(r)) = (expr.field("left"), expr.field("right")) else {
                    return Value::Unknown;
                };
                let op = expr.field("operator").map_or("", |o| self.text_of(o));
                let (l, r) = (self.eval(l, scope, depth), self.eval(r, scope, depth));
                match (l, r) {
                    (v @ Value::Device(_), _) | (_, v @ Value::Device(_)) => v,
                    (Value::Int(a), Value::Int(b)) => match op {
                        "*" => Value::Int(a.saturating_mul(b)),
                        "+" => Value::Int(a.saturating_add(b)),
                        "-" => Value::Int(a.saturating_sub(b)),
                        "//" if b != 0 => Value::Int(a / b),
                        "**" => Value::Int(a.saturating_pow(b.min(64) as u32)),
                        _ => Value::Scalar,
                    },
                    (Value::Array(a), Value::Array(b)) => Value::Array(a.zip(b).map(|(a, b)| a.max(b))),
                    (v @ Value::Array(_), Value::Int(_) | Value::Scalar)
                    | (Value::Int(_) | Value::Scalar, v @ Value::Array(_)) => v,
                    (v @ Value::Frame(_), _) | (_, v @ Value::Frame(_)) => v,
                    (Value::Int(_) | Value::Scalar, Value::Int(_) | Value::Scalar) => Value::Scalar,
                    _ => Value::Unknown,
                }
            }
            "attribute" => {
                let Some(object) = expr.field("object") else { return Value::Unknown };
                if object.kind_name() == "identifier" && self.text_of(object) == "self" {
                    return self.attribute_value(expr);
                }
                // A named constant (`np.pi`, `math.e`) is one number.
                if let Some(name) = self.qualified_name(expr) {
                    if NUMBER_CONSTANTS.contains(&name.as_str()) || name.starts_with("scipy.constants.") {
                        return Value::Scalar;
                    }
                }
                match self.eval(object, scope, depth) {
                    v @ (Value::Array(_) | Value::Frame(_) | Value::Device(_) | Value::GpuFrame) => v,
                    _ => Value::Unknown,
                }
            }
            "subscript" => {
                let Some(object) = expr.field("value") else { return Value::Unknown };
                match self.eval(object, scope, depth) {
                    Value::Array(n) => {
                        let mut cursor = expr.walk();
                        let indices: Vec<Node<'_>> = expr.children_by_field_name("subscript", &mut cursor).collect();
                        let sliced = indices.iter().any(|s| s.kind_name() == "slice" || s.kind_name() == "tuple");
                        // `x[x > 0]`: a selection of at most as many elements.
                        let masked = indices.len() == 1 && indices[0].kind_name() == "comparison_operator";
                        if masked {
                            Value::Array(n)
                        } else if sliced {
                            Value::Array(None)
                        } else {
                            // One element (or one row): not array work by itself.
                            let _ = n;
                            Value::Scalar
                        }
                    }
                    v @ (Value::Frame(_) | Value::Grouped(_) | Value::GpuFrame) => v,
                    // An element of a CuPy array is a 0-d array, still on the GPU.
                    Value::Device(_) => Value::Device(Some(1)),
                    // `v[k]` with `k` a number, `v` a vector: one number.
                    Value::Unknown => {
                        let mut cursor = expr.walk();
                        let indices: Vec<Node<'_>> = expr.children_by_field_name("subscript", &mut cursor).collect();
                        let element = matches!(indices.as_slice(), [i] if matches!(self.eval(*i, scope, depth), Value::Int(_) | Value::Scalar));
                        if element && self.one_dimensional_at(object, scope, depth) { Value::Scalar } else { Value::Unknown }
                    }
                    _ => Value::Unknown,
                }
            }
            "comparison_operator" | "boolean_operator" | "not_operator" => {
                let mut cursor = expr.walk();
                let on_device = expr
                    .named_children(&mut cursor)
                    .any(|c| matches!(self.eval(c, scope, depth), Value::Device(_)));
                if on_device { Value::Device(Some(1)) } else { Value::Unknown }
            }
            "call" => self.eval_call(expr, scope, depth),
            _ => Value::Unknown,
        }
    }

    /// `expr` is a one-dimensional array, as far as its construction shows:
    /// a range or grid of points (`np.arange(n)`, `np.linspace(a, b, n)`),
    /// an array made from one length (`np.zeros(n)`), a flat list of
    /// numbers, or element-wise math on such arrays and numbers.
    pub fn one_dimensional(&self, expr: Node<'_>, scope: usize) -> bool {
        self.one_dimensional_at(expr, scope, 0)
    }

    fn one_dimensional_at(&self, expr: Node<'_>, scope: usize, depth: u32) -> bool {
        if self.cut(depth) {
            return false;
        }
        let depth = depth + 1;
        let number = |e: Node<'_>| matches!(self.eval(e, scope, depth), Value::Int(_) | Value::Scalar);
        match expr.kind_name() {
            "parenthesized_expression" => expr.named_child(0).is_some_and(|e| self.one_dimensional_at(e, scope, depth)),
            "unary_operator" => expr.field("argument").is_some_and(|a| self.one_dimensional_at(a, scope, depth)),
            "list" => {
                let mut cursor = expr.walk();
                let items: Vec<Node<'_>> = expr.named_children(&mut cursor).collect();
                !items.is_empty() && items.iter().all(|i| number(*i))
            }
            "identifier" => match self.lookup(scope, self.text_of(expr), expr.start_byte()) {
                Some(Binding::Assigned(rhs)) if self.import_at(self.text_of(expr), expr.start_byte()).is_none() => {
                    self.one_dimensional_at(rhs, scope, depth)
                }
                Some(Binding::Parameter | Binding::Annotated(_)) => {
                    self.documented.get(&(scope, self.text_of(expr))).is_some_and(|ty| vector_type(ty))
                }
                _ => false,
            },
            "binary_operator" => {
                let (Some(l), Some(r)) = (expr.field("left"), expr.field("right")) else { return false };
                let (lv, rv) = (self.one_dimensional_at(l, scope, depth), self.one_dimensional_at(r, scope, depth));
                (lv && (rv || number(r))) || (rv && number(l))
            }
            "call" => {
                let Some(function) = expr.field("function") else { return false };
                // `a.ravel()`, `a.flatten()`: flat whatever `a` was.
                if function.kind_name() == "attribute"
                    && function.field("attribute").is_some_and(|m| matches!(self.text_of(m), "ravel" | "flatten"))
                    && expr.field("arguments").is_some_and(|a| a.named_child_count() == 0)
                {
                    return true;
                }
                let Some(name) = self.qualified_name(function) else { return false };
                let positional = positional_arguments(expr);
                match name.as_str() {
                    "numpy.arange" | "numpy.linspace" | "numpy.logspace" | "numpy.geomspace" => true,
                    // A length, not a shape tuple.
                    "numpy.zeros" | "numpy.ones" | "numpy.empty" | "numpy.full" => positional.first().is_some_and(|n| number(*n)),
                    // The same shape as a vector.
                    "numpy.asarray" | "numpy.asanyarray" | "numpy.array" | "numpy.copy" | "numpy.zeros_like"
                    | "numpy.ones_like" | "numpy.empty_like" | "numpy.full_like" | "numpy.cumsum" | "numpy.sort" => {
                        positional.first().is_some_and(|v| self.one_dimensional_at(*v, scope, depth))
                    }
                    // Flat by definition, whatever the input's shape.
                    "numpy.ravel" | "numpy.flatnonzero" => true,
                    // Without `axis`, np.append flattens both operands.
                    "numpy.append" => self.keyword(expr, "axis").is_none(),
                    // Joining a vector to anything gives a vector (the
                    // others must be vectors too).
                    "numpy.concatenate" | "numpy.hstack" => positional.first().is_some_and(|seq| {
                        matches!(seq.kind_name(), "tuple" | "list") && {
                            let mut cursor = seq.walk();
                            let items: Vec<Node<'_>> = seq.named_children(&mut cursor).collect();
                            items.iter().any(|i| self.one_dimensional_at(*i, scope, depth))
                        }
                    }),
                    _ if ELEMENTWISE_MATH.contains(&name.as_str()) => {
                        !positional.is_empty()
                            && positional.iter().any(|a| self.one_dimensional_at(*a, scope, depth))
                            && positional.iter().all(|a| number(*a) || self.one_dimensional_at(*a, scope, depth))
                    }
                    _ => false,
                }
            }
            _ => false,
        }
    }

    /// The number of columns (the last dimension) of the array `expr`,
    /// when its documented shape gives it: a parameter documented as
    /// `(n, 3)`, converted (`np.asarray`) or shifted (`points - centre`).
    pub fn columns(&self, expr: Node<'_>, scope: usize) -> Option<u64> {
        self.columns_at(expr, scope, 0)
    }

    fn columns_at(&self, expr: Node<'_>, scope: usize, depth: u32) -> Option<u64> {
        if self.cut(depth) {
            return None;
        }
        let depth = depth + 1;
        match expr.kind_name() {
            "parenthesized_expression" => self.columns_at(expr.named_child(0)?, scope, depth),
            "identifier" => {
                let name = self.text_of(expr);
                match self.lookup(scope, name, expr.start_byte())? {
                    Binding::Assigned(rhs) if self.import_at(name, expr.start_byte()).is_none() => self.columns_at(rhs, scope, depth),
                    Binding::Parameter | Binding::Annotated(_) => documented_columns(self.documented.get(&(scope, name))?),
                    _ => None,
                }
            }
            "binary_operator" => {
                let op = self.text_of(expr.field("operator")?);
                if !matches!(op, "+" | "-" | "*" | "/") {
                    return None;
                }
                let (l, r) = (expr.field("left")?, expr.field("right")?);
                self.columns_at(l, scope, depth).or_else(|| self.columns_at(r, scope, depth))
            }
            "call" => {
                let name = self.qualified_name(expr.field("function")?)?;
                match name.as_str() {
                    "numpy.asarray" | "numpy.asanyarray" | "numpy.array" | "numpy.ascontiguousarray" | "numpy.copy" => {
                        self.columns_at(self.first_positional(expr)?, scope, depth)
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// `a` is `x.T` and `b` has as many columns as `x`, a known number `k`:
    /// the product `x.T @ b` is a k x k matrix (a Gram or scatter matrix of
    /// points, `np.dot(x.T, x)`). `k`.
    pub fn gram_columns(&self, a: Node<'_>, b: Node<'_>, scope: usize) -> Option<u64> {
        if a.kind_name() != "attribute" || self.text_of(a.field("attribute")?) != "T" {
            return None;
        }
        let k = self.columns(a.field("object")?, scope)?;
        (self.columns(b, scope)? == k).then_some(k)
    }

    fn annotation_value(&self, ty: Node<'_>) -> Value {
        let expr = if ty.kind_name() == "type" { ty.named_child(0) } else { Some(ty) };
        // Numbers, and tuples of a few numbers (`point: tuple[float, float]`).
        let text: String = expr.map_or("", |e| self.text_of(e)).split_whitespace().collect();
        if matches!(text.as_str(), "float" | "int" | "complex" | "bool") {
            return Value::Scalar;
        }
        if let Some(items) = text.strip_prefix("tuple[").and_then(|t| t.strip_suffix(']')) {
            let items: Vec<&str> = items.split(',').collect();
            if items.iter().all(|i| matches!(*i, "float" | "int" | "complex")) {
                return Value::Array(Some(items.len() as u64));
            }
        }
        match expr.and_then(|e| self.qualified_name(e)).as_deref() {
            Some("numpy.ndarray" | "numpy.typing.NDArray" | "numpy.typing.ArrayLike") => Value::Array(None),
            Some("pandas.DataFrame" | "pandas.Series") => Value::Frame(None),
            Some("networkx.Graph" | "networkx.DiGraph" | "networkx.MultiGraph" | "networkx.MultiDiGraph") => {
                Value::Graph(None)
            }
            _ => Value::Unknown,
        }
    }

    fn eval_call(&self, call: Node<'_>, scope: usize, depth: u32) -> Value {
        let Some(function) = call.field("function") else { return Value::Unknown };
        if let Some(name) = self.qualified_name(function) {
            if let Some(v) = self.gpu_call_value(&name, call, scope, depth) {
                return v;
            }
        }
        if let Some((name, api)) = self.resolve_call(call) {
            if matches!(name.as_str(), "numpy.dot" | "numpy.matmul") {
                let (a, b) = (self.argument(call, "a", 0), self.argument(call, "b", 1));
                if let Some(k) = a.zip(b).and_then(|(a, b)| self.gram_columns(a, b, scope)) {
                    return Value::Array(Some(k.saturating_mul(k)));
                }
            }
            let size = api.size.as_ref().and_then(|spec| self.size_of_call(call, spec, scope, depth));
            return match (api.library.as_str(), api.kind) {
                (_, ApiKind::Estimator | ApiKind::Index) => Value::Model(api.cpu.as_str()),
                ("cudf", ApiKind::Create | ApiKind::Read) => Value::Frame(size),
                ("cudf", ApiKind::Compute | ApiKind::Method) => Value::Frame(None),
                ("cugraph", ApiKind::Graph) => Value::Graph(size),
                (_, ApiKind::Create | ApiKind::Generate | ApiKind::Read) => Value::Array(size),
                // A reduction over a whole array (no `axis`) is one number.
                (_, ApiKind::Compute) if is_reduction(&api.cpu) && self.keyword(call, "axis").is_none() => Value::Scalar,
                (_, ApiKind::Compute) => self.input_value(call, scope, depth),
                _ => Value::Unknown,
            };
        }
        // Another NumPy function of one number (`np.deg2rad(lat)`) is one number.
        if self.qualified_name(function).is_some_and(|n| n.starts_with("numpy.")) {
            let args = call.field("arguments");
            let positional: Vec<Node<'_>> = args.map_or(Vec::new(), |a| {
                let mut cursor = a.walk();
                a.named_children(&mut cursor).filter(|n| n.kind_name() != "comment").collect()
            });
            if let [only] = positional.as_slice() {
                if self.eval(*only, scope, depth) == Value::Scalar {
                    return Value::Scalar;
                }
            }
        }
        if function.kind_name() == "identifier" && self.text_of(function) == "len" && self.import_at("len", function.start_byte()).is_none() {
            let arg = call.field("arguments").and_then(|a| a.named_child(0));
            return match arg.map(|a| self.eval(a, scope, depth)) {
                Some(Value::Array(Some(n)) | Value::Frame(Some(n)) | Value::Graph(Some(n))) => Value::Int(n),
                _ => Value::Unknown,
            };
        }
        if function.kind_name() == "attribute" {
            let Some(object) = function.field("object") else { return Value::Unknown };
            let method = function.field("attribute").map_or("", |m| self.text_of(m));
            // `.reshape((4, 4))`, `.reshape(4, 4)`: as many elements as the
            // shape says, whatever the array was.
            if method == "reshape" {
                if let Some(n) = self.size_of_call(call, &reshape_spec(call), scope, depth) {
                    return Value::Array(Some(n));
                }
            }
            return match self.eval(object, scope, depth) {
                v @ Value::Array(_) => match method {
                    "astype" | "copy" | "reshape" | "ravel" | "flatten" | "transpose" | "conj" | "clip" | "round" => v,
                    _ => Value::Unknown,
                },
                Value::Frame(n) => match method {
                    "iterrows" | "itertuples" | "items" | "iteritems" | "tolist" | "to_dict" | "to_numpy" => {
                        Value::Unknown
                    }
                    "groupby" | "rolling" | "resample" | "expanding" | "ewm" => Value::Grouped(n),
                    _ => Value::Frame(n),
                },
                Value::Grouped(n) => Value::Frame(n),
                Value::Device(n) => match method {
                    "get" => Value::Array(n),
                    "item" | "tolist" => Value::Scalar,
                    _ => Value::Device(n),
                },
                Value::GpuFrame => match method {
                    "to_pandas" => Value::Frame(None),
                    "to_cupy" | "values" => Value::Device(None),
                    _ => Value::GpuFrame,
                },
                _ => Value::Unknown,
            };
        }
        Value::Unknown
    }

    /// Values made by GPU libraries: CuPy arrays, Numba device arrays, cuDF frames.
    fn gpu_call_value(&self, name: &str, call: Node<'_>, scope: usize, depth: u32) -> Option<Value> {
        let first = || self.first_positional(call).map_or(Value::Unknown, |a| self.eval(a, scope, depth));
        Some(match name {
            "cupy.asnumpy" | "numba.cuda.DeviceNDArray.copy_to_host" => Value::Array(first().elements()),
            "numba.cuda.to_device" | "cupy.asarray" | "cupy.array" => Value::Device(first().elements()),
            _ if name.starts_with("cupy.") || name.starts_with("cupyx.") => Value::Device(None),
            "numba.cuda.device_array" | "numba.cuda.device_array_like" | "numba.cuda.mapped_array" => {
                Value::Device(None)
            }
            _ if name.starts_with("cudf.") && !name.starts_with("cudf.pandas") => Value::GpuFrame,
            _ => return None,
        })
    }

    /// The combined value of a call's data arguments: the largest known
    /// size, or unknown when any argument's size is unknown.
    pub fn input_value(&self, call: Node<'_>, scope: usize, depth: u32) -> Value {
        let Some(args) = call.field("arguments") else { return Value::Unknown };
        let mut cursor = args.walk();
        let mut merged: Option<Value> = None;
        for arg in args.named_children(&mut cursor) {
            let v = match arg.kind_name() {
                "keyword_argument" => continue,
                "comment" => continue,
                "list_splat" | "dictionary_splat" => Value::Unknown,
                _ => self.eval(arg, scope, depth + 1),
            };
            let v = match v {
                Value::Int(_) => Value::Scalar,
                v => v,
            };
            merged = Some(match (merged, v) {
                (None, v) => v,
                (Some(Value::Unknown), _) | (_, Value::Unknown) => Value::Unknown,
                (Some(Value::Scalar), v) | (Some(v), Value::Scalar) => v,
                (Some(m), v) => {
                    let n = m.elements().zip(v.elements()).map(|(a, b)| a.max(b));
                    match m {
                        Value::Frame(_) => Value::Frame(n),
                        Value::Graph(_) => Value::Graph(n),
                        _ => Value::Array(n),
                    }
                }
            });
        }
        merged.unwrap_or(Value::Unknown)
    }

    /// Number of elements a call asks for, read from its arguments as `spec` says.
    pub fn size_of_call(&self, call: Node<'_>, spec: &SizeSpec, scope: usize, depth: u32) -> Option<u64> {
        let args = call.field("arguments")?;
        let mut cursor = args.walk();
        let children: Vec<Node<'_>> = args.named_children(&mut cursor).filter(|n| n.kind_name() != "comment").collect();
        let positional: Vec<Node<'_>> = children.iter().copied().filter(|n| n.kind_name() != "keyword_argument").collect();
        if positional.iter().any(|n| matches!(n.kind_name(), "list_splat" | "dictionary_splat")) {
            return None;
        }
        if spec.varargs {
            if positional.is_empty() {
                return Some(1);
            }
            return positional.iter().try_fold(1u64, |acc, &n| match self.eval(n, scope, depth) {
                Value::Int(v) => Some(acc.saturating_mul(v)),
                _ => None,
            });
        }
        let keyword = spec.keyword.as_deref().and_then(|kw| {
            children.iter().find_map(|n| {
                (n.kind_name() == "keyword_argument"
                    && n.field("name").is_some_and(|name| self.text_of(name) == kw))
                .then(|| n.field("value"))
                .flatten()
            })
        });
        let arg = keyword.or_else(|| spec.arg.and_then(|i| positional.get(i).copied()))?;
        if spec.data {
            return match arg.kind_name() {
                "dictionary" => {
                    // A dict of columns: rows are the longest column.
                    let mut cursor = arg.walk();
                    let rows = arg
                        .named_children(&mut cursor)
                        .filter_map(|pair| pair.field("value"))
                        .map(|v| self.eval(v, scope, depth).elements())
                        .try_fold(0u64, |acc, n| n.map(|n| acc.max(n)));
                    rows
                }
                _ => self.eval(arg, scope, depth).elements(),
            };
        }
        self.shape_size(arg, scope, depth)
    }

    /// Elements in a shape: an int, or a tuple/list of ints.
    fn shape_size(&self, shape: Node<'_>, scope: usize, depth: u32) -> Option<u64> {
        match shape.kind_name() {
            "tuple" | "list" => {
                let mut cursor = shape.walk();
                let dims: Vec<Node<'_>> = shape.named_children(&mut cursor).collect();
                dims.into_iter().try_fold(1u64, |acc, d| match self.eval(d, scope, depth) {
                    Value::Int(v) => Some(acc.saturating_mul(v)),
                    _ => None,
                })
            }
            // `np.zeros(x.shape)`: as many elements as `x`.
            "attribute" if shape.field("attribute").is_some_and(|a| self.text_of(a) == "shape") => {
                match shape.field("object").map(|o| self.eval(o, scope, depth)) {
                    Some(Value::Array(n) | Value::Device(n)) => n,
                    _ => None,
                }
            }
            _ => match self.eval(shape, scope, depth) {
                Value::Int(v) => Some(v),
                _ => None,
            },
        }
    }

    /// The source text of keyword argument `name` of a call, if given.
    pub fn keyword<'a>(&self, call: Node<'a>, name: &str) -> Option<Node<'a>> {
        let args = call.field("arguments")?;
        let mut cursor = args.walk();
        let found = args.named_children(&mut cursor).find(|n| {
            n.kind_name() == "keyword_argument" && n.field("name").is_some_and(|k| self.text_of(k) == name)
        });
        found.and_then(|n| n.field("value"))
    }

    /// Whether any argument of a call holds data already on the GPU.
    pub fn any_arg_on_device(&self, call: Node<'_>, scope: usize) -> bool {
        if !self.mentions_gpu_library() {
            return false;
        }
        let Some(args) = call.field("arguments") else { return false };
        let mut cursor = args.walk();
        let found = args.named_children(&mut cursor).any(|a| {
            let a = if a.kind_name() == "keyword_argument" { a.field("value") } else { Some(a) };
            a.is_some_and(|a| matches!(self.value(a, scope), Value::Device(_)))
        });
        found
    }

    /// The first positional argument of a call.
    /// The argument given by keyword `name` or, failing that, at position `index`.
    pub fn argument<'a>(&self, call: Node<'a>, name: &str, index: usize) -> Option<Node<'a>> {
        if let Some(value) = self.keyword(call, name) {
            return Some(value);
        }
        let args = call.field("arguments")?;
        let mut cursor = args.walk();
        let found = args
            .named_children(&mut cursor)
            .filter(|n| !matches!(n.kind_name(), "keyword_argument" | "comment"))
            .take_while(|n| !matches!(n.kind_name(), "list_splat" | "dictionary_splat"))
            .nth(index);
        found
    }

    pub fn first_positional<'a>(&self, call: Node<'a>) -> Option<Node<'a>> {
        let args = call.field("arguments")?;
        let mut cursor = args.walk();
        let found = args.named_children(&mut cursor).find(|n| !matches!(n.kind_name(), "keyword_argument" | "comment"));
        found
    }
}

/// NumPy reductions that return one number when no axis is given.
pub(crate) fn is_reduction(cpu: &str) -> bool {
    let Some(name) = cpu.strip_prefix("numpy.") else { return false };
    matches!(
        name,
        "sum" | "prod" | "mean" | "std" | "var" | "min" | "max" | "amin" | "amax" | "median" | "average" | "argmin"
            | "argmax" | "count_nonzero" | "any" | "all" | "ptp" | "nansum" | "nanmean" | "nanstd" | "nanvar"
            | "nanmin" | "nanmax" | "nanmedian" | "trace" | "vdot" | "linalg.norm" | "linalg.det" | "linalg.matrix_rank"
    )
}

/// The name a module is known by to the rules: Numba-CUDA-MLIR's `cuda`
/// compiles the same kernels through the same API as numba-cuda's
/// (`numba_cuda_mlir.cuda.jit` is `numba.cuda.jit` to every check).
fn canonical_module(path: String) -> String {
    match path.strip_prefix("numba_cuda_mlir") {
        Some(rest) if rest.is_empty() || rest.starts_with('.') => format!("numba{rest}"),
        _ => path,
    }
}

fn dotted(name: &str) -> String {
    if !name.contains(char::is_whitespace) {
        return name.to_string();
    }
    name.split('.').map(str::trim).collect::<Vec<_>>().join(".")
}

fn parse_int(text: &str) -> Option<u64> {
    let t = text.replace('_', "");
    let t = t.trim_end_matches(['l', 'L']);
    let (digits, radix) = match t.get(..2) {
        Some("0x" | "0X") => (&t[2..], 16),
        Some("0o" | "0O") => (&t[2..], 8),
        Some("0b" | "0B") => (&t[2..], 2),
        _ => (t, 10),
    };
    u64::from_str_radix(digits, radix).ok()
}

/// Elements in a list/tuple literal, nested lists multiplied out.
/// How `.reshape(...)` gives its shape: one argument (an int or a tuple of
/// ints), or one dimension per argument.
fn reshape_spec(call: Node<'_>) -> SizeSpec {
    let positional = call.field("arguments").map_or(0, |args| {
        let mut cursor = args.walk();
        let count = args.named_children(&mut cursor).filter(|n| !matches!(n.kind_name(), "comment" | "keyword_argument")).count();
        count
    });
    SizeSpec { arg: Some(0), keyword: None, varargs: positional > 1, data: false }
}

fn element_count(node: Node<'_>) -> Option<u64> {
    let mut total = 1u64;
    let mut node = node;
    // Iterative descent through the first element: [[1, 2], [3, 4]] → 2 × 2.
    for _ in 0..8 {
        let mut cursor = node.walk();
        let items: Vec<Node<'_>> = node.named_children(&mut cursor).filter(|n| n.kind_name() != "comment").collect();
        if items.iter().any(|n| matches!(n.kind_name(), "list_splat" | "list_comprehension")) {
            return None;
        }
        total = total.saturating_mul(items.len() as u64);
        match items.first() {
            Some(first) if matches!(first.kind_name(), "list" | "tuple") => node = *first,
            _ => return Some(total),
        }
    }
    Some(total)
}

/// `# gpulens: ignore` → Some([]); `# gpulens: ignore[A, B]` → Some([A, B]).
pub fn parse_suppression(comment: &str) -> Option<Vec<String>> {
    let body = comment.trim_start_matches('#').trim_start();
    let at = body.find("gpulens:")?;
    let rest = body[at + "gpulens:".len()..].trim_start();
    let rest = rest.strip_prefix("ignore")?;
    match rest.strip_prefix('[') {
        Some(list) => {
            let list = list.split(']').next()?;
            Some(list.split(',').map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).collect())
        }
        None if rest.is_empty() || rest.starts_with(char::is_whitespace) => Some(Vec::new()),
        None => None,
    }
}

/// The name a parameter binds (`x`, `x: int`, `x=1`, `*args`, `**kwargs`);
/// none for the bare `*` and `/` separators.
/// A parameter's default is a number (`1`, `0.5`, `-3`, `1e-6`).
fn number_literal(value: Node<'_>) -> bool {
    match value.kind_name() {
        "integer" | "float" => true,
        "unary_operator" => value.field("argument").is_some_and(|a| matches!(a.kind_name(), "integer" | "float")),
        _ => false,
    }
}

/// The parameters a docstring documents, with the type it gives each, in
/// the three usual styles: NumPy's (`name : int, optional`, `x, y : float`),
/// Google's (`name (int): ...`) and Sphinx's (`:type name: int`,
/// `:param int name:`).
pub(crate) fn documented_types(doc: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let is_name = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_') && !s.starts_with(|c: char| c.is_ascii_digit());
    for line in doc.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix(":type ") {
            if let Some((name, ty)) = rest.split_once(':') {
                if is_name(name.trim()) {
                    out.push((name.trim(), ty.trim()));
                }
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix(":param ") {
            if let Some((head, _)) = rest.split_once(':') {
                if let Some((ty, name)) = head.trim().rsplit_once(' ') {
                    if is_name(name) {
                        out.push((name, ty.trim()));
                    }
                }
            }
            continue;
        }
        // Google: `name (int): ...` / `name (int, optional): ...`
        if let Some((head, _)) = line.split_once("):") {
            if let Some((name, ty)) = head.split_once(" (") {
                if is_name(name.trim()) {
                    out.push((name.trim(), ty.trim()));
                    continue;
                }
            }
        }
        // NumPy: `name : type`, `a, b : type` (the colon set off by spaces).
        if let Some((names, ty)) = line.split_once(" : ") {
            let names: Vec<&str> = names.split(',').map(str::trim).collect();
            if names.iter().all(|n| is_name(n)) {
                out.extend(names.into_iter().map(|n| (n, ty.trim())));
            }
        }
    }
    out
}

/// The shapes a documented type gives, each a list of its dimensions as
/// written (`(n, 3) float or (p, n, 3,) float` gives `[n, 3]` and
/// `[p, n, 3]`; `ndarray (k_ar x neqs)` gives `[k_ar, neqs]`). Words in
/// parentheses that are not a shape (`(optional)`, `(default: 3)`) are not:
/// one word counts only in an array's type or with its comma (`(n,)`).
fn documented_shapes(lower: &str) -> Vec<Vec<&str>> {
    let arrays = ["array", "ndarray", "vector", "sequence", "list"].iter().any(|w| lower.contains(w));
    let mut shapes = Vec::new();
    let mut rest = lower;
    while let Some(open) = rest.find('(') {
        let Some(len) = rest[open..].find(')') else { break };
        let inside = &rest[open + 1..open + len];
        rest = &rest[open + len + 1..];
        let dims: Vec<&str> =
            inside.split(',').flat_map(|d| d.split(" x ")).flat_map(|d| d.split('×')).map(str::trim).filter(|d| !d.is_empty()).collect();
        let dimension = |d: &&str| d.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
        if !dims.is_empty() && dims.iter().all(dimension) && (arrays || inside.contains(',')) {
            shapes.push(dims);
        }
    }
    shapes
}

/// A documented type that is one-dimensional: `1-D array`, `(n,) float`,
/// `array of shape (n_samples,)`, `ndarray (1 x neqs) or (neqs)`: every
/// shape it gives has one dimension other than 1 (and it gives one).
pub(crate) fn vector_type(ty: &str) -> bool {
    let lower = ty.to_ascii_lowercase();
    // A container of arrays (`sequence of 1-D array_like`, `list of arrays`)
    // is not one: its elements are.
    let containers = ["sequence of", "list of", "tuple of", "iterable of", "collection of"];
    if lower.contains("arrays")
        || containers.iter().any(|c| lower.find(c).is_some_and(|at| {
            let rest = &lower[at + c.len()..];
            rest.contains("array") || rest.contains("1-d") || rest.contains("1d") || rest.contains('(')
        }))
    {
        return false;
    }
    // Dimensionality words (`1d`, `2-D`, `nd`): all of them must say one.
    let dimensionality: Vec<&str> = lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| {
            let w = w.strip_suffix('d').map(|w| w.strip_suffix('-').unwrap_or(w));
            w.is_some_and(|w| !w.is_empty() && (w == "n" || w.chars().all(|c| c.is_ascii_digit())))
        })
        .collect();
    if !dimensionality.is_empty() && dimensionality.iter().any(|w| !matches!(*w, "1d" | "1-d")) {
        return false;
    }
    let shapes = documented_shapes(&lower);
    if shapes.iter().any(|dims| dims.iter().filter(|d| **d != "1").count() != 1) {
        return false;
    }
    !dimensionality.is_empty() || !shapes.is_empty()
}

/// The number of columns every shape in a documented type ends with, when
/// they all end with the same number (`(n, 3) float or (p, n, 3,) float`).
pub(crate) fn documented_columns(ty: &str) -> Option<u64> {
    let lower = ty.to_ascii_lowercase();
    let mut columns = None;
    for dims in documented_shapes(&lower) {
        let last = (dims.len() >= 2).then(|| dims[dims.len() - 1].parse::<u64>().ok()).flatten()?;
        if columns.is_some_and(|c| c != last) {
            return None;
        }
        columns = Some(last);
    }
    columns
}

/// A documented type that means one number: `int`, `float, optional`,
/// `positive int or None`, `float, default=0.5`. Anything that also allows
/// an array or a sequence (`float | array-like`, `int or tuple of int`) is not.
pub(crate) fn number_type(ty: &str) -> bool {
    let lower = ty.to_ascii_lowercase().replace(['`', '~'], "");
    let mut numeric = false;
    for part in lower.split([',', '|', ';']).flat_map(|p| p.split(" or ")) {
        let part = part.trim().trim_end_matches('.');
        if part.is_empty() || part == "optional" || part == "none" || part.starts_with("default") || part == "keyword-only" {
            continue;
        }
        let words: Vec<&str> = part
            .split_whitespace()
            .filter(|w| !matches!(*w, "positive" | "non-negative" | "nonnegative" | "strictly" | "python" | "a" | "an"))
            .collect();
        let [word] = words.as_slice() else { return false };
        let word = word.trim_start_matches("numpy.").trim_start_matches("np.").trim_start_matches("numbers.");
        if matches!(
            word,
            "int" | "float" | "bool" | "complex" | "integer" | "number" | "scalar" | "real" | "boolean" | "float32"
                | "float64" | "int32" | "int64"
        ) {
            numeric = true;
        } else {
            return false;
        }
    }
    numeric
}

/// The positional arguments of `call`, in order (no keywords, no comments).
pub(crate) fn positional_arguments(call: Node<'_>) -> Vec<Node<'_>> {
    call.field("arguments").map_or(Vec::new(), |a| {
        let mut cursor = a.walk();
        a.named_children(&mut cursor).filter(|n| !matches!(n.kind_name(), "comment" | "keyword_argument")).collect()
    })
}

pub(crate) fn parameter_name(param: Node<'_>) -> Option<Node<'_>> {
    match param.kind_name() {
        "identifier" => Some(param),
        "default_parameter" | "typed_default_parameter" => param.field("name").filter(|n| n.kind_name() == "identifier"),
        "typed_parameter" => param.named_child(0).and_then(|n| if n.kind_name() == "identifier" { Some(n) } else { parameter_name(n) }),
        "list_splat_pattern" | "dictionary_splat_pattern" => param.named_child(0).filter(|n| n.kind_name() == "identifier"),
        _ => None,
    }
}

/// Statements of `text` that assign to an attribute of `self` at the start
/// of a line (`self.nn = NearestNeighbors(...)`): where `self` starts, the
/// attribute, and the statement through its continuation lines (until
/// brackets close). What `Module::attribute_value` reads, and what the
/// cache key of a method working through `self` covers.
pub(crate) fn self_assignments(text: &str) -> Vec<(usize, &str, &str)> {
    // Only the lines holding `self.` can start one: found with a vector
    // search, not line by line (a 12,000-line class is read on every edit
    // of one of its methods that asks about an attribute).
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    // Where the next statement may start: after the last one found, with
    // its continuation lines.
    let mut next = 0;
    for at in memchr::memmem::find_iter(bytes, b"self.") {
        if at < next {
            continue;
        }
        let line_start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
        if line_start < next || !bytes[line_start..at].iter().all(|b| matches!(b, b' ' | b'\t')) {
            continue;
        }
        let line_end = memchr::memchr(b'\n', &bytes[at..]).map_or(text.len(), |i| at + i);
        let line = &text[line_start..line_end];
        let rest = &text[at + 5..line_end];
        let name_len = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
        let after = rest[name_len..].trim_start_matches([' ', '\t']);
        if name_len > 0 && after.starts_with('=') && !after.starts_with("==") {
            let mut open = bracket_depth(line);
            let mut end = line_end;
            while open > 0 && end < text.len() {
                let following = memchr::memchr(b'\n', &bytes[end + 1..]).map_or(text.len(), |i| end + 1 + i);
                open += bracket_depth(&text[end + 1..following]);
                end = following;
            }
            next = end + 1;
            out.push((at, &rest[..name_len], &text[line_start..end]));
        }
    }
    out
}

/// Brackets opened minus brackets closed in `s`.
fn bracket_depth(s: &str) -> i64 {
    s.bytes().fold(0, |d, b| match b {
        b'(' | b'[' | b'{' => d + 1,
        b')' | b']' | b'}' => d - 1,
        _ => d,
    })
}

/// `name` is `module` or something in it (`numpy.fft` is within `numpy`,
/// `numpyro` is not).
pub(crate) fn within(name: &str, module: &str) -> bool {
    name.strip_prefix(module).is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
}

/// Where an import is seen: the whole module for a module-level import; for
/// one inside a function or class, from the import to the end of that
/// scope, so that of two imports of one name in a function (`from a import
/// X` in one branch, `from b import X` in a later one), code after the second
/// sees the second.
fn import_scope(scope_ranges: &[std::ops::Range<usize>], node: Node<'_>) -> std::ops::Range<usize> {
    let scope = scope_ranges.last().expect("the module scope").clone();
    if scope_ranges.len() == 1 {
        scope
    } else {
        node.start_byte()..scope.end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line-by-line reading `self_assignments` must agree with.
    fn self_assignments_by_line(text: &str) -> Vec<(usize, &str, &str)> {
        let mut out = Vec::new();
        let mut line_start = 0;
        while line_start < text.len() {
            let line_end = text[line_start..].find('\n').map_or(text.len(), |i| line_start + i);
            let line = &text[line_start..line_end];
            let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
            let mut next = line_end + 1;
            if let Some(rest) = line[indent..].strip_prefix("self.") {
                let name_len = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
                let after = rest[name_len..].trim_start_matches([' ', '\t']);
                if name_len > 0 && after.starts_with('=') && !after.starts_with("==") {
                    let depth = |s: &str| s.matches(['(', '[', '{']).count() as i64 - s.matches([')', ']', '}']).count() as i64;
                    let mut open = depth(line);
                    let mut end = line_end;
                    while open > 0 && end < text.len() {
                        let following = text[end + 1..].find('\n').map_or(text.len(), |i| end + 1 + i);
                        open += depth(&text[end + 1..following]);
                        end = following;
                    }
                    next = end + 1;
                    out.push((line_start + indent, &rest[..name_len], &text[line_start..end]));
                }
            }
            line_start = next;
        }
        out
    }

    proptest::proptest! {
        #[test]
        fn self_assignments_as_read_line_by_line(
            parts in proptest::collection::vec(proptest::sample::select(vec![
                "self.", "self.x", " = ", "==", "=", "(", ")", "[", "]", "{", "}", "\n", "    ", "\t", "a", "_b", "1", "#", "\"",
            ]), 0..60)
        ) {
            let text: String = parts.concat();
            proptest::prop_assert_eq!(self_assignments(&text), self_assignments_by_line(&text));
        }
    }

    #[test]
    fn self_assignments_of_a_class() {
        let text = "class C:\n    def f(self):\n        self.a = np.zeros(\n            (3, 3))\n        self.b == 2\n\tself.c=1\n        x = self.d\n";
        assert_eq!(self_assignments(text).iter().map(|(_, a, _)| *a).collect::<Vec<_>>(), ["a", "c"]);
        assert_eq!(self_assignments(text), self_assignments_by_line(text));
    }

    #[test]
    fn documented_vector_shapes() {
        for ty in ["ndarray (1 x neqs) or (neqs)", "(n,) float", "array of shape (n_samples,)", "1-D array", "array_like (n)"] {
            assert!(super::vector_type(ty), "{ty}");
        }
        assert_eq!(super::documented_columns("(n, 3) float or (p, n, 3,) float"), Some(3));
        assert_eq!(super::documented_columns("(n, 3) float or (n, 2) float"), None);
        assert_eq!(super::documented_columns("ndarray (k_ar x neqs)"), None);
        assert_eq!(super::documented_columns("(3,) float"), None);
        for ty in ["array_like, 1d or 2d", "1-D or 2-D array", "nd array", "ndarray (k_ar x neqs)", "(n, 3) float", "(3,) float or (p, 3,) float", "float (optional)", "int", "array-like of shape (n_samples, n_features)"] {
            assert!(!super::vector_type(ty), "{ty}");
        }
    }


    /// The value `eval` remembers for a name is the one a fresh module
    /// gives, whatever was asked before it and from what depth: in a chain
    /// longer than the depth limit, the names far down it are cut (not
    /// known) when asked first from the top, and known when asked alone.
    #[test]
    fn remembered_values_do_not_depend_on_what_was_asked_first() {
        let mut src = String::from("a0 = 2\n");
        for k in 1..=40 {
            src.push_str(&format!("a{k} = a{} * 2\n", k - 1));
        }
        let tree = gpulens_syntax::parse(&src);
        // The use of `a{k}` on the line that defines `a{k+1}`, for each k.
        let uses: Vec<Node<'_>> = (0..40)
            .map(|k| {
                let at = src.find(&format!("= a{k} *")).unwrap() + 2;
                tree.root_node().descendant_for_byte_range(at, at + 1).unwrap()
            })
            .collect();
        let fresh: Vec<Value> = uses.iter().map(|u| Module::new(&src, &tree, Knowledge::get()).value(*u, MODULE_SCOPE)).collect();
        assert_eq!(fresh[3], Value::Int(16));
        assert_eq!(fresh[39], Value::Unknown, "the limit cuts a chain this long");
        for order in [(0..40).collect::<Vec<usize>>(), (0..40).rev().collect()] {
            let module = Module::new(&src, &tree, Knowledge::get());
            for &k in &order {
                assert_eq!(module.value(uses[k], MODULE_SCOPE), fresh[k], "a{k}, asked in order {:?}", &order[..2]);
            }
            // A deep question first (the chain from `a39`) leaves answers
            // that a shallow one then reads.
            let module = Module::new(&src, &tree, Knowledge::get());
            let _ = module.value(uses[39], MODULE_SCOPE);
            for &k in &order {
                assert_eq!(module.value(uses[k], MODULE_SCOPE), fresh[k], "a{k} after a39");
            }
        }
    }

    fn module_imports(src: &str) -> Vec<(String, String)> {
        let tree = gpulens_syntax::parse(src);
        let module = Module::new(src, &tree, Knowledge::get());
        let mut v: Vec<_> = module.imports_at(0).map(|(a, b)| (a.to_string(), b.to_string())).collect();
        v.sort();
        v
    }

    #[test]
    fn parents_and_descendants_from_the_walk_are_the_trees() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut texts: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
            .collect();
        // Syntax errors: ERROR and MISSING (zero-width) nodes.
        texts.push("def f(x:\n    return (x +\nclass C:\n    def g(self): y = [1, 2\n".to_string());
        for text in &texts {
            let tree = gpulens_syntax::parse(text);
            let module = Module::new(text, &tree, Knowledge::get());
            let skip: Vec<usize> =
                gpulens_syntax::preorder(tree.root_node()).filter(|n| n.kind_name() == "function_definition").map(|n| n.id()).take(1).collect();
            let skipping = Module::new_skipping(text, &tree, Knowledge::get(), &skip);
            let ids = |nodes: &mut dyn Iterator<Item = Node<'_>>| nodes.map(|n| n.id()).collect::<Vec<_>>();
            for node in gpulens_syntax::preorder(tree.root_node()) {
                assert_eq!(module.parent(node), node.parent(), "{node:?}");
                assert_eq!(skipping.parent(node), node.parent(), "{node:?}");
                // The walk's list gives what the tree's cursor gives, below
                // imports and skipped definitions too.
                let expected = ids(&mut gpulens_syntax::preorder(node));
                assert_eq!(ids(&mut module.preorder(node)), expected, "{node:?}");
                assert_eq!(ids(&mut skipping.preorder(node)), expected, "{node:?}");
            }
        }
    }

    #[test]
    fn import_forms() {
        let src = "import numpy as np\nimport numpy.linalg as la\nfrom numpy import fft as F\n\
                   from sklearn.cluster import KMeans as KM\nimport pandas\nimport scipy.sparse\n\
                   from networkx import pagerank\nfrom . import local\n";
        assert_eq!(
            module_imports(src),
            [
                ("F", "numpy.fft"),
                ("KM", "sklearn.cluster.KMeans"),
                ("la", "numpy.linalg"),
                ("np", "numpy"),
                ("pagerank", "networkx.pagerank"),
                ("pandas", "pandas"),
                ("scipy", "scipy"),
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
    }

    #[test]
    fn qualified_names_of_calls() {
        let src = "import numpy as np\nimport numpy.linalg as la\nfrom numpy import fft as F\n\
                   np.fft.fft(a)\nla.svd(m)\nF.ifft(b)\nother.fft(c)\n";
        let tree = gpulens_syntax::parse(src);
        let module = Module::new(src, &tree, Knowledge::get());
        let names: Vec<_> = module
            .calls
            .iter()
            .map(|c| module.qualified_name(c.node.field("function").unwrap()))
            .collect();
        assert_eq!(
            names,
            [Some("numpy.fft.fft".to_string()), Some("numpy.linalg.svd".into()), Some("numpy.fft.ifft".into()), None]
        );
    }

    #[test]
    fn suppression_comments() {
        assert_eq!(parse_suppression("# gpulens: ignore"), Some(vec![]));
        assert_eq!(parse_suppression("#gpulens: ignore[CUPY001, CUDF002]"), Some(vec!["CUPY001".into(), "CUDF002".into()]));
        assert_eq!(parse_suppression("# noqa  # gpulens: ignore[CUPY001]"), Some(vec!["CUPY001".into()]));
        assert_eq!(parse_suppression("# gpulens: ignored"), None);
        assert_eq!(parse_suppression("# ignore"), None);
    }

    #[test]
    fn integer_literals() {
        assert_eq!(parse_int("10_000_000"), Some(10_000_000));
        assert_eq!(parse_int("0x10"), Some(16));
        assert_eq!(parse_int("99999999999999999999999"), None);
    }
}
