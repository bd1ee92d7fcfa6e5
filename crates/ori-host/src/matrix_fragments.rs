//! `ldmatrix` and `stmatrix`: a warp moves up to four 8x8 matrices of
//! 16-bit elements between shared memory and registers (PTX ISA 9.7.9.26,
//! 9.7.9.27).
//!
//! Each matrix is eight rows of 16 bytes; lanes `8i..8i+7` give the row
//! addresses of matrix `i`. Lane `l` then holds, in its register `i`, the
//! two elements of row `l / 4` at columns `2 (l % 4)` and `2 (l % 4) + 1`
//! (the first in the low half), or with `.trans` the two elements of
//! column `l / 4` at rows `2 (l % 4)` and `2 (l % 4) + 1`. Triton's
//! Hopper epilogues and its fp8 operand shuffles use both directions.

/// The eight rows of one 8x8 matrix of 16-bit elements.
pub type Rows = [[u8; 16]; 8];

fn element(rows: &Rows, r: usize, c: usize) -> u16 {
    u16::from_le_bytes([rows[r][2 * c], rows[r][2 * c + 1]])
}

fn set_element(rows: &mut Rows, r: usize, c: usize, v: u16) {
    rows[r][2 * c..2 * c + 2].copy_from_slice(&v.to_le_bytes());
}

/// The (row, column) pairs of lane `lane`'s two elements, low half first.
fn positions(lane: usize, trans: bool) -> [(usize, usize); 2] {
    let (g, k) = (lane / 4, 2 * (lane % 4));
    if trans {
        [(k, g), (k + 1, g)]
    } else {
        [(g, k), (g, k + 1)]
    }
}

/// What `ldmatrix` gives lane `lane` (0..32) of one matrix.
pub fn fragment(rows: &Rows, lane: usize, trans: bool) -> u32 {
    let [(r0, c0), (r1, c1)] = positions(lane, trans);
    u32::from(element(rows, r0, c0)) | (u32::from(element(rows, r1, c1)) << 16)
}

/// What `stmatrix` writes from lane `lane`'s register `v` of one matrix.
pub fn scatter(rows: &mut Rows, lane: usize, trans: bool, v: u32) {
    let [(r0, c0), (r1, c1)] = positions(lane, trans);
    set_element(rows, r0, c0, v as u16);
    set_element(rows, r1, c1, (v >> 16) as u16);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Element (r, c) holds r * 8 + c.
    fn numbered() -> Rows {
        let mut rows = [[0u8; 16]; 8];
        for r in 0..8 {
            for c in 0..8 {
                set_element(&mut rows, r, c, (r * 8 + c) as u16);
            }
        }
        rows
    }

    #[test]
    fn lanes_hold_the_isa_positions() {
        let rows = numbered();
        // Lane 0: row 0, columns 0 and 1. Lane 5: row 1, columns 2 and 3.
        assert_eq!(fragment(&rows, 0, false), 1 << 16);
        assert_eq!(fragment(&rows, 5, false), 10 | (11 << 16));
        // Transposed, lane 5: column 1, rows 2 and 3.
        assert_eq!(fragment(&rows, 5, true), 17 | (25 << 16));
        assert_eq!(fragment(&rows, 31, false), 62 | (63 << 16));
    }

    #[test]
    fn stmatrix_undoes_ldmatrix() {
        let rows = numbered();
        for trans in [false, true] {
            let mut back = [[0u8; 16]; 8];
            for lane in 0..32 {
                scatter(&mut back, lane, trans, fragment(&rows, lane, trans));
            }
            assert_eq!(back, rows);
        }
    }
}
