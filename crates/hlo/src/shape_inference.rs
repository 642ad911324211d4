//! Per-op shape rules: the result shape an instruction must have given its operands and
//! attributes (XLA's `ShapeInference`, restated), and for the ops whose result cannot be
//! computed from the operands (broadcast, reshape, convert, ...) the checks the written
//! result must pass.
//!
//! * [`infer_shape`] computes the result of the ops listed by [`is_inferable`]. The parser
//!   uses it to fill in shapes the text leaves out (`ROOT t = tuple(a, b)`); the verifier
//!   compares the written shape against it with [`Shape::compatible`] (layouts are never
//!   compared).
//! * [`check_shape`] is the verifier's entry point: inference and comparison for the
//!   inferable ops, the written-result checks for the others.
//!
//! Errors are [`ShapeError`]s: a message that names the op, and the [`Site`] it is about —
//! an operand, an attribute, the result shape or the opcode — which
//! [`ShapeError::span`] turns into a source span of the instruction.
//!
//! Called computations (reducers, fusion bodies, loop bodies) are not visible here; the
//! verifier checks them. The result of a reduce therefore takes its element types from
//! the initial values, which the verifier checks against the reducer's result.
//!
//! Arithmetic on sizes never overflows: sums and products are taken in `i128` and
//! checked, and the unbounded size of `?` dimensions ([`UNBOUNDED_SIZE`]) is never
//! negated or multiplied.

use std::fmt;

use crate::diag::{Diagnostic, Span};
use crate::literal::Literal;
use crate::module::{AttrValue, Instruction, Payload};
use crate::opcode::Opcode;
use crate::primitive::PrimitiveType;
use crate::shape::{ArrayShape, Shape, UNBOUNDED_SIZE};
use crate::window::parse_window;

/// The part of an instruction a shape error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Site {
    Opcode,
    /// The written result shape.
    Shape,
    /// Operand `i`.
    Operand(usize),
    /// The attribute of this name (the opcode when it is missing).
    Attribute(&'static str),
}

/// A violated shape rule. The message starts with the op's name:
/// `reduce: dimension 3 is out of range for operand of rank 2`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeError {
    pub site: Site,
    pub message: String,
}

impl ShapeError {
    /// Where the error points in `instr`'s source.
    pub fn span(&self, instr: &Instruction) -> Span {
        match self.site {
            Site::Opcode => instr.spans.opcode,
            Site::Shape => instr.spans.shape,
            Site::Operand(i) => instr
                .spans
                .operands
                .get(i)
                .copied()
                .unwrap_or(instr.spans.opcode),
            Site::Attribute(name) => instr.attribute(name).map_or(instr.spans.opcode, |a| a.span),
        }
    }

    pub fn to_diagnostic(&self, instr: &Instruction) -> Diagnostic {
        Diagnostic::new(self.span(instr), self.message.clone())
    }
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ShapeError {}

type Result<T> = std::result::Result<T, ShapeError>;

/// Whether [`infer_shape`] can compute `opcode`'s result from its operands and attributes.
pub fn is_inferable(opcode: Opcode) -> bool {
    use Opcode::*;
    opcode.is_elementwise_unary()
        || opcode.is_elementwise_binary()
        || matches!(
            opcode,
            Tuple
                | GetTupleElement
                | Compare
                | Select
                | Clamp
                | Complex
                | IsFinite
                | Real
                | Imag
                | ReducePrecision
                | Slice
                | Pad
                | Concatenate
                | Transpose
                | Reverse
                | Reduce
                | ReduceWindow
                | DynamicSlice
                | DynamicUpdateSlice
                | Gather
                | Scatter
                | Sort
                | While
                | AddDependency
                | OptimizationBarrier
        )
}

/// The shape `instr` must have given its operands' shapes. Inferred shapes carry no layout,
/// except where the result is made of operand shapes verbatim (tuple, get-tuple-element),
/// which keep theirs as in XLA.
/// For an op that is not [`is_inferable`], an error at [`Site::Shape`] asks for the shape.
pub fn infer_shape(instr: &Instruction, operands: &[&Shape]) -> Result<Shape> {
    let r = Rules {
        instr,
        operands,
        op: instr.opcode,
    };
    use Opcode::*;
    match instr.opcode {
        Tuple => Ok(Shape::Tuple(operands.iter().map(|&s| s.clone()).collect())),
        GetTupleElement => r.get_tuple_element(),
        Copy | OptimizationBarrier | While => {
            r.arity(1)?;
            Ok(operands[0].without_layout())
        }
        AddDependency => {
            r.arity(2)?;
            Ok(operands[0].without_layout())
        }
        Compare => r.compare(),
        Select => r.select(),
        Clamp => r.clamp(),
        Complex => r.complex(),
        Slice => r.slice(),
        Pad => r.pad(),
        Concatenate => r.concatenate(),
        Transpose => r.transpose(),
        Reverse => r.reverse(),
        Reduce => r.reduce(),
        ReduceWindow => r.reduce_window(),
        DynamicSlice => r.dynamic_slice(),
        DynamicUpdateSlice => r.dynamic_update_slice(),
        Gather => r.gather(),
        Scatter => r.scatter(),
        Sort => r.sort(),
        IsFinite | Real | Imag | ReducePrecision => r.unary(),
        op if op.is_elementwise_unary() => r.unary(),
        op if op.is_elementwise_binary() => r.binary(),
        _ => Err(r.err(
            Site::Shape,
            "the result shape cannot be inferred from the operands; write it",
        )),
    }
}

/// Checks `written`, the result shape of `instr`, against the op's shape rules: equal (up to
/// layout) to the inferred shape for the [`is_inferable`] ops, the op's own conditions for
/// broadcast, reshape, convert, bitcast-convert, bitcast, iota, constant and parameter.
/// Other ops (collectives, custom-call, dot, convolution, fusion, call, map, ...) pass;
/// what they need from called computations is the verifier's job.
pub fn check_shape(instr: &Instruction, operands: &[&Shape], written: &Shape) -> Result<()> {
    let op = instr.opcode;
    if is_inferable(op) {
        let inferred = infer_shape(instr, operands)?;
        if !inferred.compatible(written) {
            return Err(ShapeError {
                site: Site::Shape,
                message: format!(
                    "{op}: result {} does not match the inferred shape {inferred}",
                    written.without_layout()
                ),
            });
        }
        return Ok(());
    }
    let r = Rules {
        instr,
        operands,
        op,
    };
    match op {
        Opcode::Broadcast => r.broadcast(written),
        Opcode::Reshape => r.reshape(written),
        Opcode::Convert => r.convert(written),
        Opcode::BitcastConvert => r.bitcast_convert(written),
        Opcode::Bitcast => r.bitcast(written),
        Opcode::Iota => r.iota(written),
        Opcode::Constant => r.constant(written),
        Opcode::Parameter => r.arity(0),
        _ => Ok(()),
    }
}

/// `{0,1}`, the way HLO text writes an integer list.
pub(crate) fn int_list_text(values: &[i64]) -> String {
    let items: Vec<String> = values.iter().map(i64::to_string).collect();
    format!("{{{}}}", items.join(","))
}

/// `1 entry`, `2 entries`.
pub(crate) fn count(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// An array shape as text without its layout.
fn show(a: &ArrayShape) -> String {
    ArrayShape {
        layout: None,
        ..a.clone()
    }
    .to_string()
}

/// Builds an array shape, keeping `dynamic` only when some dimension is dynamic.
fn array(element_type: PrimitiveType, dims: Vec<i64>, mut dynamic: Vec<bool>) -> Shape {
    if !dynamic.contains(&true) {
        dynamic.clear();
    }
    Shape::Array(ArrayShape {
        element_type,
        dims,
        dynamic_dims: dynamic,
        layout: None,
    })
}

fn strip(a: &ArrayShape) -> Shape {
    Shape::Array(ArrayShape {
        layout: None,
        ..a.clone()
    })
}

fn dynamic_of(a: &ArrayShape) -> Vec<bool> {
    (0..a.rank()).map(|d| a.is_dynamic_dim(d)).collect()
}

/// The number of elements, or `None` when a dimension is unbounded or the count does not
/// fit in `i128`.
pub(crate) fn element_count(a: &ArrayShape) -> Option<i128> {
    a.dims.iter().try_fold(1i128, |acc, &d| {
        if d < 0 {
            None
        } else {
            acc.checked_mul(i128::from(d))
        }
    })
}

/// Same element type, or both floating-point (XLA's "ignoring FP precision").
pub(crate) fn same_type_ignoring_fp_precision(a: PrimitiveType, b: PrimitiveType) -> bool {
    a == b || (a.is_float() && b.is_float())
}

/// The shape rules of one instruction, with its operands' shapes.
struct Rules<'a> {
    instr: &'a Instruction,
    operands: &'a [&'a Shape],
    op: Opcode,
}

