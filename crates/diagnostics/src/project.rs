//! What the other modules of the checked project say their functions
//! return, so that a value made in one module is known in another
//! (`factor_data = utils.demean_forward_returns(factor_data)`, where
//! `utils` documents that it returns a DataFrame).
//!
//! A module's summary is read from its text alone, without a parse: each
//! module-level function's return annotation (`-> pd.DataFrame`) or, failing
//! one, the single value its docstring's Returns section documents (NumPy,
//! Google and Sphinx styles), and each module-level type alias of a data
//! type (`Table = list | pd.Series`). The command line summarises every checked file
//! before checking any; the language server keeps one summary per file of
//! the workspace and replaces it when the file changes. Both hand the
//! analysis of one file a [`Place`]: the index and the file's module name.
//!
//! A second pass reads what each module passes to the functions of the
//! others (`report.summarize(pd.read_csv(path))`), with the first pass's
//! index to go by ([`Place::passes`]): the arguments are evaluated as the
//! analysis evaluates a same-module caller's, one call away (a caller's own
//! parameters are read with its own evidence, not its callers'). A
//! parameter of a module-level function is then what every caller, in its
//! module and in the others, passes (see `semantic::flow`). Calls from tests
//! do not count.

use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::semantic::{type_text_value, Value};

/// Module-level functions of a project → the value each is declared to
/// return, and module-level type aliases → the data type each names (an
/// annotation naming one holds that type; a call of one, never written,
/// would be read as returning it).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ProjectIndex {
    returns: FxHashMap<String, Value>,
    /// Module → its functions' own names.
    by_module: FxHashMap<String, Vec<String>>,
    /// The modules of the project whose functions may have findings (what
    /// a call counts in, see [`Place::passes`]): those naming a library the
    /// knowledge maps.
    modules: FxHashSet<String>,
    /// Their module-level functions that take arguments, qualified.
    functions: FxHashSet<String>,
    /// Module → what it passes to the other modules' functions (the source
    /// of `incoming`).
    outgoing: FxHashMap<String, Vec<Passed>>,
    /// Function → the calls of it in other modules, for the functions some
    /// call passes a value the analysis knows.
    incoming: FxHashMap<String, Vec<Passed>>,
    /// Module → its functions' own names in `incoming`.
    receiving: FxHashMap<String, Vec<String>>,
    /// A digest of `returns` (see [`ProjectIndex::digest`]).
    declared_digest: u64,
    /// A digest of `returns` and `incoming`.
    digest: u64,
}

/// One call, in one module of the project, of a function of another, with
/// what it passes (see [`Place::passes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passed {
    /// The function called, qualified (`shop.report.summarize`).
    pub callee: String,
    /// The function the call is in, qualified, or the module's name for a
    /// call at module level.
    pub caller: String,
    /// The positional arguments in order, up to a `*args`.
    pub positional: Vec<Argument>,
    /// The keyword arguments.
    pub keywords: Vec<(String, Argument)>,
}

/// One argument of a [`Passed`] call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Argument {
    pub value: Value,
    /// Its text, for the evidence a message names (only where the value is
    /// known; at most [`ARGUMENT_TEXT`] bytes of it).
    pub text: String,
}

/// How much of an argument's text a [`Passed`] call keeps.
pub(crate) const ARGUMENT_TEXT: usize = 80;

impl Passed {
    /// What the call passes as parameter `name`, at `position` among the
    /// positional parameters if it has one there; `None` where it passes
    /// nothing (the parameter keeps its default).
    pub fn argument(&self, name: &str, position: Option<usize>) -> Option<&Argument> {
        self.keywords.iter().find(|(k, _)| k == name).map(|(_, a)| a).or_else(|| self.positional.get(position?))
    }
}

/// Where a checked file sits in its project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub index: Arc<ProjectIndex>,
    /// Its dotted module name (`alphalens.performance`; a package's
    /// `__init__.py` is the package, `alphalens`).
    pub module: String,
    /// It is a package's `__init__.py`: relative imports start from it, not
    /// from its parent.
    pub package: bool,
}

/// One summarised function: its qualified name and declared value.
pub type Summary = Vec<(String, Value)>;

impl ProjectIndex {
    /// The declared values of `text`'s module-level functions, as module `module`.
    pub fn summarize(module: &str, text: &str) -> Summary {
        let Some(outline) = gpulens_syntax::outline::outline(text) else { return Vec::new() };
        let mut out = Vec::new();
        for d in outline.definitions.iter().filter(|d| d.classes.is_empty()) {
            let definition = &text[d.header_start..d.range.end];
            let Some(def_at) = definition.find("def ") else { continue };
            // The header: up to the `:` that ends it (outside brackets and strings).
            let Some(header_end) = header_end(&definition[def_at..]) else { continue };
            let header = &definition[def_at..def_at + header_end];
            let declared = header
                .rsplit_once("->")
                .map(|(_, annotation)| annotation.trim())
                .filter(|a| !names_a_container(a))
                .map(type_text_value)
                .filter(|v| *v != Value::Unknown)
                .or_else(|| {
                    let doc = leading_docstring(&definition[def_at + header_end + 1..])?;
                    let ty = documented_return(doc)?;
                    Some(type_text_value(ty)).filter(|v| *v != Value::Unknown)
                });
            if let Some(value) = declared {
                out.push((format!("{module}.{}", d.name), value));
            }
        }
        // Type aliases (`Frame = pd.DataFrame`, `y_type = list | pd.Series`,
        // `type Table = pd.DataFrame`): what an annotation naming one from
        // another module holds.
        for (range, _) in outline.statements.iter().zip(&outline.in_class).filter(|(_, in_class)| !**in_class) {
            if let Some((name, value)) = type_alias(&text[range.clone()]) {
                out.push((format!("{module}.{name}"), value));
            }
        }
        out
    }

