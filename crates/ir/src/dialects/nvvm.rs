//! The `nvvm` dialect ops of lowered kernels: special register reads
//! (`nvvm.read.ptx.sreg.tid.x : i32`, with an optional `range <i32, 0, 128>`),
//! `nvvm.barrier0` and `nvvm.shfl.sync`.
//!
//! MLIR 22 has both `nvvm.barrier0` and the general `nvvm.barrier` (barrier id, thread
//! count, reductions); `gpu.barrier` lowers to `nvvm.barrier0`, the one defined here.
//! `nvvm.shfl.sync` names its modes `bfly`, `up`, `down`, `idx` (`gpu.shuffle` says `xor`
//! for `bfly`) and, like the gpu ops, prints its mode after two spaces.

use super::llvm::is_llvm_type;
use super::{enum_attr, split_top_level};
use crate::Ident;
use crate::attrs::{self, Attribute};
use crate::diag::DResult;
use crate::dialects::prelude::*;
use crate::module::{InsertPoint, Module, OpId, OpState, Value};
use crate::ods::Constraint;
use crate::parser::Parser;
use crate::printer::Printer;
use crate::types::Type;
use crate::verifier::VerifyCx;

// The names of the dialect's ops, one constant each: builders and matchers use them, so
// a misspelt op name does not compile, and the registry's test checks each is registered.
pub const BARRIER0: &str = "nvvm.barrier0";
pub const READ_PTX_SREG_CTAID_X: &str = "nvvm.read.ptx.sreg.ctaid.x";
pub const READ_PTX_SREG_CTAID_Y: &str = "nvvm.read.ptx.sreg.ctaid.y";
pub const READ_PTX_SREG_CTAID_Z: &str = "nvvm.read.ptx.sreg.ctaid.z";
pub const READ_PTX_SREG_LANEID: &str = "nvvm.read.ptx.sreg.laneid";
pub const READ_PTX_SREG_NCTAID_X: &str = "nvvm.read.ptx.sreg.nctaid.x";
pub const READ_PTX_SREG_NCTAID_Y: &str = "nvvm.read.ptx.sreg.nctaid.y";
pub const READ_PTX_SREG_NCTAID_Z: &str = "nvvm.read.ptx.sreg.nctaid.z";
pub const READ_PTX_SREG_NTID_X: &str = "nvvm.read.ptx.sreg.ntid.x";
pub const READ_PTX_SREG_NTID_Y: &str = "nvvm.read.ptx.sreg.ntid.y";
pub const READ_PTX_SREG_NTID_Z: &str = "nvvm.read.ptx.sreg.ntid.z";
pub const READ_PTX_SREG_TID_X: &str = "nvvm.read.ptx.sreg.tid.x";
pub const READ_PTX_SREG_TID_Y: &str = "nvvm.read.ptx.sreg.tid.y";
pub const READ_PTX_SREG_TID_Z: &str = "nvvm.read.ptx.sreg.tid.z";
pub const READ_PTX_SREG_WARPSIZE: &str = "nvvm.read.ptx.sreg.warpsize";
pub const SHFL_SYNC: &str = "nvvm.shfl.sync";

/// The special register reads defined here (thread, block and grid ids and sizes, lane id,
/// warp size).
pub const SREGS: &[&str] = &[
    READ_PTX_SREG_TID_X,
    READ_PTX_SREG_TID_Y,
    READ_PTX_SREG_TID_Z,
    READ_PTX_SREG_NTID_X,
    READ_PTX_SREG_NTID_Y,
    READ_PTX_SREG_NTID_Z,
    READ_PTX_SREG_CTAID_X,
    READ_PTX_SREG_CTAID_Y,
    READ_PTX_SREG_CTAID_Z,
    READ_PTX_SREG_NCTAID_X,
    READ_PTX_SREG_NCTAID_Y,
    READ_PTX_SREG_NCTAID_Z,
    READ_PTX_SREG_LANEID,
    READ_PTX_SREG_WARPSIZE,
];

/// The `nvvm.shfl.sync` kinds.
pub const SHFL_KINDS: &[&str] = &["bfly", "up", "down", "idx"];

/// Text before the case of a shuffle kind attribute (`#nvvm<shfl_kind bfly>`).
const SHFL_KIND: &str = "#nvvm<shfl_kind ";
/// Text before an LLVM constant range (`#llvm.constant_range<i32, 0, 128>`).
const RANGE: &str = "#llvm.constant_range<";

/// `i32` or `f32`: what `nvvm.shfl.sync` moves.
const I32_OR_F32: Constraint = Constraint::new("32-bit signless integer or 32-bit float", |t| {
    t == Type::I32 || t == Type::F32
});

/// `nvvm.read.ptx.sreg.tid.x range <i32, 0, 128> : i32`.
const SREG: OpDef = OpDef::pure("")
    .inherent(&["range"])
    .operands(&[])
    .results(&[one("res", &LLVM_TYPE)])
    .syntax(print_sreg, parse_sreg)
    .verify(verify_sreg);

/// Any type the LLVM dialect can hold.
const LLVM_TYPE: Constraint = Constraint::new("LLVM dialect-compatible type", is_llvm_type);

/// `nvvm.barrier0`.
const BARRIER0_OP: OpDef = OpDef::new(BARRIER0)
    .operands(&[])
    .results(&[])
    .format("attr-dict");

