//! Which lane `shfl.sync` reads (PTX ISA 9.7.9.6), from its pseudocode.
//!
//! Triton's eight-warp matmuls broadcast the warp index with
//! `shfl.sync.idx.b32 %r, %r, 0, 31, -1` (making it uniform for the
//! compiler) and attention kernels reduce rows with `shfl.sync.bfly`; the
//! `c` operand packs a clamp (bits 0..4) and a segment mask (bits 8..12)
//! that split the warp into independent sub-warps.

/// `shfl.sync` modes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Read lane `lane - b` within the segment.
    Up,
    /// Read lane `lane + b`.
    Down,
    /// Read lane `lane ^ b`.
    Bfly,
    /// Read lane `b` of the segment.
    Idx,
}

impl Mode {
    /// The mode a modifier names.
    pub fn parse(m: &str) -> Option<Mode> {
        Some(match m {
            "up" => Mode::Up,
            "down" => Mode::Down,
            "bfly" => Mode::Bfly,
            "idx" => Mode::Idx,
            _ => return None,
        })
    }
}

/// The lane that `lane` reads and whether it was in range (the predicate
/// output); out of range, a lane reads itself.
pub fn source_lane(mode: Mode, lane: u32, b: u32, c: u32) -> (u32, bool) {
    let bval = b & 0x1f;
    let clamp = c & 0x1f;
    let segmask = (c >> 8) & 0x1f;
    let max_lane = (lane & segmask) | (clamp & !segmask);
    let min_lane = lane & segmask;
    let (j, ok) = match mode {
        Mode::Up => {
            let j = lane as i32 - bval as i32;
            (j, j >= max_lane as i32)
        }
        Mode::Down => {
            let j = (lane + bval) as i32;
            (j, j <= max_lane as i32)
        }
        Mode::Bfly => {
            let j = (lane ^ bval) as i32;
            (j, j <= max_lane as i32)
        }
        Mode::Idx => {
            let j = (min_lane | (bval & !segmask)) as i32;
            (j, j <= max_lane as i32)
        }
    };
    if ok {
        (j as u32, true)
    } else {
        (lane, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_warp_shuffles() {
        // c = 31: the whole warp is one segment (clamp 31 for idx/down/bfly).
        assert_eq!(source_lane(Mode::Idx, 17, 0, 31), (0, true));
        assert_eq!(source_lane(Mode::Idx, 5, 40, 31), (8, true)); // b taken mod 32
        assert_eq!(source_lane(Mode::Bfly, 5, 16, 31), (21, true));
        assert_eq!(source_lane(Mode::Down, 30, 4, 31), (30, false));
        assert_eq!(source_lane(Mode::Down, 3, 4, 31), (7, true));
        // up uses c = 0 as its clamp: lanes below b read themselves.
        assert_eq!(source_lane(Mode::Up, 2, 4, 0), (2, false));
        assert_eq!(source_lane(Mode::Up, 9, 4, 0), (5, true));
    }

    #[test]
    fn segments_split_the_warp() {
        // Width 8 (CUDA's __shfl_sync(m, v, src, 8)): c = ((32 - 8) << 8) | 31.
        let c = (24 << 8) | 31;
        assert_eq!(source_lane(Mode::Idx, 13, 2, c), (10, true));
        assert_eq!(source_lane(Mode::Bfly, 13, 4, c), (9, true));
        assert_eq!(source_lane(Mode::Down, 13, 4, c), (13, false));
    }
}
