//! PTX carry chains in inline assembly: the multi-word integer arithmetic libdevice writes
//! as `asm` blocks (the Payne-Hanek argument reduction of sin, cos and tan: `a * b + c` in
//! 64 bits for f32, 128-bit products and sums for f64). O3 keeps them as
//! `llvm.inline_asm`, so the interpreter must run them to check the code the GPU runs.
//!
//! A block is parsed once into [`CarryChain`]: 32-bit scratch registers (`.reg .u32`),
//! 64-bit operands split into and packed from halves (`mov.b64 {lo, hi}, $2`,
//! `mov.b64 $0, {lo, hi}`), and 32-bit `add`/`sub`/`mul`/`mad` with PTX's carry flag
//! (`.cc` writes it, `addc`/`subc`/`madc` read it; for subtraction it is the borrow).
//! Anything else is not a carry chain, and the caller refuses the block.

use crate::error::{Result, fail};

/// Where a 32-bit value comes from or goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Operand {
    /// A `.reg .u32` scratch register.
    Scratch(u8),
    /// `$n`: output `n` while `n < outputs`, else input `n - outputs`.
    Arg(u8),
    Imm(u32),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Arith {
    Add,
    Sub,
    MulLo,
    MulHi,
    MadLo,
    MadHi,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// `mov.b64 {lo, hi}, $n`.
    Split { from: u8, lo: u8, hi: u8 },
    /// `mov.b64 $n, {lo, hi}`.
    Join { to: u8, lo: u8, hi: u8 },
    Arith {
        op: Arith,
        carry_in: bool,
        carry_out: bool,
        dst: Operand,
        a: Operand,
        b: Operand,
        /// The addend of `mad`.
        c: Operand,
    },
}

/// A parsed block (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CarryChain {
    scratch: usize,
    outputs: usize,
    steps: Vec<Step>,
}

impl CarryChain {
    /// Parses `asm` with `outputs` results; `None` when it is not a carry chain.
    pub(crate) fn parse(asm: &str, outputs: usize) -> Option<CarryChain> {
        let mut names: Vec<String> = Vec::new();
        let mut steps = Vec::new();
        // The block's own braces open the first statement and close the last one; braces
        // inside statements pair registers.
        for statement in asm.split(';') {
            let statement = statement.trim().trim_start_matches('{').trim();
            if statement.is_empty() || statement == "}" {
                continue;
            }
            let (mnemonic, rest) = statement
                .split_once(char::is_whitespace)
                .unwrap_or((statement, ""));
            if mnemonic == ".reg" {
                let list = rest.trim().strip_prefix(".u32")?;
                names.extend(list.split(',').map(|n| n.trim().to_string()));
                continue;
            }
            let operands = split_operands(rest)?;
            let scratch = |name: &str| -> Option<u8> {
                names.iter().position(|n| n == name.trim()).map(|i| i as u8)
            };
            let operand = |text: &str| -> Option<Operand> {
                let text = text.trim();
                if let Some(n) = text.strip_prefix('$') {
                    return n.parse().ok().map(Operand::Arg);
                }
                if let Ok(v) = text.parse::<u32>() {
                    return Some(Operand::Imm(v));
                }
                scratch(text).map(Operand::Scratch)
            };
            let pair = |text: &str| -> Option<(u8, u8)> {
                let (lo, hi) = text
                    .trim()
                    .strip_prefix('{')?
                    .strip_suffix('}')?
                    .split_once(',')?;
                Some((scratch(lo)?, scratch(hi)?))
            };
            let arg = |text: &str| -> Option<u8> { text.trim().strip_prefix('$')?.parse().ok() };
            let step = match (mnemonic, operands.as_slice()) {
                ("mov.b64", [dst, src]) if dst.trim().starts_with('{') => {
                    let (lo, hi) = pair(dst)?;
                    Step::Split {
                        from: arg(src)?,
                        lo,
                        hi,
                    }
                }
                ("mov.b64", [dst, src]) => {
                    let (lo, hi) = pair(src)?;
                    Step::Join {
                        to: arg(dst)?,
                        lo,
                        hi,
                    }
                }
                (m, [dst, args @ ..]) => {
                    let (op, carry_in, carry_out, arity) = arith(m)?;
                    if args.len() != arity {
                        return None;
                    }
                    let a = operand(&args[0])?;
                    let b = operand(&args[1])?;
                    let c = if arity == 3 {
                        operand(&args[2])?
                    } else {
                        Operand::Imm(0)
                    };
                    Step::Arith {
                        op,
                        carry_in,
                        carry_out,
                        dst: operand(dst)?,
                        a,
                        b,
                        c,
                    }
                }
                _ => return None,
            };
            steps.push(step);
        }
        (names.len() <= usize::from(u8::MAX) && !steps.is_empty()).then_some(CarryChain {
            scratch: names.len(),
            outputs,
            steps,
        })
    }

