//! Host values: typed element vectors, arrays and tuples, and the per-type conversion rules
//! every op shares.
//!
//! Elements are stored in logical row-major order whatever the shape's layout says: only
//! `bitcast` looks at layouts. Each element type the emitters accept has its own vector, so
//! whole arrays are computed op by op in their own type without boxing.

use std::fmt;

use half::{bf16, f16};

use super::complex::{C64, C128};
use super::narrow_float::{
    F4E2M1FN, F8E3M4, F8E4M3, F8E4M3B11FNUZ, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0FNU,
};
use super::sub_byte::{S2, S4, U2, U4};
use crate::literal::{self, ArrayLiteral, Literal};
use crate::primitive::PrimitiveType;
use crate::shape::{ArrayShape, Shape};

/// The elements of an array in logical row-major order, one variant per element type the
/// evaluator supports. Equality is IEEE equality of the elements (NaN differs from itself).
#[derive(Clone, Debug, PartialEq)]
pub enum Elements {
    Pred(Vec<bool>),
    S8(Vec<i8>),
    S16(Vec<i16>),
    S32(Vec<i32>),
    S64(Vec<i64>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    S4(Vec<S4>),
    U4(Vec<U4>),
    S2(Vec<S2>),
    U2(Vec<U2>),
    F16(Vec<f16>),
    BF16(Vec<bf16>),
    F4E2M1FN(Vec<F4E2M1FN>),
    F8E3M4(Vec<F8E3M4>),
    F8E4M3(Vec<F8E4M3>),
    F8E4M3FN(Vec<F8E4M3FN>),
    F8E4M3B11FNUZ(Vec<F8E4M3B11FNUZ>),
    F8E4M3FNUZ(Vec<F8E4M3FNUZ>),
    F8E5M2(Vec<F8E5M2>),
    F8E5M2FNUZ(Vec<F8E5M2FNUZ>),
    F8E8M0FNU(Vec<F8E8M0FNU>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    C64(Vec<C64>),
    C128(Vec<C128>),
}

/// Runs `$body` with `$v` bound to the vector inside whichever variant `$e` is.
macro_rules! with_elements {
    ($e:expr, $v:ident => $body:expr) => {
        match $e {
            $crate::evaluate::Elements::Pred($v) => $body,
            $crate::evaluate::Elements::S8($v) => $body,
            $crate::evaluate::Elements::S16($v) => $body,
            $crate::evaluate::Elements::S32($v) => $body,
            $crate::evaluate::Elements::S64($v) => $body,
            $crate::evaluate::Elements::U8($v) => $body,
            $crate::evaluate::Elements::U16($v) => $body,
            $crate::evaluate::Elements::U32($v) => $body,
            $crate::evaluate::Elements::U64($v) => $body,
            $crate::evaluate::Elements::S4($v) => $body,
            $crate::evaluate::Elements::U4($v) => $body,
            $crate::evaluate::Elements::S2($v) => $body,
            $crate::evaluate::Elements::U2($v) => $body,
            $crate::evaluate::Elements::F16($v) => $body,
            $crate::evaluate::Elements::BF16($v) => $body,
            $crate::evaluate::Elements::F4E2M1FN($v) => $body,
            $crate::evaluate::Elements::F8E3M4($v) => $body,
            $crate::evaluate::Elements::F8E4M3($v) => $body,
            $crate::evaluate::Elements::F8E4M3FN($v) => $body,
            $crate::evaluate::Elements::F8E4M3B11FNUZ($v) => $body,
            $crate::evaluate::Elements::F8E4M3FNUZ($v) => $body,
            $crate::evaluate::Elements::F8E5M2($v) => $body,
            $crate::evaluate::Elements::F8E5M2FNUZ($v) => $body,
            $crate::evaluate::Elements::F8E8M0FNU($v) => $body,
            $crate::evaluate::Elements::F32($v) => $body,
            $crate::evaluate::Elements::F64($v) => $body,
            $crate::evaluate::Elements::C64($v) => $body,
            $crate::evaluate::Elements::C128($v) => $body,
        }
    };
}
pub(super) use with_elements;

/// Runs `$body` with `$t` naming the Rust type that stores elements of type `$ty`; types
/// without one give an `unsupported: element type ...` error.
macro_rules! with_type {
    ($ty:expr, $t:ident => $body:expr) => {
        $crate::evaluate::value::with_type!(@arms $ty, $t, $body,
            Pred bool, S8 i8, S16 i16, S32 i32, S64 i64, U8 u8, U16 u16, U32 u32, U64 u64,
            S4 $crate::evaluate::S4, U4 $crate::evaluate::U4, S2 $crate::evaluate::S2,
            U2 $crate::evaluate::U2, F4E2M1FN $crate::evaluate::F4E2M1FN,
            F8E3M4 $crate::evaluate::F8E3M4, F8E4M3 $crate::evaluate::F8E4M3,
            F8E4M3FN $crate::evaluate::F8E4M3FN, F8E4M3B11FNUZ $crate::evaluate::F8E4M3B11FNUZ,
            F8E4M3FNUZ $crate::evaluate::F8E4M3FNUZ, F8E5M2 $crate::evaluate::F8E5M2,
            F8E5M2FNUZ $crate::evaluate::F8E5M2FNUZ, F8E8M0FNU $crate::evaluate::F8E8M0FNU,
            C64 $crate::evaluate::C64, C128 $crate::evaluate::C128,
            F16 half::f16, BF16 half::bf16, F32 f32, F64 f64)
    };
    (@arms $ty:expr, $t:ident, $body:expr, $($variant:ident $rust:ty),*) => {{
        use $crate::primitive::PrimitiveType as P;
        match $ty {
            $(P::$variant => {
                type $t = $rust;
                Ok($body)
            })*
            other => Err($crate::evaluate::value::unsupported_type(other)),
        }
    }};
}
pub(super) use with_type;

/// The error for element types without host storage (complex, 1-bit integers, fp8/fp4).
pub(super) fn unsupported_type(ty: PrimitiveType) -> String {
    format!("unsupported: element type {ty}")
}

/// Whether the evaluator computes with elements of `ty`.
pub(super) fn is_supported_type(ty: PrimitiveType) -> bool {
    with_type!(ty, T => T::TYPE).is_ok()
}

/// An element value between types: integers exactly, floats as the `f64` they equal
/// (exact for every supported float type).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Num {
    Int(i128),
    Float(f64),
}

/// `Element::wrap` and `Element::slice` of a type stored in the `Elements` variant
/// `$variant`, written once for every element type.
macro_rules! elements_storage {
    ($variant:ident, $t:ty) => {
        fn wrap(v: Vec<$t>) -> $crate::evaluate::Elements {
            $crate::evaluate::Elements::$variant(v)
        }
        fn slice(e: &$crate::evaluate::Elements) -> Option<&[$t]> {
            match e {
                $crate::evaluate::Elements::$variant(v) => Some(v),
                _ => None,
            }
        }
    };
}
pub(super) use elements_storage;

/// A Rust type storing elements of one HLO type, with XLA's conversion rules.
pub(super) trait Element: Copy + Default + 'static {
    const TYPE: PrimitiveType;

