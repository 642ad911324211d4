//! The `llvm` dialect ops `lower-tensors` produces: `llvm.getelementptr`, `llvm.load`,
//! `llvm.store`, shared-memory globals (`llvm.mlir.global` in address space 3) and
//! `llvm.mlir.addressof`, `llvm.mlir.constant`, and functions: `llvm.func` (libdevice
//! declarations such as `llvm.func @__nv_tanhf(f32) -> f32`, and definitions),
//! `llvm.return`, direct `llvm.call`.
//!
//! MLIR keeps many defaulted properties on these ops (`ordering = 0 : i64`,
//! `CConv = #llvm.cconv<ccc>`, `unnamed_addr = 0 : i64`, ...); the parsers fill them in so the
//! generic form is MLIR's, and the printers leave them out where MLIR does. An `llvm.func`'s
//! type is MLIR's `!llvm.func<result (inputs)>`, kept as text with LLVM types in their short
//! form (`ptr`, `array<4 x f32>`); [`Signature`] reads and writes it.

use super::{
    attr_list, attr_lists_prop, dense_i32_array, dense_ints, enum_attr, enum_case, expect_results,
    first_type_mismatch, operand_segments, parse_dynamic_index_list, parse_enum_prop,
    print_attr_list, print_dynamic_index_list, print_enum_prop, split_top_level,
    verify_entry_block_args,
};
use crate::Ident;
use crate::attrs::{self, Attribute, DenseValues, NamedAttr};
use crate::diag::DResult;
use crate::dialects::prelude::*;
use crate::lexer::Token;
use crate::module::{BlockId, InsertPoint, Module, OpId, OpState, Value};
use crate::ods::Constraint;
use crate::parser::{Argument, Parser};
use crate::printer::Printer;
use crate::types::{Signedness, Type, TypeKind};
use crate::verifier::VerifyCx;

mod functions;
mod globals;
mod memory;

use functions::*;
use globals::*;
use memory::*;

// The names of the dialect's ops, one constant each: builders and matchers use them, so
// a misspelt op name does not compile, and the registry's test checks each is registered.
pub const CALL: &str = "llvm.call";
pub const FUNC: &str = "llvm.func";
pub const GETELEMENTPTR: &str = "llvm.getelementptr";
pub const LOAD: &str = "llvm.load";
pub const MLIR_ADDRESSOF: &str = "llvm.mlir.addressof";
pub const MLIR_CONSTANT: &str = "llvm.mlir.constant";
pub const MLIR_GLOBAL: &str = "llvm.mlir.global";
pub const RETURN: &str = "llvm.return";
pub const STORE: &str = "llvm.store";

