//! `canonicalize-gathers`: rewrites every gather into the one form the emitters index, as
//! XLA's `BatchedGatherScatterNormalizer` and `GatherSimplifier` do before fusion: indices
//! `[n, k]` with `index_vector_dim=1`, no collapsed slice dimensions, no batching
//! dimensions, `offset_dims={1, .., rank}`, so the result is `[n, slice_sizes..]`.
//!
//! The steps, each an instruction before the canonical gather or after it:
//!
//! 1. an implicit index vector (`index_vector_dim` equal to the indices' rank, one number
//!    per index) becomes an explicit trailing dimension of size 1 (`reshape`);
//! 2. operand batching dimensions become explicit indices: for each pair of an operand
//!    batching dimension and its indices batching dimension, an `iota` along the latter is
//!    concatenated to the index vectors, the operand dimension joins `start_index_map` and
//!    is collapsed (the indices are first widened to s32 or s64 when the batch does not
//!    fit their type);
//! 3. the index vector dimension moves last (`transpose`), and the batch dimensions before
//!    it are flattened into one (`reshape` to `[n, k]`);
//! 4. after the canonical gather, a `reshape` splits the batch again and drops the collapsed
//!    (size-1) slice dimensions, and a `transpose` puts the batch dimensions where the
//!    original result has them (those not in `offset_dims`).
//!
//! The original instruction becomes the last step, so its users are unchanged. The evaluator
//! reads every form as written, so `--check` compares the rewrite with the original.

