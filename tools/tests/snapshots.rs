//! Whole-output snapshots: `hlo-emit` on every model in `testdata/models`, stored in
//! `testdata/snapshots`. Bless changed output with `INSTA_UPDATE=always cargo test` (or
//! `cargo insta review`), then read the diff before committing it.

use std::path::Path;
use std::process::Command;

fn hlo_emit(path: &Path, emit: &str) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_hlo-emit"))
        .arg(path)
        .arg(format!("--emit={emit}"))
        .output()
        .expect("hlo-emit runs");
    assert!(
        output.status.success(),
        "hlo-emit {} --emit={emit} failed:\n{}",
        path.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("hlo-emit prints UTF-8")
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
fn models_print_as_hlo() {
    for (name, path) in models() {
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path("../../testdata/snapshots");
        settings.set_prepend_module_to_snapshot(false);
        settings.set_input_file(&path);
        settings.bind(|| insta::assert_snapshot!(format!("{name}.hlo"), hlo_emit(&path, "hlo")));
    }
}
