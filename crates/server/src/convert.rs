//! Findings → LSP: diagnostics, code actions, hover, inlay hints.

use std::collections::HashMap;

use gpulens_diagnostics::profile::Measured;
use gpulens_diagnostics::{parse_suppression, Applicability, Finding, Kind, Severity};
use gpulens_gpu::{GpuProfile, ProfileSource};
use gpulens_knowledge::Knowledge;
use gpulens_syntax::{Document, PositionEncoding};
use serde_json::json;
use tower_lsp_server::ls_types::*;

pub const FIX_ALL_KIND: &str = "source.fixAll.gpulens";

pub fn range_in(r: Range) -> gpulens_syntax::Range {
    gpulens_syntax::Range::new(
        gpulens_syntax::Position::new(r.start.line, r.start.character),
        gpulens_syntax::Position::new(r.end.line, r.end.character),
    )
}

pub struct Converter {
    pub encoding: PositionEncoding,
}

impl Converter {
    fn position(&self, doc: &Document, offset: usize) -> Position {
        let p = doc.position(offset, self.encoding);
        Position::new(p.line, p.character)
    }

    fn range(&self, doc: &Document, range: &std::ops::Range<usize>) -> Range {
        Range::new(self.position(doc, range.start), self.position(doc, range.end))
    }

    fn offset(&self, doc: &Document, p: Position) -> usize {
        doc.offset(gpulens_syntax::Position::new(p.line, p.character), self.encoding)
    }

    /// A fix's edits as LSP text edits. Edits that touch (an insertion where
    /// a replacement starts, two insertions at one point) are merged into
    /// one: clients differ in how they order edits at the same position.
    fn text_edits(&self, doc: &Document, f: &Finding) -> Vec<TextEdit> {
        let mut merged: Vec<(std::ops::Range<usize>, String)> = Vec::new();
        for e in f.fix.iter().flat_map(|fix| fix.edits.iter()) {
            if let Some((range, text)) = merged.last_mut() {
                if e.range.start == range.end {
                    text.push_str(&e.text);
                    range.end = e.range.end;
                    continue;
                }
                if e.range.start < range.end {
                    continue; // overlapping: never the case for a checked fix
                }
            }
            merged.push((e.range.clone(), e.text.clone()));
        }
        merged.into_iter().map(|(range, new_text)| TextEdit { range: self.range(doc, &range), new_text }).collect()
    }

    pub fn diagnostic(&self, doc: &Document, f: &Finding) -> Diagnostic {
        self.diagnostic_with(doc, f, &mut Vec::new())
    }

    /// [`Self::diagnostic`], taking the fix's data from `fixes` when an
    /// earlier finding had the same fix (a function-wide rewrite is offered
    /// on each call it moves: its edits are converted once per publish).
    fn diagnostic_with<'f>(&self, doc: &Document, f: &'f Finding, fixes: &mut Vec<(&'f gpulens_diagnostics::Fix, serde_json::Value)>) -> Diagnostic {
        let docs = docs_uri(f.library);
        let data = f.fix.as_ref().map(|fix| {
            if let Some((_, data)) = fixes.iter().find(|(known, _)| *known == fix) {
                return data.clone();
            }
            let data = json!({
                "fix": {
                    "message": fix.message,
                    "details": fix.details,
                    "applicability": fix.applicability,
                    "edits": self.text_edits(doc, f),
                }
            });
            fixes.push((fix, data.clone()));
            data
        });
        Diagnostic {
            range: self.range(doc, &f.range),
            severity: Some(match f.severity {
                Severity::Error => DiagnosticSeverity::ERROR,
                Severity::Warning => DiagnosticSeverity::WARNING,
                Severity::Info => DiagnosticSeverity::INFORMATION,
                Severity::Hint => DiagnosticSeverity::HINT,
            }),
            code: Some(NumberOrString::String(f.code.to_string())),
            code_description: docs.map(|href| CodeDescription { href }),
            source: Some("gpulens".into()),
            message: f.message.clone(),
            data,
            ..Default::default()
        }
    }

    pub fn diagnostics(&self, doc: &Document, findings: &[Finding]) -> Vec<Diagnostic> {
        let mut fixes = Vec::new();
        findings.iter().map(|f| self.diagnostic_with(doc, f, &mut fixes)).collect()
    }

