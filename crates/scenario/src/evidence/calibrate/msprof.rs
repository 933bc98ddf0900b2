//! Reading an Ascend profiler operator summary (msprof `op_summary_*.csv`) as measurements.
//!
//! Columns used (CANN profiling docs, "op_summary (Operator Details)"): `OP Type`, `Input
//! Shapes`, `Input Data Types`, `Task Duration(us)` (older releases: `Task Duration`), and
//! `Output Shapes` when present. Shapes are written "d0,d1;d0,d1" (one entry per input,
//! separated by ';'); data types "FLOAT16;FLOAT16" or "DT_FLOAT16;...". Rows with the same
//! operator type, shapes and types are one measurement: the median task duration of their
//! launches. Each becomes a one-operator graph on the operator stage (as the shared set's
//! operator rows), so `fidelity` and `calibrate` treat it like any other row. Operators Tunelab
//! has no model for (AI CPU ops, HCCL tasks without rank counts, unknown types) are listed with
//! the reason rather than guessed.
//!
//! Task Duration is device time (from the first core's start to the last core's end); it does
//! not include host launch, which the shared set's event-timed rows do.

use crate::evidence::fidelity::{median, MeasurementSet, Measured, Row, SCHEMA};
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;

/// Largest file read (a profile of a long run can be large; beyond this, trim it).
pub const MAX_BYTES: usize = 64 << 20;

/// Parses CSV text into records (RFC 4180: quoted fields, doubled quotes, CRLF or LF).
pub fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if quoted {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    field.push('"');
                    chars.next();
                } else {
                    quoted = false;
                }
            } else {
                field.push(c);
            }
            continue;
        }
        match c {
            '"' => quoted = true,
            ',' => row.push(std::mem::take(&mut field)),
            '\r' => {}
            '\n' => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            _ => field.push(c),
        }
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    rows
}

/// Whether text looks like an op summary (its header has OP Type and Task Duration).
pub fn looks_like_op_summary(text: &str) -> bool {
    let head = text.lines().next().unwrap_or("");
    head.contains("OP Type") && head.contains("Task Duration")
}

fn dtype(s: &str) -> Option<&'static str> {
    let t = s.trim().trim_start_matches("DT_").to_ascii_uppercase();
    match t.as_str() {
        "FLOAT16" | "FP16" | "HALF" => Some("fp16"),
        "BF16" | "BFLOAT16" => Some("bf16"),
        "FLOAT" | "FLOAT32" | "FP32" => Some("fp32"),
        "INT8" => Some("int8"),
        _ => None,
    }
}

fn shapes(s: &str) -> Result<Vec<Vec<u64>>, String> {
    let mut out = Vec::new();
    for part in s.trim().trim_matches('"').split(';') {
        let p = part.trim();
        if p.is_empty() {
            out.push(Vec::new());
            continue;
        }
        let dims: Result<Vec<u64>, _> = p.split(',').map(|d| d.trim().parse::<u64>()).collect();
        out.push(dims.map_err(|_| format!("unreadable shape '{}'", crate::spec::scenario::clip(p)))?);
    }
    Ok(out)
}

fn prod(d: &[u64]) -> u64 {
    d.iter().product::<u64>().max(1)
}

/// The Tunelab operator for an op-summary row, or why there is none.
pub fn to_op(op_type: &str, in_shapes: &str, in_types: &str, out_shapes: &str) -> Result<Json, String> {
    let lower = op_type.to_ascii_lowercase();
    if lower.starts_with("hcom") || lower.contains("allreduce") || lower.contains("allgather") || lower.contains("reducescatter") || lower.contains("alltoall") {
        return Err("a collective (HCCL task): the op summary gives neither its rank count nor its algorithm".into());
    }
    let sh = shapes(in_shapes)?;
    let types: Vec<&str> = in_types.split(';').collect();
    let t0 = types.first().and_then(|t| dtype(t)).ok_or_else(|| format!("unsupported input data type '{}'", crate::spec::scenario::clip(in_types)))?;
    let first = sh.first().cloned().unwrap_or_default();
    if first.is_empty() {
        return Err("no input shape".into());
    }
    let rows_of = |d: &[u64]| prod(&d[..d.len() - 1]);
    let last = *first.last().unwrap_or(&1);
    let vector = |kind: &str| Ok(json!({"op": "vector", "kind": kind, "rows": rows_of(&first), "row_len": last, "dtype": t0}));
    let ty = op_type.trim();
    match ty {
        "MatMul" | "MatMulV2" | "MatMulV3" | "BatchMatMul" | "BatchMatMulV2" | "BatchMatMulV3" => {
            let a = &first;
            let b = sh.get(1).ok_or("a matmul needs two inputs")?;
            if a.len() < 2 || b.len() < 2 {
                return Err("matmul inputs must be at least 2-D".into());
            }
            let (m, k) = (a[a.len() - 2], a[a.len() - 1]);
            let (b0, b1) = (b[b.len() - 2], b[b.len() - 1]);
            let out = shapes(out_shapes).ok().and_then(|o| o.into_iter().next()).filter(|o| o.len() >= 2);
            // B is (k, n) or, transposed, (n, k); the output shape settles it when given.
            let n = match out {
                Some(ref o) => o[o.len() - 1],
                None if b0 == k => b1,
                None if b1 == k => b0,
                None => return Err(format!("matmul shapes do not agree: A ..x{m}x{k}, B {b0}x{b1}")),
            };
            let (m, n) = match out {
                Some(o) => (o[o.len() - 2], n),
                None => (m, n),
            };
            let batch = prod(&a[..a.len() - 2]);
            let wt = types.get(1).and_then(|t| dtype(t)).unwrap_or(t0);
            let mut op = json!({"op": "matmul", "batch": batch, "m": m, "n": n, "k": k, "dtype": t0});
            if wt != t0 {
                op["weight_dtype"] = json!(wt);
            }
            Ok(op)
        }
        "FlashAttentionScore" => {
            // BNSD layout: q [B, N, S, D], k [B, N_kv, S_kv, D].
            let k = sh.get(1).ok_or("flash attention needs q and k")?;
            if first.len() != 4 || k.len() != 4 {
                return Err("flash attention shapes other than 4-D BNSD need the layout, which the summary does not give".into());
            }
            Ok(json!({"op": "attention", "kind": "flash", "batch": first[0], "heads": first[1], "kv_heads": k[1], "q_len": first[2], "kv_len": k[2], "head_dim": first[3], "causal": false, "dtype": t0}))
        }
        "Add" | "Mul" | "Sub" | "RealDiv" | "AddV2" | "Maximum" | "Minimum" => vector("elementwise"),
        "Gelu" | "FastGelu" | "Silu" | "Swish" | "Relu" | "Sigmoid" | "Tanh" | "Exp" => vector("activation"),
        "SwiGlu" => vector("swi_glu"),
        "SoftmaxV2" | "Softmax" => vector("softmax"),
        "LayerNorm" | "LayerNormV3" | "LayerNormV4" => vector("layer_norm"),
        "RmsNorm" | "AddRmsNorm" => vector("rms_norm"),
        "RotaryMul" | "ApplyRotaryPosEmb" | "RotaryPositionEmbedding" => vector("rotary"),
        "ReduceSum" | "ReduceMax" | "ReduceMean" => vector("reduce"),
        "Cast" => vector("cast"),
        "TensorMove" | "Identity" | "ViewCopy" | "GatherV2" | "Gather" => vector("gather"),
        other => Err(format!("OP Type '{}' has no Tunelab operator", crate::spec::scenario::clip(other))),
    }
}

