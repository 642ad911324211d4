//! Scalar semantics of `arith` and `math` ops on bit patterns (see [`crate::scalar`]).
//!
//! MLIR's rules: integers wrap; `overflow<nsw/nuw>` makes overflow poison; division by zero
//! and signed division overflow are immediate undefined behaviour (LLVM traps or worse);
//! shift amounts of the bit width or more are poison (in the `llvm` dialect they end as
//! PTX's shifts do, see [`Overflow::ptx_shift`]); `fptosi`/`fptoui` of NaN or of a value
//! outside the target range are poison (the emitters guard them with selects, so the poison
//! is computed eagerly and only reported if something uses it); `fastmath<nnan/ninf>` makes
//! NaN/infinite operands or results poison. `f16`/`bf16` arithmetic computes in `f32` and
//! rounds after each op (exact for `+ - * /`: `f32` has more than twice their precision
//! plus two bits).

use crate::math::{MathFn, MathFn2};
use crate::plain::{convert, float_binary, float2, fma};
use crate::scalar::{from_f32, int_to_float, mask, sext, to_f32, to_f64};
use hlo::narrow_float::HardwareConversion;
use ir::FloatKind;
use ir::dialects::arith;
use ir::dialects::llvm;

/// Why an op has no value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// The result is poison (reported only when used).
    Poison,
    /// Immediate undefined behaviour.
    Ub(&'static str),
}

type R = Result<u64, Fault>;

/// The `fastmath` flags that change results: with `nnan`/`ninf`, NaN/infinite operands and
/// results are poison. The others (`afn`, `contract`, `reassoc`, `arcp`, `nsz`) only allow
/// other results, of which the exact one is always a valid choice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct FastMath {
    pub(crate) nnan: bool,
    pub(crate) ninf: bool,
}

impl FastMath {
    /// Parses the case list of `#arith.fastmath<...>` (`fast` implies both flags).
    pub(crate) fn parse(cases: &str) -> FastMath {
        let mut fm = FastMath::default();
        for case in cases.split(',').map(str::trim) {
            match case {
                "fast" => {
                    fm = FastMath {
                        nnan: true,
                        ninf: true,
                    }
                }
                "nnan" => fm.nnan = true,
                "ninf" => fm.ninf = true,
                _ => {}
            }
        }
        fm
    }

    fn any(self) -> bool {
        self.nnan || self.ninf
    }

    /// Poison if `bits` (of `kind`) is a value the flags exclude.
    fn check(self, kind: FloatKind, bits: u64) -> Result<(), Fault> {
        if self.any() {
            let x = to_f64(kind, bits);
            if (self.nnan && x.is_nan()) || (self.ninf && x.is_infinite()) {
                return Err(Fault::Poison);
            }
        }
        Ok(())
    }
}

/// `overflow<nsw, nuw>`, and how a shift by the bit width or more ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Overflow {
    pub(crate) nsw: bool,
    pub(crate) nuw: bool,
    /// A shift of the `llvm` dialect (after `lower-to-llvm`, and LLVM IR): an amount of the
    /// width or more gives what PTX's `shl`/`shr`, which the NVPTX backend selects for
    /// it, give (amounts clamp to the width: 0, or the sign for `ashr`), not poison.
    /// Code that only the LLVM stages see relies on it: libdevice's f64 `pow` shifts by
    /// the exponent minus 1012, 64 or more for huge exponents (fuzzer seed 3414). An
    /// `arith` shift, our own passes' IR, keeps MLIR's poison, so a shift of ours past the
    /// width is still caught before `lower-to-llvm`.
    pub(crate) ptx_shift: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IntOp {
    Add,
    Sub,
    Mul,
    DivS,
    DivU,
    CeilDivS,
    CeilDivU,
    FloorDivS,
    RemS,
    RemU,
    And,
    Or,
    Xor,
    Shl,
    ShrS,
    ShrU,
    MaxS,
    MaxU,
    MinS,
    MinU,
    /// `math.ipowi`: the power, wrapped; a negative exponent as `expand-integer-power`.
    PowI,
}

