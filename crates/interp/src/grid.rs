//! The simulated grid: every block runs all its threads with GPU synchronization semantics.
//!
//! Blocks run one after another (their shared memory reset in between). Within a block
//! each ready thread runs until it exits or waits; then:
//!
//! * **Warp shuffles.** When every live lane of a warp (32 consecutive threads) waits at a
//!   shuffle, and it is the same shuffle, the values are exchanged by PTX's `shfl.sync`
//!   rules and the lanes resume. A lane outside the shuffle's member mask, a member that
//!   exited, or lanes at different shuffles are warp divergence.
//! * **Barriers.** When every live thread waits at a barrier, and it is the same barrier,
//!   they resume; at `xla_gpu.sync_threads` each thread's writes to the synchronized
//!   tensors are first published to the shared (or global) buffer, so the threads then see
//!   each other's writes. A thread exiting while others wait, or threads at different
//!   barriers, is barrier divergence.
//! * **Exit.** At tensor level the entry returns its output tensors; the thread's writes to
//!   them are published to the output buffers. Writes of different values by two threads
//!   to one element (in one barrier phase, for shared memory) are a write conflict.

use crate::error::{Error, Result, ThreadId, fail};
use crate::exec::{Env, Launch, Stop, Thread, poison};
use crate::inst::{Inst, Param, Program, ShuffleBounds, ShuffleMode};
use crate::layout::TensorTy;
use crate::memory::Memory;
use crate::scalar::{ScalarTy, sext, to_f64};
use crate::value::{Base, Mem, Ptr, Tensor, Val};
use std::rc::Rc;

const WARP: usize = 32;

/// The most threads a CUDA block may have.
const MAX_BLOCK: u64 = 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Ready,
    Barrier,
    Shuffle,
    Exited,
}

/// Runs every block of the grid; returns the number of instructions executed.
pub(crate) fn run(
    prog: &Program,
    mem: &mut Memory,
    launch: Launch,
    step_limit: u64,
) -> Result<u64> {
    if launch
        .blocks
        .checked_mul(launch.threads)
        .is_none_or(|n| n > u64::from(u32::MAX))
    {
        return Err(fail!(Unsupported, "grids of more than 2^32 threads"));
    }
    if launch.threads > MAX_BLOCK {
        return Err(fail!(
            InvalidArgument,
            "blocks of {} threads (a GPU block has at most {MAX_BLOCK})",
            launch.threads
        ));
    }
    let n = launch.threads as usize;
    let mut threads: Vec<Thread> = (0..n).map(|_| Thread::new()).collect();
    let mut status = vec![Status::Ready; n];
    let mut env = Env {
        prog,
        mem,
        launch,
        ops: 0,
        step_limit,
    };
    for block in 0..launch.blocks {
        for s in &mut env.mem.shared {
            s.reset();
        }
        status.fill(Status::Ready);
        run_block(&mut env, block, &mut threads, &mut status)?;
    }
    Ok(env.ops)
}

/// The entry's arguments: a view of (or a pointer to) each parameter's buffer.
fn entry_args(prog: &Program) -> impl Iterator<Item = Val> + '_ {
    prog.params.iter().enumerate().map(|(i, p)| {
        let mem = Mem::Global(i as u32);
        match p {
            Param::Tensor(_) => Val::Tensor(Rc::new(Tensor::view(mem))),
            Param::Ptr(_) => Val::Ptr(Ptr { mem, offset: 0 }),
        }
    })
}

