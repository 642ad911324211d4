//! Shapes (with layouts and tiles) and literals, read against their shapes.

use super::*;

impl<'a> Parser<'a> {
    pub(super) fn shape(&mut self) -> PResult<Shape> {
        if self.at(TokenKind::LParen) {
            return self.nested(|p| {
                Ok(Shape::Tuple(p.list(
                    TokenKind::LParen,
                    TokenKind::RParen,
                    Self::shape,
                )?))
            });
        }
        let token = self.peek();
        let element_type = (token.kind == TokenKind::Ident)
            .then(|| PrimitiveType::from_name(self.text_of(token)))
            .flatten()
            .ok_or_else(|| self.error_expected("a shape such as f32[2,3]"))?;
        self.bump();
        let mut dynamic_dims = Vec::new();
        let dims = self.list(TokenKind::LBracket, TokenKind::RBracket, |p| {
            if p.eat(TokenKind::Question).is_some() {
                dynamic_dims.push(true);
                return Ok(UNBOUNDED_SIZE);
            }
            let bounded = p.eat(TokenKind::LessEqual).is_some();
            dynamic_dims.push(bounded);
            p.non_negative_int("a dimension size")
        })?;
        if !dynamic_dims.contains(&true) {
            dynamic_dims.clear();
        }
        // A `{` after a shape opens a layout (`{1,0}`, `{:T(2)}`, `{}`), except after a
        // signature's result shape, where it opens the computation body.
        let opens_layout = self.at(TokenKind::LBrace)
            && matches!(
                self.peek_nth_kind(1),
                TokenKind::Int | TokenKind::Colon | TokenKind::RBrace
            );
        let layout = if opens_layout {
            Some(self.layout()?)
        } else {
            None
        };
        Ok(Shape::Array(ArrayShape {
            element_type,
            dims,
            dynamic_dims,
            layout,
        }))
    }

    /// `{1,0}` optionally followed by `:` and `T(2,2)(2,1)`, `L(n)`, `E(n)`, `S(n)` items.
    pub(super) fn layout(&mut self) -> PResult<Layout> {
        self.expect(TokenKind::LBrace)?;
        let mut layout = Layout::row_major(0);
        while self.at(TokenKind::Int) {
            layout
                .minor_to_major
                .push(self.non_negative_int("a layout dimension")?);
            if self.eat(TokenKind::Comma).is_none() {
                break;
            }
        }
        if self.eat(TokenKind::Colon).is_some() {
            while self.at(TokenKind::Ident) {
                let item = self.bump();
                let item_text = self.text_of(item);
                match item_text {
                    "T" => {
                        while self.at(TokenKind::LParen) {
                            let dims =
                                self.list(TokenKind::LParen, TokenKind::RParen, Self::tile_dim)?;
                            layout.tiles.push(Tile { dims });
                        }
                    }
                    "L" | "E" | "S" => {
                        self.expect(TokenKind::LParen)?;
                        let value = self.non_negative_int("a layout value")?;
                        self.expect(TokenKind::RParen)?;
                        match item_text {
                            "L" => layout.tail_padding_alignment_in_elements = value,
                            "E" => layout.element_size_in_bits = value,
                            _ => layout.memory_space = value,
                        }
                    }
                    other => {
                        return Err(Diagnostic::new(
                            item.span,
                            format!(
                                "unsupported: layout item '{other}' (this compiler reads T, L, E and S)"
                            ),
                        ));
                    }
                }
            }
        }
        self.expect(TokenKind::RBrace)?;
        Ok(layout)
    }

    pub(super) fn tile_dim(&mut self) -> PResult<i64> {
        if self.eat(TokenKind::Star).is_some() {
            return Ok(COMBINE_DIMENSION);
        }
        let span = self.peek().span;
        let size = self.int()?;
        if size <= 0 {
            return Err(Diagnostic::new(span, "a tile size must be positive"));
        }
        Ok(size)
    }

    // ---- literals -----------------------------------------------------------------------