/// Each integer binary op with its `arith` name and its `llvm` name (`None`: LLVM has no
/// instruction or intrinsic for it).
const INT_NAMES: &[(IntOp, &str, Option<&str>)] = &[
    (IntOp::Add, arith::ADDI, Some(llvm::ADD)),
    (IntOp::Sub, arith::SUBI, Some(llvm::SUB)),
    (IntOp::Mul, arith::MULI, Some(llvm::MUL)),
    (IntOp::DivS, arith::DIVSI, Some(llvm::SDIV)),
    (IntOp::DivU, arith::DIVUI, Some(llvm::UDIV)),
    (IntOp::CeilDivS, arith::CEILDIVSI, None),
    (IntOp::CeilDivU, arith::CEILDIVUI, None),
    (IntOp::FloorDivS, arith::FLOORDIVSI, None),
    (IntOp::RemS, arith::REMSI, Some(llvm::SREM)),
    (IntOp::RemU, arith::REMUI, Some(llvm::UREM)),
    (IntOp::And, arith::ANDI, Some(llvm::AND)),
    (IntOp::Or, arith::ORI, Some(llvm::OR)),
    (IntOp::Xor, arith::XORI, Some(llvm::XOR)),
    (IntOp::Shl, arith::SHLI, Some(llvm::SHL)),
    (IntOp::ShrS, arith::SHRSI, Some(llvm::ASHR)),
    (IntOp::ShrU, arith::SHRUI, Some(llvm::LSHR)),
    (IntOp::MaxS, arith::MAXSI, Some(llvm::INTR_SMAX)),
    (IntOp::MaxU, arith::MAXUI, Some(llvm::INTR_UMAX)),
    (IntOp::MinS, arith::MINSI, Some(llvm::INTR_SMIN)),
    (IntOp::MinU, arith::MINUI, Some(llvm::INTR_UMIN)),
    (IntOp::PowI, ir::dialects::math::IPOWI, None),
];

impl IntOp {
    /// The op an `arith` op name stands for.
    pub(crate) fn arith(name: &str) -> Option<IntOp> {
        find_op(INT_NAMES, |&(_, arith, _)| arith == name)
    }

    /// The op an `llvm` op name stands for.
    pub(crate) fn llvm(name: &str) -> Option<IntOp> {
        find_op(INT_NAMES, |&(.., llvm)| llvm == Some(name))
    }
}

/// The op of the first row that `pick` accepts in a table of ops with two names each (`arith`
/// and `llvm` names here, `math` op and libdevice names in `crate::math`).
pub(crate) fn find_op<T: Copy, L>(
    table: &[(T, &str, L)],
    pick: impl Fn(&(T, &str, L)) -> bool,
) -> Option<T> {
    table.iter().find(|row| pick(row)).map(|row| row.0)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FloatOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Maximum,
    Minimum,
    MaxNum,
    MinNum,
}

/// Each float binary op with its `arith` name and its `llvm` name.
const FLOAT_NAMES: &[(FloatOp, &str, &str)] = &[
    (FloatOp::Add, arith::ADDF, llvm::FADD),
    (FloatOp::Sub, arith::SUBF, llvm::FSUB),
    (FloatOp::Mul, arith::MULF, llvm::FMUL),
    (FloatOp::Div, arith::DIVF, llvm::FDIV),
    (FloatOp::Rem, arith::REMF, llvm::FREM),
    (FloatOp::Maximum, arith::MAXIMUMF, llvm::INTR_MAXIMUM),
    (FloatOp::Minimum, arith::MINIMUMF, llvm::INTR_MINIMUM),
    (FloatOp::MaxNum, arith::MAXNUMF, llvm::INTR_MAXNUM),
    (FloatOp::MinNum, arith::MINNUMF, llvm::INTR_MINNUM),
];

impl FloatOp {
    /// The op an `arith` op name stands for.
    pub(crate) fn arith(name: &str) -> Option<FloatOp> {
        find_op(FLOAT_NAMES, |&(_, arith, _)| arith == name)
    }

    /// The op an `llvm` op name stands for.
    pub(crate) fn llvm(name: &str) -> Option<FloatOp> {
        find_op(FLOAT_NAMES, |&(.., llvm)| llvm == name)
    }
}

/// Casts; integer widths are bits (`index` is 64).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cast {
    ExtF(FloatKind, FloatKind),
    TruncF(FloatKind, FloatKind),
    ExtSI(u32, u32),
    /// Zero extension, and casts that keep the bits (`bitcast`, `index_cast` of i64).
    Keep,
    TruncI {
        from: u32,
        to: u32,
        flags: Overflow,
    },
    SIToFP(u32, FloatKind),
    UIToFP(u32, FloatKind),
    FPToSI(FloatKind, u32),
    FPToUI(FloatKind, u32),
    /// PTX's `cvt.{rni,rzi,rmi,rpi}.{s,u}N.fM` (NVVM's `f2i.rn`, `d2ull.rz`, ...): rounded
    /// as `rounding` says, saturated to the integer's range, NaN to 0; `ftz` flushes an
    /// f32 subnormal input to zero first.
    FPToIntPtx {
        kind: FloatKind,
        width: u32,
        signed: bool,
        rounding: PtxRounding,
        ftz: bool,
    },
}

/// The rounding of a PTX float-to-integer conversion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PtxRounding {
    NearestEven,
    Zero,
    Down,
    Up,
}

