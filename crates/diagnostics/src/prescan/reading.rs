//! Reading Python at byte level for the pre-scan: strings and comments
//! blanked in place, logical lines, names, imports, and what an index loop's
//! body does. Sure or silent: where a reading is unsure it says so (`None`,
//! `false`), and the pre-scan then parses.

use std::ops::Range;

use gpulens_syntax::lex::{self, Piece};
pub(crate) use gpulens_syntax::lex::{for_each_name, name_byte};

use super::*;

/// Python's keywords, which no statement binds (soft keywords such as
/// `match` or `type` are names too).
pub(crate) const HARD_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
    "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or",
    "pass", "raise", "return", "try", "while", "with", "yield",
];

/// `code` with the insides of its strings and its comments blanked (the
/// same length, every other byte where it was), or `None` where a string
/// doesn't end in it or is an f-string holding `:=`, which can bind a name.
pub(crate) fn without_strings(code: &str) -> Option<String> {
    blanked(code, |_| {})
}

/// [`without_strings`], telling `seen` each range it blanks.
pub(crate) fn blanked(code: &str, mut seen: impl FnMut(Range<usize>)) -> Option<String> {
    let mut out = code.as_bytes().to_vec();
    let complete = strings_and_comments(code.as_bytes(), |range, _| {
        out[range.clone()].iter_mut().for_each(|b| *b = b' ');
        seen(range);
    });
    complete.then(|| String::from_utf8(out).ok()).flatten()
}

/// Calls `f` with the byte range of every string (its prefix and quotes
/// included) and comment of `code`, in order, and whether it is an f- or
/// t-string; `false` where it can't tell them (the lexer gives up on a
/// string: see [`lex::strings_and_comments`]) or an f-string holds `:=`,
/// which can bind a name.
fn strings_and_comments(bytes: &[u8], mut f: impl FnMut(Range<usize>, bool)) -> bool {
    let mut binds = false;
    let read = lex::strings_and_comments(bytes, |piece| match piece {
        Piece::Comment(range) => f(range, false),
        Piece::String(literal) => {
            binds |= literal.formatted && memchr::memmem::find(&bytes[literal.range()], b":=").is_some();
            f(literal.range(), literal.formatted);
        }
    });
    read && !binds
}

/// `text` with its comments and strings blanked (same length), for reading
/// the names its code uses; f- and t-strings are kept, since their braces
/// hold code. `None` when `text` holds, outside its strings and comments, a
/// character no valid Python has there: error recovery reads past it,
/// perhaps into what the outline left out, so only a whole parse gives what
/// a whole parse gives. (A text whose strings can't be told counts as
/// holding one.)
pub(crate) fn plain_code(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    // Bytes to look at: the stray ASCII ones, `!` (stray but in `!=`),
    // and those past ASCII (stray unless a letter or digit). Written without
    // branches, so that the test of a whole piece below runs on vectors.
    const fn looks(c: u8) -> bool {
        (c == b'$')
            | (c == b'?')
            | (c == b'`')
            | (c == b'!')
            | (c >= 0x7f)
            | ((c < 0x20) & (c != b'\t') & (c != b'\n') & (c != b'\r') & (c != 0x0c))
    }
    const LOOK: [bool; 256] = {
        let mut look = [false; 256];
        let mut c = 0;
        while c < 256 {
            look[c] = looks(c as u8);
            c += 1;
        }
        look
    };
    // Whether `code` holds any byte to look at, told without a branch per
    // byte: most code holds none, and only code that does is read byte by byte.
    let may_look = |b: &[u8]| b.iter().fold(false, |found, &c| found | looks(c));
    let stray = |code: &str| {
        let b = code.as_bytes();
        if !may_look(b) {
            return false;
        }
        let mut i = 0;
        while i < b.len() {
            if LOOK[b[i] as usize] {
                match b[i] {
                    b'!' if b.get(i + 1) == Some(&b'=') => {}
                    0x80.. => {
                        // A character past ASCII (`i` is on a boundary: every
                        // byte before was ASCII or a whole character).
                        let c = code[i..].chars().next().expect("a character");
                        if !c.is_alphanumeric() {
                            return true;
                        }
                        i += c.len_utf8();
                        continue;
                    }
                    _ => return true,
                }
            }
            i += 1;
        }
        false
    };
    // (Built from the text's own pieces and runs of spaces: no copy to
    // blank in place and check again. Every range starts and ends at an
    // ASCII byte: a prefix letter, a quote, `#`, a line break.)
    const SPACES: &str = "                                                                ";
    let mut plain = String::with_capacity(text.len());
    let mut copied = 0;
    let mut at = 0;
    let mut found = false;
    let complete = strings_and_comments(bytes, |range, formatted| {
        found = found || stray(&text[at..range.start]);
        at = range.end;
        if !formatted {
            plain.push_str(&text[copied..range.start]);
            let mut blank = range.len();
            while blank > 0 {
                let n = blank.min(SPACES.len());
                plain.push_str(&SPACES[..n]);
                blank -= n;
            }
            copied = range.end;
        }
    });
    if !complete || found || stray(&text[at..]) {
        return None;
    }
    plain.push_str(&text[copied..]);
    Some(plain)
}

