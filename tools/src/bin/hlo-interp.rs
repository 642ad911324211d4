//! `hlo-interp`: runs a kernel of an IR file in the interpreter, on a simulated GPU grid.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use interp::{Buffer, Kernel, Launch};
use ir::{Module, Registry, Type, parse_module_with};

/// Run a kernel of hlo-emit's IR on the host, the way `mlir-cpu-runner` runs MLIR.
///
/// The file holds IR at any stage before `lower-to-llvm` (tensor level: `xla_gpu`, `scf`,
/// `tensor`, `vector`... or pointer level after `lower-tensors`). Every block and thread of
/// the grid runs, with GPU semantics for barriers, warp shuffles and shared memory. Each
/// parameter gets a buffer: a tensor one of its type's size, a `!llvm.ptr` one of the bytes
/// its `llvm.dereferenceable` attribute promises (or `--ptr-bytes`). Errors — out-of-bounds
/// accesses, reads of uninitialized shared memory, barrier or warp divergence, write
/// conflicts, undefined behaviour, a thread past `--max-steps` instructions (an endless
/// loop) — name the op, its `file:line:col` and the thread, and exit with status 1. On
/// success the tensor outputs are printed.
#[derive(Parser)]
#[command(name = "hlo-interp", version)]
struct Cli {
    /// IR file (`-` reads standard input).
    input: PathBuf,

    /// The kernel function to run.
    #[arg(long, default_value = "main", value_name = "NAME")]
    entry: String,

    /// Blocks x threads per block.
    #[arg(long, default_value = "1x32", value_name = "BLOCKSxTHREADS", value_parser = parse_grid)]
    grid: (u64, u64),

    /// The initial contents of every buffer.
    #[arg(long, value_enum, default_value_t = Fill::Iota)]
    fill: Fill,

    /// Bytes of a `!llvm.ptr` parameter without `llvm.dereferenceable`.
    #[arg(long, default_value_t = 4096, value_name = "N")]
    ptr_bytes: usize,

    /// Print at most this many elements of each tensor parameter after the run.
    #[arg(long, default_value_t = 16, value_name = "N")]
    print_elements: usize,

    /// The instructions one thread may execute before the run stops with an error (IR with
    /// an endless loop would otherwise never return).
    #[arg(long, default_value_t = interp::DEFAULT_STEP_LIMIT, value_name = "N")]
    max_steps: u64,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Fill {
    /// Zero bytes.
    Zero,
    /// Element i holds the number i (tensors of integers and floats; pointers get bytes i mod 256).
    Iota,
}

fn parse_grid(text: &str) -> Result<(u64, u64), String> {
    let (b, t) = text
        .split_once('x')
        .ok_or_else(|| format!("'{text}' is not BLOCKSxTHREADS (e.g. 4x128)"))?;
    let number = |s: &str| {
        s.parse::<u64>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("'{s}' is not a positive number"))
    };
    Ok((number(b)?, number(t)?))
}

