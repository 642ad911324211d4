//! The computation partitioner: splits a fusion computation into subgraphs, each
//! of which becomes one private function that computes its root's element at one index.
//!
//! Instructions are visited from the root towards the parameters. An instruction joins the
//! subgraph of its users when they all belong to one subgraph and all read it through the
//! same indexing map (composed from that subgraph's index); otherwise it roots a subgraph of
//! its own. An instruction read at two different indices therefore gets a function that the
//! readers call, instead of being re-emitted once per reading path: code size stays linear in
//! the size of the graph.
//!
//! Parameters and constants belong to no subgraph (unless they are an output of the
//! fusion, or, with XLA's choices, an emitter asks for them): reading them costs one
//! `tensor.extract` or one constant wherever they are used. Comparing maps is structural (after
//! simplification), so two maps that are equal but written differently only cost an extra
//! function, never a wrong result.

use std::fmt::{self, Write as _};

use hlo::graph::ComputationGraph;

use crate::analysis::FusionAnalysis;
use hlo::{ArrayShape, Computation, Diagnostic, InstrId, Opcode, Shape};
use indexing::hlo_indexing::{index_space, output_to_input};
use indexing::{AffineExpr, IndexingMap, delinearize, dim, physical_offset_in};

/// Why an instruction roots a subgraph.
#[derive(Clone, Debug, PartialEq)]
pub enum SplitReason {
    /// The ROOT of the fusion computation.
    FusionRoot,
    /// The emitter asked for it (a hero, or a hero's operand).
    Requested,
    /// Its users belong to different subgraphs: `(user, subgraph index)`.
    UsersInDifferentSubgraphs(Vec<(InstrId, usize)>),
    /// Its users read it through different maps: `(user, map)` for each reading operand slot.
    DifferentIndexing(Vec<(InstrId, IndexingMap)>),
}

/// One function's worth of instructions.
#[derive(Clone, Debug, PartialEq)]
pub struct Subgraph {
    /// The function name: `<computation>_<root>`, sanitized and unique.
    pub name: String,
    pub root: InstrId,
    /// Members in post-order (operands before users), ending at the root.
    pub instructions: Vec<InstrId>,
    /// The function's index arguments: the root's output dimensions (for a tuple ROOT, its
    /// first array element's).
    pub index_space: Vec<i64>,
    pub reason: SplitReason,
}

/// A computation split into subgraphs.
#[derive(Clone, Debug)]
pub struct PartitionedComputation {
    pub subgraphs: Vec<Subgraph>,
    /// `subgraph_of[i]`: the subgraph holding `InstrId(i)`, `None` for parameters, constants
    /// and instructions the root does not reach.
    subgraph_of: Vec<Option<usize>>,
    /// The maps through which each placed instruction reads its operands.
    operand_maps: Vec<Option<Vec<IndexingMap>>>,
}

impl PartitionedComputation {
    /// Partitions the fusion `analysis` describes; `is_root` names instructions that must
    /// root their own subgraph (heroes).
    pub fn new(
        analysis: &FusionAnalysis,
        is_root: impl Fn(InstrId) -> bool,
    ) -> Result<PartitionedComputation, Diagnostic> {
        Partitioner::new(analysis)?.run(is_root)
    }

    /// Partitions `computation` with every fusion output (each element of a tuple ROOT)
    /// rooting a subgraph of its own and no function for the tuple: for emitters that
    /// write each output at an index of its own (the transpose emitter writes side outputs
    /// at the input's index and transposed outputs at the output's), where the loop
    /// emitter's one function for all outputs would need them to be bitcasts of each other.
    pub fn with_output_roots(
        analysis: &FusionAnalysis,
        is_root: impl Fn(InstrId) -> bool,
    ) -> Result<PartitionedComputation, Diagnostic> {
        let mut partitioner = Partitioner::new(analysis)?;
        partitioner.split_outputs = true;
        partitioner.run(is_root)
    }

    /// Partitions a fusion whose `heroes` its emitter writes itself, in place (a scatter, a
    /// dynamic-update-slice): the heroes and everything between them and the ROOT (bitcasts,
    /// the tuple) get no function and are never indexed; each operand of a hero that the
    /// fusion computes roots a subgraph, indexed in its own space (the emitter calls them at
    /// the indices it computes).
    pub fn around_heroes(
        analysis: &FusionAnalysis,
        heroes: &[InstrId],
    ) -> Result<PartitionedComputation, Diagnostic> {
        let computation = analysis.computation;
        let mut partitioner = Partitioner::new(analysis)?;
        let mut written = vec![false; computation.instructions.len()];
        let mut stack = heroes.to_vec();
        while let Some(id) = stack.pop() {
            if !std::mem::replace(&mut written[id.0], true) {
                stack.extend(partitioner.graph.users(id));
            }
        }
        let operands: Vec<InstrId> = heroes
            .iter()
            .flat_map(|&h| computation.instruction(h).operands.iter().copied())
            .collect();
        partitioner.written_by_emitter = written;
        partitioner.run(|id| operands.contains(&id))
    }

