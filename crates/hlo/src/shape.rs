//! Shapes: arrays (element type, bounds, optional layout) and tuples.

use std::fmt;

use crate::layout::Layout;
use crate::primitive::PrimitiveType;

/// The size XLA stores for an unbounded dynamic dimension, printed `?`.
pub const UNBOUNDED_SIZE: i64 = i64::MIN;

/// The largest array this compiler takes on, padding of tiled layouts included: fewer than
/// `ARRAY_SIZE_LIMIT` elements and fewer than `ARRAY_SIZE_LIMIT` bytes. The HLO verifier
/// enforces it on every shape, so every element count, byte size and linear index of one
/// array in a verified module fits in an `i64` with room to spare (a sum of two, an index
/// plus one). 2^62 bytes is far beyond any GPU's memory; the limit exists so that no size
/// computed from the input can wrap around.
pub const ARRAY_SIZE_LIMIT: i64 = 1 << 62;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    Array(ArrayShape),
    Tuple(Vec<Shape>),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ArrayShape {
    pub element_type: PrimitiveType,
    /// Logical bounds, major to minor as written. For a dynamic dimension, its bound
    /// (`<=N`) or [`UNBOUNDED_SIZE`] (`?`).
    pub dims: Vec<i64>,
    /// Which dimensions are dynamic; empty when none is.
    pub dynamic_dims: Vec<bool>,
    /// The layout as written; `None` when the text gave none (XLA's default then is
    /// row-major, see [`ArrayShape::layout_or_default`]).
    pub layout: Option<Layout>,
}

impl ArrayShape {
    pub fn new(element_type: PrimitiveType, dims: Vec<i64>) -> ArrayShape {
        ArrayShape {
            element_type,
            dims,
            dynamic_dims: Vec::new(),
            layout: None,
        }
    }

    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// The number of elements (padding not included). Exact for a verified shape
    /// ([`ARRAY_SIZE_LIMIT`]); saturates at `i64::MAX` rather than wrapping for one that
    /// is not.
    pub fn element_count(&self) -> i64 {
        self.dims
            .iter()
            .try_fold(1i64, |n, &d| n.checked_mul(d))
            .unwrap_or(i64::MAX)
    }

    /// Checks [`ARRAY_SIZE_LIMIT`]: the buffer's elements and bytes, padding included
    /// (dynamic dimensions at their bounds), or what is too large. A dimension of unbounded
    /// size has no buffer size and passes.
    pub fn check_size(&self) -> Result<(), String> {
        if self.dims.contains(&UNBOUNDED_SIZE) {
            return Ok(());
        }
        let layout = self.layout_or_default();
        let elements = layout
            .checked_padded_element_count(&self.dims)
            .filter(|&n| n < ARRAY_SIZE_LIMIT);
        let bits = match layout.element_size_in_bits {
            0 => i64::from(self.element_type.bit_width()),
            n => n,
        };
        let bytes = elements
            .and_then(|n| n.checked_mul(bits))
            .map(|b| b / 8 + i64::from(b % 8 != 0));
        match (elements, bytes) {
            (Some(_), Some(b)) if b < ARRAY_SIZE_LIMIT => Ok(()),
            (Some(_), _) => Err(format!(
                "{self} is too large: an array must take fewer than 2^62 bytes"
            )),
            (None, _) => Err(format!(
                "{self} is too large: an array must have fewer than 2^62 elements, padding included"
            )),
        }
    }

    pub fn is_dynamic(&self) -> bool {
        self.dynamic_dims.iter().any(|&d| d)
    }

    pub fn is_dynamic_dim(&self, dim: usize) -> bool {
        self.dynamic_dims.get(dim).copied().unwrap_or(false)
    }

    pub fn layout_or_default(&self) -> Layout {
        self.layout
            .clone()
            .unwrap_or_else(|| Layout::row_major(self.rank()))
    }

    /// Same element type and bounds; layouts are not compared.
    pub fn compatible(&self, other: &ArrayShape) -> bool {
        self.element_type == other.element_type
            && self.dims == other.dims
            && self.dynamic_dims_normalized() == other.dynamic_dims_normalized()
    }

    fn dynamic_dims_normalized(&self) -> Vec<bool> {
        (0..self.rank()).map(|d| self.is_dynamic_dim(d)).collect()
    }
}

