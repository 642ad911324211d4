//! `lower-to-llvm`: hands the module to real MLIR and takes back the
//! `llvm`/`nvvm`-dialect result.
//!
//! Before the hand-off, four things MLIR's conversions do not do for us:
//!
//! * `xla_gpu.pure_call`s left by `inline` become `func.call`s.
//! * Kernels are marked: every public function with a body gets `gpu.kernel`, which
//!   `codegen` turns into `nvvm.kernel` (a PTX `.entry`) at translation.
//! * Transcendental `math` ops on scalars become calls to libdevice (`__nv_tanhf`, ...), the
//!   way XLA and the seed lower them; the PTX stage links libdevice. bf16/f16 operands are
//!   extended to f32 around the call. Ops NVPTX implements natively (`sqrt`, `floor`,
//!   `absf`, `fma`, ...) are left to MLIR's math-to-llvm conversion.
//! * The index bitwidth is chosen: 32 bits when every tensor, vector and kernel buffer
//!   (`llvm.dereferenceable` bytes) is smaller than 2^31 elements (offsets then fit; 32-bit index math is what XLA emits and is
//!   cheaper on the GPU) and no vector is indexed at a runtime position, 64 bits otherwise.
//!
//! * `gpu.shuffle` becomes `nvvm.shfl.sync` with the operands MLIR's gpu-to-nvvm lowering
//!   gives it (mask `-1 >> (32 - width)`, clamp `width - 1`, or `32 - width` for `up`):
//!   that lowering only runs inside a `gpu.module`, which our kernels are not. The valid
//!   flag is not produced; a shuffle whose flag is used is refused.
//!
//! MLIR then runs its upstream conversions ([`pipeline`]); the result is printed in generic
//! form, which our parser reads for every op, registered or not.

use ir::dialects::gpu;
use ir::dialects::math;
use ir::dialects::xla_gpu;
use ir::dialects::{arith, func, vector};
use ir::{Attribute, Diagnostic, InsertPoint, Module, OpId, OpState, Type, TypeKind, Value};

use crate::pass::{Pass, op_error};

pub struct LowerToLlvm;

impl Pass for LowerToLlvm {
    crate::pass_names!(
        "lower-to-llvm",
        "Lower to the llvm/nvvm dialects with MLIR's upstream conversions (libdevice calls for transcendentals)"
    );

    fn run(&self, m: &mut Module) -> Result<(), Diagnostic> {
        refuse_unlowerable(m)?;
        mark_kernels(m);
        pure_calls_to_calls(m);
        math_to_libdevice(m)?;
        shuffles_to_nvvm(m)?;
        let text = m.print_generic();
        let lowered = codegen::mlir::run_pipeline_generic(&text, &pipeline(index_bitwidth(m)))
            .map_err(|e| Diagnostic::new(m.file.clone(), m.loc(m.top()), e.to_string()))?;
        *m = ir::parse_module_with(&lowered, &m.file, m.registry().clone())?;
        Ok(())
    }
}

/// MLIR's conversions to the llvm dialect, in dependency order: structured control flow and
/// vectors first, then scalars, control flow, functions; NVVM's inline-PTX ops last, when
/// everything around them is already llvm (run first, its conversion driver folds the
/// still-unconverted arith ops one by one and chases their replacement chains: quadratic,
/// 8 s for a 16,000-op chain); unrealized casts must all cancel.
pub fn pipeline(index_bitwidth: u32) -> String {
    let bits = format!("index-bitwidth={index_bitwidth}");
    format!(
        "builtin.module(convert-scf-to-cf, convert-vector-to-llvm, \
         convert-arith-to-llvm{{{bits}}}, convert-math-to-llvm, \
         convert-index-to-llvm{{{bits}}}, convert-cf-to-llvm{{{bits}}}, \
         convert-func-to-llvm{{{bits} use-bare-ptr-memref-call-conv=1}}, \
         convert-nvvm-to-llvm, reconcile-unrealized-casts, canonicalize, cse)"
    )
}

