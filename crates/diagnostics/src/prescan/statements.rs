//! Module-level statements nothing parsed reads: which imports and plain
//! assignments `check_text` may leave out of the parse, and the names a
//! statement binds.

use std::ops::Range;

use rustc_hash::FxHashMap;

use super::*;

/// The statements [`irrelevant_definitions`] finds that start nothing and
/// only bind names, and the facts the module's other imports make.
pub(crate) struct Unreads<'p> {
    pub(crate) statements: Vec<Unread<'p>>,
    pub(crate) facts: u8,
}

/// A statement at the module's margin that starts no rule and binds only
/// names: an import (not `*`), or an assignment whose value names no
/// library, live name, loop or model work. Where nothing parsed reads a name
/// it binds, nothing the rules see depends on it, and it need not be parsed:
/// a module's imports and constants are a good part of what is parsed
/// outside its functions. An import also makes facts of the module that
/// hold without a name read (it uses arrays, scikit-learn, a kernel
/// library: `facts`), kept by keeping some import of each.
pub(crate) struct Unread<'p> {
    /// Its index in the outline's statements.
    pub(crate) statement: usize,
    pub(crate) binds: Vec<&'p str>,
    /// Of [`import_facts`], for an import.
    pub(crate) facts: u8,
    /// It reads names (an assignment's value): kept, so are their bindings.
    pub(crate) reads: bool,
}

/// The facts a module-level import of `module` makes, whatever name it
/// binds, as bits: each rule that asks what the module imports, not what a
/// name is, has one.
pub(crate) fn import_facts(module: &str) -> u8 {
    let top = module.split('.').next().unwrap_or(module);
    let mut facts = 0;
    if rules::loops::ARRAY_MODULES.contains(&top) {
        facts |= 1;
    }
    if matches!(top, "numba" | "numba_cuda_mlir" | "warp") {
        facts |= 2;
    }
    if top == "sklearn" {
        facts |= 4;
    }
    if is_gpu_module(top) {
        facts |= 8;
    }
    if let Some(i) = rules::index_work_methods().iter().position(|(library, _)| *library == top) {
        facts |= 16 << i.min(3);
    }
    facts
}

/// The names an import statement (its code, comments and strings blanked)
/// binds, when it is a plain one: `import a.b as c, d`, `from m import (x
/// as y, z)`. `None` for anything else (a star import, a statement that is
/// no import). (Why this is not [`local_imports`]: see there.)
pub(crate) fn import_bindings(code: &str) -> Option<Vec<&str>> {
    let code = code.trim();
    fn name(s: &str) -> bool {
        !s.is_empty() && s.bytes().all(name_byte) && !s.as_bytes()[0].is_ascii_digit()
    }
    // `a`, `a as b`: (what it binds, given how a plain name binds; the name).
    fn item(s: &str, whole: fn(&str) -> &str) -> Option<(&str, &str)> {
        match import_item(s)? {
            (target, None) => Some((whole(target), target)),
            (target, Some(alias)) if name(alias) => Some((alias, target)),
            _ => None,
        }
    }
    let mut binds = Vec::new();
    if let Some(rest) = code.strip_prefix("import ") {
        for part in rest.split(',') {
            let (bound, target) = item(part, |t| t.split('.').next().unwrap_or(t))?;
            if !is_dotted(target) {
                return None;
            }
            binds.push(bound);
        }
    } else {
        let rest = code.strip_prefix("from ")?;
        let (module, names) = rest.split_once(" import")?;
        // (`importuc` is no keyword: a syntax error, not an import.)
        if !names.starts_with([' ', '\t', '(']) {
            return None;
        }
        let module = module.trim();
        let relative = module.trim_start_matches('.');
        let dots_alone = relative.is_empty() && module.starts_with('.');
        if !dots_alone && !is_dotted(relative) {
            return None;
        }
        let names = names.trim();
        let names = match names.strip_prefix('(') {
            Some(inside) => inside.strip_suffix(')')?.trim().trim_end_matches(','),
            None => names,
        };
        for part in names.split(',') {
            let (bound, target) = item(part, |t| t)?;
            if !name(target) {
                return None;
            }
            binds.push(bound);
        }
    }
    Some(binds)
}

/// `skip` with the statements of `unread` whose names nothing parsed reads
/// (the code outside `skip` and them, and the statements kept for it),
/// keeping an import of each fact the module's imports make; and the
/// statements left out. `None` when an assignment left out has a syntax
/// error (`limit = 1 +`): it would take the error out of the parse, and the
/// rest can parse otherwise than around it. (The imports need no parse:
/// `import_bindings` reads only plain ones.)
/// The statements [`without_unread`] leaves out of the parse.
pub(crate) type LeftOut = Vec<Range<usize>>;

