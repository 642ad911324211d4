//! The HLO module model: computations of instructions, with the spans they came from.
//!
//! Operands and called computations are resolved to indices when parsing finishes, so
//! later stages never look names up. Every part of the model keeps its source span: the
//! verifier and the emitters report errors at the instruction, operand or attribute that
//! caused them.

use crate::diag::{Diagnostic, Span};
use crate::literal::Literal;
use crate::opcode::Opcode;
use crate::shape::Shape;
use crate::stack_frames::StackFrameIndex;

/// Index of an instruction within its computation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstrId(pub usize);

/// Index of a computation within its module.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ComputationId(pub usize);

#[derive(Clone, Debug, PartialEq)]
pub struct HloModule {
    /// `HloModule name, attrs...`; `None` for a bare list of computations, the form XLA's
    /// emitter tests use.
    pub header: Option<ModuleHeader>,
    /// The Python call stacks instructions point into (empty when the text has none).
    pub stack_frames: StackFrameIndex,
    pub computations: Vec<Computation>,
    /// The `ENTRY` computation, or the last one when none is marked: XLA's test tools treat
    /// the last computation of a bare file as the fusion to compile.
    pub entry: ComputationId,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ModuleHeader {
    pub name: String,
    pub span: Span,
    pub attributes: Vec<Attribute>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Computation {
    pub name: String,
    pub span: Span,
    /// Marked `ENTRY` in the text.
    pub is_entry: bool,
    /// The old-style signature `(p0: f32[], p1: f32[]) -> f32[]`, when written.
    pub signature: Option<Signature>,
    pub instructions: Vec<Instruction>,
    /// The `ROOT` instruction, or the last one when none is marked (XLA's rule).
    pub root: InstrId,
    /// Trailing attributes such as `execution_thread="main"`.
    pub attributes: Vec<Attribute>,
}

/// A computation's written signature: named parameters and the result shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Signature {
    pub params: Vec<(String, Shape)>,
    pub result: Shape,
    pub span: Span,
}

/// The `custom_call_target` of XLA's call of CUB's radix sort.
pub const CUB_RADIX_SORT: &str = "__cub$DeviceRadixSort";

#[derive(Clone, Debug, PartialEq)]
pub struct Instruction {
    pub name: String,
    pub opcode: Opcode,
    pub shape: Shape,
    pub operands: Vec<InstrId>,
    /// Constant literal or parameter number: the values written inside the parentheses
    /// where other ops list operands.
    pub payload: Payload,
    pub attributes: Vec<Attribute>,
    pub spans: InstrSpans,
}

/// Where each part of an instruction was written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InstrSpans {
    /// From the name (or `ROOT`) to the end of the last attribute.
    pub whole: Span,
    pub name: Span,
    pub shape: Span,
    pub opcode: Span,
    pub operands: Vec<Span>,
    /// The literal or parameter number.
    pub payload: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Payload {
    None,
    Parameter(i64),
    /// Boxed: a module holds millions of instructions and few constants, and a literal
    /// inline would make every instruction 32 bytes larger.
    Literal(Box<Literal>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Attribute {
    pub name: String,
    pub value: AttrValue,
    pub span: Span,
}

/// Attribute values. The attributes the compiler reads are parsed into their structure and
/// checked; the rest (`metadata`, `sharding`, `backend_config={...}`, `window`, ...) are kept
/// as [`AttrValue::Raw`] text — whitespace normalised, comments dropped — so they print back
/// and never stop a module from parsing.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    Int(i64),
    Bool(bool),
    IntList(Vec<i64>),
    /// A keyword from a closed set, such as `kind=kLoop` or `direction=LT`.
    Enum(String),
    Str(String),
    Computation(ComputationRef),
    Computations(Vec<ComputationRef>),
    Slice(Vec<SliceDim>),
    Padding(Vec<PadDim>),
    /// `entry_computation_layout={(f32[2]{0})->f32[2]{0}}`.
    ProgramShape(Vec<Shape>, Shape),
    Raw(String),
}

/// A called computation: its name as written and, once resolved, its index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComputationRef {
    pub name: String,
    pub id: ComputationId,
    pub span: Span,
}

/// `[start:limit:stride]` of one dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SliceDim {
    pub start: i64,
    pub limit: i64,
    pub stride: i64,
}

