//! A small lit: every file under `testdata/` with `// RUN:` lines is one test.
//!
//! Each RUN line is a shell pipeline run by `bash -o pipefail` in the file's directory,
//! after substitution:
//!
//! | written     | becomes                                             |
//! |-------------|-----------------------------------------------------|
//! | `%s`        | the test file's path                                |
//! | `%S`        | the test file's directory                           |
//! | `%t`        | a scratch path unique to the test (under target/)   |
//! | `hlo-emit`, `hlo-opt`, `hlo-interp` | the binaries Cargo built for this test run |
//! | `FileCheck`, `not`, `llvm-as`, `opt`, `mlir-opt` | LLVM 22's tools (see `codegen::toolchain`) |
//! | `ptxas`     | NVIDIA's, from `.toolchain/` (installed by `tools/setup`) |
//!
//! A RUN line ending in `\` continues on the next RUN line. A failure shows the file, the
//! RUN line as written and as run, the exit status and the output (FileCheck's message).
//! Run one file: `cargo test -p hlo-emit-tools --test lit -- <part of its path>`.

use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::{Arguments, Failed, Trial};

/// File kinds that can hold RUN lines, with their comment marker.
const COMMENT_MARKERS: &[(&str, &str)] = &[("hlo", "//"), ("mlir", "//"), ("ll", ";")];

fn main() {
    let args = Arguments::from_args();
    let root = testdata_dir();
    let tools = match ToolMap::new() {
        Ok(tools) => tools,
        Err(message) => {
            eprintln!("lit: {message}");
            std::process::exit(1);
        }
    };
    let mut files = Vec::new();
    collect_files(&root, &mut files);
    files.sort();
    let trials = files
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).ok()?;
            let commands = run_lines(&path, &text);
            if commands.is_empty() {
                return None;
            }
            let name = path
                .strip_prefix(&root)
                .unwrap_or(&path)
                .display()
                .to_string();
            let tools = tools.clone();
            Some(Trial::test(name, move || {
                run_test(&path, &commands, &tools)
            }))
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}

fn testdata_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata")
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_files(&path, out);
        } else if comment_marker(&path).is_some() {
            out.push(path);
        }
    }
}

fn comment_marker(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?;
    COMMENT_MARKERS
        .iter()
        .find(|(e, _)| *e == ext)
        .map(|(_, marker)| *marker)
}

/// The RUN commands of a file, continuation lines joined.
fn run_lines(path: &Path, text: &str) -> Vec<String> {
    let Some(marker) = comment_marker(path) else {
        return Vec::new();
    };
    let mut commands = Vec::new();
    let mut pending: Option<String> = None;
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix(marker) else {
            continue;
        };
        let Some(command) = rest.trim_start().strip_prefix("RUN:") else {
            continue;
        };
        let command = command.trim();
        let mut joined = pending.take().unwrap_or_default();
        match command.strip_suffix('\\') {
            Some(head) => {
                joined.push_str(head);
                joined.push(' ');
                pending = Some(joined);
            }
            None => {
                joined.push_str(command);
                commands.push(joined);
            }
        }
    }
    commands.extend(pending);
    commands
}

/// Tool names and the executables they stand for.
#[derive(Clone)]
struct ToolMap {
    tools: Vec<(&'static str, PathBuf)>,
}

impl ToolMap {
    fn new() -> Result<ToolMap, String> {
        let mut tools = vec![("hlo-emit", PathBuf::from(env!("CARGO_BIN_EXE_hlo-emit")))];
        if let Some(opt) = option_env!("CARGO_BIN_EXE_hlo-opt") {
            tools.push(("hlo-opt", PathBuf::from(opt)));
        }
        tools.push((
            "hlo-interp",
            PathBuf::from(env!("CARGO_BIN_EXE_hlo-interp")),
        ));
        let file_check = codegen::toolchain::file_check().map_err(|e| e.to_string())?;
        let not = codegen::toolchain::not().map_err(|e| e.to_string())?;
        tools.push(("FileCheck", file_check));
        tools.push(("not", not));
        for name in ["llvm-as", "opt"] {
            let path = codegen::toolchain::llvm_tool(name).map_err(|e| e.to_string())?;
            tools.push((name, path));
        }
        let mlir_opt = codegen::toolchain::mlir_opt().map_err(|e| e.to_string())?;
        tools.push(("mlir-opt", mlir_opt));
        let ptxas = codegen::toolchain::ptxas().map_err(|e| e.to_string())?;
        tools.push(("ptxas", ptxas));
        Ok(ToolMap { tools })
    }

    /// Replaces whole words that name a tool; other words pass through unchanged.
    fn substitute(&self, command: &str, file: &Path, scratch: &Path) -> String {
        let dir = file.parent().unwrap_or(Path::new("."));
        let mut out = String::with_capacity(command.len() * 2);
        let mut rest = command;
        while !rest.is_empty() {
            let word_len = rest.find(char::is_whitespace).unwrap_or(rest.len());
            let (word, tail) = rest.split_at(word_len);
            match self.tools.iter().find(|(name, _)| *name == word) {
                Some((_, path)) => out.push_str(&shell_quote(path)),
                None => out.push_str(
                    &word
                        .replace("%s", &shell_quote(file))
                        .replace("%S", &shell_quote(dir))
                        .replace("%t", &shell_quote(scratch)),
                ),
            }
            let space_len = tail.len() - tail.trim_start().len();
            out.push_str(&tail[..space_len]);
            rest = &tail[space_len..];
        }
        out
    }
}

fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

fn run_test(path: &Path, commands: &[String], tools: &ToolMap) -> Result<(), Failed> {
    let scratch_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("lit");
    std::fs::create_dir_all(&scratch_dir).map_err(|e| format!("cannot create scratch dir: {e}"))?;
    let stem = path
        .strip_prefix(testdata_dir())
        .unwrap_or(path)
        .display()
        .to_string()
        .replace('/', "_");
    let scratch = scratch_dir.join(format!("{stem}.tmp"));
    for command in commands {
        let substituted = tools.substitute(command, path, &scratch);
        let output = Command::new("bash")
            .args(["-o", "pipefail", "-c", &substituted])
            .current_dir(path.parent().unwrap_or(Path::new(".")))
            .output()
            .map_err(|e| format!("cannot run bash: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "{}\nRUN: {command}\nran: {substituted}\nexit: {}\n--- stdout ---\n{}--- stderr ---\n{}",
                path.display(),
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            )
            .into());
        }
    }
    Ok(())
}
