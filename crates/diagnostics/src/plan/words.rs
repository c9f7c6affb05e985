//! What the plan reads from a function's text and tree: its name, the
//! `self.*` values and calls it makes, its parameters, whether its words
//! may name an outside name, and the definition units of a module.

use std::ops::Range;

use gpulens_syntax::NodeExt;

use super::*;

/// The name a definition unit gives (see [`definition_name`]), unless a
/// decorator makes it a property.
pub(crate) fn method_name(node: Node<'_>, text: &str) -> Option<String> {
    let property = node.kind_id() == gpulens_syntax::grammar().decorated_definition
        && node.field("definition").is_some_and(|d| text[node.start_byte()..d.start_byte()].contains("property"));
    definition_name(text, node).filter(|_| !property).map(str::to_string)
}

/// Attributes of `self` or `cls` that `text` uses without calling them
/// (`self.cost`, not `self.cost(`), sorted and distinct.
pub(crate) fn self_values(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut out: Vec<String> = Vec::new();
    for (at, _) in text.match_indices('.') {
        let before = &text[..at];
        let object = before.trim_end_matches(|c: char| c.is_alphanumeric() || c == '_');
        let object = &before[object.len()..];
        if !matches!(object, "self" | "cls") || before[..before.len() - object.len()].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '.') {
            continue;
        }
        let rest = &text[at + 1..];
        let name_len = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
        if name_len == 0 {
            continue;
        }
        let next = bytes[at + 1 + name_len..].iter().find(|b| **b != b' ');
        if next != Some(&b'(') {
            out.push(rest[..name_len].to_string());
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Whether `bytes` hold `for` or `while` anywhere (in a word or not): without
/// either, no token is a loop's keyword.
pub(crate) fn says_for_or_while(bytes: &[u8]) -> bool {
    memchr::memmem::find(bytes, b"for").is_some() || memchr::memmem::find(bytes, b"while").is_some()
}

/// Names `text` calls (`name(`, `.name(`), if it has a loop at all.
pub(crate) fn called_names(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    if !says_for_or_while(bytes) {
        return Vec::new();
    }
    let mut names: Vec<String> = Vec::new();
    let mut seen: FxHashSet<&str> = FxHashSet::default();
    let mut loops = false;
    for_each_name(text, |token| {
        loops |= token == "for" || token == "while";
        // The byte after the token, past spaces.
        let end = token.as_ptr() as usize - bytes.as_ptr() as usize + token.len();
        let next = bytes[end..].iter().find(|b| **b != b' ');
        if next == Some(&b'(') && seen.insert(token) {
            names.push(token.to_string());
        }
    });
    if loops { names } else { Vec::new() }
}

/// Every name `text` calls (`name(` or `.name(`), loops or not, distinct:
/// what a module's code outside its functions may call of them.
pub(crate) fn all_called_names(text: &str) -> Vec<String> {
    let calls = flow_calls(text);
    let mut names = calls.bare;
    for name in calls.on_self {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The calls through which values flow between a module's functions (see
/// `semantic::flow`), by the name called: `name(...)` calls a function,
/// `self.name(...)` or `cls.name(...)` a method. A call on any other object
/// (`model.fit(...)`, `df.groupby(...)`) is not one. Over-approximated where
/// the bytes can't tell: a call whose dot or receiver lies on another line
/// (a comment may hide between them) counts as both forms.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct FlowCalls {
    /// Names called bare (`name(`), distinct.
    pub(crate) bare: Vec<String>,
    /// Names called on `self` or `cls`, distinct.
    pub(crate) on_self: Vec<String>,
}

/// What kind of definition a unit is, for the calls that reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Form {
    /// A function: called by its bare name.
    Function,
    /// A method of the class spanning these bytes: called on `self` or
    /// `cls` from inside that class.
    Method(Range<usize>),
    /// Can't be told (the definition sits in a syntax error): either.
    Unknown,
}

impl FlowCalls {
    /// Whether these calls (made from a definition starting at `from`) may
    /// call a definition named `name` of this form.
    pub(crate) fn may_call(&self, name: &str, form: &Form, from: usize) -> bool {
        let bare = || self.bare.iter().any(|n| n == name);
        let on_self = || self.on_self.iter().any(|n| n == name);
        match form {
            Form::Function => bare(),
            Form::Method(class) => class.contains(&from) && on_self(),
            Form::Unknown => bare() || on_self(),
        }
    }
}

/// The flow calls of `text` (see [`FlowCalls`]).
pub(crate) fn flow_calls(text: &str) -> FlowCalls {
    let bytes = text.as_bytes();
    let blank = |b: u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'\\' | 0x0c);
    // Back from `at` past blanks: where they start, and whether a comment
    // may hide among them (they cross a line, and the line they start on
    // holds a `#`).
    let back = |at: usize| {
        let mut i = at;
        while i > 0 && blank(bytes[i - 1]) {
            i -= 1;
        }
        let crossed = bytes[i..at].contains(&b'\n');
        let line_start = bytes[..i].iter().rposition(|b| *b == b'\n').map_or(0, |n| n + 1);
        (i, crossed && bytes[line_start..i].contains(&b'#'))
    };
    let mut calls = FlowCalls::default();
    let mut seen: FxHashSet<(&str, bool)> = FxHashSet::default();
    for_each_name(text, |token| {
        let start = token.as_ptr() as usize - bytes.as_ptr() as usize;
        let end = start + token.len();
        let next = bytes[end..].iter().find(|b| !blank(**b));
        if next != Some(&b'(') {
            // (`self` in `.apply(self.stat`: the object, not what is given.)
            if next == Some(&b'.') {
                return;
            }
            // Given first to a method pandas calls once per piece
            // (`.apply(stat`, `.apply(self.stat`): the rules read the
            // function as called per piece (see
            // `rules::per_piece::in_per_piece_callable`), so it counts as called.
            if let Some(on_self) = given_per_piece(text, start) {
                if seen.insert((token, on_self)) {
                    if on_self { calls.on_self.push(token.to_string()) } else { calls.bare.push(token.to_string()) }
                }
            }
            return;
        }
        let (before, hidden) = back(start);
        let (bare, on_self) = if hidden {
            (true, true)
        } else if before == 0 || bytes[before - 1] != b'.' {
            (true, false)
        } else {
            let (object_end, hidden) = back(before - 1);
            let object_start = bytes[..object_end]
                .iter()
                .rposition(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b >= 0x80))
                .map_or(0, |i| i + 1);
            let object = &text[object_start..object_end];
            let receiver = matches!(object, "self" | "cls") && (object_start == 0 || bytes[object_start - 1] != b'.');
            (hidden, hidden || receiver)
        };
        if bare && seen.insert((token, false)) {
            calls.bare.push(token.to_string());
        }
        if on_self && seen.insert((token, true)) {
            calls.on_self.push(token.to_string());
        }
    });
    calls
}