/// 32 when every shaped type in the module has fewer than 2^31 elements, else 64. Also 64
/// when a vector is indexed by a runtime position: `convert-vector-to-llvm` always turns
/// those into `i64` and takes no index-bitwidth option, so 32-bit indices would leave casts
/// that do not reconcile.
fn index_bitwidth(m: &Module) -> u32 {
    let mut small = true;
    m.walk(m.top(), |op| {
        let dynamic_position = (m.is(op, vector::EXTRACT) && m.num_operands(op) > 1)
            || (m.is(op, vector::INSERT) && m.num_operands(op) > 2);
        if dynamic_position || large_buffer_argument(m, op) {
            small = false;
        }
        let types = m.operand_types(op).into_iter().chain(m.result_types(op));
        for t in types {
            let elements = match t.kind() {
                TypeKind::Tensor { .. } | TypeKind::Vector { .. } => t.num_elements(),
                _ => None,
            };
            if elements.is_some_and(|n| n >= 1 << 31) {
                small = false;
            }
        }
    });
    if small { 32 } else { 64 }
}

/// `xla_gpu.pure_call`s that `inline` kept (large callees called with different arguments)
/// become plain `func.call`s, as XLA's convert-pure-call-ops does: purity only mattered to
/// our passes.
fn pure_calls_to_calls(m: &mut Module) {
    let calls: Vec<OpId> = m.ops_named(xla_gpu::PURE_CALL);
    for op in calls {
        let Some(callee) = m.prop(op, "callee").and_then(Attribute::as_symbol) else {
            continue;
        };
        let callee = callee.to_owned();
        let args = m.operand_vec(op);
        let types = m.result_types(op);
        let call = func::build_call(m, InsertPoint::Before(op), &callee, &args, &types);
        let results: Vec<_> = m.results(call).collect();
        for (old, new) in m.results(op).collect::<Vec<_>>().into_iter().zip(results) {
            m.replace_all_uses(old, new);
        }
        m.erase_op(op);
    }
}

/// Whether `op` is a function with a pointer argument of at least 2^31 bytes: after
/// `lower-tensors` tensors are pointers, and their sizes survive as `llvm.dereferenceable`
/// (a byte count bounds the element count, so this errs on the safe side).
fn large_buffer_argument(m: &Module, op: OpId) -> bool {
    if !m.is(op, func::FUNC) {
        return false;
    }
    let Some(args) = m.prop(op, "arg_attrs").and_then(Attribute::as_array) else {
        return false;
    };
    args.iter()
        .filter_map(Attribute::as_dict)
        .flatten()
        .any(|a| {
            a.name.as_str() == "llvm.dereferenceable"
                && a.value.as_i64().is_some_and(|n| n >= 1 << 31)
        })
}

fn mark_kernels(m: &mut Module) {
    let body = m.body();
    let funcs: Vec<OpId> = m
        .block_ops(body)
        .filter(|&op| m.is(op, func::FUNC))
        .collect();
    for op in funcs {
        let private = m.prop(op, "sym_visibility").is_some();
        let has_body = !m.region_blocks(m.region(op, 0)).is_empty();
        if !private && has_body {
            m.set_attr(op, codegen::mlir::KERNEL_ATTRIBUTE, Attribute::Unit);
        }
    }
}

/// The libdevice function for a math op on f32 (`__nv_tanhf`); f64 drops the `f`.
fn libdevice_name(op: &str) -> Option<&'static str> {
    Some(match op {
        math::TANH => "tanh",
        math::EXP => "exp",
        math::EXP2 => "exp2",
        math::EXPM1 => "expm1",
        math::LOG => "log",
        math::LOG1P => "log1p",
        math::LOG2 => "log2",
        math::LOG10 => "log10",
        math::RSQRT => "rsqrt",
        math::CBRT => "cbrt",
        math::SIN => "sin",
        math::COS => "cos",
        math::TAN => "tan",
        math::ATAN => "atan",
        math::ATAN2 => "atan2",
        math::ACOS => "acos",
        math::ASIN => "asin",
        math::ACOSH => "acosh",
        math::ASINH => "asinh",
        math::ATANH => "atanh",
        math::COSH => "cosh",
        math::SINH => "sinh",
        math::ERF => "erf",
        math::ERFC => "erfc",
        math::POWF => "pow",
        math::ROUND => "round",
        _ => return None,
    })
}

