//! The op dispatcher, and `arith`/`math` ops and constants.

use super::FnCx;
use crate::error::{Error, Result, fail};
use crate::inst::Inst;
use crate::math::{MathFn, MathFn2};
use crate::ops::{Cast, FastMath, FloatOp, IntOp, Op1, Op2, Overflow};
use crate::scalar::{ScalarTy, int_bits};
use crate::value::{LocalStore, Tensor, Val};
use hlo::shape::next_row_major;
use ir::dialects::arith;
use ir::dialects::arith::{CMPF_PREDICATES, CMPI_PREDICATES};
use ir::dialects::func;
use ir::dialects::gpu;
use ir::dialects::llvm;
use ir::dialects::math;
use ir::dialects::nvvm;
use ir::dialects::nvvm::SREGS;
use ir::dialects::scf;
use ir::dialects::tensor;
use ir::dialects::vector;
use ir::dialects::xla_gpu;
use ir::{Attribute, DenseValues, FloatKind, OpId, Scalar, Type};
use std::rc::Rc;

impl FnCx<'_, '_> {
    pub(super) fn unsupported(&mut self, op: OpId) -> Error {
        let e = fail!(Unsupported, "the interpreter does not execute this op");
        self.err(op, e)
    }

    /// The fast-math flags of `op`: the `fastmath` property of `arith` and `math` ops
    /// (`#arith.fastmath<nnan,ninf>`), the `fastmathFlags` of `llvm` ones
    /// (`#llvm.fastmath<nnan, ninf>`).
    pub(super) fn fastmath(&self, op: OpId) -> FastMath {
        let (prop, prefix) = if self.m.name(op).as_str().starts_with("llvm.") {
            ("fastmathFlags", "#llvm.fastmath<")
        } else {
            ("fastmath", "#arith.fastmath<")
        };
        match self.m.prop(op, prop) {
            Some(Attribute::Opaque(text)) => text
                .strip_prefix(prefix)
                .and_then(|t| t.strip_suffix('>'))
                .map(FastMath::parse)
                .unwrap_or_default(),
            _ => FastMath::default(),
        }
    }

    /// `arith.select` / `llvm.select`: operand 1 where operand 0 holds, else operand 2.
    pub(super) fn select(&mut self, op: OpId) -> Result<()> {
        let dst = self.results(op);
        let [cond, t, f] = [0, 1, 2].map(|i| self.operand(op, i));
        self.emit(op, Inst::Select { dst, cond, t, f });
        Ok(())
    }

