//! `# gpulens: ignore[CODE]` comments: which findings they silence.

use std::ops::Range;

use super::*;

/// A finding is suppressed by `# gpulens: ignore[…]` on its first or last
/// line, or on a line that continues either of them with a backslash.
pub(crate) fn is_suppressed(module: &Module<'_>, text: &str, finding: &Finding) -> bool {
    if module.suppressions.is_empty() {
        return false;
    }
    let lines = [logical_line(text, finding.range.start), logical_line(text, finding.range.end)];
    module.suppressions.iter().any(|s| {
        lines.iter().any(|l| l.contains(&s.offset))
            && (s.codes.is_empty() || s.codes.iter().any(|c| matches_code(c, finding.code.as_str())))
    })
}

/// The line holding `offset`, extended over backslash continuations.
pub(crate) fn logical_line(text: &str, offset: usize) -> Range<usize> {
    let bytes = text.as_bytes();
    let offset = offset.min(bytes.len());
    let start = bytes[..offset].iter().rposition(|&b| b == b'\n' || b == b'\r').map_or(0, |i| i + 1);
    let mut end = offset;
    loop {
        end = bytes[end..].iter().position(|&b| b == b'\n' || b == b'\r').map_or(bytes.len(), |i| end + i);
        if end > start && end < bytes.len() && bytes[end - 1] == b'\\' {
            // Continued: skip the line break (CRLF too) and take the next line.
            end += if bytes[end] == b'\r' && bytes.get(end + 1) == Some(&b'\n') { 2 } else { 1 };
            continue;
        }
        return start..end;
    }
}
