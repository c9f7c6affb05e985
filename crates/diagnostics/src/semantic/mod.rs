//! What a module means, as far as the rules need: which names are imported
//! from where, what values names hold (arrays, DataFrames, graphs, sizes),
//! which calls it makes and where (in a function, in a loop).
//!
//! Everything is collected in one iterative walk over the tree, so no input —
//! however deeply nested — can exhaust the stack, and values are evaluated on
//! demand with a depth limit.

use gpulens_syntax::NodeExt;
use rustc_hash::FxHashMap as HashMap;

use gpulens_knowledge::Knowledge;
use gpulens_syntax::{Node, Tree};

mod arguments;
mod collect;
mod docstrings;
mod flow;
mod attributes;
mod resolve;
mod sizes;
mod state;
mod values;

pub(crate) use arguments::*;
pub(crate) use collect::*;
pub(crate) use docstrings::*;
pub use flow::Evidence;
use sizes::*;
pub(crate) use attributes::*;

/// How deep value evaluation may recurse through expressions and bindings.
const MAX_EVAL_DEPTH: u32 = 24;

/// How many evaluations may be under way inside one another, whatever depth
/// each was asked at: a guard for the stack. Questions that start afresh
/// (at depth 0) from inside an evaluation could otherwise ask one another
/// without end on code defined through itself, and a stack overflow ends
/// the process (every file's findings lost, or the language server).
const MAX_NESTED_EVALS: u32 = 150;

