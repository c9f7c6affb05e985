//! Random documents edited by random didChange notifications: incremental
//! text, tree and findings must equal a fresh parse and a fresh analysis.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| gpulens_fuzz::edits::run(data));
