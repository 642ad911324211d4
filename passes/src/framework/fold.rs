//! Folding of `arith` ops: what an op computes when operands are constants, or when an
//! algebraic identity makes it equal to an operand. Op by op this follows the `fold` hooks of
//! MLIR 22's arith dialect (`ArithOps.cpp`), for scalar constants and splat tensor/vector
//! constants of integers up to 64 bits, `index`, `f16`, `bf16`, `f32` and `f64`.
//!
//! Only rewrites that are exact for every input are made:
//!
//! * Integers wrap at their width; division and remainder by zero, signed `MIN / -1` and
//!   shifts by the width or more are left alone (they are undefined behaviour or poison).
//! * Float results are rounded to nearest-even in the constant's type, as APFloat does
//!   (computing in `f64` first is exact enough: 53 bits ≥ 2p + 2 for the narrower types, so
//!   the second rounding cannot differ). A NaN result is the first NaN operand, quieted, or
//!   else the default NaN.
//! * Float identities are only those IEEE 754 guarantees: `x + -0.0`, `x - +0.0`, `x * 1.0`,
//!   `x / 1.0`. `x + 0.0` (wrong for `x = -0.0`), `x * 0.0` (wrong for NaN, infinities and
//!   negative `x`) and `x - x` (NaN, infinities) are never folded, except `x * 0.0` under
//!   `fastmath<nnan,nsz>`, as in MLIR.
//! * Casts fold when the value converts exactly (`truncf`), or with the op's defined
//!   rounding (`sitofp`: nearest-even; `fptosi`: toward zero, unless out of range or NaN).

use ir::attrs::normalize_int;
use ir::dialects::arith;
use ir::dialects::arith::{CMPF_PREDICATES, CMPI_PREDICATES};
use ir::dialects::math;
use ir::float::{from_bits, round_to, to_bits};
use ir::{
    Attribute, DenseValues, FloatKind, FloatValue, Module, OpId, Scalar, Traits, Type, TypeKind,
    Value,
};

/// What folding an op found.
#[derive(Clone, Debug, PartialEq)]
pub enum Fold {
    /// The op's result equals this existing value.
    Value(Value),
    /// The op's result is this constant.
    Constant(Attribute),
    /// The op is equivalent to itself with these operands (and, for `cmpi`, this
    /// predicate): a simpler form, rewritten in place.
    Update {
        operands: Vec<Value>,
        predicate: Option<i64>,
    },
}

/// A constant operand: integers sign-extended from their width, floats as `f64`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Const {
    Int(i128),
    Float(f64),
}

/// The width integer folding uses for an element type: `index` is 64 bits; wider integers
/// and signed/unsigned integer types are not folded.
fn int_width(elem: Type) -> Option<u32> {
    match elem.kind() {
        TypeKind::Index => Some(64),
        TypeKind::Int { width, .. } if elem.is_signless_integer() && *width <= 64 => Some(*width),
        _ => None,
    }
}

fn sext(v: i128, width: u32) -> i128 {
    let shift = 128 - width;
    (v << shift) >> shift
}

fn zext(v: i128, width: u32) -> i128 {
    v & ((1i128 << width) - 1)
}

/// The constant `v` holds, if it is the result of a constant op with a scalar or splat value.
fn constant(m: &Module, v: Value) -> Option<Const> {
    let def = m.defining_op(v)?;
    if !m.op_def(def).is_some_and(|d| d.has(Traits::CONSTANT_LIKE)) {
        return None;
    }
    let elem = m.value_type(v).element_type_or_self();
    let int = |i: i128| Some(Const::Int(sext(i, int_width(elem)?)));
    match m.get_attr(def, "value")? {
        Attribute::Bool(b) => Some(Const::Int(-i128::from(*b))),
        Attribute::Int(i, _) => int(*i),
        Attribute::Float(f, _) => Some(Const::Float(f.0)),
        Attribute::Dense {
            values: DenseValues::Splat(s),
            ..
        } => match s {
            Scalar::Int(i) => int(*i),
            Scalar::Float(f) => Some(Const::Float(f.0)),
        },
        _ => None,
    }
}

/// The integer constant `v` holds (sign-extended), if any.
pub fn constant_int(m: &Module, v: Value) -> Option<i128> {
    match constant(m, v)? {
        Const::Int(i) => Some(i),
        Const::Float(_) => None,
    }
}

fn constant_float(m: &Module, v: Value) -> Option<f64> {
    match constant(m, v)? {
        Const::Float(f) => Some(f),
        Const::Int(_) => None,
    }
}

