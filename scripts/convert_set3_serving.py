"""Set 3's serving rows whose models became bundled in issue 42's fourth pass (assets/models/SOURCES.md):
Qwen3.5-397B-A17B, NVIDIA-Nemotron-3-Super-120B-A12B, Qwen3-VL-8B-Instruct and MiniMax-M2.5, plus
Kimi-K2.6 (Kimi-K2's text architecture). One function per source family, called from
convert_set3.convert_serving3. A launch fact the source leaves out takes the engine's documented
default for that release, named in the row's note; no value is tuned per row.
"""

from convert_measurements import fixed, skip, value, with_hccl_expansion
from convert_set3 import model_ref

A3 = ("910C", "Atlas 800 A3 node: 16 Ascend 910C dies (8 packages x 2); the 910C profile is one die")
A2_UNSTATED = ("910B2", "SKU not stated (an Atlas A2 image or server); compared against the 64 GB-class 910B2 profile, as for the unstated A2 rows of sets 1 and 2")

# vLLM's `vllm serve` defaults where a row does not state them (vllm/engine/arg_utils.py,
# EngineArgs.get_batch_defaults: max_num_seqs 256 and max_num_batched_tokens 2048 for the
# OpenAI server on a device that is not a large-memory GPU class; the set's Qwen3-Next row uses
# the same reading).
VLLM_DEFAULT_SEQS = 256
VLLM_DEFAULT_TOKENS = 2048
VLLM_DEFAULTS_NOTE = "vllm serve's defaults (vllm/engine/arg_utils.py EngineArgs.get_batch_defaults: max_num_seqs 256, max_num_batched_tokens 2048)"


def serving_value(k, v):
    """A serving value by its key: TTFT / TPOT means, output rate; anything else is listed."""
    low = k.lower()
    unit = v["unit"]
    if low.startswith("peak"):
        return skip(k, v["value"], unit, "a peak of the same run; the mean is compared")
    if low.startswith("mean_ttft") or low == "ttft" or "_ttft" in low and not low.startswith(("median", "p99")):
        return dict(value(k, v["value"], "s" if unit == "s" else "ms", "ttft_mean_ms"), unit_stated=unit)
    if low.startswith("mean_tpot") or low == "tpot" or "_tpot" in low and not low.startswith(("median", "p99")):
        return dict(value(k, v["value"], "ms", "tpot_mean_ms"), unit_stated=unit)
    if low.startswith("output_tps") or "_output_tps" in low:
        return dict(value(k, v["value"], "tokens/s", "tokens_per_s"), unit_stated=unit)
    if "total_tps" in low:
        return skip(k, v["value"], unit, "input + output tokens per second of the same run: its output rate and TTFT are compared")
    if low.startswith(("median", "p99")):
        return skip(k, v["value"], unit, "a percentile of the same run; the mean is compared")
    if low == "mean_itl":
        return skip(k, v["value"], unit, "inter-token latency of the same run, equal to its TPOT without speculation; the TPOT is compared")
    return skip(k, v["value"], unit, "not a metric Tunelab predicts")


# Qwen3.5-397B-A17B W8A8 (vllm-ascend PR #7265's tutorial): A3 TP16 in one node against two A2
# nodes at TP8 x DP2, both with expert parallelism, FULL_DECODE_ONLY, 64 sequences and 16384
# tokens per step.
QWEN35_NOTE = ("Qwen3.5-397B-A17B (the bundled config, aiconfigurator's verbatim copy of Qwen/Qwen3.5-397B-A17B config.json) in W8A8 "
               "(--quantization ascend; the MTP head of the w8a8-mtp weights is loaded but MTP is not enabled in the launch); "
               "expert parallelism on, FULL_DECODE_ONLY, max_num_seqs 64, max_num_batched_tokens 16384, chunked prefill on (the V1 default)")


