//! `canonicalize`: MLIR's canonicalizer for the ops of this project, iterated to a fixed
//! point (at most [`Canonicalize::max_iterations`] sweeps, as MLIR's default of 10).
//!
//! Each sweep walks the module in pre-order (definitions before uses) and
//!
//! 1. keeps constants unique and at the start of their function ([`ConstantTable`]: one
//!    constant per value, moved out of loops and branches to the entry block);
//! 2. erases ops that are trivially dead (unused pure ops, `scf.for`/`scf.if` whose results
//!    are unused and whose bodies are pure), and what becomes dead with them;
//! 3. folds `arith` ops ([`fold`](crate::fold): constant folding in the constant's type,
//!    exact algebraic identities such as `x + 0`, `x * 1`, `x - x` for integers, `x & x`,
//!    `select(c, x, x)`, cast chains; never float identities that change NaN or signed-zero
//!    results), replacing the op by an operand or a new uniqued constant;
//! 4. moves constant operands of commutative ops to the right (`addi %c, %x` → `addi %x, %c`,
//!    and `cmpi` with the predicate swapped), so identities see one form;
//! 5. rewrites into simpler ops: `trunci(extsi(x))` becomes `extsi(x)` when `x` is narrower
//!    than the result (`extui` likewise); `xori(cmpi(p, a, b), true)` becomes `cmpi` with
//!    the inverted predicate; a constant dynamic position of `vector.extract`/`insert`
//!    within its dimension becomes a static one (MLIR's `foldDynamicIndexList`), as
//!    unrolling leaves them: `lower-to-llvm` computes indices in 32 bits only when no
//!    vector position is dynamic;
//! 6. simplifies control flow: `scf.if` on a constant is replaced by the chosen branch, and
//!    an `scf.if` whose branches yield values from outside by `arith.select`s; `scf.for`
//!    that runs zero times is replaced by its initial values, one that runs once by its
//!    body; a loop-carried value the body yields unchanged is replaced by its initial value;
//!    unused results of `scf.if` and loop-carried values of `scf.for` that nothing reads are
//!    dropped, and so is an else branch that does nothing;
//! 7. an `xla_gpu.atomic_rmw` whose body yields the element unchanged writes nothing: its
//!    result is its tensor (XLA's `atomic_rmw_empty`).
//!
//! Not done (MLIR does more): reassociating constants (`(x + 1) + 2`), tensor shape folding,
//! and simplifying multi-block regions.

use crate::constants::{ConstantTable, is_constant};
use crate::fold::{Fold, constant_int, fold, inverted_cmpi, predicate};
use crate::pass::Pass;
use crate::rewrite::{
    erase_with_dead_operands, inline_block_before, is_trivially_dead, recreate_with_results,
    replace_op,
};
use ir::dialects::arith;
use ir::dialects::arith::CMPI_PREDICATES;
use ir::dialects::dense_ints;
use ir::dialects::scf;
use ir::dialects::vector;
use ir::dialects::xla_gpu;
use ir::{Attribute, Builder, DYNAMIC, Diagnostic, Module, OpId, Traits, Type, Value};
use std::borrow::Cow;

/// The canonicalizer (see the module documentation).
#[derive(Clone, Copy, Debug)]
pub struct Canonicalize {
    /// Sweeps before giving up on reaching a fixed point (the IR is valid either way).
    pub max_iterations: usize,
}

impl Default for Canonicalize {
    fn default() -> Canonicalize {
        Canonicalize { max_iterations: 10 }
    }
}

impl Pass for Canonicalize {
    crate::pass_names!(
        "canonicalize",
        "Fold constants and exact identities, remove dead code and trivial scf control flow, \
         hoist and unique constants"
    );

    fn display_name(&self) -> Cow<'static, str> {
        Cow::Borrowed("Canonicalizer")
    }

    fn run(&self, module: &mut Module) -> Result<(), Diagnostic> {
        for _ in 0..self.max_iterations {
            if !sweep(module) {
                break;
            }
        }
        Ok(())
    }
}