#[cfg(test)]
pub(crate) fn has_stray_characters(text: &str) -> bool {
    plain_code(text).is_none()
}

/// Reads the import statements of `code` (`import a.b as c`, `from a
/// import b as c, d`), calling `bind(local name, qualified target)` for
/// each name bound; `false` when some `import` is not in a form it reads
/// (the caller must then assume the worst). Strings and comments are not
/// read, and a backslash line break is a space. Relative imports bind
/// nothing the rules know, and neither does `from a import *` (the
/// analysis resolves no name through one).
///
/// The pre-scan reads imports from text in three places, each with its own
/// question. This one finds every import in a stretch of code (a statement,
/// a whole function) and what each name it binds refers to.
/// [`import_bindings`] asks whether one module-level statement is a plain
/// import it may leave out of the parse, and which names it binds: stricter
/// (the whole statement, a star import is not plain), and relative imports
/// count there, since they bind names all the same. `imports_gpu_library`
/// reads the raw bytes on purpose (a docstring's example counts: it only
/// over-approximates). All three read strings and comments through the
/// lexer, or deliberately not at all, and the first two share
/// [`import_item`].
pub(crate) fn local_imports<'a>(code: &'a str, bind: &mut impl FnMut(&'a str, String)) -> bool {
    // The code with its strings and comments blanked, and its backslash
    // line breaks: the same length, so offsets carry over.
    let Some(plain) = without_strings(code) else { return false };
    let mut plain = plain.into_bytes();
    let mut i = 0;
    while i < plain.len() {
        if plain[i] == b'\\' {
            let end = match &plain[i + 1..] {
                [b'\r', b'\n', ..] => i + 3,
                [b'\n' | b'\r', ..] => i + 2,
                _ => return false, // a backslash outside a string is only a line break
            };
            plain[i..end].iter_mut().for_each(|b| *b = b' ');
            i = end;
        } else {
            i += 1;
        }
    }
    let Ok(plain) = String::from_utf8(plain) else { return false };
    let mut ok = true;
    let mut offsets = Vec::new();
    for_each_name(&plain, |token| {
        if token == "import" {
            offsets.push(token.as_ptr() as usize - plain.as_ptr() as usize);
        }
    });
    let bytes = plain.as_bytes();
    for at in offsets {
        let line_start = bytes[..at].iter().rposition(|&b| b == b'\n' || b == b'\r').map_or(0, |i| i + 1);
        let head = plain[line_start..at].trim();
        // The names after `import`, to the end of the line or the closing bracket.
        let rest = &plain[at + "import".len()..];
        let open = rest.trim_start_matches([' ', '\t']).starts_with('(');
        let end = if open { rest.find(')') } else { Some(rest.find(['\n', '\r', ';']).unwrap_or(rest.len())) };
        let Some(end) = end else { return false };
        let list = rest[..end].trim().trim_start_matches('(');
        // Nothing after `import` on its line (a syntax error, which the
        // parser may mend by reading the next line as the names).
        if list.trim().is_empty() {
            return false;
        }
        let from = match head.strip_prefix("from ").map(str::trim) {
            Some(module) => match module {
                m if m.starts_with('.') => continue,
                m if is_dotted(m) => Some(m),
                _ => return false,
            },
            None if head.is_empty() => None,
            None => return false,
        };
        for item in list.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let Some((what, alias)) = import_item(item) else { return false };
            if !is_dotted(what) && what != "*" {
                return false;
            }
            // The same word in `code`.
            let name_at = |word: &str| {
                let offset = word.as_ptr() as usize - plain.as_ptr() as usize;
                &code[offset..offset + word.len()]
            };
            match (from, alias) {
                (Some(_), None) if what == "*" => {}
                (None, _) | (Some(_), Some(_)) if what == "*" => ok = false,
                (Some(module), alias) => bind(name_at(alias.unwrap_or(what)), format!("{module}.{what}")),
                (None, Some(alias)) => bind(name_at(alias), what.to_string()),
                (None, None) => {
                    let first = what.split('.').next().expect("split gives one");
                    bind(name_at(first), first.to_string());
                }
            }
        }
    }
    ok
}

