//! pcapng read from a pipe (a compressed file's inflater, standard input, a
//! FIFO) by the parser of the mapped reader (`capture::mapped`), over a
//! window of the stream that moves forward: every interface with its own
//! link type, as for a file read in place. libpcap refuses a pcapng stream
//! whose interfaces have different link types (Ethernet, raw IP, Linux
//! cooked captures...) before its first packet.
//!
//! Memory is bounded by the largest block the parser accepts (16 MiB, as
//! libpcap) and a few chunks: consumed bytes are dropped as it goes.

use super::link::LinkType;
use super::mapped::{Next, OpenError, Parser};
use std::io::{self, Read};

/// Bytes read from the pipe at a time.
const CHUNK: usize = 64 * 1024;

/// Consumed bytes dropped from the window once there are this many.
const DROP: usize = 4 * CHUNK;

/// The most read before the first interface description block: the section
/// header (1 MiB at most) and blocks before the interface (16 MiB each at
/// most); a stream that has none by then is not one to read.
const OPEN_LIMIT: usize = 36 << 20;

/// A record read, its bytes copied into the caller's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Piped {
    pub ts: super::Timestamp,
    pub cap_len: u32,
    pub orig_len: u32,
    pub link: LinkType,
}

/// What the next read found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PipedNext {
    Packet(Piped),
    End,
    Cut,
}

/// Why the stream cannot be read from the start.
#[derive(Debug)]
pub(crate) enum PipedOpenError {
    Open(OpenError),
    Io(io::Error),
}

/// A pcapng stream, read front to back.
pub(crate) struct PipedFile<R: Read> {
    input: R,
    parser: Parser,
    /// The stream's bytes from `parser.base()` on.
    window: Vec<u8>,
    scratch: Box<[u8]>,
    eof: bool,
}

