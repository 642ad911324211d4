//! Attributes: builtin attributes, dense elements and arrays, dictionaries, indexing
//! maps (`#xla_gpu.indexing_map<"...">`, located back into the source), nested layouts
//! (`#xla_gpu.nested_layout<...>`, seed 004).

use super::*;
use crate::types::NarrowFloat;
use indexing::nested_layout::NestedLayout;

impl<'a> Parser<'a> {
    /// Parses an attribute value.
    pub fn parse_attribute(&mut self) -> DResult<Attribute> {
        self.nested(Self::parse_attribute_here)
    }

    pub(super) fn parse_attribute_here(&mut self) -> DResult<Attribute> {
        let loc = self.loc();
        match self.peek() {
            Token::Bare("unit") => {
                self.bump();
                Ok(Attribute::Unit)
            }
            Token::Bare("true") => {
                self.bump();
                Ok(Attribute::Bool(true))
            }
            Token::Bare("false") => {
                self.bump();
                Ok(Attribute::Bool(false))
            }
            Token::Bare("dense") => {
                self.bump();
                self.parse_dense()
            }
            Token::Bare("array") => {
                self.bump();
                self.parse_dense_array()
            }
            Token::Bare(kw @ ("affine_map" | "affine_set" | "loc")) => {
                self.bump();
                let body = self.parse_balanced()?;
                Ok(Attribute::Opaque(format!("{kw}{body}")))
            }
            Token::Bare(s) if is_type_keyword(s) => Ok(Attribute::Type(self.parse_type()?)),
            Token::Bare(s) => Err(self.error_at(loc, format!("unknown attribute '{s}'"))),
            Token::Punct(b'-') | Token::Int(_) | Token::Float(_) => self.parse_number_attr(),
            Token::Str(_) => Ok(Attribute::String(self.parse_string()?)),
            Token::Punct(b'[') => {
                self.bump();
                let mut items = Vec::new();
                if !self.parse_optional_punct(b']') {
                    loop {
                        items.push(self.parse_attribute()?);
                        if !self.parse_optional_punct(b',') {
                            break;
                        }
                    }
                    self.parse_punct(b']')?;
                }
                Ok(Attribute::Array(items))
            }
            Token::Punct(b'{') => {
                let mut entries = Vec::new();
                self.parse_dict_into(&mut entries)?;
                Ok(Attribute::Dict(entries))
            }
            Token::At(_) | Token::AtString(_) => {
                let root = self.parse_symbol_name()?;
                let mut nested = Vec::new();
                while self.src[self.pos..].starts_with("::") {
                    self.pos += 2;
                    nested.push(self.parse_symbol_name()?);
                }
                Ok(Attribute::Symbol(SymbolRef { root, nested }))
            }
            Token::Hash(name) => {
                self.bump();
                if super::xla_spelling::is_indexing_map(name) {
                    return self.parse_indexing_map_body();
                }
                if matches!(
                    name,
                    "xla_gpu.nested_layout" | "iree_vector_ext.nested_layout"
                ) {
                    return self.parse_nested_layout_body(name, loc);
                }
                if let Some(a) = self.attr_aliases.get(name) {
                    return Ok(a.clone());
                }
                if !name.contains('.') && self.src.as_bytes().get(self.pos) != Some(&b'<') {
                    return Err(self.error_at(loc, format!("undefined symbol alias id '{name}'")));
                }
                let mut text = format!("#{name}");
                if self.src.as_bytes().get(self.pos) == Some(&b'<') {
                    text.push_str(self.parse_balanced()?);
                }
                Ok(Attribute::Opaque(text))
            }
            Token::Bang(_) | Token::Punct(b'(') => Ok(Attribute::Type(self.parse_type()?)),
            _ => Err(self.expected("attribute value")),
        }
    }

