//! What a user gets is valid for the tool that reads it next: for every model and every
//! corpus file that compiles (modules of several fusions included), `hlo-emit` writes one
//! file per `--emit`, and
//!
//! * `--emit=ptx` (for sm_80 and for sm_90) is one module that `ptxas` assembles for that
//!   architecture, with one `.entry` per fusion, named after it, and a launch comment each;
//! * `--emit=llvm` is one module that LLVM 22's `llvm-as` and `opt -passes=verify` accept;
//! * `--emit=mlir` is one module that `mlir-opt` accepts;
//! * `--launch-json` is one JSON document listing every kernel.
//!
//! Files the emitters refuse (docs/tests.md lists them) are skipped here: other tests check
//! that they are refused and why (`jax_corpus.rs` for the unfused JAX modules).

use std::path::Path;
use std::process::Command;

/// Runs `program args`; `Err` with its output when it fails.
fn run(program: &Path, args: &[&str]) -> Result<String, String> {
    let output = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    if output.status.success() {
        Ok(text)
    } else {
        Err(format!("{} {args:?} failed:\n{text}", program.display()))
    }
}

/// The fusions of `path` as `hlo-emit` names their kernels, or `None` when the emitters
/// refuse the file.
fn kernels(path: &Path) -> Option<Vec<String>> {
    let text = std::fs::read(path).unwrap();
    let (source, mut module) = hlo::load(&path.display().to_string(), &text[..]).ok()?;
    if fusion::wants_fusion(&module) {
        driver::pipeline::fuse(&source, &mut module).ok()?;
    } else {
        driver::pipeline::outline(&source, &mut module).ok()?;
    }
    let names = emitters::kernel_names(&module, emitters::Choices::Tuned);
    let fusions = emitters::fusions(&module);
    for &id in &fusions {
        emitters::emit_fusion(&module, id).ok()?;
    }
    Some(fusions.iter().map(|id| names[id].clone()).collect())
}

/// Checks every output file of `path`; `Ok(false)` when the emitters refuse it.
fn check_outputs(path: &Path, scratch: &Path) -> Result<bool, String> {
    let Some(kernels) = kernels(path) else {
        return Ok(false);
    };
    let hlo_emit = Path::new(env!("CARGO_BIN_EXE_hlo-emit"));
    let input = path.to_str().unwrap();
    let out = |name: &str| scratch.join(name).to_str().unwrap().to_string();
    let ptxas = codegen::toolchain::ptxas().map_err(|e| e.to_string())?;
    for arch in ["sm_80", "sm_90"] {
        let (ptx, json) = (out("k.ptx"), out("launch.json"));
        let args = [input, "--arch", arch, "-o", &ptx, "--launch-json", &json];
        run(hlo_emit, &args)?;
        run(
            &ptxas,
            &[&format!("-arch={arch}"), &ptx, "-o", &out("k.cubin")],
        )?;
        let text = std::fs::read_to_string(&ptx).unwrap();
        let launches: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap())
                .map_err(|e| format!("{}: --launch-json is not JSON: {e}", path.display()))?;
        for (k, kernel) in kernels.iter().enumerate() {
            if text.matches(&format!(".entry {kernel}(")).count() != 1 {
                return Err(format!("{}: no single entry {kernel}", path.display()));
            }
            if !text.contains(&format!("// hlo-emit: kernel {kernel} of fusion ")) {
                return Err(format!(
                    "{}: no launch comment for {kernel}",
                    path.display()
                ));
            }
            if launches["kernels"][k]["kernel"] != kernel.as_str() {
                return Err(format!("{}: --launch-json: {launches}", path.display()));
            }
        }
        if text.matches(".entry ").count() != kernels.len() {
            return Err(format!("{}: more entries than fusions", path.display()));
        }
    }
    let ll = out("k.ll");
    run(hlo_emit, &[input, "--emit=llvm", "-o", &ll])?;
    let llvm_as = codegen::toolchain::llvm_tool("llvm-as").map_err(|e| e.to_string())?;
    run(&llvm_as, &[&ll, "-o", "/dev/null"])?;
    let opt = codegen::toolchain::llvm_tool("opt").map_err(|e| e.to_string())?;
    run(&opt, &["-passes=verify", "-disable-output", &ll])?;
    let mlir = out("k.mlir");
    run(hlo_emit, &[input, "--emit=mlir", "-o", &mlir])?;
    let mlir_opt = codegen::toolchain::mlir_opt().map_err(|e| e.to_string())?;
    run(&mlir_opt, &[&mlir, "-o", "/dev/null"])?;
    Ok(true)
}

#[test]
fn every_output_file_is_valid_for_the_next_tool() {
    let scratch = tempfile::tempdir().unwrap();
    let mut files = testkit::hlo_files(testkit::testdata("models"));
    files.extend(testkit::corpus(&[]));
    files.extend(testkit::hlo_files(testkit::testdata("jax")));
    let (mut checked, mut several) = (0, 0);
    let mut failures = Vec::new();
    for path in &files {
        match check_outputs(path, scratch.path()) {
            Ok(true) => {
                checked += 1;
                several += usize::from(kernels(path).is_some_and(|k| k.len() > 1));
            }
            Ok(false) => {}
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    eprintln!("{checked} inputs, {several} of them with several kernels");
    // The 10 models, the 67 corpus files that compile and the JAX corpus's 25 XLA-printed
    // and 25 unfused modules; softmax, layer norm and most JAX modules have several
    // kernels.
    assert!(checked >= 127, "only {checked} inputs checked");
    assert!(several >= 2, "only {several} inputs with several kernels");
}
