use super::*;

/// The comments and strings of `text`, as text; `None` where the reading gives up.
fn pieces(text: &str) -> Option<Vec<&str>> {
    let mut out = Vec::new();
    strings_and_comments(text.as_bytes(), |p| out.push(&text[p.range()])).then_some(out)
}

#[test]
fn strings_and_comments_in_a_table() {
    let table: &[(&str, Option<&[&str]>)] = &[
        // Prefixes, either case, and letters that are no prefix.
        ("x = rb'a' + F\"b\" + Rb'''c'''", Some(&["rb'a'", "F\"b\"", "Rb'''c'''"])),
        ("return'x' or u'y'", Some(&["'x'", "u'y'"])),
        ("name'x'", Some(&["'x'"])),
        // Escaped quotes, in raw strings too.
        (r#"a = 'it\'s' + r"\"" "#, Some(&[r"'it\'s'", r#"r"\"""#])),
        // f-strings: `{{` is text, fields hold strings with any quotes
        // and nested fields.
        ("f'{{' + f\"{x['a']}\" + f'{y:{w}}'", Some(&["f'{{'", "f\"{x['a']}\"", "f'{y:{w}}'"])),
        ("f\"{x[\"a\"]}\" # done", Some(&["f\"{x[\"a\"]}\"", "# done"])),
        ("f'{\"}\"}' t'{a!r}'", Some(&["f'{\"}\"}'", "t'{a!r}'"])),
        ("f'''{x\n}'''", Some(&["f'''{x\n}'''"])),
        // A comment holding quotes, a string holding `#`.
        ("x = 1  # it's \"quoted\"\ny = '#'", Some(&["# it's \"quoted\"", "'#'"])),
        // CRLF: a comment ends before the `\n`, keeping the `\r`.
        ("x = 1 # c\r\ny = 'a'\r\n", Some(&["# c\r", "'a'"])),
        // A backslash line break inside a one-quote string continues it.
        ("s = 'a\\\nb'", Some(&["'a\\\nb'"])),
        // Unterminated: at the line's end, at the text's end, after a
        // backslash; and a field the reading gives up on.
        ("x = 'open\ny = 1", None),
        ("x = '''open", None),
        ("x = 'a\\", None),
        ("f'{a\\n}'", None),
        ("f'{x:\"^9}'", None),
    ];
    for (text, expected) in table {
        assert_eq!(pieces(text).as_deref(), *expected, "{text:?}");
    }
}

#[test]
fn nested_literals_are_told_innermost_first() {
    let text = "f'{g(\"a\", f\"{b'c'}\")}'";
    let mut seen = Vec::new();
    let outer = scan_string(text.as_bytes(), 1, &mut |l: &Literal| seen.push(&text[l.range()])).unwrap();
    assert_eq!(seen, ["\"a\"", "b'c'", "f\"{b'c'}\""]);
    assert_eq!((outer.start, outer.end, outer.formatted, outer.triple), (0, text.len(), true, false));
    assert_eq!(&text[outer.inside()], "{g(\"a\", f\"{b'c'}\")}");
}

/// Collects what [`logical_lines`] tells.
#[derive(Default)]
struct Collect<'t> {
    text: &'t str,
    lines: Vec<(usize, &'t str, bool)>,
    comments: Vec<&'t str>,
    strings: Vec<&'t str>,
}

impl<'t> LineVisitor for Collect<'t> {
    fn line(&mut self, line: &Line) {
        self.lines.push((line.indent(), &self.text[line.code..line.stop], line.opens_block));
        assert!(line.stop <= line.end && line.code <= line.stop);
    }
    fn comment_line(&mut self, start: usize, hash: usize, end: usize) {
        assert!(start <= hash);
        self.comments.push(&self.text[hash..end]);
    }
    fn string(&mut self, literal: &Literal) {
        self.strings.push(&self.text[literal.range()]);
    }
}

fn lines(text: &str) -> Option<Collect<'_>> {
    let mut c = Collect { text, ..Default::default() };
    logical_lines(text.as_bytes(), &mut c)?;
    Some(c)
}