    pub(super) fn literal(&mut self, shape: &Shape) -> PResult<Literal> {
        match shape {
            Shape::Tuple(elements) => {
                self.expect(TokenKind::LParen)?;
                let mut values = Vec::with_capacity(elements.len());
                for (i, element) in elements.iter().enumerate() {
                    if i > 0 {
                        self.expect(TokenKind::Comma)?;
                    }
                    values.push(self.nested(|p| p.literal(element))?);
                }
                self.expect(TokenKind::RParen)?;
                Ok(Literal::Tuple(values))
            }
            Shape::Array(array) => {
                if !array.element_type.is_array_element() || array.is_dynamic() {
                    return Err(self.error_expected(&format!("no literal for {shape}")));
                }
                let mut values = Vec::new();
                self.nested_values(array, 0, &mut values)?;
                Ok(Literal::Array(ArrayLiteral {
                    dims: array.dims.clone(),
                    values,
                }))
            }
        }
    }

    /// The values of dimensions `dim..` of an array literal, as nested `{...}`.
    pub(super) fn nested_values(
        &mut self,
        array: &ArrayShape,
        dim: usize,
        out: &mut Vec<Value>,
    ) -> PResult<()> {
        if dim == array.rank() {
            out.push(self.scalar_value(array.element_type)?);
            return Ok(());
        }
        let open = self.peek().span;
        let count = self
            .list(TokenKind::LBrace, TokenKind::RBrace, |p| {
                p.nested(|p| p.nested_values(array, dim + 1, out))
            })?
            .len();
        if count as i64 != array.dims[dim] {
            return Err(Diagnostic::new(
                self.span_from(open),
                format!(
                    "literal has {count} elements in dimension {dim}, the shape {} has {}",
                    Shape::Array(array.clone()),
                    array.dims[dim]
                ),
            ));
        }
        Ok(())
    }

    pub(super) fn scalar_value(&mut self, ty: PrimitiveType) -> PResult<Value> {
        let token = self.peek();
        let text = self.text_of(token);
        if ty == PrimitiveType::Pred {
            let value = match (token.kind, text) {
                (TokenKind::Ident, "true") | (TokenKind::Int, "1") => true,
                (TokenKind::Ident, "false") | (TokenKind::Int, "0") => false,
                _ => return Err(self.error_expected("true or false")),
            };
            self.bump();
            return Ok(Value::Pred(value));
        }
        if ty.is_int() {
            if token.kind != TokenKind::Int {
                return Err(self.error_expected(&format!("an integer for {ty}")));
            }
            let value: i128 = text
                .parse()
                .ok()
                .filter(|v| int_fits(*v, ty))
                .ok_or_else(|| {
                    Diagnostic::new(token.span, format!("{text} is out of range for {ty}"))
                })?;
            self.bump();
            return Ok(Value::Int(value));
        }
        if ty.is_complex() {
            self.expect(TokenKind::LParen)?;
            let re = self.float_value()?;
            self.expect(TokenKind::Comma)?;
            let im = self.float_value()?;
            self.expect(TokenKind::RParen)?;
            return Ok(Value::Complex(re, im));
        }
        Ok(Value::Float(self.float_value()?))
    }

    /// `1`, `-2.5e-3`, `inf`, `-inf`, `nan`, `-nan`.
    pub(super) fn float_value(&mut self) -> PResult<f64> {
        let negative = self.eat(TokenKind::Minus).is_some();
        let token = self.peek();
        let text = self.text_of(token);
        let value = match (token.kind, text) {
            (TokenKind::Int | TokenKind::Float, _) if !negative => text.parse().ok(),
            (TokenKind::Ident, "inf") => Some(f64::INFINITY),
            (TokenKind::Ident, "nan") => Some(f64::NAN),
            _ => None,
        };
        let value = value.ok_or_else(|| self.error_expected("a floating-point number"))?;
        self.bump();
        Ok(if negative { -value } else { value })
    }
}

fn int_fits(value: i128, ty: PrimitiveType) -> bool {
    let bits = ty.bit_width();
    if ty.is_signed_int() {
        let half = 1i128 << (bits - 1);
        (-half..half).contains(&value)
    } else {
        (0..(1i128 << bits)).contains(&value)
    }
}
