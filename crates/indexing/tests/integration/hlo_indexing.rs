//! Brute-force checks of the HLO indexing maps.
//!
//! Every map is compared, on every output index of small shapes (and every value of its
//! range and runtime variables), with an oracle written here from the ops' semantics: for an
//! output element, the set of operand indices it reads is found by testing every operand index
//! against the op's defining relation (`out[k] == in[perm[k]]` for transpose, equal row-major
//! positions for reshape, equal physical offsets for bitcast, ...). A map is right when, for
//! every output index, the operand indices it gives on the points of its domain are exactly
//! that set: so pad and concatenate constraints must exclude precisely the padding and the
//! other operands' elements, and a reduce's range variables must enumerate precisely the
//! folded elements. Fusion maps are checked against the oracle propagated through the graph.

use std::collections::BTreeSet;

use hlo::{AttrValue, Computation, InstrId, Instruction, Opcode, Shape};
use indexing::hlo_indexing::{fusion_indexing, indexing_from, output_to_input};
use indexing::{AffineExpr, IndexingMap, Interval, dim, sym};

type Reads = BTreeSet<Vec<i64>>;

fn computation(text: &str) -> Computation {
    let (_, module) = hlo::load("t.hlo", text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    module.entry_computation().clone()
}

fn id(c: &Computation, name: &str) -> InstrId {
    c.instruction_by_name(name)
        .unwrap_or_else(|| panic!("no instruction {name}"))
}

/// The dimensions of an array, or of the first element of a tuple.
fn dims_of(shape: &Shape) -> Vec<i64> {
    match shape {
        Shape::Array(a) => a.dims.clone(),
        Shape::Tuple(elements) => dims_of(&elements[0]),
    }
}

/// Every point of a box of inclusive ranges, row-major.
fn points(ranges: &[(i64, i64)]) -> Vec<Vec<i64>> {
    let mut all = vec![Vec::new()];
    for &(lo, hi) in ranges {
        all = all
            .into_iter()
            .flat_map(|prefix: Vec<i64>| {
                (lo..=hi).map(move |x| {
                    let mut p = prefix.clone();
                    p.push(x);
                    p
                })
            })
            .collect();
    }
    all
}

fn indices(dims: &[i64]) -> Vec<Vec<i64>> {
    points(&dims.iter().map(|&d| (0, d - 1)).collect::<Vec<_>>())
}

fn row_major(index: &[i64], dims: &[i64]) -> i64 {
    index.iter().zip(dims).fold(0, |acc, (&e, &d)| acc * d + e)
}

// ---- the oracle -----------------------------------------------------------------------

/// Whether output element `out` of `instr` reads element `i` of operand `p`. `starts`: the
/// (clamped) start indices of a dynamic-slice, or of a gather (the same for every row).
///
/// Scalar operands read "everywhere" (a pad value, an initial value, a start index) relate to
/// every output element: their maps are `()` without constraints, which over-approximates the
/// pad value (it is only used at padding positions; the emitter selects).
fn relation(
    c: &Computation,
    instr: &Instruction,
    p: usize,
    out: &[i64],
    i: &[i64],
    starts: &[i64],
) -> bool {
    let operand = c.instruction(instr.operands[p]);
    let in_dims = dims_of(&operand.shape);
    let out_dims = dims_of(&instr.shape);
    let list = |name: &str| instr.int_list(name).unwrap_or(&[]).to_vec();
    match instr.opcode {
        Opcode::Broadcast => {
            let dims = list("dimensions");
            (0..i.len()).all(|k| i[k] == out[dims[k] as usize])
        }
        Opcode::Transpose => {
            let perm = list("dimensions");
            (0..out.len()).all(|k| out[k] == i[perm[k] as usize])
        }
        Opcode::Reshape => row_major(out, &out_dims) == row_major(i, &in_dims),
        Opcode::Bitcast => {
            let (Shape::Array(o), Shape::Array(a)) = (&instr.shape, &operand.shape) else {
                panic!("bitcast of a tuple")
            };
            o.layout_or_default().physical_index(&out_dims, out)
                == a.layout_or_default().physical_index(&in_dims, i)
        }
        Opcode::Slice => {
            let Some(AttrValue::Slice(s)) = instr.attribute("slice").map(|a| &a.value) else {
                panic!("slice=")
            };
            (0..i.len()).all(|k| i[k] == s[k].start + s[k].stride * out[k])
        }
        Opcode::Reverse => {
            let dims = list("dimensions");
            (0..i.len()).all(|k| {
                let reversed = dims.contains(&(k as i64));
                i[k] == if reversed {
                    in_dims[k] - 1 - out[k]
                } else {
                    out[k]
                }
            })
        }
        Opcode::Pad if p == 0 => {
            let Some(AttrValue::Padding(pad)) = instr.attribute("padding").map(|a| &a.value) else {
                panic!("padding=")
            };
            (0..i.len()).all(|k| out[k] == pad[k].low + i[k] * (pad[k].interior + 1))
        }
        Opcode::Pad => true,
        Opcode::Concatenate => {
            let d = list("dimensions")[0] as usize;
            let offset: i64 = instr.operands[..p]
                .iter()
                .map(|&o| dims_of(&c.instruction(o).shape)[d])
                .sum();
            (0..i.len()).all(|k| i[k] + if k == d { offset } else { 0 } == out[k])
        }
        Opcode::Reduce if p < instr.operands.len() / 2 => {
            let reduced = list("dimensions");
            let kept: Vec<usize> = (0..i.len())
                .filter(|&k| !reduced.contains(&(k as i64)))
                .collect();
            kept.iter().zip(out).all(|(&k, &o)| i[k] == o)
        }
        Opcode::Reduce => true,
        Opcode::ReduceWindow if p < instr.operands.len() / 2 => {
            // Operand element i_k sits at position pad_low + i_k * base_dilation of the
            // padded operand; window element w_k of output o_k at o_k * stride +
            // w_k * window_dilation.
            let window = hlo::window::window_of(instr).unwrap();
            window.iter().enumerate().all(|(k, w)| {
                (0..w.size).any(|wk| {
                    out[k] * w.stride + wk * w.window_dilation == w.pad_low + i[k] * w.base_dilation
                })
            })
        }
        Opcode::ReduceWindow => true,
        // The operand is read everywhere (an over-approximation: the emitter selects the
        // update inside its window), the update inside its window.
        Opcode::DynamicUpdateSlice if p == 0 => i == out,
        Opcode::DynamicUpdateSlice if p == 1 => (0..i.len()).all(|k| i[k] == out[k] - starts[k]),
        Opcode::DynamicUpdateSlice => true,
        Opcode::DynamicSlice if p == 0 => (0..i.len()).all(|k| i[k] == out[k] + starts[k]),
        Opcode::DynamicSlice => true,
        Opcode::Gather if p == 0 => (0..i.len()).all(|k| {
            // Index component `j` starts operand dimension `start_index_map[j]`.
            let start = list("start_index_map")
                .iter()
                .position(|&d| d as usize == k)
                .map_or(0, |j| starts[j]);
            i[k] == out[k + 1] + start
        }),
        Opcode::Gather => i[0] == out[0],
        Opcode::BitcastConvert => {
            let n = i.len().min(out.len());
            i[..n] == out[..n]
        }
        Opcode::Tuple => i == out,
        op if op.is_elementwise_unary()
            || op.is_elementwise_binary()
            || matches!(
                op,
                Opcode::Compare | Opcode::Select | Opcode::Clamp | Opcode::Convert
            ) =>
        {
            i == out || i.is_empty()
        }
        op => panic!("the oracle does not know {op}"),
    }
}

/// The indices of every operand that output element `out` reads.
fn oracle(c: &Computation, instr: &Instruction, out: &[i64], starts: &[i64]) -> Vec<Reads> {
    (0..instr.operands.len())
        .map(|p| {
            let in_dims = dims_of(&c.instruction(instr.operands[p]).shape);
            indices(&in_dims)
                .into_iter()
                .filter(|i| relation(c, instr, p, out, i, starts))
                .collect()
        })
        .collect()
}

/// The indices a map gives at output index `out` over its domain, runtime variables set to
/// `rt` (only as many as the map has).
fn map_reads(map: &IndexingMap, out: &[i64], rt: &[i64]) -> Reads {
    let ranges: Vec<(i64, i64)> = map
        .range_vars
        .iter()
        .map(|v| (v.bounds.lo, v.bounds.hi))
        .collect();
    let rt = &rt[..map.rt_vars.len()];
    points(&ranges)
        .into_iter()
        .filter_map(|mut symbols| {
            symbols.extend_from_slice(rt);
            map.contains(out, &symbols).then(|| map.eval(out, &symbols))
        })
        .collect()
}

/// Every assignment of the runtime variables of the map of operand 0 (none if it has none).
fn rt_assignments(maps: &[IndexingMap]) -> Vec<Vec<i64>> {
    let ranges: Vec<(i64, i64)> = maps
        .iter()
        .map(|m| &m.rt_vars)
        .max_by_key(|v| v.len())
        .map(|vars| vars.iter().map(|v| (v.bounds.lo, v.bounds.hi)).collect())
        .unwrap_or_default();
    points(&ranges)
}

/// Compares given per-op maps of `instr` with the oracle on every output index.
fn check_maps(c: &Computation, instr: &Instruction, maps: &[IndexingMap]) -> Result<(), String> {
    let name = &instr.name;
    if maps.len() != instr.operands.len() {
        return Err(format!(
            "{name}: {} maps for {} operands",
            maps.len(),
            instr.operands.len()
        ));
    }
    let out_dims = dims_of(&instr.shape);
    for (p, map) in maps.iter().enumerate() {
        let bounds: Vec<Interval> = map.dims.iter().map(|v| v.bounds).collect();
        let expected: Vec<Interval> = out_dims.iter().map(|&n| Interval::index_range(n)).collect();
        if bounds != expected {
            return Err(format!("{name}: map {p} has dimension ranges {bounds:?}"));
        }
        let in_rank = dims_of(&c.instruction(instr.operands[p]).shape).len();
        if map.results.len() != in_rank {
            return Err(format!("{name}: map {p} has {} results", map.results.len()));
        }
    }
    for rt in rt_assignments(maps) {
        for out in indices(&out_dims) {
            let expected = oracle(c, instr, &out, &rt);
            for (p, map) in maps.iter().enumerate() {
                let got = map_reads(map, &out, &rt);
                if got != expected[p] {
                    return Err(format!(
                        "{name}: operand {p} at output {out:?} (rt {rt:?}): the map gives \
                         {got:?}, the op reads {:?}\nmap: {map:?}",
                        expected[p]
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Checks the analysis's maps for every instruction of the entry computation that has
/// operands; returns how many instructions were checked.
fn check_all(text: &str) -> usize {
    let c = computation(text);
    let mut checked = 0;
    for instr in &c.instructions {
        if instr.operands.is_empty()
            || instr.opcode == Opcode::Tuple && c.root_instruction() == instr
        {
            continue;
        }
        let maps = output_to_input(instr, &c).unwrap_or_else(|e| panic!("{e}"));
        check_maps(&c, instr, &maps).unwrap_or_else(|e| panic!("{e}"));
        checked += 1;
    }
    checked
}

// ---- per-op maps ------------------------------------------------------------------------

#[test]
fn elementwise_ops() {
    let n = check_all(
        "e {
          p0 = f32[2,3] parameter(0)
          p1 = f32[2,3] parameter(1)
          pr = pred[] parameter(2)
          s = f32[] parameter(3)
          pm = pred[2,3] parameter(4)
          add = f32[2,3] add(p0, p1)
          neg = f32[2,3] negate(p0)
          cp = f32[2,3] copy(p0)
          cmp = pred[2,3] compare(p0, p1), direction=LT
          sel = f32[2,3] select(pr, p0, p1)
          selm = f32[2,3] select(pm, p0, p1)
          cl = f32[2,3] clamp(s, p0, s)
          clm = f32[2,3] clamp(p1, p0, p1)
          cv = s32[2,3] convert(p0)
          bc = s32[2,3] bitcast-convert(p0)
          narrow = u16[2,3,2] bitcast-convert(p0)
          wide = f32[2,3] bitcast-convert(narrow)
          ROOT sc = f32[] add(s, s)
        }",
    );
    assert_eq!(n, 13);
}

#[test]
fn scalar_operands_of_select_and_clamp_map_to_nothing() {
    let c = computation(
        "e {
          p = f32[2,3] parameter(0)
          pr = pred[] parameter(1)
          s = f32[] parameter(2)
          sel = f32[2,3] select(pr, p, p)
          ROOT cl = f32[2,3] clamp(s, sel, s)
        }",
    );
    let maps = output_to_input(c.instruction(id(&c, "cl")), &c).unwrap();
    assert!(maps[0].results.is_empty() && maps[2].results.is_empty());
    assert_eq!(maps[1], IndexingMap::identity(&[2, 3]));
    let maps = output_to_input(c.instruction(id(&c, "sel")), &c).unwrap();
    assert!(maps[0].results.is_empty());
}

#[test]
fn broadcast() {
    check_all(
        "e {
          v = f32[3] parameter(0)
          s = f32[] parameter(1)
          m = f32[2,3] parameter(2)
          a = f32[2,3,4] broadcast(v), dimensions={1}
          b = f32[2,3] broadcast(s), dimensions={}
          c = f32[2,4,3] broadcast(m), dimensions={0,2}
          ROOT d = f32[3,2] broadcast(v), dimensions={0}
        }",
    );
}

#[test]
fn transpose() {
    check_all(
        "e {
          p = f32[2,3,4] parameter(0)
          a = f32[4,2,3] transpose(p), dimensions={2,0,1}
          b = f32[3,4,2] transpose(p), dimensions={1,2,0}
          c = f32[2,4,3] transpose(p), dimensions={0,2,1}
          ROOT d = f32[2,3,4] transpose(p), dimensions={0,1,2}
        }",
    );
}

#[test]
fn reshape_expand_collapse_and_general() {
    check_all(
        "e {
          p = f32[2,3,4] parameter(0)
          q = f32[12] parameter(1)
          r = f32[4,6] parameter(2)
          one = f32[1] parameter(3)
          z = f32[2,1,6] parameter(4)
          collapse = f32[6,4] reshape(p)
          collapse_all = f32[24] reshape(p)
          general = f32[4,6] reshape(p)
          general2 = f32[3,8] reshape(r)
          general3 = f32[3,2,4] reshape(p)
          expand = f32[2,1,3,2] reshape(q)
          expand2 = f32[2,3,2,2] reshape(p)
          units = f32[3,1,4] reshape(z)
          to_scalar = f32[] reshape(one)
          from_scalar = f32[1,1] reshape(to_scalar)
          ROOT swap = f32[6,2,2] reshape(r)
        }",
    );
}

#[test]
fn reshape_expressions_stay_local() {
    let c = computation(
        "e {
          p = f32[2,3,4] parameter(0)
          ROOT r = f32[6,4] reshape(p)
        }",
    );
    let maps = output_to_input(c.root_instruction(), &c).unwrap();
    assert_eq!(
        maps[0].results,
        vec![dim(0).floor_div(3), dim(0).modulo(3), dim(1)]
    );
}

#[test]
fn bitcast_follows_layouts() {
    check_all(
        "e {
          p = f32[2,3]{1,0} parameter(0)
          q = f32[2,3]{0,1} parameter(1)
          r = f32[2,3,4]{0,2,1} parameter(2)
          s = f32[4,6]{0,1} parameter(3)
          a = f32[3,2]{1,0} bitcast(p)
          b = f32[3,2]{1,0} bitcast(q)
          c = f32[6,4]{0,1} bitcast(r)
          d = f32[2,2,6]{1,2,0} bitcast(s)
          e = s32[2,3]{0,1} bitcast(q)
          f = f32[6]{0} bitcast(q)
          ROOT g = f32[2,3,4]{2,1,0} bitcast(r)
        }",
    );
}

#[test]
fn slice() {
    check_all(
        "e {
          p = f32[7,5] parameter(0)
          a = f32[3,5] slice(p), slice={[1:6:2], [0:5:1]}
          b = f32[1,2] slice(p), slice={[6:7:1], [1:5:3]}
          ROOT c = f32[3,2] slice(p), slice={[0:7:3], [2:4:1]}
        }",
    );
}

