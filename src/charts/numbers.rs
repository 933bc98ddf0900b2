//! Numbers as the page shows them to people: the one place every component and chart takes
//! its number formatting from.
//!
//! The rounding itself lives in the engine crate (`tunelab_scenario::metrics`), so the CLI and
//! the engine's own sentences (diagnosis, notes) print the same digits as the page: at most
//! four significant digits (five for no number), units where they exist, counts exact. Raw
//! exports (report JSON, trial CSV) and `data-value` attributes keep full precision
//! (`tunelab_scenario::format_best`), so tests and downloads can compare exactly.

pub use tunelab_scenario::metrics::{fmt4, fmt_metric, fmt_sig, fmt_unit, readable};
/// The exact number, for `data-value` attributes and exports (never shown as text).
pub use tunelab_scenario::format_best as exact;

/// Compact number for chart ticks and labels: three significant digits (four from 1000 to
/// 9999), k/M/G suffixes for large values, an exponent for tiny ones. Non-finite: "n/a".
pub fn format_num(v: f64) -> String {
    format_num_sig(v, 3)
}

/// [`format_num`] with `digits` significant digits (at least the 3 it uses).
pub fn format_num_sig(v: f64, digits: u32) -> String {
    if !v.is_finite() {
        return "n/a".to_string();
    }
    if v == 0.0 {
        return "0".to_string();
    }
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e12 || a < 1e-3 {
        return format!("{v:.2e}");
    } else if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    format!("{}{suffix}", fmt_sig(scaled, if scaled.abs() >= 1000.0 { digits.max(4) } else { digits.max(3) }))
}

/// Tick labels that differ from each other: `f`'s, or, where two would read the same (a narrow
/// range such as 22,650 to 22,700 gives four "22.7k"), the same numbers with more significant
/// digits, up to what tells them apart.
pub fn distinct_labels(ticks: &[f64], f: &dyn Fn(f64) -> String) -> Vec<String> {
    let unique = |l: &[String]| {
        let mut s: Vec<&String> = l.iter().collect();
        s.sort();
        s.dedup();
        s.len() == l.len()
    };
    let first: Vec<String> = ticks.iter().map(|t| f(*t)).collect();
    if unique(&first) || ticks.iter().any(|t| !t.is_finite()) {
        return first;
    }
    for digits in 4..=6 {
        let l: Vec<String> = ticks.iter().map(|t| format_num_sig(*t, digits)).collect();
        if unique(&l) {
            return l;
        }
    }
    // Ticks no sensible precision tells apart (an axis over one repeated value, e.g. every
    // trial of a fine-tune at the same step time): one label, the others left blank, rather
    // than the same six-digit number five times.
    let mut seen: Vec<String> = Vec::new();
    first
        .into_iter()
        .map(|l| if seen.contains(&l) { String::new() } else { seen.push(l.clone()); l })
        .collect()
}

/// A configuration as people read it ("batch=64, x=-3.095"): like `Config::describe`, with
/// fractional values rounded by [`fmt4`]. `data-config` attributes and exports keep `describe`.
pub fn describe(config: &tunelab_search::Config, names: &[String]) -> String {
    readable_config(&config.describe(names))
}

/// A `Config::describe` text ("name=value, ...") with its fractional numbers rounded by
/// [`fmt4`]; whole numbers and words are kept as they are.
pub fn readable_config(text: &str) -> String {
    text.split(", ")
        .map(|part| match part.split_once('=') {
            Some((name, value)) if value.contains('.') => match value.parse::<f64>() {
                Ok(v) if v.is_finite() => format!("{name}={}", fmt4(v)),
                _ => part.to_string(),
            },
            _ => part.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configurations_read_with_rounded_fractions() {
        assert_eq!(readable_config("x=-3.095238095238095, y=12.142857142857142"), "x=-3.095, y=12.14");
        assert_eq!(readable_config("batch=64, precision=w8a8, kv_cache_fraction=0.8, tp=1"), "batch=64, precision=w8a8, kv_cache_fraction=0.8, tp=1");
        assert_eq!(readable_config("launch=v1.2.3"), "launch=v1.2.3");
    }

    #[test]
    fn numbers_format_compactly() {
        assert_eq!(format_num(0.0), "0");
        assert_eq!(format_num(12.5), "12.5");
        assert_eq!(format_num(1.0), "1");
        assert_eq!(format_num(0.125), "0.125");
        assert_eq!(format_num(1250.0), "1250");
        assert_eq!(format_num(25_000.0), "25k");
        assert_eq!(format_num(3_500_000.0), "3.5M");
        assert_eq!(format_num(-2e9), "-2G");
        assert_eq!(format_num(0.0001234), "1.23e-4");
        assert_eq!(format_num(f64::NAN), "n/a");
        assert_eq!(format_num(-0.0000), "0");
    }

    #[test]
    fn chart_numbers_keep_at_most_four_digits() {
        assert_eq!(format_num(1063.7420810687952), "1064");
        assert_eq!(format_num(43.71234), "43.7");
        assert_eq!(format_num(2.5e13), "2.50e13");
        assert_eq!(format_num(999_999.0), "1000k");
    }
}

#[cfg(test)]
mod distinct_tests {
    use super::*;

    #[test]
    fn narrow_axes_keep_their_ticks_apart() {
        let ticks = [22_660.0, 22_680.0, 22_700.0, 22_720.0];
        assert_eq!(ticks.iter().map(|t| format_num(*t)).collect::<Vec<_>>(), vec!["22.7k"; 4]);
        let l = distinct_labels(&ticks, &format_num);
        assert_eq!(l, vec!["22.66k", "22.68k", "22.7k", "22.72k"]);
        assert_eq!(distinct_labels(&[0.0, 5.0, 10.0], &format_num), vec!["0", "5", "10"]);
    }

    #[test]
    fn an_axis_over_one_repeated_value_labels_it_once() {
        let ticks = [0.736664, 0.736664, 0.736664];
        assert_eq!(distinct_labels(&ticks, &format_num), vec!["0.737", "", ""]);
    }
}
