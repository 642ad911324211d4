//! Parsing the stack-frame tables XLA prints after the `HloModule` line (see
//! [`crate::stack_frames`]).

use super::{PResult, Parser};
use crate::diag::{Diagnostic, Span};
use crate::lexer::{self, TokenKind};
use crate::stack_frames::{FileLocation, StackFrame, StackFrameIndex};

/// `{key=N ...}` read by `$parser` ([`Parser::int_fields`]) into the struct `$ty`, whose
/// fields are the keys: each key is written once, as its field's name.
macro_rules! int_fields_struct {
    ($parser:expr, $ty:ident { $($field:ident),* $(,)? }) => {{
        let [$($field),*] = $parser.int_fields([$(stringify!($field)),*])?;
        $ty { $($field),* }
    }};
}

/// The tables in the order XLA prints them; each may be absent.
const TABLES: [&str; 4] = ["FileNames", "FunctionNames", "FileLocations", "StackFrames"];

impl Parser<'_> {
    /// The stack-frame tables, when the module has them (an empty index otherwise). Every
    /// reference between them is checked, with the error at the entry that makes it.
    pub(super) fn stack_frame_tables(&mut self) -> PResult<StackFrameIndex> {
        let mut index = StackFrameIndex::default();
        // The spans of each table's entries, for errors about references.
        let mut spans: [Vec<Span>; 4] = Default::default();
        let mut next_table = 0;
        while self.at(TokenKind::Ident) && self.peek_nth_kind(1) == TokenKind::Int {
            let Some(table) = TABLES.iter().position(|&t| t == self.peek_text()) else {
                break;
            };
            if table < next_table {
                return Err(Diagnostic::new(
                    self.peek().span,
                    format!(
                        "'{}' after '{}': XLA prints the tables once each, in the order {}",
                        TABLES[table],
                        TABLES[next_table - 1],
                        TABLES.join(", ")
                    ),
                ));
            }
            next_table = table + 1;
            self.bump();
            while self.at(TokenKind::Int) {
                let start = self.peek().span;
                let id = self.int()?;
                let expected = spans[table].len() as i64 + 1;
                if id != expected {
                    return Err(Diagnostic::new(
                        start,
                        format!("entry {id} of {}: expected entry {expected}", TABLES[table]),
                    ));
                }
                match table {
                    0 => index.file_names.push(self.string()?),
                    1 => index.function_names.push(self.string()?),
                    2 => index.file_locations.push(self.file_location()?),
                    _ => index.frames.push(self.stack_frame()?),
                }
                spans[table].push(self.span_from(start));
            }
        }
        if let Some((table, id, field, value)) = index.dangling_reference() {
            let which = TABLES.iter().position(|&t| t == table).unwrap_or(0);
            return Err(Diagnostic::new(
                spans[which][id - 1],
                format!("{field}={value} of {table} entry {id} refers to no entry"),
            ));
        }
        Ok(index)
    }

    fn string(&mut self) -> PResult<String> {
        if !self.at(TokenKind::Str) {
            return Err(self.error_expected("a string"));
        }
        Ok(lexer::unescape(self.bump_text()))
    }

    /// `{key=N key=N ...}` with exactly `keys`, in any order.
    fn int_fields<const N: usize>(&mut self, keys: [&str; N]) -> PResult<[u64; N]> {
        let start = self.expect(TokenKind::LBrace)?.span;
        let mut values = [None; N];
        while self.eat(TokenKind::RBrace).is_none() {
            let key_span = self.peek().span;
            let (key, _) = self.name("a field name")?;
            let Some(k) = keys.iter().position(|&k| k == key) else {
                return Err(Diagnostic::new(
                    key_span,
                    format!("unknown field '{key}' (expected {})", keys.join(", ")),
                ));
            };
            self.expect(TokenKind::Equal)?;
            values[k] = Some(self.non_negative_int(&key)? as u64);
        }
        let mut out = [0; N];
        for (k, (slot, value)) in out.iter_mut().zip(values).enumerate() {
            *slot = value.ok_or_else(|| {
                Diagnostic::new(
                    self.span_from(start),
                    format!("missing field '{}'", keys[k]),
                )
            })?;
        }
        Ok(out)
    }

    fn file_location(&mut self) -> PResult<FileLocation> {
        Ok(int_fields_struct!(
            self,
            FileLocation {
                file_name_id,
                function_name_id,
                line,
                end_line,
                column,
                end_column,
            }
        ))
    }

    fn stack_frame(&mut self) -> PResult<StackFrame> {
        Ok(int_fields_struct!(
            self,
            StackFrame {
                file_location_id,
                parent_frame_id,
            }
        ))
    }
}
