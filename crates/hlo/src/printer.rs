//! Prints a module back to HLO text.
//!
//! The output is canonical, so `print(parse(print(m))) == print(m)` holds for every module
//! (the corpus test checks it): names without `%` unless they need it, untyped operands (the
//! short form XLA's own emitter tests use), layouts only where the input gave them,
//! uninterpreted attributes as normalised text, two-space indentation, a blank line
//! between computations.

use std::fmt::{self, Write};

use crate::lexer;
use crate::module::{AttrValue, Attribute, Computation, HloModule, Instruction, Payload};

impl fmt::Display for HloModule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(header) = &self.header {
            write!(f, "HloModule {}", printable_name(&header.name))?;
            write_attributes(f, &header.attributes)?;
            f.write_str("\n\n")?;
        }
        if !self.stack_frames.is_empty() {
            writeln!(f, "{}", self.stack_frames)?;
        }
        write_separated(f, &self.computations, "\n", |f, c| write!(f, "{c}"))
    }
}

impl fmt::Display for Computation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_entry {
            f.write_str("ENTRY ")?;
        }
        f.write_str(&printable_name(&self.name))?;
        if let Some(signature) = &self.signature {
            f.write_str(" (")?;
            write_separated(f, &signature.params, ", ", |f, (name, shape)| {
                write!(f, "{}: {shape}", printable_name(name))
            })?;
            write!(f, ") -> {}", signature.result)?;
        }
        f.write_str(" {\n")?;
        for (i, instr) in self.instructions.iter().enumerate() {
            f.write_str(if i == self.root.0 { "  ROOT " } else { "  " })?;
            write_instruction(f, self, instr)?;
            f.write_str("\n")?;
        }
        f.write_str("}")?;
        write_attributes(f, &self.attributes)?;
        f.write_str("\n")
    }
}

fn write_instruction(
    f: &mut fmt::Formatter<'_>,
    computation: &Computation,
    instr: &Instruction,
) -> fmt::Result {
    write!(
        f,
        "{} = {} {}(",
        printable_name(&instr.name),
        instr.shape,
        instr.opcode
    )?;
    match &instr.payload {
        Payload::Literal(literal) => write!(f, "{literal}")?,
        Payload::Parameter(number) => write!(f, "{number}")?,
        Payload::None => {
            write_separated(f, &instr.operands, ", ", |f, &operand| {
                f.write_str(&printable_name(&computation.instruction(operand).name))
            })?;
        }
    }
    f.write_str(")")?;
    write_attributes(f, &instr.attributes)
}

/// Writes each of `items` with `write_item`, `separator` between them.
fn write_separated<T>(
    f: &mut fmt::Formatter<'_>,
    items: impl IntoIterator<Item = T>,
    separator: &str,
    mut write_item: impl FnMut(&mut fmt::Formatter<'_>, T) -> fmt::Result,
) -> fmt::Result {
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            f.write_str(separator)?;
        }
        write_item(f, item)?;
    }
    Ok(())
}

fn write_attributes(f: &mut fmt::Formatter<'_>, attributes: &[Attribute]) -> fmt::Result {
    for attr in attributes {
        write!(f, ", {}={}", attr.name, attr.value)?;
    }
    Ok(())
}

impl fmt::Display for AttrValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttrValue::Int(v) => write!(f, "{v}"),
            AttrValue::Bool(v) => write!(f, "{v}"),
            AttrValue::IntList(values) => {
                f.write_str("{")?;
                write_separated(f, values, ",", |f, v| write!(f, "{v}"))?;
                f.write_str("}")
            }
            AttrValue::Enum(v) | AttrValue::Raw(v) => f.write_str(v),
            AttrValue::Str(v) => f.write_str(&lexer::escape(v)),
            AttrValue::Computation(c) => f.write_str(&printable_name(&c.name)),
            AttrValue::Computations(cs) => {
                f.write_str("{")?;
                write_separated(f, cs, ", ", |f, c| f.write_str(&printable_name(&c.name)))?;
                f.write_str("}")
            }
            AttrValue::Slice(dims) => {
                f.write_str("{")?;
                write_separated(f, dims, ", ", |f, d| {
                    write!(f, "[{}:{}", d.start, d.limit)?;
                    if d.stride != 1 {
                        write!(f, ":{}", d.stride)?;
                    }
                    f.write_str("]")
                })?;
                f.write_str("}")
            }
            AttrValue::Padding(dims) => write_separated(f, dims, "x", |f, d| {
                write!(f, "{}_{}", d.low, d.high)?;
                if d.interior != 0 {
                    write!(f, "_{}", d.interior)?;
                }
                Ok(())
            }),
            AttrValue::ProgramShape(params, result) => {
                f.write_str("{(")?;
                write_separated(f, params, ", ", |f, p| write!(f, "{p}"))?;
                write!(f, ")->{result}}}")
            }
        }
    }
}

/// A name as it must be written to lex back as the same name: bare when it is an
/// identifier that cannot be mistaken for a keyword, `%name` otherwise.
fn printable_name(name: &str) -> String {
    let bare = name
        .bytes()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && !matches!(name, "ROOT" | "ENTRY" | "HloModule");
    let mut out = String::with_capacity(name.len() + 1);
    if !bare {
        out.push('%');
    }
    let _ = out.write_str(name);
    out
}

#[cfg(test)]
mod tests {
    use crate::diag::SourceFile;
    use crate::parse_module;

    fn reprint(text: &str) -> String {
        parse_module(&SourceFile::new("t.hlo", text))
            .unwrap()
            .to_string()
    }

    #[test]
    fn canonical_form() {
        let text = "HloModule m, entry_computation_layout={(f32[2]{0})->f32[2]{0}}\n\
                    %add (x: f32[], y: f32[]) -> f32[] { %x = f32[] parameter(0) %y = f32[] parameter(1)\n\
                    ROOT %s = f32[] add(f32[] %x, f32[] %y) }\n\
                    ENTRY e { %0 = f32[2]{0} parameter(0), sharding={replicated}\n\
                    z = f32[] constant(0)\n\
                    ROOT r = f32[] reduce(%0, z), dimensions={0}, to_apply=%add /* x */ }";
        let printed = reprint(text);
        assert_eq!(
            printed,
            "HloModule m, entry_computation_layout={(f32[2]{0})->f32[2]{0}}\n\n\
             add (x: f32[], y: f32[]) -> f32[] {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\n\
             ENTRY e {\n  %0 = f32[2]{0} parameter(0), sharding={replicated}\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(%0, z), dimensions={0}, to_apply=add\n}\n"
        );
        assert_eq!(reprint(&printed), printed);
    }

    #[test]
    fn keyword_names_keep_their_percent() {
        let printed = reprint("c { %ROOT = f32[] parameter(0) ROOT %ENTRY = f32[] negate(%ROOT) }");
        assert!(
            printed.contains("  %ROOT = f32[] parameter(0)\n  ROOT %ENTRY = f32[] negate(%ROOT)")
        );
        assert_eq!(reprint(&printed), printed);
    }
}
