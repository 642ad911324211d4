//! `distribute-vector-layout` (issue 21 item 4) on every chunk of
//! `testdata/lit/passes/distribute-vector-layout.mlir`: the interpreter runs the function
//! on whole vectors (one thread) and each thread's part (the block the pass sets up) on the
//! same random inputs and the outputs agree; the distributed IR then goes through the rest
//! of the pipeline, agreeing again after every pass, to PTX that ptxas accepts (with vector
//! accesses where a lane's elements are contiguous).

use interp::{Buffer, Kernel, Launch};
use ir::dialects::func;
use ir::dialects::gpu;
use ir::dialects::llvm;
use ir::{Attribute, Module, Type};
use passes::{Pass, PassRegistry};

/// Random contents for a tensor argument: f32 in [-2, 2], i32 in [-100, 100].
fn random_buffer(ty: Type, random: &mut fastrand::Rng) -> Buffer {
    let n = ty.num_elements().unwrap_or(1) as usize;
    let elem = ty.element_type_or_self();
    let mut bytes = Vec::with_capacity(n * 4);
    for _ in 0..n {
        let word = if elem == Type::F32 {
            (random.f32() * 4.0 - 2.0).to_bits()
        } else {
            random.i32(-100..=100) as u32
        };
        bytes.extend_from_slice(&word.to_le_bytes());
    }
    Buffer::new(bytes)
}

/// The function of a chunk, its name and the types of its arguments.
fn function(m: &Module) -> (String, Vec<Type>) {
    let f = m
        .ops_named(func::FUNC)
        .first()
        .copied()
        .expect("a function");
    let name = m.symbol_name(f).expect("a name").to_string();
    let entry = m.entry_block(m.region(f, 0)).unwrap();
    let types = m
        .block_args(entry)
        .iter()
        .map(|&a| m.value_type(a))
        .collect();
    (name, types)
}

/// The block size `gpu.thread_id`'s range gives.
fn threads(m: &Module) -> u64 {
    m.ops_named(gpu::THREAD_ID)
        .first()
        .copied()
        .and_then(|op| match m.attr(op, "xla.range") {
            Some(Attribute::Array(range)) => range[1].as_int(),
            _ => None,
        })
        .map_or(1, |hi| hi as u64 + 1)
}

/// Runs `m`'s function on `args` with one block of `threads`.
fn run(m: &Module, threads: u64, args: &[Buffer]) -> Result<Vec<Buffer>, String> {
    let (name, _) = function(m);
    let kernel = Kernel::compile(m, &name).map_err(|e| e.to_string())?;
    let launch = Launch { blocks: 1, threads };
    let run = kernel
        .run(launch, args.to_vec())
        .map_err(|e| e.to_string())?;
    Ok(run.buffers)
}

/// Float elements agree within 1e-5 (absolute or relative: the reductions combine in
/// another order), integers exactly.
fn agree(want: &[Buffer], got: &[Buffer], types: &[Type]) -> Result<(), String> {
    for (k, ((w, g), ty)) in want.iter().zip(got).zip(types).enumerate() {
        let words = |b: &Buffer| -> Vec<u32> {
            b.bytes()
                .chunks(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                .collect()
        };
        for (i, (a, b)) in words(w).into_iter().zip(words(g)).enumerate() {
            let same = if ty.element_type_or_self() == Type::F32 {
                let (a, b) = (f32::from_bits(a), f32::from_bits(b));
                (a - b).abs() <= 1e-5 * a.abs().max(1.0)
            } else {
                a == b
            };
            if !same {
                return Err(format!(
                    "argument {k} element {i}: {a:#x} before, {b:#x} after"
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn distributed_kernels_agree_with_whole_vector_ones_down_to_ptx() {
    let path = testkit::testdata("lit/passes/distribute-vector-layout.mlir");
    let text = std::fs::read_to_string(&path).unwrap();
    let registry = PassRegistry::standard();
    let chunks: Vec<&str> = text.split("// -----").collect();
    assert!(chunks.len() >= 4, "only {} chunks", chunks.len());
    for (c, chunk) in chunks.iter().enumerate() {
        let whole = ir::parse_module(chunk).unwrap_or_else(|e| panic!("chunk {c}: {e:?}"));
        let (name, types) = function(&whole);
        let mut random = fastrand::Rng::with_seed(c as u64 + 1);
        let args: Vec<Buffer> = types
            .iter()
            .map(|&t| random_buffer(t, &mut random))
            .collect();
        let want = run(&whole, 1, &args).unwrap_or_else(|e| panic!("{name}, whole vectors: {e}"));
        let mut m = whole.clone();
        passes::DistributeVectorLayout.run(&mut m).unwrap();
        let block = threads(&m);
        assert!(block >= 32, "{name}: {block} threads");
        let check = |m: &Module, stage: &str| {
            let got = run(m, block, &args).unwrap_or_else(|e| panic!("{name} after {stage}: {e}"));
            agree(&want, &got, &types).unwrap_or_else(|e| panic!("{name} after {stage}: {e}"));
        };
        check(&m, "distribute-vector-layout");
        for &pass in driver::pipeline::PASSES {
            if pass == "lower-to-llvm" {
                continue;
            }
            registry
                .create(pass)
                .unwrap()
                .run(&mut m)
                .unwrap_or_else(|d| panic!("{name}, {pass}: {d:?}"));
            m.verify()
                .unwrap_or_else(|d| panic!("{name} after {pass}: {d:?}"));
            check(&m, pass);
        }
        if name == "elementwise" {
            // A lane's runs of 4 f32 are single 128-bit accesses.
            let text = m.print();
            let vector_loads = text
                .lines()
                .filter(|l| l.contains(llvm::LOAD) && l.contains("vector<4xf32>"));
            assert_eq!(vector_loads.count(), 4, "{text}");
        }
        registry
            .create("lower-to-llvm")
            .unwrap()
            .run(&mut m)
            .unwrap();
        let linked = ir::link::link(vec![ir::link::LinkInput {
            module: m,
            entry: name.clone(),
            kernel: name.clone(),
        }])
        .unwrap();
        let llvm_ir =
            codegen::mlir::to_llvm_ir_with_pipeline(&linked.print_generic(), "builtin.module()")
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        let compiled =
            codegen::ptx::compile(&llvm_ir, "sm_90").unwrap_or_else(|e| panic!("{name}: {e}"));
        codegen::ptxas::assemble(&compiled.ptx, "sm_90").unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}
