//! Types and shapes a docstring states for its parameters (NumPy, Google
//! and Sphinx styles).

/// The parameters a docstring documents, with the type it gives each, in
/// the three usual styles: NumPy's (`name : int, optional`, `x, y : float`),
/// Google's (`name (int): ...`) and Sphinx's (`:type name: int`,
/// `:param int name:`).
pub(crate) fn documented_types<'a>(doc: &'a str) -> Vec<(&'a str, &'a str)> {
    let mut out = Vec::new();
    let is_name = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_') && !s.starts_with(|c: char| c.is_ascii_digit());
    // (The docstring's quotes, which its first and last lines hold, are not its text.)
    let unquote = |line: &'a str| -> &'a str {
        let line = line.trim();
        // A string prefix (`r"""`) is at most two letters before the quotes.
        let after_prefix = line.trim_start_matches(['r', 'R', 'u', 'U', 'b', 'B']);
        let line = if after_prefix.starts_with(['"', '\'']) && after_prefix.len() + 2 >= line.len() {
            after_prefix.trim_start_matches(['"', '\''])
        } else {
            line
        };
        line.trim_end_matches(['"', '\'']).trim()
    };
    for line in doc.lines().map(unquote) {
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
                continue;
            }
        }
        // The same with the colon written against the name (`name: type`,
        // `mean: [n_dim] array`), or Google's entry without a type, whose
        // few words say what it is (`x: the input array`). A sentence is
        // not a type.
        if let Some((name, ty)) = line.split_once(": ") {
            let ty = ty.trim();
            if is_name(name) && !ty.is_empty() && ty.split_whitespace().count() <= 6 {
                out.push((name, ty));
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
pub(super) fn documented_shapes<'a>(lower: &'a str) -> Vec<Vec<&'a str>> {
    let arrays = ["array", "ndarray", "vector", "sequence", "list"].iter().any(|w| lower.contains(w));
    let mut shapes = Vec::new();
    let dimension = |d: &&str| d.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    let dimensions = |inside: &'a str| -> Vec<&'a str> {
        inside.split(',').flat_map(|d| d.split(" x ")).flat_map(|d| d.split('×')).map(str::trim).filter(|d| !d.is_empty()).collect()
    };
    let mut rest = lower;
    while let Some(open) = rest.find('(') {
        let Some(len) = rest[open..].find(')') else { break };
        let inside = &rest[open + 1..open + len];
        rest = &rest[open + len + 1..];
        let dims = dimensions(inside);
        if !dims.is_empty() && dims.iter().all(dimension) && (arrays || inside.contains(',')) {
            shapes.push(dims);
        }
    }
    // In square brackets (`[n_samples, n_features] array`, `shape =
    // [n_dim]`), in an array's type or after `shape`: not a type's
    // subscript (`NDArray[np.float64]`, `list[int]`), which follows a name,
    // nor a range of values (`float in [0, 1]`), which is neither.
    if arrays || lower.contains("shape") {
        let mut at = 0;
        while let Some(open) = lower[at..].find('[').map(|o| at + o) {
            let Some(len) = lower[open..].find(']') else { break };
            at = open + len + 1;
            if lower[..open].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == ']') {
                continue;
            }
            let dims = dimensions(&lower[open + 1..open + len]);
            if !dims.is_empty() && dims.iter().all(dimension) {
                shapes.push(dims);
            }
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

/// A function's one documented result is one-dimensional: by its type
/// (`array of shape (n_samples,)`, `1-D array`) or by a shape its
/// description states (`Predicted values of shape (n_samples,)`).
pub(crate) fn returns_vector(doc: &str) -> bool {
    // (The string's quotes and prefix are not its text.)
    let doc = doc.trim_start_matches(['r', 'R', 'u', 'U']);
    let doc = doc.trim_matches('"').trim_matches('\'');
    let Some((ty, description)) = crate::project::documented_return_entry(doc) else { return false };
    if vector_type(ty) {
        return true;
    }
    // A description's shape: the parenthesised shape right after `shape`.
    description.iter().any(|line| {
        let lower = line.to_ascii_lowercase();
        lower.find("shape").is_some_and(|at| {
            let rest = lower[at + "shape".len()..].trim_start().trim_start_matches(['=', ':']).trim_start();
            rest.starts_with('(') && rest.find(')').is_some_and(|end| vector_type(&format!("array {}", &rest[..=end])))
        })
    })
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
    // A note in parentheses (`int (default=1000)`, `float (optional)`) is
    // not the type.
    let mut lower = lower;
    while let Some(open) = lower.find('(') {
        let Some(close) = lower[open..].find(')') else { break };
        let note = &lower[open + 1..open + close];
        if !(note.starts_with("default") || note == "optional") {
            break;
        }
        lower.replace_range(open..open + close + 1, "");
    }
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

/// The kind of data a documented type names, in the order it names them
/// (`DataFrame or ndarray` is a table): a pandas table or series, an array
/// (`ndarray`, `array-like`, `numpy array`), or a NetworkX graph. A container
/// of them (`list of DataFrame`) is none of these.
pub(crate) fn type_text_value(ty: &str) -> super::Value {
    use super::Value;
    let lower = ty.to_ascii_lowercase().replace(['`', '~', ':', '"', '\''], " ");
    let containers = ["sequence of", "list of", "tuple of", "iterable of", "collection of", "dict of", "mapping of", "iterator of"];
    if containers.iter().any(|c| lower.contains(c)) {
        return Value::Unknown;
    }
    for word in lower.split(|c: char| !(c.is_alphanumeric() || matches!(c, '.' | '_' | '-'))) {
        let word = word.trim_matches(|c: char| c == '.' || c == '-');
        let last = word.rsplit('.').next().unwrap_or(word);
        let qualified = word.contains('.');
        let library = word.split('.').next().unwrap_or("");
        match last {
            "dataframe" | "series" if !qualified || matches!(library, "pd" | "pandas") => return Value::Frame(None),
            "ndarray" | "array-like" | "array_like" | "arraylike" | "array" if !qualified || matches!(library, "np" | "numpy") => {
                return Value::Array(written_size(&lower));
            }
            "graph" | "digraph" | "multigraph" | "multidigraph" if !qualified || matches!(library, "nx" | "networkx") => {
                return Value::Graph(None);
            }
            _ => {}
        }
    }
    Value::Unknown
}

/// The most elements an array's documented type allows when every shape it
/// gives is written in numbers (`ndarray of shape (4, 4)`, `(3,) array`):
/// a stated size, as a literal in the code is.
fn written_size(lower: &str) -> Option<u64> {
    let shapes = documented_shapes(lower);
    let mut most: Option<u64> = None;
    for dims in &shapes {
        let mut product: u64 = 1;
        for d in dims {
            product = product.saturating_mul(d.parse::<u64>().ok()?);
        }
        most = Some(most.map_or(product, |m| m.max(product)));
    }
    most
}

/// What a docstring says about the parameter `name`: its line (`name : type`,
/// `name (type): ...`, `:param name: ...`) and the lines indented under it.
pub(crate) fn parameter_section<'a>(doc: &'a str, name: &str) -> Option<&'a str> {
    let mut start = None;
    let mut indent = 0;
    let mut end = doc.len();
    let mut offset = 0;
    for line in doc.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let this_indent = line.len() - trimmed.len();
        match start {
            None => {
                let after = trimmed.strip_prefix(name).or_else(|| trimmed.strip_prefix(":param ").and_then(|t| t.strip_prefix(name)));
                if after.is_some_and(|a| a.trim_start().starts_with([':', '('])) {
                    start = Some(offset);
                    indent = this_indent;
                }
            }
            Some(_) if !trimmed.trim().is_empty() && this_indent <= indent => {
                end = offset;
                break;
            }
            Some(_) => {}
        }
        offset += line.len();
    }
    start.map(|s| &doc[s..end])
}
