//! The JAX corpus (`testdata/jax`, written by `tools/jax-corpus`): everyday JAX functions as
//! XLA prints them after its passes (`NAME.xla.hlo`) and unfused, as a user has them before
//! XLA's passes (`NAME.hlo`).
//!
//! * Every XLA-printed module parses (stack-frame tables, schedules, metadata,
//!   backend_config), and every module of both forms passes `--check` through every stage,
//!   each of its fusions against the evaluator, and as a whole program (its kernels run in
//!   launch order against the evaluator on the module as written: for the unfused form,
//!   before the fusion pipeline, which is checked too). (`deliverable.rs` feeds their output to
//!   ptxas, llvm-as and mlir-opt.)
//! * The unfused modules go through the fusion pipeline (calls inlined, gathers made
//!   canonical, then fused after XLA:GPU's rules) and ptxas accepts them.
//! * The fusion pass makes each reduce a hero, and the emitters take it so: no unfused
//!   module becomes a loop kernel that recomputes a reduction per element
//!   (`reductions_are_never_recomputed`).

use std::path::Path;
use std::process::Command;

const HLO_EMIT: &str = env!("CARGO_BIN_EXE_hlo-emit");

fn stem(path: &Path) -> &str {
    let name = path.file_name().unwrap().to_str().unwrap();
    name.strip_suffix(".xla.hlo")
        .or_else(|| name.strip_suffix(".hlo"))
        .unwrap()
}

fn is_xla_printed(path: &Path) -> bool {
    path.to_str().unwrap().ends_with(".xla.hlo")
}

fn hlo_emit(args: &[&str]) -> (bool, String) {
    let out = Command::new(HLO_EMIT).args(args).output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

#[test]
fn the_corpus_has_both_forms_of_every_function() {
    let files = testkit::hlo_files(testkit::testdata("jax"));
    let printed: Vec<&str> = files
        .iter()
        .filter(|p| is_xla_printed(p))
        .map(|p| stem(p))
        .collect();
    let unfused: Vec<&str> = files
        .iter()
        .filter(|p| !is_xla_printed(p))
        .map(|p| stem(p))
        .collect();
    assert_eq!(printed, unfused);
    assert!(printed.len() >= 20, "only {} functions", printed.len());
}

#[test]
fn every_module_passes_check_through_every_stage() {
    let files = testkit::hlo_files(testkit::testdata("jax"));
    let mut failures = Vec::new();
    for path in &files {
        let (ok, text) = hlo_emit(&[path.to_str().unwrap(), "--check", "-o", "/dev/null"]);
        let fusions = text.matches("every stage matches the evaluator").count();
        // A printed module XLA:CPU made no fusion in (a lone sort) is fused like an
        // unfused one.
        let text_of_module = std::fs::read(path).unwrap();
        let (_, module) = hlo::load(&path.display().to_string(), &text_of_module[..]).unwrap();
        let against = if is_xla_printed(path) && !fusion::wants_fusion(&module) {
            "against the evaluator on the ENTRY"
        } else {
            "against the evaluator on the unfused module"
        };
        let whole = text.lines().any(|l| {
            l.starts_with("check: program: ") && l.contains(against) && l.ends_with(": ok")
        });
        if !ok || fusions == 0 || !whole {
            failures.push(format!("{}:\n{text}", path.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn unfused_modules_compile_and_ptxas_accepts_them() {
    let scratch = tempfile::tempdir().unwrap();
    let ptx = scratch.path().join("k.ptx");
    let ptx = ptx.to_str().unwrap();
    let ptxas = codegen::toolchain::ptxas().unwrap();
    let mut failures = Vec::new();
    for path in testkit::hlo_files(testkit::testdata("jax"))
        .iter()
        .filter(|p| !is_xla_printed(p))
    {
        let (ok, text) = hlo_emit(&[path.to_str().unwrap(), "-o", ptx]);
        if !ok {
            failures.push(format!("{}:\n{text}", path.display()));
            continue;
        }
        let out = Command::new(&ptxas)
            .args(["-arch=sm_90", ptx, "-o", "/dev/null"])
            .output()
            .unwrap();
        if !out.status.success() {
            let why = String::from_utf8_lossy(&out.stderr).into_owned();
            failures.push(format!("{}: ptxas rejects the PTX:\n{why}", path.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Every unfused module with a reduce compiles to several kernels: each reduce is in a
/// reduction fusion (`kInput`), never in a loop fusion that would recompute it per element,
/// as XLA:GPU launches them (sibling reductions may share one).
#[test]
fn reductions_are_never_recomputed() {
    let mut failures = Vec::new();
    for path in testkit::hlo_files(testkit::testdata("jax"))
        .iter()
        .filter(|p| !is_xla_printed(p))
    {
        let (ok, text) = hlo_emit(&[path.to_str().unwrap(), "--emit=hlo"]);
        assert!(ok, "{}: {text}", path.display());
        let reduces = text.matches(" reduce(").count();
        let input_fusions = text.matches("kind=kInput").count();
        // The computations that loop fusions call, and whether one of them reduces.
        let loop_reduces = text
            .split("kind=kLoop, calls=")
            .skip(1)
            .filter_map(|rest| rest.split(|c: char| c.is_whitespace() || c == ',').next())
            .any(|name| {
                text.split(&format!("\n{name} {{\n"))
                    .nth(1)
                    .and_then(|body| body.split("\n}").next())
                    .is_some_and(|body| body.contains(" reduce("))
            });
        if (reduces > 0 && input_fusions == 0) || input_fusions > reduces || loop_reduces {
            failures.push(format!(
                "{}: {reduces} reduces, {input_fusions} reduction fusions, a loop fusion reduces: {loop_reduces}:\n{text}",
                path.display()
            ));
        }
        // And the emitters agree: a fusion with a reduce is never left to the loop emitter
        // (logsumexp's `log(sum) + max` epilogue once was, a thread summing a whole row).
        let (ok, ir) = hlo_emit(&[path.to_str().unwrap(), "--emit=xla-gpu"]);
        assert!(ok, "{}: {ir}", path.display());
        for line in ir
            .lines()
            .filter(|l| l.contains(": kernel ") && l.contains(", loop emitter"))
        {
            let name = line
                .trim_start_matches("// fusion ")
                .split(':')
                .next()
                .unwrap();
            let body = text
                .split(&format!("\n{name} {{\n"))
                .nth(1)
                .and_then(|body| body.split("\n}").next())
                .unwrap_or_else(|| panic!("{}: no fusion '{name}' in:\n{text}", path.display()));
            if body.contains(" reduce(") {
                failures.push(format!("{}: {line}", path.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
