//! An MLA model's prompt runs in the dense form in the serving scheduler, as vLLM-Ascend and
//! MindIE run a prefill: keys and values up-projected per head (192-wide keys, 128-wide values),
//! not the decode kernel's absorbed form (every head over the 576-wide latent, about 3.4 times
//! the attention FLOPs). A scheduler step of one whole prompt therefore does the arithmetic of
//! the model's own prefill graph.

use tunelab_scenario::graphcost::TileMode;
use tunelab_scenario::scheduler::price::{HostCosts, StepPricer, StepShape};
use tunelab_sim::dtype::Precision;
use tunelab_sim::workload::{build_graph, GraphOptions, ParallelPlan, Workload};

#[test]
fn a_deepseek_v3_prompt_step_does_the_prefill_graphs_arithmetic() {
    let m = tunelab_sim::model::load_bundled("deepseek-v3").unwrap().model;
    let d = tunelab_sim::device::bundled_device("910B2").unwrap();
    let opts = GraphOptions { precision: Precision::Bf16, ..GraphOptions::default() };
    let plan = ParallelPlan::default();
    let prompt = 8192;
    let graph = build_graph(&m, &Workload::Prefill { batch: 1, input_len: prompt }, &plan, &opts).unwrap();
    let mut p = StepPricer::new(m, d, plan, opts, TileMode::Default, HostCosts::bundled("vllm-ascend").unwrap());
    let step = StepShape { prefill_seqs: 1, prefill_tokens: prompt, prefill_kv: prompt, new_requests: 1, decode_seqs: 0, decode_ctx: 0, emitting: 1 };
    let c = p.step(&step, false).unwrap();
    let ratio = c.flops / graph.flops();
    // The absorbed form would add about 2.4 x the causal attention's FLOPs at 8K (over a third
    // of the step); the dense form matches the graph up to the grid's interpolation.
    assert!((0.97..1.03).contains(&ratio), "step {:.3e} vs prefill graph {:.3e} FLOPs ({ratio:.3})", c.flops, graph.flops());
}
