//! Hostile inputs (issue 17): whatever a file says, the answer is a correct kernel or a
//! located error — never a panic, an abort, a hang or a stack overflow.
//!
//! * Every file of `testdata/hostile/` states what `hlo-emit` must answer (see its
//!   README): `// EXPECT: ok` — exit 0, `ptxas` accepts the PTX, `--check` passes (or
//!   refuses with the located error that `// CHECK-REFUSED: TEXT` names);
//!   `// EXPECT: error: TEXT` — exit 1 with `FILE:LINE:COL: error:` and `TEXT`.
//! * Inputs too large to commit are generated here: nesting thousands of levels deep
//!   (HLO tuples, IR regions, types, attributes), a chain of 20,000 calls, chains of
//!   dynamic slices and pads past the emitter's nesting limits, an empty file, and outputs that cannot be
//!   written.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How a run ended: the exit code (`None`: killed by a signal or by the time limit) and
/// standard error.
struct Outcome {
    code: Option<i32>,
    stderr: String,
}

/// The time one run may take before it counts as a hang (the debug build is slow).
const TIME_LIMIT: Duration = Duration::from_secs(120);

/// Runs `program args`, with `stdout` as its standard output (`None`: discarded).
fn run(program: &str, args: &[&str], stdout: Option<std::fs::File>) -> Outcome {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout.map_or_else(Stdio::null, Stdio::from))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    // Read on another thread: a child that writes more than a pipe holds (a diagnostic
    // quoting a 100 KB line) would otherwise block before it exits.
    let mut pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut pipe, &mut text).unwrap();
        text
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > TIME_LIMIT {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = reader.join().unwrap();
    if stderr.len() > 2000 {
        let mut cut = 2000;
        while !stderr.is_char_boundary(cut) {
            cut -= 1;
        }
        stderr.truncate(cut);
        stderr.push_str("...");
    }
    Outcome {
        code: status.and_then(|s| s.code()),
        stderr,
    }
}

const HLO_EMIT: &str = env!("CARGO_BIN_EXE_hlo-emit");
const HLO_OPT: &str = env!("CARGO_BIN_EXE_hlo-opt");
const HLO_INTERP: &str = env!("CARGO_BIN_EXE_hlo-interp");

/// `Err` unless `outcome` is exit 1 with a located error about `file` whose first line
/// contains `text`.
fn located_error(outcome: &Outcome, file: &str, text: &str) -> Result<(), String> {
    let first = outcome.stderr.lines().next().unwrap_or("");
    let located = first
        .strip_prefix(file)
        .and_then(|rest| rest.strip_prefix(':'))
        .and_then(|rest| {
            let mut parts = rest.splitn(3, ':');
            let line = parts.next()?.parse::<u32>().ok()?;
            let col = parts.next()?.parse::<u32>().ok()?;
            parts
                .next()?
                .strip_prefix(" error: ")
                .map(|m| (line, col, m))
        });
    match (outcome.code, located) {
        (Some(1), Some((_, _, message))) if message.contains(text) => Ok(()),
        (code, _) => Err(format!(
            "expected exit 1 with '{file}:LINE:COL: error: ...{text}...', got exit {code:?}:\n{}",
            outcome.stderr
        )),
    }
}

/// What `// EXPECT:` in `text` asks for: `None` for `ok`, the error text otherwise.
fn expectation(text: &str, path: &Path) -> Option<String> {
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("// EXPECT: "))
        .unwrap_or_else(|| panic!("{}: no '// EXPECT:' line", path.display()));
    if line == "ok" {
        return None;
    }
    Some(
        line.strip_prefix("error:")
            .unwrap_or_else(|| panic!("{}: bad EXPECT '{line}'", path.display()))
            .trim()
            .to_owned(),
    )
}

