//! The ENTRY of a module as a launch sequence: the buffers a run of its kernels needs
//! (the ENTRY's parameters, each kernel's outputs) and the kernels in launch order with
//! the buffers each reads and writes. `--gpu-bundle` writes it for a GPU, `--launch-json`
//! prints it, and `--check` runs it in the interpreter against the evaluator.
//!
//! The ENTRY is read as a chain of kernels: its parameters are buffers, each `fusion`
//! instruction is one kernel reading buffers and writing new ones (a multi-output fusion's
//! `get-tuple-element`s name its output buffers), and the ROOT (an array or a `tuple` of
//! them) names the results. A module without `fusion` instructions, as in XLA's emitter
//! tests, is one kernel whose parameters are the inputs; a module whose ENTRY also
//! computes (a `copy`, a `constant`, an `add`: XLA's tests have such ENTRYs) is not a
//! sequence: each fusion stands on its own drawn inputs (`separate`, with a `note` naming
//! the instruction), the way `--check` runs fusions.

use std::collections::HashMap;
use std::io::Write;

use hlo::evaluate::{
    Elements, HostArray, HostValue, RandomRange, evaluate_fusion, fusion_arguments,
    unique_scatter_indices,
};
use hlo::graph::ComputationGraph;
use hlo::{
    ArrayShape, ComputationId, HloModule, InstrId, Opcode, PrimitiveType, SourceFile, Value,
};
use interp::{Buffer, Kernel, Launch};
use serde_json::{Value as Json, json};

use crate::check::{
    Comparison, Reference, compare_array, fits_the_host, largest_reduction, leaves, show,
    show_index, unwritten_output,
};
use crate::pipeline::{CompiledKernel, RuntimeStep};

/// The floats drawn are multiples of this.
pub(crate) const FLOAT_SCALE: f64 = 1.0 / 64.0;

/// One buffer of the chain.
pub(crate) struct BufferPlan {
    pub(crate) name: String,
    pub(crate) shape: ArrayShape,
    pub(crate) init: Init,
    /// The largest reduce upstream of this buffer (1 without reduces): its tolerance factor.
    pub(crate) reduced: u64,
}

pub(crate) enum Init {
    Draw {
        seed: u64,
        low: i128,
        high: i128,
    },
    Constant(f64),
    /// Every element given: the indices of a scatter that promises `unique_indices`.
    Values(HostArray),
    Output {
        kernel: usize,
        index: usize,
    },
}

/// One kernel: the fusion computation it compiles, and the buffers it reads and writes.
pub(crate) struct KernelPlan {
    pub(crate) fusion: ComputationId,
    pub(crate) arguments: Vec<usize>,
    pub(crate) outputs: Vec<usize>,
}

/// The ENTRY as buffers and kernels.
#[derive(Default)]
pub(crate) struct Chain {
    pub(crate) buffers: Vec<BufferPlan>,
    pub(crate) kernels: Vec<KernelPlan>,
    /// The ENTRY's parameters and results; empty when the kernels are bundled separately.
    pub(crate) parameters: Vec<usize>,
    pub(crate) results: Vec<usize>,
    /// Each kernel runs on its own drawn inputs instead of the ENTRY's chain.
    pub(crate) separate: bool,
    /// Why the kernels are bundled separately when the ENTRY has fusions.
    pub(crate) note: Option<String>,
}

