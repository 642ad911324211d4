//! `inline-calls`: replaces every `call` by a copy of the computation it calls, as XLA's
//! CallInliner does. The copies keep their names (made unique in the caller with a `.N`
//! suffix), attributes, metadata and source spans, so diagnostics still point at the callee's
//! text and its Python frames.

use hlo::graph::post_order_into;
use hlo::{Computation, ComputationId, Diagnostic, HloModule, InstrId, Instruction, Opcode};

use crate::{Names, operands_first};

/// More instructions than any real program has: calls that duplicate their callees (each
/// level calling the next twice) grow exponentially when inlined, so the module's size
/// after inlining is bounded.
const MAX_INSTRUCTIONS: usize = 1 << 20;

pub(crate) fn run(module: &mut HloModule) -> Result<bool, Diagnostic> {
    inline_all(module, CALLS)
}

/// Which instructions a pass replaces by their callee's body: one opcode, and the attribute
/// that names its callee.
#[derive(Clone, Copy)]
pub(crate) struct Inlined {
    opcode: Opcode,
    callee: &'static str,
    /// Whether the callee's root takes the caller's name (else a unique copy of its own).
    root_takes_callers_name: bool,
}

/// XLA's CallInliner keeps the callee's names (JAX's `silu.1` body's ops).
const CALLS: Inlined = Inlined {
    opcode: Opcode::Call,
    callee: "to_apply",
    root_takes_callers_name: false,
};

/// A fusion's name is the name of its value in the program (the root's name in XLA's
/// printed modules, the output's in a bundle); its body's root names an internal value.
pub(crate) const FUSIONS: Inlined = Inlined {
    opcode: Opcode::Fusion,
    callee: "calls",
    root_takes_callers_name: true,
};

/// Replaces every `what` instruction of the module by a copy of its callee's body.
pub(crate) fn inline_all(module: &mut HloModule, what: Inlined) -> Result<bool, Diagnostic> {
    let mut changed = false;
    let mut total: usize = module
        .computations
        .iter()
        .map(|c| c.instructions.len())
        .sum();
    // Callees first, so each computation is inlined once, from call-free callees: linear
    // in the size of the result, however deep the chain of calls.
    for c in callees_first(module, what) {
        let own = module.computation(c).instructions.len();
        let limit = MAX_INSTRUCTIONS.saturating_sub(total - own);
        if let Some(inlined) = inline_in(module, c, limit, what)? {
            total = total - own + inlined.instructions.len();
            module.computations[c.0] = inlined;
            changed = true;
        }
    }
    Ok(changed)
}

/// Every computation, each after the computations its `what` instructions reach (an
/// explicit stack: chains of calls may be as deep as the input is long).
fn callees_first(module: &HloModule, what: Inlined) -> Vec<ComputationId> {
    let n = module.computations.len();
    let mut visited = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let (opcode, attribute) = (what.opcode, what.callee);
    let callees = |c: ComputationId| {
        module
            .computation(c)
            .instructions
            .iter()
            .filter(move |instr| instr.opcode == opcode)
            .filter_map(move |instr| instr.called(attribute))
            .map(|callee| callee.id)
    };
    for start in 0..n {
        post_order_into(
            ComputationId(start),
            |c| c.0,
            callees,
            &mut visited,
            &mut order,
        );
    }
    order
}

/// Computation `id` with each of its `what` instructions replaced by the callee's
/// instructions, in at most `limit` instructions; `None` when it has none.
fn inline_in(
    module: &HloModule,
    id: ComputationId,
    limit: usize,
    what: Inlined,
) -> Result<Option<Computation>, Diagnostic> {
    let computation = module.computation(id);
    if !computation
        .instructions
        .iter()
        .any(|i| i.opcode == what.opcode)
    {
        return Ok(None);
    }
    let mut names = Names::of(computation);
    let mut out: Vec<Instruction> = Vec::new();
    // The new instruction that holds each old instruction's value.
    let mut value: Vec<InstrId> = vec![InstrId(usize::MAX); computation.instructions.len()];
    for old in operands_first(computation) {
        let instr = &computation.instructions[old.0];
        if instr.opcode != what.opcode {
            let mut copy = instr.clone();
            copy.operands = instr.operands.iter().map(|o| value[o.0]).collect();
            value[old.0] = push(&mut out, copy);
            continue;
        }
        let Some(callee) = instr.called(what.callee) else {
            return Err(Diagnostic::new(
                instr.spans.whole,
                format!(
                    "{} '{}' has no {} computation",
                    what.opcode, instr.name, what.callee
                ),
            ));
        };
        let callee = module.computation(callee.id);
        let args: Vec<InstrId> = instr.operands.iter().map(|o| value[o.0]).collect();
        let mut inner = vec![InstrId(usize::MAX); callee.instructions.len()];
        for j in operands_first(callee) {
            let body = &callee.instructions[j.0];
            if let Some(p) = body.parameter_number() {
                inner[j.0] = *usize::try_from(p)
                    .ok()
                    .and_then(|p| args.get(p))
                    .ok_or_else(|| {
                        Diagnostic::new(
                            body.spans.whole,
                            format!(
                                "parameter {p} of '{}', called by '{}' with {} operands",
                                callee.name,
                                instr.name,
                                args.len()
                            ),
                        )
                    })?;
                continue;
            }
            if out.len() >= limit {
                return Err(Diagnostic::new(
                    instr.spans.whole,
                    format!(
                        "inlining the {}s of '{}' makes the module more than {MAX_INSTRUCTIONS} instructions",
                        what.opcode, computation.name
                    ),
                ));
            }
            let mut copy = body.clone();
            copy.operands = body.operands.iter().map(|o| inner[o.0]).collect();
            copy.name = if j == callee.root && what.root_takes_callers_name {
                instr.name.clone()
            } else {
                names.unique(&body.name)
            };
            inner[j.0] = push(&mut out, copy);
        }
        value[old.0] = inner[callee.root.0];
    }
    Ok(Some(Computation {
        root: value[computation.root.0],
        instructions: out,
        ..computation.clone()
    }))
}

