//! Indexing maps (DESIGN §4): which input element each output element of an op or a
//! fusion reads, as affine maps with domains.

pub mod expr;
pub mod hlo_indexing;
pub mod map;

pub use expr::{AffineExpr, cst, dim, sym};
pub use map::{IndexingMap, Interval, Variable};
