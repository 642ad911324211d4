//! The seed's GELU walkthrough on bf16[2,64,16]: the same kernel written at
//! each stage of the pipeline — `xla_gpu` (from the emitter), `scf` with bounds checks
//! and `apply_indexing`, flattened tensors, vectorized transfers, unrolled lanes, and
//! pointers with `nvvm` registers — computes the evaluator's result bit for bit at every
//! stage.

use crate::common;

use common::parse;
use hlo::evaluate::{evaluate_fusion, random_arguments};
use interp::{Buffer, Kernel, Launch};

/// The GELU of `%x{s}` into `%g{s}`, in the emitter's op order and constants.
fn gelu(s: &str) -> String {
    format!(
        "%sq{s} = arith.mulf %x{s}, %x{s} : bf16
      %cu{s} = arith.mulf %sq{s}, %x{s} : bf16
      %k3{s} = arith.constant 4.467770e-02 : bf16
      %m3{s} = arith.mulf %cu{s}, %k3{s} : bf16
      %a1{s} = arith.addf %x{s}, %m3{s} : bf16
      %k2{s} = arith.constant 7.968750e-01 : bf16
      %m2{s} = arith.mulf %a1{s}, %k2{s} : bf16
      %t{s} = math.tanh %m2{s} : bf16
      %k1{s} = arith.constant 1.000000e+00 : bf16
      %a0{s} = arith.addf %t{s}, %k1{s} : bf16
      %k0{s} = arith.constant 5.000000e-01 : bf16
      %m1{s} = arith.mulf %a0{s}, %k0{s} : bf16
      %g{s} = arith.mulf %x{s}, %m1{s} : bf16"
    )
}

fn scf_stage() -> String {
    format!(
        r##"
#m0 = #xla_gpu.indexing_map<"(th, bl)[v] -> (bl floordiv 2), domain: th in [0, 127], bl in [0, 3], v in [0, 3]">
#m1 = #xla_gpu.indexing_map<"(th, bl)[v] -> ((bl mod 2) * 32 + th floordiv 4), domain: th in [0, 127], bl in [0, 3], v in [0, 3]">
#m2 = #xla_gpu.indexing_map<"(th, bl)[v] -> ((th mod 4) * 4 + v), domain: th in [0, 127], bl in [0, 3], v in [0, 3]">
func.func @main(%param: tensor<2x64x16xbf16>, %output: tensor<2x64x16xbf16>) -> tensor<2x64x16xbf16> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c127 = arith.constant 127 : index
  %tid = gpu.thread_id  x {{xla.range = [0 : index, 127 : index]}}
  %bid = gpu.block_id  x {{xla.range = [0 : index, 3 : index]}}
  %r = scf.for %v = %c0 to %c4 step %c1 iter_args(%iter = %output) -> (tensor<2x64x16xbf16>) {{
    %a = arith.cmpi sge, %tid, %c0 : index
    %b = arith.cmpi sle, %tid, %c127 : index
    %ab = arith.andi %a, %b : i1
    %c = arith.cmpi sge, %bid, %c0 : index
    %d = arith.cmpi sle, %bid, %c3 : index
    %cd = arith.andi %c, %d : i1
    %in = arith.andi %ab, %cd : i1
    %next = scf.if %in -> (tensor<2x64x16xbf16>) {{
      %d0 = xla_gpu.apply_indexing #m0(%tid, %bid)[%v]
      %d1 = xla_gpu.apply_indexing #m1(%tid, %bid)[%v]
      %d2 = xla_gpu.apply_indexing #m2(%tid, %bid)[%v]
      %x = tensor.extract %param[%d0, %d1, %d2] : tensor<2x64x16xbf16>
      {}
      %ins = tensor.insert %g into %iter[%d0, %d1, %d2] : tensor<2x64x16xbf16>
      scf.yield %ins : tensor<2x64x16xbf16>
    }} else {{
      scf.yield %iter : tensor<2x64x16xbf16>
    }}
    scf.yield %next : tensor<2x64x16xbf16>
  }}
  return %r : tensor<2x64x16xbf16>
}}"##,
        gelu("")
    )
}

const FLAT_MAP: &str = r#"#flat = #xla_gpu.indexing_map<"(th, bl, v) -> (th * 4 + bl * 512 + v), domain: th in [0, 127], bl in [0, 3], v in [0, 3]">"#;

/// A kernel over the flattened tensors (one element per `#flat` position): `constants`,
/// then the thread and block ids (`%tid`, `%bid`), then `body`, which returns.
fn flat_kernel(constants: &str, body: &str) -> String {
    format!(
        r#"
{FLAT_MAP}
func.func @main(%param: tensor<2048xbf16>, %output: tensor<2048xbf16>) -> tensor<2048xbf16> {{
  {constants}
  %tid = gpu.thread_id  x {{xla.range = [0 : index, 127 : index]}}
  %bid = gpu.block_id  x {{xla.range = [0 : index, 3 : index]}}
  {body}
}}"#
    )
}

fn flat_stage() -> String {
    flat_kernel(
        "%c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index",
        &format!(
            "%r = scf.for %v = %c0 to %c4 step %c1 iter_args(%iter = %output) -> (tensor<2048xbf16>) {{
      %i = xla_gpu.apply_indexing #flat(%tid, %bid, %v)
      %x = tensor.extract %param[%i] : tensor<2048xbf16>
      {}
      %ins = tensor.insert %g into %iter[%i] : tensor<2048xbf16>
      scf.yield %ins : tensor<2048xbf16>
  }}
  return %r : tensor<2048xbf16>",
            gelu("")
        ),
    )
}

