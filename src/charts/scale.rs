//! Scales, tick placement and number formatting for the SVG charts.
//!
//! Plain functions with no web APIs, so the geometry is unit-tested natively and the
//! on-screen chart and its exported SVG text are built from the same numbers. Every
//! function tolerates empty input, NaN, infinities and equal min/max: such values are
//! skipped and degenerate domains are widened rather than producing NaN coordinates.

/// Linear or base-10 logarithmic mapping from a data domain to a pixel range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    /// Data-space lower bound (strictly positive for log scales).
    pub d0: f64,
    /// Data-space upper bound (greater than `d0`).
    pub d1: f64,
    /// Pixel coordinate of `d0`.
    pub r0: f64,
    /// Pixel coordinate of `d1` (may be smaller than `r0`, as for a y axis).
    pub r1: f64,
    /// Logarithmic (base 10) instead of linear.
    pub log: bool,
}

impl Scale {
    /// A linear scale; a degenerate or non-finite domain is widened to a usable one.
    pub fn linear(domain: (f64, f64), range: (f64, f64)) -> Scale {
        let (d0, d1) = fix_linear_domain(domain.0, domain.1);
        Scale { d0, d1, r0: range.0, r1: range.1, log: false }
    }

    /// A log10 scale; non-positive bounds are replaced so the scale stays finite.
    pub fn log(domain: (f64, f64), range: (f64, f64)) -> Scale {
        let (d0, d1) = fix_log_domain(domain.0, domain.1);
        Scale { d0, d1, r0: range.0, r1: range.1, log: true }
    }

    /// Maps a data value to a pixel coordinate; `None` for values the scale cannot show
    /// (NaN, infinite, or non-positive on a log scale).
    pub fn map(&self, v: f64) -> Option<f64> {
        if !v.is_finite() || (self.log && v <= 0.0) {
            return None;
        }
        let t = if self.log {
            (v.log10() - self.d0.log10()) / (self.d1.log10() - self.d0.log10())
        } else {
            (v - self.d0) / (self.d1 - self.d0)
        };
        let p = self.r0 + t * (self.r1 - self.r0);
        p.is_finite().then_some(p)
    }

    /// Like [`Scale::map`] but clamps to the pixel range (for drawing lines to the edge).
    pub fn map_clamped(&self, v: f64) -> Option<f64> {
        let (lo, hi) = if self.r0 <= self.r1 { (self.r0, self.r1) } else { (self.r1, self.r0) };
        self.map(v).map(|p| p.clamp(lo, hi))
    }

    /// Tick values inside the domain: "nice" steps for linear, powers of ten for log.
    pub fn ticks(&self, count: usize) -> Vec<f64> {
        if self.log {
            log_ticks(self.d0, self.d1)
        } else {
            nice_ticks(self.d0, self.d1, count)
        }
    }
}

/// Finite values only, as (min, max); `None` when there are none.
pub fn extent<I: IntoIterator<Item = f64>>(values: I) -> Option<(f64, f64)> {
    let mut out: Option<(f64, f64)> = None;
    for v in values.into_iter().filter(|v| v.is_finite()) {
        out = Some(match out {
            None => (v, v),
            Some((a, b)) => (a.min(v), b.max(v)),
        });
    }
    out
}

/// Finite, strictly positive values only, as (min, max): the extent a log axis can show.
pub fn positive_extent<I: IntoIterator<Item = f64>>(values: I) -> Option<(f64, f64)> {
    extent(values.into_iter().filter(|v| *v > 0.0))
}

fn fix_linear_domain(a: f64, b: f64) -> (f64, f64) {
    let (a, b) = match (a.is_finite(), b.is_finite()) {
        (true, true) => (a.min(b), a.max(b)),
        (true, false) => (a, a),
        (false, true) => (b, b),
        (false, false) => (0.0, 1.0),
    };
    if b > a {
        return (a, b);
    }
    // Equal bounds: widen by 10% of the magnitude (or by 1 around zero).
    let pad = if a == 0.0 { 1.0 } else { a.abs() * 0.1 };
    (a - pad, b + pad)
}

fn fix_log_domain(a: f64, b: f64) -> (f64, f64) {
    let ok = |v: f64| v.is_finite() && v > 0.0;
    let (a, b) = match (ok(a), ok(b)) {
        (true, true) => (a.min(b), a.max(b)),
        (true, false) => (a, a),
        (false, true) => (b, b),
        (false, false) => (1.0, 10.0),
    };
    if b > a {
        (a, b)
    } else {
        (a / 2.0, b * 2.0)
    }
}