/// An op of one operand.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Op1 {
    Math(MathFn, FloatKind, FastMath),
    AbsI(u32),
    Ctlz(u32),
    Cttz(u32),
    /// LLVM's `abs` with `is_int_min_poison`: the most negative value gives poison.
    AbsINotMin(u32),
    /// LLVM's `ctlz` / `cttz` with `is_zero_poison`: a zero operand gives poison.
    CtlzNonZero(u32),
    CttzNonZero(u32),
    Ctpop(u32),
    /// LLVM's `bitreverse` and `bswap` of a `u32`-bit value (O3 makes them of index
    /// arithmetic that permutes bits, as in a tiled layout's address).
    BitReverse(u32),
    ByteSwap(u32),
    Cast(Cast),
    /// LLVM's `is.fpclass`: whether the value's class is one of `mask`'s (bit 0 signalling
    /// NaN, 1 quiet NaN, 2 -inf, 3 -normal, 4 -subnormal, 5 -0, 6 +0, 7 +subnormal,
    /// 8 +normal, 9 +inf).
    FpClass(FloatKind, u32),
}

/// An op of two operands.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Op2 {
    Int(IntOp, u32, Overflow),
    Float(FloatOp, FloatKind, FastMath),
    Math(MathFn2, FloatKind, FastMath),
    /// A `cmpi` predicate (its index in [`ir::dialects::arith::CMPI_PREDICATES`]).
    CmpI(u8, u32),
    /// A `cmpf` predicate (its index in [`ir::dialects::arith::CMPF_PREDICATES`]).
    CmpF(u8, FloatKind),
    /// LLVM's `scmp` / `ucmp`: -1, 0 or 1 as `a` is below, equal to or above `b`
    /// (`width`-bit operands, a `result`-bit result).
    ThreeWay {
        signed: bool,
        width: u32,
        result: u32,
    },
    /// LLVM's saturating `uadd.sat`, `usub.sat`, `sadd.sat`, `ssub.sat` on `width`-bit
    /// integers: the exact sum or difference, clamped to the type's range.
    Saturating {
        signed: bool,
        subtract: bool,
        width: u32,
    },
    /// PTX's `cvt.rn.satfinite.{e4m3,e5m2}x2.f32`: two f32 to two f8 codes in an `i16`,
    /// `a`'s in the high byte.
    F8x2(HardwareConversion),
}

/// An op of three operands: `math.fma`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Fma(pub(crate) FloatKind, pub(crate) FastMath);

impl Op1 {
    #[inline]
    pub(crate) fn eval(self, a: u64) -> R {
        match self {
            Op1::Math(f, kind, fm) => {
                fm.check(kind, a)?;
                let r = match kind {
                    FloatKind::F64 => f.f64(f64::from_bits(a)).to_bits(),
                    k => from_f32(k, f.f32(to_f32(k, a))),
                };
                fm.check(kind, r)?;
                Ok(r)
            }
            Op1::AbsI(w) => Ok(sext(a, w).unsigned_abs() & mask(w)),
            Op1::Ctlz(w) => Ok(if a == 0 {
                u64::from(w)
            } else {
                u64::from(a.leading_zeros() - (64 - w))
            }),
            Op1::Cttz(w) => Ok(if a == 0 {
                u64::from(w)
            } else {
                u64::from(a.trailing_zeros())
            }),
            Op1::AbsINotMin(w) if a & mask(w) == 1 << (w - 1) => Err(Fault::Poison),
            Op1::AbsINotMin(w) => Op1::AbsI(w).eval(a),
            Op1::CtlzNonZero(w) | Op1::CttzNonZero(w) if a == 0 => {
                let _ = w;
                Err(Fault::Poison)
            }
            Op1::CtlzNonZero(w) => Op1::Ctlz(w).eval(a),
            Op1::CttzNonZero(w) => Op1::Cttz(w).eval(a),
            Op1::Ctpop(_) => Ok(u64::from(a.count_ones())),
            Op1::BitReverse(w) => Ok((a & mask(w)).reverse_bits() >> (64 - w)),
            Op1::ByteSwap(w) => Ok((a & mask(w)).swap_bytes() >> (64 - w)),
            Op1::Cast(c) => cast(c, a),
            Op1::FpClass(kind, classes) => Ok(u64::from(classes >> fp_class(kind, a) & 1 == 1)),
        }
    }
}

/// The bit of `is.fpclass`'s mask that the `kind` value of bits `a` has.
fn fp_class(kind: FloatKind, a: u64) -> u32 {
    let width = kind.width();
    let mantissa_bits = kind.precision() - 1;
    let negative = a >> (width - 1) & 1 == 1;
    let exponent = a >> mantissa_bits & mask(kind.exponent_bits());
    let mantissa = a & mask(mantissa_bits);
    let all_ones = mask(kind.exponent_bits());
    match (exponent, mantissa) {
        (e, m) if e == all_ones && m != 0 => {
            // The quiet bit is the mantissa's highest.
            if m >> (mantissa_bits - 1) & 1 == 1 {
                1
            } else {
                0
            }
        }
        (e, _) if e == all_ones => {
            if negative {
                2
            } else {
                9
            }
        }
        (0, 0) => {
            if negative {
                5
            } else {
                6
            }
        }
        (0, _) => {
            if negative {
                4
            } else {
                7
            }
        }
        _ => {
            if negative {
                3
            } else {
                8
            }
        }
    }
}