/// `nvvm.shfl.sync  bfly %mask, %v, %offset, %clamp : f32 -> f32` (the result type is
/// `verify_shfl`'s: the value's, or a struct with a validity bit).
const SHFL_SYNC_OP: OpDef = OpDef::new(SHFL_SYNC)
    .inherent(&["return_value_and_is_valid"])
    .operands(&[
        one("thread_mask", &I32),
        one("val", &I32_OR_F32),
        one("offset", &I32),
        one("mask_and_clamp", &I32),
    ])
    .results(&[one("res", &ANY)])
    .props(&[required(
        "kind",
        PropKind::EnumCase {
            open: SHFL_KIND,
            cases: SHFL_KINDS,
            cpp_name: "::mlir::NVVM::ShflKind",
        },
    )])
    .format(
        "$kind $thread_mask `,` $val `,` $offset `,` $mask_and_clamp attr-dict `:` type($val) `->` type($res)",
    )
    .verify(verify_shfl);

pub fn register(r: &mut Registry) {
    for &name in SREGS {
        r.register(SREG.named(name));
    }
    r.register(BARRIER0_OP);
    r.register(SHFL_SYNC_OP);
}

// ----- builders -----

/// `name : i32` for one of [`SREGS`], with `range <i32, lo, hi>` (values in `[lo, hi)`) when
/// given.
pub fn build_sreg(m: &mut Module, at: InsertPoint, name: &str, range: Option<(i64, i64)>) -> Value {
    assert!(SREGS.contains(&name), "nvvm special register '{name}'");
    let mut state = OpState::new(name).results(&[Type::I32]);
    if let Some((lo, hi)) = range {
        state = state.prop("range", range_attr(32, lo.into(), hi.into()));
    }
    m.create_result_at(state, at)
}

/// `nvvm.barrier0`.
pub fn build_barrier0(m: &mut Module, at: InsertPoint) -> OpId {
    m.create_op_at(OpState::new(BARRIER0), at)
}

/// `nvvm.shfl.sync  <kind> %mask, %value, %offset, %clamp : t -> t`.
pub fn build_shfl_sync(
    m: &mut Module,
    at: InsertPoint,
    kind: &str,
    [mask, value, offset, clamp]: [Value; 4],
) -> Value {
    assert!(SHFL_KINDS.contains(&kind), "nvvm.shfl.sync kind '{kind}'");
    let ty = m.value_type(value);
    m.create_result_at(
        OpState::new(SHFL_SYNC)
            .operands(&[mask, value, offset, clamp])
            .prop("kind", enum_attr(SHFL_KIND, kind))
            .results(&[ty]),
        at,
    )
}

// ----- constant ranges -----

/// `#llvm.constant_range<iW, lo, hi>` with the bounds as signed `W`-bit values, as MLIR
/// prints them.
fn range_attr(width: u32, lo: i128, hi: i128) -> Attribute {
    let ty = Type::int(width);
    let (lo, hi) = (attrs::normalize_int(lo, ty), attrs::normalize_int(hi, ty));
    Attribute::Opaque(format!("{RANGE}{ty}, {lo}, {hi}>"))
}

/// The width and bounds (`[lo, hi)`) of a constant range attribute.
pub fn range_parts(attr: &Attribute) -> Option<(u32, i128, i128)> {
    let Attribute::Opaque(text) = attr else {
        return None;
    };
    let body = text.strip_prefix(RANGE)?.strip_suffix('>')?;
    let [ty, lo, hi] = split_top_level(body)[..] else {
        return None;
    };
    let width = ty.strip_prefix('i')?.parse().ok()?;
    Some((width, lo.parse().ok()?, hi.parse().ok()?))
}

// ----- special registers -----

fn verify_sreg(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let Some(range) = m.prop(op, "range") else {
        return Ok(());
    };
    let Some((width, lo, hi)) = range_parts(range) else {
        return Err("attribute 'range' failed to satisfy constraint: LLVM constant range".into());
    };
    // LLVM's ConstantRange: equal bounds mean the full or the empty set, written min or max.
    if lo == hi && lo != 0 && lo != -1 {
        let max = (1u128 << width.min(127)) - 1;
        return Err(format!(
            "invalid range attribute: Lower == Upper, but they aren't min (0) or max ({max}) value! This is an invalid constant range."
        ));
    }
    Ok(())
}

/// ` range <i32, 0, 128> {attrs} : i32`
fn print_sreg(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    if let Some((width, lo, hi)) = m.prop(op, "range").and_then(range_parts) {
        p.write(&format!(" range <i{width}, {lo}, {hi}>"));
    }
    p.attr_dict(op, &["range"]);
    p.write(" : ");
    p.ty(m.value_type(m.result(op, 0)));
}

fn parse_sreg(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    if p.parse_optional_keyword("range") {
        p.parse_punct(b'<')?;
        let loc = p.loc();
        let ty = p.parse_type()?;
        let Some(width) = ty.int_width().filter(|_| ty.is_signless_integer()) else {
            return Err(p.error_at(loc, format!("expected an integer type, but got '{ty}'")));
        };
        p.parse_punct(b',')?;
        let lo = p.parse_integer()?;
        p.parse_punct(b',')?;
        let hi = p.parse_integer()?;
        p.parse_punct(b'>')?;
        let range = range_attr(width, lo, hi);
        attrs::set_named(&mut state.props, Ident::new("range"), range);
    }
    p.parse_optional_attr_dict(&mut state.attrs)?;
    let ty = p.parse_colon_type()?;
    state.result_types.push(ty);
    Ok(())
}

// ----- nvvm.shfl.sync -----

fn verify_shfl(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    let m = cx.module;
    let value = m.value_type(m.operand(op, 1));
    let r = m.value_type(m.result(op, 0));
    if m.prop(op, "return_value_and_is_valid").is_some() {
        if r != Type::opaque(&format!("!llvm.struct<({value}, i1)>")) {
            return Err("expected return type to be a two-element struct".into());
        }
    } else if r != value {
        return Err(format!(
            "expected return type to be of type '{value}' but got '{r}' instead"
        ));
    }
    Ok(())
}
