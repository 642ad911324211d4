//! `dot`'s dimension numbers: which dimensions of the two operands are batch dimensions
//! (paired, in order), which are contracted (paired, in order), and what the result's
//! dimensions are — the batch dimensions, then the left operand's other dimensions, then
//! the right operand's, each in order (XLA's `DotDimensionNumbers`). Shape inference, the
//! evaluator, the indexing maps and the emitter read them from here.

use crate::module::{AttrValue, Instruction};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DotDimensions {
    pub lhs_batch: Vec<usize>,
    pub rhs_batch: Vec<usize>,
    pub lhs_contracting: Vec<usize>,
    pub rhs_contracting: Vec<usize>,
}

impl DotDimensions {
    /// The attributes of `instr` (absent lists are empty); `None` when one is not a list
    /// of non-negative integers. Ranges and pairings are the verifier's to check.
    pub fn of(instr: &Instruction) -> Option<DotDimensions> {
        let list = |name: &str| -> Option<Vec<usize>> {
            match instr.attribute(name).map(|a| &a.value) {
                None => Some(Vec::new()),
                Some(AttrValue::IntList(v)) => v.iter().map(|&d| usize::try_from(d).ok()).collect(),
                Some(_) => None,
            }
        };
        Some(DotDimensions {
            lhs_batch: list("lhs_batch_dims")?,
            rhs_batch: list("rhs_batch_dims")?,
            lhs_contracting: list("lhs_contracting_dims")?,
            rhs_contracting: list("rhs_contracting_dims")?,
        })
    }

    /// The dimensions of an operand of `rank` that are neither batch nor contracted, in
    /// order (`left`: of the left operand).
    pub fn free(&self, left: bool, rank: usize) -> Vec<usize> {
        let (batch, contracting) = if left {
            (&self.lhs_batch, &self.lhs_contracting)
        } else {
            (&self.rhs_batch, &self.rhs_contracting)
        };
        (0..rank)
            .filter(|d| !batch.contains(d) && !contracting.contains(d))
            .collect()
    }

    /// The result's dimensions for operands of dimensions `lhs` and `rhs`.
    pub fn result_dims(&self, lhs: &[i64], rhs: &[i64]) -> Vec<i64> {
        let batch = self.lhs_batch.iter().map(|&d| lhs[d]);
        let left = self.free(true, lhs.len()).into_iter().map(|d| lhs[d]);
        let right = self.free(false, rhs.len()).into_iter().map(|d| rhs[d]);
        batch.chain(left).chain(right).collect()
    }
}
