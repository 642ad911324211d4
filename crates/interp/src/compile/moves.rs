//! Which uses of tensor and vector values may move them out of their registers.
//!
//! A tensor chain `%t1 = insert .. into %t0; %t2 = insert .. into %t1` mutates one overlay
//! in place only if each insert owns its operand. A use may take the value when no other use
//! can run after it: it is the last use in execution order, and no loop lies between the
//! use and the value's definition (a loop body runs again and would read the value again).
//! Uses in the two branches of an `scf.if` exclude each other. Everything else shares the
//! value (`Rc`) and copies on write, which is always correct, only slower.

use ir::dialects::scf;
use ir::dialects::xla_gpu;
use ir::{BlockId, Module, OpId, Use, Value};
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

/// Ops whose regions run more than once.
const LOOPS: &[&str] = &[scf::FOR, scf::WHILE, xla_gpu::LOOP];

/// One step of a use's position, from the definition's block down to the using op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// The op at `pos` of the block in region `region` of the previous step's op (the first
    /// step: of the definition's block, region 0).
    Op { region: usize, pos: usize },
    /// Operand `index` of the previous step's op.
    Operand(usize),
}

/// How two uses are ordered at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Order {
    Before,
    After,
    Exclusive,
}

struct Positions<'m> {
    m: &'m Module,
    cache: HashMap<BlockId, HashMap<OpId, usize>>,
}

impl Positions<'_> {
    fn pos(&mut self, op: OpId) -> usize {
        let m = self.m;
        let block = m.parent_block(op).expect("nested op has a block");
        self.cache.entry(block).or_insert_with(|| {
            m.block_ops(block)
                .enumerate()
                .map(|(i, o)| (o, i))
                .collect()
        })[&op]
    }

    fn region_index(&self, op: OpId) -> usize {
        let m = self.m;
        let block = m.parent_block(op).expect("nested op has a block");
        let region = m.block_parent_region(block).expect("block in a region");
        let parent = m.region_parent_op(region).expect("region of an op");
        m.regions(parent)
            .iter()
            .position(|&r| r == region)
            .expect("region of its parent")
    }
}

/// The uses in `func` (a function op) that may take their (tensor or vector) value.
pub(crate) fn movable_uses(m: &Module, func: OpId) -> HashSet<Use> {
    let mut positions = Positions {
        m,
        cache: HashMap::new(),
    };
    let mut out = HashSet::new();
    let mut values: Vec<(Value, BlockId)> = Vec::new();
    m.walk(func, |op| {
        for &r in m.regions(op) {
            for &b in m.region_blocks(r) {
                values.extend(m.block_args(b).iter().map(|&a| (a, b)));
            }
        }
        if op != func
            && let Some(block) = m.parent_block(op)
        {
            values.extend(m.results(op).map(|v| (v, block)));
        }
    });
    for (v, def_block) in values {
        let t = m.value_type(v);
        if !(t.is_tensor() || t.is_vector()) {
            continue;
        }
        let uses: Vec<(Use, Option<Vec<Step>>)> = m
            .uses(v)
            .map(|u| (u, path(&mut positions, def_block, u)))
            .collect();
        for (u, p) in &uses {
            let Some(p) = p else { continue };
            let last = uses.iter().all(|(other, q)| {
                other == u
                    || q.as_ref()
                        .is_some_and(|q| order(m, def_block, q, p) != Order::After)
            });
            if last {
                out.insert(*u);
            }
        }
    }
    out
}

/// The position of `u` below `def_block`, or `None` if a loop lies in between (or the use
/// is not below the block at all).
fn path(positions: &mut Positions<'_>, def_block: BlockId, u: Use) -> Option<Vec<Step>> {
    let m = positions.m;
    let mut chain = vec![u.op];
    let mut cur = u.op;
    while m.parent_block(cur)? != def_block {
        cur = m.parent_op(cur)?;
        if LOOPS.iter().any(|&l| m.is(cur, l)) {
            return None;
        }
        chain.push(cur);
    }
    let mut steps: Vec<Step> = chain
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &op)| Step::Op {
            region: if i == 0 {
                0
            } else {
                positions.region_index(op)
            },
            pos: positions.pos(op),
        })
        .collect();
    steps.push(Step::Operand(u.index as usize));
    Some(steps)
}

