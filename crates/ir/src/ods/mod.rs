//! Ops declared, not hand-written: MLIR's ODS in Rust constants.
//!
//! An op is an [`OpDef`](crate::OpDef) constant read as a list, as a TableGen record reads:
//!
//! ```text
//! /// `arith.addf %a, %b fastmath<fast> : f32`
//! const FLOAT_BINARY: OpDef = OpDef::pure("arith.addf")
//!     .operands(&[one("lhs", FLOAT_LIKE), one("rhs", FLOAT_LIKE)])
//!     .results(&[one("result", FLOAT_LIKE)])
//!     .props(&[optional("fastmath", FASTMATH)])
//!     .rules(&[ALL_TYPES_SAME])
//!     .format("$lhs `,` $rhs (`fastmath` `` $fastmath^)? attr-dict `:` type($result)");
//! ```
//!
//! * **Operands and results** are named groups ([`Arg`]), each with a type [`Constraint`]
//!   (whose summary is MLIR's, so messages read `operand #1 must be floating-point-like,
//!   but got 'i32'`); one group of an op may be variadic.
//! * **Properties** ([`Prop`]) name their [`PropKind`]: how the format prints and parses them
//!   and what the verifier accepts.
//! * **Type rules** ([`TypeRule`]) relate the types of groups (`SameOperandsAndResultType`,
//!   `TypesMatchWith`); the verifier checks them and the format's parser infers the types the
//!   text leaves out from them, as MLIR's generated parsers do.
//! * **The assembly format** is MLIR's declarative language ([`format`]): literals, `$name`,
//!   `operands`, `type(..)`, `attr-dict` and optional groups `(...)?` with an anchor `^`, with
//!   MLIR's rules for where spaces go, so the text is byte for byte what `mlir-opt` prints.
//!
//! The verifier runs these declared checks before the op's own `verify` hook, which keeps
//! only what cannot be declared. Ops whose syntax the language cannot say (`func.func`,
//! `scf.for`, `llvm.func`, ...) keep a hand-written printer and parser, as they have
//! `hasCustomAssemblyFormat` in MLIR.

pub mod constraints;
pub mod format;
mod verify;

use crate::types::Type;

pub use verify::verify_declared;

/// A type constraint: the check, its summary for messages, and the type to use when the
/// text does not say (MLIR's buildable types: `index`, `i1`, `i32`).
#[derive(Debug)]
pub struct Constraint {
    /// How MLIR describes it: `operand #0 must be <summary>, but got 'f32'`.
    pub summary: &'static str,
    pub check: fn(Type) -> bool,
    pub buildable: Option<Type>,
    /// The type class a `type(...)` of this constraint parses (`builtin.vector`), as MLIR's
    /// parsers of typed constraints do: other types are a parse error.
    pub class: Option<&'static str>,
}

impl Constraint {
    /// A constraint with no buildable type and no type class (most are).
    pub const fn new(summary: &'static str, check: fn(Type) -> bool) -> Constraint {
        Constraint {
            summary,
            check,
            buildable: None,
            class: None,
        }
    }

    /// The type to use when the text does not say.
    pub const fn buildable(mut self, ty: Type) -> Constraint {
        self.buildable = Some(ty);
        self
    }

    /// The type class a `type(...)` of this constraint parses.
    pub const fn class(mut self, class: &'static str) -> Constraint {
        self.class = Some(class);
        self
    }
}

/// A named operand or result group.
#[derive(Clone, Copy, Debug)]
pub struct Arg {
    pub name: &'static str,
    pub constraint: &'static Constraint,
    /// Zero or more values (MLIR's `Variadic<...>`); at most one group of an op.
    pub variadic: bool,
}

/// One value of `constraint`.
pub const fn one(name: &'static str, constraint: &'static Constraint) -> Arg {
    Arg {
        name,
        constraint,
        variadic: false,
    }
}

/// Any number of values of `constraint`.
pub const fn variadic(name: &'static str, constraint: &'static Constraint) -> Arg {
    Arg {
        name,
        constraint,
        variadic: true,
    }
}

