//! Interval (range) analysis of affine expressions over a map's domain.
//!
//! The range of an expression is computed bottom-up from the inclusive ranges of the
//! variables: sums add intervals, products scale them, `floordiv`/`ceildiv` divide both
//! ends (they are monotone), products of two ranges take the hull of their ends' products,
//! `max`/`min` those of their operands' ends, and `mod` gives the exact hull `[lo mod m, hi mod m]` when
//! the argument stays within one period and `[0, m - 1]` otherwise. For a sum of
//! independent terms whose values fill their intervals this is the exact range; when a
//! variable occurs twice (`d0 - d0`) it is a sound over-approximation.
//!
//! Two semantics are kept apart, because evaluation ([`AffineExpr::eval`]) wraps like the
//! generated 64-bit index arithmetic does:
//!
//! * *Exact* ranges ([`Range`], `i128` with saturating ends standing for ±∞) describe the
//!   mathematical value. The simplifier reasons with them, and only rewrites expressions
//!   none of whose subexpressions can leave `i64` — for those, wrapped evaluation and
//!   mathematics agree, so every rewrite that holds in ℤ holds for `eval` too.
//! * [`IndexingMap::range_of`] returns the range of the *evaluated* value: a subexpression
//!   that may overflow is widened to the whole `i64` range before its parent uses it.
//!
//! Constraints: a subexpression that is structurally equal to a constraint's expression is
//! intersected with the constraint's interval (as XLA's `RangeEvaluator` does with
//! `use_constraints`), which is sound on the domain. The simplifier turns this off while it
//! simplifies the constraints themselves, so that no constraint can prove itself redundant.

use crate::expr::AffineExpr;
use crate::map::{IndexingMap, Interval};

impl Interval {
    /// The canonical empty interval, `[0, -1]` (what a known-empty map's variables get).
    pub const EMPTY: Interval = Interval { lo: 0, hi: -1 };

    /// Every `i64`.
    pub const FULL: Interval = Interval {
        lo: i64::MIN,
        hi: i64::MAX,
    };

    pub fn intersect(self, other: Interval) -> Interval {
        Interval::new(self.lo.max(other.lo), self.hi.min(other.hi))
    }

    /// Whether every value of `other` lies in `self` (true for an empty `other`).
    pub fn includes(self, other: Interval) -> bool {
        other.is_empty() || (self.lo <= other.lo && other.hi <= self.hi)
    }

    /// Number of values, saturating; 0 when empty.
    pub fn size(self) -> u128 {
        if self.is_empty() {
            0
        } else {
            (self.hi as i128 - self.lo as i128 + 1) as u128
        }
    }
}

/// Ends at these values stand for −∞ and +∞: arithmetic saturates onto them and keeps them.
const NEG_INF: i128 = i128::MIN;
const POS_INF: i128 = i128::MAX;

/// The exact (mathematical) range of an expression; empty when `lo > hi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Range {
    pub lo: i128,
    pub hi: i128,
}

impl Range {
    pub fn point(v: i128) -> Range {
        Range { lo: v, hi: v }
    }

    pub fn empty() -> Range {
        Range { lo: 0, hi: -1 }
    }

    pub fn of(iv: Interval) -> Range {
        Range {
            lo: iv.lo as i128,
            hi: iv.hi as i128,
        }
    }

    fn full_i64() -> Range {
        Range::of(Interval::FULL)
    }

    pub fn is_empty(self) -> bool {
        self.lo > self.hi
    }

    pub fn is_point(self) -> bool {
        self.lo == self.hi && self.is_finite()
    }

    pub fn is_finite(self) -> bool {
        self.lo != NEG_INF && self.hi != POS_INF
    }

    /// Whether every value is an `i64` (an empty range trivially is).
    pub fn fits_i64(self) -> bool {
        self.is_empty() || (self.lo >= i64::MIN as i128 && self.hi <= i64::MAX as i128)
    }

    /// Clamps onto `i64`; the canonical empty interval when empty.
    pub fn to_interval(self) -> Interval {
        if self.is_empty() {
            return Interval::EMPTY;
        }
        let clamp = |v: i128| v.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        Interval::new(clamp(self.lo), clamp(self.hi))
    }

    pub fn intersect(self, other: Range) -> Range {
        Range {
            lo: self.lo.max(other.lo),
            hi: self.hi.min(other.hi),
        }
    }

    pub fn add(self, other: Range) -> Range {
        if self.is_empty() || other.is_empty() {
            return Range::empty();
        }
        Range {
            lo: add_end(self.lo, other.lo, NEG_INF),
            hi: add_end(self.hi, other.hi, POS_INF),
        }
    }

