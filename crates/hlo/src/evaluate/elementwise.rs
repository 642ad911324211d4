//! Elementwise ops on whole element vectors, with XLA's semantics per element type (listed
//! in the `evaluate` module's documentation).
//!
//! Integer ops work on zero-extended bit patterns and compute in i128, where no 64-bit
//! operation overflows; float ops are written once for f32 and f64 (`both!`) and f16/bf16
//! go through the f32 version, rounding the result.

use std::borrow::Cow;
use std::cmp::Ordering;

use half::{bf16, f16};

use super::complex;
use super::math::{erf, erf_f32};
use super::value::{Element, Elements, slice_as, with_elements, with_type};
use crate::opcode::Opcode;
use crate::primitive::PrimitiveType;

pub(super) type F32Unary = fn(f32) -> f32;
pub(super) type F64Unary = fn(f64) -> f64;
pub(super) type F32Binary = fn(f32, f32) -> f32;
pub(super) type F64Binary = fn(f64, f64) -> f64;
type IntUnary = fn(u64, IntKind) -> u64;
type IntBinary = fn(u64, u64, IntKind) -> u64;

/// Runs the arm for `$e`'s kind of element type with the vector bound.
macro_rules! by_kind {
    ($e:expr, pred $p:ident => $pb:expr, int $i:ident => $ib:expr, float $f:ident => $fb:expr,
     complex $c:ident => $cb:expr) => {
        match $e {
            Elements::Pred($p) => $pb,
            Elements::S8($i) => $ib,
            Elements::S16($i) => $ib,
            Elements::S32($i) => $ib,
            Elements::S64($i) => $ib,
            Elements::U8($i) => $ib,
            Elements::U16($i) => $ib,
            Elements::U32($i) => $ib,
            Elements::U64($i) => $ib,
            Elements::S4($i) => $ib,
            Elements::U4($i) => $ib,
            Elements::S2($i) => $ib,
            Elements::U2($i) => $ib,
            Elements::F16($f) => $fb,
            Elements::BF16($f) => $fb,
            Elements::F4E2M1FN($f) => $fb,
            Elements::F8E3M4($f) => $fb,
            Elements::F8E4M3($f) => $fb,
            Elements::F8E4M3FN($f) => $fb,
            Elements::F8E4M3B11FNUZ($f) => $fb,
            Elements::F8E4M3FNUZ($f) => $fb,
            Elements::F8E5M2($f) => $fb,
            Elements::F8E5M2FNUZ($f) => $fb,
            Elements::F8E8M0FNU($f) => $fb,
            Elements::F32($f) => $fb,
            Elements::F64($f) => $fb,
            Elements::C64($c) => $cb,
            Elements::C128($c) => $cb,
        }
    };
}

/// One float formula as an f32 and an f64 function (written once, typed twice).
macro_rules! both {
    (|$($x:ident),+| $body:expr) => {
        (|$($x: f32),+| -> f32 { $body }, |$($x: f64),+| -> f64 { $body })
    };
}

pub(super) fn unsupported_op(op: Opcode, ty: PrimitiveType) -> String {
    format!("unsupported: {op} on {ty}")
}

// ---- element kinds ------------------------------------------------------------------------

/// An integer type's width and signedness. Integer ops work on zero-extended bit patterns
/// and compute in i128, where no 64-bit operation overflows.
#[derive(Clone, Copy)]
pub(super) struct IntKind {
    bits: u32,
    signed: bool,
}

impl IntKind {
    pub(super) const fn new(bits: u32, signed: bool) -> IntKind {
        IntKind { bits, signed }
    }

    fn mask(self) -> u64 {
        u64::MAX >> (64 - self.bits)
    }

    /// The pattern's value under the type's signedness.
    fn value(self, pattern: u64) -> i128 {
        if self.signed {
            self.signed_value(pattern)
        } else {
            i128::from(pattern)
        }
    }

    /// The pattern read as two's complement, whatever the type's signedness.
    fn signed_value(self, pattern: u64) -> i128 {
        let shift = 128 - self.bits;
        (i128::from(pattern) << shift) >> shift
    }

    /// `v` truncated to the type's width.
    fn wrap(self, v: i128) -> u64 {
        v as u64 & self.mask()
    }
}

pub(super) trait Int: Element + Ord {
    const KIND: IntKind;
}

macro_rules! int_kind {
    ($($t:ty: $bits:literal, $signed:literal;)*) => {
        $(impl Int for $t {
            const KIND: IntKind = IntKind { bits: $bits, signed: $signed };
        })*
    };
}

