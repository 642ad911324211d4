//! The machinery that runs XLA's lit tests here (`../shared/xla-pass-tests`, its pass tests,
//! and `../shared/xla-corpus`, its emitter tests): RUN lines read and run with our tools in
//! place of XLA's ([`FLAGS`] and [`XLA_TEST_PIPELINES`] map XLA's pass flags to ours;
//! `fusion_to_mlir` is `hlo-emit --emit=xla-gpu --match-xla`), XLA's CHECK lines read in our
//! spelling, and a ledger of what does not pass yet and why.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const HLO_OPT: &str = env!("CARGO_BIN_EXE_hlo-opt");
const HLO_EMIT: &str = env!("CARGO_BIN_EXE_hlo-emit");

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
    ("-xla-gpu-lower-xla-shared", "--lower-xla-shared"),
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

/// XLA's test pipelines (`emitters_opt`'s `-xla-test-optimize`, `-xla-gpu-test-transform-loops`
/// and `-xla-gpu-test-to-llvm`) as our passes: its optimization passes as XLA lists them,
/// and our pipeline ([`driver::pipeline::PASSES`]) cut where XLA cuts its own, before the
/// tensors are lowered.
fn xla_test_pipeline(flag: &str) -> Option<Vec<String>> {
    let passes = driver::pipeline::PASSES;
    let cut = passes.iter().position(|p| *p == "lower-tensors").unwrap();
    let names: &[&str] = match flag {
        "-xla-test-optimize" => &[
            "simplify-arith",
            "canonicalize",
            "cse",
            "erase-dead-functions",
            "cse",
        ],
        "-xla-gpu-test-transform-loops" => &passes[..cut],
        "-xla-gpu-test-to-llvm" => &passes[cut..],
        _ => return None,
    };
    Some(names.iter().map(|p| format!("--{p}")).collect())
}

/// XLA's tools that print a fusion's emitted IR (its emitter tests' first stage).
const FUSION_TO_MLIR: &[&str] = &["fusion_to_mlir", "gpu_fusion_to_mlir"];

/// How one of XLA's RUN lines fared.
#[derive(Clone)]
pub enum Verdict {
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
/// spelling, are in `checks`) with hlo-opt in place of `emitters_opt` and `hlo-emit
/// --emit=xla-gpu --match-xla` in place of [`FUSION_TO_MLIR`]. `-verify-diagnostics` does
/// nothing where no `expected-...` annotation is (`annotated`), as in MLIR.
fn run_xla_run_line(path: &Path, checks: &Path, line: &str, annotated: bool) -> Verdict {
    let stages: Vec<Vec<String>> = line.split('|').map(shell_words).collect();
    if OTHER_TARGETS.iter().any(|t| line.contains(t)) {
        return Verdict::NotRun("another target".into());
    }
    let Some((file_check, tools)) = stages.split_last() else {
        return Verdict::NotRun("an empty RUN line".into());
    };
    if file_check.first().map(String::as_str) != Some("FileCheck") {
        return Verdict::NotRun(match line.contains("verify-diagnostics") {
            true => "diagnostics checked (-verify-diagnostics)".into(),
            false => format!("a tool of XLA's own: {}", file_check.join(" ")),
        });
    }
    let mut input: Option<Vec<u8>> = None;
    for stage in tools {
        let tool = stage.first().map(String::as_str).unwrap_or_default();
        if FUSION_TO_MLIR.contains(&tool) && stage[1..] == ["%s"] {
            let args = [
                path.display().to_string(),
                "--emit=xla-gpu".into(),
                "--match-xla".into(),
            ];
            let out = piped(Path::new(HLO_EMIT), &args, None);
            if !out.status.success() {
                return Verdict::Failed(first_error(&out.stderr, "hlo-emit failed"));
            }
            input = Some(out.stdout);
            continue;
        }
        if tool.starts_with("cpu_") {
            return Verdict::NotRun("another target".into());
        }
        if tool != "emitters_opt" {
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
                _ if option.is_none() && xla_test_pipeline(flag).is_some() => {
                    args.extend(xla_test_pipeline(flag).unwrap())
                }
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
            return Verdict::Failed(first_error(&out.stderr, "hlo-opt failed"));
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

/// The first line of `stderr` that reports an error, or `otherwise`.
fn first_error(stderr: &[u8], otherwise: &str) -> String {
    let why = String::from_utf8_lossy(stderr);
    why.lines()
        .find(|l| l.contains("error"))
        .unwrap_or(otherwise)
        .to_string()
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
pub struct Tally {
    pub lines: (usize, usize),
    pub pairs: (usize, usize),
    missing: BTreeMap<String, usize>,
    pub table: String,
    /// The pairs that fail or have no counterpart, by (file, RUN line, chunk), with why.
    pub open: BTreeMap<PairKey, String>,
}

impl Tally {
    /// What RUN lines want that we lack, with how many want it: `-xla-foo (2), ...`.
    pub fn missing(&self) -> String {
        let missing: Vec<String> = (self.missing.iter())
            .map(|(m, n)| format!("{m} ({n})"))
            .collect();
        missing.join(", ")
    }

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

/// Runs every RUN line of every file of `files` (XLA's test files; the ledger names them by
/// their path under `root`), each (RUN line, chunk) pair whose chunk has CHECK lines for
/// the RUN line's prefixes on its own: how they fared.
pub fn run_suite(files: &[PathBuf], root: &Path) -> Tally {
    let scratch = tempfile::tempdir().unwrap();
    let mut tally = Tally::default();
    for path in files {
        let text = std::fs::read_to_string(path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        // Two files may share a name (`ops.mlir`): the ledger names them by their path.
        let relative = path
            .strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string();
        let checks = scratch.path().join(&name);
        std::fs::write(&checks, checks_in_our_spelling(&text)).unwrap();
        for (r, line) in run_lines(&text).into_iter().enumerate() {
            let verdict = run_xla_run_line(path, &checks, &line, text.contains("expected-"));
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
    tally
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

/// The ledger `ledger` (a path in the project) lists exactly the open pairs; with
/// `<variable>=write` in the environment it is rewritten from them instead (in file, RUN
/// line, chunk order).
pub fn check_ledger(open: &BTreeMap<PairKey, String>, ledger: &str, variable: &str) {
    let path = testkit::project_root().join(ledger);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let listed: BTreeMap<String, String> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_once(": "))
        .map(|(key, reason)| (key.to_string(), reason.to_string()))
        .collect();
    if std::env::var(variable).as_deref() == Ok("write") {
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
        "{ledger} is not the list of XLA's (RUN line, chunk) pairs that do not pass \
         ({variable}=write rewrites it):\nfailing, not listed:\n{}\n\
         listed, not failing (remove them):\n{}",
        unlisted.join("\n"),
        passing.join("\n")
    );
}
