//! Random valid HLO, for differential fuzzing of the whole compiler. Two modes, one graph
//! builder:
//!
//! - *fusions* ([`fusion`]): an ENTRY that calls one fusion whose computation is a random
//!   graph of the ops the emitters take: elementwise math of every type class, compare,
//!   select, clamp, convert, bitcast-convert, broadcast, reshape, transpose, slice,
//!   reverse, iota, concatenate, pad, dynamic slices, gather (XLA's canonical form),
//!   reduce, reduce-window, dot, round trips through the narrow float and sub-byte types
//!   and through c64/c128 arithmetic, over random shapes (1, odd, prime sizes) with shared
//!   subexpressions and several outputs;
//! - *programs* ([`program`]): the same kind of graph unfused, as JAX prints a jitted
//!   function: instructions in the ENTRY, in a computation it calls, or split between a
//!   called computation (its results a tuple) and the ENTRY; reductions broadcast back into
//!   elementwise code; gathers as JAX writes them and scatters; several outputs of any
//!   shape. These go through the fusion pipeline.
//!
//! Sizes stay small (at most [`MAX_ELEMENTS`] per array) so that `--check` interprets every
//! stage fast. The same seed gives the same text on every machine (`fastrand` with the
//! seed; no hashing of addresses), so a failure is replayed by its seed alone.

mod fusion;
mod graph;
mod program;
mod steps;

pub use fusion::fusion;
pub use graph::MAX_ELEMENTS;
pub use program::{flat_program, program};

#[cfg(test)]
mod tests {
    use super::*;

    /// Every module of the first seeds parses and verifies, and a seed gives the same text
    /// twice.
    #[test]
    fn generated_modules_are_valid_and_deterministic() {
        for seed in 0..500 {
            for text in [fusion(seed), program(seed), flat_program(seed)] {
                if let Err(e) = hlo::load("fuzz.hlo", text.as_bytes()) {
                    panic!("seed {seed}:\n{text}\n{e}");
                }
            }
            assert_eq!(fusion(seed), fusion(seed));
            assert_eq!(program(seed), program(seed));
        }
    }

    /// A program and its flat form hold the same instructions: the flat form is what a
    /// failing program is shrunk from.
    #[test]
    fn the_flat_form_has_the_programs_instructions() {
        let ops = |text: &str| {
            let mut ops: Vec<String> = text
                .lines()
                .filter(|l| l.contains(" = ") && !l.contains("parameter("))
                .filter(|l| !l.contains(" call(") && !l.contains("get-tuple-element("))
                .filter(|l| !l.contains(" tuple("))
                .map(|l| l.trim().trim_start_matches("ROOT ").to_string())
                .collect();
            ops.sort();
            ops
        };
        let mut forms = std::collections::BTreeSet::new();
        for seed in 0..100 {
            let (text, flat) = (program(seed), flat_program(seed));
            forms.insert((
                text.matches(" call(").count(),
                text.contains("get-tuple-element("),
            ));
            assert_eq!(ops(&text), ops(&flat), "seed {seed}:\n{text}\n{flat}");
            assert!(!flat.contains(" call("));
        }
        // Flat, called, and split with its tuple read back.
        assert!(
            forms.contains(&(0, false)) && forms.contains(&(1, false)),
            "{forms:?}"
        );
        assert!(forms.contains(&(1, true)), "{forms:?}");
    }
}
