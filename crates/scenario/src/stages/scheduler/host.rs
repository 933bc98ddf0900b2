//! The serving engine's host costs (framework layer): per-step scheduler, sampling and
//! detokenisation time, graph capture, the front end's time per request, Triton launches, and
//! how the engine holds its KV cache, read from `assets/constants/serving-host.json` (each value
//! with its source and bound there). `price` adds them to the device model's step time.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The host-cost constants file.
use crate::spec::options::serving::HOST_JSON;

#[derive(Deserialize)]
struct Field {
    value: f64,
    #[serde(default)]
    bound: Option<[f64; 2]>,
}

#[derive(Deserialize)]
struct EngineBlock {
    kv_cache: String,
    /// How the engine captures a graph-launched decode step by default (absent: whole steps).
    #[serde(default)]
    graph_mode: Option<String>,
    /// How the engine's own model of a BERT-style encoder composes its operators (absent:
    /// "fused", the generic graph).
    #[serde(default)]
    encoder_graph: Option<String>,
    /// Where a graph-launched step's collectives get their task lists (absent: "per_call", on
    /// the host at every call; "pre_expanded": when the static graph is compiled).
    #[serde(default)]
    collectives: Option<String>,
    /// Which decode batches have a captured graph (absent or "fixed": up to the file's
    /// `graph_capture_max_batch`; "max_num_seqs": vLLM's size list up to a ceiling set by
    /// max_num_seqs, `HostCosts::capture_tokens`).
    #[serde(default)]
    graph_capture: Option<String>,
    fields: BTreeMap<String, Field>,
}

#[derive(Deserialize)]
struct HostFile {
    fields: BTreeMap<String, Field>,
    engines: BTreeMap<String, EngineBlock>,
}

/// The engine a scenario names when it names none (today's framework-neutral numbers).
pub use crate::spec::options::serving::DEFAULT_ENGINE;

/// How the step breakdown names the host work of an engine's offline encoder benchmark call
/// (`HostCosts::offline_call`); the diagnosis recognises the step by it.
pub const OFFLINE_CALL_WORDS: &str = "the offline benchmark's model call";

