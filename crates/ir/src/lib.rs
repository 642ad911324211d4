//! The MLIR-style IR of hlo-emit: types, attributes, ops with regions and blocks
//! in arenas, a builder, a printer and parser for MLIR's generic and custom syntax, a
//! verifier, and the op definitions of the dialects the pipeline uses.
//!
//! * [`Module`] owns ops, blocks, regions and values in arenas addressed by `Copy` ids
//!   ([`OpId`], [`BlockId`], [`RegionId`], [`Value`]); values keep use-lists, so
//!   [`Module::replace_all_uses`] and [`Module::erase_op`] cost O(uses).
//! * [`Type`] and [`Ident`] are interned in global tables (printable anywhere);
//!   [`Attribute`] is a plain value.
//! * [`Registry`] maps op names to [`OpDef`]s: traits, inherent attributes and the hooks that
//!   give an op MLIR's custom syntax and its verifier. [`dialects`] defines builtin, func,
//!   arith, math, scf, tensor, vector, gpu, llvm, nvvm (MLIR 22's syntax) and xla_gpu (the
//!   seed's syntax); other crates may register more.
//! * [`parse_module`] reads both syntaxes with `file:line:col` errors; [`Module::print`] and
//!   [`Module::print_generic`] write them; [`Module::verify`] checks types, terminators,
//!   dominance, isolation and symbols.
//!
//! **Layering.** The files form a stack with one knot. Leaves: `intern`, `lexer`, `types`,
//! `attrs`, `traits`, `diag`; above them `ods` (declarations) and the `dialects`, which
//! only register into a registry. The knot is the one MLIR has between `Operation`,
//! `OperationName` and `OpAsmPrinter`: a [`Module`] carries its [`Registry`], whose op
//! definitions hold hooks typed by the [`printer`], the [`parser`] and the [`verifier`],
//! which in turn read the module (and the printer asks the verifier whether an op may use
//! its custom form, as MLIR does). Untying it would mean type-erased hooks (`dyn Any`
//! downcasts on every print and parse), trading a compile-time check for a file graph with
//! no cycle, so `module`, `registry`, `parser`, `printer` and `verifier` stay one unit. No
//! other cycle is allowed (the `layering` test reads every file's `crate::` paths): the
//! dialects do not import each other both ways, and `ods` does not import the registry.
//!
//! ```
//! use ir::{Builder, InsertPoint, Type, parse_module};
//!
//! let mut m = parse_module(
//!     "func.func @f(%x: f32) -> f32 {
//!        %0 = arith.mulf %x, %x : f32
//!        return %0 : f32
//!      }",
//! )
//! .unwrap();
//! let f = m.lookup_symbol(m.top(), "f").unwrap();
//! let entry = m.entry_block(m.region(f, 0)).unwrap();
//! let ret = m.last_op(entry).unwrap();
//! let square = m.operand(ret, 0);
//! // return tanh(x * x)
//! let mut b = Builder::new(&mut m, InsertPoint::Before(ret));
//! let t = b.unary("math.tanh", square);
//! m.set_operand(ret, 0, t);
//! m.verify().unwrap();
//! assert_eq!(
//!     m.print(),
//!     "module {
//!   func.func @f(%x: f32) -> f32 {
//!     %0 = arith.mulf %x, %x : f32
//!     %1 = math.tanh %0 : f32
//!     return %1 : f32
//!   }
//! }
//! "
//! );
//! assert!(m.print_generic().contains(r#"%1 = "math.tanh"(%0) : (f32) -> f32"#));
//! assert_eq!(Type::tensor(&[4], Type::F32).to_string(), "tensor<4xf32>");
//! ```

pub mod attrs;
pub mod builder;
pub mod diag;
pub mod dialects;
pub mod float;
pub mod intern;
pub mod lexer;
pub mod link;
pub mod module;
pub mod narrow_float;
pub mod ods;
pub mod parser;
pub mod printer;
pub mod registry;
pub mod traits;
pub mod types;
pub mod verifier;

pub use attrs::{Attribute, DenseValues, FloatValue, NamedAttr, Scalar, SymbolRef};
pub use builder::Builder;
pub use diag::{DResult, Diagnostic};
pub use intern::Ident;
pub use module::{
    BlockId, InsertPoint, Loc, Module, OpId, OpState, RegionId, SymbolTable, Use, Value, ValueDef,
};
pub use parser::{
    Argument, Parser, UnresolvedOperand, parse_attribute, parse_module, parse_module_with,
    parse_type,
};
pub use printer::{PrintOptions, Printer};
pub use registry::{OpDef, Registry};
pub use traits::Traits;
pub use types::{ComplexPattern, DYNAMIC, FloatKind, NarrowFloat, Signedness, Type, TypeKind};
pub use verifier::{VerifyCx, verify};