    /// The subgraph rooted at `id`, if one is.
    pub fn subgraph_rooted_at(&self, id: InstrId) -> Option<usize> {
        self.subgraphs.iter().position(|s| s.root == id)
    }

    /// The subgraph holding `id`, if any.
    pub fn subgraph_of(&self, id: InstrId) -> Option<usize> {
        self.subgraph_of[id.0]
    }

    /// The maps through which `id` reads its operands (per operand slot), for instructions
    /// in a subgraph. A tuple ROOT reads its elements through bitcasts of its first
    /// element's index, which the per-op analysis alone does not describe.
    pub fn operand_maps(&self, id: InstrId) -> Option<&[IndexingMap]> {
        self.operand_maps[id.0].as_deref()
    }

    /// The subgraph rooted at the computation's ROOT (always the first).
    pub fn root_subgraph(&self) -> &Subgraph {
        &self.subgraphs[0]
    }

    /// A readable listing (`hlo-emit --print-partition`): each subgraph with its root, the
    /// reason it was split off, and its members.
    pub fn describe(&self, computation: &Computation) -> String {
        let name = |id: InstrId| computation.instruction(id).name.as_str();
        let mut out = String::new();
        for (i, s) in self.subgraphs.iter().enumerate() {
            let _ = writeln!(
                out,
                "subgraph {i} @{} root {} index {:?}",
                s.name,
                name(s.root),
                s.index_space
            );
            let _ = write!(out, "  reason: ");
            match &s.reason {
                SplitReason::FusionRoot => out.push_str("the fusion's ROOT\n"),
                SplitReason::Requested => out.push_str("requested by the emitter (hero)\n"),
                SplitReason::UsersInDifferentSubgraphs(users) => {
                    out.push_str("users in different subgraphs:");
                    for (u, sg) in users {
                        let _ = write!(out, " {} (subgraph {sg})", name(*u));
                    }
                    out.push('\n');
                }
                SplitReason::DifferentIndexing(reads) => {
                    out.push_str("read through different indexing maps:\n");
                    for (u, map) in reads {
                        let _ = writeln!(out, "    by {}: {map}", name(*u));
                    }
                }
            }
            let members: Vec<&str> = s.instructions.iter().map(|&id| name(id)).collect();
            let _ = writeln!(out, "  instructions: {}", members.join(", "));
        }
        out
    }
}

impl fmt::Display for SplitReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SplitReason::FusionRoot => write!(f, "fusion root"),
            SplitReason::Requested => write!(f, "requested"),
            SplitReason::UsersInDifferentSubgraphs(_) => write!(f, "users in different subgraphs"),
            SplitReason::DifferentIndexing(_) => write!(f, "different indexing"),
        }
    }
}

/// The dimensions a value of `shape` is indexed by, when it has a single index space.
fn space_of(shape: &Shape) -> Option<Vec<i64>> {
    index_space(shape)
}

/// The first array in a (possibly nested) tuple shape.
pub fn first_array(shape: &Shape) -> Option<&ArrayShape> {
    match shape {
        Shape::Array(a) => Some(a),
        Shape::Tuple(elements) => elements.first().and_then(first_array),
    }
}

/// The map from an index of `from` to the index of `to` that holds the same element of the
/// buffer: linearize in `from`'s physical order, delinearize in `to`'s. How one function
/// computes the outputs of a multi-output fusion whose roots are bitcasts of each other.
pub fn bitcast_map(from: &ArrayShape, to: &ArrayShape) -> Option<IndexingMap> {
    let (from_layout, to_layout) = (from.layout_or_default(), to.layout_or_default());
    if from.element_count() != to.element_count()
        || !from_layout.tiles.is_empty()
        || !to_layout.tiles.is_empty()
    {
        return None;
    }
    let index: Vec<AffineExpr> = (0..from.rank()).map(dim).collect();
    let linear = physical_offset_in(from, &index);
    let mut map = IndexingMap::identity(&from.dims);
    map.results = index_at_offset(linear, to);
    Some(map.simplified())
}