/// Host-side costs of one serving engine (see the constants file for each value's source).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostCosts {
    pub step_host_us: f64,
    pub step_host_us_per_seq: f64,
    pub graph_capture_max_batch: u64,
    /// The engine allocates each sequence's KV cache at the longest length it may reach and
    /// decode attention reads all of it (torchair's fixed KV cache read by incremental flash
    /// attention under a padding mask), instead of the tokens cached so far.
    pub decode_reads_allocated: bool,
    /// The engine keeps Hugging Face's own cache handling: every decode step concatenates each
    /// layer's cache with the new token (a copy of the whole cache) and expands grouped K/V
    /// heads to every query head (`repeat_kv`, ChatGLM's `expand(...).contiguous()`), a copy
    /// the attention then reads in full.
    pub decode_copies_cache: bool,
    /// Host time of one tensor-parallel collective issued eagerly through the framework's
    /// process group (torch.distributed -> ProcessGroupHCCL: communicator-stream event
    /// record/wait and HCCL's host-side task building), beyond the generic per-launch cost. A
    /// graph-mode step captures the collectives and pays nothing here.
    pub eager_host_us_per_collective: f64,
    /// Host syncs per MoE layer of the engine's all-to-all MoE dispatcher (vLLM-Ascend: 2, the
    /// split sizes read back in `_preprocess`; 0: none), each leaving the device idle until the
    /// host's next eager collective is launched (`scheduler::a2a_sync`).
    pub alltoall_dispatch_host_syncs: f64,
    /// Graph-launched decode steps are captured piecewise (vLLM's PIECEWISE cudagraph mode):
    /// the attention of every layer runs eagerly between captured pieces, and the host work of
    /// each layer (`piecewise_host_us_per_layer`) races the device.
    pub piecewise: bool,
    /// Host time per decoder layer of a piecewise-captured step (0: the engine has no
    /// piecewise mode).
    pub piecewise_host_us_per_layer: f64,
    /// Front-end time per request before the engine core can schedule it (vLLM's API-server
    /// process: chat template, tokenisation, input processing, hand-off to the engine core),
    /// one request at a time, in arrival order (0: the engine has no such serial front end).
    pub frontend_us_per_request: f64,
    /// Host time of one Triton kernel launch from Python, for an engine that runs a hybrid
    /// model's linear-attention mixer as Triton kernels (`hybrid`; 0: it does not).
    pub triton_launch_host_us: f64,
    /// Host time of one linear-attention layer's Python forward in a step with prompt tokens,
    /// beyond its kernel launches (`hybrid`; 0: the engine's mixer has no such path). It runs
    /// after the chunk wrapper's host sync, so it adds to the step.
    pub linear_prefill_python_us: f64,
    /// The same for one Mamba-2 layer (`hybrid`; 0: the engine's mixer has no such path).
    pub mamba2_prefill_python_us: f64,
    /// Triton launches per Gated DeltaNet layer for the decoding sequences' slice of a step
    /// that also holds prompts (`hybrid`; 0: the release runs them through the prompts' chunk
    /// path, as vLLM-Ascend did before its `ops/gdn.py`).
    pub gdn_mixed_decode_launches: f64,
    /// The engine runs a BERT-style encoder as separate kernels (MindIE's ATB BERT model: Q, K
    /// and V as three biased matmuls; GELU, each residual Add and LayerNorm its own kernel)
    /// instead of one QKV matmul with the activation and residual add in the epilogues.
    pub encoder_separate_ops: bool,
    /// Steps the engine schedules ahead of the one the device is running (vLLM's async
    /// scheduling, SGLang's overlap event loop: 1; a serial engine: 0). A request reaching a
    /// busy engine misses the step already scheduled and joins the one after (`sim`).
    pub schedule_ahead_steps: u64,
    /// The engine keeps scheduling ahead while a draft model speculates (EAGLE, EAGLE-3, MTP):
    /// vLLM does (async scheduling with those drafts is its default), SGLang switches its
    /// overlap loop off for them.
    pub schedule_ahead_with_speculative: bool,
    /// A graph-launched step is a static-shape graph whose collectives HCCL expanded when it
    /// was compiled (torchair's GE graphs): on a full mesh they pay the Mesh algorithm's O(1)
    /// latency steps (`GraphOptions::collectives_pre_expanded`). Eager steps never do.
    pub collectives_pre_expanded: bool,
    /// The largest captured decode graph follows max_num_seqs (vLLM-Ascend from 0.18: the
    /// capture ceiling is min(max_num_seqs x (1 + speculative tokens), `graph_capture_ceiling`),
    /// and only the sizes on vLLM's list up to it are captured), instead of the fixed
    /// `graph_capture_max_batch`. A decode batch above the largest captured size runs eagerly.
    pub capture_from_max_num_seqs: bool,
    /// The capture ceiling's upper bound in tokens (vLLM-Ascend: 512).
    pub graph_capture_ceiling: u64,
    /// Host work in series of one call of the engine's offline encoder benchmark (MindIE-LLM's
    /// embedding test.py: the model called directly from a Python loop), which replaces the
    /// text generator's per-step costs for a static encoder batch (`deployment::offline`; 0:
    /// the engine has no such benchmark and its step costs apply).
    pub offline_call_host_us: f64,
    /// The step is priced as that offline call (set by `deployment::offline::host`, never by
    /// the file): the breakdown names the step's host work as the benchmark's call.
    pub offline_call: bool,
    /// While it schedules ahead, the engine hands a step's tokens to the client only when the
    /// launch of the next step has returned (SGLang's overlap loop processes batch n's result
    /// after launching batch n+1), so a prompt's first token reaches the client at the end of
    /// the step after its prefill (`sim`, `frontend`'s notes; serving-host.json
    /// `results_after_next_launch`).
    pub results_after_next_launch: bool,
    /// The release casts BF16/FP16 linear weights to FRACTAL_NZ (releases.json
    /// `float_weight_nz`; never set by serving-host.json, whose blocks describe baselines that
    /// leave float weights ND), so float linear layers take `float_nz_linear_factor` times
    /// their time (`weight_format`).
    pub float_weight_nz: bool,
    /// Device time of a float linear layer with NZ weights over ND (0: the engine has none).
    pub float_nz_linear_factor: f64,
    /// Share of the shorter of host and device work that runs in series with the longer, not
    /// overlapped, in an eager step whose MoE layers exchange tokens across expert-parallel
    /// ranks by MC2 or all-to-all (`scheduler::a2a_sync::ep_serial`; 0: the plain race).
    pub eager_ep_serial_share: f64,
}

