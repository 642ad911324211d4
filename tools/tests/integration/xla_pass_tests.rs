//! XLA's own lit tests of its emitter IR and passes (`../shared/xla-pass-tests`, read here at
//! test time): how much of their input our reader takes (issue 46, item 1), and how many of
//! their RUN lines our passes pass (item 2).
//!
//! Every file is split at its `// -----` lines as its RUN lines split it, and each chunk is
//! parsed and verified as `hlo-opt` does, XLA's spellings of the emitter dialect read as ours
//! (`xla.loop`, `#xla.indexing_map`, `/` for `floordiv`: `crates/ir/src/parser/xla_spelling.rs`).
//! Chunks that annotate an `expected-error` test XLA's verifier on invalid IR and are left
//! out. The count may only go up: [`PARSED_AT_LEAST`] is the last measured figure, and a
//! lower count fails with the table of every file.
//!
//! The RUN lines run as written with `hlo-opt` for XLA's `emitters_opt` ([`FLAGS`]: XLA's
//! pass flags and ours) and LLVM's FileCheck on XLA's CHECK lines, XLA's spelling of the
//! shared dialect in them read as ours. A RUN line for another target (a CPU, ROCm, oneAPI)
//! is not ours; one naming a pass or option we lack, or checking diagnostics, is counted
//! apart. [`RUN_LINES_PASSING_AT_LEAST`] holds the passing ones, as a floor. Every (RUN line,
//! chunk) pair that does not pass is in the ledger [`LEDGER`] with the reason; the test fails
//! when a pair fails without an entry or an entry's pair passes, so the ledger is always the
//! list of what is left.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const HLO_OPT: &str = env!("CARGO_BIN_EXE_hlo-opt");

/// The chunks parsed and verified when this figure was last raised (session 31: 258 of 319
/// valid ones, with `xla.workgroup_id`, `gpu.lane_id`, declarations with named arguments,
/// `xla_gpu.reduce`, `xla.get_dynamic_dim_size` and `dense<...>` layout encodings; session
/// 30: 247, 245 before XLA's packed atomic updates were read, 158 before XLA's spellings
/// were; MLIR's f8/f4 and complex element types, `affine.apply`, `scf.forall` and a few ops
/// are not read yet).
const PARSED_AT_LEAST: usize = 258;

fn pass_tests() -> Vec<PathBuf> {
    let dir = testkit::project_root().join("../shared/xla-pass-tests");
    testkit::files_ending(&[dir], &[".mlir"])
}

#[test]
fn xla_s_pass_test_inputs_are_read() {
    let files = pass_tests();
    assert!(
        files.len() >= 30,
        "only {} files of XLA's pass tests",
        files.len()
    );
    let (mut parsed, mut valid) = (0, 0);
    let mut table = String::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy();
        let (mut ok, mut chunks) = (0, 0);
        let mut first_error = String::new();
        for chunk in text.split("\n// -----\n") {
            if chunk.contains("expected-error") {
                continue;
            }
            chunks += 1;
            let read = ir::parse_module_with(chunk, &name, ir::Registry::standard())
                .and_then(|module| module.verify().map(|()| module));
            match read {
                Ok(_) => ok += 1,
                Err(d) if first_error.is_empty() => first_error = d.message.clone(),
                Err(_) => {}
            }
        }
        parsed += ok;
        valid += chunks;
        table.push_str(&format!("{name}: {ok}/{chunks} {first_error}\n"));
    }
    eprintln!("{table}XLA's pass-test inputs read: {parsed}/{valid}");
    assert!(
        parsed >= PARSED_AT_LEAST,
        "{parsed} chunks of XLA's pass tests read, fewer than {PARSED_AT_LEAST}:\n{table}"
    );
}

/// XLA's pass flags (`emitters_opt`'s) and ours (`hlo-opt`'s): the passes both have. XLA
/// lowers its loops and its other ops to `scf` in two passes; ours is one.
const FLAGS: &[(&str, &str)] = &[
    ("-canonicalize", "--canonicalize"),
    ("-cse", "--cse"),
    ("-xla-convert-pure-call-ops", "--convert-pure-call-ops"),
    ("-inline", "--inline"),
    ("-xla-erase-dead-functions", "--erase-dead-functions"),
    ("-xla-expand-float-ops", "--expand-float-ops"),
    ("-xla-expand-integer-power", "--expand-integer-power"),
    ("-xla-flatten-tensors", "--flatten-tensors"),
    ("-xla-lower-tensors", "--lower-tensors"),
    ("-xla-lower-xla-to-scf", "--lower-xla-gpu-to-scf"),
    ("-xla-lower-xla-loops-to-scf", "--lower-xla-gpu-to-scf"),
    ("-xla-gpu-convert-index-type", "--convert-index-type"),
    ("-xla-gpu-optimize-loops", "--optimize-loops"),
    ("-xla-gpu-peel-loops", "--peel-loops"),
    ("-xla-gpu-recover-exp2", "--recover-exp2"),
    ("-xla-merge-pointers", "--merge-pointers-to-same-slice"),
    ("-xla-propagate-slice-indices", "--propagate-slice-indices"),
    ("-xla-safe-integer-arithmetic", "--safe-integer-arithmetic"),
    ("-xla-simplify-affine", "--simplify-affine"),
    ("-xla-simplify-arith", "--simplify-arith"),
    ("-xla-unswitch-loops", "--unswitch-loops"),
    ("-xla-vectorize-loads-stores", "--vectorize-loads-stores"),
];

