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
            // (The details on the message's line, so that a line is a finding.)
            format!("{}:{} {} {} {}\n  = {} // {}\n", p.line + 1, p.character + 1, f.code, f.library, f.severity.as_str(), f.message, f.details)
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

/// The package a kernel is written for, and the install lines of Numba and
/// Warp, follow the GPU and the driver: Numba-CUDA-MLIR from compute
/// capability 7.0, numba-cuda below; Warp's CUDA 13 wheels (1.18 and later)
/// only on a CUDA 13 driver and a Turing or newer GPU.
#[test]
fn kernel_packages_and_install_lines_follow_the_gpu_and_driver() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/profiles/kernels_and_warp.py")).unwrap();
    let on = |target: &str, cuda_major: Option<u32>| {
        let mut gpu = GpuProfile::target(target).unwrap();
        gpu.cuda_major = cuda_major;
        render(&text, &gpu)
    };
    let line = |out: &str, code: &str| out.lines().skip_while(|l| !l.contains(code)).nth(1).unwrap_or_default().to_string();

    let h200_cu13 = on("H200", Some(13));
    assert!(line(&h200_cu13, "NUMBA001").contains("Install: `uv add \"numba-cuda-mlir[cu13]\"`."), "{h200_cu13}");
    assert!(line(&h200_cu13, "NUMBA001").contains("written for Numba-CUDA-MLIR"), "{h200_cu13}");
    assert!(line(&h200_cu13, "WARP001").contains("Install: `uv add warp-lang`."), "{h200_cu13}");

    let h200_cu12 = on("H200", Some(12));
    assert!(line(&h200_cu12, "NUMBA001").contains("Install: `uv add \"numba-cuda-mlir[cu12]\"`."), "{h200_cu12}");
    assert!(line(&h200_cu12, "WARP001").contains("Install: `uv add \"warp-lang<1.18\"`."), "{h200_cu12}");

    // A CUDA 13 driver on a Volta GPU: CUDA 13 builds dropped Volta.
    let v100_cu13 = on("V100", Some(13));
    assert!(line(&v100_cu13, "NUMBA001").contains("Install: `uv add \"numba-cuda-mlir[cu12]\"`."), "{v100_cu13}");
    assert!(line(&v100_cu13, "WARP001").contains("Install: `uv add \"warp-lang<1.18\"`."), "{v100_cu13}");

    // Pascal: below what Numba-CUDA-MLIR supports, so numba-cuda; Warp's CUDA 12 pin.
    let gtx1080 = on("GTX 1080", None);
    let numba = line(&gtx1080, "NUMBA001");
    assert!(numba.contains("written for numba-cuda (in maintenance mode)") && numba.contains("compute capability 6.1"), "{gtx1080}");
    assert!(numba.contains("Install: `uv add \"numba-cuda[cu12]\"`."), "{gtx1080}");
    assert!(!numba.contains("cannot run on"), "numba-cuda still runs on Pascal\n{gtx1080}");
    assert!(line(&gtx1080, "WARP001").contains("Install: `uv add \"warp-lang<1.18\"`."), "{gtx1080}");

    // Nothing known: both lines.
    let none = render(&text, &GpuProfile::none());
    assert!(line(&none, "WARP001").contains("`uv add \"warp-lang<1.18\"` (CUDA 12) or `uv add warp-lang` (CUDA 13)"), "{none}");
}

fn scale_findings(gpu: &GpuProfile) -> String {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/profiles/scale.py")).unwrap();
    render(&text, gpu)
}

#[test]
fn data_larger_than_the_gpu_points_to_dask() {
    let t4 = scale_findings(&GpuProfile::target("T4").unwrap());
    assert!(t4.contains("larger than the Tesla T4's 16.0 GB") && t4.contains("Dask arrays with CuPy chunks"), "{t4}");
    let h200 = scale_findings(&GpuProfile::target("H200").unwrap());
    assert!(!h200.contains("larger than"), "32 GB fits in an H200\n{h200}");
}

#[test]
fn several_gpus_point_rapids_to_its_multi_gpu_path() {
    let mut gpu = GpuProfile::target("A100 80GB").unwrap();
    assert!(!scale_findings(&gpu).contains("GPUs are attached"));
    gpu.device_count = Some(4);
    let out = scale_findings(&gpu);
    assert!(out.contains("4 GPUs are attached: Dask-cuDF"), "{out}");
}

#[test]
fn tensor_cores_for_matrix_work() {
    let h100 = scale_findings(&GpuProfile::target("H100").unwrap());
    let matmul = h100.lines().find(|l| l.contains("`np.matmul`")).expect("matmul flagged");
    assert!(matmul.contains("TF32 (`CUPY_TF32=1`") && matmul.contains("BF16 and FP8 need PyTorch"), "{matmul}");
    let sort = h100.lines().find(|l| l.contains("`np.sort`")).expect("sort flagged");
    assert!(!sort.contains("tensor cores"), "no tensor-core advice for a sort: {sort}");
    let t4 = scale_findings(&GpuProfile::target("T4").unwrap());
    assert!(t4.contains("float16 inputs run on them directly") && !t4.contains("TF32 (`CUPY_TF32"), "{t4}");
}

#[test]
fn speedup_estimates_scale_with_the_gpu() {
    use gpulens_diagnostics::estimated_speedup;
    let h200 = estimated_speedup("cupy", &GpuProfile::target("H200").unwrap()).expect("CuPy was measured");
    let t4 = estimated_speedup("cupy", &GpuProfile::target("T4").unwrap()).unwrap();
    assert!(t4.low < h200.low && t4.high < h200.high, "{t4:?} vs {h200:?}");
    assert!(t4.basis.contains("scaled by memory bandwidth") && !h200.basis.contains("scaled"), "{t4:?} / {h200:?}");
    let none = estimated_speedup("cupy", &GpuProfile::none()).unwrap();
    assert_eq!((none.low, none.high), (h200.low, h200.high), "no GPU known: the measured figures as they are");
    assert!(estimated_speedup("cuxfilter", &GpuProfile::none()).is_none(), "nothing measured, no estimate");
}
