//! The reference evaluator: runs an HLO computation on host arrays with XLA's semantics,
//! the meaning emitted kernels are checked against.
//!
//! Whole arrays are computed op by op in post-order (an operand's array is freed after its
//! last use), never element by element through recursion, so a fusion over millions of
//! elements takes seconds. The module is expected to have passed the verifier.
//!
//! **Values.** [`HostArray`]s hold pred, s2, s4, s8–s64, u2, u4, u8–u64, f4e2m1fn, the f8
//! family, f16, bf16, f32, f64 or c64 elements in logical row-major order; [`HostValue`]
//! adds tuples. Other element types (c128, s1/u1) and ops the emitters do not compile are refused with an
//! `unsupported: ...` [`Diagnostic`] at the instruction.
//!
//! **Semantics**, the ones XLA defines and the elemental emitter implements:
//! * **Integers** wrap around. `x / 0` is -1 (all ones when unsigned), `x % 0` is `x`,
//!   `INT_MIN / -1` is `INT_MIN` and `INT_MIN % -1` is 0. Shift amounts are read as
//!   unsigned; amounts of the bit width or more give 0 (`shift-right-arithmetic`: the sign
//!   fill, which replicates the top bit of unsigned types too). `power` on integers is
//!   refused, as the emitters refuse it.
//! * **pred**: `add`/`maximum`/`or` are or, `multiply`/`minimum`/`and` are and.
//! * **Floats and rounding**: f16 and bf16 ops compute in f32 and round to the type after
//!   every op (reductions: after every reducer step), as XLA's evaluator does; f32
//!   computes in f32 with std's f32 functions (`rsqrt` is `1 / sqrt`, `logistic` is
//!   `1 / (1 + exp(-x))`), f64 in f64. `erf`, which std lacks, is computed in f64 (relative
//!   error ~1e-14) and rounded once. `maximum`/`minimum` propagate NaN and order -0 below
//!   +0 (MLIR's `arith.maximumf`/`minimumf`). `sign` is ±1, or the operand itself for ±0
//!   and NaN.
//! * **compare**: NE is unordered (true with a NaN), the other directions ordered;
//!   `type=TOTALORDER` uses XLA's total order (-NaN < -inf < … < -0 < +0 < … < inf < NaN).
//!   Integers compare by their type's signedness, pred as false < true.
//! * **convert**: integers truncate or extend by the source's signedness; floats to
//!   integers saturate (NaN → 0, out of range → the type's min/max, otherwise toward
//!   zero); anything to pred is `x != 0` (NaN → true); pred to numbers is 0/1. f16 and
//!   bf16 are reached through f32 from every type (integers, f64 and each other), as
//!   Eigen's conversions in XLA's evaluator do. `bitcast-convert` reinterprets the bits of
//!   types of one width.
//! * **Constants**: the written f64 converted like `convert` (to f16/bf16 through f32).
//! * **Layouts** matter only to `bitcast`, which reads the operand's physical buffer
//!   (its elements placed by its layout, tiles included) through the result's layout;
//!   padding reads as zero.
//! * **dynamic-slice, dynamic-update-slice and gather** clamp their start indices into
//!   the operand (`[0, dim - size]`, `size` the slice's or the update's); gather must be
//!   in XLA's canonical form (indices `[batch, k]`, `index_vector_dim=1`,
//!   `offset_dims={1..rank}`, no collapsed or batching dimensions).
//! * **Reduction order**: for each output element, the reduced elements are combined in
//!   row-major order of the reduced dimensions (the last reduced dimension fastest),
//!   starting from the init value — `f(…f(f(init, x₀), x₁)…, xₙ₋₁)` — which is the order
//!   of the loop emitter's nested loops. `reduce-window` combines the window's elements
//!   the same way (row-major over the window), skipping positions that fall on padding or
//!   between base-dilated elements, as XLA's evaluator does. Reducers and `map`
//!   computations are evaluated on whole vectors of element positions at once, which
//!   computes exactly what one call per element would.
//! * **convolution** (floats): per output element, the window's products summed in f64 and
//!   rounded once (XLA:GPU hands it to cuDNN, whose order is its own).
//! * **dot**: per result element, `acc += lhs * rhs` over the contracted dimensions in
//!   row-major order from 0, in the result's type (bf16 in f32, rounded at the end), as
//!   XLA's elemental emitter loops.
//! * `call` and `fusion` evaluate the called computation; `while` runs its body while its
//!   condition holds (at most [`MAX_LOOP_ITERATIONS`] times, refused past that);
//!   `conditional` runs the branch its predicate or index picks (an index out of range
//!   picks the last).
//!
//! Seeded random inputs come from [`random_arguments`], [`random_value`] and
//! [`random_array`], with ranges chosen by [`RandomRange`].