/// One pass over the module; returns whether anything changed.
fn sweep(m: &mut Module) -> bool {
    let ops = m.collect_ops(m.top());
    let mut constants = ConstantTable::default();
    let mut changed = false;
    for &op in &ops {
        if m.is_alive(op) && is_constant(m, op) {
            changed |= constants.insert_existing(m, op);
        }
    }
    for &op in &ops {
        if !m.is_alive(op) || m.parent_block(op).is_none() {
            continue;
        }
        if is_trivially_dead(m, op) {
            erase_with_dead_operands(m, op);
            changed = true;
        } else if !is_constant(m, op) {
            changed |= simplify(m, op, &mut constants);
        }
    }
    changed
}

/// In-place rewrites of one op before it settles (a swap, then a fold, ...).
const MAX_IN_PLACE: usize = 4;

/// Folds or rewrites `op`; returns whether the IR changed.
fn simplify(m: &mut Module, op: OpId, constants: &mut ConstantTable) -> bool {
    let mut changed = false;
    for _ in 0..MAX_IN_PLACE {
        match fold(m, op) {
            Some(Fold::Value(v)) => {
                replace_op(m, op, &[v]);
                return true;
            }
            Some(Fold::Constant(value)) => {
                return match constants.get_or_create(m, op, value) {
                    Some(c) => {
                        replace_op(m, op, &[c]);
                        true
                    }
                    None => changed,
                };
            }
            Some(Fold::Update {
                operands,
                predicate,
            }) => {
                m.set_operands(op, &operands);
                if let Some(p) = predicate {
                    m.set_prop(op, "predicate", Attribute::i64(p));
                }
                changed = true;
            }
            None if move_constants_right(m, op) => changed = true,
            None => break,
        }
    }
    let rewritten = match m.name(op).as_str() {
        arith::TRUNCI => trunc_of_narrow_ext(m, op),
        arith::XORI => not_of_cmpi(m, op),
        vector::EXTRACT => constant_positions_static(m, op, 1),
        vector::INSERT => constant_positions_static(m, op, 2),
        scf::IF => {
            simplify_if(m, op)
                || if_to_select(m, op)
                || drop_unused_if_results(m, op)
                || remove_empty_else(m, op)
        }
        scf::FOR => {
            simplify_for(m, op)
                || forward_unchanged_iter_args(m, op)
                || drop_unused_iter_args(m, op)
        }
        xla_gpu::ATOMIC_RMW => drop_identity_atomic(m, op),
        _ => false,
    };
    changed || rewritten
}

/// Moves the constant dynamic positions of a `vector.extract` or `vector.insert` (whose
/// positions follow `leading` operands) into `static_position`, where they lie inside their
/// dimension (an out-of-range static position would not verify).
fn constant_positions_static(m: &mut Module, op: OpId, leading: usize) -> bool {
    let Some(mut statics) = dense_ints(m.prop(op, "static_position")) else {
        return false;
    };
    let vector_type = m.value_type(m.operand(op, leading - 1));
    let dims = vector_type.shape().unwrap_or(&[]).to_vec();
    let operands = m.operand_vec(op);
    let mut kept = operands[..leading].to_vec();
    let mut dynamic = operands[leading..].iter();
    let mut changed = false;
    for (place, dim) in statics.iter_mut().zip(dims) {
        if *place != DYNAMIC {
            continue;
        }
        let Some(&v) = dynamic.next() else {
            return false;
        };
        match constant_int(m, v).and_then(|c| i64::try_from(c).ok()) {
            Some(c) if (0..dim).contains(&c) => {
                *place = c;
                changed = true;
            }
            _ => kept.push(v),
        }
    }
    if changed {
        m.set_operands(op, &kept);
        m.set_prop(op, "static_position", Attribute::dense_i64_array(&statics));
    }
    changed
}

/// `xori(cmpi(p, a, b), true)` becomes `cmpi(not p, a, b)` (MLIR's `XOrINotCmpI`).
fn not_of_cmpi(m: &mut Module, op: OpId) -> bool {
    let (lhs, rhs) = (m.operand(op, 0), m.operand(op, 1));
    if m.value_type(rhs) != Type::I1 || constant_int(m, rhs) != Some(-1) {
        return false;
    }
    let Some(cmp) = m.defining_op(lhs).filter(|&d| m.is(d, arith::CMPI)) else {
        return false;
    };
    let Some(&pred) = predicate(m, cmp).and_then(|p| CMPI_PREDICATES.get(p)) else {
        return false;
    };
    let (a, b) = (m.operand(cmp, 0), m.operand(cmp, 1));
    let inverted = Builder::before(m, op).cmpi(inverted_cmpi(pred), a, b);
    replace_op(m, op, &[inverted]);
    true
}

