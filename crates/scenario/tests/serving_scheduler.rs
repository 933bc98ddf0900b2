//! The continuous-batching scheduler and the deployment stage that tunes with it: determinism,
//! queueing sanity (Little's law), preemption under a full KV cache, goodput, eager vs graph,
//! batch ordering, and the measured torchair rows ranking as measured. Speed figures print.

use tunelab_scenario::scenario::Scenario;
use tunelab_scenario::stages::deployment::serve;
use tunelab_scenario::scheduler::ServingStats;
use tunelab_search::{Config, Value};

fn scenario(model: &str, device: &str, input: i64, output: i64) -> Scenario {
    let mut s = Scenario::default();
    s.model = tunelab_scenario::scenario::ModelRef::Id(model.into());
    s.device = tunelab_scenario::scenario::DeviceRef::Name(device.into());
    s.workload.input_len = input;
    s.workload.output_len = output;
    s.seed = 7;
    s
}

fn names() -> Vec<String> {
    ["batch", "precision", "tp", "kv_cache_fraction", "memory_strategy", "launch", "max_num_batched_tokens", "chunked_prefill"].iter().map(|x| x.to_string()).collect()
}

#[allow(clippy::too_many_arguments)]
fn cfg(batch: i64, precision: &str, tp: i64, kv: f64, mem: &str, launch: &str, tokens: i64, chunked: &str) -> Config {
    Config(vec![
        Value::Int(batch),
        Value::Str(precision.into()),
        Value::Int(tp),
        Value::Float(kv),
        Value::Str(mem.into()),
        Value::Str(launch.into()),
        Value::Int(tokens),
        Value::Str(chunked.into()),
    ])
}

