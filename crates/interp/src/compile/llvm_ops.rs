//! The `llvm` dialect as `lower-to-llvm` leaves it and as LLVM IR imports into MLIR
//! (`codegen::import`): integer and float arithmetic, compares, selects, casts, vector
//! element ops, `undef`/`poison`, intrinsics (`llvm.intr.*` and the NVVM ones that O3 and
//! inlined libdevice bodies call through `llvm.call_intrinsic`), and unstructured control
//! flow (`llvm.br`, `llvm.cond_br`) between the blocks of a function.
//!
//! Each op maps onto the instruction the equivalent `arith`/`math`/`vector` op compiles
//! to, so both levels share one semantics. LLVM's predicates number as `arith`'s (`eq, ne,
//! slt, sle, sgt, sge, ult, ule, ugt, uge`; `false, oeq, ..., uno, true`), and its
//! `overflowFlags` are bits (1 = nsw, 2 = nuw). Approximate NVVM intrinsics are computed
//! exactly; their documented error bounds are tabled in `crate::math`'s module comment.

use super::FnCx;
use crate::carry_chain::CarryChain;
use crate::error::{Result, fail};
use crate::inst::{Inst, Pos, Reg, Src};
use crate::math::{MathFn, MathFn2};
use crate::ops::{Cast, FastMath, FloatOp, Fma, IntOp, Op1, Op2, Overflow, PtxRounding};
use crate::scalar::ScalarTy;
use crate::value::Val;
use hlo::narrow_float::HardwareConversion;
use ir::dialects::{cf, llvm};
use ir::dialects::{dense_ints, operand_segments};
use ir::{Attribute, BlockId, FloatKind, OpId};
use std::rc::Rc;

/// The most lanes of a `vector.reduce` the interpreter unrolls into per-lane instructions.
const MAX_FOLDED_LANES: i64 = 1 << 16;

/// `llvm` float unary ops and intrinsics.
const UNARY: &[(&str, MathFn)] = &[
    (llvm::FNEG, MathFn::Negf),
    (llvm::INTR_FABS, MathFn::Absf),
    (llvm::INTR_SQRT, MathFn::Sqrt),
    (llvm::INTR_EXP, MathFn::Exp),
    (llvm::INTR_EXP2, MathFn::Exp2),
    (llvm::INTR_LOG, MathFn::Log),
    (llvm::INTR_LOG2, MathFn::Log2),
    (llvm::INTR_FLOOR, MathFn::Floor),
    (llvm::INTR_CEIL, MathFn::Ceil),
    (llvm::INTR_TRUNC, MathFn::Trunc),
    (llvm::INTR_ROUND, MathFn::Round),
    (llvm::INTR_ROUNDEVEN, MathFn::RoundEven),
    (llvm::INTR_RINT, MathFn::RoundEven),
    (llvm::INTR_NEARBYINT, MathFn::RoundEven),
];

/// NVVM intrinsics of one float operand, by name without `.ftz` (flushing subnormals
/// changes results only below 2^-126, far under every tolerance of `--check`).
const NVVM_UNARY: &[(&str, MathFn)] = &[
    ("llvm.nvvm.ex2.approx.f32", MathFn::Exp2),
    ("llvm.nvvm.ex2.approx.f", MathFn::Exp2),
    ("llvm.nvvm.lg2.approx.f", MathFn::Log2),
    ("llvm.nvvm.rcp.approx.f", MathFn::Rcp),
    ("llvm.nvvm.rcp.rn.f", MathFn::Rcp),
    ("llvm.nvvm.rsqrt.approx.f", MathFn::Rsqrt),
    ("llvm.nvvm.sqrt.approx.f", MathFn::Sqrt),
    ("llvm.nvvm.sqrt.rn.f", MathFn::Sqrt),
    ("llvm.nvvm.sqrt.f", MathFn::Sqrt),
    ("llvm.nvvm.saturate.f", MathFn::Saturate),
    ("llvm.nvvm.fabs.f", MathFn::Absf),
    ("llvm.nvvm.fabs.f32", MathFn::Absf),
    ("llvm.nvvm.fabs.f64", MathFn::Absf),
    ("llvm.nvvm.fabs", MathFn::Absf),
    ("llvm.nvvm.rcp.approx.d", MathFn::Rcp),
    ("llvm.nvvm.rcp.rn.d", MathFn::Rcp),
    ("llvm.nvvm.sqrt.rn.d", MathFn::Sqrt),
    ("llvm.nvvm.sin.approx.f", MathFn::Sin),
    ("llvm.nvvm.cos.approx.f", MathFn::Cos),
    ("llvm.nvvm.tanh.approx.f32", MathFn::Tanh),
    ("llvm.nvvm.rsqrt.approx.d", MathFn::Rsqrt),
    ("llvm.nvvm.ex2.approx.d", MathFn::Exp2),
    ("llvm.nvvm.saturate.d", MathFn::Saturate),
    // PTX's `cvt.rni` / `rzi` / `rmi` / `rpi` to a float of the same type.
    ("llvm.nvvm.round.f", MathFn::RoundEven),
    ("llvm.nvvm.round.d", MathFn::RoundEven),
    ("llvm.nvvm.trunc.f", MathFn::Trunc),
    ("llvm.nvvm.trunc.d", MathFn::Trunc),
    ("llvm.nvvm.floor.f", MathFn::Floor),
    ("llvm.nvvm.floor.d", MathFn::Floor),
    ("llvm.nvvm.ceil.f", MathFn::Ceil),
    ("llvm.nvvm.ceil.d", MathFn::Ceil),
];

