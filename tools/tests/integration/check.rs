//! `hlo-emit --check` (issues 7 and 16): the interpreter agrees with the HLO reference
//! evaluator after every pass and after the LLVM stages (the translated and the
//! O3-optimized LLVM IR, the code that becomes PTX) on the models and on every corpus file
//! that compiles, and a pass or an LLVM stage broken on purpose is blamed by name.

use ir::dialects::arith;
use ir::dialects::tensor;
use std::path::PathBuf;
use std::sync::Arc;

use driver::check::{
    CheckOptions, ModuleCheck, check_fusion, check_fusion_with, check_module, checked_passes,
    optimize_o3,
};
use driver::pipeline::{Options, PASSES, compile_text};
use driver::runner::{Observer, Output, StageDone};
use ir::{Builder, InsertPoint, Module};
use passes::{FlattenTensors, Pass};

/// Checks every fusion of `text` with `passes()` on `inputs` seeds: the report, and whether
/// every fusion matched (`Err` when a fusion does not compile).
fn check_text(
    name: &str,
    text: &str,
    inputs: u64,
    passes: fn() -> Vec<Box<dyn Pass>>,
) -> Result<(bool, String), String> {
    let (source, module) = hlo::load(name, text.as_bytes())?;
    let mut out = Vec::new();
    let mut ok = true;
    for id in emitters::fusions(&module) {
        ok &= check_fusion(&source, &module, id, passes(), inputs, &mut out)?;
    }
    Ok((ok, String::from_utf8(out).unwrap()))
}

/// The seed's GELU on bf16[2,64,16] (4 blocks of 128 threads, factor 4).
fn small_gelu() -> String {
    std::fs::read_to_string(testkit::testdata("models/gelu.hlo"))
        .unwrap()
        .replace("6,512,4096", "2,64,16")
}

#[test]
fn gelu_matches_the_evaluator_after_every_pass() {
    let (ok, report) = check_text("gelu.hlo", &small_gelu(), 2, checked_passes).unwrap();
    assert!(ok, "{report}");
    let stages: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("check: ["))
        .collect();
    // The emitter's module, one line per pass (lower-to-llvm included), then the translated
    // and the O3-optimized LLVM IR.
    assert_eq!(stages.len(), 1 + checked_passes().len() + 2, "{report}");
    assert!(stages[stages.len() - 2].contains("] translate"), "{report}");
    assert!(stages[stages.len() - 1].contains("] llvm-opt"), "{report}");
    assert!(stages.iter().all(|l| l.contains(": ok")), "{report}");
    // A pass that leaves the IR as it was is not interpreted again.
    assert!(
        stages[2].contains("erase-dead-functions")
            && stages[2].ends_with("(IR unchanged: not run again)"),
        "{report}"
    );
    // Until tanh is approximated, both sides compute bit for bit the same.
    assert!(stages[0].contains("[ 0] emit") && stages[0].contains("bit-exact"));
    let flatten = stages
        .iter()
        .find(|l| l.contains("flatten-tensors"))
        .unwrap();
    assert!(flatten.contains("bit-exact"), "{report}");
    assert!(
        report.contains("seeded inputs (seeds 0..1), outputs bf16[2,64,16]"),
        "{report}"
    );
}

/// `flatten-tensors` with an off-by-one on purpose: every flattened read of a parameter
/// takes its neighbour's element (index xor 1, which stays inside the buffer).
struct OffByOneFlatten;

impl Pass for OffByOneFlatten {
    passes::pass_names!(
        "flatten-tensors",
        "flatten-tensors, reading the neighbouring element"
    );
    fn run(&self, m: &mut Module) -> Result<(), ir::Diagnostic> {
        FlattenTensors.run(m)?;
        let reads: Vec<_> = m
            .collect_ops(m.top())
            .into_iter()
            .filter(|&op| m.is(op, tensor::EXTRACT) && m.num_operands(op) == 2)
            .collect();
        assert!(!reads.is_empty(), "no flattened read to break");
        for op in reads {
            let index = m.operand(op, 1);
            let mut b = Builder::new(m, InsertPoint::Before(op));
            let one = b.index(1);
            let neighbour = b.binary(arith::XORI, index, one);
            m.set_operand(op, 1, neighbour);
        }
        Ok(())
    }
}

