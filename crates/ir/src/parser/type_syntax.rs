//! Types: MLIR's builtin types and the llvm dialect's, in the forms MLIR 22 prints.

use super::*;
use crate::types;
use crate::types::{NarrowFloat, TypeKind};

impl<'a> Parser<'a> {
    /// Parses a type.
    pub fn parse_type(&mut self) -> DResult<Type> {
        self.nested(Self::parse_type_here)
    }

    /// Runs `parse` one nesting level deeper (a type or attribute inside another), or fails
    /// past [`MAX_NESTING`] levels: types and attributes parse recursively.
    pub(super) fn nested<T>(&mut self, parse: impl FnOnce(&mut Self) -> DResult<T>) -> DResult<T> {
        if self.nesting >= MAX_NESTING {
            return Err(self.error(format!(
                "types or attributes nested deeper than {MAX_NESTING} levels"
            )));
        }
        self.nesting += 1;
        let result = parse(self);
        self.nesting -= 1;
        result
    }

    pub(super) fn parse_type_here(&mut self) -> DResult<Type> {
        let loc = self.loc();
        match self.peek() {
            Token::Bare(s) => {
                self.bump();
                match s {
                    "index" => Ok(Type::INDEX),
                    "none" => Ok(Type::NONE),
                    "f16" => Ok(Type::F16),
                    "bf16" => Ok(Type::BF16),
                    "f32" => Ok(Type::F32),
                    "f64" => Ok(Type::F64),
                    s if NarrowFloat::from_keyword(s).is_some() => Ok(Type::get(
                        TypeKind::NarrowFloat(NarrowFloat::from_keyword(s).expect("checked")),
                    )),
                    "complex" => {
                        self.parse_punct(b'<')?;
                        let part_loc = self.loc();
                        let part = self.parse_type()?;
                        if !part.is_float() {
                            return Err(self.error_at(
                                part_loc,
                                format!("invalid element type for complex: '{part}'"),
                            ));
                        }
                        self.parse_punct(b'>')?;
                        Ok(Type::complex(part))
                    }
                    "tensor" | "vector" => {
                        self.parse_punct(b'<')?;
                        let (shape, elem) = self.parse_shape_and_element()?;
                        if s == "vector"
                            && let Some(&d) = shape.iter().find(|&&d| d <= 0)
                        {
                            let d = if d == DYNAMIC {
                                "?".to_string()
                            } else {
                                d.to_string()
                            };
                            return Err(self.error_at(
                                loc,
                                format!(
                                    "vector types must have positive constant sizes but got {d}"
                                ),
                            ));
                        }
                        if !within_size_limit(&shape, elem) {
                            let t = if s == "tensor" {
                                Type::tensor(&shape, elem)
                            } else {
                                Type::vector(&shape, elem)
                            };
                            return Err(self.error_at(
                                loc,
                                format!(
                                    "{s} type is too large: a shaped type must have fewer than 2^62 elements and bytes ('{t}')"
                                ),
                            ));
                        }
                        let t = if s == "tensor" {
                            self.parse_tensor_encoding(&shape, elem)?
                        } else {
                            Type::vector(&shape, elem)
                        };
                        self.parse_punct(b'>')?;
                        Ok(t)
                    }
                    "tuple" => {
                        self.parse_punct(b'<')?;
                        let mut types = Vec::new();
                        if !self.parse_optional_punct(b'>') {
                            types = self.parse_type_list()?;
                            self.parse_punct(b'>')?;
                        }
                        Ok(Type::tuple(&types))
                    }
                    _ => int_type_from_keyword(s)
                        .ok_or_else(|| self.error_at(loc, format!("unknown type '{s}'"))),
                }
            }
            Token::Bang(name) => {
                self.bump();
                if name == "llvm.ptr" {
                    let bytes = self.src.as_bytes();
                    if bytes.get(lexer::skip_trivia(bytes, self.pos)) == Some(&b'<') {
                        self.parse_punct(b'<')?;
                        let space = self.parse_integer()?;
                        self.parse_punct(b'>')?;
                        let space = u32::try_from(space)
                            .map_err(|_| self.error_at(loc, "invalid address space"))?;
                        return Ok(Type::ptr(space));
                    }
                    return Ok(Type::PTR);
                }
                if let Some(&t) = self.type_aliases.get(name) {
                    return Ok(t);
                }
                if !name.contains('.') {
                    return Err(self.error_at(loc, format!("undefined symbol alias id '{name}'")));
                }
                let mut text = format!("!{name}");
                if self.src.as_bytes().get(self.pos) == Some(&b'<') {
                    let body = self.parse_balanced()?;
                    text.push_str(&self.expand_attr_aliases(body));
                }
                Ok(Type::opaque(&text))
            }
            Token::Punct(b'(') => {
                let (inputs, results) = self.parse_function_type_lists()?;
                Ok(Type::function(&inputs, &results))
            }
            _ => Err(self.expected("type")),
        }
    }

