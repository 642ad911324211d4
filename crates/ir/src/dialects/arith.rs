//! The `arith` dialect: constants, integer and float arithmetic, comparisons, `select`, casts.

use super::{
    elided, expect_operand_types, expect_operands, expect_results, expect_same_types, is_bool_like,
    is_float_like, is_int_like, parse_enum_prop, parse_fastmath, print_enum_prop, print_fastmath,
    same_shape, with_element_type,
};
use crate::Ident;
use crate::attrs::{self, Attribute};
use crate::diag::DResult;
use crate::module::{InsertPoint, Module, OpId, OpState, Value};
use crate::parser::Parser;
use crate::printer::Printer;
use crate::registry::{OpDef, Registry, Traits};
use crate::types::{Type, TypeKind};
use crate::verifier::VerifyCx;

/// Float binary ops and whether they commute.
pub const FLOAT_BINARY: &[(&str, bool)] = &[
    ("arith.addf", true),
    ("arith.subf", false),
    ("arith.mulf", true),
    ("arith.divf", false),
    ("arith.remf", false),
    ("arith.maximumf", true),
    ("arith.minimumf", true),
    ("arith.maxnumf", true),
    ("arith.minnumf", true),
];

/// Integer binary ops, whether they commute, and whether they carry overflow flags.
pub const INT_BINARY: &[(&str, bool, bool)] = &[
    ("arith.addi", true, true),
    ("arith.subi", false, true),
    ("arith.muli", true, true),
    ("arith.divsi", false, false),
    ("arith.divui", false, false),
    ("arith.ceildivsi", false, false),
    ("arith.ceildivui", false, false),
    ("arith.floordivsi", false, false),
    ("arith.remsi", false, false),
    ("arith.remui", false, false),
    ("arith.andi", true, false),
    ("arith.ori", true, false),
    ("arith.xori", true, false),
    ("arith.shli", false, true),
    ("arith.shrsi", false, false),
    ("arith.shrui", false, false),
    ("arith.maxsi", true, false),
    ("arith.maxui", true, false),
    ("arith.minsi", true, false),
    ("arith.minui", true, false),
];

/// Cast ops (`%r = arith.extf %a : bf16 to f32`).
pub const CASTS: &[&str] = &[
    "arith.extf",
    "arith.truncf",
    "arith.extsi",
    "arith.extui",
    "arith.trunci",
    "arith.sitofp",
    "arith.uitofp",
    "arith.fptosi",
    "arith.fptoui",
    "arith.index_cast",
    "arith.index_castui",
    "arith.bitcast",
];

/// `arith.cmpi` predicates, by value.
pub const CMPI_PREDICATES: &[&str] = &[
    "eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge",
];

/// `arith.cmpf` predicates, by value.
pub const CMPF_PREDICATES: &[&str] = &[
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule",
    "une", "uno", "true",
];

pub fn register(r: &mut Registry) {
    r.register(
        OpDef::new("arith.constant")
            .traits(Traits::PURE.union(Traits::CONSTANT_LIKE))
            .inherent(&["value"])
            .regions(0)
            .syntax(print_constant, parse_constant)
            .verify(verify_constant)
            .name_hint(constant_name),
    );
    for &(name, commutative) in FLOAT_BINARY {
        let traits = if commutative {
            Traits::PURE.union(Traits::COMMUTATIVE)
        } else {
            Traits::PURE
        };
        r.register(
            OpDef::new(name)
                .traits(traits)
                .inherent(&["fastmath"])
                .regions(0)
                .syntax(print_binary, parse_binary)
                .verify(verify_float_binary),
        );
    }
    for &(name, commutative, overflow) in INT_BINARY {
        let traits = if commutative {
            Traits::PURE.union(Traits::COMMUTATIVE)
        } else {
            Traits::PURE
        };
        let inherent: &'static [&'static str] = if overflow { &["overflowFlags"] } else { &[] };
        r.register(
            OpDef::new(name)
                .traits(traits)
                .inherent(inherent)
                .regions(0)
                .syntax(print_binary, parse_binary)
                .verify(verify_int_binary),
        );
    }
    // `arith.negf %x : f32` is written like a unary math op.
    r.register(
        OpDef::new("arith.negf")
            .traits(Traits::PURE)
            .inherent(&["fastmath"])
            .regions(0)
            .syntax(
                super::math::print_elementwise,
                super::math::parse_elementwise,
            )
            .verify(super::math::verify_float),
    );
    r.register(
        OpDef::new("arith.cmpi")
            .traits(Traits::PURE)
            .inherent(&["predicate"])
            .regions(0)
            .syntax(print_cmp, parse_cmp)
            .verify(verify_cmp),
    );
    r.register(
        OpDef::new("arith.cmpf")
            .traits(Traits::PURE)
            .inherent(&["predicate", "fastmath"])
            .regions(0)
            .syntax(print_cmp, parse_cmp)
            .verify(verify_cmp),
    );
    r.register(
        OpDef::new("arith.select")
            .traits(Traits::PURE)
            .regions(0)
            .syntax(print_select, parse_select)
            .verify(verify_select),
    );
    for &name in CASTS {
        let inherent: &'static [&'static str] = match name {
            "arith.extf" | "arith.truncf" => &["fastmath", "roundingmode"],
            "arith.trunci" => &["overflowFlags"],
            _ => &[],
        };
        r.register(
            OpDef::new(name)
                .traits(Traits::PURE)
                .inherent(inherent)
                .regions(0)
                .syntax(print_cast, parse_cast)
                .verify(verify_cast),
        );
    }
}

