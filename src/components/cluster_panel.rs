//! The deployment stage's cluster settings (`deployment.cluster`, issue 22): a deployment over
//! several nodes with data-parallel attention and wide expert parallelism, redundant experts
//! (EPLB), the SuperPOD fabric, and prefill-decode disaggregation against colocated serving.
//! Every edit goes through `Ctx::edit`/`replace` (validated, naming the field), so it travels in
//! the link; switching the cluster off restores the one-node space.

use crate::state::Ctx;
use leptos::prelude::*;
use tunelab_scenario::spec::cluster::ClusterOptions;
use tunelab_scenario::{Scenario, Stage};

fn int_list(text: &str) -> Result<Vec<i64>, String> {
    text.split(',').map(str::trim).filter(|t| !t.is_empty()).map(|t| t.parse::<i64>().map_err(|_| format!("'{t}' is not a whole number"))).collect()
}

fn list_text(v: &[i64]) -> String {
    v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ")
}

/// The cluster section of the scenario panel (deployment stage).
#[component]
pub fn ClusterPanel() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let shown = move || ctx.scenario.with(|s| s.stage == Stage::Deployment);
    let on = move || ctx.scenario.with(|s| s.deployment.cluster.is_some());
    let get = move |f: fn(&ClusterOptions) -> String| move || ctx.scenario.with(|s| s.deployment.cluster.as_ref().map(f).unwrap_or_default());
    // A text field over one cluster field; `set` parses it or names what is wrong.
    let field = move |label: &'static str, id: &'static str, title: &'static str, placeholder: &'static str, read: fn(&ClusterOptions) -> String, set: fn(&mut ClusterOptions, &str) -> Result<(), String>| {
        view! {
            <label class="field" title=title>{label}" "
                <input type="text" data-testid=id placeholder=placeholder prop:value=get(read) on:change=move |ev| {
                    let t = event_target_value(&ev);
                    let mut s: Scenario = ctx.scenario.get_untracked();
                    let Some(c) = s.deployment.cluster.as_mut() else { return };
                    match set(c, t.trim()) {
                        Ok(()) => {
                            ctx.replace(s);
                        }
                        Err(e) => ctx.fail(format!("{label}: {e}")),
                    }
                }/>
            </label>
        }
    };
    view! {
        <Show when=shown>
            <details class="cluster" data-testid="cluster-panel" open=on>
                <summary>"Cluster (multi-node, wide EP, disaggregation)"</summary>
                <label class="field" title="Serve over several nodes of the chosen chip (8 NPUs per Atlas 800 A2 node, 16 dies per Atlas 800 A3 node): the tune adds dp, redundant_experts and the serving layout.">
                    <input type="checkbox" data-testid="cluster-on" prop:checked=on on:change=move |ev| {
                        let v = event_target_checked(&ev);
                        ctx.edit(|s| s.deployment.cluster = v.then(|| ClusterOptions { nodes: 2, ..Default::default() }));
                    }/>" multi-node deployment"
                </label>
                <Show when=on>
                    {field("Nodes", "cluster-nodes", "Nodes the deployment spans (tp x dp must fill them)", "2",
                        |c| c.nodes.to_string(), |c, t| { c.nodes = t.parse().map_err(|_| "a whole number of nodes".to_string())?; Ok(()) })}
                    <label class="field" title="The nodes sit in one SuperPOD (Atlas A3 CloudMatrix) and meet over its HCCS/UB fabric instead of RoCE">
                        <input type="checkbox" data-testid="cluster-superpod" prop:checked=move || ctx.scenario.with(|s| s.deployment.cluster.as_ref().is_some_and(|c| c.superpod)) on:change=move |ev| {
                            let v = event_target_checked(&ev);
                            ctx.edit(|s| if let Some(c) = s.deployment.cluster.as_mut() { c.superpod = v });
                        }/>" SuperPOD fabric"
                    </label>
                    {field("Data parallel", "cluster-dp", "dp sizes, comma-separated (empty: every size that fills the chips with a listed tp); vLLM --data-parallel-size, max-num-seqs per DP rank", "auto",
                        |c| list_text(&c.data_parallel), |c, t| { c.data_parallel = int_list(t)?; Ok(()) })}
                    {field("Redundant experts", "cluster-redundant", "EPLB redundant expert copies to try, comma-separated (A3 only in vLLM-Ascend)", "0",
                        |c| list_text(&c.redundant_experts), |c, t| { c.redundant_experts = int_list(t)?; Ok(()) })}
                    {field("Expert imbalance", "cluster-imbalance", "Busiest routed expert's tokens over the mean before EPLB (empty: the bundled default, assets/constants/scale-serving.json)", "default",
                        |c| c.moe_imbalance.map(|x| x.to_string()).unwrap_or_default(),
                        |c, t| { c.moe_imbalance = if t.is_empty() { None } else { Some(t.parse().map_err(|_| "a number >= 1".to_string())?) }; Ok(()) })}
                    {field("Serving layouts", "cluster-pd", "colocated and/or prefill-decode disaggregation xPyD, comma-separated (e.g. colocated, 1P1D): the tune compares them under the same requests", "colocated",
                        |c| c.disaggregation.join(", "),
                        |c, t| { c.disaggregation = t.split(',').map(str::trim).filter(|x| !x.is_empty()).map(String::from).collect(); Ok(()) })}
                    {field("Prefill TP", "cluster-prefill-tp", "Tensor-parallel sizes of a prefill instance, comma-separated (empty: as decode)", "as decode",
                        |c| list_text(&c.prefill_tp), |c, t| { c.prefill_tp = int_list(t)?; Ok(()) })}
                    {field("Prefill chip", "cluster-prefill-device", "Heterogeneous disaggregation: the prefill instances run on their own nodes of this chip (e.g. 910C while decode runs on the scenario's 910B2); the KV cache crosses RoCE between the systems. Empty: both sides share the scenario's chip and nodes", "same chip",
                        |c| c.prefill_device.clone().unwrap_or_default(),
                        |c, t| { c.prefill_device = (!t.is_empty()).then(|| t.to_string()); if c.prefill_device.is_some() && c.prefill_nodes.is_none() { c.prefill_nodes = Some(1); } if c.prefill_device.is_none() { c.prefill_nodes = None; } Ok(()) })}
                    {field("Prefill nodes", "cluster-prefill-nodes", "Nodes of the prefill chip the prefill instances occupy (with a prefill chip)", "",
                        |c| c.prefill_nodes.map(|n| n.to_string()).unwrap_or_default(),
                        |c, t| { c.prefill_nodes = if t.is_empty() { None } else { Some(t.parse().map_err(|_| "a whole number of nodes".to_string())?) }; Ok(()) })}
                    {field("Prefill PP", "cluster-prefill-pp", "Pipeline-parallel sizes of a prefill instance, comma-separated (vLLM --pipeline-parallel-size; empty: none): long prompts flow through the stages in chunks", "none",
                        |c| list_text(&c.prefill_pp), |c, t| { c.prefill_pp = int_list(t)?; Ok(()) })}
                    {field("Prefill chunking", "cluster-prefill-chunking", "How a pipelined prefill cuts a prompt: dynamic (vLLM-Ascend's dynamic chunked pipeline parallel) and/or static (chunks of max_num_batched_tokens), comma-separated; empty: both", "dynamic, static",
                        |c| c.prefill_chunking.join(", "),
                        |c, t| { c.prefill_chunking = t.split(',').map(str::trim).filter(|x| !x.is_empty()).map(String::from).collect(); Ok(()) })}
                    {field("Prefill CP", "cluster-prefill-cp", "Prefill context-parallel sizes of a prefill instance, comma-separated (vLLM --prefill-context-parallel-size; empty: none): each prompt split over that many groups of prefill TP chips, keys and values all-gathered at every layer; needs an xPyD layout", "none",
                        |c| list_text(&c.prefill_cp), |c, t| { c.prefill_cp = int_list(t)?; Ok(()) })}
                    {field("Prefill DCP", "cluster-prefill-dcp", "Decode context-parallel sizes of a prefill instance, comma-separated (vLLM --decode-context-parallel-size on the prefill side, as vLLM-Ascend's 1M-context PD layout runs it; empty: none): each prompt's cache sharded over that many ranks of the prefill TP group, later chunks gathering the shards; needs an xPyD layout", "none",
                        |c| list_text(&c.prefill_dcp), |c, t| { c.prefill_dcp = int_list(t)?; Ok(()) })}
                    {field("Pipeline parallel", "cluster-pp", "Pipeline-parallel sizes of a co-located engine rank, comma-separated (vLLM --pipeline-parallel-size; empty: none): tp x pp chips per rank, layers in pp stages across nodes, the running sequences as micro-batches; fewer sequences than stages leave a bubble", "none",
                        |c| list_text(&c.pipeline_parallel), |c, t| { c.pipeline_parallel = int_list(t)?; Ok(()) })}
                    {field("Decode CP", "cluster-decode-cp", "Decode context-parallel sizes, comma-separated (vLLM --decode-context-parallel-size; empty: none): the KV cache sharded over that many ranks of a decode rank's TP group; must divide tp (MLA) or tp / KV heads (GQA)", "none",
                        |c| list_text(&c.decode_cp), |c, t| { c.decode_cp = int_list(t)?; Ok(()) })}
                    {field("LM head TP", "cluster-lmhead-tp", "Fine-grained TP of the LM head under attention DP, comma-separated (vLLM-Ascend finegrained_tp_config lmhead_tensor_parallel_size; empty: off): on a tp-1 instance the head splits over that many DP ranks, which gather their hidden states and exchange the logits; must divide dp", "off",
                        |c| list_text(&c.lmhead_tp), |c, t| { c.lmhead_tp = int_list(t)?; Ok(()) })}
                    {field("Embedding TP", "cluster-embedding-tp", "Fine-grained TP of the token embedding under attention DP, comma-separated (vLLM-Ascend 0.13+ embedding_tensor_parallel_size; empty: off); must divide dp of a tp-1 instance", "off",
                        |c| list_text(&c.embedding_tp), |c, t| { c.embedding_tp = int_list(t)?; Ok(()) })}
                </Show>
            </details>
        </Show>
    }
}