    /// After `tensor<` or `vector<`: `4x?x` dimensions and the element type.
    pub(super) fn parse_shape_and_element(&mut self) -> DResult<(Vec<i64>, Type)> {
        let bytes = self.src.as_bytes();
        let mut shape = Vec::new();
        loop {
            let pos = lexer::skip_trivia(bytes, self.pos);
            let dim = match bytes.get(pos) {
                Some(b'?') => {
                    self.pos = pos + 1;
                    DYNAMIC
                }
                Some(c) if c.is_ascii_digit() => {
                    let mut end = pos;
                    while bytes.get(end).is_some_and(u8::is_ascii_digit) {
                        end += 1;
                    }
                    let loc = self.loc_of(pos);
                    let d: i64 = self.src[pos..end]
                        .parse()
                        .map_err(|_| self.error_at(loc, "invalid dimension"))?;
                    self.pos = end;
                    d
                }
                _ => break,
            };
            if bytes.get(self.pos) != Some(&b'x') {
                let loc = self.loc_of(self.pos);
                return Err(self.error_at(loc, "expected 'x' in dimension list"));
            }
            self.pos += 1;
            shape.push(dim);
        }
        let elem = self.parse_type()?;
        Ok((shape, elem))
    }

    /// After a tensor's element type: the optional layout encoding `, #xla.layout<"{...}">`
    /// (see [`crate::types`]); the tensor type with it.
    pub(super) fn parse_tensor_encoding(&mut self, shape: &[i64], elem: Type) -> DResult<Type> {
        if !self.parse_optional_punct(b',') {
            return Ok(Type::tensor(shape, elem));
        }
        if self.peek() == Token::Bare("dense") {
            return self.parse_minor_to_major_encoding(shape, elem);
        }
        if self.peek() == Token::Hash(types::THREAD_LAYOUT_ATTR) {
            return self.parse_thread_layout(shape, elem);
        }
        if self.peek() != Token::Hash(types::LAYOUT_ATTR) {
            let want = format!("tensor encoding '#{}<\"...\">'", types::LAYOUT_ATTR);
            return Err(self.expected(&want));
        }
        self.bump();
        self.parse_punct(b'<')?;
        let loc = self.loc();
        let text = self.parse_string()?;
        self.parse_punct(b'>')?;
        types::parse_layout(&text)
            .and_then(|layout| Type::tensor_with_layout(shape, elem, &layout))
            .map_err(|e| self.error_at(loc, format!("invalid tensor layout: {e}")))
    }

    /// XLA's GPU encoding `#xla_gpu.layout<"shmem", "map">` ([`types::ThreadLayout`]); the
    /// map may be split into several strings, as XLA writes long maps.
    fn parse_thread_layout(&mut self, shape: &[i64], elem: Type) -> DResult<Type> {
        self.bump();
        self.parse_punct(b'<')?;
        let space_loc = self.loc();
        let memory_space = self.parse_string()?;
        if !["shmem", "registers"].contains(&memory_space.as_str()) {
            return Err(self.error_at(
                space_loc,
                format!(
                    "unknown memory space '{memory_space}' (XLA's are 'shmem' and 'registers')"
                ),
            ));
        }
        self.parse_punct(b',')?;
        let map_loc = self.loc();
        let mut text = self.parse_string()?;
        while matches!(self.peek(), Token::Str(_)) {
            text.push_str(&self.parse_string()?);
        }
        self.parse_punct(b'>')?;
        let map = indexing::IndexingMap::parse(&text)
            .map_err(|e| self.error_at(map_loc, format!("invalid indexing map: {e}")))?;
        let layout = types::ThreadLayout {
            memory_space,
            map: map.to_string(),
        };
        Ok(Type::tensor_with_thread_layout(shape, elem, layout))
    }