    /// After `#xla_gpu.indexing_map`: `<"text" "more text" ...>`. Adjacent strings
    /// concatenate (the seed splits long maps over lines). The text is parsed by
    /// [`IndexingMap::parse`]; its errors point at the offending character inside the string
    /// literal, or at the literal's opening quote when escapes make the literal's bytes differ
    /// from the text's.
    pub(super) fn parse_indexing_map_body(&mut self) -> DResult<Attribute> {
        self.parse_punct(b'<')?;
        let mut text = String::new();
        let mut pieces = Vec::new();
        while let Token::Str(raw) = self.peek() {
            let (_, _, quote, _) = self.peek_full();
            pieces.push(MapPiece {
                text_start: text.len(),
                quote,
                verbatim: !raw.contains('\\'),
            });
            text.push_str(&self.parse_string()?);
        }
        if pieces.is_empty() {
            return Err(self.expected("string"));
        }
        self.parse_punct(b'>')?;
        match IndexingMap::parse(&text) {
            Ok(map) => Ok(Attribute::indexing_map(map)),
            Err(e) => {
                let loc = self.loc_of(MapPiece::source_offset(&pieces, e.offset));
                Err(self.error_at(loc, format!("invalid indexing map: {}", e.message)))
            }
        }
    }

    /// After `#xla_gpu.nested_layout` (or the seed's `#iree_vector_ext.nested_layout`): the
    /// `<...>` body, parsed and verified by [`NestedLayout`] (errors at the offending
    /// character, or at the `#` for a rule the values break), kept as its canonical text
    /// (`#xla_gpu.nested_layout<...>`), which prints back the same.
    pub(super) fn parse_nested_layout_body(&mut self, name: &str, at: Loc) -> DResult<Attribute> {
        if self.src.as_bytes().get(self.pos) != Some(&b'<') {
            return Err(self.expected("'<'"));
        }
        let body_start = lexer::skip_trivia(self.src.as_bytes(), self.pos);
        let body = self.parse_balanced()?;
        let prefix = format!("#{name}");
        let text = format!("{prefix}{body}");
        let layout = NestedLayout::parse(&text).map_err(|e| {
            let offset = body_start + e.offset.saturating_sub(prefix.len());
            let loc = self.loc_of(offset);
            self.error_at(loc, format!("invalid nested layout: {}", e.message))
        })?;
        layout
            .verify(None, None)
            .map_err(|e| self.error_at(at, format!("invalid nested layout: {e}")))?;
        Ok(Attribute::Opaque(layout.to_string()))
    }

    /// `[-]literal [: type]`
    pub(super) fn parse_number_attr(&mut self) -> DResult<Attribute> {
        let loc = self.loc();
        let neg = self.parse_optional_punct(b'-');
        let tok = self.bump();
        let ty = if self.parse_optional_punct(b':') {
            Some(self.parse_type()?)
        } else {
            None
        };
        match tok {
            Token::Float(text) => {
                let ty = ty.unwrap_or(Type::F64);
                if let Some(format) = ty.narrow_float() {
                    let v = self.narrow_literal(format, neg, text, ty, loc)?;
                    return Ok(Attribute::Float(FloatValue(v), ty));
                }
                let kind = ty.float_kind().ok_or_else(|| {
                    self.error_at(loc, "floating point value not valid for specified type")
                })?;
                let v = float::parse_decimal(kind, text)
                    .ok_or_else(|| self.error_at(loc, "invalid floating point literal"))?;
                Ok(Attribute::Float(FloatValue(if neg { -v } else { v }), ty))
            }
            Token::Int(text) => {
                let ty = ty.unwrap_or(Type::I64);
                if let Some(format) = ty.narrow_float() {
                    let v = self.narrow_bits(format, neg, text, loc)?;
                    return Ok(Attribute::Float(FloatValue(v), ty));
                }
                if let Some(kind) = ty.float_kind() {
                    let v =
                        float::from_bits(kind, self.hex_float_bits(text, neg, kind.width(), loc)?);
                    return Ok(Attribute::Float(FloatValue(v), ty));
                }
                let v = parse_signed_int_literal(neg, text).ok_or_else(|| {
                    self.error_at(loc, "integer constant out of range for attribute")
                })?;
                check_int_fits(v, ty).map_err(|e| self.error_at(loc, e))?;
                Ok(Attribute::int(v, ty))
            }
            _ => Err(self.error_at(loc, "expected integer or floating point literal")),
        }
    }

