//! Building IR with the builder, rewriting it (replace-all-uses, erase, move, clone), walking
//! it, and the verifier's isolation check on IR the parser cannot produce.

use ir::dialects::arith;
use ir::dialects::builtin;
use ir::dialects::func;
use ir::dialects::math;
use ir::dialects::scf;
use ir::dialects::tensor;
use ir::{Attribute, Builder, InsertPoint, Module, OpState, Type, Value};

fn gelu_module() -> Module {
    let mut m = Module::new();
    let body = m.body();
    let t = Type::tensor(&[6, 512, 4096], Type::BF16);
    let mut b = Builder::at_end(&mut m, body);
    b.func("main", &[t, t], &[t], |b, args| {
        let (input, output) = (args[0], args[1]);
        let c0 = b.index(0);
        let c1 = b.index(1);
        let c4096 = b.index(4096);
        let lp = b.scf_for(c0, c4096, c1, &[output], |b, iv, iter| {
            let call = b.call("gelu", &[input, c0, c0, iv], &[Type::BF16]);
            let v = b.module.result(call, 0);
            b.module.set_value_name(v, Some("pure_call"));
            vec![b.insert_element(v, iter[0], &[c0, c0, iv])]
        });
        let r = b.module.result(lp, 0);
        b.ret(&[r]);
    });
    b.func(
        "gelu",
        &[t, Type::INDEX, Type::INDEX, Type::INDEX],
        &[Type::BF16],
        |b, args| {
            let half = b.float(0.5, Type::BF16);
            let x = b.extract(args[0], &args[1..]);
            let x2 = b.mulf(x, x);
            let th = b.unary(math::TANH, x2);
            let r = b.mulf(th, half);
            b.ret(&[r]);
        },
    );
    let gelu = m.lookup_symbol(m.top(), "gelu").unwrap();
    m.set_prop(gelu, "sym_visibility", Attribute::string("private"));
    m
}

const GELU: &str = "\
module {
  func.func @main(%arg0: tensor<6x512x4096xbf16>, %arg1: tensor<6x512x4096xbf16>) -> tensor<6x512x4096xbf16> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4096 = arith.constant 4096 : index
    %0 = scf.for %arg2 = %c0 to %c4096 step %c1 iter_args(%arg3 = %arg1) -> (tensor<6x512x4096xbf16>) {
      %pure_call = func.call @gelu(%arg0, %c0, %c0, %arg2) : (tensor<6x512x4096xbf16>, index, index, index) -> bf16
      %inserted = tensor.insert %pure_call into %arg3[%c0, %c0, %arg2] : tensor<6x512x4096xbf16>
      scf.yield %inserted : tensor<6x512x4096xbf16>
    }
    return %0 : tensor<6x512x4096xbf16>
  }
  func.func private @gelu(%arg0: tensor<6x512x4096xbf16>, %arg1: index, %arg2: index, %arg3: index) -> bf16 {
    %cst = arith.constant 5.000000e-01 : bf16
    %extracted = tensor.extract %arg0[%arg1, %arg2, %arg3] : tensor<6x512x4096xbf16>
    %0 = arith.mulf %extracted, %extracted : bf16
    %1 = math.tanh %0 : bf16
    %2 = arith.mulf %1, %cst : bf16
    return %2 : bf16
  }
}
";

#[test]
fn builds_and_prints_the_gelu_kernel() {
    let m = gelu_module();
    m.verify().unwrap();
    assert_eq!(m.print(), GELU);
    codegen::mlir::verify(&m.print(), false).unwrap();
    codegen::mlir::verify(&m.print_generic(), false).unwrap();
    let gelu = m.lookup_symbol(m.top(), "gelu").unwrap();
    let alone = m.print_op(gelu);
    assert!(
        alone.starts_with("func.func private @gelu(%arg0: tensor<6x512x4096xbf16>"),
        "{alone}"
    );
    assert!(
        GELU.contains(&alone.replace("\n", "\n  ").trim_end().to_owned()),
        "{alone}"
    );
}

