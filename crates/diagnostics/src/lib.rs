//! Rules: Python source + the knowledge base + a GPU profile → findings.
//!
//! Pure functions over a text and its tree: no I/O, no editor types, no
//! NVML. The command line and the language server both call [`check`] and
//! turn its [`Finding`]s into their own formats.

pub mod config;
mod registry;
mod rules;
mod semantic;

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::ops::Range;

use rustc_hash::FxHasher;

use gpulens_gpu::GpuProfile;
use gpulens_knowledge::Knowledge;
use gpulens_syntax::Tree;
use serde::Serialize;

pub use registry::{rule, Rule, RULES};
pub use semantic::{parse_suppression, Module, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
    Hint,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
            Severity::Hint => "hint",
        }
    }
}

/// Whether a fix can change what the program does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Applicability {
    /// Behaviour is unchanged; applied by `--fix` and "fix all".
    Safe,
    /// Behaviour may change (numerics, ordering, where data lives); applied on request.
    Unsafe,
}

/// Replace `range` (bytes of the source) with `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub range: Range<usize>,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    pub applicability: Applicability,
    pub message: String,
    pub edits: Vec<Edit>,
}

/// One piece of advice about one span of source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Byte range in the source.
    pub range: Range<usize>,
    pub code: &'static str,
    /// Library id (`cupy`, `cudf`, …).
    pub library: &'static str,
    pub severity: Severity,
    pub message: String,
    pub fix: Option<Fix>,
}

/// What the user configured (`[tool.gpulens]`, command line, editor settings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Codes or prefixes to run (`CUPY`, `CUML001`, `ALL`); empty means all.
    pub select: Vec<String>,
    /// Codes or prefixes never to report.
    pub ignore: Vec<String>,
    /// Below this many elements (or rows) the GPU loses to the CPU.
    pub min_elements: u64,
}

impl Default for Settings {
    fn default() -> Self {
        // The decision framework: under ~10K elements the GPU's launch and
        // transfer overheads outweigh its throughput.
        Settings { select: Vec::new(), ignore: Vec::new(), min_elements: 10_000 }
    }
}

fn matches_code(pattern: &str, code: &str) -> bool {
    let pattern = pattern.trim();
    pattern.eq_ignore_ascii_case("ALL") || code.starts_with(&pattern.to_ascii_uppercase())
}

impl Settings {
    pub fn is_enabled(&self, code: &str) -> bool {
        let selected = self.select.is_empty() || self.select.iter().any(|p| matches_code(p, code));
        selected && !self.ignore.iter().any(|p| matches_code(p, code))
    }
}

/// Everything a rule sees.
pub(crate) struct Context<'a, 't> {
    pub module: &'a Module<'t>,
    pub settings: &'a Settings,
    #[allow(dead_code)] // read by the hardware-tuned rules
    pub gpu: &'a GpuProfile,
}

/// Runs every enabled rule over `text` (whose tree is `tree`).
pub fn check(text: &str, tree: &Tree, settings: &Settings, gpu: &GpuProfile) -> Vec<Finding> {
    let knowledge = Knowledge::get();
    if !might_have_findings(text, knowledge) {
        return Vec::new();
    }
    let module = Module::new(text, tree, knowledge);
    finish(run_rules(&module, text, settings, gpu))
}

fn run_rules(module: &Module<'_>, text: &str, settings: &Settings, gpu: &GpuProfile) -> Vec<Finding> {
    let cx = Context { module, settings, gpu };
    let mut findings = rules::run(&cx);
    findings.retain(|f| settings.is_enabled(f.code) && !is_suppressed(module, text, f));
    findings
}

fn finish(mut findings: Vec<Finding>) -> Vec<Finding> {
    findings.sort_by(|a, b| (a.range.start, a.range.end, a.code).cmp(&(b.range.start, b.range.end, b.code)));
    findings.dedup_by(|a, b| a.range == b.range && a.code == b.code);
    findings
}

