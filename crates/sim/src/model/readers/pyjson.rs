//! Python's `json` writes `Infinity`, `-Infinity` and `NaN` for non-finite floats (Nemotron-H's
//! `time_step_limit`, some configs' `rope_scaling` bounds); strict JSON, and serde_json, refuse
//! them. This pre-pass turns each such bare token (outside strings) into the string
//! "Infinity" / "-Infinity" / "NaN", so the config parses; a size field holding one is then
//! refused by its reader with the field's name ("must be an integer, got \"Infinity\""), and a
//! field Tunelab does not read keeps no meaning.

/// The text with Python's non-finite literals quoted; None when there were none.
pub fn quote_non_finite(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 16);
    let (mut i, mut last, mut in_str, mut changed) = (0usize, 0usize, false, false);
    while i < b.len() {
        let c = b[i];
        if in_str {
            if c == b'\\' {
                i += 2;
                continue;
            }
            if c == b'"' {
                in_str = false;
            }
            i += 1;
            continue;
        }
        if c == b'"' {
            in_str = true;
            i += 1;
            continue;
        }
        let mut matched = false;
        for tok in ["-Infinity", "Infinity", "NaN"] {
            let after = i + tok.len();
            if b[i..].starts_with(tok.as_bytes()) && (i == 0 || !b[i - 1].is_ascii_alphanumeric()) && (after >= b.len() || !b[after].is_ascii_alphanumeric()) {
                out.push_str(&text[last..i]);
                out.push('"');
                out.push_str(tok);
                out.push('"');
                (i, last, changed, matched) = (after, after, true, true);
                break;
            }
        }
        if !matched {
            i += 1;
        }
    }
    if !changed {
        return None;
    }
    out.push_str(&text[last..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::quote_non_finite;

    #[test]
    fn quotes_bare_tokens_only() {
        let s = r#"{"a": [0.0, Infinity], "b": -Infinity, "c": NaN, "d": "Infinity NaN", "e": 1}"#;
        let q = quote_non_finite(s).unwrap();
        let v: serde_json::Value = serde_json::from_str(&q).unwrap();
        assert_eq!(v["a"][1], "Infinity");
        assert_eq!(v["b"], "-Infinity");
        assert_eq!(v["c"], "NaN");
        assert_eq!(v["d"], "Infinity NaN");
        assert_eq!(v["e"], 1);
        assert!(quote_non_finite(r#"{"x": 1}"#).is_none());
    }
}
