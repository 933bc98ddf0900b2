"""The third shared set (shared/calibration/ascend-measurements-3.json): one function per source
family, called from scripts/convert_measurements.py (which adds framework, kernel library, layer,
release and model family to every row). A row Tunelab cannot express keeps `cannot_express` with
what is missing, read from the source row itself; values are copied unchanged.

Chips: the A3 rows are Atlas 800 A3 nodes, 16 dies each (the bundled 910C profile is one die);
an A2 row that names no SKU is compared against 910B2 (or 910B4 for an 800I A2, the set-1 rule).
"""

import json
import os
import re

from convert_measurements import (OP_SCENARIO, fixed, one_op_graph, skip, value, with_hccl_expansion)

A3 = ("910C", "Atlas 800 A3 node: 16 Ascend 910C dies (8 packages x 2); the 910C profile is one die")
A2_UNSTATED = ("910B2", "SKU not stated (an Atlas A2 image or server); compared against the 64 GB-class 910B2 profile, as for the unstated A2 rows of sets 1 and 2")
A2_800I = ("910B4", "Atlas 800I A2 without a SKU: the set-1 rule (the set's 800I A2 rows that name the SKU say 910B4)")


# Model configs a row carries inline (the measurement file holds the verbatim config; the app does
# not bundle them): each a public copy named in assets/measurements/models/SOURCES.md, or a test
# fixture named in crates/sim/tests/data/models/SOURCES.md. Their types have no reader of their
# own or keys no reader uses yet, so they stay out of the app's model list (whose test admits
# no guessed type or unread key).
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROW_ONLY_MODELS = {
    "codellama-34b": "assets/measurements/models/codellama-34b.config.json",
    "internlm-7b": "assets/measurements/models/internlm-7b.config.json",
    "aquila2-7b": "assets/measurements/models/aquila2-7b.config.json",
    "aquila2-34b": "assets/measurements/models/aquila2-34b.config.json",
    "gemma-7b": "assets/measurements/models/gemma-7b.config.json",
    "minimax-m2.5": "crates/sim/tests/data/models/minimax-m2.5.config.json",
    "nemotron-3-super-120b-a12b": "crates/sim/tests/data/models/nemotron-3-super-120b-a12b-fp8.config.json",
}


def model_ref(model):
    """A bundled model's id, or the inline config of a row-only model."""
    path = ROW_ONLY_MODELS.get(model)
    # Python's bare Infinity / NaN (Nemotron-H's time_step_limit) become the strings the model
    # loader's own pre-pass makes of them (crates/sim/src/model/readers/pyjson.rs), so the
    # measurement file stays strict JSON.
    return json.load(open(os.path.join(ROOT, path)), parse_constant=str) if path else model


def all_skipped(m, why="row not expressible"):
    return [skip(k, v.get("value") if isinstance(v, dict) else v, v.get("unit") if isinstance(v, dict) else None, why) for k, v in m.items()]


def out_of_reach(r, reason, chip=None):
    row = {"cannot_express": reason, "values": all_skipped(r["measured"])}
    if chip:
        row["chip"], row["chip_note"] = chip
    return row


# Why each row that stays out stays out: what its source leaves unstated, or what Tunelab lacks.
REASONS = {
    "srv-vllm-hy3-preview-a3-tp16-mtp-c1": "no Hy3-preview config is bundled, and the MTP acceptance, which sets TPOT per token, is not reported",
    "srv-vllm-deepseekocr2-a2-1080p-256": "the source contradicts itself on the hardware (A2-313T in the result, A3 in the table below), the concurrency is not stated and no DeepSeek-OCR-2 config is bundled",
    "srv-vllm-qwen3-omni-30b-a3b-tp2-rate1": "no Qwen3-Omni config is bundled and the measured platform is not stated (the doc lists A3 or A2 cards)",
    "trn-mindspeedmm-deepseekvl2-800TA2-32npu": "the parallel layout and sample length live in example scripts the row does not restate, and no DeepSeek-VL2 config is bundled (its deepseek_vl_v2 type has no reader)",
}


def kimi_base(st, m_ep=True):
    """Kimi-K2-Thinking on one Atlas 800 A3 node: TP16 with expert parallelism, graph launch,
    HCCL_OP_EXPANSION_MODE=AIV, max_num_seqs 12, 8192 tokens per step (the row's launch)."""
    pins = fixed(batch=int(st["max_num_seqs"]), precision="w4a16", tp=16, launch="graph",
                 max_num_batched_tokens=int(st["max_num_batched_tokens"]), chunked_prefill="on", expert_parallel="on", dp=1)
    return pins


KIMI_NOTE = ("kimi-k2 config (Kimi-K2-Thinking shares Kimi-K2's DeepSeek-V3 architecture: 61 layers, 384 routed experts, 8 active); "
             "weights W4A16: the row calls them 'treat as uncertain', and 1T parameters in bf16 (2 TB) cannot fit one node's 16 x 64 GB, "
             "the INT4-expert release (~0.6 TB) can; one A3 node (deployment.cluster.nodes 1, 16 dies), TP16 with --enable-expert-parallel, graph launch (the V1 default)")


def convert_kimi_sweep(r):
    st, m = r["setup"], r["measured"]
    serving = with_hccl_expansion({"mode": "scheduler", "engine": "vllm-ascend", "arrival": "burst", "length_distribution": "fixed", "block_size": 128}, r)
    row = {"stage": "deployment", "model": "kimi-k2", "chip": A3[0], "chip_note": A3[1],
           "scenario": {"workload": {"batch": 12, "input_len": 1024, "output_len": 1024},
                        "deployment": {"tile_operators": False, "cluster": {"nodes": 1}, "precisions": ["w4a16"], "serving": serving},
                        "space": kimi_base(st)},
           "values": [], "variants": []}
    for c in (1, 2, 4, 8, 16):
        vals = []
        for k, v in m.items():
            if not k.endswith("_c%d" % c):
                continue
            if k.startswith("mean_TPOT"):
                vals.append(value(k, v["value"], "ms", "tpot_mean_ms"))
            elif k.startswith("mean_TTFT"):
                vals.append(value(k, v["value"], "ms", "ttft_mean_ms"))
            elif k.startswith("output_tps"):
                vals.append(dict(value(k, v["value"], "tokens/s", "tokens_per_s"), unit_stated=v["unit"]))
            else:
                vals.append(skip(k, v["value"], v["unit"], "a tail percentile of the queueing the c16 point is dominated by; the mean is compared"))
        row["variants"].append({"suffix": "c%d" % c, "space": {}, "scenario": {"deployment": {"serving": {"max_concurrency": c, "requests": 10 * c}}}, "values": vals})
    row["conversion_note"] = (KIMI_NOTE + "; vllm bench serve at --request-rate inf with --max-concurrency C and 10 x C prompts of 1024/1024 "
                              "(burst arrivals capped at C in flight); c16 exceeds max_num_seqs 12, so its requests queue in the engine as modelled")
    return row


def convert_kimi_rate1(r):
    st, m = r["setup"], r["measured"]
    serving = with_hccl_expansion({"mode": "scheduler", "engine": "vllm-ascend", "arrival": "poisson", "request_rate": 1.0,
                                   "requests": 10, "length_distribution": "fixed", "block_size": 128}, r)
    row = {"stage": "deployment", "model": "kimi-k2", "chip": A3[0], "chip_note": A3[1], "weight": 0.2,
           "scenario": {"workload": {"batch": 12, "input_len": 512, "output_len": 512},
                        "deployment": {"tile_operators": False, "cluster": {"nodes": 1}, "precisions": ["w4a16"], "serving": serving},
                        "space": kimi_base(st)},
           "values": [], "variants": []}
    for n in (512, 1024, 2048):
        tag = "_%d_%d" % (n, n)
        vals = []
        for k, v in m.items():
            if k.endswith(tag):
                if k.startswith("mean_TPOT"):
                    vals.append(value(k, v["value"], "ms", "tpot_mean_ms"))
                elif k.startswith("mean_TTFT"):
                    vals.append(value(k, v["value"], "ms", "ttft_mean_ms"))
                else:
                    vals.append(dict(value(k, v["value"], "tokens/s", "tokens_per_s"), unit_stated=v["unit"]))
        row["variants"].append({"suffix": "%d-%d" % (n, n), "space": {}, "scenario": {"workload": {"input_len": n, "output_len": n}}, "values": vals})
    row["conversion_note"] = (KIMI_NOTE + "; Poisson arrivals at 1 request/s, 10 prompts. Weight 0.2: the shared README says this table and the same "
                              "source's concurrency sweep (58 ms at c1) cannot be the same launch; the sweep is modelled at full weight")
    return row


