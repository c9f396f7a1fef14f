//! The `lwarscope` binary: a thin shell over the library.

fn main() {}