    /// A decimal literal of a float format of 8 bits or fewer: its nearest value.
    fn narrow_literal(
        &self,
        format: NarrowFloat,
        neg: bool,
        text: &str,
        ty: Type,
        loc: Loc,
    ) -> DResult<f64> {
        let v = text
            .parse::<f64>()
            .map_err(|_| self.error_at(loc, "invalid floating point literal"))?;
        format.round(if neg { -v } else { v }).ok_or_else(|| {
            self.error_at(loc, format!("float literal out of range for type '{ty}'"))
        })
    }

    /// A hexadecimal literal of a float format of 8 bits or fewer: the value of its bit
    /// pattern.
    fn narrow_bits(&self, format: NarrowFloat, neg: bool, text: &str, loc: Loc) -> DResult<f64> {
        Ok(format.value_of_bits(self.hex_float_bits(text, neg, format.width(), loc)?))
    }

    /// The bit pattern a float literal of a `width`-bit type spells in hexadecimal. As in
    /// MLIR, a decimal integer is no float literal and a bit pattern takes no sign.
    fn hex_float_bits(&self, text: &str, neg: bool, width: u32, loc: Loc) -> DResult<u64> {
        if neg && text.starts_with("0x") {
            return Err(self.error_at(
                loc,
                "hexadecimal float literal should not have a leading minus",
            ));
        }
        if !text.starts_with("0x") {
            return Err(self.error_at(
                loc,
                "unexpected decimal integer literal for a floating point value",
            ));
        }
        parse_int_literal(text)
            .filter(|&b| b >= 0 && b < 1i128 << width)
            .map(|b| b as u64)
            .ok_or_else(|| self.error_at(loc, "hexadecimal float constant out of range for type"))
    }

