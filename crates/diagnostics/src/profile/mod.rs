//! Profiles of the user's program, read to rank advice by measured time:
//! the decision framework's first step is to measure before optimising.
//!
//! Three formats, told apart by their content:
//! - cProfile/pstats files (`python -m cProfile -o run.prof`): function
//!   level, cumulative seconds per function;
//! - speedscope JSON (`py-spy record -f speedscope`): line level, the
//!   samples (or time) during which each line was on the stack;
//! - Scalene's JSON (`scalene run`): line level, each line's share of CPU
//!   time (Python, native and system), with its GPU and copy columns.
//!
//! Everything here is pure: bytes in, costs out. Who reads the file (the
//! command line, the server) matches the profile's paths to the files it
//! checks with [`match_paths`] (paths recorded on another machine match by
//! their longest common suffix) and asks [`FileCosts::measure`] for each
//! finding's share.

pub mod marshal;

use std::collections::HashMap;
use std::ops::Range;

use gpulens_syntax::{Node, NodeExt, Tree};

/// The profiler that wrote a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    CProfile,
    Speedscope,
    Scalene,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::CProfile => "cprofile",
            Format::Speedscope => "speedscope",
            Format::Scalene => "scalene",
        }
    }

    /// How the format names itself to a person.
    pub fn name(self) -> &'static str {
        match self {
            Format::CProfile => "cProfile",
            Format::Speedscope => "speedscope (py-spy)",
            Format::Scalene => "Scalene",
        }
    }
}

/// What a profile's costs count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    Seconds,
    Samples,
    /// Percent of the run's CPU time (Scalene).
    Percent,
}

/// The cost of one place of the program: a function (from its definition
/// line) or a line.
#[derive(Debug, Clone, PartialEq)]
pub struct Cost {
    /// The path as the profile recorded it.
    pub file: String,
    /// 1-based: a function's first line (its `def`, or its first decorator
    /// as CPython records it), or the line itself.
    pub line: u32,
    /// The function's name; for a line, the function it runs in (where the
    /// profile says).
    pub function: String,
    /// In the profile's unit: time or samples with the function (or line)
    /// on the stack, callees included.
    pub value: f64,
    /// Scalene: the line's GPU share, in percent of the run.
    pub gpu_percent: Option<f64>,
    /// Scalene: megabytes per second copied between CPU and GPU (or Python
    /// and native memory) by the line.
    pub copy_mb_s: Option<f64>,
}

/// A profile, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    pub format: Format,
    pub unit: Unit,
    /// The whole run, in `unit`.
    pub total: f64,
    /// Per function (every format).
    pub functions: Vec<Cost>,
    /// Per line (speedscope, Scalene).
    pub lines: Vec<Cost>,
}

impl Profile {
    /// Reads a profile, recognising its format from its content.
    pub fn read(bytes: &[u8]) -> Result<Profile, String> {
        let start = bytes.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(bytes.len());
        let profile = match bytes.get(start) {
            None => return Err("the profile is empty".into()),
            Some(b'{') => match serde_json::from_slice::<serde_json::Value>(bytes) {
                Ok(json) if json.get("shared").is_some() && json.get("profiles").is_some() => speedscope(&json)?,
                Ok(json) if json.get("files").is_some() && json.get("elapsed_time_sec").is_some() => scalene(&json)?,
                Ok(_) => {
                    return Err("a JSON file that is neither speedscope's (`py-spy record -f speedscope`) nor Scalene's (`scalene run`)".into())
                }
                // Not JSON: a marshal dict starts with `{` too.
                Err(_) => cprofile(bytes)?,
            },
            Some(_) if bytes[0] & !0x80 == b'{' => cprofile(bytes)?,
            Some(_) => {
                return Err(
                    "not a profile gpulens reads: give a cProfile file (`python -m cProfile -o run.prof`), speedscope JSON \
                     (`py-spy record -f speedscope`) or Scalene JSON (`scalene run`)"
                        .into(),
                )
            }
        };
        if profile.total <= 0.0 || !profile.total.is_finite() {
            return Err(format!("the {} profile records no time", profile.format.name()));
        }
        Ok(profile)
    }

