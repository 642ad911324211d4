//! Every program a user has at hand under every output-shaping flag, alone and in the
//! combinations a user would try: `hlo-emit` ends with its output (exit 0) or a located
//! error (exit 1), never a panic or an abort. The hostile-input tests feed bad input through
//! the default flags; this feeds valid input through the flags nobody ran together (issue
//! 49: `--launch-json` on an XLA-printed `fori_loop` panicked while a plain compile worked).
//!
//! The programs: `testdata/jax` (both forms), `testdata/jax-control` (loops), the models of
//! `testdata/models` and XLA's emitter tests (`../shared/xla-corpus`). Flags that evaluate
//! the program on the host (`--gpu-bundle`, `--check`) run on the JAX programs only: the
//! models' bandwidth-sized inputs, and some of XLA's tests (`large_loop_slow_compile_time`),
//! take minutes in the evaluator of a debug build (`check.rs` checks the corpus at smaller
//! shapes).

use std::path::{Path, PathBuf};
use std::process::Command;

use rayon::prelude::*;

const HLO_EMIT: &str = env!("CARGO_BIN_EXE_hlo-emit");

/// One run's flags; `{dir}` is replaced by a scratch directory of the run.
type Flags = &'static [&'static str];

/// For every program.
const EVERY_PROGRAM: &[Flags] = &[
    &["-o", "{dir}/k.ptx", "--launch-json", "{dir}/l.json"],
    &["--emit=hlo"],
    &["--emit=xla-gpu"],
    &["--emit=mlir"],
    &["--emit=llvm"],
    &["--emit=sass"],
    &["--explain-fusion"],
    &["--print-partition"],
    &["--dump-dir", "{dir}/dumps", "-o", "{dir}/k.ptx"],
    &[
        "--fuse",
        "--launch-json",
        "{dir}/l.json",
        "-o",
        "{dir}/k.ptx",
    ],
    &[
        "--no-fuse",
        "--emit=xla-gpu",
        "--launch-json",
        "{dir}/l.json",
    ],
    &["--split-input-file", "--emit=xla-gpu"],
    &["--emit=llvm", "--dump-after-each-pass", "--time-passes"],
];

/// For the small programs: the flags that run the evaluator.
const SMALL_PROGRAMS: &[Flags] = &[
    &["--gpu-bundle", "{dir}/bundle"],
    &[
        "--check",
        "--launch-json",
        "{dir}/l.json",
        "-o",
        "{dir}/k.ptx",
    ],
];

/// The programs, and whether each is small enough for [`SMALL_PROGRAMS`].
fn programs() -> Vec<(PathBuf, bool)> {
    let mut files: Vec<(PathBuf, bool)> = Vec::new();
    for dir in ["jax", "jax-control"] {
        files.extend(
            testkit::hlo_files(testkit::testdata(dir))
                .into_iter()
                .map(|p| (p, true)),
        );
    }
    files.extend(
        testkit::hlo_files(testkit::testdata("models"))
            .into_iter()
            .map(|p| (p, false)),
    );
    files.extend(
        testkit::hlo_files(testkit::corpus_dir())
            .into_iter()
            .map(|p| (p, false)),
    );
    files
}

/// `flags` with `{dir}` replaced by `dir`.
fn expand(flags: Flags, dir: &Path) -> Vec<String> {
    flags
        .iter()
        .map(|f| f.replace("{dir}", dir.to_str().unwrap()))
        .collect()
}

/// Runs `hlo-emit file args...`; `Err` when it panicked, aborted or exited otherwise than
/// with 0 or 1, or when an exit 1 came without an error message.
fn run(file: &Path, args: &[String]) -> Result<(), String> {
    let out = Command::new(HLO_EMIT)
        .arg(file)
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let clean = match out.status.code() {
        Some(0) => true,
        Some(1) => stderr.contains("error"),
        _ => false,
    };
    if clean && !stderr.contains("panicked") && !stderr.contains("internal compiler error") {
        Ok(())
    } else {
        Err(format!(
            "hlo-emit {} {}: {}\n{}",
            file.display(),
            args.join(" "),
            out.status,
            stderr.lines().take(12).collect::<Vec<_>>().join("\n")
        ))
    }
}

/// `--fusion NAME` for the first fusion of the program, with the launch plan: the flag a
/// user takes to look at one kernel.
fn one_fusion(file: &Path, dir: &Path) -> Result<(), String> {
    let listed = Command::new(HLO_EMIT)
        .arg(file)
        .arg("--emit=xla-gpu")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&listed.stdout);
    let Some(name) = text
        .lines()
        .find_map(|l| l.strip_prefix("// fusion ")?.split(':').next())
    else {
        return Ok(());
    };
    let mut args = vec!["--fusion".to_string(), name.to_string()];
    args.extend(expand(
        &["--launch-json", "{dir}/one.json", "-o", "{dir}/one.ptx"],
        dir,
    ));
    run(file, &args)
}

#[test]
fn every_program_under_every_flag_ends_with_output_or_a_located_error() {
    let programs = programs();
    assert!(programs.len() > 150, "only {} programs", programs.len());
    let failures: Vec<String> = programs
        .par_iter()
        .flat_map_iter(|(file, small)| {
            let scratch = tempfile::tempdir().unwrap();
            let mut sets: Vec<Flags> = EVERY_PROGRAM.to_vec();
            if *small {
                sets.extend_from_slice(SMALL_PROGRAMS);
            }
            let mut failures: Vec<String> = sets
                .into_iter()
                .enumerate()
                .filter_map(|(k, flags)| {
                    let dir = scratch.path().join(k.to_string());
                    std::fs::create_dir_all(&dir).unwrap();
                    run(file, &expand(flags, &dir)).err()
                })
                .collect();
            failures.extend(one_fusion(file, scratch.path()).err());
            failures
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