impl FnCx<'_, '_> {
    /// Compiles `op` if it is one of this file's; `None` leaves it to the caller.
    pub(super) fn llvm_op(&mut self, op: OpId) -> Option<Result<()>> {
        let name = self.m.name(op);
        let name = name.as_str();
        if !name.starts_with("llvm.") {
            return None;
        }
        if let Some(f) = IntOp::llvm(name) {
            return Some(self.int_binary(op, f));
        }
        if let Some(f) = FloatOp::llvm(name) {
            return Some(self.float_kind(op).and_then(|kind| {
                let fm = self.fastmath(op);
                self.binary(op, Op2::Float(f, kind, fm))
            }));
        }
        if let Some(&(_, f)) = UNARY.iter().find(|(n, _)| *n == name) {
            return Some(self.llvm_unary(op, f));
        }
        Some(match name {
            llvm::ICMP | llvm::FCMP => self.compare(op),
            llvm::SELECT => self.select(op),
            llvm::ZEXT
            | llvm::SEXT
            | llvm::TRUNC
            | llvm::FPEXT
            | llvm::FPTRUNC
            | llvm::SITOFP
            | llvm::UITOFP
            | llvm::FPTOSI
            | llvm::FPTOUI
            | llvm::BITCAST => self.llvm_cast(op),
            llvm::FREEZE => {
                let (dst, src) = (self.results(op), self.src(op, 0));
                self.emit(op, Inst::Copy { dst, src });
                Ok(())
            }
            llvm::MLIR_UNDEF | llvm::MLIR_POISON => self.poison(op),
            llvm::INTR_FMA | llvm::INTR_FMULADD => {
                let fm = self.fastmath(op);
                self.fma(op, fm)
            }
            llvm::INTR_COPYSIGN => self.float_kind(op).and_then(|kind| {
                let fm = self.fastmath(op);
                self.binary(op, Op2::Math(MathFn2::Copysign, kind, fm))
            }),
            llvm::INTR_CTLZ | llvm::INTR_CTTZ | llvm::INTR_CTPOP | llvm::INTR_ABS => {
                self.bit_count(op, name)
            }
            llvm::INTR_BITREVERSE => self
                .int_width(op, self.m.operand(op, 0))
                .and_then(|w| self.unary(op, Op1::BitReverse(w))),
            llvm::INTR_BSWAP => self
                .int_width(op, self.m.operand(op, 0))
                .and_then(|w| self.unary(op, Op1::ByteSwap(w))),
            llvm::INTR_SCMP | llvm::INTR_UCMP => self.three_way(op, name == llvm::INTR_SCMP),
            llvm::INTR_UADD_SAT
            | llvm::INTR_USUB_SAT
            | llvm::INTR_SADD_SAT
            | llvm::INTR_SSUB_SAT => self.int_width(op, self.m.operand(op, 0)).and_then(|width| {
                let signed = matches!(name, llvm::INTR_SADD_SAT | llvm::INTR_SSUB_SAT);
                let subtract = matches!(name, llvm::INTR_USUB_SAT | llvm::INTR_SSUB_SAT);
                let f = Op2::Saturating {
                    signed,
                    subtract,
                    width,
                };
                self.binary(op, f)
            }),
            llvm::INTR_IS_FPCLASS => self.float_kind(op).and_then(|kind| {
                let classes = self.m.prop(op, "bit").and_then(Attribute::as_i64);
                self.unary(op, Op1::FpClass(kind, classes.unwrap_or(0) as u32))
            }),
            llvm::INTR_FSHL => self.int_width(op, self.m.operand(op, 0)).map(|width| {
                let abc = [0, 1, 2].map(|i| self.operand(op, i));
                let dst = self.results(op);
                self.emit(op, Inst::FunnelShl { width, dst, abc });
            }),
            llvm::EXTRACTELEMENT | llvm::INSERTELEMENT => {
                let value = (name == llvm::INSERTELEMENT).then_some(1);
                let lane = self.operand(op, if value.is_some() { 2 } else { 1 });
                let shape = self.vector_shape(op, 0);
                self.lane_access(op, value, 0, shape, Box::new([Pos::Dynamic(lane)]))
            }
            llvm::SHUFFLEVECTOR => self.shuffle_vector(op),
            llvm::EXTRACTVALUE | llvm::INSERTVALUE => self.struct_field(op),
            llvm::ATOMICRMW => self.atomic_rmw_ptr(op),
            llvm::CMPXCHG => self.cmpxchg(op),
            llvm::CALL_INTRINSIC => self.call_intrinsic(op),
            llvm::INLINE_ASM => self.inline_asm(op),
            llvm::INTR_ASSUME | llvm::INTR_LIFETIME_START | llvm::INTR_LIFETIME_END => Ok(()),
            _ if name.starts_with("llvm.intr.vector.reduce.") => {
                self.vector_reduce(op, &name["llvm.intr.vector.reduce.".len()..])?
            }
            _ => return None,
        })
    }

