//! Attributes: compile-time constant data attached to ops (`value = 5 : index`,
//! `fastmath = #arith.fastmath<fast>`, `sym_name = "gelu"`, `dense<0.0> : vector<4xf32>`).
//!
//! Printing follows MLIR's rules, including its type elision: `i64` integers and `f64` floats
//! drop their `: type` inside arrays (`[1, 2.5]`) but keep it elsewhere (`{x = 1 : i64}`).

use crate::float;
use crate::intern::Ident;
use crate::types::{Signedness, Type, TypeKind};
use indexing::IndexingMap;
use std::fmt::{self, Write};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// An `f64` compared and hashed by its bits, so attributes can be `Eq` and `Hash` (for CSE and
/// alias tables). Holds values of narrower formats exactly.
#[derive(Clone, Copy, Debug)]
pub struct FloatValue(pub f64);

impl PartialEq for FloatValue {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}
impl Eq for FloatValue {}
impl Hash for FloatValue {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

/// One element of a dense elements attribute or dense array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    Int(i128),
    Float(FloatValue),
}

impl Scalar {
    pub fn as_int(self) -> Option<i128> {
        match self {
            Scalar::Int(v) => Some(v),
            Scalar::Float(_) => None,
        }
    }
    pub fn as_f64(self) -> Option<f64> {
        match self {
            Scalar::Float(v) => Some(v.0),
            Scalar::Int(_) => None,
        }
    }
}

/// The elements of a `dense<...>` attribute: one value for all, or all values in row-major
/// order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DenseValues {
    Splat(Scalar),
    Elements(Vec<Scalar>),
}

/// A symbol reference `@root` or `@root::@nested::@leaf`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SymbolRef {
    pub root: String,
    pub nested: Vec<String>,
}

/// A named attribute in an op's property or attribute dictionary.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NamedAttr {
    pub name: Ident,
    pub value: Attribute,
}

/// An attribute value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Attribute {
    Unit,
    /// An `i1` integer attribute (`true`/`false`).
    Bool(bool),
    /// An integer of an integer or `index` type, normalized to the type's width (signless and
    /// signed values sign-extended, unsigned zero-extended).
    Int(i128, Type),
    /// A float of a float type; the value is exactly representable in the type.
    Float(FloatValue, Type),
    String(String),
    Type(Type),
    Symbol(SymbolRef),
    Array(Vec<Attribute>),
    /// `array<i64: 1, 2>` (MLIR's `DenseI64ArrayAttr` and friends).
    DenseArray {
        elem: Type,
        values: Vec<Scalar>,
    },
    /// `dense<...> : tensor<..>` or `: vector<..>`.
    Dense {
        ty: Type,
        values: DenseValues,
    },
    /// A dictionary, sorted by name.
    Dict(Vec<NamedAttr>),
    /// `#xla_gpu.indexing_map<"...">`, parsed. Behind an `Arc` so attributes stay
    /// cheap to clone. Compared and hashed structurally (variable names and ranges,
    /// expression trees, constraints), as MLIR uniques attributes by their storage: no
    /// simplification or printing happens on comparison, and maps that mean the same but
    /// were built differently are different attributes (and get different `#map` aliases).
    IndexingMap(Arc<IndexingMap>),
    /// Any other dialect attribute or affine map, kept as its text
    /// (`#arith.fastmath<fast>`, `affine_map<(d0) -> (d0)>`).
    Opaque(String),
}

/// Truncates `v` to `ty`'s width and extends it back per the type's signedness.
pub fn normalize_int(v: i128, ty: Type) -> i128 {
    let (width, unsigned) = match ty.kind() {
        TypeKind::Index => (64, false),
        TypeKind::Int { width, signedness } => {
            (*width, *signedness == Signedness::Unsigned || *width == 1)
        }
        _ => return v,
    };
    if width >= 128 {
        return v;
    }
    let shift = 128 - width;
    if unsigned {
        (((v as u128) << shift) >> shift) as i128
    } else {
        (v << shift) >> shift
    }
}

impl Attribute {
    /// An integer attribute (an `i1` one becomes [`Attribute::Bool`]).
    pub fn int(v: i128, ty: Type) -> Attribute {
        if ty == Type::I1 {
            return Attribute::Bool(v & 1 != 0);
        }
        Attribute::Int(normalize_int(v, ty), ty)
    }

    /// `v : index`.
    pub fn index(v: i64) -> Attribute {
        Attribute::Int(v as i128, Type::INDEX)
    }

