//! The fuzzer's smoke runs (issue 44): random fusions and random unfused programs of fixed
//! seeds through `hlo-emit --check` (every stage down to the O3 module against the
//! evaluator; for programs the fusion pipeline and the whole program too), ptxas and the
//! HLO print/parse round trip. None may fail; a refusal (`unsupported: ...`) is not a
//! failure, and most must pass, so that the generator keeps making programs the compiler
//! takes.

use std::time::Duration;

use hlo_emit_tools::fuzz::{FuzzOptions, Mode, Verdict, run};

/// The report of `count` seeds of `mode` from 0 (no failure allowed) and how many passed.
fn smoke(mode: Mode, count: u64) -> (String, usize) {
    let out = std::env::temp_dir().join(format!("hlo-fuzz-smoke-{mode:?}-{}", std::process::id()));
    let options = FuzzOptions {
        hlo_emit: env!("CARGO_BIN_EXE_hlo-emit").into(),
        mode,
        seeds: 0..count,
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
    (summary, passed)
}

#[test]
fn random_fusions_match_the_evaluator_at_every_stage() {
    let (summary, passed) = smoke(Mode::Fusions, 200);
    assert!(passed >= 160, "only {passed} of 200 passed:\n{summary}");
}

/// Programs pass as a whole: a program not checked as a whole is not a pass.
#[test]
fn random_programs_match_the_evaluator_as_a_whole() {
    let (summary, passed) = smoke(Mode::Programs, 100);
    assert!(passed >= 95, "only {passed} of 100 passed:\n{summary}");
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
