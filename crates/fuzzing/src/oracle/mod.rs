//! An oracle independent of the evaluator where the evaluator and the interpreter share
//! code.
//!
//! `--check` compares the interpreter's run of every stage with the reference evaluator. Both
//! read element types through the same routines (`half` for f16 and bf16,
//! `hlo::narrow_float` for the f8 family and f4e2m1fn) and compute float functions with the
//! host's libm, so a mistake in one of those would make both agree on a wrong answer. The
//! oracle walks a program instruction by instruction through the evaluator, on the program's
//! own random inputs, and checks every element of every elementwise float op and every
//! `convert` against a second source ([`ops`]): musl's algorithms in f64 (the `libm` crate),
//! its own rounding to f16 and bf16 by formula, and `ml_dtypes`' tables for the narrow
//! floats ([`formats`]).
//!
//! Each program is walked twice: on the inputs `--check` would draw ([-2, 2] for plain
//! floats), then with every float parameter drawn from [-100, 100], where exp overflows, trig
//! needs its range reduction and conversions saturate.

mod formats;
mod ops;

use formats::{Format, Num};
use hlo::evaluate::{HostArray, HostValue, RandomRange, random_arguments, random_value};
use hlo::graph::ComputationGraph;
use hlo::module::{ComputationId, HloModule, Instruction};
use hlo::opcode::Opcode;

/// How much the oracle compared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    /// Elements compared with the second source.
    pub elements: usize,
}

/// Checks every modeled instruction of `module`'s entry computation and the computations it
/// calls or fuses, on inputs drawn from `seed`: `Err` names the first element on which the
/// evaluator and the second source disagree. A program the evaluator refuses is checked up to
/// the refusal (the check itself reports the refusal).
pub fn check(module: &HloModule, seed: u64) -> Result<Checked, String> {
    let entry = module.entry_computation();
    let mut walk = Walk {
        module,
        checked: Checked::default(),
    };
    let Ok(args) = random_arguments(entry, seed) else {
        return Ok(walk.checked);
    };
    walk.computation(module.entry, args.clone())?;
    let wide: Vec<HostValue> = args
        .into_iter()
        .zip(entry.parameters())
        .enumerate()
        .map(|(i, (arg, p))| {
            let shape = &entry.instruction(p).shape;
            match shape {
                hlo::shape::Shape::Array(a) if a.element_type.is_float() => random_value(
                    shape,
                    seed ^ (i as u64 + 1) << 32,
                    RandomRange::Between(-100.0, 100.0),
                )
                .unwrap_or(arg),
                _ => arg,
            }
        })
        .collect();
    walk.computation(module.entry, wide)?;
    Ok(walk.checked)
}

struct Walk<'m> {
    module: &'m HloModule,
    checked: Checked,
}

