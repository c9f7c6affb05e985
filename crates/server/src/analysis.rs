//! The analysis of open documents off the protocol's threads: the threads
//! it runs on, the edit budget, what a document keeps between analyses
//! (`OpenDoc`, `Memory`), and one edit's analysis (`Job`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gpulens_diagnostics::{check_incremental, check_incremental_unless, Cache, Finding};
use gpulens_gpu::GpuProfile;
use gpulens_syntax::{Change, Document, PositionEncoding, Recent};

use crate::guard;
use crate::settings::Effective;
/// How long an edit's handler waits for the analysis of a large file's new
/// text before publishing the previous findings moved with the edit (the
/// analysis's own result follows when it is in). Most edits of a large file
/// are analysed within it (a re-analysed method, about 1 ms); those that
/// take longer are mostly ones that break the syntax, where tree-sitter's
/// error recovery can reshape the rest of a class (every later method
/// analysed again, up to 15 ms for `DataFrame`), and the editor should not
/// wait on that to see its diagnostics follow the edit. (The timer fires
/// on tokio's millisecond ticks: up to 1 ms later.)
pub(crate) const EDIT_BUDGET: Duration = Duration::from_millis(2);

/// Files from this size on have a budget. A smaller file's analysis takes a
/// few ms at worst, and its first diagnostics after an edit are always its
/// own.
pub(crate) const LARGE: usize = 100_000;

/// Edit analyses handed to the analysis threads so far.
pub(crate) static EDIT_JOBS: AtomicU64 = AtomicU64::new(0);

/// After the analysis of edit job `queued`: keep this thread awake (yielding
/// to anything else that wants the core) until the next edit's job comes or
/// a short while passes, `GPULENS_LINGER_MS` (default 3; 0: not at all).
///
/// Typing and deleting come in bursts, and an editor follows each change
/// with requests of its own. A thread (and, in a virtual machine, a core)
/// that went to sleep takes a few tenths of a millisecond to wake, which is
/// a tenth of an edit's budget; on this project's 2-core VM lingering took
/// about 0.5-1 ms off the median edit-to-diagnostics latency (BENCHMARKS.md).
/// The cost is at most this long of one core's time after each edit.
pub(crate) fn linger(queued: u64) {
    static LINGER: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    let linger = *LINGER.get_or_init(|| {
        let ms = std::env::var("GPULENS_LINGER_MS").ok().and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(3);
        Duration::from_millis(ms)
    });
    let until = std::time::Instant::now() + linger;
    while EDIT_JOBS.load(Ordering::Acquire) == queued && std::time::Instant::now() < until {
        std::thread::yield_now();
    }
}

/// The threads analyses run on, at a lower priority than the threads that
/// read the client's messages and write the answers: two (a newer edit's
/// analysis reparses while an older one notices it is stale; two documents
/// are analysed at once), but never every core. On two cores both analysis
/// threads busy (a long analysis after an edit that broke the syntax, and
/// the next one, or one lingering) held up the stand-in findings published
/// for an edit and the reading of the next by several milliseconds, nice
/// level or not: with one, the latency benchmark's p99 over ten seeds went
/// from 3.8-7.7 ms to 3.8-4.7 ms (BENCHMARKS.md, session 22).
pub(crate) fn analysis_pool() -> &'static rayon::ThreadPool {
    static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        rayon::ThreadPoolBuilder::new()
            .num_threads(cores.saturating_sub(1).clamp(1, 2))
            .thread_name(|i| format!("gpulens-analysis-{i}"))
            .start_handler(|_| {
                lower_priority();
                warm_up();
            })
            .build()
            .expect("the analysis threads start")
    })
}

/// Analyses a small text on the calling thread, edit included, so that the
/// first edit the user makes does not pay for what each thread does once
/// (its parser, the first run through the analysis's code and tables).
pub(crate) fn warm_up() {
    let text = "import numpy as np\n\ndef f(x):\n    for i in range(100):\n        x = np.fft.fft(x) + i\n    return x\n";
    let _ = guard("warming up", || {
        let settings = gpulens_diagnostics::Settings::default();
        let gpu = GpuProfile::none();
        let mut doc = Document::new(text);
        let mut cache = Cache::default();
        check_incremental(&doc.text(), doc.tree(), &settings, &gpu, &mut cache);
        let at = gpulens_syntax::Position { line: 4, character: 37 };
        doc.edit(&[Change::replace(gpulens_syntax::Range { start: at, end: at }, "x")], PositionEncoding::Utf16);
        doc.reparse(&mut |_| false);
        check_incremental(&doc.text(), doc.tree(), &settings, &gpu, &mut cache)
    });
}