// The ops MLIR's import of LLVM IR makes (`codegen::import`) that the interpreter runs
// and this registry does not declare: they are read and printed in the generic form.
// One constant each, as for the registered ops, and the list `Module::is` accepts.
pub const ADD: &str = "llvm.add";
pub const ALLOCA: &str = "llvm.alloca";
pub const AND: &str = "llvm.and";
pub const ASHR: &str = "llvm.ashr";
pub const ATOMICRMW: &str = "llvm.atomicrmw";
pub const BITCAST: &str = "llvm.bitcast";
pub const BR: &str = "llvm.br";
pub const CALL_INTRINSIC: &str = "llvm.call_intrinsic";
pub const CMPXCHG: &str = "llvm.cmpxchg";
pub const COND_BR: &str = "llvm.cond_br";
pub const EXTRACTELEMENT: &str = "llvm.extractelement";
pub const EXTRACTVALUE: &str = "llvm.extractvalue";
pub const FADD: &str = "llvm.fadd";
pub const FCMP: &str = "llvm.fcmp";
pub const FDIV: &str = "llvm.fdiv";
pub const FMUL: &str = "llvm.fmul";
pub const FNEG: &str = "llvm.fneg";
pub const FPEXT: &str = "llvm.fpext";
pub const FPTOSI: &str = "llvm.fptosi";
pub const FPTOUI: &str = "llvm.fptoui";
pub const FPTRUNC: &str = "llvm.fptrunc";
pub const FREEZE: &str = "llvm.freeze";
pub const FREM: &str = "llvm.frem";
pub const FSUB: &str = "llvm.fsub";
pub const ICMP: &str = "llvm.icmp";
pub const INLINE_ASM: &str = "llvm.inline_asm";
pub const INSERTELEMENT: &str = "llvm.insertelement";
pub const INSERTVALUE: &str = "llvm.insertvalue";
pub const INTR_ABS: &str = "llvm.intr.abs";
pub const INTR_BITREVERSE: &str = "llvm.intr.bitreverse";
pub const INTR_BSWAP: &str = "llvm.intr.bswap";
pub const INTR_ASSUME: &str = "llvm.intr.assume";
pub const INTR_CEIL: &str = "llvm.intr.ceil";
pub const INTR_COPYSIGN: &str = "llvm.intr.copysign";
pub const INTR_CTLZ: &str = "llvm.intr.ctlz";
pub const INTR_CTPOP: &str = "llvm.intr.ctpop";
pub const INTR_CTTZ: &str = "llvm.intr.cttz";
pub const INTR_EXP: &str = "llvm.intr.exp";
pub const INTR_EXP2: &str = "llvm.intr.exp2";
pub const INTR_FABS: &str = "llvm.intr.fabs";
pub const INTR_FLOOR: &str = "llvm.intr.floor";
pub const INTR_FMA: &str = "llvm.intr.fma";
pub const INTR_FMULADD: &str = "llvm.intr.fmuladd";
pub const INTR_FSHL: &str = "llvm.intr.fshl";
pub const INTR_IS_FPCLASS: &str = "llvm.intr.is.fpclass";
pub const INTR_SADD_SAT: &str = "llvm.intr.sadd.sat";
pub const INTR_SSUB_SAT: &str = "llvm.intr.ssub.sat";
pub const INTR_UADD_SAT: &str = "llvm.intr.uadd.sat";
pub const INTR_USUB_SAT: &str = "llvm.intr.usub.sat";
pub const INTR_LIFETIME_END: &str = "llvm.intr.lifetime.end";
pub const INTR_LIFETIME_START: &str = "llvm.intr.lifetime.start";
pub const INTR_LOG: &str = "llvm.intr.log";
pub const INTR_LOG2: &str = "llvm.intr.log2";
pub const INTR_MAXIMUM: &str = "llvm.intr.maximum";
pub const INTR_MAXNUM: &str = "llvm.intr.maxnum";
pub const INTR_MINIMUM: &str = "llvm.intr.minimum";
pub const INTR_MINNUM: &str = "llvm.intr.minnum";
pub const INTR_NEARBYINT: &str = "llvm.intr.nearbyint";
pub const INTR_RINT: &str = "llvm.intr.rint";
pub const INTR_ROUND: &str = "llvm.intr.round";
pub const INTR_ROUNDEVEN: &str = "llvm.intr.roundeven";
pub const INTR_SCMP: &str = "llvm.intr.scmp";
pub const INTR_SMAX: &str = "llvm.intr.smax";
pub const INTR_SMIN: &str = "llvm.intr.smin";
pub const INTR_SQRT: &str = "llvm.intr.sqrt";
pub const INTR_TRUNC: &str = "llvm.intr.trunc";
pub const INTR_UCMP: &str = "llvm.intr.ucmp";
pub const INTR_UMAX: &str = "llvm.intr.umax";
pub const INTR_UMIN: &str = "llvm.intr.umin";
pub const LSHR: &str = "llvm.lshr";
pub const MLIR_POISON: &str = "llvm.mlir.poison";
pub const MLIR_UNDEF: &str = "llvm.mlir.undef";
pub const MUL: &str = "llvm.mul";
pub const OR: &str = "llvm.or";
pub const SDIV: &str = "llvm.sdiv";
pub const SELECT: &str = "llvm.select";
pub const SEXT: &str = "llvm.sext";
pub const SHL: &str = "llvm.shl";
pub const SHUFFLEVECTOR: &str = "llvm.shufflevector";
pub const SITOFP: &str = "llvm.sitofp";
pub const SREM: &str = "llvm.srem";
pub const SUB: &str = "llvm.sub";
pub const SWITCH: &str = "llvm.switch";
pub const TRUNC: &str = "llvm.trunc";
pub const UDIV: &str = "llvm.udiv";
pub const UITOFP: &str = "llvm.uitofp";
pub const UREM: &str = "llvm.urem";
pub const XOR: &str = "llvm.xor";
pub const ZEXT: &str = "llvm.zext";
pub const IMPORTED_OPS: &[&str] = &[
    ADD,
    ALLOCA,
    AND,
    ASHR,
    ATOMICRMW,
    BITCAST,
    BR,
    CALL_INTRINSIC,
    CMPXCHG,
    COND_BR,
    EXTRACTELEMENT,
    EXTRACTVALUE,
    FADD,
    FCMP,
    FDIV,
    FMUL,
    FNEG,
    FPEXT,
    FPTOSI,
    FPTOUI,
    FPTRUNC,
    FREEZE,
    FREM,
    FSUB,
    ICMP,
    INLINE_ASM,
    INSERTELEMENT,
    INSERTVALUE,
    INTR_ABS,
    INTR_BITREVERSE,
    INTR_BSWAP,
    INTR_ASSUME,
    INTR_CEIL,
    INTR_COPYSIGN,
    INTR_CTLZ,
    INTR_CTPOP,
    INTR_CTTZ,
    INTR_EXP,
    INTR_EXP2,
    INTR_FABS,
    INTR_FLOOR,
    INTR_FMA,
    INTR_FMULADD,
    INTR_FSHL,
    INTR_IS_FPCLASS,
    INTR_SADD_SAT,
    INTR_SSUB_SAT,
    INTR_UADD_SAT,
    INTR_USUB_SAT,
    INTR_LIFETIME_END,
    INTR_LIFETIME_START,
    INTR_LOG,
    INTR_LOG2,
    INTR_MAXIMUM,
    INTR_MAXNUM,
    INTR_MINIMUM,
    INTR_MINNUM,
    INTR_NEARBYINT,
    INTR_RINT,
    INTR_ROUND,
    INTR_ROUNDEVEN,
    INTR_SCMP,
    INTR_SMAX,
    INTR_SMIN,
    INTR_SQRT,
    INTR_TRUNC,
    INTR_UCMP,
    INTR_UMAX,
    INTR_UMIN,
    LSHR,
    MLIR_POISON,
    MLIR_UNDEF,
    MUL,
    OR,
    SDIV,
    SELECT,
    SEXT,
    SHL,
    SHUFFLEVECTOR,
    SITOFP,
    SREM,
    SUB,
    SWITCH,
    TRUNC,
    UDIV,
    UITOFP,
    UREM,
    XOR,
    ZEXT,
];