/// The index of the element of `shape` at offset `linear` in its layout's physical order
/// (the layout's tiles aside): `linear` delinearized major to minor, each component at its
/// dimension.
pub(crate) fn index_at_offset(linear: AffineExpr, shape: &ArrayShape) -> Vec<AffineExpr> {
    // Major to minor in `shape`'s layout.
    let order: Vec<usize> = shape
        .layout_or_default()
        .minor_to_major
        .iter()
        .rev()
        .map(|&d| d as usize)
        .collect();
    let physical_dims: Vec<i64> = order.iter().map(|&d| shape.dims[d]).collect();
    let mut index = vec![AffineExpr::Constant(0); shape.rank()];
    for (&d, e) in order.iter().zip(delinearize(linear, &physical_dims)) {
        index[d] = e;
    }
    index
}

/// What the partitioner knows about one instruction once its users are placed.
#[derive(Clone)]
struct Placement {
    subgraph: usize,
    /// From the subgraph's index to this instruction's index.
    map: IndexingMap,
}

struct Partitioner<'c> {
    computation: &'c Computation,
    graph: &'c ComputationGraph,
    /// Per-op output→input maps, in operand order, for every instruction the root reaches.
    per_op: Vec<Option<Vec<IndexingMap>>>,
    placement: Vec<Option<Placement>>,
    subgraphs: Vec<Subgraph>,
    /// See [`PartitionedComputation::with_output_roots`].
    split_outputs: bool,
    /// Per instruction, whether its emitter writes it without a function (see
    /// [`PartitionedComputation::around_heroes`]); empty otherwise.
    written_by_emitter: Vec<bool>,
    /// Whether a parameter or constant the emitter asks for roots a function that reads it
    /// (XLA's choice: `@fusion_p0` for a transpose of parameter `p0`) rather than being
    /// read where it is used (ours: one `tensor.extract`, no call).
    requested_reads: bool,
}