fn vector_stage() -> String {
    flat_kernel(
        "%c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %pad = arith.constant 0.0 : bf16
  %zeros = arith.constant dense<0.0> : vector<4xbf16>",
        &format!(
            "%base = xla_gpu.apply_indexing #flat(%tid, %bid, %c0)
  %in = vector.transfer_read %param[%base], %pad {{in_bounds = [true]}} : tensor<2048xbf16>, vector<4xbf16>
  %r:2 = scf.for %v = %c0 to %c4 step %c1 iter_args(%iter = %output, %acc = %zeros) -> (tensor<2048xbf16>, vector<4xbf16>) {{
      %x = vector.extract %in[%v] : bf16 from vector<4xbf16>
      {}
      %acc2 = vector.insert %g, %acc [%v] : bf16 into vector<4xbf16>
      scf.yield %iter, %acc2 : tensor<2048xbf16>, vector<4xbf16>
  }}
  %w = vector.transfer_write %r#1, %output[%base] {{in_bounds = [true]}} : vector<4xbf16>, tensor<2048xbf16>
  return %w : tensor<2048xbf16>",
            gelu("")
        ),
    )
}

/// The four lanes of the unrolled loop, each extracting lane `k` of `%in` and inserting
/// into `%acc{k}` (the result is `%acc4`).
fn unrolled_lanes() -> String {
    (0..4)
        .map(|k| {
            format!(
                "%x{k} = vector.extract %in[{k}] : bf16 from vector<4xbf16>
  {}
  %acc{} = vector.insert %g{k}, %acc{k} [{k}] : bf16 into vector<4xbf16>",
                gelu(&k.to_string()),
                k + 1
            )
        })
        .collect::<Vec<_>>()
        .join("\n  ")
}

fn unrolled_stage() -> String {
    flat_kernel(
        "%c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : bf16
  %acc0 = arith.constant dense<0.0> : vector<4xbf16>",
        &format!(
            "%base = xla_gpu.apply_indexing #flat(%tid, %bid, %c0)
  %in = vector.transfer_read %param[%base], %pad {{in_bounds = [true]}} : tensor<2048xbf16>, vector<4xbf16>
  {}
  %w = vector.transfer_write %acc4, %output[%base] {{in_bounds = [true]}} : vector<4xbf16>, tensor<2048xbf16>
  return %w : tensor<2048xbf16>",
            unrolled_lanes()
        ),
    )
}

fn pointer_stage() -> String {
    format!(
        r#"
llvm.func @main(%param: !llvm.ptr, %output: !llvm.ptr) {{
  %tid = nvvm.read.ptx.sreg.tid.x range <i32, 0, 128> : i32
  %bid = nvvm.read.ptx.sreg.ctaid.x range <i32, 0, 4> : i32
  %c4 = llvm.mlir.constant(4 : i32) : i32
  %c512 = llvm.mlir.constant(512 : i32) : i32
  %t4 = arith.muli %tid, %c4 : i32
  %b512 = arith.muli %bid, %c512 : i32
  %base = arith.addi %t4, %b512 : i32
  %p = llvm.getelementptr inbounds %param[%base] : (!llvm.ptr, i32) -> !llvm.ptr, bf16
  %in = llvm.load %p invariant {{alignment = 8 : i64}} : !llvm.ptr -> vector<4xbf16>
  %acc0 = llvm.mlir.constant(dense<0.0> : vector<4xbf16>) : vector<4xbf16>
  {}
  %q = llvm.getelementptr inbounds %output[%base] : (!llvm.ptr, i32) -> !llvm.ptr, bf16
  llvm.store %acc4, %q {{alignment = 8 : i64}} : vector<4xbf16>, !llvm.ptr
  llvm.return
}}"#,
        unrolled_lanes()
    )
}

#[test]
fn every_stage_of_the_gelu_walkthrough_matches_the_evaluator() {
    let text = common::small_gelu_hlo();
    let (_, module) = hlo::load("gelu.hlo", text.as_bytes()).unwrap();
    let fusion = emitters::fusions(&module)[0];
    let emitted = emitters::emit_fusion(&module, fusion).unwrap();
    // The emitted kernel takes 8 bf16 per thread (2 blocks); the seed's walkthrough stages,
    // written out below, take XLA's 4 (4 blocks).
    let emitted_launch = Launch {
        blocks: emitted.kernel.launch.blocks,
        threads: emitted.kernel.launch.threads_per_block,
    };
    assert_eq!((emitted_launch.blocks, emitted_launch.threads), (2, 128));
    let seed_launch = Launch {
        blocks: 4,
        threads: 128,
    };
    let stages = [
        ("xla_gpu", emitted.module.print(), emitted_launch),
        ("scf", scf_stage(), seed_launch),
        ("flat", flat_stage(), seed_launch),
        ("vector", vector_stage(), seed_launch),
        ("unrolled", unrolled_stage(), seed_launch),
        ("pointer", pointer_stage(), seed_launch),
    ];
    for seed in 0..2 {
        let args = random_arguments(module.computation(fusion), seed).unwrap();
        let input = Buffer::from_host_array(args[0].as_array().unwrap(), None).unwrap();
        let expected = &evaluate_fusion(&module, fusion, &args).unwrap()[0];
        let expected = Buffer::from_host_array(expected, None).unwrap();
        for (name, text, launch) in &stages {
            let m = parse(text);
            m.verify().unwrap_or_else(|e| panic!("{name}: {e}"));
            let kernel = Kernel::compile(&m, "main").unwrap_or_else(|e| panic!("{name}: {e}"));
            let run = kernel
                .run(*launch, vec![input.clone(), Buffer::zeroed(input.len())])
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(
                run.buffers[1] == expected,
                "stage {name} differs (seed {seed})"
            );
        }
    }
}
