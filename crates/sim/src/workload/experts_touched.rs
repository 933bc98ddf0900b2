//! Experts touched per step: how many distinct routed experts a step's tokens hit, and how many
//! of them land on the busiest expert-parallel rank. A grouped-matmul kernel reads (and, on the
//! W4A16 workspace path, dequantises) the weights of every expert with at least one token and
//! skips the empty groups (hicann/ops-transformer `grouped_matmul_antiquant.h`: an empty group's
//! `dimM` is 0, so no cast round and no matmul block runs for it), so the weight traffic of a
//! small decode batch grows with the experts its tokens touch, and the EP ranks meet at the
//! combine, so the busiest rank sets the pace.
//!
//! Pure functions of the routing shape under uniform routing (every token picks `top_k` distinct
//! experts out of `experts` at random); deterministic (libm). Used by the MoE block of the graph
//! builder (`llm::moe`) and open to any other routed block (a latent MoE routes the same way).

/// Probability that one given expert is hit by at least one of `tokens` tokens, each picking
/// `top_k` distinct experts out of `experts`: 1 - (1 - top_k / experts)^tokens.
pub fn hit_probability(top_k: u64, experts: u64, tokens: u64) -> f64 {
    if experts == 0 {
        return 0.0;
    }
    1.0 - libm::pow((1.0 - top_k as f64 / experts as f64).max(0.0), tokens.max(1) as f64)
}

/// Expected distinct experts hit by `tokens` tokens (uniform routing), at least 1 and at most
/// `experts`, rounded up (after a 1e-9 allowance for the floating-point product: one token hits
/// exactly top_k, where 384 x (8 / 384) computes as 8.000000000000014).
pub fn distinct_hit(top_k: u64, experts: u64, tokens: u64) -> u64 {
    ((experts as f64) * hit_probability(top_k, experts, tokens) - 1e-9).ceil().clamp(1.0, experts.max(1) as f64) as u64
}

/// The expected largest number of hit experts on one of `ranks` ranks holding `per_rank`
/// experts each, every expert hit with probability `hit` (independently): E[max] of `ranks`
/// Binomial(per_rank, hit) counts, sum over j >= 1 of 1 - P(count < j)^ranks. One rank: the mean.
pub fn busiest_rank_hits(per_rank: u64, hit: f64, ranks: u64) -> f64 {
    let q = hit.clamp(0.0, 1.0);
    if q >= 1.0 || ranks <= 1 {
        return per_rank as f64 * q;
    }
    let n = per_rank as f64;
    let mut pmf = libm::pow(1.0 - q, n);
    let mut cdf = pmf;
    let mut sum = 0.0;
    for j in 1..=per_rank {
        sum += 1.0 - libm::pow(cdf.min(1.0), ranks as f64);
        pmf *= (n - j as f64 + 1.0) / j as f64 * q / (1.0 - q);
        cdf += pmf;
    }
    sum
}

/// The experts the busiest of `ranks` EP ranks (each holding `per_rank` expert slots) runs for a
/// step of `tokens` routed tokens: `busiest_rank_hits` rounded, at least 1 and at most
/// `per_rank`. What the grouped matmul's batch and the W4A16 dequantisation count.
pub fn busiest_rank_experts(top_k: u64, experts: u64, tokens: u64, per_rank: u64, ranks: u64) -> u64 {
    let per_rank = per_rank.max(1);
    (libm::round(busiest_rank_hits(per_rank, hit_probability(top_k, experts, tokens), ranks)) as u64).clamp(1, per_rank)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busiest_rank_holds_more_hit_experts_than_the_mean_and_never_more_than_it_has() {
        // Kimi-K2 on 16 ranks (384 experts, 24 per rank): one token hits 8 experts, the
        // busiest rank about 2 of them; eight tokens about 60 (3.7 per rank on average), the
        // busiest about 7.
        let one = busiest_rank_hits(24, 8.0 / 384.0, 16);
        let eight = busiest_rank_hits(24, 1.0 - (1.0f64 - 8.0 / 384.0).powi(8), 16);
        assert!((1.6..2.3).contains(&one), "{one}");
        assert!((6.0..8.5).contains(&eight), "{eight}");
        // Every expert hit: every rank is full; one rank: the mean.
        assert_eq!(busiest_rank_hits(24, 1.0, 16), 24.0);
        assert!((busiest_rank_hits(128, 0.25, 1) - 32.0).abs() < 1e-9);
        // More ranks, same per-rank load: the busiest of more is busier.
        assert!(busiest_rank_hits(24, 0.1, 64) > busiest_rank_hits(24, 0.1, 8));
    }

    #[test]
    fn experts_touched_grow_with_the_step_and_saturate_at_the_rank() {
        // Kimi-K2, EP16: 1, 2, 4, 8, 16 decode tokens.
        let e: Vec<u64> = [1u64, 2, 4, 8, 16, 1024].iter().map(|&t| busiest_rank_experts(8, 384, t, 24, 16)).collect();
        assert!(e.windows(2).all(|w| w[0] <= w[1]), "{e:?}");
        assert_eq!(e[0], 2, "{e:?}");
        assert!(e[3] >= 3 * e[0], "eight tokens touch at least three times one token's experts: {e:?}");
        assert_eq!(e[5], 24, "a 1024-token prefill touches every local expert: {e:?}");
        // Distinct experts over the whole group: one token hits exactly top_k.
        assert_eq!(distinct_hit(8, 384, 1), 8);
        assert_eq!(distinct_hit(8, 384, 100_000), 384);
        assert_eq!(hit_probability(8, 0, 5), 0.0);
    }
}
