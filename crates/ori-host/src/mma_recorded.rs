//! The H100's own outputs against the host's: every wgmma output of
//! `tests/host/mma/mma_probes.bin` (recorded by `tests/host/mma_probe.py`,
//! never edited), recomputed through `wgmma_math::compute` (operands in
//! shared memory through descriptors, C and D in the accumulator
//! registers' layout), must be the same bits; `exec::warp_mma`'s tests
//! hold its `mma.sync` outputs to the same.

use crate::wgmma_math::{self, AOperand, Mma, SharedMemory, WARPGROUP};
use ori_ir::wgmma_form::{ElemType, WgmmaForm};

/// One record: `tokens` of its name (kind, shape, D, A, B, C types,
/// dataset), the shape and flags, and the raw arrays.
pub(crate) struct Record {
    pub(crate) tokens: Vec<String>,
    mnk: (usize, usize, usize),
    pub(crate) blocks: usize,
    flags: [bool; 3],
    arrays: [Vec<u8>; 4],
}

fn bytes_of(ty: &str) -> usize {
    match ty {
        "f32" | "s32" | "tf32" => 4,
        "f16" | "bf16" => 2,
        _ => 1,
    }
}

pub(crate) fn read_records() -> Vec<Record> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/host/mma/mma_probes.bin"
    );
    let buf = std::fs::read(path).expect("the recording");
    assert_eq!(&buf[..8], b"ORIMMA01");
    let mut at = 8;
    let word = |at: &mut usize| {
        let w = u32::from_le_bytes(buf[*at..*at + 4].try_into().expect("4 bytes"));
        *at += 4;
        w as usize
    };
    let mut records = Vec::new();
    while at < buf.len() {
        let len = word(&mut at);
        let name = String::from_utf8(buf[at..at + len].to_vec()).expect("an ASCII name");
        at += len;
        let v: Vec<usize> = (0..7).map(|_| word(&mut at)).collect();
        let tokens: Vec<String> = name.split(' ').map(str::to_string).collect();
        let (m, n, k, blocks) = (v[0], v[1], v[2], v[3]);
        let counts = [m * k, n * k, m * n, m * n];
        let types = [&tokens[3], &tokens[4], &tokens[5], &tokens[2]];
        let arrays = std::array::from_fn(|i| {
            let size = blocks * counts[i] * bytes_of(types[i]);
            at += size;
            buf[at - size..at].to_vec()
        });
        records.push(Record {
            tokens,
            mnk: (m, n, k),
            blocks,
            flags: [v[4] == 1, v[5] == 1, v[6] == 1],
            arrays,
        });
    }
    records
}

/// Element `i` of a record's array `which` (A, B, C, D) of type `ty`, as
/// raw bits.
pub(crate) fn raw(r: &Record, which: usize, ty: &str, i: usize) -> u32 {
    let w = bytes_of(ty);
    let b = &r.arrays[which][i * w..(i + 1) * w];
    let mut word = [0u8; 4];
    word[..w].copy_from_slice(b);
    u32::from_le_bytes(word)
}

/// Shared memory as plain bytes.
struct Bytes(Vec<u8>);

impl SharedMemory for Bytes {
    fn granule(&self, addr: u32) -> Result<[u8; 16], String> {
        let a = addr as usize;
        Ok(self.0[a..a + 16].try_into().expect("16 bytes"))
    }
}

/// K-major, no swizzle: LBO 128 bytes, SBO 256 bytes, at `start`.
fn descriptor(start: u64) -> u64 {
    (start >> 4) | (128 >> 4) << 16 | (256 >> 4) << 32
}

/// The outputs of block `blk` of a wgmma record that differ from the
/// GPU's, and the outputs checked.
fn wgmma_block(r: &Record, blk: usize) -> (Vec<String>, usize) {
    let (m, n, k) = r.mnk;
    let t = &r.tokens;
    let form = WgmmaForm::decode(&[
        "mma_async",
        "sync",
        "aligned",
        &format!("m64n{n}k{k}"),
        &t[2],
        &t[3],
        &t[4],
    ])
    .expect("a wgmma form");
    let (abits, bbits) = (form.atype.bits(), form.btype.bits());
    let mut smem = vec![0u8; 2048 + 32 * n];
    let (da, db) = (descriptor(0), descriptor(2048));
    for (which, rows, desc, bits, ty) in [(0, m, da, abits, &t[3]), (1, n, db, bbits, &t[4])] {
        for row in 0..rows {
            for kk in 0..k {
                let v = raw(r, which, ty, (blk * rows + row) * k + kk);
                let addr = wgmma_math::element_address(desc, row as u32, kk as u32, bits, false);
                let w = bits as usize / 8;
                smem[addr as usize..addr as usize + w].copy_from_slice(&v.to_le_bytes()[..w]);
            }
        }
    }
    let f16 = form.dtype == ElemType::F16;
    let regs = form.accumulator_regs();
    let mut c = vec![0u32; regs * WARPGROUP];
    let elem = |which: usize, row: u32, col: u32| {
        raw(
            r,
            which,
            &t[2],
            blk * m * n + row as usize * n + col as usize,
        )
    };
    for th in 0..WARPGROUP {
        for j in 0..regs * if f16 { 2 } else { 1 } {
            let (row, col) = wgmma_math::d_element(th, j);
            let (reg, shift) = if f16 { (j / 2, 16 * (j % 2)) } else { (j, 0) };
            c[reg * WARPGROUP + th] |= elem(2, row, col) << shift;
        }
    }
    let mma = Mma {
        form,
        a: AOperand::Desc(da),
        b_desc: db,
        scale_d: r.flags[0],
        negate_a: r.flags[1],
        negate_b: r.flags[2],
        trans_a: false,
        trans_b: false,
    };
    let out = wgmma_math::compute(&mma, &c, &Bytes(smem)).expect("the wgmma runs");
    let mut bad = Vec::new();
    for th in 0..WARPGROUP {
        for j in 0..regs * if f16 { 2 } else { 1 } {
            let (row, col) = wgmma_math::d_element(th, j);
            let (reg, shift) = if f16 { (j / 2, 16 * (j % 2)) } else { (j, 0) };
            let mask = if f16 { 0xffff } else { u32::MAX };
            let host = (out[reg * WARPGROUP + th] >> shift) & mask;
            let gpu = elem(3, row, col);
            if host != gpu {
                bad.push(format!(
                    "block {blk} ({row},{col}): host {host:#x}, GPU {gpu:#x}"
                ));
            }
        }
    }
    (bad, m * n)
}

/// Check every block of the records whose instruction is `kind` with
/// `block` (the differing outputs, and how many it compared): how many
/// outputs were compared, and one line per record that differs.
pub(crate) fn check_records(
    records: &[Record],
    kind: &str,
    block: impl Fn(&Record, usize) -> (Vec<String>, usize),
) -> (usize, Vec<String>) {
    let (mut checked, mut failures) = (0, Vec::new());
    for r in records.iter().filter(|r| r.tokens[0] == kind) {
        for blk in 0..r.blocks {
            let (bad, n) = block(r, blk);
            checked += n;
            if let Some(first) = bad.first() {
                failures.push(format!(
                    "{}: {} differ, first {first}",
                    r.tokens.join(" "),
                    bad.len()
                ));
            }
        }
    }
    (checked, failures)
}

#[test]
fn every_recorded_output_of_the_h100_is_the_hosts() {
    let records = read_records();
    assert!(records.len() >= 130, "{} records", records.len());
    let (checked, failures) = check_records(&records, "wgmma", wgmma_block);
    assert!(checked > 150_000, "only {checked} outputs");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
