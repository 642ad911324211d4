//! Which transposes the transpose emitter tiles, and in what form it sees them: in
//! physical order, unit dimensions dropped and adjacent ones merged.

use hlo::{Computation, InstrId, Opcode};

/// A transpose as XLA's transpose emitter sees it: in physical (layout) order, with unit
/// dimensions dropped and dimensions that stay adjacent merged (XLA's
/// `TransposeDimensionGrouper`), so `f32[2,2048,8,16] -> [2,8,16,2048]` is the 021
/// transpose of `[2,2048,128]`. Emitting on this form lets one tiling serve every rank; the
/// real shapes are bitcasts of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransposeDescription {
    /// Normalized input dimensions, major to minor.
    pub input_dims: Vec<i64>,
    /// Output dimension `i` is input dimension `permutation[i]`.
    pub permutation: Vec<usize>,
}

impl TransposeDescription {
    pub fn rank(&self) -> usize {
        self.input_dims.len()
    }

    /// Normalized output dimensions.
    pub fn output_dims(&self) -> Vec<i64> {
        self.permutation
            .iter()
            .map(|&p| self.input_dims[p])
            .collect()
    }

    /// The 102 form: the most-minor dimension stays in place and becomes part of the tile.
    pub fn minor_dim_kept(&self) -> bool {
        let n = self.rank();
        self.permutation[n - 1] == n - 1
    }
}

/// Drops unit dimensions and merges input dimensions that are adjacent in the output too.
/// `dims` are the input's (major to minor), `permutation[i]` the input dimension of output
/// dimension `i`.
pub fn normalize_transpose(dims: &[i64], permutation: &[usize]) -> (Vec<i64>, Vec<usize>) {
    // Output order of the non-unit input dimensions, renumbered densely.
    let kept: Vec<usize> = (0..dims.len()).filter(|&d| dims[d] != 1).collect();
    let renumber = |d: usize| kept.iter().position(|&k| k == d);
    let out_order: Vec<usize> = permutation.iter().filter_map(|&p| renumber(p)).collect();
    // Runs of consecutive input dimensions in output order become one dimension.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for &d in &out_order {
        match groups.last_mut() {
            Some(g) if *g.last().expect("groups are non-empty") + 1 == d => g.push(d),
            _ => groups.push(vec![d]),
        }
    }
    let mut by_input: Vec<usize> = (0..groups.len()).collect();
    by_input.sort_by_key(|&g| groups[g][0]);
    let input_dims = by_input
        .iter()
        .map(|&g| groups[g].iter().map(|&d| dims[kept[d]]).product())
        .collect();
    let permutation = (0..groups.len())
        .map(|g| {
            by_input
                .iter()
                .position(|&x| x == g)
                .expect("a permutation")
        })
        .collect();
    (input_dims, permutation)
}

/// The dimensions of `shape` in physical order (major to minor), when its layout has no
/// tiles.
fn physical_order(shape: &hlo::ArrayShape) -> Option<Vec<usize>> {
    let layout = shape.layout_or_default();
    if !layout.tiles.is_empty() {
        return None;
    }
    Some(
        layout
            .minor_to_major
            .iter()
            .rev()
            .map(|&d| d as usize)
            .collect(),
    )
}

/// The normalized description of a transpose, or of a copy to another layout, in physical
/// order.
pub fn describe_transpose(c: &Computation, hero: InstrId) -> Option<TransposeDescription> {
    let instr = c.instruction(hero);
    let out = instr.shape.as_array()?;
    let input = c.instruction(*instr.operands.first()?).shape.as_array()?;
    let perm: Vec<usize> = match instr.opcode {
        Opcode::Transpose => instr
            .int_list("dimensions")?
            .iter()
            .map(|&d| d as usize)
            .collect(),
        // A copy to another layout moves its elements as a transpose of the identity
        // permutation does (XLA's layout normalization makes it one).
        Opcode::Copy => (0..out.rank()).collect(),
        _ => return None,
    };
    let (in_order, out_order) = (physical_order(input)?, physical_order(out)?);
    if perm.len() != out.rank() || in_order.len() != input.rank() {
        return None;
    }
    let physical_dims: Vec<i64> = in_order.iter().map(|&d| input.dims[d]).collect();
    // Physical output position k holds logical output dim out_order[k], which is logical
    // input dim perm[out_order[k]], at physical input position pos_in(..).
    let physical_perm: Option<Vec<usize>> = out_order
        .iter()
        .map(|&o| {
            let p = *perm.get(o)?;
            in_order.iter().position(|&d| d == p)
        })
        .collect();
    let (input_dims, permutation) = normalize_transpose(&physical_dims, &physical_perm?);
    Some(TransposeDescription {
        input_dims,
        permutation,
    })
}

/// XLA's limits on the transposes worth a shared-memory tile: both swapped dimensions at
/// least 16, or at least 8 with 8192 elements in their product; in the 102 form, a minor
/// dimension of at most 8 bytes and at least 16 bytes per row of the tile.
const MIN_DIMENSION_TO_TILE: i64 = 16;
const MIN_DIMENSION_TO_TILE_2: i64 = 8;
const MIN_TOTAL_DIMENSIONS_TO_TILE: i64 = 64 * 128;
const MAX_BYTES_IN_MOST_MINOR_DIMENSION: i64 = 8;