/// What MLIR's conversions would leave as unrealized casts, an error at the op here: integer
/// `math` ops on vectors of more than one dimension (`convert-math-to-llvm` leaves them
/// alone), and any op on a narrow float ([`ir::NarrowFloat`], which LLVM has no type for:
/// the emitters hold f8/f4 values as integers) or on MLIR's `complex<...>` (the emitters
/// hold c64/c128 values as integer patterns and take them apart themselves), and
/// `affine.apply` (ours is `xla_gpu.apply_indexing`, which `simplify-affine` lowers; MLIR's
/// conversions leave `affine` alone). Ops an earlier pass of the pipeline lowers (the
/// `xla_gpu` dialect but `pure_call`, `scf.forall`) and `scf.index_switch` cases that a 32-bit index
/// ([`index_bitwidth`]) cannot hold are refused too, rather than handed to MLIR.
fn refuse_unlowerable(m: &Module) -> Result<(), Diagnostic> {
    let narrow_index = index_bitwidth(m) == 32;
    for op in m.collect_ops(m.top()) {
        let name = m.name(op);
        let why = match name.as_str() {
            ir::dialects::affine::APPLY => Some(
                "our index arithmetic is 'xla_gpu.apply_indexing', which 'simplify-affine' lowers",
            ),
            ir::dialects::builtin::UNREALIZED_CONVERSION_CAST => {
                Some("a conversion's leftover: it has no meaning of its own to lower")
            }
            ir::dialects::scf::FORALL => {
                Some("XLA's work-item form, which 'lower-xla-shared' lowers")
            }
            ir::dialects::scf::INDEX_SWITCH
                if narrow_index
                    && ir::dialects::dense_ints(m.prop(op, "cases"))
                        .unwrap_or_default()
                        .iter()
                        .any(|&c| i32::try_from(c).is_err()) =>
            {
                Some("a case value outside 32 bits, the width of this kernel's index")
            }
            // `pure_call` is taken here as the `func.call` it is.
            n if n.starts_with("xla_gpu.") && n != xla_gpu::PURE_CALL => {
                Some("an op of the emitters' dialect, which the passes before this one lower")
            }
            _ => None,
        };
        if let Some(why) = why {
            return Err(op_error(m, op, format!("unsupported: '{name}' ({why})")));
        }
        let narrow = m
            .operands(op)
            .chain(m.results(op))
            .map(|v| m.value_type(v).element_type_or_self())
            .find(|t| (t.is_any_float() && !t.is_float()) || t.complex_part().is_some());
        if let Some(t) = narrow {
            return Err(op_error(
                m,
                op,
                format!("unsupported: '{name}' on '{t}', a type our lowering does not take"),
            ));
        }
        if !matches!(name.as_str(), math::ABSI | math::CTLZ | math::CTTZ) {
            continue;
        }
        let ty = m.value_type(m.result(op, 0));
        if ty.is_vector() && ty.rank().is_some_and(|r| r > 1) {
            return Err(op_error(
                m,
                op,
                format!("unsupported: '{name}' on '{ty}' (1-d vectors only)"),
            ));
        }
    }
    Ok(())
}

/// The most lanes of a vector whose math is called per lane.
const MAX_LIBDEVICE_LANES: i64 = 4096;

