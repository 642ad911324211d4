//! `cse`: common subexpression elimination, as MLIR's CSE pass does it for pure ops.
//!
//! A pure op (registered, `PURE`, not a terminator, without regions) whose name, operands,
//! properties, attributes and result types equal those of an op that dominates it is
//! replaced by that op's results; operands of commutative ops compare as a multiset
//! (`addi %a, %b` equals `addi %b, %a`). Dominance is followed through the region tree: ops
//! of enclosing blocks are visible in nested regions, ops of one region are not visible in
//! its sibling regions or after its parent op, and ops isolated from above (functions) and
//! unregistered ops start from an empty table. In a region with several blocks, the entry
//! block's ops are visible in all of them (the entry dominates every block). Trivially dead
//! ops met on the way are erased, as in MLIR.

use crate::pass::Pass;
use crate::rewrite::is_trivially_dead;
use ir::intern::{FxHashMap, FxHasher};
use ir::{BlockId, Diagnostic, Module, OpId, Traits, Value};
use std::borrow::Cow;
use std::hash::{Hash, Hasher};

/// Common subexpression elimination (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct Cse;

impl Pass for Cse {
    crate::pass_names!(
        "cse",
        "Eliminate common subexpressions: a pure op equal to a dominating one reuses its results"
    );

    fn display_name(&self) -> Cow<'static, str> {
        Cow::Borrowed("CSE")
    }

    fn run(&self, module: &mut Module) -> Result<(), Diagnostic> {
        let top = module.top();
        simplify_regions(module, top, &mut Vec::new());
        Ok(())
    }
}

/// Known ops of one open scope, by [`fingerprint`]: the first op of each fingerprint, and
/// the rare others with the same fingerprint. Ops are compared in place ([`equivalent`]),
/// so a lookup allocates nothing (a key of four vectors per op made CSE a quarter slower
/// per op on long chains, and it grew with the cache misses of the allocations).
#[derive(Default)]
struct Scope {
    first: FxHashMap<u64, OpId>,
    more: FxHashMap<u64, Vec<OpId>>,
}

impl Scope {
    fn find(&self, m: &Module, hash: u64, op: OpId) -> Option<OpId> {
        let first = *self.first.get(&hash)?;
        if equivalent(m, first, op) {
            return Some(first);
        }
        self.more
            .get(&hash)?
            .iter()
            .copied()
            .find(|&known| equivalent(m, known, op))
    }

    fn insert(&mut self, hash: u64, op: OpId) {
        if let Some(&first) = self.first.get(&hash) {
            debug_assert_ne!(first, op);
            self.more.entry(hash).or_default().push(op);
        } else {
            self.first.insert(hash, op);
        }
    }
}

/// Open scopes, innermost last.
type Scopes = Vec<Scope>;

/// Whether CSE may replace `op`: registered, pure, not a terminator, no regions, results.
fn eligible(m: &Module, op: OpId) -> bool {
    m.op_def(op).is_some_and(|def| {
        def.has(Traits::PURE)
            && !def.has(Traits::TERMINATOR)
            && m.regions(op).is_empty()
            && m.num_results(op) > 0
    })
}

fn commutative(m: &Module, op: OpId) -> bool {
    m.op_def(op).is_some_and(|d| d.has(Traits::COMMUTATIVE))
}

/// A hash of what makes two eligible ops equal: name, operands (order-free for
/// commutative ops), properties, attributes and result types.
fn fingerprint(m: &Module, op: OpId) -> u64 {
    let mut h = FxHasher::default();
    m.name(op).hash(&mut h);
    if commutative(m, op) {
        // A sum of per-operand hashes does not depend on the order.
        let mut sum = 0u64;
        for v in m.operands(op) {
            let mut one = FxHasher::default();
            v.hash(&mut one);
            sum = sum.wrapping_add(one.finish());
        }
        sum.hash(&mut h);
    } else {
        for v in m.operands(op) {
            v.hash(&mut h);
        }
    }
    m.props(op).hash(&mut h);
    m.attrs(op).hash(&mut h);
    for r in m.results(op) {
        m.value_type(r).hash(&mut h);
    }
    h.finish()
}