/// Options of XLA's passes that only say the target is an NVIDIA GPU (ours always is).
const NVIDIA_OPTIONS: &[&str] = &["gpu_device_info='cuda_compute_capability"];

/// Options naming another target: such RUN lines are not ours to pass.
const OTHER_TARGETS: &[&str] = &["target_type=cpu", "rocm_compute_capability", "oneapi_"];

/// The RUN lines that pass (every chunk of the file) when this figure was last raised.
///
/// Session 31: 15 of 35 RUN lines run for NVIDIA or any target (a RUN line fails when one
/// chunk does: a type or op not read yet is enough); 8 more name a pass or an option we do
/// not have, 9 are for other targets or check diagnostics only. (Session 30: 2 of 24, before
/// `convert-pure-call-ops`, `propagate-slice-indices`, `safe-integer-arithmetic`,
/// `unswitch-loops`, `recover-exp2`, `convert-index-type`, `merge-pointers-to-same-slice`,
/// `optimize-loops` and `peel-loops`.)
const RUN_LINES_PASSING_AT_LEAST: usize = 15;

/// The (RUN line, chunk) pairs that pass when this figure was last raised: the chunks with
/// CHECK lines for the RUN line's prefixes, each run on its own.
///
/// Session 31: 153 of 320 run (167 fail on FileCheck, input not read or a pass's error), 43
/// more need a pass or option we do not have, 86 are for other targets or check diagnostics
/// only. (Session 30: 95 of 270; 92 before XLA's packed atomic updates were read.)
const PAIRS_PASSING_AT_LEAST: usize = 153;

/// Every (RUN line, chunk) pair of XLA's pass tests that fails or has no counterpart here,
/// one a line: `<file> RUN <n> chunk <k>: <reason>` (the file's path under XLA's `xla/`, RUN
/// lines and chunks counted from 0),
/// the reason `deliberate: ...` (a difference we keep, and why) or `not yet: ...`.
/// `XLA_PASS_TESTS_LEDGER=write cargo test ... xla_s_run_lines` rewrites it from the run,
/// keeping the reasons of the pairs still listed and giving new ones the first line of
/// why they fail; read the diff before committing it.
const LEDGER: &str = "testdata/xla-pass-tests-ledger.txt";

/// How one of XLA's RUN lines fared.
#[derive(Clone)]
enum Verdict {
    Passed,
    /// hlo-opt failed, or FileCheck did not match: the first line of why.
    Failed(String),
    /// It names a pass or an option we do not have.
    NoCounterpart(String),
    /// It checks diagnostics (`-verify-diagnostics` without FileCheck) or targets another
    /// backend.
    NotRun(String),
}

/// The words of a shell command line, quotes removed (`'...'` and `"..."` keep spaces).
fn shell_words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut quote) = (Vec::new(), String::new(), None);
    for ch in line.chars() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => quote = Some(ch),
            (None, c) if c.is_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            (None, c) => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// The RUN lines of a test file, continuation lines (`\`) joined.
fn run_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix("// RUN:") else {
            continue;
        };
        let rest = rest.trim();
        match rest.strip_suffix('\\') {
            Some(head) => current.push_str(&format!("{head} ")),
            None => {
                current.push_str(rest);
                lines.push(std::mem::take(&mut current));
            }
        }
    }
    lines
}