// ----- builders -----

/// `arith.constant <value>`; the result type is the attribute's type.
pub fn build_constant(m: &mut Module, at: InsertPoint, value: Attribute) -> Value {
    let ty = value.ty().expect("typed constant attribute");
    let op = m.create_op_at(
        OpState::new("arith.constant")
            .prop("value", value)
            .results(&[ty]),
        at,
    );
    m.result(op, 0)
}

/// `arith.constant v : index`.
pub fn build_index_constant(m: &mut Module, at: InsertPoint, v: i64) -> Value {
    build_constant(m, at, Attribute::index(v))
}

/// A binary op whose result has the operands' type (`arith.addf`, `arith.muli`, ...).
pub fn build_binary(m: &mut Module, at: InsertPoint, name: &str, lhs: Value, rhs: Value) -> Value {
    let ty = m.value_type(lhs);
    let op = m.create_op_at(OpState::new(name).operands(&[lhs, rhs]).results(&[ty]), at);
    m.result(op, 0)
}

/// `arith.cmpi <predicate>, lhs, rhs`.
pub fn build_cmpi(
    m: &mut Module,
    at: InsertPoint,
    predicate: &str,
    lhs: Value,
    rhs: Value,
) -> Value {
    let p = CMPI_PREDICATES
        .iter()
        .position(|&n| n == predicate)
        .expect("cmpi predicate");
    let ty = with_element_type(m.value_type(lhs), Type::I1);
    let op = m.create_op_at(
        OpState::new("arith.cmpi")
            .operands(&[lhs, rhs])
            .results(&[ty])
            .prop("predicate", Attribute::i64(p as i64)),
        at,
    );
    m.result(op, 0)
}

/// A cast op (`arith.extf`, `arith.index_cast`, ...) to `to`.
pub fn build_cast(m: &mut Module, at: InsertPoint, name: &str, v: Value, to: Type) -> Value {
    let op = m.create_op_at(OpState::new(name).operands(&[v]).results(&[to]), at);
    m.result(op, 0)
}

// ----- arith.constant -----

fn print_constant(p: &mut Printer<'_>, op: OpId) {
    p.attr_dict(op, &["value"]);
    p.write(" ");
    match p.module().prop(op, "value") {
        Some(v) => {
            let v = v.clone();
            p.attr(&v);
        }
        None => p.write("<<missing value>>"),
    }
}

fn parse_constant(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let loc = p.loc();
    let value = p.parse_attribute()?;
    let Some(ty) = value.ty() else {
        return Err(p.error_at(loc, "expected a typed constant value"));
    };
    attrs::set_named(&mut state.props, Ident::new("value"), value);
    state.result_types.push(ty);
    Ok(())
}

fn verify_constant(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_operands(m, op, 0)?;
    expect_results(m, op, 1)?;
    let Some(value) = m.prop(op, "value") else {
        return Err("requires attribute 'value'".into());
    };
    let rt = m.value_type(m.result(op, 0));
    match value.ty() {
        Some(t) if t == rt => {}
        Some(t) => {
            return Err(format!(
                "value type '{t}' does not match the result type '{rt}'"
            ));
        }
        None => return Err("value must be an integer, float, or elements attribute".into()),
    }
    if rt.is_integer() && !rt.is_signless_integer() {
        return Err("integer return type must be signless".into());
    }
    Ok(())
}

