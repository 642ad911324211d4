//! The transpose emitter (XLA's `TransposeFusion`): a transpose read and written
//! coalesced by moving tiles through shared memory.
//!
//! The kernel `@main` has two `xla_gpu.loop`s over the block's threads, whose maps come from
//! the tiling: XLA's classic padded tile ([`tiling`]: the same `(th_x, bl_x)[s0, s1]` domain
//! for both loops), or, for 8- and 16-bit elements where XLA packs them and 32-bit ones
//! whose rows it moves 128 bits wide, the packed tile ([`packed`]: `[l, j]` to read, `[l,
//! vh, vv]` to write). The first reads the input tile in input order — calling the prologue,
//! the function of each transpose hero's operand — and inserts the elements into a shared
//! tile (`xla_gpu.allocate_shared`, one per hero, padded against bank conflicts); it also
//! writes the side outputs (roots whose hero is not a tiled transpose) at the input's index,
//! which is where XLA writes them. `xla_gpu.sync_threads` separates the loops. The second
//! loop reads the tiles transposed and writes the transposed roots in output order through
//! the epilogue: a function `@<fusion>__epilogue__<root>` per root above its hero (an
//! `abs(transpose(x))` root computes `abs` there) that takes the hero's element as its last
//! argument, so the hero is never recomputed from the input.
//!
//! The partition makes the heroes, their operands and every output roots of subgraphs
//! ([`PartitionedComputation::with_output_roots`]). Fusions this emitter cannot index
//! together fall back to the loop emitter ([`TransposePlan::new`] says when).

mod description;
pub mod packed;
pub mod tiling;

use hlo::{ArrayShape, Computation, Diagnostic, InstrId, Opcode, Shape};
use indexing::{IndexingMap, delinearize, dim, linearize};
use ir::dialects::xla_gpu;
use ir::{Builder, Type, Value};

use crate::analysis::FusionAnalysis;
use crate::elemental::{ElementalEmitter, FusionContext, Scope};
use crate::kernel::{KernelEntry, kernel_entry, thread_and_block_ids};
use crate::partition::{PartitionedComputation, bitcast_map, sanitize};
use crate::types::{element_type, leaf_element_types};
use crate::{EmittedKernel, EmitterKind, FusionEmitter, LaunchDimensions, ThreadLayout};
pub use description::{
    TransposeDescription, describe_transpose, normalize_transpose, tiled_transpose,
};
use indexing::nested_layout::NestedLayout;
pub use packed::PackedTiling;
pub use tiling::Tiling;

/// The tile a block moves through shared memory: XLA's classic one (`32v x 32v`, padded), or
/// the packed one for 8- and 16-bit elements and 128-bit rows of 32-bit ones ([`packed`]).
/// Both are four maps over the block's threads; the kernel around them is the same.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TransposeTiling {
    Padded(Tiling),
    Packed(PackedTiling),
}

/// `tiling.$method()` on whichever tiling it is.
macro_rules! either {
    ($tiling:expr, $method:ident) => {
        match $tiling {
            TransposeTiling::Padded(t) => t.$method(),
            TransposeTiling::Packed(t) => t.$method(),
        }
    };
}

impl TransposeTiling {
    /// The packed tiling when every hero has the same element width and the packed tile
    /// takes the transpose at that width, its outputs' widest element having
    /// `stored_bits`; else the classic one.
    pub fn new(
        description: TransposeDescription,
        element_bits: &[i64],
        stored_bits: i64,
    ) -> TransposeTiling {
        let packed = match element_bits {
            [first, rest @ ..] if rest.iter().all(|b| b == first) => {
                PackedTiling::new(&description, *first, stored_bits)
            }
            _ => None,
        };
        match packed {
            Some(p) => TransposeTiling::Packed(p),
            None => {
                let bytes: Vec<i64> = element_bits.iter().map(|&b| bytes_of(b)).collect();
                TransposeTiling::Padded(Tiling::new(description, &bytes))
            }
        }
    }

    /// The transpose the maps index: the normalized one, with the packed tiling's `A`
    /// dimension where it inserts one.
    pub fn description(&self) -> &TransposeDescription {
        match self {
            TransposeTiling::Padded(t) => &t.description,
            TransposeTiling::Packed(t) => &t.description,
        }
    }