    /// After `dense`: `<literal> : type`.
    pub(super) fn parse_dense(&mut self) -> DResult<Attribute> {
        self.parse_punct(b'<')?;
        let loc = self.loc();
        enum Lit<'s> {
            None,
            Splat(Scalar0<'s>),
            List(Vec<Scalar0<'s>>, Vec<i64>),
            Hex(String),
        }
        let lit = if let Token::Str(_) = self.peek() {
            Lit::Hex(self.parse_string()?)
        } else if self.peek() == Token::Punct(b'>') {
            Lit::None
        } else if self.peek() == Token::Punct(b'[') {
            let mut values = Vec::new();
            let shape = self.parse_dense_list(&mut values)?;
            Lit::List(values, shape)
        } else {
            Lit::Splat(self.parse_dense_scalar()?)
        };
        self.parse_punct(b'>')?;
        self.parse_punct(b':')?;
        let ty_loc = self.loc();
        let ty = self.parse_type()?;
        let (Some(shape), Some(elem)) = (ty.shape(), ty.element_type()) else {
            return Err(self.error_at(ty_loc, "elements literal must be a shaped type"));
        };
        let convert =
            |p: &Self, s: Scalar0<'a>| -> DResult<Scalar> { p.dense_scalar(s, elem, loc) };
        match lit {
            Lit::None => {
                if ty.num_elements() != Some(0) {
                    return Err(self.error_at(loc, "expected non-empty elements literal"));
                }
                Ok(Attribute::Dense {
                    ty,
                    values: DenseValues::Elements(Vec::new()),
                })
            }
            Lit::Splat(s) => Ok(Attribute::dense_splat(ty, convert(self, s)?)),
            Lit::Hex(hex) => {
                let values = attrs::decode_dense_hex(&hex, elem)
                    .ok_or_else(|| self.error_at(loc, "invalid hex data for the elements type"))?;
                match values.len() {
                    1 => Ok(Attribute::dense_splat(ty, values[0])),
                    n if Some(n as i64) == ty.num_elements() => Ok(Attribute::dense(ty, values)),
                    n => Err(self.error_at(
                        loc,
                        format!(
                            "elements hex data size is invalid for provided type: {n} elements"
                        ),
                    )),
                }
            }
            Lit::List(values, lit_shape) => {
                if lit_shape != shape {
                    let fmt =
                        |s: &[i64]| s.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
                    return Err(self.error_at(
                        loc,
                        format!(
                            "inferred shape of elements literal ([{}]) does not match type ([{}])",
                            fmt(&lit_shape),
                            fmt(shape)
                        ),
                    ));
                }
                let values = values
                    .into_iter()
                    .map(|s| convert(self, s))
                    .collect::<DResult<Vec<_>>>()?;
                Ok(Attribute::dense(ty, values))
            }
        }
    }

    pub(super) fn parse_dense_list(&mut self, values: &mut Vec<Scalar0<'a>>) -> DResult<Vec<i64>> {
        self.parse_punct(b'[')?;
        let mut count = 0i64;
        let mut inner: Option<Vec<i64>> = None;
        if !self.parse_optional_punct(b']') {
            loop {
                let loc = self.loc();
                let shape = if self.peek() == Token::Punct(b'[') {
                    self.nested(|p| p.parse_dense_list(values))?
                } else {
                    values.push(self.parse_dense_scalar()?);
                    Vec::new()
                };
                match &inner {
                    None => inner = Some(shape),
                    Some(s) if *s != shape => {
                        return Err(self.error_at(
                            loc,
                            "tensor literal is invalid; ranks are not consistent between elements",
                        ));
                    }
                    Some(_) => {}
                }
                count += 1;
                if !self.parse_optional_punct(b',') {
                    break;
                }
            }
            self.parse_punct(b']')?;
        }
        let mut shape = vec![count];
        shape.extend(inner.unwrap_or_default());
        Ok(shape)
    }

    pub(super) fn parse_dense_scalar(&mut self) -> DResult<Scalar0<'a>> {
        let loc = self.loc();
        match self.peek() {
            Token::Bare("true") => {
                self.bump();
                Ok(Scalar0::Bool(true, loc))
            }
            Token::Bare("false") => {
                self.bump();
                Ok(Scalar0::Bool(false, loc))
            }
            _ => {
                let neg = self.parse_optional_punct(b'-');
                match self.bump() {
                    Token::Int(t) => Ok(Scalar0::Int(neg, t, loc)),
                    Token::Float(t) => Ok(Scalar0::Float(neg, t, loc)),
                    _ => Err(self.error_at(loc, "expected element literal of primitive type")),
                }
            }
        }
    }

