//! `search_text` stays cheap enough in fuel that one call with the default
//! limits scans at least 1 GB: at most 8 million fuel per MiB searched (the
//! target in BENCHMARKS.md, "`search_text` against `grep -rn`"), measured on
//! a small generated corpus (the one `benches/search_text.rs` times at
//! 100 MiB). Also checks the results
//! against what the generator wrote, and that every limit still holds on a
//! whole-corpus search.

use std::time::Duration;

use toolhost::sandbox::{
    CallOptions, CallReport, Limits, Sandbox, SandboxOptions, ToolFault, ToolOutcome,
};

use super::common::shared_cache;
use super::corpus::{self, Corpus};

/// Fuel per MiB the default budget of 10 billion needs to cover 1 GB with
/// room to spare; the target in BENCHMARKS.md.
const MAX_FUEL_PER_MIB: f64 = 8e6;

fn corpus() -> Corpus {
    // Generated once per target directory and reused.
    corpus::corpus(
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")),
        4 << 20,
        10,
    )
}

async fn load(corpus: &Corpus, limits: Limits) -> Sandbox {
    let root = corpus.root.canonicalize().expect("canonical corpus root");
    let mut options = SandboxOptions::read_only(root);
    options.cache_dir = Some(shared_cache());
    options.policy.defaults.limits = limits;
    Sandbox::load(options).await.expect("sandbox loads")
}

async fn search(sandbox: &Sandbox, input: serde_json::Value) -> CallReport {
    sandbox
        .call("search_text", &input.to_string(), &CallOptions::default())
        .await
}

fn fuel_per_mib(report: &CallReport, corpus: &Corpus) -> f64 {
    report.stats.fuel_used as f64 / (corpus.text_bytes as f64 / f64::from(1 << 20))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_search_costs_at_most_8_million_fuel_per_mib() {
    let corpus = corpus();
    let sandbox = load(&corpus, Limits::default()).await;
    for pattern in [corpus::LITERAL, corpus::RARE_REGEX] {
        let report = search(
            &sandbox,
            serde_json::json!({"pattern": pattern, "max_results": 10_000}),
        )
        .await;
        let ToolOutcome::Ok(text) = &report.outcome else {
            panic!("`{pattern}` failed: {:?}", report.outcome);
        };
        if pattern == corpus::LITERAL {
            assert_eq!(
                text.lines().count() as u64,
                corpus.literal_lines,
                "every line with the literal, and only those"
            );
        }
        let per_mib = fuel_per_mib(&report, &corpus);
        assert!(
            per_mib <= MAX_FUEL_PER_MIB,
            "`{pattern}` used {} fuel for {:.1} MiB: {:.1} million per MiB, over {}",
            report.stats.fuel_used,
            corpus.text_bytes as f64 / f64::from(1 << 20),
            per_mib / 1e6,
            MAX_FUEL_PER_MIB / 1e6,
        );
    }

    let report = search(
        &sandbox,
        serde_json::json!({"pattern": corpus::COMMON_WORD, "max_results": 5}),
    )
    .await;
    let ToolOutcome::Ok(text) = &report.outcome else {
        panic!("capped search failed: {:?}", report.outcome);
    };
    assert_eq!(text.lines().count(), 6, "{text}");
    assert!(text.ends_with("or raise max_results)\n"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn fuel_the_deadline_and_the_output_cap_still_stop_a_whole_corpus_search() {
    let corpus = corpus();
    let limits = |fuel, timeout, output| Limits {
        fuel,
        timeout,
        output,
        ..Limits::default()
    };
    let input = serde_json::json!({"pattern": corpus::LITERAL, "max_results": 10_000});

    let sandbox = load(&corpus, limits(1_000_000, Duration::from_secs(30), 1 << 20)).await;
    let report = search(&sandbox, input.clone()).await;
    assert!(
        matches!(
            report.outcome,
            ToolOutcome::Fault(ToolFault::OutOfFuel { .. })
        ),
        "{:?}",
        report.outcome
    );

    let sandbox = load(
        &corpus,
        limits(u64::MAX / 2, Duration::from_millis(1), 1 << 20),
    )
    .await;
    let report = search(&sandbox, input.clone()).await;
    assert!(
        matches!(
            report.outcome,
            ToolOutcome::Fault(ToolFault::Timeout { .. })
        ),
        "{:?}",
        report.outcome
    );

    let sandbox = load(&corpus, limits(u64::MAX / 2, Duration::from_secs(30), 100)).await;
    let report = search(&sandbox, input).await;
    assert!(
        matches!(
            report.outcome,
            ToolOutcome::Fault(ToolFault::OutputLimit { .. })
        ),
        "{:?}",
        report.outcome
    );
}