/// The largest size on vLLM's capture list not above `ceiling` tokens (vllm/config/vllm.py
/// `_set_cudagraph_sizes`: 1, 2, 4, then every multiple of 8 below 256, then of 16 from 256).
pub fn largest_capture_size(ceiling: u64) -> u64 {
    match ceiling {
        0 => 0,
        1 => 1,
        2 | 3 => 2,
        4..=7 => 4,
        8..=255 => ceiling / 8 * 8,
        _ => 256 + (ceiling - 256) / 16 * 16,
    }
}

impl HostCosts {
    /// The most decode tokens a captured graph holds under an engine limit of `max_num_seqs`
    /// sequences of `query_len` tokens each (1 + draft tokens) and a step budget of `budget`
    /// tokens; None when the engine's capture does not follow max_num_seqs (the fixed
    /// `graph_capture_max_batch`, in sequences, applies).
    pub fn capture_tokens(&self, max_num_seqs: u64, query_len: u64, budget: u64) -> Option<u64> {
        if !self.capture_from_max_num_seqs {
            return None;
        }
        let ceiling = max_num_seqs.saturating_mul(query_len.max(1)).min(self.graph_capture_ceiling).min(budget.max(1));
        Some(largest_capture_size(ceiling))
    }

    /// The bundled constants of `engine` (parsed once per engine). A malformed bundled file is
    /// a build-time mistake the tests catch; an unknown engine is the caller's error, named.
    pub fn bundled(engine: &str) -> Result<HostCosts, String> {
        static ALL: OnceLock<Result<BTreeMap<String, HostCosts>, String>> = OnceLock::new();
        if let Some(over) = OVERRIDE.with(|o| o.borrow().clone()) {
            return over.get(engine).copied().ok_or_else(|| format!("deployment.serving.engine: unknown engine '{}'", crate::spec::scenario::clip(engine)));
        }
        let all = ALL.get_or_init(|| parse_all(HOST_JSON));
        let all = all.as_ref().map_err(|e| e.clone())?;
        all.get(engine).copied().ok_or_else(|| format!("deployment.serving.engine: unknown engine '{}' (known: {})", crate::spec::scenario::clip(engine), all.keys().cloned().collect::<Vec<_>>().join(", ")))
    }

