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
use crate::registry::Registry;
use crate::traits::Traits;
use crate::types::{DYNAMIC, Signedness, Type, TypeKind};
use indexing::IndexingMap;
use std::sync::Arc;

mod attributes;
mod operations;
mod type_syntax;
mod xla_spelling;

use attributes::parse_signed_int_literal;
use type_syntax::is_type_keyword;

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
                parse_signed_int_literal(neg, s)
                    .ok_or_else(|| self.error_at(loc, "integer literal out of range"))
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
                // Kept as text here, but read recursively by whoever takes it (MLIR).
                b'(' | b'<' | b'[' | b'{' if depth + self.nesting >= MAX_NESTING => {
                    let loc = self.loc_of(pos);
                    return Err(self.error_at(
                        loc,
                        format!("types or attributes nested deeper than {MAX_NESTING} levels"),
                    ));
                }
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

    /// Resolves each of `ops` as the type beside it, then `indices` as `index` values: the
    /// operands of ops that address elements (`%v[%i, %j]`).
    pub fn resolve_indexed_operands(
        &mut self,
        ops: &[(UnresolvedOperand<'a>, Type)],
        indices: &[UnresolvedOperand<'a>],
    ) -> DResult<Vec<Value>> {
        let mut values = ops
            .iter()
            .map(|(op, ty)| self.resolve_operand(op, *ty))
            .collect::<DResult<Vec<Value>>>()?;
        values.extend(self.resolve_indices(indices)?);
        Ok(values)
    }

    /// Resolves `indices` as `index` values.
    pub fn resolve_indices(&mut self, indices: &[UnresolvedOperand<'a>]) -> DResult<Vec<Value>> {
        indices
            .iter()
            .map(|index| self.resolve_operand(index, Type::INDEX))
            .collect()
    }

    // ----- types -----

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

    /// Parses MLIR's initialization list `(%a = %x, %b = %y)` (possibly empty): the region
    /// arguments (types unset) and the values that initialize them (`scf.for`'s and
    /// `xla_gpu.loop`'s `iter_args`, `scf.while`'s operands).
    pub fn parse_assignment_list(
        &mut self,
    ) -> DResult<(Vec<Argument<'a>>, Vec<UnresolvedOperand<'a>>)> {
        self.parse_punct(b'(')?;
        let mut args = Vec::new();
        let mut inits = Vec::new();
        if !self.parse_optional_punct(b')') {
            loop {
                args.push(self.parse_argument(false)?);
                self.parse_punct(b'=')?;
                inits.push(self.parse_operand()?);
                if !self.parse_optional_punct(b',') {
                    break;
                }
            }
            self.parse_punct(b')')?;
        }
        Ok((args, inits))
    }

    /// Parses one argument of a function signature: `%x: f32 {attrs}` in a definition,
    /// `f32 {attrs}` in a declaration. `named` remembers the first argument's form, which
    /// every other argument must share.
    pub fn parse_signature_argument(&mut self, named: &mut Option<bool>) -> DResult<Argument<'a>> {
        let is_named = matches!(self.peek(), Token::Percent(_));
        if *named.get_or_insert(is_named) != is_named {
            return Err(self.error("expected consistent use of named or unnamed arguments"));
        }
        if is_named {
            return self.parse_argument(true);
        }
        let loc = self.loc();
        let ty = self.parse_type()?;
        let mut attrs = Vec::new();
        self.parse_optional_attr_dict(&mut attrs)?;
        Ok(Argument {
            name: "",
            ty,
            attrs,
            loc,
        })
    }
}
