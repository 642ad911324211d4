//! Differential fuzzing of the whole compiler (`hlo-fuzz`): random fusions or unfused
//! programs (`fuzzing::programs`), each through `hlo-emit --check` (every stage down to the
//! O3 module against the HLO evaluator; for a program also the fusion pipeline and the
//! whole program's kernels against the evaluator on the unfused module), `hlo-emit
//! --emit=sass` (ptxas on the PTX), the HLO print/parse round trip and the evaluator's
//! elementwise results against a second source (`fuzzing::oracle`); failures sorted by
//! kind, never stopping at one.
//!
//! Each program runs in a process of its own, so that a panic, an abort or a hang is a
//! verdict about that program and not the end of the run; a hang is a run past the time
//! limit, killed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How a program fared.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Every stage matched and ptxas took the PTX.
    Pass,
    /// An honest refusal: `unsupported: <what>` (the op and why, as the message says).
    Unsupported(String),
    /// Too large for the host's check (its own located refusal).
    TooLarge,
    /// Every kernel checked, but the program not run as a whole (the reason, as the
    /// report says it): a gap in the check, listed apart.
    NotWhole(String),
    /// A stage's result differs from the evaluator's: the stage named.
    Mismatch(String),
    /// A located error that is not a refusal: a valid program rejected.
    Error(String),
    /// ptxas (or nvdisasm) refused the PTX.
    Ptxas(String),
    /// Printing the parsed module and parsing it again gave another module.
    RoundTrip(String),
    /// The evaluator's result for an element differs from the second source's
    /// (`fuzzing::oracle`): a mistake the evaluator and the interpreter may share.
    Oracle(String),
    /// A panic or an abort (a signal).
    Crash(String),
    /// Still running at the time limit.
    Hang,
}

impl Verdict {
    /// The kind, for the report's table.
    pub fn kind(&self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Unsupported(_) => "unsupported",
            Verdict::TooLarge => "too large for the host",
            Verdict::NotWhole(_) => "program not checked as a whole",
            Verdict::Mismatch(_) => "mismatch",
            Verdict::Error(_) => "error on a valid input",
            Verdict::Ptxas(_) => "ptxas rejection",
            Verdict::RoundTrip(_) => "print/parse round trip",
            Verdict::Oracle(_) => "evaluator against the second source",
            Verdict::Crash(_) => "panic or abort",
            Verdict::Hang => "hang",
        }
    }

    /// Whether `other` is the same failure: the same kind, and for a mismatch the same
    /// stage (what shrinking keeps; messages name lines that shrinking moves).
    pub fn same_failure(&self, other: &Verdict) -> bool {
        match (self, other) {
            (Verdict::Mismatch(a), Verdict::Mismatch(b)) => a == b,
            (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
        }
    }

    /// Whether it is a bug of hlo-emit's (a refusal is not; a wrong bound would show as
    /// a mismatch).
    pub fn is_failure(&self) -> bool {
        !matches!(
            self,
            Verdict::Pass | Verdict::Unsupported(_) | Verdict::TooLarge | Verdict::NotWhole(_)
        )
    }
}

/// What the generator makes of a seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A module calling one fusion (`fuzzing::programs::fusion`).
    Fusions,
    /// An unfused program, as JAX prints one (`fuzzing::programs::program`).
    Programs,
}

impl Mode {
    /// The module of `seed`.
    pub fn generate(self, seed: u64) -> String {
        match self {
            Mode::Fusions => fuzzing::programs::fusion(seed),
            Mode::Programs => fuzzing::programs::program(seed),
        }
    }
}

/// What [`run`] does.
pub struct FuzzOptions {
    /// The `hlo-emit` to run.
    pub hlo_emit: PathBuf,
    pub mode: Mode,
    pub seeds: std::ops::Range<u64>,
    /// Programs run at once.
    pub jobs: usize,
    /// Per `hlo-emit` run.
    pub timeout: Duration,
    /// Shrink each failure to a minimal program that fails the same way, trying at most
    /// this many candidates (0: no shrinking).
    pub shrink: usize,
    /// Where each failing program goes (`<dir>/<kind>/seed-<n>.hlo` with its output and the
    /// command that replays it); the programs are written to a temporary folder otherwise.
    pub out: PathBuf,
}

