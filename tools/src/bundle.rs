//! `hlo-emit --gpu-bundle DIR`: everything `tools/gpu-bench` needs to run, check and time a
//! module's kernels on a machine that has a GPU but no Rust and no LLVM.
//!
//! The module's ENTRY is read as a chain of kernels: its parameters are buffers filled with
//! seeded values, each `fusion` instruction is one kernel reading buffers and writing new
//! ones (a multi-output fusion's `get-tuple-element`s name its output buffers), and the ROOT
//! (an array or a `tuple` of them) names the results. A module without `fusion`
//! instructions, as in XLA's emitter tests, is one kernel whose parameters are the inputs;
//! a module whose ENTRY also computes (a `copy`, a `constant`, an `add`: XLA's tests
//! have such ENTRYs) has each fusion bundled on its own drawn inputs (`"mode": "separate"`,
//! the `note` says which instruction), the way `--check` runs fusions.
//! The HLO reference evaluator runs the chain on the same values, and the bundle holds, per
//! kernel output, what the evaluator computed.
//!
//! # The bundle
//!
//! `DIR/manifest.json` (format `hlo-emit-gpu-bundle 1`) names the `module`, the `source` file
//! and its stem, the `model` (`tools/gpu-bench` finds the JAX version of a model by it), and
//! lists:
//! - `buffers`: `name`, `type` (HLO's: `bf16`, `f32`, `s32`, `pred`, ...), `dims` (logical),
//!   `minor_to_major`, `bytes` (the laid-out size), and `init`, one of
//!   - `{"kind": "draw", "seed", "low", "high", "scale", "checksum"}`: logical row-major
//!     element `i` is `k_i * scale` (`scale` is 1/64 for floats, 1 for integers and `pred`),
//!     with `k_i = low + splitmix64(seed + i) mod (high - low + 1)` in wrapping 64-bit
//!     arithmetic (splitmix64: `z = x + 0x9E3779B97F4A7C15; z = (z ^ z >> 30) *
//!     0xBF58476D1CE4E5B9; z = (z ^ z >> 27) * 0x94D049BB133111EB; z ^ z >> 31`).
//!     `checksum` is the wrapping 64-bit sum of `((i mod 1021) + 1) * k_i`, so that the
//!     reader can prove it drew the same values;
//!   - `{"kind": "constant", "value"}`: every element is `value` (a reducer's identity for a
//!     parameter that is only a reduce's init value; `"inf"`/`"-inf"` for infinities);
//!   - `{"kind": "output", "kernel", "index"}`: written by that kernel.
//!
//!   A kernel output also has `expected`: `file` holds the evaluator's values at logical
//!   row-major indices `0, stride, 2*stride, ...` (`count` of them), raw little-endian values
//!   of the buffer's type, and `tolerance` is `{"abs", "rel"}` (an element matches within
//!   either; see [`crate::check::Tolerance`]) or `null` for exact.
//! - `kernels`, in launch order: `fusion`, `ptx` (a file), `entry` (`main`), `grid`, `block`,
//!   `shared_memory_bytes`, `emitter`, `arguments` and `outputs` (buffer indices; the kernel
//!   takes one pointer per argument, then one per output).
//! - `mode` (`chain` or `separate`), `note`, and `parameters` and `results`: the ENTRY's
//!   parameter and result buffers in order (empty for separate kernels).
//!
//! Why the inputs are a formula and not files: the device machine receives at most 64 MiB
//! per call, and a 32x1024x1024 f32 input alone is 128 MiB. Drawing `k/64` with small `k`
//! makes every value exact in every float type (|k| <= 256 even for bf16's 8 significant
//! bits), so both sides draw bit-identical inputs with a few lines of integer arithmetic.
//! Expected values are sampled (an odd stride, so that every residue of power-of-two
//! dimensions is visited) down to at most [`BundleOptions::max_expected_elements`] per output
//! for the same reason.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::path::Path;

use hlo::evaluate::{Elements, HostArray, HostValue, RandomRange, evaluate_fusion};
use hlo::graph::ComputationGraph;
use hlo::{
    ArrayShape, ComputationId, HloModule, InstrId, Opcode, PrimitiveType, SourceFile, Value,
};
use interp::Buffer;
use serde_json::{Value as Json, json};

