//! JSON assets compiled into the binary without their layout whitespace.
//!
//! The asset files stay indented for the people who edit them (every device number carries its
//! source); the page carries them in its WebAssembly, where that whitespace was about 20 KiB of
//! the 150 KiB of embedded JSON and 1 KiB gzipped. `json_asset!("path")` is `include_str!` with
//! the whitespace outside strings removed at compile time (a `const fn`, so no build script):
//! the text parses to exactly the same JSON value.

/// Copies `json` without the whitespace outside strings into `out` (as far as it fits) and
/// returns the minified length: with an empty `out` it only measures.
pub const fn minify_into(json: &[u8], out: &mut [u8]) -> usize {
    let (mut i, mut n, mut in_str, mut esc) = (0, 0, false, false);
    while i < json.len() {
        let b = json[i];
        if in_str || !matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
            if n < out.len() {
                out[n] = b;
            }
            n += 1;
        }
        (in_str, esc) = step(b, in_str, esc);
        i += 1;
    }
    n
}

/// Length of `json` once the whitespace outside strings is removed.
pub const fn minified_len(json: &[u8]) -> usize {
    minify_into(json, &mut [])
}

/// `json` without the whitespace outside strings; `N` must be `minified_len(json)`.
pub const fn minify<const N: usize>(json: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    minify_into(json, &mut out);
    out
}

/// String state after byte `b`: (inside a string, the next byte is escaped).
const fn step(b: u8, in_str: bool, esc: bool) -> (bool, bool) {
    if !in_str {
        (b == b'"', false)
    } else if esc {
        (true, false)
    } else {
        (b != b'"', b == b'\\')
    }
}

/// Whether the JSON assets drop their prose (Cargo feature `lean-assets`: the page's user
/// interface module only, index.html). The citations (`"note"` strings, `"sources"` maps,
/// `"defaults_source"` strings) are read by the engine and the CLI (fidelity tables, fitted
/// fields' notes, `tunelab devices`), never by the page's module, which only validates and
/// lists (names, bounds, values); the engine worker and the CLI embed the files whole. No
/// number changes: the same text minus those members (see the tests).
pub const LEAN: bool = cfg!(feature = "lean-assets");

/// Keys whose string values are prose.
const PROSE: [&[u8]; 2] = [b"note", b"defaults_source"];
/// Keys whose object values are maps of citations.
const CITATIONS: &[u8] = b"sources";

const fn eq(a: &[u8], from: usize, to: usize, b: &[u8]) -> bool {
    if to - from != b.len() {
        return false;
    }
    let mut k = 0;
    while k < b.len() {
        if a[from + k] != b[k] {
            return false;
        }
        k += 1;
    }
    true
}

/// End (exclusive) of the JSON value starting at `i` of minified `j`.
const fn value_end(j: &[u8], i: usize) -> usize {
    let (mut k, mut depth, mut in_str, mut esc) = (i, 0usize, false, false);
    while k < j.len() {
        let b = j[k];
        if !in_str {
            match b {
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    if depth == 0 {
                        return k;
                    }
                    depth -= 1;
                    if depth == 0 {
                        return k + 1;
                    }
                }
                b',' if depth == 0 => return k,
                _ => {}
            }
        }
        let was_str = in_str;
        (in_str, esc) = step(b, in_str, esc);
        if was_str && !in_str && depth == 0 {
            return k + 1;
        }
        k += 1;
    }
    k
}