    /// Findings whose range meets `range` (an empty range at a finding's edge counts).
    fn overlapping<'a>(&self, doc: &Document, findings: &'a [Finding], range: Range) -> impl Iterator<Item = &'a Finding> {
        let (start, end) = (self.offset(doc, range.start), self.offset(doc, range.end));
        findings.iter().filter(move |f| f.range.start <= end && start <= f.range.end)
    }

    pub fn code_actions(
        &self,
        uri: &Uri,
        doc: &Document,
        findings: &[Finding],
        params: &CodeActionParams,
    ) -> Vec<CodeActionOrCommand> {
        let only = params.context.only.as_ref();
        let wants = |kind: &str| {
            only.is_none_or(|kinds| kinds.iter().any(|k| kind == k.as_str() || kind.starts_with(&format!("{}.", k.as_str()))))
        };
        let mut actions = Vec::new();
        if wants(CodeActionKind::QUICKFIX.as_str()) {
            for f in self.overlapping(doc, findings, params.range) {
                let diagnostic = self.diagnostic(doc, f);
                // (A new notebook cell is made by who holds the notebook.)
                if let Some(fix) = f.fix.as_ref().filter(|x| x.cell.is_none()) {
                    actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                        title: fix.message.clone(),
                        kind: Some(CodeActionKind::QUICKFIX),
                        diagnostics: Some(vec![diagnostic.clone()]),
                        edit: Some(workspace_edit(uri, self.text_edits(doc, f))),
                        is_preferred: Some(fix.applicability == Applicability::Safe),
                        ..Default::default()
                    }));
                }
                actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: format!("Disable {} for this line", f.code),
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![diagnostic]),
                    edit: Some(workspace_edit(uri, vec![self.suppression_edit(doc, f)])),
                    ..Default::default()
                }));
            }
        }
        if wants(FIX_ALL_KIND) && only.is_some() {
            let edits = self.safe_fix_edits(doc, findings);
            if !edits.is_empty() {
                actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: "gpulens: apply all safe fixes".into(),
                    kind: Some(CodeActionKind::new(FIX_ALL_KIND)),
                    edit: Some(workspace_edit(uri, edits)),
                    ..Default::default()
                }));
            }
        }
        actions
    }

    /// The text edits of every safe fix of `findings` in `doc`.
    pub fn safe_fix_edits(&self, doc: &Document, findings: &[Finding]) -> Vec<TextEdit> {
        findings
            .iter()
            .filter(|f| f.fix.as_ref().is_some_and(|x| x.applicability == Applicability::Safe && x.cell.is_none()))
            .flat_map(|f| self.text_edits(doc, f))
            .collect()
    }

    /// Adds `# gpulens: ignore[CODE]` at the end of the finding's first line
    /// (past any backslash continuations, after which a comment is not
    /// allowed), or adds the code to a gpulens comment already there.
    fn suppression_edit(&self, doc: &Document, f: &Finding) -> TextEdit {
        let rope = doc.rope();
        let mut line = doc.position(f.range.start, self.encoding).line;
        let line_end = |line: u32| doc.offset(gpulens_syntax::Position::new(line, u32::MAX), self.encoding);
        let line_start = |line: u32| doc.offset(gpulens_syntax::Position::new(line, 0), self.encoding);
        while (line as usize) + 1 < doc.line_count() {
            let end = line_end(line);
            if end > line_start(line) && rope.byte(end - 1) == b'\\' {
                line += 1;
            } else {
                break;
            }
        }
        let (start, end) = (line_start(line), line_end(line));
        // A real comment on the line (not a `#` inside a string).
        let root = doc.tree().root_node();
        let comment = (start..end)
            .filter(|&i| rope.byte(i) == b'#')
            .filter_map(|i| root.descendant_for_byte_range(i, i + 1).filter(|n| n.kind() == "comment" && n.start_byte() == i))
            .next();
        if let Some(comment) = comment {
            let text = rope.byte_slice(comment.byte_range()).to_string();
            if let (Some(open), Some(codes)) = (text.find("gpulens: ignore["), parse_suppression(&text)) {
                if !codes.is_empty() {
                    if let Some(close) = text[open..].find(']') {
                        let p = self.position(doc, comment.start_byte() + open + close);
                        return TextEdit { range: Range::new(p, p), new_text: format!(", {}", f.code) };
                    }
                }
            }
        }
        let p = self.position(doc, end);
        TextEdit { range: Range::new(p, p), new_text: format!("  # gpulens: ignore[{}]", f.code) }
    }

    pub fn fix_edit(&self, uri: &Uri, doc: &Document, findings: &[Finding], code: &str, range: Range) -> Option<WorkspaceEdit> {
        let f = self.overlapping(doc, findings, range).find(|f| f.code.as_str() == code && f.fix.is_some())?;
        Some(workspace_edit(uri, self.text_edits(doc, f)))
    }

    /// `shares`: what a profile measured for each finding (the `profile` setting).
    pub fn hover(&self, doc: &Document, findings: &[Finding], position: Position, gpu: &GpuProfile, shares: Option<&[Option<Measured>]>) -> Option<Hover> {
        let offset = self.offset(doc, position);
        let knowledge = Knowledge::get();
        if let Some((i, f)) = findings.iter().enumerate().find(|(_, f)| f.range.start <= offset && offset <= f.range.end) {
            let rule = f.code.rule();
            let lib = knowledge.library(f.library)?;
            let mut md = format!("**{}** · {} — {}\n\n{}\n\n", f.code, lib.name, rule.summary, f.message);
            if let Some(shares) = shares {
                match shares.get(i).cloned().flatten() {
                    Some(m) => md.push_str(&format!("**Profile.** {} ({}).\n\n", m.phrase(), m.source.name())),
                    None => md.push_str("**Profile.** The profile never saw this code run.\n\n"),
                }
            }
            if !f.details.is_empty() {
                md.push_str(&format!("{}\n\n", f.details));
            }
            if let Some(fix) = &f.fix {
                let unsafe_ = if fix.applicability == Applicability::Unsafe { " (unsafe: review the result)" } else { "" };
                md.push_str(&format!("**Fix{unsafe_}.** {}. {}\n\n", fix.message, fix.details));
            }
            md.push_str(&format!("**Why.** {}\n\n", rule.why()));
            md.push_str(&format!("**GPU.** {}\n\n", gpu_sentence(gpu)));
            // (Details that give an estimate for this GPU already say it.)
            let estimated = f.details.contains("Expected: about");
            if let Some((lo, hi)) = knowledge.measured.speedup_range(f.library).filter(|_| !estimated) {
                md.push_str(&format!(
                    "**Measured.** gpulens's own rewrite of this kind ran {lo:.0}–{hi:.0}× faster end to end (copies \
                     included, results checked against the CPU's) on an {} ({}; `examples/rewrites`). Your speedup \
                     depends on your data size and GPU.\n\n",
                    knowledge.measured.gpu, knowledge.measured.date
                ));
            }
            if let Some(page) = knowledge.reference_page(f.library) {
                if let Some(intro) = first_paragraph(page) {
                    md.push_str(&format!("**{}.** {intro}\n\n", lib.name));
                }
            }
            md.push_str(&format!(
                "[{} documentation]({}) · `gpulens explain {}` for an example before and after",
                lib.name, lib.docs, f.code
            ));
            return Some(Hover {
                contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value: md }),
                range: Some(self.range(doc, &f.range)),
            });
        }
        self.import_hover(doc, offset, gpu)
    }

    /// On `import numpy as np` and friends: which NVIDIA library covers the module, and how much of it.
    fn import_hover(&self, doc: &Document, offset: usize, gpu: &GpuProfile) -> Option<Hover> {
        let source = doc.to_string();
        let modules = gpulens_syntax::queries::import_modules_at(doc.tree().root_node(), source.as_bytes(), offset);
        // The module under the cursor, else the statement's first.
        let (range, text) = modules
            .iter()
            .find(|(r, _)| r.start <= offset && offset <= r.end)
            .or_else(|| modules.first())
            .cloned()?;
        let module = text.split('.').next()?.trim().to_string();
        let knowledge = Knowledge::get();
        let coverage = knowledge.coverage(&module);
        if coverage.is_empty() {
            return None;
        }
        let mut md = format!("**{module}** on the GPU\n\n");
        for (lib, full, partial, fallback, missing) in coverage {
            let Some(library) = knowledge.library(lib) else { continue };
            md.push_str(&format!(
                "- **{}** ({}): {} of gpulens' {} mapped `{module}` APIs run on the GPU ({} with differences){}{}. Install: {}. [docs]({})\n",
                library.name,
                library.status.as_str(),
                full + partial,
                full + partial + fallback + missing,
                partial,
                if fallback > 0 { format!(", {fallback} fall back to the CPU") } else { String::new() },
                if missing > 0 { format!(", {missing} have no GPU version") } else { String::new() },
                library.install_for(gpu.cuda_major, gpu.compute_capability()).phrase(),
                library.docs,
            ));
            if let Some(z) = &library.zero_code_change {
                md.push_str(&format!("  - Without code changes: `{}`\n", z.script));
            }
        }
        Some(Hover {
            contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value: md }),
            range: Some(Range::new(self.position(doc, range.start), self.position(doc, range.end))),
        })
    }

    /// One hint per finding of advice in `range`, saying what the finding
    /// says: the library that runs the code on the GPU with the speedup
    /// gpulens measured, scaled to the user's GPU and naming it (or left out
    /// where the GPU is known but not how fast its memory is), or that the
    /// code stays on the CPU.
    /// `shares`: what a profile measured for each finding, added to its hint.
    pub fn inlay_hints(&self, doc: &Document, findings: &[Finding], range: Range, gpu: &GpuProfile, shares: Option<&[Option<Measured>]>) -> Vec<InlayHint> {
        let knowledge = Knowledge::get();
        let (start, end) = (self.offset(doc, range.start), self.offset(doc, range.end));
        findings
            .iter()
            .enumerate()
            .filter(|(_, f)| f.range.start <= end && start <= f.range.end)
            .filter(|(_, f)| f.code.rule().kind == Kind::Advice)
            .filter_map(|(i, f)| {
                let lib = knowledge.library(f.library)?;
                let label = if f.stays_on_cpu {
                    format!("stays on CPU ({})", lib.name)
                } else {
                    let unscalable = gpu.name.is_some() && gpu.memory_bandwidth_gbs.is_none();
                    let estimate = gpulens_diagnostics::estimated_speedup(f.library, gpu)
                        .filter(|_| !unscalable)
                        .map(|e| {
                            let on = e.gpu.trim_start_matches("the ").trim_start_matches("NVIDIA ").to_string();
                            if e.high - e.low < 0.5 {
                                format!(" ~{:.0}× on {on}", e.low)
                            } else {
                                format!(" ~{:.0}–{:.0}× on {on}", e.low, e.high)
                            }
                        })
                        .unwrap_or_default();
                    format!("→ {}{estimate}", lib.name)
                };
                let label = match shares.map(|s| s.get(i).cloned().flatten()) {
                    Some(Some(m)) => format!("{label} · {}", m.phrase()),
                    Some(None) => format!("{label} · not in the profile"),
                    None => label,
                };
                Some(InlayHint {
                    position: self.position(doc, f.range.end),
                    label: InlayHintLabel::String(label),
                    kind: None,
                    text_edits: None,
                    tooltip: Some(InlayHintTooltip::String(f.message.clone())),
                    padding_left: Some(true),
                    padding_right: None,
                    data: None,
                })
            })
            .collect()
    }
}

