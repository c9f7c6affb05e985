//! The output formats of `check`: text for people, JSON for tools, SARIF
//! for code-scanning services, workflow commands for GitHub Actions.

use std::io::{self, Write};

use gpulens_diagnostics::{Kind, Rule, Severity, RULES};
use gpulens_gpu::GpuProfile;
use gpulens_knowledge::Knowledge;
use serde_json::{json, Value};

use crate::profiled::Profiled;
use crate::report::{FileReport, Problem, Shown};


/// The text output (and the concise one, where the findings have no
/// snippets): each finding's line, its source line when it has one, and with
/// `details` what the finding and its fix say beyond their one line.
/// With a profile (`--profile`), the findings come most-measured first
/// across all files, each with its share of the run, those in code the
/// profile never saw last; then the hot functions that have no finding,
/// and why.
pub fn text(out: &mut impl Write, reports: &[FileReport], checked: usize, details: bool, profiled: Option<&Profiled>) -> io::Result<()> {
    let mut all: Vec<(&FileReport, &Shown)> = reports.iter().flat_map(|r| r.findings.iter().map(move |f| (r, f))).collect();
    let total = all.len();
    if let Some(p) = profiled {
        let share = |f: &Shown| f.profile.as_ref().map_or(-1.0, |m| m.share);
        all.sort_by(|a, b| share(b.1).total_cmp(&share(a.1)));
        let seen = all.iter().filter(|(_, f)| f.profile.is_some()).count();
        writeln!(out, "Ranked by the profile {} ({}): {seen} of {total} findings are in code it measured.\n", p.path, p.describe())?;
    }
    for (report, f) in all {
        write_finding(out, report, f, details, profiled.is_some())?;
    }
    if let Some(p) = profiled.filter(|p| !p.hot.is_empty()) {
        writeln!(out, "Hot code with no advice:")?;
        for h in &p.hot {
            writeln!(out, "  {}:{}: `{}` ({}): {}", h.path, h.line, h.function, h.measured.phrase(), h.reason.reason())?;
        }
        writeln!(out)?;
    }
    let files = if checked == 1 { "file" } else { "files" };
    match total {
        0 => writeln!(out, "No findings in {checked} {files}."),
        1 => writeln!(out, "Found 1 finding in {checked} {files}."),
        n => writeln!(out, "Found {n} findings in {checked} {files}."),
    }
}

/// GitHub Actions workflow commands (`::notice file=…,line=…::message`):
/// an annotation per finding, at its span (in a notebook, relative to its
/// cell, which the title names), and an error per file that could not be
/// checked. Hints and information are notices; warnings and errors keep
/// their level.
pub fn github(out: &mut impl Write, reports: &[FileReport], problems: &[Problem]) -> io::Result<()> {
    for report in reports {
        for f in &report.findings {
            let r = &f.record;
            let level = match r.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info | Severity::Hint => "notice",
            };
            let cell = f.cell.map(|c| format!(" (cell {c})")).unwrap_or_default();
            let title = format!("gpulens {} [{}]{cell}", r.code, r.library);
            writeln!(
                out,
                "::{level} file={},line={},col={},endLine={},endColumn={},title={}::{}",
                github_property(&report.path),
                f.start.0,
                f.start.1,
                f.end.0,
                f.end.1,
                github_property(&title),
                // (The annotation's body: the one line, then the details under it.)
                github_data(&if r.details.is_empty() { r.message.clone() } else { format!("{}\n\n{}", r.message, r.details) })
            )?;
        }
    }
    for p in problems {
        match p.path.as_str() {
            "" => writeln!(out, "::error title=gpulens::{}", github_data(&p.message))?,
            path => writeln!(out, "::error file={},title=gpulens::{}", github_property(path), github_data(&p.message))?,
        }
    }
    Ok(())
}

