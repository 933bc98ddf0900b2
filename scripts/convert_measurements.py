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
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_SRC = os.path.join(ROOT, "..", "shared", "calibration", "ascend-measurements.json")
DEFAULT_OUT = os.path.join(ROOT, "assets", "measurements", "ascend-910b.json")

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


def model_for(name):
    for key in sorted(MODELS, key=len, reverse=True):
        if name.lower().startswith(key.lower()):
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

def convert_op(r):
    st, m = r["setup"], r["measured"]
    rid = r["id"]
    row = {"stage": "operator", "scenario": OP_SCENARIO}
    if rid.startswith("op-hbm-copy"):
        # A device-to-device copy: one read and one write per element, no arithmetic. In the
        # operator vocabulary that is a gather of whole rows (in bytes = out bytes, 0 instr).
        n = st["elements"]
        op = {"op": "vector", "kind": "gather", "rows": n // 4096, "row_len": 4096, "dtype": "fp32"}
        row["model"] = one_op_graph("copy", op, "fp32")
        row["values"] = [value("median_time", m["median_time"]["value"], "us", "model_time_ms"),
                         skip("achieved_bandwidth", m["achieved_bandwidth"]["value"], m["achieved_bandwidth"]["unit"],
                              "derived from median_time by the source; compared once, as time")]
    elif rid.startswith("op-matmul"):
        op = {"op": "matmul", "batch": 1, "m": st["M"], "n": st["N"], "k": st["K"], "dtype": "fp32"}
        row["model"] = one_op_graph("matmul", op, "fp32")
        row["values"] = [value("median_time_per_matmul", m["median_time_per_matmul"]["value"], "us", "model_time_ms"),
                         skip("achieved", m["achieved"]["value"], m["achieved"]["unit"], "derived from the time; compared once, as time")]
        row["weight"] = 0.5
    elif rid.startswith("op-fa-npu_fusion_attention"):
        s = st["seq_len_q=kv"]
        op = {"op": "attention", "kind": "flash", "batch": 1, "heads": st["num_heads"], "kv_heads": st["num_heads"],
              "q_len": s, "kv_len": s, "head_dim": st["head_dim"], "causal": False, "dtype": "fp16"}
        row["model"] = one_op_graph("flash_attention", op, "fp16")
        row["values"] = [value("median_latency", m["median_latency"]["value"], "us", "model_time_ms")]
    elif rid.startswith("op-fa-torch_npu"):
        s = st["seq_len_q=kv"]
        op = {"op": "attention", "kind": "flash", "batch": st["batch"], "heads": st["num_heads"], "kv_heads": st["num_heads"],
              "q_len": s, "kv_len": s, "head_dim": st["head_dim"], "causal": False, "dtype": "fp16"}
        row["model"] = one_op_graph("flash_attention", op, "fp16")
        row["values"] = [value("latency", m["latency"]["value"], "us", "model_time_ms"),
                         skip("throughput", m["throughput"]["value"], m["throughput"]["unit"], "derived from latency; compared once, as time"),
                         skip("utilization_reported", m["utilization_reported"]["value"], m["utilization_reported"]["unit"], "derived from latency")]
    elif rid.startswith("op-fa-npu_fused_attention-hosttimed"):
        op = {"op": "attention", "kind": "flash", "batch": st["batch"], "heads": 1, "kv_heads": 1,
              "q_len": st["S0(query)"], "kv_len": st["S1(kv)"], "head_dim": st["head_dim"], "causal": False, "dtype": "fp16"}
        row["model"] = one_op_graph("flash_attention", op, "fp16")
        row["values"] = [value("latency_x86_64_host", m["latency_x86_64_host"]["value"], "us", "model_time_ms"),
                         skip("latency_aarch64_host", m["latency_aarch64_host"]["value"], "us",
                              "same kernel timed from a second host; the x86_64 value is compared")]
        row["weight"] = 0.5
        row["conversion_note"] = "head count not stated: one head assumed (host-timed, so launch costs are included)"
    elif rid.startswith("op-gemm"):
        op = {"op": "matmul", "batch": 1, "m": st["M"], "n": st["N"], "k": st["K"], "dtype": "fp16"}
        row["model"] = one_op_graph("gemm", op, "fp16")
        # A hand-written, hand-tiled kernel: compared with Tunelab's tuned tiling, not the default.
        row["scenario"] = {"operator": dict(OP_SCENARIO["operator"], tiling=True), "workload": {"batch": 1},
                           "strategy": {"name": "auto"}, "budget": 300, "seed": 1}
        row["predict_with"] = "tuned"
        row["values"] = [value("compute_only_time", m["compute_only_time"]["value"], "us", "model_time_ms"),
                         skip("throughput", m["throughput"]["value"], m["throughput"]["unit"], "derived from the time")]
    elif rid.startswith("comm-allreduce"):
        nbytes = 5504 * 1536 * 2
        op = {"op": "comm", "kind": "all_reduce", "bytes": nbytes, "ranks": st["ranks"], "link": "hccs", "algorithm": "ring"}
        row["model"] = one_op_graph("all_reduce", op, "fp16")
        row["values"] = [value("comm_time", m["comm_time"]["value"], "us", "model_time_ms"),
                         skip("bandwidth_reported", m["bandwidth_reported"]["value"], m["bandwidth_reported"]["unit"], "derived from the time"),
                         skip("pipelined_with_gemm_total", m["pipelined_with_gemm_total"]["value"], "us",
                              "overlap of a GEMM with the all-reduce: a two-operator schedule, not one operator")]
    else:
        row["cannot_express"] = "no conversion rule for this operator row"
    return row


def convert_serving(r):
    st, m = r["setup"], r["measured"]
    rid = r["id"]
    name = st.get("model", "")
    key, model = model_for(name)
    row = {"stage": "deployment"}
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
    if "batch_size" in st and "input_len" in st and "padded" in str(st["input_len"]) or rid.startswith("srv-llama2-7b-tp1"):
        batch = st["batch_size"]
        # Static mode: a padded batch, one prefill then decode steps (what the torchair example
        # scripts time), not a request stream.
        base = {"workload": {"batch": batch, "input_len": 1024, "output_len": 1024},
                "deployment": {"tile_operators": False, "serving": {"mode": "static"}}}
        if rid == "srv-llama2-7b-tp1-bs1-modes":
            row["variants"] = [
                {"suffix": "eager", "space": fixed(batch=batch, precision="fp16", tp=tp, launch="eager"),
                 "values": [value("eager_prefill", m["eager_prefill"]["value"], "ms", "ttft_ms"),
                            value("eager_decode", m["eager_decode"]["value"], "ms", "tpot_ms")]},
                {"suffix": "graph", "space": fixed(batch=batch, precision="fp16", tp=tp, launch="graph"),
                 "values": [value("maxautotune_prefill", m["maxautotune_prefill"]["value"], "ms", "ttft_ms"),
                            value("maxautotune_decode", m["maxautotune_decode"]["value"], "ms", "tpot_ms")]},
            ]
            row["scenario"] = base
            row["values"] = [skip("reduce_overhead_prefill", m["reduce_overhead_prefill"]["value"], "ms",
                                  "torch.compile reduce-overhead (NPU graph capture without torchair fusions) is neither launch mode Tunelab models"),
                             skip("reduce_overhead_decode", m["reduce_overhead_decode"]["value"], "ms/step",
                                  "torch.compile reduce-overhead is neither launch mode Tunelab models"),
                             skip("memory_maxautotune", m["memory_maxautotune"]["value"], "MB",
                                  "framework memory incl. caching-allocator reserve; not compared")]
            return row
        if rid == "srv-llama2-7b-tp1-bs4-a8w8c8":
            row["variants"] = [
                {"suffix": "fp16", "space": fixed(batch=batch, precision="fp16", tp=tp, launch="graph"),
                 "values": [value("fp16_prefill", m["fp16_prefill"]["value"], "ms", "ttft_ms"),
                            value("fp16_decode", m["fp16_decode"]["value"], "ms", "tpot_ms")]},
                {"suffix": "w8a8", "space": fixed(batch=batch, precision="w8a8", tp=tp, launch="graph"),
                 "values": [value("a8w8c8_prefill", m["a8w8c8_prefill"]["value"], "ms", "ttft_ms"),
                            value("a8w8c8_decode", m["a8w8c8_decode"]["value"], "ms", "tpot_ms")],
                 "conversion_note": "A8W8 modelled; the INT8 KV cache (C8) is not"},
            ]
            row["scenario"] = base
            row["values"] = [skip(k, m[k]["value"], "MB", "framework memory; not compared") for k in ("fp16_memory", "a8w8c8_memory")]
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
                           "deployment": {"tile_operators": False, "serving": {"mode": "static"}},
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
        serving = {"mode": "scheduler", "arrival": "closed", "concurrency": conc,
                   "requests": st.get("requests", 100)}
        pins = fixed(batch=max_seqs, precision=prec, tp=tp, launch="graph")
        if "max_num_batched_tokens" in st:
            pins["max_num_batched_tokens"] = {"fixed": st["max_num_batched_tokens"]}
        row["scenario"] = {"workload": {"batch": max_seqs, "input_len": int(round(st["avg_input_tokens"])),
                                        "output_len": int(round(st["avg_output_tokens"]))},
                           "deployment": {"tile_operators": False, "serving": serving}, "space": pins}
        vals = []
        for k, v in m.items():
            if k == "TPOT":
                vals.append(value(k, v["value"], "ms", "tpot_p50_ms"))
            elif k == "output_throughput":
                vals.append(dict(value(k, v["value"], "tokens/s", "tokens_per_s"), unit_stated=v["unit"]))
            else:
                vals.append(skip(k, v["value"], v["unit"], "the deployment stage reports no mean end-to-end request latency"))
        row["values"] = vals
        row["conversion_note"] = ("closed loop of %d clients, max_num_seqs %d, lengths uniform +-50%% around the "
                                  "dataset means (the stage default; the datasets' spread is not stated); "
                                  "TPOT compared with the median" % (conc, max_seqs))
        return row
    row["scenario"] = {"deployment": {"tile_operators": False}}
    row["cannot_express"] = serving_reason(r)
    row["values"] = [skip(k, v.get("value"), v.get("unit"), "row not expressible") for k, v in m.items()]
    return row


def serving_reason(r):
    st = r["setup"]
    if "310P" in r["chip"]:
        return "multimodal (vision-token) serving on 310P: no vision encoder workload at concurrency in the deployment stage"
    if "VL" in st.get("model", ""):
        return "multimodal requests (images): the vision encoder's per-request work is not a deployment-stage workload"
    return ("the output length is not stated, and TTFT and decode rate under a closed loop depend on it")


def convert_training(r):
    st, m = r["setup"], r["measured"]
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
    notes = []
    if st.get("script_NNODES") is not None:
        notes.append("chips from the launch script's NNODES (%d nodes x 8)" % nodes)
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


def convert(src_rows):
    out = []
    for r in src_rows:
        cat = r["category"]
        chip, chip_note = chip_of(r["chip"])
        if cat == "op":
            row = convert_op(r)
        elif cat == "serving":
            row = convert_serving(r)
        else:
            row = convert_training(r)
        full = {"id": r["id"], "category": cat, "chip": chip, "chip_stated": r["chip"], "chip_note": chip_note,
                "source": r["source"], "software": r.get("software"), "notes": r.get("notes")}
        full.update(row)
        full.setdefault("weight", 1.0)
        out.append(full)
    return out


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_SRC
    dst = sys.argv[2] if len(sys.argv) > 2 else DEFAULT_OUT
    raw = open(src, "rb").read()
    rows = json.loads(raw)
    doc = {
        "schema": "tunelab-measurements/1",
        "name": "Ascend 910B-family shared calibration set (60 published measurements)",
        "converted_from": {"file": "shared/calibration/ascend-measurements.json",
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