def qwen35_row(r, text):
    st, m = r["setup"], r["measured"]
    a3 = "A3" in r["chip"]
    tp = int(st["tp"])
    dp = 1 if a3 else 2
    chip = A3 if a3 else A2_UNSTATED
    serving = with_hccl_expansion({"mode": "scheduler", "engine": "vllm-ascend", "length_distribution": "fixed", "block_size": 128,
                                   "graph_mode": "full_decode_only"}, r)
    if text:
        serving.update({"arrival": "closed", "concurrency": 7, "requests": 28})
        wl = {"batch": 64, "input_len": 8192, "output_len": 1024}
        note = "ais_bench at 7 concurrent 8192/1024 requests, 28 prompts: a closed loop of 7 clients"
    else:
        # One 480x640 image + 30 text tokens: Qwen3.5's vision tower (16-pixel patches merged 2 x 2)
        # gives (480/32) x (640/32) = 300 image tokens in the prompt. The tower itself is not
        # priced for Qwen3.5 (its loader reads the language model), so TTFT is listed, not compared.
        serving.update({"arrival": "burst", "max_concurrency": 64, "requests": 256})
        wl = {"batch": 64, "input_len": 330, "output_len": 1024}
        note = ("vllm bench serve random-mm at --max-concurrency 64, 256 prompts, each one 480x640 image + 30 text tokens, 1024 out; the image enters "
                "the language model as (480/32) x (640/32) = 300 tokens (16-pixel patches merged 2 x 2, the config's vision_config), so the prompt is "
                "330 tokens; the vision tower's own time is not priced for Qwen3.5, so TTFT is listed, not compared (weight 0.5)")
    cluster = {"nodes": 1 if a3 else 2}
    space = fixed(batch=64, precision="w8a8", tp=tp, dp=dp, launch="graph", max_num_batched_tokens=16384, chunked_prefill="on", expert_parallel="on")
    if not a3:
        cluster["data_parallel"] = [2]
    vals = []
    for k, v in m.items():
        if not text and k == "mean_TTFT":
            vals.append(skip(k, v["value"], v["unit"], "includes the vision tower's encoding of a 480p image, which is not priced for Qwen3.5"))
        else:
            vals.append(serving_value(k, v))
    layout = "one A3 node, TP16" if a3 else "two A2 nodes, one TP8 DP rank each (the experts spread over all 16 ranks)"
    return {"stage": "deployment", "model": "qwen3.5-397b-a17b", "chip": chip[0], "chip_note": chip[1],
            "scenario": {"workload": wl, "deployment": {"tile_operators": False, "cluster": cluster, "precisions": ["w8a8"], "serving": serving},
                         "space": space},
            "values": vals, "weight": 1.0 if text else 0.5,
            "conversion_note": "%s; %s; %s" % (QWEN35_NOTE, layout, note)}


def convert_qwen35(r):
    return qwen35_row(r, "text8k" in r["id"])


# NVIDIA-Nemotron-3-Super-120B-A12B BF16 on 8 x 910B3 (vllm-ascend PR #11656's tutorial):
# prefill 32768/1 one wave at C, decode 256/512 two waves at C, mixed 8192/512 two waves at C.
NEMOTRON_WORKLOADS = {"prefill": (32768, 1, 1), "decode": (256, 512, 2), "mixed": (8192, 512, 2)}