#[test]
fn reverse() {
    check_all(
        "e {
          p = f32[3,4] parameter(0)
          a = f32[3,4] reverse(p), dimensions={0}
          b = f32[3,4] reverse(p), dimensions={0,1}
          ROOT c = f32[3,4] reverse(p), dimensions={}
        }",
    );
}

#[test]
fn pad_constraints_select_the_operand_elements() {
    check_all(
        "e {
          p = f32[3,2] parameter(0)
          one = f32[1,2] parameter(2)
          v = f32[] parameter(1)
          a = f32[8,3] pad(p, v), padding=1_2_1x0_1_0
          b = f32[7,3] pad(p, v), padding=-1_1_2x2_-1
          c = f32[3,2] pad(p, v), padding=0_0x0_0
          d = f32[4,2] pad(one, v), padding=1_2_3x0_0_0
          ROOT e = f32[2,2] pad(p, v), padding=-1_0_0x0_0
        }",
    );
    // Independently of the oracle: the operand is read exactly at the non-padding elements.
    let c = computation(
        "e {
          p = f32[3,2] parameter(0)
          v = f32[] parameter(1)
          ROOT a = f32[8,3] pad(p, v), padding=1_2_1x0_1_0
        }",
    );
    let maps = output_to_input(c.root_instruction(), &c).unwrap();
    let mut from_operand = 0;
    for out in indices(&[8, 3]) {
        let (r, col) = (out[0], out[1]);
        let is_padding = !(1..=5).contains(&r) || (r - 1) % 2 != 0 || col > 1;
        assert_eq!(maps[0].contains(&out, &[]), !is_padding, "{out:?}");
        if !is_padding {
            assert_eq!(maps[0].eval(&out, &[]), vec![(r - 1) / 2, col]);
            from_operand += 1;
        }
        assert!(maps[1].contains(&out, &[]) && maps[1].results.is_empty());
    }
    assert_eq!(from_operand, 6);
}