/// A workflow command's message, escaped as the runner reads it.
fn github_data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// A workflow command's property value (`file=`, `title=`), escaped.
fn github_property(text: &str) -> String {
    github_data(text).replace(':', "%3A").replace(',', "%2C")
}

fn write_finding(out: &mut impl Write, report: &FileReport, f: &Shown, details: bool, profiled: bool) -> io::Result<()> {
    let ((line, col), r) = (f.start, &f.record);
    let share = match &f.profile {
        Some(m) => format!("({}) ", m.phrase()),
        None if profiled => "(not in the profile) ".to_string(),
        None => String::new(),
    };
    match f.cell {
        Some(cell) => writeln!(out, "{}:cell {cell}:{line}:{col}: {} [{}] {share}{}", report.path, r.code, r.library, r.message)?,
        None => writeln!(out, "{}:{line}:{col}: {} [{}] {share}{}", report.path, r.code, r.library, r.message)?,
    }
    let gutter = f.snippet.as_ref().map_or(2, |_| line.to_string().len());
    if let Some(s) = &f.snippet {
        let (before, after) = (if s.cut_before { "…" } else { "" }, if s.cut_after { "…" } else { "" });
        writeln!(out, "{:gutter$} |", "")?;
        writeln!(out, "{line} | {before}{}{after}", s.source)?;
        let indent = if s.cut_before { " " } else { "" }; // under the "…"
        writeln!(out, "{:gutter$} | {indent}{}{}", "", s.pad, "^".repeat(s.carets))?;
    }
    if details {
        if !r.details.is_empty() {
            write_wrapped(out, gutter, "= ", &r.details)?;
        }
        if let Some(fix) = &r.fix {
            let kind = match fix.applicability {
                gpulens_diagnostics::Applicability::Safe => "fix",
                gpulens_diagnostics::Applicability::Unsafe => "fix (unsafe)",
            };
            let text = if fix.details.is_empty() { format!("{kind}: {}", fix.message) } else { format!("{kind}: {}. {}", fix.message, fix.details) };
            write_wrapped(out, gutter, "= ", &text)?;
        }
    }
    if f.snippet.is_some() || details {
        writeln!(out)?;
    }
    Ok(())
}

/// Width the details are wrapped to, in characters.
const DETAILS_WIDTH: usize = 100;

