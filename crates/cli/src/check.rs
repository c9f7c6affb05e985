//! `gpulens check`: find the files, check them in parallel, report.

use std::borrow::Cow;
use std::collections::HashSet;
use std::io::{BufWriter, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;

use gpulens_diagnostics::config::Layer;
use gpulens_diagnostics::{Finding, Settings};
use gpulens_gpu::GpuProfile;
use rayon::prelude::*;

use crate::cache::{self, Cache, CacheFile, Entry};
use crate::config::Resolver;
use crate::output;
use crate::report::{self, FileReport, Needs, Problem};
use crate::{CheckArgs, Format};

/// A checked file and what the cache should know of it.
struct Checked {
    report: FileReport,
    /// With a cache: the file's key, and how the cache served it.
    cached: Option<(String, Served)>,
}

enum Served {
    /// From its entry.
    Reused,
    /// By the rules, with the entry to store (none if it could not be made).
    Analysed(Option<Entry<'static>>),
}
use Served::{Analysed, Reused};

pub fn run(args: CheckArgs) -> ExitCode {
    let paths = if args.paths.is_empty() { vec![PathBuf::from(".")] } else { args.paths.clone() };
    let (files, mut problems) = discover(&paths);
    let command_line = Layer {
        select: args.select.clone(),
        ignore: (!args.ignore.is_empty()).then(|| args.ignore.clone()),
        target_gpu: args.target_gpu.clone(),
        min_elements: None,
    };
    let resolver = Resolver::new(command_line.clone());
    // A target named on the command line or in the pyproject.toml of the first
    // path wins; else the attached GPU (NVML); else none.
    let target = resolver.target_gpu(paths.first().map(PathBuf::as_path));
    let gpu = match target {
        Some(name) => match GpuProfile::target(&name) {
            Ok(profile) => profile,
            Err(e) => {
                eprintln!("gpulens: error: --target-gpu: {e}");
                return ExitCode::from(2);
            }
        },
        None => gpulens_gpu::probe().with_target(None).map(|r| r.profile).unwrap_or_default(),
    };
    // What each file's functions declare they return, for the others.
    let started = std::time::Instant::now();
    let uses_cache = !(args.no_cache || args.fix || args.diff);
    let folder = uses_cache.then(|| std::env::current_dir().map(|cwd| cwd.join(cache_dir(&args))).ok()).flatten();
    let (index, modules) = crate::project::index(&files, &paths, folder.as_deref());
    if std::env::var("GPULENS_LOG").is_ok_and(|level| level.contains("debug") || level.contains("trace")) {
        eprintln!(
            "gpulens: debug: project index: {} functions and type aliases, {} functions other modules pass known values to, {} bytes, read in {:.0} ms",
            index.len(),
            index.receiving_len(),
            index.memory_bytes(),
            started.elapsed().as_secs_f64() * 1000.0
        );
    }
    // Fixing reads, rewrites and re-checks files: always done afresh.
    let cache_file =
        if args.no_cache || args.fix || args.diff { None } else { CacheFile::open(cache_dir(&args), &gpu, &command_line, index.digest()) };
    let cache = cache_file.as_ref().map(CacheFile::entries);
    // Only JSON (and the details under text) shows the fixes, only text the source lines.
    let needs = if args.statistics {
        // (The fixes are counted.)
        Needs { snippets: false, fixes: true }
    } else {
        Needs {
            snippets: args.format == Format::Text,
            fixes: args.format == Format::Json || (args.show_details && matches!(args.format, Format::Text | Format::Concise)),
        }
    };

    let progress = progress_bar(files.len());
    let problems_found = Mutex::new(Vec::new());
    let mut checked: Vec<Checked> = files
        .par_iter()
        .zip(&modules)
        // Each worker reads every file into one buffer, grown to the largest
        // it has read: no allocation and no fresh pages per file.
        .map_init(Vec::new, |buffer, (path, module)| {
            let place = crate::project::place(&index, module);
            let run = Run { resolver: &resolver, gpu: &gpu, args: &args, cache: cache.as_ref(), needs };
            let result = check_file(path, buffer, run, place.as_ref());
            progress.inc(1);
            match result {
                Ok(checked) => Some(checked),
                Err(problem) => {
                    problems_found.lock().unwrap().push(problem);
                    None
                }
            }
        })
        .flatten()
        .collect();
    progress.finish_and_clear();
    problems.extend(problems_found.into_inner().unwrap());
    for e in resolver.errors.lock().unwrap().iter() {
        problems.push(Problem { path: String::new(), message: format!("invalid configuration: {e}") });
    }
    checked.sort_by(|a, b| a.report.path.cmp(&b.report.path));
    problems.sort_by(|a, b| a.path.cmp(&b.path));
    let (mut reports, cached): (Vec<FileReport>, Vec<_>) = checked.into_iter().map(|c| (c.report, c.cached)).unzip();
    let profiled = match &args.profile {
        Some(path) => match crate::profiled::apply(path, &mut reports) {
            Ok(p) => Some(p),
            Err(message) => {
                problems.push(Problem { path: String::new(), message: format!("--profile {message}") });
                None
            }
        },
        None => None,
    };

    let status = report(&args, &reports, &problems, &gpu, profiled.as_ref());
    // After the output, so the cache never delays it.
    drop(reports);
    if let Some(cache) = cache {
        let mut keys = HashSet::with_capacity(cached.len());
        let mut fresh = Vec::new();
        let mut analysed = 0;
        for (key, used) in cached.into_iter().flatten() {
            if let Analysed(entry) = used {
                analysed += 1;
                fresh.extend(entry.map(|e| (key.clone(), e)));
            }
            keys.insert(key);
        }
        if std::env::var("GPULENS_LOG").is_ok_and(|level| level.contains("debug") || level.contains("trace")) {
            eprintln!("gpulens: debug: cache {}: {} of {} files reused", cache.path().display(), keys.len() - analysed, keys.len());
        }
        cache.save(fresh, &keys, &paths);
    }
    status
}

/// Where the cache lives: `--cache-dir`, else `GPULENS_CACHE_DIR`, else
/// `.gpulens_cache` in the current directory.
fn cache_dir(args: &CheckArgs) -> PathBuf {
    args.cache_dir
        .clone()
        .or_else(|| std::env::var_os("GPULENS_CACHE_DIR").filter(|d| !d.is_empty()).map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from(cache::DEFAULT_DIR))
}

/// Prints the problems, then the diff or the findings; returns the exit status.
fn report(args: &CheckArgs, reports: &[FileReport], problems: &[Problem], gpu: &GpuProfile, profiled: Option<&crate::profiled::Profiled>) -> ExitCode {
    let mut stderr = std::io::stderr().lock();
    for p in problems {
        let _ = if p.path.is_empty() {
            writeln!(stderr, "gpulens: error: {}", p.message)
        } else {
            writeln!(stderr, "gpulens: error: {}: {}", p.path, p.message)
        };
    }
    let checked = reports.len();
    let findings: usize = reports.iter().map(|r| r.findings.len()).sum();
    // Many small writes: buffered, not a system call per line.
    let mut stdout = BufWriter::new(std::io::stdout().lock());
    let changed: Vec<&FileReport> = reports.iter().filter(|r| r.fixed.is_some()).collect();
    let fixes: usize = changed.iter().filter_map(|r| r.fixed).sum();
    if args.diff {
        for r in &changed {
            let Some((before, after)) = &r.diff else { continue };
            // A notebook's cells, each as Python; else the file's lines.
            let cells = is_notebook(Path::new(&r.path)).then(|| crate::notebook::cell_diff(&r.path, before, after)).flatten();
            let written = match cells {
                Some(cells) => write!(stdout, "{cells}"),
                None => {
                    let diff = similar::TextDiff::from_lines(before.as_str(), after.as_str());
                    let a = format!("a/{}", r.path);
                    let b = format!("b/{}", r.path);
                    write!(stdout, "{}", diff.unified_diff().context_radius(3).header(&a, &b))
                }
            };
            if written.is_err() {
                return ExitCode::from(2);
            }
        }
        let _ = stdout.flush();
        let files = if changed.len() == 1 { "file" } else { "files" };
        let _ = writeln!(
            stderr,
            "gpulens: {fixes} fix{} would change {} {files}{}",
            if fixes == 1 { "" } else { "es" },
            changed.len(),
            if args.fix { "" } else { " (safe and unsafe; `--fix` applies the safe ones, `--fix --unsafe-fixes` all)" }
        );
        return if !problems.is_empty() {
            ExitCode::from(2)
        } else if changed.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        };
    }
    if args.fix {
        let files = if changed.len() == 1 { "file" } else { "files" };
        let _ = writeln!(stderr, "gpulens: applied {fixes} fix{} in {} {files}", if fixes == 1 { "" } else { "es" }, changed.len());
    }
    let written = match args.format {
        _ if args.statistics => output::statistics(&mut stdout, reports, args.format == Format::Json),
        Format::Text | Format::Concise => output::text(&mut stdout, reports, checked, args.show_details, profiled),
        Format::Json => output::json(&mut stdout, reports, gpu, profiled),
        Format::Sarif => output::sarif(&mut stdout, reports, problems),
        Format::Github => output::github(&mut stdout, reports, problems),
    };
    if written.and_then(|_| stdout.flush()).is_err() {
        return ExitCode::from(2);
    }
    if !problems.is_empty() {
        ExitCode::from(2)
    } else if findings > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// What every file of one run of `check` is checked with.
#[derive(Clone, Copy)]
struct Run<'a, 'c> {
    resolver: &'a Resolver,
    gpu: &'a GpuProfile,
    args: &'a CheckArgs,
    cache: Option<&'a Cache<'c>>,
    needs: Needs,
}

fn check_file(path: &Path, bytes: &mut Vec<u8>, run: Run<'_, '_>, place: Option<&gpulens_diagnostics::project::Place>) -> Result<Checked, Problem> {
    let Run { resolver, gpu, args, cache, needs } = run;
    let shown = display_path(path);
    let problem = |message: String| Problem { path: shown.clone(), message };
    bytes.clear();
    std::fs::File::open(path).and_then(|mut f| f.read_to_end(bytes)).map_err(|e| problem(e.to_string()))?;
    let bytes = bytes.as_slice();
    if is_notebook(path) {
        return check_notebook(path, bytes, run, shown);
    }
    let settings = resolver.settings_for(path);
    let lookup = cache.map(|c| c.lookup(path, bytes, &settings));
    if let Some(known) = cache.zip(lookup.as_ref()).and_then(|(c, l)| c.get(l, needs.fixes)) {
        // The same bytes under the same settings, GPU and build: the rules
        // would find what they found last time. Only a file with findings
        // needs its text, for the positions and source lines.
        let text = if known.is_empty() { Some(Cow::Borrowed("")) } else { gpulens_syntax::decode(bytes).ok() };
        if let Some(text) = text {
            let report = FileReport { path: shown, findings: report::locate(known, &text, needs), fixed: None, diff: None };
            return Ok(Checked { report, cached: lookup.map(|l| (l.path, Reused)) });
        }
    }
    // (Borrowed from the worker's buffer where the file is UTF-8: copied
    // only when a fix rewrites it.)
    let mut text: Cow<'_, str> = gpulens_syntax::decode(bytes).map_err(|e| problem(e.to_string()))?;
    let candidate = gpulens_diagnostics::might_have_findings(&text) || place.is_some_and(|p| p.reads_index(&text));
    let (mut fixed, mut diff) = (None, None);
    if candidate && (args.fix || args.diff) {
        // `--diff` alone previews every fix; with `--fix` it previews what would be written.
        let unsafe_fixes = args.unsafe_fixes || !args.fix;
        let result = gpulens_diagnostics::fix_all(&text, &settings, gpu, unsafe_fixes);
        if result.refused > 0 {
            eprintln!("gpulens: warning: {shown}: a fix would have added a syntax error; it was not applied (please report this)");
        }
        if result.applied > 0 && result.text != text {
            if !args.diff {
                write_fixed(path, bytes, &result.text).map_err(problem)?;
            }
            fixed = Some(result.applied);
            let before = std::mem::replace(&mut text, Cow::Owned(result.text));
            if args.diff {
                diff = Some((before.into_owned(), text.to_string()));
            }
        }
    }
    let (records, fixes) = if candidate { analyse(&text, &settings, gpu, needs.fixes || cache.is_some(), place) } else { (Vec::new(), true) };
    // The findings of a fixed text are not those of the bytes read: nothing
    // is cached when fixing (no cache is opened then either).
    let cached = lookup.filter(|_| fixed.is_none()).map(|l| {
        let entry = Cache::entry(&l, &records, fixes);
        (l.path, Analysed(entry))
    });
    let report = FileReport { path: shown, findings: report::locate(records, &text, needs), fixed, diff };
    Ok(Checked { report, cached })
}

/// A Jupyter notebook, by its name.
pub fn is_notebook(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "ipynb")
}

/// Checks a notebook: its Python cells in order, as one module (not one
/// other modules import: it has no place in the project index).
fn check_notebook(path: &Path, bytes: &[u8], run: Run<'_, '_>, shown: String) -> Result<Checked, Problem> {
    let Run { resolver, gpu, args, cache, needs } = run;
    let problem = |message: String| Problem { path: shown.clone(), message };
    let mut notebook = gpulens_syntax::notebook::Notebook::read(bytes).map_err(problem)?;
    // What the saved outputs show of sizes (only as they were when read:
    // fixes change code, not outputs).
    let sizes = notebook
        .recorded_sizes()
        .into_iter()
        .map(|(name, rows, elements)| gpulens_diagnostics::RecordedSize { name, rows, elements })
        .collect();
    let facts = std::sync::Arc::new(gpulens_diagnostics::NotebookFacts { sizes });
    let settings = gpulens_diagnostics::Settings { notebook: Some(facts), ..(*resolver.settings_for(path)).clone() };
    let lookup = cache.map(|c| c.lookup(path, bytes, &settings));
    if let Some(known) = cache.zip(lookup.as_ref()).and_then(|(c, l)| c.get(l, needs.fixes)) {
        let report = FileReport { path: shown, findings: report::locate_in_notebook(known, &notebook, needs), fixed: None, diff: None };
        return Ok(Checked { report, cached: lookup.map(|l| (l.path, Reused)) });
    }
    let candidate = gpulens_diagnostics::might_have_findings(&notebook.python);
    let (mut fixed, mut diff) = (None, None);
    if candidate && (args.fix || args.diff) {
        let unsafe_fixes = args.unsafe_fixes || !args.fix;
        let result = gpulens_diagnostics::fix_all(&notebook.python, &settings, gpu, unsafe_fixes);
        if result.refused > 0 {
            eprintln!("gpulens: warning: {shown}: a fix would have added a syntax error; it was not applied (please report this)");
        }
        if result.applied > 0 && (result.text != notebook.python || !result.cells.is_empty()) {
            // (A notebook is UTF-8 JSON: `read` refused anything else.)
            let file = std::str::from_utf8(bytes).map_err(|e| problem(e.to_string()))?;
            let written = crate::notebook::write_back(file, &notebook, &result.text, &result.cells).map_err(problem)?;
            if !args.diff {
                write_fixed(path, bytes, &written).map_err(problem)?;
            }
            fixed = Some(result.applied);
            notebook = gpulens_syntax::notebook::Notebook::read(written.as_bytes()).map_err(problem)?;
            if args.diff {
                diff = Some((file.to_string(), written));
            }
        }
    }
    let (records, fixes) =
        if candidate { analyse(&notebook.python, &settings, gpu, needs.fixes || cache.is_some(), None) } else { (Vec::new(), true) };
    let cached = lookup.filter(|_| fixed.is_none()).map(|l| {
        let entry = Cache::entry(&l, &records, fixes);
        (l.path, Analysed(entry))
    });
    let report = FileReport { path: shown, findings: report::locate_in_notebook(records, &notebook, needs), fixed, diff };
    Ok(Checked { report, cached })
}

/// Runs the rules over `text`, working out the fixes only when they are
/// shown or kept (a cached entry is complete, whatever output reads it
/// next); returns the findings and whether they carry their fixes.
fn analyse(text: &str, settings: &Settings, gpu: &GpuProfile, fixes: bool, place: Option<&gpulens_diagnostics::project::Place>) -> (Vec<Finding>, bool) {
    (gpulens_diagnostics::check_text_in(text, settings, gpu, place, fixes), fixes)
}

/// Writes the fixed text over `path`, in the file's own encoding, through a
/// temporary file and a rename (so a crash leaves the old file or the new
/// one, never half of each), and only if the file still holds what was read.
fn write_fixed(path: &Path, read: &[u8], text: &str) -> Result<(), String> {
    let bytes = encode_like(read, text)
        .ok_or("the fixed text cannot be written in the file's declared encoding; file left unchanged")?;
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(|e| format!("cannot write the fix: {e}"))?;
    temp.write_all(&bytes).and_then(|_| temp.as_file().sync_all()).map_err(|e| format!("cannot write the fix: {e}"))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(temp.path(), meta.permissions());
    }
    match std::fs::read(path) {
        Ok(now) if now == read => {}
        Ok(_) => return Err("the file changed while it was being fixed; left unchanged".into()),
        Err(e) => return Err(format!("cannot re-read before writing the fix: {e}")),
    }
    temp.persist(path).map_err(|e| format!("cannot replace the file with its fixed text: {}", e.error))?;
    Ok(())
}