/// Lowers the calling thread's scheduling priority (nice 5 on Linux; a
/// no-op elsewhere).
pub(crate) fn lower_priority() {
    set_nice(5);
}

fn set_nice(_level: i32) {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority with PRIO_PROCESS and a thread id changes only that
    // thread's nice value; it reads and writes no memory of ours.
    unsafe {
        let _ = libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, _level);
    }
}

/// The one thread that reads the workspace's project index, below the
/// analysis threads (nice 10): the index is read off the path of the
/// edits, and its passes (parallel in `gpulens check`) must not take the
/// cores an edit's analysis waits for (with the index read on every core,
/// the latency benchmark's p99 went from about 4.4 ms to 8-12 ms).
pub(crate) fn index_pool() -> &'static rayon::ThreadPool {
    static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .thread_name(|_| "gpulens-index".to_string())
            .start_handler(|_| set_nice(10))
            .build()
            .expect("the index thread starts")
    })
}

/// The budget for an edit of a file of `len` bytes, None for no budget
/// (wait for the analysis). `GPULENS_EDIT_BUDGET_MS` sets one for every
/// file (0: publish the moved findings first, always).
pub(crate) fn edit_budget(len: usize) -> Option<Duration> {
    static SET: std::sync::OnceLock<Option<Duration>> = std::sync::OnceLock::new();
    let set = *SET.get_or_init(|| {
        std::env::var("GPULENS_EDIT_BUDGET_MS").ok().and_then(|v| v.trim().parse::<u64>().ok()).map(Duration::from_millis)
    });
    set.or((len >= LARGE).then_some(EDIT_BUDGET))
}

/// How long a pull for diagnostics waits for the analysis of the current text.
pub(crate) const PULL_WAIT: Duration = Duration::from_secs(2);

/// One open file.
pub(crate) struct OpenDoc {
    pub(crate) version: i32,
    /// The current text. Its tree is out of date while an analysis of the
    /// latest edit is under way (the edits are recorded in it).
    pub(crate) doc: Document,
    /// For `doc`'s text: its analysis, or while that is under way the
    /// findings before the edit moved with it (see `exact`).
    pub(crate) findings: Arc<Vec<Finding>>,
    /// `findings` are the analysis of exactly the current text.
    pub(crate) exact: bool,
    /// What earlier analyses found.
    pub(crate) memory: Arc<Memory>,
    /// Counts edits (and re-analyses for new settings): an analysis started
    /// for an older count is out of date and stops.
    pub(crate) edits: Arc<AtomicU64>,
    /// Changes whenever the findings may have: the pull-diagnostics result id.
    pub(crate) generation: u64,
}

impl OpenDoc {
    /// Whether this is the document `counter` counts the edits of, and its
    /// latest edit is edit `seq`.
    pub(crate) fn at_edit(&self, seq: u64, counter: &Arc<AtomicU64>) -> bool {
        Arc::ptr_eq(&self.edits, counter) && self.edits.load(Ordering::Acquire) == seq
    }
}

/// What earlier analyses of a document found, under the current settings.
#[derive(Default)]
pub(crate) struct Memory {
    /// Findings per function, so an edit re-analyses one function. Held by
    /// the analysis running, one at a time.
    pub(crate) cache: Mutex<Cache>,
    /// The findings of the last few texts, by text hash: an edit undone (a
    /// character typed and deleted) costs no analysis, and needs no wait for
    /// an older analysis still running.
    pub(crate) recent: Mutex<Recent<Arc<Vec<Finding>>>>,
}

impl Memory {
    pub(crate) fn new(cache: Cache, hash: u64, findings: Arc<Vec<Finding>>) -> Memory {
        let mut recent = Recent::default();
        recent.put(hash, findings);
        Memory { cache: Mutex::new(cache), recent: Mutex::new(recent) }
    }