/// How use `a` runs relative to use `b` (both paths from `def_block`).
fn order(m: &Module, def_block: BlockId, a: &[Step], b: &[Step]) -> Order {
    let shared = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (Some(&sa), Some(&sb)) = (a.get(shared), b.get(shared)) else {
        return Order::Exclusive; // the same use
    };
    match (sa, sb) {
        (Step::Operand(x), Step::Operand(y)) => ordering(x.cmp(&y)),
        // An op's operands are read before its regions run.
        (Step::Operand(_), Step::Op { .. }) => Order::Before,
        (Step::Op { .. }, Step::Operand(_)) => Order::After,
        (
            Step::Op {
                region: ra,
                pos: pa,
            },
            Step::Op {
                region: rb,
                pos: pb,
            },
        ) => {
            if ra == rb {
                ordering(pa.cmp(&pb))
            } else if m.is(op_at(m, def_block, &a[..shared]), scf::IF) {
                Order::Exclusive
            } else {
                ordering(ra.cmp(&rb))
            }
        }
    }
}

fn ordering(o: Ordering) -> Order {
    if o == Ordering::Less {
        Order::Before
    } else {
        Order::After
    }
}

/// The op a (non-empty) prefix of a path leads to.
fn op_at(m: &Module, def_block: BlockId, steps: &[Step]) -> OpId {
    let mut block = def_block;
    let mut op = None;
    for step in steps {
        let Step::Op { region, pos } = *step else {
            break;
        };
        if let Some(parent) = op {
            block = m
                .entry_block(m.region(parent, region))
                .expect("region with a block");
        }
        op = m.block_ops(block).nth(pos);
    }
    op.expect("a path starts with an op")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The (op name, operand index) of every movable use in the module's first function.
    fn movable(text: &str) -> Vec<(String, u32)> {
        let m = ir::parse_module(text).unwrap();
        let func = m.block_ops(m.body()).next().unwrap();
        let mut out: Vec<(String, u32)> = movable_uses(&m, func)
            .into_iter()
            .map(|u| (m.name(u.op).to_string(), u.index))
            .collect();
        out.sort();
        out
    }

    #[test]
    fn chains_move_and_loops_block() {
        let text = r#"
          func.func @f(%t: tensor<4xf32>, %x: f32, %n: index) -> (tensor<4xf32>, f32) {
            %c0 = arith.constant 0 : index
            %c1 = arith.constant 1 : index
            %a = tensor.insert %x into %t[%c0] : tensor<4xf32>
            %e = tensor.extract %a[%c0] : tensor<4xf32>
            %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (tensor<4xf32>) {
              %b = tensor.insert %e into %acc[%i] : tensor<4xf32>
              %u = tensor.extract %t[%i] : tensor<4xf32>
              scf.yield %b : tensor<4xf32>
            }
            return %r, %e : tensor<4xf32>, f32
          }"#;
        assert_eq!(
            movable(text),
            [
                (ir::dialects::func::RETURN.to_string(), 0),
                (ir::dialects::scf::FOR.to_string(), 3),
                (ir::dialects::scf::YIELD.to_string(), 0),
                (ir::dialects::tensor::INSERT.to_string(), 1),
            ]
        );
    }

    #[test]
    fn branches_exclude_each_other_but_follow_the_operands() {
        let text = r#"
          func.func @f(%t: tensor<4xf32>, %c: i1, %x: f32) -> tensor<4xf32> {
            %c0 = arith.constant 0 : index
            %r = scf.if %c -> (tensor<4xf32>) {
              %a = tensor.insert %x into %t[%c0] : tensor<4xf32>
              scf.yield %a : tensor<4xf32>
            } else {
              scf.yield %t : tensor<4xf32>
            }
            return %r : tensor<4xf32>
          }"#;
        let got = movable(text);
        assert!(
            got.contains(&(ir::dialects::tensor::INSERT.to_string(), 1)),
            "{got:?}"
        );
        assert!(
            got.contains(&(ir::dialects::scf::YIELD.to_string(), 0)),
            "{got:?}"
        );
        // Both uses of %t (insert in then, yield in else) may move; both yields too.
        assert_eq!(
            got.iter()
                .filter(|(n, _)| n == ir::dialects::scf::YIELD)
                .count(),
            2
        );
    }
}
