//! Tokens of MLIR's textual syntax, lexed on demand from a byte cursor (the parser also reads
//! raw characters where MLIR's grammar is not token-based, e.g. `4x?xf32` in shapes).

/// A token. Prefixed identifiers carry their text without the sigil.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Token<'a> {
    Eof,
    /// `[a-zA-Z_][a-zA-Z0-9_$.]*`: keywords, op names, types.
    Bare(&'a str),
    /// `%name`
    Percent(&'a str),
    /// `^bb0`
    Caret(&'a str),
    /// `@name`
    At(&'a str),
    /// `@"quoted name"` (raw text between the quotes)
    AtString(&'a str),
    /// `#name` or `#dialect.attr`
    Hash(&'a str),
    /// `!dialect.type` or `!alias`
    Bang(&'a str),
    /// A decimal or `0x` hex integer (no sign).
    Int(&'a str),
    /// A float literal with a `.` (no sign).
    Float(&'a str),
    /// A string literal (raw text between the quotes; escapes not decoded).
    Str(&'a str),
    /// One of `( ) [ ] { } < > , : = ? * + -`.
    Punct(u8),
    /// `->`
    Arrow,
    /// A character that starts no token, or an unterminated string.
    Error(&'static str),
}

impl Token<'_> {
    /// How the token reads in an error message.
    pub fn describe(&self) -> String {
        match self {
            Token::Eof => "end of file".into(),
            Token::Bare(s) => format!("'{s}'"),
            Token::Percent(s) => format!("'%{s}'"),
            Token::Caret(s) => format!("'^{s}'"),
            Token::At(s) => format!("'@{s}'"),
            Token::AtString(s) => format!("'@\"{s}\"'"),
            Token::Hash(s) => format!("'#{s}'"),
            Token::Bang(s) => format!("'!{s}'"),
            Token::Int(s) | Token::Float(s) => format!("'{s}'"),
            Token::Str(s) => format!("'\"{s}\"'"),
            Token::Punct(c) => format!("'{}'", *c as char),
            Token::Arrow => "'->'".into(),
            Token::Error(e) => (*e).into(),
        }
    }
}

pub(crate) fn is_bare_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

pub(crate) fn is_bare_continue(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.')
}

fn is_suffix_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.' | b'-')
}

/// Skips whitespace and `//` comments from `pos`.
pub(crate) fn skip_trivia(bytes: &[u8], mut pos: usize) -> usize {
    loop {
        match bytes.get(pos) {
            Some(b' ' | b'\t' | b'\n' | b'\r') => pos += 1,
            Some(b'/') if bytes.get(pos + 1) == Some(&b'/') => {
                while pos < bytes.len() && bytes[pos] != b'\n' {
                    pos += 1;
                }
            }
            _ => return pos,
        }
    }
}

fn scan_while(bytes: &[u8], mut pos: usize, f: impl Fn(u8) -> bool) -> usize {
    while pos < bytes.len() && f(bytes[pos]) {
        pos += 1;
    }
    pos
}

/// Scans a string literal starting at the opening quote; returns the end (after the closing
/// quote) or `None` if unterminated.
pub(crate) fn scan_string(bytes: &[u8], start: usize) -> Option<usize> {
    let mut pos = start + 1;
    while pos < bytes.len() {
        match bytes[pos] {
            b'"' => return Some(pos + 1),
            b'\\' => pos += 2,
            b'\n' => return None,
            _ => pos += 1,
        }
    }
    None
}

/// Lexes one token at `start` (trivia already skipped); returns it and its end.
pub(crate) fn lex<'a>(src: &'a str, start: usize) -> (Token<'a>, usize) {
    let bytes = src.as_bytes();
    let Some(&c) = bytes.get(start) else {
        return (Token::Eof, start);
    };
    let text = |from: usize, to: usize| &src[from..to];
    match c {
        b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'<' | b'>' | b',' | b':' | b'=' | b'?'
        | b'*' | b'+' => (Token::Punct(c), start + 1),
        b'-' => {
            if bytes.get(start + 1) == Some(&b'>') {
                (Token::Arrow, start + 2)
            } else {
                (Token::Punct(b'-'), start + 1)
            }
        }
        b'"' => match scan_string(bytes, start) {
            Some(end) => (Token::Str(text(start + 1, end - 1)), end),
            None => (Token::Error("unterminated string literal"), bytes.len()),
        },
        b'%' | b'^' | b'#' | b'!' => {
            let end = if bytes.get(start + 1).is_some_and(u8::is_ascii_digit) {
                scan_while(bytes, start + 1, |b| b.is_ascii_digit())
            } else {
                scan_while(bytes, start + 1, is_suffix_char)
            };
            if end == start + 1 {
                return (Token::Error("invalid identifier after sigil"), start + 1);
            }
            let s = text(start + 1, end);
            let tok = match c {
                b'%' => Token::Percent(s),
                b'^' => Token::Caret(s),
                b'#' => Token::Hash(s),
                _ => Token::Bang(s),
            };
            (tok, end)
        }
        b'@' => {
            if bytes.get(start + 1) == Some(&b'"') {
                match scan_string(bytes, start + 1) {
                    Some(end) => (Token::AtString(text(start + 2, end - 1)), end),
                    None => (Token::Error("unterminated string literal"), bytes.len()),
                }
            } else if bytes.get(start + 1).is_some_and(|&b| is_bare_start(b)) {
                let end = scan_while(bytes, start + 1, is_bare_continue);
                (Token::At(text(start + 1, end)), end)
            } else {
                (Token::Error("invalid symbol name"), start + 1)
            }
        }
        b'0'..=b'9' => {
            if c == b'0'
                && bytes.get(start + 1) == Some(&b'x')
                && bytes.get(start + 2).is_some_and(u8::is_ascii_hexdigit)
            {
                let end = scan_while(bytes, start + 2, |b| b.is_ascii_hexdigit());
                return (Token::Int(text(start, end)), end);
            }
            let mut end = scan_while(bytes, start, |b| b.is_ascii_digit());
            if bytes.get(end) != Some(&b'.') {
                return (Token::Int(text(start, end)), end);
            }
            end = scan_while(bytes, end + 1, |b| b.is_ascii_digit());
            if matches!(bytes.get(end), Some(b'e' | b'E')) {
                let mut e = end + 1;
                if matches!(bytes.get(e), Some(b'+' | b'-')) {
                    e += 1;
                }
                if bytes.get(e).is_some_and(u8::is_ascii_digit) {
                    end = scan_while(bytes, e, |b| b.is_ascii_digit());
                }
            }
            (Token::Float(text(start, end)), end)
        }
        _ if is_bare_start(c) => {
            let end = scan_while(bytes, start, is_bare_continue);
            (Token::Bare(text(start, end)), end)
        }
        _ => (Token::Error("unexpected character"), start + 1),
    }
}

/// Decodes the escapes of a string literal's raw text (`\"`, `\\`, `\n`, `\t`, `\XX`).
pub(crate) fn unescape(raw: &str) -> Result<String, &'static str> {
    if !raw.contains('\\') {
        return Ok(raw.to_owned());
    }
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        match bytes.get(i + 1) {
            Some(b'"') => out.push(b'"'),
            Some(b'\\') => out.push(b'\\'),
            Some(b'n') => out.push(b'\n'),
            Some(b't') => out.push(b'\t'),
            Some(&h) if h.is_ascii_hexdigit() => {
                let l = *bytes.get(i + 2).ok_or("invalid escape sequence")?;
                let hex = [h, l];
                let s = std::str::from_utf8(&hex).map_err(|_| "invalid escape sequence")?;
                out.push(u8::from_str_radix(s, 16).map_err(|_| "invalid escape sequence")?);
                i += 3;
                continue;
            }
            _ => return Err("unknown escape in string literal"),
        }
        i += 2;
    }
    String::from_utf8(out).map_err(|_| "string literal is not valid UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(src: &str) -> Vec<Token<'_>> {
        let mut out = Vec::new();
        let mut pos = 0;
        loop {
            pos = skip_trivia(src.as_bytes(), pos);
            let (t, end) = lex(src, pos);
            if t == Token::Eof {
                return out;
            }
            out.push(t);
            pos = end;
        }
    }

    #[test]
    fn lexes_mlir_tokens() {
        assert_eq!(
            tokens(
                r#"%x#1 = "arith.addf"(%a) // comment
                ^bb0 @f @"q r" #map !llvm.ptr 0x7F 1.5e-3 -> - 42"#
            ),
            vec![
                Token::Percent("x"),
                Token::Hash("1"),
                Token::Punct(b'='),
                Token::Str("arith.addf"),
                Token::Punct(b'('),
                Token::Percent("a"),
                Token::Punct(b')'),
                Token::Caret("bb0"),
                Token::At("f"),
                Token::AtString("q r"),
                Token::Hash("map"),
                Token::Bang("llvm.ptr"),
                Token::Int("0x7F"),
                Token::Float("1.5e-3"),
                Token::Arrow,
                Token::Punct(b'-'),
                Token::Int("42"),
            ]
        );
        assert_eq!(unescape(r"a\22b\0A\\").unwrap(), "a\"b\n\\");
    }
}