mod approximated;
mod complex;
mod convolution;
mod dot;
mod elementwise;
mod math;
mod movement;
mod narrow_float;
mod random;
mod reduce;
mod scatter;
mod sort;
mod sub_byte;
mod value;
mod window;

pub use approximated::is_approximated;
pub use complex::{C64, C128, Complex};
pub use elementwise::integer_power;
pub use math::erf;
pub use narrow_float::{
    F4E2M1FN, F8E3M4, F8E4M3, F8E4M3B11FNUZ, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0FNU,
};
pub use random::{
    RandomRange, fusion_arguments, random_arguments, random_array, random_value,
    unique_scatter_indices,
};
pub use sub_byte::{S2, S4, U2, U4};
pub use value::{Elements, HostArray, HostValue};

use crate::diag::Diagnostic;
use crate::graph::ComputationGraph;
use crate::module::{AttrValue, Computation, ComputationId, HloModule, InstrId, Instruction};
use crate::opcode::Opcode;
use crate::shape::Shape;

type R<T> = Result<T, Diagnostic>;

/// Runs `computation` of `module` on `args` (one per parameter, in parameter order).
pub fn evaluate(
    module: &HloModule,
    computation: ComputationId,
    args: &[HostValue],
) -> R<HostValue> {
    evaluate_with(module, computation, args, 0.0)
}

/// [`evaluate`] with float sums pushed in the direction `push_sums` (0: not at all).
fn evaluate_with(
    module: &HloModule,
    computation: ComputationId,
    args: &[HostValue],
    push_sums: f64,
) -> R<HostValue> {
    let c = module.computations.get(computation.0).ok_or_else(|| {
        Diagnostic::new(
            Default::default(),
            format!("the module has no computation #{}", computation.0),
        )
    })?;
    check_arguments(c, args)?;
    let evaluator = Evaluator {
        module,
        lanes: None,
        push_sums,
    };
    evaluator.run(computation, args.to_vec())
}

/// [`evaluate_fusion`] with the result of every float `reduce` whose reducer adds pushed by
/// the bound on its rounding error in the direction `sign` (+1 or -1): `(n - 1) u` times the
/// sum of the magnitudes of its `n` terms (the init value included), the bound of any
/// summation order in the reduction's type (`u` its unit roundoff; Higham, *Accuracy and
/// Stability of Numerical Algorithms*, 4.2). How far the fusion's outputs move tells how
/// much a correct kernel, which sums in another order, may differ from [`evaluate_fusion`]:
/// an output that divides by a sum of terms of both signs moves a lot, one that only adds
/// up positive terms hardly at all.
pub fn evaluate_fusion_with_sums_pushed(
    module: &HloModule,
    fusion: ComputationId,
    args: &[HostValue],
    sign: f64,
) -> R<Vec<HostArray>> {
    Ok(evaluate_with(module, fusion, args, sign)?.into_leaves())
}

/// Runs a fusion computation on one value per parameter and returns its outputs: the root
/// array, or the arrays of a multi-output fusion's tuple in order.
pub fn evaluate_fusion(
    module: &HloModule,
    fusion: ComputationId,
    args: &[HostValue],
) -> R<Vec<HostArray>> {
    Ok(evaluate(module, fusion, args)?.into_leaves())
}

/// Runs one instruction of `computation` on values of its operands: what a runtime does
/// with an instruction no kernel computes (a matrix product handed to a library).
pub fn evaluate_instruction(
    module: &HloModule,
    computation: ComputationId,
    instr: InstrId,
    operands: &[HostValue],
) -> R<HostValue> {
    let c = module.computation(computation);
    let instr = c.instruction(instr);
    check_element_types(&instr.shape).map_err(|m| located(instr, m))?;
    let evaluator = Evaluator {
        module,
        lanes: None,
        push_sums: 0.0,
    };
    let operands: Vec<&HostValue> = operands.iter().collect();
    evaluator.instruction(c, instr, &operands)
}