    pub(super) fn dense_scalar(&self, s: Scalar0<'a>, elem: Type, _loc: Loc) -> DResult<Scalar> {
        if let Some(format) = elem.narrow_float() {
            return match s {
                Scalar0::Float(neg, t, loc) => self
                    .narrow_literal(format, neg, t, elem, loc)
                    .map(|v| Scalar::Float(FloatValue(v))),
                Scalar0::Int(neg, t, loc) if t.starts_with("0x") => self
                    .narrow_bits(format, neg, t, loc)
                    .map(|v| Scalar::Float(FloatValue(v))),
                Scalar0::Int(neg, t, loc) => self
                    .narrow_literal(format, neg, t, elem, loc)
                    .map(|v| Scalar::Float(FloatValue(v))),
                Scalar0::Bool(_, loc) => Err(self.error_at(
                    loc,
                    format!("expected i1 type for 'true' or 'false' values, got '{elem}'"),
                )),
            };
        }
        match (s, elem.float_kind()) {
            (Scalar0::Bool(b, loc), _) => {
                if elem != Type::I1 {
                    return Err(self.error_at(
                        loc,
                        format!("expected i1 type for 'true' or 'false' values, got '{elem}'"),
                    ));
                }
                Ok(Scalar::Int(b as i128))
            }
            (Scalar0::Float(neg, t, loc), Some(kind)) => {
                let v = float::parse_decimal(kind, t)
                    .ok_or_else(|| self.error_at(loc, "invalid floating point literal"))?;
                Ok(Scalar::Float(FloatValue(if neg { -v } else { v })))
            }
            (Scalar0::Int(neg, t, loc), Some(kind)) => {
                // Integers in float tensors: hex is a bit pattern, decimal is converted.
                if t.starts_with("0x") {
                    let bits = self.hex_float_bits(t, neg, kind.width(), loc)?;
                    return Ok(Scalar::Float(FloatValue(float::from_bits(kind, bits))));
                }
                let v = parse_int_literal(t)
                    .ok_or_else(|| self.error_at(loc, "integer literal out of range"))?;
                let f = float::round_to(kind, v as f64);
                Ok(Scalar::Float(FloatValue(if neg { -f } else { f })))
            }
            (Scalar0::Int(neg, t, loc), None) => {
                if !elem.is_signless_int_or_index() && !elem.is_integer() {
                    return Err(self.error_at(
                        loc,
                        format!("expected integer elements, but parsed type '{elem}'"),
                    ));
                }
                let v = parse_signed_int_literal(neg, t)
                    .ok_or_else(|| self.error_at(loc, "integer literal out of range"))?;
                check_int_fits(v, elem).map_err(|e| self.error_at(loc, e))?;
                Ok(Scalar::Int(attrs::normalize_int(v, elem)))
            }
            (Scalar0::Float(_, _, loc), None) => Err(self.error_at(
                loc,
                format!("expected integer elements, but parsed floating-point for type '{elem}'"),
            )),
        }
    }

    /// After `array`: `<type[: values]>`.
    pub(super) fn parse_dense_array(&mut self) -> DResult<Attribute> {
        self.parse_punct(b'<')?;
        let elem = self.parse_type()?;
        let mut values = Vec::new();
        if self.parse_optional_punct(b':') {
            loop {
                let s = self.parse_dense_scalar()?;
                values.push(self.dense_scalar(s, elem, Loc::UNKNOWN)?);
                if !self.parse_optional_punct(b',') {
                    break;
                }
            }
        }
        self.parse_punct(b'>')?;
        Ok(Attribute::DenseArray { elem, values })
    }

    pub(super) fn parse_dict_into(&mut self, entries: &mut Vec<NamedAttr>) -> DResult<()> {
        self.parse_punct(b'{')?;
        if !self.parse_optional_punct(b'}') {
            loop {
                let loc = self.loc();
                let name = match self.bump() {
                    Token::Bare(s) => *self.idents.entry(s).or_insert_with(|| Ident::new(s)),
                    Token::Str(raw) => {
                        Ident::new(&lexer::unescape(raw).map_err(|e| self.error_at(loc, e))?)
                    }
                    _ => return Err(self.error_at(loc, "expected attribute name")),
                };
                let value = if self.parse_optional_punct(b'=') {
                    self.parse_attribute()?
                } else {
                    Attribute::Unit
                };
                if entries.iter().any(|e| e.name == name) {
                    return Err(self.error_at(
                        loc,
                        format!("duplicate key '{name}' in dictionary attribute"),
                    ));
                }
                entries.push(NamedAttr { name, value });
                if !self.parse_optional_punct(b',') {
                    break;
                }
            }
            self.parse_punct(b'}')?;
        }
        attrs::sort_named(entries);
        Ok(())
    }

