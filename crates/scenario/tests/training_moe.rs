//! MoE training mechanisms (issue 9): routing imbalance, expert parallelism's token exchange and
//! where it runs, the two Megatron token dispatchers, grouped vs per-expert matmuls, and the
//! main-gradient pass without gradient-accumulation fusion. Each asserts a direction a user
//! relies on when choosing a layout; none pins a number.

use tunelab_scenario::training::{graph_options, simulate, TrainPoint, TrainResult};
use tunelab_scenario::Scenario;
use tunelab_sim::device::{bundled_device, Device};
use tunelab_sim::model::{load_bundled, ModelDesc};
use tunelab_sim::workload::{build_graph, MoeDispatcher, ParallelPlan, TrainOptions, Workload};
use tunelab_sim::{Op, Precision};

fn model(id: &str) -> ModelDesc {
    load_bundled(id).unwrap().model
}

fn device() -> Device {
    bundled_device("910B2").unwrap()
}

/// A pure data/expert-parallel point (tp = pp = 1) on `chips` chips.
fn point(chips: u64, ep: u64, global_batch: u64, train: TrainOptions, imbalance: f64) -> TrainPoint {
    let plan = ParallelPlan { tp: 1, pp: 1, dp: chips, ep, cp: 1, vpp: 1, sequence_parallel: false, expert_tp: None, ..ParallelPlan::default() };
    let train = TrainOptions { grad_accum: global_batch / chips, distributed_optimizer: true, fp32_grads: true, ..train };
    TrainPoint { plan, micro_batch: 1, train, precision: Precision::Bf16, moe_imbalance: imbalance }
}

fn run(m: &ModelDesc, p: &TrainPoint, seq: u64, gb: u64, chips: u64) -> TrainResult {
    simulate(m, &device(), p, seq, gb, chips).unwrap_or_else(|e| panic!("{e}"))
}

fn compute_ms(r: &TrainResult) -> f64 {
    r.breakdown.iter().find(|(k, _)| k.starts_with("compute")).map(|(_, v)| *v).unwrap()
}

/// The busiest expert sets the pace: a more imbalanced router makes the step slower, and a dense
/// model does not care.
#[test]
fn moe_step_grows_with_routing_imbalance() {
    let m = model("deepseek-v2-lite");
    let base = TrainOptions { recompute: tunelab_sim::workload::Recompute::Full, ..TrainOptions::default() };
    let times: Vec<f64> = [1.0, 1.25, 2.0].iter().map(|&x| run(&m, &point(8, 8, 8, base, x), 4096, 8, 8).step_time_ms).collect();
    assert!(times[0] < times[1] && times[1] < times[2], "step time vs imbalance 1, 1.25, 2: {times:?}");
    let dense = model("llama-2-7b");
    let a = run(&dense, &point(8, 1, 8, base, 1.0), 4096, 8, 8).step_time_ms;
    let b = run(&dense, &point(8, 1, 8, base, 2.0), 4096, 8, 8).step_time_ms;
    assert_eq!(a, b, "a dense model has no routing");
}