    /// Every path the profile names, once each.
    pub fn files(&self) -> Vec<&str> {
        let mut files: Vec<&str> = self.functions.iter().chain(&self.lines).map(|c| c.file.as_str()).collect();
        files.sort_unstable();
        files.dedup();
        files
    }

    /// The costs recorded for one path of the profile.
    pub fn costs_of(&self, file: &str) -> FileCosts {
        self.costs_of_any(&[file])
    }

    /// The costs recorded under any of `files` (paths of the profile that
    /// are one checked file, as `./run.py` and `/home/ana/run.py` can be).
    pub fn costs_of_any(&self, files: &[&str]) -> FileCosts {
        let pick = |costs: &[Cost]| costs.iter().filter(|c| files.contains(&c.file.as_str())).cloned().collect::<Vec<_>>();
        let mut lines: HashMap<u32, Cost> = HashMap::new();
        for c in pick(&self.lines) {
            lines.entry(c.line).and_modify(|e| e.value = e.value.max(c.value)).or_insert(c);
        }
        FileCosts { format: self.format, unit: self.unit, total: self.total, functions: pick(&self.functions), lines }
    }
}

/// `python -m cProfile -o`: `{(file, line, name): (calls, primitive calls, own seconds, cumulative seconds, callers)}`.
fn cprofile(bytes: &[u8]) -> Result<Profile, String> {
    let value = marshal::read(bytes).map_err(|e| format!("not a readable cProfile file: {e}"))?;
    let marshal::Value::Dict(entries) = value else { return Err("not a cProfile file: it holds no statistics table".into()) };
    let mut functions = Vec::with_capacity(entries.len());
    let mut total = 0.0;
    for (key, stats) in entries {
        let (marshal::Value::Seq(key), marshal::Value::Seq(stats)) = (key, stats) else {
            return Err("not a cProfile file: an entry is not (file, line, function) → statistics".into());
        };
        let [file, line, name] = &key[..] else { return Err("not a cProfile file: a key is not (file, line, function)".into()) };
        let (Some(file), Some(line), Some(name)) = (file.as_str(), line.as_f64(), name.as_str()) else {
            return Err("not a cProfile file: a key is not (file, line, function)".into());
        };
        let (Some(own), Some(cumulative)) = (stats.get(2).and_then(|v| v.as_f64()), stats.get(3).and_then(|v| v.as_f64())) else {
            return Err("not a cProfile file: statistics without times".into());
        };
        total += own;
        functions.push(Cost {
            file: file.to_string(),
            line: line as u32,
            function: name.to_string(),
            value: cumulative,
            gpu_percent: None,
            copy_mb_s: None,
        });
    }
    Ok(Profile { format: Format::CProfile, unit: Unit::Seconds, total, functions, lines: Vec::new() })
}

