//! Affine expressions over dimensions and symbols, with XLA's three extensions.
//!
//! Divisions always have a constant, positive right-hand side, and so do scalings: encoding
//! that in the type (`Mul(e, c)`, `FloorDiv(e, d)`) keeps evaluation, range analysis and
//! the simplifier total: there is no division by zero to reject later. XLA's symbolic
//! expressions (what its indexing maps are written in today) add a product of two
//! variable expressions and `max`/`min`; they are [`AffineExpr::Product`],
//! [`AffineExpr::Max`] and [`AffineExpr::Min`] here, kept apart from `Mul` so that
//! every rule that needs a constant factor still sees one in the type. Our emitters never
//! build them; they come from XLA's text.

use std::ops;

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AffineExpr {
    Constant(i64),
    /// Dimension `i` of the map (`d_i`, or its name).
    Dim(usize),
    /// Symbol `i`: range variables first, then runtime variables (`s_i`, or its name).
    Symbol(usize),
    Add(Box<AffineExpr>, Box<AffineExpr>),
    Mul(Box<AffineExpr>, i64),
    /// Division rounding towards negative infinity; the divisor is positive.
    FloorDiv(Box<AffineExpr>, i64),
    /// Division rounding towards positive infinity; the divisor is positive.
    CeilDiv(Box<AffineExpr>, i64),
    /// The non-negative remainder of a floor division; the modulus is positive.
    Mod(Box<AffineExpr>, i64),
    /// The product of two expressions neither of which is a constant (semi-affine).
    Product(Box<AffineExpr>, Box<AffineExpr>),
    Max(Box<AffineExpr>, Box<AffineExpr>),
    Min(Box<AffineExpr>, Box<AffineExpr>),
}

pub fn dim(i: usize) -> AffineExpr {
    AffineExpr::Dim(i)
}

pub fn sym(i: usize) -> AffineExpr {
    AffineExpr::Symbol(i)
}

pub fn cst(c: i64) -> AffineExpr {
    AffineExpr::Constant(c)
}

impl AffineExpr {
    /// The terms of a sum, left to right (the expression itself when it is not a sum).
    /// Walked with a stack: a sum's depth is the input's to choose.
    pub fn sum_terms(&self) -> Vec<&AffineExpr> {
        let mut terms = Vec::new();
        let mut pending = vec![self];
        while let Some(e) = pending.pop() {
            match e {
                AffineExpr::Add(a, b) => {
                    pending.push(b);
                    pending.push(a);
                }
                _ => terms.push(e),
            }
        }
        terms
    }

    /// `self floordiv d`. Panics if `d` is not positive: a caller bug, never input-driven
    /// (parsers reject such text before building an expression).
    pub fn floor_div(self, d: i64) -> AffineExpr {
        assert!(d > 0, "floordiv by {d}");
        AffineExpr::FloorDiv(Box::new(self), d)
    }

    /// `self ceildiv d`; `d` must be positive.
    pub fn ceil_div(self, d: i64) -> AffineExpr {
        assert!(d > 0, "ceildiv by {d}");
        AffineExpr::CeilDiv(Box::new(self), d)
    }

    /// `self mod m`; `m` must be positive.
    pub fn modulo(self, m: i64) -> AffineExpr {
        assert!(m > 0, "mod by {m}");
        AffineExpr::Mod(Box::new(self), m)
    }

    pub fn as_constant(&self) -> Option<i64> {
        match self {
            AffineExpr::Constant(c) => Some(*c),
            _ => None,
        }
    }

    /// The value at a point (`symbols`: range variables, then runtime variables). Arithmetic
    /// wraps like the generated code's 64-bit index arithmetic would.
    pub fn eval(&self, dims: &[i64], symbols: &[i64]) -> i64 {
        match self {
            AffineExpr::Constant(c) => *c,
            AffineExpr::Dim(i) => dims[*i],
            AffineExpr::Symbol(i) => symbols[*i],
            AffineExpr::Add(a, b) => a.eval(dims, symbols).wrapping_add(b.eval(dims, symbols)),
            AffineExpr::Mul(a, c) => a.eval(dims, symbols).wrapping_mul(*c),
            AffineExpr::FloorDiv(a, d) => a.eval(dims, symbols).div_euclid(*d),
            AffineExpr::CeilDiv(a, d) => -(-a.eval(dims, symbols)).div_euclid(*d),
            AffineExpr::Mod(a, m) => a.eval(dims, symbols).rem_euclid(*m),
            AffineExpr::Product(a, b) => a.eval(dims, symbols).wrapping_mul(b.eval(dims, symbols)),
            AffineExpr::Max(a, b) => a.eval(dims, symbols).max(b.eval(dims, symbols)),
            AffineExpr::Min(a, b) => a.eval(dims, symbols).min(b.eval(dims, symbols)),
        }
    }