impl<'a> Rules<'a> {
    fn err(&self, site: Site, message: impl fmt::Display) -> ShapeError {
        ShapeError {
            site,
            message: format!("{}: {message}", self.op),
        }
    }

    fn arity(&self, n: usize) -> Result<()> {
        if self.operands.len() == n {
            Ok(())
        } else {
            Err(self.err(
                Site::Opcode,
                format!(
                    "expected {}, got {}",
                    count(n, "operand", "operands"),
                    self.operands.len()
                ),
            ))
        }
    }

    fn at_least(&self, n: usize) -> Result<()> {
        if self.operands.len() >= n {
            Ok(())
        } else {
            Err(self.err(
                Site::Opcode,
                format!(
                    "expected at least {}, got {}",
                    count(n, "operand", "operands"),
                    self.operands.len()
                ),
            ))
        }
    }

    fn array(&self, i: usize) -> Result<&'a ArrayShape> {
        match self.operands.get(i) {
            Some(Shape::Array(a)) => Ok(a),
            Some(other) => Err(self.err(
                Site::Operand(i),
                format!(
                    "operand {i} must be an array, got {}",
                    other.without_layout()
                ),
            )),
            None => Err(self.err(Site::Opcode, format!("missing operand {i}"))),
        }
    }

    fn result_array<'s>(&self, written: &'s Shape) -> Result<&'s ArrayShape> {
        match written {
            Shape::Array(a) => Ok(a),
            other => Err(self.err(
                Site::Shape,
                format!("result must be an array, got {}", other.without_layout()),
            )),
        }
    }

    fn attr(&self, name: &'static str) -> Result<&'a AttrValue> {
        self.instr
            .attribute(name)
            .map(|a| &a.value)
            .ok_or_else(|| self.err(Site::Opcode, format!("missing {name}= attribute")))
    }

    fn int_list(&self, name: &'static str) -> Result<&'a [i64]> {
        match self.attr(name)? {
            AttrValue::IntList(v) => Ok(v),
            _ => Err(self.err(
                Site::Attribute(name),
                format!("{name}= must be a list of integers such as {{0,1}}"),
            )),
        }
    }

    /// An integer-list attribute that may be left out (empty then).
    fn opt_int_list(&self, name: &'static str) -> Result<&'a [i64]> {
        if self.instr.attribute(name).is_none() {
            return Ok(&[]);
        }
        self.int_list(name)
    }

    fn int_attr(&self, name: &'static str) -> Result<i64> {
        match self.attr(name)? {
            AttrValue::Int(v) => Ok(*v),
            _ => Err(self.err(Site::Attribute(name), format!("{name}= must be an integer"))),
        }
    }

    /// Checks that the entries of attribute `name` are distinct dimensions of a `what` of
    /// rank `rank`, and returns them as indices.
    fn dims_in_range(
        &self,
        name: &'static str,
        dims: &[i64],
        rank: usize,
        what: &str,
    ) -> Result<Vec<usize>> {
        let mut seen = vec![false; rank];
        let mut out = Vec::with_capacity(dims.len());
        for &d in dims {
            let Some(index) = usize::try_from(d).ok().filter(|&i| i < rank) else {
                let message = if name == "dimensions" {
                    format!("dimension {d} is out of range for {what} of rank {rank}")
                } else {
                    format!("dimension {d} in {name} is out of range for {what} of rank {rank}")
                };
                return Err(self.err(Site::Attribute(name), message));
            };
            if std::mem::replace(&mut seen[index], true) {
                return Err(self.err(
                    Site::Attribute(name),
                    format!(
                        "dimension {d} appears twice in {name}={}",
                        int_list_text(dims)
                    ),
                ));
            }
            out.push(index);
        }
        Ok(out)
    }

    /// Like [`Self::dims_in_range`], and the entries must be ascending.
    fn sorted_dims_in_range(
        &self,
        name: &'static str,
        dims: &[i64],
        rank: usize,
        what: &str,
    ) -> Result<Vec<usize>> {
        let out = self.dims_in_range(name, dims, rank, what)?;
        if out.windows(2).any(|w| w[0] > w[1]) {
            return Err(self.err(
                Site::Attribute(name),
                format!("{name}={} must be sorted", int_list_text(dims)),
            ));
        }
        Ok(out)
    }

    fn rank_mismatch(&self, name: &'static str, entries: usize, a: &ArrayShape) -> ShapeError {
        self.err(
            Site::Attribute(name),
            format!(
                "{name}= has {} but the operand {} has rank {}",
                count(entries, "entry", "entries"),
                show(a),
                a.rank()
            ),
        )
    }

    // ---- elementwise ------------------------------------------------------------------

    fn unary(&self) -> Result<Shape> {
        use Opcode::*;
        self.arity(1)?;
        let a = self.array(0)?;
        let ty = a.element_type;
        let (float, complex, int) = (ty.is_float(), ty.is_complex(), ty.is_int());
        let signed = ty.is_signed_int() || float;
        let component = ty.complex_component().unwrap_or(ty);
        let (ok, result, expected) = match self.op {
            Floor | Ceil | RoundNearestAfz | RoundNearestEven | Erf | ReducePrecision => {
                (float, ty, "floating-point")
            }
            IsFinite => (float, PrimitiveType::Pred, "floating-point"),
            Abs => (
                signed || complex,
                component,
                "signed integer, floating-point or complex",
            ),
            Real | Imag => (float || complex, component, "floating-point or complex"),
            Clz | PopulationCount => (int, ty, "integer"),
            Not => (int || ty == PrimitiveType::Pred, ty, "pred or integer"),
            Negate => (
                int || float || complex,
                ty,
                "integer, floating-point or complex",
            ),
            Sign => (
                signed || complex,
                ty,
                "signed integer, floating-point or complex",
            ),
            _ => (float || complex, ty, "floating-point or complex"),
        };
        if !ok {
            return Err(self.err(
                Site::Operand(0),
                format!("operand type {} is not {expected}", show(a)),
            ));
        }
        Ok(Shape::Array(ArrayShape {
            element_type: result,
            layout: None,
            ..a.clone()
        }))
    }

    /// Two array operands of one shape.
    fn same_shape_pair(&self) -> Result<&'a ArrayShape> {
        self.arity(2)?;
        let a = self.array(0)?;
        let b = self.array(1)?;
        if !a.compatible(b) {
            return Err(self.err(
                Site::Operand(1),
                format!(
                    "operands must have the same shape, got {} and {}",
                    show(a),
                    show(b)
                ),
            ));
        }
        Ok(a)
    }

    fn binary(&self) -> Result<Shape> {
        use Opcode::*;
        let a = self.same_shape_pair()?;
        let ty = a.element_type;
        let (float, complex, int) = (ty.is_float(), ty.is_complex(), ty.is_int());
        let (ok, expected) = match self.op {
            And | Or | Xor => (int || ty == PrimitiveType::Pred, "pred or integer"),
            ShiftLeft | ShiftRightArithmetic | ShiftRightLogical => (int, "integer"),
            Atan2 => (float || complex, "floating-point or complex"),
            Remainder => (int || float, "integer or floating-point"),
            Power => (
                int || float || complex,
                "integer, floating-point or complex",
            ),
            _ => (ty.is_array_element(), "numeric"),
        };
        if !ok {
            return Err(self.err(
                Site::Operand(0),
                format!("operand type {} is not {expected}", show(a)),
            ));
        }
        Ok(strip(a))
    }

    fn compare(&self) -> Result<Shape> {
        let a = self.same_shape_pair()?;
        if !a.element_type.is_array_element() {
            return Err(self.err(
                Site::Operand(0),
                format!("operand type {} cannot be compared", show(a)),
            ));
        }
        self.attr("direction")?;
        Ok(array(PrimitiveType::Pred, a.dims.clone(), dynamic_of(a)))
    }

    fn complex(&self) -> Result<Shape> {
        let a = self.same_shape_pair()?;
        let element_type = match a.element_type {
            PrimitiveType::F32 => PrimitiveType::C64,
            PrimitiveType::F64 => PrimitiveType::C128,
            _ => {
                return Err(self.err(
                    Site::Operand(0),
                    format!("operand type {} is not f32 or f64", show(a)),
                ));
            }
        };
        Ok(Shape::Array(ArrayShape {
            element_type,
            layout: None,
            ..a.clone()
        }))
    }

    fn select(&self) -> Result<Shape> {
        self.arity(3)?;
        let pred = self.array(0)?;
        if pred.element_type != PrimitiveType::Pred {
            return Err(self.err(
                Site::Operand(0),
                format!("predicate type {} is not pred", show(pred)),
            ));
        }
        let (on_true, on_false) = (self.operands[1], self.operands[2]);
        if !on_true.compatible(on_false) {
            return Err(self.err(
                Site::Operand(2),
                format!(
                    "on-true and on-false operands must have the same shape, got {} and {}",
                    on_true.without_layout(),
                    on_false.without_layout()
                ),
            ));
        }
        let pred_fits =
            pred.rank() == 0 || matches!(on_true, Shape::Array(t) if t.dims == pred.dims);
        if !pred_fits {
            return Err(self.err(
                Site::Operand(0),
                format!(
                    "predicate {} must be a scalar or have the dimensions of the operands {}",
                    show(pred),
                    on_true.without_layout()
                ),
            ));
        }
        Ok(on_true.without_layout())
    }

    fn clamp(&self) -> Result<Shape> {
        self.arity(3)?;
        let x = self.array(1)?;
        for (i, name) in [(0, "min"), (2, "max")] {
            let bound = self.array(i)?;
            if bound.element_type != x.element_type {
                return Err(self.err(
                    Site::Operand(i),
                    format!(
                        "{name} has element type {} but the operand has {}",
                        bound.element_type, x.element_type
                    ),
                ));
            }
            if bound.rank() != 0 && bound.dims != x.dims {
                return Err(self.err(
                    Site::Operand(i),
                    format!(
                        "{name} {} must be a scalar or have the shape of the operand {}",
                        show(bound),
                        show(x)
                    ),
                ));
            }
        }
        Ok(strip(x))
    }

    // ---- tuples -----------------------------------------------------------------------

    fn get_tuple_element(&self) -> Result<Shape> {
        self.arity(1)?;
        let index = self.int_attr("index")?;
        let Shape::Tuple(elements) = self.operands[0] else {
            return Err(self.err(
                Site::Operand(0),
                format!(
                    "operand must be a tuple, got {}",
                    self.operands[0].without_layout()
                ),
            ));
        };
        usize::try_from(index)
            .ok()
            .and_then(|i| elements.get(i))
            .cloned()
            .ok_or_else(|| {
                self.err(
                    Site::Attribute("index"),
                    format!(
                        "index {index} is out of range for a tuple of {}",
                        count(elements.len(), "element", "elements")
                    ),
                )
            })
    }

    // ---- index transforms -------------------------------------------------------------

    fn transpose(&self) -> Result<Shape> {
        self.arity(1)?;
        let a = self.array(0)?;
        let dims = self.int_list("dimensions")?;
        if dims.len() != a.rank() {
            return Err(self.rank_mismatch("dimensions", dims.len(), a));
        }
        let perm = self.dims_in_range("dimensions", dims, a.rank(), "operand")?;
        Ok(array(
            a.element_type,
            perm.iter().map(|&p| a.dims[p]).collect(),
            perm.iter().map(|&p| a.is_dynamic_dim(p)).collect(),
        ))
    }

    fn reverse(&self) -> Result<Shape> {
        self.arity(1)?;
        let a = self.array(0)?;
        let dims = self.int_list("dimensions")?;
        self.dims_in_range("dimensions", dims, a.rank(), "operand")?;
        Ok(strip(a))
    }

    fn slice(&self) -> Result<Shape> {
        self.arity(1)?;
        let a = self.array(0)?;
        let AttrValue::Slice(slices) = self.attr("slice")? else {
            return Err(self.err(
                Site::Attribute("slice"),
                "slice= must be written as {[start:limit:stride], ...}",
            ));
        };
        if slices.len() != a.rank() {
            return Err(self.rank_mismatch("slice", slices.len(), a));
        }
        let mut dims = Vec::with_capacity(slices.len());
        let mut dynamic = Vec::with_capacity(slices.len());
        for (i, s) in slices.iter().enumerate() {
            let bad = |message: String| Err(self.err(Site::Attribute("slice"), message));
            if s.stride <= 0 {
                return bad(format!(
                    "stride {} of dimension {i} must be positive",
                    s.stride
                ));
            }
            if s.start < 0 {
                return bad(format!("start {} of dimension {i} is negative", s.start));
            }
            if s.start > s.limit {
                return bad(format!(
                    "start {} of dimension {i} exceeds its limit {}",
                    s.start, s.limit
                ));
            }
            if s.limit > a.dims[i] {
                return bad(format!(
                    "limit {} of dimension {i} exceeds its size {}",
                    s.limit, a.dims[i]
                ));
            }
            let (start, limit, stride) = (
                i128::from(s.start),
                i128::from(s.limit),
                i128::from(s.stride),
            );
            // 0 <= start <= limit, so the size fits in i64.
            dims.push(((limit - start + stride - 1) / stride) as i64);
            // A dynamic dimension stays dynamic only where the slice takes all of it.
            let whole = s.start == 0 && s.stride == 1 && s.limit == a.dims[i];
            dynamic.push(a.is_dynamic_dim(i) && whole);
        }
        Ok(array(a.element_type, dims, dynamic))
    }

    fn pad(&self) -> Result<Shape> {
        self.arity(2)?;
        let a = self.array(0)?;
        let value = self.array(1)?;
        if value.rank() != 0 || value.element_type != a.element_type {
            return Err(self.err(
                Site::Operand(1),
                format!(
                    "padding value must be a scalar of type {}, got {}",
                    a.element_type,
                    show(value)
                ),
            ));
        }
        let AttrValue::Padding(padding) = self.attr("padding")? else {
            return Err(self.err(
                Site::Attribute("padding"),
                "padding= must be written as low_high[_interior] per dimension",
            ));
        };
        if padding.len() != a.rank() {
            return Err(self.rank_mismatch("padding", padding.len(), a));
        }
        let mut dims = Vec::with_capacity(padding.len());
        for (i, (p, &d)) in padding.iter().zip(&a.dims).enumerate() {
            if p.interior < 0 {
                return Err(self.err(
                    Site::Attribute("padding"),
                    format!(
                        "interior padding {} of dimension {i} is negative",
                        p.interior
                    ),
                ));
            }
            if d < 0 {
                dims.push(UNBOUNDED_SIZE);
                continue;
            }
            let d = i128::from(d);
            let size = i128::from(p.low)
                + i128::from(p.high)
                + d
                + (d - 1).max(0) * i128::from(p.interior);
            let Ok(size) = i64::try_from(size) else {
                return Err(self.err(
                    Site::Attribute("padding"),
                    format!("padding makes dimension {i} too large"),
                ));
            };
            if size < 0 {
                return Err(self.err(
                    Site::Attribute("padding"),
                    format!("padding gives dimension {i} the negative size {size}"),
                ));
            }
            dims.push(size);
        }
        Ok(array(a.element_type, dims, dynamic_of(a)))
    }

    fn concatenate(&self) -> Result<Shape> {
        self.at_least(1)?;
        let first = self.array(0)?;
        let dims = self.int_list("dimensions")?;
        if dims.len() != 1 {
            return Err(self.err(
                Site::Attribute("dimensions"),
                format!(
                    "dimensions= must name exactly one dimension, got {}",
                    int_list_text(dims)
                ),
            ));
        }
        let d = self.dims_in_range("dimensions", dims, first.rank(), "operand")?[0];
        let mut total: i128 = 0;
        let mut unbounded = false;
        let mut dynamic = dynamic_of(first);
        for i in 0..self.operands.len() {
            let b = self.array(i)?;
            if b.rank() != first.rank() {
                return Err(self.err(
                    Site::Operand(i),
                    format!(
                        "operand {i} {} does not have the rank of operand 0 {}",
                        show(b),
                        show(first)
                    ),
                ));
            }
            if b.element_type != first.element_type {
                return Err(self.err(
                    Site::Operand(i),
                    format!(
                        "operand {i} has element type {} but operand 0 has {}",
                        b.element_type, first.element_type
                    ),
                ));
            }
            if let Some(j) = (0..b.rank()).find(|&j| j != d && b.dims[j] != first.dims[j]) {
                return Err(self.err(
                    Site::Operand(i),
                    format!(
                        "operand {i} {} differs from operand 0 {} in dimension {j}, \
                         which is not the concatenated dimension {d}",
                        show(b),
                        show(first)
                    ),
                ));
            }
            dynamic[d] |= b.is_dynamic_dim(d);
            if b.dims[d] < 0 {
                unbounded = true;
            } else {
                total += i128::from(b.dims[d]);
            }
        }
        let mut out = first.dims.clone();
        out[d] = if unbounded {
            UNBOUNDED_SIZE
        } else {
            i64::try_from(total).map_err(|_| {
                self.err(
                    Site::Opcode,
                    format!("the concatenated dimension {d} is too large"),
                )
            })?
        };
        Ok(array(first.element_type, out, dynamic))
    }

    // ---- reductions ---------------------------------------------------------------------

    /// `k` inputs of one shape followed by `k` scalar initial values; returns `k`.
    fn inputs_and_inits(&self) -> Result<usize> {
        let n = self.operands.len();
        if n < 2 || !n.is_multiple_of(2) {
            return Err(self.err(
                Site::Opcode,
                format!("expected k inputs followed by k initial values, got {n} operands"),
            ));
        }
        let k = n / 2;
        let first = self.array(0)?;
        for i in 1..k {
            let b = self.array(i)?;
            if b.dims != first.dims {
                return Err(self.err(
                    Site::Operand(i),
                    format!(
                        "input {i} {} does not have the dimensions of input 0 {}",
                        show(b),
                        show(first)
                    ),
                ));
            }
        }
        for i in 0..k {
            let init = self.array(k + i)?;
            if init.rank() != 0 {
                return Err(self.err(
                    Site::Operand(k + i),
                    format!("initial value {i} must be a scalar, got {}", show(init)),
                ));
            }
        }
        Ok(k)
    }

    /// One array per initial value, with `dims`; a tuple for several.
    fn per_init(&self, k: usize, dims: &[i64], dynamic: &[bool]) -> Result<Shape> {
        let mut results = Vec::with_capacity(k);
        for i in 0..k {
            let init = self.array(k + i)?;
            results.push(array(init.element_type, dims.to_vec(), dynamic.to_vec()));
        }
        Ok(if k == 1 {
            results.pop().unwrap_or(Shape::Tuple(Vec::new()))
        } else {
            Shape::Tuple(results)
        })
    }

    fn reduce(&self) -> Result<Shape> {
        let k = self.inputs_and_inits()?;
        let input = self.array(0)?;
        let dims = self.int_list("dimensions")?;
        let reduced = self.dims_in_range("dimensions", dims, input.rank(), "operand")?;
        let kept: Vec<usize> = (0..input.rank()).filter(|d| !reduced.contains(d)).collect();
        let out: Vec<i64> = kept.iter().map(|&d| input.dims[d]).collect();
        let dynamic: Vec<bool> = kept.iter().map(|&d| input.is_dynamic_dim(d)).collect();
        self.per_init(k, &out, &dynamic)
    }

    fn reduce_window(&self) -> Result<Shape> {
        let k = self.inputs_and_inits()?;
        let input = self.array(0)?;
        let window = match self.instr.attribute("window") {
            None if input.rank() == 0 => Vec::new(),
            None => return Err(self.err(Site::Opcode, "missing window= attribute")),
            Some(attr) => match &attr.value {
                AttrValue::Raw(text) => parse_window(text)
                    .map_err(|message| self.err(Site::Attribute("window"), message))?,
                _ => {
                    return Err(self.err(
                        Site::Attribute("window"),
                        "window= must be written as {size=.. stride=.. pad=..}",
                    ));
                }
            },
        };
        if window.len() != input.rank() {
            return Err(self.rank_mismatch("window", window.len(), input));
        }
        let mut out = Vec::with_capacity(window.len());
        for (i, (w, &d)) in window.iter().zip(&input.dims).enumerate() {
            if d < 0 {
                out.push(UNBOUNDED_SIZE);
                continue;
            }
            let dilated = |bound: i128, dilation: i128| {
                if bound == 0 {
                    0
                } else {
                    (bound - 1) * dilation + 1
                }
            };
            let base = i128::from(w.pad_low)
                + dilated(i128::from(d), i128::from(w.base_dilation))
                + i128::from(w.pad_high);
            let size = dilated(i128::from(w.size), i128::from(w.window_dilation));
            let bound = if size > base {
                0
            } else {
                (base - size) / i128::from(w.stride) + 1
            };
            out.push(i64::try_from(bound).map_err(|_| {
                self.err(
                    Site::Attribute("window"),
                    format!("window makes dimension {i} too large"),
                )
            })?);
        }
        self.per_init(k, &out, &dynamic_of(input))
    }

    fn sort(&self) -> Result<Shape> {
        self.at_least(1)?;
        let first = self.array(0)?;
        let mut results = Vec::with_capacity(self.operands.len());
        for i in 0..self.operands.len() {
            let b = self.array(i)?;
            if b.dims != first.dims {
                return Err(self.err(
                    Site::Operand(i),
                    format!(
                        "operand {i} {} does not have the dimensions of operand 0 {}",
                        show(b),
                        show(first)
                    ),
                ));
            }
            results.push(strip(b));
        }
        let dims = self.int_list("dimensions")?;
        if dims.len() != 1 {
            return Err(self.err(
                Site::Attribute("dimensions"),
                format!(
                    "dimensions= must name exactly one dimension, got {}",
                    int_list_text(dims)
                ),
            ));
        }
        self.dims_in_range("dimensions", dims, first.rank(), "operand")?;
        Ok(if results.len() == 1 {
            strip(first)
        } else {
            Shape::Tuple(results)
        })
    }

    // ---- dynamic slicing ----------------------------------------------------------------

    /// Operands `first..first + rank` are integer scalars of one type.
    fn start_indices(&self, first: usize, rank: usize, operand: &ArrayShape) -> Result<()> {
        let given = self.operands.len().saturating_sub(first);
        if given != rank {
            return Err(self.err(
                Site::Opcode,
                format!(
                    "expected {} for the operand {}, got {given}",
                    count(rank, "start index", "start indices"),
                    show(operand)
                ),
            ));
        }
        let mut index_type = None;
        for j in 0..rank {
            let index = self.array(first + j)?;
            if index.rank() != 0 || !index.element_type.is_int() {
                return Err(self.err(
                    Site::Operand(first + j),
                    format!(
                        "start index {j} must be an integer scalar, got {}",
                        show(index)
                    ),
                ));
            }
            match index_type {
                None => index_type = Some(index.element_type),
                Some(t) if t != index.element_type => {
                    return Err(self.err(
                        Site::Operand(first + j),
                        format!(
                            "start indices must all have one type, got {t} and {}",
                            index.element_type
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    fn dynamic_slice(&self) -> Result<Shape> {
        self.at_least(1)?;
        let a = self.array(0)?;
        self.start_indices(1, a.rank(), a)?;
        let sizes = self.int_list("dynamic_slice_sizes")?;
        if sizes.len() != a.rank() {
            return Err(self.rank_mismatch("dynamic_slice_sizes", sizes.len(), a));
        }
        for (i, (&s, &d)) in sizes.iter().zip(&a.dims).enumerate() {
            if s < 0 || (d >= 0 && s > d) {
                return Err(self.err(
                    Site::Attribute("dynamic_slice_sizes"),
                    format!("slice size {s} of dimension {i} is out of range [0, {d}]"),
                ));
            }
        }
        Ok(array(a.element_type, sizes.to_vec(), Vec::new()))
    }

    fn dynamic_update_slice(&self) -> Result<Shape> {
        self.at_least(2)?;
        let a = self.array(0)?;
        let update = self.array(1)?;
        if update.element_type != a.element_type {
            return Err(self.err(
                Site::Operand(1),
                format!(
                    "update has element type {} but the operand has {}",
                    update.element_type, a.element_type
                ),
            ));
        }
        if update.rank() != a.rank() {
            return Err(self.err(
                Site::Operand(1),
                format!(
                    "update {} does not have the rank of the operand {}",
                    show(update),
                    show(a)
                ),
            ));
        }
        if let Some(i) = (0..a.rank()).find(|&i| a.dims[i] >= 0 && update.dims[i] > a.dims[i]) {
            return Err(self.err(
                Site::Operand(1),
                format!(
                    "update {} is larger than the operand {} in dimension {i}",
                    show(update),
                    show(a)
                ),
            ));
        }
        self.start_indices(2, a.rank(), a)?;
        Ok(strip(a))
    }

    // ---- gather and scatter -------------------------------------------------------------

    /// The indices' bounds with the index vector dimension appended when it is implicit
    /// (`index_vector_dim` equal to the rank), and that dimension.
    fn expanded_indices(&self, indices: &ArrayShape) -> Result<(Vec<i64>, usize)> {
        let index_vector_dim = self.int_attr("index_vector_dim")?;
        let Some(ivd) = usize::try_from(index_vector_dim)
            .ok()
            .filter(|&d| d <= indices.rank())
        else {
            return Err(self.err(
                Site::Attribute("index_vector_dim"),
                format!(
                    "index_vector_dim={index_vector_dim} is out of range for indices {} \
                     (it may be at most the rank {})",
                    show(indices),
                    indices.rank()
                ),
            ));
        };
        let mut expanded = indices.dims.clone();
        if ivd == indices.rank() {
            expanded.push(1);
        }
        Ok((expanded, ivd))
    }

    fn integer_indices(&self, i: usize) -> Result<&'a ArrayShape> {
        let indices = self.array(i)?;
        if !indices.element_type.is_int() {
            return Err(self.err(
                Site::Operand(i),
                format!("indices type {} is not integer", show(indices)),
            ));
        }
        Ok(indices)
    }

    /// The batching dimensions of the operand (`operand_name`) and of the indices
    /// (`indices_name`): as many of each, disjoint from `excluded`, matching in size.
    #[allow(clippy::too_many_arguments)]
    fn batching_dims(
        &self,
        operand_name: &'static str,
        indices_name: &'static str,
        excluded_name: &str,
        excluded: &[usize],
        operand: &ArrayShape,
        indices: &ArrayShape,
        expanded: &[i64],
        ivd: usize,
    ) -> Result<Vec<usize>> {
        let operand_batching = self.sorted_dims_in_range(
            operand_name,
            self.opt_int_list(operand_name)?,
            operand.rank(),
            "operand",
        )?;
        if let Some(d) = operand_batching.iter().find(|d| excluded.contains(d)) {
            return Err(self.err(
                Site::Attribute(operand_name),
                format!("dimension {d} is in both {operand_name} and {excluded_name}"),
            ));
        }
        let indices_dims = self.opt_int_list(indices_name)?;
        let indices_batching =
            self.dims_in_range(indices_name, indices_dims, indices.rank(), "indices")?;
        if indices_batching.len() != operand_batching.len() {
            return Err(self.err(
                Site::Attribute(indices_name),
                format!(
                    "{indices_name}= has {} but {operand_name}= has {}",
                    count(indices_batching.len(), "entry", "entries"),
                    operand_batching.len()
                ),
            ));
        }
        for (&o, &i) in operand_batching.iter().zip(&indices_batching) {
            if i == ivd {
                return Err(self.err(
                    Site::Attribute(indices_name),
                    format!("dimension {i} in {indices_name} is the index_vector_dim"),
                ));
            }
            if operand.dims[o] != expanded[i] {
                return Err(self.err(
                    Site::Attribute(indices_name),
                    format!(
                        "batching dimension {o} of the operand has size {} but dimension {i} \
                         of the indices has size {}",
                        operand.dims[o], expanded[i]
                    ),
                ));
            }
        }
        Ok(operand_batching)
    }

    /// `map` (scatter_dims_to_operand_dims, start_index_map) has one entry per index
    /// vector component and names distinct operand dimensions.
    fn index_map(
        &self,
        name: &'static str,
        expanded: &[i64],
        ivd: usize,
        operand: &ArrayShape,
    ) -> Result<()> {
        let map = self.int_list(name)?;
        let components = expanded[ivd];
        if i64::try_from(map.len()).ok() != Some(components) {
            return Err(self.err(
                Site::Attribute(name),
                format!(
                    "{name}= has {} but the index vector (dimension {ivd} of the indices) has {components}",
                    count(map.len(), "entry", "entries"),
                ),
            ));
        }
        self.dims_in_range(name, map, operand.rank(), "operand")?;
        Ok(())
    }

    fn gather(&self) -> Result<Shape> {
        self.arity(2)?;
        let operand = self.array(0)?;
        let indices = self.integer_indices(1)?;
        let (expanded, ivd) = self.expanded_indices(indices)?;
        let offset_dims = self.int_list("offset_dims")?;
        let slice_sizes = self.int_list("slice_sizes")?;
        let output_rank = offset_dims.len() + expanded.len() - 1;
        let offset =
            self.sorted_dims_in_range("offset_dims", offset_dims, output_rank, "result")?;
        self.index_map("start_index_map", &expanded, ivd, operand)?;
        let collapsed = self.sorted_dims_in_range(
            "collapsed_slice_dims",
            self.int_list("collapsed_slice_dims")?,
            operand.rank(),
            "operand",
        )?;
        let batching = self.batching_dims(
            "operand_batching_dims",
            "start_indices_batching_dims",
            "collapsed_slice_dims",
            &collapsed,
            operand,
            indices,
            &expanded,
            ivd,
        )?;
        if slice_sizes.len() != operand.rank() {
            return Err(self.rank_mismatch("slice_sizes", slice_sizes.len(), operand));
        }
        let covered = offset.len() + collapsed.len() + batching.len();
        if covered != operand.rank() {
            return Err(self.err(
                Site::Attribute("offset_dims"),
                format!(
                    "offset_dims, collapsed_slice_dims and operand_batching_dims must together \
                     name the operand's {} dimensions, they name {covered}",
                    operand.rank()
                ),
            ));
        }
        for (i, (&s, &d)) in slice_sizes.iter().zip(&operand.dims).enumerate() {
            if s < 0 || (d >= 0 && s > d) {
                return Err(self.err(
                    Site::Attribute("slice_sizes"),
                    format!("slice size {s} of dimension {i} is out of range [0, {d}]"),
                ));
            }
        }
        for &d in collapsed.iter().chain(&batching) {
            if slice_sizes[d] > 1 {
                return Err(self.err(
                    Site::Attribute("slice_sizes"),
                    format!(
                        "dimension {d} is collapsed or a batching dimension, so its slice size \
                         must be 0 or 1, got {}",
                        slice_sizes[d]
                    ),
                ));
            }
        }
        let mut window_sizes = (0..operand.rank())
            .filter(|d| !collapsed.contains(d) && !batching.contains(d))
            .map(|d| slice_sizes[d]);
        let mut batch_sizes = (0..expanded.len())
            .filter(|&d| d != ivd)
            .map(|d| expanded[d]);
        let dims = (0..output_rank)
            .map(|i| {
                if offset.contains(&i) {
                    window_sizes.next()
                } else {
                    batch_sizes.next()
                }
                .unwrap_or(0)
            })
            .collect();
        Ok(array(operand.element_type, dims, Vec::new()))
    }

    fn scatter(&self) -> Result<Shape> {
        let n = self.operands.len();
        if n < 3 || n.is_multiple_of(2) {
            return Err(self.err(
                Site::Opcode,
                format!("expected k operands, the scatter indices and k updates, got {n} operands"),
            ));
        }
        let k = (n - 1) / 2;
        let operand = self.array(0)?;
        let indices = self.integer_indices(k)?;
        let (expanded, ivd) = self.expanded_indices(indices)?;
        for i in 0..k {
            let other = self.array(i)?;
            if other.dims != operand.dims {
                return Err(self.err(
                    Site::Operand(i),
                    format!(
                        "operand {i} {} does not have the dimensions of operand 0 {}",
                        show(other),
                        show(operand)
                    ),
                ));
            }
            let updates = self.array(k + 1 + i)?;
            if updates.element_type != other.element_type {
                return Err(self.err(
                    Site::Operand(k + 1 + i),
                    format!(
                        "updates {i} have element type {} but operand {i} has {}",
                        updates.element_type, other.element_type
                    ),
                ));
            }
        }
        let window_dims = self.int_list("update_window_dims")?;
        let inserted = self.sorted_dims_in_range(
            "inserted_window_dims",
            self.int_list("inserted_window_dims")?,
            operand.rank(),
            "operand",
        )?;
        let batching = self.batching_dims(
            "input_batching_dims",
            "scatter_indices_batching_dims",
            "inserted_window_dims",
            &inserted,
            operand,
            indices,
            &expanded,
            ivd,
        )?;
        let covered = window_dims.len() + inserted.len() + batching.len();
        if covered != operand.rank() {
            return Err(self.err(
                Site::Attribute("update_window_dims"),
                format!(
                    "update_window_dims, inserted_window_dims and input_batching_dims must \
                     together name the operand's {} dimensions, they name {covered}",
                    operand.rank()
                ),
            ));
        }
        self.index_map("scatter_dims_to_operand_dims", &expanded, ivd, operand)?;
        let max_window: Vec<i64> = (0..operand.rank())
            .filter(|d| !inserted.contains(d) && !batching.contains(d))
            .map(|d| operand.dims[d])
            .collect();
        let scatter_sizes: Vec<i64> = (0..expanded.len())
            .filter(|&d| d != ivd)
            .map(|d| expanded[d])
            .collect();
        let updates_rank = scatter_sizes.len() + window_dims.len();
        for i in 0..k {
            let site = Site::Operand(k + 1 + i);
            let updates = self.array(k + 1 + i)?;
            if updates.rank() != updates_rank {
                return Err(self.err(
                    site,
                    format!(
                        "updates {i} {} must have rank {updates_rank}",
                        show(updates)
                    ),
                ));
            }
            let window = self.sorted_dims_in_range(
                "update_window_dims",
                window_dims,
                updates_rank,
                "updates",
            )?;
            for (&w, &max) in window.iter().zip(&max_window) {
                if max >= 0 && updates.dims[w] > max {
                    return Err(self.err(
                        site,
                        format!(
                            "updates {i} {}: window dimension {w} has size {} but the operand \
                             dimension it updates has {max}",
                            show(updates),
                            updates.dims[w]
                        ),
                    ));
                }
            }
            let scatter_dims = (0..updates_rank).filter(|d| !window.contains(d));
            for (d, &expected) in scatter_dims.zip(&scatter_sizes) {
                if updates.dims[d] != expected {
                    return Err(self.err(
                        site,
                        format!(
                            "updates {i} {}: scatter dimension {d} has size {} but the indices \
                             give {expected}",
                            show(updates),
                            updates.dims[d]
                        ),
                    ));
                }
            }
        }
        let results: Vec<Shape> = self.operands[..k]
            .iter()
            .map(|s| s.without_layout())
            .collect();
        Ok(if k == 1 {
            strip(operand)
        } else {
            Shape::Tuple(results)
        })
    }

    // ---- ops whose result is written, not inferred --------------------------------------

    fn broadcast(&self, written: &Shape) -> Result<()> {
        self.arity(1)?;
        let a = self.array(0)?;
        let result = self.result_array(written)?;
        // As in XLA's parser, a scalar operand may leave `dimensions={}` out.
        let dims = if a.rank() == 0 {
            self.opt_int_list("dimensions")?
        } else {
            self.int_list("dimensions")?
        };
        if dims.len() != a.rank() {
            return Err(self.rank_mismatch("dimensions", dims.len(), a));
        }
        let mapped = self.dims_in_range("dimensions", dims, result.rank(), "result")?;
        if result.element_type != a.element_type {
            return Err(self.err(
                Site::Shape,
                format!(
                    "result {} does not have the element type of the operand {}",
                    show(result),
                    show(a)
                ),
            ));
        }
        for (i, &d) in mapped.iter().enumerate() {
            if result.dims[d] != a.dims[i] {
                return Err(self.err(
                    Site::Shape,
                    format!(
                        "result {} does not match operand {}: operand dimension {i} (size {}) \
                         maps to result dimension {d} (size {})",
                        show(result),
                        show(a),
                        a.dims[i],
                        result.dims[d]
                    ),
                ));
            }
        }
        Ok(())
    }

    fn reshape(&self, written: &Shape) -> Result<()> {
        self.arity(1)?;
        let a = self.array(0)?;
        let result = self.result_array(written)?;
        if result.element_type != a.element_type {
            return Err(self.err(
                Site::Shape,
                format!(
                    "result {} does not have the element type of the operand {}",
                    show(result),
                    show(a)
                ),
            ));
        }
        if let (Some(m), Some(n)) = (element_count(result), element_count(a))
            && m != n
        {
            return Err(self.err(
                Site::Shape,
                format!(
                    "result {} has {m} elements but the operand {} has {n}",
                    show(result),
                    show(a)
                ),
            ));
        }
        Ok(())
    }

    fn convert(&self, written: &Shape) -> Result<()> {
        self.arity(1)?;
        let a = self.array(0)?;
        let result = self.result_array(written)?;
        if result.dims != a.dims {
            return Err(self.err(
                Site::Shape,
                format!(
                    "result {} does not have the dimensions of the operand {}",
                    show(result),
                    show(a)
                ),
            ));
        }
        for (site, t) in [
            (Site::Operand(0), a.element_type),
            (Site::Shape, result.element_type),
        ] {
            if !t.is_array_element() {
                return Err(self.err(site, format!("cannot convert {t} values")));
            }
        }
        Ok(())
    }

    fn bitcast_convert(&self, written: &Shape) -> Result<()> {
        self.arity(1)?;
        let a = self.array(0)?;
        let result = self.result_array(written)?;
        let (from, to) = (a.element_type, result.element_type);
        let (from_bits, to_bits) = (from.bit_width(), to.bit_width());
        if from_bits == 0 || to_bits == 0 {
            return Err(self.err(
                Site::Shape,
                format!("cannot bitcast-convert {from} to {to}"),
            ));
        }
        let mut expected = a.dims.clone();
        let rule = if from_bits == to_bits {
            String::new()
        } else if from_bits > to_bits {
            let ratio = from_bits / to_bits;
            expected.push(i64::from(ratio));
            format!(": converting to the narrower {to} adds a minor dimension of size {ratio}")
        } else {
            let ratio = to_bits / from_bits;
            if a.dims.last() != Some(&i64::from(ratio)) {
                return Err(self.err(
                    Site::Operand(0),
                    format!(
                        "converting {} to the wider {to} needs a minor dimension of size {ratio}",
                        show(a)
                    ),
                ));
            }
            expected.pop();
            format!(": converting to the wider {to} removes the minor dimension of size {ratio}")
        };
        if result.dims != expected {
            return Err(self.err(
                Site::Shape,
                format!(
                    "result {} does not match operand {}{rule}",
                    show(result),
                    show(a)
                ),
            ));
        }
        Ok(())
    }

    fn bitcast(&self, written: &Shape) -> Result<()> {
        self.arity(1)?;
        let a = self.array(0)?;
        let result = self.result_array(written)?;
        let (Some(m), Some(n)) = (element_count(result), element_count(a)) else {
            return Ok(());
        };
        if result.element_type == a.element_type {
            if m != n {
                return Err(self.err(
                    Site::Shape,
                    format!(
                        "result {} has {m} elements but the operand {} has {n}",
                        show(result),
                        show(a)
                    ),
                ));
            }
            return Ok(());
        }
        let bits = |count: i128, t: PrimitiveType| count.checked_mul(i128::from(t.bit_width()));
        if let (Some(mb), Some(nb)) = (bits(m, result.element_type), bits(n, a.element_type))
            && mb != nb
        {
            return Err(self.err(
                Site::Shape,
                format!(
                    "result {} has {mb} bits but the operand {} has {nb}",
                    show(result),
                    show(a)
                ),
            ));
        }
        Ok(())
    }

    fn iota(&self, written: &Shape) -> Result<()> {
        self.arity(0)?;
        let result = self.result_array(written)?;
        let dim = self.int_attr("iota_dimension")?;
        if usize::try_from(dim).map_or(true, |d| d >= result.rank()) {
            return Err(self.err(
                Site::Attribute("iota_dimension"),
                format!(
                    "iota_dimension {dim} is out of range for result of rank {}",
                    result.rank()
                ),
            ));
        }
        if !result.element_type.is_array_element() || result.element_type == PrimitiveType::Pred {
            return Err(self.err(
                Site::Shape,
                format!("result type {} is not numeric", show(result)),
            ));
        }
        Ok(())
    }

    fn constant(&self, written: &Shape) -> Result<()> {
        self.arity(0)?;
        let Payload::Literal(literal) = &self.instr.payload else {
            return Err(self.err(Site::Opcode, "missing literal"));
        };
        if !literal_fits(literal, written) {
            return Err(self.err(
                Site::Shape,
                format!(
                    "literal {literal} does not have the shape {}",
                    written.without_layout()
                ),
            ));
        }
        Ok(())
    }
}

fn literal_fits(literal: &Literal, shape: &Shape) -> bool {
    match (literal, shape) {
        (Literal::Array(l), Shape::Array(a)) => {
            l.dims == a.dims && element_count(a).is_some_and(|n| n == l.values.len() as i128)
        }
        (Literal::Tuple(ls), Shape::Tuple(ss)) => {
            ls.len() == ss.len() && ls.iter().zip(ss).all(|(l, s)| literal_fits(l, s))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::window::parse_window;

    #[test]
    fn windows_parse() {
        let dims = parse_window("{size=3x1 stride=2x1 pad=1_1x0_0 lhs_dilate=1x2}").unwrap();
        assert_eq!(dims.len(), 2);
        assert_eq!((dims[0].size, dims[0].stride, dims[0].pad_low), (3, 2, 1));
        assert_eq!(dims[1].base_dilation, 2);
        assert!(parse_window("{size=3x1 stride=2}").is_err());
        assert!(parse_window("{size=0}").is_err());
        assert!(parse_window("{frob=1}").is_err());
    }
}
