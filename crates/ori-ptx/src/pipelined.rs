//! The front end on two threads: this one parses, a helper lowers what is
//! parsed.
//!
//! Parsing and lowering are each about a third of a run on a compiler's
//! kernel (callgrind on Triton's `mm_f16acc_64x128x32_s4_w4`: 29% and 27%
//! of the instructions retired). The sequential front end does one after
//! the other; here the calling thread parses ([`parse_streaming`]) and
//! hands the body's statements over in batches through a channel, while a
//! helper thread lowers them ([`lower_streamed`]) as they come.
//!
//! The result is the sequential front end's, or nothing: [`parse_and_lower`]
//! returns `None` whenever the pipelined lowering cannot vouch for that
//! (any diagnostic, a body not written the way compilers write one, a
//! second function body, items after the body), and the caller runs the
//! sequential front end, which gives every message.
//!
//! A new thread may start late: on the 2-processor VM of the benchmarks,
//! from 0.1 to over 2 ms after it was spawned (the scheduler starts it on
//! its parent's processor and leaves it there, or wakes the idle one
//! late). So the helper is never waited for. Whichever of the two threads
//! comes first claims the lowering: the helper as it starts, this thread
//! once it has parsed everything. A helper that comes too late finds the
//! work taken and ends; the run then costs what the sequential one does
//! plus a thread. A program that knows early that it will compile (the
//! `ori` command, as it starts) calls [`warm_up`], so that the helper is
//! running by the time the parse begins.

