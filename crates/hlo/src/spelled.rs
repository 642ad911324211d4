//! Enums whose variants each have one spelling in HLO text (opcodes, element types).

/// Declares such an enum from `Variant => "spelling"` pairs, with what the parser and the
/// printer need of it: `ALL`, `name`, `from_name` and a `Display` that writes the name.
macro_rules! spelled_enum {
    (
        $(#[$doc:meta])*
        pub enum $enum:ident {
            $($variant:ident => $name:literal,)*
        }
    ) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $enum {
            $($variant,)*
        }

        impl $enum {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$enum] = &[$($enum::$variant,)*];

            /// The spelling in HLO text.
            pub fn name(self) -> &'static str {
                match self {
                    $($enum::$variant => $name,)*
                }
            }

            /// The variant spelled `name`.
            pub fn from_name(name: &str) -> Option<$enum> {
                match name {
                    $($name => Some($enum::$variant),)*
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $enum {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}
pub(crate) use spelled_enum;
