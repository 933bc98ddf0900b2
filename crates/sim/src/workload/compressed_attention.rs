//! DeepSeek-V4's compressed attention, priced where it runs (the attention core of the layers
//! whose mixer has `compress > 0`).
//!
//! Each such layer keeps the last `window` tokens' raw KV rows (128 in the V4 configs) and one
//! pooled row per `compress` tokens of the history (`compress_ratios`: 4 for compressed sparse
//! attention, 128 for heavily compressed attention; DeepSeek-V4 model card, and the layer
//! table in antirez/ds4 `MODEL_CARD.md`). A query attends to the raw window and to the
//! compressed rows: all of them on ratio-128 layers, the `topk` an indexer selects on ratio-4
//! layers (`index_topk`: 512 in V4-Flash, 1024 in V4-Pro). The KV cache this holds is
//! `Mixer::cached_tokens` (memory, by the same mixer).
//!
//! The core is priced as an attention over that many keys per query, non-causal for a prompt
//! longer than the window (the mean keys per query, as `windowed` prices a sliding window); a
//! decoding query sees the window plus the selected rows of its whole context.

use super::GraphOp;
use crate::op::{AttentionKind, Op};

/// Keys one query of a `kv_len`-token context attends to on a compressed layer.
pub fn keys_per_query(kv_len: u64, window: u64, compress: u64, topk: u64) -> u64 {
    let raw = kv_len.min(window.max(1));
    let rows = kv_len.saturating_sub(raw) / compress.max(1);
    let sel = if topk > 0 { rows.min(topk) } else { rows };
    raw.saturating_add(sel).max(1)
}

/// `here` of the attention layers whose core is `name` are compressed layers: their core is
/// split off with the keys each query attends to.
pub fn apply(ops: &mut Vec<GraphOp>, start: usize, name: &str, window: u64, compress: u64, topk: u64, here: u64) {
    let Some(i) = ops[start..].iter().position(|o| o.name == name).map(|i| i + start) else { return };
    let Op::Attention { kind, batch, heads, kv_heads, q_len, kv_len, head_dim, causal, dtype } = ops[i].op else { return };
    if here == 0 {
        return;
    }
    let (kv, causal) = if kind == AttentionKind::Decode || !causal || q_len != kv_len {
        (keys_per_query(kv_len, window, compress, topk), causal)
    } else {
        // A causal prompt: query j sees keys_per_query(j) keys; their mean over the prompt
        // (taken at 64 evenly spaced positions, exact for each regime's linear or flat part up
        // to a fraction of a percent), priced as a non-causal attention of that many keys.
        let n = 64u64.min(kv_len.max(1));
        let mut sum = 0f64;
        for s in 0..n {
            let j = (s * kv_len) / n + 1;
            sum += keys_per_query(j, window, compress, topk) as f64;
        }
        let mean = (sum / n as f64).ceil() as u64;
        if mean >= kv_len {
            (kv_len, true)
        } else {
            (mean.max(1), false)
        }
    };
    let op = Op::Attention { kind, batch, heads, kv_heads, q_len, kv_len: kv, head_dim, causal, dtype };
    let suffix = if compress == 1 { "_sparse".to_string() } else { format!("_compressed{compress}") };
    let win = GraphOp { name: format!("{name}{suffix}"), op, repeat: here, class: ops[i].class };
    if here >= ops[i].repeat {
        ops[i] = win;
    } else {
        ops[i].repeat -= here;
        ops.insert(i + 1, win);
    }
}

#[cfg(test)]
mod tests {
    use super::keys_per_query;

    #[test]
    fn keys_are_the_window_plus_the_selected_rows() {
        // Inside the window: every token.
        assert_eq!(keys_per_query(100, 128, 4, 512), 100);
        // Ratio 128 at 1M: the window and every pooled row.
        assert_eq!(keys_per_query(1 << 20, 128, 128, 0), 128 + ((1 << 20) - 128) / 128);
        // Ratio 4 at 1M: the window and the indexer's 512 rows.
        assert_eq!(keys_per_query(1 << 20, 128, 4, 512), 128 + 512);
    }
}
