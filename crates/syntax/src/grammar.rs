//! Node-kind and field ids of tree-sitter-python, looked up once.
//!
//! Comparing `u16` ids instead of `node.kind()` strings matters on the hot
//! path: a walk over a 12,000-line file visits hundreds of thousands of nodes.

use std::num::NonZeroU16;
use std::sync::OnceLock;

use tree_sitter::{Language, Node};

macro_rules! grammar {
    (kinds { $($kind:ident),* $(,)? } fields { $($field:ident),* $(,)? }) => {
        /// Ids of the node kinds and fields the analysis looks at.
        #[derive(Debug)]
        pub struct Grammar {
            $(pub $kind: u16,)*
            $(pub $field: NonZeroU16,)*
            names: Names,
        }

        fn load() -> Grammar {
            let language: Language = tree_sitter_python::LANGUAGE.into();
            Grammar {
                $($kind: {
                    let id = language.id_for_node_kind(stringify!($kind), true);
                    assert!(id != 0, concat!("tree-sitter-python has no node kind ", stringify!($kind)));
                    id
                },)*
                $($field: language
                    .field_id_for_name(stringify!($field).trim_start_matches("f_"))
                    .expect(concat!("tree-sitter-python has no field ", stringify!($field))),)*
                names: Names::of(&language),
            }
        }
    };
}

grammar! {
    kinds {
        assert_statement, assignment, augmented_assignment, binary_operator, block, call, class_definition, comment, decorated_definition,
        dictionary_comprehension, for_statement, function_definition, generator_expression, identifier,
        if_statement, elif_clause, aliased_import, dotted_name, import_from_statement, import_statement, lambda, list_comprehension,
        set_comprehension, string_content, while_statement,
    }
    fields { f_alias, f_body, f_condition, f_definition, f_module_name, f_name, f_operator }
}

/// The grammar's ids (loaded on first use).
pub fn grammar() -> &'static Grammar {
    static GRAMMAR: OnceLock<Grammar> = OnceLock::new();
    GRAMMAR.get_or_init(load)
}

/// Every node kind's name by id, and every field's id by name, read once:
/// tree-sitter's `Node::kind` checks the name's UTF-8 at each call, and
/// `child_by_field_name` compares the name with each field's in turn (a
/// few percent of a whole-corpus check, where rules ask millions of times).
#[derive(Debug)]
struct Names {
    kinds: Vec<&'static str>,
    /// Sorted by name.
    fields: Vec<(&'static str, NonZeroU16)>,
}

impl Names {
    fn of(language: &Language) -> Names {
        let kinds = (0..language.node_kind_count() as u16).map(|id| language.node_kind_for_id(id).unwrap_or("")).collect();
        let mut fields: Vec<(&'static str, NonZeroU16)> = (1..=language.field_count() as u16)
            .filter_map(|id| Some((language.field_name_for_id(id)?, NonZeroU16::new(id)?)))
            .collect();
        fields.sort_unstable();
        Names { kinds, fields }
    }
}

fn names() -> &'static Names {
    &grammar().names
}

/// Faster equivalents of two `Node` methods (see [`names`]).
pub trait NodeExt<'t> {
    /// The node's kind, as `Node::kind` gives it.
    fn kind_name(&self) -> &'static str;
    /// Its child in field `name`, as `Node::child_by_field_name` gives it.
    fn field(&self, name: &str) -> Option<Node<'t>>;
}

impl<'t> NodeExt<'t> for Node<'t> {
    fn kind_name(&self) -> &'static str {
        names().kinds.get(self.kind_id() as usize).copied().unwrap_or_else(|| self.kind())
    }

    fn field(&self, name: &str) -> Option<Node<'t>> {
        let fields = &names().fields;
        let i = fields.binary_search_by(|(n, _)| (*n).cmp(name)).ok()?;
        self.child_by_field_id(fields[i].1.get())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_kind_and_field_exists() {
        let g = super::grammar();
        assert_ne!(g.call, g.assignment);
    }

    #[test]
    fn the_tables_agree_with_tree_sitter_on_every_node() {
        use super::NodeExt;
        let text = "import numpy as np\n@dec\nclass A(B):\n    def f(self, x=1, *a, **k):\n        for i in range(3):\n            x[i] += np.sin(x[i]) if i else -1\n        return [y for y in x], {k: v for k, v in a}, lambda q: q @ x\n";
        let tree = crate::parse(text);
        let mut checked = 0;
        for node in crate::preorder(tree.root_node()) {
            assert_eq!(node.kind_name(), node.kind());
            for name in ["name", "body", "left", "right", "function", "arguments", "object", "attribute", "value", "condition", "alias", "definition", "parameters", "nonexistent"] {
                assert_eq!(node.field(name), node.child_by_field_name(name), "{name} of {}", node.kind());
            }
            checked += 1;
        }
        assert!(checked > 50, "{checked}");
    }
}