    pub fn new(summaries: impl IntoIterator<Item = (String, Value)>) -> Self {
        let mut index = ProjectIndex::default();
        for (name, value) in summaries {
            index.insert(name, value);
        }
        index.declared_digest = index.compute_digest();
        index.digest = index.declared_digest;
        index
    }

    /// Notes `module` as a module of the project whose functions may have
    /// findings, with its module-level functions that take arguments (see
    /// [`ProjectIndex::functions_of`]): the calls of those are what
    /// [`Place::passes`] reads.
    pub fn add_module(&mut self, module: String, functions: Vec<String>) {
        self.functions.extend(functions.into_iter().map(|f| format!("{module}.{f}")));
        self.modules.insert(module);
    }

    /// The module-level functions of `text` with a parameter whose value
    /// its callers tell (see `semantic::flow`), read without a parse: one
    /// that no annotation, docstring entry or number default says a type
    /// for (a parameter that has one is read from it, never from callers),
    /// in a function that can have a finding at all (one the pre-scan
    /// keeps when every flow reaches it: a value passed to another names
    /// nothing a rule starts from).
    pub fn functions_of(text: &str) -> Vec<String> {
        let Some(outline) = gpulens_syntax::outline::outline(text) else { return Vec::new() };
        // (Of those, the ones that can have a finding whatever value reaches
        // them: those the pre-scan would keep, reached by every flow.)
        let relevant: Option<Vec<bool>> = (|| {
            let plain = crate::prescan::plain_code(text)?;
            let tests = vec![false; outline.definitions.len()];
            let (irrelevant, _, _) = crate::prescan::irrelevant_definitions(text, &plain, &outline, &tests, &|_| true, false)?;
            Some(irrelevant.into_iter().map(|i| !i).collect())
        })();
        outline
            .definitions
            .iter()
            .enumerate()
            .filter(|(i, d)| d.classes.is_empty() && relevant.as_ref().is_none_or(|r| r[*i]))
            .map(|(_, d)| d)
            .filter(|d| {
                let definition = &text[d.header_start..d.range.end];
                let Some(def_at) = definition.find("def ") else { return true };
                let Some(end) = header_end(&definition[def_at..]) else { return true };
                let header = &definition[def_at..def_at + end];
                let (Some(open), Some(close)) = (header.find('('), header.rfind(')')) else { return true };
                let documented = leading_docstring(&definition[def_at + end + 1..]).map(crate::semantic::documented_types).unwrap_or_default();
                split_top_level(&header[open + 1..close]).into_iter().any(|param| told_by_callers(param, &documented))
            })
            .map(|d| d.name.clone())
            .collect()
    }

    /// Whether `module` is a module of the project whose functions may have findings.
    pub fn has_module(&self, module: &str) -> bool {
        self.modules.contains(module)
    }

    /// Sets what each module passes to the others' functions (see
    /// [`Place::passes`]), replacing what was known for those modules.
    pub fn set_passes(&mut self, passes: impl IntoIterator<Item = (String, Vec<Passed>)>) {
        for (module, passed) in passes {
            if passed.is_empty() {
                self.outgoing.remove(&module);
            } else {
                self.outgoing.insert(module, passed);
            }
        }
        self.incoming.clear();
        for passed in self.outgoing.values().flatten() {
            self.incoming.entry(passed.callee.clone()).or_default().push(passed.clone());
        }
        // (Only a function some call passes a known value tells anything:
        // the others would join to nothing known.)
        self.incoming.retain(|_, calls| {
            calls.iter().any(|c| c.positional.iter().chain(c.keywords.iter().map(|(_, a)| a)).any(|a| a.value != Value::Unknown))
        });
        for calls in self.incoming.values_mut() {
            calls.sort_by(|a, b| (&a.caller, format!("{a:?}")).cmp(&(&b.caller, format!("{b:?}"))));
        }
        self.receiving.clear();
        for callee in self.incoming.keys() {
            if let Some((module, name)) = callee.rsplit_once('.') {
                self.receiving.entry(module.to_string()).or_default().push(name.to_string());
            }
        }
        for names in self.receiving.values_mut() {
            names.sort_unstable();
        }
        self.digest = self.compute_full_digest();
    }

    /// The calls in other modules of the function `qualified` (none unless
    /// one of them passes a value the analysis knows).
    pub fn passed_to(&self, qualified: &str) -> &[Passed] {
        self.incoming.get(qualified).map_or(&[], |v| &v[..])
    }

    /// What module `module` passes to the others' functions.
    pub fn passes_of(&self, module: &str) -> &[Passed] {
        self.outgoing.get(module).map_or(&[], |v| &v[..])
    }

    /// The digest of what the modules declare (not of what they pass): when
    /// it changes, what every module passes must be read again.
    pub fn declared_digest(&self) -> u64 {
        self.declared_digest
    }

    fn insert(&mut self, name: String, value: Value) {
        if let Some((module, short)) = name.rsplit_once('.') {
            self.by_module.entry(module.to_string()).or_default().push(short.to_string());
        }
        self.returns.insert(name, value);
    }