/// `text` under a finding: its first line after `lead` at the gutter, the
/// rest lined up with it, wrapped at word boundaries.
fn write_wrapped(out: &mut impl Write, gutter: usize, lead: &str, text: &str) -> io::Result<()> {
    let indent = gutter + 1 + lead.chars().count();
    let mut line = String::new();
    let mut first = true;
    let flush = |line: &mut String, first: &mut bool, out: &mut dyn Write| -> io::Result<()> {
        if *first {
            writeln!(out, "{:gutter$} {lead}{line}", "")?;
            *first = false;
        } else {
            writeln!(out, "{:indent$}{line}", "")?;
        }
        line.clear();
        Ok(())
    };
    for word in words(text) {
        if !line.is_empty() && indent + line.chars().count() + 1 + word.chars().count() > DETAILS_WIDTH {
            flush(&mut line, &mut first, out)?;
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() {
        flush(&mut line, &mut first, out)?;
    }
    Ok(())
}

/// The words of `text`, a `code span` with spaces kept as one.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    let mut parts = text.split_whitespace();
    std::iter::from_fn(move || {
        let mut word = parts.next()?.to_string();
        while word.matches('`').count() % 2 == 1 {
            let Some(next) = parts.next() else { break };
            word.push(' ');
            word.push_str(next);
        }
        Some(word)
    })
}

/// `--statistics`: how many findings each rule has (most first), then each
/// library; as JSON, `{"rules": [{code, name, library, count, fixable}], "libraries": [{library, count}]}`.
pub fn statistics(out: &mut impl Write, reports: &[FileReport], as_json: bool) -> io::Result<()> {
    let mut by_rule: Vec<(&'static Rule, usize, usize)> = Vec::new();
    let mut by_library: Vec<(&str, usize)> = Vec::new();
    for f in reports.iter().flat_map(|r| &r.findings) {
        let r = &f.record;
        let rule = r.code.rule();
        match by_rule.iter_mut().find(|(x, ..)| x.code == r.code) {
            Some((_, n, fixable)) => {
                *n += 1;
                *fixable += usize::from(r.fix.is_some());
            }
            None => by_rule.push((rule, 1, usize::from(r.fix.is_some()))),
        }
        match by_library.iter_mut().find(|(l, _)| *l == r.library) {
            Some((_, n)) => *n += 1,
            None => by_library.push((r.library, 1)),
        }
    }
    by_rule.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.code.as_str().cmp(b.0.code.as_str())));
    by_library.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    if as_json {
        let doc = json!({
            "rules": by_rule.iter().map(|(rule, n, fixable)| json!({
                "code": rule.code.as_str(), "name": rule.name, "library": rule.library, "count": n, "fixable": fixable,
            })).collect::<Vec<_>>(),
            "libraries": by_library.iter().map(|(l, n)| json!({"library": l, "count": n})).collect::<Vec<_>>(),
        });
        serde_json::to_writer_pretty(&mut *out, &doc)?;
        return writeln!(out);
    }
    let width = by_rule.iter().map(|(_, n, _)| n.to_string().len()).chain(by_library.iter().map(|(_, n)| n.to_string().len())).max().unwrap_or(1);
    let code_width = by_rule.iter().map(|(r, ..)| r.code.as_str().len()).max().unwrap_or(0);
    for (rule, n, fixable) in &by_rule {
        let mark = if *fixable > 0 { "[*]" } else { "   " };
        writeln!(out, "{n:>width$}  {:<code_width$}  {mark} {} ({})", rule.code.as_str(), rule.name, rule.library)?;
    }
    if by_library.is_empty() {
        return writeln!(out, "No findings.");
    }
    writeln!(out)?;
    let names = Knowledge::get();
    for (library, n) in &by_library {
        let name = names.library(library).map_or(*library, |l| l.name.as_str());
        writeln!(out, "{n:>width$}  {name}")?;
    }
    Ok(())
}

/// Every finding of `reports` as a JSON sequence, each object made by the
/// function as it is written (the JSON and SARIF outputs are written as they
/// are made, never held whole).
struct EachFinding<'a>(&'a [FileReport], fn(&FileReport, &Shown) -> Value);

impl serde::Serialize for EachFinding<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let EachFinding(reports, make) = *self;
        serializer.collect_seq(reports.iter().flat_map(|r| r.findings.iter().map(move |f| make(r, f))))
    }
}

/// The JSON output, written as it is made: one finding's object at a time
/// (a document built whole first took several times the memory of the
/// findings themselves on large trees).
pub fn json(out: &mut impl Write, reports: &[FileReport], gpu: &GpuProfile, profiled: Option<&Profiled>) -> io::Result<()> {
    // (Keys sorted, as they were when each object was a `json!` value.)
    #[derive(serde::Serialize)]
    struct Document<'a> {
        findings: JsonFindings<'a>,
        gpu: &'a GpuProfile,
        #[serde(skip_serializing_if = "Option::is_none")]
        profile: Option<Value>,
        version: u32,
    }
    let profile = profiled.map(|p| {
        json!({
            "path": p.path, "format": p.format, "unit": p.unit, "total": p.total, "files": p.files,
            "hot_without_findings": p.hot.iter().map(|h| json!({
                "path": h.path, "line": h.line, "function": h.function, "profile": h.measured,
                "reason": h.reason, "why": h.reason.reason(),
            })).collect::<Vec<_>>(),
        })
    });
    let findings = JsonFindings(reports, profiled.is_some());
    serde_json::to_writer_pretty(&mut *out, &Document { findings, gpu, profile, version: 1 })?;
    writeln!(out)
}

