//! The HLO text lexer.
//!
//! HLO text is lexed into a flat token vector up front: the parser then looks ahead
//! freely, and a 2 MB fusion lexes in one pass over the bytes. A few HLO attribute values
//! are not ordinary tokens (`padding=0_0x1_-1`, `window={size=3x3}`, `dim_labels=b01f_01io->b01f`);
//! the lexer keeps any digit-led run that is not a number as one [`TokenKind::Word`], and
//! the parser interprets it where the attribute's grammar says what it must be.

use crate::diag::{Diagnostic, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// `[A-Za-z_][A-Za-z0-9_.-]*`: names, opcodes, keywords, primitive types.
    Ident,
    /// `%` followed by name characters; the token text keeps the `%`.
    PercentName,
    /// A decimal integer, optionally negative: `-12`.
    Int,
    /// A decimal float with a fraction or an exponent: `-1.5e-05`.
    Float,
    /// A digit-led run that is neither: `0_0x1_1`, `3x3`, `2x1`.
    Word,
    /// A double-quoted string; the token text keeps the quotes and escapes.
    Str,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    LParen,
    RParen,
    Comma,
    Equal,
    Colon,
    Star,
    Question,
    Arrow,
    Minus,
    LessEqual,
    Eof,
}

impl TokenKind {
    /// How the kind is named in "expected X" messages.
    pub fn describe(self) -> &'static str {
        match self {
            TokenKind::Ident => "identifier",
            TokenKind::PercentName => "%name",
            TokenKind::Int => "integer",
            TokenKind::Float => "number",
            TokenKind::Word => "word",
            TokenKind::Str => "string",
            TokenKind::LBrace => "'{'",
            TokenKind::RBrace => "'}'",
            TokenKind::LBracket => "'['",
            TokenKind::RBracket => "']'",
            TokenKind::LParen => "'('",
            TokenKind::RParen => "')'",
            TokenKind::Comma => "','",
            TokenKind::Equal => "'='",
            TokenKind::Colon => "':'",
            TokenKind::Star => "'*'",
            TokenKind::Question => "'?'",
            TokenKind::Arrow => "'->'",
            TokenKind::Minus => "'-'",
            TokenKind::LessEqual => "'<='",
            TokenKind::Eof => "end of file",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

/// Lexes the whole text. The last token is always [`TokenKind::Eof`].
pub fn lex(text: &str) -> Result<Vec<Token>, Diagnostic> {
    let mut lexer = Lexer::new(text);
    let mut tokens = Vec::new();
    loop {
        let token = lexer.next_token()?;
        tokens.push(token);
        if token.kind == TokenKind::Eof {
            return Ok(tokens);
        }
    }
}

/// Tokens one at a time, so that a parser holds a few of them rather than all: a file of
/// N bytes has up to N/2 tokens, 12 bytes each (a 59 MB module of short lines has 21
/// million, 250 MB when collected).
pub struct Lexer<'a> {
    text: &'a str,
    /// The byte the next token's trivia starts at.
    at: usize,
}

impl<'a> Lexer<'a> {
    pub fn new(text: &'a str) -> Lexer<'a> {
        Lexer { text, at: 0 }
    }

    /// The next token; [`TokenKind::Eof`] at the end (and again after it).
    pub fn next_token(&mut self) -> Result<Token, Diagnostic> {
        let text = self.text;
        let bytes = text.as_bytes();
        let mut i = skip_trivia(bytes, self.at)?;
        let Some(&c) = bytes.get(i) else {
            self.at = i;
            return Ok(Token {
                kind: TokenKind::Eof,
                span: Span::new(i, i),
            });
        };
        let start = i;
        let kind = match c {
            b'{' => punct(&mut i, TokenKind::LBrace),
            b'}' => punct(&mut i, TokenKind::RBrace),
            b'[' => punct(&mut i, TokenKind::LBracket),
            b']' => punct(&mut i, TokenKind::RBracket),
            b'(' => punct(&mut i, TokenKind::LParen),
            b')' => punct(&mut i, TokenKind::RParen),
            b',' => punct(&mut i, TokenKind::Comma),
            b'=' => punct(&mut i, TokenKind::Equal),
            b':' => punct(&mut i, TokenKind::Colon),
            b'*' => punct(&mut i, TokenKind::Star),
            b'?' => punct(&mut i, TokenKind::Question),
            b'<' if bytes.get(i + 1) == Some(&b'=') => {
                i += 2;
                TokenKind::LessEqual
            }
            b'-' if bytes.get(i + 1) == Some(&b'>') => {
                i += 2;
                TokenKind::Arrow
            }
            b'-' if bytes.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                i += 1;
                lex_number_or_word(bytes, &mut i, start)
            }
            b'-' => punct(&mut i, TokenKind::Minus),
            b'0'..=b'9' => lex_number_or_word(bytes, &mut i, start),
            b'%' => {
                i += 1;
                let name_start = i;
                while i < bytes.len() && is_name_byte(bytes, i) {
                    i += 1;
                }
                if i == name_start {
                    return Err(Diagnostic::new(
                        Span::new(start, start + 1),
                        "expected a name after '%'",
                    ));
                }
                TokenKind::PercentName
            }
            b'"' => {
                i = lex_string(bytes, i)?;
                TokenKind::Str
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                while i < bytes.len() && is_name_byte(bytes, i) {
                    i += 1;
                }
                TokenKind::Ident
            }
            _ => {
                let ch = text[start..].chars().next().unwrap_or('?');
                return Err(Diagnostic::new(
                    Span::new(start, start + ch.len_utf8()),
                    format!("unexpected character '{}'", ch.escape_debug()),
                ));
            }
        };
        self.at = i;
        Ok(Token {
            kind,
            span: Span::new(start, i),
        })
    }

