//! XLA's own lit tests of its emitter IR and passes (`../shared/xla-pass-tests`, read here at
//! test time): how much of their input our reader takes (issue 46, item 1).
//!
//! Every file is split at its `// -----` lines as its RUN lines split it, and each chunk is
//! parsed and verified as `hlo-opt` does, XLA's spellings of the emitter dialect read as ours
//! (`xla.loop`, `#xla.indexing_map`, `/` for `floordiv`: `crates/ir/src/parser/xla_spelling.rs`).
//! Chunks that annotate an `expected-error` test XLA's verifier on invalid IR and are left
//! out. The count may only go up: [`PARSED_AT_LEAST`] is the last measured figure, and a
//! lower count fails with the table of every file.

use std::path::PathBuf;

/// The chunks parsed and verified when this figure was last raised (session 28: 244 of 319
/// valid ones, 158 before XLA's spellings were read; MLIR's f8/f4 and complex element
/// types, `affine.apply`, `scf.forall`, `dense<...>` layout encodings and a few ops are not
/// read yet).
const PARSED_AT_LEAST: usize = 245;

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
    let (mut parsed, mut valid) = (0, 0);
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
                Err(d) if first_error.is_empty() => first_error = d.message.clone(),
                Err(_) => {}
            }
        }
        parsed += ok;
        valid += chunks;
        table.push_str(&format!("{name}: {ok}/{chunks} {first_error}\n"));
    }
    eprintln!("{table}XLA's pass-test inputs read: {parsed}/{valid}");
    assert!(
        parsed >= PARSED_AT_LEAST,
        "{parsed} chunks of XLA's pass tests read, fewer than {PARSED_AT_LEAST}:\n{table}"
    );
}
