//! `lower-tensors`: tensors become pointers, as XLA's `lower_tensors.cc` does it.
//!
//! The emitters write value-semantics tensors (`tensor.insert` returns a new tensor); the GPU
//! has buffers. Every tensor value of a function lives in one *buffer*, found by following
//! its definition back (XLA's `GetDestinationBuffer`): through `tensor.insert` and
//! `vector.transfer_write` to their destination, through `scf.for` results and iter args to
//! the init, through `scf.if` results to what the branches yield (both must yield the same
//! buffer), through `xla_gpu.sync_threads` to its operand, up to a root:
//!
//! * a function argument, which becomes an `!llvm.ptr`;
//! * `xla_gpu.allocate_shared`, which becomes a `private` `llvm.mlir.global` of type
//!   `!llvm.array<N x T>` in address space 3 (shared memory), read through
//!   `llvm.mlir.addressof` as an `!llvm.ptr<3>`. XLA casts that pointer to the generic
//!   address space; keeping address space 3 lets the backend emit `ld.shared`/`st.shared`
//!   directly and needs no `llvm.addrspacecast`;
//! * an `arith.constant dense<...>` tensor, which becomes a `private constant` global in
//!   address space 0 holding the values (XLA's `RewriteNonScalarConstants`).
//!
//! Then:
//!
//! * `tensor.extract %t[%i]` → `llvm.getelementptr inbounds %p[%i'] ... T` + `llvm.load`;
//!   `tensor.insert %v into %t[%i]` → the same address + `llvm.store`, both with the
//!   alignment the index proves (below): LLVM's load/store vectorizer merges neighbouring
//!   scalar accesses into one wide access only where it knows the alignment, and its own
//!   inference loses it on some index forms (the 210 transpose's output rows, 32-bit
//!   indices: 32-bit stores instead of 128-bit). `%i'` is
//!   `arith.index_castui %i : index to i64`: `index` stays `index` for `lower-to-llvm` to
//!   size, and an `i64` offset is right for any index width (an `i32` one would be
//!   sign-extended by the GEP and wrong past 2³¹ elements). XLA casts to the data layout's
//!   index width instead; a 0-d tensor is read at offset 0.
//! * `vector.transfer_read/write` of a 1-d tensor (in bounds, unmasked, minor identity) →
//!   one vector `llvm.load`/`llvm.store`. Its `alignment` is always set, because LLVM
//!   would otherwise assume the vector type's ABI alignment (its size): it is what the
//!   offset proves — element size × the largest power of two known to divide the index
//!   (constants, sums, products, `scf.for` bounds and steps, `apply_indexing` maps), at most
//!   16, the alignment of every buffer. `i1` vectors are stored as `i8` vectors (in memory an
//!   LLVM `<N x i1>` is bit-packed, XLA's `pred` is a byte per element).
//! * Loads from a kernel argument that nothing in the kernel writes (no insert or transfer
//!   into its buffer, not passed to a call) are `invariant` (XLA's `xla.invariant`: the
//!   backend may then use the read-only data cache, `ld.global.nc`).
//! * `xla_gpu.atomic_rmw` → `llvm.store`, `llvm.atomicrmw`, or a compare-and-swap loop
//!   (`atomic.rs`).
//! * `xla_gpu.sync_threads` → `nvvm.barrier0` (what `gpu.barrier` lowers to), its results
//!   replaced by its operands' buffers.
//! * `gpu.thread_id/block_id/block_dim/grid_dim` → `nvvm.read.ptx.sreg.{tid,ctaid,ntid,
//!   nctaid}.<dim> : i32` with `range <i32, lo, hi + 1>` from `xla.range = [lo, hi]` (or
//!   `[0, upper_bound)`), then `arith.index_castui` to `index`: the registers are never
//!   negative, so zero extension is exact and tells LLVM so.
//! * Tensor-typed `scf.for` iter args and results, `scf.if` results and `scf.yield`
//!   operands disappear (every value of one buffer is the same pointer); `func.return` of
//!   tensors returns nothing, and the function then has no results, as XLA's kernels.
//! * Signatures: tensor arguments become `!llvm.ptr`. Kernels (public functions) get
//!   `llvm.noalias`, `llvm.align = 16` (XLA allocates every buffer 16-byte aligned) and
//!   `llvm.dereferenceable = <bytes>` on them, as XLA's emitter annotates its arguments.
//!   Private functions are lowered the same way (without the annotations); calls pass the
//!   buffers' pointers.
//!
//! Refused, with an error at the op (before anything changes): tensors of rank > 1 (run
//! `flatten-tensors` first) or of non-scalar elements, ops on tensors other than the ones
//! above (`xla_gpu.loop` and predicated ops must be lowered first), calls returning tensors,
//! functions mixing tensor and non-tensor results, out-of-bounds, masked or permuted
//! transfers, and (while lowering) loops or branches whose tensors change buffer, and shared
//! memory passed to a call.

mod alignment;
mod atomic;
mod complex_add;

use crate::pass::{Pass, op_error};
use crate::rewrite::{recreate_with_results, xla_range};
use ir::attrs::DenseValues;
use ir::dialects::arith;
use ir::dialects::enum_case;
use ir::dialects::func;
use ir::dialects::gpu;
use ir::dialects::llvm::{self, GepIndex};
use ir::dialects::scf;
use ir::dialects::tensor;
use ir::dialects::xla_gpu;
use ir::dialects::{nvvm, vector};
use ir::intern::{FxHashMap, FxHashSet};
use ir::{
    Attribute, BlockId, Builder, Diagnostic, InsertPoint, Loc, Module, NamedAttr, OpId, Scalar,
    Type, Value, ValueDef,
};