    /// `v : i64`.
    pub fn i64(v: i64) -> Attribute {
        Attribute::Int(v as i128, Type::I64)
    }

    /// `v : i32`.
    pub fn i32(v: i32) -> Attribute {
        Attribute::Int(v as i128, Type::I32)
    }

    /// A float attribute, rounded to `ty`.
    pub fn float(v: f64, ty: Type) -> Attribute {
        let kind = ty.float_kind().expect("float attribute of a float type");
        Attribute::Float(FloatValue(float::round_to(kind, v)), ty)
    }

    pub fn string(s: impl Into<String>) -> Attribute {
        Attribute::String(s.into())
    }

    /// `@name`.
    pub fn symbol(name: impl Into<String>) -> Attribute {
        Attribute::Symbol(SymbolRef {
            root: name.into(),
            nested: Vec::new(),
        })
    }

    /// `dense<v> : ty` with every element equal to `v`.
    pub fn dense_splat(ty: Type, v: Scalar) -> Attribute {
        Attribute::Dense {
            ty,
            values: DenseValues::Splat(v),
        }
    }

    /// `dense<[...]> : ty`; all-equal lists become a splat, as in MLIR.
    pub fn dense(ty: Type, values: Vec<Scalar>) -> Attribute {
        let values = match values.first() {
            Some(&first) if values.len() > 1 && values.iter().all(|&v| v == first) => {
                DenseValues::Splat(first)
            }
            Some(&first) if values.len() == 1 && ty.num_elements() == Some(1) => {
                DenseValues::Splat(first)
            }
            _ => DenseValues::Elements(values),
        };
        Attribute::Dense { ty, values }
    }

    /// `#xla_gpu.indexing_map<"...">` holding `map`.
    pub fn indexing_map(map: impl Into<Arc<IndexingMap>>) -> Attribute {
        Attribute::IndexingMap(map.into())
    }

    /// `array<i64: ...>`.
    pub fn dense_i64_array(values: &[i64]) -> Attribute {
        Attribute::DenseArray {
            elem: Type::I64,
            values: values.iter().map(|&v| Scalar::Int(v as i128)).collect(),
        }
    }

    /// An array of booleans (`[true, false]`).
    pub fn bool_array(values: &[bool]) -> Attribute {
        Attribute::Array(values.iter().map(|&b| Attribute::Bool(b)).collect())
    }

    /// A dictionary (sorted by name).
    pub fn dict(mut entries: Vec<NamedAttr>) -> Attribute {
        sort_named(&mut entries);
        Attribute::Dict(entries)
    }

