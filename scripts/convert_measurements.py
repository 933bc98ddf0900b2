#!/usr/bin/env python3
"""Converts the shared calibration set into Tunelab's structured measurement format.

Usage: python3 scripts/convert_measurements.py [SOURCE.json] [OUT.json]
Defaults: ../shared/calibration/ascend-measurements.json -> assets/measurements/ascend-910b.json
(relative to the repository root). The output is deterministic (sorted keys, fixed order), so
re-running it on the same source reproduces the file byte for byte; `tunelab fidelity` checks
nothing here, it only reads the result. The format is documented in docs/measurements.md.

What this script decides, once, per source row (never per prediction):
- which chip profile the row is compared against (the source's SKU when stated, else 910B2, as
  issue 8 does, with the choice written into `chip_note`);
- the model (a bundled id, or the model's public Hugging Face config.json values inline);
- the stage, the pinned configuration (space overrides with `fixed`) and the workload;
- which Tunelab metric each measured value is compared with, in a clean unit.
Values are copied unchanged from the source's `measured` block.
"""

import hashlib
import json
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_SRC = os.path.join(ROOT, "..", "shared", "calibration", "ascend-measurements.json")
DEFAULT_OUT = os.path.join(ROOT, "assets", "measurements", "ascend-910b.json")
DEFAULT_OUT_2 = os.path.join(ROOT, "assets", "measurements", "ascend-set2.json")
DEFAULT_OUT_3 = os.path.join(ROOT, "assets", "measurements", "ascend-set3.json")

# ---------------------------------------------------------------------------------------------
# Models: public config.json values (Hugging Face hub), written inline where not bundled.
# ---------------------------------------------------------------------------------------------

def llama(h, inter, layers, heads, kv, vocab, maxpos, dtype="float16", theta=10000.0, mt="llama", **extra):
    c = {"model_type": mt, "hidden_size": h, "intermediate_size": inter, "num_hidden_layers": layers,
         "num_attention_heads": heads, "num_key_value_heads": kv, "vocab_size": vocab,
         "max_position_embeddings": maxpos, "torch_dtype": dtype, "rope_theta": theta,
         "hidden_act": "silu", "rms_norm_eps": 1e-5, "tie_word_embeddings": False}
    c.update(extra)
    return c

MODELS = {
    "Llama-2-7B": "llama-2-7b",
    "Llama-2-13B": llama(5120, 13824, 40, 40, 40, 32000, 4096),
    "LLaMA2-13B": llama(5120, 13824, 40, 40, 40, 32000, 4096),
    "Llama-2-70B": llama(8192, 28672, 80, 64, 8, 32000, 4096),
    "LLaMA2-70B": llama(8192, 28672, 80, 64, 8, 32000, 4096, dtype="bfloat16"),
    "LLaMA3-8B": llama(4096, 14336, 32, 32, 8, 128256, 8192, dtype="bfloat16", theta=500000.0),
    "Llama-3-70B": llama(8192, 28672, 80, 64, 8, 128256, 8192, dtype="bfloat16", theta=500000.0),
    "LLaMA3-70B": llama(8192, 28672, 80, 64, 8, 128256, 8192, dtype="bfloat16", theta=500000.0),
    # Qwen (v1) has no config in the llama/qwen2 schema; its shapes written as the equivalent
    # llama-style decoder (intermediate_size in Qwen v1 counts both gate and up: 22016 / 2).
    "Qwen-7B": llama(4096, 11008, 32, 32, 32, 151936, 8192, dtype="bfloat16"),
    "Qwen-72B": llama(8192, 24576, 80, 64, 64, 152064, 32768, dtype="bfloat16"),
    "Qwen1.5-7B": llama(4096, 11008, 32, 32, 32, 151936, 32768, dtype="bfloat16", mt="qwen2", theta=1000000.0),
    "Qwen2-7B": llama(3584, 18944, 28, 28, 4, 152064, 32768, dtype="bfloat16", mt="qwen2", theta=1000000.0),
    "Qwen2-72B": llama(8192, 29568, 80, 64, 8, 152064, 32768, dtype="bfloat16", mt="qwen2", theta=1000000.0),
    "Qwen2.5-7B": "qwen2.5-7b",
    "Qwen2.5-32B": llama(5120, 27648, 64, 40, 8, 152064, 32768, dtype="bfloat16", mt="qwen2", theta=1000000.0),
    "Qwen3-32B": llama(5120, 25600, 64, 64, 8, 151936, 40960, dtype="bfloat16", mt="qwen3", theta=1000000.0, head_dim=128),
    "Qwen3-235B-A22B": llama(4096, 12288, 94, 64, 4, 151936, 40960, dtype="bfloat16", mt="qwen3_moe", theta=1000000.0,
                             head_dim=128, moe_intermediate_size=1536, num_experts=128, num_experts_per_tok=8,
                             decoder_sparse_step=1, norm_topk_prob=True),
    "Qwen2-57B-A14B": llama(3584, 18944, 28, 28, 4, 151936, 32768, dtype="bfloat16", mt="qwen2_moe", theta=1000000.0,
                            moe_intermediate_size=2560, shared_expert_intermediate_size=20480, num_experts=64,
                            num_experts_per_tok=8, decoder_sparse_step=1),
    "Mixtral-8x7B": "mixtral-8x7b",
    "Mistral-7B": llama(4096, 14336, 32, 32, 8, 32000, 32768, dtype="bfloat16", mt="mistral"),
    "Llama-3.1-8B": llama(4096, 14336, 32, 32, 8, 128256, 131072, dtype="bfloat16", theta=500000.0),
    "Llama-3.1-70B": llama(8192, 28672, 80, 64, 8, 128256, 131072, dtype="bfloat16", theta=500000.0),
    "Qwen2.5-0.5B": llama(896, 4864, 24, 14, 2, 151936, 32768, dtype="bfloat16", mt="qwen2", theta=1000000.0, tie_word_embeddings=True),
    "Qwen2.5-1.5B": llama(1536, 8960, 28, 12, 2, 151936, 32768, dtype="bfloat16", mt="qwen2", theta=1000000.0, tie_word_embeddings=True),
    "Qwen2.5-3B": llama(2048, 11008, 36, 16, 2, 151936, 32768, dtype="bfloat16", mt="qwen2", theta=1000000.0, tie_word_embeddings=True),
    "Qwen2.5-14B": llama(5120, 13824, 48, 40, 8, 152064, 32768, dtype="bfloat16", mt="qwen2", theta=1000000.0),
    "Qwen2.5-72B": llama(8192, 29568, 80, 64, 8, 152064, 32768, dtype="bfloat16", mt="qwen2", theta=1000000.0),
    "Qwen3-8B": llama(4096, 12288, 36, 32, 8, 151936, 40960, dtype="bfloat16", mt="qwen3", theta=1000000.0, head_dim=128),
    "Qwen3-14B": llama(5120, 17408, 40, 40, 8, 151936, 40960, dtype="bfloat16", mt="qwen3", theta=1000000.0, head_dim=128),
    "Qwen3-30B-A3B": llama(2048, 6144, 48, 32, 4, 151936, 40960, dtype="bfloat16", mt="qwen3_moe", theta=1000000.0,
                           head_dim=128, moe_intermediate_size=768, num_experts=128, num_experts_per_tok=8,
                           decoder_sparse_step=1, norm_topk_prob=True),
    "Baichuan2-13B": llama(5120, 13696, 40, 40, 40, 125696, 4096, dtype="bfloat16", mt="baichuan"),
    "ChatGLM3-6B": {"model_type": "chatglm", "num_layers": 28, "hidden_size": 4096, "ffn_hidden_size": 13696,
                    "num_attention_heads": 32, "multi_query_attention": True, "multi_query_group_num": 2,
                    "kv_channels": 128, "padded_vocab_size": 65024, "seq_length": 8192, "torch_dtype": "float16",
                    "layernorm_epsilon": 1e-5, "rmsnorm": True},
    "DeepSeek-V2-Lite": {"model_type": "deepseek_v2", "hidden_size": 2048, "intermediate_size": 10944,
                         "moe_intermediate_size": 1408, "num_hidden_layers": 27, "num_attention_heads": 16,
                         "num_key_value_heads": 16, "n_routed_experts": 64, "n_shared_experts": 2,
                         "num_experts_per_tok": 6, "first_k_dense_replace": 1, "moe_layer_freq": 1,
                         "kv_lora_rank": 512, "q_lora_rank": None, "qk_nope_head_dim": 128,
                         "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 102400,
                         "max_position_embeddings": 163840, "torch_dtype": "bfloat16"},
}


def norm(name):
    return re.sub(r"[^a-z0-9]", "", name.lower())


def model_for(name):
    """The config of a model named by the source (case, '-', '.', ' ' ignored; longest match)."""
    n = norm(name)
    for key in sorted(MODELS, key=lambda k: len(norm(k)), reverse=True):
        if n.startswith(norm(key)):
            return key, MODELS[key]
    return None, None


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------

UNITS = {"us": "us", "ms": "ms", "s": "s", "ms/token-step": "ms", "ms/step": "ms"}


def value(metric, v, unit, predict, **kw):
    out = {"metric": metric, "value": v, "unit": unit, "predict": predict}
    out.update(kw)
    return out


def skip(metric, v, unit_stated, why):
    return {"metric": metric, "value": v if isinstance(v, (int, float)) else None, "unit": unit_stated,
            "predict": None, "not_compared": why}


def fixed(**kw):
    return {k: {"fixed": v} for k, v in kw.items()}


def one_op_graph(name, op, dtype):
    return {"format": "tunelab-graph", "name": name, "family": "custom", "dtype": dtype,
            "ops": [{"name": name, "repeat": 1, "op": op}]}


# Tiling is on so the stage has its tiling parameters; the pinned (baseline) configuration is
# the device model's default tiling, i.e. what a framework kernel does without per-shape tuning.
OP_SCENARIO = {"operator": {"phase": "both", "tiling": True, "fusion": False, "epilogue_fusion": False,
                            "loop_unroll": False, "memory_reuse": False},
               "workload": {"batch": 1}}


def chip_of(stated, default="910B2"):
    s = stated.upper()
    for sku in ("910B1", "910B2", "910B3", "910B4"):
        if sku in s.replace(" ", "").replace("ASCEND", ""):
            return sku, "stated by the source"
    if "310P" in s:
        return "310P3", "310P stated; 310P3 is the bundled 310P profile"
    return default, "SKU not stated; compared against %s (as issue 8 does for unstated Atlas A2 rows)" % default


# ---------------------------------------------------------------------------------------------
# Per-category conversion
# ---------------------------------------------------------------------------------------------

