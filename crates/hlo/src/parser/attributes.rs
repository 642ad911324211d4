//! Attribute values: the structured ones the compiler reads (lists, slices, padding,
//! called computations, program shapes) and the rest kept as normalised text.

use super::*;

impl<'a> Parser<'a> {
    pub(super) fn push_attribute(&mut self, attributes: &mut Vec<Attribute>) -> PResult<()> {
        let start = self.peek().span;
        let name_token = self.peek();
        if name_token.kind != TokenKind::Ident {
            return Err(self.error_expected("an attribute name"));
        }
        let name = self.text_of(name_token).to_string();
        self.bump();
        if attributes.iter().any(|a: &Attribute| a.name == name) {
            return Err(Diagnostic::new(
                name_token.span,
                format!("duplicate attribute '{name}'"),
            ));
        }
        self.expect(TokenKind::Equal)?;
        let value = self.attribute_value(&name)?;
        attributes.push(Attribute {
            name,
            value,
            span: self.span_from(start),
        });
        Ok(())
    }

    pub(super) fn attribute_value(&mut self, name: &str) -> PResult<AttrValue> {
        Ok(match attr_kind(name) {
            AttrKind::Int => AttrValue::Int(self.int()?),
            AttrKind::Bool => {
                let value = match self.peek_text() {
                    "true" if self.at(TokenKind::Ident) => true,
                    "false" if self.at(TokenKind::Ident) => false,
                    _ => return Err(self.error_expected("true or false")),
                };
                self.bump();
                AttrValue::Bool(value)
            }
            AttrKind::IntList => {
                AttrValue::IntList(self.list(TokenKind::LBrace, TokenKind::RBrace, Self::int)?)
            }
            AttrKind::Enum(allowed) => {
                if !self.at(TokenKind::Ident) || !allowed.contains(&self.peek_text()) {
                    return Err(
                        self.error_expected(&format!("one of {} for '{name}'", allowed.join(", ")))
                    );
                }
                AttrValue::Enum(self.bump_text().to_string())
            }
            AttrKind::Str if self.at(TokenKind::Str) => {
                AttrValue::Str(lexer::unescape(self.bump_text()))
            }
            AttrKind::Str => return Err(self.error_expected("a string")),
            AttrKind::Computation => AttrValue::Computation(self.computation_ref()?),
            AttrKind::Computations if self.at(TokenKind::LBrace) => AttrValue::Computations(
                self.list(TokenKind::LBrace, TokenKind::RBrace, Self::computation_ref)?,
            ),
            AttrKind::Computations => AttrValue::Computation(self.computation_ref()?),
            AttrKind::Slice => AttrValue::Slice(self.list(
                TokenKind::LBrace,
                TokenKind::RBrace,
                Self::slice_dim,
            )?),
            AttrKind::Padding => AttrValue::Padding(self.padding()?),
            AttrKind::ProgramShape => self.program_shape()?,
            AttrKind::Raw if name == "backend_config" && self.at(TokenKind::Str) => {
                AttrValue::Str(lexer::unescape(self.bump_text()))
            }
            AttrKind::Raw => AttrValue::Raw(self.raw_value()?),
        })
    }

    pub(super) fn computation_ref(&mut self) -> PResult<ComputationRef> {
        let (name, span) = self.name("a computation name")?;
        Ok(ComputationRef {
            name,
            id: ComputationId(usize::MAX),
            span,
        })
    }

    /// `[start:limit]` or `[start:limit:stride]`.
    pub(super) fn slice_dim(&mut self) -> PResult<SliceDim> {
        self.expect(TokenKind::LBracket)?;
        let start = self.int()?;
        self.expect(TokenKind::Colon)?;
        let limit = self.int()?;
        let stride = if self.eat(TokenKind::Colon).is_some() {
            self.int()?
        } else {
            1
        };
        self.expect(TokenKind::RBracket)?;
        Ok(SliceDim {
            start,
            limit,
            stride,
        })
    }

    /// `lo_hi[_interior]` per dimension, joined by `x`: `0_0x1_2_1`.
    pub(super) fn padding(&mut self) -> PResult<Vec<PadDim>> {
        let token = self.peek();
        if !matches!(token.kind, TokenKind::Word | TokenKind::Int) {
            return Err(self.error_expected("padding such as 0_0x1_1"));
        }
        let text = self.text_of(token);
        let bad = || {
            Diagnostic::new(
                token.span,
                format!(
                    "malformed padding '{text}': expected low_high[_interior] per dimension, joined by 'x'"
                ),
            )
        };
        let mut dims = Vec::new();
        for dim in text.split('x') {
            let parts: Vec<i64> = dim
                .split('_')
                .map(|p| p.parse().map_err(|_| bad()))
                .collect::<PResult<_>>()?;
            match parts[..] {
                [low, high] => dims.push(PadDim {
                    low,
                    high,
                    interior: 0,
                }),
                [low, high, interior] => dims.push(PadDim {
                    low,
                    high,
                    interior,
                }),
                _ => return Err(bad()),
            }
        }
        self.bump();
        Ok(dims)
    }

    /// `{(f32[2]{0}, s32[])->f32[2]{0}}`
    pub(super) fn program_shape(&mut self) -> PResult<AttrValue> {
        self.expect(TokenKind::LBrace)?;
        let params = self.list(TokenKind::LParen, TokenKind::RParen, |p| {
            if p.peek_nth_kind(1) == TokenKind::Colon {
                p.name("a parameter name")?;
                p.bump();
            }
            p.shape()
        })?;
        self.expect(TokenKind::Arrow)?;
        let result = self.shape()?;
        self.expect(TokenKind::RBrace)?;
        Ok(AttrValue::ProgramShape(params, result))
    }

    /// An attribute value the compiler does not interpret: balanced groups and tokens
    /// written without a gap between them, up to the next `,` or the end of the block.
    /// Returned with whitespace normalised to single spaces and comments dropped.
    pub(super) fn raw_value(&mut self) -> PResult<String> {
        let first = self.taken;
        let mut depth = 0usize;
        let mut out = String::new();
        loop {
            // Tokens of one value are written together (`b01f_01io->b01f`,
            // `[2,4]<=[8]T(1,0)`); after a gap at depth 0, the next item begins.
            let gap = self.taken > first && self.prev_end != self.peek().span.start;
            match self.peek_kind() {
                TokenKind::Eof if depth > 0 => {
                    return Err(self.error_expected("the end of a bracketed attribute value"));
                }
                _ if depth == 0 && gap => break,
                TokenKind::LBrace | TokenKind::LBracket | TokenKind::LParen => depth += 1,
                TokenKind::RBrace | TokenKind::RBracket | TokenKind::RParen if depth > 0 => {
                    depth -= 1;
                }
                _ if depth > 0 => {}
                TokenKind::Eof
                | TokenKind::Comma
                | TokenKind::RBrace
                | TokenKind::RBracket
                | TokenKind::RParen => break,
                _ => {}
            }
            if gap {
                out.push(' ');
            }
            let token = self.bump();
            out.push_str(self.text_of(token));
        }
        if self.taken == first {
            return Err(self.error_expected("an attribute value"));
        }
        Ok(out)
    }

    // ---- shapes and layouts -------------------------------------------------------------
}
