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
/// Most CSV records (operator launches) read from one file.
pub const MAX_LAUNCHES: usize = 1_000_000;
/// Most distinct operators (type, shapes, data types) one summary may have: each becomes a
/// row that `fidelity` prices and `calibrate` refits, so this bounds their work too.
pub const MAX_DISTINCT_OPS: usize = 2_000;
/// Most fields in one record, and characters in one field.
pub const MAX_FIELDS: usize = 512;
pub const MAX_FIELD_CHARS: usize = 64 * 1024;
/// Shortest task duration accepted (us): a nanosecond is below any profiler's resolution; a
/// smaller (or denormal) value is a damaged row, not a measurement.
pub const MIN_DURATION_US: f64 = 1e-3;
/// Largest task duration accepted (us): an hour.
pub const MAX_DURATION_US: f64 = 3.6e9;
/// Largest element count of one tensor shape (2^48: far beyond any chip's memory; a product
/// past it, or one that overflows, is refused rather than wrapped).
pub const MAX_ELEMENTS: u64 = 1 << 48;

/// Parses CSV text into records (RFC 4180: quoted fields, doubled quotes, CRLF or LF). An
/// unterminated quote is an error naming the line it opens on (it once swallowed the rest of
/// the file silently).
pub fn parse_csv(text: &str) -> Result<Vec<Vec<String>>, String> {
    let mut out = Vec::new();
    for_each_record(text, |_, r| {
        out.push(r.to_vec());
        Ok(())
    })?;
    Ok(out)
}

/// Streams the records of CSV text to `f` (1-based line number of the record's start, fields),
/// holding one record at a time; bounded by `MAX_LAUNCHES`, `MAX_FIELDS`, `MAX_FIELD_CHARS`.
pub fn for_each_record(text: &str, mut f: impl FnMut(usize, &[String]) -> Result<(), String>) -> Result<(), String> {
    let text = crate::spec::strict::strip_bom(text);
    let mut row: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let (mut line, mut start_line, mut quote_line, mut records) = (1usize, 1usize, 0usize, 0usize);
    // The first quoted field that runs past its line (an op summary has none: the likely place
    // a quote went missing).
    let mut spans: Option<usize> = None;
    let mut chars = text.chars().peekable();
    let push_field = |row: &mut Vec<String>, field: &mut String, line: usize| -> Result<(), String> {
        if row.len() >= MAX_FIELDS {
            return Err(format!("line {line}: more than {MAX_FIELDS} fields in one record (MAX_FIELDS)"));
        }
        row.push(std::mem::take(field));
        Ok(())
    };
    while let Some(c) = chars.next() {
        if field.len() > MAX_FIELD_CHARS {
            return Err(format!("line {start_line}: a field longer than {MAX_FIELD_CHARS} characters (MAX_FIELD_CHARS)"));
        }
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    field.push('"');
                    chars.next();
                }
                '"' => quoted = false,
                '\n' => {
                    spans.get_or_insert(quote_line);
                    line += 1;
                    field.push(c);
                }
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '"' => {
                quoted = true;
                quote_line = line;
            }
            ',' => push_field(&mut row, &mut field, start_line)?,
            '\r' => {}
            '\n' => {
                push_field(&mut row, &mut field, start_line)?;
                records += 1;
                if records > MAX_LAUNCHES + 1 {
                    return Err(format!("more than {MAX_LAUNCHES} records (MAX_LAUNCHES, docs/measurements.md); trim the profile to the steps you want compared"));
                }
                f(start_line, &row)?;
                row.clear();
                line += 1;
                start_line = line;
            }
            _ => field.push(c),
        }
    }
    if quoted {
        let first = spans.filter(|l| *l < quote_line).map(|l| format!("; the quoted field opened on line {l} already runs across lines, so the missing quote is likely there")).unwrap_or_default();
        return Err(format!("line {quote_line}: a quote opened here is never closed (the rest of the file would be one field){first}; fix or remove that quote"));
    }
    if !field.is_empty() || !row.is_empty() {
        push_field(&mut row, &mut field, start_line)?;
        f(start_line, &row)?;
    }
    Ok(())
}

/// Whether text looks like an op summary (its header has OP Type and Task Duration).
pub fn looks_like_op_summary(text: &str) -> bool {
    let head = crate::spec::strict::strip_bom(text).lines().next().unwrap_or("");
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
        let dims = dims.map_err(|_| format!("unreadable shape '{}'", crate::spec::scenario::clip(p)))?;
        checked_prod(&dims).ok_or_else(|| format!("shape '{}' has more than {MAX_ELEMENTS} elements (or its product overflows); refused", crate::spec::scenario::clip(p)))?;
        out.push(dims);
    }
    Ok(out)
}

