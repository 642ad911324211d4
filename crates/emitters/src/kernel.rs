//! The scaffold every emitter's kernel shares, written once: the kernel's signature
//! (`@main(params..., outputs...) -> outputs`, one tensor per fusion parameter and per
//! output, named after them), the parameter types that subgraph functions take too, and the
//! thread and block ids with the ranges the launch gives them, and the `xla_gpu.loop` over
//! a thread's elements.

use hlo::{ArrayShape, Computation, ComputationId, Diagnostic, HloModule, InstrId, Opcode, Span};
use ir::dialects::arith;

use crate::analysis::FusionAnalysis;
use crate::elemental::{ElementalEmitter, FusionContext, Scope};
use indexing::IndexingMap;
use ir::dialects::{func as irfunc, gpu, xla_gpu};
use ir::{BlockId, Builder, InsertPoint, Type, Value};

use crate::linear_launch::thread_to_output_map;
use crate::partition::PartitionedComputation;
use crate::partition::sanitize;
use crate::types::{leaves, parameter_types, tensor_type};
use crate::unsupported;
use crate::{EmittedFusion, EmittedKernel, EmitterKind, LaunchDimensions};

/// The steps every emitter takes, written once: partition the fusion, emit a function per
/// subgraph and per called scalar computation, let `main` write the kernel `@main` (and
/// whatever else it needs) into the module, and check the result with our verifier.
pub(crate) fn emit_with(
    module: &HloModule,
    fusion: ComputationId,
    partition: PartitionedComputation,
    target: crate::Target,
    emitter: EmitterKind,
    main: impl FnOnce(&FusionContext<'_>, &mut ir::Module) -> Result<EmittedKernel, Diagnostic>,
) -> Result<EmittedFusion, Diagnostic> {
    let computation = module.computation(fusion);
    let cx = crate::fusion_context(module, fusion, partition, target);
    let mut m = ir::Module::new();
    crate::emit_functions(&cx, fusion, &mut m)?;
    let kernel = main(&cx, &mut m)?;
    require_block_size(&mut m, kernel.launch.threads_per_block);
    if target.matches_xla() {
        xla_entry_arguments(&mut m);
    }
    crate::verify_emitted(&m, computation)?;
    Ok(EmittedFusion {
        name: computation.name.clone(),
        module: m,
        kernel,
        emitter,
        partition: cx.partition,
    })
}

/// `@main`'s arguments as XLA writes them without a buffer assignment (its emitter tests):
/// unnamed, so they print as MLIR prints them (`%arg0`, `%arg1`...), and each marked as its
/// own buffer slice (`{xla.slice_index = k : index}`, which `merge-pointers-to-same-slice`
/// reads).
fn xla_entry_arguments(m: &mut ir::Module) {
    let main = m
        .lookup_symbol(m.top(), "main")
        .expect("every emitter writes @main");
    let entry = m.entry_block(m.regions(main)[0]).expect("@main has a body");
    let args = m.block_args(entry).to_vec();
    for (k, &arg) in args.iter().enumerate() {
        m.set_value_name(arg, None);
        let slice = ir::Attribute::index(k as i64);
        ir::dialects::set_arg_attr(m, main, args.len(), k, "xla.slice_index", slice);
    }
}

/// Tells ptxas the exact block size `@main` is launched with (`nvvm.reqntid`, PTX
/// `.reqntid`), as XLA annotates its kernels with their launch dimensions: ptxas then knows
/// the thread id's range and gives a thread no more registers than the block can have (a
/// row normalization of 1024 threads got 102 to 127 registers without it, more than the
/// 64 that let such a block launch at all), and a kernel launched with another block size
/// fails to launch instead of computing something else.
fn require_block_size(m: &mut ir::Module, threads: u64) {
    let main = m
        .lookup_symbol(m.top(), "main")
        .expect("every emitter writes @main");
    let threads = i64::try_from(threads).expect("at most 1024 threads a block");
    m.set_attr(
        main,
        REQUIRED_BLOCK_SIZE_ATTR,
        ir::dialects::dense_i32_array(&[threads, 1, 1]),
    );
}

/// MLIR's NVVM attribute for PTX's `.reqntid` (on a `func.func`, carried to the `llvm.func`).
const REQUIRED_BLOCK_SIZE_ATTR: &str = "nvvm.reqntid";

/// The values of `id` at `index` in `@main`: a parameter is read, a constant materialized,
/// anything else called through its subgraph's function (`params`: `@main`'s tensors).
pub(crate) fn provide(
    cx: &FusionContext<'_>,
    b: &mut Builder<'_>,
    params: &[Value],
    id: InstrId,
    index: &[Value],
) -> Result<Vec<Value>, Diagnostic> {
    let ip = b.insertion_point();
    let inner = Builder::new(&mut *b.module, ip);
    // A scope that owns no instruction: every instruction of the partition is called.
    let mut e = ElementalEmitter::new(cx, inner, Scope::Subgraph(usize::MAX), params.to_vec());
    e.emit(id, index)
}

/// The fusion parameter number of each of `operands`, which a kernel updates in place
/// (their buffers become its outputs'): each must be a parameter that nothing else in the
/// fusion reads, since other threads write it meanwhile. `Err` says why one cannot be.
pub(crate) fn in_place_parameters(
    analysis: &FusionAnalysis,
    operands: &[InstrId],
) -> Result<Vec<usize>, String> {
    let (c, graph) = (analysis.computation, &analysis.graph);
    let params = c.parameters();
    let mut out = Vec::with_capacity(operands.len());
    for &operand in operands {
        let name = &c.instruction(operand).name;
        let p = params.iter().position(|&p| p == operand).ok_or_else(|| {
            format!("'{name}' is computed in the fusion, but it is updated in place, so it must be a parameter")
        })?;
        if graph.users(operand).len() != 1 || out.contains(&p) {
            return Err(format!(
                "'{name}' is also read elsewhere in the fusion, while it is updated in place"
            ));
        }
        out.push(p);
    }
    Ok(out)
}

/// `value` (an integer of any width; `unsigned` says how to read it) as an `index` clamped
/// into `[0, last]`: widened to 64 bits, then for signed values `max(v, 0)` and `min(v,
/// last)`, for unsigned ones an unsigned `min(v, last)` (a u64 past 2^63 clamps to `last`).
pub(crate) fn clamped_index(b: &mut Builder<'_>, value: Value, unsigned: bool, last: i64) -> Value {
    let wide = widened_to_i64(b, value, unsigned);
    let last = b.int(i128::from(last), Type::I64);
    let clamped = if unsigned {
        b.binary(arith::MINUI, wide, last)
    } else {
        let zero = b.int(0, Type::I64);
        let low = b.binary(arith::MAXSI, wide, zero);
        b.binary(arith::MINSI, low, last)
    };
    b.cast(arith::INDEX_CAST, clamped, Type::INDEX)
}

/// An integer value as an `i64`: sign- or zero-extended (`unsigned`), or as it is.
pub(crate) fn widened_to_i64(b: &mut Builder<'_>, value: Value, unsigned: bool) -> Value {
    let ty = b.module.value_type(value);
    if ty == Type::I64 {
        value
    } else if unsigned || ty == Type::I1 {
        b.cast(arith::EXTUI, value, Type::I64)
    } else {
        b.cast(arith::EXTSI, value, Type::I64)
    }
}

/// The kernel function of a fusion, built by [`kernel_entry`].
pub(crate) struct KernelEntry {
    /// The function's only block, empty.
    pub(crate) entry: BlockId,
    /// One tensor per fusion parameter, named after it.
    pub(crate) params: Vec<Value>,
    /// One tensor per output (`output`, or `output0`, `output1`...), which the kernel
    /// returns once written.
    pub(crate) outs: Vec<Value>,
    pub(crate) output_types: Vec<Type>,
}

/// Builds `@main(params..., outputs...) -> outputs` for `fusion` with outputs `outputs`,
/// first in `m`'s body; an output type the IR cannot hold is refused at `span`.
pub(crate) fn kernel_entry(
    m: &mut ir::Module,
    fusion: &Computation,
    outputs: &[&ArrayShape],
    span: Span,
) -> Result<KernelEntry, Diagnostic> {
    let mut inputs = parameter_types(fusion)?;
    let num_params = inputs.len();
    let output_types = outputs
        .iter()
        .map(|a| tensor_type(a).map_err(|e| unsupported(span, e)))
        .collect::<Result<Vec<Type>, Diagnostic>>()?;
    inputs.extend(&output_types);
    let (func, entry) = irfunc::build_func(m, "main", &inputs, &output_types);
    let body = m.body();
    m.insert_op(func, InsertPoint::BlockStart(body));
    let args = m.block_args(entry).to_vec();
    let names = fusion
        .parameters()
        .into_iter()
        .map(|p| sanitize(&fusion.instruction(p).name))
        .chain((0..outputs.len()).map(|k| match outputs.len() {
            1 => "output".to_owned(),
            _ => format!("output{k}"),
        }));
    for (&arg, name) in args.iter().zip(names) {
        m.set_value_name(arg, Some(&name));
    }
    let (params, outs) = args.split_at(num_params);
    Ok(KernelEntry {
        entry,
        params: params.to_vec(),
        outs: outs.to_vec(),
        output_types,
    })
}

/// Where the loop, concatenate, dynamic-update-slice and scatter kernels start: `@main`
/// for `outputs` ([`kernel_entry`]), a builder at the end of its entry block, and the thread
/// and block ids of `launch` ([`thread_and_block_ids`]).
pub(crate) fn begin_kernel<'m>(
    m: &'m mut ir::Module,
    fusion: &Computation,
    outputs: &[&ArrayShape],
    span: Span,
    launch: &LaunchDimensions,
) -> Result<(KernelEntry, Builder<'m>, Vec<Value>), Diagnostic> {
    let entry = kernel_entry(m, fusion, outputs, span)?;
    let mut b = Builder::at_end(m, entry.entry);
    let ids = thread_and_block_ids(&mut b, launch);
    Ok((entry, b, ids))
}