impl Walk<'_> {
    /// The value of computation `id` on `args`, each instruction checked as it is evaluated;
    /// `None` once the evaluator refuses an instruction.
    fn computation(
        &mut self,
        id: ComputationId,
        args: Vec<HostValue>,
    ) -> Result<Option<HostValue>, String> {
        let computation = self.module.computation(id);
        let mut values: Vec<Option<HostValue>> = vec![None; computation.instructions.len()];
        for instr_id in ComputationGraph::new(computation).post_order() {
            let instr = computation.instruction(instr_id);
            let operands: Option<Vec<HostValue>> =
                instr.operands.iter().map(|o| values[o.0].clone()).collect();
            let Some(operands) = operands else {
                return Ok(None);
            };
            let value = match instr.opcode {
                Opcode::Parameter => instr
                    .parameter_number()
                    .and_then(|n| args.get(n as usize).cloned()),
                Opcode::Fusion | Opcode::Call => match instr.called_computations().next() {
                    Some(callee) => self.computation(callee.id, operands)?,
                    None => None,
                },
                _ => {
                    let value =
                        hlo::evaluate::evaluate_instruction(self.module, id, instr_id, &operands)
                            .ok();
                    if let Some(result) = &value {
                        self.compare(&computation.name, instr, &operands, result)?;
                    }
                    value
                }
            };
            let Some(value) = value else {
                return Ok(None);
            };
            values[instr_id.0] = Some(value);
        }
        Ok(values[computation.root.0].take())
    }

    /// Every element of `result` (the evaluator's for `instr` on `operands`) against the
    /// second source, when the oracle models the op on these types.
    fn compare(
        &mut self,
        computation: &str,
        instr: &Instruction,
        operands: &[HostValue],
        result: &HostValue,
    ) -> Result<(), String> {
        if !ops::models(instr.opcode) {
            return Ok(());
        }
        let Some(result) = result.as_array() else {
            return Ok(());
        };
        let arrays: Option<Vec<&HostArray>> = operands.iter().map(|o| o.as_array()).collect();
        let Some(arrays) = arrays else {
            return Ok(());
        };
        let Some(to) = Format::of(result.element_type()) else {
            return Ok(());
        };
        let from: Option<Vec<Format>> = arrays
            .iter()
            .map(|a| Format::of(a.element_type()))
            .collect();
        let Some(from) = from else {
            return Ok(());
        };
        // The float ops are modeled on floats; convert on every real type.
        let is_convert = instr.opcode == Opcode::Convert;
        if !(is_convert || to.is_float() && from.iter().all(|f| f.is_float())) {
            return Ok(());
        }
        if arrays.iter().any(|a| a.len() != result.len()) {
            return Ok(());
        }
        for i in 0..result.len() {
            let inputs: Vec<Num> = arrays
                .iter()
                .zip(&from)
                .map(|(a, f)| f.decode(a.elements().pattern(i)))
                .collect();
            let expected = if is_convert {
                ops::convert(inputs[0], to)
            } else {
                let floats: Vec<f64> = inputs.iter().map(|n| n.as_f64()).collect();
                match ops::elementwise(instr.opcode, &floats, to) {
                    Some(e) => e,
                    None => return Ok(()),
                }
            };
            let got = result.elements().pattern(i);
            if !agree(to, got, &expected) {
                return Err(disagreement(
                    computation,
                    instr,
                    i,
                    &inputs,
                    to,
                    got,
                    &expected,
                ));
            }
            self.checked.elements += 1;
        }
        Ok(())
    }
}

/// Whether the evaluator's element `got` is within the expectation's bound.
fn agree(to: Format, got: u128, expected: &ops::Expectation) -> bool {
    if !to.is_float() {
        return got == expected.code;
    }
    match (to.is_nan(got), to.is_nan(expected.code)) {
        (true, true) => return true,
        (false, false) => {}
        _ => return false,
    }
    if got == expected.code {
        return true;
    }
    let (a, b) = (to.decode(got).as_f64(), to.decode(expected.code).as_f64());
    if expected.ulps > 0 && a.abs() <= to.smallest_normal() && b.abs() <= to.smallest_normal() {
        return true;
    }
    (to.ordinal(got) - to.ordinal(expected.code)).unsigned_abs() <= u128::from(expected.ulps)
}

