//! `xla_gpu.atomic_rmw` on a buffer element, as XLA's `lower_tensors.cc` lowers it:
//!
//! * a body that yields a value from outside it (the update overwrites): `llvm.store ...
//!   atomic unordered`;
//! * a body of one operation of the current element and a value from outside it that LLVM
//!   has as an atomic read-modify-write (`arith.addf` → `fadd`, `addi` → `add`, signed and
//!   unsigned `max`/`min`, `andi`/`ori`/`xori`): `llvm.atomicrmw ... monotonic`. LLVM's
//!   NVPTX backend emits the instruction where the GPU has one and a compare-and-swap loop
//!   where it does not (8- and 16-bit integers, bf16 before sm_90);
//! * any other body: a compare-and-swap loop (`scf.while` around `llvm.cmpxchg`) on the
//!   element's bits, the body recomputed from what the memory held each time the swap
//!   fails. `i1` elements are bytes in memory, so they are swapped as `i8`.
//! * a complex pattern (`i64`: c64, `i128`: c128) whose body is the complex add of the
//!   current value and one from outside, op for op as the emitters write it
//!   (`complex_add`): two `fadd` atomics, one per part (the halves are independent
//!   sums; there is no 128-bit atomic, and two float atomics never retry);
//! * an element of `i2` or `i4` shares its byte with others: always a compare-and-swap
//!   loop on that byte, merging the element's new bits into it (XLA's `lower_tensors.cc`
//!   does the same for `i4`).

use super::{SubByte, element_address, element_type, sub_byte_width};
use ir::dialects::arith;
use ir::dialects::llvm::{self, AtomicBinOp, GepIndex};
use ir::dialects::scf;
use ir::intern::FxHashMap;
use ir::{Builder, ComplexPattern, InsertPoint, Module, OpId, Type, Value, ValueDef};

/// Replaces `op` by its lowering at `buffer`; the op itself goes with the tensor values.
pub(super) fn lower(m: &mut Module, op: OpId, buffer: Value) {
    let tensor = m.operand(op, 0);
    let elem = element_type(m.value_type(tensor));
    let index = m.operands(op).nth(1);
    let body = m.entry_block(m.region(op, 0)).expect("a verified body");
    let current = m.block_arg(body, 0);
    let yield_op = m.last_op(body).expect("a verified body ends in a yield");
    let new = m.operand(yield_op, 0);
    let at = InsertPoint::Before(op);
    let recompute = |b: &mut Builder<'_>, current: Value| clone_body(b, body, current);
    if let Some(width) = sub_byte_width(elem) {
        let place = SubByte::place(m, op, buffer, index, width);
        compare_and_swap_loop(m, op, place.byte, elem, Some(place), recompute);
        return;
    }
    let address = element_address(m, op, buffer, index, elem);
    if let Some(update) = super::complex_add::update(m, body) {
        add_parts(m, op, address, update);
        return;
    }
    if !defined_in(m, new, body) {
        let store = llvm::build_store(m, at, new, address);
        // Other threads may store to the element at the same time: an atomic store (of
        // no ordering, as XLA writes it), which LLVM may neither tear nor invent. LLVM
        // has atomics of whole bytes only; an `i1` stays a plain store of its byte.
        if let Some(bytes) = elem.bit_width().filter(|w| w % 8 == 0).map(|w| w / 8) {
            m.set_prop(store, "ordering", ir::Attribute::i64(llvm::UNORDERED));
            m.set_prop(store, "alignment", ir::Attribute::i64(bytes.into()));
        }
        return;
    }
    if let Some((bin_op, value)) = single_rmw(m, body, current, new, elem) {
        llvm::build_atomic_rmw(m, at, bin_op, address, value);
        return;
    }
    compare_and_swap_loop(m, op, address, elem, None, recompute);
}