fn constant_name(m: &Module, op: OpId) -> Option<String> {
    match m.prop(op, "value")? {
        Attribute::Bool(b) => Some(if *b { "true" } else { "false" }.into()),
        Attribute::Int(v, t) if t.is_index() => Some(format!("c{v}")),
        Attribute::Int(v, t) => Some(format!("c{v}_{t}")),
        _ => Some("cst".into()),
    }
}

// ----- binary ops -----

fn print_binary(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write(" ");
    p.values(m.operands(op));
    let fm = print_fastmath(p, op);
    let of = print_enum_prop(p, op, "overflowFlags", "#arith.overflow", "overflow");
    p.attr_dict(op, &elided(&[("fastmath", fm), ("overflowFlags", of)]));
    p.write(" : ");
    p.ty(m.value_type(m.result(op, 0)));
}

fn parse_binary(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let loc = p.loc();
    let lhs = p.parse_operand()?;
    p.parse_punct(b',')?;
    let rhs = p.parse_operand()?;
    parse_fastmath(p, state)?;
    parse_enum_prop(p, state, "overflow", "#arith.overflow", "overflowFlags")?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let ty = p.parse_colon_type()?;
    state.operands = p.resolve_operands(&[lhs, rhs], &[ty, ty], loc)?;
    state.result_types.push(ty);
    Ok(())
}

fn verify_float_binary(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_operands(m, op, 2)?;
    expect_results(m, op, 1)?;
    expect_operand_types(m, op, "floating-point-like", is_float_like)?;
    expect_same_types(m, op)?;
    Ok(())
}

fn verify_int_binary(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_operands(m, op, 2)?;
    expect_results(m, op, 1)?;
    expect_operand_types(m, op, "signless-integer-like", is_int_like)?;
    expect_same_types(m, op)?;
    Ok(())
}

// ----- comparisons -----

fn predicates(m: &Module, op: OpId) -> &'static [&'static str] {
    if m.is(op, "arith.cmpi") {
        CMPI_PREDICATES
    } else {
        CMPF_PREDICATES
    }
}

fn print_cmp(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    let names = predicates(m, op);
    let pred = m
        .prop(op, "predicate")
        .and_then(Attribute::as_i64)
        .and_then(|v| usize::try_from(v).ok())
        .and_then(|v| names.get(v));
    let consumed = pred.is_some();
    if let Some(name) = pred {
        p.write(" ");
        p.write(name);
        p.write(",");
    }
    p.write(" ");
    p.values(m.operands(op));
    let fm = print_fastmath(p, op);
    p.attr_dict(op, &elided(&[("predicate", consumed), ("fastmath", fm)]));
    p.write(" : ");
    p.ty(m.value_type(m.operand(op, 0)));
}

fn parse_cmp(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let loc = p.loc();
    let names = if state.name.as_str() == "arith.cmpi" {
        CMPI_PREDICATES
    } else {
        CMPF_PREDICATES
    };
    let kw = p.parse_any_keyword()?;
    let Some(index) = names.iter().position(|&n| n == kw) else {
        return Err(p.error_at(loc, format!("invalid predicate '{kw}'")));
    };
    attrs::set_named(
        &mut state.props,
        Ident::new("predicate"),
        Attribute::i64(index as i64),
    );
    p.parse_punct(b',')?;
    let oloc = p.loc();
    let lhs = p.parse_operand()?;
    p.parse_punct(b',')?;
    let rhs = p.parse_operand()?;
    if state.name.as_str() == "arith.cmpf" {
        parse_fastmath(p, state)?;
    }
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let ty = p.parse_colon_type()?;
    state.operands = p.resolve_operands(&[lhs, rhs], &[ty, ty], oloc)?;
    state.result_types.push(with_element_type(ty, Type::I1));
    Ok(())
}

fn verify_cmp(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_operands(m, op, 2)?;
    expect_results(m, op, 1)?;
    let int = m.is(op, "arith.cmpi");
    if int {
        expect_operand_types(m, op, "signless-integer-like", is_int_like)?;
    } else {
        expect_operand_types(m, op, "floating-point-like", is_float_like)?;
    }
    let (a, b) = (
        m.value_type(m.operand(op, 0)),
        m.value_type(m.operand(op, 1)),
    );
    if a != b {
        return Err("requires all operands to have the same type".into());
    }
    let r = m.value_type(m.result(op, 0));
    if r != with_element_type(a, Type::I1) {
        return Err(format!(
            "result type '{r}' must be i1 with the operands' shape"
        ));
    }
    let n = predicates(m, op).len() as i64;
    match m.prop(op, "predicate").and_then(Attribute::as_i64) {
        Some(v) if (0..n).contains(&v) => Ok(()),
        _ => Err("requires a valid 'predicate' attribute".into()),
    }
}

