//! The `xla_gpu` dialect and the `#xla_gpu.indexing_map` attribute: every op round-trips in
//! custom and generic form, the generic form is valid MLIR 22 (unregistered dialects
//! allowed), the seed's `@main` prints as the seed shows it, the builders make the same IR
//! as the text, and invalid ops and maps are rejected with exact messages and locations.

use indexing::IndexingMap;
use ir::dialects::{tensor, xla_gpu};
use ir::{InsertPoint, Type, parse_attribute};

use crate::common::{self, check, parse, verified};

/// The xla_gpu chunk of `testdata/ir/ops.mlir`.
static OPS_TEXT: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| common::ops_chunk(2));

/// The seed's loop map as the seed prints it (one line, one string).
const SEED_MAP: &str = "#xla_gpu.indexing_map<\"(th_x, bl_x)[vector_index] -> (bl_x floordiv 4096, (bl_x floordiv 8) mod 512, (bl_x mod 8) * 512 + th_x * 4 + vector_index), domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]\">";

#[test]
fn every_op_round_trips_in_custom_form() {
    common::assert_custom_fixed_point("xla_gpu_ops.mlir", OPS_TEXT.as_str());
}

#[test]
fn every_op_round_trips_in_generic_form() {
    let generic = verified("xla_gpu_ops.mlir", OPS_TEXT.as_str()).print_generic();
    for op in [
        "loop",
        "yield",
        "apply_indexing",
        "pure_call",
        "allocate_shared",
        "sync_threads",
        "shuffle_reduce",
        "predicated_insert",
        "predicated_extract",
        "atomic_rmw",
    ] {
        assert!(
            generic.contains(&format!("\"xla_gpu.{op}\"(")),
            "{op} is missing from the ops file"
        );
    }
    common::assert_generic_fixed_point("generic", &generic, OPS_TEXT.as_str());
}

#[test]
fn mlir_parses_the_generic_form() {
    let generic = parse("xla_gpu_ops.mlir", OPS_TEXT.as_str()).print_generic();
    codegen::mlir::verify(&generic, true).unwrap_or_else(|e| panic!("{e}\n{generic}"));
}

/// The seed's `@main` (emitters document, "MLIR conversion"), with its map split over three
/// strings as the seed writes it and the gpu ops in generic form (so the test does not depend
/// on how the gpu dialect prints). Its loop prints exactly as the seed shows it.
const SEED_MAIN: &str = r#"#map = #xla_gpu.indexing_map<"(th_x, bl_x)[vector_index] -> ("
 "bl_x floordiv 4096, (bl_x floordiv 8) mod 512, (bl_x mod 8) * 512 + th_x * 4 + vector_index),"
 "domain: th_x in [0, 127], bl_x in [0, 24575], vector_index in [0, 3]">

func.func @main(%input: tensor<6x512x4096xbf16> , %output: tensor<6x512x4096xbf16>)
   -> tensor<6x512x4096xbf16> {
 %thread_id_x = "gpu.thread_id"() <{dimension = #gpu<dim x>}> {xla.range = [0 : index, 127 : index]} : () -> index
 %block_id_x = "gpu.block_id"() <{dimension = #gpu<dim x>}> {xla.range = [0 : index, 24575 : index]} : () -> index

 %xla_loop = xla_gpu.loop (%thread_id_x, %block_id_x)[%vector_index] -> (%dim0, %dim1, %dim2)
     in #map iter_args(%iter = %output) -> (tensor<6x512x4096xbf16>) {
   %pure_call = xla_gpu.pure_call @gelu(%input, %dim0, %dim1, %dim2)
      : (tensor<6x512x4096xbf16>, index, index, index) -> bf16
   %inserted = tensor.insert %pure_call into %iter[%dim0, %dim1, %dim2] : tensor<6x512x4096xbf16>
   xla_gpu.yield %inserted : tensor<6x512x4096xbf16>
 }
 return %xla_loop : tensor<6x512x4096xbf16>
}

func.func private @gelu(%arg0: tensor<6x512x4096xbf16>, %i: index, %j: index, %k: index) -> bf16 {
  %extracted = tensor.extract %arg0[%i, %j, %k] : tensor<6x512x4096xbf16>
  return %extracted : bf16
}
"#;

/// The seed's loop, each op on one line.
const SEED_LOOP: &str = "\
%xla_loop = xla_gpu.loop (%thread_id_x, %block_id_x)[%vector_index] -> (%dim0, %dim1, %dim2) in #map iter_args(%iter = %output) -> (tensor<6x512x4096xbf16>) {
  %pure_call = xla_gpu.pure_call @gelu(%input, %dim0, %dim1, %dim2) : (tensor<6x512x4096xbf16>, index, index, index) -> bf16
  %inserted = tensor.insert %pure_call into %iter[%dim0, %dim1, %dim2] : tensor<6x512x4096xbf16>
  xla_gpu.yield %inserted : tensor<6x512x4096xbf16>
}
return %xla_loop : tensor<6x512x4096xbf16>
";