    /// Runs the block on `inputs` (each the bits of a 32- or 64-bit operand); the outputs,
    /// each as its 64 bits (a 32-bit output in the low half).
    pub(crate) fn run(&self, inputs: &[u64]) -> Result<Vec<u64>> {
        let mut scratch = vec![0u32; self.scratch];
        let mut outputs = vec![0u64; self.outputs];
        let mut carry = false;
        let input = |n: u8| -> Result<u64> {
            let k = usize::from(n)
                .checked_sub(self.outputs)
                .ok_or_else(|| fail!(InvalidIr, "inline assembly reads its output ${n}"))?;
            inputs.get(k).copied().ok_or_else(|| {
                fail!(
                    InvalidIr,
                    "inline assembly reads ${n}, which it is not given"
                )
            })
        };
        for step in &self.steps {
            match *step {
                Step::Split { from, lo, hi } => {
                    let v = input(from)?;
                    scratch[usize::from(lo)] = v as u32;
                    scratch[usize::from(hi)] = (v >> 32) as u32;
                }
                Step::Join { to, lo, hi } => {
                    let v = u64::from(scratch[usize::from(lo)])
                        | (u64::from(scratch[usize::from(hi)]) << 32);
                    *output(&mut outputs, to)? = v;
                }
                Step::Arith {
                    op,
                    carry_in,
                    carry_out,
                    dst,
                    a,
                    b,
                    c,
                } => {
                    let read = |o: Operand| -> Result<u64> {
                        Ok(match o {
                            Operand::Scratch(r) => u64::from(scratch[usize::from(r)]),
                            Operand::Arg(n) => input(n)? & 0xffff_ffff,
                            Operand::Imm(v) => u64::from(v),
                        })
                    };
                    let (a, b, c) = (read(a)?, read(b)?, read(c)?);
                    let cin = u64::from(carry_in && carry);
                    let (wide, borrow) = match op {
                        Arith::Add => (a + b + cin, false),
                        Arith::Sub => (a.wrapping_sub(b + cin) & 0xffff_ffff, a < b + cin),
                        Arith::MulLo => ((a * b) & 0xffff_ffff, false),
                        Arith::MulHi => ((a * b) >> 32, false),
                        Arith::MadLo => (((a * b) & 0xffff_ffff) + c + cin, false),
                        Arith::MadHi => (((a * b) >> 32) + c + cin, false),
                    };
                    if carry_out {
                        carry = if op == Arith::Sub {
                            borrow
                        } else {
                            wide >> 32 != 0
                        };
                    }
                    let v = wide as u32;
                    match dst {
                        Operand::Scratch(r) => scratch[usize::from(r)] = v,
                        Operand::Arg(n) => *output(&mut outputs, n)? = u64::from(v),
                        Operand::Imm(_) => {
                            return Err(fail!(InvalidIr, "inline assembly writes a constant"));
                        }
                    }
                }
            }
        }
        Ok(outputs)
    }
}

