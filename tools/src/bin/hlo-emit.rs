//! `hlo-emit`: compiles XLA HLO fusions to NVIDIA GPU kernels, printing any stage.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use driver::bundle::{self, BundleOptions};
use driver::check::{CheckOptions, CrashReproducer, ModuleCheck, check_module};
use driver::pipeline::{self, Options, Stage};
use driver::program;
use driver::reproducer::{Recorded, Recorder, SharedRecord, lock};
use driver::runner::{Dump, DumpChoice, Dumps, Runner};
use hlo_emit_tools::{read_input, write_output};
use ir::PrintOptions;

/// Compile XLA HLO fusions to NVIDIA GPU kernels the way XLA:GPU's MLIR emitters do.
///
/// The input is HLO text as XLA prints it: an `HloModule` whose ENTRY holds `fusion`
/// instructions (each called computation is compiled to one kernel), or a bare list of
/// computations as in XLA's emitter tests (the last one is the fusion). Every stage can be
/// printed: `--emit` picks the last one, `--dump-after-each-pass` prints all of them to
/// standard error under MLIR's `// -----// IR Dump After ... //----- //` headers.
/// Malformed or unsupported input is reported as `file:line:col: error: ...` with exit
/// status 1.
#[derive(Parser)]
#[command(name = "hlo-emit", version)]
struct Cli {
    /// HLO text file to compile (`-` reads standard input).
    #[arg(required_unless_present = "explain_layout")]
    input: Option<PathBuf>,

    /// The stage to stop at and print.
    #[arg(long, value_enum, default_value_t = Emit::Ptx)]
    emit: Emit,

    /// Write the output here instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,

    /// The GPU architecture to compile for: sm_75 or newer (`tanh.approx`, masked warp
    /// shuffles). Conversions from and to f8e4m3fn/f8e5m2 are sm_89's `cvt` instructions
    /// from sm_89 on, integer and f32 arithmetic before (the same codes). Below sm_90 the
    /// PTX is ISA 8.1.
    #[arg(long, default_value = "sm_90", value_name = "SM")]
    arch: String,

    /// Make XLA's choices where ours differ: its vector factors and its function names
    /// (`@main` for a module of one kernel, as XLA prints a fusion's module, else the
    /// fusion instruction's name; reducers `@<computation>_<root>`). Without it, our tuned
    /// choices stay, and the `--emit=xla-gpu` header names each one that differs from
    /// XLA's. docs/emitters.md lists them.
    #[arg(long)]
    match_xla: bool,

    /// Compile only the fusion computation with this name.
    #[arg(long, value_name = "NAME")]
    fusion: Option<String>,

    /// Print the IR after every stage to standard error: the emitted module, every pass,
    /// LLVM IR, optimized LLVM IR and PTX.
    #[arg(long, visible_alias = "mlir-print-ir-after-all")]
    dump_after_each_pass: bool,

    /// Write every stage to its own numbered file in DIR (`00-emit.mlir`, ...,
    /// `NN-ptx.ptx`) instead of standard error; with several fusions, in one subdirectory
    /// per fusion (`DIR/<fusion>/00-emit.mlir`).
    #[arg(long, value_name = "DIR")]
    dump_dir: Option<PathBuf>,

    /// Print the IR after the pass named PASS (repeatable; a fusion pass such as `fuse`
    /// prints the HLO when it changed it, `emit` is the emitter, `translate`, `llvm-opt`
    /// and `ptx` the LLVM stages).
    #[arg(long, value_name = "PASS")]
    print_ir_after: Vec<String>,

    /// On a pass failure, print the IR as the failing pass left it.
    #[arg(long)]
    print_ir_after_failure: bool,

    /// Stop after the pass named PASS (its first run; `emit`, `translate`, `llvm-opt` and
    /// `ptx` name the other stages) and print its output.
    #[arg(long, value_name = "PASS")]
    stop_after: Option<String>,

    /// Print a table of wall time per stage and pass to standard error; with `--check`, a
    /// `time:` line per checked stage (interpreter seconds, instructions, throughput).
    #[arg(long)]
    time_passes: bool,