    /// LLVM's `vector.reduce.*` (O3 makes them of a thread's row in a softmax, for one):
    /// the lanes combined one after the other, after the start value where the intrinsic
    /// has one (`fadd`, `fmul`; an order LLVM allows for any of them). `None` for a kind
    /// this interpreter does not know.
    fn vector_reduce(&mut self, op: OpId, kind: &str) -> Option<Result<()>> {
        let (combine, ordered) = match kind {
            "fadd" => (Some(FloatOp::Add), true),
            "fmul" => (Some(FloatOp::Mul), true),
            "fmaximum" => (Some(FloatOp::Maximum), false),
            "fminimum" => (Some(FloatOp::Minimum), false),
            "fmax" => (Some(FloatOp::MaxNum), false),
            "fmin" => (Some(FloatOp::MinNum), false),
            _ => (None, false),
        };
        let int = match kind {
            "add" => Some(IntOp::Add),
            "mul" => Some(IntOp::Mul),
            "and" => Some(IntOp::And),
            "or" => Some(IntOp::Or),
            "xor" => Some(IntOp::Xor),
            "smax" => Some(IntOp::MaxS),
            "smin" => Some(IntOp::MinS),
            "umax" => Some(IntOp::MaxU),
            "umin" => Some(IntOp::MinU),
            _ => None,
        };
        let vector_operand = usize::from(ordered);
        let f = match (combine, int) {
            (Some(f), _) => self
                .float_kind_of(op, self.m.operand(op, vector_operand))
                .map(|k| Op2::Float(f, k, self.fastmath(op))),
            (None, Some(f)) => self
                .int_width(op, self.m.operand(op, 0))
                .map(|w| Op2::Int(f, w, llvm_overflow(None))),
            (None, None) => return None,
        };
        Some(f.and_then(|f| {
            let start = ordered.then(|| self.operand(op, 0));
            self.fold_lanes(op, f, start, vector_operand)
        }))
    }

    /// `dst = f(..f(f(start, v[0]), v[1]).., v[n-1])` for the vector operand `vector` of
    /// `op`, or from `v[0]` without a start: two instructions a lane, so at most
    /// [`MAX_FOLDED_LANES`] lanes (O3's reductions have a thread's few elements).
    fn fold_lanes(&mut self, op: OpId, f: Op2, start: Option<Reg>, vector: usize) -> Result<()> {
        let shape = self.vector_shape(op, vector);
        let lanes: i64 = shape.iter().product();
        if !(1..=MAX_FOLDED_LANES).contains(&lanes) {
            let ty = self.m.value_type(self.m.operand(op, vector));
            let e = fail!(
                Unsupported,
                "a reduction of '{ty}' (at most {MAX_FOLDED_LANES} lanes are folded)"
            );
            return Err(self.err(op, e));
        }
        let source = self.operand(op, vector);
        let dst = self.results(op);
        let mut acc = start;
        for lane in 0..lanes {
            let value = self.temp();
            let extract = Inst::VecExtract {
                vector: source,
                shape: shape.clone(),
                pos: Box::new([Pos::Static(lane)]),
                dst: value,
            };
            self.emit(op, extract);
            let next = if lane + 1 == lanes { dst } else { self.temp() };
            let Some(a) = acc else {
                if lane + 1 == lanes {
                    let src = Src {
                        reg: value,
                        take: true,
                    };
                    self.emit(op, Inst::Copy { dst, src });
                }
                acc = Some(value);
                continue;
            };
            let combine = Inst::Op2 {
                op: f.into(),
                dst: next,
                a,
                b: value,
            };
            self.emit(op, combine);
            acc = Some(next);
        }
        Ok(())
    }

    fn int_binary(&mut self, op: OpId, f: IntOp) -> Result<()> {
        let width = self.int_width(op, self.m.operand(op, 0))?;
        let flags = llvm_overflow(self.m.prop(op, "overflowFlags"));
        self.binary(op, Op2::Int(f, width, flags))
    }

