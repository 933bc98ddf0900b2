//! The published MindSpeed-LLM / ModelLink pretraining rows (shared/calibration, category
//! "training"): predicted tokens/s/NPU through the training stage's own `simulate`, printed
//! against the measurement. A benchmark: it prints the figures and the median |error|; it asserts
//! only that every row is expressible and the prediction is finite and positive.

use tunelab_scenario::training::{simulate, TrainPoint};
use tunelab_sim::device::bundled_device;
use tunelab_sim::model::load_bundled;
use tunelab_sim::workload::{training_constants, CpAlgo, MoeDispatcher, ParallelPlan, Recompute, TrainOptions};
use tunelab_sim::Precision;

struct Row {
    id: &'static str,
    model: &'static str,
    seq: u64,
    chips: u64,
    tp: u64,
    pp: u64,
    vpp: u64,
    ep: u64,
    cp: u64,
    sp: bool,
    mb: u64,
    gb: u64,
    recompute: Recompute,
    dist_opt: bool,
    measured: f64,
}

#[allow(clippy::too_many_arguments)]
const fn row(id: &'static str, model: &'static str, seq: u64, chips: u64, tp: u64, pp: u64, vpp: u64, ep: u64, cp: u64, sp: bool, mb: u64, gb: u64, dist_opt: bool, measured: f64) -> Row {
    Row { id, model, seq, chips, tp, pp, vpp, ep, cp, sp, mb, gb, recompute: Recompute::None, dist_opt, measured }
}

/// The 17 LLM rows (the FLUX fine-tune is not an LLM). Sequence parallelism is on wherever
/// TP > 1 (MindSpeed-LLM's scripts pass --sequence-parallel with tensor parallelism; the
/// Qwen2.5-7B 32K row does not state it and does not fit without it). VPP from "VPP_layers_per_stage": layers
/// per virtual chunk -> chunks = layers / pp / that.
fn rows() -> Vec<Row> {
    let mut v = vec![
        row("trn-llama2-13b-4k-1x8-sep24", "llama-2-13b", 4096, 8, 8, 1, 1, 1, 1, true, 4, 512, false, 2016.0),
        row("trn-llama2-13b-4k-1x8-oct24", "llama-2-13b", 4096, 8, 8, 1, 1, 1, 1, true, 4, 512, false, 2209.0),
        row("trn-llama2-13b-4k-1x8-feb24", "llama-2-13b", 4096, 8, 8, 1, 1, 1, 1, true, 2, 16, false, 1550.0),
        row("trn-llama2-70b-4k-4x8-sep24", "llama-2-70b", 4096, 32, 8, 4, 4, 1, 1, true, 1, 1024, false, 439.0),
        row("trn-llama2-70b-4k-8x8-feb24", "llama-2-70b", 4096, 64, 8, 8, 1, 1, 1, true, 2, 1024, false, 350.0),
        row("trn-llama3-8b-8k-1x8", "llama-3-8b", 8192, 8, 8, 1, 1, 1, 1, true, 2, 64, false, 2400.0),
        row("trn-llama3-70b-8k-8x8", "llama-3-70b", 8192, 32, 8, 4, 1, 1, 1, true, 1, 512, false, 353.0),
        row("trn-qwen-7b-8k-1x8", "qwen-7b", 8192, 8, 8, 1, 1, 1, 1, true, 2, 64, false, 2499.0),
        row("trn-qwen-72b-8k-16x8", "qwen-72b", 8192, 64, 8, 8, 1, 1, 1, true, 1, 512, false, 285.0),
        row("trn-qwen2-7b-4k-1x8", "qwen2-7b", 4096, 8, 1, 2, 1, 1, 1, false, 1, 256, true, 4034.0),
        row("trn-qwen2-72b-4k-4x8", "qwen2-72b", 4096, 32, 8, 4, 10, 1, 1, true, 1, 64, true, 368.0),
        row("trn-qwen2-57b-a14b-4k-8x8", "qwen2-57b-a14b", 4096, 64, 1, 4, 1, 4, 4, false, 1, 64, true, 416.0),
        row("trn-mixtral-8x7b-32k-8x8", "mixtral-8x7b", 32768, 64, 8, 4, 1, 1, 2, true, 1, 128, true, 706.0),
        row("trn-baichuan2-13b-4k-1x8", "baichuan2-13b", 4096, 8, 8, 1, 1, 1, 1, true, 2, 128, false, 1754.0),
        row("trn-qwen2.5-7b-32k-1x8", "qwen2.5-7b", 32768, 8, 4, 2, 1, 1, 1, true, 1, 16, false, 2177.0),
        row("trn-qwen2.5-32b-32k-4x8", "qwen2.5-32b", 32768, 32, 8, 4, 1, 1, 1, true, 1, 64, true, 407.0),
        row("trn-deepseek-v2-lite-8k-1x8", "deepseek-v2-lite", 8192, 8, 1, 1, 1, 8, 1, false, 1, 8, true, 2830.0),
    ];
    // DeepSeek-V2-Lite runs with full recomputation of every layer (its script says so). The
    // Qwen2.5-32B 32K row states no recomputation but cannot hold 16 layers x 4 in-flight
    // micro-batches of 32K-token activations in 64 GiB without it: full recomputation assumed.
    v[16].recompute = Recompute::Full;
    v[15].recompute = Recompute::Full;
    v
}

