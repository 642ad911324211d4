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

mod data_movement;
mod elementwise;
mod indexed;
mod reductions;
mod written;

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
        Opcode::Dot => r.dot(written),
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
        self.operand_count(self.operands.len() == n, "", n)
    }

    fn at_least(&self, n: usize) -> Result<()> {
        self.operand_count(self.operands.len() >= n, "at least ", n)
    }

    /// `Ok` when the operand count is `ok`; else "expected {bound}n operands, got m".
    fn operand_count(&self, ok: bool, bound: &str, n: usize) -> Result<()> {
        if ok {
            return Ok(());
        }
        Err(self.err(
            Site::Opcode,
            format!(
                "expected {bound}{}, got {}",
                count(n, "operand", "operands"),
                self.operands.len()
            ),
        ))
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

    /// The error for attribute `name` written other than as `syntax`.
    fn written_as(&self, name: &'static str, syntax: &str) -> ShapeError {
        self.err(
            Site::Attribute(name),
            format!("{name}= must be written as {syntax}"),
        )
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

    /// Checks that attribute `name`, of `entries` entries, has one per dimension of `a`.
    fn one_entry_per_dimension(
        &self,
        name: &'static str,
        entries: usize,
        a: &ArrayShape,
    ) -> Result<()> {
        if entries == a.rank() {
            return Ok(());
        }
        Err(self.err(
            Site::Attribute(name),
            format!(
                "{name}= has {} but the operand {} has rank {}",
                count(entries, "entry", "entries"),
                show(a),
                a.rank()
            ),
        ))
    }

    /// The one dimension, of an operand of rank `rank`, that `dimensions=` must name.
    fn one_dimension(&self, rank: usize) -> Result<usize> {
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
        Ok(self.dims_in_range("dimensions", dims, rank, "operand")?[0])
    }

    /// Operand `i`, which must have the dimensions of `first`, operand 0; `what` names both
    /// in the error ("operand", "input").
    fn array_like_first(&self, i: usize, first: &ArrayShape, what: &str) -> Result<&'a ArrayShape> {
        let b = self.array(i)?;
        if b.dims != first.dims {
            return Err(self.err(
                Site::Operand(i),
                format!(
                    "{what} {i} {} does not have the dimensions of {what} 0 {}",
                    show(b),
                    show(first)
                ),
            ));
        }
        Ok(b)
    }

    // ---- elementwise ------------------------------------------------------------------
}
