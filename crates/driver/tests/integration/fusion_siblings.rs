//! Sibling loop fusions (one shape, a value read in common) merge into multi-output
//! fusions of at most eight outputs, however many siblings there are.

fn siblings(n: usize) -> String {
    let mut text =
        String::from("HloModule siblings\nENTRY main {\n  x = f32[64]{0} parameter(0)\n");
    let mut outputs = Vec::new();
    for k in 0..n {
        text.push_str(&format!(
            "  c{k} = f32[] constant({k})\n  b{k} = f32[64]{{0}} broadcast(c{k}), dimensions={{}}\n  \
             s{k} = f32[64]{{0}} multiply(x, b{k})\n"
        ));
        outputs.push(format!("s{k}"));
    }
    let shapes = vec!["f32[64]{0}"; n].join(", ");
    text + &format!(
        "  ROOT out = ({shapes}) tuple({})\n}}\n",
        outputs.join(", ")
    )
}

#[test]
fn siblings_merge_eight_at_a_time() {
    let n = 1000;
    let (source, mut module) = hlo::load("siblings.hlo", siblings(n).into_bytes()).unwrap();
    driver::pipeline::fuse(&source, &mut module).unwrap();
    let fusions: Vec<&hlo::Computation> = module
        .computations
        .iter()
        .filter(|c| c.name.starts_with("fused_"))
        .collect();
    assert_eq!(fusions.len(), n.div_ceil(8));
    for c in fusions {
        let outputs = c.root_instruction().operands.len();
        assert_eq!(outputs, 8, "{}: {outputs} outputs", c.name);
    }
}