/// `llvm.getelementptr`'s marker for a dynamic index in `rawConstantIndices`.
pub const GEP_DYNAMIC_INDEX: i64 = i32::MIN as i64;

/// The `noWrapFlags` value of `llvm.getelementptr inbounds` (inbounds_flag | nusw).
pub const GEP_INBOUNDS: i64 = 3;

/// LLVM linkages, as MLIR spells them.
pub const LINKAGES: &[&str] = &[
    "private",
    "internal",
    "available_externally",
    "linkonce",
    "weak",
    "common",
    "appending",
    "extern_weak",
    "linkonce_odr",
    "weak_odr",
    "external",
];

/// `visibility_` values: default (printed as nothing), hidden, protected.
const VISIBILITIES: &[&str] = &["", "hidden", "protected"];
/// `unnamed_addr` values: none (printed as nothing), local_unnamed_addr, unnamed_addr.
const UNNAMED_ADDRS: &[&str] = &["", "local_unnamed_addr", "unnamed_addr"];
/// Atomic orderings of loads and stores by their `ordering` value (3 is unused).
const ORDERINGS: &[&str] = &[
    "not_atomic",
    "unordered",
    "monotonic",
    "",
    "acquire",
    "release",
    "acq_rel",
    "seq_cst",
];
/// `llvm.call` tail call kinds (the keyword set MLIR accepts before the callee).
const TAIL_CALL_KINDS: &[&str] = &["none", "tail", "musttail", "notail"];

const LINKAGE: &str = "#llvm.linkage<";
const CCONV: &str = "#llvm.cconv<";
const TAIL_CALL_KIND: &str = "#llvm.tailcallkind<";

/// `!llvm.ptr` in any address space.
const LLVM_PTR: Constraint = Constraint::new("LLVM pointer type", |t| t.ptr_addr_space().is_some());

/// What can be loaded, stored and held in a global.
const SIZED_LLVM_TYPE: Constraint = Constraint::new("LLVM type with size", is_sized_llvm_type);

