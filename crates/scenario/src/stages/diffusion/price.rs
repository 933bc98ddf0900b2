//! Pricing one configuration of a diffusion pipeline: the text encoders, `steps` denoiser calls
//! (x2 for classifier-free guidance, as batch 2 or split over two chips; step caching skips part
//! of some steps), the scheduler's kernels, and the VAE decoder, each component's operators
//! through the device model and the framework's launch mode (`cost::dispatch::graph_time`).
//!
//! Why components are memoised by their knobs: a 300-point search touches few distinct
//! (component, batch, precision, attention, ToMe, parallel) combinations, so each is built and
//! costed once and every later point is a handful of additions.

use super::constants::{Constants, Framework};
use crate::graphcost::{Memo, TileMode};
use crate::serving::OpCost;
use std::collections::HashMap;
use tunelab_sim::cost::dispatch::{graph_time, LaunchMode};
use tunelab_sim::device::Device;
use tunelab_sim::workload::diffusers::{dit, unet, Component, Denoiser, EmitOptions, Latent, Pipeline, SeqParallel, Tome};
use tunelab_sim::workload::GraphOp;
use tunelab_sim::{AttentionKind, CommKind, DType, Link, Op, VectorKind};

/// How the VAE decodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VaeMode {
    Full,
    Tiled,
    Sliced,
    /// Tiles spread over the pipeline's chips (MindIE-SD "VAE parallel").
    Parallel,
}

/// One point of the diffusion space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Knobs {
    pub steps: u64,
    /// fp16, bf16 or W8A8 (the denoiser; text encoders stay 16-bit).
    pub int8: bool,
    pub dtype: DType,
    pub attention: AttentionKind,
    pub tome: f64,
    pub launch: LaunchMode,
    pub te_cache: bool,
    pub step_cache: f64,
    pub cfg_parallel: bool,
    pub sp: u64,
    pub ring: bool,
    pub vae: VaeMode,
    pub vae_fp32: bool,
    pub vae_launch: LaunchMode,
}

/// The request, resolved against the pipeline.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub batch: u64,
    pub cfg: bool,
    pub chips: u64,
    pub latent: Latent,
    /// Weights sharded over `chips` (`diffusion.fsdp`).
    pub fsdp: bool,
    /// Rank of an unmerged LoRA adapter on the denoiser (`diffusion.lora_rank`; 0: none).
    pub lora_rank: u64,
}

/// A priced configuration: the pipeline's timeline and its totals.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Priced {
    /// (encoder name, ms) per text encoder (0 when served from the cache).
    pub text_encoders: Vec<(String, f64)>,
    /// Denoiser time of a full step and of a cached step (CFG included), ms.
    pub step_full_ms: f64,
    pub step_cached_ms: f64,
    /// Steps computed in full and from the cache.
    pub full_steps: f64,
    pub cached_steps: f64,
    /// Of all steps, those the high-noise expert runs (all of them with one expert).
    pub high_noise_steps: f64,
    /// Experts held in memory (2 for Wan2.2-A14B).
    pub experts: u64,
    /// Under `diffusion.fsdp`: the all-gather of the denoiser's weights each step, ms (it
    /// overlaps the step's compute; the step takes the longer of the two).
    pub weight_gather_ms: f64,
    /// Under `diffusion.fsdp`: the bytes that gather moves (the denoiser's whole weights, as
    /// FSDP FULL_SHARD unshards each block before its forward) and their data type (the weights'
    /// own: FSDP without MixedPrecision gathers what was loaded; int8 under W8A8).
    pub weight_gather_bytes: f64,
    pub weight_gather_dtype: String,
    /// Under `diffusion.fsdp`: the denoiser's own compute per full step, ms (what the gather
    /// overlaps; the step is the longer of the two).
    pub step_compute_ms: f64,
    /// The link the gather crosses ("HCCS" or "PCIe").
    pub weight_gather_link: String,
    /// An unmerged LoRA adapter (`diffusion.lora_rank`): its rank, the adapted linear layers per
    /// denoiser call, and the adapters' own kernels' time in a full step, ms (inside step_full_ms).
    pub lora_rank: u64,
    pub lora_adapters: u64,
    pub lora_step_ms: f64,
    /// VAE encoding of the reference images (edit / Kontext requests), ms.
    pub reference_encode_ms: f64,
    /// Scheduler kernels, CFG combine and its exchange, host loop, per step, ms.
    pub step_overhead_ms: f64,
    pub vae_ms: f64,
    pub host_ms: f64,
    pub total_ms: f64,
    pub images_per_s: f64,
    pub memory_gib: f64,
    /// Largest expected relative error of any operator (the delta check's estimate).
    pub rel_error: f64,
    /// Chips one pipeline instance uses, and instances on the scenario's chips.
    pub chips_per_instance: u64,
    pub replicas: u64,
}

