//! Differential test: findings computed incrementally (reusing the cache of
//! unchanged functions) must equal a fresh analysis, after every edit.

use gpulens_diagnostics::{check, check_incremental, check_incremental_unless, Cache, Settings};
use gpulens_gpu::GpuProfile;
use gpulens_syntax::{Change, Document, LineIndex, Position, PositionEncoding, Range};
use proptest::prelude::*;

fn fixtures() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut names: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path()).collect();
    names.sort();
    names.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect()
}

const PIECES: &[&str] = &[
    "", "x", "\n", "    ", "np.sort(values)", "import cupy as cp\n", "N = 10\n", "N = 10_000_000\n", "# gpulens: ignore",
    "def f(a):\n    return np.fft.fft(a)\n", "for i in range(N):\n    out[i] = a[i] * 2\n", ")", "(", ":", "@cuda.jit\n",
    "import numpy as np\n", "中", "😀",
];

/// Replaces `len` bytes at fraction `at` of the document's text (moved back
/// to character boundaries) with `piece`, as an editor's change.
fn replace_at(doc: &mut Document, at: f64, len: usize, piece: &str) {
    let text = doc.to_string();
    let mut start = (text.len() as f64 * at) as usize;
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (start + len).min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    replace_bytes(doc, start..end, piece);
}

/// Replaces the bytes `range` of the document's text with `piece`, as an editor's change.
fn replace_bytes(doc: &mut Document, range: std::ops::Range<usize>, piece: &str) {
    let text = doc.to_string();
    let index = LineIndex::new(&text);
    let enc = PositionEncoding::Utf8;
    let range = Range::new(index.position(&text, range.start, enc), index.position(&text, range.end, enc));
    doc.apply_changes(&[Change::replace(range, piece)], enc);
}

/// The findings of `text`, then of `text` with `word` (the first one right
/// after `before`) replaced by `other`, then of `text` again: each analysed
/// incrementally with one cache, and checked against a whole analysis.
fn swapped_and_back(text: &str, before: &str, word: &str, other: &str) -> [Vec<gpulens_diagnostics::Finding>; 3] {
    let at = text.find(&format!("{before}{word}")).expect("the word is in the text") + before.len();
    let mut doc = Document::new(text);
    let mut cache = Cache::default();
    let first = analysed(&doc, &mut cache);
    replace_bytes(&mut doc, at..at + word.len(), other);
    let edited = analysed(&doc, &mut cache);
    replace_bytes(&mut doc, at..at + other.len(), word);
    [first, edited, analysed(&doc, &mut cache)]
}

