//! `--launch-json`: the launch sequence as JSON.

use std::collections::HashMap;

use hlo::{ComputationId, HloModule, Opcode, SourceFile};
use serde_json::{Value as Json, json};

use super::{byte_size, minor_to_major, plan_chain};
use crate::pipeline::{CompiledKernel, RuntimeStep};

/// `--launch-json`: every compiled kernel's launch dimensions, what is left to the runtime,
/// and the launch sequence when `kernels` are all of the module's fusions: `launches` (in
/// order, each kernel's argument and output buffers), `buffers` (name, element type,
/// dims, `minor_to_major`, bytes) and the ENTRY's `parameters` and `results` (buffer
/// indices; empty when the fusions are launched separately, each on its own inputs, and
/// then `note` says why). With `--fusion`, `launches` is null.
pub fn launch_json(
    source: &SourceFile,
    module: &HloModule,
    kernels: &[CompiledKernel],
    runtime: &[RuntimeStep],
) -> String {
    let kernel_lines: Vec<String> = kernels
        .iter()
        .map(|k| {
            let l = &k.launch;
            let mut line = json!({
                "kernel": k.kernel,
                "fusion": k.fusion,
                "grid": l.grid(),
                "block": [l.threads_per_block, 1, 1],
                "shared_memory_bytes": l.shared_memory_bytes,
            });
            // Outputs written in place: [output, parameter], the output starting as the
            // parameter's elements.
            if !k.in_place.is_empty() {
                line["in_place"] = json!(k.in_place);
            }
            one_line(&line)
        })
        .collect();
    let runtime_lines: Vec<String> = runtime
        .iter()
        .map(|r| {
            let mut step = json!({
                "instruction": r.instruction,
                "opcode": r.opcode,
                "computation": r.computation,
            });
            if let Some(target) = &r.target {
                step["target"] = json!(target);
            }
            one_line(&step)
        })
        .collect();
    let mut text = format!(
        "{{\"kernels\": {}, \"left_to_runtime\": {},\n",
        lines(&kernel_lines),
        lines(&runtime_lines)
    );
    let all = kernels.len() == emitters::fusions(module).len();
    let sequence = if all {
        plan_chain(source, module)
    } else {
        Err("one fusion was compiled (--fusion): no launch sequence".to_string())
    };
    match sequence {
        Ok(chain) => {
            let names = compiled_names(module, kernels);
            // A kernel launched from control flow is listed under that instruction, a step
            // left to the runtime: `{"runtime": "while.5", "opcode": "while", "launches":
            // [... each with "in": "body region_0.2"]}`, at its first kernel's place.
            let mut launches: Vec<Json> = Vec::new();
            for k in &chain.kernels {
                let mut launch = json!({
                    "kernel": names.get(&k.fusion),
                    "arguments": k.arguments,
                    "outputs": k.outputs,
                });
                let Some(within) = launched_within(module, k.fusion) else {
                    launches.push(launch);
                    continue;
                };
                launch["in"] = json!(format!("{} {}", within.role, within.computation));
                let step = launches
                    .iter()
                    .position(|s| s["runtime"] == json!(within.instruction));
                let step = step.unwrap_or_else(|| {
                    launches.push(json!({
                        "runtime": within.instruction,
                        "opcode": within.opcode,
                        "launches": [],
                    }));
                    launches.len() - 1
                });
                if let Some(Json::Array(inner)) = launches[step].get_mut("launches") {
                    inner.push(launch);
                }
            }
            let launches: Vec<String> = launches.iter().map(one_line).collect();
            let buffers: Vec<String> = chain
                .buffers
                .iter()
                .map(|b| {
                    one_line(&json!({
                        "name": b.name,
                        "type": b.shape.element_type.to_string(),
                        "dims": b.shape.dims,
                        "minor_to_major": minor_to_major(&b.shape),
                        "bytes": byte_size(&b.shape).ok(),
                    }))
                })
                .collect();
            text.push_str(&format!(
                "\"launches\": {},\n\"buffers\": {},\n\"parameters\": {}, \"results\": {}, \"note\": {}}}\n",
                lines(&launches),
                lines(&buffers),
                one_line(&json!(chain.parameters)),
                one_line(&json!(chain.results)),
                one_line(&json!(chain.note)),
            ));
        }
        Err(why) => text.push_str(&format!(
            "\"launches\": null, \"note\": {}}}\n",
            one_line(&json!(why.trim_start_matches("error: ").lines().next()))
        )),
    }
    text
}

