//! `decompose-topk`: a top-k becomes a stable sort of the values with their indices, then a
//! slice of the first `k` of each, as XLA's `TopkDecomposer` writes it where no top-k
//! kernel is used. The sort gets a kernel of its own (`emitters::sort`), the slices fuse
//! into their users.
//!
//! Both of XLA's forms are taken: the `topk(x), k=K, largest=B` instruction (JAX's
//! unfused `lax.top_k`), whose comparator is written here — `GT` (largest) or `LT` in
//! XLA's total order, over the values only — and the `TopK` custom-call of XLA's printed
//! modules, which brings its comparator (of values and indices) along. The sort is stable,
//! so equal values keep index order, as `lax.top_k` defines.

use std::collections::HashMap;

use hlo::{
    AttrValue, Attribute, Computation, ComputationId, Diagnostic, HloModule, InstrId, Instruction,
    Opcode, Payload, PrimitiveType, Shape, Span,
};

use crate::Names;

pub(crate) fn run(module: &mut HloModule) -> Result<bool, Diagnostic> {
    let mut comparators: HashMap<(PrimitiveType, bool), ComputationId> = HashMap::new();
    let mut changed = false;
    for id in crate::control_computations(module) {
        let topks: Vec<usize> = module.computations[id.0]
            .instructions
            .iter()
            .enumerate()
            .filter(|(_, i)| i.opcode == Opcode::TopK || i.is_topk_call())
            .map(|(k, _)| k)
            .collect();
        for k in topks {
            let instr = &module.computations[id.0].instructions[k];
            let comparator = match instr.opcode {
                Opcode::TopK => {
                    let (x, _) = parts(instr)?;
                    let largest = instr.bool_value("largest").unwrap_or(true);
                    let key = (x.element_type, largest);
                    match comparators.get(&key) {
                        Some(&c) => c,
                        None => {
                            let c =
                                add_comparator(module, x.element_type, largest, instr.spans.whole);
                            comparators.insert(key, c);
                            c
                        }
                    }
                }
                _ => instr
                    .called_computations()
                    .next()
                    .map(|c| c.id)
                    .ok_or_else(|| unsupported(instr, "a TopK custom-call without a comparator"))?,
            };
            let name = module.computations[comparator.0].name.clone();
            decompose(&mut module.computations[id.0], InstrId(k), comparator, name)?;
            changed = true;
        }
    }
    Ok(changed)
}

fn unsupported(instr: &Instruction, what: &str) -> Diagnostic {
    Diagnostic::new(instr.spans.whole, format!("unsupported: {what}"))
}

/// The result's values and indices: `(T[..., k], s32[..., k])`.
fn parts(instr: &Instruction) -> Result<(&hlo::ArrayShape, &hlo::ArrayShape), Diagnostic> {
    let leaves = match &instr.shape {
        Shape::Tuple(leaves) if leaves.len() == 2 => leaves,
        _ => {
            return Err(unsupported(
                instr,
                "a top-k whose result is not (values, indices)",
            ));
        }
    };
    match (leaves[0].as_array(), leaves[1].as_array()) {
        (Some(values), Some(indices)) if indices.element_type == PrimitiveType::S32 => {
            Ok((values, indices))
        }
        _ => Err(unsupported(instr, "a top-k whose indices are not s32")),
    }
}

/// Adds XLA's top-k comparator for `ty`: `compare(a, b)`, `GT` when the largest come
/// first, else `LT`, in total order for floats; parameters 2 and 3 (the indices) unused.
fn add_comparator(
    module: &mut HloModule,
    ty: PrimitiveType,
    largest: bool,
    span: Span,
) -> ComputationId {
    let mut names = Names {
        taken: module.computations.iter().map(|c| c.name.clone()).collect(),
        ..Names::default()
    };
    let direction = if largest { "greater-than" } else { "less-than" };
    let name = names.unique(&format!("compare-{direction}.{ty}"));
    let scalar = |t: PrimitiveType| Shape::array(t, Vec::new());
    let param = |name: &str, number: i64, t| Instruction {
        name: name.into(),
        opcode: Opcode::Parameter,
        shape: scalar(t),
        operands: Vec::new(),
        payload: Payload::Parameter(number),
        attributes: Vec::new(),
        spans: hlo::module::InstrSpans {
            whole: span,
            ..Default::default()
        },
    };
    let mut attributes = vec![attr(
        "direction",
        AttrValue::Enum(if largest { "GT" } else { "LT" }.into()),
        span,
    )];
    if ty.is_float() {
        attributes.push(attr("type", AttrValue::Enum("TOTALORDER".into()), span));
    }
    let instructions = vec![
        param("lhs", 0, ty),
        param("rhs", 1, ty),
        param("lhs_index", 2, PrimitiveType::S32),
        param("rhs_index", 3, PrimitiveType::S32),
        Instruction {
            name: "compare".into(),
            opcode: Opcode::Compare,
            shape: scalar(PrimitiveType::Pred),
            operands: vec![InstrId(0), InstrId(1)],
            payload: Payload::None,
            attributes,
            spans: hlo::module::InstrSpans {
                whole: span,
                ..Default::default()
            },
        },
    ];
    module.computations.push(Computation {
        name,
        span,
        is_entry: false,
        signature: None,
        instructions,
        root: InstrId(4),
        attributes: Vec::new(),
    });
    ComputationId(module.computations.len() - 1)
}

