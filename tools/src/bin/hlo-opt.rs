//! `hlo-opt`: runs passes on IR text, like `mlir-opt` .
//!
//! The pass flags are generated from `passes::PassRegistry`, so every registered pass is a
//! `--<name>` flag and listed by `--help`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Arg, ArgAction, ArgMatches, CommandFactory, FromArgMatches, Parser};
use driver::check::{CheckOptions, check_pass_replay};
use driver::reproducer::Reproducer;
use hlo_emit_tools::{read_input_text, write_output};
use ir::{Diagnostic, Loc, PrintOptions, Registry, parse_module_with};
use passes::{DumpOptions, PassManager, PassRegistry, Timings};

/// Run passes on MLIR-style IR text, like mlir-opt.
///
/// Reads IR in MLIR's custom or generic syntax (`-` reads standard input), verifies it, runs
/// the passes given as flags in command-line order (or the `--pass-pipeline` list), verifies
/// after every pass, and prints the result. Errors are printed as `file:line:col: error:
/// message` with the source line and a caret, and the exit status is 1.
#[derive(Parser)]
#[command(name = "hlo-opt", version)]
struct Cli {
    /// IR text file (`-` reads standard input).
    input: PathBuf,

    /// Write the output here instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,

    /// Split the input at lines starting with `// -----` and process each chunk on its own;
    /// error locations still refer to the whole file, a failing chunk does not stop the
    /// others (the exit status is 1 if any failed), and the outputs are separated by
    /// `// -----` lines.
    #[arg(long)]
    split_input_file: bool,

    /// Print every op in MLIR's generic form (also in IR dumps).
    #[arg(long)]
    mlir_print_op_generic: bool,

    /// Run these passes, in order: a comma-separated list of pass names (instead of pass
    /// flags).
    #[arg(long, value_name = "PASSES")]
    pass_pipeline: Option<String>,

    /// Print the IR to standard error after every pass, under
    /// `// -----// IR Dump After <Pass> (<name>) //----- //` as mlir-opt does.
    #[arg(
        long = "mlir-print-ir-after-all",
        visible_alias = "dump-after-each-pass"
    )]
    print_ir_after_all: bool,

    /// Print the IR after each run of the pass named PASS (repeatable).
    #[arg(
        long = "print-ir-after",
        visible_alias = "mlir-print-ir-after",
        value_name = "PASS"
    )]
    print_ir_after: Vec<String>,

    /// Print the IR after a pass only if the pass changed it; alone, after every pass that
    /// changed it.
    #[arg(
        long = "print-ir-after-change",
        visible_alias = "mlir-print-ir-after-change"
    )]
    print_ir_after_change: bool,

    /// Replay a crash reproducer that `hlo-emit --crash-reproducer DIR` wrote (the input is
    /// that file): its pass runs on its input IR and the output is verified, so a pass that
    /// failed, panicked or broke the verifier does so again; when `--check` had blamed the
    /// pass, the pass's input and output then run in the interpreter against the evaluator
    /// on the reproducer's HLO, and the mismatch is reported again. Exit status 1 when the
    /// failure is reproduced.
    #[arg(long, conflicts_with_all = ["pass_pipeline", "split_input_file"])]
    run_reproducer: bool,

    /// Print a table of wall time per pass (and parsing, verification, printing) to
    /// standard error.
    #[arg(long = "time-passes", visible_alias = "mlir-timing")]
    time_passes: bool,
}