use hlo::{
    AttrValue, Attribute, Computation, Diagnostic, HloModule, InstrId, Instruction, Opcode,
    Payload, PrimitiveType, Shape,
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
            let Some(numbers) = GatherNumbers::of(&gather) else {
                continue;
            };
            let indices = computation.instruction(gather.operands[1]).shape.clone();
            let (Some(indices), Some(result)) = (indices.as_array(), gather.shape.as_array())
            else {
                continue;
            };
            if numbers.is_canonical(indices.rank()) {
                continue;
            }
            let mut rewriter = Rewriter {
                computation,
                gather: &gather,
                added: Vec::new(),
            };
            let last = rewriter.rewrite(
                numbers,
                indices.element_type,
                indices.dims.clone(),
                result.element_type,
                &result.dims,
            );
            // The original instruction becomes the last step; it keeps its name, metadata
            // and layout.
            let original = &mut computation.instructions[i];
            let metadata = crate::metadata(original);
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

/// A gather's dimension numbers.
struct GatherNumbers {
    offset_dims: Vec<i64>,
    collapsed: Vec<i64>,
    start_index_map: Vec<i64>,
    operand_batching: Vec<i64>,
    indices_batching: Vec<i64>,
    index_vector_dim: usize,
    slice_sizes: Vec<i64>,
}

impl GatherNumbers {
    fn of(gather: &Instruction) -> Option<GatherNumbers> {
        let list = |name| gather.int_list(name).map_or_else(Vec::new, <[i64]>::to_vec);
        Some(GatherNumbers {
            offset_dims: list("offset_dims"),
            collapsed: list("collapsed_slice_dims"),
            start_index_map: list("start_index_map"),
            operand_batching: list("operand_batching_dims"),
            indices_batching: list("start_indices_batching_dims"),
            index_vector_dim: usize::try_from(gather.int("index_vector_dim")?).ok()?,
            slice_sizes: gather.int_list("slice_sizes")?.to_vec(),
        })
    }

    fn is_canonical(&self, indices_rank: usize) -> bool {
        let rank = self.slice_sizes.len() as i64;
        indices_rank == 2
            && self.index_vector_dim == 1
            && self.collapsed.is_empty()
            && self.operand_batching.is_empty()
            && self.offset_dims.iter().copied().eq(1..=rank)
    }
}

/// Adds the steps of one gather's rewrite to its computation.
struct Rewriter<'a> {
    computation: &'a mut Computation,
    gather: &'a Instruction,
    /// How many steps of each suffix were added (`g.indices`, `g.indices.1`, ...).
    added: Vec<(&'static str, usize)>,
}

impl Rewriter<'_> {
    /// Adds the steps before the last and returns the last (to replace the gather).
    fn rewrite(
        &mut self,
        mut numbers: GatherNumbers,
        mut index_type: PrimitiveType,
        mut index_dims: Vec<i64>,
        value_type: PrimitiveType,
        result_dims: &[i64],
    ) -> Instruction {
        let mut indices = self.gather.operands[1];
        // 1. The index vector made explicit.
        if numbers.index_vector_dim == index_dims.len() {
            index_dims.push(1);
            indices = self.push(
                Opcode::Reshape,
                index_type,
                &index_dims,
                vec![indices],
                vec![],
            );
        }
        let vector_dim = numbers.index_vector_dim;
        // 2. Batching dimensions as indices of their own.
        if !numbers.operand_batching.is_empty() {
            let largest = numbers
                .indices_batching
                .iter()
                .map(|&d| index_dims[d as usize] - 1)
                .max()
                .unwrap_or(0);
            if !fits(index_type, largest) {
                index_type = if fits(PrimitiveType::S32, largest) {
                    PrimitiveType::S32
                } else {
                    PrimitiveType::S64
                };
                indices = self.push(
                    Opcode::Convert,
                    index_type,
                    &index_dims,
                    vec![indices],
                    vec![],
                );
            }
            let mut iota_dims = index_dims.clone();
            iota_dims[vector_dim] = 1;
            let mut pieces = vec![indices];
            for &d in &numbers.indices_batching {
                let dimension = self.attribute("iota_dimension", AttrValue::Int(d));
                pieces.push(self.push(
                    Opcode::Iota,
                    index_type,
                    &iota_dims,
                    vec![],
                    vec![dimension],
                ));
            }
            index_dims[vector_dim] += numbers.operand_batching.len() as i64;
            let along = self.attribute("dimensions", AttrValue::IntList(vec![vector_dim as i64]));
            indices = self.push(
                Opcode::Concatenate,
                index_type,
                &index_dims,
                pieces,
                vec![along],
            );
            let batching = std::mem::take(&mut numbers.operand_batching);
            numbers.start_index_map.extend(&batching);
            numbers.collapsed.extend(&batching);
            numbers.collapsed.sort_unstable();
        }
        // 3. The index vector last, the batch flattened.
        let last = index_dims.len() - 1;
        if vector_dim != last {
            let order: Vec<i64> = (0..index_dims.len())
                .filter(|&d| d != vector_dim)
                .chain([vector_dim])
                .map(|d| d as i64)
                .collect();
            index_dims = order.iter().map(|&d| index_dims[d as usize]).collect();
            let dimensions = self.attribute("dimensions", AttrValue::IntList(order));
            indices = self.push(
                Opcode::Transpose,
                index_type,
                &index_dims,
                vec![indices],
                vec![dimensions],
            );
        }
        let batch_dims = index_dims[..last].to_vec();
        let n: i64 = batch_dims.iter().product();
        let k = index_dims[last];
        if index_dims.len() != 2 {
            indices = self.push(Opcode::Reshape, index_type, &[n, k], vec![indices], vec![]);
        }
        // 4. The canonical gather, then the original result's dimensions.
        let rank = numbers.slice_sizes.len() as i64;
        let canonical_dims: Vec<i64> = std::iter::once(n)
            .chain(numbers.slice_sizes.iter().copied())
            .collect();
        let attributes = vec![
            self.attribute("offset_dims", AttrValue::IntList((1..=rank).collect())),
            self.attribute("collapsed_slice_dims", AttrValue::IntList(vec![])),
            self.attribute(
                "start_index_map",
                AttrValue::IntList(numbers.start_index_map.clone()),
            ),
            self.attribute("index_vector_dim", AttrValue::Int(1)),
            self.attribute(
                "slice_sizes",
                AttrValue::IntList(numbers.slice_sizes.clone()),
            ),
        ];
        let mut steps = vec![(
            Opcode::Gather,
            canonical_dims.clone(),
            vec![self.gather.operands[0], indices],
            attributes,
        )];
        let kept = (0..rank)
            .filter(|d| !numbers.collapsed.contains(d))
            .map(|d| numbers.slice_sizes[d as usize]);
        let split: Vec<i64> = batch_dims.iter().copied().chain(kept).collect();
        if split != canonical_dims {
            steps.push((Opcode::Reshape, split.clone(), vec![], vec![]));
        }
        // Result dimension d is the next batch dimension, or the next slice one.
        let (mut next_batch, mut next_offset) = (0, batch_dims.len() as i64);
        let permutation: Vec<i64> = (0..result_dims.len() as i64)
            .map(|d| {
                let counter = if numbers.offset_dims.contains(&d) {
                    &mut next_offset
                } else {
                    &mut next_batch
                };
                *counter += 1;
                *counter - 1
            })
            .collect();
        if !permutation.iter().copied().eq(0..result_dims.len() as i64) {
            let dimensions = self.attribute("dimensions", AttrValue::IntList(permutation));
            steps.push((
                Opcode::Transpose,
                result_dims.to_vec(),
                vec![],
                vec![dimensions],
            ));
        }
        // Every step but the last is added, each the operand of the next.
        let mut previous: Option<InstrId> = None;
        let count = steps.len();
        for (i, (opcode, dims, operands, attributes)) in steps.into_iter().enumerate() {
            let operands = previous.map_or(operands, |p| vec![p]);
            let instr = self.make(opcode, value_type, &dims, operands, attributes);
            if i + 1 == count {
                return instr;
            }
            let suffix = if opcode == Opcode::Gather {
                "canonical"
            } else {
                "split"
            };
            previous = Some(self.add(instr, suffix));
        }
        unreachable!("the canonical gather is a step")
    }

    fn attribute(&self, name: &str, value: AttrValue) -> Attribute {
        Attribute {
            name: name.into(),
            value,
            span: self.gather.spans.whole,
        }
    }

    fn make(
        &self,
        opcode: Opcode,
        ty: PrimitiveType,
        dims: &[i64],
        operands: Vec<InstrId>,
        attributes: Vec<Attribute>,
    ) -> Instruction {
        Instruction {
            name: String::new(),
            opcode,
            shape: Shape::array(ty, dims.to_vec()),
            operands,
            payload: Payload::None,
            attributes,
            spans: self.gather.spans.clone(),
        }
    }

    /// Adds `instr`, named after the gather, and returns its id.
    fn add(&mut self, mut instr: Instruction, suffix: &'static str) -> InstrId {
        let count = match self.added.iter_mut().find(|(s, _)| *s == suffix) {
            Some((_, n)) => {
                *n += 1;
                *n - 1
            }
            None => {
                self.added.push((suffix, 1));
                0
            }
        };
        instr.name = if count == 0 {
            format!("{}.{suffix}", self.gather.name)
        } else {
            format!("{}.{suffix}.{count}", self.gather.name)
        };
        self.computation.instructions.push(instr);
        InstrId(self.computation.instructions.len() - 1)
    }

    /// Makes and adds an index step.
    fn push(
        &mut self,
        opcode: Opcode,
        ty: PrimitiveType,
        dims: &[i64],
        operands: Vec<InstrId>,
        attributes: Vec<Attribute>,
    ) -> InstrId {
        let instr = self.make(opcode, ty, dims, operands, attributes);
        self.add(instr, "indices")
    }
}

/// Whether `value` is representable in integer type `ty`.
fn fits(ty: PrimitiveType, value: i64) -> bool {
    let bits = ty.bit_width();
    if ty.is_unsigned_int() {
        bits >= 64 || value < 1 << bits
    } else {
        bits >= 64 || value < 1 << (bits - 1)
    }
}
