//! `deployment.cluster`: a serving deployment that spans nodes (issue 22, sections 1-3). Plain
//! data, validated here with errors that name the field; the deployment stage reads it
//! (`stages::scale`). Absent (every scenario written before it): one node, no new parameters,
//! the same space and numbers as before.

use serde::{Deserialize, Serialize};

/// The chips a deployment occupies and the large-scale serving axes it tunes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClusterOptions {
    /// Nodes the deployment spans (each of the chip profile's `node_chips` NPUs: 8 on an
    /// Atlas 800 A2, 16 dies on an Atlas 800 A3).
    pub nodes: u64,
    /// The nodes sit in one SuperPOD and meet over its HCCS/UB fabric (Atlas A3), not RoCE.
    pub superpod: bool,
    /// Data-parallel sizes (attention DP; with expert parallelism on, the experts spread over
    /// all tp x dp ranks). Empty: every size that fills the chips with a listed tp.
    pub data_parallel: Vec<i64>,
    /// Redundant expert copies (EPLB) to consider; empty: 0 and one per EP rank.
    pub redundant_experts: Vec<i64>,
    /// Tokens on the busiest routed expert over the mean, before any rebalancing (None: the
    /// bundled default of `assets/constants/moe-serving.json`).
    pub moe_imbalance: Option<f64>,
    /// Serving layouts: "colocated" and/or prefill-decode disaggregation "xPyD" (x prefill
    /// instances, y decode instances). Empty: colocated only.
    pub disaggregation: Vec<String>,
    /// Tensor-parallel sizes of a prefill instance (disaggregated layouts); empty: as decode.
    pub prefill_tp: Vec<i64>,
    /// Heterogeneous disaggregation: the prefill instances run on nodes of this chip (a bundled
    /// profile name, e.g. "910C" while decode runs on the scenario's "910B2"), apart from the
    /// scenario's `nodes`, which then hold the decode instances only; the KV cache crosses the
    /// RoCE network between the two systems. None: both sides share the scenario's chip.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefill_device: Option<String>,
    /// Nodes of `prefill_device` the prefill instances occupy (required with it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefill_nodes: Option<u64>,
    /// Pipeline-parallel sizes of a prefill instance (vLLM --pipeline-parallel-size); empty:
    /// no pipeline.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prefill_pp: Vec<i64>,
    /// How a pipelined prefill cuts a prompt: "dynamic" (vLLM-Ascend's dynamic chunked pipeline
    /// parallel) and/or "static" (chunks of max_num_batched_tokens); empty: both.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prefill_chunking: Vec<String>,
    /// Prefill context parallel sizes of a prefill instance (vLLM
    /// `--prefill-context-parallel-size`): each prompt's tokens split over pcp ranks of
    /// prefill_tp chips each (extra chips: an instance is prefill_tp x prefill_pp x pcp), the
    /// keys and values all-gathered over the group at every layer. Empty: none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prefill_cp: Vec<i64>,
    /// Decode context parallel sizes (vLLM `--decode-context-parallel-size`): every sequence's
    /// KV cache sharded over dcp ranks of the decode instance's TP group (no extra chips).
    /// Empty: none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub decode_cp: Vec<i64>,
    /// Pipeline-parallel sizes of a co-located engine rank (vLLM `--pipeline-parallel-size`):
    /// a rank of tp x pp chips, its layers in pp stages (across nodes), the running sequences
    /// as micro-batches through them. Empty: none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pipeline_parallel: Vec<i64>,
    /// Fine-grained TP of the LM head under attention DP (vLLM-Ascend's
    /// `finegrained_tp_config.lmhead_tensor_parallel_size`; 0.10-0.11: the top-level
    /// `lmhead_tensor_parallel_size`): the head split over this many DP ranks of an instance
    /// with tp 1 (it must divide that instance's dp; with tp > 1 vLLM-Ascend leaves it without
    /// effect). Empty: off.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lmhead_tp: Vec<i64>,
    /// Fine-grained TP of the token embedding (`finegrained_tp_config.embedding_tensor_parallel_size`,
    /// vLLM-Ascend 0.13 on), as `lmhead_tp`. Empty: off.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub embedding_tp: Vec<i64>,
    /// Decode context parallel sizes of a prefill instance (vLLM `--decode-context-parallel-size`
    /// on the prefill side, as vLLM-Ascend's 1M-context PD layout runs it: prefill TP8 DCP8):
    /// every prompt's cache sharded over that many ranks of the prefill TP group, each chunk
    /// gathering the earlier context's shards at every layer. Needs an xPyD layout. Empty: none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prefill_dcp: Vec<i64>,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        ClusterOptions { nodes: 1, superpod: false, data_parallel: Vec::new(), redundant_experts: Vec::new(), moe_imbalance: None, disaggregation: Vec::new(), prefill_tp: Vec::new(), prefill_device: None, prefill_nodes: None, prefill_pp: Vec::new(), prefill_chunking: Vec::new(), prefill_cp: Vec::new(), decode_cp: Vec::new(), pipeline_parallel: Vec::new(), lmhead_tp: Vec::new(), embedding_tp: Vec::new(), prefill_dcp: Vec::new() }
    }
}