/// Whether the name starting at `start` is the first argument of a call of
/// a per-piece pandas method (`.apply(name`, or `.apply(self.name`: then
/// `Some(true)`). Over-approximated where a comment may hide: any blank run
/// crossing a line counts as blank.
fn given_per_piece(text: &str, start: usize) -> Option<bool> {
    let bytes = text.as_bytes();
    let blank = |b: u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'\\' | 0x0c);
    let skip_back = |mut i: usize| {
        while i > 0 && blank(bytes[i - 1]) {
            i -= 1;
        }
        i
    };
    let word_before = |end: usize| {
        let from = bytes[..end].iter().rposition(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b >= 0x80)).map_or(0, |i| i + 1);
        (from, &text[from..end])
    };
    let mut i = skip_back(start);
    let mut on_self = false;
    if i > 0 && bytes[i - 1] == b'.' {
        let (from, object) = word_before(skip_back(i - 1));
        if !matches!(object, "self" | "cls") {
            return None;
        }
        on_self = true;
        i = skip_back(from);
    }
    if i == 0 || bytes[i - 1] != b'(' {
        return None;
    }
    let (from, method) = word_before(skip_back(i - 1));
    let dotted = { let j = skip_back(from); j > 0 && bytes[j - 1] == b'.' };
    (dotted && crate::rules::per_piece::PER_PIECE_METHODS.contains(&method)).then_some(on_self)
}