/// The attribute for `c` as a value of type `ty`: a scalar, or a splat for a statically
/// shaped tensor or vector.
fn attr(c: Const, ty: Type) -> Option<Attribute> {
    let elem = ty.element_type_or_self();
    let scalar = match c {
        Const::Int(v) if elem == Type::I1 => Scalar::Int(v & 1),
        Const::Int(v) => Scalar::Int(sext(v, int_width(elem)?)),
        Const::Float(f) => {
            elem.float_kind()?;
            Scalar::Float(FloatValue(f))
        }
    };
    if ty.is_shaped() {
        ty.num_elements()?;
        return Some(Attribute::dense_splat(ty, scalar));
    }
    Some(match scalar {
        Scalar::Int(v) => Attribute::int(normalize_int(v, ty), ty),
        Scalar::Float(f) => Attribute::Float(f, ty),
    })
}

fn fold_const(c: Const, ty: Type) -> Option<Fold> {
    attr(c, ty).map(Fold::Constant)
}

/// Folds `op` if it is an arith op this module knows and it simplifies.
pub fn fold(m: &Module, op: OpId) -> Option<Fold> {
    if m.num_results(op) != 1 {
        return None;
    }
    let ty = m.value_type(m.result(op, 0));
    let name = m.name(op).as_str();
    match name {
        arith::CMPI => fold_cmpi(m, op),
        arith::CMPF => fold_cmpf(m, op),
        arith::SELECT => fold_select(m, op, ty),
        _ if m.num_operands(op) == 2 && ty.element_type_or_self().is_float() => {
            fold_float_binary(m, op, name, ty)
        }
        _ if m.num_operands(op) == 2 => fold_int_binary(m, op, name, ty),
        _ if m.num_operands(op) == 1 => fold_cast(m, op, name, ty),
        _ => None,
    }
}

// ----- integer binary ops -----

/// Whether `v` is the result of a `name` op; its operands if so.
fn def_of(m: &Module, v: Value, name: &str) -> Option<(OpId, Value, Value)> {
    let def = m.defining_op(v)?;
    (m.is(def, name) && m.num_operands(def) == 2)
        .then(|| (def, m.operand(def, 0), m.operand(def, 1)))
}

/// Whether an op's `overflowFlags` include `flag` (`nsw`, `nuw`).
fn has_overflow_flag(m: &Module, op: OpId, flag: &str) -> bool {
    m.prop(op, "overflowFlags").is_some_and(|a| match a {
        Attribute::Opaque(text) => text
            .trim_start_matches("#arith.overflow<")
            .trim_end_matches('>')
            .split(',')
            .any(|f| f.trim() == flag),
        _ => false,
    })
}

/// `(a * b) / b -> a` when the multiplication cannot wrap (`flag`).
fn fold_div_of_mul(m: &Module, lhs: Value, rhs: Value, flag: &str) -> Option<Value> {
    let (mul, a, b) = def_of(m, lhs, arith::MULI)?;
    if !has_overflow_flag(m, mul, flag) {
        return None;
    }
    if a == rhs {
        Some(b)
    } else if b == rhs {
        Some(a)
    } else {
        None
    }
}

/// `xori %x, -1` (bitwise not): its operand `x`.
fn not_of(m: &Module, v: Value) -> Option<(Value, Value)> {
    let (_, x, ones) = def_of(m, v, arith::XORI)?;
    (constant_int(m, ones) == Some(-1)).then_some((x, ones))
}