    /// Compiles one op (not a terminator).
    pub(super) fn op(&mut self, op: OpId) -> Result<()> {
        if let Some(done) = self.wide_op(op) {
            return done;
        }
        let name = self.m.name(op);
        let name = name.as_str();
        if let Some(f) = MathFn::of_op(name) {
            let kind = self.float_kind(op)?;
            let fm = self.fastmath(op);
            return self.unary(op, Op1::Math(f, kind, fm));
        }
        if let Some(f) = MathFn2::of_op(name) {
            let kind = self.float_kind(op)?;
            let fm = self.fastmath(op);
            return self.binary(op, Op2::Math(f, kind, fm));
        }
        if let Some(int_op) = IntOp::arith(name) {
            let width = self.int_width(op, self.m.operand(op, 0))?;
            let flags = overflow(self.m.prop(op, "overflowFlags"));
            return self.binary(op, Op2::Int(int_op, width, flags));
        }
        if let Some(float_op) = FloatOp::arith(name) {
            let kind = self.float_kind(op)?;
            let fm = self.fastmath(op);
            return self.binary(op, Op2::Float(float_op, kind, fm));
        }
        if SREGS.contains(&name) {
            return self.nvvm_sreg(op);
        }
        if let Some(done) = self.llvm_op(op) {
            return done;
        }
        match name {
            arith::CONSTANT | llvm::MLIR_CONSTANT => self.constant(op),
            arith::CMPI | arith::CMPF => self.compare(op),
            arith::SELECT => self.select(op),
            math::FMA => self.fma(op, self.fastmath(op)),
            math::ABSI | math::CTLZ | math::CTTZ | math::CTPOP => {
                let w = self.int_width(op, self.m.operand(op, 0))?;
                let f = match name {
                    math::ABSI => Op1::AbsI(w),
                    math::CTLZ => Op1::Ctlz(w),
                    math::CTTZ => Op1::Cttz(w),
                    _ => Op1::Ctpop(w),
                };
                self.unary(op, f)
            }
            arith::EXTF
            | arith::TRUNCF
            | arith::EXTSI
            | arith::EXTUI
            | arith::TRUNCI
            | arith::SITOFP
            | arith::UITOFP
            | arith::FPTOSI
            | arith::FPTOUI
            | arith::INDEX_CAST
            | arith::INDEX_CASTUI
            | arith::BITCAST => self.cast(op),
            scf::FOR => self.scf_for(op),
            scf::IF => self.scf_if(op),
            scf::WHILE => self.scf_while(op),
            xla_gpu::LOOP => self.xla_loop(op),
            xla_gpu::APPLY_INDEXING => self.apply_indexing(op),
            func::CALL | xla_gpu::PURE_CALL | llvm::CALL => self.call(op),
            xla_gpu::SHUFFLE_REDUCE => self.shuffle_reduce(op),
            xla_gpu::SYNC_THREADS => {
                self.sync_threads(op);
                Ok(())
            }
            gpu::BARRIER | nvvm::BARRIER0 => {
                self.emit(op, Inst::Barrier);
                Ok(())
            }
            gpu::THREAD_ID | gpu::BLOCK_ID | gpu::BLOCK_DIM | gpu::GRID_DIM | gpu::LANE_ID => {
                self.gpu_geometry(op)
            }
            gpu::SHUFFLE => self.gpu_shuffle(op),
            nvvm::SHFL_SYNC => self.nvvm_shuffle(op),
            tensor::EXTRACT | xla_gpu::PREDICATED_EXTRACT => self.extract(op),
            tensor::INSERT | xla_gpu::PREDICATED_INSERT => self.insert(op),
            xla_gpu::ATOMIC_RMW => self.atomic_rmw(op),
            tensor::EMPTY => self.empty(op),
            xla_gpu::ALLOCATE_SHARED => self.allocate_shared(op),
            vector::TRANSFER_READ | vector::TRANSFER_WRITE => self.transfer(op),
            vector::EXTRACT => self.vector_extract(op),
            vector::INSERT => self.vector_insert(op),
            vector::BROADCAST => self.broadcast(op),
            vector::MULTI_REDUCTION => self.multi_reduction(op),
            vector::TRANSPOSE => self.transpose(op),
            llvm::GETELEMENTPTR => self.gep(op),
            llvm::LOAD => self.load(op),
            llvm::STORE => self.store(op),
            llvm::ALLOCA => self.alloca(op),
            // Lifetime markers only tell LLVM when a stack slot's contents die.
            llvm::INTR_LIFETIME_START | llvm::INTR_LIFETIME_END => Ok(()),
            llvm::MLIR_ADDRESSOF => self.address_of(op),
            _ => Err(self.unsupported(op)),
        }
    }

    pub(super) fn unary(&mut self, op: OpId, f: Op1) -> Result<()> {
        let a = self.operand(op, 0);
        let dst = self.results(op);
        self.emit(
            op,
            Inst::Op1 {
                op: f.into(),
                dst,
                a,
            },
        );
        Ok(())
    }

    pub(super) fn binary(&mut self, op: OpId, f: Op2) -> Result<()> {
        let (a, b) = (self.operand(op, 0), self.operand(op, 1));
        let dst = self.results(op);
        self.emit(
            op,
            Inst::Op2 {
                op: f.into(),
                dst,
                a,
                b,
            },
        );
        Ok(())
    }