/// Whether `token` is a method a rule reads on a value the code's own
/// evidence may tell (a parameter documented as a DataFrame, passed one by
/// a caller): a method a rule reports on a table (the pre-scan's
/// `table_methods`), a method only one library's objects have, an array
/// method that mirrors a function (`a.dot(b)`), or a model's work method.
pub(crate) fn value_method_word(token: &str) -> bool {
    static WORDS: std::sync::OnceLock<FxHashSet<String>> = std::sync::OnceLock::new();
    WORDS
        .get_or_init(|| {
            let knowledge = Knowledge::get();
            // (The pre-scan's table methods: every method a rule reports on a table.)
            let mut words: FxHashSet<String> = crate::prescan::table_methods().iter().map(|m| m.to_string()).collect();
            words.extend(knowledge.only_words().map(|w| w.split("().").next().unwrap_or(w).to_string()));
            words.extend(knowledge.mirror_words().map(str::to_string));
            words.extend(rules::model_work().iter().map(str::to_string));
            words
        })
        .contains(token)
}

/// For each unit (by its name, its form, where it starts, and the flow
/// calls its text makes), the other units it calls or that call it: the
/// functions whose text its findings read, as values flow one call away
/// (see `semantic::flow`). By name, so a superset. (A unit calling itself
/// is not its own neighbour.)
pub(crate) fn neighbours(names: &[Option<&str>], forms: &[Form], starts: &[usize], calls: &[&FlowCalls]) -> Vec<Vec<usize>> {
    let mut by_name: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
    for (i, name) in names.iter().enumerate() {
        if let Some(name) = name {
            by_name.entry(name).or_default().push(i);
        }
    }
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); names.len()];
    for (i, called) in calls.iter().enumerate() {
        for name in called.bare.iter().chain(&called.on_self) {
            for &j in by_name.get(name.as_str()).into_iter().flatten() {
                if j != i && called.may_call(name, &forms[j], starts[i]) {
                    out[i].push(j);
                    out[j].push(i);
                }
            }
        }
    }
    for list in &mut out {
        list.sort_unstable();
        list.dedup();
    }
    out
}

/// [`neighbours`] taken two calls away: each definition with those its
/// neighbours call or are called by. A parameter's value may come from a
/// caller's caller (`fit` walks the graphs, `embed(graph)` builds a matrix
/// from one, `features(X)` works on it: see `semantic::flow`).
pub(crate) fn within_two_calls(near: &[Vec<usize>]) -> Vec<Vec<usize>> {
    near.iter()
        .enumerate()
        .map(|(i, list)| {
            let mut out: Vec<usize> = list.iter().flat_map(|&j| std::iter::once(j).chain(near[j].iter().copied())).filter(|&k| k != i).collect();
            out.sort_unstable();
            out.dedup();
            out
        })
        .collect()
}

/// Names `text` (a function) may call inside a loop: `name(` or `.name(`
/// in a `for` or `while` statement (its header too), or on a line holding a
/// comprehension. Over-approximated from the lines' indentation, with
/// strings and comments blanked; every called name where that fails.
pub(crate) fn called_in_loops(text: &str) -> Vec<String> {
    let Some(code) = without_strings(text) else { return called_names(text) };
    // No loop header and no comprehension without these words (most
    // functions left out): nothing to split into lines.
    if !says_for_or_while(code.as_bytes()) {
        return Vec::new();
    }
    let mut names: Vec<String> = Vec::new();
    // The indentation of the loops around the current line.
    let mut loops: Vec<usize> = Vec::new();
    let Some(lines) = logical_lines(&code) else { return called_names(text) };
    for (indent, line) in lines {
        while loops.last().is_some_and(|&l| indent <= l) {
            loops.pop();
        }
        let first = line.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("");
        let first = if first == "async" { line[5..].trim_start().split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or("") } else { first };
        let header = matches!(first, "for" | "while");
        if header || !loops.is_empty() || holds_comprehension(line) {
            let line_bytes = line.as_bytes();
            for_each_name(line, |token| {
                let end = token.as_ptr() as usize - line.as_ptr() as usize + token.len();
                if line_bytes[end..].iter().find(|b| !matches!(b, b' ' | b'\t')) == Some(&b'(') && !names.iter().any(|n| n == token) {
                    names.push(token.to_string());
                }
            });
        }
        if header {
            loops.push(indent);
        }
    }
    names
}