/// The test file with XLA's spelling of the shared dialect in its CHECK lines written as
/// ours (`xla.loop` → `xla_gpu.loop` where our registry knows the op, `#xla.indexing_map`),
/// the same rule by which the reader takes XLA's spelling in the input.
fn checks_in_our_spelling(text: &str) -> String {
    let registry = ir::Registry::standard();
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if !line.trim_start().starts_with("//") {
            out.push_str(line);
            continue;
        }
        let line = line.replace("#xla.indexing_map", "#xla_gpu.indexing_map");
        let mut rest = line.as_str();
        while let Some(at) = rest.find("xla.") {
            let before_ok = rest[..at]
                .chars()
                .last()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '#'));
            let name: String = rest[at + 4..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.push_str(&rest[..at]);
            let ours = format!("xla_gpu.{name}");
            if before_ok && !name.is_empty() && registry.lookup(&ours).is_some() {
                out.push_str(&ours);
            } else {
                out.push_str(&rest[at..at + 4 + name.len()]);
            }
            rest = &rest[at + 4 + name.len()..];
        }
        out.push_str(rest);
    }
    out
}

/// Runs RUN line `line` on `path` (a test file, or one chunk of it; its CHECK lines, in our
/// spelling, are in `checks`) with hlo-opt in place of `emitters_opt`. `-verify-diagnostics`
/// does nothing where no `expected-...` annotation is (`annotated`), as in MLIR.
fn run_xla_run_line(path: &Path, checks: &Path, line: &str, annotated: bool) -> Verdict {
    let stages: Vec<Vec<String>> = line.split('|').map(shell_words).collect();
    if OTHER_TARGETS.iter().any(|t| line.contains(t)) {
        return Verdict::NotRun("another target".into());
    }
    let Some((file_check, tools)) = stages.split_last() else {
        return Verdict::NotRun("an empty RUN line".into());
    };
    if file_check.first().map(String::as_str) != Some("FileCheck") {
        return Verdict::NotRun("diagnostics checked (-verify-diagnostics)".into());
    }
    let mut input: Option<Vec<u8>> = None;
    for stage in tools {
        if stage.first().map(String::as_str) != Some("emitters_opt") {
            return Verdict::NotRun(format!("a tool of XLA's own: {}", stage.join(" ")));
        }
        let mut args: Vec<String> = Vec::new();
        for word in &stage[1..] {
            let (flag, option) = match word.split_once('=') {
                Some((flag, option)) => (flag, Some(option)),
                None => (word.as_str(), None),
            };
            let flag = flag
                .strip_prefix('-')
                .filter(|f| f.starts_with('-'))
                .unwrap_or(flag);
            match flag {
                "%s" => args.push(path.display().to_string()),
                "-split-input-file" | "--split-input-file" => {
                    args.push("--split-input-file".into())
                }
                "--mlir-print-op-generic" | "-mlir-print-op-generic" => {
                    args.push("--mlir-print-op-generic".into())
                }
                "-allow-unregistered-dialect" | "--allow-unregistered-dialect" => {}
                "-verify-diagnostics" | "--verify-diagnostics" if annotated => {
                    return Verdict::NoCounterpart("-verify-diagnostics".into());
                }
                "-verify-diagnostics" | "--verify-diagnostics" => {}
                _ => match FLAGS.iter().find(|(xla, _)| *xla == flag) {
                    Some((_, ours)) => match option {
                        Some(option) if NVIDIA_OPTIONS.iter().any(|o| option.starts_with(o)) => {
                            args.push(ours.to_string())
                        }
                        // An option of ours (`max_unroll_factor=16`), passed as MLIR does.
                        Some(option) => {
                            let name = ours.trim_start_matches('-');
                            if passes::PassRegistry::standard()
                                .create_with_options(name, option)
                                .is_err()
                            {
                                return Verdict::NoCounterpart(format!("{flag}={option}"));
                            }
                            args.push(format!("{ours}={option}"));
                        }
                        None => args.push(ours.to_string()),
                    },
                    None => return Verdict::NoCounterpart(flag.to_string()),
                },
            }
        }
        if input.is_some() {
            args.push("-".into());
        }
        let out = piped(Path::new(HLO_OPT), &args, input.as_deref());
        if !out.status.success() {
            let why = String::from_utf8_lossy(&out.stderr);
            let first = why
                .lines()
                .find(|l| l.contains("error"))
                .unwrap_or("hlo-opt failed");
            return Verdict::Failed(first.to_string());
        }
        input = Some(out.stdout);
    }
    let mut args = vec![checks.display().to_string()];
    for word in &file_check[1..] {
        if word != "%s" {
            args.push(word.clone());
        }
    }
    let out = piped(
        &codegen::toolchain::file_check().unwrap(),
        &args,
        input.as_deref(),
    );
    match out.status.success() {
        true => Verdict::Passed,
        false => {
            // FileCheck's error, then the CHECK line it could not meet.
            let why = String::from_utf8_lossy(&out.stderr);
            let mut lines = why.lines().skip_while(|l| !l.contains("error"));
            let first = match (lines.next(), lines.next()) {
                (Some(error), Some(check)) => format!("{error} {}", check.trim()),
                (Some(error), None) => error.to_string(),
                _ => "no match".to_string(),
            };
            Verdict::Failed(first)
        }
    }
}

