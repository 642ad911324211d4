//! MLIR's declarative assembly format, read at registration and interpreted to print and
//! parse an op.
//!
//! The language (a subset of MLIR's `assemblyFormat`):
//!
//! | element | prints / parses |
//! |---|---|
//! | `` `kw` ``, `` `,` ``, `` `->` `` | a keyword or punctuation literal |
//! | `` `` `` | nothing, and no space before the next element |
//! | `$name` | an operand group (`%a` or `%a, %b`), or a property by its [`PropKind`] |
//! | `operands` | every operand, `%a, %b` |
//! | `type($name)`, `type(operands)`, `type(results)` | types, `t1, t2` |
//! | `attr-dict` | ` {..}`: discardable attributes and the properties no `$name` names |
//! | `( ... )?` | an optional group, present when its anchor (`^`) is: a property set to a value other than its default, or an operand group that is not empty |
//!
//! Spaces follow MLIR's generated printers exactly (`OpFormatGen`): a space before each
//! element unless the last literal was an opening bracket or the empty literal, none before
//! `,`, `)`, `]` and friends. The choice depends only on the format's text, so it is made
//! once here, when the format is read.
//!
//! [`PropKind`]: super::PropKind

mod parse;
mod print;

use super::{OpSpec, PropKind};

/// What a `type(...)` directive names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TypeOf {
    Operand(usize),
    Result(usize),
    Operands,
    Results,
}

/// What decides whether an optional group is present.
#[derive(Clone, Copy, Debug)]
enum Anchor {
    Prop(usize),
    Operand(usize),
}

/// One element of a read format; `space` says whether a space is printed before it.
#[derive(Clone, Debug)]
enum Element {
    Literal { text: &'static str, space: bool },
    Operand { group: usize, space: bool },
    AllOperands { space: bool },
    Prop { index: usize, space: bool },
    Type { of: TypeOf, space: bool },
    AttrDict,
    Optional { anchor: Anchor, then: Vec<Element> },
}

/// A read assembly format.
#[derive(Clone, Debug)]
pub struct Format {
    spec: OpSpec,
    elements: Vec<Element>,
    /// The properties the format writes itself, left out of `attr-dict`.
    elided: Vec<&'static str>,
}

/// MLIR's spacing state while reading a format: whether the next element wants a space, and
/// whether the last element was punctuation.
struct Spacing {
    emit_space: bool,
    last_was_punctuation: bool,
}

impl Spacing {
    /// A literal: no space before closing punctuation and commas; none after an opening one.
    fn literal(&mut self, text: &str) -> bool {
        if text.is_empty() {
            self.emit_space = false;
            self.last_was_punctuation = true;
            return false;
        }
        let first = text.as_bytes()[0];
        let wants = if text.len() != 1 && text != "->" {
            true
        } else if self.last_was_punctuation {
            !b">)}],".contains(&first)
        } else {
            !b"<>(){}[],".contains(&first)
        };
        let space = self.emit_space && wants;
        self.emit_space = text.len() != 1 || !b"<({[".contains(&first);
        self.last_was_punctuation = first != b'_' && !first.is_ascii_alphabetic();
        space
    }

    /// Any other element.
    fn element(&mut self) -> bool {
        let space = self.emit_space || !self.last_was_punctuation;
        self.emit_space = true;
        self.last_was_punctuation = false;
        space
    }
}

/// Reads `text` against the op's declarations.
pub fn compile(text: &'static str, spec: OpSpec) -> Result<Format, String> {
    let mut reader = Reader {
        text,
        pos: 0,
        spec,
        spacing: Spacing {
            emit_space: true,
            last_was_punctuation: false,
        },
        elided: Vec::new(),
        anchor: None,
    };
    let elements = reader.elements(false)?;
    if reader.anchor.is_some() {
        return Err(reader.error("an anchor outside an optional group"));
    }
    Ok(Format {
        spec,
        elements,
        elided: reader.elided,
    })
}

struct Reader {
    text: &'static str,
    pos: usize,
    spec: OpSpec,
    spacing: Spacing,
    elided: Vec<&'static str>,
    /// The anchor of the optional group being read.
    anchor: Option<Anchor>,
}

impl Reader {
    fn rest(&self) -> &'static str {
        &self.text[self.pos..]
    }

    fn skip_spaces(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start().len();
    }

