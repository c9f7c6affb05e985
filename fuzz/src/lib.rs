//! Fuzz oracles for gpulens. Each module turns arbitrary bytes into a
//! scenario and panics when gpulens misbehaves on it; the targets in
//! `fuzz_targets/` hand them libFuzzer's inputs, and the diagnostics crate's
//! tests replay the committed seeds through the same code.

pub mod edits;
