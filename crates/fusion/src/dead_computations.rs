//! `remove-dead-computations`: drops the computations nothing reachable from the entry
//! calls (the callees `inline-calls` left behind), renumbering the references of the rest.

use hlo::{AttrValue, ComputationId, Diagnostic, HloModule};

pub(crate) fn run(module: &mut HloModule) -> Result<bool, Diagnostic> {
    let n = module.computations.len();
    let mut live = vec![false; n];
    let mut stack = vec![module.entry];
    while let Some(c) = stack.pop() {
        if std::mem::replace(&mut live[c.0], true) {
            continue;
        }
        for instr in &module.computation(c).instructions {
            stack.extend(instr.called_computations().map(|r| r.id));
        }
    }
    if live.iter().all(|&l| l) {
        return Ok(false);
    }
    // New ids: the live computations keep their order.
    let mut new_id = vec![ComputationId(usize::MAX); n];
    let mut next = 0;
    for (c, &is_live) in live.iter().enumerate() {
        if is_live {
            new_id[c] = ComputationId(next);
            next += 1;
        }
    }
    let mut kept = Vec::with_capacity(next);
    for (c, computation) in std::mem::take(&mut module.computations)
        .into_iter()
        .enumerate()
    {
        if live[c] {
            kept.push(computation);
        }
    }
    for instr in kept.iter_mut().flat_map(|c| &mut c.instructions) {
        for attribute in &mut instr.attributes {
            match &mut attribute.value {
                AttrValue::Computation(r) => r.id = new_id[r.id.0],
                AttrValue::Computations(rs) => rs.iter_mut().for_each(|r| r.id = new_id[r.id.0]),
                _ => {}
            }
        }
    }
    module.computations = kept;
    module.entry = new_id[module.entry.0];
    Ok(true)
}
