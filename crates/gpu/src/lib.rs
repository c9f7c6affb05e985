//! The GPU that advice is tuned to.
//!
//! [`probe`] asks NVML (loaded at run time, so gpulens runs anywhere) what
//! is attached; [`GpuProfile`] is what the rules use: the attached device, a
//! GPU the user targets (looked up in the knowledge base's hardware table),
//! or nothing. This crate knows nothing of rules, syntax or editors.

use gpulens_knowledge::{GpuModel, Knowledge};
use serde::{Deserialize, Serialize};

/// Where the profile came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct GpuProfile {
    pub source: ProfileSource,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub name: Option<String>,
    /// "major.minor", e.g. "9.0".
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub compute_capability: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub memory_bytes: Option<u64>,
    /// The CUDA major version the driver supports (12, 13…), which picks install lines.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cuda_major: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub architecture: Option<String>,
    /// FP32 throughput / FP64 throughput (2 on A100/H100, 64 on RTX 40).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub fp64_divisor: Option<u32>,
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub tensor_core_types: Vec<String>,
    /// Peak memory bandwidth, GB/s.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub memory_bandwidth_gbs: Option<f64>,
    /// GPUs attached (1 for a target).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub device_count: Option<u32>,
}

impl GpuProfile {
    /// No GPU known.
    pub fn none() -> Self {
        GpuProfile::default()
    }

    /// The profile of a GPU from the hardware table.
    pub fn from_model(model: &GpuModel, source: ProfileSource) -> Self {
        GpuProfile {
            source,
            name: Some(model.name.clone()),
            compute_capability: Some(model.compute_capability.clone()),
            memory_bytes: Some((model.memory_gb * 1e9) as u64),
            cuda_major: None,
            architecture: Some(model.architecture.clone()),
            fp64_divisor: Some(model.fp64_divisor),
            tensor_core_types: model.tensor_core_types.clone(),
            memory_bandwidth_gbs: Some(model.memory_bandwidth_gbs),
            device_count: Some(1),
        }
    }

    /// For the GPU the user names: "4090", "RTX 4090" and "GeForce RTX 4090"
    /// all find the RTX 4090.
    pub fn target(name: &str) -> Result<Self, String> {
        let knowledge = Knowledge::get();
        match knowledge.gpu_model(name) {
            Some(model) => Ok(Self::from_model(model, ProfileSource::Target)),
            None => {
                let known: Vec<&str> = knowledge.gpus.iter().map(|g| g.name.as_str()).collect();
                Err(format!("unknown GPU {name:?}; known GPUs: {}", known.join(", ")))
            }
        }
    }

    /// Compute capability as (major, minor).
    pub fn compute_capability(&self) -> Option<(u32, u32)> {
        parse_cc(self.compute_capability.as_deref()?)
    }

    /// A short name for messages ("the NVIDIA H200").
    pub fn display_name(&self) -> String {
        self.name.clone().map_or_else(|| "this GPU".to_string(), |n| format!("the {n}"))
    }
}

/// "8.6" → (8, 6)
pub use gpulens_knowledge::parse_cc;

/// One attached device, as NVML reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Device {
    pub index: u32,
    pub name: String,
    pub compute_capability: Option<String>,
    pub memory_total_bytes: Option<u64>,
    pub memory_free_bytes: Option<u64>,
    pub architecture: Option<String>,
    pub multiprocessor_count: Option<u32>,
    pub max_sm_clock_mhz: Option<u32>,
    pub max_memory_clock_mhz: Option<u32>,
    pub memory_bus_width_bits: Option<u32>,
    /// From the memory clock and bus width (double data rate).
    pub peak_memory_bandwidth_gbs: Option<f64>,
    pub pcie_generation: Option<u32>,
    pub pcie_width: Option<u32>,
    /// From the PCIe generation and width, per direction.
    pub pcie_bandwidth_gbs: Option<f64>,
    /// From the hardware table, when the device is in it.
    pub fp64_divisor: Option<u32>,
    pub tensor_core_types: Vec<String>,
}

