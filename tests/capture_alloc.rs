//! Reading whole (unfragmented) frames allocates nothing per frame.

mod common;

use lwarscope::capture::{FrameClass, Source};

mod counting_alloc;

use counting_alloc::allocations;

#[test]
fn frames_after_the_first_allocate_nothing() {
    let mut source = Source::files(&[common::real_capture()]).unwrap();
    // The first frames may grow the frame buffer.
    for _ in 0..10 {
        source.next_frame().unwrap().unwrap();
    }
    let before = allocations();
    let mut lwar = 0;
    for _ in 10..525 {
        let frame = source.next_frame().unwrap().unwrap();
        if let FrameClass::Udp(d) = frame.class {
            lwar += d.payload.len().min(1);
        }
    }
    let after = allocations();
    assert_eq!(lwar, 515);
    assert_eq!(after - before, 0, "allocations while reading 515 frames");
}