/// The dialect's ops, declared.
const OPS: &[OpDef] = &[
    OpDef::pure(GETELEMENTPTR)
        .inherent(&["elem_type", "noWrapFlags", "rawConstantIndices"])
        .syntax(print_gep, parse_gep)
        .verify(verify_gep),
    OpDef::new(LOAD)
        .inherent(&[
            "access_groups",
            "alias_scopes",
            "alignment",
            "dereferenceable",
            "invariant",
            "invariantGroup",
            "noalias_scopes",
            "nontemporal",
            "ordering",
            "syncscope",
            "tbaa",
            "volatile_",
        ])
        .operands(&[one("addr", &LLVM_PTR)])
        .results(&[one("res", &SIZED_LLVM_TYPE)])
        .syntax(print_load, parse_load)
        .verify(verify_ordering),
    OpDef::new(STORE)
        .inherent(&[
            "access_groups",
            "alias_scopes",
            "alignment",
            "invariantGroup",
            "noalias_scopes",
            "nontemporal",
            "ordering",
            "syncscope",
            "tbaa",
            "volatile_",
        ])
        .operands(&[one("value", &SIZED_LLVM_TYPE), one("addr", &LLVM_PTR)])
        .results(&[])
        .syntax(print_store, parse_store)
        .verify(verify_ordering),
    OpDef::new(MLIR_GLOBAL)
        .traits(
            Traits::ISOLATED_FROM_ABOVE
                .union(Traits::SYMBOL)
                .union(Traits::SINGLE_BLOCK),
        )
        .inherent(&[
            "addr_space",
            "alignment",
            "comdat",
            "constant",
            "dbg_exprs",
            "dso_local",
            "externally_initialized",
            "global_type",
            "linkage",
            "section",
            "sym_name",
            "target_specific_attrs",
            "thread_local_",
            "unnamed_addr",
            "value",
            "visibility_",
        ])
        .regions(1)
        .operands(&[])
        .results(&[])
        .syntax(print_global, parse_global)
        .verify(verify_global),
    OpDef::pure(MLIR_ADDRESSOF)
        .inherent(&["global_name"])
        .operands(&[])
        .results(&[one("res", &LLVM_PTR)])
        .syntax(print_addressof, parse_addressof)
        .verify(verify_addressof),
    OpDef::new(MLIR_CONSTANT)
        .traits(Traits::PURE.union(Traits::CONSTANT_LIKE))
        .inherent(&["value"])
        .operands(&[])
        .results(&[one("res", &ANY)])
        .syntax(print_constant, parse_constant)
        .verify(verify_constant),
    OpDef::new(FUNC)
        .traits(Traits::ISOLATED_FROM_ABOVE.union(Traits::SYMBOL))
        .inherent(FUNC_PROPS)
        .regions(1)
        .operands(&[])
        .results(&[])
        .syntax(print_func, parse_func)
        .verify(verify_func),
    super::RETURN_LIKE.named(RETURN).verify(verify_return),
    OpDef::new(CALL)
        .inherent(&[
            "CConv",
            "TailCallKind",
            "access_groups",
            "alias_scopes",
            "always_inline",
            "arg_attrs",
            "callee",
            "convergent",
            "fastmathFlags",
            "inline_hint",
            "memory_effects",
            "no_inline",
            "no_unwind",
            "noalias_scopes",
            "op_bundle_sizes",
            "op_bundle_tags",
            "res_attrs",
            "tbaa",
            "var_callee_type",
            "will_return",
            "operandSegmentSizes",
        ])
        .syntax(print_call, parse_call)
        .verify(verify_call),
];

pub fn register(r: &mut Registry) {
    r.register_all(OPS);
    r.declare_generic(IMPORTED_OPS);
}

/// The properties of `llvm.func` (MLIR 22's `LLVMFuncOp::getAttributeNames`).
const FUNC_PROPS: &[&str] = &[
    "CConv",
    "alignment",
    "always_inline",
    "arg_attrs",
    "arm_in_za",
    "arm_inout_za",
    "arm_locally_streaming",
    "arm_new_za",
    "arm_out_za",
    "arm_preserves_za",
    "arm_streaming",
    "arm_streaming_compatible",
    "comdat",
    "convergent",
    "denormal_fp_math",
    "denormal_fp_math_f32",
    "dso_local",
    "fp_contract",
    "frame_pointer",
    "function_entry_count",
    "function_type",
    "garbageCollector",
    "inline_hint",
    "instrument_function_entry",
    "instrument_function_exit",
    "intel_reqd_sub_group_size",
    "linkage",
    "memory_effects",
    "no_infs_fp_math",
    "no_inline",
    "no_nans_fp_math",
    "no_signed_zeros_fp_math",
    "no_unwind",
    "optimize_none",
    "passthrough",
    "personality",
    "prefer_vector_width",
    "reciprocal_estimates",
    "reqd_work_group_size",
    "res_attrs",
    "section",
    "sym_name",
    "sym_visibility",
    "target_cpu",
    "target_features",
    "tune_cpu",
    "unnamed_addr",
    "uwtable_kind",
    "vec_type_hint",
    "visibility_",
    "vscale_range",
    "will_return",
    "work_group_size_hint",
];

// ----- types -----

/// Types the LLVM dialect accepts: signless integers, floats, pointers, vectors of them and
/// the dialect's own types (`!llvm.array<..>`, `!llvm.struct<..>`).
pub fn is_llvm_type(t: Type) -> bool {
    match t.kind() {
        TypeKind::Int { signedness, .. } => *signedness == Signedness::Signless,
        TypeKind::Float(_) | TypeKind::LlvmPtr { .. } => true,
        TypeKind::Vector { elem, .. } => is_llvm_type(*elem),
        TypeKind::Opaque(text) => text.starts_with("!llvm."),
        _ => false,
    }
}