    /// Replaces what module `module` declared with `summary` (a file changed).
    pub fn replace_module(&mut self, module: &str, summary: Summary) {
        let prefix = format!("{module}.");
        self.returns.retain(|name, _| !name.starts_with(&prefix) || name[prefix.len()..].contains('.'));
        let returns = std::mem::take(&mut self.returns);
        let modules = std::mem::take(&mut self.modules);
        let functions = std::mem::take(&mut self.functions);
        let outgoing = std::mem::take(&mut self.outgoing);
        *self = ProjectIndex::new(returns.into_iter().chain(summary));
        self.modules = modules;
        self.functions = functions;
        self.set_passes(outgoing);
    }

    /// What the function `qualified` is declared to return.
    pub fn returns(&self, qualified: &str) -> Option<Value> {
        self.returns.get(qualified).copied()
    }

    pub fn len(&self) -> usize {
        self.returns.len()
    }

    /// How many functions other modules pass a known value to.
    pub fn receiving_len(&self) -> usize {
        self.incoming.len()
    }

    pub fn is_empty(&self) -> bool {
        self.returns.is_empty() && self.incoming.is_empty()
    }

    /// Bytes the index holds (its names and values, with the maps' slots).
    pub fn memory_bytes(&self) -> usize {
        let entry = std::mem::size_of::<(String, Value)>() + 8;
        let string = std::mem::size_of::<String>() + 8;
        let names: usize = self.returns.keys().map(|k| k.capacity()).sum::<usize>();
        let modules: usize =
            self.by_module.iter().map(|(m, f)| m.capacity() + string + f.capacity() * string + f.iter().map(|n| n.capacity()).sum::<usize>()).sum();
        let passed = |p: &Passed| {
            std::mem::size_of::<Passed>()
                + p.callee.capacity()
                + p.caller.capacity()
                + p.positional.capacity() * std::mem::size_of::<Argument>()
                + p.positional.iter().map(|a| a.text.capacity()).sum::<usize>()
                + p.keywords.capacity() * std::mem::size_of::<(String, Argument)>()
                + p.keywords.iter().map(|(k, a)| k.capacity() + a.text.capacity()).sum::<usize>()
        };
        let calls: usize = self.outgoing.iter().chain(&self.incoming).map(|(k, v)| k.capacity() + string + v.iter().map(passed).sum::<usize>()).sum();
        let receiving: usize = self.receiving.iter().map(|(m, f)| m.capacity() + string + f.iter().map(|n| n.capacity() + string).sum::<usize>()).sum();
        let project_modules: usize = self.modules.iter().map(|m| m.capacity() + string).sum();
        names + modules + self.returns.capacity() * entry + calls + receiving + project_modules
    }

    /// A digest of the whole index: what a cache of findings that read it is keyed by.
    pub fn digest(&self) -> u64 {
        self.digest
    }

    fn compute_digest(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut entries: Vec<(&String, String)> = self.returns.iter().map(|(k, v)| (k, format!("{v:?}"))).collect();
        entries.sort();
        let mut hasher = rustc_hash::FxHasher::default();
        entries.hash(&mut hasher);
        hasher.finish()
    }

    fn compute_full_digest(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut entries: Vec<(&String, String)> = self.incoming.iter().map(|(k, v)| (k, format!("{v:?}"))).collect();
        entries.sort();
        let mut hasher = rustc_hash::FxHasher::default();
        (self.declared_digest, entries).hash(&mut hasher);
        hasher.finish()
    }

}

/// What a [`ProjectIndex`] holds, in a form that can be stored between runs
/// (the command line's cache keeps the index of an unchanged tree).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct StoredIndex {
    returns: Vec<(String, StoredValue)>,
    modules: Vec<String>,
    functions: Vec<String>,
    outgoing: Vec<(String, Vec<StoredPassed>)>,
}

/// A [`Value`] as stored: its kind, its number, and a model's name.
type StoredValue = (u8, Option<u64>, Option<String>);

#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct StoredPassed {
    callee: String,
    caller: String,
    positional: Vec<(StoredValue, String)>,
    keywords: Vec<(String, StoredValue, String)>,
}

fn store_value(value: Value) -> StoredValue {
    match value {
        Value::Unknown => (0, None, None),
        Value::Int(n) => (1, Some(n), None),
        Value::Scalar => (2, None, None),
        Value::Array(n) => (3, n, None),
        Value::Frame(n) => (4, n, None),
        Value::Graph(n) => (5, n, None),
        Value::Grouped(n) => (6, n, None),
        Value::Device(n) => (7, n, None),
        Value::GpuFrame => (8, None, None),
        Value::Model(name) => (9, None, Some(name.to_string())),
    }
}

/// The value stored as `stored`; `None` for a model this build's knowledge
/// does not know (the index is then made again).
fn stored_value((kind, n, name): StoredValue) -> Option<Value> {
    Some(match kind {
        0 => Value::Unknown,
        1 => Value::Int(n?),
        2 => Value::Scalar,
        3 => Value::Array(n),
        4 => Value::Frame(n),
        5 => Value::Graph(n),
        6 => Value::Grouped(n),
        7 => Value::Device(n),
        8 => Value::GpuFrame,
        9 => Value::Model(gpulens_knowledge::Knowledge::get().api(&name?)?.cpu.as_str()),
        _ => return None,
    })
}