def convert_nemotron(r):
    st, m = r["setup"], r["measured"]
    graph = "fulldecode" in r["id"]
    serving = {"mode": "scheduler", "engine": "vllm-ascend", "arrival": "burst", "length_distribution": "fixed", "block_size": 128}
    if graph:
        serving["graph_mode"] = "full_decode_only"
    row = {"stage": "deployment", "model": model_ref("nemotron-3-super-120b-a12b"), "chip": "910B3", "chip_note": "910B3 stated by the source (8 per server, 64 GiB each)",
           "scenario": {"workload": {"batch": 4, "input_len": 256, "output_len": 512},
                        "deployment": {"tile_operators": False, "serving": serving},
                        "space": fixed(batch=int(st["max_num_seqs"]), precision="bf16", tp=int(st["tp"]), launch="graph" if graph else "eager",
                                       max_num_batched_tokens=int(st["max_num_batched_tokens"]), chunked_prefill="on")},
           "values": [], "variants": []}
    for phase, (inp, out, waves) in NEMOTRON_WORKLOADS.items():
        for c in (1, 2, 4):
            vals = [serving_value(k, v) for k, v in m.items() if k.startswith(phase + "_") and k.endswith("_C%d" % c)]
            if not vals:
                continue
            row["variants"].append({"suffix": "%s-c%d" % (phase, c), "space": {},
                                    "scenario": {"workload": {"input_len": inp, "output_len": out},
                                                 "deployment": {"serving": {"max_concurrency": c, "requests": waves * c}}},
                                    "values": vals})
    row["conversion_note"] = ("NVIDIA-Nemotron-3-Super-120B-A12B (its config carried inline: aiconfigurator's verbatim copy of the FP8 checkpoint's config.json, the sim test fixture nemotron-3-super-120b-a12b-fp8, the "
                              "same hybrid Mamba-2/attention MoE as the BF16 checkpoint measured) in BF16 on one 8 x 910B3 server at TP8, max_num_seqs 4, "
                              "1024 tokens per step, chunked prefill; %s; each cell is vllm bench serve with --max-concurrency C and C prompts per wave "
                              "(prefill 32768/1 one wave, decode 256/512 and mixed 8192/512 two waves), --ignore-eos. The FP32 Mamba state cache is "
                              "priced at the activation type" % ("ACL graph with cudagraph_mode FULL_DECODE_ONLY" if graph else "--enforce-eager"))
    return row


def convert_qwen3_vl_8b(r):
    m = r["measured"]
    serving = {"mode": "scheduler", "engine": "vllm-ascend", "arrival": "poisson", "request_rate": 1.0, "requests": 200,
               "length_distribution": "fixed", "block_size": 128, "graph_mode": "piecewise"}
    return {"stage": "deployment", "model": "qwen3-vl-8b", "chip": A2_UNSTATED[0], "chip_note": "one NPU, SKU not stated (a community training cluster); compared against 910B2",
            "scenario": {"workload": {"batch": VLLM_DEFAULT_SEQS, "input_len": 200, "output_len": 128},
                         "deployment": {"tile_operators": False, "serving": serving},
                         "space": fixed(batch=VLLM_DEFAULT_SEQS, precision="bf16", tp=1, launch="graph", max_num_batched_tokens=16384, chunked_prefill="on")},
            "values": [serving_value(k, v) for k, v in m.items()],
            "conversion_note": ("Qwen3-VL-8B-Instruct (the bundled config: aiconfigurator's verbatim copy of its config.json) with text-only random "
                                "prompts of 200 tokens, 128 out, Poisson arrivals at 1 request/s, 200 prompts; bf16 on one NPU, PIECEWISE ACL graph (the "
                                "release's default, enforce_eager False), max_num_batched_tokens 16384 as stated; max_num_seqs not stated: 256, "
                                + VLLM_DEFAULTS_NOTE + "; prefix caching on but random prompts share no prefix")}