fn passes_with_broken_flatten() -> Vec<Box<dyn Pass>> {
    checked_passes()
        .into_iter()
        .map(|p| -> Box<dyn Pass> {
            if p.name() == "flatten-tensors" {
                Box::new(OffByOneFlatten)
            } else {
                p
            }
        })
        .collect()
}

/// Asserts that the report's last `check:` line names `stage` and ends in `verdict`.
fn assert_last_check_blames(report: &str, stage: &str, verdict: &str) {
    let last = report.lines().rfind(|l| l.starts_with("check: ["));
    assert!(
        last.is_some_and(|l| l.contains(stage) && l.ends_with(verdict)),
        "{report}"
    );
}

#[test]
fn a_broken_pass_is_blamed_by_name() {
    let (ok, report) =
        check_text("gelu.hlo", &small_gelu(), 1, passes_with_broken_flatten).unwrap();
    assert!(!ok, "{report}");
    assert_last_check_blames(&report, "flatten-tensors", "MISMATCH");
    assert!(
        report.contains(
            "error: pass 'flatten-tensors' changed (after 'canonicalize' it matched) the result \
             of fusion 'gelu': output 0 element ["
        ),
        "{report}"
    );
    // Nothing after the broken pass is reported.
    assert!(!report.contains("vectorize-loads-stores"), "{report}");
}

/// Checks the small GELU with `o3` in place of LLVM's O3 stage; the report and whether it
/// matched.
fn check_gelu_with_o3(
    o3: impl Fn(&str, &str) -> Result<String, String> + Send + Sync + 'static,
) -> (bool, String) {
    check_gelu_for("sm_90", o3)
}

/// [`check_gelu_with_o3`] for `--arch` `arch`.
fn check_gelu_for(
    arch: &str,
    o3: impl Fn(&str, &str) -> Result<String, String> + Send + Sync + 'static,
) -> (bool, String) {
    let text = small_gelu();
    let (source, module) = hlo::load("gelu.hlo", text.as_bytes()).unwrap();
    let id = emitters::fusions(&module)[0];
    let mut out = Vec::new();
    let options = CheckOptions {
        optimize: Some(Arc::new(o3)),
        arch: arch.to_string(),
        ..CheckOptions::default()
    };
    let ok = check_fusion_with(&source, &module, id, checked_passes(), &options, &mut out).unwrap();
    (ok, String::from_utf8(out).unwrap())
}

/// `--check --arch=X` interprets the O3 module built for X, by the function that builds
/// X's PTX (`codegen::ptx::compile`), where it was built for sm_90 whatever the `--arch`.
#[test]
fn the_checked_o3_module_is_built_for_the_arch() {
    for arch in ["sm_75", "sm_80", "sm_90"] {
        // (The optimizer is a `'static` function: it shares what it saw through an Arc.)
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let record = seen.clone();
        let (ok, report) = check_gelu_for(arch, move |llvm_ir, given| {
            record.lock().unwrap().push(given.to_string());
            optimize_o3(llvm_ir, given)
        });
        assert!(ok, "{arch}: {report}");
        assert_eq!(*seen.lock().unwrap(), [arch], "{arch}");
    }
}

/// Records the text of the LLVM stages of a run (`translate`, `llvm-opt`, `ptx`).
struct LlvmStages(Vec<(String, String)>);

impl Observer for LlvmStages {
    fn after(&mut self, stage: &StageDone, output: Output<'_>) -> Result<(), String> {
        if let Output::Text(text) = output {
            self.0.push((stage.name.to_string(), text.to_string()));
        }
        Ok(())
    }
}

