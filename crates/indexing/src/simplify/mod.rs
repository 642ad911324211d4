//! The range-aware simplifier, in the spirit of XLA's `IndexingMap::Simplify` and its
//! `AffineExprSimplifier` (own code; the rules are the same kind).
//!
//! [`IndexingMap::simplify`] first simplifies the constraints (with ranges computed from
//! the variables alone, so no constraint can vouch for itself), folding constraints on a
//! single variable into its range, dropping the ones that always hold, and detecting
//! empty domains; then it simplifies every result with ranges that also use the
//! constraints. Each expression is rewritten until nothing changes (at most
//! [`MAX_ITERATIONS`] rounds). The rules:
//!
//! * any subexpression whose range is a single value becomes that constant;
//! * sums are flattened (products by constants distributed), like terms combined, zero
//!   terms dropped, and the terms sorted in a fixed order (products, then `mod`,
//!   `floordiv`, `ceildiv`, dimensions, symbols — compared structurally, as XLA's
//!   `CompareExprs` does), with the constant last;
//! * `(x mod c) * k + (x floordiv c) * (c * k)` becomes `x * k`, and
//!   `x * k - (x floordiv c) * (c * k)` becomes `(x mod c) * k`;
//! * `e floordiv d`: constant when `e`'s range lies within one multiple of `d`; terms of
//!   `e` whose coefficient is a multiple of `d` (and the multiple of `d` in the constant)
//!   move out of the division; then, with the terms ordered by decreasing coefficient,
//!   the shortest prefix `H` whose coefficients share a factor `g` with `d` such that the
//!   rest `L` lies within one multiple of `g` (`[j·g, j·g + g - 1]`) gives
//!   `(H/g + j) floordiv (d/g)` — `L` cannot change the quotient. Also
//!   `(x mod (d·c)) floordiv d → (x floordiv d) mod c`, `(x floordiv a) floordiv b →
//!   x floordiv (a·b)`, and a single `x floordiv c` term in the dividend is absorbed:
//!   `(x floordiv c + r) floordiv d → (x + r·c) floordiv (c·d)`;
//! * `e mod m`: `e - j·m` when `e`'s range lies within `[j·m, j·m + m - 1]` (so `e` itself
//!   when it lies in `[0, m)`); `(x mod a) mod m → x mod m` when `m` divides `a`; terms
//!   with a coefficient divisible by `m` are dropped and the constant is reduced; then the
//!   shortest prefix `H` (as above, `g = gcd(m, coefficients)`) whose rest `L` lies in
//!   `[0, g)` gives `((H/g) mod (m/g)) * g + L` — e.g.
//!   `(a*512 + b*4 + v) mod 4096` with `b*4 + v < 512` is `(a mod 8)*512 + b*4 + v`;
//! * `e ceildiv d`: constant when the range allows, multiples of `d` move out;
//! * XLA's extensions: a product of two expressions becomes a scaling once a side is
//!   constant, and constant factors move out of it (`(d0 * 2) * s0` is `d0 * s0 * 2`);
//!   `max(a, b)` / `min(a, b)` become the operand that wins on the whole domain, when the
//!   operands' ranges do not overlap or the range of `a - b` has one sign;
//! * constraints: `e + c in [lo, hi]` → `e in [lo - c, hi - c]`, `e * c` divides the
//!   interval, `e floordiv d` / `e ceildiv d` multiply it, and a sum `g·H + L` whose `L`
//!   cannot change the bounds `⌈(lo - L)/g⌉`, `⌊(hi - L)/g⌋` becomes `H in [..]`.
//!
//! Soundness: rewrites are identities in ℤ that hold on the domain. Evaluation wraps at 64
//! bits, so an expression is only rewritten when neither it nor its rewrite has a
//! subexpression that could leave `i64` on the domain (then wrapping never happens and ℤ
//! is what `eval` computes); otherwise it is kept as it is.
//!
//! Empty domains: a variable with an empty range, a constraint with an empty interval, or a
//! constraint that can never hold makes the map *known empty*: as in XLA's
//! `ResetToKnownEmpty`, its results become `0`, every variable's range `[0, -1]` and the
//! constraints are dropped (a map without variables keeps one constraint `0 in [0, -1]`,
//! so that the emptiness stays visible in the map, its printed form and `contains`).
//! [`IndexingMap::is_known_empty`] reads this off the map; no extra field is needed.
//!
//! `simplify` never removes variables, so points keep their meaning;
//! [`IndexingMap::remove_unused_symbols`] does that on request.

use std::cmp::Ordering;

use crate::compose::renumbered;
use crate::expr::AffineExpr;
use crate::map::{IndexingMap, Interval};
use crate::range::{Range, RangeEvaluator, div_ceil};

mod constraints;
mod division;

/// Upper bound on rewrite rounds per expression and constraint passes per map: every rule
/// makes progress, this only guards against a pathological ping-pong.
pub const MAX_ITERATIONS: usize = 32;

impl IndexingMap {
    /// Simplifies constraints and results in place (see the module documentation). The
    /// result evaluates like the original at every point of the domain, and has the same
    /// domain.
    pub fn simplify(&mut self) {
        if self.is_known_empty() {
            self.reset_to_known_empty();
            return;
        }
        for _ in 0..MAX_ITERATIONS {
            match self.simplify_constraints_once() {
                Pass::Empty => {
                    self.reset_to_known_empty();
                    return;
                }
                Pass::Changed => {}
                Pass::Unchanged => break,
            }
        }
        let simplifier = ExprSimplifier::new(RangeEvaluator::new(self, true));
        let results = self
            .results
            .iter()
            .map(|e| simplifier.simplify(e))
            .collect();
        self.results = results;
    }