    /// XLA's spelling of a layout encoding: the minor-to-major order as a dense attribute,
    /// `dense<[1, 0]> : tensor<2xi64>`, read as `#xla.layout<"{1,0}">`.
    fn parse_minor_to_major_encoding(&mut self, shape: &[i64], elem: Type) -> DResult<Type> {
        let loc = self.loc();
        let order = match self.parse_attribute()? {
            Attribute::Dense {
                values: DenseValues::Elements(values),
                ..
            } => values
                .iter()
                .map(|v| v.as_int())
                .collect::<Option<Vec<_>>>(),
            // `[0, 0]` is kept as a splat: no order, but the layout's error says why.
            Attribute::Dense {
                values: DenseValues::Splat(v),
                ty,
            } if ty.num_elements().is_some_and(|n| n > 1) => {
                let n = ty.num_elements().unwrap_or(0) as usize;
                v.as_int().map(|v| vec![v; n])
            }
            _ => None,
        };
        let Some(order) = order else {
            return Err(self.error_at(
                loc,
                "expected a minor-to-major order `dense<[...]> : tensor<Nxi64>` as the encoding",
            ));
        };
        let text: Vec<String> = order.iter().map(i128::to_string).collect();
        types::parse_layout(&format!("{{{}}}", text.join(",")))
            .and_then(|layout| Type::tensor_with_layout(shape, elem, &layout))
            .map_err(|e| self.error_at(loc, format!("invalid tensor layout: {e}")))
    }

    /// Parses `t1, t2, ...` (at least one).
    pub fn parse_type_list(&mut self) -> DResult<Vec<Type>> {
        let mut out = vec![self.parse_type()?];
        while self.parse_optional_punct(b',') {
            out.push(self.parse_type()?);
        }
        Ok(out)
    }

    /// Parses `: type`.
    pub fn parse_colon_type(&mut self) -> DResult<Type> {
        self.parse_punct(b':')?;
        self.parse_type()
    }

    /// Parses `: t1, t2`.
    pub fn parse_colon_type_list(&mut self) -> DResult<Vec<Type>> {
        self.parse_punct(b':')?;
        self.parse_type_list()
    }

    /// Parses function results after `->`: `t` or `(t1, t2)` or `()`.
    pub fn parse_function_result_types(&mut self) -> DResult<Vec<Type>> {
        if self.peek() == Token::Punct(b'(') {
            // `(t1, t2)` or a function type `(a) -> b` as the single result.
            let save = self.pos;
            self.bump();
            if self.parse_optional_punct(b')') {
                if self.peek() == Token::Arrow {
                    self.pos = save;
                    self.peeked = None;
                    return Ok(vec![self.parse_type()?]);
                }
                return Ok(Vec::new());
            }
            let types = self.parse_type_list()?;
            self.parse_punct(b')')?;
            if self.peek() == Token::Arrow {
                self.pos = save;
                self.peeked = None;
                return Ok(vec![self.parse_type()?]);
            }
            return Ok(types);
        }
        Ok(vec![self.parse_type()?])
    }

