//! Rewriting helpers shared by passes: which ops are dead, erasing them, inlining a block in
//! place of its parent op, copying a block before an op, recreating an op with fewer results,
//! and where constants of a block belong.

use ir::dialects::scf;
use ir::intern::FxHashMap;
use ir::{BlockId, InsertPoint, Module, OpId, OpState, RegionId, Traits, Value};

/// Ops with regions that have no effect of their own: they are free of side effects when
/// everything nested in them is (MLIR's `RecursiveMemoryEffects` trait, which
/// [`ir::Traits`] does not model yet).
const RECURSIVELY_PURE: &[&str] = &[scf::FOR, scf::IF];

/// Whether `op` and everything nested in it have no side effects.
fn is_effect_free(m: &Module, op: OpId) -> bool {
    let Some(def) = m.op_def(op) else {
        return false;
    };
    if def.has(Traits::PURE) {
        return true;
    }
    RECURSIVELY_PURE.contains(&def.name)
        && m.regions(op).iter().all(|&r| {
            m.region_blocks(r)
                .iter()
                .all(|&b| m.block_ops(b).all(|o| is_effect_free(m, o)))
        })
}

/// Whether `op` can be erased without changing what the program does: none of its results
/// is used, it has no side effects (recursively, for `scf.for`/`scf.if`), and it is not a
/// terminator. Unregistered ops are never dead.
pub fn is_trivially_dead(m: &Module, op: OpId) -> bool {
    m.results(op).all(|r| !m.has_uses(r))
        && m.op_def(op).is_some_and(|d| !d.has(Traits::TERMINATOR))
        && is_effect_free(m, op)
}

/// Erases `op` (whose results must be unused), then every op that became trivially dead
/// because it lost its last use. Returns the number of ops erased.
pub fn erase_with_dead_operands(m: &mut Module, op: OpId) -> usize {
    let mut worklist = vec![op];
    let mut erased = 0;
    while let Some(op) = worklist.pop() {
        if !m.is_alive(op) {
            continue;
        }
        let mut operands: Vec<Value> = Vec::new();
        m.walk(op, |o| operands.extend(m.operands(o)));
        m.erase_op(op);
        erased += 1;
        for v in operands {
            if let Some(def) = m.defining_op(v)
                && m.is_alive(def)
                && m.parent_block(def).is_some()
                && is_trivially_dead(m, def)
            {
                worklist.push(def);
            }
        }
    }
    erased
}

/// Replaces the results of `op` by `values` and erases it, along with what becomes dead.
pub fn replace_op(m: &mut Module, op: OpId, values: &[Value]) {
    let results: Vec<Value> = m.results(op).collect();
    for (r, &v) in results.into_iter().zip(values) {
        m.replace_all_uses(r, v);
    }
    erase_with_dead_operands(m, op);
}

/// Moves the ops of `block` except its terminator before `before`, with the block's
/// arguments replaced by `args`; returns the terminator's operands (the values the block
/// yields). The terminator stays behind, to be erased with the block's owner.
pub fn inline_block_before(
    m: &mut Module,
    block: BlockId,
    before: OpId,
    args: &[Value],
) -> Vec<Value> {
    let block_args = m.block_args(block).to_vec();
    for (a, &v) in block_args.into_iter().zip(args) {
        m.replace_all_uses(a, v);
    }
    let terminator = m.last_op(block);
    let ops: Vec<OpId> = m
        .block_ops(block)
        .filter(|&o| Some(o) != terminator)
        .collect();
    for o in ops {
        m.move_op(o, InsertPoint::Before(before));
    }
    terminator.map(|t| m.operand_vec(t)).unwrap_or_default()
}

/// Copies `ops` (in order) to `at`, operands found in `mapping` replaced and the copies'
/// results added to it; returns the copies. Unrolling and peeling copy a loop body this way,
/// from a list taken before the first copy is inserted into the same block.
pub fn clone_ops_at(
    m: &mut Module,
    ops: &[OpId],
    mapping: &mut FxHashMap<Value, Value>,
    at: InsertPoint,
) -> Vec<OpId> {
    let mut clones = Vec::with_capacity(ops.len());
    for &op in ops {
        let clone = m.clone_op(op, mapping);
        m.insert_op(clone, at);
        clones.push(clone);
    }
    clones
}

/// Copies the ops of `block` except its terminator before `before`, with the block's
/// arguments replaced by `args`; returns the copies (in order) and the values the copy yields
/// (the terminator's operands, mapped). The block is left untouched: this duplicates a body
/// (inlining a function that has other callers, unrolling a loop).
pub fn clone_block_before(
    m: &mut Module,
    block: BlockId,
    before: OpId,
    args: &[Value],
) -> (Vec<OpId>, Vec<Value>) {
    let mut mapping: FxHashMap<Value, Value> = m
        .block_args(block)
        .iter()
        .copied()
        .zip(args.iter().copied())
        .collect();
    let terminator = m.last_op(block);
    let ops: Vec<OpId> = m
        .block_ops(block)
        .filter(|&o| Some(o) != terminator)
        .collect();
    let clones = clone_ops_at(m, &ops, &mut mapping, InsertPoint::Before(before));
    let yielded = terminator
        .map(|t| {
            m.operands(t)
                .map(|v| *mapping.get(&v).unwrap_or(&v))
                .collect()
        })
        .unwrap_or_default();
    (clones, yielded)
}

