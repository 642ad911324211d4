//! The Python call stacks XLA prints with a module: the `FileNames`, `FunctionNames`,
//! `FileLocations` and `StackFrames` tables after the `HloModule` line, which instructions
//! point into with `metadata={... stack_frame_id=N}`.
//!
//! JAX records, for every op it stages out, the Python frames that built it; XLA keeps them
//! through its passes and prints them as four tables of 1-based entries:
//!
//! ```text
//! FileNames
//! 1 "model.py"
//! FunctionNames
//! 1 "layer_norm"
//! FileLocations
//! 1 {file_name_id=1 function_name_id=1 line=57 end_line=57 column=14 end_column=68}
//! StackFrames
//! 1 {file_location_id=1 parent_frame_id=1}
//! ```
//!
//! `parent_frame_id` is printed one above the parent's id, so a frame with none prints 1 (or
//! 0): read off XLA's printed modules, where a root frame prints its own id and the frames
//! of one function's lines all print the id above their caller's. The module keeps the
//! tables as they are (`--emit=hlo` prints them back) and resolves an instruction's frame to
//! its Python call stack, which diagnostics show as notes.

use std::fmt;

/// The four tables; each entry's id is its index plus one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StackFrameIndex {
    pub file_names: Vec<String>,
    pub function_names: Vec<String>,
    pub file_locations: Vec<FileLocation>,
    pub frames: Vec<StackFrame>,
}

/// A source range in a Python function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileLocation {
    pub file_name_id: u64,
    pub function_name_id: u64,
    pub line: u64,
    pub end_line: u64,
    pub column: u64,
    pub end_column: u64,
}

/// A frame: where, and the frame that called it (as printed: see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StackFrame {
    pub file_location_id: u64,
    pub parent_frame_id: u64,
}

/// One frame of a call stack, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFrame<'a> {
    pub file: &'a str,
    pub function: &'a str,
    pub line: u64,
    pub column: u64,
}

impl fmt::Display for SourceFrame<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{} in {}",
            self.file, self.line, self.column, self.function
        )
    }
}

impl StackFrameIndex {
    pub fn is_empty(&self) -> bool {
        self.file_names.is_empty()
            && self.function_names.is_empty()
            && self.file_locations.is_empty()
            && self.frames.is_empty()
    }

    /// The first reference to an entry that does not exist, as (table, entry id, field,
    /// value): checked once after parsing, so that [`StackFrameIndex::call_stack`] can
    /// index without failing.
    pub fn dangling_reference(&self) -> Option<(&'static str, usize, &'static str, u64)> {
        let exists = |len: usize, id: u64| (1..=len as u64).contains(&id);
        // Each entry's references as (field, value, whether it resolves).
        let locations: Vec<[(&'static str, u64, bool); 2]> = self
            .file_locations
            .iter()
            .map(|l| {
                let (file, function) = (l.file_name_id, l.function_name_id);
                [
                    ("file_name_id", file, exists(self.file_names.len(), file)),
                    (
                        "function_name_id",
                        function,
                        exists(self.function_names.len(), function),
                    ),
                ]
            })
            .collect();
        let frames = self.frames.iter().map(|frame| {
            let (location, parent) = (frame.file_location_id, frame.parent_frame_id);
            [
                (
                    "file_location_id",
                    location,
                    exists(self.file_locations.len(), location),
                ),
                // A root frame prints 0, 1 or its own id: see the module documentation.
                (
                    "parent_frame_id",
                    parent,
                    parent <= 1 || exists(self.frames.len(), parent - 1),
                ),
            ]
        });
        for (table, entries) in [
            ("FileLocations", locations),
            ("StackFrames", frames.collect()),
        ] {
            for (i, references) in entries.iter().enumerate() {
                if let Some(&(field, value, _)) = references.iter().find(|r| !r.2) {
                    return Some((table, i + 1, field, value));
                }
            }
        }
        None
    }

    /// The call stack of frame `id`, innermost first; empty for an id that is not in the
    /// table. At most as many frames as the table holds, so a cycle of parents ends.
    pub fn call_stack(&self, id: u64) -> Vec<SourceFrame<'_>> {
        let mut stack = Vec::new();
        let mut id = id;
        while id >= 1 && (id as usize) <= self.frames.len() && stack.len() < self.frames.len() {
            let frame = self.frames[id as usize - 1];
            let Some(location) = self
                .file_locations
                .get((frame.file_location_id as usize).wrapping_sub(1))
            else {
                break;
            };
            stack.push(SourceFrame {
                file: entry(&self.file_names, location.file_name_id),
                function: entry(&self.function_names, location.function_name_id),
                line: location.line,
                column: location.column,
            });
            // A root frame prints its own id (or 0, 1): no parent.
            if frame.parent_frame_id <= 1 || frame.parent_frame_id - 1 == id {
                break;
            }
            id = frame.parent_frame_id - 1;
        }
        stack
    }
}

impl fmt::Display for StackFrameIndex {
    /// The tables as XLA prints them (nothing for an empty index).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return Ok(());
        }
        let quoted_names = |names: &[String]| names.iter().map(|n| quoted(n)).collect::<Vec<_>>();
        write_table(f, "FileNames", quoted_names(&self.file_names))?;
        writeln!(f)?;
        write_table(f, "FunctionNames", quoted_names(&self.function_names))?;
        writeln!(f)?;
        write_table(f, "FileLocations", &self.file_locations)?;
        writeln!(f)?;
        write_table(f, "StackFrames", &self.frames)
    }
}

