//! What the printers' tests share.

use std::io::{self, Write};

/// An output that keeps the bytes written to it, and each write's size.
#[derive(Default)]
pub struct Writes(pub Vec<u8>, pub Vec<usize>);

impl Write for Writes {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.extend_from_slice(buf);
        self.1.push(buf.len());
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