def convert_minimax(r):
    st, m = r["setup"], r["measured"]
    if "190k" in r["id"]:
        # 2 x Atlas 800I A2, TP8 x DP2 with EP, FULL_DECODE_ONLY, max_num_seqs 128; prefix 175104 +
        # suffix 19440 = 194544 in, 1024 out, 16 prompts at --max-concurrency 4, 85% prefix hit.
        serving = {"mode": "scheduler", "engine": "vllm-ascend", "arrival": "burst", "max_concurrency": 4, "requests": 16,
                   "length_distribution": "fixed", "block_size": 128, "graph_mode": "full_decode_only", "prefix_cache_hit_rate": 0.85}
        vals = []
        for k, v in m.items():
            if k == "prefix_hit_rate":
                vals.append(skip(k, v["value"], v["unit"], "an input of the run (deployment.serving.prefix_cache_hit_rate 0.85), not a result"))
            else:
                vals.append(serving_value(k, v))
        return {"stage": "deployment", "model": model_ref("minimax-m2.5"), "chip": "910B2",
                "chip_note": "Atlas 800I A2 without a SKU: compared against the 64 GB 910B2, not the set-1 rule's 32 GB 910B4 (MiniMax-M2.5's 229B bf16 weights and two 190K contexts do not fit 16 x 32 GB)",
                "scenario": {"workload": {"batch": 128, "input_len": 194544, "output_len": 1024},
                             "deployment": {"tile_operators": False, "cluster": {"nodes": 2, "data_parallel": [2]}, "precisions": ["bf16"], "serving": serving},
                             "space": fixed(batch=128, precision="bf16", tp=8, dp=2, launch="graph", max_num_batched_tokens=65536,
                                            chunked_prefill="on", expert_parallel="on")},
                "values": vals, "weight": 0.5,
                "conversion_note": ("MiniMax-M2.5 (its config carried inline: aiconfigurator's verbatim copy of its config.json, the sim test fixture minimax-m2.5) on two Atlas 800I A2 nodes, "
                                    "one TP8 DP rank per node with expert parallelism, FULL_DECODE_ONLY, max_num_seqs 128 as stated; vllm bench serve "
                                    "prefix_repetition, 175104-token shared prefix + 19440-token suffix = 194544 in, 1024 out, 16 prompts at "
                                    "--max-concurrency 4, the stated 85% prefix hit as deployment.serving.prefix_cache_hit_rate; weights not stated "
                                    "for this row: bf16 (the doc's first option, the fp8 checkpoint dequantized on load; the A2 launch has no --quantization); "
                                    "max_num_batched_tokens 65536 and --async-scheduling as the doc's A2 launch states (both node scripts; the last "
                                    "reading took vLLM's default 2048 as if unstated); weight 0.5")}
    # A3 3.5k/1k at 217 requests at once. READING TAKEN (issue 43, sixth pass): the doc's one A3
    # launch, "a recommended startup configuration for short-context condition like 3.5k/1.5k"
    # (TP4 x DP4 with EP, W8A8-QuaRot, FULL_DECODE_ONLY, max_num_seqs 48, 16384 tokens per step,
    # EAGLE-3 with 3 draft tokens, async scheduling, HCCL AIV), is the launch measured: the result
    # block's 3.5k is that launch's workload, while its header ("tp=16 ... bs16") matches neither
    # the result label (bs=217) nor any launch in the doc. The last reading (TP16, bf16, no
    # speculation, vLLM's default 256 sequences) priced TPOT +150% and the output rate -62%.
    serving = {"mode": "scheduler", "engine": "vllm-ascend", "arrival": "burst", "max_concurrency": 217, "requests": 217,
               "length_distribution": "fixed", "block_size": 128, "graph_mode": "full_decode_only", "hccl_expansion": "aiv",
               "speculative": {"method": "eagle3", "num_speculative_tokens": [3]}}
    return {"stage": "deployment", "model": model_ref("minimax-m2.5"), "chip": A3[0], "chip_note": A3[1],
            "scenario": {"workload": {"batch": 48, "input_len": 3584, "output_len": 1024},
                         "deployment": {"tile_operators": False, "cluster": {"nodes": 1, "data_parallel": [4]}, "precisions": ["w8a8"], "serving": serving},
                         "space": fixed(batch=48, precision="w8a8", tp=4, dp=4, launch="graph", max_num_batched_tokens=16384,
                                        chunked_prefill="on", expert_parallel="on", num_speculative_tokens=3)},
            "values": [serving_value(k, v) for k, v in m.items()], "weight": 0.2,
            "conversion_note": ("MiniMax-M2.5 (its config carried inline, as the sibling row) on one A3 node. READING TAKEN (issue 43, sixth pass): "
                                "the doc's one A3 launch, which it recommends 'for short-context condition like 3.5k/1.5k', is the launch "
                                "measured: TP4 x DP4 with --enable-expert-parallel, the W8A8-QuaRot weights (--quantization ascend), "
                                "cudagraph_mode FULL_DECODE_ONLY, max_num_seqs 48 per DP rank, 16384 tokens per step, --async-scheduling, "
                                "HCCL AIV expansion, EAGLE-3 with 3 draft tokens (the draft run eagerly: its enforce_eager; its acceptance not "
                                "reported: the bundled default for EAGLE-3 on random prompts, assets/constants/speculative.json); 217 requests "
                                "of 3.5K (3584) / 1K at once ('3.5k/1k@bs=217'), 25 more than the 4 x 48 decode slots, so they queue. The "
                                "section header ('tp=16, 4k/1k@bs16') matches neither the result label nor any launch in the doc; the last "
                                "reading (TP16, bf16, no speculation, vLLM's 256 sequences) is named here. VLLM_ASCEND_ENABLE_FUSED_MC2, "
                                "FLASHCOMM1 and BALANCE_SCHEDULING are not modelled. Weight 0.2: the setup stays internally inconsistent")}