    fn to_num(self) -> Num;

    /// XLA's `convert` from any value: integers wrap (two's complement truncation), floats
    /// to integers saturate with NaN → 0, anything to pred is `!= 0`, and f16/bf16 are
    /// reached through f32 as XLA's evaluator (Eigen's `static_cast`) does.
    fn from_num(n: Num) -> Self;

    /// The element's bit pattern, zero-extended (128 bits hold every type's, `c128`'s
    /// included).
    fn pattern(self) -> u128;

    /// The element with the low bits of `bits` as its pattern.
    fn from_pattern(bits: u128) -> Self;

    fn wrap(v: Vec<Self>) -> Elements;

    fn slice(e: &Elements) -> Option<&[Self]>;

    fn to_value(self) -> literal::Value {
        match self.to_num() {
            Num::Int(i) => literal::Value::Int(i),
            Num::Float(f) => literal::Value::Float(f),
        }
    }
}

impl Element for bool {
    const TYPE: PrimitiveType = PrimitiveType::Pred;
    fn to_num(self) -> Num {
        Num::Int(i128::from(self))
    }
    fn from_num(n: Num) -> bool {
        match n {
            Num::Int(i) => i != 0,
            // NaN is not equal to zero, so it converts to true.
            Num::Float(f) => f != 0.0,
        }
    }
    fn pattern(self) -> u128 {
        u128::from(self)
    }
    fn from_pattern(bits: u128) -> bool {
        bits & 1 != 0
    }
    elements_storage!(Pred, bool);
    fn to_value(self) -> literal::Value {
        literal::Value::Pred(self)
    }
}

