//! The compiled form: functions of flat instructions over numbered registers.
//!
//! Each SSA value of a function gets a register; structured control flow (`scf.for`,
//! `scf.if`, `xla_gpu.loop`) becomes jumps within the function's instruction list, and
//! region results become register copies. A thread's whole state is then a program
//! counter, a register stack and a call stack, which makes it trivially resumable after a
//! barrier or a warp shuffle (see [`crate::exec`]).

use std::rc::Rc;

use crate::affine::Map;
use crate::carry_chain::CarryChain;
use crate::error::Site;
use crate::layout::{MemTy, TensorTy};
use crate::ops::Op2;
use crate::plain::{Eval1, Eval2, Eval3};
use crate::value::{Mem, Val};
use crate::wide::WideOp;
use hlo::narrow_float::HardwareConversion;

/// A register number, relative to the current function's frame.
pub(crate) type Reg = u32;

/// A register read that may take the value: the compiler marks a value's last use so that
/// tensors and vectors move instead of being shared (and then copied on write).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Src {
    pub(crate) reg: Reg,
    pub(crate) take: bool,
}

/// A launch-geometry register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Geometry {
    ThreadId(u8),
    BlockId(u8),
    BlockDim(u8),
    GridDim(u8),
    LaneId,
    WarpSize,
}

/// A `vector.extract`/`insert` position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pos {
    Static(i64),
    Dynamic(Reg),
}

/// The shuffle modes of `gpu.shuffle` (`xor` is PTX's `bfly`) and `nvvm.shfl.sync`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ShuffleMode {
    Bfly,
    Up,
    Down,
    Idx,
}

/// Where a shuffle's lane mask and clamp come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ShuffleBounds {
    /// `gpu.shuffle`'s width: the first `width` lanes take part, clamped as MLIR's NVVM
    /// lowering clamps them.
    Width(Reg),
    /// `nvvm.shfl.sync`'s member mask and PTX clamp operand.
    MaskClamp(Reg, Reg),
}

#[derive(Clone, Debug)]
pub(crate) struct Shuffle {
    pub(crate) mode: ShuffleMode,
    pub(crate) value: Reg,
    pub(crate) offset: Reg,
    pub(crate) bounds: ShuffleBounds,
    pub(crate) dst: Reg,
    pub(crate) valid: Option<Reg>,
}

/// A `vector.transfer_read` or `transfer_write`.
#[derive(Clone, Debug)]
pub(crate) struct Transfer {
    /// The tensor read, or the tensor written (taken).
    pub(crate) tensor: Src,
    pub(crate) ty: u32,
    pub(crate) indices: Box<[Reg]>,
    pub(crate) vector_shape: Box<[i64]>,
    /// For each vector dimension, the tensor dimension it walks (`None`: broadcast).
    pub(crate) dims: Box<[Option<usize>]>,
    pub(crate) in_bounds: Box<[bool]>,
    /// The padding (read) or the vector written (write).
    pub(crate) other: Reg,
    pub(crate) dst: Reg,
}

/// One index of `llvm.getelementptr`, already scaled to bytes where constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GepTerm {
    Bytes(i64),
    /// A signless integer register of `width` bits (sign-extended) times `stride` bytes.
    Scaled {
        reg: Reg,
        width: u32,
        stride: i64,
    },
}

