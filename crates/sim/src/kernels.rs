//! The kernel-library layer (assets/kernels/libraries.json): how well a library's kernels use
//! the chip, per kernel family (matmul pipeline hand-offs, vector tile overheads, the flash
//! attention cube <-> vector hand-off). A chip profile names its library with `kernel_library`
//! (a name, or an inline `{"name", "fields"}` block a calibration writes); the chip's own
//! `fields` keep only what microbenchmarks of the silicon measure. A kernel field still present
//! in a profile's `fields` (an old shared link) overrides the library's value. Each field of
//! the file is {value, source, min, max, family, note}: min/max are the physically plausible
//! bounds a fit may use; the eager dispatch family is the host side of a call through torch_npu
//! (`cost::dispatch`). The file's own `about` stays short: the page carries the file.

use serde_json::{Map, Value};

/// The bundled library file.
pub const LIBRARIES_JSON: &str = crate::json_asset_lean!("../../../assets/kernels/libraries.json");

/// The device fields that belong to the kernel library, in file order. The dispatch costs
/// (`eager_host_us_*`, and `graph_launch_us`, the runtime's launch of a captured graph) are the
/// host side of calling the library's kernels through torch_npu (op dispatch, the aclnn
/// two-phase call with host tiling) or the runtime: software, not silicon, so they live here
/// rather than in the chip profile (issue 21).
pub const KERNEL_FIELDS: &[&str] = &["cube_kstep_sync_cycles", "l1_load_sync_cycles", "fixpipe_sync_cycles", "vector_tile_sync_cycles", "vector_efficiency", "fa_handoff_cycles", "hccs_efficiency", "aiv_link_efficiency", "normal_peer_wait_us", "grouped_matmul_hbm_efficiency", "eager_host_us_per_launch", "eager_host_us_attention", "graph_launch_us"];

/// The libraries file, parsed once (a compile-time asset; every profile load read it again, the
/// largest share of `tunelab calibrate`'s time on an op summary).
fn file() -> Result<&'static Value, String> {
    static FILE: std::sync::OnceLock<Result<Value, String>> = std::sync::OnceLock::new();
    FILE.get_or_init(|| serde_json::from_str(LIBRARIES_JSON).map_err(|e| format!("kernel libraries file: {e}"))).as_ref().map_err(Clone::clone)
}

/// Names of the bundled libraries, and the default one.
pub fn names() -> (Vec<String>, String) {
    static NULL: Value = Value::Null;
    let f = file().unwrap_or(&NULL);
    let names = f.get("libraries").and_then(Value::as_object).map(|m| m.keys().cloned().collect()).unwrap_or_default();
    (names, f.get("default").and_then(Value::as_str).unwrap_or("aclnn").to_string())
}

/// The bundled block of library `name` (`{"about", "fields"}`), with its source texts.
pub fn bundled_block(name: &str) -> Result<(Value, Map<String, Value>), String> {
    let f = file()?;
    let libs = f.get("libraries").and_then(Value::as_object).ok_or("kernel libraries file: 'libraries' missing")?;
    let b = libs.get(name).ok_or_else(|| format!("device field 'kernel_library': unknown kernel library '{}' (known: {})", clip(name), libs.keys().cloned().collect::<Vec<_>>().join(", ")))?;
    let sources = f.get("sources").and_then(Value::as_object).cloned().unwrap_or_default();
    Ok((b.clone(), sources))
}

fn clip(s: &str) -> String {
    s.chars().take(60).collect()
}

/// The library fields a profile gets: (library name, fields object, source texts). `sel` is the
/// profile's `kernel_library` value: absent (the default library), a name, or an inline block
/// `{"name", "fields"}` whose fields replace the named library's one by one. `table` is the
/// profile's optional `kernel_libraries` ({library: {field: {...}}}, what a calibration writes):
/// the selected library's entries there replace the bundled ones too.
pub fn resolve(sel: Option<&Value>, table: Option<&Value>) -> Result<(String, Map<String, Value>, Map<String, Value>), String> {
    let (_, default) = names();
    let (name, inline) = match sel {
        None | Some(Value::Null) => (default, None),
        Some(Value::String(s)) => (s.clone(), None),
        Some(Value::Object(o)) => (o.get("name").and_then(Value::as_str).unwrap_or(&default).to_string(), o.get("fields").and_then(Value::as_object)),
        Some(_) => return Err("device field 'kernel_library': must be a library name or {\"name\", \"fields\"}".into()),
    };
    let (block, sources) = bundled_block(&name)?;
    let mut fields = block.get("fields").and_then(Value::as_object).cloned().unwrap_or_default();
    let from_table = table.and_then(|t| t.get(&name)).and_then(Value::as_object);
    for over in from_table.into_iter().chain(inline) {
        for (k, v) in over {
            if !KERNEL_FIELDS.contains(&k.as_str()) {
                return Err(format!("device field 'kernel_library.fields.{}': not a kernel-library field (known: {})", clip(k), KERNEL_FIELDS.join(", ")));
            }
            fields.insert(k.clone(), v.clone());
        }
    }
    Ok((name, fields, sources))
}

/// The Triton (fla) kernels an engine launches for a linear-attention model's chunked delta
/// rule (assets/kernels/triton-fla.json). Its own file: only the serving engine's step pricer
/// reads it, so the page does not carry it.
pub const TRITON_FLA_JSON: &str = crate::json_asset_lean!("../../../assets/kernels/triton-fla.json");

/// A field of the Triton (fla) kernels' file. Parsed once; the file is a compile-time asset.
pub fn triton_fla_field(name: &str) -> Option<f64> {
    static FIELDS: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    let fields = FIELDS.get_or_init(|| {
        serde_json::from_str::<Value>(TRITON_FLA_JSON).ok().and_then(|f| f.get("fields")?.as_object().cloned()).unwrap_or_default()
    });
    fields.get(name)?.get("value")?.as_f64()
}

/// Whether library `name`'s grouped matmul dequantises packed INT4/INT8 weights under 16-bit
/// activations into a 16-bit workspace before the cube reads them (the library block's
/// `grouped_matmul_antiquant` is "workspace"; source K1 of the file). An unknown library or one
/// without the key: no (the dequantisation is priced inside the matmul). The serving step
/// pricer sets `GraphOptions::expert_dequant_workspace` from it.
pub fn grouped_antiquant_workspace(name: &str) -> bool {
    let Ok((block, _)) = bundled_block(name) else { return false };
    block.get("grouped_matmul_antiquant").and_then(|g| g.get("value")).and_then(Value::as_str) == Some("workspace")
}
