//! Fusion mode: one module per seed, an ENTRY that calls one fusion whose computation is
//! the random graph, as XLA's emitter tests are written.

use std::fmt::Write;

use super::graph::{Graph, TYPES, Value};

/// The module of seed `seed`: HLO text that parses and verifies.
pub fn fusion(seed: u64) -> String {
    let mut g = Graph::new(seed);
    let dims = g.random_dims();
    for _ in 0..g.rng.usize(1..=3) {
        let ty = g.pick(TYPES);
        g.parameter(ty, dims.clone());
    }
    for _ in 0..g.rng.usize(2..=12) {
        g.step();
    }
    module(g, seed)
}

/// The module: the reducers, the fusion (its ROOT one value or a tuple of up to three)
/// and an ENTRY that calls it.
fn module(mut g: Graph, seed: u64) -> String {
    let last = g.values.last().expect("a parameter at least").clone();
    let mut outputs = vec![last.clone()];
    for _ in 0..g.rng.usize(0..=2) {
        // XLA fuses outputs of one shape (a loop fusion writes them at one index);
        // now and then another shape, which the emitters must refuse or take.
        let v = g.some_value();
        let fits = v.dims == last.dims || g.rng.u8(0..10) == 0;
        if fits && !outputs.iter().any(|o| o.name == v.name) {
            outputs.push(v);
        }
    }
    let mut text = format!("HloModule fuzz_{seed}\n\n");
    for (_, reducer) in &g.reducers {
        text.push_str(reducer);
        text.push('\n');
    }
    text.push_str("fused_computation {\n");
    for line in &g.body {
        let _ = writeln!(text, "  {line}");
    }
    let root_shape = if outputs.len() == 1 {
        outputs[0].shape()
    } else {
        let shapes: Vec<String> = outputs.iter().map(Value::shape).collect();
        let names: Vec<&str> = outputs.iter().map(|o| o.name.as_str()).collect();
        let tuple = format!("({})", shapes.join(", "));
        let _ = writeln!(text, "  ROOT out = {tuple} tuple({})", names.join(", "));
        tuple
    };
    if outputs.len() == 1 {
        // The last line becomes the ROOT (a parameter cannot be one: it is copied).
        let root = &outputs[0];
        if g.parameters.iter().any(|p| p.name == root.name) {
            let _ = writeln!(text, "  ROOT out = {root_shape} copy({})", root.name);
        } else {
            let line = text.rfind(&format!("  {} = ", root.name)).expect("defined");
            text.insert_str(line + 2, "ROOT ");
        }
    }
    text.push_str("}\n\nENTRY main {\n");
    let mut arguments = Vec::new();
    for (p, layout) in g.parameters.iter().zip(&g.layouts) {
        let _ = writeln!(
            text,
            "  {} = {}{layout} parameter({})",
            p.name,
            p.shape(),
            arguments.len()
        );
        arguments.push(p.name.clone());
    }
    let _ = writeln!(
        text,
        "  ROOT fusion = {root_shape} fusion({}), kind=kLoop, calls=fused_computation\n}}",
        arguments.join(", ")
    );
    text
}
