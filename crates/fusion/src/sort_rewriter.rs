//! `sort-rewriter`: a sort whose rows the sort emitter cannot hold in a block's shared memory
//! becomes XLA's call of CUB's radix sort (`custom-call`, `custom_call_target=
//! "__cub$DeviceRadixSort"`), left to the runtime like a library call, when XLA's SortRewriter
//! would make one of it:
//!
//! * one operand, or two (keys and values), sorted along the last dimension;
//! * a comparator that is a plain `compare` of the keys' two parameters (`LT`/`LE`
//!   ascending, `GT`/`GE` descending; swapped parameters swap the order), or JAX's NumPy
//!   order for one float operand: each side first made `nan` if it is a NaN and `+0` if it
//!   is zero, then compared;
//! * keys of an 8- to 64-bit integer or float type, values of an 8- to 64-bit type.
//!
//! CUB sorts bit patterns, so a float key is sorted in total order, and NumPy's order needs
//! keys made for it: here, as in XLA, an unsigned integer per element (zeros and NaNs made
//! one, then the sign bit flipped for a positive value and every bit for a negative one)
//! sorted with the original values as CUB's values. CUB's radix sort is stable.
//!
//! XLA decides by measured tables (per GPU, row length, batch and width) where CUB beats its
//! own sort kernels; here CUB takes only the rows the sort emitter cannot (it has no merge
//! kernels across blocks), so every sort the emitter holds stays a kernel. The scratch
//! buffer XLA's call returns as a third result is the runtime's to allocate and is left out.

use hlo::{
    AttrValue, Computation, Diagnostic, HloModule, InstrId, Instruction, Literal, Opcode, Payload,
    PrimitiveType, Shape, Value,
};

use crate::{Added, Names, attribute};

pub(crate) fn run(module: &mut HloModule) -> Result<bool, Diagnostic> {
    let mut changed = false;
    for id in crate::control_computations(module) {
        let c = module.computation(id);
        let rewrites: Vec<(InstrId, CubSort)> = (0..c.instructions.len())
            .map(InstrId)
            .filter(|&i| c.instruction(i).opcode == Opcode::Sort)
            .filter(|&i| !emitters::sort::SortFusion::fits_a_block(c, c.instruction(i)))
            .filter_map(|i| analyze(module, c, c.instruction(i)).map(|cub| (i, cub)))
            .collect();
        let c = &mut module.computations[id.0];
        let mut names = Names::of(c);
        for (i, cub) in &rewrites {
            rewrite(c, *i, *cub, &mut names);
        }
        if !rewrites.is_empty() {
            crate::put_operands_first(c);
            changed = true;
        }
    }
    Ok(changed)
}

/// How CUB sorts a sort (XLA's `SortComputationAnalysis`).
#[derive(Clone, Copy, Debug)]
struct CubSort {
    /// The operand holding the keys (0 or 1).
    keys: usize,
    descending: bool,
    /// JAX's NumPy order (NaNs last, `-0 == +0`): keys are made for it.
    numpy: bool,
}

/// How CUB would sort `sort`, an instruction of `c`, or `None` when XLA's SortRewriter would
/// leave it to XLA's own kernels.
fn analyze(module: &HloModule, c: &Computation, sort: &Instruction) -> Option<CubSort> {
    let shapes: Vec<&hlo::ArrayShape> = sort
        .operands
        .iter()
        .map(|&o| c.instruction(o).shape.as_array())
        .collect::<Option<_>>()?;
    let first = shapes.first()?;
    let last = first.rank().checked_sub(1)? as i64;
    if !(1..=2).contains(&shapes.len()) || sort.int_list("dimensions") != Some(&[last]) {
        return None;
    }
    let comparator = module.computation(sort.called("to_apply")?.id);
    let compare = comparator.root_instruction();
    let direction = compare.enum_value("direction")?;
    if compare.opcode != Opcode::Compare || !matches!(direction, "LT" | "LE" | "GT" | "GE") {
        return None;
    }
    let [lhs, rhs] = [compare.operands[0], compare.operands[1]];
    let (numpy, (i0, i1)) = match (parameter(comparator, lhs), parameter(comparator, rhs)) {
        (Some(a), Some(b)) => (false, (a, b)),
        _ => (
            true,
            (numpy_key(comparator, lhs)?, numpy_key(comparator, rhs)?),
        ),
    };
    // The two parameters of one operand, in either order.
    let low = i0.min(i1);
    if low % 2 != 0 || i0.max(i1) != low + 1 {
        return None;
    }
    let keys = (low / 2) as usize;
    let descending = matches!(direction, "GT" | "GE") != (i0 != low);
    let key_type = shapes.get(keys)?.element_type;
    let widths = |t: PrimitiveType| matches!(t.bit_width(), 8 | 16 | 32 | 64);
    let key_ok = widths(key_type) && (key_type.is_int() || is_radix_float(key_type));
    let values_ok = shapes.iter().all(|s| {
        let t = s.element_type;
        widths(t) && !t.is_complex() && t != PrimitiveType::Pred
    });
    let numpy_ok = !numpy || (shapes.len() == 1 && key_type.is_float());
    (key_ok && values_ok && numpy_ok).then_some(CubSort {
        keys,
        descending,
        numpy,
    })
}

