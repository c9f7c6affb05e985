//! The GPU that advice is tuned to.
//!
//! A [`GpuProfile`] describes either the device attached to this machine or a
//! GPU the user names as their target; with neither, advice stays generic.
//! This crate knows nothing of rules, syntax or editors.

use serde::Serialize;

/// Where the profile came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ProfileSource {
    /// Read from the attached device.
    Nvml,
    /// Named by the user (`--target-gpu`, `target-gpu` setting).
    Target,
    /// No GPU known: advice is generic.
    #[default]
    None,
}

/// What the advice knows about the GPU it is for.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct GpuProfile {
    pub source: ProfileSource,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// "major.minor", e.g. "9.0".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compute_capability: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// The CUDA major version the driver supports (12, 13…), which picks install lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda_major: Option<u32>,
}

impl GpuProfile {
    /// No GPU known.
    pub fn none() -> Self {
        GpuProfile::default()
    }
}