/// The description of a transpose hero that the transpose emitter should tile, if it is one.
pub fn tiled_transpose(c: &Computation, hero: InstrId) -> Option<TransposeDescription> {
    let d = describe_transpose(c, hero)?;
    let n = d.rank();
    if n < 2 {
        return None;
    }
    let out = d.output_dims();
    let element = c.instruction(hero).shape.as_array()?.element_type;
    // Sub-byte elements go to the loop emitter, as XLA's do (its packed transpose of s4 is
    // not used for them): a shared tile of packed elements would need atomics per element.
    if element.bit_width() < 8 {
        return None;
    }
    // XLA asks the packed transpose first: it tiles shapes the classic limits refuse (a
    // short minor dimension packed side by side).
    let bits = i64::from(element.bit_width());
    if super::PackedTiling::new(&d, bits, bits).is_some() {
        return Some(d);
    }
    let bytes = i64::from(element.bit_width().div_ceil(8));
    let tiled = if d.minor_dim_kept() {
        let row_bytes = bytes * out[n - 1];
        row_bytes <= MAX_BYTES_IN_MOST_MINOR_DIMENSION
            && row_bytes * d.input_dims[n - 2].min(out[n - 2]) >= MIN_DIMENSION_TO_TILE
    } else {
        let (a, b) = (d.input_dims[n - 1], out[n - 1]);
        (a >= MIN_DIMENSION_TO_TILE && b >= MIN_DIMENSION_TO_TILE)
            || (a >= MIN_DIMENSION_TO_TILE_2
                && b >= MIN_DIMENSION_TO_TILE_2
                && a * b >= MIN_TOTAL_DIMENSIONS_TO_TILE)
    };
    tiled.then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalization_merges_adjacent_dimensions_and_drops_units() {
        // [2,2048,8,16] -> [2,8,16,2048]: dims 2 and 3 travel together.
        assert_eq!(
            normalize_transpose(&[2, 2048, 8, 16], &[0, 2, 3, 1]),
            (vec![2, 2048, 128], vec![0, 2, 1])
        );
        assert_eq!(
            normalize_transpose(&[1, 200, 200], &[0, 2, 1]),
            (vec![200, 200], vec![1, 0])
        );
        assert_eq!(
            normalize_transpose(&[24, 2, 24], &[2, 1, 0]),
            (vec![24, 2, 24], vec![2, 1, 0])
        );
        assert_eq!(
            normalize_transpose(&[19, 16, 16, 144], &[1, 3, 0, 2]),
            (vec![19, 16, 16, 144], vec![1, 3, 0, 2])
        );
        // An identity in disguise collapses to one dimension.
        assert_eq!(
            normalize_transpose(&[4, 1, 8], &[1, 0, 2]),
            (vec![32], vec![0])
        );
    }

    fn hero_of(text: &str) -> (hlo::HloModule, InstrId) {
        let (_, module) = hlo::load("t.hlo", text.as_bytes()).unwrap();
        let c = module.computation(module.entry);
        let root = c.root;
        (module, root)
    }

    #[test]
    fn the_tiling_rule_is_xlas() {
        let cases = [
            ("f32[20,160,170]", "f32[20,170,160]", "0,2,1", true),
            ("f32[8,8]", "f32[8,8]", "1,0", false),
            ("f32[128,64]", "f32[64,128]", "1,0", true),
            ("f32[160,170,3]", "f32[170,160,3]", "1,0,2", false), // 12-byte rows
            ("s8[160,170,3]", "s8[170,160,3]", "1,0,2", true),
            ("f32[64,64,1024]", "f32[64,64,1024]", "1,0,2", false),
        ];
        for (input, output, dims, want) in cases {
            let text = format!(
                "f {{\n  p = {input} parameter(0)\n  ROOT t = {output} transpose(p), dimensions={{{dims}}}\n}}\n"
            );
            let (module, root) = hero_of(&text);
            let c = module.computation(module.entry);
            assert_eq!(tiled_transpose(c, root).is_some(), want, "{text}");
        }
    }

    #[test]
    fn layouts_make_the_transpose_physical() {
        // A logical 10 transpose between transposed layouts moves nothing in memory.
        let text = "f {\n  p = f32[64,32]{0,1} parameter(0)\n  ROOT t = f32[32,64]{1,0} transpose(p), dimensions={1,0}\n}\n";
        let (module, root) = hero_of(text);
        let d = describe_transpose(module.computation(module.entry), root).unwrap();
        assert_eq!(d.input_dims, vec![2048]);
    }

    #[test]
    fn a_copy_to_another_layout_is_the_transpose_it_makes() {
        // JAX's form on XLA's CPU backend: a transpose that only relabels, then the copy
        // that moves the data: the copy is the hero, the 021 transpose of [4, 64, 96].
        let text = "f {\n  p = f32[4,64,96]{2,1,0} parameter(0)\n  t = f32[4,96,64]{1,2,0} transpose(p), dimensions={0,2,1}\n  ROOT c = f32[4,96,64]{2,1,0} copy(t)\n}\n";
        let (module, root) = hero_of(text);
        let c = module.computation(module.entry);
        let hero = crate::analysis::FusionAnalysis::new(c, tiled_transpose).heroes[0];
        assert_eq!(hero, root);
        let d = tiled_transpose(c, hero).expect("a tiled transpose");
        assert_eq!(
            (d.input_dims, d.permutation),
            (vec![4, 64, 96], vec![0, 2, 1])
        );
        // A copy to its own layout moves nothing: not a transpose.
        let text =
            "f {\n  p = f32[64,96]{1,0} parameter(0)\n  ROOT c = f32[64,96]{1,0} copy(p)\n}\n";
        let (module, hero) = hero_of(text);
        assert!(tiled_transpose(module.computation(module.entry), hero).is_none());
    }
}