/// The whole kernel of the loop, dynamic-update-slice and scatter emitters: `@main` for
/// `outputs` ([`begin_kernel`]), one `xla_gpu.loop` ([`emit_loop`]) in which each of
/// `launch`'s threads takes `vector_factor` elements of `loop_shape`
/// ([`thread_to_output_map`], with whose `choices`), carrying the output tensors, whose body `body` writes (given
/// the kernel's signature, the index into `loop_shape` and the iteration arguments), and the
/// return of the loop's results. Hands back the kernel, which writes no output in place,
/// and the loop's results.
pub(crate) fn emit_loop_kernel(
    m: &mut ir::Module,
    fusion: &Computation,
    outputs: &[&ArrayShape],
    loop_shape: &ArrayShape,
    launch: &LaunchDimensions,
    (vector_factor, choices): (i64, crate::Choices),
    body: impl FnOnce(
        &mut Builder<'_>,
        &KernelEntry,
        &[Value],
        &[Value],
    ) -> Result<Vec<Value>, Diagnostic>,
) -> Result<(EmittedKernel, Vec<Value>), Diagnostic> {
    let span = fusion.root_instruction().spans.whole;
    let map = thread_to_output_map(loop_shape, launch, vector_factor, choices);
    let (kernel, mut b, ids) = begin_kernel(m, fusion, outputs, span, launch)?;
    let results = emit_loop(
        &mut b,
        map.clone(),
        &ids,
        &kernel.outs,
        |b, _, index, iters| body(b, &kernel, index, iters),
    )?;
    b.ret(&results);
    let emitted = EmittedKernel {
        launch: *launch,
        vector_factor,
        thread_map: map,
        in_place: Vec::new(),
        layouts: Vec::new(),
    };
    Ok((emitted, results))
}

