//! The API maps (`knowledge/api/*.toml`): which CPU call each GPU library
//! replaces, what kind of work it is, and where the GPU version falls back
//! to the CPU.

use super::*;

/// What a CPU API does to its data, which decides when a hint is right.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApiKind {
    /// Does work on array inputs: worth a hint unless the inputs are tiny.
    Compute,
    /// Produces data by computation (random numbers): worth a hint unless the requested size is tiny.
    Generate,
    /// Allocates or converts (`zeros`, `array`): never a hint by itself, but tells sizes.
    Create,
    /// Moves, joins, splits or views data without computing on it
    /// (`reshape`, `concatenate`, `transpose`, `take`): never a hint and no
    /// part of a chain of work (a GPU saves nothing on a copy), but a
    /// rewrite that moves the data around it to the GPU switches it too.
    Layout,
    /// Reads a file into memory.
    Read,
    /// A method on a DataFrame/Series (`cpu` is `pandas.DataFrame.groupby`).
    Method,
    /// A row-by-row loop or row-wise function (`iterrows`, `apply(axis=1)`).
    RowLoop,
    /// A machine-learning estimator or transformer class.
    Estimator,
    /// A function (model selection, metrics) that runs on what estimators produce.
    Function,
    /// A graph algorithm.
    Algorithm,
    /// A nearest-neighbour / vector-search index class (Faiss, Annoy, hnswlib…).
    Index,
    /// Builds a graph (a generator or a reader): tells the graph's size.
    Graph,
}

/// How well the GPU library covers a CPU API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Support {
    /// Same API, runs on the GPU.
    Full,
    /// Runs on the GPU with documented differences or restrictions (see `note`).
    Partial,
    /// Accepted, but the accelerator runs it on the CPU.
    Fallback,
    /// The GPU library has no equivalent: say so honestly, never promise a speedup.
    Missing,
}

/// Where a call's size (number of elements) can be read from.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SizeSpec {
    /// Positional index of the shape argument (an int or a tuple of ints).
    pub arg: Option<usize>,
    /// Keyword name of the shape argument.
    pub keyword: Option<String>,
    /// Every positional argument is a dimension (`numpy.random.rand(3, 4)`).
    #[serde(default)]
    pub varargs: bool,
    /// The argument is the data itself: a list/tuple literal whose elements are counted.
    #[serde(default)]
    pub data: bool,
    /// Elements made when the shape argument is left out and every other
    /// argument is a number (`numpy.random.normal(0, 1)` draws one number;
    /// with an array of means it draws one per mean).
    #[serde(default)]
    pub absent: Option<u64>,
    /// The argument is the side of a square matrix (`numpy.eye(3)`: nine
    /// elements). With a second positional argument (`numpy.eye(3, 5)`, a
    /// rectangle) the count is not read.
    #[serde(default)]
    pub square: bool,
    /// The call always makes this many (a named graph: `petersen_graph()`
    /// has 10 nodes), whatever its arguments.
    #[serde(default)]
    pub fixed: Option<u64>,
}

/// A documented condition under which the GPU library runs a call on the CPU.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fallback {
    /// The keyword argument that decides it. Left out when only the method
    /// called on the result decides (`then`, `then_not_in`).
    #[serde(default)]
    pub param: Option<String>,
    /// Where the argument stands when it is passed positionally (0-based),
    /// for parameters usually given that way.
    #[serde(default)]
    pub position: Option<usize>,
    /// Falls back when the argument's source text is one of these (`True`, `"lbfgs"`).
    #[serde(default)]
    pub equals: Vec<String>,
    /// Falls back when the argument is a literal not in this list.
    #[serde(default)]
    pub not_in: Vec<String>,
    /// Falls back whenever the argument is given at all.
    #[serde(default)]
    pub present: bool,
    /// Falls back when the argument is absent (the default value is the unsupported one).
    #[serde(default)]
    pub absent: bool,
    /// Falls back when the argument is a Python function (a lambda, or the
    /// name of a function defined or imported here): `SVC(kernel=my_kernel)`.
    #[serde(default)]
    pub callable: bool,
    /// Falls back when the method called on the call's result is one of
    /// these: `median` in `df.rolling(3).median()` (past any `[...]`
    /// selection, as in `df.rolling(3)["x"].median()`). With `param`, both
    /// must hold.
    #[serde(default)]
    pub then: Vec<String>,
    /// Falls back when a method is called on the call's result and it is not
    /// one of these (the only ones the GPU library implements there).
    #[serde(default)]
    pub then_not_in: Vec<String>,
    /// Why, in words for the user.
    pub reason: String,
}