pub(crate) fn without_unread(
    text: &str,
    plain: &str,
    outline: &gpulens_syntax::outline::Outline,
    skip: Vec<Range<usize>>,
    unreads: &Unreads<'_>,
) -> Option<(Vec<Range<usize>>, LeftOut)> {
    let unread = &unreads.statements;
    let mut by_name: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
    for (k, u) in unread.iter().enumerate() {
        for name in &u.binds {
            by_name.entry(name).or_default().push(k);
        }
    }
    let ranges: Vec<Range<usize>> = unread.iter().map(|u| outline.statements[u.statement].clone()).collect();
    let mut kept = vec![false; unread.len()];
    let mut found = Vec::new();
    let read = |token: &str, kept: &mut Vec<bool>, found: &mut Vec<usize>| {
        for &k in by_name.get(token).map_or(&[][..], |v| &v[..]) {
            if !kept[k] {
                kept[k] = true;
                found.push(k);
            }
        }
    };
    let mut out_of: Vec<&Range<usize>> = skip.iter().chain(&ranges).collect();
    out_of.sort_by_key(|r| r.start);
    let mut at = 0;
    for r in out_of.into_iter().chain(std::iter::once(&(plain.len()..plain.len()))) {
        if r.start > at {
            for_each_name(&plain[at..r.start], |t| read(t, &mut kept, &mut found));
        }
        at = at.max(r.end);
    }
    while let Some(k) = found.pop() {
        if unread[k].reads {
            for_each_name(&plain[ranges[k].clone()], |t| read(t, &mut kept, &mut found));
        }
    }
    // The facts the imports parsed make, and an import kept for each other.
    let mut facts = unreads.facts;
    for (u, kept) in unread.iter().zip(kept.iter_mut()) {
        if *kept {
            facts |= u.facts;
        } else if u.facts & !facts != 0 {
            *kept = true;
            facts |= u.facts;
        }
    }
    // The assignments left out, parsed together once.
    let mut assignments = String::new();
    for ((r, _), _) in ranges.iter().zip(unread).zip(&kept).filter(|((_, u), k)| u.reads && !**k) {
        assignments.push_str(text[r.clone()].trim_end());
        assignments.push('\n');
    }
    if !assignments.is_empty() && gpulens_syntax::parse(&assignments).root_node().has_error() {
        return None;
    }
    // Merged with `skip`, each with the blank lines after it.
    let bytes = text.as_bytes();
    let mut pieces: Vec<Range<usize>> = skip;
    for (r, _) in ranges.iter().zip(&kept).filter(|(_, k)| !**k) {
        let mut end = r.end;
        while let Some(line) = memchr::memchr(b'\n', &bytes[end..]) {
            if !bytes[end..end + line].iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
                break;
            }
            end += line + 1;
        }
        pieces.push(r.start..end);
    }
    let skip = joined(pieces);
    let left_out = ranges.into_iter().zip(kept).filter(|(r, k)| !k && within_one(&skip, r)).map(|(r, _)| r).collect();
    Some((skip, left_out))
}

/// The names a statement (its code, comments and strings blanked) may bind,
/// over-approximated: (those bound to what it computes — every name before
/// an assignment's `=` or an augmented one, before `:=` — and those bound
/// where the value can't be read — a `for`'s targets, after `as`).
pub(crate) fn bound_names(part: &str) -> (Vec<&str>, Vec<&str>) {
    let (mut assigned, mut unread) = (Vec::new(), Vec::new());
    {
        // Strings and comments bind nothing: read the code without them.
        // (Where that reading is unsure, every name counts as assigned.)
        let code = without_strings(part);
        let (bytes, sure) = match &code {
            Some(code) => (code.as_bytes(), true),
            None => (part.as_bytes(), false),
        };
        // Where each assignment's `=` is: outside brackets, not part of a
        // comparison; `:=` anywhere.
        let mut equals = Vec::new();
        let mut depth = 0i32;
        for (i, &b) in bytes.iter().enumerate() {
            match b {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                b'=' => {
                    let before = i.checked_sub(1).map(|k| bytes[k]);
                    let shift = i >= 2 && matches!(&bytes[i - 2..i], b"<<" | b">>" | b"**" | b"//");
                    let comparison = bytes.get(i + 1) == Some(&b'=')
                        || (matches!(before, Some(b'=' | b'!' | b'<' | b'>')) && !shift);
                    if before == Some(b':') || (depth == 0 && !comparison) {
                        equals.push(i);
                    }
                }
                _ => {}
            }
        }
        if !sure {
            equals.push(bytes.len());
        }
        let mut previous: Option<&str> = None;
        let mut in_for = false;
        // The tokens of the code without strings, as slices of `part`.
        let read = match &code {
            Some(code) => code.as_str(),
            None => part,
        };
        // The depth of brackets where each token stands: a `for` inside
        // brackets is a comprehension's, whose names are its own (the
        // analysis binds them nowhere).
        let (mut depth, mut scanned) = (0i32, 0);
        for_each_name(read, |token| {
            let at = token.as_ptr() as usize - read.as_ptr() as usize;
            for &b in &bytes[scanned..at] {
                match b {
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' => depth -= 1,
                    _ => {}
                }
            }
            scanned = at;
            let token = &part[at..at + token.len()];
            let keyword = HARD_KEYWORDS.contains(&token);
            if !keyword && equals.iter().any(|&e| e > at) {
                assigned.push(token);
            }
            match token {
                "for" => in_for = depth == 0 || !sure,
                "in" => in_for = false,
                _ if keyword => {}
                _ if in_for || previous == Some("as") => unread.push(token),
                _ => {}
            }
            previous = Some(token);
        });
    }
    (assigned, unread)
}