/// speedscope's file format: frames shared by every profile (one per
/// thread), each profile `sampled` (stacks of frame indices, root first,
/// and their weights) or `evented` (frames opened and closed at times).
fn speedscope(json: &serde_json::Value) -> Result<Profile, String> {
    let bad = |what: &str| format!("not a readable speedscope file: {what}");
    let frames = json["shared"]["frames"].as_array().ok_or_else(|| bad("no frames"))?;
    struct Frame<'a> {
        name: &'a str,
        file: Option<&'a str>,
        line: Option<u32>,
    }
    let frames: Vec<Frame<'_>> = frames
        .iter()
        .map(|f| Frame {
            name: f["name"].as_str().unwrap_or(""),
            file: f["file"].as_str(),
            line: f["line"].as_u64().map(|l| l as u32),
        })
        .collect();
    // Per frame, and per (file, function): the weight of the samples they were on the stack for.
    let mut on_stack = vec![0.0f64; frames.len()];
    let mut function_weight: HashMap<(&str, &str), f64> = HashMap::new();
    let mut total = 0.0;
    let mut unit = Unit::Samples;
    let profiles = json["profiles"].as_array().ok_or_else(|| bad("no profiles"))?;
    // (Counted once per sample however often a frame recurs in its stack.)
    let mut seen = vec![usize::MAX; frames.len()];
    let mut seen_function: HashMap<(&str, &str), usize> = HashMap::new();
    let mut sample_id = 0usize;
    let mut account = |stack: &[usize], weight: f64| {
        sample_id += 1;
        for &i in stack {
            let Some(frame) = frames.get(i) else { continue };
            if seen[i] != sample_id {
                seen[i] = sample_id;
                on_stack[i] += weight;
            }
            if let Some(file) = frame.file {
                let key = (file, frame.name);
                if seen_function.insert(key, sample_id) != Some(sample_id) {
                    *function_weight.entry(key).or_default() += weight;
                }
            }
        }
    };
    for p in profiles {
        if matches!(p["unit"].as_str(), Some("seconds" | "milliseconds" | "microseconds" | "nanoseconds")) {
            unit = Unit::Seconds;
        }
        let scale = match p["unit"].as_str() {
            Some("milliseconds") => 1e-3,
            Some("microseconds") => 1e-6,
            Some("nanoseconds") => 1e-9,
            _ => 1.0,
        };
        match p["type"].as_str() {
            Some("sampled") => {
                let samples = p["samples"].as_array().ok_or_else(|| bad("a sampled profile without samples"))?;
                let weights = p["weights"].as_array();
                for (i, sample) in samples.iter().enumerate() {
                    let stack: Vec<usize> = sample.as_array().map_or_else(Vec::new, |s| s.iter().filter_map(|f| f.as_u64()).map(|f| f as usize).collect());
                    let weight = weights.and_then(|w| w.get(i)).and_then(|w| w.as_f64()).unwrap_or(1.0) * scale;
                    total += weight;
                    account(&stack, weight);
                }
            }
            Some("evented") => {
                // Each stretch between two events is a sample of the stack open then.
                let events = p["events"].as_array().ok_or_else(|| bad("an evented profile without events"))?;
                let mut stack: Vec<usize> = Vec::new();
                let mut last = p["startValue"].as_f64().unwrap_or(0.0);
                for e in events {
                    let at = e["at"].as_f64().unwrap_or(last);
                    if at > last && !stack.is_empty() {
                        let weight = (at - last) * scale;
                        total += weight;
                        account(&stack, weight);
                    }
                    last = at;
                    let frame = e["frame"].as_u64().map(|f| f as usize);
                    match (e["type"].as_str(), frame) {
                        (Some("O"), Some(f)) => stack.push(f),
                        (Some("C"), Some(f)) => {
                            if let Some(i) = stack.iter().rposition(|x| *x == f) {
                                stack.truncate(i);
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => return Err(bad("a profile that is neither sampled nor evented")),
        }
    }
    let lines = frames
        .iter()
        .zip(&on_stack)
        .filter(|(f, w)| **w > 0.0 && f.file.is_some() && f.line.is_some())
        .map(|(f, w)| Cost {
            file: f.file.unwrap_or_default().to_string(),
            line: f.line.unwrap_or_default(),
            function: f.name.to_string(),
            value: *w,
            gpu_percent: None,
            copy_mb_s: None,
        })
        .collect();
    // A function's own line is not in speedscope's frames: its lines'
    // smallest line stands in for it (matched by name, see `measure`).
    let mut first_line: HashMap<(&str, &str), u32> = HashMap::new();
    for f in &frames {
        if let (Some(file), Some(line)) = (f.file, f.line) {
            let e = first_line.entry((file, f.name)).or_insert(line);
            *e = (*e).min(line);
        }
    }
    let functions = function_weight
        .into_iter()
        .map(|((file, name), value)| Cost {
            file: file.to_string(),
            line: first_line.get(&(file, name)).copied().unwrap_or(0),
            function: name.to_string(),
            value,
            gpu_percent: None,
            copy_mb_s: None,
        })
        .collect();
    Ok(Profile { format: Format::Speedscope, unit, total, functions, lines })
}

/// Scalene's JSON: per file, per line and per function, the percent of the
/// run's CPU time spent in Python, in native code and in the system.
fn scalene(json: &serde_json::Value) -> Result<Profile, String> {
    let files = json["files"].as_object().ok_or("not a readable Scalene file: `files` is not a table")?;
    let percent = |row: &serde_json::Value| {
        ["n_cpu_percent_python", "n_cpu_percent_c", "n_sys_percent"].iter().filter_map(|k| row[*k].as_f64()).sum::<f64>()
    };
    let mut functions = Vec::new();
    let mut lines = Vec::new();
    for (file, data) in files {
        let rows = |key: &str| data[key].as_array().cloned().unwrap_or_default();
        for row in rows("lines") {
            let Some(line) = row["lineno"].as_u64() else { continue };
            let value = percent(&row);
            let gpu = row["n_gpu_percent"].as_f64().filter(|g| *g > 0.0);
            let copy = row["n_copy_mb_s"].as_f64().filter(|c| *c > 0.0);
            if value > 0.0 || gpu.is_some() {
                lines.push(Cost { file: file.clone(), line: line as u32, function: String::new(), value, gpu_percent: gpu, copy_mb_s: copy });
            }
        }
        for row in rows("functions") {
            let (Some(line), Some(name)) = (row["lineno"].as_u64(), row["line"].as_str()) else { continue };
            functions.push(Cost {
                file: file.clone(),
                line: line as u32,
                function: name.to_string(),
                value: percent(&row),
                gpu_percent: row["n_gpu_percent"].as_f64().filter(|g| *g > 0.0),
                copy_mb_s: row["n_copy_mb_s"].as_f64().filter(|c| *c > 0.0),
            });
        }
    }
    Ok(Profile { format: Format::Scalene, unit: Unit::Percent, total: 100.0, functions, lines })
}

/// Which checked file each path of a profile is: the one sharing the
/// longest run of trailing path components with it (at least the file
/// name), so that a profile recorded on another machine, or with relative
/// paths, still matches. A path two checked files match equally well is
/// left out (nothing says which it was).
pub fn match_paths(profile_files: &[&str], checked: &[&str]) -> HashMap<String, usize> {
    fn parts(path: &str) -> Vec<&str> {
        path.split(['/', '\\']).filter(|p| !p.is_empty() && *p != ".").collect()
    }
    let checked_parts: Vec<Vec<&str>> = checked.iter().map(|c| parts(c)).collect();
    let mut out = HashMap::new();
    for &file in profile_files {
        let p = parts(file);
        let mut best: Option<(usize, usize)> = None; // (shared components, index)
        let mut tie = false;
        for (i, c) in checked_parts.iter().enumerate() {
            let shared = p.iter().rev().zip(c.iter().rev()).take_while(|(a, b)| a == b).count();
            if shared == 0 {
                continue;
            }
            match best {
                Some((n, _)) if shared < n => {}
                Some((n, _)) if shared == n => tie = true,
                _ => {
                    best = Some((shared, i));
                    tie = false;
                }
            }
        }
        if let (Some((_, i)), false) = (best, tie) {
            out.insert(file.to_string(), i);
        }
    }
    out
}

/// The paths of a profile that are the one file at `checked` (an editor's
/// open document): those sharing the most trailing path components with
/// it, at least its name.
pub fn paths_for<'p>(profile_files: &[&'p str], checked: &str) -> Vec<&'p str> {
    let parts = |path: &str| path.split(['/', '\\']).filter(|p| !p.is_empty() && *p != ".").map(str::to_string).collect::<Vec<_>>();
    let ours = parts(checked);
    let shared = |file: &str| parts(file).iter().rev().zip(ours.iter().rev()).take_while(|(a, b)| a == b).count();
    let best = profile_files.iter().map(|f| shared(f)).max().unwrap_or(0);
    if best == 0 {
        return Vec::new();
    }
    profile_files.iter().copied().filter(|f| shared(f) == best).collect()
}

/// The costs a profile records for one checked file.
#[derive(Debug, Clone, PartialEq)]
pub struct FileCosts {
    pub format: Format,
    pub unit: Unit,
    pub total: f64,
    pub functions: Vec<Cost>,
    pub lines: HashMap<u32, Cost>,
}

/// What a profile measured for a finding (or a function).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Measured {
    /// Of the whole run, 0 to 1.
    pub share: f64,
    /// In the profile's unit.
    pub value: f64,
    pub unit: Unit,
    pub source: Format,
    /// Whether the share is the line's (line-level profiles) or the
    /// enclosing function's (cProfile, or a line the profile did not see).
    pub level: &'static str,
    /// The function it was measured in, when the share is a function's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// Scalene's GPU column for these lines, in percent of the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_percent: Option<f64>,
    /// Scalene's copy column: megabytes per second copied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copy_mb_s: Option<f64>,
}