/// Lowers tensors to pointers (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct LowerTensors;

impl Pass for LowerTensors {
    crate::pass_names!(
        "lower-tensors",
        "Lower tensors to LLVM pointers, loads and stores; shared tensors to address space 3 \
         globals, thread ids to NVVM special registers"
    );

    fn run(&self, m: &mut Module) -> Result<(), Diagnostic> {
        let funcs = func::functions(m);
        for &f in &funcs {
            check_function(m, f)?;
        }
        let mut globals = Globals::default();
        for f in funcs {
            lower_function(m, f, &mut globals)?;
        }
        Ok(())
    }
}

/// The alignment in bytes of every buffer: kernel arguments (XLA's allocations) and the
/// globals created here.
const BUFFER_ALIGNMENT: u64 = 16;

/// The address space of shared memory.
const SHARED_ADDR_SPACE: u32 = 3;

/// Ops that may have tensor operands or results here.
const TENSOR_OPS: &[&str] = &[
    tensor::EXTRACT,
    tensor::INSERT,
    vector::TRANSFER_READ,
    vector::TRANSFER_WRITE,
    xla_gpu::ALLOCATE_SHARED,
    xla_gpu::SYNC_THREADS,
    arith::CONSTANT,
    scf::FOR,
    scf::IF,
    scf::YIELD,
    func::RETURN,
    func::CALL,
    xla_gpu::PURE_CALL,
    xla_gpu::ATOMIC_RMW,
    xla_gpu::GET_DYNAMIC_DIM_SIZE,
];

// ----- checks -----

/// Refuses what this pass cannot lower, before anything changes.
fn check_function(m: &Module, f: OpId) -> Result<(), Diagnostic> {
    let (_, results) = ir::dialects::func::function_type(m, f).unwrap_or((&[], &[]));
    let tensors = results.iter().filter(|t| t.is_tensor()).count();
    if tensors != 0 && tensors != results.len() {
        return Err(op_error(
            m,
            f,
            "function has a mix of tensor and non-tensor results",
        ));
    }
    for op in m.collect_ops(f).into_iter().skip(1) {
        check_op(m, op)?;
    }
    Ok(())
}

fn check_op(m: &Module, op: OpId) -> Result<(), Diagnostic> {
    let mut types = m.operand_types(op);
    types.extend(m.result_types(op));
    let tensor_types: Vec<Type> = types.into_iter().filter(|t| t.is_tensor()).collect();
    if tensor_types.is_empty() {
        return Ok(());
    }
    let name = m.name(op);
    if !TENSOR_OPS.contains(&name.as_str()) {
        return Err(op_error(m, op, "cannot lower this op on tensors"));
    }
    for t in tensor_types {
        check_tensor_type(m, op, t)?;
    }
    match name.as_str() {
        func::CALL | xla_gpu::PURE_CALL if m.result_types(op).iter().any(|t| t.is_tensor()) => {
            Err(op_error(m, op, "calls returning tensors are not supported"))
        }
        vector::TRANSFER_READ | vector::TRANSFER_WRITE => check_transfer(m, op),
        // NVPTX has no atomic read-modify-write or compare-and-swap of 128 bits here; a
        // complex add is two atomic adds of the parts (`atomic::lowerable`).
        // XLA's packed update of a vector of elements (`atom.v2.f32.add` on Hopper) is not
        // written here.
        xla_gpu::ATOMIC_RMW if xla_gpu::atomic_rmw_is_packed(m, op) => Err(op_error(
            m,
            op,
            "unsupported: an atomic update of a vector of elements",
        )),
        xla_gpu::ATOMIC_RMW if !atomic::lowerable(m, op) => Err(op_error(
            m,
            op,
            "atomic updates of elements wider than 64 bits are not supported",
        )),
        xla_gpu::GET_DYNAMIC_DIM_SIZE => dynamic_size_offset(m, op).map(|_| ()),
        _ => Ok(()),
    }
}

/// Only 0-d and 1-d tensors of scalars, as `flatten-tensors` leaves them.
fn check_tensor_type(m: &Module, op: OpId, t: Type) -> Result<(), Diagnostic> {
    if t.thread_layout().is_some() {
        return Err(op_error(
            m,
            op,
            format!("unsupported: '{t}': XLA's thread layout encoding has no meaning here"),
        ));
    }
    if t.rank().unwrap_or(0) > 1 || t.num_elements().is_none_or(|n| n < 0) {
        return Err(op_error(
            m,
            op,
            format!("expects static 0-d or 1-d tensors (run flatten-tensors first), got '{t}'"),
        ));
    }
    let elem = t.element_type().unwrap_or(t);
    if !(elem.is_float() || elem.is_signless_integer()) {
        return Err(op_error(
            m,
            op,
            format!("cannot lower tensors of element type '{elem}'"),
        ));
    }
    Ok(())
}

