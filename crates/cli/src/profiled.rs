//! `check --profile FILE`: the findings placed in the profile of the user's
//! program, and the hot code that has none. The profile's formats and the
//! matching of its paths are `gpulens_diagnostics::profile`'s; this reads
//! the files and joins the two.

use std::path::{Path, PathBuf};

use gpulens_diagnostics::profile::{self, Measured, Profile, Silence};

use crate::report::FileReport;

/// A share of the run below which a function without findings is not named.
const HOT: f64 = 0.01;
/// How many such functions are named at most.
const MOST_HOT: usize = 10;

/// What `--profile` adds to a run's output.
pub struct Profiled {
    /// The profile's path, as given.
    pub path: String,
    pub format: profile::Format,
    pub unit: profile::Unit,
    pub total: f64,
    /// How many checked files the profile measured.
    pub files: usize,
    /// Functions of the checked files the profile says are hot and that have no finding.
    pub hot: Vec<Hot>,
}

/// A hot function gpulens has no advice for, and why.
pub struct Hot {
    pub path: String,
    pub line: u32,
    pub function: String,
    pub measured: Measured,
    pub reason: Silence,
}

/// Reads the profile at `path` and places every finding of `reports` in
/// it. An unreadable profile, or one that measured none of the checked
/// files, is an error (the findings are then shown unranked by the caller).
pub fn apply(path: &Path, reports: &mut [FileReport]) -> Result<Profiled, String> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| format!("{shown}: {e}"))?;
    let profile = Profile::read(&bytes).map_err(|e| format!("{shown}: {e}"))?;
    let absolute: Vec<String> = reports.iter().map(|r| absolute(&r.path)).collect();
    let checked: Vec<&str> = absolute.iter().map(String::as_str).collect();
    let names = profile.files();
    let matched = profile::match_paths(&names, &checked);
    if matched.is_empty() {
        // (Named: the program's own files before the Python installation's.)
        let installed = |n: &&str| n.contains("/lib/python") || n.contains("-packages");
        let mut own: Vec<&str> = names.iter().copied().filter(|n| !n.starts_with('<') && *n != "~").collect();
        own.sort_by_key(|n| installed(n));
        let some: Vec<&str> = own.into_iter().take(3).collect();
        return Err(format!(
            "{shown}: the {} profile measured none of the checked files (it names {}{})",
            profile.format.name(),
            some.join(", "),
            if names.len() > some.len() { ", …" } else { "" }
        ));
    }
    let mut hot = Vec::new();
    let mut files = 0;
    for (i, report) in reports.iter_mut().enumerate() {
        let of_file: Vec<&str> = matched.iter().filter(|(_, c)| **c == i).map(|(p, _)| p.as_str()).collect();
        // (A notebook's cells have no lines a profile of a script names.)
        if of_file.is_empty() || crate::check::is_notebook(Path::new(&report.path)) {
            continue;
        }
        files += 1;
        let Some(text) = std::fs::read(&report.path).ok().and_then(|b| gpulens_syntax::decode(&b).ok().map(|t| t.into_owned())) else {
            continue;
        };
        let tree = gpulens_syntax::parse(&text);
        let functions = profile::functions(&text, &tree);
        let costs = profile.costs_of_any(&of_file);
        let measured = profile::measure_ranges(&costs, &text, &tree, &functions, report.findings.iter().map(|f| f.record.range.clone()));
        for (f, m) in report.findings.iter_mut().zip(measured) {
            f.profile = m;
        }
        for function in &functions {
            let Some(measured) = costs.measure_function(function).filter(|m| m.share >= HOT) else { continue };
            if report.findings.iter().any(|f| function.range.contains(&f.record.range.start)) {
                continue;
            }
            let calls_own = functions.iter().any(|other| {
                other.name != function.name && text[function.range.clone()].contains(&format!("{}(", other.name))
            });
            hot.push(Hot {
                path: report.path.clone(),
                line: function.def_line,
                function: function.name.clone(),
                measured,
                reason: profile::silence(&text, &tree, function, calls_own),
            });
        }
    }
    hot.sort_by(|a, b| b.measured.share.total_cmp(&a.measured.share).then_with(|| a.path.cmp(&b.path)).then(a.line.cmp(&b.line)));
    hot.truncate(MOST_HOT);
    Ok(Profiled { path: shown, format: profile.format, unit: profile.unit, total: profile.total, files, hot })
}

/// A shown path made absolute (for matching against a profile's paths).
fn absolute(path: &str) -> String {
    let p = PathBuf::from(path);
    std::fs::canonicalize(&p)
        .or_else(|_| std::env::current_dir().map(|d| d.join(&p)))
        .map_or_else(|_| path.to_string(), |p| p.to_string_lossy().into_owned())
}

impl Profiled {
    /// "cProfile, 11.7 s", "speedscope (py-spy), 2.2 s", "Scalene".
    pub fn describe(&self) -> String {
        match self.unit {
            profile::Unit::Seconds => format!("{}, {:.1} s", self.format.name(), self.total),
            profile::Unit::Samples => format!("{}, {:.0} samples", self.format.name(), self.total),
            profile::Unit::Percent => self.format.name().to_string(),
        }
    }
}