/// Whether `op` can be lowered: an element of at most 64 bits, or a complex add (two atomic
/// adds of the parts).
pub(super) fn lowerable(m: &Module, op: OpId) -> bool {
    let elem = m.result_types(op).first().and_then(|t| t.element_type());
    let narrow = elem.and_then(Type::bit_width).is_some_and(|w| w <= 64);
    let body = m.entry_block(m.region(op, 0));
    narrow || body.is_some_and(|body| super::complex_add::update(m, body).is_some())
}

/// `*address += update` as two atomic float adds, one per half of the complex pattern
/// `update` (real part low: at `address`, the imaginary part one part further).
fn add_parts(m: &mut Module, op: OpId, address: Value, update: Value) {
    // `complex_add::update` found `update` a complex pattern.
    let Some(c) = ComplexPattern::of_pattern(m.value_type(update)) else {
        return;
    };
    let (half, part) = (c.half, c.part);
    let mut b = Builder::before(m, op);
    let low = b.cast(arith::TRUNCI, update, half);
    let shift = b.int(i128::from(c.half_bits()), c.pattern);
    let high = b.binary(arith::SHRUI, update, shift);
    let high = b.cast(arith::TRUNCI, high, half);
    let (re, im) = (
        b.cast(arith::BITCAST, low, part),
        b.cast(arith::BITCAST, high, part),
    );
    let at = InsertPoint::Before(op);
    let imag_address = llvm::build_gep(m, at, address, &[GepIndex::Const(1)], part, true);
    llvm::build_atomic_rmw(m, at, AtomicBinOp::FAdd, address, re);
    llvm::build_atomic_rmw(m, at, AtomicBinOp::FAdd, imag_address, im);
}

/// The body's ops cloned at the builder's insertion point with `current` for its argument;
/// what it yields.
fn clone_body(b: &mut Builder<'_>, body: ir::BlockId, current: Value) -> Value {
    let mut mapping: FxHashMap<Value, Value> = FxHashMap::default();
    mapping.insert(b.module.block_arg(body, 0), current);
    let ops: Vec<OpId> = b.module.block_ops(body).collect();
    let (yield_op, computed) = ops.split_last().expect("a verified body");
    for &inner in computed {
        let clone = b.module.clone_op(inner, &mut mapping);
        let at = b.insertion_point();
        b.module.insert_op(clone, at);
    }
    let new = b.module.operand(*yield_op, 0);
    mapping.get(&new).copied().unwrap_or(new)
}

/// Whether `v` is `block`'s argument or the result of an op in it.
fn defined_in(m: &Module, v: Value, block: ir::BlockId) -> bool {
    match m.value_def(v) {
        ValueDef::Arg { block: b, .. } => b == block,
        ValueDef::Result { op, .. } => m.parent_block(op) == Some(block),
        ValueDef::Detached => false,
    }
}

/// The body as one atomic read-modify-write: `new = f(current, value)` (either order, all
/// of these commute) with `value` from outside the body, and the `AtomicBinOp` of `f` on
/// `elem`.
fn single_rmw(
    m: &Module,
    body: ir::BlockId,
    current: Value,
    new: Value,
    elem: Type,
) -> Option<(AtomicBinOp, Value)> {
    let ops: Vec<OpId> = m.block_ops(body).collect();
    let [f, _yield] = ops[..] else {
        return None;
    };
    if m.num_operands(f) != 2 || m.result(f, 0) != new || elem == Type::I1 {
        return None;
    }
    let (a, b) = (m.operand(f, 0), m.operand(f, 1));
    let value = match (a == current, b == current) {
        (true, false) => b,
        (false, true) => a,
        _ => return None,
    };
    if defined_in(m, value, body) {
        return None;
    }
    let float = elem.is_float();
    let bin_op = match m.name(f).as_str() {
        arith::ADDF if float => AtomicBinOp::FAdd,
        arith::ADDI => AtomicBinOp::Add,
        arith::MAXSI => AtomicBinOp::Max,
        arith::MINSI => AtomicBinOp::Min,
        arith::MAXUI => AtomicBinOp::UMax,
        arith::MINUI => AtomicBinOp::UMin,
        arith::ANDI => AtomicBinOp::And,
        arith::ORI => AtomicBinOp::Or,
        arith::XORI => AtomicBinOp::Xor,
        _ => return None,
    };
    Some((bin_op, value))
}