/// The documentation page of a library, parsed once (every publish
/// carries it on each diagnostic).
fn docs_uri(library: &str) -> Option<Uri> {
    static PAGES: std::sync::OnceLock<HashMap<&'static str, Uri>> = std::sync::OnceLock::new();
    let pages = PAGES.get_or_init(|| {
        Knowledge::get().libraries.iter().filter_map(|l| Some((l.id.as_str(), l.docs.parse::<Uri>().ok()?))).collect()
    });
    pages.get(library).cloned()
}

fn workspace_edit(uri: &Uri, edits: Vec<TextEdit>) -> WorkspaceEdit {
    WorkspaceEdit { changes: Some(HashMap::from([(uri.clone(), edits)])), ..Default::default() }
}

fn gpu_sentence(gpu: &GpuProfile) -> String {
    match gpu.source {
        ProfileSource::None => "No GPU is known here (no NVIDIA driver found, and no target GPU set): the advice is \
                                generic. Set `target-gpu` to tune it to the GPU your code will run on."
            .into(),
        ProfileSource::Nvml | ProfileSource::Target => format!(
            "Advice tuned for {}{}{}.",
            gpu.name.as_deref().unwrap_or("the GPU"),
            gpu.compute_capability.as_deref().map(|c| format!(", compute capability {c}")).unwrap_or_default(),
            gpu.memory_bytes.map(|m| format!(", {:.0} GB", m as f64 / 1e9)).unwrap_or_default(),
        ),
    }
}

/// The first prose paragraph of a Markdown page (after its title).
fn first_paragraph(page: &str) -> Option<String> {
    page.split("\n\n")
        .map(str::trim)
        .find(|p| !p.is_empty() && !p.starts_with('#') && !p.starts_with("```"))
        // A note set as a block quote (`> **Status: …**`) reads as its text.
        .map(|p| p.lines().map(|l| l.trim_start().trim_start_matches('>')).collect::<Vec<_>>().join(" "))
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
}

#[cfg(test)]
mod tests {
    use super::first_paragraph;

    #[test]
    fn a_quoted_note_reads_as_text() {
        let page = "# Numba CUDA\n\n> **Which package.** NVIDIA now develops\n> Numba-CUDA-MLIR.\n\nMore.";
        assert_eq!(first_paragraph(page).as_deref(), Some("**Which package.** NVIDIA now develops Numba-CUDA-MLIR."));
        assert_eq!(first_paragraph("# T\n\nPlain text\non two lines.").as_deref(), Some("Plain text on two lines."));
    }
}
