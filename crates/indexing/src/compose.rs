//! Composition of indexing maps.
//!
//! Indexing maps point from an output to what it reads: a consumer's map takes its output
//! index to the index of one of its operands, and the producer of that operand has a map
//! from *its* output (that operand) to its own operands. [`IndexingMap::compose`] chains
//! them, following the fusion graph from the root towards the parameters:
//!
//! ```text
//! self:     (d)[s]{r}    -> (e_0, .., e_k)        consumer output -> operand
//! producer: (p_0..p_k)[t]{q} -> (f_0, .., f_n)    operand -> producer's operand
//! result:   (d)[s, t]{r, q} -> (f_i[p := e, ..])  consumer output -> producer's operand
//! ```
//!
//! Symbols: `self`'s range variables, then the producer's; then `self`'s runtime
//! variables, then the producer's (runtime variables always follow range variables).
//! Domain: `self`'s dimensions with their ranges; both maps' constraints (the producer's
//! with its dimensions replaced by `e`); and `e_i in range(p_i)`, because the producer's
//! map is only defined on its domain. XLA's `ComposeIndexingMaps` puts the producer's
//! range variables first; this crate keeps the consumer's first so that a map's symbols
//! keep their numbers as more producers are composed onto it (a decision of this project).
//!
//! The result is not simplified: call [`IndexingMap::simplify`] (the bound constraints
//! usually hold by construction and disappear then).

use crate::expr::AffineExpr;
use crate::map::{IndexingMap, Variable};

/// Whether `name` is the default name `<prefix><index>`.
fn is_default_name(name: &str, prefix: &str, index: usize) -> bool {
    name.strip_prefix(prefix)
        .is_some_and(|rest| rest == index.to_string())
}

/// A symbol moved from position `old` to `new` among its kind keeps a default name in
/// step with its position (`s1` becomes `s3`); other names are kept.
pub(crate) fn renumbered(v: &Variable, prefix: &str, old: usize, new: usize) -> Variable {
    let mut v = v.clone();
    if is_default_name(&v.name, prefix, old) {
        v.name = format!("{prefix}{new}");
    }
    v
}

impl IndexingMap {
    /// `producer ∘ self`: first `self` (consumer output → operand index), then `producer`
    /// (operand index → the producer's operand index); see the module documentation for
    /// the order of symbols and the constraints added.
    ///
    /// Panics if `self` has a different number of results than `producer` has
    /// dimensions (a caller bug: the maps do not describe the same array).
    pub fn compose(&self, producer: &IndexingMap) -> IndexingMap {
        assert_eq!(
            self.results.len(),
            producer.dims.len(),
            "composing a map with {} results onto a map with {} dimensions",
            self.results.len(),
            producer.dims.len()
        );
        let (r1, t1) = (self.range_vars.len(), self.rt_vars.len());
        let (r2, t2) = (producer.range_vars.len(), producer.rt_vars.len());
        let dims: Vec<AffineExpr> = (0..self.dims.len()).map(AffineExpr::Dim).collect();
        // self: range var i stays i; runtime var j moves behind all range variables.
        let self_symbols: Vec<AffineExpr> = (0..r1)
            .map(AffineExpr::Symbol)
            .chain((0..t1).map(|j| AffineExpr::Symbol(r1 + r2 + j)))
            .collect();
        // producer: range var i goes after self's; runtime var j after self's.
        let producer_symbols: Vec<AffineExpr> = (0..r2)
            .map(|i| AffineExpr::Symbol(r1 + i))
            .chain((0..t2).map(|j| AffineExpr::Symbol(r1 + r2 + t1 + j)))
            .collect();
        let inputs: Vec<AffineExpr> = self
            .results
            .iter()
            .map(|e| e.substitute(&dims, &self_symbols))
            .collect();
        let results = producer
            .results
            .iter()
            .map(|f| f.substitute(&inputs, &producer_symbols))
            .collect();

        let range_vars = self
            .range_vars
            .iter()
            .cloned()
            .chain(
                producer
                    .range_vars
                    .iter()
                    .enumerate()
                    .map(|(i, v)| renumbered(v, "s", i, r1 + i)),
            )
            .collect();
        let rt_vars = self
            .rt_vars
            .iter()
            .cloned()
            .chain(
                producer
                    .rt_vars
                    .iter()
                    .enumerate()
                    .map(|(j, v)| renumbered(v, "rt", j, t1 + j)),
            )
            .collect();
        let mut composed = IndexingMap::new(self.dims.clone(), range_vars, rt_vars, results);
        for (e, iv) in &self.constraints {
            composed.add_constraint(e.substitute(&dims, &self_symbols), *iv);
        }
        for (f, iv) in &producer.constraints {
            composed.add_constraint(f.substitute(&inputs, &producer_symbols), *iv);
        }
        for (e, p) in inputs.into_iter().zip(&producer.dims) {
            composed.add_constraint(e, p.bounds);
        }
        composed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{dim, sym};
    use crate::map::{Interval, default_dims, default_range_vars};

    #[test]
    fn symbols_of_the_consumer_come_first() {
        // Consumer: reduce-like (d0)[s0] -> (d0, s0); producer: (d0, d1)[s0]{rt0} -> ...
        let consumer = IndexingMap::new(
            default_dims(&[4]),
            default_range_vars(&[3]),
            vec![Variable::new("rt0", Interval::new(0, 1))],
            vec![dim(0) + sym(1), sym(0)],
        );
        let producer = IndexingMap::new(
            default_dims(&[8, 3]),
            default_range_vars(&[2]),
            vec![Variable::new("rt0", Interval::new(0, 5))],
            vec![dim(0) * 2 + sym(0), dim(1) + sym(1)],
        );
        let composed = consumer.compose(&producer);
        assert_eq!(
            composed.to_string(),
            "(d0)[s0, s1]{rt0, rt1} -> ((d0 + rt0) * 2 + s1, s0 + rt1), domain: \
             d0 in [0, 3], s0 in [0, 2], s1 in [0, 1], rt0 in [0, 1], rt1 in [0, 5], \
             d0 + rt0 in [0, 7], s0 in [0, 2]"
        );
        for d0 in 0..4 {
            for s0 in 0..3 {
                for s1 in 0..2 {
                    for rt0 in 0..2 {
                        for rt1 in 0..6 {
                            let mid = consumer.eval(&[d0], &[s0, rt0]);
                            let want = producer.eval(&mid, &[s1, rt1]);
                            assert_eq!(composed.eval(&[d0], &[s0, s1, rt0, rt1]), want);
                        }
                    }
                }
            }
        }
    }

    #[test]
    #[should_panic(expected = "composing a map with 1 results onto a map with 2 dimensions")]
    fn arity_mismatch_is_a_caller_bug() {
        IndexingMap::identity(&[3]).compose(&IndexingMap::identity(&[3, 3]));
    }
}