/// The incremental analysis of the document's text, checked against a whole one.
fn analysed(doc: &Document, cache: &mut Cache) -> Vec<gpulens_diagnostics::Finding> {
    let (settings, gpu) = (Settings::default(), GpuProfile::none());
    let text = doc.to_string();
    let findings = check_incremental(&text, doc.tree(), &settings, &gpu, cache);
    assert_eq!(findings, check(&text, doc.tree(), &settings, &gpu), "text:\n{text}");
    findings
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn incremental_equals_fresh(
        which in 0usize..64,
        edits in prop::collection::vec((0.0f64..1.0, 0usize..12, prop::sample::select(PIECES)), 1..10),
    ) {
        let all = fixtures();
        let base = &all[which % all.len()];
        let settings = Settings::default();
        let gpu = GpuProfile::none();
        let mut doc = Document::new(base);
        let mut cache = Cache::default();
        let text = doc.to_string();
        prop_assert_eq!(check_incremental(&text, doc.tree(), &settings, &gpu, &mut cache), check(&text, doc.tree(), &settings, &gpu));
        for (at, len, piece) in edits {
            replace_at(&mut doc, at, len, piece);
            let text = doc.to_string();
            let fresh = check(&text, doc.tree(), &settings, &gpu);
            let incremental = check_incremental(&text, doc.tree(), &settings, &gpu, &mut cache);
            prop_assert_eq!(incremental, fresh, "text:\n{}", text);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// The shortcuts of `check` (byte pre-scan, skipping functions that name
    /// nothing a rule looks at) never change what it finds.
    #[test]
    fn shortcuts_change_nothing(
        which in 0usize..64,
        edits in prop::collection::vec((0.0f64..1.0, 0usize..12, prop::sample::select(PIECES)), 0..6),
    ) {
        let all = fixtures();
        let mut text = all[which % all.len()].clone();
        for (at, len, piece) in edits {
            let mut start = (text.len() as f64 * at) as usize;
            while !text.is_char_boundary(start) { start -= 1; }
            let mut end = (start + len).min(text.len());
            while !text.is_char_boundary(end) { end -= 1; }
            text.replace_range(start..end, piece);
        }
        let tree = gpulens_syntax::parse(&text);
        let (settings, gpu) = (Settings::default(), GpuProfile::none());
        prop_assert_eq!(check(&text, &tree, &settings, &gpu), gpulens_diagnostics::check_reference(&text, &tree, &settings, &gpu), "text:\n{}", text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, ..ProptestConfig::default() })]

    /// Edits that are undone (a character typed and deleted, as in an
    /// editor) bring back texts, and with them what the analysis kept of
    /// the code outside the functions for an earlier text.
    #[test]
    fn edits_undone_equal_fresh(
        which in 0usize..64,
        edits in prop::collection::vec((0.0f64..1.0, prop::sample::select(PIECES), any::<bool>()), 1..8),
    ) {
        let all = fixtures();
        let mut doc = Document::new(&all[which % all.len()]);
        let mut cache = Cache::default();
        let (settings, gpu) = (Settings::default(), GpuProfile::none());
        check_incremental(&doc.to_string(), doc.tree(), &settings, &gpu, &mut cache);
        for (at, piece, undo) in edits {
            let before = doc.to_string();
            let mut start = (before.len() as f64 * at) as usize;
            while !before.is_char_boundary(start) {
                start -= 1;
            }
            replace_bytes(&mut doc, start..start, piece);
            let text = doc.to_string();
            prop_assert_eq!(check_incremental(&text, doc.tree(), &settings, &gpu, &mut cache), check(&text, doc.tree(), &settings, &gpu), "text:\n{}", text);
            if undo {
                replace_bytes(&mut doc, start..start + piece.len(), "");
                let text = doc.to_string();
                prop_assert_eq!(&text, &before);
                prop_assert_eq!(check_incremental(&text, doc.tree(), &settings, &gpu, &mut cache), check(&text, doc.tree(), &settings, &gpu), "text:\n{}", text);
            }
        }
    }
}

/// Found by the property test: a cached function must be re-analysed when a
/// module-level value it reads changes through another name (`a = np.sort(big)`
/// after `big` is renamed).
#[test]
fn module_values_reach_cached_functions() {
    let text = "import numpy as np\n\nbig = np.random.rand(1_000_000)\na = np.sort(big)\n\ndef f():\n    return np.fft.fft(a)\n";
    let (settings, gpu) = (Settings::default(), GpuProfile::none());
    let mut doc = Document::new(text);
    let mut cache = Cache::default();
    check_incremental(&doc.to_string(), doc.tree(), &settings, &gpu, &mut cache);
    let at = Position::new(2, 1);
    doc.apply_changes(&[Change::replace(Range::new(at, at), "x")], PositionEncoding::Utf8);
    let text = doc.to_string();
    assert!(text.contains("bxig = "));
    assert_eq!(
        check_incremental(&text, doc.tree(), &settings, &gpu, &mut cache),
        check(&text, doc.tree(), &settings, &gpu)
    );
}

/// A function's data may be one item of a collection its caller's caller
/// walks (`fit` walks the graphs, `embed` builds a matrix from one, `moments`
/// works on it): an edit two calls away from a cached function changes its
/// findings, and the function must be analysed again.
#[test]
fn items_two_calls_away_reach_cached_functions() {
    let text = "import numpy as np\n\nclass Embedder:\n    def moments(self, X):\n        return np.fft.rfft(np.abs(X))\n\n    def embed(self, graph):\n        X = np.asarray(graph)\n        return self.moments(X)\n\n    def fit(self, graphs):\n        return [self.embed(graph) for graph in graphs]\n";
    let [per_item, whole, again] = swapped_and_back(text, "self.embed(", "graph", "graphs");
    assert!(per_item.is_empty(), "{per_item:?}");
    assert!(!whole.is_empty());
    assert_eq!(per_item, again);
}

/// A syntax error can keep a function out of the units, so that the code
/// outside them holds it: the functions that call it, and theirs (items
/// flow two calls up), are still walked with it, whatever a shortcut skips.
#[test]
fn a_function_a_syntax_error_leaves_outside_still_sees_its_callers_items() {
    let text = "import numpy as np\n\ndef signature(matrix):\n    values, _ = np.linalg.eigh(matrix)\n    return np.sort(values)values[:10]\n\ndef described(matrix):\n    return signature(matrix)\n\ndef descriptions(matrices):\n    return [described(m) for m in matrices]\n";
    let doc = Document::new(text);
    let findings = analysed(&doc, &mut Cache::default());
    let (settings, gpu) = (Settings::default(), GpuProfile::none());
    assert_eq!(findings, gpulens_diagnostics::check_reference(text, doc.tree(), &settings, &gpu));
    assert!(!findings.iter().any(|f| f.message.contains("eigh")), "{findings:?}");
}

/// A class's docstring can make an attribute the model's state (`P :
/// numpy.array(dim_x, dim_x)`): editing it changes its methods' findings.
#[test]
fn a_class_docstring_reaches_its_methods() {
    let text = "import numpy as np\n\nclass Filter:\n    \"\"\"A filter.\n\n    Attributes\n    ----------\n    P : numpy.array(dim_x, dim_x)\n        Covariance.\n    \"\"\"\n\n    def __init__(self, dim_x):\n        self.dim_x = dim_x\n\n    @property\n    def P(self):\n        return self._P\n\n    @P.setter\n    def P(self, value):\n        self._P = value\n\n    def spread(self):\n        return np.linalg.eigvalsh(self._P)\n";
    let [documented, undocumented, again] = swapped_and_back(text, "numpy.array(", "dim_x", "n_rows");
    assert!(documented.is_empty(), "{documented:?}");
    assert!(!undocumented.is_empty());
    assert_eq!(documented, again);
}

/// Typing into a method until it no longer parses spills its statements to
/// the module level, where they look like module-level names: the other
/// functions must not be analysed again for names that are their own
/// parameters, and deleting the character must find what was analysed
/// before. (Functions with findings may be: their fixes depend on where
/// they sit, which error recovery changes.)
#[test]
fn a_syntax_error_and_its_undo_reanalyse_little() {
    let mut text = String::from("import numpy as np\n\nclass Frame:\n");
    for i in 0..40 {
        // Like most functions of a big module, most have nothing to report.
        let work = if i % 10 == 0 { "np.fft.fft(values[order])" } else { "np.asarray(values[order])" };
        text.push_str(&format!("    def method_{i}(self, values, order):\n        return {work}\n\n"));
    }
    text.push_str(concat!(
        "    def last(self, other, axis):\n",
        "        values = other.values\n",
        "        if axis == 0:\n",
        "            values = values.reshape(-1, 1)\n",
        "        else:\n",
        "            values = values.reshape(1, -1)\n",
        "        values = np.broadcast_to(values, self.shape)\n",
        "        return self.build(values, index=self.index)\n",
    ));
    let (settings, gpu) = (Settings::default(), GpuProfile::none());
    let mut doc = Document::new(&text);
    let mut cache = Cache::default();
    check_incremental(&doc.to_string(), doc.tree(), &settings, &gpu, &mut cache);
    let line = text.lines().position(|l| l.trim() == "if axis == 0:").unwrap() as u32;
    let end = Position::new(line, 21);
    for change in [Change::replace(Range::new(end, end), "x"), Change::replace(Range::new(end, Position::new(line, 22)), "")] {
        doc.apply_changes(&[change], PositionEncoding::Utf8);
        let now = doc.to_string();
        assert_eq!(check_incremental(&now, doc.tree(), &settings, &gpu, &mut cache), check(&now, doc.tree(), &settings, &gpu));
        let (reused, all) = cache.last_reuse;
        assert!(reused + 6 >= all, "only {reused} of {all} functions reused after editing {:?}", now.lines().nth(line as usize));
    }
}

/// Pieces for notifications as editors send them: line ends of every kind,
/// characters that take two UTF-16 units or several UTF-8 bytes.
const EDITOR_PIECES: &[&str] = &[
    "", "x", "\n", "\r\n", "\r", "    ", "np.sort(values)", "import cupy as cp\n", "N = 10_000_000\r\n", ":", "(",
    "def f(a):\n    return np.fft.fft(a)\n", "for i in range(N):\r\n    out[i] = a[i] * 2\r\n", "@cuda.jit\n",
    "import numpy as np\n", "中文", "😀", "é", "\u{0}",
];

fn encoding() -> impl Strategy<Value = PositionEncoding> {
    prop_oneof![Just(PositionEncoding::Utf8), Just(PositionEncoding::Utf16), Just(PositionEncoding::Utf32)]
}

/// A change as an editor sends it: a range by line and character (anywhere,
/// past the end and reversed included), or now and then the whole text.
fn editor_change() -> impl Strategy<Value = Change> {
    let piece = prop::collection::vec(prop::sample::select(EDITOR_PIECES), 0..3).prop_map(|p| p.concat());
    let coordinate = prop_oneof![8 => 0u32..40, 1 => 40u32..5_000, 1 => Just(u32::MAX)];
    let line = prop_oneof![9 => 0u32..60, 1 => 60u32..100_000];
    prop_oneof![
        20 => (line.clone(), coordinate.clone(), line, coordinate, piece.clone()).prop_map(|(l1, c1, l2, c2, text)| {
            Change::replace(Range::new(Position::new(l1, c1), Position::new(l2, c2)), text)
        }),
        1 => piece.prop_map(Change::full),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, ..ProptestConfig::default() })]

    /// The server's path: several changes per didChange, in any of the three
    /// position encodings, then `check_incremental` with the kept cache.
    #[test]
    fn notifications_of_several_changes_in_every_encoding(
        which in 0usize..64,
        crlf in any::<bool>(),
        encoding in encoding(),
        notifications in prop::collection::vec(prop::collection::vec(editor_change(), 1..5), 1..8),
    ) {
        let all = fixtures();
        let mut base = all[which % all.len()].clone();
        if crlf {
            base = base.replace('\n', "\r\n");
        }
        let (settings, gpu) = (Settings::default(), GpuProfile::none());
        let mut doc = Document::new(&base);
        let mut model = base.clone();
        let mut cache = Cache::default();
        check_incremental(&model, doc.tree(), &settings, &gpu, &mut cache);
        for changes in notifications {
            for change in &changes {
                match change.range {
                    None => model = change.text.clone(),
                    Some(range) => {
                        let index = LineIndex::new(&model);
                        let (mut a, mut b) = (index.offset(&model, range.start, encoding), index.offset(&model, range.end, encoding));
                        if a > b { std::mem::swap(&mut a, &mut b); }
                        model.replace_range(a..b, &change.text);
                    }
                }
            }
            doc.apply_changes(&changes, encoding);
            let text = doc.to_string();
            prop_assert_eq!(&text, &model);
            let fresh_tree = gpulens_syntax::parse(&text);
            let incremental = check_incremental(&text, doc.tree(), &settings, &gpu, &mut cache);
            prop_assert_eq!(incremental, check(&text, &fresh_tree, &settings, &gpu), "text:\n{}", text);
        }
    }
}

