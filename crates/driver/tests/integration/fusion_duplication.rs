//! Cheap producers are copied into the fusions that use them, but copies of copies are
//! bounded: a program of chained layer norms (each block's output a cheap multiply that
//! every later block reads through more cheap ops) stays linear in size once fused, where
//! unbounded duplication put the whole chain before a block into its fusions.

fn layer_norm_blocks(blocks: usize) -> String {
    let mut text = String::from(
        "HloModule blocks\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\
         ENTRY main {\n  x0 = f32[16,256]{1,0} parameter(0)\n  zero = f32[] constant(0)\n  n = f32[] constant(256)\n\
         nb = f32[16]{0} broadcast(n), dimensions={}\n  eps = f32[] constant(1e-05)\n\
         epsb = f32[16]{0} broadcast(eps), dimensions={}\n",
    );
    for i in 0..blocks {
        let root = if i + 1 == blocks { "ROOT " } else { "" };
        text.push_str(&format!(
            "  sum{i} = f32[16]{{0}} reduce(x{i}, zero), dimensions={{1}}, to_apply=add\n\
             mean{i} = f32[16]{{0}} divide(sum{i}, nb)\n\
             mb{i} = f32[16,256]{{1,0}} broadcast(mean{i}), dimensions={{0}}\n\
             c{i} = f32[16,256]{{1,0}} subtract(x{i}, mb{i})\n\
             sq{i} = f32[16,256]{{1,0}} multiply(c{i}, c{i})\n\
             ssq{i} = f32[16]{{0}} reduce(sq{i}, zero), dimensions={{1}}, to_apply=add\n\
             var{i} = f32[16]{{0}} divide(ssq{i}, nb)\n\
             ve{i} = f32[16]{{0}} add(var{i}, epsb)\n\
             inv{i} = f32[16]{{0}} rsqrt(ve{i})\n\
             ib{i} = f32[16,256]{{1,0}} broadcast(inv{i}), dimensions={{0}}\n\
             {root}x{} = f32[16,256]{{1,0}} multiply(c{i}, ib{i})\n",
            i + 1
        ));
    }
    text + "}\n"
}

#[test]
fn duplication_of_cheap_producers_is_bounded() {
    let blocks = 200;
    let text = layer_norm_blocks(blocks);
    let (source, mut module) = hlo::load("blocks.hlo", text.into_bytes()).unwrap();
    driver::pipeline::fuse(&source, &mut module).unwrap();
    let fused: usize = module
        .computations
        .iter()
        .filter(|c| c.name.starts_with("fused_"))
        .map(|c| c.instructions.len())
        .sum();
    // 11 instructions per block plus their parameters and bounded copies (44 per block); the
    // copies of copies, unbounded, made 244,001 (1,220 per block, growing with the length).
    assert!(
        fused < 100 * blocks,
        "{fused} fused instructions for {blocks} blocks"
    );
}
