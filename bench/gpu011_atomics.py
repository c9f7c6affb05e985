"""GPU011 claim check: many threads doing cuda.atomic.add on one element vs
per-thread / per-block accumulation vs cupy.sum.

Usage (on a machine with an NVIDIA GPU, CuPy and numba-cuda or
numba-cuda-mlir): python3 bench/gpu011_atomics.py numba|mlir
Times are kernel time only: data already on the GPU, the output zeroed
before each run (untimed), device synchronised before and after. Each
figure is the median of REPEATS runs after a warm-up (compile) run. Two
timers: CUDA events around the launch, and wall time between syncs.
"""
import json
import statistics
import sys
import time

import cupy as cp
import numpy as np

IMPL = sys.argv[1] if len(sys.argv) > 1 else "numba"
if IMPL == "mlir":
    from numba_cuda_mlir import cuda
    from numba_cuda_mlir.types import float32
    import numba_cuda_mlir as mod
    version = {"numba_cuda_mlir": mod.__version__}
else:
    from numba import cuda, float32
    import numba

    version = {"numba": numba.__version__}
    try:
        from importlib.metadata import version as v

        version["numba-cuda"] = v("numba-cuda")
    except Exception as e:  # noqa: BLE001
        version["numba-cuda"] = repr(e)

REPEATS = 9
TPB = 256


@cuda.jit
def naive(x, out):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(out, 0, x[i])


@cuda.jit
def per_thread(x, out):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    s = float32(0.0)
    for i in range(start, x.size, stride):
        s += x[i]
    cuda.atomic.add(out, 0, s)


@cuda.jit(device=True)
def tree_into(sm, tid, out):
    # The block's 256 values in shared memory summed as a tree, then one
    # atomic per block into the total.
    cuda.syncthreads()
    s = 128
    while s > 0:
        if tid < s:
            sm[tid] += sm[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        cuda.atomic.add(out, 0, sm[0])


@cuda.jit
def block_tree(x, out):
    sm = cuda.shared.array(256, dtype=float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < x.size:
        sm[tid] = x[i]
    else:
        sm[tid] = float32(0.0)
    tree_into(sm, tid, out)


@cuda.jit
def block_tree_stride(x, out):
    # extra: grid-stride loop into a local, then the same tree, one atomic per block
    sm = cuda.shared.array(256, dtype=float32)
    tid = cuda.threadIdx.x
    acc = float32(0.0)
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        acc += x[i]
    sm[tid] = acc
    tree_into(sm, tid, out)


def main():
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(0)
    sms = props["multiProcessorCount"]
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    info = dict(
        impl=IMPL,
        versions=version,
        cupy=cp.__version__,
        numpy=np.__version__,
        gpu=name,
        sms=sms,
        driver=cp.cuda.runtime.driverGetVersion(),
        runtime=cp.cuda.runtime.runtimeGetVersion(),
    )
    print(json.dumps(info), flush=True)
    few_blocks = sms * 4
    rows = []
    for n in (10**6, 10**7, 10**8):
        rng = cp.random.default_rng(11)
        x = rng.random(n, dtype=cp.float32)
        ref = float(cp.sum(x, dtype=cp.float64))
        out = cp.zeros(1, dtype=cp.float32)
        dx = cuda.as_cuda_array(x)
        dout = cuda.as_cuda_array(out)
        out0 = out.reshape(())
        blocks = (n + TPB - 1) // TPB
        cases = {
            "a_naive_atomic_per_element": lambda: naive[blocks, TPB](dx, dout),
            "b_per_thread_local_then_atomic": lambda: per_thread[few_blocks, TPB](dx, dout),
            "c_shared_tree_atomic_per_block": lambda: block_tree[blocks, TPB](dx, dout),
            "c2_stride_then_tree_atomic_per_block": lambda: block_tree_stride[few_blocks, TPB](dx, dout),
            "d_cupy_sum": lambda: cp.sum(x, out=out0),
        }
        for label, launch in cases.items():
            def one():
                out.fill(0)
                dev.synchronize()
                e0, e1 = cp.cuda.Event(), cp.cuda.Event()
                t = time.perf_counter()
                e0.record()
                launch()
                e1.record()
                dev.synchronize()
                wall = time.perf_counter() - t
                return cp.cuda.get_elapsed_time(e0, e1) / 1e3, wall

            try:
                one()  # compile / warm up
                runs = [one() for _ in range(REPEATS)]
                got = float(out.get()[0])
                row = dict(
                    n=n,
                    case=label,
                    event_ms=round(statistics.median(r[0] for r in runs) * 1e3, 4),
                    wall_ms=round(statistics.median(r[1] for r in runs) * 1e3, 4),
                    event_min_ms=round(min(r[0] for r in runs) * 1e3, 4),
                    sum=got,
                    ref_f64=ref,
                    rel_err=abs(got - ref) / ref,
                )
            except Exception as e:  # noqa: BLE001
                row = dict(n=n, case=label, error=f"{type(e).__name__}: {e}"[:400])
            rows.append(row)
            print(json.dumps(row), flush=True)
        del x, dx, dout, out
        cp.get_default_memory_pool().free_all_blocks()
    by = {(r["n"], r["case"]): r for r in rows if "event_ms" in r}
    print("\nn | " + " | ".join(c for c in cases), flush=True)
    for n in (10**6, 10**7, 10**8):
        cells = [str(by.get((n, c), {}).get("event_ms", "err")) for c in cases]
        a, c, d = (by.get((n, k), {}).get("event_ms") for k in ("a_naive_atomic_per_element", "c_shared_tree_atomic_per_block", "d_cupy_sum"))
        ratios = f"naive/c={a / c:.1f} naive/d={a / d:.1f}" if a and c and d else ""
        print(f"{n:.0e} | " + " | ".join(cells) + " | " + ratios, flush=True)


if __name__ == "__main__":
    main()
