//! `normalize-topk`: JAX's unfused `lax.top_k`, a `topk(x), k=K, largest=B` instruction,
//! becomes the form XLA's printed modules have (XLA's `TopkRewriter` makes it): a `TopK`
//! custom-call whose comparator, written here, is `GT` (largest first) or `LT`, in XLA's total
//! order for floats, over the values (parameters 0 and 1; 2 and 3 are the indices). One form
//! is left for the sort emitter, which writes a top-k as one kernel: the rows sorted in shared
//! memory, the first `k` of each stored. A top-k whose rows no block holds becomes what XLA's
//! `TopkDecomposer` makes of it: a sort of the values and their positions with the same
//! comparator, then the first `k` of each sliced (the sort goes on to `sort-rewriter` or
//! `split-long-sorts`).

use std::collections::HashMap;

use hlo::{
    AttrValue, Computation, ComputationId, Diagnostic, HloModule, InstrId, Instruction, Opcode,
    Payload, PrimitiveType, Shape, Span,
};

use crate::{Added, Names, attribute};

pub(crate) fn run(module: &mut HloModule) -> Result<bool, Diagnostic> {
    let mut comparators: HashMap<(PrimitiveType, bool), ComputationId> = HashMap::new();
    let mut changed = false;
    for id in crate::control_computations(module) {
        for k in 0..module.computations[id.0].instructions.len() {
            let instr = &module.computations[id.0].instructions[k];
            if instr.opcode != Opcode::TopK {
                continue;
            }
            let (x, _) = parts(instr)?;
            let largest = instr.bool_value("largest").unwrap_or(true);
            let key = (x.element_type, largest);
            let span = instr.spans.whole;
            let comparator = match comparators.get(&key) {
                Some(&c) => c,
                None => {
                    let c = add_comparator(module, x.element_type, largest, span);
                    comparators.insert(key, c);
                    c
                }
            };
            let name = module.computations[comparator.0].name.clone();
            as_custom_call(&mut module.computations[id.0], InstrId(k), comparator, name);
            changed = true;
        }
        let c = &module.computations[id.0];
        let long: Vec<InstrId> = (0..c.instructions.len())
            .map(InstrId)
            .filter(|&i| c.instruction(i).is_topk_call() && !fits_a_block(c, i))
            .collect();
        let c = &mut module.computations[id.0];
        let mut names = Names::of(c);
        for &i in &long {
            decompose(c, i, &mut names)?;
        }
        if !long.is_empty() {
            crate::put_operands_first(c);
            changed = true;
        }
    }
    Ok(changed)
}

/// Whether the sort emitter holds the rows of top-k call `i` of `c` (values and positions)
/// in a block's shared memory.
fn fits_a_block(c: &Computation, i: InstrId) -> bool {
    let operand = c.instruction(i).operands.first();
    let Some(x) = operand.and_then(|&o| c.instruction(o).shape.as_array()) else {
        return true;
    };
    x.dims
        .last()
        .is_none_or(|&n| n <= emitters::sort::SortFusion::row_capacity(&[x]))
}

/// Top-k call `i` of `c` as XLA's `TopkDecomposer` writes it: `sort(x, iota)` along the last
/// dimension with the call's comparator (values, then positions), and the first `k` of each
/// sorted array; the call becomes the tuple of the two slices.
fn decompose(c: &mut Computation, i: InstrId, names: &mut Names) -> Result<(), Diagnostic> {
    let call = c.instruction(i).clone();
    let (values, _) = parts(&call)?;
    let (values, k) = (values.clone(), values.dims.last().copied().unwrap_or(0));
    // `values` is `[..., k]`: the sorted arrays' first `k` along the last dimension.
    let Some(&x) = call.operands.first() else {
        return Err(unsupported(&call, "a top-k without an operand"));
    };
    let x_shape = c.instruction(x).shape.clone();
    let Some(comparator) = call.called_computations().next().cloned() else {
        return Err(unsupported(&call, "a top-k without a comparator"));
    };
    let dims = x_shape
        .as_array()
        .map(|a| a.dims.clone())
        .unwrap_or_default();
    let last = dims.len().saturating_sub(1) as i64;
    let rows_kept = values.dims.len() == dims.len()
        && values.dims[..values.dims.len().saturating_sub(1)] == dims[..last as usize]
        && dims.last().is_some_and(|&n| k <= n);
    if call.operands.len() != 1 || !rows_kept {
        return Err(unsupported(
            &call,
            "a top-k that is not (values, s32 indices) of one operand",
        ));
    }
    let mut added = Added {
        c,
        names,
        of: call.clone(),
    };
    let span = added.span();
    let positions = Shape::array(PrimitiveType::S32, dims.clone());
    let along = attribute("iota_dimension", AttrValue::Int(last), span);
    let iota = added.op(
        "positions",
        Opcode::Iota,
        positions.clone(),
        vec![],
        vec![along],
    );
    let attributes = vec![
        attribute("dimensions", AttrValue::IntList(vec![last]), span),
        attribute("is_stable", AttrValue::Bool(true), span),
        attribute("to_apply", AttrValue::Computation(comparator), span),
    ];
    let sorted = Shape::Tuple(vec![x_shape.clone(), positions.clone()]);
    let sort = added.op("sort", Opcode::Sort, sorted, vec![x, iota], attributes);
    let mut firsts = Vec::new();
    for (index, shape) in [(0, x_shape), (1, positions)] {
        let whole = added.element("sorted", shape.clone(), sort, index);
        let t = shape
            .as_array()
            .map(|a| a.element_type)
            .unwrap_or(PrimitiveType::S32);
        let limits: Vec<hlo::module::SliceDim> = (dims.iter().enumerate())
            .map(|(d, &size)| hlo::module::SliceDim {
                start: 0,
                limit: if d as i64 == last { k } else { size },
                stride: 1,
            })
            .collect();
        let slice = attribute("slice", AttrValue::Slice(limits), span);
        let first = Shape::array(t, values.dims.clone());
        firsts.push(added.op("first", Opcode::Slice, first, vec![whole], vec![slice]));
    }
    let rewritten = &mut added.c.instructions[i.0];
    rewritten.opcode = Opcode::Tuple;
    rewritten.operands = firsts;
    rewritten.attributes = crate::metadata(&call);
    Ok(())
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
    let mut attributes = vec![attribute(
        "direction",
        AttrValue::Enum(if largest { "GT" } else { "LT" }.into()),
        span,
    )];
    if ty.is_float() {
        attributes.push(attribute(
            "type",
            AttrValue::Enum("TOTALORDER".into()),
            span,
        ));
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

/// Top-k `k` of `c` rewritten in place as XLA's `TopK` custom-call with `comparator`; it
/// keeps its name, shape, operand and metadata.
fn as_custom_call(
    c: &mut Computation,
    k: InstrId,
    comparator: ComputationId,
    comparator_name: String,
) {
    let topk = &mut c.instructions[k.0];
    let span = topk.spans.whole;
    let mut attributes = vec![
        attribute("custom_call_target", AttrValue::Str("TopK".into()), span),
        attribute(
            "called_computations",
            AttrValue::Computations(vec![hlo::module::ComputationRef {
                name: comparator_name,
                id: comparator,
                span,
            }]),
            span,
        ),
    ];
    attributes.extend(crate::metadata(topk));
    topk.opcode = Opcode::CustomCall;
    topk.attributes = attributes;
}