/// A table as XLA prints it: its title, then its entries numbered from 1.
fn write_table(
    f: &mut fmt::Formatter<'_>,
    title: &str,
    entries: impl IntoIterator<Item = impl fmt::Display>,
) -> fmt::Result {
    writeln!(f, "{title}")?;
    for (i, entry) in entries.into_iter().enumerate() {
        writeln!(f, "{} {entry}", i + 1)?;
    }
    Ok(())
}

impl fmt::Display for FileLocation {
    /// The entry as XLA prints it in the `FileLocations` table.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{{file_name_id={} function_name_id={} line={} end_line={} column={} end_column={}}}",
            self.file_name_id,
            self.function_name_id,
            self.line,
            self.end_line,
            self.column,
            self.end_column
        )
    }
}

impl fmt::Display for StackFrame {
    /// The entry as XLA prints it in the `StackFrames` table.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{{file_location_id={} parent_frame_id={}}}",
            self.file_location_id, self.parent_frame_id
        )
    }
}

/// Entry `id` (1-based) of a name table.
fn entry(table: &[String], id: u64) -> &str {
    table
        .get((id as usize).wrapping_sub(1))
        .map_or("?", String::as_str)
}

/// `s` as an HLO string literal.
fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> StackFrameIndex {
        let location = |line, function_name_id| FileLocation {
            file_name_id: 1,
            function_name_id,
            line,
            end_line: line,
            column: 4,
            end_column: 9,
        };
        StackFrameIndex {
            file_names: vec!["model.py".into()],
            function_names: vec!["main".into(), "layer_norm".into()],
            file_locations: vec![location(10, 1), location(3, 2), location(4, 2)],
            // As XLA prints them: 1 is the root, 2 and 3 are two lines called from 1.
            frames: vec![
                StackFrame {
                    file_location_id: 1,
                    parent_frame_id: 1,
                },
                StackFrame {
                    file_location_id: 2,
                    parent_frame_id: 2,
                },
                StackFrame {
                    file_location_id: 3,
                    parent_frame_id: 2,
                },
            ],
        }
    }

    #[test]
    fn call_stacks_follow_the_printed_parents() {
        let index = index();
        let shown: Vec<String> = index.call_stack(3).iter().map(|f| f.to_string()).collect();
        assert_eq!(
            shown,
            ["model.py:4:4 in layer_norm", "model.py:10:4 in main"]
        );
        assert_eq!(index.call_stack(1).len(), 1);
        assert!(index.call_stack(9).is_empty());
        assert_eq!(index.dangling_reference(), None);
    }

    #[test]
    fn dangling_references_and_cycles_are_caught() {
        let mut index = index();
        index.frames[2].parent_frame_id = 9;
        assert_eq!(
            index.dangling_reference(),
            Some(("StackFrames", 3, "parent_frame_id", 9))
        );
        // 2 -> 3 -> 2: the walk stops after as many frames as the table has.
        index.frames[1].parent_frame_id = 4;
        index.frames[2].parent_frame_id = 3;
        assert_eq!(index.call_stack(2).len(), 3);
    }
}
