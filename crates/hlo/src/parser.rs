//! Recursive-descent parser for HLO text.
//!
//! Accepts what XLA prints and what XLA's emitter tests write: an `HloModule` header or a
//! bare list of computations; `%` on names or not; typed (`add(f32[2] %a, ...)`) or untyped
//! operands; old-style computation signatures; `/* */` and `//` comments anywhere. Names
//! are resolved to indices at the end of each computation (operands) and of the module
//! (called computations), so definitions may come in any order; cycles are rejected.

use std::collections::{HashMap, VecDeque};

use crate::diag::{Diagnostic, SourceFile, Span};
use crate::graph;
use crate::layout::{COMBINE_DIMENSION, Layout, Tile};
use crate::lexer::{self, Lexer, Token, TokenKind};
use crate::literal::{ArrayLiteral, Literal, Value};
use crate::module::{
    AttrValue, Attribute, Computation, ComputationId, ComputationRef, HloModule, InstrId,
    InstrSpans, Instruction, ModuleHeader, PadDim, Payload, Signature, SliceDim,
};
use crate::opcode::Opcode;
use crate::primitive::PrimitiveType;
use crate::shape::{ArrayShape, Shape, UNBOUNDED_SIZE};
use crate::shape_inference::infer_shape;

mod attributes;
mod stack_frames;
mod values;

type PResult<T> = Result<T, Diagnostic>;

/// Parses a whole HLO text: names resolved, graphs acyclic. Shape rules are the
/// verifier's job ([`crate::verify_module`]).
pub fn parse_module(source: &SourceFile) -> PResult<HloModule> {
    let mut parser = Parser::new(&source.text);
    let parsed = parser.module();
    // A lexical error anywhere in the file is the error, as when the whole text was lexed
    // first: the one that stopped the parser, or else one after where a syntax error did.
    if let Some(error) = parser.lex_error.take() {
        return Err(error);
    }
    let module = match parsed {
        Ok(module) => module,
        Err(error) => return Err(parser.lexer.first_error().unwrap_or(error)),
    };
    graph::check_acyclic(&module)?;
    Ok(module)
}

/// How an attribute's value is written, by attribute name.
#[derive(Clone, Copy)]
enum AttrKind {
    Int,
    Bool,
    IntList,
    Enum(&'static [&'static str]),
    Str,
    Computation,
    Computations,
    Slice,
    Padding,
    ProgramShape,
    Raw,
}

const FUSION_KINDS: &[&str] = &["kLoop", "kInput", "kOutput", "kCustom"];
const DIRECTIONS: &[&str] = &["EQ", "NE", "GE", "GT", "LE", "LT"];
const COMPARISON_TYPES: &[&str] = &["FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED", "PARTIALORDER"];

fn attr_kind(name: &str) -> AttrKind {
    match name {
        "index"
        | "index_vector_dim"
        | "iota_dimension"
        | "exponent_bits"
        | "mantissa_bits"
        | "channel_id"
        | "k"
        | "feature_index"
        | "feature_group_count"
        | "batch_group_count" => AttrKind::Int,
        "indices_are_sorted"
        | "unique_indices"
        | "is_stable"
        | "largest"
        | "use_global_device_ids"
        | "constrain_layout" => AttrKind::Bool,
        "dimensions"
        | "offset_dims"
        | "collapsed_slice_dims"
        | "start_index_map"
        | "slice_sizes"
        | "operand_batching_dims"
        | "start_indices_batching_dims"
        | "update_window_dims"
        | "inserted_window_dims"
        | "scatter_dims_to_operand_dims"
        | "input_batching_dims"
        | "scatter_indices_batching_dims"
        | "dynamic_slice_sizes"
        | "lhs_contracting_dims"
        | "rhs_contracting_dims"
        | "lhs_batch_dims"
        | "rhs_batch_dims"
        | "fft_length" => AttrKind::IntList,
        "kind" => AttrKind::Enum(FUSION_KINDS),
        "direction" => AttrKind::Enum(DIRECTIONS),
        "type" => AttrKind::Enum(COMPARISON_TYPES),
        "custom_call_target" | "execution_thread" => AttrKind::Str,
        "to_apply" | "condition" | "body" | "select" | "scatter" | "true_computation"
        | "false_computation" => AttrKind::Computation,
        "calls" | "branch_computations" | "called_computations" => AttrKind::Computations,
        "slice" => AttrKind::Slice,
        "padding" => AttrKind::Padding,
        "entry_computation_layout" => AttrKind::ProgramShape,
        _ => AttrKind::Raw,
    }
}

