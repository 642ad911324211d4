//! What the workspace's tests share: where their inputs are, the lists of them, and the
//! scalar computations (reducers) their HLO texts start with.
//!
//! Inputs live in the project's `testdata/` and in XLA's corpus, `../shared/xla-corpus`,
//! which is read in place and never copied into the project. Every list is sorted, so a
//! test's order and its failure messages are the same on every machine.

use std::path::{Path, PathBuf};

/// Declares each scalar computation of the tests' reductions as a macro that expands to
/// its HLO text, a string literal, so that a test's HLO text (a `const` too) can start with
/// it: `concat!(testkit::add_f32!(), "fusion {..}")`.
macro_rules! scalar_computations {
    ($($(#[$doc:meta])* $name:ident => $text:literal;)*) => {$(
        $(#[$doc])*
        #[macro_export]
        macro_rules! $name {
            () => {
                $text
            };
        }
    )*};
}

scalar_computations! {
    /// `argmax` of variadic reductions over (value, index) pairs: the strictly larger value
    /// and its index win, so the first of equal values stays.
    argmax => "argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(bv, av), direction=GT
  v = f32[] select(gt, bv, av)
  i = s32[] select(gt, bi, ai)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
";
    /// `add` of f32 reductions.
    add_f32 => "add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
";
    /// `horner` of s32 reductions, `acc * 10 + x`: not commutative, so its result spells
    /// the elements in the order they were combined.
    horner => "horner {
  a = s32[] parameter(0)
  x = s32[] parameter(1)
  ten = s32[] constant(10)
  m = s32[] multiply(a, ten)
  ROOT s = s32[] add(m, x)
}
";
    /// `add2` of variadic reductions over (f32, s32) pairs: each part is added on its own.
    add2 => "add2 {
  x0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  x1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  a = f32[] add(x0, x1)
  b = s32[] add(i0, i1)
  ROOT t = (f32[], s32[]) tuple(a, b)
}
";
}

/// The workspace's root (the folder holding `Cargo.toml` and `testdata/`).
pub fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `testdata/<relative>` of the project.
pub fn testdata(relative: &str) -> PathBuf {
    project_root().join("testdata").join(relative)
}

/// XLA's emitter-test corpus, beside the project.
pub fn corpus_dir() -> PathBuf {
    project_root().join("../shared/xla-corpus")
}

/// Every `.hlo` file of the corpus folders `folders` (all of the corpus for `&[]`), sorted.
pub fn corpus(folders: &[&str]) -> Vec<PathBuf> {
    if folders.is_empty() {
        return hlo_files(corpus_dir());
    }
    let dirs: Vec<PathBuf> = folders.iter().map(|f| corpus_dir().join(f)).collect();
    files_ending(&dirs, &[".hlo"])
}

/// Runs `check` on every file of `files` and holds each to `known_failures` (file name, a
/// part of its error): a listed file must fail for its reason, every other file pass, so
/// a file that starts passing makes the list (and docs/tests.md, which quotes it) change too.
/// Returns how many passed.
pub fn check_files(
    files: &[PathBuf],
    known_failures: &[(&str, &str)],
    mut check: impl FnMut(&Path) -> Result<(), String>,
) -> usize {
    let mut passed = 0;
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let expected = known_failures.iter().find(|(f, _)| *f == name);
        match (check(path), expected) {
            (Ok(()), None) => passed += 1,
            (Err(e), Some((_, why))) => assert!(e.contains(why), "{name}: {e}"),
            (Ok(()), Some(_)) => panic!("{name} now passes: update the list and docs/tests.md"),
            (Err(e), None) => panic!("{name}: {e}"),
        }
    }
    passed
}

/// Every `.hlo` file below `dir`, recursively, sorted.
pub fn hlo_files(dir: impl AsRef<Path>) -> Vec<PathBuf> {
    files_ending(&[dir.as_ref().to_path_buf()], &[".hlo"])
}

/// Every file below `dirs`, recursively, whose name ends in one of `endings`, sorted. A folder that
/// cannot be read fails the test: a missing corpus must not pass as an empty one.
pub fn files_ending(dirs: &[PathBuf], endings: &[&str]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = dirs.to_vec();
    while let Some(dir) = pending.pop() {
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("a readable folder entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if endings.iter().any(|e| path.to_string_lossy().ends_with(e)) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}