/// One contiguous 1-d access: in bounds, minor identity map (masks are refused by the IR).
fn check_transfer(m: &Module, op: OpId) -> Result<(), Diagnostic> {
    let vector = if m.is(op, vector::TRANSFER_READ) {
        m.value_type(m.result(op, 0))
    } else {
        m.value_type(m.operand(op, 0))
    };
    if vector.rank() != Some(1) {
        return Err(op_error(m, op, "only 1-d vector transfers are supported"));
    }
    if let Some(width) = sub_byte_width(vector.element_type_or_self()) {
        // Whole bytes: a length of whole bytes, at an index known to start a byte (what
        // `vectorize-loads-stores` proves before it makes such a transfer).
        let lanes = vector.num_elements().unwrap_or(0);
        let index = m.operand(
            op,
            if m.is(op, vector::TRANSFER_READ) {
                1
            } else {
                2
            },
        );
        let per_byte_log2 = (8 / width).trailing_zeros();
        if lanes * i64::from(width) % 8 != 0 || alignment::index_twos(m, index) < per_byte_log2 {
            let message = format!(
                "unsupported: a vector transfer of {width}-bit elements that is not whole bytes \
                 (a length of whole bytes at an index known to start a byte)"
            );
            return Err(op_error(m, op, message));
        }
    }
    if !vector::is_in_bounds(m, op) {
        return Err(op_error(m, op, "only in-bounds transfers are supported"));
    }
    let identity = vector::has_minor_identity_map(m, op);
    if !identity {
        return Err(op_error(
            m,
            op,
            "only transfers with the identity permutation map are supported",
        ));
    }
    Ok(())
}

// ----- buffers -----

/// Names of the globals created so far (symbols must be unique in the module).
#[derive(Default)]
struct Globals {
    names: FxHashSet<String>,
}

impl Globals {
    /// `prefix<N>` for the first `N` naming no symbol yet.
    fn fresh_name(&mut self, m: &Module, prefix: &str) -> String {
        let name = (0..)
            .map(|i| format!("{prefix}{i}"))
            .find(|n| !self.names.contains(n) && m.lookup_symbol(m.top(), n).is_none())
            .expect("an unused symbol name");
        self.names.insert(name.clone());
        name
    }

    /// A global for the tensor `op` defines (`value` holds a constant's elements), and its
    /// address, taken where `op` is.
    fn create(
        &mut self,
        m: &mut Module,
        op: OpId,
        addr_space: u32,
        value: Option<Attribute>,
    ) -> Value {
        let tensor = m.value_type(m.result(op, 0));
        let elem = tensor.element_type().unwrap_or(tensor);
        let n = tensor.num_elements().unwrap_or(1);
        let prefix = if value.is_some() {
            "global_cst_"
        } else {
            "shared_"
        };
        let name = self.fresh_name(m, prefix);
        let (n, elem) = match constant_words(elem) {
            Some(width) => ((n * i64::from(width) + 31) / 32, Type::I32),
            None => (n, elem),
        };
        let array = Type::opaque(&format!("!llvm.array<{n} x {elem}>"));
        let body = InsertPoint::BlockStart(m.body());
        let constant = value.is_some();
        let global = llvm::build_global(m, body, &name, array, "private", addr_space, value);
        m.set_prop(global, "alignment", Attribute::i64(BUFFER_ALIGNMENT as i64));
        if constant {
            m.set_prop(global, "constant", Attribute::Unit);
        }
        llvm::build_addressof(m, InsertPoint::Before(op), &name, Type::ptr(addr_space))
    }
}

/// The buffer (a pointer, or a tensor argument that becomes one) of every tensor value seen.
#[derive(Default)]
struct Buffers {
    of: FxHashMap<Value, Value>,
}

impl Buffers {
    /// The buffer holding `v`.
    fn get(&mut self, m: &mut Module, g: &mut Globals, v: Value) -> Result<Value, Diagnostic> {
        if let Some(&p) = self.of.get(&v) {
            return Ok(p);
        }
        let p = match m.value_def(v) {
            ValueDef::Arg { block, index } => self.of_block_arg(m, g, block, index as usize)?,
            ValueDef::Result { op, index } => self.of_result(m, g, op, index as usize)?,
            ValueDef::Detached => {
                let message = "a tensor value defined nowhere";
                return Err(Diagnostic::new(m.file.clone(), Loc::UNKNOWN, message));
            }
        };
        self.of.insert(v, p);
        Ok(p)
    }

    fn of_block_arg(
        &mut self,
        m: &mut Module,
        g: &mut Globals,
        block: BlockId,
        index: usize,
    ) -> Result<Value, Diagnostic> {
        let owner = m.block_parent_op(block).expect("a block in an op");
        match m.name(owner).as_str() {
            func::FUNC => Ok(m.block_arg(block, index)),
            // Iter arg `index - 1` starts as init `index - 1` (operands: lb, ub, step, inits).
            scf::FOR if index > 0 => self.get(m, g, m.operand(owner, index + 2)),
            _ => Err(op_error(
                m,
                owner,
                "cannot lower tensor block arguments of this op",
            )),
        }
    }

    fn of_result(
        &mut self,
        m: &mut Module,
        g: &mut Globals,
        op: OpId,
        index: usize,
    ) -> Result<Value, Diagnostic> {
        match m.name(op).as_str() {
            tensor::INSERT | vector::TRANSFER_WRITE => self.get(m, g, m.operand(op, 1)),
            xla_gpu::SYNC_THREADS => self.get(m, g, m.operand(op, index)),
            xla_gpu::ATOMIC_RMW => self.get(m, g, m.operand(op, 0)),
            scf::FOR => {
                let init = self.get(m, g, m.operand(op, index + 3))?;
                self.expect_yield(m, g, op, 0, index, init)?;
                Ok(init)
            }
            scf::IF => {
                let then = yielded(m, op, 0, index);
                let buffer = self.get(m, g, then)?;
                self.expect_yield(m, g, op, 1, index, buffer)?;
                Ok(buffer)
            }
            xla_gpu::ALLOCATE_SHARED => {
                let tensor = m.value_type(m.result(op, 0));
                if let Some(width) = sub_byte_width(element_type(tensor)) {
                    let message =
                        format!("unsupported: shared memory of {width}-bit elements ('{tensor}')");
                    return Err(op_error(m, op, message));
                }
                Ok(g.create(m, op, SHARED_ADDR_SPACE, None))
            }
            arith::CONSTANT => {
                let value = flat_constant(m, op);
                Ok(g.create(m, op, 0, Some(value)))
            }
            _ => Err(op_error(m, op, "cannot lower a tensor defined by this op")),
        }
    }