/// Runs one block. Each thread starts just before it first runs, and a thread that exits
/// hands its register file to the next one: a barrier-free kernel then runs every thread
/// of the block in the same, cache-warm registers (starting all threads up front touched
/// `threads x registers` values, far more than the L1 cache holds, before the first ran).
fn run_block(
    env: &mut Env<'_>,
    block: u64,
    threads: &mut [Thread],
    status: &mut [Status],
) -> Result<()> {
    let prog = env.prog;
    let mut phase = 0u32;
    let mut ready: Vec<usize> = (0..threads.len()).collect();
    let mut first_pass = true;
    loop {
        for &i in &ready {
            if first_pass {
                let id = ThreadId {
                    block,
                    thread: i as u64,
                };
                threads[i].start(prog, id, entry_args(prog));
            }
            status[i] = match threads[i].run(env)? {
                Stop::Exit(vals) => {
                    publish_results(env, &threads[i], vals)?;
                    if first_pass {
                        hand_on_registers(threads, status, i);
                    }
                    Status::Exited
                }
                Stop::Barrier => Status::Barrier,
                Stop::Shuffle => Status::Shuffle,
            };
        }
        first_pass = false;
        ready.clear();
        for w in (0..threads.len()).step_by(WARP) {
            let end = (w + WARP).min(threads.len());
            let lanes = &status[w..end];
            let waiting = lanes.contains(&Status::Shuffle);
            if waiting
                && lanes
                    .iter()
                    .all(|s| matches!(s, Status::Shuffle | Status::Exited))
            {
                shuffle(prog, &mut threads[w..end], lanes)?;
                for (l, s) in status[w..end].iter_mut().enumerate() {
                    if *s == Status::Shuffle {
                        *s = Status::Ready;
                        ready.push(w + l);
                    }
                }
            }
        }
        if !ready.is_empty() {
            continue;
        }
        let at_barrier: Vec<usize> = (0..threads.len())
            .filter(|&i| status[i] == Status::Barrier)
            .collect();
        let Some(&first) = at_barrier.first() else {
            return Ok(()); // every thread exited
        };
        let divergence = |t: &Thread, message: String| -> Error {
            Error::new(crate::error::ErrorKind::BarrierDivergence, message)
                .at(&prog.sites[threads[first].stop_site(prog) as usize])
                .in_thread(t.id)
        };
        if let Some(other) = (0..threads.len()).find(|&i| status[i] != Status::Barrier) {
            let t = &threads[other];
            let message = if status[other] == Status::Exited {
                format!(
                    "thread {} waits at this barrier, but thread {other} has exited",
                    threads[first].id.thread
                )
            } else {
                let s = &prog.sites[t.stop_site(prog) as usize];
                format!(
                    "thread {} waits at this barrier while thread {} waits at a shuffle ('{}' at {}:{})",
                    threads[first].id.thread, t.id.thread, s.op, s.loc.line, s.loc.col
                )
            };
            return Err(divergence(&threads[first], message));
        }
        let here = (threads[first].func, threads[first].pc);
        if let Some(&other) = at_barrier
            .iter()
            .find(|&&i| (threads[i].func, threads[i].pc) != here)
        {
            let t = &threads[other];
            let s = &prog.sites[t.stop_site(prog) as usize];
            let message = format!(
                "thread {} waits at this barrier while thread {} waits at another ('{}' at {}:{})",
                threads[first].id.thread, t.id.thread, s.op, s.loc.line, s.loc.col
            );
            return Err(divergence(&threads[first], message));
        }
        for &i in &at_barrier {
            sync(env, &mut threads[i], phase)?;
            status[i] = Status::Ready;
        }
        phase += 1;
        ready = at_barrier;
    }
}

/// Moves the registers of thread `i`, which has just exited in its block's first pass,
/// to the next thread to start: thread `i + 1`, or after the last thread, thread 0's slot
/// for the next block (when thread 0 has exited too). An exited thread's slot is only
/// asked for its index afterwards.
fn hand_on_registers(threads: &mut [Thread], status: &[Status], i: usize) {
    if i + 1 < threads.len() {
        threads.swap(i, i + 1);
    } else if i > 0 && status[0] == Status::Exited {
        threads.swap(i, 0);
    }
}

/// A thread's linear id in the grid.
fn linear(id: ThreadId, launch: Launch) -> u32 {
    (id.block * launch.threads + id.thread) as u32
}

/// A bit pattern as a value of `elem`, for messages.
fn show(elem: ScalarTy, bits: u64) -> String {
    match elem {
        ScalarTy::Float(k) => format!("{}", to_f64(k, bits)),
        // An `i128` word (its tensors are held as words).
        ScalarTy::Int(128) => format!("{bits:#x}"),
        ScalarTy::Int(w) => format!("{}", sext(bits, u32::from(w))),
        ScalarTy::Index => format!("{}", bits as i64),
    }
}

