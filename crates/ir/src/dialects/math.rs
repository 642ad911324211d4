//! The `math` dialect: elementwise float functions (and `absi`, bit counts).

use super::arith::FLOAT_UNARY_OP;
use crate::dialects::prelude::*;

/// Unary float ops (`math.tanh %x : f32`).
pub const FLOAT_UNARY: &[&str] = &[
    "math.tanh",
    "math.exp",
    "math.exp2",
    "math.expm1",
    "math.log",
    "math.log1p",
    "math.log2",
    "math.log10",
    "math.sqrt",
    "math.rsqrt",
    "math.sin",
    "math.cos",
    "math.tan",
    "math.atan",
    "math.acos",
    "math.asin",
    "math.acosh",
    "math.asinh",
    "math.atanh",
    "math.cosh",
    "math.sinh",
    "math.erf",
    "math.erfc",
    "math.absf",
    "math.floor",
    "math.ceil",
    "math.round",
    "math.roundeven",
    "math.trunc",
    "math.cbrt",
];

/// Binary float ops.
pub const FLOAT_BINARY: &[&str] = &["math.atan2", "math.powf", "math.copysign"];

/// Unary integer ops.
pub const INT_UNARY: &[&str] = &["math.absi", "math.ctlz", "math.cttz", "math.ctpop"];

/// `math.powf %a, %b : f32`.
const FLOAT_BINARY_OP: OpDef = FLOAT_UNARY_OP
    .operands(&[one("lhs", &FLOAT_LIKE), one("rhs", &FLOAT_LIKE)])
    .format("$lhs `,` $rhs (`fastmath` `` $fastmath^)? attr-dict `:` type($result)");

/// `math.fma %a, %b, %c : f32`.
const FMA: OpDef = FLOAT_UNARY_OP
    .named("math.fma")
    .operands(&[
        one("a", &FLOAT_LIKE),
        one("b", &FLOAT_LIKE),
        one("c", &FLOAT_LIKE),
    ])
    .format("$a `,` $b `,` $c (`fastmath` `` $fastmath^)? attr-dict `:` type($result)");

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
    r.register(FMA);
    for &name in INT_UNARY {
        r.register(INT_UNARY_OP.named(name));
    }
}
