//! The deployment objective in capacity mode (`crate::stages::capacity`): one configuration
//! served at the highest rate it sustains within the TTFT and TPOT limits, every probe on the
//! same request sample stretched to the probed rate.

use super::{DeploymentObjective, Knobs, Served};
use crate::stages::capacity::rate::{search, Found, RateBounds, Verdict};
use crate::stages::capacity::{margin_at, verdict_at};

impl DeploymentObjective {
    /// Serves `k` at its highest sustained rate: Ok(Ok((served, rate))), Ok(Err(why)) when the
    /// configuration is infeasible or misses the limits even at the lowest rate searched.
    ///
    /// Two passes when a rank serves many requests: first the search on the sample's first
    /// quarter (a quarter of the cost per probe; it only says where the knee lies), then the
    /// search on the whole sample starting there with steps of one grid point. The answer is
    /// the whole sample's: the highest grid rate that holds on it with the next one missing.
    pub(super) fn serve_capacity(&mut self, k: &Knobs) -> Result<Result<(Served, f64), String>, String> {
        let Some((unit, start)) = self.capacity.take() else { return Err("capacity mode is not set up".into()) };
        let full = self.reqs.len();
        let per_rank = full as u64 / k.scale.dp.max(1);
        let mut bounds = RateBounds { warm: self.capacity_warm, ..RateBounds::new(start) };
        if per_rank >= COARSE_MIN_PER_RANK {
            let all = std::mem::take(&mut self.reqs);
            self.reqs = all[..full / 4].to_vec();
            let coarse = self.search_rates(k, &unit, bounds);
            self.reqs = all;
            match coarse {
                Ok((Ok(f), _)) => {
                    // The quarter's knee sits about a grid point under the whole sample's (a
                    // shorter run queues less): start one above it.
                    bounds = RateBounds { warm: Some(f.index + 1), first_step: 1, ..bounds };
                }
                // The quarter says nothing the whole sample would not: search it from the start.
                Ok((Err(_), _)) => {}
                Err(e) => {
                    self.capacity = Some((unit, start));
                    return Err(e);
                }
            }
        }
        let found = self.search_rates(k, &unit, bounds);
        self.capacity = Some((unit, start));
        let (found, infeasible) = found?;
        if let Ok(f) = &found {
            self.capacity_warm = Some(f.index);
        }
        Ok(match found {
            Ok(f) => Ok((f.stats, f.rate)),
            Err(why) => Err(infeasible.unwrap_or(why)),
        })
    }

    /// One rate search over the current request sample: Err on a hard error, else the search's
    /// answer and why the configuration could not run at all (when it could not).
    fn search_rates(&mut self, k: &Knobs, unit: &[f64], bounds: RateBounds) -> Result<(Result<Found<Served>, String>, Option<String>), String> {
        let slo = self.slo;
        let mut infeasible: Option<String> = None;
        let mut hard: Option<String> = None;
        let found = search(bounds, |rate| {
            for (r, t) in self.reqs.iter_mut().zip(unit) {
                r.arrival_s = t / rate;
            }
            match self.serve_knobs(k) {
                Ok(Ok(s)) => {
                    // The limits, and a sample large enough to show the rate as a sustained load.
                    let m = margin_at(rate, &s.stats, &slo);
                    Ok(match verdict_at(rate, &s.stats, &slo) {
                        Ok(()) => (Verdict::Holds(s), m),
                        Err(w) => (Verdict::Misses(w), m),
                    })
                }
                Ok(Err(why)) => {
                    infeasible = Some(why.clone());
                    Err(why)
                }
                Err(e) => {
                    hard = Some(e.clone());
                    Err(e)
                }
            }
        });
        match hard {
            Some(e) => Err(e),
            None => Ok((found, infeasible)),
        }
    }
}

/// Requests per data-parallel rank from which the search first runs on a quarter of the sample.
const COARSE_MIN_PER_RANK: u64 = 400;
