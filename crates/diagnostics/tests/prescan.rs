//! `check_text` parses only what can produce a finding (it skips test
//! functions and the insides of long docstrings); its findings must be
//! exactly those of `check` over the whole tree. Held to that over every
//! fixture and example here, over texts built to trip the outline, and over
//! a folder of real code named by `GPULENS_CORPUS` (the test command passes
//! the benchmark corpus: 4,977 files of five libraries).

use std::path::{Path, PathBuf};

use gpulens_diagnostics::{check, check_text, check_text_unfixed, Settings};

use gpulens_gpu::GpuProfile;

fn python_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            python_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "py") {
            out.push(path);
        }
    }
}

/// The findings of a whole parse of `text`, once `check_text`'s partial
/// parse is seen to find the same.
fn same_as_whole(text: &str) -> Vec<gpulens_diagnostics::Finding> {
    let settings = Settings::default();
    let gpu = GpuProfile::target("H200").unwrap();
    let whole = check(text, &gpulens_syntax::parse(text), &settings, &gpu);
    assert_eq!(check_text(text, &settings, &gpu), whole, "{text}");
    whole
}

/// The findings of a whole parse of `text` for `gpu`, once `check_text`
/// and `check_text_unfixed` are seen to find the same (fixes aside).
fn same_both_ways(text: &str, gpu: &GpuProfile) -> Vec<gpulens_diagnostics::Finding> {
    let settings = Settings::default();
    let whole = check(text, &gpulens_syntax::parse(text), &settings, gpu);
    assert_eq!(check_text(text, &settings, gpu), whole, "{text}");
    assert_eq!(check_text_unfixed(text, &settings, gpu), unfixed(&whole), "{text}");
    whole
}

/// The files whose two results differ.
/// `findings` without their fixes.
fn unfixed(findings: &[gpulens_diagnostics::Finding]) -> Vec<gpulens_diagnostics::Finding> {
    findings.iter().cloned().map(|mut f| {
        f.fix = None;
        f
    }).collect()
}