    pub fn as_int(&self) -> Option<i128> {
        match self {
            Attribute::Int(v, _) => Some(*v),
            Attribute::Bool(b) => Some(*b as i128),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        self.as_int().and_then(|v| i64::try_from(v).ok())
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Attribute::Float(v, _) => Some(v.0),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Attribute::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Attribute::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_type(&self) -> Option<Type> {
        match self {
            Attribute::Type(t) => Some(*t),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Attribute]> {
        match self {
            Attribute::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_dict(&self) -> Option<&[NamedAttr]> {
        match self {
            Attribute::Dict(d) => Some(d),
            _ => None,
        }
    }

    pub fn as_indexing_map(&self) -> Option<&IndexingMap> {
        match self {
            Attribute::IndexingMap(m) => Some(m),
            _ => None,
        }
    }

    /// The root name of a flat symbol reference.
    pub fn as_symbol(&self) -> Option<&str> {
        match self {
            Attribute::Symbol(s) if s.nested.is_empty() => Some(&s.root),
            _ => None,
        }
    }

    /// The type of a typed attribute (integers, floats, dense elements).
    pub fn ty(&self) -> Option<Type> {
        match self {
            Attribute::Bool(_) => Some(Type::I1),
            Attribute::Int(_, t) | Attribute::Float(_, t) | Attribute::Dense { ty: t, .. } => {
                Some(*t)
            }
            _ => None,
        }
    }
}

/// Sorts named attributes by name, as MLIR's dictionaries are.
pub fn sort_named(entries: &mut [NamedAttr]) {
    if entries.len() < 2 {
        return;
    }
    entries.sort_by(|a, b| a.name.as_str().cmp(b.name.as_str()));
}

/// Looks up `name` in a sorted attribute list.
pub fn get_named(entries: &[NamedAttr], name: Ident) -> Option<&Attribute> {
    entries.iter().find(|e| e.name == name).map(|e| &e.value)
}

/// Looks up `name` in an attribute list by its text, without interning it (for names that
/// may not be attributes of any op).
pub fn find_named<'a>(entries: &'a [NamedAttr], name: &str) -> Option<&'a Attribute> {
    entries
        .iter()
        .find(|e| e.name.as_str() == name)
        .map(|e| &e.value)
}

/// Sets `name` in a sorted attribute list (replacing or inserting in order).
pub fn set_named(entries: &mut Vec<NamedAttr>, name: Ident, value: Attribute) {
    if let Some(e) = entries.iter_mut().find(|e| e.name == name) {
        e.value = value;
        return;
    }
    let key = name.as_str();
    let at = entries.partition_point(|e| e.name.as_str() < key);
    entries.insert(at, NamedAttr { name, value });
}

/// Removes `name` from an attribute list, returning its value.
pub fn remove_named(entries: &mut Vec<NamedAttr>, name: Ident) -> Option<Attribute> {
    let at = entries.iter().position(|e| e.name == name)?;
    Some(entries.remove(at).value)
}

/// Whether `s` is an MLIR bare identifier (`[a-zA-Z_][a-zA-Z0-9_$.]*`).
pub fn is_bare_identifier(s: &str) -> bool {
    let mut chars = s.bytes();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == b'_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.'))
}

/// Writes `s` as an MLIR string literal (non-printable bytes, `"` and `\` as `\XX`).
pub fn write_escaped_string(out: &mut String, s: &str) {
    out.push('"');
    for &b in s.as_bytes() {
        if b == b'"' || b == b'\\' || !(0x20..0x7f).contains(&b) {
            let _ = write!(out, "\\{b:02X}");
        } else {
            out.push(b as char);
        }
    }
    out.push('"');
}

/// Writes a symbol name (`@name` or `@"odd name"`).
pub fn write_symbol_name(out: &mut String, name: &str) {
    out.push('@');
    if is_bare_identifier(name) {
        out.push_str(name);
    } else {
        write_escaped_string(out, name);
    }
}

/// Writes an integer of type `ty` (signed unless unsigned or `i1`).
fn write_int(out: &mut String, v: i128, ty: Type) {
    let _ = write!(out, "{}", normalize_int(v, ty));
}

fn write_scalar(out: &mut String, v: Scalar, elem: Type) {
    match v {
        Scalar::Int(i) if elem == Type::I1 => {
            out.push_str(if i & 1 != 0 { "true" } else { "false" })
        }
        Scalar::Int(i) => write_int(out, i, elem),
        Scalar::Float(f) => out.push_str(&format_float(f.0, elem)),
    }
}

fn write_dense_nested(out: &mut String, shape: &[i64], values: &[Scalar], elem: Type) {
    match shape.split_first() {
        None => write_scalar(out, values[0], elem),
        Some((&n, rest)) => {
            let stride: usize = rest.iter().map(|&d| d.max(0) as usize).product();
            out.push('[');
            for i in 0..n.max(0) as usize {
                if i > 0 {
                    out.push_str(", ");
                }
                write_dense_nested(out, rest, &values[i * stride..(i + 1) * stride], elem);
            }
            out.push(']');
        }
    }
}

/// Dense attributes with more elements than this print as a hex string, as in MLIR.
pub const HEX_ELEMENT_LIMIT: usize = 100;

/// Bytes per element in the hex form of a dense attribute (`None`: not printed in hex).
pub(crate) fn dense_elem_bytes(elem: Type) -> Option<usize> {
    if elem == Type::I1 {
        return None;
    }
    let bits = if elem.is_index() {
        64
    } else {
        elem.bit_width()?
    };
    (bits % 8 == 0 && bits <= 128).then_some(bits as usize / 8)
}

/// A float value of type `ty` as MLIR prints it. Those of the formats of 8 bits or fewer
/// are exact in `f32`, whose 6-digit form MLIR prints for them too; their NaNs and
/// infinities print as their own bits.
fn format_float(v: f64, ty: Type) -> String {
    match (ty.float_kind(), ty.narrow_float()) {
        (Some(kind), _) => float::format_mlir(kind, v),
        (None, Some(_)) if v.is_finite() => float::format_mlir(crate::types::FloatKind::F32, v),
        (None, Some(format)) => format!("0x{:X}", format.bits_of_value(v)),
        (None, None) => v.to_string(),
    }
}

/// The raw little-endian bits of a dense element.
fn scalar_bits(v: Scalar, elem: Type) -> u128 {
    match (v, elem.float_kind()) {
        (Scalar::Float(f), _) if let Some(format) = elem.narrow_float() => {
            format.bits_of_value(f.0) as u128
        }
        (Scalar::Float(f), Some(kind)) => float::to_bits(kind, f.0) as u128,
        (Scalar::Int(i), _) => i as u128,
        (Scalar::Float(f), None) => f.0.to_bits() as u128,
    }
}

fn write_dense_hex(out: &mut String, values: &[Scalar], elem: Type) {
    let n = dense_elem_bytes(elem).unwrap_or(1);
    out.push_str("\"0x");
    for &v in values {
        let bits = scalar_bits(v, elem);
        for byte in 0..n {
            let _ = write!(out, "{:02X}", (bits >> (8 * byte)) as u8);
        }
    }
    out.push('"');
}

/// Decodes the hex form of a dense attribute's data into elements of `elem`.
pub(crate) fn decode_dense_hex(hex: &str, elem: Type) -> Option<Vec<Scalar>> {
    let n = if elem == Type::I1 {
        1
    } else {
        dense_elem_bytes(elem)?
    };
    let hex = hex.strip_prefix("0x")?;
    if hex.len() % (2 * n) != 0 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let bytes: Vec<u8> = (0..hex.len() / 2)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok())
        .collect::<Option<_>>()?;
    Some(
        bytes
            .chunks(n)
            .map(|chunk| {
                let bits = chunk
                    .iter()
                    .rev()
                    .fold(0u128, |acc, &b| (acc << 8) | b as u128);
                match (elem.float_kind(), elem.narrow_float()) {
                    (Some(kind), _) => {
                        Scalar::Float(FloatValue(float::from_bits(kind, bits as u64)))
                    }
                    (None, Some(format)) => {
                        Scalar::Float(FloatValue(format.value_of_bits(bits as u64)))
                    }
                    (None, None) => Scalar::Int(normalize_int(bits as i128, elem)),
                }
            })
            .collect(),
    )
}