/// Expert parallelism exchanges tokens: on one node the all-to-all runs over HCCS; an EP group
/// that spans two nodes crosses the 25 GB/s inter-node link, so the same per-chip work takes
/// longer. The graph's EP collectives carry each rank's routed copies.
#[test]
fn ep_all_to_all_costs_more_across_nodes() {
    let m = model("deepseek-v2-lite");
    let (seq, gb, chips) = (4096, 16, 16);
    let base = TrainOptions { recompute: tunelab_sim::workload::Recompute::Full, ..TrainOptions::default() };
    // ep = 8: inside a node; ep = 16: across two nodes (same tokens and experts per chip's work).
    let p8 = point(chips, 8, gb, base, 1.25);
    let p16 = point(chips, 16, gb, base, 1.25);
    let opts = graph_options(&p8);
    let g = build_graph(&m, &Workload::TrainStep { micro_batch: 1, seq_len: seq }, &p8.plan, &opts).unwrap();
    let a2a = g.ops.iter().find(|o| o.name.ends_with("ep.dispatch_alltoall")).expect("EP dispatch in the graph");
    let t = m.llm.as_ref().unwrap();
    let moe = t.moe.as_ref().unwrap();
    match a2a.op {
        Op::Comm { bytes, ranks, .. } => {
            assert_eq!(ranks, 8);
            assert_eq!(bytes, seq * moe.top_k * t.hidden * 2, "each rank sends every routed copy of its tokens");
        }
        _ => panic!("not a collective"),
    }
    let (c8, c16) = (compute_ms(&run(&m, &p8, seq, gb, chips)), compute_ms(&run(&m, &p16, seq, gb, chips)));
    println!("per-step compute incl. EP exchange: ep=8 {c8:.0} ms (HCCS), ep=16 {c16:.0} ms (two nodes)");
    assert!(c16 > c8 * 1.2, "an EP group across nodes must cost clearly more: ep=16 {c16} ms vs ep=8 {c8} ms");
}

/// The all-gather dispatcher gathers the whole EP group's tokens and reduce-scatters the combined
/// output (Megatron's MoEAllGatherTokenDispatcher); the all-to-all dispatcher sends routed copies.
/// With top-k above ep the all-gather moves less, below it more.
#[test]
fn dispatchers_move_what_megatron_moves() {
    let m = model("deepseek-v2-lite");
    let t = m.llm.as_ref().unwrap();
    let seq = 4096;
    let mut p = point(8, 8, 8, TrainOptions::default(), 1.25);
    p.train.moe_dispatcher = MoeDispatcher::AllGather;
    let g = build_graph(&m, &Workload::TrainStep { micro_batch: 1, seq_len: seq }, &p.plan, &graph_options(&p)).unwrap();
    let find = |suffix: &str| g.ops.iter().find(|o| o.name.ends_with(suffix)).unwrap_or_else(|| panic!("{suffix} missing"));
    match find("ep.dispatch_allgather").op {
        Op::Comm { bytes, ranks, .. } => assert_eq!((bytes, ranks), (8 * seq * t.hidden * 2, 8)),
        _ => panic!("not a collective"),
    }
    assert!(g.ops.iter().any(|o| o.name.ends_with("ep.combine_reduce_scatter")));
    assert!(g.ops.iter().any(|o| o.name.ends_with("ep.dispatch_allgather.bwd")), "backward conjugates the gather");
    assert!(!g.ops.iter().any(|o| o.name.contains("alltoall")));
    // Both price and differ.
    let a = run(&m, &p, seq, 8, 8).step_time_ms;
    p.train.moe_dispatcher = MoeDispatcher::AllToAll;
    let b = run(&m, &p, seq, 8, 8).step_time_ms;
    assert!(a.is_finite() && b.is_finite() && a != b, "all-gather {a} ms vs all-to-all {b} ms");
}

/// Without --moe-grouped-gemm each local expert is its own matmul (SequentialMLP): the same
/// arithmetic in `local experts` times as many launches per layer.
#[test]
fn sequential_experts_launch_one_matmul_per_expert() {
    let m = model("mixtral-8x7b");
    let layers = m.llm.as_ref().unwrap().layers;
    let plan = ParallelPlan { tp: 8, pp: 1, dp: 1, ep: 1, cp: 1, vpp: 1, sequence_parallel: true, expert_tp: None, ..ParallelPlan::default() };
    let mut p = TrainPoint { plan, micro_batch: 1, train: TrainOptions::default(), precision: Precision::Bf16, moe_imbalance: 1.25 };
    let w = Workload::TrainStep { micro_batch: 1, seq_len: 4096 };
    let grouped = build_graph(&m, &w, &plan, &graph_options(&p)).unwrap();
    p.train.moe_grouped_gemm = false;
    let seq = build_graph(&m, &w, &plan, &graph_options(&p)).unwrap();
    let expert = |g: &tunelab_sim::workload::Graph| g.ops.iter().find(|o| o.name.ends_with("moe.experts.gate_up_proj")).unwrap().clone();
    let (a, b) = (expert(&grouped), expert(&seq));
    assert_eq!(a.repeat, layers);
    assert_eq!(b.repeat, layers * 8, "one launch per expert per layer");
    assert!(matches!(b.op, Op::Matmul { batch: 1, .. }));
    let rel = (grouped.flops() - seq.flops()).abs() / grouped.flops();
    assert!(rel < 1e-9, "same arithmetic either way ({} vs {})", grouped.flops(), seq.flops());
    assert!(seq.launches() > grouped.launches());
}