impl ProjectIndex {
    /// The index in a form that can be stored (see [`ProjectIndex::from_stored`]).
    pub fn stored(&self) -> StoredIndex {
        let mut returns: Vec<(String, StoredValue)> = self.returns.iter().map(|(k, v)| (k.clone(), store_value(*v))).collect();
        returns.sort();
        let mut modules: Vec<String> = self.modules.iter().cloned().collect();
        modules.sort();
        let mut functions: Vec<String> = self.functions.iter().cloned().collect();
        functions.sort();
        let argument = |a: &Argument| (store_value(a.value), a.text.clone());
        let mut outgoing: Vec<(String, Vec<StoredPassed>)> = self
            .outgoing
            .iter()
            .map(|(module, passes)| {
                let passes = passes
                    .iter()
                    .map(|p| StoredPassed {
                        callee: p.callee.clone(),
                        caller: p.caller.clone(),
                        positional: p.positional.iter().map(argument).collect(),
                        keywords: p.keywords.iter().map(|(k, a)| (k.clone(), store_value(a.value), a.text.clone())).collect(),
                    })
                    .collect();
                (module.clone(), passes)
            })
            .collect();
        outgoing.sort_by(|a, b| a.0.cmp(&b.0));
        StoredIndex { returns, modules, functions, outgoing }
    }

    /// The index `stored` holds, as it was made; `None` where this build
    /// cannot read it back.
    pub fn from_stored(stored: StoredIndex) -> Option<Self> {
        let returns: Vec<(String, Value)> = stored.returns.into_iter().map(|(k, v)| Some((k, stored_value(v)?))).collect::<Option<_>>()?;
        let mut index = ProjectIndex::new(returns);
        index.modules = stored.modules.into_iter().collect();
        index.functions = stored.functions.into_iter().collect();
        let argument = |(value, text): (StoredValue, String)| Some(Argument { value: stored_value(value)?, text });
        let mut outgoing = Vec::new();
        for (module, passes) in stored.outgoing {
            let passes: Vec<Passed> = passes
                .into_iter()
                .map(|p| {
                    Some(Passed {
                        callee: p.callee,
                        caller: p.caller,
                        positional: p.positional.into_iter().map(argument).collect::<Option<_>>()?,
                        keywords: p.keywords.into_iter().map(|(k, v, t)| Some((k, argument((v, t))?))).collect::<Option<_>>()?,
                    })
                })
                .collect::<Option<_>>()?;
            outgoing.push((module, passes));
        }
        index.set_passes(outgoing);
        Some(index)
    }
}

impl Place {
    /// The absolute module a relative import names (`.utils` from
    /// `alphalens.performance` is `alphalens.utils`; `..core.x` goes one
    /// package up), or the name itself when it is absolute.
    pub fn absolute(&self, name: &str) -> Option<String> {
        let dots = name.len() - name.trim_start_matches('.').len();
        if dots == 0 {
            return Some(name.to_string());
        }
        let mut base: Vec<&str> = self.module.split('.').collect();
        if !self.package {
            base.pop();
        }
        for _ in 1..dots {
            base.pop()?;
        }
        let rest = &name[dots..];
        if !rest.is_empty() {
            base.push(rest);
        }
        (!base.is_empty()).then(|| base.join("."))
    }

