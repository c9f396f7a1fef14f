//! The whole pipeline on the bytes of a capture file: the reader, the frames, every protocol's analysis and every output (see `lwarscope::fuzzing::capture_file`).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    lwarscope::fuzzing::capture_file(data);
});
