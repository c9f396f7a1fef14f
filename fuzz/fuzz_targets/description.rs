//! A protocol description (`.ksy` text), then after a NUL byte packets (each
//! a u8 length and its bytes); or a protobuf description, a NUL, its `.proto`,
//! a NUL, then the packets: the description is parsed and compiled, and
//! the packets decoded, dissected and analysed with it
//! (`lwarscope::fuzzing::description`). Any panic is a bug; so is a field
//! span outside its packet, or an error without a line and column.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    lwarscope::fuzzing::description(data);
});