    pub fn mul(self, c: i64) -> Range {
        if self.is_empty() {
            return Range::empty();
        }
        let (a, b) = (mul_end(self.lo, c), mul_end(self.hi, c));
        Range {
            lo: a.min(b),
            hi: a.max(b),
        }
    }

    /// The product of two ranges: the hull of the ends' products. An infinite end gives
    /// the whole line (sound, and such products never come from a bounded domain).
    pub fn product(self, other: Range) -> Range {
        if self.is_empty() || other.is_empty() {
            return Range::empty();
        }
        if !self.is_finite() || !other.is_finite() {
            return Range {
                lo: NEG_INF,
                hi: POS_INF,
            };
        }
        let ends = [
            self.lo.saturating_mul(other.lo),
            self.lo.saturating_mul(other.hi),
            self.hi.saturating_mul(other.lo),
            self.hi.saturating_mul(other.hi),
        ];
        Range {
            lo: *ends.iter().min().expect("four ends"),
            hi: *ends.iter().max().expect("four ends"),
        }
    }

    /// The range of `max(a, b)`.
    pub fn max(self, other: Range) -> Range {
        self.end_by_end(other, i128::max)
    }

    /// The range of `min(a, b)`.
    pub fn min(self, other: Range) -> Range {
        self.end_by_end(other, i128::min)
    }

    /// The range of `f(a, b)` for an `f` monotone in both operands (`max`, `min`): `f` of
    /// the lower ends and of the upper ends.
    fn end_by_end(self, other: Range, f: fn(i128, i128) -> i128) -> Range {
        if self.is_empty() || other.is_empty() {
            return Range::empty();
        }
        Range {
            lo: f(self.lo, other.lo),
            hi: f(self.hi, other.hi),
        }
    }

    /// `floordiv d`, `d > 0`.
    pub fn floor_div(self, d: i64) -> Range {
        self.map_finite_ends(|v| v.div_euclid(d as i128))
    }

    /// `ceildiv d`, `d > 0`.
    pub fn ceil_div(self, d: i64) -> Range {
        self.map_finite_ends(|v| div_ceil(v, d as i128))
    }

    /// The range of a non-decreasing `f` over this one: `f` of each finite end; infinite
    /// ends stay infinite.
    fn map_finite_ends(self, f: impl Fn(i128) -> i128) -> Range {
        if self.is_empty() {
            return Range::empty();
        }
        let end = |v: i128| {
            if v == NEG_INF || v == POS_INF {
                v
            } else {
                f(v)
            }
        };
        Range {
            lo: end(self.lo),
            hi: end(self.hi),
        }
    }

    /// `mod m`, `m > 0`: exact hull.
    pub fn modulo(self, m: i64) -> Range {
        if self.is_empty() {
            return Range::empty();
        }
        let m = m as i128;
        if self.is_finite() && self.lo.div_euclid(m) == self.hi.div_euclid(m) {
            Range {
                lo: self.lo.rem_euclid(m),
                hi: self.hi.rem_euclid(m),
            }
        } else {
            Range { lo: 0, hi: m - 1 }
        }
    }
}

/// Adds two interval ends, keeping infinities: `inf` is the infinity this end rounds
/// towards when the operands disagree (−∞ for lower ends, +∞ for upper ends).
fn add_end(a: i128, b: i128, inf: i128) -> i128 {
    let infinite = |v: i128| v == NEG_INF || v == POS_INF;
    match (infinite(a), infinite(b)) {
        (false, false) => a.saturating_add(b),
        (true, false) => a,
        (false, true) => b,
        (true, true) if a == b => a,
        (true, true) => inf,
    }
}

fn mul_end(v: i128, c: i64) -> i128 {
    if c == 0 {
        return 0;
    }
    match v {
        NEG_INF if c > 0 => NEG_INF,
        NEG_INF => POS_INF,
        POS_INF if c > 0 => POS_INF,
        POS_INF => NEG_INF,
        _ => v.saturating_mul(c as i128),
    }
}

/// `⌈a / b⌉` for `b > 0`.
pub(crate) fn div_ceil(a: i128, b: i128) -> i128 {
    -(-a).div_euclid(b)
}

/// Computes ranges of expressions over one map's variables (and, optionally, constraints).
#[derive(Clone, Debug)]
pub(crate) struct RangeEvaluator {
    dims: Vec<Interval>,
    symbols: Vec<Interval>,
    /// Constraints usable for exact reasoning: their expressions never leave `i64`.
    exact_constraints: Vec<(AffineExpr, Interval)>,
    /// All constraints: usable for the evaluated (wrapped) value.
    all_constraints: Vec<(AffineExpr, Interval)>,
}

