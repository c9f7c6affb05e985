//! Every rule's code, library, default severity and documentation. The same
//! text feeds `gpulens explain`, `gpulens rules`, hover and the README list.

use crate::Severity;

#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub code: &'static str,
    /// kebab-case name, e.g. `numpy-on-cupy`.
    pub name: &'static str,
    pub library: &'static str,
    pub severity: Severity,
    /// One line.
    pub summary: &'static str,
    /// What it finds.
    pub what: &'static str,
    /// Why the GPU helps (or why the pattern hurts).
    pub why: &'static str,
    /// CPU code that triggers it.
    pub example: &'static str,
    /// The GPU version.
    pub use_instead: &'static str,
}

/// The rule with this code (case-insensitive).
pub fn rule(code: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.code.eq_ignore_ascii_case(code))
}

pub static RULES: &[Rule] = &[
    Rule {
        code: "CUPY001",
        name: "numpy-on-cupy",
        library: "cupy",
        severity: Severity::Hint,
        summary: "NumPy/SciPy array work that CuPy runs on the GPU",
        what: "A call to a NumPy or SciPy function — element-wise math, reductions, sorting, FFT, linear \
               algebra, random generation, signal or image filtering — that CuPy implements with the same \
               name, on data that is not evidently small. Calls on arrays known to hold fewer elements than \
               `min-elements` (10,000 by default) are left alone.",
        why: "CuPy runs these functions on the GPU through NVIDIA's tuned libraries (cuBLAS, cuFFT, cuSOLVER, \
              cuRAND, cuSPARSE). On millions of elements that is typically 10-100x faster than NumPy. The cost \
              is moving data over PCIe, so move inputs to the GPU once, chain the work there, and bring only \
              results back. On small arrays the launch overhead makes the GPU slower.",
        example: "import numpy as np\n\nsignal = np.random.rand(10_000_000)\nspectrum = np.fft.fft(signal)\n\
                  ordered = np.sort(spectrum.real)",
        use_instead: "import cupy as cp\n\nsignal = cp.random.rand(10_000_000)\nspectrum = cp.fft.fft(signal)\n\
                      ordered = cp.sort(spectrum.real)\nresult = cp.asnumpy(ordered)  # back to the CPU once",
    },
    Rule {
        code: "CUPY002",
        name: "running-loop-is-a-library-call",
        library: "cupy",
        severity: Severity::Info,
        summary: "Loop with a running sum or product: not a kernel, but one cumsum/cumprod call",
        what: "A `for i in range(...)` loop whose iterations depend on each other in the way of a running sum \
               or product (`acc[i] = acc[i-1] + x[i]`).",
        why: "Iterations that need the previous iteration's result cannot run in parallel, so this loop is not \
              a GPU kernel. The computation is a prefix scan, though, which NumPy does in one call and CuPy does \
              on the GPU with a parallel scan.",
        example: "import numpy as np\n\nx = np.random.rand(1_000_000)\nacc = np.empty_like(x)\nacc[0] = x[0]\nfor i in range(1, len(x)):\n    acc[i] = acc[i - 1] + x[i]",
        use_instead: "import numpy as np\n\nx = np.random.rand(1_000_000)\nacc = np.cumsum(x)   # cupy.cumsum on the GPU",
    },
    Rule {
        code: "NUMBA001",
        name: "index-loop-to-cuda-kernel",
        library: "numba",
        severity: Severity::Hint,
        summary: "Python loop over array indices with independent iterations: a CUDA kernel runs them in parallel",
        what: "A `for i in range(...)` loop (or a nest of them over rows and columns) whose body writes array \
               elements at its own index, reads only what it may (neighbours of arrays it does not write), and \
               calls nothing but math: element-wise maps, 2-D image loops, stencils and reductions. Loops whose \
               iterations depend on each other, do I/O, or work on Python objects are left alone.",
        why: "A Python loop runs one iteration at a time at interpreter speed. Numba's CUDA target compiles the \
              body into a kernel in which thousands of GPU threads each take one index, so the whole range runs \
              in parallel. Each thread must check that its index is inside the array, because the grid is \
              rounded up to whole blocks. New kernels are written for Numba-CUDA-MLIR (`from numba_cuda_mlir \
              import cuda`): NVIDIA put numba-cuda (`from numba import cuda`) in maintenance mode and develops \
              the same `@cuda.jit` programming model there. gpulens writes numba-cuda instead where \
              Numba-CUDA-MLIR cannot run the kernel: a GPU below compute capability 7.0, a CUDA ufunc, or a \
              file whose kernels already import numba-cuda (the new one stays beside them; moving the file is \
              that one import changed). Numba-CUDA-MLIR needs Python 3.11 or newer.",
        example: "import math\n\nimport numpy as np\n\nx = np.linspace(0.0, 10.0, 2_000_000)\nout = np.empty_like(x)\nfor i in range(len(x)):\n    out[i] = math.sin(x[i]) * math.exp(-x[i])",
        use_instead: "from numba_cuda_mlir import cuda\n\n@cuda.jit\ndef kernel(x, out):\n    i = cuda.grid(1)\n    if i < x.size:\n        \
                      out[i] = math.sin(x[i]) * math.exp(-x[i])\n\nd_x = cuda.to_device(x)\n\
                      d_out = cuda.device_array_like(d_x)\nkernel[(x.size + 255) // 256, 256](d_x, d_out)\nout = d_out.copy_to_host()",
    },
    Rule {
        code: "WARP001",
        name: "simulation-loop-to-warp-kernel",
        library: "warp",
        severity: Severity::Hint,
        summary: "Particle or body update loop that a Warp kernel runs in parallel",
        what: "An index loop that updates positions, velocities or forces of many particles or bodies, \
               usually scaled by a time step `dt`, one at a time.",
        why: "Each particle's update is independent within a step, so Warp can run all of them at once. Warp \
              compiles `@wp.kernel` functions to CUDA and has vector, quaternion and transform types built in, \
              plus spatial queries (hash grids, meshes, BVHs) for the neighbour searches simulations need.",
        example: "import numpy as np\n\n\ndef step(pos, vel, force, dt):\n    for i in range(len(pos)):\n        vel[i] += force[i] * dt\n        pos[i] += vel[i] * dt\n\n\nn = 100_000\nstep(np.zeros((n, 3)), np.zeros((n, 3)), np.random.rand(n, 3), 0.01)",
        use_instead: "import warp as wp\n\n@wp.kernel\ndef step(pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3),\n\
                      force: wp.array(dtype=wp.vec3), dt: float):\n    tid = wp.tid()\n    vel[tid] = vel[tid] + force[tid] * dt\n\
                      pos[tid] = pos[tid] + vel[tid] * dt\n\nwp.launch(step, dim=n, inputs=[pos, vel, force, dt], device=\"cuda\")",
    },
    Rule {
        code: "CUDF001",
        name: "pandas-reader-on-cudf",
        library: "cudf",
        severity: Severity::Hint,
        summary: "pandas file reader that cuDF parses on the GPU",
        what: "A pandas reader (`read_csv`, `read_parquet`, `read_json`, …) that cuDF implements.",
        why: "cuDF parses CSV, Parquet, JSON and ORC on the GPU and leaves the table in GPU memory, ready \
              for the filters, joins and group-bys that usually follow. With cudf.pandas the code stays \
              unchanged: every pandas call runs on the GPU when cuDF supports it and on the CPU otherwise.",
        example: "import pandas as pd\n\norders = pd.read_parquet(\"orders.parquet\")",
        use_instead: "# Unchanged code, run as: python -m cudf.pandas script.py\n# or natively:\nimport cudf\n\n\
                      orders = cudf.read_parquet(\"orders.parquet\")",
    },
    Rule {
        code: "CUDF002",
        name: "dataframe-op-on-cudf",
        library: "cudf",
        severity: Severity::Hint,
        summary: "pandas DataFrame work (group-by, join, sort, aggregation) that cuDF runs on the GPU",
        what: "A DataFrame or Series operation — `groupby`, `merge`, `join`, `sort_values`, `pivot_table`, \
               `drop_duplicates`, aggregations — on a table that is not evidently small.",
        why: "Group-bys, joins and sorts over millions of rows are where cuDF gains most over pandas. \
              cudf.pandas accelerates them without code changes and falls back to pandas for anything cuDF \
              lacks; the gain starts somewhere between 10,000 and 100,000 rows.",
        example: "import pandas as pd\n\nsales = pd.read_csv(\"sales.csv\")\n\
                  by_region = sales.groupby(\"region\")[\"amount\"].sum()",
        use_instead: "import cudf\n\n# Or the pandas code unchanged, run as: python -m cudf.pandas script.py\nsales = cudf.read_csv(\"sales.csv\")\nby_store = sales.groupby(\"store\")[\"amount\"].sum()",
    },
    Rule {
        code: "CUDF003",
        name: "dataframe-row-loop",
        library: "cudf",
        severity: Severity::Hint,
        summary: "Row-by-row DataFrame loop: vectorise it first; cudf.pandas runs it on the CPU",
        what: "`iterrows()`, `itertuples()` or `apply(..., axis=1)` on a DataFrame: Python code run once \
               per row.",
        why: "A Python-level loop over rows is slow on any hardware, and no GPU library can run arbitrary \
              Python per row: under cudf.pandas, iteration falls back to the CPU, copying the table back from \
              the GPU. Rewrite the loop as column operations (arithmetic on whole columns, `where`, \
              `map`, `groupby`) — that alone is often 100x faster in pandas, and cuDF then runs it on the GPU.",
        example: "import pandas as pd\n\norders = pd.read_parquet(\"orders.parquet\")\ntotal = 0.0\nfor _, row in orders.iterrows():\n    total += row[\"price\"] * row[\"qty\"]",
        use_instead: "import pandas as pd\n\norders = pd.read_parquet(\"orders.parquet\")\ntotal = (orders[\"price\"] * orders[\"qty\"]).sum()",
    },
    Rule {
        code: "CUDF004",
        name: "cudf-pandas-cpu-fallback",
        library: "cudf",
        severity: Severity::Info,
        summary: "pandas call that cudf.pandas runs on the CPU: an argument or method cuDF does not implement",
        what: "A pandas call that cuDF otherwise runs on the GPU, made with an argument, or followed by a method, \
               that cuDF's own implementation rejects: `.rolling(w).median()`, `.shift(freq=...)`, \
               `.ewm(span, min_periods=k)` with k other than 0, `.groupby(key, observed=False)`, \
               `pd.read_csv(..., chunksize=...)`, and the other conditions recorded in knowledge/api/pandas.toml.",
        why: "cudf.pandas tries every call in cuDF first and, when cuDF raises (NotImplementedError, or a \
              TypeError for an argument its signature lacks), runs the call in pandas on the CPU, copying the \
              data back from the GPU. The program still works, but this step gets no speedup and pays for the \
              copies. Where the argument is not essential (a different window statistic, `observed=True`, a \
              plain `pd.read_csv` of the whole file), changing it keeps the step on the GPU.",
        example: "import pandas as pd\n\nprices = pd.read_parquet(\"prices.parquet\")\nsmooth = prices.rolling(20).median()",
        use_instead: "import pandas as pd\n\nprices = pd.read_parquet(\"prices.parquet\")\n# cuDF runs mean (and sum, min, max, var, std, count) over a window:\nsmooth = prices.rolling(20).mean()",
    },
    Rule {
        code: "CUML001",
        name: "sklearn-on-cuml",
        library: "cuml",
        severity: Severity::Hint,
        summary: "scikit-learn estimator that cuML's accelerator runs on the GPU",
        what: "A scikit-learn estimator or transformer (or UMAP/HDBSCAN) that cuml.accel accelerates, \
               constructed with parameters the GPU implementation supports; or a nearest-neighbour query \
               (`.kneighbors()`, `.radius_neighbors()`) on a model built where the code does not show it.",
        why: "cuML implements these estimators on the GPU with scikit-learn's API. `python -m cuml.accel` \
              (or `cuml.accel.install()`) runs unchanged scikit-learn code on the GPU: from 2-10x for linear \
              models to 50-600x for nearest neighbours, HDBSCAN and UMAP on large data. Small inputs can be \
              slower than on the CPU.",
        example: "from sklearn.ensemble import RandomForestClassifier\n\nmodel = RandomForestClassifier(n_estimators=100)\n\
                  model.fit(X_train, y_train)",
        use_instead: "# Unchanged code, run as: python -m cuml.accel script.py\n# or natively:\n\
                      from cuml.ensemble import RandomForestClassifier\n\n\
                      model = RandomForestClassifier(n_estimators=100)\nmodel.fit(X_train, y_train)",
    },
    Rule {
        code: "CUML002",
        name: "cuml-accel-cpu-fallback",
        library: "cuml",
        severity: Severity::Info,
        summary: "scikit-learn estimator with a parameter that makes cuML's accelerator fall back to the CPU",
        what: "A scikit-learn estimator that cuml.accel normally accelerates, constructed with a parameter \
               value its GPU implementation does not support (for example `Ridge(positive=True)` or \
               `SVC(probability=True)`).",
        why: "cuml.accel checks each estimator's parameters and quietly runs unsupported configurations with \
              scikit-learn on the CPU. Expecting a GPU speedup here would be wrong; change the parameter if \
              the model allows it, or expect CPU speed.",
        example: "from sklearn.linear_model import Ridge\n\nmodel = Ridge(alpha=1.0, positive=True)",
        use_instead: "from sklearn.linear_model import Ridge\n\n# Without positive=True, cuml.accel runs Ridge on the GPU.\n\
                      model = Ridge(alpha=1.0)",
    },
    Rule {
        code: "CUGRAPH001",
        name: "networkx-on-cugraph",
        library: "cugraph",
        severity: Severity::Hint,
        summary: "NetworkX algorithm that the nx-cugraph backend runs on the GPU",
        what: "A NetworkX algorithm (PageRank, betweenness centrality, Louvain, shortest paths, connected \
               components, …) that nx-cugraph implements, on a graph that is not evidently small.",
        why: "nx-cugraph is a NetworkX backend: with it installed and enabled, the same NetworkX calls run on \
              the GPU — 10x faster on small graphs and 500x or more on graphs with millions of edges. \
              Algorithms it lacks keep running in NetworkX.",
        example: "import networkx as nx\n\nG = nx.read_edgelist(\"edges.txt\", nodetype=int)\nranks = nx.pagerank(G)",
        use_instead: "# Unchanged code, run as: NX_CUGRAPH_AUTOCONFIG=True python script.py\n\
                      # or per call:\nranks = nx.pagerank(G, backend=\"cugraph\")",
    },
    Rule {
        code: "RAFT001",
        name: "eigsh-on-raft",
        library: "raft",
        severity: Severity::Hint,
        summary: "SciPy sparse eigensolver that pylibraft runs on the GPU",
        what: "`scipy.sparse.linalg.eigsh` without shift-invert (`sigma`), which pylibraft's Lanczos solver \
               implements for CSR matrices of float32/float64.",
        why: "Sparse eigenproblems (spectral clustering, graph partitioning) spend their time in sparse \
              matrix-vector products, which the GPU runs far faster. Move the matrix once with \
              `cupyx.scipy.sparse.csr_matrix` and call pylibraft's `eigsh`.",
        example: "from scipy.sparse.linalg import eigsh\n\nvalues, vectors = eigsh(A, k=10, which=\"LM\")",
        use_instead: "import cupyx.scipy.sparse as gpu_sparse\nfrom pylibraft.sparse.linalg import eigsh\n\n\
                      values, vectors = eigsh(gpu_sparse.csr_matrix(A), k=10, which=\"LM\")",
    },
    Rule {
        code: "KVIKIO001",
        name: "binary-read-to-gpu",
        library: "kvikio",
        severity: Severity::Hint,
        summary: "Raw binary file read that KvikIO reads straight into GPU memory",
        what: "`numpy.fromfile`, `numpy.frombuffer(f.read())` and similar reads of raw binary data into an array.",
        why: "Data headed for the GPU normally travels disk → host memory → GPU. KvikIO reads files directly into GPU buffers, using GPUDirect Storage to skip host memory where the system supports it and parallel POSIX reads otherwise.",
        example: "import cupy as cp\nimport numpy as np\n\ndata = np.fromfile(\"volume.raw\", dtype=np.float32)\nd_data = cp.asarray(data)",
        use_instead: "import cupy as cp\nimport kvikio\n\nn = 512 * 512 * 512\nd_data = cp.empty(n, dtype=cp.float32)\nwith kvikio.CuFile(\"volume.raw\", \"r\") as f:\n    f.read(d_data)",
    },
    Rule {
        code: "CUCIM001",
        name: "skimage-on-cucim",
        library: "cucim",
        severity: Severity::Hint,
        summary: "scikit-image or OpenCV call that cuCIM runs on the GPU",
        what: "A scikit-image function that `cucim.skimage` implements with the same API (filters, morphology, measurement, colour, exposure, transforms…), or an OpenCV filter with a close cuCIM equivalent. Functions cuCIM lacks (watershed, SLIC, HOG…) get no hint.",
        why: "cuCIM mirrors scikit-image on CuPy arrays: move the image to the GPU once with `cp.asarray`, chain the operations there, and bring back only the result. On images of 512×512 and larger the gain is typically 10-100x.",
        example: "from skimage.filters import gaussian\n\nsmooth = gaussian(image, sigma=3)",
        use_instead: "import cupy as cp\nfrom cucim.skimage.filters import gaussian\n\nsmooth = gaussian(cp.asarray(image), sigma=3)",
    },
    Rule {
        code: "CUVS001",
        name: "vector-index-on-cuvs",
        library: "cuvs",
        severity: Severity::Hint,
        summary: "Faiss, Annoy, hnswlib or PyNNDescent index that cuVS builds and searches on the GPU",
        what: "A CPU nearest-neighbour index (Faiss flat/IVF/HNSW indexes, Annoy, hnswlib, PyNNDescent), mapped to the matching cuVS index: brute_force, ivf_flat, ivf_pq, ivf_sq, cagra or nn_descent.",
        why: "Building and searching vector indexes is massively parallel; cuVS's CAGRA graph index in particular is built and searched far faster on the GPU, and can be converted to HNSW for CPU serving.",
        example: "import faiss\nimport numpy as np\n\nvectors = np.random.rand(1_000_000, 128).astype(np.float32)\nqueries = np.random.rand(10_000, 128).astype(np.float32)\nindex = faiss.IndexFlatL2(128)\nindex.add(vectors)\nD, I = index.search(queries, 10)",
        use_instead: "import cupy as cp\nfrom cuvs.neighbors import brute_force\n\nvectors = cp.random.rand(1_000_000, 128, dtype=cp.float32)\nqueries = cp.random.rand(10_000, 128, dtype=cp.float32)\nindex = brute_force.build(vectors)\nD, I = brute_force.search(index, queries, 10)",
    },
    Rule {
        code: "CUSPATIAL001",
        name: "geopandas-on-cuspatial",
        library: "cuspatial",
        severity: Severity::Info,
        summary: "GeoPandas spatial operation with a cuSpatial equivalent (cuSpatial is archived)",
        what: "GeoPandas spatial joins, point-in-polygon tests and distances that cuSpatial implements.",
        why: "cuSpatial ran these on the GPU, but it is archived: its last release (25.04) pins cudf 25.4 and conflicts with current RAPIDS. Keep the geometry on the CPU with GeoPandas/Shapely and move the tabular work around it to cuDF; use cuSpatial only in a separate legacy environment.",
        example: "import geopandas as gpd\n\npoints = gpd.read_file(\"points.gpkg\")\nregions = gpd.read_file(\"regions.gpkg\")\njoined = gpd.sjoin(points, regions, predicate=\"within\")",
        use_instead: "# Keep the spatial join in GeoPandas; move the table work to cuDF:\njoined = gpd.sjoin(points, regions, predicate=\"within\")\nsummary = cudf.from_pandas(pd.DataFrame(joined.drop(columns=\"geometry\"))).groupby(\"region\").size()",
    },
    Rule {
        code: "CUXFILTER001",
        name: "dashboard-on-cuxfilter",
        library: "cuxfilter",
        severity: Severity::Info,
        summary: "Cross-filter dashboard code with a cuxfilter equivalent (cuxfilter is discontinued)",
        what: "Linked-selection dashboards (HoloViews `link_selections`) and Datashader aggregation over large frames.",
        why: "cuxfilter built such dashboards on cuDF, but RAPIDS 26.06 was its last release. For new work, prepare the data with cuDF and keep HoloViews/hvPlot/Datashader (which accept cuDF frames) served through Panel; use cuxfilter only where it is already in use.",
        example: "import holoviews as hv\n\nscatter = hv.Scatter(events, \"x\", \"y\")\nhistogram = hv.Histogram(events[\"x\"])\nlinked = hv.link_selections(scatter + histogram)",
        use_instead: "import cudf\n\ndf = cudf.read_parquet(\"events.parquet\")  # cuDF frames work with hvPlot/Datashader\nls = hv.link_selections.instance()\nls(scatter + histogram)",
    },
    Rule {
        code: "WARP002",
        name: "spatial-query-on-warp",
        library: "warp",
        severity: Severity::Hint,
        summary: "Geometry query (ray casting, closest point, SDF, marching cubes, rotations) that Warp runs on the GPU",
        what: "Calls to CPU geometry libraries (trimesh ray casting and proximity queries, SciPy rotations and KD-trees, scikit-image marching cubes) whose work Warp's meshes, hash grids and quaternion types do on the GPU; trimesh's ray API (`mesh.ray.intersects_id(...)`, `intersector.intersects_location(...)`) is recognised on a mesh the code receives.",
        why: "Warp has BVH-accelerated mesh queries (`wp.mesh_query_ray`, `wp.mesh_query_point`), hash grids for neighbour search and vector/quaternion types, all usable inside `@wp.kernel` functions that run once per query in parallel.",
        example: "import numpy as np\n\n\ndef hit_distances(mesh, origins, directions):\n    locations, rays, tris = mesh.ray.intersects_location(origins, directions)\n    return np.linalg.norm(locations - origins[rays], axis=1)",
        use_instead: "wp_mesh = wp.Mesh(points=wp.array(mesh.vertices, dtype=wp.vec3), indices=wp.array(mesh.faces.ravel(), dtype=int))\n# then a @wp.kernel that calls wp.mesh_query_ray(wp_mesh.id, origin, direction, max_t)",
    },
    Rule {
        code: "NUMBA002",
        name: "njit-to-cuda-jit",
        library: "numba",
        severity: Severity::Hint,
        summary: "Numba CPU-compiled function that could be a CUDA kernel",
        what: "`numba.njit`/`numba.jit` called with `parallel=True` (typically `@njit(parallel=True)` over a `prange` loop): a loop declared data-parallel, which could run on the GPU instead.",
        why: "A loop already compiled for the CPU with Numba is a good candidate for `@cuda.jit`: the body translates almost as is, with the loop index replaced by `cuda.grid(1)` and a bounds check. It pays off when the iterations are independent and number in the hundreds of thousands or more. The kernel is written for Numba-CUDA-MLIR (NVIDIA's successor to numba-cuda, which is in maintenance mode), or for numba-cuda on a GPU below compute capability 7.0, for a CUDA ufunc (`@vectorize`/`@guvectorize` with `target=\"cuda\"`, which Numba-CUDA-MLIR does not support yet) and in a file that already imports numba-cuda.",
        example: "import numpy as np\nfrom numba import njit, prange\n\n\n@njit(parallel=True)\ndef scale(x, out):\n    for i in prange(x.size):\n        out[i] = 2.0 * x[i]",
        use_instead: "from numba_cuda_mlir import cuda\n\n@cuda.jit\ndef scale(x, out):\n    i = cuda.grid(1)\n    if i < x.size:\n        out[i] = 2.0 * x[i]",
    },
    Rule {
        code: "GPU001",
        name: "transfer-in-loop",
        library: "cupy",
        severity: Severity::Warning,
        summary: "The same host data copied to the GPU in every iteration of a loop",
        what: "`cp.asarray(x)` or `cuda.to_device(x)` inside a loop, where `x` does not change in the loop.",
        why: "Host-to-device copies cross PCIe at a few tens of GB/s, far slower than the GPU's own memory. Copying the same data again in every iteration can cost more than the computation; copy once before the loop and reuse the device array.",
        example: "import cupy as cp\nimport numpy as np\n\nweights = np.random.rand(4096, 4096)\nd_x = cp.random.rand(4096)\nfor step in range(100):\n    d_weights = cp.asarray(weights)\n    out = d_weights @ d_x",
        use_instead: "import cupy as cp\nimport numpy as np\n\nweights = np.random.rand(4096, 4096)\nd_x = cp.random.rand(4096)\nd_weights = cp.asarray(weights)\nfor step in range(100):\n    out = d_weights @ d_x",
    },
    Rule {
        code: "GPU002",
        name: "sync-in-loop",
        library: "cupy",
        severity: Severity::Info,
        summary: "Copy back or synchronisation in every iteration of a loop",
        what: "Inside a loop: `cp.asnumpy`, `.get()`, `.item()`, `.copy_to_host()`, `float()`/`int()`/`bool()` of a GPU value, an explicit `synchronize()`, or an `if`/`while` that tests a GPU value.",
        why: "GPU calls are queued and return at once; anything that needs a value on the host makes the CPU wait for all queued work and copies the value back. Done every iteration, the GPU idles while Python catches up. Keep results on the GPU and check them every N iterations, or after the loop.",
        example: "import cupy as cp\n\nx = cp.random.rand(1_000_000)\ntol = 1e-6\nwhile True:\n    prev = x\n    x = cp.sqrt(x)\n    if cp.abs(x - prev).max() < tol:\n        break",
        use_instead: "import cupy as cp\n\nx = cp.random.rand(1_000_000)\ntol = 1e-6\nfor i in range(10_000):\n    prev = x\n    x = cp.sqrt(x)\n    if i % 50 == 0 and cp.abs(x - prev).max() < tol:  # check every 50 steps\n        break",
    },
    Rule {
        code: "GPU003",
        name: "kernel-without-bounds-check",
        library: "numba",
        severity: Severity::Warning,
        summary: "Numba CUDA kernel that indexes with cuda.grid() without a bounds check",
        what: "A `@cuda.jit` kernel that takes its index from `cuda.grid()` (or threadIdx/blockIdx) and never compares it with the array's size.",
        why: "The number of threads launched is rounded up to whole blocks, so the last block usually has threads whose index is past the end of the array. Without a check they read and write memory that isn't theirs: an illegal-address error, or silent corruption.",
        example: "from numba import cuda\n\n\n@cuda.jit\ndef scale(x, out):\n    i = cuda.grid(1)\n    out[i] = 2.0 * x[i]",
        use_instead: "from numba import cuda\n\n\n@cuda.jit\ndef scale(x, out):\n    i = cuda.grid(1)\n    if i < out.size:\n        out[i] = 2.0 * x[i]",
    },
    Rule {
        code: "GPU004",
        name: "bad-block-size",
        library: "numba",
        severity: Severity::Warning,
        summary: "Threads per block not a multiple of 32, or above 1024",
        what: "A kernel launch `kernel[blocks, threads](...)` whose threads per block (a literal or a known constant) is not a multiple of 32, or exceeds 1024.",
        why: "NVIDIA GPUs run threads in warps of 32; a block of 100 threads occupies 4 warps and leaves 28 thread slots idle. More than 1024 threads per block is not allowed at all: the launch fails.",
        example: "import numpy as np\nfrom numba import cuda\n\n\n@cuda.jit\ndef double(x, out):\n    i = cuda.grid(1)\n    if i < x.size:\n        out[i] = 2.0 * x[i]\n\n\nd_x = cuda.to_device(np.ones(1_000_000))\nd_out = cuda.device_array_like(d_x)\ndouble[(d_x.size + 99) // 100, 100](d_x, d_out)",
        use_instead: "import numpy as np\nfrom numba import cuda\n\n\n@cuda.jit\ndef double(x, out):\n    i = cuda.grid(1)\n    if i < x.size:\n        out[i] = 2.0 * x[i]\n\n\nd_x = cuda.to_device(np.ones(1_000_000))\nd_out = cuda.device_array_like(d_x)\nthreads = 128\ndouble[(d_x.size + threads - 1) // threads, threads](d_x, d_out)",
    },
    Rule {
        code: "GPU005",
        name: "timing-without-sync",
        library: "cupy",
        severity: Severity::Warning,
        summary: "Timing GPU work without synchronising first",
        what: "Two clock readings (`time.time()`, `time.perf_counter()`) around GPU work with no synchronisation before the second one.",
        why: "Kernel launches and CuPy calls return as soon as the work is queued. Reading the clock right after measures the launch, not the computation, which makes the GPU look impossibly fast — and the cost shows up later, wherever the program next waits.",
        example: "import time\n\nimport cupy as cp\n\nx = cp.random.rand(1 << 24)\nt0 = time.perf_counter()\ny = cp.fft.fft(x)\nelapsed = time.perf_counter() - t0",
        use_instead: "import time\n\nimport cupy as cp\n\nx = cp.random.rand(1 << 24)\nt0 = time.perf_counter()\ny = cp.fft.fft(x)\ncp.cuda.get_current_stream().synchronize()\nelapsed = time.perf_counter() - t0",
    },
    Rule {
        code: "GPU006",
        name: "float64-literal-in-float32-kernel",
        library: "numba",
        severity: Severity::Info,
        summary: "Python float literal in a float32 Numba kernel promotes it to float64",
        what: "A float literal such as `0.5` in a `@cuda.jit` kernel whose signature declares float32 data.",
        why: "Numba types Python floats as float64, so `0.5 * x[i]` with float32 `x` computes in float64. Consumer and many workstation GPUs run float64 at 1/32 or 1/64 of float32 speed.",
        example: "from numba import cuda\n\n\n@cuda.jit(\"void(float32[:], float32[:])\")\ndef half(x, out):\n    i = cuda.grid(1)\n    if i < x.size:\n        out[i] = 0.5 * x[i]",
        use_instead: "from numba import cuda, float32\n\n\n@cuda.jit(\"void(float32[:], float32[:])\")\ndef half(x, out):\n    i = cuda.grid(1)\n    if i < x.size:\n        out[i] = float32(0.5) * x[i]",
    },
    Rule {
        code: "GPU007",
        name: "numpy-on-gpu-data",
        library: "cupy",
        severity: Severity::Warning,
        summary: "NumPy function called on data that is already on the GPU",
        what: "A `numpy` function given a CuPy array (or a Numba device array).",
        why: "`np.asarray` of a CuPy array raises a TypeError, since CuPy refuses silent copies to the host. Other NumPy functions may be dispatched to CuPy, but they read as CPU code and any that are not dispatched copy the data to the host. Call the `cupy` function.",
        example: "import cupy as cp\nimport numpy as np\n\nx = np.random.rand(1_000_000)\nd = cp.asarray(x)\ntotal = np.sum(d)\nhost = np.asarray(d)",
        use_instead: "import cupy as cp\nimport numpy as np\n\nx = np.random.rand(1_000_000)\nd = cp.asarray(x)\ntotal = cp.sum(d)\nhost = cp.asnumpy(d)",
    },
    Rule {
        code: "GPU008",
        name: "cudf-python-udf",
        library: "cudf",
        severity: Severity::Info,
        summary: "Python function applied to a cuDF frame: it must compile with Numba",
        what: "`apply`, `map`, `applymap` or `apply_rows` on a cuDF DataFrame or Series with a Python function or lambda.",
        why: "cuDF compiles such functions with Numba to run on the GPU. Only numeric scalars (and some string operations) are supported; Python objects, containers or calls into other libraries fail to compile. Column arithmetic is faster and always runs on the GPU.",
        example: "import cudf\n\ndf = cudf.read_parquet(\"orders.parquet\")\ndf[\"total\"] = df.apply(lambda r: r[\"price\"] * r[\"qty\"], axis=1)",
        use_instead: "import cudf\n\ndf = cudf.read_parquet(\"orders.parquet\")\ndf[\"total\"] = df[\"price\"] * df[\"qty\"]",
    },
    Rule {
        code: "GPU009",
        name: "removed-gpu-api",
        library: "warp",
        severity: Severity::Warning,
        summary: "Import of a GPU API that was removed, moved or archived",
        what: "Imports of `warp.sim` (removed in Warp 1.10), `pylibraft.neighbors` (moved to cuVS) and `cuspatial` (archived).",
        why: "Code on these APIs breaks on current releases or pins old ones that conflict with the rest of RAPIDS. Each message names the replacement.",
        example: "from pylibraft.neighbors import brute_force",
        use_instead: "from cuvs.neighbors import brute_force",
    },
    Rule {
        code: "GPU010",
        name: "float64-on-slow-fp64-gpu",
        library: "cupy",
        severity: Severity::Info,
        summary: "float64 matrix work on a GPU that runs float64 at 1/32 or 1/64 speed",
        what: "CuPy matrix products, linear algebra and FFTs on float64 data (the default) when the GPU advice is \
               for (attached or targeted) has a slow FP64 unit: GeForce and most workstation cards, T4, A10, L4. \
               Nothing is said on GPUs with full-rate FP64 such as the A100, H100 or H200.",
        why: "Consumer and inference GPUs have few float64 units: an RTX 4090 runs float64 at 1/64 of its float32 \
              rate, a T4 at 1/32. Work that tolerates single precision runs many times faster in float32, and \
              float32 matrix products can also use the tensor cores (TF32).",
        example: "import cupy as cp\n\na = cp.random.rand(4096, 4096)\nb = a @ a",
        use_instead: "import cupy as cp\n\na = cp.random.rand(4096, 4096, dtype=cp.float32)\nb = a @ a",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_prefixed_by_library() {
        let mut seen = std::collections::HashSet::new();
        for r in RULES {
            assert!(seen.insert(r.code), "{} twice", r.code);
            // GPU… rules are about code already on the GPU; the others are named after their library.
            assert!(
                r.code.starts_with("GPU") || r.code.starts_with(&r.library.to_ascii_uppercase()),
                "{} vs {}",
                r.code,
                r.library
            );
            assert!(gpulens_knowledge::Knowledge::get().library(r.library).is_some(), "{}", r.library);
        }
    }
}
