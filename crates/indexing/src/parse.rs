//! Parsing maps (and expressions) in the syntax [`crate::print`] writes.
//!
//! ```text
//! map     := '(' names? ')' ('[' names? ']')? ('{' names? '}')? '->' '(' exprs? ')'
//!            (',' 'domain' ':' item (',' item)*)? (',' 'is_simplified' ':' bool)?
//! item    := expr 'in' '[' int ',' int ']'
//! expr    := term (('+' | '-') term)*
//! term    := unary (('*' | 'floordiv' | '/' | 'ceildiv' | 'mod') unary)*
//! unary   := '-' unary | int | name | ('max' | 'min') '(' expr ',' expr ')' | '(' expr ')'
//! ```
//!
//! Decisions (MLIR's affine parser is the reference):
//! * The first item whose expression is a bare variable gives that variable's range;
//!   every variable needs one. Other items are constraints, kept in order (so a later
//!   `d0 in [..]`, which an unsimplified map can print, stays a constraint). `domain:` may
//!   be left out only when there are no variables. XLA's trailing `is_simplified: ...` is
//!   accepted and ignored, and so are XLA's other spellings: `/` and `floorDiv` for
//!   `floordiv`, `ceilDiv` for `ceildiv`, a comma after the last domain item.
//! * A product with a constant on one side is a scaling (`2 * d0` is `d0 * 2`); one of
//!   two variable expressions is XLA's semi-affine [`AffineExpr::Product`]. Divisors must
//!   be non-zero constants (`x floordiv -c` is `(x * -1) floordiv c`, likewise `ceildiv`),
//!   moduli positive ones. A constant side may be any variable-free expression, which is
//!   folded. Everything else is rejected, with the offset of the culprit.
//! * `max(a, b)` and `min(a, b)` are XLA's; a variable may still be called `max`.
//! * `-` before an integer literal is a negative literal; before anything else it is
//!   `x * -1`. `a - b` is `a + b * -1`, except that `a - c` (a positive literal) is
//!   `a + -c` and `a - x * c` (`c > 1`) is `a + x * -c`: the shapes the printer writes
//!   as subtraction, so that parse and print are inverse on printed text.
//! * Nesting deeper than [`MAX_DEPTH`] is an error rather than a stack overflow; so is an
//!   integer outside `i64`. The parser never panics.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use crate::expr::AffineExpr;
use crate::map::{IndexingMap, Interval, Variable};
use crate::print::KEYWORDS;

/// Expression trees deeper than this are rejected (recursion elsewhere stays bounded).
pub const MAX_DEPTH: usize = 256;

/// Why and where (byte offset into the input, and 1-based column in characters) parsing
/// failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub offset: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.column, self.message)
    }
}

impl std::error::Error for ParseError {}

impl IndexingMap {
    /// Parses a map in the printed syntax (see the module documentation).
    pub fn parse(text: &str) -> Result<IndexingMap, ParseError> {
        let mut p = Parser::new(text)?;
        let map = p.map()?;
        Ok(map)
    }
}

impl FromStr for IndexingMap {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<IndexingMap, ParseError> {
        IndexingMap::parse(s)
    }
}

/// Parses a lone expression over the given dimension and symbol names.
pub fn parse_expr(text: &str, dims: &[&str], symbols: &[&str]) -> Result<AffineExpr, ParseError> {
    let mut p = Parser::new(text)?;
    for (i, name) in dims.iter().enumerate() {
        p.names.insert(name.to_string(), AffineExpr::Dim(i));
    }
    for (i, name) in symbols.iter().enumerate() {
        p.names.insert(name.to_string(), AffineExpr::Symbol(i));
    }
    let e = p.expr(0)?;
    p.expect(&Tok::Eof, "end of input")?;
    Ok(e.expr)
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Ident(String),
    /// A non-negative literal; `i128` so that `-9223372036854775808` can be negated.
    Int(i128),
    Punct(&'static str),
    Eof,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Ident(s) => write!(f, "'{s}'"),
            Tok::Int(v) => write!(f, "'{v}'"),
            Tok::Punct(p) => write!(f, "'{p}'"),
            Tok::Eof => f.write_str("end of input"),
        }
    }
}

const PUNCTS: [&str; 14] = [
    "->", "(", ")", "[", "]", "{", "}", ",", ":", "+", "-", "*", "/", "=",
];

