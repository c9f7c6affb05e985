//! The same code checked for each GPU in a fixed set of profiles: float64
//! advice only where FP64 is slow, RAPIDS advice marked unsupported on GPUs
//! too old for it, install lines for the GPU. One snapshot per GPU.

use gpulens_diagnostics::{check, Settings};
use gpulens_gpu::GpuProfile;
use gpulens_syntax::{LineIndex, PositionEncoding};

fn render(text: &str, gpu: &GpuProfile) -> String {
    let tree = gpulens_syntax::parse(text);
    let index = LineIndex::new(text);
    check(text, &tree, &Settings::default(), gpu)
        .iter()
        .map(|f| {
            let p = index.position(text, f.range.start, PositionEncoding::Utf32);
            format!("{}:{} {} {} {}\n  = {}\n", p.line + 1, p.character + 1, f.code, f.library, f.severity.as_str(), f.message)
        })
        .collect()
}

#[test]
fn advice_per_gpu() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/profiles/gpu_tuned.py")).unwrap();
    for target in ["T4", "A10", "RTX 4090", "A100 80GB", "H100 SXM", "H200", "GTX 1080"] {
        let gpu = GpuProfile::target(target).unwrap_or_else(|e| panic!("{target}: {e}"));
        let out = render(&text, &gpu);
        let slow_fp64 = gpu.fp64_divisor.unwrap() >= 32;
        assert_eq!(out.contains("GPU010"), slow_fp64, "{target}: FP64 advice only on slow-FP64 GPUs\n{out}");
        let old = gpu.compute_capability().unwrap() < (7, 0);
        assert_eq!(out.contains("cuDF cannot run on"), old, "{target}\n{out}");
        insta::assert_snapshot!(format!("profile_{}", target.replace(' ', "_")), out);
    }
}

#[test]
fn no_gpu_means_no_hardware_advice() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/profiles/gpu_tuned.py")).unwrap();
    let out = render(&text, &GpuProfile::none());
    assert!(!out.contains("GPU010") && !out.contains("cannot run on") && !out.contains("1/64"), "{out}");
    assert!(out.contains("(CUDA 12) or"), "both install lines when the CUDA version is unknown\n{out}");
}
