//! Pretty JSON from compact JSON text, byte for byte what `serde_json::to_string_pretty` writes
//! (two-space indent, `": "`, empty `[]` and `{}` kept closed).
//!
//! Why: the page's module serialises a scenario compactly (links, worker messages); writing it
//! pretty through serde's pretty formatter would link a second copy of every scenario type's
//! serialiser (the first load, issue 46's 1 MiB). Re-indenting the compact text gives the same
//! bytes with one serialiser.

/// `text` (compact JSON, as `serde_json::to_string` writes it) indented as
/// `serde_json::to_string_pretty` indents it.
pub fn pretty(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len() * 2);
    let mut depth = 0usize;
    let mut i = 0;
    // Start of the run of bytes copied as they are (inside strings, numbers, literals).
    let mut from = 0;
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    };
    while i < b.len() {
        match b[i] {
            b'"' => {
                // A string, escapes included, copied whole.
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                continue;
            }
            c @ (b'[' | b'{') => {
                out.push_str(&text[from..i]);
                let close = if c == b'[' { b']' } else { b'}' };
                if b.get(i + 1) == Some(&close) {
                    out.push(c as char);
                    out.push(close as char);
                    i += 2;
                } else {
                    out.push(c as char);
                    depth += 1;
                    newline(&mut out, depth);
                    i += 1;
                }
                from = i;
                continue;
            }
            c @ (b']' | b'}') => {
                out.push_str(&text[from..i]);
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c as char);
            }
            b',' => {
                out.push_str(&text[from..i]);
                out.push(',');
                newline(&mut out, depth);
            }
            b':' => {
                out.push_str(&text[from..i]);
                out.push_str(": ");
            }
            _ => {
                i += 1;
                continue;
            }
        }
        i += 1;
        from = i;
    }
    out.push_str(&text[from.min(text.len())..]);
    out
}

#[cfg(test)]
mod tests {
    use super::pretty;

    /// Every bundled scenario, and JSON with empty containers, escapes and nesting, comes out
    /// exactly as serde_json's pretty writer writes it.
    #[test]
    fn pretty_is_serde_json_pretty() {
        for (id, s) in crate::bundled_scenarios() {
            let s = s.unwrap();
            assert_eq!(pretty(&serde_json::to_string(&s).unwrap()), serde_json::to_string_pretty(&s).unwrap(), "{id}");
        }
        let v: serde_json::Value = serde_json::from_str(r#"{"a":[],"b":{},"c":[1,[2,{}],{"d":"x,y:{[\"]}"}],"e":"\\","f":-1.5e-7,"g":[[]],"h":null,"i":true}"#).unwrap();
        assert_eq!(pretty(&serde_json::to_string(&v).unwrap()), serde_json::to_string_pretty(&v).unwrap());
        assert_eq!(pretty("3"), "3");
    }
}
