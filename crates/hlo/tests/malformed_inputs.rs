//! Bad input never panics and always gets a located error.
//!
//! Every `.hlo` under `testdata/` and `../shared/xla-corpus/` is truncated and byte-mutated
//! (seeded, so every run sees the same thousands of inputs) and fed to `hlo::load`, the
//! front door of the tools. Each input must either load, or fail with an error of the form
//! `name:line:col: error: ...` whose line and column exist in the input, followed by the
//! source line and a caret.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

mod common;

/// Variants per file; the large corpus file gets fewer so the test stays quick.
const VARIANTS_PER_FILE: usize = 48;
const VARIANTS_PER_LARGE_FILE: usize = 8;
const LARGE_FILE_BYTES: usize = 100_000;
const SEED: u64 = 0x5eed_c0de;

/// Bytes that matter to the HLO grammar, so mutations hit interesting paths more often
/// than uniformly random bytes would; random bytes (invalid UTF-8 included) are mixed in.
const GRAMMAR_BYTES: &[u8] = b"{}[]()=,:%*-_x.0123456789 \n\"/TELS?<>fsuepredROOTENTRY";

fn hlo_files() -> Vec<PathBuf> {
    common::hlo_files(&[
        common::project_root().join("testdata"),
        common::corpus_dir(),
    ])
}

/// One mutation of `original`: a truncation, a replaced, deleted or inserted byte, or a
/// duplicated slice.
fn mutate(rng: &mut fastrand::Rng, original: &[u8]) -> Vec<u8> {
    let mut bytes = original.to_vec();
    let at = rng.usize(0..=bytes.len());
    let random_byte = |rng: &mut fastrand::Rng| {
        if rng.bool() {
            GRAMMAR_BYTES[rng.usize(0..GRAMMAR_BYTES.len())]
        } else {
            rng.u8(..)
        }
    };
    match rng.u8(0..5) {
        0 => bytes.truncate(at),
        1 if at < bytes.len() => bytes[at] = random_byte(rng),
        2 if at < bytes.len() => {
            bytes.remove(at);
        }
        3 => {
            let end = rng.usize(at..=bytes.len().min(at + 40));
            let slice = bytes[at..end].to_vec();
            let to = rng.usize(0..=bytes.len());
            bytes.splice(to..to, slice);
        }
        _ => bytes.insert(at, random_byte(rng)),
    }
    bytes
}

/// Checks the shape of a rendered error: `name:line:col: error: message`, then the line
/// and a caret line, with the position inside the input.
fn check_error(name: &str, input: &[u8], rendered: &str) -> Result<(), String> {
    let first = rendered.lines().next().unwrap_or("");
    let rest = first
        .strip_prefix(name)
        .and_then(|r| r.strip_prefix(':'))
        .ok_or_else(|| format!("error does not start with the file name: {first}"))?;
    let mut parts = rest.splitn(3, ':');
    let line: usize = parts.next().and_then(|l| l.parse().ok()).ok_or("no line")?;
    let col: usize = parts
        .next()
        .and_then(|c| c.parse().ok())
        .ok_or("no column")?;
    if !parts.next().is_some_and(|m| m.starts_with(" error: ")) {
        return Err(format!("no 'error:' after the location: {first}"));
    }
    let text = String::from_utf8_lossy(input);
    let line_count = text.split('\n').count();
    if line == 0 || line > line_count || col == 0 {
        return Err(format!(
            "location {line}:{col} is outside the input: {first}"
        ));
    }
    let source_line = text.split('\n').nth(line - 1).unwrap_or("");
    if col > source_line.chars().count() + 1 {
        return Err(format!(
            "column {col} is past the end of line {line}: {first}"
        ));
    }
    if rendered.lines().count() < 3
        || !rendered.lines().nth(2).unwrap().ends_with('^')
            && !rendered.lines().nth(2).unwrap().contains("^~")
    {
        return Err(format!("no caret line:\n{rendered}"));
    }
    Ok(())
}

fn load_checked(name: &str, input: &[u8]) -> Result<bool, String> {
    match catch_unwind(AssertUnwindSafe(|| hlo::load(name, input))) {
        Err(_) => Err(format!(
            "panic on input:\n{}",
            String::from_utf8_lossy(&input[..input.len().min(2000)])
        )),
        Ok(Ok(_)) => Ok(true),
        Ok(Err(rendered)) => check_error(name, input, &rendered)
            .map(|()| false)
            .map_err(|e| {
                format!(
                    "{e}\ninput:\n{}",
                    String::from_utf8_lossy(&input[..input.len().min(2000)])
                )
            }),
    }
}

#[test]
fn mutated_files_never_panic_and_errors_are_located() {
    let files = hlo_files();
    assert!(
        files.len() >= 90,
        "expected testdata and the corpus, found {}",
        files.len()
    );
    let mut rng = fastrand::Rng::with_seed(SEED);
    let (mut inputs, mut rejected) = (0usize, 0usize);
    let mut failures = Vec::new();
    for path in &files {
        let original = std::fs::read(path).unwrap();
        let variants = if original.len() > LARGE_FILE_BYTES {
            VARIANTS_PER_LARGE_FILE
        } else {
            VARIANTS_PER_FILE
        };
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for _ in 0..variants {
            let input = mutate(&mut rng, &original);
            inputs += 1;
            match load_checked(&name, &input) {
                Ok(loaded) => rejected += usize::from(!loaded),
                Err(e) => failures.push(format!("{}: {e}", path.display())),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures, first:\n{}",
        failures.len(),
        failures[0]
    );
    assert!(inputs >= 4000, "only {inputs} inputs");
    // Most mutations break the module; if almost none are rejected the test is not probing.
    assert!(
        rejected * 2 > inputs,
        "only {rejected} of {inputs} inputs were rejected"
    );
}

#[test]
fn every_truncation_of_a_small_module_is_located() {
    let text = "HloModule m, entry_computation_layout={(f32[3,5]{1,0:T(2,2)})->f32[3]}\n\
                add { x = f32[] parameter(0) y = f32[] parameter(1) ROOT s = f32[] add(x, y) }\n\
                ENTRY e {\n  p = f32[3,5]{1,0:T(2,2)} parameter(0)\n  c = f32[] constant(-inf)\n\
                  ROOT r = f32[3] reduce(p, c), dimensions={1}, to_apply=add, metadata={op_name=\"r\"}\n}\n";
    assert!(load_checked("t.hlo", text.as_bytes()).unwrap());
    for end in 0..text.len() - 2 {
        load_checked("t.hlo", &text.as_bytes()[..end]).unwrap();
    }
}

#[test]
fn hostile_nesting_is_an_error_not_a_crash() {
    for input in [
        format!("c {{ ROOT x = {}f32[]", "(".repeat(100_000)),
        format!(
            "c {{ ROOT x = f32[{}] constant({})",
            "1,".repeat(5_000) + "1",
            "{".repeat(5_000)
        ),
        format!(
            "c {{ ROOT x = f32[] parameter(0), sharding={}",
            "{".repeat(100_000)
        ),
    ] {
        assert!(!load_checked("t.hlo", input.as_bytes()).unwrap());
    }
}