impl Priced {
    /// Text-encoder time, ms.
    pub fn text_encoder_ms(&self) -> f64 {
        self.text_encoders.iter().map(|t| t.1).sum()
    }
    /// Denoising time of all steps (overheads included), ms.
    pub fn denoise_ms(&self) -> f64 {
        self.full_steps * self.step_full_ms + self.cached_steps * self.step_cached_ms + (self.full_steps + self.cached_steps) * self.step_overhead_ms
    }
    /// Mean time per step, ms.
    pub fn step_ms(&self) -> f64 {
        self.denoise_ms() / (self.full_steps + self.cached_steps).max(1.0)
    }
}

/// A costed component: wall time of the full graph and of its cached subset, weights, memory.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Costed {
    full_us: f64,
    cached_us: f64,
    weight_bytes: f64,
    peak_bytes: f64,
    rel_error: f64,
    /// The unmerged LoRA adapters' kernels alone, us, and how many adapted layers (denoiser).
    lora_us: f64,
    lora_adapters: u64,
}

/// Memo key of a component build.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    Encoder(usize, u64, bool, LaunchMode, u64),
    Denoiser { expert: usize, b: u64, int8: bool, bf16: bool, fp32: bool, flash: bool, tome_pm: u64, sp: u64, ring: bool, launch: LaunchMode },
    RefEncoder { b: u64, fp32: bool, bf16: bool, launch: LaunchMode },
    Vae { b: u64, fp32: bool, bf16: bool, flash: bool, tile: bool, launch: LaunchMode },
}

/// Everything a pricing needs, with the memo of components and operators.
pub struct Pricer {
    pub pipe: Pipeline,
    pub device: Device,
    pub fw: Framework,
    pub c: Constants,
    pub req: Request,
    memo: Memo,
    comps: HashMap<Key, Result<Costed, String>>,
}

impl Pricer {
    pub fn new(pipe: Pipeline, device: Device, fw: Framework, c: Constants, req: Request) -> Pricer {
        Pricer { pipe, device, fw, c, req, memo: Memo::default(), comps: HashMap::new() }
    }

    fn emit(&self, dtype: DType, int8: bool, attention: AttentionKind) -> EmitOptions {
        EmitOptions { dtype, int8, attention: self.attention_at(attention, dtype) }
    }

    /// The attention a component computing in `dtype` really runs: the fused kernel takes only
    /// the data types in `kernel_library.flash_attention.dtypes`, so at fp32 (a pipeline loaded
    /// in fp32, a VAE upcast) diffusers falls back to SDPA's math path, unfused.
    fn attention_at(&self, asked: AttentionKind, dtype: DType) -> AttentionKind {
        if asked == AttentionKind::Flash && !self.c.flash_dtypes.is_empty() && !self.c.flash_dtypes.iter().any(|d| d == dtype.name()) {
            AttentionKind::Unfused
        } else {
            asked
        }
    }

    /// The launch mode of the framework's own code (`code_launch`): the text encoders and the
    /// Python denoising loop (scheduler step, CFG combine) stay as the framework runs them when
    /// only the denoiser is compiled (the `launch` knob).
    fn framework_launch(&self) -> LaunchMode {
        if self.fw.code_launch == "graph" { LaunchMode::Graph } else { LaunchMode::Eager }
    }

    /// The text encoders' attention: the transformers modeling code's own (`workload.text_encoder_attention`).
    fn encoder_attention(&self) -> AttentionKind {
        if self.c.text_encoder_attention == "flash" { AttentionKind::Flash } else { AttentionKind::Unfused }
    }