int_kind! {
    i8: 8, true;
    i16: 16, true;
    i32: 32, true;
    i64: 64, true;
    u8: 8, false;
    u16: 16, false;
    u32: 32, false;
    u64: 64, false;
}

pub(super) trait Float: Element {
    /// `f` on the f32 value rounded back to the type (f64 uses `g`).
    fn apply1(self, f: F32Unary, g: F64Unary) -> Self;

    fn apply2(self, other: Self, f: F32Binary, g: F64Binary) -> Self;

    fn to_f64(self) -> f64;

    /// The bits as an integer whose order is XLA's total order of floats: negative values
    /// have their magnitude bits flipped.
    fn total_order_key(self) -> i64 {
        let shift = 64 - Self::TYPE.bit_width();
        let bits = ((self.pattern() as u64) << shift) as i64 >> shift;
        if bits < 0 {
            bits ^ (i64::MAX >> shift)
        } else {
            bits
        }
    }
}

macro_rules! half_float {
    ($t:ty) => {
        impl Float for $t {
            fn apply1(self, f: F32Unary, _: F64Unary) -> $t {
                <$t>::from_f32(f(self.to_f32()))
            }
            fn apply2(self, other: $t, f: F32Binary, _: F64Binary) -> $t {
                <$t>::from_f32(f(self.to_f32(), other.to_f32()))
            }
            fn to_f64(self) -> f64 {
                <$t>::to_f64(self)
            }
        }
    };
}

half_float!(f16);
half_float!(bf16);