# Kimi-K2.6 (vllm-ascend PR #8561, kimi_k26.md): READING TAKEN (issue 43, sixth pass). The table's
# figures as published at the cited commit agree with each other only when about 4 requests are in
# flight: 4 x 128 / (0.691 + 127 x 0.083) = 45.6 tok/s against the stated 46.58 (the in-flight count
# the three figures give is 46.58 x (0.691 + 127 x 0.083) / 128 = 4.09). So "64 concurrent requests"
# is read as 64 prompts (vllm bench serve --num-prompts) sent by a client holding 4 in flight; vllm
# bench serve starts a request's clock when its client slot frees, so the 691 ms TTFT carries no
# client queue. The other reading (64 in flight at the server) gives 770 tok/s at 83 ms, ten times the
# stated rate, and needs the pre-edit 83 s TTFT (a 4-slot server queueing 64 requests, which the
# launch's default max_num_seqs 256 does not have); the cited commit withdrew that 83 s.
KIMI_K26_CLIENTS = 4


def convert_kimi_k26(r):
    m = r["measured"]
    serving = {"mode": "scheduler", "engine": "vllm-ascend", "arrival": "closed", "concurrency": KIMI_K26_CLIENTS, "requests": 64,
               "length_distribution": "fixed", "block_size": 128}
    return {"stage": "deployment", "model": "kimi-k2", "chip": "910B2",
            "chip_note": "'Ascend 910B x16' as one TP16 group: two Atlas 800 A2 nodes of 8 (an A2 node holds 8); SKU not stated, compared against 910B2",
            "scenario": {"workload": {"batch": VLLM_DEFAULT_SEQS, "input_len": 512, "output_len": 128},
                         "deployment": {"tile_operators": False, "cluster": {"nodes": 2}, "precisions": ["w4a16"], "serving": serving},
                         "space": fixed(batch=VLLM_DEFAULT_SEQS, precision="w4a16", tp=16, dp=1, launch="eager", max_num_batched_tokens=VLLM_DEFAULT_TOKENS,
                                        chunked_prefill="on", expert_parallel="off")},
            "values": [serving_value(k, v) for k, v in m.items()], "weight": 0.2,
            "conversion_note": ("Kimi-K2.6 as the bundled kimi-k2 config: Kimi-K2.6's text_config (NVIDIA's Kimi-K2.6-NVFP4 config.json in "
                                "aiconfigurator) has Kimi-K2's widths, 61 layers and 384 routed experts with 8 active; text prompts, so its vision "
                                "tower does not run. W4A16, TP16 over two A2 nodes, 64 prompts of 512/128. READING TAKEN (issue 43, sixth pass): "
                                "the table as published (691 ms TTFT after the cited commit's edit, 83 ms TPOT, 46.58 tok/s) agrees with itself "
                                "only with about 4 requests in flight: 46.58 x (0.691 + 127 x 0.083) / 128 = 4.09, and 4 in flight give 45.6 tok/s; "
                                "so '64 concurrent requests' is read as 64 prompts from a client holding 4 in flight (a closed loop of 4; vllm bench "
                                "serve times a request from when its client slot frees, so TTFT carries no client queue). The other reading, 64 in "
                                "flight, would give ~770 tok/s at 83 ms and needs the withdrawn 83 s TTFT of a 4-slot server, which the launch "
                                "(default max_num_seqs 256) does not have. The flags "
                                "contradict each other (--enable-acl-graph with --enforce-eager): vLLM's enforce_eager disables every graph, so the "
                                "launch is eager; no --enable-expert-parallel is listed; max_num_seqs and tokens per step not stated: "
                                + VLLM_DEFAULTS_NOTE + ". Weight 0.2: the client count is derived, not stated, and the TTFT cell was hand-edited")}


