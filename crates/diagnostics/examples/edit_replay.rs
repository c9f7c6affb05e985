//! Replays the shared latency benchmark's edits in process (type `x` at the
//! end of a plain statement line inside a block, then delete it), timing the
//! reparse and the analysis separately, and prints percentiles and the
//! slowest edits. For profiling the editor path without a client:
//! `cargo run --release -p gpulens-diagnostics --example edit_replay -- FILE [EDITS]`.
//! With `REPLAY_EACH=1` it also prints every edit's analysis time and how
//! many of the file's definitions it reused, to stderr.

use std::time::Instant;

use gpulens_diagnostics::{check_incremental, Cache, Settings};
use gpulens_gpu::GpuProfile;
use gpulens_syntax::{Change, Document, Position, PositionEncoding, Range};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: edit_replay FILE [EDITS]");
    let edits: usize = args.next().map_or(100, |n| n.parse().expect("EDITS is a number"));
    let text = std::fs::read_to_string(&path).expect("readable UTF-8 file");
    let lines: Vec<&str> = text.split('\n').collect();
    let candidates: Vec<usize> = (0..lines.len())
        .filter(|&i| {
            let l = lines[i];
            l.starts_with("        ")
                && !l.trim().is_empty()
                && !l.trim_end().ends_with(['\\', ',', '(', '[', '{'])
                && !l.contains(['"', '\'', '#'])
        })
        .collect();
    let settings = Settings::default();
    let gpu = GpuProfile::target("H200").expect("known GPU");
    let mut doc = Document::new(&text);
    let mut cache = Cache::default();
    let started = Instant::now();
    let first = check_incremental(&doc.text(), doc.tree(), &settings, &gpu, &mut cache);
    println!("open: {:.1} ms, {} findings", started.elapsed().as_secs_f64() * 1e3, first.len());
    // A small deterministic generator (xorshift), so runs are comparable.
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut samples: Vec<(f64, f64, f64, usize, &str)> = Vec::new();
    for _ in 0..edits {
        let line = candidates[(next() % candidates.len() as u64) as usize];
        let col = lines[line].encode_utf16().count() as u32;
        for insert in [true, false] {
            let at = Position::new(line as u32, col);
            let change = if insert {
                Change::replace(Range::new(at, at), "x")
            } else {
                Change::replace(Range::new(at, Position::new(line as u32, col + 1)), "")
            };
            let t0 = Instant::now();
            doc.apply_changes(&[change], PositionEncoding::Utf16);
            let t1 = Instant::now();
            let text = doc.text();
            let t2 = Instant::now();
            let _ = check_incremental(&text, doc.tree(), &settings, &gpu, &mut cache);
            let t3 = Instant::now();
            if std::env::var_os("REPLAY_EACH").is_some() {
                eprintln!("{:.2} ms, reused {:?}, line {} {}", (t3 - t2).as_secs_f64() * 1e3, cache.last_reuse, line + 1, if insert { "ins" } else { "del" });
            }
            if (t3 - t2).as_secs_f64() > 0.008 {
                eprintln!("slow check: reused {:?} line {} {}", cache.last_reuse, line + 1, if insert { "ins" } else { "del" });
            }
            let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
            samples.push((ms(t0, t3), ms(t0, t1), ms(t2, t3), line + 1, if insert { "ins" } else { "del" }));
        }
    }
    let mut total: Vec<f64> = samples.iter().map(|s| s.0).collect();
    total.sort_by(f64::total_cmp);
    let q = |p: f64| total[((p * total.len() as f64) as usize).min(total.len() - 1)];
    println!("edits {}: p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms", total.len(), q(0.5), q(0.95), q(0.99));
    let mut parses: Vec<f64> = samples.iter().map(|s| s.1).collect();
    parses.sort_by(f64::total_cmp);
    let pq = |p: f64| parses[((p * parses.len() as f64) as usize).min(parses.len() - 1)];
    println!("reparse alone: p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms", pq(0.5), pq(0.95), pq(0.99));
    for op in ["ins", "del"] {
        let mut these: Vec<(f64, f64, f64)> = samples.iter().filter(|s| s.4 == op).map(|s| (s.0, s.1, s.2)).collect();
        these.sort_by(|a, b| a.0.total_cmp(&b.0));
        let at = |p: f64| these[((p * these.len() as f64) as usize).min(these.len() - 1)];
        let (min, p50) = (these[0], at(0.5));
        println!(
            "{op}: min {:.2} ms (reparse {:.2}, check {:.2}), p50 {:.2} ms (reparse {:.2}, check {:.2})",
            min.0, min.1, min.2, p50.0, p50.1, p50.2
        );
    }
    samples.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (all, parse, check, line, op) in samples.iter().take(8) {
        println!("  {all:7.2} ms (reparse {parse:6.2}, check {check:6.2})  line {line} {op}: {}", lines[line - 1].trim());
    }
}
