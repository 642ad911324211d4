//! Routing of the ops on `i128` values ([`crate::wide`]) before the 64-bit dispatch.

use super::FnCx;
use super::llvm_ops::llvm_overflow;
use super::ops::overflow;
use crate::error::{Result, fail};
use crate::inst::Inst;
use crate::ops::IntOp;
use crate::scalar::ScalarTy;
use crate::value::Val;
use crate::wide::{WideInt, WideOp, words};
use ir::dialects::arith;
use ir::dialects::arith::CMPI_PREDICATES;
use ir::dialects::llvm;
use ir::{Attribute, OpId, Value};

impl FnCx<'_, '_> {
    /// Compiles `op` if it has a scalar `i128` first operand or result and computes on it
    /// (an integer op, a compare, a cast or a constant); integer ops `i128` does not have
    /// here are refused at the op. `None` leaves the op to the caller.
    pub(super) fn wide_op(&mut self, op: OpId) -> Option<Result<()>> {
        let m = self.m;
        // A scalar `i128` or a vector of them.
        let is_wide = |v: Value| {
            let t = m.value_type(v);
            let elem = if t.is_vector() {
                t.element_type()
            } else {
                Some(t)
            };
            elem.and_then(ScalarTy::of).is_some_and(ScalarTy::is_wide)
        };
        let operand = m.operands(op).next().filter(|&v| is_wide(v));
        let result = m.results(op).next().filter(|&v| is_wide(v));
        if operand.is_none() && result.is_none() {
            return None;
        }
        let name = m.name(op);
        let name = name.as_str();
        let width = |v: Value| {
            let t = m.value_type(v);
            let elem = if t.is_vector() {
                t.element_type().unwrap_or(t)
            } else {
                t
            };
            elem.int_width().unwrap_or(0)
        };
        let int_op = IntOp::arith(name).or_else(|| IntOp::llvm(name));
        let wide = match (name, int_op) {
            (_, Some(f)) => WideInt::of(f).map(|f| {
                let flags = if name.starts_with("llvm.") {
                    llvm_overflow(m.prop(op, "overflowFlags"))
                } else {
                    overflow(m.prop(op, "overflowFlags"))
                };
                WideOp::Int(f, flags)
            }),
            (arith::CMPI | llvm::ICMP, _) => m
                .prop(op, "predicate")
                .and_then(Attribute::as_i64)
                .filter(|p| (0..CMPI_PREDICATES.len() as i64).contains(p))
                .map(|p| WideOp::Cmp(p as u8)),
            (arith::TRUNCI | llvm::TRUNC, _) => Some(WideOp::Trunc(width(m.result(op, 0)))),
            (arith::EXTUI | llvm::ZEXT, _) => Some(WideOp::ZExt(width(m.operand(op, 0)))),
            (arith::EXTSI | llvm::SEXT, _) => Some(WideOp::SExt(width(m.operand(op, 0)))),
            (arith::BITCAST | llvm::BITCAST | llvm::FREEZE, _)
                if operand.is_some() && result.is_some() =>
            {
                let (dst, src) = (self.results(op), self.src(op, 0));
                self.emit(op, Inst::Copy { dst, src });
                return Some(Ok(()));
            }
            (arith::CONSTANT | llvm::MLIR_CONSTANT, _) if result.is_some() => {
                return Some(self.wide_constant(op));
            }
            // Ops that move values whole (`select`, `extract`, loads, yields, calls ...):
            // theirs to compile; the 64-bit paths refuse an `i128` where they would compute.
            _ => return None,
        };
        Some(match wide {
            Some(wide) => {
                let a = self.operand(op, 0);
                let b = if m.operands(op).len() > 1 {
                    self.operand(op, 1)
                } else {
                    a
                };
                let dst = self.results(op);
                self.emit(
                    op,
                    Inst::Wide {
                        op: wide,
                        dst,
                        a,
                        b,
                    },
                );
                Ok(())
            }
            None => {
                let e = fail!(Unsupported, "'{name}' on i128");
                Err(self.err(op, e))
            }
        })
    }

    /// A scalar `i128` constant.
    fn wide_constant(&mut self, op: OpId) -> Result<()> {
        let val = match self.m.prop(op, "value") {
            Some(Attribute::Int(v, _)) => Val::W(words(*v as u128)),
            _ => {
                let e = fail!(Unsupported, "an i128 constant that is not an integer");
                return Err(self.err(op, e));
            }
        };
        let dst = self.results(op);
        self.emit(op, Inst::Const { dst, val });
        Ok(())
    }
}