/// A step of 1, 2 or 5 times a power of ten, close to `span / count`.
pub fn nice_step(span: f64, count: usize) -> f64 {
    let raw = span.abs() / count.max(1) as f64;
    if !raw.is_finite() || raw <= 0.0 {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let m = if norm < 1.5 {
        1.0
    } else if norm < 3.0 {
        2.0
    } else if norm < 7.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// Rounds a domain outwards to multiples of the nice step (for axes that start on a tick).
pub fn nice_domain(min: f64, max: f64, count: usize) -> (f64, f64) {
    let (min, max) = fix_linear_domain(min, max);
    let step = nice_step(max - min, count);
    ((min / step).floor() * step, (max / step).ceil() * step)
}

/// Ticks at multiples of a nice step inside `[min, max]` (at most a few dozen).
pub fn nice_ticks(min: f64, max: f64, count: usize) -> Vec<f64> {
    let (min, max) = fix_linear_domain(min, max);
    let step = nice_step(max - min, count);
    let first = (min / step).ceil();
    let last = (max / step).floor();
    if !(first.is_finite() && last.is_finite()) || last - first > 100.0 {
        return vec![min, max];
    }
    let mut out = Vec::new();
    let mut k = first;
    while k <= last {
        // Snap to avoid 0.30000000000000004-style labels and -0.
        let v = k * step;
        let v = if v.abs() < step * 1e-9 { 0.0 } else { v };
        out.push(v);
        k += 1.0;
    }
    out
}

/// Powers of ten inside `[min, max]`; if fewer than two fit, 1-2-5 multiples too.
pub fn log_ticks(min: f64, max: f64) -> Vec<f64> {
    let (min, max) = fix_log_domain(min, max);
    let lo = min.log10().floor() as i32;
    let hi = max.log10().ceil() as i32;
    let in_range = |v: f64| v >= min * (1.0 - 1e-9) && v <= max * (1.0 + 1e-9);
    let decades: Vec<f64> = (lo..=hi).map(|e| 10f64.powi(e)).filter(|v| in_range(*v)).collect();
    if decades.len() >= 2 {
        // Thin out very wide ranges to at most ~8 labels.
        let stride = decades.len().div_ceil(8);
        return decades.into_iter().step_by(stride.max(1)).collect();
    }
    let mut out = Vec::new();
    for e in lo..=hi {
        for m in [1.0, 2.0, 5.0] {
            let v = m * 10f64.powi(e);
            if in_range(v) {
                out.push(v);
            }
        }
    }
    if out.is_empty() {
        out = vec![min, max];
    }
    out
}

pub use super::numbers::format_num;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_maps_ends_and_inverts_y() {
        let s = Scale::linear((0.0, 10.0), (100.0, 0.0));
        assert_eq!(s.map(0.0), Some(100.0));
        assert_eq!(s.map(10.0), Some(0.0));
        assert_eq!(s.map(5.0), Some(50.0));
        assert_eq!(s.map(f64::NAN), None);
        assert_eq!(s.map(f64::INFINITY), None);
    }

    #[test]
    fn degenerate_domains_are_widened() {
        let s = Scale::linear((3.0, 3.0), (0.0, 100.0));
        assert!(s.d1 > s.d0);
        assert_eq!(s.map(3.0), Some(50.0));
        let z = Scale::linear((0.0, 0.0), (0.0, 10.0));
        assert_eq!((z.d0, z.d1), (-1.0, 1.0));
        let n = Scale::linear((f64::NAN, f64::NAN), (0.0, 10.0));
        assert_eq!((n.d0, n.d1), (0.0, 1.0));
        let l = Scale::log((-5.0, 0.0), (0.0, 10.0));
        assert!(l.d0 > 0.0 && l.d1 > l.d0);
        let l1 = Scale::log((4.0, 4.0), (0.0, 10.0));
        assert!(l1.map(4.0).unwrap().is_finite());
    }

    #[test]
    fn log_scale_maps_decades_evenly() {
        let s = Scale::log((1.0, 1000.0), (0.0, 300.0));
        let p = s.map(10.0).unwrap();
        assert!((p - 100.0).abs() < 1e-9);
        assert_eq!(s.map(0.0), None);
        assert_eq!(s.map(-1.0), None);
        assert_eq!(s.map_clamped(1e6), Some(300.0));
    }

    #[test]
    fn extents_skip_non_finite() {
        assert_eq!(extent(vec![]), None);
        assert_eq!(extent(vec![f64::NAN, 2.0, f64::INFINITY, -1.0]), Some((-1.0, 2.0)));
        assert_eq!(positive_extent(vec![-3.0, 0.0, 5.0, 0.5]), Some((0.5, 5.0)));
        assert_eq!(positive_extent(vec![-3.0]), None);
    }

    #[test]
    fn nice_ticks_are_round_and_inside() {
        assert_eq!(nice_ticks(0.0, 10.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let unit = nice_ticks(0.0, 1.0, 5);
        assert_eq!(unit.len(), 6);
        assert!((unit[3] - 0.6).abs() < 1e-12);
        let t = nice_ticks(-0.3, 0.3, 4);
        assert!(t.contains(&0.0));
        assert!(t.iter().all(|v| *v >= -0.3 && *v <= 0.3));
        assert!(!nice_ticks(5.0, 5.0, 5).is_empty());
        assert!(!nice_ticks(f64::NAN, 1.0, 5).is_empty());
        assert!(nice_ticks(0.0, 1e300, 5).len() <= 101);
        assert_eq!(nice_domain(0.3, 9.2, 5), (0.0, 10.0));
    }

    #[test]
    fn log_ticks_are_decades_or_125() {
        assert_eq!(log_ticks(1.0, 1000.0), vec![1.0, 10.0, 100.0, 1000.0]);
        assert_eq!(log_ticks(0.5, 3.0), vec![0.5, 1.0, 2.0]);
        assert!(log_ticks(1e-30, 1e30).len() <= 8);
        assert!(!log_ticks(-1.0, -2.0).is_empty());
    }
}
