//! Reading whole (unfragmented) frames allocates nothing per frame.

use crate::common;

use lwarscope::capture::{FrameClass, Source};

use crate::counting_alloc;

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

/// The same through the mapped reader (the default for regular files) on a
/// pcapng file, and through libpcap.
#[test]
fn neither_reader_allocates_per_frame() {
    use lwarscope::capture::FileReader;
    let mut frames = Vec::new();
    let mut s = Source::files_with(&[common::real_capture()], FileReader::Libpcap).unwrap();
    while let Some(f) = s.next_frame().unwrap() {
        frames.push((f.ts.nanos(), f.data.to_vec()));
    }
    let pairs: Vec<(u64, &[u8])> = frames.iter().map(|(t, d)| (*t, d.as_slice())).collect();
    let dir = tempfile::tempdir().unwrap();
    let ng = dir.path().join("real.pcapng");
    std::fs::write(&ng, common::pcapng(1, true, &pairs)).unwrap();
    for (path, reader) in [
        (ng.clone(), FileReader::Mapped),
        (common::real_capture(), FileReader::Mapped),
        (common::real_capture(), FileReader::Libpcap),
    ] {
        let mut source = Source::files_with(&[&path], reader).unwrap();
        for _ in 0..10 {
            source.next_frame().unwrap().unwrap();
        }
        let before = allocations();
        let mut n = 0;
        while let Some(frame) = source.next_frame().unwrap() {
            n += frame.data.len().min(1);
        }
        let after = allocations();
        assert_eq!(n, 515, "{reader:?}");
        assert_eq!(
            after - before,
            0,
            "{reader:?} {}: allocations",
            path.display()
        );
    }
}