impl RangeEvaluator {
    pub fn new(map: &IndexingMap, use_constraints: bool) -> RangeEvaluator {
        let mut evaluator = RangeEvaluator {
            dims: map.dims.iter().map(|v| v.bounds).collect(),
            symbols: map
                .range_vars
                .iter()
                .chain(&map.rt_vars)
                .map(|v| v.bounds)
                .collect(),
            exact_constraints: Vec::new(),
            all_constraints: Vec::new(),
        };
        if use_constraints {
            for (expr, bounds) in &map.constraints {
                let mut overflow = false;
                evaluator.eval(expr, false, &mut overflow);
                if !overflow {
                    evaluator.exact_constraints.push((expr.clone(), *bounds));
                }
            }
            evaluator.all_constraints = map.constraints.clone();
        }
        evaluator
    }

    /// The exact range of `e`.
    pub fn range(&self, e: &AffineExpr) -> Range {
        let mut overflow = false;
        self.eval(e, false, &mut overflow)
    }

    /// Whether some subexpression of `e` may leave `i64` on the domain (so that `eval`
    /// wraps and differs from the mathematical value).
    pub fn may_overflow(&self, e: &AffineExpr) -> bool {
        let mut overflow = false;
        self.eval(e, false, &mut overflow);
        overflow
    }

    /// The range of the evaluated (wrapping) value of `e`.
    pub fn wrapped_range(&self, e: &AffineExpr) -> Interval {
        let mut overflow = false;
        self.eval(e, true, &mut overflow).to_interval()
    }

    fn variable(&self, bounds: Option<&Interval>) -> Range {
        // A variable the map does not have: any i64 (never panic on a malformed map).
        Range::of(bounds.copied().unwrap_or(Interval::FULL))
    }

    /// `wrap`: widen any subexpression that may leave `i64` to the full `i64` range (the
    /// evaluated value); otherwise keep exact values. `overflow` records whether any
    /// subexpression may leave `i64`.
    fn eval(&self, e: &AffineExpr, wrap: bool, overflow: &mut bool) -> Range {
        let r = match e {
            AffineExpr::Constant(c) => Range::point(*c as i128),
            AffineExpr::Dim(i) => self.variable(self.dims.get(*i)),
            AffineExpr::Symbol(i) => self.variable(self.symbols.get(*i)),
            AffineExpr::Add(a, b) => self
                .eval(a, wrap, overflow)
                .add(self.eval(b, wrap, overflow)),
            AffineExpr::Mul(a, c) => self.eval(a, wrap, overflow).mul(*c),
            AffineExpr::Product(a, b) => self
                .eval(a, wrap, overflow)
                .product(self.eval(b, wrap, overflow)),
            AffineExpr::Max(a, b) => self
                .eval(a, wrap, overflow)
                .max(self.eval(b, wrap, overflow)),
            AffineExpr::Min(a, b) => self
                .eval(a, wrap, overflow)
                .min(self.eval(b, wrap, overflow)),
            AffineExpr::FloorDiv(a, d) if *d > 0 => self.eval(a, wrap, overflow).floor_div(*d),
            AffineExpr::CeilDiv(a, d) if *d > 0 => self.eval(a, wrap, overflow).ceil_div(*d),
            AffineExpr::Mod(a, m) if *m > 0 => self.eval(a, wrap, overflow).modulo(*m),
            // A non-positive divisor cannot be built through the constructors; answer
            // "anything" rather than panic.
            AffineExpr::FloorDiv(a, _) | AffineExpr::CeilDiv(a, _) | AffineExpr::Mod(a, _) => {
                self.eval(a, wrap, overflow);
                Range::full_i64()
            }
        };
        let mut r = if r.fits_i64() {
            r
        } else {
            *overflow = true;
            if wrap { Range::full_i64() } else { r }
        };
        let constraints = if wrap {
            &self.all_constraints
        } else {
            &self.exact_constraints
        };
        if !constraints.is_empty() && !matches!(e, AffineExpr::Constant(_)) {
            for (expr, bounds) in constraints {
                if expr == e {
                    r = r.intersect(Range::of(*bounds));
                }
            }
        }
        r
    }
}