fn disagreement(
    computation: &str,
    instr: &Instruction,
    element: usize,
    inputs: &[Num],
    to: Format,
    got: u128,
    expected: &ops::Expectation,
) -> String {
    let show = |n: Num| match n {
        Num::Int(i) => i.to_string(),
        Num::Float(f) => format!("{f:e}"),
    };
    let operands: Vec<String> = inputs.iter().map(|&n| show(n)).collect();
    let apart = if to.is_float() && !to.is_nan(got) && !to.is_nan(expected.code) {
        format!(
            ", {} apart where {} are allowed",
            (to.ordinal(got) - to.ordinal(expected.code)).unsigned_abs(),
            expected.ulps
        )
    } else {
        String::new()
    };
    format!(
        "the evaluator and the second source disagree on '{}' ({} to {}) in '{computation}', \
         element {element}: {}({}) is {} ({got:#x}) by the evaluator, {} ({:#x}) by the second \
         source{apart}",
        instr.name,
        instr.opcode,
        instr.shape,
        instr.opcode,
        operands.join(", "),
        show(to.decode(got)),
        show(to.decode(expected.code)),
        expected.code,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(text: &str) -> HloModule {
        hlo::load("oracle.hlo", text.as_bytes()).unwrap().1
    }

    /// A program of every modeled function and conversion on f32, f16, bf16, an f8 type and
    /// f64, on random values and on the special ones (zeros, subnormals, infinities, NaN,
    /// the largest values, where exp overflows), checks clean and counts its elements.
    #[test]
    fn the_evaluator_agrees_with_the_second_source() {
        let specials = "0, -0, 1e-40, -1e-40, inf, -inf, nan, 3.4e38, -3.4e38, 88.8, 1e10, -1e10";
        let mut text = format!(
            "HloModule m\n\nENTRY e {{\n  p = f32[64] parameter(0)\n  \
             c = f32[12] constant({{{specials}}})\n  \
             x = f32[76] concatenate(p, c), dimensions={{0}}\n"
        );
        let mut roots = Vec::new();
        for ty in ["f32", "f16", "bf16", "f8e4m3fn", "f64"] {
            text += &format!("  x.{ty} = {ty}[76] convert(x)\n");
            let unary = [
                "exponential",
                "log",
                "tanh",
                "sine",
                "cosine",
                "tan",
                "erf",
                "logistic",
                "rsqrt",
                "sqrt",
                "cbrt",
                "exponential-minus-one",
                "log-plus-one",
                "atan",
                "floor",
                "round-nearest-even",
                "sign",
            ];
            for op in unary {
                text += &format!("  {op}.{ty} = {ty}[76] {op}(x.{ty})\n");
                roots.push((format!("{op}.{ty}"), format!("{ty}[76]")));
            }
            for op in [
                "add",
                "multiply",
                "divide",
                "power",
                "atan2",
                "remainder",
                "maximum",
            ] {
                text += &format!("  {op}.{ty} = {ty}[76] {op}(x.{ty}, exponential.{ty})\n");
                roots.push((format!("{op}.{ty}"), format!("{ty}[76]")));
            }
            text += &format!("  back.{ty} = s16[76] convert(x.{ty})\n");
            roots.push((format!("back.{ty}"), "s16[76]".to_string()));
        }
        let (names, shapes): (Vec<String>, Vec<String>) = roots.into_iter().unzip();
        text += &format!(
            "  ROOT t = ({}) tuple({})\n}}\n",
            shapes.join(", "),
            names.join(", ")
        );
        let checked = check(&module(&text), 7).unwrap();
        // Two walks; each op's 76 elements and the five conversions to and from each type.
        assert_eq!(checked.elements, 2 * 76 * 5 * (17 + 7 + 2), "{checked:?}");
    }

    /// A wrong result is caught: an evaluator-made element replaced by its neighbour fails
    /// the comparison with the bound of an exact op, and passes a bound of one ulp.
    #[test]
    fn a_result_one_ulp_off_is_caught_where_the_op_is_exact() {
        let f32_format = Format::of(hlo::primitive::PrimitiveType::F32).unwrap();
        let exact = ops::elementwise(Opcode::Divide, &[1.0, 3.0], f32_format).unwrap();
        assert!(agree(f32_format, exact.code, &exact));
        assert!(!agree(f32_format, exact.code + 1, &exact));
        let exp = ops::elementwise(Opcode::Exp, &[1.0], f32_format).unwrap();
        assert!(agree(f32_format, exp.code + 2, &exp));
        assert!(!agree(f32_format, exp.code + 3, &exp));
    }
}
