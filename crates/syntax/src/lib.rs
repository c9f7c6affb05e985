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
pub mod outline;
mod position;
pub mod queries;

pub use decode::{decode, DecodeError};
pub use document::{parse, ByteEdit, Change, Document, Recent};
pub use grammar::{grammar, Grammar, NodeExt};
pub use position::{LineIndex, Position, PositionEncoding, Range};
pub use tree_sitter::{Node, Tree, TreeCursor};

/// Every node under `root` (itself first), in source order, without recursion.
pub fn preorder(root: Node<'_>) -> Preorder<'_> {
    Preorder { cursor: root.walk(), done: false }
}

/// The iterator [`preorder`] returns.
pub struct Preorder<'t> {
    cursor: TreeCursor<'t>,
    done: bool,
}

impl<'t> Iterator for Preorder<'t> {
    type Item = Node<'t>;

    fn next(&mut self) -> Option<Node<'t>> {
        if self.done {
            return None;
        }
        let node = self.cursor.node();
        if !self.cursor.goto_first_child() {
            loop {
                if self.cursor.goto_next_sibling() {
                    break;
                }
                if !self.cursor.goto_parent() {
                    self.done = true;
                    break;
                }
            }
        }
        Some(node)
    }
}