    /// Costs a component's operators; `cached` picks the subset a cached step still runs.
    fn cost(&mut self, comp: &Component, launch: LaunchMode, cached: &dyn Fn(&str) -> bool, dtype_bytes: f64) -> Result<Costed, String> {
        let mut full = Vec::with_capacity(comp.ops.len());
        let mut peak: f64 = 0.0;
        let mut rel: f64 = 0.0;
        for o in &comp.ops {
            let e = self.memo.op(&o.op, &self.device, TileMode::Default).map_err(|r| format!("operator {} cannot run: {r}", o.name))?;
            peak = peak.max(crate::graphcost::op_bytes(&o.op));
            rel = rel.max(e.relative_error);
            full.push((o, e.time_us));
        }
        let t_full = graph_time(&self.device, launch, full.iter().map(|(o, t)| (&o.op, *t, o.repeat as f64))).total_us;
        let t_cached = graph_time(&self.device, launch, full.iter().filter(|(o, _)| cached(&o.name)).map(|(o, t)| (&o.op, *t, o.repeat as f64))).total_us;
        Ok(Costed { full_us: t_full, cached_us: t_cached, weight_bytes: comp.weights as f64 * dtype_bytes, peak_bytes: peak + comp.held_bytes as f64, rel_error: rel, lora_us: 0.0, lora_adapters: 0 })
    }

    fn component(&mut self, key: Key, k: &Knobs) -> Result<Costed, String> {
        if let Some(r) = self.comps.get(&key) {
            return r.clone();
        }
        let r = self.build(&key, k);
        self.comps.insert(key, r.clone());
        r
    }

    fn build(&mut self, key: &Key, k: &Knobs) -> Result<Costed, String> {
        let float = k.dtype;
        match *key {
            Key::Encoder(i, b, _, launch, _) => {
                let comp = self.pipe.text_encoder(i, b, self.emit(float, false, self.encoder_attention()));
                self.cost(&comp, launch, &|_| true, float.bytes() as f64)
            }
            Key::RefEncoder { b, fp32, launch, .. } => {
                let dt = if fp32 { DType::Fp32 } else { float };
                let comp = self.pipe.reference_encoder(b, &self.req.latent, self.emit(dt, false, k.attention))?;
                self.cost(&comp, launch, &|_| true, dt.bytes() as f64)
            }
            Key::Denoiser { expert, b, int8, launch, .. } => {
                let wbytes = if int8 { 1.0 } else { float.bytes() as f64 };
                let tome = Tome { ratio: k.tome };
                let sp = SeqParallel { degree: k.sp, ring: k.ring };
                let mut comp = self.pipe.expert(expert, b, &self.req.latent, self.emit(float, int8, k.attention), tome, sp)?;
                if int8 {
                    self.protect(&mut comp.ops, float);
                }
                let (lora, lora_adapters) = self.add_lora(&mut comp, float);
                let lora_us = if lora.is_empty() {
                    0.0
                } else {
                    let mut priced = Vec::with_capacity(lora.len());
                    for o in &lora {
                        let e = self.memo.op(&o.op, &self.device, TileMode::Default).map_err(|r| format!("operator {} cannot run: {r}", o.name))?;
                        priced.push((&o.op, e.time_us, o.repeat as f64));
                    }
                    graph_time(&self.device, launch, priced.into_iter()).total_us
                };
                let blocks = match &self.pipe.denoiser {
                    Denoiser::Unet(u) => u.channels.len(),
                    Denoiser::Dit(_) => 0,
                };
                let is_unet = blocks > 0;
                // What a cached step still runs: DeepCache's shallow branch of a UNet; a DiT's
                // everything but the self-attentions (AttentionCache).
                let cached = move |n: &str| if is_unet { unet::in_shallow_branch(n, blocks) } else { !dit::in_attention_cache(n) };
                let mut c = self.cost(&comp, launch, &cached, wbytes)?;
                c.lora_us = lora_us;
                c.lora_adapters = lora_adapters;
                Ok(c)
            }
            Key::Vae { b, fp32, tile, launch, .. } => {
                let dt = if fp32 { DType::Fp32 } else { float };
                let _ = b;
                let t = tile.then_some(self.c.vae_tile_latent);
                let (comp, tiles) = self.pipe.vae_decoder(b, &self.req.latent, self.emit(dt, false, k.attention), t);
                let mut c = self.cost(&comp, launch, &|_| true, dt.bytes() as f64)?;
                c.full_us *= tiles as f64;
                c.cached_us = tiles as f64;
                Ok(c)
            }
        }
    }

    /// Keeps the protected layers (first/last layers, timestep embedding) in 16-bit under W8A8.
    fn protect(&self, ops: &mut Vec<GraphOp>, float: DType) {
        let prot = &self.c.protected;
        ops.retain(|o| !(o.name.ends_with(".quant") && prot.iter().any(|p| o.name.starts_with(p.as_str()))));
        for o in ops.iter_mut() {
            if !prot.iter().any(|p| o.name.starts_with(p.as_str())) {
                continue;
            }
            match &mut o.op {
                Op::Matmul { dtype, .. } | Op::Conv2d { dtype, .. } => *dtype = float,
                _ => {}
            }
        }
    }

