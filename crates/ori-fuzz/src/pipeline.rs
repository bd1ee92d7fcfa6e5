//! A generator of well-formed random wgmma pipelines, driven by bytes.
//!
//! Every byte string gives a module that ptxas's front end accepts: the
//! decisions (how many accumulator sets and of which shape, what each
//! statement is, where loops, branches and calls go) are read from the bytes
//! as a fuzzer mutates them, and when the bytes run out the rest comes from
//! a small PRNG seeded by them, so short inputs still make whole kernels.
//! What is random is only what phase 87 cares about; the rest (addresses,
//! descriptors) is fixed, valid PTX.

use std::fmt::Write as _;

/// Decisions read from the input bytes, then from a PRNG seeded by them.
pub struct Source<'a> {
    bytes: &'a [u8],
    pos: usize,
    state: u64,
}

impl<'a> Source<'a> {
    /// A source over `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        // FNV-1a of the bytes seeds the PRNG used once they run out.
        let state = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        Source {
            bytes,
            pos: 0,
            state: state | 1,
        }
    }

    fn byte(&mut self) -> u8 {
        if let Some(&b) = self.bytes.get(self.pos) {
            self.pos += 1;
            return b;
        }
        // xorshift64*
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        (self.state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
    }

    /// A number below `n` (n >= 1).
    pub fn below(&mut self, n: usize) -> usize {
        usize::from(self.byte()) % n.max(1)
    }
}

/// One accumulator set: its registers and the wgmma shape that writes them.
struct Set {
    regs: Vec<String>,
    n: usize,
}

/// Emits one function body.
struct Body<'s, 'a> {
    src: &'s mut Source<'a>,
    out: String,
    sets: Vec<Set>,
    labels: usize,
    depth: usize,
    /// Statements left to emit (bounds the function's size).
    budget: usize,
    /// Device functions this body may call.
    callees: Vec<String>,
}

impl Body<'_, '_> {
    fn line(&mut self, text: std::fmt::Arguments<'_>) {
        let _ = writeln!(self.out, "\t{text};");
    }

    fn set(&mut self) -> usize {
        let n = self.sets.len();
        self.src.below(n)
    }

    fn reg(&mut self, s: usize) -> String {
        let k = self.src.below(self.sets[s].regs.len());
        self.sets[s].regs[k].clone()
    }

    fn wgmma(&mut self, s: usize) {
        let scale_d = self.src.below(4).min(1); // mostly 1
        let regs = self.sets[s].regs.join(", ");
        let n = self.sets[s].n;
        if self.src.below(4) == 0 {
            // A from registers: four .b32 halves-pairs.
            self.line(format_args!(
                "wgmma.mma_async.sync.aligned.m64n{n}k16.f32.f16.f16 {{{regs}}}, {{ra0, ra1, ra2, ra3}}, db, {scale_d}, 1, 1, 0"
            ));
        } else {
            self.line(format_args!(
                "wgmma.mma_async.sync.aligned.m64n{n}k16.f32.f16.f16 {{{regs}}}, da, db, {scale_d}, 1, 1, 0, 0"
            ));
        }
    }

    /// Statements until the budget runs out or the block ends.
    fn block(&mut self) {
        let len = 1 + self.src.below(8);
        for _ in 0..len {
            if self.budget == 0 {
                return;
            }
            self.budget -= 1;
            self.stmt();
        }
    }

    fn stmt(&mut self) {
        match self.src.below(16) {
            0..=3 => self.line(format_args!("wgmma.fence.sync.aligned")),
            4..=6 => {
                let s = self.set();
                self.wgmma(s);
            }
            7 | 8 => self.line(format_args!("wgmma.commit_group.sync.aligned")),
            9 => {
                let n = self.src.below(3);
                self.line(format_args!("wgmma.wait_group.sync.aligned {n}"));
            }
            10 => {
                // Read an accumulator.
                let s = self.set();
                let r = self.reg(s);
                self.line(format_args!("add.f32 t, {r}, 0f3F800000"));
                self.line(format_args!("st.global.f32 [out], t"));
            }
            11 => {
                // Write an accumulator (a constant, or read-modify-write).
                let s = self.set();
                let r = self.reg(s);
                if self.src.below(2) == 0 {
                    self.line(format_args!("mov.f32 {r}, 0f00000000"));
                } else {
                    self.line(format_args!("mul.f32 {r}, {r}, 0f3F000000"));
                }
            }
            12 if self.depth < 3 => {
                // A counted loop with a back edge.
                let l = self.labels;
                self.labels += 1;
                let d = self.depth;
                self.line(format_args!("mov.u32 i{d}, 0"));
                let _ = writeln!(self.out, "$L{l}:");
                self.depth += 1;
                self.block();
                self.depth -= 1;
                self.line(format_args!("add.u32 i{d}, i{d}, 1"));
                self.line(format_args!("setp.lt.u32 p, i{d}, n"));
                self.line(format_args!("@p bra $L{l}"));
            }
            13 if self.depth < 3 => {
                // A branch around a block: uniform (on a parameter) or divergent (on %tid).
                let l = self.labels;
                self.labels += 1;
                if self.src.below(2) == 0 {
                    self.line(format_args!("setp.eq.u32 q, n, 7"));
                } else {
                    self.line(format_args!("setp.lt.u32 q, tid, 64"));
                }
                self.line(format_args!("@q bra $S{l}"));
                self.depth += 1;
                self.block();
                self.depth -= 1;
                let _ = writeln!(self.out, "$S{l}:");
            }
            14 if !self.callees.is_empty() => {
                let k = self.src.below(self.callees.len());
                let c = self.callees[k].clone();
                self.line(format_args!("call {c}, (out)"));
            }
            _ => {
                // Plain work between pipeline statements.
                self.line(format_args!("add.u32 w, w, 3"));
            }
        }
    }
}