/// Publishes `t`'s writes into its buffer (as `thread`, in `phase` for shared memory).
fn publish(
    env: &mut Env<'_>,
    t: &Tensor,
    thread: ThreadId,
    phase: u32,
    tt: Option<&TensorTy>,
) -> Result<()> {
    let Base::Mem(mem) = t.base else {
        return Ok(());
    };
    let me = linear(thread, env.launch);
    let phase = matches!(mem, Mem::Shared(_)).then_some(phase);
    let storage = env.mem.get_mut(mem);
    for &(elem, bits) in t.overlay.entries() {
        if let Err(c) = storage.publish(elem, bits, me, phase)? {
            let other = match c.other_thread {
                Some(o) => {
                    let t = env.launch.threads;
                    format!("thread {} of block {}", u64::from(o) % t, u64::from(o) / t)
                }
                None => "several other threads".into(),
            };
            let (mine, theirs) = match tt {
                Some(tt) => (show(tt.elem, bits), show(tt.elem, c.other_bits)),
                None => (format!("{bits:#x}"), format!("{:#x}", c.other_bits)),
            };
            return Err(fail!(
                WriteConflict,
                "this thread writes {mine} to element {elem} of {}, which {other} wrote as {theirs}",
                storage.name
            ));
        }
    }
    Ok(())
}

/// Publishes a tensor-level kernel's results into the output parameters.
fn publish_results(env: &mut Env<'_>, thread: &Thread, vals: Vec<Val>) -> Result<()> {
    let prog = env.prog;
    let site = &prog.sites[thread.stop_site(prog) as usize];
    for (k, v) in vals.iter().enumerate() {
        let p = prog.outputs[k];
        let tt = match &prog.params[p] {
            Param::Tensor(ty) => Some(&prog.tensors[*ty as usize]),
            Param::Ptr(_) => None,
        };
        match v {
            Val::Tensor(t) if matches!(t.base, Base::Mem(Mem::Global(g)) if g as usize == p) => {
                publish(env, t, thread.id, 0, tt).map_err(|e| e.at(site).in_thread(thread.id))?;
            }
            _ => {
                return Err(fail!(
                    Unsupported,
                    "result #{k} is not parameter #{p} updated in place (results must be the output parameters with this thread's writes)"
                )
                .at(site)
                .in_thread(thread.id));
            }
        }
    }
    Ok(())
}

/// Completes a barrier for one thread: for `xla_gpu.sync_threads`, publishes its writes to
/// the synchronized tensors and gives it fresh views of them.
fn sync(env: &mut Env<'_>, thread: &mut Thread, phase: u32) -> Result<()> {
    let prog = env.prog;
    let Inst::SyncThreads { srcs, dsts } = thread.stop_inst(prog) else {
        return Ok(());
    };
    let site = &prog.sites[thread.stop_site(prog) as usize];
    for (&src, &dst) in srcs.iter().zip(dsts.iter()) {
        let Val::Tensor(t) = thread.take(src) else {
            return Err(fail!(InvalidIr, "sync_threads of a non-tensor").at(site));
        };
        publish(env, &t, thread.id, phase, None).map_err(|e| e.at(site).in_thread(thread.id))?;
        let synced = match &t.base {
            Base::Mem(mem) => Rc::new(Tensor::view(*mem)),
            Base::Local(_) => t,
        };
        thread.set(dst, Val::Tensor(synced));
    }
    Ok(())
}

/// PTX `shfl.sync`: the source lane for `lane` and whether it is valid, given the offset
/// `b` and the clamp operand `c` (segment mask in bits 8-12, clamp in bits 0-4).
fn source_lane(mode: ShuffleMode, lane: i64, b: u32, c: u32) -> (i64, bool) {
    let cval = i64::from(c & 0x1f);
    let segmask = i64::from((c >> 8) & 0x1f);
    let max_lane = (lane & segmask) | (cval & !segmask);
    let min_lane = lane & segmask;
    let b = i64::from(b);
    let (j, valid) = match mode {
        ShuffleMode::Up => (lane - b, lane - b >= max_lane),
        ShuffleMode::Down => (lane + b, lane + b <= max_lane),
        ShuffleMode::Bfly => (lane ^ b, (lane ^ b) <= max_lane),
        ShuffleMode::Idx => {
            let j = min_lane | (b & 0x1f & !segmask);
            (j, j <= max_lane)
        }
    };
    if valid { (j, true) } else { (lane, false) }
}