/// An `scf.if` whose branches both yield values defined outside it: each result becomes
/// `arith.select` of the two (or the value itself when both yield the same). The `scf.if`
/// stays for what else its branches do, with its results unused (MLIR's
/// `ConvertTrivialIfToSelect`, when every result can be hoisted).
fn if_to_select(m: &mut Module, op: OpId) -> bool {
    if m.results(op).all(|r| !m.has_uses(r)) {
        return false;
    }
    let yields: Vec<Vec<Value>> = m
        .regions(op)
        .iter()
        .filter_map(|&r| m.entry_block(r))
        .filter_map(|b| m.last_op(b))
        .map(|y| m.operand_vec(y))
        .collect();
    let [then_values, else_values] = yields.as_slice() else {
        return false;
    };
    let outside = |v: Value| {
        m.value_block(v)
            .and_then(|b| m.block_parent_op(b))
            .is_none_or(|owner| !m.is_ancestor(op, owner))
    };
    if !then_values.iter().chain(else_values).all(|&v| outside(v)) {
        return false;
    }
    let (cond, then_values, else_values) =
        (m.operand(op, 0), then_values.clone(), else_values.clone());
    let mut b = Builder::before(m, op);
    let values: Vec<Value> = then_values
        .into_iter()
        .zip(else_values)
        .map(|(t, e)| if t == e { t } else { b.select(cond, t, e) })
        .collect();
    let results: Vec<Value> = m.results(op).collect();
    for (r, v) in results.into_iter().zip(values) {
        m.replace_all_uses(r, v);
    }
    true
}

/// An atomic update whose body yields the current element unchanged: its result is the
/// tensor it would update.
fn drop_identity_atomic(m: &mut Module, op: OpId) -> bool {
    let Some(body) = m.entry_block(m.region(op, 0)) else {
        return false;
    };
    let current = m.block_args(body).first().copied();
    let yielded = m
        .last_op(body)
        .and_then(|y| m.operand_vec(y).first().copied());
    if current.is_none() || current != yielded || m.num_results(op) != 1 {
        return false;
    }
    let tensor = m.operand(op, 0);
    replace_op(m, op, &[tensor]);
    true
}

/// Removes the results of an `scf.if` that nothing uses (and what its branches yield for
/// them).
fn drop_unused_if_results(m: &mut Module, op: OpId) -> bool {
    let keep: Vec<bool> = m.results(op).map(|r| m.has_uses(r)).collect();
    if keep.iter().all(|&k| k) {
        return false;
    }
    for region in m.regions(op).to_vec() {
        if let Some(terminator) = m.entry_block(region).and_then(|b| m.last_op(b)) {
            let kept = kept_values(&m.operand_vec(terminator), &keep);
            m.set_operands(terminator, &kept);
        }
    }
    let operands = m.operand_vec(op);
    recreate_with_results(m, op, &operands, &keep);
    true
}

/// An `scf.if` without results loses an else branch that does nothing.
fn remove_empty_else(m: &mut Module, op: OpId) -> bool {
    if m.num_results(op) > 0 {
        return false;
    }
    let Some(block) = m.entry_block(m.region(op, 1)) else {
        return false;
    };
    if m.first_op(block) != m.last_op(block) {
        return false;
    }
    m.erase_block(block);
    true
}

/// The values at the positions where `keep` is true.
fn kept_values(values: &[Value], keep: &[bool]) -> Vec<Value> {
    values
        .iter()
        .zip(keep)
        .filter(|&(_, &k)| k)
        .map(|(&v, _)| v)
        .collect()
}

