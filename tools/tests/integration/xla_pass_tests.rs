//! XLA's own lit tests of its emitter IR and passes (`../shared/xla-pass-tests`, read here at
//! test time): how much of their input our reader takes (issue 46, item 1), and how many of
//! their RUN lines our passes pass (item 2).
//!
//! Every file is split at its `// -----` lines as its RUN lines split it, and each chunk is
//! parsed and verified as `hlo-opt` does, XLA's spellings of the emitter dialect read as ours
//! (`xla.loop`, `#xla.indexing_map`, `/` for `floordiv`: `crates/ir/src/parser/xla_spelling.rs`).
//! Chunks that annotate an `expected-error` test XLA's verifier on invalid IR and are left
//! out. The count may only go up: [`PARSED_AT_LEAST`] is the last measured figure, and a
//! lower count fails with the table of every file.
//!
//! The RUN lines run as written with `hlo-opt` for XLA's `emitters_opt` ([`FLAGS`]: XLA's
//! pass flags and ours) and LLVM's FileCheck on XLA's CHECK lines, XLA's spelling of the
//! shared dialect in them read as ours. A RUN line for another target (a CPU, ROCm, oneAPI)
//! is not ours; one naming a pass or option we lack, or checking diagnostics, is counted
//! apart. [`RUN_LINES_PASSING_AT_LEAST`] holds the passing ones, as a floor. Every (RUN line,
//! chunk) pair that does not pass is in the ledger [`LEDGER`] with the reason; the test fails
//! when a pair fails without an entry or an entry's pair passes, so the ledger is always the
//! list of what is left.

use std::path::PathBuf;

use crate::xla_lit;

/// The chunks parsed and verified when this figure was last raised (session 33: 318 of 319,
/// every one but the CPU op refused by name, with `scf.forall`, XLA's `#xla_gpu.layout` encoding, `xla_gpu.insert`, the narrow float formats' literals, `scf.index_switch`, `vector.from_elements`,
/// `builtin.unrealized_conversion_cast`, XLA's `max`/`min`, products of two variables, `floorDiv`/`ceilDiv` and negative
/// divisors in maps, and `get_dynamic_dim_size` past a flattened tensor's rank;
/// session 32: 293,
/// with MLIR's f8/f6/f4 float formats, `complex<...>` with its ops and `affine.apply`;
/// session 31: 258
/// valid ones, with `xla.workgroup_id`, `gpu.lane_id`, declarations with named arguments,
/// `xla_gpu.reduce`, `xla.get_dynamic_dim_size` and `dense<...>` layout encodings; session
/// 30: 247, 245 before XLA's packed atomic updates were read, 158 before XLA's spellings
/// were; `max`/`min` in maps, `scf.forall`, `scf.index_switch`, narrow float literals and a
/// few ops are not read yet).
const PARSED_AT_LEAST: usize = 318;

/// How the reader ends its refusal of another backend's op (`xla_cpu.load`, `rocdl.*`).
const OTHER_TARGET: &str = "hlo-emit compiles for NVIDIA GPUs";

fn pass_tests() -> Vec<PathBuf> {
    let dir = testkit::project_root().join("../shared/xla-pass-tests");
    testkit::files_ending(&[dir], &[".mlir"])
}

#[test]
fn xla_s_pass_test_inputs_are_read() {
    let files = pass_tests();
    assert!(
        files.len() >= 30,
        "only {} files of XLA's pass tests",
        files.len()
    );
    let (mut parsed, mut valid, mut other_target) = (0, 0, 0);
    let mut table = String::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy();
        let (mut ok, mut chunks) = (0, 0);
        let mut first_error = String::new();
        for chunk in text.split("\n// -----\n") {
            if chunk.contains("expected-error") {
                continue;
            }
            chunks += 1;
            let read = ir::parse_module_with(chunk, &name, ir::Registry::standard())
                .and_then(|module| module.verify().map(|()| module));
            match read {
                Ok(_) => ok += 1,
                // The goal leaves these out: ops of XLA's CPU and AMD backends,
                // refused by name.
                Err(d) if d.message.ends_with(OTHER_TARGET) => other_target += 1,
                Err(d) if first_error.is_empty() => first_error = d.message.clone(),
                Err(_) => {}
            }
        }
        parsed += ok;
        valid += chunks;
        table.push_str(&format!("{name}: {ok}/{chunks} {first_error}\n"));
    }
    eprintln!(
        "{table}XLA's pass-test inputs read: {parsed}/{valid}, refused as another target's: \
         {other_target}"
    );
    assert!(
        parsed >= PARSED_AT_LEAST,
        "{parsed} chunks of XLA's pass tests read, fewer than {PARSED_AT_LEAST}:\n{table}"
    );
}