/// One pipeline: `--check` observes the run that makes the PTX. Beside the check, in the
/// same run, a recorder sees the O3 module the check interpreted (`llvm-opt`) and the PTX
/// made from it; for sm_75, sm_80 and sm_90 they are byte for byte what a plain compile
/// for that `--arch` gives (`--stop-after=llvm-opt`, and the PTX), and the check passes.
#[test]
fn the_checked_o3_module_is_the_one_that_becomes_the_ptx() {
    let text = small_gelu();
    let (source, module) = hlo::load("gelu.hlo", text.as_bytes()).unwrap();
    let fusions = emitters::fusions(&module);
    let pipeline: Vec<String> = PASSES.iter().map(|p| p.to_string()).collect();
    for arch in ["sm_75", "sm_80", "sm_90"] {
        let what = ModuleCheck {
            reference: &module,
            fusions: &fusions,
            pipeline: &pipeline,
            whole_program: true,
        };
        let options = CheckOptions {
            arch: arch.to_string(),
            ..CheckOptions::default()
        };
        let mut recorder = LlvmStages(Vec::new());
        let mut report = Vec::new();
        let checked = check_module(
            &source,
            &module,
            &what,
            &options,
            &mut [&mut recorder],
            &mut report,
        );
        let report = String::from_utf8(report).unwrap();
        assert_eq!(checked, Ok(()), "{arch}: {report}");
        assert!(report.contains("] llvm-opt "), "{report}");
        let stages: Vec<&str> = recorder.0.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(stages, ["translate", "llvm-opt", "ptx"], "{arch}");
        let plain = |stop_after: Option<&str>| {
            let options = Options {
                arch: arch.to_string(),
                stop_after: stop_after.map(str::to_string),
                ..Options::default()
            };
            compile_text("gelu.hlo", &text, &options).unwrap().output
        };
        assert!(
            recorder.0[1].1 == plain(Some("llvm-opt")),
            "{arch}: the O3 modules differ"
        );
        assert!(recorder.0[2].1 == plain(None), "{arch}: the PTX differs");
        assert!(
            recorder.0[2].1.contains(&format!(".target {arch}")),
            "{arch}"
        );
    }
}

/// O3 broken on purpose: its output with the first float multiply turned into an add (a
/// wrong rewrite in the last stage before PTX). The check runs the optimized module and
/// blames `llvm-opt`, after `translate` matched.
#[test]
fn a_broken_llvm_stage_is_blamed_by_name() {
    let (ok, report) = check_gelu_with_o3(|llvm_ir, arch| {
        let optimized = optimize_o3(llvm_ir, arch)?;
        assert!(optimized.contains(" = fmul "), "{optimized}");
        Ok(optimized.replacen(" = fmul ", " = fadd ", 1))
    });
    assert!(!ok, "{report}");
    assert!(report.contains("[19] translate"), "{report}");
    assert_last_check_blames(&report, "llvm-opt", "MISMATCH");
    assert!(
        report.contains(
            "error: LLVM's O3 with libdevice ('llvm-opt') changed (after 'translate' it matched) \
             the result of fusion 'gelu': output 0 element ["
        ),
        "{report}"
    );
    assert!(report.contains("(bound: absolute"), "{report}");
}

/// The O3 module with its first store changed by `edit` (given the store's line, returns
/// the lines to put in its place).
fn o3_with_first_store(
    llvm_ir: &str,
    arch: &str,
    edit: fn(&str) -> String,
) -> Result<String, String> {
    let optimized = optimize_o3(llvm_ir, arch)?;
    let store = optimized
        .lines()
        .find(|l| l.trim_start().starts_with("store "))
        .unwrap_or_else(|| panic!("no store in\n{optimized}"))
        .to_owned();
    Ok(optimized.replacen(&store, &edit(&store), 1))
}