/// The verdict of every seed, in seed order.
pub struct Report {
    pub verdicts: Vec<(u64, Verdict)>,
    /// Elements the evaluator computed and the second source confirmed.
    pub oracle_elements: usize,
    pub seconds: f64,
}

/// Runs every seed of `options` (on `options.jobs` threads).
pub fn run(options: &FuzzOptions) -> Result<Report, String> {
    let start = Instant::now();
    std::fs::create_dir_all(&options.out)
        .map_err(|e| format!("error: cannot create '{}': {e}", options.out.display()))?;
    let next = AtomicU64::new(options.seeds.start);
    let verdicts = Mutex::new(Vec::new());
    let oracle_elements = AtomicU64::new(0);
    std::thread::scope(|scope| {
        for _ in 0..options.jobs.max(1) {
            scope.spawn(|| {
                loop {
                    let seed = next.fetch_add(1, Ordering::Relaxed);
                    if seed >= options.seeds.end {
                        return;
                    }
                    let (verdict, compared) = run_seed(options, seed);
                    oracle_elements.fetch_add(compared as u64, Ordering::Relaxed);
                    verdicts
                        .lock()
                        .expect("no worker panics")
                        .push((seed, verdict));
                }
            });
        }
    });
    let mut verdicts = verdicts.into_inner().expect("no worker panics");
    verdicts.sort();
    Ok(Report {
        verdicts,
        oracle_elements: oracle_elements.into_inner() as usize,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// The verdict of one seed and the elements the second source confirmed; a failing program
/// is kept under `options.out`.
fn run_seed(options: &FuzzOptions, seed: u64) -> (Verdict, usize) {
    let text = options.mode.generate(seed);
    let path = options.out.join(format!("seed-{seed}.hlo"));
    if let Err(e) = std::fs::write(&path, &text) {
        return (
            Verdict::Error(format!("cannot write '{}': {e}", path.display())),
            0,
        );
    }
    // A pass that fails or that --check blames leaves a crash reproducer here (its note in
    // the output kept with the program).
    let reproducers = options.out.join("reproducers").join(format!("seed-{seed}"));
    let Judgement {
        verdict,
        output,
        compared,
    } = judge(options, &path, &text, Some(&reproducers));
    if verdict.is_failure() {
        keep(options, &path, &verdict, &output);
        if options.shrink > 0 {
            // A program is shrunk from its flat form (the same instructions, all in the
            // ENTRY) when that fails the same way; one with calls is kept as it is.
            let text = match options.mode {
                Mode::Programs => {
                    let flat = fuzzing::programs::flat_program(seed);
                    let _ = std::fs::write(&path, &flat);
                    if judge(options, &path, &flat, None)
                        .verdict
                        .same_failure(&verdict)
                    {
                        flat
                    } else {
                        text
                    }
                }
                Mode::Fusions => text,
            };
            let shrunk = shrink_failure(options, &text, &verdict, &format!("seed-{seed}"));
            let dir = options.out.join(verdict.kind().replace(' ', "-"));
            let _ = std::fs::write(dir.join(format!("seed-{seed}.min.hlo")), shrunk);
        }
    }
    let _ = std::fs::remove_file(&path);
    (verdict, compared)
}

/// `text` (which fails as `verdict` says) shrunk to the smallest program found that fails
/// the same way (`crate::shrink`); candidates are judged in `<out>/<name>.shrink.hlo`.
pub fn shrink_failure(options: &FuzzOptions, text: &str, verdict: &Verdict, name: &str) -> String {
    let path = options.out.join(format!("{name}.shrink.hlo"));
    let shrunk = crate::shrink::shrink(text, options.shrink, |candidate| {
        std::fs::write(&path, candidate).is_ok()
            && judge(options, &path, candidate, None)
                .verdict
                .same_failure(verdict)
    });
    let _ = std::fs::remove_file(&path);
    shrunk
}

/// What [`judge`] found: the verdict, the output behind it, and how many elements the
/// second source confirmed.
struct Judgement {
    verdict: Verdict,
    output: String,
    compared: usize,
}

/// The round trip, the second source, then `--check` (writing crash reproducers into
/// `reproducers` when given), then ptxas: the first that fails, with its output.
fn judge(options: &FuzzOptions, path: &Path, text: &str, reproducers: Option<&Path>) -> Judgement {
    let judged = |verdict: Verdict, output: String, compared: usize| Judgement {
        verdict,
        output,
        compared,
    };
    if let Err(why) = round_trip(text) {
        return judged(Verdict::RoundTrip(why.clone()), why, 0);
    }
    let compared = match second_source(text) {
        Ok(compared) => compared,
        Err(verdict) => return judged(verdict, String::new(), 0),
    };
    let mut args = vec![path.as_os_str(), "--check".as_ref()];
    if let Some(dir) = reproducers {
        args.extend(["--crash-reproducer".as_ref(), dir.as_os_str()]);
    }
    let checked = hlo_emit(options, &args);
    let verdict = classify(&checked);
    if !matches!(verdict, Verdict::Pass | Verdict::NotWhole(_)) {
        return judged(verdict, checked.text(), compared);
    }
    let assembled = hlo_emit(
        options,
        &[
            path.as_os_str(),
            "--emit=sass".as_ref(),
            "-o".as_ref(),
            "/dev/null".as_ref(),
        ],
    );
    match classify(&assembled) {
        // The check's own gap stands when the PTX assembles.
        Verdict::Pass => judged(verdict, String::new(), compared),
        Verdict::Error(e) if e.contains("ptxas") || e.contains("nvdisasm") => {
            judged(Verdict::Ptxas(e), assembled.text(), compared)
        }
        other => judged(other, assembled.text(), compared),
    }
}

/// The evaluator's elementwise results for the module in `text` against the second source
/// (`fuzzing::oracle`), in this process: the elements confirmed, or the disagreement (a
/// panic of the evaluator's is a crash).
fn second_source(text: &str) -> Result<usize, Verdict> {
    let Ok((_, module)) = hlo::load("fuzz.hlo", text.as_bytes()) else {
        return Ok(0);
    };
    match std::panic::catch_unwind(|| fuzzing::oracle::check(&module, 1)) {
        Ok(Ok(checked)) => Ok(checked.elements),
        Ok(Err(why)) => Err(Verdict::Oracle(why)),
        Err(_) => Err(Verdict::Crash(
            "the evaluator panicked under the second source's walk".to_string(),
        )),
    }
}

/// `print(parse(text))` parses to a module that prints the same.
fn round_trip(text: &str) -> Result<(), String> {
    let (_, module) = hlo::load("fuzz.hlo", text.as_bytes())
        .map_err(|e| format!("the generated module does not load: {e}"))?;
    let printed = module.to_string();
    let (_, again) = hlo::load("printed.hlo", printed.as_bytes())
        .map_err(|e| format!("the printed module does not parse: {e}\n{printed}"))?;
    if again.to_string() != printed {
        return Err(format!(
            "printing the parsed print differs:\n{printed}\n---\n{again}"
        ));
    }
    Ok(())
}

/// What one `hlo-emit` run gave.
struct Run {
    /// `None` when it was killed at the time limit.
    status: Option<std::process::ExitStatus>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn text(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

fn hlo_emit(options: &FuzzOptions, args: &[&std::ffi::OsStr]) -> Run {
    let child = Command::new(&options.hlo_emit)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => {
            return Run {
                status: None,
                stdout: String::new(),
                stderr: format!("cannot run '{}': {e}", options.hlo_emit.display()),
            };
        }
    };
    // The pipes are drained on threads, so that a large output cannot block the child.
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let read_out = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut text);
        text
    });
    let read_err = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        text
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() < options.timeout => {
                std::thread::sleep(Duration::from_millis(5));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    Run {
        status,
        stdout: read_out.join().unwrap_or_default(),
        stderr: read_err.join().unwrap_or_default(),
    }
}

/// The verdict an `hlo-emit` run's status and output give.
fn classify(run: &Run) -> Verdict {
    let Some(status) = run.status else {
        return Verdict::Hang;
    };
    let first = |text: &str, marker: &str| {
        text.lines()
            .find(|l| l.contains(marker))
            .unwrap_or_default()
            .to_string()
    };
    if run.stderr.contains("panicked") || run.stderr.contains("internal compiler error") {
        return Verdict::Crash(first(&run.stderr, "panicked"));
    }
    if status.code().is_none() {
        return Verdict::Crash(format!("killed by a signal ({status})"));
    }
    if status.success() {
        // `check: program: not run as a whole: <file:line:col: why>`
        if let Some(line) = run
            .stdout
            .lines()
            .find(|l| l.contains("not run as a whole: "))
        {
            let why = line
                .split("not run as a whole: ")
                .nth(1)
                .unwrap_or_default();
            return Verdict::NotWhole(reason(why.rsplit(": ").next().unwrap_or(why)));
        }
        return Verdict::Pass;
    }
    if let Some(line) = run.stdout.lines().find(|l| {
        l.ends_with("MISMATCH")
            || l.ends_with("NOT WRITTEN ONCE")
            || l.ends_with("INTERPRETER ERROR")
    }) {
        // `check: [ 7] vectorize-loads-stores  ...: MISMATCH`: the stage's name.
        let stage = line
            .split(']')
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or("program");
        return Verdict::Mismatch(stage.to_string());
    }
    if let Some(line) = run.stderr.lines().find(|l| l.contains("unsupported: ")) {
        let what = line.split("unsupported: ").nth(1).unwrap_or_default();
        return Verdict::Unsupported(reason(what));
    }
    if run.stderr.contains("too large to check on the host") {
        return Verdict::TooLarge;
    }
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("error"))
        .unwrap_or_else(|| run.stderr.lines().next().unwrap_or_default());
    Verdict::Error(line.to_string())
}

/// An unsupported message without its numbers and names, so that one reason counts once:
/// `a transpose of 9 tiles` and `a transpose of 12 tiles` are one row.
fn reason(what: &str) -> String {
    what.split(['\'', '(', ':'])
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .filter(|w| !w.chars().any(|c| c.is_ascii_digit()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Writes the failing program with its output and the command that replays it.
fn keep(options: &FuzzOptions, program: &Path, verdict: &Verdict, output: &str) {
    let dir = options.out.join(verdict.kind().replace(' ', "-"));
    let _ = std::fs::create_dir_all(&dir);
    let name = program.file_name().unwrap_or_default();
    let kept = dir.join(name);
    let _ = std::fs::copy(program, &kept);
    let replay = format!(
        "# {verdict:?}\n# replay: {} {} --check\n{output}",
        options.hlo_emit.display(),
        kept.display()
    );
    let _ = std::fs::write(kept.with_extension("out"), replay);
}

impl Report {
    /// The table of verdicts by kind, the unsupported reasons by count, and the seeds of
    /// every failure.
    pub fn summary(&self) -> String {
        let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
        let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
        let mut not_whole: BTreeMap<String, usize> = BTreeMap::new();
        let mut failures: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for (seed, verdict) in &self.verdicts {
            *kinds.entry(verdict.kind()).or_default() += 1;
            match verdict {
                Verdict::Unsupported(why) => *reasons.entry(why.clone()).or_default() += 1,
                Verdict::NotWhole(why) => *not_whole.entry(why.clone()).or_default() += 1,
                v if v.is_failure() => failures.entry(format!("{v:?}")).or_default().push(*seed),
                _ => {}
            }
        }
        let mut out = format!(
            "{} programs in {:.1} s; {} elements confirmed by the second source\n",
            self.verdicts.len(),
            self.seconds,
            self.oracle_elements
        );
        for (kind, n) in &kinds {
            out.push_str(&format!("  {n:6}  {kind}\n"));
        }
        for (title, reasons) in [
            ("unsupported, by reason", reasons),
            ("not checked as a whole, by reason", not_whole),
        ] {
            if reasons.is_empty() {
                continue;
            }
            out.push_str(&format!("{title}:\n"));
            let mut by_count: Vec<_> = reasons.into_iter().collect();
            by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            for (why, n) in by_count {
                out.push_str(&format!("  {n:6}  {why}\n"));
            }
        }
        if !failures.is_empty() {
            out.push_str("failures (seeds):\n");
            for (what, seeds) in failures {
                let shown: Vec<String> = seeds.iter().take(8).map(u64::to_string).collect();
                let more = if seeds.len() > 8 {
                    format!(" (+{} more)", seeds.len() - 8)
                } else {
                    String::new()
                };
                out.push_str(&format!("  {what}: {}{more}\n", shown.join(", ")));
            }
        }
        out
    }

    /// The failures, by seed.
    pub fn failures(&self) -> Vec<&(u64, Verdict)> {
        self.verdicts
            .iter()
            .filter(|(_, v)| v.is_failure())
            .collect()
    }
}