/// One item of an import's list (`a.b`, `a.b as c`, `*`): what it names
/// and its alias, as words (the caller checks them); `None` for anything
/// else. Shared by [`local_imports`] and [`import_bindings`].
pub(crate) fn import_item(item: &str) -> Option<(&str, Option<&str>)> {
    let mut words = item.split_ascii_whitespace();
    let what = words.next()?;
    match (words.next(), words.next(), words.next()) {
        (None, _, _) => Some((what, None)),
        // (An alias that is not a name, `as np*`, is a syntax error the
        // parser may recover from otherwise: not read.)
        (Some("as"), Some(alias), None) if is_dotted(alias) && !alias.contains('.') => Some((what, Some(alias))),
        _ => None,
    }
}

pub(crate) fn is_dotted(s: &str) -> bool {
    !s.is_empty() && s.split('.').all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

/// Whether `code` may subscript a whole axis (`x[:, j]`, `x[i, :]`,
/// `x[::]`): an element of brackets that is only colons.
pub(crate) fn whole_axis_slice(code: &[u8]) -> bool {
    let blank = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\\');
    code.iter().enumerate().any(|(i, &b)| {
        if !matches!(b, b'[' | b',') {
            return false;
        }
        let rest = &code[i + 1..];
        let start = rest.iter().position(|b| !blank(b)).unwrap_or(rest.len());
        let rest = &rest[start..];
        let colons = rest.iter().position(|b| !(*b == b':' || blank(b))).unwrap_or(rest.len());
        colons > 0 && rest[0] == b':' && matches!(rest.get(colons), Some(b',' | b']'))
    })
}

/// How many statements of `function` (a definition's text) hold the bytes
/// at `offsets` (sorted), at most: the text is cut at every line break,
/// `;` and `:` outside brackets (more pieces than statements, never fewer),
/// with strings and comments blanked; each offset its own piece where they
/// can't be told.
pub(crate) fn statements_holding(function: &str, offsets: &[usize]) -> usize {
    let Some(code) = without_strings(function) else { return offsets.len() };
    let mut pieces = 0;
    let mut piece = 0;
    let mut last: Option<usize> = None;
    let mut depth = 0i32;
    let mut next = offsets.iter().peekable();
    for (i, b) in code.bytes().enumerate() {
        while next.peek().is_some_and(|&&at| at == i) {
            next.next();
            if last != Some(piece) {
                pieces += 1;
                last = Some(piece);
            }
        }
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'\n' | b';' | b':' if depth <= 0 => piece += 1,
            _ => {}
        }
    }
    pieces + next.count()
}

/// Of `offsets` (sorted, in `function`, a definition's text), those
/// outside the conditions of its `if`, `elif` and `while` statements and
/// outside its `assert` statements (as read from its logical lines: an
/// offset counts as outside where the lines can't be told).
pub(crate) fn outside_checks(function: &str, mut offsets: Vec<usize>) -> Vec<usize> {
    let Some(code) = without_strings(function) else { return offsets };
    let Some(lines) = logical_lines(&code) else { return offsets };
    for (_, line) in lines {
        let start = line.as_ptr() as usize - code.as_ptr() as usize;
        let end = match first_word(line) {
            Some("assert") => Some(start + line.len()),
            Some("if" | "elif" | "while") => header_colon(line).map(|colon| start + colon),
            _ => None,
        };
        if let Some(end) = end {
            offsets.retain(|at| !(start..end).contains(at));
        }
    }
    offsets
}

/// The first word of a logical line, past an `async`.
pub(crate) fn first_word(line: &str) -> Option<&str> {
    let mut words = line.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty());
    let first = words.next();
    if first == Some("async") { words.next() } else { first }
}

/// Where a compound statement's header ends in its logical line (strings
/// blanked): at its first `:` outside brackets.
pub(crate) fn header_colon(line: &str) -> Option<usize> {
    let mut depth = 0i32;
    line.bytes().position(|b| {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            _ => {}
        }
        b == b':' && depth == 0
    })
}

/// Words that stop a loop from being a kernel wherever they stand in its
/// body (`rules::loops` reads the statements and expressions they begin).
/// (Python keywords, chosen by what the loop rules read: no library fact.)
pub(crate) const NOT_IN_KERNELS: &[&str] = &[
    "return", "yield", "raise", "try", "with", "global", "nonlocal", "await", "del", "while", "import", "def",
    "class", "lambda",
];