/// Rewrites transcendental math ops into `func.call @__nv_*` and declares the callees. On a
/// vector the call is made per lane (libdevice has no vector functions; MLIR unrolls vector
/// math the same way before calling it).
fn math_to_libdevice(m: &mut Module) -> Result<(), Diagnostic> {
    let ops: Vec<OpId> = m
        .collect_ops(m.top())
        .into_iter()
        .filter(|&op| libdevice_name(m.name(op).as_str()).is_some())
        .collect();
    let mut declared: Vec<String> = Vec::new();
    for op in ops {
        let base = libdevice_name(m.name(op).as_str()).expect("filtered above");
        let ty = m.value_type(m.result(op, 0));
        let elem = ty.element_type_or_self();
        let (compute, suffix) = match elem {
            t if t == Type::F64 => (Type::F64, ""),
            t if t == Type::F32 || t == Type::F16 || t == Type::BF16 => (Type::F32, "f"),
            _ => return Err(op_error(m, op, format!("cannot call libdevice on '{ty}'"))),
        };
        // A vector's lanes, as positions (row-major), each its own call.
        let lanes: Option<Vec<Vec<i64>>> = match ty.shape() {
            Some(shape) if ty.is_vector() => {
                let count = ty.num_elements().unwrap_or(i64::MAX);
                if count > MAX_LIBDEVICE_LANES {
                    return Err(op_error(
                        m,
                        op,
                        format!(
                            "cannot call libdevice on '{ty}': more than {MAX_LIBDEVICE_LANES} lanes"
                        ),
                    ));
                }
                Some(
                    (0..count)
                        .map(|k| indexing::delinearize_point(k as u64, shape))
                        .collect(),
                )
            }
            _ => None,
        };
        let callee = format!("__nv_{base}{suffix}");
        let at = InsertPoint::Before(op);
        let operands = m.operand_vec(op);
        let positions = |lane: &[i64]| -> Vec<vector::Position> {
            lane.iter().map(|&i| vector::Position::Static(i)).collect()
        };
        let call_lane = |m: &mut Module, lane: Option<&[i64]>| {
            let args: Vec<Value> = operands
                .iter()
                .map(|&v| {
                    let v = match lane {
                        Some(lane) => vector::build_extract(m, at, v, &positions(lane)),
                        None => v,
                    };
                    if compute == elem {
                        v
                    } else {
                        arith::build_cast(m, at, ir::dialects::arith::EXTF, v, compute)
                    }
                })
                .collect();
            let call = func::build_call(m, at, &callee, &args, &[compute]);
            let mut result = m.result(call, 0);
            if compute != elem {
                result = arith::build_cast(m, at, ir::dialects::arith::TRUNCF, result, elem);
            }
            result
        };
        let result = match &lanes {
            None => call_lane(m, None),
            Some(lanes) => {
                let values: Vec<Value> =
                    lanes.iter().map(|lane| call_lane(m, Some(lane))).collect();
                vector::build_from_elements(m, at, ty, &values)
            }
        };
        m.replace_all_uses(m.result(op, 0), result);
        m.erase_op(op);
        if !declared.contains(&callee) {
            declare(m, &callee, &vec![compute; operands.len()], compute);
            declared.push(callee);
        }
    }
    Ok(())
}

/// `func.func private @name(inputs) -> result` without a body, unless already there.
fn declare(m: &mut Module, name: &str, inputs: &[Type], result: Type) {
    if m.lookup_symbol(m.top(), name).is_some() {
        return;
    }
    let region = m.create_region();
    let decl = OpState::new(func::FUNC)
        .prop("sym_name", Attribute::string(name))
        .prop(
            "function_type",
            Attribute::Type(Type::function(inputs, &[result])),
        )
        .prop("sym_visibility", Attribute::string("private"))
        .region(region);
    let body = m.body();
    m.create_op_at(decl, InsertPoint::BlockEnd(body));
}

/// `gpu.shuffle <mode> %v, %offset, %width` → `nvvm.shfl.sync <kind> %mask, %v, %offset,
/// %clamp` (see the module documentation).
fn shuffles_to_nvvm(m: &mut Module) -> Result<(), Diagnostic> {
    let shuffles: Vec<OpId> = m.ops_named(gpu::SHUFFLE);
    for op in shuffles {
        if m.has_uses(m.result(op, 1)) {
            return Err(op_error(
                m,
                op,
                "unsupported: a gpu.shuffle whose valid flag is used",
            ));
        }
        let mode = m
            .prop(op, "mode")
            .map(|a| a.to_string())
            .unwrap_or_default();
        let kind = ["xor", "down", "up", "idx"]
            .into_iter()
            .find(|k| mode.contains(k))
            .ok_or_else(|| op_error(m, op, format!("unknown gpu.shuffle mode '{mode}'")))?;
        let (value, offset, width) = (m.operand(op, 0), m.operand(op, 1), m.operand(op, 2));
        let mut b = ir::Builder::before(m, op);
        let thirty_two = b.int(32, Type::I32);
        let one = b.int(1, Type::I32);
        let all = b.int(-1, Type::I32);
        let inactive = b.binary(ir::dialects::arith::SUBI, thirty_two, width);
        let mask = b.binary(ir::dialects::arith::SHRUI, all, inactive);
        let clamp = if kind == "up" {
            inactive
        } else {
            b.binary(ir::dialects::arith::SUBI, width, one)
        };
        let nvvm_kind = if kind == "xor" { "bfly" } else { kind };
        let shuffled = ir::dialects::nvvm::build_shfl_sync(
            m,
            InsertPoint::Before(op),
            nvvm_kind,
            [mask, value, offset, clamp],
        );
        m.replace_all_uses(m.result(op, 0), shuffled);
        m.erase_op(op);
    }
    Ok(())
}
