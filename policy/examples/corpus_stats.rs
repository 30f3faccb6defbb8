//! Per-line timing of the classifier over the benchmark corpus.
//!
//! ```text
//! cargo run --release -p fence-policy --example corpus_stats [-- ROUNDS]
//! cargo run --release -p fence-policy --example corpus_stats -- --verdicts
//! ```
//!
//! Every line of `benches/corpus.txt` is classified ROUNDS times (default
//! 200), each call timed on its own. A line's time is the median of its
//! rounds; the report gives the median and the maximum of those over the
//! corpus, the single slowest call seen, and the five slowest lines. These
//! are the figures behind "median under 20 µs per line, every line under
//! 1 ms".

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

#[path = "../benches/support/mod.rs"]
mod support;

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let arg = std::env::args().nth(1);
    let show_verdicts = arg.as_deref() == Some("--verdicts");
    let rounds: usize = match arg {
        Some(a) if !show_verdicts => a.parse().expect("ROUNDS must be a number"),
        _ => 200,
    };
    assert!(rounds > 0, "ROUNDS must be at least 1");
    if cfg!(debug_assertions) {
        eprintln!("warning: a debug build; run with --release for meaningful figures");
    }
    let (cls, cwd) = support::classifier();
    let lines = support::corpus_lines();
    if show_verdicts {
        for l in &lines {
            let v = cls.classify_line(l, &cwd);
            let abs = if v.absolute { "!" } else { " " };
            println!("{:6}{abs} {:28} {l}", v.level.as_str(), v.rule);
        }
        return;
    }

    let mut levels: BTreeMap<String, usize> = BTreeMap::new();
    for l in &lines {
        let v = cls.classify_line(l, &cwd);
        let key = format!("{}{}", v.level, if v.absolute { " (absolute)" } else { "" });
        *levels.entry(key).or_default() += 1;
    }

    let mut samples: Vec<Vec<Duration>> = vec![Vec::with_capacity(rounds); lines.len()];
    // Rounds outside, lines inside: a burst of noise on the machine spreads
    // over many lines instead of landing on one.
    for _ in 0..rounds {
        for (i, l) in lines.iter().enumerate() {
            let t = Instant::now();
            black_box(cls.classify_line(black_box(l), &cwd));
            samples[i].push(t.elapsed());
        }
    }

    let mut per_line: Vec<(Duration, Duration, &str)> = samples
        .iter_mut()
        .zip(&lines)
        .map(|(s, l)| {
            s.sort_unstable();
            (s[s.len() / 2], s[s.len() - 1], *l)
        })
        .collect();
    per_line.sort_by_key(|p| p.0);
    let n = per_line.len();
    let pct = |q: f64| micros(per_line[((n - 1) as f64 * q).round() as usize].0);
    let total: Duration = per_line.iter().map(|p| p.0).sum();
    let worst_call = per_line
        .iter()
        .max_by_key(|p| p.1)
        .expect("corpus not empty");

    println!("corpus: {n} lines, {rounds} rounds each");
    println!(
        "verdicts: {}",
        levels
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!("per-line time (median of each line's rounds):");
    println!("  median over lines: {:8.2} µs", pct(0.5));
    println!("  p90:               {:8.2} µs", pct(0.9));
    println!("  p99:               {:8.2} µs", pct(0.99));
    println!("  max over lines:    {:8.2} µs", pct(1.0));
    println!("  mean over lines:   {:8.2} µs", micros(total) / n as f64);
    let calls = n * rounds;
    let over_1ms = samples
        .iter()
        .flatten()
        .filter(|d| **d > Duration::from_millis(1))
        .count();
    println!(
        "slowest single call: {:.2} µs  {:?}",
        micros(worst_call.1),
        worst_call.2
    );
    println!(
        "calls over 1 ms: {over_1ms} of {calls} (a line's median is its time; single calls include preemption)"
    );
    println!("slowest 5 lines (median / max µs):");
    for (med, max, l) in per_line.iter().rev().take(5) {
        println!("  {:8.2} / {:8.2}  {l}", micros(*med), micros(*max));
    }
}