impl Op2 {
    #[inline]
    pub(crate) fn eval(self, a: u64, b: u64) -> R {
        match self {
            Op2::Int(op, w, flags) => int_binary(op, w, flags, a, b),
            Op2::Float(op, kind, fm) => {
                fm.check(kind, a)?;
                fm.check(kind, b)?;
                let r = float_binary(op, kind, a, b);
                fm.check(kind, r)?;
                Ok(r)
            }
            Op2::Math(f, kind, fm) => {
                fm.check(kind, a)?;
                fm.check(kind, b)?;
                let r = float2!(kind, a, b, |x, y| f.f32_or_f64(x, y));
                fm.check(kind, r)?;
                Ok(r)
            }
            Op2::Saturating {
                signed,
                subtract,
                width,
            } => {
                let (a, b) = if signed {
                    (i128::from(sext(a, width)), i128::from(sext(b, width)))
                } else {
                    (i128::from(a & mask(width)), i128::from(b & mask(width)))
                };
                let exact = if subtract { a - b } else { a + b };
                let (low, high) = if signed {
                    (-(1i128 << (width - 1)), (1i128 << (width - 1)) - 1)
                } else {
                    (0, (1i128 << width) - 1)
                };
                Ok(exact.clamp(low, high) as u64 & mask(width))
            }
            Op2::CmpI(pred, w) => Ok(u64::from(cmpi(pred, w, a, b))),
            Op2::CmpF(pred, kind) => Ok(u64::from(cmpf(pred, to_f64(kind, a), to_f64(kind, b)))),
            Op2::ThreeWay {
                signed,
                width,
                result,
            } => {
                let order = if signed {
                    sext(a, width).cmp(&sext(b, width))
                } else {
                    (a & mask(width)).cmp(&(b & mask(width)))
                };
                Ok((order as i64) as u64 & mask(result))
            }
            Op2::F8x2(cvt) => {
                let code = |x: u64| u64::from(cvt.convert(f32::from_bits(x as u32)));
                Ok(code(a) << 8 | code(b))
            }
        }
    }
}

/// Calls the `f32` or `f64` version of a two-argument function by the argument type.
trait Apply2<T> {
    fn f32_or_f64(self, x: T, y: T) -> T;
}

impl Apply2<f32> for MathFn2 {
    fn f32_or_f64(self, x: f32, y: f32) -> f32 {
        self.f32(x, y)
    }
}

impl Apply2<f64> for MathFn2 {
    fn f32_or_f64(self, x: f64, y: f64) -> f64 {
        self.f64(x, y)
    }
}

/// LLVM's `fshl` on `width`-bit values (zero-extended in `u64`): the top `width` bits of
/// the `2 * width`-bit concatenation `a:b` shifted left by `c mod width`.
pub(crate) fn funnel_shl(a: u64, b: u64, c: u64, width: u32) -> u64 {
    let w = u64::from(width);
    let mask = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    let shift = c % w;
    if shift == 0 {
        return a & mask;
    }
    ((a << shift) | ((b & mask) >> (w - shift))) & mask
}

impl Fma {
    pub(crate) fn eval(self, a: u64, b: u64, c: u64) -> R {
        let Fma(kind, fm) = self;
        for v in [a, b, c] {
            fm.check(kind, v)?;
        }
        let r = fma(kind, a, b, c);
        fm.check(kind, r)?;
        Ok(r)
    }
}