/// LLVM types with a size (what can be loaded, stored and held in a global).
pub fn is_sized_llvm_type(t: Type) -> bool {
    const UNSIZED: &[&str] = &["!llvm.void", "!llvm.func", "!llvm.token", "!llvm.label"];
    is_llvm_type(t) && !UNSIZED.iter().any(|u| t.to_string().starts_with(u))
}

/// Keywords of LLVM dialect types written without `!llvm.` inside other LLVM types.
const SHORT_TYPES: &[&str] = &[
    "void",
    "ptr",
    "vec",
    "array",
    "func",
    "struct",
    "target",
    "token",
    "label",
    "metadata",
    "x86_amx",
    "ppc_fp128",
];

/// `t` as written inside an LLVM type (`ptr<3>` for `!llvm.ptr<3>`).
fn short_type(t: Type) -> String {
    let text = t.to_string();
    match text.strip_prefix("!llvm.") {
        Some(short) => short.to_owned(),
        None => text,
    }
}

/// Reads a type written inside an LLVM type.
fn full_type(text: &str) -> Option<Type> {
    let word_end = text
        .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .unwrap_or(text.len());
    let full = if SHORT_TYPES.contains(&&text[..word_end]) {
        format!("!llvm.{text}")
    } else {
        text.to_owned()
    };
    crate::parser::parse_type(&full).ok()
}

/// An `llvm.func` signature: MLIR's `!llvm.func<result (inputs, ...)>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    pub inputs: Vec<Type>,
    /// `None` for `void`.
    pub result: Option<Type>,
    pub variadic: bool,
}

impl Signature {
    /// Reads an `!llvm.func<...>` type.
    pub fn from_type(t: Type) -> Option<Signature> {
        let TypeKind::Opaque(text) = t.kind() else {
            return None;
        };
        let body = text.strip_prefix("!llvm.func<")?.strip_suffix('>')?;
        let open = top_level_paren(body)?;
        let result = body[..open].trim();
        let args = body[open..].trim().strip_prefix('(')?.strip_suffix(')')?;
        let mut parts = split_top_level(args);
        let variadic = parts.last() == Some(&"...");
        if variadic {
            parts.pop();
        }
        let inputs = parts.into_iter().map(full_type).collect::<Option<_>>()?;
        let result = match result {
            "void" => None,
            r => Some(full_type(r)?),
        };
        Some(Signature {
            inputs,
            result,
            variadic,
        })
    }

    /// The `!llvm.func<...>` type.
    pub fn to_type(&self) -> Type {
        let mut args: Vec<String> = self.inputs.iter().map(|&t| short_type(t)).collect();
        if self.variadic {
            args.push("...".into());
        }
        let result = self.result.map_or("void".into(), short_type);
        Type::opaque(&format!("!llvm.func<{result} ({})>", args.join(", ")))
    }

    /// The signature of an `llvm.func` op.
    pub fn of(m: &Module, func: OpId) -> Option<Signature> {
        Signature::from_type(m.prop(func, "function_type")?.as_type()?)
    }
}

/// The byte offset of the first `(` outside `<...>` (where a signature's inputs start).
fn top_level_paren(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            '(' if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

// ----- builders -----

/// An index of `llvm.getelementptr`: a constant (i32) or a value of a signless integer type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GepIndex {
    Const(i32),
    Value(Value),
}

/// `llvm.getelementptr [inbounds] %base[indices] : (...) -> ptr, elem_type`; the result is a
/// pointer in the base's address space.
pub fn build_gep(
    m: &mut Module,
    at: InsertPoint,
    base: Value,
    indices: &[GepIndex],
    elem_type: Type,
    inbounds: bool,
) -> Value {
    let mut operands = vec![base];
    let raw: Vec<i64> = indices
        .iter()
        .map(|i| match *i {
            GepIndex::Const(c) => c.into(),
            GepIndex::Value(v) => {
                operands.push(v);
                GEP_DYNAMIC_INDEX
            }
        })
        .collect();
    let flags = if inbounds { GEP_INBOUNDS } else { 0 };
    let ty = m.value_type(base);
    m.create_result_at(
        OpState::new(GETELEMENTPTR)
            .operands(&operands)
            .prop("elem_type", Attribute::Type(elem_type))
            .prop("noWrapFlags", Attribute::i32(flags as i32))
            .prop("rawConstantIndices", dense_i32_array(&raw))
            .results(&[ty]),
        at,
    )
}

