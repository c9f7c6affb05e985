//! Python source text and its syntax tree.
//!
//! [`Document`] is what an editor edits: a rope, a tree-sitter-python tree
//! and a line index, updated incrementally. [`parse`] and [`LineIndex`] serve
//! text that is read once, as `gpulens check` does. [`decode`] turns the bytes
//! of a file into text the way Python would. Parsing never fails: a file with
//! syntax errors gives a tree with `ERROR` nodes around the parts that don't
//! parse. [`lex`] reads Python's lexical structure (strings, comments,
//! logical lines, names) from the bytes, for deciding what to parse. This crate knows nothing of rules, editors or GPUs.

mod decode;
mod document;
mod grammar;
pub mod lex;
pub mod notebook;
pub mod outline;
mod position;
pub mod queries;

pub use decode::{decode, DecodeError};
pub use document::{parse, ByteEdit, Change, Document, Recent};
pub use grammar::{docstring, grammar, innermost_function, is_label, Grammar, NodeExt};
pub use position::{LineIndex, Position, PositionEncoding, Range};
pub use tree_sitter::{Node, Tree, TreeCursor};

/// Every node under `root` (itself first), in source order, without recursion.
///
/// Besides the nodes, the iterator tells where the node it gave last stands
/// ([`Preorder::depth`], [`Preorder::field_id`]) and can leave out what lies
/// below it ([`Preorder::skip_children`]): the walks that stop at nested
/// definitions, or that only enter nodes holding an error, use it in place
/// of a cursor loop of their own.
pub fn preorder(root: Node<'_>) -> Preorder<'_> {
    Preorder { cursor: root.walk(), step: Step::Start, depth: 0 }
}

/// The iterator [`preorder`] returns.
///
/// The cursor stays on the node `next` gave last until the next call: the
/// step down into its children is taken then, so skipping them costs
/// nothing, and the cursor can still answer questions about that node.
pub struct Preorder<'t> {
    cursor: TreeCursor<'t>,
    step: Step,
    /// How far below the root the cursor stands.
    depth: u32,
}

/// What the next call to [`Preorder::next`] does.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Gives the root.
    Start,
    /// Enters the current node's first child, or else moves on past it.
    Descend,
    /// Moves on past the current node without entering it.
    Skip,
    /// Gives nothing: the walk is over.
    Done,
}

impl<'t> Preorder<'t> {
    /// Leaves out the descendants of the node `next` gave last: the walk
    /// goes on with its next sibling (or its ancestors' next one). Does
    /// nothing before the first `next` or after the last.
    #[inline]
    pub fn skip_children(&mut self) {
        if self.step == Step::Descend {
            self.step = Step::Skip;
        }
    }

    /// How far the node `next` gave last lies below the root (the root is 0).
    #[inline]
    pub fn depth(&self) -> usize {
        self.depth as usize
    }

    /// The field (of its parent) that holds the node `next` gave last, as
    /// `TreeCursor::field_id` gives it; `None` for the root.
    #[inline]
    pub fn field_id(&self) -> Option<std::num::NonZeroU16> {
        self.cursor.field_id()
    }
}

impl<'t> Iterator for Preorder<'t> {
    type Item = Node<'t>;