macro_rules! int_element {
    ($t:ty, $bits:ty, $variant:ident, $ty:ident) => {
        impl Element for $t {
            const TYPE: PrimitiveType = PrimitiveType::$ty;
            fn to_num(self) -> Num {
                Num::Int(self as i128)
            }
            fn from_num(n: Num) -> $t {
                match n {
                    Num::Int(i) => i as $t,
                    // Rust's float→int `as` saturates and maps NaN to 0: XLA's rule.
                    Num::Float(f) => f as $t,
                }
            }
            fn pattern(self) -> u128 {
                self as $bits as u128
            }
            fn from_pattern(bits: u128) -> $t {
                bits as $bits as $t
            }
            elements_storage!($variant, $t);
        }
    };
}

int_element!(i8, u8, S8, S8);
int_element!(i16, u16, S16, S16);
int_element!(i32, u32, S32, S32);
int_element!(i64, u64, S64, S64);
int_element!(u8, u8, U8, U8);
int_element!(u16, u16, U16, U16);
int_element!(u32, u32, U32, U32);
int_element!(u64, u64, U64, U64);

macro_rules! half_element {
    ($t:ty, $variant:ident) => {
        impl Element for $t {
            const TYPE: PrimitiveType = PrimitiveType::$variant;
            fn to_num(self) -> Num {
                Num::Float(self.to_f64())
            }
            fn from_num(n: Num) -> $t {
                match n {
                    Num::Int(i) => <$t>::from_f32(i as f32),
                    Num::Float(f) => <$t>::from_f32(f as f32),
                }
            }
            fn pattern(self) -> u128 {
                u128::from(<$t>::to_bits(self))
            }
            fn from_pattern(bits: u128) -> $t {
                <$t>::from_bits(bits as u16)
            }
            elements_storage!($variant, $t);
        }
    };
}

half_element!(f16, F16);
half_element!(bf16, BF16);

macro_rules! float_element {
    ($t:ty, $bits:ty, $variant:ident) => {
        impl Element for $t {
            const TYPE: PrimitiveType = PrimitiveType::$variant;
            fn to_num(self) -> Num {
                Num::Float(f64::from(self))
            }
            fn from_num(n: Num) -> $t {
                match n {
                    Num::Int(i) => i as $t,
                    Num::Float(f) => f as $t,
                }
            }
            fn pattern(self) -> u128 {
                u128::from(<$t>::to_bits(self))
            }
            fn from_pattern(bits: u128) -> $t {
                <$t>::from_bits(bits as $bits)
            }
            elements_storage!($variant, $t);
        }
    };
}

float_element!(f32, u32, F32);
float_element!(f64, u64, F64);

/// The element type stored in `v` (a helper for [`with_elements!`] bodies).
fn type_of<T: Element>(_: &[T]) -> PrimitiveType {
    T::TYPE
}

/// `v` as `T`'s slice; `what` names the operand for the mismatch message.
pub(super) fn slice_as<'e, T: Element>(e: &'e Elements, what: &str) -> Result<&'e [T], String> {
    T::slice(e).ok_or_else(|| {
        format!(
            "{what} has element type {} but {} was expected",
            e.element_type(),
            T::TYPE
        )
    })
}

impl Elements {
    pub fn element_type(&self) -> PrimitiveType {
        with_elements!(self, v => type_of(v))
    }

