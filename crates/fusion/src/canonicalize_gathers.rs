//! `canonicalize-gathers`: rewrites gathers into the form the emitters index, as XLA's
//! `GatherSimplifier` does before fusion: indices `[batch, k]` with `index_vector_dim=1`, no
//! collapsed slice dimensions, `offset_dims={1, .., rank}`, so the result is `[batch,
//! slice_sizes..]`. The original result follows by a `reshape` dropping the collapsed
//! (size-1) dimensions and, when the batch dimension is not first, a `transpose`.
//!
//! Covered: one batch dimension of indices (`[n]` with `index_vector_dim=1` as JAX's
//! `table[ids]` writes it, or `[n, k]`) and no operand batching dimensions. Other gathers are
//! left as written (the emitters then say what they do not support).

use hlo::{
    AttrValue, Attribute, Diagnostic, HloModule, InstrId, Instruction, Opcode, Payload, Shape,
};

pub(crate) fn run(module: &mut HloModule) -> Result<bool, Diagnostic> {
    let mut changed = false;
    for computation in &mut module.computations {
        for i in 0..computation.instructions.len() {
            let candidate = &computation.instructions[i];
            if candidate.opcode != Opcode::Gather || candidate.operands.len() != 2 {
                continue;
            }
            // Cloned only when it is a gather: the pass visits every instruction.
            let gather = candidate.clone();
            let indices_shape = computation.instructions[gather.operands[1].0].shape.clone();
            let (Some(indices_shape), Some(value_type)) = (
                indices_shape.as_array(),
                gather.shape.as_array().map(|a| a.element_type),
            ) else {
                continue;
            };
            let Some(rewrite) = canonical_form(&gather, &indices_shape.dims) else {
                continue;
            };
            let index_type = indices_shape.element_type;
            let mut push = |mut instr: Instruction, suffix: &str| {
                instr.name = format!("{}.{suffix}", gather.name);
                computation.instructions.push(instr);
                InstrId(computation.instructions.len() - 1)
            };
            let make = |opcode, dims: Vec<i64>, ty, operands, attributes| Instruction {
                name: String::new(),
                opcode,
                shape: Shape::array(ty, dims),
                operands,
                payload: Payload::None,
                attributes,
                spans: gather.spans.clone(),
            };
            let mut indices = gather.operands[1];
            if let Some(dims) = rewrite.reshape_indices {
                indices = push(
                    make(Opcode::Reshape, dims, index_type, vec![indices], vec![]),
                    "indices",
                );
            }
            let attribute = |name: &str, value| Attribute {
                name: name.into(),
                value,
                span: gather.spans.whole,
            };
            let canonical = make(
                Opcode::Gather,
                rewrite.canonical_dims.clone(),
                value_type,
                vec![gather.operands[0], indices],
                vec![
                    attribute(
                        "offset_dims",
                        AttrValue::IntList((1..rewrite.canonical_dims.len() as i64).collect()),
                    ),
                    attribute("collapsed_slice_dims", AttrValue::IntList(vec![])),
                    attribute(
                        "start_index_map",
                        AttrValue::IntList(rewrite.start_index_map.clone()),
                    ),
                    attribute("index_vector_dim", AttrValue::Int(1)),
                    attribute(
                        "slice_sizes",
                        AttrValue::IntList(rewrite.slice_sizes.clone()),
                    ),
                ],
            );
            let mut value = push(canonical, "canonical");
            let last = match rewrite.transpose {
                None => make(
                    Opcode::Reshape,
                    rewrite.reshaped_dims.clone(),
                    value_type,
                    vec![value],
                    vec![],
                ),
                Some(permutation) => {
                    value = push(
                        make(
                            Opcode::Reshape,
                            rewrite.reshaped_dims.clone(),
                            value_type,
                            vec![value],
                            vec![],
                        ),
                        "collapsed",
                    );
                    let dims = permutation
                        .iter()
                        .map(|&p| rewrite.reshaped_dims[p as usize])
                        .collect();
                    make(
                        Opcode::Transpose,
                        dims,
                        value_type,
                        vec![value],
                        vec![attribute("dimensions", AttrValue::IntList(permutation))],
                    )
                }
            };
            // The original instruction becomes the last step, so its users are unchanged;
            // it keeps its name, metadata and layout.
            let original = &mut computation.instructions[i];
            let metadata: Vec<Attribute> = original
                .attributes
                .iter()
                .filter(|a| a.name == "metadata")
                .cloned()
                .collect();
            let shape = original.shape.clone();
            *original = Instruction {
                name: original.name.clone(),
                shape,
                attributes: [last.attributes, metadata].concat(),
                ..last
            };
            changed = true;
        }
    }
    Ok(changed)
}