fn int_binary(op: IntOp, w: u32, flags: Overflow, a: u64, b: u64) -> R {
    let m = mask(w);
    let (sa, sb) = (i128::from(sext(a, w)), i128::from(sext(b, w)));
    let (ua, ub) = (u128::from(a), u128::from(b));
    let smin = -(1i128 << (w - 1));
    let smax = (1i128 << (w - 1)) - 1;
    // Result of an op whose exact signed and unsigned values are known.
    let checked = |exact_u: Option<u128>, exact_s: i128, bits: u64| -> R {
        if flags.nuw && exact_u.is_none_or(|u| u > u128::from(m)) {
            return Err(Fault::Poison);
        }
        if flags.nsw && !(smin..=smax).contains(&exact_s) {
            return Err(Fault::Poison);
        }
        Ok(bits & m)
    };
    let division = |signed: bool| -> Result<(), Fault> {
        if b == 0 {
            return Err(Fault::Ub("division by zero"));
        }
        if signed && sa == smin && sb == -1 {
            return Err(Fault::Ub("signed division overflow"));
        }
        Ok(())
    };
    let bits = |v: i128| (v as u64) & m;
    match op {
        IntOp::Add => checked(Some(ua + ub), sa + sb, a.wrapping_add(b)),
        IntOp::Sub => checked(ua.checked_sub(ub), sa - sb, a.wrapping_sub(b)),
        IntOp::Mul => checked(Some(ua * ub), sa * sb, a.wrapping_mul(b)),
        IntOp::DivS => division(true).map(|()| bits(sa / sb)),
        IntOp::DivU => division(false).map(|()| a / b),
        IntOp::CeilDivS => division(true).map(|()| {
            let q = sa / sb;
            bits(if sa % sb != 0 && (sa < 0) == (sb < 0) {
                q + 1
            } else {
                q
            })
        }),
        IntOp::CeilDivU => division(false).map(|()| a / b + u64::from(!a.is_multiple_of(b))),
        IntOp::FloorDivS => division(true).map(|()| {
            let q = sa / sb;
            bits(if sa % sb != 0 && (sa < 0) != (sb < 0) {
                q - 1
            } else {
                q
            })
        }),
        IntOp::RemS => division(true).map(|()| bits(sa % sb)),
        IntOp::RemU => division(false).map(|()| a % b),
        IntOp::And => Ok(a & b),
        IntOp::Or => Ok(a | b),
        IntOp::Xor => Ok(a ^ b),
        IntOp::Shl => {
            if b >= u64::from(w) {
                // Every bit shifted out: wrapping overflow when any was set.
                let overflows = (flags.nuw || flags.nsw) && a != 0;
                return if flags.ptx_shift && !overflows {
                    Ok(0)
                } else {
                    Err(Fault::Poison)
                };
            }
            let r = (a << b) & m;
            if (flags.nuw && r >> b != a) || (flags.nsw && sext(r, w) >> b != sext(a, w)) {
                return Err(Fault::Poison);
            }
            Ok(r)
        }
        IntOp::ShrS => {
            if b >= u64::from(w) {
                return if flags.ptx_shift {
                    Ok((sext(a, w) >> (w - 1)) as u64 & m)
                } else {
                    Err(Fault::Poison)
                };
            }
            Ok((sext(a, w) >> b) as u64 & m)
        }
        IntOp::ShrU => {
            if b >= u64::from(w) {
                return if flags.ptx_shift {
                    Ok(0)
                } else {
                    Err(Fault::Poison)
                };
            }
            Ok(a >> b)
        }
        IntOp::MaxS => Ok(if sa >= sb { a } else { b }),
        IntOp::MaxU => Ok(a.max(b)),
        IntOp::MinS => Ok(if sa <= sb { a } else { b }),
        IntOp::MinU => Ok(a.min(b)),
        IntOp::PowI => Ok(bits(hlo::evaluate::integer_power(sa, sb, w))),
    }
}

/// `eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge`.
fn cmpi(pred: u8, w: u32, a: u64, b: u64) -> bool {
    int_predicate(pred, (a, b), (sext(a, w), sext(b, w)))
}

/// `arith.cmpi` predicate `pred` of two integers given as their unsigned and their signed
/// values (of any width: `crate::wide` compares `i128`s with it).
pub(crate) fn int_predicate<U: Ord, S: Ord>(pred: u8, (a, b): (U, U), (sa, sb): (S, S)) -> bool {
    match pred {
        0 => a == b,
        1 => a != b,
        2 => sa < sb,
        3 => sa <= sb,
        4 => sa > sb,
        5 => sa >= sb,
        6 => a < b,
        7 => a <= b,
        8 => a > b,
        _ => a >= b,
    }
}

/// `false, oeq, ogt, oge, olt, ole, one, ord, ueq, ugt, uge, ult, ule, une, uno, true`:
/// ordered predicates are false with a NaN operand, unordered ones true.
fn cmpf(pred: u8, x: f64, y: f64) -> bool {
    let unordered = x.is_nan() || y.is_nan();
    match pred {
        0 => false,
        1 => x == y,
        2 => x > y,
        3 => x >= y,
        4 => x < y,
        5 => x <= y,
        6 => !unordered && x != y,
        7 => !unordered,
        8 => unordered || x == y,
        9 => unordered || x > y,
        10 => unordered || x >= y,
        11 => unordered || x < y,
        12 => unordered || x <= y,
        13 => unordered || x != y,
        14 => unordered,
        _ => true,
    }
}

