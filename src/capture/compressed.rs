//! Compressed capture files (`.pcap.gz`, `.pcapng.zst`), as tshark reads them:
//! recognised by their magic bytes, whatever their name, and inflated by a
//! thread into a pipe that libpcap reads as it would the plain file. Memory
//! stays flat (one 64 KiB chunk in flight) and nothing is written to disk.
//!
//! Streams (standard input when it is a pipe, a FIFO, a character device) go
//! through the same thread, compressed or not ([`Inflater::stream`]): it
//! reads them once (their first bytes tell the compression: a FIFO cannot be
//! opened twice to sniff them), and only when they have bytes, so that a stop
//! (Ctrl-C, SIGTERM) ends the run even when the writer stalls.

use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// How a file is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    Gzip,
    Zstd,
    /// Not known before it is read: a stream ([`Inflater::stream`]).
    Stream,
}

impl Compression {
    /// The compression the first bytes of a file announce, if any.
    pub fn sniff(head: &[u8]) -> Option<Compression> {
        match head {
            [0x1f, 0x8b, ..] => Some(Compression::Gzip),
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Some(Compression::Zstd),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Stream => "stream",
        }
    }

    /// The compression of the file at `path`, from its first four bytes.
    pub fn of_file(path: &Path) -> io::Result<Option<Compression>> {
        let mut head = [0u8; 4];
        let mut f = std::fs::File::open(path)?;
        let mut n = 0;
        while n < head.len() {
            match f.read(&mut head[n..])? {
                0 => break,
                k => n += k,
            }
        }
        Ok(Compression::sniff(&head[..n]))
    }
}

/// Whether `path` names a stream rather than a file: standard input (`-`)
/// when it is not a regular file, a FIFO, a character device or a socket.
pub fn is_stream(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    let meta = if path.as_os_str() == "-" {
        let fd = std::os::fd::AsFd::as_fd(&io::stdin()).try_clone_to_owned();
        fd.and_then(|fd| std::fs::File::from(fd).metadata())
    } else {
        std::fs::metadata(path)
    };
    meta.is_ok_and(|m| {
        let t = m.file_type();
        t.is_fifo() || t.is_char_device() || t.is_socket()
    })
}

/// A stream read only when it has bytes: every 100 ms it checks `stop`, and
/// ends (as at the end of the stream) once it is set.
struct Polled {
    file: std::fs::File,
    stop: Arc<AtomicBool>,
}

impl Read for Polled {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.stop.load(Ordering::SeqCst) {
                return Ok(0);
            }
            let mut pfd = libc::pollfd {
                fd: self.file.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd, for the length of the call.
            match unsafe { libc::poll(&mut pfd, 1, 100) } {
                0 => continue,
                r if r < 0 => {
                    let e = io::Error::last_os_error();
                    if e.kind() != io::ErrorKind::Interrupted {
                        return Err(e);
                    }
                }
                // Readable, or hung up (then the read gives the end).
                _ => return self.file.read(buf),
            }
        }
    }
}

/// The first bytes the thread writes into the pipe (what the reader will
/// read first: the capture's magic), and whether it has ended.
#[derive(Default)]
struct Head {
    state: Mutex<(Vec<u8>, bool)>,
    told: std::sync::Condvar,
}

impl Head {
    /// Keeps what is missing of the first four bytes of `chunk`.
    fn saw(&self, chunk: &[u8]) {
        if let Ok(mut s) = self.state.lock()
            && s.0.len() < 4
        {
            let n = (4 - s.0.len()).min(chunk.len());
            s.0.extend_from_slice(&chunk[..n]);
            if s.0.len() == 4 {
                self.told.notify_all();
            }
        }
    }

    fn ended(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.1 = true;
        }
        self.told.notify_all();
    }
}

/// Tells the head it ended when the thread ends, however it does.
struct Ends(Arc<Head>);

impl Drop for Ends {
    fn drop(&mut self) {
        self.0.ended();
    }
}

