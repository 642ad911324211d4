//! `split-long-sorts`: a sort whose rows no block's shared memory holds, and which CUB does
//! not take (`sort-rewriter` runs first: an `argsort` of floats, three operands, another
//! comparator, a dimension that is not the last), becomes a chain of kernels, the ones XLA's
//! sort emitter launches for such rows: tiles of the rows sorted in shared memory, then per
//! merge stage compare-exchange steps across the whole row and the tiles sorted again.
//!
//! For `k` operands with rows of `n` elements (the sorted dimension moved last), padded to
//! `N = 2^L`, and tiles of `T = 2^t` elements (the longest a block sorts with `k + 1`
//! operands):
//!
//! 1. **Tiles.** A fusion reads the operands as rows (transpose, reshape, pad to `N`), adds
//!    each element's position in its row (an `s32` iota) as operand `k` (see below), and sorts every
//!    tile of `T` (the rows viewed as `[rows * N / T, T]`): the sort emitter's kernel.
//! 2. **Merges.** Stage `s = t .. L-1` merges sorted runs of `2^s` into runs of `2^(s+1)`:
//!    a loop fusion compares element `i` of each run pair with element `2^(s+1) - 1 - i`
//!    (the second run read backwards), then one per distance `j = 2^(s-1) .. T` compares
//!    `i` with `i + j`; each keeps the earlier element first. Afterwards every tile holds a
//!    bitonic sequence and precedes the next, so sorting each tile again (the sort emitter)
//!    finishes the stage.
//! 3. **Rows.** A loop fusion drops the padding and the positions and puts the sorted
//!    dimension back.
//!
//! Every step compares with one comparator made from the sort's (`<name>.total_order`):
//! `a` before `b` when the sort's comparator says so, on a tie when `a` came first, and any
//! element before the padding (positions `>= n`, whatever their values). It is a total
//! order, so the result is the stable sort's, whatever order a step leaves ties in (the sort
//! emitter breaks ties by position within a tile; here the row's positions travel with the
//! elements). The steps are fusions made here, so `fuse` leaves them as they are and the
//! evaluator checks each of them; the kernels number `m(m + 3)/2 + 2` with `m = L - t` (4 for
//! an `f32` argsort of 6,500 elements: tiles of 4,096, `N` = 8,192).
//!
//! An operand that already counts positions along the row (`argsort`'s iota) is the
//! positions' buffer: the first kernel counts them anew (the padding's too) and the iota goes.
//!
//! Each tile sort after a stage's steps says `backend_config={"bitonic_rows":true}`: its rows
//! are bitonic, so the sort emitter runs only its network's last stage.

use hlo::{
    AttrValue, Computation, ComputationId, HloModule, InstrId, Instruction, Opcode, Payload,
    PrimitiveType, Shape, Value,
};

use hlo::module::{PadDim, SliceDim};

use crate::{Added, Names, attribute, operands_first};

pub(crate) fn run(module: &mut HloModule) -> Result<bool, hlo::Diagnostic> {
    let mut changed = false;
    for id in crate::control_computations(module) {
        let c = module.computation(id);
        let plans: Vec<Plan> = (0..c.instructions.len())
            .map(InstrId)
            .filter(|&i| c.instruction(i).opcode == Opcode::Sort)
            .filter(|&i| !emitters::sort::SortFusion::fits_a_block(c, c.instruction(i)))
            .filter_map(|i| Plan::new(module, c, i))
            .collect();
        if plans.is_empty() {
            continue;
        }
        // The iotas the chains count anew (XLA prints them as fusions, which no later pass
        // removes).
        let c = module.computation(id);
        let counted: Vec<String> = (plans.iter())
            .filter_map(|p| p.counting.map(|q| c.instruction(p.sort).operands[q]))
            .map(|o| c.instruction(o).name.clone())
            .collect();
        for plan in &plans {
            plan.split(module, id);
        }
        crate::put_operands_first(&mut module.computations[id.0]);
        crate::remove_unread(&mut module.computations[id.0], &counted);
        changed = true;
    }
    Ok(changed)
}

