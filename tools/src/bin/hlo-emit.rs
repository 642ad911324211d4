//! `hlo-emit`: compiles XLA HLO fusions to NVIDIA GPU kernels, printing any stage.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};

/// Compile XLA HLO fusions to NVIDIA GPU kernels the way XLA:GPU's MLIR emitters do.
///
/// The input is HLO text as XLA prints it: an `HloModule` with an ENTRY computation, or a
/// bare list of computations as in XLA's emitter tests (the last one is the fusion).
/// Malformed input is reported as `file:line:col: error: ...` with exit status 1.
#[derive(Parser)]
#[command(name = "hlo-emit", version)]
struct Cli {
    /// HLO text file to compile (`-` reads standard input).
    input: PathBuf,

    /// The stage to stop at and print.
    #[arg(long, value_enum, default_value_t = Emit::Hlo)]
    emit: Emit,

    /// Write the output here instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Emit {
    /// The parsed and verified module, printed back as canonical HLO text.
    Hlo,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: &Cli) -> Result<(), String> {
    let (name, bytes) = read_input(&cli.input)?;
    let (_, module) = hlo::load(&name, &bytes)?;
    let text = match cli.emit {
        Emit::Hlo => module.to_string(),
    };
    write_output(cli.output.as_ref(), &text)
}

fn read_input(path: &PathBuf) -> Result<(String, Vec<u8>), String> {
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| format!("error: cannot read standard input: {e}"))?;
        return Ok(("<stdin>".to_string(), bytes));
    }
    let bytes =
        std::fs::read(path).map_err(|e| format!("error: cannot read '{}': {e}", path.display()))?;
    Ok((path.display().to_string(), bytes))
}

fn write_output(path: Option<&PathBuf>, text: &str) -> Result<(), String> {
    match path {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| format!("error: cannot write '{}': {e}", path.display())),
        None => std::io::stdout()
            .write_all(text.as_bytes())
            .map_err(|e| format!("error: cannot write standard output: {e}")),
    }
}
