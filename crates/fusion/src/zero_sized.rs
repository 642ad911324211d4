//! `zero-sized-hlo-elimination`: arrays without elements (a dimension of size 0) are
//! values no kernel has to compute, as XLA's `ZeroSizedHloElimination` and the
//! zero-element rules of its `AlgebraicSimplifier` make them (both run before fusion in
//! XLA:GPU, and together they are what lets XLA launch no kernel for an empty array):
//!
//! * **An empty result is a constant**: every instruction whose result is an array of no
//!   elements (computed, not a parameter) becomes `constant({})` of its shape, keeping its
//!   name and metadata. A constant is a buffer, not a kernel: a fusion whose only output
//!   is empty is gone, and a program whose results are all empty launches nothing.
//! * **A non-empty result of empty operands** is what the empty operands do not change:
//!   a reduce over an empty dimension is its init value broadcast (per output of a
//!   variadic reduce), and so is a reduce-window of an empty operand (each window lies on
//!   padding, which XLA's windows skip); a pad of an empty operand is its padding value broadcast; a
//!   concatenate drops its empty operands; a dot contracting an empty dimension is zero;
//!   a dynamic-update-slice or scatter of an empty update is a copy of its operand.
//!
//! The pass runs on the computations the runtime runs (the entry, loop bodies and
//! branches) and on the fusion computations they call, so an XLA-printed fusion whose
//! reduce reads an empty array keeps its kernel (the init values written) without the
//! empty read. A fusion computation's root keeps its op: the fusion instruction is what
//! becomes a constant when the root is empty. What is left (an empty output of a
//! multi-output fusion beside outputs that are not, a variadic scatter of nothing) the
//! emitters refuse, located.

use hlo::{
    Attribute, Computation, ComputationId, Diagnostic, HloModule, InstrId, Instruction, Literal,
    Opcode, Payload, Shape, Value,
};

use crate::{Added, Names, operands_first, remove_dead_code, scalar_broadcast};

pub(crate) fn run(module: &mut HloModule) -> Result<bool, Diagnostic> {
    let control = crate::control_computations(module);
    let mut computations: Vec<(ComputationId, bool)> =
        control.iter().map(|&id| (id, true)).collect();
    for &id in &control {
        for instr in &module.computation(id).instructions {
            if instr.opcode == Opcode::Fusion
                && let Some(called) = instr.called("calls")
                && !computations.iter().any(|&(c, _)| c == called.id)
            {
                computations.push((called.id, false));
            }
        }
    }
    let mut changed = false;
    for (id, runtime) in computations {
        changed |= eliminate(&mut module.computations[id.0], runtime);
    }
    Ok(changed)
}

/// The zero-element rewrites of `c`, whose root becomes a constant too when `runtime` (a
/// computation the runtime runs rather than a fusion body): whether any applied.
fn eliminate(c: &mut Computation, runtime: bool) -> bool {
    let mut names: Option<Names> = None;
    let mut changed = false;
    for i in operands_first(c) {
        let instr = &c.instructions[i.0];
        let rewritable = i != c.root || runtime;
        if rewritable && computes_nothing(instr) {
            let dims = instr
                .shape
                .as_array()
                .map(|a| a.dims.clone())
                .unwrap_or_default();
            let literal = Literal::Array(hlo::literal::ArrayLiteral {
                dims,
                values: Vec::new(),
            });
            let instr = &mut c.instructions[i.0];
            instr.attributes = crate::metadata(instr);
            instr.opcode = Opcode::Constant;
            instr.operands.clear();
            instr.payload = Payload::Literal(Box::new(literal));
            changed = true;
            continue;
        }
        if is_empty(&instr.shape) {
            continue;
        }
        let empty = |k: usize| c.instructions.get(k).is_some_and(|o| is_empty(&o.shape));
        let operand = |n: usize| instr.operands.get(n).map(|o| o.0);
        let rewrite = match instr.opcode {
            Opcode::Reduce | Opcode::ReduceWindow => {
                let inputs = instr.operands.len() / 2;
                let any_empty = instr.operands[..inputs].iter().any(|o| empty(o.0));
                any_empty
                    .then(|| instr.operands[inputs..].to_vec())
                    .map(Rewrite::Inits)
            }
            Opcode::Pad if operand(0).is_some_and(empty) => {
                Some(Rewrite::Broadcast(instr.operands[1]))
            }
            Opcode::Concatenate if instr.operands.iter().any(|o| empty(o.0)) => {
                let kept = instr
                    .operands
                    .iter()
                    .copied()
                    .filter(|o| !empty(o.0))
                    .collect();
                Some(Rewrite::Operands(kept))
            }
            Opcode::Dot if instr.operands.iter().any(|o| empty(o.0)) => Some(Rewrite::Zero),
            Opcode::DynamicUpdateSlice if operand(1).is_some_and(empty) => {
                Some(Rewrite::Copy(instr.operands[0]))
            }
            Opcode::Scatter if instr.operands.len() == 3 && operand(2).is_some_and(empty) => {
                Some(Rewrite::Copy(instr.operands[0]))
            }
            _ => None,
        };
        let Some(rewrite) = rewrite else {
            continue;
        };
        let names = names.get_or_insert_with(|| Names::of(c));
        apply(c, i, rewrite, names);
        changed = true;
    }
    if changed {
        remove_dead_code(c);
        crate::put_operands_first(c);
    }
    changed
}