/// Runs `program` with `args` and `input` on its standard input (a stage of a RUN line's
/// pipe); its output.
fn piped(program: &Path, args: &[String], input: Option<&[u8]>) -> std::process::Output {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.unwrap_or_default()).unwrap();
    drop(stdin);
    child.wait_with_output().unwrap()
}

/// The FileCheck prefixes of a RUN line (`CHECK` unless it names others).
fn check_prefixes(line: &str) -> Vec<String> {
    let file_check = line.rsplit('|').next().unwrap_or_default();
    let named: Vec<String> = shell_words(file_check)
        .iter()
        .filter_map(|w| {
            let w = w.trim_start_matches('-');
            w.strip_prefix("check-prefixes=")
                .or_else(|| w.strip_prefix("check-prefix="))
        })
        .flat_map(|list| list.split(',').map(str::to_string))
        .collect();
    if named.is_empty() {
        vec!["CHECK".to_string()]
    } else {
        named
    }
}

/// Whether `text` has FileCheck directives of prefix `p` (`CHECK:`, `CHECK-NEXT:`...; not
/// another prefix that starts with it, `CHECK-HOPPER:`).
fn has_directives(text: &str, p: &str) -> bool {
    const SUFFIXES: &[&str] = &["", "-NEXT", "-SAME", "-LABEL", "-DAG", "-NOT", "-EMPTY"];
    SUFFIXES
        .iter()
        .any(|suffix| text.contains(&format!("{p}{suffix}:")))
        || text.contains(&format!("{p}-COUNT-"))
}

/// How RUN lines fared: passed and run, per RUN line (every chunk of the file) and per
/// (RUN line, chunk) pair whose chunk has CHECK lines for it.
#[derive(Default)]
struct Tally {
    lines: (usize, usize),
    pairs: (usize, usize),
    missing: BTreeMap<String, usize>,
    table: String,
    /// The pairs that fail or have no counterpart, by (file, RUN line, chunk), with why.
    open: BTreeMap<PairKey, String>,
}

impl Tally {
    fn count(&mut self, verdict: &Verdict, per_line: bool) -> String {
        let slot = if per_line {
            &mut self.lines
        } else {
            &mut self.pairs
        };
        match verdict {
            Verdict::Passed => {
                *slot = (slot.0 + 1, slot.1 + 1);
                "passes".to_string()
            }
            Verdict::Failed(why) => {
                slot.1 += 1;
                format!("fails: {why}")
            }
            Verdict::NoCounterpart(what) => {
                if per_line {
                    *self.missing.entry(what.clone()).or_default() += 1;
                }
                format!("no counterpart: {what}")
            }
            Verdict::NotRun(why) => format!("not run: {why}"),
        }
    }
}

#[test]
fn xla_s_run_lines_pass_with_our_passes() {
    let scratch = tempfile::tempdir().unwrap();
    let mut tally = Tally::default();
    for path in pass_tests() {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        // Two files may share a name (`ops.mlir`): the ledger names them by their path.
        let root = testkit::project_root().join("../shared/xla-pass-tests/xla");
        let relative = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .display()
            .to_string();
        let checks = scratch.path().join(&name);
        std::fs::write(&checks, checks_in_our_spelling(&text)).unwrap();
        for (r, line) in run_lines(&text).into_iter().enumerate() {
            let verdict = run_xla_run_line(&path, &checks, &line, text.contains("expected-"));
            let what = tally.count(&verdict, true);
            tally
                .table
                .push_str(&format!("{name}: {line}\n    {what}\n"));
            let prefixes = check_prefixes(&line);
            let split = line.contains("split-input-file");
            let chunks: Vec<&str> = match split {
                true => text.split("\n// -----\n").collect(),
                false => vec![text.as_str()],
            };
            for (k, chunk) in chunks.iter().enumerate() {
                let checked = prefixes.iter().any(|p| has_directives(chunk, p));
                if !checked {
                    continue;
                }
                let verdict = if split {
                    let input = scratch.path().join(format!("{k}.{name}"));
                    let checks = scratch.path().join(format!("{k}.checks.{name}"));
                    std::fs::write(&input, chunk).unwrap();
                    std::fs::write(&checks, checks_in_our_spelling(chunk)).unwrap();
                    run_xla_run_line(&input, &checks, &line, chunk.contains("expected-"))
                } else {
                    verdict.clone()
                };
                let what = tally.count(&verdict, false);
                tally.table.push_str(&format!("    chunk {k}: {what}\n"));
                if let Some(reason) = open_reason(&verdict) {
                    tally.open.insert((relative.clone(), r, k), reason);
                }
            }
        }
    }
    let missing: Vec<String> = (tally.missing.iter())
        .map(|(m, n)| format!("{m} ({n})"))
        .collect();
    let ((lines, lines_run), (pairs, pairs_run)) = (tally.lines, tally.pairs);
    eprintln!(
        "{}XLA's RUN lines passing with our passes: {lines} of {lines_run} run (every chunk), \
         {pairs} of {pairs_run} (RUN line, chunk) pairs; not run for want of a counterpart: {}",
        tally.table,
        missing.join(", ")
    );
    assert!(
        lines >= RUN_LINES_PASSING_AT_LEAST && pairs >= PAIRS_PASSING_AT_LEAST,
        "{lines} of XLA's RUN lines and {pairs} (RUN line, chunk) pairs pass, fewer than \
         {RUN_LINES_PASSING_AT_LEAST} and {PAIRS_PASSING_AT_LEAST}:\n{}",
        tally.table
    );
    check_ledger(&tally.open);
}

