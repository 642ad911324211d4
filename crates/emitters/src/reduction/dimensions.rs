//! A reduce seen as XLA sees it (`reduction_utils.cc`): its operand folded into three
//! contiguous components, and the rules that decide whether the reduction emitter is worth
//! using at all.
//!
//! * **Row reduction** `[major reduced, kept, minor reduced]`: the reduced elements of one
//!   output element are contiguous in memory (the minor component); a `(R, K, R)` "batched"
//!   row reduction also reduces a major component.
//! * **Column reduction** `[major kept, reduced, minor kept]`: the reduced dimension sits
//!   between two kept ones, so consecutive threads read consecutive *outputs*.
//!
//! The components follow the operand's physical order (its layout), not the logical one.
//! A reduce whose kept dimensions and reduced dimensions are both non-contiguous in memory
//! has no such form and is left to the loop emitter.

use hlo::{ArrayShape, Instruction};

/// XLA's `MinThreadsXRowReduction` on CUDA: the most threads a row reduction puts on a row.
pub const MAX_THREADS_PER_ROW: i64 = 1024;
/// XLA's `BatchedReductionRaceFreeBound`: the longest major reduced component one thread
/// walks.
pub const MAX_BATCHED_ROWS: i64 = 8;
/// XLA's row tiling `{min(d0, 8), 1, 16}`: elements per thread along the minor reduced
/// component, used for the race-free bound.
const ROW_TILE_MINOR: i64 = 16;
/// XLA's column tiling `{1, 128, 1}`: reduced rows per thread, for the race-free bound.
const COLUMN_TILE_REDUCED: i64 = 128;

/// `ReductionDimensions`: the kind and the three contiguous components.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReductionDimensions {
    pub is_row: bool,
    /// Row: `[major reduced, kept, minor reduced]`; column: `[major kept, reduced, minor kept]`.
    pub dims: [i64; 3],
}

/// Row: the kept component.
pub const ROW_KEPT: usize = 1;
/// Row: the minor reduced component.
pub const ROW_MINOR_REDUCED: usize = 2;
/// Column: the major kept component.
pub const COL_MAJOR_KEPT: usize = 0;
/// Column: the reduced component.
pub const COL_REDUCED: usize = 1;
/// Column: the minor kept component.
pub const COL_MINOR_KEPT: usize = 2;

impl ReductionDimensions {
    /// A row reduction `[major reduced, kept, minor reduced]`.
    pub fn row(dims: [i64; 3]) -> ReductionDimensions {
        ReductionDimensions { is_row: true, dims }
    }

    /// A column reduction `[major kept, reduced, minor kept]`.
    pub fn column(dims: [i64; 3]) -> ReductionDimensions {
        ReductionDimensions {
            is_row: false,
            dims,
        }
    }

    /// Whether the reduction emitters take `reduce` (whose first operand has shape
    /// `operand`) as a hero (XLA's `IsRealReductionHero`): its dimensions are contiguous,
    /// and it is faster than the loop emitter and race free; any other reduce is computed
    /// by the loop emitter, whose outputs all share one index space.
    pub fn takes(reduce: &Instruction, operand: &ArrayShape) -> bool {
        ReductionDimensions::of(reduce, operand)
            .is_some_and(|d| d.is_faster_than_elemental() && d.is_race_free())
    }

    /// The components of `reduce` (whose first operand has shape `operand`), or `None` when
    /// neither its kept nor its reduced dimensions are contiguous in memory, or the layout
    /// is tiled (XLA:GPU has no tiled layouts; the index math here would not hold).
    pub fn of(reduce: &Instruction, operand: &ArrayShape) -> Option<ReductionDimensions> {
        let layout = operand.layout_or_default();
        if !layout.tiles.is_empty() {
            return None;
        }
        let reduced: Vec<i64> = reduce.int_list("dimensions")?.to_vec();
        let rank = operand.rank() as i64;
        let kept: Vec<i64> = (0..rank).filter(|d| !reduced.contains(d)).collect();
        let minor_to_major = &layout.minor_to_major;
        if kept.is_empty() {
            return Some(ReductionDimensions::row([1, 1, operand.element_count()]));
        }
        if consecutive(minor_to_major, &kept) {
            let [major, middle, minor] = partition_by_middle(operand, minor_to_major, &kept);
            return Some(if middle == 1 {
                ReductionDimensions::row([1, 1, major * minor])
            } else if minor == 1 {
                ReductionDimensions::column([1, major, middle])
            } else {
                ReductionDimensions::row([major, middle, minor])
            });
        }
        if !consecutive(minor_to_major, &reduced) {
            return None;
        }
        let [major, middle, minor] = partition_by_middle(operand, minor_to_major, &reduced);
        Some(if minor == 1 {
            ReductionDimensions::row([1, major, middle])
        } else {
            ReductionDimensions::column([major, middle, minor])
        })
    }

    /// The kept components: row `[kept]`, column `[major kept, minor kept]` (XLA's
    /// `GetOutputShape`), the space the output maps of the emitters index.
    pub fn output_shape(&self) -> Vec<i64> {
        if self.is_row {
            vec![self.dims[ROW_KEPT]]
        } else {
            vec![self.dims[COL_MAJOR_KEPT], self.dims[COL_MINOR_KEPT]]
        }
    }

