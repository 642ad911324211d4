//! Printing expressions and maps in the seed's (XLA's) syntax.
//!
//! ```text
//! (th_x, bl_x)[vector_index] -> (bl_x floordiv 4096, (bl_x floordiv 8) mod 512,
//!   (bl_x mod 8) * 512 + th_x * 4 + vector_index), domain: th_x in [0, 127],
//!   bl_x in [0, 24575], vector_index in [0, 3]
//! ```
//! (one line). Runtime variables follow the symbols in braces, `(d0)[s0]{rt0} -> ...`;
//! `[]` and `{}` are left out when empty; constraints follow the variables' ranges as
//! `expr in [lo, hi]`; `, domain: ...` is left out when there is nothing to put in it.
//!
//! Expressions print exactly as MLIR's `AffineExpr` printer does: `*`, `floordiv`,
//! `ceildiv` and `mod` bind tighter than `+` and parenthesize a left operand that is a sum
//! or another of them; `a + b * -1` prints `a - b`, `a + b * -c` prints `a - b * c`,
//! `a + -c` prints `a - c`, and `b * -1` alone prints `-b`. Two deliberate differences,
//! for trees MLIR never builds (it folds and canonicalizes on construction, so its output
//! never shows them) but our raw trees can hold: a sum on the *right* of a sum is
//! parenthesized (`a + (b + c)`), and a constant times `-1` prints `c * -1` rather than
//! `-c` (which reads back as the constant `-c`). With them, `print → parse → print` is
//! the identity on every tree but a `Product` with a constant operand, which reads back as
//! the `Mul` it equals (the simplifier makes that rewrite anyway). XLA's extensions print
//! as XLA writes them: `d0 * d1` like any product, `max(a, b)` and `min(a, b)` as calls.
//!
//! Names: a variable prints under its own name when that is an identifier the parser
//! accepts and no earlier variable took it; otherwise (empty, a keyword, a duplicate)
//! under `d<i>`, `s<i>` or `rt<i>` (with a suffix if that is taken too), so the printed
//! text always parses back to the same map.

use std::collections::HashSet;
use std::fmt::{self, Write};

use crate::expr::AffineExpr;
use crate::map::{IndexingMap, Interval};

/// Words of the expression grammar; no variable may be called this.
pub(crate) const KEYWORDS: [&str; 4] = ["floordiv", "ceildiv", "mod", "in"];

pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !KEYWORDS.contains(&name)
}

/// Writes `e` with the given names for dimensions and symbols (range variables, then
/// runtime variables); an index past the end of a list prints as `d<i>` / `s<i>`.
pub fn write_expr(
    out: &mut impl Write,
    e: &AffineExpr,
    dims: &[String],
    symbols: &[String],
) -> fmt::Result {
    Printer { dims, symbols }.expr(out, e, Binding::Weak)
}

/// [`write_expr`] into a new string.
pub fn expr_to_string(e: &AffineExpr, dims: &[String], symbols: &[String]) -> String {
    let mut s = String::new();
    // Writing into a String cannot fail.
    let _ = write_expr(&mut s, e, dims, symbols);
    s
}

/// `d0`, `s1`, ... for dimensions and symbols.
impl fmt::Display for AffineExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_expr(f, self, &[], &[])
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Binding {
    /// The context binds as loosely as `+`: no parentheses needed.
    Weak,
    /// An operand of `*`, `floordiv`, `ceildiv`, `mod`: sums and those need parentheses.
    Strong,
}

/// How the left operand of `spelling` binds: a product on the left of a product needs no
/// parentheses (`d0 * d1 * 2`, as XLA prints it; `*` reads left to right).
fn product_operand(spelling: &str, lhs: &AffineExpr) -> Binding {
    match lhs {
        AffineExpr::Mul(_, c) if spelling == " * " && *c != -1 => Binding::Weak,
        AffineExpr::Product(..) if spelling == " * " => Binding::Weak,
        _ => Binding::Strong,
    }
}

struct Printer<'a> {
    dims: &'a [String],
    symbols: &'a [String],
}

