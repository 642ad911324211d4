//! Parsing MLIR text (generic and custom forms) into a [`Module`].
//!
//! Errors are [`Diagnostic`]s with `file:line:col`; no input makes the parser panic. SSA names
//! are resolved like MLIR's parser: names are scoped by region within an isolated-from-above
//! op, redefinitions are errors, and a use before the definition creates a placeholder that
//! the definition replaces (so graph regions and multi-block CFGs parse); names still
//! undefined when the isolated scope ends are errors. Names other than MLIR's own numbering
//! (`%0`, `%arg3`) are kept as name hints, so `%thread_id_x` prints back as it was written.
//!
//! Custom op parsers (registry hooks) use the `parse_*` methods of [`Parser`], which mirror
//! MLIR's `OpAsmParser`.

use crate::attrs::{self, Attribute, DenseValues, FloatValue, NamedAttr, Scalar, SymbolRef};
use crate::diag::{DResult, Diagnostic, one_line};
use crate::float;
use crate::intern::{FxHashMap, Ident};
use crate::lexer::{self, Token};
use crate::module::{BlockId, InsertPoint, Loc, Module, OpId, OpState, RegionId, Value};
use crate::registry::{Registry, Traits};
use crate::types::{self, DYNAMIC, Signedness, Type, TypeKind};
use indexing::IndexingMap;
use std::sync::Arc;

/// A value use not yet resolved to a [`Value`] (its type comes later in custom syntax).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnresolvedOperand<'a> {
    pub name: &'a str,
    pub number: u32,
    pub loc: Loc,
}

/// A region argument declared in an op's custom syntax (`%iv` of `scf.for`, `%arg0: f32` of
/// `func.func`).
#[derive(Clone, Debug)]
pub struct Argument<'a> {
    pub name: &'a str,
    pub ty: Type,
    pub attrs: Vec<NamedAttr>,
    pub loc: Loc,
}

struct Def {
    values: Vec<Value>,
}

struct ForwardRef {
    number: u32,
    value: Value,
    loc: Loc,
}

/// Names visible inside one isolated-from-above op (or the top level).
#[derive(Default)]
struct IsolatedScope<'a> {
    values: FxHashMap<&'a str, Def>,
    /// Names defined in each open region, to forget them when the region ends.
    region_defs: Vec<Vec<&'a str>>,
    forward: FxHashMap<&'a str, Vec<ForwardRef>>,
}

/// Block labels of one region.
#[derive(Default)]
struct BlockScope<'a> {
    blocks: FxHashMap<&'a str, (BlockId, bool, Loc)>,
}

/// The parser state; custom op parsers receive it.
/// How deeply regions may nest. Parsing, verifying, printing and every pass walk regions
/// recursively; the limit keeps that recursion far inside a thread's stack whatever the
/// input says (real kernels nest a few levels: loops in loops in a function).
pub const MAX_REGION_NESTING: usize = 256;

/// How deeply types and attributes may nest (`tensor<tensor<...>>`, `[[...]]`, `{a = {...}}`),
/// for the same reason.
pub const MAX_NESTING: usize = 256;

pub struct Parser<'a> {
    src: &'a str,
    pos: usize,
    peeked: Option<(usize, Token<'a>, usize, usize)>,
    line_starts: Vec<usize>,
    /// The last computed location: (offset, line, column).
    loc_cache: std::cell::Cell<(usize, u32, u32)>,
    idents: FxHashMap<&'a str, Ident>,
    module: Module,
    registry: Arc<Registry>,
    attr_aliases: FxHashMap<&'a str, Attribute>,
    type_aliases: FxHashMap<&'a str, Type>,
    scopes: Vec<IsolatedScope<'a>>,
    block_scopes: Vec<BlockScope<'a>>,
    default_dialect: Vec<&'static str>,
    /// Whether the regions of the op being parsed are isolated from above.
    op_isolated: Vec<bool>,
    /// The default dialect for the regions of the op being parsed.
    op_dialect: Vec<&'static str>,
    /// Types and attributes being parsed, one inside another.
    nesting: usize,
}

/// Parses a module with the standard registry.
pub fn parse_module(text: &str) -> DResult<Module> {
    parse_module_with(text, "<input>", Registry::standard())
}

/// Parses a module; `file` names the source in diagnostics. Top-level ops other than a single
/// `builtin.module` are wrapped in one, as MLIR does.
pub fn parse_module_with(text: &str, file: &str, registry: Arc<Registry>) -> DResult<Module> {
    let mut p = Parser::new(text, file, registry);
    p.parse_top_level()?;
    Ok(p.module)
}

/// Parses a type (`tensor<4xf32>`).
pub fn parse_type(text: &str) -> DResult<Type> {
    let mut p = Parser::new(text, "<type>", Registry::standard());
    let t = p.parse_type()?;
    p.expect_eof()?;
    Ok(t)
}

/// Parses an attribute (`dense<1.0> : tensor<2xf32>`).
pub fn parse_attribute(text: &str) -> DResult<Attribute> {
    let mut p = Parser::new(text, "<attribute>", Registry::standard());
    let a = p.parse_attribute()?;
    p.expect_eof()?;
    Ok(a)
}