    /// [`Self::simplify`], by value.
    pub fn simplified(mut self) -> IndexingMap {
        self.simplify();
        self
    }

    /// `e` (over this map's variables) simplified with this map's ranges and constraints.
    pub fn simplify_expr(&self, e: &AffineExpr) -> AffineExpr {
        ExprSimplifier::new(RangeEvaluator::new(self, true)).simplify(e)
    }

    /// Whether the domain is known to be empty: a variable's range or a constraint's
    /// interval is empty, or a constraint on a constant fails. [`Self::simplify`] finds the
    /// other constraints that can never hold and puts the map into this form.
    pub fn is_known_empty(&self) -> bool {
        self.dims
            .iter()
            .chain(&self.range_vars)
            .chain(&self.rt_vars)
            .any(|v| v.bounds.is_empty())
            || self.constraints.iter().any(|(e, iv)| {
                iv.is_empty() || matches!(e, AffineExpr::Constant(c) if !iv.contains(*c))
            })
    }

    /// The canonical empty map with this one's variables and result count.
    pub fn reset_to_known_empty(&mut self) {
        for r in &mut self.results {
            *r = AffineExpr::Constant(0);
        }
        let mut has_variables = false;
        for v in self
            .dims
            .iter_mut()
            .chain(&mut self.range_vars)
            .chain(&mut self.rt_vars)
        {
            v.bounds = Interval::EMPTY;
            has_variables = true;
        }
        self.constraints.clear();
        if !has_variables {
            self.constraints
                .push((AffineExpr::Constant(0), Interval::EMPTY));
        }
    }