fn cast(c: Cast, a: u64) -> R {
    match c {
        Cast::ExtF(from, to) | Cast::TruncF(from, to) => Ok(convert(from, to, a)),
        Cast::ExtSI(from, to) => Ok(sext(a, from) as u64 & mask(to)),
        Cast::Keep => Ok(a),
        Cast::TruncI { from, to, flags } => {
            let r = a & mask(to);
            if (flags.nuw && r != a) || (flags.nsw && sext(r, to) != sext(a, from)) {
                return Err(Fault::Poison);
            }
            Ok(r)
        }
        Cast::SIToFP(w, kind) => {
            let s = sext(a, w);
            Ok(int_to_float(kind, s < 0, s.unsigned_abs()))
        }
        Cast::UIToFP(_, kind) => Ok(int_to_float(kind, false, a)),
        Cast::FPToSI(kind, w) => {
            let t = to_f64(kind, a).trunc();
            let limit = 2f64.powi(w as i32 - 1);
            if t.is_nan() || t < -limit || t >= limit {
                return Err(Fault::Poison);
            }
            Ok(t as i64 as u64 & mask(w))
        }
        Cast::FPToUI(kind, w) => {
            let t = to_f64(kind, a).trunc();
            if t.is_nan() || t < 0.0 || t >= 2f64.powi(w as i32) {
                return Err(Fault::Poison);
            }
            Ok(t as u64)
        }
        Cast::FPToIntPtx {
            kind,
            width,
            signed,
            rounding,
            ftz,
        } => {
            let x = to_f64(kind, a);
            // PTX flushes only f32 subnormals.
            let subnormal = kind == FloatKind::F32 && x.abs() < f64::from(f32::MIN_POSITIVE);
            let x = if ftz && subnormal { 0.0 } else { x };
            let t = match rounding {
                PtxRounding::NearestEven => x.round_ties_even(),
                PtxRounding::Zero => x.trunc(),
                PtxRounding::Down => x.floor(),
                PtxRounding::Up => x.ceil(),
            };
            // Rust's float-to-integer `as` saturates and sends NaN to 0, as PTX does.
            Ok(match (signed, width) {
                (true, 64) => t as i64 as u64,
                (true, _) => (t as i32) as u32 as u64 & mask(width),
                (false, 64) => t as u64,
                (false, _) => (t as u32) as u64,
            })
        }
    }
}

#[cfg(test)]
mod tests {

    /// LLVM's saturating arithmetic clamps to the type's range.
    #[test]
    fn saturating_arithmetic_clamps() {
        let op = |signed, subtract, width| Op2::Saturating {
            signed,
            subtract,
            width,
        };
        assert_eq!(op(false, true, 8).eval(3, 5), Ok(0));
        assert_eq!(op(false, true, 8).eval(5, 3), Ok(2));
        assert_eq!(op(false, false, 8).eval(200, 100), Ok(255));
        assert_eq!(op(true, false, 8).eval(100, 100), Ok(127));
        assert_eq!(op(true, true, 8).eval(0x80, 1), Ok(0x80)); // -128 - 1
        assert_eq!(op(true, true, 32).eval(5, 7), Ok(0xffff_fffe)); // -2
        assert_eq!(op(false, false, 64).eval(u64::MAX, 1), Ok(u64::MAX));
    }

    /// `is.fpclass`'s classes, by bit, of f32 and f16 values (LangRef's table).
    #[test]
    fn fp_classes_are_llvm_s() {
        let f32_of = |x: f32| u64::from(x.to_bits());
        let cases = [
            (f32_of(f32::from_bits(0x7fa0_0000)), 0), // signalling NaN
            (f32_of(f32::NAN), 1),
            (f32_of(f32::NEG_INFINITY), 2),
            (f32_of(-1.5), 3),
            (f32_of(-1e-40), 4),
            (f32_of(-0.0), 5),
            (f32_of(0.0), 6),
            (f32_of(1e-40), 7),
            (f32_of(2.0), 8),
            (f32_of(f32::INFINITY), 9),
        ];
        for (bits, class) in cases {
            assert_eq!(fp_class(FloatKind::F32, bits), class, "{bits:#x}");
            let op = Op1::FpClass(FloatKind::F32, 1 << class);
            assert_eq!(op.eval(bits), Ok(1));
            assert_eq!(
                Op1::FpClass(FloatKind::F32, !(1 << class) & 0x3ff).eval(bits),
                Ok(0)
            );
        }
        // f16: 0x0001 is subnormal there (a normal number in f32 or f64).
        assert_eq!(fp_class(FloatKind::F16, 0x0001), 7);
        assert_eq!(fp_class(FloatKind::F16, 0x7c00), 9);
        assert_eq!(fp_class(FloatKind::F16, 0x7e00), 1);
    }

    use super::*;
    use crate::scalar::from_f64;

    fn int(op: IntOp, w: u32, a: i64, b: i64) -> R {
        Op2::Int(op, w, Overflow::default()).eval(a as u64 & mask(w), b as u64 & mask(w))
    }