/// How a property is written in the custom syntax and what values it takes.
#[derive(Clone, Copy, Debug)]
pub enum PropKind {
    /// Any attribute, written as one (`#map`, `dense<...>`).
    Attr,
    /// An index integer written bare (`upper_bound 128`).
    Index,
    /// A flat symbol reference (`@name`).
    Symbol,
    /// An enum kept as text `{prefix}<case>`, written `<case>` (`fastmath<fast>`); its
    /// `default` body (`<none>`) counts as absent for an optional group.
    EnumBody {
        prefix: &'static str,
        default: &'static str,
    },
    /// An enum kept as text `{open}{case}>`, written as its case after a space of its own,
    /// as MLIR's enum attribute printer does (`gpu.thread_id  x`); `cpp_name` names the enum
    /// in the parse error, as MLIR's does.
    EnumCase {
        open: &'static str,
        cases: &'static [&'static str],
        cpp_name: &'static str,
    },
    /// An enum kept as an `i64` case number, written as the case (`arith.cmpi slt`).
    IntEnum { cases: &'static [&'static str] },
}

/// A property the declaration knows about: its kind and whether the op requires it.
#[derive(Clone, Copy, Debug)]
pub struct Prop {
    pub name: &'static str,
    pub kind: PropKind,
    pub required: bool,
}

/// A property the op cannot do without.
pub const fn required(name: &'static str, kind: PropKind) -> Prop {
    Prop {
        name,
        kind,
        required: true,
    }
}

/// A property that may be left out.
pub const fn optional(name: &'static str, kind: PropKind) -> Prop {
    Prop {
        name,
        kind,
        required: false,
    }
}

/// A relation between the types of an op's groups.
#[derive(Clone, Copy, Debug)]
pub enum TypeRule {
    /// Every operand and result has one type (MLIR's `SameOperandsAndResultType`).
    AllSame,
    /// The type of group `to` is `derive` of the type of group `from` (MLIR's
    /// `TypesMatchWith`, `AllTypesMatch`); `message` is the error, with `{to}` and `{from}`
    /// standing for the two types found.
    Derived {
        from: &'static str,
        to: &'static str,
        derive: fn(Type) -> Option<Type>,
        message: &'static str,
    },
}

/// `SameOperandsAndResultType`.
pub const ALL_TYPES_SAME: TypeRule = TypeRule::AllSame;

/// `to` has the type of `from` (`AllTypesMatch<[from, to]>`); `message` as MLIR words it.
pub const fn same_type(from: &'static str, to: &'static str, message: &'static str) -> TypeRule {
    TypeRule::Derived {
        from,
        to,
        derive: Some,
        message,
    }
}

/// The declared shape of an op: what [`format`] and [`verify_declared`] read.
#[derive(Clone, Copy, Debug)]
pub struct OpSpec {
    pub operands: &'static [Arg],
    pub results: &'static [Arg],
    pub props: &'static [Prop],
    pub rules: &'static [TypeRule],
}

impl OpSpec {
    /// Nothing declared.
    pub const NONE: OpSpec = OpSpec {
        operands: &[],
        results: &[],
        props: &[],
        rules: &[],
    };

    /// The operand group named `name`.
    pub fn operand_group(&self, name: &str) -> Option<usize> {
        self.operands.iter().position(|a| a.name == name)
    }

    /// The result group named `name`.
    pub fn result_group(&self, name: &str) -> Option<usize> {
        self.results.iter().position(|a| a.name == name)
    }

    /// The declared property named `name`.
    pub fn prop(&self, name: &str) -> Option<&Prop> {
        self.props.iter().find(|p| p.name == name)
    }
}

/// Splits `count` values into the ranges of `groups` (one of which may be variadic), or
/// `None` when the count does not fit. Lazily: the verifier and the printer call it for
/// every op.
pub fn group_ranges(
    groups: &[Arg],
    count: usize,
) -> Option<impl Iterator<Item = std::ops::Range<usize>> + Clone + '_> {
    let fixed = groups.iter().filter(|g| !g.variadic).count();
    let variadic_len = match groups.iter().any(|g| g.variadic) {
        true => count.checked_sub(fixed)?,
        false if count == fixed => 0,
        false => return None,
    };
    let mut start = 0;
    Some(groups.iter().map(move |g| {
        let len = if g.variadic { variadic_len } else { 1 };
        let r = start..start + len;
        start = r.end;
        r
    }))
}

/// The case of an enum attribute kept as text, given the text before it: `x` of
/// `#gpu<dim x>` (opening `#gpu<dim `), `internal` of `#llvm.linkage<internal>`.
pub fn enum_case<'a>(attr: Option<&'a crate::Attribute>, open: &str) -> Option<&'a str> {
    match attr? {
        crate::Attribute::Opaque(text) => text.strip_prefix(open)?.strip_suffix('>'),
        _ => None,
    }
}

/// The enum attribute [`enum_case`] reads: `{open}{case}>`.
pub fn enum_attr(open: &str, case: &str) -> crate::Attribute {
    crate::Attribute::Opaque(format!("{open}{case}>"))
}
