//! A byte-level outline of Python source, for deciding what to parse.
//!
//! Tree-sitter is the slowest step of checking a large tree of files, and
//! much of a file can be known not to matter before parsing: the bodies of
//! test functions, the insides of long docstrings. [`outline`] finds those
//! with one pass of the [`lex`](crate::lex) reading of logical lines
//! (strings, comments, brackets, line continuations, indentation) and [`parse_excluding`] parses the rest, with
//! every node at its true position in the whole text.
//!
//! The outline is a prediction of what the parser will find. Whoever skips
//! text on its word must check the tree it gets (no syntax errors, the kept
//! definitions where the outline put them) and parse everything when not.

use std::ops::Range;

use tree_sitter::{Point, Tree};

use crate::lex::{self, LineVisitor};

/// A function definition directly in the module or in a class body (at any
/// depth of classes), from its first decorator to the start of the next
/// statement that is not inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefinitionOutline {
    /// From the first decorator (or `def`/`async def`) to where the next
    /// statement at its level or outside it begins (trailing blank and
    /// comment lines included).
    pub range: Range<usize>,
    /// Where the definition's first token (its first decorator's `@`, or
    /// `def`/`async`) starts.
    pub header_start: usize,
    pub name: String,
    /// Some decorator line mentions `fixture`.
    pub fixture: bool,
    /// The class bodies it sits in, innermost last (by the class line's start).
    pub classes: Vec<usize>,
}

/// A class definition directly in the module or in a class body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassOutline {
    /// From its first decorator (or its `class` line) to where the next
    /// statement at its level or outside it begins.
    pub range: Range<usize>,
    /// Where its `class` line starts (how [`DefinitionOutline::classes`] names it).
    pub line_start: usize,
    /// How many statements its body holds (a decorated one counts once).
    pub statements: usize,
    /// The columns its `class` line is indented by.
    pub indent: usize,
    pub decorated: bool,
    pub name: String,
}

/// What [`outline`] finds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outline {
    pub definitions: Vec<DefinitionOutline>,
    /// The classes with a body of their own, in source order.
    pub classes: Vec<ClassOutline>,
    /// Insides of triple-quoted string literals (not f- or t-strings) of at
    /// least [`LONG_STRING`] bytes: between the opening and closing quotes.
    pub long_strings: Vec<Range<usize>>,
    /// The logical lines outside every definition (the module's own code,
    /// class bodies, blocks around them), but decorators.
    pub statements: Vec<Range<usize>>,
    /// For each of `statements`: it sits in a class body (its names are the
    /// class's, which the class's methods don't see).
    pub in_class: Vec<bool>,
    /// For each of `statements`: it ends in `:` outside brackets, strings
    /// and comments (a block's header).
    pub opens_block: Vec<bool>,
    /// Runs of comment-only lines (blank lines between them included, line
    /// breaks too) that a parse can leave out with no node but their
    /// comments changing: see [`LogicalLines::comments`].
    pub comment_runs: Vec<Range<usize>>,
}

/// How long a triple-quoted string must be for its inside to be listed.
pub const LONG_STRING: usize = 200;

