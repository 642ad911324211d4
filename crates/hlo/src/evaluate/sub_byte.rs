//! Integers narrower than a byte: `s4`, `u4`, `s2`, `u2`. Each is a Rust type of its own (so
//! that [`Element`] and [`Int`] tell them apart), holding its value sign- or zero-extended
//! in an `i8`: the derived order is then the type's order, and every integer op of the
//! evaluator works on the bit pattern as for the wider types. In memory they are packed
//! (`interp`'s buffers, XLA's `E(4)` layouts); here they are values.

use super::elementwise::{Int, IntKind};
use super::value::{Element, Num, elements_storage};
use crate::primitive::PrimitiveType;

macro_rules! sub_byte {
    ($($name:ident: $bits:literal, $signed:literal;)*) => {$(
        #[doc = concat!("An `", stringify!($name), "` element (see the module documentation).")]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(i8);

        impl $name {
            const MASK: u64 = (1 << $bits) - 1;
            const MIN: i128 = if $signed { -(1 << ($bits - 1)) } else { 0 };
            const MAX: i128 = if $signed { (1 << ($bits - 1)) - 1 } else { (1 << $bits) - 1 };

            /// The element's value.
            pub fn get(self) -> i8 {
                self.0
            }
        }

        impl Element for $name {
            const TYPE: PrimitiveType = PrimitiveType::$name;
            fn to_num(self) -> Num {
                Num::Int(i128::from(self.0))
            }
            /// Integers wrap to the low bits; floats saturate to the type's range, NaN → 0
            /// (XLA's `convert`, as for the wider integers).
            fn from_num(n: Num) -> $name {
                match n {
                    Num::Int(i) => $name::from_pattern(i as u128),
                    Num::Float(f) if f.is_nan() => $name(0),
                    Num::Float(f) => $name((f as i128).clamp($name::MIN, $name::MAX) as i8),
                }
            }
            fn pattern(self) -> u128 {
                u128::from(self.0 as u64 & $name::MASK)
            }
            fn from_pattern(bits: u128) -> $name {
                let low = bits as u64 & $name::MASK;
                if $signed && low >> ($bits - 1) != 0 {
                    $name((low | !$name::MASK) as i8)
                } else {
                    $name(low as i8)
                }
            }
            elements_storage!($name, $name);
        }

        impl Int for $name {
            const KIND: IntKind = IntKind::new($bits, $signed);
        }
    )*};
}

sub_byte! {
    S4: 4, true;
    U4: 4, false;
    S2: 2, true;
    U2: 2, false;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_and_conversions_follow_the_width() {
        assert_eq!(S4::from_pattern(0xf).get(), -1);
        assert_eq!(S4::from_pattern(0x7).get(), 7);
        assert_eq!(U4::from_pattern(0x1f).get(), 15);
        assert_eq!(S2::from_pattern(0b10).get(), -2);
        assert_eq!(S4(-3).pattern(), 0xd);
        // Integers wrap, floats saturate.
        assert_eq!(S4::from_num(Num::Int(9)).get(), -7);
        assert_eq!(U2::from_num(Num::Int(-1)).get(), 3);
        assert_eq!(S4::from_num(Num::Float(100.0)).get(), 7);
        assert_eq!(S4::from_num(Num::Float(-100.0)).get(), -8);
        assert_eq!(U4::from_num(Num::Float(-1.5)).get(), 0);
        assert_eq!(S2::from_num(Num::Float(f64::NAN)).get(), 0);
        assert!(S4(-8) < S4(7) && U4(0) < U4(15));
    }
}