    /// The float type of `op`'s first operand (or of its vector's elements).
    pub(super) fn float_kind(&mut self, op: OpId) -> Result<FloatKind> {
        self.float_kind_of(op, self.m.operand(op, 0))
    }

    /// The float type of `v` (or of its vector's elements), an operand of `op`.
    pub(super) fn float_kind_of(&mut self, op: OpId, v: ir::Value) -> Result<FloatKind> {
        match self.scalar(op, v)? {
            ScalarTy::Float(k) => Ok(k),
            _ => {
                let e = fail!(InvalidIr, "expected a float operand");
                Err(self.err(op, e))
            }
        }
    }

    /// `arith.cmpi`/`cmpf` and `llvm.icmp`/`fcmp`, whose predicates number alike.
    pub(super) fn compare(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let pred = m.prop(op, "predicate").and_then(Attribute::as_i64);
        let f = if m.is(op, arith::CMPI) || m.is(op, llvm::ICMP) {
            let w = self.int_width(op, m.operand(op, 0))?;
            pred.filter(|p| (0..CMPI_PREDICATES.len() as i64).contains(p))
                .map(|p| Op2::CmpI(p as u8, w))
        } else {
            let kind = self.float_kind(op)?;
            pred.filter(|p| (0..CMPF_PREDICATES.len() as i64).contains(p))
                .map(|p| Op2::CmpF(p as u8, kind))
        };
        match f {
            Some(f) => self.binary(op, f),
            None => {
                let e = fail!(InvalidIr, "an invalid predicate");
                Err(self.err(op, e))
            }
        }
    }

    fn cast(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let from = self.scalar(op, m.operand(op, 0))?;
        let to = self.scalar(op, m.result(op, 0))?;
        let name = m.name(op);
        let width = |s: ScalarTy| s.width();
        let cast = match (name.as_str(), from, to) {
            (arith::EXTF, ScalarTy::Float(a), ScalarTy::Float(b)) => Cast::ExtF(a, b),
            (arith::TRUNCF, ScalarTy::Float(a), ScalarTy::Float(b)) => {
                if let Some(Attribute::Opaque(mode)) = m.prop(op, "roundingmode")
                    && !mode.contains("to_nearest_even")
                {
                    let e = fail!(Unsupported, "rounding mode {mode}");
                    return Err(self.err(op, e));
                }
                Cast::TruncF(a, b)
            }
            (arith::EXTSI, _, _) => Cast::ExtSI(width(from), width(to)),
            (arith::TRUNCI, _, _) => Cast::TruncI {
                from: width(from),
                to: width(to),
                flags: overflow(m.prop(op, "overflowFlags")),
            },
            (arith::SITOFP, _, ScalarTy::Float(k)) => Cast::SIToFP(width(from), k),
            (arith::UITOFP, _, ScalarTy::Float(k)) => Cast::UIToFP(width(from), k),
            (arith::FPTOSI, ScalarTy::Float(k), _) => Cast::FPToSI(k, width(to)),
            (arith::FPTOUI, ScalarTy::Float(k), _) => Cast::FPToUI(k, width(to)),
            (arith::INDEX_CAST, _, _) if width(to) > width(from) => {
                Cast::ExtSI(width(from), width(to))
            }
            (arith::INDEX_CAST | arith::INDEX_CASTUI, _, _) if width(to) < width(from) => {
                Cast::TruncI {
                    from: width(from),
                    to: width(to),
                    flags: Overflow::default(),
                }
            }
            (arith::EXTUI | arith::INDEX_CAST | arith::INDEX_CASTUI | arith::BITCAST, _, _) => {
                Cast::Keep
            }
            _ => {
                let e = fail!(InvalidIr, "an invalid cast");
                return Err(self.err(op, e));
            }
        };
        self.unary(op, Op1::Cast(cast))
    }