def convert_qwen3_next(r):
    m = r["measured"]
    serving = {"mode": "scheduler", "engine": "vllm-ascend", "arrival": "closed", "concurrency": 32, "requests": 128,
               "length_distribution": "fixed", "block_size": 128, "graph_mode": "full_decode_only"}
    row = {"stage": "deployment", "model": "qwen3-next-80b-a3b", "chip": A3[0], "chip_note": A3[1] + "; one TP4 instance",
           "scenario": {"workload": {"batch": 256, "input_len": 2048, "output_len": 2048},
                        "deployment": {"tile_operators": False, "serving": serving},
                        "space": fixed(batch=256, precision="bf16", tp=4, launch="graph", max_num_batched_tokens=2048, chunked_prefill="on")},
           "values": [value("TPOT", m["TPOT"]["value"], "ms", "tpot_mean_ms"),
                      dict(value("throughput", m["throughput"]["value"], "tokens/s", "tokens_per_s"), unit_stated=m["throughput"]["unit"])],
           "weight": 0.5,
           "conversion_note": ("one TP4 instance at 32 concurrent 2K/2K requests (a closed loop of 32 clients), FULL_DECODE_ONLY as stated; "
                               "bf16 (no quantisation stated); max_num_seqs 256 and 2048 tokens per step: vllm serve's defaults on a device under "
                               "70 GiB (not stated by the row); '580 tps' compared as the instance's output rate, the reading the source's own "
                               "TPOT supports (32 / 54 ms = 590 tokens/s); weight 0.5: 2 nodes stated beside one TP4 deployment")}
    return row


# The QwQ-32B pair: one launch (TP4, batch 1, graph) under two vLLM-Ascend releases. QwQ-32B is a
# Qwen2.5-32B fine-tune: the bundled qwen2.5-32b config has the dimensions the same source states
# for it (hidden 5120, intermediate 27648; op-qwq32b-tp4-decode-ffn-matmul).
def convert_qwq_pair(r):
    m = r["measured"]
    rows = []
    # engine_version names the exact release the source ran (v0.11.0rc1: its defaults differ from
    # v0.11.0's, assets/engines/releases.json); `release` keeps the line for the leave-out.
    for key, rel, ver, gm in (("TPOT_v091", "0.9", "0.9", "full_decode_only"), ("TPOT_v011", "0.11", "0.11.0rc1", "full_decode_only")):
        v = m[key]
        rows.append({
            "id": r["id"] + "/v" + rel, "stage": "deployment", "model": "qwen2.5-32b", "chip": A2_UNSTATED[0], "chip_note": A2_UNSTATED[1],
            "release": rel,
            "scenario": {"workload": {"batch": 1, "input_len": 1024, "output_len": 128},
                         "deployment": {"tile_operators": False, "serving": {"mode": "static", "engine": "vllm-ascend", "engine_version": ver, "graph_mode": gm}},
                         "space": fixed(batch=1, precision="bf16", tp=4, launch="graph")},
            "values": [dict(value(key, v["value"], "ms", "tpot_ms"), unit_stated=v["unit"])],
            "conversion_note": ("QwQ-32B as the bundled qwen2.5-32b config (the same architecture: hidden 5120, intermediate 27648, as the "
                                "same issue states); batch 1 at 1K context, one decode step; vLLM-Ascend %s with a full decode graph "
                                "(%s); the other release of the same launch is its sibling row" % (rel, "compilation_config full_cuda_graph True" if rel == "0.9" else "cudagraph_mode FULL_DECODE_ONLY")),
        })
    return rows


def convert_reranker(r):
    """MindIE bge-reranker-large (XLM-R large cross-encoder) at seq 512: a static batch, one
    forward, as set 2's bge rows: the ATB 'accelerated' model and the OM offline model."""
    m = r["measured"]
    out = []
    for chip, tag in ((A2_800I, "800IA2"), (("310P3", "Atlas 300I Duo = two 310P chips per card; 310P3 is the bundled 310P profile"), "300IDuo")):
        duo = tag == "300IDuo"
        serving = {"mode": "static", "engine": "mindie"}
        if duo:
            serving["runtime"] = "om"
        row = {"id": r["id"] + "-" + ("duo" if duo else "a2"), "stage": "deployment", "model": "xlm-roberta-large", "chip": chip[0], "chip_note": chip[1],
               "scenario": {"workload": {"batch": 50, "input_len": 512, "output_len": 1}, "deployment": {"tile_operators": False, "serving": serving},
                            "space": fixed(precision="fp16", tp=1, launch="graph")},
               "values": [], "variants": []}
        for runtime in (("om",) if duo else ("accel", "om")):
            for bs in (20, 50):
                vals = []
                for k, v in m.items():
                    if tag not in k or not k.endswith("_bs%d" % bs):
                        continue
                    if ("accel" in k) != (runtime == "accel"):
                        continue
                    val = dict(value(k, v["value"], "req/s", "requests_per_s"), unit_stated=v["unit"])
                    if duo:
                        val["copies"] = 2
                    vals.append(val)
                var = {"suffix": ("om-" if runtime == "om" and not duo else "") + "bs%d" % bs, "space": fixed(batch=bs), "values": vals}
                if runtime == "om" and not duo:
                    var["scenario"] = {"deployment": {"serving": {"runtime": "om"}}}
                row["variants"].append(var)
        row["conversion_note"] = ("bge-reranker-large is XLMRobertaForSequenceClassification on xlm-roberta-large (the bundled config); throughput = 1000 x batch / compute time "
                                  "(the source's definition), one forward of a static batch at 512 tokens; " +
                                  ("OM offline model on each 310P of the card, the source's x2 applied (copies 2)" if duo else "fp16 'accelerated' values under the ATB model, mixed_float16 values under runtime om"))
        out.append(row)
    return out


def op_row(r, name, op, dtype, vals, note, weight=1.0, suffix=""):
    return {"id": r["id"] + suffix, "stage": "operator", "model": one_op_graph(name, op, dtype),
            "scenario": {"operator": dict(OP_SCENARIO["operator"], timing="device"), "workload": {"batch": 1}},
            "values": vals, "conversion_note": note, "weight": weight, "family": name}


def convert_qwq_ffn(r):
    m = r["measured"]
    shapes = {"gate_up_proj_bf16": (5120, 13824, "bf16"), "down_proj_bf16": (6912, 5120, "bf16"), "gate_up_proj_w8a8": (5120, 13824, "int8")}
    rows = []
    for k, (kk, n, dt) in shapes.items():
        v = m[k]
        op = {"op": "matmul", "batch": 1, "m": 1, "n": n, "k": kk, "dtype": dt}
        row = op_row(r, "matmul", op, dt, [dict(value(k, v["value"], "us", "model_time_ms"), unit_stated=v["unit"])],
                     "decode GEMV of one token on one TP4 rank, shape per rank from the model config as the row derives it ([1,%d] x [%d,%d]); "
                     "kernel time from the profile; the value is approximate ('about')" % (kk, kk, n), weight=0.5, suffix="/" + k)
        row["chip"], row["chip_note"] = A2_UNSTATED
        rows.append(row)
    return rows


