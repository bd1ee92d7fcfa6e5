//! Why a run stopped, and what the sanitizer found while it ran, as data.
//!
//! A run ends in one of three ways, and a caller (`ori run`, a test, a
//! fuzz target) must tell them apart without reading English: it finished
//! (with the [`Hazard`]s the sanitizer reported on the way, see
//! [`crate::RunStats::hazards`]); it could not go on ([`Fault`]: an
//! instruction the host backend does not run, an access outside memory, a
//! null pointer, a deadlock, the step limit, a kernel the ISA forbids);
//! or it stopped at the first hazard because the launch asked it to
//! ([`Fault::Hazard`]). Every fault of an instruction carries its PTX line
//! in the [`HostError`] around it.

use std::fmt;

/// What kind of hazard the sanitizer found (each documented in
/// `docs/sanitizer.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HazardKind {
    /// The async proxy (wgmma, a TMA store) read shared memory a
    /// non-bulk `cp.async` filled, with no `fence.proxy.async` after the
    /// copy's wait: unordered by the PTX ISA's memory model. Triton 3.6
    /// and CUTLASS's cp.async mainloops do this; the GPU computes the
    /// expected tiles in practice. Reported as its own kind so that it can
    /// be told from the others.
    UnfencedAsyncCopy,
    /// The async proxy read shared memory a generic-proxy store
    /// (`st.shared`, `stmatrix`, an atomic) wrote, with no
    /// `fence.proxy.async` between them.
    UnfencedGenericWrite,
    /// A read of shared memory a TMA load fills, before the reading
    /// warpgroup saw the load's mbarrier phase complete.
    TmaNotReady,
    /// A parity wait on an mbarrier two or more phases past the last one
    /// the waiting warpgroup saw: both parities completed, the wait means
    /// nothing (a producer lapped its consumer).
    ParityAliased,
    /// An instruction other than a wgmma read or wrote a register that a
    /// wgmma in flight writes (no `wgmma.wait_group` between them).
    WgmmaInFlight,
    /// Two accesses to the same shared memory by different warps, at
    /// least one a write, with no happens-before between them.
    DataRace,
}

impl HazardKind {
    /// The kind's name in reports and in JSON (`unfenced-async-copy`...).
    pub fn name(self) -> &'static str {
        match self {
            HazardKind::UnfencedAsyncCopy => "unfenced-async-copy",
            HazardKind::UnfencedGenericWrite => "unfenced-generic-write",
            HazardKind::TmaNotReady => "tma-not-ready",
            HazardKind::ParityAliased => "parity-aliased",
            HazardKind::WgmmaInFlight => "wgmma-in-flight",
            HazardKind::DataRace => "data-race",
        }
    }
}

/// One hazard the sanitizer found: its kind, the two lines involved (the
/// access that found it and the earlier one it conflicts with), where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hazard {
    /// What kind of hazard.
    pub kind: HazardKind,
    /// Line of the instruction that found it (the second access).
    pub line: u32,
    /// Line of the earlier instruction it conflicts with (the write, the
    /// TMA load, the wgmma in flight); 0 when there is none.
    pub other_line: u32,
    /// The CTA (`%ctaid`) it was found in.
    pub cta: [u32; 3],
    /// The CTA thread (`%tid` linear) of the second access.
    pub thread: u32,
    /// The CTA thread of the earlier access, when known.
    pub other_thread: Option<u32>,
    /// The shared-memory address (offset in the CTA's shared memory), when
    /// the hazard is about memory.
    pub addr: Option<u64>,
    /// The report in words.
    pub message: String,
}

impl Hazard {
    /// What identifies the hazard's site: a site is reported once.
    pub fn site(&self) -> (HazardKind, u32, u32) {
        (self.kind, self.line, self.other_line)
    }
}

impl fmt::Display for Hazard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.cta;
        write!(
            f,
            "{}: {} (CTA ({x},{y},{z}), thread {}",
            self.kind.name(),
            self.message,
            self.thread
        )?;
        if let Some(o) = self.other_thread {
            write!(f, ", other thread {o}")?;
        }
        if let Some(a) = self.addr {
            write!(f, ", shared address {a:#x}")?;
        }
        f.write_str(")")
    }
}

/// The memory an access went to, in an out-of-bounds fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// A global buffer (or none: the address is outside every buffer).
    Global,
    /// The CTA's shared memory (or a peer's in the cluster).
    Shared,
    /// The kernel's parameter space.
    Param,
    /// A generic address in none of the windows.
    Generic,
}

impl Space {
    fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Param => "parameter-space",
            Space::Generic => "generic",
        }
    }
}