#[test]
fn logical_lines_in_a_table() {
    type Expected<'a> = Option<&'a [(usize, &'a str, bool)]>;
    let table: &[(&str, Expected)] = &[
        ("x = 1\n\n  \nif x:\n    y = 2\n", Some(&[(0, "x = 1", false), (0, "if x:", true), (4, "y = 2", false)])),
        // A backslash continues a line outside brackets and inside them.
        ("x = 1 + \\\n    2\ny = (1,\\\n 2)\n", Some(&[(0, "x = 1 + \\\n    2", false), (0, "y = (1,\\\n 2)", false)])),
        // Brackets, strings and comments hold line breaks and colons.
        ("d = {1:\n 2}  # a:\ns = '''\n:'''\n", Some(&[(0, "d = {1:\n 2}  # a:", false), (0, "s = '''\n:'''", false)])),
        ("if x:  # why\n    pass", Some(&[(0, "if x:  # why", true), (4, "pass", false)])),
        ("y = x[1:]\nelse:\n", Some(&[(0, "y = x[1:]", false), (0, "else:", true)])),
        // CRLF: the line stops before the `\r`.
        ("if a:\r\n    b = 1\r\n", Some(&[(0, "if a:", true), (4, "b = 1", false)])),
        // Tabs and form feeds count a byte each.
        ("if a:\n\tb\n\x0c c\n", Some(&[(0, "if a:", true), (1, "b", false), (2, "c", false)])),
        // Unbalanced brackets, unterminated strings.
        ("x = (1\n", None),
        ("x = 1)\n", None),
        ("x = 'a\n", None),
    ];
    for (text, expected) in table {
        let found = lines(text).map(|c| c.lines);
        assert_eq!(found.as_deref(), *expected, "{text:?}");
    }
}

#[test]
fn comment_lines_and_strings_are_told() {
    let text = "# head 'q'\nx = f'{\"a\"}'  # tail\n    # indented\ny = r'''b'''\n";
    let c = lines(text).unwrap();
    assert_eq!(c.comments, ["# head 'q'\n", "# indented\n"]);
    assert_eq!(c.strings, ["\"a\"", "f'{\"a\"}'", "r'''b'''"]);
    assert_eq!(c.lines.len(), 2);
}

#[test]
fn spaces_only_gives_up_at_a_tab_in_any_indentation() {
    struct Strict;
    impl LineVisitor for Strict {
        const SPACES_ONLY: bool = true;
        fn line(&mut self, _: &Line) {}
    }
    for text in ["if a:\n\tb\n", "x = 1\n\t\ny = 2\n", "  \t# c\n", "\x0cx\n"] {
        assert_eq!(logical_lines(text.as_bytes(), &mut Strict), None, "{text:?}");
    }
    // Not inside brackets (no indentation there).
    assert_eq!(logical_lines(b"x = (1,\n\t2)\n", &mut Strict), Some(()));
}

#[test]
fn names_are_runs_of_name_bytes_not_starting_with_a_digit() {
    let mut found = Vec::new();
    for_each_name("x1 = 2y + _z.é(3) # w", |n| found.push(n));
    assert_eq!(found, ["x1", "_z", "é", "w"]);
}

proptest::proptest! {
    /// The run skipped sixteen bytes at a time ends where, and holds a
    /// plain byte when, a byte at a time says so: wherever in a block the
    /// run ends, and for every kind of byte.
    #[test]
    fn a_run_ends_where_one_byte_at_a_time_says(
        // (Mostly bytes a run passes over, so that runs cross blocks.)
        bytes in proptest::collection::vec(proptest::prop_oneof![
            12 => proptest::sample::select(vec![b' ', b'\t', b'\r', 0x0c]),
            4 => proptest::sample::select(vec![b'a', b'_', 0xc3, b'=', b'.']),
            1 => proptest::sample::select(vec![b':', b'(', b'}', b'#', b'"', b'\\', b'\n', 0]),
        ], 0..80),
        start in 0usize..80,
    ) {
        let start = start.min(bytes.len());
        let mut end = start;
        let mut plain = false;
        while end < bytes.len() && BYTE_CLASS[bytes[end] as usize] <= BLANK {
            plain |= BYTE_CLASS[bytes[end] as usize] == PLAIN;
            end += 1;
        }
        proptest::prop_assert_eq!(skip_run(&bytes, start), (end, plain));
    }
}