/// `low_high_interior` of one dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PadDim {
    pub low: i64,
    pub high: i64,
    pub interior: i64,
}

impl HloModule {
    /// `d` with a note per Python frame that built the instruction it points at (through
    /// the instruction's `metadata={... stack_frame_id=N}`), innermost first: where in the
    /// JAX program the unsupported or malformed instruction came from.
    pub fn with_call_stack(&self, mut d: Diagnostic) -> Diagnostic {
        let at = d.span.start;
        let Some(instr) = self
            .computations
            .iter()
            .flat_map(|c| &c.instructions)
            .find(|i| {
                i.spans.whole.start <= at && at < i.spans.whole.end.max(i.spans.whole.start + 1)
            })
        else {
            return d;
        };
        let Some(id) = instr.stack_frame_id() else {
            return d;
        };
        for frame in self.stack_frames.call_stack(id) {
            d.notes.push(format!("from Python: {frame}"));
        }
        d
    }

    pub fn computation(&self, id: ComputationId) -> &Computation {
        &self.computations[id.0]
    }

    pub fn entry_computation(&self) -> &Computation {
        self.computation(self.entry)
    }

    pub fn computation_by_name(&self, name: &str) -> Option<ComputationId> {
        self.computations
            .iter()
            .position(|c| c.name == name)
            .map(ComputationId)
    }
}

impl Computation {
    pub fn instruction(&self, id: InstrId) -> &Instruction {
        &self.instructions[id.0]
    }

    pub fn root_instruction(&self) -> &Instruction {
        self.instruction(self.root)
    }

    pub fn instruction_by_name(&self, name: &str) -> Option<InstrId> {
        self.instructions
            .iter()
            .position(|i| i.name == name)
            .map(InstrId)
    }

    /// The root's opcode when the computation is one op of its two parameters, each once,
    /// in either order (`add(p0, p1)`): how a reducer or combiner is known by its kind.
    pub fn binary_op_of_parameters(&self) -> Option<Opcode> {
        let root = self.root_instruction();
        let params = self.parameters();
        let of_both = params.len() == 2
            && (root.operands == params[..] || root.operands == [params[1], params[0]]);
        of_both.then_some(root.opcode)
    }

    /// The parameter instructions ordered by parameter number (as far as numbers are valid;
    /// the verifier reports gaps and duplicates).
    pub fn parameters(&self) -> Vec<InstrId> {
        let mut params: Vec<(i64, InstrId)> = self
            .instructions
            .iter()
            .enumerate()
            .filter_map(|(i, instr)| match instr.payload {
                Payload::Parameter(n) if instr.opcode == Opcode::Parameter => Some((n, InstrId(i))),
                _ => None,
            })
            .collect();
        params.sort();
        params.into_iter().map(|(_, id)| id).collect()
    }
}

impl Instruction {
    pub fn attribute(&self, name: &str) -> Option<&Attribute> {
        self.attributes.iter().find(|a| a.name == name)
    }

    /// `stack_frame_id=N` of the `metadata` attribute: the Python frame that built this
    /// instruction ([`crate::stack_frames`]).
    pub fn stack_frame_id(&self) -> Option<u64> {
        let AttrValue::Raw(metadata) = &self.attribute("metadata")?.value else {
            return None;
        };
        let (_, rest) = metadata.split_once("stack_frame_id=")?;
        let digits = rest.split(|c: char| !c.is_ascii_digit()).next()?;
        digits.parse().ok()
    }