use crate::check::{Tolerance, largest_reduction, leaves};
use crate::pipeline::{self, Options};

/// What `--gpu-bundle` writes.
#[derive(Clone, Debug)]
pub struct BundleOptions {
    pub arch: String,
    /// At most this many expected values per output (larger outputs are sampled).
    pub max_expected_elements: usize,
}

impl Default for BundleOptions {
    fn default() -> BundleOptions {
        BundleOptions {
            arch: "sm_90".into(),
            max_expected_elements: 1 << 16,
        }
    }
}

/// The floats drawn are multiples of this.
const FLOAT_SCALE: f64 = 1.0 / 64.0;

/// One buffer of the chain.
struct BufferPlan {
    name: String,
    shape: ArrayShape,
    init: Init,
    /// The largest reduce upstream of this buffer (1 without reduces): its tolerance factor.
    reduced: u64,
}

enum Init {
    Draw { seed: u64, low: i128, high: i128 },
    Constant(f64),
    Output { kernel: usize, index: usize },
}

/// One kernel: the fusion computation it compiles, and the buffers it reads and writes.
struct KernelPlan {
    fusion: ComputationId,
    arguments: Vec<usize>,
    outputs: Vec<usize>,
}

/// The ENTRY as buffers and kernels.
#[derive(Default)]
struct Chain {
    buffers: Vec<BufferPlan>,
    kernels: Vec<KernelPlan>,
    /// The ENTRY's parameters and results; empty when the kernels are bundled separately.
    parameters: Vec<usize>,
    results: Vec<usize>,
    /// Each kernel runs on its own drawn inputs instead of the ENTRY's chain.
    separate: bool,
    /// Why the kernels are bundled separately when the ENTRY has fusions.
    note: Option<String>,
}