/// Exchanges the values of a warp whose live lanes all wait at a shuffle.
fn shuffle(prog: &Program, lanes: &mut [Thread], status: &[Status]) -> Result<()> {
    let live: Vec<usize> = (0..lanes.len())
        .filter(|&l| status[l] == Status::Shuffle)
        .collect();
    let first = live[0];
    let here = (lanes[first].func, lanes[first].pc);
    let error = |t: &Thread, kind: crate::error::ErrorKind, message: String| -> Error {
        Error::new(kind, message)
            .at(&prog.sites[t.stop_site(prog) as usize])
            .in_thread(t.id)
    };
    if let Some(&other) = live.iter().find(|&&l| (lanes[l].func, lanes[l].pc) != here) {
        let s = &prog.sites[lanes[other].stop_site(prog) as usize];
        let message = format!(
            "lane {first} waits at this shuffle while lane {other} waits at another ('{}' at {}:{})",
            s.op, s.loc.line, s.loc.col
        );
        return Err(error(
            &lanes[first],
            crate::error::ErrorKind::WarpDivergence,
            message,
        ));
    }
    let Inst::Shuffle(sh) = lanes[first].stop_inst(prog) else {
        unreachable!("threads stop for shuffles at shuffles");
    };
    let values: Vec<Option<Val>> = (0..lanes.len())
        .map(|l| (status[l] == Status::Shuffle).then(|| lanes[l].get(sh.value).clone()))
        .collect();
    let mut results = Vec::with_capacity(live.len());
    for &l in &live {
        let t = &lanes[l];
        let scalar = |r| match t.get(r) {
            Val::S(x) => Ok(*x as u32),
            Val::Poison(s) => Err(poison(prog, *s, "used by a shuffle")
                .at(&prog.sites[t.stop_site(prog) as usize])
                .in_thread(t.id)),
            _ => Err(error(
                t,
                crate::error::ErrorKind::InvalidIr,
                "expected a scalar".into(),
            )),
        };
        let (mask, clamp) = match sh.bounds {
            ShuffleBounds::Width(w) => {
                let width = scalar(w)?;
                if !(1..=32).contains(&width) {
                    let message = format!("the shuffle width {width} is not in [1, 32]");
                    return Err(error(
                        t,
                        crate::error::ErrorKind::UndefinedBehavior,
                        message,
                    ));
                }
                let clamp = if sh.mode == ShuffleMode::Up {
                    32 - width
                } else {
                    width - 1
                };
                (u32::MAX >> (32 - width), clamp)
            }
            ShuffleBounds::MaskClamp(m, c) => (scalar(m)?, scalar(c)?),
        };
        if mask >> l & 1 == 0 {
            let message =
                format!("lane {l} executes a shuffle whose member mask {mask:#010x} excludes it");
            return Err(error(t, crate::error::ErrorKind::WarpDivergence, message));
        }
        if let Some(missing) =
            (0..WARP).find(|&m| mask >> m & 1 != 0 && values.get(m).is_none_or(Option::is_none))
        {
            let message = format!(
                "lane {missing} is in the shuffle's member mask {mask:#010x} but does not execute it"
            );
            return Err(error(t, crate::error::ErrorKind::WarpDivergence, message));
        }
        let (j, valid) = source_lane(sh.mode, l as i64, scalar(sh.offset)?, clamp);
        if mask >> j & 1 == 0 {
            let message =
                format!("lane {l} reads lane {j}, outside the shuffle's member mask {mask:#010x}");
            return Err(error(t, crate::error::ErrorKind::WarpDivergence, message));
        }
        let v = values[j as usize]
            .clone()
            .expect("members execute the shuffle");
        results.push((v, valid));
    }
    for (&l, (v, valid)) in live.iter().zip(results) {
        let t = &mut lanes[l];
        t.set(sh.dst, v);
        if let Some(r) = sh.valid {
            t.set(r, Val::S(u64::from(valid)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_shuffle_lanes() {
        // Full warp: clamp 31 for down/bfly/idx, 0 for up.
        assert_eq!(source_lane(ShuffleMode::Down, 3, 16, 31), (19, true));
        assert_eq!(source_lane(ShuffleMode::Down, 20, 16, 31), (20, false));
        assert_eq!(source_lane(ShuffleMode::Up, 3, 4, 0), (3, false));
        assert_eq!(source_lane(ShuffleMode::Up, 7, 4, 0), (3, true));
        assert_eq!(source_lane(ShuffleMode::Bfly, 5, 1, 31), (4, true));
        assert_eq!(source_lane(ShuffleMode::Idx, 5, 9, 31), (9, true));
        // Width 16 as MLIR lowers it: clamp 15, so lanes past 15 are invalid.
        assert_eq!(source_lane(ShuffleMode::Down, 10, 8, 15), (10, false));
        assert_eq!(source_lane(ShuffleMode::Bfly, 3, 8, 15), (11, true));
    }
}