/// Reads the ENTRY as a chain of kernels (see the module documentation).
pub(crate) fn plan_chain(source: &SourceFile, module: &HloModule) -> Result<Chain, String> {
    let entry = module.computation(module.entry);
    let has_fusions = entry
        .instructions
        .iter()
        .any(|i| i.opcode == Opcode::Fusion);
    let mut chain = Chain::default();
    let refuse = |instr: &hlo::Instruction, what: &str| {
        hlo::Diagnostic::new(
            instr.spans.whole,
            format!("unsupported in a launch sequence: {what}"),
        )
        .render(source)
    };

    if !has_fusions && emitters::fusions(module) == [module.entry] {
        // XLA's emitter tests: the ENTRY is the fusion.
        return plan_separate(source, module, &[module.entry]);
    }
    // An ENTRY without fusions of its own launches its kernels from the control flow it
    // calls (a `while` body): not a chain, and the loop is what breaks it.
    if let Some(instr) = chain_breaker(entry) {
        let mut chain = plan_separate(source, module, &emitters::fusions(module))?;
        chain.note = Some(format!(
            "the ENTRY is not a chain of fusions (instruction '{}' is {}): each fusion runs on its own drawn inputs",
            instr.name, instr.opcode
        ));
        return Ok(chain);
    }
    if !has_fusions {
        return Err(refuse(
            entry.root_instruction(),
            "an ENTRY whose kernels are launched elsewhere",
        ));
    }

    // Buffers of each ENTRY instruction: one per array it holds.
    let mut held: HashMap<InstrId, Vec<usize>> = HashMap::new();
    for p in entry.parameters() {
        let instr = entry.instruction(p);
        let shape = array_shape(instr).map_err(|what| refuse(instr, &what))?;
        let init = entry_parameter_init(module, entry, p, &shape, chain.buffers.len())
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
            Opcode::Constant => {
                let value = uniform_constant(instr)
                    .ok_or_else(|| refuse(instr, "a constant whose elements differ"))?;
                let shape = array_shape(instr).map_err(|what| refuse(instr, &what))?;
                held.insert(id, vec![chain.buffers.len()]);
                chain.buffers.push(BufferPlan {
                    name: instr.name.clone(),
                    shape,
                    init: Init::Constant(value),
                    reduced: 1,
                });
            }
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

/// The ENTRY instruction that makes it something other than a chain of fusions: an op that
/// is not a parameter, fusion, get-tuple-element of a fusion or tuple, or a tuple given to a
/// fusion; the first control flow (`while`, `conditional`, `call`) among them when there is
/// one, since that is where the other kernels are launched.
fn chain_breaker(entry: &hlo::Computation) -> Option<&hlo::Instruction> {
    let breakers = entry
        .instructions
        .iter()
        .filter(|instr| match instr.opcode {
            Opcode::Parameter | Opcode::Tuple => false,
            Opcode::Constant => uniform_constant(instr).is_none(),
            Opcode::Fusion => instr
                .operands
                .iter()
                .any(|&o| entry.instruction(o).shape.as_array().is_none()),
            Opcode::GetTupleElement => {
                entry.instruction(instr.operands[0]).opcode != Opcode::Fusion
            }
            _ => true,
        });
    let control_flow = |i: &&hlo::Instruction| {
        matches!(i.opcode, Opcode::While | Opcode::Conditional | Opcode::Call)
    };
    breakers
        .clone()
        .find(control_flow)
        .or_else(|| breakers.clone().next())
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
                    format!("unsupported in a launch sequence: {what}"),
                )
                .render(source)
            };
            let shape = array_shape(instr).map_err(refuse)?;
            let init =
                parameter_init(module, fusion, p, &shape, chain.buffers.len()).map_err(refuse)?;
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

/// The fusion parameters an ENTRY parameter is given to: (fusion, its parameter).
fn fed_fusion_parameters(
    module: &HloModule,
    entry: &hlo::Computation,
    parameter: InstrId,
) -> Vec<(ComputationId, InstrId)> {
    let mut fed = Vec::new();
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
                fed.push((fusion, p));
            }
        }
    }
    fed
}

/// How an ENTRY parameter's elements are made: drawn from what the fusion parameters it
/// feeds need (the first range that is not the default when they differ), or a unique
/// scatter's indices when it feeds one (see [`parameter_init`]).
fn entry_parameter_init(
    module: &HloModule,
    entry: &hlo::Computation,
    parameter: InstrId,
    shape: &ArrayShape,
    index: usize,
) -> Result<Init, String> {
    let fed = fed_fusion_parameters(module, entry, parameter);
    let range = fed
        .iter()
        .map(|&(fusion, p)| RandomRange::for_fusion_parameter(module, fusion, p))
        .find(|r| *r != RandomRange::Default)
        .unwrap_or(RandomRange::Default);
    let init = draw_init(range, shape, index)?;
    Ok(fed
        .iter()
        .find_map(|&(fusion, p)| unique_indices(module, fusion, p, &init))
        .unwrap_or(init))
}