/// Module attributes that are single numbers. (Constants of Python's `math`
/// and `cmath` and of NumPy, fixed for good: the knowledge base holds what
/// the GPU libraries map, and `math` is none of its modules.)
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
    /// `a, b = expr` in a function: one element (the one at this index) of
    /// what `expr` holds.
    Unpacked(Node<'t>, u8),
    /// `for x in expr`, `for i, x in enumerate(expr)`, `for x, y in zip(expr, …)`:
    /// one element of what `expr` holds at a time.
    Element(Node<'t>),
    /// `def f(name)`, `def f(name=default)`, `*name`, `**name`: whatever the caller passes.
    Parameter,
    /// `name.append(…)`, `name.extend(…)`, `name.insert(…)`: a list grown
    /// by the code, as long as its loop makes it, whatever its literal was.
    Grown,
    /// `def f(name=1.5)`, or a parameter the function's docstring documents
    /// as a number (`name : int`): one number. With an integer default
    /// (`m=30`), that value: the size the function is written for, unless
    /// a caller passes another.
    Number(Option<u64>),
}

/// Whether an attribute is the model's own state, and the largest number
/// known to size it (0 if none): see `state.rs`.
type ModelState = (bool, u64);

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
    /// `a @ b` expressions: matrix products, as `np.matmul(a, b)` is (see
    /// [`Module::resolve_matmul`]).
    pub matmuls: Vec<CallSite<'t>>,
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
    /// Where names are given first to a per-piece pandas method, or called
    /// by a lambda given so (see `rules::per_piece::in_per_piece_callable`),
    /// gathered on first use.
    pub(crate) given_per_piece: std::cell::OnceCell<Vec<(std::ops::Range<usize>, bool)>>,
    /// Module-level functions left out of the tree (a partial parse): their
    /// names are still taken.
    pub(crate) hidden_definitions: rustc_hash::FxHashSet<String>,
    /// Where the module sits in its project, when the caller knows: what the
    /// other modules' functions return (see [`crate::project`]).
    pub(crate) place: Option<crate::project::Place>,
    /// Sizes a notebook's saved outputs show (see `crate::RecordedSize`).
    pub(crate) recorded: std::sync::Arc<crate::NotebookFacts>,
    /// Function node id → what the context rules read in it, gathered on
    /// first use (they read a function once per call in it). Byte ranges,
    /// not nodes: a cell holding nodes would pin the tree's lifetime.
    function_facts: std::cell::RefCell<HashMap<usize, std::rc::Rc<FunctionFacts>>>,
    /// The functions of the walked tree, by scope and by name (see [`flow`]).
    functions: std::cell::OnceCell<flow::Functions>,
    /// (Function scope, parameter, inside a flow) → what the parameter holds
    /// and why (see [`flow`]).
    parameters: std::cell::RefCell<HashMap<(usize, String, bool), ParameterValue>>,
    /// Calls (by node id) of an array's method that mirrors a library
    /// function (`a.dot(b)`): their receiver is the function's first argument.
    mirror_calls: std::cell::RefCell<rustc_hash::FxHashSet<usize>>,
    /// Whether the evaluation under way reads a caller's argument or a
    /// callee's return (see [`flow`]): values flow one call away, no further.
    in_flow: std::cell::Cell<bool>,
    /// Whether the text names a GPU library, worked out on first use.
    gpu_library: std::cell::OnceCell<bool>,
    /// (node id, question) → a yes/no answer about it worked out once.
    answers: std::cell::RefCell<HashMap<(usize, &'static str), bool>>,
    /// (class node, attribute) → what `self.attribute` holds, and how deep
    /// below it its evaluation went, worked out on first use (see
    /// [`Module::eval`] for the depth).
    attributes: std::cell::RefCell<HashMap<(usize, String), (Value, u32)>>,
    /// The attributes being worked out, innermost last.
    attributes_in_progress: std::cell::RefCell<Vec<(usize, String)>>,
    /// While an attribute's self-updates (`self.df = self.df.dropna()`) are
    /// read: the attribute and what its other assignments give it, which
    /// `self.df` on the right stands for (see `Module::attribute_value`).
    provisional: std::cell::RefCell<Option<((usize, String), Value)>>,
    /// Set while evaluating under a provisional value: nothing worked out
    /// is remembered (it may rest on that value).
    no_memo: std::cell::Cell<bool>,
    /// Evaluations under way, one inside another (see [`MAX_NESTED_EVALS`]).
    nested: std::cell::Cell<u32>,
    /// Class node id → its `self.x = …` statements (see [`self_assignments`]):
    /// where each starts in the text, and the attribute's length after
    /// `self.`. A large class's text is read once, not once per attribute
    /// asked about. (Offsets, not text: a cell holding `&'t str` would pin
    /// the lifetime, as with `function_facts`.)
    class_assignments: std::cell::RefCell<HashMap<usize, SelfAssignments>>,
    /// (Class node id, attribute, read as a size) → whether it is the
    /// model's own state (see `state.rs`), where that was worked out
    /// without resting on what was still in progress, and the largest
    /// number known to size it (0 if none).
    model_state: std::cell::RefCell<HashMap<(usize, String, bool), ModelState>>,
    /// (Class node id, column) → where the names of the methods it defines
    /// at that column are (see [`Module::class_methods`]).
    class_methods: std::cell::RefCell<HashMap<(usize, usize), MethodNames>>,
    /// (Expression node id, scope) → its value and the depth its
    /// evaluation reached below it, for evaluations that the depth limit
    /// cut nowhere (see [`Module::eval`]).
    /// (Keyed also by whether it was read inside a flow: there, callers
    /// and callees tell nothing.)
    evaluated: std::cell::RefCell<HashMap<EvalKey, (Value, u32)>>,
    /// (Expression node id, scope, depth) → its value, for evaluations the
    /// limit cut somewhere.
    evaluated_cut: std::cell::RefCell<HashMap<(usize, usize, u32, bool), Value>>,
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

/// What a parameter holds and why.
type ParameterValue = (Value, Option<flow::Evidence>);

/// (Expression node id, scope, inside a flow): what a value is remembered by.
type EvalKey = (usize, usize, bool);

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
    /// Whether `next` gave its last node from `below`.
    from_below: bool,
}

impl Preorder<'_, '_> {
    /// Leaves out the descendants of the node `next` gave last.
    pub fn skip_children(&mut self) {
        if self.from_below {
            if let Some(below) = &mut self.below {
                below.skip_children();
            }
            return;
        }
        if let Some(last) = self.at.checked_sub(1).filter(|_| !self.order.is_empty()) {
            self.at = self.at.max(self.ends[last] as usize & !(NOT_WALKED as usize));
            self.below = None;
        }
    }
}

impl<'t> Iterator for Preorder<'_, 't> {
    type Item = Node<'t>;

    fn next(&mut self) -> Option<Node<'t>> {
        if let Some(below) = &mut self.below {
            if let Some(node) = below.next() {
                self.from_below = true;
                return Some(node);
            }
            self.below = None;
        }
        self.from_below = false;
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
            given_per_piece: std::cell::OnceCell::new(),
            hidden_definitions: rustc_hash::FxHashSet::default(),
            attributes: std::cell::RefCell::new(HashMap::default()),
            attributes_in_progress: std::cell::RefCell::new(Vec::new()),
            provisional: std::cell::RefCell::new(None),
            no_memo: std::cell::Cell::new(false),
            nested: std::cell::Cell::new(0),
            class_assignments: std::cell::RefCell::new(HashMap::default()),
            model_state: std::cell::RefCell::new(HashMap::default()),
            class_methods: std::cell::RefCell::new(HashMap::default()),
            evaluated: std::cell::RefCell::new(HashMap::default()),
            evaluated_cut: std::cell::RefCell::new(HashMap::default()),
            reached: std::cell::Cell::new(0),
            function_facts: std::cell::RefCell::new(HashMap::default()),
            answers: std::cell::RefCell::new(HashMap::default()),
            gpu_library: std::cell::OnceCell::new(),
            functions: std::cell::OnceCell::new(),
            in_flow: std::cell::Cell::new(false),
            parameters: std::cell::RefCell::new(HashMap::default()),
            mirror_calls: Default::default(),
            place: None,
            recorded: Default::default(),
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
            self.imports.values().flatten().any(|(_, target)| crate::is_gpu_module(target.split('.').next().unwrap_or(target)))
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
    /// Takes what the notebook the text comes from says beyond its code
    /// (nothing for a file).
    pub(crate) fn read_notebook(&mut self, settings: &crate::Settings) {
        if let Some(facts) = &settings.notebook {
            self.recorded = facts.clone();
        }
    }

    pub fn preorder(&self, node: Node<'t>) -> Preorder<'_, 't> {
        let start = node.start_byte();
        let mut at = self.order.partition_point(|n| n.start_byte() < start);
        while let Some(n) = self.order.get(at).filter(|n| n.start_byte() == start) {
            if n.id() == node.id() {
                return Preorder { order: &self.order, ends: &self.ends, at, end: self.ends[at] as usize & !(NOT_WALKED as usize), below: None, from_below: false };
            }
            at += 1;
        }
        Preorder { order: &[], ends: &[], at: 0, end: 0, below: Some(gpulens_syntax::preorder(node)), from_below: false }
    }

    /// The innermost function definition holding `node`, if any (see
    /// [`gpulens_syntax::innermost_function`]), found through the walk's
    /// table of parents.
    pub fn enclosing_function(&self, node: Node<'t>) -> Option<Node<'t>> {
        gpulens_syntax::innermost_function(self.ancestors(node))
    }

    pub fn knowledge(&self) -> &'static Knowledge {
        self.knowledge
    }

    pub fn text_of(&self, node: Node<'_>) -> &'t str {
        &self.text[node.byte_range()]
    }

    /// Its text with the whitespace left out: the same expression however
    /// it is spaced or broken over lines (`x[i, j]` and `x[i,j]`).
    pub(crate) fn compact_text(&self, node: Node<'_>) -> String {
        self.text_of(node).split_whitespace().collect()
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
    /// use, by name: imports (of any module: the rules ask whether a name is
    /// imported at all, and an imported function passed to a library call
    /// is Python work), names assigned at module level, and GPU kernels
    /// (launched by name). Each name comes with the offsets of its
    /// module-level bindings (which one a use sees depends on where it is)
    /// and a hash of what it is bound to.
    pub fn outside_names<'a>(&'a self) -> HashMap<&'t str, OutsideName<'a>> {
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
            for (scope, target) in list {
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
                        Binding::Unpacked(rhs, _) => ("unpack", self.text_of(*rhs)),
                        Binding::Element(of) => ("element", self.text_of(*of)),
                        Binding::Parameter => ("parameter", ""),
                        Binding::Number(_) => ("number", ""),
                        Binding::Grown => ("grown", ""),
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
    /// Whether the function `scope` binds `name` itself (a parameter, an
    /// assignment, a loop variable): there it hides what the module binds.
    pub(crate) fn binds_locally(&self, scope: usize, name: &str) -> bool {
        scope != MODULE_SCOPE && self.bindings.contains_key(&(scope, name))
    }

    /// What `name` is imported as at module level, if it is.
    pub(crate) fn import_at_module_level(&self, name: &str) -> Option<&str> {
        let whole = 0..self.text.len();
        self.imports.get(name)?.iter().find(|(scope, _)| *scope == whole).map(|(_, target)| target.as_str())
    }

    pub(crate) fn import_at(&self, name: &str, offset: usize) -> Option<&str> {
        self.imports
            .get(name)?
            .iter()
            .filter(|(scope, _)| scope.contains(&offset) || scope.end == offset)
            .min_by_key(|(scope, _)| scope.len())
            .map(|(_, target)| target.as_str())
    }
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
                let mut after = rest[name_len..].trim_start_matches([' ', '\t']);
                // An item of it (`self.x[k] = ...`): read past its brackets.
                if let Some(inside) = after.strip_prefix('[') {
                    let mut open = 1;
                    let mut close = None;
                    for (i, c) in inside.char_indices() {
                        open += match c {
                            '[' => 1,
                            ']' => -1,
                            _ => 0,
                        };
                        if open == 0 {
                            close = Some(i);
                            break;
                        }
                    }
                    after = close.map_or("", |i| inside[i + 1..].trim_start_matches([' ', '\t']));
                }
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
                // (A relative import keeps its dots: the project's index reads it.)
                ("local", ".local"),
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
