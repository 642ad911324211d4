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
use ir::intern::FxHashMap;
use ir::{BlockId, Diagnostic, Ident, Module, NamedAttr, OpId, Traits, Type, Value};
use std::borrow::Cow;

/// Common subexpression elimination (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct Cse;

impl Pass for Cse {
    fn name(&self) -> &'static str {
        "cse"
    }

    fn description(&self) -> &'static str {
        "Eliminate common subexpressions: a pure op equal to a dominating one reuses its results"
    }

    fn display_name(&self) -> Cow<'static, str> {
        Cow::Borrowed("CSE")
    }

    fn run(&self, module: &mut Module) -> Result<(), Diagnostic> {
        let top = module.top();
        simplify_regions(module, top, &mut Vec::new());
        Ok(())
    }
}

/// What makes two pure ops equal.
#[derive(PartialEq, Eq, Hash)]
struct Key {
    name: Ident,
    operands: Vec<Value>,
    props: Vec<NamedAttr>,
    attrs: Vec<NamedAttr>,
    types: Vec<Type>,
}

/// Known ops, one table per open scope, innermost last.
type Scopes = Vec<FxHashMap<Key, OpId>>;

/// The key of `op` if CSE may replace it.
fn key(m: &Module, op: OpId) -> Option<Key> {
    let def = m.op_def(op)?;
    if !def.has(Traits::PURE)
        || def.has(Traits::TERMINATOR)
        || !m.regions(op).is_empty()
        || m.num_results(op) == 0
    {
        return None;
    }
    let mut operands = m.operand_vec(op);
    if def.has(Traits::COMMUTATIVE) {
        operands.sort_unstable();
    }
    Some(Key {
        name: m.name(op),
        operands,
        props: m.props(op).to_vec(),
        attrs: m.attrs(op).to_vec(),
        types: m.result_types(op),
    })
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
        scopes.push(FxHashMap::default());
        simplify_block(m, entry, scopes);
        for &block in rest {
            scopes.push(FxHashMap::default());
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
        if let Some(key) = key(m, op) {
            match scopes.iter().rev().find_map(|s| s.get(&key)) {
                Some(&existing) => {
                    let replacements: Vec<Value> = m.results(existing).collect();
                    m.replace_op(op, &replacements);
                    continue;
                }
                None => {
                    if let Some(scope) = scopes.last_mut() {
                        scope.insert(key, op);
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
    use ir::parse_module;

    fn cse(src: &str) -> String {
        let mut m = parse_module(src).unwrap();
        Cse.run(&mut m).unwrap();
        m.verify().unwrap();
        m.print()
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
        assert_eq!(out.matches("arith.addi").count(), 2, "{out}");
        assert_eq!(out.matches("arith.subi").count(), 2, "{out}");
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
        assert_eq!(out.matches("arith.muli").count(), 1, "{out}");
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
