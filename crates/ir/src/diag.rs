//! Diagnostics: `file:line:col: error: message`, with optional notes, as `mlir-opt` prints
//! them.

use std::fmt;
use std::sync::Arc;

/// A source position (1-based line and column); `line == 0` means unknown.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Loc {
    pub line: u32,
    pub col: u32,
}

impl Loc {
    pub const UNKNOWN: Loc = Loc { line: 0, col: 0 };

    pub fn new(line: u32, col: u32) -> Loc {
        Loc { line, col }
    }

    pub fn is_known(self) -> bool {
        self.line != 0
    }
}

/// An error from the parser or the verifier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The source name (`gelu.mlir`, `<stdin>`).
    pub file: Arc<str>,
    pub loc: Loc,
    pub message: String,
    /// Further locations that explain the error (`operand defined here`).
    pub notes: Vec<(Loc, String)>,
}

impl Diagnostic {
    pub fn new(file: Arc<str>, loc: Loc, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            file,
            loc,
            message: message.into(),
            notes: Vec::new(),
        }
    }

    pub fn with_note(mut self, loc: Loc, note: impl Into<String>) -> Diagnostic {
        self.notes.push((loc, note.into()));
        self
    }

    /// The diagnostic with the offending source line and a caret under the column after the
    /// error and after each note, as `mlir-opt` prints them.
    pub fn render(&self, source: &str) -> String {
        let mut out = String::new();
        let mut part = |loc: Loc, severity: &str, message: &str| {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&Located(&self.file, loc, severity, message).to_string());
            out.push_str(&excerpt(source, loc));
        };
        part(self.loc, "error", &self.message);
        for (loc, note) in &self.notes {
            part(*loc, "note", note);
        }
        out
    }
}

/// `\n<source line>\n<caret under the column>` for a known location inside `source`, else
/// nothing. `split`, not `lines`: an error at the end of a file that ends in a newline is on
/// the empty line after it, and still gets its (empty) line and caret.
fn excerpt(source: &str, loc: Loc) -> String {
    let Some(line) = loc
        .is_known()
        .then(|| source.split('\n').nth(loc.line as usize - 1))
        .flatten()
    else {
        return String::new();
    };
    let indent: String = line
        .chars()
        .take((loc.col as usize).saturating_sub(1))
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    format!("\n{line}\n{indent}^")
}

/// One located line: `file:line:col: severity: message`.
struct Located<'a>(&'a str, Loc, &'a str, &'a str);

impl fmt::Display for Located<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_located(f, self.0, self.1, self.2, self.3)
    }
}

fn write_located(
    f: &mut fmt::Formatter<'_>,
    file: &str,
    loc: Loc,
    severity: &str,
    message: &str,
) -> fmt::Result {
    if loc.is_known() {
        write!(f, "{file}:{}:{}: {severity}: {message}", loc.line, loc.col)
    } else {
        write!(f, "{file}: {severity}: {message}")
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_located(f, &self.file, self.loc, "error", &self.message)?;
        for (loc, note) in &self.notes {
            f.write_str("\n")?;
            write_located(f, &self.file, *loc, "note", note)?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostic {}

/// Result of parsing or verifying.
pub type DResult<T> = Result<T, Diagnostic>;

/// A parser's message is one line, with the source line and caret after it: a line break
/// in quoted IR (an unknown attribute's balanced text may span lines) folds with the
/// indentation after it into one space.
pub(crate) fn one_line(message: String) -> String {
    if !message.contains('\n') {
        return message;
    }
    let mut out = String::with_capacity(message.len());
    for (i, line) in message.split('\n').enumerate() {
        if i == 0 {
            out.push_str(line.trim_end());
        } else {
            out.push(' ');
            out.push_str(line.trim());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_mlir_opt() {
        let d = Diagnostic::new(
            "t.mlir".into(),
            Loc::new(3, 5),
            "use of undeclared SSA value name",
        )
        .with_note(Loc::new(1, 1), "defined here");
        assert_eq!(
            d.to_string(),
            "t.mlir:3:5: error: use of undeclared SSA value name\nt.mlir:1:1: note: defined here"
        );
        assert_eq!(
            Diagnostic::new("t.mlir".into(), Loc::new(2, 3), "bad").render("a\n  xyz\n"),
            "t.mlir:2:3: error: bad\n  xyz\n  ^"
        );
        assert_eq!(
            Diagnostic::new("t".into(), Loc::UNKNOWN, "x").to_string(),
            "t: error: x"
        );
    }

    #[test]
    fn parser_messages_fold_quoted_lines() {
        assert_eq!(
            one_line("got '#a<b(%x)\n    %y = c\n  }'".to_string()),
            "got '#a<b(%x) %y = c }'"
        );
        assert_eq!(one_line("plain".to_string()), "plain");
    }
}
