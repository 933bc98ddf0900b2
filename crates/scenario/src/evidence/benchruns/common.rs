//! Pieces every reader shares: Python's JSON (which writes `Infinity` and `NaN`), numbers that
//! carry a unit ("41.62 token/s", "2006.0 ms"), and a small CSV reader with quoted cells. Every
//! error names the field and, for line-based files, the line.

use serde_json::Value as Json;

/// Most requests a file may describe (per-request lists, a tool's request count).
pub const MAX_REQUESTS: usize = 100_000;
/// Most runs one file may hold (lines of a JSONL file).
pub const MAX_RUNS: usize = 1_000;
/// Most lines of a CSV file.
pub const MAX_CSV_LINES: usize = 10_000;
/// Most cells of one CSV line.
pub const MAX_CSV_CELLS: usize = 256;
/// Longest token length a per-request list may hold.
pub const MAX_TOKENS: u64 = 1 << 24;

/// Python's `json.dumps` writes `Infinity`, `-Infinity` and `NaN` for those floats (SGLang's
/// bench_serving writes `"request_rate": Infinity` for its default rate). Outside strings they
/// become the strings "inf", "-inf" and "nan", so the text parses as JSON and each reader
/// decides what they mean (a rate of "inf" is a burst; a NaN metric is refused by name).
pub fn python_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let (mut in_str, mut escaped) = (false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_str {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_str = false;
            }
        } else if c == '"' {
            in_str = true;
        } else if let Some((tok, rep)) = [("-Infinity", "\"-inf\""), ("Infinity", "\"inf\""), ("NaN", "\"nan\"")].iter().find(|(t, _)| rest.starts_with(t)) {
            out.push_str(rep);
            rest = &rest[tok.len()..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// A finite number >= 0 under `key` (absent or null: None).
pub fn num(v: &Json, key: &str) -> Result<Option<f64>, String> {
    match v.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::Number(n)) => n.as_f64().filter(|x| x.is_finite() && *x >= 0.0).map(Some).ok_or_else(|| format!("'{key}': must be a finite number >= 0")),
        Some(Json::String(s)) if s == "nan" => Err(format!("'{key}': NaN (the tool measured nothing here)")),
        Some(_) => Err(format!("'{key}': must be a number")),
    }
}

/// A list of whole token counts under `key` (absent or null: empty).
pub fn lens(v: &Json, key: &str) -> Result<Vec<u64>, String> {
    match v.get(key) {
        None | Some(Json::Null) => Ok(Vec::new()),
        Some(Json::Array(a)) => {
            if a.len() > MAX_REQUESTS {
                return Err(format!("'{key}': {} entries, over {MAX_REQUESTS}", a.len()));
            }
            a.iter().enumerate().map(|(i, x)| x.as_u64().filter(|n| *n <= MAX_TOKENS).ok_or_else(|| format!("'{key}'[{i}]: must be a whole number of tokens"))).collect()
        }
        Some(_) => Err(format!("'{key}': must be a list")),
    }
}

/// A per-request list's length check: `a` and `b` (when both given) describe the same requests.
pub fn same_len(a: (&str, usize), b: (&str, usize)) -> Result<(), String> {
    if a.1 > 0 && b.1 > 0 && a.1 != b.1 {
        return Err(format!("'{}' has {} entries but '{}' has {}: they list the same requests", a.0, a.1, b.0, b.1));
    }
    Ok(())
}

/// The keys of `v` not in `known`, as one warning (None when all are known). A `known` entry
/// ending in `*` is a prefix.
pub fn unknown_keys(v: &Json, known: &[&str], what: &str) -> Option<String> {
    unknown_keys_by(v, |k| known.iter().any(|p| *p == k || (p.ends_with('*') && k.starts_with(&p[..p.len() - 1]))), what)
}

/// The keys of `v` for which `is_known` is false, as one warning.
pub fn unknown_keys_by(v: &Json, is_known: impl Fn(&str) -> bool, what: &str) -> Option<String> {
    let o = v.as_object()?;
    let mut extra: Vec<&str> = o.keys().map(String::as_str).filter(|k| !is_known(k)).collect();
    if extra.is_empty() {
        return None;
    }
    extra.sort();
    let n = extra.len();
    let shown: Vec<String> = extra.iter().take(12).map(|k| format!("'{}'", clip(k, 60))).collect();
    Some(format!("{what}: {n} key(s) Tunelab does not read: {}{}", shown.join(", "), if n > 12 { ", ..." } else { "" }))
}

/// At most `n` characters of `s`.
pub fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n { s.to_string() } else { s.chars().take(n).collect::<String>() + "…" }
}