fn int_type_from_keyword(s: &str) -> Option<Type> {
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

fn is_type_keyword(s: &str) -> bool {
    matches!(
        s,
        "index" | "none" | "f16" | "bf16" | "f32" | "f64" | "tensor" | "vector" | "tuple"
    ) || int_type_from_keyword(s).is_some()
}

impl<'a> Parser<'a> {
    fn new(src: &'a str, file: &str, registry: Arc<Registry>) -> Parser<'a> {
        let mut line_starts = vec![0];
        line_starts.extend(
            src.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        let mut module = Module::without_top(registry.clone());
        module.file = Arc::from(file);
        // About one op per 40 bytes of text.
        module.reserve(src.len() / 40);
        Parser {
            src,
            pos: 0,
            peeked: None,
            line_starts,
            loc_cache: std::cell::Cell::new((0, 1, 1)),
            idents: FxHashMap::default(),
            module,
            registry,
            attr_aliases: FxHashMap::default(),
            type_aliases: FxHashMap::default(),
            scopes: vec![IsolatedScope::default()],
            block_scopes: Vec::new(),
            default_dialect: vec!["builtin"],
            op_isolated: Vec::new(),
            op_dialect: Vec::new(),
            nesting: 0,
        }
    }

    // ----- tokens and locations -----

    fn loc_of(&self, offset: usize) -> Loc {
        let offset = offset.min(self.src.len());
        let (cached, line, col) = self.loc_cache.get();
        if offset >= cached && offset - cached < 4096 {
            // Scan forward from the last computed position (the parser mostly moves forward).
            let (mut line, mut col) = (line, col);
            for &b in &self.src.as_bytes()[cached..offset] {
                if b == b'\n' {
                    line += 1;
                    col = 1;
                } else if b & 0xC0 != 0x80 {
                    col += 1;
                }
            }
            self.loc_cache.set((offset, line, col));
            return Loc::new(line, col);
        }
        let loc = self.loc_of_slow(offset);
        self.loc_cache.set((offset, loc.line, loc.col));
        loc
    }

    fn loc_of_slow(&self, offset: usize) -> Loc {
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line];
        let mut end = offset.min(self.src.len());
        while !self.src.is_char_boundary(end) {
            end -= 1;
        }
        let col = self.src[start..end].chars().count();
        Loc::new(line as u32 + 1, col as u32 + 1)
    }

    /// The next token, without consuming it.
    pub fn peek(&mut self) -> Token<'a> {
        self.peek_full().1
    }

    fn peek_full(&mut self) -> (usize, Token<'a>, usize, usize) {
        if let Some(p) = self.peeked
            && p.0 == self.pos
        {
            return p;
        }
        let start = lexer::skip_trivia(self.src.as_bytes(), self.pos);
        let (tok, end) = lexer::lex(self.src, start);
        let p = (self.pos, tok, start, end);
        self.peeked = Some(p);
        p
    }

    fn bump(&mut self) -> Token<'a> {
        let (_, tok, _, end) = self.peek_full();
        self.pos = end;
        tok
    }

    /// The location of the next token.
    pub fn loc(&mut self) -> Loc {
        let (_, _, start, _) = self.peek_full();
        self.loc_of(start)
    }

    /// An error at the next token.
    pub fn error(&mut self, message: impl Into<String>) -> Diagnostic {
        let loc = self.loc();
        self.error_at(loc, message)
    }

    /// An error at `loc`.
    pub fn error_at(&self, loc: Loc, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.module.file.clone(), loc, one_line(message.into()))
    }

    fn expected(&mut self, what: &str) -> Diagnostic {
        let tok = self.peek();
        if let Token::Error(e) = tok {
            return self.error(e);
        }
        self.error(format!("expected {what}, found {}", tok.describe()))
    }

    fn expect_eof(&mut self) -> DResult<()> {
        match self.peek() {
            Token::Eof => Ok(()),
            _ => Err(self.expected("end of input")),
        }
    }

    /// The module being built (for custom parsers that create blocks or ops).
    pub fn module_mut(&mut self) -> &mut Module {
        &mut self.module
    }

    pub fn module(&self) -> &Module {
        &self.module
    }

    /// Consumes `c` if it is next.
    pub fn parse_optional_punct(&mut self, c: u8) -> bool {
        if self.peek() == Token::Punct(c) {
            self.bump();
            true
        } else {
            false
        }
    }

    /// Consumes `c` or fails.
    pub fn parse_punct(&mut self, c: u8) -> DResult<()> {
        if self.parse_optional_punct(c) {
            Ok(())
        } else {
            Err(self.expected(&format!("'{}'", c as char)))
        }
    }

    pub fn parse_optional_arrow(&mut self) -> bool {
        if self.peek() == Token::Arrow {
            self.bump();
            true
        } else {
            false
        }
    }

    pub fn parse_arrow(&mut self) -> DResult<()> {
        if self.parse_optional_arrow() {
            Ok(())
        } else {
            Err(self.expected("'->'"))
        }
    }

    /// Consumes the keyword `kw` if it is next.
    pub fn parse_optional_keyword(&mut self, kw: &str) -> bool {
        if self.peek() == Token::Bare(kw) {
            self.bump();
            true
        } else {
            false
        }
    }

    pub fn parse_keyword(&mut self, kw: &str) -> DResult<()> {
        if self.parse_optional_keyword(kw) {
            Ok(())
        } else {
            Err(self.expected(&format!("'{kw}'")))
        }
    }

    /// Consumes any bare identifier.
    pub fn parse_any_keyword(&mut self) -> DResult<&'a str> {
        match self.peek() {
            Token::Bare(s) => {
                self.bump();
                Ok(s)
            }
            _ => Err(self.expected("keyword")),
        }
    }

    /// Consumes a bare identifier if one is next.
    pub fn parse_optional_any_keyword(&mut self) -> Option<&'a str> {
        match self.peek() {
            Token::Bare(s) => {
                self.bump();
                Some(s)
            }
            _ => None,
        }
    }

    /// Parses an unsigned or negative integer literal.
    pub fn parse_integer(&mut self) -> DResult<i128> {
        let neg = self.parse_optional_punct(b'-');
        match self.peek() {
            Token::Int(s) => {
                let loc = self.loc();
                self.bump();
                let v = parse_int_literal(s)
                    .ok_or_else(|| self.error_at(loc, "integer literal out of range"))?;
                Ok(if neg { -v } else { v })
            }
            _ => Err(self.expected("integer value")),
        }
    }

    /// Parses a string literal.
    pub fn parse_string(&mut self) -> DResult<String> {
        match self.peek() {
            Token::Str(raw) => {
                let loc = self.loc();
                self.bump();
                lexer::unescape(raw).map_err(|e| self.error_at(loc, e))
            }
            _ => Err(self.expected("string")),
        }
    }

    /// Consumes the literal `text` if it comes next: punctuation the lexer has no token for
    /// (`...` of variadic `llvm.func` signatures, `|` between `llvm.getelementptr` flags).
    pub fn parse_optional_literal(&mut self, text: &str) -> bool {
        let start = lexer::skip_trivia(self.src.as_bytes(), self.pos);
        if self.src[start..].starts_with(text) {
            self.pos = start + text.len();
            true
        } else {
            false
        }
    }

    /// Consumes a balanced `(...)`, `<...>`, `[...]` or `{...}` group and returns its text
    /// (for dialect attributes kept as text).
    pub fn parse_balanced(&mut self) -> DResult<&'a str> {
        let bytes = self.src.as_bytes();
        let start = lexer::skip_trivia(bytes, self.pos);
        let mut depth = 0usize;
        let mut pos = start;
        loop {
            let Some(&c) = bytes.get(pos) else {
                let loc = self.loc_of(start);
                return Err(self.error_at(loc, "unbalanced brackets"));
            };
            match c {
                b'(' | b'<' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                b'>' => {
                    if pos > 0 && bytes[pos - 1] == b'-' {
                        // `->` inside a function type or map
                    } else {
                        depth = depth.saturating_sub(1);
                    }
                }
                b'"' => {
                    let Some(end) = lexer::scan_string(bytes, pos) else {
                        let loc = self.loc_of(pos);
                        return Err(self.error_at(loc, "unterminated string literal"));
                    };
                    pos = end;
                    continue;
                }
                _ => {}
            }
            pos += 1;
            if depth == 0 {
                break;
            }
        }
        self.pos = pos;
        Ok(&self.src[start..pos])
    }

    // ----- top level -----

    fn parse_top_level(&mut self) -> DResult<()> {
        let block = self.module.create_block(&[]);
        self.scopes
            .last_mut()
            .expect("scope")
            .region_defs
            .push(Vec::new());
        self.block_scopes.push(BlockScope::default());
        loop {
            match self.peek() {
                Token::Eof => break,
                Token::Hash(name) if self.followed_by_equals() => {
                    self.bump();
                    self.parse_punct(b'=')?;
                    let value = self.parse_attribute()?;
                    self.attr_aliases.insert(name, value);
                }
                Token::Bang(name) if self.followed_by_equals() => {
                    self.bump();
                    self.parse_punct(b'=')?;
                    let ty = self.parse_type()?;
                    self.type_aliases.insert(name, ty);
                }
                _ => self.parse_operation(block)?,
            }
        }
        let scope = self.scopes.pop().expect("scope");
        self.check_forward_refs(scope)?;
        let ops: Vec<OpId> = self.module.block_ops(block).collect();
        let top = match ops.as_slice() {
            [single] if self.module.is(*single, "builtin.module") => {
                self.module.detach_op(*single);
                *single
            }
            _ => {
                let region = self.module.create_region();
                self.module.append_block(region, block);
                self.module.create_op(
                    OpState::new("builtin.module")
                        .region(region)
                        .loc(Loc::new(1, 1)),
                )
            }
        };
        self.module.set_top(top);
        Ok(())
    }

    fn followed_by_equals(&mut self) -> bool {
        let (_, _, _, end) = self.peek_full();
        let next = lexer::skip_trivia(self.src.as_bytes(), end);
        self.src.as_bytes().get(next) == Some(&b'=')
    }

    fn check_forward_refs(&self, scope: IsolatedScope<'a>) -> DResult<()> {
        let first = scope
            .forward
            .iter()
            .flat_map(|(name, refs)| refs.iter().map(move |r| (r.loc, *name)))
            .min_by_key(|&(loc, _)| (loc.line, loc.col));
        if let Some((loc, _)) = first {
            return Err(self.error_at(loc, "use of undeclared SSA value name"));
        }
        Ok(())
    }

    // ----- SSA values -----

    fn scope(&mut self) -> &mut IsolatedScope<'a> {
        self.scopes.last_mut().expect("scope")
    }

    /// Defines `name` as the group `values`.
    fn define(&mut self, name: &'a str, values: Vec<Value>, loc: Loc) -> DResult<()> {
        if self.scope().values.contains_key(name) {
            return Err(self.error_at(loc, format!("redefinition of SSA value '%{name}'")));
        }
        if let Some(refs) = self.scope().forward.remove(name) {
            for r in refs {
                let Some(&v) = values.get(r.number as usize) else {
                    return Err(self.error_at(r.loc, "reference to invalid result number"));
                };
                let (want, got) = (self.module.value_type(r.value), self.module.value_type(v));
                if want != got {
                    let suffix = if values.len() > 1 {
                        format!("#{}", r.number)
                    } else {
                        String::new()
                    };
                    return Err(self
                        .error_at(
                            loc,
                            format!("definition of SSA value '%{name}{suffix}' has type '{got}'"),
                        )
                        .with_note(r.loc, format!("previously used here with type '{want}'")));
                }
                self.module.replace_all_uses(r.value, v);
            }
        }
        let is_hint = !name.bytes().all(|b| b.is_ascii_digit());
        if is_hint && let Some(&first) = values.first() {
            self.module.set_value_name(first, Some(name));
        }
        let scope = self.scope();
        scope.values.insert(name, Def { values });
        scope.region_defs.last_mut().expect("region").push(name);
        Ok(())
    }

    /// Parses a value use `%name` or `%name#N`.
    pub fn parse_operand(&mut self) -> DResult<UnresolvedOperand<'a>> {
        match self.parse_optional_operand()? {
            Some(op) => Ok(op),
            None => Err(self.expected("SSA operand")),
        }
    }

    /// Parses a value use if one is next.
    pub fn parse_optional_operand(&mut self) -> DResult<Option<UnresolvedOperand<'a>>> {
        let Token::Percent(name) = self.peek() else {
            return Ok(None);
        };
        let loc = self.loc();
        self.bump();
        let mut number = 0;
        let bytes = self.src.as_bytes();
        if bytes.get(self.pos) == Some(&b'#')
            && bytes.get(self.pos + 1).is_some_and(u8::is_ascii_digit)
        {
            let start = self.pos + 1;
            let mut end = start;
            while bytes.get(end).is_some_and(u8::is_ascii_digit) {
                end += 1;
            }
            number = self.src[start..end]
                .parse()
                .map_err(|_| self.error_at(loc, "invalid result number"))?;
            self.pos = end;
        }
        Ok(Some(UnresolvedOperand { name, number, loc }))
    }

    /// Parses a possibly empty comma-separated list of value uses.
    pub fn parse_operand_list(&mut self) -> DResult<Vec<UnresolvedOperand<'a>>> {
        let mut out = Vec::new();
        if let Some(first) = self.parse_optional_operand()? {
            out.push(first);
            while self.parse_optional_punct(b',') {
                out.push(self.parse_operand()?);
            }
        }
        Ok(out)
    }

    /// Resolves a use to a value of type `ty`.
    pub fn resolve_operand(&mut self, op: &UnresolvedOperand<'a>, ty: Type) -> DResult<Value> {
        let found = self.scope().values.get(op.name).map(|d| {
            d.values
                .get(op.number as usize)
                .copied()
                .ok_or(d.values.len())
        });
        let v = match found {
            Some(Ok(v)) => v,
            Some(Err(_)) => return Err(self.error_at(op.loc, "reference to invalid result number")),
            None => {
                let existing = self
                    .scope()
                    .forward
                    .get(op.name)
                    .and_then(|refs| refs.iter().find(|r| r.number == op.number))
                    .map(|r| r.value);
                match existing {
                    Some(v) => v,
                    None => {
                        let v = self.module.create_detached_value(ty);
                        let loc = op.loc;
                        let number = op.number;
                        self.scope()
                            .forward
                            .entry(op.name)
                            .or_default()
                            .push(ForwardRef {
                                number,
                                value: v,
                                loc,
                            });
                        v
                    }
                }
            }
        };
        let actual = self.module.value_type(v);
        if actual != ty {
            return Err(self.error_at(
                op.loc,
                format!(
                    "use of value '%{}' expects different type than prior uses: '{ty}' vs '{actual}'",
                    op.name
                ),
            ));
        }
        Ok(v)
    }

    /// Resolves uses against types, checking the counts match.
    pub fn resolve_operands(
        &mut self,
        ops: &[UnresolvedOperand<'a>],
        types: &[Type],
        loc: Loc,
    ) -> DResult<Vec<Value>> {
        if ops.len() != types.len() {
            return Err(self.error_at(
                loc,
                format!(
                    "{} operands present, but expected {}",
                    ops.len(),
                    types.len()
                ),
            ));
        }
        ops.iter()
            .zip(types)
            .map(|(op, &ty)| self.resolve_operand(op, ty))
            .collect()
    }

    // ----- types -----

    /// Parses a type.
    pub fn parse_type(&mut self) -> DResult<Type> {
        self.nested(Self::parse_type_here)
    }

    /// Runs `parse` one nesting level deeper (a type or attribute inside another), or fails
    /// past [`MAX_NESTING`] levels: types and attributes parse recursively.
    fn nested<T>(&mut self, parse: impl FnOnce(&mut Self) -> DResult<T>) -> DResult<T> {
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

    fn parse_type_here(&mut self) -> DResult<Type> {
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
                    "tensor" | "vector" => {
                        self.parse_punct(b'<')?;
                        let (shape, elem) = self.parse_shape_and_element()?;
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
                    text.push_str(self.parse_balanced()?);
                }
                Ok(Type::opaque(&text))
            }
            Token::Punct(b'(') => {
                self.bump();
                let mut inputs = Vec::new();
                if !self.parse_optional_punct(b')') {
                    inputs = self.parse_type_list()?;
                    self.parse_punct(b')')?;
                }
                self.parse_arrow()?;
                let results = self.parse_function_result_types()?;
                Ok(Type::function(&inputs, &results))
            }
            _ => Err(self.expected("type")),
        }
    }

    /// After `tensor<` or `vector<`: `4x?x` dimensions and the element type.
    fn parse_shape_and_element(&mut self) -> DResult<(Vec<i64>, Type)> {
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
    fn parse_tensor_encoding(&mut self, shape: &[i64], elem: Type) -> DResult<Type> {
        if !self.parse_optional_punct(b',') {
            return Ok(Type::tensor(shape, elem));
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

    /// Parses an attribute value.
    pub fn parse_attribute(&mut self) -> DResult<Attribute> {
        self.nested(Self::parse_attribute_here)
    }

    fn parse_attribute_here(&mut self) -> DResult<Attribute> {
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
                if name == "xla_gpu.indexing_map" {
                    return self.parse_indexing_map_body();
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
    fn parse_indexing_map_body(&mut self) -> DResult<Attribute> {
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

    /// `[-]literal [: type]`
    fn parse_number_attr(&mut self) -> DResult<Attribute> {
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
                let kind = ty.float_kind().ok_or_else(|| {
                    self.error_at(loc, "floating point value not valid for specified type")
                })?;
                let v = float::parse_decimal(kind, text)
                    .ok_or_else(|| self.error_at(loc, "invalid floating point literal"))?;
                Ok(Attribute::Float(FloatValue(if neg { -v } else { v }), ty))
            }
            Token::Int(text) => {
                let ty = ty.unwrap_or(Type::I64);
                if let Some(kind) = ty.float_kind() {
                    if !text.starts_with("0x") {
                        return Err(self.error_at(
                            loc,
                            "unexpected decimal integer literal for a floating point value",
                        ));
                    }
                    let bits = parse_int_literal(text)
                        .filter(|&b| b >= 0 && b < 1i128 << kind.width())
                        .ok_or_else(|| {
                            self.error_at(loc, "hexadecimal float constant out of range for type")
                        })?;
                    let v = float::from_bits(kind, bits as u64);
                    return Ok(Attribute::Float(FloatValue(if neg { -v } else { v }), ty));
                }
                let v = parse_int_literal(text).ok_or_else(|| {
                    self.error_at(loc, "integer constant out of range for attribute")
                })?;
                let v = if neg { -v } else { v };
                check_int_fits(v, ty).map_err(|e| self.error_at(loc, e))?;
                Ok(Attribute::int(v, ty))
            }
            _ => Err(self.error_at(loc, "expected integer or floating point literal")),
        }
    }

    /// After `dense`: `<literal> : type`.
    fn parse_dense(&mut self) -> DResult<Attribute> {
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

    fn parse_dense_list(&mut self, values: &mut Vec<Scalar0<'a>>) -> DResult<Vec<i64>> {
        self.parse_punct(b'[')?;
        let mut count = 0i64;
        let mut inner: Option<Vec<i64>> = None;
        if !self.parse_optional_punct(b']') {
            loop {
                let loc = self.loc();
                let shape = if self.peek() == Token::Punct(b'[') {
                    self.parse_dense_list(values)?
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

    fn parse_dense_scalar(&mut self) -> DResult<Scalar0<'a>> {
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

    fn dense_scalar(&self, s: Scalar0<'a>, elem: Type, _loc: Loc) -> DResult<Scalar> {
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
                let v = parse_int_literal(t)
                    .ok_or_else(|| self.error_at(loc, "integer literal out of range"))?;
                let f = if t.starts_with("0x") {
                    float::from_bits(kind, v as u64)
                } else {
                    float::round_to(kind, v as f64)
                };
                Ok(Scalar::Float(FloatValue(if neg { -f } else { f })))
            }
            (Scalar0::Int(neg, t, loc), None) => {
                if !elem.is_signless_int_or_index() && !elem.is_integer() {
                    return Err(self.error_at(
                        loc,
                        format!("expected integer elements, but parsed type '{elem}'"),
                    ));
                }
                let v = parse_int_literal(t)
                    .ok_or_else(|| self.error_at(loc, "integer literal out of range"))?;
                let v = if neg { -v } else { v };
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
    fn parse_dense_array(&mut self) -> DResult<Attribute> {
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

    fn parse_dict_into(&mut self, entries: &mut Vec<NamedAttr>) -> DResult<()> {
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

    /// Parses `@name` (or `@"name"`).
    pub fn parse_symbol_name(&mut self) -> DResult<String> {
        let loc = self.loc();
        match self.peek() {
            Token::At(s) => {
                self.bump();
                Ok(s.to_owned())
            }
            Token::AtString(raw) => {
                self.bump();
                lexer::unescape(raw).map_err(|e| self.error_at(loc, e))
            }
            _ => Err(self.expected("symbol name")),
        }
    }

    // ----- regions and blocks -----

    /// Parses a region argument: `%name`, with `: type` and an attribute dictionary when
    /// `with_type`.
    pub fn parse_argument(&mut self, with_type: bool) -> DResult<Argument<'a>> {
        let loc = self.loc();
        let Token::Percent(name) = self.peek() else {
            return Err(self.expected("SSA identifier"));
        };
        self.bump();
        let mut arg = Argument {
            name,
            ty: Type::NONE,
            attrs: Vec::new(),
            loc,
        };
        if with_type {
            arg.ty = self.parse_colon_type()?;
            self.parse_optional_attr_dict(&mut arg.attrs)?;
        }
        Ok(arg)
    }

    /// Parses a region `{ ... }` whose entry block has `args` (declared by the op's syntax).
    pub fn parse_region(&mut self, args: &[Argument<'a>]) -> DResult<RegionId> {
        if self.block_scopes.len() >= MAX_REGION_NESTING {
            return Err(self.error(format!(
                "regions nested deeper than {MAX_REGION_NESTING} levels"
            )));
        }
        let region = self.module.create_region();
        let isolated = self.op_isolated.last().copied().unwrap_or(false);
        let dialect = self.op_dialect.last().copied().unwrap_or("");
        if isolated {
            self.scopes.push(IsolatedScope::default());
        }
        self.scope().region_defs.push(Vec::new());
        self.block_scopes.push(BlockScope::default());
        self.default_dialect.push(dialect);
        let result = self.parse_region_body(region, args);
        self.default_dialect.pop();
        let blocks = self.block_scopes.pop().expect("block scope");
        let defs = self.scope().region_defs.pop().expect("region defs");
        for name in defs {
            self.scope().values.remove(name);
        }
        let scope = if isolated { self.scopes.pop() } else { None };
        result?;
        if let Some((name, loc)) = blocks
            .blocks
            .iter()
            .filter(|(_, (_, defined, _))| !defined)
            .map(|(name, (_, _, loc))| (*name, *loc))
            .min_by_key(|&(_, loc)| (loc.line, loc.col))
        {
            return Err(self.error_at(loc, format!("reference to an undefined block '^{name}'")));
        }
        if let Some(scope) = scope {
            self.check_forward_refs(scope)?;
        }
        Ok(region)
    }

    /// Parses a region if `{` is next.
    pub fn parse_optional_region(&mut self, args: &[Argument<'a>]) -> DResult<Option<RegionId>> {
        if self.peek() == Token::Punct(b'{') {
            Ok(Some(self.parse_region(args)?))
        } else {
            Ok(None)
        }
    }

    fn parse_region_body(&mut self, region: RegionId, args: &[Argument<'a>]) -> DResult<()> {
        self.parse_punct(b'{')?;
        if !args.is_empty() {
            let types: Vec<Type> = args.iter().map(|a| a.ty).collect();
            let block = self.module.create_block(&types);
            self.module.append_block(region, block);
            for (i, a) in args.iter().enumerate() {
                let v = self.module.block_arg(block, i);
                self.define(a.name, vec![v], a.loc)?;
            }
            if let Token::Caret(_) = self.peek() {
                return Err(self.error("invalid block name in region with named arguments"));
            }
            self.parse_block_ops(block)?;
        } else if !matches!(self.peek(), Token::Punct(b'}') | Token::Caret(_)) {
            let block = self.module.create_block(&[]);
            self.module.append_block(region, block);
            self.parse_block_ops(block)?;
        }
        while let Token::Caret(name) = self.peek() {
            let loc = self.loc();
            self.bump();
            let block = self.define_block(name, loc)?;
            self.module.append_block(region, block);
            if self.parse_optional_punct(b'(') {
                loop {
                    let arg = self.parse_argument(true)?;
                    let v = self.module.add_block_arg(block, arg.ty);
                    self.define(arg.name, vec![v], arg.loc)?;
                    if !self.parse_optional_punct(b',') {
                        break;
                    }
                }
                self.parse_punct(b')')?;
            }
            self.parse_punct(b':')?;
            self.parse_block_ops(block)?;
        }
        self.parse_punct(b'}')
    }

    fn parse_block_ops(&mut self, block: BlockId) -> DResult<()> {
        loop {
            match self.peek() {
                Token::Caret(_) | Token::Punct(b'}') => return Ok(()),
                Token::Eof => return Err(self.expected("'}'")),
                _ => self.parse_operation(block)?,
            }
        }
    }

    fn define_block(&mut self, name: &'a str, loc: Loc) -> DResult<BlockId> {
        let scope = self.block_scopes.last_mut().expect("block scope");
        match scope.blocks.get_mut(name) {
            Some((_, true, _)) => {
                Err(self.error_at(loc, format!("redefinition of block '^{name}'")))
            }
            Some((block, defined, _)) => {
                *defined = true;
                Ok(*block)
            }
            None => {
                let block = self.module.create_block(&[]);
                self.block_scopes
                    .last_mut()
                    .expect("block scope")
                    .blocks
                    .insert(name, (block, true, loc));
                Ok(block)
            }
        }
    }

    /// Parses a successor block reference `^bb1`.
    pub fn parse_successor(&mut self) -> DResult<BlockId> {
        let loc = self.loc();
        let Token::Caret(name) = self.peek() else {
            return Err(self.expected("block name"));
        };
        self.bump();
        let Some(scope) = self.block_scopes.last_mut() else {
            return Err(self.error_at(loc, "block reference outside of a region"));
        };
        if let Some(&(b, _, _)) = scope.blocks.get(name) {
            return Ok(b);
        }
        let block = self.module.create_block(&[]);
        self.block_scopes
            .last_mut()
            .expect("block scope")
            .blocks
            .insert(name, (block, false, loc));
        Ok(block)
    }

    /// Makes sure the last block of `region` ends with a terminator: adds an empty block to an
    /// empty region and appends `name` (with no operands) when the last op is not a
    /// terminator (MLIR's `ensureTerminator` for implicit `scf.yield`).
    pub fn ensure_terminator(&mut self, region: RegionId, name: &str, loc: Loc) {
        let m = &mut self.module;
        let block = match m.region_blocks(region).last() {
            Some(&b) => b,
            None => {
                let b = m.create_block(&[]);
                m.append_block(region, b);
                b
            }
        };
        let has_terminator = m
            .last_op(block)
            .is_some_and(|op| m.op_def(op).is_some_and(|d| d.has(Traits::TERMINATOR)));
        if !has_terminator {
            m.create_op_at(OpState::new(name).loc(loc), InsertPoint::BlockEnd(block));
        }
    }

    // ----- operations -----

    fn parse_operation(&mut self, block: BlockId) -> DResult<()> {
        let loc = self.loc();
        let mut bindings: Vec<(&'a str, u32, Loc)> = Vec::new();
        if let Token::Percent(_) = self.peek() {
            loop {
                let bloc = self.loc();
                let Token::Percent(name) = self.bump() else {
                    return Err(self.error_at(bloc, "expected SSA identifier"));
                };
                let mut count = 1;
                if self.parse_optional_punct(b':') {
                    let n = self.parse_integer()?;
                    count = u32::try_from(n)
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| self.error_at(bloc, "expected positive result count"))?;
                }
                bindings.push((name, count, bloc));
                if !self.parse_optional_punct(b',') {
                    break;
                }
            }
            self.parse_punct(b'=')?;
        }
        let op_loc = self.loc();
        let mut state = match self.peek() {
            Token::Str(_) => self.parse_generic_op(op_loc)?,
            Token::Bare(name) => {
                self.bump();
                self.parse_custom_op(name, op_loc)?
            }
            _ => return Err(self.expected("operation name")),
        };
        state.loc = loc;
        self.skip_trailing_loc()?;
        let expected: u32 = bindings.iter().map(|b| b.1).sum();
        let num_results = state.result_types.len();
        if !bindings.is_empty() && expected as usize != num_results {
            return Err(self.error_at(
                loc,
                format!(
                    "operation defines {num_results} results but was provided {expected} to bind"
                ),
            ));
        }
        if !state.attrs.is_empty()
            && let Some(def) = self.registry.get(state.name)
        {
            // Inherent attributes written in the attribute dictionary become properties.
            let (inherent, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut state.attrs)
                .into_iter()
                .partition(|e| def.is_inherent(e.name.as_str()));
            state.attrs = rest;
            for e in inherent {
                attrs::set_named(&mut state.props, e.name, e.value);
            }
        }
        let op = self
            .module
            .create_op_at(state, InsertPoint::BlockEnd(block));
        let mut next = 0usize;
        for (name, count, bloc) in bindings {
            let values: Vec<Value> = (next..next + count as usize)
                .map(|i| self.module.result(op, i))
                .collect();
            next += count as usize;
            self.define(name, values, bloc)?;
        }
        Ok(())
    }

    fn skip_trailing_loc(&mut self) -> DResult<()> {
        if self.peek() == Token::Bare("loc") {
            let (_, _, _, end) = self.peek_full();
            let next = lexer::skip_trivia(self.src.as_bytes(), end);
            if self.src.as_bytes().get(next) == Some(&b'(') {
                self.bump();
                self.parse_balanced()?;
            }
        }
        Ok(())
    }

    fn with_op_context<T>(
        &mut self,
        name: &str,
        f: impl FnOnce(&mut Self) -> DResult<T>,
    ) -> DResult<T> {
        let (isolated, dialect) = match self.registry.lookup(name) {
            Some((_, d)) => (
                d.has(Traits::ISOLATED_FROM_ABOVE),
                d.default_dialect.unwrap_or(""),
            ),
            None => (false, ""),
        };
        self.op_isolated.push(isolated);
        self.op_dialect.push(dialect);
        let r = f(self);
        self.op_isolated.pop();
        self.op_dialect.pop();
        r
    }

    fn parse_generic_op(&mut self, loc: Loc) -> DResult<OpState> {
        let name: std::borrow::Cow<'a, str> = match self.peek() {
            Token::Str(raw) if !raw.contains('\\') => {
                self.bump();
                raw.into()
            }
            _ => self.parse_string()?.into(),
        };
        if name.is_empty() {
            return Err(self.error_at(loc, "empty operation name is invalid"));
        }
        let ident = match &name {
            std::borrow::Cow::Borrowed(s) => *self.idents.entry(s).or_insert_with(|| Ident::new(s)),
            std::borrow::Cow::Owned(s) => Ident::new(s),
        };
        let mut state = OpState::with_ident(ident);
        self.parse_punct(b'(')?;
        let operands = self.parse_operand_list()?;
        self.parse_punct(b')')?;
        if self.parse_optional_punct(b'[') {
            loop {
                state.successors.push(self.parse_successor()?);
                if !self.parse_optional_punct(b',') {
                    break;
                }
            }
            self.parse_punct(b']')?;
        }
        if self.parse_optional_punct(b'<') {
            let mut props = Vec::new();
            self.parse_dict_into(&mut props)?;
            state.props = props;
            self.parse_punct(b'>')?;
        }
        if self.peek() == Token::Punct(b'(') {
            self.bump();
            let regions = self.with_op_context(&name, |p| {
                let mut regions = Vec::new();
                loop {
                    regions.push(p.parse_region(&[])?);
                    if !p.parse_optional_punct(b',') {
                        break;
                    }
                }
                Ok(regions)
            })?;
            state.regions = regions;
            self.parse_punct(b')')?;
        }
        self.parse_optional_attr_dict(&mut state.attrs)?;
        self.parse_punct(b':')?;
        let type_loc = self.loc();
        let (inputs, results) = self.parse_function_type_lists()?;
        if inputs.len() != operands.len() {
            return Err(self.error_at(
                type_loc,
                format!(
                    "expected {} operand type{} but had {}",
                    operands.len(),
                    if operands.len() == 1 { "" } else { "s" },
                    inputs.len()
                ),
            ));
        }
        state.operands = self.resolve_operands(&operands, &inputs, loc)?;
        state.result_types = results;
        Ok(state)
    }

    fn parse_custom_op(&mut self, name: &'a str, loc: Loc) -> DResult<OpState> {
        let registry = self.registry.clone();
        let mut found = registry.lookup(name);
        let dialect = *self.default_dialect.last().unwrap_or(&"");
        if found.is_none() && !dialect.is_empty() {
            found = registry.lookup(&format!("{dialect}.{name}"));
        }
        let Some((ident, def)) = found else {
            return Err(self.error_at(loc, format!("custom op '{name}' is unknown")));
        };
        let Some(parse) = def.parse else {
            return Err(self.error_at(
                loc,
                format!("custom op '{name}' has no custom assembly form; use the generic form"),
            ));
        };
        let mut state = OpState::with_ident(ident);
        state.loc = loc;
        self.with_op_context(def.name, |p| parse(p, &mut state))?;
        Ok(state)
    }
}

/// One string literal of an indexing map attribute: where its text starts in the
/// concatenated map text and where its opening quote is in the source.
struct MapPiece {
    text_start: usize,
    quote: usize,
    /// No escapes: the literal's bytes are the text's bytes.
    verbatim: bool,
}

impl MapPiece {
    /// The source offset of byte `offset` of the concatenated text.
    fn source_offset(pieces: &[MapPiece], offset: usize) -> usize {
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
enum Scalar0<'a> {
    Bool(bool, Loc),
    Int(bool, &'a str, Loc),
    Float(bool, &'a str, Loc),
}

/// Parses a decimal or `0x` hex integer literal.
fn parse_int_literal(text: &str) -> Option<i128> {
    if let Some(hex) = text.strip_prefix("0x") {
        u128::from_str_radix(hex, 16)
            .ok()
            .and_then(|v| i128::try_from(v).ok())
    } else {
        text.parse().ok()
    }
}

/// Whether `v` fits `ty` (as a signed or unsigned value of its width).
fn check_int_fits(v: i128, ty: Type) -> Result<(), String> {
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

/// Shaped types obey the HLO front end's size limit ([`hlo::shape::ARRAY_SIZE_LIMIT`]):
/// fewer than 2^62 elements and bytes, so that the passes' element counts, byte sizes and
/// linear indices (flattening, lowering to pointers) fit in 64 bits. Dynamic dimensions
/// count as unknown.
fn within_size_limit(shape: &[i64], elem: Type) -> bool {
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
