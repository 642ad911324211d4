//! Division and remainder by constants: `floordiv`, `ceildiv` and `mod` of sums, split
//! by what the ranges of their terms allow.

use std::ops::ControlFlow;

use super::*;

impl ExprSimplifier {
    /// `a` simplified once, as the dividend of a division by `d` that needs rewriting
    /// (`Continue`), or the quotient itself (`Break`) when the division is trivial: by 1,
    /// or of a range whose `quotients` (`Range::floor_div` or `Range::ceil_div`) are one
    /// value.
    fn dividend(
        &self,
        a: &AffineExpr,
        d: i64,
        quotients: fn(Range, i64) -> Range,
    ) -> Option<ControlFlow<AffineExpr, AffineExpr>> {
        let a = self.once(a)?;
        if d == 1 {
            return Some(ControlFlow::Break(a));
        }
        let quotients = quotients(self.range(&a), d);
        if quotients.is_point() {
            return Some(ControlFlow::Break(AffineExpr::Constant(
                i64::try_from(quotients.lo).ok()?,
            )));
        }
        Some(ControlFlow::Continue(a))
    }

    /// `outer + quotient`, flattened into one sum: how a division ends once the multiples
    /// of the divisor are split off into `outer`.
    fn plus_quotient(&self, mut outer: Sum, quotient: &AffineExpr) -> Option<AffineExpr> {
        self.flatten(quotient, 1, &mut outer, false)?;
        outer.normalize()?;
        Some(outer.build())
    }

    pub(super) fn floor_div(&self, a: &AffineExpr, d: i64) -> Option<AffineExpr> {
        let a = match self.dividend(a, d, Range::floor_div)? {
            ControlFlow::Continue(a) => a,
            ControlFlow::Break(quotient) => return Some(quotient),
        };
        match &a {
            // (x mod (d * c)) floordiv d = (x floordiv d) mod c.
            AffineExpr::Mod(x, m) if m % d == 0 => {
                return Some(AffineExpr::Mod(
                    Box::new(AffineExpr::FloorDiv(x.clone(), d)),
                    m / d,
                ));
            }
            // (x floordiv a) floordiv d = x floordiv (a * d).
            AffineExpr::FloorDiv(x, inner) => {
                if let Some(product) = inner.checked_mul(d) {
                    return Some(AffineExpr::FloorDiv(x.clone(), product));
                }
            }
            _ => {}
        }
        let (outer, mut inner) = self.sum_of(&a)?.split_by(d);
        let mut divisor = d;
        let ordered = self.ordered_terms(&inner);
        if let Some((p, g, j)) = self.split(&ordered, inner.constant, d, false) {
            inner = Sum {
                terms: ordered[..p]
                    .iter()
                    .map(|(t, c, _)| (t.clone(), c / g))
                    .collect(),
                constant: i64::try_from(j).ok()?,
            };
            divisor = d / g;
        }
        // (x floordiv c + r) floordiv d = (x + r * c) floordiv (c * d), for one such x.
        let inner_divs: Vec<usize> = (0..inner.terms.len())
            .filter(|&i| matches!(inner.terms[i], (AffineExpr::FloorDiv(..), 1)))
            .collect();
        if divisor > 1
            && let [i] = inner_divs[..]
            && let (AffineExpr::FloorDiv(x, c), _) = &inner.terms[i]
            && let Some(product) = c.checked_mul(divisor)
        {
            let (x, c) = ((**x).clone(), *c);
            let mut absorbed = Sum::default();
            self.flatten(&x, 1, &mut absorbed, false)?;
            for (k, (t, tc)) in inner.terms.iter().enumerate() {
                if k != i {
                    absorbed.terms.push((t.clone(), tc.checked_mul(c)?));
                }
            }
            absorbed.constant = absorbed
                .constant
                .checked_add(inner.constant.checked_mul(c)?)?;
            absorbed.normalize()?;
            inner = absorbed;
            divisor = product;
        }
        let quotient = if divisor == 1 {
            inner.build()
        } else {
            AffineExpr::FloorDiv(Box::new(inner.build()), divisor)
        };
        self.plus_quotient(outer, &quotient)
    }

    pub(super) fn ceil_div(&self, a: &AffineExpr, d: i64) -> Option<AffineExpr> {
        let a = match self.dividend(a, d, Range::ceil_div)? {
            ControlFlow::Continue(a) => a,
            ControlFlow::Break(quotient) => return Some(quotient),
        };
        // ⌈(d·q + r + x) / d⌉ = q + ⌈(r + x) / d⌉.
        let (outer, inner) = self.sum_of(&a)?.split_by(d);
        self.plus_quotient(outer, &AffineExpr::CeilDiv(Box::new(inner.build()), d))
    }

    pub(super) fn modulo(&self, a: &AffineExpr, m: i64) -> Option<AffineExpr> {
        let a = self.once(a)?;
        if m == 1 {
            return Some(AffineExpr::Constant(0));
        }
        let quotients = self.range(&a).floor_div(m);
        if quotients.is_point() {
            // No wrap-around: e mod m = e - j·m.
            let j = i64::try_from(quotients.lo).ok()?;
            if j == 0 {
                return Some(a);
            }
            let mut sum = self.sum_of(&a)?;
            sum.constant = sum.constant.checked_sub(j.checked_mul(m)?)?;
            return Some(sum.build());
        }
        // (x mod (m * c)) mod m = x mod m.
        if let AffineExpr::Mod(x, outer) = &a
            && outer % m == 0
        {
            return Some(AffineExpr::Mod(x.clone(), m));
        }
        let mut sum = self.sum_of(&a)?;
        sum.terms.retain(|(_, c)| c % m != 0);
        sum.constant = sum.constant.rem_euclid(m);
        let ordered = self.ordered_terms(&sum);
        if let Some((p, g, j)) = self.split(&ordered, sum.constant, m, true) {
            // ((g·H' + L) mod m) = (H' mod (m/g))·g + L for L in [0, g) (and the
            // wrap-free case e - j·m for the empty prefix).
            let mut result = Sum {
                terms: ordered[p..]
                    .iter()
                    .map(|(t, c, _)| (t.clone(), *c))
                    .collect(),
                constant: sum.constant,
            };
            if p == 0 {
                result.constant = result
                    .constant
                    .checked_sub(i64::try_from(j).ok()?.checked_mul(m)?)?;
            } else if m / g > 1 {
                let high = Sum::prefix_divided(&ordered, p, g);
                let wrapped = AffineExpr::Mod(Box::new(high.build()), m / g);
                result.terms.push((wrapped, g));
            }
            result.normalize()?;
            return Some(result.build());
        }
        Some(AffineExpr::Mod(Box::new(sum.build()), m))
    }
}