fn run(s: &Scenario, c: &Config) -> ServingStats {
    serve(s, &names(), c).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn same_seed_same_result_other_seed_other_requests() {
    let mut s = scenario("llama-2-7b", "910B2", 512, 128);
    s.deployment.serving.arrival = "poisson".into();
    s.deployment.serving.request_rate = Some(4.0);
    s.deployment.serving.requests = 120;
    let c = cfg(32, "fp16", 1, 0.9, "dynamic_pool", "graph", 4096, "on");
    let a = run(&s, &c);
    let b = run(&s, &c);
    assert_eq!(a, b);
    s.seed = 8;
    let d = run(&s, &c);
    assert_ne!(a.ttft_ms, d.ttft_ms, "another seed draws other arrivals and lengths");
}

#[test]
fn littles_law_holds_for_the_simulated_queue() {
    // Mean requests in the system = arrival rate x mean time in the system. With Poisson
    // arrivals well below capacity, the measured duration's throughput equals the offered rate
    // and L = lambda W is checked against the batch actually seen by the scheduler.
    let mut s = scenario("llama-2-7b", "910B2", 256, 64);
    s.deployment.serving.arrival = "poisson".into();
    s.deployment.serving.request_rate = Some(2.0);
    s.deployment.serving.requests = 400;
    s.deployment.serving.length_distribution = "fixed".into();
    let st = run(&s, &cfg(64, "fp16", 1, 0.9, "dynamic_pool", "graph", 8192, "on"));
    // Throughput of a stable queue is the arrival rate.
    assert!((st.requests_per_s - 2.0).abs() / 2.0 < 0.15, "{}", st.requests_per_s);
    // W = TTFT + (output - 1) x TPOT; L = lambda W must match the mean occupancy the
    // scheduler saw per step, weighted by time (steps are near-uniform here).
    let w_s = (st.ttft_ms.mean + 63.0 * st.tpot_ms.mean) / 1e3;
    let l = st.requests_per_s * w_s;
    let occupancy = st.mean_batch * st.busy_fraction.max(1e-9);
    assert!(l > 0.5 * occupancy && l < 2.0 * occupancy, "L = {l:.2}, occupancy {occupancy:.2}");
    // With 64 slots a request waits only for the step in flight to end.
    assert!(st.queue_ms.p99 < 2.0 * st.itl_ms.p99, "queue {:?} itl {:?}", st.queue_ms, st.itl_ms);
}

#[test]
fn a_full_kv_cache_preempts_and_recomputes() {
    // A KV share barely above the weights leaves a few blocks: long sequences must preempt.
    let mut s = scenario("llama-2-7b", "910B2", 1024, 1024);
    s.deployment.serving.requests = 64;
    s.deployment.serving.length_distribution = "fixed".into();
    let tight = run(&s, &cfg(64, "fp16", 1, 0.26, "dynamic_pool", "graph", 8192, "on"));
    assert!(tight.preemptions > 0, "{tight:?}");
    assert!(tight.kv_peak_fraction > 0.9);
    // 16 sequences of 2048 tokens need 16 GiB of KV: no preemption with most of the chip.
    let roomy = run(&s, &cfg(16, "fp16", 1, 0.95, "dynamic_pool", "graph", 8192, "on"));
    assert_eq!(roomy.preemptions, 0);
    assert!(roomy.output_tokens_per_s > tight.output_tokens_per_s);
    // Reserving the whole request at admission never preempts (it admits fewer instead).
    let reserve = run(&s, &cfg(64, "fp16", 1, 0.26, "predictive", "graph", 8192, "on"));
    assert_eq!(reserve.preemptions, 0);
}

#[test]
fn goodput_never_exceeds_throughput_and_drops_under_a_tight_slo() {
    let mut s = scenario("llama-2-7b", "910B2", 1024, 128);
    s.deployment.serving.arrival = "poisson".into();
    s.deployment.serving.request_rate = Some(6.0);
    s.deployment.serving.requests = 200;
    let c = cfg(32, "fp16", 1, 0.9, "dynamic_pool", "graph", 8192, "on");
    let free = run(&s, &c);
    assert!(free.goodput_rps <= free.requests_per_s + 1e-12);
    assert!((free.slo_attained - 1.0).abs() < 1e-12, "no limits: every request counts");
    s.constraints.max_ttft_ms = Some(free.ttft_ms.p50);
    let tight = run(&s, &c);
    assert!(tight.goodput_rps < free.goodput_rps && tight.goodput_rps <= tight.requests_per_s);
    assert!(tight.slo_attained > 0.3 && tight.slo_attained < 0.8, "{}", tight.slo_attained);
}

#[test]
fn eager_is_slower_than_graph_in_decode() {
    let s = scenario("llama-2-7b", "910B2", 512, 128);
    let e = run(&s, &cfg(8, "fp16", 1, 0.9, "dynamic_pool", "eager", 8192, "on"));
    let g = run(&s, &cfg(8, "fp16", 1, 0.9, "dynamic_pool", "graph", 8192, "on"));
    assert!(e.tpot_ms.p50 > 1.3 * g.tpot_ms.p50, "eager {:?} graph {:?}", e.tpot_ms, g.tpot_ms);
    assert!(g.graph_steps > 0 && e.graph_steps == 0);
}

#[test]
fn bigger_batches_serve_more_tokens_at_a_higher_tpot() {
    let s = scenario("llama-2-7b", "910B2", 512, 128);
    let mut last: Option<ServingStats> = None;
    for b in [1, 4, 16, 64] {
        let st = run(&s, &cfg(b, "fp16", 1, 0.9, "dynamic_pool", "graph", 8192, "on"));
        if let Some(p) = &last {
            assert!(st.output_tokens_per_s > p.output_tokens_per_s, "batch {b}");
            assert!(st.tpot_ms.p50 > p.tpot_ms.p50, "batch {b}");
        }
        last = Some(st);
    }
}

#[test]
fn chunked_prefill_bounds_the_inter_token_latency() {
    // Without chunking a long prompt stalls every running decode for a whole prefill.
    let mut s = scenario("llama-2-7b", "910B2", 2048, 128);
    s.deployment.serving.requests = 96;
    let on = run(&s, &cfg(16, "fp16", 1, 0.9, "dynamic_pool", "graph", 512, "on"));
    let off = run(&s, &cfg(16, "fp16", 1, 0.9, "dynamic_pool", "graph", 8192, "off"));
    assert!(on.itl_ms.p99 < off.itl_ms.p99, "on {:?} off {:?}", on.itl_ms, off.itl_ms);
}

#[test]
fn bad_settings_are_refused_by_name() {
    let mut s = scenario("llama-2-7b", "910B2", 4096, 256);
    let e = serve(&s, &names(), &cfg(8, "fp16", 1, 0.9, "dynamic_pool", "graph", 2048, "off")).unwrap_err();
    assert!(e.contains("max_num_batched_tokens"), "{e}");
    s.deployment.serving.arrival = "poisson".into();
    assert!(serve(&s, &names(), &cfg(8, "fp16", 1, 0.9, "dynamic_pool", "graph", 8192, "on")).unwrap_err().contains("request_rate"));
    s.deployment.serving.arrival = "sometimes".into();
    assert!(serve(&s, &names(), &cfg(8, "fp16", 1, 0.9, "dynamic_pool", "graph", 8192, "on")).unwrap_err().contains("deployment.serving.arrival"));
}

/// (row id, model, chip, tp, precision, batch, launch, measured prefill ms, measured decode ms)
const TORCHAIR: &[(&str, &str, &str, i64, &str, i64, &str, f64, f64)] = &[
    ("srv-llama2-7b-tp1-bs1-modes eager", "llama-2-7b", "910B2", 1, "fp16", 1, "eager", 62.8, 28.1),
    ("srv-llama2-7b-tp1-bs1-modes graph", "llama-2-7b", "910B2", 1, "fp16", 1, "graph", 62.9, 14.2),
    ("srv-llama2-7b-tp1-bs4-a8w8c8 fp16", "llama-2-7b", "910B2", 1, "fp16", 4, "graph", 309.0, 23.9),
];

#[test]
fn torchair_rows_rank_as_measured() {
    let s = {
        let mut s = scenario("llama-2-7b", "910B2", 1024, 1024);
        s.deployment.serving.mode = "static".into();
        s
    };
    let mut pred = Vec::new();
    for (id, model, chip, tp, prec, b, launch, pre, dec) in TORCHAIR {
        let mut s = s.clone();
        s.model = tunelab_scenario::scenario::ModelRef::Id(model.to_string());
        s.device = tunelab_scenario::scenario::DeviceRef::Name(chip.to_string());
        let st = run(&s, &cfg(*b, prec, *tp, 0.95, "predictive", launch, 8192, "on"));
        println!("{id:40} prefill {:8.1} ms (measured {pre:7.1}, {:+5.0}%)  decode {:6.2} ms (measured {dec:5.1}, {:+5.0}%)", st.ttft_ms.p50, (st.ttft_ms.p50 / pre - 1.0) * 100.0, st.tpot_ms.p50, (st.tpot_ms.p50 / dec - 1.0) * 100.0);
        pred.push((st.ttft_ms.p50, st.tpot_ms.p50));
    }
    // Eager decode slower than graph; prefill about equal (device bound); batch 4 slower.
    assert!(pred[0].1 > 1.5 * pred[1].1);
    assert!((pred[0].0 / pred[1].0 - 1.0).abs() < 0.1);
    assert!(pred[2].1 > pred[1].1 && pred[2].0 > 3.0 * pred[1].0);
}

#[test]
fn bench_thousand_requests() {
    let mut s = scenario("llama-2-7b", "910B2", 1024, 256);
    s.deployment.serving.requests = 1000;
    let c = cfg(64, "fp16", 1, 0.9, "dynamic_pool", "graph", 8192, "on");
    let t = std::time::Instant::now();
    let st = run(&s, &c);
    let first = t.elapsed();
    // The same configuration again through the stage objective: every step shape is priced
    // already, so this is the simulation itself.
    let mut setup = tunelab_scenario::stages::deployment::setup(&s).unwrap();
    let mut c8 = c.clone();
    c8.0.truncate(setup.space.names().len());
    let _ = setup.objective.evaluate(&c8);
    let t = std::time::Instant::now();
    let again = setup.objective.evaluate(&c8);
    println!("bench: 1000 requests, step shapes already priced: {:.1} ms ({})", t.elapsed().as_secs_f64() * 1e3, if matches!(again, tunelab_search::Outcome::Ok(_)) { "ok" } else { "failed" });
    println!(
        "bench: 1000 requests (llama-2-7b, 910B2, batch 64): first run {:.1} ms incl. pricing; {} steps, {:.0} tokens/s, TTFT p50/p90/p99 {:.0}/{:.0}/{:.0} ms, TPOT p50 {:.1} ms, ITL p99 {:.1} ms, queue {:.0} ms",
        first.as_secs_f64() * 1e3, st.steps, st.output_tokens_per_s, st.ttft_ms.p50, st.ttft_ms.p90, st.ttft_ms.p99, st.tpot_ms.p50, st.itl_ms.p99, st.queue_ms.mean
    );
}

#[test]
fn bench_full_deployment_tune() {
    let s = tunelab_scenario::bundled_scenario("llama2-7b-910B2-deployment").unwrap();
    let t = std::time::Instant::now();
    let mut run = tunelab_scenario::Run::new(&s).unwrap();
    run.run_to_end();
    let best = run.overall_best().and_then(|(_, t)| t.value()).map(tunelab_scenario::format_best);
    println!("bench: full llama2-7b-910B2-deployment tune ({} evaluations, scheduler in the loop): {:.2} s; best {}", s.budget, t.elapsed().as_secs_f64(), best.unwrap_or_default());
}

#[test]
fn bench_tune_split_pricing_and_simulation() {
    let s = tunelab_scenario::bundled_scenario("llama2-7b-910B2-deployment").unwrap();
    let mut setup = tunelab_scenario::stages::deployment::setup(&s).unwrap();
    let mut rng = tunelab_search::Rng::seed_from_u64(1);
    let configs: Vec<Config> = (0..300).filter_map(|_| setup.space.sample(&mut rng)).collect();
    let t = std::time::Instant::now();
    let ok = configs.iter().filter(|c| matches!(setup.objective.evaluate(c), tunelab_search::Outcome::Ok(_))).count();
    let first = t.elapsed().as_secs_f64();
    let t = std::time::Instant::now();
    for c in &configs {
        let _ = setup.objective.evaluate(c);
    }
    let again = t.elapsed().as_secs_f64();
    println!("bench: 300 random deployment configurations ({ok} feasible): {first:.2} s first (pricing + simulation), {again:.2} s again (simulation only)");
}
