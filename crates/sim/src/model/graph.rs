//! Operator-graph model descriptions: a list of named `Op`s (the `Op` serde form) for one sample,
//! each with a repeat count, for models that are not a plain transformer stack (diffusion UNets,
//! custom networks).
//!
//! File format (`assets/models/sd15-unet.graph.json` is an example):
//! `{"format": "tunelab-graph", "name": "...", "family": "diffusion", "dtype": "fp16",
//!   "ops": [{"name": "down0.resnet.conv1", "repeat": 2, "class": "conv",
//!            "op": {"op": "conv2d", "batch": 1, "in_ch": 320, ...}}]}`
//! Shapes are for batch 1; `build_graph` scales them to the workload's batch (see `scale_batch`).

use super::{LoadedModel, ModelDesc, ModelFamily};
use crate::dtype::DType;
use crate::op::{Op, VectorKind};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What part of a model an operator belongs to (for breakdowns and hot-spot maps).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpClass {
    Attention,
    Mlp,
    Moe,
    Norm,
    Embedding,
    LmHead,
    Comm,
    Conv,
    Other,
}

impl OpClass {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            OpClass::Attention => "attention",
            OpClass::Mlp => "mlp",
            OpClass::Moe => "moe",
            OpClass::Norm => "norm",
            OpClass::Embedding => "embedding",
            OpClass::LmHead => "lm_head",
            OpClass::Comm => "comm",
            OpClass::Conv => "conv",
            OpClass::Other => "other",
        }
    }

    /// A default class from the operator's type, when the file gives none.
    pub fn infer(op: &Op) -> OpClass {
        match op {
            Op::Attention { .. } => OpClass::Attention,
            Op::Conv2d { .. } => OpClass::Conv,
            Op::Comm { .. } | Op::MoeComm { .. } => OpClass::Comm,
            Op::GroupedMatmul { .. } => OpClass::Moe,
            Op::Vector { kind: VectorKind::LayerNorm | VectorKind::RmsNorm, .. } => OpClass::Norm,
            Op::Vector { kind: VectorKind::Gather, .. } => OpClass::Embedding,
            _ => OpClass::Other,
        }
    }
}

/// One operator of an operator-graph model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphOpDesc {
    pub name: String,
    pub op: Op,
    /// How many times it runs per sample (e.g. identical blocks).
    #[serde(default = "one")]
    pub repeat: u64,
    #[serde(default)]
    pub class: Option<OpClass>,
    /// Whether the op carries weights (default: matmuls with batch 1 and convolutions do).
    #[serde(default)]
    pub weights: Option<bool>,
}

fn one() -> u64 {
    1
}

/// Largest single dimension accepted in a graph op (per sample).
const MAX_DIM: u64 = 1 << 24;
/// Largest repeat count.
const MAX_REPEAT: u64 = 1 << 20;
/// Most operators a graph may list (issue 13: a 20,000-operator link took minutes to set up).
/// Identical operators are written once with a `repeat` count, so real graphs stay far below.
pub const MAX_OPS: usize = 4096;

impl GraphOpDesc {
    /// The class, given or inferred.
    pub fn class(&self) -> OpClass {
        self.class.unwrap_or_else(|| OpClass::infer(&self.op))
    }

    /// Weight parameters of one instance (k x n for a linear layer, in x out x kh x kw for a
    /// convolution; biases and norm scales are ignored).
    pub fn weight_params(&self) -> u64 {
        let default = matches!(self.op, Op::Matmul { batch: 1, .. } | Op::Conv2d { .. } | Op::GroupedMatmul { .. });
        if !self.weights.unwrap_or(default) {
            return 0;
        }
        match self.op {
            Op::Matmul { batch, n, k, .. } => batch.saturating_mul(k).saturating_mul(n),
            Op::GroupedMatmul { groups, n, k, .. } => groups.saturating_mul(k).saturating_mul(n),
            Op::Conv2d { in_ch, out_ch, kh, kw, .. } => {
                in_ch.saturating_mul(out_ch).saturating_mul(kh).saturating_mul(kw)
            }
            _ => 0,
        }
    }