/// Whether a logical line (strings blanked) has a `for` inside brackets: a
/// comprehension.
pub(crate) fn holds_comprehension(line: &str) -> bool {
    let bytes = line.as_bytes();
    let mut depth = 0i32;
    bytes.iter().enumerate().any(|(i, &b)| {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            _ => {}
        }
        b == b'f'
            && depth > 0
            && bytes[i..].starts_with(b"for")
            && !bytes.get(i + 3).is_some_and(|&b| name_byte(b))
            && (i == 0 || !name_byte(bytes[i - 1]))
    })
}

/// The names a function definition's parameters bind.
pub(crate) fn parameters(definition: Node<'_>, text: &str) -> Vec<String> {
    let g = gpulens_syntax::grammar();
    let function = if definition.kind_id() == g.decorated_definition {
        definition.field("definition")
    } else {
        Some(definition)
    };
    let Some(params) = function.and_then(|f| f.field("parameters")) else { return Vec::new() };
    let mut cursor = params.walk();
    let names = params.named_children(&mut cursor).filter_map(semantic::parameter_name);
    names.map(|n| text[n.byte_range()].to_string()).collect()
}

/// A set of names that answers "surely not in it" from a name's length and
/// first byte (false positives allowed, no false negatives).
pub(crate) struct Signatures {
    /// Bit `len % 32` of entry `first byte`.
    bits: [u32; 256],
}

impl Default for Signatures {
    fn default() -> Self {
        Signatures { bits: [0; 256] }
    }
}

impl Signatures {
    pub(crate) fn insert(&mut self, name: &str) {
        if let Some(&first) = name.as_bytes().first() {
            self.bits[first as usize] |= 1 << (name.len() % 32);
        }
    }

    pub(crate) fn may_hold(&self, name: &str) -> bool {
        name.as_bytes().first().is_some_and(|&first| self.bits[first as usize] & (1 << (name.len() % 32)) != 0)
    }
}

/// The parameters of the definition whose code (comments and strings
/// blanked) is `code`, when it holds no function, lambda or class of its own
/// (the analysis reads a name in a nested scope from that scope and the
/// module only); none otherwise.
pub(crate) fn own_parameters(code: &str) -> Vec<&str> {
    let mut header = None;
    let mut nested = false;
    for_each_name(code, |token| {
        if matches!(token, "def" | "lambda" | "class") {
            match header {
                None if token == "def" => header = Some(token.as_ptr() as usize - code.as_ptr() as usize),
                _ => nested = true,
            }
        }
    });
    let (Some(at), false) = (header, nested) else { return Vec::new() };
    let Some(open) = code[at..].find('(').map(|i| at + i + 1) else { return Vec::new() };
    let bytes = code.as_bytes();
    let (mut params, mut depth, mut piece) = (Vec::new(), 0i32, open);
    for i in open..bytes.len() {
        match bytes[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' if depth > 0 => depth -= 1,
            b',' | b')' if depth == 0 => {
                let p = code[piece..i].trim_start().trim_start_matches('*').trim_start();
                let end = p.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(p.len());
                if end > 0 && matches!(p[end..].trim_start().bytes().next(), None | Some(b':' | b'=')) {
                    params.push(&p[..end]);
                }
                if bytes[i] == b')' {
                    return params;
                }
                piece = i + 1;
            }
            _ => {}
        }
    }
    Vec::new()
}