/// How one sort is split.
struct Plan {
    sort: InstrId,
    comparator: ComputationId,
    /// The sorted dimension, and the operands' dimensions.
    dimension: usize,
    dims: Vec<i64>,
    types: Vec<PrimitiveType>,
    /// Elements per row, their number rounded up to a power of two, and per tile.
    n: i64,
    padded: i64,
    tile: i64,
    /// Rows (the product of the other dimensions).
    rows: i64,
    /// The operand that counts positions along the sorted dimension (an `s32` iota:
    /// `argsort`'s), which then is the positions' buffer; else they get one of their own,
    /// after the operands'.
    counting: Option<usize>,
}

impl Plan {
    /// The plan for sort `i` of `c`, or `None` when the steps cannot be made of it (the sort
    /// emitter then refuses it, located): operands of different dimensions or dynamic ones,
    /// a comparator that is not elementwise code, rows past `s32` positions, more tiles than
    /// a grid has blocks; or when there is nothing to sort.
    fn new(module: &HloModule, c: &Computation, i: InstrId) -> Option<Plan> {
        let sort = c.instruction(i);
        let shapes: Vec<&hlo::ArrayShape> = (sort.operands.iter())
            .map(|&o| c.instruction(o).shape.as_array())
            .collect::<Option<_>>()?;
        let first = shapes.first()?;
        // A sort of nothing is `zero-sized-hlo-elimination`'s (a constant, no kernel).
        if first.dims.contains(&0) {
            return None;
        }
        let same = shapes.iter().all(|s| s.dims == first.dims);
        if !same || shapes.iter().any(|s| s.dynamic_dims.iter().any(|&d| d)) {
            return None;
        }
        let &[d] = sort.int_list("dimensions")? else {
            return None;
        };
        let dimension = usize::try_from(d).ok().filter(|&d| d < first.rank())?;
        let comparator = sort.called("to_apply")?.id;
        let body = module.computation(comparator);
        if body.parameters().len() != 2 * shapes.len() || !body.instructions.iter().all(scalar_code)
        {
            return None;
        }
        let n = first.dims[dimension];
        let padded = (n as u64).next_power_of_two() as i64;
        let counting = (sort.operands.iter()).position(|&o| counts_along(module, c, o, d));
        let mut with_positions: Vec<hlo::ArrayShape> = shapes.iter().map(|&s| s.clone()).collect();
        if counting.is_none() {
            with_positions.push(hlo::ArrayShape::new(PrimitiveType::S32, vec![n]));
        }
        let refs: Vec<&hlo::ArrayShape> = with_positions.iter().collect();
        let capacity = emitters::sort::SortFusion::row_capacity(&refs);
        let tile = 1i64 << (63 - capacity.max(1).leading_zeros());
        let rows: i64 = first.dims.iter().product::<i64>() / n.max(1);
        let blocks = rows.checked_mul(padded / tile)?;
        let fits = padded <= i64::from(i32::MAX) && blocks as u64 <= emitters::Target::MAX_GRID_X;
        (fits && tile >= 2 && tile < padded).then(|| Plan {
            sort: i,
            comparator,
            dimension,
            dims: first.dims.clone(),
            types: shapes.iter().map(|s| s.element_type).collect(),
            n,
            padded,
            tile,
            rows,
            counting,
        })
    }

    /// How many buffers the steps sort: the operands, and the positions unless an operand
    /// holds them.
    fn buffers(&self) -> usize {
        self.types.len() + usize::from(self.counting.is_none())
    }

    /// Which buffer holds the positions.
    fn positions(&self) -> usize {
        self.counting.unwrap_or(self.types.len())
    }

