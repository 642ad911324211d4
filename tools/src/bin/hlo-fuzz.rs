//! `hlo-fuzz`: differential fuzzing of hlo-emit with random fusions (see `hlo_emit_tools::fuzz`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use hlo_emit_tools::fuzz::{FuzzOptions, Mode, run};

/// Runs random valid HLO (one module per seed: a fusion, or with --programs an unfused
/// program as JAX prints one) through `hlo-emit --check` (every stage down to the O3 module
/// against the HLO evaluator; for a program the fusion pipeline too, and its kernels run
/// as a whole against the evaluator on the unfused module), `hlo-emit --emit=sass` (ptxas),
/// the HLO print/parse round trip and a second source for the evaluator itself (every
/// element of its elementwise float ops and converts against musl's libm in f64, f16/bf16
/// rounded by formula and ml_dtypes' tables of the narrow floats), and sorts what happens:
/// pass, unsupported (by reason), too large for the host, not checked as a whole (by
/// reason), and the failures: mismatch at a stage, evaluator against the second source,
/// error on a valid input, ptxas rejection, round trip, panic or abort, hang. Failing programs are kept under --out with their output and the command
/// that replays them. Exit status 1 when any program failed.
#[derive(Parser)]
#[command(name = "hlo-fuzz", version)]
struct Cli {
    /// The first seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// How many programs (seeds `seed..seed + count`).
    #[arg(long, default_value_t = 100)]
    count: u64,
    /// Unfused programs (calls, tuples, reductions broadcast back into elementwise code)
    /// through the fusion pipeline, instead of single fusions.
    #[arg(long)]
    programs: bool,
    /// Print the module of --seed (in the mode chosen) and run nothing: how a seed is
    /// replayed by hand.
    #[arg(long)]
    print: bool,
    /// Programs run at once.
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// Seconds one hlo-emit run may take before it counts as a hang.
    #[arg(long, default_value_t = 120)]
    timeout: u64,
    /// Where failing programs are kept.
    #[arg(long, default_value = "fuzz-out")]
    out: PathBuf,
    /// Shrink each failure (delta debugging over its instructions) to a minimal program
    /// that fails the same way, written beside it as `seed-N.min.hlo`, trying at most
    /// this many candidates.
    #[arg(long, default_value_t = 300)]
    shrink: usize,
    /// The hlo-emit to test (default: the one beside this program).
    #[arg(long)]
    hlo_emit: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = match hlo_emit_tools::parse_cli::<Cli>() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let hlo_emit = cli.hlo_emit.clone().unwrap_or_else(|| {
        std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(|dir| dir.join("hlo-emit")))
            .unwrap_or_else(|| PathBuf::from("hlo-emit"))
    });
    let Some(end) = cli.seed.checked_add(cli.count) else {
        hlo_emit_tools::report!(
            "error: --seed {} --count {}: the last seed is past 2^64",
            cli.seed,
            cli.count
        );
        return ExitCode::FAILURE;
    };
    let mode = if cli.programs {
        Mode::Programs
    } else {
        Mode::Fusions
    };
    if cli.print {
        print!("{}", mode.generate(cli.seed));
        return ExitCode::SUCCESS;
    }
    let options = FuzzOptions {
        hlo_emit,
        mode,
        seeds: cli.seed..end,
        jobs: cli.jobs,
        timeout: Duration::from_secs(cli.timeout),
        shrink: cli.shrink,
        out: cli.out,
    };
    match run(&options) {
        Ok(report) => {
            print!("{}", report.summary());
            if report.failures().is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(message) => {
            hlo_emit_tools::report!("{message}");
            ExitCode::FAILURE
        }
    }
}
