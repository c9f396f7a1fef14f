//! Reading whole (unfragmented) frames allocates nothing per frame.

mod common;

use lwarscope::capture::{FrameClass, Source};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator, counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn frames_after_the_first_allocate_nothing() {
    let mut source = Source::files(&[common::real_capture()]).unwrap();
    // The first frames may grow the frame buffer.
    for _ in 0..10 {
        source.next_frame().unwrap().unwrap();
    }
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let mut lwar = 0;
    for _ in 10..525 {
        let frame = source.next_frame().unwrap().unwrap();
        if let FrameClass::Lwar(d) = frame.class {
            lwar += d.payload.len().min(1);
        }
    }
    let after = ALLOCATIONS.load(Ordering::Relaxed);
    assert_eq!(lwar, 515);
    assert_eq!(after - before, 0, "allocations while reading 515 frames");
}