/// `llvm.load %ptr [invariant] : !llvm.ptr -> ty`. Set `alignment` on the op for vectors.
pub fn build_load(m: &mut Module, at: InsertPoint, ptr: Value, ty: Type, invariant: bool) -> Value {
    let mut state = OpState::new(LOAD)
        .operands(&[ptr])
        .prop("ordering", Attribute::i64(0))
        .results(&[ty]);
    if invariant {
        state = state.prop("invariant", Attribute::Unit);
    }
    m.create_result_at(state, at)
}

/// `llvm.store %value, %ptr`.
pub fn build_store(m: &mut Module, at: InsertPoint, value: Value, ptr: Value) -> OpId {
    m.create_op_at(
        OpState::new(STORE)
            .operands(&[value, ptr])
            .prop("ordering", Attribute::i64(0)),
        at,
    )
}

/// LLVM's `AtomicBinOp`, numbered as MLIR stores it in `llvm.atomicrmw`'s `bin_op`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicBinOp {
    Xchg = 0,
    Add = 1,
    And = 3,
    Or = 5,
    Xor = 6,
    Max = 7,
    Min = 8,
    UMax = 9,
    UMin = 10,
    FAdd = 11,
}

/// `monotonic` in LLVM's `AtomicOrdering` numbering (the `ordering` properties): atomic,
/// with no order imposed on other memory accesses.
pub const MONOTONIC: i64 = 2;

/// `unordered`: atomic (never torn, never invented by the optimizer), and no more.
pub const UNORDERED: i64 = 1;

/// `llvm.atomicrmw <bin_op> %ptr, %value monotonic`: the value the memory held.
pub fn build_atomic_rmw(
    m: &mut Module,
    at: InsertPoint,
    bin_op: AtomicBinOp,
    ptr: Value,
    value: Value,
) -> Value {
    let ty = m.value_type(value);
    m.create_result_at(
        OpState::new(ATOMICRMW)
            .operands(&[ptr, value])
            .prop("bin_op", Attribute::i64(bin_op as i64))
            .prop("ordering", Attribute::i64(MONOTONIC))
            .results(&[ty]),
        at,
    )
}

/// `llvm.cmpxchg %ptr, %cmp, %new monotonic monotonic`: `!llvm.struct<(T, i1)>`, the value
/// the memory held and whether it equalled `cmp` (and `new` was stored).
pub fn build_cmpxchg(m: &mut Module, at: InsertPoint, ptr: Value, cmp: Value, new: Value) -> Value {
    let ty = m.value_type(cmp);
    let result = Type::opaque(&format!("!llvm.struct<({ty}, i1)>"));
    m.create_result_at(
        OpState::new(CMPXCHG)
            .operands(&[ptr, cmp, new])
            .prop("failure_ordering", Attribute::i64(MONOTONIC))
            .prop("success_ordering", Attribute::i64(MONOTONIC))
            .results(&[result]),
        at,
    )
}

/// `llvm.call_intrinsic "name"(operands) : (..) -> result`: an LLVM intrinsic that MLIR has
/// no op for (in generic form, as MLIR's LLVM IR import writes it). MLIR's translation
/// declares the intrinsic; the interpreter knows the ones the emitters use.
pub fn build_call_intrinsic(
    m: &mut Module,
    at: InsertPoint,
    name: &str,
    operands: &[Value],
    result: Type,
) -> Value {
    m.create_result_at(
        OpState::new(CALL_INTRINSIC)
            .operands(operands)
            .prop("intrin", Attribute::string(name))
            .prop("op_bundle_sizes", super::dense_i32_array(&[]))
            .prop(
                "operandSegmentSizes",
                super::dense_i32_array(&[operands.len() as i64, 0]),
            )
            .results(&[result]),
        at,
    )
}

/// `llvm.inline_asm "asm", "constraints" operands : (..) -> result`, without side effects
/// (LLVM may move, merge or drop it like any pure call).
pub fn build_inline_asm(
    m: &mut Module,
    at: InsertPoint,
    asm: &str,
    constraints: &str,
    operands: &[Value],
    result: Type,
) -> Value {
    m.create_result_at(
        OpState::new(INLINE_ASM)
            .operands(operands)
            .prop("asm_string", Attribute::string(asm))
            .prop("constraints", Attribute::string(constraints))
            .results(&[result]),
        at,
    )
}

/// `llvm.extractvalue %container[position] : ty`.
pub fn build_extract_value(
    m: &mut Module,
    at: InsertPoint,
    container: Value,
    position: i64,
    ty: Type,
) -> Value {
    m.create_result_at(
        OpState::new(EXTRACTVALUE)
            .operands(&[container])
            .prop(
                "position",
                Attribute::DenseArray {
                    elem: Type::I64,
                    values: vec![attrs::Scalar::Int(position.into())],
                },
            )
            .results(&[ty]),
        at,
    )
}

