//! The launch from a pasted serving command: `vllm serve MODEL --flag ...` (or
//! `python -m vllm.entrypoints.openai.api_server --model MODEL ...`) and
//! `python -m sglang.launch_server --model-path MODEL ...`, read into a deployment scenario:
//! the command's flags pin the stage's parameters (tp, dp, expert parallelism, max-num-seqs,
//! the token budget, chunked prefill, precision, graph or eager launch, speculative tokens) on
//! top of a base scenario that gives the chip (and the model when the command's is a local
//! path). Flags are checked against the release's argument list (assets/engines/flags/, the
//! `launch` data: `stages::scale::flags`): a flag the release does not have is refused by name;
//! a flag it has that does not change the prediction (--host, --served-model-name, ...) is
//! listed as read and not priced.

use crate::stages::scale::flags;
use serde_json::{json, Value as Json};

/// What a command set, and what it did not price.
#[derive(Clone, Debug, PartialEq)]
pub struct ServeLaunch {
    pub scenario: crate::Scenario,
    /// "--flag value: what it pinned".
    pub read: Vec<String>,
    /// Flags of the release that do not change the prediction.
    pub not_priced: Vec<String>,
    /// The release list the flags were checked against ("vLLM-Ascend 0.11.0 on vLLM 0.11.0").
    pub release: String,
}

/// Longest command read (characters).
const MAX_COMMAND: usize = 64 * 1024;

/// Splits a shell command line: quotes ('...' literal, "..." with \" escapes), backslash-newline
/// continuations, whitespace.
pub fn split(cmd: &str) -> Result<Vec<String>, String> {
    if cmd.len() > MAX_COMMAND {
        return Err(format!("the command has {} characters, over {MAX_COMMAND}", cmd.len()));
    }
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut any = false;
    let mut it = cmd.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\'' => {
                any = true;
                loop {
                    match it.next() {
                        Some('\'') => break,
                        Some(x) => cur.push(x),
                        None => return Err("a '...' quote is not closed".into()),
                    }
                }
            }
            '"' => {
                any = true;
                loop {
                    match it.next() {
                        Some('"') => break,
                        Some('\\') => match it.next() {
                            Some(x) => cur.push(x),
                            None => return Err("a \"...\" quote is not closed".into()),
                        },
                        Some(x) => cur.push(x),
                        None => return Err("a \"...\" quote is not closed".into()),
                    }
                }
            }
            '\\' => match it.next() {
                Some('\n') | Some('\r') | None => {}
                Some(x) => {
                    any = true;
                    cur.push(x)
                }
            },
            c if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    Ok(out)
}

/// The engine a command launches and its arguments after the program.
fn program(tokens: &[String]) -> Result<(&'static str, Vec<String>), String> {
    let mut i = 0;
    // Environment assignments before the program (VAR=value).
    while i < tokens.len() && tokens[i].contains('=') && !tokens[i].starts_with('-') {
        i += 1;
    }
    let rest = &tokens[i..];
    let t: Vec<&str> = rest.iter().map(String::as_str).collect();
    match t.as_slice() {
        ["vllm", "serve", ..] => Ok(("vllm-ascend", rest[2..].to_vec())),
        [py, "-m", "vllm.entrypoints.openai.api_server", ..] if py.starts_with("python") => Ok(("vllm-ascend", rest[3..].to_vec())),
        [py, "-m", "sglang.launch_server", ..] if py.starts_with("python") => Ok(("sglang", rest[3..].to_vec())),
        _ => Err(format!("expected `vllm serve MODEL ...`, `python -m vllm.entrypoints.openai.api_server ...` or `python -m sglang.launch_server ...`, got `{}`", crate::evidence::benchruns::common::clip(&t.iter().take(3).cloned().collect::<Vec<_>>().join(" "), 60))),
    }
}

/// (flag, value) pairs and the positional arguments; `--flag=value` split; a flag followed by
/// another flag (or nothing) has no value.
fn pairs(args: &[String]) -> (Vec<(String, Option<String>)>, Vec<String>) {
    let (mut out, mut pos) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if let Some(body) = a.strip_prefix("--").or_else(|| a.strip_prefix('-').filter(|b| !b.is_empty() && !b.starts_with(|c: char| c.is_ascii_digit()))) {
            let dash = if a.starts_with("--") { "--" } else { "-" };
            if let Some((k, v)) = body.split_once('=') {
                out.push((format!("{dash}{k}"), Some(v.to_string())));
            } else if i + 1 < args.len() && !(args[i + 1].starts_with('-') && args[i + 1].len() > 1 && !args[i + 1].starts_with(|c: char| c == '-' && args[i + 1][1..].starts_with(|d: char| d.is_ascii_digit()))) {
                out.push((a.clone(), Some(args[i + 1].clone())));
                i += 1;
            } else {
                out.push((a.clone(), None));
            }
        } else {
            pos.push(a.clone());
        }
        i += 1;
    }
    (out, pos)
}