    /// Replaces the sort in computation `id` by its chain of fusions; the sort instruction
    /// itself becomes the last (keeping its name, shape and users).
    fn split(&self, module: &mut HloModule, id: ComputationId) {
        let sort = module.computation(id).instruction(self.sort).clone();
        let mut computation_names = Names {
            taken: module.computations.iter().map(|c| c.name.clone()).collect(),
            ..Names::default()
        };
        let order = total_order(module, self, &sort, &mut computation_names);
        let order_body = module.computation(order.id).clone();
        let tiled = [self.rows * self.padded / self.tile, self.tile];
        let mut fusions: Vec<(String, Computation)> = Vec::new();

        // 1. The tiles of the rows, with their positions, sorted. An operand that counts
        // positions is counted here anew (past `n` too: the padding's positions).
        let read: Vec<InstrId> = (sort.operands.iter().enumerate())
            .filter(|&(q, _)| Some(q) != self.counting)
            .map(|(_, &o)| o)
            .collect();
        let first = self.fusion(&sort, |a| {
            let rows = [self.rows, self.padded];
            let iota = a.op(
                "positions",
                Opcode::Iota,
                Shape::array(PrimitiveType::S32, rows.to_vec()),
                vec![],
                vec![attribute("iota_dimension", AttrValue::Int(1), a.span())],
            );
            let positions = reshape(a, iota, &tiled);
            let mut operands: Vec<InstrId> = (read.iter().enumerate())
                .map(|(number, &o)| {
                    let shape = module.computation(id).instruction(o).shape.clone();
                    let t = shape.as_array().map(|s| s.element_type).expect("an array");
                    let p = parameter(a, number, shape);
                    self.as_tiles(a, p, t)
                })
                .collect();
            operands.insert(self.positions(), positions);
            sort_tiles(a, operands, &order)
        });
        fusions.push(("tiles".into(), first));

        // 2. The merge stages.
        let log = |x: i64| 63 - x.leading_zeros() as i64;
        for stage in log(self.tile)..log(self.padded) {
            let run = 1i64 << stage;
            let mut distance = run;
            while distance >= self.tile {
                let flip = distance == run;
                let step = self.fusion(&sort, |a| {
                    self.compare_exchange(a, &order_body, distance, flip)
                });
                fusions.push((format!("merge.{stage}.{distance}"), step));
                distance /= 2;
            }
            let again = self.fusion(&sort, |a| {
                let operands = (0..self.buffers())
                    .map(|q| {
                        let t = self.position_or(q);
                        parameter(a, q, Shape::array(t, tiled.to_vec()))
                    })
                    .collect();
                let sort = sort_tiles(a, operands, &order);
                let claim = AttrValue::Raw("{\"bitonic_rows\":true}".into());
                let claim = attribute("backend_config", claim, a.span());
                a.c.instructions[sort.0].attributes.push(claim);
                sort
            });
            fusions.push((format!("tiles.{stage}"), again));
        }

        // 3. The rows as the sort returns them.
        let last = self.fusion(&sort, |a| {
            let outputs: Vec<InstrId> = (self.types.iter().enumerate())
                .map(|(q, &t)| {
                    let p = parameter(a, q, Shape::array(t, tiled.to_vec()));
                    let leaf = match &sort.shape {
                        Shape::Tuple(leaves) => leaves[q].clone(),
                        array => array.clone(),
                    };
                    self.as_rows(a, p, leaf)
                })
                .collect();
            match outputs.as_slice() {
                [one] if !sort.shape.is_tuple() => *one,
                _ => a.op("rows", Opcode::Tuple, sort.shape.clone(), outputs, vec![]),
            }
        });

        // The chain in the computation: each fusion reads the last one's buffers.
        let mut names = Names::of(module.computation(id));
        let mut buffers: Vec<InstrId> = read;
        for (suffix, body) in fusions {
            let shape = body.root_instruction().shape.clone();
            let called = add_computation(module, body, &sort.name, &suffix, &mut computation_names);
            let c = &mut module.computations[id.0];
            let mut a = Added {
                c,
                names: &mut names,
                of: sort.clone(),
            };
            let fusion = a.op(
                &suffix,
                Opcode::Fusion,
                shape,
                buffers,
                fusion_attributes(&a, called),
            );
            buffers = (0..self.buffers())
                .map(|q| {
                    let shape = Shape::array(self.position_or(q), tiled.to_vec());
                    a.element(&format!("{suffix}.{q}"), shape, fusion, q)
                })
                .collect();
        }
        let called = add_computation(module, last, &sort.name, "rows", &mut computation_names);
        let c = &mut module.computations[id.0];
        let a = Added {
            c,
            names: &mut names,
            of: sort.clone(),
        };
        let mut attributes = fusion_attributes(&a, called);
        attributes.extend(crate::metadata(&sort));
        let replaced = &mut a.c.instructions[self.sort.0];
        replaced.opcode = Opcode::Fusion;
        replaced.operands = buffers[..self.types.len()].to_vec();
        replaced.attributes = attributes;
    }