/// The findings of the JSON output, serialised straight from the reports
/// (no JSON value is built: those allocations were most of the time the
/// JSON output took beyond the text one).
/// (With whether a profile was given: each finding then says what it measured, or null.)
struct JsonFindings<'a>(&'a [FileReport], bool);

impl serde::Serialize for JsonFindings<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let profiled = self.1;
        serializer.collect_seq(self.0.iter().flat_map(|r| r.findings.iter().map(move |f| JsonFinding(r, f, profiled))))
    }
}

struct JsonFinding<'a>(&'a FileReport, &'a Shown, bool);

impl serde::Serialize for JsonFinding<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let JsonFinding(r, f, profiled) = *self;
        let ((line, column), (end_line, end_column)) = (f.start, f.end);
        let record = &f.record;
        let mut map = serializer.serialize_map(None)?;
        // In a notebook, the lines and columns are the cell's.
        if let Some(cell) = f.cell {
            map.serialize_entry("cell", &cell)?;
        }
        map.serialize_entry("code", record.code.as_str())?;
        map.serialize_entry("column", &column)?;
        map.serialize_entry("details", &record.details)?;
        map.serialize_entry("end_column", &end_column)?;
        map.serialize_entry("end_line", &end_line)?;
        map.serialize_entry("fix", &record.fix.as_ref().map(|fix| JsonFix(f, fix)))?;
        map.serialize_entry("library", record.library)?;
        map.serialize_entry("line", &line)?;
        map.serialize_entry("message", &record.message)?;
        map.serialize_entry("path", &r.path)?;
        if profiled {
            map.serialize_entry("profile", &f.profile)?;
        }
        map.serialize_entry("severity", &record.severity)?;
        map.end()
    }
}

struct JsonFix<'a>(&'a Shown, &'a gpulens_diagnostics::Fix);

impl serde::Serialize for JsonFix<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let JsonFix(f, fix) = *self;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("applicability", &fix.applicability)?;
        map.serialize_entry("details", &fix.details)?;
        map.serialize_entry("edits", &JsonEdits(f, fix))?;
        map.serialize_entry("message", &fix.message)?;
        if let Some(cell) = &fix.cell {
            map.serialize_entry("new_cell", cell)?;
        }
        map.end()
    }
}

struct JsonEdits<'a>(&'a Shown, &'a gpulens_diagnostics::Fix);

impl serde::Serialize for JsonEdits<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        struct Edit<'a>(Option<usize>, (usize, usize), (usize, usize), &'a str);
        impl serde::Serialize for Edit<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let Edit(cell, (l1, c1), (l2, c2), text) = *self;
                let mut map = serializer.serialize_map(None)?;
                if let Some(cell) = cell {
                    map.serialize_entry("cell", &cell)?;
                }
                map.serialize_entry("column", &c1)?;
                map.serialize_entry("end_column", &c2)?;
                map.serialize_entry("end_line", &l2)?;
                map.serialize_entry("line", &l1)?;
                map.serialize_entry("text", text)?;
                map.end()
            }
        }
        let JsonEdits(f, fix) = *self;
        serializer.collect_seq(
            fix.edits.iter().zip(&f.edits).enumerate().map(|(i, (e, (a, b)))| Edit(f.edit_cells.get(i).copied(), *a, *b, &e.text)),
        )
    }
}

/// A rule as `gpulens rules --json` prints it.
pub fn rule_json(r: &Rule) -> Value {
    let lib = Knowledge::get().library(r.library);
    json!({
        "code": r.code, "name": r.name, "library": r.library, "severity": r.severity, "summary": r.summary,
        "kind": match r.kind { Kind::Advice => "advice", Kind::GpuCode => "gpu-code" }, "in_tests": r.in_tests, "fix": r.fix,
        "what": r.what(), "why": r.why(), "example": r.example(), "use_instead": r.use_instead(),
        "docs": lib.map(|l| l.docs.as_str()),
    })
}