    /// Elements a thread moves side by side (in one access of the tile's rows).
    pub fn vector_size(&self) -> i64 {
        match self {
            TransposeTiling::Padded(t) => t.vector_size,
            TransposeTiling::Packed(t) => t.elements_per_access(),
        }
    }

    pub fn num_blocks(&self) -> i64 {
        either!(self, num_blocks)
    }

    pub fn shared_tile_shape(&self) -> Vec<i64> {
        either!(self, shared_tile_shape)
    }

    fn input_indexing(&self) -> IndexingMap {
        either!(self, input_indexing)
    }

    /// The threads' coverage of the tile as nested layouts (none in the 102 form).
    fn thread_layouts(&self) -> Vec<ThreadLayout> {
        let layout = |what, layout: NestedLayout| ThreadLayout {
            what,
            shape: layout.shape(),
            layout,
        };
        match self {
            TransposeTiling::Padded(t) => t
                .thread_layout()
                .map(|l| layout("the tile read and the tile written", l))
                .into_iter()
                .collect(),
            TransposeTiling::Packed(t) => vec![
                layout("the tile read", t.read_layout()),
                layout("the tile written", t.write_layout()),
            ],
        }
    }

    fn output_indexing(&self) -> IndexingMap {
        either!(self, output_indexing)
    }

    fn shared_write_indexing(&self) -> IndexingMap {
        either!(self, shared_write_indexing)
    }

    fn shared_read_indexing(&self) -> IndexingMap {
        either!(self, shared_read_indexing)
    }
}

/// What one output of the fusion is, for this emitter.
#[derive(Clone, Debug)]
enum OutputKind {
    /// Computed from shared tile `hero` (an index into [`TransposePlan::heroes`]); `to_root`
    /// takes the hero's index to the root's (the ops between them move elements one to one).
    Transposed { hero: usize, to_root: IndexingMap },
    /// Computed from the inputs at the root's index, written in the first loop.
    Side,
}

#[derive(Clone, Debug)]
struct Output {
    root: InstrId,
    shape: ArrayShape,
    kind: OutputKind,
}

/// How the transpose emitter covers one fusion.
#[derive(Clone, Debug)]
pub struct TransposePlan {
    pub tiling: TransposeTiling,
    /// The transposes that get a shared tile, in order of first use by an output.
    pub heroes: Vec<InstrId>,
    outputs: Vec<Output>,
}

impl TransposePlan {
    /// The plan for fusion `c`, whose tiled transpose heroes are `heroes`; `None` when the
    /// outputs cannot be indexed together, which leaves the fusion to the loop emitter:
    /// every tiled hero must describe the same normalized transpose (the first one's;
    /// others become side outputs if their size allows), every shape involved must be a
    /// bitcast of the normalized input or output (same element count, no tiled layout),
    /// the ops between a hero and its root must map the hero's index to the root's one
    /// to one, and the shared tiles must fit in a block's 48 KiB.
    pub fn new(analysis: &FusionAnalysis, heroes: &[InstrId]) -> Option<TransposePlan> {
        let c = analysis.computation;
        let (first, description) = heroes
            .iter()
            .find_map(|&h| Some((h, tiled_transpose(c, h)?)))?;
        let input_shape = normalized_shape(c, first, &description.input_dims)?;
        let output_shape = normalized_shape(c, first, &description.output_dims())?;
        let mut plan_heroes: Vec<InstrId> = Vec::new();
        let mut outputs = Vec::new();
        for (&root, &hero) in analysis.roots.iter().zip(&analysis.heroes) {
            let shape = c.instruction(root).shape.as_array()?.clone();
            let kind = if tiled_transpose(c, hero).as_ref() == Some(&description) {
                let hero_shape = c.instruction(hero).shape.as_array()?;
                let operand = c.instruction(c.instruction(hero).operands[0]);
                bitcast_map(&input_shape, operand.shape.as_array()?)?;
                bitcast_map(&output_shape, hero_shape)?;
                let index = match plan_heroes.iter().position(|&h| h == hero) {
                    Some(i) => i,
                    None => {
                        plan_heroes.push(hero);
                        plan_heroes.len() - 1
                    }
                };
                OutputKind::Transposed {
                    hero: index,
                    to_root: hero_to_root(analysis, hero, root)?,
                }
            } else {
                bitcast_map(&input_shape, &shape)?;
                OutputKind::Side
            };
            outputs.push(Output { root, shape, kind });
        }
        if plan_heroes.is_empty() {
            return None;
        }
        let bits: Vec<i64> = plan_heroes
            .iter()
            .map(|&h| element_bits(&c.instruction(h).shape))
            .collect();
        // What the writing loop stores: the transposed outputs (side outputs are stored
        // in the reading loop, at the input's index).
        let stored_bits = outputs
            .iter()
            .filter(|o| matches!(o.kind, OutputKind::Transposed { .. }))
            .map(|o| i64::from(o.shape.element_type.bit_width()))
            .max()
            .unwrap_or(8);
        let plan = TransposePlan {
            tiling: TransposeTiling::new(description, &bits, stored_bits),
            heroes: plan_heroes,
            outputs,
        };
        // Without opt-in, a block gets 48 KiB of shared memory; XLA does not fuse beyond.
        (plan.shared_memory_bytes(c) <= crate::Target::SHARED_MEMORY_PER_BLOCK).then_some(plan)
    }