def convert_swiglu(r):
    m = r["measured"]
    shapes = {"fp16_15000x2048": (15000, 1024), "fp16_2560x2048": (2560, 1024), "fp16_10000x65536": (10000, 32768),
              "fp16_268435456_1d": (1, 134217728), "fp16_100x65536x100": (100 * 65536, 50), "fp16_4x32": (4, 16)}
    rows = []
    for k, (rows_, half) in shapes.items():
        v = m[k]
        op = {"op": "vector", "kind": "swi_glu", "rows": rows_, "row_len": half, "dtype": "fp16"}
        row = op_row(r, "swiglu", op, "fp16", [dict(value(k, v["value"], "ms", "model_time_ms"), unit_stated=v["unit"])],
                     "torch_npu swiglu (FlagGems' baseline column, kernel mode): the last dim halves (silu(a) * b); %d rows of %d outputs" % (rows_, half),
                     suffix="/" + k)
        row["chip"], row["chip_note"] = A2_UNSTATED
        rows.append(row)
    return rows


def convert_gmm(r):
    m = r["measured"]
    rows = []
    for k, v in m.items():
        mm, kk, nn, e = [int(x) for x in re.findall(r"\d+", k)]
        op = {"op": "grouped_matmul", "groups": e, "m": mm, "n": nn, "k": kk, "dtype": "fp16"}
        row = op_row(r, "grouped_matmul", op, "fp16", [dict(value(k, v["value"], "ms", "model_time_ms"), unit_stated=v["unit"])],
                     "torch_npu grouped matmul of %d experts over %d rows, M/E = %d rows each (the group_list values are not printed: "
                     "an even split assumed); every expert's [K, N] weight is read once" % (e, mm, mm // e), suffix="/" + k)
        row["chip"], row["chip_note"] = A2_UNSTATED
        rows.append(row)
    return rows


# DeepEP on the A3 SuperPOD: 16 dies share one node's HCCS; EP32 and up cross the SuperPOD fabric.
def ep_link(ep):
    return "hccs" if ep <= 16 else "super_pod"


def moe_op(kind, form, st, ep, dt_bytes):
    """DeepEP's dispatch or combine as the operator stage's MoE exchange (Op::MoeComm): one rank's
    tokens of `hidden` elements, each to top-k experts spread over the EP ranks, INT8 dispatch
    (with its per-token scale) and BF16 combine, on the link the EP group crosses."""
    return {"op": "moe_comm", "phase": kind, "form": form, "tokens": int(st["tokens_per_batch"]), "hidden": int(st["hidden"]),
            "top_k": int(st["topk"]), "ranks": ep, "dtype": "int8" if dt_bytes == 1 else "bf16", "link": ep_link(ep)}


def convert_deepep_normal(r):
    """Normal dispatch/combine: 4096 tokens per rank, hidden 7168, top-8; one row per (EP,
    direction), each compared as the tool's rate (a one-point sweep) on the link the EP group
    crosses. The rate is the tool's own: tests/python/deepep/test_intranode.py at the README's
    commit (sgl-kernel-npu@b2e93094, 'Add performace of normal and low latency dispatch/combine
    comm') prints dispatch_bf16_recv_bytes / t for both directions, where
    dispatch_bf16_recv_bytes = recv_x.numel() x 2: the BF16 bytes of the rows a rank receives,
    one row per (token, expert) pair (the output is expanded per local expert), whatever the
    wire type; with experts uniform that is tokens x top-k x hidden x 2 per rank."""
    st, m = r["setup"], r["measured"]
    rows = []
    for k, v in m.items():
        kind, ep = re.match(r"(dispatch|combine)_bw_EP(\d+)", k).groups()
        ep = int(ep)
        dt_bytes = 1 if kind == "dispatch" else 2
        # The tool counts BF16 bytes in both directions (see the docstring).
        nbytes = int(st["tokens_per_batch"] * st["topk"] * st["hidden"] * 2)
        op = moe_op(kind, "deepep_normal", st, ep, dt_bytes)
        pt = {"model": one_op_graph("moe_" + kind, op, "int8" if dt_bytes == 1 else "bf16"), "work": float(nbytes)}
        rows.append({"id": "%s/%s-EP%d" % (r["id"], kind, ep), "stage": "operator", "chip": A3[0], "chip_note": A3[1] + "; the SuperPOD fabric beyond 16 dies",
                     "scenario": {"operator": dict(OP_SCENARIO["operator"], timing="device"), "workload": {"batch": 1}},
                     "sweep": [pt], "model": pt["model"], "family": "moe_comm",
                     "values": [dict(value(k, v["value"], "GB/s", "best_rate"), unit_stated=v["unit"])],
                     "conversion_note": ("DeepEP normal %s at EP%d as the moe_comm operator in its deepep_normal form (DeepEP-Ascend's CAM kernels: a row per (token, expert) "
                                         "pair, every peer at once) of %d tokens x top-%d x hidden %d at %d B per element (%s) on the %s; the rate is compared in the "
                                         "tool's own definition: its test at the README's commit (sgl-kernel-npu@b2e93094 tests/python/deepep/test_intranode.py) divides "
                                         "recv_x.numel() x 2 (the BF16 bytes of the rows a rank receives, a row per (token, expert)) by the time in both directions, so "
                                         "the work is tokens x top-k x hidden x 2 even for the INT8 dispatch" % (
                                             kind, ep, st["tokens_per_batch"], st["topk"], st["hidden"], dt_bytes,
                                             "INT8" if dt_bytes == 1 else "BF16", "node's HCCS" if ep <= 16 else "SuperPOD fabric"))})
    return rows


def convert_deepep_ll(r):
    """Low-latency dispatch/combine at 128 tokens: the latencies are compared as times (the
    bandwidths are the same runs' bytes / latency)."""
    st, m = r["setup"], r["measured"]
    rows = []
    for k, v in m.items():
        kind, what, ep = re.match(r"(dispatch|combine)_(latency|bw)_EP(\d+)", k).groups()
        if what == "bw":
            continue
        ep = int(ep)
        dt_bytes = 1 if kind == "dispatch" else 2
        nbytes = int(st["tokens_per_batch"] * st["topk"] * st["hidden"] * dt_bytes)
        op = moe_op(kind, "deepep_low_latency", st, ep, dt_bytes)
        vals = [value(k, v["value"], "us", "model_time_ms")]
        bw = "%s_bw_EP%d" % (kind, ep)
        if bw in m:
            vals.append(skip(bw, m[bw]["value"], m[bw]["unit"], "the same run's bytes / latency; the latency is compared"))
        rows.append({"id": "%s/%s-EP%d" % (r["id"], kind, ep), "stage": "operator", "chip": A3[0], "chip_note": A3[1],
                     "model": one_op_graph("moe_" + kind, op, "int8" if dt_bytes == 1 else "bf16"), "family": "moe_comm",
                     "scenario": {"operator": dict(OP_SCENARIO["operator"], timing="device"), "workload": {"batch": 1}},
                     "values": vals,
                     "conversion_note": "DeepEP low-latency %s at EP%d as the moe_comm operator in its deepep_low_latency form (no layout exchange, a copy per (token, expert), every peer at once): %d tokens x top-%d x hidden %d x %d B per rank on the %s" % (
                         kind, ep, st["tokens_per_batch"], st["topk"], st["hidden"], dt_bytes, "node's HCCS" if ep <= 16 else "SuperPOD fabric")})
    return rows


# ModelLink rows whose model is bundled (assets/models/SOURCES.md for the set-3 additions).
MODELLINK_MODELS = {"Mistral-7B": "mistral-7b", "Qwen1.5-7B": "qwen1.5-7b", "CodeLlama-34B": "codellama-34b", "InternLM-7B": "internlm-7b",
                    "Yi-34B": "yi-34b", "Aquila2-7B": "aquila2-7b", "Aquila2-34B": "aquila2-34b", "Qwen1.5-14B": "qwen1.5-14b", "Gemma-7B": "gemma-7b"}


# What each bundled config is, where it is not the measured checkpoint's own file (SOURCES.md).
MODELLINK_CONFIG_NOTES = {
    "qwen1.5-14b": "Qwen1.5-14B as the Qwen1.5-14B-Chat config Qwen publishes (the chat model keeps the base model's widths)",
    "aquila2-7b": "Aquila2-7B as BAAI's config at the stored revision (vocabulary 143973); the README downloads the repository's main at run time, whose vocabulary in mid-2024 is not recorded",
    "aquila2-34b": "Aquila2-34B as BAAI's config at the stored revision (vocabulary 143973); the README downloads the repository's main at run time, whose vocabulary in mid-2024 is not recorded",
    "gemma-7b": "Gemma-7B as the config of a full fine-tune of google/gemma-7b (same widths; the original repository's file was not reachable); Gemma's tied embedding is not stated in the file",
    "codellama-34b": "CodeLlama-34B as mlc-llm's preset of its config (vocabulary 32016 there; fine-tunes of CodeLlama-34b-hf publish 32000), carried inline",
    "internlm-7b": "InternLM-7B as mlc-llm's InternLM(-Chat)-7B preset (the same widths), carried inline; its QKV/O biases are not read",
}


def convert_modellink(r):
    """ModelLink example-README pretraining throughput (tokens/s per NPU), Megatron's schedule."""
    st, m = r["setup"], r["measured"]
    model = MODELLINK_MODELS.get(st["model"].split(",")[0])
    npus = int(st["npus"])
    tp, pp = int(st["tp"]), int(st.get("pp", 1))
    flags = st.get("flags", "")
    space = fixed(tp=tp, pp=pp, dp=npus // (tp * pp), micro_batch=int(st["micro_batch"]), precision="fp16" if "fp16" in flags else "bf16",
                  sequence_parallel="on" if "sequence-parallel" in flags else "off",
                  optimizer_sharding="distributed_optimizer" if "distributed optimizer" in flags else "zero0")
    row = {"stage": "training", "model": model_ref(model),
           "scenario": {"workload": {"micro_batch": int(st["micro_batch"]), "seq_len": int(st["seq_len"]), "global_batch": int(st["global_batch"])},
                        "training": {"chips": npus, "gradient_accumulation_fusion": False}, "space": space}}
    vals = []
    for k, v in m.items():
        if k == "tokens_per_s_per_npu":
            vals.append(dict(value(k, v["value"], "tokens/s/NPU", "tokens_per_s", per_chip=True), unit_stated=v["unit"]))
        elif k == "step_time" or k == "samples_per_s":
            vals.append(skip(k, v["value"], v["unit"], "the same run as tokens/s per NPU; compared once"))
        else:
            vals.append(skip(k, v["value"], v["unit"], "memory is not compared"))
    row["values"] = vals
    notes = ["ModelLink 2024 example README: the flags the row lists (%s); --no-gradient-accumulation-fusion as every ModelLink example script of the time passes" % flags]
    if model in MODELLINK_CONFIG_NOTES:
        notes.append(MODELLINK_CONFIG_NOTES[model])
    if model == "mistral-7b":
        notes.append("Mistral's 4096-token sliding window is priced as full causal attention over the 32K sequence (Tunelab's flash attention has no window), an upper bound on its attention time")
    row["conversion_note"] = "; ".join(notes)
    return row


# Dynamic chunked pipeline parallel (vLLM-Ascend's CPP). The feature guide's table gives TTFT of
# one long prompt with and without dynamic chunks; the DeepSeek-V3.1 case's launch is the same
# project's tutorial for the feature (docs/source/tutorials/features/dynamic_chunked_pipeline_parallel.md:
# DeepSeek-V3.1-w8a8 on one Atlas 800T A3 server of 16 dies, --tensor-parallel-size 8
# --pipeline-parallel-size 2 --enable-expert-parallel --max-num-batched-tokens 32768, prefix cache
# off, min_chunk 4096, HCCL_OP_EXPANSION_MODE=AIV, one output token in its calibration data).
CPP_TUTORIAL = "vllm-project/vllm-ascend :: docs/source/tutorials/features/dynamic_chunked_pipeline_parallel.md (Startup Script)"


def convert_dcpp(r):
    m = r["measured"]
    # Tunelab pipelines prefill in the prefill instance of a disaggregated layout: the stated
    # 16-die TP8 x PP2 server is that instance, and a second A3 node takes the one output token
    # (its KV push is ~0.1% of a 128K prefill: about 20 ms of 22.5 s).
    serving = {"mode": "scheduler", "engine": "vllm-ascend", "arrival": "burst", "requests": 1, "length_distribution": "fixed",
               "block_size": 128, "max_num_batched_tokens": [32768], "chunked_prefill": ["on"], "hccl_expansion": "aiv"}
    row = {"stage": "deployment", "model": "deepseek-v3", "chip": A3[0], "chip_note": A3[1] + "; the prefill instance is one node (TP8 x PP2), the decode side a second node",
           "scenario": {"workload": {"batch": 32, "input_len": 131072, "output_len": 1},
                        "deployment": {"tile_operators": False, "precisions": ["w8a8"], "serving": serving,
                                       "cluster": {"nodes": 2, "disaggregation": ["1P1D"],
                                                   "prefill_tp": [8], "prefill_pp": [2], "prefill_chunking": ["dynamic", "static"]}},
                        "space": fixed(batch=32, precision="w8a8", tp=16, dp=1, launch="graph", expert_parallel="on", pd="1P1D",
                                       prefill_tp=8, prefill_pp=2)},
           "values": [], "variants": [], "family": "deepseekv3"}
    for chunking, key in (("dynamic", "dsv31_w8a8_128k_TTFT_CPP"), ("static", "dsv31_w8a8_128k_TTFT_PP")):
        row["variants"].append({"suffix": "dsv31-128k-" + chunking, "space": fixed(prefill_chunking=chunking),
                                "values": [dict(value(key, m[key]["value"], "s", "ttft_mean_ms"), unit_stated=m[key]["unit"])]})
    rest = []
    for k, v in m.items():
        if k.startswith("qwen3_235b"):
            rest.append(skip(k, v["value"], v["unit"], "the 256K Qwen3-235B case's layout (PP and TP degree) and weights are stated nowhere in the guide or its tutorial"))
        elif k.startswith("dsv31_input_tps"):
            rest.append(skip(k, v["value"], v["unit"], "4K-64K prompts (mean 32K) at a 99% prefix-cache hit: the throughput is that of cache reuse, whose hit pattern is not stated"))
    row["variants"][0]["values"] += rest
    row["conversion_note"] = ("DeepSeek-V3.1 (the bundled deepseek-v3 config: the same architecture) W8A8, one 128K prompt at concurrency 1, the launch of the same "
                              "project's CPP tutorial (" + CPP_TUTORIAL + "): TP8 x PP2 with expert parallelism on one A3 server, 32768 tokens per step as the "
                              "first chunk, min_chunk 4096, AIV collectives; dynamic (CPP) against static chunks (PP). Tunelab pipelines prefill inside the "
                              "prefill instance of a 1P1D layout, so a second A3 node (TP16, not part of the measurement) takes the one output token; the KV "
                              "push it adds is about 0.1% of the TTFT")
    return row


def convert_serving3(r):
    rid = r["id"]
    fn = {"srv-vllm-kimi-k2-thinking-a3-tp16-concurrency-sweep": convert_kimi_sweep,
          "srv-vllm-kimi-k2-thinking-a3-tp16-rate1": convert_kimi_rate1,
          "srv-vllm-qwen3-next-a3-2node-tp4-c32": convert_qwen3_next,
          "srv-vllm-dcpp-long-prefill-ttft-a3": convert_dcpp,
          "srv-vllm-qwq32b-tp4-bs1-graph-v091-vs-v011": convert_qwq_pair,
          "inf-mindie-bge-reranker-large-800ia2-300iduo": convert_reranker}.get(rid)
    if fn is None:
        import convert_set3_serving
        fn = convert_set3_serving.CONVERTERS.get(rid)
    if fn is None:
        return out_of_reach(r, REASONS.get(rid, "no conversion for this row"), A3 if "A3" in r["chip"] else None)
    return fn(r)


def convert_kontext_lora(r):
    """FLUX.1-Kontext LoRA (MindSpeed-MM examples/diffusers/flux-kontext): the README row (8 NPUs,
    batch 2, 1024 px, bf16) with its launch script (finetune_kontext_dreambooth_lora_deepspeed_bf16.sh
    @37ccda36: --rank=16, --gradient_checkpointing, --cache_latents, a caption column so the text
    encoders run every step, (reference, target) pairs; images/s = batch x 8 x it/s)."""
    from convert_measurements import finetune_row
    m = r["measured"]
    note = ("FLUX.1-Kontext-dev LoRA rank 16 at 1024x1024, batch 2 per NPU on 8, bf16, as the directory's launch script sets them "
            "(MindSpeed-MM@37ccda36 examples/diffusers/flux-kontext/finetune_kontext_dreambooth_lora_deepspeed_bf16.sh): gradient checkpointing, "
            "VAE latents cached once (--cache_latents), the instruction captions encoded every step; each sample a (reference, target) pair; "
            "DeepSpeed ZeRO-2 from the sibling flux example's bf16_accelerate_config.yaml (the LoRA states it shards are a few MB); chip: "
            "Atlas 900 A2 PODc, SKU not stated, compared against 910B2")
    row = finetune_row(r, "", "flux.1-kontext-dev", 8, 2, 1, {"resolution": 1024, "precomputed": ["vae"], "lora_rank": 16, "framework": "deepspeed"},
                       dict(precision="bf16", optimizer_sharding="zero2", recompute="full", sequence_parallel="off"),
                       [dict(value("FPS", m["FPS"]["value"], "samples/s", "samples_per_s"), unit_stated=m["FPS"]["unit"])], note)
    row["chip"], row["chip_note"] = A2_UNSTATED
    return row


FLUX2_TRAIN = "Ascend/MindSpeed-MM@37ccda36 examples/diffusers/flux2/finetune_{}_flux2_dreambooth_lora_fsdp_bf16.sh"


def convert_flux2_lora(r):
    """FLUX.2-dev DreamBooth LoRA (MindSpeed-MM examples/diffusers/flux2): the README's T2I and I2I
    rows with the directory's two launch scripts (finetune_t2i/i2i_flux2_dreambooth_lora_fsdp_bf16.sh
    @37ccda36: batch 1, resolution 1024, --rank=16, --gradient_checkpointing, --cache_latents,
    a caption column, bf16, FSDP through bf16_accelerate_config.yaml; images/s = batch x 8 x it/s).
    diffusers' train_dreambooth_lora_flux2.py (the script they run) caches the prompt embeddings of
    a captioned dataset before training (prompt_embeds_cache) and, with --cache_latents, the VAE
    latents, so neither encoder runs per step; the I2I script's condition image is VAE-encoded
    and its tokens join the sequence (the flux.2-dev-i2i pipeline)."""
    from convert_measurements import finetune_row
    m = r["measured"]
    rows = []
    for suffix, key, model, script in (("-t2i", "FPS_t2i_finetune", "flux.2-dev", "t2i"), ("-i2i", "FPS_i2i_finetune", "flux.2-dev-i2i", "i2i")):
        note = ("FLUX.2-dev DreamBooth LoRA rank 16 at 1024x1024, batch 1 per NPU on 8, bf16, as " + FLUX2_TRAIN.format(script) + " sets them: "
                "gradient checkpointing, VAE latents cached (--cache_latents) and the captions' Mistral embeddings cached before training "
                "(diffusers@04c6304e examples/dreambooth/train_dreambooth_lora_flux2.py: prompt_embeds_cache for a captioned dataset), so only "
                "the transformer runs per step; FSDP full sharding of the frozen 32 B transformer (the script's accelerate config) read as "
                "ZeRO-3; " + ("each sample a (condition, target) pair whose condition tokens join the sequence (the README: I2I doubles the "
                "tokens); " if script == "i2i" else "") + "LoRA on the attention projections (the script's default target set is not restated "
                "in the row); the scripts name FLUX.2-Kontext-dev as model_name, read as FLUX.2-dev (the README's model; the same "
                "Flux2Transformer2DModel); chip: Atlas 900 A2 PODc, SKU not stated, compared against 910B2")
        row = finetune_row(r, suffix, model, 8, 1, 1, {"resolution": 1024, "precomputed": ["text_encoders", "vae"], "lora_rank": 16, "framework": "deepspeed"},
                           dict(precision="bf16", optimizer_sharding="zero3", recompute="full", sequence_parallel="off"),
                           [dict(value(key, m[key]["value"], "samples/s", "samples_per_s"), unit_stated=m[key]["unit"])], note)
        row["chip"], row["chip_note"] = A2_UNSTATED
        rows.append(row)
    return rows


def convert_hidream_ft(r):
    """HiDream-I1 fine-tuning (MindSpeed-MM examples/diffusers/hidream): the README's table calls the
    row a full fine-tune, but the directory's only training script, the one the README says to run
    ("本任务主要提供dreambooth_lora_hidream微调脚本"), is a LoRA run: finetune_hidream_dreambooth_lora_deepspeed_bf16.sh
    @37ccda36 (batch 8, resolution 512, --rank=8, --gradient_checkpointing, bf16, DeepSpeed ZeRO-2
    from bf16_accelerate_config.yaml; FPS = batch x 8 x it/s). diffusers' train_dreambooth_lora_hidream.py
    caches the captions' T5 / Llama / pooled embeddings before training (t5_prompt_cache), and
    without --cache_latents the VAE encodes every batch."""
    from convert_measurements import finetune_row
    m = r["measured"]
    note = ("HiDream-I1-Full LoRA rank 8 at 512x512, batch 8 per NPU on 8, bf16, DeepSpeed ZeRO-2, gradient checkpointing, as "
            "Ascend/MindSpeed-MM@37ccda36 examples/diffusers/hidream/finetune_hidream_dreambooth_lora_deepspeed_bf16.sh and its "
            "bf16_accelerate_config.yaml set them: the README's table says full fine-tune (全参微调) but the directory ships only this "
            "LoRA script, which its README says to run, and the table's batch 8 is the script's; the captions' embeddings cached before "
            "training (diffusers@02372ba0 examples/dreambooth/train_dreambooth_lora_hidream.py: t5_prompt_cache / llama3_prompt_cache), "
            "the VAE encodes every batch (no --cache_latents); LoRA on the attention projections; the hidream-i1-full pipeline's "
            "Llama-3.1-8B is priced with Meta-Llama-3-8B's shape (it does not run per step here); weight 0.5 for the table's "
            "contradicting label; chip: Atlas 900 A2 PODc, SKU not stated, compared against 910B2")
    row = finetune_row(r, "", "hidream-i1-full", 8, 8, 1, {"resolution": 512, "precomputed": ["text_encoders"], "lora_rank": 8, "framework": "deepspeed"},
                       dict(precision="bf16", optimizer_sharding="zero2", recompute="full", sequence_parallel="off"),
                       [dict(value("FPS", m["FPS"]["value"], "samples/s", "samples_per_s"), unit_stated=m["FPS"]["unit"])], note)
    row["chip"], row["chip_note"] = A2_UNSTATED
    row["weight"] = 0.5
    return row


SANA_TRAIN = "Ascend/MindSpeed-MM@37ccda36 examples/diffusers/sana/finetune_sana_dreambooth_lora_deepspeed_bf16.sh"


def convert_sana_ft(r):
    """Sana fine-tuning (MindSpeed-MM examples/diffusers/sana): the README's table calls the row a
    full fine-tune (全参微调) at batch 8 on 8 NPUs without a resolution, but the directory's only
    training script, the one its README says to run, is a DreamBooth LoRA run:
    finetune_sana_dreambooth_lora_deepspeed_bf16.sh @37ccda36 (Sana_1600M_4Kpx_BF16_diffusers,
    resolution 1024, batch 8, --gradient_checkpointing, bf16, DeepSpeed ZeRO-2 from its
    bf16_accelerate_config.yaml as the README quotes it; FPS = batch x 8 x it/s). diffusers'
    train_dreambooth_lora_sana.py (@81bd689c; the README pins cd0a4a82) defaults --rank 4 and,
    with a caption column, encodes each batch's captions with Gemma-2 every step (compute_text_embeddings
    inside the loop) and VAE-encodes every batch (no --cache_latents)."""
    from convert_measurements import finetune_row
    m = r["measured"]
    note = ("Sana-1600M LoRA rank 4 at 1024x1024, batch 8 per NPU on 8, bf16, DeepSpeed ZeRO-2, gradient checkpointing, as " + SANA_TRAIN +
            " and its README set them: the table says full fine-tune (全参微调) and states no resolution, but the directory ships only this LoRA "
            "script, which its README says to run, and the table's batch 8 is the script's; its model is Sana_1600M_4Kpx_BF16_diffusers (the "
            "same SanaMS_1600M_P1_D20 transformer as the bundled sana-1600m-1024px pipeline: 20 blocks of 2240, sample_size 128 instead of 32, "
            "which sets only the default size) trained at --resolution 1024; diffusers' train_dreambooth_lora_sana.py (--rank default 4, "
            "max_sequence_length 300, no complex human instruction) encodes each batch's captions with Gemma-2-2B every step (a caption "
            "column) and VAE-encodes every batch with the DC-AE (no --cache_latents; the README sets the VAE to bf16); LoRA on the default "
            "target modules; weight 0.5 for the table's contradicting label; chip: Atlas 900 A2 PODc, SKU not stated, compared against 910B2")
    row = finetune_row(r, "", "sana-1600m-1024px", 8, 8, 1, {"resolution": 1024, "lora_rank": 4, "framework": "deepspeed"},
                       dict(precision="bf16", optimizer_sharding="zero2", recompute="full", sequence_parallel="off"),
                       [dict(value("FPS", m["FPS"]["value"], "samples/s", "samples_per_s"), unit_stated=m["FPS"]["unit"])], note)
    row["chip"], row["chip_note"] = A2_UNSTATED
    row["weight"] = 0.5
    return row


MM_INFER = "Ascend/MindSpeed-MM@{} examples/diffusers/{}"


def convert_mm_t2i(r):
    """The MindSpeed-MM inference tables of HiDream-I1, Sana and FLUX.1-Kontext (E2E it/s, bf16,
    '8p'), each priced as its directory's inference script runs it (one process, DEVICE = "npu":
    the tables' 8p column is the machine, not a parallel layout). HiDream (v2.2.0
    infer_hidream_text2img_bf16.py + prompt_utils.py): HiDreamImagePipeline at 4096 x 4096, which
    the pipeline rescales to its 1024 x 1024 maximum area, 50 steps, guidance 2.0 with a negative
    prompt (CFG batch of 2), model CPU offload. Sana (v2.2.0 infer_sana_text2img_bf16.py):
    Sana_1600M_4Kpx_BF16_diffusers at 4096 x 4096, 28 steps, guidance 2.0 (CFG batch of 2), the
    cross-attention on the NPU flash kernel, VAE fp32 tiled. FLUX.1-Kontext (master
    infer_kontext_text2img_lora_bf16.py, the table's 'LoRA文生图'): FluxKontextPipeline.__call__
    with image=, i.e. an edit of a 1024 x 1024 image (the second call edits the first's output),
    1024 x 1024, 50 steps, embedded guidance 2.5 (true_cfg_scale stays 1.0: no CFG batch), the
    LoRA of the fine-tune loaded unmerged. it/s read as tqdm's rate of the denoising loop."""
    from convert_measurements import diffusion_row
    m = r["measured"]
    pins = dict(precision="bf16", attention="flash", launch="eager", sp=1, cfg_parallel="off")
    hid = MM_INFER.format("4c75a551", "hidream/infer_hidream_text2img_bf16.py and prompt_utils.py")
    sana = MM_INFER.format("4c75a551", "sana/infer_sana_text2img_bf16.py")
    kon = MM_INFER.format("57069cd5", "flux-kontext/infer_kontext_text2img_lora_bf16.py")
    cases = (("-hidream", "hidream_e2e", "hidream-i1-full", {"steps": 50, "height": 1024, "width": 1024, "cfg": True},
              "HiDream-I1-Full with Meta-Llama-3.1-8B-Instruct as the fourth encoder, as " + hid + " run it: HiDreamImagePipeline asked "
              "for 4096 x 4096, which it rescales to its maximum area (default_sample_size 128 x vae_scale_factor 8 = 1024 x 1024), 50 steps, "
              "guidance 2.0 with a negative prompt (CFG batch of 2), torch 2.6; enable_model_cpu_offload's per-call moves are outside the "
              "denoising loop, its per-forward empty_cache is not priced"),
             ("-sana", "sana_e2e", "sana-1600m-1024px", {"steps": 28, "height": 4096, "width": 4096, "cfg": True},
              "Sana_1600M_4Kpx_BF16_diffusers (the bundled sana-1600m-1024px pipeline's transformer, DC-AE and Gemma-2 at the 4K model's size) as "
              + sana + " runs it: 4096 x 4096 (16384 latent tokens), 28 steps, guidance 2.0 (CFG batch of 2), the cross-attention on the NPU "
              "flash kernel, torch 2.1; the 4K model's position-embedding interpolation is not priced"),
             ("-kontext", "flux_kontext_lora_e2e", "flux.1-kontext-dev", {"steps": 50, "height": 1024, "width": 1024, "cfg": False, "reference_images": 1, "lora_rank": 16},
              "FLUX.1-Kontext-dev with the fine-tune's LoRA, as " + kon + " runs it (the table's 'LoRA文生图'): FluxKontextPipeline called with "
              "image= (an edit: the reference image's 4096 tokens join the 4096 output and 512 T5 tokens in every block; the second call edits "
              "the first's 1024 x 1024 output), 1024 x 1024, 50 steps, embedded guidance 2.5 (true_cfg_scale 1.0: no CFG batch), attention "
              "backend _native_npu (the fused kernel), torch 2.7.1; the fine-tune's LoRA (./logs/pytorch_lora_weights.safetensors, the output_dir of "
              "finetune_kontext_dreambooth_lora_deepspeed_bf16.sh, --rank=16, diffusers' default FLUX targets) loaded by load_lora_weights "
              "without fuse_lora, so PEFT runs it unmerged beside each adapted layer (diffusion.lora_rank 16)"))
    rows = []
    for suffix, key, model, opts, what in cases:
        o = dict(opts, chips=1, framework="diffusers")
        note = (what + "; bf16, eager, one chip (the script's single process on DEVICE npu; the table's 8p is the machine, not a parallel "
                "layout); it/s per denoising step compared with the step time; weight 0.5 (the table does not restate the script's "
                "settings); chip: Atlas 900 A2 PODc, SKU not stated, compared against 910B2")
        row = diffusion_row(r, suffix, A2_UNSTATED, model, o, pins,
                            [dict(value(key, m[key]["value"], "steps/s", "step_ms"), unit_stated=m[key]["unit"])], note=note)
        row["weight"] = 0.5
        rows.append(row)
    return rows


FLUX2_INFER = "Ascend/MindSpeed-MM@57069cd5 examples/diffusers/flux2/infer_flux2_text2img.py"


def convert_flux2_infer(r):
    """FLUX.2-dev inference (MindSpeed-MM examples/diffusers/flux2, the README's 推理 table, it/s per
    denoising step): infer_flux2_text2img.py @57069cd5 loads the transformer in bf16
    (Flux2Pipeline.from_pretrained(torch_dtype=torch.bfloat16)), enables Ulysses context
    parallelism of the world size and wraps it in torch FSDP (FullyShardedDataParallel) with
    FULL_SHARD over the world, one unit per Flux2TransformerBlock / Flux2SingleTransformerBlock and
    no MixedPrecision: each block's flat bf16 parameter is all-gathered before its forward and
    freed after it (inference: once per block per step, no backward), on FSDP's unshard stream
    (the next block's gather runs while this one computes; limit_all_gathers keeps two in
    flight). 1024 x 1024, 20 steps, guidance 1 (embedded guidance, no CFG batch), attention
    backend "native" (torch SDPA, the fused attention on NPU), eager; the prompt is encoded before
    the timed call. The world size: the README's own launch for both tasks is
    `accelerate launch --num_processes=4` ("单机四卡进行分布式推理"), and infer_flux2_img2img.py
    edits ./infer_result/flux2.fsdp_ulysses4.png, the file the text-to-image script writes only
    when world_size is 4; the table's "8p" column is the machine (the same README family's
    HiDream, Sana and Kontext tables say 8p for single-process scripts). Priced on 4 NPUs.
    I2I adds one reference image of the output's size (the flux.2-dev-i2i pipeline)."""
    from convert_measurements import diffusion_row
    m = r["measured"]
    base = {"steps": 20, "height": 1024, "width": 1024, "cfg": False, "chips": 4, "framework": "diffusers", "fsdp": True}
    pins = dict(precision="bf16", attention="flash", launch="eager", sp=4, sp_mode="ulysses", cfg_parallel="off")
    note = ("FLUX.2-dev as " + FLUX2_INFER + " (and infer_flux2_img2img.py) runs it: bf16 weights, torch FSDP FULL_SHARD of the transformer "
            "(one unit per block, no MixedPrecision: the gathers are bf16, once per block per step, on FSDP's unshard stream beside the "
            "compute) and of the text encoder (diffusion.fsdp), Ulysses sequence parallelism of the world size, 1024 x 1024, 20 steps, "
            "guidance 1 without CFG, torch SDPA (the fused attention on NPU), eager. World size 4: the README launches both tasks with "
            "--num_processes=4 and the I2I script's input is flux2.fsdp_ulysses4.png, which the T2I script writes only at world size 4; "
            "the table's 8p is the machine (its sibling tables say 8p for single-process scripts); weight 0.5 for that reading. "
            "it/s per denoising step compared with the step time; chip: Atlas 900 A2 PODc, SKU not stated, compared against 910B2")
    rows = []
    for suffix, key, model in (("-t2i", "e2e_it_per_s_t2i", "flux.2-dev"), ("-i2i", "e2e_it_per_s_i2i", "flux.2-dev-i2i")):
        row = diffusion_row(r, suffix, A2_UNSTATED, model, dict(base), pins,
                            [dict(value(key, m[key]["value"], "steps/s", "step_ms"), unit_stated=m[key]["unit"])], note=note)
        row["weight"] = 0.5
        rows.append(row)
    return rows


# Llama2-7B 32K fine-tuning with context parallelism (MindSpeed-LLM's long-sequence fine-tuning
# doc): ring (megatron_cp_algo) against Ulysses at TP2 x CP4, TFLOP/s per NPU.
CP_SCRIPT = "Ascend/MindSpeed-LLM@bffb73d7 examples/mcore/llama2/tune_llama2_7b_full_pack_32k.sh"


def convert_cp4(r):
    st, m = r["setup"], r["measured"]
    space = fixed(tp=2, pp=1, cp=4, dp=1, micro_batch=1, precision="bf16", sequence_parallel="on", optimizer_sharding="distributed_optimizer")
    row = {"stage": "training", "model": "llama-2-7b", "chip": "910B2", "chip_note": "SKU not stated; compared against 910B2",
           "scenario": {"workload": {"micro_batch": 1, "seq_len": int(st["seq_len"]), "global_batch": int(st["global_batch"])},
                        "training": {"chips": 8, "gradient_accumulation_fusion": False, "overlap_grad_reduce": True, "overlap_param_gather": True,
                                     "attention_mask_type": "general"},
                        "space": space},
           "values": [], "variants": [], "weight": 0.5}
    for algo, key, mem in (("ring", "TFLOPS_per_npu_megatron_cp_algo", "memory_megatron_cp"), ("ulysses", "TFLOPS_per_npu_ulysses_cp_algo", "memory_ulysses_cp")):
        row["variants"].append({"suffix": algo, "space": {}, "scenario": {"training": {"context_parallel_algo": algo}},
                                "values": [dict(value(key, m[key]["value"], "TFLOP/s", "model_tflops_per_chip"), unit_stated=m[key]["unit"]),
                                           skip(mem, m[mem]["value"], m[mem]["unit"], "memory is not compared")]})
    row["conversion_note"] = ("Llama2-7B (the bundled llama-2-7b) fine-tuned at 32K on 8 NPUs, TP2 x CP4, gbs 16, ring (megatron_cp_algo) against Ulysses "
                              "attention; the doc's table gives no launch script, so the same repository's Llama2-7B 32K TP2/CP4 packed fine-tuning "
                              "script gives the rest (" + CP_SCRIPT + "): micro-batch 1, bf16, --sequence-parallel, --use-distributed-optimizer, "
                              "--overlap-grad-reduce / --overlap-param-gather, no recomputation, flash attention. The packed documents' lengths "
                              "(the dataset's actual_seq_len under --reset-attention-mask) are not stated: the sequence is priced as one 32K "
                              "document, an upper bound on attention time, while the TFLOP/s convention (6N + 12LHQT per token) counts the full "
                              "sequence either way. The table's attention-mask-type is general for both: MindSpeed's ring attention then runs "
                              "GeneralAttentionStrategy (mindspeed/core/context_parallel/ring_context_parallel/ring_context_parallel.py: every "
                              "ring step's q x kv block whole, sparse_mode 1 with the data's mask, no causal block skipped), priced as such "
                              "(training.attention_mask_type general); Ulysses with --reset-attention-mask runs the TND layout over "
                              "actual_seq_len (the doc's reset-attention-mask paragraph), priced as one causal document; weight 0.5")
    return row


# MindSpeed-MM's Qwen2.5-VL-72B long-video fine-tune (examples/qwen2.5vl/README.md, 长序列支持, at
# the row's commit 57069cd5): finetune_qwen2_5_vl_72b.sh with TP 8, PP 4, CP 4 (megatron_cp_algo),
# GRAD_ACC_STEP 1, --seq-length 131072, MBS 1, NPUS_PER_NODE 16; model_72b.json with the ViT's 32
# layers on the first stage, the LLM's [6, 25, 25, 24], the text decoder fully recomputed.
QWEN25VL_SCRIPT = ("Ascend/MindSpeed-MM@57069cd55a8ab16d5affe379a2e2c5f0a4d962b9 :: examples/qwen2.5vl/finetune_qwen2_5_vl_72b.sh, "
                   "model_72b.json, data_72b.json and pretrain_vlm.py get_tps")


def convert_qwen25vl_video(r):
    """Qwen2.5-VL-72B long-video full fine-tune on 8 Atlas A3 nodes. The unit: the README's
    '端到端tps' is what the script it edits prints as 'Consumed Tokens per Second': SAMPLES_PER_SECOND
    (GBS x 1000 / the mean step time in ms: the whole job's samples) x AVERAGE_TOKENS (pretrain_vlm.py
    get_tps: the language model's sequence length S x cp / dp, all-reduced over the DP group, i.e.
    the tokens of one sample). So it is the whole job's tokens per second, not per NPU."""
    st, m = r["setup"], r["measured"]
    tp, pp, cp = 8, 4, 4
    chips = 128  # 8 nodes x 16 dies (NPUS_PER_NODE=16): tp x pp x cp = 128, dp 1
    space = fixed(tp=tp, pp=pp, cp=cp, dp=chips // (tp * pp * cp), micro_batch=1, precision="bf16", sequence_parallel="off",
                  optimizer_sharding="distributed_optimizer", recompute="full")
    row = {"stage": "training", "model": "qwen2-72b", "chip": A3[0], "chip_note": A3[1] + "; 8 nodes x 16 dies = 128 ranks ('8*8(A3)': 8 nodes x 8 packages)",
           "scenario": {"workload": {"micro_batch": 1, "seq_len": int(st["seq_len"]), "global_batch": 1},
                        "training": {"chips": chips, "gradient_accumulation_fusion": False, "context_parallel_algo": "ring",
                                     "pipeline_layers": [6, 25, 25, 24]},
                        "space": space},
           "weight": 0.5}
    k = "end_to_end_tps"
    row["values"] = [dict(value(k, m[k]["value"], "tokens/s", "tokens_per_s"), unit_stated=m[k]["unit"])]
    row["conversion_note"] = (
        "Qwen2.5-VL-72B's language model is priced with the bundled qwen2-72b config: model_72b.json's text_decoder is the same network "
        "(80 layers, hidden 8192, FFN 29568, 64 heads with 8 KV groups, QKV bias, vocab 152064, rope theta 1e6); the ViT (32 layers of "
        "1280, frozen, forward only, on the first stage) is not priced: at 4 patches per language token its forward is about 2 x 0.67 G "
        "x 4 FLOP a token, under 1% of the language model's training FLOPs at 128K. Layout from the README's table and the script it edits "
        "(" + QWEN25VL_SCRIPT + "): TP8 x PP4 x CP4 ring (megatron_cp_algo) on 128 dies, DP 1, micro-batch 1, GRAD_ACC_STEP 1 so GBS 1, "
        "layers per stage [6, 25, 25, 24], full recompute of every text layer (uniform, 1 layer), --use-distributed-optimizer, "
        "--no-gradient-accumulation-fusion, no --sequence-parallel, bf16. Unit reading (decided from the code, not guessed): the script "
        "prints SAMPLES_PER_SECOND x AVERAGE_TOKENS, the whole job's samples per second times the tokens of a sample (get_tps: S x cp "
        "/ dp summed over DP), i.e. tokens per second of the whole job (1105 / 128 = 8.6 per die). The sample length is not stated: "
        "each sample is priced at the --seq-length 131072 cap (the 768-frame, 262144-pixel video cap gives about 124K visual tokens); "
        "weight 0.5 for that")
    return row


def convert_qwen_image_edit_lora(r):
    """Qwen-Image-Edit LoRA (MindSpeed-MM examples/diffsynth/qwen_image_edit, DiffSynth path): the
    README's FPS with the directory's launch script (train_qwen_image_edit_lora.sh @37ccda36:
    max_pixels 262144, --lora_rank 32, --use_gradient_checkpointing, edit_image as an extra input;
    accelerate_config.yaml: DeepSpeed ZeRO-2, bf16, 8 processes)."""
    from convert_measurements import finetune_row
    m = r["measured"]
    note = ("Qwen-Image-Edit LoRA rank 32 on 8 NPUs, bf16, DeepSpeed ZeRO-2, gradient checkpointing (MindSpeed-MM@37ccda36 "
            "examples/diffsynth/qwen_image_edit/train_qwen_image_edit_lora.sh and accelerate_config.yaml); images at most max_pixels "
            "262144 (512 x 512's area; the dataset's own sizes are not stated, so 512 x 512), each sample a target and its edit image, "
            "which DiffSynth's trainer resizes to 1024 x 1024's area before encoding it (DiffSynth-Studio examples/qwen_image/model_training/"
            "train.py passes edit_image_auto_resize: True; QwenImageUnit_EditImageEmbedder.edit_image_auto_resize: calculate_dimensions(1024 * 1024, ratio)), "
            "so its 4096 reference tokens join the target's 1024 (the qwen-image-edit pipeline's reference_side 1024); the text encoder and the VAE "
            "run every step (nothing cached), the text encoder's vision tower reading the edit image is not costed. "
            "The README's FPS is the script's batch_size (8) x 8 processes x it/s, but the script never passes batch_size to DiffSynth's "
            "train.py, whose DataLoader yields one sample per step (DiffSynth-Studio@db124fa6 diffsynth/trainers/utils.py "
            "launch_training_task: DataLoader(dataset, shuffle=True, collate_fn=lambda x: x[0])): the prediction is one sample per "
            "step per NPU and is multiplied by the script's 8 (copies 8) to read as the README's figure; weight 0.5; chip: Atlas 900 "
            "A2 PODc, SKU not stated, compared against 910B2")
    row = finetune_row(r, "", "qwen-image-edit", 8, 1, 1, {"resolution": 512, "lora_rank": 32, "framework": "deepspeed"},
                       dict(precision="bf16", optimizer_sharding="zero2", recompute="full", sequence_parallel="off"),
                       [dict(value("FPS", m["FPS"]["value"], "samples/s", "samples_per_s"), unit_stated=m["FPS"]["unit"], copies=8)], note)
    row["chip"], row["chip_note"] = A2_UNSTATED
    row["weight"] = 0.5
    return row


def convert_training3(r):
    if r["id"] == "trn-mindspeedmm-qwen-image-edit-lora-8p":
        return convert_qwen_image_edit_lora(r)
    if r["id"] == "trn-mindspeedllm-llama2-7b-32k-cp4-tflops":
        return convert_cp4(r)
    if r["id"] == "trn-mindspeedmm-qwen2.5vl-72b-a3-64npu-128k-video":
        return convert_qwen25vl_video(r)
    if r["id"].startswith("trn-modellink-") and r["setup"]["model"].split(",")[0] in MODELLINK_MODELS:
        return convert_modellink(r)
    if r["id"] == "trn-mindspeedmm-flux-kontext-lora-8p-1024":
        return convert_kontext_lora(r)
    if r["id"] == "trn-mindspeedmm-flux2-dreambooth-lora-8p-1024":
        return convert_flux2_lora(r)
    if r["id"] == "trn-mindspeedmm-hidream-full-ft-8p":
        return convert_hidream_ft(r)
    if r["id"] == "trn-mindspeedmm-sana-full-ft-8p":
        return convert_sana_ft(r)
    return out_of_reach(r, REASONS.get(r["id"], "no conversion for this row"), A3 if "A3" in r["chip"] else None)


def convert_op3(r):
    if r["id"] == "op-deepep-ascend-normal-a3-superpod":
        return convert_deepep_normal(r)
    if r["id"] == "op-deepep-ascend-lowlatency-a3-superpod":
        return convert_deepep_ll(r)
    fn = {"op-qwq32b-tp4-decode-ffn-matmul": convert_qwq_ffn,
          "op-flaggems-swiglu-torchnpu-baseline": convert_swiglu,
          "op-flaggems-grouped-matmul-torchnpu-baseline": convert_gmm}.get(r["id"])
    return fn(r) if fn else out_of_reach(r, "no conversion for this row")


def convert_diffusion3(r):
    if r["id"] == "dif-mindspeedmm-flux2-t2i-8p-1024-20steps":
        return convert_flux2_infer(r)
    if r["id"] == "dif-mindspeedmm-hidream-sana-fluxkontext-t2i-8p":
        return convert_mm_t2i(r)
    return out_of_reach(r, REASONS.get(r["id"], "no conversion for this row"))


CONVERTERS_3 = {"serving": convert_serving3, "training": convert_training3, "op": convert_op3, "diffusion": convert_diffusion3}
