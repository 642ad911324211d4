//! XLA's own emitter tests (`../shared/xla-corpus`, read here at test time: an HLO fusion per
//! file, and RUN lines that print its emitted IR with `fusion_to_mlir`, run XLA's test
//! pipelines on it and FileCheck the result), run with `hlo-emit --emit=xla-gpu
//! --match-xla` and our passes (issue 46, item 4).
//!
//! With `--match-xla` the emitters make XLA's choices (vector factors, function names), so
//! XLA's tiling, launch and naming CHECK lines can hold. [`RUN_LINES_PASSING_AT_LEAST`] is a
//! floor; every RUN line for the GPU (or for any target) that does not pass is in the ledger
//! [`LEDGER`] with the reason, as for XLA's pass tests (`xla_pass_tests.rs`).

use crate::xla_lit;

/// The GPU RUN lines (CPU ones are another target's) that pass when this figure was last
/// raised.
///
/// Session 32: 43 of 75 (31 before `--match-xla`: its names, vector factors (reductions'
/// included), parameter functions, slice-indexed arguments and `inline`'s
/// `default-pipeline` option).
const RUN_LINES_PASSING_AT_LEAST: usize = 43;

/// Every RUN line of XLA's emitter tests that fails or has no counterpart here, one a line:
/// `<dir>/<file> RUN <n> chunk 0: <reason>`; `XLA_EMITTER_TESTS_LEDGER=write` rewrites it
/// from the run as `XLA_PASS_TESTS_LEDGER` does the pass tests'.
const LEDGER: &str = "testdata/xla-emitter-tests-ledger.txt";

#[test]
fn xla_s_emitter_tests_pass_with_match_xla() {
    let root = testkit::project_root().join("../shared/xla-corpus");
    let files = testkit::files_ending(std::slice::from_ref(&root), &[".hlo"]);
    assert!(
        files.len() >= 80,
        "only {} of XLA's emitter tests",
        files.len()
    );
    let tally = xla_lit::run_suite(&files, &root);
    let (lines, run) = tally.lines;
    eprintln!(
        "{}XLA's emitter-test RUN lines passing with --match-xla: {lines} of {run} run; not run \
         for want of a counterpart: {}",
        tally.table,
        tally.missing()
    );
    assert!(
        lines >= RUN_LINES_PASSING_AT_LEAST,
        "{lines} of XLA's emitter-test RUN lines pass, fewer than \
         {RUN_LINES_PASSING_AT_LEAST}:\n{}",
        tally.table
    );
    xla_lit::check_ledger(&tally.open, LEDGER, "XLA_EMITTER_TESTS_LEDGER");
}