    /// Calls `f` on this expression and every subexpression, parents first.
    pub fn walk(&self, f: &mut impl FnMut(&AffineExpr)) {
        f(self);
        match self {
            AffineExpr::Add(a, b)
            | AffineExpr::Product(a, b)
            | AffineExpr::Max(a, b)
            | AffineExpr::Min(a, b) => {
                a.walk(f);
                b.walk(f);
            }
            AffineExpr::Mul(a, _)
            | AffineExpr::FloorDiv(a, _)
            | AffineExpr::CeilDiv(a, _)
            | AffineExpr::Mod(a, _) => a.walk(f),
            AffineExpr::Constant(_) | AffineExpr::Dim(_) | AffineExpr::Symbol(_) => {}
        }
    }

    /// Whether symbol `s` occurs in the expression.
    pub fn uses_symbol(&self, s: usize) -> bool {
        let mut found = false;
        self.walk(&mut |e| found |= *e == AffineExpr::Symbol(s));
        found
    }

    /// Replaces dimensions and symbols by expressions (`dims[i]` for `d_i`, `symbols[i]` for
    /// `s_i`): the basis of composition.
    pub fn substitute(&self, dims: &[AffineExpr], symbols: &[AffineExpr]) -> AffineExpr {
        match self {
            AffineExpr::Constant(c) => AffineExpr::Constant(*c),
            AffineExpr::Dim(i) => dims[*i].clone(),
            AffineExpr::Symbol(i) => symbols[*i].clone(),
            AffineExpr::Add(a, b) => AffineExpr::Add(
                Box::new(a.substitute(dims, symbols)),
                Box::new(b.substitute(dims, symbols)),
            ),
            AffineExpr::Mul(a, c) => AffineExpr::Mul(Box::new(a.substitute(dims, symbols)), *c),
            AffineExpr::FloorDiv(a, d) => {
                AffineExpr::FloorDiv(Box::new(a.substitute(dims, symbols)), *d)
            }
            AffineExpr::CeilDiv(a, d) => {
                AffineExpr::CeilDiv(Box::new(a.substitute(dims, symbols)), *d)
            }
            AffineExpr::Mod(a, m) => AffineExpr::Mod(Box::new(a.substitute(dims, symbols)), *m),
            AffineExpr::Product(a, b) => AffineExpr::Product(
                Box::new(a.substitute(dims, symbols)),
                Box::new(b.substitute(dims, symbols)),
            ),
            AffineExpr::Max(a, b) => AffineExpr::Max(
                Box::new(a.substitute(dims, symbols)),
                Box::new(b.substitute(dims, symbols)),
            ),
            AffineExpr::Min(a, b) => AffineExpr::Min(
                Box::new(a.substitute(dims, symbols)),
                Box::new(b.substitute(dims, symbols)),
            ),
        }
    }
}

impl From<i64> for AffineExpr {
    fn from(c: i64) -> AffineExpr {
        AffineExpr::Constant(c)
    }
}

impl<R: Into<AffineExpr>> ops::Add<R> for AffineExpr {
    type Output = AffineExpr;
    fn add(self, rhs: R) -> AffineExpr {
        AffineExpr::Add(Box::new(self), Box::new(rhs.into()))
    }
}

impl<R: Into<AffineExpr>> ops::Sub<R> for AffineExpr {
    type Output = AffineExpr;
    fn sub(self, rhs: R) -> AffineExpr {
        self + rhs.into() * -1
    }
}

impl ops::Mul<i64> for AffineExpr {
    type Output = AffineExpr;
    fn mul(self, c: i64) -> AffineExpr {
        AffineExpr::Mul(Box::new(self), c)
    }
}

impl ops::Neg for AffineExpr {
    type Output = AffineExpr;
    fn neg(self) -> AffineExpr {
        self * -1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eval_rounds_like_mlir() {
        let e = (dim(0) - 7).floor_div(4);
        assert_eq!(e.eval(&[0], &[]), -2);
        assert_eq!((dim(0) - 7).modulo(4).eval(&[0], &[]), 1);
        assert_eq!((dim(0) - 7).ceil_div(4).eval(&[0], &[]), -1);
        assert_eq!((dim(0) * 3 + sym(0)).eval(&[2], &[5]), 11);
    }

    #[test]
    fn substitute_composes() {
        let inner = [dim(0).floor_div(8), dim(0).modulo(8)];
        let outer = dim(0) * 8 + dim(1);
        assert_eq!(outer.substitute(&inner, &[]).eval(&[77], &[]), 77);
    }
}