#[test]
fn concatenate_constraints_select_one_operand() {
    check_all(
        "e {
          a = f32[2,3] parameter(0)
          b = f32[2,1] parameter(1)
          c = f32[2,2] parameter(2)
          d = f32[1,3] parameter(3)
          x = f32[2,6] concatenate(a, b, c), dimensions={1}
          y = f32[5,3] concatenate(a, d, a), dimensions={0}
          ROOT z = f32[2,3] concatenate(a), dimensions={1}
        }",
    );
    // Each output element is in the domain of exactly one operand's map.
    let c = computation(
        "e {
          a = f32[2,3] parameter(0)
          b = f32[2,1] parameter(1)
          c = f32[2,2] parameter(2)
          ROOT x = f32[2,6] concatenate(a, b, c), dimensions={1}
        }",
    );
    let maps = output_to_input(c.root_instruction(), &c).unwrap();
    for out in indices(&[2, 6]) {
        let owners: Vec<usize> = (0..3).filter(|&k| maps[k].contains(&out, &[])).collect();
        let expected = match out[1] {
            0..=2 => 0,
            3 => 1,
            _ => 2,
        };
        assert_eq!(owners, vec![expected], "{out:?}");
    }
}

#[test]
fn reduce_symbols_enumerate_the_reduced_elements() {
    check_all(
        &[
            testkit::add_f32!(),
            testkit::add2!(),
            "ENTRY e {
          p = f32[2,3,4] parameter(0)
          q = s32[2,3,4] parameter(1)
          c0 = f32[] constant(0)
          c1 = s32[] constant(0)
          a = f32[2,4] reduce(p, c0), dimensions={1}, to_apply=add
          b = f32[3] reduce(p, c0), dimensions={0,2}, to_apply=add
          c = f32[3] reduce(p, c0), dimensions={2,0}, to_apply=add
          d = f32[] reduce(p, c0), dimensions={0,1,2}, to_apply=add
          e = f32[2,3,4] reduce(p, c0), dimensions={}, to_apply=add
          ROOT v = (f32[2,4], s32[2,4]) reduce(p, q, c0, c1), dimensions={1}, to_apply=add2
        }",
        ]
        .concat(),
    );
}

