//! `algebraic-simplifier`: the rewrites of XLA's `AlgebraicSimplifier` that JAX's unfused
//! HLO needs, each exact (the result is bit for bit the same on every input):
//!
//! * **Identities go**: a reshape, copy, bitcast or convert to the operand's own shape and
//!   type; a broadcast or transpose whose dimensions are `0..rank`; a slice or pad that
//!   keeps every element where it is; a reverse of nothing; a one-operand concatenate.
//!   JAX writes `broadcast(x), dimensions={0,1}` to the same shape before every
//!   `broadcast_in_dim`.
//! * **Chains of shape ops collapse**: `reshape(reshape(x))` is one reshape;
//!   `broadcast(broadcast(x))` one broadcast; `reshape(broadcast(scalar))` a broadcast of
//!   the scalar; `broadcast(reshape(x))`, where the reshape only adds or drops dimensions
//!   of size 1, broadcasts `x` itself (JAX's `[16] -> [16,1] -> [16,256]`).
//! * **Neutral elements and involutions**: `x * 1`, `x / 1`, `x - 0`, `x + 0` (integers;
//!   for floats only `x + -0`, since `-0 + 0` is `+0`), `max(x, x)`, `min(x, x)`,
//!   `and(x, x)`, `or(x, x)`, `-(-x)`, `not(not(x))`, `select(p, a, a)` and a select on a
//!   constant predicate; `convert(convert(x))` back to `x`'s type through a type that holds
//!   every value of it (JAX's dtype round trips).
//! * **Reductions of one element**: a reduce over dimensions of size 1 whose init is its
//!   reducer's identity (exactly: `-0` for a float sum) is a reshape.
//! * **Tuples taken apart**: `get-tuple-element(tuple(a, b), index=1)` is `b` (an inlined
//!   multi-output fusion).
//!
//! An instruction that becomes another is replaced in its users (which are visited after
//! it), then removed when nothing reads it. The root keeps its instruction, so that the
//! program's result keeps its name; nor does a result (an element of a tuple root) become a
//! parameter (a program result that is an input buffer is the runtime's business, not a
//! kernel's).

use hlo::{
    AttrValue, Attribute, Computation, Diagnostic, HloModule, InstrId, Instruction, Opcode,
    Payload, PrimitiveType, Value,
};

use crate::{ReducerOp, operands_first, program_results, remove_dead_code, same_shape};

pub(crate) fn run(module: &mut HloModule) -> Result<bool, Diagnostic> {
    let reducers = crate::reducer_ops(module);
    Ok(crate::rewrite_control_computations(module, |c| {
        simplify(c, &reducers)
    }))
}

/// Every rewrite of `c` that applies: whether any did.
fn simplify(c: &mut Computation, reducers: &[Option<ReducerOp>]) -> bool {
    let results = program_results(c);
    let mut replacement: Vec<InstrId> = (0..c.instructions.len()).map(InstrId).collect();
    let mut changed = false;
    for i in operands_first(c) {
        let operands: Vec<InstrId> = c.instructions[i.0]
            .operands
            .iter()
            .map(|o| replacement[o.0])
            .collect();
        if operands != c.instructions[i.0].operands {
            c.instructions[i.0].operands = operands;
            changed = true;
        }
        // A rewrite in place may enable another (`reshape(reshape(x))` that is then `x`);
        // each rewrite removes an operand edge or an instruction from the chain, so this ends.
        while let Some(rewrite) = simplified(c, i, reducers) {
            match rewrite {
                Rewrite::Into(j) => {
                    let becomes_parameter =
                        c.instructions[j.0].opcode == Opcode::Parameter && results.contains(&i);
                    if i != c.root && !becomes_parameter {
                        replacement[i.0] = j;
                        changed = true;
                    }
                    break;
                }
                Rewrite::InPlace(instruction) => {
                    c.instructions[i.0] = *instruction;
                    changed = true;
                }
            }
        }
    }
    if changed {
        remove_dead_code(c);
    }
    changed
}

/// What instruction `i` simplifies to.
enum Rewrite {
    /// An existing instruction with the same shape and value.
    Into(InstrId),
    /// A simpler instruction with the same name, shape and value.
    InPlace(Box<Instruction>),
}

