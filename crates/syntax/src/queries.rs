//! Tree-sitter queries from `grammars/`, compiled once.

use std::sync::OnceLock;

use tree_sitter::{Node, Query, QueryCursor, StreamingIterator};

fn compile(source: &str) -> Query {
    Query::new(crate::grammar::language(), source).expect("the bundled queries compile")
}

fn imports() -> &'static Query {
    static QUERY: OnceLock<Query> = OnceLock::new();
    QUERY.get_or_init(|| compile(include_str!("../../../grammars/python/imports.scm")))
}

/// The module names (dotted_name nodes) of the import statement at `offset`, if any.
pub fn import_modules_at(root: Node<'_>, source: &[u8], offset: usize) -> Vec<(std::ops::Range<usize>, String)> {
    // Limit the search to the statement under the cursor.
    let Some(mut node) = root.descendant_for_byte_range(offset, offset) else { return Vec::new() };
    for _ in 0..6 {
        if matches!(node.kind(), "import_statement" | "import_from_statement") {
            break;
        }
        match node.parent() {
            Some(p) => node = p,
            None => return Vec::new(),
        }
    }
    if !matches!(node.kind(), "import_statement" | "import_from_statement") {
        return Vec::new();
    }
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(imports(), node, source);
    let mut out = Vec::new();
    while let Some(m) = matches.next() {
        for capture in m.captures() {
            let n = capture.node;
            let text = String::from_utf8_lossy(&source[n.byte_range()]).split_whitespace().collect::<String>();
            out.push((n.byte_range(), text));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_query_finds_modules() {
        let src = "import numpy as np, pandas\nfrom sklearn.cluster import KMeans\n";
        let tree = crate::parse(src);
        let first: Vec<String> = import_modules_at(tree.root_node(), src.as_bytes(), 3).into_iter().map(|m| m.1).collect();
        assert_eq!(first, ["numpy", "pandas"]);
        let second: Vec<String> = import_modules_at(tree.root_node(), src.as_bytes(), 30).into_iter().map(|m| m.1).collect();
        assert_eq!(second, ["sklearn.cluster"]);
        assert!(import_modules_at(tree.root_node(), src.as_bytes(), src.len()).is_empty());
    }
}