    /// Checks that region `region` of `op` yields `buffer` as value `index`.
    fn expect_yield(
        &mut self,
        m: &mut Module,
        g: &mut Globals,
        op: OpId,
        region: usize,
        index: usize,
        buffer: Value,
    ) -> Result<(), Diagnostic> {
        if self.get(m, g, yielded(m, op, region, index))? == buffer {
            return Ok(());
        }
        Err(op_error(
            m,
            op,
            format!("result #{index} is not in one buffer: its regions yield different tensors"),
        ))
    }
}

/// Operand `index` of the terminator of region `region` of `op`.
fn yielded(m: &Module, op: OpId, region: usize, index: usize) -> Value {
    let block = m
        .entry_block(m.region(op, region))
        .expect("a region with a block");
    m.operand(m.last_op(block).expect("a terminator"), index)
}

/// The value of a tensor constant as a 1-d `dense` attribute (what an LLVM array global holds).
/// Constants of 2-, 4- and 8-bit elements are held as the little-endian 32-bit words of
/// their bytes (sub-byte elements packed, the first in the low bits, as in their buffers):
/// MLIR imports an LLVM array of `i8` as a string attribute, which the IR reader holds as
/// UTF-8 text. Their accesses address bytes (`i8` GEPs), so the words are only storage.
fn constant_words(elem: Type) -> Option<u32> {
    elem.bit_width().filter(|w| matches!(w, 2 | 4 | 8))
}

fn flat_constant(m: &Module, op: OpId) -> Attribute {
    let tensor = m.value_type(m.result(op, 0));
    let elem = tensor.element_type().unwrap_or(tensor);
    let n = tensor.num_elements().unwrap_or(1);
    let flat = Type::tensor(&[n], elem);
    let Some(Attribute::Dense { values, .. }) = m.prop(op, "value") else {
        return m.prop(op, "value").cloned().unwrap_or(Attribute::Unit);
    };
    let Some(width) = constant_words(elem) else {
        return Attribute::Dense {
            ty: flat,
            values: values.clone(),
        };
    };
    let element = |i: usize| match values {
        DenseValues::Splat(v) => *v,
        DenseValues::Elements(vs) => vs[i],
    };
    let per_word = (32 / width) as usize;
    let count = usize::try_from(n).unwrap_or(0);
    let words = (0..count.div_ceil(per_word))
        .map(|word| {
            let packed =
                (0..per_word)
                    .filter(|k| word * per_word + k < count)
                    .fold(0u32, |acc, k| {
                        let bits = element(word * per_word + k).as_int().unwrap_or(0) as u32;
                        acc | (bits & ((1u64 << width) - 1) as u32) << (k as u32 * width)
                    });
            // The word's value as a signless `i32` reads it: two's complement.
            Scalar::Int(i128::from(packed as i32))
        })
        .collect();
    Attribute::Dense {
        ty: Type::tensor(&[count.div_ceil(per_word) as i64], Type::I32),
        values: DenseValues::Elements(words),
    }
}

// ----- one function -----

/// What lowering one function needs to know.
struct Cx {
    buffers: Buffers,
    /// Buffers stored to (or handed to a call) in this function, or marked
    /// `xla.not_invariant` (XLA's mark of an argument written through another one).
    written: FxHashSet<Value>,
    /// Loads from kernel arguments that are not written are invariant.
    kernel: bool,
}

impl Cx {
    fn buffer(&self, tensor: Value) -> Value {
        self.buffers.of[&tensor]
    }

    fn is_invariant(&self, m: &Module, buffer: Value) -> bool {
        self.kernel
            && matches!(m.value_def(buffer), ValueDef::Arg { .. })
            && !self.written.contains(&buffer)
    }
}

fn lower_function(m: &mut Module, f: OpId, globals: &mut Globals) -> Result<(), Diagnostic> {
    let kernel = m.get_attr(f, "sym_visibility").and_then(Attribute::as_str) != Some("private");
    let mut cx = Cx {
        buffers: Buffers::default(),
        written: FxHashSet::default(),
        kernel,
    };
    let ops = m.collect_ops(f);
    for &op in &ops {
        find_buffers(m, op, &mut cx, globals)?;
    }
    if let Some(entry) = m.entry_block(m.region(f, 0)) {
        let args = m.block_args(entry).to_vec();
        cx.written
            .extend(args.into_iter().enumerate().filter_map(|(i, arg)| {
                ir::dialects::arg_attr(m, f, i, "xla.not_invariant").map(|_| arg)
            }));
    }
    for &op in &ops {
        lower_op(m, op, &cx)?;
    }
    remove_tensor_values(m, f, &cx);
    rewrite_signature(m, f, kernel);
    Ok(())
}

/// Records the buffers of `op`'s tensor operands and results (and a loop's iter args) and
/// which buffers `op` writes.
fn find_buffers(
    m: &mut Module,
    op: OpId,
    cx: &mut Cx,
    globals: &mut Globals,
) -> Result<(), Diagnostic> {
    let mut tensors: Vec<Value> = m
        .operands(op)
        .filter(|&v| m.value_type(v).is_tensor())
        .collect();
    tensors.extend(tensor_values(m, op));
    for v in tensors {
        cx.buffers.get(m, globals, v)?;
    }
    let written: Vec<Value> = match m.name(op).as_str() {
        tensor::INSERT | vector::TRANSFER_WRITE => vec![m.operand(op, 1)],
        xla_gpu::ATOMIC_RMW => vec![m.operand(op, 0)],
        func::CALL | xla_gpu::PURE_CALL => m
            .operands(op)
            .filter(|&v| m.value_type(v).is_tensor())
            .collect(),
        _ => Vec::new(),
    };
    for v in written {
        let buffer = cx.buffers.get(m, globals, v)?;
        cx.written.insert(buffer);
    }
    Ok(())
}

