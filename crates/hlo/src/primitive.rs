//! XLA's primitive (element) types, as spelled in HLO text.

use std::fmt;

/// An element type. Every type XLA can print parses, including the ones codegen refuses
/// (complex, the exotic f8/f4 formats, tokens): refusing is the emitters' job, with a
/// message that names the op, not the parser's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PrimitiveType {
    Pred,
    S1,
    S2,
    S4,
    S8,
    S16,
    S32,
    S64,
    U1,
    U2,
    U4,
    U8,
    U16,
    U32,
    U64,
    F16,
    BF16,
    F32,
    F64,
    F4E2M1FN,
    F8E3M4,
    F8E4M3,
    F8E4M3FN,
    F8E4M3B11FNUZ,
    F8E4M3FNUZ,
    F8E5M2,
    F8E5M2FNUZ,
    F8E8M0FNU,
    C64,
    C128,
    Token,
    Opaque,
}

/// The spelling of each type in HLO text; the single table both directions use.
const NAMES: &[(PrimitiveType, &str)] = &[
    (PrimitiveType::Pred, "pred"),
    (PrimitiveType::S1, "s1"),
    (PrimitiveType::S2, "s2"),
    (PrimitiveType::S4, "s4"),
    (PrimitiveType::S8, "s8"),
    (PrimitiveType::S16, "s16"),
    (PrimitiveType::S32, "s32"),
    (PrimitiveType::S64, "s64"),
    (PrimitiveType::U1, "u1"),
    (PrimitiveType::U2, "u2"),
    (PrimitiveType::U4, "u4"),
    (PrimitiveType::U8, "u8"),
    (PrimitiveType::U16, "u16"),
    (PrimitiveType::U32, "u32"),
    (PrimitiveType::U64, "u64"),
    (PrimitiveType::F16, "f16"),
    (PrimitiveType::BF16, "bf16"),
    (PrimitiveType::F32, "f32"),
    (PrimitiveType::F64, "f64"),
    (PrimitiveType::F4E2M1FN, "f4e2m1fn"),
    (PrimitiveType::F8E3M4, "f8e3m4"),
    (PrimitiveType::F8E4M3, "f8e4m3"),
    (PrimitiveType::F8E4M3FN, "f8e4m3fn"),
    (PrimitiveType::F8E4M3B11FNUZ, "f8e4m3b11fnuz"),
    (PrimitiveType::F8E4M3FNUZ, "f8e4m3fnuz"),
    (PrimitiveType::F8E5M2, "f8e5m2"),
    (PrimitiveType::F8E5M2FNUZ, "f8e5m2fnuz"),
    (PrimitiveType::F8E8M0FNU, "f8e8m0fnu"),
    (PrimitiveType::C64, "c64"),
    (PrimitiveType::C128, "c128"),
    (PrimitiveType::Token, "token"),
    (PrimitiveType::Opaque, "opaque"),
];

impl PrimitiveType {
    pub fn from_name(name: &str) -> Option<PrimitiveType> {
        NAMES.iter().find(|(_, n)| *n == name).map(|(t, _)| *t)
    }

    pub fn name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(t, _)| *t == self)
            .map(|(_, n)| *n)
            .expect("every primitive type has a name")
    }

    /// Storage width of one element in bits (complex: both parts); 0 for token/opaque.
    pub fn bit_width(self) -> u32 {
        use PrimitiveType::*;
        match self {
            Pred => 8,
            S1 | U1 => 1,
            S2 | U2 => 2,
            S4 | U4 | F4E2M1FN => 4,
            S8 | U8 | F8E3M4 | F8E4M3 | F8E4M3FN | F8E4M3B11FNUZ | F8E4M3FNUZ | F8E5M2
            | F8E5M2FNUZ | F8E8M0FNU => 8,
            S16 | U16 | F16 | BF16 => 16,
            S32 | U32 | F32 => 32,
            S64 | U64 | F64 | C64 => 64,
            C128 => 128,
            Token | Opaque => 0,
        }
    }

    pub fn is_signed_int(self) -> bool {
        use PrimitiveType::*;
        matches!(self, S1 | S2 | S4 | S8 | S16 | S32 | S64)
    }

    pub fn is_unsigned_int(self) -> bool {
        use PrimitiveType::*;
        matches!(self, U1 | U2 | U4 | U8 | U16 | U32 | U64)
    }

    pub fn is_int(self) -> bool {
        self.is_signed_int() || self.is_unsigned_int()
    }

    pub fn is_float(self) -> bool {
        use PrimitiveType::*;
        matches!(
            self,
            F16 | BF16
                | F32
                | F64
                | F4E2M1FN
                | F8E3M4
                | F8E4M3
                | F8E4M3FN
                | F8E4M3B11FNUZ
                | F8E4M3FNUZ
                | F8E5M2
                | F8E5M2FNUZ
                | F8E8M0FNU
        )
    }

    pub fn is_complex(self) -> bool {
        matches!(self, PrimitiveType::C64 | PrimitiveType::C128)
    }

    /// Types that can be elements of an array (everything but token and opaque).
    pub fn is_array_element(self) -> bool {
        !matches!(self, PrimitiveType::Token | PrimitiveType::Opaque)
    }

    /// The element type of a complex type's real and imaginary parts.
    pub fn complex_component(self) -> Option<PrimitiveType> {
        match self {
            PrimitiveType::C64 => Some(PrimitiveType::F32),
            PrimitiveType::C128 => Some(PrimitiveType::F64),
            _ => None,
        }
    }
}

impl fmt::Display for PrimitiveType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for (ty, name) in NAMES {
            assert_eq!(PrimitiveType::from_name(name), Some(*ty));
            assert_eq!(ty.name(), *name);
        }
        assert_eq!(PrimitiveType::from_name("f128"), None);
    }

    #[test]
    fn widths() {
        assert_eq!(PrimitiveType::BF16.bit_width(), 16);
        assert_eq!(PrimitiveType::S4.bit_width(), 4);
        assert_eq!(PrimitiveType::C128.bit_width(), 128);
    }
}