fn error_at(text: &str, offset: usize, message: String) -> ParseError {
    let offset = offset.min(text.len());
    // Offsets always fall on char boundaries (tokens start at one), but be safe.
    let column = text
        .get(..offset)
        .map_or(offset, |prefix| prefix.chars().count())
        + 1;
    ParseError {
        offset,
        column,
        message,
    }
}

fn lex(text: &str) -> Result<Vec<(Tok, usize)>, ParseError> {
    let bytes = text.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            toks.push((Tok::Ident(text[start..i].to_string()), start));
        } else if c.is_ascii_digit() {
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            let digits = &text[start..i];
            match digits.parse::<i128>() {
                Ok(v) if v <= i64::MAX as i128 + 1 => toks.push((Tok::Int(v), start)),
                _ => {
                    return Err(error_at(
                        text,
                        start,
                        format!("integer {digits} does not fit in 64 bits"),
                    ));
                }
            }
        } else if let Some(p) = PUNCTS.iter().find(|p| text[i..].starts_with(**p)) {
            i += p.len();
            toks.push((Tok::Punct(p), start));
        } else {
            let ch = text[i..].chars().next().unwrap_or('?');
            return Err(error_at(
                text,
                start,
                format!("unexpected character '{ch}'"),
            ));
        }
    }
    toks.push((Tok::Eof, text.len()));
    Ok(toks)
}

/// An expression with the depth of its tree (bounded by [`MAX_DEPTH`]).
struct Parsed {
    expr: AffineExpr,
    depth: usize,
}

