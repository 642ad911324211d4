//! Indexing maps: which input element each output element of an op or a
//! fusion reads, as affine maps with domains.

pub mod compose;
pub mod expr;
pub mod hlo_indexing;
pub mod linearize;
pub mod map;
pub mod nested_layout;
pub mod parse;
pub mod print;
pub mod range;
pub mod simplify;

pub use expr::{AffineExpr, cst, dim, sym};
pub use linearize::{
    delinearize, delinearize_point, linearize, physical_offset, physical_offset_in,
};
pub use map::{IndexingMap, Interval, Variable};
pub use parse::ParseError;