    /// Bytes of shared memory the kernel allocates.
    pub fn shared_memory_bytes(&self, c: &Computation) -> i64 {
        let tile: i64 = self.tiling.shared_tile_shape().iter().product();
        self.heroes
            .iter()
            .map(|&h| tile * bytes_of(element_bits(&c.instruction(h).shape)))
            .sum()
    }
}

/// Whole bytes holding `bits`.
fn bytes_of(bits: i64) -> i64 {
    (bits + 7) / 8
}

fn element_bits(shape: &Shape) -> i64 {
    shape
        .as_array()
        .map_or(8, |a| i64::from(a.element_type.bit_width()))
}

/// The normalized shape `dims` with `hero`'s element type and the default layout.
fn normalized_shape(c: &Computation, hero: InstrId, dims: &[i64]) -> Option<ArrayShape> {
    let element = c.instruction(hero).shape.as_array()?.element_type;
    Some(ArrayShape::new(element, dims.to_vec()))
}

/// The map from the hero's index to the root's, through the ops `find_hero` walked:
/// elementwise ops (of any number of operands), `copy` and `convert` keep the index, `reshape` reinterprets it
/// row-major, `bitcast` in memory order.
fn hero_to_root(analysis: &FusionAnalysis, hero: InstrId, root: InstrId) -> Option<IndexingMap> {
    // The path from the root up to the hero: through an operand that the hero reaches
    // (ops of several operands have one shape, so any such path maps indices alike).
    let (c, graph) = (analysis.computation, &analysis.graph);
    let mut reached = vec![false; c.instructions.len()];
    let mut stack = vec![hero];
    while let Some(id) = stack.pop() {
        if !std::mem::replace(&mut reached[id.0], true) {
            stack.extend(graph.users(id));
        }
    }
    let mut chain = Vec::new();
    let mut at = root;
    while at != hero {
        chain.push(at);
        at = *c.instruction(at).operands.iter().find(|&&o| reached[o.0])?;
    }
    let hero_shape = c.instruction(hero).shape.as_array()?;
    let mut map = IndexingMap::identity(&hero_shape.dims);
    for &id in chain.iter().rev() {
        let instr = c.instruction(id);
        let from = c.instruction(instr.operands[0]).shape.as_array()?;
        let to = instr.shape.as_array()?;
        let step = match instr.opcode {
            Opcode::Bitcast => bitcast_map(from, to)?,
            Opcode::Reshape => {
                let index: Vec<_> = (0..from.rank()).map(dim).collect();
                let mut m = IndexingMap::identity(&from.dims);
                m.results = delinearize(linearize(&index, &from.dims), &to.dims);
                m.simplified()
            }
            _ if from.dims == to.dims => IndexingMap::identity(&from.dims),
            _ => return None,
        };
        map = map.compose(&step).simplified();
    }
    Some(map)
}

