//! The rule registry. A rule is declared once, beside the code that raises
//! it, with [`declare_rule!`]: its documentation is its doc comment (the page
//! `gpulens explain` prints and hover shows), and its metadata (library,
//! default severity, what kind of rule it is, whether it applies in tests,
//! moves to callers or has a fix) are its fields. [`register!`] below lists
//! every rule once, in the order `gpulens rules` prints them, and makes the
//! [`Code`] enum the rest of the crate uses instead of strings.

use std::sync::OnceLock;

use crate::Severity;

/// What a rule is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// CPU code that a GPU library would speed up: advice to move it.
    Advice,
    /// A mistake in code that already runs on the GPU.
    GpuCode,
}

/// Whether a finding moves to the callers of the function holding it when
/// they call that function in a loop (the loop is where the work repeats).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Callers {
    /// The finding stays where it is.
    Stay,
    /// An index loop: dropped when the function runs once per element of a
    /// caller's loop (the kernel is the caller's loop, not this one).
    Kernel,
    /// Array work whose data can stay on the GPU across the caller's loop:
    /// the caller's loop is named.
    ArrayWork,
}

#[derive(Debug)]
pub struct Rule {
    pub code: Code,
    /// kebab-case name, e.g. `numpy-on-cupy`.
    pub name: &'static str,
    /// The library the advice is for (knowledge-base id).
    pub library: &'static str,
    pub severity: Severity,
    /// One line.
    pub summary: &'static str,
    pub kind: Kind,
    /// Whether it is reported inside test functions (advice is not: tests
    /// run on small data by design).
    pub in_tests: bool,
    pub callers: Callers,
    /// Whether its findings may carry a fix.
    pub fix: bool,
    /// The rule's doc comment: Markdown with the sections `What it finds`,
    /// `Why`, `Example` and `Use instead`.
    pub doc: &'static str,
}

/// Declares a rule: its doc comment is its documentation, the code is the
/// static's name, and the fields are its metadata.
macro_rules! declare_rule {
    ($(#[doc = $doc:literal])* $vis:vis static $code:ident: Rule { $($field:ident: $value:expr,)* }) => {
        $(#[doc = $doc])*
        $vis static $code: $crate::registry::Rule = $crate::registry::Rule {
            code: $crate::registry::Code::$code,
            doc: concat!($($doc, "\n",)*),
            $($field: $value,)*
        };
    };
}
pub(crate) use declare_rule;

/// Lists every rule once (`CODE in family`, the module of `rules` that
/// declares and raises it): the [`Code`] enum and [`RULES`] come from here.
macro_rules! register {
    ($($code:ident in $family:ident,)*) => {
        /// A rule's code.
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Code {
            $($code,)*
        }

        /// Every rule, in the order `gpulens rules` lists them.
        pub static RULES: &[&Rule] = &[$(&crate::rules::$family::$code,)*];

        impl Code {
            /// The code as users write it (`CUPY001`).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Code::$code => stringify!($code),)*
                }
            }
        }
    };
}

register! {
    CUPY001 in cupy,
    CUPY002 in loops,
    NUMBA001 in loops,
    WARP001 in loops,
    CUDF001 in cudf,
    CUDF002 in cudf,
    CUDF003 in cudf,
    CUDF004 in cudf,
    CUML001 in cuml,
    CUML002 in cuml,
    CUML003 in cuml,
    CUGRAPH001 in cugraph,
    RAFT001 in cupy,
    KVIKIO001 in library_calls,
    CUCIM001 in library_calls,
    CUVS001 in library_calls,
    CUSPATIAL001 in library_calls,
    CUXFILTER001 in library_calls,
    WARP002 in library_calls,
    NUMBA002 in library_calls,
    GPU001 in gpu,
    GPU002 in gpu,
    GPU003 in gpu,
    GPU004 in gpu,
    GPU005 in gpu,
    GPU006 in gpu,
    GPU007 in gpu,
    GPU008 in gpu,
    GPU009 in gpu,
    GPU010 in gpu,
    GPU011 in atomics,
}