fn output(outputs: &mut [u64], n: u8) -> Result<&mut u64> {
    outputs.get_mut(usize::from(n)).ok_or_else(|| {
        fail!(
            InvalidIr,
            "inline assembly writes ${n}, which is not an output"
        )
    })
}

/// `(op, reads the carry, writes the carry, operands after the destination)` of a 32-bit
/// arithmetic mnemonic.
fn arith(mnemonic: &str) -> Option<(Arith, bool, bool, usize)> {
    let m = mnemonic
        .strip_suffix(".u32")
        .or(mnemonic.strip_suffix(".s32"))?;
    let (m, carry_out) = match m.strip_suffix(".cc") {
        Some(m) => (m, true),
        None => (m, false),
    };
    Some(match m {
        "add" => (Arith::Add, false, carry_out, 2),
        "addc" => (Arith::Add, true, carry_out, 2),
        "sub" => (Arith::Sub, false, carry_out, 2),
        "subc" => (Arith::Sub, true, carry_out, 2),
        "mul.lo" if !carry_out => (Arith::MulLo, false, false, 2),
        "mul.hi" if !carry_out => (Arith::MulHi, false, false, 2),
        "mad.lo" => (Arith::MadLo, false, carry_out, 3),
        "madc.lo" => (Arith::MadLo, true, carry_out, 3),
        "mad.hi" => (Arith::MadHi, false, carry_out, 3),
        "madc.hi" => (Arith::MadHi, true, carry_out, 3),
        _ => return None,
    })
}