fn func_body(m: &Module, name: &str) -> ir::BlockId {
    let f = m.lookup_symbol(m.top(), name).unwrap();
    m.entry_block(m.region(f, 0)).unwrap()
}

#[test]
fn replace_all_uses_and_erase() {
    let mut m = gelu_module();
    let body = func_body(&m, "gelu");
    let ops: Vec<_> = m.block_ops(body).collect();
    let (cst, mulf) = (ops[0], ops[2]);
    let x2 = m.result(mulf, 0);
    let x = m.operand(mulf, 0);
    assert_eq!(m.num_uses(x), 2);
    assert_eq!(m.num_uses(x2), 1);
    // tanh(x*x) → tanh(x); the multiply becomes dead and is erased.
    m.replace_all_uses(x2, x);
    assert_eq!(m.num_uses(x), 3);
    assert!(!m.has_uses(x2));
    m.erase_op(mulf);
    assert!(!m.is_alive(mulf));
    assert_eq!(m.num_uses(x), 1);
    m.verify().unwrap();
    let text = m.print();
    assert!(text.contains("%0 = math.tanh %extracted : bf16"), "{text}");
    // Replace the constant by a new one inserted before it, then erase it.
    let mut b = Builder::before(&mut m, cst);
    let two = b.float(2.0, Type::BF16);
    m.replace_op(cst, &[two]);
    m.verify().unwrap();
    assert!(
        m.print()
            .contains("%cst = arith.constant 2.000000e+00 : bf16")
    );
    assert_eq!(m.uses(two).count(), 1);
    let u = m.uses(two).next().unwrap();
    assert!(m.is(u.op, arith::MULF));
    assert_eq!(u.index, 1);
}

#[test]
#[should_panic(expected = "still has uses")]
fn erasing_a_used_value_panics() {
    let mut m = gelu_module();
    let body = func_body(&m, "gelu");
    let cst = m.first_op(body).unwrap();
    m.erase_op(cst);
}

#[test]
fn insertion_points_keep_creation_order() {
    let mut m = Module::new();
    let body = m.body();
    let mut b = Builder::at_end(&mut m, body);
    b.func("f", &[], &[Type::INDEX], |b, _| {
        let c = b.index(3);
        b.ret(&[c]);
    });
    let entry = func_body(&m, "f");
    let mut b = Builder::new(&mut m, InsertPoint::BlockStart(entry));
    let x = b.index(1);
    let y = b.index(2);
    let s = b.addi(x, y);
    let ret = m.last_op(entry).unwrap();
    let before_ret = m.prev_op(ret).unwrap();
    let mut b = Builder::new(&mut m, InsertPoint::After(before_ret));
    let t = b.muli(s, s);
    m.set_operand(ret, 0, t);
    m.verify().unwrap();
    assert_eq!(
        m.print(),
        "\
module {
  func.func @f() -> index {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %0 = arith.addi %c1, %c2 : index
    %c3 = arith.constant 3 : index
    %1 = arith.muli %0, %0 : index
    return %1 : index
  }
}
"
    );
    // Moving the unused constant to the front keeps the module valid.
    let c3 = m
        .defining_op(m.operand(m.defining_op(t).unwrap(), 0))
        .unwrap();
    let dead = m.next_op(c3).unwrap();
    let first = m.first_op(entry).unwrap();
    m.move_op(dead, InsertPoint::Before(first));
    m.verify().unwrap();
    assert!(
        m.print()
            .contains("{\n    %c3 = arith.constant 3 : index\n    %c1")
    );
}