/// Every parameter has an argument of its shape (layouts aside).
fn check_arguments(computation: &Computation, args: &[HostValue]) -> R<()> {
    let params = computation.parameters();
    if params.len() != args.len() {
        return Err(Diagnostic::new(
            computation.span,
            format!(
                "computation '{}' has {} parameters but {} arguments were given",
                computation.name,
                params.len(),
                args.len()
            ),
        ));
    }
    for (i, (&p, arg)) in params.iter().zip(args).enumerate() {
        let param = computation.instruction(p);
        if !arg.shape().compatible(&param.shape) {
            return Err(Diagnostic::new(
                param.spans.whole,
                format!(
                    "argument {i} has shape {} but parameter '{}' is {}",
                    arg.shape(),
                    param.name,
                    param.shape.without_layout()
                ),
            ));
        }
    }
    Ok(())
}

/// The most iterations the evaluator runs one loop for.
pub const MAX_LOOP_ITERATIONS: u64 = 100_000;

/// The truth of a scalar `pred` value (a loop's condition).
fn scalar_truth(value: &HostValue) -> Result<bool, String> {
    match value
        .as_array()
        .filter(|a| a.len() == 1)
        .map(|a| a.value(0))
    {
        Some(crate::literal::Value::Pred(p)) => Ok(p),
        _ => Err("a loop condition that is not a scalar pred".to_string()),
    }
}

/// A diagnostic at `instr` whose message ends by naming it.
fn located(instr: &Instruction, message: impl std::fmt::Display) -> Diagnostic {
    Diagnostic::new(instr.spans.whole, format!("{message} in '{}'", instr.name))
}

/// The array inside an operand value.
fn array(value: &HostValue) -> Result<&HostArray, String> {
    value
        .as_array()
        .ok_or_else(|| "expected an array operand, got a tuple".to_string())
}

fn int_list<'a>(instr: &'a Instruction, name: &str) -> Result<&'a [i64], String> {
    instr
        .int_list(name)
        .ok_or_else(|| format!("missing {name}= attribute"))
}

/// Leaves of `shape` whose element type the evaluator cannot hold.
fn check_element_types(shape: &Shape) -> Result<(), String> {
    match shape {
        Shape::Array(a) if value::is_supported_type(a.element_type) => Ok(()),
        Shape::Array(a) => Err(value::unsupported_type(a.element_type)),
        Shape::Tuple(elements) => elements.iter().try_for_each(check_element_types),
    }
}

/// A computation's instructions in evaluation order (operands first, ending at the root)
/// and how many uses each has among them; computed once for a reducer run at every step.
struct Plan {
    order: Vec<InstrId>,
    uses: Vec<usize>,
}

impl Plan {
    fn new(computation: &Computation) -> Plan {
        let order = ComputationGraph::new(computation).post_order();
        let mut uses = vec![0; computation.instructions.len()];
        for &id in &order {
            for operand in &computation.instruction(id).operands {
                uses[operand.0] += 1;
            }
        }
        Plan { order, uses }
    }
}

struct Evaluator<'m> {
    module: &'m HloModule,
    /// `Some(n)` while evaluating a scalar computation for `n` element positions at once
    /// (reducers, `map`): each rank-0 value is then an array of `n` lanes.
    lanes: Option<usize>,
    /// 0, or the direction in which float sums are pushed by their rounding bound (see
    /// [`evaluate_fusion_with_sums_pushed`]).
    push_sums: f64,
}

