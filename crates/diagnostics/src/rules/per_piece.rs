//! Python code pandas calls once per piece (a window, a group, a row): the
//! functions and lambdas given to `.apply`, `.agg`, `.transform`, and the
//! group-bys worked through in Python. The apply is what to advise there,
//! not the calls inside.

use gpulens_syntax::{Node, NodeExt};

use super::context::{function_of, later_uses, takes_python_callable};
use crate::semantic::Module;
use crate::Context;

/// The pandas methods that call a Python function once per piece, given
/// it first (`.apply(stat)`). (Not `map`: a process pool's `map` runs a
/// worker on each item.) The server's cache reads the same uses from the
/// bytes (`plan::words::flow_calls`).
pub(crate) const PER_PIECE_METHODS: &[&str] = &["apply", "agg", "aggregate", "transform", "filter"];

/// `node` is in Python code that pandas calls once per group, row or
/// element: a lambda given to `.apply`, `.agg`, `.transform` or `.filter`
/// (`agg([lambda x: np.quantile(x, q), "sum"])`), or a function defined in
/// another whose name is given to one there (`def calc(x): …` then
/// `.groupby(k)["v"].apply(calc)`). That code works on one piece at a
/// time, called from pandas: what to advise is the apply itself (the
/// group-by rules, CUDF003/CUDF004), not the calls inside.
pub(crate) fn in_per_piece_callable<'t>(cx: &Context<'_, 't>, node: Node<'t>) -> bool {
    let module = cx.module;
    for ancestor in module.ancestors(node) {
        match ancestor.kind_name() {
            "lambda" => return given_per_piece(module, ancestor),
            "function_definition" => {
                let Some(name_node) = ancestor.field("name") else { return false };
                let name = module.text_of(name_node);
                // A nested function: where it is used is the function around it.
                if let Some(around) = module.enclosing_function(ancestor) {
                    return module.answer_once(ancestor, "called per piece by pandas", || {
                        module
                            .preorder(around)
                            .any(|n| n.kind_name() == "identifier" && module.text_of(n) == name && given_per_piece(module, n))
                    });
                }
                // A module's function or method: anywhere in the module, given
                // first to a per-piece method (`rolling(w).apply(stat)`,
                // `.apply(self.stat)`), or called by a lambda given so
                // (`.apply(lambda x: stat(x, **kw))`). (The server's cache
                // follows these uses: see `plan::words::flow_calls`.) A
                // method is reached on `self` from inside its class, a
                // function by its bare name, as the cache's neighbours have it.
                let class = module.method_class(ancestor).map(|(c, _)| c.byte_range());
                let uses = module.given_per_piece.get_or_init(|| given_per_piece_anywhere(module));
                return uses.iter().any(|(r, on_self)| {
                    &module.text[r.clone()] == name
                        && match &class {
                            Some(class) => *on_self && class.contains(&r.start),
                            None => !*on_self,
                        }
                });
            }
            "class_definition" => return false,
            _ => {}
        }
    }
    false
}

/// Where names are given first to a per-piece pandas method anywhere in the
/// module (`stat` in `.apply(stat)`, `peak` in `.agg(self.peak)`), or
/// called by a lambda given so (`.apply(lambda x: stat(x))`). Read from the
/// bytes alone, in one pass (asked at every edit of a notebook, whose text
/// mentions `.transform(` hundreds of times): a name in a comment or a
/// string so placed counts too. With each, whether it is given on `self`
/// or `cls`.
fn given_per_piece_anywhere(module: &Module<'_>) -> Vec<(std::ops::Range<usize>, bool)> {
    static METHODS: std::sync::LazyLock<aho_corasick::AhoCorasick> = std::sync::LazyLock::new(|| {
        aho_corasick::AhoCorasick::new(PER_PIECE_METHODS.iter().map(|m| format!(".{m}("))).expect("fixed patterns")
    });
    let text = module.text;
    let bytes = text.as_bytes();
    let blank = |i: &mut usize| {
        while bytes.get(*i).is_some_and(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'\\')) {
            *i += 1;
        }
    };
    let word = |i: usize| {
        let end = bytes[i..].iter().position(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b >= 0x80)).map_or(bytes.len(), |n| i + n);
        i..end
    };
    let mut names = Vec::new();
    for m in METHODS.find_iter(text) {
        let mut i = m.end();
        blank(&mut i);
        let mut name = word(i);
        if name.is_empty() {
            continue;
        }
        let mut after = name.end;
        blank(&mut after);
        let mut on_self = false;
        match &text[name.clone()] {
            // `.apply(self.stat`: the attribute.
            "self" | "cls" if bytes.get(after) == Some(&b'.') => {
                let mut j = after + 1;
                blank(&mut j);
                name = word(j);
                on_self = true;
            }
            // `.apply(lambda x: stat(x, ...)`: the function the lambda calls.
            "lambda" => {
                let Some(colon) = bytes[after..].iter().position(|b| *b == b':' || *b == b'\n').map(|n| after + n) else { continue };
                if bytes[colon] != b':' {
                    continue;
                }
                let mut j = colon + 1;
                blank(&mut j);
                name = word(j);
                let mut k = name.end;
                blank(&mut k);
                if bytes.get(k) != Some(&b'(') {
                    continue;
                }
            }
            _ => {}
        }
        if !name.is_empty() {
            names.push((name, on_self));
        }
    }
    names
}