/// The entry function's scope for the elemental emitter: it belongs to no subgraph, so
/// every instruction it needs is called through its function.
const ENTRY_SCOPE: usize = usize::MAX;

impl FusionEmitter for TransposePlan {
    fn kind(&self) -> EmitterKind {
        EmitterKind::Transpose
    }

    fn heroes(&self) -> &[InstrId] {
        &self.heroes
    }

    /// The heroes and their operands root functions; every output roots its own.
    fn partition(&self, analysis: &FusionAnalysis) -> Result<PartitionedComputation, Diagnostic> {
        let c = analysis.computation;
        let requested: Vec<InstrId> = self
            .heroes
            .iter()
            .flat_map(|&h| [h, c.instruction(h).operands[0]])
            .collect();
        PartitionedComputation::with_output_roots(analysis, |id| requested.contains(&id))
    }

    fn emit_entry(
        &self,
        cx: &FusionContext<'_>,
        m: &mut ir::Module,
    ) -> Result<EmittedKernel, Diagnostic> {
        let c = cx.fusion;
        let mut epilogues = Vec::new();
        for output in &self.outputs {
            let OutputKind::Transposed { hero, .. } = output.kind else {
                epilogues.push(None);
                continue;
            };
            let hero = self.heroes[hero];
            // XLA writes an epilogue function for every transposed output, the identity
            // when the transpose is the root.
            if output.root == hero && !cx.target.matches_xla() {
                epilogues.push(None);
                continue;
            }
            let name = format!(
                "{}__epilogue__{}",
                sanitize(&c.name),
                sanitize(&c.instruction(output.root).name)
            );
            if !epilogues.iter().flatten().any(|n: &String| *n == name) {
                crate::epilogue::emit_hero_epilogue(cx, m, output.root, hero, &name)?;
            }
            epilogues.push(Some(name));
        }
        let kernel = emit_main(cx, m, self, &epilogues)?;
        crate::epilogue::erase_unused_functions(m);
        Ok(kernel)
    }
}

/// The grid map `grid` composed with the bitcast from the normalized shape `from` to
/// `to`: the index of `to` a thread handles.
fn grid_to(grid: &IndexingMap, from: &ArrayShape, to: &ArrayShape) -> IndexingMap {
    let bitcast = bitcast_map(from, to).expect("checked by the plan");
    grid.compose(&bitcast).simplified()
}

