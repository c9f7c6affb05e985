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
    /// A digest of `returns` (see [`ProjectIndex::digest`]).
    digest: u64,
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
        index.digest = index.compute_digest();
        index
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
        *self = ProjectIndex::new(returns.into_iter().chain(summary));
    }

    /// What the function `qualified` is declared to return.
    pub fn returns(&self, qualified: &str) -> Option<Value> {
        self.returns.get(qualified).copied()
    }

    pub fn len(&self) -> usize {
        self.returns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.returns.is_empty()
    }

    /// Bytes the index holds (its names and values, with the maps' slots).
    pub fn memory_bytes(&self) -> usize {
        let entry = std::mem::size_of::<(String, Value)>() + 8;
        let string = std::mem::size_of::<String>() + 8;
        let names: usize = self.returns.keys().map(|k| k.capacity()).sum::<usize>();
        let modules: usize =
            self.by_module.iter().map(|(m, f)| m.capacity() + string + f.capacity() * string + f.iter().map(|n| n.capacity()).sum::<usize>()).sum();
        names + modules + self.returns.capacity() * entry
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
        for statement in import_statements(text) {
            let words: Vec<&str> = statement.split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')').filter(|w| !w.is_empty()).collect();
            match words.as_slice() {
                ["from", module, "import", names @ ..] => {
                    let Some(module) = self.absolute(module) else { continue };
                    let mut i = 0;
                    while i < names.len() {
                        let name = names[i];
                        let alias = if names.get(i + 1) == Some(&"as") { names.get(i + 2).copied().unwrap_or(name) } else { name };
                        i += if names.get(i + 1) == Some(&"as") { 3 } else { 1 };
                        let qualified = format!("{module}.{name}");
                        if self.index.returns.contains_key(&qualified) {
                            out.insert(alias.to_string());
                        } else {
                            add_module(&qualified, &mut out);
                        }
                    }
                }
                ["import", module, "as", _alias, ..] => add_module(module, &mut out),
                _ => {}
            }
        }
        out
    }

    /// What the project function `qualified` (as the file's imports name
    /// it) is declared to return.
    pub fn returns(&self, qualified: &str) -> Option<Value> {
        self.index.returns(&self.absolute(qualified)?)
    }
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
    fn module_names() {
        let packages = [true, true, false];
        let name = module_name(&["src", "pkg", "perf.py"], &|i| i >= 1 && packages[i]);
        assert_eq!(name, Some(("pkg.perf".to_string(), false)));
        assert_eq!(module_name(&["pkg", "__init__.py"], &|_| true), Some(("pkg".to_string(), true)));
        assert_eq!(module_name(&["my-scripts", "run.py"], &|_| false), Some(("run".to_string(), false)));
    }
}
