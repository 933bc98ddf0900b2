//! Gzip (RFC 1952) decoding on top of miniz_oxide's raw DEFLATE: benchmark_hub ships Kernel Tuner
//! caches as `.json.gz`, and the browser has no file system to call `gunzip` on.
//!
//! The header is parsed here (it is small), the body is inflated as a raw stream, and each
//! member's trailer is checked (CRC-32 and length), so a damaged download is an error that says
//! so instead of a confusing JSON error later. Concatenated members (what `cat a.gz b.gz`
//! gives) decode to the concatenation, as `gunzip` does.

use miniz_oxide::inflate::stream::{inflate, InflateState};
use miniz_oxide::{DataFormat, MZError, MZFlush, MZStatus};

/// The two magic bytes that open every gzip member.
pub const MAGIC: [u8; 2] = [0x1f, 0x8b];

/// True when the bytes start like a gzip file.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.len() >= 2 && bytes[..2] == MAGIC
}

const FHCRC: u8 = 0x02;
const FEXTRA: u8 = 0x04;
const FNAME: u8 = 0x08;
const FCOMMENT: u8 = 0x10;

/// Decompresses a gzip file. `limit` bounds the decompressed size (a small file can expand
/// enormously); going over it is an error naming the limit.
pub fn decompress(bytes: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut member = 0;
    loop {
        member += 1;
        let body = header_end(bytes, pos).map_err(|e| if member == 1 { e } else { format!("gzip member {member}: {e}") })?;
        let start_len = out.len();
        let used = inflate_raw(&bytes[body..], &mut out, limit)?;
        let trailer = body + used;
        if bytes.len() < trailer + 8 {
            return Err("the gzip file is truncated: its CRC-32 and length trailer is missing".into());
        }
        let crc = u32::from_le_bytes([bytes[trailer], bytes[trailer + 1], bytes[trailer + 2], bytes[trailer + 3]]);
        let isize = u32::from_le_bytes([bytes[trailer + 4], bytes[trailer + 5], bytes[trailer + 6], bytes[trailer + 7]]);
        let data = &out[start_len..];
        if data.len() as u32 != isize {
            return Err(format!("the gzip file is damaged: it says {isize} bytes, but {} decompressed", data.len()));
        }
        if crc32(data) != crc {
            return Err("the gzip file is damaged: the CRC-32 of the decompressed data does not match".into());
        }
        pos = trailer + 8;
        // gunzip ignores zero padding after the last member (tar does that); so do we.
        if pos >= bytes.len() || bytes[pos..].iter().all(|&b| b == 0) {
            return Ok(out);
        }
        if !is_gzip(&bytes[pos..]) {
            return Err(format!("unexpected bytes after the gzip data at offset {pos}"));
        }
    }
}

/// Offset of the DEFLATE body of the member starting at `pos`.
fn header_end(b: &[u8], pos: usize) -> Result<usize, String> {
    let truncated = || "the gzip header is truncated".to_string();
    let h = b.get(pos..pos + 10).ok_or_else(truncated)?;
    if h[..2] != MAGIC {
        return Err("not a gzip file (it does not start with 1f 8b)".into());
    }
    if h[2] != 8 {
        return Err(format!("unsupported gzip compression method {} (only 8, DEFLATE, exists)", h[2]));
    }
    let flags = h[3];
    if flags & 0xe0 != 0 {
        return Err(format!("the gzip header has reserved flag bits set ({flags:#04x})"));
    }
    let mut p = pos + 10;
    if flags & FEXTRA != 0 {
        let x = b.get(p..p + 2).ok_or_else(truncated)?;
        p += 2 + u16::from_le_bytes([x[0], x[1]]) as usize;
    }
    for f in [FNAME, FCOMMENT] {
        if flags & f != 0 {
            let nul = b.get(p..).and_then(|r| r.iter().position(|&c| c == 0)).ok_or_else(truncated)?;
            p += nul + 1;
        }
    }
    if flags & FHCRC != 0 {
        p += 2;
    }
    if p > b.len() {
        return Err(truncated());
    }
    Ok(p)
}

