//! The plain-text report of a calibration (split from `mod.rs`, no change).

use super::{Calibration, RowFit};
use crate::evidence::fidelity::median;

impl Calibration {
    /// Plain-text report: parameters, per-value errors before/after/leave-one-source-out, summary.
    pub fn to_text(&self) -> String {
        let pct = |x: Option<f64>| x.map(|e| format!("{:+.1}%", e * 100.0)).unwrap_or_else(|| "-".into());
        let apct = |x: Option<f64>| x.map(|e| format!("{:.1}%", e * 100.0)).unwrap_or_else(|| "-".into());
        let mut s = format!("Calibrating {} on '{}' ({}), strategy {}, {} evaluations\n\n", self.device, self.measurements, self.digest, self.strategy, self.evaluations);
        s += &format!("{:<28} {:>12} {:>12} {:>24}\n", "parameter", "before", "after", "bounds");
        for p in &self.params {
            s += &format!("{:<28} {:>12} {:>12} {:>24}\n", p.name, crate::evidence::fidelity::num(p.before), crate::evidence::fidelity::num(p.after), format!("[{}, {}]", crate::evidence::fidelity::num(p.min), crate::evidence::fidelity::num(p.max)));
        }
        s += &format!("\n{:<50} {:<22} {:>10} {:>9} {:>9} {:>9}\n", "case", "metric", "measured", "before", "after", "LOSO");
        for r in &self.rows {
            s += &format!("{:<50} {:<22} {:>10} {:>9} {:>9} {:>9}\n", cut(&r.case, 50), cut(&r.metric, 22), crate::evidence::fidelity::num(r.measured), pct(Some(r.error_before)), pct(r.error_after), pct(r.error_loo));
        }
        s += &format!(
            "\n{} rows, {} values: median |error| {} before, {} after, {} leave one source out; residual (weighted mean |ln ratio|) {:.4} -> {:.4}\n",
            self.rows_used, self.rows.len(), apct(self.median_abs_error_before), apct(self.median_abs_error_after), apct(self.median_abs_error_loo), self.loss_before, self.loss_after
        );
        let signed = |f: fn(&RowFit) -> Option<f64>| median(&self.rows.iter().filter_map(f).collect::<Vec<_>>());
        s += &format!(
            "bias (median signed error): {} before, {} after, {} leave one source out\n",
            pct(signed(|r| Some(r.error_before))), pct(signed(|r| r.error_after)), pct(signed(|r| r.error_loo))
        );
        s
    }
}

fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n { s.to_string() } else { s.chars().take(n - 1).collect::<String>() + "~" }
}