/// The product of dimensions, None past `MAX_ELEMENTS` or on overflow (never wrapped).
fn checked_prod(d: &[u64]) -> Option<u64> {
    d.iter().try_fold(1u64, |a, &x| a.checked_mul(x)).filter(|p| *p <= MAX_ELEMENTS)
}

/// The product of a shape's leading dimensions (1 for none); shapes are checked when read.
fn prod(d: &[u64]) -> u64 {
    checked_prod(d).unwrap_or(u64::MAX).max(1)
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
        return Err(format!("the op summary is {} MiB; at most {} MiB are read (MAX_BYTES, docs/measurements.md)", text.len() >> 20, MAX_BYTES >> 20));
    }
    let mut header: Option<Vec<String>> = None;
    let mut cols = None;
    let mut groups: BTreeMap<(String, String, String, String), Vec<f64>> = BTreeMap::new();
    let mut skipped: BTreeMap<String, String> = BTreeMap::new();
    let mut bad_durations = 0usize;
    for_each_record(text, |line, r| {
        if header.is_none() {
            let h = r.to_vec();
            let col = |names: &[&str]| h.iter().position(|x| names.iter().any(|n| x.trim().eq_ignore_ascii_case(n)));
            let need = |names: &[&str]| col(names).ok_or_else(|| format!("the op summary has no '{}' column (columns: {})", names[0], h.iter().take(12).cloned().collect::<Vec<_>>().join(", ")));
            cols = Some((need(&["OP Type", "Op Type"])?, need(&["Input Shapes"])?, need(&["Input Data Types"])?, need(&["Task Duration(us)", "Task Duration"])?, col(&["Output Shapes"])));
            header = Some(h);
            return Ok(());
        }
        let (c_type, c_shape, c_dtype, c_dur, c_out) = cols.expect("set with the header");
        if r.iter().all(|f| f.trim().is_empty()) {
            return Ok(());
        }
        let get = |c: usize| r.get(c).map(|s| s.trim().to_string()).unwrap_or_default();
        let dur: f64 = match get(c_dur).parse::<f64>() {
            Ok(d) if d.is_finite() && (MIN_DURATION_US..=MAX_DURATION_US).contains(&d) => d,
            _ => {
                bad_durations += 1;
                if bad_durations > 20 {
                    return Ok(());
                }
                skipped.entry(format!("line {line}")).or_insert_with(|| format!("Task Duration '{}' is not a duration in [{MIN_DURATION_US}, {MAX_DURATION_US}] us", crate::spec::scenario::clip(&get(c_dur))));
                return Ok(());
            }
        };
        let key = (get(c_type), get(c_shape), get(c_dtype), c_out.map(get).unwrap_or_default());
        if !groups.contains_key(&key) && groups.len() >= MAX_DISTINCT_OPS {
            return Err(format!("line {line}: more than {MAX_DISTINCT_OPS} distinct operators (type, shapes, data types; MAX_DISTINCT_OPS, docs/measurements.md); split the profile"));
        }
        groups.entry(key).or_default().push(dur);
        Ok(())
    })?;
    if header.is_none() {
        return Err("the op summary is empty".into());
    }
    if bad_durations > 20 {
        skipped.insert("lines (more)".into(), format!("{} more lines without a duration in [{MIN_DURATION_US}, {MAX_DURATION_US}] us (only the first 20 are listed)", bad_durations - 20));
    }
    let mut rows = Vec::new();
    let mut used = std::collections::BTreeSet::new();
    for ((ty, shp, dt, out), durs) in groups {
        let label = format!("{ty} [{shp}] {dt}");
        match to_op(&ty, &shp, &dt, &out) {
            Ok(op) => {
                let dtype = op.get("dtype").cloned().unwrap_or(json!("fp16"));
                // The data types are part of the identity (FLOAT16 and BF16 launches of one
                // shape are two measurements); a clash left (output shapes) gets a suffix.
                let base = format!("msprof-{}-{}-{}", ty, shp.replace([';', ','], "x"), dt.replace([';', ','], "x"));
                let mut id = base.clone();
                let mut k = 2;
                while !used.insert(id.clone()) {
                    id = format!("{base}-{k}");
                    k += 1;
                }
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