def dtype_of(text, default="fp16"):
    t = str(text).lower()
    if "bf16" in t or "bfloat16" in t:
        return "bf16"
    if "int8" in t:
        return "int8"
    if "float32" in t or "fp32" in t:
        return "fp32"
    if "float16" in t or "fp16" in t:
        return "fp16"
    return default


DTYPE_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1}
TIME_UNITS = ("us", "ms", "s")


def op_of(st):
    """The operator a row's setup describes, by its content: (name, op, notes, weight, tuned)."""
    opn = str(st.get("operation", "")).lower()
    dt = dtype_of(st.get("dtype", ""))
    flat = opn.replace("-", "").replace(" ", "").replace("_", "")
    if "copy" in opn:
        # A device-to-device copy: one read and one write per element, no arithmetic. In the
        # operator vocabulary that is a gather of whole rows (in bytes = out bytes, 0 instr).
        n = st.get("elements") or int(st["source_tensor_MiB"] * 2 ** 20 / DTYPE_BYTES[dt])
        row_len = math.gcd(n, 4096)
        return "copy", {"op": "vector", "kind": "gather", "rows": n // row_len, "row_len": row_len, "dtype": dt}, None, 1.0, False
    if "allreduce" in flat or "allgather" in flat or "reducescatter" in flat:
        kind = "all_reduce" if "allreduce" in flat else ("all_gather" if "allgather" in flat else "reduce_scatter")
        dims = [int(x) for x in re.findall(r"\d+", str(st.get("tensor", "")).split("(")[0].split("~")[0])]
        tdt = dtype_of(st.get("tensor", ""), dt)
        nbytes = st.get("bytes") or (math.prod(dims[:2]) * DTYPE_BYTES[tdt] if len(dims) >= 2 else None)
        if not nbytes:
            return None, None, "collective without a tensor size", 1.0, False
        return kind, {"op": "comm", "kind": kind, "bytes": nbytes, "ranks": st["ranks"], "link": "hccs", "algorithm": "ring"}, None, 1.0, False
    if "attention" in opn:
        q = st.get("seq_len_q=kv") or st.get("S0(query)") or st.get("seq_len_q")
        kv = st.get("seq_len_q=kv") or st.get("S1(kv)") or st.get("seq_len_kv")
        heads = st.get("num_heads")
        note = None if heads else "head count not stated: one head assumed"
        heads = heads or 1
        batch = st.get("batch") or st.get("sequence_count(batch)") or 1
        causal = st.get("causal") is True
        op = {"op": "attention", "kind": "flash", "batch": batch, "heads": heads, "kv_heads": st.get("num_kv_heads", heads),
              "q_len": q, "kv_len": kv, "head_dim": st["head_dim"], "causal": causal, "dtype": dt}
        weight = 1.0
        if "host_cpu" in st:
            note = (note + " (host-timed, so launch costs are included)") if note else "host-timed, so launch costs are included"
            weight = 0.5
        return "flash_attention", op, note, weight, False
    if all(k in st for k in ("M", "N", "K")):
        op = {"op": "matmul", "batch": st.get("batch", 1), "m": st["M"], "n": st["N"], "k": st["K"], "dtype": dt}
        # A hand-written, hand-tiled kernel is compared with Tunelab's tuned tiling; a framework
        # call with the default tiling. FP32 on the cube may run as HF32: weighted down.
        tuned = "custom" in opn or "kernel" in opn
        weight = 0.5 if dt == "fp32" else 1.0
        return ("gemm" if tuned else "matmul"), op, None, weight, tuned
    return None, None, "no operator in Tunelab's vocabulary matches '%s'" % st.get("operation", ""), 1.0, False


def timing_of(st, key):
    """How the source timed the operator, from what its setup says: (timing, calls, note).

    - a kernel's compute-only time is device time ("device");
    - a loop of calls per timed sample ("inner_iterations" > 1, or a timer over inner
      iterations) is "back_to_back": per call the longer of host dispatch and kernel;
    - one framework call per sample (eager, inner_iterations 1, or timed from the host) is
      "single_call": host dispatch, then the kernel;
    - a hand-written kernel or collective timed on the device is "device".
    """
    if "compute_only" in key:
        return "device", None, None
    it = st.get("inner_iterations")
    timer = str(st.get("timer", "")).lower()
    if isinstance(it, int) and it > 1:
        return "back_to_back", it, None
    if "inner-iterations" in timer or "inner_iterations" in timer:
        return ("back_to_back", 20, "inner iterations per sample not stated: 20 assumed (the source's sample count); "
                "the copy is device-bound, so the amortised first launch (host time / calls) is about 1 us either way")
    opn = str(st.get("operation", "")).lower()
    if it == 1 or "host_cpu" in st or "eager" in str(st.get("mode", "")).lower():
        return "single_call", None, None
    if "torch" in opn:
        return "single_call", None, "timing method not stated: one framework call timed around it assumed"
    return "device", None, None


def primary_time(m):
    """The measured time a row is compared on: a x86-host timing, a median, else the first."""
    times = [k for k, v in m.items() if isinstance(v, dict) and v.get("unit") in TIME_UNITS and "pipelined" not in k]
    for pref in ("x86", "median", ""):
        for k in times:
            if pref in k:
                return k
    return None


def convert_op(r):
    st, m = r["setup"], r["measured"]
    row = {"stage": "operator", "scenario": OP_SCENARIO}
    name, op, note, weight, tuned = op_of(st)
    if op is None:
        row["cannot_express"] = note
        row["values"] = [skip(k, v.get("value"), v.get("unit"), "row not expressible") for k, v in m.items()]
        return row
    row["model"] = one_op_graph(name, op, op["dtype"] if "dtype" in op else "fp16")
    if tuned:
        row["scenario"] = {"operator": dict(OP_SCENARIO["operator"], tiling=True), "workload": {"batch": 1},
                           "strategy": {"name": "auto"}, "budget": 300, "seed": 1}
        row["predict_with"] = "tuned"
    if weight != 1.0:
        row["weight"] = weight
    if note:
        row["conversion_note"] = note
    key = primary_time(m)
    timing, calls, tnote = timing_of(st, key or "")
    # "N timed iterations, host timing": one timer around the N calls of the loop (the PTO-ISA
    # torch_jit flash demo's fa_benchmark.py time_npu: events around 50 back-to-back calls and a
    # sync, the total over 50), so a call costs the longer of its host dispatch and its kernel.
    loop = re.search(r"(\d+) timed iterations, host timing", str(r.get("software", "")))
    if loop and timing == "single_call":
        timing, calls = "back_to_back", int(loop.group(1))
        tnote = ("%s timed back to back under one host timer (the demo's fa_benchmark.py time_npu): per call the longer of "
                 "host dispatch and kernel" % loop.group(1))
    row["scenario"] = dict(row["scenario"], operator=dict(row["scenario"]["operator"], timing=timing))
    if calls:
        row["scenario"]["operator"]["calls"] = calls
    if tnote:
        row["conversion_note"] = (row["conversion_note"] + "; " + tnote) if "conversion_note" in row else tnote
    vals = []
    for k, v in m.items():
        if k == key:
            vals.append(value(k, v["value"], v["unit"], "model_time_ms"))
        elif "pipelined" in k:
            vals.append(skip(k, v["value"], v["unit"], "overlap of a GEMM with the all-reduce: a two-operator schedule, not one operator"))
        elif isinstance(v, dict) and v.get("unit") in TIME_UNITS:
            vals.append(skip(k, v["value"], v["unit"], "a second timing of the same kernel (another host); %s is compared" % key))
        else:
            vals.append(skip(k, v.get("value"), v.get("unit"), "derived from %s by the source; compared once, as time" % key))
    row["values"] = vals
    return row


def engine_of(r):
    """The serving engine a row's stated software and framework name (deployment.serving.engine;
    assets/constants/serving-host.json), or None when neither names one."""
    text = " ".join(str(x) for x in (r.get("software"), r["setup"].get("framework"))).lower()
    if "mindie" in text and "turbo" not in text:
        return "mindie"
    if "vllm" in text:
        return "vllm-ascend"
    if "torchair" in text:
        # The torchair ChatGLM port keeps Hugging Face's cache handling (its README: the fixed
        # KV cache is "not applicable" to ChatGLM; modeling_chatglm.py concatenates the cache and
        # expands the grouped heads every step): the `transformers` engine. The other torchair
        # ports (Llama, Qwen2) use the fixed cache: the `torchair` engine.
        if "chatglm" in str(r["setup"].get("model", "")).lower():
            return "transformers"
        return "torchair"
    return None


# Serving rows on an Atlas 800I A2 that name no SKU. The 800I A2 rows of the same set that do
# name one say 910B4 (torchair llama/README.md: "B4 device内存（约29G）"; the EvalScope post's
# npu-smi output: 910B4 x8, 32 GB), and the 32 GB 910B4 has 0.8 TiB/s of HBM (S2 in
# shared/ascend-devices.md), so they are compared against the 910B4 profile, except where the
# source's own numbers rule the 32 GB part out physically (listed with the reason).
SERVER_SKU = {"800I A2": "910B4"}
SOURCE_SKU = {
    "npu_tuned_model/llm/llama/reduce-overhead/README.md": (
        "910B2", "Atlas 800I A2 without a SKU, but not a 32 GB 910B4: its graph decode step of 14.2 ms reads Llama-2-7B's "
                 "13.5 GB of fp16 weights at >= 950 GB/s, above that part's 880 GB/s HBM peak (S2); compared against the "
                 "64 GB-class 910B2 profile (S2: 1.6 TiB/s for the 64 GB parts)"),
}


def serving_chip(r):
    """(chip, note) for a serving row whose source names no SKU but names the server, else None."""
    if chip_of(r["chip"])[1] == "stated by the source":
        return None
    for path, (sku, note) in SOURCE_SKU.items():
        if r["source"].endswith(path):
            return sku, note
    for server, sku in SERVER_SKU.items():
        if server in r["chip"]:
            return sku, ("SKU not stated; Atlas %s: the set's %s rows that name the SKU say %s (torchair llama README "
                         "'B4 device内存（约29G）', npu-smi in the EvalScope post)" % (server, server, sku))
    return None


def convert_serving(r):
    st, m = r["setup"], r["measured"]
    rid = r["id"]
    name = st.get("model", "")
    key, model = model_for(name)
    row = {"stage": "deployment"}
    sku = serving_chip(r)
    if sku is not None:
        row["chip"], row["chip_note"] = sku
    if "VL" in name or "310P" in r["chip"]:
        row["cannot_express"] = serving_reason(r)
        row["values"] = [skip(k, v.get("value"), v.get("unit"), "row not expressible") for k, v in m.items()]
        return row
    if model is None:
        row["cannot_express"] = "model '%s' has no config in the converter" % name
        row["values"] = [skip(k, v.get("value"), v.get("unit"), "row not expressible") for k, v in m.items()]
        return row
    row["model"] = model
    tp = st.get("tensor_parallel", 1)
    tp = tp if isinstance(tp, int) else int(str(tp).split()[0])
    dtype = st.get("dtype", "float16")
    prec = "bf16" if "bf" in dtype else "fp16"
    # Static-batch rows (torchair examples): prefill of the padded batch, then decode steps.
    static = any(k.split("(")[0].endswith(("prefill", "decode", "prefill_latency", "decode_step_latency")) or k.startswith(("prefill", "decode")) for k in m)
    if "batch_size" in st and static:
        batch = st["batch_size"]
        digits = re.findall(r"\d+", str(st.get("input_len", "1024")))
        inp = int(digits[0]) if digits else 1024
        out = int(st.get("max_new_tokens", 1024))
        # Static mode: a padded batch, one prefill then decode steps (what the torchair example
        # scripts time), not a request stream.
        base = {"workload": {"batch": batch, "input_len": inp, "output_len": out},
                "deployment": {"tile_operators": False, "serving": with_engine({"mode": "static"}, r)}}
        # Several configurations measured side by side ("eager_prefill", "maxautotune_decode",
        # "a8w8c8_prefill", ...): one variant per prefix, named by what it pins.
        prefixes = []
        for k in m:
            if "_" in k and k.rsplit("_", 1)[1] in ("prefill", "decode", "memory") and not k.startswith(("prefill", "decode")):
                p = k.rsplit("_", 1)[0]
                if p not in prefixes:
                    prefixes.append(p)
        if prefixes:
            row["scenario"] = base
            row["variants"], skipped, notes = [], [], []
            for p in prefixes:
                launch = "eager" if p == "eager" else "graph"
                precision = "w8a8" if p.startswith(("a8w8", "w8a8")) else ("fp16" if p == "fp16" else prec)
                if p == "reduce_overhead":
                    for k in (k for k in m if k.startswith(p + "_")):
                        skipped.append(skip(k, m[k]["value"], m[k]["unit"],
                                            "torch.compile reduce-overhead (NPU graph capture without torchair fusions) is neither launch mode Tunelab models"))
                    continue
                vals = []
                for kind, metric in (("prefill", "ttft_ms"), ("decode", "tpot_ms")):
                    k = p + "_" + kind
                    if k in m:
                        vals.append(value(k, m[k]["value"], "ms", metric))
                suffix = {"maxautotune": "graph"}.get(p, "w8a8" if precision == "w8a8" else p)
                var = {"suffix": suffix, "space": fixed(batch=batch, precision=precision, tp=tp, launch=launch), "values": vals}
                if p.startswith("a8w8c8"):
                    var["conversion_note"] = "A8W8 modelled; the INT8 KV cache (C8) is not"
                row["variants"].append(var)
            for k, v in m.items():
                if k.endswith("memory") or k.startswith("memory"):
                    skipped.append(skip(k, v["value"], v["unit"], "framework memory incl. caching-allocator reserve; not compared"))
            row["values"] = skipped
            return row
        base["space"] = fixed(batch=batch, precision=prec, tp=tp, launch="graph")
        row["scenario"] = base
        vals = []
        for k, v in m.items():
            if k.startswith("prefill"):
                vals.append(dict(value(k, v["value"], "ms", "ttft_ms"), unit_stated=v["unit"]))
            elif k.startswith("decode"):
                vals.append(dict(value(k, v["value"], "ms", "tpot_ms"), unit_stated=v["unit"]))
        row["values"] = vals
        return row
    if st.get("concurrency") == 1 and "avg_input_tokens" in st:
        # One client: each request decodes alone, so TPOT is a batch-1 decode step at the
        # request's mean context (vLLM-Ascend here runs torchair graphs: pa_shape_list).
        row["scenario"] = {"workload": {"batch": 1, "input_len": st["avg_input_tokens"], "output_len": st["avg_output_tokens"]},
                           "deployment": {"tile_operators": False, "serving": with_engine({"mode": "static"}, r)},
                           "space": fixed(batch=1, precision=prec, tp=tp, launch="graph")}
        row["values"] = [value("TPOT", m["TPOT"]["value"], "ms", "tpot_ms"),
                         skip("output_throughput", m["output_throughput"]["value"], m["output_throughput"]["unit"],
                              "1 / TPOT plus prefill gaps; TPOT is compared")]
        row["conversion_note"] = "concurrency 1 expressed as a static batch of 1 at the mean lengths"
        return row
    # Continuous-batching rows (vLLM-Ascend, MindIE) at a fixed client concurrency: the
    # deployment stage's scheduler with a closed loop of that many clients.
    if "concurrency" in st and "avg_input_tokens" in st and "avg_output_tokens" in st:
        conc = st["concurrency"]
        max_seqs = st.get("maxBatchSize", 256)
        serving = with_engine({"mode": "scheduler", "arrival": "closed", "concurrency": conc,
                               "requests": st.get("requests", 100)}, r)
        pins = fixed(batch=max_seqs, precision=prec, tp=tp, launch="graph")
        if "max_num_batched_tokens" in st:
            pins["max_num_batched_tokens"] = {"fixed": st["max_num_batched_tokens"]}
        row["scenario"] = {"workload": {"batch": max_seqs, "input_len": int(round(st["avg_input_tokens"])),
                                        "output_len": int(round(st["avg_output_tokens"]))},
                           "deployment": {"tile_operators": False, "serving": serving}, "space": pins}
        vals = []
        for k, v in m.items():
            metric = serving_metric(k)
            if metric is None:
                vals.append(skip(k, v["value"], v["unit"], "no deployment-stage metric corresponds to '%s'" % k))
            elif metric == "tokens_per_s":
                vals.append(dict(value(k, v["value"], "tokens/s", metric), unit_stated=v["unit"]))
            else:
                vals.append(value(k, v["value"], TIME_UNIT.get(v["unit"], "ms"), metric))
        row["values"] = vals
        row["conversion_note"] = ("closed loop of %d clients, max_num_seqs %d, lengths uniform +-50%% around the "
                                  "dataset means (the stage default; the datasets' spread is not stated); "
                                  "a latency the source does not qualify is compared with the mean (benchmark tools print means first)" % (conc, max_seqs))
        return row
    row["scenario"] = {"deployment": {"tile_operators": False}}
    row["cannot_express"] = serving_reason(r)
    row["values"] = [skip(k, v.get("value"), v.get("unit"), "row not expressible") for k, v in m.items()]
    return row


TIME_UNIT = {"ms": "ms", "s": "s", "us": "us"}


def serving_metric(key):
    """The deployment-stage metric a serving row's value is compared with: TTFT, TPOT, ITL and
    end-to-end latency by the statistic the source names (mean, median/p50, p90, p99; a latency
    it does not qualify is a mean, as vLLM's, SGLang's and AISBench's tools print means first),
    output throughput as tokens per second. None: nothing corresponds."""
    k = key.lower()
    if "throughput" in k and "output" in k:
        return "tokens_per_s"
    for name, metric in (("ttft", "ttft"), ("tpot", "tpot"), ("itl", "itl"), ("request_latency", "e2e"), ("e2e", "e2e")):
        if name in k:
            for stat, suffix in (("median", "p50"), ("p50", "p50"), ("p90", "p90"), ("p99", "p99")):
                if stat in k:
                    if metric == "itl" or suffix != "p90":
                        return "%s_%s_ms" % (metric, suffix)
                    return None
            return "%s_mean_ms" % metric
    return None


def with_engine(serving, r):
    """`serving` with the row's engine set (left at the default when the row names none), and
    HCCL's AIV expansion when the row's environment sets it."""
    e = engine_of(r)
    if e is not None:
        serving = dict(serving, engine=e)
    return with_hccl_expansion(serving, r)


def with_hccl_expansion(serving, r):
    """`serving` with deployment.serving.hccl_expansion "aiv" when the row's software or setup
    sets HCCL_OP_EXPANSION_MODE=AIV (the vector cores build each collective, all peers at once)."""
    if "HCCL_OP_EXPANSION_MODE=AIV" in json.dumps([r.get("software"), r.get("setup")]):
        serving = dict(serving, hccl_expansion="aiv")
    return serving


def serving_reason(r):
    st = r["setup"]
    # The deployment stage serves image requests (deployment.serving.image_size: the vision
    # tower per new request, the image tokens in the prompt), so what keeps these rows out is
    # what their sources leave unstated, named here.
    if "310P" in r["chip"]:
        return ("the launch is not stated (one or both 310P chips of the Duo card, graph or eager, how many requests), "
                "the model's config is not bundled (Qwen2.5-VL-3B), and both values are approximate ('左右')")
    if "VL" in st.get("model", ""):
        return ("the image size is not stated: vision-arena-bench images reach Qwen2.5-VL's processor at their own "
                "resolutions (up to max_pixels), so the image tokens per request, which set each prefill and the "
                "vision tower's work, are unknown")
    return ("the output length is not stated, and TTFT and decode rate under a closed loop depend on it")


# Settings read from the example pretraining script each row names as its source (the shared
# setup lists the parallel layout but not these flags). Megatron's defaults apply where a script
# does not pass a flag (--overlap-grad-reduce off), except gradient-accumulation fusion:
# ModelLink / MindSpeed-LLM's example pretraining scripts pass --no-gradient-accumulation-fusion
# (Megatron's fused wgrad-into-main_grad kernel, fused_weight_gradient_mlp_cuda, has no torch_npu
# build in those releases). Read in aeeeeeep/ModelLink's examples/mcore/qwen2/pretrain_qwen2_7b_4k_ptd.sh,
# pretrain_qwen2_72b_4K_ptd.sh, examples/llama3/pretrain_llama3_8b_ptd.sh, examples/qwen/pretrain_qwen_7b_ptd.sh
# and the two MoE scripts below, so it is the default for every MindSpeed-LLM row (MINDSPEED_LLM_FLAGS).
MINDSPEED_LLM_FLAGS = {"gradient_accumulation_fusion": False}
SCRIPT_FLAGS = {
    # examples/mcore/qwen2/pretrain_qwen2_7b_4k_ptd.sh and pretrain_qwen2_72b_4K_ptd.sh:
    # --use-distributed-optimizer --overlap-grad-reduce, --no-gradient-accumulation-fusion.
    "trn-qwen2-7b-4k-1x8": {"overlap_grad_reduce": True},
    "trn-qwen2-72b-4k-4x8": {"overlap_grad_reduce": True},
    # examples/mcore/qwen2_moe/pretrain_qwen2_57b_a14b_4K_ptd.sh: --moe-token-dispatcher-type
    # allgather, --moe-grouped-gemm, --no-gradient-accumulation-fusion, no --overlap-grad-reduce,
    # --context-parallel-algo ulysses_cp_algo.
    "trn-qwen2-57b-a14b-4k-8x8": {"moe_token_dispatcher": "allgather", "moe_grouped_gemm": True,
                                  "gradient_accumulation_fusion": False, "overlap_grad_reduce": False,
                                  "context_parallel_algo": "ulysses"},
    # examples/mcore/mixtral/pretrain_mixtral_8x7b_ptd.sh: no dispatcher flag (Megatron's default,
    # allgather), no --moe-grouped-gemm, --overlap-grad-reduce and --overlap-param-gather,
    # --context-parallel-algo megatron_cp_algo (ring).
    "trn-mixtral-8x7b-32k-8x8": {"moe_token_dispatcher": "allgather", "moe_grouped_gemm": False,
                                 "overlap_grad_reduce": True, "overlap_param_gather": True,
                                 "context_parallel_algo": "ring"},
    # examples/mcore/deepseek2_lite/pretrain_deepseek2_lite_16b_ptd_8p.sh: --moe-token-dispatcher-type
    # allgather, no --moe-grouped-gemm, --no-gradient-accumulation-fusion, no --overlap-grad-reduce,
    # --moe-permutation-async-comm.
    "trn-deepseek-v2-lite-8k-1x8": {"moe_token_dispatcher": "allgather", "moe_grouped_gemm": False,
                                    "gradient_accumulation_fusion": False, "overlap_grad_reduce": False,
                                    "moe_permutation_async_comm": True},
    # examples/qwen/pretrain_qwen_7b_ptd.sh and pretrain_qwen_72b_ptd.sh (the aeeeeeep/ModelLink
    # mirror the rows cite): --use-fused-rmsnorm but neither --use-fused-rotary-pos-emb nor
    # --use-fused-swiglu (Megatron's own rotary and glu run). Every other MindSpeed row's script
    # passes the fusion flags its model uses (read in the same mirror, or MindSpeed-LLM /
    # zzhx1/Hetaceso-ModelLink where the mirror lacks it).
    "trn-qwen-7b-8k-1x8": {"unfused_kernels": ["rotary", "swiglu"]},
    "trn-qwen-72b-8k-16x8": {"unfused_kernels": ["rotary", "swiglu"]},
}


# Parallel settings the example script a row cites passes but the row's setup does not state.
# examples/mcore/qwen25/pretrain_qwen25_7b_32K_ptd.sh (TP=4, PP=2, SEQ_LEN=32768, as the row):
# --sequence-parallel, no --recompute-* flag (read in the zzhx1/Hetaceso-ModelLink mirror of
# ModelLink, the script the row's note names).
SCRIPT_SETUP = {
    "trn-qwen2.5-7b-32k-1x8": {"sequence_parallel": True},
    # examples/mcore/llama3/pretrain_llama3_70b_ptd.sh and examples/mcore/qwen25/
    # pretrain_qwen25_32b_32k_ptd.sh pass --num-layer-list: the layers of each pipeline stage.
    "trn-llama3-70b-8k-8x8": {"num_layer_list": [17, 20, 22, 21]},
    "trn-qwen2.5-32b-32k-4x8": {"num_layer_list": [11, 13, 19, 21]},
}


def convert_training(r):
    st, m = dict(r["setup"], **SCRIPT_SETUP.get(r["id"], {})), r["measured"]
    name = st.get("model", "")
    key, model = model_for(name)
    row = {"stage": "training"}
    if model is None:
        row["cannot_express"] = "model '%s' is not a transformer decoder with a config (diffusion fine-tune under DeepSpeed)" % name
        row["values"] = [skip(k, v.get("value"), v.get("unit"), "row not expressible") for k, v in m.items()]
        return row
    row["model"] = model
    cluster = str(st.get("cluster", "1x8"))
    nodes = st.get("script_NNODES")
    if nodes is None:
        nodes = int(cluster.split("x")[0])
    chips = int(nodes) * 8
    tp, pp = st.get("TP", 1), st.get("PP", 1)
    cp = st.get("CP", 1)
    dp = chips // (tp * pp * cp)
    space = fixed(tp=tp, pp=pp, dp=dp, micro_batch=st["micro_batch"], precision="bf16",
                  sequence_parallel="on" if st.get("sequence_parallel") else "off",
                  optimizer_sharding="distributed_optimizer" if st.get("distributed_optimizer") else "zero0")
    # Recompute is pinned only when the source states it; otherwise the stage's default applies.
    if "recompute" in st:
        space["recompute"] = {"fixed": "full" if str(st["recompute"]).startswith("full") else "selective"}
    if cp > 1:
        space["cp"] = {"fixed": cp}
    if st.get("EP", 1) > 1:
        space["ep"] = {"fixed": st["EP"]}
    if "VPP_layers_per_stage" in st:
        # Virtual stages per pipeline stage: layers / (pp x layers per virtual stage).
        layers = model.get("num_hidden_layers", 0) if isinstance(model, dict) else 0
        space["vpp"] = {"fixed": layers // (pp * st["VPP_layers_per_stage"])}
    row["scenario"] = {"workload": {"micro_batch": st["micro_batch"], "seq_len": st["seq_len"], "global_batch": st["global_batch"]},
                       "training": {"chips": chips}, "space": space}
    flags = SCRIPT_FLAGS.get(r["id"])
    if r.get("framework") == "MindSpeed-LLM" or "ModelLink" in r.get("source", "") or "MindSpeed-LLM" in r.get("source", ""):
        row["scenario"]["training"].update(MINDSPEED_LLM_FLAGS)
    if flags:
        row["scenario"]["training"].update(flags)
    notes = []
    if st.get("script_NNODES") is not None:
        notes.append("chips from the launch script's NNODES (%d nodes x 8)" % nodes)
    if "sequence_parallel" in SCRIPT_SETUP.get(r["id"], {}):
        notes.append("sequence parallelism on as the example script passes it (--sequence-parallel); the row's setup does not state it")
    if "num_layer_list" in st:
        row["scenario"]["training"]["pipeline_layers"] = st["num_layer_list"]
        notes.append("layers per pipeline stage %s as the example script passes them (--num-layer-list); the row's setup does not state them" % ",".join(map(str, st["num_layer_list"])))
    if flags:
        notes.append("Megatron flags (MoE dispatcher, grouped matmul, gradient-accumulation fusion, gradient/parameter overlap, context-parallel algorithm, fused kernels) as the example script passes them (Megatron defaults where it passes nothing)")
    if notes:
        row["conversion_note"] = "; ".join(notes)
    vals = []
    for k, v in m.items():
        if k == "throughput":
            vals.append(value(k, v["value"], "tokens/s/NPU", "tokens_per_s", per_chip=True))
        elif k == "step_time":
            vals.append(skip(k, v["value"], v["unit"], "same measurement as throughput (tokens/s/NPU); compared once"))
        else:
            vals.append(skip(k, v.get("value"), v.get("unit"), "derived figure; throughput is compared"))
    row["values"] = vals
    # MindSpeed's newest release is preferred; older releases of the same config weigh less.
    if r["id"].endswith("feb24") or r["id"].endswith("sep24") and "llama2-13b" in r["id"]:
        row["weight"] = 0.5
    return row


# ---------------------------------------------------------------------------------------------
# Diffusion pipelines and diffusion / multimodal fine-tuning (set 2; the diffusion stage and the
# training stage's frozen components and LoRA). One source row can hold two chips (a Duo card
# and an A2 card in one table): it becomes one output row per chip, ids suffixed by the chip.
# ---------------------------------------------------------------------------------------------

# Chips of the diffusion tables: the Atlas 300I Duo card is two 310P3 chips ('parallel' = both);
# the Atlas 300I A2 card is a 910B4 (32 GB); an Atlas 800I A2 stated with 64 GB is a 64 GB-class
# part, compared against 910B2 (S2: 1.6 TiB/s for the 64 GB parts); the Atlas 900 A2 PODc (a
# training pod, SKU not stated) against 910B2 as issue 8 does.
DUO = ("310P3", "Atlas 300I Duo: two 310P3 chips on one card; 'parallel' runs on both")
A2_CARD = ("910B4", "Atlas 300I A2 inference card, a 910B4: the same README family's A2 script compiles for it (ModelZoo-PyTorch@051dfd64 "
           "AscendIE/TorchAIE/built-in/foundation/stable_diffusion/stable_diffusion_pipeline.py: torch_aie.compile(..., soc_version=\"Ascend910B4\")); "
           "the FA_soc parameter's 'A2'")
A2_64 = ("910B2", "Atlas 800I A2 with 64 GB per NPU: a 64 GB-class 910B part, compared against 910B2")


def diffusion_row(r, suffix, chip, model, opts, pins, values, variants=None, note=None):
    row = {"id": r["id"] + suffix, "stage": "diffusion", "model": model, "chip": chip[0], "chip_note": chip[1],
           "scenario": {"diffusion": opts, "space": fixed(**pins)}, "values": values}
    if variants:
        row["variants"] = variants
    if note:
        row["conversion_note"] = note
    return row


def convert_diffusion(r):
    """Rows of the diffusion category: a pipeline, its size, steps, chips and the optimisations the
    source lists, pinned; latency per image (or video) or steps per second compared."""
    m, rid = r["measured"], r["id"]
    per_image = lambda k, unit="s": value(k, m[k]["value"], unit, "latency_ms")
    compiled = {"launch": "graph", "vae_launch": "graph"}
    if rid == "dif-sd2.1-300iduo-parallel-50steps":
        return [diffusion_row(r, "", DUO, "sd2.1-base", {"steps": 50, "chips": 2, "framework": "ascendie"},
                              dict(compiled, precision="w8a8", attention="flash", tome=0.5, cfg_parallel="on"),
                              [per_image("avg_latency")],
                              note="'ToMe x4' read as tomesd's default merge ratio 0.5 at the highest-resolution attention (the ratio is not stated); 'parallel' as the two CFG branches on the two chips")]
    if rid == "dif-sd2.1-20steps-300iduo-vs-300IA2":
        # The README's table at this commit (ModelZoo-PyTorch@1968ede7) names no optimisation:
        # its FA and ToMe plugins are optional ("FA和TOME算子需通过安装推理引擎包获取，如未安装推理引擎，
        # FA_soc和TOME_num参数请使用默认配置", the defaults being None and 0), and the later table of
        # the same README (c753a525, dif-sd2.1-300iduo-parallel-50steps) adds a column to say which
        # were on. Read as the plain OM pipeline (modify_onnx.py's defaults). Evidence beyond the
        # wording: the two Duo tables of this README differ 0.64x per step (59 -> 38 ms, 20 vs 50
        # steps); the model prices fp16 plain -> W8A8+FA+ToMe at 0.51x, but fp16 FA+ToMe -> the
        # same at 0.87x, i.e. the plain reading is the one the later table agrees with.
        pins = dict(compiled, precision="fp16", attention="unfused", tome=0.0)
        note = ("read as the plain OM pipeline: the table names no optimisation and the FA/ToMe plugins are optional at this commit (README: without the "
                "inference-engine package use FA_soc None, TOME_num 0); the later table of the same README names them in its own column (the example command's FA_soc Duo/A2 and TOME_num 5 are not pinned)")
        return [diffusion_row(r, "-duo", DUO, "sd2.1-base", {"steps": 20, "chips": 2, "framework": "ascendie"},
                              dict(pins, cfg_parallel="on"), [per_image("latency_300IDuo_parallel")], note=note),
                diffusion_row(r, "-300IA2", A2_CARD, "sd2.1-base", {"steps": 20, "chips": 1, "framework": "ascendie"},
                              pins, [per_image("latency_300IA2")], note=note)]
    if rid == "dif-sd1.5-torchaie-50steps":
        # TorchAIE traces diffusers after cross_attention.patch (ModelZoo-PyTorch@051dfd64
        # AscendIE/TorchAIE/built-in/foundation/stable_diffusion/), which replaces the SDPA
        # processor (AttnProcessor2_0) by CrossAttnProcessor: baddbmm, softmax, bmm. The compiled
        # UNet therefore runs its attention unfused on both chips (no FA plugin in this pipeline).
        attn = "attention unfused: cross_attention.patch forces diffusers' CrossAttnProcessor (baddbmm, softmax, bmm) before torch.jit.trace, so torch_aie.compile sees no fused attention"
        return [diffusion_row(r, "-duo", DUO, "sd1.5", {"steps": 50, "chips": 2, "framework": "ascendie"},
                              dict(compiled, precision="fp16", attention="unfused", cfg_parallel="on"), [per_image("latency_Duo_parallel")],
                              note=attn + "; compiled for soc_version Ascend310P3 (stable_diffusion_paralle_pipeline.py), the CFG branches on the card's two chips"),
                diffusion_row(r, "-A2", A2_CARD, "sd1.5", {"steps": 50, "chips": 1, "framework": "ascendie"},
                              dict(compiled, precision="fp16", attention="unfused"), [per_image("latency_A2")],
                              note=attn + "; unet_bs2: the two CFG branches as batch 2 on one device")]
    if rid == "dif-sdxl-900A2PODc-1card-1024-28steps":
        # The README's single-card "文生图全参" row is run with sdxl/sdxl_text2img_infer.py (the
        # README's inference list; MindSpeed-MM@37ccda36): torch_dtype=torch.float32, a negative
        # prompt and the pipeline's default guidance_scale 5.0, so classifier-free guidance runs
        # the UNet at batch 2; num_inference_steps is not set (50). The 28 steps and guidance 1.0
        # of the row id are sdxl_text2img_distrib_infer.py's, the accelerate multi-card script.
        return [diffusion_row(r, "", ("910B2", chip_of(r["chip"])[1]), "sdxl",
                              {"steps": 50, "height": 1024, "width": 1024, "cfg": True, "chips": 1, "framework": "diffusers"},
                              {"precision": "fp32"}, [value("e2e_speed", m["e2e_speed"]["value"], "steps/s", "step_ms")],
                              note="the single-card row runs sdxl_text2img_infer.py (the README's inference list): fp32 as it loads the pipeline (torch.float32; the README table says fp16, but the GPU row of the same table, 1.55 it/s, matches fp32 too), a negative prompt with the default guidance 5.0, so CFG doubles the UNet batch; steps not set (50; the it/s is per step either way). The id's 28 steps and guidance 1.0 are the multi-card distrib script's")]
    if rid == "dif-wan2.1-t2v-14b-800IA2-1card":
        base = {"steps": 50, "height": 480, "width": 832, "frames": 81, "chips": 1, "framework": "mindie_sd"}
        variants = [{"suffix": k.replace("cache_ratio_", "cache"), "space": fixed(step_cache=float(k.split("_")[-1])),
                     "values": [per_image(k)]} for k in ("cache_ratio_1.6", "cache_ratio_2.0", "cache_ratio_2.4")]
        variants.insert(0, {"suffix": "baseline", "space": fixed(step_cache=1.0), "values": [per_image("baseline")]})
        return [diffusion_row(r, "", A2_64, "wan2.1-t2v-14b", base, dict(compiled, precision="bf16", attention="flash"), [],
                              variants=variants, note="frames: the model default (81) as the source states none")]
    if rid == "dif-wan2.1-t2v-14b-800IA2-8cards":
        base = {"steps": 50, "height": 480, "width": 832, "frames": 81, "chips": 8, "framework": "mindie_sd"}
        pins = dict(compiled, precision="bf16", attention="flash", step_cache=1.6, vae="parallel")
        variants = [{"suffix": "ulysses8", "space": fixed(sp=8, cfg_parallel="off"), "values": [per_image("ulysses8")]},
                    {"suffix": "cfg2_ulysses4", "space": fixed(sp=4, cfg_parallel="on"), "values": [per_image("cfg2_ulysses4")]}]
        return [diffusion_row(r, "", A2_64, "wan2.1-t2v-14b", base, pins,
                              [skip("tp8", m["tp8"]["value"], "s", "tensor parallelism of a DiT is not modelled (Ulysses and ring are)"),
                               skip("cfg2_tp4", m["cfg2_tp4"]["value"], "s", "tensor parallelism of a DiT is not modelled")],
                              variants=variants,
                              note="AttentionCache at ratio 1.6: the source's quoted speedups imply a ~561 s single-card reference with cache and sparsity, which its 1.6 row (631.7 s) is closest to; RainFusion sparsity is not modelled")]
    return [{"id": rid, "stage": "diffusion", "cannot_express": "no conversion for this diffusion row",
             "values": [skip(k, v.get("value"), v.get("unit"), "row not expressible") for k, v in m.items()]}]


def finetune_row(r, suffix, model, chips, micro, seq, training, pins, values, note):
    space = fixed(tp=1, pp=1, dp=chips, micro_batch=micro, **pins)
    t = {"chips": chips}
    t.update(training)
    return {"id": r["id"] + suffix, "stage": "training", "model": model,
            "scenario": {"workload": {"micro_batch": micro, "seq_len": seq, "global_batch": micro * chips}, "training": t, "space": space},
            "values": values, "conversion_note": note}


def convert_finetune(r):
    """Fine-tuning rows: LLaVA with frozen parts (tokens/s per NPU at the samples' mean length)
    and diffusion training (images/s of the job) under DeepSpeed ZeRO."""
    m, rid = r["measured"], r["id"]
    per_npu = lambda k: value(k, m[k]["value"], "tokens/s/NPU", "tokens_per_s", per_chip=True)
    images = lambda k: value(k, m[k]["value"], "samples/s", "samples_per_s")
    if rid == "trn-flagperf-llava1.5-7b-pretrain-8x800TA2":
        return [finetune_row(r, "", "llava-1.5-7b", 8, 32, 2048, {"frozen": ["vision", "llm"], "mean_seq_len": 640},
                             dict(precision="bf16", optimizer_sharding="zero2", recompute="full"),
                             [per_npu("throughput"), skip("MFU", m["MFU"]["value"], "%", "derived from throughput"), skip("memory", m["memory"]["value"], "GiB", "memory is not compared")],
                             "projector-only pretrain: vision tower and LLM frozen; gradient checkpointing of every LLM layer (FlagPerf's scripts/pretrain.sh passes --gradient_checkpointing True: the frozen layers' forward reruns in the backward that carries the projector's gradient); mean sample 640 tokens = 576 image tokens + 64 text (assumption: a BLIP caption plus the prompt template of LCS-558K; the source gives only the 2048 maximum). FlagPerf's tokens are the LLM's tokens: its MFU, 15.47%, is 2 N x 3448 tokens/s over a ~330 TFLOPS peak")]
    if rid == "trn-flagperf-llava1.5-7b-finetune-8x800TA2":
        return [finetune_row(r, "", "llava-1.5-7b", 8, 16, 2048, {"frozen": ["vision"], "mean_seq_len": 1024},
                             dict(precision="bf16", optimizer_sharding="zero3", recompute="full"),
                             [per_npu("throughput"), skip("MFU", m["MFU"]["value"], "%", "derived from throughput")],
                             "instruction finetune: vision tower frozen (LLaVA-1.5 recipe); gradient checkpointing of every LLM layer (FlagPerf's scripts/finetune.sh passes --gradient_checkpointing True); mean sample 1024 tokens = 576 image + 448 text (assumption for llava_v1_5_mix665k; the source gives only the 2048 maximum); its MFU, 26.54%, is 6 N x 2182 tokens/s over a ~330 TFLOPS peak")]
    if rid == "trn-mindspeedmm-sdxl-train-bf16-8p":
        return [finetune_row(r, "", "sdxl", 8, 4, 1, {"resolution": 1024, "precomputed": ["text_encoders", "vae"]},
                             dict(precision="bf16", optimizer_sharding="zero2", recompute="full"),
                             [images("throughput_train_bf16"), skip("throughput_train_fp16", m["throughput_train_fp16"]["value"], "images/s", "fp16 AMP of the same run; bf16 compared"),
                              skip("throughput_pretrain_bf16", m["throughput_pretrain_bf16"]["value"], "images/s", "'pretrain' stage setup not stated"),
                              skip("throughput_pretrain_fp16", m["throughput_pretrain_fp16"]["value"], "images/s", "'pretrain' stage setup not stated")],
                             "diffusers train_text_to_image_sdxl: prompt embeddings and VAE latents computed once before training; DeepSpeed ZeRO-2 and gradient checkpointing assumed (the script's DeepSpeed config is not in the row)")]
    if rid == "trn-mindspeedmm-sd3.5-dreambooth-8p":
        # The example scripts of the same directory (MindSpeed-MM@37ccda36, examples/diffusers/sd3/
        # finetune_sd3_dreambooth_deepspeed_bf16.sh and finetune_sd3_dreambooth_lora_deepspeed_fp16.sh)
        # set model_name=stabilityai/stable-diffusion-3.5-large, batch 8, resolution 512, and
        # accelerate configs with DeepSpeed zero_stage 2. At 512 px (1024 image + 333 text tokens)
        # Large is ~8 TFLOP per image forward, so 26 images/s on 8 chips is ~30% of peak with
        # recomputation: plausible (an earlier note assumed Medium, reckoning at 1024 px).
        note = ("SD3.5 Large, as the directory's example scripts set model_name (MindSpeed-MM@37ccda36 examples/diffusers/sd3/finetune_sd3_dreambooth_*deepspeed*.sh; "
                "the README row's commit may differ); DeepSpeed ZeRO-2 from their accelerate configs")
        return [finetune_row(r, "-full", "sd3.5-large", 8, 8, 1, {"resolution": 512, "precomputed": ["text_encoders"]},
                             dict(precision="bf16", optimizer_sharding="zero2", recompute="full"), [images("throughput_full_512")],
                             note + "; full DreamBooth: --gradient_checkpointing; the fixed instance prompt is encoded once, the VAE encodes each step"),
                finetune_row(r, "-lora", "sd3.5-large", 8, 8, 1, {"resolution": 512, "precomputed": [], "lora_rank": 4},
                             dict(precision="fp16", optimizer_sharding="zero2", recompute="none"), [images("throughput_lora_512_fp16")],
                             note + "; LoRA script: no --gradient_checkpointing, a captioned dataset (--caption_column), so the three text encoders and the VAE run every step; LoRA rank 4 on the attention projections (diffusers train_dreambooth_lora_sd3 default)")]
    return [{"stage": "training", "cannot_express": "no conversion for this fine-tuning row",
             "values": [skip(k, v.get("value"), v.get("unit"), "row not expressible") for k, v in m.items()]}]


def is_finetune(r):
    """A training row of set 2 that the fine-tuning additions express (diffusion or multimodal)."""
    return r["category"] == "training" and r["id"].startswith(("trn-flagperf-llava", "trn-mindspeedmm-"))
# The second set's serving rows (ascend-measurements-2.json): speculative decoding, W4A4/W8A8,
# hybrid linear attention, ShareGPT lengths, encoders. One function per source family; the
# scenario each row becomes uses only the stage's own settings (docs/serving.md).
# ---------------------------------------------------------------------------------------------

SET2_MODELS = {
    "Qwen3-32B": "qwen3-32b",
    "Qwen3.5-2B": "qwen3.5-2b",
    "Qwen3.5-9B": "qwen3.5-9b",
    "microsoft/Phi-4-mini-instruct": "phi-4-mini-instruct",
    "BAAI/bge-large-zh-v1.5": "bge-large-zh-v1.5",
}

# Rows on an 800I A2 whose source states 64 GB: not the 32 GB 910B4 the set-1 rule picks.
A2_64GB_NOTE = ("Atlas 800I A2 with 64 GB stated by the source: not the 32 GB 910B4; compared against the 64 GB-class "
                "910B2 profile (as the set-1 rows whose numbers rule the 910B4 out)")


# The SGLang best-practice rows name an Atlas 800I A2 without a SKU; its own c120 row rules the
# 32 GB 910B4 out: 120 requests of up to 4000 tokens at TP4 hold 120 x 4000 x 64 KiB = 29 GiB of
# KV cache per chip next to 8 GiB of W8A8 weights.
SGLANG_SKU_NOTE = ("Atlas 800I A2 without a SKU, but not a 32 GB 910B4: the source's c120 TP4 run keeps 120 requests "
                   "of up to 4000 tokens, 29 GiB of KV cache per chip beside 8 GiB of W8A8 weights; compared against "
                   "the 64 GB-class 910B2 profile for every row of the source")


# Launch flags the SGLang rows' source passes but the rows do not restate: the stored version of
# docs/platforms/ascend_npu_best_practice.md (sections 'Qwen3 32B A2 Low Latency 11ms', 'High
# Throughput 50ms 1' and '2') launches these configurations with --chunked-prefill-size -1 and
# the --max-prefill-tokens given here.
SGLANG_LAUNCH = {
    "srv-sglang-qwen3-32b-bf16-a2-tp8-eagle3-c1": {"chunked_prefill": "disabled (-1)", "max_prefill_tokens": 65536},
    "srv-sglang-qwen3-32b-w8a8-a2-tp4-eagle3-c78": {"chunked_prefill": "disabled (-1)"},
    "srv-sglang-qwen3-32b-w8a8-a2-tp4-eagle3-c120": {"chunked_prefill": "disabled (-1)", "max_prefill_tokens": 49152},
}


# Launch flags a vLLM-Ascend row's source passes but the row does not restate: the stored
# version of vllm-ascend docs/source/tutorials/models/Qwen3.5-2B.md ('Single-node Deployment
# (TP4)', the command behind its 'Optimized Performance' TP4 line) serves with
# --max-num-batched-tokens 16384 (and --max-model-len 4096), as its TP1 launch does (which the
# TP1 row states). The eager baseline's command is not shown there: that row keeps the default.
# A row measured in two launch modes names the variant ("ID/graph"): the stored version of
# docs/source/tutorials/models/Qwen3.5-9B.md (PR #8237 @ b6d36b59, 'Single-node Deployment
# (TP1)', the command behind its 'Optimized Performance' TP1 line) serves with
# --max-num-batched-tokens 16384 and --max-num-seqs 256; its enforce-eager baseline's command is
# not shown, so the eager variant keeps the default.
VLLM_LAUNCH = {
    "srv-vllm-qwen3.5-2b-800ia2-tp4-graph": {"max_num_batched_tokens": 16384},
    "srv-vllm-qwen3.5-9b-800ia2-tp1-eager-vs-graph/graph": {"max_num_batched_tokens": 16384},
}

def set2_model(name):
    n = norm(name)
    for key in sorted(SET2_MODELS, key=lambda k: len(norm(k)), reverse=True):
        if norm(key) in n:
            return SET2_MODELS[key]
    return None


def numbers(text):
    return [int(x) for x in re.findall(r"\d+", str(text))]


def bench_workload(text):
    """(input, output, prompts, concurrency cap, rate) from a bench_serving / vllm bench line."""
    t = str(text)
    def after(pat):
        m = re.search(pat + r"\D{0,3}(\d+)", t)
        return int(m.group(1)) if m else None
    inp = after(r"(?:random-input-len|input)")
    out = after(r"(?:random-output-len|output)")
    m = re.search(r"(\d+)\s+prompts", t) or re.search(r"num-prompts\s+(\d+)", t)
    prompts = int(m.group(1)) if m else None
    cap = after(r"max-concurrency") or after(r"concurrency")
    rate = "inf"
    m = re.search(r"request rate (\d+(?:\.\d+)?)", t, re.I) or re.search(r"rate (\d+(?:\.\d+)?) RPS", t)
    if m:
        rate = float(m.group(1))
    return inp, out, prompts, cap, rate


def spec_of(text):
    """(method, draft tokens) from an SGLang speculative line ('EAGLE3 num-steps 3, draft tokens 4')."""
    t = str(text)
    m = re.search(r"num-steps\s+(\d+)", t)
    return ("eagle3" if "EAGLE3" in t.upper() else "eagle"), (int(m.group(1)) if m else None)


def serving2_chip(r, row):
    st = r["setup"]
    if "64 GB" in r["chip"] and "800I A2" in r["chip"]:
        row["chip"], row["chip_note"] = "910B2", A2_64GB_NOTE
        return
    if "310P" in r["chip"] or "300I Duo" in r["chip"]:
        row["chip"], row["chip_note"] = "310P3", "Atlas 300I Duo = two 310P chips per card; 310P3 is the bundled 310P profile"
        return
    if "ascend_npu_best_practice.md" in r["source"]:
        row["chip"], row["chip_note"] = "910B2", SGLANG_SKU_NOTE
        return
    sku = serving_chip(r)
    if sku is not None:
        row["chip"], row["chip_note"] = sku


def serving2_values(m, pairs):
    """Values compared by name: (source key, stage metric, clean unit) in `pairs`; the rest listed."""
    vals, used = [], set()
    for k, metric, unit in pairs:
        if k in m:
            vals.append(dict(value(k, m[k]["value"], unit, metric), unit_stated=m[k]["unit"]))
            used.add(k)
    for k, v in m.items():
        if k in used:
            continue
        why = {
            "mean_TTFT": "the median TTFT of the same run is compared",
            "mean_TPOT": "the median TPOT of the same run is compared",
            "accept_length": "the draft's accept length is a setting of the row (deployment.serving.speculative.accept_length), not a prediction",
        }.get(k, "derived from or redundant with the compared values of the same run")
        vals.append(skip(k, v.get("value"), v.get("unit"), why))
    return vals


def convert_serving2(r):
    """A serving row of the second set, or None when it is not one of its families."""
    st, m = r["setup"], r["measured"]
    row = {"stage": "deployment"}
    serving2_chip(r, row)
    model = set2_model(st.get("model", ""))
    if model is None:
        row["cannot_express"] = ("model '%s' has no public config.json the converter knows (GLM-5.2: a large MoE whose "
                                 "architecture Tunelab does not load yet); its W4A8 and C8 KV settings are expressible "
                                 "(precision w4a8, deployment.serving.kv_cache_dtype int8)" % st.get("model", ""))
        row["values"] = [skip(k, v.get("value"), v.get("unit"), "row not expressible") for k, v in m.items()]
        return row
    row["model"] = model
    if "task" in st and "embedding" in st["task"]:
        return convert_encoder2(r, row)
    sw = str(r.get("software", "")).lower()
    engine = "sglang" if "sglang" in sw else "vllm-ascend"
    inp, out, prompts, cap, rate = bench_workload(st.get("workload", ""))
    tp = int(st.get("tp", 1))
    quant = str(st.get("quantization", "")).upper()
    precision = "w8a8" if "W8A8" in quant else "w4a4" if "W4A4" in quant else "w4a8" if "W4A8" in quant else "bf16"
    mode = str(st.get("mode", st.get("graph", ""))).lower()
    launch = "eager" if "eager" in mode else "graph"
    # vLLM captures decode piecewise unless the launch says FULL_DECODE_ONLY (docs/serving.md).
    full_decode = "full_decode_only" in str(st.get("mode", st.get("modes", ""))).lower()
    sharegpt = "sharegpt" in str(st.get("workload", "")).lower()
    serving = with_hccl_expansion({"mode": "scheduler", "engine": engine, "requests": prompts or 100,
                                   "length_distribution": "fixed", "block_size": 128}, r)
    notes = []
    if rate == "inf":
        serving["arrival"] = "burst"
    else:
        serving["arrival"], serving["request_rate"] = "poisson", rate
    if cap:
        serving["max_concurrency"] = cap
    if sharegpt:
        serving["dataset"] = "sharegpt"
        notes.append("ShareGPT lengths from the bundled dataset statistics (assets/workloads/datasets.json), not the prompts the run drew")
    if full_decode:
        serving["graph_mode"] = "full_decode_only"
        notes.append("ACL graph FULL_DECODE_ONLY as the launch states (deployment.serving.graph_mode)")
    if "c8" in str(st.get("quantization", "")).lower() or "C8" in str(st.get("quantization", "")):
        serving["kv_cache_dtype"] = "int8"
    if "speculative" in st:
        method, k = spec_of(st["speculative"])
        serving["speculative"] = {"method": method, "num_speculative_tokens": [k], "accept_length": m["accept_length"]["value"]}
        notes.append("EAGLE-3 chain of %d draft tokens (topk 1) with the accept length the run logs (%.2f) as the acceptance setting" % (k, m["accept_length"]["value"]))
    # Engine defaults: SGLang admits --max-running-requests and prefills --max-prefill-tokens per
    # step (16384 by default); `vllm serve` (usage context OPENAI_API_SERVER) takes max_num_seqs
    # 256 and 2048 tokens per step with chunking on a device under 70 GiB (vllm/engine/
    # arg_utils.py, get_batch_defaults: the 8192 default is for >= 70 GiB GPUs; a 910B has 64 GB).
    batch = int(st.get("max_running_requests") or st.get("max_num_seqs") or 256)
    if engine == "sglang":
        stated = SGLANG_LAUNCH.get(r["id"], {})
        if stated:
            st = dict(stated, **st)
            notes.append("chunked prefill off (--chunked-prefill-size -1)%s as the source's launch line for this configuration passes it" % (
                ", --max-prefill-tokens %d" % stated["max_prefill_tokens"] if "max_prefill_tokens" in stated else ""))
        tokens = int(st.get("max_prefill_tokens") or 16384)
        chunked = "off" if "disabled" in str(st.get("chunked_prefill", "")) else "on"
    else:
        stated = VLLM_LAUNCH.get(r["id"], {})
        if stated and not st.get("max_num_batched_tokens"):
            st = dict(stated, **st)
            notes.append("max_num_batched_tokens %d as the source's launch line for this configuration passes it" % stated["max_num_batched_tokens"])
        tokens = int(st.get("max_num_batched_tokens") or 2048)
        chunked = "on"
        if not st.get("max_num_batched_tokens"):
            notes.append("max_num_batched_tokens 2048: vllm serve's default on a device under 70 GiB (not stated by the row)")
    pins = fixed(batch=batch, precision=precision, tp=tp, launch=launch, max_num_batched_tokens=tokens, chunked_prefill=chunked)
    if "speculative" in st:
        pins["num_speculative_tokens"] = {"fixed": spec_of(st["speculative"])[1]}
    row["scenario"] = {"workload": {"batch": batch, "input_len": inp or 512, "output_len": out or 128},
                       "deployment": {"tile_operators": False, "serving": serving}, "space": pins}
    pairs = [("median_TPOT", "tpot_p50_ms", "ms"), ("median_TTFT", "ttft_p50_ms", "ms"), ("output_throughput", "tokens_per_s", "tokens/s")]
    if "median_TPOT" not in m:
        pairs.insert(0, ("mean_TPOT", "tpot_mean_ms", "ms"))
    if "median_TTFT" not in m:
        pairs.insert(1, ("mean_TTFT", "ttft_mean_ms", "ms"))
    if "modes" in st:
        # Eager and graph measured side by side.
        row["variants"] = []
        for launch_ in ("eager", "graph"):
            sub = {k.split("_", 1)[1]: v for k, v in m.items() if k.startswith(launch_ + "_")}
            vals = serving2_values(sub, [("mean_TPOT", "tpot_mean_ms", "ms"), ("mean_TTFT", "ttft_mean_ms", "ms"), ("output_throughput", "tokens_per_s", "tokens/s")])
            for v in vals:
                v["metric"] = launch_ + "_" + v["metric"]
            space = fixed(launch=launch_)
            stated_ = VLLM_LAUNCH.get(r["id"] + "/" + launch_, {})
            if engine != "sglang" and stated_ and not st.get("max_num_batched_tokens"):
                space.update(fixed(max_num_batched_tokens=stated_["max_num_batched_tokens"]))
                notes = [n for n in notes if not n.startswith("max_num_batched_tokens 2048")]
                notes.append("%s: max_num_batched_tokens %d as the source's launch line for it passes it; the other variant keeps vllm serve's default 2048 on a device under 70 GiB (its command is not shown)" % (
                    launch_, stated_["max_num_batched_tokens"]))
            row["variants"].append({"suffix": launch_, "space": space, "values": vals})
        row["values"] = []
    else:
        row["values"] = serving2_values(m, pairs)
    if notes:
        row["conversion_note"] = "; ".join(notes)
    return row


def convert_encoder2(r, row):
    """MindIE BGE embedding throughput: a static batch of `batch` sequences of `seq` tokens, one
    forward. The source runs two runtimes: the ATB "accelerated" model (the engine's fused
    operators) and the "offline" OM model ATC compiles from an ONNX export with mixed_float16
    (deployment.serving.runtime = "om"); each seq-512 value is compared under its own runtime."""
    m = r["measured"]
    duo = row.get("chip") == "310P3"
    # The 300I Duo runs only the OM offline model; the 800I A2 row measures both runtimes.
    serving = {"mode": "static", "engine": "mindie"}
    if duo:
        serving["runtime"] = "om"
    row["scenario"] = {"workload": {"batch": 128, "input_len": 512, "output_len": 1},
                       "deployment": {"tile_operators": False, "serving": serving},
                       "space": fixed(precision="fp16", tp=1, launch="graph")}
    row["variants"] = []
    # Each (batch, seq) shape of the source is a variant; a variant's scenario carries the
    # workload's length (the seq-100 shapes were listed, not compared, before variants could).
    for runtime in (("om",) if duo else ("accel", "om")):
        for bs, seq in ((8, 100), (20, 512), (128, 512)):
            shape = "bs%d_seq%d" % (bs, seq)
            vals = []
            for k, v in m.items():
                if (k == shape or k.endswith("_" + shape)) and (duo or k.startswith(runtime)):
                    val = dict(value(k, v["value"], "req/s", "requests_per_s"), unit_stated=v["unit"])
                    if duo:
                        val["copies"] = 2
                    vals.append(val)
            variant = {"suffix": ("om-" if runtime == "om" and not duo else "") + "bs%d-seq%d" % (bs, seq), "space": fixed(batch=bs), "values": vals}
            scen = {}
            if runtime == "om" and not duo:
                scen["deployment"] = {"serving": {"runtime": "om"}}
            if seq != 512:
                scen["workload"] = {"input_len": seq}
            if scen:
                variant["scenario"] = scen
            row["variants"].append(variant)
    row["values"] = []
    row["conversion_note"] = ("throughput = 1000 x batch / compute time (the source's definition): sequences/s of a static batch, one forward (encoder); "
                              + ("the OM offline model (runtime om: ATC from ONNX, mixed_float16); per card of two 310P chips, each running its own copy (the source multiplies by 2)" if duo
                                 else "accel_* values under the engine's fused operators (the ATB model), om_* values under runtime om (the OM offline model: ATC from ONNX, mixed_float16)"))
    return row


# Layers: which framework ran a row, which kernel library its operators come from, and which
# layer of the model the row is evidence for (docs/fidelity.md, "Layers").
# ---------------------------------------------------------------------------------------------

# Checked in order against the row's software, framework and source text (lower case).
FRAMEWORKS = [
    ("ascend-dmi", "ascend-dmi"), ("pto-isa", "pto-isa"), ("pto isa", "pto-isa"), ("sglang", "sglang"),
    ("deepep", "deepep"), ("mindie turbo", "vllm-ascend"), ("mindie", "mindie"), ("vllm", "vllm-ascend"), ("torchair", "torchair"), ("deepspeed", "deepspeed"),
    ("mindformers", "mindformers"), ("mindspore", "mindformers"), ("modellink", "mindspeed"),
    ("mindspeed", "mindspeed"), ("megatron", "mindspeed"), ("ascendie", "ascendie"), ("torchaie", "ascendie"),
    ("torch_npu", "torch_npu"), ("torch.mm", "torch_npu"),
    # ModelZoo ACL_PyTorch pipelines: ATC-converted OM models run by ais_bench, what the diffusion
    # constants call the ascendie framework.
    ("om models (atc)", "ascendie"),
]


def framework_of(r):
    """The framework or engine that ran the row, from what the source states (None: unstated)."""
    # The stated software first: a repository may publish timings of another library's calls
    # (the PTO-ISA repository times torch_npu's flash attention as its baseline).
    for text in (r.get("software"), r["setup"].get("framework"), r["setup"].get("operation"), r["source"]):
        text = str(text or "").lower()
        for needle, name in FRAMEWORKS:
            if needle in text:
                return name
    return None


def kernel_library_of(r, framework):
    """The kernel library of the row's operators: a hand-written kernel (PTO-ISA, a custom
    communication kernel), a vendor microbenchmark tool, or CANN's default kernels (aclnn) as
    every framework calls them."""
    text = " ".join(str(x) for x in (r.get("software"), r["setup"].get("operation"))).lower()
    if framework == "pto-isa" or "custom" in text or "manual kernel" in text:
        return "hand-written"
    if framework == "ascend-dmi":
        return "vendor-tool"
    return "aclnn"


# The training stage's frameworks (training.framework): MindSpeed-LLM / ModelLink run Megatron's
# schedule; a row that names none keeps the stage's default (Megatron).
TRAINING_FRAMEWORKS = {"mindspeed": "megatron", "deepspeed": "deepspeed", "mindformers": "mindformers"}


def with_training_framework(row, fw):
    """A training row's scenario names the framework the source ran (its host costs and the
    kernels its model code runs are the framework layer's, assets/constants/training.json)."""
    if row.get("stage") != "training" or "scenario" not in row or fw not in TRAINING_FRAMEWORKS:
        return
    row["scenario"].setdefault("training", {})["framework"] = TRAINING_FRAMEWORKS[fw]


def layer_of(r, row):
    """The layer a row is evidence for: an operator microbenchmark of the silicon (copies,
    collectives, a vendor peak test, a bandwidth sweep) is chip evidence; any other operator
    row is evidence for its kernel library; serving, training and pipelines for the framework."""
    if r["category"] != "op":
        return "framework"
    ops = [o.get("op", {}).get("op") for o in (row.get("model") or {}).get("ops", [])] if isinstance(row.get("model"), dict) else []
    opn = str(r["setup"].get("operation", "")).lower()
    # A tool's search (peak matmul, bandwidth sweeps) measures what the silicon can do.
    if "copy" in opn or "comm" in ops or row.get("framework") == "ascend-dmi" or row.get("sweep"):
        return "chip"
    return "kernel"


# Releases and model families: leave-one-engine-release-out and leave-one-model-family-out
# (docs/fidelity.md) group rows by them.
# ---------------------------------------------------------------------------------------------

# How each framework names its version in a row's software text (lower case).
RELEASE_NAMES = {
    "vllm-ascend": [r"vllm[- ]?ascend[\s:]*v?(\d+\.\d+)", r"vllm-ascend:v(\d+\.\d+)", r"\(v(\d+\.\d+)\.\d+\)"],
    "torch_npu": [r"torch_npu\s+v?(\d+\.\d+)"],
    "deepspeed": [r"deepspeed\s+v?(\d+\.\d+)"],
    "mindspeed": [r"mindspeed-mm\s+v(\d+\.\d+)", r"modellink \((\w+ \d{4})\)"],
    "sglang": [r"sglang\s+v?(\d+\.\d+)"],
    "mindie": [r"mindie\s+v?(\d+\.\d+)"],
}


def release_of(r, fw):
    """The framework release a row ran, as major.minor from its software text ("unstated" when
    the source names none). A converted row may name its own (a release pair)."""
    text = str(r.get("software") or "").lower()
    for pat in RELEASE_NAMES.get(fw or "", []):
        m = re.search(pat, text)
        if m:
            return m.group(1)
    return "unstated"


ENGINE_RELEASES = json.load(open(os.path.join(ROOT, "assets", "engines", "releases.json")))["engines"]


def with_engine_version(row, fw, release):
    """A serving row whose source names a release of its engine that assets/engines/releases.json
    lists is priced under that release (deployment.serving.engine_version): its defaults and host
    costs, not the baseline's."""
    serving = ((row.get("scenario") or {}).get("deployment") or {}).get("serving")
    if serving is None or fw not in ENGINE_RELEASES or release not in ENGINE_RELEASES[fw]["releases"]:
        return
    serving.setdefault("engine_version", release)


# Model names whose family is another's (a fine-tune of it).
FAMILY_ALIASES = {"qwq": "qwen2.5", "codellama": "llama2", "yi": "yi", "nvidia": None}


def family_of(r, row):
    """The model family of a row: the leading letters of the source's model name with the version
    that follows them, not the size ("Qwen3-32B" -> qwen3, "LLaMA2-13B" -> llama2); an operator
    row's family is its operator. A converted row may name its own."""
    if row.get("family"):
        return row["family"]
    if r["category"] == "op":
        model = row.get("model") or {}
        return model.get("name", "operator") if isinstance(model, dict) else str(model)
    name = str(r["setup"].get("model") or r["setup"].get("models") or "").split("(")[0].strip().lower()
    name = name.split("/")[-1]
    name = re.sub(r"^(nvidia|tencent|baai|moonshotai|microsoft)[- ]", "", name)
    m = re.match(r"([a-z]+)[-_ ]?(v?\d+(?:\.\d+)?)?", name)
    if not m:
        return "unstated"
    fam, ver = m.group(1), m.group(2)
    if fam in FAMILY_ALIASES and FAMILY_ALIASES[fam]:
        return FAMILY_ALIASES[fam]
    end = m.end()
    if ver and not (end < len(name) and name[end] in "bx"):
        fam += ver
    return fam


CONVERTERS = {}  # category -> function(source row) -> partial converted row; see convert()
# Set 3 converts every category through its own functions (scripts/convert_set3.py).
THIRD_SET = False


def convert(src_rows):
    out = []
    for r in src_rows:
        cat = r["category"]
        chip, chip_note = chip_of(r["chip"])
        if not THIRD_SET and (cat == "diffusion" or is_finetune(r)):
            rows = convert_diffusion(r) if cat == "diffusion" else convert_finetune(r)
        else:
            fn = CONVERTERS.get(cat)
            if fn is None:
                rows = [{"cannot_express": "no conversion for category '%s' yet" % cat,
                         "values": [skip(k, v.get("value") if isinstance(v, dict) else v, v.get("unit") if isinstance(v, dict) else None, "row not expressible")
                                    for k, v in r["measured"].items()]}]
            else:
                got = fn(r)
                rows = got if isinstance(got, list) else [got]
        fw = framework_of(r)
        for row in rows:
            with_training_framework(row, fw)
            with_engine_version(row, fw, row.get("release") or release_of(r, fw))
            full = {"id": r["id"], "category": cat, "chip": chip, "chip_stated": r["chip"], "chip_note": chip_note,
                    "source": r["source"], "software": r.get("software"), "notes": r.get("notes"),
                    "framework": fw, "kernel_library": kernel_library_of(r, fw),
                    "release": release_of(r, fw), "family": family_of(r, row)}
            full.update(row)
            full["layer"] = layer_of(r, full)
            full.setdefault("weight", 1.0)
            out.append(full)
    return out


CONVERTERS.update({"op": convert_op, "serving": convert_serving, "training": convert_training})

# ---------------------------------------------------------------------------------------------
# The second set (shared/calibration/ascend-measurements-2.json): one function per category, so
# a helper adding a workload (speculative decoding, hybrid attention, diffusion pipelines, ...)
# extends only its category's function. A row the stages cannot express yet keeps
# `cannot_express` with the reason.
# ---------------------------------------------------------------------------------------------

SQUARES = [2048, 4096, 6144, 8192, 10240, 12288, 14336, 16384]
SIZES = [2 ** k for k in range(26, 34)]  # 64 MiB .. 8 GiB, the large-message end of the sweeps


def sweep_row(points, layer_note):
    return {"stage": "operator", "scenario": {"operator": dict(OP_SCENARIO["operator"], timing="device"), "workload": {"batch": 1}},
            "sweep": points, "model": points[0]["model"], "conversion_note": layer_note}


def convert_op_2(r):
    """Microbenchmark tools (chip-layer evidence): what each tool measures, as a sweep whose
    best rate is compared (ascend-dmi's peak matmul: a shape search; bandwidth sweeps: the best
    over message sizes), with the tool's own definition of work."""
    st, m = r["setup"], r["measured"]
    opn = str(st.get("operation", "")).lower()
    vals = []
    if "matmul" in opn or "torch.mm" in opn:
        dts = [dtype_of(opn)] if "ascend-dmi" not in str(r.get("software")) else [dtype_of(r.get("software", ""))]
        if "torch.mm" in opn:
            dts = ["bf16", "fp32"]
        rows = []
        for dt in dts:
            pts = [{"model": one_op_graph("matmul", {"op": "matmul", "batch": 1, "m": n, "n": n, "k": n, "dtype": dt}, dt), "work": 2.0 * n ** 3} for n in SQUARES]
            rows.append((dt, pts))
        # A sweep belongs to a row, so a source row measuring two dtypes compares its first
        # (torch.mm: bf16) and lists the other with the reason.
        dt, pts = rows[0]
        row = sweep_row(pts, "shape search for the peak: square M=N=K over %s, default tiling (the library's), device time; "
                        "work 2MNK; the tool does not state its shape" % SQUARES)
        for k, v in m.items():
            unit = "TOPS" if dt == "int8" else "TFLOPS"
            if k in ("throughput", "%s_best" % dt):
                vals.append(dict(value(k, v["value"], unit, "best_rate"), unit_stated=v["unit"]))
            elif "power" in k:
                vals.append(skip(k, v["value"], v["unit"], "power during the test; Tunelab's power envelope is not calibrated on it"))
            else:
                vals.append(skip(k, v["value"], v["unit"], "another dtype of the same search (HF32 path not stated); %s is compared" % dt))
        row["values"] = vals
        return row
    if "all_reduce" in opn or "all_gather" in opn:
        row = {"stage": "operator", "values": [], "variants": []}
        variants = []
        for k, v in m.items():
            kind = "all_reduce" if k.startswith("all_reduce") else "all_gather"
            ranks = int(re.findall(r"(\d+)cards", k)[0])
            pts = [{"model": one_op_graph(kind, {"op": "comm", "kind": kind, "bytes": b, "ranks": ranks, "link": "hccs", "algorithm": "ring"}, "fp32"), "work": float(b)} for b in SIZES]
            variants.append((k, kind, ranks, pts, v))
        # A sweep is per row: the 8-card all_reduce (the largest group) is compared; the others
        # are listed with the reason.
        k, kind, ranks, pts, v = [x for x in variants if x[0] == "all_reduce_8cards"][0]
        row = sweep_row(pts, "best algorithm bandwidth (global tensor bytes / time, no bus-bandwidth correction) over fp32 messages of 64 MiB..8 GiB, ring, device time")
        row["values"] = [dict(value(k, v["value"], "GB/s", "best_rate"), unit_stated=v["unit"])] + [
            skip(x[0], x[4]["value"], x[4]["unit"], "another rank count of the same sweep; all_reduce_8cards is compared") for x in variants if x[0] != k]
        return row
    if "exp" in opn or "sigmoid" in opn:
        pts = [{"model": one_op_graph("exp", {"op": "vector", "kind": "activation", "rows": b // 4 // 4096, "row_len": 4096, "dtype": "fp32"}, "fp32"), "work": float(b)} for b in SIZES]
        row = sweep_row(pts, "best input bandwidth (input bytes / time, the tool's definition) of one elementwise kernel over fp32 vectors of 64 MiB..8 GiB, device time")
        vals = []
        for k, v in m.items():
            if k == "exp":
                vals.append(dict(value(k, v["value"], "GB/s", "best_rate"), unit_stated=v["unit"]))
            else:
                vals.append(skip(k, v["value"], v["unit"], "the same sweep through another kernel (or four kernels); exp is compared"))
        row["values"] = vals
        return row
    return {"cannot_express": "no operator in Tunelab's vocabulary matches '%s'" % st.get("operation", ""),
            "values": [skip(k, v.get("value"), v.get("unit"), "row not expressible") for k, v in m.items()]}


# Set-2 conversion by category. Diffusion pipelines and fine-tuning rows go through
# convert_diffusion / convert_finetune in convert() before this table is read (each names why a
# row it has no conversion for stays out); a row of any other category gets convert()'s
# "no conversion for category" reason.
CONVERTERS_2 = {
    "op": convert_op_2,
    "serving": convert_serving2,
}


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_SRC
    second = "measurements-2" in os.path.basename(src)
    third = "measurements-3" in os.path.basename(src)
    dst = sys.argv[2] if len(sys.argv) > 2 else (DEFAULT_OUT_3 if third else DEFAULT_OUT_2 if second else DEFAULT_OUT)
    raw = open(src, "rb").read()
    rows = json.loads(raw)
    if second:
        CONVERTERS.clear()
        CONVERTERS.update(CONVERTERS_2)
    if third:
        global THIRD_SET
        THIRD_SET = True
        import convert_set3
        CONVERTERS.clear()
        CONVERTERS.update(convert_set3.CONVERTERS_3)
    doc = {
        "schema": "tunelab-measurements/1",
        "name": ("Ascend shared calibration set 3 (46 published measurements)" if third else
                 "Ascend shared calibration set 2 (31 published measurements)" if second
                 else "Ascend 910B-family shared calibration set (60 published measurements)"),
        "converted_from": {"file": "shared/calibration/" + os.path.basename(src),
                           "sha256": hashlib.sha256(raw).hexdigest(),
                           "converter": "scripts/convert_measurements.py"},
        "rows": convert(rows),
    }
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    with open(dst, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")
    print("wrote %s: %d rows" % (dst, len(doc["rows"])))


if __name__ == "__main__":
    main()