#[derive(Clone, Debug)]
pub(crate) enum Inst {
    Const {
        dst: Reg,
        val: Val,
    },
    Copy {
        dst: Reg,
        src: Src,
    },
    /// Copies that read every source before writing any destination (loop yields that
    /// permute iter args).
    ParCopy(Box<[(Reg, Src)]>),
    Op1 {
        op: Eval1,
        dst: Reg,
        a: Reg,
    },
    Op2 {
        op: Eval2,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    Fma {
        op: Eval3,
        dst: Reg,
        abc: [Reg; 3],
    },
    /// Inline assembly that is a PTX carry chain ([`CarryChain`]): its outputs, of
    /// `widths` bits, in `dst` (a struct, held as a vector, when there are several).
    CarryChain {
        chain: Rc<CarryChain>,
        args: Box<[Reg]>,
        widths: Box<[u32]>,
        dst: Reg,
    },
    /// An op on `i128` values ([`crate::wide`]); casts use `a` only.
    Wide {
        op: WideOp,
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    /// A bitcast that regroups bits into lanes of another width (`<2 x i8>` to `<4 x i4>`,
    /// a vector to an integer): `from`/`to` are the lane widths and whether the side is a
    /// vector. A result lane with a bit of a poison lane is poison.
    Regroup {
        src: Reg,
        from: (u32, bool),
        to: (u32, bool),
        dst: Reg,
    },
    /// PTX's `cvt.rn.f16x2.{e4m3,e5m2}x2` ([`HardwareConversion::widening`]): the two f8
    /// codes of an `i16` to a vector of two f16, the low byte's first.
    WidenF8x2 {
        cvt: HardwareConversion,
        src: Reg,
        dst: Reg,
    },
    /// `llvm.intr.fshl` on `width`-bit integers: the high half of `a:b << (c mod width)`.
    FunnelShl {
        width: u32,
        dst: Reg,
        abc: [Reg; 3],
    },
    Select {
        dst: Reg,
        cond: Reg,
        t: Reg,
        f: Reg,
    },
    Jump(u32),
    BranchFalse {
        cond: Reg,
        to: u32,
    },
    /// Fails unless an `scf.for` step is positive.
    StepCheck {
        step: Reg,
        width: u32,
        unsigned: bool,
    },
    /// `scf.for` entry: leaves the loop (to `exit`) unless `iv < ub`.
    ForCheck {
        iv: Reg,
        ub: Reg,
        width: u32,
        unsigned: bool,
        exit: u32,
    },
    /// `scf.for` latch: `iv += step`, back to `body` while `iv < ub` (computed exactly, so
    /// no wrap-around re-enters the loop).
    ForNext {
        iv: Reg,
        step: Reg,
        ub: Reg,
        width: u32,
        unsigned: bool,
        body: u32,
    },
    /// `xla_gpu.loop` entry: induction variables to the lower bounds of the map's range
    /// variables, or out to `exit` if a range is empty.
    LoopInit {
        map: u32,
        ivs: Reg,
        exit: u32,
    },
    /// `xla_gpu.loop` point: skips to `skip` if (dims, ivs) is outside the map's domain,
    /// else writes the map's results.
    LoopPoint {
        map: u32,
        dims: Box<[Reg]>,
        ivs: Reg,
        results: Reg,
        skip: u32,
    },
    /// `xla_gpu.loop` latch: the next point (last range variable fastest), back to `point`.
    LoopNext {
        map: u32,
        ivs: Reg,
        point: u32,
    },
    Apply {
        map: u32,
        args: Box<[Reg]>,
        results: Reg,
    },
    Call {
        func: u32,
        args: Box<[Src]>,
        results: Box<[Reg]>,
        /// The callee only reads memory and is called from several places: its results
        /// depend on the arguments and the memory it reads, so a thread may reuse them for
        /// a repeated call until it writes or waits (see `exec`'s memo).
        memo: bool,
    },
    Return(Box<[Reg]>),
    Geometry {
        what: Geometry,
        width: u32,
        dst: Reg,
        /// The inclusive range the IR promises (`xla.range`, `upper_bound`, `range`).
        range: Option<(i64, i64)>,
    },
    Barrier,
    SyncThreads {
        srcs: Box<[Src]>,
        dsts: Box<[Reg]>,
    },
    Shuffle(Box<Shuffle>),
    Extract {
        tensor: Reg,
        ty: u32,
        indices: Box<[Reg]>,
        dst: Reg,
        /// `xla_gpu.predicated_extract`: the condition and the fallback.
        pred: Option<(Reg, Reg)>,
    },
    Insert {
        value: Reg,
        tensor: Src,
        ty: u32,
        indices: Box<[Reg]>,
        dst: Reg,
        /// `xla_gpu.predicated_insert`: the condition.
        pred: Option<Reg>,
    },
    /// `xla_gpu.atomic_rmw`'s write: the element is stored at once, where every thread sees
    /// it (no publication, so no write conflict with the other threads that update it).
    AtomicWrite {
        value: Reg,
        tensor: Src,
        ty: u32,
        indices: Box<[Reg]>,
        dst: Reg,
    },
    Empty {
        ty: u32,
        dst: Reg,
    },
    AllocShared {
        slot: u32,
        dst: Reg,
    },
    TransferRead(Box<Transfer>),
    TransferWrite(Box<Transfer>),
    VecExtract {
        vector: Reg,
        shape: Box<[i64]>,
        pos: Box<[Pos]>,
        dst: Reg,
    },
    /// `llvm.shufflevector`: lane `mask[i]` of `a ++ b` (`-1`: poison).
    ShuffleVector {
        a: Reg,
        b: Reg,
        mask: Box<[i64]>,
        dst: Reg,
    },
    VecInsert {
        value: Reg,
        vector: Src,
        shape: Box<[i64]>,
        pos: Box<[Pos]>,
        dst: Reg,
    },
    /// `vector.multi_reduction`: `acc` combined with every lane of `src` (of `shape`, row
    /// major) by `combine`, per position of the dimensions not `reduced`.
    MultiReduction {
        combine: Op2,
        src: Reg,
        acc: Reg,
        shape: Box<[i64]>,
        reduced: Box<[bool]>,
        dst: Reg,
    },
    /// `vector.transpose` of `src` (of `shape`): result dimension `i` is source dimension
    /// `permutation[i]`.
    Transpose {
        src: Reg,
        shape: Box<[i64]>,
        permutation: Box<[i64]>,
        dst: Reg,
    },
    Broadcast {
        src: Reg,
        /// `None` for a scalar source.
        from: Option<Box<[i64]>>,
        to: Box<[i64]>,
        dst: Reg,
    },
    AddressOf {
        mem: Mem,
        dst: Reg,
    },
    Gep {
        base: Reg,
        terms: Box<[GepTerm]>,
        dst: Reg,
    },
    /// `llvm.alloca`: `count` (an integer of `width` bits) times `elem_bytes` of the
    /// thread's own memory, uninitialized.
    Alloca {
        count: Reg,
        width: u32,
        elem_bytes: u64,
        dst: Reg,
    },
    Load {
        ptr: Reg,
        ty: MemTy,
        align: u64,
        dst: Reg,
    },
    Store {
        value: Reg,
        ptr: Reg,
        ty: MemTy,
        align: u64,
    },
    /// `llvm.atomicrmw`: the old value into `dst`; `op(old, value)` stored (`value` itself
    /// for `xchg`, `op` = `None`).
    AtomicRmwPtr {
        ptr: Reg,
        value: Reg,
        op: Option<Op2>,
        ty: MemTy,
        dst: Reg,
    },
    /// `llvm.cmpxchg`: `{old, old == cmp}` into `dst` (a struct, held as a two-lane vector),
    /// `new` stored when they are equal.
    CmpXchg {
        ptr: Reg,
        cmp: Reg,
        new: Reg,
        ty: MemTy,
        dst: Reg,
    },
}

/// A compiled function.
#[derive(Clone, Debug)]
pub(crate) struct Func {
    pub(crate) name: String,
    pub(crate) num_regs: u32,
    /// Parameters are registers `0..ranges.len()`; each may carry the inclusive range its
    /// `xla.range` argument attribute promises.
    pub(crate) param_ranges: Box<[Option<(i64, i64)>]>,
    pub(crate) code: Vec<Inst>,
    /// The site (op) of each instruction.
    pub(crate) sites: Vec<u32>,
}

/// What the kernel's entry function takes.
#[derive(Clone, Debug)]
pub(crate) enum Param {
    Tensor(u32),
    /// A pointer, with the bytes its `llvm.dereferenceable` attribute promises.
    Ptr(Option<u64>),
}

/// A shared-memory buffer every block gets.
#[derive(Clone, Debug)]
pub(crate) struct SharedDef {
    pub(crate) name: String,
    pub(crate) bytes: usize,
    pub(crate) elem_bits: usize,
}

/// A module global in global memory.
#[derive(Clone, Debug)]
pub(crate) struct GlobalDef {
    pub(crate) name: String,
    /// The initial contents (`None`: uninitialized).
    pub(crate) init: Option<Vec<u8>>,
    pub(crate) bytes: usize,
    pub(crate) constant: bool,
}

/// A compiled kernel.
#[derive(Clone, Debug)]
pub(crate) struct Program {
    pub(crate) funcs: Vec<Func>,
    pub(crate) entry: u32,
    pub(crate) params: Vec<Param>,
    /// For each result of the entry function, the parameter it must be written into.
    pub(crate) outputs: Vec<usize>,
    pub(crate) sites: Vec<Site>,
    pub(crate) tensors: Vec<TensorTy>,
    pub(crate) maps: Vec<Map>,
    pub(crate) shared: Vec<SharedDef>,
    /// Module globals; their storages follow the parameters'.
    pub(crate) globals: Vec<GlobalDef>,
}