fn fold_int_binary(m: &Module, op: OpId, name: &str, ty: Type) -> Option<Fold> {
    let width = int_width(ty.element_type_or_self())?;
    let (lhs, rhs) = (m.operand(op, 0), m.operand(op, 1));
    let (a, b) = (constant_int(m, lhs), constant_int(m, rhs));
    let value = |v| Some(Fold::Value(v));
    let zero = || fold_const(Const::Int(0), ty);
    // `1` as an unsigned value, so that `true` is one for `i1`.
    let one = b.is_some_and(|b| zext(b, width) == 1);
    let (smin, smax) = (sext(1 << (width - 1), width), zext(-1, width - 1));
    let identity = match name {
        arith::ADDI => {
            if b == Some(0) {
                return value(lhs);
            }
            // (a - b) + b -> a; b + (a - b) -> a
            match (def_of(m, lhs, arith::SUBI), def_of(m, rhs, arith::SUBI)) {
                (Some((_, x, y)), _) if y == rhs => Some(x),
                (_, Some((_, x, y))) if y == lhs => Some(x),
                _ => None,
            }
        }
        arith::SUBI => {
            if lhs == rhs {
                return zero();
            }
            if b == Some(0) {
                return value(lhs);
            }
            // (a + b) - b -> a; (a + b) - a -> b
            match def_of(m, lhs, arith::ADDI) {
                Some((_, x, y)) if y == rhs => Some(x),
                Some((_, x, y)) if x == rhs => Some(y),
                _ => None,
            }
        }
        arith::MULI if b == Some(0) => Some(rhs),
        arith::MULI if one => Some(lhs),
        arith::DIVUI | arith::DIVSI => {
            if one {
                return value(lhs);
            }
            let flag = if name == arith::DIVUI { "nuw" } else { "nsw" };
            fold_div_of_mul(m, lhs, rhs, flag)
        }
        arith::REMUI | arith::REMSI if one => {
            return zero();
        }
        arith::ANDI => {
            if b == Some(0) {
                return value(rhs);
            }
            if b == Some(-1) || lhs == rhs {
                return value(lhs);
            }
            // x & ~x -> 0
            if not_of(m, rhs).is_some_and(|(x, _)| x == lhs)
                || not_of(m, lhs).is_some_and(|(x, _)| x == rhs)
            {
                return zero();
            }
            // a & (a & b) -> a & b
            [(lhs, rhs), (rhs, lhs)]
                .into_iter()
                .find_map(|(inner, other)| {
                    let (and, x, y) = def_of(m, inner, arith::ANDI)?;
                    (other == x || other == y).then(|| m.result(and, 0))
                })
        }
        arith::ORI => {
            if b == Some(0) || lhs == rhs {
                return value(lhs);
            }
            if b == Some(-1) {
                return value(rhs);
            }
            // x | ~x -> -1
            match (not_of(m, rhs), not_of(m, lhs)) {
                (Some((x, ones)), _) if x == lhs => Some(ones),
                (_, Some((x, ones))) if x == rhs => Some(ones),
                _ => None,
            }
        }
        arith::XORI => {
            if b == Some(0) {
                return value(lhs);
            }
            if lhs == rhs {
                return zero();
            }
            // (x ^ a) ^ a -> x, and the commuted forms
            match (def_of(m, lhs, arith::XORI), def_of(m, rhs, arith::XORI)) {
                (Some((_, x, y)), _) if y == rhs => Some(x),
                (Some((_, x, y)), _) if x == rhs => Some(y),
                (_, Some((_, x, y))) if y == lhs => Some(x),
                (_, Some((_, x, y))) if x == lhs => Some(y),
                _ => None,
            }
        }
        arith::SHLI | arith::SHRSI | arith::SHRUI if b == Some(0) => Some(lhs),
        arith::MAXSI | arith::MAXUI | arith::MINSI | arith::MINUI => {
            let b = b.map(|b| {
                if name.ends_with("ui") {
                    zext(b, width)
                } else {
                    b
                }
            });
            let (umin, umax) = (0, zext(-1, width));
            let (absorbing, neutral) = match name {
                arith::MAXSI => (smax, smin),
                arith::MINSI => (smin, smax),
                arith::MAXUI => (umax, umin),
                _ => (umin, umax),
            };
            if lhs == rhs || b == Some(absorbing) {
                Some(rhs)
            } else if b == Some(neutral) {
                Some(lhs)
            } else {
                None
            }
        }
        _ => None,
    };
    if let Some(v) = identity {
        return value(v);
    }
    let r = eval_int(name, a?, b?, width)?;
    fold_const(Const::Int(r), ty)
}

/// `a <name> b` on `width`-bit integers (sign-extended), or `None` where it is undefined.
fn eval_int(name: &str, a: i128, b: i128, width: u32) -> Option<i128> {
    let (ua, ub) = (zext(a, width), zext(b, width));
    let shift_ok = ub < i128::from(width);
    let r = match name {
        arith::ADDI => a + b,
        arith::SUBI => a - b,
        arith::MULI => a * b,
        arith::DIVSI if b != 0 && !(b == -1 && a == sext(1 << (width - 1), width)) => a / b,
        arith::DIVUI if b != 0 => ua / ub,
        arith::REMSI if b != 0 => a % b,
        arith::REMUI if b != 0 => ua % ub,
        arith::ANDI => a & b,
        arith::ORI => a | b,
        arith::XORI => a ^ b,
        arith::SHLI if shift_ok => a << ub,
        arith::SHRSI if shift_ok => a >> ub,
        arith::SHRUI if shift_ok => ua >> ub,
        arith::MAXSI => a.max(b),
        arith::MINSI => a.min(b),
        arith::MAXUI => ua.max(ub),
        arith::MINUI => ua.min(ub),
        _ => return None,
    };
    Some(sext(r, width))
}

