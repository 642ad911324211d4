//! The HLO frontend: HLO text in, a checked module out.
//!
//! `lexer` → `parser` (names resolved, graphs acyclic) → `verifier` (shape rules) gives an
//! [`HloModule`]; `printer` writes it back as canonical HLO text; `graph` answers
//! users/post-order questions for the emitters; `layout` holds the tiled-layout math that
//! the evaluator and `flatten-tensors` share. All errors are [`Diagnostic`]s located in the
//! source.

pub mod diag;
pub mod graph;
pub mod layout;
pub mod lexer;
pub mod literal;
pub mod module;
pub mod opcode;
pub mod parser;
pub mod primitive;
mod printer;
pub mod shape;
pub mod shape_inference;

pub use diag::{Diagnostic, SourceFile, Span};
pub use layout::{Layout, Tile};
pub use literal::{Literal, Value};
pub use module::{
    AttrValue, Attribute, Computation, ComputationId, HloModule, InstrId, Instruction, Payload,
};
pub use opcode::Opcode;
pub use parser::parse_module;
pub use primitive::PrimitiveType;
pub use shape::{ArrayShape, Shape};