fn push(out: &mut Vec<Instruction>, instr: Instruction) -> InstrId {
    out.push(instr);
    InstrId(out.len() - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> HloModule {
        hlo::load("t.hlo", text.as_bytes()).unwrap().1
    }

    #[test]
    fn calls_become_their_bodies_with_unique_names() {
        let mut module = load(
            "HloModule m\n\
             inner {\n  a = f32[4] parameter(0)\n  ROOT n = f32[4] negate(a)\n}\n\
             outer {\n  a = f32[4] parameter(0)\n  n = f32[4] call(a), to_apply=inner\n  ROOT e = f32[4] exponential(n)\n}\n\
             ENTRY main {\n  x = f32[4] parameter(0)\n  n = f32[4] call(x), to_apply=outer\n  ROOT y = f32[4] add(n, x)\n}\n",
        );
        assert!(run(&mut module).unwrap());
        hlo::verify_module(&module).unwrap();
        let entry = module.entry_computation();
        let ops: Vec<String> = entry
            .instructions
            .iter()
            .map(|i| format!("{}={}", i.name, i.opcode))
            .collect();
        assert_eq!(ops, ["x=parameter", "n.1=negate", "e=exponential", "y=add"]);
        assert!(!run(&mut module).unwrap(), "a second run finds no call");
    }

    #[test]
    fn exponential_inlining_is_refused_and_deep_chains_are_linear() {
        // Each level calls the next twice: 2^30 instructions once inlined.
        let mut text = String::from(
            "HloModule m\nc30 {\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p)\n}\n",
        );
        for i in (0..30).rev() {
            text.push_str(&format!(
                "c{i} {{\n  p = f32[] parameter(0)\n  a = f32[] call(p), to_apply=c{n}\n  ROOT b = f32[] call(a), to_apply=c{n}\n}}\n",
                n = i + 1
            ));
        }
        text.push_str(
            "ENTRY e {\n  x = f32[] parameter(0)\n  ROOT r = f32[] call(x), to_apply=c0\n}\n",
        );
        let error = run(&mut load(&text)).unwrap_err();
        assert!(
            error.message.contains("more than 1048576 instructions"),
            "{}",
            error.message
        );

        // A chain of 20,000 calls inlines in one pass per computation.
        let n = 20_000;
        let mut text = format!(
            "HloModule m\nc{n} {{\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p)\n}}\n"
        );
        for i in (0..n).rev() {
            text.push_str(&format!(
                "c{i} {{\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), to_apply=c{}\n}}\n",
                i + 1
            ));
        }
        text.push_str(
            "ENTRY e {\n  x = f32[] parameter(0)\n  ROOT r = f32[] call(x), to_apply=c0\n}\n",
        );
        let mut module = load(&text);
        assert!(run(&mut module).unwrap());
        assert_eq!(module.entry_computation().instructions.len(), 2);
    }

    #[test]
    fn a_call_whose_root_is_a_parameter_forwards_the_operand() {
        let mut module = load(
            "HloModule m\n\
             id {\n  ROOT a = f32[2] parameter(0)\n}\n\
             ENTRY main {\n  x = f32[2] parameter(0)\n  ROOT c = f32[2] call(x), to_apply=id\n}\n",
        );
        assert!(run(&mut module).unwrap());
        let entry = module.entry_computation();
        assert_eq!(entry.instructions.len(), 1);
        assert_eq!(entry.root, InstrId(0));
    }
}
