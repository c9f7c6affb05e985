//! CUGRAPH001: NetworkX algorithms the nx-cugraph backend runs on the GPU.

use gpulens_syntax::NodeExt;
use gpulens_knowledge::{ApiKind, Support};

use super::{install, join, loop_phrase, short_callee, size_on, size_phrase, Call};
use crate::Code;
use crate::semantic::Value;
use crate::Finding;
use crate::registry::{declare_rule, Callers, Kind};
use crate::Severity;

declare_rule! {
    /// ## What it finds
    /// A NetworkX algorithm (PageRank, betweenness centrality, Louvain, shortest paths, connected
    /// components, …) that nx-cugraph implements, on a graph that is not evidently small. A test of
    /// the input in a condition or an `assert` (`if not nx.is_connected(G): raise …`) is left to the
    /// algorithm it guards.
    ///
    /// ## Why
    /// nx-cugraph is a NetworkX backend: with it installed and enabled, the same NetworkX calls run on
    /// the GPU — 10x faster on small graphs and 500x or more on graphs with millions of edges.
    /// Algorithms it lacks keep running in NetworkX.
    ///
    /// ## Example
    /// ```python
    /// import networkx as nx
    ///
    /// G = nx.read_edgelist("edges.txt", nodetype=int)
    /// ranks = nx.pagerank(G)
    /// ```
    ///
    /// ## Use instead
    /// ```python
    /// # Unchanged code, run as: NX_CUGRAPH_AUTOCONFIG=True python script.py
    /// # or per call:
    /// ranks = nx.pagerank(G, backend="cugraph")
    /// ```
    pub(crate) static CUGRAPH001: Rule {
        name: "networkx-on-cugraph",
        library: "cugraph",
        severity: Severity::Hint,
        summary: "NetworkX algorithm that the nx-cugraph backend runs on the GPU",
        kind: Kind::Advice,
        in_tests: false,
        callers: Callers::Stay,
        fix: true,
    }
}

pub(super) fn check(call: &Call<'_, '_>, out: &mut Vec<Finding>) {
    let api = call.api;
    if api.kind != ApiKind::Algorithm || api.support == Support::Missing {
        return;
    }
    // A test of the input (`if not nx.is_connected(G): raise ...`, an
    // `assert`): the work is the algorithm the check guards, as for the
    // other libraries' calls.
    if call.site.in_check {
        return;
    }
    // A Python function as weight (or heuristic): nx-cugraph dispatches
    // only attribute names, so NetworkX runs this call itself.
    if super::context::takes_python_callable(call.cx, call.site.node) {
        return;
    }
    let module = call.cx.module;
    if neighbourhood_per_pass(call) {
        return;
    }
    let graph = module
        .first_positional(call.site.node)
        .map_or(Value::Unknown, |g| module.value(g, call.site.scope));
    // Graph sizes are in nodes; a graph with a tenth of `min-elements` nodes
    // rarely has the ~10K edges where the GPU starts to pay off.
    if let Value::Graph(Some(nodes)) = graph {
        if nodes < call.cx.settings.min_elements / 10 {
            return;
        }
    }
    let lib = call.library();
    // Another library's algorithm (python-louvain, leidenalg): the rewrite
    // is NetworkX's or cuGraph's own, which its note says.
    // (Where its arguments ask for what cuGraph lacks, there is no GPU
    // version to point to: nothing to say.)
    if !call.name.starts_with("networkx.") {
        if !call.matched_fallbacks().is_empty() {
            return;
        }
        let note = api.note.as_deref().map(|n| n.split_whitespace().collect::<Vec<_>>().join(" ")).unwrap_or_default();
        let gpu = api.gpu.as_deref().unwrap_or("cugraph");
        out.push(call.finding(
            Code::CUGRAPH001,
            format!("`{}`{}: cuGraph runs it on the GPU (`{gpu}`)", short_callee(call.callee_text()), size_on(graph, "nodes")),
            join([
                format!(
                    "`{}` ({}) runs on the CPU; cuGraph runs the same algorithm on the GPU (`{gpu}`){}.",
                    call.callee_text(),
                    call.name,
                    size_phrase(graph, "nodes"),
                ),
                note,
                format!("Install: {}.", install(call.cx, lib)),
            ]),
        ));
        return;
    }
    // A documented condition under which nx-cugraph declines the call (its
    // `can_run` says no), so NetworkX runs it on the CPU: say what makes it
    // run on the GPU instead of promising it does.
    let fallbacks = call.matched_fallbacks();
    if !fallbacks.is_empty() {
        let reasons: Vec<&str> = fallbacks.iter().map(|f| f.reason.as_str()).collect();
        let mut f = call.finding(
            Code::CUGRAPH001,
            format!("`{}` as written stays on the CPU even with nx-cugraph", short_callee(call.callee_text())),
            join([
                format!("`{}` ({}) runs on the CPU as written, even with the nx-cugraph backend enabled:", call.callee_text(), call.name),
                reasons.join(" "),
                format!("Install: {}.", install(call.cx, lib)),
            ]),
        );
        f.stays_on_cpu = true;
        out.push(f);
        return;
    }
    let zero = lib
        .zero_code_change
        .as_ref()
        .map(|z| match z.notebook.as_deref().filter(|_| call.cx.settings.notebook.is_some()) {
            Some(magic) => format!("`{magic}` in the notebook's first cell, or"),
            None => format!("`{}`, or", z.script),
        })
        .unwrap_or_default();
    out.push(call.finding(
        Code::CUGRAPH001,
        format!("`{}`{}: the nx-cugraph backend runs it on the GPU", short_callee(call.callee_text()), size_on(graph, "nodes")),
        join([
            format!(
                "`{}` ({}) runs in pure Python on the CPU; the nx-cugraph backend runs the same call on the GPU{}.",
                call.callee_text(),
                call.name,
                size_phrase(graph, "nodes"),
            ),
            format!("Enable it without code changes: {zero} pass `backend=\"cugraph\"` to this call."),
            loop_phrase(call.site).to_string(),
            format!("Install: {}.", install(call.cx, lib)),
        ]),
    ));
}

/// The graph is one node's neighbourhood, made on each pass of the loop
/// around the call (`ego = nx.ego_graph(G, node)`, radius 1 or 2): many
/// small graphs, each of which would cost a copy to the GPU and back for a
/// few hundred edges of work.
fn neighbourhood_per_pass(call: &Call<'_, '_>) -> bool {
    let module = call.cx.module;
    if call.site.loop_depth == 0 {
        return false;
    }
    let Some(graph) = module.first_positional(call.site.node) else { return false };
    let made = if graph.kind_name() == "call" { Some(graph) } else { module.assigned_from(graph, call.site.scope) };
    let Some(made) = made.filter(|m| m.kind_name() == "call") else { return false };
    if made.field("function").and_then(|f| module.qualified_name(f)).as_deref() != Some("networkx.ego_graph") {
        return false;
    }
    // Made in the loop (not one neighbourhood made before it).
    let in_loop = module.ancestors(made).take_while(|a| !matches!(a.kind_name(), "function_definition" | "module")).any(|a| {
        matches!(a.kind_name(), "for_statement" | "while_statement") && call.site.node.byte_range().start >= a.start_byte() && call.site.node.end_byte() <= a.end_byte()
    });
    // `radius` is 1 unless given; a literal of 1 or 2 stays a neighbourhood.
    let near = match module.argument(made, "radius", 2) {
        None => true,
        Some(r) => matches!(module.text_of(r), "1" | "2"),
    };
    in_loop && near
}