/// The outline of `text`, or `None` when its lexical structure is anything
/// but plain (tabs or form feeds in indentation, an unterminated string, an
/// unbalanced bracket, a NUL byte): then nothing should be skipped.
pub fn outline(text: &str) -> Option<Outline> {
    let lines = logical_lines(text)?;
    let mut out = Outline { long_strings: lines.long_strings, comment_runs: lines.comments, ..Outline::default() };
    // Open blocks: (indent of the header line, what it is).
    #[derive(Clone, Copy, PartialEq)]
    enum Block {
        /// Where its line starts, and its index in `classes`.
        Class(usize, usize),
        Definition(usize),
        Other,
    }
    let mut blocks: Vec<(usize, Block)> = Vec::new();
    let mut decorators: Option<(usize, usize, bool)> = None; // (start, indent, fixture)
    // The indentation levels open, as Python's tokenizer keeps them: a line
    // that dedents to no open level is an IndentationError in Python, which
    // tree-sitter can still read without an error, as it guesses, with a
    // block ending where these blocks don't.
    let mut levels: Vec<usize> = vec![0];
    // Whether the line before ends in `:`: the next one must indent, and
    // only such a one may (Python's "unexpected indent" and "expected an
    // indented block"). Tree-sitter reads some such lines without an
    // error, but not as it would with the lines around them left out.
    let mut opened = false;
    for line in &lines.lines {
        let top = *levels.last().expect("level 0 stays");
        if (line.indent > top) != opened {
            return None;
        }
        opened = line.opens_block;
        if line.indent > top {
            levels.push(line.indent);
        } else if line.indent < top {
            while levels.last().is_some_and(|&l| l > line.indent) {
                levels.pop();
            }
            if levels.last() != Some(&line.indent) {
                return None;
            }
        }
        while blocks.last().is_some_and(|(indent, _)| line.indent <= *indent) {
            let (_, block) = blocks.pop().expect("checked");
            match block {
                Block::Definition(i) => out.definitions[i].range.end = line.start,
                Block::Class(_, i) => out.classes[i].range.end = line.start,
                Block::Other => {}
            }
        }
        // Only the module and class bodies hold definitions the caller can skip.
        let container = blocks.iter().all(|(_, b)| matches!(b, Block::Class(..)));
        let outside = !blocks.iter().any(|(_, b)| matches!(b, Block::Definition(_)));
        if outside && line.first != First::Decorator && !(line.first == First::Def && container && line.compound) {
            out.statements.push(line.start..line.end);
            out.in_class.push(blocks.iter().any(|(_, b)| matches!(b, Block::Class(..))));
            out.opens_block.push(line.opens_block);
        }
        if let Some(&(_, Block::Class(_, class))) = blocks.last() {
            // A decorator and what it decorates are one statement.
            if decorators.is_none() {
                out.classes[class].statements += 1;
            }
        }
        match line.first {
            First::Decorator => {
                if decorators.is_none() {
                    decorators = Some((line.start, line.indent, false));
                }
                if let Some(d) = decorators.as_mut() {
                    d.2 |= text[line.start..line.end].contains("fixture");
                }
                continue;
            }
            First::Def if container && line.compound => {
                let (start, fixture) = match decorators.take() {
                    Some((start, indent, fixture)) if indent == line.indent => (start, fixture),
                    Some(_) => return None,
                    None => (line.start, false),
                };
                let header_start = start + line.indent;
                let classes = blocks
                    .iter()
                    .filter_map(|(_, b)| if let Block::Class(c, _) = b { Some(*c) } else { None })
                    .collect();
                out.definitions.push(DefinitionOutline {
                    range: start..text.len(),
                    header_start,
                    name: line.name.clone(),
                    fixture,
                    classes,
                });
                if line.opens_block {
                    blocks.push((line.indent, Block::Definition(out.definitions.len() - 1)));
                } else {
                    out.definitions.last_mut().expect("pushed").range.end = line.end;
                }
            }
            First::Class if container && line.opens_block => {
                let (start, decorated) = match decorators {
                    Some((start, indent, _)) if indent == line.indent => (start, true),
                    Some(_) => (line.start, true),
                    None => (line.start, false),
                };
                out.classes.push(ClassOutline {
                    range: start..text.len(),
                    line_start: line.start,
                    statements: 0,
                    indent: line.indent,
                    decorated,
                    name: line.name.clone(),
                });
                blocks.push((line.indent, Block::Class(line.start, out.classes.len() - 1)));
            }
            _ => {
                if line.opens_block {
                    blocks.push((line.indent, Block::Other));
                }
            }
        }
        decorators = None;
    }
    if opened {
        return None;
    }
    while let Some((_, block)) = blocks.pop() {
        match block {
            Block::Definition(i) => out.definitions[i].range.end = text.len(),
            Block::Class(_, i) => out.classes[i].range.end = text.len(),
            Block::Other => {}
        }
    }
    Some(out)
}