#[test]
fn iota_constant_and_parameter_have_no_operand_maps() {
    let c = computation(
        "e {
          p = f32[2] parameter(0)
          k = f32[2] constant({1, 2})
          i = f32[2] iota(), iota_dimension=0
          a = f32[2] add(p, k)
          ROOT b = f32[2] add(a, i)
        }",
    );
    for name in ["p", "k", "i"] {
        assert_eq!(
            output_to_input(c.instruction(id(&c, name)), &c).unwrap(),
            vec![]
        );
    }
}

#[test]
fn dynamic_slice_runtime_variables() {
    let text = "e {
          p = f32[5,4] parameter(0)
          i = s32[] parameter(1)
          j = s32[] parameter(2)
          a = f32[2,3] dynamic-slice(p, i, j), dynamic_slice_sizes={2,3}
          ROOT b = f32[5,1] dynamic-slice(p, i, j), dynamic_slice_sizes={5,1}
        }";
    assert_eq!(check_all(text), 2);
    // The runtime variables range over exactly the starts XLA clamps into.
    let c = computation(text);
    let maps = output_to_input(c.instruction(id(&c, "a")), &c).unwrap();
    let bounds: Vec<Interval> = maps[0].rt_vars.iter().map(|v| v.bounds).collect();
    assert_eq!(bounds, vec![Interval::new(0, 3), Interval::new(0, 1)]);
    for start in -3..8 {
        let clamped = [start.clamp(0, 3), start.clamp(0, 1)];
        assert!(maps[0].contains(&[1, 2], &clamped));
        assert_eq!(
            maps[0].eval(&[1, 2], &clamped),
            vec![clamped[0] + 1, clamped[1] + 2]
        );
    }
    assert!(maps[1].results.is_empty() && maps[2].results.is_empty());
}

#[test]
fn reduce_window_symbols_walk_the_window_and_constraints_skip_padding() {
    let text = [testkit::add_f32!(), testkit::add2!(), "ENTRY e {
          p = f32[4,5] parameter(0)
          q = s32[4,5] parameter(1)
          c0 = f32[] constant(0)
          c1 = s32[] constant(0)
          a = f32[4,3] reduce-window(p, c0), window={size=1x3 stride=1x2 pad=0_0x1_1}, to_apply=add
          b = f32[3,4] reduce-window(p, c0), window={size=2x2}, to_apply=add
          c = f32[2,9] reduce-window(p, c0), window={size=2x3 stride=2x1 pad=1_0x0_2 lhs_dilate=1x2 rhs_dilate=2x1}, to_apply=add
          d = f32[2,5] reduce-window(p, c0), window={size=2x1 pad=-1_0x0_0}, to_apply=add
          ROOT v = (f32[3,4], s32[3,4]) reduce-window(p, q, c0, c1), window={size=2x2}, to_apply=add2
        }"]
    .concat();
    assert_eq!(check_all(&text), 5);
    // XLA's form: a symbol per window dimension of size > 1, no constraint without padding.
    let c = computation(&text);
    let maps = output_to_input(c.instruction(id(&c, "b")), &c).unwrap();
    assert_eq!(maps[0].results, vec![dim(0) + sym(0), dim(1) + sym(1)]);
    assert!(maps[0].constraints.is_empty(), "{:?}", maps[0]);
    let maps = output_to_input(c.instruction(id(&c, "a")), &c).unwrap();
    assert_eq!(maps[0].range_vars.len(), 1);
    assert_eq!(maps[0].results, vec![dim(0), dim(1) * 2 + sym(0) + -1]);
    assert_eq!(
        maps[0].constraints,
        vec![(dim(1) * 2 + sym(0), Interval::new(1, 5))]
    );
    assert!(maps[1].results.is_empty());
}

#[test]
fn dynamic_update_slice_reads_the_update_inside_its_window() {
    let text = "e {
          p = f32[5,4] parameter(0)
          u = f32[2,3] parameter(1)
          w = f32[5,1] parameter(2)
          i = s32[] parameter(3)
          j = s32[] parameter(4)
          a = f32[5,4] dynamic-update-slice(p, u, i, j)
          ROOT b = f32[5,4] dynamic-update-slice(p, w, i, j)
        }";
    assert_eq!(check_all(text), 2);
    let c = computation(text);
    let maps = output_to_input(c.instruction(id(&c, "a")), &c).unwrap();
    assert_eq!(maps[0], IndexingMap::identity(&[5, 4]));
    let bounds: Vec<Interval> = maps[1].rt_vars.iter().map(|v| v.bounds).collect();
    assert_eq!(bounds, vec![Interval::new(0, 3), Interval::new(0, 1)]);
    assert!(maps[2].results.is_empty() && maps[3].results.is_empty());
    // The update covers dimension 0 of `b`: its start is always 0 and needs no constraint.
    let maps = output_to_input(c.instruction(id(&c, "b")), &c).unwrap();
    assert_eq!(maps[1].results[0], dim(0));
    assert_eq!(maps[1].constraints.len(), 1, "{:?}", maps[1]);
}