impl Code {
    pub fn rule(self) -> &'static Rule {
        RULES[self as usize]
    }

    /// The code written `code` (case-insensitive).
    pub fn parse(code: &str) -> Option<Code> {
        rule(code).map(|r| r.code)
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl serde::Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The rule with this code (case-insensitive).
pub fn rule(code: &str) -> Option<&'static Rule> {
    RULES.iter().copied().find(|r| r.code.as_str().eq_ignore_ascii_case(code))
}

/// A rule's documentation, one field per section of its doc comment.
#[derive(Debug, Default)]
struct Sections {
    what: String,
    why: String,
    example: String,
    use_instead: String,
}

impl Rule {
    /// What it finds (one paragraph).
    pub fn what(&self) -> &'static str {
        &self.sections().what
    }

    /// Why the GPU helps, or why the pattern hurts.
    pub fn why(&self) -> &'static str {
        &self.sections().why
    }

    /// CPU code that raises it.
    pub fn example(&self) -> &'static str {
        &self.sections().example
    }

    /// The GPU version of the example.
    pub fn use_instead(&self) -> &'static str {
        &self.sections().use_instead
    }

    fn sections(&self) -> &'static Sections {
        static ALL: OnceLock<Vec<Sections>> = OnceLock::new();
        &ALL.get_or_init(|| RULES.iter().map(|r| sections(r.doc)).collect())[self.code as usize]
    }
}

/// Reads a doc comment's sections: a paragraph's lines joined by spaces
/// (paragraphs by a blank line), a fenced code block's lines as they are.
fn sections(doc: &str) -> Sections {
    let mut out = Sections::default();
    let mut heading = "";
    let mut lines: Vec<&str> = Vec::new();
    let mut flush = |heading: &str, lines: &mut Vec<&str>| {
        let text = render(lines);
        lines.clear();
        match heading {
            "What it finds" => out.what = text,
            "Why" => out.why = text,
            "Example" => out.example = text,
            "Use instead" => out.use_instead = text,
            _ => {}
        }
    };
    for line in doc.lines() {
        // rustdoc keeps the space after `///`.
        let line = line.strip_prefix(' ').unwrap_or(line);
        if let Some(h) = line.strip_prefix("## ") {
            flush(heading, &mut lines);
            heading = h;
        } else {
            lines.push(line);
        }
    }
    flush(heading, &mut lines);
    out
}

fn render(lines: &[&str]) -> String {
    let start = lines.iter().position(|l| !l.is_empty()).unwrap_or(lines.len());
    let end = lines.iter().rposition(|l| !l.is_empty()).map_or(start, |i| i + 1);
    let lines = &lines[start..end];
    if lines.first().is_some_and(|l| l.starts_with("```")) {
        return lines[1..lines.len().saturating_sub(1).max(1)].join("\n");
    }
    lines.split(|l| l.is_empty()).filter(|p| !p.is_empty()).map(|p| p.join(" ")).collect::<Vec<_>>().join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_prefixed_by_library() {
        let mut seen = std::collections::HashSet::new();
        for (i, r) in RULES.iter().enumerate() {
            assert_eq!(r.code as usize, i, "{} is registered out of order", r.code);
            assert!(seen.insert(r.code), "{} twice", r.code);
            // GPU… rules are about code already on the GPU; the others are named after their library.
            assert!(
                (r.kind == Kind::GpuCode) == r.code.as_str().starts_with("GPU")
                    && (r.kind == Kind::GpuCode || r.code.as_str().starts_with(&r.library.to_ascii_uppercase())),
                "{} vs {}",
                r.code,
                r.library
            );
            assert!(gpulens_knowledge::Knowledge::get().library(r.library).is_some(), "{}", r.library);
        }
    }

    #[test]
    fn every_rule_documents_each_section() {
        for r in RULES {
            for (section, text) in [("What it finds", r.what()), ("Why", r.why()), ("Example", r.example()), ("Use instead", r.use_instead())] {
                assert!(!text.trim().is_empty(), "{}: no `## {section}` in its doc comment", r.code);
            }
        }
    }
}