CONVERTERS = {
    "srv-vllm-qwen3.5-397b-w8a8-a3-tp16-text8k-c7": convert_qwen35,
    "srv-vllm-qwen3.5-397b-w8a8-2xa2-tp8dp2-text8k-c7": convert_qwen35,
    "srv-vllm-qwen3.5-397b-w8a8-a3-tp16-mm480p-c64": convert_qwen35,
    "srv-vllm-qwen3.5-397b-w8a8-2xa2-tp8dp2-mm480p-c64": convert_qwen35,
    "srv-vllm-nemotron3-super-120b-8x910b3-tp8-eager": convert_nemotron,
    "srv-vllm-nemotron3-super-120b-8x910b3-tp8-fulldecode": convert_nemotron,
    "srv-vllm-qwen3-vl-8b-tp1-rate1": convert_qwen3_vl_8b,
    "srv-vllm-minimax-m2.5-a3-3.5k1k-bs217": convert_minimax,
    "srv-vllm-minimax-m2.5-2xa2-190k-c4-prefix": convert_minimax,
    "srv-vllm-kimi-k2.6-w4a16-16x910b-c64": convert_kimi_k26,
}


# DeepSeek-V3.1 and V3.2 PD rows: the result blocks of vllm-ascend's model tutorials
# (@182b75ea84, docs/source/tutorials/models/DeepSeek-V3.{1,2}.md, "8 Performance Evaluation")
# name the layout; the launch is the same document's PD scripts for that layout.
PD_NOTE = ("the benchmark's concurrency is not stated (AISBench's batch_size is 'update according to your dataset'): a closed loop that fills "
           "the decode side (max_num_seqs per decode DP rank x its DP ranks), Tunelab's default for an unstated client count; MTP acceptance "
           "not reported: the bundled default for MTP on random prompts (assets/constants/speculative.json); one max_num_seqs and one token "
           "budget serve both sides in Tunelab (the decode side's sequences, the prefill side's tokens per step)")


def pd_row(model, layout, nodes, tp, dp, ptp, seqs, tokens, drafts, wl, vals, note, weight):
    serving = {"mode": "scheduler", "engine": "vllm-ascend", "arrival": "closed", "concurrency": seqs * dp, "requests": 4 * seqs * dp,
               "length_distribution": "fixed", "block_size": 128, "graph_mode": "full_decode_only", "hccl_expansion": "aiv",
               "speculative": {"method": "mtp", "num_speculative_tokens": [drafts]}}
    return {"stage": "deployment", "model": model, "chip": A3[0], "chip_note": A3[1] + "; 'A3-752T', %d nodes" % nodes,
            "scenario": {"workload": dict(wl, batch=seqs),
                         "deployment": {"tile_operators": False, "precisions": ["w8a8"], "serving": serving,
                                        "cluster": {"nodes": nodes, "disaggregation": [layout], "data_parallel": [dp], "prefill_tp": [ptp]}},
                         "space": fixed(batch=seqs, precision="w8a8", tp=tp, dp=dp, launch="graph", expert_parallel="on", pd=layout, prefill_tp=ptp,
                                        max_num_batched_tokens=tokens, chunked_prefill="on")},
            "values": vals, "weight": weight, "conversion_note": note + "; " + PD_NOTE}