/// Checks one committed hostile file; `Err` says what went wrong.
fn check_file(path: &Path, scratch: &Path) -> Result<(), String> {
    if path.extension().is_some_and(|e| e == "mlir") {
        return check_ir_file(path, scratch);
    }
    let text = std::fs::read_to_string(path).unwrap();
    let file = path.to_str().unwrap();
    let ptx = scratch.join("out.ptx");
    let outcome = run(HLO_EMIT, &[file, "-o", ptx.to_str().unwrap()], None);
    let Some(error) = expectation(&text, path) else {
        if outcome.code != Some(0) {
            return Err(format!(
                "expected exit 0, got {:?}:\n{}",
                outcome.code, outcome.stderr
            ));
        }
        let ptxas = codegen::toolchain::ptxas().map_err(|e| e.to_string())?;
        let assembled = run(
            ptxas.to_str().unwrap(),
            &["-arch=sm_90", ptx.to_str().unwrap(), "-o", "/dev/null"],
            None,
        );
        if assembled.code != Some(0) {
            return Err(format!("ptxas rejects the PTX:\n{}", assembled.stderr));
        }
        let checked = run(HLO_EMIT, &[file, "--check"], None);
        // A file the host cannot check says so, and why: `// CHECK-REFUSED: TEXT`.
        let refused = text
            .lines()
            .find_map(|l| l.strip_prefix("// CHECK-REFUSED: "));
        return match (checked.code, refused) {
            (Some(0), None) => Ok(()),
            (_, Some(why)) => located_error(&checked, file, why),
            (code, None) => Err(format!("--check: exit {code:?}:\n{}", checked.stderr)),
        };
    };
    located_error(&outcome, file, &error)
}

/// Checks one hostile IR file: `hlo-opt` runs the passes of its `// PASSES:` line; `ok`
/// means exit 0 with IR that `hlo-opt` reads back.
fn check_ir_file(path: &Path, scratch: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).unwrap();
    let file = path.to_str().unwrap();
    let out = scratch.join("out.mlir");
    let passes: Vec<&str> = text
        .lines()
        .find_map(|l| l.strip_prefix("// PASSES: "))
        .map_or_else(Vec::new, |p| p.split_whitespace().collect());
    let args: Vec<&str> = [file, "-o", out.to_str().unwrap()]
        .into_iter()
        .chain(passes)
        .collect();
    let outcome = run(HLO_OPT, &args, None);
    let Some(error) = expectation(&text, path) else {
        if outcome.code != Some(0) {
            return Err(format!(
                "expected exit 0, got {:?}:\n{}",
                outcome.code, outcome.stderr
            ));
        }
        let written = std::fs::read_to_string(&out).unwrap();
        return ir::parse_module(&written)
            .map(|_| ())
            .map_err(|d| format!("the output does not parse: {d:?}\n{written}"));
    };
    located_error(&outcome, file, &error)
}