/// Inflates one raw DEFLATE stream onto `out`; returns the input bytes it used.
fn inflate_raw(input: &[u8], out: &mut Vec<u8>, limit: usize) -> Result<usize, String> {
    let mut state = InflateState::new_boxed(DataFormat::Raw);
    let mut buf = vec![0u8; 64 * 1024];
    let mut used = 0;
    loop {
        let r = inflate(&mut state, &input[used..], &mut buf, MZFlush::None);
        used += r.bytes_consumed;
        if out.len() + r.bytes_written > limit {
            return Err(format!("the gzip file decompresses to more than {} MiB, the most a cache may have", limit >> 20));
        }
        out.extend_from_slice(&buf[..r.bytes_written]);
        match r.status {
            Ok(MZStatus::StreamEnd) => return Ok(used),
            Ok(_) => {
                if r.bytes_consumed == 0 && r.bytes_written == 0 {
                    return Err("the gzip file is truncated: the compressed data ends early".into());
                }
            }
            Err(MZError::Buf) => return Err("the gzip file is truncated: the compressed data ends early".into()),
            Err(_) => return Err("the gzip file is damaged: its compressed data is not valid DEFLATE".into()),
        }
    }
}

/// CRC-32 (IEEE, reflected), as gzip's trailer stores it.
pub fn crc32(data: &[u8]) -> u32 {
    let mut table = [0u32; 256];
    for (i, t) in table.iter_mut().enumerate() {
        let mut c = i as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 { 0xedb8_8320 ^ (c >> 1) } else { c >> 1 };
        }
        *t = c;
    }
    let mut c = !0u32;
    for &b in data {
        c = table[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

#[cfg(test)]
mod tests {
    use super::*;
    use miniz_oxide::deflate::compress_to_vec;

    fn gz(data: &[u8], flags: u8, extra: &[u8]) -> Vec<u8> {
        let mut v = vec![0x1f, 0x8b, 8, flags, 0, 0, 0, 0, 0, 3];
        v.extend_from_slice(extra);
        v.extend(compress_to_vec(data, 6));
        v.extend(crc32(data).to_le_bytes());
        v.extend((data.len() as u32).to_le_bytes());
        v
    }

    #[test]
    fn crc32_matches_the_standard_check_value() {
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    }

    #[test]
    fn plain_named_and_concatenated_members_decode() {
        let data = b"{\"cache\": {}}".repeat(50);
        assert_eq!(decompress(&gz(&data, 0, &[]), 1 << 20).unwrap(), data);
        let named = gz(&data, FNAME | FEXTRA, b"\x02\x00ab file.json\0");
        assert_eq!(decompress(&named, 1 << 20).unwrap(), data);
        let mut two = gz(b"abc", 0, &[]);
        two.extend(gz(b"def", 0, &[]));
        assert_eq!(decompress(&two, 1 << 20).unwrap(), b"abcdef");
    }

    #[test]
    fn damage_truncation_and_bombs_are_named() {
        let data = b"hello hello hello".repeat(100);
        let good = gz(&data, 0, &[]);
        let e = decompress(&good[..good.len() - 20], 1 << 20).unwrap_err();
        assert!(e.contains("truncated"), "{e}");
        let mut bad = good.clone();
        let n = bad.len();
        bad[n - 6] ^= 1;
        assert!(decompress(&bad, 1 << 20).unwrap_err().contains("CRC-32"));
        assert!(decompress(&good, 100).unwrap_err().contains("decompresses to more than"));
        assert!(decompress(b"\x1f\x8b\x09\0\0\0\0\0\0\0", 1 << 20).unwrap_err().contains("method"));
        assert!(decompress(b"\x1f\x8b", 1 << 20).unwrap_err().contains("header is truncated"));
        let mut junk = good.clone();
        junk.extend_from_slice(b"xyz");
        assert!(decompress(&junk, 1 << 20).unwrap_err().contains("after the gzip data"));
    }
}
