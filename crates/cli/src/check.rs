//! `gpulens check`: find the files, check them in parallel, report.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;

use gpulens_diagnostics::Finding;
use gpulens_gpu::GpuProfile;
use gpulens_syntax::LineIndex;
use rayon::prelude::*;

use crate::config::{Overrides, Resolver};
use crate::output;
use crate::{CheckArgs, Format};

/// The result of checking one file.
pub struct FileReport {
    /// As shown to the user: relative to where gpulens was started when possible.
    pub path: String,
    pub text: String,
    pub line_index: LineIndex,
    pub findings: Vec<Finding>,
}

/// Something that stopped a file (or path) from being checked.
pub struct Problem {
    pub path: String,
    pub message: String,
}

pub fn run(args: CheckArgs) -> ExitCode {
    let paths = if args.paths.is_empty() { vec![PathBuf::from(".")] } else { args.paths.clone() };
    let (files, mut problems) = discover(&paths);
    let resolver = Resolver::new(Overrides { select: args.select.clone(), ignore: args.ignore.clone() });
    // A target named on the command line or in the pyproject.toml of the first
    // path wins; else the attached GPU (NVML); else none.
    let target = args.target_gpu.clone().or_else(|| resolver.target_gpu(paths.first().map(PathBuf::as_path)));
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

    let progress = progress_bar(files.len());
    let problems_found = Mutex::new(Vec::new());
    let mut reports: Vec<FileReport> = files
        .par_iter()
        .filter_map(|path| {
            let result = check_file(path, &resolver, &gpu);
            progress.inc(1);
            match result {
                Ok(report) => Some(report),
                Err(problem) => {
                    problems_found.lock().unwrap().push(problem);
                    None
                }
            }
        })
        .collect();
    progress.finish_and_clear();
    problems.extend(problems_found.into_inner().unwrap());
    for e in resolver.errors.lock().unwrap().iter() {
        problems.push(Problem { path: String::new(), message: format!("invalid configuration: {e}") });
    }
    reports.sort_by(|a, b| a.path.cmp(&b.path));
    problems.sort_by(|a, b| a.path.cmp(&b.path));

    let mut stderr = std::io::stderr().lock();
    for p in &problems {
        let _ = if p.path.is_empty() {
            writeln!(stderr, "gpulens: error: {}", p.message)
        } else {
            writeln!(stderr, "gpulens: error: {}: {}", p.path, p.message)
        };
    }
    let checked = reports.len();
    let findings: usize = reports.iter().map(|r| r.findings.len()).sum();
    let mut stdout = std::io::stdout().lock();
    let written = match args.format {
        Format::Text => output::text(&mut stdout, &reports, checked),
        Format::Json => output::json(&mut stdout, &reports, &gpu),
        Format::Sarif => output::sarif(&mut stdout, &reports, &problems),
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

fn check_file(path: &Path, resolver: &Resolver, gpu: &GpuProfile) -> Result<FileReport, Problem> {
    let shown = display_path(path);
    let problem = |message: String| Problem { path: shown.clone(), message };
    let bytes = std::fs::read(path).map_err(|e| problem(e.to_string()))?;
    let text = gpulens_syntax::decode(&bytes).map_err(|e| problem(e.to_string()))?.into_owned();
    let settings = resolver.settings_for(path);
    let findings = if gpulens_diagnostics::might_have_findings(&text, gpulens_knowledge::Knowledge::get()) {
        let tree = gpulens_syntax::parse(&text);
        gpulens_diagnostics::check(&text, &tree, &settings, gpu)
    } else {
        Vec::new()
    };
    let line_index = LineIndex::new(&text);
    Ok(FileReport { path: shown, text, line_index, findings })
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
                        if is_file && entry.path().extension().is_some_and(|e| e == "py") {
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