    pub fn len(&self) -> usize {
        with_elements!(self, v => v.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i` as a literal value: `Pred`, `Int` or `Float` (the exact `f64`).
    pub fn value(&self, i: usize) -> literal::Value {
        with_elements!(self, v => v[i].to_value())
    }

    pub(super) fn num(&self, i: usize) -> Num {
        with_elements!(self, v => v[i].to_num())
    }

    /// Element `i`'s bit pattern, zero-extended (its encoding in memory).
    pub fn pattern(&self, i: usize) -> u128 {
        with_elements!(self, v => v[i].pattern())
    }

    /// The elements of type `ty` whose bit patterns are `patterns` (the low bits of each).
    pub fn from_patterns(ty: PrimitiveType, patterns: &[u128]) -> Result<Elements, String> {
        with_type!(ty, T => T::wrap(patterns.iter().map(|&p| T::from_pattern(p)).collect()))
    }

    /// `n` elements of type `ty`, element `i` being `f(i)` converted by XLA's rules.
    pub(super) fn build(
        ty: PrimitiveType,
        n: usize,
        mut f: impl FnMut(usize) -> Num,
    ) -> Result<Elements, String> {
        with_type!(ty, T => T::wrap((0..n).map(|i| T::from_num(f(i))).collect()))
    }

    /// `n` elements of type `ty`, element `i` being `f(i)` (a `Pred`, `Int` or `Float`)
    /// converted by XLA's rules; complex values are refused.
    pub fn from_values(
        ty: PrimitiveType,
        n: usize,
        mut f: impl FnMut(usize) -> literal::Value,
    ) -> Result<Elements, String> {
        let mut refused = None;
        let elements = Elements::build(ty, n, |i| match f(i) {
            literal::Value::Pred(b) => Num::Int(i128::from(b)),
            literal::Value::Int(v) => Num::Int(v),
            literal::Value::Float(v) => Num::Float(v),
            literal::Value::Complex(..) => {
                refused.get_or_insert(i);
                Num::Int(0)
            }
        })?;
        match refused {
            Some(i) => Err(format!("element {i}: complex values are unsupported here")),
            None => Ok(elements),
        }
    }

    /// Every `stride`-th element from the first (a sample of a large array).
    pub fn strided(&self, stride: usize) -> Elements {
        let offsets: Vec<usize> = (0..self.len()).step_by(stride.max(1)).collect();
        self.take(&offsets, 0)
    }

    /// The first element repeated `n` times (scalars broadcast to `n` lanes).
    pub(super) fn repeat_first(&self, n: usize) -> Elements {
        with_elements!(self, v => Element::wrap(vec![v[0]; n]))
    }

    /// The elements at `offsets[i] + shift`, in order.
    pub(super) fn take(&self, offsets: &[usize], shift: usize) -> Elements {
        with_elements!(self, v => Element::wrap(offsets.iter().map(|&o| v[o + shift]).collect()))
    }

    /// Overwrites the elements at `positions` with `from`'s, in order (the inverse of
    /// [`Self::take`]); `from` must have this vector's element type.
    pub(super) fn put(&mut self, positions: &[usize], from: &Elements) -> Result<(), String> {
        with_elements!(self, v => {
            let from = slice_as(from, "the written elements")?;
            for (&p, &e) in positions.iter().zip(from) {
                v[p] = e;
            }
            Ok(())
        })
    }
}

/// An array value: logical bounds and elements in row-major order.
#[derive(Clone, Debug, PartialEq)]
pub struct HostArray {
    dims: Vec<i64>,
    elements: Elements,
}

impl HostArray {
    /// Fails when the element count is not the product of `dims`.
    pub fn new(dims: Vec<i64>, elements: Elements) -> Result<HostArray, String> {
        let expected: i64 = dims.iter().product();
        if dims.iter().any(|&d| d < 0) || expected as usize != elements.len() {
            return Err(format!(
                "an array of bounds {dims:?} cannot hold {} elements",
                elements.len()
            ));
        }
        Ok(HostArray { dims, elements })
    }

    /// An array whose element count the caller has established.
    pub(super) fn from_parts(dims: Vec<i64>, elements: Elements) -> HostArray {
        debug_assert_eq!(dims.iter().product::<i64>() as usize, elements.len());
        HostArray { dims, elements }
    }

    pub fn dims(&self) -> &[i64] {
        &self.dims
    }

    pub fn elements(&self) -> &Elements {
        &self.elements
    }

    /// The elements, to overwrite in place (their count and type stay).
    pub(super) fn elements_mut(&mut self) -> &mut Elements {
        &mut self.elements
    }

    pub fn into_elements(self) -> Elements {
        self.elements
    }

    pub fn element_type(&self) -> PrimitiveType {
        self.elements.element_type()
    }

    pub fn len(&self) -> usize {
        self.elements.len()
    }

    pub fn is_empty(&self) -> bool {
        self.elements.is_empty()
    }

    /// Element `i` (row-major) as a literal value.
    pub fn value(&self, i: usize) -> literal::Value {
        self.elements.value(i)
    }

    /// The array's shape, without a layout.
    pub fn shape(&self) -> ArrayShape {
        ArrayShape::new(self.element_type(), self.dims.clone())
    }

    /// The literal's values converted to `ty` by XLA's rules (floats written in the text
    /// are rounded to the type here).
    pub fn from_literal(literal: &ArrayLiteral, ty: PrimitiveType) -> Result<HostArray, String> {
        if ty.is_complex() {
            let parts = literal
                .values
                .iter()
                .map(|v| match *v {
                    literal::Value::Complex(re, im) => Ok((re, im)),
                    literal::Value::Pred(_) => Err(unsupported_type(ty)),
                    literal::Value::Int(i) => Ok((i as f64, 0.0)),
                    literal::Value::Float(f) => Ok((f, 0.0)),
                })
                .collect::<Result<Vec<_>, _>>()?;
            let elements = if ty == PrimitiveType::C64 {
                Elements::C64(
                    parts
                        .iter()
                        .map(|&(re, im)| C64 {
                            re: re as f32,
                            im: im as f32,
                        })
                        .collect(),
                )
            } else {
                Elements::C128(parts.iter().map(|&(re, im)| C128 { re, im }).collect())
            };
            return HostArray::new(literal.dims.clone(), elements);
        }
        let nums = literal
            .values
            .iter()
            .map(|v| match *v {
                literal::Value::Pred(b) => Ok(Num::Int(i128::from(b))),
                literal::Value::Int(i) => Ok(Num::Int(i)),
                literal::Value::Float(f) => Ok(Num::Float(f)),
                literal::Value::Complex(..) => Err(unsupported_type(ty)),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let elements = Elements::build(ty, nums.len(), |i| nums[i])?;
        HostArray::new(literal.dims.clone(), elements)
    }

    pub fn to_literal(&self) -> ArrayLiteral {
        ArrayLiteral {
            dims: self.dims.clone(),
            values: (0..self.len()).map(|i| self.value(i)).collect(),
        }
    }
}

/// A value of any shape: an array or a tuple of values.
#[derive(Clone, Debug, PartialEq)]
pub enum HostValue {
    Array(HostArray),
    Tuple(Vec<HostValue>),
}

impl HostValue {
    /// The literal as a value of `shape` (whose structure it must have).
    pub fn from_literal(literal: &Literal, shape: &Shape) -> Result<HostValue, String> {
        match (literal, shape) {
            (Literal::Array(a), Shape::Array(s)) => {
                let array = HostArray::from_literal(a, s.element_type)?;
                if array.dims != s.dims {
                    return Err(format!("literal {literal} does not have the shape {shape}"));
                }
                Ok(HostValue::Array(array))
            }
            (Literal::Tuple(ls), Shape::Tuple(ss)) if ls.len() == ss.len() => ls
                .iter()
                .zip(ss)
                .map(|(l, s)| HostValue::from_literal(l, s))
                .collect::<Result<_, _>>()
                .map(HostValue::Tuple),
            _ => Err(format!("literal {literal} does not have the shape {shape}")),
        }
    }

    pub fn to_literal(&self) -> Literal {
        match self {
            HostValue::Array(a) => Literal::Array(a.to_literal()),
            HostValue::Tuple(vs) => Literal::Tuple(vs.iter().map(HostValue::to_literal).collect()),
        }
    }

    pub fn as_array(&self) -> Option<&HostArray> {
        match self {
            HostValue::Array(a) => Some(a),
            HostValue::Tuple(_) => None,
        }
    }

    /// The value's shape, without layouts.
    pub fn shape(&self) -> Shape {
        match self {
            HostValue::Array(a) => Shape::Array(a.shape()),
            HostValue::Tuple(vs) => Shape::Tuple(vs.iter().map(HostValue::shape).collect()),
        }
    }

    /// The arrays of the value in order, flattening nested tuples (the outputs of a
    /// multi-output fusion).
    pub fn into_leaves(self) -> Vec<HostArray> {
        match self {
            HostValue::Array(a) => vec![a],
            HostValue::Tuple(vs) => vs.into_iter().flat_map(HostValue::into_leaves).collect(),
        }
    }
}

/// XLA's literal syntax, e.g. `{ {1, 2}, {3, 4} }`.
impl fmt::Display for HostValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.to_literal().fmt(f)
    }
}
