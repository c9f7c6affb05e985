//! The project index's second pass: what each module passes to the
//! functions of the others (see the parent module), and which functions
//! read their callers.

use rustc_hash::FxHashSet;

use super::{header_end, leading_docstring, Place, ProjectIndex};
use crate::semantic::Value;

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

impl ProjectIndex {
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
            // (In an order of their own: the first that tells is the evidence named.)
            calls.sort_by_cached_key(|c| format!("{c:?}"));
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

    /// How many functions other modules pass a known value to.
    pub fn receiving_len(&self) -> usize {
        self.incoming.len()
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

impl Place {
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

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
}
