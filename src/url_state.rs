//! The scenario in the URL fragment, through the scenario crate's codec (deflate + base64url
//! behind a version prefix, bounded on read). Writes use `history.replaceState`, so editing does
//! not flood the history; a link the user opens or navigates to is read back whole or refused.

use tunelab_scenario::{url, Scenario};

/// Reads a fragment: `Ok(None)` when there is none, the scenario, or why the link is unusable.
pub fn read(fragment: &str) -> Result<Option<Scenario>, String> {
    read_reporting(fragment).map(|r| r.map(|(s, _)| s))
}

/// `read`, with the lines of the keys the link's scenario carries that this build does not
/// read (the input-warnings banner lists them).
pub fn read_reporting(fragment: &str) -> Result<Option<(Scenario, Vec<String>)>, String> {
    let f = fragment.trim();
    let f = f.strip_prefix('#').unwrap_or(f);
    if f.is_empty() {
        return Ok(None);
    }
    url::decode_reporting(f).map(|(s, r)| Some((s, r.lines())))
}

/// The fragment (without '#') that reproduces a scenario.
pub fn write(s: &Scenario) -> String {
    url::encode(s)
}

/// The scenario the page opens with when the link carries none: the first bundled one.
pub fn default_scenario() -> Scenario {
    tunelab_scenario::bundled_scenarios()
        .into_iter()
        .find_map(|(_, s)| s.ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_empty() {
        let s = default_scenario();
        assert_eq!(read(&format!("#{}", write(&s))).unwrap(), Some(s));
        assert_eq!(read("").unwrap(), None);
        assert_eq!(read("#").unwrap(), None);
    }

    #[test]
    fn a_misspelled_key_is_listed_and_the_rest_kept() {
        let json = r#"{"name": "mine", "seed": 7, "deployment": {"serving": {"graph_mod": "full"}}}"#;
        let (s, lines) = read_reporting(&format!("#{}", url::encode_json(json))).unwrap().unwrap();
        assert_eq!((s.name.as_str(), s.seed), ("mine", 7));
        assert_eq!(lines, vec!["`deployment.serving.graph_mod`: unknown key; did you mean `graph_mode`?".to_string()]);
    }

    #[test]
    fn hostile_fragments_are_refused() {
        for f in ["#<script>alert(1)</script>", "#v1.!!!!", "#v1.AAAA", "#v9.abc"] {
            assert!(read(f).is_err(), "{f}");
        }
        let huge = format!("#v1.{}", "A".repeat(300 * 1024));
        assert!(read(&huge).is_err());
    }
}
