//! Reading the ENTRY as a chain of kernels and buffers (see the module documentation).

use std::collections::HashMap;

use hlo::evaluate::{HostValue, RandomRange, unique_scatter_indices};
use hlo::graph::ComputationGraph;
use hlo::{
    ArrayShape, ComputationId, HloModule, InstrId, Opcode, PrimitiveType, SourceFile, Value,
};

use super::{BufferPlan, Chain, FLOAT_SCALE, HostStep, Init, KernelPlan, byte_size};
use crate::check::{Sensitivity, leaves};

/// Reads the ENTRY as a chain of kernels (see the module documentation), for a GPU bundle
/// or the launch JSON: an instruction no kernel computes breaks the chain.
pub(crate) fn plan_chain(source: &SourceFile, module: &HloModule) -> Result<Chain, String> {
    plan(source, module, false)
}

/// [`plan_chain`] for `--check`: an instruction that the runtime runs and the evaluator
/// computes ([`evaluated_on_host`]) is a [`HostStep`] between the kernels, so the program
/// is still checked as a whole.
pub(crate) fn plan_checked_chain(source: &SourceFile, module: &HloModule) -> Result<Chain, String> {
    plan(source, module, true)
}

fn plan(source: &SourceFile, module: &HloModule, host_steps: bool) -> Result<Chain, String> {
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
    if let Some(instr) = chain_breaker(entry, host_steps) {
        let mut chain = plan_separate(source, module, &emitters::fusions(module))?;
        chain.note = Some(format!(
            "the ENTRY is not a chain of fusions (instruction '{}' is {}): each fusion runs on its own drawn inputs",
            instr.name, instr.opcode
        ));
        return Ok(chain);
    }
    // No fusion and no kernel: the results are parameters and constants (empty arrays
    // made constants by `zero-sized-hlo-elimination`); the chain has no kernel.
    if !has_fusions && !emitters::fusions(module).is_empty() {
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
            sensitivity: Sensitivity::NONE,
        });
    }
    for id in ComputationGraph::new(entry).post_order() {
        let instr = entry.instruction(id);
        match instr.opcode {
            Opcode::Parameter => {}
            Opcode::Constant if uniform_constant(instr).is_some() || !host_steps => {
                let value = uniform_constant(instr)
                    .ok_or_else(|| refuse(instr, "a constant whose elements differ"))?;
                let shape = array_shape(instr).map_err(|what| refuse(instr, &what))?;
                held.insert(id, vec![chain.buffers.len()]);
                chain.buffers.push(BufferPlan {
                    name: instr.name.clone(),
                    shape,
                    init: Init::Constant(value),
                    sensitivity: Sensitivity::NONE,
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
                let sensitivity =
                    upstream(&chain, &arguments).join(Sensitivity::of(module.computation(fusion)));
                let kernel = chain.kernels.len();
                let tuple = instr.shape.as_array().is_none();
                let mut outputs = Vec::new();
                for (index, shape) in leaves(&instr.shape).into_iter().enumerate() {
                    outputs.push(chain.buffers.len());
                    chain.buffers.push(BufferPlan {
                        name: leaf_name(&instr.name, index, tuple),
                        shape,
                        init: Init::Output { kernel, index },
                        sensitivity,
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
                        "a get-tuple-element of something other than a fusion or a tuple",
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
            _ if host_steps && evaluated_on_host(entry, instr) => {
                let arguments: Vec<usize> = instr
                    .operands
                    .iter()
                    .map(|o| match held.get(o).map(Vec::as_slice) {
                        Some(&[b]) => Ok(b),
                        _ => Err(refuse(instr, "an operand that is a tuple")),
                    })
                    .collect::<Result<_, _>>()?;
                let sensitivity = upstream(&chain, &arguments).join(Sensitivity {
                    reduced: terms_per_element(entry, instr),
                    approximated: None,
                });
                let tuple = instr.shape.as_array().is_none();
                let mut outputs = Vec::new();
                for (index, shape) in leaves(&instr.shape).into_iter().enumerate() {
                    byte_size(&shape).map_err(|what| refuse(instr, &what))?;
                    outputs.push(chain.buffers.len());
                    chain.buffers.push(BufferPlan {
                        name: leaf_name(&instr.name, index, tuple),
                        shape,
                        init: Init::Host,
                        sensitivity,
                    });
                }
                held.insert(id, outputs.clone());
                chain.host_steps.push(HostStep {
                    instruction: id,
                    arguments,
                    outputs,
                    after: chain.kernels.len(),
                });
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
fn chain_breaker(entry: &hlo::Computation, host_steps: bool) -> Option<&hlo::Instruction> {
    let breakers = entry
        .instructions
        .iter()
        .filter(|instr| match instr.opcode {
            _ if host_steps && evaluated_on_host(entry, instr) => false,
            Opcode::Parameter | Opcode::Tuple => false,
            Opcode::Constant => uniform_constant(instr).is_none(),
            Opcode::Fusion => instr
                .operands
                .iter()
                .any(|&o| entry.instruction(o).shape.as_array().is_none()),
            // Of a fusion's outputs, of a tuple of arrays (a call's results inlined), or of
            // what the host computes (CUB's sort of keys and values).
            Opcode::GetTupleElement => {
                let of = entry.instruction(instr.operands[0]);
                let tuple_of_arrays = of.opcode == Opcode::Tuple
                    && of
                        .operands
                        .iter()
                        .all(|&o| entry.instruction(o).shape.as_array().is_some());
                let on_host = host_steps && evaluated_on_host(entry, of);
                of.opcode != Opcode::Fusion && !tuple_of_arrays && !on_host
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

/// Whether `--check` runs `instr`, an ENTRY instruction no kernel computes, in the evaluator
/// as a [`HostStep`]: an array computed from array operands by what the evaluator knows
/// (a matrix product, a convolution, a copy, a constant, data movement or elementwise math
/// left unfused), or CUB's radix sort (XLA's custom-call, keys and values);
/// not control flow, whose computations launch kernels of their own, nor another custom
/// call.
fn evaluated_on_host(entry: &hlo::Computation, instr: &hlo::Instruction) -> bool {
    use Opcode::*;
    let op = instr.opcode;
    let known = op.is_elementwise_unary()
        || op.is_elementwise_binary()
        || matches!(
            op,
            Dot | Convolution
                | Copy
                | Constant
                | Convert
                | BitcastConvert
                | Compare
                | Select
                | Clamp
                | Broadcast
                | Reshape
                | Bitcast
                | Transpose
                | Slice
                | Reverse
                | Pad
                | Concatenate
                | DynamicSlice
                | DynamicUpdateSlice
                | Gather
                | Iota
                | Reduce
                | ReduceWindow
                | Scatter
        );
    let cub_sort = instr.is_cub_sort_call()
        && matches!(&instr.shape, hlo::Shape::Tuple(t) if t.iter().all(|l| l.as_array().is_some()));
    (known && instr.shape.as_array().is_some() || cub_sort)
        && instr
            .operands
            .iter()
            .all(|&o| entry.instruction(o).shape.as_array().is_some())
}

/// How many terms make each element of `instr`'s result (a matrix product's contracted
/// size, a reduce's reduced elements): the tolerance factor of what it computes.
fn terms_per_element(entry: &hlo::Computation, instr: &hlo::Instruction) -> u64 {
    let count = |id: InstrId| {
        entry
            .instruction(id)
            .shape
            .as_array()
            .map_or(1, |a| a.element_count().max(1))
    };
    let terms = match instr.opcode {
        Opcode::Dot => {
            let lhs = entry.instruction(instr.operands[0]).shape.as_array();
            let contracting = instr.int_list("lhs_contracting_dims").unwrap_or_default();
            lhs.map_or(1, |a| {
                contracting
                    .iter()
                    .filter_map(|&d| a.dims.get(d as usize))
                    .product::<i64>()
            })
        }
        Opcode::Reduce => {
            let result = instr
                .shape
                .as_array()
                .map_or(1, |a| a.element_count().max(1));
            count(instr.operands[0]) / result
        }
        _ => 1,
    };
    terms.max(1) as u64
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
                sensitivity: Sensitivity::NONE,
            });
        }
        let sensitivity = Sensitivity::of(computation);
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
                sensitivity,
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
    if values.is_empty() {
        // No element: any value is every element's.
        return Some(0.0);
    }
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

/// What the buffers `arguments` of `chain` were computed from, together.
fn upstream(chain: &Chain, arguments: &[usize]) -> Sensitivity {
    arguments
        .iter()
        .map(|&b| chain.buffers[b].sensitivity)
        .fold(Sensitivity::NONE, Sensitivity::join)
}
