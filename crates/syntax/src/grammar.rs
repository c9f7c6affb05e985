//! Node-kind and field ids of tree-sitter-python, looked up once.
//!
//! Comparing `u16` ids instead of `node.kind()` strings matters on the hot
//! path: a walk over a 12,000-line file visits hundreds of thousands of nodes.

use std::num::NonZeroU16;
use std::sync::OnceLock;

use tree_sitter::Language;

macro_rules! grammar {
    (kinds { $($kind:ident),* $(,)? } fields { $($field:ident),* $(,)? }) => {
        /// Ids of the node kinds and fields the analysis looks at.
        #[derive(Debug)]
        pub struct Grammar {
            $(pub $kind: u16,)*
            $(pub $field: NonZeroU16,)*
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

#[cfg(test)]
mod tests {
    #[test]
    fn every_kind_and_field_exists() {
        let g = super::grammar();
        assert_ne!(g.call, g.assignment);
    }
}
