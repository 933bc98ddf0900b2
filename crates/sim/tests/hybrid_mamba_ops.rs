//! A Mamba-2 layer's operators as the engines run them (`workload::llm::ssm`): the gated RMSNorm
//! of a model with several B/C groups is vLLM's and transformers' native path, ten kernels
//! (gate cast, SiLU, gate multiply, square, group mean, + eps, rsqrt, scale, cast back, weight),
//! each with its own launch; with one group it is one fused kernel. Each kernel's launch is
//! counted once (eager dispatch) and the FP32 passes are priced in FP32.

use tunelab_sim::dtype::DType;
use tunelab_sim::model::load_model;
use tunelab_sim::op::{Op, VectorKind};
use tunelab_sim::workload::{build_graph, GraphOptions, ParallelPlan, Workload};

const CONFIG: &str = include_str!("data/models/nemotron-3-super-120b-a12b-fp8.config.json");

fn norm_ops(config: &str, tp: u64) -> Vec<(String, Op, u64)> {
    let m = load_model(config).unwrap().model;
    let plan = ParallelPlan { tp, ..ParallelPlan::default() };
    let g = build_graph(&m, &Workload::Decode { batch: 4, context_len: 512, output_len: 0 }, &plan, &GraphOptions::default()).unwrap();
    g.ops.into_iter().filter(|o| o.name.contains(".mamba.gated_norm")).map(|o| (o.name, o.op, o.repeat)).collect()
}

#[test]
fn several_groups_take_the_native_ten_kernel_norm_in_fp32() {
    let ops = norm_ops(CONFIG, 8);
    assert_eq!(ops.len(), 10, "{:?}", ops.iter().map(|o| &o.0).collect::<Vec<_>>());
    // Once per Mamba-2 layer (40 in Nemotron-3-Super).
    assert!(ops.iter().all(|o| o.2 == 40), "{ops:?}");
    let mean = ops.iter().find(|o| o.0.ends_with(".gated_norm.mean")).unwrap();
    // 128 heads x 64 / tp 8 channels per chip, four decoding rows, in FP32.
    assert_eq!(mean.1, Op::Vector { kind: VectorKind::Reduce, rows: 4, row_len: 1024, dtype: DType::Fp32 });
    // Eager dispatch counts one launch per kernel: ten, not the fused op's two.
    let launches: f64 = ops.iter().map(|o| tunelab_sim::cost::dispatch::eager_launches(&o.1)).sum();
    assert_eq!(launches, 10.0);
}

#[test]
fn one_group_keeps_the_fused_kernel() {
    let one = CONFIG.replace("\"n_groups\": 8", "\"n_groups\": 1");
    assert_ne!(one, CONFIG, "the fixture's n_groups changed shape");
    let ops = norm_ops(&one, 8);
    assert_eq!(ops.len(), 1, "{ops:?}");
    assert!(matches!(ops[0].1, Op::Vector { kind: VectorKind::SwiGlu, .. }));
}