/// Reads what `input` has (a chunk at most) onto `window`, through
/// `scratch`; `false` at its end. One read: a stream's bytes are used as
/// they come.
fn fill(input: &mut impl Read, scratch: &mut [u8], window: &mut Vec<u8>) -> io::Result<bool> {
    loop {
        match input.read(scratch) {
            Ok(n) => {
                window.extend_from_slice(&scratch[..n]);
                return Ok(n > 0);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

impl<R: Read> PipedFile<R> {
    /// Reads the stream's header (up to its first interface) and returns the
    /// reader and the first link type.
    pub fn open(mut input: R) -> Result<(PipedFile<R>, LinkType), PipedOpenError> {
        let mut window = Vec::with_capacity(CHUNK);
        let mut scratch = vec![0u8; CHUNK].into_boxed_slice();
        let mut eof = false;
        loop {
            match Parser::open(&window) {
                Ok((parser, link)) => {
                    return Ok((
                        PipedFile {
                            input,
                            parser,
                            window,
                            scratch,
                            eof,
                        },
                        link,
                    ));
                }
                // More bytes may complete the header: read on, up to a bound.
                Err(OpenError::NotPcap(_)) if !eof && window.len() < OPEN_LIMIT => {
                    eof =
                        !fill(&mut input, &mut scratch, &mut window).map_err(PipedOpenError::Io)?;
                }
                Err(e) => return Err(PipedOpenError::Open(e)),
            }
        }
    }

    /// The next record, its bytes in `out`. An error says what is wrong at
    /// which byte of the stream.
    pub fn next(&mut self, out: &mut Vec<u8>) -> Result<PipedNext, String> {
        loop {
            let consumed = self.parser.position() - self.parser.base();
            if consumed >= DROP {
                self.window.drain(..consumed);
                self.parser.discard(consumed);
            }
            match self.parser.next(&self.window)? {
                Next::Packet(r) => {
                    out.clear();
                    out.extend_from_slice(r.data);
                    return Ok(PipedNext::Packet(Piped {
                        ts: r.ts,
                        cap_len: r.cap_len,
                        orig_len: r.orig_len,
                        link: r.link,
                    }));
                }
                // Only a mapped file shrinks; a stream's window is its own.
                Next::Shrunk => return Ok(PipedNext::End),
                Next::End if self.eof => return Ok(PipedNext::End),
                Next::Cut if self.eof => return Ok(PipedNext::Cut),
                // The window ends here: read on.
                Next::End | Next::Cut => {
                    self.eof = !fill(&mut self.input, &mut self.scratch, &mut self.window)
                        .map_err(|e| {
                            format!(
                                "reading the stream at byte {}: {e}",
                                self.parser.base() + self.window.len()
                            )
                        })?;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::mapped::Parser;

    /// A reader that hands out at most `step` bytes a call.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn block(kind: u32, body: &[u8]) -> Vec<u8> {
        let len = (12 + body.len().div_ceil(4) * 4) as u32;
        let mut b = Vec::new();
        b.extend_from_slice(&kind.to_le_bytes());
        b.extend_from_slice(&len.to_le_bytes());
        b.extend_from_slice(body);
        b.resize(len as usize - 4, 0);
        b.extend_from_slice(&len.to_le_bytes());
        b
    }

    /// A pcapng file: Ethernet and raw IP interfaces, `n` packets of growing
    /// sizes on each in turn, then `tail`.
    fn file(n: usize, tail: &[u8]) -> Vec<u8> {
        let mut f = Vec::new();
        let mut shb = Vec::new();
        shb.extend_from_slice(&0x1a2b_3c4du32.to_le_bytes());
        shb.extend_from_slice(&1u16.to_le_bytes());
        shb.extend_from_slice(&0u16.to_le_bytes());
        shb.extend_from_slice(&(-1i64).to_le_bytes());
        f.extend(block(0x0a0d_0d0a, &shb));
        for link in [1u16, 101] {
            let mut idb = link.to_le_bytes().to_vec();
            idb.extend_from_slice(&[0, 0]);
            idb.extend_from_slice(&0u32.to_le_bytes());
            f.extend(block(1, &idb));
        }
        for i in 0..n {
            let data: Vec<u8> = (0..(i * 37) % 3000).map(|k| (k + i) as u8).collect();
            let mut epb = Vec::new();
            epb.extend_from_slice(&((i % 2) as u32).to_le_bytes());
            epb.extend_from_slice(&0u32.to_le_bytes());
            epb.extend_from_slice(&(i as u32).to_le_bytes());
            epb.extend_from_slice(&(data.len() as u32).to_le_bytes());
            epb.extend_from_slice(&(data.len() as u32).to_le_bytes());
            epb.extend_from_slice(&data);
            f.extend(block(6, &epb));
        }
        f.extend_from_slice(tail);
        f
    }

    /// The records read, and how the reading ended.
    type Outcome = (Vec<(Piped, Vec<u8>)>, Result<PipedNext, String>);

    /// Everything the parser gives over the whole file, and how it ends.
    fn whole(f: &[u8]) -> Outcome {
        let (mut p, _) = Parser::open(f).unwrap();
        let mut out = Vec::new();
        loop {
            match p.next(f) {
                Ok(Next::Packet(r)) => out.push((
                    Piped {
                        ts: r.ts,
                        cap_len: r.cap_len,
                        orig_len: r.orig_len,
                        link: r.link,
                    },
                    r.data.to_vec(),
                )),
                Ok(Next::End | Next::Shrunk) => return (out, Ok(PipedNext::End)),
                Ok(Next::Cut) => return (out, Ok(PipedNext::Cut)),
                Err(e) => return (out, Err(e)),
            }
        }
    }

    fn piped(f: &[u8], step: usize) -> Outcome {
        let (mut p, _) = PipedFile::open(Trickle { data: f, step }).unwrap();
        let mut out = Vec::new();
        let mut buf = Vec::new();
        loop {
            match p.next(&mut buf) {
                Ok(PipedNext::Packet(h)) => out.push((h, buf.clone())),
                end => return (out, end),
            }
            assert!(
                p.window.len() <= DROP + 2 * CHUNK + 4096,
                "{}",
                p.window.len()
            );
        }
    }

    /// Read a few bytes at a time or a chunk at a time, a stream gives what
    /// the whole file gives: every packet, on every interface, and the same
    /// end: the end, a cut, or an error at the same byte of the file.
    #[test]
    fn a_stream_reads_as_the_whole_file() {
        let mut bad_tail = block(6, &[0; 24]);
        bad_tail[4] = 13; // a length that is not a multiple of 4
        for tail in [&[][..], &block(6, &[0; 40])[..30], &bad_tail] {
            let f = file(600, tail);
            let expected = whole(&f);
            assert_eq!(expected.0.len(), 600);
            assert!(expected.0.iter().any(|(h, _)| h.link == LinkType::RawIp));
            for step in [1, 7, 4096, 1 << 20] {
                if step == 1 && f.len() > 200_000 {
                    // A byte at a time: over the header and the first packets.
                    let short = &f[..5000];
                    assert_eq!(piped(short, 1).0, whole(short).0);
                    continue;
                }
                assert_eq!(piped(&f, step), expected, "step {step}");
            }
        }
        if let Err(e) = whole(&file(3, &bad_tail)).1 {
            assert!(e.contains("at byte"), "{e}");
        }
    }

    #[test]
    fn a_stream_without_an_interface_or_not_pcapng_is_refused() {
        for f in [
            file(0, &[])[..28].to_vec(),
            b"not a capture at all, but long enough to tell".to_vec(),
            Vec::new(),
        ] {
            assert!(matches!(
                PipedFile::open(Trickle { data: &f, step: 3 }),
                Err(PipedOpenError::Open(OpenError::NotPcap(_)))
            ));
        }
    }
}
