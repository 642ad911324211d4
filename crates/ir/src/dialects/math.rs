//! The `math` dialect: elementwise float functions (and `absi`, bit counts).

use super::{
    elided, expect_operand_types, expect_results, expect_same_types, is_float_like, is_int_like,
    parse_fastmath, print_fastmath,
};
use crate::diag::DResult;
use crate::module::OpId;
use crate::module::OpState;
use crate::parser::Parser;
use crate::printer::Printer;
use crate::registry::{OpDef, Registry, Traits};
use crate::verifier::VerifyCx;

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

pub fn register(r: &mut Registry) {
    for &name in FLOAT_UNARY.iter().chain(FLOAT_BINARY).chain(&["math.fma"]) {
        r.register(
            OpDef::new(name)
                .traits(Traits::PURE)
                .inherent(&["fastmath"])
                .regions(0)
                .syntax(print_elementwise, parse_elementwise)
                .verify(verify_float),
        );
    }
    for &name in INT_UNARY {
        r.register(
            OpDef::new(name)
                .traits(Traits::PURE)
                .regions(0)
                .syntax(print_elementwise, parse_elementwise)
                .verify(verify_int),
        );
    }
}

fn arity(name: &str) -> usize {
    if name == "math.fma" {
        3
    } else if FLOAT_BINARY.contains(&name) {
        2
    } else {
        1
    }
}

/// `math.op %a[, %b[, %c]] [fastmath<..>] attr-dict : type`
pub(crate) fn print_elementwise(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write(" ");
    p.values(m.operands(op));
    let fm = print_fastmath(p, op);
    p.attr_dict(op, &elided(&[("fastmath", fm)]));
    p.write(" : ");
    p.ty(m.value_type(m.result(op, 0)));
}

pub(crate) fn parse_elementwise(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let loc = p.loc();
    let ops = p.parse_operand_list()?;
    let n = arity(state.name.as_str());
    if ops.len() != n {
        return Err(p.error_at(loc, format!("expected {n} operands")));
    }
    if !INT_UNARY.contains(&state.name.as_str()) {
        parse_fastmath(p, state)?;
    }
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let ty = p.parse_colon_type()?;
    state.operands = p.resolve_operands(&ops, &vec![ty; n], loc)?;
    state.result_types.push(ty);
    Ok(())
}

pub(crate) fn verify_float(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    super::expect_operands(m, op, arity(m.name(op).as_str()))?;
    expect_results(m, op, 1)?;
    expect_operand_types(m, op, "floating-point-like", is_float_like)?;
    expect_same_types(m, op)?;
    Ok(())
}

fn verify_int(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    super::expect_operands(m, op, 1)?;
    expect_results(m, op, 1)?;
    expect_operand_types(m, op, "signless-integer-like", is_int_like)?;
    expect_same_types(m, op)?;
    Ok(())
}
