//! Element types for the narrow floats (`f4e2m1fn` and the f8 family): each
//! holds its encoding, converts through [`crate::narrow_float::Format`] (round to nearest,
//! ties to even, as `ml_dtypes` and XLA's kernels) and computes in f32, rounding every
//! result, as f16 and bf16 do. `f4e2m1fn` is stored packed, two to a byte.

use super::elementwise::{F32Binary, F32Unary, F64Binary, F64Unary, Float};
use super::value::{Element, Num, elements_storage};
use crate::narrow_float::{Format, HardwareConversion};
use crate::primitive::PrimitiveType;

macro_rules! narrow_float {
    ($($name:ident),*) => {$(
        #[doc = concat!("A `", stringify!($name), "` element: its encoding.")]
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        pub struct $name(u8);

        impl $name {
            fn format() -> Format {
                Format::of(PrimitiveType::$name).expect("a narrow float")
            }

            /// The encoding.
            pub fn bits(self) -> u8 {
                self.0
            }

            /// Rounded once, from the exact value. A NaN becomes what XLA's kernels give:
            /// where sm_90 converts with one instruction (`f8e4m3fn`, `f8e5m2`), its
            /// `0x7f` whatever the sign (HLO leaves a NaN's sign and payload open;
            /// `ml_dtypes` keeps the sign).
            pub fn from_f64(x: f64) -> $name {
                match HardwareConversion::to(PrimitiveType::$name) {
                    Some(cvt) if x.is_nan() => $name(cvt.convert(f32::NAN) as u8),
                    _ => $name($name::format().encode(x) as u8),
                }
            }

            pub fn to_f32(self) -> f32 {
                $name::format().decode(u32::from(self.0)) as f32
            }
        }

        impl Element for $name {
            const TYPE: PrimitiveType = PrimitiveType::$name;
            fn to_num(self) -> Num {
                Num::Float(f64::from(self.to_f32()))
            }
            fn from_num(n: Num) -> $name {
                match n {
                    Num::Int(i) => $name::from_f64(i as f64),
                    Num::Float(f) => $name::from_f64(f),
                }
            }
            fn pattern(self) -> u128 {
                u128::from(self.0)
            }
            fn from_pattern(bits: u128) -> $name {
                $name((bits & ((1 << $name::format().width()) - 1)) as u8)
            }
            elements_storage!($name, $name);
        }

        impl Float for $name {
            fn apply1(self, f: F32Unary, _: F64Unary) -> $name {
                $name::from_f64(f64::from(f(self.to_f32())))
            }
            fn apply2(self, other: $name, f: F32Binary, _: F64Binary) -> $name {
                $name::from_f64(f64::from(f(self.to_f32(), other.to_f32())))
            }
            fn to_f64(self) -> f64 {
                f64::from(self.to_f32())
            }
        }
    )*};
}

narrow_float!(
    F4E2M1FN,
    F8E3M4,
    F8E4M3,
    F8E4M3FN,
    F8E4M3B11FNUZ,
    F8E4M3FNUZ,
    F8E5M2,
    F8E5M2FNUZ,
    F8E8M0FNU
);
