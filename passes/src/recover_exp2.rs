//! `recover-exp2`: `math.exp(x * ln 2)` becomes `math.exp2(x)`, as XLA's `RecoverExp2Pass`
//! does for ROCm.
//!
//! Frameworks write `2^x` as `exp(x * log(2))` with `log(2)` rounded to the type they
//! trace in; the hardware has an `exp2` instruction, which `exp` itself is built on. A
//! scalar `math.exp` whose operand is an `arith.mulf` with a float constant as its second
//! operand (canonicalization puts constants there) is rewritten when that constant, rounded
//! to `f32`, is `ln 2` rounded to f32, tf32 or bf16 (and f16, which has tf32's mantissa), or
//! one unit in the last place either side of one of those: the constants such traces hold.
//! The `mulf` and the constant go when nothing else reads them.
//!
//! The rewrite is not exact: `exp(x * c)` for a `c` that is `ln 2` rounded to bf16 differs
//! from `2^x` by `2^(x (c / ln 2 - 1))`, 18% at `x = 100`. It recovers what the program
//! meant, not what it computes, so (as in XLA's CUDA pipeline) it is not in the standard
//! pipeline, whose `--check` compares with the HLO as written.

use ir::dialects::{arith, math};
use ir::{Builder, Diagnostic, InsertPoint, Module, OpId, Value};

use crate::pass::Pass;
use crate::rewrite::erase_with_dead_operands;

pub struct RecoverExp2;

impl Pass for RecoverExp2 {
    crate::pass_names!(
        "recover-exp2",
        "Rewrite exp(x * ln 2), ln 2 rounded to f32, tf32 or bf16, as exp2(x) (XLA's RecoverExp2)"
    );

    fn run(&self, m: &mut Module) -> Result<(), Diagnostic> {
        let ln2 = ln2_constants();
        for exp in m.ops_named(math::EXP) {
            let Some(x) = power_of_two(m, exp, &ln2) else {
                continue;
            };
            let loc = m.loc(exp);
            let mut b = Builder::new(m, InsertPoint::Before(exp));
            b.set_loc(loc);
            let exp2 = b.unary(math::EXP2, x);
            m.replace_all_uses(m.result(exp, 0), exp2);
            erase_with_dead_operands(m, exp);
        }
        Ok(())
    }
}

/// `x` when `exp` is a scalar `math.exp(arith.mulf(x, c))` with `c` one of `ln2`.
fn power_of_two(m: &Module, exp: OpId, ln2: &[f32]) -> Option<Value> {
    let product = m.operand(exp, 0);
    if m.value_type(product).element_type().is_some() {
        return None;
    }
    let mulf = m.defining_op(product).filter(|&op| m.is(op, arith::MULF))?;
    let constant = m.defining_op(m.operand(mulf, 1))?;
    if !m.is(constant, arith::CONSTANT) {
        return None;
    }
    let c = m.prop(constant, "value")?.as_f64()? as f32;
    ln2.contains(&c).then(|| m.operand(mulf, 0))
}

/// `ln 2` rounded to f32, tf32 (10 mantissa bits, as f16) and bf16 (7), each with its
/// neighbours one unit in the last place away in that type, as f32 values.
fn ln2_constants() -> Vec<f32> {
    let ln2 = std::f64::consts::LN_2 as f32;
    [23u32, 10, 7]
        .into_iter()
        .flat_map(|mantissa_bits| {
            let ulp = 1u32 << (23 - mantissa_bits);
            let rounded = round_mantissa(ln2.to_bits(), ulp);
            [rounded - ulp, rounded, rounded + ulp].map(f32::from_bits)
        })
        .collect()
}

/// The f32 bit pattern `bits` (positive, normal) rounded to a multiple of `ulp`, to nearest,
/// ties to even.
fn round_mantissa(bits: u32, ulp: u32) -> u32 {
    let (down, rest) = (bits - bits % ulp, bits % ulp);
    let half = ulp / 2;
    if rest > half || (rest == half && (down / ulp) % 2 == 1) {
        down + ulp
    } else {
        down
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ln2_in_each_type_is_xla_s() {
        let table = ln2_constants();
        // f32: 0x3F317218 and its neighbours; tf32: (1 + 396/1024) / 2; bf16: (1 + 49/128) / 2.
        assert_eq!(
            table[0..3].iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            [0x3F31_7217, 0x3F31_7218, 0x3F31_7219]
        );
        assert_eq!(&table[3..6], &[0.692_871_1, 0.693_359_4, 0.693_847_66]);
        assert_eq!(&table[6..9], &[0.6875, 0.691_406_25, 0.695_312_5]);
    }
}