fn attr(name: &str, value: AttrValue, span: Span) -> Attribute {
    Attribute {
        name: name.into(),
        value,
        span,
    }
}

/// Top-k `k` of `c` replaced by `tuple(slice(gte(sort, 0)), slice(gte(sort, 1)))` of a
/// stable sort of its operand and an iota of the last dimension by `comparator`.
fn decompose(
    c: &mut Computation,
    k: InstrId,
    comparator: ComputationId,
    comparator_name: String,
) -> Result<(), Diagnostic> {
    let topk = c.instructions[k.0].clone();
    let (values, indices) = parts(&topk)?;
    let (values, indices) = (values.clone(), indices.clone());
    let Some(x) = topk.operands.first().copied() else {
        return Err(unsupported(&topk, "a top-k without an operand"));
    };
    let Some(input) = c.instructions[x.0].shape.as_array().cloned() else {
        return Err(unsupported(&topk, "a top-k of a tuple"));
    };
    let span = topk.spans.whole;
    let last = input
        .rank()
        .checked_sub(1)
        .ok_or_else(|| unsupported(&topk, "a top-k of a scalar"))?;
    let mut names = Names::of(c);
    let mut add = |c: &mut Computation, name: &str, opcode, shape, operands, attributes| {
        c.instructions.push(Instruction {
            name: names.unique(&format!("{}.{name}", topk.name)),
            opcode,
            shape,
            operands,
            payload: Payload::None,
            attributes,
            spans: topk.spans.clone(),
        });
        InstrId(c.instructions.len() - 1)
    };
    let positions_shape = Shape::array(PrimitiveType::S32, input.dims.clone());
    let iota = add(
        c,
        "indices",
        Opcode::Iota,
        positions_shape.clone(),
        Vec::new(),
        vec![attr("iota_dimension", AttrValue::Int(last as i64), span)],
    );
    let sorted_shape = Shape::Tuple(vec![Shape::Array(input.clone()), positions_shape.clone()]);
    let mut sort_attributes = vec![
        attr("dimensions", AttrValue::IntList(vec![last as i64]), span),
        attr("is_stable", AttrValue::Bool(true), span),
        attr(
            "to_apply",
            AttrValue::Computation(hlo::module::ComputationRef {
                name: comparator_name,
                id: comparator,
                span,
            }),
            span,
        ),
    ];
    sort_attributes.extend(crate::metadata(&topk));
    let sort = add(
        c,
        "sort",
        Opcode::Sort,
        sorted_shape,
        vec![x, iota],
        sort_attributes,
    );
    let mut outputs = Vec::new();
    for (index, shape) in [values, indices].into_iter().enumerate() {
        let whole = Shape::Array(hlo::ArrayShape {
            dims: input.dims.clone(),
            ..shape.clone()
        });
        let sorted = add(
            c,
            "sorted",
            Opcode::GetTupleElement,
            whole,
            vec![sort],
            vec![attr("index", AttrValue::Int(index as i64), span)],
        );
        let slice = input
            .dims
            .iter()
            .zip(&shape.dims)
            .map(|(_, &limit)| hlo::module::SliceDim {
                start: 0,
                limit,
                stride: 1,
            })
            .collect();
        outputs.push(add(
            c,
            "top",
            Opcode::Slice,
            Shape::Array(shape),
            vec![sorted],
            vec![attr("slice", AttrValue::Slice(slice), span)],
        ));
    }
    // The top-k keeps its name, now a tuple of the two slices.
    c.instructions[k.0] = Instruction {
        opcode: Opcode::Tuple,
        operands: outputs,
        payload: Payload::None,
        attributes: Vec::new(),
        ..topk
    };
    Ok(())
}