    fn llvm_unary(&mut self, op: OpId, f: MathFn) -> Result<()> {
        let kind = self.float_kind(op)?;
        let fm = self.fastmath(op);
        self.unary(op, Op1::Math(f, kind, fm))
    }

    /// A fused multiply-add of the first three operands (`math.fma`, `llvm.intr.fma`, NVVM's
    /// `fma.r*`): one rounding.
    pub(super) fn fma(&mut self, op: OpId, fm: FastMath) -> Result<()> {
        let kind = self.float_kind(op)?;
        let abc = [0, 1, 2].map(|i| self.operand(op, i));
        let dst = self.results(op);
        self.emit(
            op,
            Inst::Fma {
                op: Fma(kind, fm).into(),
                dst,
                abc,
            },
        );
        Ok(())
    }

    /// `undef` and `poison`: poison, lane by lane for vectors (an `insertelement` chain
    /// fills them; a lane still poison when used is an error).
    fn poison(&mut self, op: OpId) -> Result<()> {
        let site = self.b.site(op);
        let ty = self.m.value_type(self.m.result(op, 0));
        let val = match (ty.num_elements(), struct_fields(ty)) {
            (Some(n), _) if ty.is_vector() => {
                Val::Vector(Rc::new(vec![Val::Poison(site); n as usize]))
            }
            (_, Some(n)) => Val::Vector(Rc::new(vec![Val::Poison(site); n])),
            _ => Val::Poison(site),
        };
        let dst = self.results(op);
        self.emit(op, Inst::Const { dst, val });
        Ok(())
    }

    fn llvm_cast(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let (from_ty, to_ty) = (
            m.value_type(m.operand(op, 0)),
            m.value_type(m.result(op, 0)),
        );
        let from = self.scalar(op, m.operand(op, 0))?;
        let to = self.scalar(op, m.result(op, 0))?;
        let lanes = |t: ir::Type| t.num_elements().filter(|_| t.is_vector()).unwrap_or(1);
        let regrouped = lanes(from_ty) != lanes(to_ty)
            || from.width() != to.width()
            || from_ty.is_vector() != to_ty.is_vector();
        if m.is(op, llvm::BITCAST) && regrouped {
            // Lanes of another width (`<2 x i8>` to `<4 x i4>`, `<8 x i4>` to `i32`): the
            // bits regrouped, lane 0 lowest, as LLVM's little-endian targets lay them out.
            let (from_lanes, to_lanes) = (lanes(from_ty), lanes(to_ty));
            if from_lanes * i64::from(from.width()) != to_lanes * i64::from(to.width()) {
                let e = fail!(InvalidIr, "a bitcast between '{from_ty}' and '{to_ty}'");
                return Err(self.err(op, e));
            }
            let inst = Inst::Regroup {
                src: self.operand(op, 0),
                from: (from.width(), from_ty.is_vector()),
                to: (to.width(), to_ty.is_vector()),
                dst: self.results(op),
            };
            self.emit(op, inst);
            return Ok(());
        }
        let w = |s: ScalarTy| s.width();
        let cast = match (m.name(op).as_str(), from, to) {
            (llvm::FPEXT, ScalarTy::Float(a), ScalarTy::Float(b)) => Cast::ExtF(a, b),
            (llvm::FPTRUNC, ScalarTy::Float(a), ScalarTy::Float(b)) => Cast::TruncF(a, b),
            (llvm::SEXT, _, _) => Cast::ExtSI(w(from), w(to)),
            (llvm::TRUNC, _, _) => Cast::TruncI {
                from: w(from),
                to: w(to),
                flags: Overflow::default(),
            },
            (llvm::SITOFP, _, ScalarTy::Float(k)) => Cast::SIToFP(w(from), k),
            (llvm::UITOFP, _, ScalarTy::Float(k)) => Cast::UIToFP(w(from), k),
            (llvm::FPTOSI, ScalarTy::Float(k), _) => Cast::FPToSI(k, w(to)),
            (llvm::FPTOUI, ScalarTy::Float(k), _) => Cast::FPToUI(k, w(to)),
            (llvm::ZEXT, _, _) => Cast::Keep,
            (llvm::BITCAST, _, _) if w(from) == w(to) => Cast::Keep,
            _ => {
                let e = fail!(InvalidIr, "an invalid cast");
                return Err(self.err(op, e));
            }
        };
        self.unary(op, Op1::Cast(cast))
    }

    /// `llvm.shufflevector`: lanes of the two operands, concatenated, picked by `mask`
    /// (-1: poison).
    fn shuffle_vector(&mut self, op: OpId) -> Result<()> {
        let Some(mask) = dense_ints(self.m.prop(op, "mask")) else {
            let e = fail!(InvalidIr, "a shufflevector without a mask");
            return Err(self.err(op, e));
        };
        let inst = Inst::ShuffleVector {
            a: self.operand(op, 0),
            b: self.operand(op, 1),
            mask: mask.into(),
            dst: self.results(op),
        };
        self.emit(op, inst);
        Ok(())
    }