/// The thread that inflates a compressed file into a pipe.
pub struct Inflater {
    compression: Compression,
    head: Arc<Head>,
    /// Why inflating stopped early (a corrupt or truncated stream).
    error: Arc<Mutex<Option<String>>>,
    /// Asks the thread to stop after the chunk it is writing.
    cancel: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// Blocks SIGPIPE in the calling thread (the one that writes into the pipe):
/// when libpcap stops reading early and the pipe closes, the write fails with
/// `EPIPE` instead of the signal killing the process, whatever the program
/// that uses the library does with SIGPIPE (Rust's own runtime ignores it; a
/// C host, or a fuzzer's, may not).
fn block_sigpipe() {
    // SAFETY: a signal set built here, and a mask change of this thread only.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Chunks the thread moves at a time: the memory in flight.
const CHUNK: usize = 64 * 1024;

impl Inflater {
    /// Starts inflating `path`; libpcap reads the returned pipe.
    pub fn start(path: &Path, compression: Compression) -> io::Result<(io::PipeReader, Inflater)> {
        let file = std::fs::File::open(path)?;
        let (reader, writer) = io::pipe()?;
        let error = Arc::new(Mutex::new(None));
        let cancel = Arc::new(AtomicBool::new(false));
        let (e, c) = (Arc::clone(&error), Arc::clone(&cancel));
        let head = Arc::new(Head::default());
        let h = Ends(Arc::clone(&head));
        let thread = std::thread::Builder::new()
            .name(format!("inflate {}", compression.name()))
            .spawn(move || {
                block_sigpipe();
                let input = io::BufReader::new(file);
                let result = match compression {
                    Compression::Gzip => {
                        pump(flate2::read::MultiGzDecoder::new(input), writer, &c, &h.0)
                    }
                    Compression::Zstd => zstd::stream::read::Decoder::with_buffer(input)
                        .and_then(|d| pump(d, writer, &c, &h.0)),
                    Compression::Stream => pump(input, writer, &c, &h.0),
                };
                // A closed pipe is the reader stopping early (`-c`), not an error.
                if let Err(err) = result
                    && err.kind() != io::ErrorKind::BrokenPipe
                    && let Ok(mut slot) = e.lock()
                {
                    *slot = Some(err.to_string());
                }
            })?;
        Ok((
            reader,
            Inflater {
                compression,
                head,
                error,
                cancel,
                thread: Some(thread),
            },
        ))
    }

    /// Relays the stream at `path` (`-`: standard input) into a pipe that
    /// libpcap reads, inflating it if its first bytes say it is compressed.
    /// Once `stop` is set, the stream is read no more and the pipe closes:
    /// libpcap sees the end, even when the writer stalled.
    pub fn stream(path: &Path, stop: Arc<AtomicBool>) -> io::Result<(io::PipeReader, Inflater)> {
        let input = if path.as_os_str() == "-" {
            std::fs::File::from(std::os::fd::AsFd::as_fd(&io::stdin()).try_clone_to_owned()?)
        } else {
            // A FIFO's open waits for a writer: in the thread, not here.
            let path = path.to_path_buf();
            return Self::stream_opening(move || std::fs::File::open(&path), stop);
        };
        Self::stream_opening(move || Ok(input), stop)
    }

    fn stream_opening(
        open: impl FnOnce() -> io::Result<std::fs::File> + Send + 'static,
        stop: Arc<AtomicBool>,
    ) -> io::Result<(io::PipeReader, Inflater)> {
        let (reader, writer) = io::pipe()?;
        let error = Arc::new(Mutex::new(None));
        let cancel = Arc::new(AtomicBool::new(false));
        let (e, c) = (Arc::clone(&error), Arc::clone(&cancel));
        let head = Arc::new(Head::default());
        let h = Ends(Arc::clone(&head));
        let thread = std::thread::Builder::new()
            .name("read stream".into())
            .spawn(move || {
                block_sigpipe();
                let result = open().and_then(|file| {
                    let mut input = Polled { file, stop };
                    // The first bytes tell the compression; they are relayed too.
                    let mut head = Vec::with_capacity(4);
                    let mut byte = [0u8; 4];
                    while head.len() < 4 {
                        match input.read(&mut byte[..4 - head.len()]) {
                            Ok(0) => break,
                            Ok(n) => head.extend_from_slice(&byte[..n]),
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                            Err(e) => return Err(e),
                        }
                    }
                    let input = io::BufReader::new(io::Cursor::new(head.clone()).chain(input));
                    match Compression::sniff(&head) {
                        Some(Compression::Gzip) => {
                            pump(flate2::read::MultiGzDecoder::new(input), writer, &c, &h.0)
                        }
                        Some(Compression::Zstd) => zstd::stream::read::Decoder::with_buffer(input)
                            .and_then(|d| pump(d, writer, &c, &h.0)),
                        None | Some(Compression::Stream) => pump(input, writer, &c, &h.0),
                    }
                });
                if let Err(err) = result
                    && err.kind() != io::ErrorKind::BrokenPipe
                    && let Ok(mut slot) = e.lock()
                {
                    *slot = Some(err.to_string());
                }
            })?;
        Ok((
            reader,
            Inflater {
                compression: Compression::Stream,
                head,
                error,
                cancel,
                thread: Some(thread),
            },
        ))
    }

    /// Waits for the thread (after libpcap read the pipe to its end) and tells
    /// why inflating stopped early, if it did: `gzip: corrupt deflate stream`.
    /// When libpcap gave up before the end (a record it refuses, with more
    /// bytes after it), the thread may be blocked writing into the full pipe:
    /// it is waited for a second at most, then asked to stop and left to end
    /// when the pipe closes (a join would wait for ever).
    pub fn finish(&mut self) -> Option<String> {
        if let Some(t) = self.thread.take() {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
            while !t.is_finished() && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            if t.is_finished() {
                let _ = t.join();
            } else {
                self.cancel.store(true, Ordering::SeqCst);
            }
        }
        self.error()
    }

    /// The first four bytes the pipe will give (fewer if the thread ended
    /// before writing them): waits for them, as the pipe's reader would.
    pub fn head(&self) -> Vec<u8> {
        let Ok(mut s) = self.head.state.lock() else {
            return Vec::new();
        };
        while s.0.len() < 4 && !s.1 {
            match self.head.told.wait(s) {
                Ok(g) => s = g,
                Err(_) => return Vec::new(),
            }
        }
        s.0.clone()
    }

    /// Why inflating stopped early, so far.
    pub fn error(&self) -> Option<String> {
        let e = self.error.lock().ok()?.clone()?;
        Some(format!("{}: {e}", self.compression.name()))
    }

    /// Stops the thread when libpcap gave up on the stream without closing the
    /// pipe (a stream that is not a capture): `spare` is a second handle on the
    /// pipe's read end, drained until the thread has stopped.
    /// Returns why inflating failed, if it did.
    pub fn abandon(mut self, mut spare: io::PipeReader) -> Option<String> {
        self.cancel.store(true, Ordering::SeqCst);
        let mut sink = [0u8; 4096];
        while matches!(spare.read(&mut sink), Ok(n) if n > 0) {}
        self.finish()
    }
}

/// Moves the inflated bytes into the pipe, a chunk at a time.
fn pump(
    mut from: impl Read,
    mut to: io::PipeWriter,
    cancel: &AtomicBool,
    head: &Head,
) -> io::Result<()> {
    let mut chunk = vec![0u8; CHUNK];
    loop {
        if cancel.load(Ordering::SeqCst) {
            return Ok(());
        }
        let n = match from.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        head.saw(&chunk[..n]);
        to.write_all(&chunk[..n])?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_bytes_tell_the_compression() {
        assert_eq!(
            Compression::sniff(&[0x1f, 0x8b, 8, 0]),
            Some(Compression::Gzip)
        );
        assert_eq!(
            Compression::sniff(&[0x28, 0xb5, 0x2f, 0xfd]),
            Some(Compression::Zstd)
        );
        // pcap, pcapng, and too short to tell.
        assert_eq!(Compression::sniff(&[0xd4, 0xc3, 0xb2, 0xa1]), None);
        assert_eq!(Compression::sniff(&[0x0a, 0x0d, 0x0d, 0x0a]), None);
        assert_eq!(Compression::sniff(&[0x28, 0xb5]), None);
        assert_eq!(Compression::sniff(&[]), None);
    }
}