/// Resolves an attribute to an alias name when printing (`#map`).
pub(crate) type AliasLookup<'a> = Option<&'a dyn Fn(&Attribute) -> Option<&'a str>>;

/// Writes `attr`. With `elide`, `i64`/`f64` types are left out (inside arrays).
pub(crate) fn write_attr(
    out: &mut String,
    attr: &Attribute,
    elide: bool,
    aliases: AliasLookup<'_>,
) {
    if let Some(lookup) = aliases
        && let Some(alias) = lookup(attr)
    {
        out.push('#');
        out.push_str(alias);
        return;
    }
    match attr {
        Attribute::Unit => out.push_str("unit"),
        Attribute::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Attribute::Int(v, ty) => {
            write_int(out, *v, *ty);
            if !(elide && *ty == Type::I64) {
                let _ = write!(out, " : {ty}");
            }
        }
        Attribute::Float(v, ty) => {
            let text = format_float(v.0, *ty);
            let hex = text.starts_with("0x");
            out.push_str(&text);
            if !(elide && *ty == Type::F64 && !hex) {
                let _ = write!(out, " : {ty}");
            }
        }
        Attribute::String(s) => write_escaped_string(out, s),
        Attribute::Type(t) => {
            let _ = write!(out, "{t}");
        }
        Attribute::Symbol(s) => {
            write_symbol_name(out, &s.root);
            for n in &s.nested {
                out.push_str("::");
                write_symbol_name(out, n);
            }
        }
        Attribute::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_attr(out, item, true, aliases);
            }
            out.push(']');
        }
        Attribute::DenseArray { elem, values } => {
            let _ = write!(out, "array<{elem}");
            for (i, v) in values.iter().enumerate() {
                out.push_str(if i == 0 { ": " } else { ", " });
                write_scalar(out, *v, *elem);
            }
            out.push('>');
        }
        Attribute::Dense { ty, values } => {
            out.push_str("dense<");
            let elem = ty.element_type_or_self();
            match values {
                DenseValues::Splat(v) => write_scalar(out, *v, elem),
                DenseValues::Elements(vs)
                    if vs.len() > HEX_ELEMENT_LIMIT && dense_elem_bytes(elem).is_some() =>
                {
                    write_dense_hex(out, vs, elem)
                }
                DenseValues::Elements(vs) if !vs.is_empty() => {
                    write_dense_nested(out, ty.shape().unwrap_or(&[]), vs, elem)
                }
                DenseValues::Elements(_) => {}
            }
            let _ = write!(out, "> : {ty}");
        }
        Attribute::Dict(entries) => write_dict(out, entries, aliases),
        Attribute::IndexingMap(map) => {
            out.push_str("#xla_gpu.indexing_map<");
            write_escaped_string(out, &map.to_string());
            out.push('>');
        }
        Attribute::Opaque(text) => out.push_str(text),
    }
}

