//! `flatten-tensors` and `vectorize-loads-stores` against the layout math and real MLIR.
//!
//! * Seeded random tensors with random layouts (dimension orders, tiles, `*` entries): the
//!   offset `flatten-tensors` emits, evaluated with [`IndexingMap::eval`] at every logical
//!   index, is `Layout::physical_index` there, and the flat tensor has the padded size. Half
//!   the cases read through an `xla_gpu.apply_indexing` that delinearizes a linear index, so
//!   the folding of producer maps is checked too (one map over the arguments remains).
//! * The outputs of both passes on their lit inputs, printed in generic form, verify in
//!   MLIR 22 (unregistered dialects allowed, for `xla_gpu`); so do the inputs, whose tensor
//!   types carry `#xla.layout` encodings.

use ir::dialects::arith;
use ir::dialects::scf;
use ir::dialects::tensor;
use ir::dialects::vector;
use std::path::PathBuf;

use indexing::{AffineExpr, IndexingMap, Interval, Variable, delinearize};
use ir::dialects::xla_gpu;
use ir::types::{Layout, Tile};
use ir::{Builder, Module, Type, Value, parse_module};
use passes::{FlattenTensors, Pass, VectorizeLoadsStores};

/// A random layout for `dims`: a random dimension order and up to two tile levels, each
/// covering some of the most-minor dimensions of the shape before it, with `*` entries.
fn random_layout(rng: &mut fastrand::Rng, rank: usize) -> Layout {
    let mut minor_to_major: Vec<i64> = (0..rank as i64).collect();
    rng.shuffle(&mut minor_to_major);
    let mut tiles = Vec::new();
    let mut physical_rank = rank;
    for _ in 0..rng.usize(0..=2) {
        let k = rng.usize(1..=physical_rank);
        let mut tile: Vec<i64> = (0..k).map(|_| rng.i64(1..=4)).collect();
        for t in &mut tile[..k - 1] {
            if rng.u8(0..5) == 0 {
                *t = -1;
            }
        }
        let combined = tile.iter().filter(|&&t| t == -1).count();
        physical_rank = physical_rank - combined + (k - combined);
        tiles.push(Tile { dims: tile });
    }
    Layout {
        minor_to_major,
        tiles,
        ..Layout::row_major(0)
    }
}

/// Every logical index of `dims`, row-major.
fn all_indices(dims: &[i64]) -> Vec<Vec<i64>> {
    dims.iter().fold(vec![vec![]], |acc, &d| {
        acc.into_iter()
            .flat_map(|prefix| {
                (0..d).map(move |i| {
                    let mut next = prefix.clone();
                    next.push(i);
                    next
                })
            })
            .collect()
    })
}

/// `func.func @f(%t: ty, indices...) -> elem { return tensor.extract %t[...] }`, reading
/// either at the index arguments or, with `linear`, at a delinearized linear index argument.
fn extract_function(ty: Type, linear: bool) -> Module {
    let dims = ty.shape().unwrap().to_vec();
    let index_args = if linear { 1 } else { dims.len() };
    let mut inputs = vec![ty];
    inputs.extend(std::iter::repeat_n(Type::INDEX, index_args));
    let mut m = Module::new();
    let body = m.body();
    let mut b = Builder::at_end(&mut m, body);
    b.func("f", &inputs, &[Type::F32], |b, args| {
        let indices = if linear {
            let size = dims.iter().product::<i64>();
            let map = IndexingMap::new(
                vec![Variable::new("l", Interval::index_range(size))],
                Vec::new(),
                Vec::new(),
                delinearize(AffineExpr::Dim(0), &dims),
            );
            let at = b.insertion_point();
            xla_gpu::build_apply_indexing(b.module, at, map, &args[1..], &[])
        } else {
            args[1..].to_vec()
        };
        let x = b.extract(args[0], &indices);
        b.ret(&[x]);
    });
    m
}

/// The value of index `v` when the function's arguments are `args` = `point`: evaluated
/// through constants and `apply_indexing` maps, whose domains must contain their operands.
fn eval(m: &Module, v: Value, args: &[Value], point: &[i64]) -> i64 {
    if let Some(i) = args.iter().position(|&a| a == v) {
        return point[i];
    }
    let op = m.defining_op(v).expect("an index computed by an op");
    if m.is(op, arith::CONSTANT) {
        return m.prop(op, "value").and_then(|a| a.as_i64()).unwrap();
    }
    let map = xla_gpu::indexing_map(m, op).expect("an apply_indexing");
    let operands: Vec<i64> = m.operands(op).map(|x| eval(m, x, args, point)).collect();
    let (dims, symbols) = operands.split_at(map.dims.len());
    assert!(map.contains(dims, symbols), "{operands:?} outside {map}");
    map.eval(dims, symbols)[0]
}