struct Parser<'a> {
    text: &'a str,
    toks: Vec<(Tok, usize)>,
    pos: usize,
    names: HashMap<String, AffineExpr>,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Result<Parser<'a>, ParseError> {
        Ok(Parser {
            text,
            toks: lex(text)?,
            pos: 0,
            names: HashMap::new(),
        })
    }

    fn peek(&self) -> &Tok {
        &self.toks[self.pos.min(self.toks.len() - 1)].0
    }

    fn peek_at(&self, ahead: usize) -> &Tok {
        &self.toks[(self.pos + ahead).min(self.toks.len() - 1)].0
    }

    fn offset(&self) -> usize {
        self.toks[self.pos.min(self.toks.len() - 1)].1
    }

    fn bump(&mut self) -> Tok {
        let t = self.peek().clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn err<T>(&self, offset: usize, message: impl Into<String>) -> Result<T, ParseError> {
        Err(error_at(self.text, offset, message.into()))
    }

    fn unexpected<T>(&self, what: &str) -> Result<T, ParseError> {
        self.err(
            self.offset(),
            format!("expected {what}, found {}", self.peek()),
        )
    }

    fn eat(&mut self, t: &Tok) -> bool {
        if self.peek() == t {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, t: &Tok, what: &str) -> Result<(), ParseError> {
        if self.eat(t) {
            Ok(())
        } else {
            self.unexpected(what)
        }
    }

    fn is_ident(&self, word: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s == word)
    }

    /// Consumes XLA's trailing `is_simplified: true|false` if it comes next.
    fn is_simplified_suffix(&mut self) -> Result<bool, ParseError> {
        if !(self.is_ident("is_simplified") && self.peek_at(1) == &Tok::Punct(":")) {
            return Ok(false);
        }
        self.bump();
        self.bump();
        if self.is_ident("true") || self.is_ident("false") {
            self.bump();
            Ok(true)
        } else {
            self.unexpected("'true' or 'false'")
        }
    }

    fn map(&mut self) -> Result<IndexingMap, ParseError> {
        let dims = self.name_list("(", ")", AffineExpr::Dim)?;
        let range_vars = if self.peek() == &Tok::Punct("[") {
            self.name_list("[", "]", AffineExpr::Symbol)?
        } else {
            Vec::new()
        };
        let num_range = range_vars.len();
        let rt_vars = if self.peek() == &Tok::Punct("{") {
            self.name_list("{", "}", |i| AffineExpr::Symbol(num_range + i))?
        } else {
            Vec::new()
        };
        self.expect(&Tok::Punct("->"), "'->'")?;
        self.expect(&Tok::Punct("("), "'('")?;
        let mut results = Vec::new();
        if !self.eat(&Tok::Punct(")")) {
            loop {
                results.push(self.expr(0)?.expr);
                if self.eat(&Tok::Punct(")")) {
                    break;
                }
                self.expect(&Tok::Punct(","), "',' or ')'")?;
            }
        }

        // Variables in declaration order: dims, range vars, rt vars.
        let variables: Vec<(String, usize)> = dims
            .iter()
            .chain(&range_vars)
            .chain(&rt_vars)
            .map(|(name, offset)| (name.clone(), *offset))
            .collect();
        let mut bounds: Vec<Option<Interval>> = vec![None; variables.len()];
        let index_of = |e: &AffineExpr| match e {
            AffineExpr::Dim(i) => Some(*i),
            AffineExpr::Symbol(i) => Some(dims.len() + i),
            _ => None,
        };
        let mut constraints = Vec::new();
        if self.eat(&Tok::Punct(",")) && !self.is_simplified_suffix()? {
            if !self.is_ident("domain") {
                return self.unexpected("'domain'");
            }
            self.bump();
            self.expect(&Tok::Punct(":"), "':'")?;
            loop {
                let item = self.expr(0)?.expr;
                if !self.is_ident("in") {
                    return self.unexpected("'in'");
                }
                self.bump();
                let iv = self.interval()?;
                match index_of(&item) {
                    Some(v) if bounds[v].is_none() => bounds[v] = Some(iv),
                    _ => constraints.push((item, iv)),
                }
                // XLA writes a domain across adjacent strings, each item with its comma,
                // so that the last may end in one.
                if !self.eat(&Tok::Punct(","))
                    || self.is_simplified_suffix()?
                    || self.peek() == &Tok::Eof
                {
                    break;
                }
            }
        }
        if !matches!(self.peek(), Tok::Eof) {
            return self.unexpected("',' or end of input");
        }
        let mut vars = Vec::with_capacity(variables.len());
        for ((name, offset), b) in variables.into_iter().zip(bounds) {
            match b {
                Some(b) => vars.push(Variable::new(name, b)),
                None => {
                    return self.err(
                        offset,
                        format!("variable '{name}' has no range in the domain"),
                    );
                }
            }
        }
        let rt = vars.split_off(dims.len() + range_vars.len());
        let syms = vars.split_off(dims.len());
        let mut map = IndexingMap::new(vars, syms, rt, results);
        map.constraints = constraints;
        Ok(map)
    }

    /// `open name, name, ... close`, declaring each name; returns names and offsets.
    fn name_list(
        &mut self,
        open: &'static str,
        close: &'static str,
        make: impl Fn(usize) -> AffineExpr,
    ) -> Result<Vec<(String, usize)>, ParseError> {
        self.expect(&Tok::Punct(open), &format!("'{open}'"))?;
        let mut out: Vec<(String, usize)> = Vec::new();
        if self.eat(&Tok::Punct(close)) {
            return Ok(out);
        }
        loop {
            let offset = self.offset();
            let Tok::Ident(name) = self.peek().clone() else {
                return self.unexpected("a variable name");
            };
            if KEYWORDS.contains(&name.as_str()) {
                return self.err(
                    offset,
                    format!("'{name}' is a keyword, not a variable name"),
                );
            }
            if self.names.contains_key(&name) {
                return self.err(offset, format!("variable '{name}' is declared twice"));
            }
            self.bump();
            self.names.insert(name.clone(), make(out.len()));
            out.push((name, offset));
            if self.eat(&Tok::Punct(close)) {
                return Ok(out);
            }
            self.expect(&Tok::Punct(","), &format!("',' or '{close}'"))?;
        }
    }

    fn integer(&mut self) -> Result<i64, ParseError> {
        let offset = self.offset();
        let negative = self.eat(&Tok::Punct("-"));
        let Tok::Int(v) = self.peek().clone() else {
            return self.unexpected("an integer");
        };
        self.bump();
        let v = if negative { -v } else { v };
        i64::try_from(v)
            .or_else(|_| self.err(offset, format!("integer {v} does not fit in 64 bits")))
    }

    fn interval(&mut self) -> Result<Interval, ParseError> {
        self.expect(&Tok::Punct("["), "'['")?;
        let lo = self.integer()?;
        self.expect(&Tok::Punct(","), "','")?;
        let hi = self.integer()?;
        self.expect(&Tok::Punct("]"), "']'")?;
        Ok(Interval::new(lo, hi))
    }

    fn check_depth(&self, depth: usize, offset: usize) -> Result<(), ParseError> {
        if depth > MAX_DEPTH {
            return self.err(
                offset,
                format!("expression nested deeper than {MAX_DEPTH} levels"),
            );
        }
        Ok(())
    }

    /// `recursion`: how many nested `(`/unary minus we are inside (bounds the stack).
    fn expr(&mut self, recursion: usize) -> Result<Parsed, ParseError> {
        let mut lhs = self.term(recursion)?;
        loop {
            let op_offset = self.offset();
            let negate = if self.eat(&Tok::Punct("+")) {
                false
            } else if self.eat(&Tok::Punct("-")) {
                true
            } else {
                return Ok(lhs);
            };
            let rhs = self.term(recursion)?;
            let (rhs_expr, rhs_depth) = if negate {
                match rhs.expr {
                    AffineExpr::Constant(c) if c > 0 => (AffineExpr::Constant(-c), rhs.depth),
                    AffineExpr::Mul(x, c) if c > 1 => (AffineExpr::Mul(x, -c), rhs.depth),
                    e => (AffineExpr::Mul(Box::new(e), -1), rhs.depth + 1),
                }
            } else {
                (rhs.expr, rhs.depth)
            };
            let depth = lhs.depth.max(rhs_depth) + 1;
            self.check_depth(depth, op_offset)?;
            lhs = Parsed {
                expr: AffineExpr::Add(Box::new(lhs.expr), Box::new(rhs_expr)),
                depth,
            };
        }
    }

    fn term(&mut self, recursion: usize) -> Result<Parsed, ParseError> {
        let mut lhs = self.unary(recursion)?;
        loop {
            let op_offset = self.offset();
            let op: &'static str = match self.peek() {
                Tok::Punct("*") => "*",
                // XLA prints `floordiv` as `/` now, and has written `floorDiv`, `ceilDiv`.
                Tok::Punct("/") => "floordiv",
                Tok::Ident(s) if s == "floorDiv" => "floordiv",
                Tok::Ident(s) if s == "ceilDiv" => "ceildiv",
                Tok::Ident(s) => match KEYWORDS.iter().find(|k| *k == s && **k != "in") {
                    Some(k) => k,
                    None => return Ok(lhs),
                },
                _ => return Ok(lhs),
            };
            self.bump();
            let rhs_offset = self.offset();
            let rhs = self.unary(recursion)?;
            let depth = lhs.depth.max(rhs.depth) + 1;
            self.check_depth(depth, op_offset)?;
            let expr = if op == "*" {
                if let Some(c) = constant_value(&rhs.expr) {
                    AffineExpr::Mul(Box::new(lhs.expr), c)
                } else if let Some(c) = constant_value(&lhs.expr) {
                    AffineExpr::Mul(Box::new(rhs.expr), c)
                } else {
                    AffineExpr::Product(Box::new(lhs.expr), Box::new(rhs.expr))
                }
            } else {
                let Some(c) = constant_value(&rhs.expr) else {
                    return self.err(
                        rhs_offset,
                        format!(
                            "non-affine expression: the right operand of {op} must be a constant"
                        ),
                    );
                };
                // Dividing by `-c` is dividing the negated dividend by `c`.
                let (lhs, c) = match (op, c.checked_neg()) {
                    (_, _) if c > 0 => (lhs.expr, c),
                    ("floordiv" | "ceildiv", Some(positive)) if c < 0 => {
                        (AffineExpr::Mul(Box::new(lhs.expr), -1), positive)
                    }
                    _ => {
                        return self.err(
                            rhs_offset,
                            format!("the right operand of {op} must be positive, not {c}"),
                        );
                    }
                };
                let lhs = Box::new(lhs);
                match op {
                    "floordiv" => AffineExpr::FloorDiv(lhs, c),
                    "ceildiv" => AffineExpr::CeilDiv(lhs, c),
                    _ => AffineExpr::Mod(lhs, c),
                }
            };
            lhs = Parsed { expr, depth };
        }
    }

    fn unary(&mut self, recursion: usize) -> Result<Parsed, ParseError> {
        let offset = self.offset();
        if recursion > MAX_DEPTH {
            return self.err(
                offset,
                format!("expression nested deeper than {MAX_DEPTH} levels"),
            );
        }
        match self.peek().clone() {
            Tok::Punct("-") => {
                self.bump();
                if let Tok::Int(v) = *self.peek() {
                    self.bump();
                    return Ok(Parsed {
                        expr: AffineExpr::Constant(self.to_i64(-v, offset)?),
                        depth: 1,
                    });
                }
                let inner = self.unary(recursion + 1)?;
                let depth = inner.depth + 1;
                self.check_depth(depth, offset)?;
                Ok(Parsed {
                    expr: AffineExpr::Mul(Box::new(inner.expr), -1),
                    depth,
                })
            }
            Tok::Int(v) => {
                self.bump();
                Ok(Parsed {
                    expr: AffineExpr::Constant(self.to_i64(v, offset)?),
                    depth: 1,
                })
            }
            Tok::Ident(name)
                if (name == "max" || name == "min") && *self.peek_at(1) == Tok::Punct("(") =>
            {
                self.bump();
                self.bump();
                let a = self.expr(recursion + 1)?;
                self.expect(&Tok::Punct(","), "','")?;
                let b = self.expr(recursion + 1)?;
                self.expect(&Tok::Punct(")"), "')'")?;
                let depth = a.depth.max(b.depth) + 1;
                self.check_depth(depth, offset)?;
                let (a, b) = (Box::new(a.expr), Box::new(b.expr));
                let expr = if name == "max" {
                    AffineExpr::Max(a, b)
                } else {
                    AffineExpr::Min(a, b)
                };
                Ok(Parsed { expr, depth })
            }
            Tok::Ident(name) => match self.names.get(&name) {
                Some(e) => {
                    let expr = e.clone();
                    self.bump();
                    Ok(Parsed { expr, depth: 1 })
                }
                None if KEYWORDS.contains(&name.as_str()) => {
                    self.err(offset, format!("expected an operand, found '{name}'"))
                }
                None => self.err(offset, format!("unknown variable '{name}'")),
            },
            Tok::Punct("(") => {
                self.bump();
                let inner = self.expr(recursion + 1)?;
                self.expect(&Tok::Punct(")"), "')'")?;
                Ok(inner)
            }
            _ => self.unexpected("an expression"),
        }
    }

    fn to_i64(&self, v: i128, offset: usize) -> Result<i64, ParseError> {
        i64::try_from(v)
            .or_else(|_| self.err(offset, format!("integer {v} does not fit in 64 bits")))
    }
}