    /// `llvm.atomicrmw <bin_op>`: the operations on integers and floats LLVM defines that
    /// the hardware has (`xchg`, `add`, `sub`, `and`, `or`, `xor`, signed and unsigned
    /// `max`/`min`, `fadd`, `fsub`, `fmax`, `fmin`).
    fn atomic_rmw_ptr(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let value = m.operand(op, 1);
        let (ty, _) = self.mem_ty(op, m.value_type(value))?;
        // LLVM's `AtomicBinOp` numbering, as MLIR stores it.
        let bin_op = m
            .prop(op, "bin_op")
            .and_then(Attribute::as_i64)
            .unwrap_or(-1);
        let int = |this: &mut Self, f: IntOp| -> Result<Option<Op2>> {
            let w = this.int_width(op, value)?;
            Ok(Some(Op2::Int(f, w, Overflow::default())))
        };
        let float = |this: &mut Self, f: FloatOp| -> Result<Option<Op2>> {
            let kind = this.float_kind_of(op, value)?;
            Ok(Some(Op2::Float(f, kind, FastMath::default())))
        };
        let f = match bin_op {
            0 => None,
            1 => int(self, IntOp::Add)?,
            2 => int(self, IntOp::Sub)?,
            3 => int(self, IntOp::And)?,
            5 => int(self, IntOp::Or)?,
            6 => int(self, IntOp::Xor)?,
            7 => int(self, IntOp::MaxS)?,
            8 => int(self, IntOp::MinS)?,
            9 => int(self, IntOp::MaxU)?,
            10 => int(self, IntOp::MinU)?,
            11 => float(self, FloatOp::Add)?,
            12 => float(self, FloatOp::Sub)?,
            13 => float(self, FloatOp::MaxNum)?,
            14 => float(self, FloatOp::MinNum)?,
            other => {
                let e = fail!(Unsupported, "'llvm.atomicrmw' with bin_op {other}");
                return Err(self.err(op, e));
            }
        };
        let inst = Inst::AtomicRmwPtr {
            ptr: self.operand(op, 0),
            value: self.reg(value),
            op: f,
            ty,
            dst: self.results(op),
        };
        self.emit(op, inst);
        Ok(())
    }

    /// `llvm.cmpxchg`: compares and swaps bit patterns (an integer or a pointer-sized value).
    fn cmpxchg(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let (ty, _) = self.mem_ty(op, m.value_type(m.operand(op, 1)))?;
        let inst = Inst::CmpXchg {
            ptr: self.operand(op, 0),
            cmp: self.operand(op, 1),
            new: self.operand(op, 2),
            ty,
            dst: self.results(op),
        };
        self.emit(op, inst);
        Ok(())
    }

    /// `llvm.extractvalue` / `llvm.insertvalue` on a struct of scalars (what variadic
    /// reducers return), held as a vector of its fields.
    fn struct_field(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let container = m.value_type(m.operand(op, 0));
        let (Some(fields), Some(position)) =
            (struct_fields(container), dense_ints(m.prop(op, "position")))
        else {
            let e = fail!(Unsupported, "'{}' on '{container}'", m.name(op));
            return Err(self.err(op, e));
        };
        let [field] = position[..] else {
            let e = fail!(Unsupported, "nested struct positions");
            return Err(self.err(op, e));
        };
        let value = (!m.is(op, llvm::EXTRACTVALUE)).then_some(1);
        self.lane_access(
            op,
            value,
            0,
            Box::new([fields as i64]),
            Box::new([Pos::Static(field)]),
        )
    }

    /// `llvm.intr.ctlz` / `cttz` (poison for zero when `is_zero_poison`), `ctpop` and
    /// `abs` (poison for the most negative value when `is_int_min_poison`).
    fn bit_count(&mut self, op: OpId, name: &str) -> Result<()> {
        let w = self.int_width(op, self.m.operand(op, 0))?;
        let flag = |name: &str| {
            self.m
                .prop(op, name)
                .and_then(Attribute::as_bool)
                .unwrap_or(false)
        };
        if name == llvm::INTR_ABS {
            let f = if flag("is_int_min_poison") {
                Op1::AbsINotMin(w)
            } else {
                Op1::AbsI(w)
            };
            return self.unary(op, f);
        }
        let zero_poison = flag("is_zero_poison");
        let f = match (name, zero_poison) {
            (llvm::INTR_CTLZ, false) => Op1::Ctlz(w),
            (llvm::INTR_CTLZ, true) => Op1::CtlzNonZero(w),
            (llvm::INTR_CTTZ, false) => Op1::Cttz(w),
            (llvm::INTR_CTTZ, true) => Op1::CttzNonZero(w),
            _ => Op1::Ctpop(w),
        };
        self.unary(op, f)
    }

