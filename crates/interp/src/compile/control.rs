//! Control flow, calls and GPU synchronization: `scf.for`, `scf.if`, `scf.while`,
//! `xla_gpu.loop`, calls
//! (`func.call`, `xla_gpu.pure_call`, `llvm.call`), `xla_gpu.shuffle_reduce`, shuffles,
//! barriers and launch-geometry reads.

use super::{Exit, FnCx, range_attr};
use crate::error::{Result, fail};
use crate::inst::{Geometry, Inst, Reg, Shuffle, ShuffleBounds, ShuffleMode, Src};
use crate::math::{Libdevice, libdevice};
use crate::ops::{FastMath, Op1, Op2};
use crate::scalar::ScalarTy;
use crate::value::Val;
use indexing::IndexingMap;
use ir::dialects::gpu;
use ir::dialects::llvm;
use ir::dialects::{enum_case, xla_gpu};
use ir::{Attribute, BlockId, FloatKind, OpId, Value};

/// The most dims or range variables an `xla_gpu.loop` or `apply_indexing` may have.
pub(crate) const MAX_VARS: usize = 16;

impl<'m> FnCx<'_, 'm> {
    /// The only block of region `i` of `op`.
    fn single_block(&mut self, op: OpId, i: usize) -> Result<Option<BlockId>> {
        let m = self.m;
        let blocks = m.region_blocks(m.region(op, i));
        match blocks {
            [] => Ok(None),
            [b] => Ok(Some(*b)),
            _ => {
                let e = fail!(Unsupported, "regions with several blocks");
                Err(self.err(op, e))
            }
        }
    }

    pub(super) fn body_block(&mut self, op: OpId) -> Result<BlockId> {
        match self.single_block(op, 0)? {
            Some(b) => Ok(b),
            None => {
                let e = fail!(InvalidIr, "an empty loop body");
                Err(self.err(op, e))
            }
        }
    }

    /// Copies `results` (consecutive registers) out of `from`, which die here.
    fn copy_out(&mut self, op: OpId, from: &[Reg], results: Reg) {
        for (k, &reg) in from.iter().enumerate() {
            let src = Src { reg, take: true };
            self.emit(
                op,
                Inst::Copy {
                    dst: results + k as u32,
                    src,
                },
            );
        }
    }

    pub(super) fn int_width(&mut self, op: OpId, v: Value) -> Result<u32> {
        match self.scalar(op, v)? {
            ScalarTy::Int(w) => Ok(u32::from(w)),
            ScalarTy::Index => Ok(64),
            ScalarTy::Float(_) => {
                let e = fail!(InvalidIr, "expected an integer");
                Err(self.err(op, e))
            }
        }
    }

    pub(super) fn scf_for(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let body = self.body_block(op)?;
        let args: Vec<Value> = m.block_args(body).to_vec();
        let width = self.int_width(op, args[0])?;
        let unsigned = m.prop(op, "unsignedCmp").is_some();
        let (lb, ub, step) = (
            self.operand(op, 0),
            self.operand(op, 1),
            self.operand(op, 2),
        );
        let iv = self.defs(&args);
        let iters: Vec<Reg> = (1..args.len() as u32).map(|i| iv + i).collect();
        let results = self.results(op);
        self.emit(
            op,
            Inst::StepCheck {
                step,
                width,
                unsigned,
            },
        );
        let lb = Src {
            reg: lb,
            take: false,
        };
        self.emit(op, Inst::Copy { dst: iv, src: lb });
        for (k, &dst) in iters.iter().enumerate() {
            let src = self.src(op, 3 + k);
            self.emit(op, Inst::Copy { dst, src });
        }
        let check = self.emit(
            op,
            Inst::ForCheck {
                iv,
                ub,
                width,
                unsigned,
                exit: 0,
            },
        );
        let body_pc = self.pc();
        self.region_body(body, Exit::Yield(&iters))?;
        self.emit(
            op,
            Inst::ForNext {
                iv,
                step,
                ub,
                width,
                unsigned,
                body: body_pc,
            },
        );
        let exit = self.pc();
        if let Inst::ForCheck { exit: e, .. } = &mut self.code[check] {
            *e = exit;
        }
        self.copy_out(op, &iters, results);
        Ok(())
    }

    pub(super) fn scf_if(&mut self, op: OpId) -> Result<()> {
        let n = self.m.num_results(op) as u32;
        let first = self.results(op);
        let targets: Vec<Reg> = (first..first + n).collect();
        let cond = self.operand(op, 0);
        let branch = self.emit(op, Inst::BranchFalse { cond, to: 0 });
        if let Some(then) = self.single_block(op, 0)? {
            self.region_body(then, Exit::Yield(&targets))?;
        }
        let else_block = self.single_block(op, 1)?;
        let jump = else_block.map(|_| self.emit(op, Inst::Jump(0)));
        let else_pc = self.pc();
        if let Inst::BranchFalse { to, .. } = &mut self.code[branch] {
            *to = else_pc;
        }
        if let (Some(block), Some(jump)) = (else_block, jump) {
            self.region_body(block, Exit::Yield(&targets))?;
            let end = self.pc();
            self.code[jump] = Inst::Jump(end);
        }
        Ok(())
    }

    /// `scf.while`: the "before" region computes the condition and the values it forwards
    /// to the "after" region (or, when false, to the results); the "after" region yields the
    /// next iteration's "before" arguments.
    pub(super) fn scf_while(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let (Some(before), Some(after)) = (self.single_block(op, 0)?, self.single_block(op, 1)?)
        else {
            let e = fail!(InvalidIr, "a while loop without two regions");
            return Err(self.err(op, e));
        };
        let before_first = self.defs(m.block_args(before));
        let before_regs: Vec<Reg> =
            (before_first..before_first + m.block_args(before).len() as u32).collect();
        let after_first = self.defs(m.block_args(after));
        let after_regs: Vec<Reg> =
            (after_first..after_first + m.block_args(after).len() as u32).collect();
        for (k, &dst) in before_regs.iter().enumerate() {
            let src = self.src(op, k);
            self.emit(op, Inst::Copy { dst, src });
        }
        let top = self.pc();
        let cond = self.temp();
        let exit = Exit::Condition {
            cond,
            targets: &after_regs,
        };
        self.region_body(before, exit)?;
        let branch = self.emit(op, Inst::BranchFalse { cond, to: 0 });
        self.region_body(after, Exit::Yield(&before_regs))?;
        self.emit(op, Inst::Jump(top));
        let end = self.pc();
        if let Inst::BranchFalse { to, .. } = &mut self.code[branch] {
            *to = end;
        }
        let results = self.results(op);
        self.copy_out(op, &after_regs, results);
        Ok(())
    }

    /// The indexing map of `op`, an `xla_gpu` op that must have one (`what` names it in the
    /// error).
    fn indexing_map(&mut self, op: OpId, what: &str) -> Result<&'m IndexingMap> {
        match xla_gpu::indexing_map(self.m, op) {
            Some(map) => Ok(map),
            None => {
                let e = fail!(InvalidIr, "{what} without an indexing map");
                Err(self.err(op, e))
            }
        }
    }

    pub(super) fn xla_loop(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let map = self.indexing_map(op, "a loop")?;
        let (num_dims, num_inits) = xla_gpu::loop_segments(m, op)
            .map_err(|msg| fail!(InvalidIr, "{msg}"))
            .map_err(|e| self.err(op, e))?;
        if num_dims > MAX_VARS || map.range_vars.len() > MAX_VARS || !map.rt_vars.is_empty() {
            let e = fail!(Unsupported, "loops over more than {MAX_VARS} variables");
            return Err(self.err(op, e));
        }
        let map_id = self.b.map(map).map_err(|e| self.b.error_at(op, e))?;
        let body = self.body_block(op)?;
        let args: Vec<Value> = m.block_args(body).to_vec();
        let ivs = self.defs(&args);
        let map_results = ivs + map.range_vars.len() as u32;
        let iter0 = map_results + map.results.len() as u32;
        let iters: Vec<Reg> = (iter0..iter0 + num_inits as u32).collect();
        let results = self.results(op);
        let dims = self.operands(op, 0..num_dims);
        for (k, &dst) in iters.iter().enumerate() {
            let src = self.src(op, num_dims + k);
            self.emit(op, Inst::Copy { dst, src });
        }
        let init = self.emit(
            op,
            Inst::LoopInit {
                map: map_id,
                ivs,
                exit: 0,
            },
        );
        let point_pc = self.pc();
        let point = self.emit(
            op,
            Inst::LoopPoint {
                map: map_id,
                dims,
                ivs,
                results: map_results,
                skip: 0,
            },
        );
        self.region_body(body, Exit::Yield(&iters))?;
        let next = self.emit(
            op,
            Inst::LoopNext {
                map: map_id,
                ivs,
                point: point_pc,
            },
        ) as u32;
        let exit = self.pc();
        if let Inst::LoopInit { exit: e, .. } = &mut self.code[init] {
            *e = exit;
        }
        if let Inst::LoopPoint { skip, .. } = &mut self.code[point] {
            *skip = next;
        }
        self.copy_out(op, &iters, results);
        Ok(())
    }

    pub(super) fn apply_indexing(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let map = self.indexing_map(op, "apply_indexing")?;
        if map.dims.len() + map.num_symbols() > MAX_VARS {
            let e = fail!(Unsupported, "maps of more than {MAX_VARS} variables");
            return Err(self.err(op, e));
        }
        let map = self.b.map(map).map_err(|e| self.b.error_at(op, e))?;
        let args = self.operands(op, 0..m.num_operands(op));
        let results = self.results(op);
        self.emit(op, Inst::Apply { map, args, results });
        Ok(())
    }

    /// The function a symbol attribute of `op` names.
    fn callee(&mut self, op: OpId, attr: &str) -> Result<OpId> {
        let name = self.m.prop(op, attr).and_then(Attribute::as_symbol);
        match name.and_then(|n| self.b.symbols.lookup(n)) {
            Some(f) => Ok(f),
            None => {
                let e = fail!(InvalidIr, "unknown callee {}", name.unwrap_or("?"));
                Err(self.err(op, e))
            }
        }
    }

    pub(super) fn call(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let callee = self.callee(op, "callee")?;
        if m.is(op, llvm::CALL) {
            if m.prop(op, "var_callee_type").is_some() {
                let e = fail!(Unsupported, "variadic calls");
                return Err(self.err(op, e));
            }
            let declaration = m.regions(callee).first().and_then(|&r| m.entry_block(r));
            if declaration.is_none() {
                return self.libdevice_call(op, callee);
            }
        }
        let func = self.b.func_id(callee).map_err(|e| self.b.error_at(op, e))?;
        let args = (0..m.num_operands(op)).map(|i| self.src(op, i)).collect();
        let first = self.results(op);
        let results = (first..first + m.num_results(op) as u32).collect();
        // Whether the thread may answer it from its memo is decided once every function
        // is compiled (`memo::decide`).
        self.emit(
            op,
            Inst::Call {
                func,
                args,
                results,
                memo: true,
            },
        );
        Ok(())
    }

    /// A call to a libdevice declaration (`@__nv_tanhf`) becomes the math op it names.
    fn libdevice_call(&mut self, op: OpId, callee: OpId) -> Result<()> {
        let m = self.m;
        let name = m.symbol_name(callee).unwrap_or("?").to_owned();
        let unsupported = |cx: &mut Self| {
            let e = fail!(Unsupported, "calls to the external function @{name}");
            Err(cx.err(op, e))
        };
        let Some(f) = libdevice(&name) else {
            return unsupported(self);
        };
        let types: Vec<_> = m
            .operand_types(op)
            .into_iter()
            .chain(m.result_types(op))
            .collect();
        let (arity, is_f32) = match f {
            Libdevice::Unary(_, f32) => (1, f32),
            Libdevice::Binary(_, f32) => (2, f32),
        };
        let kind = if is_f32 {
            FloatKind::F32
        } else {
            FloatKind::F64
        };
        let expected = ir::Type::float(kind);
        if types.len() != arity + 1 || types.iter().any(|&t| t != expected) {
            return unsupported(self);
        }
        let dst = self.results(op);
        let a = self.operand(op, 0);
        let fm = FastMath::default();
        let inst = match f {
            Libdevice::Unary(f, _) => Inst::Op1 {
                op: Op1::Math(f, kind, fm).into(),
                dst,
                a,
            },
            Libdevice::Binary(f, _) => Inst::Op2 {
                op: Op2::Math(f, kind, fm).into(),
                dst,
                a,
                b: self.operand(op, 1),
            },
        };
        self.emit(op, inst);
        Ok(())
    }

    /// `xla_gpu.shuffle_reduce`: for distances max, max/2, .., 1, every value is exchanged
    /// with lane `l ^ distance` and combined with it (its own first), so every lane ends with
    /// its group's reduction (the op's semantics, `ir::dialects::xla_gpu`; lane 0 gets what
    /// XLA's `down` shuffles give it).
    pub(super) fn shuffle_reduce(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let combiner = self.callee(op, "combiner")?;
        let func = self
            .b
            .func_id(combiner)
            .map_err(|e| self.b.error_at(op, e))?;
        let max = m
            .prop(op, "max_distance")
            .and_then(Attribute::as_i64)
            .unwrap_or(0);
        let n = m.num_operands(op) as u32;
        let values = self.results(op);
        for k in 0..n {
            let src = self.src(op, k as usize);
            self.emit(
                op,
                Inst::Copy {
                    dst: values + k,
                    src,
                },
            );
        }
        let (offset, width) = (self.temp(), self.temp());
        self.emit(
            op,
            Inst::Const {
                dst: width,
                val: Val::S(32),
            },
        );
        let shuffled: Vec<Reg> = (0..n).map(|_| self.temp()).collect();
        let mut distance = max;
        while distance >= 1 {
            let val = Val::S(distance as u64);
            self.emit(op, Inst::Const { dst: offset, val });
            for k in 0..n {
                let shuffle = Shuffle {
                    mode: ShuffleMode::Bfly,
                    value: values + k,
                    offset,
                    bounds: ShuffleBounds::Width(width),
                    dst: shuffled[k as usize],
                    valid: None,
                };
                self.emit(op, Inst::Shuffle(Box::new(shuffle)));
            }
            let own = (0..n).map(|k| Src {
                reg: values + k,
                take: false,
            });
            let other = shuffled.iter().map(|&reg| Src { reg, take: true });
            let args = own.chain(other).collect();
            let results = (values..values + n).collect();
            let call = Inst::Call {
                func,
                args,
                results,
                // Called with new values at every step: a memo would only cost.
                memo: false,
            };
            self.emit(op, call);
            distance /= 2;
        }
        Ok(())
    }

    pub(super) fn sync_threads(&mut self, op: OpId) {
        let n = self.m.num_operands(op);
        let srcs = (0..n).map(|i| self.src(op, i)).collect();
        let first = self.results(op);
        let dsts = (first..first + n as u32).collect();
        self.emit(op, Inst::SyncThreads { srcs, dsts });
    }

    /// `gpu.thread_id  x` and friends, and `gpu.lane_id`.
    pub(super) fn gpu_geometry(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let name = m.name(op);
        let what = if name.as_str() == gpu::LANE_ID {
            Geometry::LaneId
        } else {
            let axis = match enum_case(m.prop(op, "dimension"), "#gpu<dim ") {
                Some("x") => 0,
                Some("y") => 1,
                Some("z") => 2,
                _ => {
                    let e = fail!(InvalidIr, "a dimension op without a dimension");
                    return Err(self.err(op, e));
                }
            };
            match name.as_str() {
                gpu::THREAD_ID => Geometry::ThreadId(axis),
                gpu::BLOCK_ID => Geometry::BlockId(axis),
                gpu::BLOCK_DIM => Geometry::BlockDim(axis),
                _ => Geometry::GridDim(axis),
            }
        };
        let mut range = range_attr(m.attr(op, "xla.range"));
        if let Some(ub) = m.prop(op, "upper_bound").and_then(Attribute::as_i64) {
            let (lo, hi) = range.unwrap_or((i64::MIN, i64::MAX));
            range = Some((lo, hi.min(ub - 1)));
        }
        let dst = self.results(op);
        self.emit(
            op,
            Inst::Geometry {
                what,
                width: 64,
                dst,
                range,
            },
        );
        Ok(())
    }

    /// `nvvm.read.ptx.sreg.tid.x` and friends (i32 results).
    pub(super) fn nvvm_sreg(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let name = m.name(op);
        let reg = name.as_str().trim_start_matches("nvvm.read.ptx.sreg.");
        let axis = |s: &str| match s {
            "x" => 0,
            "y" => 1,
            _ => 2,
        };
        let what = match reg.split_once('.') {
            Some(("tid", a)) => Geometry::ThreadId(axis(a)),
            Some(("ntid", a)) => Geometry::BlockDim(axis(a)),
            Some(("ctaid", a)) => Geometry::BlockId(axis(a)),
            Some(("nctaid", a)) => Geometry::GridDim(axis(a)),
            None if reg == "laneid" => Geometry::LaneId,
            None if reg == "warpsize" => Geometry::WarpSize,
            _ => return Err(self.unsupported(op)),
        };
        let range = match m.prop(op, "range") {
            Some(Attribute::Opaque(text)) => constant_range(text),
            _ => None,
        };
        let dst = self.results(op);
        self.emit(
            op,
            Inst::Geometry {
                what,
                width: 32,
                dst,
                range,
            },
        );
        Ok(())
    }

    pub(super) fn gpu_shuffle(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let mode = enum_case(m.prop(op, "mode"), "#gpu<shuffle_mode ");
        let mode = self.shuffle_mode(op, mode, "xor")?;
        let first = self.results(op);
        let shuffle = Shuffle {
            mode,
            value: self.operand(op, 0),
            offset: self.operand(op, 1),
            bounds: ShuffleBounds::Width(self.operand(op, 2)),
            dst: first,
            valid: Some(first + 1),
        };
        self.emit(op, Inst::Shuffle(Box::new(shuffle)));
        Ok(())
    }

    /// The shuffle mode `name` spells (the butterfly spelt `butterfly`: `xor` in the GPU
    /// dialect, `bfly` in NVVM's); any other name is unsupported.
    pub(super) fn shuffle_mode(
        &mut self,
        op: OpId,
        name: Option<&str>,
        butterfly: &str,
    ) -> Result<ShuffleMode> {
        Ok(match name {
            Some(name) if name == butterfly => ShuffleMode::Bfly,
            Some("up") => ShuffleMode::Up,
            Some("down") => ShuffleMode::Down,
            Some("idx") => ShuffleMode::Idx,
            _ => return Err(self.unsupported(op)),
        })
    }

    pub(super) fn nvvm_shuffle(&mut self, op: OpId) -> Result<()> {
        let m = self.m;
        let mode = enum_case(m.prop(op, "kind"), "#nvvm<shfl_kind ");
        let mode = self.shuffle_mode(op, mode, "bfly")?;
        if m.prop(op, "return_value_and_is_valid").is_some() {
            let e = fail!(
                Unsupported,
                "shuffles returning a struct with the valid flag"
            );
            return Err(self.err(op, e));
        }
        self.shuffle_sync(op, mode)
    }

    /// A shuffle whose operands are PTX's `shfl.sync` ones: member mask, value, offset,
    /// clamp (`nvvm.shfl.sync` and the `llvm.nvvm.shfl.sync.*` intrinsics).
    pub(super) fn shuffle_sync(&mut self, op: OpId, mode: ShuffleMode) -> Result<()> {
        let shuffle = Shuffle {
            mode,
            value: self.operand(op, 1),
            offset: self.operand(op, 2),
            bounds: ShuffleBounds::MaskClamp(self.operand(op, 0), self.operand(op, 3)),
            dst: self.results(op),
            valid: None,
        };
        self.emit(op, Inst::Shuffle(Box::new(shuffle)));
        Ok(())
    }
}

/// `#llvm.constant_range<i32, lo, hi>` (values in `[lo, hi)`) as an inclusive range;
/// wrapped ranges (`lo >= hi`) promise nothing checkable here.
fn constant_range(text: &str) -> Option<(i64, i64)> {
    let body = text
        .strip_prefix("#llvm.constant_range<")?
        .strip_suffix('>')?;
    let mut parts = body.split(',').map(str::trim);
    let (_, lo, hi) = (parts.next()?, parts.next()?, parts.next()?);
    let (lo, hi): (i64, i64) = (lo.parse().ok()?, hi.parse().ok()?);
    (lo < hi).then_some((lo, hi - 1))
}
