//! Crash reproducers (`hlo-emit --crash-reproducer DIR`), as MLIR's
//! `--mlir-pass-pipeline-crash-reproducer`: when one of our passes fails on a fusion (it
//! returns an error, the verifier rejects its output, it panics) or `--check` blames it,
//! one file holds the pass's input IR, the pass, and what is needed to replay the failure;
//! `hlo-opt --run-reproducer FILE` replays exactly that failure.
//!
//! The file is the input IR (the generic form, which `hlo-opt` reads) followed by MLIR's
//! reproducer trailer, `{-# external_resources: { mlir_reproducer: { pipeline: ... } } #-}`,
//! with one more resource of ours, `hlo_emit`: the failure as it was reported, the fusion,
//! the `--arch`, the flags of the run and, when the check blamed the pass, the number of
//! inputs and the HLO module, so that the replay checks the pass's output against the
//! evaluator as `--check` did. Each value is on its own line, in JSON syntax.
//!
//! The [`Recorder`] observes a run and keeps every fusion's IR after each of its stages;
//! a reproducer is made from it once the run has failed (after a panic too: the record is
//! shared with the thread that waits for the compiler).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::runner::{Observer, Output, StageDone};

/// One fusion's IR after each of its stages (the emitter, then each pass), in order.
#[derive(Clone, Debug, Default)]
struct FusionStages {
    fusion: String,
    /// (stage name, the module in the generic form).
    stages: Vec<(String, String)>,
}

/// What a run has made so far, and what a reproducer of it needs besides.
#[derive(Debug, Default)]
pub struct Recorded {
    fusions: Vec<FusionStages>,
    /// The module the fusions are emitted from (after the fusion pipeline), as HLO text.
    pub hlo: String,
    pub arch: String,
    /// The command line of the run (`hlo-emit` and its arguments).
    pub flags: String,
    /// The passes of the run, in order (what the stage after the last one recorded is).
    pub pipeline: Vec<String>,
}

/// The record of a run, shared between the observer and whoever writes the reproducer.
pub type SharedRecord = Arc<Mutex<Recorded>>;

/// Locks `record`, also after a panic while it was held (the record is then still whole:
/// nothing panics while holding it but the copy of a string).
pub fn lock(record: &SharedRecord) -> MutexGuard<'_, Recorded> {
    record
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The observer that fills a [`Recorded`].
pub struct Recorder(pub SharedRecord);

impl Observer for Recorder {
    fn after(&mut self, stage: &StageDone, output: Output<'_>) -> Result<(), String> {
        let (Output::Ir(ir), Some(kernel)) = (output, stage.kernel) else {
            return Ok(());
        };
        let text = ir.print_generic();
        let mut record = lock(&self.0);
        if stage.name == "emit" {
            record.fusions.push(FusionStages {
                fusion: kernel.fusion.clone(),
                stages: Vec::new(),
            });
        }
        if let Some(fusion) = record.fusions.last_mut() {
            fusion.stages.push((stage.name.to_string(), text));
        }
        Ok(())
    }
}

/// A failure of one pass on one fusion, with what replays it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reproducer {
    /// The pass's input, as IR text.
    pub input: String,
    pub pass: String,
    pub fusion: String,
    /// The first line of the failure as the run reported it.
    pub failure: String,
    pub arch: String,
    pub flags: String,
    /// When `--check` blamed the pass: its inputs per stage and the HLO module, to check
    /// the replay's output against the evaluator.
    pub check: Option<(u64, String)>,
}

impl Recorded {
    /// The record of a run for `arch` with the command line `flags`.
    pub fn new(arch: &str, flags: &str) -> Recorded {
        Recorded {
            arch: arch.to_string(),
            flags: flags.to_string(),
            ..Recorded::default()
        }
    }

    /// The reproducer of a run that stopped in the pass after the last stage recorded
    /// (an error, a verifier error or a panic in it); `None` when it stopped elsewhere (in
    /// an emitter, the fusion pipeline, the LLVM stages).
    pub fn failed_pass(&self, failure: &str) -> Option<Reproducer> {
        let fusion = self.fusions.last()?;
        let (_, input) = fusion.stages.last()?;
        // Stage k (the emitter is stage 0) ran pass k - 1; the next pass is the one that failed.
        let pass = self.pipeline.get(fusion.stages.len() - 1)?;
        Some(self.reproducer(&fusion.fusion, pass, input, failure, None))
    }

    /// The reproducer of `--check`'s verdict on stage `k` of `fusion` (with `inputs` per
    /// stage); `None` when that stage is not one of our passes (the emitter, the LLVM
    /// stages).
    pub fn failed_check(
        &self,
        fusion: &str,
        k: usize,
        inputs: u64,
        failure: &str,
    ) -> Option<Reproducer> {
        let stages = &self.fusions.iter().find(|f| f.fusion == fusion)?.stages;
        let (pass, _) = stages.get(k).filter(|_| k > 0)?;
        let (_, input) = &stages[k - 1];
        let check = Some((inputs, self.hlo.clone()));
        Some(self.reproducer(fusion, pass, input, failure, check))
    }

    fn reproducer(
        &self,
        fusion: &str,
        pass: &str,
        input: &str,
        failure: &str,
        check: Option<(u64, String)>,
    ) -> Reproducer {
        Reproducer {
            input: input.to_string(),
            pass: pass.to_string(),
            fusion: fusion.to_string(),
            failure: failure.lines().next().unwrap_or_default().to_string(),
            arch: self.arch.clone(),
            flags: self.flags.clone(),
            check,
        }
    }
}