/// Removes loop-carried values of an `scf.for` whose result is unused and whose block
/// argument is read by nothing but its own `scf.yield` operand: nothing can observe them
/// (MLIR's `ForOpIterArgsFolder`).
fn drop_unused_iter_args(m: &mut Module, op: OpId) -> bool {
    let Some(body) = m.entry_block(m.region(op, 0)) else {
        return false;
    };
    let Some(terminator) = m.last_op(body) else {
        return false;
    };
    let args: Vec<Value> = m.block_args(body)[1..].to_vec();
    let keep: Vec<bool> = args
        .iter()
        .enumerate()
        .map(|(i, &arg)| {
            m.has_uses(m.result(op, i))
                || m.uses(arg)
                    .any(|u| u.op != terminator || u.index as usize != i)
        })
        .collect();
    if keep.iter().all(|&k| k) {
        return false;
    }
    let yielded = kept_values(&m.operand_vec(terminator), &keep);
    m.set_operands(terminator, &yielded);
    for i in (0..keep.len()).rev().filter(|&i| !keep[i]) {
        m.erase_block_arg(body, i + 1);
    }
    let operands = m.operand_vec(op);
    let mut new_operands = operands[..3].to_vec();
    new_operands.extend(kept_values(&operands[3..], &keep));
    recreate_with_results(m, op, &new_operands, &keep);
    true
}

/// A loop-carried value that the body yields unchanged (its own block argument, or its
/// initial value) equals its initial value in every iteration and after the loop: uses of
/// the block argument and of the result are replaced by the initial value (the first half
/// of MLIR's `ForOpIterArgsFolder`; the unused `iter_args` stay).
fn forward_unchanged_iter_args(m: &mut Module, op: OpId) -> bool {
    let Some(body) = m.entry_block(m.region(op, 0)) else {
        return false;
    };
    let Some(terminator) = m.last_op(body) else {
        return false;
    };
    let inits: Vec<Value> = m.operands(op).skip(3).collect();
    let args: Vec<Value> = m.block_args(body)[1..].to_vec();
    let mut changed = false;
    for (i, (&init, &arg)) in inits.iter().zip(&args).enumerate() {
        let yielded = m.operand(terminator, i);
        let result = m.result(op, i);
        let used = m.has_uses(result) || m.uses(arg).any(|u| u.op != terminator);
        if (yielded == arg || yielded == init) && used {
            m.replace_all_uses(arg, init);
            m.replace_all_uses(result, init);
            changed = true;
        }
    }
    changed
}

/// `trunci(ext(x))` with `x` narrower than the result becomes `ext(x)` (MLIR's
/// `TruncIExtSIToExtSI` and `TruncIExtUIToExtUI`).
fn trunc_of_narrow_ext(m: &mut Module, op: OpId) -> bool {
    let Some(ext) = m
        .defining_op(m.operand(op, 0))
        .filter(|&d| m.is(d, arith::EXTSI) || m.is(d, arith::EXTUI))
    else {
        return false;
    };
    let x = m.operand(ext, 0);
    let ty = m.value_type(m.result(op, 0));
    let width = |t: Type| t.element_type_or_self().bit_width();
    let narrower = width(m.value_type(x))
        .zip(width(ty))
        .is_some_and(|(a, b)| a < b);
    if !narrower {
        return false;
    }
    let name = m.name(ext).as_str();
    let narrowed = Builder::before(m, op).cast(name, x, ty);
    replace_op(m, op, &[narrowed]);
    true
}

/// Moves the constant operands of a commutative op after the others, keeping their order
/// (MLIR's `foldCommutative`); returns whether they moved.
fn move_constants_right(m: &mut Module, op: OpId) -> bool {
    if !m.op_def(op).is_some_and(|d| d.has(Traits::COMMUTATIVE)) {
        return false;
    }
    let operands = m.operand_vec(op);
    let is_const = |v: Value| m.defining_op(v).is_some_and(|d| is_constant(m, d));
    let (mut sorted, constants): (Vec<Value>, Vec<Value>) =
        operands.iter().partition(|&&v| !is_const(v));
    sorted.extend(constants);
    if sorted == operands {
        return false;
    }
    m.set_operands(op, &sorted);
    true
}

/// `scf.if` on a constant condition becomes the ops of the branch taken.
fn simplify_if(m: &mut Module, op: OpId) -> bool {
    let Some(cond) = constant_int(m, m.operand(op, 0)) else {
        return false;
    };
    let region = m.region(op, usize::from(cond == 0));
    let yielded = match m.entry_block(region) {
        Some(block) => inline_block_before(m, block, op, &[]),
        None => Vec::new(),
    };
    replace_op(m, op, &yielded);
    true
}

/// How often a loop runs, when that is known.
enum Trips {
    Zero,
    One,
}

