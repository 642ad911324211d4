//! A scatter's dimension numbers, read once for the evaluator, the scatter emitter and the
//! drawing of unique indices.

use crate::module::Instruction;

/// The attributes that say how a scatter's updates address its operand (XLA's
/// `ScatterDimensionNumbers`), as dimension numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScatterDimensions {
    pub update_window_dims: Vec<usize>,
    pub inserted_window_dims: Vec<usize>,
    pub scatter_dims_to_operand_dims: Vec<usize>,
    /// The indices dimension holding the index vectors; the indices' rank when each index
    /// is one number (an implicit trailing dimension of size 1).
    pub index_vector_dim: usize,
    pub input_batching_dims: Vec<usize>,
    pub scatter_indices_batching_dims: Vec<usize>,
}

impl ScatterDimensions {
    /// The dimension numbers of `instr`, a scatter whose indices have rank `indices_rank`.
    pub fn of(instr: &Instruction, indices_rank: usize) -> Result<ScatterDimensions, String> {
        let dims = |name: &str| -> Result<Vec<usize>, String> {
            instr
                .int_list(name)
                .unwrap_or_default()
                .iter()
                .map(|&d| usize::try_from(d).map_err(|_| format!("{name}: negative dimension {d}")))
                .collect()
        };
        Ok(ScatterDimensions {
            update_window_dims: dims("update_window_dims")?,
            inserted_window_dims: dims("inserted_window_dims")?,
            scatter_dims_to_operand_dims: dims("scatter_dims_to_operand_dims")?,
            index_vector_dim: match instr.int("index_vector_dim") {
                Some(d) => usize::try_from(d)
                    .map_err(|_| format!("index_vector_dim: negative dimension {d}"))?,
                None => indices_rank,
            },
            input_batching_dims: dims("input_batching_dims")?,
            scatter_indices_batching_dims: dims("scatter_indices_batching_dims")?,
        })
    }

    /// The operand dimensions the update window walks, in order: those neither inserted nor
    /// batching.
    pub fn operand_window_dims(&self, operand_rank: usize) -> Vec<usize> {
        (0..operand_rank)
            .filter(|d| {
                !self.inserted_window_dims.contains(d) && !self.input_batching_dims.contains(d)
            })
            .collect()
    }

    /// The window's size along each operand dimension (1 where it is inserted or batching),
    /// for updates of `update_dims`.
    pub fn window_sizes(&self, operand_rank: usize, update_dims: &[i64]) -> Vec<i64> {
        let mut sizes = vec![1; operand_rank];
        for (d, &u) in self
            .operand_window_dims(operand_rank)
            .into_iter()
            .zip(&self.update_window_dims)
        {
            sizes[d] = update_dims.get(u).copied().unwrap_or(1);
        }
        sizes
    }
}
