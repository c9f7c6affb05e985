//! What the code outside a document's functions tells the functions' keys
//! (see [`super::Plan`]): the module-level names they may reach, which
//! libraries the module imports, and a fingerprint of that code, so the
//! summary is kept while an edit stays inside one function.

use std::hash::{Hash, Hasher};
use std::ops::Range;

use rustc_hash::{FxHashMap, FxHasher};

use super::*;

/// What the code outside a document's units tells their keys, kept from one
/// analysis to the next while that code stays the same (the usual edit is
/// inside one function). Positions are counted in units, not bytes, so
/// that they hold when the units before them change length.
#[derive(Debug)]
pub(crate) struct OutsideSummary {
    /// The outside names (see [`Module::outside_names`]).
    pub(super) names: FxHashMap<String, NameFacts>,
    /// A hash of the sorted names.
    pub(super) names_hash: u64,
    /// What each name's bindings mention among the names.
    pub(super) depends: FxHashMap<String, Vec<String>>,
    /// Which libraries the rules know the module imports.
    pub(super) global: Vec<String>,
    /// Imports and module-level names, for the fix keys (sorted).
    pub(super) for_fixes: Vec<String>,
    /// Imports in class bodies: (name, target, the units in their scope).
    pub(super) class_imports: Vec<(String, String, Range<usize>)>,
    /// What that code calls and defines, for the flows between functions.
    pub(super) flows: OutsideNames,
}

#[derive(Debug)]
pub(crate) struct NameFacts {
    pub(super) imported: bool,
    pub(super) hash: u64,
    /// For each module-level binding, how many units start before it.
    pub(super) units_before: Vec<usize>,
}

impl OutsideSummary {
    pub(crate) fn new(outside: &Module<'_>, knowledge: &Knowledge, starts: &[usize], flows: OutsideNames) -> OutsideSummary {
        let relevant = |target: &str| relevant_module(knowledge, target);
        let found = outside.outside_names();
        // Findings depend on which of the libraries the rules know the module
        // imports (the loop rules ask); fixes depend on every module-level
        // name besides, since they write code that uses the module's own
        // aliases (`cp`, `cuda`) and must not take a name already in use.
        let mut global: Vec<String> =
            outside.imports_at(0).filter(|(_, t)| relevant(t)).map(|(name, t)| format!("{name}={t}")).collect();
        // A GPU library imported in a class body turns the GPU rules on too
        // (and NumPy the matrix-product rule).
        global.extend(
            outside
                .scoped_imports()
                .filter(|(_, _, t)| matches!(t.split('.').next().unwrap_or(t), top if is_gpu_module(top) || top == "numpy"))
                .map(|(name, _, t)| format!("{name}={t} in a class")),
        );
        global.sort();
        let mut for_fixes: Vec<String> = outside.imports_at(0).map(|(name, t)| format!("{name}={t}")).collect();
        for_fixes.extend(outside.module_level_names().map(|n| format!("{n}=")));
        for_fixes.sort();
        for_fixes.dedup();
        let mut keys: Vec<&&str> = found.keys().collect();
        keys.sort();
        let mut names_hash = FxHasher::default();
        keys.hash(&mut names_hash);
        // What each outside name's bindings mention among the outside names:
        // a module-level value can be built from others (`a = np.sort(big)`).
        let mut depends: FxHashMap<String, Vec<String>> = FxHashMap::default();
        for (name, outside_name) in &found {
            let mut uses: Vec<String> = Vec::new();
            for bound in &outside_name.texts {
                for_each_name(bound, |token| {
                    if token != *name && found.contains_key(token) && !uses.iter().any(|u| u == token) {
                        uses.push(token.to_string());
                    }
                });
            }
            depends.insert(name.to_string(), uses);
        }
        let units_before = |offset: usize| starts.partition_point(|s| *s < offset);
        let names = found
            .iter()
            .map(|(name, o)| {
                let facts = NameFacts {
                    imported: o.imported,
                    hash: o.hash,
                    units_before: o.bound_at.iter().map(|b| units_before(*b)).collect(),
                };
                (name.to_string(), facts)
            })
            .collect();
        let class_imports = outside
            .scoped_imports()
            .map(|(name, scope, target)| {
                (name.to_string(), target.to_string(), units_before(scope.start)..units_before(scope.end))
            })
            .collect();
        OutsideSummary { names, names_hash: names_hash.finish(), depends, global, for_fixes, class_imports, flows }
    }
}

/// A hash of everything outside the units that the outside summary reads:
/// the text between them (with where each gap ends), the units' places,
/// and the decorators and names of decorated ones, which the summary reads
/// where they make kernels, launched by name (`Module::outside_names`). In a text that
/// names neither Numba nor Warp no decorator makes one, and decorators are
/// left out: editing a docstring passed to `@doc(...)` keeps the summary.
pub(crate) fn outside_fingerprint(text: &str, found: &[(Node<'_>, Range<usize>, u8, Vec<Node<'_>>)]) -> u64 {
    let g = gpulens_syntax::grammar();
    let bytes = text.as_bytes();
    let kernels = text.contains("numba") || text.contains("warp");
    let mut h = FxHasher::default();
    let mut at = 0;
    for (node, range, place, _) in found {
        let gap = &bytes[at.min(range.start)..range.start];
        h.write(gap);
        h.write_usize(gap.len());
        h.write_u8(*place);
        if kernels && node.kind_id() == g.decorated_definition {
            // Its decorators and its name: what `outside_names` reads of a
            // kernel. (Its body is the unit's own: an edit inside a method
            // under `@doc(...)` keeps the summary.)
            match node.child_by_field_id(g.f_definition.get()) {
                Some(definition) => {
                    h.write(&bytes[range.start..definition.start_byte()]);
                    let name = definition.child_by_field_id(g.f_name.get()).map_or(&b""[..], |n| &bytes[n.byte_range()]);
                    h.write(name);
                    h.write_usize(name.len());
                }
                None => h.write(&bytes[range.clone()]),
            }
        }
        at = at.max(range.end);
    }
    h.write(&bytes[at.min(bytes.len())..]);
    h.write_usize(found.len());
    h.finish()
}
