//! Types: `index`, integers of any width, `f16`/`bf16`/`f32`/`f64`, `tensor<..>`,
//! `vector<..>`, `!llvm.ptr<N>`, function types, tuples, and opaque dialect types.
//!
//! A [`Type`] is an interned `Copy` id (a global, append-only table, so types print without a
//! context). The common scalar types are constants ([`Type::F32`], [`Type::INDEX`], ...) and
//! their [`TypeKind`] is read without touching the table's lock.
//!
//! # Tensor layouts
//!
//! A tensor may carry the memory layout of the HLO array it stands for, so that
//! `flatten-tensors` can turn its N-d indices into physical offsets. It sits in MLIR's
//! encoding slot as an attribute of the unregistered `xla` dialect whose string is HLO's own
//! layout text:
//!
//! ```text
//! tensor<6x4xf32, #xla.layout<"{0,1}">>              column-major
//! tensor<6x300xf32, #xla.layout<"{1,0:T(2,128)}">>   row-major, tiled by 2x128
//! ```
//!
//! MLIR 22 parses this as an opaque attribute when unregistered dialects are allowed, so the
//! generic form of a module with layouts still verifies there. Decisions:
//!
//! * Only `minor_to_major` and the tiles (`T(..)(..)`, `*` entries included) are carried;
//!   `E`, `S` and `L` describe storage the pipeline does not model and are dropped.
//! * Only non-default layouts are written: a row-major layout (`{n-1,...,1,0}`) without tiles
//!   is no layout: `tensor<4x8xf32>` is also the type of an `f32[4,8]{1,0}` array. Every
//!   other layout must be valid for the shape ([`Layout::validate`]).
//! * The encoding is part of the type: tensors differing only in layout are different types,
//!   as in MLIR.

use crate::intern::{AppendOnly, FxHashMap};
use hlo::layout::COMBINE_DIMENSION;
/// The layout a tensor type carries: HLO's, so its index math (`physical_index`,
/// `padded_element_count`) and `indexing::physical_offset` apply to it directly.
pub use hlo::layout::{Layout, Tile};
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

/// MLIR's floating-point formats of 8 bits or fewer (`f8E4M3FN`, `f4E2M1FN`...), as XLA's
/// IR writes them. The IR reads, verifies and prints them, literals included (their values:
/// the `narrow_float` module); they are storage formats here:
/// the emitters hold XLA's f8/f4 values as integers of their width and convert them with
/// integer code, so no pass computes on these types, and the interpreter refuses them.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum NarrowFloat {
    F8E5M2,
    F8E4M3,
    F8E4M3FN,
    F8E5M2FNUZ,
    F8E4M3FNUZ,
    F8E4M3B11FNUZ,
    F8E3M4,
    F8E8M0FNU,
    F6E2M3FN,
    F6E3M2FN,
    F4E2M1FN,
}

impl NarrowFloat {
    /// Every format, with its MLIR keyword and bit width.
    pub const ALL: [(NarrowFloat, &'static str, u32); 11] = [
        (NarrowFloat::F8E5M2, "f8E5M2", 8),
        (NarrowFloat::F8E4M3, "f8E4M3", 8),
        (NarrowFloat::F8E4M3FN, "f8E4M3FN", 8),
        (NarrowFloat::F8E5M2FNUZ, "f8E5M2FNUZ", 8),
        (NarrowFloat::F8E4M3FNUZ, "f8E4M3FNUZ", 8),
        (NarrowFloat::F8E4M3B11FNUZ, "f8E4M3B11FNUZ", 8),
        (NarrowFloat::F8E3M4, "f8E3M4", 8),
        (NarrowFloat::F8E8M0FNU, "f8E8M0FNU", 8),
        (NarrowFloat::F6E2M3FN, "f6E2M3FN", 6),
        (NarrowFloat::F6E3M2FN, "f6E3M2FN", 6),
        (NarrowFloat::F4E2M1FN, "f4E2M1FN", 4),
    ];

    /// The format MLIR spells `keyword`.
    pub fn from_keyword(keyword: &str) -> Option<NarrowFloat> {
        NarrowFloat::ALL
            .iter()
            .find(|(_, k, _)| *k == keyword)
            .map(|&(f, _, _)| f)
    }

    fn entry(self) -> (NarrowFloat, &'static str, u32) {
        *NarrowFloat::ALL
            .iter()
            .find(|(f, _, _)| *f == self)
            .expect("every format is listed")
    }

    /// MLIR's keyword (`f8E4M3FN`).
    pub fn keyword(self) -> &'static str {
        self.entry().1
    }