    /// `arith.constant` and `llvm.mlir.constant`: scalars, vectors and tensors.
    fn constant(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let ty = m.value_type(m.result(op, 0));
        let val = match m.prop(op, "value") {
            Some(attr) => self.constant_value(attr, ty),
            None => Err(fail!(InvalidIr, "a constant without a value")),
        }
        .map_err(|e| self.err(op, e))?;
        let dst = self.results(op);
        self.emit(op, Inst::Const { dst, val });
        Ok(())
    }

    fn constant_value(&mut self, attr: &Attribute, ty: Type) -> Result<Val> {
        if let Some(s) = ScalarTy::of(ty) {
            let scalar = match attr {
                Attribute::Int(v, _) => Scalar::Int(*v),
                Attribute::Bool(b) => Scalar::Int(i128::from(*b)),
                Attribute::Float(f, _) => Scalar::Float(*f),
                _ => return Err(fail!(Unsupported, "constant {attr} of type '{ty}'")),
            };
            return Ok(Val::S(scalar_bits(scalar, s)?));
        }
        let Attribute::Dense { values, .. } = attr else {
            return Err(fail!(Unsupported, "constant {attr} of type '{ty}'"));
        };
        let n = ty.num_elements().unwrap_or(0) as usize;
        let elem = ty.element_type().and_then(ScalarTy::of);
        let Some(elem) = elem.filter(|e| !(e.is_wide() && ty.is_vector())) else {
            return Err(fail!(Unsupported, "constants of type '{ty}'"));
        };
        // Each element's words: one, or two for an `i128` (low first).
        let words = |v: Scalar| -> Result<Vec<u64>> {
            match v {
                Scalar::Int(i) if elem.is_wide() => Ok(crate::wide::words(i as u128).to_vec()),
                _ => Ok(vec![scalar_bits(v, elem)?]),
            }
        };
        let bits: Vec<Vec<u64>> = match values {
            DenseValues::Splat(v) => vec![words(*v)?; n],
            DenseValues::Elements(vs) => vs.iter().map(|&v| words(v)).collect::<Result<_>>()?,
        };
        if bits.len() != n {
            return Err(fail!(InvalidIr, "{} values for '{ty}'", bits.len()));
        }
        if ty.is_vector() {
            let bits = bits.into_iter().flatten();
            return Ok(Val::Vector(Rc::new(bits.into_iter().map(Val::S).collect())));
        }
        let id = self.b.tensor(ty)?;
        let tt = &self.b.tensors[id as usize];
        let mut store = LocalStore::unwritten(tt);
        let mut index = vec![0i64; tt.shape.len()];
        for element in &bits {
            let off = tt.offset(&index)? as usize * element.len();
            for (k, &word) in element.iter().enumerate() {
                store.write(off + k, word);
            }
            next_row_major(&mut index, &tt.shape);
        }
        Ok(Val::Tensor(Rc::new(Tensor::local(store))))
    }
}

/// The bit pattern of a dense or scalar attribute element of type `s`.
pub(super) fn scalar_bits(v: Scalar, s: ScalarTy) -> Result<u64> {
    match (v, s) {
        (Scalar::Float(f), ScalarTy::Float(k)) => Ok(ir::float::to_bits(k, f.0)),
        (Scalar::Int(i), ScalarTy::Int(_) | ScalarTy::Index) => Ok(int_bits(i, s.width())),
        _ => Err(fail!(InvalidIr, "a constant {v:?} of type {s:?}")),
    }
}

/// The flags of an `overflowFlags` property (`#arith.overflow<nsw, nuw>`).
pub(super) fn overflow(attr: Option<&Attribute>) -> Overflow {
    match attr {
        Some(Attribute::Opaque(text)) => Overflow {
            nsw: text.contains("nsw"),
            nuw: text.contains("nuw"),
            ptx_shift: false,
        },
        _ => Overflow::default(),
    }
}
