//! Interpreter throughput: simulated instructions per second on the seed's GELU kernel
//! (emitted by the loop emitter, run on random bf16 inputs), median of several runs.
//!
//! `cargo bench -p interp --bench throughput [-- SHAPE]`, e.g. `-- 6,512,4096` for the
//! seed's full shape (12.6M elements).

use std::time::Instant;

use interp::{Buffer, Kernel, Launch};

fn gelu_hlo(shape: &str) -> String {
    let text = std::fs::read_to_string(testkit::testdata("models/gelu.hlo"))
        .expect("testdata/models/gelu.hlo");
    text.replace("6,512,4096", shape)
}

fn main() {
    let shape = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .unwrap_or_else(|| "4,256,1024".into());
    let (_, module) = hlo::load("gelu.hlo", gelu_hlo(&shape).as_bytes()).expect("valid HLO");
    let fusion = emitters::fusions(&module)[0];
    let emitted = emitters::emit_fusion(&module, fusion).expect("emits");
    let kernel = Kernel::compile(&emitted.module, "main").expect("compiles");
    let computation = module.computation(fusion);
    let args = hlo::evaluate::random_arguments(computation, 1).expect("random inputs");
    let input = Buffer::from_host_array(args[0].as_array().expect("array"), None).expect("buffer");
    let output = Buffer::zeroed(input.len());
    let launch = Launch {
        blocks: emitted.kernel.launch.blocks,
        threads: emitted.kernel.launch.threads_per_block,
    };
    let elements = input.len() / 2;
    let mut times = Vec::new();
    let mut ops = 0;
    for _ in 0..5 {
        let start = Instant::now();
        let run = kernel
            .run(launch, vec![input.clone(), output.clone()])
            .expect("runs");
        times.push(start.elapsed().as_secs_f64());
        ops = run.ops;
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "gelu bf16[{shape}]: {elements} elements, {} blocks x {} threads, {ops} instructions",
        launch.blocks, launch.threads
    );
    println!(
        "median {median:.3} s: {:.1} M instructions/s, {:.2} M elements/s",
        ops as f64 / median / 1e6,
        elements as f64 / median / 1e6
    );
}