#[test]
fn every_hostile_file_gets_a_kernel_or_a_located_error() {
    let scratch = tempdir("files");
    let files = testkit::files_ending(&[testkit::testdata("hostile")], &[".hlo", ".mlir"]);
    assert!(files.len() >= 25, "only {} hostile files", files.len());
    let failures: Vec<String> = files
        .iter()
        .filter_map(|path| {
            check_file(path, scratch.path())
                .err()
                .map(|e| format!("{}: {e}", path.display()))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A fresh scratch directory for one test, removed when the test drops it.
fn tempdir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("hlo-emit-hostile-{name}-"))
        .tempdir()
        .unwrap()
}

/// Writes `text` to `name` in `dir`; returns its path.
fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn nesting_thousands_deep_is_a_located_error() {
    let dir = tempdir("nesting");
    let n = 20_000;
    let nested = |open: &str, inner: &str, close: &str| {
        format!("{}{inner}{}", open.repeat(n), close.repeat(n))
    };
    let mut regions = "func.func @f() {\n".to_string();
    regions.push_str(&"\"scf.execute_region\"() ({\n".repeat(n));
    regions.push_str("\"scf.yield\"() : () -> ()\n");
    regions.push_str(&"}) : () -> ()\n\"scf.yield\"() : () -> ()\n".repeat(n - 1));
    regions.push_str("}) : () -> ()\n  return\n}\n");
    let attribute =
        |value: String| format!("func.func @f() attributes {{a = {value}}} {{\n  return\n}}\n");
    // (program, file name, text, what the error says)
    let cases = [
        (
            HLO_EMIT,
            "tuple.hlo",
            format!(
                "HloModule m\nENTRY e {{\n  ROOT p = {} parameter(0)\n}}\n",
                nested("(", "f32[]", ")")
            ),
            "nesting deeper than",
        ),
        (
            HLO_OPT,
            "regions.mlir",
            regions,
            "regions nested deeper than",
        ),
        (
            HLO_OPT,
            "array.mlir",
            attribute(nested("[", "", "]")),
            "nested deeper than",
        ),
        (
            HLO_OPT,
            "dict.mlir",
            attribute(nested("{b = ", "1", "}")),
            "nested deeper than",
        ),
        (
            HLO_OPT,
            "types.mlir",
            format!(
                "func.func @f(%a: {}) {{\n  return\n}}\n",
                nested("tensor<", "f32", ">")
            ),
            "nested deeper than",
        ),
    ];
    for (program, name, text, error) in cases {
        let file = write(&dir, name, &text);
        located_error(&run(program, &[&file], None), &file, error).unwrap();
    }
}

#[test]
fn a_chain_of_twenty_thousand_calls_is_answered() {
    let dir = tempdir("calls");
    let n = 20_000;
    let mut text =
        format!("HloModule m\nc{n} {{\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p)\n}}\n");
    for i in (0..n).rev() {
        text.push_str(&format!(
            "c{i} {{\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), to_apply=c{}\n}}\n",
            i + 1
        ));
    }
    text.push_str("f {\n  p = f32[8] parameter(0)\n  ROOT m = f32[8] map(p), dimensions={0}, to_apply=c0\n}\n");
    text.push_str("ENTRY e {\n  a = f32[8] parameter(0)\n  ROOT r = f32[8] fusion(a), kind=kLoop, calls=f\n}\n");
    let file = write(&dir, "calls.hlo", &text);
    located_error(&run(HLO_EMIT, &[&file], None), &file, "unsupported").unwrap();
}

/// Ops that read their operands themselves recurse into them while emitting: a chain of
/// them past the emitter's limit is a located error (dynamic slices, which open no region),
/// and so are regions nested deeper than the IR may hold (pads, one branch each; one
/// concatenate of many operands, a branch per operand).
#[test]
fn chains_past_the_emitters_nesting_limits_are_located_errors() {
    let dir = tempdir("chains");
    let chain = |n: usize, line: &dyn Fn(usize) -> String| {
        let mut text = String::from("f {\n  v0 = f32[64] parameter(0)\n  z = s32[] constant(1)\n");
        text.push_str("  c = f32[] constant(0)\n");
        for i in 1..=n {
            text.push_str(&format!("  {}\n", line(i)));
        }
        text + &format!("  ROOT r = f32[64] negate(v{n})\n}}\n")
    };
    let slices = chain(emitters::elemental::MAX_OPERAND_RECURSION + 1, &|i| {
        format!(
            "v{i} = f32[64] dynamic-slice(v{}, z), dynamic_slice_sizes={{64}}",
            i - 1
        )
    });
    let pads = chain(emitters::elemental::MAX_REGION_DEPTH + 1, &|i| {
        format!("v{i} = f32[64] pad(v{}, c), padding=1_-1", i - 1)
    });
    let n = emitters::elemental::MAX_REGION_DEPTH + 2;
    let params: String = (0..n)
        .map(|i| format!("  p{i} = f32[2] parameter({i})\n"))
        .collect();
    let operands: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
    let concatenate = format!(
        "f {{\n{params}  ROOT c = f32[{}] concatenate({}), dimensions={{0}}\n}}\n",
        2 * n,
        operands.join(", ")
    );
    let cases = [
        ("slices.hlo", slices, "nested more than"),
        ("pads.hlo", pads, "nests loops and branches more than"),
        (
            "concatenate.hlo",
            concatenate,
            "nests loops and branches more than",
        ),
    ];
    for (name, text, error) in cases {
        let file = write(&dir, name, &text);
        located_error(&run(HLO_EMIT, &[&file], None), &file, error).unwrap();
    }
}

/// A reduce whose epilogue is 3,000 additions, each reading a side value at the output's
/// index from a 3,000-deep chain over a parameter: the reduction emitter takes it (which
/// instructions a reduce feeds is found once for the fusion, not walked per epilogue op)
/// and the whole pipeline compiles it.
#[test]
fn a_long_epilogue_over_deep_side_values_compiles() {
    let dir = tempdir("deep-epilogue");
    let n = 3_000;
    let mut text = String::from(
        "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n\
         f {\n  x = f32[8,64] parameter(0)\n  m0 = f32[8] parameter(1)\n  zero = f32[] constant(0)\n  \
         e0 = f32[8] reduce(x, zero), dimensions={1}, to_apply=add\n",
    );
    for k in 1..=n {
        text.push_str(&format!("  m{k} = f32[8] negate(m{})\n", k - 1));
    }
    for k in 1..=n {
        let root = if k == n { "ROOT " } else { "" };
        text.push_str(&format!("  {root}e{k} = f32[8] add(e{}, m{k})\n", k - 1));
    }
    text.push_str("}\n");
    let file = write(&dir, "deep-epilogue.hlo", &text);
    let ir = dir.path().join("out.mlir");
    let outcome = run(
        HLO_EMIT,
        &[&file, "--emit=xla-gpu", "-o", ir.to_str().unwrap()],
        None,
    );
    assert_eq!(outcome.code, Some(0), "{}", outcome.stderr);
    let written = std::fs::read_to_string(&ir).unwrap();
    assert!(written.contains("reduction emitter"), "{}", &written[..200]);
    let ptx = dir.path().join("out.ptx");
    let outcome = run(HLO_EMIT, &[&file, "-o", ptx.to_str().unwrap()], None);
    assert_eq!(outcome.code, Some(0), "{}", outcome.stderr);
}

/// Analyses that follow definitions back (the alignment `lower-tensors` proves for a vector
/// access) look a bounded depth: an index computed by a chain of 100,000 additions is
/// lowered, not a stack overflow.
#[test]
fn a_long_index_chain_is_lowered() {
    let dir = tempdir("index-chain");
    let n = 100_000;
    let mut text = String::from(
        "func.func @f(%t: tensor<1024xf32>, %i: index) -> vector<4xf32> {\n  \
         %c4 = arith.constant 4 : index\n  %zero = arith.constant 0.0 : f32\n  %v0 = arith.muli %i, %c4 : index\n",
    );
    for k in 1..=n {
        text.push_str(&format!("  %v{k} = arith.addi %v{}, %c4 : index\n", k - 1));
    }
    text.push_str(&format!(
        "  %r = vector.transfer_read %t[%v{n}], %zero {{in_bounds = [true]}} : tensor<1024xf32>, vector<4xf32>\n  return %r : vector<4xf32>\n}}\n"
    ));
    let file = write(&dir, "index-chain.mlir", &text);
    let out = dir.path().join("out.mlir");
    let outcome = run(
        HLO_OPT,
        &[&file, "-o", out.to_str().unwrap(), "--lower-tensors"],
        None,
    );
    assert_eq!(outcome.code, Some(0), "{}", outcome.stderr);
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(
        written.contains("alignment = 4"),
        "the chain is read a bounded depth: one element's alignment"
    );
}

/// `distribute-vector-layout` gives each value its layout once: a chain of 20,000
/// elementwise ops laid out from its last op (the layout flows backwards) is distributed
/// in linear time (a fixpoint over all ops took minutes).
#[test]
fn a_chain_laid_out_from_its_end_is_distributed() {
    let dir = tempdir("layout-chain");
    let n = 20_000;
    let layout = "#xla_gpu.nested_layout<subgroup_tile = [1], batch_tile = [1], outer_tile = [1], \
                  thread_tile = [32], element_tile = [2], subgroup_strides = [0], thread_strides = [1]>";
    let mut text = String::from(
        "func.func @f(%out: tensor<64xf32>) -> tensor<64xf32> {\n  %c0 = arith.constant 0 : index\n  \
         %z = arith.constant 1.0 : f32\n  %v0 = vector.broadcast %z : f32 to vector<64xf32>\n",
    );
    for k in 1..n {
        text.push_str(&format!(
            "  %v{k} = arith.mulf %v{}, %v{} : vector<64xf32>\n",
            k - 1,
            k - 1
        ));
    }
    text.push_str(&format!(
        "  %v{n} = arith.addf %v{}, %v0 {{xla_gpu.layout = {layout}}} : vector<64xf32>\n  \
         %w = vector.transfer_write %v{n}, %out[%c0] {{in_bounds = [true]}} : vector<64xf32>, tensor<64xf32>\n  \
         return %w : tensor<64xf32>\n}}\n",
        n - 1
    ));
    let file = write(&dir, "chain.mlir", &text);
    let outcome = run(
        HLO_OPT,
        &[&file, "-o", "/dev/null", "--distribute-vector-layout"],
        None,
    );
    assert_eq!(outcome.code, Some(0), "{}", outcome.stderr);
}

#[test]
fn empty_input_and_unwritable_outputs_are_errors() {
    let dir = tempdir("io");
    let empty = write(&dir, "empty.hlo", "");
    located_error(
        &run(HLO_EMIT, &[&empty], None),
        &empty,
        "expected a computation",
    )
    .unwrap();

    let fusion = testkit::testdata("hostile/root-parameter.hlo");
    let fusion = fusion.to_str().unwrap();
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    for args in [
        vec![fusion, "-o", "/dev/full"],
        vec![fusion, "-o", "/nonexistent-directory/k.ptx"],
        vec![fusion, "--launch-json", "/dev/full"],
        vec![fusion, "--dump-dir", "/dev/full/dumps"],
    ] {
        let outcome = run(HLO_EMIT, &args, None);
        assert_eq!(outcome.code, Some(1), "{args:?}: {}", outcome.stderr);
        assert!(
            outcome.stderr.starts_with("error: cannot "),
            "{args:?}: {}",
            outcome.stderr
        );
    }
    for args in [
        vec![fusion],
        vec![fusion, "--check"],
        vec![fusion, "--emit=mlir"],
    ] {
        let outcome = run(HLO_EMIT, &args, Some(full()));
        assert_eq!(
            outcome.code,
            Some(1),
            "{args:?} > /dev/full: {}",
            outcome.stderr
        );
        assert!(
            outcome.stderr.contains("error: cannot write"),
            "{}",
            outcome.stderr
        );
    }
    let ir = testkit::testdata("ir/ops.mlir");
    let outcome = run(HLO_OPT, &[ir.to_str().unwrap()], Some(full()));
    assert_eq!(
        outcome.code,
        Some(1),
        "hlo-opt > /dev/full: {}",
        outcome.stderr
    );
    // Help and version text that cannot be written is an error too (clap's own exit
    // ignores the failed write).
    for program in [HLO_EMIT, HLO_OPT, HLO_INTERP] {
        for flag in ["--help", "--version"] {
            let outcome = run(program, &[flag], Some(full()));
            assert_eq!(
                (
                    outcome.code,
                    outcome.stderr.starts_with("error: cannot write")
                ),
                (Some(1), true),
                "{program} {flag} > /dev/full: {}",
                outcome.stderr
            );
        }
        assert_eq!(
            run(program, &["--help"], None).code,
            Some(0),
            "{program} --help"
        );
    }
}

/// `--check=N` holds N seeded inputs at once: a huge N is refused before anything is drawn.
#[test]
fn a_huge_number_of_check_inputs_is_refused() {
    let fusion = testkit::testdata("hostile/root-parameter.hlo");
    let fusion = fusion.to_str().unwrap();
    let outcome = run(HLO_EMIT, &[fusion, "--check=100000000"], None);
    located_error(&outcome, fusion, "too large to check on the host").unwrap();
    assert!(
        outcome.stderr.contains("times 100000000 seeded input(s)"),
        "{}",
        outcome.stderr
    );
}

/// IR whose loop never ends (an `scf.while` whose condition stays true, an `llvm.br` cycle)
/// stops at the interpreter's per-thread step limit with a located error, instead of
/// running forever; the same loop with an end runs to completion under the same limit.
#[test]
fn endless_loops_stop_at_the_step_limit() {
    let dir = tempdir("endless-loops");
    let while_loop = |bound: &str| {
        format!(
            "func.func @main(%out: tensor<1xi32>) -> tensor<1xi32> {{
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %bound = arith.constant {bound} : i32
  %r = scf.while (%i = %c0) : (i32) -> i32 {{
    %go = arith.cmpi ult, %i, %bound : i32
    scf.condition(%go) %i : i32
  }} do {{
  ^bb0(%j: i32):
    %n = arith.addi %j, %c1 : i32
    scf.yield %n : i32
  }}
  %idx = arith.constant 0 : index
  %t = tensor.insert %r into %out[%idx] : tensor<1xi32>
  return %t : tensor<1xi32>
}}
"
        )
    };
    // `i < -1` unsigned: always true (the counter wraps around after 2^32 steps).
    let endless = write(&dir, "endless-while.mlir", &while_loop("-1"));
    let outcome = run(
        HLO_INTERP,
        &[&endless, "--grid=1x1", "--max-steps=100000"],
        None,
    );
    located_error(&outcome, &endless, "100000 instructions without finishing").unwrap();
    let finite = write(&dir, "finite-while.mlir", &while_loop("1000"));
    let outcome = run(
        HLO_INTERP,
        &[&finite, "--grid=1x1", "--max-steps=100000"],
        None,
    );
    assert_eq!(outcome.code, Some(0), "{}", outcome.stderr);

    let cycle = write(
        &dir,
        "branch-cycle.mlir",
        "llvm.func @main(%p: !llvm.ptr) {
  \"llvm.br\"()[^bb1] : () -> ()
^bb1:
  \"llvm.br\"()[^bb1] : () -> ()
}
",
    );
    let outcome = run(
        HLO_INTERP,
        &[&cycle, "--grid=1x1", "--max-steps=100000"],
        None,
    );
    located_error(&outcome, &cycle, "instructions without finishing").unwrap();
}