struct Parser<'a> {
    text: &'a str,
    lexer: Lexer<'a>,
    /// The current token and the ones after it, [`LOOKAHEAD`] in all: the parser holds
    /// these, not the file's tokens.
    ahead: VecDeque<Token>,
    /// The first lexical error; the lexer then gives [`TokenKind::Eof`] at its place.
    lex_error: Option<Diagnostic>,
    /// Where the last token taken ended (0 before the first).
    prev_end: u32,
    /// How many tokens have been taken.
    taken: usize,
    /// Current nesting of tuple shapes, literals and literal dimensions; bounded so that
    /// hostile input gets an error instead of overflowing the stack.
    depth: usize,
}

/// Deeper nesting than any real module has (XLA's deepest tuples are a handful of levels).
const MAX_NESTING: usize = 256;

/// An operand as written, before its name is resolved. Every instruction's operands are
/// held until its computation ends, so this stays small: the name is a slice of the text
/// and the rare declared shape is boxed.
struct PendingOperand<'a> {
    name: &'a str,
    span: Span,
    declared_shape: Option<Box<Shape>>,
}

/// Tokens the parser looks at before taking one: the current one and two after it (an
/// attribute `, name =`, a `ROOT` that is not a name).
const LOOKAHEAD: usize = 3;

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Parser<'a> {
        let mut parser = Parser {
            text,
            lexer: Lexer::new(text),
            ahead: VecDeque::with_capacity(LOOKAHEAD),
            lex_error: None,
            prev_end: 0,
            taken: 0,
            depth: 0,
        };
        while parser.ahead.len() < LOOKAHEAD {
            parser.lex_one();
        }
        parser
    }

    /// Appends the lexer's next token to the lookahead; after an error, the end of file.
    fn lex_one(&mut self) {
        if self.lex_error.is_none() {
            match self.lexer.next_token() {
                Ok(token) => return self.ahead.push_back(token),
                Err(e) => self.lex_error = Some(e),
            }
        }
        let at = self.lex_error.as_ref().map_or(0, |e| e.span.start);
        self.ahead.push_back(Token {
            kind: TokenKind::Eof,
            span: Span { start: at, end: at },
        });
    }

    // ---- token cursor -------------------------------------------------------------------

    fn peek(&self) -> Token {
        self.ahead[0]
    }

    fn peek_kind(&self) -> TokenKind {
        self.peek().kind
    }

    fn peek_nth_kind(&self, n: usize) -> TokenKind {
        self.ahead.get(n).map_or(TokenKind::Eof, |t| t.kind)
    }

    fn text_of(&self, token: Token) -> &'a str {
        &self.text[token.span.start as usize..token.span.end as usize]
    }

    fn peek_text(&self) -> &'a str {
        self.text_of(self.peek())
    }

    fn at(&self, kind: TokenKind) -> bool {
        self.peek_kind() == kind
    }

    fn at_ident(&self, word: &str) -> bool {
        self.at(TokenKind::Ident) && self.peek_text() == word
    }

    fn bump(&mut self) -> Token {
        let token = self.peek();
        if token.kind != TokenKind::Eof {
            self.ahead.pop_front();
            self.lex_one();
            self.prev_end = token.span.end;
            self.taken += 1;
        }
        token
    }

    fn bump_text(&mut self) -> &'a str {
        let token = self.bump();
        self.text_of(token)
    }

    fn eat(&mut self, kind: TokenKind) -> Option<Token> {
        self.at(kind).then(|| self.bump())
    }

    fn expect(&mut self, kind: TokenKind) -> PResult<Token> {
        self.eat(kind)
            .ok_or_else(|| self.error_expected(kind.describe()))
    }

    fn prev_end(&self) -> u32 {
        self.prev_end
    }

    fn span_from(&self, start: Span) -> Span {
        Span {
            start: start.start,
            end: self.prev_end().max(start.end),
        }
    }

    fn error_expected(&self, what: &str) -> Diagnostic {
        let token = self.peek();
        let found = match token.kind {
            TokenKind::Eof => "end of file".to_string(),
            _ => {
                // At most 24 characters of the token's first line: a string token may
                // span lines, and the message must stay one line above the source line.
                let text = self.text_of(token);
                let line = text.lines().next().unwrap_or("");
                match line.char_indices().nth(24) {
                    Some((cut, _)) => format!("'{}...'", &line[..cut]),
                    None if line.len() < text.len() => format!("'{line}...'"),
                    None => format!("'{text}'"),
                }
            }
        };
        Diagnostic::new(token.span, format!("expected {what}, found {found}"))
    }

    /// Parses `open item (',' item)* close` (possibly empty) and returns the items.
    fn list<T>(
        &mut self,
        open: TokenKind,
        close: TokenKind,
        mut item: impl FnMut(&mut Self) -> PResult<T>,
    ) -> PResult<Vec<T>> {
        self.expect(open)?;
        let mut items = Vec::new();
        if self.eat(close).is_some() {
            return Ok(items);
        }
        loop {
            items.push(item(self)?);
            if self.eat(close).is_some() {
                return Ok(items);
            }
            if self.eat(TokenKind::Comma).is_none() {
                return Err(self.error_expected(&format!("',' or {}", close.describe())));
            }
        }
    }

    /// Runs `f` one nesting level deeper, refusing input nested beyond [`MAX_NESTING`].
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        if self.depth >= MAX_NESTING {
            return Err(Diagnostic::new(
                self.peek().span,
                format!("nesting deeper than {MAX_NESTING} levels"),
            ));
        }
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        result
    }

    // ---- names and numbers --------------------------------------------------------------

    /// A name, with or without `%`, returned without it.
    fn name(&mut self, what: &str) -> PResult<(String, Span)> {
        self.name_in_text(what)
            .map(|(name, span)| (name.to_string(), span))
    }

    /// A name (without its `%`) as a slice of the text.
    fn name_in_text(&mut self, what: &str) -> PResult<(&'a str, Span)> {
        let token = self.peek();
        let name = match token.kind {
            TokenKind::Ident => self.text_of(token),
            TokenKind::PercentName => &self.text_of(token)[1..],
            _ => return Err(self.error_expected(what)),
        };
        self.bump();
        Ok((name, token.span))
    }

    fn int(&mut self) -> PResult<i64> {
        let token = self.expect(TokenKind::Int)?;
        self.text_of(token)
            .parse()
            .map_err(|_| Diagnostic::new(token.span, "integer does not fit in 64 bits"))
    }

    fn non_negative_int(&mut self, what: &str) -> PResult<i64> {
        let span = self.peek().span;
        let value = self.int()?;
        if value < 0 {
            return Err(Diagnostic::new(
                span,
                format!("{what} must not be negative"),
            ));
        }
        Ok(value)
    }

    // ---- module and computations --------------------------------------------------------

    fn module(&mut self) -> PResult<HloModule> {
        let header = if self.at_ident("HloModule") {
            Some(self.module_header()?)
        } else {
            None
        };
        let stack_frames = self.stack_frame_tables()?;
        let mut computations: Vec<Computation> = Vec::new();
        let mut refs: Vec<(usize, usize, usize)> = Vec::new();
        while !self.at(TokenKind::Eof) {
            let computation = self.computation()?;
            if computations.iter().any(|c| c.name == computation.name) {
                return Err(Diagnostic::new(
                    computation.span,
                    format!("duplicate computation name '{}'", computation.name),
                ));
            }
            for (i, instr) in computation.instructions.iter().enumerate() {
                for (a, attr) in instr.attributes.iter().enumerate() {
                    if matches!(
                        attr.value,
                        AttrValue::Computation(_) | AttrValue::Computations(_)
                    ) {
                        refs.push((computations.len(), i, a));
                    }
                }
            }
            computations.push(computation);
        }
        if computations.is_empty() {
            return Err(self.error_expected("a computation"));
        }
        let ids: HashMap<String, usize> = computations
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.clone(), i))
            .collect();
        for (c, i, a) in refs {
            let attr = &mut computations[c].instructions[i].attributes[a];
            let targets: &mut [ComputationRef] = match &mut attr.value {
                AttrValue::Computation(r) => std::slice::from_mut(r),
                AttrValue::Computations(rs) => rs,
                _ => continue,
            };
            for target in targets {
                let Some(&id) = ids.get(&target.name) else {
                    return Err(Diagnostic::new(
                        target.span,
                        format!("unknown computation '{}'", target.name),
                    ));
                };
                target.id = ComputationId(id);
            }
        }
        let mut entries = computations.iter().enumerate().filter(|(_, c)| c.is_entry);
        let entry = match (entries.next(), entries.next()) {
            (_, Some((_, second))) => {
                return Err(Diagnostic::new(
                    second.span,
                    "a module has only one ENTRY computation",
                ));
            }
            (Some((i, _)), None) => i,
            (None, None) => computations.len() - 1,
        };
        Ok(HloModule {
            header,
            stack_frames,
            computations,
            entry: ComputationId(entry),
        })
    }

    fn module_header(&mut self) -> PResult<ModuleHeader> {
        let start = self.bump().span;
        let (name, _) = self.name("a module name")?;
        let mut attributes = Vec::new();
        while self.eat(TokenKind::Comma).is_some() {
            self.push_attribute(&mut attributes)?;
        }
        Ok(ModuleHeader {
            name,
            span: self.span_from(start),
            attributes,
        })
    }

    fn computation(&mut self) -> PResult<Computation> {
        let start = self.peek().span;
        let is_entry = self.at_ident("ENTRY") && self.peek_nth_kind(1) != TokenKind::LBrace;
        if is_entry {
            self.bump();
        }
        let (name, _) = self.name("a computation name")?;
        let signature = if self.at(TokenKind::LParen) {
            Some(self.signature()?)
        } else {
            None
        };
        let header_span = self.span_from(start);
        self.expect(TokenKind::LBrace)?;
        let mut instructions = Vec::new();
        // Every instruction's operands in order, one list for the computation.
        let mut pending = Vec::new();
        let mut root = None;
        let mut shape_written = Vec::new();
        while self.eat(TokenKind::RBrace).is_none() {
            let (instr, operands, is_root, has_shape) = self.instruction()?;
            shape_written.push(has_shape);
            if is_root {
                if root.is_some() {
                    return Err(Diagnostic::new(
                        instr.spans.whole,
                        format!("computation '{name}' has more than one ROOT instruction"),
                    ));
                }
                root = Some(InstrId(instructions.len()));
            }
            instructions.push(instr);
            pending.extend(operands);
        }
        if instructions.is_empty() {
            return Err(Diagnostic::new(
                header_span,
                format!("computation '{name}' has no instructions"),
            ));
        }
        resolve_operands(&mut instructions, &pending)?;
        infer_missing_shapes(&mut instructions, &shape_written)?;
        check_declared_operand_shapes(&instructions, &pending)?;
        let mut attributes = Vec::new();
        while self.at(TokenKind::Comma) && self.peek_nth_kind(2) == TokenKind::Equal {
            self.bump();
            self.push_attribute(&mut attributes)?;
        }
        Ok(Computation {
            root: root.unwrap_or(InstrId(instructions.len() - 1)),
            name,
            span: header_span,
            is_entry,
            signature,
            instructions,
            attributes,
        })
    }

    /// `(p0: f32[], p1: f32[]) -> f32[]`
    fn signature(&mut self) -> PResult<Signature> {
        let start = self.peek().span;
        let params = self.list(TokenKind::LParen, TokenKind::RParen, |p| {
            let (name, _) = p.name("a parameter name")?;
            p.expect(TokenKind::Colon)?;
            Ok((name, p.shape()?))
        })?;
        self.expect(TokenKind::Arrow)?;
        let result = self.shape()?;
        Ok(Signature {
            params,
            result,
            span: self.span_from(start),
        })
    }

    // ---- instructions -------------------------------------------------------------------

    /// One instruction, its unresolved operands, whether it is the ROOT, and whether its
    /// shape was written (XLA lets the text leave out shapes it can infer).
    fn instruction(&mut self) -> PResult<(Instruction, Vec<PendingOperand<'a>>, bool, bool)> {
        let start = self.peek().span;
        let is_root = self.at_ident("ROOT") && self.peek_nth_kind(1) != TokenKind::Equal;
        if is_root {
            self.bump();
        }
        let (name, name_span) = self.name("an instruction name")?;
        self.expect(TokenKind::Equal)?;
        let shape_start = self.peek().span;
        let has_shape = !(self.at(TokenKind::Ident) && self.peek_nth_kind(1) == TokenKind::LParen);
        let shape = if has_shape {
            self.shape()?
        } else {
            Shape::Tuple(Vec::new())
        };
        let shape_span = if has_shape {
            self.span_from(shape_start)
        } else {
            shape_start
        };
        let opcode_token = self.peek();
        if opcode_token.kind != TokenKind::Ident {
            return Err(self.error_expected("an opcode"));
        }
        let opcode_text = self.text_of(opcode_token);
        let opcode = Opcode::from_name(opcode_text).ok_or_else(|| {
            Diagnostic::new(opcode_token.span, format!("unknown opcode '{opcode_text}'"))
        })?;
        self.bump();
        let payload_start = self.peek().span;
        let (payload, operands) = match opcode {
            Opcode::Constant if !has_shape => {
                return Err(Diagnostic::new(
                    opcode_token.span,
                    "a constant needs its shape written before 'constant'",
                ));
            }
            Opcode::Constant => {
                self.expect(TokenKind::LParen)?;
                let literal = self.literal(&shape)?;
                self.expect(TokenKind::RParen)?;
                (Payload::Literal(Box::new(literal)), Vec::new())
            }
            Opcode::Parameter => {
                self.expect(TokenKind::LParen)?;
                let number = self.non_negative_int("a parameter number")?;
                self.expect(TokenKind::RParen)?;
                (Payload::Parameter(number), Vec::new())
            }
            _ => (
                Payload::None,
                self.list(TokenKind::LParen, TokenKind::RParen, Self::operand)?,
            ),
        };
        let payload_span = match payload {
            Payload::None => Span::default(),
            _ => self.span_from(payload_start),
        };
        let mut attributes = Vec::new();
        while self.eat(TokenKind::Comma).is_some() {
            self.push_attribute(&mut attributes)?;
        }
        let spans = InstrSpans {
            whole: self.span_from(start),
            name: name_span,
            shape: shape_span,
            opcode: opcode_token.span,
            operands: operands.iter().map(|o| o.span).collect(),
            payload: payload_span,
        };
        let instr = Instruction {
            name,
            opcode,
            shape,
            operands: Vec::new(),
            payload,
            attributes,
            spans,
        };
        Ok((instr, operands, is_root, has_shape))
    }

    /// `name`, `%name`, or `shape %name`.
    fn operand(&mut self) -> PResult<PendingOperand<'a>> {
        let start = self.peek().span;
        let typed = self.at(TokenKind::LParen)
            || (self.at(TokenKind::Ident)
                && self.peek_nth_kind(1) == TokenKind::LBracket
                && PrimitiveType::from_name(self.peek_text()).is_some());
        let declared_shape = if typed {
            Some(Box::new(self.shape()?))
        } else {
            None
        };
        let (name, name_span) = self.name_in_text("an operand name")?;
        Ok(PendingOperand {
            name,
            span: if typed {
                self.span_from(start)
            } else {
                name_span
            },
            declared_shape,
        })
    }

    // ---- attributes ---------------------------------------------------------------------
}