    /// Removes range variables that neither the results nor a constraint tied to a used
    /// variable mention, together with the constraints that mention only removed ones (as
    /// XLA's `RemoveUnusedSymbols`); runtime variables are always kept. Returns the
    /// indices of the removed range variables. A constraint on removed variables alone
    /// that can never hold makes the map known empty instead; one that can hold is dropped,
    /// so the domain becomes the projection onto the remaining variables.
    pub fn remove_unused_symbols(&mut self) -> Vec<usize> {
        if self.is_known_empty() {
            return Vec::new();
        }
        let num_dims = self.dims.len();
        let num_range = self.range_vars.len();
        let mut used = vec![false; num_range];
        for e in &self.results {
            e.walk(&mut |x| {
                if let AffineExpr::Symbol(i) = x
                    && *i < num_range
                {
                    used[*i] = true;
                }
            });
        }
        // A constraint that involves anything in use (a dimension, a runtime variable, a
        // used range variable) puts all its range variables in use; repeat to a fixpoint.
        let touched: Vec<(bool, Vec<usize>)> = self
            .constraints
            .iter()
            .map(|(e, _)| {
                let mut other = false;
                let mut syms = Vec::new();
                e.walk(&mut |x| match x {
                    AffineExpr::Dim(_) => other = true,
                    AffineExpr::Symbol(i) if *i < num_range => syms.push(*i),
                    AffineExpr::Symbol(_) => other = true,
                    _ => {}
                });
                (other, syms)
            })
            .collect();
        loop {
            let mut changed = false;
            for (other, syms) in &touched {
                if *other || syms.iter().any(|&s| used[s]) {
                    for &s in syms {
                        if !used[s] {
                            used[s] = true;
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        if used.iter().all(|&u| u) {
            return Vec::new();
        }
        let ranges = RangeEvaluator::new(self, false);
        let mut kept = Vec::with_capacity(self.constraints.len());
        for ((e, iv), (other, syms)) in self.constraints.iter().zip(&touched) {
            let removable = !*other && syms.iter().all(|&s| !used[s]);
            if !removable {
                kept.push((e.clone(), *iv));
            } else if ranges.wrapped_range(e).intersect(*iv).is_empty() {
                self.reset_to_known_empty();
                return Vec::new();
            }
        }
        let removed: Vec<usize> = (0..num_range).filter(|&i| !used[i]).collect();
        let mut replacement = Vec::with_capacity(self.num_symbols());
        let mut next = 0;
        for &u in &used {
            replacement.push(if u {
                next += 1;
                AffineExpr::Symbol(next - 1)
            } else {
                AffineExpr::Constant(0)
            });
        }
        for i in 0..self.rt_vars.len() {
            replacement.push(AffineExpr::Symbol(next + i));
        }
        let dims: Vec<AffineExpr> = (0..num_dims).map(AffineExpr::Dim).collect();
        self.results = self
            .results
            .iter()
            .map(|e| e.substitute(&dims, &replacement))
            .collect();
        self.constraints = kept
            .into_iter()
            .map(|(e, iv)| (e.substitute(&dims, &replacement), iv))
            .collect();
        // Default names follow the new positions (`s2` becomes `s1`), as in XLA's output.
        self.range_vars = std::mem::take(&mut self.range_vars)
            .into_iter()
            .enumerate()
            .filter(|(i, _)| used[*i])
            .enumerate()
            .map(|(new, (old, v))| renumbered(&v, "s", old, new))
            .collect();
        removed
    }

    fn simplify_constraints_once(&mut self) -> Pass {
        if self.constraints.is_empty() {
            return Pass::Unchanged;
        }
        let simplifier = ExprSimplifier::new(RangeEvaluator::new(self, false));
        let num_dims = self.dims.len();
        let num_symbols = self.num_symbols();
        let old = std::mem::take(&mut self.constraints);
        let mut changed = false;
        let mut kept: Vec<(AffineExpr, Interval)> = Vec::with_capacity(old.len());
        for (e, iv) in old {
            if iv.is_empty() {
                return Pass::Empty;
            }
            let simplified = simplifier.simplify(&e);
            let (e2, iv2) = simplifier.simplify_constraint_range(simplified, iv);
            if iv2.is_empty() {
                return Pass::Empty;
            }
            if e2 != e || iv2 != iv {
                changed = true;
            }
            let bounds = match e2 {
                AffineExpr::Constant(c) => {
                    if !iv2.contains(c) {
                        return Pass::Empty;
                    }
                    changed = true;
                    continue;
                }
                AffineExpr::Dim(i) if i < num_dims => Some(&mut self.dims[i].bounds),
                AffineExpr::Symbol(i) if i < num_symbols => {
                    let range_vars = self.range_vars.len();
                    Some(if i < range_vars {
                        &mut self.range_vars[i].bounds
                    } else {
                        &mut self.rt_vars[i - range_vars].bounds
                    })
                }
                _ => None,
            };
            if let Some(bounds) = bounds {
                *bounds = bounds.intersect(iv2);
                if bounds.is_empty() {
                    return Pass::Empty;
                }
                changed = true;
                continue;
            }
            let range = simplifier.ranges.wrapped_range(&e2);
            if iv2.includes(range) {
                changed = true;
                continue;
            }
            if range.intersect(iv2).is_empty() {
                return Pass::Empty;
            }
            if let Some(existing) = kept.iter_mut().find(|(k, _)| *k == e2) {
                existing.1 = existing.1.intersect(iv2);
                if existing.1.is_empty() {
                    return Pass::Empty;
                }
                changed = true;
                continue;
            }
            kept.push((e2, iv2));
        }
        self.constraints = kept;
        if changed {
            Pass::Changed
        } else {
            Pass::Unchanged
        }
    }
}

enum Pass {
    Empty,
    Changed,
    Unchanged,
}

/// `Σ coefficient · atom + constant`: a flattened sum. Atoms are dimensions, symbols and
/// `floordiv`/`ceildiv`/`mod` expressions.
#[derive(Clone, Debug, Default, PartialEq)]
struct Sum {
    terms: Vec<(AffineExpr, i64)>,
    constant: i64,
}

impl Sum {
    /// `self` as `d·outer + inner`: the terms whose coefficient `d` divides (divided by it)
    /// and the constant's quotient in `outer`, the other terms and the constant's
    /// remainder (in `[0, d)`) in `inner`.
    fn split_by(self, d: i64) -> (Sum, Sum) {
        let mut outer = Sum::default();
        let mut inner = Sum::default();
        for (t, c) in self.terms {
            if c % d == 0 {
                outer.terms.push((t, c / d));
            } else {
                inner.terms.push((t, c));
            }
        }
        outer.constant = self.constant.div_euclid(d);
        inner.constant = self.constant.rem_euclid(d);
        (outer, inner)
    }

    /// The sum of the first `p` of `ordered` terms with their coefficients divided by `g`
    /// (which divides each of them).
    fn prefix_divided(ordered: &[(AffineExpr, i64, Range)], p: usize, g: i64) -> Sum {
        Sum {
            terms: ordered[..p]
                .iter()
                .map(|(t, c, _)| (t.clone(), c / g))
                .collect(),
            constant: 0,
        }
    }

    /// Combines like terms and drops zero ones. `None` on coefficient overflow.
    fn normalize(&mut self) -> Option<()> {
        if self.terms.len() > 1 {
            self.terms.sort_by(|a, b| a.0.cmp(&b.0));
            let mut merged: Vec<(AffineExpr, i64)> = Vec::with_capacity(self.terms.len());
            for (atom, c) in self.terms.drain(..) {
                match merged.last_mut() {
                    Some((last, lc)) if *last == atom => *lc = lc.checked_add(c)?,
                    _ => merged.push((atom, c)),
                }
            }
            self.terms = merged;
        }
        self.terms.retain(|(_, c)| *c != 0);
        Some(())
    }

    /// The canonical expression: terms in [`compare_exprs`] order, constant last.
    fn build(&self) -> AffineExpr {
        let mut summands: Vec<AffineExpr> = self
            .terms
            .iter()
            .map(|(atom, c)| {
                if *c == 1 {
                    atom.clone()
                } else {
                    AffineExpr::Mul(Box::new(atom.clone()), *c)
                }
            })
            .collect();
        summands.sort_by(compare_exprs);
        let mut summands = summands.into_iter();
        let Some(mut acc) = summands.next() else {
            return AffineExpr::Constant(self.constant);
        };
        for s in summands {
            acc = AffineExpr::Add(Box::new(acc), Box::new(s));
        }
        if self.constant != 0 {
            acc = AffineExpr::Add(Box::new(acc), Box::new(AffineExpr::Constant(self.constant)));
        }
        acc
    }
}

fn kind_rank(e: &AffineExpr) -> u8 {
    match e {
        AffineExpr::Add(..) => 0,
        AffineExpr::Mul(..) => 1,
        AffineExpr::Product(..) => 2,
        AffineExpr::Mod(..) => 3,
        AffineExpr::FloorDiv(..) => 4,
        AffineExpr::CeilDiv(..) => 5,
        AffineExpr::Max(..) => 6,
        AffineExpr::Min(..) => 7,
        AffineExpr::Dim(_) => 8,
        AffineExpr::Symbol(_) => 9,
        AffineExpr::Constant(_) => 10,
    }
}

/// The order of summands in a simplified sum (that of XLA's `CompareExprs`, which follows
/// MLIR's expression kinds): by kind — sums, products (by a constant, then of two
/// expressions), `mod`, `floordiv`, `ceildiv`, `max`, `min`, dimensions, symbols, constants
/// last — then by operands, then by position or value.
pub fn compare_exprs(a: &AffineExpr, b: &AffineExpr) -> Ordering {
    use AffineExpr::*;
    kind_rank(a).cmp(&kind_rank(b)).then_with(|| match (a, b) {
        (Add(a1, a2), Add(b1, b2))
        | (Product(a1, a2), Product(b1, b2))
        | (Max(a1, a2), Max(b1, b2))
        | (Min(a1, a2), Min(b1, b2)) => compare_exprs(a1, b1).then_with(|| compare_exprs(a2, b2)),
        (Mul(x, c), Mul(y, d))
        | (Mod(x, c), Mod(y, d))
        | (FloorDiv(x, c), FloorDiv(y, d))
        | (CeilDiv(x, c), CeilDiv(y, d)) => compare_exprs(x, y).then(c.cmp(d)),
        (Dim(i), Dim(j)) | (Symbol(i), Symbol(j)) => i.cmp(j),
        (Constant(x), Constant(y)) => x.cmp(y),
        _ => Ordering::Equal,
    })
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    // gcd(i64::MIN, 0) does not fit: report 1, which disables the rules that use it.
    i64::try_from(a).unwrap_or(1)
}

/// Simplifies expressions given the ranges of one map's variables.
pub(crate) struct ExprSimplifier {
    pub ranges: RangeEvaluator,
}

impl ExprSimplifier {
    pub fn new(ranges: RangeEvaluator) -> ExprSimplifier {
        ExprSimplifier { ranges }
    }

    /// Rewrites `e` to a fixpoint; `e` itself if that could overflow (module doc).
    pub fn simplify(&self, e: &AffineExpr) -> AffineExpr {
        if self.ranges.may_overflow(e) {
            return e.clone();
        }
        let mut current = e.clone();
        for _ in 0..MAX_ITERATIONS {
            match self.once(&current) {
                Some(next) if next != current => current = next,
                _ => break,
            }
        }
        if self.ranges.may_overflow(&current) {
            return e.clone();
        }
        current
    }

    fn range(&self, e: &AffineExpr) -> Range {
        self.ranges.range(e)
    }

    /// One bottom-up rewrite round. `None` when a coefficient would overflow.
    fn once(&self, e: &AffineExpr) -> Option<AffineExpr> {
        if !matches!(e, AffineExpr::Constant(_)) {
            let r = self.range(e);
            if r.is_point() {
                return Some(AffineExpr::Constant(i64::try_from(r.lo).ok()?));
            }
        }
        match e {
            AffineExpr::Constant(_) | AffineExpr::Dim(_) | AffineExpr::Symbol(_) => Some(e.clone()),
            AffineExpr::Add(..) | AffineExpr::Mul(..) => {
                let mut sum = Sum::default();
                self.flatten(e, 1, &mut sum, true)?;
                let sum = self.rewrite_sum(sum)?;
                Some(sum.build())
            }
            AffineExpr::FloorDiv(a, d) if *d > 0 => self.floor_div(a, *d),
            AffineExpr::CeilDiv(a, d) if *d > 0 => self.ceil_div(a, *d),
            AffineExpr::Mod(a, m) if *m > 0 => self.modulo(a, *m),
            AffineExpr::Product(a, b) => self.product(a, b),
            AffineExpr::Max(a, b) => self.extremum(a, b, Ordering::Greater),
            AffineExpr::Min(a, b) => self.extremum(a, b, Ordering::Less),
            // Not constructible through the API; leave alone.
            AffineExpr::FloorDiv(..) | AffineExpr::CeilDiv(..) | AffineExpr::Mod(..) => {
                Some(e.clone())
            }
        }
    }

    /// `a * b`: a scaling once either side is a constant; constant factors of either side
    /// move out (`(x * 2) * y` is `(x * y) * 2`, which sums then combine).
    fn product(&self, a: &AffineExpr, b: &AffineExpr) -> Option<AffineExpr> {
        let (a, b) = (self.once(a)?, self.once(b)?);
        Some(match (a, b) {
            (AffineExpr::Constant(c), x) | (x, AffineExpr::Constant(c)) => {
                AffineExpr::Mul(Box::new(x), c)
            }
            (AffineExpr::Mul(x, c), y) | (y, AffineExpr::Mul(x, c)) => {
                AffineExpr::Mul(Box::new(AffineExpr::Product(x, Box::new(y))), c)
            }
            (a, b) => AffineExpr::Product(Box::new(a), Box::new(b)),
        })
    }

    /// `max(a, b)` (`keep` = `Greater`) or `min(a, b)` (`Less`): the operand that wins on
    /// the whole domain when the ranges of the operands, or of their difference, say which.
    fn extremum(&self, a: &AffineExpr, b: &AffineExpr, keep: Ordering) -> Option<AffineExpr> {
        let (a, b) = (self.once(a)?, self.once(b)?);
        let difference = self.range(&self.once(&(a.clone() - b.clone()))?);
        let (ra, rb) = (self.range(&a), self.range(&b));
        let a_at_least_b = difference.lo >= 0 || ra.lo >= rb.hi;
        let b_at_least_a = difference.hi <= 0 || rb.lo >= ra.hi;
        Some(match keep {
            Ordering::Greater if a_at_least_b => a,
            Ordering::Greater if b_at_least_a => b,
            Ordering::Less if b_at_least_a => a,
            Ordering::Less if a_at_least_b => b,
            Ordering::Greater => AffineExpr::Max(Box::new(a), Box::new(b)),
            _ => AffineExpr::Min(Box::new(a), Box::new(b)),
        })
    }

    /// Adds `coeff · e` to `sum`, distributing products over sums. With `simplify_atoms`,
    /// each atom is first rewritten by [`Self::once`].
    fn flatten(
        &self,
        e: &AffineExpr,
        coeff: i64,
        sum: &mut Sum,
        simplify_atoms: bool,
    ) -> Option<()> {
        if coeff == 0 {
            return Some(());
        }
        match e {
            AffineExpr::Constant(c) => {
                sum.constant = sum.constant.checked_add(c.checked_mul(coeff)?)?;
            }
            AffineExpr::Add(a, b) => {
                self.flatten(a, coeff, sum, simplify_atoms)?;
                self.flatten(b, coeff, sum, simplify_atoms)?;
            }
            AffineExpr::Mul(a, c) => {
                self.flatten(a, coeff.checked_mul(*c)?, sum, simplify_atoms)?
            }
            _ if simplify_atoms => {
                let s = self.once(e)?;
                self.flatten(&s, coeff, sum, false)?;
            }
            _ => sum.terms.push((e.clone(), coeff)),
        }
        Some(())
    }

    fn sum_of(&self, e: &AffineExpr) -> Option<Sum> {
        let mut sum = Sum::default();
        self.flatten(e, 1, &mut sum, false)?;
        sum.normalize()?;
        Some(sum)
    }

    /// Recombines `mod`/`floordiv` pairs in a sum (module doc).
    fn rewrite_sum(&self, mut sum: Sum) -> Option<Sum> {
        sum.normalize()?;
        let has = |sum: &Sum, f: fn(&AffineExpr) -> bool| sum.terms.iter().any(|(t, _)| f(t));
        if !has(&sum, |t| matches!(t, AffineExpr::FloorDiv(..))) {
            return Some(sum);
        }
        // (x mod c) * k + (x floordiv c) * (c * k) = x * k.
        'restart: loop {
            for i in 0..sum.terms.len() {
                let (AffineExpr::Mod(x, c), k) = &sum.terms[i] else {
                    continue;
                };
                let (x, c, k) = ((**x).clone(), *c, *k);
                let Some(div_coeff) = c.checked_mul(k) else {
                    continue;
                };
                let direct = AffineExpr::FloorDiv(Box::new(x.clone()), c);
                let find = |target: &AffineExpr| {
                    sum.terms
                        .iter()
                        .position(|(t, tc)| t == target && *tc == div_coeff)
                };
                let j = find(&direct).or_else(|| find(&self.simplify(&direct)));
                if let Some(j) = j {
                    let (hi, lo) = (i.max(j), i.min(j));
                    sum.terms.remove(hi);
                    sum.terms.remove(lo);
                    self.flatten(&x, k, &mut sum, false)?;
                    sum.normalize()?;
                    continue 'restart;
                }
            }
            break;
        }
        // x * k - (x floordiv c) * (c * k) = (x mod c) * k, when all of x * k is there.
        'restart: loop {
            for i in 0..sum.terms.len() {
                let (AffineExpr::FloorDiv(x, c), cd) = &sum.terms[i] else {
                    continue;
                };
                let (c, cd) = (*c, *cd);
                if cd >= 0 || cd % c != 0 {
                    continue;
                }
                let Some(k) = (cd / c).checked_neg() else {
                    continue;
                };
                let x = (**x).clone();
                let xs = self.sum_of(&x)?;
                if xs.terms.is_empty() {
                    continue;
                }
                let mut positions = Vec::with_capacity(xs.terms.len());
                for (t, tc) in &xs.terms {
                    let want = tc.checked_mul(k)?;
                    match sum.terms.iter().position(|(s, sc)| s == t && *sc == want) {
                        Some(p) => positions.push(p),
                        None => break,
                    }
                }
                if positions.len() != xs.terms.len() {
                    continue;
                }
                positions.push(i);
                positions.sort_unstable();
                for p in positions.into_iter().rev() {
                    sum.terms.remove(p);
                }
                sum.constant = sum.constant.checked_sub(xs.constant.checked_mul(k)?)?;
                sum.terms.push((AffineExpr::Mod(Box::new(x), c), k));
                sum.normalize()?;
                continue 'restart;
            }
            break;
        }
        Some(sum)
    }

    /// Terms ordered by decreasing |coefficient| (ties: canonical order), with the exact
    /// range of each `coefficient · atom`.
    fn ordered_terms(&self, sum: &Sum) -> Vec<(AffineExpr, i64, Range)> {
        let mut terms: Vec<(AffineExpr, i64, Range)> = sum
            .terms
            .iter()
            .map(|(t, c)| (t.clone(), *c, self.range(t).mul(*c)))
            .collect();
        terms.sort_by(|a, b| {
            b.1.unsigned_abs()
                .cmp(&a.1.unsigned_abs())
                .then_with(|| compare_exprs(&a.0, &b.0))
        });
        terms
    }

    /// Finds the shortest prefix `H` of `terms` and `g = gcd(divisor, coefficients of H)`
    /// such that the rest plus `constant` lies within `[j·g, j·g + g - 1]`; returns
    /// `(prefix length, g, j)`. `g = divisor` for the empty prefix.
    fn split(
        &self,
        terms: &[(AffineExpr, i64, Range)],
        constant: i64,
        divisor: i64,
        require_zero_block: bool,
    ) -> Option<(usize, i64, i128)> {
        prefix_splits(terms, constant.into(), divisor).find_map(|(p, g, rest)| {
            let g128 = g as i128;
            let j = rest.lo.div_euclid(g128);
            (j == rest.hi.div_euclid(g128) && (!require_zero_block || j == 0 || p == 0))
                .then_some((p, g, j))
        })
    }
}

/// The places to split a sum `terms + constant` into a prefix `H = terms[..p]` and a rest,
/// shortest prefix first: each with `g`, the gcd of `divisor` and `H`'s coefficients (a
/// `divisor` of 0 leaves the empty prefix out), and the range of the rest `terms[p..] +
/// constant` where it is finite. Stops at the first `g <= 1`: a longer prefix's gcd
/// divides it.
fn prefix_splits(
    terms: &[(AffineExpr, i64, Range)],
    constant: i128,
    divisor: i64,
) -> impl Iterator<Item = (usize, i64, Range)> + '_ {
    // suffix[p]: range of terms[p..] + constant.
    let mut suffix = vec![Range::point(constant); terms.len() + 1];
    for p in (0..terms.len()).rev() {
        suffix[p] = suffix[p + 1].add(terms[p].2);
    }
    let first = usize::from(divisor == 0).min(terms.len());
    let mut g = terms[..first].iter().fold(divisor, |g, t| gcd(g, t.1));
    (first..=terms.len())
        .map(move |p| {
            if p > first {
                g = gcd(g, terms[p - 1].1);
            }
            (p, g, suffix[p])
        })
        .take_while(|&(_, g, _)| g > 1)
        .filter(|(_, _, rest)| !rest.is_empty() && rest.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{cst, dim, sym};
    use crate::linearize::delinearize;
    use crate::map::{default_dims, default_range_vars, seed_gelu};

    /// Parses, simplifies and prints.
    fn simplify(text: &str) -> String {
        let mut map = IndexingMap::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        map.simplify();
        map.to_string()
    }

    #[test]
    fn must_show_gelu_delinearized_over_6x512x4096() {
        let linear = seed_gelu::map_with(vec![dim(1) * 512 + dim(0) * 4 + sym(0)]);
        let shape = [6, 512, 4096];
        let delinearization = IndexingMap::new(
            default_dims(&[shape.iter().product()]),
            Vec::new(),
            Vec::new(),
            delinearize(dim(0), &shape),
        );
        assert_eq!(
            delinearization.to_string(),
            "(d0) -> (d0 floordiv 2097152, (d0 floordiv 4096) mod 512, d0 mod 4096), \
             domain: d0 in [0, 12582911]"
        );
        let mut map = linear.compose(&delinearization);
        map.simplify();
        assert_eq!(map.to_string(), seed_gelu::PRINTED);
    }

    /// `(input, simplified)` pairs: the input's results (and constraints) simplify to
    /// exactly the printed output.
    fn check(cases: &[(&str, &str)]) {
        for (input, want) in cases {
            assert_eq!(simplify(input), *want, "simplifying {input}");
        }
    }

    #[test]
    fn folds_constants_and_normalizes_sums() {
        check(&[
            (
                "(d0, d1) -> (d0 * 2 + 3 + d1 + d0 * -2 + 4 * (d1 + 1)), domain: d0 in [0, 9], d1 in [0, 9]",
                "(d0, d1) -> (d1 * 5 + 7), domain: d0 in [0, 9], d1 in [0, 9]",
            ),
            (
                "(d0, d1) -> (d0 + d1 * -3 + -4), domain: d0 in [0, 3], d1 in [0, 5]",
                "(d0, d1) -> (d1 * -3 + d0 - 4), domain: d0 in [0, 3], d1 in [0, 5]",
            ),
            (
                "(d0, d1) -> (d1 + d0, (d0 * 2) * 3, 2 * 3 + 1), domain: d0 in [0, 3], d1 in [0, 5]",
                "(d0, d1) -> (d0 + d1, d0 * 6, 7), domain: d0 in [0, 3], d1 in [0, 5]",
            ),
            // Variables with a single value become constants.
            (
                "(d0)[s0] -> (d0 + s0), domain: d0 in [3, 3], s0 in [0, 5]",
                "(d0)[s0] -> (s0 + 3), domain: d0 in [3, 3], s0 in [0, 5]",
            ),
        ]);
    }

    /// XLA's `max`/`min` and products of two variables (its simplify-affine tests).
    #[test]
    fn max_min_and_products_of_variables() {
        check(&[
            (
                "()[s0] -> (max(s0, 5), min(s0, 5)), domain: s0 in [0, 4]",
                "()[s0] -> (5, s0), domain: s0 in [0, 4]",
            ),
            (
                "()[s0] -> (max(s0, s0 + 5), min(s0, s0 + 5)), domain: s0 in [0, 10]",
                "()[s0] -> (s0 + 5, s0), domain: s0 in [0, 10]",
            ),
            (
                "()[s0] -> (max(s0, 5), min(s0, 5)), domain: s0 in [0, 10]",
                "()[s0] -> (max(s0, 5), min(s0, 5)), domain: s0 in [0, 10]",
            ),
            (
                "(d0)[s0] -> (2 * d0 * s0, (d0 + 1) * (s0 * 0 + 3)), domain: d0 in [0, 3], s0 in [0, 2]",
                "(d0)[s0] -> (d0 * s0 * 2, d0 * 3 + 3), domain: d0 in [0, 3], s0 in [0, 2]",
            ),
        ]);
    }

    #[test]
    fn mod_by_a_modulus_above_the_range_disappears() {
        check(&[
            (
                "(d0) -> (d0 mod 8), domain: d0 in [0, 7]",
                "(d0) -> (d0), domain: d0 in [0, 7]",
            ),
            (
                "(d0) -> ((d0 + 8) mod 8, (d0 + 3) mod 8), domain: d0 in [0, 4]",
                "(d0) -> (d0, d0 + 3), domain: d0 in [0, 4]",
            ),
        ]);
    }

    #[test]
    fn floordiv_by_a_divisor_above_the_range_is_zero() {
        check(&[
            (
                "(d0) -> (d0 floordiv 8), domain: d0 in [0, 7]",
                "(d0) -> (0), domain: d0 in [0, 7]",
            ),
            (
                "(d0) -> ((d0 + 16) floordiv 8), domain: d0 in [0, 7]",
                "(d0) -> (2), domain: d0 in [0, 7]",
            ),
        ]);
    }

    #[test]
    fn nested_floordiv_and_mod() {
        check(&[
            (
                "(d0) -> ((d0 floordiv 4) floordiv 8), domain: d0 in [0, 1000]",
                "(d0) -> (d0 floordiv 32), domain: d0 in [0, 1000]",
            ),
            (
                "(d0) -> ((d0 mod 96) floordiv 32), domain: d0 in [0, 1000]",
                "(d0) -> ((d0 floordiv 32) mod 3), domain: d0 in [0, 1000]",
            ),
            (
                "(d0) -> ((d0 mod 96) mod 32, (d0 mod 32) mod 96), domain: d0 in [0, 1000]",
                "(d0) -> (d0 mod 32, d0 mod 32), domain: d0 in [0, 1000]",
            ),
            (
                "(d0) -> ((d0 floordiv 4 + 8) floordiv 2), domain: d0 in [0, 100]",
                "(d0) -> (d0 floordiv 8 + 4), domain: d0 in [0, 100]",
            ),
        ]);
    }

    #[test]
    fn sums_split_by_divisibility() {
        check(&[
            (
                "(d0, d1) -> ((d0 * 8 + d1) floordiv 8, (d0 * 8 + d1) mod 8), \
                 domain: d0 in [0, 100], d1 in [0, 7]",
                "(d0, d1) -> (d0, d1), domain: d0 in [0, 100], d1 in [0, 7]",
            ),
            (
                "(d0, d1) -> ((d0 * 6 + d1) floordiv 9), domain: d0 in [0, 100], d1 in [0, 2]",
                "(d0, d1) -> ((d0 * 2) floordiv 3), domain: d0 in [0, 100], d1 in [0, 2]",
            ),
            (
                "(d0, d1)[s0] -> ((d1 * 512 + d0 * 4 + s0) mod 4096), \
                 domain: d0 in [0, 127], d1 in [0, 24575], s0 in [0, 3]",
                "(d0, d1)[s0] -> ((d1 mod 8) * 512 + d0 * 4 + s0), \
                 domain: d0 in [0, 127], d1 in [0, 24575], s0 in [0, 3]",
            ),
            (
                "(d0) -> ((d0 * 4) mod 8, (d0 * 4 + 2) mod 8, (d0 * 6) mod 8), domain: d0 in [0, 100]",
                "(d0) -> ((d0 mod 2) * 4, (d0 mod 2) * 4 + 2, ((d0 * 3) mod 4) * 2), domain: d0 in [0, 100]",
            ),
            (
                "(d0) -> ((d0 * 12) floordiv 8, (d0 * 16 + 5) floordiv 8), domain: d0 in [0, 100]",
                "(d0) -> ((d0 * 3) floordiv 2, d0 * 2), domain: d0 in [0, 100]",
            ),
            (
                "(d0) -> ((d0 + 7) ceildiv 8, (d0 * 8 + 3) ceildiv 4), domain: d0 in [0, 100]",
                "(d0) -> ((d0 + 7) ceildiv 8, d0 * 2 + 1), domain: d0 in [0, 100]",
            ),
        ]);
    }

    #[test]
    fn mod_and_floordiv_pairs_recombine() {
        check(&[
            (
                "(d0) -> ((d0 mod 4) * 3 + (d0 floordiv 4) * 12), domain: d0 in [0, 100]",
                "(d0) -> (d0 * 3), domain: d0 in [0, 100]",
            ),
            (
                "(d0) -> (d0 - (d0 floordiv 4) * 4), domain: d0 in [0, 100]",
                "(d0) -> (d0 mod 4), domain: d0 in [0, 100]",
            ),
        ]);
    }

    #[test]
    fn constraints_fold_into_ranges_or_disappear() {
        check(&[
            (
                "(d0, d1) -> (d0), domain: d0 in [0, 100], d1 in [0, 4], d0 + 5 in [0, 50], \
                 d1 * 4 in [2, 13], d0 floordiv 4 in [1, 5]",
                "(d0, d1) -> (d0), domain: d0 in [4, 23], d1 in [1, 3]",
            ),
            (
                "(d0, d1) -> (d0, d1), domain: d0 in [0, 100], d1 in [0, 3], d0 * 4 + d1 in [0, 11]",
                "(d0, d1) -> (d0, d1), domain: d0 in [0, 2], d1 in [0, 3]",
            ),
            (
                "(d0, d1) -> (d0 + d1), domain: d0 in [0, 10], d1 in [0, 10], d0 + d1 in [0, 20]",
                "(d0, d1) -> (d0 + d1), domain: d0 in [0, 10], d1 in [0, 10]",
            ),
            (
                "(d0)[s0, s1] -> (d0 + s1), domain: d0 in [0, 3], s0 in [0, 5], s1 in [0, 2], \
                 s0 + s1 in [0, 4]",
                "(d0)[s0, s1] -> (d0 + s1), domain: d0 in [0, 3], s0 in [0, 5], s1 in [0, 2], \
                 s0 + s1 in [0, 4]",
            ),
        ]);
    }

    #[test]
    fn results_use_constraints() {
        check(&[(
            "(d0, d1) -> ((d0 + d1) mod 16), domain: d0 in [0, 10], d1 in [0, 10], d0 + d1 in [0, 12]",
            "(d0, d1) -> (d0 + d1), domain: d0 in [0, 10], d1 in [0, 10], d0 + d1 in [0, 12]",
        )]);
    }

    #[test]
    fn detects_empty_domains() {
        check(&[
            (
                "(d0, d1) -> (d0 + d1), domain: d0 in [0, 10], d1 in [0, 10], d0 + d1 in [30, 40]",
                "(d0, d1) -> (0), domain: d0 in [0, -1], d1 in [0, -1]",
            ),
            (
                "(d0)[s0] -> (d0), domain: d0 in [0, 10], s0 in [0, 3], d0 mod 2 in [5, 6]",
                "(d0)[s0] -> (0), domain: d0 in [0, -1], s0 in [0, -1]",
            ),
            (
                "(d0) -> (d0), domain: d0 in [0, 10], d0 * 2 in [3, 3]",
                "(d0) -> (0), domain: d0 in [0, -1]",
            ),
            (
                "() -> (5), domain: 2 in [3, 4]",
                "() -> (0), domain: 0 in [0, -1]",
            ),
            (
                "(d0) -> (d0), domain: d0 in [5, 4]",
                "(d0) -> (0), domain: d0 in [0, -1]",
            ),
        ]);
        let mut map = IndexingMap::parse("() -> (5), domain: 2 in [3, 4]").unwrap();
        assert!(map.is_known_empty());
        map.simplify();
        assert!(map.is_known_empty());
        assert!(!map.contains(&[], &[]));
        // A constraint on a bare variable narrows its range.
        check(&[(
            "(d0) -> (d0), domain: d0 in [0, 10], d0 in [3, 4], d0 in [4, 20]",
            "(d0) -> (4), domain: d0 in [4, 4]",
        )]);
    }

    #[test]
    fn expressions_that_may_overflow_are_left_alone() {
        let text = "(d0) -> ((d0 * 4611686018427387904 + d0 * 4611686018427387904) floordiv 2), \
                    domain: d0 in [0, 3]";
        let mut map = IndexingMap::parse(text).unwrap();
        let before = map.clone();
        map.simplify();
        assert_eq!(map.results, before.results);
        for d0 in 0..4 {
            assert_eq!(map.eval(&[d0], &[]), before.eval(&[d0], &[]));
        }
    }

    #[test]
    fn remove_unused_symbols_keeps_runtime_variables() {
        let mut map = IndexingMap::parse(
            "(d0)[s0, s1, s2, s3]{rt0} -> (d0 + s1 + rt0), domain: d0 in [0, 3], s0 in [0, 5], \
             s1 in [0, 2], s2 in [0, 7], s3 in [0, 7], rt0 in [0, 9], s2 + s1 in [0, 8], \
             s3 * 2 in [0, 5]",
        )
        .unwrap();
        assert_eq!(map.remove_unused_symbols(), vec![0, 3]);
        assert_eq!(
            map.to_string(),
            "(d0)[s0, s1]{rt0} -> (d0 + s0 + rt0), domain: d0 in [0, 3], s0 in [0, 2], \
             s1 in [0, 7], rt0 in [0, 9], s1 + s0 in [0, 8]"
        );
        assert_eq!(map.remove_unused_symbols(), Vec::<usize>::new());
        // A constraint on removed symbols alone that can never hold: known empty instead.
        let mut map = IndexingMap::parse(
            "(d0)[s0] -> (d0), domain: d0 in [0, 3], s0 in [0, 5], s0 * 2 in [20, 30]",
        )
        .unwrap();
        assert_eq!(map.remove_unused_symbols(), Vec::<usize>::new());
        assert!(map.is_known_empty());
    }

    #[test]
    fn simplify_expr_uses_the_map() {
        let map = IndexingMap::new(
            default_dims(&[16]),
            default_range_vars(&[4]),
            Vec::new(),
            Vec::new(),
        );
        let e = (dim(0) * 4 + sym(0)).floor_div(4) + cst(0);
        assert_eq!(map.simplify_expr(&e), dim(0));
    }
}