    /// Appends the unmerged LoRA adapter's kernels (`diffusion.lora_rank`) to a denoiser call,
    /// in the activation type (PEFT keeps the adapters in 16-bit under W8A8 too); returns them and
    /// the number of adapted layers per call.
    fn add_lora(&self, comp: &mut tunelab_sim::workload::diffusers::Component, float: DType) -> (Vec<GraphOp>, u64) {
        use tunelab_sim::workload::diffusers::lora;
        if self.req.lora_rank == 0 {
            return (Vec::new(), 0);
        }
        let adapted: u64 = comp.ops.iter().map(|o| lora::adapters(o).saturating_mul(o.repeat)).sum();
        let (ops, params) = lora::unmerged(&comp.ops, self.req.lora_rank, float);
        comp.weights = comp.weights.saturating_add(params);
        comp.ops.extend(ops.iter().cloned());
        (ops, adapted)
    }

    /// The pipeline's batch through the denoiser per chip, and the chips one instance needs.
    fn layout(&self, k: &Knobs) -> Result<(u64, u64), String> {
        let cfg_mult = if self.req.cfg { 2 } else { 1 };
        if k.cfg_parallel && !self.req.cfg {
            return Err("CFG parallelism needs classifier-free guidance (diffusion.cfg is off)".into());
        }
        let b = if k.cfg_parallel { self.req.batch } else { self.req.batch * cfg_mult };
        let chips = if k.cfg_parallel { 2 } else { 1 } * k.sp.max(1);
        if chips > self.req.chips {
            return Err(format!("CFG parallel x sequence parallel needs {chips} chips, the scenario has {} (diffusion.chips)", self.req.chips));
        }
        Ok((b, chips))
    }