/// A crash reproducer edited by hand (or cut short) is replayed, refused with an error, or
/// reports the failure it holds; never a panic.
#[test]
fn edited_crash_reproducers_are_errors_or_replays() {
    let dir = tempdir("reproducer");
    let hlo = write(
        &dir,
        "add.hlo",
        "HloModule m\n\nfusion {\n  p = f32[4,8] parameter(0)\n  q = f32[4,8] parameter(1)\n  ROOT s = f32[4,8] add(p, q)\n}\n\nENTRY main {\n  a = f32[4,8] parameter(0)\n  b = f32[4,8] parameter(1)\n  ROOT f = f32[4,8] fusion(a, b), kind=kLoop, calls=fusion\n}\n",
    );
    let reproducers = dir.path().join("reproducers");
    let pipeline = "--pass-pipeline=inline,lower-xla-gpu-to-scf,test-pass-wrong-result";
    let out = run(
        HLO_EMIT,
        &[
            &hlo,
            "--check",
            pipeline,
            "--crash-reproducer",
            reproducers.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    let original =
        std::fs::read_to_string(reproducers.join("fusion.test-pass-wrong-result.reproducer.mlir"))
            .unwrap_or_else(|e| panic!("{e}: {}", out.stderr));
    let edits: [(&str, &str, &str); 10] = [
        (
            "builtin.module(test-pass-wrong-result)",
            "builtin.module(cse,canonicalize)",
            "is not one pass",
        ),
        (
            "builtin.module(test-pass-wrong-result)",
            "builtin.module(frob)",
            "is not registered",
        ),
        (
            "check_inputs: 1",
            "check_inputs: 0",
            "check_inputs is not a count",
        ),
        (
            "check_inputs: 1",
            "check_inputs: 18446744073709551615",
            "too large to check on the host",
        ),
        (
            "fusion: \"fusion\"",
            "fusion: \"nope\"",
            "has no fusion 'nope'",
        ),
        ("hlo: \"HloModule", "hlo: \"HloModul", "error: expected '{'"),
        (
            "arch: \"sm_90\"",
            "arch: \"sm_9x\"",
            "unknown GPU architecture 'sm_9x'",
        ),
        ("hlo: \"", "hlo: 12", "the reproducer has no 'hlo'"),
        ("{-#", "{-", "no reproducer trailer"),
        ("\"func.func\"", "\"func.fun\"", "error:"),
    ];
    for (from, to, expected) in edits {
        assert!(original.contains(from), "{from}");
        let path = write(&dir, "edited.mlir", &original.replacen(from, to, 1));
        let out = run(HLO_OPT, &["--run-reproducer", &path], None);
        assert_eq!(out.code, Some(1), "{from} -> {to}: {}", out.stderr);
        assert!(
            out.stderr.contains(expected),
            "{from} -> {to}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    }
}

/// A program whose loop never ends (its condition ignores the state), or whose loop state
/// the body makes wrong-shaped, or whose conditional picks by an index far out of range:
/// `--check` ends with a located refusal or a run, never a hang or a panic. The endless loop
/// stops at the evaluator's iteration bound (it runs the module as written first).
#[test]
fn endless_loops_and_wild_branches_end_in_a_located_error_or_a_run() {
    let dir = tempdir("hlo-loops");
    let program = |condition_root: &str| {
        format!(
            "HloModule loops

body {{
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  y = f32[4] negate(x)
  ROOT t = (s32[], f32[4]) tuple(i, y)
}}

condition {{
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  {condition_root}
}}

ENTRY main {{
  zero = s32[] constant(0)
  x = f32[4] parameter(0)
  init = (s32[], f32[4]) tuple(zero, x)
  loop = (s32[], f32[4]) while(init), condition=condition, body=body
  ROOT out = f32[4] get-tuple-element(loop), index=1
}}
"
        )
    };
    // The counter never moves: `0 < 1` for ever.
    let endless = write(
        &dir,
        "endless.hlo",
        &program("one = s32[] constant(1)\n  ROOT lt = pred[] compare(i, one), direction=LT"),
    );
    let outcome = run(HLO_EMIT, &[&endless, "--check"], None);
    located_error(
        &outcome,
        &endless,
        "unsupported: a loop running past 100000 iterations",
    )
    .unwrap();
    // Never entered: the loop returns its initial state.
    let never = write(
        &dir,
        "never.hlo",
        &program("one = s32[] constant(0)\n  ROOT lt = pred[] compare(i, one), direction=LT"),
    );
    let outcome = run(HLO_EMIT, &[&never, "--check"], None);
    assert_eq!(outcome.code, Some(0), "{}", outcome.stderr);
    // A conditional picked by a parameter: any s32 index, negative and huge included.
    let branches = write(
        &dir,
        "branches.hlo",
        "HloModule branches

b0 {
  x = f32[8] parameter(0)
  ROOT y = f32[8] negate(x)
}

b1 {
  x = f32[8] parameter(0)
  ROOT y = f32[8] abs(x)
}

ENTRY main {
  i = s32[] parameter(0)
  x = f32[8] parameter(1)
  ROOT r = f32[8] conditional(i, x, x), branch_computations={b0, b1}
}
",
    );
    let outcome = run(HLO_EMIT, &[&branches, "--check=8"], None);
    assert_eq!(outcome.code, Some(0), "{}", outcome.stderr);
}

/// A convolution left to the runtime (computed on the host by `--check`) with hostile
/// attributes: zero, negative, too many feature groups, malformed dim_labels, a zero stride
/// and a huge padding: each a located error, never a panic.
#[test]
fn hostile_convolution_attributes_are_located_errors() {
    let dir = tempdir("hlo-conv");
    let program = |attributes: &str| {
        format!(
            "HloModule c

ENTRY main {{
  x = f32[1,4,4,2]{{3,2,1,0}} parameter(0)
  w = f32[3,3,2,4]{{3,2,1,0}} parameter(1)
  y = f32[1,4,4,4]{{3,2,1,0}} convolution(x, w), {attributes}
  ROOT z = f32[1,4,4,4]{{3,2,1,0}} add(y, y)
}}
"
        )
    };
    let window = "window={size=3x3 pad=1_1x1_1}";
    let cases = [
        (format!("{window}, dim_labels=b01f_01io->b01f, feature_group_count=0"), "feature_group_count=0"),
        (format!("{window}, dim_labels=b01f_01io->b01f, feature_group_count=-3"), "feature_group_count=-3"),
        (format!("{window}, dim_labels=b01f_01io->b01f, feature_group_count=1000000000000"), "groups"),
        (format!("{window}, dim_labels=b00f_01io->bf01"), "dim_labels"),
        ("window={size=3x3 stride=0x1000000000 pad=-5_99999999999x1_1}, dim_labels=b01f_01io->b01f".to_string(), "window"),
    ];
    for (k, (attributes, message)) in cases.iter().enumerate() {
        let file = write(&dir, &format!("conv{k}.hlo"), &program(attributes));
        let outcome = run(HLO_EMIT, &[&file, "--check"], None);
        assert_eq!(outcome.code, Some(1), "{attributes}: {}", outcome.stderr);
        let located = outcome
            .stderr
            .lines()
            .any(|l| l.starts_with(&format!("{file}:6:3: error: ")) && l.contains(message));
        assert!(located, "{attributes}: {}", outcome.stderr);
    }
}
