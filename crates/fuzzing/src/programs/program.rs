//! Program mode: a random graph as JAX prints a jitted function before XLA fuses it, so the
//! fusion pipeline is fuzzed too. The graph is laid out in one of three forms: every
//! instruction in the ENTRY; all of them in a computation the ENTRY calls (JAX's
//! `jit(f)`); or the first part in a called computation whose live values come back as a
//! tuple read with `get-tuple-element`, the rest in the ENTRY. The ENTRY's result is one
//! value or a tuple of up to three, of any shapes.

use std::fmt::Write;

use super::graph::{Graph, TYPES, Value};

/// The layout of a program's instructions in computations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    Flat,
    Called,
    /// The first `n` instructions (after the parameters) in a called computation.
    Split(usize),
}

/// The program of seed `seed`: an unfused module that parses and verifies.
pub fn program(seed: u64) -> String {
    build(seed, false)
}

/// The program of seed `seed` with every instruction in the ENTRY: the same graph as
/// [`program`], the form a failing program is shrunk in.
pub fn flat_program(seed: u64) -> String {
    build(seed, true)
}

fn build(seed: u64, flat: bool) -> String {
    let mut g = Graph::new(seed);
    g.unfused = true;
    let dims = g.random_dims();
    for _ in 0..g.rng.usize(1..=3) {
        let ty = g.pick(TYPES);
        // Now and then a parameter of other dimensions, to be broadcast or reduced into
        // the rest.
        let dims = if g.rng.u8(0..4) == 0 {
            g.random_dims()
        } else {
            dims.clone()
        };
        g.parameter(ty, dims);
    }
    for _ in 0..g.rng.usize(3..=16) {
        if g.rng.u8(0..5) == 0 {
            let v = g.some_value();
            g.normalize(&v);
        } else {
            g.step();
        }
    }
    let last = g.values.last().expect("a parameter at least").clone();
    if g.parameters.iter().any(|p| p.name == last.name) {
        g.unary(&last);
    }
    let last = g.values.last().expect("just added").clone();
    let mut outputs = vec![last];
    for _ in 0..g.rng.usize(0..=2) {
        let v = g.some_value();
        let parameter = g.parameters.iter().any(|p| p.name == v.name);
        if !parameter && !outputs.iter().any(|o| o.name == v.name) {
            outputs.push(v);
        }
    }
    // The form is drawn apart, so that the flat form has the same graph.
    let mut layout = fastrand::Rng::with_seed(seed ^ 0x5eed_f04e);
    let ops = g.body.len() - g.parameters.len();
    let form = match layout.u8(0..3) {
        _ if flat => Form::Flat,
        0 => Form::Flat,
        1 => Form::Called,
        _ if ops < 2 => Form::Called,
        _ => Form::Split(layout.usize(1..ops)),
    };
    print(&g, &outputs, form, seed)
}

/// `name` and shape of an instruction line `name = shape op(...)`.
fn name_and_shape(line: &str) -> (&str, &str) {
    let (name, rest) = line.split_once(" = ").expect("an instruction line");
    // A tuple's shape (`(f32[], s32[])`, a variadic reduce's) runs to its closing paren.
    let end = if rest.starts_with('(') {
        rest.find(") ").map_or(rest.len(), |i| i + 1)
    } else {
        rest.find(' ').unwrap_or(rest.len())
    };
    (name, &rest[..end])
}

/// The names a line reads (every token of its right-hand side).
fn tokens(line: &str) -> impl Iterator<Item = &str> {
    let rhs = line.split_once(" = ").map_or(line, |(_, rhs)| rhs);
    rhs.split(|c: char| !(c.is_alphanumeric() || c == '_'))
}

fn print(g: &Graph, outputs: &[Value], form: Form, seed: u64) -> String {
    let is_parameter = |line: &&String| {
        let (name, _) = name_and_shape(line);
        g.parameters.iter().any(|p| p.name == name)
    };
    let parameters: Vec<&String> = g.body.iter().filter(is_parameter).collect();
    let ops: Vec<&String> = g.body.iter().filter(|l| !is_parameter(l)).collect();
    let arguments: Vec<&str> = g.parameters.iter().map(|p| p.name.as_str()).collect();
    let arguments = arguments.join(", ");
    let shape_of = |name: &str| {
        let line = g.body.iter().find(|l| name_and_shape(l).0 == name);
        name_and_shape(line.expect("defined")).1.to_string()
    };

    let mut text = format!("HloModule prog_{seed}\n\n");
    for (_, reducer) in &g.reducers {
        text.push_str(reducer);
        text.push('\n');
    }
    // `ops` ending in the outputs: the last line (the first output) is the ROOT, or a
    // tuple of the outputs is.
    let body_with_root = |text: &mut String, ops: &[&String], prefix: &[String]| {
        for line in prefix {
            let _ = writeln!(text, "  {line}");
        }
        for (k, line) in ops.iter().enumerate() {
            let root = if k + 1 == ops.len() && outputs.len() == 1 {
                "ROOT "
            } else {
                ""
            };
            let _ = writeln!(text, "  {root}{line}");
        }
        if outputs.len() > 1 {
            let names: Vec<&str> = outputs.iter().map(|o| o.name.as_str()).collect();
            let _ = writeln!(
                text,
                "  ROOT out = {} tuple({})",
                root_shape(outputs),
                names.join(", ")
            );
        }
    };
    let header = |text: &mut String, name: &str| {
        let _ = writeln!(text, "{name} {{");
        for line in &parameters {
            let _ = writeln!(text, "  {line}");
        }
    };
    match form {
        Form::Flat => {
            header(&mut text, "ENTRY main");
            body_with_root(&mut text, &ops, &[]);
        }
        Form::Called => {
            header(&mut text, "f");
            body_with_root(&mut text, &ops, &[]);
            text.push_str("}\n\n");
            header(&mut text, "ENTRY main");
            let _ = writeln!(
                text,
                "  ROOT r = {} call({arguments}), to_apply=f",
                root_shape(outputs)
            );
        }
        Form::Split(n) => {
            let (first, rest) = ops.split_at(n);
            let read_later: Vec<&str> = rest
                .iter()
                .flat_map(|l| tokens(l))
                .chain(outputs.iter().map(|o| o.name.as_str()))
                .collect();
            let live: Vec<&str> = first
                .iter()
                .map(|l| name_and_shape(l).0)
                .filter(|name| read_later.contains(name))
                .collect();
            if live.is_empty() {
                return print(g, outputs, Form::Called, seed);
            }
            let shapes: Vec<String> = live.iter().map(|n| shape_of(n)).collect();
            let tuple = format!("({})", shapes.join(", "));
            header(&mut text, "part1");
            for line in first {
                let _ = writeln!(text, "  {line}");
            }
            let _ = writeln!(text, "  ROOT t = {tuple} tuple({})", live.join(", "));
            text.push_str("}\n\n");
            header(&mut text, "ENTRY main");
            let mut reads = vec![format!("c = {tuple} call({arguments}), to_apply=part1")];
            for (k, (name, shape)) in live.iter().zip(&shapes).enumerate() {
                reads.push(format!("{name} = {shape} get-tuple-element(c), index={k}"));
            }
            body_with_root(&mut text, rest, &reads);
        }
    }
    text.push_str("}\n");
    text
}

fn root_shape(outputs: &[Value]) -> String {
    if outputs.len() == 1 {
        return outputs[0].shape();
    }
    let shapes: Vec<String> = outputs.iter().map(Value::shape).collect();
    format!("({})", shapes.join(", "))
}