    /// Run these passes after the emitter instead of the standard pipeline: a
    /// comma-separated list of pass names (`hlo-opt --help` lists them), e.g. to see what a
    /// pass does without another, or to check (`--check`) a pipeline in another order.
    #[arg(long, value_name = "PASSES")]
    pass_pipeline: Option<String>,

    /// Print IR in MLIR's generic op form.
    #[arg(long)]
    print_op_generic: bool,

    /// Write the launch dimensions of the kernel(s) as JSON to FILE, and the launch sequence
    /// when the ENTRY is a chain of fusions: the kernels in launch order with the buffers
    /// each reads and writes, every buffer's type, dims, layout and bytes, and the ENTRY's
    /// parameter and result buffers.
    #[arg(long, value_name = "FILE")]
    launch_json: Option<PathBuf>,

    /// Run the fusion pipeline (`crates/fusion`: call inlining, ...) before compiling. On by
    /// default for a whole program (an `HloModule` header) that holds no fusion: unfused HLO
    /// as JAX lowers it. Given a module that is already fused, its fusions are inlined first
    /// and the kernels decided anew (XLA's three-kernel softmax becomes one). `--emit=hlo`
    /// then prints the fused module.
    #[arg(long, conflicts_with = "no_fuse")]
    fuse: bool,

    /// Never run the fusion pipeline: compile the module as written.
    #[arg(long)]
    no_fuse: bool,

    /// Print how the partitioner split each fusion into functions (the subgraphs, their
    /// roots, and why each was split off: which users read it through which maps); with
    /// `--fusion`, that fusion's only.
    #[arg(long)]
    print_partition: bool,

    /// Print the entry's fusions in launch order and which of the fusion pass's rules made
    /// each kernel: a reduce hero and its prologue, an epilogue, extra outputs, cheap
    /// producers copied into several fusions, a kernel of its own for a value several
    /// fusions read. Read back from the fused module, so it also explains XLA's fusions.
    #[arg(long)]
    explain_fusion: bool,

    /// Instead of compiling, check each fusion's meaning after every stage: the HLO reference
    /// evaluator and the IR interpreter run on N seeded random inputs (default 1) after the
    /// emitter, every pass, the translation to LLVM IR and LLVM's O3 with libdevice (the
    /// module that becomes PTX); one line per stage with the largest error; the first stage
    /// out of tolerance is named with the element and both values, and the exit status is 1.
    /// Every output element must be written exactly once. Tolerances: exact for integers;
    /// bf16 2^-7, f16 2^-10, f32 1e-5, f64 1e-12 absolute or relative, wider after float
    /// sums (by the reduction's size, and by how far an element moves when the sums are
    /// pushed by their rounding bounds, for ill-conditioned elements). Stages run two at a
    /// time (one per core); a pass that leaves the IR unchanged is not run again. Fusions
    /// of more than 2^27 elements are refused (too large for the host). Then, without
    /// `--fusion`, the whole program: the kernels run in launch order from the linked module
    /// after O3, each reading the buffers earlier ones wrote, and the ENTRY's results are
    /// compared with the evaluator on the module as written (before the fusion pipeline).
    #[arg(long, value_name = "N", num_args = 0..=1, require_equals = true, default_missing_value = "1")]
    check: Option<u64>,

