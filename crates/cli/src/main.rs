//! `gpulens`: the command line. Parses arguments, finds files, reads
//! configuration, runs the checks and prints the results. Rule internals
//! live in `gpulens-diagnostics`.

mod cache;
mod check;
mod config;
mod notebook;
mod output;
mod profiled;
mod project;
mod report;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use gpulens_diagnostics::{rule, RULES};
use gpulens_knowledge::Knowledge;

#[derive(Parser)]
#[command(name = "gpulens", version, about = "Finds the Python code an NVIDIA GPU library would speed up, and says how.")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the language server on stdin/stdout (editors start this).
    Serve {
        /// Accepted for editors that always pass it; stdio is the only transport.
        #[arg(long)]
        stdio: bool,
    },
    /// Check files or folders (folders are walked; .gitignore is respected).
    Check(CheckArgs),
    /// What NVML sees, and the GPU profile the advice will use.
    Gpu {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Report the profile for this GPU instead of the attached one.
        #[arg(long)]
        target_gpu: Option<String>,
    },
    /// List every rule: code, library, summary.
    Rules {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Show a rule's full documentation.
    Explain {
        /// A rule code such as CUPY001.
        code: String,
    },
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Debug)]
pub enum Format {
    /// For people: each finding with its source line.
    Text,
    /// One line per finding, without the source line.
    Concise,
    Json,
    Sarif,
    /// GitHub Actions workflow commands: one annotation per finding.
    Github,
}

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// Files or folders to check [default: .]
    pub paths: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Rule codes or prefixes to run, comma-separated (e.g. CUPY,CUML001). Replaces `select` from pyproject.toml.
    #[arg(long, value_delimiter = ',')]
    pub select: Option<Vec<String>>,
    /// Rule codes or prefixes to skip, comma-separated. Added to `ignore` from pyproject.toml.
    #[arg(long, value_delimiter = ',')]
    pub ignore: Vec<String>,
    /// Advise for this GPU (e.g. "H100", "RTX 4090", "T4") instead of the attached one.
    #[arg(long)]
    pub target_gpu: Option<String>,
    /// Apply the safe fixes to the files (and report what remains).
    #[arg(long)]
    pub fix: bool,
    /// With --fix: apply the unsafe fixes too (rewrites whose behaviour can differ: numerics, where data lives, new dependencies).
    #[arg(long)]
    pub unsafe_fixes: bool,
    /// Print the fixes as a unified diff and change nothing. Alone it shows every fix, safe and unsafe;
    /// with --fix it shows exactly what --fix (with or without --unsafe-fixes) would write.
    #[arg(long)]
    pub diff: bool,
    /// Neither read nor write the cache of earlier results.
    #[arg(long)]
    pub no_cache: bool,
    /// Keep the cache here [default: $GPULENS_CACHE_DIR, else .gpulens_cache].
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Under each finding, say why, the caveats, the expected speedup and the install line, and what its fix does.
    #[arg(long)]
    pub show_details: bool,
    /// Print how many findings each rule and library has, instead of the findings (as JSON with --format json).
    #[arg(long)]
    pub statistics: bool,
    /// Rank the findings by the run time a profile of your program measured: a cProfile file
    /// (`python -m cProfile -o run.prof`), py-spy's speedscope JSON or Scalene's JSON.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
}

// mimalloc for Rust's allocations and tree-sitter's: parsing and walking
// allocate and free many small nodes, and glibc's malloc and free took a
// tenth of a cold check's time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_arena_eager_commit` (its place in `mi_option_t`,
/// which the bindings don't name).
#[cfg(target_os = "linux")]
const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;

/// Commits mimalloc's arena memory as it is used rather than all at once
/// (which cost the server 2 ms and 11 MB before it answered `initialize`).
/// An option only takes effect before mimalloc's first arena, which Rust's
/// runtime makes before `main`: so this runs as the program is loaded.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static COMMIT_AS_USED: extern "C" fn() = {
    extern "C" fn commit_as_used() {
        // SAFETY: sets one option of mimalloc's table; nothing runs yet.
        unsafe { libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0) }
    }
    commit_as_used
};

fn main() -> ExitCode {
    // SAFETY: set before any tree-sitter object exists; mimalloc's
    // functions are thread-safe and have the C allocator's signatures.
    unsafe {
        tree_sitter::set_allocator(Some(tree_sitter::Allocator {
            malloc: libmimalloc_sys::mi_malloc,
            calloc: libmimalloc_sys::mi_calloc,
            realloc: libmimalloc_sys::mi_realloc,
            free: libmimalloc_sys::mi_free,
        }));
    }
    let cli = Cli::parse();
    match cli.command {
        Command::Serve { .. } => gpulens_server::run(),
        Command::Check(args) => check::run(args),
        Command::Gpu { json, target_gpu } => gpu_report(json, target_gpu.as_deref()),
        Command::Rules { json } => print_rules(json),
        Command::Explain { code } => explain(&code),
    }
}