/// Why a run could not go on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// An instruction, operand form or feature the host backend does not
    /// run (the kernel may be fine).
    Unsupported(String),
    /// An access outside the memory it addresses: `buffer` is the base of
    /// the buffer it falls in or past (none: outside every buffer), and
    /// `offset` the access's offset from that base.
    OutOfBounds {
        /// The state space.
        space: Space,
        /// The address accessed.
        addr: u64,
        /// Bytes accessed.
        len: usize,
        /// The nearest buffer's base address, if any.
        buffer: Option<u64>,
        /// The buffer's size in bytes (the shared memory's, for shared).
        size: u64,
    },
    /// An access through a null (or near-null) generic address.
    NullPointer {
        /// The address accessed.
        addr: u64,
    },
    /// The sanitizer found a hazard and the launch asked to stop at the
    /// first one.
    Hazard(Box<Hazard>),
    /// No warpgroup can run and some have not exited.
    Deadlock(String),
    /// The run took more steps than the launch allows.
    StepLimit(u64),
    /// The launch does not fit the kernel (parameters, shared memory,
    /// grid, block or cluster shape): nothing ran.
    Launch(String),
    /// The kernel does what the PTX ISA forbids or leaves undefined in a
    /// way the host backend cannot run past (a divergent `bra.uni`, a bad
    /// barrier count), or the launch does not fit the kernel.
    Invalid(String),
}

impl Fault {
    /// The fault's name in JSON (`out-of-bounds`...).
    pub fn name(&self) -> &'static str {
        match self {
            Fault::Unsupported(_) => "unsupported",
            Fault::OutOfBounds { .. } => "out-of-bounds",
            Fault::NullPointer { .. } => "null-pointer",
            Fault::Hazard(_) => "hazard",
            Fault::Deadlock(_) => "deadlock",
            Fault::StepLimit(_) => "step-limit",
            Fault::Launch(_) => "launch",
            Fault::Invalid(_) => "invalid",
        }
    }
}

impl From<String> for Fault {
    fn from(s: String) -> Fault {
        Fault::Invalid(s)
    }
}

impl From<&str> for Fault {
    fn from(s: &str) -> Fault {
        Fault::Invalid(s.to_string())
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Unsupported(s) | Fault::Deadlock(s) | Fault::Invalid(s) | Fault::Launch(s) => {
                f.write_str(s)
            }
            Fault::OutOfBounds {
                space,
                addr,
                len,
                buffer: Some(b),
                size,
            } => write!(
                f,
                "{} access of {len} bytes at {addr:#x} is outside memory: offset {} of the {size}-byte buffer at {b:#x}",
                space.name(),
                addr.wrapping_sub(*b) as i64
            ),
            Fault::OutOfBounds {
                space: Space::Shared,
                addr,
                len,
                size,
                ..
            } => write!(
                f,
                "shared access of {len} bytes at {addr:#x} is outside the {size} bytes of shared memory"
            ),
            Fault::OutOfBounds {
                space, addr, len, ..
            } => write!(
                f,
                "{} access of {len} bytes at {addr:#x} is outside every buffer",
                space.name()
            ),
            Fault::NullPointer { addr } => write!(
                f,
                "access through the null address {addr:#x} (a pointer parameter left null?)"
            ),
            Fault::Hazard(h) => write!(f, "{h}"),
            Fault::StepLimit(n) => write!(f, "stopped after {n} steps (a loop that does not end?)"),
        }
    }
}

/// A run that stopped: where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostError {
    /// PTX line of the instruction (0 when none).
    pub line: u32,
    /// The CTA it stopped in, when the grid has several.
    pub cta: Option<[u32; 3]>,
    /// Why, as data.
    pub fault: Fault,
    /// Why, in words (the CTA first when there is one).
    pub message: String,
    /// The hazards the sanitizer reported before the run stopped (see
    /// [`crate::RunStats::hazards`]).
    pub hazards: Vec<Hazard>,
}

impl HostError {
    /// A fault at `line` (0: none), in no CTA in particular.
    pub fn new(line: u32, fault: Fault) -> HostError {
        HostError {
            line,
            cta: None,
            message: fault.to_string(),
            fault,
            hazards: Vec::new(),
        }
    }

    /// The same error, named as in CTA `cta`.
    pub fn in_cta(mut self, cta: [u32; 3]) -> HostError {
        let [x, y, z] = cta;
        self.cta = Some(cta);
        self.message = format!("CTA ({x},{y},{z}): {}", self.fault);
        self
    }
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "line {}: {}", self.line, self.message)
        } else {
            f.write_str(&self.message)
        }
    }
}

impl std::error::Error for HostError {}
