"""Runs each example on the CPU and its rewritten copy on the GPU, checks that
the results agree and times the GPU side three ways:

- end to end: the rewritten function as a user calls it, NumPy arrays in and
  NumPy arrays out, every copy and allocation included;
- copies: exactly the host<->device copies that function makes, made the way
  it makes them and timed on their own: each array argument copied to the
  device (into device memory allocated as the function allocates it), and
  each array it returns on the host copied back once, into the kind of host
  memory the function copies into. A result the function leaves on the
  device is not copied;
- GPU alone: the same GPU work with the inputs already on the device and the
  result left there.

Copies and GPU alone are parts of the end-to-end time, so together they
should not exceed it; what remains (`rest_s`: allocation, kernel launches,
Python) is reported, and a row whose parts exceed the whole says so
(`consistent: false`).

Usage: python3 examples/rewrites/verify.py REWRITTEN_DIR OUT.json
REWRITTEN_DIR is what `examples/rewrites/apply` produced. Examples whose
libraries are missing are reported as not run, with the reason. A rewritten
kernel written for Numba-CUDA-MLIR (`from numba_cuda_mlir import cuda`) runs
with numba.cuda where numba_cuda_mlir is not installed (it is meant as a
drop-in for numba.cuda kernels), and its row says so (`cuda_module`).
"""
import importlib.util
import json
import pathlib
import sys
import time
import types

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
REPEATS = 5  # each GPU figure is the best of this many runs, after a warm-up run


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_rewritten(path, name, row):
    """The rewritten module; with numba.cuda standing in for numba_cuda_mlir
    where the latter is not installed."""
    source = path.read_text()
    if "numba_cuda_mlir" in source and importlib.util.find_spec("numba_cuda_mlir") is None:
        # `from numba_cuda_mlir import cuda` -> `from numba import cuda`, and
        # `numba_cuda_mlir.cuda` -> `numba.cuda`.
        source = source.replace("numba_cuda_mlir", "numba")
        row["cuda_module"] = "numba.cuda, standing in for numba_cuda_mlir (not installed here)"
        module = types.ModuleType(name)
        module.__file__ = str(path)
        sys.modules[name] = module
        exec(compile(source, str(path), "exec"), module.__dict__)
        return module
    return load(path, name)


def arrays(value):
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in arrays(v)]
    return [value]


def host(value):
    import cupy as cp

    return np.asarray(cp.asnumpy(value)) if hasattr(value, "__cuda_array_interface__") else np.asarray(value)


def on_host(value):
    """A NumPy array in host memory (not a device array)."""
    return isinstance(value, np.ndarray) and not hasattr(value, "__cuda_array_interface__")


def cuda_of(gpu):
    """The `cuda` module the rewritten file uses."""
    return getattr(gpu, "cuda", None) or importlib.import_module("numba.cuda")


def synchronize():
    import cupy as cp

    cp.cuda.Device().synchronize()


def best_of(f, n=REPEATS):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        result = f()
        times.append(time.perf_counter() - t)
    return min(times), result


def copy_time(name, gpu, fresh):
    """The host<->device copies the rewritten function makes, timed on their
    own (CUDA-synchronised wall time, best of REPEATS after a warm-up), with
    the megabytes copied each way. None for the time when it makes none.

    What the rewrites copy (see REWRITTEN_DIR):
    - CuPy: `cp.asarray` of each array argument (device memory from CuPy's
      pool), and `cp.asnumpy` of each result, which copies it into newly
      allocated host memory.
    - Numba: `cuda.to_device` of each array argument (a fresh device
      allocation each call), then `d_out.copy_to_host(out)`: the output
      array, one of the arguments, is copied back into itself.
    - KvikIO: nothing; it reads the file into device memory and leaves the
      result there.
    """
    args = fresh()
    result = gpu.compute(*args)
    synchronize()
    to_device = [a for a in args if on_host(a)]
    # Arrays the function returns in host memory were copied back; device
    # arrays it returns were not.
    back = [r for r in arrays(result) if on_host(r)]
    mb_in = sum(a.nbytes for a in to_device) / 1e6
    mb_out = sum(r.nbytes for r in back) / 1e6
    if not to_device and not back:
        return None, 0.0, 0.0
    if name.startswith("numba_"):
        cuda = cuda_of(gpu)
        outputs = [i for i, a in enumerate(args) if any(a is r for r in back)]
        if len(outputs) != len(back):
            raise RuntimeError("a Numba rewrite returned an array that is not one of its arguments")

        def once():
            given = fresh()
            cuda.synchronize()
            t = time.perf_counter()
            on_device = [cuda.to_device(a) if on_host(a) else None for a in given]
            for i in outputs:
                on_device[i].copy_to_host(given[i])
            cuda.synchronize()
            return time.perf_counter() - t
    else:
        import cupy as cp

        # The results as the function holds them on the device before it
        # copies them back (put there untimed).
        results = [cp.asarray(r) for r in back]

        def once():
            given = fresh()
            synchronize()
            t = time.perf_counter()
            on_device = [cp.asarray(a) for a in given if on_host(a)]  # noqa: F841 - held, as in the function
            for d in results:
                cp.asnumpy(d)
            synchronize()
            return time.perf_counter() - t

    once()
    return min(once() for _ in range(REPEATS)), mb_in, mb_out