fn main() -> ExitCode {
    let cli = match hlo_emit_tools::parse_cli::<Cli>() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            hlo_emit_tools::report!("{message}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: &Cli) -> Result<(), String> {
    let (name, text) = hlo_emit_tools::read_input_text(&cli.input)?;
    let module =
        parse_module_with(&text, &name, Registry::standard()).map_err(|d| d.render(&text))?;
    let params = parameter_types(&module, &cli.entry)?;
    let kernel = Kernel::compile(&module, &cli.entry)
        .map_err(|e| e.to_string())?
        .with_step_limit(cli.max_steps);
    let args = params
        .iter()
        .enumerate()
        .map(|(i, &ty)| argument(ty, kernel.pointer_bytes(i), cli))
        .collect::<Result<Vec<_>, _>>()?;
    let (blocks, threads) = cli.grid;
    let run = kernel
        .run(Launch { blocks, threads }, args)
        .map_err(|e| e.to_string())?;
    let mut report = format!(
        "@{}: {blocks} x {threads} threads, {} ops executed\n",
        cli.entry, run.ops
    );
    for (i, (ty, buffer)) in params.iter().zip(&run.buffers).enumerate() {
        if let Some(values) = show_elements(*ty, buffer, cli.print_elements) {
            report.push_str(&format!("%arg{i}: {ty} = [{values}]\n"));
        }
    }
    std::io::stdout()
        .write_all(report.as_bytes())
        .and_then(|()| std::io::stdout().flush())
        .map_err(|e| format!("error: cannot write standard output: {e}"))
}

/// The parameter types of the function `entry` (a `func.func` or `llvm.func`).
fn parameter_types(module: &Module, entry: &str) -> Result<Vec<Type>, String> {
    let func = module
        .lookup_symbol(module.top(), entry)
        .ok_or_else(|| format!("error: {} has no function @{entry}", module.file))?;
    let body = module
        .regions(func)
        .first()
        .and_then(|&r| module.region_blocks(r).first().copied())
        .ok_or_else(|| format!("error: @{entry} has no body"))?;
    Ok(module
        .block_args(body)
        .iter()
        .map(|&v| module.value_type(v))
        .collect())
}

/// The buffer for a parameter of type `ty`; a pointer gets the bytes it promises to be
/// readable, or `--ptr-bytes`.
fn argument(ty: Type, dereferenceable: Option<u64>, cli: &Cli) -> Result<Buffer, String> {
    let Some(elem) = ty.element_type() else {
        let promised = dereferenceable.unwrap_or(cli.ptr_bytes as u64);
        let len = interp::host_bytes(Some(promised), &format_args!("a '{ty}' argument"))
            .map_err(|e| format!("error: {e}"))?;
        let bytes = match cli.fill {
            Fill::Zero => vec![0; len],
            Fill::Iota => (0..len).map(|i| i as u8).collect(),
        };
        return Ok(Buffer::new(bytes));
    };
    let zeroed = Buffer::for_tensor(ty).map_err(|e| e.to_string())?;
    if cli.fill == Fill::Zero {
        return Ok(zeroed);
    }
    let width = element_bytes(elem)?;
    let bytes = (0..zeroed.len() / width)
        .flat_map(|i| encode(elem, i as f64).to_le_bytes().into_iter().take(width))
        .collect();
    Ok(Buffer::new(bytes))
}

fn element_bytes(elem: Type) -> Result<usize, String> {
    elem.bit_width()
        .filter(|w| w % 8 == 0 || *w == 1)
        .map(|w| (w as usize).div_ceil(8))
        .ok_or_else(|| format!("error: cannot fill tensors of {elem}"))
}

/// The bits of `v` as an element of `elem` (at most 128 bits: `i128`), in the low bytes.
fn encode(elem: Type, v: f64) -> u128 {
    if elem == Type::F32 {
        u128::from((v as f32).to_bits())
    } else if elem == Type::F64 {
        u128::from(v.to_bits())
    } else if elem == Type::F16 {
        u128::from(half::f16::from_f64(v).to_bits())
    } else if elem == Type::BF16 {
        u128::from(half::bf16::from_f64(v).to_bits())
    } else {
        let width = elem.bit_width().unwrap_or(64);
        (v as u128) & (u128::MAX >> (128 - width.clamp(1, 128)))
    }
}

/// The first `n` elements of a tensor buffer, as numbers.
fn show_elements(ty: Type, buffer: &Buffer, n: usize) -> Option<String> {
    let elem = ty.element_type()?;
    let width = element_bytes(elem).ok()?;
    let mut shown: Vec<String> = buffer
        .bytes()
        .chunks(width)
        .take(n)
        .map(|c| {
            let mut raw = [0u8; 16];
            raw[..c.len()].copy_from_slice(c);
            decode(elem, u128::from_le_bytes(raw))
        })
        .collect();
    if buffer.len() / width > n {
        shown.push("...".to_string());
    }
    Some(shown.join(", "))
}

fn decode(elem: Type, bits: u128) -> String {
    if elem == Type::F32 {
        f32::from_bits(bits as u32).to_string()
    } else if elem == Type::F64 {
        f64::from_bits(bits as u64).to_string()
    } else if elem == Type::F16 {
        half::f16::from_bits(bits as u16).to_string()
    } else if elem == Type::BF16 {
        half::bf16::from_bits(bits as u16).to_string()
    } else {
        bits.to_string()
    }
}