    /// This op's output activation elements (per instance), for memory estimates.
    pub fn output_elems(&self) -> u64 {
        match self.op {
            Op::Matmul { batch, m, n, .. } => batch.saturating_mul(m).saturating_mul(n),
            Op::Vector { rows, row_len, .. } => rows.saturating_mul(row_len),
            Op::Attention { batch, heads, q_len, head_dim, .. } => {
                batch.saturating_mul(heads).saturating_mul(q_len).saturating_mul(head_dim)
            }
            Op::Conv2d { batch, out_ch, h, w, stride, .. } => {
                let s = stride.max(1);
                batch.saturating_mul(out_ch).saturating_mul(h / s).saturating_mul(w / s)
            }
            Op::Comm { .. } => 0,
            Op::GroupedMatmul { m, n, .. } => m.saturating_mul(n),
            // What lands on the rank: a copy per routed expert (dispatch), a token (combine).
            Op::MoeComm { phase, tokens, hidden, top_k, .. } => match phase {
                crate::op::MoePhase::Dispatch => tokens.saturating_mul(top_k).saturating_mul(hidden),
                crate::op::MoePhase::Combine => tokens.saturating_mul(hidden),
            },
        }
    }
}

/// Scales a batch-1 op to `b` samples: convolutions, attention and batched matmuls grow in their
/// batch; plain matmuls (linear layers over tokens) grow in m; vector ops in rows; collectives in
/// bytes.
pub fn scale_batch(op: &Op, b: u64) -> Op {
    let mut op = op.clone();
    match &mut op {
        Op::Matmul { batch, m, .. } => {
            if *batch > 1 {
                *batch = batch.saturating_mul(b);
            } else {
                *m = m.saturating_mul(b);
            }
        }
        Op::Vector { rows, .. } => *rows = rows.saturating_mul(b),
        Op::Attention { batch, .. } | Op::Conv2d { batch, .. } => *batch = batch.saturating_mul(b),
        Op::Comm { bytes, .. } => *bytes = bytes.saturating_mul(b),
        Op::GroupedMatmul { m, .. } => *m = m.saturating_mul(b),
        Op::MoeComm { tokens, .. } => *tokens = tokens.saturating_mul(b),
    }
    op
}

