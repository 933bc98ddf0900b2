//! An MLA model's decode attention in the absorbed form (every query head over the one cached
//! latent) is priced as the kernel runs it: all of a chip's query heads are the rows against
//! each KV block, the 544-wide latent taken through L0 in 128-wide slices. Written as one
//! 544-wide head, the device's flash tiling fitted only 16 query rows a block and every 16-row
//! block streamed the whole cache again: DeepSeek-V3.1's 2P1D decode at TP1 (128 heads, MTP's
//! two positions per sequence) was priced at 14.7 TFLOP/s and 4.5x its measured TPOT.

use tunelab_sim::cost::estimate;
use tunelab_sim::dtype::Precision;
use tunelab_sim::op::Op;
use tunelab_sim::workload::{build_graph, GraphOptions, ParallelPlan, Workload};
use tunelab_sim::Tiling;

fn core(m: &tunelab_sim::model::ModelDesc, tp: u64, batch: u64, ctx: u64) -> Op {
    let opts = GraphOptions { precision: Precision::W8a8, ..GraphOptions::default() };
    let plan = ParallelPlan { tp, ..ParallelPlan::default() };
    let g = build_graph(m, &Workload::Decode { batch, context_len: ctx, output_len: 1 }, &plan, &opts).unwrap();
    g.ops.iter().find(|o| o.name == "layer_moe.attn.core").unwrap().op.clone()
}

#[test]
fn deepseek_v3_absorbed_decode_keeps_its_flops_and_runs_near_the_cube() {
    let m = tunelab_sim::model::load_bundled("deepseek-v3").unwrap().model;
    let d = tunelab_sim::device::bundled_device("910C").unwrap();
    let op = core(&m, 1, 28, 4352);
    let Op::Attention { heads, kv_heads, head_dim, q_len, .. } = op else { panic!("{op:?}") };
    // 128 query heads over 5 slices of the (576 + 512) / 2 = 544-wide latent.
    assert_eq!((heads, kv_heads, head_dim, q_len), (128 * 5, 5, 109, 1), "{op:?}");
    let e = estimate(&op, &Tiling::Default, &d).unwrap();
    // The absorbed form's arithmetic: QK^T on 576 and PV on 512 per head and cached token.
    let want = 2.0 * 28.0 * 128.0 * 4352.0 * (576.0 + 512.0);
    assert!((e.flops / want - 1.0).abs() < 0.01, "attention FLOPs {:.3e}, absorbed form {want:.3e}", e.flops);
    // At 14.7 TFLOP/s (the one-head form) this layer's attention took 4.5 ms; the kernel that
    // takes every head against one KV block reaches the cube's tens of TFLOP/s.
    assert!(e.attained_tflops > 60.0, "absorbed MLA decode at tp 1 attains {:.1} TFLOP/s ({:.0} us)", e.attained_tflops, e.time_us);
}

#[test]
fn at_wide_tensor_parallelism_the_slices_are_never_slower_than_one_wide_head() {
    // DeepSeek-V3 (Kimi-K2's layout) at TP16: 8 heads per chip fit one block either way, so the
    // sliced form reads each cached latent once as the one-head form did; its five slices are
    // five times the work items, spread over more cores, so it is never slower (here about 30%
    // faster for this one layer; the Kimi-K2 TP16 rows' TPOT moves under 0.1%).
    let m = tunelab_sim::model::load_bundled("deepseek-v3").unwrap().model;
    let d = tunelab_sim::device::bundled_device("910C").unwrap();
    let op = core(&m, 16, 16, 8192);
    let Op::Attention { kind, batch, kv_len, causal, dtype, .. } = op else { panic!("{op:?}") };
    let wide = Op::Attention { kind, batch, heads: 8, kv_heads: 1, q_len: 1, kv_len, head_dim: 544, causal, dtype };
    let (a, b) = (estimate(&op, &Tiling::Default, &d).unwrap(), estimate(&wide, &Tiling::Default, &d).unwrap());
    let r = a.time_us / b.time_us;
    assert!((0.5..=1.0).contains(&r), "sliced {:.1} us vs one wide head {:.1} us", a.time_us, b.time_us);
}