/// Why a pair is open (`None`: it passes or is not ours to run), as a ledger reason: the
/// first line of the error, its file named without a directory (the test files, and the
/// scratch copies `<k>.<name>` and `<k>.checks.<name>` of chunk `k`, by their name).
fn open_reason(verdict: &Verdict) -> Option<String> {
    let why = match verdict {
        Verdict::Passed | Verdict::NotRun(_) => return None,
        Verdict::Failed(why) => why.clone(),
        Verdict::NoCounterpart(what) => return Some(format!("not yet: no counterpart of {what}")),
    };
    let why = match why.split_once(':') {
        Some((head, tail)) if head.contains('/') => {
            let file = head.rsplit('/').next().unwrap_or(head);
            let file = match file.split_once('.') {
                Some((k, rest)) if !k.is_empty() && k.chars().all(|c| c.is_ascii_digit()) => {
                    rest.strip_prefix("checks.").unwrap_or(rest)
                }
                _ => file,
            };
            format!("{file}:{tail}")
        }
        _ => why,
    };
    Some(format!("not yet: {why}"))
}

/// A (RUN line, chunk) pair: the test file's path, the RUN line's and the chunk's index.
type PairKey = (String, usize, usize);

/// `<file> RUN <n> chunk <k>`, as the ledger writes a pair.
fn ledger_key((file, run, chunk): &PairKey) -> String {
    format!("{file} RUN {run} chunk {chunk}")
}

/// The ledger ([`LEDGER`]) lists exactly the open pairs; with `XLA_PASS_TESTS_LEDGER=write`
/// it is rewritten from them instead (in file, RUN line, chunk order).
fn check_ledger(open: &BTreeMap<PairKey, String>) {
    let path = testkit::project_root().join(LEDGER);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let listed: BTreeMap<String, String> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_once(": "))
        .map(|(key, reason)| (key.to_string(), reason.to_string()))
        .collect();
    if std::env::var("XLA_PASS_TESTS_LEDGER").as_deref() == Ok("write") {
        let header: String = text
            .lines()
            .take_while(|l| l.starts_with('#'))
            .map(|l| format!("{l}\n"))
            .collect();
        let body: String = open
            .iter()
            .map(|(pair, why)| {
                let key = ledger_key(pair);
                let reason = listed.get(&key).unwrap_or(why);
                format!("{key}: {reason}\n")
            })
            .collect();
        std::fs::write(&path, header + &body).unwrap();
        return;
    }
    let open_keys: BTreeMap<String, &String> = open
        .iter()
        .map(|(pair, why)| (ledger_key(pair), why))
        .collect();
    let unlisted: Vec<String> = open_keys
        .iter()
        .filter(|(key, _)| !listed.contains_key(*key))
        .map(|(key, why)| format!("{key}: {why}"))
        .collect();
    let passing: Vec<&str> = listed
        .keys()
        .filter(|key| !open_keys.contains_key(*key))
        .map(String::as_str)
        .collect();
    assert!(
        unlisted.is_empty() && passing.is_empty(),
        "{LEDGER} is not the list of XLA's (RUN line, chunk) pairs that do not pass \
         (XLA_PASS_TESTS_LEDGER=write rewrites it):\nfailing, not listed:\n{}\n\
         listed, not failing (remove them):\n{}",
        unlisted.join("\n"),
        passing.join("\n")
    );
}