/// `text` in the encoding `original` was in: UTF-8 (keeping a BOM), or the
/// one its coding line declares, verified by decoding the result again.
fn encode_like(original: &[u8], text: &str) -> Option<Vec<u8>> {
    if let Some(rest) = original.strip_prefix(b"\xEF\xBB\xBF") {
        let _ = rest;
        let mut out = b"\xEF\xBB\xBF".to_vec();
        out.extend_from_slice(text.as_bytes());
        return Some(out);
    }
    if std::str::from_utf8(original).is_ok() {
        return Some(text.as_bytes().to_vec());
    }
    // Latin-1 maps code points 0–255 to one byte each; other declared
    // encodings are accepted when this mapping round-trips.
    let bytes: Option<Vec<u8>> = text.chars().map(|c| u8::try_from(u32::from(c)).ok()).collect();
    let bytes = bytes?;
    (gpulens_syntax::decode(&bytes).ok()?.as_ref() == text).then_some(bytes)
}

/// Expands the given paths into Python files. Folders are walked in
/// parallel, honouring .gitignore, .ignore and hidden-file conventions; files
/// named explicitly are always checked.
fn discover(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<Problem>) {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    let mut roots = Vec::new();
    for path in paths {
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => roots.push(path.clone()),
            Ok(_) => files.push(path.clone()),
            Err(e) => problems.push(Problem { path: display_path(path), message: e.to_string() }),
        }
    }
    if let Some((first, rest)) = roots.split_first() {
        let mut builder = ignore::WalkBuilder::new(first);
        for root in rest {
            builder.add(root);
        }
        builder.require_git(false);
        let found = Mutex::new(Vec::new());
        let walk_problems = Mutex::new(Vec::new());
        builder.build_parallel().run(|| {
            Box::new(|entry| {
                match entry {
                    Ok(entry) => {
                        let is_file = entry.file_type().is_some_and(|t| t.is_file());
                        if is_file && entry.path().extension().is_some_and(|e| e == "py" || e == "ipynb") {
                            found.lock().unwrap().push(entry.into_path());
                        }
                    }
                    Err(e) => walk_problems.lock().unwrap().push(Problem { path: String::new(), message: e.to_string() }),
                }
                ignore::WalkState::Continue
            })
        });
        files.extend(found.into_inner().unwrap());
        problems.extend(walk_problems.into_inner().unwrap());
    }
    files.sort();
    files.dedup();
    (files, problems)
}

fn display_path(path: &Path) -> String {
    let path = path.strip_prefix("./").unwrap_or(path);
    path.to_string_lossy().replace('\\', "/")
}

fn progress_bar(files: usize) -> indicatif::ProgressBar {
    // Only worth drawing for long runs, and only for a person watching.
    if files < 500 || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(files as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} checking {pos}/{len} files {wide_bar} {eta}")
            .expect("valid template"),
    );
    bar
}
