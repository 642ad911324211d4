//! The `math` dialect: elementwise float functions (and `absi`, bit counts, `ipowi`).

use super::arith::FLOAT_UNARY_OP;
use crate::dialects::prelude::*;

// The names of the dialect's ops, one constant each: builders and matchers use them, so
// a misspelt op name does not compile, and the registry's test checks each is registered.
pub const ABSF: &str = "math.absf";
pub const ABSI: &str = "math.absi";
pub const ACOS: &str = "math.acos";
pub const ACOSH: &str = "math.acosh";
pub const ASIN: &str = "math.asin";
pub const ASINH: &str = "math.asinh";
pub const ATAN: &str = "math.atan";
pub const ATAN2: &str = "math.atan2";
pub const ATANH: &str = "math.atanh";
pub const CBRT: &str = "math.cbrt";
pub const CEIL: &str = "math.ceil";
pub const COPYSIGN: &str = "math.copysign";
pub const COS: &str = "math.cos";
pub const COSH: &str = "math.cosh";
pub const CTLZ: &str = "math.ctlz";
pub const CTPOP: &str = "math.ctpop";
pub const CTTZ: &str = "math.cttz";
pub const ERF: &str = "math.erf";
pub const ERFC: &str = "math.erfc";
pub const EXP: &str = "math.exp";
pub const EXP2: &str = "math.exp2";
pub const EXPM1: &str = "math.expm1";
pub const FLOOR: &str = "math.floor";
pub const IPOWI: &str = "math.ipowi";
pub const FMA: &str = "math.fma";
pub const LOG: &str = "math.log";
pub const LOG10: &str = "math.log10";
pub const LOG1P: &str = "math.log1p";
pub const LOG2: &str = "math.log2";
pub const POWF: &str = "math.powf";
pub const ROUND: &str = "math.round";
pub const ROUNDEVEN: &str = "math.roundeven";
pub const RSQRT: &str = "math.rsqrt";
pub const SIN: &str = "math.sin";
pub const SINH: &str = "math.sinh";
pub const SQRT: &str = "math.sqrt";
pub const TAN: &str = "math.tan";
pub const TANH: &str = "math.tanh";
pub const TRUNC: &str = "math.trunc";

/// Unary float ops (`math.tanh %x : f32`).
pub const FLOAT_UNARY: &[&str] = &[
    TANH, EXP, EXP2, EXPM1, LOG, LOG1P, LOG2, LOG10, SQRT, RSQRT, SIN, COS, TAN, ATAN, ACOS, ASIN,
    ACOSH, ASINH, ATANH, COSH, SINH, ERF, ERFC, ABSF, FLOOR, CEIL, ROUND, ROUNDEVEN, TRUNC, CBRT,
];

/// Binary float ops.
pub const FLOAT_BINARY: &[&str] = &[ATAN2, POWF, COPYSIGN];

/// Unary integer ops.
pub const INT_UNARY: &[&str] = &[ABSI, CTLZ, CTTZ, CTPOP];

/// `math.powf %a, %b : f32`.
const FLOAT_BINARY_OP: OpDef = FLOAT_UNARY_OP
    .operands(&[one("lhs", &FLOAT_LIKE), one("rhs", &FLOAT_LIKE)])
    .format("$lhs `,` $rhs (`fastmath` `` $fastmath^)? attr-dict `:` type($result)");

/// `math.fma %a, %b, %c : f32`.
const FMA_OP: OpDef = FLOAT_UNARY_OP
    .named(FMA)
    .operands(&[
        one("a", &FLOAT_LIKE),
        one("b", &FLOAT_LIKE),
        one("c", &FLOAT_LIKE),
    ])
    .format("$a `,` $b `,` $c (`fastmath` `` $fastmath^)? attr-dict `:` type($result)");

/// `math.ipowi %a, %b : i32`: `a` to the power `b`, both signed.
const INT_BINARY_OP: OpDef = OpDef::pure(IPOWI)
    .operands(&[one("lhs", &INT_LIKE), one("rhs", &INT_LIKE)])
    .results(&[one("result", &INT_LIKE)])
    .rules(&[ALL_TYPES_SAME])
    .format("$lhs `,` $rhs attr-dict `:` type($result)");

/// `math.ctlz %x : i32`.
const INT_UNARY_OP: OpDef = OpDef::pure("")
    .operands(&[one("operand", &INT_LIKE)])
    .results(&[one("result", &INT_LIKE)])
    .rules(&[ALL_TYPES_SAME])
    .format("$operand attr-dict `:` type($result)");

pub fn register(r: &mut Registry) {
    for &name in FLOAT_UNARY {
        r.register(FLOAT_UNARY_OP.named(name));
    }
    for &name in FLOAT_BINARY {
        r.register(FLOAT_BINARY_OP.named(name));
    }
    r.register(FMA_OP);
    r.register(INT_BINARY_OP);
    for &name in INT_UNARY {
        r.register(INT_UNARY_OP.named(name));
    }
}
