//! Byte-level fuzzing of the text readers, bounded and in process so that it runs in every
//! test run (`tests/readers.rs`; the `fuzz/` targets run the same readers under libFuzzer
//! for as long as one wants).
//!
//! Inputs are seeded mutations of real files (so every run sees the same inputs and a
//! failure can be replayed): truncations, replaced, deleted and inserted bytes, duplicated
//! slices, one to four at a time, biased towards the bytes of the reader's grammar. Each
//! input goes to the reader under `catch_unwind`: a panic is a failure, and so is an error
//! that is not located inside the input.

pub mod oracle;
pub mod programs;
pub mod readers;

use std::panic::{AssertUnwindSafe, catch_unwind};

/// One mutation of `bytes` in place.
fn mutate_once(rng: &mut fastrand::Rng, bytes: &mut Vec<u8>, grammar: &[u8]) {
    let at = rng.usize(0..=bytes.len());
    let random_byte = |rng: &mut fastrand::Rng| {
        if rng.bool() && !grammar.is_empty() {
            grammar[rng.usize(0..grammar.len())]
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
}

/// `original` with one to four mutations: a truncation, a replaced, deleted or inserted
/// byte (half of them from `grammar`, the bytes that matter to the reader), or a
/// duplicated slice.
pub fn mutate(rng: &mut fastrand::Rng, original: &[u8], grammar: &[u8]) -> Vec<u8> {
    let mut bytes = original.to_vec();
    for _ in 0..rng.usize(1..=4) {
        mutate_once(rng, &mut bytes, grammar);
    }
    bytes
}

/// Checks a rendered error: `name:line:col: error: message`, then the source line and a
/// caret line, with the position inside `input`.
pub fn check_located(name: &str, input: &[u8], rendered: &str) -> Result<(), String> {
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
    let caret = rendered.lines().nth(2).unwrap_or("");
    if !caret.ends_with('^') && !caret.contains("^~") {
        return Err(format!("no caret line:\n{rendered}"));
    }
    Ok(())
}

/// What a reader made of one input: accepted it, or rejected it properly; `Err` says what
/// was wrong with the rejection.
pub type Verdict = Result<bool, String>;

/// What a fuzz run saw.
#[derive(Debug, Default)]
pub struct Outcome {
    pub inputs: usize,
    pub rejected: usize,
    /// The first failures (at most 10), each with its input.
    pub failures: Vec<String>,
    pub failed: usize,
}

/// Feeds `count` mutations of `seeds` (in turn) to `read`, catching panics.
pub fn fuzz(
    seeds: &[Vec<u8>],
    count: usize,
    grammar: &[u8],
    seed: u64,
    read: impl Fn(&[u8]) -> Verdict,
) -> Outcome {
    assert!(!seeds.is_empty(), "no seed inputs");
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut outcome = Outcome::default();
    for k in 0..count {
        let input = mutate(&mut rng, &seeds[k % seeds.len()], grammar);
        outcome.inputs += 1;
        let problem = match catch_unwind(AssertUnwindSafe(|| read(&input))) {
            Ok(Ok(accepted)) => {
                outcome.rejected += usize::from(!accepted);
                continue;
            }
            Ok(Err(e)) => e,
            Err(panic) => {
                let what = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("?");
                format!("panic: {what}")
            }
        };
        outcome.failed += 1;
        if outcome.failures.len() < 10 {
            let shown = String::from_utf8_lossy(&input[..input.len().min(2000)]);
            outcome.failures.push(format!("{problem}\ninput:\n{shown}"));
        }
    }
    outcome
}