/// Rejects negative or fractional numbers in a raw op object, naming the field.
fn check_numbers(v: &Value, path: &str) -> Result<(), String> {
    if let Some(obj) = v.as_object() {
        for (k, x) in obj {
            if let Value::Number(n) = x {
                if n.as_u64().is_none() {
                    return Err(format!(
                        "field '{path}.{k}' = {n} must be a non-negative integer"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Checks one op's sizes: every dimension positive and bounded.
pub fn validate_op(d: &GraphOpDesc) -> Result<(), String> {
    let name = &d.name;
    let dim = |field: &str, v: u64| -> Result<(), String> {
        if v == 0 || v > MAX_DIM {
            Err(format!("op '{name}': field '{field}' = {v} is out of range (1..={MAX_DIM})"))
        } else {
            Ok(())
        }
    };
    if d.repeat == 0 || d.repeat > MAX_REPEAT {
        return Err(format!("op '{name}': field 'repeat' = {} is out of range", d.repeat));
    }
    match d.op {
        Op::Matmul { batch, m, n, k, .. } => {
            dim("batch", batch)?;
            dim("m", m)?;
            dim("n", n)?;
            dim("k", k)
        }
        Op::Vector { rows, row_len, .. } => {
            dim("rows", rows)?;
            dim("row_len", row_len)
        }
        Op::Attention { batch, heads, kv_heads, q_len, kv_len, head_dim, .. } => {
            dim("batch", batch)?;
            dim("heads", heads)?;
            dim("kv_heads", kv_heads)?;
            dim("q_len", q_len)?;
            dim("kv_len", kv_len)?;
            dim("head_dim", head_dim)?;
            if heads % kv_heads != 0 {
                return Err(format!("op '{name}': kv_heads {kv_heads} must divide heads {heads}"));
            }
            Ok(())
        }
        Op::Conv2d { batch, in_ch, out_ch, h, w, kh, kw, stride, .. } => {
            for (f, v) in [("batch", batch), ("in_ch", in_ch), ("out_ch", out_ch), ("h", h), ("w", w)] {
                dim(f, v)?;
            }
            for (f, v) in [("kh", kh), ("kw", kw), ("stride", stride)] {
                if v == 0 || v > 64 {
                    return Err(format!("op '{name}': field '{f}' = {v} is out of range (1..=64)"));
                }
            }
            Ok(())
        }
        Op::Comm { bytes, ranks, .. } => {
            if bytes > 1 << 40 || ranks == 0 || ranks > 1 << 16 {
                return Err(format!("op '{name}': collective bytes/ranks out of range"));
            }
            Ok(())
        }
        Op::GroupedMatmul { groups, m, n, k, .. } => {
            dim("groups", groups)?;
            dim("m", m)?;
            dim("n", n)?;
            dim("k", k)
        }
        Op::MoeComm { tokens, hidden, top_k, ranks, .. } => {
            dim("tokens", tokens)?;
            dim("hidden", hidden)?;
            if top_k == 0 || top_k > 1024 {
                return Err(format!("op '{name}': field 'top_k' = {top_k} is out of range (1..=1024)"));
            }
            if ranks == 0 || ranks > 1 << 16 {
                return Err(format!("op '{name}': field 'ranks' = {ranks} is out of range (1..=65536)"));
            }
            Ok(())
        }
    }
}

/// Parses an operator-graph JSON object.
pub fn load_graph(obj: &Map<String, Value>) -> Result<LoadedModel, String> {
    let mut warnings = Vec::new();
    let ops_raw = obj
        .get("ops")
        .and_then(Value::as_array)
        .ok_or_else(|| "field 'ops' must be a list of operators".to_string())?;
    if ops_raw.is_empty() {
        return Err("field 'ops' is empty".into());
    }
    if ops_raw.len() > MAX_OPS {
        return Err(format!("field 'ops' lists {} operators; at most {MAX_OPS} (write identical operators once with a 'repeat' count)", ops_raw.len()));
    }
    let mut graph = Vec::with_capacity(ops_raw.len());
    for (i, raw) in ops_raw.iter().enumerate() {
        check_numbers(raw, &format!("ops[{i}]"))?;
        if let Some(inner) = raw.get("op") {
            check_numbers(inner, &format!("ops[{i}].op"))?;
        }
        let d: GraphOpDesc =
            serde_json::from_value(raw.clone()).map_err(|e| format!("ops[{i}]: {e}"))?;
        graph.push(d);
    }
    let family = match obj.get("family").and_then(Value::as_str) {
        None => ModelFamily::Custom,
        Some(f) => serde_json::from_value(Value::String(f.to_string())).map_err(|_| {
            format!(
                "field 'family' = '{f}' is not one of dense_llm, moe_llm, diffusion, multimodal, custom"
            )
        })?,
    };
    if matches!(family, ModelFamily::DenseLlm | ModelFamily::MoeLlm | ModelFamily::Multimodal) {
        warnings.push(format!(
            "operator graph labelled '{}': KV cache and tensor-parallel sharding are only modelled \
             for transformer descriptions",
            family.name()
        ));
    }
    let dtype = match obj.get("dtype").and_then(Value::as_str) {
        Some(s) => DType::parse(s)?,
        None => {
            warnings.push("no dtype given; assuming fp16".into());
            DType::Fp16
        }
    };
    let name = obj.get("name").and_then(Value::as_str).unwrap_or("operator graph").to_string();
    let model = ModelDesc { name, family, dtype, llm: None, vision: None, graph };
    Ok(LoadedModel { model, warnings })
}
