//! Values a loop carries from one pass into the next: a name its body reads
//! before it assigns it in the pass. Such a loop is a recurrence, not
//! independent iterations a kernel could run at once (`loops`).

use gpulens_syntax::Node;
use gpulens_syntax::NodeExt;

/// Whether the loop's body reads a name that it also assigns, before it
/// assigns it in the pass: the value read is the one the previous pass left.
/// An assignment in a branch (`if`, a nested loop) comes before only what
/// that branch runs after it, unless every branch of an `if … else` makes
/// one (`if k == 0: stride = 0` / `else: stride //= n[k]` reads the last
/// pass's `stride` on the second path).
/// (Augmented assignments are the reductions' business; a `for` over a
/// nested range assigns its variable before the body reads it.)
pub(super) fn carries_scalar<'t>(module: &crate::Module<'t>, node: Node<'t>, vars: &[&str]) -> bool {
    let Some(body) = node.field("body") else { return false };
    // Assignments: (name, where they take effect, the block they run in);
    // reads: (name, where).
    let mut writes: Vec<(&'t str, usize, std::ops::Range<usize>)> = Vec::new();
    let mut reads: Vec<(&'t str, usize)> = Vec::new();
    for n in module.preorder(body) {
        if n.kind_name() != "identifier" {
            continue;
        }
        let name = module.text_of(n);
        if vars.contains(&name) {
            continue;
        }
        // Where this occurrence binds the name: the left of a plain
        // assignment (also inside `a, b = ...`), or a `for` target.
        let mut binder = None;
        let mut child = n;
        while let Some(parent) = module.parent(child) {
            match parent.kind_name() {
                "pattern_list" | "tuple_pattern" => child = parent,
                "assignment" if parent.field("left") == Some(child) => {
                    binder = Some(parent.end_byte());
                    break;
                }
                "for_statement" if parent.field("left") == Some(child) => {
                    binder = Some(parent.start_byte());
                    break;
                }
                _ => break,
            }
        }
        // An attribute's name (`x.size`) or a keyword (`f(axis=0)`) is no read.
        let not_a_read = module.parent(n).is_some_and(|p| gpulens_syntax::is_label(p, n));
        match binder {
            Some(at) => writes.push((name, at, running_block(module, n, body))),
            None if !not_a_read => reads.push((name, n.start_byte())),
            None => {}
        }
    }
    // An `if` with an `else`, each of whose branches assigns a name, assigns
    // it where it ends (innermost first, so that nested ones count).
    let ifs: Vec<Node<'t>> = module.preorder(body).filter(|n| n.kind_name() == "if_statement").collect();
    // (The names assigned: an `if` adds no new one.)
    let mut names: Vec<&'t str> = writes.iter().map(|(w, ..)| *w).collect();
    names.sort_unstable();
    names.dedup();
    for statement in ifs.into_iter().rev() {
        let mut cursor = statement.walk();
        let mut branches: Vec<std::ops::Range<usize>> = statement.field("consequence").map(|b| b.byte_range()).into_iter().collect();
        let mut otherwise = false;
        for clause in statement.children_by_field_name("alternative", &mut cursor) {
            otherwise |= clause.kind_name() == "else_clause";
            branches.extend(clause.field("consequence").or_else(|| clause.field("body")).map(|b| b.byte_range()));
        }
        if !otherwise {
            continue;
        }
        for &name in &names {
            if branches.iter().all(|b| writes.iter().any(|(w, at, _)| *w == name && b.start <= *at && *at <= b.end)) {
                writes.push((name, statement.end_byte(), running_block(module, statement, body)));
            }
        }
    }
    reads.iter().any(|(name, read)| {
        writes.iter().any(|(w, ..)| w == name)
            && !writes.iter().any(|(w, at, block)| w == name && at <= read && block.contains(read))
    })
}

/// The block `node` runs in, within the loop's `body`: the innermost one
/// but a `with`'s or a `try`'s, which run through.
fn running_block(module: &crate::Module<'_>, node: Node<'_>, body: Node<'_>) -> std::ops::Range<usize> {
    let mut block = module.parent(node);
    while let Some(b) = block {
        if b.id() == body.id() {
            break;
        }
        let through = module.parent(b).is_some_and(|p| matches!(p.kind_name(), "with_statement" | "try_statement"));
        if b.kind_name() == "block" && !through {
            return b.byte_range();
        }
        block = module.parent(b);
    }
    body.byte_range()
}