/// Whether CUB radix-sorts floats of type `t` (the IEEE types; not the f8 family).
fn is_radix_float(t: PrimitiveType) -> bool {
    matches!(
        t,
        PrimitiveType::F16 | PrimitiveType::BF16 | PrimitiveType::F32 | PrimitiveType::F64
    )
}

/// The parameter number of `id` when it is a parameter of `c`.
fn parameter(c: &Computation, id: InstrId) -> Option<i64> {
    match c.instruction(id).payload {
        Payload::Parameter(n) => Some(n),
        _ => None,
    }
}

/// The parameter that `id` canonicalizes as JAX's NumPy order does,
/// `select(p != p, nan, select(p == 0, 0, p))`, or `None`.
fn numpy_side(c: &Computation, id: InstrId) -> Option<i64> {
    let outer = c.instruction(id);
    let [is_nan, nan, inner] = select_operands(outer)?;
    let [is_zero, zero, p] = select_operands(c.instruction(inner))?;
    let n = parameter(c, p)?;
    let compares = |id: InstrId, direction: &str, rhs: &dyn Fn(InstrId) -> bool| {
        let cmp = c.instruction(id);
        cmp.opcode == Opcode::Compare
            && cmp.enum_value("direction") == Some(direction)
            && cmp.operands.first() == Some(&p)
            && cmp.operands.get(1).is_some_and(|&o| rhs(o))
    };
    let constant = |id: InstrId, pick: fn(f64) -> bool| match c.instruction(id).literal() {
        Some(Literal::Array(a)) => {
            matches!(a.values.as_slice(), [Value::Float(v)] if pick(*v))
        }
        _ => false,
    };
    let is_zero_constant = |id: InstrId| constant(id, |v| v == 0.0);
    (compares(is_nan, "NE", &|o| o == p)
        && constant(nan, f64::is_nan)
        && compares(is_zero, "EQ", &is_zero_constant)
        && is_zero_constant(zero))
    .then_some(n)
}

/// The parameter that `id` orders in NumPy's order: [`numpy_side`], or the same value
/// turned into its integer total-order key as XLA:CPU's ComparisonExpander writes a
/// `TOTALORDER` compare, `select(bits < 0, bits ^ MAX, bits)` of `bits = bitcast(side)`
/// (the same order: XLA's printed modules of `jnp.sort`).
fn numpy_key(c: &Computation, id: InstrId) -> Option<i64> {
    if let Some(n) = numpy_side(c, id) {
        return Some(n);
    }
    let [negative, flipped, bits] = select_operands(c.instruction(id))?;
    let cast = c.instruction(bits);
    if !matches!(cast.opcode, Opcode::Bitcast | Opcode::BitcastConvert) {
        return None;
    }
    let width = cast.shape.as_array()?.element_type.bit_width();
    let int_constant = |id: InstrId, want: i128| matches!(c.instruction(id).literal(), Some(Literal::Array(a)) if a.values == [Value::Int(want)]);
    let is_negative = c.instruction(negative);
    let xor = c.instruction(flipped);
    let below_zero = is_negative.opcode == Opcode::Compare
        && is_negative.enum_value("direction") == Some("LT")
        && is_negative.operands.as_slice() == [bits, is_negative.operands[1]]
        && int_constant(is_negative.operands[1], 0);
    let max = (1i128 << (width - 1)) - 1;
    let flips = xor.opcode == Opcode::Xor
        && xor.operands.contains(&bits)
        && xor.operands.iter().any(|&o| int_constant(o, max));
    if below_zero && flips {
        numpy_side(c, *cast.operands.first()?)
    } else {
        None
    }
}

fn select_operands(instr: &Instruction) -> Option<[InstrId; 3]> {
    match (instr.opcode, instr.operands.as_slice()) {
        (Opcode::Select, &[p, a, b]) => Some([p, a, b]),
        _ => None,
    }
}