def gpu_alone(name, gpu, inputs):
    """The GPU work without any host<->device copy: data already on the
    device, the result left there (CUDA-synchronised wall time, best of
    REPEATS). None where there is no such part to time apart (KvikIO: the
    read is the whole of it)."""
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
            return best_of(once)[0]
        finally:
            cp.asnumpy = real
    if name.startswith("numba_"):
        cuda = cuda_of(gpu)

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
        return best_of(once)[0]
    return None


def environment():
    """What the figures were measured with."""
    found = {"python": sys.version.split()[0], "numpy": np.__version__}
    for lib in ("cupy", "numba", "numba_cuda_mlir", "kvikio"):
        try:
            found[lib] = getattr(importlib.import_module(lib), "__version__", "?")
        except Exception as e:  # noqa: BLE001
            found[lib] = f"missing ({type(e).__name__})"
    try:
        import cupy as cp

        name = cp.cuda.runtime.getDeviceProperties(0)["name"]
        found["gpu"] = name.decode() if isinstance(name, bytes) else name
    except Exception as e:  # noqa: BLE001
        found["gpu"] = f"unknown ({type(e).__name__})"
    return found


def main():
    rewritten, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    print(json.dumps({"environment": environment()}), flush=True)
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
            gpu = load_rewritten(rewritten / f"{name}.py", f"gpu_{name}", row)
            inputs = cpu.inputs()
            fresh = lambda: [a.copy() if isinstance(a, np.ndarray) else a for a in inputs]  # noqa: E731
            cpu_time, cpu_result = best_of(lambda: cpu.compute(*fresh()), 1 if "numba" in name else 3)

            gpu.compute(*fresh())  # compile kernels, build FFT plans
            synchronize()

            def run_gpu():
                args = fresh()
                t = time.perf_counter()
                r = gpu.compute(*args)
                synchronize()
                return time.perf_counter() - t, r

            runs = [run_gpu() for _ in range(REPEATS)]
            gpu_time, gpu_result = min(runs, key=lambda r: r[0])
            copies, mb_in, mb_out = copy_time(name, gpu, fresh)
            cpu_arrays = [host(a) for a in arrays(cpu_result)]
            gpu_arrays = [host(a) for a in arrays(gpu_result)]
            agree = len(cpu_arrays) == len(gpu_arrays) and all(
                a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=rtol) for a, b in zip(cpu_arrays, gpu_arrays)
            )
            cpu_work = max(cpu_time, 1e-9)
            gpu_work = max(gpu_time, 1e-9)
            alone = gpu_alone(name, gpu, inputs)
            parts = (copies or 0.0) + (alone or 0.0)
            row.update(
                status="ran",
                elements=int(sum(a.size for a in inputs if isinstance(a, np.ndarray))),
                cpu_s=round(cpu_work, 4),
                gpu_end_to_end_s=round(gpu_work, 4),
                speedup_end_to_end=round(cpu_work / gpu_work, 2),
                agree=bool(agree),
                copied_to_device_mb=round(mb_in, 1),
                copied_to_host_mb=round(mb_out, 1),
            )
            if copies is not None:
                row.update(copies_s=round(copies, 4))
            if alone is not None:
                row.update(gpu_alone_s=round(alone, 5), speedup_gpu_alone=round(cpu_work / max(alone, 1e-9), 2))
            row.update(rest_s=round(gpu_work - parts, 5), consistent=bool(parts <= gpu_work))
        except Exception as e:  # noqa: BLE001
            row.update(status="failed", reason=f"{type(e).__name__}: {e}"[:500])
        rows.append(row)
        print(json.dumps(row), flush=True)
    out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