    pub(crate) fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn recent(&self) -> std::sync::MutexGuard<'_, Recent<Arc<Vec<Finding>>>> {
        self.recent.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The analysis of one edit's text, run off the async threads.
pub(crate) struct Job {
    pub(crate) doc: Document,
    pub(crate) memory: Arc<Memory>,
    pub(crate) edits: Arc<AtomicU64>,
    /// The edit count it analyses.
    pub(crate) seq: u64,
    pub(crate) effective: Arc<Effective>,
    pub(crate) gpu: Arc<GpuProfile>,
}

pub(crate) enum Outcome {
    /// The text reparsed and analysed.
    Done(Document, Arc<Vec<Finding>>),
    /// A newer edit came first: its analysis answers instead.
    Superseded,
    /// The analysis failed (logged); the moved findings stand.
    Failed,
}

impl Job {
    pub(crate) fn run(mut self) -> Outcome {
        let superseded = || self.edits.load(Ordering::Acquire) != self.seq;
        let started = std::time::Instant::now();
        if superseded() {
            return Outcome::Superseded;
        }
        // Each job parses its own copy of the document: no lock.
        match guard("reparse", || self.doc.reparse(&mut |_| superseded())) {
            None => return Outcome::Failed,
            Some(false) => return Outcome::Superseded,
            Some(true) => {}
        }
        let parsed = started.elapsed();
        let hash = self.doc.text_hash();
        if let Some(findings) = self.memory.recent().get(hash) {
            tracing::debug!("edit {}: parsed at {parsed:?}, the findings of an earlier version of the same text", self.seq);
            return Outcome::Done(self.doc, findings);
        }
        // One analysis at a time per document: the cache is theirs in turn.
        let mut cache = self.memory.cache();
        let locked = started.elapsed();
        if superseded() {
            return Outcome::Superseded;
        }
        let text = self.doc.text();
        let settings = &self.effective.settings;
        let findings =
            guard("analysis", || check_incremental_unless(&text, self.doc.tree(), settings, &self.gpu, &mut cache, &superseded));
        match findings {
            None => {
                *cache = Cache::default(); // it may be half-updated
                Outcome::Failed
            }
            Some(None) => Outcome::Superseded,
            Some(Some(findings)) => {
                tracing::debug!(
                    "edit {}: parsed at {parsed:?}, had the cache at {locked:?}, analysed at {:?} (reused {:?} definitions)",
                    self.seq,
                    started.elapsed(),
                    cache.last_reuse
                );
                let findings = Arc::new(findings);
                // While the cache is held: new settings clear what is
                // remembered under it, after this (see `reconfigure`).
                if !superseded() {
                    self.memory.recent().put(hash, findings.clone());
                }
                drop(cache);
                Outcome::Done(self.doc, findings)
            }
        }
    }
}

/// What [`analyse_in_budget`] has for the editor.
pub(crate) enum Waited {
    /// The analysis answered within the budget (`None`: its thread dropped it).
    InTime(Option<Outcome>),
    /// Past the budget: the analysis's outcome comes later on this channel.
    Late(tokio::sync::oneshot::Receiver<Outcome>),
}

/// Runs an edit's `job` on an analysis thread and waits for it as long as
/// the edit budget of its text allows (see [`edit_budget`]): the one way a
/// file's and a notebook's edits are analysed.
pub(crate) async fn analyse_in_budget(job: Job) -> Waited {
    let budget = edit_budget(job.doc.len());
    let (tx, mut rx) = tokio::sync::oneshot::channel();
    let queued = EDIT_JOBS.fetch_add(1, Ordering::AcqRel) + 1;
    analysis_pool().spawn(move || {
        let _ = tx.send(job.run());
        linger(queued);
    });
    match budget {
        Some(budget) if budget.is_zero() => Waited::Late(rx), // the moved findings first, always (tests use it)
        Some(budget) => match tokio::time::timeout(budget, &mut rx).await {
            Ok(outcome) => Waited::InTime(outcome.ok()),
            Err(_) => Waited::Late(rx),
        },
        None => Waited::InTime(rx.await.ok()),
    }
}
