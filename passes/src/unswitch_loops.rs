//! `unswitch-loops`: a loop whose whole body is an `scf.if` on a condition from outside the
//! loop becomes an `scf.if` choosing between two loops, one per branch, as XLA's
//! `UnswitchLoopsPass` does.
//!
//! The loop emitter's bounds checks and the reduction emitters' "is this thread in the
//! tile" checks often test a block-level value inside the innermost loop. Testing it once,
//! outside, lets each copy of the loop run straight-line code; XLA runs this after
//! loop-invariant code motion has hoisted such conditions.
//!
//! * A candidate `scf.for` has exactly two ops in its body, an `scf.if` and the `scf.yield`;
//!   the `if`'s condition is not a constant and is defined outside the loop (XLA checks only
//!   the first; a condition computed from the induction variable cannot be tested outside).
//! * It becomes `scf.if %cond { loop with the if's condition true } else { copy of the loop
//!   with it false }`, at the loop's location, and the canonicalizer then folds the inner
//!   `if`s (XLA applies the scf canonicalizations in the same rewrite), so each copy holds
//!   one branch; a copy that only forwards its loop-carried values disappears.
//! * Repeated to a fixed point, an `if` in a nest of loops rises through every loop whose
//!   body becomes just that `if` (XLA's test: eight loops deep). Each rewrite copies one loop,
//!   so the rewrites are bounded by [`MAX_UNSWITCHES`] per module (the IR is valid whenever
//!   they stop).

use ir::dialects::{arith, scf};
use ir::intern::FxHashMap;
use ir::{Attribute, Diagnostic, InsertPoint, Module, OpId, Type, Value};

use crate::canonicalize::Canonicalize;
use crate::constants::is_constant;
use crate::pass::Pass;

/// At most this many loops are unswitched in one module: every unswitch copies a loop, and
/// `if`s nested in `if`s in loops could otherwise multiply the code without end.
pub const MAX_UNSWITCHES: usize = 256;

pub struct UnswitchLoops;

impl Pass for UnswitchLoops {
    crate::pass_names!(
        "unswitch-loops",
        "Hoist an scf.if on a loop-invariant condition that is a loop's whole body out of the loop, one loop per branch (XLA's UnswitchLoops)"
    );

    fn run(&self, m: &mut Module) -> Result<(), Diagnostic> {
        for _ in 0..MAX_UNSWITCHES {
            let Some((for_op, inner_if)) = m
                .ops_named(scf::FOR)
                .into_iter()
                .find_map(|op| unswitchable(m, op).map(|inner| (op, inner)))
            else {
                break;
            };
            unswitch(m, for_op, inner_if);
            Canonicalize::default().run(m)?;
        }
        Ok(())
    }
}

/// The `scf.if` that is the whole body of `for_op`, when its condition can be tested before
/// the loop.
fn unswitchable(m: &Module, for_op: OpId) -> Option<OpId> {
    let body = m.entry_block(m.region(for_op, 0))?;
    let mut ops = m.block_ops(body);
    let (first, _yield, None) = (ops.next()?, ops.next()?, ops.next()) else {
        return None;
    };
    if !m.is(first, scf::IF) {
        return None;
    }
    let cond = m.operand(first, 0);
    let constant = m.defining_op(cond).is_some_and(|d| is_constant(m, d));
    (!constant && defined_outside(m, cond, for_op)).then_some(first)
}

/// Whether `v` is defined outside `op` (not in its regions).
fn defined_outside(m: &Module, v: Value, op: OpId) -> bool {
    let owner = m
        .value_block(v)
        .and_then(|b| m.block_parent_region(b))
        .and_then(|r| m.region_parent_op(r));
    owner.is_none_or(|owner| !m.is_ancestor(op, owner))
}

fn unswitch(m: &mut Module, for_op: OpId, inner_if: OpId) {
    let cond = m.operand(inner_if, 0);
    let loc = m.loc(for_op);
    let at = InsertPoint::Before(for_op);
    let constant = |m: &mut Module, v: bool| {
        let c = arith::build_constant(m, at, Attribute::int(i128::from(v), Type::I1));
        m.set_loc(m.defining_op(c).expect("a constant's result"), loc);
        c
    };
    let (truth, falsity) = (constant(m, true), constant(m, false));
    let mut mapping = FxHashMap::default();
    mapping.insert(cond, falsity);
    let copy = m.clone_op(for_op, &mut mapping);
    let result_types: Vec<_> = m.results(for_op).map(|r| m.value_type(r)).collect();
    let (switch, then_block, else_block) = scf::build_if(m, at, cond, &result_types, true);
    let else_block = else_block.expect("built with an else block");
    m.set_loc(switch, loc);
    for (i, r) in m.results(for_op).enumerate() {
        m.replace_all_uses(r, m.result(switch, i));
    }
    m.move_op(for_op, InsertPoint::BlockEnd(then_block));
    m.set_operand(inner_if, 0, truth);
    let original: Vec<Value> = m.results(for_op).collect();
    scf::build_yield(m, then_block, &original);
    m.insert_op(copy, InsertPoint::BlockEnd(else_block));
    let copied: Vec<Value> = m.results(copy).collect();
    scf::build_yield(m, else_block, &copied);
}
