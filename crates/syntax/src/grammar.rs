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
            // Kept for the life of the program: the names read from it are
            // `'static`, and so is the language they come from.
            let language: &'static Language = Box::leak(Box::new(tree_sitter_python::LANGUAGE.into()));
            Grammar {
                $($kind: {
                    let id = language.id_for_node_kind(stringify!($kind), true);
                    assert!(id != 0, concat!("tree-sitter-python has no node kind ", stringify!($kind)));
                    id
                },)*
                $($field: language
                    .field_id_for_name(stringify!($field).trim_start_matches("f_"))
                    .expect(concat!("tree-sitter-python has no field ", stringify!($field))),)*
                names: Names::of(language),
            }
        }
    };
}

grammar! {
    kinds {
        assert_statement, assignment, augmented_assignment, binary_operator, block, call, class_definition, comment, decorated_definition,
        dictionary_comprehension, for_statement, function_definition, generator_expression, identifier,
        if_statement, elif_clause, aliased_import, dotted_name, import_from_statement, import_statement, lambda, list_comprehension,
        set_comprehension, string_content, while_statement, subscript, comparison_operator, for_in_clause,
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
    /// The fields by [`slot`] of their name: one lookup and one comparison
    /// where a search of `fields` takes five (rules ask for a field
    /// millions of times in a corpus check).
    slots: Vec<Slot>,
    /// The language they are read from; also for the kinds past the table,
    /// `ERROR` (id 65535) and the like.
    language: &'static Language,
}

#[derive(Debug, Clone, Copy)]
enum Slot {
    Empty,
    One(&'static str, NonZeroU16),
    /// Names of several fields land here: search `fields`.
    Shared,
}

const SLOTS: usize = 256;

/// Where a field name goes in [`Names::slots`].
fn slot(name: &str) -> usize {
    let b = name.as_bytes();
    let (first, last) = (*b.first().unwrap_or(&0) as usize, *b.last().unwrap_or(&0) as usize);
    (b.len() + first * 4 + last * 9) % SLOTS
}

impl Names {
    fn of(language: &'static Language) -> Names {
        let kinds = (0..language.node_kind_count() as u16).map(|id| language.node_kind_for_id(id).unwrap_or("")).collect();
        let mut fields: Vec<(&'static str, NonZeroU16)> = (1..=language.field_count() as u16)
            .filter_map(|id| Some((language.field_name_for_id(id)?, NonZeroU16::new(id)?)))
            .collect();
        fields.sort_unstable();
        let mut slots = vec![Slot::Empty; SLOTS];
        for &(name, id) in &fields {
            let s = &mut slots[slot(name)];
            *s = match s {
                Slot::Empty => Slot::One(name, id),
                _ => Slot::Shared,
            };
        }
        Names { kinds, fields, slots, language }
    }
}

fn names() -> &'static Names {
    &grammar().names
}

/// tree-sitter-python, made once: the parsers and queries use it, and the
/// names above are read from it.
pub(crate) fn language() -> &'static Language {
    names().language
}

/// Faster equivalents of two `Node` methods (see [`names`]).
pub trait NodeExt<'t> {
    /// The node's kind, as `Node::kind` gives it.
    fn kind_name(&self) -> &'static str;
    /// Its child in field `name`, as `Node::child_by_field_name` gives it.
    fn field(&self, name: &str) -> Option<Node<'t>>;
    /// The innermost function definition holding it (see
    /// [`innermost_function`]), going up by `Node::parent`, which walks
    /// down from the root at each step: code that keeps a table of parents
    /// (the diagnostics' `Module`) passes its own ancestors to
    /// [`innermost_function`] instead.
    fn enclosing_function(&self) -> Option<Node<'t>>;
}

/// The innermost function definition among `ancestors` (innermost first):
/// what "the function around a node" means wherever it is asked. Lambdas
/// and classes do not stop the search: a lambda's body, or a class body
/// nested in a function, is in that function; a method's code is in the
/// method.
pub fn innermost_function<'t>(ancestors: impl IntoIterator<Item = Node<'t>>) -> Option<Node<'t>> {
    let function = grammar().function_definition;
    ancestors.into_iter().find(|n| n.kind_id() == function)
}

/// The string that is the first statement of a function's or class's body
/// (`definition`): its docstring, quotes included.
pub fn docstring<'t>(definition: Node<'t>) -> Option<Node<'t>> {
    let first = definition.field("body")?.named_child(0).filter(|s| s.kind_name() == "expression_statement")?;
    first.named_child(0).filter(|s| s.kind_name() == "string")
}

/// Whether `identifier`, a child of `parent`, labels something rather than
/// naming a value: an attribute's name (`size` in `x.size`) or a keyword
/// argument's (`axis` in `f(axis=0)`).
pub fn is_label(parent: Node<'_>, identifier: Node<'_>) -> bool {
    (parent.kind_name() == "attribute" && parent.field("attribute") == Some(identifier))
        || (parent.kind_name() == "keyword_argument" && parent.field("name") == Some(identifier))
}

impl<'t> NodeExt<'t> for Node<'t> {
    fn kind_name(&self) -> &'static str {
        let names = names();
        let id = self.kind_id();
        names.kinds.get(id as usize).copied().unwrap_or_else(|| names.language.node_kind_for_id(id).unwrap_or(""))
    }

    fn field(&self, name: &str) -> Option<Node<'t>> {
        let names = names();
        let id = match names.slots[slot(name)] {
            Slot::Empty => return None,
            Slot::One(n, id) => (n == name).then_some(id)?,
            Slot::Shared => {
                let i = names.fields.binary_search_by(|(n, _)| (*n).cmp(name)).ok()?;
                names.fields[i].1
            }
        };
        self.child_by_field_id(id.get())
    }

    fn enclosing_function(&self) -> Option<Node<'t>> {
        innermost_function(std::iter::successors(self.parent(), |n| n.parent()))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn most_field_names_have_a_slot_of_their_own() {
        let names = super::names();
        let own = names.slots.iter().filter(|s| matches!(s, super::Slot::One(..))).count();
        assert!(own * 10 >= names.fields.len() * 9, "{own} of {}", names.fields.len());
        // Every field is found through its slot.
        let tree = crate::parse("x = f(a)\n");
        let assignment = tree.root_node().child(0).unwrap().child(0).unwrap();
        use super::NodeExt;
        for (name, _) in &names.fields {
            assert_eq!(assignment.field(name), assignment.child_by_field_name(name), "{name}");
        }
    }

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
