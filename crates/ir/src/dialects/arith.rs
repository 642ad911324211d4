//! The `arith` dialect: constants, integer and float arithmetic, comparisons, `select`, casts.

use super::{same_shape, with_element_type};
use crate::Ident;
use crate::attrs::{self, Attribute};
use crate::diag::DResult;
use crate::dialects::prelude::*;
use crate::module::{InsertPoint, Module, OpId, OpState, Value};
use crate::parser::Parser;
use crate::printer::Printer;
use crate::types::{Type, TypeKind};
use crate::verifier::VerifyCx;

// The names of the dialect's ops, one constant each: builders and matchers use them, so
// a misspelt op name does not compile, and the registry's test checks each is registered.
pub const ADDF: &str = "arith.addf";
pub const ADDI: &str = "arith.addi";
pub const ANDI: &str = "arith.andi";
pub const BITCAST: &str = "arith.bitcast";
pub const CEILDIVSI: &str = "arith.ceildivsi";
pub const CEILDIVUI: &str = "arith.ceildivui";
pub const CMPF: &str = "arith.cmpf";
pub const CMPI: &str = "arith.cmpi";
pub const CONSTANT: &str = "arith.constant";
pub const DIVF: &str = "arith.divf";
pub const DIVSI: &str = "arith.divsi";
pub const DIVUI: &str = "arith.divui";
pub const EXTF: &str = "arith.extf";
pub const EXTSI: &str = "arith.extsi";
pub const EXTUI: &str = "arith.extui";
pub const FLOORDIVSI: &str = "arith.floordivsi";
pub const FPTOSI: &str = "arith.fptosi";
pub const FPTOUI: &str = "arith.fptoui";
pub const INDEX_CAST: &str = "arith.index_cast";
pub const INDEX_CASTUI: &str = "arith.index_castui";
pub const MAXIMUMF: &str = "arith.maximumf";
pub const MAXNUMF: &str = "arith.maxnumf";
pub const MAXSI: &str = "arith.maxsi";
pub const MAXUI: &str = "arith.maxui";
pub const MINIMUMF: &str = "arith.minimumf";
pub const MINNUMF: &str = "arith.minnumf";
pub const MINSI: &str = "arith.minsi";
pub const MINUI: &str = "arith.minui";
pub const MULF: &str = "arith.mulf";
pub const MULI: &str = "arith.muli";
pub const NEGF: &str = "arith.negf";
pub const ORI: &str = "arith.ori";
pub const REMF: &str = "arith.remf";
pub const REMSI: &str = "arith.remsi";
pub const REMUI: &str = "arith.remui";
pub const SELECT: &str = "arith.select";
pub const SHLI: &str = "arith.shli";
pub const SHRSI: &str = "arith.shrsi";
pub const SHRUI: &str = "arith.shrui";
pub const SITOFP: &str = "arith.sitofp";
pub const SUBF: &str = "arith.subf";
pub const SUBI: &str = "arith.subi";
pub const TRUNCF: &str = "arith.truncf";
pub const TRUNCI: &str = "arith.trunci";
pub const UITOFP: &str = "arith.uitofp";
pub const XORI: &str = "arith.xori";

/// Float binary ops and whether they commute.
pub const FLOAT_BINARY: &[(&str, bool)] = &[
    (ADDF, true),
    (SUBF, false),
    (MULF, true),
    (DIVF, false),
    (REMF, false),
    (MAXIMUMF, true),
    (MINIMUMF, true),
    (MAXNUMF, true),
    (MINNUMF, true),
];

/// Integer binary ops, whether they commute, and whether they carry overflow flags.
pub const INT_BINARY: &[(&str, bool, bool)] = &[
    (ADDI, true, true),
    (SUBI, false, true),
    (MULI, true, true),
    (DIVSI, false, false),
    (DIVUI, false, false),
    (CEILDIVSI, false, false),
    (CEILDIVUI, false, false),
    (FLOORDIVSI, false, false),
    (REMSI, false, false),
    (REMUI, false, false),
    (ANDI, true, false),
    (ORI, true, false),
    (XORI, true, false),
    (SHLI, false, true),
    (SHRSI, false, false),
    (SHRUI, false, false),
    (MAXSI, true, false),
    (MAXUI, true, false),
    (MINSI, true, false),
    (MINUI, true, false),
];

