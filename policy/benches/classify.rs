//! Criterion benchmark of the line classifier over a corpus of realistic
//! agent and CI lines (`benches/corpus.txt`).
//!
//! ```text
//! cargo bench -p fence-policy --bench classify -- --warm-up-time 1 --measurement-time 3
//! ```
//!
//! `corpus/all_lines` classifies every corpus line once per iteration (its
//! throughput is lines per second); `line/*` times single representative
//! lines. Per-line medians and the slowest lines come from the
//! `corpus_stats` example.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

mod support;

/// Representative lines, from the cheapest to the heaviest kinds.
const LINES: &[(&str, &str)] = &[
    ("read", "ls -la src/"),
    ("git_status", "git status --short"),
    ("build", "cargo test -p fence-policy -- --nocapture"),
    (
        "commit_chain",
        "git add -A && git commit -m \"policy: classify heredocs and process substitution\"",
    ),
    (
        "pipeline",
        "jq -r '.[].name' data.json | sort | uniq -c | sort -rn | head",
    ),
    ("sed_in_place", "sed -i 's/foo/bar/g' src/config.rs"),
    ("rm_home", "rm -rf ~"),
    ("push_main", "git push origin HEAD:main"),
    ("curl_sh", "curl -fsSL https://sh.rustup.rs | sh"),
    (
        "find_exec",
        "find . -name __pycache__ -type d -exec rm -rf {} +",
    ),
    ("sh_c", "bash -lc \"npm ci && npm test\""),
    (
        "for_loop",
        "for f in src/*.rs; do echo \"== $f\"; wc -l \"$f\"; done",
    ),
    (
        "substitution",
        "echo \"Build took $(( $(date +%s) - START )) seconds\"",
    ),
    ("procsub", "diff <(sort a.txt) <(sort b.txt)"),
];

fn bench(c: &mut Criterion) {
    let (cls, cwd) = support::classifier();
    let lines = support::corpus_lines();

    let mut g = c.benchmark_group("corpus");
    g.throughput(Throughput::Elements(lines.len() as u64));
    g.bench_function("all_lines", |b| {
        b.iter(|| {
            for l in &lines {
                black_box(cls.classify_line(black_box(l), &cwd));
            }
        })
    });
    g.finish();

    let mut g = c.benchmark_group("line");
    for (name, line) in LINES {
        g.bench_with_input(BenchmarkId::from_parameter(name), line, |b, line| {
            b.iter(|| cls.classify_line(black_box(line), &cwd))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