/// Sort `i` of `c` rewritten in place as what reads CUB's result: `get-tuple-element` of
/// the sorted operand, or a tuple of the sorted keys and values in the sort's order.
fn rewrite(c: &mut Computation, i: InstrId, cub: CubSort, names: &mut Names) {
    let sort = c.instruction(i).clone();
    let span = sort.spans.whole;
    let operand_shapes: Vec<Shape> = (sort.operands.iter())
        .map(|&o| c.instruction(o).shape.clone())
        .collect();
    let mut added = Added {
        c,
        names,
        of: sort.clone(),
    };
    let (keys, values) = if cub.numpy {
        let x = sort.operands[0];
        (numpy_keys(&mut added, x), Some(x))
    } else {
        let values = (sort.operands.len() == 2).then(|| sort.operands[1 - cub.keys]);
        (sort.operands[cub.keys], values)
    };
    let operands: Vec<InstrId> = [Some(keys), values].into_iter().flatten().collect();
    let shapes = (operands.iter())
        .map(|&o| added.c.instruction(o).shape.clone())
        .collect();
    let mut attributes = vec![
        attribute(
            "custom_call_target",
            AttrValue::Str(hlo::module::CUB_RADIX_SORT.into()),
            span,
        ),
        attribute(
            "backend_config",
            AttrValue::Raw(format!("{{\"descending\":{}}}", cub.descending)),
            span,
        ),
    ];
    attributes.extend(crate::metadata(&sort));
    let call = added.op(
        "cub",
        Opcode::CustomCall,
        Shape::Tuple(shapes),
        operands,
        attributes,
    );
    let index = |n: usize| vec![attribute("index", AttrValue::Int(n as i64), span)];
    let replacement = if cub.numpy || sort.operands.len() == 1 {
        // The sorted operand (with NumPy's order, the values CUB moved with the keys made
        // for them).
        let sorted = usize::from(cub.numpy);
        Instruction {
            opcode: Opcode::GetTupleElement,
            operands: vec![call],
            attributes: index(sorted)
                .into_iter()
                .chain(crate::metadata(&sort))
                .collect(),
            ..sort
        }
    } else {
        // The sort's results in its operands' order; the keys are CUB's first.
        let order = if cub.keys == 0 { [0, 1] } else { [1, 0] };
        let elements = (0..2)
            .map(|n| added.element("sorted", operand_shapes[n].clone(), call, order[n]))
            .collect();
        Instruction {
            opcode: Opcode::Tuple,
            operands: elements,
            attributes: crate::metadata(&sort),
            ..sort
        }
    };
    added.c.instructions[i.0] = Instruction {
        payload: Payload::None,
        ..replacement
    };
}

/// The keys that sort `x` (a float array) in NumPy's order as unsigned integers of its
/// width: `-0` made `+0` and every NaN `nan`, then the bits with the sign flipped for a
/// value at or above zero and all flipped for one below (XLA's `AddNumpySortKey`).
fn numpy_keys(added: &mut Added<'_>, x: InstrId) -> InstrId {
    let span = added.span();
    let shape = added
        .c
        .instruction(x)
        .shape
        .as_array()
        .cloned()
        .expect("analyzed");
    let float = shape.element_type;
    let bits = unsigned_of_width(float.bit_width());
    let like = |t: PrimitiveType| {
        let mut s = shape.clone();
        s.element_type = t;
        Shape::Array(s)
    };
    let direction = |d: &str| vec![attribute("direction", AttrValue::Enum(d.into()), span)];
    let zero = added.constant("zero", float, Value::Float(0.0));
    let nan = added.constant("nan", float, Value::Float(f64::NAN));
    let sign_bit = Value::Int(1i128 << (float.bit_width() - 1));
    let sign = added.constant("sign", bits, sign_bit);
    let zeros = added.broadcast("zeros", like(float), zero);
    let nans = added.broadcast("nans", like(float), nan);
    let signs = added.broadcast("signs", like(bits), sign);
    let pred = like(PrimitiveType::Pred);
    let is_zero = added.op(
        "is_zero",
        Opcode::Compare,
        pred.clone(),
        vec![x, zeros],
        direction("EQ"),
    );
    let plus_zero = added.op(
        "plus_zero",
        Opcode::Select,
        like(float),
        vec![is_zero, zeros, x],
        vec![],
    );
    let is_nan = added.op(
        "is_nan",
        Opcode::Compare,
        pred.clone(),
        vec![x, x],
        direction("NE"),
    );
    let canonical = added.op(
        "canonical",
        Opcode::Select,
        like(float),
        vec![is_nan, nans, plus_zero],
        vec![],
    );
    let negative = added.op(
        "negative",
        Opcode::Compare,
        pred,
        vec![canonical, zeros],
        direction("LT"),
    );
    let raw = added.op(
        "bits",
        Opcode::BitcastConvert,
        like(bits),
        vec![canonical],
        vec![],
    );
    let flip_sign = added.op(
        "flip_sign",
        Opcode::Xor,
        like(bits),
        vec![signs, raw],
        vec![],
    );
    let flip_all = added.op("flip_all", Opcode::Not, like(bits), vec![raw], vec![]);
    added.op(
        "key",
        Opcode::Select,
        like(bits),
        vec![negative, flip_all, flip_sign],
        vec![],
    )
}

/// The unsigned integer type of `bits` bits (8 to 64).
fn unsigned_of_width(bits: u32) -> PrimitiveType {
    match bits {
        8 => PrimitiveType::U8,
        16 => PrimitiveType::U16,
        32 => PrimitiveType::U32,
        _ => PrimitiveType::U64,
    }
}