    pub fn width(self) -> u32 {
        self.entry().2
    }
}

/// XLA's GPU tensor encoding, `#xla_gpu.layout<"shmem", "(d0) -> (), domain: ...">`: the
/// memory space XLA keeps the tensor in and the indexing map by which it spreads the
/// elements over threads. Read and printed (the map in its canonical form); no pass of
/// ours gives it a meaning, so `flatten-tensors`, `lower-tensors` and the interpreter
/// refuse a tensor that carries it.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct ThreadLayout {
    pub memory_space: String,
    pub map: String,
}

/// The name of XLA's GPU tensor encoding ([`ThreadLayout`]).
pub const THREAD_LAYOUT_ATTR: &str = "xla_gpu.layout";

/// What a [`Type`] is.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum TypeKind {
    Index,
    Int {
        width: u32,
        signedness: Signedness,
    },
    Float(FloatKind),
    /// An 8-bit-or-narrower float ([`NarrowFloat`]): not [`Type::is_float`], which means
    /// a format the passes and the interpreter compute in.
    NarrowFloat(NarrowFloat),
    /// MLIR's `complex<f32>`: a complex number of two floats, as XLA's IR writes c64 and
    /// c128. Read, verified and printed; our emitters hold complex values as integer
    /// patterns ([`ComplexPattern`]), so no pass computes on this type.
    Complex(Type),
    None,
    /// A ranked tensor; dimensions are sizes or [`DYNAMIC`]. `layout` is `None` for the
    /// default row-major layout, otherwise a non-default layout holding only
    /// `minor_to_major` and tiles (see the module documentation); `thread_layout` is XLA's
    /// GPU encoding, when a tensor read from XLA's IR has one.
    Tensor {
        shape: Box<[i64]>,
        elem: Type,
        layout: Option<Box<Layout>>,
        thread_layout: Option<Box<ThreadLayout>>,
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

    /// `tensor<shape x elem>` (row-major).
    pub fn tensor(shape: &[i64], elem: Type) -> Type {
        Type::get(TypeKind::Tensor {
            shape: shape.into(),
            elem,
            layout: None,
            thread_layout: None,
        })
    }

    /// `tensor<shape x elem, #xla.layout<"...">>`: a tensor laid out by `layout` (only its
    /// `minor_to_major` and tiles are kept; a default layout gives the plain tensor type).
    /// Fails when the layout does not fit the shape.
    pub fn tensor_with_layout(shape: &[i64], elem: Type, layout: &Layout) -> Result<Type, String> {
        layout.validate(shape)?;
        Ok(Type::get(TypeKind::Tensor {
            shape: shape.into(),
            elem,
            layout: encoding(layout).map(Box::new),
            thread_layout: None,
        }))
    }

    /// `tensor<shape x elem, #xla_gpu.layout<..>>` (see [`ThreadLayout`]).
    pub fn tensor_with_thread_layout(shape: &[i64], elem: Type, layout: ThreadLayout) -> Type {
        Type::get(TypeKind::Tensor {
            shape: shape.into(),
            elem,
            layout: None,
            thread_layout: Some(Box::new(layout)),
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

    /// `complex<part>`, a complex number of two `part` floats.
    pub fn complex(part: Type) -> Type {
        Type::get(TypeKind::Complex(part))
    }

    /// The float of each part of a `complex<...>` type.
    pub fn complex_part(self) -> Option<Type> {
        match self.kind() {
            TypeKind::Complex(part) => Some(*part),
            _ => None,
        }
    }

    /// A float of a format we compute in, or a narrow storage float ([`NarrowFloat`]):
    /// what `arith`'s float ops and conversions accept.
    pub fn is_any_float(self) -> bool {
        self.is_float() || matches!(self.kind(), TypeKind::NarrowFloat(_))
    }

    /// The format of a float type of 8 bits or fewer.
    pub fn narrow_float(self) -> Option<NarrowFloat> {
        match self.kind() {
            TypeKind::NarrowFloat(f) => Some(*f),
            _ => None,
        }
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
            TypeKind::NarrowFloat(k) => Some(k.width()),
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

    /// The layout of a tensor with a non-default one (`None` for row-major tensors and other
    /// types).
    pub fn tensor_layout(self) -> Option<&'static Layout> {
        match self.kind() {
            TypeKind::Tensor { layout, .. } => layout.as_deref(),
            _ => None,
        }
    }

    /// XLA's GPU encoding of a tensor, if it has one.
    pub fn thread_layout(self) -> Option<&'static ThreadLayout> {
        match self.kind() {
            TypeKind::Tensor { thread_layout, .. } => thread_layout.as_deref(),
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

/// The name of the encoding attribute that holds a tensor's layout.
pub const LAYOUT_ATTR: &str = "xla.layout";

/// What a tensor type keeps of `layout`: `minor_to_major` and tiles, or nothing for the
/// default (row-major, untiled) layout.
fn encoding(layout: &Layout) -> Option<Layout> {
    let rank = layout.minor_to_major.len() as i64;
    let row_major = layout.minor_to_major.iter().rev().copied().eq(0..rank);
    if row_major && layout.tiles.is_empty() {
        return None;
    }
    Some(Layout {
        minor_to_major: layout.minor_to_major.clone(),
        tiles: layout.tiles.clone(),
        ..Layout::row_major(0)
    })
}

/// Parses the text of a layout encoding, HLO's layout syntax restricted to what a tensor
/// type carries: `{1,0}`, `{0,1:T(8,128)(2,1)}`, `{2,1,0:T(*,2,4)}`.
pub fn parse_layout(text: &str) -> Result<Layout, String> {
    let inner = text
        .trim()
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .ok_or_else(|| format!("expected a layout '{{...}}', found '{text}'"))?;
    let (dims, tiles) = inner.split_once(':').unwrap_or((inner, ""));
    let minor_to_major = parse_int_list(dims, "layout dimension", |d| d >= 0)?;
    Ok(Layout {
        minor_to_major,
        tiles: parse_tiles(tiles.trim())?,
        ..Layout::row_major(0)
    })
}

/// `T(2,128)(2,1)` (or nothing): tiles whose entries are positive sizes or `*`.
fn parse_tiles(text: &str) -> Result<Vec<Tile>, String> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let Some(mut rest) = text.strip_prefix('T') else {
        return Err(format!(
            "unsupported layout item '{text}' (a tensor layout holds only tiles 'T(..)')"
        ));
    };
    let mut tiles = Vec::new();
    while let Some(group) = rest.trim_start().strip_prefix('(') {
        let (items, after) = group
            .split_once(')')
            .ok_or_else(|| format!("unterminated tile in '{text}'"))?;
        let dims = items
            .split(',')
            .map(|item| match item.trim() {
                "*" => Ok(COMBINE_DIMENSION),
                n => parse_int(n, "tile size", |t| t > 0),
            })
            .collect::<Result<_, _>>()?;
        tiles.push(Tile { dims });
        rest = after;
    }
    if tiles.is_empty() || !rest.trim().is_empty() {
        return Err(format!("expected tiles 'T(..)(..)', found '{text}'"));
    }
    Ok(tiles)
}

/// A comma-separated list of integers accepted by `ok` (empty text: no integers).
fn parse_int_list(text: &str, what: &str, ok: fn(i64) -> bool) -> Result<Vec<i64>, String> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    text.split(',')
        .map(|n| parse_int(n.trim(), what, ok))
        .collect()
}

fn parse_int(text: &str, what: &str, ok: fn(i64) -> bool) -> Result<i64, String> {
    text.parse()
        .ok()
        .filter(|&v| ok(v))
        .ok_or_else(|| format!("invalid {what} '{text}'"))
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
            TypeKind::NarrowFloat(k) => f.write_str(k.keyword()),
            TypeKind::Complex(part) => write!(f, "complex<{part}>"),
            TypeKind::None => f.write_str("none"),
            TypeKind::Tensor {
                shape,
                elem,
                layout,
                thread_layout,
            } => {
                f.write_str("tensor<")?;
                write_shape(f, shape, *elem)?;
                if let Some(layout) = layout {
                    write!(f, ", #{LAYOUT_ATTR}<\"{layout}\">")?;
                }
                if let Some(t) = thread_layout {
                    write!(
                        f,
                        ", #{THREAD_LAYOUT_ATTR}<\"{}\", \"{}\">",
                        t.memory_space, t.map
                    )?;
                }
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

/// How a complex number is held in the IR (XLA's c64 and c128, as the emitters write
/// them): one integer `pattern` of both parts, the real part's bits in its low `half`, each
/// part a float of type `part`. One table for the emitters, which take patterns apart, and
/// for `lower-tensors`, which recognizes complex adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ComplexPattern {
    pub pattern: Type,
    pub half: Type,
    pub part: Type,
}

impl ComplexPattern {
    /// c64's and c128's.
    fn all() -> [ComplexPattern; 2] {
        [
            ComplexPattern {
                pattern: Type::I64,
                half: Type::I32,
                part: Type::F32,
            },
            ComplexPattern {
                pattern: Type::int(128),
                half: Type::I64,
                part: Type::F64,
            },
        ]
    }

    /// The layout whose pattern is `t` (`i64` or `i128`).
    pub fn of_pattern(t: Type) -> Option<ComplexPattern> {
        Self::all().into_iter().find(|c| c.pattern == t)
    }

    /// The layout whose parts are `t` (`f32` or `f64`).
    pub fn of_part(t: Type) -> Option<ComplexPattern> {
        Self::all().into_iter().find(|c| c.part == t)
    }

    /// The imaginary part's shift in the pattern.
    pub fn half_bits(self) -> i64 {
        i64::from(self.half.int_width().unwrap_or(32))
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

    fn layout(text: &str) -> Layout {
        parse_layout(text).unwrap()
    }

    #[test]
    fn layouts_print_in_the_encoding_slot_and_parse_back() {
        let cases = [
            (
                "{0,1}",
                &[6, 4][..],
                "tensor<6x4xf32, #xla.layout<\"{0,1}\">>",
            ),
            (
                "{1,0:T(2,128)}",
                &[6, 300],
                "tensor<6x300xf32, #xla.layout<\"{1,0:T(2,128)}\">>",
            ),
            (
                "{ 2, 1,0 : T(*,2,4)(2,1) }",
                &[3, 4, 8],
                "tensor<3x4x8xf32, #xla.layout<\"{2,1,0:T(*,2,4)(2,1)}\">>",
            ),
            ("{0:T(4)}", &[9], "tensor<9xf32, #xla.layout<\"{0:T(4)}\">>"),
        ];
        for (text, shape, printed) in cases {
            let t = Type::tensor_with_layout(shape, Type::F32, &layout(text)).unwrap();
            assert_eq!(t.to_string(), printed);
            assert_eq!(crate::parse_type(printed).unwrap(), t);
            assert_eq!(t.tensor_layout(), Some(&layout(text)));
            assert_ne!(t, Type::tensor(shape, Type::F32));
        }
    }

    #[test]
    fn default_layouts_are_no_layout() {
        for (text, shape) in [("{1,0}", &[4, 8][..]), ("{0}", &[4]), ("{}", &[])] {
            let t = Type::tensor_with_layout(shape, Type::F32, &layout(text)).unwrap();
            assert_eq!(t, Type::tensor(shape, Type::F32));
            assert_eq!(t.tensor_layout(), None);
        }
    }

    #[test]
    fn only_dimension_order_and_tiles_are_kept() {
        let mut l = layout("{0,1:T(2,2)}");
        l.memory_space = 1;
        l.element_size_in_bits = 8;
        let t = Type::tensor_with_layout(&[4, 4], Type::I8, &l).unwrap();
        assert_eq!(t.tensor_layout(), Some(&layout("{0,1:T(2,2)}")));
    }

    #[test]
    fn bad_layouts_are_rejected() {
        assert!(Type::tensor_with_layout(&[4, 4], Type::F32, &layout("{0,0}")).is_err());
        assert!(Type::tensor_with_layout(&[4, 4], Type::F32, &layout("{0}")).is_err());
        for text in [
            "0,1",
            "{0,1:E(4)}",
            "{0,1:T(2,0)}",
            "{0,1:T(2,2}",
            "{a}",
            "{0,1:T}",
        ] {
            assert!(parse_layout(text).is_err(), "{text}");
        }
        let err = crate::parse_type("tensor<4x4xf32, #xla.layout<\"{0,0}\">>").unwrap_err();
        assert!(err.to_string().contains("invalid tensor layout"), "{err}");
        // XLA's spelling of a layout, the minor-to-major order as a dense list, is ours.
        let xla = crate::parse_type("tensor<4x4xf32, dense<[0, 1]> : tensor<2xi64>>").unwrap();
        assert_eq!(
            xla,
            crate::parse_type("tensor<4x4xf32, #xla.layout<\"{0,1}\">>").unwrap()
        );
        let err = crate::parse_type("tensor<4x4xf32, #sparse.csr>").unwrap_err();
        assert!(err.to_string().contains("tensor encoding"), "{err}");
        assert!(crate::parse_type("vector<4xf32, #xla.layout<\"{0}\">>").is_err());
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
