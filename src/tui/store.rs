//! Payload storage off the heap: an append-only spill file.
//!
//! Each packet is appended by the data thread as a record (a small header with
//! its time, session, lengths and direction, then the payload) to an anonymous
//! temporary file, next to the texts of findings' details; the packet index
//! keeps little more than where each record lies, and rows are read back by
//! position (`pread`) when drawn or filtered. Memory stays flat
//! however long the capture, and the page cache keeps recent payloads fast.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::sync::Arc;

/// Where one payload lies in the store: a 48-bit offset and a 16-bit length,
/// packed in one word to keep index rows small.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Loc(u64);

impl Loc {
    /// Longest payload the store keeps whole (UDP's limit).
    pub const MAX_LEN: usize = u16::MAX as usize;

    /// `len` bytes at `offset` (the length is cut at [`Loc::MAX_LEN`]).
    pub fn new(offset: u64, len: usize) -> Self {
        Loc((offset << 16) | len.min(Self::MAX_LEN) as u64)
    }

    pub const fn offset(self) -> u64 {
        self.0 >> 16
    }

    pub const fn len(self) -> usize {
        (self.0 & 0xffff) as usize
    }

    pub const fn is_empty(self) -> bool {
        self.len() == 0
    }
}

/// The writing end, owned by the data thread. Appends go to a buffer; `flush`
/// makes them readable. Rows must be handed to the reader only after a flush.
#[derive(Debug)]
pub struct StoreWriter {
    file: Arc<File>,
    written: u64,
    buf: Vec<u8>,
}

/// The reading end, owned by the UI thread.
#[derive(Debug, Clone)]
pub struct StoreReader {
    file: Arc<File>,
}

/// A new, empty store (an unlinked temporary file) and its two ends.
pub fn store() -> io::Result<(StoreWriter, StoreReader)> {
    let file = Arc::new(tempfile::tempfile()?);
    Ok((
        StoreWriter {
            file: Arc::clone(&file),
            written: 0,
            buf: Vec::with_capacity(1 << 16),
        },
        StoreReader { file },
    ))
}

impl StoreWriter {
    /// Appends a payload (cut at [`Loc::MAX_LEN`]) and tells where it will be.
    pub fn append(&mut self, payload: &[u8]) -> Loc {
        let payload = &payload[..payload.len().min(Loc::MAX_LEN)];
        let loc = Loc::new(self.written + self.buf.len() as u64, payload.len());
        self.buf.extend_from_slice(payload);
        loc
    }

    /// Appends a record: a header, then a payload (cut at [`Loc::MAX_LEN`]);
    /// returns where it starts.
    pub fn append_record(&mut self, header: &[u8], payload: &[u8]) -> u64 {
        let start = self.len();
        self.buf.extend_from_slice(header);
        self.buf
            .extend_from_slice(&payload[..payload.len().min(Loc::MAX_LEN)]);
        start
    }

    /// Appends `value` as text (cut at [`Loc::MAX_LEN`]) and tells where it will
    /// be; an empty text takes no room. Formats straight into the buffer.
    pub fn append_display(&mut self, value: &dyn std::fmt::Display) -> Loc {
        let start = self.buf.len();
        // Writing to a Vec cannot fail, except in a `Display` impl that fails.
        let _ = write!(self.buf, "{value}");
        let len = (self.buf.len() - start).min(Loc::MAX_LEN);
        self.buf.truncate(start + len);
        Loc::new(self.written + start as u64, len)
    }

    /// Writes the buffered payloads out, so that the reader sees them.
    pub fn flush(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            (&*self.file).write_all(&self.buf)?;
            self.written += self.buf.len() as u64;
            self.buf.clear();
        }
        Ok(())
    }

    /// Bytes appended but not yet written out.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Bytes appended so far.
    pub fn len(&self) -> u64 {
        self.written + self.buf.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl StoreReader {
    /// Reads a payload into `buf` (replacing its contents).
    pub fn read(&self, loc: Loc, buf: &mut Vec<u8>) -> io::Result<()> {
        buf.clear();
        buf.resize(loc.len(), 0);
        self.file.read_exact_at(buf, loc.offset())
    }

    /// Fills `buf` with the bytes at `offset`.
    pub fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.file.read_exact_at(buf, offset)
    }

    /// Reads up to `len` bytes at `offset` into `buf` (replacing its contents):
    /// fewer at the end of the store.
    pub fn read_span(&self, offset: u64, len: usize, buf: &mut Vec<u8>) -> io::Result<()> {
        buf.clear();
        buf.resize(len, 0);
        let mut got = 0;
        while got < len {
            match self.file.read_at(&mut buf[got..], offset + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        buf.truncate(got);
        Ok(())
    }

    /// Reads back a text stored with [`StoreWriter::append_display`].
    pub fn read_text(&self, loc: Loc) -> io::Result<String> {
        let mut buf = Vec::new();
        self.read(loc, &mut buf)?;
        String::from_utf8(buf).map_err(io::Error::other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_read_back_after_flush() {
        let (mut w, r) = store().unwrap();
        let a = w.append(b"hello");
        let b = w.append(&[1, 2, 3]);
        let empty = w.append(&[]);
        w.flush().unwrap();
        let mut buf = Vec::new();
        r.read(b, &mut buf).unwrap();
        assert_eq!(buf, [1, 2, 3]);
        r.read(a, &mut buf).unwrap();
        assert_eq!(buf, b"hello");
        r.read(empty, &mut buf).unwrap();
        assert!(buf.is_empty());
        assert_eq!((a.offset(), b.offset(), w.len()), (0, 5, 8));
    }

    #[test]
    fn texts_are_formatted_into_the_store() {
        let (mut w, r) = store().unwrap();
        let payload = w.append(b"abc");
        let text = w.append_display(&format_args!("{} missing", 12));
        let empty = w.append_display(&"");
        w.flush().unwrap();
        assert_eq!(r.read_text(text).unwrap(), "12 missing");
        assert_eq!(r.read_text(empty).unwrap(), "");
        let mut buf = Vec::new();
        r.read(payload, &mut buf).unwrap();
        assert_eq!(buf, b"abc");
    }

    #[test]
    fn records_and_spans_read_back() {
        let (mut w, r) = store().unwrap();
        let text = w.append_display(&"note");
        let a = w.append_record(b"hd", b"xyz");
        let b = w.append_record(b"HD", &vec![1; 70_000]);
        w.flush().unwrap();
        assert_eq!((a, b), (4, 9));
        assert_eq!(w.len(), 9 + 2 + Loc::MAX_LEN as u64);
        let mut head = [0; 2];
        r.read_exact_at(&mut head, b).unwrap();
        assert_eq!(&head, b"HD");
        let mut buf = Vec::new();
        r.read_span(a, 7, &mut buf).unwrap();
        assert_eq!(buf, b"hdxyzHD");
        // A span past the end stops there.
        r.read_span(b + 2, 100_000, &mut buf).unwrap();
        assert_eq!(buf.len(), Loc::MAX_LEN);
        assert_eq!(r.read_text(text).unwrap(), "note");
    }

    #[test]
    fn long_payloads_are_cut_to_the_length_field() {
        let (mut w, r) = store().unwrap();
        let loc = w.append(&vec![7u8; 70_000]);
        w.flush().unwrap();
        assert_eq!(loc.len(), Loc::MAX_LEN);
        let mut buf = Vec::new();
        r.read(loc, &mut buf).unwrap();
        assert_eq!(buf.len(), Loc::MAX_LEN);
    }
}