/// Parses `text` without the byte ranges in `skip` (sorted, disjoint, each
/// on character boundaries, and each either starting at a line's start or
/// indentation, or the inside of a string just after its opening quotes):
/// the parser reads the text as if they were not there, and every node
/// keeps its position in the whole of `text`.
///
/// The kept parts are parsed as one text, then the gaps put back into the
/// tree as edits that move what follows them. (Not tree-sitter's included
/// ranges: the lexer looks for its range from the first one at every
/// token it starts, a cost that grows with the gaps.)
pub fn parse_excluding(text: &str, skip: &[Range<usize>]) -> Tree {
    if skip.is_empty() {
        return crate::parse(text);
    }
    // Points of offsets asked in order: line breaks counted from the last.
    let bytes = text.as_bytes();
    let (mut row, mut counted) = (0, 0);
    let mut point = |offset: usize| {
        row += memchr::memchr_iter(b'\n', &bytes[counted..offset]).count();
        counted = offset;
        let line_start = memchr::memrchr(b'\n', &bytes[..offset]).map_or(0, |i| i + 1);
        Point { row, column: offset - line_start }
    };
    let mut condensed = Vec::with_capacity(text.len() - skip.iter().map(|s| s.len()).sum::<usize>() + skip.len());
    let mut gaps: Vec<Gap> = Vec::with_capacity(skip.len());
    let mut at = 0;
    for s in skip.iter().filter(|s| s.end > s.start) {
        debug_assert!(s.start >= at, "the ranges to skip are sorted and disjoint");
        condensed.extend_from_slice(&bytes[at..s.start]);
        // A string's inside is kept as one byte of content, replaced by the
        // whole of it below: put back as an insertion just after the
        // opening quotes, it would widen them instead.
        let inside = s.start > 0 && matches!(bytes[s.start - 1], b'"' | b'\'');
        if inside {
            condensed.push(b'x');
        }
        let start_point = point(s.start);
        gaps.push(Gap { start: s.start, start_point, end: s.end, end_point: point(s.end), inside });
        at = s.end;
    }
    condensed.extend_from_slice(&bytes[at..]);
    let mut tree = crate::document::parse_bytes(&condensed);
    // (In order: every gap before the one put back is back already.)
    for gap in gaps {
        let old_end = if gap.inside {
            (gap.start + 1, Point { row: gap.start_point.row, column: gap.start_point.column + 1 })
        } else {
            (gap.start, gap.start_point)
        };
        tree.edit(&tree_sitter::InputEdit {
            start_byte: gap.start,
            old_end_byte: old_end.0,
            new_end_byte: gap.end,
            start_position: gap.start_point,
            old_end_position: old_end.1,
            new_end_position: gap.end_point,
        });
    }
    tree
}

/// A part of the text [`parse_excluding`] leaves out.
struct Gap {
    start: usize,
    start_point: Point,
    end: usize,
    end_point: Point,
    /// The inside of a string.
    inside: bool,
}

/// How a logical line begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum First {
    Decorator,
    Def,
    Class,
    Other,
}

#[derive(Debug)]
struct LogicalLine {
    /// Start of its first physical line (indentation included).
    start: usize,
    /// Past its last byte, line break included.
    end: usize,
    indent: usize,
    first: First,
    /// The name after `def`/`class`.
    name: String,
    /// Ends with a `:` that opens an indented block (nothing after it on the line).
    opens_block: bool,
    /// A `def` header (followed by a name and `(`).
    compound: bool,
}

/// What [`logical_lines`] reads.
struct LogicalLines {
    lines: Vec<LogicalLine>,
    /// The insides of long plain triple-quoted strings.
    long_strings: Vec<Range<usize>>,
    /// Runs of comment-only lines between two logical lines (from the
    /// first's start to past the last's line break) whose every comment is
    /// indented no deeper than the line after the run, none mentioning
    /// `gpulens`. Left out of a parse, such a run changes no node but its
    /// comments: tree-sitter-python puts a comment at a block's end inside
    /// the block when it is indented as deep as the block (widening it),
    /// but these are never deeper than what follows them, so every block
    /// closing after them closes before them too. (Not the runs before the
    /// first logical line or after the last, which widen the module.)
    comments: Vec<Range<usize>>,
}