/// Function definitions directly in the module, in class bodies, or in what
/// error recovery left of them; found without walking into any function. A
/// definition with syntax errors parses differently depending on what
/// surrounds it, so it is not a unit: it is analysed afresh every time.
/// Each comes with where it sits (in the module, a class, an error node): a
/// fix depends on that (a kernel can't be written above a method).
pub(crate) fn definition_units(tree: &Tree) -> Vec<(Node<'_>, Range<usize>, u8, Vec<Node<'_>>)> {
    let g = gpulens_syntax::grammar();
    let mut units = Vec::new();
    // Containers to look in, with the classes around them (outermost
    // first): carried down, since asking a node for its parent makes
    // tree-sitter search from the root through every sibling.
    let mut stack = vec![(tree.root_node(), 0u8, Vec::new())];
    while let Some((container, place, classes)) = stack.pop() {
        let mut cursor = container.walk();
        for child in container.named_children(&mut cursor) {
            let kind = child.kind_id();
            let definition = if kind == g.decorated_definition { child.field("definition") } else { Some(child) };
            let Some(definition) = definition else { continue };
            if definition.kind_id() == g.function_definition {
                if !child.has_error() {
                    units.push((child, child.byte_range(), place, classes.clone()));
                }
            } else if definition.kind_id() == g.class_definition {
                if let Some(body) = definition.field("body") {
                    let mut inside = classes.clone();
                    inside.push(definition);
                    stack.push((body, 1, inside));
                }
            } else if child.is_error() {
                stack.push((child, place.max(2), classes.clone()));
            }
        }
    }
    units.sort_by_key(|u| u.1.start);
    units
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_calls_tell_functions_from_methods_and_other_receivers() {
        let calls = flow_calls("def f(x):\n    y = load(x)\n    z = self.fit(y)\n    model.predict(z)\n    return cls . make (z)\n");
        assert_eq!(calls.bare, ["f", "load"]);
        assert_eq!(calls.on_self, ["fit", "make"]);
        // A receiver on another line may have a comment before it: both forms.
        let calls = flow_calls("x = (self  # the instance\n     .fit(y))\n");
        assert_eq!((calls.bare.as_slice(), calls.on_self.as_slice()), (&["fit".to_string()][..], &["fit".to_string()][..]));
        // Without a comment, the receiver is read across the line.
        let calls = flow_calls("x = (self\n     .fit(y))\nw = (df\n .groupby(k))\n");
        assert!(calls.bare.is_empty());
        assert_eq!(calls.on_self, ["fit"]);
        // An attribute of `self` is another object.
        assert!(flow_calls("self.model.fit(X)").on_self.is_empty());
    }

    #[test]
    fn a_function_given_to_a_per_piece_method_counts_as_called() {
        let calls = flow_calls("a = s.rolling(5).apply(stat, raw=True)\nb = g.agg( self . peak )\nc = f(other)\nd = s.apply(x, y)\n");
        assert_eq!(calls.bare, ["stat", "f", "x"]);
        assert_eq!(calls.on_self, ["peak"]);
        // Not first, not a per-piece method, or at the start of the text: not given so.
        assert!(flow_calls("apply(stat)").bare == ["apply"]);
        assert!(flow_calls("s.map(stat)\n").bare.is_empty());
        assert!(flow_calls("(stat").bare.is_empty());
    }

    #[test]
    fn neighbours_follow_the_call_form() {
        let calls = [flow_calls("def a(): b(1); self.c(2)"), flow_calls("def b(x): pass"), flow_calls("def c(self, x): pass")];
        let refs: Vec<&FlowCalls> = calls.iter().collect();
        let names = [Some("a"), Some("b"), Some("c")];
        // `c` a method of a class around `a`: reached; a bare `b` is a function.
        let near = neighbours(&names, &[Form::Method(0..100), Form::Function, Form::Method(0..100)], &[10, 40, 60], &refs);
        assert_eq!(near, [vec![1, 2], vec![0], vec![0]]);
        // `b` a method, `c` a function: neither call reaches them.
        let near = neighbours(&names, &[Form::Function, Form::Method(30..50), Form::Function], &[10, 40, 60], &refs);
        assert_eq!(near, [Vec::<usize>::new(), vec![], vec![]]);
        // A method of a class the caller is not in is not reached.
        let near = neighbours(&names, &[Form::Function, Form::Function, Form::Method(50..100)], &[10, 40, 60], &refs);
        assert_eq!(near, [vec![1], vec![0], vec![]]);
    }

    #[test]
    fn two_calls_away() {
        // a calls b, b calls c; d alone.
        let near = [vec![1], vec![0, 2], vec![1], vec![]];
        assert_eq!(within_two_calls(&near), [vec![1, 2], vec![0, 2], vec![0, 1], vec![]]);
    }

    #[test]
    fn signatures_never_rule_out_a_name_they_hold() {
        let mut notable = Signatures::default();
        let names = ["np", "fit", "intersects_location", "groupby", "x", "a_name_longer_than_thirty_two_bytes_"];
        for name in names {
            notable.insert(name);
        }
        assert!(names.iter().all(|n| notable.may_hold(n)));
        // Another length or first byte is ruled out; the empty name too.
        assert!(!notable.may_hold("npx") && !notable.may_hold("y") && !notable.may_hold("fix_") && !notable.may_hold(""));
    }
}