/// `expr` is the callable argument of a pandas method that calls it once
/// per piece (directly, by keyword, or in a list or dict of them).
fn given_per_piece<'t>(module: &Module<'t>, expr: Node<'t>) -> bool {
    let mut current = expr;
    let mut parent = module.parent(current);
    while let Some(p) = parent.filter(|p| matches!(p.kind_name(), "list" | "tuple" | "pair" | "dictionary" | "keyword_argument")) {
        // (In a pair, the value: `{"v": f}`; in a keyword argument, its value.)
        if matches!(p.kind_name(), "pair" | "keyword_argument") && p.field("value") != Some(current) {
            return false;
        }
        current = p;
        parent = module.parent(p);
    }
    let Some(call) = parent.filter(|p| p.kind_name() == "argument_list").and_then(|a| module.parent(a)) else { return false };
    let Some(method) = call.field("function").filter(|f| f.kind_name() == "attribute").and_then(|f| f.field("attribute")) else {
        return false;
    };
    PER_PIECE_METHODS.contains(&module.text_of(method))
}

/// Methods of a pandas group-by whose work is Python code per group (given
/// a Python function), or that hand the groups to Python (`.groups`).
pub(crate) const PER_GROUP: &[&str] = &["apply", "agg", "aggregate", "transform", "filter", "pipe"];

/// The group-by `call` makes is worked through in Python, group by group:
/// iterated by a `for`, looked up through `.groups`/`.indices`/`.get_group`,
/// or given a Python function (`.apply(lambda g: ...)`). The grouping is
/// then the cheap part, and cuDF runs the Python per group on the CPU too.
pub(crate) fn groups_in_python<'t>(cx: &Context<'_, 't>, call: Node<'t>) -> bool {
    let module = cx.module;
    // Grouped by a Python function of each index value (`groupby(lambda d: d.month)`).
    if takes_python_callable(cx, call) {
        return true;
    }
    let python_use = |grouped: Node<'t>| {
        // A column of the groups is grouped too (`g["rank"].transform(...)`).
        let mut grouped = grouped;
        while let Some(p) = module.parent(grouped).filter(|p| p.kind_name() == "subscript" && p.field("value") == Some(grouped)) {
            grouped = p;
        }
        let Some(parent) = module.parent(grouped) else { return false };
        if matches!(parent.kind_name(), "for_statement" | "for_in_clause") && parent.field("right") == Some(grouped) {
            return true;
        }
        if parent.kind_name() != "attribute" || parent.field("object") != Some(grouped) {
            return false;
        }
        let method = parent.field("attribute").map_or("", |a| module.text_of(a));
        if matches!(method, "groups" | "indices" | "get_group") {
            return true;
        }
        let Some(call) = module.parent(parent).filter(|c| c.kind_name() == "call") else { return false };
        // `apply` and a group-by's `filter` take only functions: whatever
        // they are given (a parameter holding one, say) is Python run once
        // per group.
        if matches!(method, "apply" | "filter") {
            return crate::semantic::positional_arguments(call).first().is_some_and(|a| a.kind_name() != "string");
        }
        PER_GROUP.contains(&method) && takes_python_callable(cx, call)
    };
    if python_use(call) {
        return true;
    }
    let Some(parent) = module.parent(call).filter(|p| p.kind_name() == "assignment") else { return false };
    let Some(left) = parent.field("left").filter(|l| l.kind_name() == "identifier") else { return false };
    let Some(function) = function_of(cx.module, call) else { return false };
    let name = module.text_of(left);
    later_uses(module, function, name, call).any(python_use)
}

