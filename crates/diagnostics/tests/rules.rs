//! Snapshot tests: every `fixtures/*.py` is checked with default settings and
//! the whole output is compared with `snapshots/rules__<name>.snap`. A new
//! case is a new fixture file; review changes with `cargo insta review`
//! (or accept them with `INSTA_UPDATE=always`).

use gpulens_diagnostics::{check, Settings};
use gpulens_gpu::GpuProfile;
use gpulens_syntax::{LineIndex, PositionEncoding};

fn render(text: &str) -> String {
    let tree = gpulens_syntax::parse(text);
    let findings = check(text, &tree, &Settings::default(), &GpuProfile::none());
    let index = LineIndex::new(text);
    let mut out = String::new();
    for f in &findings {
        let start = index.position(text, f.range.start, PositionEncoding::Utf32);
        let end = index.position(text, f.range.end, PositionEncoding::Utf32);
        let source = &text[index.line_range(text, start.line as usize)];
        out.push_str(&format!(
            "{}:{}-{}:{} {} {} {}\n  | {}\n  = {}\n\n",
            start.line + 1,
            start.character + 1,
            end.line + 1,
            end.character + 1,
            f.code,
            f.library,
            f.severity.as_str(),
            source.trim_end(),
            f.message
        ));
    }
    if out.is_empty() {
        out.push_str("(no findings)\n");
    }
    out
}

#[test]
fn fixtures() {
    insta::glob!("fixtures/*.py", |path| {
        let text = std::fs::read_to_string(path).unwrap();
        insta::assert_snapshot!(render(&text));
    });
}
