//! Constant literals: the values of `constant(...)` instructions.

use std::fmt;

/// One element value. Which variant a literal holds follows its element type: `Pred` for
/// pred, `Int` for every integer type (wide enough for u64 and s64), `Float` for every
/// floating type (the value as written; rounding to the type is the evaluator's job),
/// `Complex` for c64/c128.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Pred(bool),
    Int(i128),
    Float(f64),
    Complex(f64, f64),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Array(ArrayLiteral),
    Tuple(Vec<Literal>),
}

/// An array literal: its bounds and its values in row-major logical order.
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayLiteral {
    pub dims: Vec<i64>,
    pub values: Vec<Value>,
}

/// Prints a float so that parsing the text gives the same `f64` back: integral values
/// without a fraction (`1`, `-3`), others in Rust's shortest round-trip form.
pub fn format_float(v: f64) -> String {
    if v.is_nan() {
        if v.is_sign_negative() { "-nan" } else { "nan" }.to_string()
    } else if v.is_infinite() {
        if v < 0.0 { "-inf" } else { "inf" }.to_string()
    } else if v.fract() == 0.0 && v.abs() < 1e16 {
        format!("{v}")
    } else {
        format!("{v:?}")
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Value::Pred(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => f.write_str(&format_float(x)),
            Value::Complex(re, im) => write!(f, "({}, {})", format_float(re), format_float(im)),
        }
    }
}

impl ArrayLiteral {
    /// Writes `{...}` nesting for dimensions `dim..`, starting at element `offset`.
    fn write_nested(&self, f: &mut fmt::Formatter<'_>, dim: usize, offset: usize) -> fmt::Result {
        if dim == self.dims.len() {
            return write!(f, "{}", self.values[offset]);
        }
        let stride: i64 = self.dims[dim + 1..].iter().product();
        let inner_is_array = dim + 1 < self.dims.len();
        f.write_str(if inner_is_array { "{ " } else { "{" })?;
        for i in 0..self.dims[dim] {
            if i > 0 {
                f.write_str(", ")?;
            }
            self.write_nested(f, dim + 1, offset + (i * stride) as usize)?;
        }
        f.write_str(if inner_is_array { " }" } else { "}" })
    }
}

/// XLA's literal syntax: `1.5`, `{1, 2}`, `{ {1, 2}, {3, 4} }`, `(1, {2, 3})`.
impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Array(a) => a.write_nested(f, 0, 0),
            Literal::Tuple(elems) => crate::shape::write_tuple(f, elems),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_to_round_trip() {
        for v in [
            0.5,
            1.0,
            -3.0,
            0.79785,
            -3.5233877e-06,
            1e300,
            1e-300,
            123456.789,
        ] {
            assert_eq!(format_float(v).parse::<f64>().unwrap(), v, "{v}");
        }
        assert_eq!(format_float(1.0), "1");
        assert_eq!(format_float(f64::NEG_INFINITY), "-inf");
        assert_eq!(format_float(f64::NAN), "nan");
    }

    #[test]
    fn nested_arrays() {
        let lit = Literal::Array(ArrayLiteral {
            dims: vec![2, 2],
            values: (1..=4).map(Value::Int).collect(),
        });
        assert_eq!(lit.to_string(), "{ {1, 2}, {3, 4} }");
        let scalar = Literal::Array(ArrayLiteral {
            dims: vec![],
            values: vec![Value::Complex(2.0, 0.5)],
        });
        assert_eq!(scalar.to_string(), "(2, 0.5)");
        let empty = Literal::Array(ArrayLiteral {
            dims: vec![0],
            values: vec![],
        });
        assert_eq!(
            Literal::Tuple(vec![empty, scalar]).to_string(),
            "({}, (2, 0.5))"
        );
    }
}