/// Replaces `op` by a copy with `operands` and only the results where `keep` is true,
/// moving its regions over; uses of kept results move to the copy, dropped results must be
/// unused. Returns the copy. (Ops cannot lose results in place.)
pub fn recreate_with_results(m: &mut Module, op: OpId, operands: &[Value], keep: &[bool]) -> OpId {
    let old_results: Vec<Value> = m.results(op).collect();
    let kept: Vec<Value> = old_results
        .iter()
        .zip(keep)
        .filter(|&(_, &k)| k)
        .map(|(&r, _)| r)
        .collect();
    let regions: Vec<RegionId> = m
        .regions(op)
        .to_vec()
        .into_iter()
        .map(|old| {
            let new = m.create_region();
            m.take_blocks(old, new);
            new
        })
        .collect();
    let state = OpState {
        name: m.name(op),
        operands: operands.to_vec(),
        result_types: kept.iter().map(|&r| m.value_type(r)).collect(),
        props: m.props(op).to_vec(),
        attrs: m.attrs(op).to_vec(),
        regions,
        successors: m.successors(op).to_vec(),
        loc: m.loc(op),
        result_name: None,
    };
    replace_with_new_op(m, op, state, kept)
}

/// Creates `state` in place of `op`, which is erased: the new op's first results take over
/// the names and uses of `results` (results of `op`), in order. Returns the new op.
pub fn replace_with_new_op(m: &mut Module, op: OpId, state: OpState, results: Vec<Value>) -> OpId {
    let new = m.create_op_at(state, InsertPoint::Before(op));
    for (i, old) in results.into_iter().enumerate() {
        let v = m.result(new, i);
        let name = m.value_name(old).map(str::to_owned);
        m.set_value_name(v, name.as_deref());
        m.replace_all_uses(old, v);
    }
    m.erase_op(op);
    new
}

/// The region whose entry block holds the constants used in `block`: the nearest enclosing
/// region whose owner is isolated from above, unregistered (it might be isolated), or the
/// top op — MLIR's `OperationFolder` insertion region. Constants at the start of its entry
/// block dominate every use inside it.
pub fn constant_region(m: &Module, block: BlockId) -> Option<RegionId> {
    let mut block = block;
    loop {
        let region = m.block_parent_region(block)?;
        let owner = m.region_parent_op(region)?;
        let stops = m
            .op_def(owner)
            .is_none_or(|d| d.has(Traits::ISOLATED_FROM_ABOVE));
        match m.parent_block(owner) {
            Some(outer) if !stops => block = outer,
            _ => return Some(region),
        }
    }
}

/// The inclusive bounds of an `xla.range = [lo : index, hi : index]` attribute (on launch
/// index ops and function arguments).
pub fn xla_range(attr: &ir::Attribute) -> Option<(i64, i64)> {
    match attr.as_array()? {
        [lo, hi] => Some((lo.as_i64()?, hi.as_i64()?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::parse_module;

    #[test]
    fn dead_chains_are_erased_but_effects_stay() {
        let mut m = parse_module(
            "func.func @f(%a: i32, %n: index) -> i32 {
               %0 = arith.muli %a, %a : i32
               %1 = arith.addi %0, %a : i32
               %c0 = arith.constant 0 : index
               scf.for %i = %c0 to %n step %n {
                 %2 = arith.addi %a, %a : i32
               }
               %3 = func.call @f(%a, %n) : (i32, index) -> i32
               return %a : i32
             }",
        )
        .unwrap();
        let add = m.ops_named(ir::dialects::arith::ADDI)[0];
        assert!(is_trivially_dead(&m, add));
        assert_eq!(erase_with_dead_operands(&mut m, add), 2);
        let for_op = m.ops_named(ir::dialects::scf::FOR)[0];
        assert!(is_trivially_dead(&m, for_op));
        assert!(!is_trivially_dead(
            &m,
            m.ops_named(ir::dialects::func::CALL)[0]
        ));
        assert!(!is_trivially_dead(
            &m,
            m.ops_named(ir::dialects::func::RETURN)[0]
        ));
        assert_eq!(erase_with_dead_operands(&mut m, for_op), 2);
        m.verify().unwrap();
        assert!(m.ops_named(ir::dialects::arith::MULI).is_empty());
        assert!(m.ops_named(ir::dialects::arith::CONSTANT).is_empty());
    }

    #[test]
    fn constants_belong_to_the_function_entry() {
        let m = parse_module(
            "func.func @f(%n: index) {
               %c0 = arith.constant 0 : index
               scf.for %i = %c0 to %n step %n {
                 %c1 = arith.constant 1 : index
               }
               return
             }",
        )
        .unwrap();
        let f = m.ops_named(ir::dialects::func::FUNC)[0];
        let inner = m.ops_named(ir::dialects::arith::CONSTANT)[1];
        let block = m.parent_block(inner).unwrap();
        assert_eq!(constant_region(&m, block), Some(m.region(f, 0)));
    }
}
