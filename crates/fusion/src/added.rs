//! Instructions a pass adds around one it rewrites: named after it (`sort.cub`,
//! `r.init`), written where it was (its spans, so diagnostics point at the source), and the
//! attributes they carry.

use hlo::{
    AttrValue, Attribute, Computation, InstrId, Instruction, Literal, Opcode, Payload,
    PrimitiveType, Shape, Span, Value,
};

use crate::Names;

/// Adds instructions to `c` for the rewrite of `of`.
pub(crate) struct Added<'a> {
    pub(crate) c: &'a mut Computation,
    pub(crate) names: &'a mut Names,
    pub(crate) of: Instruction,
}

impl Added<'_> {
    /// A new instruction `<of>.<suffix>`; its id.
    pub(crate) fn op(
        &mut self,
        suffix: &str,
        opcode: Opcode,
        shape: Shape,
        operands: Vec<InstrId>,
        attributes: Vec<Attribute>,
    ) -> InstrId {
        self.c.instructions.push(Instruction {
            name: self.names.unique(&format!("{}.{suffix}", self.of.name)),
            opcode,
            shape,
            operands,
            payload: Payload::None,
            attributes,
            spans: self.of.spans.clone(),
        });
        InstrId(self.c.instructions.len() - 1)
    }

    /// A scalar constant of type `t`.
    pub(crate) fn constant(&mut self, suffix: &str, t: PrimitiveType, value: Value) -> InstrId {
        let scalar = Shape::array(t, Vec::new());
        let id = self.op(suffix, Opcode::Constant, scalar, vec![], vec![]);
        self.c.instructions[id.0].payload =
            Payload::Literal(Box::new(Literal::Array(hlo::literal::ArrayLiteral {
                dims: Vec::new(),
                values: vec![value],
            })));
        id
    }

    /// `value` broadcast to `shape` (`dimensions={}`).
    pub(crate) fn broadcast(&mut self, suffix: &str, shape: Shape, value: InstrId) -> InstrId {
        let dimensions = vec![scalar_broadcast(self.span())];
        self.op(suffix, Opcode::Broadcast, shape, vec![value], dimensions)
    }

    /// Element `index` of tuple `tuple`, of shape `shape` (`get-tuple-element`).
    pub(crate) fn element(
        &mut self,
        suffix: &str,
        shape: Shape,
        tuple: InstrId,
        index: usize,
    ) -> InstrId {
        let index = vec![attribute(
            "index",
            AttrValue::Int(index as i64),
            self.span(),
        )];
        self.op(suffix, Opcode::GetTupleElement, shape, vec![tuple], index)
    }

    /// Where the rewritten instruction was written.
    pub(crate) fn span(&self) -> Span {
        self.of.spans.whole
    }
}

/// The attribute `name=value`, written at `span`.
pub(crate) fn attribute(name: &str, value: AttrValue, span: Span) -> Attribute {
    Attribute {
        name: name.into(),
        value,
        span,
    }
}

/// A broadcast's `dimensions={}`: a scalar to every element.
pub(crate) fn scalar_broadcast(span: Span) -> Attribute {
    attribute("dimensions", AttrValue::IntList(Vec::new()), span)
}