fn int(flag: &str, v: Option<&str>) -> Result<i64, String> {
    v.and_then(|x| x.parse::<i64>().ok()).filter(|x| *x > 0).ok_or_else(|| format!("{flag}: expected a positive whole number, got '{}'", v.unwrap_or("")))
}

fn frac(flag: &str, v: Option<&str>) -> Result<f64, String> {
    v.and_then(|x| x.parse::<f64>().ok()).filter(|x| *x > 0.0 && *x <= 1.0).ok_or_else(|| format!("{flag}: expected a fraction in (0, 1], got '{}'", v.unwrap_or("")))
}

/// The short spellings each engine's parser defines (vLLM's arg_utils aliases; SGLang's --tp).
fn long_name(engine: &str, flag: &str) -> String {
    match (engine, flag) {
        ("vllm-ascend", "-tp") => "--tensor-parallel-size".into(),
        ("vllm-ascend", "-dp") => "--data-parallel-size".into(),
        ("vllm-ascend", "-pp") => "--pipeline-parallel-size".into(),
        ("vllm-ascend", "-q") => "--quantization".into(),
        ("vllm-ascend", "-O") => "--compilation-config".into(),
        _ => flag.to_string(),
    }
}

/// The bundled model a served model names: its last path part, lower-cased, as is or without
/// a "-hf", "-instruct", "-chat" or "-base" suffix ("meta-llama/Llama-2-7b-hf" is llama-2-7b).
pub fn bundled_id(model: &str) -> Option<&'static str> {
    let mut name = model.trim_end_matches('/').rsplit('/').next().unwrap_or(model).to_lowercase();
    let ids = tunelab_sim::bundled_models();
    loop {
        if let Some((id, _)) = ids.iter().find(|(id, _)| **id == name) {
            return Some(id);
        }
        let cut = ["-hf", "-instruct", "-chat", "-base"].iter().find_map(|s| name.strip_suffix(s).map(str::to_string))?;
        name = cut;
    }
}

fn dep(v: &mut Json) -> &mut Json {
    &mut v["deployment"]
}