    /// When one of our passes fails on a fusion (an error, a verifier error after it, a
    /// panic) or `--check` blames it, write a crash reproducer into DIR, as MLIR's
    /// `--mlir-pass-pipeline-crash-reproducer` does: the pass's input IR, the pass and the
    /// flags in one file (`<fusion>.<pass>.reproducer.mlir`), which `hlo-opt
    /// --run-reproducer FILE` replays (for a check failure, against the evaluator).
    #[arg(
        long,
        visible_alias = "mlir-pass-pipeline-crash-reproducer",
        value_name = "DIR",
        conflicts_with = "split_input_file"
    )]
    crash_reproducer: Option<PathBuf>,

    /// Instead of printing, write what `tools/gpu-bench` runs on a GPU machine into DIR: the
    /// PTX of every kernel, `manifest.json` (launch dimensions, buffers, how the inputs are
    /// drawn) and the reference evaluator's outputs (sampled when large). The ENTRY must be a
    /// chain of fusions. See "GPU runs" in docs/benchmarks.md.
    #[arg(long, value_name = "DIR")]
    gpu_bundle: Option<PathBuf>,

    /// Split the input at lines that read `// -----` and compile each piece on its own, as
    /// MLIR's `--split-input-file` does: many small cases in one test file. A piece's
    /// diagnostics keep the line numbers of the whole file; the pieces' outputs follow one
    /// another on standard output with `// -----` between them; the exit status is 1 when
    /// any piece failed, after all of them ran.
    #[arg(long, conflicts_with_all = ["output", "dump_dir", "gpu_bundle", "launch_json"])]
    split_input_file: bool,

    /// Instead of compiling, explain a nested layout (seed 004) as the seed does:
    /// `'#xla_gpu.nested_layout<subgroup_tile = [..], batch_tile = [..], outer_tile = [..],
    /// thread_tile = [..], element_tile = [..], subgroup_strides = [..], thread_strides =
    /// [..]>'` (or `#iree_vector_ext.nested_layout<...>`) on a vector of `--vector-shape`:
    /// the conceptual view, the shape each thread holds, the order of subgroup ids, and
    /// which part each subgroup and each thread of a subgroup owns.
    #[arg(long, value_name = "LAYOUT", requires = "vector_shape")]
    explain_layout: Option<String>,

    /// The vector `--explain-layout` distributes, e.g. `64x64`.
    #[arg(long, value_name = "AxBx..", value_parser = parse_vector_shape)]
    vector_shape: Option<VectorShape>,

    /// With `--explain-layout`: the hardware's subgroups per workgroup; subgroup ids past it
    /// wrap around (`mod N`), and N subgroups are listed.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i64).range(1..=1024))]
    subgroups: Option<i64>,

    /// With `--explain-layout`: the threads of a subgroup (32 on NVIDIA GPUs); a layout whose
    /// thread ids reach past it is an error.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i64).range(1..=1024))]
    subgroup_size: Option<i64>,
}

/// `--vector-shape`'s dimensions (one value to clap, not a list of values).
#[derive(Clone, Debug)]
struct VectorShape(Vec<i64>);

fn parse_vector_shape(text: &str) -> Result<VectorShape, String> {
    text.split('x')
        .map(|d| {
            d.parse::<i64>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("'{d}' is not a positive 64-bit dimension (e.g. 64x64)"))
        })
        .collect::<Result<Vec<i64>, String>>()
        .map(VectorShape)
}

