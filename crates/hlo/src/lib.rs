//! The HLO frontend: HLO text in, a checked module out.
//!
//! `lexer` → `parser` (names resolved, graphs acyclic) → `verifier` (shape rules) gives an
//! [`HloModule`]; `printer` writes it back as canonical HLO text; `graph` answers
//! users/post-order questions for the emitters; `layout` holds the tiled-layout math that
//! the evaluator and `flatten-tensors` share. All errors are [`Diagnostic`]s located in the
//! source.

pub mod diag;
pub mod evaluate;
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
pub mod stack_frames;
pub mod verifier;
pub mod window;

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
pub use verifier::verify_module;

/// Loads HLO text from raw bytes, the front door for tools: decodes UTF-8, parses and
/// verifies the module. Errors come rendered (`file:line:col: error: ...`, the line, a caret).
pub fn load(name: &str, bytes: &[u8]) -> Result<(SourceFile, HloModule), String> {
    let source = match std::str::from_utf8(bytes) {
        Ok(text) => SourceFile::new(name, text),
        Err(e) => {
            let source = SourceFile::new(name, String::from_utf8_lossy(bytes));
            // The lossy text keeps every byte before the first invalid one.
            let at = e.valid_up_to();
            let diag = Diagnostic::new(Span::new(at, at + 1), "the file is not valid UTF-8");
            return Err(diag.render(&source));
        }
    };
    let module = parse_module(&source).map_err(|d| d.render(&source))?;
    match verify_module(&module) {
        Ok(()) => Ok((source, module)),
        Err(diag) => Err(module.with_call_stack(diag).render(&source)),
    }
}