/// Splits `text` into logical lines (skipping blank and comment-only lines)
/// and lists the insides of long plain triple-quoted strings.
fn logical_lines(text: &str) -> Option<LogicalLines> {
    let b = text.as_bytes();
    // Old Mac line ends (a `\r` alone) end lines wherever they stand, in
    // comments too, where the lexer reads only `\n`: leave them to the parser.
    if memchr::memchr_iter(b'\r', b).any(|i| b.get(i + 1) != Some(&b'\n')) {
        return None;
    }
    // tree-sitter reads a NUL byte as the end of the text wherever it
    // stands, a string's inside too, and what its error recovery then makes
    // of the rest depends on what else it reads (what was left out, say).
    // CPython rejects the byte anywhere.
    if memchr::memchr(0, b).is_some() {
        return None;
    }
    let mut reader = Reader { b, out: LogicalLines { lines: Vec::new(), long_strings: Vec::new(), comments: Vec::new() }, run: None };
    lex::logical_lines(b, &mut reader)?;
    Some(reader.out)
}

/// What [`logical_lines`] keeps of the lexer's lines.
struct Reader<'b> {
    b: &'b [u8],
    out: LogicalLines,
    /// The comment-only lines since the last logical line: where the first
    /// starts, where the last ends, the deepest indentation.
    run: Option<(usize, usize, usize)>,
}

impl LineVisitor for Reader<'_> {
    // (Indentation is compared in bytes.)
    const SPACES_ONLY: bool = true;

    fn line(&mut self, line: &lex::Line) {
        let indent = line.indent();
        if let Some((first, past, deepest)) = self.run.take() {
            // (One search of the run for a suppression: the run is only
            // comments and blank lines.)
            if !self.out.lines.is_empty() && deepest <= indent && memchr::memmem::find(&self.b[first..past], b"gpulens").is_none() {
                self.out.comments.push(first..past);
            }
        }
        let (first, name, compound) = classify(&self.b[line.code..line.end]);
        self.out.lines.push(LogicalLine {
            start: line.start,
            end: line.end,
            indent,
            first,
            name,
            opens_block: line.opens_block,
            compound,
        });
    }

    fn comment_line(&mut self, start: usize, hash: usize, past: usize) {
        let indent = hash - start;
        self.run = Some(match self.run {
            Some((first, _, deepest)) => (first, past, deepest.max(indent)),
            None => (start, past, indent),
        });
    }

    fn string(&mut self, literal: &lex::Literal) {
        if literal.triple && !literal.formatted && literal.close - literal.open >= LONG_STRING {
            self.out.long_strings.push(literal.inside());
        }
    }
}