/// `--explain-layout`: the layout explained, or a located error (`<layout>:1:COL`).
fn explain_layout(cli: &Cli, text: &str) -> Result<(), String> {
    let layout = indexing::nested_layout::NestedLayout::parse(text).map_err(|e| {
        let column = text[..e.offset.min(text.len())].chars().count() + 1;
        format!("<layout>:1:{column}: error: {}", e.message)
    })?;
    let shape = cli.vector_shape.as_ref().map_or(&[][..], |s| &s.0);
    let explained = layout
        .explain(shape, cli.subgroups, cli.subgroup_size)
        .map_err(|e| format!("<layout>:1:1: error: {e}"))?;
    write_output(cli.output.as_ref(), &explained)
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Emit {
    /// The parsed and verified module, printed back as canonical HLO text.
    Hlo,
    /// The emitters' output before any pass: `xla_gpu` IR.
    XlaGpu,
    /// After `lower-to-llvm`: the llvm and nvvm dialects.
    Mlir,
    /// LLVM IR as translated from MLIR.
    Llvm,
    /// PTX assembly, preceded by a comment with the launch dimensions.
    Ptx,
    /// The machine code for --arch (ptxas, then nvdisasm), after comments with the launch
    /// dimensions, registers and spills, and the number of SASS instructions.
    Sass,
}

/// The stack of the thread that compiles. Nothing recurses along operand chains of
/// elementwise ops (a 150,000-op chain compiles and checks in 8 MiB), but ops that emit loops
/// or branches (pad, reduce, gather, ...) recurse into their operands, up to
/// `emitters::elemental::MAX_REGION_NESTING` deep: 10,000 pads take under 64 MiB in a
/// release build. Reserved, not committed: pages are touched only as deep as the input goes.
const COMPILER_STACK_BYTES: usize = 1 << 30;

fn main() -> ExitCode {
    let cli = match hlo_emit_tools::parse_cli::<Cli>() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    // The run's record for a crash reproducer, kept here: the compiler thread may panic.
    let record: Option<SharedRecord> = cli.crash_reproducer.as_ref().map(|_| {
        let flags: Vec<String> = std::env::args().collect();
        Arc::new(Mutex::new(Recorded::new(&cli.arch, &flags.join(" "))))
    });
    let dir = cli.crash_reproducer.clone();
    let shared = record.clone();
    let compiler = std::thread::Builder::new()
        .name("hlo-emit".into())
        .stack_size(COMPILER_STACK_BYTES)
        .spawn(move || {
            let record = shared.as_ref();
            if let Some(layout) = &cli.explain_layout {
                return explain_layout(&cli, layout);
            }
            let Some(input) = &cli.input else {
                return Err("error: no input file".to_string());
            };
            let (name, bytes) = read_input(input)?;
            if cli.split_input_file {
                run_pieces(&cli, &name, &bytes)
            } else {
                run(&cli, &name, bytes, 0, record)
            }
        });
    let result = match compiler {
        Ok(thread) => thread
            .join()
            .unwrap_or_else(|_| Err("error: internal compiler error (see above)".to_string())),
        Err(e) => Err(format!("error: cannot start the compiler thread: {e}")),
    };
    let result = match (result, &dir, &record) {
        (Err(message), Some(dir), Some(record)) => Err(with_reproducer(message, dir, record)),
        (result, _, _) => result,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            hlo_emit_tools::report!("{message}");
            ExitCode::FAILURE
        }
    }
}

/// `--split-input-file`: every piece of the input through [`run`], its errors printed as they
/// come; one error at the end counts the pieces that failed.
fn run_pieces(cli: &Cli, name: &str, bytes: &[u8]) -> Result<(), String> {
    let pieces = split_input(bytes);
    let mut failed = 0;
    for (index, (lines_before, piece)) in pieces.iter().enumerate() {
        if index > 0 {
            write_output(None, "// -----\n")?;
        }
        if let Err(message) = run(cli, name, piece.to_vec(), *lines_before, None) {
            hlo_emit_tools::report!("{message}");
            failed += 1;
        }
    }
    match failed {
        0 => Ok(()),
        _ => Err(format!(
            "error: {failed} of {} pieces of '{name}' failed",
            pieces.len()
        )),
    }
}

/// The pieces of `bytes` between lines that read `// -----`, each with the number of lines
/// before it.
fn split_input(bytes: &[u8]) -> Vec<(usize, &[u8])> {
    let mut pieces = Vec::new();
    let (mut start, mut lines_before, mut lines) = (0, 0, 0);
    let mut offset = 0;
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        lines += 1;
        offset += line.len();
        if line.trim_ascii() == b"// -----" {
            pieces.push((lines_before, &bytes[start..offset - line.len()]));
            (start, lines_before) = (offset, lines);
        }
    }
    pieces.push((lines_before, &bytes[start..]));
    pieces
}

/// `message`, the error of a run, with a note on the crash reproducer written for it when
/// it failed in one of our passes (a `--check` failure has written its own).
fn with_reproducer(message: String, dir: &std::path::Path, record: &SharedRecord) -> String {
    if message.starts_with("error: --check failed") {
        return message;
    }
    let Some(reproducer) = lock(record).failed_pass(&message) else {
        return message;
    };
    match reproducer.write(dir) {
        Ok(path) => format!(
            "{message}\nnote: crash reproducer of pass '{}' on fusion '{}' written to {}",
            reproducer.pass,
            reproducer.fusion,
            path.display()
        ),
        Err(e) => format!("{message}\n{e}"),
    }
}