/// The start of the trailer.
const TRAILER: &str = "{-#";

impl Reproducer {
    /// The file's text (see the module documentation).
    pub fn print(&self) -> String {
        let json = |s: &str| serde_json::Value::String(s.to_string()).to_string();
        let mut text = format!(
            "// hlo-emit crash reproducer: pass '{}' on fusion '{}'\n// replay: hlo-opt --run-reproducer <this file>\n",
            self.pass, self.fusion
        );
        text.push_str(self.input.trim_end());
        text.push_str("\n\n");
        text.push_str(&format!(
            "{TRAILER}\n  external_resources: {{\n    mlir_reproducer: {{\n      pipeline: {},\n      disable_threading: true,\n      verify_each: true\n    }},\n    hlo_emit: {{\n",
            json(&format!("builtin.module({})", self.pass))
        ));
        let mut fields = vec![
            ("failure", json(&self.failure)),
            ("fusion", json(&self.fusion)),
            ("arch", json(&self.arch)),
            ("flags", json(&self.flags)),
        ];
        if let Some((inputs, hlo)) = &self.check {
            fields.push(("check_inputs", inputs.to_string()));
            fields.push(("hlo", json(hlo)));
        }
        let last = fields.len() - 1;
        for (k, (key, value)) in fields.iter().enumerate() {
            let comma = if k < last { "," } else { "" };
            text.push_str(&format!("      {key}: {value}{comma}\n"));
        }
        text.push_str("    }\n  }\n#-}\n");
        text
    }

    /// Reads a reproducer file back (`name` in errors).
    pub fn parse(name: &str, text: &str) -> Result<Reproducer, String> {
        let at = text.rfind(&format!("\n{TRAILER}")).ok_or_else(|| {
            format!("error: {name}: no reproducer trailer ('{TRAILER} ... #-}}')")
        })?;
        let (input, trailer) = text.split_at(at);
        let mut fields = std::collections::HashMap::new();
        for line in trailer.lines() {
            let line = line.trim().trim_end_matches(',');
            let Some((key, value)) = line.split_once(": ") else {
                continue;
            };
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(value) {
                fields.insert(key.to_string(), value);
            }
        }
        let string = |key: &str| {
            fields
                .get(key)
                .and_then(|v| v.as_str())
                .map(str::to_string)
                .ok_or_else(|| format!("error: {name}: the reproducer has no '{key}'"))
        };
        let pipeline = string("pipeline")?;
        let pass = pipeline
            .strip_prefix("builtin.module(")
            .and_then(|p| p.strip_suffix(')'))
            .filter(|p| !p.is_empty() && !p.contains(','))
            .ok_or_else(|| {
                format!(
                    "error: {name}: pipeline '{pipeline}' is not one pass in builtin.module(...)"
                )
            })?;
        let check = match fields.get("check_inputs") {
            None => None,
            Some(n) => {
                let inputs = n
                    .as_u64()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| format!("error: {name}: check_inputs is not a count"))?;
                Some((inputs, string("hlo")?))
            }
        };
        Ok(Reproducer {
            input: input.to_string(),
            pass: pass.to_string(),
            fusion: string("fusion")?,
            failure: string("failure")?,
            arch: string("arch")?,
            flags: string("flags")?,
            check,
        })
    }

    /// Writes the file into `dir` (made if missing) as `<fusion>.<pass>.reproducer.mlir`
    /// and returns its path.
    pub fn write(&self, dir: &Path) -> Result<PathBuf, String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("error: cannot create '{}': {e}", dir.display()))?;
        let safe = |s: &str| s.replace(|c: char| !(c.is_alphanumeric() || c == '-'), "_");
        let path = dir.join(format!(
            "{}.{}.reproducer.mlir",
            safe(&self.fusion),
            safe(&self.pass)
        ));
        std::fs::write(&path, self.print())
            .map_err(|e| format!("error: cannot write '{}': {e}", path.display()))?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Printing and parsing give the reproducer back, HLO text with quotes and newlines
    /// included.
    #[test]
    fn a_reproducer_reads_back() {
        let reproducer = Reproducer {
            input: "module {\n  \"func.func\"() ({}) : () -> ()\n}\n".to_string(),
            pass: "lower-tensors".to_string(),
            fusion: "fused_x".to_string(),
            failure: "error: pass 'lower-tensors' changed the result".to_string(),
            arch: "sm_90".to_string(),
            flags: "hlo-emit a \"b\".hlo --check".to_string(),
            check: Some((
                2,
                "HloModule m\n\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n".into(),
            )),
        };
        let text = reproducer.print();
        let back = Reproducer::parse("r.mlir", &text).unwrap();
        assert_eq!(
            back.input.trim(),
            format!(
                "// hlo-emit crash reproducer: pass 'lower-tensors' on fusion 'fused_x'\n// replay: hlo-opt --run-reproducer <this file>\n{}",
                reproducer.input.trim()
            )
        );
        assert_eq!(
            Reproducer {
                input: reproducer.input.clone(),
                ..back
            },
            reproducer
        );
        assert!(
            Reproducer::parse("r.mlir", "module {}")
                .unwrap_err()
                .contains("no reproducer trailer")
        );
    }
}
