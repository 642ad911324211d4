//! Types: `index`, integers of any width, `f16`/`bf16`/`f32`/`f64`, `tensor<..>`,
//! `vector<..>`, `!llvm.ptr<N>`, function types, tuples, and opaque dialect types.
//!
//! A [`Type`] is an interned `Copy` id (a global, append-only table, so types print without a
//! context). The common scalar types are constants ([`Type::F32`], [`Type::INDEX`], ...) and
//! their [`TypeKind`] is read without touching the table's lock.

use crate::intern::{AppendOnly, FxHashMap};
use std::fmt;
use std::sync::{LazyLock, RwLock};

/// A dynamic dimension (`?`) in a shaped type.
pub const DYNAMIC: i64 = i64::MIN;

/// An interned type.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Type(u32);

/// Integer signedness. MLIR's arithmetic uses signless integers (`i32`); `si32`/`ui32` exist
/// for attributes and dialects that care.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Signedness {
    Signless,
    Signed,
    Unsigned,
}

/// Floating-point formats.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum FloatKind {
    F16,
    BF16,
    F32,
    F64,
}

impl FloatKind {
    /// Total bit width.
    pub fn width(self) -> u32 {
        match self {
            FloatKind::F16 | FloatKind::BF16 => 16,
            FloatKind::F32 => 32,
            FloatKind::F64 => 64,
        }
    }

    /// Significand precision in bits, including the implicit bit (IEEE `p`).
    pub fn precision(self) -> u32 {
        match self {
            FloatKind::F16 => 11,
            FloatKind::BF16 => 8,
            FloatKind::F32 => 24,
            FloatKind::F64 => 53,
        }
    }

    /// Number of exponent bits.
    pub fn exponent_bits(self) -> u32 {
        match self {
            FloatKind::F16 => 5,
            FloatKind::BF16 | FloatKind::F32 => 8,
            FloatKind::F64 => 11,
        }
    }
}

/// What a [`Type`] is.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum TypeKind {
    Index,
    Int {
        width: u32,
        signedness: Signedness,
    },
    Float(FloatKind),
    None,
    /// A ranked tensor; dimensions are sizes or [`DYNAMIC`].
    Tensor {
        shape: Box<[i64]>,
        elem: Type,
    },
    /// A fixed-size vector.
    Vector {
        shape: Box<[i64]>,
        elem: Type,
    },
    /// `!llvm.ptr` (address space 0) or `!llvm.ptr<N>`.
    LlvmPtr {
        addr_space: u32,
    },
    Function {
        inputs: Box<[Type]>,
        results: Box<[Type]>,
    },
    Tuple(Box<[Type]>),
    /// A dialect type this crate does not model, kept as its text (`!llvm.struct<(i32)>`).
    Opaque(Box<str>),
}

const fn int(width: u32) -> TypeKind {
    TypeKind::Int {
        width,
        signedness: Signedness::Signless,
    }
}

/// The predefined types, in the order of their ids.
static PREDEFINED: [TypeKind; 12] = [
    TypeKind::Index,
    int(1),
    int(8),
    int(16),
    int(32),
    int(64),
    TypeKind::Float(FloatKind::F16),
    TypeKind::Float(FloatKind::BF16),
    TypeKind::Float(FloatKind::F32),
    TypeKind::Float(FloatKind::F64),
    TypeKind::None,
    TypeKind::LlvmPtr { addr_space: 0 },
];

struct TypeTable {
    map: FxHashMap<&'static TypeKind, Type>,
    len: usize,
}

static TYPES: LazyLock<RwLock<TypeTable>> = LazyLock::new(|| {
    let mut table = TypeTable {
        map: FxHashMap::default(),
        len: PREDEFINED.len(),
    };
    for (i, kind) in PREDEFINED.iter().enumerate() {
        table.map.insert(kind, Type(i as u32));
    }
    RwLock::new(table)
});

static KINDS: AppendOnly<&'static TypeKind> = AppendOnly::new();