/// A rewrite of an instruction with a non-empty result and empty operands.
enum Rewrite {
    /// A reduce or reduce-window: its init values broadcast to its results.
    Inits(Vec<InstrId>),
    /// A pad: its padding value broadcast.
    Broadcast(InstrId),
    /// A concatenate of its non-empty operands.
    Operands(Vec<InstrId>),
    /// A dot: zero broadcast.
    Zero,
    /// An update of nothing: its operand copied.
    Copy(InstrId),
}

/// Whether `instr` computes an array of no elements that may become a constant: not a
/// parameter or a constant already, nothing with an effect (a custom call, an infeed...).
fn computes_nothing(instr: &Instruction) -> bool {
    let removable = crate::is_pure(instr.opcode)
        || matches!(
            instr.opcode,
            Opcode::Fusion | Opcode::Scatter | Opcode::Sort
        );
    removable && instr.opcode != Opcode::Constant && is_empty(&instr.shape)
}

/// Whether `shape` is an array of no elements.
fn is_empty(shape: &Shape) -> bool {
    shape.as_array().is_some_and(|a| a.element_count() == 0)
}

/// `rewrite` applied to instruction `i` of `c` in place: it keeps its name, result shape
/// and metadata; the instructions it needs (broadcasts, a zero) are added.
fn apply(c: &mut Computation, i: InstrId, rewrite: Rewrite, names: &mut Names) {
    let old = c.instructions[i.0].clone();
    let span = old.spans.whole;
    let into = |opcode, operands, attributes: Vec<Attribute>| Instruction {
        opcode,
        operands,
        payload: Payload::None,
        attributes: attributes
            .into_iter()
            .chain(crate::metadata(&old))
            .collect(),
        ..old.clone()
    };
    let mut added = Added {
        c,
        names,
        of: old.clone(),
    };
    let replacement = match (rewrite, &old.shape) {
        (Rewrite::Inits(inits), Shape::Tuple(leaves)) => {
            // A variadic reduce: each init broadcast to its output.
            let broadcasts = (inits.into_iter().zip(leaves))
                .map(|(init, leaf)| added.broadcast("init", leaf.clone(), init))
                .collect();
            into(Opcode::Tuple, broadcasts, Vec::new())
        }
        (Rewrite::Inits(inits), _) => into(Opcode::Broadcast, inits, vec![scalar_broadcast(span)]),
        (Rewrite::Broadcast(value), _) => {
            into(Opcode::Broadcast, vec![value], vec![scalar_broadcast(span)])
        }
        (Rewrite::Operands(kept), _) => {
            let dimensions = old.attributes.iter().filter(|a| a.name == "dimensions");
            into(Opcode::Concatenate, kept, dimensions.cloned().collect())
        }
        (Rewrite::Zero, shape) => {
            let Some(result) = shape.as_array() else {
                return;
            };
            let ty = result.element_type;
            let zero = if ty.is_complex() {
                Value::Complex(0.0, 0.0)
            } else if ty.is_float() {
                Value::Float(0.0)
            } else if ty == hlo::PrimitiveType::Pred {
                Value::Pred(false)
            } else {
                Value::Int(0)
            };
            let zero = added.constant("zero", ty, zero);
            into(Opcode::Broadcast, vec![zero], vec![scalar_broadcast(span)])
        }
        (Rewrite::Copy(operand), _) => into(Opcode::Copy, vec![operand], Vec::new()),
    };
    c.instructions[i.0] = replacement;
}