/// The operands of a statement, split at the commas outside `{...}` pairs.
fn split_operands(text: &str) -> Option<Vec<String>> {
    let mut parts = vec![String::new()];
    let mut depth = 0i32;
    for ch in text.chars() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(String::new());
                continue;
            }
            _ => {}
        }
        if depth < 0 {
            return None;
        }
        parts.last_mut()?.push(ch);
    }
    (depth == 0).then_some(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAD_WIDE: &str =
        "{\n\tmad.lo.cc.u32   $0, $2, $3, $4;\n\tmadc.hi.u32     $1, $2, $3,  0;\n\t}";

    /// Asserts that [`MAD_WIDE`] gives `a * b + c` (32-bit operands) as its two 32-bit
    /// halves.
    fn assert_mad_wide(a: u64, b: u64, c: u64) {
        let chain = CarryChain::parse(MAD_WIDE, 2).unwrap();
        let wide = a * b + c;
        assert_eq!(
            chain.run(&[a, b, c]).unwrap(),
            vec![wide & 0xffff_ffff, wide >> 32],
            "{a:#x} * {b:#x} + {c:#x}"
        );
    }

    #[test]
    fn a_32_bit_multiply_add_gives_64_bits() {
        assert_mad_wide(0xdead_beef, 0xcafe_babe, 0xffff_ffff);
    }

    #[test]
    fn a_128_bit_sum_and_difference_carry_and_borrow() {
        let add = "{\n\t.reg .u32 r0, r1, r2, r3, a0, a1, a2, a3, b0, b1, b2, b3;\n\tmov.b64         {a0,a1}, $2;\n\tmov.b64         {a2,a3}, $3;\n\tmov.b64         {b0,b1}, $4;\n\tmov.b64         {b2,b3}, $5;\n\tadd.cc.u32      r0, a0, b0; \n\taddc.cc.u32     r1, a1, b1; \n\taddc.cc.u32     r2, a2, b2; \n\taddc.u32        r3, a3, b3; \n\tmov.b64         $0, {r0,r1};\n\tmov.b64         $1, {r2,r3};\n\t}";
        let sum = CarryChain::parse(add, 2).unwrap();
        let (x, y) = (
            0xffff_ffff_ffff_ffff_0000_0001_u128,
            0x1_ffff_ffff_ffff_ffff_u128,
        );
        let words = |v: u128| [v as u64, (v >> 64) as u64];
        let [x0, x1] = words(x);
        let [y0, y1] = words(y);
        let z = x.wrapping_add(y);
        assert_eq!(sum.run(&[x0, x1, y0, y1]).unwrap(), words(z).to_vec());
        let difference = CarryChain::parse(&add.replace("add", "sub"), 2).unwrap();
        let d = x.wrapping_sub(y);
        assert_eq!(
            difference.run(&[x0, x1, y0, y1]).unwrap(),
            words(d).to_vec()
        );
        let d = y.wrapping_sub(x);
        assert_eq!(
            difference.run(&[y0, y1, x0, x1]).unwrap(),
            words(d).to_vec()
        );
    }

    #[test]
    fn a_64_bit_product_in_128_bits() {
        let mul = "{\n\t.reg .u32 r0, r1, r2, r3, alo, ahi, blo, bhi;\n\tmov.b64         {alo,ahi}, $2;   \n\tmov.b64         {blo,bhi}, $3;   \n\tmul.lo.u32      r0, alo, blo;    \n\tmul.hi.u32      r1, alo, blo;    \n\tmad.lo.cc.u32   r1, alo, bhi, r1;\n\tmadc.hi.u32     r2, alo, bhi,  0;\n\tmad.lo.cc.u32   r1, ahi, blo, r1;\n\tmadc.hi.cc.u32  r2, ahi, blo, r2;\n\tmadc.hi.u32     r3, ahi, bhi,  0;\n\tmad.lo.cc.u32   r2, ahi, bhi, r2;\n\taddc.u32        r3, r3,  0;      \n\tmov.b64         $0, {r0,r1};     \n\tmov.b64         $1, {r2,r3};     \n\t}";
        let chain = CarryChain::parse(mul, 2).unwrap();
        for (a, b) in [
            (u64::MAX, u64::MAX),
            (0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210),
            (3, 5),
        ] {
            let p = u128::from(a) * u128::from(b);
            assert_eq!(
                chain.run(&[a, b]).unwrap(),
                vec![p as u64, (p >> 64) as u64]
            );
        }
    }

    #[test]
    fn hostile_blocks_are_refused_or_errors_never_panics() {
        // More scratch registers than the parser numbers: not a carry chain.
        let names: Vec<String> = (0..300).map(|i| format!("r{i}")).collect();
        let many = format!(".reg .u32 {}; add.u32 r0, r1, r2;", names.join(", "));
        assert_eq!(CarryChain::parse(&many, 1), None);
        // Operand numbers past a byte, unknown registers, unbalanced pairs.
        assert_eq!(CarryChain::parse("add.u32 $0, $1, $999;", 1), None);
        assert_eq!(CarryChain::parse("add.u32 $0, $1, nope;", 1), None);
        assert_eq!(
            CarryChain::parse(".reg .u32 a, b; mov.b64 {a,b, $1;", 1),
            None
        );
        // Reading an input it is not given, writing past its outputs: errors when run.
        let reads = CarryChain::parse("add.u32 $0, $1, $5;", 1).unwrap();
        assert!(reads.run(&[1]).is_err());
        let writes = CarryChain::parse("add.u32 $3, $1, $2;", 1).unwrap();
        assert!(writes.run(&[1, 2]).is_err());
        let own_output = CarryChain::parse("add.u32 $0, $0, $1;", 1).unwrap();
        assert!(own_output.run(&[1]).is_err());
        // Largest operands: no overflow in the 64-bit arithmetic.
        let max = u64::from(u32::MAX);
        assert_mad_wide(max, max, max);
    }

    #[test]
    fn other_assembly_is_not_a_carry_chain() {
        assert_eq!(CarryChain::parse("rcp.approx.ftz.f32 $0, $1;", 1), None);
        assert_eq!(CarryChain::parse("{ st.global.u32 [$0], $1; }", 0), None);
        assert_eq!(CarryChain::parse("", 1), None);
    }
}
