//! `unroll-loops`: fully unrolls small `scf.for` loops with constant bounds (the unrolling
//! half of XLA's `optimize_loops`).
//!
//! After `vectorize-loads-stores`, the loop over `vector_index` only moves elements between a
//! vector and scalars; unrolled, the indices become constants, `vector.extract/insert` get
//! constant positions and the loop disappears (the seed's lines 285–310). Unrolled bodies
//! also let `cse` and `canonicalize` work across iterations.
//!
//! A loop is unrolled when its lower bound, upper bound and step are constants (step > 0)
//! and its trip count times its body size is at most [`MAX_UNROLLED_SIZE`] — XLA's size
//! estimate and budget (`kMaxSize = 400`, "chosen empirically"), used for full unrolling
//! only (XLA also unrolls partially; this pass does not). The size counts every op nested in
//! the body, its terminator included, with XLA's weights:
//!
//! * a call (`func.call`, `xla_gpu.pure_call`) or a nested `scf.for` counts the whole budget,
//!   so such loops stay loops — nested loops are visited first, so a nest of small loops
//!   still unrolls from the inside out;
//! * a `math` op on floats counts 20 (it expands to many instructions), except the cheap ones
//!   (`absf`, `ceil`, `copysign`, `floor`, `fma`, `roundeven`, `round`, `rsqrt`, `sqrt`,
//!   `trunc`);
//! * an op with a vector result counts once per element;
//! * any other op counts 1.
//!
//! A loop marked [`xla_gpu::UNROLL_ATTR`] (`xla.unroll`: its iterations' values are meant
//! to stay in registers, as the row-normalization emitter's) is unrolled up to
//! [`MAX_REQUESTED_SIZE`] instead. Loops that run at most once are always unrolled (no code
//! is copied). A copy's induction
//! variable is an `arith.constant` of its type; the iter args flow from one copy to the next
//! and the last copy's yields replace the loop's results. Loops with `unsigned` comparison are
//! unrolled only when their bounds are non-negative (then both orders agree).

use crate::fold::constant_int;
use crate::pass::Pass;
use crate::rewrite::clone_block_before;
use ir::dialects::func;
use ir::dialects::math;
use ir::dialects::scf;
use ir::dialects::xla_gpu;
use ir::{Attribute, Builder, Diagnostic, Module, OpId, Value};

/// The most ops (by the weights of the module documentation) full unrolling may produce:
/// XLA's `kMaxSize`.
pub const MAX_UNROLLED_SIZE: i128 = 400;

/// The most ops full unrolling may produce for a loop marked `xla.unroll`: a bound on code
/// size for a request, ten times the heuristic's budget.
pub const MAX_REQUESTED_SIZE: i128 = 4000;

/// What a float `math` op not in [`CHEAP_MATH`] counts.
const EXPENSIVE_MATH_SIZE: i128 = 20;

/// `math` ops on floats that lower to a few instructions (XLA's list).
const CHEAP_MATH: &[&str] = &[
    math::ABSF,
    math::CEIL,
    math::COPYSIGN,
    math::FLOOR,
    math::FMA,
    math::ROUNDEVEN,
    math::ROUND,
    math::RSQRT,
    math::SQRT,
    math::TRUNC,
];

/// Ops that count the whole budget: unrolling around them does not pay.
const OPAQUE_OPS: &[&str] = &[func::CALL, xla_gpu::PURE_CALL, scf::FOR];

/// The pass (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct UnrollLoops;

impl Pass for UnrollLoops {
    crate::pass_names!(
        "unroll-loops",
        "Fully unroll scf.for loops with constant bounds whose unrolled body stays small"
    );

    fn run(&self, module: &mut Module) -> Result<(), Diagnostic> {
        for op in module.collect_ops_post_order(module.top()) {
            if module.is_alive(op)
                && module.is(op, scf::FOR)
                && let Some(iterations) = unrollable(module, op)
            {
                unroll(module, op, &iterations);
            }
        }
        Ok(())
    }
}

/// The induction variable's value in each iteration, when `for_op` should be unrolled.
fn unrollable(m: &Module, for_op: OpId) -> Option<Vec<i128>> {
    let [lb, ub, step] = [0, 1, 2].map(|i| constant_int(m, m.operand(for_op, i)));
    let (lb, ub, step) = (lb?, ub?, step?);
    let unsigned = m.prop(for_op, "unsignedCmp").is_some();
    if step <= 0 || (unsigned && (lb < 0 || ub < 0)) {
        return None;
    }
    let trip_count = if ub > lb {
        (ub - lb + step - 1) / step
    } else {
        0
    };
    let budget = if m.attr(for_op, xla_gpu::UNROLL_ATTR).is_some() {
        MAX_REQUESTED_SIZE
    } else {
        MAX_UNROLLED_SIZE
    };
    let size = body_size(m, for_op, |name| {
        OPAQUE_OPS.contains(&name).then_some(MAX_UNROLLED_SIZE)
    });
    if trip_count > 1 && trip_count.saturating_mul(size) > budget {
        return None;
    }
    Some((0..trip_count).map(|i| lb + i * step).collect())
}

/// XLA's estimate of the code a loop body becomes (see the module documentation): every op
/// nested in the body, its terminator included, weighed by [`op_size`], except the ops
/// `opaque` gives a size of its own (the calls and loops each pass keeps loops around).
/// The sum saturates.
pub(crate) fn body_size(m: &Module, for_op: OpId, opaque: impl Fn(&str) -> Option<i128>) -> i128 {
    let mut size: i128 = 0;
    for &region in m.regions(for_op) {
        for &block in m.region_blocks(region) {
            for op in m.block_ops(block) {
                m.walk(op, |nested| {
                    let weight =
                        opaque(m.name(nested).as_str()).unwrap_or_else(|| op_size(m, nested));
                    size = size.saturating_add(weight);
                });
            }
        }
    }
    size
}

/// What one op weighs in XLA's estimate: a `math` op on floats not in [`CHEAP_MATH`] 20,
/// any other 1, times the elements of a vector result.
fn op_size(m: &Module, op: OpId) -> i128 {
    let name = m.name(op).as_str();
    let first_result = m.results(op).next().map(|r| m.value_type(r));
    let float_result = first_result.is_some_and(|t| t.element_type_or_self().is_float());
    let mut size = if name.starts_with("math.") && float_result && !CHEAP_MATH.contains(&name) {
        EXPENSIVE_MATH_SIZE
    } else {
        1
    };
    if let Some(elements) = first_result
        .filter(|t| t.is_vector())
        .and_then(|t| t.num_elements())
    {
        size *= i128::from(elements);
    }
    size
}

/// Replaces `for_op` by one copy of its body per iteration, in order.
pub(crate) fn unroll(m: &mut Module, for_op: OpId, iterations: &[i128]) {
    let Some(body) = m.entry_block(m.region(for_op, 0)) else {
        return;
    };
    let iv_type = m.value_type(m.block_arg(body, 0));
    let mut iters: Vec<Value> = m.operands(for_op).skip(3).collect();
    for &i in iterations {
        let iv = Builder::before(m, for_op).constant(Attribute::int(i, iv_type));
        let mut args = vec![iv];
        args.extend_from_slice(&iters);
        iters = clone_block_before(m, body, for_op, &args).1;
    }
    m.replace_op(for_op, &iters);
}
