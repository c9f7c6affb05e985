//! The GPU libraries themselves (`knowledge/libraries.toml`): where each
//! stands upstream, how to install it for a CUDA version and a card, what
//! it needs.

use super::*;

/// Where a library stands upstream; advice for anything but `Active` says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Active,
    Maintenance,
    Archived,
    Discontinued,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::Maintenance => "maintenance",
            Status::Archived => "archived",
            Status::Discontinued => "discontinued",
        }
    }
}

/// A value that differs between CUDA 12 and CUDA 13 systems.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerCuda<T> {
    pub cu12: T,
    pub cu13: Option<T>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZeroCodeChange {
    /// The mode's name, e.g. `cudf.pandas`.
    pub name: String,
    /// How to run an unchanged script with it.
    pub script: String,
    /// The line(s) to put at the top of a notebook.
    pub notebook: Option<String>,
    /// The code to add at the top of a program, before the CPU library is imported.
    pub code: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Library {
    /// Short id used in rule output: `cupy`, `cudf`, …
    pub id: String,
    /// Display name: `CuPy`, `cuDF`, …
    pub name: String,
    /// One line: what CPU code it replaces.
    pub replaces: String,
    /// A paragraph on what it is best at.
    pub summary: String,
    pub status: Status,
    /// Set when status is not active: what to use instead, and why.
    pub successor: Option<String>,
    pub docs: String,
    pub install: PerCuda<String>,
    /// Extra words about installing (a separate package index, wheels only on GitHub…).
    pub install_note: Option<String>,
    pub zero_code_change: Option<ZeroCodeChange>,
    /// Minimum compute capability, as "major.minor".
    pub min_compute_capability: PerCuda<String>,
    /// Minimum NVIDIA driver version (major), per CUDA major.
    pub min_driver: PerCuda<u32>,
    pub platforms: Option<String>,
    /// The statement that imports it in generated code, where gpulens writes
    /// one (`from numba_cuda_mlir import cuda`).
    pub import_line: Option<String>,
    /// Top-level Python modules of code that already runs on the GPU through
    /// it, which the `GPU…` rules check (transfers, synchronisation,
    /// kernels): `cupy`, `numba` (for `numba.cuda`), `numba_cuda_mlir`.
    #[serde(default)]
    pub gpu_modules: Vec<String>,
    /// When its status and install facts were last checked upstream (YYYY-MM-DD).
    pub checked: String,
    /// What they were checked against: repositories at a tag, docs pages,
    /// package metadata, each with the fact it gave.
    pub sources: Vec<String>,
    /// PyPI holds only a placeholder for its package (the real one is on
    /// another index); tests/knowledge/check_index.py holds this true.
    #[serde(default)]
    pub pypi_placeholder: bool,
    /// Dependency facts the advice relies on, checked against package
    /// metadata by tests/knowledge/check_index.py.
    #[serde(default)]
    pub requires: Vec<Requires>,
    /// An older package for the same API, still the right one in some cases.
    pub legacy: Option<Legacy>,
}

/// "Releases `release` of `package` depend on `needs`", as their metadata says.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requires {
    pub package: String,
    /// A version specifier selecting the releases (`>=26.8`).
    pub release: String,
    /// A requirement each of them declares (`pandas>=3.0.0`).
    pub needs: String,
}

/// The package a library's API came from before its current one (numba-cuda
/// before Numba-CUDA-MLIR), and when to use it still.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Legacy {
    pub name: String,
    pub status: Status,
    pub import_line: Option<String>,
    pub install: PerCuda<String>,
    pub min_compute_capability: PerCuda<String>,
    pub min_driver: PerCuda<u32>,
    /// When it is still the right choice, and what state it is in.
    pub when: String,
}

/// Which install line fits a machine: the CUDA major its driver runs and its
/// GPU's compute capability, when known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstallChoice<'k> {
    /// One line fits.
    One(&'k str),
    /// Nothing is known to choose by: the CUDA 12 and CUDA 13 lines.
    Both { cu12: &'k str, cu13: &'k str },
}

impl InstallChoice<'_> {
    /// "`uv add x`", or "`uv add x` (CUDA 12) or `uv add y` (CUDA 13)", as messages say it.
    pub fn phrase(&self) -> String {
        match self {
            InstallChoice::One(line) => format!("`{line}`"),
            InstallChoice::Both { cu12, cu13 } => format!("`{cu12}` (CUDA 12) or `{cu13}` (CUDA 13)"),
        }
    }
}

impl Library {
    /// The install line for a machine (see [`install_choice`]).
    pub fn install_for(&self, cuda_major: Option<u32>, cc: Option<(u32, u32)>) -> InstallChoice<'_> {
        install_choice(&self.install, &self.min_compute_capability, cuda_major, cc)
    }

    /// Every install line it shows anywhere: its own and its legacy package's.
    pub fn install_lines(&self) -> impl Iterator<Item = &str> {
        let own = std::iter::once(&self.install.cu12).chain(self.install.cu13.iter());
        let legacy = self.legacy.iter().flat_map(|l| std::iter::once(&l.install.cu12).chain(l.install.cu13.iter()));
        own.chain(legacy).map(String::as_str)
    }
}

impl Legacy {
    pub fn install_for(&self, cuda_major: Option<u32>, cc: Option<(u32, u32)>) -> InstallChoice<'_> {
        install_choice(&self.install, &self.min_compute_capability, cuda_major, cc)
    }
}

/// The CUDA 13 line where the driver runs CUDA 13 and the GPU meets the
/// CUDA 13 build's minimum (CUDA 13 dropped GPUs older than Turing, so a
/// CUDA 13 driver on such a GPU still needs the CUDA 12 build); the CUDA 12
/// line on a CUDA 12 driver or where there is no CUDA 13 build; both when
/// nothing is known.
pub fn install_choice<'k>(
    install: &'k PerCuda<String>,
    min_cc: &PerCuda<String>,
    cuda_major: Option<u32>,
    cc: Option<(u32, u32)>,
) -> InstallChoice<'k> {
    let cu13_runs = min_cc.cu13.as_deref().and_then(parse_cc).zip(cc).is_none_or(|(min, cc)| cc >= min);
    let cu13 = install.cu13.as_deref().filter(|_| cu13_runs);
    match (cuda_major, cu13) {
        (Some(13..), Some(cu13)) => InstallChoice::One(cu13),
        (Some(_), _) | (None, None) => InstallChoice::One(&install.cu12),
        (None, Some(cu13)) => InstallChoice::Both { cu12: &install.cu12, cu13 },
    }
}

/// "7.5" → (7, 5).
pub fn parse_cc(cc: &str) -> Option<(u32, u32)> {
    let (major, minor) = cc.split_once('.')?;
    Some((major.trim().parse().ok()?, minor.trim().parse().ok()?))
}