#[test]
fn canonical_gather() {
    check_all(
        "e {
          p = f32[5,4] parameter(0)
          idx = s32[3,1] parameter(1)
          q = f32[4,5,3] parameter(2)
          idx2 = s32[2,2] parameter(3)
          a = f32[3,2,4] gather(p, idx), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={2,4}
          b = f32[2,2,3,3] gather(q, idx2), offset_dims={1,2,3}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,3,3}
          ROOT c = f32[2,3,2,2] gather(q, idx2), offset_dims={1,2,3}, collapsed_slice_dims={}, start_index_map={2,0}, index_vector_dim=1, slice_sizes={3,2,2}
        }",
    );
}

#[test]
fn tuple_and_get_tuple_element() {
    let c = computation(
        &[
            testkit::add2!(),
            "ENTRY e {
          p = f32[2,3] parameter(0)
          q = s32[2,3] parameter(1)
          c0 = f32[] constant(0)
          c1 = s32[] constant(0)
          r = (f32[2], s32[2]) reduce(p, q, c0, c1), dimensions={1}, to_apply=add2
          g = s32[2] get-tuple-element(r), index=1
          t = (f32[2,3], s32[2,3]) tuple(p, q)
          ROOT h = f32[2,3] get-tuple-element(t), index=0
        }",
        ]
        .concat(),
    );
    for name in ["g", "h"] {
        let instr = c.instruction(id(&c, name));
        let maps = output_to_input(instr, &c).unwrap();
        assert_eq!(maps, vec![IndexingMap::identity(&dims_of(&instr.shape))]);
    }
    let t = c.instruction(id(&c, "t"));
    check_maps(&c, t, &output_to_input(t, &c).unwrap()).unwrap();
}

// ---- the checks can fail ------------------------------------------------------------------

#[test]
fn the_oracle_rejects_wrong_maps() {
    let c = computation(concat!(
        testkit::add_f32!(),
        "        ENTRY e {
          p = f32[3,2] parameter(0)
          v = f32[] parameter(1)
          q = f32[2,2] parameter(2)
          i = s32[] parameter(3)
          t = f32[2,3] transpose(p), dimensions={1,0}
          pad = f32[8,3] pad(p, v), padding=1_2_1x0_1_0
          cat = f32[5,2] concatenate(p, q), dimensions={0}
          red = f32[3] reduce(p, v), dimensions={1}, to_apply=add
          rw = f32[2,2] reduce-window(p, v), window={size=2x1 pad=0_0x0_0}, to_apply=add
          rwp = f32[2,2] reduce-window(p, v), window={size=2x2 pad=0_0x1_0}, to_apply=add
          dus = f32[3,2] dynamic-update-slice(p, q, i, i)
          ROOT ds = f32[2,2] dynamic-slice(p, i, i), dynamic_slice_sizes={2,2}
        }"
    ));
    let get = |name: &str| {
        let instr = c.instruction(id(&c, name));
        (instr, output_to_input(instr, &c).unwrap())
    };
    let rejects = |instr: &Instruction, maps: Vec<IndexingMap>| {
        assert!(
            check_maps(&c, instr, &maps).is_err(),
            "{}: {maps:?}",
            instr.name
        );
    };
    for name in ["t", "pad", "cat", "red", "ds", "rw", "rwp", "dus"] {
        let (instr, maps) = get(name);
        check_maps(&c, instr, &maps).unwrap();
    }
    // A transpose read the other way round.
    let (t, mut maps) = get("t");
    maps[0].results.swap(0, 1);
    maps[0].dims.swap(0, 1);
    for (v, n) in maps[0].dims.iter_mut().zip([2, 3]) {
        v.bounds = Interval::index_range(n);
    }
    rejects(t, maps);
    // A pad without its constraints reads the operand at padding positions.
    let (pad, mut maps) = get("pad");
    maps[0].constraints.clear();
    rejects(pad, maps.clone());
    // ... or with the interior constraint only.
    let (_, mut full) = get("pad");
    full[0].constraints.retain(|(_, b)| b.lo == b.hi);
    rejects(pad, full);
    // A concatenate whose operand range is off by one.
    let (cat, mut maps) = get("cat");
    maps[1].constraints[0].1 = Interval::new(2, 4);
    rejects(cat, maps);
    // A reduce that folds one element too few.
    let (red, mut maps) = get("red");
    maps[0].range_vars[0].bounds = Interval::new(0, 0);
    rejects(red, maps);
    // A dynamic-slice that ignores its start (in dimension 0; in dimension 1 the slice
    // covers the operand, so the start is always 0).
    let (ds, mut maps) = get("ds");
    maps[0].results[0] = dim(0);
    rejects(ds, maps);
    // A reduce-window whose window is one element short.
    let (rw, mut maps) = get("rw");
    maps[0].range_vars[0].bounds = Interval::new(0, 0);
    rejects(rw, maps);
    // A reduce-window that reads the operand at its padding.
    let (rwp, mut maps) = get("rwp");
    maps[0].constraints.clear();
    rejects(rwp, maps);
    // A dynamic-update-slice that reads its update outside the window.
    let (dus, mut maps) = get("dus");
    maps[1].constraints.clear();
    rejects(dus, maps);
}

// ---- refusals -----------------------------------------------------------------------------

#[test]
fn unsupported_ops_are_named() {
    let c = computation(
        "e {
          a = f32[2,3] parameter(0)
          b = f32[3,4] parameter(1)
          t = f32[4,4]{1,0:T(2,2)} parameter(2)
          p = f32[5,4] parameter(3)
          idx = s32[3,1] parameter(4)
          d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
          bt = f32[16]{0} bitcast(t)
          g = f32[3,4] gather(p, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
          ROOT r = f32[3,4] negate(g)
        }",
    );
    let err = |name: &str| output_to_input(c.instruction(id(&c, name)), &c).unwrap_err();
    assert!(
        err("bt").to_string().contains("tiled layout"),
        "{}",
        err("bt")
    );
    assert!(
        err("g").to_string().contains("canonical gather"),
        "{}",
        err("g")
    );
    let e = fusion_indexing(&c).unwrap_err();
    assert_eq!(e.instruction, "g");
}

#[test]
fn dot_operands_read_the_contracted_dimensions_through_range_variables() {
    let c = computation(
        "e {
          a = f32[5,2,3] parameter(0)
          b = f32[3,5,4] parameter(1)
          ROOT d = f32[5,2,4] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_contracting_dims={0}
        }",
    );
    let maps = output_to_input(c.instruction(id(&c, "d")), &c).unwrap();
    assert_eq!(
        maps[0].to_string(),
        "(d0, d1, d2)[s0] -> (d0, d1, s0), domain: d0 in [0, 4], d1 in [0, 1], d2 in [0, 3], s0 in [0, 2]"
    );
    assert_eq!(
        maps[1].to_string(),
        "(d0, d1, d2)[s0] -> (s0, d0, d2), domain: d0 in [0, 4], d1 in [0, 1], d2 in [0, 3], s0 in [0, 2]"
    );
}