/// What an earlier analysis of a document found inside each function, so an
/// edit re-analyses only the function it touched. Findings inside a function
/// depend on its own text and on everything outside functions (imports,
/// globals, class bodies, decorators, settings, GPU): when the latter changes,
/// the cache starts over.
#[derive(Debug, Default)]
pub struct Cache {
    context: u64,
    /// Hash of a definition's text → its findings, with ranges relative to its start.
    units: HashMap<u64, Vec<Finding>>,
    /// The units of a few recent other contexts: typing a character that
    /// breaks the syntax and deleting it again returns to the context before.
    previous: Vec<(u64, HashMap<u64, Vec<Finding>>)>,
    /// Of the last run: (definitions reused, definitions in all).
    pub last_reuse: (usize, usize),
}

/// [`check`], reusing `cache` for functions whose text has not changed. The
/// result is the same as `check`'s (a property test holds it to that).
pub fn check_incremental(text: &str, tree: &Tree, settings: &Settings, gpu: &GpuProfile, cache: &mut Cache) -> Vec<Finding> {
    let knowledge = Knowledge::get();
    if !might_have_findings(text, knowledge) {
        *cache = Cache::default();
        return Vec::new();
    }
    let (units, mut context) = outline(tree, text);
    format!("{settings:?}{gpu:?}").hash(&mut context);
    let context = context.finish();
    if context != cache.context {
        let old = (cache.context, std::mem::take(&mut cache.units));
        if let Some(at) = cache.previous.iter().position(|(c, _)| *c == context) {
            cache.units = cache.previous.remove(at).1;
        }
        cache.previous.insert(0, old);
        cache.previous.truncate(3);
        cache.context = context;
    }
    let hashes: Vec<u64> = units.iter().map(|u| fx_hash(&text.as_bytes()[u.range.clone()])).collect();
    let mut skip: Vec<usize> =
        units.iter().zip(&hashes).filter(|(_, h)| cache.units.contains_key(h)).map(|(u, _)| u.id).collect();
    skip.sort_unstable();
    cache.last_reuse = (skip.len(), units.len());
    let module = Module::new_skipping(text, tree, knowledge, &skip);
    let mut findings = run_rules(&module, text, settings, gpu);
    let mut fresh: HashMap<u64, Vec<Finding>> = HashMap::new();
    for (unit, hash) in units.iter().zip(&hashes) {
        let relative = |f: &Finding| {
            let mut f = f.clone();
            f.range = f.range.start - unit.range.start..f.range.end - unit.range.start;
            if let Some(fix) = &mut f.fix {
                for e in &mut fix.edits {
                    e.range = e.range.start.saturating_sub(unit.range.start)..e.range.end.saturating_sub(unit.range.start);
                }
            }
            f
        };
        if let Some(known) = cache.units.get(hash).filter(|_| skip.binary_search(&unit.id).is_ok()) {
            fresh.insert(*hash, known.clone());
        } else {
            let inside: Vec<Finding> =
                findings.iter().filter(|f| unit.range.contains(&f.range.start) && f.range.end <= unit.range.end).map(relative).collect();
            fresh.insert(*hash, inside);
        }
    }
    for (unit, hash) in units.iter().zip(&hashes) {
        if skip.binary_search(&unit.id).is_ok() {
            for f in &fresh[hash] {
                let mut f = f.clone();
                f.range = f.range.start + unit.range.start..f.range.end + unit.range.start;
                if let Some(fix) = &mut f.fix {
                    for e in &mut fix.edits {
                        e.range = e.range.start + unit.range.start..e.range.end + unit.range.start;
                    }
                }
                findings.push(f);
            }
        }
    }
    cache.units = fresh;
    finish(findings)
}

/// A top-level or class-level function definition: the unit of reuse.
struct Unit {
    id: usize,
    range: Range<usize>,
}