/// Writes the bundle of `module` into `dir`; returns a one-line summary per kernel.
pub fn write_bundle(
    source: &SourceFile,
    module: &HloModule,
    dir: &Path,
    options: &BundleOptions,
) -> Result<String, String> {
    let chain = plan_chain(source, module)?;
    for kernel in &chain.kernels {
        let computation = module.computation(kernel.fusion);
        crate::check::fits_the_host(source, computation, "evaluate for a GPU bundle", 1)?;
    }
    let values = evaluate_chain(source, module, &chain)?;
    // Every kernel compiles before anything is written: no half-written bundle.
    let compile_options = Options {
        arch: options.arch.clone(),
        ..Options::default()
    };
    let mut compiled = HashMap::new();
    for kernel in &chain.kernels {
        if let Entry::Vacant(e) = compiled.entry(kernel.fusion) {
            e.insert(pipeline::compile(
                source,
                module,
                &[kernel.fusion],
                &compile_options,
                &mut |_, _| Ok(()),
                &mut passes::Timings::default(),
            )?);
        }
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("error: cannot create '{}': {e}", dir.display()))?;
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes)
            .map_err(|e| format!("error: cannot write '{}': {e}", path.display()))
    };

    let mut kernels = Vec::new();
    let mut summary = chain
        .note
        .as_ref()
        .map_or_else(String::new, |note| format!("note: {note}\n"));
    for (k, kernel) in chain.kernels.iter().enumerate() {
        let name = module.computation(kernel.fusion).name.clone();
        let ptx_file = format!("{k:02}-{}.ptx", file_safe(&name));
        let compiled_module = &compiled[&kernel.fusion];
        let c = &compiled_module.kernels[0];
        write(&ptx_file, compiled_module.output.as_bytes())?;
        let launch = c.launch;
        summary.push_str(&format!(
            "kernel {k}: fusion {name}: {} emitter, grid {} x {} threads, {} bytes of shared memory\n",
            c.emitter, launch.blocks, launch.threads_per_block, launch.shared_memory_bytes
        ));
        kernels.push(json!({
            "fusion": name,
            "ptx": ptx_file,
            "entry": c.kernel,
            "grid": launch.grid(),
            "block": [launch.threads_per_block, 1, 1],
            "shared_memory_bytes": launch.shared_memory_bytes,
            "emitter": c.emitter.to_string(),
            "arguments": kernel.arguments,
            "outputs": kernel.outputs,
        }));
    }

    let mut buffers = Vec::new();
    for (b, buffer) in chain.buffers.iter().enumerate() {
        let shape = &buffer.shape;
        let mut entry = json!({
            "name": buffer.name,
            "type": shape.element_type.to_string(),
            "dims": shape.dims,
            "minor_to_major": minor_to_major(shape),
            "bytes": byte_size(shape)
                .map_err(|e| format!("error: unsupported in a GPU bundle: {e}"))?,
        });
        entry["init"] = match buffer.init {
            Init::Draw { seed, low, high } => json!({
                "kind": "draw",
                "seed": seed,
                "low": low as i64,
                "high": high as i64,
                "scale": if shape.element_type.is_float() { FLOAT_SCALE } else { 1.0 },
                "checksum": draws_checksum(seed, low, high, shape.element_count() as u64),
            }),
            Init::Constant(v) => json!({"kind": "constant", "value": constant_json(v)}),
            Init::Output { kernel, index } => {
                let file = format!("expected-{b:02}-{}.bin", file_safe(&buffer.name));
                let value = &values[b];
                let count = value.len();
                let stride = sample_stride(count, options.max_expected_elements);
                let sample = HostArray::new(
                    vec![count.div_ceil(stride) as i64],
                    value.elements().strided(stride),
                )?;
                write(&file, Buffer::from_host_array(&sample, None)?.bytes())?;
                let tolerance = Tolerance::for_output(shape.element_type, buffer.reduced)
                    .map_or(Json::Null, |t| json!({"abs": t.abs, "rel": t.rel}));
                entry["expected"] = json!({
                    "file": file,
                    "stride": stride,
                    "count": sample.len(),
                    "tolerance": tolerance,
                });
                json!({"kind": "output", "kernel": kernel, "index": index})
            }
        };
        buffers.push(entry);
    }

    let manifest = json!({
        "format": "hlo-emit-gpu-bundle 1",
        "module": module.header.as_ref().map_or(module.entry_computation().name.as_str(), |h| h.name.as_str()),
        "model": Path::new(&source.name).file_stem().map(|s| s.to_string_lossy()),
        "source": source.name,
        "arch": options.arch,
        "buffers": buffers,
        "kernels": kernels,
        "mode": if chain.separate { "separate" } else { "chain" },
        "note": chain.note,
        "parameters": chain.parameters,
        "results": chain.results,
    });
    let text = serde_json::to_string_pretty(&manifest)
        .map_err(|e| format!("error: cannot write the manifest: {e}"))?;
    write("manifest.json", format!("{text}\n").as_bytes())?;
    Ok(summary)
}