// ---- composition along a fusion --------------------------------------------------------

/// The oracle propagated from `roots` (each read at `out`) to every instruction.
fn fusion_oracle(c: &Computation, roots: &[InstrId], out: &[i64], starts: &[i64]) -> Vec<Reads> {
    let mut reads = vec![Reads::new(); c.instructions.len()];
    for r in roots {
        reads[r.0].insert(out.to_vec());
    }
    // Instruction order is a topological order in these tests (operands defined first).
    for u in (0..c.instructions.len()).rev() {
        let instr = &c.instructions[u];
        let here: Vec<Vec<i64>> = reads[u].iter().cloned().collect();
        for j in here {
            for (p, set) in oracle(c, instr, &j, starts).into_iter().enumerate() {
                reads[instr.operands[p].0].extend(set);
            }
        }
    }
    reads
}

/// Compares the composed maps of every instruction with the propagated oracle on every
/// output index, for every assignment of `starts` (the start indices of the one dynamic
/// op in the fusion, if any).
fn check_fusion(
    c: &Computation,
    roots: &[InstrId],
    maps: &[Vec<IndexingMap>],
    starts: &[Vec<i64>],
) {
    let out_dims = dims_of(&c.instruction(roots[0]).shape);
    let no_starts = [Vec::new()];
    let starts = if starts.is_empty() {
        &no_starts[..]
    } else {
        starts
    };
    for rt in starts {
        for out in indices(&out_dims) {
            let expected = fusion_oracle(c, roots, &out, rt);
            for (i, instr) in c.instructions.iter().enumerate() {
                if roots.len() > 1 && InstrId(i) == c.root {
                    continue;
                }
                let got: Reads = maps[i]
                    .iter()
                    .flat_map(|m| map_reads(m, &out, rt))
                    .collect();
                assert_eq!(
                    got, expected[i],
                    "{} at output {out:?} (starts {rt:?}); maps: {:#?}",
                    instr.name, maps[i]
                );
            }
        }
    }
}

fn check_fusion_text(text: &str, starts: &[Vec<i64>]) -> (Computation, Vec<Vec<IndexingMap>>) {
    let c = computation(text);
    let analysis = fusion_indexing(&c).unwrap_or_else(|e| panic!("{e}"));
    check_fusion(&c, &analysis.roots, &analysis.maps, starts);
    (c, analysis.maps)
}

#[test]
fn log_is_read_through_two_maps() {
    let (c, maps) = check_fusion_text(
        "f {
          p = f32[3,3] parameter(0)
          l = f32[3,3] log(p)
          t = f32[3,3] transpose(l), dimensions={1,0}
          ROOT a = f32[3,3] add(l, t)
        }",
        &[],
    );
    let of = |name: &str| &maps[id(&c, name).0];
    let identity = IndexingMap::identity(&[3, 3]);
    assert_eq!(of("a"), std::slice::from_ref(&identity));
    assert_eq!(of("t"), std::slice::from_ref(&identity));
    assert_eq!(of("l").len(), 2, "{:#?}", of("l"));
    assert_eq!(of("p").len(), 2);
    assert!(of("l").contains(&identity));
    let transposed = of("l").iter().find(|m| **m != identity).unwrap();
    assert_eq!(transposed.results, vec![dim(1), dim(0)]);
}

#[test]
fn same_map_through_two_paths_is_kept_once() {
    let (c, maps) = check_fusion_text(
        "f {
          p = f32[3,4] parameter(0)
          l = f32[3,4] log(p)
          e = f32[3,4] exponential(l)
          n = f32[3,4] negate(l)
          ROOT a = f32[3,4] add(e, n)
        }",
        &[],
    );
    assert_eq!(maps[id(&c, "l").0], vec![IndexingMap::identity(&[3, 4])]);
    assert_eq!(maps[id(&c, "p").0], vec![IndexingMap::identity(&[3, 4])]);
}

#[test]
fn broadcast_reshape_slice_chain_equals_direct_evaluation() {
    let (c, maps) = check_fusion_text(
        "f {
          p = f32[3] parameter(0)
          b = f32[3,4] broadcast(p), dimensions={0}
          r = f32[2,6] reshape(b)
          ROOT s = f32[2,3] slice(r), slice={[0:2:1], [1:6:2]}
        }",
        &[],
    );
    let pm = &maps[id(&c, "p").0];
    assert_eq!(pm.len(), 1);
    for out in indices(&[2, 3]) {
        // slice → reshape → broadcast, by hand.
        let (r0, r1) = (out[0], 1 + 2 * out[1]);
        let linear = r0 * 6 + r1;
        let (b0, _b1) = (linear / 4, linear % 4);
        assert!(pm[0].contains(&out, &[]));
        assert_eq!(pm[0].eval(&out, &[]), vec![b0], "{out:?}");
    }
}

#[test]
fn composed_constraints_and_symbols() {
    // Pad and concatenate constraints carried through a reduce, transpose and slices.
    check_fusion_text(
        concat!(
            testkit::add_f32!(),
            "        ENTRY f {
          p = f32[3,2] parameter(0)
          v = f32[] parameter(1)
          pad = f32[8,3] pad(p, v), padding=1_2_1x0_1_0
          s1 = f32[3,3] slice(pad), slice={[0:3:1], [0:3:1]}
          s2 = f32[2,3] slice(pad), slice={[5:8:2], [0:3:1]}
          cat = f32[5,3] concatenate(s1, s2), dimensions={0}
          t = f32[3,5] transpose(cat), dimensions={1,0}
          ROOT red = f32[3] reduce(t, v), dimensions={1}, to_apply=add
        }"
        ),
        &[],
    );
    // A concatenation of two slices of one parameter: it is read through two maps.
    let (c, maps) = check_fusion_text(
        "f {
          p = f32[6,2] parameter(0)
          a = f32[2,2] slice(p), slice={[0:2:1], [0:2:1]}
          b = f32[3,2] slice(p), slice={[3:6:1], [0:2:1]}
          cat = f32[5,2] concatenate(a, b), dimensions={0}
          t = f32[2,5] transpose(cat), dimensions={1,0}
          ROOT r = f32[2,5] reverse(t), dimensions={1}
        }",
        &[],
    );
    assert_eq!(maps[id(&c, "p").0].len(), 2);
}