    /// `llvm.intr.scmp` / `ucmp`.
    fn three_way(&mut self, op: OpId, signed: bool) -> Result<()> {
        let width = self.int_width(op, self.m.operand(op, 0))?;
        let result = self.int_width(op, self.m.result(op, 0))?;
        self.binary(
            op,
            Op2::ThreeWay {
                signed,
                width,
                result,
            },
        )
    }

    /// `llvm.call_intrinsic "<name>"`: the NVVM intrinsics O3 leaves in a kernel.
    fn call_intrinsic(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let name = m
            .prop(op, "intrin")
            .and_then(Attribute::as_str)
            .unwrap_or("");
        let plain = name.replace(".ftz", "");
        if let Some(&(_, f)) = NVVM_UNARY.iter().find(|(n, _)| *n == plain) {
            let kind = self.float_kind(op)?;
            return self.unary(op, Op1::Math(f, kind, FastMath::default()));
        }
        if plain.starts_with("llvm.nvvm.fma.r") {
            return self.fma(op, FastMath::default());
        }
        if let Some(f) = match plain.as_str() {
            "llvm.nvvm.fmax.f" => Some(FloatOp::MaxNum),
            "llvm.nvvm.fmin.f" => Some(FloatOp::MinNum),
            "llvm.nvvm.div.approx.f" | "llvm.nvvm.div.full" | "llvm.nvvm.div.rn.f" => {
                Some(FloatOp::Div)
            }
            p if p.starts_with("llvm.nvvm.add.r") => Some(FloatOp::Add),
            p if p.starts_with("llvm.nvvm.mul.r") => Some(FloatOp::Mul),
            _ => None,
        } {
            let kind = self.float_kind(op)?;
            return self.binary(op, Op2::Float(f, kind, FastMath::default()));
        }
        if let Some(cvt) = HardwareConversion::by_intrinsic(name) {
            return self.binary(op, Op2::F8x2(cvt));
        }
        if let Some(cvt) = HardwareConversion::by_widening(name) {
            let (src, dst) = (self.operand(op, 0), self.results(op));
            self.emit(op, Inst::WidenF8x2 { cvt, src, dst });
            return Ok(());
        }
        match name {
            "llvm.nvvm.d2i.lo" | "llvm.nvvm.d2i.hi" => return self.double_half(op, name),
            "llvm.nvvm.lohi.i2d" => return self.double_from_halves(op),
            _ => {}
        }
        if let Some(cast) = ptx_float_to_int(&plain, name.contains(".ftz")) {
            let kind = self.float_kind(op)?;
            return self.unary(op, Op1::Cast(cast(kind)));
        }
        if name.starts_with("llvm.nvvm.barrier") && name != "llvm.nvvm.barrier.cta.arrive" {
            self.emit(op, Inst::Barrier);
            return Ok(());
        }
        if let Some(rest) = name.strip_prefix("llvm.nvvm.shfl.sync.") {
            let mode = self.shuffle_mode(op, rest.split('.').next(), "bfly")?;
            if rest.ends_with("p") {
                let e = fail!(Unsupported, "shuffles returning the valid flag");
                return Err(self.err(op, e));
            }
            return self.shuffle_sync(op, mode);
        }
        let e = fail!(Unsupported, "the intrinsic {name}");
        Err(self.err(op, e))
    }

    /// `llvm.inline_asm` of one PTX instruction of one float operand, as libdevice writes
    /// some approximations (`rcp.approx.ftz.f32 $0,$1;`, `rsqrt.approx.ftz.f64 $0, $1;`),
    /// and libdevice's multi-word integer carry chains ([`CarryChain`]); any other assembly
    /// is refused.
    fn inline_asm(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let asm = m
            .prop(op, "asm_string")
            .and_then(Attribute::as_str)
            .unwrap_or("");
        let result = m.value_type(m.result(op, 0));
        let widths: Option<Vec<u32>> = match struct_field_types(result) {
            Some(fields) => fields.iter().map(|t| int_width_of(t)).collect(),
            None => int_width_of(&result.to_string()).map(|w| vec![w]),
        };
        if let Some(widths) = widths
            && let Some(chain) = CarryChain::parse(asm, widths.len())
        {
            let args = (0..m.num_operands(op))
                .map(|i| self.operand(op, i))
                .collect();
            let dst = self.results(op);
            let inst = Inst::CarryChain {
                chain: Rc::new(chain),
                args,
                widths: widths.into(),
                dst,
            };
            self.emit(op, inst);
            return Ok(());
        }
        let mnemonic = asm
            .split_whitespace()
            .next()
            .unwrap_or("")
            .replace(".ftz", "");
        let f = match mnemonic.as_str() {
            "rcp.approx.f32" | "rcp.approx.f64" | "rcp.rn.f32" | "rcp.rn.f64" => MathFn::Rcp,
            "rsqrt.approx.f32" | "rsqrt.approx.f64" => MathFn::Rsqrt,
            "sqrt.approx.f32" | "sqrt.rn.f32" | "sqrt.rn.f64" => MathFn::Sqrt,
            "ex2.approx.f32" => MathFn::Exp2,
            "lg2.approx.f32" => MathFn::Log2,
            "tanh.approx.f32" => MathFn::Tanh,
            _ => {
                let e = fail!(Unsupported, "inline assembly '{asm}'");
                return Err(self.err(op, e));
            }
        };
        if m.num_operands(op) != 1 || m.num_results(op) != 1 {
            let e = fail!(Unsupported, "inline assembly '{asm}' with these operands");
            return Err(self.err(op, e));
        }
        let kind = self.float_kind(op)?;
        self.unary(op, Op1::Math(f, kind, FastMath::default()))
    }

