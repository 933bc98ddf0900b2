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

/// `include_str!` of a JSON file, with its layout whitespace removed at compile time.
#[macro_export]
macro_rules! json_asset {
    ($path:literal) => {{
        const RAW: &[u8] = include_bytes!($path);
        const OUT: [u8; $crate::asset::minified_len(RAW)] = $crate::asset::minify(RAW);
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
}