/// `gpu.thread_id x` or `gpu.block_id x|y`, with its range (`0..count`) as `xla.range`, so
/// that later passes know the bounds the launch gives it.
pub(crate) fn special_register(b: &mut Builder<'_>, name: &str, axis: &str, count: u64) -> Value {
    let ip = b.insertion_point();
    gpu::build_ranged_id(b.module, ip, name, axis, count as i64)
}

/// The thread id, then the block id along x and, when `launch`'s grid spreads its blocks
/// over y, along y: the dimensions of the emitters' thread maps.
pub(crate) fn thread_and_block_ids(b: &mut Builder<'_>, launch: &LaunchDimensions) -> Vec<Value> {
    let [grid_x, grid_y, _] = launch.grid();
    let mut ids = vec![
        special_register(b, gpu::THREAD_ID, "x", launch.threads_per_block),
        special_register(b, gpu::BLOCK_ID, "x", grid_x),
    ];
    if grid_y > 1 {
        ids.push(special_register(b, gpu::BLOCK_ID, "y", grid_y));
    }
    ids
}

/// `xla_gpu.loop (dims)[ivs] -> (index) in map iter_args(inits)`; `body` gets the induction
/// variables, the map's results and the iter args and returns what to yield.
pub(crate) fn emit_loop(
    b: &mut Builder<'_>,
    map: IndexingMap,
    dims: &[Value],
    inits: &[Value],
    body: impl FnOnce(&mut Builder<'_>, &[Value], &[Value], &[Value]) -> Result<Vec<Value>, Diagnostic>,
) -> Result<Vec<Value>, Diagnostic> {
    let num_symbols = map.range_vars.len();
    let num_results = map.results.len();
    let names: Vec<String> = map.range_vars.iter().map(|v| v.name.clone()).collect();
    let (op, block) = xla_gpu::build_loop(b.module, b.insertion_point(), map, dims, inits);
    let args = b.module.block_args(block).to_vec();
    for (i, name) in names.iter().enumerate() {
        b.module.set_value_name(args[i], Some(name));
    }
    let (ivs, rest) = args.split_at(num_symbols);
    let (index, iters) = rest.split_at(num_results);
    let mut inner = Builder::at_end(&mut *b.module, block);
    let yielded = body(&mut inner, ivs, index, iters)?;
    xla_gpu::build_yield(b.module, block, &yielded);
    Ok(b.module.results(op).collect())
}

/// Refuses a fusion holding an op no emitter here compiles ([`without_emitter`]).
pub(crate) fn refuse_ops_without_emitter(computation: &Computation) -> Result<(), Diagnostic> {
    match computation.instructions.iter().find_map(without_emitter) {
        Some(refusal) => Err(refusal),
        None => Ok(()),
    }
}

/// The refusal of `instr` when no emitter here compiles its op, located at it and saying
/// what XLA:GPU does with it (the general "no indexing map" refusal would not say).
pub(crate) fn without_emitter(instr: &hlo::Instruction) -> Option<Diagnostic> {
    const TOP_K: &str = "XLA:GPU runs its top-k kernel or decomposes top-k into a sort and a slice, as hlo-emit's fusion pipeline does (--fuse)";
    let what = match instr.opcode {
        Opcode::Sort => {
            "XLA:GPU sorts with a kernel of its own, and so does hlo-emit: its sort emitter takes a fusion whose ROOT is the sort (the fusion pipeline makes one; --fuse)"
        }
        Opcode::TopK => TOP_K,
        Opcode::CustomCall if instr.is_topk_call() => TOP_K,
        Opcode::CustomCall => {
            "XLA:GPU hands a custom-call to the runtime (a library call or a registered kernel), not to a fusion emitter"
        }
        Opcode::Convolution => {
            "XLA:GPU hands a convolution to cuDNN, not to a fusion emitter (with --fuse the module is fused anew and the convolution is left to the runtime)"
        }
        _ => return None,
    };
    Some(unsupported(
        instr.spans.whole,
        format!("{} '{}': {what}", instr.opcode, instr.name),
    ))
}

/// Refuses a fusion in which an array has no elements (a zero-sized dimension) that
/// `zero-sized-hlo-elimination` left (an output among others that are not empty, a
/// variadic scatter of nothing). Located at the first such instruction; a ROOT of no
/// arrays at all (an empty tuple) too.
pub(crate) fn refuse_empty_arrays(computation: &Computation) -> Result<(), Diagnostic> {
    // A ROOT of no arrays (`()`, an empty tuple) writes nothing: no kernel.
    if leaves(&computation.root_instruction().shape).is_empty() {
        let root = computation.root_instruction();
        return Err(unsupported(
            root.spans.whole,
            format!(
                "'{}' has no outputs (an empty tuple): no kernel is emitted",
                root.name
            ),
        ));
    }
    // A parameter nothing reads is a buffer the kernel is passed and never touches (the
    // empty operand of a concatenate or reduce that `zero-sized-hlo-elimination` rewrote).
    let read: std::collections::HashSet<InstrId> = computation
        .instructions
        .iter()
        .flat_map(|instr| instr.operands.iter().copied())
        .collect();
    let empty = computation
        .instructions
        .iter()
        .enumerate()
        .find_map(|(id, instr)| {
            if instr.opcode == Opcode::Parameter && !read.contains(&InstrId(id)) {
                return None;
            }
            leaves(&instr.shape)
                .into_iter()
                .find(|a| a.element_count() == 0)
                .map(|a| (instr, a.clone()))
        });
    match empty {
        None => Ok(()),
        Some((instr, shape)) => Err(unsupported(
            instr.spans.whole,
            format!(
                "an empty array: '{}' has no elements ({shape}) in a fusion whose other \
                 arrays have some; XLA's ZeroSizedHloElimination leaves no empty array to its \
                 emitters (an empty output is a constant, not a kernel's)",
                instr.name
            ),
        )),
    }
}