/// Reads the ENTRY as a chain of kernels (see the module documentation).
fn plan_chain(source: &SourceFile, module: &HloModule) -> Result<Chain, String> {
    let entry = module.computation(module.entry);
    let has_fusions = entry
        .instructions
        .iter()
        .any(|i| i.opcode == Opcode::Fusion);
    let mut chain = Chain::default();
    let refuse = |instr: &hlo::Instruction, what: &str| {
        hlo::Diagnostic::new(
            instr.spans.whole,
            format!("unsupported in a GPU bundle: {what}"),
        )
        .render(source)
    };

    if !has_fusions {
        // XLA's emitter tests: the ENTRY is the fusion.
        return plan_separate(source, module, &[module.entry]);
    }
    if let Some(instr) = chain_breaker(entry) {
        let mut chain = plan_separate(source, module, &emitters::fusions(module))?;
        chain.note = Some(format!(
            "the ENTRY is not a chain of fusions (instruction '{}' is {}): each fusion is bundled on its own drawn inputs",
            instr.name, instr.opcode
        ));
        return Ok(chain);
    }

    // Buffers of each ENTRY instruction: one per array it holds.
    let mut held: HashMap<InstrId, Vec<usize>> = HashMap::new();
    for p in entry.parameters() {
        let instr = entry.instruction(p);
        let shape = array_shape(instr).map_err(|what| refuse(instr, &what))?;
        let init = draw_init(
            entry_parameter_range(module, entry, p),
            &shape,
            chain.buffers.len(),
        )
        .map_err(|what| refuse(instr, &what))?;
        chain.parameters.push(chain.buffers.len());
        held.insert(p, vec![chain.buffers.len()]);
        chain.buffers.push(BufferPlan {
            name: instr.name.clone(),
            shape,
            init,
            reduced: 1,
        });
    }
    for id in ComputationGraph::new(entry).post_order() {
        let instr = entry.instruction(id);
        match instr.opcode {
            Opcode::Parameter => {}
            Opcode::Fusion => {
                let fusion = instr
                    .called("calls")
                    .ok_or_else(|| refuse(instr, "a fusion without calls="))?
                    .id;
                let mut arguments = Vec::new();
                for &o in &instr.operands {
                    match held.get(&o).map(Vec::as_slice) {
                        Some(&[b]) if entry.instruction(o).shape.as_array().is_some() => {
                            arguments.push(b)
                        }
                        _ => return Err(refuse(instr, "a fusion operand that is a tuple")),
                    }
                }
                let upstream = arguments.iter().map(|&b| chain.buffers[b].reduced).max();
                let reduced =
                    largest_reduction(module.computation(fusion)).max(upstream.unwrap_or(1));
                let kernel = chain.kernels.len();
                let tuple = instr.shape.as_array().is_none();
                let mut outputs = Vec::new();
                for (index, shape) in leaves(&instr.shape).into_iter().enumerate() {
                    outputs.push(chain.buffers.len());
                    chain.buffers.push(BufferPlan {
                        name: leaf_name(&instr.name, index, tuple),
                        shape,
                        init: Init::Output { kernel, index },
                        reduced,
                    });
                }
                held.insert(id, outputs.clone());
                chain.kernels.push(KernelPlan {
                    fusion,
                    arguments,
                    outputs,
                });
            }
            Opcode::GetTupleElement => {
                let index = instr.int("index").unwrap_or(-1);
                let of = held
                    .get(&instr.operands[0])
                    .and_then(|b| b.get(usize::try_from(index).ok()?));
                let b = *of.ok_or_else(|| {
                    refuse(
                        instr,
                        "a get-tuple-element of something other than a fusion",
                    )
                })?;
                held.insert(id, vec![b]);
            }
            Opcode::Tuple => {
                let all = instr
                    .operands
                    .iter()
                    .flat_map(|o| held.get(o).cloned().unwrap_or_default())
                    .collect();
                held.insert(id, all);
            }
            other => {
                return Err(refuse(
                    instr,
                    &format!("ENTRY instruction '{}' ({other})", instr.name),
                ));
            }
        }
    }
    chain.results = held.get(&entry.root).cloned().unwrap_or_default();
    Ok(chain)
}

/// The first ENTRY instruction that makes it something other than a chain of fusions: an
/// op that is not a parameter, fusion, get-tuple-element of a fusion or tuple, or a tuple
/// given to a fusion.
fn chain_breaker(entry: &hlo::Computation) -> Option<&hlo::Instruction> {
    entry.instructions.iter().find(|instr| match instr.opcode {
        Opcode::Parameter | Opcode::Tuple => false,
        Opcode::Fusion => instr
            .operands
            .iter()
            .any(|&o| entry.instruction(o).shape.as_array().is_none()),
        Opcode::GetTupleElement => entry.instruction(instr.operands[0]).opcode != Opcode::Fusion,
        _ => true,
    })
}

/// Each of `fusions` as its own kernel on its own drawn inputs, as `--check` runs them: a
/// parameter only ever a reduce's init value gets its reducer's identity.
fn plan_separate(
    source: &SourceFile,
    module: &HloModule,
    fusions: &[ComputationId],
) -> Result<Chain, String> {
    let mut chain = Chain {
        separate: true,
        ..Chain::default()
    };
    for &fusion in fusions {
        let computation = module.computation(fusion);
        let prefix = if fusions.len() > 1 {
            format!("{}.", computation.name)
        } else {
            String::new()
        };
        let mut arguments = Vec::new();
        for p in computation.parameters() {
            let instr = computation.instruction(p);
            let refuse = |what: String| {
                hlo::Diagnostic::new(
                    instr.spans.whole,
                    format!("unsupported in a GPU bundle: {what}"),
                )
                .render(source)
            };
            let shape = array_shape(instr).map_err(refuse)?;
            let range = RandomRange::for_fusion_parameter(module, fusion, p);
            let init = draw_init(range, &shape, chain.buffers.len()).map_err(refuse)?;
            arguments.push(chain.buffers.len());
            chain.buffers.push(BufferPlan {
                name: format!("{prefix}{}", instr.name),
                shape,
                init,
                reduced: 1,
            });
        }
        let reduced = largest_reduction(computation);
        let root = computation.root_instruction();
        let kernel = chain.kernels.len();
        let mut outputs = Vec::new();
        for (index, shape) in leaves(&root.shape).into_iter().enumerate() {
            outputs.push(chain.buffers.len());
            chain.buffers.push(BufferPlan {
                name: format!(
                    "{prefix}{}",
                    leaf_name(&root.name, index, root.shape.as_array().is_none())
                ),
                shape,
                init: Init::Output { kernel, index },
                reduced,
            });
        }
        chain.kernels.push(KernelPlan {
            fusion,
            arguments,
            outputs,
        });
    }
    Ok(chain)
}