/// The tensor values `op` defines: its results, and a loop's iter args.
fn tensor_values(m: &Module, op: OpId) -> Vec<Value> {
    let mut values: Vec<Value> = m
        .results(op)
        .filter(|&r| m.value_type(r).is_tensor())
        .collect();
    if m.is(op, scf::FOR) {
        let body = m.entry_block(m.region(op, 0)).expect("a loop body");
        values.extend(
            m.block_args(body)
                .iter()
                .filter(|&&a| m.value_type(a).is_tensor()),
        );
    }
    values
}

/// Lowers one memory access, barrier or launch index.
fn lower_op(m: &mut Module, op: OpId, cx: &Cx) -> Result<(), Diagnostic> {
    match m.name(op).as_str() {
        tensor::EXTRACT => lower_extract(m, op, cx),
        tensor::INSERT => lower_insert(m, op, cx),
        vector::TRANSFER_READ => lower_transfer_read(m, op, cx),
        vector::TRANSFER_WRITE => lower_transfer_write(m, op, cx),
        xla_gpu::ATOMIC_RMW => atomic::lower(m, op, cx.buffer(m.operand(op, 0))),
        xla_gpu::SYNC_THREADS => {
            nvvm::build_barrier0(m, InsertPoint::Before(op));
        }
        gpu::THREAD_ID | gpu::BLOCK_ID | gpu::BLOCK_DIM | gpu::GRID_DIM | gpu::LANE_ID => {
            lower_dimension_op(m, op)
        }
        func::CALL | xla_gpu::PURE_CALL => check_call_pointers(m, op, cx)?,
        xla_gpu::GET_DYNAMIC_DIM_SIZE => lower_dynamic_dim_size(m, op, cx)?,
        _ => {}
    }
    Ok(())
}

/// Where XLA keeps the size of dimension `dim` of a dynamically shaped buffer: the `i32`
/// sizes follow the data (of the static bound), so its byte offset is the data's size in
/// whole bytes plus four bytes a dimension. The data must end on a 4-byte boundary.
fn dynamic_size_offset(m: &Module, op: OpId) -> Result<i64, Diagnostic> {
    let tensor = m.value_type(m.operand(op, 0));
    let bits = element_type(tensor).bit_width().map(i64::from);
    let dim = m.prop(op, "dim").and_then(Attribute::as_i64);
    let offset = tensor
        .num_elements()
        .zip(bits)
        .and_then(|(n, bits)| n.checked_mul(bits))
        .map(|bits| (bits + 7) / 8)
        .zip(dim);
    match offset {
        Some((bytes, _)) if bytes % 4 != 0 => {
            Err(op_error(m, op, "dynamic size offset is not 4-byte aligned"))
        }
        Some((bytes, dim)) => dim
            .checked_mul(4)
            .and_then(|d| d.checked_add(bytes))
            .ok_or_else(|| op_error(m, op, "dynamic size offset does not fit in 64 bits")),
        None => Err(op_error(
            m,
            op,
            "cannot find the dynamic size of this tensor",
        )),
    }
}

/// The `i32` at [`dynamic_size_offset`] bytes into the buffer.
fn lower_dynamic_dim_size(m: &mut Module, op: OpId, cx: &Cx) -> Result<(), Diagnostic> {
    let offset = dynamic_size_offset(m, op)?;
    let buffer = cx.buffer(m.operand(op, 0));
    let at = InsertPoint::Before(op);
    let offset = llvm::build_constant(m, at, Attribute::int(offset.into(), Type::I64), Type::I64);
    let address = offset_address(m, op, buffer, offset, Type::I8);
    let invariant = cx.is_invariant(m, buffer);
    let size = llvm::build_load(m, at, address, Type::I32, invariant);
    m.replace_all_uses(m.result(op, 0), size);
    m.erase_op(op);
    Ok(())
}

/// A called function receives generic pointers; shared memory would need an address space
/// cast, which this pass does not emit.
fn check_call_pointers(m: &Module, op: OpId, cx: &Cx) -> Result<(), Diagnostic> {
    for v in m.operands(op).filter(|&v| m.value_type(v).is_tensor()) {
        if m.value_type(cx.buffer(v)).ptr_addr_space() == Some(SHARED_ADDR_SPACE) {
            return Err(op_error(
                m,
                op,
                "passing shared memory to a function is not supported",
            ));
        }
    }
    Ok(())
}

/// The element type a tensor's elements have in memory, and the type loads produce.
pub(super) fn element_type(tensor: Type) -> Type {
    tensor.element_type().unwrap_or(tensor)
}

/// `&buffer[index]` for a tensor element: the `i64` offset and the GEP, before `op`.
pub(super) fn element_address(
    m: &mut Module,
    op: OpId,
    buffer: Value,
    index: Option<Value>,
    elem: Type,
) -> Value {
    let mut b = Builder::before(m, op);
    let offset = match index {
        Some(i) => b.cast(arith::INDEX_CASTUI, i, Type::I64),
        None => b.int(0, Type::I64),
    };
    offset_address(m, op, buffer, offset, elem)
}