/// A prefill-decode layout: `x` prefill and `y` decode instances, or colocated (None).
pub fn parse_layout(s: &str) -> Result<Option<(u64, u64)>, String> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("colocated") || t.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    let bad = || format!("deployment.cluster.disaggregation: '{}' is not 'colocated' or 'xPyD' (e.g. 1P1D, 2P1D)", crate::scenario::clip(s));
    let up = t.to_ascii_uppercase();
    let (x, rest) = up.split_once('P').ok_or_else(bad)?;
    let y = rest.strip_suffix('D').ok_or_else(bad)?;
    let x: u64 = x.parse().map_err(|_| bad())?;
    let y: u64 = y.parse().map_err(|_| bad())?;
    if x == 0 || y == 0 || x > 64 || y > 64 {
        return Err(format!("deployment.cluster.disaggregation: '{}' needs 1..=64 prefill and decode instances", crate::scenario::clip(s)));
    }
    Ok(Some((x, y)))
}

impl ClusterOptions {
    /// Checks every field on its own (the chip-dependent checks are the stage's).
    pub fn validate(&self) -> Result<(), String> {
        if self.nodes == 0 || self.nodes > 384 {
            return Err(format!("deployment.cluster.nodes: {} must be within 1..=384", self.nodes));
        }
        if let Some(x) = self.prefill_pp.iter().find(|x| !(1..=64).contains(*x)) {
            return Err(format!("deployment.cluster.prefill_pp: {x} must be within 1..=64 pipeline stages"));
        }
        if let Some(x) = self.pipeline_parallel.iter().find(|x| !(1..=64).contains(*x)) {
            return Err(format!("deployment.cluster.pipeline_parallel: {x} must be within 1..=64 pipeline stages"));
        }
        for (field, v) in [("lmhead_tp", &self.lmhead_tp), ("embedding_tp", &self.embedding_tp)] {
            if let Some(x) = v.iter().find(|x| !(1..=64).contains(*x)) {
                return Err(format!("deployment.cluster.{field}: {x} must be within 1..=64 data-parallel ranks (fine-grained TP splits the module over DP ranks)"));
            }
        }
        for (field, v) in [("prefill_cp", &self.prefill_cp), ("decode_cp", &self.decode_cp), ("prefill_dcp", &self.prefill_dcp)] {
            if let Some(x) = v.iter().find(|x| !(1..=64).contains(*x)) {
                return Err(format!("deployment.cluster.{field}: {x} must be within 1..=64 context-parallel ranks"));
            }
        }
        if let Some(c) = self.prefill_chunking.iter().find(|c| *c != "dynamic" && *c != "static") {
            return Err(format!("deployment.cluster.prefill_chunking: '{}' is not dynamic or static", crate::scenario::clip(c)));
        }
        for (field, v) in [("data_parallel", &self.data_parallel), ("prefill_tp", &self.prefill_tp)] {
            if let Some(x) = v.iter().find(|x| !(1..=6144).contains(*x)) {
                return Err(format!("deployment.cluster.{field}: {x} must be within 1..=6144"));
            }
        }
        if let Some(x) = self.redundant_experts.iter().find(|x| !(0..=4096).contains(*x)) {
            return Err(format!("deployment.cluster.redundant_experts: {x} must be within 0..=4096"));
        }
        if let Some(f) = self.moe_imbalance {
            if !(f.is_finite() && (1.0..=64.0).contains(&f)) {
                return Err(format!("deployment.cluster.moe_imbalance: {f} must be within 1..=64 (busiest expert's load over the mean)"));
            }
        }
        let mut split = false;
        for l in &self.disaggregation {
            split |= parse_layout(l)?.is_some();
        }
        match (&self.prefill_device, self.prefill_nodes) {
            (None, None) => {}
            (Some(d), _) if d.trim().is_empty() || d.len() > 64 => return Err("deployment.cluster.prefill_device: give a bundled chip name (e.g. \"910C\")".into()),
            (Some(_), None) => return Err("deployment.cluster.prefill_nodes: a prefill_device needs the nodes of it the prefill instances occupy".into()),
            (None, Some(_)) => return Err("deployment.cluster.prefill_device: prefill_nodes are nodes of a prefill chip; name it (or drop prefill_nodes: the prefill instances then share the scenario's nodes)".into()),
            (Some(_), Some(n)) if n == 0 || n > 384 => return Err(format!("deployment.cluster.prefill_nodes: {n} must be within 1..=384")),
            (Some(_), Some(_)) if !split => return Err("deployment.cluster.prefill_device: a prefill chip needs a disaggregated layout (\"xPyD\") in deployment.cluster.disaggregation".into()),
            _ => {}
        }
        if self.pipeline_parallel.iter().any(|x| *x > 1) && split {
            return Err("deployment.cluster.pipeline_parallel: pipeline stages are modelled for a co-located engine; a disaggregated layout's prefill instances take prefill_pp (list the layouts in separate scenarios)".into());
        }
        if !self.prefill_cp.is_empty() && !split {
            return Err("deployment.cluster.prefill_cp: prefill context parallel is modelled on the prefill instances of a disaggregated layout (\"xPyD\" in deployment.cluster.disaggregation), as vLLM-Ascend's long-sequence tutorials deploy it; colocated PCP is not modelled".into());
        }
        if !self.prefill_dcp.is_empty() && !split {
            return Err("deployment.cluster.prefill_dcp: DCP on the prefill instances needs a disaggregated layout (\"xPyD\" in deployment.cluster.disaggregation); a co-located engine takes decode_cp".into());
        }
        if !self.prefill_pp.is_empty() && !split {
            return Err("deployment.cluster.prefill_pp: pipelined prefill instances need a disaggregated layout (\"xPyD\") in deployment.cluster.disaggregation".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_parse_and_bad_ones_name_the_field() {
        assert_eq!(parse_layout("colocated").unwrap(), None);
        assert_eq!(parse_layout("2P1D").unwrap(), Some((2, 1)));
        assert_eq!(parse_layout("1p3d").unwrap(), Some((1, 3)));
        for bad in ["P1D", "1P", "0P1D", "xPyD", "1P1Dx"] {
            assert!(parse_layout(bad).unwrap_err().contains("deployment.cluster.disaggregation"), "{bad}");
        }
        let c = ClusterOptions { nodes: 0, ..Default::default() };
        assert!(c.validate().unwrap_err().contains("deployment.cluster.nodes"));
        let het = |d: Option<&str>, n: Option<u64>, l: &[&str]| ClusterOptions { prefill_device: d.map(String::from), prefill_nodes: n, disaggregation: l.iter().map(|x| x.to_string()).collect(), ..Default::default() }.validate();
        assert!(het(Some("910C"), Some(1), &["1P1D"]).is_ok());
        assert!(het(Some("910C"), None, &["1P1D"]).unwrap_err().contains("deployment.cluster.prefill_nodes"));
        assert!(het(None, Some(1), &["1P1D"]).unwrap_err().contains("deployment.cluster.prefill_device"));
        assert!(het(Some("910C"), Some(0), &["1P1D"]).unwrap_err().contains("deployment.cluster.prefill_nodes"));
        assert!(het(Some("910C"), Some(1), &["colocated"]).unwrap_err().contains("xPyD"));
    }
}