/// The range an ENTRY parameter is drawn from: what the fusion parameters it feeds need
/// (the first that is not the default range when they differ).
fn entry_parameter_range(
    module: &HloModule,
    entry: &hlo::Computation,
    parameter: InstrId,
) -> RandomRange {
    let mut wanted = Vec::new();
    for user in entry
        .instructions
        .iter()
        .filter(|u| u.opcode == Opcode::Fusion)
    {
        let Some(fusion) = user.called("calls").map(|c| c.id) else {
            continue;
        };
        let params = module.computation(fusion).parameters();
        for (k, _) in user
            .operands
            .iter()
            .enumerate()
            .filter(|&(_, &o)| o == parameter)
        {
            if let Some(&p) = params.get(k) {
                wanted.push(RandomRange::for_fusion_parameter(module, fusion, p));
            }
        }
    }
    wanted
        .into_iter()
        .find(|r| *r != RandomRange::Default)
        .unwrap_or(RandomRange::Default)
}

/// The shape of an ENTRY parameter or fusion parameter, which must be an untiled array.
fn array_shape(instr: &hlo::Instruction) -> Result<ArrayShape, String> {
    let shape = instr
        .shape
        .as_array()
        .ok_or_else(|| format!("parameter '{}' is a tuple", instr.name))?;
    // Sub-byte types come with an `E(n)` layout: name the type, which is what is missing.
    byte_size(shape)?;
    untiled(shape)?;
    Ok(shape.clone())
}

/// Bundles describe layouts by `minor_to_major` alone.
fn untiled(shape: &ArrayShape) -> Result<(), String> {
    match &shape.layout {
        Some(l) if !l.tiles.is_empty() || l.element_size_in_bits != 0 => {
            Err(format!("the tiled layout of {shape}"))
        }
        _ => Ok(()),
    }
}