impl<'m> Evaluator<'m> {
    /// An evaluator of the scalar computations an op applies per element (reducers,
    /// combiners) for `n` element positions at once. It pushes no sums: where sums are
    /// pushed, the reduction pushes its whole result.
    fn for_lanes(&self, n: usize) -> Evaluator<'m> {
        Evaluator {
            module: self.module,
            lanes: Some(n),
            push_sums: 0.0,
        }
    }

    fn run(&self, id: ComputationId, args: Vec<HostValue>) -> R<HostValue> {
        let computation = self.module.computation(id);
        self.run_plan(computation, &Plan::new(computation), args)
    }

    fn run_plan(
        &self,
        computation: &Computation,
        plan: &Plan,
        args: Vec<HostValue>,
    ) -> R<HostValue> {
        let mut args: Vec<Option<HostValue>> = args.into_iter().map(Some).collect();
        let mut uses = plan.uses.clone();
        let mut values: Vec<Option<HostValue>> = vec![None; computation.instructions.len()];
        for &id in &plan.order {
            let instr = computation.instruction(id);
            check_element_types(&instr.shape).map_err(|m| located(instr, m))?;
            let value = if instr.opcode == Opcode::Parameter {
                take_argument(instr, &mut args)?
            } else {
                let operands: Vec<&HostValue> = instr
                    .operands
                    .iter()
                    .map(|o| values[o.0].as_ref().expect("operands are evaluated first"))
                    .collect();
                self.instruction(computation, instr, &operands)?
            };
            for operand in &instr.operands {
                uses[operand.0] -= 1;
                if uses[operand.0] == 0 {
                    values[operand.0] = None;
                }
            }
            values[id.0] = Some(value);
        }
        Ok(values[computation.root.0]
            .take()
            .expect("the root is evaluated last"))
    }

    fn instruction(
        &self,
        computation: &Computation,
        instr: &Instruction,
        operands: &[&HostValue],
    ) -> R<HostValue> {
        match instr.opcode {
            Opcode::Call => self.call(instr, "to_apply", operands),
            Opcode::Fusion => self.call(instr, "calls", operands),
            Opcode::While => self.run_loop(instr, operands),
            Opcode::Conditional => self.run_branch(instr, operands),
            Opcode::Reduce => reduce::reduce(self, instr, operands),
            Opcode::ReduceWindow => window::reduce_window(self, instr, operands),
            Opcode::Map => reduce::map(self, instr, operands),
            Opcode::Scatter => scatter::scatter(self, instr, operands),
            Opcode::Sort => sort::sort(self, instr, operands),
            Opcode::TopK => sort::topk(self, instr, operands),
            Opcode::CustomCall if instr.is_topk_call() => sort::topk_call(self, instr, operands),
            Opcode::CustomCall if instr.is_cub_sort_call() => {
                sort::cub_radix_sort(self, instr, operands)
            }
            _ => self
                .local(computation, instr, operands)
                .map_err(|m| located(instr, m)),
        }
    }

    fn call(&self, instr: &Instruction, attribute: &str, operands: &[&HostValue]) -> R<HostValue> {
        let callee = instr
            .called(attribute)
            .ok_or_else(|| located(instr, format!("{} without {attribute}=", instr.opcode)))?;
        self.run(callee.id, operands.iter().map(|&v| v.clone()).collect())
    }

    /// `while`: the body run on the state while the condition holds, at most
    /// [`MAX_LOOP_ITERATIONS`] times (refused past that: a reference that loops for ever is
    /// no reference).
    fn run_loop(&self, instr: &Instruction, operands: &[&HostValue]) -> R<HostValue> {
        let (Some(condition), Some(body)) = (instr.called("condition"), instr.called("body"))
        else {
            return Err(located(instr, "while without condition= and body="));
        };
        let mut state = operands
            .first()
            .map(|&v| v.clone())
            .ok_or_else(|| located(instr, "while without an operand"))?;
        for iteration in 0.. {
            let holds = self.run(condition.id, vec![state.clone()])?;
            if !scalar_truth(&holds).map_err(|m| located(instr, m))? {
                break;
            }
            if iteration == MAX_LOOP_ITERATIONS {
                return Err(located(
                    instr,
                    format!(
                        "unsupported: a loop running past {MAX_LOOP_ITERATIONS} iterations \
                         (the evaluator runs loops up to that many)"
                    ),
                ));
            }
            state = self.run(body.id, vec![state])?;
        }
        Ok(state)
    }

    /// `conditional`: the branch a predicate (true: the first) or an index (out of range:
    /// the last, as XLA defines it) picks, run on its operand.
    fn run_branch(&self, instr: &Instruction, operands: &[&HostValue]) -> R<HostValue> {
        let branches: Vec<ComputationId> = instr.called_computations().map(|c| c.id).collect();
        let selector = operands
            .first()
            .and_then(|v| v.as_array())
            .filter(|a| a.len() == 1)
            .map(|a| a.value(0))
            .ok_or_else(|| located(instr, "conditional without a scalar selector"))?;
        let picked = match selector {
            crate::literal::Value::Pred(p) => usize::from(!p),
            crate::literal::Value::Int(i) => usize::try_from(i)
                .unwrap_or(usize::MAX)
                .min(branches.len().saturating_sub(1)),
            _ => {
                return Err(located(
                    instr,
                    "conditional selector that is not an integer",
                ));
            }
        };
        let (Some(&branch), Some(&operand)) = (branches.get(picked), operands.get(1 + picked))
        else {
            return Err(located(instr, "conditional without the branch it picks"));
        };
        self.run(branch, vec![operand.clone()])
    }

    /// Ops that need nothing but their operands and attributes.
    fn local(
        &self,
        computation: &Computation,
        instr: &Instruction,
        operands: &[&HostValue],
    ) -> Result<HostValue, String> {
        use Opcode::*;
        match instr.opcode {
            Constant => self.constant(instr),
            Tuple => Ok(HostValue::Tuple(
                operands.iter().map(|&v| v.clone()).collect(),
            )),
            GetTupleElement => get_tuple_element(instr, operands),
            // Library ops (cuBLAS, cuDNN in XLA:GPU), on whole arrays.
            Dot | Convolution if self.lanes.is_none() => {
                let result = instr
                    .shape
                    .as_array()
                    .ok_or_else(|| format!("unsupported: a tuple-shaped {}", instr.opcode))?;
                let (lhs, rhs) = (array(operands[0])?, array(operands[1])?);
                match instr.opcode {
                    Dot => dot::dot(instr, lhs, rhs, result),
                    _ => convolution::convolution(instr, lhs, rhs, result),
                }
                .map(HostValue::Array)
            }
            Copy => Ok(operands[0].clone()),
            Broadcast | Reshape | Transpose | Slice | Reverse | Pad | Concatenate
            | DynamicSlice | DynamicUpdateSlice | Gather | Bitcast | Iota => match self.lanes {
                Some(_) => scalar_movement(instr, operands),
                None => self
                    .movement(computation, instr, operands)
                    .map(HostValue::Array),
            },
            _ => self.elementwise(instr, operands).map(HostValue::Array),
        }
    }

    /// The bounds of an array result: the shape's, or the lanes of a per-element run.
    fn result_dims(&self, instr: &Instruction) -> Result<Vec<i64>, String> {
        match (self.lanes, &instr.shape) {
            (Some(n), _) => Ok(vec![n as i64]),
            (None, Shape::Array(a)) => Ok(a.dims.clone()),
            (None, Shape::Tuple(_)) => Err(format!("unsupported: tuple-shaped {}", instr.opcode)),
        }
    }

    fn constant(&self, instr: &Instruction) -> Result<HostValue, String> {
        let literal = instr.literal().ok_or("a constant without a literal")?;
        let value = HostValue::from_literal(literal, &instr.shape)?;
        match (self.lanes, value) {
            (None, value) => Ok(value),
            (Some(n), HostValue::Array(a)) if a.dims().is_empty() => {
                let lanes = a.elements().repeat_first(n);
                Ok(HostValue::Array(HostArray::from_parts(
                    vec![n as i64],
                    lanes,
                )))
            }
            (Some(_), _) => Err(
                "unsupported: a non-scalar constant in a computation applied per element".into(),
            ),
        }
    }

    fn elementwise(
        &self,
        instr: &Instruction,
        operands: &[&HostValue],
    ) -> Result<HostArray, String> {
        let arrays = operands
            .iter()
            .map(|v| array(v))
            .collect::<Result<Vec<_>, _>>()?;
        let e = |i: usize| arrays[i].elements();
        let result_type = || {
            instr
                .shape
                .as_array()
                .map(|a| a.element_type)
                .ok_or_else(|| format!("unsupported: tuple-shaped {}", instr.opcode))
        };
        use Opcode::*;
        let elements = match instr.opcode {
            IsFinite => elementwise::is_finite(e(0)),
            Compare => {
                let direction = instr
                    .enum_value("direction")
                    .ok_or("compare without direction=")?;
                let total_order = instr.enum_value("type") == Some("TOTALORDER");
                elementwise::compare(direction, total_order, e(0), e(1))
            }
            Select => elementwise::select(e(0), e(1), e(2)),
            Clamp => elementwise::clamp(e(0), e(1), e(2)),
            Convert => elementwise::convert(e(0), result_type()?),
            Real | Imag => elementwise::real_or_imag(instr.opcode, e(0)),
            Complex => elementwise::make_complex(e(0), e(1)),
            BitcastConvert => elementwise::bitcast_convert(e(0), result_type()?),
            op if op.is_elementwise_unary() => elementwise::unary(op, e(0)),
            op if op.is_elementwise_binary() => elementwise::binary(op, e(0), e(1)),
            op => Err(format!("unsupported: {op}")),
        }?;
        HostArray::new(self.result_dims(instr)?, elements)
    }

    fn movement(
        &self,
        computation: &Computation,
        instr: &Instruction,
        operands: &[&HostValue],
    ) -> Result<HostArray, String> {
        let result = instr
            .shape
            .as_array()
            .ok_or_else(|| format!("unsupported: tuple-shaped {}", instr.opcode))?;
        if instr.opcode == Opcode::Iota {
            let dim = instr
                .int("iota_dimension")
                .ok_or("missing iota_dimension=")?;
            return movement::iota(result, dim as usize);
        }
        let arrays = operands
            .iter()
            .map(|v| array(v))
            .collect::<Result<Vec<_>, _>>()?;
        let x = arrays[0];
        use Opcode::*;
        match instr.opcode {
            Broadcast => movement::broadcast(
                x,
                &result.dims,
                instr.int_list("dimensions").unwrap_or_default(),
            ),
            Reshape => movement::reshape(x, &result.dims),
            Transpose => movement::transpose(x, int_list(instr, "dimensions")?),
            Reverse => movement::reverse(x, int_list(instr, "dimensions")?),
            Slice => match instr.attribute("slice").map(|a| &a.value) {
                Some(AttrValue::Slice(dims)) => movement::slice(x, dims),
                _ => Err("missing slice= attribute".into()),
            },
            Pad => match instr.attribute("padding").map(|a| &a.value) {
                Some(AttrValue::Padding(dims)) => movement::pad(x, arrays[1], dims),
                _ => Err("missing padding= attribute".into()),
            },
            Concatenate => {
                let dim = int_list(instr, "dimensions")?.first().copied().unwrap_or(0);
                movement::concatenate(&arrays, dim as usize)
            }
            DynamicSlice => {
                movement::dynamic_slice(x, &arrays[1..], int_list(instr, "dynamic_slice_sizes")?)
            }
            DynamicUpdateSlice => movement::dynamic_update_slice(x, arrays[1], &arrays[2..]),
            Gather => movement::gather(instr, x, arrays[1], result),
            Bitcast => match &computation.instruction(instr.operands[0]).shape {
                Shape::Array(from) => movement::bitcast(x, from, result),
                Shape::Tuple(_) => Err("bitcast of a tuple".into()),
            },
            op => Err(format!("unsupported: {op}")),
        }
    }
}

