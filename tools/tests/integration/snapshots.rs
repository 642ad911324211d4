//! Whole-output snapshots: `hlo-emit --dump-after-each-pass` on every model in
//! `testdata/models` (every stage from the emitted `xla_gpu` module to PTX), stored in
//! `testdata/snapshots`. Bless changed output with `INSTA_UPDATE=always cargo test` (or
//! `cargo insta review`), then read the diff before committing it.

use std::path::Path;
use std::process::Command;

/// `hlo-emit <path> <args>`: the dumps (standard error), then the output.
fn hlo_emit(path: &Path, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_hlo-emit"))
        .arg(path)
        .args(args)
        .output()
        .expect("hlo-emit runs");
    let stderr = String::from_utf8(output.stderr).expect("hlo-emit prints UTF-8");
    assert!(
        output.status.success(),
        "hlo-emit {} {args:?} failed:\n{stderr}",
        path.display(),
    );
    stderr + &String::from_utf8(output.stdout).expect("hlo-emit prints UTF-8")
}

/// The models, sorted, with the project-relative name the snapshots use.
fn models() -> Vec<(String, std::path::PathBuf)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/models");
    let mut models: Vec<_> = std::fs::read_dir(&dir)
        .expect("testdata/models exists")
        .map(|e| e.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "hlo"))
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    models.sort();
    assert!(!models.is_empty(), "no models in {}", dir.display());
    models
}

#[test]
fn models_compile_with_every_stage_dumped() {
    for (name, path) in models() {
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path("../../../testdata/snapshots");
        settings.set_prepend_module_to_snapshot(false);
        settings.set_input_file(&path);
        let output = hlo_emit(&path, &["--dump-after-each-pass"]);
        settings.bind(|| insta::assert_snapshot!(format!("{name}.pipeline"), output));
    }
}