/// The definitions that are units of reuse (functions directly in the
/// module, in class bodies, or in what error recovery left of them), and a
/// hash of what their findings may depend on outside them: everything but
/// comments and docstrings (imports inside a function bind only there, so
/// other functions don't depend on them). Walks no function body.
fn outline(tree: &Tree, text: &str) -> (Vec<Unit>, FxHasher) {
    let g = gpulens_syntax::grammar();
    let mut units = Vec::new();
    let mut context = FxHasher::default();
    let mut stack = vec![tree.root_node()];
    while let Some(container) = stack.pop() {
        let mut cursor = container.walk();
        for child in container.named_children(&mut cursor) {
            let kind = child.kind_id();
            let definition = if kind == g.decorated_definition { child.child_by_field_name("definition") } else { Some(child) };
            let Some(definition) = definition else { continue };
            if definition.kind_id() == g.function_definition {
                if kind == g.decorated_definition {
                    // Decorators decide whether a function is a kernel, which its callers' findings depend on.
                    let mut cursor = child.walk();
                    for decorator in child.named_children(&mut cursor).filter(|d| d.kind() == "decorator") {
                        hash_masked(decorator, text, &mut context);
                    }
                    if let Some(name) = definition.child_by_field_name("name") {
                        context.write(&text.as_bytes()[name.byte_range()]);
                    }
                }
                // A definition with syntax errors parses differently depending on
                // what surrounds it, so its text alone does not decide its
                // findings: it is analysed afresh every time.
                if !child.has_error() {
                    units.push(Unit { id: child.id(), range: child.byte_range() });
                }
            } else if definition.kind() == "class_definition" {
                if let Some(body) = definition.child_by_field_name("body") {
                    stack.push(body);
                }
            } else if child.is_error() {
                stack.push(child);
            } else if kind == g.comment || is_docstring(child) {
                // No finding depends on prose.
            } else {
                hash_masked(child, text, &mut context);
            }
        }
    }
    units.sort_by_key(|u| u.range.start);
    (units, context)
}

/// Hashes a node's text with the contents of its strings and comments left
/// out: no finding depends on what a string says (only on where it is).
fn hash_masked(node: gpulens_syntax::Node<'_>, text: &str, hasher: &mut FxHasher) {
    let bytes = text.as_bytes();
    let mut at = node.start_byte();
    let mut cursor = node.walk();
    loop {
        let n = cursor.node();
        let prose = matches!(n.kind(), "string" | "comment");
        if prose {
            hasher.write(&bytes[at..n.start_byte()]);
            hasher.write(b"\"\"");
            at = n.end_byte();
        }
        if !prose && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                hasher.write(&bytes[at..node.end_byte()]);
                return;
            }
        }
    }
}

/// A statement that is only a string literal.
fn is_docstring(statement: gpulens_syntax::Node<'_>) -> bool {
    statement.kind() == "expression_statement"
        && statement.named_child_count() == 1
        && statement.named_child(0).is_some_and(|e| matches!(e.kind(), "string" | "concatenated_string"))
}

fn fx_hash(bytes: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(bytes);
    h.finish()
}

/// Every rule starts from an import of a CPU library the knowledge base
/// covers, so a file that never names one cannot produce a finding. This
/// byte scan lets whole files skip parsing-dependent work.
pub fn might_have_findings(text: &str, knowledge: &Knowledge) -> bool {
    knowledge.cpu_modules.iter().any(|m| text.contains(m.as_str())) || GPU_MODULES.iter().any(|m| text.contains(m))
}

/// GPU libraries whose use the `GPU…` rules check.
const GPU_MODULES: &[&str] = &["cupy", "numba", "warp", "cudf", "pylibraft", "cuspatial"];

/// A finding is suppressed by `# gpulens: ignore[…]` on its first or last line.
fn is_suppressed(module: &Module<'_>, text: &str, finding: &Finding) -> bool {
    if module.suppressions.is_empty() {
        return false;
    }
    let lines = [line_bounds(text, finding.range.start), line_bounds(text, finding.range.end)];
    module.suppressions.iter().any(|s| {
        lines.iter().any(|l| l.contains(&s.offset))
            && (s.codes.is_empty() || s.codes.iter().any(|c| matches_code(c, finding.code)))
    })
}

fn line_bounds(text: &str, offset: usize) -> Range<usize> {
    let bytes = text.as_bytes();
    let offset = offset.min(bytes.len());
    let start = bytes[..offset].iter().rposition(|&b| b == b'\n' || b == b'\r').map_or(0, |i| i + 1);
    let end = bytes[offset..].iter().position(|&b| b == b'\n' || b == b'\r').map_or(bytes.len(), |i| offset + i);
    start..end
}
