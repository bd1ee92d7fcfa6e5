//! The instruction table's pages faulted in ahead of the lowering, on a
//! thread of their own.
//!
//! The pipelined front end's critical path is its lowering thread, and on
//! a kernel of a million instructions a fifth of that thread's time went
//! to the kernel's page-fault handler: each 4 KiB page of the instruction
//! table (152 bytes an instruction, 152 MB) faults when the first
//! instruction is written into it. The table is reserved once when the
//! body starts, so its address is known; a helper thread asks Linux to
//! fault its pages in (`madvise(MADV_POPULATE_WRITE)`, Linux 5.14) a little
//! ahead of the instructions lowered so far, on time the parser's
//! processor has to spare. Populating a page changes no byte of memory:
//! the pages are the zero pages a first write would have faulted in, and
//! where the thread lags or the call fails the lowering faults them itself,
//! as before. Measured on the generated 1M matmul: the front end 576 ->
//! 531 ms (median of six interleaved runs each).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// Bodies with at least this many bytes left are worth a thread.
pub(super) const PREFAULT_FROM_BYTES: usize = 4 << 20;

/// The helper faults pages in once the lowering is this close to the
/// last one it faulted in (bytes of table: 8 MB are about 25 ms of
/// lowering)...
#[cfg(target_os = "linux")]
const LEAD: usize = 8 << 20;

/// ...this many bytes at a time: a few calls in all, each a few
/// milliseconds, since every time the helper wakes it takes a processor
/// from the parser or the lowering (woken every 200 microseconds to stay
/// 5 MB ahead, it made the front end slower, 540 -> 575 ms).
#[cfg(target_os = "linux")]
const STEP: usize = 8 << 20;

/// How long the helper sleeps between looks at the lowering's progress.
#[cfg(target_os = "linux")]
const NAP: std::time::Duration = std::time::Duration::from_millis(1);

/// What the lowering and the helper share.
struct Shared {
    /// Instructions lowered so far.
    lowered: AtomicUsize,
    /// The lowering is over, or the table moved: the helper stops.
    done: AtomicBool,
}

/// The helper faulting in a reserved table's pages; stopped when dropped.
pub(super) struct Prefault {
    shared: Arc<Shared>,
    /// The table's first element, to notice that it moved.
    base: usize,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Prefault {
    /// Start faulting in the `reserved` elements of the table whose (empty
    /// or short) contents are `table`; `None` where no thread starts or the
    /// system cannot populate pages.
    pub(super) fn start<T>(table: &[T], reserved: usize) -> Option<Prefault> {
        let base = table.as_ptr() as usize;
        let shared = Arc::new(Shared {
            lowered: AtomicUsize::new(table.len()),
            done: AtomicBool::new(false),
        });
        let thread = spawn(
            shared.clone(),
            base,
            reserved.saturating_mul(std::mem::size_of::<T>()),
            std::mem::size_of::<T>(),
        )?;
        Some(Prefault {
            shared,
            base,
            thread: Some(thread),
        })
    }

    /// The lowering reached `table`'s end; a table that moved (it grew
    /// past its reservation) stops the helper.
    pub(super) fn advance<T>(&self, table: &[T]) {
        if table.as_ptr() as usize != self.base {
            self.shared.done.store(true, Ordering::Relaxed);
        }
        self.shared.lowered.store(table.len(), Ordering::Relaxed);
    }
}

impl Drop for Prefault {
    fn drop(&mut self) {
        self.shared.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            // The helper only asks the kernel for pages: it cannot panic
            // in a way that matters here.
            let _ = t.join();
        }
    }
}

/// The helper: fault in `[base, base + bytes)` in steps of [`STEP`], the
/// next one when the lowering (elements of `size` bytes) comes within
/// [`LEAD`] bytes of the pages faulted in so far.
#[cfg(target_os = "linux")]
fn spawn(
    shared: Arc<Shared>,
    base: usize,
    bytes: usize,
    size: usize,
) -> Option<std::thread::JoinHandle<()>> {
    const PAGE: usize = 4096;
    // `madvise` takes whole pages: from the first page boundary in the
    // table (the page before it is the allocation's own, partly).
    let start = base.next_multiple_of(PAGE);
    let end = base.saturating_add(bytes) & !(PAGE - 1);
    std::thread::Builder::new()
        .name("ori-prefault".into())
        .spawn(move || {
            let mut at = start;
            while at < end && !shared.done.load(Ordering::Relaxed) {
                let lowered = shared.lowered.load(Ordering::Relaxed);
                let reached = base.saturating_add(lowered.saturating_mul(size));
                if at > reached.saturating_add(LEAD) {
                    std::thread::sleep(NAP);
                    continue;
                }
                let len = STEP.min(end - at);
                // SAFETY: `[at, at + len)` lies in the table the lowering
                // reserved (whole pages inside its allocation) while `done`
                // is unset, and populating changes no memory the program
                // can read: it maps the zero pages a first write would.
                // The table only moves or goes away after `done` is set
                // (`Prefault::advance`, `Drop`); a call that races with it
                // fails or populates pages of no consequence.
                let r = unsafe {
                    libc::madvise(at as *mut libc::c_void, len, libc::MADV_POPULATE_WRITE)
                };
                if r != 0 {
                    // Too old a kernel, or no memory: the lowering faults
                    // its pages in itself.
                    return;
                }
                at += len;
            }
        })
        .ok()
}

#[cfg(not(target_os = "linux"))]
fn spawn(_: Arc<Shared>, _: usize, _: usize, _: usize) -> Option<std::thread::JoinHandle<()>> {
    None
}