/// Outputs right in value but not written exactly once: O3's output with its first store
/// repeated (every element it covers written twice, with the right value) or dropped
/// (elements never written). Both break the one-writer rule and are blamed on `llvm-opt`.
#[test]
fn an_element_written_twice_or_never_is_caught() {
    let (ok, report) = check_gelu_with_o3(|ir, arch| {
        o3_with_first_store(ir, arch, |store| format!("{store}\n{store}"))
    });
    assert!(!ok, "{report}");
    assert!(
        report.contains(
            "error: LLVM's O3 with libdevice ('llvm-opt') changed (after 'translate' it matched) \
             the writes of fusion 'gelu': output 0 element "
        ) && report
            .contains("is written 2 times: every output element must be written exactly once"),
        "{report}"
    );
    let (ok, report) =
        check_gelu_with_o3(|ir, arch| o3_with_first_store(ir, arch, |_| String::new()));
    assert!(!ok, "{report}");
    assert!(
        report.contains("is never written: every output element must be written exactly once"),
        "{report}"
    );
    assert_last_check_blames(&report, "llvm-opt", "NOT WRITTEN ONCE");
}

/// Smaller shapes for the models whose full size takes the interpreter too long in a debug
/// test build: per file, `(from, to)` replacements of its text. A model that is not listed
/// runs at full size. The small shapes keep what the full ones exercise: vector factors,
/// partial transpose tiles (80 = 2.5 tiles of 32), the kind of transpose.
const SMALLER_MODELS: &[(&str, &[(&str, &str)])] = &[
    ("gelu.hlo", &[("6,512,4096", "2,64,16")]),
    (
        "transpose_021_bf16.hlo",
        &[("16,1024,2048", "2,80,96"), ("16,2048,1024", "2,96,80")],
    ),
    ("transpose_021_f32.hlo", &[("32,1024,1024", "2,80,80")]),
    (
        "transpose_102_f32.hlo",
        &[("1024,32,1024", "80,4,48"), ("32,1024,1024", "4,80,48")],
    ),
    ("transpose_210_bf16.hlo", &[("1024,32,1024", "80,4,80")]),
    (
        "transpose_102_bf16.hlo",
        &[("2048,256,4", "80,40,4"), ("256,2048,4", "40,80,4")],
    ),
    ("transpose_210_f32.hlo", &[("512,16,512", "80,3,80")]),
];

#[test]
fn every_model_matches_the_evaluator_after_every_pass() {
    let mut reports = String::new();
    for path in testkit::hlo_files(testkit::testdata("models")) {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let mut text = std::fs::read_to_string(&path).unwrap();
        for (file, replacements) in SMALLER_MODELS {
            if *file == name {
                for (from, to) in *replacements {
                    text = text.replace(from, to);
                }
            }
        }
        let (ok, report) =
            check_text(&name, &text, 1, checked_passes).unwrap_or_else(|e| panic!("{e}"));
        assert!(ok, "{name}:\n{report}");
        reports.push_str(&report);
    }
    assert!(reports.contains("fusion 'gelu"), "{reports}");
}

/// Corpus files checked at smaller shapes, with why: at full size they take minutes (in the
/// test profile) to hours in the interpreter (about 50M interpreted ops/s; `large_loop_slow_compile_time` is ~16,000 ops
/// per element on 1.6M elements, 500 s per stage). The replacements keep each file's
/// structure and emitter (the loop emitter, multi-output for `mof_reshapes`; the small column reduction, whose plan depends
/// on the reduced and minor sizes kept here; the transpose emitter with one shared-memory
/// transpose among several roots, unvectorized at these sizes).
/// Text replacements: (what, with what).
type Replacements = &'static [(&'static str, &'static str)];

const SMALLER_CORPUS: &[(&str, Replacements, &str)] = &[
    (
        "loop/large_loop_slow_compile_time.hlo",
        &[("1280,1280", "8,8"), ("[1280]", "[8]")],
        "1.6M output elements of a 16,000-op expression",
    ),
    (
        "loop/mof_reshapes.hlo",
        &[("8192", "1024")],
        "46 outputs, each element through a chain of calls: 25 s in release at full size",
    ),
    (
        "reduce_column_small/f32_32_v2.hlo",
        &[("10240,72,32", "20,72,32"), ("10240,32", "20,32")],
        "23.6M input elements",
    ),
    (
        "transpose/multiple_roots_one_shmem_transpose.hlo",
        &[
            ("22,512,16,256", "2,128,16,64"),
            ("22,512,4096", "2,128,1024"),
            ("22,16,512,256", "2,16,128,64"),
            ("22,4096,512", "2,1024,128"),
        ],
        "1.4M threads",
    ),
];