fn main() -> ExitCode {
    let registry = PassRegistry::standard();
    let matches = match hlo_emit_tools::parse_command_line(command(&registry)) {
        Ok(matches) => matches,
        Err(code) => return code,
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let result = if cli.run_reproducer {
        run_reproducer(&cli, &matches, &registry)
    } else {
        pass_manager(&cli, &matches, &registry).and_then(|pm| run(&cli, &pm))
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(message) => {
            hlo_emit_tools::report!("{message}");
            ExitCode::FAILURE
        }
    }
}

/// The command line: the fixed options plus one flag per registered pass.
fn command(registry: &PassRegistry) -> clap::Command {
    let passes = registry.iter().map(|p| {
        // One value per occurrence (the pass's options, empty without `=`), so that
        // `indices_of` gives every position and `get_many` its options.
        Arg::new(p.name)
            .long(p.name)
            .help(p.description)
            .action(ArgAction::Append)
            .num_args(0..=1)
            .require_equals(true)
            .value_name("OPTIONS")
            .default_missing_value("")
    });
    Cli::command()
        .next_help_heading("Passes (run in the order given)")
        .args(passes)
}

/// The pipeline and instrumentation the command line asks for.
fn pass_manager(
    cli: &Cli,
    matches: &ArgMatches,
    registry: &PassRegistry,
) -> Result<PassManager, String> {
    // Pass flags in command-line order (a flag may repeat), each with its options.
    let mut flagged: Vec<(usize, &str, &str)> = registry
        .iter()
        .flat_map(|p| {
            let options = matches.get_many::<String>(p.name).into_iter().flatten();
            matches
                .indices_of(p.name)
                .into_iter()
                .flatten()
                .zip(options)
                .map(move |(i, options)| (i, p.name, options.as_str()))
        })
        .collect();
    flagged.sort_unstable();
    let passes = match &cli.pass_pipeline {
        Some(_) if !flagged.is_empty() => {
            return Err("error: --pass-pipeline cannot be combined with pass flags".into());
        }
        Some(text) => registry
            .parse_pipeline(text)
            .map_err(|e| format!("error: {e}"))?,
        None => flagged
            .iter()
            .map(|&(_, name, options)| {
                registry
                    .create_with_options(name, options)
                    .map_err(|e| format!("error: --{name}={options}: {e}"))
            })
            .collect::<Result<_, _>>()?,
    };
    if let Some(unknown) = cli
        .print_ir_after
        .iter()
        .find(|name| registry.get(name).is_none())
    {
        return Err(format!("error: --print-ir-after: unknown pass '{unknown}'"));
    }
    let mut pm = PassManager::new();
    for pass in passes {
        pm.add(pass);
    }
    pm.set_dump_options(DumpOptions {
        after_all: cli.print_ir_after_all,
        after: cli.print_ir_after.clone(),
        only_on_change: cli.print_ir_after_change,
        print: print_options(cli),
    });
    Ok(pm)
}

fn print_options(cli: &Cli) -> PrintOptions {
    PrintOptions {
        generic: cli.mlir_print_op_generic,
    }
}

/// `--run-reproducer`: the reproducer's pass on its input, verified, then (for a failed
/// check) both against the evaluator; `Ok(false)` when the failure is reproduced.
fn run_reproducer(
    cli: &Cli,
    matches: &ArgMatches,
    registry: &PassRegistry,
) -> Result<bool, String> {
    if registry
        .iter()
        .any(|p| matches.indices_of(p.name).is_some())
    {
        return Err(
            "error: --run-reproducer runs the reproducer's own pass: give no pass flags".into(),
        );
    }
    let (name, text) = read_input_text(&cli.input)?;
    let reproducer = Reproducer::parse(&name, &text)?;
    let pass = registry.create(&reproducer.pass).ok_or_else(|| {
        format!(
            "error: {name}: the reproducer's pass '{}' is not registered",
            reproducer.pass
        )
    })?;
    hlo_emit_tools::report!(
        "replaying pass '{}' on fusion '{}' (the run reported: {})",
        reproducer.pass,
        reproducer.fusion,
        reproducer.failure
    );
    let mut module = parse_module_with(&reproducer.input, &name, Registry::standard())
        .map_err(|d| d.render(&text))?;
    module.verify().map_err(|d| d.render(&text))?;
    let before = module.clone();
    let mut pm = PassManager::new();
    pm.add(pass);
    let mut timings = Timings::default();
    if let Err(e) = pm.run(&mut module, &mut std::io::stderr().lock(), &mut timings) {
        hlo_emit_tools::report!(
            "{}",
            match e.diagnostic() {
                Some(d) => d.render(&text),
                None => format!("error: {e}"),
            }
        );
        return Ok(false);
    }
    if let Some((inputs, hlo_text)) = &reproducer.check {
        let hlo_name = format!("{name} (its HLO)");
        let (source, hlo) = hlo::load(&hlo_name, hlo_text.as_bytes())?;
        let options = CheckOptions {
            inputs: *inputs,
            arch: reproducer.arch.clone(),
            ..CheckOptions::default()
        };
        let stages = (reproducer.pass.as_str(), &before, &module);
        let out = &mut std::io::stdout();
        if !check_pass_replay(&source, &hlo, &reproducer.fusion, stages, &options, out)? {
            return Ok(false);
        }
    }
    hlo_emit_tools::report!("the failure is not reproduced: the pass succeeded");
    let mut out = module.print_with(print_options(cli));
    out.push('\n');
    write_output(cli.output.as_ref(), &out)?;
    Ok(true)
}

/// Processes every chunk; `Ok(false)` if any of them failed (its errors are printed).
fn run(cli: &Cli, pm: &PassManager) -> Result<bool, String> {
    let (name, source) = read_input_text(&cli.input)?;
    let chunks = if cli.split_input_file {
        split_input(&source)
    } else {
        vec![Chunk {
            text: &source,
            first_line: 1,
        }]
    };
    let mut timings = Timings::default();
    let mut outputs = Vec::with_capacity(chunks.len());
    let mut all_ok = true;
    for chunk in &chunks {
        match process(cli, pm, &name, chunk.text, &mut timings) {
            Ok(text) => outputs.push(text),
            Err(failure) => {
                all_ok = false;
                outputs.push(String::new());
                let message = match failure {
                    Failure::Located(d) => shift(d, chunk.first_line - 1).render(&source),
                    Failure::Other(message) => message,
                };
                hlo_emit_tools::report!("{message}");
            }
        }
    }
    write_output(cli.output.as_ref(), &outputs.join("// -----\n"))?;
    if cli.time_passes {
        hlo_emit_tools::report_text!("{}", timings.report());
    }
    Ok(all_ok)
}

/// Why a chunk produced no output.
enum Failure {
    /// A parser, verifier or pass error at a place in the chunk.
    Located(Diagnostic),
    Other(String),
}

/// Parses, verifies, runs the pipeline on and prints one chunk.
fn process(
    cli: &Cli,
    pm: &PassManager,
    name: &str,
    text: &str,
    timings: &mut Timings,
) -> Result<String, Failure> {
    let mut module = timings
        .time("Parser", || {
            parse_module_with(text, name, Registry::standard())
        })
        .map_err(Failure::Located)?;
    timings
        .time("Verifier", || module.verify())
        .map_err(Failure::Located)?;
    pm.run(&mut module, &mut std::io::stderr().lock(), timings)
        .map_err(|e| match e.diagnostic() {
            Some(d) => Failure::Located(d.clone()),
            None => Failure::Other(e.to_string()),
        })?;
    let mut out = timings.time("Output", || module.print_with(print_options(cli)));
    out.push('\n');
    Ok(out)
}

/// A piece of the input and the line it starts on (1-based).
struct Chunk<'a> {
    text: &'a str,
    first_line: u32,
}

/// Splits `source` at lines starting with `// -----` (the marker lines belong to no chunk).
fn split_input(source: &str) -> Vec<Chunk<'_>> {
    let mut chunks = Vec::new();
    let (mut start, mut first_line, mut offset) = (0, 1, 0);
    for (line_no, line) in (1..).zip(source.split_inclusive('\n')) {
        if line.trim_start().starts_with("// -----") {
            chunks.push(Chunk {
                text: &source[start..offset],
                first_line,
            });
            start = offset + line.len();
            first_line = line_no + 1;
        }
        offset += line.len();
    }
    chunks.push(Chunk {
        text: &source[start..],
        first_line,
    });
    chunks
}

/// `d` with its lines moved down by `lines` (a chunk's locations made file locations).
fn shift(mut d: Diagnostic, lines: u32) -> Diagnostic {
    let move_down = |loc: &mut Loc| {
        if loc.is_known() {
            loc.line += lines;
        }
    };
    move_down(&mut d.loc);
    for (loc, _) in &mut d.notes {
        move_down(loc);
    }
    d
}