impl Shape {
    pub fn array(element_type: PrimitiveType, dims: Vec<i64>) -> Shape {
        Shape::Array(ArrayShape::new(element_type, dims))
    }

    pub fn scalar(element_type: PrimitiveType) -> Shape {
        Shape::array(element_type, Vec::new())
    }

    pub fn as_array(&self) -> Option<&ArrayShape> {
        match self {
            Shape::Array(a) => Some(a),
            Shape::Tuple(_) => None,
        }
    }

    pub fn is_tuple(&self) -> bool {
        matches!(self, Shape::Tuple(_))
    }

    /// Same structure, element types and bounds; layouts are not compared.
    pub fn compatible(&self, other: &Shape) -> bool {
        match (self, other) {
            (Shape::Array(a), Shape::Array(b)) => a.compatible(b),
            (Shape::Tuple(a), Shape::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.compatible(y))
            }
            _ => false,
        }
    }

    /// Compatible, and where both give a layout, the layouts are equal.
    pub fn compatible_with_layouts(&self, other: &Shape) -> bool {
        match (self, other) {
            (Shape::Array(a), Shape::Array(b)) => {
                a.compatible(b)
                    && match (&a.layout, &b.layout) {
                        (Some(x), Some(y)) => x == y,
                        _ => true,
                    }
            }
            (Shape::Tuple(a), Shape::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.compatible_with_layouts(y))
            }
            _ => false,
        }
    }

    /// The shape without any layout, for messages and comparisons.
    pub fn without_layout(&self) -> Shape {
        match self {
            Shape::Array(a) => Shape::Array(ArrayShape {
                layout: None,
                ..a.clone()
            }),
            Shape::Tuple(elems) => Shape::Tuple(elems.iter().map(Shape::without_layout).collect()),
        }
    }
}

impl fmt::Display for ArrayShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[", self.element_type)?;
        for (i, &d) in self.dims.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            if !self.is_dynamic_dim(i) {
                write!(f, "{d}")?;
            } else if d == UNBOUNDED_SIZE {
                f.write_str("?")?;
            } else {
                write!(f, "<={d}")?;
            }
        }
        f.write_str("]")?;
        if let Some(layout) = &self.layout {
            write!(f, "{layout}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shape::Array(a) => a.fmt(f),
            Shape::Tuple(elems) => write_tuple(f, elems),
        }
    }
}

/// `(a, b, c)`: how HLO text writes a tuple of shapes or of literals.
pub(crate) fn write_tuple<T: fmt::Display>(f: &mut fmt::Formatter<'_>, elems: &[T]) -> fmt::Result {
    f.write_str("(")?;
    for (i, e) in elems.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        e.fmt(f)?;
    }
    f.write_str(")")
}

/// Steps `index` to the next position of `dims` in row-major order (the last dimension
/// fastest), wrapping to all zeros after the last position: the walk of every
/// element-by-element loop of the evaluator and of the IR interpreter.
pub fn next_row_major(index: &mut [i64], dims: &[i64]) {
    for d in (0..index.len()).rev() {
        index[d] += 1;
        if index[d] < dims[d] {
            return;
        }
        index[d] = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display() {
        let mut a = ArrayShape::new(PrimitiveType::F32, vec![3, 5]);
        a.layout = Some(Layout::row_major(2));
        assert_eq!(a.to_string(), "f32[3,5]{1,0}");
        let t = Shape::Tuple(vec![Shape::Array(a), Shape::scalar(PrimitiveType::Pred)]);
        assert_eq!(t.to_string(), "(f32[3,5]{1,0}, pred[])");
        let mut d = ArrayShape::new(PrimitiveType::S32, vec![UNBOUNDED_SIZE, 4]);
        d.dynamic_dims = vec![true, true];
        assert_eq!(d.to_string(), "s32[?,<=4]");
    }

    #[test]
    fn compatibility_ignores_missing_layouts() {
        let plain = Shape::array(PrimitiveType::F32, vec![2]);
        let mut with = ArrayShape::new(PrimitiveType::F32, vec![2]);
        with.layout = Some(Layout::row_major(1));
        assert!(plain.compatible_with_layouts(&Shape::Array(with)));
        assert!(!plain.compatible(&Shape::array(PrimitiveType::F16, vec![2])));
    }
}