/// `text` with every line indented by `n` spaces.
fn indent(text: &str, n: usize) -> String {
    text.lines()
        .map(|l| format!("{}{l}\n", " ".repeat(n)))
        .collect()
}

#[test]
fn seed_main_prints_as_in_the_seed() {
    let printed = verified("seed", SEED_MAIN).print();
    assert_eq!(
        printed.lines().next(),
        Some(format!("#map = {SEED_MAP}").as_str())
    );
    assert!(
        printed.contains(&indent(SEED_LOOP, 4)),
        "expected the seed's loop:\n{SEED_LOOP}\nin:\n{printed}"
    );
    let generic = verified("seed", SEED_MAIN).print_generic();
    assert_eq!(verified("generic", &generic).print(), printed);
    codegen::mlir::verify(&generic, true).unwrap_or_else(|e| panic!("{e}\n{generic}"));
}

#[test]
fn seed_map_round_trips_byte_for_byte() {
    let attr = parse_attribute(SEED_MAP).unwrap();
    assert_eq!(attr.to_string(), SEED_MAP);
    let map = attr.as_indexing_map().unwrap();
    assert_eq!(map.dims.len(), 2);
    assert_eq!(map.range_vars.len(), 1);
    assert_eq!(map.results.len(), 3);
    // The seed's point (th_x, bl_x, vector_index) = (5, 4097, 3): block 4097 is row 1 of
    // batch 1, column (4097 mod 8) * 512 + 5 * 4 + 3 = 535.
    assert_eq!(map.eval(&[5, 4097], &[3]), vec![1, 0, 535]);
    // Aliases hoist structurally equal maps once: the seed's loop and an apply_indexing of
    // the same map share `#map`.
    let text = format!(
        "func.func @f(%a: index, %b: index, %c: index) -> index {{\n  %0:3 = xla_gpu.apply_indexing {SEED_MAP}(%a, %b)[%c]\n  %1:3 = xla_gpu.apply_indexing {SEED_MAP}(%b, %a)[%c]\n  return %1#2 : index\n}}\n"
    );
    let printed = verified("aliases", &text).print();
    assert_eq!(
        printed.matches("#xla_gpu.indexing_map").count(),
        1,
        "{printed}"
    );
    assert!(printed.contains("%1:3 = xla_gpu.apply_indexing #map(%b, %a)[%c]"));
}

/// Builds the seed's loop with the builders into a skeleton `@main`; the result is the text's
/// IR, with XLA's default names for the body arguments.
#[test]
fn builders_make_the_seed_loop() {
    let skeleton = "\
func.func @main(%input: tensor<6x512x4096xbf16>, %output: tensor<6x512x4096xbf16>, %thread_id_x: index, %block_id_x: index) -> tensor<6x512x4096xbf16> {
  return %output : tensor<6x512x4096xbf16>
}
func.func private @gelu(tensor<6x512x4096xbf16>, index, index, index) -> bf16
";
    let mut m = verified("skeleton", skeleton);
    let main = m.lookup_symbol(m.top(), "main").unwrap();
    let entry = m.entry_block(m.region(main, 0)).unwrap();
    let ret = m.last_op(entry).unwrap();
    let args = m.block_args(entry).to_vec();
    let map = parse_attribute(SEED_MAP)
        .unwrap()
        .as_indexing_map()
        .unwrap()
        .clone();
    let (lp, body) = xla_gpu::build_loop(
        &mut m,
        InsertPoint::Before(ret),
        map,
        &args[2..],
        &[args[1]],
    );
    let loop_args = xla_gpu::loop_args(&m, lp).unwrap();
    let indices = loop_args.map_results.to_vec();
    let iter = loop_args.iter_args[0];
    assert_eq!(loop_args.induction_vars.len(), 1);
    let mut call_args = vec![args[0]];
    call_args.extend(&indices);
    let end = InsertPoint::BlockEnd(body);
    let call = xla_gpu::build_pure_call(&mut m, end, "gelu", &call_args, &[Type::BF16]);
    let value = m.result(call, 0);
    let inserted = tensor::build_insert(&mut m, end, value, iter, &indices);
    xla_gpu::build_yield(&mut m, body, &[inserted]);
    let result = m.result(lp, 0);
    m.set_operand(ret, 0, result);
    m.verify().unwrap();
    let expected = SEED_LOOP
        .replace("%vector_index", "%i")
        .replace("%dim0", "%ra")
        .replace("%dim1", "%rb")
        .replace("%dim2", "%rc");
    let printed = m.print();
    assert!(printed.contains(&indent(&expected, 4)), "{printed}");
    assert_eq!(printed, verified("printed", &printed).print());
}