impl Measured {
    /// "41% of run time", "0.3% of run time", "<0.1% of run time"; for a
    /// share measured for the whole function around the code, "4.5% of run
    /// time in `blur`"; for lines a sampling profiler saw the function of
    /// but never caught running, "too brief to sample".
    pub fn phrase(&self) -> String {
        let pct = self.share * 100.0;
        if self.value == 0.0 {
            return "too brief to sample".to_string();
        }
        let share = if pct >= 9.95 {
            format!("{pct:.0}% of run time")
        } else if pct >= 0.05 {
            format!("{pct:.1}% of run time")
        } else {
            "<0.1% of run time".to_string()
        };
        match &self.function {
            Some(f) if self.level == "function" => format!("{share} in `{f}`"),
            _ => share,
        }
    }
}

/// A function of a checked file: its name, where CPython says it starts
/// (its first decorator, else its `def`), its `def` line and its last
/// line (1-based), and its byte range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionSpan {
    pub name: String,
    pub first_line: u32,
    pub def_line: u32,
    pub last_line: u32,
    pub range: Range<usize>,
}

/// Every function of a parsed file, nested ones included, in source order.
pub fn functions(text: &str, tree: &Tree) -> Vec<FunctionSpan> {
    let root = tree.root_node();
    gpulens_syntax::preorder(root)
        .filter(|n| n.kind_name() == "function_definition")
        .filter_map(|def| {
            let name = text.get(def.field("name")?.byte_range())?.to_string();
            let outer = def.parent().filter(|p| p.kind_name() == "decorated_definition").unwrap_or(def);
            Some(FunctionSpan {
                name,
                first_line: outer.start_position().row as u32 + 1,
                def_line: def.start_position().row as u32 + 1,
                last_line: def.end_position().row as u32 + 1,
                range: outer.byte_range(),
            })
        })
        .collect()
}