#[test]
fn flat_offsets_are_the_physical_index_of_random_layouts() {
    let mut rng = fastrand::Rng::with_seed(0x5eed_1a70);
    let mut checked = 0;
    for case in 0..300 {
        let rank = rng.usize(1..=3);
        let dims: Vec<i64> = (0..rank).map(|_| rng.i64(1..=6)).collect();
        let layout = random_layout(&mut rng, rank);
        let ty = Type::tensor_with_layout(&dims, Type::F32, &layout)
            .unwrap_or_else(|e| panic!("case {case}: {layout} for {dims:?}: {e}"));
        let linear = case % 2 == 1;
        let mut m = extract_function(ty, linear);
        let before = m.print();
        FlattenTensors.run(&mut m).unwrap();
        m.verify()
            .unwrap_or_else(|e| panic!("{e}\n{before}\n{}", m.print()));

        let f = m.lookup_symbol(m.top(), "f").unwrap();
        let entry = m.entry_block(m.region(f, 0)).unwrap();
        let args = m.block_args(entry).to_vec();
        let size = layout.padded_element_count(&dims);
        let flat = if rank >= 2 || ty.tensor_layout().is_some() {
            Type::tensor(&[size], Type::F32)
        } else {
            ty
        };
        assert_eq!(m.value_type(args[0]), flat, "{before}");
        let extract = m
            .collect_ops(f)
            .into_iter()
            .find(|&o| m.is(o, tensor::EXTRACT))
            .unwrap();
        assert_eq!(m.num_operands(extract), 2, "{}", m.print());
        let offset = m.operand(extract, 1);
        if let Some(op) = m.defining_op(offset).filter(|_| flat != ty) {
            let folded = m.operands(op).all(|v| args.contains(&v));
            assert!(folded, "producer maps not folded:\n{}", m.print());
        }
        for (l, e) in all_indices(&dims).into_iter().enumerate() {
            let point = if linear { vec![l as i64] } else { e.clone() };
            let got = eval(&m, offset, &args[1..], &point);
            let want = layout.physical_index(&dims, &e);
            assert_eq!(got, want, "{layout} {dims:?} at {e:?}:\n{}", m.print());
            checked += 1;
        }
    }
    assert!(checked > 2000, "only {checked} points checked");
}

/// The chunks of a lit test file (split at `// -----` as `--split-input-file` does).
fn lit_chunks(name: &str) -> Vec<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/lit/passes")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut chunks = vec![String::new()];
    for line in text.lines() {
        if line.starts_with("// -----") {
            chunks.push(String::new());
        } else {
            let chunk = chunks.last_mut().unwrap();
            chunk.push_str(line);
            chunk.push('\n');
        }
    }
    chunks
}

/// Runs `pass` on every chunk of lit file `name`; the input and the output must verify in
/// MLIR.
fn check_against_mlir(name: &str, pass: &dyn Pass) {
    for chunk in lit_chunks(name) {
        let mut m = parse_module(&chunk).unwrap();
        codegen::mlir::verify(&m.print_generic(), true)
            .unwrap_or_else(|e| panic!("input of {name} rejected by MLIR: {e}\n{chunk}"));
        pass.run(&mut m).unwrap();
        m.verify().unwrap();
        let generic = m.print_generic();
        codegen::mlir::verify(&generic, true)
            .unwrap_or_else(|e| panic!("output of {name} rejected by MLIR: {e}\n{generic}"));
    }
}

#[test]
fn flattened_lit_inputs_verify_in_mlir() {
    check_against_mlir("flatten-tensors.mlir", &FlattenTensors);
}

#[test]
fn vectorized_lit_inputs_verify_in_mlir() {
    check_against_mlir("vectorize-loads-stores.mlir", &VectorizeLoadsStores);
}

/// Flattening then vectorizing the seed's GELU stage (with its always-true bounds check
/// removed, as the seed shows it) gives one read and one write of `vector<4xbf16>`.
#[test]
fn gelu_flattens_then_vectorizes() {
    let chunk = &lit_chunks("flatten-tensors.mlir")[0];
    let mut m = parse_module(chunk).unwrap();
    FlattenTensors.run(&mut m).unwrap();
    let scf_if = m.ops_named(scf::IF)[0];
    let then_block = m.entry_block(m.region(scf_if, 0)).unwrap();
    let yielded = passes::rewrite::inline_block_before(&mut m, then_block, scf_if, &[]);
    passes::rewrite::replace_op(&mut m, scf_if, &yielded);
    VectorizeLoadsStores.run(&mut m).unwrap();
    m.verify().unwrap();
    let text = m.print();
    assert_eq!(text.matches(vector::TRANSFER_READ).count(), 1, "{text}");
    assert_eq!(text.matches(vector::TRANSFER_WRITE).count(), 1, "{text}");
    assert!(
        !text.contains(tensor::EXTRACT) && !text.contains(tensor::INSERT),
        "{text}"
    );
    assert!(
        text.contains(": tensor<12582912xbf16>, vector<4xbf16>"),
        "{text}"
    );
}
