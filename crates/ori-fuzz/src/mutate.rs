//! Deterministic mutations of real text (corpus kernels, `.ori` dumps) for
//! the smoke test, where libFuzzer's mutator is not available: the edits a
//! hand or a buggy generator makes (lines dropped, repeated or swapped,
//! tokens swapped between lines, a character changed, the text cut short).

use crate::pipeline::Source;

/// The `k`th mutation of `text`, chosen by `seed` (same inputs, same output).
pub fn mutate(text: &str, seed: &[u8]) -> String {
    let mut src = Source::new(seed);
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        return String::new();
    }
    let edits = 1 + src.below(4);
    for _ in 0..edits {
        let n = lines.len().max(1);
        let i = src.below(n).min(lines.len().saturating_sub(1));
        let j = src.below(n).min(lines.len().saturating_sub(1));
        match src.below(7) {
            0 if lines.len() > 1 => {
                lines.remove(i);
            }
            1 => {
                let l = lines[i].clone();
                lines.insert(j, l);
            }
            2 => lines.swap(i, j),
            3 => {
                // Swap one token of line i with one of line j.
                let mut a: Vec<String> = lines[i].split(' ').map(str::to_string).collect();
                let mut b: Vec<String> = lines[j].split(' ').map(str::to_string).collect();
                let (x, y) = (src.below(a.len()), src.below(b.len()));
                std::mem::swap(&mut a[x], &mut b[y]);
                lines[i] = a.join(" ");
                if i != j {
                    lines[j] = b.join(" ");
                }
            }
            4 => {
                // Change one character to one of PTX's punctuation or a digit.
                let chars: Vec<char> = lines[i].chars().collect();
                if !chars.is_empty() {
                    let k = src.below(chars.len());
                    let c = b"{}()[];,.%$@!0179-_ xN"[src.below(22)] as char;
                    let mut s: String = chars[..k].iter().collect();
                    s.push(c);
                    s.extend(&chars[k + 1..]);
                    lines[i] = s;
                }
            }
            5 => {
                // Cut the text short.
                lines.truncate(i.max(1));
            }
            _ => {
                // Duplicate a block of lines (a loop body, a function).
                let (a, b) = (i.min(j), i.max(j));
                let block: Vec<String> = lines[a..=b.min(a + 20)].to_vec();
                let at = src.below(lines.len() + 1).min(lines.len());
                lines.splice(at..at, block);
            }
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}