/// How the elements of a parameter drawn from `range` are made (buffer `index` seeds it).
fn draw_init(range: RandomRange, shape: &ArrayShape, index: usize) -> Result<Init, String> {
    let ty = shape.element_type;
    if let RandomRange::Between(lo, hi) = range
        && lo == hi
    {
        return Ok(Init::Constant(lo));
    }
    let seed = (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let (low, high) = if ty == PrimitiveType::Pred {
        (0, 1)
    } else if ty.is_int() && ty.bit_width() >= 8 {
        range.int_bounds(ty)
    } else if matches!(
        ty,
        PrimitiveType::BF16 | PrimitiveType::F16 | PrimitiveType::F32 | PrimitiveType::F64
    ) {
        let (lo, hi) = range.float_bounds();
        let (low, high) = ((lo / FLOAT_SCALE).ceil(), (hi / FLOAT_SCALE).floor());
        // Every k/64 with |k| <= 256 is exact in bf16's 8 significant bits.
        if low > high || low < -256.0 || high > 256.0 {
            return Err(format!("drawing {ty} values in [{lo}, {hi}]"));
        }
        (low as i128, high as i128)
    } else {
        return Err(format!("element type {ty}"));
    };
    untiled(shape)?;
    Ok(Init::Draw { seed, low, high })
}

/// `name` for an array result, `name.K` for element K of a tuple result.
fn leaf_name(name: &str, index: usize, tuple: bool) -> String {
    if tuple {
        format!("{name}.{index}")
    } else {
        name.to_string()
    }
}

/// The evaluator's value of every buffer, in buffer order.
fn evaluate_chain(
    source: &SourceFile,
    module: &HloModule,
    chain: &Chain,
) -> Result<Vec<HostArray>, String> {
    let mut values: Vec<Option<HostArray>> = Vec::with_capacity(chain.buffers.len());
    for buffer in &chain.buffers {
        values.push(match buffer.init {
            Init::Draw { seed, low, high } => Some(drawn(&buffer.shape, seed, low, high)?),
            Init::Constant(v) => {
                let count = buffer.shape.element_count() as usize;
                let value = if buffer.shape.element_type.is_float() {
                    Value::Float(v)
                } else if v.is_infinite() {
                    let (min, max) =
                        RandomRange::Between(v, v).int_bounds(buffer.shape.element_type);
                    Value::Int(if v < 0.0 { min } else { max })
                } else {
                    Value::Int(v as i128)
                };
                let elements = Elements::from_values(buffer.shape.element_type, count, |_| value)?;
                Some(HostArray::new(buffer.shape.dims.clone(), elements)?)
            }
            Init::Output { .. } => None,
        });
    }
    for kernel in &chain.kernels {
        let args: Vec<HostValue> = kernel
            .arguments
            .iter()
            .map(|&b| {
                values[b].clone().map(HostValue::Array).ok_or_else(|| {
                    "error: a kernel reads a buffer before it is written".to_string()
                })
            })
            .collect::<Result<_, _>>()?;
        let outputs =
            evaluate_fusion(module, kernel.fusion, &args).map_err(|d| d.render(source))?;
        for (&b, value) in kernel.outputs.iter().zip(outputs) {
            values[b] = Some(value);
        }
    }
    values
        .into_iter()
        .map(|v| v.ok_or_else(|| "error: a buffer no kernel writes".to_string()))
        .collect()
}

/// The mixing function of splitmix64 (Steele, Lea and Flood), a bijection of u64.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `k_i` of a draw (see the module documentation).
fn draw(seed: u64, low: i128, high: i128, i: u64) -> i128 {
    let span = (high - low + 1) as u128;
    low + (u128::from(splitmix64(seed.wrapping_add(i))) % span) as i128
}

/// The drawn array of `shape`.
fn drawn(shape: &ArrayShape, seed: u64, low: i128, high: i128) -> Result<HostArray, String> {
    let ty = shape.element_type;
    let count = shape.element_count() as usize;
    let elements = Elements::from_values(ty, count, |i| {
        let k = draw(seed, low, high, i as u64);
        if ty.is_float() {
            Value::Float(k as f64 * FLOAT_SCALE)
        } else {
            Value::Int(k)
        }
    })?;
    HostArray::new(shape.dims.clone(), elements)
}

/// The wrapping sum of `((i mod 1021) + 1) * k_i`.
fn draws_checksum(seed: u64, low: i128, high: i128, count: u64) -> i64 {
    (0..count).fold(0i64, |sum, i| {
        let k = draw(seed, low, high, i) as i64;
        sum.wrapping_add(((i % 1021) as i64 + 1).wrapping_mul(k))
    })
}

fn constant_json(v: f64) -> Json {
    if v.is_infinite() {
        json!(if v < 0.0 { "-inf" } else { "inf" })
    } else {
        json!(v)
    }
}

/// The stride that samples `count` values down to at most `max`: odd (when above 1), so
/// that the samples visit every residue of the power-of-two dimensions.
fn sample_stride(count: usize, max: usize) -> usize {
    match count.div_ceil(max.max(1)) {
        0 | 1 => 1,
        s => s | 1,
    }
}

fn minor_to_major(shape: &ArrayShape) -> Vec<i64> {
    match &shape.layout {
        Some(l) => l.minor_to_major.clone(),
        None => (0..shape.dims.len() as i64).rev().collect(),
    }
}

fn byte_size(shape: &ArrayShape) -> Result<u64, String> {
    let bits = shape.element_type.bit_width();
    if !bits.is_multiple_of(8) && shape.element_type != PrimitiveType::Pred {
        return Err(format!("element type {}", shape.element_type));
    }
    Ok(shape.element_count().max(0) as u64 * u64::from(bits.div_ceil(8)))
}

/// A name usable in a file name.
fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
