//! The deployment objective in capacity mode (`crate::stages::capacity`): one configuration
//! served at the highest rate it sustains within the TTFT and TPOT limits, every probe on the
//! same request sample stretched to the probed rate.

use super::{DeploymentObjective, Knobs, Served};
use crate::stages::capacity::rate::{search, RateBounds, Verdict};
use crate::stages::capacity::verdict;

impl DeploymentObjective {
    /// Serves `k` at its highest sustained rate: Ok(Ok((served, rate))), Ok(Err(why)) when the
    /// configuration is infeasible or misses the limits even at the lowest rate searched.
    pub(super) fn serve_capacity(&mut self, k: &Knobs) -> Result<Result<(Served, f64), String>, String> {
        let Some((unit, start)) = self.capacity.take() else { return Err("capacity mode is not set up".into()) };
        let slo = self.slo;
        let mut infeasible: Option<String> = None;
        let mut hard: Option<String> = None;
        let found = search(RateBounds::new(start), |rate| {
            for (r, t) in self.reqs.iter_mut().zip(&unit) {
                r.arrival_s = t / rate;
            }
            match self.serve_knobs(k) {
                Ok(Ok(s)) => Ok(match verdict(&s.stats, &slo) {
                    Ok(()) => Verdict::Holds(s),
                    Err(w) => Verdict::Misses(w),
                }),
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
        self.capacity = Some((unit, start));
        if let Some(e) = hard {
            return Err(e);
        }
        Ok(match found {
            Ok(f) => Ok((f.stats, f.rate)),
            Err(why) => Err(infeasible.unwrap_or(why)),
        })
    }
}
