//! The whole stack on one small kernel: MLIR text → upstream conversions → LLVM IR → PTX for
//! sm_90 → ptxas. If melior, inkwell, the LLVM/MLIR 22 libraries or the CUDA wheel are broken
//! or missing, this fails (it does not skip).

use codegen::{mlir, ptx, ptxas, toolchain};

/// `y[i] = 2 * x[i] + y[i]` for `i = threadIdx.x < n`: NVVM special registers, scf control
/// flow, arith, memref loads and stores, and a `func.func` marked as a kernel with `gpu.kernel`.
const AXPY: &str = r#"
module {
  func.func @axpy(%x: memref<1024xf32>, %y: memref<1024xf32>, %n: i32) attributes {gpu.kernel} {
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %in_bounds = arith.cmpi slt, %tid, %n : i32
    scf.if %in_bounds {
      %i = arith.index_cast %tid : i32 to index
      %a = memref.load %x[%i] : memref<1024xf32>
      %b = memref.load %y[%i] : memref<1024xf32>
      %two = arith.constant 2.0 : f32
      %ax = arith.mulf %a, %two : f32
      %sum = arith.addf %ax, %b : f32
      memref.store %sum, %y[%i] : memref<1024xf32>
    }
    return
  }
}
"#;

#[test]
fn mlir_to_llvm_ir_to_ptx_to_cubin() {
    let llvm_ir = mlir::to_llvm_ir(AXPY).unwrap_or_else(|error| panic!("{error}"));
    assert!(llvm_ir.contains("@axpy("), "{llvm_ir}");
    assert!(
        llvm_ir.contains("ptx_kernel"),
        "kernel calling convention:\n{llvm_ir}"
    );
    assert!(
        llvm_ir.contains("@llvm.nvvm.read.ptx.sreg.tid.x()"),
        "{llvm_ir}"
    );
    assert!(llvm_ir.contains("fmul float"), "{llvm_ir}");
    assert!(llvm_ir.contains("fadd float"), "{llvm_ir}");

    let ptx = ptx::llvm_ir_to_ptx(&llvm_ir, "sm_90").unwrap_or_else(|error| panic!("{error}"));
    assert!(ptx.contains(".target sm_90"), "{ptx}");
    assert!(ptx.contains(".visible .entry axpy("), "{ptx}");
    assert!(ptx.contains("%tid.x"), "{ptx}");
    assert!(
        ptx.lines().any(|line| line.starts_with(".version ")),
        "{ptx}"
    );

    let assembled = ptxas::assemble(&ptx, "sm_90").unwrap_or_else(|error| panic!("{error}"));
    assert!(
        assembled.cubin.starts_with(b"\x7fELF"),
        "a cubin is an ELF file"
    );
    let functions = assembled.functions();
    assert_eq!(functions.len(), 1, "{}", assembled.log);
    assert_eq!(functions[0].name, "axpy", "{}", assembled.log);
    assert!(functions[0].registers > 0, "{}", assembled.log);
    assert_eq!(functions[0].spill_stores, 0, "{}", assembled.log);
}

#[test]
fn malformed_mlir_is_an_error_with_the_diagnostic() {
    let error = mlir::to_llvm_ir("func.func @f() {\n  %0 = arith.constant : f32\n}")
        .expect_err("malformed MLIR");
    assert_eq!(error.stage, mlir::MlirStage::Parse);
    let message = error.to_string();
    assert!(message.contains("error:"), "{message}");
    assert!(
        message.contains(":2:"),
        "the diagnostic points at line 2: {message}"
    );
}

#[test]
fn verifier_errors_are_reported() {
    // Parses, but `arith.addf` needs equal operand types.
    let text = r#"
func.func @f(%a: f32, %b: f64) -> f32 {
  %0 = "arith.addf"(%a, %b) : (f32, f64) -> f32
  return %0 : f32
}"#;
    let error = mlir::verify(text, false).expect_err("ill-typed arith.addf");
    assert_eq!(error.stage, mlir::MlirStage::Parse, "{error}");
    assert!(error.to_string().contains("arith.addf"), "{error}");
}

#[test]
fn unregistered_ops_verify_only_when_allowed() {
    let text = r#"
func.func @f(%a: f32) -> f32 {
  %0 = "xla_gpu.opaque"(%a) : (f32) -> f32
  return %0 : f32
}"#;
    mlir::verify(text, true).unwrap_or_else(|error| panic!("{error}"));
    let error = mlir::verify(text, false).expect_err("xla_gpu is not registered");
    assert!(
        error.to_string().contains("unregistered dialect"),
        "{error}"
    );
}

#[test]
fn an_op_without_lowering_fails_in_the_pipeline_not_with_a_crash() {
    // `gpu.thread_id` outside a gpu.module is left alone by the default pipeline.
    let text = r#"
func.func @f() -> index {
  %0 = gpu.thread_id x
  return %0 : index
}"#;
    let error = mlir::to_llvm_ir(text).expect_err("gpu.thread_id is not lowered");
    assert!(
        matches!(
            error.stage,
            mlir::MlirStage::Pass | mlir::MlirStage::Translate
        ),
        "{error}"
    );
    assert!(!error.diagnostics.is_empty(), "{error}");
}

#[test]
fn unknown_pass_is_a_pipeline_error() {
    let error = mlir::to_llvm_ir_with_pipeline(AXPY, "builtin.module(no-such-pass)")
        .expect_err("unknown pass");
    assert_eq!(error.stage, mlir::MlirStage::Pipeline, "{error}");
}

#[test]
fn bad_llvm_ir_is_an_error() {
    let error = ptx::llvm_ir_to_ptx("define void @f( {", "sm_90").expect_err("bad IR");
    assert!(matches!(error, ptx::PtxError::ParseIr(_)), "{error}");
}

#[test]
fn ptxas_rejects_invalid_ptx() {
    let error = ptxas::assemble(".version 8.0\n.target sm_90\nnonsense;\n", "sm_90")
        .expect_err("invalid PTX");
    assert!(
        matches!(error, ptxas::PtxasError::Rejected { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("nonsense"), "{error}");
}

#[test]
fn the_tools_are_installed() {
    for tool in [
        toolchain::file_check(),
        toolchain::not(),
        toolchain::mlir_opt(),
        toolchain::ptxas(),
        toolchain::libdevice(),
    ] {
        tool.unwrap_or_else(|error| panic!("{error}"));
    }
}

#[test]
fn kernels_are_marked_after_lowering() {
    let lowered =
        mlir::run_pipeline(AXPY, mlir::DEFAULT_PIPELINE).unwrap_or_else(|error| panic!("{error}"));
    assert!(lowered.contains("llvm.func @axpy("), "{lowered}");
    assert!(lowered.contains("nvvm.kernel"), "{lowered}");
    assert!(!lowered.contains(mlir::KERNEL_ATTRIBUTE), "{lowered}");
}
