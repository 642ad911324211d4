//! The alignment `lower-tensors` gives a vector load or store: what the index proves, as
//! the largest power of two known to divide it (constants, sums, products, `scf.for` bounds
//! and steps, `apply_indexing` maps), times the element size, at most the buffer's.

use super::BUFFER_ALIGNMENT;
use ir::dialects::arith;
use ir::dialects::scf;
use ir::dialects::xla_gpu;
use ir::{Attribute, BlockId, Module, OpId, Type, Value, ValueDef};

/// Sets the alignment of a vector load or store of `&buffer[index]`: the element size times
/// the largest power of two known to divide `index`, at most the buffer's alignment.
pub(super) fn set_alignment(m: &mut Module, access: OpId, index: Value, elem: Type) {
    let elem_bytes = u64::from(elem.bit_width().unwrap_or(8).div_ceil(8));
    let alignment = (elem_bytes << index_twos(m, index)).min(BUFFER_ALIGNMENT.max(elem_bytes));
    m.set_prop(access, "alignment", Attribute::i64(alignment as i64));
}

/// How many times 2 is known to divide the index `v` (at most [`MAX_TWOS`]).
pub(super) fn index_twos(m: &Module, v: Value) -> u32 {
    known_twos(m, v, MAX_DEPTH)
}

/// More powers of two than any alignment needs.
const MAX_TWOS: u32 = 16;

/// How far back through definitions the analysis looks. Index arithmetic is a handful of
/// ops deep; the bound keeps the recursion's depth independent of the input (a chain of
/// 100,000 `arith.addi`s is read 32 deep and gets the alignment of one element).
const MAX_DEPTH: u32 = 32;

/// How many times 2 is known to divide the index `v` (at most [`MAX_TWOS`]), looking at
/// most `depth` definitions back.
fn known_twos(m: &Module, v: Value, depth: u32) -> u32 {
    let Some(depth) = depth.checked_sub(1) else {
        return 0;
    };
    let twos = match m.value_def(v) {
        ValueDef::Result { op, index } => op_result_twos(m, op, index as usize, depth),
        ValueDef::Arg { block, index } => loop_iv_twos(m, block, index, depth),
        ValueDef::Detached => 0,
    };
    twos.min(MAX_TWOS)
}

fn op_result_twos(m: &Module, op: OpId, index: usize, depth: u32) -> u32 {
    let operand = |i: usize| known_twos(m, m.operand(op, i), depth);
    match m.name(op).as_str() {
        arith::CONSTANT => m
            .prop(op, "value")
            .and_then(Attribute::as_int)
            .map_or(0, constant_twos),
        arith::ADDI | arith::SUBI => operand(0).min(operand(1)),
        arith::MULI => operand(0) + operand(1),
        arith::INDEX_CAST | arith::INDEX_CASTUI => operand(0),
        xla_gpu::APPLY_INDEXING => {
            let map = ir::dialects::xla_gpu::indexing_map(m, op).expect("apply_indexing's map");
            let operands: Vec<u32> = (0..m.num_operands(op)).map(operand).collect();
            expr_twos(&map.results[index], &operands, map.dims.len())
        }
        _ => 0,
    }
}

/// An `scf.for` induction variable is `lb + k * step`.
fn loop_iv_twos(m: &Module, block: BlockId, index: u32, depth: u32) -> u32 {
    match m.block_parent_op(block) {
        Some(op) if index == 0 && m.is(op, scf::FOR) => {
            known_twos(m, m.operand(op, 0), depth).min(known_twos(m, m.operand(op, 2), depth))
        }
        _ => 0,
    }
}

fn constant_twos(c: i128) -> u32 {
    if c == 0 { MAX_TWOS } else { c.trailing_zeros() }
}

/// How many times 2 divides an affine expression whose operands (dims, then symbols) are
/// divided `operands[i]` times.
fn expr_twos(e: &indexing::AffineExpr, operands: &[u32], dims: usize) -> u32 {
    use indexing::AffineExpr as E;
    let twos = match e {
        E::Constant(c) => constant_twos((*c).into()),
        E::Dim(i) => operands.get(*i).copied().unwrap_or(0),
        E::Symbol(i) => operands.get(dims + i).copied().unwrap_or(0),
        E::Add(a, b) | E::Max(a, b) | E::Min(a, b) => {
            expr_twos(a, operands, dims).min(expr_twos(b, operands, dims))
        }
        E::Product(a, b) => expr_twos(a, operands, dims) + expr_twos(b, operands, dims),
        E::Mul(a, c) => expr_twos(a, operands, dims) + constant_twos((*c).into()),
        E::Mod(a, c) => expr_twos(a, operands, dims).min(constant_twos((*c).into())),
        // An exact division by a power of two keeps the rest of the factor.
        E::FloorDiv(a, d) | E::CeilDiv(a, d) if d.count_ones() == 1 => {
            expr_twos(a, operands, dims).saturating_sub(d.trailing_zeros())
        }
        E::FloorDiv(..) | E::CeilDiv(..) => 0,
    };
    twos.min(MAX_TWOS)
}