/// The files whose findings `check_text` (with or without fixes) doesn't
/// find as a whole parse does.
fn differing(files: &[PathBuf]) -> Vec<String> {
    let settings = Settings::default();
    let gpu = GpuProfile::target("H200").unwrap();
    let chunks: Vec<&[PathBuf]> = files.chunks(files.len().div_ceil(4).max(1)).collect();
    std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                let (settings, gpu) = (&settings, &gpu);
                scope.spawn(move || {
                    let mut bad = Vec::new();
                    for path in chunk {
                        let Ok(text) = std::fs::read_to_string(path) else { continue };
                        let whole = check(&text, &gpulens_syntax::parse(&text), settings, gpu);
                        if check_text(&text, settings, gpu) != whole || check_text_unfixed(&text, settings, gpu) != unfixed(&whole) {
                            bad.push(path.display().to_string());
                        }
                    }
                    bad
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn fixtures_and_examples() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["tests/fixtures", "../../examples", "../../tests/fixtures"] {
        python_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 30, "fixtures missing: {}", files.len());
    assert_eq!(differing(&files), Vec::<String>::new());
}

/// Texts where a careless outline would cut in the wrong place.
#[test]
fn texts_that_look_like_something_else() {
    let doc = "d".repeat(300);
    let cases = [
        // A def inside a string, a docstring that holds code.
        format!("import numpy as np\ns = '''\ndef test_x():\n'''\ndef f(a):\n    \"\"\"{doc}\n    np.sort(a)\n    \"\"\"\n    return np.fft.fft(a)\n"),
        // An f-string docstring is code, and nested quotes (Python 3.12).
        format!("import numpy as np\ndef f(a):\n    f\"\"\"{{np.fft.fft(a)}} {doc}\"\"\"\n    x = f'{{a[\"k\"]}}'\n    return np.sort(a)\n"),
        // Every method of a class is a test: the body can't be emptied.
        "import numpy as np\nclass TestA:\n    def test_a(self):\n        np.sort(x)\n    def test_b(self):\n        pass\nclass B:\n    def run(self, a):\n        return np.fft.fft(a)\n".to_string(),
        // Decorated tests and fixtures, continuation lines, comments.
        "import numpy as np\nimport pytest\n@pytest.mark.parametrize('x', [np.fft.fft(np.ones(100000))])\ndef test_a(x):\n    np.sort(x)\n\n@pytest.fixture\ndef data():\n    return np.fft.fft(np.ones(100000))\n\nx = 1 + \\\n    2\n# def test_c():\ndef g(a):\n    return np.fft.fft(a)\n".to_string(),
        // Windows line ends, a syntax error, a tab.
        "import numpy as np\r\ndef test_a():\r\n    np.sort(x)\r\ndef g(a):\r\n    return np.fft.fft(a)\r\n".to_string(),
        "import numpy as np\ndef test_a(:\n    np.sort(x)\ndef g(a):\n    return np.fft.fft(a)\n".to_string(),
        "import numpy as np\ndef test_a():\n\tnp.sort(x)\ndef g(a):\n\treturn np.fft.fft(a)\n".to_string(),
        // Bytes error recovery skips to join a chain (`;`, `!`).
        "import numpy as np\ndef test_a():\n    np.sort(x)\ndef f(x):\n    return np.fft!.rfft(x)\n".to_string(),
        "import numpy as np\ndef test_a():\n    np.sort(x)\ndef f(x):\n    return np ; .fft.rfft(x)\n".to_string(),
        // A GPU library: tests are checked too.
        "import cupy as cp\nimport numpy as np\ndef test_a():\n    for i in range(10):\n        cp.asnumpy(x)\n".to_string(),
        // Imported inside a function, or after a colon: still a GPU library.
        "import numpy as np\ndef test_a():\n    for i in range(10):\n        cp.asnumpy(x)\ndef g():\n    import cupy as cp\n".to_string(),
        "import numpy as np\ntry: import cupy as cp\nexcept ImportError: pass\ndef test_a():\n    for i in range(10):\n        cp.asnumpy(x)\n".to_string(),
        // Named only in words and strings (`engine=\"numba\"`), or as a name
        // imported from elsewhere: not a GPU library, tests are skipped.
        "import numpy as np\nfrom pandas.compat import numba\ndef test_a():\n    np.sort(x)\ndef g(a, engine='numba'):\n    \"\"\"Uses numba from cupy.\"\"\"\n    return np.fft.fft(a)\n".to_string(),
        // A dedent to no open level (Python's IndentationError): tree-sitter
        // reads `return` as the function's, where the lines' indents alone
        // would put it in the loop (which then looks sequential).
        "import numpy as np\n\ndef power(x):\n for i in range(n):\n    out[i] = a[i] * 2\n  return x\n".to_string(),
    ];
    let settings = Settings::default();
    let gpu = GpuProfile::target("H200").unwrap();
    for text in &cases {
        let whole = check(text, &gpulens_syntax::parse(text), &settings, &gpu);
        assert_eq!(check_text(text, &settings, &gpu), whole, "{text}");
    }
    // The cases are not vacuous: most have findings, and the outline is
    // trusted where it should be (not for the tab, the syntax error, or the
    // GPU library's tests, where nothing would be skipped).
    let partial: Vec<bool> = cases.iter().map(|t| gpulens_diagnostics::parses_in_part(t)).collect();
    assert_eq!(partial, [true, false, true, true, true, false, false, false, false, false, false, false, true, false]);
    let with_findings = cases.iter().filter(|t| !check_text(t, &settings, &gpu).is_empty()).count();
    assert!(with_findings >= 12, "{with_findings}");
}

/// Functions that name no library call directly but still have findings
/// (or shape another function's): each reason `check_text` keeps one.
#[test]
fn functions_kept_for_every_reason_a_rule_starts() {
    let quiet = "def quiet(items):\n    return [str(item) for item in items]\n\n";
    let cases = [
        // Imports inside the function, in every form.
        format!("import os\n{quiet}def f(a):\n    from numpy import fft as F\n    return F.rfft(a)\n"),
        format!("import os\n{quiet}def f(a):\n    import numpy.linalg as la\n    return la.svd(a)\n"),
        format!("import os\n{quiet}def f(a):\n    from scipy import (\n        fft,\n    )\n    return fft.fft(a)\n"),
        // Imports with comments, a backslash, and a star (which binds nothing the analysis reads).
        format!("import os  # noqa\nfrom os.path import *\n{quiet}def f(a):\n    from scipy import (  # the FFTs\n        fft,  # noqa: F401\n    )\n    from numpy import linalg, \\\n        random\n    return fft.fft(a)\n"),
        // A module-level value built from a library, used by name.
        format!("import pandas as pd\nframe = pd.read_csv('big.csv')\n{quiet}def f():\n    for _, row in frame.iterrows():\n        print(row)\n"),
        // Read by bytes outside the functions: an import in a block, a
        // statement after a semicolon over several lines.
        format!("try:\n    import numpy as np\nexcept ImportError:\n    np = None\n{quiet}def f(a):\n    return np.fft.fft(a)\n"),
        format!("import pandas as pd\nx = 1; frame = (\n    pd.read_csv('big.csv')\n)\n{quiet}def f():\n    for _, row in frame.iterrows():\n        print(row)\n"),
        // An index loop in a module that imports NumPy, naming none of it.
        format!("import numpy as np\n{quiet}def f(a, out):\n    for i in range(len(a)):\n        out[i] = a[i] * 2.0 + 1.0\n"),
        format!("import numpy as np\n{quiet}def f(a):\n    s = 0.0\n    for i in range(len(a)):\n        s += a[i] * a[i]\n    return s\n"),
        // A model built in one method, used in another.
        format!("from sklearn.neighbors import NearestNeighbors\n{quiet}class Index:\n    def __init__(self):\n        self.nn = NearestNeighbors(n_neighbors=5)\n    def names(self):\n        return []\n    def query(self, points):\n        return self.nn.kneighbors(points)\n"),
        // A caller in a loop of a function with findings (hotness), spelled
        // with spaces. (Each call gets a slice, not one item of a collection,
        // which would leave the callee's work to be batched.)
        format!("import numpy as np\n{quiet}def spectrum(x):\n    return np . fft . rfft(x)\n\ndef caller(frames):\n    for start in range(0, len(frames), 256):\n        spectrum(frames[start:start + 256])\n"),
        // Callers of callers: the loop in `analyse` gets advice for calling
        // `spectrum`, and `driver` calls `analyse` in a loop (three parses).
        // (Each pass gets the same signals, not one item of them, which
        // would leave the work to be batched two calls away.)
        format!("import numpy as np\n{quiet}def spectrum(x):\n    return np.fft.rfft(x)\n\ndef analyse(signal, frames):\n    for frame in frames:\n        spectrum(signal)\n\ndef driver(signals, frames):\n    for repeat in range(3):\n        analyse(signals, frames)\n"),
        // Chains broken over lines: in brackets, after a backslash.
        format!("import numpy as np\n{quiet}def f(x):\n    return (np\n        .fft\n        .rfft(x))\n"),
        format!("import numpy as np\n{quiet}def f(x):\n    return np \\\n        .fft.rfft(x)\n"),
        format!("import numpy as np\n{quiet}def f(x):\n    return np.fft. \\\n        rfft(x)\n"),
        // Values made in a function, read there by what a rule reports on:
        // a method of a table, a loop.
        format!("import pandas as pd\n{quiet}def f(rows):\n    frame = pd.DataFrame(rows)\n    return frame.groupby('k').mean()\n"),
        format!("import pandas as pd\n{quiet}def f(rows):\n    frame = pd.DataFrame(rows)\n    for _, row in frame.iterrows():\n        print(row)\n"),
        format!("import os\n{quiet}def f(a):\n    import numpy as np\n    out = np.empty(1_000_000)\n    for i in range(1_000_000):\n        out[i] = a[i] * 2.0 + 1.0\n    return out\n"),
        // Rules that know an API by its names, in a function that makes
        // arrays: a mesh query by its parameters, a ray query, an index search.
        format!("import numpy as np\n{quiet}def distances(mesh, points):\n    points = np.asarray(points)\n    return mesh.nearest.on_surface(points)\n"),
        format!("import numpy as np\n{quiet}def cast(scene, origins, directions):\n    origins = np.asarray(origins)\n    return scene.ray.intersects_location(origins, np.asarray(directions))\n"),
        format!("import faiss\nimport numpy as np\n{quiet}def nearest(index, queries):\n    queries = np.asarray(queries, dtype=np.float32)\n    return index.search(queries, 10)\n"),
        // Light operations count in a chain: three statements of them, or
        // an alias of one called three times.
        format!("import numpy as np\n{quiet}def f(a):\n    b = np.abs(a)\n    c = np.clip(b, 0, 1)\n    return np.sum(c)\n"),
        format!("import numpy as np\n{quiet}def f(a):\n    total = np.cumsum\n    b = total(a)\n    c = total(b)\n    return total(c)\n"),
        // A kernel's name is taken by a function the parse leaves out.
        format!("import numpy as np\n{quiet}def scale_kernel():\n    return 'taken'\n\ndef scale(a):\n    out = np.empty(1_000_000)\n    for i in range(1_000_000):\n        out[i] = a[i] * 2.0\n    return out\n"),
        // Work through `self` on what the code doesn't show built: a
        // scikit-learn neighbour query, a Faiss index's search.
        format!("from sklearn.base import clone\n{quiet}class Finder:\n    def __init__(self, model):\n        self.model = clone(model)\n    def names(self):\n        return []\n    def query(self, points):\n        return self.model.kneighbors(points)\n"),
        format!("import faiss\n{quiet}class Store:\n    def __init__(self, index):\n        self.index = index\n    def names(self):\n        return []\n    def nearest(self, queries):\n        return self.index.search(queries, 10)\n"),
    ];
    let settings = Settings::default();
    let gpu = GpuProfile::target("H200").unwrap();
    for text in &cases {
        let whole = check(text, &gpulens_syntax::parse(text), &settings, &gpu);
        assert!(!whole.is_empty(), "no finding: the case tests nothing\n{text}");
        assert_eq!(check_text(text, &settings, &gpu), whole, "{text}");
        assert!(gpulens_diagnostics::parses_in_part(text), "nothing left out\n{text}");
    }
    // The hot caller's message is kept, and the kernel got another name.
    let details = |t: &str| check_text(t, &settings, &gpu).iter().map(|f| f.details.clone()).collect::<Vec<_>>().join("\n");
    assert!(details(&cases[10]).contains("inside a loop in `caller`"), "{}", details(&cases[10]));
    // (`driver` calls `analyse` in its loop: the hotness reaches two calls up.)
    assert!(details(&cases[11]).contains("inside a loop in `driver`"), "{}", details(&cases[11]));
    let fixes = check_text(&cases[23], &settings, &gpu);
    let edits: String = fixes.iter().flat_map(|f| f.fix.iter().flat_map(|x| x.edits.iter().map(|e| e.text.clone()))).collect();
    assert!(edits.contains("scale_kernel2"), "{edits}");
}

/// A file whose every definition is left out (or is a test) and whose code
/// outside them starts no rule is not parsed at all; one where the code
/// outside starts a rule is.
#[test]
fn files_that_start_nothing_are_not_parsed() {
    let quiet = [
        // Tests only, the library named in imports and a decorator's data.
        "import numpy as np\nfrom numpy.fft import fft\nimport pytest\n\n@pytest.mark.parametrize(\"n\", [10, 100])\ndef test_fft(n):\n    assert fft(np.ones(n)).shape == (n,)\n",
        // A package's names: imported (which starts nothing) and listed.
        "from numpy import dot, linalg\nfrom .core import solve\n\n__all__ = [\"dot\", \"linalg\", \"solve\"]\n",
        // A class on a library's base, with attributes and quiet methods.
        "import numpy as np\nfrom sklearn.base import BaseEstimator\n\n\nclass Wrapper(BaseEstimator):\n    \"\"\"Keeps a name.\"\"\"\n    kind = \"wrapper\"\n\n    def __init__(self, name):\n        self.name = name\n\n    def __repr__(self):\n        return f\"Wrapper({self.name!r})\"\n",
        // A value made at module level, read by a test only.
        "import numpy as np\n\nGRID = np.linspace(0, 1, 11)\n\n\ndef test_grid():\n    assert np.diff(GRID).min() > 0\n",
    ];
    let starting = [
        // Library work at module level: through the module, through a name
        // imported from it, after a semicolon on an import's line, in a
        // class body.
        "import numpy as np\n\nsignal = np.random.rand(1_000_000)\nspectrum = np.fft.fft(signal)\n",
        "from numpy.fft import fft\nimport numpy as np\n\nspectrum = fft(np.random.rand(1_000_000))\n",
        "import numpy as np; spectrum = np.fft.fft(np.random.rand(1_000_000))\n",
        "import numpy as np\n\n\nclass Table:\n    values = np.fft.fft(np.random.rand(1_000_000))\n",
        // An index loop where an array library is imported.
        "import numpy as np\n\nn = 1_000_000\nout = np.empty(n)\nfor i in range(n):\n    out[i] = i * 2.0 + 1.0\n",
        // Old Mac line ends: the import's line is not the whole file.
        "import numpy as np\rspectrum = np.fft.fft(np.random.rand(1_000_000))\r",
        // A table made there, and a method of it some rule reports on.
        "import pandas as pd\n\nframe = pd.DataFrame({\"k\": range(10**6)})\ntotal = frame.apply(lambda r: r.k * 2, axis=1)\n",
    ];
    for text in quiet {
        assert_eq!(same_as_whole(text), Vec::new(), "{text}");
        assert!(gpulens_diagnostics::parses_nothing(text), "parsed\n{text}");
    }
    for text in starting {
        assert!(!same_as_whole(text).is_empty(), "no finding: the case tests nothing\n{text}");
        assert!(!gpulens_diagnostics::parses_nothing(text), "not parsed\n{text}");
    }
}

#[test]
fn corpus_named_by_gpulens_corpus() {
    let Some(dir) = std::env::var_os("GPULENS_CORPUS") else {
        eprintln!("GPULENS_CORPUS not set: only the fixtures were compared");
        return;
    };
    let mut files = Vec::new();
    python_files(Path::new(&dir), &mut files);
    assert!(!files.is_empty(), "no Python files under {}", Path::new(&dir).display());
    let bad = differing(&files);
    assert!(bad.is_empty(), "{} of {} files differ: {:?}", bad.len(), files.len(), &bad[..bad.len().min(20)]);
    eprintln!("{} files compared", files.len());
}

/// What the pre-scan leaves out: functions whose imports, strings and
/// comments name a library but whose code starts no rule.
#[test]
fn functions_left_out() {
    let doc = "d".repeat(300);
    let text = format!(
        "import numpy as np  # noqa: F401\nfrom os.path import *\n\n\
         def reads(path):\n    \"\"\"Read with np.fft.fft? {doc}\"\"\"\n    import json  # np.sort(x)\n    return json.load(open(path))\n\n\
         def names(items):\n    '''np.linalg.svd {doc}'''\n    from collections import (  # np.sort\n        Counter,\n    )\n    return Counter(items)\n\n\
         def transform(x):\n    return np.fft.fft(x)\n"
    );
    assert_eq!(gpulens_diagnostics::analysed_definitions(&text), Some(vec!["transform".to_string()]));
    let whole = same_as_whole(&text);
    assert_eq!(whole.len(), 1, "{whole:?}");
}

/// Names the functions can't see don't keep them: a class attribute (a
/// method doesn't see its class's names), an import of a module no rule
/// knows, a module name the function's parameter hides, a live name spelled
/// in a string of a module-level statement. A nested function reads the
/// module's name, so there the parameter hides nothing.
#[test]
fn names_out_of_sight_keep_nothing() {
    let text = "import numpy as np\nfrom pytest import raises as check_raises\n\n\
                for grid in np.meshgrid(np.arange(3), np.arange(3)):\n    pass\n\n\
                class Table:\n    rows = np.zeros(10)\n\n    def count(self, rows):\n        return len(rows)\n\n    def describe(self):\n        check_raises(ValueError)\n        return self.__class__.__name__\n\n\
                def size(grid):\n    return len(grid)\n\n\
                notes = {\"see\": \"grid\"}\n\n\
                def note():\n    return notes[\"see\"]\n\n\
                def nested(grid):\n    def inner():\n        return grid.sum()\n    return inner\n\n\
                class Scaler:\n    def fit(self, data):\n        self.low = min(data)\n        return self\n\n    def fit_transform(self, data):\n        return self.fit(data).transform(data)\n";
    assert_eq!(gpulens_diagnostics::analysed_definitions(text), Some(vec!["nested".to_string()]));
    same_as_whole(text);
}

/// A light array operation in a loop is reported only on a whole axis of an
/// array (`x[:, j]`): a loop that applies one to each piece it gets is left
/// out, one that reads columns is kept.
#[test]
fn light_operations_in_loops() {
    let text = "import numpy as np\n\n\
                def per_piece(pieces):\n    for piece in pieces:\n        print(np.abs(piece))\n\n\
                def per_piece_max(pieces):\n    for piece in pieces:\n        print(np.abs(piece).max())\n\n\
                def per_column(table, n):\n    j = 0\n    while j < n:\n        print(np.abs(table[:, j]))\n        j = j + 1\n";
    // (`np.abs(piece).max()` keeps its function: `.max()` on an array is
    // `np.max`, and the bytes can't tell whether `np.abs` made one.)
    assert_eq!(
        gpulens_diagnostics::analysed_definitions(text),
        Some(vec!["per_piece_max".to_string(), "per_column".to_string()])
    );
    same_as_whole(text);
}

/// An index loop keeps its function only when it could be a kernel: it
/// writes an element or accumulates, and its body holds none of the
/// statements that stop one (a `return`, a `raise`, a `with`, a nested
/// `def`...). A loop under another loop is judged on its own body, and a
/// word in a string says nothing.
#[test]
fn index_loops_that_cannot_be_kernels() {
    let text = "import numpy as np\n\n\
                def first_negative(x):\n    for i in range(len(x)):\n        if x[i] < 0:\n            return i\n        x[i] = 0\n\n\
                def checked(x, n):\n    for i in range(n):\n        if x[i] < 0:\n            raise ValueError('negative')\n        x[i] += 1\n\n\
                def logged(x, n, path):\n    for i in range(n):\n        with open(path) as f:\n            x[i] = float(f.read())\n\n\
                def inner_clean(x, n, m):\n    for i in range(n):\n        if i > m:\n            return\n        for j in range(m):\n            x[i, j] = i * j\n\n\
                def words_in_strings(x, n):\n    for i in range(n):  # return early? no\n        x[i] = 2 * i\n    msg = 'return'\n\n\
                def one_line(x, n):\n    for i in range(n): x[i] = i\n";
    assert_eq!(
        gpulens_diagnostics::analysed_definitions(text),
        Some(vec!["inner_clean".to_string(), "words_in_strings".to_string(), "one_line".to_string()])
    );
    let whole = same_as_whole(text);
    assert!(whole.iter().filter(|f| f.code == "NUMBA001").count() >= 2, "{whole:?}");
}

/// The byte-level reading also finds what stops a loop being a kernel in
/// its expressions: a call of a Python function, a string, a dictionary or
/// set, an inner loop over a Python collection. Math calls (`np.`, `math.`,
/// an array's own reductions), a keyword before a parenthesis and a
/// gather of elements in a comprehension stop nothing.
#[test]
fn index_loops_doing_python_work() {
    let text = "import math\nimport numpy as np\n\n\
                def calls_python(x, n):\n    for i in range(n):\n        x[i] = helper(i)\n\n\
                def reads_a_string_key(x, d, n):\n    for i in range(n):\n        x[i] = d['k'] * i\n\n\
                def builds_a_dict(x, n):\n    for i in range(n):\n        seen = {}\n        x[i] = i\n\n\
                def over_items(x, items, n):\n    for i in range(n):\n        for item in items:\n            x[i] += item\n\n\
                def math_only(x, a, b, n):\n    for i in range(n):\n        x[i] = np.sqrt(a[i]) + math.exp(b[i]) + a.sum()\n\n\
                def keyword_paren(x, n):\n    for i in range(n):\n        if(x[i] > 0): x[i] = 0\n\n\
                def gathers(x, a, idx, n):\n    for i in range(n):\n        x[i] = max([a[p] for p in idx])\n";
    assert_eq!(
        gpulens_diagnostics::analysed_definitions(text),
        Some(vec!["math_only".to_string(), "keyword_paren".to_string(), "gathers".to_string()])
    );
    let whole = same_as_whole(text);
    assert!(whole.iter().any(|f| f.code == "NUMBA001"), "{whole:?}");
}

/// A function that makes arrays and calls a model's method (`fit`,
/// `search`) is kept only where a rule can read that call: through `self`,
/// a neighbour query where scikit-learn is imported, an index method where
/// its library is. Fitting a model passed in, in a module that imports
/// none of them, keeps nothing.
#[test]
fn model_methods_kept_where_a_rule_reads_them() {
    let text = "import numpy as np\n\n\
                def fit_passed(model, n):\n    x = np.zeros((n, 3))\n    return model.fit(x).predict(x)\n\n\
                def add_up(parts, n):\n    total = np.zeros(n)\n    parts.add(total)\n    return total\n\n\
                class Wrapper:\n    def refit(self, n):\n        x = np.zeros((n, 3))\n        return self.model.fit(x)\n";
    assert_eq!(gpulens_diagnostics::analysed_definitions(text), Some(vec!["refit".to_string()]));
    let faiss = "import numpy as np\nimport faiss\n\n\
                 def nearest(index, n):\n    q = np.zeros((n, 64), dtype=np.float32)\n    return index.search(q, 10)\n\n\
                 def fit_passed(model, n):\n    return model.fit(np.zeros((n, 3)))\n";
    assert_eq!(gpulens_diagnostics::analysed_definitions(faiss), Some(vec!["nearest".to_string()]));
    same_as_whole(text);
    let whole = same_as_whole(faiss);
    assert!(whole.iter().any(|f| f.code == "CUVS001"), "{whole:?}");
}

/// Light array operations keep a function only when they could chain: in
/// three statements or more (several in one statement are one pass). What
/// follows an `if` line's colon is a statement of its own.
#[test]
fn light_operations_chain_across_statements() {
    let text = "import numpy as np\n\n\
                def one_statement(x):\n    return np.sqrt(np.abs(x)) + np.mean(x)\n\n\
                def two_statements(x):\n    y = np.abs(\n        np.sqrt(x))\n    return np.mean(y)  # np.sin(y)\n\n\
                def three_statements(x):\n    y = np.abs(x)\n    z = np.sqrt(y)\n    return np.mean(z)\n\n\
                def one_line(x, flag):\n    x = np.sqrt(x)\n    if flag: y = np.abs(x); return np.mean(y)\n";
    assert_eq!(
        gpulens_diagnostics::analysed_definitions(text),
        Some(vec!["three_statements".to_string(), "one_line".to_string()])
    );
    same_as_whole(text);
}

/// Light operations in a condition (`if`, `elif`, `while`) or an
/// assertion check data: they make no chain, but the same operations in the
/// body under a condition do.
#[test]
fn light_operations_in_conditions_make_no_chain() {
    let text = "import numpy as np\n\n\
                def checks(x, y):\n    assert np.all(x >= 0)\n    if np.any(np.isnan(y)):\n        raise ValueError\n    \
                while np.max(x) > 1:\n        x = x / 2\n    return np.sum(x)\n\n\
                def one_line(x):\n    if np.any(x): y = np.abs(x); return np.mean(y)\n\n\
                def works(x, y):\n    if x is not None:\n        y = np.abs(x)\n    z = np.sqrt(y)\n    return np.mean(z)\n";
    assert_eq!(gpulens_diagnostics::analysed_definitions(text), Some(vec!["works".to_string()]));
    same_as_whole(text);
}

/// A class whose every method is left out (a test class) is left out whole
/// when it stands undecorated in the module with a header that calls
/// nothing: no method of it is parsed to keep its body from emptying. A
/// decorated one, or one whose header calls, keeps its smallest method (its
/// decorators and header are parsed: they could start a rule), parsed but
/// not walked (a test shows no finding).
#[test]
fn test_classes_left_out_whole() {
    let text = "import numpy as np\n\n\
                class TestSolve:\n    def test_small(self):\n        np.linalg.solve(a, b)\n\n    def test_big(self):\n        x = np.fft.fft(y)\n        return np.linalg.eig(x)\n\n\
                def transform(a, n):\n    m = np.random.rand(n, n)\n    return np.linalg.inv(m) @ a\n";
    assert_eq!(gpulens_diagnostics::analysed_definitions(text), Some(vec!["transform".to_string()]));
    let decorated = text.replace("class TestSolve", "@pytest.mark.slow\nclass TestSolve");
    // A header that calls something is parsed too.
    let calling = text.replace("class TestSolve:", "class TestSolve(base(np.ones(3))):");
    for kept in [&decorated, &calling] {
        assert_eq!(gpulens_diagnostics::analysed_definitions(kept), Some(vec!["transform".to_string()]));
        assert!(gpulens_diagnostics::parses_in_part(kept));
    }
    for text in [text, &decorated, &calling] {
        let whole = same_as_whole(text);
        assert!(whole.iter().any(|f| f.code == "CUPY001"), "{whole:?}");
    }
}

/// A function that calls a kept function in a loop is parsed with it from
/// the start (hotness reads it once the callee has findings), not in a
/// second parse of the whole file after the first one found them.
#[test]
fn callers_of_kept_functions_parsed_at_once() {
    let text = "import numpy as np\n\n\
                def solve(a, b):\n    return np.linalg.solve(a, b)\n\n\
                def solve_all(a, columns):\n    for b in columns:\n        solve(a, b)\n\n\
                def describe(pairs):\n    return len(pairs)\n";
    assert_eq!(
        gpulens_diagnostics::analysed_definitions(text),
        Some(vec!["solve".to_string(), "solve_all".to_string()])
    );
    let whole = same_as_whole(text);
    assert!(whole.iter().any(|f| f.code == "CUPY001" && f.details.contains("solve_all")), "{whole:?}");
}

/// Without fixes, the module's imports and plain assignments that start
/// nothing are not parsed when nothing parsed reads a name they bind; an
/// assignment kept is kept with what its value reads, and an import that
/// alone makes the module one using arrays or scikit-learn stays.
#[test]
fn module_statements_nothing_reads_are_not_parsed() {
    let cases: [(&str, &[&str]); 4] = [
        (
            "import numpy as np\nimport warnings\nfrom .compat import helper, other as renamed\nfrom ._util import (\n    check_x,\n    check_y,\n)\n\n__all__ = [\"big\", \"small\"]\nLIMIT = 10\nSIZE = 8\nN = SIZE\n\n\ndef test_helper():\n    helper(np.ones(LIMIT))\n\n\ndef small():\n    return np.fft.fft(np.ones(N))\n\n\ndef big(x):\n    return np.fft.fft(x)\n",
            &[
                "import warnings",
                "from .compat import helper, other as renamed",
                "from ._util import (\n    check_x,\n    check_y,\n)",
                "__all__ = [\"big\", \"small\"]",
                "LIMIT = 10",
            ],
        ),
        // Only `check_array`'s import says scikit-learn is imported.
        (
            "from sklearn.utils import check_array\nfrom ._base import Base\n\n\nclass Finder(Base):\n    def __init__(self, model):\n        self.model = model\n\n    def names(self):\n        return []\n\n    def query(self, points):\n        return self.model.kneighbors(points)\n",
            &[],
        ),
        // Only `gamma`'s import says the module uses arrays.
        (
            "from scipy.special import gamma\nfrom .helpers import unused\n\n\ndef scale(a, out):\n    for i in range(len(a)):\n        out[i] = a[i] * 2.0 + 1.0\n",
            &["from .helpers import unused"],
        ),
        // A suppression, a star import, a name a kept function reads, a
        // value made from a library, a statement in a block: all parsed.
        (
            "import numpy as np\nfrom .a import b  # gpulens: ignore\nfrom .c import *\nfrom .d import used\nGRID = np.ones(10)\nif True:\n    from .e import f\n\n\ndef work(x):\n    return np.fft.fft(used(x))\n",
            &[],
        ),
    ];
    let gpu = GpuProfile::target("H200").unwrap();
    for (text, left_out) in cases {
        let whole = same_both_ways(text, &gpu);
        assert!(!whole.is_empty(), "no finding: the case tests nothing\n{text}");
        assert_eq!(gpulens_diagnostics::statements_left_out(text), left_out, "{text}");
    }
}

/// A comprehension's names are its own: a module-level name it builds from
/// plain data holds no library value, and a function naming it is left out.
#[test]
fn a_comprehension_at_module_level_binds_nothing_live() {
    let text = "import numpy as np\n\nINFOS = [('a', 1), ('b', 2)]\nALIAS = {name: info for name, info in INFOS}\n\n\ndef lookup(key):\n    return ALIAS.get(key)\n\n\ndef work(x):\n    return np.fft.fft(x)\n";
    assert_eq!(gpulens_diagnostics::analysed_definitions(text), Some(vec!["work".to_string()]));
    assert!(!same_as_whole(text).is_empty());
}

/// A module-level name bound only to a value made (`np.linspace`) is read
/// in a function as that value: without work that reads such a value, the
/// function is left out; a name bound by heavier work keeps it.
#[test]
fn a_module_level_value_is_read_as_a_value() {
    let text = "import numpy as np\n\nGRID = np.linspace(0.0, 1.0, 101)\nSPECTRUM = np.fft.fft(np.ones(1_000_000))\n\n\ndef scale(x):\n    return x * GRID[-1]\n\n\ndef peak():\n    return SPECTRUM.max()\n\n\ndef work(x):\n    return np.fft.fft(x)\n";
    assert_eq!(gpulens_diagnostics::analysed_definitions(text), Some(vec!["peak".to_string(), "work".to_string()]));
    assert!(!same_as_whole(text).is_empty());
}

/// An `import` with nothing after it on its line is a syntax error the
/// parser mends by reading the next line's names (found by the edits
/// fuzzer): the pre-scan can't read it, and the whole text is parsed.
#[test]
fn an_import_cut_by_a_line_break_is_parsed_whole() {
    let text = "import \r\ncupy as cp\na = cp.cuda.randmo.rand(8192, 4096)\nb = a @ a\n";
    assert!(!same_both_ways(text, &GpuProfile::target("GTX 1080").unwrap()).is_empty());
}

/// A NUL byte inside a string: tree-sitter reads it as the text's end, and
/// its error recovery then depends on what else it reads, so leaving the
/// statement holding it out (without fixes) changed the findings. Found by
/// the edits fuzzer; such a text is parsed whole.
#[test]
fn a_nul_byte_in_a_string_means_a_whole_parse() {
    let text = "import numpy as np\nlabel = 'NNNN�NNNNNNNNNNNNNNNNNNNNNN�����ߑ�.s\0\0\0\0\0ort(npy NNNNNNJNNNNNNNNNNNNNVNNNNNNN@\0\u{1}\u{c}😀'\nx = np.sort(np.random.rand(100))\ny as np\nlabel = '😀😀'\nx = np.sort(np.random.rand(100))\nnp.fft.fft(x)\n";
    assert!(!same_both_ways(text, &GpuProfile::target("H200").unwrap()).is_empty());
}

/// Syntax errors the pre-scan must not take out of the parse: each line
/// below was left out (a definition, an unread statement) with its error,
/// and the rest then parsed otherwise than around the error. Python rejects
/// each; such a line is now kept, or the text parsed whole. All but the
/// last two broken assignments were found by the edits fuzzer.
#[test]
fn broken_code_finds_the_same_both_ways() {
    let cases = [
        // A header that lost its colon, taken for a one-line definition:
        // the outline now gives up on an unexpected indent (and on a block
        // header with no indented line after it).
        ("H200", "import numpy as np\n\nsignal = np.random.rand(10_000_000)\n\ndef power(x)X\n   s(np.fft.fft(x)) ** 2\n"),
        // A block's header mangled into something like an assignment: a
        // statement left out is never a header, nor starts with a keyword.
        ("RTX 4090", "import numpy as np\nfrom i = cuda.grid pd.re:\n    return np.abs(np.fft.fft(x)) ** 1\n"),
        // `from numba importuc`, read as `from numba import uc`: `import`
        // must be a word of its own.
        ("RTX 4090", "import numpy as np\nfrom numba importuc \n\nda@cuda.j5 * 2.0\n\ndef loop(a, out, n):\n    for i in range(n):\n        out[i] = a[i] + 2\n"),
        // Broken assignments nothing reads: the assignments left out must
        // parse without an error.
        ("RTX 4090", "import numpy as np\nlimit = 1 +\nx = np.fft.fft(np.random.rand(1000000))\n"),
        ("RTX 4090", "import numpy as np\nlimit = 1 2\nx = np.fft.fft(np.random.rand(1000000))\nfor i in range(3):\n    print(i)\n"),
        ("RTX 4090", "import numpy as np\nlimit = 1 2\n\ndef loop(a, out, n):\n    for i in range(n):\n        out[i] = a[i] + 2\n"),
    ];
    for (gpu, text) in cases {
        same_both_ways(text, &GpuProfile::target(gpu).unwrap());
    }
}

/// A table method some flow might tell the receiver of keeps a function
/// only where a value can flow to that receiver: not on a string literal
/// (`", ".join`), not where nothing calls the function, it calls none of
/// the module's functions and its docstring documents no such type. The
/// same method on a parameter a caller passes, or one the docstring calls
/// a DataFrame, keeps it; so do a caller's and a callee's neighbours (by
/// their call form: `model.fit` calls no `fit` of the module).
#[test]
fn flow_methods_keep_what_a_flow_can_reach() {
    let text = "import pandas as pd\n\n\
                def label(parts):\n    return \", \".join(parts)\n\n\
                def lonely(d):\n    return [k for k, v in d.items()]\n\n\
                def documented(frame):\n    \"\"\"frame : pandas.DataFrame\"\"\"\n    return frame.fillna(0)\n\n\
                def summarize(df):\n    return df.groupby(\"store\").agg({\"sales\": \"sum\"})\n\n\
                def load(path):\n    return summarize(pd.read_csv(path))\n\n\
                class Model:\n    def fit(self, X):\n        return X\n\n\
                def train(model, X):\n    return model.fit(X)\n";
    assert_eq!(
        gpulens_diagnostics::analysed_definitions(text),
        Some(vec!["documented".to_string(), "summarize".to_string(), "load".to_string()])
    );
    same_as_whole(text);
}

/// An array method that mirrors a NumPy function (`a.dot(b)` is
/// `np.dot(a, b)`) keeps its function where the array can be known: made by
/// NumPy there, passed by a caller, documented; not on a module's function
/// (`np.mean`) or where nothing can tell the receiver.
#[test]
fn mirrored_methods_keep_what_an_array_can_reach() {
    let text = "import numpy as np\n\n\
                def gram(n):\n    A = np.random.rand(n, n)\n    return A.T.dot(A)\n\n\
                def documented(A):\n    \"\"\"A : ndarray of shape (n, n)\"\"\"\n    return A.T.dot(A)\n\n\
                def unknown(A):\n    return A.T.dot(A)\n\n\
                def total(values):\n    return sum(v.sum() for v in values)\n";
    assert_eq!(
        gpulens_diagnostics::analysed_definitions(text),
        Some(vec!["gram".to_string(), "documented".to_string()])
    );
    let whole = same_as_whole(text);
    assert!(whole.iter().filter(|f| f.code == "CUPY001").count() >= 2, "{whole:?}");
}

/// Each file's place in a project index built over all of `files` (module
/// names from the folders that hold an `__init__.py`), in its two passes as
/// the command line and the language server build it: what the modules
/// declare, then what each passes to the others' functions.
fn places(files: &[PathBuf]) -> Vec<Option<gpulens_diagnostics::project::Place>> {
    use gpulens_diagnostics::project::{module_name, Place, ProjectIndex};
    let module_of = |path: &Path| {
        let parts: Vec<String> = path.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
        let folder = |i: usize| parts[..=i].iter().collect::<PathBuf>();
        module_name(&parts, &|i| folder(i).join("__init__.py").is_file())
    };
    let names: Vec<Option<(String, bool)>> = files.iter().map(|p| module_of(p)).collect();
    let texts: Vec<String> = files.iter().map(|p| std::fs::read_to_string(p).unwrap_or_default()).collect();
    let summaries = texts.iter().zip(&names).flat_map(|(text, name)| {
        name.as_ref().map(|(module, _)| ProjectIndex::summarize(module, text)).unwrap_or_default()
    });
    let mut index = ProjectIndex::new(summaries);
    for (text, name) in texts.iter().zip(&names) {
        if let Some((module, _)) = name.as_ref().filter(|_| gpulens_diagnostics::might_have_findings(text)) {
            index.add_module(module.clone(), ProjectIndex::functions_of(text));
        }
    }
    let declared = std::sync::Arc::new(index.clone());
    let passes = texts.iter().zip(&names).filter_map(|(text, name)| {
        let (module, package) = name.clone()?;
        let place = Place { index: declared.clone(), module: module.clone(), package };
        Some((module, place.passes(text)))
    });
    index.set_passes(passes.collect::<Vec<_>>());
    let index = std::sync::Arc::new(index);
    names.into_iter().map(|n| n.map(|(module, package)| Place { index: index.clone(), module, package })).collect()
}

/// With a project index, a definition that calls a function the index knows,
/// or that another module passes a known value to, is kept by the pre-scan
/// (a value from another module reaches it): its
/// findings, and the incremental analysis's, are those of the whole tree
/// read with the same index. Over the
/// fixtures (one project) and the corpus named by `GPULENS_CORPUS`.
#[test]
fn corpus_read_with_a_project_index_as_the_whole_tree() {
    let settings = Settings::default();
    let gpu = GpuProfile::target("H200").unwrap();
    let mut files = Vec::new();
    python_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures"), &mut files);
    if let Some(dir) = std::env::var_os("GPULENS_CORPUS") {
        python_files(Path::new(&dir), &mut files);
    }
    let places = places(&files);
    let mut differ = Vec::new();
    let mut with_index = 0;
    for (path, place) in files.iter().zip(&places) {
        let Ok(text) = std::fs::read_to_string(path) else { continue };
        let Some(place) = place.as_ref().filter(|p| p.reads_index(&text)) else { continue };
        with_index += 1;
        let whole = gpulens_diagnostics::check_whole_in(&text, &settings, &gpu, Some(place));
        if gpulens_diagnostics::check_text_in(&text, &settings, &gpu, Some(place), true) != whole {
            differ.push(path.display().to_string());
        }
        // (And the language server's incremental analysis, given the place.)
        let mut cache = gpulens_diagnostics::Cache::default();
        cache.set_place(Some(place.clone()));
        if gpulens_diagnostics::check_incremental(&text, &gpulens_syntax::parse(&text), &settings, &gpu, &mut cache) != whole {
            differ.push(format!("{} (incremental)", path.display()));
        }
    }
    assert!(differ.is_empty(), "{} of {with_index} files differ: {:?}", differ.len(), &differ[..differ.len().min(20)]);
    eprintln!("{with_index} files read with the project index compared");
}