    /// The names `text`'s import statements bind (see [`Imported`]), with
    /// relative modules made absolute.
    fn imports(&self, text: &str) -> Vec<Imported> {
        let mut out = Vec::new();
        for statement in import_statements(text) {
            let words: Vec<&str> = statement.split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')').filter(|w| !w.is_empty()).collect();
            let (from, names) = match words.as_slice() {
                ["from", module, "import", names @ ..] => match self.absolute(module) {
                    Some(module) => (Some(module), names),
                    None => continue,
                },
                ["import", names @ ..] => (None, names),
                _ => continue,
            };
            let mut i = 0;
            while i < names.len() {
                let name = names[i];
                let alias = (names.get(i + 1) == Some(&"as")).then(|| names.get(i + 2).copied().unwrap_or(name));
                i += if alias.is_some() { 3 } else { 1 };
                let (target, bound) = match &from {
                    Some(module) => (format!("{module}.{name}"), alias.unwrap_or(name)),
                    // (`import pkg.io` binds `pkg`.)
                    None => (name.to_string(), alias.unwrap_or_else(|| name.split('.').next().unwrap_or(name))),
                };
                out.push(Imported { alias: bound.to_string(), target, from: from.clone(), aliased: alias.is_some() });
            }
        }
        out
    }

    /// The names by which `text` calls the index's functions: those it
    /// imports from the project (`from .utils import load`, `from pkg.io
    /// import load as read`), and the functions of the project modules it
    /// imports (`from . import utils`, `import pkg.utils as u`: `utils.load(`
    /// is a call of `load`). Read from its import statements as text.
    pub fn imported_names(&self, text: &str) -> FxHashSet<String> {
        let mut out = FxHashSet::default();
        if self.index.is_empty() {
            return out;
        }
        let add_module = |module: &str, out: &mut FxHashSet<String>| {
            out.extend(self.index.by_module.get(module).into_iter().flatten().cloned());
        };
        for import in self.imports(text) {
            match import.from {
                Some(_) if self.index.returns.contains_key(&import.target) => {
                    out.insert(import.alias);
                }
                Some(_) => add_module(&import.target, &mut out),
                None if import.aliased => add_module(&import.target, &mut out),
                None => {}
            }
        }
        out
    }

    /// This module's functions that calls in other modules pass a value
    /// the analysis knows (see [`ProjectIndex::passed_to`]).
    pub fn receiving(&self) -> &[String] {
        self.index.receiving.get(&self.module).map_or(&[], |v| &v[..])
    }

    /// Whether the analysis of `text` (this place's module) reads the
    /// index: it calls a function the index knows, or other modules pass
    /// values to its functions.
    pub fn reads_index(&self, text: &str) -> bool {
        !self.receiving().is_empty() || !self.imported_names(text).is_empty()
    }

    /// Whether this module holds tests (`tests.test_io`, `conftest`): what
    /// it passes is small by design, and does not count.
    fn is_test_module(&self) -> bool {
        self.module.split('.').any(|part| {
            matches!(part, "test" | "tests" | "testing" | "conftest") || part.starts_with("test_") || part.ends_with("_test")
        })
    }

    /// The names by which `text` reaches the functions of the project's
    /// other modules: each with what it names, a function or (`true`) a module.
    fn project_names(&self, text: &str, verified: bool) -> Vec<(String, String, bool)> {
        let index = &self.index;
        let is_package_prefix = |m: &str| index.modules.iter().chain(index.by_module.keys()).any(|p| p.len() > m.len() && p.starts_with(m) && p.as_bytes()[m.len()] == b'.');
        let mut out = Vec::new();
        for import in self.imports(text) {
            match &import.from {
                Some(module) => {
                    if index.has_module(&import.target) {
                        out.push((import.alias, import.target, true));
                    } else if *module != self.module
                        && if verified { index.functions.contains(&import.target) } else { index.has_module(module) }
                    {
                        out.push((import.alias, import.target, false));
                    }
                }
                None if index.has_module(&import.target) || is_package_prefix(&import.target) => {
                    // (`import pkg.io` binds `pkg`: its calls read `pkg.io.f(`.)
                    let target = if import.aliased { import.target } else { import.alias.clone() };
                    out.push((import.alias, target, true));
                }
                None => {}
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// The functions of the project's other modules that `text` (this
    /// place's module) may call, qualified: read from the bytes (a
    /// superset), before the index knows which functions read their callers.
    pub fn called(&self, text: &str) -> Vec<String> {
        if self.is_test_module() || (!crate::might_have_findings(text) && self.imported_names(text).is_empty()) {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (name, target, module) in self.project_names(text, false) {
            calls_of_through(text, &name, &target, module, &mut |qualified| {
                out.push(qualified.to_string());
                false
            });
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// What `text` (this place's module) passes to the functions of the
    /// project's other modules: every call of one outside tests, with its
    /// arguments evaluated as the analysis evaluates a caller's (with the
    /// caller's own evidence, one call away). Parses only the definitions
    /// that name what the module imports from the project.
    pub fn passes(&self, text: &str) -> Vec<Passed> {
        // (A module that names no library the knowledge maps, and calls no
        // function declared to return data, passes nothing the analysis knows
        // but numbers, which tell a size only beside data.)
        if self.is_test_module() || (!crate::might_have_findings(text) && self.imported_names(text).is_empty()) {
            return Vec::new();
        }
        let names = self.project_names(text, true);
        if names.is_empty() {
            return Vec::new();
        }
        let Some(outline) = gpulens_syntax::outline::outline(text) else { return Vec::new() };
        let functions = &self.index.functions;
        let mentions = |code: &str| names.iter().any(|(name, target, module)| calls_through(code, name, target, *module, functions));
        let skip: Vec<std::ops::Range<usize>> = outline
            .definitions
            .iter()
            .filter(|d| d.name.starts_with("test") || d.fixture || !mentions(&text[d.range.clone()]))
            .map(|d| d.range.clone())
            .collect();
        let tree = gpulens_syntax::outline::parse_excluding(text, &skip);
        let mut module = crate::semantic::Module::new(text, &tree, gpulens_knowledge::Knowledge::get());
        module.place = Some(self.clone());
        module.passes_out()
    }

    /// What the project function `qualified` (as the file's imports name
    /// it) is declared to return.
    pub fn returns(&self, qualified: &str) -> Option<Value> {
        self.index.returns(&self.absolute(qualified)?)
    }
}

/// `list` split at its commas outside brackets and strings.
fn split_top_level(list: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None::<u8>, 0);
    for (i, b) in list.bytes().enumerate() {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                b'\'' | b'"' => quote = Some(b),
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                b',' if depth == 0 => {
                    out.push(&list[start..i]);
                    start = i + 1;
                }
                _ => {}
            },
        }
    }
    out.push(&list[start..]);
    out
}

/// Whether the parameter written `param` (in a `def` line) may hold what
/// its callers pass: not `*args`/`**kwargs`, the instance or a separator,
/// and with no annotation, no type in `documented` (its function's
/// docstring entries) and no number for a default. Unsure is yes.
fn told_by_callers(param: &str, documented: &[(&str, &str)]) -> bool {
    let param = param.trim();
    if param.is_empty() || param.starts_with('*') || param == "/" {
        return false;
    }
    let colon = param.find(':');
    let equals = param.find('=');
    let annotated = match (colon, equals) {
        (Some(c), Some(e)) => c < e,
        (Some(_), None) => true,
        _ => false,
    };
    let name = param[..[colon, equals].into_iter().flatten().min().unwrap_or(param.len())].trim();
    if annotated || matches!(name, "self" | "cls") || documented.iter().any(|(n, _)| *n == name) {
        return false;
    }
    // (A plain decimal default: the analysis reads it as a number.)
    let number_default = equals.is_some_and(|e| {
        let default = param[e + 1..].trim();
        default.starts_with(|c: char| c.is_ascii_digit()) && default.bytes().all(|b| b.is_ascii_digit() || b == b'.' || b == b'_')
    });
    !number_default
}

/// Whether `code` may call `name(…)` or, where `name` is module `target`,
/// `name.function(…)` of one of `functions` (read from the bytes: a superset).
fn calls_through(code: &str, name: &str, target: &str, module: bool, functions: &FxHashSet<String>) -> bool {
    calls_of_through(code, name, target, module, &mut |qualified| !module || functions.contains(qualified))
}

/// The calls `code` may make through `name` (see [`calls_through`]): each
/// function's qualified name is handed to `found`, until it answers true.
/// Returns whether it did.
fn calls_of_through(code: &str, name: &str, target: &str, module: bool, found: &mut dyn FnMut(&str) -> bool) -> bool {
    let bytes = code.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    memchr::memmem::find_iter(bytes, name.as_bytes()).any(|at| {
        if at > 0 && (word(bytes[at - 1]) || bytes[at - 1] == b'.') {
            return false;
        }
        let after = &bytes[at + name.len()..];
        let mut rest = after;
        if module {
            // (`pkg.sub.f(`: through the dots of a dotted module name.)
            let mut qualified = target.to_string();
            while let [b'.', tail @ ..] = rest {
                let end = tail.iter().position(|b| !word(*b)).unwrap_or(tail.len());
                if end == 0 {
                    return false;
                }
                qualified.push('.');
                qualified.push_str(std::str::from_utf8(&tail[..end]).unwrap_or(""));
                rest = &tail[end..];
            }
            if rest.len() == after.len() || rest.trim_ascii_start().first() != Some(&b'(') {
                return false;
            }
            return found(&qualified);
        }
        rest.trim_ascii_start().first() == Some(&b'(') && found(target)
    })
}

/// The dotted module name of a file at `path` (its parts, folders first):
/// the folders above it that are packages (hold an `__init__.py`, as
/// `is_package` tells) and its stem, or the package itself for an
/// `__init__.py`. Returns the name and whether the file is a package.
pub fn module_name(parts: &[&str], is_package: &dyn Fn(usize) -> bool) -> Option<(String, bool)> {
    let (file, folders) = parts.split_last()?;
    let stem = file.strip_suffix(".py").or_else(|| file.strip_suffix(".pyi"))?;
    let mut names: Vec<&str> = Vec::new();
    // Folders from the innermost out, while each is a package.
    for i in (0..folders.len()).rev() {
        if !is_package(i) {
            break;
        }
        names.push(folders[i]);
    }
    names.reverse();
    let package = stem == "__init__";
    if !package {
        names.push(stem);
    }
    (!names.is_empty() && names.iter().all(|n| is_identifier(n))).then(|| (names.join("."), package))
}

fn is_identifier(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_') && name.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// One name an import statement binds: `from m import f as g` binds `g`
/// to `m.f` (from `m`); `import m.n as a` binds `a` to `m.n`; `import m.n`
/// binds `m`, and its target is `m.n` as written.
struct Imported {
    alias: String,
    target: String,
    /// The module of a `from … import`, absolute.
    from: Option<String>,
    /// Written with `as`.
    aliased: bool,
}

/// The import statements of `text` that start a line (`from a import (b,
/// c)` whole, across its lines), as written.
fn import_statements(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if !(trimmed.starts_with("from ") || trimmed.starts_with("import ")) {
            continue;
        }
        let mut statement = trimmed.split('#').next().unwrap_or("").to_string();
        while statement.contains('(') && !statement.contains(')') {
            let Some(next) = lines.next() else { break };
            statement.push(' ');
            statement.push_str(next.split('#').next().unwrap_or(""));
        }
        out.push(statement);
    }
    out
}

/// A module-level statement that names a type of data: `Name = type`,
/// `Name: TypeAlias = type` or `type Name = type`, where the type is written
/// with names, dots, `|`, brackets and commas only, and names a table, an
/// array or a graph first (see [`type_text_value`]).
fn type_alias(statement: &str) -> Option<(&str, Value)> {
    let statement = statement.trim();
    let statement = statement.strip_prefix("type ").unwrap_or(statement);
    let (left, right) = statement.split_once('=')?;
    if right.starts_with('=') {
        return None;
    }
    let name = left.split_once(':').map_or(left, |(n, ty)| if ty.trim().ends_with("TypeAlias") { n } else { "" }).trim();
    let right = right.trim();
    let written_as_type = !right.is_empty()
        && right.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '|' | '[' | ']' | ',' | ' '))
        && right.contains('.');
    if !is_identifier(name) || !written_as_type {
        return None;
    }
    Some((name, type_text_value(right))).filter(|(_, v)| *v != Value::Unknown)
}