impl Type {
    pub const INDEX: Type = Type(0);
    pub const I1: Type = Type(1);
    pub const I8: Type = Type(2);
    pub const I16: Type = Type(3);
    pub const I32: Type = Type(4);
    pub const I64: Type = Type(5);
    pub const F16: Type = Type(6);
    pub const BF16: Type = Type(7);
    pub const F32: Type = Type(8);
    pub const F64: Type = Type(9);
    pub const NONE: Type = Type(10);
    /// `!llvm.ptr` (address space 0).
    pub const PTR: Type = Type(11);

    /// Interns a type.
    pub fn get(kind: TypeKind) -> Type {
        if let Some(i) = PREDEFINED.iter().position(|k| *k == kind) {
            return Type(i as u32);
        }
        if let Some(&t) = TYPES.read().expect("type table").map.get(&kind) {
            return t;
        }
        let mut table = TYPES.write().expect("type table");
        if let Some(&t) = table.map.get(&kind) {
            return t;
        }
        let t = Type(table.len as u32);
        let leaked: &'static TypeKind = Box::leak(Box::new(kind));
        KINDS.set(table.len, leaked);
        table.len += 1;
        table.map.insert(leaked, t);
        t
    }

    /// What this type is.
    #[inline]
    pub fn kind(self) -> &'static TypeKind {
        match PREDEFINED.get(self.0 as usize) {
            Some(kind) => kind,
            None => KINDS.get(self.0 as usize).expect("interned type"),
        }
    }

    /// A signless integer type `iN`.
    pub fn int(width: u32) -> Type {
        match width {
            1 => Type::I1,
            8 => Type::I8,
            16 => Type::I16,
            32 => Type::I32,
            64 => Type::I64,
            _ => Type::get(int(width)),
        }
    }

    /// An integer type with explicit signedness (`si8`, `ui32`, or signless `i16`).
    pub fn int_with_signedness(width: u32, signedness: Signedness) -> Type {
        Type::get(TypeKind::Int { width, signedness })
    }

    pub fn float(kind: FloatKind) -> Type {
        match kind {
            FloatKind::F16 => Type::F16,
            FloatKind::BF16 => Type::BF16,
            FloatKind::F32 => Type::F32,
            FloatKind::F64 => Type::F64,
        }
    }

    /// `tensor<shape x elem>`.
    pub fn tensor(shape: &[i64], elem: Type) -> Type {
        Type::get(TypeKind::Tensor {
            shape: shape.into(),
            elem,
        })
    }

    /// `vector<shape x elem>`.
    pub fn vector(shape: &[i64], elem: Type) -> Type {
        Type::get(TypeKind::Vector {
            shape: shape.into(),
            elem,
        })
    }

    /// `!llvm.ptr<addr_space>`.
    pub fn ptr(addr_space: u32) -> Type {
        Type::get(TypeKind::LlvmPtr { addr_space })
    }

    /// `(inputs) -> results`.
    pub fn function(inputs: &[Type], results: &[Type]) -> Type {
        Type::get(TypeKind::Function {
            inputs: inputs.into(),
            results: results.into(),
        })
    }

    pub fn tuple(types: &[Type]) -> Type {
        Type::get(TypeKind::Tuple(types.into()))
    }

    /// A dialect type kept as text (must start with `!`).
    pub fn opaque(text: &str) -> Type {
        Type::get(TypeKind::Opaque(text.into()))
    }

    pub fn is_index(self) -> bool {
        self == Type::INDEX
    }

    /// Any integer type (not `index`).
    pub fn is_integer(self) -> bool {
        matches!(self.kind(), TypeKind::Int { .. })
    }

    /// A signless integer type (`iN`).
    pub fn is_signless_integer(self) -> bool {
        matches!(
            self.kind(),
            TypeKind::Int {
                signedness: Signedness::Signless,
                ..
            }
        )
    }

    /// A signless integer or `index`: what `arith` integer ops accept.
    pub fn is_signless_int_or_index(self) -> bool {
        self.is_index() || self.is_signless_integer()
    }

    pub fn is_float(self) -> bool {
        matches!(self.kind(), TypeKind::Float(_))
    }

    /// The integer width, for integer types.
    pub fn int_width(self) -> Option<u32> {
        match self.kind() {
            TypeKind::Int { width, .. } => Some(*width),
            _ => None,
        }
    }

    pub fn float_kind(self) -> Option<FloatKind> {
        match self.kind() {
            TypeKind::Float(k) => Some(*k),
            _ => None,
        }
    }

    /// Bit width of integer and float types.
    pub fn bit_width(self) -> Option<u32> {
        match self.kind() {
            TypeKind::Int { width, .. } => Some(*width),
            TypeKind::Float(k) => Some(k.width()),
            _ => None,
        }
    }

    pub fn is_tensor(self) -> bool {
        matches!(self.kind(), TypeKind::Tensor { .. })
    }

    pub fn is_vector(self) -> bool {
        matches!(self.kind(), TypeKind::Vector { .. })
    }

    /// Tensors and vectors.
    pub fn is_shaped(self) -> bool {
        self.shape().is_some()
    }

    /// The shape of a tensor or vector.
    pub fn shape(self) -> Option<&'static [i64]> {
        match self.kind() {
            TypeKind::Tensor { shape, .. } | TypeKind::Vector { shape, .. } => Some(shape),
            _ => None,
        }
    }

    /// The element type of a tensor or vector.
    pub fn element_type(self) -> Option<Type> {
        match self.kind() {
            TypeKind::Tensor { elem, .. } | TypeKind::Vector { elem, .. } => Some(*elem),
            _ => None,
        }
    }

    /// The element type of a tensor or vector, or the type itself.
    pub fn element_type_or_self(self) -> Type {
        self.element_type().unwrap_or(self)
    }

    /// The rank of a tensor or vector.
    pub fn rank(self) -> Option<usize> {
        self.shape().map(<[i64]>::len)
    }

    /// The number of elements of a statically shaped tensor or vector.
    pub fn num_elements(self) -> Option<i64> {
        let shape = self.shape()?;
        if shape.contains(&DYNAMIC) {
            return None;
        }
        Some(shape.iter().product())
    }

    /// Inputs and results of a function type.
    pub fn function_parts(self) -> Option<(&'static [Type], &'static [Type])> {
        match self.kind() {
            TypeKind::Function { inputs, results } => Some((inputs, results)),
            _ => None,
        }
    }

    /// The address space of an `!llvm.ptr`.
    pub fn ptr_addr_space(self) -> Option<u32> {
        match self.kind() {
            TypeKind::LlvmPtr { addr_space } => Some(*addr_space),
            _ => None,
        }
    }
}

