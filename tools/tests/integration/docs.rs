//! The documents say what the code does: the README's pipeline line is the pipeline's pass
//! list, and no document or doc comment points at a file outside the repository (the
//! design brief the project started from) but XLA's tests, which the tests read from
//! `../shared`.

use std::path::PathBuf;

/// The README, every file of `docs/`, and the sources' doc comments (every `.rs` and `.md`
/// file of the crates, the passes and the tools).
fn documents() -> Vec<(PathBuf, String)> {
    let root = testkit::project_root();
    let mut files = vec![root.join("README.md")];
    files.extend(testkit::files_ending(&[root.join("docs")], &[".md"]));
    files.extend(testkit::files_ending(
        &[
            root.join("crates"),
            root.join("passes"),
            root.join("tools/src"),
        ],
        &[".rs", ".md"],
    ));
    files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{f:?}: {e}"));
            (f, text)
        })
        .collect()
}

#[test]
fn the_readme_pipeline_line_is_the_pass_list() {
    let readme = std::fs::read_to_string(testkit::project_root().join("README.md")).unwrap();
    let line = readme
        .split("The pipeline (`crates/driver/src/pipeline.rs`, `PASSES`): emit → ")
        .nth(1)
        .expect("the README has its pipeline line")
        .split(" → LLVM IR")
        .next()
        .unwrap();
    let listed: Vec<&str> = line.split('`').skip(1).step_by(2).collect();
    assert_eq!(listed, driver::pipeline::PASSES, "README.md: {line}");
}

#[test]
fn no_document_points_outside_the_repository() {
    for (file, text) in documents() {
        for (n, line) in text.lines().enumerate() {
            let outside = line.contains("DESIGN.md")
                || line.contains("DESIGN §")
                || (line.contains("../shared/")
                    && !line.contains("../shared/xla-corpus")
                    && !line.contains("../shared/xla-pass-tests"));
            assert!(!outside, "{}:{}: {line}", file.display(), n + 1);
        }
    }
}