impl Printer<'_> {
    fn expr(&self, out: &mut impl Write, e: &AffineExpr, ctx: Binding) -> fmt::Result {
        let (lhs, spelling, rhs) = match e {
            AffineExpr::Constant(c) => return write!(out, "{c}"),
            AffineExpr::Dim(i) => {
                return match self.dims.get(*i) {
                    Some(name) => out.write_str(name),
                    None => write!(out, "d{i}"),
                };
            }
            AffineExpr::Symbol(i) => {
                return match self.symbols.get(*i) {
                    Some(name) => out.write_str(name),
                    None => write!(out, "s{i}"),
                };
            }
            AffineExpr::Add(a, b) => return self.sum(out, a, b, ctx),
            AffineExpr::Product(a, b) => return self.product(out, a, b, ctx),
            AffineExpr::Max(a, b) => return self.call(out, "max", a, b),
            AffineExpr::Min(a, b) => return self.call(out, "min", a, b),
            AffineExpr::Mul(a, c) => (a, " * ", *c),
            AffineExpr::FloorDiv(a, d) => (a, " floordiv ", *d),
            AffineExpr::CeilDiv(a, d) => (a, " ceildiv ", *d),
            AffineExpr::Mod(a, m) => (a, " mod ", *m),
        };
        if ctx == Binding::Strong {
            out.write_char('(')?;
        }
        if spelling == " * " && rhs == -1 && !matches!(**lhs, AffineExpr::Constant(_)) {
            out.write_char('-')?;
            self.expr(out, lhs, Binding::Strong)?;
        } else {
            self.expr(out, lhs, product_operand(spelling, lhs))?;
            write!(out, "{spelling}{rhs}")?;
        }
        if ctx == Binding::Strong {
            out.write_char(')')?;
        }
        Ok(())
    }

    /// `a * b`, parenthesized like the other products.
    fn product(
        &self,
        out: &mut impl Write,
        a: &AffineExpr,
        b: &AffineExpr,
        ctx: Binding,
    ) -> fmt::Result {
        if ctx == Binding::Strong {
            out.write_char('(')?;
        }
        self.expr(out, a, product_operand(" * ", a))?;
        out.write_str(" * ")?;
        self.expr(out, b, Binding::Strong)?;
        if ctx == Binding::Strong {
            out.write_char(')')?;
        }
        Ok(())
    }

    /// `max(a, b)` or `min(a, b)`: a call binds tighter than any operator.
    fn call(
        &self,
        out: &mut impl Write,
        name: &str,
        a: &AffineExpr,
        b: &AffineExpr,
    ) -> fmt::Result {
        write!(out, "{name}(")?;
        self.expr(out, a, Binding::Weak)?;
        out.write_str(", ")?;
        self.expr(out, b, Binding::Weak)?;
        out.write_char(')')
    }

    fn sum(
        &self,
        out: &mut impl Write,
        lhs: &AffineExpr,
        rhs: &AffineExpr,
        ctx: Binding,
    ) -> fmt::Result {
        if ctx == Binding::Strong {
            out.write_char('(')?;
        }
        self.expr(out, lhs, Binding::Weak)?;
        match rhs {
            // `a + b * -1` is `a - b`.
            AffineExpr::Mul(b, -1) => {
                out.write_str(" - ")?;
                let inner = if matches!(**b, AffineExpr::Add(..)) {
                    Binding::Strong
                } else {
                    Binding::Weak
                };
                self.expr(out, b, inner)?;
            }
            // `a + b * -c` is `a - b * c`.
            AffineExpr::Mul(b, c) if *c < -1 && c.checked_neg().is_some() => {
                out.write_str(" - ")?;
                self.expr(out, b, Binding::Strong)?;
                write!(out, " * {}", -c)?;
            }
            // `a + -c` is `a - c`.
            AffineExpr::Constant(c) if *c < 0 && c.checked_neg().is_some() => {
                write!(out, " - {}", -c)?;
            }
            // Not MLIR: keep right-nested sums distinguishable (see the module doc).
            AffineExpr::Add(..) => {
                out.write_str(" + ")?;
                self.expr(out, rhs, Binding::Strong)?;
            }
            _ => {
                out.write_str(" + ")?;
                self.expr(out, rhs, Binding::Weak)?;
            }
        }
        if ctx == Binding::Strong {
            out.write_char(')')?;
        }
        Ok(())
    }
}