    /// The element type of operand `q`, or the positions' (`q == k`).
    fn position_or(&self, q: usize) -> PrimitiveType {
        self.types.get(q).copied().unwrap_or(PrimitiveType::S32)
    }

    /// A fusion computation built by `body`, which returns its root.
    fn fusion(&self, sort: &Instruction, body: impl FnOnce(&mut Added) -> InstrId) -> Computation {
        let mut c = Computation {
            name: String::new(),
            span: sort.spans.whole,
            is_entry: false,
            signature: None,
            instructions: Vec::new(),
            root: InstrId(0),
            attributes: Vec::new(),
        };
        let mut names = Names::default();
        let mut a = Added {
            c: &mut c,
            names: &mut names,
            of: sort.clone(),
        };
        let root = body(&mut a);
        c.root = root;
        c
    }

    /// Operand `x` (the sort's operand shape) as tiles: the sorted dimension moved last,
    /// the rows padded to `N`, viewed as `[rows * N / T, T]`.
    fn as_tiles(&self, a: &mut Added, x: InstrId, t: PrimitiveType) -> InstrId {
        let (permutation, moved) = self.moved_last();
        let x = match self.dimension + 1 == self.dims.len() {
            true => x,
            false => {
                let dimensions = vec![attribute(
                    "dimensions",
                    AttrValue::IntList(permutation),
                    a.span(),
                )];
                a.op(
                    "transpose",
                    Opcode::Transpose,
                    Shape::array(t, moved),
                    vec![x],
                    dimensions,
                )
            }
        };
        let x = reshape(a, x, &[self.rows, self.n]);
        let x = match self.padded > self.n {
            false => x,
            true => {
                let zero = a.constant("zero", t, zero(t));
                let padding = vec![
                    PadDim {
                        low: 0,
                        high: 0,
                        interior: 0,
                    },
                    PadDim {
                        low: 0,
                        high: self.padded - self.n,
                        interior: 0,
                    },
                ];
                let config = vec![attribute("padding", AttrValue::Padding(padding), a.span())];
                let shape = Shape::array(t, vec![self.rows, self.padded]);
                a.op("pad", Opcode::Pad, shape, vec![x, zero], config)
            }
        };
        reshape(a, x, &[self.rows * self.padded / self.tile, self.tile])
    }

    /// Tiles `x` back as the sort's result `leaf`: rows without their padding, the sorted
    /// dimension put back.
    fn as_rows(&self, a: &mut Added, x: InstrId, leaf: Shape) -> InstrId {
        let t = leaf
            .as_array()
            .map(|l| l.element_type)
            .unwrap_or(PrimitiveType::S32);
        let x = reshape(a, x, &[self.rows, self.padded]);
        let x = match self.padded > self.n {
            false => x,
            true => {
                let range = |limit| SliceDim {
                    start: 0,
                    limit,
                    stride: 1,
                };
                let slice = AttrValue::Slice(vec![range(self.rows), range(self.n)]);
                let slice = vec![attribute("slice", slice, a.span())];
                let shape = Shape::array(t, vec![self.rows, self.n]);
                a.op("slice", Opcode::Slice, shape, vec![x], slice)
            }
        };
        let (permutation, moved) = self.moved_last();
        if self.dimension + 1 == self.dims.len() {
            return a.op("reshape", Opcode::Reshape, leaf, vec![x], vec![]);
        }
        let x = reshape(a, x, &moved);
        let mut inverse = vec![0; permutation.len()];
        for (i, &p) in permutation.iter().enumerate() {
            inverse[p as usize] = i as i64;
        }
        let dimensions = vec![attribute(
            "dimensions",
            AttrValue::IntList(inverse),
            a.span(),
        )];
        a.op("transpose", Opcode::Transpose, leaf, vec![x], dimensions)
    }

    /// The permutation that moves the sorted dimension last, and the dimensions it gives.
    fn moved_last(&self) -> (Vec<i64>, Vec<i64>) {
        let mut permutation: Vec<i64> = (0..self.dims.len() as i64)
            .filter(|&d| d != self.dimension as i64)
            .collect();
        permutation.push(self.dimension as i64);
        let moved = permutation.iter().map(|&d| self.dims[d as usize]).collect();
        (permutation, moved)
    }