    #[test]
    fn integer_division_rounds_as_named() {
        assert_eq!(int(IntOp::DivS, 32, -7, 2), Ok((-3i64 as u64) & mask(32)));
        assert_eq!(
            int(IntOp::FloorDivS, 32, -7, 2),
            Ok((-4i64 as u64) & mask(32))
        );
        assert_eq!(int(IntOp::CeilDivS, 32, 7, 2), Ok(4));
        assert_eq!(
            int(IntOp::CeilDivS, 32, -7, 2),
            Ok((-3i64 as u64) & mask(32))
        );
        assert_eq!(int(IntOp::CeilDivU, 8, 7, 2), Ok(4));
        assert_eq!(int(IntOp::RemS, 8, -7, 2), Ok(0xFF));
        assert_eq!(int(IntOp::DivU, 8, -1, 2), Ok(127));
        assert_eq!(
            int(IntOp::DivS, 8, 1, 0),
            Err(Fault::Ub("division by zero"))
        );
        assert_eq!(
            int(IntOp::DivS, 8, -128, -1),
            Err(Fault::Ub("signed division overflow"))
        );
        assert_eq!(
            int(IntOp::RemS, 8, -128, -1),
            Err(Fault::Ub("signed division overflow"))
        );
    }

    #[test]
    fn shifts_and_overflow_flags() {
        assert_eq!(int(IntOp::Shl, 8, 1, 7), Ok(0x80));
        assert_eq!(int(IntOp::Shl, 8, 1, 8), Err(Fault::Poison));
        assert_eq!(int(IntOp::ShrS, 8, -128, 7), Ok(0xFF));
        assert_eq!(int(IntOp::ShrU, 64, -1, 63), Ok(1));
        assert_eq!(int(IntOp::ShrU, 64, -1, 64), Err(Fault::Poison));
        let nsw = Overflow {
            nsw: true,
            ..Overflow::default()
        };
        let nuw = Overflow {
            nuw: true,
            ..Overflow::default()
        };
        assert_eq!(
            Op2::Int(IntOp::Add, 8, nsw).eval(127, 1),
            Err(Fault::Poison)
        );
        assert_eq!(Op2::Int(IntOp::Add, 8, nuw).eval(127, 1), Ok(128));
        assert_eq!(
            Op2::Int(IntOp::Add, 8, nuw).eval(255, 1),
            Err(Fault::Poison)
        );
        assert_eq!(Op2::Int(IntOp::Sub, 8, nuw).eval(0, 1), Err(Fault::Poison));
        assert_eq!(
            Op2::Int(IntOp::Shl, 8, nsw).eval(0x40, 1),
            Err(Fault::Poison)
        );
        assert_eq!(Op2::Int(IntOp::Shl, 8, nuw).eval(0x40, 1), Ok(0x80));
        assert_eq!(int(IntOp::Add, 1, 1, 1), Ok(0));
        // An `llvm` shift past the width ends as PTX's does; with a flag it still overflows.
        let ptx = Overflow {
            ptx_shift: true,
            ..Overflow::default()
        };
        assert_eq!(Op2::Int(IntOp::Shl, 64, ptx).eval(1, 1100), Ok(0));
        assert_eq!(Op2::Int(IntOp::ShrU, 8, ptx).eval(0xFF, 8), Ok(0));
        assert_eq!(Op2::Int(IntOp::ShrS, 8, ptx).eval(0x80, 9), Ok(0xFF));
        assert_eq!(Op2::Int(IntOp::ShrS, 8, ptx).eval(0x7F, 9), Ok(0));
        let ptx_nuw = Overflow { nuw: true, ..ptx };
        assert_eq!(
            Op2::Int(IntOp::Shl, 8, ptx_nuw).eval(1, 8),
            Err(Fault::Poison)
        );
        assert_eq!(Op2::Int(IntOp::Shl, 8, ptx_nuw).eval(0, 8), Ok(0));
        assert_eq!(int(IntOp::MaxS, 8, -1, 1), Ok(1));
        assert_eq!(int(IntOp::MaxU, 8, -1, 1), Ok(0xFF));
    }