def convert_dsv31_2p1d(r):
    m = r["measured"]
    vals = [dict(value("TTFT", m["TTFT"]["value"], "s", "ttft_mean_ms"), unit_stated=m["TTFT"]["unit"]),
            dict(value("TPOT", m["TPOT"]["value"], "ms", "tpot_mean_ms"), unit_stated=m["TPOT"]["unit"]),
            # 'card' read as the 910C package (two dies; an Atlas 800 A3 node holds 8 cards, 16 dies), over all 4
            # nodes' 32 cards: the per-die prediction x 2. The last reading (per die over all 64 dies) needs
            # 478 x 64 / (1 / 0.04882) = 1494 sequences in flight against the decode side's 32 x 28 = 896 slots;
            # per card it needs 747, which the slots hold.
            dict(value("output_tps_per_card", m["output_tps_per_card"]["value"], "tokens/s", "tokens_per_s_per_chip", copies=2), unit_stated=m["output_tps_per_card"]["unit"])]
    note = ("DeepSeek-V3.1 as the bundled deepseek-v3 config (the same architecture), 2P1D on 4 A3 nodes: each prefill instance one node at DP2 x TP8, "
            "the decode instance two nodes at DP32 x TP1, expert parallelism on both; 3.5K (3584) in / 1.5K (1536) out. The result block names "
            "neither weights nor MTP; the same document's 2P1D scripts ('DeepSeek-V3.1-w8a8-mtp-QuaRot 2P1D Layerwise', the 4-node A3 layout "
            "it reports) launch W8A8 with MTP at 1 draft token, decode max_num_seqs 28 with FULL_DECODE_ONLY, prefill 16384 tokens per step "
            "(eagerly: Tunelab launches both sides as the decode side's graphs), HCCL AIV expansion, and on the decode side "
            "--additional-config finegrained_tp_config lmhead_tensor_parallel_size 16 (the LM head split over 16 of its 32 DP ranks: "
            "deployment.cluster.lmhead_tp; the TP8 prefill side has none); 'each card' READ AS the 910C package (issue 43, sixth pass): an A3 card holds two "
            "dies, so the per-die prediction over all 64 dies is doubled (the value's copies 2); per die it would need 478 x 64 x 0.04882 = 1494 "
            "sequences in flight against the decode side's 32 x 28 = 896 slots, per card 747")
    row = pd_row("deepseek-v3", "2P1D", 4, 1, 32, 8, 28, 16384, 1, {"input_len": 3584, "output_len": 1536}, vals, note, 0.5)
    row["scenario"]["deployment"]["cluster"]["lmhead_tp"] = [16]
    row["scenario"]["space"]["lmhead_tp"] = {"fixed": 16}
    return row


def convert_dsv32_1p1d(r):
    m = r["measured"]
    vals = [dict(value("TPOT", m["TPOT"]["value"], "ms", "tpot_mean_ms"), unit_stated=m["TPOT"]["unit"]),
            skip("throughput", m["throughput"]["value"], m["throughput"]["unit"], "'533tps' names no basis (per card, per decode card or for the job); the TPOT is compared")]
    note = ("DeepSeek-V3.2 (the bundled deepseek-v3.2 config) W8A8, 1P1D on 4 A3 nodes: the prefill instance two nodes at DP2 x TP16, the decode "
            "instance two nodes at DP8 x TP4, expert parallelism on; 64K (65536) in / 3K (3072) out. The same document's 1P1D scripts give the "
            "launch: decode max_num_seqs 4 with MTP at 2 draft tokens and FULL_DECODE_ONLY, prefill 32560 tokens per step (eager, MTP 1)")
    return pd_row("deepseek-v3.2", "1P1D", 4, 4, 8, 16, 4, 32560, 2, {"input_len": 65536, "output_len": 3072}, vals, note, 0.5)


CONVERTERS.update({
    "srv-vllm-deepseek-v3.1-a3-2p1d-3.5k1.5k": convert_dsv31_2p1d,
    "srv-vllm-deepseek-v3.2-a3-1p1d-64k3k": convert_dsv32_1p1d,
})