fn write_shape(f: &mut fmt::Formatter<'_>, shape: &[i64], elem: Type) -> fmt::Result {
    for &d in shape {
        if d == DYNAMIC {
            f.write_str("?x")?;
        } else {
            write!(f, "{d}x")?;
        }
    }
    write!(f, "{elem}")
}

fn write_type_list(f: &mut fmt::Formatter<'_>, types: &[Type]) -> fmt::Result {
    for (i, t) in types.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{t}")?;
    }
    Ok(())
}

/// Writes a function result list: a single non-function type bare, otherwise in parens.
pub(crate) fn write_results(f: &mut fmt::Formatter<'_>, results: &[Type]) -> fmt::Result {
    if let [single] = results
        && !matches!(single.kind(), TypeKind::Function { .. })
    {
        return write!(f, "{single}");
    }
    f.write_str("(")?;
    write_type_list(f, results)?;
    f.write_str(")")
}

impl fmt::Display for TypeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TypeKind::Index => f.write_str("index"),
            TypeKind::Int { width, signedness } => match signedness {
                Signedness::Signless => write!(f, "i{width}"),
                Signedness::Signed => write!(f, "si{width}"),
                Signedness::Unsigned => write!(f, "ui{width}"),
            },
            TypeKind::Float(k) => f.write_str(match k {
                FloatKind::F16 => "f16",
                FloatKind::BF16 => "bf16",
                FloatKind::F32 => "f32",
                FloatKind::F64 => "f64",
            }),
            TypeKind::None => f.write_str("none"),
            TypeKind::Tensor { shape, elem } => {
                f.write_str("tensor<")?;
                write_shape(f, shape, *elem)?;
                f.write_str(">")
            }
            TypeKind::Vector { shape, elem } => {
                f.write_str("vector<")?;
                write_shape(f, shape, *elem)?;
                f.write_str(">")
            }
            TypeKind::LlvmPtr { addr_space: 0 } => f.write_str("!llvm.ptr"),
            TypeKind::LlvmPtr { addr_space } => write!(f, "!llvm.ptr<{addr_space}>"),
            TypeKind::Function { inputs, results } => {
                f.write_str("(")?;
                write_type_list(f, inputs)?;
                f.write_str(") -> ")?;
                write_results(f, results)
            }
            TypeKind::Tuple(types) => {
                f.write_str("tuple<")?;
                write_type_list(f, types)?;
                f.write_str(">")
            }
            TypeKind::Opaque(text) => f.write_str(text),
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.kind(), f)
    }
}