impl IndexingMap {
    /// The names the map prints its dimensions and symbols (range, then runtime variables)
    /// under: the variables' own names where they are usable identifiers, else defaults.
    pub fn printed_names(&self) -> (Vec<String>, Vec<String>) {
        let mut taken = HashSet::new();
        let mut pick = |name: &str, prefix: &str, i: usize| -> String {
            if is_identifier(name) && taken.insert(name.to_string()) {
                return name.to_string();
            }
            let mut candidate = format!("{prefix}{i}");
            let mut n = 0;
            while !taken.insert(candidate.clone()) {
                n += 1;
                candidate = format!("{prefix}{i}_{n}");
            }
            candidate
        };
        let dims = self
            .dims
            .iter()
            .enumerate()
            .map(|(i, v)| pick(&v.name, "d", i))
            .collect();
        let mut symbols: Vec<String> = self
            .range_vars
            .iter()
            .enumerate()
            .map(|(i, v)| pick(&v.name, "s", i))
            .collect();
        symbols.extend(
            self.rt_vars
                .iter()
                .enumerate()
                .map(|(i, v)| pick(&v.name, "rt", i)),
        );
        (dims, symbols)
    }

    /// `e` printed with this map's variable names.
    pub fn format_expr(&self, e: &AffineExpr) -> String {
        let (dims, symbols) = self.printed_names();
        expr_to_string(e, &dims, &symbols)
    }
}

fn write_interval(out: &mut impl Write, iv: Interval) -> fmt::Result {
    write!(out, "[{}, {}]", iv.lo, iv.hi)
}

fn write_list(out: &mut impl Write, names: &[String]) -> fmt::Result {
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            out.write_str(", ")?;
        }
        out.write_str(name)?;
    }
    Ok(())
}