/// NVML's view of the machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct NvmlStatus {
    pub available: bool,
    pub error: Option<String>,
    pub driver_version: Option<String>,
    /// "13.0": the newest CUDA the driver supports.
    pub cuda_driver_version: Option<String>,
}

/// `gpulens gpu --json`: what NVML sees and the profile advice will use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct GpuReport {
    pub nvml: NvmlStatus,
    pub devices: Vec<Device>,
    pub profile: GpuProfile,
}

impl GpuReport {
    /// The profile advice uses: the target when one is named, else the first
    /// attached device, else none.
    pub fn with_target(mut self, target: Option<&str>) -> Result<Self, String> {
        self.profile = match target {
            Some(name) => GpuProfile::target(name)?,
            None => self.attached_profile(),
        };
        Ok(self)
    }

    fn attached_profile(&self) -> GpuProfile {
        let Some(first) = self.devices.first() else { return GpuProfile::none() };
        let model = Knowledge::get().gpu_model(&first.name);
        GpuProfile {
            source: ProfileSource::Nvml,
            name: Some(first.name.clone()),
            compute_capability: first.compute_capability.clone(),
            memory_bytes: first.memory_total_bytes,
            cuda_major: self.nvml.cuda_driver_version.as_deref().and_then(|v| v.split('.').next()?.parse().ok()),
            architecture: first.architecture.clone(),
            fp64_divisor: first.fp64_divisor.or(model.map(|m| m.fp64_divisor)),
            tensor_core_types: if first.tensor_core_types.is_empty() {
                model.map(|m| m.tensor_core_types.clone()).unwrap_or_default()
            } else {
                first.tensor_core_types.clone()
            },
            memory_bandwidth_gbs: first.peak_memory_bandwidth_gbs.or(model.map(|m| m.memory_bandwidth_gbs)),
            device_count: Some(self.devices.len() as u32),
        }
    }
}

/// Asks NVML what is attached. Never fails: without a driver, a GPU or the
/// library, the report says so in `nvml.error`.
pub fn probe() -> GpuReport {
    let nvml = match nvml_wrapper::Nvml::init() {
        Ok(nvml) => nvml,
        Err(e) => {
            return GpuReport {
                nvml: NvmlStatus { available: false, error: Some(e.to_string()), ..Default::default() },
                ..Default::default()
            }
        }
    };
    let status = NvmlStatus {
        available: true,
        error: None,
        driver_version: nvml.sys_driver_version().ok(),
        cuda_driver_version: nvml.sys_cuda_driver_version().ok().map(|v| format!("{}.{}", v / 1000, (v % 1000) / 10)),
    };
    let count = nvml.device_count().unwrap_or(0);
    let knowledge = Knowledge::get();
    let devices = (0..count)
        .filter_map(|i| {
            let d = nvml.device_by_index(i).ok()?;
            let name = d.name().unwrap_or_else(|_| format!("GPU {i}"));
            let memory = d.memory_info().ok();
            let mem_clock = d.max_clock_info(nvml_wrapper::enum_wrappers::device::Clock::Memory).ok();
            let bus = d.memory_bus_width().ok();
            let (gen, width) = (d.max_pcie_link_gen().ok(), d.max_pcie_link_width().ok());
            let model = knowledge.gpu_model(&name);
            Some(Device {
                index: i,
                compute_capability: d.cuda_compute_capability().ok().map(|c| format!("{}.{}", c.major, c.minor)),
                memory_total_bytes: memory.as_ref().map(|m| m.total),
                memory_free_bytes: memory.as_ref().map(|m| m.free),
                architecture: d.architecture().ok().map(|a| a.to_string()),
                // NVML reports it only where device attributes are supported
                // (not on an H200 with driver 580); else the hardware table's.
                multiprocessor_count: d
                    .attributes()
                    .ok()
                    .map(|a| a.multiprocessor_count)
                    .or_else(|| model.and_then(|m| m.multiprocessors)),
                max_sm_clock_mhz: d.max_clock_info(nvml_wrapper::enum_wrappers::device::Clock::SM).ok(),
                max_memory_clock_mhz: mem_clock,
                memory_bus_width_bits: bus,
                peak_memory_bandwidth_gbs: mem_clock.zip(bus).map(|(clock, bits)| peak_bandwidth(clock, bits)),
                pcie_generation: gen,
                pcie_width: width,
                pcie_bandwidth_gbs: gen.zip(width).and_then(|(g, w)| pcie_bandwidth(g, w)),
                fp64_divisor: model.map(|m| m.fp64_divisor),
                tensor_core_types: model.map(|m| m.tensor_core_types.clone()).unwrap_or_default(),
                name,
            })
        })
        .collect();
    GpuReport { nvml: status, devices, profile: GpuProfile::none() }
}

