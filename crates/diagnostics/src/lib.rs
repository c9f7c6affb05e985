//! Rules: Python source + the knowledge base + a GPU profile → findings.
//!
//! Pure functions over a text and its tree: no I/O, no editor types, no
//! NVML. The command line and the language server both call [`check`] and
//! turn its [`Finding`]s into their own formats.

pub mod config;
mod registry;
mod rules;
mod semantic;

use std::ops::Range;

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
    let cx = Context { module: &module, settings, gpu };
    let mut findings = rules::run(&cx);
    findings.retain(|f| settings.is_enabled(f.code) && !is_suppressed(&module, text, f));
    findings.sort_by(|a, b| (a.range.start, a.range.end, a.code).cmp(&(b.range.start, b.range.end, b.code)));
    findings.dedup_by(|a, b| a.range == b.range && a.code == b.code);
    findings
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