/// The control-flow instruction that launches a kernel (see [`launched_within`]).
struct LaunchedWithin {
    /// Its name (`while.5`) and opcode.
    instruction: String,
    opcode: String,
    /// The attribute that names the launching computation (`body`, `condition`,
    /// `branch_computations`, `to_apply`) and that computation's name.
    role: String,
    computation: String,
}

/// Where the kernel of `fusion` is launched when not from the ENTRY: the control-flow
/// instruction that runs the computation holding its `fusion` instruction (`while.5`, its
/// `body` `region_0.2`); `None` from the ENTRY (or for a bare fusion body).
fn launched_within(module: &HloModule, fusion: ComputationId) -> Option<LaunchedWithin> {
    let launching = module.computations.iter().position(|c| {
        c.instructions
            .iter()
            .any(|i| i.opcode == Opcode::Fusion && i.called("calls").map(|r| r.id) == Some(fusion))
    })?;
    let launching = ComputationId(launching);
    if launching == module.entry {
        return None;
    }
    let calls_it = |value: &hlo::AttrValue| match value {
        hlo::AttrValue::Computation(c) => c.id == launching,
        hlo::AttrValue::Computations(cs) => cs.iter().any(|c| c.id == launching),
        _ => false,
    };
    module.computations.iter().find_map(|c| {
        c.instructions.iter().find_map(|i| {
            let role = i.attributes.iter().find(|a| calls_it(&a.value))?;
            Some(LaunchedWithin {
                instruction: i.name.clone(),
                opcode: i.opcode.to_string(),
                role: role.name.clone(),
                computation: module.computation(launching).name.clone(),
            })
        })
    })
}

/// The kernel name of each fusion of `module` among `kernels`, as compiled (ours or XLA's
/// naming, `--match-xla`).
pub(crate) fn compiled_names(
    module: &HloModule,
    kernels: &[CompiledKernel],
) -> HashMap<ComputationId, String> {
    kernels
        .iter()
        .filter_map(|k| {
            let id = module
                .computations
                .iter()
                .position(|c| c.name == k.fusion)?;
            Some((ComputationId(id), k.kernel.clone()))
        })
        .collect()
}

/// The kernel name of `fusion`, or an error naming the computation: only the module's
/// fusions have kernels.
pub(crate) fn kernel_name<'a>(
    module: &HloModule,
    names: &'a HashMap<ComputationId, String>,
    fusion: ComputationId,
) -> Result<&'a String, String> {
    names.get(&fusion).ok_or_else(|| {
        format!(
            "error: computation '{}' is not one of the module's fusions: it has no kernel",
            module.computation(fusion).name
        )
    })
}

/// `[\n  a,\n  b\n]` (one entry per line), or `[]`.
fn lines(entries: &[String]) -> String {
    if entries.is_empty() {
        "[]".to_string()
    } else {
        format!("[\n  {}\n]", entries.join(",\n  "))
    }
}

/// A JSON value on one line, with a space after each `:` and `,` as people write it.
fn one_line(value: &Json) -> String {
    match value {
        Json::Array(items) => {
            let items: Vec<String> = items.iter().map(one_line).collect();
            format!("[{}]", items.join(", "))
        }
        Json::Object(fields) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|(k, v)| format!("{}: {}", Json::String(k.clone()), one_line(v)))
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        scalar => scalar.to_string(),
    }
}