    /// Prices one point.
    pub fn price(&mut self, k: &Knobs) -> Result<Priced, String> {
        let (b, chips) = self.layout(k)?;
        let bf16 = k.dtype == DType::Bf16;
        let flash = k.attention == AttentionKind::Flash;
        let mut p = Priced { chips_per_instance: chips, replicas: (self.req.chips / chips).max(1), ..Default::default() };
        // diffusers' encode_prompt runs the encoders once for the prompts and once more for the
        // negative prompts under CFG, in the framework's own launch mode: compiling the denoiser
        // (the `launch` knob) leaves them as they were.
        let calls = if self.req.cfg { 2.0 } else { 1.0 };
        let te_launch = self.framework_launch();
        let mut weights = 0.0;
        let mut peak: f64 = 0.0;
        let mut rel: f64 = 0.0;
        for i in 0..self.pipe.text_encoders.len() {
            let mut c = self.component(Key::Encoder(i, self.req.batch, false, te_launch, k.dtype.bytes() * 10 + bf16 as u64), k)?;
            if self.req.fsdp {
                c.full_us = c.full_us.max(self.gather_us(c.weight_bytes)?);
                c.weight_bytes /= self.req.chips as f64;
            }
            weights += c.weight_bytes;
            peak = peak.max(c.peak_bytes);
            rel = rel.max(c.rel_error);
            // Tokenising is host work of each encode call (once per call, with the first encoder).
            let host = if i == 0 { self.fw.encode_prompt_host_ms } else { 0.0 };
            let ms = if k.te_cache { 0.0 } else { calls * (c.full_us / 1e3 + host) };
            p.text_encoders.push((self.pipe.text_encoders[i].name.clone(), ms));
        }
        if k.tome > 0.0 && !matches!(self.pipe.denoiser, Denoiser::Unet(_)) {
            return Err(format!("tome: {} asks for token merging, which is built for UNet pipelines (tomesd); this pipeline's denoiser is a DiT", k.tome));
        }
        // Every expert is held in memory for the whole call (diffusers' WanPipeline keeps
        // transformer and transformer_2 loaded and switches at the boundary); each step runs one.
        let experts = self.pipe.experts();
        let high = self.pipe.high_noise_steps(k.steps) as f64;
        let mut costs = Vec::with_capacity(experts);
        for expert in 0..experts {
            let mut den = self.component(Key::Denoiser { expert, b, int8: k.int8, bf16, fp32: k.dtype == DType::Fp32, flash, tome_pm: (k.tome * 1000.0) as u64, sp: k.sp, ring: k.ring, launch: k.launch }, k)?;
            if self.req.fsdp {
                // FULL_SHARD: 1/chips of the weights held; every forward all-gathers them,
                // overlapped with the blocks' compute, so a step takes the longer of the two.
                let g = self.gather_us(den.weight_bytes)?;
                if g / 1e3 >= p.weight_gather_ms {
                    p.weight_gather_ms = g / 1e3;
                    p.weight_gather_bytes = den.weight_bytes;
                    p.weight_gather_dtype = if k.int8 { "int8".into() } else { k.dtype.name().into() };
                    p.step_compute_ms = den.full_us / 1e3;
                    p.weight_gather_link = if self.device.hccs_gbs > 0.0 { "HCCS".into() } else { "PCIe".into() };
                }
                den.full_us = den.full_us.max(g);
                den.cached_us = den.cached_us.max(g);
                den.weight_bytes /= self.req.chips as f64;
            }
            weights += den.weight_bytes;
            peak = peak.max(den.peak_bytes);
            rel = rel.max(den.rel_error);
            p.lora_adapters = p.lora_adapters.max(den.lora_adapters);
            p.lora_step_ms = p.lora_step_ms.max(den.lora_us / 1e3);
            costs.push(den);
        }
        let r = k.step_cache.max(1.0);
        p.full_steps = (k.steps as f64 / r).ceil().min(k.steps as f64);
        p.cached_steps = k.steps as f64 - p.full_steps;
        p.experts = experts as u64;
        p.lora_rank = self.req.lora_rank;
        p.high_noise_steps = high;
        // A step's times, weighted by the steps each expert runs (one expert: its own).
        let steps = (k.steps as f64).max(1.0);
        let share = |i: usize| if i == 0 { high / steps } else { 1.0 - high / steps };
        p.step_full_ms = costs.iter().enumerate().map(|(i, c)| share(i) * c.full_us).sum::<f64>() / 1e3;
        p.step_cached_ms = costs.iter().enumerate().map(|(i, c)| share(i) * c.cached_us).sum::<f64>() / 1e3;
        let refs = self.req.latent.ref_tokens / self.req.latent.tokens.max(1);
        if refs > 0 {
            // The edit pipelines VAE-encode each reference image once per call, at the VAE's precision.
            let enc = self.component(Key::RefEncoder { b: self.req.batch * refs, fp32: k.vae_fp32 || k.dtype == DType::Fp32, bf16, launch: k.vae_launch }, k)?;
            peak = peak.max(enc.peak_bytes);
            p.reference_encode_ms = enc.full_us / 1e3;
        }
        p.step_overhead_ms = self.step_overhead_us(k, b)? / 1e3 + self.fw.step_host_ms;
        let vae_b = if k.vae == VaeMode::Sliced { 1 } else { self.req.batch };
        let tiled = matches!(k.vae, VaeMode::Tiled | VaeMode::Parallel);
        let vae = self.component(Key::Vae { b: vae_b, fp32: k.vae_fp32 || k.dtype == DType::Fp32, bf16, flash, tile: tiled, launch: k.vae_launch }, k)?;
        weights += vae.weight_bytes;
        peak = peak.max(vae.peak_bytes);
        let mut vae_us = vae.full_us * if k.vae == VaeMode::Sliced { self.req.batch as f64 } else { 1.0 };
        if k.vae == VaeMode::Parallel {
            // Tiles spread over the instance's chips (vae.cached_us carries the tile count).
            let tiles = vae.cached_us.max(1.0);
            vae_us *= (tiles / chips as f64).ceil() / tiles;
        }
        p.vae_ms = vae_us / 1e3;
        p.host_ms = self.fw.pipeline_host_ms;
        p.total_ms = p.host_ms + p.text_encoder_ms() + p.reference_encode_ms + p.denoise_ms() + p.vae_ms;
        p.images_per_s = (self.req.batch * p.replicas) as f64 / (p.total_ms / 1e3).max(1e-9);
        p.memory_gib = (weights + peak) / (1u64 << 30) as f64 + self.c.memory_reserve_gib;
        p.rel_error = rel;
        let cap = crate::context::memory_gib(&self.device);
        if p.memory_gib > cap {
            let held = if p.experts > 1 { format!(", {} experts held", p.experts) } else { String::new() };
            return Err(format!("out of memory: {:.1} GiB per chip needed (weights {:.1} GiB{held}, largest activation {:.1} GiB), the chip has {:.1} GiB", p.memory_gib, weights / (1u64 << 30) as f64, peak / (1u64 << 30) as f64, cap));
        }
        Ok(p)
    }

