//! `safe-integer-arithmetic`: an integer division or remainder marked `xla.guard_ub` gets
//! XLA's defined results where the instruction's are undefined (a zero divisor, signed
//! `MIN / -1`), as XLA's `SafeIntegerArithmeticPass` does.
//!
//! XLA's emitters write the bare `arith.divsi` with the mark and leave the guard to this pass;
//! the elemental emitter here writes the guarded form itself
//! ([`ir::Builder::guarded_division`], the same code), so the standard pipeline has nothing
//! for it to do. It is here for IR written with the mark (XLA's, or by hand), and so that the
//! form is XLA's, checked by XLA's test. Unmarked divisions are left alone: their divisor is
//! known to be safe.

use ir::dialects::arith;
use ir::{Builder, Diagnostic, InsertPoint, Module};

use crate::pass::Pass;

/// The discardable attribute asking for the guard.
const GUARD_UB: &str = "xla.guard_ub";

pub struct SafeIntegerArithmetic;

impl Pass for SafeIntegerArithmetic {
    crate::pass_names!(
        "safe-integer-arithmetic",
        "Give integer divisions and remainders marked xla.guard_ub XLA's results for a zero divisor and MIN / -1"
    );

    fn run(&self, m: &mut Module) -> Result<(), Diagnostic> {
        for name in [arith::DIVSI, arith::DIVUI, arith::REMSI, arith::REMUI] {
            for op in m.ops_named(name) {
                if m.attr(op, GUARD_UB).is_none() {
                    continue;
                }
                let (x, y) = (m.operand(op, 0), m.operand(op, 1));
                let loc = m.loc(op);
                let mut b = Builder::new(m, InsertPoint::Before(op));
                b.set_loc(loc);
                let result = b.guarded_division(name, x, y);
                m.replace_all_uses(m.result(op, 0), result);
                m.erase_op(op);
            }
        }
        Ok(())
    }
}
