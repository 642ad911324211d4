//! Which of `fuse`'s rules made each kernel, read back from the fused module (so it can be
//! asked of any module with fusions, XLA's own included): `hlo-emit --explain-fusion`.
//!
//! For each fusion of the entry, in launch order: its kind and root; a row normalization
//! (reduces over rows whose values the outputs use on the same rows); a reduce hero with
//! its prologue; an epilogue (what the root computes from the reduced values, once per
//! reduced element); extra outputs (a multi-output fusion's other results); producers that
//! are copies of an instruction also copied into other fusions; and, for a fusion whose
//! result other fusions read, why it is a kernel of its own.

use std::collections::HashMap;

use emitters::normalization::RowNormalization;
use hlo::{Computation, HloModule, InstrId, Opcode};

use crate::fuse::{cheap, epilogue_chain};
use crate::positions;

/// One paragraph per fusion of the entry (see the module documentation).
pub fn explain_fusion(module: &HloModule) -> String {
    let entry = module.entry_computation();
    let fusions: Vec<(InstrId, &hlo::Instruction, &Computation)> = entry
        .instructions
        .iter()
        .enumerate()
        .filter(|(_, i)| i.opcode == Opcode::Fusion)
        .filter_map(|(k, i)| Some((InstrId(k), i, module.computation(i.called("calls")?.id))))
        .collect();
    // How many fusions hold an instruction of each name: more than one is a copy.
    let mut copies: HashMap<&str, usize> = HashMap::new();
    for (_, _, c) in &fusions {
        for instr in &c.instructions {
            // Constants are copied wherever they are read; they explain nothing.
            if !matches!(
                instr.opcode,
                Opcode::Parameter | Opcode::Tuple | Opcode::Constant
            ) {
                *copies.entry(instr.name.as_str()).or_default() += 1;
            }
        }
    }
    let mut readers: HashMap<InstrId, usize> = HashMap::new();
    for instr in &entry.instructions {
        for &o in &instr.operands {
            if instr.opcode == Opcode::Fusion {
                *readers.entry(o).or_default() += 1;
            }
        }
    }
    let broadcasting = broadcasting_readers(module);
    let mut out = String::new();
    for (k, &(id, instr, c)) in fusions.iter().enumerate() {
        let kind = match instr.attribute("kind").map(|a| &a.value) {
            Some(hlo::AttrValue::Enum(kind)) => kind.as_str(),
            _ => "kLoop",
        };
        let root = c.root_instruction();
        out.push_str(&format!(
            "fusion {k}: {} ({kind}), root '{}' ({})\n",
            c.name, root.name, root.opcode
        ));
        let outputs = if root.opcode == Opcode::Tuple {
            root.operands.clone()
        } else {
            vec![c.root]
        };
        let position = positions(c);
        let reduces: Vec<InstrId> = (0..c.instructions.len())
            .map(InstrId)
            .filter(|&i| c.instruction(i).opcode == Opcode::Reduce)
            .collect();
        let rows =
            !reduces.is_empty() && RowNormalization::analyze(&emitters::analyze(c)).is_some();
        let (siblings, others): (Vec<InstrId>, Vec<InstrId>) = outputs
            .iter()
            .skip(1)
            .partition(|&&o| c.instruction(o).opcode == Opcode::Reduce);
        if !siblings.is_empty() {
            let names = names_of(c, &siblings);
            out.push_str(&format!(
                "  sibling reductions: {} (reduce the same shape over the same dimensions and read a value in common: one pass computes them all)\n",
                names.join(", ")
            ));
        }
        // Loop outputs that no other output reads are siblings; those another reads are
        // results of the program computed on its way.
        let read_by: Vec<Vec<bool>> = outputs.iter().map(|&o| ancestors(c, o)).collect();
        let reader = |o: InstrId| outputs.iter().zip(&read_by).find(|(_, r)| r[o.0]);
        let (loop_siblings, others): (Vec<InstrId>, Vec<InstrId>) = others
            .into_iter()
            .partition(|&o| reduces.is_empty() && reader(o).is_none());
        if !loop_siblings.is_empty() {
            let names = names_of(c, &loop_siblings);
            out.push_str(&format!(
                "  siblings: {} (loops over the same shape that read a value in common: one kernel writes them all)\n",
                names.join(", ")
            ));
        }
        if !others.is_empty() {
            let names = names_of(c, &others);
            let why = if rows {
                "results of the program on the same rows: one kernel writes them all".to_string()
            } else if reduces.is_empty() {
                let mut readers: Vec<&str> = others
                    .iter()
                    .filter_map(|&o| reader(o))
                    .map(|(&r, _)| c.instruction(r).name.as_str())
                    .collect();
                readers.dedup();
                format!(
                    "results of the program that '{}' also reads: one kernel writes them all",
                    readers.join("', '")
                )
            } else {
                "computed for the reduction anyway, written out once for the fusions that read them"
                    .to_string()
            };
            out.push_str(&format!("  extra outputs: {} ({why})\n", names.join(", ")));
        }
        if rows {
            let names = names_of(c, &reduces);
            out.push_str(&format!(
                "  row normalization: {} reduce rows that the outputs then use on the same rows (one kernel, one block per row: the input is read once)\n",
                names.join(", ")
            ));
        }
        for &r in reduces.iter().filter(|_| !rows) {
            out.push_str(&format!(
                "  hero: reduce '{}' (a reduce is a hero; what it reads is its prologue)\n",
                c.instruction(r).name
            ));
            let epilogue: Vec<&str> = epilogue_chain(c, outputs[0], r, &position)
                .unwrap_or_default()
                .iter()
                .rev()
                .map(|&i| c.instruction(i).name.as_str())
                .collect();
            if !epilogue.is_empty() {
                out.push_str(&format!(
                    "  epilogue: {} (computed once per reduced element, at its index)\n",
                    epilogue.join(", ")
                ));
            }
        }
        let mut copied: Vec<&str> = c
            .instructions
            .iter()
            .filter(|i| copies.get(i.name.as_str()).is_some_and(|&n| n > 1))
            .map(|i| i.name.as_str())
            .collect();
        copied.sort_unstable();
        if !copied.is_empty() {
            out.push_str(&format!(
                "  copied into other fusions too: {} (cheap: computed again rather than read back)\n",
                copied.join(", ")
            ));
        }
        let read_by = readers.get(&id).copied().unwrap_or(0);
        let broadcast_by: &[&str] = broadcasting.get(&id).map_or(&[], Vec::as_slice);
        if !cheap(root) && outputs.len() == 1 && !broadcast_by.is_empty() {
            out.push_str(&format!(
                "  not fused into {}: '{}' ({}) is expensive and broadcast there, where it would be computed once per element
",
                broadcast_by.join(", "),
                root.name,
                root.opcode
            ));
        }
        if read_by > 1 && reduces.is_empty() {
            out.push_str(&format!(
                "  a kernel of its own: {read_by} fusions read '{}', which is not cheap enough to compute in each\n",
                root.name
            ));
        } else if reduces.is_empty() && outputs.len() == 1 && result_of_program(entry, id) {
            out.push_str(&format!(
                "  a kernel of its own: '{}' is a result of the program\n",
                root.name
            ));
        }
    }
    out
}