#[test]
fn every_corpus_file_that_compiles_matches_the_evaluator() {
    let corpus = testkit::corpus_dir();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let (mut checked, mut refused) = (0, 0);
    let mut failures = Vec::new();
    for dir in dirs {
        for path in testkit::hlo_files(&dir) {
            let name = path
                .strip_prefix(&corpus)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let mut text = std::fs::read_to_string(&path).unwrap();
            if let Some((_, replacements, _)) = SMALLER_CORPUS.iter().find(|(f, ..)| *f == name) {
                for (from, to) in *replacements {
                    assert!(text.contains(from), "{name}: no '{from}'");
                    text = text.replace(from, to);
                }
            }
            match check_text(&name, &text, 1, checked_passes) {
                Ok((true, _)) => checked += 1,
                Ok((false, report)) => failures.push(format!("{name}:\n{report}")),
                // Refused by the emitters or a pass (listed in docs/tests.md): not a file that
                // compiles.
                Err(_) => refused += 1,
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("--check passed on {checked} corpus files; {refused} refused");
    assert!(checked >= 76, "only {checked} corpus files checked");
}

/// The whole-program check runs the kernels in launch order against the evaluator on the
/// module as written: it passes on the unfused layer norm, and fails (naming the result
/// and the element) when the module it compares with is not the one that was fused, as
/// when the fusion pipeline changes what a program computes.
#[test]
fn the_whole_program_check_catches_a_wrong_fusion() {
    let path = testkit::testdata("jax/layer_norm.hlo");
    let text = std::fs::read_to_string(&path).unwrap();
    let (source, unfused) = hlo::load("layer_norm.hlo", text.as_bytes()).unwrap();
    let mut fused = unfused.clone();
    driver::pipeline::fuse(&source, &mut fused).unwrap();
    let (result, report) = check_program(&source, &unfused, &fused);
    assert!(result.is_ok(), "{report}");
    assert!(
        report.contains("\ncheck: program: 1 kernel launch"),
        "{report}"
    );
    // The same program, but the centred input is scaled by 2 before normalising: the
    // fused kernels (of the original) no longer compute what it says.
    let changed = text.replace("sub.15 = f32[16,256]{1,0} subtract(x.1, sub.14)",
        "sub.15a = f32[16,256]{1,0} subtract(x.1, sub.14)\n  sub.15 = f32[16,256]{1,0} add(sub.15a, sub.15a)");
    assert_ne!(changed, text);
    let (_, other) = hlo::load("layer_norm.hlo", changed.as_bytes()).unwrap();
    let (result, report) = check_program(&source, &other, &fused);
    assert_eq!(
        result,
        Err("error: --check failed for the program as a whole".to_string()),
        "{report}"
    );
    assert!(report.contains("MISMATCH"), "{report}");
    assert!(
        report.contains("error: the program's result 0 ('add.9') element ["),
        "{report}"
    );
}

/// `--check` on `fused` with the whole program compared with the evaluator on `reference`:
/// the result and the report.
fn check_program(
    source: &hlo::SourceFile,
    reference: &hlo::HloModule,
    fused: &hlo::HloModule,
) -> (Result<(), String>, String) {
    let fusions = emitters::fusions(fused);
    let pipeline: Vec<String> = PASSES.iter().map(|p| p.to_string()).collect();
    let what = ModuleCheck {
        reference,
        fusions: &fusions,
        pipeline: &pipeline,
        whole_program: true,
    };
    let mut report = Vec::new();
    let options = CheckOptions::default();
    let result = check_module(source, fused, &what, &options, &mut [], &mut report);
    (result, String::from_utf8(report).unwrap())
}
