"""Runs each example on the CPU and its rewritten copy on the GPU, checks that
the results agree and times both, as a user would see them (host<->device
copies included) and for the GPU part alone (the copies of the inputs and of
the result, timed separately, taken off).

Usage: python3 examples/rewrites/verify.py REWRITTEN_DIR OUT.json
REWRITTEN_DIR is what `examples/rewrites/apply` produced. Examples whose
libraries are missing are reported as not run, with the reason.
"""
import importlib.util
import json
import pathlib
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
RUNNABLE = {
    # example: (libraries it needs on the GPU side, relative tolerance)
    "cupy_spectrum": (["cupy"], 1e-6),
    "cupy_linalg": (["cupy"], 1e-4),
    "numba_elementwise": (["numba.cuda"], 1e-9),
    "numba_stencil": (["numba.cuda"], 1e-9),
    "kvikio_read": (["kvikio", "cupy"], 0.0),
}


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def arrays(value):
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in arrays(v)]
    return [value]


def host(value):
    import cupy as cp

    return np.asarray(cp.asnumpy(value)) if hasattr(value, "__cuda_array_interface__") else np.asarray(value)


def best_of(f, n=3):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        result = f()
        times.append(time.perf_counter() - t)
    return min(times), result


def transfer_time(inputs, result):
    """Host->device copies of the array inputs and device->host of the result."""
    import cupy as cp

    def once():
        for a in inputs:
            if isinstance(a, np.ndarray):
                cp.asarray(a)
        for r in arrays(result):
            if isinstance(r, np.ndarray):
                cp.asnumpy(cp.asarray(r))
        cp.cuda.Device().synchronize()

    once()
    return best_of(once)[0]


def gpu_alone(name, gpu, inputs):
    """The GPU work without any host<->device copy: data already on the
    device, the result left there (CUDA-synchronised wall time, best of 5)."""
    import cupy as cp

    if name.startswith("cupy_"):
        device_args = [cp.asarray(a) if isinstance(a, np.ndarray) else a for a in inputs]
        real = cp.asnumpy
        cp.asnumpy = lambda a, *args, **kwargs: a  # leave results on the device
        try:
            def once():
                gpu.compute(*device_args)
                cp.cuda.Device().synchronize()
            once()
            return best_of(once, 5)[0]
        finally:
            cp.asnumpy = real
    if name.startswith("numba_"):
        from numba import cuda

        if name == "numba_elementwise":
            data, out = inputs
            d_data, d_out = cuda.to_device(data), cuda.to_device(out)
            n = data.size
            launch = lambda: gpu.process_kernel[(n + 255) // 256, 256](d_out, d_data, n)  # noqa: E731
        else:
            image, out, h, w = inputs
            d_image, d_out = cuda.to_device(image), cuda.to_device(out)
            blocks = ((w - 2 + 15) // 16, (h - 2 + 15) // 16)
            launch = lambda: gpu.blur_kernel[blocks, (16, 16)](d_out, d_image, 1, h - 1, 1, w - 1)  # noqa: E731

        def once():
            launch()
            cuda.synchronize()
        once()
        return best_of(once, 5)[0]
    return float("nan")


def main():
    rewritten, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    rows = []
    for name, (needs, rtol) in RUNNABLE.items():
        row = {"example": name}
        try:
            for lib in needs:
                importlib.import_module(lib)
        except Exception as e:  # noqa: BLE001 - any import failure means "cannot run here"
            row.update(status="not run", reason=f"{lib}: {type(e).__name__}: {e}"[:300])
            rows.append(row)
            print(json.dumps(row), flush=True)
            continue
        try:
            cpu = load(HERE / f"{name}.py", f"cpu_{name}")
            gpu = load(rewritten / f"{name}.py", f"gpu_{name}")
            inputs = cpu.inputs()
            fresh = lambda: [a.copy() if isinstance(a, np.ndarray) else a for a in inputs]  # noqa: E731
            cpu_time, cpu_result = best_of(lambda: cpu.compute(*fresh()), 1 if "numba" in name else 3)
            import cupy as cp

            gpu.compute(*fresh())  # compile kernels, build FFT plans
            cp.cuda.Device().synchronize()

            def run_gpu():
                args = fresh()
                t = time.perf_counter()
                r = gpu.compute(*args)
                cp.cuda.Device().synchronize()
                return time.perf_counter() - t, r

            runs = [run_gpu() for _ in range(3)]
            gpu_time, gpu_result = min(runs, key=lambda r: r[0])
            copies = transfer_time(inputs, cpu_result)
            cpu_arrays = [host(a) for a in arrays(cpu_result)]
            gpu_arrays = [host(a) for a in arrays(gpu_result)]
            agree = len(cpu_arrays) == len(gpu_arrays) and all(
                a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=rtol) for a, b in zip(cpu_arrays, gpu_arrays)
            )
            cpu_work = max(cpu_time, 1e-9)
            gpu_work = max(gpu_time, 1e-9)
            alone = gpu_alone(name, gpu, inputs)
            row.update(
                status="ran",
                elements=int(sum(a.size for a in inputs if isinstance(a, np.ndarray))),
                cpu_s=round(cpu_work, 4),
                gpu_end_to_end_s=round(gpu_work, 4),
                copies_s=round(copies, 4),
                gpu_alone_s=round(alone, 5),
                speedup_end_to_end=round(cpu_work / gpu_work, 2),
                speedup_gpu_alone=round(cpu_work / alone, 2),
                agree=bool(agree),
            )
        except Exception as e:  # noqa: BLE001
            row.update(status="failed", reason=f"{type(e).__name__}: {e}"[:500])
        rows.append(row)
        print(json.dumps(row), flush=True)
    out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