/// The MoE rows' Megatron flags as their example scripts pass them (the converter's
/// SCRIPT_FLAGS, scripts/convert_measurements.py): token dispatcher, grouped matmul,
/// gradient-accumulation fusion, gradient-reduce and parameter-gather overlap, CP algorithm,
/// MindSpeed's --moe-permutation-async-comm.
fn script_flags(id: &str, t: TrainOptions) -> TrainOptions {
    let ag = MoeDispatcher::AllGather;
    match id {
        "trn-qwen2-57b-a14b-4k-8x8" => TrainOptions { moe_dispatcher: ag, moe_grouped_gemm: true, grad_accum_fusion: false, overlap_grad_reduce: false, cp_algo: CpAlgo::Ulysses, ..t },
        "trn-mixtral-8x7b-32k-8x8" => TrainOptions { moe_dispatcher: ag, moe_grouped_gemm: false, overlap_grad_reduce: true, overlap_param_gather: true, ..t },
        "trn-deepseek-v2-lite-8k-1x8" => TrainOptions { moe_dispatcher: ag, moe_grouped_gemm: false, grad_accum_fusion: false, overlap_grad_reduce: false, moe_permutation_async_comm: true, ..t },
        _ => t,
    }
}

#[test]
fn training_rows_predicted_vs_measured() {
    let device = bundled_device("910B2").unwrap();
    let mut errs = Vec::new();
    println!("{:<32} {:>9} {:>9} {:>7} {:>6}  breakdown (ms)", "row", "measured", "predicted", "error", "MFU");
    for r in rows() {
        let model = load_bundled(r.model).unwrap().model;
        let dp = r.chips / (r.tp * r.pp * r.cp);
        let plan = ParallelPlan { tp: r.tp, pp: r.pp, dp, ep: r.ep, cp: r.cp, vpp: r.vpp, sequence_parallel: r.sp, expert_tp: None, ..ParallelPlan::default() };
        let accum = r.gb / (r.mb * dp);
        // MindSpeed-LLM's example scripts pass --no-gradient-accumulation-fusion (the converter's
        // MINDSPEED_LLM_FLAGS, scripts/convert_measurements.py).
        let train = TrainOptions { recompute: r.recompute, distributed_optimizer: r.dist_opt, grad_accum: accum, fp32_grads: true, grad_accum_fusion: false, ..TrainOptions::default() };
        let train = script_flags(r.id, train);
        let p = TrainPoint { plan, micro_batch: r.mb, train, precision: Precision::Bf16, moe_imbalance: training_constants().moe_imbalance.value };
        // Like the stage's baseline: the least recomputation that fits when the row states none.
        let mut res = simulate(&model, &device, &p, r.seq, r.gb, r.chips);
        let mut used = r.recompute;
        for rc in [Recompute::Selective, Recompute::Full] {
            if matches!(&res, Err(e) if e.contains("out of memory")) && r.recompute == Recompute::None {
                let q = TrainPoint { train: TrainOptions { recompute: rc, ..p.train }, ..p };
                res = simulate(&model, &device, &q, r.seq, r.gb, r.chips);
                used = rc;
            }
        }
        if used != r.recompute {
            println!("  ({}: recompute {used:?} to fit)", r.id);
        }
        match res {
            Ok(res) => {
                let pred = res.tokens_per_s_per_chip;
                assert!(pred.is_finite() && pred > 0.0, "{}: {pred}", r.id);
                let e = pred / r.measured - 1.0;
                errs.push(e.abs());
                let b: Vec<String> = res.breakdown.iter().map(|(k, v)| format!("{}={v:.0}", k.split_whitespace().next().unwrap_or(""))).collect();
                println!("{:<32} {:>9.0} {:>9.0} {:>+6.0}% {:>6.3}  {}", r.id, r.measured, pred, e * 100.0, res.mfu, b.join(" "));
            }
            Err(e) => panic!("{}: not expressible: {e}", r.id),
        }
    }
    errs.sort_by(f64::total_cmp);
    let median = errs[errs.len() / 2];
    println!("training rows: {} predicted, median |error| {:.1}%", errs.len(), median * 100.0);
}

/// Per-operator times of one row's step, for inspection (`--ignored --nocapture`).
#[test]
#[ignore]
fn training_row_ops() {
    use tunelab_sim::tiling::Tiling;
    use tunelab_sim::workload::{build_graph, Workload};
    let device = bundled_device("910B2").unwrap();
    let id = std::env::var("ROW").unwrap_or_else(|_| "trn-llama3-8b-8k-1x8".into());
    let r = rows().into_iter().find(|r| r.id == id).unwrap();
    let model = load_bundled(r.model).unwrap().model;
    let dp = r.chips / (r.tp * r.pp * r.cp);
    let plan = ParallelPlan { tp: r.tp, pp: r.pp, dp, ep: r.ep, cp: r.cp, vpp: r.vpp, sequence_parallel: r.sp, expert_tp: None, ..ParallelPlan::default() };
    let train = script_flags(r.id, TrainOptions { recompute: r.recompute, distributed_optimizer: r.dist_opt, grad_accum: 1, ..TrainOptions::default() });
    let p = TrainPoint { plan, micro_batch: r.mb, train, precision: Precision::Bf16, moe_imbalance: training_constants().moe_imbalance.value };
    let opts = tunelab_scenario::training::graph_options(&p);
    let g = build_graph(&model, &Workload::TrainStep { micro_batch: r.mb, seq_len: r.seq }, &plan, &opts).unwrap();
    let mut total = 0.0;
    for o in &g.ops {
        let e = tunelab_sim::cost::estimate(&o.op, &Tiling::Default, &device).unwrap();
        let t = e.time_us * o.repeat as f64 / 1e3;
        total += t;
        println!("{:<44} x{:<4} {:>9.2} ms  {:>6.1} TF/s  {:?}", o.name, o.repeat, t, e.attained_tflops, e.bound);
    }
    println!("total {total:.1} ms per micro-batch");
}