impl FileCosts {
    fn measured(&self, value: f64, level: &'static str, function: Option<String>) -> Measured {
        Measured {
            share: (value / self.total).clamp(0.0, 1.0),
            value,
            unit: self.unit,
            source: self.format,
            level,
            function,
            gpu_percent: None,
            copy_mb_s: None,
        }
    }

    /// The cost recorded for a function of this file, found by where it
    /// starts (and, for speedscope, which names no definition line, by its
    /// name within its lines).
    pub fn function_cost(&self, f: &FunctionSpan) -> Option<&Cost> {
        let by_line = self.functions.iter().filter(|c| c.line == f.first_line || c.line == f.def_line);
        let found = by_line.max_by(|a, b| a.value.total_cmp(&b.value));
        found.or_else(|| {
            self.functions
                .iter()
                .filter(|c| {
                    (c.function == f.name || c.function.rsplit('.').next() == Some(f.name.as_str()))
                        && (f.first_line..=f.last_line).contains(&c.line)
                })
                .max_by(|a, b| a.value.total_cmp(&b.value))
        })
    }

    /// The share of the run a finding on `lines` (1-based, inclusive; a
    /// loop's are all its lines) inside `enclosing` (the innermost function
    /// holding it, if any) accounts for: its lines' where the profile has
    /// lines, else its function's; `None` when the profile never saw either.
    /// (A line-level profile puts each sample of a function on one of its
    /// lines, so the lines of a span add up to the span's time.)
    pub fn measure(&self, lines: Range<u32>, enclosing: Option<&FunctionSpan>) -> Option<Measured> {
        let seen: Vec<&Cost> = (lines.start..=lines.end).filter_map(|l| self.lines.get(&l)).collect();
        if !seen.is_empty() {
            let mut m = self.measured(seen.iter().map(|c| c.value).sum(), "line", None);
            m.gpu_percent = seen.iter().filter_map(|c| c.gpu_percent).reduce(f64::max);
            m.copy_mb_s = seen.iter().filter_map(|c| c.copy_mb_s).reduce(f64::max);
            return Some(m);
        }
        let function = enclosing?;
        let cost = self.function_cost(function)?;
        // A line-level profile that saw the function but not these lines
        // sampled them never: too brief to measure, not the function's time.
        if !self.lines.is_empty() {
            return Some(self.measured(0.0, "line", None));
        }
        Some(self.measured(cost.value, "function", Some(function.name.clone())))
    }