impl<'c> Partitioner<'c> {
    fn new(analysis: &'c FusionAnalysis) -> Result<Partitioner<'c>, Diagnostic> {
        let computation = analysis.computation;
        let n = computation.instructions.len();
        Ok(Partitioner {
            computation,
            graph: &analysis.graph,
            per_op: vec![None; n],
            placement: vec![None; n],
            subgraphs: Vec::new(),
            split_outputs: false,
            written_by_emitter: Vec::new(),
            requested_reads: analysis.choices == crate::Choices::Xla,
        })
    }

    fn unsupported(&self, id: InstrId, message: impl fmt::Display) -> Diagnostic {
        let instr = self.computation.instruction(id);
        Diagnostic::new(instr.spans.whole, format!("unsupported: {message}"))
    }

    fn run(
        mut self,
        is_root: impl Fn(InstrId) -> bool,
    ) -> Result<PartitionedComputation, Diagnostic> {
        let order = self.graph.post_order();
        for &id in order.iter().rev() {
            if self.written_by_emitter.get(id.0) == Some(&true) {
                continue;
            }
            let opcode = self.computation.instruction(id).opcode;
            let root = self.computation.root_instruction();
            let tuple_root = root.opcode == Opcode::Tuple;
            let is_output = id == self.computation.root
                || (self.split_outputs && tuple_root && root.operands.contains(&id));
            // An output that is a parameter or a constant still needs a function that
            // reads it (the fusion is then a copy or a fill), as does one an emitter asks
            // for with XLA's choices.
            let requested_read = self.requested_reads && is_root(id);
            if matches!(opcode, Opcode::Parameter | Opcode::Constant)
                && !is_output
                && !requested_read
            {
                continue;
            }
            if self.split_outputs && tuple_root && id == self.computation.root {
                continue; // its elements root their own subgraphs
            }
            self.per_op[id.0] = Some(self.operand_maps(id)?);
            if is_output {
                self.start_subgraph(id, SplitReason::FusionRoot)?;
            } else if is_root(id) {
                self.start_subgraph(id, SplitReason::Requested)?;
            } else {
                match self.join_or_reason(id) {
                    Ok(placement) => self.placement[id.0] = Some(placement),
                    Err(reason) => self.start_subgraph(id, reason)?,
                }
            }
        }
        let mut subgraph_of = vec![None; self.computation.instructions.len()];
        for &id in &order {
            if let Some(p) = &self.placement[id.0] {
                subgraph_of[id.0] = Some(p.subgraph);
                self.subgraphs[p.subgraph].instructions.push(id);
            }
        }
        Ok(PartitionedComputation {
            subgraphs: self.subgraphs,
            subgraph_of,
            operand_maps: self.per_op,
        })
    }

    /// The maps through which `id` reads its operands. A tuple ROOT reads each element
    /// through the bitcast from its first element (the loop runs over the first output's
    /// index; the other outputs are bitcasts of it in a multi-output loop fusion).
    fn operand_maps(&self, id: InstrId) -> Result<Vec<IndexingMap>, Diagnostic> {
        let instr = self.computation.instruction(id);
        if id == self.computation.root && instr.opcode == Opcode::Tuple {
            let first = self.root_space(id)?;
            let first_shape = first_array(&instr.shape).expect("root_space found an array");
            return instr
                .operands
                .iter()
                .map(|&operand| {
                    let shape = &self.computation.instruction(operand).shape;
                    match space_of(shape) {
                        Some(space) if space == first => Ok(IndexingMap::identity(&first)),
                        _ => first_array(shape)
                            .filter(|_| !shape.is_tuple())
                            .and_then(|a| bitcast_map(first_shape, a))
                            .ok_or_else(|| {
                                self.unsupported(
                                    id,
                                    format!(
                                        "a multi-output fusion whose output {} is not a bitcast of its first output \
                                         (XLA forms none: its multi-output fusions share one loop shape, \
                                         and its loop emitter indexes every output by the first's)",
                                        self.computation.instruction(operand).name
                                    ),
                                )
                            }),
                    }
                })
                .collect();
        }
        output_to_input(instr, self.computation)
            .map_err(|e| self.unsupported(id, e.to_string().trim_start_matches("unsupported: ")))
    }

    /// The index space of the subgraph rooted at `id`.
    fn root_space(&self, id: InstrId) -> Result<Vec<i64>, Diagnostic> {
        let instr = self.computation.instruction(id);
        let space = if id == self.computation.root && instr.opcode == Opcode::Tuple {
            first_array(&instr.shape).map(|a| a.dims.clone())
        } else {
            space_of(&instr.shape)
        };
        space.ok_or_else(|| {
            self.unsupported(
                id,
                format!(
                    "{} '{}' has no single index space (shape {})",
                    instr.opcode, instr.name, instr.shape
                ),
            )
        })
    }

    fn start_subgraph(&mut self, id: InstrId, reason: SplitReason) -> Result<(), Diagnostic> {
        let space = self.root_space(id)?;
        let index = self.subgraphs.len();
        self.subgraphs.push(Subgraph {
            name: self.function_name(id),
            root: id,
            instructions: Vec::new(),
            index_space: space.clone(),
            reason,
        });
        self.placement[id.0] = Some(Placement {
            subgraph: index,
            map: IndexingMap::identity(&space),
        });
        Ok(())
    }

    /// Joins the users' subgraph when they agree on it and on the map; otherwise says why not.
    fn join_or_reason(&self, id: InstrId) -> Result<Placement, SplitReason> {
        let mut reads: Vec<(InstrId, usize, IndexingMap)> = Vec::new();
        for user in self.graph.users(id) {
            let (Some(placement), Some(maps)) = (&self.placement[user.0], &self.per_op[user.0])
            else {
                // A user the root does not reach is dead code.
                continue;
            };
            let operands = &self.computation.instruction(user).operands;
            for (slot, _) in operands.iter().enumerate().filter(|(_, o)| **o == id) {
                let map = placement.map.compose(&maps[slot]).simplified();
                reads.push((user, placement.subgraph, map));
            }
        }
        let (_, first_subgraph, first_map) =
            reads.first().expect("a reached instruction has a user");
        if reads.iter().any(|(_, s, _)| s != first_subgraph) {
            let mut users: Vec<(InstrId, usize)> = reads.iter().map(|(u, s, _)| (*u, *s)).collect();
            users.dedup();
            return Err(SplitReason::UsersInDifferentSubgraphs(users));
        }
        if reads.iter().any(|(_, _, m)| m != first_map) {
            return Err(SplitReason::DifferentIndexing(
                reads.into_iter().map(|(u, _, m)| (u, m)).collect(),
            ));
        }
        Ok(Placement {
            subgraph: *first_subgraph,
            map: first_map.clone(),
        })
    }

    /// `<computation>_<root>` with every character outside `[A-Za-z0-9_]` replaced by `_`,
    /// suffixed to stay unique.
    fn function_name(&self, id: InstrId) -> String {
        let base = sanitize(&format!(
            "{}_{}",
            self.computation.name,
            self.computation.instruction(id).name
        ));
        let mut name = base.clone();
        let mut n = 0;
        while self.subgraphs.iter().any(|s| s.name == name) {
            n += 1;
            name = format!("{base}_{n}");
        }
        name
    }
}

/// A symbol name MLIR prints bare: `[A-Za-z0-9_]`, not starting with a digit.
pub fn sanitize(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.starts_with(|c: char| c.is_ascii_digit()) || out.is_empty() {
        out.insert(0, '_');
    }
    out
}