/// Resolves operand names within one computation.
/// Sets the operands of `instructions` from `pending`, the operands as written: each
/// instruction's in turn, as many as its operand spans.
fn resolve_operands(
    instructions: &mut [Instruction],
    pending: &[PendingOperand<'_>],
) -> PResult<()> {
    let mut ids: HashMap<&str, usize> = HashMap::with_capacity(instructions.len());
    for (i, instr) in instructions.iter().enumerate() {
        if ids.insert(&instr.name, i).is_some() {
            return Err(Diagnostic::new(
                instr.spans.name,
                format!("duplicate instruction name '{}'", instr.name),
            ));
        }
    }
    let resolved = pending
        .iter()
        .map(|operand| {
            ids.get(operand.name).map(|&id| InstrId(id)).ok_or_else(|| {
                Diagnostic::new(
                    operand.span,
                    format!("use of undefined instruction '{}'", operand.name),
                )
            })
        })
        .collect::<PResult<Vec<_>>>()?;
    drop(ids);
    let mut rest = resolved.as_slice();
    for instr in instructions.iter_mut() {
        let (operands, after) = rest.split_at(instr.spans.operands.len());
        rest = after;
        instr.operands = operands.to_vec();
    }
    Ok(())
}

/// Fills in the shapes the text left out, operands first (definitions may come in any
/// order, so this walks the operand graph rather than the text).
fn infer_missing_shapes(instructions: &mut [Instruction], shape_written: &[bool]) -> PResult<()> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Missing,
        InProgress,
        Known,
    }
    let mut state: Vec<State> = shape_written
        .iter()
        .map(|&w| if w { State::Known } else { State::Missing })
        .collect();
    for start in 0..instructions.len() {
        let mut stack = vec![start];
        while let Some(&i) = stack.last() {
            if state[i] == State::Known {
                stack.pop();
                continue;
            }
            state[i] = State::InProgress;
            let instr = &instructions[i];
            if let Some(&op) = instr.operands.iter().find(|op| state[op.0] != State::Known) {
                if state[op.0] == State::InProgress {
                    return Err(Diagnostic::new(
                        instr.spans.name,
                        format!("instruction '{}' is part of a cycle", instr.name),
                    ));
                }
                stack.push(op.0);
                continue;
            }
            let operand_shapes: Vec<&Shape> = instr
                .operands
                .iter()
                .map(|op| &instructions[op.0].shape)
                .collect();
            let shape = infer_shape(instr, &operand_shapes).map_err(|e| e.to_diagnostic(instr))?;
            instructions[i].shape = shape;
            state[i] = State::Known;
            stack.pop();
        }
    }
    Ok(())
}