/// Writes `{a = 1 : i64, b}`.
pub(crate) fn write_dict(out: &mut String, entries: &[NamedAttr], aliases: AliasLookup<'_>) {
    out.push('{');
    for (i, e) in entries.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_named(out, e, aliases);
    }
    out.push('}');
}

/// Writes `name = value`, or just `name` for a unit attribute.
pub(crate) fn write_named(out: &mut String, e: &NamedAttr, aliases: AliasLookup<'_>) {
    let name = e.name.as_str();
    if is_bare_identifier(name) {
        out.push_str(name);
    } else {
        write_escaped_string(out, name);
    }
    if e.value != Attribute::Unit {
        out.push_str(" = ");
        write_attr(out, &e.value, false, aliases);
    }
}

impl fmt::Display for Attribute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        write_attr(&mut s, self, false, None);
        f.write_str(&s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(name: &str, value: Attribute) -> NamedAttr {
        NamedAttr {
            name: Ident::new(name),
            value,
        }
    }

    #[test]
    fn display_matches_mlir() {
        let cases = [
            (Attribute::index(5), "5 : index"),
            (Attribute::i32(3), "3 : i32"),
            (Attribute::int(255, Type::I8), "-1 : i8"),
            (Attribute::int(1, Type::I1), "true"),
            (Attribute::float(1.0, Type::F32), "1.000000e+00 : f32"),
            (Attribute::float(0.5, Type::BF16), "5.000000e-01 : bf16"),
            (Attribute::string("a\"b\n"), "\"a\\22b\\0A\""),
            (Attribute::symbol("gelu"), "@gelu"),
            (Attribute::symbol("a b"), "@\"a b\""),
            (Attribute::Unit, "unit"),
            (Attribute::Type(Type::F32), "f32"),
            (
                Attribute::Array(vec![
                    Attribute::i64(1),
                    Attribute::float(2.5, Type::F64),
                    Attribute::float(2.5, Type::F32),
                    Attribute::index(0),
                ]),
                "[1, 2.500000e+00, 2.500000e+00 : f32, 0 : index]",
            ),
            (Attribute::dense_i64_array(&[1, 2]), "array<i64: 1, 2>"),
            (Attribute::dense_i64_array(&[]), "array<i64>"),
            (
                Attribute::dense_splat(
                    Type::vector(&[4], Type::F32),
                    Scalar::Float(FloatValue(0.0)),
                ),
                "dense<0.000000e+00> : vector<4xf32>",
            ),
            (
                Attribute::dense(
                    Type::tensor(&[2, 2], Type::I32),
                    vec![
                        Scalar::Int(1),
                        Scalar::Int(2),
                        Scalar::Int(3),
                        Scalar::Int(4),
                    ],
                ),
                "dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>",
            ),
            (
                Attribute::dense(
                    Type::tensor(&[2], Type::F32),
                    vec![
                        Scalar::Float(FloatValue(1.0)),
                        Scalar::Float(FloatValue(1.0)),
                    ],
                ),
                "dense<1.000000e+00> : tensor<2xf32>",
            ),
            (
                Attribute::dict(vec![
                    named("z", Attribute::Unit),
                    named("a", Attribute::i64(1)),
                ]),
                "{a = 1 : i64, z}",
            ),
            (
                Attribute::indexing_map(IndexingMap::identity(&[4])),
                "#xla_gpu.indexing_map<\"(d0) -> (d0), domain: d0 in [0, 3]\">",
            ),
            (Attribute::bool_array(&[true]), "[true]"),
        ];
        for (attr, text) in cases {
            assert_eq!(attr.to_string(), text);
        }
    }

    #[test]
    fn named_lists_stay_sorted() {
        let mut list = Vec::new();
        set_named(&mut list, Ident::new("value"), Attribute::i64(1));
        set_named(&mut list, Ident::new("fastmath"), Attribute::Unit);
        set_named(&mut list, Ident::new("value"), Attribute::i64(2));
        let names: Vec<_> = list.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["fastmath", "value"]);
        assert_eq!(
            get_named(&list, Ident::new("value")),
            Some(&Attribute::i64(2))
        );
        assert_eq!(
            remove_named(&mut list, Ident::new("fastmath")),
            Some(Attribute::Unit)
        );
        assert_eq!(list.len(), 1);
    }
}