/// Compiles `bytes`, which start after `lines_before` lines of the file `name`: one run of
/// the pipeline, which the dumps (and `--check`) observe, and `record` (for a crash
/// reproducer) when given.
fn run(
    cli: &Cli,
    name: &str,
    bytes: Vec<u8>,
    lines_before: usize,
    record: Option<&SharedRecord>,
) -> Result<(), String> {
    let (source, mut module) = hlo::load_piece(name, bytes, lines_before)?;
    let options = Options {
        stop_at: match cli.emit {
            Emit::Hlo | Emit::XlaGpu => Stage::XlaGpu,
            Emit::Mlir => Stage::Mlir,
            Emit::Llvm => Stage::Llvm,
            Emit::Ptx => Stage::Ptx,
            Emit::Sass => Stage::Sass,
        },
        stop_after: cli.stop_after.clone(),
        arch: cli.arch.clone(),
        choices: choices(cli),
        dump_after_each_pass: cli.dump_after_each_pass || cli.dump_dir.is_some(),
        print_ir_after: cli.print_ir_after.clone(),
        print_ir_after_failure: cli.print_ir_after_failure,
        generic: cli.print_op_generic,
        passes: pipeline::requested_passes(cli.pass_pipeline.as_deref()),
    };
    let mut runner = Runner::new(&source, &options)?;
    let choice = DumpChoice {
        after_all: options.dump_after_each_pass,
        after: options.print_ir_after.clone(),
        print: PrintOptions {
            generic: options.generic,
        },
    };
    let mut files = DumpFiles::default();
    // The module as written: `--check` compares the whole program with it.
    let fuse = cli.fuse || (!cli.no_fuse && fusion::wants_fusion(&module));
    let written = cli.check.is_some().then(|| module.clone());
    {
        let mut sink = |dump: &Dump| files.write(cli, dump, false);
        let mut dumps = Dumps {
            choice: choice.clone(),
            sink: &mut sink,
        };
        // An unfused program is fused; a fused one keeps its fusions.
        if fuse {
            runner.fuse(&mut module, &mut [&mut dumps])?;
        } else {
            runner.outline(&mut module, &mut [&mut dumps])?;
        }
    }
    let module = module;
    if cli.explain_fusion {
        return write_output(cli.output.as_ref(), &fusion::explain_fusion(&module));
    }
    let fusions = || pipeline::select_fusions(&source, &module, cli.fusion.as_deref());
    if cli.print_partition {
        let text = pipeline::describe_partitions(&source, &module, &fusions()?)?;
        return write_output(cli.output.as_ref(), &text);
    }
    // `--check` comes first: it checks the run that `--gpu-bundle` or `--emit` would make.
    if let Some(dir) = &cli.gpu_bundle
        && cli.check.is_none()
    {
        let options = BundleOptions {
            arch: cli.arch.clone(),
            choices: choices(cli),
            ..BundleOptions::default()
        };
        let summary = bundle::write_bundle(&source, &module, dir, &options)?;
        return write_output(cli.output.as_ref(), &summary);
    }
    if cli.emit == Emit::Hlo && cli.check.is_none() {
        // The fusion pipeline's passes are the only ones that ran.
        if cli.time_passes {
            hlo_emit_tools::report_text!("{}", runner.timings.report());
        }
        return write_output(cli.output.as_ref(), &module.to_string());
    }
    let fusions = fusions()?;
    let several = fusions.len() > 1;
    let mut sink = |dump: &Dump| files.write(cli, dump, several);
    let mut dumps = Dumps {
        choice,
        sink: &mut sink,
    };
    let mut recorder = record.map(|record| {
        let mut r = lock(record);
        r.hlo = module.to_string();
        r.pipeline = options.passes_to_run().to_vec();
        Recorder(record.clone())
    });
    let mut observers: Vec<&mut dyn driver::runner::Observer> = vec![&mut dumps];
    if let Some(recorder) = &mut recorder {
        observers.push(recorder);
    }
    if let Some(inputs) = cli.check {
        let passes = pipeline::requested_passes(cli.pass_pipeline.as_deref());
        let what = ModuleCheck {
            reference: written.as_ref().unwrap_or(&module),
            fusions: &fusions,
            pipeline: &passes,
            whole_program: cli.fusion.is_none(),
        };
        let options = CheckOptions {
            inputs,
            stage_times: cli.time_passes,
            arch: cli.arch.clone(),
            choices: choices(cli),
            crash_reproducer: cli
                .crash_reproducer
                .clone()
                .zip(record.cloned())
                .map(|(dir, record)| CrashReproducer { dir, record }),
            ..CheckOptions::default()
        };
        let out = &mut std::io::stdout();
        return check_module(&source, &module, &what, &options, &mut observers, out);
    }
    let compiled = runner.compile(&module, &fusions, &mut observers)?;
    if cli.time_passes {
        hlo_emit_tools::report_text!("{}", runner.timings.report());
    }
    if let Some(path) = &cli.launch_json {
        std::fs::write(
            path,
            program::launch_json(&source, &module, &compiled.kernels, &compiled.runtime),
        )
        .map_err(|e| format!("error: cannot write '{}': {e}", path.display()))?;
    }
    let mut output = compiled.output;
    if !output.ends_with('\n') {
        output.push('\n');
    }
    write_output(cli.output.as_ref(), &output)
}