/// The RUN lines that pass (every chunk of the file) when this figure was last raised.
///
/// Session 33: 16 of 36, with `lower-xla-shared`. Session 31: 15 of 35 RUN lines run for NVIDIA or any target (a RUN line fails when one
/// chunk does: a type or op not read yet is enough); 8 more name a pass or an option we do
/// not have, 9 are for other targets or check diagnostics only. (Session 30: 2 of 24, before
/// `convert-pure-call-ops`, `propagate-slice-indices`, `safe-integer-arithmetic`,
/// `unswitch-loops`, `recover-exp2`, `convert-index-type`, `merge-pointers-to-same-slice`,
/// `optimize-loops` and `peel-loops`.)
const RUN_LINES_PASSING_AT_LEAST: usize = 16;

/// The (RUN line, chunk) pairs that pass when this figure was last raised: the chunks with
/// CHECK lines for the RUN line's prefixes, each run on its own.
///
/// Session 33: 176 of 322, with identity atomics folded, `min`/`max` folded on ranges, XLA's atomic overwrite store, XLA's map extensions, `get_dynamic_dim_size` lowered,
/// `scf.index_switch` read and `lower-xla-shared`.
/// Session 32: 156 of 320, with `complex<...>` and `affine.apply` read. Session 31: 153 of 320 run (167 fail on FileCheck, input not read or a pass's error), 43
/// more need a pass or option we do not have, 86 are for other targets or check diagnostics
/// only. (Session 30: 95 of 270; 92 before XLA's packed atomic updates were read.)
const PAIRS_PASSING_AT_LEAST: usize = 176;

/// Every (RUN line, chunk) pair of XLA's pass tests that fails or has no counterpart here,
/// one a line: `<file> RUN <n> chunk <k>: <reason>` (the file's path under XLA's `xla/`, RUN
/// lines and chunks counted from 0),
/// the reason `deliberate: ...` (a difference we keep, and why) or `not yet: ...`.
/// `XLA_PASS_TESTS_LEDGER=write cargo test ... xla_s_run_lines` rewrites it from the run,
/// keeping the reasons of the pairs still listed and giving new ones the first line of
/// why they fail; read the diff before committing it.
const LEDGER: &str = "testdata/xla-pass-tests-ledger.txt";

#[test]
fn xla_s_run_lines_pass_with_our_passes() {
    let root = testkit::project_root().join("../shared/xla-pass-tests/xla");
    let tally = xla_lit::run_suite(&pass_tests(), &root);
    let ((lines, lines_run), (pairs, pairs_run)) = (tally.lines, tally.pairs);
    eprintln!(
        "{}XLA's RUN lines passing with our passes: {lines} of {lines_run} run (every chunk), \
         {pairs} of {pairs_run} (RUN line, chunk) pairs; not run for want of a counterpart: {}",
        tally.table,
        tally.missing()
    );
    assert!(
        lines >= RUN_LINES_PASSING_AT_LEAST && pairs >= PAIRS_PASSING_AT_LEAST,
        "{lines} of XLA's RUN lines and {pairs} (RUN line, chunk) pairs pass, fewer than \
         {RUN_LINES_PASSING_AT_LEAST} and {PAIRS_PASSING_AT_LEAST}:\n{}",
        tally.table
    );
    xla_lit::check_ledger(&tally.open, LEDGER, "XLA_PASS_TESTS_LEDGER");
}
