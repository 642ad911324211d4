//! Constants kept unique and at the top of their function, as MLIR's `OperationFolder` keeps
//! them during canonicalization.
//!
//! Every constant belongs to the entry block of its [`constant_region`] (the enclosing
//! function, usually). Within it there is one constant op per (op name, value, type); a
//! duplicate is replaced by the first one seen, and a constant that is not already part of
//! the run of constants at the start of the entry block is moved to the start. Constants
//! created by folding are appended to that run, so they read in the order they were made.
//! Because the entry block dominates the whole region, moving a constant there never breaks
//! a use.

use crate::rewrite::constant_region;
use ir::dialects::arith;
use ir::intern::{FxHashMap, FxHashSet};
use ir::{
    Attribute, BlockId, Ident, InsertPoint, Module, OpId, OpState, RegionId, Traits, Type, Value,
};

/// Whether `op` materializes a constant (`arith.constant`).
pub fn is_constant(m: &Module, op: OpId) -> bool {
    m.op_def(op).is_some_and(|d| d.has(Traits::CONSTANT_LIKE)) && m.num_results(op) == 1
}

type Key = (RegionId, Ident, Attribute, Type);

/// The unique constants of each constant region.
#[derive(Default)]
pub struct ConstantTable {
    by_value: FxHashMap<Key, OpId>,
    /// Constants this table placed or accepted at the start of an entry block.
    owned: FxHashSet<OpId>,
    /// The last constant of each region's leading run, where the next new one goes.
    run_end: FxHashMap<RegionId, OpId>,
}

impl ConstantTable {
    /// Registers the existing constant op `op`: replaces it by an equal constant already
    /// registered, or else makes it the region's constant for its value, moving it to the
    /// start of the entry block unless it already sits in the leading run of constants.
    /// Returns whether the IR changed.
    pub fn insert_existing(&mut self, m: &mut Module, op: OpId) -> bool {
        let (Some(block), Some(value)) = (m.parent_block(op), m.get_attr(op, "value")) else {
            return false;
        };
        let Some(region) = constant_region(m, block) else {
            return false;
        };
        let key = (
            region,
            m.name(op),
            value.clone(),
            m.value_type(m.result(op, 0)),
        );
        if let Some(&existing) = self.by_value.get(&key)
            && m.is_alive(existing)
        {
            m.replace_op(op, &[m.result(existing, 0)]);
            return true;
        }
        self.by_value.insert(key, op);
        self.owned.insert(op);
        let Some(entry) = m.entry_block(region) else {
            return false;
        };
        let in_place = m.parent_block(op) == Some(entry)
            && (m.first_op(entry) == Some(op)
                || m.prev_op(op).is_some_and(|p| self.owned.contains(&p)));
        if !in_place {
            m.move_op(op, InsertPoint::BlockStart(entry));
        }
        !in_place
    }

    /// The `arith.constant` holding `value`, usable anywhere `user` is: an existing one of
    /// `user`'s constant region, or a new one after the constants at the start of the
    /// region's entry block.
    pub fn get_or_create(&mut self, m: &mut Module, user: OpId, value: Attribute) -> Option<Value> {
        let ty = value.ty()?;
        let region = constant_region(m, m.parent_block(user)?)?;
        let name = Ident::new(arith::CONSTANT);
        let key = (region, name, value, ty);
        if let Some(&existing) = self.by_value.get(&key)
            && m.is_alive(existing)
        {
            return Some(m.result(existing, 0));
        }
        let entry = m.entry_block(region)?;
        let at = self.end_of_run(m, region, entry);
        let op = m.create_op_at(
            OpState::with_ident(name)
                .prop("value", key.2.clone())
                .results(&[ty])
                .loc(m.loc(user)),
            at,
        );
        self.by_value.insert(key, op);
        self.owned.insert(op);
        self.run_end.insert(region, op);
        Some(m.result(op, 0))
    }

    /// Where a new constant goes: after the run of known constants that starts `entry`.
    fn end_of_run(&self, m: &Module, region: RegionId, entry: BlockId) -> InsertPoint {
        let cached = self.run_end.get(&region).copied().filter(|&op| {
            m.is_alive(op) && m.parent_block(op) == Some(entry) && self.owned.contains(&op)
        });
        let (mut at, mut next) = match cached {
            Some(op) => (InsertPoint::After(op), m.next_op(op)),
            None => (InsertPoint::BlockStart(entry), m.first_op(entry)),
        };
        while let Some(op) = next.filter(|op| self.owned.contains(op)) {
            at = InsertPoint::After(op);
            next = m.next_op(op);
        }
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::parse_module;

    #[test]
    fn constants_are_uniqued_and_hoisted() {
        let mut m = parse_module(
            "func.func @f(%n: index) -> index {
               %c0 = arith.constant 0 : index
               %0 = arith.addi %n, %c0 : index
               %c1 = arith.constant 1 : index
               scf.for %i = %c0 to %n step %c1 {
                 %c0_0 = arith.constant 0 : index
                 %1 = arith.addi %i, %c0_0 : index
               }
               return %0 : index
             }",
        )
        .unwrap();
        let mut table = ConstantTable::default();
        let ops = m.collect_ops(m.top());
        let constants: Vec<OpId> = ops
            .iter()
            .copied()
            .filter(|&op| is_constant(&m, op))
            .collect();
        let changed: Vec<bool> = constants
            .into_iter()
            .map(|op| table.insert_existing(&mut m, op))
            .collect();
        assert_eq!(changed, [false, true, true]);
        let add = ops
            .iter()
            .copied()
            .find(|&o| m.is(o, ir::dialects::arith::ADDI))
            .unwrap();
        let two = table
            .get_or_create(&mut m, add, Attribute::index(2))
            .unwrap();
        let again = table
            .get_or_create(&mut m, add, Attribute::index(2))
            .unwrap();
        assert_eq!(two, again);
        m.verify().unwrap();
        let text = m.print();
        let body: Vec<&str> = text.lines().skip(2).take(4).map(str::trim).collect();
        assert_eq!(
            body,
            [
                "%c1 = arith.constant 1 : index",
                "%c0 = arith.constant 0 : index",
                "%c2 = arith.constant 2 : index",
                "%0 = arith.addi %n, %c0 : index",
            ],
            "{text}"
        );
        assert!(text.contains("%1 = arith.addi %i, %c0 : index"), "{text}");
    }
}