/// Emits `@main` (see the module documentation).
fn emit_main(
    cx: &FusionContext<'_>,
    m: &mut ir::Module,
    plan: &TransposePlan,
    epilogues: &[Option<String>],
) -> Result<EmittedKernel, Diagnostic> {
    let c = cx.fusion;
    let tiling = &plan.tiling;
    let description: &TransposeDescription = tiling.description();
    let first_hero = plan.heroes[0];
    let input_shape =
        normalized_shape(c, first_hero, &description.input_dims).ok_or_else(|| {
            crate::unsupported(c.root_instruction().spans.whole, "a tuple-shaped transpose")
        })?;
    let output_shape =
        normalized_shape(c, first_hero, &description.output_dims()).ok_or_else(|| {
            crate::unsupported(c.root_instruction().spans.whole, "a tuple-shaped transpose")
        })?;

    if tiling.num_blocks() as u64 > crate::Target::MAX_GRID_X {
        return Err(crate::unsupported(
            c.root_instruction().spans.whole,
            format!(
                "a transpose of {} tiles, more than grid.x holds ({})",
                tiling.num_blocks(),
                crate::Target::MAX_GRID_X
            ),
        ));
    }
    let output_shapes: Vec<&ArrayShape> = plan.outputs.iter().map(|o| &o.shape).collect();
    let KernelEntry {
        entry,
        params,
        outs,
        ..
    } = kernel_entry(m, c, &output_shapes, c.root_instruction().spans.whole)?;
    let (params, outs) = (params.as_slice(), outs.as_slice());

    let launch = LaunchDimensions::new(
        tiling.num_blocks(),
        tiling::THREADS_PER_BLOCK,
        plan.shared_memory_bytes(c),
    );
    let mut b = Builder::at_end(m, entry);
    let grid: [Value; 2] = thread_and_block_ids(&mut b, &launch)
        .try_into()
        .expect("a grid.x launch: the thread and the block id");
    let tile_shape = tiling.shared_tile_shape();
    let mut tiles = Vec::new();
    for &h in &plan.heroes {
        let a = c
            .instruction(h)
            .shape
            .as_array()
            .expect("checked by the plan");
        let elem = element_type(a.element_type)
            .map_err(|e| crate::unsupported(c.root_instruction().spans.whole, e))?;
        let ip = b.insertion_point();
        tiles.push(xla_gpu::build_allocate_shared(
            b.module,
            ip,
            Type::tensor(&tile_shape, elem),
        ));
    }

    // Loop 1: read the input tile, fill the shared tiles, write the side outputs.
    let input_grid = tiling.input_indexing();
    let first_operand = c.instruction(c.instruction(first_hero).operands[0]);
    let loop1_map = grid_to(
        &input_grid,
        &input_shape,
        first_operand.shape.as_array().expect("checked by the plan"),
    );
    let side: Vec<usize> = (0..plan.outputs.len())
        .filter(|&k| matches!(plan.outputs[k].kind, OutputKind::Side))
        .collect();
    let mut inits = tiles.clone();
    inits.extend(side.iter().map(|&k| outs[k]));
    let loop1 = TileLoop::open(&mut b, &loop1_map, &grid, &inits, "input_dim");
    let write_index = tiling.shared_write_indexing();
    {
        let inner = Builder::at_end(b.module, loop1.body);
        let mut e = ElementalEmitter::new(cx, inner, Scope::Subgraph(ENTRY_SCOPE), params.to_vec());
        let shared_index = e.apply(&write_index, &grid, &loop1.symbols);
        let mut yielded = Vec::new();
        for (k, &h) in plan.heroes.iter().enumerate() {
            let operand = c.instruction(h).operands[0];
            let shape = c.instruction(operand).shape.as_array().expect("an array");
            let map = grid_to(&input_grid, &input_shape, shape);
            let index = loop1.index_of(&mut e, &map);
            let value = e.emit(operand, &index)?[0];
            yielded.push(e.b.insert_element(value, loop1.iters[k], &shared_index));
        }
        for (j, &k) in side.iter().enumerate() {
            let o = &plan.outputs[k];
            let map = grid_to(&input_grid, &input_shape, &o.shape);
            let index = loop1.index_of(&mut e, &map);
            let value = e.emit(o.root, &index)?[0];
            yielded.push(e.b.insert_element(value, loop1.iters[tiles.len() + j], &index));
        }
        xla_gpu::build_yield(e.b.module, loop1.body, &yielded);
    }
    let loop1_results: Vec<Value> = b.module.results(loop1.op).collect();
    let ip = b.insertion_point();
    let synced = xla_gpu::build_sync_threads(b.module, ip, &loop1_results[..tiles.len()]);

    // Loop 2: read the shared tiles transposed, write the transposed outputs.
    let output_grid = tiling.output_indexing();
    let transposed: Vec<usize> = (0..plan.outputs.len())
        .filter(|&k| matches!(plan.outputs[k].kind, OutputKind::Transposed { .. }))
        .collect();
    let root_map = |k: usize| -> IndexingMap {
        let OutputKind::Transposed { hero, to_root } = &plan.outputs[k].kind else {
            unreachable!("a transposed output")
        };
        let hero_shape = c.instruction(plan.heroes[*hero]).shape.as_array();
        grid_to(&output_grid, &output_shape, hero_shape.expect("an array"))
            .compose(to_root)
            .simplified()
    };
    let loop2_map = root_map(transposed[0]);
    let inits: Vec<Value> = transposed.iter().map(|&k| outs[k]).collect();
    let loop2 = TileLoop::open(&mut b, &loop2_map, &grid, &inits, "output_dim");
    let read_index = tiling.shared_read_indexing();
    {
        let inner = Builder::at_end(b.module, loop2.body);
        let mut e = ElementalEmitter::new(cx, inner, Scope::Subgraph(ENTRY_SCOPE), params.to_vec());
        let shared_index = e.apply(&read_index, &grid, &loop2.symbols);
        let elements: Vec<Value> = synced
            .iter()
            .map(|&t| e.b.extract(t, &shared_index))
            .collect();
        let mut yielded = Vec::new();
        for (j, &k) in transposed.iter().enumerate() {
            let o = &plan.outputs[k];
            let OutputKind::Transposed { hero, .. } = o.kind else {
                unreachable!("a transposed output")
            };
            let map = root_map(k);
            let index = loop2.index_of(&mut e, &map);
            let value = match &epilogues[k] {
                None => elements[hero],
                Some(name) => {
                    let types = leaf_element_types(&c.instruction(o.root).shape)
                        .map_err(|err| crate::unsupported(c.root_instruction().spans.whole, err))?;
                    let mut call_args = params.to_vec();
                    call_args.extend_from_slice(&index);
                    call_args.push(elements[hero]);
                    let ip = e.b.insertion_point();
                    let call = xla_gpu::build_pure_call(e.b.module, ip, name, &call_args, &types);
                    e.b.module.result(call, 0)
                }
            };
            yielded.push(e.b.insert_element(value, loop2.iters[j], &index));
        }
        xla_gpu::build_yield(e.b.module, loop2.body, &yielded);
    }
    let loop2_results: Vec<Value> = b.module.results(loop2.op).collect();
    let mut returned = Vec::new();
    for k in 0..plan.outputs.len() {
        returned.push(match side.iter().position(|&s| s == k) {
            Some(j) => loop1_results[tiles.len() + j],
            None => {
                let j = transposed.iter().position(|&t| t == k).expect("an output");
                loop2_results[j]
            }
        });
    }
    b.ret(&returned);
    Ok(EmittedKernel {
        launch,
        vector_factor: tiling.vector_size(),
        thread_map: loop2_map,
        in_place: Vec::new(),
        layouts: tiling.thread_layouts(),
    })
}