impl Float for f32 {
    fn apply1(self, f: F32Unary, _: F64Unary) -> f32 {
        f(self)
    }
    fn apply2(self, other: f32, f: F32Binary, _: F64Binary) -> f32 {
        f(self, other)
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Float for f64 {
    fn apply1(self, _: F32Unary, g: F64Unary) -> f64 {
        g(self)
    }
    fn apply2(self, other: f64, _: F32Binary, g: F64Binary) -> f64 {
        g(self, other)
    }
    fn to_f64(self) -> f64 {
        self
    }
}

// ---- op tables ----------------------------------------------------------------------------

fn pred_unary(op: Opcode) -> Option<fn(bool) -> bool> {
    match op {
        Opcode::Not => Some(|x| !x),
        _ => None,
    }
}

fn pred_binary(op: Opcode) -> Option<fn(bool, bool) -> bool> {
    use Opcode::*;
    let f: fn(bool, bool) -> bool = match op {
        And | Multiply | Minimum => |x, y| x && y,
        Or | Add | Maximum => |x, y| x || y,
        Xor => |x, y| x != y,
        _ => return None,
    };
    Some(f)
}

fn int_unary(op: Opcode) -> Option<IntUnary> {
    use Opcode::*;
    let f: IntUnary = match op {
        Negate => |x, k| k.wrap(-k.value(x)),
        Abs => |x, k| k.wrap(k.value(x).abs()),
        Sign => |x, k| k.wrap(k.value(x).signum()),
        Not => |x, k| !x & k.mask(),
        PopulationCount => |x, _| u64::from(x.count_ones()),
        Clz => |x, k| u64::from(x.leading_zeros() - (64 - k.bits)),
        _ => return None,
    };
    Some(f)
}

fn int_binary(op: Opcode) -> Option<IntBinary> {
    use Opcode::*;
    let f: IntBinary = match op {
        Add => |x, y, k| k.wrap(k.value(x) + k.value(y)),
        Subtract => |x, y, k| k.wrap(k.value(x) - k.value(y)),
        Multiply => |x, y, k| k.wrap(k.value(x).wrapping_mul(k.value(y))),
        Divide => int_divide,
        Remainder => int_remainder,
        Maximum => |x, y, k| if k.value(x) >= k.value(y) { x } else { y },
        Minimum => |x, y, k| if k.value(x) <= k.value(y) { x } else { y },
        And => |x, y, _| x & y,
        Or => |x, y, _| x | y,
        Xor => |x, y, _| x ^ y,
        Power => |x, y, k| k.wrap(integer_power(k.value(x), k.value(y), k.bits)),
        ShiftLeft => |x, y, k| {
            if y >= u64::from(k.bits) {
                0
            } else {
                (x << y) & k.mask()
            }
        },
        ShiftRightLogical => |x, y, k| if y >= u64::from(k.bits) { 0 } else { x >> y },
        ShiftRightArithmetic => |x, y, k| {
            let amount = y.min(u64::from(k.bits - 1));
            k.wrap(k.signed_value(x) >> amount)
        },
        _ => return None,
    };
    Some(f)
}

/// `base` to the power `exponent` in `bits`-bit integers, wrapped (its low `bits` bits; the
/// caller reads them as its type): exponentiation by squaring over every bit of the
/// exponent. A negative exponent gives 1 for a base of 1, `±1` by the exponent's parity for
/// a base of -1 and 0 otherwise (mhlo's rule, which XLA's `ExpandIntegerPower` applies).
/// The interpreter's `math.ipowi` is this function too; `integer_power_by_hand` ties it to
/// hand-computed values.
pub fn integer_power(base: i128, exponent: i128, bits: u32) -> i128 {
    if exponent < 0 {
        return match base {
            1 => 1,
            -1 if exponent % 2 == 0 => 1,
            -1 => -1,
            _ => 0,
        };
    }
    let mask = u128::MAX >> (128 - bits.clamp(1, 64));
    let (mut acc, mut square, mut e) = (1u128, base as u128 & mask, exponent as u128);
    while e > 0 {
        if e & 1 == 1 {
            acc = acc.wrapping_mul(square) & mask;
        }
        square = square.wrapping_mul(square) & mask;
        e >>= 1;
    }
    acc as i128
}

/// Division by zero gives -1 (all ones); `INT_MIN / -1` wraps back to `INT_MIN`.
fn int_divide(x: u64, y: u64, k: IntKind) -> u64 {
    let (x, y) = (k.value(x), k.value(y));
    k.wrap(if y == 0 { -1 } else { x / y })
}

/// Remainder by zero gives the dividend; `INT_MIN % -1` is 0.
fn int_remainder(x: u64, y: u64, k: IntKind) -> u64 {
    let (x, y) = (k.value(x), k.value(y));
    k.wrap(if y == 0 { x } else { x % y })
}

fn float_unary(op: Opcode) -> Option<(F32Unary, F64Unary)> {
    use Opcode::*;
    let pair: (F32Unary, F64Unary) = match op {
        Abs => both!(|x| x.abs()),
        Negate => both!(|x| -x),
        Sign => both!(|x| if x == 0.0 { x } else { x.signum() }),
        Exp => both!(|x| x.exp()),
        Expm1 => both!(|x| x.exp_m1()),
        Log => both!(|x| x.ln()),
        Log1p => both!(|x| x.ln_1p()),
        Sqrt => both!(|x| x.sqrt()),
        Rsqrt => both!(|x| 1.0 / x.sqrt()),
        Cbrt => both!(|x| x.cbrt()),
        Tanh => both!(|x| x.tanh()),
        Sin => both!(|x| x.sin()),
        Cos => both!(|x| x.cos()),
        Tan => both!(|x| x.tan()),
        Atan => both!(|x| x.atan()),
        Acos => both!(|x| x.acos()),
        Asin => both!(|x| x.asin()),
        Acosh => both!(|x| x.acosh()),
        Asinh => both!(|x| x.asinh()),
        Atanh => both!(|x| x.atanh()),
        Cosh => both!(|x| x.cosh()),
        Sinh => both!(|x| x.sinh()),
        Floor => both!(|x| x.floor()),
        Ceil => both!(|x| x.ceil()),
        RoundNearestAfz => both!(|x| x.round()),
        RoundNearestEven => both!(|x| x.round_ties_even()),
        Logistic => both!(|x| 1.0 / (1.0 + (-x).exp())),
        Erf => (erf_f32, erf),
        _ => return None,
    };
    Some(pair)
}

fn float_binary(op: Opcode) -> Option<(F32Binary, F64Binary)> {
    use Opcode::*;
    let pair: (F32Binary, F64Binary) = match op {
        Add => both!(|x, y| x + y),
        Subtract => both!(|x, y| x - y),
        Multiply => both!(|x, y| x * y),
        Divide => both!(|x, y| x / y),
        Remainder => both!(|x, y| x % y),
        Power => both!(|x, y| x.powf(y)),
        Atan2 => both!(|x, y| x.atan2(y)),
        Maximum => both!(|x, y| if x.is_nan() || y.is_nan() {
            x + y
        } else if x == y {
            if x.is_sign_negative() { y } else { x }
        } else if x > y {
            x
        } else {
            y
        }),
        Minimum => both!(|x, y| if x.is_nan() || y.is_nan() {
            x + y
        } else if x == y {
            if x.is_sign_negative() { x } else { y }
        } else if x < y {
            x
        } else {
            y
        }),
        _ => return None,
    };
    Some(pair)
}

/// The test a compare direction applies to the operands' order (`None`: unordered).
fn direction_test(direction: &str) -> Result<fn(Option<Ordering>) -> bool, String> {
    use Ordering::*;
    let test: fn(Option<Ordering>) -> bool = match direction {
        "EQ" => |o| o == Some(Equal),
        "NE" => |o| o != Some(Equal),
        "LT" => |o| o == Some(Less),
        "LE" => |o| matches!(o, Some(Less | Equal)),
        "GT" => |o| o == Some(Greater),
        "GE" => |o| matches!(o, Some(Greater | Equal)),
        d => return Err(format!("unsupported: compare direction {d}")),
    };
    Ok(test)
}

// ---- whole-vector drivers -----------------------------------------------------------------

fn zip_map<T: Element, U: Element>(
    x: &[T],
    y: &Elements,
    f: impl Fn(T, T) -> U,
) -> Result<Vec<U>, String> {
    let y = slice_as::<T>(y, "the second operand")?;
    if x.len() != y.len() {
        return Err(format!(
            "operands have {} and {} elements",
            x.len(),
            y.len()
        ));
    }
    Ok(x.iter().zip(y).map(|(&a, &b)| f(a, b)).collect())
}

fn int_map<T: Int>(x: &[T], f: IntUnary) -> Elements {
    T::wrap(
        x.iter()
            .map(|&a| T::from_pattern(f(a.pattern() as u64, T::KIND).into()))
            .collect(),
    )
}

fn int_zip<T: Int>(x: &[T], y: &Elements, f: IntBinary) -> Result<Elements, String> {
    zip_map(x, y, |a, b| {
        T::from_pattern(f(a.pattern() as u64, b.pattern() as u64, T::KIND).into())
    })
    .map(T::wrap)
}

fn float_map<T: Float>(x: &[T], f: F32Unary, g: F64Unary) -> Elements {
    T::wrap(x.iter().map(|&a| a.apply1(f, g)).collect())
}

fn float_zip<T: Float>(
    x: &[T],
    y: &Elements,
    f: F32Binary,
    g: F64Binary,
) -> Result<Elements, String> {
    zip_map(x, y, |a, b| a.apply2(b, f, g)).map(T::wrap)
}

// ---- ops ----------------------------------------------------------------------------------

/// A unary elementwise op (`op.is_elementwise_unary()`, except `copy`).
pub(super) fn unary(op: Opcode, x: &Elements) -> Result<Elements, String> {
    let refused = || unsupported_op(op, x.element_type());
    by_kind!(x,
        pred v => pred_unary(op)
            .map(|f| Elements::Pred(v.iter().map(|&b| f(b)).collect()))
            .ok_or_else(refused),
        int v => int_unary(op).map(|f| int_map(v, f)).ok_or_else(refused),
        float v => float_unary(op).map(|(f, g)| float_map(v, f, g)).ok_or_else(refused),
        complex v => complex::unary(op, v).ok_or_else(refused))
}

/// A binary elementwise op on operands of one type and length.
pub(super) fn binary(op: Opcode, x: &Elements, y: &Elements) -> Result<Elements, String> {
    let refused = || unsupported_op(op, x.element_type());
    by_kind!(x,
        pred v => pred_binary(op)
            .ok_or_else(refused)
            .and_then(|f| zip_map(v, y, f).map(Elements::Pred)),
        int v => int_binary(op).ok_or_else(refused).and_then(|f| int_zip(v, y, f)),
        float v => float_binary(op)
            .ok_or_else(refused)
            .and_then(|(f, g)| float_zip(v, y, f, g)),
        complex v => complex::binary(op)
            .ok_or_else(refused)
            .and_then(|f| zip_map(v, y, f).map(Element::wrap)))
}

/// `is-finite`: neither infinite nor NaN.
pub(super) fn is_finite(x: &Elements) -> Result<Elements, String> {
    let refused = || unsupported_op(Opcode::IsFinite, x.element_type());
    by_kind!(x,
        pred _v => Err(refused()),
        int _v => Err(refused()),
        float v => Ok(Elements::Pred(v.iter().map(|a| a.to_f64().is_finite()).collect())),
        complex _v => Err(refused()))
}

/// `compare` in `direction` (`EQ`, `NE`, `LT`, `LE`, `GT`, `GE`).
pub(super) fn compare(
    direction: &str,
    total_order: bool,
    x: &Elements,
    y: &Elements,
) -> Result<Elements, String> {
    let test = direction_test(direction)?;
    let compared = by_kind!(x,
    pred v => zip_map(v, y, |a, b| test(Some(a.cmp(&b)))),
    int v => zip_map(v, y, |a, b| test(Some(a.cmp(&b)))),
    float v => if total_order {
        zip_map(v, y, |a, b| test(Some(a.total_order_key().cmp(&b.total_order_key()))))
    } else {
        zip_map(v, y, |a, b| test(a.to_f64().partial_cmp(&b.to_f64())))
    },
    // Complex numbers are only equal or not (an unordered part makes them differ).
    complex v => match direction {
        "EQ" | "NE" => zip_map(v, y, |a, b| (a == b) == (direction == "EQ")),
        _ => Err(format!("unsupported: compare {direction} on {}", x.element_type())),
    })?;
    Ok(Elements::Pred(compared))
}

/// `real` and `imag`: of a complex number its parts; of a real one itself and zero.
pub(super) fn real_or_imag(op: Opcode, x: &Elements) -> Result<Elements, String> {
    match (op, x) {
        (_, Elements::C64(v)) => Ok(complex::unary(op, v).expect("real and imag")),
        (_, Elements::C128(v)) => Ok(complex::unary(op, v).expect("real and imag")),
        (Opcode::Real, _) => Ok(x.clone()),
        _ => convert(&Elements::F64(vec![0.0; x.len()]), x.element_type()),
    }
}

/// `complex(re, im)`.
pub(super) fn make_complex(re: &Elements, im: &Elements) -> Result<Elements, String> {
    complex::from_parts(re, im)
}

/// `select(pred, on_true, on_false)`; a single predicate selects whole operands.
pub(super) fn select(
    pred: &Elements,
    on_true: &Elements,
    on_false: &Elements,
) -> Result<Elements, String> {
    let pred = slice_as::<bool>(pred, "the predicate")?;
    with_elements!(on_true, v => select_typed(pred, v, on_false))
}

fn select_typed<T: Element>(
    pred: &[bool],
    on_true: &[T],
    on_false: &Elements,
) -> Result<Elements, String> {
    let on_false = slice_as::<T>(on_false, "on_false")?;
    let selected = match pred {
        [p] if on_true.len() != 1 => if *p { on_true } else { on_false }.to_vec(),
        _ => pred
            .iter()
            .zip(on_true.iter().zip(on_false))
            .map(|(&p, (&t, &f))| if p { t } else { f })
            .collect(),
    };
    Ok(T::wrap(selected))
}

/// `clamp(lo, x, hi) = minimum(maximum(x, lo), hi)` with the type's maximum and minimum (so
/// NaN propagates for floats); scalar bounds apply to every element.
pub(super) fn clamp(lo: &Elements, x: &Elements, hi: &Elements) -> Result<Elements, String> {
    let at_least_lo = binary(Opcode::Maximum, x, &widen(lo, x.len()))?;
    binary(Opcode::Minimum, &at_least_lo, &widen(hi, x.len()))
}

/// A scalar bound repeated to `n` elements (other bounds as they are).
fn widen(bound: &Elements, n: usize) -> Cow<'_, Elements> {
    if bound.len() == n {
        Cow::Borrowed(bound)
    } else {
        Cow::Owned(bound.repeat_first(n))
    }
}

/// `convert` to `to` by XLA's rules ([`Element::from_num`]).
pub(super) fn convert(x: &Elements, to: PrimitiveType) -> Result<Elements, String> {
    if let Some(converted) = complex::convert_complex(x, to) {
        return Ok(converted);
    }
    with_type!(to, T => with_elements!(x, v => T::wrap(v.iter().map(|&e| T::from_num(e.to_num())).collect())))
}

/// `bitcast-convert` between types of one width (not pred): the bits reinterpreted.
pub(super) fn bitcast_convert(x: &Elements, to: PrimitiveType) -> Result<Elements, String> {
    let from = x.element_type();
    if from == to {
        return Ok(x.clone());
    }
    if from == PrimitiveType::Pred
        || to == PrimitiveType::Pred
        || from.bit_width() != to.bit_width()
    {
        return Err(format!("unsupported: bitcast-convert from {from} to {to}"));
    }
    with_type!(to, T => with_elements!(x, v => T::wrap(v.iter().map(|e| T::from_pattern(e.pattern())).collect())))
}
