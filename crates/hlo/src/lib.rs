//! The HLO frontend: HLO text in, a checked module out.
//!
//! `lexer` → `parser` (names resolved, graphs acyclic) → `verifier` (shape rules) gives an
//! [`HloModule`]; `printer` writes it back as canonical HLO text; `graph` answers
//! users/post-order questions for the emitters; `layout` holds the tiled-layout math that
//! the evaluator and `flatten-tensors` share. All errors are [`Diagnostic`]s located in the
//! source.

pub mod diag;
pub mod dot;
pub mod evaluate;
pub mod graph;
pub mod layout;
pub mod lexer;
pub mod literal;
pub mod module;
pub mod narrow_float;
pub mod opcode;
pub mod parser;
pub mod primitive;
mod printer;
pub mod scatter;
pub mod shape;
pub mod shape_inference;
mod spelled;
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

/// The largest HLO text the front end reads: spans are 32-bit byte offsets.
pub const MAX_TEXT_BYTES: usize = u32::MAX as usize;

/// Refuses a text of `len` bytes past [`MAX_TEXT_BYTES`] (its offsets would wrap).
fn check_text_size(name: &str, len: usize) -> Result<(), String> {
    if len > MAX_TEXT_BYTES {
        return Err(format!(
            "{name}: error: the file has {len} bytes; HLO text is read up to {MAX_TEXT_BYTES} bytes (4 GiB)"
        ));
    }
    Ok(())
}

/// Loads HLO text from raw bytes, the front door for tools: decodes UTF-8, parses and
/// verifies the module. Errors come rendered (`file:line:col: error: ...`, the line, a caret).
/// Bytes given by value become the source text without a copy.
pub fn load(name: &str, bytes: impl Into<Vec<u8>>) -> Result<(SourceFile, HloModule), String> {
    load_piece(name, bytes, 0)
}

/// [`load`] for a piece of the file `name` that starts after `lines_before` lines: its
/// diagnostics give the whole file's line numbers (`--split-input-file`).
pub fn load_piece(
    name: &str,
    bytes: impl Into<Vec<u8>>,
    lines_before: usize,
) -> Result<(SourceFile, HloModule), String> {
    let bytes = bytes.into();
    check_text_size(name, bytes.len())?;
    let source = match String::from_utf8(bytes) {
        Ok(text) => SourceFile::new(name, text).after_lines(lines_before),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let source = SourceFile::new(name, String::from_utf8_lossy(e.as_bytes()))
                .after_lines(lines_before);
            // The lossy text keeps every byte before the first invalid one.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_past_four_gib_is_refused_by_size() {
        assert!(check_text_size("f.hlo", MAX_TEXT_BYTES).is_ok());
        let error = check_text_size("f.hlo", MAX_TEXT_BYTES + 1).unwrap_err();
        assert!(
            error.starts_with("f.hlo: error: the file has 4294967296 bytes"),
            "{error}"
        );
        assert!(check_text_size("f.hlo", usize::MAX).is_err());
    }
}