    /// The share of the run a whole function accounts for (its name is not
    /// repeated in the [`Measured::phrase`]).
    pub fn measure_function(&self, f: &FunctionSpan) -> Option<Measured> {
        let cost = self.function_cost(f)?;
        Some(self.measured(cost.value, "function", None))
    }
}

/// The lines (1-based, inclusive) whose time a finding on `range` is
/// about: a loop's header stands for the whole loop; anything else is its
/// own lines. `None` when `range` starts no loop.
pub fn statement_lines(tree: &Tree, range: Range<usize>) -> Option<Range<u32>> {
    let node = tree.root_node().descendant_for_byte_range(range.start, range.start)?;
    let the_loop = std::iter::successors(Some(node), |n| n.parent())
        .take_while(|n| n.start_byte() == range.start)
        .find(|n| matches!(n.kind_name(), "for_statement" | "while_statement"))?;
    Some(the_loop.start_position().row as u32 + 1..the_loop.end_position().row as u32 + 1)
}

/// What `costs` measured for findings at `ranges` (bytes of `text`, parsed
/// as `tree`, whose [`functions`] are `functions`): each one's lines (a
/// loop's whole), within the innermost function around it.
pub fn measure_ranges(
    costs: &FileCosts,
    text: &str,
    tree: &Tree,
    functions: &[FunctionSpan],
    ranges: impl IntoIterator<Item = Range<usize>>,
) -> Vec<Option<Measured>> {
    let index = gpulens_syntax::LineIndex::new(text);
    let line = |offset: usize| index.position(text, offset, gpulens_syntax::PositionEncoding::Utf8).line + 1;
    ranges
        .into_iter()
        .map(|range| {
            let lines = statement_lines(tree, range.clone()).unwrap_or(line(range.start)..line(range.end));
            costs.measure(lines, enclosing(functions, range.start))
        })
        .collect()
}

/// The innermost of `functions` holding the byte `offset`.
pub fn enclosing(functions: &[FunctionSpan], offset: usize) -> Option<&FunctionSpan> {
    functions.iter().filter(|f| f.range.contains(&offset)).min_by_key(|f| f.range.len())
}

/// Why gpulens has no advice for a function the profile says is hot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Silence {
    /// It already calls a GPU library.
    OnGpu,
    /// Its time goes to files, the network, subprocesses or sleeping.
    Io,
    /// A loop in it needs each step's result for the next.
    Recurrence,
    /// Its time is in the functions it calls (which have their own entries).
    Callees,
    /// None of gpulens's rules covers what it does.
    NoRule,
}