fn sarif_level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info | Severity::Hint => "note",
    }
}

fn uri(path: &str) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

pub fn sarif(out: &mut impl Write, reports: &[FileReport], problems: &[Problem]) -> io::Result<()> {
    let knowledge = Knowledge::get();
    let rules: Vec<Value> = RULES
        .iter()
        .map(|r| {
            let docs = knowledge.library(r.library).map(|l| l.docs.clone());
            json!({
                "id": r.code,
                "name": r.name,
                "shortDescription": {"text": r.summary},
                "fullDescription": {"text": format!("{} {}", r.what(), r.why())},
                "help": {
                    "text": format!("{}\n\nExample:\n{}\n\nUse instead:\n{}", r.why(), r.example(), r.use_instead()),
                    "markdown": format!("{}\n\n**Example**\n```python\n{}\n```\n\n**Use instead**\n```python\n{}\n```", r.why(), r.example(), r.use_instead()),
                },
                "helpUri": docs,
                "defaultConfiguration": {"level": sarif_level(r.severity)},
                "properties": {"library": r.library, "tags": ["performance", "gpu", r.library]},
            })
        })
        .collect();
    let notifications: Vec<Value> = problems
        .iter()
        .map(|p| {
            let mut n = json!({"level": "error", "message": {"text": p.message}});
            if !p.path.is_empty() {
                n["locations"] = json!([{"physicalLocation": {"artifactLocation": {"uri": uri(&p.path)}}}]);
            }
            n
        })
        .collect();
    // (Keys in the order `json!` gave them: sorted.)
    #[derive(serde::Serialize)]
    struct Run<'a> {
        #[serde(rename = "columnKind")]
        column_kind: &'static str,
        invocations: Value,
        results: EachFinding<'a>,
        tool: Value,
    }
    #[derive(serde::Serialize)]
    struct Document<'a> {
        #[serde(rename = "$schema")]
        schema: &'static str,
        runs: [Run<'a>; 1],
        version: &'static str,
    }
    let run = Run {
        column_kind: "unicodeCodePoints",
        invocations: json!([{
            "executionSuccessful": problems.is_empty(),
            "toolExecutionNotifications": notifications,
        }]),
        results: EachFinding(reports, sarif_result),
        tool: json!({"driver": {
            "name": "gpulens",
            "version": env!("CARGO_PKG_VERSION"),
            "rules": rules,
        }}),
    };
    let doc = Document { schema: "https://json.schemastore.org/sarif-2.1.0.json", runs: [run], version: "2.1.0" };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

fn sarif_result(r: &FileReport, f: &Shown) -> Value {
    let ((line, column), (end_line, end_column)) = (f.start, f.end);
    let mut region = json!({"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column});
    // In a notebook, the region is in a cell (SARIF has no field for it).
    if let Some(cell) = f.cell {
        region["properties"] = json!({"cell": cell});
    }
    let f = &f.record;
    let index = f.code as usize;
    let level = sarif_level(f.severity);
    json!({
        "ruleId": f.code,
        "ruleIndex": index,
        "level": level,
        "message": {"text": f.message, "markdown": if f.details.is_empty() { f.message.clone() } else { format!("{}\n\n{}", f.message, f.details) }},
        "locations": [{
            "physicalLocation": {
                "artifactLocation": {"uri": uri(&r.path)},
                "region": region,
            }
        }],
        "properties": {"library": f.library},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_percent_encoded() {
        assert_eq!(uri("src/my file.py"), "src/my%20file.py");
        assert_eq!(uri("数.py"), "%E6%95%B0.py");
    }

    #[test]
    fn every_rule_has_a_sarif_level() {
        for r in RULES {
            assert!(["error", "warning", "note"].contains(&sarif_level(r.severity)));
        }
    }
}