#[test]
fn walk_visits_in_textual_order() {
    let m = gelu_module();
    let mut names = Vec::new();
    m.walk(m.top(), |op| names.push(m.name(op).as_str()));
    assert_eq!(
        names,
        [
            builtin::MODULE,
            func::FUNC,
            arith::CONSTANT,
            arith::CONSTANT,
            arith::CONSTANT,
            scf::FOR,
            func::CALL,
            tensor::INSERT,
            scf::YIELD,
            func::RETURN,
            func::FUNC,
            arith::CONSTANT,
            tensor::EXTRACT,
            arith::MULF,
            math::TANH,
            arith::MULF,
            func::RETURN,
        ]
    );
    let post: Vec<_> = m
        .collect_ops_post_order(m.top())
        .into_iter()
        .map(|op| m.name(op).as_str())
        .collect();
    assert_eq!(post.first(), Some(&arith::CONSTANT));
    assert_eq!(post.last(), Some(&builtin::MODULE));
    assert_eq!(m.num_ops(), names.len());
}

#[test]
fn isolation_violations_are_caught() {
    let mut m = gelu_module();
    let main_body = func_body(&m, "main");
    let outside = m.result(m.first_op(main_body).unwrap(), 0);
    let gelu_body = func_body(&m, "gelu");
    let ret = m.last_op(gelu_body).unwrap();
    let idx = m.block_arg(gelu_body, 1);
    let mut b = Builder::before(&mut m, ret);
    let sum = b.addi(idx, outside);
    let _ = sum;
    let err = m.verify().unwrap_err();
    assert_eq!(
        err.to_string(),
        "<unknown>: error: 'arith.addi' op using value defined outside the region"
    );
}

#[test]
fn clone_with_mapping() {
    let mut m = gelu_module();
    let gelu = m.lookup_symbol(m.top(), "gelu").unwrap();
    let mut mapping = Default::default();
    let copy = m.clone_op(gelu, &mut mapping);
    m.set_prop(copy, "sym_name", Attribute::string("gelu2"));
    m.insert_op(copy, InsertPoint::After(gelu));
    m.verify().unwrap();
    let text = m.print();
    let body_of = |name: &str| {
        let header = format!("func.func private @{name}(");
        let start = text.find(&header).unwrap() + header.len();
        let end = start + text[start..].find("\n  }\n").unwrap();
        text[start..end].to_owned()
    };
    assert_eq!(body_of("gelu"), body_of("gelu2"));
    // The clone shares nothing with the original.
    for op in m.collect_ops(copy) {
        for v in m.operands(op) {
            let def_block = m.value_block(v).unwrap();
            let owner = m.block_parent_op(def_block).unwrap();
            assert!(m.is_ancestor(copy, owner));
        }
    }
}

#[test]
fn replace_all_uses_is_linear_in_uses() {
    // 100k uses of one constant, replaced and erased: must be instant.
    let mut m = Module::new();
    let body = m.body();
    let mut b = Builder::at_end(&mut m, body);
    let mut consts: Vec<Value> = Vec::new();
    b.func("big", &[], &[Type::I32], |b, _| {
        let c = b.int(1, Type::I32);
        let d = b.int(2, Type::I32);
        consts.extend([c, d]);
        let mut acc = c;
        for _ in 0..100_000 {
            acc = b.addi(acc, c);
        }
        b.ret(&[acc]);
    });
    let (c, d) = (consts[0], consts[1]);
    let start = std::time::Instant::now();
    assert_eq!(m.num_uses(c), 100_001);
    m.replace_all_uses(c, d);
    assert_eq!(m.num_uses(d), 100_001);
    let c_op = m.defining_op(c).unwrap();
    m.erase_op(c_op);
    // Erase every add from the end (each one's result is used only by the next).
    let entry = func_body(&m, "big");
    let ret = m.last_op(entry).unwrap();
    m.set_operand(ret, 0, d);
    let ops: Vec<_> = m.block_ops(entry).collect();
    for &op in ops.iter().rev() {
        if m.is(op, arith::ADDI) {
            m.erase_op(op);
        }
    }
    assert!(start.elapsed().as_secs_f64() < 2.0, "{:?}", start.elapsed());
    m.verify().unwrap();
    assert_eq!(m.num_ops(), 4);
    let _ = OpState::new("unused");
}