    /// `d2i.lo` / `d2i.hi`: the low or high 32 bits of an f64's bit pattern.
    fn double_half(&mut self, op: OpId, name: &str) -> Result<()> {
        let mut bits = self.operand(op, 0);
        if name.ends_with("hi") {
            bits = self.shift_by_32(op, IntOp::ShrU, bits);
        }
        let dst = self.results(op);
        let trunc = Cast::TruncI {
            from: 64,
            to: 32,
            flags: Overflow::default(),
        };
        self.emit(
            op,
            Inst::Op1 {
                op: Op1::Cast(trunc).into(),
                dst,
                a: bits,
            },
        );
        Ok(())
    }

    /// `lohi.i2d(lo, hi)`: the f64 whose bit pattern is `hi:lo`.
    fn double_from_halves(&mut self, op: OpId) -> Result<()> {
        let (lo, hi) = (self.operand(op, 0), self.operand(op, 1));
        let high = self.shift_by_32(op, IntOp::Shl, hi);
        let or = Op2::Int(IntOp::Or, 64, Overflow::default());
        let dst = self.results(op);
        self.emit(
            op,
            Inst::Op2 {
                op: or.into(),
                dst,
                a: high,
                b: lo,
            },
        );
        Ok(())
    }

    /// `value`, an `i64`, shifted by 32 bits (`shift` is `Shl` or `ShrU`) into a new
    /// register: how an f64's bit pattern is split into its 32-bit halves and joined again.
    fn shift_by_32(&mut self, op: OpId, shift: IntOp, value: Reg) -> Reg {
        let (amount, shifted) = (self.temp(), self.temp());
        self.emit(
            op,
            Inst::Const {
                dst: amount,
                val: Val::S(32),
            },
        );
        let f = Op2::Int(shift, 64, Overflow::default());
        self.emit(
            op,
            Inst::Op2 {
                op: f.into(),
                dst: shifted,
                a: value,
                b: amount,
            },
        );
        shifted
    }

    /// `llvm.switch`: a compare and branch per case value, then the default.
    fn switch(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let invalid = |cx: &mut Self, what: String| {
            let e = fail!(InvalidIr, "{what}");
            cx.err(op, e)
        };
        let segments = operand_segments(m, op, 3).map_err(|e| invalid(self, e))?;
        let case_values: Vec<i64> = match m.prop(op, "case_values") {
            Some(Attribute::Dense { values, .. }) => match values {
                ir::DenseValues::Elements(vs) => vs
                    .iter()
                    .filter_map(|v| v.as_int().and_then(|i| i64::try_from(i).ok()))
                    .collect(),
                ir::DenseValues::Splat(v) => {
                    vec![v.as_int().and_then(|i| i64::try_from(i).ok()).unwrap_or(0)]
                }
            },
            None => Vec::new(),
            Some(other) => return Err(invalid(self, format!("case values {other}"))),
        };
        let case_sizes = dense_ints(m.prop(op, "case_operand_segments")).unwrap_or_default();
        let successors = m.successors(op).to_vec();
        if successors.len() != case_values.len() + 1 || case_sizes.len() != case_values.len() {
            return Err(invalid(
                self,
                "a switch whose cases do not match its successors".into(),
            ));
        }
        let width = self.int_width(op, m.operand(op, 0))?;
        let value = self.operand(op, 0);
        let mut next_case_operand = segments[2].start;
        for (k, &case) in case_values.iter().enumerate() {
            let (constant, equal) = (self.temp(), self.temp());
            let bits = crate::scalar::int_bits(i128::from(case), width);
            self.emit(
                op,
                Inst::Const {
                    dst: constant,
                    val: Val::S(bits),
                },
            );
            self.emit(
                op,
                Inst::Op2 {
                    op: Op2::CmpI(0, width).into(),
                    dst: equal,
                    a: value,
                    b: constant,
                },
            );
            let skip = self.emit(op, Inst::BranchFalse { cond: equal, to: 0 });
            let n = case_sizes[k] as usize;
            let args: Vec<usize> = (next_case_operand..next_case_operand + n).collect();
            next_case_operand += n;
            self.jump_to(op, successors[k + 1], &args);
            let after = self.pc();
            if let Inst::BranchFalse { to, .. } = &mut self.code[skip] {
                *to = after;
            }
        }
        let default_args: Vec<usize> = segments[1].clone().collect();
        self.jump_to(op, successors[0], &default_args);
        Ok(())
    }