    /// The all-gather of `bytes` of sharded weights over the scenario's chips (`diffusion.fsdp`),
    /// on the chips' links (HCCS within a node; PCIe where a card has none), us.
    fn gather_us(&mut self, bytes: f64) -> Result<f64, String> {
        let link = if self.device.hccs_gbs > 0.0 { Link::Hccs } else { Link::Pcie };
        let op = Op::Comm { kind: CommKind::AllGather, bytes: bytes as u64, ranks: self.req.chips, link, algorithm: Default::default() };
        let e = self.memo.op(&op, &self.device, TileMode::Default).map_err(|r| format!("diffusion.fsdp: the weights' all-gather cannot run: {r}"))?;
        Ok(e.time_us)
    }

    /// Per step: the scheduler's and the CFG combine's vector kernels on the latent, and with
    /// CFG parallelism the all-gather of the two noise predictions. They are the Python loop's
    /// own tensor operations around the denoiser call, so they launch in the framework's mode
    /// (eager for diffusers even when the UNet is compiled: torch.compile / torchair wrap the
    /// UNet module, not `scheduler.step`).
    fn step_overhead_us(&mut self, k: &Knobs, b: u64) -> Result<f64, String> {
        let l = &self.req.latent;
        let elems = self.req.batch * l.frames * l.h * l.w * self.pipe.vae.latent_channels();
        let dtype = k.dtype;
        let v = Op::Vector { kind: VectorKind::Elementwise, rows: elems.div_ceil(1024).max(1), row_len: 1024.min(elems.max(1)), dtype };
        let mut ops: Vec<(Op, f64)> = vec![(v.clone(), self.c.scheduler_ops)];
        if self.req.cfg {
            ops.push((v, self.c.cfg_combine_ops));
        }
        if k.cfg_parallel {
            // Chips without HCCS (a 300I Duo card's two 310P3) exchange over PCIe.
            let link = if self.device.hccs_gbs > 0.0 { Link::Hccs } else { Link::Pcie };
            ops.push((Op::Comm { kind: CommKind::AllGather, bytes: 2 * elems * dtype.bytes(), ranks: 2, link, algorithm: Default::default() }, 1.0));
        }
        let _ = b;
        let mut priced = Vec::new();
        for (op, n) in &ops {
            let e = self.memo.op(op, &self.device, TileMode::Default).map_err(|r| format!("scheduler step cannot run: {r}"))?;
            priced.push((op, e.time_us, *n));
        }
        Ok(graph_time(&self.device, self.framework_launch(), priced.iter().map(|(o, t, n)| (*o, *t, *n))).total_us)
    }

    /// The denoiser operators W8A8 keeps in 16-bit at this point (the protected layers).
    pub fn protected_ops(&self, k: &Knobs) -> Result<Vec<String>, String> {
        let (b, _) = self.layout(k)?;
        let comp = self.pipe.denoiser(b, &self.req.latent, self.emit(k.dtype, true, k.attention), Tome { ratio: k.tome }, SeqParallel { degree: k.sp, ring: k.ring })?;
        let prot = &self.c.protected;
        Ok(comp.ops.into_iter().filter(|o| !o.name.ends_with(".quant") && matches!(o.op, Op::Matmul { .. } | Op::Conv2d { .. }) && prot.iter().any(|p| o.name.starts_with(p.as_str()))).map(|o| o.name).collect())
    }

    /// The operators of one denoiser call at this point, each with its time (for the engine
    /// breakdown of one step).
    pub fn step_ops(&mut self, k: &Knobs) -> Result<Vec<OpCost>, String> {
        let (b, _) = self.layout(k)?;
        let float = k.dtype;
        let mut comp = self.pipe.denoiser(b, &self.req.latent, self.emit(float, k.int8, k.attention), Tome { ratio: k.tome }, SeqParallel { degree: k.sp, ring: k.ring })?;
        if k.int8 {
            self.protect(&mut comp.ops, float);
        }
        self.add_lora(&mut comp, float);
        let mut out = Vec::with_capacity(comp.ops.len());
        for o in comp.ops {
            let e = self.memo.op(&o.op, &self.device, TileMode::Default).map_err(|r| format!("operator {} cannot run: {r}", o.name))?;
            out.push(OpCost { time_us: e.time_us * o.repeat as f64, name: o.name, class: o.class, repeat: o.repeat, op: o.op, estimate: e });
        }
        Ok(out)
    }
}
