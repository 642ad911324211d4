//! `hlo-cse`: one instruction for each value computed twice, as XLA's `HloCSE`. JAX traces
//! `x - mean` once per use in a layer norm, and every `jnp.where` brings its own
//! `constant(0)`; merged, the fusion pass sees one producer with several users instead of
//! two kernels' worth of the same work.
//!
//! Two pure instructions (see [`crate::is_pure`]) are the same value when they have the
//! same opcode, shape (layout included), operands (after merging), constant or parameter
//! number, called computations and attributes, `metadata` aside. The entry is visited
//! operands first, so a duplicated chain merges from its start to its end. The first
//! instruction in that order stays; later ones are replaced in their users, then removed.
//! As in `algebraic-simplifier`, the root and the values it reads keep their names.

use std::collections::HashMap;
use std::fmt::Write;

use hlo::{Diagnostic, HloModule, InstrId, Instruction, Opcode, Payload};

use crate::{is_pure, operands_first, remove_dead_code};

pub(crate) fn run(module: &mut HloModule) -> Result<bool, Diagnostic> {
    let entry_id = module.entry;
    let c = &mut module.computations[entry_id.0];
    let read_by_root = c.instructions[c.root.0].operands.clone();
    let mut replacement: Vec<InstrId> = (0..c.instructions.len()).map(InstrId).collect();
    let mut first_of: HashMap<String, InstrId> = HashMap::new();
    let mut changed = false;
    for i in operands_first(c) {
        let instr = &mut c.instructions[i.0];
        for o in &mut instr.operands {
            *o = replacement[o.0];
        }
        if !is_pure(instr.opcode) || instr.opcode == Opcode::Parameter {
            continue;
        }
        let key = value_key(instr);
        match first_of.get(&key) {
            Some(&first) if i != c.root && !read_by_root.contains(&i) => {
                replacement[i.0] = first;
                changed = true;
            }
            Some(_) => {}
            None => {
                first_of.insert(key, i);
            }
        }
    }
    if changed {
        remove_dead_code(c);
    }
    Ok(changed)
}

/// What determines the value of a pure instruction, as text: two instructions with the
/// same key compute the same array.
fn value_key(instr: &Instruction) -> String {
    let layout = instr.shape.as_array().map(|a| a.layout_or_default());
    let mut key = format!("{} {} {layout:?}", instr.opcode, instr.shape);
    for o in &instr.operands {
        write!(key, " %{}", o.0).expect("writing to a String cannot fail");
    }
    match &instr.payload {
        Payload::Literal(literal) => write!(key, " ({literal})"),
        Payload::Parameter(number) => write!(key, " ({number})"),
        Payload::None => Ok(()),
    }
    .expect("writing to a String cannot fail");
    for a in instr.attributes.iter().filter(|a| a.name != "metadata") {
        write!(key, ", {}={}", a.name, a.value).expect("writing to a String cannot fail");
    }
    key
}