    #[test]
    fn comparisons_with_nan() {
        let nan = f32::NAN.to_bits() as u64;
        let one = 1f32.to_bits() as u64;
        let cmp = |p| Op2::CmpF(p, FloatKind::F32).eval(nan, one).unwrap();
        let expected = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1];
        for (p, &e) in expected.iter().enumerate() {
            assert_eq!(cmp(p as u8), e, "predicate {p}");
        }
        assert_eq!(Op2::CmpI(2, 8).eval(0xFF, 0), Ok(1)); // slt -1 0
        assert_eq!(Op2::CmpI(6, 8).eval(0xFF, 0), Ok(0)); // ult 255 0
    }

    #[test]
    fn bf16_arithmetic_rounds_after_each_op() {
        let k = FloatKind::BF16;
        let one = from_f64(k, 1.0);
        let eps = from_f64(k, 2f64.powi(-8)); // half an ulp of 1
        let sum = Op2::Float(FloatOp::Add, k, FastMath::default())
            .eval(one, eps)
            .unwrap();
        assert_eq!(to_f64(k, sum), 1.0);
        let max = Op2::Float(FloatOp::Maximum, k, FastMath::default());
        assert!(to_f64(k, max.eval(from_f64(k, f64::NAN), one).unwrap()).is_nan());
        let maxnum = Op2::Float(FloatOp::MaxNum, k, FastMath::default());
        assert_eq!(maxnum.eval(from_f64(k, f64::NAN), one), Ok(one));
        let nnan = FastMath {
            nnan: true,
            ninf: false,
        };
        let sub = Op2::Float(FloatOp::Sub, FloatKind::F32, nnan);
        let inf = f32::INFINITY.to_bits() as u64;
        assert_eq!(sub.eval(inf, inf), Err(Fault::Poison));
    }

    #[test]
    fn float_to_int_is_poison_out_of_range() {
        let f = |x: f32| u64::from(x.to_bits());
        let to_i8 = Op1::Cast(Cast::FPToSI(FloatKind::F32, 8));
        assert_eq!(to_i8.eval(f(-128.9)), Ok(0x80));
        assert_eq!(to_i8.eval(f(127.9)), Ok(127));
        assert_eq!(to_i8.eval(f(128.0)), Err(Fault::Poison));
        assert_eq!(to_i8.eval(f(f32::NAN)), Err(Fault::Poison));
        let ptx = |signed, width, rounding| {
            Op1::Cast(Cast::FPToIntPtx {
                kind: FloatKind::F32,
                width,
                signed,
                rounding,
                ftz: true,
            })
        };
        let rni = ptx(true, 32, PtxRounding::NearestEven);
        assert_eq!(rni.eval(f(2.5)), Ok(2));
        assert_eq!(rni.eval(f(3.5)), Ok(4));
        assert_eq!(rni.eval(f(-2.5)), Ok((-2i32) as u32 as u64));
        assert_eq!(rni.eval(f(3e9)), Ok(i32::MAX as u64));
        assert_eq!(rni.eval(f(-3e9)), Ok(i32::MIN as u32 as u64));
        assert_eq!(rni.eval(f(f32::NAN)), Ok(0));
        let rmi = ptx(true, 32, PtxRounding::Down);
        assert_eq!(rmi.eval(f(-1e-40)), Ok(0), "a subnormal is flushed first");
        assert_eq!(rmi.eval(f(-0.5)), Ok(u32::MAX as u64));
        assert_eq!(ptx(false, 64, PtxRounding::Up).eval(f(-7.0)), Ok(0));
        assert_eq!(ptx(false, 64, PtxRounding::Up).eval(f(6.2)), Ok(7));
        let to_u8 = Op1::Cast(Cast::FPToUI(FloatKind::F32, 8));
        assert_eq!(to_u8.eval(f(-0.5)), Ok(0));
        assert_eq!(to_u8.eval(f(256.0)), Err(Fault::Poison));
        let sitofp = Op1::Cast(Cast::SIToFP(1, FloatKind::F32));
        assert_eq!(sitofp.eval(1), Ok(f(-1.0)));
        let trunc = Op1::Cast(Cast::TruncI {
            from: 32,
            to: 8,
            flags: Overflow {
                nsw: true,
                ..Overflow::default()
            },
        });
        assert_eq!(trunc.eval(0xFFFF_FFFF), Ok(0xFF));
        assert_eq!(trunc.eval(0x80), Err(Fault::Poison));
        assert_eq!(Op1::Ctlz(8).eval(1), Ok(7));
        assert_eq!(Op1::Ctlz(8).eval(0), Ok(8));
        assert_eq!(Op1::Cttz(32).eval(0), Ok(32));
        assert_eq!(Op1::CtlzNonZero(32).eval(1), Ok(31));
        assert_eq!(Op1::CtlzNonZero(32).eval(0), Err(Fault::Poison));
        assert_eq!(Op1::CttzNonZero(64).eval(8), Ok(3));
        assert_eq!(Op1::AbsINotMin(8).eval(0x80), Err(Fault::Poison));
        assert_eq!(Op1::AbsINotMin(8).eval(0xff), Ok(1));
        assert_eq!(Op1::BitReverse(8).eval(0b0000_0110), Ok(0b0110_0000));
        assert_eq!(Op1::BitReverse(32).eval(1), Ok(1 << 31));
        assert_eq!(Op1::ByteSwap(16).eval(0x12_34), Ok(0x34_12));
        assert_eq!(Op1::ByteSwap(32).eval(0x11_22_33_44), Ok(0x44_33_22_11));
        let scmp = Op2::ThreeWay {
            signed: true,
            width: 32,
            result: 8,
        };
        assert_eq!(scmp.eval(0xffff_ffff, 1), Ok(0xff));
        assert_eq!(scmp.eval(5, 5), Ok(0));
        let ucmp = Op2::ThreeWay {
            signed: false,
            width: 32,
            result: 8,
        };
        assert_eq!(ucmp.eval(0xffff_ffff, 1), Ok(1));
        assert_eq!(Op1::AbsI(8).eval(0x80), Ok(0x80));
    }
}