/// Typed operands (`add(f32[2] %a, ...)`) must agree with the instruction they name.
fn check_declared_operand_shapes(
    instructions: &[Instruction],
    pending: &[PendingOperand<'_>],
) -> PResult<()> {
    let mut rest = pending;
    for instr in instructions {
        let (operands, after) = rest.split_at(instr.operands.len());
        rest = after;
        for (id, operand) in instr.operands.iter().zip(operands) {
            let Some(declared) = &operand.declared_shape else {
                continue;
            };
            let actual = &instructions[id.0].shape;
            if !declared.compatible_with_layouts(actual) {
                return Err(Diagnostic::new(
                    operand.span,
                    format!(
                        "operand declared as {declared} but '{}' has shape {actual}",
                        operand.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> PResult<HloModule> {
        parse_module(&SourceFile::new("t.hlo", text))
    }

    fn error(text: &str) -> String {
        let source = SourceFile::new("t.hlo", text);
        parse_module(&source).unwrap_err().render(&source)
    }

    #[test]
    fn bare_fusion_computation() {
        let module =
            parse("fusion {\n  p0 = f32[256] parameter(0)\n  ROOT a = f32[256] acos(p0)\n}\n")
                .unwrap();
        assert!(module.header.is_none());
        let fusion = module.entry_computation();
        assert_eq!(fusion.name, "fusion");
        assert_eq!(fusion.root_instruction().opcode, Opcode::Acos);
        assert_eq!(fusion.root_instruction().operands, vec![InstrId(0)]);
    }

    #[test]
    fn module_with_entry_typed_operands_and_forward_references() {
        let module = parse(
            "HloModule m, entry_computation_layout={(f32[2]{0})->f32[2]{0}}\n\
             add { x = f32[] parameter(0) y = f32[] parameter(1) ROOT s = f32[] add(x, y) }\n\
             ENTRY %main (p: f32[2]) -> f32[2] {\n\
               ROOT %n = f32[2]{0} negate(f32[2]{0} %p)\n\
               %p = f32[2]{0} parameter(0), metadata={op_name=\"a\" source_line=3}\n\
             }\n",
        )
        .unwrap();
        assert_eq!(module.entry, ComputationId(1));
        let main = module.entry_computation();
        assert_eq!(main.root, InstrId(0));
        assert_eq!(main.instructions[0].operands, vec![InstrId(1)]);
        assert_eq!(
            main.instructions[1].attribute("metadata").unwrap().value,
            AttrValue::Raw("{op_name=\"a\" source_line=3}".into())
        );
    }

    #[test]
    fn attributes_are_structured() {
        let module = parse(
            "c { p = f32[4,6] parameter(0) z = f32[] constant(0)\n\
               s = f32[2,3] slice(p), slice={[0:4:2], [1:4]}\n\
               ROOT q = f32[5,9] pad(s, z), padding=1_2x0_-1_3 }",
        )
        .unwrap();
        let c = module.entry_computation();
        assert_eq!(
            c.instructions[2].attribute("slice").unwrap().value,
            AttrValue::Slice(vec![
                SliceDim {
                    start: 0,
                    limit: 4,
                    stride: 2
                },
                SliceDim {
                    start: 1,
                    limit: 4,
                    stride: 1
                },
            ])
        );
        assert_eq!(
            c.instructions[3].attribute("padding").unwrap().value,
            AttrValue::Padding(vec![
                PadDim {
                    low: 1,
                    high: 2,
                    interior: 0
                },
                PadDim {
                    low: 0,
                    high: -1,
                    interior: 3
                },
            ])
        );
    }

    #[test]
    fn literals_follow_the_shape() {
        let module = parse(
            "c { a = s32[3,1] constant({{1}, {3}, {5}})\n\
                 b = f32[] constant(-inf)\n\
                 d = c64[1] constant({(2.0, 0.5)})\n\
                 ROOT t = (pred[], u8[2]) constant((true, {0, 255})) }",
        )
        .unwrap();
        let c = module.entry_computation();
        let lit = |i: usize| c.instructions[i].literal().unwrap().to_string();
        assert_eq!(lit(0), "{ {1}, {3}, {5} }");
        assert_eq!(lit(1), "-inf");
        assert_eq!(lit(2), "{(2, 0.5)}");
        assert_eq!(lit(3), "(true, {0, 255})");
    }

    #[test]
    fn every_primitive_type_parses_and_prints_back() {
        let names = [
            "pred",
            "s1",
            "s2",
            "s4",
            "s8",
            "s16",
            "s32",
            "s64",
            "u1",
            "u2",
            "u4",
            "u8",
            "u16",
            "u32",
            "u64",
            "f16",
            "bf16",
            "f32",
            "f64",
            "f4e2m1fn",
            "f8e3m4",
            "f8e4m3",
            "f8e4m3fn",
            "f8e4m3b11fnuz",
            "f8e4m3fnuz",
            "f8e5m2",
            "f8e5m2fnuz",
            "f8e8m0fnu",
            "c64",
            "c128",
        ];
        let mut text = String::from("c {\n");
        for (i, name) in names.iter().enumerate() {
            text.push_str(&format!("  p{i} = {name}[2,3]{{1,0}} parameter({i})\n"));
        }
        text.push_str("  ROOT t = token[] after-all()\n}\n");
        let module = parse(&text).unwrap();
        assert_eq!(module.to_string(), text);
        let c = module.entry_computation();
        for (instr, name) in c.instructions.iter().zip(names) {
            let ty = instr.shape.as_array().unwrap().element_type;
            assert_eq!(ty.name(), name);
        }
    }

    #[test]
    fn tiled_layouts_parse() {
        let module = parse(
            "c { ROOT p = f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)(2,1)E(32)S(1)} parameter(0) }",
        )
        .unwrap();
        let shape = &module.entry_computation().instructions[0].shape;
        let layout = shape.as_array().unwrap().layout.clone().unwrap();
        assert_eq!(layout.tiles[0].dims, vec![-1, -1, 2, -1, 3]);
        assert_eq!(layout.tiles[1].dims, vec![2, 1]);
        assert_eq!(layout.memory_space, 1);
    }

    #[test]
    fn errors_point_at_the_problem() {
        assert_eq!(
            error("c {\n  ROOT x = f32[] frobnicate()\n}"),
            "t.hlo:2:18: error: unknown opcode 'frobnicate'\n  ROOT x = f32[] frobnicate()\n                 ^~~~~~~~~~"
        );
        assert!(
            error("c { ROOT x = f32[] negate(y) }").contains("use of undefined instruction 'y'")
        );
        assert!(error("c { ROOT x = s8[] constant(300) }").contains("300 is out of range for s8"));
        assert!(error("c { ROOT x = f32[2] constant({1}) }").contains("literal has 1 elements"));
        assert!(error("c { ROOT x = f32[] parameter(0)").contains("found end of file"));
        assert!(
            error("c { ROOT x = f32[] fusion(), calls=nope }")
                .contains("unknown computation 'nope'")
        );
        assert!(error("c { ROOT x = f32[] compare(), direction=XX }").contains("one of EQ"));
        assert!(error("c { a = f32[] negate(b) ROOT b = f32[] negate(a) }").contains("cycle"));
        assert!(
            error("c { p = f32[2] parameter(0) ROOT n = f32[2] negate(f32[3] p) }")
                .contains("operand declared as f32[3] but 'p' has shape f32[2]")
        );
    }
}