#[test]
/// Found by the property test: the only GPU import sits inside a kernel
/// (pasted there), and a function elsewhere copies to the host in a loop.
/// Reusing the kernel's findings meant not walking it, so its import went
/// unseen and the GPU rules were off for the function re-analysed.
fn an_import_inside_a_reused_function_still_turns_the_gpu_rules_on() {
    let base = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/gpu_correct.py")).unwrap();
    let edits: &[(f64, usize, &str)] = &[
        (0.6213270893288061, 6, "# gpulens: ignore"),
        (0.31416821032191017, 10, "for i in range(N):\n    out[i] = a[i] * 2\n"),
        (0.5734073200791067, 9, "def f(a):\n    return np.fft.fft(a)\n"),
        (0.08882976805492941, 8, ")"),
        (0.44917424983775844, 0, "import cupy as cp\n"),
        (0.6092105563338854, 0, ""),
        (0.055142669825377424, 8, "np.sort(values)"),
        (0.0, 0, ""),
    ];
    let settings = Settings::default();
    let gpu = GpuProfile::none();
    let mut doc = Document::new(&base);
    let mut cache = Cache::default();
    let text = doc.to_string();
    assert_eq!(check_incremental(&text, doc.tree(), &settings, &gpu, &mut cache), check(&text, doc.tree(), &settings, &gpu));
    for (step, (at, len, piece)) in edits.iter().enumerate() {
        replace_at(&mut doc, *at, *len, piece);
        let text = doc.to_string();
        let fresh = check(&text, doc.tree(), &settings, &gpu);
        let incremental = check_incremental(&text, doc.tree(), &settings, &gpu, &mut cache);
        assert_eq!(incremental, fresh, "step {step}");
    }
}