    /// One compare-exchange step over the tiles of all `k + 1` buffers: pairs `distance`
    /// apart (`flip`: the second of each pair of runs read backwards), the earlier element
    /// of each pair (by `order`) put first.
    fn compare_exchange(
        &self,
        a: &mut Added,
        order: &Computation,
        distance: i64,
        flip: bool,
    ) -> InstrId {
        let tiled = [self.rows * self.padded / self.tile, self.tile];
        let pairs = tiled[0] * tiled[1] / (2 * distance);
        let halves = [pairs, distance];
        let mut sides = Vec::new();
        for q in 0..self.buffers() {
            let t = self.position_or(q);
            let p = parameter(a, q, Shape::array(t, tiled.to_vec()));
            let x = reshape(a, p, &[pairs, 2, distance]);
            let half = |a: &mut Added, which: i64| {
                let range = |start, limit| SliceDim {
                    start,
                    limit,
                    stride: 1,
                };
                let slice = vec![range(0, pairs), range(which, which + 1), range(0, distance)];
                let slice = vec![attribute("slice", AttrValue::Slice(slice), a.span())];
                let shape = Shape::array(t, vec![pairs, 1, distance]);
                let s = a.op("half", Opcode::Slice, shape, vec![x], slice);
                reshape(a, s, &halves)
            };
            let lo = half(a, 0);
            let hi = half(a, 1);
            let hi = if flip { reverse(a, hi) } else { hi };
            sides.push((t, lo, hi));
        }
        let arguments: Vec<InstrId> = sides.iter().flat_map(|&(_, lo, hi)| [hi, lo]).collect();
        let swap = apply(a, order, &arguments, &halves);
        let outputs: Vec<InstrId> = sides
            .iter()
            .map(|&(t, lo, hi)| {
                let shape = Shape::array(t, halves.to_vec());
                let first = a.op(
                    "first",
                    Opcode::Select,
                    shape.clone(),
                    vec![swap, hi, lo],
                    vec![],
                );
                let second = a.op("second", Opcode::Select, shape, vec![swap, lo, hi], vec![]);
                let second = if flip { reverse(a, second) } else { second };
                let parts = [first, second].map(|x| reshape(a, x, &[pairs, 1, distance]));
                let along = vec![attribute(
                    "dimensions",
                    AttrValue::IntList(vec![1]),
                    a.span(),
                )];
                let shape = Shape::array(t, vec![pairs, 2, distance]);
                let joined = a.op("pairs", Opcode::Concatenate, shape, parts.to_vec(), along);
                reshape(a, joined, &tiled)
            })
            .collect();
        let shape = Shape::Tuple(
            outputs
                .iter()
                .map(|&o| a.c.instruction(o).shape.clone())
                .collect(),
        );
        a.op("exchanged", Opcode::Tuple, shape, outputs, vec![])
    }
}

/// Whether comparator instruction `i` is scalar code the steps can apply elementwise.
fn scalar_code(i: &Instruction) -> bool {
    let scalar = i.shape.as_array().is_some_and(|s| s.dims.is_empty());
    let code = matches!(
        i.opcode,
        Opcode::Parameter | Opcode::Constant | Opcode::BitcastConvert | Opcode::Bitcast
    ) || crate::elementwise(i.opcode);
    scalar && code
}

