//! `vector.multi_reduction` and `vector.transpose`: ops on whole n-d vectors, run lane by
//! lane on the row-major lanes of their operands.

use super::FnCx;
use crate::error::{Result, fail};
use crate::inst::Inst;
use crate::ops::{FastMath, FloatOp, IntOp, Op2, Overflow};
use crate::scalar::ScalarTy;
use ir::OpId;
use ir::dialects::vector;

impl FnCx<'_, '_> {
    /// `vector.multi_reduction <kind>`: the accumulator combined with every lane of the
    /// source, in row-major order, per position of the kept dimensions.
    pub(super) fn multi_reduction(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let source = m.value_type(m.operand(op, 0));
        let kind = vector::reduction_kind(m, op).unwrap_or("");
        let combine = match self.scalar(op, m.operand(op, 0))? {
            ScalarTy::Float(k) => {
                let f = match kind {
                    "add" => FloatOp::Add,
                    "mul" => FloatOp::Mul,
                    "maximumf" => FloatOp::Maximum,
                    "minimumf" => FloatOp::Minimum,
                    "maxnumf" => FloatOp::MaxNum,
                    "minnumf" => FloatOp::MinNum,
                    _ => return Err(self.err(op, fail!(InvalidIr, "reduction kind '{kind}'"))),
                };
                Op2::Float(f, k, FastMath::default())
            }
            int => {
                let f = match kind {
                    "add" => IntOp::Add,
                    "mul" => IntOp::Mul,
                    "maxsi" => IntOp::MaxS,
                    "minsi" => IntOp::MinS,
                    "maxui" => IntOp::MaxU,
                    "minui" => IntOp::MinU,
                    "and" => IntOp::And,
                    "or" => IntOp::Or,
                    "xor" => IntOp::Xor,
                    _ => return Err(self.err(op, fail!(InvalidIr, "reduction kind '{kind}'"))),
                };
                Op2::Int(f, int.width(), Overflow::default())
            }
        };
        let dims = vector::reduction_dims(m, op);
        let shape = source.shape().unwrap_or(&[]);
        let inst = Inst::MultiReduction {
            combine,
            src: self.operand(op, 0),
            acc: self.operand(op, 1),
            shape: shape.into(),
            reduced: (0..shape.len())
                .map(|d| dims.contains(&(d as i64)))
                .collect(),
            dst: self.results(op),
        };
        self.emit(op, inst);
        Ok(())
    }

    /// `vector.transpose`: result lane `i` is the source lane at `i`'s index permuted back.
    pub(super) fn transpose(&mut self, op: OpId) -> Result<()> {
        let inst = Inst::Transpose {
            src: self.operand(op, 0),
            shape: self.vector_shape(op, 0),
            permutation: vector::permutation(self.m, op).into(),
            dst: self.results(op),
        };
        self.emit(op, inst);
        Ok(())
    }
}