/// A GPU library imported in a class body turns the GPU rules on for every
/// function of the module: changing that import must re-analyse a function
/// whose findings depend on it, though its own text did not change.
#[test]
fn a_gpu_import_in_a_class_body_is_part_of_every_key() {
    let text = "import numpy as np\n\nclass Kernels:\n    import cupy as cp\n\n\ndef run(d_out, batches):\n    for batch in batches:\n        host = d_out.copy_to_host()\n    return host\n";
    let mut doc = Document::new(text);
    let mut cache = Cache::default();
    let before = analysed(&doc, &mut cache);
    assert!(before.iter().any(|f| f.code == "GPU002"), "{before:?}");
    // `cupy` becomes `copy`: no GPU library left anywhere.
    let at = text.find("cupy").unwrap();
    replace_bytes(&mut doc, at + 1..at + 2, "o");
    let after = analysed(&doc, &mut cache);
    assert!(after.iter().all(|f| f.code != "GPU002"), "{after:?}");
}

/// A function walked at every analysis because it may import a GPU library
/// must really say so in an import: `engine="numba"` in a docstring next to
/// an unrelated import (pandas' `DataFrame.apply`) is reused like any other
/// function, while an import continued over a backslash still counts.
#[test]
fn only_an_import_line_naming_a_gpu_library_is_walked_every_time() {
    let text = "def apply(frame, engine=\"python\"):\n    \"\"\"engine : {'python', 'numba'}\"\"\"\n    from os import path\n    return path\n\n\ndef setup():\n    import os, \\\n        cupy\n    return os\n\n\ndef run(d_out, batches):\n    for batch in batches:\n        host = d_out.copy_to_host()\n    return host\n";
    let mut doc = Document::new(text);
    let mut cache = Cache::default();
    let before = analysed(&doc, &mut cache);
    assert!(before.iter().any(|f| f.code == "GPU002"), "{before:?}");
    // An edit in `run`: `apply` is reused, `setup` (the GPU import) is walked again.
    let at = text.find("host = ").unwrap();
    replace_bytes(&mut doc, at..at, "the_");
    let after = analysed(&doc, &mut cache);
    assert!(after.iter().any(|f| f.code == "GPU002"), "{after:?}");
    assert_eq!(cache.last_reuse, (1, 3), "only `apply` reused");
}

