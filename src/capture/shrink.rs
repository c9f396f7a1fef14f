//! Files that shrink while they are read through a memory map.
//!
//! A mapped capture file can be truncated by another process while it is read
//! (tcpdump's `-C`/`-W` ring reopening a file, a copy written over a capture in
//! place). The kernel then raises `SIGBUS` on the first access to a page past
//! the new end, which would kill the process with the report half written and
//! the other files of a fleet run unjudged.
//!
//! A map registers its address range here ([`Watch::new`]). A `SIGBUS`
//! handler, installed once, looks the faulting address up among the
//! registered ranges: inside one, it maps a page of zeros over the lost page
//! (`MAP_FIXED`, anonymous: the faulting access then reads zeros and goes on)
//! and marks the range as shrunk; anywhere else, it puts the disposition that
//! was there before back and returns, so the access faults again and the
//! process dies of it as it would have without this module. The reader asks
//! [`Watch::shrunk`] before it hands out each record, and stops with an error
//! ("changed while being read") instead of analysing the zeros.
//!
//! The handler uses only async-signal-safe calls (`mmap`, `sigaction`) and
//! atomics; the ranges are a fixed table of [`SLOTS`] entries, so registering
//! allocates nothing. A map that finds no free slot is read unguarded, as
//! every map was before.

use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Maps watched at once (open files of one process: one per reading thread).
pub const SLOTS: usize = 64;

struct Slot {
    /// The range's first byte; 0 when the slot is free.
    start: AtomicUsize,
    len: AtomicUsize,
    shrunk: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot = Slot {
    start: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    shrunk: AtomicBool::new(false),
};

static TABLE: [Slot; SLOTS] = [FREE; SLOTS];
static PAGE: AtomicUsize = AtomicUsize::new(4096);
static INSTALL: Once = Once::new();
/// Whether the handler is in place (installing can fail: then nothing is watched).
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// The disposition of `SIGBUS` before ours, put back for a fault that is not ours.
struct Previous(std::cell::UnsafeCell<libc::sigaction>);
// SAFETY: written once inside `INSTALL` before the handler can run, read only after.
unsafe impl Sync for Previous {}
static PREVIOUS: Previous = Previous(std::cell::UnsafeCell::new(unsafe { std::mem::zeroed() }));

extern "C" fn on_sigbus(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel hands a valid siginfo to an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    let page = PAGE.load(Ordering::Relaxed);
    for slot in &TABLE {
        let start = slot.start.load(Ordering::Acquire);
        let len = slot.len.load(Ordering::Acquire);
        if start != 0 && addr >= start && addr - start < len {
            let at = addr & !(page - 1);
            // SAFETY: the page lies inside a read-only file mapping this
            // process owns (registered by `Watch`); replacing it with zeros
            // changes no Rust-visible invariant (the bytes are `&[u8]` the
            // parser bounds-checks), and the map's own munmap removes it.
            let p = unsafe {
                libc::mmap(
                    at as *mut libc::c_void,
                    page,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                slot.shrunk.store(true, Ordering::Release);
                return;
            }
            break;
        }
    }
    // Not ours (or the page could not be replaced): the fault repeats under
    // the previous disposition.
    // SAFETY: PREVIOUS was filled before this handler was installed.
    unsafe { libc::sigaction(libc::SIGBUS, PREVIOUS.0.get(), std::ptr::null_mut()) };
}

fn install() {
    INSTALL.call_once(|| {
        // SAFETY: sysconf and sigaction with structures built here; the
        // handler only touches atomics and async-signal-safe calls.
        unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE);
            if page > 0 {
                PAGE.store(page as usize, Ordering::Relaxed);
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(libc::SIGBUS, &action, PREVIOUS.0.get()) == 0 {
                INSTALLED.store(true, Ordering::Release);
            }
        }
    });
}

/// A mapped range watched for shrinking; unregistered when dropped.
#[derive(Debug)]
pub struct Watch {
    slot: Option<usize>,
}

impl Watch {
    /// Watches `len` bytes mapped at `start`.
    pub fn new(start: *const u8, len: usize) -> Watch {
        install();
        if !INSTALLED.load(Ordering::Acquire) || start.is_null() || len == 0 {
            return Watch { slot: None };
        }
        for (i, slot) in TABLE.iter().enumerate() {
            // Claim a free slot with its start, then give its length.
            if slot
                .start
                .compare_exchange(0, usize::MAX, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                slot.shrunk.store(false, Ordering::Relaxed);
                slot.len.store(len, Ordering::Release);
                slot.start.store(start as usize, Ordering::Release);
                return Watch { slot: Some(i) };
            }
        }
        Watch { slot: None }
    }

    /// True once a page of the range was found gone (the file shrank).
    #[inline]
    pub fn shrunk(&self) -> bool {
        self.slot
            .is_some_and(|i| TABLE[i].shrunk.load(Ordering::Acquire))
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            TABLE[i].len.store(0, Ordering::Release);
            TABLE[i].start.store(0, Ordering::Release);
        }
    }
}