/// The total order of the steps, a new scalar computation of a pair of parameters per
/// buffer (each operand's, then the positions' unless an operand holds them): the sort's
/// comparator, ties broken by position, padding last.
fn total_order(
    module: &mut HloModule,
    plan: &Plan,
    sort: &Instruction,
    names: &mut Names,
) -> hlo::module::ComputationRef {
    let comparator = module.computation(plan.comparator).clone();
    let body = plan.fusion(sort, |a| {
        let mut pairs = Vec::new();
        for q in 0..plan.buffers() {
            let shape = Shape::scalar(plan.position_or(q));
            pairs.push(parameter(a, 2 * q, shape.clone()));
            pairs.push(parameter(a, 2 * q + 1, shape));
        }
        let operands = &pairs[..2 * plan.types.len()];
        let positions = &pairs[2 * plan.positions()..2 * plan.positions() + 2];
        let swapped: Vec<InstrId> = operands.chunks(2).flat_map(|p| [p[1], p[0]]).collect();
        let before = apply(a, &comparator, operands, &[]);
        let after = apply(a, &comparator, &swapped, &[]);
        let pred = Shape::scalar(PrimitiveType::Pred);
        let compare = |a: &mut Added, x, y| {
            let direction = vec![attribute(
                "direction",
                AttrValue::Enum("LT".into()),
                a.span(),
            )];
            a.op("lt", Opcode::Compare, pred.clone(), vec![x, y], direction)
        };
        let logic = |a: &mut Added, suffix: &str, opcode, operands| {
            a.op(suffix, opcode, pred.clone(), operands, vec![])
        };
        let n = a.constant("n", PrimitiveType::S32, Value::Int(plan.n.into()));
        let earlier = compare(a, positions[0], positions[1]);
        let real_a = compare(a, positions[0], n);
        let real_b = compare(a, positions[1], n);
        let real = logic(a, "real", Opcode::And, vec![real_a, real_b]);
        let not_after = logic(a, "not_after", Opcode::Not, vec![after]);
        let tie = logic(a, "tie", Opcode::And, vec![not_after, earlier]);
        let stable = logic(a, "stable", Opcode::Or, vec![before, tie]);
        logic(a, "before", Opcode::Select, vec![real, stable, earlier])
    });
    add_computation(module, body, &comparator.name, "total_order", names)
}

/// Scalar computation `f` applied elementwise to `arguments` (its parameters, each of
/// dimensions `dims`): its instructions cloned at those dimensions, constants broadcast.
fn apply(a: &mut Added, f: &Computation, arguments: &[InstrId], dims: &[i64]) -> InstrId {
    let mut value = vec![InstrId(usize::MAX); f.instructions.len()];
    let prefix = format!("{}.", a.of.name);
    for i in operands_first(f) {
        let instr = f.instruction(i);
        // `<sort>.lt` for the comparator's `lt`, and for the total order's own `<sort>.lt`.
        let name = instr.name.strip_prefix(&prefix).unwrap_or(&instr.name);
        let t = instr
            .shape
            .as_array()
            .map(|s| s.element_type)
            .unwrap_or(PrimitiveType::Pred);
        value[i.0] = match &instr.payload {
            Payload::Parameter(p) => arguments[*p as usize],
            Payload::Literal(literal) => {
                let id = a.op(name, Opcode::Constant, Shape::scalar(t), vec![], vec![]);
                a.c.instructions[id.0].payload = Payload::Literal(literal.clone());
                match dims.is_empty() {
                    true => id,
                    false => a.broadcast(name, Shape::array(t, dims.to_vec()), id),
                }
            }
            _ => {
                let operands: Vec<InstrId> = instr.operands.iter().map(|o| value[o.0]).collect();
                let shape = Shape::array(t, dims.to_vec());
                // XLA:CPU's comparators reinterpret a float's bits with a scalar `bitcast`;
                // on arrays that is a `bitcast-convert` (a `bitcast` keeps the element type).
                let opcode = match instr.opcode {
                    Opcode::Bitcast if a.c.instruction(operands[0]).shape == shape => {
                        value[i.0] = operands[0];
                        continue;
                    }
                    Opcode::Bitcast => Opcode::BitcastConvert,
                    opcode => opcode,
                };
                a.op(name, opcode, shape, operands, instr.attributes.clone())
            }
        };
    }
    value[f.root.0]
}

/// `sort(operands), dimensions={1}` of tiles in `order`, stable.
fn sort_tiles(
    a: &mut Added,
    operands: Vec<InstrId>,
    order: &hlo::module::ComputationRef,
) -> InstrId {
    let shapes = operands
        .iter()
        .map(|&o| a.c.instruction(o).shape.clone())
        .collect();
    let span = a.span();
    let reference = order.clone();
    let attributes = vec![
        attribute("dimensions", AttrValue::IntList(vec![1]), span),
        attribute("is_stable", AttrValue::Bool(true), span),
        attribute("to_apply", AttrValue::Computation(reference), span),
    ];
    a.op(
        "sort",
        Opcode::Sort,
        Shape::Tuple(shapes),
        operands,
        attributes,
    )
}