    /// The body of an opaque dialect type with every `#alias` of an attribute replaced by
    /// the attribute: the type is kept as text, and the printer's aliases need not be the
    /// reader's (`!xla_gpu.indexed_vector<8xf32, #map>` must not come to name another map).
    fn expand_attr_aliases(&self, body: &str) -> String {
        let bytes = body.as_bytes();
        let (mut out, mut i) = (String::with_capacity(body.len()), 0);
        while i < bytes.len() {
            match bytes[i] {
                b'"' => {
                    let end = lexer::scan_string(bytes, i).unwrap_or(bytes.len());
                    out.push_str(&body[i..end]);
                    i = end;
                }
                b'#' => {
                    let end = (i + 1..bytes.len())
                        .find(|&j| {
                            !(bytes[j].is_ascii_alphanumeric() || b"_$.".contains(&bytes[j]))
                        })
                        .unwrap_or(bytes.len());
                    match self.attr_aliases.get(&body[i + 1..end]) {
                        Some(attr) => out.push_str(&attr.to_string()),
                        None => out.push_str(&body[i..end]),
                    }
                    i = end;
                }
                _ => {
                    let next = body[i..].chars().next().map_or(1, char::len_utf8);
                    out.push_str(&body[i..i + next]);
                    i += next;
                }
            }
        }
        out
    }

    /// Parses `-> results` if an arrow is next; no results otherwise.
    pub fn parse_optional_arrow_type_list(&mut self) -> DResult<Vec<Type>> {
        if self.parse_optional_arrow() {
            self.parse_function_result_types()
        } else {
            Ok(Vec::new())
        }
    }

    /// Parses `(inputs) -> results` into lists (without interning a function type).
    pub fn parse_function_type_lists(&mut self) -> DResult<(Vec<Type>, Vec<Type>)> {
        if self.peek() != Token::Punct(b'(') {
            return Err(self.expected("function type"));
        }
        self.bump();
        let mut inputs = Vec::new();
        if !self.parse_optional_punct(b')') {
            inputs = self.parse_type_list()?;
            self.parse_punct(b')')?;
        }
        self.parse_arrow()?;
        let results = self.parse_function_result_types()?;
        Ok((inputs, results))
    }

    /// Parses a function type `(inputs) -> results`.
    pub fn parse_function_type(&mut self) -> DResult<(Vec<Type>, Vec<Type>)> {
        let loc = self.loc();
        let t = self.parse_type()?;
        match t.function_parts() {
            Some((i, r)) => Ok((i.to_vec(), r.to_vec())),
            None => Err(self.error_at(loc, "expected function type")),
        }
    }

    // ----- attributes -----
}

pub(super) fn int_type_from_keyword(s: &str) -> Option<Type> {
    let (signedness, digits) = if let Some(d) = s.strip_prefix("si") {
        (Signedness::Signed, d)
    } else if let Some(d) = s.strip_prefix("ui") {
        (Signedness::Unsigned, d)
    } else if let Some(d) = s.strip_prefix('i') {
        (Signedness::Signless, d)
    } else {
        return None;
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.starts_with('0') {
        return None;
    }
    let width: u32 = digits.parse().ok().filter(|&w| w <= 1 << 24)?;
    Some(match signedness {
        Signedness::Signless => Type::int(width),
        s => Type::int_with_signedness(width, s),
    })
}

pub(super) fn is_type_keyword(s: &str) -> bool {
    matches!(
        s,
        "index"
            | "none"
            | "f16"
            | "bf16"
            | "f32"
            | "f64"
            | "complex"
            | "tensor"
            | "vector"
            | "tuple"
    ) || int_type_from_keyword(s).is_some()
        || NarrowFloat::from_keyword(s).is_some()
}

/// Shaped types obey the HLO front end's size limit ([`hlo::shape::ARRAY_SIZE_LIMIT`]):
/// fewer than 2^62 elements and bytes, so that the passes' element counts, byte sizes and
/// linear indices (flattening, lowering to pointers) fit in 64 bits. Dynamic dimensions
/// count as unknown.
pub(super) fn within_size_limit(shape: &[i64], elem: Type) -> bool {
    let limit = hlo::shape::ARRAY_SIZE_LIMIT;
    let bits = match elem.bit_width() {
        Some(bits) => bits.max(8),
        None if elem == Type::INDEX => 64,
        None => 8,
    };
    shape
        .iter()
        .filter(|&&d| d != DYNAMIC)
        .try_fold(1i64, |n, &d| n.checked_mul(d).filter(|&n| n < limit))
        .and_then(|elements| elements.checked_mul(i64::from(bits / 8)))
        .is_some_and(|bytes| bytes < limit)
}