/// One of the kernel's two `xla_gpu.loop`s over the block's threads: the loop, its body,
/// its map and the thread and block ids it runs over, and the body's arguments — the map's
/// symbols, its results (named `input_dim0`, .. or `output_dim0`, ..) and the iteration
/// arguments.
struct TileLoop {
    op: ir::OpId,
    body: ir::BlockId,
    map: IndexingMap,
    grid: Vec<Value>,
    symbols: Vec<Value>,
    results: Vec<Value>,
    iters: Vec<Value>,
}

impl TileLoop {
    /// Opens the loop over `map` at `b`'s insertion point, carrying `inits`, its map's
    /// results named `{result_name}{i}`.
    fn open(
        b: &mut Builder<'_>,
        map: &IndexingMap,
        grid: &[Value],
        inits: &[Value],
        result_name: &str,
    ) -> TileLoop {
        let ip = b.insertion_point();
        let (op, body) = xla_gpu::build_loop(b.module, ip, map.clone(), grid, inits);
        // Each trip moves its own elements between memory and the tile: unrolled (within
        // `unroll-loops`' budget for requests), every access is at a constant offset from
        // one address, and whether it stays a loop no longer rests on ptxas's reading of
        // the address arithmetic LLVM happened to write.
        b.module
            .set_attr(op, xla_gpu::UNROLL_ATTR, ir::Attribute::Unit);
        let args = b.module.block_args(body).to_vec();
        let (symbols, rest) = args.split_at(map.range_vars.len());
        let (results, iters) = rest.split_at(map.results.len());
        for (i, &v) in results.iter().enumerate() {
            b.module
                .set_value_name(v, Some(&format!("{result_name}{i}")));
        }
        TileLoop {
            op,
            body,
            map: map.clone(),
            grid: grid.to_vec(),
            symbols: symbols.to_vec(),
            results: results.to_vec(),
            iters: iters.to_vec(),
        }
    }

    /// The values of `map` at the loop's dims and symbols, emitted by `e` in the body;
    /// the loop's own results where `map` is the loop's.
    fn index_of(&self, e: &mut ElementalEmitter<'_, '_>, map: &IndexingMap) -> Vec<Value> {
        if map.results == self.map.results {
            return self.results.clone();
        }
        e.apply(map, &self.grid, &self.symbols)
    }
}