impl Silence {
    pub fn reason(self) -> &'static str {
        match self {
            Silence::OnGpu => "it already runs on the GPU (it calls a GPU library)",
            Silence::Io => "its time goes to I/O (files, network, subprocesses or sleeping), which a GPU does not speed up",
            Silence::Recurrence => "its loop is a recurrence: each step needs the previous step's result, so the steps cannot run in parallel",
            Silence::Callees => "its time is spent in the functions it calls",
            Silence::NoRule => "no gpulens rule covers what it does",
        }
    }
}

/// GPU libraries a function may already call.
const GPU_MODULES: &[&str] = &["cupy", "cupyx", "cudf", "cuml", "cugraph", "cuvs", "cucim", "pylibraft", "kvikio", "warp", "torch", "numba.cuda", "cuda"];
/// Calls that wait on the outside world.
const IO_CALLS: &[&str] = &[
    "open", "print", "input", "sleep", "read", "readline", "readlines", "write", "writelines", "flush", "recv", "send", "sendall",
    "get", "post", "urlopen", "request", "run", "call", "check_output", "Popen", "communicate", "load", "dump", "loads", "dumps",
    "savefig", "show", "to_csv", "to_parquet", "to_json", "to_excel", "save", "savez", "savetxt", "loadtxt", "genfromtxt",
];

/// Why a function gets no advice, read from its code: a GPU library
/// called, I/O, a loop carrying a value from step to step, or time spent
/// in callees (`calls_own`: it calls functions of this project, which the
/// profile accounts for separately).
pub fn silence(text: &str, tree: &Tree, f: &FunctionSpan, calls_own: bool) -> Silence {
    let Some(node) = tree.root_node().descendant_for_byte_range(f.range.start, f.range.end.saturating_sub(1).max(f.range.start)) else {
        return Silence::NoRule;
    };
    let def = std::iter::successors(Some(node), |n| n.parent())
        .find(|n| n.kind_name() == "function_definition" && f.range.contains(&n.start_byte()))
        .unwrap_or(node);
    let mut io = 0usize;
    let mut calls = 0usize;
    let mut gpu = false;
    for n in gpulens_syntax::preorder(def) {
        match n.kind_name() {
            "call" => {
                calls += 1;
                let callee = n.field("function").map_or("", |c| &text[c.byte_range()]);
                let last = callee.rsplit('.').next().unwrap_or(callee);
                if IO_CALLS.contains(&last) {
                    io += 1;
                }
                let head = callee.split('.').next().unwrap_or("");
                if GPU_MODULES.iter().any(|m| callee.starts_with(m) && (callee.len() == m.len() || callee[m.len()..].starts_with('.')))
                    || matches!(head, "cp" | "wp")
                {
                    gpu = true;
                }
            }
            "decorator" if text[n.byte_range()].contains("cuda.jit") => gpu = true,
            _ => {}
        }
    }
    // (The decorators sit outside the definition node.)
    if text[f.range.clone()].lines().take_while(|l| l.trim_start().starts_with('@')).any(|l| l.contains("cuda.jit") || l.contains("wp.kernel")) {
        gpu = true;
    }
    if gpu {
        return Silence::OnGpu;
    }
    if io > 0 && io * 2 >= calls {
        return Silence::Io;
    }
    if carries_a_value(text, def) {
        return Silence::Recurrence;
    }
    if calls_own {
        return Silence::Callees;
    }
    Silence::NoRule
}