    /// Parses one engine's block of a constants file, checking every value against its bound.
    pub fn parse(text: &str, engine: &str) -> Result<HostCosts, String> {
        let f: HostFile = serde_json::from_str(text).map_err(|e| format!("serving-host.json: {e}"))?;
        let e = f.engines.get(engine).ok_or_else(|| format!("serving-host.json: no engine '{engine}'"))?;
        let get = |fields: &BTreeMap<String, Field>, n: &str| -> Result<f64, String> {
            let x = fields.get(n).ok_or_else(|| format!("serving-host.json: {engine}: missing field '{n}'"))?;
            if let Some([lo, hi]) = x.bound {
                if !(x.value >= lo && x.value <= hi) {
                    return Err(format!("serving-host.json: {engine}: {n} = {} is outside its bound [{lo}, {hi}]", x.value));
                }
            }
            Ok(x.value)
        };
        // A field an older constants text (or another engine) lacks: 0, the cost is absent.
        let opt = |n: &str| if e.fields.contains_key(n) { get(&e.fields, n) } else { Ok(0.0) };
        let (decode_reads_allocated, decode_copies_cache) = match e.kv_cache.as_str() {
            "allocated" => (false, false),
            "max_length" => (true, false),
            "concat_expand" => (false, true),
            o => return Err(format!("serving-host.json: {engine}: kv_cache '{o}' (expected allocated, max_length or concat_expand)")),
        };
        Ok(HostCosts {
            step_host_us: get(&e.fields, "step_host_us")?,
            step_host_us_per_seq: get(&e.fields, "step_host_us_per_seq")?,
            graph_capture_max_batch: get(&f.fields, "graph_capture_max_batch")? as u64,
            decode_reads_allocated,
            decode_copies_cache,
            eager_host_us_per_collective: opt("eager_host_us_per_collective")?,
            alltoall_dispatch_host_syncs: opt("alltoall_dispatch_host_syncs")?,
            piecewise: match e.graph_mode.as_deref() {
                None | Some("full_decode_only") => false,
                Some("piecewise") => true,
                Some(o) => return Err(format!("serving-host.json: {engine}: graph_mode '{o}' (expected piecewise or full_decode_only)")),
            },
            piecewise_host_us_per_layer: opt("piecewise_host_us_per_layer")?,
            frontend_us_per_request: opt("frontend_us_per_request")?,
            triton_launch_host_us: opt("triton_launch_host_us")?,
            linear_prefill_python_us: opt("linear_prefill_python_us")?,
            mamba2_prefill_python_us: opt("mamba2_prefill_python_us")?,
            gdn_mixed_decode_launches: opt("gdn_mixed_decode_launches")?,
            schedule_ahead_steps: opt("schedule_ahead_steps")? as u64,
            schedule_ahead_with_speculative: opt("schedule_ahead_with_speculative")? > 0.0,
            results_after_next_launch: opt("results_after_next_launch")? > 0.0,
            capture_from_max_num_seqs: match e.graph_capture.as_deref() {
                None | Some("fixed") => false,
                Some("max_num_seqs") => true,
                Some(o) => return Err(format!("serving-host.json: {engine}: graph_capture '{o}' (expected fixed or max_num_seqs)")),
            },
            graph_capture_ceiling: if e.fields.contains_key("graph_capture_ceiling") { get(&e.fields, "graph_capture_ceiling")? as u64 } else { get(&f.fields, "graph_capture_max_batch")? as u64 },
            collectives_pre_expanded: match e.collectives.as_deref() {
                None | Some("per_call") => false,
                Some("pre_expanded") => true,
                Some(o) => return Err(format!("serving-host.json: {engine}: collectives '{o}' (expected per_call or pre_expanded)")),
            },
            offline_call_host_us: opt("offline_call_host_us")?,
            eager_ep_serial_share: opt("eager_ep_serial_share")?,
            offline_call: false,
            encoder_separate_ops: match e.encoder_graph.as_deref() {
                None | Some("fused") => false,
                Some("separate") => true,
                Some(o) => return Err(format!("serving-host.json: {engine}: encoder_graph '{o}' (expected fused or separate)")),
            },
            float_weight_nz: false,
            float_nz_linear_factor: opt("float_nz_linear_factor")?,
        })
    }
}

pub use crate::spec::options::serving::{engine_names, engines};

/// Every engine's costs in a constants text.
fn parse_all(text: &str) -> Result<BTreeMap<String, HostCosts>, String> {
    engine_names(text).and_then(|names| names.iter().map(|n| Ok((n.clone(), HostCosts::parse(text, n)?))).collect())
}

thread_local! {
    static OVERRIDE: std::cell::RefCell<Option<std::rc::Rc<BTreeMap<String, HostCosts>>>> = const { std::cell::RefCell::new(None) };
}

/// A fitted engine constant of the constants file (source "fit"): the leave-one-source-out
/// refit of the framework layer moves it (`evidence::fidelity::loso`).
#[derive(Clone, Debug, PartialEq)]
pub struct FittedHostField {
    pub engine: String,
    pub name: String,
    pub value: f64,
    pub min: f64,
    pub max: f64,
    pub note: String,
}