/// What the canonical form of a gather needs.
struct Rewrite {
    /// `[n, 1]` for rank-1 indices.
    reshape_indices: Option<Vec<i64>>,
    start_index_map: Vec<i64>,
    slice_sizes: Vec<i64>,
    /// `[batch, slice_sizes..]`.
    canonical_dims: Vec<i64>,
    /// `[batch, slice sizes that are not collapsed..]`.
    reshaped_dims: Vec<i64>,
    /// From `reshaped_dims` to the original result, when the batch dimension is not first.
    transpose: Option<Vec<i64>>,
}

/// The rewrite of gather `instr` (indices of dimensions `indices`), when it is of the
/// covered kinds and not yet canonical.
fn canonical_form(instr: &Instruction, indices: &[i64]) -> Option<Rewrite> {
    let result = instr.shape.as_array()?;
    let collapsed = instr.int_list("collapsed_slice_dims")?.to_vec();
    let offset_dims = instr.int_list("offset_dims")?.to_vec();
    let start_index_map = instr.int_list("start_index_map")?.to_vec();
    let slice_sizes = instr.int_list("slice_sizes")?.to_vec();
    let index_vector_dim = instr.int("index_vector_dim")?;
    if instr
        .int_list("operand_batching_dims")
        .is_some_and(|d| !d.is_empty())
        || index_vector_dim != 1
        || !(1..=2).contains(&indices.len())
    {
        return None;
    }
    let rank = slice_sizes.len() as i64;
    if collapsed.is_empty() && offset_dims.iter().copied().eq(1..=rank) {
        return None; // already canonical
    }
    // The result has one batch dimension and the slice dimensions that are not collapsed.
    if result.rank() as i64 != 1 + rank - collapsed.len() as i64 {
        return None;
    }
    let batch_position = (0..result.rank() as i64).find(|d| !offset_dims.contains(d))?;
    let batch = result.dims[batch_position as usize];
    if indices.first() != Some(&batch)
        || (indices.len() == 2 && indices[1] != start_index_map.len() as i64)
    {
        return None;
    }
    if collapsed
        .iter()
        .any(|&d| slice_sizes.get(d as usize) != Some(&1))
    {
        return None;
    }
    let kept: Vec<i64> = (0..rank)
        .filter(|d| !collapsed.contains(d))
        .map(|d| slice_sizes[d as usize])
        .collect();
    let reshaped_dims: Vec<i64> = std::iter::once(batch).chain(kept).collect();
    // Result dimension `d` reads reshaped dimension 0 (batch) or the next offset one.
    let mut next_offset = 1;
    let permutation: Vec<i64> = (0..result.rank() as i64)
        .map(|d| {
            if d == batch_position {
                0
            } else {
                next_offset += 1;
                next_offset - 1
            }
        })
        .collect();
    let identity = permutation.iter().copied().eq(0..result.rank() as i64);
    Some(Rewrite {
        // `[n]` with index_vector_dim=1 is `[n, 1]` with the index vector made explicit.
        reshape_indices: (indices.len() == 1).then(|| vec![batch, 1]),
        canonical_dims: std::iter::once(batch)
            .chain(slice_sizes.iter().copied())
            .collect(),
        start_index_map,
        slice_sizes,
        reshaped_dims,
        transpose: (!identity).then_some(permutation),
    })
}