    /// The first lexical error from here to the end of the text, if any.
    pub fn first_error(&mut self) -> Option<Diagnostic> {
        loop {
            match self.next_token() {
                Err(e) => return Some(e),
                Ok(t) if t.kind == TokenKind::Eof => return None,
                Ok(_) => {}
            }
        }
    }
}

fn punct(i: &mut usize, kind: TokenKind) -> TokenKind {
    *i += 1;
    kind
}

/// Name characters: letters, digits, `_`, `.`, and `-` unless it starts an arrow `->`.
fn is_name_byte(bytes: &[u8], i: usize) -> bool {
    match bytes[i] {
        c if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' => true,
        b'-' => bytes.get(i + 1) != Some(&b'>'),
        _ => false,
    }
}

/// Skips whitespace, `// line` and `/* block */` comments.
fn skip_trivia(bytes: &[u8], mut i: usize) -> Result<usize, Diagnostic> {
    loop {
        match bytes.get(i) {
            Some(c) if c.is_ascii_whitespace() => i += 1,
            Some(b'/') if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            Some(b'/') if bytes.get(i + 1) == Some(&b'*') => {
                let start = i;
                i += 2;
                loop {
                    match bytes.get(i) {
                        None => {
                            return Err(Diagnostic::new(
                                Span::new(start, start + 2),
                                "unterminated /* comment",
                            ));
                        }
                        Some(b'*') if bytes.get(i + 1) == Some(&b'/') => {
                            i += 2;
                            break;
                        }
                        Some(_) => i += 1,
                    }
                }
            }
            _ => return Ok(i),
        }
    }
}

/// Lexes a digit-led run starting at `*i` (after an optional `-` at `start`) and
/// classifies it. A sign inside the run is kept only where a number or a padding list can
/// have one: after an exponent `e` or a padding separator `_`/`x` (`1e-05`, `0_-1x-1_0`).
fn lex_number_or_word(bytes: &[u8], i: &mut usize, start: usize) -> TokenKind {
    while let Some(&c) = bytes.get(*i) {
        let signed_tail = (c == b'-' || c == b'+')
            && matches!(bytes[*i - 1], b'e' | b'E' | b'_' | b'x')
            && bytes.get(*i + 1).is_some_and(u8::is_ascii_digit);
        if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || signed_tail {
            *i += 1;
        } else {
            break;
        }
    }
    let text = &bytes[start..*i];
    let digits = text.strip_prefix(b"-").unwrap_or(text);
    if digits.iter().all(u8::is_ascii_digit) {
        TokenKind::Int
    } else if is_float(digits) {
        TokenKind::Float
    } else {
        TokenKind::Word
    }
}

/// `[0-9]+ ('.' [0-9]*)? ([eE] [+-]? [0-9]+)?` with a fraction or an exponent.
fn is_float(text: &[u8]) -> bool {
    let digits = |s: &[u8]| s.iter().take_while(|c| c.is_ascii_digit()).count();
    let int = digits(text);
    if int == 0 {
        return false;
    }
    let mut rest = &text[int..];
    let mut is_float = false;
    if let Some(after_dot) = rest.strip_prefix(b".") {
        rest = &after_dot[digits(after_dot)..];
        is_float = true;
    }
    if let Some(exp) = rest.strip_prefix(b"e").or_else(|| rest.strip_prefix(b"E")) {
        let exp = exp
            .strip_prefix(b"-")
            .or_else(|| exp.strip_prefix(b"+"))
            .unwrap_or(exp);
        let n = digits(exp);
        if n == 0 {
            return false;
        }
        rest = &exp[n..];
        is_float = true;
    }
    is_float && rest.is_empty()
}

/// Returns the index just past the closing quote of the string starting at `start`.
fn lex_string(bytes: &[u8], start: usize) -> Result<usize, Diagnostic> {
    let mut i = start + 1;
    loop {
        match bytes.get(i) {
            None => {
                return Err(Diagnostic::new(
                    Span::new(start, start + 1),
                    "unterminated string",
                ));
            }
            Some(b'"') => return Ok(i + 1),
            Some(b'\\') => i += 2,
            Some(_) => i += 1,
        }
    }
}

/// The value of a string token: the text between the quotes with C escapes resolved.
pub fn unescape(token_text: &str) -> String {
    let inner = &token_text[1..token_text.len() - 1];
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// Quotes a string for printing so that [`unescape`] gives it back.
pub fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(TokenKind, &str)> {
        lex(text)
            .unwrap()
            .into_iter()
            .map(|t| (t.kind, &text[t.span.start as usize..t.span.end as usize]))
            .collect()
    }

    #[test]
    fn instruction_line() {
        use TokenKind::*;
        assert_eq!(
            kinds("ROOT %add.1 = f32[2,3]{1,0} shift-right-logical(a, b)"),
            vec![
                (Ident, "ROOT"),
                (PercentName, "%add.1"),
                (Equal, "="),
                (Ident, "f32"),
                (LBracket, "["),
                (Int, "2"),
                (Comma, ","),
                (Int, "3"),
                (RBracket, "]"),
                (LBrace, "{"),
                (Int, "1"),
                (Comma, ","),
                (Int, "0"),
                (RBrace, "}"),
                (Ident, "shift-right-logical"),
                (LParen, "("),
                (Ident, "a"),
                (Comma, ","),
                (Ident, "b"),
                (RParen, ")"),
                (Eof, ""),
            ]
        );
    }

    #[test]
    fn numbers_and_words() {
        use TokenKind::*;
        assert_eq!(
            kinds("-1 1.5 -3.5233877e-06 1e5 0_0x1_-1 3x3 -inf"),
            vec![
                (Int, "-1"),
                (Float, "1.5"),
                (Float, "-3.5233877e-06"),
                (Float, "1e5"),
                (Word, "0_0x1_-1"),
                (Word, "3x3"),
                (Minus, "-"),
                (Ident, "inf"),
                (Eof, ""),
            ]
        );
    }

    #[test]
    fn arrows_end_names() {
        use TokenKind::*;
        assert_eq!(
            kinds("(f32[])->b01f_01io->b01f"),
            vec![
                (LParen, "("),
                (Ident, "f32"),
                (LBracket, "["),
                (RBracket, "]"),
                (RParen, ")"),
                (Arrow, "->"),
                (Ident, "b01f_01io"),
                (Arrow, "->"),
                (Ident, "b01f"),
                (Eof, ""),
            ]
        );
    }

    #[test]
    fn comments_are_skipped() {
        use TokenKind::*;
        assert_eq!(
            kinds("// RUN: x\na /*index=5*/ b"),
            vec![(Ident, "a"), (Ident, "b"), (Eof, "")]
        );
    }

    #[test]
    fn strings_round_trip_through_escape() {
        let value = "a \"quoted\" \\ line\nnext";
        assert_eq!(unescape(&escape(value)), value);
        assert_eq!(kinds(r#""a\"b""#)[0].0, TokenKind::Str);
    }

    #[test]
    fn errors_are_located() {
        assert_eq!(lex("a \"open").unwrap_err().span, Span::new(2, 3));
        assert_eq!(lex("a /* open").unwrap_err().span, Span::new(2, 4));
        assert_eq!(lex("a $").unwrap_err().span, Span::new(2, 3));
        assert_eq!(lex("% x").unwrap_err().span, Span::new(0, 1));
    }
}