// ----- float binary ops -----

/// Whether the op's `fastmath` flags include all of `flags` (`fast` includes everything).
pub(crate) fn has_fastmath(m: &Module, op: OpId, flags: &[&str]) -> bool {
    let Some(Attribute::Opaque(text)) = m.prop(op, "fastmath") else {
        return false;
    };
    let set: Vec<&str> = text
        .trim_start_matches("#arith.fastmath<")
        .trim_end_matches('>')
        .split(',')
        .map(str::trim)
        .collect();
    set.contains(&"fast") || flags.iter().all(|f| set.contains(f))
}

fn fold_float_binary(m: &Module, op: OpId, name: &str, ty: Type) -> Option<Fold> {
    let kind = ty.element_type_or_self().float_kind()?;
    let (lhs, rhs) = (m.operand(op, 0), m.operand(op, 1));
    let (a, b) = (constant_float(m, lhs), constant_float(m, rhs));
    let is = |want: f64| b.is_some_and(|b| b.to_bits() == want.to_bits());
    let identity = match name {
        arith::ADDF if is(-0.0) => Some(lhs),
        // `x + 0` is `x` except for `x = -0` (the sum is +0): a sum's first add of its
        // zero init, when the term cannot be -0.
        arith::ADDF if is(0.0) && never_negative_zero(m, lhs) => Some(lhs),
        arith::SUBF if is(0.0) => Some(lhs),
        arith::MULF | arith::DIVF if is(1.0) => Some(lhs),
        arith::MULF if b.is_some_and(|b| b == 0.0) && has_fastmath(m, op, &["nnan", "nsz"]) => {
            Some(rhs)
        }
        arith::MAXIMUMF | arith::MINIMUMF | arith::MAXNUMF | arith::MINNUMF if lhs == rhs => {
            Some(rhs)
        }
        arith::MAXIMUMF if is(f64::NEG_INFINITY) => Some(lhs),
        arith::MINIMUMF if is(f64::INFINITY) => Some(lhs),
        arith::MAXNUMF | arith::MINNUMF if b.is_some_and(f64::is_nan) => Some(lhs),
        _ => None,
    };
    if let Some(v) = identity {
        return Some(Fold::Value(v));
    }
    let r = eval_float(name, a?, b?, kind)?;
    fold_const(Const::Float(r), ty)
}

/// Whether `v` is never -0: an exponential, an absolute value, a square (`x·x`), an
/// unsigned integer converted.
fn never_negative_zero(m: &Module, v: Value) -> bool {
    let Some(op) = m.defining_op(v) else {
        return false;
    };
    match m.name(op).as_str() {
        math::EXP | math::EXP2 | math::ABSF | arith::UITOFP => true,
        arith::MULF => m.operand(op, 0) == m.operand(op, 1),
        _ => false,
    }
}

/// `v` with its quiet bit set.
fn quiet(v: f64) -> f64 {
    f64::from_bits(v.to_bits() | (1 << 51))
}

/// IEEE 754-2019 `maximum`/`minimum` (NaN-propagating, `-0 < +0`), as `llvm::maximum`.
fn maximum(a: f64, b: f64, max: bool) -> f64 {
    if a.is_nan() {
        return quiet(a);
    }
    if b.is_nan() {
        return quiet(b);
    }
    if a == 0.0 && b == 0.0 && a.is_sign_negative() != b.is_sign_negative() {
        return if a.is_sign_negative() == max { b } else { a };
    }
    if (a < b) == max { b } else { a }
}

/// `maxNum`/`minNum` (a NaN operand yields the other operand), as `llvm::maxnum`.
fn maxnum(a: f64, b: f64, max: bool) -> f64 {
    if a.is_nan() {
        return if b.is_nan() { quiet(a) } else { b };
    }
    if b.is_nan() {
        return a;
    }
    maximum(a, b, max)
}

