//! Frame parsing: link, IP, fragment reassembly and UDP, over a list of frames (see `lwarscope::fuzzing::frames`).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    lwarscope::fuzzing::frames(data);
});
