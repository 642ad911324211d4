//! The fuzzer's smoke run (issue 44): random fusions of fixed seeds through `hlo-emit
//! --check` (every stage down to the O3 module against the evaluator), ptxas and the HLO
//! print/parse round trip. None may fail; a refusal (`unsupported: ...`) is not a failure,
//! and most must pass, so that the generator keeps making programs the compiler takes.

use std::time::Duration;

use hlo_emit_tools::fuzz::{FuzzOptions, Verdict, run};

#[test]
fn random_fusions_match_the_evaluator_at_every_stage() {
    let out = std::env::temp_dir().join(format!("hlo-fuzz-smoke-{}", std::process::id()));
    let options = FuzzOptions {
        hlo_emit: env!("CARGO_BIN_EXE_hlo-emit").into(),
        seeds: 0..200,
        jobs: 2,
        timeout: Duration::from_secs(300),
        shrink: 0,
        out: out.clone(),
    };
    let report = run(&options).unwrap_or_else(|e| panic!("{e}"));
    let summary = report.summary();
    let _ = std::fs::remove_dir_all(&out);
    assert!(report.failures().is_empty(), "{summary}");
    let passed = report
        .verdicts
        .iter()
        .filter(|(_, v)| *v == Verdict::Pass)
        .count();
    assert!(passed >= 160, "only {passed} of 200 passed:\n{summary}");
}

/// Seeds past 2^64 are refused with an error, not an overflow; no program is a run of none.
#[test]
fn hostile_seed_ranges_are_refused_or_empty() {
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_hlo-fuzz"))
            .args(args)
            .arg("--out")
            .arg(std::env::temp_dir().join(format!("hlo-fuzz-hostile-{}", std::process::id())))
            .output()
            .unwrap()
    };
    let out = run(&["--seed", "18446744073709551615", "--count", "5"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("error: --seed 18446744073709551615 --count 5: the last seed is past 2^64"),
        "{out:?}"
    );
    let out = run(&["--count", "0", "--jobs", "0"]);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("0 programs"));
}
