//! XLA's transpose-emitter corpus (`../shared/xla-corpus/transpose`) end to end: each file
//! emits IR our verifier accepts, compiles to PTX that `ptxas` assembles without spills,
//! and computes what the reference evaluator computes in the interpreter. The files that
//! do not get there are listed with the reason, and at least 70% must.

use std::path::Path;

use crate::common;
use driver::check::{check_fusion, checked_passes};
use driver::pipeline::Options;
use emitters::EmitterKind;

/// Grids up to this many threads are checked after every pass; the interpreter needs
/// about half a second per stage for 2^16 threads of a tiled transpose.
const FULL_CHECK_THREADS: u64 = 1 << 16;
/// Larger grids up to this size are checked on the emitted IR only.
const EMIT_CHECK_THREADS: u64 = 1 << 19;

/// Files that do not pass, and why (the reason is part of the error, or "too large").
const NOT_PASSING: &[(&str, &str)] = &[
    // bf16[22,512,4096]: 1.4M threads, minutes in the interpreter.
    ("multiple_roots_one_shmem_transpose.hlo", "too large"),
];

/// Files whose transposes the loop emitter writes: the s4 ones, as XLA does.
const LOOP_EMITTED: &[&str] = &["transpose_102_s4.hlo", "transpose_10_s4.hlo"];

/// Emits, compiles to PTX, assembles and checks the one fusion of `path`.
fn run(path: &Path) -> Result<(), String> {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let text = std::fs::read(path).unwrap();
    let (source, module) = hlo::load(&name, &text[..])?;
    let id = emitters::fusions(&module)[0];
    let emitted = emitters::emit_fusion(&module, id).map_err(|d| d.render(&source))?;
    let expected_kind = if LOOP_EMITTED.contains(&name.as_str()) {
        EmitterKind::Loop
    } else {
        EmitterKind::Transpose
    };
    assert_eq!(emitted.emitter, expected_kind, "{name}");
    let ptx = common::compile_ptx(&source, &module, &[id], &Options::default())?;
    common::assemble_without_spills(&ptx)?;
    let launch = emitted.kernel.launch;
    let threads = launch.blocks * launch.threads_per_block;
    let passes = if threads <= FULL_CHECK_THREADS {
        checked_passes()
    } else if threads <= EMIT_CHECK_THREADS {
        Vec::new()
    } else {
        return Err(format!("too large for the interpreter: {threads} threads"));
    };
    let mut report = Vec::new();
    match check_fusion(&source, &module, id, passes, 1, &mut report)? {
        true => Ok(()),
        false => Err(String::from_utf8_lossy(&report).into_owned()),
    }
}

#[test]
fn the_transpose_corpus_compiles_and_matches_the_evaluator() {
    let files = testkit::corpus(&["transpose"]);
    let passing = testkit::check_files(&files, NOT_PASSING, run);
    eprintln!("{passing} of {} transpose corpus files pass", files.len());
    assert_eq!(passing + NOT_PASSING.len(), files.len());
    assert!(
        passing * 10 >= files.len() * 7,
        "{passing} of {}",
        files.len()
    );
}

/// The interpreter tests' transpose fusions (`crates/interp/tests/integration/transposes.rs`) through
/// the whole pipeline: PTX that `ptxas` assembles without spills, and the meaning checked
/// after every pass.
#[test]
fn small_transposes_compile_and_match_after_every_pass() {
    let cases = [
        "p0 = f32[3,40,50] parameter(0)
         exp = f32[3,40,50] exponential(p0)
         transpose = f32[3,50,40] transpose(exp), dimensions={0,2,1}
         ROOT abs = f32[3,50,40] abs(transpose)",
        "p0 = bf16[2,33,70] parameter(0)
         t = bf16[2,70,33] transpose(p0), dimensions={0,2,1}
         ROOT n = bf16[2,70,33] negate(t)",
        "p0 = f32[40,3,50] parameter(0)
         ROOT t = f32[50,3,40] transpose(p0), dimensions={2,1,0}",
        "p0 = bf16[36,2,20] parameter(0)
         t = bf16[20,2,36] transpose(p0), dimensions={2,1,0}
         ROOT c = f32[20,2,36] convert(t)",
        "p0 = s8[40,50,3] parameter(0)
         ROOT t = s8[50,40,3] transpose(p0), dimensions={1,0,2}",
        "p0 = bf16[4,48,40] parameter(0)
         e = bf16[4,48,40] exponential(p0)
         t = bf16[4,40,48] transpose(e), dimensions={0,2,1}
         a = bf16[4,40,48] abs(t)
         r = bf16[160,48] reshape(a)
         ROOT tuple = (bf16[160,48], bf16[4,48,40]) tuple(r, e)",
        "p0 = f32[2,40,64] parameter(0)
         p1 = bf16[2,40,64] parameter(1)
         t0 = f32[2,64,40] transpose(p0), dimensions={0,2,1}
         s = bf16[2,40,64] sqrt(p1)
         t1 = bf16[2,64,40] transpose(s), dimensions={0,2,1}
         c = f32[2,64,40] convert(t1)
         ROOT tuple = (f32[2,64,40], f32[2,64,40]) tuple(t0, c)",
        "p0 = f32[3,40,50]{1,2,0} parameter(0)
         ROOT t = f32[3,40,50]{2,1,0} transpose(p0), dimensions={0,1,2}",
    ];
    for body in cases {
        let text = format!("fusion {{\n{body}\n}}\n");
        let (source, module) = hlo::load("case.hlo", text.as_bytes()).unwrap();
        let id = emitters::fusions(&module)[0];
        let emitted = emitters::emit_fusion(&module, id).unwrap_or_else(|d| panic!("{d}"));
        assert_eq!(emitted.emitter, EmitterKind::Transpose, "{text}");
        let ptx = common::compile_ptx(&source, &module, &[id], &Options::default())
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(ptx.contains("bar.sync"), "{text}");
        common::assemble_without_spills(&ptx).unwrap_or_else(|e| panic!("{text}: {e}"));
        let mut report = Vec::new();
        let ok = check_fusion(&source, &module, id, checked_passes(), 1, &mut report)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(ok, "{text}\n{}", String::from_utf8_lossy(&report));
    }
}
