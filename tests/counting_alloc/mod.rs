//! A global allocator that counts the allocations of each thread, for the tests
//! that show a hot path allocates nothing. Include it with `mod counting_alloc;`:
//! it installs itself as the test binary's global allocator.
//!
//! The count is per thread, so the test harness's other threads do not disturb it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

/// Allocations of every thread, for the tests of work spread over threads.
static ALL_THREADS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn count() {
    ALLOCATIONS.with(|n| n.set(n.get() + 1));
    ALL_THREADS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

// SAFETY: every call is forwarded to the system allocator unchanged; the counter
// is a const-initialised thread-local without destructor, so touching it never
// allocates or re-enters the allocator.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by this thread so far (allocs, zeroed allocs and reallocs).
#[allow(dead_code)]
pub fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// Allocations made by every thread of the process so far.
#[allow(dead_code)]
pub fn allocations_of_all_threads() -> u64 {
    ALL_THREADS.load(std::sync::atomic::Ordering::Relaxed)
}

/// The allocations `f` makes on this thread.
#[allow(dead_code)]
pub fn allocations_of(f: impl FnOnce()) -> u64 {
    let before = allocations();
    f();
    allocations() - before
}