/// `a <name> b` in `kind`'s precision.
fn eval_float(name: &str, a: f64, b: f64, kind: FloatKind) -> Option<f64> {
    let r = match name {
        arith::ADDF => a + b,
        arith::SUBF => a - b,
        arith::MULF => a * b,
        arith::DIVF => a / b,
        arith::REMF => a % b,
        arith::MAXIMUMF => maximum(a, b, true),
        arith::MINIMUMF => maximum(a, b, false),
        arith::MAXNUMF => maxnum(a, b, true),
        arith::MINNUMF => maxnum(a, b, false),
        _ => return None,
    };
    if r.is_nan() {
        // Rust leaves NaN payloads unspecified; APFloat returns the first NaN operand.
        let first = [a, b].into_iter().find(|v| v.is_nan());
        return Some(round_to(kind, first.map_or(f64::NAN, quiet)));
    }
    Some(round_to(kind, r))
}

// ----- comparisons and select -----

/// The predicate index of a `cmpi`/`cmpf`.
pub fn predicate(m: &Module, op: OpId) -> Option<usize> {
    m.prop(op, "predicate")?
        .as_i64()
        .and_then(|p| usize::try_from(p).ok())
}

/// `cmpi` with swapped operands: `slt` becomes `sgt`, `eq` stays.
fn swapped_cmpi(predicate: &str) -> &'static str {
    match predicate {
        "slt" => "sgt",
        "sgt" => "slt",
        "sle" => "sge",
        "sge" => "sle",
        "ult" => "ugt",
        "ugt" => "ult",
        "ule" => "uge",
        "uge" => "ule",
        "ne" => "ne",
        _ => "eq",
    }
}

/// The predicate of the negated comparison: `slt` becomes `sge`.
pub fn inverted_cmpi(predicate: &str) -> &'static str {
    match predicate {
        "eq" => "ne",
        "ne" => "eq",
        "slt" => "sge",
        "sle" => "sgt",
        "sgt" => "sle",
        "sge" => "slt",
        "ult" => "uge",
        "ule" => "ugt",
        "ugt" => "ule",
        _ => "ult",
    }
}

fn eval_cmpi(predicate: &str, a: i128, b: i128, width: u32) -> bool {
    let (ua, ub) = (zext(a, width), zext(b, width));
    match predicate {
        "eq" => a == b,
        "ne" => a != b,
        "slt" => a < b,
        "sle" => a <= b,
        "sgt" => a > b,
        "sge" => a >= b,
        "ult" => ua < ub,
        "ule" => ua <= ub,
        "ugt" => ua > ub,
        _ => ua >= ub,
    }
}

fn fold_cmpi(m: &Module, op: OpId) -> Option<Fold> {
    let pred = *CMPI_PREDICATES.get(predicate(m, op)?)?;
    let ty = m.value_type(m.result(op, 0));
    let (lhs, rhs) = (m.operand(op, 0), m.operand(op, 1));
    let elem = m.value_type(lhs).element_type_or_self();
    let width = int_width(elem)?;
    if lhs == rhs {
        let equal = matches!(pred, "eq" | "sle" | "sge" | "ule" | "uge");
        return fold_const(Const::Int(-i128::from(equal)), ty);
    }
    let (a, b) = (constant_int(m, lhs), constant_int(m, rhs));
    if b == Some(0) && pred == "ne" {
        // extsi/extui(%x : i1) != 0 -> %x; %x : i1 != false -> %x
        for ext in [arith::EXTSI, arith::EXTUI] {
            if let Some(def) = m.defining_op(lhs)
                && m.is(def, ext)
                && m.value_type(m.operand(def, 0)).element_type_or_self() == Type::I1
            {
                return Some(Fold::Value(m.operand(def, 0)));
            }
        }
        if elem == Type::I1 {
            return Some(Fold::Value(lhs));
        }
    }
    if elem == Type::I1 && pred == "eq" && b == Some(-1) {
        return Some(Fold::Value(lhs));
    }
    match (a, b) {
        (Some(_), None) => {
            let swapped = swapped_cmpi(pred);
            let index = CMPI_PREDICATES.iter().position(|&p| p == swapped)?;
            Some(Fold::Update {
                operands: vec![rhs, lhs],
                predicate: Some(index as i64),
            })
        }
        (Some(a), Some(b)) => fold_const(Const::Int(-i128::from(eval_cmpi(pred, a, b, width))), ty),
        _ => None,
    }
}

fn eval_cmpf(predicate: &str, a: f64, b: f64) -> bool {
    let unordered = a.is_nan() || b.is_nan();
    let (lt, eq, gt) = (a < b, a == b, a > b);
    match predicate {
        "false" => false,
        "oeq" => eq,
        "ogt" => gt,
        "oge" => gt || eq,
        "olt" => lt,
        "ole" => lt || eq,
        "one" => !unordered && !eq,
        "ord" => !unordered,
        "ueq" => unordered || eq,
        "ugt" => unordered || gt,
        "uge" => unordered || gt || eq,
        "ult" => unordered || lt,
        "ule" => unordered || lt || eq,
        "une" => !eq,
        "uno" => unordered,
        _ => true,
    }
}

