//! `IndexingMap`: an affine map with a domain.
//!
//! `(d0, d1)[s0]{rt0} -> (e0, e1), domain: d0 in [0, 127], s0 in [0, 3], e in [lo, hi]`:
//! dimensions (e.g. thread and block ids, or output indices), range variables (symbols that
//! enumerate, like a vector index or a reduced dimension), runtime variables (symbols whose
//! value is only known on the device, like a dynamic-slice offset), result expressions, and
//! constraints. A point is in the domain when every variable lies in its inclusive range and
//! every constraint holds.

use crate::expr::AffineExpr;

/// An inclusive integer interval `[lo, hi]`; empty when `lo > hi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Interval {
    pub lo: i64,
    pub hi: i64,
}

impl Interval {
    pub fn new(lo: i64, hi: i64) -> Interval {
        Interval { lo, hi }
    }

    /// `[0, size - 1]`, the index range of a dimension of `size` elements.
    pub fn index_range(size: i64) -> Interval {
        Interval::new(0, size - 1)
    }

    pub fn contains(&self, v: i64) -> bool {
        self.lo <= v && v <= self.hi
    }

    pub fn is_empty(&self) -> bool {
        self.lo > self.hi
    }

    pub fn is_point(&self) -> bool {
        self.lo == self.hi
    }
}

/// A named variable with its inclusive range.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Variable {
    pub name: String,
    pub bounds: Interval,
}

impl Variable {
    pub fn new(name: impl Into<String>, bounds: Interval) -> Variable {
        Variable {
            name: name.into(),
            bounds,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IndexingMap {
    pub dims: Vec<Variable>,
    /// Symbols `0..range_vars.len()`.
    pub range_vars: Vec<Variable>,
    /// Symbols `range_vars.len()..`.
    pub rt_vars: Vec<Variable>,
    pub results: Vec<AffineExpr>,
    /// `expr in [lo, hi]`, all of which must hold on the domain.
    pub constraints: Vec<(AffineExpr, Interval)>,
}

impl IndexingMap {
    pub fn new(
        dims: Vec<Variable>,
        range_vars: Vec<Variable>,
        rt_vars: Vec<Variable>,
        results: Vec<AffineExpr>,
    ) -> IndexingMap {
        IndexingMap {
            dims,
            range_vars,
            rt_vars,
            results,
            constraints: Vec::new(),
        }
    }

    /// The identity on a shape: `(d0, .., dn) -> (d0, .., dn)` with `d_i in [0, dims[i]-1]`.
    pub fn identity(dims: &[i64]) -> IndexingMap {
        IndexingMap::new(
            default_dims(dims),
            Vec::new(),
            Vec::new(),
            (0..dims.len()).map(AffineExpr::Dim).collect(),
        )
    }

    pub fn num_symbols(&self) -> usize {
        self.range_vars.len() + self.rt_vars.len()
    }

    /// Symbol `i`: a range variable, or a runtime variable after them.
    pub fn symbol(&self, i: usize) -> &Variable {
        self.range_vars
            .get(i)
            .unwrap_or_else(|| &self.rt_vars[i - self.range_vars.len()])
    }

    /// The bounds of the dimensions, then of the range variables: the box of the points a
    /// loop over the map's domain visits (runtime variables are not looped over).
    pub fn dim_and_range_var_bounds(&self) -> Vec<Interval> {
        self.dims
            .iter()
            .chain(&self.range_vars)
            .map(|v| v.bounds)
            .collect()
    }

    pub fn add_constraint(&mut self, expr: AffineExpr, bounds: Interval) {
        self.constraints.push((expr, bounds));
    }

    /// The results at a point (`symbols`: range variables, then runtime variables).
    pub fn eval(&self, dims: &[i64], symbols: &[i64]) -> Vec<i64> {
        self.results.iter().map(|e| e.eval(dims, symbols)).collect()
    }

    /// Whether a point lies in the domain: every variable in range, every constraint holds.
    pub fn contains(&self, dims: &[i64], symbols: &[i64]) -> bool {
        dims.len() == self.dims.len()
            && symbols.len() == self.num_symbols()
            && self
                .dims
                .iter()
                .zip(dims)
                .all(|(v, &x)| v.bounds.contains(x))
            && (0..symbols.len()).all(|i| self.symbol(i).bounds.contains(symbols[i]))
            && self
                .constraints
                .iter()
                .all(|(e, bounds)| bounds.contains(e.eval(dims, symbols)))
    }
}

/// Dimensions `d0, d1, ...` ranging over the indices of a shape.
pub fn default_dims(sizes: &[i64]) -> Vec<Variable> {
    sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| Variable::new(format!("d{i}"), Interval::index_range(n)))
        .collect()
}

/// Range variables `s0, s1, ...` over the indices of the given sizes.
pub fn default_range_vars(sizes: &[i64]) -> Vec<Variable> {
    sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| Variable::new(format!("s{i}"), Interval::index_range(n)))
        .collect()
}

/// The output map of the seed's gelu kernel over a 6x512x4096 output: 128 threads, 24,576
/// blocks, vectors of 4 (the printer's and the simplifier's tests both reach it).
#[cfg(test)]
pub(crate) mod seed_gelu {
    use super::*;

    /// The kernel's domain, `(th_x, bl_x)[vector_index]`, with `results`.
    pub(crate) fn map_with(results: Vec<AffineExpr>) -> IndexingMap {
        IndexingMap::new(
            vec![
                Variable::new("th_x", Interval::new(0, 127)),
                Variable::new("bl_x", Interval::new(0, 24575)),
            ],
            vec![Variable::new("vector_index", Interval::new(0, 3))],
            Vec::new(),
            results,
        )
    }

    /// The output map, as printed: the linear index delinearized over the output shape.
    pub(crate) const PRINTED: &str = "(th_x, bl_x)[vector_index] -> (bl_x floordiv 4096, \
        (bl_x floordiv 8) mod 512, (bl_x mod 8) * 512 + th_x * 4 + vector_index), domain: \
        th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]";
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{dim, sym};

    #[test]
    fn contains_checks_ranges_and_constraints() {
        let mut map = IndexingMap::new(
            default_dims(&[8]),
            default_range_vars(&[4]),
            Vec::new(),
            vec![dim(0) * 4 + sym(0)],
        );
        map.add_constraint(dim(0) + sym(0), Interval::new(0, 9));
        assert!(map.contains(&[5], &[3]));
        assert!(!map.contains(&[7], &[3]));
        assert!(!map.contains(&[8], &[0]));
        assert_eq!(map.eval(&[5], &[3]), vec![23]);
    }
}