#[test]
fn composed_runtime_and_range_variables() {
    // Range variables of two reduces and the runtime variables of a dynamic-slice.
    let text = concat!(
        testkit::add_f32!(),
        "        ENTRY f {
          p = f32[4,5,3] parameter(0)
          i = s32[] parameter(1)
          z = f32[] constant(0)
          r1 = f32[4,5] reduce(p, z), dimensions={2}, to_apply=add
          ds = f32[2,3] dynamic-slice(r1, i, i), dynamic_slice_sizes={2,3}
          b = f32[2,3,2] broadcast(ds), dimensions={0,1}
          ROOT r2 = f32[3] reduce(b, z), dimensions={0,2}, to_apply=add
        }"
    );
    let starts = points(&[(0, 2), (0, 2)]);
    let (c, maps) = check_fusion_text(text, &starts);
    let pm = &maps[id(&c, "p").0];
    assert_eq!(pm.len(), 1);
    assert_eq!(pm[0].range_vars.len(), 3);
    assert_eq!(pm[0].rt_vars.len(), 2);
}

#[test]
fn composed_reduce_window_and_dynamic_update_slice() {
    let text = concat!(
        testkit::add_f32!(),
        "        ENTRY f {
          p = f32[4,6] parameter(0)
          u = f32[2,2] parameter(1)
          i = s32[] parameter(2)
          z = f32[] constant(0)
          e = f32[4,6] exponential(p)
          rw = f32[4,3] reduce-window(e, z), window={size=1x3 stride=1x2 pad=0_0x1_0}, to_apply=add
          n = f32[2,2] negate(u)
          ROOT d = f32[4,3] dynamic-update-slice(rw, n, i, i)
        }"
    );
    let starts = points(&[(0, 2), (0, 1)]);
    let (c, maps) = check_fusion_text(text, &starts);
    let pm = &maps[id(&c, "p").0];
    assert_eq!((pm.len(), pm[0].range_vars.len()), (1, 1));
    assert_eq!(maps[id(&c, "u").0][0].rt_vars.len(), 2);
}

#[test]
fn multi_output_roots() {
    // A tuple root of one shape: every element starts from the identity.
    let (c, maps) = check_fusion_text(
        "f {
          p = f32[2,3] parameter(0)
          e = f32[2,3] exponential(p)
          t = f32[3,2] transpose(p), dimensions={1,0}
          b = f32[2,3] bitcast(t)
          ROOT tuple = (f32[2,3], f32[2,3], f32[2,3]) tuple(e, b, p)
        }",
        &[],
    );
    assert_eq!(maps[id(&c, "p").0].len(), 2);
    assert!(maps[c.root.0].is_empty());
    // Roots of different shapes: one analysis per root.
    let c = computation(concat!(
        testkit::add_f32!(),
        "        ENTRY f {
          p = f32[2,3] parameter(0)
          z = f32[] constant(0)
          n = f32[2,3] negate(p)
          r = f32[2] reduce(n, z), dimensions={1}, to_apply=add
          ROOT tuple = (f32[2], f32[2,3]) tuple(r, n)
        }"
    ));
    let analysis = fusion_indexing(&c).unwrap();
    assert_eq!(analysis.roots, vec![id(&c, "r"), id(&c, "n")]);
    for root in [id(&c, "r"), id(&c, "n")] {
        let maps = indexing_from(&c, root).unwrap();
        check_fusion(&c, &[root], &maps, &[]);
    }
    // Both roots' maps are gathered for p: through the reduce and directly.
    let pm = analysis.maps(id(&c, "p"));
    assert_eq!(pm.len(), 2);
    assert!(pm.iter().any(|m| m.range_vars.len() == 1));
    assert!(pm.contains(&IndexingMap::identity(&[2, 3])));
}

#[test]
fn composed_maps_substitute_results() {
    // The composition's results are the producer's results of the consumer's results.
    let c = computation(
        "f {
          p = f32[12] parameter(0)
          r = f32[3,4] reshape(p)
          ROOT t = f32[4,3] transpose(r), dimensions={1,0}
        }",
    );
    let maps = fusion_indexing(&c).unwrap();
    let pm = maps.maps(id(&c, "p"));
    assert_eq!(pm.len(), 1);
    let expected: AffineExpr = dim(1) * 4 + dim(0);
    for out in indices(&[4, 3]) {
        assert_eq!(pm[0].eval(&out, &[]), vec![expected.eval(&out, &[])]);
    }
}

// ---- seeded random shapes ---------------------------------------------------------------

fn list(values: &[i64]) -> String {
    values
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// `f32[2,3]{0,1}` with the given minor-to-major order (row-major when `None`).
fn array_text(dims: &[i64], minor_to_major: Option<&[i64]>) -> String {
    match minor_to_major {
        Some(order) => format!("f32[{}]{{{}}}", list(dims), list(order)),
        None => format!("f32[{}]", list(dims)),
    }
}

/// Up to `max_rank` dimensions of 1..=4 elements.
fn random_dims(rng: &mut fastrand::Rng, max_rank: usize) -> Vec<i64> {
    (0..rng.usize(0..=max_rank))
        .map(|_| rng.i64(1..=4))
        .collect()
}

/// A random factorization of `total` into dimensions, with some unit dimensions.
fn random_factorization(rng: &mut fastrand::Rng, mut total: i64) -> Vec<i64> {
    let mut dims = Vec::new();
    while total > 1 {
        let divisors: Vec<i64> = (2..=total).filter(|d| total % d == 0).collect();
        let d = divisors[rng.usize(..divisors.len().min(3))];
        dims.push(d);
        total /= d;
    }
    for _ in 0..rng.usize(0..=1) {
        let at = rng.usize(0..=dims.len());
        dims.insert(at, 1);
    }
    rng.shuffle(&mut dims);
    dims
}

fn random_permutation(rng: &mut fastrand::Rng, rank: usize) -> Vec<i64> {
    let mut perm: Vec<i64> = (0..rank as i64).collect();
    rng.shuffle(&mut perm);
    perm
}

#[test]
fn random_reshapes_and_bitcasts() {
    let mut rng = fastrand::Rng::with_seed(4);
    for _ in 0..300 {
        let dims = random_dims(&mut rng, 4);
        let total: i64 = dims.iter().product();
        let result = random_factorization(&mut rng, total);
        let (in_order, out_order) = (
            random_permutation(&mut rng, dims.len()),
            random_permutation(&mut rng, result.len()),
        );
        let text = format!(
            "e {{
              p = {} parameter(0)
              r = {} reshape(p)
              ROOT b = {} bitcast(p)
            }}",
            array_text(&dims, Some(&in_order)),
            array_text(&result, None),
            array_text(&result, Some(&out_order)),
        );
        assert_eq!(check_all(&text), 2, "{text}");
    }
}

