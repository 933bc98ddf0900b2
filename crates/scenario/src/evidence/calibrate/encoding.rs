//! The text encoding of a profiler or measurement file as it comes from the field: UTF-8 (with
//! or without a byte-order mark), UTF-16 (LE or BE, with a byte-order mark, as a spreadsheet
//! on Windows saves "Unicode text"), decoded here; GBK (a Chinese Windows' default "ANSI" code
//! page) is recognised and named with the command that converts it. GBK is not decoded: that
//! needs a 22,000-entry table (the `encoding_rs` crate), too large for the app's first load
//! for one conversion `iconv` does in a second.

/// Decodes a file's bytes to text, or says which encoding was found and how to convert it.
pub fn decode(bytes: &[u8], what: &str) -> Result<String, String> {
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return String::from_utf8(rest.to_vec()).map_err(|e| not_utf8(what, rest, e.utf8_error().valid_up_to()));
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        return utf16(rest, what, u16::from_le_bytes, "UTF-16LE");
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        return utf16(rest, what, u16::from_be_bytes, "UTF-16BE");
    }
    // UTF-16 without a mark: ASCII text with every other byte zero.
    if bytes.len() >= 4 && bytes.len() % 2 == 0 {
        let head = &bytes[..bytes.len().min(512)];
        let zeros = |off: usize| head.iter().skip(off).step_by(2).filter(|b| **b == 0).count();
        let half = head.len() / 2;
        if zeros(1) * 10 >= half * 9 && zeros(0) == 0 {
            return utf16(bytes, what, u16::from_le_bytes, "UTF-16LE (no byte-order mark)");
        }
        if zeros(0) * 10 >= half * 9 && zeros(1) == 0 {
            return utf16(bytes, what, u16::from_be_bytes, "UTF-16BE (no byte-order mark)");
        }
    }
    String::from_utf8(bytes.to_vec()).map_err(|e| not_utf8(what, bytes, e.utf8_error().valid_up_to()))
}

fn utf16(b: &[u8], what: &str, word: fn([u8; 2]) -> u16, name: &str) -> Result<String, String> {
    if b.len() % 2 != 0 {
        return Err(format!("{what}: {name} text with an odd number of bytes (the file is cut short)"));
    }
    let words = b.chunks_exact(2).map(|c| word([c[0], c[1]]));
    char::decode_utf16(words).enumerate().map(|(i, c)| c.map_err(|_| format!("{what}: {name} text with an unpaired surrogate at byte {}", 2 * i))).collect()
}

/// Why bytes are not UTF-8: GBK when the bytes past the valid prefix read as GBK pairs, else
/// the offset of the first bad byte.
fn not_utf8(what: &str, bytes: &[u8], valid_up_to: usize) -> String {
    if looks_gbk(&bytes[valid_up_to..]) {
        format!(
            "{what}: the file is GBK-encoded (Chinese Windows' default code page), not UTF-8; convert it with `iconv -f GBK -t UTF-8 FILE > FILE.utf8.csv`, or in Excel save as \"CSV UTF-8\""
        )
    } else {
        format!("{what}: not UTF-8 text (first bad byte at offset {valid_up_to}); save it as UTF-8 (UTF-16 with a byte-order mark is read too)")
    }
}

/// Whether bytes read as GBK: every byte >= 0x81 starts a pair whose second byte is in
/// 0x40..=0xFE (not 0x7F), over the first few kilobytes, with at least one pair.
fn looks_gbk(b: &[u8]) -> bool {
    let b = &b[..b.len().min(4096)];
    let (mut i, mut pairs) = (0, 0);
    while i < b.len() {
        let c = b[i];
        if c < 0x80 {
            i += 1;
            continue;
        }
        if !(0x81..=0xFE).contains(&c) {
            return false;
        }
        match b.get(i + 1) {
            Some(&d) if (0x40..=0xFE).contains(&d) && d != 0x7F => {
                pairs += 1;
                i += 2;
            }
            None => break,
            _ => return false,
        }
    }
    pairs > 0
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn field_encodings() {
        assert_eq!(decode(b"\xEF\xBB\xBFOP Type,x", "f").unwrap(), "OP Type,x");
        let le: Vec<u8> = [0xFF, 0xFE].into_iter().chain("OP Type,é".encode_utf16().flat_map(|w| w.to_le_bytes())).collect();
        assert_eq!(decode(&le, "f").unwrap(), "OP Type,é");
        let be: Vec<u8> = [0xFE, 0xFF].into_iter().chain("OP Type".encode_utf16().flat_map(|w| w.to_be_bytes())).collect();
        assert_eq!(decode(&be, "f").unwrap(), "OP Type");
        let bare: Vec<u8> = "OP Type,Input Shapes".encode_utf16().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(decode(&bare, "f").unwrap(), "OP Type,Input Shapes");
        // "算子" (operator) in GBK.
        let gbk = b"OP Type,\xCB\xE3\xD7\xD3\n";
        let e = decode(gbk, "op.csv").unwrap_err();
        assert!(e.contains("GBK") && e.contains("iconv"), "{e}");
        let e = decode(b"abc\xFF\x00", "f").unwrap_err();
        assert!(e.contains("offset 3"), "{e}");
        assert!(decode(&[0xFF, 0xFE, 0x41], "f").unwrap_err().contains("odd"));
    }
}