fn trip_count(m: &Module, op: OpId) -> Option<Trips> {
    let (lb, ub, step) = (m.operand(op, 0), m.operand(op, 1), m.operand(op, 2));
    if lb == ub {
        return Some(Trips::Zero);
    }
    let width = m.value_type(lb).int_width().unwrap_or(64);
    let unsigned = m.prop(op, "unsignedCmp").is_some();
    let as_bound = |v: i128| {
        if unsigned {
            v & ((1i128 << width) - 1)
        } else {
            v
        }
    };
    let lo = as_bound(constant_int(m, lb)?);
    let hi = as_bound(constant_int(m, ub)?);
    if hi <= lo {
        return Some(Trips::Zero);
    }
    let step = as_bound(constant_int(m, step)?);
    (step > 0 && hi - lo <= step).then_some(Trips::One)
}

/// `scf.for` that runs zero times becomes its initial values; once, its body.
fn simplify_for(m: &mut Module, op: OpId) -> bool {
    let Some(trips) = trip_count(m, op) else {
        return false;
    };
    let operands = m.operand_vec(op);
    let (lb, inits) = (operands[0], &operands[3..]);
    let results = match trips {
        Trips::Zero => inits.to_vec(),
        Trips::One => {
            let Some(body) = m.entry_block(m.region(op, 0)) else {
                return false;
            };
            let mut args = vec![lb];
            args.extend_from_slice(inits);
            inline_block_before(m, body, op, &args)
        }
    };
    replace_op(m, op, &results);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pass::run_verified;

    fn canonicalize(src: &str) -> String {
        run_verified(&Canonicalize::default(), src).print()
    }

    fn body(text: &str) -> Vec<String> {
        text.lines()
            .map(str::trim)
            .filter(|l| {
                !l.starts_with("module") && !l.starts_with(ir::dialects::func::FUNC) && *l != "}"
            })
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn folds_to_a_fixed_point() {
        let out = canonicalize(
            "func.func @f(%x: i32) -> i32 {
               %c1 = arith.constant 1 : i32
               %c2 = arith.constant 2 : i32
               %a = arith.addi %c1, %c2 : i32
               %b = arith.muli %a, %c2 : i32
               %c = arith.subi %b, %b : i32
               %d = arith.addi %x, %c : i32
               return %d : i32
             }",
        );
        assert_eq!(body(&out), ["return %x : i32"], "{out}");
    }

    #[test]
    fn loops_with_known_trip_counts_disappear() {
        let out = canonicalize(
            "func.func @f(%x: f32) -> (f32, f32) {
               %c0 = arith.constant 0 : index
               %c1 = arith.constant 1 : index
               %r0 = scf.for %i = %c1 to %c0 step %c1 iter_args(%a = %x) -> (f32) {
                 %s = arith.mulf %a, %a : f32
                 scf.yield %s : f32
               }
               %r1 = scf.for %i = %c0 to %c1 step %c1 iter_args(%a = %x) -> (f32) {
                 %s = arith.mulf %a, %a : f32
                 scf.yield %s : f32
               }
               return %r0, %r1 : f32, f32
             }",
        );
        assert_eq!(
            body(&out),
            ["%s = arith.mulf %x, %x : f32", "return %x, %s : f32, f32"],
            "{out}"
        );
    }

    #[test]
    fn ifs_on_constants_take_their_branch() {
        let out = canonicalize(
            "func.func @f(%x: f32) -> f32 {
               %false = arith.constant false
               %r = scf.if %false -> (f32) {
                 scf.yield %x : f32
               } else {
                 %y = arith.addf %x, %x : f32
                 scf.yield %y : f32
               }
               return %r : f32
             }",
        );
        assert_eq!(
            body(&out),
            ["%y = arith.addf %x, %x : f32", "return %y : f32"],
            "{out}"
        );
    }

    #[test]
    fn commutative_constants_move_right() {
        let out = canonicalize(
            "func.func @f(%x: i32) -> (i32, i1) {
               %c5 = arith.constant 5 : i32
               %0 = arith.muli %c5, %x : i32
               %1 = arith.cmpi ult, %c5, %x : i32
               return %0, %1 : i32, i1
             }",
        );
        assert!(out.contains("arith.muli %x, %c5 : i32"), "{out}");
        assert!(out.contains("arith.cmpi ugt, %x, %c5 : i32"), "{out}");
    }
}