/// Whether `function` (a definition's text) has a `for` loop over
/// `range(…)` or `enumerate(…)` (the loops the index-loop rules read) whose
/// body writes an element or accumulates, names none of [`NOT_IN_KERNELS`]
/// outside its strings and comments and does no other Python work (see
/// [`python_work_in_loop`]). Over-approximated from indentation; `true`
/// where its strings can't be told.
pub(crate) fn index_loop_may_be_kernel(function: &str) -> bool {
    // (With where its strings start, its comments aside.)
    let mut strings = Vec::new();
    let Some(code) = blanked(function, |r| {
        if function.as_bytes()[r.start] != b'#' {
            strings.push(r.start);
        }
    }) else {
        return true;
    };
    let Some(lines) = logical_lines(&code) else { return true };
    lines.iter().enumerate().any(|(i, &(indent, line))| {
        if first_word(line) != Some("for") {
            return false;
        }
        // Its body: after the header's `:` (outside brackets), then the
        // lines indented under it.
        let Some(colon) = header_colon(line) else { return true };
        let header = &line[..colon];
        let mut over_indices = false;
        for_each_name(header, |w| over_indices |= w == "range" || w == "enumerate");
        if !over_indices {
            return false;
        }
        let inline = &line[colon + 1..];
        let below = lines[i + 1..].iter().take_while(|(inner, _)| *inner > indent).map(|(_, l)| *l);
        let body: Vec<&str> = std::iter::once(inline).chain(below).collect();
        let mut blocked = false;
        for part in &body {
            for_each_name(part, |w| blocked |= NOT_IN_KERNELS.contains(&w));
        }
        !blocked
            && body.iter().any(|part| writes_or_accumulates(part.as_bytes()))
            && !body.iter().any(|part| python_work_in_loop(&code, part, &strings))
    })
}

/// Whether `part` (a statement of a loop's body, a slice of `code`, a
/// function's text with its strings and comments blanked; `strings`: where
/// that text's strings start) surely does what keeps the loop from being a
/// kernel (`rules::loops` walks every node of the body and stops at these):
/// an inner loop over anything but `range`, `enumerate` or `zip`, a string,
/// a dictionary or set, a call the kernel can't make. What stands inside a
/// list display or comprehension counts for nothing (the rules do not
/// always look inside one), and neither does the rest of an inner loop's
/// header (the rules may not read it).
pub(crate) fn python_work_in_loop(code: &str, part: &str, strings: &[usize]) -> bool {
    if first_word(part) == Some("for") {
        let header = &part[..header_colon(part).unwrap_or(part.len())];
        let mut over_indices = false;
        for_each_name(header, |w| over_indices |= matches!(w, "range" | "enumerate" | "zip"));
        return !over_indices;
    }
    let base = part.as_ptr() as usize - code.as_ptr() as usize;
    let bytes = part.as_bytes();
    // Open brackets: whether each is a list display (not a subscript).
    let mut open: Vec<bool> = Vec::new();
    let mut displays = 0;
    let mut string = strings.partition_point(|s| *s < base);
    for (i, &b) in bytes.iter().enumerate() {
        while string < strings.len() && strings[string] < base + i {
            string += 1;
        }
        if displays == 0 && strings.get(string) == Some(&(base + i)) {
            return true;
        }
        match b {
            b'[' => {
                // A subscript follows a name (not a keyword) or a bracket.
                let subscript = last_code_byte(&bytes[..i]).is_some_and(|k| match bytes[k] {
                    b')' | b']' => true,
                    c if name_byte(c) => {
                        let from = bytes[..=k].iter().rposition(|c| !name_byte(*c)).map_or(0, |j| j + 1);
                        !HARD_KEYWORDS.iter().any(|w| w.as_bytes() == &bytes[from..=k])
                    }
                    _ => false,
                });
                let display = !subscript;
                displays += display as usize;
                open.push(display);
            }
            b'{' if displays == 0 => return true,
            b'(' if displays == 0 && callee_before(&bytes[..i]).is_some_and(|callee| !rules::loops::allowed_call(callee)) => {
                return true;
            }
            b'(' | b'{' => open.push(false),
            b')' | b']' | b'}' => displays -= open.pop().unwrap_or(false) as usize,
            _ => {}
        }
    }
    false
}

