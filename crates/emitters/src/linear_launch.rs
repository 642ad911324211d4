//! The launch of the emitters that give each thread a vector of consecutive output
//! elements in linear (physical) order: the loop emitter and the concatenate, in-place
//! dynamic-update-slice and scatter emitters, and the kernel scaffold's output loop. How
//! the launch and the thread-to-element map are chosen is in [`crate::loop_fusion`]'s
//! documentation.

use hlo::{ArrayShape, Computation};
use indexing::{IndexingMap, Interval, Variable, dim, sym};

use crate::LaunchDimensions;
use crate::partition::index_at_offset;
use crate::types::leaves;

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

/// Launch dimensions and vector factor for `elements` output elements, the factor the
/// largest power of two up to `limit` that divides `elements`.
pub fn launch_for(elements: i64, limit: i64) -> (LaunchDimensions, i64) {
    let factor = [NARROW_VECTOR_FACTOR, 4, 2, 1]
        .into_iter()
        .find(|&f| f <= limit && elements % f == 0)
        .unwrap_or(1);
    let threads = THREADS_PER_BLOCK
        .min((elements + factor - 1) / factor)
        .max(1);
    let blocks = ((elements + threads * factor - 1) / (threads * factor)).max(1);
    (LaunchDimensions::new(blocks, threads, 0), factor)
}

/// [`launch_for`]'s launch, or why a grid cannot hold its blocks.
pub(crate) fn launch_within_grid(
    elements: i64,
    limit: i64,
) -> Result<(LaunchDimensions, i64), String> {
    let (launch, factor) = launch_for(elements, limit);
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

/// The map from (thread, block)[vector_index] to the index of `shape`.
pub fn thread_to_output_map(
    shape: &ArrayShape,
    launch: &LaunchDimensions,
    factor: i64,
) -> IndexingMap {
    let threads = launch.threads_per_block as i64;
    let [grid_x, grid_y, _] = launch.grid().map(|n| n as i64);
    let block = if grid_y > 1 {
        dim(2) * grid_x + dim(1)
    } else {
        dim(1)
    };
    let linear = block * (threads * factor) + dim(0) * factor + sym(0);
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
        vec![Variable::new("vector_index", Interval::new(0, factor - 1))],
        Vec::new(),
        results,
    );
    let elements = shape.element_count();
    if (grid_x * grid_y).saturating_mul(threads * factor) > elements {
        map.add_constraint(linear, Interval::new(0, elements - 1));
    }
    map.simplified()
}