// ----- select -----

fn print_select(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write(" ");
    p.values(m.operands(op));
    p.attr_dict(op, &[]);
    p.write(" : ");
    let cond = m.value_type(m.operand(op, 0));
    if cond != Type::I1 {
        p.ty(cond);
        p.write(", ");
    }
    p.ty(m.value_type(m.result(op, 0)));
}

fn parse_select(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let loc = p.loc();
    let ops = p.parse_operand_list()?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let types = p.parse_colon_type_list()?;
    let (cond, ty) = match types.as_slice() {
        [t] => (Type::I1, *t),
        [c, t] => (*c, *t),
        _ => return Err(p.error_at(loc, "expected one or two types")),
    };
    state.operands = p.resolve_operands(&ops, &[cond, ty, ty], loc)?;
    state.result_types.push(ty);
    Ok(())
}

fn verify_select(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_operands(m, op, 3)?;
    expect_results(m, op, 1)?;
    let cond = m.value_type(m.operand(op, 0));
    let (a, b) = (
        m.value_type(m.operand(op, 1)),
        m.value_type(m.operand(op, 2)),
    );
    let r = m.value_type(m.result(op, 0));
    if !is_bool_like(cond) {
        return Err(format!("operand #0 must be bool-like, but got '{cond}'"));
    }
    if a != r || b != r {
        return Err("requires the same type for true value, false value and result".into());
    }
    if cond != Type::I1 && !same_shape(cond, r) {
        return Err("expected condition type to have the same shape as the result type".into());
    }
    Ok(())
}

// ----- casts -----

fn print_cast(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    p.write(" ");
    p.values(m.operands(op));
    let fm = print_fastmath(p, op);
    let of = print_enum_prop(p, op, "overflowFlags", "#arith.overflow", "overflow");
    p.attr_dict(op, &elided(&[("fastmath", fm), ("overflowFlags", of)]));
    p.write(" : ");
    p.types(m.operand_types(op));
    p.write(" to ");
    p.types(m.result_types(op));
}

fn parse_cast(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let loc = p.loc();
    let input = p.parse_operand()?;
    parse_fastmath(p, state)?;
    parse_enum_prop(p, state, "overflow", "#arith.overflow", "overflowFlags")?;
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let from = p.parse_colon_type()?;
    p.parse_keyword("to")?;
    let to = p.parse_type()?;
    state.operands = p.resolve_operands(&[input], &[from], loc)?;
    state.result_types.push(to);
    Ok(())
}

fn cast_compatible(name: &str, from: Type, to: Type) -> bool {
    let (f, t) = (from.element_type_or_self(), to.element_type_or_self());
    let fw = f.bit_width().unwrap_or(0);
    let tw = t.bit_width().unwrap_or(0);
    let int = |x: Type| x.is_signless_integer();
    match name {
        "arith.extf" => f.is_float() && t.is_float() && tw > fw,
        "arith.truncf" => f.is_float() && t.is_float() && tw < fw,
        "arith.extsi" | "arith.extui" => int(f) && int(t) && tw > fw,
        "arith.trunci" => int(f) && int(t) && tw < fw,
        "arith.sitofp" | "arith.uitofp" => int(f) && t.is_float(),
        "arith.fptosi" | "arith.fptoui" => f.is_float() && int(t),
        "arith.index_cast" | "arith.index_castui" => {
            (f.is_index() && int(t)) || (int(f) && t.is_index())
        }
        "arith.bitcast" => (int(f) || f.is_float()) && (int(t) || t.is_float()) && fw == tw,
        _ => false,
    }
}

fn verify_cast(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    expect_operands(m, op, 1)?;
    expect_results(m, op, 1)?;
    let from = m.value_type(m.operand(op, 0));
    let to = m.value_type(m.result(op, 0));
    let shapes_ok = same_shape(from, to)
        && !matches!(from.kind(), TypeKind::Function { .. } | TypeKind::Tuple(_));
    if !shapes_ok || !cast_compatible(m.name(op).as_str(), from, to) {
        return Err(format!(
            "operand type '{from}' and result type '{to}' are cast incompatible"
        ));
    }
    Ok(())
}