/// The name called at the end of `code` (right before a `(`): a dotted
/// name spelled without spaces, as the call's function reads; `None` where
/// the `(` may not call a name so spelled (it follows a keyword, a bracket,
/// or a name with spaces around its dots).
pub(crate) fn callee_before(code: &[u8]) -> Option<&str> {
    let end = code.len();
    let mut start = end;
    while start > 0 && (name_byte(code[start - 1]) || code[start - 1] == b'.') {
        start -= 1;
    }
    let callee = std::str::from_utf8(&code[start..end]).ok()?;
    if callee.is_empty() || callee.starts_with('.') || callee.ends_with('.') || callee.contains("..") {
        return None;
    }
    if callee.as_bytes()[0].is_ascii_digit() || HARD_KEYWORDS.contains(&callee) {
        return None;
    }
    // Before it: nothing that could continue an expression into it.
    match last_code_byte(&code[..start]).map(|k| code[k]) {
        Some(b')' | b']' | b'.') => None,
        _ => Some(callee),
    }
}

/// The logical lines of `code` (strings and comments blanked): each with
/// its indentation (in bytes), from past it to its line break, as the
/// lexer reads them (see [`lex::logical_lines`]); blank lines left out.
/// `None` where the lexer gives up (a bracket closed that was never
/// opened, or never closed).
pub(crate) fn logical_lines(code: &str) -> Option<Vec<(usize, &str)>> {
    struct Lines<'c> {
        code: &'c str,
        lines: Vec<(usize, &'c str)>,
    }
    impl<'c> lex::LineVisitor for Lines<'c> {
        fn line(&mut self, line: &lex::Line) {
            self.lines.push((line.indent(), &self.code[line.code..line.stop]));
        }
    }
    let mut lines = Lines { code, lines: Vec::new() };
    lex::logical_lines(code.as_bytes(), &mut lines)?;
    Some(lines.lines)
}

/// Whether `code` has an assignment to an element (`x[i] = …`) or an
/// augmented assignment (`s += …`): what a loop must do to be a kernel.
pub(crate) fn writes_or_accumulates(code: &[u8]) -> bool {
    code.iter().enumerate().any(|(i, &b)| {
        if b != b'=' || code.get(i + 1) == Some(&b'=') {
            return false;
        }
        let mut j = i;
        while j > 0 && matches!(code[j - 1], b' ' | b'\t') {
            j -= 1;
        }
        match j.checked_sub(1).map(|k| code[k]) {
            Some(b']') => true,
            Some(b'+' | b'-' | b'*' | b'/' | b'%' | b'@' | b'&' | b'|' | b'^') => j == i,
            Some(b'<' | b'>') => j == i && j >= 2 && code[j - 2] == code[j - 1],
            _ => false,
        }
    })
}

/// The attribute names after a name (`.fft.rfft` → `["fft", "rfft"]`); it
/// stops at anything but a dot and a name. Between them it reads past what
/// a chain may hold in valid Python (spaces, line breaks and comments inside
/// brackets, a backslash before a line break) and the bytes tree-sitter's
/// error recovery skips to join names into one chain (`np;.fft.fft(x)` and
/// `np.fft!.fft(x)` both parse as a call of `np.fft.fft`): bytes no Python
/// token starts with, a `;` (no statement starts with `.`), control
/// characters. Reading past too much may see a chain that isn't there,
/// which costs a parse, never a finding.
pub(crate) fn dotted_chain(bytes: &[u8]) -> Vec<&str> {
    let mut parts = Vec::new();
    walk_dotted_chain(bytes, |part| parts.push(part));
    parts
}

/// Where the [`dotted_chain`] of `bytes` ends: past its last name (0 for none).
pub(crate) fn dotted_chain_end(bytes: &[u8]) -> usize {
    let mut end = 0;
    walk_dotted_chain(bytes, |part| end = part.as_ptr() as usize - bytes.as_ptr() as usize + part.len());
    end
}

/// Calls `f` with each name of the [`dotted_chain`] of `bytes`, in order.
pub(crate) fn walk_dotted_chain<'b>(bytes: &'b [u8], mut f: impl FnMut(&'b str)) {
    let skip = |mut j: usize| {
        while let Some(&b) = bytes.get(j) {
            match b {
                b'#' => {
                    while j < bytes.len() && bytes[j] != b'\n' {
                        j += 1;
                    }
                }
                b' ' | b'\t' | b'\n' | b'\r' | b'\\' | b';' | b'!' | b'$' | b'?' | b'`' | 0x7f => j += 1,
                _ if b < 0x20 => j += 1,
                _ => return j,
            }
        }
        j
    };
    let mut i = 0;
    loop {
        let mut j = skip(i);
        if bytes.get(j) != Some(&b'.') {
            return;
        }
        j = skip(j + 1);
        let start = j;
        while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_' || bytes[j] >= 0x80) {
            j += 1;
        }
        match std::str::from_utf8(&bytes[start..j]) {
            Ok(part) if !part.is_empty() => f(part),
            _ => return,
        }
        i = j;
    }
}