/// The engines' fields whose value was fitted to the calibration sets (source "fit").
pub fn fitted_fields() -> Vec<FittedHostField> {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(HOST_JSON) else { return Vec::new() };
    let mut out = Vec::new();
    for (engine, block) in v.get("engines").and_then(|e| e.as_object()).into_iter().flatten() {
        for (name, f) in block.get("fields").and_then(|f| f.as_object()).into_iter().flatten() {
            let bound = f.get("bound").and_then(|b| b.as_array()).map(|b| b.iter().filter_map(|x| x.as_f64()).collect::<Vec<_>>()).unwrap_or_default();
            if let (Some("fit"), Some(value), [lo, hi]) = (f.get("source").and_then(|x| x.as_str()), f.get("value").and_then(|x| x.as_f64()), bound.as_slice()) {
                let note = f.get("note").and_then(|x| x.as_str()).unwrap_or("").to_string();
                out.push(FittedHostField { engine: engine.clone(), name: name.clone(), value, min: *lo, max: *hi, note });
            }
        }
    }
    out
}

/// Runs `f` with the engines' costs of the bundled file where each `(engine, field, value)` of
/// `values` replaces the file's value (restored afterwards, also on a panic unwinding through
/// it). A value outside its bound is clamped into it.
pub fn with_fitted_fields<R>(values: &[(String, String, f64)], f: impl FnOnce() -> R) -> R {
    struct Restore(Option<std::rc::Rc<BTreeMap<String, HostCosts>>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let prev = self.0.take();
            OVERRIDE.with(|o| *o.borrow_mut() = prev);
        }
    }
    let mut v: serde_json::Value = serde_json::from_str(HOST_JSON).unwrap_or_default();
    for (engine, name, x) in values {
        if let Some(field) = v.get_mut("engines").and_then(|e| e.get_mut(engine)).and_then(|b| b.get_mut("fields")).and_then(|f| f.get_mut(name)) {
            let (lo, hi) = field.get("bound").and_then(|b| b.as_array()).and_then(|b| Some((b.first()?.as_f64()?, b.get(1)?.as_f64()?))).unwrap_or((f64::MIN, f64::MAX));
            field["value"] = serde_json::json!(x.clamp(lo, hi));
        }
    }
    let all = parse_all(&v.to_string()).unwrap_or_default();
    let prev = OVERRIDE.with(|o| o.borrow_mut().replace(std::rc::Rc::new(all)));
    let _restore = Restore(prev);
    f()
}