/// `&buffer[offset]` in elements of `elem` (`offset` an `i64`), before `op`.
fn offset_address(m: &mut Module, op: OpId, buffer: Value, offset: Value, elem: Type) -> Value {
    let at = InsertPoint::Before(op);
    let address = llvm::build_gep(m, at, buffer, &[GepIndex::Value(offset)], elem, true);
    // A tensor argument becomes a generic pointer only with the signature, at the end.
    if m.value_type(buffer).is_tensor() {
        m.set_value_type(address, Type::PTR);
    }
    address
}

fn lower_extract(m: &mut Module, op: OpId, cx: &Cx) {
    let tensor = m.operand(op, 0);
    let buffer = cx.buffer(tensor);
    let elem = element_type(m.value_type(tensor));
    let index = m.operands(op).nth(1);
    let invariant = cx.is_invariant(m, buffer);
    let loaded = match sub_byte_width(elem) {
        Some(width) => {
            let place = SubByte::place(m, op, buffer, index, width);
            let byte =
                llvm::build_load(m, InsertPoint::Before(op), place.byte, Type::I8, invariant);
            let mut b = Builder::before(m, op);
            let shifted = b.binary(arith::SHRUI, byte, place.shift);
            b.cast(arith::TRUNCI, shifted, elem)
        }
        None => {
            let address = element_address(m, op, buffer, index, elem);
            let loaded = llvm::build_load(m, InsertPoint::Before(op), address, elem, invariant);
            if let Some(index) = index {
                let load = m.defining_op(loaded).expect("a load");
                alignment::set_alignment(m, load, index, elem);
            }
            loaded
        }
    };
    m.replace_all_uses(m.result(op, 0), loaded);
    m.erase_op(op);
}

/// The store; the op itself (whose result is the buffer now) goes with the tensor values.
/// A sub-byte element shares its byte with others, which other threads may write at the
/// same time: it is merged in by a compare-and-swap of the byte, as XLA does.
fn lower_insert(m: &mut Module, op: OpId, cx: &Cx) {
    let (value, dest) = (m.operand(op, 0), m.operand(op, 1));
    let elem = element_type(m.value_type(dest));
    let index = m.operands(op).nth(2);
    if let Some(width) = sub_byte_width(elem) {
        let place = SubByte::place(m, op, cx.buffer(dest), index, width);
        atomic::compare_and_swap_loop(m, op, place.byte, elem, Some(place), |_, _| value);
        return;
    }
    let address = element_address(m, op, cx.buffer(dest), index, elem);
    let store = llvm::build_store(m, InsertPoint::Before(op), value, address);
    if let Some(index) = index {
        alignment::set_alignment(m, store, index, elem);
    }
}

/// The width of an element type that memory packs several to a byte (`i2`, `i4`).
pub(super) fn sub_byte_width(elem: Type) -> Option<u32> {
    elem.bit_width().filter(|w| matches!(w, 2 | 4))
}

/// Where a sub-byte element lies: the address of its byte and its shift in it (an `i8`;
/// the first element of a byte is in its low bits).
#[derive(Clone, Copy)]
pub(super) struct SubByte {
    pub(super) byte: Value,
    pub(super) shift: Value,
    pub(super) width: u32,
}

impl SubByte {
    pub(super) fn place(
        m: &mut Module,
        op: OpId,
        buffer: Value,
        index: Option<Value>,
        width: u32,
    ) -> SubByte {
        let per_byte_log2 = i64::from((8 / width).trailing_zeros());
        let mut b = Builder::before(m, op);
        let offset = match index {
            Some(i) => b.cast(arith::INDEX_CASTUI, i, Type::I64),
            None => b.int(0, Type::I64),
        };
        let log2 = b.int(i128::from(per_byte_log2), Type::I64);
        let byte_index = b.binary(arith::SHRUI, offset, log2);
        let low = b.int((1 << per_byte_log2) - 1, Type::I64);
        let slot = b.binary(arith::ANDI, offset, low);
        let slot = b.cast(arith::TRUNCI, slot, Type::I8);
        let bits = b.int(i128::from(width), Type::I8);
        let shift = b.binary(arith::MULI, slot, bits);
        let at = InsertPoint::Before(op);
        let byte = llvm::build_gep(
            m,
            at,
            buffer,
            &[GepIndex::Value(byte_index)],
            Type::I8,
            true,
        );
        if m.value_type(buffer).is_tensor() {
            m.set_value_type(byte, Type::PTR);
        }
        SubByte { byte, shift, width }
    }
}

fn lower_transfer_read(m: &mut Module, op: OpId, cx: &Cx) {
    let tensor = m.operand(op, 0);
    let buffer = cx.buffer(tensor);
    let elem = element_type(m.value_type(tensor));
    let vector = m.value_type(m.result(op, 0));
    let index = m.operand(op, 1);
    if let Some(width) = sub_byte_width(elem) {
        // Whole bytes (checked): the vector starts at a byte, and LLVM's vectors of `i2`
        // and `i4` are packed in memory as the buffer is, the first lane in the low bits.
        let place = SubByte::place(m, op, buffer, Some(index), width);
        let invariant = cx.is_invariant(m, buffer);
        let at = InsertPoint::Before(op);
        let loaded = llvm::build_load(m, at, place.byte, vector, invariant);
        let load = m.defining_op(loaded).expect("a load");
        set_packed_alignment(m, load, index, width);
        m.replace_all_uses(m.result(op, 0), loaded);
        m.erase_op(op);
        return;
    }
    let address = element_address(m, op, buffer, Some(index), memory_type(elem));
    let loaded_type = memory_type(vector);
    let invariant = cx.is_invariant(m, buffer);
    let mut loaded = llvm::build_load(m, InsertPoint::Before(op), address, loaded_type, invariant);
    let load = m.defining_op(loaded).expect("a load");
    alignment::set_alignment(m, load, index, memory_type(elem));
    if elem == Type::I1 {
        let mut b = Builder::before(m, op);
        let zero = b.constant(Attribute::dense_splat(loaded_type, Scalar::Int(0)));
        loaded = b.cmpi("ne", loaded, zero);
    }
    m.replace_all_uses(m.result(op, 0), loaded);
    m.erase_op(op);
}