/// A newer edit stops an analysis in the middle of its walk or of its rules
/// (not only between stages), and the cache it leaves still gives the
/// findings of a whole analysis next time.
#[test]
fn an_analysis_stops_midway_when_a_newer_edit_comes() {
    let function = "def smooth_{i}(signal, width):\n    out = np.empty_like(signal)\n    for k in range(len(signal)):\n        out[k] = np.sqrt(signal[k]) * width\n    return np.fft.fft(out)\n\n\n";
    let text: String = std::iter::once("import numpy as np\n\n\n".to_string())
        .chain((0..400).map(|i| function.replace("{i}", &i.to_string())))
        .collect();
    let settings = Settings::default();
    let gpu = GpuProfile::none();
    let doc = Document::new(&text);
    // Uninterrupted, it asks between its three stages and from inside them.
    let asked = std::cell::Cell::new(0u32);
    let count = || {
        asked.set(asked.get() + 1);
        false
    };
    let mut cache = Cache::default();
    assert!(check_incremental_unless(&text, doc.tree(), &settings, &gpu, &mut cache, &count).is_some());
    assert!(asked.get() > 3, "asked {} times", asked.get());
    // Told to stop at the second question (the first from inside the walk), it stops there.
    asked.set(0);
    let cancel = || {
        asked.set(asked.get() + 1);
        asked.get() >= 2
    };
    let mut cache = Cache::default();
    assert!(check_incremental_unless(&text, doc.tree(), &settings, &gpu, &mut cache, &cancel).is_none());
    assert_eq!(asked.get(), 2);
    assert_eq!(check_incremental(&text, doc.tree(), &settings, &gpu, &mut cache), check(&text, doc.tree(), &settings, &gpu));
}