fn fold_cmpf(m: &Module, op: OpId) -> Option<Fold> {
    let pred = *CMPF_PREDICATES.get(predicate(m, op)?)?;
    let ty = m.value_type(m.result(op, 0));
    let mut a = constant_float(m, m.operand(op, 0));
    let mut b = constant_float(m, m.operand(op, 1));
    // With one NaN operand the result is known whatever the other one is.
    if a.is_some_and(f64::is_nan) {
        b = a;
    }
    if b.is_some_and(f64::is_nan) {
        a = b;
    }
    fold_const(Const::Int(-i128::from(eval_cmpf(pred, a?, b?))), ty)
}

fn fold_select(m: &Module, op: OpId, ty: Type) -> Option<Fold> {
    if m.num_operands(op) != 3 {
        return None;
    }
    let (cond, t, f) = (m.operand(op, 0), m.operand(op, 1), m.operand(op, 2));
    if t == f {
        return Some(Fold::Value(t));
    }
    match constant_int(m, cond) {
        Some(0) => return Some(Fold::Value(f)),
        Some(_) => return Some(Fold::Value(t)),
        None => {}
    }
    // select %c, true, false -> %c
    if ty == Type::I1 && constant_int(m, t) == Some(-1) && constant_int(m, f) == Some(0) {
        return Some(Fold::Value(cond));
    }
    // select (cmpi eq %a, %b), %a, %b -> %b (and `ne` -> %a)
    let cmp = m.defining_op(cond).filter(|&c| m.is(c, arith::CMPI))?;
    let pred = *CMPI_PREDICATES.get(predicate(m, cmp)?)?;
    let (x, y) = (m.operand(cmp, 0), m.operand(cmp, 1));
    if matches!(pred, "eq" | "ne") && ((x == t && y == f) || (x == f && y == t)) {
        return Some(Fold::Value(if pred == "ne" { t } else { f }));
    }
    None
}

// ----- casts -----

/// The integer `v` (of a `width`-bit type, taken as unsigned when `unsigned`) rounded to
/// nearest-even in `kind`, without double rounding.
fn int_to_float(v: i128, width: u32, unsigned: bool, kind: FloatKind) -> f64 {
    let v = if unsigned { zext(v, width) } else { v };
    let magnitude = v.unsigned_abs();
    let bits = 128 - magnitude.leading_zeros();
    let precision = kind.precision();
    let rounded = if bits <= precision {
        magnitude as f64
    } else {
        let shift = bits - precision;
        let (q, rem, half) = (
            magnitude >> shift,
            magnitude & ((1 << shift) - 1),
            1u128 << (shift - 1),
        );
        let q = q + u128::from(rem > half || (rem == half && q & 1 == 1));
        q as f64 * 2f64.powi(shift as i32)
    };
    round_to(kind, if v < 0 { -rounded } else { rounded })
}

/// `fptosi`/`fptoui`: toward zero, `None` when NaN, infinite or out of range.
fn float_to_int(f: f64, width: u32, unsigned: bool) -> Option<i128> {
    if !f.is_finite() {
        return None;
    }
    let t = f.trunc();
    let (lo, hi) = if unsigned {
        (0.0, 2f64.powi(width as i32))
    } else {
        (-(2f64.powi(width as i32 - 1)), 2f64.powi(width as i32 - 1))
    };
    (lo <= t && t < hi).then(|| sext(t as i128, width))
}

/// The cast `def` is a `name` op; its operand if so.
fn cast_of(m: &Module, v: Value, names: &[&str]) -> Option<Value> {
    let def = m.defining_op(v)?;
    (names.iter().any(|n| m.is(def, n)) && m.num_operands(def) == 1).then(|| m.operand(def, 0))
}

fn update(operand: Value) -> Option<Fold> {
    Some(Fold::Update {
        operands: vec![operand],
        predicate: None,
    })
}

/// Width of an index-cast side (`index` counts as 64 bits).
fn cast_width(t: Type) -> Option<u32> {
    int_width(t.element_type_or_self())
}