/// The alignment of a vector access to packed `width`-bit elements at element `index`:
/// the largest power of two known to divide its byte offset, at most the buffer's.
fn set_packed_alignment(m: &mut Module, access: OpId, index: Value, width: u32) {
    let lanes_per_byte = 8 / width;
    let twos = alignment::index_twos(m, index).saturating_sub(lanes_per_byte.trailing_zeros());
    let alignment = (1u64 << twos.min(4)).min(BUFFER_ALIGNMENT);
    m.set_prop(access, "alignment", Attribute::i64(alignment as i64));
}

fn lower_transfer_write(m: &mut Module, op: OpId, cx: &Cx) {
    let (mut vector, dest) = (m.operand(op, 0), m.operand(op, 1));
    let elem = element_type(m.value_type(dest));
    let index = m.operand(op, 2);
    if let Some(width) = sub_byte_width(elem) {
        // Whole bytes, as for the read: the thread owns every element of them, so a plain
        // store (no compare-and-swap) writes them.
        let place = SubByte::place(m, op, cx.buffer(dest), Some(index), width);
        let store = llvm::build_store(m, InsertPoint::Before(op), vector, place.byte);
        set_packed_alignment(m, store, index, width);
        return;
    }
    if elem == Type::I1 {
        let wide = memory_type(m.value_type(vector));
        vector = Builder::before(m, op).cast(arith::EXTUI, vector, wide);
    }
    let address = element_address(m, op, cx.buffer(dest), Some(index), memory_type(elem));
    let store = llvm::build_store(m, InsertPoint::Before(op), vector, address);
    alignment::set_alignment(m, store, index, memory_type(elem));
}

/// `t` with `i1` elements stored as `i8` (vectors of `i1` are bit-packed in LLVM's memory).
fn memory_type(t: Type) -> Type {
    if t.element_type_or_self() == Type::I1 {
        ir::dialects::with_element_type(t, Type::I8)
    } else {
        t
    }
}

/// `gpu.thread_id x` → `nvvm.read.ptx.sreg.tid.x : i32` + `arith.index_castui`;
/// `gpu.lane_id` → `nvvm.read.ptx.sreg.laneid`.
fn lower_dimension_op(m: &mut Module, op: OpId) {
    let register = match m.name(op).as_str() {
        gpu::THREAD_ID => "tid",
        gpu::BLOCK_ID => "ctaid",
        gpu::BLOCK_DIM => "ntid",
        gpu::LANE_ID => "laneid",
        _ => "nctaid",
    };
    let name = match enum_case(m.prop(op, "dimension"), "#gpu<dim ") {
        Some(dim) => format!("nvvm.read.ptx.sreg.{register}.{dim}"),
        None if register == "laneid" => "nvvm.read.ptx.sreg.laneid".to_string(),
        None => format!("nvvm.read.ptx.sreg.{register}.x"),
    };
    let range = register_range(m, op);
    let value = nvvm::build_sreg(m, InsertPoint::Before(op), &name, range);
    let index = Builder::before(m, op).cast(arith::INDEX_CASTUI, value, Type::INDEX);
    let hint = m.value_name(m.result(op, 0)).map(str::to_owned);
    m.set_value_name(index, hint.as_deref());
    m.replace_all_uses(m.result(op, 0), index);
    m.erase_op(op);
}

/// `[lo, hi)` of a launch index: from `xla.range = [lo, hi]`, else `[0, upper_bound)` (a lane
/// is below the warp size), when it fits the 32-bit register.
fn register_range(m: &Module, op: OpId) -> Option<(i64, i64)> {
    let (lo, hi) = match m.attr(op, "xla.range").and_then(xla_range) {
        Some((lo, hi)) => (lo, hi.checked_add(1)?),
        None => match m.prop(op, "upper_bound").and_then(Attribute::as_i64) {
            Some(bound) => (0, bound),
            None if m.is(op, gpu::LANE_ID) => (0, gpu::WARP_SIZE),
            None => return None,
        },
    };
    let fits = |v: i64| (0..=i64::from(u32::MAX)).contains(&v);
    (lo < hi && fits(lo) && fits(hi)).then_some((lo, hi))
}

// ----- removing tensor values -----

/// Every tensor value becomes its buffer; then loops, branches and returns lose their tensor
/// values and the ops that only produced tensors go.
fn remove_tensor_values(m: &mut Module, f: OpId, cx: &Cx) {
    for op in m.collect_ops(f) {
        for v in tensor_values(m, op) {
            m.replace_all_uses(v, cx.buffer(v));
        }
    }
    for op in m.collect_ops_post_order(f) {
        if !m.is_alive(op) {
            continue;
        }
        match m.name(op).as_str() {
            scf::FOR => strip_for(m, op),
            scf::IF => strip_if(m, op),
            tensor::INSERT
            | vector::TRANSFER_WRITE
            | xla_gpu::ATOMIC_RMW
            | xla_gpu::SYNC_THREADS
            | xla_gpu::ALLOCATE_SHARED => m.erase_op(op),
            arith::CONSTANT if m.value_type(m.result(op, 0)).is_tensor() => m.erase_op(op),
            _ => {}
        }
    }
    strip_return(m, f);
}