/// `llvm.mlir.global <linkage> @name(value) {addr_space = N : i32} : ty` without an
/// initializer region (shared memory: `internal`, address space 3, no value).
pub fn build_global(
    m: &mut Module,
    at: InsertPoint,
    name: &str,
    ty: Type,
    linkage: &str,
    addr_space: u32,
    value: Option<Attribute>,
) -> OpId {
    assert!(LINKAGES.contains(&linkage), "llvm linkage '{linkage}'");
    let region = m.create_region();
    let mut state = OpState::new(MLIR_GLOBAL)
        .prop("sym_name", Attribute::string(name))
        .prop("global_type", Attribute::Type(ty))
        .prop("linkage", enum_attr(LINKAGE, linkage))
        .prop("addr_space", Attribute::i32(addr_space as i32))
        .prop("unnamed_addr", Attribute::i64(0))
        .prop("visibility_", Attribute::i64(0))
        .region(region);
    if let Some(v) = value {
        state = state.prop("value", v);
    }
    m.create_op_at(state, at)
}

/// `llvm.mlir.addressof @name : ptr_ty`.
pub fn build_addressof(m: &mut Module, at: InsertPoint, name: &str, ptr_ty: Type) -> Value {
    m.create_result_at(
        OpState::new(MLIR_ADDRESSOF)
            .prop("global_name", Attribute::symbol(name))
            .results(&[ptr_ty]),
        at,
    )
}

/// `llvm.mlir.constant(value) : ty`.
pub fn build_constant(m: &mut Module, at: InsertPoint, value: Attribute, ty: Type) -> Value {
    m.create_result_at(
        OpState::new(MLIR_CONSTANT)
            .prop("value", value)
            .results(&[ty]),
        at,
    )
}

/// The properties every `llvm.func` has (external linkage, C calling convention).
fn func_state(name: &str, signature: &Signature, region: crate::RegionId) -> OpState {
    OpState::new(FUNC)
        .prop("sym_name", Attribute::string(name))
        .prop("function_type", Attribute::Type(signature.to_type()))
        .prop("CConv", enum_attr(CCONV, "ccc"))
        .prop("linkage", enum_attr(LINKAGE, "external"))
        .prop("unnamed_addr", Attribute::i64(0))
        .prop("visibility_", Attribute::i64(0))
        .region(region)
}

/// A declaration `llvm.func @name(inputs) -> result` (not inserted), as for libdevice.
pub fn build_func_decl(m: &mut Module, name: &str, signature: &Signature) -> OpId {
    let region = m.create_region();
    m.create_op(func_state(name, signature, region))
}

/// A definition `llvm.func @name(...) { }` with an empty entry block (not inserted); returns
/// the op and the entry block.
pub fn build_func(m: &mut Module, name: &str, signature: &Signature) -> (OpId, BlockId) {
    let (region, block) = m.create_region_with_block(&signature.inputs);
    (m.create_op(func_state(name, signature, region)), block)
}

/// `llvm.return [%value]`.
pub fn build_return(m: &mut Module, at: InsertPoint, value: Option<Value>) -> OpId {
    let operands: Vec<Value> = value.into_iter().collect();
    m.create_op_at(OpState::new(RETURN).operands(&operands), at)
}

/// `llvm.call @callee(args) : (...) -> result`.
pub fn build_call(
    m: &mut Module,
    at: InsertPoint,
    callee: &str,
    args: &[Value],
    result: Option<Type>,
) -> OpId {
    let results: Vec<Type> = result.into_iter().collect();
    m.create_op_at(
        super::call_state(CALL, callee, args, &results)
            .prop("CConv", enum_attr(CCONV, "ccc"))
            .prop("TailCallKind", enum_attr(TAIL_CALL_KIND, "none"))
            .prop(
                "fastmathFlags",
                Attribute::Opaque("#llvm.fastmath<none>".into()),
            )
            .prop("op_bundle_sizes", dense_i32_array(&[]))
            .prop(
                "operandSegmentSizes",
                dense_i32_array(&[args.len() as i64, 0]),
            ),
        at,
    )
}

// ----- shared checks and syntax -----

fn set_prop(state: &mut OpState, name: &str, value: Attribute) {
    attrs::set_named(&mut state.props, Ident::new(name), value);
}

/// Parses one of `cases` into the integer property `prop` (its position), if one is next.
fn parse_int_enum(p: &mut Parser<'_>, state: &mut OpState, prop: &str, cases: &[&str]) {
    let found = cases
        .iter()
        .position(|c| !c.is_empty() && p.parse_optional_keyword(c));
    if let Some(i) = found {
        set_prop(state, prop, Attribute::i64(i as i64));
    }
}