/// Cast ops (`%r = arith.extf %a : bf16 to f32`).
pub const CASTS: &[&str] = &[
    EXTF,
    TRUNCF,
    EXTSI,
    EXTUI,
    TRUNCI,
    SITOFP,
    UITOFP,
    FPTOSI,
    FPTOUI,
    INDEX_CAST,
    INDEX_CASTUI,
    BITCAST,
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

/// `fastmath<fast>` (`#arith.fastmath<fast>`; `<none>` is left out).
pub const FASTMATH: PropKind = PropKind::EnumBody {
    prefix: "#arith.fastmath",
    default: "<none>",
};

/// One float operand and result of one type with fast-math flags: `arith.negf`, and `math.tanh %x
/// fastmath<fast> : f32` and the other unary math functions.
pub(super) const FLOAT_UNARY_OP: OpDef = OpDef::pure("")
    .operands(&[one("operand", &FLOAT_LIKE)])
    .results(&[one("result", &FLOAT_LIKE)])
    .props(&[optional("fastmath", FASTMATH)])
    .rules(&[ALL_TYPES_SAME])
    .format("$operand (`fastmath` `` $fastmath^)? attr-dict `:` type($result)");

/// `overflow<nsw>` (`#arith.overflow<nsw>`; `<none>` is left out).
pub const OVERFLOW: PropKind = PropKind::EnumBody {
    prefix: "#arith.overflow",
    default: "<none>",
};

/// `arith.constant 1.0 : f32`: the result type is the value's.
const CONSTANT_OP: OpDef = OpDef::new(CONSTANT)
    .traits(Traits::PURE.union(Traits::CONSTANT_LIKE))
    .inherent(&["value"])
    .operands(&[])
    .results(&[one("result", &ANY)])
    .syntax(print_constant, parse_constant)
    .verify(verify_constant)
    .name_hint(constant_name);

/// `arith.select %c, %a, %b : f32` (`: i1, f32` spelled out only for a shaped condition).
const SELECT_OP: OpDef = OpDef::pure(SELECT)
    .operands(&[
        one("condition", &BOOL_LIKE),
        one("true_value", &ANY),
        one("false_value", &ANY),
    ])
    .results(&[one("result", &ANY)])
    .syntax(print_select, parse_select)
    .verify(verify_select);

/// `arith.addf %a, %b fastmath<fast> : f32`.
const FLOAT_BINARY_OP: OpDef = OpDef::pure("")
    .operands(&[one("lhs", &FLOAT_LIKE), one("rhs", &FLOAT_LIKE)])
    .results(&[one("result", &FLOAT_LIKE)])
    .props(&[optional("fastmath", FASTMATH)])
    .rules(&[ALL_TYPES_SAME])
    .format("$lhs `,` $rhs (`fastmath` `` $fastmath^)? attr-dict `:` type($result)");

/// `arith.divsi %a, %b : i32`.
const INT_BINARY_OP: OpDef = OpDef::pure("")
    .operands(&[one("lhs", &INT_LIKE), one("rhs", &INT_LIKE)])
    .results(&[one("result", &INT_LIKE)])
    .rules(&[ALL_TYPES_SAME])
    .format("$lhs `,` $rhs attr-dict `:` type($result)");

/// `arith.addi %a, %b overflow<nsw> : i32`.
const INT_BINARY_OVERFLOW_OP: OpDef = INT_BINARY_OP
    .props(&[optional("overflowFlags", OVERFLOW)])
    .format("$lhs `,` $rhs (`overflow` `` $overflowFlags^)? attr-dict `:` type($result)");

/// `arith.cmpi slt, %a, %b : i32`: an `i1` of the operands' shape.
const CMPI_OP: OpDef = OpDef::pure(CMPI)
    .operands(&[one("lhs", &INT_LIKE), one("rhs", &INT_LIKE)])
    .results(&[one("result", &BOOL_LIKE)])
    .props(&[required(
        "predicate",
        PropKind::IntEnum {
            cases: CMPI_PREDICATES,
        },
    )])
    .rules(COMPARISON_RULES)
    .format("$predicate `,` $lhs `,` $rhs attr-dict `:` type($lhs)");

/// `arith.cmpf olt, %a, %b fastmath<fast> : f32`.
const CMPF_OP: OpDef = OpDef::pure(CMPF)
    .operands(&[one("lhs", &FLOAT_LIKE), one("rhs", &FLOAT_LIKE)])
    .results(&[one("result", &BOOL_LIKE)])
    .props(&[
        required(
            "predicate",
            PropKind::IntEnum {
                cases: CMPF_PREDICATES,
            },
        ),
        optional("fastmath", FASTMATH),
    ])
    .rules(COMPARISON_RULES)
    .format("$predicate `,` $lhs `,` $rhs (`fastmath` `` $fastmath^)? attr-dict `:` type($lhs)");

const COMPARISON_RULES: &[TypeRule] = &[
    same_type("lhs", "rhs", "requires all operands to have the same type"),
    TypeRule::Derived {
        from: "lhs",
        to: "result",
        derive: i1_like,
        message: "result type '{to}' must be i1 with the operands' shape",
    },
];

/// `arith.extf %x fastmath<fast> : bf16 to f32` (whether the types fit is `verify_cast`'s).
const CAST_OP: OpDef = OpDef::pure("")
    .operands(&[one("in", &ANY)])
    .results(&[one("out", &ANY)])
    .format("$in attr-dict `:` type($in) `to` type($out)")
    .verify(verify_cast);

/// `arith.truncf %x fastmath<fast> : f32 to bf16`.
const FLOAT_CAST_OP: OpDef = CAST_OP
    .inherent(&["roundingmode"])
    .props(&[optional("fastmath", FASTMATH)])
    .format("$in (`fastmath` `` $fastmath^)? attr-dict `:` type($in) `to` type($out)");

/// `arith.trunci %x overflow<nsw> : i64 to i32`.
const TRUNCI_OP: OpDef = CAST_OP
    .props(&[optional("overflowFlags", OVERFLOW)])
    .format("$in (`overflow` `` $overflowFlags^)? attr-dict `:` type($in) `to` type($out)");

pub fn register(r: &mut Registry) {
    r.register(CONSTANT_OP);
    for &(name, commutative) in FLOAT_BINARY {
        r.register(FLOAT_BINARY_OP.named(name).traits(commutes(commutative)));
    }
    for &(name, commutative, overflow) in INT_BINARY {
        let def = if overflow {
            INT_BINARY_OVERFLOW_OP
        } else {
            INT_BINARY_OP
        };
        r.register(def.named(name).traits(commutes(commutative)));
    }
    // `arith.negf %x : f32` is written like a unary math op.
    r.register(FLOAT_UNARY_OP.named(NEGF));
    r.register(CMPI_OP);
    r.register(CMPF_OP);
    r.register(SELECT_OP);
    for &name in CASTS {
        r.register(
            match name {
                EXTF | TRUNCF => FLOAT_CAST_OP,
                TRUNCI => TRUNCI_OP,
                _ => CAST_OP,
            }
            .named(name),
        );
    }
}

/// Pure, and commutative when `commutative`.
const fn commutes(commutative: bool) -> Traits {
    if commutative {
        Traits::PURE.union(Traits::COMMUTATIVE)
    } else {
        Traits::PURE
    }
}

// ----- builders -----

/// `arith.constant <value>`; the result type is the attribute's type.
pub fn build_constant(m: &mut Module, at: InsertPoint, value: Attribute) -> Value {
    let ty = value.ty().expect("typed constant attribute");
    m.create_result_at(
        OpState::new(CONSTANT).prop("value", value).results(&[ty]),
        at,
    )
}

/// `arith.constant v : index`.
pub fn build_index_constant(m: &mut Module, at: InsertPoint, v: i64) -> Value {
    build_constant(m, at, Attribute::index(v))
}

/// A binary op whose result has the operands' type (`arith.addf`, `arith.muli`, ...).
pub fn build_binary(m: &mut Module, at: InsertPoint, name: &str, lhs: Value, rhs: Value) -> Value {
    let ty = m.value_type(lhs);
    m.create_result_at(OpState::new(name).operands(&[lhs, rhs]).results(&[ty]), at)
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
    m.create_result_at(
        OpState::new(CMPI)
            .operands(&[lhs, rhs])
            .results(&[ty])
            .prop("predicate", Attribute::i64(p as i64)),
        at,
    )
}

/// A cast op (`arith.extf`, `arith.index_cast`, ...) to `to`.
pub fn build_cast(m: &mut Module, at: InsertPoint, name: &str, v: Value, to: Type) -> Value {
    m.create_result_at(OpState::new(name).operands(&[v]).results(&[to]), at)
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
    let cond = m.value_type(m.operand(op, 0));
    let (a, b) = (
        m.value_type(m.operand(op, 1)),
        m.value_type(m.operand(op, 2)),
    );
    let r = m.value_type(m.result(op, 0));
    if a != r || b != r {
        return Err("requires the same type for true value, false value and result".into());
    }
    if cond != Type::I1 && !same_shape(cond, r) {
        return Err("expected condition type to have the same shape as the result type".into());
    }
    Ok(())
}

// ----- casts -----

fn cast_compatible(name: &str, from: Type, to: Type) -> bool {
    let (f, t) = (from.element_type_or_self(), to.element_type_or_self());
    let fw = f.bit_width().unwrap_or(0);
    let tw = t.bit_width().unwrap_or(0);
    let int = |x: Type| x.is_signless_integer();
    match name {
        EXTF => f.is_any_float() && t.is_any_float() && tw > fw,
        TRUNCF => f.is_any_float() && t.is_any_float() && tw < fw,
        EXTSI | EXTUI => int(f) && int(t) && tw > fw,
        TRUNCI => int(f) && int(t) && tw < fw,
        SITOFP | UITOFP => int(f) && t.is_any_float(),
        FPTOSI | FPTOUI => f.is_any_float() && int(t),
        INDEX_CAST | INDEX_CASTUI => (f.is_index() && int(t)) || (int(f) && t.is_index()),
        BITCAST => (int(f) || f.is_any_float()) && (int(t) || t.is_any_float()) && fw == tw,
        _ => false,
    }
}

fn verify_cast(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
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