    /// Whether this is XLA's `TopK` custom-call (`custom_call_target="TopK"`, a comparator
    /// in `called_computations`), which JAX's `lax.top_k` becomes in XLA's printed modules.
    pub fn is_topk_call(&self) -> bool {
        self.is_custom_call_to("TopK")
    }

    /// Whether this is XLA's call of CUB's radix sort (`__cub$DeviceRadixSort`), which XLA's
    /// SortRewriter makes of a sort with a plain comparator (`sort-rewriter` here).
    pub fn is_cub_sort_call(&self) -> bool {
        self.is_custom_call_to(CUB_RADIX_SORT)
    }

    /// Whether a CUB radix sort call sorts in descending order (`backend_config=
    /// {"descending":true}`, XLA's `SortOptions`).
    pub fn cub_sort_descending(&self) -> bool {
        self.backend_config_flag("descending")
    }

    /// Whether a sort's rows are each a bitonic sequence (`backend_config=
    /// {"bitonic_rows":true}`), as `split-long-sorts` leaves the tiles of a merge stage: the
    /// sort emitter then runs only the last stage of its network. The sort's result is the
    /// same either way, so the evaluator ignores it (and `--check` catches a wrong claim).
    pub fn sorts_bitonic_rows(&self) -> bool {
        self.opcode == Opcode::Sort && self.backend_config_flag("bitonic_rows")
    }

    /// Whether `backend_config`'s JSON sets `"<key>":true`.
    fn backend_config_flag(&self, key: &str) -> bool {
        self.attribute("backend_config")
            .is_some_and(|a| match &a.value {
                AttrValue::Raw(text) | AttrValue::Str(text) => text
                    .chars()
                    .filter(|c| !c.is_whitespace())
                    .collect::<String>()
                    .contains(&format!("\"{key}\":true")),
                _ => false,
            })
    }

    /// Whether this is a `custom-call` with `custom_call_target="<target>"`.
    fn is_custom_call_to(&self, target: &str) -> bool {
        self.opcode == Opcode::CustomCall
            && self
                .attribute("custom_call_target")
                .is_some_and(|a| matches!(&a.value, AttrValue::Str(s) if s == target))
    }

    /// An integer-list attribute such as `dimensions={0,1}`.
    pub fn int_list(&self, name: &str) -> Option<&[i64]> {
        match &self.attribute(name)?.value {
            AttrValue::IntList(v) => Some(v),
            _ => None,
        }
    }

    pub fn int(&self, name: &str) -> Option<i64> {
        match self.attribute(name)?.value {
            AttrValue::Int(v) => Some(v),
            _ => None,
        }
    }

    pub fn enum_value(&self, name: &str) -> Option<&str> {
        match &self.attribute(name)?.value {
            AttrValue::Enum(v) => Some(v),
            _ => None,
        }
    }

    pub fn bool_value(&self, name: &str) -> Option<bool> {
        match self.attribute(name)?.value {
            AttrValue::Bool(v) => Some(v),
            _ => None,
        }
    }

    /// The single computation an attribute such as `calls=` or `to_apply=` names.
    pub fn called(&self, name: &str) -> Option<&ComputationRef> {
        match &self.attribute(name)?.value {
            AttrValue::Computation(c) => Some(c),
            AttrValue::Computations(cs) if cs.len() == 1 => Some(&cs[0]),
            _ => None,
        }
    }

    /// Every computation this instruction calls, in attribute order.
    pub fn called_computations(&self) -> impl Iterator<Item = &ComputationRef> {
        self.attributes.iter().flat_map(|a| match &a.value {
            AttrValue::Computation(c) => std::slice::from_ref(c),
            AttrValue::Computations(cs) => cs.as_slice(),
            _ => &[],
        })
    }

    pub fn literal(&self) -> Option<&Literal> {
        match &self.payload {
            Payload::Literal(l) => Some(l),
            _ => None,
        }
    }

    pub fn parameter_number(&self) -> Option<i64> {
        match self.payload {
            Payload::Parameter(n) => Some(n),
            _ => None,
        }
    }
}