/// Writes `case ` for the integer enum property `prop` unless it is the default (empty).
fn print_int_enum(p: &mut Printer<'_>, op: OpId, prop: &str, cases: &[&str]) {
    let value = p.module().prop(op, prop).and_then(Attribute::as_i64);
    let case = value.and_then(|v| cases.get(usize::try_from(v).ok()?));
    if let Some(case) = case.filter(|c| !c.is_empty()) {
        p.write(case);
        p.write(" ");
    }
}

/// Checks that the integer enum property `prop` is a valid case.
fn check_int_enum(m: &Module, op: OpId, prop: &str, cases: &[&str]) -> Result<(), String> {
    match m.prop(op, prop).map(Attribute::as_i64) {
        None => Ok(()),
        Some(Some(v)) if usize::try_from(v).is_ok_and(|v| v < cases.len()) => Ok(()),
        Some(_) => Err(format!("attribute '{prop}' has an invalid value")),
    }
}

/// Checks that the enum property `prop` (`{open}case>`) is one of `cases` (any case when
/// `cases` is empty: calling conventions are not listed here).
fn check_enum(m: &Module, op: OpId, prop: &str, open: &str, cases: &[&str]) -> Result<(), String> {
    match enum_case(m.prop(op, prop), open) {
        Some(c) if cases.is_empty() || cases.contains(&c) => Ok(()),
        _ => Err(format!("requires a valid '{prop}' attribute")),
    }
}

/// ` atomic [syncscope("s")] <ordering>` of an atomic load or store.
fn print_atomic(p: &mut Printer<'_>, op: OpId) {
    let m = p.module();
    let Some(name) = ordering(m, op).filter(|&o| o != "not_atomic") else {
        return;
    };
    p.write(" atomic");
    if let Some(scope) = m.prop(op, "syncscope") {
        p.write(" syncscope(");
        p.attr(scope);
        p.write(")");
    }
    p.write(" ");
    p.write(name);
}

fn parse_atomic(p: &mut Parser<'_>, state: &mut OpState) -> DResult<()> {
    let mut ordering = 0;
    if p.parse_optional_keyword("atomic") {
        if p.parse_optional_keyword("syncscope") {
            p.parse_punct(b'(')?;
            let scope = p.parse_string()?;
            p.parse_punct(b')')?;
            set_prop(state, "syncscope", Attribute::String(scope));
        }
        let loc = p.loc();
        let name = p.parse_any_keyword()?;
        let Some(o) = ORDERINGS.iter().position(|&o| !o.is_empty() && o == name) else {
            return Err(p.error_at(loc, format!("invalid atomic ordering '{name}'")));
        };
        ordering = o;
    }
    set_prop(state, "ordering", Attribute::i64(ordering as i64));
    Ok(())
}

/// The atomic ordering of a load or store (`not_atomic` when the property is absent).
fn ordering(m: &Module, op: OpId) -> Option<&'static str> {
    let value = m.prop(op, "ordering").map_or(Some(0), Attribute::as_i64)?;
    let name = ORDERINGS.get(usize::try_from(value).ok()?)?;
    (!name.is_empty()).then_some(*name)
}

/// What `llvm.load` and `llvm.store` check beyond their declarations: a valid atomic
/// ordering.
fn verify_ordering(cx: &VerifyCx<'_>, op: OpId) -> Result<(), String> {
    match ordering(cx.module, op) {
        Some(_) => Ok(()),
        None => Err("requires a valid 'ordering' attribute".into()),
    }
}

/// `[linkage] [visibility]`, the keywords a function's and a global's names start with.
fn parse_linkage_and_visibility(p: &mut Parser<'_>, state: &mut OpState) {
    let linkage = LINKAGES
        .iter()
        .find(|&&l| p.parse_optional_keyword(l))
        .unwrap_or(&"external");
    set_prop(state, "linkage", enum_attr(LINKAGE, linkage));
    set_prop(state, "visibility_", Attribute::i64(0));
    parse_int_enum(p, state, "visibility_", VISIBILITIES);
}

/// Writes ` keyword` for a unit property that is set.
fn print_flag(p: &mut Printer<'_>, op: OpId, prop: &str, keyword: &str) {
    if p.module().prop(op, prop).is_some() {
        p.write(" ");
        p.write(keyword);
    }
}

fn parse_flag(p: &mut Parser<'_>, state: &mut OpState, keyword: &str, prop: &str) {
    if p.parse_optional_keyword(keyword) {
        set_prop(state, prop, Attribute::Unit);
    }
}