# Qwen3-32B on two 910B4 (vllm-ascend issue #5892): the issue names the chips (2 x 910B4), the
# releases (0.11 and 0.13rc1), the prompts (2K and 8K) and the concurrency (16), nothing else.
# Reading taken (the other reading is named in the note): the bundled 910B4 profile is the
# 32 GB board, on which the BF16 checkpoint (65.5 GB) cannot load over two cards, so the run
# served W8A8 weights (vLLM-Ascend's published Qwen3-32B-W8A8, the Qwen3-Dense tutorial's
# quantised option); the other reading, BF16 on 64 GB 910B4 boards, has no bundled profile.
QWEN3_32B_NOTE = ("Qwen3-32B (the bundled config) on two Ascend 910B4 at TP2, as the source states; nothing else is stated (issue #5892's whole "
                  "description is the two lines of figures). READING TAKEN (issue 43, fifth pass), each part from the figures themselves: "
                  "(1) a burst of 16 requests, the source's '16并发' sent at once: the 2K TTFT (4.7 / 2.6 s) is 12-19 single 2K prefills on "
                  "this layout (0.25-0.4 s each), which only a queue of about 16 prefills gives; a closed loop of 16 clients with many prompts "
                  "keeps about one prefill ahead of a request (about 1.2 s predicted). "
                  "(2) 1024 output tokens: in a burst the mean TPOT carries the other requests' queued prefills, about TTFT / (out - 1) on top "
                  "of the decode step, so 128 out (vllm bench serve's default) would leave a decode step under 15 ms at 2K and 128-255 out one "
                  "under 35 ms, below the ~27 ms the weights alone take at W8A8 on the slower board; 1024 is the first round length that "
                  "leaves a physical step at both prompt lengths. "
                  "(3) BF16 (the checkpoint's dtype; no quantisation is named) on the 64 GB board of the 910B4 (910B4-64G: msmodeling's "
                  "ATLAS_800_A2_280T_64G, 64 GiB at 1.6 TiB/s): the 8K run keeps 16 x ~8.7K tokens of KV cache, 18 GB per card at TP2, "
                  "which the 32 GB board cannot hold beside either BF16 (65.5 GB over two cards) or W8A8 weights (11.6 GB left), so the "
                  "32 GB board would preempt and its 8K TTFT would be ~38 s against 12-17 s measured. The last session's reading "
                  "(W8A8 on the 32 GB board, a closed loop of 1000 prompts at 128 out) priced TPOT +95..+183% and the 2K TTFT -55..-75%. "
                  "Release defaults (graph capture, async scheduling, chunked prefill) are each release's; ")


def convert_qwen3_32b_910b4(r):
    m = r["measured"]
    rows = []
    for rel, tag in (("0.11", "v011"), ("0.13", "v013")):
        row = {"id": r["id"] + "/v" + rel, "stage": "deployment", "model": "qwen3-32b", "chip": "910B4-64G",
               "chip_note": "stated by the source (2 x 910B4); the 64 GB board (910B4-64G), the only 910B4 that holds the 8K run's cache (see the conversion note)",
               "release": rel,
               "scenario": {"workload": {"batch": VLLM_DEFAULT_SEQS, "input_len": 2048, "output_len": 1024},
                            "deployment": {"tile_operators": False,
                                           "serving": {"mode": "scheduler", "engine": "vllm-ascend", "engine_version": rel, "arrival": "burst",
                                                       "requests": 16, "length_distribution": "fixed", "block_size": 128}},
                            "space": fixed(batch=VLLM_DEFAULT_SEQS, precision="bf16", tp=2, launch="graph", max_num_batched_tokens=VLLM_DEFAULT_TOKENS, chunked_prefill="on")},
               "values": [], "variants": [],
               "conversion_note": QWEN3_32B_NOTE + VLLM_DEFAULTS_NOTE + "; vLLM-Ascend " + rel + ("rc1" if rel == "0.13" else "") + " (the source's 'vllm13' is 0.13rc1; the bundled 0.13 release's defaults)",
               "weight": 0.5}
        for n, k in ((2, "2k"), (8, "8k")):
            vals = [serving_value(key.replace(tag + "_" + k + "_c16_", "mean_") , v) | {"metric": key}
                    for key, v in m.items() if key.startswith(tag + "_" + k + "_c16_")]
            row["variants"].append({"suffix": k, "space": {}, "scenario": {"workload": {"input_len": n * 1024}}, "values": vals})
        rows.append(row)
    return rows


CONVERTERS["srv-vllm-qwen3-32b-2x910b4-v011-vs-v013"] = convert_qwen3_32b_910b4