/// Found by the property test: whether `self.cost` is a method (a Python
/// function nx-cugraph cannot run) is read from the class's text, which a
/// syntax error elsewhere in the class cuts short; a cached method passing
/// `self.cost` must be analysed again when that happens, and when it is mended.
#[test]
fn a_syntax_error_in_a_class_reaches_methods_using_its_methods_as_values() {
    let text = &road_network("");
    let mut doc = Document::new(text);
    let mut cache = Cache::default();
    let before = analysed(&doc, &mut cache);
    assert!(before.iter().all(|f| f.code != "CUGRAPH001"), "a method as weight keeps NetworkX on the CPU: {before:?}");
    let at = text.find("graph):").unwrap() + "graph".len();
    replace_bytes(&mut doc, at..at, "import cupy as cp\n");
    analysed(&doc, &mut cache);
    replace_bytes(&mut doc, at..at + "import cupy as cp\n".len(), "");
    assert_eq!(analysed(&doc, &mut cache), before);
}

/// Code typed before `class` on its line (no line break between them: a
/// syntax error tree-sitter mends with a missing newline) moves the class
/// node's column, not its line's indentation: whether `self.cost` is one of
/// its methods is read against the line, as a fresh analysis reads it.
#[test]
fn code_before_a_class_on_its_line_keeps_its_methods_methods() {
    let text = &road_network("x = 1\n");
    let mut doc = Document::new(text);
    let mut cache = Cache::default();
    let before = analysed(&doc, &mut cache);
    assert!(before.iter().all(|f| f.code != "CUGRAPH001"), "a method as weight keeps NetworkX on the CPU: {before:?}");
    let at = text.find("class").unwrap();
    replace_bytes(&mut doc, at..at, "np.sort(values)");
    let after = analysed(&doc, &mut cache);
    assert!(after.iter().all(|f| f.code != "CUGRAPH001"), "still a method: {after:?}");
}

/// A class whose route method passes one of its own methods to NetworkX as
/// the weight (a Python function: no advice), with `before_class` between
/// the import and the class.
fn road_network(before_class: &str) -> String {
    format!(
        "import networkx as nx\n\n{before_class}class RoadNetwork:\n    def __init__(self, graph):\n        self.graph = graph\n\n    \
         def cost(self, u, v, edge):\n        return edge[\"length\"] * 2.0\n\n    def cheapest_route(self, a, b):\n        \
         return nx.shortest_path(self.graph, a, b, self.cost)\n"
    )
}

/// A stray `)` typed before a `@property` line: tree-sitter still reads the
/// decorator (after an `ERROR` node), a reading of the class's lines does
/// not. In a class with syntax errors every `self.name` may be a method, in
/// an incremental analysis as in a fresh one: the advice for passing the
/// property's value as the weight goes, and comes back with the fix.
#[test]
fn a_syntax_error_before_a_property_reads_the_same_fresh_and_incremental() {
    let text = "import networkx as nx\n\n\nclass RoadNetwork:\n    def __init__(self, graph):\n        self.graph = graph\n\n    \
                @property\n    def weighting(self):\n        return \"length\"\n\n    def shortest_route(self, a, b):\n        \
                return nx.shortest_path(self.graph, a, b, weight=self.weighting)\n";
    let mut doc = Document::new(text);
    let mut cache = Cache::default();
    let before = analysed(&doc, &mut cache);
    assert!(before.iter().any(|f| f.code == "CUGRAPH001"), "a property gives an attribute name: {before:?}");
    let at = text.find("@property").unwrap();
    replace_bytes(&mut doc, at..at, ")");
    let broken = analysed(&doc, &mut cache);
    assert!(broken.iter().all(|f| f.code != "CUGRAPH001"), "the class has a syntax error: {broken:?}");
    replace_bytes(&mut doc, at..at + 1, "");
    let mended = analysed(&doc, &mut cache);
    assert_eq!(mended, before);
}