/// Which results of `op` stay (the non-tensor ones).
fn kept_results(m: &Module, op: OpId) -> Vec<bool> {
    m.result_types(op).iter().map(|t| !t.is_tensor()).collect()
}

/// Drops the operands of `terminator` where `keep` is false.
fn filter_operands(m: &mut Module, terminator: OpId, keep: &[bool]) {
    let kept: Vec<Value> = m
        .operands(terminator)
        .zip(keep)
        .filter(|&(_, &k)| k)
        .map(|(v, _)| v)
        .collect();
    m.set_operands(terminator, &kept);
}

fn strip_for(m: &mut Module, op: OpId) {
    let keep = kept_results(m, op);
    if keep.iter().all(|&k| k) {
        return;
    }
    let body = m.entry_block(m.region(op, 0)).expect("a loop body");
    let terminator = m.last_op(body).expect("a terminator");
    filter_operands(m, terminator, &keep);
    for (i, _) in keep.iter().enumerate().rev().filter(|&(_, &k)| !k) {
        m.erase_block_arg(body, i + 1);
    }
    let mut operands: Vec<Value> = m.operands(op).take(3).collect();
    operands.extend(
        m.operands(op)
            .skip(3)
            .zip(&keep)
            .filter(|&(_, &k)| k)
            .map(|(v, _)| v),
    );
    recreate_with_results(m, op, &operands, &keep);
}

fn strip_if(m: &mut Module, op: OpId) {
    let keep = kept_results(m, op);
    if keep.iter().all(|&k| k) {
        return;
    }
    for &region in m.regions(op).to_vec().iter() {
        let terminator = m
            .entry_block(region)
            .and_then(|b| m.last_op(b))
            .expect("a branch with a terminator");
        filter_operands(m, terminator, &keep);
    }
    let cond = m.operand(op, 0);
    recreate_with_results(m, op, &[cond], &keep);
}

/// A function returning tensors returns nothing (its results are its argument buffers).
fn strip_return(m: &mut Module, f: OpId) {
    let returns_tensors = ir::dialects::func::function_type(m, f)
        .is_some_and(|(_, results)| results.iter().any(|t| t.is_tensor()));
    if !returns_tensors {
        return;
    }
    let returns: Vec<OpId> = m
        .collect_ops(f)
        .into_iter()
        .filter(|&op| m.is(op, func::RETURN))
        .collect();
    for ret in returns {
        m.set_operands(ret, &[]);
    }
}

// ----- signatures -----

/// Tensor arguments become pointers (annotated for kernels); tensor results go.
fn rewrite_signature(m: &mut Module, f: OpId, kernel: bool) {
    let Some((inputs, results)) = ir::dialects::func::function_type(m, f) else {
        return;
    };
    let new_inputs: Vec<Type> = inputs
        .iter()
        .map(|&t| if t.is_tensor() { Type::PTR } else { t })
        .collect();
    let new_results: Vec<Type> = results.iter().copied().filter(|t| !t.is_tensor()).collect();
    if kernel {
        annotate_kernel_args(m, f, inputs);
    }
    if new_results.len() != results.len() {
        m.remove_prop(f, "res_attrs");
    }
    if let Some(entry) = m.entry_block(m.region(f, 0)) {
        for (i, &t) in new_inputs.iter().enumerate() {
            m.set_value_type(m.block_arg(entry, i), t);
        }
    }
    let ty = Type::function(&new_inputs, &new_results);
    m.set_prop(f, "function_type", Attribute::Type(ty));
}

/// `llvm.noalias`, `llvm.align` and `llvm.dereferenceable` on every tensor argument.
fn annotate_kernel_args(m: &mut Module, f: OpId, inputs: &[Type]) {
    if !inputs.iter().any(|t| t.is_tensor()) {
        return;
    }
    let old = m.prop(f, "arg_attrs").and_then(Attribute::as_array);
    let mut lists: Vec<Vec<NamedAttr>> = (0..inputs.len())
        .map(|i| {
            old.and_then(|a| a.get(i))
                .and_then(Attribute::as_dict)
                .map(<[NamedAttr]>::to_vec)
                .unwrap_or_default()
        })
        .collect();
    for (list, &t) in lists.iter_mut().zip(inputs) {
        if !t.is_tensor() {
            continue;
        }
        let bytes = buffer_bytes(t);
        let mut attrs = vec![
            ("llvm.align", Attribute::i64(BUFFER_ALIGNMENT as i64)),
            ("llvm.noalias", Attribute::Unit),
        ];
        // LLVM takes no `dereferenceable(0)`: an empty buffer (an operand nothing reads
        // any more, see `zero-sized-hlo-elimination`) promises nothing.
        if bytes > 0 {
            attrs.insert(1, ("llvm.dereferenceable", Attribute::i64(bytes)));
        }
        for (name, value) in attrs {
            ir::attrs::set_named(list, ir::Ident::new(name), value);
        }
    }
    let lists = lists.into_iter().map(Attribute::dict).collect();
    m.set_prop(f, "arg_attrs", Attribute::Array(lists));
}

/// The size of a tensor's buffer in bytes (`i1` elements take a byte, `i2` and `i4` are
/// packed).
fn buffer_bytes(t: Type) -> i64 {
    let n = t.num_elements().unwrap_or(1);
    match sub_byte_width(element_type(t)) {
        Some(width) => (n * i64::from(width) + 7) / 8,
        None => n * i64::from(element_type(t).bit_width().unwrap_or(8).max(8) / 8),
    }
}
