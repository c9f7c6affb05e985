//! `gpulens`: the command line. Parses arguments, finds files, reads
//! configuration, runs the checks and prints the results. Rule internals
//! live in `gpulens-diagnostics`.

mod check;
mod config;
mod output;

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
    Text,
    Json,
    Sarif,
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve { .. } => gpulens_server::run(),
        Command::Check(args) => check::run(args),
        Command::Rules { json } => print_rules(json),
        Command::Explain { code } => explain(&code),
    }
}

fn print_rules(json: bool) -> ExitCode {
    let mut out = std::io::stdout().lock();
    let result = if json {
        let rules: Vec<_> = RULES.iter().map(output::rule_json).collect();
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
    println!(
        "{} ({}) — {}\n\nLibrary: {} — {}\nDefault severity: {}\n\n## What it finds\n{}\n\n## Why\n{}\n\n## Example\n{}\n\n## Use instead\n{}\n\n\
         Install: {}\n",
        rule.code,
        rule.name,
        rule.summary,
        lib.name,
        lib.docs,
        rule.severity.as_str(),
        rule.what,
        rule.why,
        indent(rule.example),
        indent(rule.use_instead),
        lib.install.cu13.as_ref().map_or(lib.install.cu12.clone(), |cu13| format!(
            "{} (CUDA 12) or {} (CUDA 13)",
            lib.install.cu12, cu13
        )),
    );
    ExitCode::SUCCESS
}
