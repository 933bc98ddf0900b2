//! Refusal messages as a user reads them: no wall of digits (issue 44: "numbers print with
//! about 300 digits").

use crate::spec::strict::readable;

/// A message with every number longer than 20 characters (`1e300` printed by `{}` is 301
/// digits) rewritten as `readable` prints it, so no refusal carries a wall of digits (issue 44).
/// Other text is kept as is.
pub fn shorten_numbers(msg: &str) -> String {
    let b = msg.as_bytes();
    let mut out = String::with_capacity(msg.len().min(4096));
    let (mut i, mut copied) = (0usize, 0usize);
    while i < b.len() {
        let starts = b[i].is_ascii_digit() && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'));
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < b.len() && (b[j].is_ascii_digit() || (b[j] == b'.' && j + 1 < b.len() && b[j + 1].is_ascii_digit())) {
            j += 1;
        }
        if j - i > 20 {
            if let Ok(x) = msg[i..j].parse::<f64>() {
                let start = if i > 0 && b[i - 1] == b'-' { i - 1 } else { i };
                out.push_str(&msg[copied..start]);
                out.push_str(&readable(if start < i { -x } else { x }));
                copied = j;
            }
        }
        i = j.max(i + 1);
    }
    out.push_str(&msg[copied..]);
    out
}