/// Whether eligible ops `a` and `b` compute the same values (see the module documentation).
fn equivalent(m: &Module, a: OpId, b: OpId) -> bool {
    if m.name(a) != m.name(b)
        || m.num_operands(a) != m.num_operands(b)
        || m.num_results(a) != m.num_results(b)
        || m.props(a) != m.props(b)
        || m.attrs(a) != m.attrs(b)
        || !m
            .results(a)
            .zip(m.results(b))
            .all(|(x, y)| m.value_type(x) == m.value_type(y))
    {
        return false;
    }
    if commutative(m, a) {
        let mut x = m.operand_vec(a);
        let mut y = m.operand_vec(b);
        x.sort_unstable();
        y.sort_unstable();
        x == y
    } else {
        m.operands(a).eq(m.operands(b))
    }
}

/// Runs CSE inside the regions of `op`, seeing the ops in `scopes`.
fn simplify_regions(m: &mut Module, op: OpId, scopes: &mut Scopes) {
    let fresh = m
        .op_def(op)
        .is_none_or(|d| d.has(Traits::ISOLATED_FROM_ABOVE));
    let mut isolated = Scopes::new();
    let scopes = if fresh { &mut isolated } else { scopes };
    for region in m.regions(op).to_vec() {
        let blocks = m.region_blocks(region).to_vec();
        let Some((&entry, rest)) = blocks.split_first() else {
            continue;
        };
        scopes.push(Scope::default());
        simplify_block(m, entry, scopes);
        for &block in rest {
            scopes.push(Scope::default());
            simplify_block(m, block, scopes);
            scopes.pop();
        }
        scopes.pop();
    }
}

fn simplify_block(m: &mut Module, block: BlockId, scopes: &mut Scopes) {
    let ops: Vec<OpId> = m.block_ops(block).collect();
    for op in ops {
        if is_trivially_dead(m, op) {
            m.erase_op(op);
            continue;
        }
        if eligible(m, op) {
            let hash = fingerprint(m, op);
            match scopes.iter().rev().find_map(|s| s.find(m, hash, op)) {
                Some(existing) => {
                    let replacements: Vec<Value> = m.results(existing).collect();
                    m.replace_op(op, &replacements);
                    continue;
                }
                None => {
                    if let Some(scope) = scopes.last_mut() {
                        scope.insert(hash, op);
                    }
                }
            }
        }
        simplify_regions(m, op, scopes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pass::run_verified;

    fn cse(src: &str) -> String {
        run_verified(&Cse, src).print()
    }

    #[test]
    fn equal_ops_merge_and_commuted_operands_match() {
        let out = cse(
            "func.func @f(%a: i32, %b: i32) -> (i32, i32, i32, i32, i32) {
               %0 = arith.addi %a, %b : i32
               %1 = arith.addi %b, %a : i32
               %2 = arith.subi %a, %b : i32
               %3 = arith.subi %b, %a : i32
               %4 = arith.addi %a, %b overflow<nsw> : i32
               return %0, %1, %2, %3, %4 : i32, i32, i32, i32, i32
             }",
        );
        assert_eq!(out.matches(ir::dialects::arith::ADDI).count(), 2, "{out}");
        assert_eq!(out.matches(ir::dialects::arith::SUBI).count(), 2, "{out}");
        assert!(out.contains("return %0, %0, %1, %2, %3"), "{out}");
    }

    #[test]
    fn scopes_follow_dominance() {
        let out = cse("func.func @f(%a: index, %c: i1) -> index {
               %0 = arith.muli %a, %a : index
               %r = scf.if %c -> (index) {
                 %1 = arith.muli %a, %a : index
                 %2 = arith.addi %a, %a : index
                 scf.yield %2 : index
               } else {
                 %3 = arith.addi %a, %a : index
                 scf.yield %3 : index
               }
               %4 = arith.addi %a, %a : index
               %5 = arith.addi %r, %4 : index
               %6 = arith.addi %5, %0 : index
               return %6 : index
             }");
        // The muli in the branch merges with the dominating one (and is then dead); the
        // addi of each branch and the one after the if stay distinct.
        assert_eq!(out.matches(ir::dialects::arith::MULI).count(), 1, "{out}");
        assert_eq!(out.matches("arith.addi %a, %a").count(), 3, "{out}");
    }

    #[test]
    fn functions_do_not_share() {
        let out = cse("func.func @f(%a: i32) -> i32 {
               %c1 = arith.constant 1 : i32
               return %c1 : i32
             }
             func.func @g(%a: i32) -> i32 {
               %c1 = arith.constant 1 : i32
               return %c1 : i32
             }");
        assert_eq!(out.matches("arith.constant 1 : i32").count(), 2, "{out}");
    }
}