impl fmt::Display for IndexingMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (dims, symbols) = self.printed_names();
        let (range_names, rt_names) = symbols.split_at(self.range_vars.len());
        f.write_char('(')?;
        write_list(f, &dims)?;
        f.write_char(')')?;
        if !range_names.is_empty() {
            f.write_char('[')?;
            write_list(f, range_names)?;
            f.write_char(']')?;
        }
        if !rt_names.is_empty() {
            f.write_char('{')?;
            write_list(f, rt_names)?;
            f.write_char('}')?;
        }
        f.write_str(" -> (")?;
        for (i, e) in self.results.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write_expr(f, e, &dims, &symbols)?;
        }
        f.write_char(')')?;
        let variables = self
            .dims
            .iter()
            .chain(&self.range_vars)
            .chain(&self.rt_vars)
            .zip(dims.iter().chain(&symbols));
        let mut first = true;
        let mut separator = |f: &mut fmt::Formatter<'_>| {
            let s = if first { ", domain: " } else { ", " };
            first = false;
            f.write_str(s)
        };
        for (var, name) in variables {
            separator(f)?;
            write!(f, "{name} in ")?;
            write_interval(f, var.bounds)?;
        }
        for (e, iv) in &self.constraints {
            separator(f)?;
            write_expr(f, e, &dims, &symbols)?;
            f.write_str(" in ")?;
            write_interval(f, *iv)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{cst, dim, sym};
    use crate::map::{Variable, seed_gelu};

    fn names(prefix: &str, n: usize) -> Vec<String> {
        (0..n).map(|i| format!("{prefix}{i}")).collect()
    }

    fn show(e: &AffineExpr) -> String {
        expr_to_string(e, &names("d", 3), &names("s", 2))
    }

    #[test]
    fn seed_gelu_map() {
        let map = seed_gelu::map_with(vec![
            dim(1).floor_div(4096),
            dim(1).floor_div(8).modulo(512),
            dim(1).modulo(8) * 512 + dim(0) * 4 + sym(0),
        ]);
        assert_eq!(map.to_string(), seed_gelu::PRINTED);
    }

    #[test]
    fn parenthesizes_like_mlir() {
        assert_eq!(show(&((dim(0) + dim(1)) * 3)), "(d0 + d1) * 3");
        assert_eq!(show(&(dim(0) * 3).floor_div(2)), "(d0 * 3) floordiv 2");
        assert_eq!(
            show(&dim(0).floor_div(2).modulo(3)),
            "(d0 floordiv 2) mod 3"
        );
        assert_eq!(
            show(&(dim(0).modulo(2) * 3 + dim(1))),
            "(d0 mod 2) * 3 + d1"
        );
        assert_eq!(show(&(dim(0) + dim(1) + dim(2))), "d0 + d1 + d2");
        assert_eq!(show(&(dim(0) + (dim(1) + dim(2)))), "d0 + (d1 + d2)");
        assert_eq!(show(&(dim(0) + 1).ceil_div(4)), "(d0 + 1) ceildiv 4");
        assert_eq!(
            show(&(dim(0) * 4 + sym(1).floor_div(2))),
            "d0 * 4 + s1 floordiv 2"
        );
    }

    #[test]
    fn subtraction_and_negation_like_mlir() {
        assert_eq!(show(&(dim(0) - dim(1))), "d0 - d1");
        assert_eq!(show(&(dim(0) + dim(1) * -3)), "d0 - d1 * 3");
        assert_eq!(show(&(dim(0) + cst(-3))), "d0 - 3");
        assert_eq!(show(&(dim(0) - (dim(1) + 2))), "d0 - (d1 + 2)");
        assert_eq!(show(&(dim(0) + (dim(1) + 2) * -2)), "d0 - (d1 + 2) * 2");
        assert_eq!(show(&-dim(0)), "-d0");
        assert_eq!(show(&(-(dim(0) + 1))), "-(d0 + 1)");
        assert_eq!(show(&(dim(0) * -2)), "d0 * -2");
        assert_eq!(show(&((-dim(0)) * 2)), "(-d0) * 2");
        assert_eq!(show(&(-dim(0) + dim(1))), "-d0 + d1");
        assert_eq!(show(&cst(-5)), "-5");
        assert_eq!(show(&(cst(5) * -1)), "5 * -1");
        assert_eq!(show(&(cst(5) * -1 * 2)), "(5 * -1) * 2");
        assert_eq!(show(&(dim(0) + cst(i64::MIN))), "d0 + -9223372036854775808");
        assert_eq!(
            show(&(dim(0) + dim(1) * i64::MIN)),
            "d0 + d1 * -9223372036854775808"
        );
    }

    #[test]
    fn runtime_variables_constraints_and_empty_parts() {
        let mut map = IndexingMap::new(
            vec![Variable::new("d0", Interval::new(0, 9))],
            vec![Variable::new("s0", Interval::new(0, 3))],
            vec![Variable::new("rt0", Interval::new(-2, 5))],
            vec![dim(0) + sym(0) + sym(1)],
        );
        map.add_constraint(dim(0) + sym(0), Interval::new(0, 10));
        assert_eq!(
            map.to_string(),
            "(d0)[s0]{rt0} -> (d0 + s0 + rt0), domain: d0 in [0, 9], s0 in [0, 3], \
             rt0 in [-2, 5], d0 + s0 in [0, 10]"
        );
        let empty = IndexingMap::new(Vec::new(), Vec::new(), Vec::new(), Vec::new());
        assert_eq!(empty.to_string(), "() -> ()");
        let rt_only = IndexingMap::new(
            Vec::new(),
            Vec::new(),
            vec![Variable::new("rt0", Interval::new(0, 1))],
            vec![sym(0)],
        );
        assert_eq!(
            rt_only.to_string(),
            "(){rt0} -> (rt0), domain: rt0 in [0, 1]"
        );
    }

    #[test]
    fn unusable_names_fall_back_to_defaults() {
        let map = IndexingMap::new(
            vec![
                Variable::new("x", Interval::new(0, 1)),
                Variable::new("x", Interval::new(0, 1)),
                Variable::new("mod", Interval::new(0, 1)),
                Variable::new("", Interval::new(0, 1)),
            ],
            vec![Variable::new("d1", Interval::new(0, 1))],
            Vec::new(),
            vec![dim(0) + dim(1) + dim(2) + dim(3) + sym(0)],
        );
        let (dims, symbols) = map.printed_names();
        assert_eq!(dims, ["x", "d1", "d2", "d3"]);
        assert_eq!(symbols, ["s0"]);
    }
}
