//! Keys a prompt chunk's queries see in sliding-window and chunked-local attention layers.
//!
//! Why its own place: the forward graph (`llm::windowed`) prices a whole prompt whose queries
//! start at position 0, but an engine's chunked prefill runs a chunk of `q` new queries at the
//! end of `kv` tokens of context. Before, the serving step re-shaped every attention core of
//! such a chunk to the whole context, so the local layers of gpt-oss, Gemma 3, MiMo, Step-3.7 or
//! Llama 4 were priced as full attention over `kv` keys during prefill (issue 41: "priced with
//! full attention everywhere"). Here a chunk's key count is the exact sum over its queries.

use crate::model::{Mixer, TransformerDesc};

/// The local geometry of a model's windowed (`_window`) and chunked (`_chunk`) attention cores:
/// the window and the chunk size its layers use. A model with several different windows (none
/// bundled or in the zoo has) is priced at its widest, which never understates the work.
pub fn local_geometry(t: &TransformerDesc) -> (u64, u64) {
    t.runs().iter().fold((0, 0), |(w, c), r| match r.mixer {
        Mixer::Attention { window, chunk, compress: 0, .. } => (w.max(window), c.max(chunk)),
        _ => (w, c),
    })
}

/// For a chunk of `q` queries at positions `kv - q .. kv` of a sequence: the mean number of keys
/// a query attends to and whether the core stays causal, under a sliding `window` (a query at
/// position p sees min(p + 1, window) keys) or aligned `chunk`s (it sees p mod chunk + 1). `None`
/// when every query sees every earlier key (the context fits the window or the chunk), so the
/// causal core over `kv` keys is already exact.
pub fn chunk_keys(window: u64, chunk: u64, q: u64, kv: u64) -> Option<(u64, bool)> {
    let q = q.min(kv);
    if q == 0 {
        return None;
    }
    let pairs = if window > 0 {
        if kv <= window {
            return None;
        }
        // Sum of min(x, w) for x = kv - q + 1 ..= kv.
        let (a, b, w) = (kv - q + 1, kv, window);
        let ramp = if a <= w {
            let m = w.min(b);
            (u128::from(a) + u128::from(m)) * u128::from(m - a + 1) / 2
        } else {
            0
        };
        let flat = u128::from(b.saturating_sub(a.max(w + 1)) + u64::from(b >= a.max(w + 1))) * u128::from(w);
        ramp + flat
    } else if chunk > 0 {
        if kv <= chunk {
            return None;
        }
        let below = |n: u64| -> u128 {
            let (full, rest) = (u128::from(n / chunk), u128::from(n % chunk));
            full * u128::from(chunk) * (u128::from(chunk) + 1) / 2 + rest * (rest + 1) / 2
        };
        below(kv) - below(kv - q)
    } else {
        return None;
    };
    // Priced as a non-causal core over the mean keys per query: the same score and value work.
    let mean = pairs.div_ceil(u128::from(q));
    Some((u64::try_from(mean).unwrap_or(u64::MAX).max(1), false))
}

#[cfg(test)]
mod tests {
    use super::chunk_keys;

    #[test]
    fn a_chunk_deep_in_a_long_context_sees_the_window_only() {
        // 4096 queries at the end of 65,536 tokens under a 128-token window: 128 keys each.
        assert_eq!(chunk_keys(128, 0, 4096, 65_536), Some((128, false)));
        // The first chunk of a prompt: queries 0..4095 see 1..128 keys; the ramp is counted.
        let (k, _) = chunk_keys(128, 0, 4096, 4096).unwrap();
        assert_eq!(k, (128 * 129 / 2 + (4096 - 128) * 128u64).div_ceil(4096));
        // A context inside the window is full causal attention: nothing to change.
        assert_eq!(chunk_keys(1024, 0, 512, 1000), None);
    }

    #[test]
    fn chunked_local_attention_counts_each_query_within_its_chunk() {
        // Llama 4's 8192-token chunks; a 1000-query chunk at positions 8192..9191 starts a new
        // chunk: query i sees i + 1 keys.
        assert_eq!(chunk_keys(0, 8192, 1000, 9192), Some((500_500u64.div_ceil(1000), false)));
        assert_eq!(chunk_keys(0, 8192, 100, 8000), None);
    }
}