/// The bits type a compare-and-swap of `elem` works on: the integer of its width (`i8` for
/// `i1`).
fn swap_type(elem: Type) -> Type {
    match elem.bit_width() {
        Some(1) => Type::I8,
        Some(w) => Type::int(w),
        None => elem,
    }
}

/// `elem` as its swap bits, and back.
fn to_bits(b: &mut Builder<'_>, v: Value, elem: Type, bits: Type) -> Value {
    match elem {
        _ if elem == bits => v,
        _ if elem == Type::I1 => b.cast(arith::EXTUI, v, bits),
        _ => b.cast(arith::BITCAST, v, bits),
    }
}

fn from_bits(b: &mut Builder<'_>, v: Value, elem: Type, bits: Type) -> Value {
    match elem {
        _ if elem == bits => v,
        _ if elem == Type::I1 => b.cast(arith::TRUNCI, v, elem),
        _ => b.cast(arith::BITCAST, v, elem),
    }
}

/// ```text
/// %init = llvm.load %address
/// scf.while (%old = %init) : (iN) -> iN {
///   %current = bitcast %old; %new = compute(%current); %bits = bitcast %new
///   %pair = llvm.cmpxchg %address, %old, %bits monotonic monotonic
///   scf.condition(!%pair[1]) %pair[0]
/// } do { ^bb0(%seen): scf.yield %seen }
/// ```
/// With `sub_byte`, `%address` is the element's byte: `%current` is its bits shifted down,
/// and `%bits` the byte with the element's bits replaced.
pub(super) fn compare_and_swap_loop(
    m: &mut Module,
    op: OpId,
    address: Value,
    elem: Type,
    sub_byte: Option<SubByte>,
    compute: impl FnOnce(&mut Builder<'_>, Value) -> Value,
) {
    let bits = if sub_byte.is_some() {
        Type::I8
    } else {
        swap_type(elem)
    };
    let at = InsertPoint::Before(op);
    let init = llvm::build_load(m, at, address, bits, false);
    let (_, before, after) = scf::build_while(m, at, &[init], &[bits]);
    let old = m.block_arg(before, 0);
    let mut b = Builder::at_end(m, before);
    let current = match sub_byte {
        Some(place) => {
            let shifted = b.binary(arith::SHRUI, old, place.shift);
            b.cast(arith::TRUNCI, shifted, elem)
        }
        None => from_bits(&mut b, old, elem, bits),
    };
    let new = compute(&mut b, current);
    let new_bits = match sub_byte {
        Some(place) => {
            let ones = b.int((1 << place.width) - 1, Type::I8);
            let mask = b.binary(arith::SHLI, ones, place.shift);
            let all = b.int(-1, Type::I8);
            let keep = b.binary(arith::XORI, mask, all);
            let kept = b.binary(arith::ANDI, old, keep);
            let wide = b.cast(arith::EXTUI, new, Type::I8);
            let moved = b.binary(arith::SHLI, wide, place.shift);
            b.binary(arith::ORI, kept, moved)
        }
        None => to_bits(&mut b, new, elem, bits),
    };
    let end = InsertPoint::BlockEnd(before);
    let pair = llvm::build_cmpxchg(b.module, end, address, old, new_bits);
    let seen = llvm::build_extract_value(b.module, end, pair, 0, bits);
    let swapped = llvm::build_extract_value(b.module, end, pair, 1, Type::I1);
    b.set_insertion_point(end);
    let yes = b.int(1, Type::I1);
    let again = b.binary(arith::XORI, swapped, yes);
    scf::build_condition(b.module, before, again, &[seen]);
    let retry = b.module.block_arg(after, 0);
    scf::build_yield(b.module, after, &[retry]);
}
