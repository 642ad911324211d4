//! The launch of the emitters that give each thread a vector of consecutive output
//! elements in linear (physical) order: the loop emitter and the concatenate, in-place
//! dynamic-update-slice and scatter emitters, and the kernel scaffold's output loop. How
//! the launch and the thread-to-element map are chosen is in [`crate::loop_fusion`]'s
//! documentation.

use hlo::{ArrayShape, Computation, Opcode};
use indexing::{IndexingMap, Interval, Variable, dim, sym};

use crate::partition::index_at_offset;
use crate::types::leaves;
use crate::{Choices, LaunchDimensions, Target};

/// Threads per block of the loop emitter.
pub const THREADS_PER_BLOCK: i64 = 128;
/// The vector/unroll factor of emitters that take one element per thread and lane.
pub const DEFAULT_VECTOR_FACTOR: i64 = 4;
/// The loop emitter's factor for fusions of 16-bit (or narrower) buffers only: 8 elements,
/// one 128-bit access per 16-bit buffer.
const NARROW_VECTOR_FACTOR: i64 = 8;

/// The vector limit of a loop fusion: [`NARROW_VECTOR_FACTOR`] when every buffer it reads
/// or writes has elements of 16 bits or fewer, else [`DEFAULT_VECTOR_FACTOR`] (a 32-bit
/// buffer then already moves 16 bytes per thread; more would cost registers, not bandwidth).
pub fn vector_limit(fusion: &Computation) -> i64 {
    let root = fusion.root_instruction();
    let mut buffers = fusion
        .parameters()
        .into_iter()
        .flat_map(|p| leaves(&fusion.instruction(p).shape))
        .chain(leaves(&root.shape));
    if buffers.all(|a| (1..=16).contains(&a.element_type.bit_width())) {
        NARROW_VECTOR_FACTOR
    } else {
        DEFAULT_VECTOR_FACTOR
    }
}

/// The vector factor of a loop-like fusion (`elements` output elements, the fusion
/// `computation`) for `target`: ours, the largest power of two up to `limit` that divides
/// `elements`, or XLA's ([`xla_unroll_factor`]).
pub fn vector_factor(target: Target, computation: &Computation, elements: i64, limit: i64) -> i64 {
    match target.choices {
        Choices::Tuned => largest_factor(elements, limit),
        Choices::Xla => xla_unroll_factor(computation, elements),
    }
}

/// The largest power of two up to `limit` (and 8) that divides `elements`.
fn largest_factor(elements: i64, limit: i64) -> i64 {
    [NARROW_VECTOR_FACTOR, 4, 2, 1]
        .into_iter()
        .find(|&f| f <= limit && elements % f == 0)
        .unwrap_or(1)
}

/// XLA's unroll factor (its `ComputeLoopFusionConfig`): none for outputs smaller than the
/// threads the GPU holds at once or for fusions it expects to vectorize badly (a dot, a
/// sort, a concatenate of more than 10 operands, a variadic reduce), else the largest of
/// 4 and 2 that divides `elements`; and at least enough elements that a thread writes
/// whole bytes of its narrowest output (2 for s4).
pub fn xla_unroll_factor(computation: &Computation, elements: i64) -> i64 {
    let prevents_vectorization = computation.instructions.iter().any(|i| match i.opcode {
        Opcode::Dot | Opcode::Sort => true,
        Opcode::Concatenate => i.operands.len() > 10,
        Opcode::Reduce => i.shape.as_array().is_none(),
        _ => false,
    });
    let mut factor = 1;
    if elements >= Target::CORE_COUNT * Target::THREADS_PER_CORE && !prevents_vectorization {
        factor = largest_factor(elements, 4);
    }
    let narrowest = leaves(&computation.root_instruction().shape)
        .iter()
        .map(|a| i64::from(a.element_type.bit_width()))
        .filter(|&bits| bits > 0)
        .min()
        .unwrap_or(8);
    factor.max((8 + narrowest - 1) / narrowest)
}

/// Launch dimensions for `elements` output elements, `factor` of them a thread.
pub fn launch_for(elements: i64, factor: i64) -> LaunchDimensions {
    let threads = THREADS_PER_BLOCK
        .min((elements + factor - 1) / factor)
        .max(1);
    let blocks = ((elements + threads * factor - 1) / (threads * factor)).max(1);
    LaunchDimensions::new(blocks, threads, 0)
}

/// [`launch_for`]'s launch with [`vector_factor`]'s factor, or why a grid cannot hold its
/// blocks.
pub(crate) fn launch_within_grid(
    target: Target,
    computation: &Computation,
    elements: i64,
    limit: i64,
) -> Result<(LaunchDimensions, i64), String> {
    let factor = vector_factor(target, computation, elements, limit);
    let launch = launch_for(elements, factor);
    if launch.blocks > crate::Target::MAX_GRID_X * crate::Target::MAX_GRID_YZ {
        return Err(format!(
            "{} blocks, more than a grid holds ({} x {})",
            launch.blocks,
            crate::Target::MAX_GRID_X,
            crate::Target::MAX_GRID_YZ
        ));
    }
    Ok((launch, factor))
}

/// The map from (thread, block)[vector_index] to the index of `shape`. With XLA's choices
/// a factor of 1 leaves no `vector_index` (XLA drops a symbol whose range is one value).
pub fn thread_to_output_map(
    shape: &ArrayShape,
    launch: &LaunchDimensions,
    factor: i64,
    choices: Choices,
) -> IndexingMap {
    let threads = launch.threads_per_block as i64;
    let [grid_x, grid_y, _] = launch.grid().map(|n| n as i64);
    let block = if grid_y > 1 {
        dim(2) * grid_x + dim(1)
    } else {
        dim(1)
    };
    let vector_index = (factor > 1 || choices == Choices::Tuned)
        .then(|| Variable::new("vector_index", Interval::new(0, factor - 1)));
    let linear = match vector_index {
        Some(_) => block * (threads * factor) + dim(0) * factor + sym(0),
        None => block * threads + dim(0),
    };
    let results = index_at_offset(linear.clone(), shape);
    let mut dims = vec![
        Variable::new("th_x", Interval::new(0, threads - 1)),
        Variable::new("bl_x", Interval::new(0, grid_x - 1)),
    ];
    if grid_y > 1 {
        dims.push(Variable::new("bl_y", Interval::new(0, grid_y - 1)));
    }
    let mut map = IndexingMap::new(
        dims,
        vector_index.into_iter().collect(),
        Vec::new(),
        results,
    );
    let elements = shape.element_count();
    if (grid_x * grid_y).saturating_mul(threads * factor) > elements {
        map.add_constraint(linear, Interval::new(0, elements - 1));
    }
    map.simplified()
}