/// How many stage files each `--dump-dir` directory holds so far: a fusion's stages and
/// then the linked module's LLVM stages number on in one directory when there is one fusion.
#[derive(Default)]
struct DumpFiles {
    written: std::collections::HashMap<PathBuf, usize>,
}

impl DumpFiles {
    /// A dump goes to standard error, or to its numbered file under `--dump-dir` (in the
    /// fusion's subdirectory when the run compiles `several` fusions, so that the stages of
    /// several fusions do not overwrite each other's files).
    fn write(&mut self, cli: &Cli, dump: &Dump, several: bool) -> Result<(), String> {
        let Some(dir) = &cli.dump_dir else {
            hlo_emit_tools::report_text!("{}", dump.text);
            return Ok(());
        };
        let dir = match dump.fusion {
            Some(fusion) if several => dir.join(fusion),
            _ => dir.clone(),
        };
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("error: cannot create '{}': {e}", dir.display()))?;
        let written = self.written.entry(dir.clone()).or_default();
        let path = dir.join(dump_file_name(*written, dump.stage));
        *written += 1;
        std::fs::write(&path, &dump.text)
            .map_err(|e| format!("error: cannot write '{}': {e}", path.display()))
    }
}

/// `03-lower-xla-gpu-to-scf.mlir`: the file of the dump of stage `flag`, the `index`th of
/// its directory.
fn dump_file_name(index: usize, flag: &str) -> String {
    let extension = match flag {
        flag if pipeline::FUSION_PASSES.iter().any(|p| p.name == flag) => "hlo",
        "ptx" => "ptx",
        "sass" => "sass",
        "translate" | "llvm-opt" => "ll",
        _ => "mlir",
    };
    format!("{index:02}-{flag}.{extension}")
}

/// Ours or XLA's choices (`--match-xla`).
fn choices(cli: &Cli) -> emitters::Choices {
    match cli.match_xla {
        true => emitters::Choices::Xla,
        false => emitters::Choices::Tuned,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stage names are flags (`--print-ir-after`, `--stop-after`) and dump file names: an
    /// HLO pass named like an MLIR pass or an LLVM stage would make them ambiguous.
    #[test]
    fn fusion_pass_names_are_not_other_stage_names() {
        let registry = passes::PassRegistry::standard();
        for pass in pipeline::FUSION_PASSES {
            assert!(
                registry.get(pass.name).is_none()
                    && !pipeline::LLVM_STAGES.contains(&pass.name)
                    && pass.name != "emit",
                "the fusion pass '{}' shares its name with another stage",
                pass.name
            );
            assert!(dump_file_name(0, pass.name).ends_with(".hlo"));
        }
    }
}