#[test]
fn random_transposes_slices_pads_and_reverses() {
    let mut rng = fastrand::Rng::with_seed(5);
    for _ in 0..200 {
        // (A scalar has no padding= syntax.)
        let mut dims = random_dims(&mut rng, 3);
        if dims.is_empty() {
            dims.push(rng.i64(1..=4));
        }
        let rank = dims.len();
        let perm = random_permutation(&mut rng, rank);
        let transposed: Vec<i64> = perm.iter().map(|&p| dims[p as usize]).collect();
        let mut slices = Vec::new();
        let mut sliced = Vec::new();
        let mut pads = Vec::new();
        let mut padded = Vec::new();
        for &n in &dims {
            let start = rng.i64(0..n);
            let limit = rng.i64(start..=n);
            let stride = rng.i64(1..=3);
            slices.push(format!("[{start}:{limit}:{stride}]"));
            sliced.push((limit - start + stride - 1) / stride);
            let interior = rng.i64(0..=2);
            let low = rng.i64(-1..=2);
            let inner = n + (n - 1) * interior;
            let high = rng.i64(-1..=2).max(-(low + inner));
            pads.push(format!("{low}_{high}_{interior}"));
            padded.push(low + high + inner);
        }
        let reversed: Vec<i64> = (0..rank as i64).filter(|_| rng.bool()).collect();
        let text = format!(
            "e {{
              p = {} parameter(0)
              v = f32[] parameter(1)
              t = {} transpose(p), dimensions={{{}}}
              s = {} slice(p), slice={{{}}}
              pd = {} pad(p, v), padding={}
              ROOT rv = {} reverse(p), dimensions={{{}}}
            }}",
            array_text(&dims, None),
            array_text(&transposed, None),
            list(&perm),
            array_text(&sliced, None),
            slices.join(","),
            array_text(&padded, None),
            pads.join("x"),
            array_text(&dims, None),
            list(&reversed),
        );
        assert_eq!(check_all(&text), 4, "{text}");
    }
}

#[test]
fn random_chains_compose_like_the_ops() {
    let mut rng = fastrand::Rng::with_seed(6);
    for case in 0..80 {
        let mut dims = random_dims(&mut rng, 3);
        if dims.is_empty() {
            dims.push(2);
        }
        let mut lines = vec![format!("p = {} parameter(0)", array_text(&dims, None))];
        lines.push("v = f32[] parameter(1)".into());
        let mut prev = "p".to_string();
        for step in 0..rng.usize(1..=5) {
            let rank = dims.len();
            let count: i64 = dims.iter().product();
            let name = format!("x{step}");
            let (op, next): (String, Vec<i64>) = match rng.usize(0..8) {
                0 => {
                    let perm = random_permutation(&mut rng, rank);
                    let next = perm.iter().map(|&p| dims[p as usize]).collect();
                    (
                        format!("transpose({prev}), dimensions={{{}}}", list(&perm)),
                        next,
                    )
                }
                1 => (
                    format!("reshape({prev})"),
                    random_factorization(&mut rng, count),
                ),
                2 if rank > 0 => {
                    let mut slices = Vec::new();
                    let mut next = Vec::new();
                    for &n in &dims {
                        let start = rng.i64(0..n);
                        let stride = rng.i64(1..=2);
                        let limit = rng.i64(start + 1..=n);
                        slices.push(format!("[{start}:{limit}:{stride}]"));
                        next.push((limit - start + stride - 1) / stride);
                    }
                    (
                        format!("slice({prev}), slice={{{}}}", slices.join(",")),
                        next,
                    )
                }
                3 if rank > 0 && count <= 12 => {
                    let mut pads = Vec::new();
                    let mut next = Vec::new();
                    for &n in &dims {
                        let (low, interior) = (rng.i64(-1..=1), rng.i64(0..=1));
                        let inner = n + (n - 1) * interior;
                        let high = rng.i64(0..=1).max(1 - (low + inner));
                        pads.push(format!("{low}_{high}_{interior}"));
                        next.push(low + high + inner);
                    }
                    (format!("pad({prev}, v), padding={}", pads.join("x")), next)
                }
                4 if rank > 0 => {
                    let reversed: Vec<i64> = (0..rank as i64).filter(|_| rng.bool()).collect();
                    (
                        format!("reverse({prev}), dimensions={{{}}}", list(&reversed)),
                        dims.clone(),
                    )
                }
                5 if count <= 16 && rank < 3 => {
                    let at = rng.usize(0..=rank);
                    let mut next = dims.clone();
                    next.insert(at, 2);
                    let mapped: Vec<i64> = (0..=rank as i64).filter(|&d| d != at as i64).collect();
                    (
                        format!("broadcast({prev}), dimensions={{{}}}", list(&mapped)),
                        next,
                    )
                }
                6 if rank > 0 && count <= 16 => {
                    let d = rng.usize(0..rank);
                    let mut next = dims.clone();
                    next[d] *= 2;
                    (
                        format!("concatenate({prev}, {prev}), dimensions={{{d}}}"),
                        next,
                    )
                }
                7 if rank > 0 => {
                    let reduced: Vec<i64> = (0..rank as i64).filter(|_| rng.bool()).collect();
                    let next = (0..rank)
                        .filter(|&d| !reduced.contains(&(d as i64)))
                        .map(|d| dims[d])
                        .collect();
                    (
                        format!(
                            "reduce({prev}, v), dimensions={{{}}}, to_apply=add",
                            list(&reduced)
                        ),
                        next,
                    )
                }
                _ => (format!("negate({prev})"), dims.clone()),
            };
            lines.push(format!("{name} = {} {op}", array_text(&next, None)));
            dims = next;
            prev = name;
        }
        let last = lines.pop().unwrap_or_default();
        lines.push(format!("ROOT {last}"));
        let text = format!(
            "add {{ x = f32[] parameter(0) y = f32[] parameter(1) ROOT r = f32[] add(x, y) }}\n\
             ENTRY f {{\n  {}\n}}",
            lines.join("\n  ")
        );
        let c = computation(&text);
        let analysis = fusion_indexing(&c).unwrap_or_else(|e| panic!("case {case}: {e}\n{text}"));
        check_fusion(&c, &analysis.roots, &analysis.maps, &[]);
    }
}