fn gpu_report(json: bool, target: Option<&str>) -> ExitCode {
    let report = match gpulens_gpu::probe().with_target(target) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("gpulens: error: {e}");
            return ExitCode::from(2);
        }
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&report).expect("the report serialises"));
        return ExitCode::SUCCESS;
    }
    match (&report.nvml.error, report.devices.is_empty()) {
        (Some(e), _) => println!("No NVIDIA GPU found: NVML is not available ({e})."),
        (None, true) => println!("No NVIDIA GPU found: NVML works, but reports no devices."),
        (None, false) => println!(
            "NVIDIA driver {}, CUDA {}; {} device(s):",
            report.nvml.driver_version.as_deref().unwrap_or("?"),
            report.nvml.cuda_driver_version.as_deref().unwrap_or("?"),
            report.devices.len()
        ),
    }
    for d in &report.devices {
        let gb = |b: Option<u64>| b.map_or("?".into(), |b| format!("{:.1} GB", b as f64 / 1e9));
        println!(
            "  [{}] {} — compute capability {}, {} ({} free), {} SMs, {} memory bandwidth, PCIe gen {} x{}{}",
            d.index,
            d.name,
            d.compute_capability.as_deref().unwrap_or("?"),
            gb(d.memory_total_bytes),
            gb(d.memory_free_bytes),
            d.multiprocessor_count.map_or("?".into(), |n| n.to_string()),
            d.peak_memory_bandwidth_gbs.map_or("?".into(), |b| format!("{b:.0} GB/s")),
            d.pcie_generation.map_or("?".into(), |g| g.to_string()),
            d.pcie_width.map_or("?".into(), |w| w.to_string()),
            d.fp64_divisor.map_or(String::new(), |f| format!(", FP64 at 1/{f} of FP32")),
        );
    }
    let p = &report.profile;
    match p.source {
        gpulens_gpu::ProfileSource::None => {
            println!("Advice is generic. Use --target-gpu NAME (or target-gpu in [tool.gpulens]) to tune it to a GPU.")
        }
        source => println!(
            "Advice is tuned for {} ({}{}).",
            p.name.as_deref().unwrap_or("?"),
            if source == gpulens_gpu::ProfileSource::Target { "target" } else { "attached" },
            p.compute_capability.as_deref().map(|c| format!(", compute capability {c}")).unwrap_or_default()
        ),
    }
    ExitCode::SUCCESS
}

fn print_rules(json: bool) -> ExitCode {
    let mut out = std::io::stdout().lock();
    let result = if json {
        let rules: Vec<_> = RULES.iter().copied().map(output::rule_json).collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&rules).expect("rules serialise"))
    } else {
        RULES.iter().try_for_each(|r| writeln!(out, "{:<11} {:<8} {}", r.code, r.library, r.summary))
    };
    if result.is_err() {
        return ExitCode::from(2); // stdout closed
    }
    ExitCode::SUCCESS
}

fn explain(code: &str) -> ExitCode {
    let Some(rule) = rule(code) else {
        eprintln!("gpulens: error: no rule {code:?}; `gpulens rules` lists them");
        return ExitCode::from(2);
    };
    let lib = Knowledge::get().library(rule.library).expect("rules name known libraries");
    let indent = |s: &str| s.lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n");
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({}) — {}\n\nLibrary: {} — {}\nDefault severity: {}{}\n\n## What it finds\n{}\n\n## Why\n{}\n\n## Example\n{}\n\n## Use instead\n{}\n\n\
         ## Install\n{}",
        rule.code,
        rule.name,
        rule.summary,
        lib.name,
        lib.docs,
        rule.severity.as_str(),
        if rule.fix { "\nFix: sometimes available (`gpulens check --fix`, or the editor's quick fix)" } else { "" },
        rule.what(),
        rule.why(),
        indent(rule.example()),
        indent(rule.use_instead()),
        lib.install_for(None, None).phrase().replace('`', ""),
    );
    if let Some(note) = &lib.install_note {
        let _ = writeln!(out, "{}", words(note));
    }
    if let Some(successor) = &lib.successor {
        let _ = writeln!(out, "\nStatus: {}. {}", lib.status.as_str(), words(successor));
    }
    if let Some(legacy) = &lib.legacy {
        let _ = writeln!(
            out,
            "\nOlder package: {} ({}): {} Install: {}.",
            legacy.name,
            legacy.status.as_str(),
            words(&legacy.when),
            legacy.install_for(None, None).phrase().replace('`', "")
        );
    }
    let _ = writeln!(out, "\n## Checked\nThe status and install facts above were last checked on {}, against:", lib.checked);
    for source in &lib.sources {
        let _ = writeln!(out, "- {source}");
    }
    for r in &lib.requires {
        let _ = writeln!(out, "- {} {}: requires {} (its package metadata)", r.package, r.release, r.needs);
    }
    let _ = writeln!(out);
    // A closed pipe (`gpulens explain X | head`) is not an error worth a panic.
    if std::io::stdout().lock().write_all(out.as_bytes()).is_err() {
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}
