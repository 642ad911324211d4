//! Errors: what went wrong, at which op (name and `file:line:col`), in which thread.
//!
//! The interpreter exists to find bugs in emitters and passes, so every error names the op
//! that failed and, when it happened while executing, the block and thread that ran it:
//! `gelu.mlir:7:18: error: index 64 is out of bounds for dimension 1 of
//! tensor<2x64x16xbf16> in 'tensor.extract' (block 3, thread 17)`.

use ir::Loc;
use std::fmt;
use std::sync::Arc;

/// The kinds of failures, so that callers (and tests) can tell them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A tensor index, vector transfer or pointer access outside its buffer.
    OutOfBounds,
    /// A read of shared memory (or of a `tensor.empty` element) nothing has written.
    UninitializedRead,
    /// Threads of a block disagree about barriers: some wait at one while others exited or
    /// wait elsewhere.
    BarrierDivergence,
    /// Lanes of a warp disagree about a shuffle (different shuffles, exited lanes, lanes
    /// outside the shuffle's mask).
    WarpDivergence,
    /// Two threads wrote different values to one tensor element in one phase.
    WriteConflict,
    /// A poison value (MLIR's deferred undefined behaviour) reached a place where it matters:
    /// a branch, an index, an address or a value written to memory.
    Poison,
    /// Immediate undefined behaviour: division by zero, signed division overflow, a
    /// non-positive loop step, a value outside the range the IR promised.
    UndefinedBehavior,
    /// A load or store whose address is not aligned as the op requires.
    Misaligned,
    /// An op, type or attribute the interpreter does not execute.
    Unsupported,
    /// The arguments do not fit the kernel (count, kinds, buffer sizes).
    InvalidArgument,
    /// IR the verifier should have rejected (an undefined register, a type mismatch).
    InvalidIr,
    /// A buffer larger than the host may allocate ([`crate::HOST_BYTES_LIMIT`]).
    TooLarge,
    /// A thread ran more instructions than the step limit allows ([`crate::Kernel::with_step_limit`]):
    /// an endless loop, most likely.
    StepLimit,
}

impl ErrorKind {
    fn describe(self) -> &'static str {
        match self {
            ErrorKind::OutOfBounds => "out-of-bounds access",
            ErrorKind::UninitializedRead => "read of uninitialized memory",
            ErrorKind::BarrierDivergence => "barrier divergence",
            ErrorKind::WarpDivergence => "warp divergence",
            ErrorKind::WriteConflict => "write conflict",
            ErrorKind::Poison => "use of poison",
            ErrorKind::UndefinedBehavior => "undefined behavior",
            ErrorKind::Misaligned => "misaligned access",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::InvalidArgument => "invalid argument",
            ErrorKind::InvalidIr => "invalid IR",
            ErrorKind::TooLarge => "too large for the host",
            ErrorKind::StepLimit => "step limit reached",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// The op an error is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    /// The op's name (`tensor.extract`).
    pub op: String,
    /// The module's source name.
    pub file: Arc<str>,
    pub loc: Loc,
}

/// A simulated thread: its block and its thread index in the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadId {
    pub block: u64,
    pub thread: u64,
}

/// An interpreter error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
    /// The op that failed (none for errors about the kernel as a whole).
    pub site: Option<Site>,
    /// The thread that failed (none for errors found before execution).
    pub thread: Option<ThreadId>,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            site: None,
            thread: None,
        }
    }

    pub(crate) fn at(mut self, site: &Site) -> Error {
        if self.site.is_none() {
            self.site = Some(site.clone());
        }
        self
    }

    pub(crate) fn in_thread(mut self, thread: ThreadId) -> Error {
        if self.thread.is_none() {
            self.thread = Some(thread);
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(site) = &self.site {
            f.write_str(&site.file)?;
            if site.loc.is_known() {
                write!(f, ":{}:{}", site.loc.line, site.loc.col)?;
            }
            f.write_str(": ")?;
        }
        write!(f, "error: {}: {}", self.kind, self.message)?;
        if let Some(site) = &self.site {
            write!(f, " in '{}'", site.op)?;
        }
        if let Some(t) = self.thread {
            write!(f, " (block {}, thread {})", t.block, t.thread)?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

pub(crate) type Result<T> = std::result::Result<T, Error>;

/// Shorthand for an error of `kind` with a formatted message.
macro_rules! fail {
    ($kind:ident, $($fmt:tt)+) => {
        $crate::error::Error::new($crate::error::ErrorKind::$kind, format!($($fmt)+))
    };
}
pub(crate) use fail;