/// How a fusion parameter's elements are made when it stands on its own: drawn from its
/// range, or a unique scatter's indices.
fn parameter_init(
    module: &HloModule,
    fusion: ComputationId,
    parameter: InstrId,
    shape: &ArrayShape,
    index: usize,
) -> Result<Init, String> {
    let range = RandomRange::for_fusion_parameter(module, fusion, parameter);
    let init = draw_init(range, shape, index)?;
    Ok(unique_indices(module, fusion, parameter, &init).unwrap_or(init))
}

/// For the indices of a scatter with `unique_indices=true`, drawn starts of windows that do
/// not overlap (the evaluator's own draw for such indices, seeded by the draw `init`): a
/// formula's indices would break the promise, and the scatter's plain stores would then race
/// on the hardware while the interpreter, one thread at a time, sees no difference.
fn unique_indices(
    module: &HloModule,
    fusion: ComputationId,
    parameter: InstrId,
    init: &Init,
) -> Option<Init> {
    let Init::Draw { seed, .. } = *init else {
        return None;
    };
    unique_scatter_indices(module.computation(fusion), parameter, seed).map(Init::Values)
}

/// The shape of an ENTRY parameter or fusion parameter, which must be an array.
fn array_shape(instr: &hlo::Instruction) -> Result<ArrayShape, String> {
    let shape = instr
        .shape
        .as_array()
        .ok_or_else(|| format!("parameter '{}' is a tuple", instr.name))?;
    // Sub-byte types come with an `E(n)` layout: name the type, which is what is missing.
    byte_size(shape)?;
    Ok(shape.clone())
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
    } else if ty.is_int() && ty.bit_width() >= 2 {
        range.int_bounds(ty)
    } else if matches!(
        ty,
        PrimitiveType::BF16
            | PrimitiveType::F16
            | PrimitiveType::F32
            | PrimitiveType::F64
            | PrimitiveType::F4E2M1FN
            // Rounded to the nearest code (ties to even), as ml_dtypes rounds them for the
            // GPU bundles. f8e8m0fnu, which has no zero and no sign, is left out.
            | PrimitiveType::F8E3M4
            | PrimitiveType::F8E4M3
            | PrimitiveType::F8E4M3FN
            | PrimitiveType::F8E4M3B11FNUZ
            | PrimitiveType::F8E4M3FNUZ
            | PrimitiveType::F8E5M2
            | PrimitiveType::F8E5M2FNUZ
            // The drawn value is the real part; the imaginary part is 0.
            | PrimitiveType::C64
            | PrimitiveType::C128
    ) {
        let (lo, hi) = range.float_bounds();
        let (low, high) = ((lo / FLOAT_SCALE).ceil(), (hi / FLOAT_SCALE).floor());
        // Every k/64 with |k| <= 256 is exact in a type of 8 or more significant bits (bf16 and
        // wider); f4 and f8 take the nearest code to it (ties to even).
        if low > high || low < -256.0 || high > 256.0 {
            return Err(format!("drawing {ty} values in [{lo}, {hi}]"));
        }
        (low as i128, high as i128)
    } else {
        return Err(format!("element type {ty}"));
    };
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

/// An array of `shape` whose every element is `v` (`±inf` is an integer type's extreme).
pub(crate) fn filled(shape: &ArrayShape, v: f64) -> Result<HostArray, String> {
    let count = shape.element_count() as usize;
    let value = if shape.element_type.is_float() {
        Value::Float(v)
    } else if v.is_infinite() {
        let (min, max) = RandomRange::Between(v, v).int_bounds(shape.element_type);
        Value::Int(if v < 0.0 { min } else { max })
    } else {
        Value::Int(v as i128)
    };
    let elements = Elements::from_values(shape.element_type, count, |_| value)?;
    HostArray::new(shape.dims.clone(), elements)
}