    /// `IsUnnestedReductionFasterThanElemental`: a row reduction needs a warp's worth of
    /// elements per row, or rows short enough that whole rows share a warp; a column
    /// reduction must be tall enough (XLA's rule from a sweep of small column reductions).
    pub fn is_faster_than_elemental(&self) -> bool {
        if self.is_row {
            let minor = self.dims[ROW_MINOR_REDUCED];
            // (An empty row, from a zero-sized dimension, is no work for either.)
            return minor >= crate::Target::WARP_SIZE
                || (minor > 0 && crate::Target::WARP_SIZE % minor == 0);
        }
        let (major, minor) = (self.dims[COL_REDUCED], self.dims[COL_MINOR_KEPT]);
        let prefer_elemental = major < crate::Target::WARP_SIZE
            || (major < 2 * crate::Target::WARP_SIZE && minor < crate::Target::WARP_SIZE)
            || (major < 4 * crate::Target::WARP_SIZE && minor < 8)
            || (major < 8 * crate::Target::WARP_SIZE && minor < 3);
        !prefer_elemental
    }

    /// `ReductionIsRaceFree`: one block covers every reduced element of an output element,
    /// so no atomics are needed. XLA splits longer reductions beforehand
    /// (`tree_reduction_rewriter`); we leave them to the loop emitter.
    pub fn is_race_free(&self) -> bool {
        if self.is_row {
            self.dims[ROW_MINOR_REDUCED] <= MAX_THREADS_PER_ROW * ROW_TILE_MINOR
                && self.dims[0] <= MAX_BATCHED_ROWS
        } else {
            self.dims[COL_REDUCED] <= crate::Target::WARP_SIZE * COLUMN_TILE_REDUCED
        }
    }
}

/// Whether `dims` occupy consecutive positions of `minor_to_major`.
fn consecutive(minor_to_major: &[i64], dims: &[i64]) -> bool {
    let mut positions: Vec<usize> = dims
        .iter()
        .filter_map(|d| minor_to_major.iter().position(|m| m == d))
        .collect();
    if positions.len() != dims.len() {
        return false;
    }
    positions.sort_unstable();
    positions.windows(2).all(|w| w[1] == w[0] + 1)
}

/// `PartitionShapeByMiddleDimensions`: the element counts of the dimensions more major than
/// `middle`, of `middle`, and more minor, in physical order.
fn partition_by_middle(shape: &ArrayShape, minor_to_major: &[i64], middle: &[i64]) -> [i64; 3] {
    let mut values = [1i64; 3];
    // 2: minor, 1: middle, 0: major; walked from the most minor dimension.
    let mut segment = 2;
    for &d in minor_to_major {
        let in_middle = middle.contains(&d);
        if segment == 2 && in_middle {
            segment = 1;
        } else if segment == 1 && !in_middle {
            segment = 0;
        }
        values[segment] *= shape.dims[d as usize];
    }
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dims_of(text: &str) -> Option<ReductionDimensions> {
        let (_, module) = hlo::load("t.hlo", text.as_bytes()).unwrap();
        let c = module.computation(module.entry);
        let r = c.root_instruction();
        let operand = c
            .instruction(r.operands[0])
            .shape
            .as_array()
            .unwrap()
            .clone();
        ReductionDimensions::of(r, &operand)
    }

    fn fusion(shape: &str, out: &str, dims: &str) -> String {
        format!(
            "add {{\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}}\n\
             fusion {{\n p = f32[{shape} parameter(0)\n c = f32[] constant(0)\n \
             ROOT r = f32[{out}] reduce(p, c), dimensions={{{dims}}}, to_apply=add\n}}\n"
        )
    }

    #[test]
    fn components_follow_xla() {
        for (shape, out, dims, expected) in [
            ("8,2048]", "8", "1", ReductionDimensions::row([1, 8, 2048])),
            (
                "13,1051,321]",
                "13,321",
                "1",
                ReductionDimensions::column([13, 1051, 321]),
            ),
            ("8,8]", "", "0,1", ReductionDimensions::row([1, 1, 64])),
            ("4,6,32]", "6", "0,2", ReductionDimensions::row([4, 6, 32])),
            (
                "2048,64]",
                "64",
                "0",
                ReductionDimensions::column([1, 2048, 64]),
            ),
            // Column-major layout: reducing logical dim 0 reduces the minor component.
            (
                "64,16]{0,1}",
                "16",
                "0",
                ReductionDimensions::row([1, 16, 64]),
            ),
        ] {
            let got = dims_of(&fusion(shape, out, dims));
            assert_eq!(got, Some(expected), "f32[{shape} reducing {{{dims}}}");
        }
    }

    #[test]
    fn xla_rules_for_small_and_long_reductions() {
        let small_column = ReductionDimensions::column([1, 20, 64]);
        assert!(!small_column.is_faster_than_elemental());
        let short_rows = ReductionDimensions::row([1, 100, 4]);
        assert!(short_rows.is_faster_than_elemental());
        let odd_rows = ReductionDimensions::row([1, 100, 5]);
        assert!(!odd_rows.is_faster_than_elemental());
        let long_row = ReductionDimensions::row([1, 1, 20000]);
        assert!(!long_row.is_race_free());
    }
}
