//! CUVS001: a Faiss index built, filled and searched in one block becomes
//! the cuVS index that does the same job: exact flat indexes → brute_force,
//! HNSW → CAGRA.

use gpulens_syntax::NodeExt;
use gpulens_syntax::Node;

use super::arrays::{arguments, visit};
use super::{alias_of, cupy_alias, indentation_at, line_end, line_start, name_taken, newline, Anchor, Draft};
use crate::{Applicability, Context, Fix};

pub(super) fn cuvs(cx: &Context<'_, '_>, node: Node<'_>) -> Option<Fix> {
    let module = cx.module;
    let call = std::iter::successors(Some(node), |n| n.parent()).find(|n| n.kind_name() == "call")?;
    let (name, _) = module.resolve_call(call)?;
    let (algorithm, metric) = match name.as_str() {
        "faiss.IndexFlatL2" => ("brute_force", None),
        "faiss.IndexFlatIP" => ("brute_force", Some("inner_product")),
        "faiss.IndexHNSWFlat" => ("cagra", None),
        _ => return None,
    };
    // `index = faiss.IndexFlatL2(d)`
    let assignment = call.parent().filter(|p| p.kind_name() == "assignment")?;
    let created = assignment.parent().filter(|p| p.kind_name() == "expression_statement")?;
    let index = assignment.field("left").filter(|l| l.kind_name() == "identifier")?;
    let index = module.text_of(index);
    let block = created.parent()?;
    let statements: Vec<Node<'_>> = {
        let mut c = block.walk();
        block.named_children(&mut c).filter(|n| n.kind_name() != "comment").collect()
    };
    fn method_call<'n>(module: &crate::Module<'_>, index: &str, s: &Node<'n>, method: &str) -> Option<Node<'n>> {
        let expr = if s.kind_name() == "expression_statement" { s.named_child(0)? } else { return None };
        let c = if expr.kind_name() == "assignment" { expr.field("right")? } else { expr };
        let f = c.field("function").filter(|f| f.kind_name() == "attribute")?;
        let object = f.field("object")?;
        let attribute = f.field("attribute")?;
        (c.kind_name() == "call" && module.text_of(object) == index && module.text_of(attribute) == method).then_some(c)
    }
    let position = statements.iter().position(|s| *s == created)?;
    let add_statement = statements[position + 1..].iter().find(|s| method_call(module, index, s, "add").is_some())?;
    let search_statement = statements[position + 1..].iter().find(|s| method_call(module, index, s, "search").is_some())?;
    if search_statement.start_byte() < add_statement.start_byte() {
        return None;
    }
    // The index must not be used for anything else (saved, counted, trained…).
    let mut other_use = false;
    visit(block, &mut |n| {
        if n.kind_name() == "identifier" && module.text_of(n) == index {
            let inside = [created, *add_statement, *search_statement].iter().any(|s| s.byte_range().contains(&n.start_byte()));
            other_use |= !inside;
        }
    });
    if other_use {
        return None;
    }
    let add = method_call(module, index, add_statement, "add")?;
    let search = method_call(module, index, search_statement, "search")?;
    let add_args = arguments(add);
    let search_args = arguments(search);
    let [data] = add_args.as_slice() else { return None };
    let (queries, k) = match search_args.as_slice() {
        [q, k] => (*q, module.text_of(*k).to_string()),
        [q] => (*q, module.text_of(module.keyword(search, "k")?).to_string()),
        _ => return None,
    };
    let search_assignment = search.parent().filter(|p| p.kind_name() == "assignment")?;
    let results = search_assignment.field("left").filter(|l| matches!(l.kind_name(), "pattern_list" | "tuple_pattern"))?;
    let result_names: Vec<&str> = {
        let mut c = results.walk();
        results.named_children(&mut c).map(|n| module.text_of(n)).collect()
    };
    let [distances, neighbors] = result_names.as_slice() else { return None };
    let text = module.text;
    for s in [created, *add_statement, *search_statement] {
        let indent = indentation_at(text, s.start_byte());
        if line_start(text, s.start_byte()) + indent.len() != s.start_byte() || text[s.byte_range()].contains(';') {
            return None;
        }
    }
    let mut draft = Draft::new(
        Applicability::Unsafe,
        format!("Search with cuVS {algorithm} on the GPU"),
        format!(
            "Builds and searches the index on the GPU with cuVS ({}). The vectors are converted to float32 CuPy \
             arrays, and the results are copied back to NumPy.",
            if algorithm == "cagra" { "CAGRA, a GPU graph index like HNSW" } else { "brute_force: exact, like the flat index" }
        ),
    );
    let cp = cupy_alias(cx, &mut draft, created);
    let module_name = match alias_of(module, &format!("cuvs.neighbors.{algorithm}"), created.start_byte()) {
        Some(a) => a.to_string(),
        None if !name_taken(module, algorithm, created) => {
            draft.module_line(Anchor::Imports, format!("from cuvs.neighbors import {algorithm}"));
            algorithm.to_string()
        }
        None => {
            draft.module_line(Anchor::Imports, format!("import cuvs.neighbors.{algorithm}"));
            format!("cuvs.neighbors.{algorithm}")
        }
    };
    let nl = newline(text, created.start_byte());
    // Data a CuPy rewrite has just sent back to the host goes in as it is.
    let unwrap = |t: &str| -> String {
        let t = t.to_string();
        let prefix = format!("{cp}.asnumpy(");
        match t.strip_prefix(&prefix).and_then(|r| r.strip_suffix(')')) {
            Some(inner) if !inner.contains('(') => inner.to_string(),
            _ => t,
        }
    };
    let data = unwrap(module.text_of(*data));
    let queries = unwrap(module.text_of(queries));
    // The creation line goes; the add builds; the search searches.
    draft.replace(line_start(text, created.start_byte())..line_end(text, created.end_byte()), "");
    let build = match (algorithm, metric) {
        ("cagra", _) => format!("{module_name}.build({module_name}.IndexParams(), {cp}.asarray({data}, dtype={cp}.float32))"),
        (_, Some(metric)) => format!("{module_name}.build({cp}.asarray({data}, dtype={cp}.float32), metric=\"{metric}\")"),
        _ => format!("{module_name}.build({cp}.asarray({data}, dtype={cp}.float32))"),
    };
    draft.replace(add_statement.byte_range(), format!("{index} = {build}"));
    let params = if algorithm == "cagra" { format!("{module_name}.SearchParams(), ") } else { String::new() };
    let indent = indentation_at(text, search_statement.start_byte());
    draft.replace(
        search_statement.byte_range(),
        format!(
            "{distances}, {neighbors} = {module_name}.search({params}{index}, {cp}.asarray({queries}, dtype={cp}.float32), {k}){nl}\
             {indent}{distances}, {neighbors} = {cp}.asnumpy({cp}.asarray({distances})), {cp}.asnumpy({cp}.asarray({neighbors}))"
        ),
    );
    draft.finish()
}
