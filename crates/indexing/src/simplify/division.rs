//! Division and remainder by constants: `floordiv`, `ceildiv` and `mod` of sums, split
//! by what the ranges of their terms allow.

use super::*;

impl ExprSimplifier {
    pub(super) fn floor_div(&self, a: &AffineExpr, d: i64) -> Option<AffineExpr> {
        let a = self.once(a)?;
        if d == 1 {
            return Some(a);
        }
        let quotients = self.range(&a).floor_div(d);
        if quotients.is_point() {
            return Some(AffineExpr::Constant(i64::try_from(quotients.lo).ok()?));
        }
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
        let (mut outer, mut inner) = self.sum_of(&a)?.split_by(d);
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
        self.flatten(&quotient, 1, &mut outer, false)?;
        outer.normalize()?;
        Some(outer.build())
    }

    pub(super) fn ceil_div(&self, a: &AffineExpr, d: i64) -> Option<AffineExpr> {
        let a = self.once(a)?;
        if d == 1 {
            return Some(a);
        }
        let quotients = self.range(&a).ceil_div(d);
        if quotients.is_point() {
            return Some(AffineExpr::Constant(i64::try_from(quotients.lo).ok()?));
        }
        // ⌈(d·q + r + x) / d⌉ = q + ⌈(r + x) / d⌉.
        let (mut outer, inner) = self.sum_of(&a)?.split_by(d);
        let quotient = AffineExpr::CeilDiv(Box::new(inner.build()), d);
        self.flatten(&quotient, 1, &mut outer, false)?;
        outer.normalize()?;
        Some(outer.build())
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