/// The one value every element of an ENTRY `constant` holds (as its type rounds it), when
/// there is one and a buffer can be filled with it: a float, or an integer that an `f64`
/// holds exactly. XLA's printed ENTRYs pass such scalars (a reduce's init value, `-inf`)
/// to their fusions.
fn uniform_constant(instr: &hlo::Instruction) -> Option<f64> {
    let array = instr.shape.as_array()?;
    let value = HostValue::from_literal(instr.literal()?, &instr.shape).ok()?;
    let HostValue::Array(values) = value else {
        return None;
    };
    let first = values.value(0);
    if (1..values.len()).any(|i| values.value(i) != first) {
        return None;
    }
    match first {
        Value::Float(f) if array.element_type.is_float() => Some(f),
        Value::Int(i) if array.element_type.is_int() && i.unsigned_abs() < 1 << 53 => {
            Some(i as f64)
        }
        _ => None,
    }
}

/// The evaluator's value of every buffer, in buffer order.
pub(crate) fn evaluate_chain(
    source: &SourceFile,
    module: &HloModule,
    chain: &Chain,
) -> Result<Vec<HostArray>, String> {
    let mut values: Vec<Option<HostArray>> = Vec::with_capacity(chain.buffers.len());
    for buffer in &chain.buffers {
        values.push(match buffer.init {
            Init::Draw { seed, low, high } => Some(drawn(&buffer.shape, seed, low, high)?),
            Init::Constant(v) => Some(filled(&buffer.shape, v)?),
            Init::Values(ref v) => Some(v.clone()),
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

/// `k_i` of a draw (see [`crate::bundle`]).
pub(crate) fn draw(seed: u64, low: i128, high: i128, i: u64) -> i128 {
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

pub(crate) fn minor_to_major(shape: &ArrayShape) -> Vec<i64> {
    match &shape.layout {
        Some(l) => l.minor_to_major.clone(),
        None => (0..shape.dims.len() as i64).rev().collect(),
    }
}

/// The bytes of a buffer of `shape`: `pred` takes a byte, `s2`/`s4`/`u2`/`u4` are packed.
pub(crate) fn byte_size(shape: &ArrayShape) -> Result<u64, String> {
    let bits = u64::from(shape.element_type.bit_width());
    let count = shape.element_count().max(0) as u64;
    match shape.element_type {
        PrimitiveType::Pred => Ok(count),
        PrimitiveType::S2 | PrimitiveType::U2 | PrimitiveType::S4 | PrimitiveType::U4 => {
            Ok((count * bits).div_ceil(8))
        }
        _ if bits.is_multiple_of(8) => Ok(count * bits / 8),
        other => Err(format!("element type {other}")),
    }
}

/// `--launch-json`: every compiled kernel's launch dimensions, what is left to the runtime,
/// and the launch sequence when `kernels` are all of the module's fusions: `launches` (in
/// order, each kernel's argument and output buffers), `buffers` (name, element type,
/// dims, `minor_to_major`, bytes) and the ENTRY's `parameters` and `results` (buffer
/// indices; empty when the fusions are launched separately, each on its own inputs, and
/// then `note` says why). With `--fusion`, `launches` is null.
pub fn launch_json(
    source: &SourceFile,
    module: &HloModule,
    kernels: &[CompiledKernel],
    runtime: &[RuntimeStep],
) -> String {
    let kernel_lines: Vec<String> = kernels
        .iter()
        .map(|k| {
            let l = &k.launch;
            let mut line = json!({
                "kernel": k.kernel,
                "fusion": k.fusion,
                "grid": l.grid(),
                "block": [l.threads_per_block, 1, 1],
                "shared_memory_bytes": l.shared_memory_bytes,
            });
            // Outputs written in place: [output, parameter], the output starting as the
            // parameter's elements.
            if !k.in_place.is_empty() {
                line["in_place"] = json!(k.in_place);
            }
            one_line(&line)
        })
        .collect();
    let runtime_lines: Vec<String> = runtime
        .iter()
        .map(|r| {
            let mut step = json!({
                "instruction": r.instruction,
                "opcode": r.opcode,
                "computation": r.computation,
            });
            if let Some(target) = &r.target {
                step["target"] = json!(target);
            }
            one_line(&step)
        })
        .collect();
    let mut text = format!(
        "{{\"kernels\": {}, \"left_to_runtime\": {},\n",
        lines(&kernel_lines),
        lines(&runtime_lines)
    );
    let all = kernels.len() == emitters::fusions(module).len();
    let sequence = if all {
        plan_chain(source, module)
    } else {
        Err("one fusion was compiled (--fusion): no launch sequence".to_string())
    };
    match sequence {
        Ok(chain) => {
            let names = emitters::kernel_names(module);
            // A kernel launched from control flow is listed under that instruction, a step
            // left to the runtime: `{"runtime": "while.5", "opcode": "while", "launches":
            // [... each with "in": "body region_0.2"]}`, at its first kernel's place.
            let mut launches: Vec<Json> = Vec::new();
            for k in &chain.kernels {
                let mut launch = json!({
                    "kernel": names.get(&k.fusion),
                    "arguments": k.arguments,
                    "outputs": k.outputs,
                });
                let Some(within) = launched_within(module, k.fusion) else {
                    launches.push(launch);
                    continue;
                };
                launch["in"] = json!(format!("{} {}", within.role, within.computation));
                let step = launches
                    .iter()
                    .position(|s| s["runtime"] == json!(within.instruction));
                let step = step.unwrap_or_else(|| {
                    launches.push(json!({
                        "runtime": within.instruction,
                        "opcode": within.opcode,
                        "launches": [],
                    }));
                    launches.len() - 1
                });
                if let Some(Json::Array(inner)) = launches[step].get_mut("launches") {
                    inner.push(launch);
                }
            }
            let launches: Vec<String> = launches.iter().map(one_line).collect();
            let buffers: Vec<String> = chain
                .buffers
                .iter()
                .map(|b| {
                    one_line(&json!({
                        "name": b.name,
                        "type": b.shape.element_type.to_string(),
                        "dims": b.shape.dims,
                        "minor_to_major": minor_to_major(&b.shape),
                        "bytes": byte_size(&b.shape).ok(),
                    }))
                })
                .collect();
            text.push_str(&format!(
                "\"launches\": {},\n\"buffers\": {},\n\"parameters\": {}, \"results\": {}, \"note\": {}}}\n",
                lines(&launches),
                lines(&buffers),
                one_line(&json!(chain.parameters)),
                one_line(&json!(chain.results)),
                one_line(&json!(chain.note)),
            ));
        }
        Err(why) => text.push_str(&format!(
            "\"launches\": null, \"note\": {}}}\n",
            one_line(&json!(why.trim_start_matches("error: ").lines().next()))
        )),
    }
    text
}

/// The control-flow instruction that launches a kernel (see [`launched_within`]).
struct LaunchedWithin {
    /// Its name (`while.5`) and opcode.
    instruction: String,
    opcode: String,
    /// The attribute that names the launching computation (`body`, `condition`,
    /// `branch_computations`, `to_apply`) and that computation's name.
    role: String,
    computation: String,
}

/// Where the kernel of `fusion` is launched when not from the ENTRY: the control-flow
/// instruction that runs the computation holding its `fusion` instruction (`while.5`, its
/// `body` `region_0.2`); `None` from the ENTRY (or for a bare fusion body).
fn launched_within(module: &HloModule, fusion: ComputationId) -> Option<LaunchedWithin> {
    let launching = module.computations.iter().position(|c| {
        c.instructions
            .iter()
            .any(|i| i.opcode == Opcode::Fusion && i.called("calls").map(|r| r.id) == Some(fusion))
    })?;
    let launching = ComputationId(launching);
    if launching == module.entry {
        return None;
    }
    let calls_it = |value: &hlo::AttrValue| match value {
        hlo::AttrValue::Computation(c) => c.id == launching,
        hlo::AttrValue::Computations(cs) => cs.iter().any(|c| c.id == launching),
        _ => false,
    };
    module.computations.iter().find_map(|c| {
        c.instructions.iter().find_map(|i| {
            let role = i.attributes.iter().find(|a| calls_it(&a.value))?;
            Some(LaunchedWithin {
                instruction: i.name.clone(),
                opcode: i.opcode.to_string(),
                role: role.name.clone(),
                computation: module.computation(launching).name.clone(),
            })
        })
    })
}

/// The kernel name of `fusion`, or an error naming the computation: only the module's
/// fusions have kernels.
pub(crate) fn kernel_name<'a>(
    module: &HloModule,
    names: &'a HashMap<ComputationId, String>,
    fusion: ComputationId,
) -> Result<&'a String, String> {
    names.get(&fusion).ok_or_else(|| {
        format!(
            "error: computation '{}' is not one of the module's fusions: it has no kernel",
            module.computation(fusion).name
        )
    })
}

/// `[\n  a,\n  b\n]` (one entry per line), or `[]`.
fn lines(entries: &[String]) -> String {
    if entries.is_empty() {
        "[]".to_string()
    } else {
        format!("[\n  {}\n]", entries.join(",\n  "))
    }
}

/// A JSON value on one line, with a space after each `:` and `,` as people write it.
fn one_line(value: &Json) -> String {
    match value {
        Json::Array(items) => {
            let items: Vec<String> = items.iter().map(one_line).collect();
            format!("[{}]", items.join(", "))
        }
        Json::Object(fields) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|(k, v)| format!("{}: {}", Json::String(k.clone()), one_line(v)))
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        scalar => scalar.to_string(),
    }
}

/// `--check` on a whole program: the kernels of `module` run in launch order in the
/// interpreter, each reading the buffers earlier ones wrote, from the module a user runs
/// (`linked`: every kernel of `kernels` linked into one module, translated to LLVM IR and
/// optimized at O3 with libdevice, in the run that `--check` checked stage by stage: what
/// becomes PTX); the ENTRY's results are compared with the evaluator's on `reference` (the
/// module before the fusion pipeline, or `module` itself). This checks what a per-fusion
/// check cannot: the fusion pipeline, and that the kernels pass their buffers as the ENTRY
/// says. `Ok(true)` when it matches or when the ENTRY is not a chain of fusions (then
/// nothing is run, and the report says why, unless the module is a single fusion as in
/// XLA's emitter tests: the fusion's own check is the program's). `inputs` seeded inputs.
pub fn check_program(
    source: &SourceFile,
    (reference, module): (&HloModule, &HloModule),
    (kernels, linked): (&[CompiledKernel], Option<&ir::Module>),
    inputs: u64,
    out: &mut dyn Write,
) -> Result<bool, String> {
    let not_run = |out: &mut dyn Write, why: &str| {
        writeln!(out, "check: program: not run as a whole: {why}")
            .map_err(|e| format!("error: cannot write the report: {e}"))
    };
    let chain = match plan_chain(source, module) {
        Ok(chain) => chain,
        // What the program's buffers cannot hold (an f8 parameter to draw): the fusions'
        // own checks stand, as for a module that is not a chain of fusions.
        Err(why) => {
            // A note, not an error: the located reason without its `error:` tag.
            not_run(out, &why.replacen(": error: ", ": ", 1))?;
            return Ok(true);
        }
    };
    if chain.separate {
        // Without a note the module is its one fusion, which the fusion check has run.
        if let Some(why) = chain.note {
            not_run(out, &why)?;
        }
        return Ok(true);
    }
    let Some(linked) = linked else {
        not_run(
            out,
            "the pass pipeline does not reach LLVM (it ends before 'lower-to-llvm')",
        )?;
        return Ok(true);
    };
    let entry = reference.computation(reference.entry);
    fits_the_host(source, entry, "check", inputs)?;
    let names = emitters::kernel_names(module);
    let mut launches = Vec::new();
    for kernel in &chain.kernels {
        let name = kernel_name(module, &names, kernel.fusion)?;
        let compiled = kernels
            .iter()
            .find(|k| &k.kernel == name)
            .ok_or_else(|| format!("error: kernel {name} was not compiled"))?;
        let launch = Launch {
            blocks: compiled.launch.blocks,
            threads: compiled.launch.threads_per_block,
        };
        let code = Kernel::compile(linked, name).map_err(|e| format!("error: {name}: {e}"))?;
        launches.push((name, launch, code, compiled.in_place.clone()));
    }
    let reduced = chain
        .results
        .iter()
        .map(|&b| chain.buffers[b].reduced)
        .max();
    let reduced = reduced.unwrap_or(1);
    let mut c = Comparison::new();
    for seed in 0..inputs {
        let located = |d: hlo::Diagnostic| d.render(source);
        let args = fusion_arguments(reference, reference.entry, seed).map_err(located)?;
        let expected = Reference::of(reference, reference.entry, &args).map_err(located)?;
        let mut buffers: Vec<Option<Buffer>> = chain.buffers.iter().map(|_| None).collect();
        if args.len() != chain.parameters.len() {
            return Err(format!(
                "error: the fused ENTRY has {} parameters, the unfused one {}",
                chain.parameters.len(),
                args.len()
            ));
        }
        for (b, buffer) in chain.buffers.iter().enumerate() {
            if let Init::Constant(v) = buffer.init {
                let array = filled(&buffer.shape, v)?;
                buffers[b] = Some(Buffer::from_host_array(
                    &array,
                    buffer.shape.layout.as_ref(),
                )?);
            }
        }
        for (arg, &b) in args.iter().zip(&chain.parameters) {
            let HostValue::Array(array) = arg else {
                return Err("error: a tuple parameter in a launch sequence".to_string());
            };
            buffers[b] = Some(Buffer::from_host_array(
                array,
                chain.buffers[b].shape.layout.as_ref(),
            )?);
        }
        for (kernel, (name, launch, code, in_place)) in chain.kernels.iter().zip(&launches) {
            let mut arguments = Vec::new();
            for &b in &kernel.arguments {
                let buffer = buffers[b].clone().ok_or_else(|| {
                    format!("error: kernel {name} reads buffer {b} before it is written")
                })?;
                arguments.push(buffer);
            }
            for (k, &b) in kernel.outputs.iter().enumerate() {
                // An output written in place starts as a copy of its parameter's buffer.
                let buffer = match in_place.iter().find(|&&(output, _)| output == k) {
                    Some(&(_, param)) => arguments[param].clone(),
                    None => unwritten_output(&chain.buffers[b].shape)?,
                };
                arguments.push(buffer);
            }
            let run = code
                .run(*launch, arguments)
                .map_err(|e| format!("error: kernel {name} fails in the interpreter: {e}"))?;
            c.ops += run.ops;
            let first_output = run.buffers.len() - kernel.outputs.len();
            for (&b, buffer) in kernel.outputs.iter().zip(&run.buffers[first_output..]) {
                buffers[b] = Some(buffer.clone());
            }
        }
        for (k, (&b, want)) in chain.results.iter().zip(&expected.values).enumerate() {
            let got = buffers[b]
                .as_ref()
                .ok_or_else(|| format!("error: result {k} is never written"))?
                .to_host_array(&chain.buffers[b].shape)
                .map_err(|m| format!("result {k}: {m}"))?;
            compare_array(&mut c, (seed, k), reduced, &got, want, expected.slack(k));
        }
    }
    let summary = c.summary();
    let against = if std::ptr::eq(reference, module) {
        "the evaluator on the ENTRY"
    } else {
        "the evaluator on the unfused module"
    };
    let report = |out: &mut dyn Write, line: String| {
        writeln!(out, "{line}").map_err(|e| format!("error: cannot write the report: {e}"))
    };
    let launches = match chain.kernels.len() {
        1 => "1 kernel launch".to_string(),
        n => format!("{n} kernel launches in order"),
    };
    let head = format!("check: program: {launches}, the linked module after O3, against {against}");
    let Some(m) = c.mismatch else {
        report(out, format!("{head}: {summary}: ok"))?;
        return Ok(true);
    };
    report(out, format!("{head}: {summary}: MISMATCH"))?;
    let b = chain.results[m.output];
    report(
        out,
        format!(
            "error: the program's result {} ('{}') element [{}], input seed {}: got {}, expected {}",
            m.output,
            chain.buffers[b].name,
            show_index(&m.index),
            m.seed,
            show(&m.got),
            show(&m.want)
        ),
    )?;
    Ok(false)
}