impl fmt::Debug for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Type({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predefined_types_are_canonical() {
        assert_eq!(Type::get(TypeKind::Index), Type::INDEX);
        assert_eq!(Type::int(32), Type::I32);
        assert_eq!(Type::get(TypeKind::LlvmPtr { addr_space: 0 }), Type::PTR);
        assert_eq!(Type::ptr(0), Type::PTR);
        assert_eq!(Type::int(7), Type::int(7));
        assert_ne!(Type::int(7), Type::int(9));
    }

    #[test]
    fn display_in_mlir_syntax() {
        let cases = [
            (Type::INDEX, "index"),
            (Type::int(3), "i3"),
            (Type::BF16, "bf16"),
            (
                Type::tensor(&[6, 512, 4096], Type::BF16),
                "tensor<6x512x4096xbf16>",
            ),
            (Type::tensor(&[4, DYNAMIC], Type::F32), "tensor<4x?xf32>"),
            (Type::tensor(&[], Type::F32), "tensor<f32>"),
            (Type::vector(&[4], Type::F32), "vector<4xf32>"),
            (Type::PTR, "!llvm.ptr"),
            (Type::ptr(3), "!llvm.ptr<3>"),
            (
                Type::function(&[Type::F32, Type::INDEX], &[Type::F32]),
                "(f32, index) -> f32",
            ),
            (Type::function(&[], &[]), "() -> ()"),
            (
                Type::function(&[], &[Type::F32, Type::I1]),
                "() -> (f32, i1)",
            ),
            (
                Type::function(&[], &[Type::function(&[], &[])]),
                "() -> (() -> ())",
            ),
            (Type::tuple(&[Type::F32, Type::I32]), "tuple<f32, i32>"),
            (Type::int_with_signedness(8, Signedness::Unsigned), "ui8"),
        ];
        for (t, text) in cases {
            assert_eq!(t.to_string(), text);
        }
    }

    #[test]
    fn accessors() {
        let t = Type::tensor(&[2, 3], Type::F32);
        assert_eq!(t.shape(), Some(&[2, 3][..]));
        assert_eq!(t.element_type(), Some(Type::F32));
        assert_eq!(t.num_elements(), Some(6));
        assert_eq!(t.rank(), Some(2));
        assert!(Type::I32.is_signless_int_or_index());
        assert!(Type::INDEX.is_signless_int_or_index());
        assert!(!Type::F32.is_signless_int_or_index());
        assert_eq!(Type::BF16.bit_width(), Some(16));
        assert_eq!(Type::tensor(&[DYNAMIC], Type::F32).num_elements(), None);
    }
}