/// What a logical line (from its first non-blank byte) begins with.
fn classify(line: &[u8]) -> (First, String, bool) {
    if line.first() == Some(&b'@') {
        return (First::Decorator, String::new(), false);
    }
    let word = |s: &[u8]| -> (usize, usize) {
        let end = s.iter().position(|c| !(c.is_ascii_alphanumeric() || *c == b'_' || *c >= 0x80)).unwrap_or(s.len());
        (0, end)
    };
    let (_, end) = word(line);
    let mut rest = &line[end..];
    let mut keyword = &line[..end];
    if keyword == b"async" {
        let skipped = rest.iter().take_while(|c| **c == b' ').count();
        if skipped == 0 {
            return (First::Other, String::new(), false);
        }
        rest = &rest[skipped..];
        let (_, e) = word(rest);
        keyword = &rest[..e];
        rest = &rest[e..];
    }
    let kind = match keyword {
        b"def" => First::Def,
        b"class" => First::Class,
        _ => return (First::Other, String::new(), false),
    };
    let skipped = rest.iter().take_while(|c| **c == b' ').count();
    if skipped == 0 {
        return (First::Other, String::new(), false);
    }
    rest = &rest[skipped..];
    let (_, e) = word(rest);
    if e == 0 {
        return (First::Other, String::new(), false);
    }
    let name = String::from_utf8_lossy(&rest[..e]).into_owned();
    let after = rest[e..].iter().find(|c| **c != b' ');
    let compound = match kind {
        First::Def => after == Some(&b'(') || after == Some(&b'['),
        _ => true,
    };
    (kind, name, compound)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(o: &Outline) -> Vec<(&str, usize, usize)> {
        o.definitions.iter().map(|d| (d.name.as_str(), d.range.start, d.range.end)).collect()
    }

    #[test]
    fn class_ranges_from_decorators_to_the_next_statement() {
        let text = "@dataclass\nclass A:\n    class B:\n        def f(self): pass\n    x = 1\n\nclass C: pass\ny = 2\nclass D:\n    def g(self):\n        return 1\n";
        let o = outline(text).unwrap();
        let found: Vec<(&str, &str, usize, bool)> =
            o.classes.iter().map(|c| (c.name.as_str(), &text[c.range.clone()], c.indent, c.decorated)).collect();
        assert_eq!(
            found,
            [
                ("A", "@dataclass\nclass A:\n    class B:\n        def f(self): pass\n    x = 1\n\n", 0, true),
                ("B", "    class B:\n        def f(self): pass\n", 4, false),
                ("D", "class D:\n    def g(self):\n        return 1\n", 0, false),
            ]
        );
        assert_eq!(o.classes.iter().map(|c| c.statements).collect::<Vec<_>>(), [2, 1, 1]);
    }

    #[test]
    fn definitions_in_module_and_classes_only() {
        let text = "import x\n\n@dec(\n  1)\ndef a(p):\n    '''doc'''\n    def inner():\n        pass\n    return 1\n\n# c\nclass K:\n    x = 1\n    async def m(self): return 2\n    def n(self):\n        if x:\n            pass\n\nif y:\n    def hidden(): pass\n";
        let o = outline(text).unwrap();
        let found = names(&o);
        assert_eq!(found.iter().map(|f| f.0).collect::<Vec<_>>(), ["a", "m", "n"]);
        assert_eq!(&text[found[0].1..found[0].2], "@dec(\n  1)\ndef a(p):\n    '''doc'''\n    def inner():\n        pass\n    return 1\n\n# c\n");
        assert_eq!(&text[found[1].1..found[1].2], "    async def m(self): return 2\n");
        assert_eq!(&text[found[2].1..found[2].2], "    def n(self):\n        if x:\n            pass\n\n");
        assert_eq!((o.classes[0].line_start, o.classes[0].statements), (text.find("class K").unwrap(), 3));
        assert_eq!(o.classes.len(), 1);
        assert_eq!(&text[o.classes[0].range.clone()], &text[text.find("class K").unwrap()..text.find("if y:").unwrap()]);
        assert_eq!((o.classes[0].name.as_str(), o.classes[0].indent, o.classes[0].decorated), ("K", 0, false));
        let statements: Vec<(&str, bool)> = o.statements.iter().zip(&o.in_class).map(|(r, c)| (text[r.clone()].trim(), *c)).collect();
        assert_eq!(
            statements,
            [("import x", false), ("class K:", false), ("x = 1", true), ("if y:", false), ("def hidden(): pass", false)]
        );
    }

    #[test]
    fn strings_and_brackets_do_not_end_lines() {
        let long = "x".repeat(LONG_STRING);
        let text = format!(
            "s = '''\ndef fake():\n'''\nt = (\n1,\n)\nu = f\"{{'}}'}}\" + f'{{x[\"a\"]}}'\ndef real():\n    \"\"\"{long}\"\"\"\n    return r'\\''\n"
        );
        let o = outline(&text).unwrap();
        assert_eq!(names(&o).iter().map(|f| f.0).collect::<Vec<_>>(), ["real"]);
        assert_eq!(o.long_strings.len(), 1);
        assert_eq!(&text[o.long_strings[0].clone()], long);
    }

    #[test]
    fn plain_structure_only() {
        assert!(outline("def f():\n\treturn 1\n").is_none());
        assert!(outline("x = 'open\n").is_none());
        assert!(outline("x = (1\n").is_none());
        assert!(outline("x = 1)\n").is_none());
        assert!(outline("x = 'a\0b'\n").is_none(), "a NUL byte inside a string too");
        // A dedent to no open level: Python rejects it, tree-sitter guesses.
        assert!(outline("def f(x):\n for i in x:\n    y = i\n  return x\n").is_none());
        // An indent after a line that opens no block, and none after one
        // that does (a header cut short or lost its colon: `def f(x)X`).
        assert!(outline("def f(x)X\n    return x\n").is_none());
        assert!(outline("x = 1\n    y = 2\n").is_none());
        assert!(outline("    x = 1\n").is_none());
        assert!(outline("if x:\ny = 2\n").is_none());
        assert!(outline("class A:\n").is_none());
        // A colon inside brackets or a comment after it changes nothing.
        assert!(outline("y = x[1:]\nif x:  # why\n    pass\n").is_some());
    }

    #[test]
    fn parsing_without_ranges_keeps_positions() {
        let text = "import numpy as np\n\ndef test_a():\n    np.sort(x)\n\ndef b():\n    return np.fft.fft(y)\n";
        let o = outline(text).unwrap();
        let skip = vec![o.definitions[0].range.clone()];
        let tree = parse_excluding(text, &skip);
        let root = tree.root_node();
        assert!(!root.has_error(), "{}", root.to_sexp());
        let kinds: Vec<(&str, usize)> =
            (0..root.named_child_count() as u32).map(|i| root.named_child(i).unwrap()).map(|n| (n.kind(), n.start_byte())).collect();
        assert_eq!(kinds, [("import_statement", 0), ("function_definition", text.find("def b").unwrap())]);
    }

    /// Every node's kind and place (bytes and points), in order.
    fn places(tree: &Tree) -> Vec<(String, Range<usize>, Point, Point)> {
        crate::preorder(tree.root_node())
            .map(|n| (n.kind().to_string(), n.byte_range(), n.start_position(), n.end_position()))
            .collect()
    }

    #[test]
    fn the_gaps_put_back_leave_every_other_node_where_a_whole_parse_does() {
        let doc = format!("\"\"\"{}\n    Returns y.\n    \"\"\"", "Sums x, in many words. ".repeat(12));
        let text = format!(
            "import numpy as np\n\n\ndef a(x):\n    return np.sort(x)\n\n\nclass K:\n    def b(self, y):  # é\n        {doc}\n        z = np.fft.fft(y); return z\n\n    def c(self):\n        pass\n\nw = a([3, 1])\n"
        );
        let o = outline(&text).unwrap();
        assert_eq!(o.long_strings.len(), 1);
        // The function `a` and the docstring's inside.
        let skip = vec![o.definitions[0].range.clone(), o.long_strings[0].clone()];
        let tree = parse_excluding(&text, &skip);
        assert!(!tree.root_node().has_error(), "{}", tree.root_node().to_sexp());
        // (The docstring's inside stands as one piece of content: what a
        // whole parse has there too.)
        let outside = |r: &Range<usize>| r.end <= skip[0].start || r.start >= skip[0].end;
        let whole: Vec<_> = places(&crate::parse(&text)).into_iter().filter(|p| outside(&p.1)).collect();
        let part: Vec<_> = places(&tree).into_iter().filter(|p| outside(&p.1)).collect();
        assert_eq!(part, whole);
        assert!(part.iter().any(|p| p.0 == "string_content" && p.1 == skip[1]));
    }

    #[test]
    fn comment_runs_are_those_no_block_depends_on() {
        let text = "# before everything\nimport numpy as np\n# between statements\n\n# still the same run\nx = 1\n\n\ndef f(a):\n    # above the loop\n    for i in a:\n        y = i\n        # as deep as the loop's body, which it would widen\n    return y\n# at the margin\ndef g():\n    pass\n    # gpulens: ignore[CUPY001]\n    pass\n# after everything\n";
        let o = outline(text).unwrap();
        let runs: Vec<&str> = o.comment_runs.iter().map(|r| &text[r.clone()]).collect();
        assert_eq!(runs, ["# between statements\n\n# still the same run\n", "    # above the loop\n", "# at the margin\n"]);
        // Left out, they change no node but their comments.
        let without_comments = |tree: &Tree| places(tree).into_iter().filter(|p| p.0 != "comment").collect::<Vec<_>>();
        assert_eq!(without_comments(&parse_excluding(text, &o.comment_runs)), without_comments(&crate::parse(text)));
        // The deeper one would not: the loop would end before it.
        let deeper = text.find("        # as deep").unwrap();
        let with_it = [o.comment_runs[1].clone(), deeper..text.find("    return").unwrap()];
        assert_ne!(without_comments(&parse_excluding(text, &with_it)), without_comments(&crate::parse(text)));
    }
}