fn simplified(c: &Computation, i: InstrId, reducers: &[Option<ReducerOp>]) -> Option<Rewrite> {
    let instr = &c.instructions[i.0];
    let operand = |k: usize| instr.operands.get(k).map(|&o| (o, &c.instructions[o.0]));
    let (first, x) = operand(0)?;
    if is_identity(instr, x) {
        return Some(Rewrite::Into(first));
    }
    // A multi-output fusion, inlined (`inline-fusions`), hands out its results this way.
    if instr.opcode == Opcode::GetTupleElement && x.opcode == Opcode::Tuple {
        let index = usize::try_from(instr.int("index")?).ok()?;
        return Some(Rewrite::Into(*x.operands.get(index)?));
    }
    let same_as = |j: InstrId| same_shape(&instr.shape, &c.instructions[j.0].shape);
    let into = |j: InstrId| same_as(j).then_some(Rewrite::Into(j));
    let element_type = instr.shape.as_array()?.element_type;
    match (instr.opcode, x.opcode) {
        (Opcode::Reshape, Opcode::Reshape) => Some(rewired(instr, vec![x.operands[0]])),
        (Opcode::Reshape, Opcode::Broadcast) if rank(c, x.operands[0]) == Some(0) => {
            Some(Rewrite::InPlace(Box::new(Instruction {
                opcode: Opcode::Broadcast,
                operands: x.operands.clone(),
                attributes: with_dimensions(instr, Vec::new()),
                ..instr.clone()
            })))
        }
        (Opcode::Broadcast, Opcode::Broadcast) => {
            let outer = instr.int_list("dimensions")?;
            let inner = x.int_list("dimensions")?;
            let composed = inner
                .iter()
                .map(|&d| outer.get(usize::try_from(d).ok()?).copied())
                .collect::<Option<Vec<i64>>>()?;
            Some(rebroadcast(instr, x.operands[0], composed))
        }
        (Opcode::Broadcast, Opcode::Reshape) => {
            let dims = broadcast_through_unit_reshape(c, instr, x)?;
            Some(rebroadcast(instr, x.operands[0], dims))
        }
        (Opcode::Negate, Opcode::Negate) | (Opcode::Not, Opcode::Not) => into(x.operands[0]),
        (Opcode::Convert, Opcode::Convert) => {
            let source = x.operands[0];
            let source_type = c.instructions[source.0].shape.as_array()?.element_type;
            let middle = x.shape.as_array()?.element_type;
            (source_type == element_type && holds_every_value(source_type, middle))
                .then(|| into(source))
                .flatten()
        }
        (Opcode::Select, _) => {
            let (on_true, on_false) = (instr.operands.get(1)?, instr.operands.get(2)?);
            if on_true == on_false {
                return into(*on_true);
            }
            match splat(c, first)? {
                Value::Pred(true) => into(*on_true),
                Value::Pred(false) => into(*on_false),
                _ => None,
            }
        }
        // A reduce over dimensions of size 1 combines each element with the init value
        // alone: the element itself when the init is the reducer's identity (JAX's bounds
        // check of a gather's one-number index vectors is such a `reduce(and)`).
        (Opcode::Reduce, _) if instr.operands.len() == 2 => {
            let input = x.shape.as_array()?;
            let unit = instr
                .int_list("dimensions")?
                .iter()
                .all(|&d| input.dims.get(d as usize) == Some(&1));
            let reducer = reducers
                .get(instr.called("to_apply")?.id.0)
                .copied()
                .flatten()?;
            let init = splat(c, instr.operands[1])?;
            (unit && identity(reducer.op, init, element_type)).then(|| {
                Rewrite::InPlace(Box::new(Instruction {
                    opcode: Opcode::Reshape,
                    operands: vec![first],
                    attributes: Vec::new(),
                    ..instr.clone()
                }))
            })
        }
        (Opcode::Maximum | Opcode::Minimum | Opcode::And | Opcode::Or, _)
            if operand(1)?.0 == first =>
        {
            into(first)
        }
        (Opcode::Multiply | Opcode::Divide | Opcode::Add | Opcode::Subtract, _) => {
            let (second, _) = operand(1)?;
            let neutral_right =
                splat(c, second).is_some_and(|v| neutral(instr.opcode, v, element_type));
            let commutes = matches!(instr.opcode, Opcode::Multiply | Opcode::Add);
            let neutral_left =
                commutes && splat(c, first).is_some_and(|v| neutral(instr.opcode, v, element_type));
            if neutral_right {
                into(first)
            } else if neutral_left {
                into(second)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// Whether `instr` computes its (only) operand `x` unchanged.
fn is_identity(instr: &Instruction, x: &Instruction) -> bool {
    if !same_shape(&instr.shape, &x.shape) {
        return false;
    }
    let rank = x.shape.as_array().map_or(0, |a| a.rank());
    let counting = |dims: &[i64]| dims.iter().copied().eq(0..rank as i64);
    match instr.opcode {
        Opcode::Reshape | Opcode::Copy | Opcode::Bitcast | Opcode::Convert => true,
        Opcode::Broadcast | Opcode::Transpose => instr.int_list("dimensions").is_some_and(counting),
        Opcode::Reverse => {
            let sizes = &x
                .shape
                .as_array()
                .map(|a| a.dims.clone())
                .unwrap_or_default();
            instr.int_list("dimensions").is_some_and(|dims| {
                dims.iter()
                    .all(|&d| usize::try_from(d).ok().and_then(|d| sizes.get(d)) == Some(&1))
            })
        }
        Opcode::Slice => matches!(
            instr.attribute("slice").map(|a| &a.value),
            Some(AttrValue::Slice(dims)) if dims.iter().all(|d| d.start == 0 && d.stride == 1)
        ),
        Opcode::Pad => matches!(
            instr.attribute("padding").map(|a| &a.value),
            Some(AttrValue::Padding(dims))
                if dims.iter().all(|d| d.low == 0 && d.high == 0 && d.interior == 0)
        ),
        Opcode::Concatenate => instr.operands.len() == 1,
        _ => false,
    }
}

fn rank(c: &Computation, i: InstrId) -> Option<usize> {
    c.instructions[i.0].shape.as_array().map(|a| a.rank())
}

/// `instr` reading `operands` instead of its own.
fn rewired(instr: &Instruction, operands: Vec<InstrId>) -> Rewrite {
    Rewrite::InPlace(Box::new(Instruction {
        operands,
        ..instr.clone()
    }))
}

/// `instr` (a broadcast) broadcasting `source` with `dimensions`.
fn rebroadcast(instr: &Instruction, source: InstrId, dimensions: Vec<i64>) -> Rewrite {
    Rewrite::InPlace(Box::new(Instruction {
        operands: vec![source],
        attributes: with_dimensions(instr, dimensions),
        ..instr.clone()
    }))
}

/// `instr`'s attributes with `dimensions={...}` set to `dimensions` (added if missing).
fn with_dimensions(instr: &Instruction, dimensions: Vec<i64>) -> Vec<Attribute> {
    let mut attributes: Vec<Attribute> = instr
        .attributes
        .iter()
        .filter(|a| a.name != "dimensions")
        .cloned()
        .collect();
    attributes.insert(
        0,
        Attribute {
            name: "dimensions".into(),
            value: AttrValue::IntList(dimensions),
            span: instr.spans.whole,
        },
    );
    attributes
}

/// For `broadcast(reshape(x))` where the reshape only adds or drops dimensions of size 1
/// and `x` has none: the broadcast's dimensions for `x` itself (each dimension of `x` goes
/// where its counterpart in the reshape went).
fn broadcast_through_unit_reshape(
    c: &Computation,
    broadcast: &Instruction,
    reshape: &Instruction,
) -> Option<Vec<i64>> {
    let source = c.instructions[reshape.operands[0].0].shape.as_array()?;
    let reshaped = reshape.shape.as_array()?;
    if source.dims.contains(&1) || source.is_dynamic() || reshaped.is_dynamic() {
        return None;
    }
    let kept: Vec<usize> = (0..reshaped.rank())
        .filter(|&d| reshaped.dims[d] != 1)
        .collect();
    let kept_sizes: Vec<i64> = kept.iter().map(|&d| reshaped.dims[d]).collect();
    if kept_sizes != source.dims {
        return None;
    }
    let outer = broadcast.int_list("dimensions")?;
    kept.iter().map(|&d| outer.get(d).copied()).collect()
}

/// The value of every element of `i`, when it is a constant whose elements are all equal
/// or a broadcast of one.
fn splat(c: &Computation, i: InstrId) -> Option<Value> {
    let mut instr = &c.instructions[i.0];
    if instr.opcode == Opcode::Broadcast {
        instr = &c.instructions[instr.operands.first()?.0];
    }
    let (Opcode::Constant, Payload::Literal(literal)) = (instr.opcode, &instr.payload) else {
        return None;
    };
    let hlo::Literal::Array(array) = literal.as_ref() else {
        return None;
    };
    let (first, rest) = array.values.split_first()?;
    rest.iter().all(|v| v == first).then_some(*first)
}

/// Whether `op(x, v)` is `x` for every `x` of `element_type`, bit for bit.
fn neutral(op: Opcode, v: Value, element_type: PrimitiveType) -> bool {
    let is = |target: f64| match v {
        Value::Int(n) => n as f64 == target,
        Value::Float(f) => f == target,
        _ => false,
    };
    let negative_zero = matches!(v, Value::Float(f) if f == 0.0 && f.is_sign_negative());
    let positive_zero = matches!(v, Value::Float(f) if f == 0.0 && f.is_sign_positive());
    match op {
        Opcode::Multiply | Opcode::Divide => is(1.0),
        Opcode::Subtract if element_type.is_float() => positive_zero,
        Opcode::Add if element_type.is_float() => negative_zero,
        Opcode::Add | Opcode::Subtract => element_type.is_int() && is(0.0),
        _ => false,
    }
}

/// Whether `op(v, x)` is `x` for every `x` of `element_type`, bit for bit: a reducer's
/// identity (for float sums only -0, since `+0 + -0` is `+0`).
fn identity(op: Opcode, v: Value, element_type: PrimitiveType) -> bool {
    let float = element_type.is_float();
    match (op, v) {
        (Opcode::And | Opcode::Multiply, Value::Pred(b)) | (Opcode::Or, Value::Pred(b)) => {
            b == (op != Opcode::Or)
        }
        (Opcode::Add | Opcode::Or | Opcode::Xor, Value::Int(0)) => !float,
        (Opcode::Add, Value::Float(f)) => f == 0.0 && f.is_sign_negative(),
        (Opcode::Multiply, Value::Int(1)) => !float,
        (Opcode::Multiply, Value::Float(f)) => f == 1.0,
        (Opcode::Maximum, Value::Float(f)) => f == f64::NEG_INFINITY,
        (Opcode::Minimum, Value::Float(f)) => f == f64::INFINITY,
        (Opcode::Maximum, Value::Int(n)) => {
            !float && element_type.is_int() && n == int_bound(element_type, false)
        }
        (Opcode::Minimum, Value::Int(n)) => {
            !float && element_type.is_int() && n == int_bound(element_type, true)
        }
        _ => false,
    }
}

/// The largest (`top`) or smallest value of integer type `ty`.
fn int_bound(ty: PrimitiveType, top: bool) -> i128 {
    let bits = ty.bit_width();
    match (ty.is_signed_int(), top) {
        (true, true) => (1i128 << (bits - 1)) - 1,
        (true, false) => -(1i128 << (bits - 1)),
        (false, true) => (1i128 << bits) - 1,
        (false, false) => 0,
    }
}

/// Whether converting `from` to `to` and back gives every value of `from` back.
fn holds_every_value(from: PrimitiveType, to: PrimitiveType) -> bool {
    use PrimitiveType::*;
    match (from, to) {
        (F16 | BF16, F32 | F64) | (F32, F64) => true,
        _ if from.is_signed_int() && to.is_signed_int() => to.bit_width() >= from.bit_width(),
        _ if from.is_unsigned_int() && (to.is_unsigned_int() || to.is_signed_int()) => {
            to.bit_width() > from.bit_width() || (to.is_unsigned_int() && to == from)
        }
        _ => false,
    }
}