/// An op summary as a measurement set on `chip`, plus the operators left out and why.
pub fn op_summary_to_set(text: &str, chip: &str, name: &str) -> Result<(MeasurementSet, Vec<(String, String)>), String> {
    if text.len() > MAX_BYTES {
        return Err(format!("the op summary is {} MiB; at most {} MiB are read", text.len() >> 20, MAX_BYTES >> 20));
    }
    let recs = parse_csv(text);
    let header = recs.first().ok_or("the op summary is empty")?;
    let col = |names: &[&str]| header.iter().position(|h| names.iter().any(|n| h.trim().eq_ignore_ascii_case(n)));
    let need = |names: &[&str]| col(names).ok_or_else(|| format!("the op summary has no '{}' column (columns: {})", names[0], header.iter().take(12).cloned().collect::<Vec<_>>().join(", ")));
    let c_type = need(&["OP Type", "Op Type"])?;
    let c_shape = need(&["Input Shapes"])?;
    let c_dtype = need(&["Input Data Types"])?;
    let c_dur = need(&["Task Duration(us)", "Task Duration"])?;
    let c_out = col(&["Output Shapes"]);
    let mut groups: BTreeMap<(String, String, String, String), Vec<f64>> = BTreeMap::new();
    let mut skipped: BTreeMap<String, String> = BTreeMap::new();
    for (i, r) in recs.iter().enumerate().skip(1) {
        if r.iter().all(|f| f.trim().is_empty()) {
            continue;
        }
        let get = |c: usize| r.get(c).map(|s| s.trim().to_string()).unwrap_or_default();
        let dur: f64 = match get(c_dur).parse() {
            Ok(d) if d > 0.0 && f64::is_finite(d) => d,
            _ => {
                skipped.entry(format!("line {}", i + 1)).or_insert_with(|| format!("Task Duration '{}' is not a positive number", crate::spec::scenario::clip(&get(c_dur))));
                continue;
            }
        };
        let out = c_out.map(get).unwrap_or_default();
        groups.entry((get(c_type), get(c_shape), get(c_dtype), out)).or_default().push(dur);
    }
    let mut rows = Vec::new();
    for ((ty, shp, dt, out), durs) in groups {
        let label = format!("{ty} [{shp}] {dt}");
        match to_op(&ty, &shp, &dt, &out) {
            Ok(op) => {
                let dtype = op.get("dtype").cloned().unwrap_or(json!("fp16"));
                let id = format!("msprof-{}-{}", ty, shp.replace([';', ','], "x"));
                rows.push(Row {
                    id,
                    category: "op".into(),
                    chip: chip.to_string(),
                    chip_stated: format!("given on the command line ({chip})"),
                    model: json!({"format": "tunelab-graph", "name": ty, "family": "custom", "dtype": dtype, "ops": [{"name": ty, "repeat": 1, "op": op}]}),
                    stage: "operator".into(),
                    scenario: json!({"operator": {"tiling": true, "fusion": false, "epilogue_fusion": false, "loop_unroll": false, "memory_reuse": false}, "workload": {"batch": 1}}),
                    values: vec![Measured { metric: "task_duration".into(), value: median(&durs), unit: "us".into(), predict: Some("model_time_ms".into()), ..Default::default() }],
                    weight: 1.0,
                    source: format!("{name}: {label}, median of {} launches", durs.len()),
                    ..Default::default()
                });
            }
            Err(why) => {
                skipped.insert(label, why);
            }
        }
    }
    let set = MeasurementSet { schema: SCHEMA.into(), name: name.to_string(), converted_from: json!({"format": "msprof op_summary csv"}), rows };
    Ok((set, skipped.into_iter().collect()))
}