/// A data-movement op inside a computation applied per element: on scalars it passes its
/// operand through; anything else would mix lanes.
fn scalar_movement(instr: &Instruction, operands: &[&HostValue]) -> Result<HostValue, String> {
    use Opcode::*;
    let scalar_in_scalar_out = matches!(
        instr.opcode,
        Broadcast | Reshape | Transpose | Slice | Reverse | Bitcast
    ) && instr.shape.as_array().is_some_and(|a| a.dims.is_empty());
    match operands {
        [x] if scalar_in_scalar_out
            && x.as_array().map(HostArray::element_type)
                == instr.shape.as_array().map(|a| a.element_type) =>
        {
            Ok((*x).clone())
        }
        // XLA's comparators bitcast an f32 scalar to s32 (a bitcast-convert of one element).
        [HostValue::Array(x)] if scalar_in_scalar_out && instr.opcode == Bitcast => {
            let to = instr.shape.as_array().map(|a| a.element_type);
            let to = to.ok_or("a tuple-shaped bitcast")?;
            let elements = elementwise::bitcast_convert(x.elements(), to)?;
            Ok(HostValue::Array(HostArray::new(
                x.dims().to_vec(),
                elements,
            )?))
        }
        _ => Err(format!(
            "unsupported: {} of arrays in a computation applied per element",
            instr.opcode
        )),
    }
}

fn get_tuple_element(instr: &Instruction, operands: &[&HostValue]) -> Result<HostValue, String> {
    let index = instr.int("index").ok_or("missing index= attribute")?;
    match operands.first() {
        Some(HostValue::Tuple(elements)) => elements
            .get(index as usize)
            .cloned()
            .ok_or_else(|| format!("tuple has no element {index}")),
        _ => Err("get-tuple-element of an array".into()),
    }
}

/// Takes the argument of a parameter instruction (each is taken once).
fn take_argument(instr: &Instruction, args: &mut [Option<HostValue>]) -> R<HostValue> {
    let n = instr.parameter_number().unwrap_or(-1);
    usize::try_from(n)
        .ok()
        .and_then(|n| args.get_mut(n))
        .and_then(Option::take)
        .ok_or_else(|| located(instr, format!("no argument for parameter {n}")))
}