/// A type that holds several values (`tuple[...]`, `list[...]`, an
/// iterator): not the one value it names.
fn names_a_container(annotation: &str) -> bool {
    let lower = annotation.to_ascii_lowercase();
    ["tuple", "list", "dict", "iterator", "iterable", "generator", "sequence", "mapping", "set["].iter().any(|c| lower.contains(c))
}

/// The inside of the triple-quoted string a body starts with (its docstring).
fn leading_docstring(body: &str) -> Option<&str> {
    let body = body.trim_start();
    let body = body.strip_prefix(['r', 'R', 'u', 'U']).unwrap_or(body);
    let quotes = ["\"\"\"", "'''"].into_iter().find(|q| body.starts_with(q))?;
    let inside = &body[3..];
    inside.find(quotes).map(|end| &inside[..end])
}

/// Where the header of a `def` (from `def `) ends: its `:` outside
/// brackets and strings.
fn header_end(def: &str) -> Option<usize> {
    let mut depth = 0i32;
    let mut quote: Option<u8> = None;
    for (i, b) in def.bytes().enumerate() {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                b'\'' | b'"' => quote = Some(b),
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                b':' if depth == 0 => return Some(i),
                b'#' => return None,
                _ => {}
            },
        }
    }
    None
}

/// The type of the one value a docstring's Returns section documents:
/// NumPy's (`Returns\n-------\nname : type` or just `type`), Google's
/// (`Returns:\n    type: description`) or Sphinx's (`:rtype: type`). None
/// when it documents several values (a tuple) or none.
pub(crate) fn documented_return(doc: &str) -> Option<&str> {
    documented_return_entry(doc).map(|(ty, _)| ty)
}