/// A number with an optional unit ("41.622 token/s", "2006.0 ms", "8"): (value, unit). The
/// unit must be one of `units` (an empty unit is always allowed).
pub fn with_unit<'a>(cell: &str, units: &[&'a str], field: &str) -> Result<(f64, &'a str), String> {
    let t = cell.trim();
    let (n, u) = match t.find(|c: char| c.is_whitespace()) {
        Some(i) => (&t[..i], t[i..].trim()),
        None => (t, ""),
    };
    let x: f64 = n.parse().map_err(|_| format!("{field}: '{}' is not a number", clip(t, 40)))?;
    if !x.is_finite() || x < 0.0 {
        return Err(format!("{field}: {} must be a finite number >= 0", clip(t, 40)));
    }
    if u.is_empty() {
        return Ok((x, ""));
    }
    units.iter().find(|k| k.eq_ignore_ascii_case(u)).map(|k| (x, *k)).ok_or_else(|| format!("{field}: unit '{}' (expected {})", clip(u, 20), units.join(" or ")))
}

/// A latency in ms from a cell with unit ms, us or s (no unit: ms).
pub fn ms(cell: &str, field: &str) -> Result<f64, String> {
    let (x, u) = with_unit(cell, &["ms", "us", "s"], field)?;
    Ok(match u {
        "us" => x / 1000.0,
        "s" => x * 1000.0,
        _ => x,
    })
}

/// Reads CSV text (RFC 4180: quoted cells, doubled quotes) into lines of cells; a leading
/// byte-order mark is skipped; empty lines are dropped. Bounded in lines and cells.
pub fn csv(text: &str, name: &str) -> Result<Vec<(usize, Vec<String>)>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Vec::new();
    let mut cells: Vec<String> = Vec::new();
    let mut cell = String::new();
    let (mut quoted, mut line, mut start_line) = (false, 1usize, 1usize);
    let mut chars = text.chars().peekable();
    let push_line = |cells: &mut Vec<String>, start: usize, out: &mut Vec<(usize, Vec<String>)>| -> Result<(), String> {
        if !(cells.len() == 1 && cells[0].trim().is_empty()) {
            if out.len() >= MAX_CSV_LINES {
                return Err(format!("{name}: over {MAX_CSV_LINES} lines"));
            }
            out.push((start, std::mem::take(cells)));
        }
        cells.clear();
        Ok(())
    };
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    cell.push('"');
                }
                '"' => quoted = false,
                '\n' => {
                    line += 1;
                    cell.push(c);
                }
                _ => cell.push(c),
            }
            continue;
        }
        match c {
            '"' if cell.trim().is_empty() => {
                cell.clear();
                quoted = true;
            }
            ',' => {
                if cells.len() >= MAX_CSV_CELLS {
                    return Err(format!("{name} line {line}: over {MAX_CSV_CELLS} cells"));
                }
                cells.push(std::mem::take(&mut cell));
            }
            '\r' => {}
            '\n' => {
                cells.push(std::mem::take(&mut cell));
                push_line(&mut cells, start_line, &mut out)?;
                line += 1;
                start_line = line;
            }
            _ => cell.push(c),
        }
    }
    if quoted {
        return Err(format!("{name} line {start_line}: a quoted cell is not closed"));
    }
    if !cell.is_empty() || !cells.is_empty() {
        cells.push(cell);
        push_line(&mut cells, start_line, &mut out)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn python_floats_become_strings_outside_strings_only() {
        let t = super::python_json(r#"{"request_rate": Infinity, "x": NaN, "y": -Infinity, "s": "NaN Infinity"}"#);
        let v: serde_json::Value = serde_json::from_str(&t).unwrap();
        assert_eq!(v["request_rate"], "inf");
        assert_eq!(v["x"], "nan");
        assert_eq!(v["y"], "-inf");
        assert_eq!(v["s"], "NaN Infinity");
        assert_eq!(super::python_json("é Infinity é"), "é \"inf\" é");
    }

    #[test]
    fn csv_reads_quotes_and_names_lines() {
        let l = super::csv("a,b\n\"x,1\",\"say \"\"hi\"\"\"\n\n3,4", "f.csv").unwrap();
        assert_eq!(l.len(), 3);
        assert_eq!(l[1].1, vec!["x,1".to_string(), "say \"hi\"".to_string()]);
        assert_eq!(l[2].0, 4, "the empty third line is skipped, lines keep their numbers");
        assert!(super::csv("a\n\"open", "f.csv").unwrap_err().contains("line 2"));
    }

    #[test]
    fn units_are_checked() {
        assert_eq!(super::ms("2.5 s", "TTFT").unwrap(), 2500.0);
        assert_eq!(super::with_unit("41.6 token/s", &["token/s"], "x").unwrap().0, 41.6);
        assert!(super::with_unit("41.6 parsecs", &["token/s"], "x").unwrap_err().contains("parsecs"));
        assert!(super::ms("-1 ms", "TTFT").is_err());
    }
}