impl crate::spec::options::serving::ServingSpec {
    /// The host costs of the named engine (an unknown name is an error naming the field).
    /// `graph_mode` overrides the engine's default capture; piecewise capture needs an engine
    /// that has it (vLLM's).
    pub fn host(&self) -> Result<HostCosts, String> {
        let mut h = HostCosts::bundled(&self.engine)?;
        // A named release's defaults and host costs over the engine's block (which describes the
        // baseline release: no engine_version prices exactly as serving-host.json says).
        let named = if self.engine_version.is_empty() { None } else { crate::spec::options::releases::release(&self.engine, &self.engine_version)? };
        if let Some((_, r)) = named {
            if let Some(a) = r.defaults.async_scheduling {
                h.schedule_ahead_steps = a as u64;
            }
            match r.defaults.graph_capture.as_deref() {
                Some("max_num_seqs") => h.capture_from_max_num_seqs = true,
                Some("fixed") => h.capture_from_max_num_seqs = false,
                Some(o) => return Err(format!("assets/engines/releases.json: {} {}: graph_capture '{o}' (expected fixed or max_num_seqs)", self.engine, self.engine_version)),
                None => {}
            }
            if let Some(nz) = r.defaults.float_weight_nz {
                h.float_weight_nz = nz;
            }
            match r.defaults.graph_mode.as_deref() {
                Some("piecewise") if h.piecewise_host_us_per_layer > 0.0 => h.piecewise = true,
                Some("full_decode_only") => h.piecewise = false,
                _ => {}
            }
            for (name, f) in &r.host {
                let v = f.get("value").and_then(|x| x.as_f64()).ok_or_else(|| format!("assets/engines/releases.json: {} {}: host.{name} has no numeric value", self.engine, self.engine_version))?;
                match name.as_str() {
                    "step_host_us" => h.step_host_us = v,
                    "step_host_us_per_seq" => h.step_host_us_per_seq = v,
                    "eager_host_us_per_collective" => h.eager_host_us_per_collective = v,
                    "piecewise_host_us_per_layer" => h.piecewise_host_us_per_layer = v,
                    "frontend_us_per_request" => h.frontend_us_per_request = v,
                    "float_nz_linear_factor" => h.float_nz_linear_factor = v,
                    "gdn_mixed_decode_launches" => h.gdn_mixed_decode_launches = v,
                    other => return Err(format!("assets/engines/releases.json: {}: host field '{other}' is not one a release can change", self.engine)),
                }
            }
        }
        // The scenario's own host costs (a fit of the user's runs), over the release's.
        super::host_costs::apply(&self.engine, &mut h, &self.host_costs)?;
        match self.graph_mode.as_str() {
            "piecewise" if h.piecewise_host_us_per_layer <= 0.0 => {
                return Err(format!("deployment.serving.graph_mode: piecewise capture is vLLM's cudagraph mode; engine '{}' captures whole decode steps (use auto or full_decode_only)", self.engine));
            }
            "piecewise" => h.piecewise = true,
            "full_decode_only" => h.piecewise = false,
            _ => {}
        }
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_host_costs_parse_within_bounds() {
        for e in engines() {
            let h = HostCosts::bundled(&e).unwrap();
            assert!(h.step_host_us > 0.0 && h.step_host_us_per_seq >= 0.0, "{e}");
        }
        // The default keeps the numbers scenarios had before the engine was a setting.
        let g = HostCosts::bundled(DEFAULT_ENGINE).unwrap();
        assert_eq!((g.step_host_us, g.step_host_us_per_seq, g.decode_reads_allocated), (1000.0, 60.0, false));
        assert!(HostCosts::bundled("torchair").unwrap().decode_reads_allocated);
        let bad = HOST_JSON.replace("\"value\":1000.0", "\"value\":1e9");
        assert_ne!(bad, HOST_JSON, "the edit must hit the embedded (minified) text");
        assert!(HostCosts::parse(&bad, DEFAULT_ENGINE).unwrap_err().contains("step_host_us"));
        let e = HostCosts::bundled("tgi").unwrap_err();
        assert!(e.contains("deployment.serving.engine") && e.contains("vllm-ascend"), "{e}");
    }

    #[test]
    fn the_largest_captured_decode_batch_follows_max_num_seqs_on_vllms_size_list() {
        // vLLM's list: 1, 2, 4, 8, 16, ..., 248, 256, 272, ...
        let sizes: Vec<u64> = [0u64, 1, 3, 7, 8, 12, 15, 16, 100, 255, 256, 271, 272, 512].iter().map(|&c| largest_capture_size(c)).collect();
        assert_eq!(sizes, vec![0, 1, 2, 4, 8, 8, 8, 16, 96, 248, 256, 256, 272, 512]);
        let h = HostCosts::bundled("vllm-ascend").unwrap();
        // Kimi-K2-Thinking's launch (max-num-seqs 12): graphs up to 8 sequences, eager above.
        assert_eq!(h.capture_tokens(12, 1, 8192), Some(8));
        // With 3 draft tokens the ceiling counts 4 tokens per sequence; the budget and 512 cap it.
        assert_eq!(h.capture_tokens(12, 4, 8192), Some(48));
        assert_eq!(h.capture_tokens(1024, 1, 8192), Some(512));
        assert_eq!(h.capture_tokens(256, 1, 100), Some(96));
        // An engine without the rule keeps its fixed ceiling (in sequences).
        assert_eq!(HostCosts::bundled(DEFAULT_ENGINE).unwrap().capture_tokens(12, 1, 8192), None);
        // Releases before 0.18 injected no ceiling (releases.json: graph_capture fixed).
        let spec = |v: &str| crate::spec::options::serving::ServingSpec { engine: "vllm-ascend".into(), engine_version: v.into(), ..Default::default() };
        assert!(spec("0.20").host().unwrap().capture_from_max_num_seqs);
        assert!(!spec("0.13").host().unwrap().capture_from_max_num_seqs);
    }
}