/// Reads `cmd` over `base` (a deployment scenario giving the chip; its model when the command's
/// model is not a bundled one).
pub fn launch(cmd: &str, base: &crate::Scenario) -> Result<ServeLaunch, String> {
    if base.stage != crate::Stage::Deployment {
        return Err(format!("the base scenario is a {} scenario; the launch needs a deployment scenario (its chip)", base.stage.name()));
    }
    let tokens = split(cmd)?;
    let (engine, args) = program(&tokens)?;
    let version = if base.deployment.serving.engine == engine { base.deployment.serving.engine_version.clone() } else { String::new() };
    let version = if version.is_empty() { flags::newest(engine) } else { version };
    let (list, exact) = flags::for_release(engine, &version).ok_or_else(|| format!("no argument list for {engine} (assets/engines/flags/)"))?;
    let mut v = serde_json::to_value(base).map_err(|e| e.to_string())?;
    let mut read = Vec::new();
    let mut not_priced = Vec::new();
    if !exact {
        read.push(format!("{engine} {version}: no list of its own; checked against {}", list.release));
    }
    let (pairs, pos) = pairs(&args);
    let mut model: Option<String> = pos.first().cloned();
    if pos.len() > 1 {
        return Err(format!("unexpected argument(s) {} (only the model is positional)", pos[1..].join(" ")));
    }
    let fixed = |v: &mut Json, name: &str, x: Json| {
        v["space"][name] = json!({ "fixed": x });
    };
    dep(&mut v)["serving"]["engine"] = json!(engine);
    let mut launch_mode = "graph";
    let mut precision: Option<&str> = None;
    for (flag, val) in &pairs {
        let f = long_name(engine, flag);
        let base_flag = f.strip_prefix("--no-").map(|x| format!("--{x}"));
        if !list.has(&f) && !base_flag.as_ref().is_some_and(|b| list.has(b)) {
            let dep_note = list.deprecated.get(&f).map(|s| format!(" (deprecated: {s})")).unwrap_or_default();
            return Err(format!("{f}: {} has no such argument{dep_note} (assets/engines/flags/: every argument of the release, with its source)", list.release));
        }
        let val = val.as_deref();
        let shown = format!("{f}{}", val.map(|x| format!(" {x}")).unwrap_or_default());
        match (engine, f.as_str()) {
            ("vllm-ascend", "--model") | ("sglang", "--model-path") | ("sglang", "--model") => model = val.map(str::to_string),
            ("vllm-ascend", "--tensor-parallel-size") | ("sglang", "--tp-size") | ("sglang", "--tensor-parallel-size") | ("sglang", "--tp") => {
                let n = int(&f, val)?;
                fixed(&mut v, "tp", json!(n));
                read.push(format!("{shown}: tp {n}"));
            }
            ("vllm-ascend", "--data-parallel-size") | ("sglang", "--dp-size") | ("sglang", "--data-parallel-size") | ("sglang", "--dp") => {
                let n = int(&f, val)?;
                if n > 1 {
                    let c = &mut dep(&mut v)["cluster"];
                    if c.is_null() {
                        *c = json!({ "nodes": 1 });
                    }
                    c["data_parallel"] = json!([n]);
                    read.push(format!("{shown}: dp {n}"));
                }
            }
            ("vllm-ascend", "--enable-expert-parallel") | ("sglang", "--enable-ep-moe") => {
                fixed(&mut v, "expert_parallel", json!("on"));
                read.push(format!("{shown}: expert parallelism on (ep = tp x dp)"));
            }
            ("vllm-ascend", "--max-num-seqs") | ("sglang", "--max-running-requests") => {
                let n = int(&f, val)?;
                fixed(&mut v, "batch", json!(n));
                v["workload"]["batch"] = json!(n);
                read.push(format!("{shown}: batch (max running requests) {n}"));
            }
            ("vllm-ascend", "--max-num-batched-tokens") | ("sglang", "--chunked-prefill-size") => {
                let n = int(&f, val)?;
                fixed(&mut v, "max_num_batched_tokens", json!(n));
                read.push(format!("{shown}: token budget per step {n}"));
            }
            ("vllm-ascend", "--enable-chunked-prefill") | ("vllm-ascend", "--no-enable-chunked-prefill") => {
                let on = !f.starts_with("--no-") && !matches!(val, Some("false") | Some("False"));
                fixed(&mut v, "chunked_prefill", json!(if on { "on" } else { "off" }));
                read.push(format!("{shown}: chunked prefill {}", if on { "on" } else { "off" }));
            }
            ("vllm-ascend", "--gpu-memory-utilization") | ("sglang", "--mem-fraction-static") => {
                let x = frac(&f, val)?;
                fixed(&mut v, "kv_cache_fraction", json!(x));
                read.push(format!("{shown}: memory fraction {x} (the stage's kv_cache_fraction)"));
            }
            ("vllm-ascend", "--enforce-eager") | ("sglang", "--disable-cuda-graph") => {
                launch_mode = "eager";
                read.push(format!("{shown}: eager launch"));
            }
            ("vllm-ascend", "--compilation-config") => {
                let cfg: Json = serde_json::from_str(val.unwrap_or("")).map_err(|e| format!("{f}: not JSON: {e}"))?;
                match cfg.get("cudagraph_mode").and_then(Json::as_str) {
                    Some("FULL_DECODE_ONLY") => dep(&mut v)["serving"]["graph_mode"] = json!("full_decode_only"),
                    Some("PIECEWISE") => dep(&mut v)["serving"]["graph_mode"] = json!("piecewise"),
                    Some("NONE") => launch_mode = "eager",
                    Some(o) => return Err(format!("{f}: cudagraph_mode '{o}' is not modelled (PIECEWISE, FULL_DECODE_ONLY or NONE)")),
                    None => {}
                }
                read.push(format!("{shown}: graph capture"));
            }
            ("vllm-ascend", "--dtype") | ("sglang", "--dtype") => {
                precision = Some(match val {
                    Some("bfloat16") => "bf16",
                    Some("float16") | Some("half") => "fp16",
                    Some("auto") | None => continue,
                    Some(o) => return Err(format!("{f}: '{o}' is not a serving precision Tunelab models (bfloat16, float16, auto)")),
                });
                read.push(format!("{shown}: precision {}", precision.unwrap_or("")));
            }
            ("vllm-ascend", "--quantization") | ("sglang", "--quantization") => {
                match val {
                    Some("ascend") | Some("w8a8_int8") => precision = Some("w8a8"),
                    Some(o) => return Err(format!("{f}: '{o}' is not modelled (vLLM-Ascend's 'ascend': msModelSlim W8A8 weights)")),
                    None => return Err(format!("{f}: needs a method")),
                }
                read.push(format!("{shown}: precision w8a8 (msModelSlim weights)"));
            }
            ("vllm-ascend", "--speculative-config") => {
                let cfg: Json = serde_json::from_str(val.unwrap_or("")).map_err(|e| format!("{f}: not JSON: {e}"))?;
                let k = cfg.get("num_speculative_tokens").and_then(Json::as_i64).filter(|k| *k > 0).ok_or_else(|| format!("{f}: needs num_speculative_tokens > 0"))?;
                fixed(&mut v, "num_speculative_tokens", json!(k));
                read.push(format!("{shown}: {k} speculative tokens"));
            }
            ("vllm-ascend", "--block-size") | ("sglang", "--page-size") => {
                let n = int(&f, val)?;
                dep(&mut v)["serving"]["block_size"] = json!(n);
                read.push(format!("{shown}: KV block size {n}"));
            }
            ("vllm-ascend", "--max-model-len") | ("sglang", "--context-length") => {
                let n = int(&f, val)?;
                read.push(format!("{shown}: longest request {n} tokens (the engine refuses longer ones; the replay serves the file's lengths)"));
            }
            _ => not_priced.push(shown),
        }
    }
    let model = model.ok_or("no model: give it after `vllm serve` (or --model / --model-path)")?;
    match bundled_id(&model) {
        Some(id) => {
            v["model"] = json!(id);
            read.insert(0, format!("model {model}: the bundled {id}"));
        }
        None => read.insert(0, format!("model {model}: not a bundled model id, so the base scenario's model is used")),
    }
    fixed(&mut v, "launch", json!(launch_mode));
    if let Some(p) = precision {
        fixed(&mut v, "precision", json!(p));
    }
    let s = crate::Scenario::from_value(v).map_err(|e| format!("the launch: {e}"))?;
    crate::stages::setup(&s).map_err(|e| format!("the launch does not build: {e}"))?;
    Ok(ServeLaunch { scenario: s, read, not_priced, release: list.release.clone() })
}