/// A `for` or `while` loop of `def` (not of a nested function) whose body
/// rebinds a name from its own value (`x = f(x)`, `x += y`, `x, v = v, x`):
/// each pass needs the previous one's result.
fn carries_a_value(text: &str, def: Node<'_>) -> bool {
    let mut loops = gpulens_syntax::preorder(def)
        .filter(|n| matches!(n.kind_name(), "for_statement" | "while_statement"))
        .filter(|n| std::iter::successors(n.parent(), |p| p.parent()).find(|p| p.kind_name() == "function_definition") == Some(def));
    loops.any(|l| {
        let Some(body) = l.field("body") else { return false };
        gpulens_syntax::preorder(body).any(|n| match n.kind_name() {
            "augmented_assignment" => n.field("left").is_some_and(|t| t.kind_name() == "identifier"),
            "assignment" => {
                let (Some(left), Some(right)) = (n.field("left"), n.field("right")) else { return false };
                let names: Vec<&str> = gpulens_syntax::preorder(left)
                    .filter(|t| t.kind_name() == "identifier" && t.parent().is_none_or(|p| p.kind_name() != "attribute" && p.kind_name() != "subscript"))
                    .map(|t| &text[t.byte_range()])
                    .collect();
                left.kind_name() != "subscript"
                    && gpulens_syntax::preorder(right).any(|t| t.kind_name() == "identifier" && names.contains(&&text[t.byte_range()]))
            }
            _ => false,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_match_by_their_longest_common_suffix() {
        let checked = ["src/app/run.py", "src/tools/run.py", "examples/spectral.py"];
        let m = match_paths(
            &["/home/ana/proj/src/app/run.py", "run.py", "C:\\work\\examples\\spectral.py", "/usr/lib/python3.11/os.py", "./spectral.py"],
            &checked,
        );
        assert_eq!(m.get("/home/ana/proj/src/app/run.py"), Some(&0));
        assert_eq!(m.get("run.py"), None, "two checked files end in run.py");
        assert_eq!(m.get("C:\\work\\examples\\spectral.py"), Some(&2));
        assert_eq!(m.get("./spectral.py"), Some(&2));
        assert_eq!(m.get("/usr/lib/python3.11/os.py"), None);
        let names = ["/home/ana/a/utils.py", "/home/ana/b/utils.py", "b/utils.py", "main.py"];
        assert_eq!(paths_for(&names, "/work/b/utils.py"), ["/home/ana/b/utils.py", "b/utils.py"]);
        assert!(paths_for(&names, "/work/other.py").is_empty());
    }

    #[test]
    fn unknown_and_empty_input_are_clear_errors() {
        assert!(Profile::read(b"").unwrap_err().contains("empty"));
        assert!(Profile::read(b"hello").unwrap_err().contains("cProfile"));
        assert!(Profile::read(b"{\"a\": 1}").unwrap_err().contains("neither speedscope"));
        assert!(Profile::read(b"{\x00\x01").is_err());
    }

    #[test]
    fn an_evented_speedscope_profile_counts_open_frames() {
        let json = br#"{"shared": {"frames": [{"name": "main", "file": "a.py", "line": 3}, {"name": "work", "file": "a.py", "line": 9}]},
            "profiles": [{"type": "evented", "unit": "milliseconds", "startValue": 0, "endValue": 10,
            "events": [{"type": "O", "frame": 0, "at": 0}, {"type": "O", "frame": 1, "at": 2}, {"type": "C", "frame": 1, "at": 8}, {"type": "C", "frame": 0, "at": 10}]}]}"#;
        let p = Profile::read(json).unwrap();
        assert_eq!(p.format, Format::Speedscope);
        assert!((p.total - 0.010).abs() < 1e-12, "{}", p.total);
        let costs = p.costs_of("a.py");
        assert!((costs.lines[&9].value - 0.006).abs() < 1e-12);
        assert!((costs.lines[&3].value - 0.010).abs() < 1e-12);
    }

    #[test]
    fn silence_reasons() {
        let text = "import cupy as cp\n\
                    def gpu(x):\n    return cp.fft.fft(x)\n\
                    def io(path):\n    with open(path) as f:\n        return f.read()\n\
                    def rec(n):\n    x = 1.0\n    for i in range(n):\n        x = 3.9 * x * (1 - x)\n    return x\n\
                    def calls(a):\n    return helper(a) + other(a)\n";
        let tree = gpulens_syntax::parse(text);
        let fs = functions(text, &tree);
        let reasons: Vec<Silence> = fs.iter().map(|f| silence(text, &tree, f, f.name == "calls")).collect();
        assert_eq!(reasons, [Silence::OnGpu, Silence::Io, Silence::Recurrence, Silence::Callees]);
    }
}