    /// Parses `{name = value, ...}` into `entries` if a `{` is next.
    pub fn parse_optional_attr_dict(&mut self, entries: &mut Vec<NamedAttr>) -> DResult<()> {
        if self.peek() == Token::Punct(b'{') {
            let mut parsed = Vec::new();
            self.parse_dict_into(&mut parsed)?;
            for e in parsed {
                attrs::set_named(entries, e.name, e.value);
            }
        }
        Ok(())
    }

    /// Parses `attributes {..}` if the keyword is next.
    pub fn parse_optional_attr_dict_with_keyword(
        &mut self,
        entries: &mut Vec<NamedAttr>,
    ) -> DResult<()> {
        if self.parse_optional_keyword("attributes") {
            if self.peek() != Token::Punct(b'{') {
                return Err(self.expected("'{'"));
            }
            self.parse_optional_attr_dict(entries)?;
        }
        Ok(())
    }
}

/// One string literal of an indexing map attribute: where its text starts in the
/// concatenated map text and where its opening quote is in the source.
pub(super) struct MapPiece {
    text_start: usize,
    quote: usize,
    /// No escapes: the literal's bytes are the text's bytes.
    verbatim: bool,
}

impl MapPiece {
    /// The source offset of byte `offset` of the concatenated text.
    pub(super) fn source_offset(pieces: &[MapPiece], offset: usize) -> usize {
        let at = pieces.partition_point(|p| p.text_start <= offset).max(1) - 1;
        let piece = &pieces[at];
        if piece.verbatim {
            piece.quote + 1 + (offset - piece.text_start)
        } else {
            piece.quote
        }
    }
}

/// A dense literal element before its element type is known.
#[derive(Clone, Copy)]
pub(super) enum Scalar0<'a> {
    Bool(bool, Loc),
    Int(bool, &'a str, Loc),
    Float(bool, &'a str, Loc),
}

/// Parses a decimal or `0x` hex integer literal.
pub(super) fn parse_int_literal(text: &str) -> Option<i128> {
    if let Some(hex) = text.strip_prefix("0x") {
        u128::from_str_radix(hex, 16)
            .ok()
            .and_then(|v| i128::try_from(v).ok())
    } else {
        text.parse().ok()
    }
}

/// A decimal or `0x` hex integer literal after an optional `-`: the magnitude is read in
/// 128 bits first, so that `-2^127` (an `i128`'s minimum, which MLIR prints) is read; a hex
/// literal may be any 128-bit pattern.
pub(super) fn parse_signed_int_literal(neg: bool, text: &str) -> Option<i128> {
    let magnitude: u128 = match text.strip_prefix("0x") {
        Some(hex) => u128::from_str_radix(hex, 16).ok()?,
        None => text.parse().ok()?,
    };
    match (neg, i128::try_from(magnitude)) {
        (false, Ok(v)) => Some(v),
        (false, Err(_)) if text.starts_with("0x") => Some(magnitude as i128),
        (true, _) if magnitude <= 1u128 << 127 => Some(0i128.wrapping_sub(magnitude as i128)),
        _ => None,
    }
}

/// Whether `v` fits `ty` (as a signed or unsigned value of its width).
pub(super) fn check_int_fits(v: i128, ty: Type) -> Result<(), String> {
    let width = match ty.kind() {
        TypeKind::Index => 64,
        TypeKind::Int { width, .. } => *width,
        _ => {
            return Err(format!(
                "integer literal not valid for specified type '{ty}'"
            ));
        }
    };
    if width >= 127 {
        return Ok(());
    }
    let min = -(1i128 << (width.max(1) - 1));
    let max = (1i128 << width) - 1;
    let (min, max) = match ty.kind() {
        TypeKind::Int {
            signedness: Signedness::Unsigned,
            ..
        } => (0, max),
        TypeKind::Int {
            signedness: Signedness::Signed,
            ..
        } => (min, (1i128 << (width - 1)) - 1),
        _ if width == 1 => (-1, 1),
        _ => (min, max),
    };
    if v < min || v > max {
        return Err("integer constant out of range for attribute".into());
    }
    Ok(())
}
