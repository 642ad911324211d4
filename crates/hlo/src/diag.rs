//! Source locations and diagnostics.
//!
//! Every error the frontend reports points into the source text, so a user sees
//! `file:line:col: error: ...`, the offending line and a caret, the way clang and
//! mlir-opt report errors. Spans are byte ranges; line/column are computed only when a
//! diagnostic is rendered, which keeps the lexer and parser free of bookkeeping.

use std::fmt;

/// A half-open byte range `[start, end)` in one source file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// A source text with its name, for turning spans into line/column positions.
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    line_starts: Vec<usize>,
    /// Lines of the named file before `text` (a piece of a `--split-input-file` input):
    /// positions are the whole file's.
    lines_before: usize,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        SourceFile {
            name: name.into(),
            text,
            line_starts,
            lines_before: 0,
        }
    }

    /// The same text as a piece of its file that starts after `lines_before` lines.
    pub fn after_lines(mut self, lines_before: usize) -> SourceFile {
        self.lines_before = lines_before;
        self
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line];
        let col = self.text[start..floor_char_boundary(&self.text, offset)]
            .chars()
            .count();
        (self.lines_before + line + 1, col + 1)
    }

    /// The text of a 1-based line of the file (as [`SourceFile::line_col`] counts), without
    /// its newline.
    pub fn line_text(&self, line: usize) -> &str {
        let line = line - self.lines_before;
        let start = self.line_starts[line - 1];
        let end = self
            .line_starts
            .get(line)
            .map_or(self.text.len(), |&next| next - 1);
        self.text[start..end].trim_end_matches('\r')
    }
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// One error, located in the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub span: Span,
    pub message: String,
    /// Lines printed after the source line as `note: ...` (such as the Python frames that
    /// built the instruction).
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn new(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            span,
            message: message.into(),
            notes: Vec::new(),
        }
    }

    /// Renders `file:line:col: error: message`, the source line and a caret under the
    /// start of the span (tildes under the rest of it when it stays on the same line).
    pub fn render(&self, source: &SourceFile) -> String {
        let (line, col) = source.line_col(self.span.start as usize);
        let text = source.line_text(line);
        let (end_line, end_col) = source.line_col(self.span.end as usize);
        let width = if end_line == line && end_col > col {
            end_col - col
        } else {
            1
        };
        let pad: String = text
            .chars()
            .take(col - 1)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        let mut out = format!(
            "{}:{line}:{col}: error: {}\n{text}\n{pad}^{}",
            source.name,
            self.message,
            "~".repeat(width - 1)
        );
        for note in &self.notes {
            out.push_str("\nnote: ");
            out.push_str(note);
        }
        out
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Diagnostic {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_from_one() {
        let file = SourceFile::new("a.hlo", "ab\ncd\n");
        assert_eq!(file.line_col(0), (1, 1));
        assert_eq!(file.line_col(1), (1, 2));
        assert_eq!(file.line_col(3), (2, 1));
        assert_eq!(file.line_col(6), (3, 1));
    }

    /// The line and a caret under the span; at the end of the file, a caret past the text.
    #[test]
    fn render_shows_line_and_caret() {
        for (text, span, message, rendered) in [
            (
                "x = f32[] foo()\n",
                Span::new(10, 13),
                "unknown opcode 'foo'",
                "a.hlo:1:11: error: unknown opcode 'foo'\nx = f32[] foo()\n          ^~~",
            ),
            (
                "abc",
                Span::new(3, 3),
                "unexpected end of file",
                "a.hlo:1:4: error: unexpected end of file\nabc\n   ^",
            ),
        ] {
            let file = SourceFile::new("a.hlo", text);
            let diag = Diagnostic::new(span, message);
            assert_eq!(diag.render(&file), rendered, "{message}");
        }
    }
}