impl Fallback {
    /// What is wrong with how the condition is written, if anything: it
    /// must name an argument with exactly one test of it, or a method on
    /// the result, or both.
    pub fn problem(&self) -> Option<&'static str> {
        let tests = [!self.equals.is_empty(), !self.not_in.is_empty(), self.present, self.absent, self.callable];
        let tests = tests.iter().filter(|t| **t).count();
        let then = !self.then.is_empty() || !self.then_not_in.is_empty();
        match (&self.param, tests) {
            _ if !self.then.is_empty() && !self.then_not_in.is_empty() => Some("both then and then_not_in"),
            (Some(_), 1) => None,
            (Some(_), 0) => Some("param without equals, not_in, present, absent or callable"),
            (Some(_), _) => Some("more than one of equals, not_in, present, absent and callable"),
            (None, _) if self.position.is_some() => Some("position without param"),
            (None, 0) if then => None,
            (None, 0) => Some("neither param nor then/then_not_in"),
            (None, _) => Some("equals, not_in, present, absent or callable without param"),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiMapping {
    /// Fully qualified CPU name, e.g. `numpy.fft.fft` or `pandas.DataFrame.groupby`.
    pub cpu: String,
    /// Fully qualified GPU name, when there is one.
    pub gpu: Option<String>,
    /// Library id; defaults to the file's `library`.
    #[serde(default)]
    pub library: String,
    pub kind: ApiKind,
    #[serde(default = "default_support")]
    pub support: Support,
    pub note: Option<String>,
    pub size: Option<SizeSpec>,
    /// The argument giving the number of bins, for a function whose results
    /// are one count per bin and the bins' edges, one more
    /// (`counts, edges = np.histogram(x, bins=36)`): as small as that number.
    pub bins: Option<SizeSpec>,
    #[serde(default)]
    pub fallbacks: Vec<Fallback>,
    /// Typical speedup on a large input, when a source gives one (e.g. "5-50x").
    pub speedup: Option<String>,
    /// Much work per element (FFT, sort, matmul, transcendental math, random
    /// generation on the device): worth the GPU even as a single call. Light
    /// work (add, abs, a sum) pays only when data stays on the GPU across
    /// several operations.
    #[serde(default)]
    pub heavy: bool,
    /// Each output element is computed from the input elements at the same
    /// place (a NumPy ufunc such as `exp`, or `where`/`clip`, which broadcast
    /// the same way): the result has the inputs' shape.
    #[serde(default)]
    pub elementwise: bool,
    /// Without an `axis`, the whole input reduces to one number (`sum`,
    /// `mean`, `argmax`, `linalg.norm`).
    #[serde(default)]
    pub reduction: bool,
    /// An image threshold computed from the whole image's histogram (Otsu,
    /// Li, Yen…): one light pass that reduces the image to a few numbers.
    #[serde(default)]
    pub global_threshold: bool,
    /// The result holds as many elements as the first argument
    /// (`reshape`, `transpose`, `zeros_like`): a `create` or `layout` call
    /// tells its input's size on.
    #[serde(default)]
    pub keeps_size: bool,
    /// An estimator whose fit is one cheap pass over the data (a scaler's
    /// means and deviations, or minima and maxima): like light array work,
    /// worth the GPU only beside other GPU work in the same function, where
    /// the data is on the GPU anyway.
    #[serde(default)]
    pub light_fit: bool,
}

fn default_support() -> Support {
    Support::Full
}

/// A short list of names (method names, a few dozen at most), asked about
/// every name of a file by the pre-scan: a bit per (first byte, length)
/// pair rules most names out before any comparison.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(from = "Vec<String>")]
pub struct Names {
    pub(crate) names: Vec<String>,
    pub(crate) signatures: u64,
}

impl From<Vec<String>> for Names {
    fn from(names: Vec<String>) -> Names {
        let signatures = names.iter().fold(0, |bits, n| bits | Names::signature(n));
        Names { names, signatures }
    }
}

impl Names {
    #[inline]
    fn signature(name: &str) -> u64 {
        let first = name.as_bytes().first().map_or(0, |b| *b as usize);
        1 << ((first + name.len() * 7) % 64)
    }

    #[inline]
    pub fn contains(&self, name: &str) -> bool {
        self.signatures & Names::signature(name) != 0 && self.names.iter().any(|n| n == name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// Method names of the objects one CPU library's classes build (models,
/// indexes, meshes), which rules read where the object's construction is
/// out of sight.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Methods {
    /// The library's top-level module (`sklearn`, `faiss`), one of its file's `modules`.
    pub module: String,
    /// Methods that do the object's work (fit, predict, search, build), as
    /// opposed to configuring or inspecting it.
    #[serde(default)]
    pub work: Names,
    /// Methods whose name alone says that the call queries one of the
    /// library's objects (`kneighbors`, `knn_query`, `intersects_location`):
    /// no other common library spells them.
    #[serde(default)]
    pub queries: Names,
    /// Methods and attributes only this library's data objects have among
    /// the common Python libraries (pandas' `groupby`, `iloc`; NetworkX's
    /// `subgraph`): a value the code uses them on is one of these objects.
    #[serde(default)]
    pub only: Names,
    /// Functions (qualified names) that check or convert the arrays they
    /// are given and return each as an array of the same size
    /// (`check_X_y(X, y)`): what they return is what they were passed.
    #[serde(default)]
    pub converters: Names,
    /// Methods of the library's array that do what its function of the same
    /// name does, the array being the function's first argument
    /// (`a.dot(b)` is `numpy.dot(a, b)`).
    #[serde(default)]
    pub mirrors: Names,
}