    #[inline]
    fn next(&mut self) -> Option<Node<'t>> {
        match self.step {
            Step::Start => {
                self.step = Step::Descend;
                return Some(self.cursor.node());
            }
            Step::Done => return None,
            Step::Descend => {
                if self.cursor.goto_first_child() {
                    self.depth += 1;
                    return Some(self.cursor.node());
                }
            }
            Step::Skip => self.step = Step::Descend,
        }
        // Past the current node: its next sibling, or an ancestor's. (The
        // cursor never leaves its root, which has no sibling for it.)
        loop {
            if self.cursor.goto_next_sibling() {
                return Some(self.cursor.node());
            }
            if !self.cursor.goto_parent() {
                self.step = Step::Done;
                return None;
            }
            self.depth -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each node's kind and depth, skipping below the nodes `skip` picks.
    fn walk(text: &str, skip: impl Fn(Node<'_>) -> bool) -> Vec<(String, usize)> {
        let tree = parse(text);
        let mut out = Vec::new();
        let mut walk = preorder(tree.root_node());
        while let Some(node) = walk.next() {
            out.push((node.kind().to_string(), walk.depth()));
            if skip(node) {
                walk.skip_children();
                // Twice is once.
                walk.skip_children();
            }
        }
        out
    }

    fn kinds(walked: &[(String, usize)]) -> Vec<&str> {
        walked.iter().map(|(k, _)| k.as_str()).collect()
    }

    const TEXT: &str = "def f(a):\n    return a\nx = 1\n";

    #[test]
    fn walks_every_node_before_its_children() {
        let walked = walk(TEXT, |_| false);
        let mut expected = Vec::new();
        fn visit(n: Node<'_>, depth: usize, out: &mut Vec<(String, usize)>) {
            out.push((n.kind().to_string(), depth));
            for i in 0..n.child_count() {
                visit(n.child(i).unwrap(), depth + 1, out);
            }
        }
        visit(parse(TEXT).root_node(), 0, &mut expected);
        assert_eq!(walked, expected);
    }

    #[test]
    fn skipping_a_subtree_goes_on_with_its_next_sibling() {
        let walked = walk(TEXT, |n| n.kind() == "parameters");
        assert_eq!(
            kinds(&walked),
            ["module", "function_definition", "def", "identifier", "parameters", ":", "block", "return_statement", "return", "identifier",
             "expression_statement", "assignment", "identifier", "=", "integer"]
        );
        assert_eq!(walked[5], (":".to_string(), 2));
    }

    #[test]
    fn skipping_the_last_child_goes_on_with_an_ancestor_sibling() {
        // The function's block is its last child; its sibling is the module's next statement.
        let walked = walk(TEXT, |n| n.kind() == "block");
        assert_eq!(
            kinds(&walked),
            ["module", "function_definition", "def", "identifier", "parameters", "(", "identifier", ")", ":", "block",
             "expression_statement", "assignment", "identifier", "=", "integer"]
        );
        assert_eq!(walked[10], ("expression_statement".to_string(), 1));
        // The very last node: nothing follows.
        let walked = walk(TEXT, |n| n.kind() == "integer");
        assert_eq!(walked.last().unwrap().0, "integer");
        assert_eq!(walked.len(), walk(TEXT, |_| false).len());
    }

    #[test]
    fn skipping_the_root_gives_only_the_root() {
        assert_eq!(walk(TEXT, |n| n.kind() == "module"), [("module".to_string(), 0)]);
        // A walk from a node inside the tree stays below it.
        let tree = parse(TEXT);
        let function = tree.root_node().child(0).unwrap();
        let mut walk = preorder(function);
        assert_eq!(walk.next(), Some(function));
        walk.skip_children();
        assert_eq!(walk.next(), None);
        assert_eq!(walk.next(), None);
        let below: Vec<_> = preorder(function).collect();
        assert!(below.iter().all(|n| n.start_byte() >= function.start_byte() && n.end_byte() <= function.end_byte()));
    }

    #[test]
    fn field_ids_are_those_of_the_node_given_last() {
        let tree = parse(TEXT);
        let language = tree.language();
        let mut walk = preorder(tree.root_node());
        while let Some(node) = walk.next() {
            let expected = node.parent().and_then(|p| {
                (0..p.child_count()).find(|&i| p.child(i) == Some(node)).and_then(|i| p.field_name_for_child(i))
            });
            let name = walk.field_id().and_then(|id| language.field_name_for_id(id.get()));
            assert_eq!(name, expected, "{}", node.kind());
        }
    }
}