/// Copies minified `j` without its prose members (`PROSE` strings, `CITATIONS` objects) into
/// `out` (as far as it fits) and returns the length: with an empty `out` it only measures.
pub const fn lean_into(j: &[u8], out: &mut [u8]) -> usize {
    // Containers open at each depth: true for an object.
    let mut object = [false; 64];
    let (mut depth, mut i, mut n, mut in_str, mut esc) = (0usize, 0usize, 0usize, false, false);
    let mut last = 0u8; // last byte written
    while i < j.len() {
        let b = j[i];
        if !in_str && b == b'"' && depth > 0 && object[depth - 1] && (last == b'{' || last == b',') {
            // A key: find its end, and the member's value.
            let mut k = i + 1;
            let mut e = false;
            while k < j.len() && (e || j[k] != b'"') {
                e = !e && j[k] == b'\\';
                k += 1;
            }
            let v = k + 2; // after `":`
            let drop = v < j.len()
                && ((j[v] == b'"' && (eq(j, i + 1, k, PROSE[0]) || eq(j, i + 1, k, PROSE[1]))) || (j[v] == b'{' && eq(j, i + 1, k, CITATIONS)));
            if drop {
                let mut end = value_end(j, v);
                if end < j.len() && j[end] == b',' {
                    end += 1; // the next member follows directly
                } else if last == b',' {
                    n -= 1; // it was the last member: its comma goes
                    last = if n > 0 && n <= out.len() { out[n - 1] } else { b'{' };
                }
                i = end;
                continue;
            }
        }
        if n < out.len() {
            out[n] = b;
        }
        n += 1;
        last = b;
        if !in_str {
            match b {
                b'{' | b'[' => {
                    if depth < object.len() {
                        object[depth] = b == b'{';
                    }
                    depth += 1;
                }
                b'}' | b']' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        (in_str, esc) = step(b, in_str, esc);
        i += 1;
    }
    n
}

/// The embedded form of a JSON asset: minified, and lean where `LEAN` (measured, then written).
pub const fn embedded_len(json: &[u8]) -> usize {
    let n = minified_len(json);
    if !LEAN {
        return n;
    }
    // Measuring the lean form needs the minified bytes: a const buffer as large as the asset.
    lean_len_of_minified(json, n)
}

const MAX_ASSET: usize = 1 << 20;

const fn lean_len_of_minified(json: &[u8], n: usize) -> usize {
    let _ = n;
    let mut buf = [0u8; MAX_ASSET];
    let m = minify_into(json, &mut buf);
    let (head, _) = buf.split_at(m);
    lean_into(head, &mut [])
}

/// `json` as embedded; `N` must be `embedded_len(json)`.
pub const fn embed<const N: usize>(json: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    if !LEAN {
        minify_into(json, &mut out);
        return out;
    }
    let mut buf = [0u8; MAX_ASSET];
    let m = minify_into(json, &mut buf);
    let (head, _) = buf.split_at(m);
    lean_into(head, &mut out);
    out
}

/// `include_str!` of a JSON file, with its layout whitespace removed at compile time.
#[macro_export]
macro_rules! json_asset {
    ($path:literal) => {
        $crate::__json_asset_via!($crate::asset::minified_len, $crate::asset::minify, $path)
    };
}

/// `json_asset!`, without its prose in the page's module (`LEAN`): for the files the page only
/// validates against or lists from (serving-engine host costs and releases, kernel libraries,
/// datasets). Chip profiles keep theirs everywhere (the page shows and adopts them).
#[macro_export]
macro_rules! json_asset_lean {
    ($path:literal) => {
        $crate::__json_asset_via!($crate::asset::embedded_len, $crate::asset::embed, $path)
    };
}

/// The shared body of `json_asset!` and `json_asset_lean!`: the file's bytes through a
/// compile-time transform (`$len` sizes the output, `$make` writes it), checked as UTF-8.
#[doc(hidden)]
#[macro_export]
macro_rules! __json_asset_via {
    ($len:path, $make:path, $path:literal) => {{
        const RAW: &[u8] = include_bytes!($path);
        const OUT: [u8; $len(RAW)] = $make(RAW);
        const TEXT: &str = match core::str::from_utf8(&OUT) {
            Ok(s) => s,
            Err(_) => panic!("a JSON asset is not UTF-8"),
        };
        TEXT
    }};
}

#[cfg(test)]
mod tests {
    #[test]
    fn whitespace_goes_and_strings_keep_theirs() {
        const T: &[u8] = b"{ \"a b\": [1, 2],\n  \"q\": \"say \\\"x y\\\" \\\\\" , \"t\":\t\"\\n \" }";
        const OUT: [u8; super::minified_len(T)] = super::minify(T);
        let s = std::str::from_utf8(&OUT).unwrap();
        assert_eq!(s, "{\"a b\":[1,2],\"q\":\"say \\\"x y\\\" \\\\\",\"t\":\"\\n \"}");
        let a: serde_json::Value = serde_json::from_slice(T).unwrap();
        assert_eq!(a, serde_json::from_str::<serde_json::Value>(s).unwrap());
    }

    #[test]
    fn every_embedded_device_parses_as_its_file_does() {
        for (name, text) in crate::device::BUNDLED {
            let file = std::fs::read_to_string(format!("{}/../../assets/devices/{name}.json", env!("CARGO_MANIFEST_DIR"))).unwrap();
            let (raw, min): (serde_json::Value, serde_json::Value) = (serde_json::from_str(&file).unwrap(), serde_json::from_str(text).unwrap());
            assert_eq!(raw, min, "{name}");
            assert!(text.len() < file.len(), "{name}: the layout whitespace is gone");
        }
    }

    /// The lean form is the asset minus its prose members, nothing else: parsed, it equals the
    /// full file with those members removed (every asset the page embeds lean).
    #[test]
    fn lean_assets_drop_only_prose() {
        fn strip(v: &mut serde_json::Value) {
            match v {
                serde_json::Value::Object(m) => {
                    m.retain(|k, x| !(((k == "note" || k == "defaults_source") && x.is_string()) || (k == "sources" && x.is_object())));
                    m.values_mut().for_each(strip);
                }
                serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
                _ => {}
            }
        }
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/");
        for f in ["constants/serving-host.json", "kernels/libraries.json", "kernels/triton-fla.json", "workloads/datasets.json", "engines/releases.json"] {
            let raw = std::fs::read(format!("{dir}{f}")).unwrap();
            let mut min = vec![0u8; super::minified_len(&raw)];
            super::minify_into(&raw, &mut min);
            let mut lean = vec![0u8; super::lean_into(&min, &mut [])];
            super::lean_into(&min, &mut lean);
            let got: serde_json::Value = serde_json::from_slice(&lean).unwrap_or_else(|e| panic!("{f}: {e}"));
            let mut want: serde_json::Value = serde_json::from_slice(&raw).unwrap();
            strip(&mut want);
            assert_eq!(got, want, "{f}");
            assert!(lean.len() < min.len(), "{f}: some prose went ({} of {})", lean.len(), min.len());
        }
        // Members first, last and alone; prose-named keys with other values stay.
        let t = br#"{"note":"a","x":{"note":"b"},"sources":{"S1":"c"},"y":[{"z":1,"note":"d"}],"note2":"e","q":{"note":1,"sources":[1]},"defaults_source":"f"}"#;
        let mut out = vec![0u8; super::lean_into(t, &mut [])];
        super::lean_into(t, &mut out);
        assert_eq!(std::str::from_utf8(&out).unwrap(), r#"{"x":{},"y":[{"z":1}],"note2":"e","q":{"note":1,"sources":[1]}}"#);
    }
}
