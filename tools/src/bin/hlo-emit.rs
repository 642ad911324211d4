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

    /// Print how the partitioner split each fusion into functions (the subgraphs, their
    /// roots, and why each was split off: which users read it through which maps).
    #[arg(long)]
    print_partition: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum Emit {
    /// The parsed and verified module, printed back as canonical HLO text.
    Hlo,
    /// The emitters' output before any pass: `xla_gpu` IR, one module per fusion, each
    /// preceded by a comment with the fusion, the emitter and the launch dimensions.
    XlaGpu,
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
    let (source, module) = hlo::load(&name, &bytes)?;
    if cli.print_partition {
        return write_output(cli.output.as_ref(), &partitions(&source, &module)?);
    }
    let text = match cli.emit {
        Emit::Hlo => module.to_string(),
        Emit::XlaGpu => emit_xla_gpu(&source, &module)?,
    };
    write_output(cli.output.as_ref(), &text)
}

/// The partition of every fusion of the module.
fn partitions(source: &hlo::SourceFile, module: &hlo::HloModule) -> Result<String, String> {
    let mut out = String::new();
    for id in emitters::fusions(module) {
        let computation = module.computation(id);
        let partition = emitters::PartitionedComputation::new(computation, |_| false)
            .map_err(|d| d.render(source))?;
        out.push_str(&format!("fusion {}:\n", computation.name));
        out.push_str(&partition.describe(computation));
    }
    Ok(out)
}

/// Every fusion's `xla_gpu` module.
fn emit_xla_gpu(source: &hlo::SourceFile, module: &hlo::HloModule) -> Result<String, String> {
    let mut out = String::new();
    for id in emitters::fusions(module) {
        let fusion = emitters::emit_fusion(module, id).map_err(|d| d.render(source))?;
        let launch = fusion.kernel.launch;
        out.push_str(&format!(
            "// fusion {}: {} emitter (hero: {}), {} blocks x {} threads, vector factor {}\n",
            fusion.name,
            "loop",
            fusion.hero_kind,
            launch.blocks,
            launch.threads_per_block,
            fusion.kernel.vector_factor
        ));
        out.push_str(&fusion.module.print());
    }
    Ok(out)
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