#[cfg(test)]
mod tests {
    fn base() -> crate::Scenario {
        crate::Scenario::from_value(serde_json::from_str(include_str!("../../../../../assets/scenarios/llama2-7b-910B2-deployment.json")).unwrap()).unwrap()
    }

    #[test]
    fn a_vllm_command_pins_the_deployment() {
        let cmd = "VLLM_USE_V1=1 vllm serve /data/Llama-2-7b-hf \\\n  --tensor-parallel-size 2 --max-num-seqs 32 --max-num-batched-tokens=4096 \\\n  --enforce-eager --gpu-memory-utilization 0.9 --host 0.0.0.0 --port 8000 --served-model-name 'llama 2'";
        let l = super::launch(cmd, &base()).unwrap();
        let s = &l.scenario;
        assert_eq!(s.deployment.serving.engine, "vllm-ascend");
        let fixed = |n: &str| s.space.get(n).and_then(|o| o.fixed.clone()).unwrap_or_default();
        assert_eq!((fixed("tp"), fixed("batch"), fixed("max_num_batched_tokens"), fixed("launch")), (serde_json::json!(2), serde_json::json!(32), serde_json::json!(4096), serde_json::json!("eager")));
        assert_eq!(l.not_priced, ["--host 0.0.0.0", "--port 8000", "--served-model-name llama 2"]);
        assert!(l.read[0].contains("the bundled llama-2-7b"), "{:?}", l.read);
        assert_eq!(super::bundled_id("Qwen/Qwen2.5-7B-Instruct"), Some("qwen2.5-7b"));
        assert_eq!(super::bundled_id("/data/weights/my-model"), None);
    }

    #[test]
    fn unknown_or_bad_flags_are_refused_by_name() {
        for (cmd, want) in [
            ("vllm serve m --tensor-paralel-size 2", "--tensor-paralel-size: "),
            ("vllm serve m --tensor-parallel-size two", "--tensor-parallel-size: expected a positive whole number"),
            ("vllm serve m --quantization fp8", "'fp8' is not modelled"),
            ("vllm serve m --compilation-config '{oops'", "not JSON"),
            ("trtllm-serve m", "expected `vllm serve"),
            ("vllm serve m --served-model-name 'open", "not closed"),
        ] {
            let e = super::launch(cmd, &base()).unwrap_err();
            assert!(e.contains(want), "{cmd}: {e}");
        }
    }

    #[test]
    fn an_sglang_command_reads_too() {
        let l = super::launch("python3 -m sglang.launch_server --model-path /w/llama --tp-size 2 --max-running-requests 16 --mem-fraction-static 0.8", &base()).unwrap();
        assert_eq!(l.scenario.deployment.serving.engine, "sglang");
        assert_eq!(l.scenario.space.get("batch").and_then(|o| o.fixed.clone()), Some(serde_json::json!(16)));
        assert_eq!(l.scenario.space.get("launch").and_then(|o| o.fixed.clone()), Some(serde_json::json!("graph")));
        // SGLang 0.5.23 deprecates --disable-cuda-graph (its list says so): refused with the reason.
        let e = super::launch("python3 -m sglang.launch_server --model-path /w/llama --disable-cuda-graph", &base()).unwrap_err();
        assert!(e.contains("deprecated"), "{e}");
    }
}
