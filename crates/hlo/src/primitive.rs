//! XLA's primitive (element) types, as spelled in HLO text.

use crate::spelled::spelled_enum;

spelled_enum! {
    /// An element type. Every type XLA can print parses, including the ones codegen refuses
    /// (complex, the exotic f8/f4 formats, tokens): refusing is the emitters' job, with a
    /// message that names the op, not the parser's.
    pub enum PrimitiveType {
        Pred => "pred",
        S1 => "s1",
        S2 => "s2",
        S4 => "s4",
        S8 => "s8",
        S16 => "s16",
        S32 => "s32",
        S64 => "s64",
        U1 => "u1",
        U2 => "u2",
        U4 => "u4",
        U8 => "u8",
        U16 => "u16",
        U32 => "u32",
        U64 => "u64",
        F16 => "f16",
        BF16 => "bf16",
        F32 => "f32",
        F64 => "f64",
        F4E2M1FN => "f4e2m1fn",
        F8E3M4 => "f8e3m4",
        F8E4M3 => "f8e4m3",
        F8E4M3FN => "f8e4m3fn",
        F8E4M3B11FNUZ => "f8e4m3b11fnuz",
        F8E4M3FNUZ => "f8e4m3fnuz",
        F8E5M2 => "f8e5m2",
        F8E5M2FNUZ => "f8e5m2fnuz",
        F8E8M0FNU => "f8e8m0fnu",
        C64 => "c64",
        C128 => "c128",
        Token => "token",
        Opaque => "opaque",
    }
}

impl PrimitiveType {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for &ty in PrimitiveType::ALL {
            assert_eq!(PrimitiveType::from_name(ty.name()), Some(ty));
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