/// Parameter `number` of shape `shape`.
fn parameter(a: &mut Added, number: usize, shape: Shape) -> InstrId {
    let id = a.op(
        &format!("p{number}"),
        Opcode::Parameter,
        shape,
        vec![],
        vec![],
    );
    a.c.instructions[id.0].payload = Payload::Parameter(number as i64);
    id
}

/// `x` reshaped to `dims` (same element type, row-major); `x` when it has them.
fn reshape(a: &mut Added, x: InstrId, dims: &[i64]) -> InstrId {
    let array = a.c.instruction(x).shape.as_array().expect("an array");
    if array.dims == dims {
        return x;
    }
    let shape = Shape::array(array.element_type, dims.to_vec());
    a.op("reshape", Opcode::Reshape, shape, vec![x], vec![])
}

/// `x` reversed along dimension 1.
fn reverse(a: &mut Added, x: InstrId) -> InstrId {
    let shape = a.c.instruction(x).shape.clone();
    let dimensions = vec![attribute(
        "dimensions",
        AttrValue::IntList(vec![1]),
        a.span(),
    )];
    a.op("reverse", Opcode::Reverse, shape, vec![x], dimensions)
}

/// A zero of type `t`: the padding's value (its elements are ordered by position alone).
fn zero(t: PrimitiveType) -> Value {
    if t == PrimitiveType::Pred {
        Value::Pred(false)
    } else if t.is_complex() {
        Value::Complex(0.0, 0.0)
    } else if t.is_float() {
        Value::Float(0.0)
    } else {
        Value::Int(0)
    }
}

/// `kind=kLoop, calls=<called>`.
fn fusion_attributes(a: &Added, called: hlo::module::ComputationRef) -> Vec<hlo::Attribute> {
    vec![
        attribute("kind", AttrValue::Enum("kLoop".into()), a.span()),
        attribute("calls", AttrValue::Computation(called), a.span()),
    ]
}

/// Adds `body` to `module` as `<base>.<suffix>` (a free name); a reference to it.
fn add_computation(
    module: &mut HloModule,
    mut body: Computation,
    base: &str,
    suffix: &str,
    names: &mut Names,
) -> hlo::module::ComputationRef {
    body.name = names.unique(&format!("{base}.{suffix}"));
    let reference = hlo::module::ComputationRef {
        name: body.name.clone(),
        id: ComputationId(module.computations.len()),
        span: body.span,
    };
    module.computations.push(body);
    reference
}

/// Whether instruction `id` of `c` is an `s32` array that counts positions along
/// `dimension`: an iota, written as one, reshaped by size-1 dimensions (JAX's argsort of a
/// row), or as XLA prints it (a fusion of nothing around one).
fn counts_along(module: &HloModule, c: &Computation, id: InstrId, dimension: i64) -> bool {
    let s32 =
        c.instruction(id).shape.as_array().map(|a| a.element_type) == Some(PrimitiveType::S32);
    s32 && counting_dimension(module, c, id) == Some(dimension)
}

/// The dimension along which instruction `id` of `c` holds `0, 1, 2, ...`, if it is one of
/// the forms [`counts_along`] takes.
fn counting_dimension(module: &HloModule, c: &Computation, id: InstrId) -> Option<i64> {
    let instr = c.instruction(id);
    match instr.opcode {
        Opcode::Iota => instr.int("iota_dimension"),
        Opcode::Fusion if instr.operands.is_empty() => {
            let called = module.computation(instr.called("calls")?.id);
            counting_dimension(module, called, called.root)
        }
        Opcode::Reshape => {
            let operand = *instr.operands.first()?;
            let from = c.instruction(operand).shape.as_array()?;
            let to = instr.shape.as_array()?;
            let counted = counting_dimension(module, c, operand)? as usize;
            // Only size-1 dimensions come or go: the counting one keeps its place among the
            // others.
            let kept = |dims: &[i64]| dims.iter().copied().filter(|&d| d != 1).collect::<Vec<_>>();
            if kept(&from.dims) != kept(&to.dims) || *from.dims.get(counted)? == 1 {
                return None;
            }
            let rank_among = from.dims[..counted].iter().filter(|&&d| d != 1).count();
            let (k, _) = (to.dims.iter().enumerate())
                .filter(|&(_, &d)| d != 1)
                .nth(rank_among)?;
            Some(k as i64)
        }
        _ => None,
    }
}