/// [`generate`]'s kernel as ptxas should judge it (`tests/generated`): the
/// trip count `n` is read at run time (the kernel's `p_n` parameter; a
/// device function loads it from `[out]`), and each store goes to an
/// address of its own (`[out+4k]`). With `n` a constant ptxas folds the
/// branches on it and unrolls the loops in full before phase 87, and of
/// several stores to one address it keeps the last (dead-store
/// elimination), so its C7517 names another line: either way the kernel it
/// judges is not the one ori does. The fuzz targets keep [`generate`] (the
/// host backend runs its kernels to the end, and the inputs they found are
/// named after its output).
pub fn generate_for_oracle(bytes: &[u8]) -> (String, bool) {
    let (ptx, compile_only) = generate(bytes);
    let mut out = String::with_capacity(ptx.len() + 1024);
    let mut in_entry = false;
    let mut stores = 0u32;
    for line in ptx.lines() {
        if line.starts_with(".visible .entry") {
            in_entry = true;
        } else if line.starts_with(".func") {
            in_entry = false;
        }
        if line == "\tmov.u32 n, 4;" {
            out.push_str(if in_entry {
                "\tld.param.u32 n, [p_n];"
            } else {
                "\tld.global.u32 n, [out];"
            });
        } else if let Some(rest) = line.strip_prefix("\tst.global.f32 [out], ") {
            stores += 1;
            let _ = write!(out, "\tst.global.f32 [out+{}], {rest}", 4 * stores);
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    (out, compile_only)
}

/// The PTX of a random module: up to two device functions, then a kernel,
/// each with its own accumulator sets and pipeline. Returns the text and
/// whether to compile it with `-c`.
pub fn generate(bytes: &[u8]) -> (String, bool) {
    let mut src = Source::new(bytes);
    let compile_only = src.below(8) == 0;
    let mut ptx = String::from(".version 8.0\n.target sm_90a\n.address_size 64\n\n");
    let nfuncs = src.below(3);
    let mut callees = Vec::new();
    for k in 0..nfuncs {
        let name = format!("dev{k}");
        let body = function(&mut src, callees.clone(), 12);
        let _ = write!(ptx, ".func {name}(.reg .b64 out)\n{{\n{body}}}\n\n");
        callees.push(name);
    }
    let body = function(&mut src, callees, 40);
    let _ = write!(
        ptx,
        ".visible .entry k(.param .u64 p_out, .param .u32 p_n)\n{{\n\
         \t.reg .b64 out;\n\tld.param.u64 out, [p_out];\n{body}}}\n"
    );
    (ptx, compile_only)
}

/// Declarations, set-up and a random body; `out` is declared by the caller.
fn function(src: &mut Source<'_>, callees: Vec<String>, budget: usize) -> String {
    let nsets = 1 + src.below(3);
    let mut decl = String::new();
    let mut sets = Vec::new();
    let mut total = 0;
    for s in 0..nsets {
        let n = [8, 16, 32][src.below(3)];
        let regs: Vec<String> = (0..n / 2).map(|r| format!("c{s}_{r}")).collect();
        total += regs.len();
        let _ = writeln!(decl, "\t.reg .f32 {};", regs.join(", "));
        sets.push(Set { regs, n });
    }
    let mut b = Body {
        src,
        out: String::new(),
        sets,
        labels: 0,
        depth: 0,
        budget,
        callees,
    };
    // Zeroed accumulators, then the random statements, then a drain and the stores.
    for s in 0..b.sets.len() {
        for r in b.sets[s].regs.clone() {
            b.line(format_args!("mov.f32 {r}, 0f00000000"));
        }
    }
    while b.budget > 0 {
        b.block();
    }
    if b.src.below(4) != 0 {
        b.line(format_args!("wgmma.commit_group.sync.aligned"));
        b.line(format_args!("wgmma.wait_group.sync.aligned 0"));
    }
    for s in 0..b.sets.len() {
        for r in b.sets[s].regs.clone() {
            b.line(format_args!("st.global.f32 [out], {r}"));
        }
    }
    b.line(format_args!("ret"));
    debug_assert!(total > 0);
    format!(
        "{decl}\t.reg .f32 t;\n\t.reg .b32 w, n, tid, i0, i1, i2, ra0, ra1, ra2, ra3;\n\
         \t.reg .b64 da, db;\n\t.reg .pred p, q;\n\
         \tmov.u32 tid, %tid.x;\n\tmov.u32 n, 4;\n\tmov.u32 w, 0;\n\
         \tmov.b64 da, 4611686293305294848;\n\tmov.b64 db, 4611686293305295872;\n\
         \tmov.b32 ra0, 0;\n\tmov.b32 ra1, 0;\n\tmov.b32 ra2, 0;\n\tmov.b32 ra3, 0;\n{}",
        b.out
    )
}