    fn error(&self, what: &str) -> String {
        format!("format `{}` at {}: {what}", self.text, self.pos)
    }

    /// Elements up to the end, or up to `)` inside an optional group.
    fn elements(&mut self, in_group: bool) -> Result<Vec<Element>, String> {
        let mut out = Vec::new();
        loop {
            self.skip_spaces();
            let rest = self.rest();
            if rest.is_empty() {
                return match in_group {
                    true => Err(self.error("unclosed optional group")),
                    false => Ok(out),
                };
            }
            if rest.starts_with(')') {
                return match in_group {
                    true => Ok(out),
                    false => Err(self.error("unmatched ')'")),
                };
            }
            out.push(self.element()?);
        }
    }

    fn element(&mut self) -> Result<Element, String> {
        let rest = self.rest();
        if let Some(body) = rest.strip_prefix('`') {
            let end = body
                .find('`')
                .ok_or_else(|| self.error("unclosed literal"))?;
            let text = &body[..end];
            self.pos += end + 2;
            let space = self.spacing.literal(text);
            return Ok(Element::Literal { text, space });
        }
        if rest.starts_with('(') {
            self.pos += 1;
            let outer = self.anchor.take();
            let then = self.elements(true)?;
            self.pos += 1;
            if !self.rest().starts_with('?') {
                return Err(self.error("expected '?' after an optional group"));
            }
            self.pos += 1;
            let anchor = std::mem::replace(&mut self.anchor, outer);
            let anchor = anchor.ok_or_else(|| self.error("a group needs an anchor"))?;
            return Ok(Element::Optional { anchor, then });
        }
        if let Some(after) = rest.strip_prefix("attr-dict") {
            self.pos = self.text.len() - after.len();
            self.spacing.last_was_punctuation = false;
            return Ok(Element::AttrDict);
        }
        if let Some(after) = rest.strip_prefix("operands") {
            self.pos = self.text.len() - after.len();
            let space = self.spacing.element();
            return Ok(Element::AllOperands { space });
        }
        if let Some(after) = rest.strip_prefix("type(") {
            let end = after
                .find(')')
                .ok_or_else(|| self.error("unclosed type("))?;
            let of = match &after[..end] {
                "operands" => TypeOf::Operands,
                "results" => TypeOf::Results,
                name => {
                    let name = name.strip_prefix('$').unwrap_or(name);
                    match (self.spec.operand_group(name), self.spec.result_group(name)) {
                        (Some(g), _) => TypeOf::Operand(g),
                        (None, Some(g)) => TypeOf::Result(g),
                        _ => return Err(self.error(&format!("no operand or result '{name}'"))),
                    }
                }
            };
            self.pos += "type(".len() + end + 1;
            let space = self.spacing.element();
            return self.anchored(Element::Type { of, space });
        }
        if let Some(after) = rest.strip_prefix('$') {
            let len = after
                .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .unwrap_or(after.len());
            let name = &after[..len];
            self.pos += 1 + len;
            let space = self.spacing.element();
            let element = if let Some(group) = self.spec.operand_group(name) {
                Element::Operand { group, space }
            } else if let Some(index) = self.spec.props.iter().position(|p| p.name == name) {
                self.elided.push(self.spec.props[index].name);
                Element::Prop { index, space }
            } else {
                return Err(self.error(&format!("no operand or property '{name}'")));
            };
            return self.anchored(element);
        }
        Err(self.error("unknown element"))
    }

    /// Consumes a `^` after an element, making it the anchor of the group being read.
    fn anchored(&mut self, element: Element) -> Result<Element, String> {
        if self.rest().starts_with('^') {
            self.pos += 1;
            let anchor = match element {
                Element::Prop { index, .. } => Anchor::Prop(index),
                Element::Operand { group, .. }
                | Element::Type {
                    of: TypeOf::Operand(group),
                    ..
                } => Anchor::Operand(group),
                _ => return Err(self.error("this element cannot be an anchor")),
            };
            if self.anchor.replace(anchor).is_some() {
                return Err(self.error("a group has one anchor"));
            }
        }
        Ok(element)
    }
}

impl Format {
    fn prop_kind(&self, index: usize) -> (&'static str, PropKind) {
        let p = &self.spec.props[index];
        (p.name, p.kind)
    }
}