    /// `llvm.br` / `llvm.cond_br`: copies into the successor's block arguments, then a
    /// jump (patched to the block's first instruction once every block is placed).
    pub(super) fn branch(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        if m.is(op, llvm::SWITCH) {
            return self.switch(op);
        }
        let successors = m.successors(op).to_vec();
        if m.is(op, llvm::BR) || m.is(op, cf::BR) {
            let args: Vec<usize> = (0..m.num_operands(op)).collect();
            self.jump_to(op, successors[0], &args);
            return Ok(());
        }
        let segments = operand_segments(m, op, 3).map_err(|e| {
            let e = fail!(InvalidIr, "{e}");
            self.err(op, e)
        })?;
        let cond = self.operand(op, segments[0].start);
        let branch = self.emit(op, Inst::BranchFalse { cond, to: 0 });
        let then_args: Vec<usize> = segments[1].clone().collect();
        self.jump_to(op, successors[0], &then_args);
        let else_pc = self.pc();
        if let Inst::BranchFalse { to, .. } = &mut self.code[branch] {
            *to = else_pc;
        }
        let else_args: Vec<usize> = segments[2].clone().collect();
        self.jump_to(op, successors[1], &else_args);
        Ok(())
    }

    /// Copies operands `args` of `op` into `target`'s block arguments, then jumps there.
    fn jump_to(&mut self, op: OpId, target: BlockId, args: &[usize]) {
        let params: Vec<Reg> = self
            .m
            .block_args(target)
            .iter()
            .map(|&a| self.reg(a))
            .collect();
        let copies: Vec<(Reg, Src)> = params
            .iter()
            .zip(args)
            .map(|(&dst, &i)| {
                let src = Src {
                    reg: self.operand(op, i),
                    take: false,
                };
                (dst, src)
            })
            .collect();
        if !copies.is_empty() {
            self.emit(op, Inst::ParCopy(copies.into()));
        }
        let jump = self.emit(op, Inst::Jump(0));
        self.pending_jumps.push((jump, target));
    }
}

/// The number of fields of `!llvm.struct<(t1, t2, ...)>` whose fields are not aggregates.
fn struct_fields(ty: ir::Type) -> Option<usize> {
    struct_field_types(ty).map(|fields| fields.len())
}

/// The fields of a struct of scalars, as written (`i32`, `f64`).
fn struct_field_types(ty: ir::Type) -> Option<Vec<String>> {
    let text = ty.to_string();
    let inner = text.strip_prefix("!llvm.struct<(")?.strip_suffix(")>")?;
    if inner.contains(['(', '<']) {
        return None;
    }
    Some(inner.split(',').map(|f| f.trim().to_string()).collect())
}

/// The width of an integer type written `iN` (up to 64 bits).
fn int_width_of(text: &str) -> Option<u32> {
    text.strip_prefix('i')?
        .parse()
        .ok()
        .filter(|&w| (1..=64).contains(&w))
}

/// NVVM's float-to-integer conversions, `llvm.nvvm.<f|d>2<i|ui|ll|ull>.<rn|rz|rm|rp>` (the
/// name without `.ftz`): the cast for the operand's float kind.
fn ptx_float_to_int(plain: &str, ftz: bool) -> Option<impl Fn(FloatKind) -> Cast> {
    let (conversion, rounding) = plain.strip_prefix("llvm.nvvm.")?.split_once('.')?;
    let (from, to) = conversion.split_once('2')?;
    if from != "f" && from != "d" {
        return None;
    }
    let (width, signed) = match to {
        "i" => (32, true),
        "ui" => (32, false),
        "ll" => (64, true),
        "ull" => (64, false),
        _ => return None,
    };
    let rounding = match rounding {
        "rn" => PtxRounding::NearestEven,
        "rz" => PtxRounding::Zero,
        "rm" => PtxRounding::Down,
        "rp" => PtxRounding::Up,
        _ => return None,
    };
    Some(move |kind| Cast::FPToIntPtx {
        kind,
        width,
        signed,
        rounding,
        ftz,
    })
}

/// The flags of an `llvm` op's `overflowFlags` property (bit 0 `nsw`, bit 1 `nuw`), and PTX's
/// shifts ([`Overflow::ptx_shift`]).
pub(super) fn llvm_overflow(attr: Option<&Attribute>) -> Overflow {
    let (nsw, nuw) = match attr {
        Some(Attribute::Int(bits, _)) => (bits & 1 != 0, bits & 2 != 0),
        _ => (false, false),
    };
    Overflow {
        nsw,
        nuw,
        ptx_shift: true,
    }
}
