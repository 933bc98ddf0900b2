//! The URL fragment codec: scenario JSON -> deflate -> base64url, behind a version prefix.
//!
//! Why bounded: a fragment comes from anyone, so it is checked for size before decoding and the
//! inflater is told the largest output it may produce (a small "zip bomb" stops there), and every
//! failure is an Err with a message, never a panic.

use crate::spec::scenario::Scenario;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;

/// Prefix of fragments this build writes.
pub const PREFIX: &str = "v1.";
/// Longest fragment accepted (characters after an optional '#').
pub const MAX_FRAGMENT: usize = 256 * 1024;
/// Largest inflated scenario JSON accepted (bytes).
pub const MAX_JSON: usize = 2 * 1024 * 1024;

/// Encodes a scenario as a fragment ("v1.<base64url>", without the '#').
pub fn encode(s: &Scenario) -> String {
    let json = serde_json::to_string(s).unwrap_or_else(|_| "{}".into());
    encode_json(&json)
}

/// Encodes JSON text as a fragment.
pub fn encode_json(json: &str) -> String {
    let packed = miniz_oxide::deflate::compress_to_vec(json.as_bytes(), 9);
    format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(packed))
}

/// Decodes a fragment (with or without a leading '#') to the scenario JSON text.
pub fn decode_json(fragment: &str) -> Result<String, String> {
    let f = fragment.trim();
    let f = f.strip_prefix('#').unwrap_or(f);
    if f.is_empty() {
        return Err("the link has no scenario (the fragment is empty)".into());
    }
    if f.len() > MAX_FRAGMENT {
        return Err(format!("the link's scenario is too long ({} characters; at most {MAX_FRAGMENT})", f.len()));
    }
    let Some(body) = f.strip_prefix(PREFIX) else {
        return Err(match f.split_once('.') {
            Some((v, _)) if v.starts_with('v') && v.len() <= 6 && v[1..].chars().all(|c| c.is_ascii_digit()) => {
                format!("the link uses scenario format '{v}', which this version of Tunelab cannot read (it reads '{}')", PREFIX.trim_end_matches('.'))
            }
            _ => format!("the link's fragment is not a Tunelab scenario (it should start with '{PREFIX}')"),
        });
    };
    let packed = URL_SAFE_NO_PAD
        .decode(body.trim_end_matches('='))
        .map_err(|e| format!("the link's scenario is damaged (not valid base64url: {e})"))?;
    let bytes = miniz_oxide::inflate::decompress_to_vec_with_limit(&packed, MAX_JSON).map_err(|e| match e.status {
        miniz_oxide::inflate::TINFLStatus::HasMoreOutput => format!("the link's scenario inflates to more than {MAX_JSON} bytes; refused"),
        _ => "the link's scenario is damaged (the compressed data does not inflate)".to_string(),
    })?;
    String::from_utf8(bytes).map_err(|_| "the link's scenario is damaged (not UTF-8 text)".to_string())
}

/// Decodes and validates a fragment into a scenario.
pub fn decode(fragment: &str) -> Result<Scenario, String> {
    decode_reporting(fragment).map(|(s, _)| s)
}

/// `decode`, with the keys the link's scenario carries that this build does not read (a link
/// from an older or newer build, or edited by hand): the app shows them in a banner and keeps
/// everything else the link says.
pub fn decode_reporting(fragment: &str) -> Result<(Scenario, crate::spec::strict::Report), String> {
    let json = decode_json(fragment)?;
    Scenario::from_json_reporting(&json).map_err(|e| format!("the link's scenario is invalid: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_the_scenario() {
        let s = Scenario { seed: 42, name: "<script>alert(1)</script>".into(), ..Scenario::default() };
        let f = encode(&s);
        assert!(f.starts_with(PREFIX));
        assert!(f[PREFIX.len()..].chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
        assert_eq!(decode(&f).unwrap(), s);
        assert_eq!(decode(&format!("#{f}")).unwrap(), s);
    }

    #[test]
    fn hostile_fragments_are_errors() {
        for bad in ["", "#", "garbage", "v1.", "v1.!!!!", "v1.AAAA", "v9.abc", "v2.eJzLSM3JyQcABiwCFQ"] {
            assert!(decode(bad).is_err(), "{bad}");
        }
        // A bomb: 3 MB of spaces compresses to a few KB but must not inflate past the limit.
        let bomb = encode_json(&" ".repeat(3 * 1024 * 1024));
        assert!(bomb.len() < MAX_FRAGMENT);
        assert!(decode(&bomb).unwrap_err().contains("more than"));
        let huge = format!("v1.{}", "A".repeat(MAX_FRAGMENT + 1));
        assert!(decode(&huge).unwrap_err().contains("too long"));
        let not_utf8 = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(miniz_oxide::deflate::compress_to_vec(&[0xff, 0xfe, 0x00], 6)));
        assert!(decode(&not_utf8).unwrap_err().contains("UTF-8"));
        assert!(decode(&encode_json("[1,2]")).is_err());
        assert!(decode(&encode_json("{\"version\": 99}")).unwrap_err().contains("version"));
    }

    #[test]
    fn free_form_fields_cannot_amplify_a_short_link() {
        // Issue 13 #5: a 1.9 KB link whose `view` nests 120 levels around 700,000 zeros decoded
        // to 173 MB of pretty JSON (214 MB peak). Now it is refused, naming the field.
        let zeros = vec!["0"; 700_000].join(",");
        let deep = format!("{{\"view\":{}[{zeros}]{}}}", "[".repeat(120), "]".repeat(120));
        let link = encode_json(&deep);
        assert!(link.len() < 4096, "{}", link.len());
        let e = decode(&link).unwrap_err();
        assert!(e.contains("'view'") && e.contains("levels"), "{e}");
        // Flat but large: refused by size.
        let e = decode(&encode_json(&format!("{{\"view\":[{zeros}]}}"))).unwrap_err();
        assert!(e.contains("'view'") && e.contains("KiB"), "{e}");
        // The same through the inline model, the inline device and strategy options.
        let nest = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        for (field, doc) in [
            ("'model'", format!("{{\"model\":{{\"a\":{}}}}}", nest(60))),
            ("'device'", format!("{{\"device\":{{\"a\":{}}}}}", nest(60))),
            ("'strategy'", format!("{{\"strategy\":{{\"name\":\"random\",\"options\":{}}}}}", nest(60))),
            ("'training'", format!("{{\"stage\":\"training\",\"training\":{{\"x\":[{zeros}]}}}}")),
        ] {
            let e = decode(&encode_json(&doc)).unwrap_err();
            assert!(e.contains(field), "{field}: {e}");
        }
        // Ordinary view state still opens.
        let ok = decode(&encode_json(r#"{"view": {"tab": "tune", "axes": [0, 1], "open": {"a": [1, 2, 3]}}}"#)).unwrap();
        assert_eq!(ok.view["tab"], "tune");
    }
}