/// A method's advice is dropped while another method of its class draws:
/// editing the drawing method alone changes the other's findings.
#[test]
fn a_sibling_that_stops_drawing_brings_back_the_advice() {
    let text = concat!(
        "import numpy as np\n\n",
        "class Trend:\n",
        "    def fit(self, x, y):\n",
        "        design = np.c_[np.ones(len(x)), x]\n",
        "        return np.linalg.pinv(design) @ y\n\n",
        "    def draw(self, ax, x, y):\n",
        "        ax.plot(x, y)\n",
    );
    let [before, edited, again] = swapped_and_back(text, "ax.", "plot", "record");
    assert!(before.is_empty(), "the class draws");
    assert!(!edited.is_empty(), "the class no longer draws");
    assert!(again.is_empty(), "the class draws again");
}

/// Found by the property test: an edit that turns a function's return into
/// a matrix product (`[...]@cuda.jit`) gives it a finding although the
/// pre-scan calls it quiet; the incremental analysis keeps it, as `check` does.
#[test]
fn a_quiet_function_walked_for_a_neighbour_keeps_its_findings() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/called_from_loops.py")).unwrap();
    let at = text.find("return [v for v in ordered]").unwrap() + "return [v for v in ordered]".len();
    let (settings, gpu) = (Settings::default(), GpuProfile::none());
    let mut doc = Document::new(&text);
    let mut cache = Cache::default();
    check_incremental(&doc.to_string(), doc.tree(), &settings, &gpu, &mut cache);
    replace_bytes(&mut doc, at..at, "@cuda.jit\n");
    let edited = doc.to_string();
    let fresh = check(&edited, doc.tree(), &settings, &gpu);
    assert!(fresh.iter().any(|f| &edited[f.range.clone()] == "[v for v in ordered]@cuda.jit"), "the product is found");
    assert_eq!(check_incremental(&edited, doc.tree(), &settings, &gpu, &mut cache), fresh);
    assert_eq!(check_incremental(&edited, doc.tree(), &settings, &gpu, &mut Cache::default()), fresh);
}

/// A function stops being given to `rolling(...).apply` in another function:
/// its loop is whole-array work again, incrementally as in a fresh analysis
/// (the use is part of its key, as a call is).
#[test]
fn a_function_no_longer_applied_per_window_gets_its_finding_back() {
    let text = concat!(
        "import numpy as np\n\n",
        "def doubled(x):\n",
        "    out = np.empty(len(x))\n",
        "    for i in range(len(x)):\n",
        "        out[i] = np.sqrt(x[i]) * 2.0 + 1.0\n",
        "    return out\n\n",
        "def smooth(prices):\n",
        "    return prices.rolling(50).apply(doubled, raw=True)\n",
    );
    let [before, edited, again] = swapped_and_back(text, "apply(", "doubled", "len");
    assert!(before.is_empty(), "applied per window");
    assert!(!edited.is_empty(), "no longer applied per window");
    assert!(again.is_empty(), "applied per window again");
}

/// A class documenting what `__init__` takes (`x : ndarray`), whose
/// constructor's finding turns on that word; `rest` follows the constructor.
/// (The constructor reads nothing of `self`.)
fn documented_constructor(rest: &str) -> String {
    let head = concat!(
        "import numpy as np\n\n",
        "class Scaled:\n",
        "    \"\"\"Parameters\n",
        "    ----------\n",
        "    x : ndarray\n",
        "    \"\"\"\n\n",
        "    def __init__(self, x):\n",
        "        keep(np.fft.fft(x))\n",
    );
    format!("{head}{rest}")
}

/// Editing the documented type turns the constructor's finding off and,
/// undone, on again.
fn assert_follows_the_docstring(text: &str) {
    let [before, edited, again] = swapped_and_back(text, "x : ", "ndarray", "float");
    assert!(!before.is_empty(), "documented as an array");
    assert!(edited.is_empty(), "documented as a number");
    assert!(!again.is_empty(), "an array again");
}