impl IndexingMap {
    /// The range of the values `e` evaluates to on this map's domain: computed from the
    /// variables' ranges, intersected with the interval of every constraint whose
    /// expression is a subexpression of `e`. Exact for sums of independent terms and for
    /// `floordiv`/`ceildiv`/`mod` by constants of such sums (as a hull); a sound
    /// over-approximation otherwise. Empty ([`Interval::EMPTY`]) when a variable of `e`
    /// has an empty range. Never overflows: a subexpression that could wrap is taken to
    /// range over all of `i64`.
    pub fn range_of(&self, e: &AffineExpr) -> Interval {
        RangeEvaluator::new(self, true).wrapped_range(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{cst, dim, sym};
    use crate::map::{Variable, default_dims, default_range_vars};

    fn map(dims: &[(i64, i64)], syms: &[(i64, i64)]) -> IndexingMap {
        let var = |p: &str, i, &(lo, hi): &(i64, i64)| {
            Variable::new(format!("{p}{i}"), Interval::new(lo, hi))
        };
        IndexingMap::new(
            dims.iter()
                .enumerate()
                .map(|(i, b)| var("d", i, b))
                .collect(),
            syms.iter()
                .enumerate()
                .map(|(i, b)| var("s", i, b))
                .collect(),
            Vec::new(),
            Vec::new(),
        )
    }

    #[test]
    fn sums_and_products_of_independent_terms_are_exact() {
        let m = map(&[(0, 127), (0, 24575)], &[(0, 3)]);
        let linear = dim(1) * 512 + dim(0) * 4 + sym(0);
        assert_eq!(m.range_of(&linear), Interval::new(0, 12582911));
        assert_eq!(m.range_of(&(dim(0) * -2 + 5)), Interval::new(-249, 5));
        assert_eq!(m.range_of(&cst(7)), Interval::new(7, 7));
    }

    #[test]
    fn division_and_modulo_by_constants() {
        let m = map(&[(-7, 9)], &[]);
        assert_eq!(m.range_of(&dim(0).floor_div(4)), Interval::new(-2, 2));
        assert_eq!(m.range_of(&dim(0).ceil_div(4)), Interval::new(-1, 3));
        assert_eq!(m.range_of(&dim(0).modulo(4)), Interval::new(0, 3));
        // Within one period the hull is exact.
        let m = map(&[(5, 6)], &[]);
        assert_eq!(m.range_of(&dim(0).modulo(4)), Interval::new(1, 2));
        assert_eq!(m.range_of(&(dim(0) + 3).modulo(4)), Interval::new(0, 1));
        assert_eq!(m.range_of(&(dim(0) + 2).modulo(4)), Interval::new(0, 3));
    }

    #[test]
    fn constraints_narrow_matching_subexpressions() {
        let mut m = IndexingMap::new(
            default_dims(&[100]),
            default_range_vars(&[8]),
            Vec::new(),
            Vec::new(),
        );
        m.add_constraint(dim(0) + sym(0), Interval::new(0, 20));
        assert_eq!(m.range_of(&(dim(0) + sym(0))), Interval::new(0, 20));
        assert_eq!(m.range_of(&((dim(0) + sym(0)) * 2)), Interval::new(0, 40));
        assert_eq!(m.range_of(&(sym(0) + dim(0))), Interval::new(0, 106));
    }

    #[test]
    fn overflow_widens_to_all_of_i64_and_never_panics() {
        let m = map(&[(0, i64::MAX)], &[]);
        let big = dim(0) * i64::MAX * i64::MAX + dim(0) * i64::MIN;
        assert_eq!(m.range_of(&big), Interval::FULL);
        assert_eq!(
            m.range_of(&(big.clone().floor_div(1 << 62))),
            Interval::new(-2, 1)
        );
        assert_eq!(m.range_of(&big.modulo(10)), Interval::new(0, 9));
        let ev = RangeEvaluator::new(&m, false);
        assert!(ev.may_overflow(&(dim(0) * 2)));
        assert!(!ev.may_overflow(&(dim(0).floor_div(2) + 5)));
        // Exact ranges keep the mathematical value, with saturated ends as infinities.
        let r = ev.range(&(dim(0) * i64::MAX * i64::MAX * i64::MAX));
        assert_eq!(r.hi, POS_INF);
        assert_eq!(r.floor_div(3).hi, POS_INF);
    }

    #[test]
    fn empty_variable_ranges_give_empty_ranges() {
        let m = map(&[(0, -1)], &[]);
        assert!(m.range_of(&(dim(0) * 3 + 1)).is_empty());
    }

    #[test]
    fn unknown_variables_range_over_everything() {
        let m = map(&[], &[]);
        assert_eq!(m.range_of(&dim(3)), Interval::FULL);
    }
}