/// The other builders make what the ops file's text makes.
#[test]
fn builders_make_the_other_ops() {
    let expected = "\
#map = #xla_gpu.indexing_map<\"(d0) -> (d0 floordiv 32, d0 mod 32), domain: d0 in [0, 127]\">
module {
  func.func @f(%tid: index, %cond: i1, %x: f32) -> (f32, f32) {
    %shmem = xla_gpu.allocate_shared : tensor<4x32xf32>
    %0:2 = xla_gpu.apply_indexing #map(%tid)
    %1 = xla_gpu.predicated_insert %x into %shmem[%0#0, %0#1] if %cond : tensor<4x32xf32>
    %synced_tensor = xla_gpu.sync_threads %1 : tensor<4x32xf32>
    %2 = xla_gpu.predicated_extract %synced_tensor[%0#0, %0#1] if %cond else %x : tensor<4x32xf32>
    %3:2 = xla_gpu.shuffle_reduce(%2, %x) to 8 combiner=@add2 : f32, f32
    return %3#0, %3#1 : f32, f32
  }
  func.func private @add2(f32, f32, f32, f32) -> (f32, f32)
}
";
    let skeleton = "\
func.func @f(%tid: index, %cond: i1, %x: f32) -> (f32, f32) {
  return %x, %x : f32, f32
}
func.func private @add2(f32, f32, f32, f32) -> (f32, f32)
";
    let mut m = verified("skeleton", skeleton);
    let f = m.lookup_symbol(m.top(), "f").unwrap();
    let entry = m.entry_block(m.region(f, 0)).unwrap();
    let ret = m.last_op(entry).unwrap();
    let [tid, cond, x] = m.block_args(entry).to_vec().try_into().unwrap();
    let at = InsertPoint::Before(ret);
    let shmem = xla_gpu::build_allocate_shared(&mut m, at, Type::tensor(&[4, 32], Type::F32));
    let map =
        IndexingMap::parse("(d0) -> (d0 floordiv 32, d0 mod 32), domain: d0 in [0, 127]").unwrap();
    let idx = xla_gpu::build_apply_indexing(&mut m, at, map, &[tid], &[]);
    let inserted = xla_gpu::build_predicated_insert(&mut m, at, cond, x, shmem, &idx);
    let synced = xla_gpu::build_sync_threads(&mut m, at, &[inserted]);
    let extracted = xla_gpu::build_predicated_extract(&mut m, at, cond, x, synced[0], &idx);
    let reduced = xla_gpu::build_shuffle_reduce(&mut m, at, "add2", &[extracted, x], 8);
    m.set_operands(ret, &reduced);
    m.verify().unwrap();
    assert_eq!(m.print(), expected);
}

/// A module around `body`: maps on lines 1-2, a symbol `@g` that is no function, the body
/// from line 7 on.
fn module(body: &str) -> String {
    format!(
        "#map = #xla_gpu.indexing_map<\"(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 7]\">
#c = #xla_gpu.indexing_map<\"(d0) -> (d0), domain: d0 in [0, 3], d0 mod 2 in [0, 0]\">
\"test.global\"() <{{sym_name = \"g\", type = f32}}> : () -> ()
func.func private @callee(f32) -> f32
func.func private @add(f32, f32) -> f32
func.func @f(%i: index, %x: f32, %n: i32, %c: i1, %t: tensor<4x8xf32>) -> f32 {{
{body}  return %x : f32
}}
"
    )
}

const LOOP_BODY: &str = "{\n    xla_gpu.yield %a : f32\n  }\n";

const CASES: &[(&str, &str, &str)] = &[
    (
        "loop: dims operands",
        "  %r = xla_gpu.loop (%i, %i)[%s] -> (%r0) in #map iter_args(%a = %x) -> (f32) LOOP",
        "t.mlir:7:3: error: 'xla_gpu.loop' op mismatch in number of dims operands 2 and DimVars in the indexing map 1",
    ),
    (
        "loop: induction variables",
        "  %r = xla_gpu.loop (%i)[%s, %s2] -> (%r0) in #map iter_args(%a = %x) -> (f32) LOOP",
        "t.mlir:7:3: error: 'xla_gpu.loop' op expects the body to have 3 arguments (1 induction variables, 1 map results and 1 iter_args), but it has 4",
    ),
    (
        "loop: map results",
        "  %r = xla_gpu.loop (%i)[%s] -> () in #map iter_args(%a = %x) -> (f32) LOOP",
        "t.mlir:7:3: error: 'xla_gpu.loop' op expects the body to have 3 arguments (1 induction variables, 1 map results and 1 iter_args), but it has 2",
    ),
    (
        "loop: dims are indices",
        "  %r = \"xla_gpu.loop\"(%n, %x) <{indexing_map_attr = #map, operandSegmentSizes = array<i32: 1, 1>}> ({\n  ^bb0(%s: index, %r0: index, %a: f32):\n    \"xla_gpu.yield\"(%a) : (f32) -> ()\n  }) : (i32, f32) -> f32\n",
        "t.mlir:7:3: error: 'xla_gpu.loop' op operand #0 must be index, but got 'i32'",
    ),
    (
        "loop: results and inits",
        "  %r:2 = \"xla_gpu.loop\"(%i, %x) <{indexing_map_attr = #map, operandSegmentSizes = array<i32: 1, 1>}> ({\n  ^bb0(%s: index, %r0: index, %a: f32):\n    \"xla_gpu.yield\"(%a) : (f32) -> ()\n  }) : (index, f32) -> (f32, f32)\n",
        "t.mlir:7:3: error: 'xla_gpu.loop' op mismatch in number of loop-carried values and results",
    ),
    (
        "loop: iter arg types",
        "  %r = \"xla_gpu.loop\"(%i, %x) <{indexing_map_attr = #map, operandSegmentSizes = array<i32: 1, 1>}> ({\n  ^bb0(%s: index, %r0: index, %a: f32):\n    \"xla_gpu.yield\"(%a) : (f32) -> ()\n  }) : (index, f32) -> i32\n",
        "t.mlir:7:3: error: 'xla_gpu.loop' op block iter arg type = 'f32', result type = 'i32' and init operand type = 'f32' should match",
    ),
    (
        "loop: induction variables are indices",
        "  %r = \"xla_gpu.loop\"(%i, %x) <{indexing_map_attr = #map, operandSegmentSizes = array<i32: 1, 1>}> ({\n  ^bb0(%s: i32, %r0: index, %a: f32):\n    \"xla_gpu.yield\"(%a) : (f32) -> ()\n  }) : (index, f32) -> f32\n",
        "t.mlir:7:3: error: 'xla_gpu.loop' op body argument #0 must be index, but got 'i32'",
    ),
    (
        "loop: operand segments",
        "  %r = \"xla_gpu.loop\"(%i, %x) <{indexing_map_attr = #map, operandSegmentSizes = array<i32: 1, 0>}> ({\n  ^bb0(%s: index, %r0: index, %a: f32):\n    \"xla_gpu.yield\"(%a) : (f32) -> ()\n  }) : (index, f32) -> f32\n",
        "t.mlir:7:3: error: 'xla_gpu.loop' op operand count (2) does not match with the total size (1) specified in attribute 'operandSegmentSizes'",
    ),
    (
        "loop: no map",
        "  %r = \"xla_gpu.loop\"(%i, %x) <{indexing_map_attr = 3 : i64, operandSegmentSizes = array<i32: 1, 1>}> ({\n  ^bb0(%s: index, %r0: index, %a: f32):\n    \"xla_gpu.yield\"(%a) : (f32) -> ()\n  }) : (index, f32) -> f32\n",
        "t.mlir:7:3: error: 'xla_gpu.loop' op requires a 'indexing_map_attr' attribute holding an indexing map",
    ),
    (
        "loop: the attribute after `in` is a map",
        "  %r = xla_gpu.loop (%i)[%s] -> (%r0) in @callee iter_args(%a = %x) -> (f32) LOOP",
        "t.mlir:7:42: error: expected an indexing map attribute, but got '@callee'",
    ),
    (
        "loop: iter_args and types",
        "  %r = xla_gpu.loop (%i)[%s] -> (%r0) in #map iter_args(%a = %x) -> (f32, f32) LOOP",
        "t.mlir:7:66: error: mismatch in number of loop-carried values and defined values",
    ),
    (
        "yield: operand type",
        "  %r = xla_gpu.loop (%i)[%s] -> (%r0) in #map iter_args(%a = %x) -> (f32) {\n    xla_gpu.yield %n : i32\n  }\n",
        "t.mlir:8:5: error: 'xla_gpu.yield' op type of operand #0 ('i32') doesn't match the result type of the parent 'xla_gpu.loop' ('f32')",
    ),
    (
        "yield: operand count",
        "  %r = xla_gpu.loop (%i)[%s] -> (%r0) in #map iter_args(%a = %x) -> (f32) {\n    xla_gpu.yield %a, %a : f32, f32\n  }\n",
        "t.mlir:8:5: error: 'xla_gpu.yield' op expects 1 operands to match the results of the parent 'xla_gpu.loop', but found 2",
    ),
    (
        "yield: outside a loop",
        "  \"scf.execute_region\"() ({\n    xla_gpu.yield\n  }) : () -> ()\n",
        "t.mlir:8:5: error: 'xla_gpu.yield' op expects parent op to be one of 'xla_gpu.loop, xla_gpu.atomic_rmw'",
    ),
    (
        "apply_indexing: operand count",
        "  %0 = xla_gpu.apply_indexing #map(%i)\n",
        "t.mlir:7:3: error: 'xla_gpu.apply_indexing' op operand count (1) must match the number of dimensions and symbols in the indexing map (2)",
    ),
    (
        "apply_indexing: constraints",
        "  %0 = xla_gpu.apply_indexing #c(%i)\n",
        "t.mlir:7:3: error: 'xla_gpu.apply_indexing' op apply indexing op cannot have any constraints",
    ),
    (
        "apply_indexing: result count",
        "  %0:2 = \"xla_gpu.apply_indexing\"(%i, %i) <{indexing_map_attr = #map}> : (index, index) -> (index, index)\n",
        "t.mlir:7:3: error: 'xla_gpu.apply_indexing' op expected 1 results (one per map result), but found 2",
    ),
    (
        "apply_indexing: operand type",
        "  %0 = \"xla_gpu.apply_indexing\"(%i, %n) <{indexing_map_attr = #map}> : (index, i32) -> index\n",
        "t.mlir:7:3: error: 'xla_gpu.apply_indexing' op operand #1 must be index, but got 'i32'",
    ),
    (
        "apply_indexing: result type",
        "  %0 = \"xla_gpu.apply_indexing\"(%i, %i) <{indexing_map_attr = #map}> : (index, index) -> i32\n",
        "t.mlir:7:3: error: 'xla_gpu.apply_indexing' op results must be index, but got 'i32'",
    ),
    (
        "pure_call: unknown callee",
        "  %0 = xla_gpu.pure_call @nope(%x) : (f32) -> f32\n",
        "t.mlir:7:3: error: 'xla_gpu.pure_call' op callee '@nope' does not reference a valid function",
    ),
    (
        "pure_call: callee type",
        "  %0 = xla_gpu.pure_call @callee(%n) : (i32) -> f32\n",
        "t.mlir:7:3: error: 'xla_gpu.pure_call' op callee '@callee' has type '(f32) -> f32', but expected '(i32) -> f32'",
    ),
    (
        "pure_call: callee is not a function",
        "  %0 = xla_gpu.pure_call @g(%x) : (f32) -> f32\n",
        "t.mlir:7:3: error: 'xla_gpu.pure_call' op callee '@g' does not reference a valid function",
    ),
    (
        "allocate_shared: static shape",
        "  %0 = xla_gpu.allocate_shared : tensor<?x4xf32>\n",
        "t.mlir:7:3: error: 'xla_gpu.allocate_shared' op result #0 must be statically shaped tensor, but got 'tensor<?x4xf32>'",
    ),
    (
        "allocate_shared: no operands",
        "  %0 = \"xla_gpu.allocate_shared\"(%i) : (index) -> tensor<4xf32>\n",
        "t.mlir:7:3: error: 'xla_gpu.allocate_shared' op expected 0 operands, but found 1",
    ),
    (
        "sync_threads: tensors only",
        "  %0 = xla_gpu.sync_threads %x : f32\n",
        "t.mlir:7:3: error: 'xla_gpu.sync_threads' op operand #0 must be ranked tensor, but got 'f32'",
    ),
    (
        "sync_threads: result types",
        "  %0 = \"xla_gpu.sync_threads\"(%t) : (tensor<4x8xf32>) -> tensor<8x4xf32>\n",
        "t.mlir:7:3: error: 'xla_gpu.sync_threads' op failed to verify that result type matches type of operands",
    ),
    (
        "shuffle_reduce: unknown combiner",
        "  %0 = xla_gpu.shuffle_reduce(%x) to 16 combiner=@nope : f32\n",
        "t.mlir:7:3: error: 'xla_gpu.shuffle_reduce' op combiner '@nope' does not reference a valid function",
    ),
    (
        "shuffle_reduce: combiner type",
        "  %0 = xla_gpu.shuffle_reduce(%x) to 16 combiner=@callee : f32\n",
        "t.mlir:7:3: error: 'xla_gpu.shuffle_reduce' op combiner '@callee' has type '(f32) -> f32', but expected '(f32, f32) -> f32'",
    ),
    (
        "shuffle_reduce: distance",
        "  %0 = xla_gpu.shuffle_reduce(%x) to 12 combiner=@add : f32\n",
        "t.mlir:7:3: error: 'xla_gpu.shuffle_reduce' op max_distance must be a power of two in [1, 16], but got 12",
    ),
    (
        "shuffle_reduce: result types",
        "  %0 = \"xla_gpu.shuffle_reduce\"(%x) <{combiner = @add, max_distance = 4 : i64}> : (f32) -> i32\n",
        "t.mlir:7:3: error: 'xla_gpu.shuffle_reduce' op failed to verify that result type matches type of operands",
    ),
    (
        "atomic_rmw: index count",
        "  %0 = xla_gpu.atomic_rmw %t[%i] : tensor<4x8xf32> {\n  ^bb0(%cur: f32):\n    xla_gpu.yield %cur : f32\n  }\n",
        "t.mlir:7:3: error: 'xla_gpu.atomic_rmw' op incorrect number of indices: expected 2, but found 1",
    ),
    (
        "atomic_rmw: body argument",
        "  %0 = xla_gpu.atomic_rmw %t[%i, %i] : tensor<4x8xf32> {\n  ^bb0(%cur: i32):\n    xla_gpu.yield %x : f32\n  }\n",
        "t.mlir:7:3: error: 'xla_gpu.atomic_rmw' op expects the body to have one argument of the element type 'f32' (or a vector of it)",
    ),
    (
        "atomic_rmw: yield type",
        "  %0 = xla_gpu.atomic_rmw %t[%i, %i] : tensor<4x8xf32> {\n  ^bb0(%cur: f32):\n    xla_gpu.yield %n : i32\n  }\n",
        "t.mlir:9:5: error: 'xla_gpu.yield' op expects one operand of the element type of the parent 'xla_gpu.atomic_rmw' ('f32')",
    ),
    (
        "predicated_insert: index count",
        "  %0 = xla_gpu.predicated_insert %x into %t[%i] if %c : tensor<4x8xf32>\n",
        "t.mlir:7:3: error: 'xla_gpu.predicated_insert' op incorrect number of indices: expected 2, but found 1",
    ),
    (
        "predicated_insert: value type",
        "  %0 = \"xla_gpu.predicated_insert\"(%c, %n, %t, %i, %i) : (i1, i32, tensor<4x8xf32>, index, index) -> tensor<4x8xf32>\n",
        "t.mlir:7:3: error: 'xla_gpu.predicated_insert' op value type 'i32' does not match the element type of 'tensor<4x8xf32>'",
    ),
    (
        "predicated_insert: result type",
        "  %0 = \"xla_gpu.predicated_insert\"(%c, %x, %t, %i, %i) : (i1, f32, tensor<4x8xf32>, index, index) -> f32\n",
        "t.mlir:7:3: error: 'xla_gpu.predicated_insert' op result type 'f32' does not match the expected type 'tensor<4x8xf32>'",
    ),
    (
        "predicated_insert: the type is a tensor",
        "  %0 = xla_gpu.predicated_insert %x into %t[%i] if %c : f32\n",
        "t.mlir:7:57: error: expected a tensor type, but got 'f32'",
    ),
    (
        "predicated_extract: condition",
        "  %0 = \"xla_gpu.predicated_extract\"(%n, %x, %t, %i, %i) : (i32, f32, tensor<4x8xf32>, index, index) -> f32\n",
        "t.mlir:7:3: error: 'xla_gpu.predicated_extract' op operand #0 must be 1-bit signless integer, but got 'i32'",
    ),
    (
        "predicated_extract: result type",
        "  %0 = \"xla_gpu.predicated_extract\"(%c, %x, %t, %i, %i) : (i1, f32, tensor<4x8xf32>, index, index) -> i32\n",
        "t.mlir:7:3: error: 'xla_gpu.predicated_extract' op result type 'i32' does not match the expected type 'f32'",
    ),
    (
        "predicated_extract: fallback type",
        "  %0 = xla_gpu.predicated_extract %t[%i, %i] if %c else %n : tensor<4x8xf32>\n",
        "t.mlir:7:57: error: use of value '%n' expects different type than prior uses: 'f32' vs 'i32'",
    ),
    (
        "indexing map: malformed expression, pointed at inside the string",
        "  %0 = xla_gpu.apply_indexing #xla_gpu.indexing_map<\"(d0) -> (d0 +), domain: d0 in [0, 3]\">(%i)\n",
        "t.mlir:7:67: error: invalid indexing map: expected an expression, found ')'",
    ),
    (
        "indexing map: a variable without a range",
        "  %0 = xla_gpu.apply_indexing #xla_gpu.indexing_map<\"(d0, d1)\"\n    \" -> (d0)\"\n    \", domain: d0 in [0, 3]\">(%i, %i)\n",
        "t.mlir:7:59: error: invalid indexing map: variable 'd1' has no range in the domain",
    ),
    (
        "indexing map: an error in the third of three strings",
        "  %0 = xla_gpu.apply_indexing #xla_gpu.indexing_map<\"(d0, d1)\"\n    \" -> (d0)\"\n    \", domain: d0 in [0, 3], d1 in [0, x]\">(%i, %i)\n",
        "t.mlir:9:40: error: invalid indexing map: expected an integer, found 'x'",
    ),
];

#[test]
fn invalid_ops_are_rejected_with_location() {
    common::assert_diagnostics(CASES.iter().map(|&(what, body, expected)| {
        let body = body.replace(" LOOP", &format!(" {LOOP_BODY}"));
        (what, module(&body), expected)
    }));
}

#[test]
fn valid_module_passes() {
    let body = "  %r = xla_gpu.loop (%i)[%s] -> (%r0) in #map iter_args(%a = %x) -> (f32) LOOP";
    assert_eq!(
        check(&module(&body.replace(" LOOP", &format!(" {LOOP_BODY}")))),
        "ok"
    );
}

/// A malformed map in a top-level alias is located inside its string; escapes in the string
/// make the location fall back to the string's opening quote.
#[test]
fn malformed_map_aliases_are_located() {
    let cases = [
        (
            "\n#map = #xla_gpu.indexing_map<\"(d0) -> (d0 floordiv 0), domain: d0 in [0, 3]\">\n",
            "t.mlir:2:52: error: invalid indexing map: the right operand of floordiv must be positive, not 0",
        ),
        (
            "#map = #xla_gpu.indexing_map<\"(d0) -> (d0\\22), domain: d0 in [0, 3]\">\n",
            "t.mlir:1:30: error: invalid indexing map: unexpected character '\"'",
        ),
        (
            "#map = #xla_gpu.indexing_map<>\n",
            "t.mlir:1:30: error: expected string, found '>'",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(check(text), expected, "{text}");
    }
}
