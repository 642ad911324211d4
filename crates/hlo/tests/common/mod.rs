//! Where the tests find HLO inputs: the project's `testdata/` and XLA's corpus in
//! `../shared/xla-corpus`, which is read in place and never copied into the project.

use std::path::{Path, PathBuf};

pub fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn corpus_dir() -> PathBuf {
    project_root().join("../shared/xla-corpus")
}

/// Every `.hlo` file below `dirs`, sorted.
pub fn hlo_files(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = dirs.to_vec();
    while let Some(dir) = pending.pop() {
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("readable directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "hlo") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}
