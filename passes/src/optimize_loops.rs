//! `optimize-loops`: unrolls `scf.for` loops by the factor XLA's `OptimizeLoopsPass` picks,
//! partially where the whole loop would be too large.
//!
//! A loop from 0 with step 1 and a constant trip count `n` is unrolled
//!
//! * fully when `n` is at most the `max_unroll_factor` option (0 unless given, as from
//!   XLA's command line; XLA's pipeline passes the emitter's unroll factor, or 4);
//! * otherwise by the largest divisor of `n` not above `min(n, 400 / size)`, `size` being
//!   the body's estimated code size ([`crate::unroll_loops::body_size`], XLA's weights); a
//!   divisor, so no remainder loop is needed. A factor of 1 leaves the loop alone.
//!
//! A loop whose body holds a `func.call`, a nested `scf.for`, or one of the math ops XLA
//! counts as too large to copy (`acos`, `acosh`, `asin`, `asinh`, `atanh`, `sinh`) is not
//! unrolled; nests are visited inside out, so an inner loop unrolled fully lets its outer
//! loop be weighed again, as XLA's greedy rewriting does. Unrolling by `f` multiplies the
//! step by `f` and puts `f - 1` copies of the body after the original, copy `i` with the
//! induction variable plus `i` and the loop-carried values of the copy before; unrolling
//! fully leaves one copy per iteration with a constant induction variable (MLIR's
//! `loopUnrollByFactor` followed by its promotion of a loop that runs once).
//!
//! The standard pipeline unrolls with `unroll-loops` (full unrolling only, with the
//! emitters' `xla.unroll` requests); see `docs/usage.md` for what this pass would change.

use ir::dialects::{arith, func, math, scf};
use ir::{Attribute, Builder, Diagnostic, InsertPoint, Module, OpId, Value};

use crate::fold::constant_int;
use crate::pass::Pass;
use crate::rewrite::clone_ops_at;
use crate::unroll_loops::{MAX_UNROLLED_SIZE, body_size, unroll};
use ir::intern::FxHashMap;

/// Ops XLA does not unroll around.
const NOT_UNROLLED_AROUND: &[&str] = &[
    func::CALL,
    scf::FOR,
    math::ACOS,
    math::ACOSH,
    math::ASIN,
    math::ASINH,
    math::ATANH,
    math::SINH,
];

#[derive(Clone, Copy, Debug, Default)]
pub struct OptimizeLoops {
    /// Loops of at most this many iterations are unrolled fully.
    pub max_unroll_factor: i128,
}

impl Pass for OptimizeLoops {
    crate::pass_names!(
        "optimize-loops",
        "Unroll scf.for loops fully or by a divisor of the trip count, by XLA's size estimate (XLA's OptimizeLoops; option max_unroll_factor)"
    );

    fn run(&self, m: &mut Module) -> Result<(), Diagnostic> {
        for op in m.collect_ops_post_order(m.top()) {
            if !m.is_alive(op) || !m.is(op, scf::FOR) {
                continue;
            }
            match self.unroll_factor(m, op) {
                Some((factor, trip_count)) if factor == trip_count => {
                    unroll(m, op, &(0..trip_count).collect::<Vec<_>>())
                }
                Some((factor, _)) if factor > 1 => unroll_by(m, op, factor),
                _ => {}
            }
        }
        Ok(())
    }

    fn set_option(&mut self, name: &str, value: &str) -> Result<(), String> {
        match name {
            "max_unroll_factor" => {
                self.max_unroll_factor = value
                    .parse::<u32>()
                    .map_err(|_| format!("max_unroll_factor={value}: not a count"))?
                    .into();
                Ok(())
            }
            _ => Err(format!(
                "the pass 'optimize-loops' has no option '{name}' (it has max_unroll_factor)"
            )),
        }
    }
}

impl OptimizeLoops {
    /// XLA's unroll factor of `for_op` and its trip count, when it runs from 0 by 1 to a
    /// constant.
    fn unroll_factor(&self, m: &Module, for_op: OpId) -> Option<(i128, i128)> {
        let [lb, ub, step] = [0, 1, 2].map(|i| constant_int(m, m.operand(for_op, i)));
        if (lb?, step?) != (0, 1) {
            return None;
        }
        let trip_count = ub?;
        let size = body_size(m, for_op, |name| {
            NOT_UNROLLED_AROUND.contains(&name).then_some(i128::MAX)
        });
        if size == i128::MAX || trip_count < 1 {
            return None;
        }
        if trip_count <= self.max_unroll_factor {
            return Some((trip_count, trip_count));
        }
        let mut factor = trip_count.min(MAX_UNROLLED_SIZE / size);
        while factor > 1 && trip_count % factor != 0 {
            factor -= 1;
        }
        Some((factor, trip_count))
    }
}

/// The step becomes `factor` and the body `factor` copies, copy `i` at `iv + i`.
fn unroll_by(m: &mut Module, for_op: OpId, factor: i128) {
    let Some(body) = m.entry_block(m.region(for_op, 0)) else {
        return;
    };
    let Some(yield_op) = m.last_op(body) else {
        return;
    };
    let iv = m.block_arg(body, 0);
    let iv_type = m.value_type(iv);
    let loc = m.loc(for_op);
    let mut b = Builder::new(m, InsertPoint::Before(for_op));
    b.set_loc(loc);
    let step = b.constant(Attribute::int(factor, iv_type));
    m.set_operand(for_op, 2, step);
    let original: Vec<OpId> = m.block_ops(body).filter(|&op| op != yield_op).collect();
    let carried_args: Vec<Value> = m.block_args(body)[1..].to_vec();
    let yielded: Vec<Value> = m.operands(yield_op).collect();
    let mut carried = yielded.clone();
    for i in 1..factor {
        let mut mapping: FxHashMap<Value, Value> = carried_args
            .iter()
            .copied()
            .zip(carried.iter().copied())
            .collect();
        if m.has_uses(iv) {
            let mut b = Builder::new(m, InsertPoint::Before(yield_op));
            b.set_loc(loc);
            let offset = b.constant(Attribute::int(i, iv_type));
            mapping.insert(iv, b.binary(arith::ADDI, iv, offset));
        }
        clone_ops_at(m, &original, &mut mapping, InsertPoint::Before(yield_op));
        carried = yielded
            .iter()
            .map(|v| *mapping.get(v).unwrap_or(v))
            .collect();
    }
    m.set_operands(yield_op, &carried);
}