/// GB/s from NVML's max memory clock (MHz) and bus width: two transfers per clock.
pub fn peak_bandwidth(memory_clock_mhz: u32, bus_width_bits: u32) -> f64 {
    let gbs = 2.0 * memory_clock_mhz as f64 * 1e6 * (bus_width_bits as f64 / 8.0) / 1e9;
    (gbs * 10.0).round() / 10.0
}

/// Per-direction PCIe bandwidth in GB/s after encoding overhead.
pub fn pcie_bandwidth(generation: u32, lanes: u32) -> Option<f64> {
    let per_lane = match generation {
        1 => 0.25,
        2 => 0.5,
        3 => 0.985,
        4 => 1.969,
        5 => 3.938,
        6 => 7.563,
        _ => return None,
    };
    Some(((per_lane * lanes as f64) * 10.0).round() / 10.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_match_forgivingly() {
        for name in ["4090", "RTX 4090", "GeForce RTX 4090", "nvidia geforce rtx 4090"] {
            let p = GpuProfile::target(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(p.name.as_deref(), Some("NVIDIA GeForce RTX 4090"), "{name}");
            assert_eq!(p.fp64_divisor, Some(64));
        }
        assert_eq!(GpuProfile::target("h200").unwrap().compute_capability(), Some((9, 0)));
        assert!(GpuProfile::target("Voodoo 3").unwrap_err().contains("known GPUs"));
    }

    #[test]
    fn bandwidth_arithmetic() {
        // H100 SXM-like: 2619 MHz, 5120-bit HBM3.
        assert_eq!(peak_bandwidth(2619, 5120), 3352.3);
        assert_eq!(pcie_bandwidth(5, 16), Some(63.0));
    }

    #[test]
    fn without_nvml_the_report_says_so_and_the_profile_is_none() {
        let report = GpuReport { nvml: NvmlStatus { available: false, error: Some("no library".into()), ..Default::default() }, ..Default::default() };
        let report = report.with_target(None).unwrap();
        assert_eq!(report.profile.source, ProfileSource::None);
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["nvml"]["available"], false);
        assert_eq!(json["devices"].as_array().unwrap().len(), 0);
    }

    /// The report from a real NVIDIA H200 (committed by running `gpulens gpu
    /// --json` there) reads back through the same types the server uses.
    #[test]
    fn h200_report_fixture() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/gpu/h200.json");
        let Ok(text) = std::fs::read_to_string(path) else {
            panic!("missing {path}: run `gpulens gpu --json` on the H200 machine and commit its output");
        };
        let report: GpuReport = serde_json::from_str(&text).unwrap();
        assert!(report.nvml.available);
        let h200 = &report.devices[0];
        assert!(h200.name.contains("H200"), "{}", h200.name);
        assert_eq!(h200.compute_capability.as_deref(), Some("9.0"));
        assert!(h200.memory_total_bytes.unwrap() > 140_000_000_000);
        assert_eq!(report.profile.source, ProfileSource::Nvml);
        assert_eq!(report.profile.fp64_divisor, Some(2));
        assert!(report.profile.cuda_major.unwrap() >= 12);
    }
}