use crate::ast::{Item, Module, Stmt};
use crate::diag::Diag;
use crate::lower::lower_streamed;
use crate::parser::{parse_streaming, BodyEvent};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::mpsc::{channel, Receiver, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What [`parse_and_lower`] makes of a module.
pub struct Pipelined {
    /// The syntax tree without the streamed body (its statements went to
    /// the lowering): the header, the items, the function's header.
    pub ast: Module,
    /// The lowered module, as `lower_module_owned` makes it.
    pub module: ori_ir::Module,
    /// The module-level diagnostics that need the whole module
    /// (`check_version_target`), as `lower_module_owned` gives them.
    pub diags: Vec<Diag>,
}

/// Nobody lowers yet.
const UNCLAIMED: u8 = 0;
/// The helper thread lowers.
const HELPER: u8 = 1;
/// The calling thread lowers (the helper came after the parse was over).
const CALLER: u8 = 2;

/// How long a thread polls a channel before it sleeps on it. The parser
/// sends a batch every 30 to 50 microseconds; a thread that sleeps is
/// woken tens of microseconds late on a virtual machine, or later.
const SPIN: Duration = Duration::from_millis(5);

/// Parse `src` on this thread while a helper thread lowers it; `None` if
/// the result might differ from the sequential front end's
/// (`parse_with_diags`, then `lower_module_owned`) or a diagnostic came
/// up: then the caller runs that instead. `None` also where this process
/// may use one processor only.
pub fn parse_and_lower(file: &str, src: &str) -> Option<Pipelined> {
    let placement = Placement::new()?;
    let claim = Arc::new(AtomicU8::new(UNCLAIMED));
    let (tx, rx) = channel::<BodyEvent>();
    let rx = Arc::new(Mutex::new(Some(rx)));
    // Lowered batches go back to this thread, which made them, to be freed
    // in its own allocator arena (freed by the helper, each would lock
    // this thread's arena against its own allocations).
    let (back_tx, back_rx) = channel::<Vec<Stmt>>();
    let (done_tx, done_rx) = channel::<Option<ori_ir::Module>>();
    let helper = {
        let (claim, rx, file) = (claim.clone(), rx.clone(), file.to_string());
        move || {
            if claim
                .compare_exchange(UNCLAIMED, HELPER, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                return;
            }
            let rx = rx.lock().ok().and_then(|mut r| r.take());
            let lowered = rx.and_then(|rx| {
                lower(&file, &rx, move |done| {
                    let _ = back_tx.send(done);
                })
            });
            let _ = done_tx.send(lowered);
        }
    };
    // A large input parses for long enough that a thread's start does not
    // matter, and a fresh helper is placed by where this thread runs now:
    // the warmed-up one is sent away (with it, the 1M-instruction kernel
    // ran in 2.4 s and 446 MB one time in three, against 1.5-2.0 s and
    // 379 MB; why is not known).
    let posted = if src.len() < WARM_MAX_BYTES {
        Warm::post(Box::new(helper))
    } else {
        Warm::dismiss();
        Err(Box::new(helper) as Work)
    };
    if let Err(helper) = posted {
        let spawned = std::thread::Builder::new()
            .name("ori-lower".into())
            .spawn(helper)
            .ok()?;
        placement.keep_apart(&spawned);
        // Never joined: a helper that starts after the parse finds the work
        // taken and ends on its own.
        drop(spawned);
    }
    let (ast, parse_diags) = parse_streaming(
        file,
        src,
        Box::new(|e| {
            // A lowering that gave up leaves the rest to be parsed for
            // nothing; the caller parses again.
            let _ = tx.send(e);
            while back_rx.try_recv().is_ok() {}
        }),
    );
    drop(tx);
    let module = if claim
        .compare_exchange(UNCLAIMED, CALLER, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
    {
        let rx = rx.lock().ok().and_then(|mut r| r.take())?;
        lower(file, &rx, drop)
    } else {
        wait_for_helper(&done_rx, &back_rx)
    };
    // What the helper gave back last is freed with the channel.
    drop(back_rx);
    let module = module?;
    if !parse_diags.is_empty() {
        return None;
    }
    // The streamed body is the first; only directives may follow it (a
    // later function or variable would be in scope in the body).
    let first_body = ast
        .items
        .iter()
        .position(|i| matches!(i, Item::Function(f) if f.body.is_some()))?;
    if !ast.items[first_body + 1..]
        .iter()
        .all(|i| matches!(i, Item::Directive(_)))
    {
        return None;
    }
    let diags = crate::target::check_version_target(file, &ast)
        .into_iter()
        .collect();
    Some(Pipelined { ast, module, diags })
}

/// The helper's module, polled for up to [`SPIN`] before sleeping on the
/// channel, freeing the batches it gives back meanwhile.
fn wait_for_helper(
    done_rx: &Receiver<Option<ori_ir::Module>>,
    back_rx: &Receiver<Vec<Stmt>>,
) -> Option<ori_ir::Module> {
    let started = Instant::now();
    loop {
        while back_rx.try_recv().is_ok() {}
        match done_rx.try_recv() {
            Ok(m) => return m,
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) if started.elapsed() > SPIN => {
                return done_rx.recv().ok().flatten();
            }
            Err(TryRecvError::Empty) => std::hint::spin_loop(),
        }
    }
}

/// Work for a helper thread.
type Work = Box<dyn FnOnce() + Send>;

/// A helper thread started ahead of its work by [`warm_up`]: the work
/// goes in `slot`, then `state` says so.
struct Warm {
    slot: Arc<Mutex<Option<Work>>>,
    state: Arc<AtomicU8>,
    /// The helper's thread: put on another processor again when the work
    /// comes, should the caller have moved to the helper's meanwhile.
    thread: std::thread::JoinHandle<()>,
}

/// The warmed-up helper is waiting.
const WAITING: u8 = 0;
/// Its work is in the slot.
const POSTED: u8 = 1;
/// It waited [`WARM_WAIT`] and ended, or was sent away
/// ([`Warm::dismiss`]).
const GONE: u8 = 2;

/// How long a warmed-up helper polls for its work before it ends.
const WARM_WAIT: Duration = Duration::from_millis(20);

/// The helper [`warm_up`] started, until [`parse_and_lower`] takes it.
static WARM: Mutex<Option<Warm>> = Mutex::new(None);

/// Start the pipelined front end's helper thread now, on the other
/// processor, so that it is running when [`parse_and_lower`] needs it: a
/// new thread takes about 0.1 ms to start on the 2-processor VM of the
/// benchmarks, a few percent of a kernel's compilation. The `ori` command
/// calls this as it starts, before it parses its arguments and reads its
/// input. The helper polls for its work for up to 20 ms and then ends, so
/// a process that never compiles loses that much of one processor.
pub fn warm_up() {
    let Some(placement) = Placement::new() else {
        return;
    };
    let Ok(mut warm) = WARM.lock() else {
        return;
    };
    if warm.is_some() {
        return;
    }
    let slot: Arc<Mutex<Option<Work>>> = Arc::default();
    let state = Arc::new(AtomicU8::new(WAITING));
    let (s2, st2) = (slot.clone(), state.clone());
    let wait = move || {
        let started = Instant::now();
        loop {
            let now = st2.load(Ordering::Acquire);
            if now == GONE {
                // Sent away ([`Warm::dismiss`]).
                return;
            }
            if now == POSTED
                || started.elapsed() > WARM_WAIT
                    && st2
                        .compare_exchange(WAITING, GONE, Ordering::AcqRel, Ordering::Acquire)
                        .is_err()
            {
                let work = s2.lock().ok().and_then(|mut w| w.take());
                if let Some(work) = work {
                    work();
                }
                return;
            }
            if started.elapsed() > WARM_WAIT {
                return;
            }
            std::hint::spin_loop();
        }
    };
    let Ok(spawned) = std::thread::Builder::new()
        .name("ori-lower".into())
        .spawn(wait)
    else {
        return;
    };
    placement.keep_apart(&spawned);
    *warm = Some(Warm {
        slot,
        state,
        thread: spawned,
    });
}

/// Inputs from this size on do not use the warmed-up helper
/// ([`parse_and_lower`]).
const WARM_MAX_BYTES: usize = 1 << 20;

impl Warm {
    /// Send the warmed-up helper away, if there is one still waiting.
    fn dismiss() {
        if let Some(warm) = WARM.lock().ok().and_then(|mut w| w.take()) {
            let _ = warm
                .state
                .compare_exchange(WAITING, GONE, Ordering::AcqRel, Ordering::Acquire);
        }
    }

    /// Hand `work` to the warmed-up helper, if there is one still waiting;
    /// otherwise the work comes back.
    fn post(work: Work) -> Result<(), Work> {
        let Some(warm) = WARM.lock().ok().and_then(|mut w| w.take()) else {
            return Err(work);
        };
        // Away from the processor the caller is on now (it may have moved
        // since `warm_up`: two threads on one processor run one at a time).
        if let Some(placement) = Placement::new() {
            placement.keep_apart(&warm.thread);
        }
        let Ok(mut slot) = warm.slot.lock() else {
            return Err(work);
        };
        *slot = Some(work);
        drop(slot);
        if warm
            .state
            .compare_exchange(WAITING, POSTED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            return Ok(());
        }
        // The helper ended without it: the work is still in the slot.
        match warm.slot.lock().ok().and_then(|mut w| w.take()) {
            Some(work) => Err(work),
            None => Ok(()),
        }
    }
}

/// Lower the streamed module from `rx` (see [`lower_streamed`]).
fn lower(
    file: &str,
    rx: &Receiver<BodyEvent>,
    give_back: impl FnMut(Vec<Stmt>),
) -> Option<ori_ir::Module> {
    let next = || recv_spinning(rx);
    match next() {
        Some(BodyEvent::Start(start)) => {
            lower_streamed(file, &start, std::iter::from_fn(next), give_back)
        }
        _ => None,
    }
}

/// The next event, polled for up to [`SPIN`] before sleeping on the
/// channel.
fn recv_spinning(rx: &Receiver<BodyEvent>) -> Option<BodyEvent> {
    let mut since: Option<Instant> = None;
    loop {
        for _ in 0..64 {
            match rx.try_recv() {
                Ok(e) => return Some(e),
                Err(TryRecvError::Disconnected) => return None,
                Err(TryRecvError::Empty) => std::hint::spin_loop(),
            }
        }
        let t = *since.get_or_insert_with(Instant::now);
        if t.elapsed() > SPIN {
            return rx.recv().ok();
        }
    }
}

/// Where the helper runs: on another processor than the calling thread's
/// (Linux; elsewhere where the scheduler puts it). Left to itself, the
/// scheduler of the 2-processor VM of the benchmarks started the helper
/// on the parser's processor and left it there, behind the parser, while
/// the other processor idled (the pipelined front end was then no faster
/// than the sequential one: 2.21 ms against 2.21 ms, best of 300 runs of
/// `mm_f16acc_64x128x32_s4_w4`; with the helper put elsewhere, 2.04 ms).
/// Keeping the calling thread on its processor too cost more than it
/// saved: moving a thread's processor set waited, in most runs, about
/// 0.9 ms for the other processor.
struct Placement {
    /// The processors this process may run on.
    #[cfg(target_os = "linux")]
    allowed: libc::cpu_set_t,
    /// The one the calling thread runs on now.
    #[cfg(target_os = "linux")]
    here: usize,
}

impl Placement {
    /// `None` where this process may use one processor only.
    #[cfg(target_os = "linux")]
    fn new() -> Option<Placement> {
        // SAFETY: `allowed` is a plain bit set the call fills;
        // `sched_getcpu` takes nothing.
        unsafe {
            let mut allowed: libc::cpu_set_t = std::mem::zeroed();
            let size = std::mem::size_of::<libc::cpu_set_t>();
            if libc::sched_getaffinity(0, size, &mut allowed) != 0 || libc::CPU_COUNT(&allowed) < 2
            {
                return None;
            }
            let here = usize::try_from(libc::sched_getcpu()).ok()?;
            Some(Placement { allowed, here })
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn new() -> Option<Placement> {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        (n > 1).then_some(Placement {})
    }

    /// Put thread `t` on another processor than the calling thread's,
    /// before it runs if it has not yet.
    #[cfg(target_os = "linux")]
    fn keep_apart<T>(&self, t: &std::thread::JoinHandle<T>) {
        use std::os::unix::thread::JoinHandleExt;
        let Some(there) = (0..libc::CPU_SETSIZE as usize)
            .find(|&c| c != self.here && unsafe { libc::CPU_ISSET(c, &self.allowed) })
        else {
            return;
        };
        // SAFETY: `t` is alive (its handle is held), so its pthread_t is
        // valid; the set is a plain bit set.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(there, &mut set);
            libc::pthread_setaffinity_np(
                t.as_pthread_t(),
                std::mem::size_of::<libc::cpu_set_t>(),
                &set,
            );
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn keep_apart<T>(&self, _t: &std::thread::JoinHandle<T>) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = ".version 8.5\n.target sm_90a\n.address_size 64\n";

    /// The sequential front end's module, printed, and its diagnostics.
    fn sequential(src: &str) -> (String, Vec<Diag>) {
        let (ast, mut diags) = crate::parse_with_diags("k.ptx", src);
        let (m, more) = crate::lower::lower_module_owned("k.ptx", ast);
        diags.extend(more);
        (ori_ir::write_module(&m), diags)
    }

    fn pipelined(body: &str) -> Option<String> {
        let src = format!("{HEAD}{body}");
        let p = parse_and_lower("k.ptx", &src)?;
        let (want, diags) = sequential(&src);
        assert_eq!(diags, p.diags);
        let got = ori_ir::write_module(&p.module);
        assert_eq!(want, got);
        Some(got)
    }

    #[test]
    fn forward_branches_nested_labels_and_skips_match_the_sequential_lowering() {
        // A forward branch, a backward one, the same label in two nested
        // scopes and in the function scope, a guarded wgmma (the skip
        // block ori makes) and a label spelled like a block the writer
        // names itself.
        let body = r#"
.visible .entry k(.param .u64 p)
{
    .reg .pred %p<3>;
    .reg .b32 %r<8>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<4>;
    mov.u32 %r1, %tid.x;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 bra $L_end;
bb1:
    { .reg .pred q; setp.ne.u32 q, %r1, 1; @q bra W; W: add.u32 %r2, %r2, 1; }
    { W: add.u32 %r3, %r3, 1; @%p1 bra W; }
W:
    wgmma.fence.sync.aligned;
    @%p1 wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd1, %rd2, 1, 1, 1, 0, 0;
    wgmma.commit_group.sync.aligned;
    wgmma.wait_group.sync.aligned 0;
    add.u32 %r4, %r4, 1;
    setp.lt.u32 %p2, %r4, 8;
    @%p2 bra W;
$L_end:
    ret;
}
"#;
        let ir = pipelined(body).expect("the pipelined front end declined");
        assert!(ir.contains("W_1"), "{ir}");
        assert!(ir.contains("$ori_skip_0"), "{ir}");
    }

    #[test]
    fn a_register_declared_after_the_lowering_made_one_is_declined() {
        // `%big<5000>` is declared a member at a time, on first use: the
        // `.reg` after that use would be numbered after it here, before it
        // in the sequential lowering.
        let body = ".visible .entry k()\n{\n.reg .b32 %big<5000>;\nmov.u32 %big7, 1;\n.reg .b32 %late;\nmov.u32 %late, %big7;\nret;\n}\n";
        assert_eq!(pipelined(body), None);
        // Before any register is made, a `.reg` anywhere is fine.
        let body = ".visible .entry k()\n{\n.reg .b32 %a;\nmov.u32 %a, 1;\n.reg .b32 %b;\nmov.u32 %b, %a;\nret;\n}\n";
        assert!(pipelined(body).is_some());
    }

    #[test]
    fn a_name_used_before_its_declaration_is_declined() {
        let body =
            ".visible .entry k()\n{\n.reg .b32 %a;\nmov.u32 %a, %b;\n.reg .b32 %b;\nret;\n}\n";
        assert_eq!(pipelined(body), None);
    }

    #[test]
    fn errors_and_undefined_or_repeated_labels_are_left_to_the_sequential_front_end() {
        for body in [
            // An undefined branch target.
            ".visible .entry k()\n{\nbra $nowhere;\nret;\n}\n",
            // A label defined twice in the function scope.
            ".visible .entry k()\n{\nL: ret;\nL: ret;\n}\n",
            // An unknown instruction.
            ".visible .entry k()\n{\nfrobnicate;\nret;\n}\n",
            // A syntax error.
            ".visible .entry k()\n{\nmov.u32 %r1 1;\nret;\n}\n",
        ] {
            assert_eq!(pipelined(body), None, "{body}");
        }
    }

    #[test]
    fn a_warmed_up_helper_lowers_or_ends_on_its_own() {
        let body = ".visible .entry k()\n{\n.reg .b32 %a;\nL: add.u32 %a, %a, 1;\nbra L;\n}\n";
        // Taken at once: the warmed-up helper does the work.
        warm_up();
        assert!(pipelined(body).is_some());
        // Left waiting past WARM_WAIT: it ends, and the work goes to a
        // thread of its own (another test's warm_up may have started a
        // fresh helper meanwhile, which is fine too).
        warm_up();
        std::thread::sleep(WARM_WAIT * 2);
        assert!(pipelined(body).is_some());
    }

    #[test]
    fn a_function_or_variable_after_the_body_is_declined() {
        let body = ".visible .entry k()\n{\nret;\n}\n.func f()\n{\nret;\n}\n";
        assert_eq!(pipelined(body), None);
        let body = ".visible .entry k()\n{\nret;\n}\n.global .u32 g;\n";
        assert_eq!(pipelined(body), None);
        // Prototypes before the body are lowered as the sequential
        // front end lowers them.
        let body = ".extern .func f();\n.visible .entry k()\n{\ncall f, ();\nret;\n}\n";
        assert!(pipelined(body).is_some());
    }
}