/// The value of a variable-free expression (wrapping like evaluation does).
fn constant_value(e: &AffineExpr) -> Option<i64> {
    let mut has_vars = false;
    e.walk(&mut |x| {
        if matches!(x, AffineExpr::Dim(_) | AffineExpr::Symbol(_)) {
            has_vars = true;
        }
    });
    (!has_vars).then(|| e.eval(&[], &[]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{dim, sym};

    fn err(text: &str) -> ParseError {
        match IndexingMap::parse(text) {
            Ok(m) => panic!("{text} parsed as {m}"),
            Err(e) => e,
        }
    }

    #[test]
    fn parses_the_seed_map() {
        let text = "(th_x, bl_x)[vector_index] -> (bl_x floordiv 4096, (bl_x floordiv 8) mod 512, \
                    (bl_x mod 8) * 512 + th_x * 4 + vector_index), domain: th_x in [0, 127], \
                    bl_x in [0, 24575], vector_index in [0, 3]";
        let map = IndexingMap::parse(text).unwrap();
        assert_eq!(map.dims[1].name, "bl_x");
        assert_eq!(map.range_vars[0].bounds, Interval::new(0, 3));
        assert_eq!(map.results[2], dim(1).modulo(8) * 512 + dim(0) * 4 + sym(0));
        assert_eq!(map.to_string(), text);
    }

    #[test]
    fn accepts_mlir_spellings() {
        let map = IndexingMap::parse(
            "(d0, d1)[s0]{rt0} -> (2 * d0, d0 - d1 * 3, -d1, d0 - 5, -(d0 + d1), d0 * (2 + 1), \
             d0 * -2), domain: d0 in [0, 9], d1 in [-3, 3], s0 in [0, 1], rt0 in [0, 7], \
             d0 + rt0 in [0, 10], is_simplified: false",
        )
        .unwrap();
        assert_eq!(
            map.results,
            vec![
                dim(0) * 2,
                dim(0) + dim(1) * -3,
                dim(1) * -1,
                dim(0) + -5,
                (dim(0) + dim(1)) * -1,
                dim(0) * 3,
                dim(0) * -2,
            ]
        );
        assert_eq!(map.rt_vars[0].name, "rt0");
        assert_eq!(
            map.constraints,
            vec![(dim(0) + sym(1), Interval::new(0, 10))]
        );
        // No variables: no domain needed.
        let map = IndexingMap::parse("() -> ()").unwrap();
        assert!(map.results.is_empty() && map.dims.is_empty());
        let map = IndexingMap::parse("() -> (3, -4)").unwrap();
        assert_eq!(map.eval(&[], &[]), vec![3, -4]);
        // Variables may be named anything; bounds may come in any order.
        let map = IndexingMap::parse(
            "(x, _y2)[k] -> (x + _y2 + k), domain: k in [0, 1], _y2 in [1, 2], x in [2, 3]",
        )
        .unwrap();
        assert_eq!(map.eval(&[2, 1], &[1]), vec![4]);
        assert_eq!(
            map.to_string(),
            "(x, _y2)[k] -> (x + _y2 + k), domain: x in [2, 3], _y2 in [1, 2], k in [0, 1]"
        );
    }

    #[test]
    fn rejects_non_affine_text_with_positions() {
        let e = err("(d0, d1) -> (d0 floordiv d1), domain: d0 in [0, 1], d1 in [0, 1]");
        assert_eq!(e.column, 26);
        assert!(e.message.contains("non-affine"), "{e}");
        assert!(e.message.contains("must be a constant"), "{e}");
        let e = err("(d0) -> (d0 mod 0), domain: d0 in [0, 1]");
        assert!(e.message.contains("must be positive"), "{e}");
        assert_eq!(e.column, 17);
        let e = err("(d0) -> (d0 mod -2), domain: d0 in [0, 1]");
        assert_eq!(
            e.to_string(),
            "column 17: the right operand of mod must be positive, not -2"
        );
        let e = err("(d0) -> (d0 floordiv 0), domain: d0 in [0, 1]");
        assert!(e.message.contains("must be positive, not 0"), "{e}");
    }

    #[test]
    fn xla_s_products_max_min_and_signed_divisors_are_read() {
        let text = "(d0, d1) -> (2 * d0 * d1, max(d0, d1 + 2), min(d0, 3), d0 floorDiv -5, \
                    d0 ceilDiv -2, d0 ceilDiv 2), domain: d0 in [-7, 9], d1 in [0, 4]";
        let map = IndexingMap::parse(text).unwrap();
        for d0 in -7..=9 {
            for d1 in 0..=4 {
                let expected = vec![
                    2 * d0 * d1,
                    d0.max(d1 + 2),
                    d0.min(3),
                    (d0 as f64 / -5.0).floor() as i64,
                    (d0 as f64 / -2.0).ceil() as i64,
                    (d0 as f64 / 2.0).ceil() as i64,
                ];
                assert_eq!(map.eval(&[d0, d1], &[]), expected, "d0 = {d0}, d1 = {d1}");
            }
        }
        assert_eq!(
            map.to_string(),
            "(d0, d1) -> (d0 * 2 * d1, max(d0, d1 + 2), min(d0, 3), (-d0) floordiv 5, \
             (-d0) ceildiv 2, d0 ceildiv 2), domain: d0 in [-7, 9], d1 in [0, 4]"
        );
        assert_eq!(IndexingMap::parse(&map.to_string()).unwrap(), map);
        // `max` stays a name a variable may have.
        let map = IndexingMap::parse("(max) -> (max + 1), domain: max in [0, 3]").unwrap();
        assert_eq!(map.eval(&[2], &[]), vec![3]);
    }

    #[test]
    fn rejects_malformed_maps() {
        for (text, column, needle) in [
            ("(d0) -> (d0)", 2, "'d0' has no range"),
            (
                "(d0) -> (d1), domain: d0 in [0, 1]",
                10,
                "unknown variable 'd1'",
            ),
            (
                "(d0, d0) -> (d0), domain: d0 in [0, 1]",
                6,
                "declared twice",
            ),
            ("(mod) -> (0), domain: mod in [0, 1]", 2, "keyword"),
            (
                "(d0) -> (d0) domain: d0 in [0, 1]",
                14,
                "expected ',' or end of input",
            ),
            ("(d0) -> (d0), domain d0 in [0, 1]", 22, "expected ':'"),
            (
                "(d0) -> (d0), domain: d0 in [0, 99999999999999999999]",
                33,
                "does not fit",
            ),
            (
                "(d0) -> (d0 + 9223372036854775808), domain: d0 in [0, 1]",
                15,
                "does not fit",
            ),
            ("(d0) -> (d0), domain: d0 in [0 1]", 32, "expected ','"),
            (
                "(d0) -> (d0 +), domain: d0 in [0, 1]",
                14,
                "expected an expression",
            ),
            ("(d0) -> (d0 ^ 2)", 13, "unexpected character '^'"),
            ("(d0) -> (é)", 10, "unexpected character 'é'"),
            (
                "(d0) -> (d0), domain: d0 in [0, 1], is_simplified: maybe",
                52,
                "'true' or 'false'",
            ),
            ("", 1, "expected '('"),
        ] {
            let e = err(text);
            assert!(e.message.contains(needle), "{text}: {e}");
            assert_eq!(e.column, column, "{text}: {e}");
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = format!("() -> ({}1{})", "(".repeat(100_000), ")".repeat(100_000));
        assert!(err(&deep).message.contains("nested deeper"));
        let long = format!(
            "(d0) -> (d0{}), domain: d0 in [0, 1]",
            " + d0".repeat(100_000)
        );
        assert!(err(&long).message.contains("nested deeper"));
        let negations = format!("(d0) -> ({}d0), domain: d0 in [0, 1]", "-".repeat(100_000));
        assert!(err(&negations).message.contains("nested deeper"));
        // Within the limit is fine.
        let ok = format!("(d0) -> (d0{}), domain: d0 in [0, 1]", " + d0".repeat(200));
        assert_eq!(IndexingMap::parse(&ok).unwrap().eval(&[1], &[]), vec![201]);
    }

    #[test]
    fn never_panics_on_mutated_input() {
        let seeds = [
            "(th_x, bl_x)[vector_index] -> (bl_x floordiv 4096, (bl_x floordiv 8) mod 512, \
             (bl_x mod 8) * 512 + th_x * 4 + vector_index), domain: th_x in [0, 127], \
             bl_x in [0, 24575], vector_index in [0, 3]",
            "(d0)[s0]{rt0} -> (d0 - s0 * 3, -(d0 + rt0) ceildiv 2), domain: d0 in [0, 9], \
             s0 in [0, 3], rt0 in [-2, 5], d0 + s0 in [0, 10], is_simplified: true",
        ];
        let alphabet: Vec<char> = "()[]{},:+-*0123456789 ->d0s_x floordiv mod ceildiv in domain é"
            .chars()
            .collect();
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..20_000 {
            let seed = seeds[rng.usize(..seeds.len())];
            let mut chars: Vec<char> = seed.chars().collect();
            for _ in 0..rng.usize(1..6) {
                let at = rng.usize(..=chars.len());
                match rng.u8(..3) {
                    0 if at < chars.len() => {
                        chars.remove(at);
                    }
                    1 => chars.insert(at, alphabet[rng.usize(..alphabet.len())]),
                    _ => chars.truncate(at),
                }
            }
            let text: String = chars.into_iter().collect();
            if let Ok(map) = IndexingMap::parse(&text) {
                // Whatever parses prints and parses back to the same text.
                let printed = map.to_string();
                let reparsed =
                    IndexingMap::parse(&printed).unwrap_or_else(|e| panic!("{printed}: {e}"));
                assert_eq!(reparsed.to_string(), printed);
            }
        }
    }

    #[test]
    fn xla_s_slash_and_trailing_comma_are_read() {
        let xla = IndexingMap::from_str(
            "(d0)[s0] -> (d0 / 4 + s0), domain: d0 in [0, 63], s0 in [0, 3],",
        )
        .unwrap();
        let ours = IndexingMap::from_str(
            "(d0)[s0] -> (d0 floordiv 4 + s0), domain: d0 in [0, 63], s0 in [0, 3]",
        )
        .unwrap();
        assert_eq!(xla, ours);
        assert!(IndexingMap::from_str("(d0) -> (d0 / 0), domain: d0 in [0, 1]").is_err());
    }

    #[test]
    fn parse_expr_with_names() {
        let e = parse_expr("a * 4 + b floordiv 2", &["a"], &["b"]).unwrap();
        assert_eq!(e, dim(0) * 4 + sym(0).floor_div(2));
        assert!(parse_expr("a +", &["a"], &[]).is_err());
    }
}