fn fold_cast(m: &Module, op: OpId, name: &str, ty: Type) -> Option<Fold> {
    let input = m.operand(op, 0);
    let in_ty = m.value_type(input);
    let (from, to) = (in_ty.element_type_or_self(), ty.element_type_or_self());
    let c = constant(m, input);
    match name {
        arith::EXTSI | arith::EXTUI => {
            // ext(ext(x)) -> ext(x)
            if let Some(x) = cast_of(m, input, &[name]) {
                return update(x);
            }
            let Some(Const::Int(v)) = c else { return None };
            let v = if name == arith::EXTUI {
                zext(v, int_width(from)?)
            } else {
                v
            };
            fold_const(Const::Int(v), ty)
        }
        arith::TRUNCI => {
            if let Some(x) = cast_of(m, input, &[arith::EXTSI, arith::EXTUI]) {
                let src = m.value_type(x);
                if src == ty {
                    return Some(Fold::Value(x));
                }
                if cast_width(src)? > cast_width(ty)? {
                    return update(x);
                }
            }
            if let Some(x) = cast_of(m, input, &[arith::TRUNCI]) {
                return update(x);
            }
            let Some(Const::Int(v)) = c else { return None };
            fold_const(Const::Int(v), ty)
        }
        arith::INDEX_CAST | arith::INDEX_CASTUI => {
            if let Some(Const::Int(v)) = c {
                let v = if name == arith::INDEX_CASTUI {
                    zext(v, cast_width(in_ty)?)
                } else {
                    v
                };
                return fold_const(Const::Int(v), ty);
            }
            // index_cast(index_cast(x : A) : B) : A -> x when B is at least as wide as A
            let x = cast_of(m, input, &[name])?;
            (m.value_type(x) == ty && cast_width(in_ty)? >= cast_width(ty)?)
                .then_some(Fold::Value(x))
        }
        arith::SITOFP | arith::UITOFP => {
            let Some(Const::Int(v)) = c else { return None };
            let r = int_to_float(v, int_width(from)?, name == arith::UITOFP, to.float_kind()?);
            fold_const(Const::Float(r), ty)
        }
        arith::FPTOSI | arith::FPTOUI => {
            let Some(Const::Float(f)) = c else {
                return None;
            };
            let v = float_to_int(f, int_width(to)?, name == arith::FPTOUI)?;
            fold_const(Const::Int(v), ty)
        }
        arith::EXTF => {
            let Some(Const::Float(f)) = c else {
                return None;
            };
            fold_const(Const::Float(f), ty)
        }
        arith::TRUNCF => {
            // truncf(extf(x)) -> x, or truncf(x) when x is wider than the result
            if let Some(x) = cast_of(m, input, &[arith::EXTF]) {
                let src = m.value_type(x);
                if src == ty {
                    return Some(Fold::Value(x));
                }
                if src.element_type_or_self().bit_width()? > to.bit_width()? {
                    return update(x);
                }
            }
            let Some(Const::Float(f)) = c else {
                return None;
            };
            // Only exact conversions: no rounding, no overflow, no NaN payload loss.
            let r = round_to(to.float_kind()?, f);
            if r.to_bits() != f.to_bits() {
                return None;
            }
            fold_const(Const::Float(r), ty)
        }
        arith::BITCAST => {
            if let Some(x) = cast_of(m, input, &[arith::BITCAST]) {
                return if m.value_type(x) == ty {
                    Some(Fold::Value(x))
                } else {
                    update(x)
                };
            }
            let bits = match c? {
                Const::Int(v) => zext(v, from.bit_width()?) as u64,
                Const::Float(f) => to_bits(from.float_kind()?, f),
            };
            match to.float_kind() {
                Some(kind) => fold_const(Const::Float(from_bits(kind, bits)), ty),
                None => fold_const(Const::Int(i128::from(bits)), ty),
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_arithmetic_wraps_and_refuses_undefined_cases() {
        assert_eq!(eval_int(ir::dialects::arith::ADDI, 127, 1, 8), Some(-128));
        assert_eq!(eval_int(ir::dialects::arith::MULI, -1, -1, 64), Some(1));
        assert_eq!(eval_int(ir::dialects::arith::DIVSI, -128, -1, 8), None);
        assert_eq!(eval_int(ir::dialects::arith::DIVSI, -7, 2, 8), Some(-3));
        assert_eq!(eval_int(ir::dialects::arith::DIVUI, -1, 2, 8), Some(127));
        assert_eq!(eval_int(ir::dialects::arith::REMSI, -7, 2, 32), Some(-1));
        assert_eq!(eval_int(ir::dialects::arith::REMUI, -1, 10, 8), Some(5));
        assert_eq!(eval_int(ir::dialects::arith::REMSI, 1, 0, 8), None);
        assert_eq!(eval_int(ir::dialects::arith::SHLI, 1, 7, 8), Some(-128));
        assert_eq!(eval_int(ir::dialects::arith::SHLI, 1, 8, 8), None);
        assert_eq!(eval_int(ir::dialects::arith::SHRSI, -128, 7, 8), Some(-1));
        assert_eq!(eval_int(ir::dialects::arith::SHRUI, -128, 7, 8), Some(1));
        assert_eq!(eval_int(ir::dialects::arith::MAXUI, -1, 1, 8), Some(-1));
        assert_eq!(eval_int(ir::dialects::arith::MINSI, -1, 1, 8), Some(-1));
        assert_eq!(eval_int(ir::dialects::arith::XORI, -1, 0, 1), Some(-1));
        assert_eq!(eval_int(ir::dialects::arith::ADDI, -1, -1, 1), Some(0));
    }

    #[test]
    fn floats_round_in_their_own_type() {
        let third = eval_float(ir::dialects::arith::DIVF, 1.0, 3.0, FloatKind::BF16).unwrap();
        assert_eq!(third, 0.333984375);
        assert_eq!(
            eval_float(ir::dialects::arith::ADDF, 1e-8, 1.0, FloatKind::F32),
            Some(1.0)
        );
        assert_eq!(
            eval_float(ir::dialects::arith::ADDF, 65504.0, 32.0, FloatKind::F16),
            Some(f64::INFINITY)
        );
        let nan = eval_float(
            ir::dialects::arith::SUBF,
            f64::INFINITY,
            f64::INFINITY,
            FloatKind::F32,
        )
        .unwrap();
        assert_eq!(to_bits(FloatKind::F32, nan), 0x7FC0_0000);
        let neg_nan = from_bits(FloatKind::F32, 0xFFC0_0001);
        let r = eval_float(ir::dialects::arith::MULF, 2.0, neg_nan, FloatKind::F32).unwrap();
        assert_eq!(to_bits(FloatKind::F32, r), 0xFFC0_0001);
        assert_eq!(maximum(-0.0, 0.0, true).to_bits(), 0f64.to_bits());
        assert_eq!(maximum(-0.0, 0.0, false).to_bits(), (-0f64).to_bits());
        assert_eq!(maxnum(f64::NAN, 2.0, true), 2.0);
        assert!(maximum(f64::NAN, 2.0, true).is_nan());
    }

    #[test]
    fn conversions_round_once() {
        // 2^24 + 1 is a tie in f32: to even, 2^24.
        assert_eq!(
            int_to_float((1 << 24) + 1, 32, false, FloatKind::F32),
            16777216.0
        );
        // Just above a bf16 tie after an f32 rounding would have hidden it.
        let v = (1i128 << 40) + (1 << 32) + 1;
        assert_eq!(
            int_to_float(v, 64, false, FloatKind::BF16),
            (1u64 << 40) as f64 + (1u64 << 33) as f64
        );
        assert_eq!(int_to_float(-1, 8, true, FloatKind::F32), 255.0);
        assert_eq!(int_to_float(-3, 8, false, FloatKind::F16), -3.0);
        assert_eq!(float_to_int(-2.9, 8, false), Some(-2));
        assert_eq!(float_to_int(255.5, 8, true), Some(-1));
        assert_eq!(float_to_int(256.0, 8, true), None);
        assert_eq!(float_to_int(-129.0, 8, false), None);
        assert_eq!(float_to_int(f64::NAN, 8, false), None);
    }

    #[test]
    fn predicates() {
        assert!(eval_cmpi("ult", 1, -1, 8));
        assert!(!eval_cmpi("slt", 1, -1, 8));
        assert_eq!(swapped_cmpi("uge"), "ule");
        for &p in CMPI_PREDICATES {
            assert_eq!(inverted_cmpi(inverted_cmpi(p)), p);
            for (a, b) in [(1, -1), (-1, 1), (3, 3)] {
                assert_ne!(eval_cmpi(p, a, b, 8), eval_cmpi(inverted_cmpi(p), a, b, 8));
            }
        }
        assert!(eval_cmpf("une", f64::NAN, 1.0));
        assert!(!eval_cmpf("oeq", f64::NAN, f64::NAN));
        assert!(eval_cmpf("ord", 1.0, 2.0));
        assert!(eval_cmpf("oeq", -0.0, 0.0));
    }
}