/// [`documented_return`], with the lines that describe the value (those
/// indented under its entry, or the rest of a Google entry's line): a
/// shape is often stated there (`Predicted values of shape (n_samples,)`).
pub(crate) fn documented_return_entry(doc: &str) -> Option<(&str, Vec<&str>)> {
    if let Some(at) = doc.find(":rtype:") {
        let rest = &doc[at + ":rtype:".len()..];
        let description = doc.find(":returns:").or_else(|| doc.find(":return:")).map(|r| {
            let text = &doc[r..];
            let text = text.split_once(':').map_or(text, |(_, t)| t);
            let text = text.split_once(':').map_or(text, |(_, t)| t);
            vec![text.lines().next().unwrap_or("").trim()]
        });
        return Some((rest.lines().next().unwrap_or("").trim(), description.unwrap_or_default()));
    }
    let lines: Vec<&str> = doc.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim();
        let numpy = (trimmed == "Returns" || trimmed == "Return")
            && lines.get(i + 1).is_some_and(|l| {
                let l = l.trim();
                !l.is_empty() && l.chars().all(|c| c == '-')
            });
        let google = trimmed == "Returns:" || trimmed == "Return:";
        if !numpy && !google {
            continue;
        }
        let first = if numpy { i + 2 } else { i + 1 };
        let body: Vec<&str> = lines[first.min(lines.len())..].iter().copied().take_while(|l| !l.trim().is_empty()).collect();
        let indent = |l: &str| l.len() - l.trim_start().len();
        let base = body.iter().map(|l| indent(l)).min()?;
        let entries: Vec<&str> = body.iter().copied().filter(|l| indent(l) == base).collect();
        if entries.len() != 1 {
            return None;
        }
        let entry = entries[0].trim();
        let mut description: Vec<&str> = body.iter().filter(|l| indent(l) > base).map(|l| l.trim()).collect();
        return Some(if numpy {
            (entry.split_once(" : ").map_or(entry, |(_, ty)| ty), description)
        } else {
            match entry.split_once(':') {
                Some((ty, rest)) => {
                    description.insert(0, rest.trim());
                    (ty, description)
                }
                None => (entry, description),
            }
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_aliases() {
        let text = "import pandas as pd\nimport numpy as np\nfrom typing import TypeAlias\n\nTable = list | pd.Series\nX_type = np.ndarray | pd.DataFrame\n\
                    Frame: TypeAlias = pd.DataFrame\ntype G = nx.Graph\nlimit = 3\nname = pd.__version__ == \"2\"\n";
        let summary = ProjectIndex::summarize("enc.types", text);
        assert_eq!(
            summary,
            vec![
                ("enc.types.Table".to_string(), Value::Frame(None)),
                ("enc.types.X_type".to_string(), Value::Array(None)),
                ("enc.types.Frame".to_string(), Value::Frame(None)),
                ("enc.types.G".to_string(), Value::Graph(None)),
            ]
        );
    }

    #[test]
    fn declared_returns() {
        let text = "import pandas as pd\n\ndef load(path) -> pd.DataFrame:\n    return pd.read_csv(path)\n\n\
                    def demean(df):\n    \"\"\"Demean.\n\n    Returns\n    -------\n    adjusted : pd.DataFrame\n        The table.\n    \"\"\"\n    return df\n\n\
                    def pair(df):\n    \"\"\"Two.\n\n    Returns\n    -------\n    a : pd.DataFrame\n    b : pd.DataFrame\n    \"\"\"\n    return df, df\n\n\
                    def both(x) -> tuple[pd.DataFrame, pd.DataFrame]:\n    return x, x\n\n\
                    def graph(x):\n    \"\"\"Build.\n\n    :rtype: networkx.Graph\n    \"\"\"\n\n\
                    class C:\n    def method(self) -> pd.DataFrame:\n        pass\n";
        let summary = ProjectIndex::summarize("pkg.io", text);
        assert_eq!(
            summary,
            vec![
                ("pkg.io.load".to_string(), Value::Frame(None)),
                ("pkg.io.demean".to_string(), Value::Frame(None)),
                ("pkg.io.graph".to_string(), Value::Graph(None)),
            ]
        );
        let index = ProjectIndex::new(summary);
        assert_eq!(index.returns("pkg.io.demean"), Some(Value::Frame(None)));
    }

    #[test]
    fn relative_names() {
        let index = Arc::new(ProjectIndex::new([("pkg.utils.f".to_string(), Value::Frame(None))]));
        let place = Place { index: index.clone(), module: "pkg.sub.perf".into(), package: false };
        assert_eq!(place.absolute(".utils").as_deref(), Some("pkg.sub.utils"));
        assert_eq!(place.absolute("..utils.f").as_deref(), Some("pkg.utils.f"));
        assert_eq!(place.returns("..utils.f"), Some(Value::Frame(None)));
        let init = Place { index, module: "pkg".into(), package: true };
        assert_eq!(init.absolute(".utils.f").as_deref(), Some("pkg.utils.f"));
        assert_eq!(init.absolute("...x"), None);
        let text = "from .utils import (\n    f as g,\n    h,\n)\nfrom . import utils\nimport os\n";
        let mut names: Vec<String> = init.imported_names(text).into_iter().collect();
        names.sort();
        assert_eq!(names, ["f", "g"]);
    }

    #[test]
    fn functions_whose_callers_tell() {
        let text = "import numpy as np\n\ndef plain(x, y=None):\n    return np.fft.fft(x)\n\ndef bookkeeping(x):\n    return x\n\ndef annotated(x: np.ndarray, n: int = 3):\n    pass\n\n\
                    def documented(x, scale=2.5, *args, **kwargs):\n    \"\"\"Scale.\n\n    Parameters\n    ----------\n    x : ndarray\n    \"\"\"\n\n\
                    def nothing():\n    pass\n\ndef half(x: np.ndarray, y, z=lambda a: a):\n    pass\n\nclass C:\n    def method(self, x):\n        pass\n";
        // (`bookkeeping` names nothing a rule starts from: no value makes a finding there.)
        assert_eq!(ProjectIndex::functions_of(text), ["plain", "half"]);
    }

    #[test]
    fn calls_through_names_and_modules() {
        let functions: FxHashSet<String> = ["pkg.io.load".to_string()].into_iter().collect();
        assert!(calls_through("x = load (p)", "load", "pkg.io.load", false, &functions));
        assert!(!calls_through("x = reload(p); load = 3", "load", "pkg.io.load", false, &functions));
        assert!(calls_through("x = io.load(p)", "io", "pkg.io", true, &functions));
        assert!(calls_through("x = pkg.io.load(p)", "pkg", "pkg", true, &functions));
        assert!(!calls_through("x = io.save(p)", "io", "pkg.io", true, &functions));
        assert!(!calls_through("x = io(p)", "io", "pkg.io", true, &functions));
    }

    #[test]
    fn what_a_module_passes_to_the_others() {
        let mut index = ProjectIndex::new([("pkg.io.load".to_string(), Value::Frame(None))]);
        index.add_module("pkg.io".into(), vec!["load".into()]);
        index.add_module("pkg.stats".into(), vec!["summarize".into(), "spectrum".into()]);
        let text = "import numpy as np\nfrom . import stats\nfrom .stats import spectrum as spec\nfrom .io import load\n\n\
                    def main(path):\n    table = load(path)\n    stats.summarize(table, by=\"k\")\n    return spec(np.zeros(100), *path)\n\n\
                    def test_main():\n    stats.summarize(np.zeros(3))\n\n\
                    spec(path)\n";
        let place = Place { index: Arc::new(index.clone()), module: "pkg.run".into(), package: false };
        let passes = place.passes(text);
        let shown: Vec<String> = passes
            .iter()
            .map(|p| {
                let positional: Vec<String> = p.positional.iter().map(|a| format!("{:?} {}", a.value, a.text)).collect();
                let keywords: Vec<String> = p.keywords.iter().map(|(k, a)| format!("{k}={:?}", a.value)).collect();
                format!("{} <- {}: [{}] [{}]", p.callee, p.caller, positional.join(", "), keywords.join(", "))
            })
            .collect();
        assert_eq!(
            shown,
            [
                "pkg.io.load <- pkg.run.main: [Unknown ] []",
                "pkg.stats.summarize <- pkg.run.main: [Frame(None) table] [by=Unknown]",
                "pkg.stats.spectrum <- pkg.run.main: [Array(Some(100)) np.zeros(100)] []",
                "pkg.stats.spectrum <- pkg.run: [Unknown ] []",
            ]
        );
        // Before the index knows which functions read their callers, what the
        // module may call, read from its bytes.
        let mut first = ProjectIndex::default();
        first.add_module("pkg.io".into(), Vec::new());
        first.add_module("pkg.stats".into(), Vec::new());
        let early = Place { index: Arc::new(first), module: "pkg.run".into(), package: false };
        assert_eq!(early.called(text), ["pkg.io.load", "pkg.stats.spectrum", "pkg.stats.summarize"]);
        // A test module passes nothing that counts.
        let tests = Place { index: Arc::new(index.clone()), module: "pkg.tests.test_run".into(), package: false };
        assert!(tests.passes(text).is_empty());
        index.set_passes([("pkg.run".to_string(), passes)]);
        // `load` is passed nothing known; `spectrum` is, once (and once not).
        assert!(index.passed_to("pkg.io.load").is_empty());
        assert_eq!(index.passed_to("pkg.stats.spectrum").len(), 2);
        let stats = Place { index: Arc::new(index), module: "pkg.stats".into(), package: false };
        assert_eq!(stats.receiving(), ["spectrum", "summarize"]);
        // Stored and read back, the index is the same.
        let back = ProjectIndex::from_stored(stats.index.stored()).unwrap();
        assert_eq!(back, *stats.index);
        assert_eq!(back.digest(), stats.index.digest());
        assert!(stats.reads_index("x = 1\n"));
    }

    #[test]
    fn module_names() {
        let packages = [true, true, false];
        let name = module_name(&["src", "pkg", "perf.py"], &|i| i >= 1 && packages[i]);
        assert_eq!(name, Some(("pkg.perf".to_string(), false)));
        assert_eq!(module_name(&["pkg", "__init__.py"], &|_| true), Some(("pkg".to_string(), true)));
        assert_eq!(module_name(&["my-scripts", "run.py"], &|_| false), Some(("run".to_string(), false)));
    }
}