/// --no-gradient-accumulation-fusion adds a main-gradient pass per micro-batch, so its cost grows
/// with gradient accumulation.
#[test]
fn unfused_gradient_accumulation_costs_per_micro_batch() {
    let m = model("llama-2-7b");
    let fused = TrainOptions { recompute: tunelab_sim::workload::Recompute::Full, ..TrainOptions::default() };
    let unfused = TrainOptions { grad_accum_fusion: false, ..fused };
    let extra = |gb: u64| run(&m, &point(8, 1, gb, unfused, 1.0), 2048, gb, 8).step_time_ms - run(&m, &point(8, 1, gb, fused, 1.0), 2048, gb, 8).step_time_ms;
    let (e1, e4) = (extra(8), extra(32));
    assert!(e1 > 0.0, "unfused accumulation costs time ({e1} ms)");
    assert!(e4 > 3.0 * e1, "per micro-batch: 4 micro-batches {e4} ms vs 1 {e1} ms");
}

/// The scenario options reach the step, and a wrong dispatcher is named.
#[test]
fn scenario_options_reach_the_step_and_are_checked() {
    let e = Scenario::from_json(r#"{"stage":"training","training":{"moe_token_dispatcher":"broadcast"}}"#).err().expect("refused");
    assert!(e.contains("training.moe_token_dispatcher") && e.contains("broadcast"), "{e}");
    let s = Scenario::from_json(r#"{"stage":"training","model":"deepseek-v2-lite","workload":{"seq_len":4096,"global_batch":8},"training":{"chips":8,"moe_token_dispatcher":"allgather","moe_grouped_gemm":false,"gradient_accumulation_fusion":false},"space":{"ep":{"fixed":8},"dp":{"fixed":8},"tp":{"fixed":1},"pp":{"fixed":1}}}"#).unwrap();
    let st = tunelab_scenario::stages::setup(&s).unwrap();
    assert!(st.notes.iter().any(|n| n.contains("allgather token dispatcher") && n.contains("one matmul per local expert")), "{:?}", st.notes);
    // An old scenario without the fields keeps the earlier defaults and serialises without them.
    let old = Scenario::from_json(r#"{"stage":"training","training":{"chips":8}}"#).unwrap();
    let text = serde_json::to_string(&old.training).unwrap();
    assert!(!text.contains("moe_token_dispatcher") && !text.contains("grouped"), "{text}");
}

/// MFU counts the FLOPs of the experts a token actually uses (top-k routed plus shared), on the
/// published tables' basis: model FLOPs x tokens / step / (chips x peak).
#[test]
fn mfu_counts_active_experts_only() {
    let m = model("deepseek-v2-lite");
    let pc = m.params();
    assert!(pc.active * 4 < pc.total, "DeepSeek-V2-Lite activates a fraction of its experts ({} of {})", pc.active, pc.total);
    let seq = 4096;
    let f = tunelab_scenario::training::model_flops_per_token(&m, seq);
    let t = m.llm.as_ref().unwrap();
    let attn = 12.0 * t.layers as f64 * (t.heads * t.head_dim) as f64 * seq as f64;
    assert!((f - (6.0 * pc.active as f64 + attn)).abs() < 1.0, "{f}");
    let base = TrainOptions { recompute: tunelab_sim::workload::Recompute::Full, ..TrainOptions::default() };
    let r = run(&m, &point(8, 8, 8, base, 1.25), seq, 8, 8);
    let peak = device().derived.peak_tflops_fp16 * 1e12;
    let expect = f * (8 * seq) as f64 / (r.step_time_ms * 1e-3) / (8.0 * peak);
    assert!((r.mfu - expect).abs() < 1e-9, "mfu {} vs {expect}", r.mfu);
}

/// Ulysses context parallelism (Qwen2-57B-A14B's script) splits attention by heads: two
/// all-to-alls per layer instead of the ring's key/value exchange, causal attention over the
/// whole sequence on heads / cp, the same attention arithmetic per rank as the ring, and heads
/// that do not split evenly are refused with the reason.
#[test]
fn ulysses_context_parallel_splits_attention_by_heads() {
    use tunelab_sim::workload::CpAlgo;
    let m = model("qwen2-57b-a14b");
    let t = m.llm.as_ref().unwrap();
    let plan = ParallelPlan { tp: 1, pp: 4, dp: 4, ep: 4, cp: 4, vpp: 1, sequence_parallel: false, expert_tp: None, ..ParallelPlan::default() };
    let seq = 4096;
    let w = Workload::TrainStep { micro_batch: 1, seq_len: seq };
    let mut p = TrainPoint { plan, micro_batch: 1, train: TrainOptions { grad_accum: 16, distributed_optimizer: true, ..TrainOptions::default() }, precision: Precision::Bf16, moe_imbalance: 1.25 };
    let ring = build_graph(&m, &w, &plan, &graph_options(&p)).unwrap();
    p.train.cp_algo = CpAlgo::Ulysses;
    let uly = build_graph(&m, &w, &plan, &graph_options(&p)).unwrap();
    let core = |g: &tunelab_sim::workload::Graph| g.ops.iter().find(|o| o.name == "layer.attn.core").unwrap().op.clone();
    match core(&uly) {
        Op::Attention { heads, q_len, kv_len, causal, .. } => assert_eq!((heads, q_len, kv_len, causal), (t.heads / 4, seq, seq, true)),
        _ => panic!("not attention"),
    }
    assert!(uly.ops.iter().any(|o| o.name == "layer.cp.qkv_alltoall") && uly.ops.iter().any(|o| o.name == "layer.cp.out_alltoall"));
    assert!(!uly.ops.iter().any(|o| o.name.contains("kv_allgather")));
    let (a, b) = (tunelab_sim::workload::op_flops(&core(&ring)), tunelab_sim::workload::op_flops(&core(&uly)));
    assert!((a - b).abs() / a < 0.01, "attention FLOPs per rank: ring {a} vs Ulysses {b}");
    // 28 heads do not split 8 ways.
    let plan8 = ParallelPlan { cp: 8, dp: 2, ..plan };
    let e = build_graph(&m, &w, &plan8, &graph_options(&TrainPoint { plan: plan8, ..p })).unwrap_err();
    assert!(e.contains("Ulysses") && e.contains("28 heads"), "{e}");
    // The scenario option reaches the step and a wrong name is refused.
    let e = Scenario::from_json(r#"{"stage":"training","training":{"context_parallel_algo":"spiral"}}"#).err().unwrap();
    assert!(e.contains("training.context_parallel_algo"), "{e}");
}

/// MLA in a training step: the fused attention kernel takes one head dimension, so the values are
/// padded from v_head_dim (128) to the query/key dimension (192) and the output sliced back
/// (Megatron-Core MLASelfAttention, MindSpeed-LLM padding_v_head_dim). PV runs on 192, so the
/// core costs more than on the mean of 192 and 128; serving's prefill graph is not padded.
#[test]
fn mla_training_pads_values_to_the_query_key_dimension() {
    let m = model("deepseek-v2-lite");
    let mla = m.llm.as_ref().unwrap().mla.clone().unwrap();
    let qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
    assert!(mla.v_head_dim < qk);
    let p = point(8, 8, 8, TrainOptions::default(), 1.25);
    let g = build_graph(&m, &Workload::TrainStep { micro_batch: 1, seq_len: 4096 }, &p.plan, &graph_options(&p)).unwrap();
    let core = g.ops.iter().find(|o| o.name.ends_with("attn.core")).unwrap();
    assert!(matches!(core.op, Op::Attention { head_dim, .. } if head_dim == qk), "{:?}", core.op);
    assert!(g.ops.iter().any(|o| o.name.ends_with("attn.v_pad")) && g.ops.iter().any(|o| o.name.ends_with("attn.out_slice")));
    let serve = build_graph(&m, &Workload::Prefill { batch: 1, input_len: 4096 }, &p.plan, &tunelab_sim::workload::GraphOptions::default()).unwrap();
    let core = serve.ops.iter().find(|o| o.name.ends_with("attn.core")).unwrap();
    assert!(matches!(core.op, Op::Attention { head_dim, .. } if head_dim == (qk + mla.v_head_dim).div_ceil(2)), "{:?}", core.op);
    assert!(!serve.ops.iter().any(|o| o.name.ends_with("attn.v_pad")));
}

/// MindSpeed's --moe-permutation-async-comm all-gather combine accumulates the local copies in an
/// fp32 buffer of the group's tokens (cast in, index_put accumulate, cast back: NewIndePut), so
/// the step is slower than the 16-bit scatter-add; its backward is one 16-bit row gather, and the
/// flag changes nothing under the all-to-all dispatcher. The scenario field reaches the step.
#[test]
fn permutation_async_comm_combines_in_fp32() {
    use tunelab_sim::DType;
    let m = model("deepseek-v2-lite");
    let (seq, gb, chips) = (4096, 8, 8);
    let base = TrainOptions { moe_dispatcher: MoeDispatcher::AllGather, recompute: tunelab_sim::workload::Recompute::Full, ..TrainOptions::default() };
    let off = point(chips, 8, gb, base, 1.25);
    let on = point(chips, 8, gb, TrainOptions { moe_permutation_async_comm: true, ..base }, 1.25);
    let g = build_graph(&m, &Workload::TrainStep { micro_batch: 1, seq_len: seq }, &on.plan, &graph_options(&on)).unwrap();
    let add = g.ops.iter().find(|o| o.name.ends_with("moe.combine_scatter_add_fp32")).expect("fp32 scatter-add");
    assert!(matches!(add.op, Op::Vector { dtype: DType::Fp32, .. }));
    let bwd = g.ops.iter().find(|o| o.name.ends_with("moe.combine_scatter_add_fp32.bwd")).expect("its backward");
    assert!(matches!(bwd.op, Op::Vector { kind: tunelab_sim::op::VectorKind::Gather, dtype: DType::Bf16, .. }), "{:?}", bwd.op);
    assert!(g.ops.iter().any(|o| o.name.ends_with("moe.combine_fp32_to_bf16")));
    assert!(!g.ops.iter().any(|o| o.name.contains("moe.combine_fp32_") && o.name.ends_with(".bwd")), "staging has no backward");
    let (a, b) = (run(&m, &off, seq, gb, chips).step_time_ms, run(&m, &on, seq, gb, chips).step_time_ms);
    assert!(b > a, "fp32 combine {b} ms vs 16-bit {a} ms");
    // All-to-all: no effect.
    let a2a = |x: bool| run(&m, &point(chips, 8, gb, TrainOptions { moe_permutation_async_comm: x, recompute: base.recompute, ..TrainOptions::default() }, 1.25), seq, gb, chips).step_time_ms;
    assert_eq!(a2a(false), a2a(true));
    // The scenario field.
    let s = Scenario::from_json(r#"{"stage":"training","training":{"chips":8,"moe_permutation_async_comm":true}}"#).unwrap();
    assert!(s.training.moe_permutation_async_comm);
    let old = Scenario::from_json(r#"{"stage":"training","training":{"chips":8}}"#).unwrap();
    assert!(!serde_json::to_string(&old.training).unwrap().contains("permutation"));
}
