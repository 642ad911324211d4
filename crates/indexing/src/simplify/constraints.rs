//! Constraints: an expression with its allowed interval, simplified together.

use super::*;

impl ExprSimplifier {
    /// Moves constants, factors and divisions from a constraint's expression into its
    /// interval (module doc). Returns the new pair; the interval may come out empty.
    pub fn simplify_constraint_range(&self, e: AffineExpr, iv: Interval) -> (AffineExpr, Interval) {
        if self.ranges.may_overflow(&e) {
            return (e, iv);
        }
        let (min, max) = (i64::MIN as i128, i64::MAX as i128);
        let (mut e, mut lo, mut hi) = (e, iv.lo as i128, iv.hi as i128);
        for _ in 0..MAX_ITERATIONS {
            let next = match &e {
                AffineExpr::Add(rest, c) if matches!(**c, AffineExpr::Constant(_)) => {
                    let c = c.as_constant().unwrap_or(0) as i128;
                    (lo, hi) = (lo - c, hi - c);
                    (**rest).clone()
                }
                AffineExpr::Mul(x, c) if *c > 0 => {
                    let c = *c as i128;
                    (lo, hi) = (div_ceil(lo, c), hi.div_euclid(c));
                    (**x).clone()
                }
                AffineExpr::Mul(x, c) if *c < 0 => {
                    let c = -(*c as i128);
                    (lo, hi) = (div_ceil(-hi, c), (-lo).div_euclid(c));
                    (**x).clone()
                }
                AffineExpr::FloorDiv(x, d) if *d > 0 => {
                    let d = *d as i128;
                    (lo, hi) = (
                        lo.saturating_mul(d),
                        hi.saturating_mul(d).saturating_add(d - 1),
                    );
                    (**x).clone()
                }
                AffineExpr::CeilDiv(x, d) if *d > 0 => {
                    let d = *d as i128;
                    (lo, hi) = (
                        (lo - 1).saturating_mul(d).saturating_add(1),
                        hi.saturating_mul(d),
                    );
                    (**x).clone()
                }
                AffineExpr::Add(..) => match self.split_constraint_sum(&e, lo, hi) {
                    Some((h, a, b)) => {
                        (lo, hi) = (a, b);
                        h
                    }
                    None => break,
                },
                _ => break,
            };
            e = next;
            if lo > hi || lo > max || hi < min {
                return (e, Interval::EMPTY);
            }
            // The subexpression never leaves i64, so clamping loses nothing.
            (lo, hi) = (lo.max(min), hi.min(max));
        }
        (e, Interval::new(lo as i64, hi as i64))
    }

    /// `g·H + L in [lo, hi]` with `⌈(lo - L)/g⌉` and `⌊(hi - L)/g⌋` the same for every
    /// value of `L` is `H in [those]`.
    pub(super) fn split_constraint_sum(
        &self,
        e: &AffineExpr,
        lo: i128,
        hi: i128,
    ) -> Option<(AffineExpr, i128, i128)> {
        let sum = self.sum_of(e)?;
        if sum.constant != 0 {
            return None;
        }
        let ordered = self.ordered_terms(&sum);
        prefix_splits(&ordered, 0, 0).find_map(|(p, g, rest)| {
            let g128 = g as i128;
            let a = div_ceil(lo - rest.hi, g128);
            let b = (hi - rest.lo).div_euclid(g128);
            (a == div_ceil(lo - rest.lo, g128) && b == (hi - rest.hi).div_euclid(g128))
                .then(|| (Sum::prefix_divided(&ordered, p, g).build(), a, b))
        })
    }
}