/// Whether the entry's ROOT is `id` or a tuple that holds it (through get-tuple-elements).
fn result_of_program(entry: &Computation, id: InstrId) -> bool {
    let root = entry.root_instruction();
    entry.root == id
        || (root.opcode == Opcode::Tuple
            && root.operands.iter().any(|&o| {
                o == id
                    || (entry.instruction(o).opcode == Opcode::GetTupleElement
                        && entry.instruction(o).operands.first() == Some(&id))
            }))
}

/// Per value of the entry: the fusions that read it through a broadcast that expands it
/// (one pass over every fusion's parameters and their users).
fn broadcasting_readers(module: &HloModule) -> HashMap<InstrId, Vec<&str>> {
    let entry = module.entry_computation();
    let elements = |i: &hlo::Instruction| i.shape.as_array().map_or(0, |a| a.element_count());
    let mut readers: HashMap<InstrId, Vec<&str>> = HashMap::new();
    for reader in entry
        .instructions
        .iter()
        .filter(|i| i.opcode == Opcode::Fusion)
    {
        let Some(called) = reader.called("calls").map(|c| module.computation(c.id)) else {
            continue;
        };
        let mut broadcast_params: Vec<i64> = called
            .instructions
            .iter()
            .filter(|user| user.opcode == Opcode::Broadcast)
            .filter_map(|user| {
                let param = called.instruction(*user.operands.first()?);
                (elements(user) > elements(param)).then_some(param.parameter_number()?)
            })
            .collect();
        broadcast_params.sort_unstable();
        broadcast_params.dedup();
        for k in broadcast_params {
            if let Some(&value) = usize::try_from(k).ok().and_then(|k| reader.operands.get(k)) {
                let names = readers.entry(value).or_default();
                if names.last() != Some(&called.name.as_str()) {
                    names.push(called.name.as_str());
                }
            }
        }
    }
    readers
}

/// The names of `ids` in `c`, in order.
fn names_of<'c>(c: &'c Computation, ids: &[InstrId]) -> Vec<&'c str> {
    ids.iter()
        .map(|&o| c.instruction(o).name.as_str())
        .collect()
}

/// Per instruction of `c`: whether `of` reads it, directly or through others.
fn ancestors(c: &Computation, of: InstrId) -> Vec<bool> {
    let mut seen = vec![false; c.instructions.len()];
    let mut stack = c.instruction(of).operands.clone();
    while let Some(i) = stack.pop() {
        if !std::mem::replace(&mut seen[i.0], true) {
            stack.extend(c.instruction(i).operands.iter().copied());
        }
    }
    seen
}