#[test]
fn editing_a_class_docstring_re_reads_its_constructors_parameters() {
    // Only the class's text changes.
    assert_follows_the_docstring(&documented_constructor(""));
}

#[test]
fn a_class_with_a_syntax_error_still_keys_its_constructor_on_the_docstring() {
    // A broken method elsewhere in the class (`def p` / `er_store`) leaves
    // `__init__` where it was, reading the class docstring.
    assert_follows_the_docstring(&documented_constructor("\n    def p\ner_store(self):\n        return 1\n"));
}

#[test]
fn a_name_given_per_piece_counts_only_in_the_form_the_cache_follows() {
    // Found by `incremental_equals_fresh`: with the class header broken,
    // `spectrum_peak` is no method, so `.agg(self.spectrum_peak)` does not
    // reach it (nor link it to `build` in the cache); then `self` edited
    // to `sxelf` gave it its finding back afresh but not incrementally.
    let base = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/per_piece_functions.py")).unwrap();
    let mut doc = Document::new(&base);
    let mut cache = Cache::default();
    analysed(&doc, &mut cache);
    replace_at(&mut doc, 0.5160884960930137, 6, "import cupy as cp\n");
    analysed(&doc, &mut cache);
    replace_at(&mut doc, 0.79765984106878, 0, "x");
    assert!(!analysed(&doc, &mut cache).is_empty());
}

#[test]
fn an_import_that_a_parameter_hides_changes_nothing_in_the_function() {
    // Found by `edits_undone_equal_fresh`: `)` typed into `import importlib`
    // made it `import importli)b`, an import of `b`, which `solve(a, b)`
    // took for a module-level function given to `linalg.solve`; the cache
    // (rightly) does not key `solve` on an import it can't see, so undoing
    // the edit brought back a result without the finding.
    let base = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/lazy_imports.py")).unwrap();
    let mut doc = Document::new(&base);
    let mut cache = Cache::default();
    let before = analysed(&doc, &mut cache).len();
    let at = base.find("import importlib").unwrap() + "import importli".len();
    replace_bytes(&mut doc, at..at, ")");
    assert_eq!(analysed(&doc, &mut cache).len(), before);
    replace_bytes(&mut doc, at..at + 1, "");
    assert_eq!(analysed(&doc, &mut cache).len(), before);
}

#[test]
fn an_import_of_any_module_that_breaks_reaches_the_functions_naming_it() {
    // Found by `incremental_equals_fresh`: with `weights` no longer a
    // parameter, `linalg.solve(a, weights)` is given the module's imported
    // function (Python work, no finding). Breaking the import line
    // (`mport`) unbinds it, and the call is an array solve again; the key
    // of `solve` held only the imports of libraries the rules know.
    let base = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/parameters_hide_module_names.py")).unwrap();
    let text = base.replace("def solve(a, weights):", "def solve(a, weigh):");
    let [imported, broken, back] = swapped_and_back(&text, "helpers ", "import", "mport");
    assert!(imported.iter().all(|f| f.code.as_str() != "CUPY001"));
    assert!(broken.iter().any(|f| f.code.as_str() == "CUPY001"));
    assert_eq!(back, imported);
}

#[test]
fn a_numpy_import_inside_another_function_reaches_the_matrix_products() {
    // Found by `edits_undone_equal_fresh`: a matrix product is NumPy's only
    // in a module that imports NumPy somewhere. With the module's own
    // import swallowed by an unclosed string, an `import numpy` typed into
    // another function brought the finding back, but the product's function
    // was unchanged and kept its empty cached result.
    let base = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/arithmetic_with_unmapped_arrays.py")).unwrap();
    let text = base.replace("import numpy as np\n", "").replace(
        "def tapered_sum(window_length: int) -> float:\n",
        "def tapered_sum(window_length: int) -> float:\n    import numpy as np\n",
    );
    let [imported, renamed, back] = swapped_and_back(&text, "import ", "numpy", "numbat");
    assert!(imported.iter().any(|f| f.code.as_str() == "CUPY001"));
    assert!(renamed.iter().all(|f| f.code.as_str() != "CUPY001"));
    assert_eq!(back, imported);
}
