//! One source over capture files and live interfaces: frames in, classified
//! frames out, numbered across the whole run.

use super::compressed::{Compression, Inflater};
use super::error::{CaptureError, pcap_reason};
use super::frame::{CaptureStats, Frame, FrameClass, FrameCounts, IncompleteDatagram, PcapStats};
use super::link::{Dissected, LinkType, Udp, dissect, dlt_name, reassembled_udp};
use super::mapped::{MapError, MappedFile, Next, OpenError};
use super::piped::{PipedFile, PipedNext, PipedOpenError};
use super::reassembly::{Added, Reassembler, ReassemblyLimits};
use super::{Datagram, Timestamp};
use pcap::{Active, Capture, Offline, Precision};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The default live capture filter on Ethernet: UDP, with or without a VLAN
/// tag. libpcap's `udp` also matches every IPv4 fragment of a UDP datagram (the
/// protocol field is in each) and IPv6 fragments whose fragment header follows
/// the fixed header; IPv6 packets whose first header is an extension header
/// (hop-by-hop 0, routing 43, fragment 44, authentication 51, destination
/// options 60) are kept too, for user space to follow the chain (`ip6
/// protochain` would, but the kernel refuses its loops and libpcap then filters
/// every packet in user space); the same behind a VLAN tag (`vlan` shifts what
/// follows it, so it comes last). The engine recognises each protocol, on any
/// port.
pub const DEFAULT_FILTER: &str = "udp or (ip6 and (ip6[6] == 0 or ip6[6] == 43 or ip6[6] == 44 or ip6[6] == 51 or ip6[6] == 60)) or (vlan and (udp or (ip6 and (ip6[6] == 0 or ip6[6] == 43 or ip6[6] == 44 or ip6[6] == 51 or ip6[6] == 60))))";

/// The default filter on links with no VLAN tags (Linux cooked captures, `-i
/// any`; loopback; raw IP), where libpcap refuses `vlan`.
pub const DEFAULT_FILTER_NO_VLAN: &str = "udp or (ip6 and (ip6[6] == 0 or ip6[6] == 43 or ip6[6] == 44 or ip6[6] == 51 or ip6[6] == 60))";

/// The default live filter for a link type.
pub fn default_filter(link: LinkType) -> &'static str {
    match link {
        LinkType::Ethernet => DEFAULT_FILTER,
        _ => DEFAULT_FILTER_NO_VLAN,
    }
}

/// The default snapshot length: whole frames.
pub const DEFAULT_SNAPLEN: i32 = 262_144;

/// How long libpcap may hold packets back before delivering them, and how long a
/// read waits before the stop flag is checked again.
const READ_TIMEOUT_MS: i32 = 100;

/// The name of standard input in messages.
const STDIN_NAME: &str = "standard input";

/// How to open a live interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveOptions {
    pub interface: String,
    /// A libpcap filter expression; `None` for [`default_filter`] of the
    /// interface's link type.
    pub filter: Option<String>,
    pub snaplen: i32,
    /// The kernel buffer in bytes; libpcap's default when `None`.
    pub buffer_size: Option<i32>,
    /// Deliver each packet as it arrives rather than in blocks of up to
    /// 100 ms. On Linux this switches libpcap to a ring of snaplen-sized slots:
    /// on an interface with a large MTU (`lo`), raise `buffer_size` with it.
    pub immediate: bool,
    pub promiscuous: bool,
    /// Save every captured frame to this pcap file as well.
    pub savefile: Option<PathBuf>,
    /// Rotate the savefile (dumpcap's `-b`).
    pub rotation: super::rotate::Rotation,
}

impl LiveOptions {
    /// The defaults: the link type's [`default_filter`], whole frames, promiscuous mode,
    /// packets in blocks of up to 100 ms (not immediate), no savefile.
    pub fn new(interface: impl Into<String>) -> Self {
        LiveOptions {
            interface: interface.into(),
            filter: None,
            snaplen: DEFAULT_SNAPLEN,
            buffer_size: None,
            immediate: false,
            promiscuous: true,
            savefile: None,
            rotation: Default::default(),
        }
    }
}

/// Stops a source from another thread (a Ctrl-C handler, a timer): the source
/// ends after the frame it is reading, as at the end of a file.
#[derive(Clone)]
pub struct StopHandle {
    flag: Arc<AtomicBool>,
    /// The signal that asked for the stop (0: none).
    signal: Arc<std::sync::atomic::AtomicI32>,
    breaker: Option<Arc<pcap::BreakLoop>>,
}

impl StopHandle {
    pub fn stop(&self) {
        self.flag.store(true, Ordering::SeqCst);
        if let Some(b) = &self.breaker {
            // Wakes a read blocked on a quiet interface.
            b.breakloop();
        }
    }

    /// Stops the source on a signal (SIGINT, SIGTERM, SIGHUP), remembered for
    /// [`Source::interrupted_by`].
    pub fn stop_by_signal(&self, signal: i32) {
        let _ = self
            .signal
            .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
        self.stop();
    }

    pub fn is_stopped(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    fn signal(&self) -> Option<i32> {
        match self.signal.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s),
        }
    }
}

/// How a file's records are read.
enum Reader {
    /// Through libpcap: standard input, pipes, compressed streams, and the
    /// files the mapped reader leaves to it.
    Libpcap {
        /// First: dropping it closes the pipe an inflater writes into.
        cap: Capture<Offline>,
        /// For a compressed file, the thread that inflates it.
        inflater: Option<super::compressed::Inflater>,
    },
    /// A regular file, mapped and parsed in place (`capture::mapped`).
    Mapped(MappedFile),
    /// A pcapng stream (compressed, standard input, a FIFO), parsed as it
    /// comes (`capture::piped`): libpcap refuses one whose interfaces have
    /// different link types.
    Piped {
        /// First: dropping it closes the pipe an inflater writes into.
        file: PipedFile<std::io::PipeReader>,
        inflater: Inflater,
    },
}

/// Which reader [`Source::files_with`] uses for regular files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FileReader {
    /// The zero-copy reader over a memory map for regular pcap and pcapng
    /// files (libpcap for the rest): the default.
    #[default]
    Mapped,
    /// libpcap for every file, as before the mapped reader.
    Libpcap,
}

impl FileReader {
    /// The reader [`Source::files`] uses: [`FileReader::Mapped`], unless the
    /// environment says `LWARSCOPE_READER=libpcap` (to compare both, or to
    /// work around a file the mapped reader refuses).
    pub fn from_env() -> FileReader {
        match std::env::var_os("LWARSCOPE_READER") {
            Some(v) if v == "libpcap" => FileReader::Libpcap,
            _ => FileReader::Mapped,
        }
    }
}

/// The user's capture filter (`-f`), compiled for each link type met in a
/// file (a pcapng file may have several).
struct FileFilter {
    expr: String,
    programs: Vec<(LinkType, pcap::BpfProgram)>,
}

impl FileFilter {
    fn compile(expr: &str, link: LinkType) -> Result<pcap::BpfProgram, CaptureError> {
        let invalid = |e: &pcap::Error| CaptureError::InvalidFilter {
            filter: expr.to_owned(),
            reason: pcap_reason(e),
        };
        Capture::dead(pcap::Linktype(link.dlt()))
            .map_err(|e| invalid(&e))?
            .compile(expr, true)
            .map_err(|e| invalid(&e))
    }

    /// Whether the filter rejects a frame of this link type.
    fn rejects(&mut self, link: LinkType, data: &[u8]) -> Result<bool, CaptureError> {
        if let Some((_, p)) = self.programs.iter().find(|(l, _)| *l == link) {
            return Ok(!p.filter(data));
        }
        let p = Self::compile(&self.expr, link)?;
        let pass = p.filter(data);
        self.programs.push((link, p));
        Ok(!pass)
    }
}

struct OfflineFile {
    reader: Reader,
    name: String,
    /// The link type of the file (of its first interface, for pcapng).
    link: LinkType,
    /// Packets read from this file.
    packets: u64,
    /// The user's capture filter (`-f`): frames it rejects are skipped,
    /// keeping their numbers.
    filter: Option<FileFilter>,
    /// When files are merged by time: this file's next frame, read ahead, and
    /// whether the capture filter rejects it.
    ahead: Option<(Header, bool)>,
    ahead_buf: Vec<u8>,
    /// Capture time of the last frame read from it.
    last_ts: Option<Timestamp>,
}

struct LiveInput {
    cap: Capture<Active>,
    interface: String,
    link: LinkType,
    savefile: Option<super::rotate::RotatingSavefile>,
}

enum Input {
    Files(VecDeque<OfflineFile>),
    Live(LiveInput),
}

/// The header fields of the current frame, and where its bytes are.
#[derive(Debug, Clone, Copy)]
struct Header {
    ts: Timestamp,
    cap_len: u32,
    orig_len: u32,
    link: LinkType,
    at: At,
}

/// Where the current frame's bytes are.
#[derive(Debug, Clone, Copy)]
enum At {
    /// Copied into `Source::buf`.
    Buf,
    /// In the mapped file at the front of the queue: offset and length.
    Map(usize, usize),
}

/// Frames from capture files (in order, as one stream) or a live interface.
///
/// A lending iterator: each [`Frame`] borrows the source until the next call.
/// Reading never allocates on the path of a whole (unfragmented) frame.
pub struct Source {
    input: Input,
    stop: StopHandle,
    max_udp: Option<u64>,
    /// For files: the length of the time window to read from the first frame,
    /// in ns, and the first frame's time once read.
    window: Option<(u64, Option<Timestamp>)>,
    number: u64,
    counts: FrameCounts,
    pcap: Option<PcapStats>,
    reasm: Reassembler,
    /// The current frame, copied out of libpcap's buffer.
    buf: Vec<u8>,
    /// The current reassembled datagram's IP payload, if any.
    reassembled: Vec<u8>,
    finished: bool,
    /// Files whose reading a stop cut short (not the end of the input).
    cut_by_stop: bool,
    /// Files are read in time order across them (mergecap), not one after
    /// the other.
    merge: bool,
    /// What the reader noticed and the user should hear of.
    warnings: Vec<String>,
    /// The file that just ended, and its last frame's time.
    boundary: Option<(String, Timestamp)>,
}

impl Source {
    /// Opens capture files (pcap or pcapng; `-` is standard input), read in order
    /// as one stream. Every file is opened (and checked) now. Regular files
    /// are read in place ([`FileReader::from_env`]), the rest through libpcap.
    pub fn files<P: AsRef<Path>>(paths: &[P]) -> Result<Source, CaptureError> {
        Source::files_with(paths, FileReader::from_env())
    }

    /// [`Source::files`], with regular files read by `reader` (standard
    /// input, pipes and compressed files are always read through libpcap).
    pub fn files_with<P: AsRef<Path>>(
        paths: &[P],
        reader: FileReader,
    ) -> Result<Source, CaptureError> {
        // Streams (a pipe, a FIFO) are read by a thread that a stop ends.
        let stop = Arc::new(AtomicBool::new(false));
        let files = paths
            .iter()
            .map(|p| open_file(p.as_ref(), reader, &stop))
            .collect::<Result<VecDeque<_>, _>>()?;
        let mut source = Source::new(Input::Files(files), None);
        source.stop.flag = stop;
        Ok(source)
    }

    /// Opens a live interface.
    pub fn live(opts: &LiveOptions) -> Result<Source, CaptureError> {
        let mut live = open_live(opts)?;
        let breaker = Arc::new(live.cap.breakloop_handle());
        Ok(Source::new(Input::Live(live), Some(breaker)))
    }

    fn new(input: Input, breaker: Option<Arc<pcap::BreakLoop>>) -> Source {
        let live = matches!(input, Input::Live(_));
        Source {
            input,
            stop: StopHandle {
                flag: Arc::new(AtomicBool::new(false)),
                signal: Arc::new(std::sync::atomic::AtomicI32::new(0)),
                breaker,
            },
            max_udp: None,
            window: None,
            number: 0,
            counts: FrameCounts::default(),
            pcap: live.then(PcapStats::default),
            reasm: Reassembler::new(ReassemblyLimits::default()),
            buf: Vec::with_capacity(2048),
            reassembled: Vec::new(),
            finished: false,
            cut_by_stop: false,
            merge: false,
            warnings: Vec::new(),
            boundary: None,
        }
    }

    /// Reads the files merged by capture time, as mergecap does (a frame of an
    /// earlier file comes first at equal times), rather than one after the other.
    pub fn set_merge(&mut self, merge: bool) {
        self.merge = merge;
    }

    /// What the reader noticed so far that the user should hear of (time going
    /// backwards where one file follows another); taken once.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// Applies a capture filter in libpcap syntax to the files (as `tcpdump -r
    /// FILE EXPR` does): frames it rejects are counted as `filtered` and skipped,
    /// the others keep their numbers in the files. Live captures take their
    /// filter in [`LiveOptions`].
    pub fn set_file_filter(&mut self, expr: &str) -> Result<(), CaptureError> {
        let Input::Files(files) = &mut self.input else {
            return Err(CaptureError::InvalidFilter {
                filter: expr.to_owned(),
                reason: "a live capture takes its filter when it is opened".into(),
            });
        };
        for file in files {
            let bpf = FileFilter::compile(expr, file.link)?;
            file.filter = Some(FileFilter {
                expr: expr.to_owned(),
                programs: vec![(file.link, bpf)],
            });
        }
        Ok(())
    }

    /// Ends the source after `n` UDP datagrams.
    pub fn stop_after_udp(&mut self, n: u64) {
        self.max_udp = Some(n);
    }

    /// Ends the source after `duration`: of wall-clock time from now for a live
    /// capture (a timer thread stops it, so a quiet interface stops too), of
    /// capture time from the first frame for files (the frames of that window).
    pub fn stop_after(&mut self, duration: Duration) {
        if !self.is_live() {
            self.window = Some((duration.as_nanos().min(u128::from(u64::MAX)) as u64, None));
            return;
        }
        let stop = self.stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(duration);
            stop.stop();
        });
    }

    /// Bounds for IP fragment reassembly (the defaults: 1024 datagrams, 16 MiB, 30 s).
    pub fn set_reassembly_limits(&mut self, limits: ReassemblyLimits) {
        self.reasm = Reassembler::new(limits);
    }

    /// A handle that stops the source from another thread.
    pub fn stop_handle(&self) -> StopHandle {
        self.stop.clone()
    }

    pub fn is_live(&self) -> bool {
        matches!(self.input, Input::Live(_))
    }

    /// The signal that cut the reading of files short, before their end: the
    /// results cover only the frames read. A live capture stopped by a signal
    /// is not cut short (Ctrl-C is how it ends), nor are files read to their
    /// end before the signal came.
    pub fn interrupted_by(&self) -> Option<i32> {
        match self.input {
            Input::Live(_) => None,
            _ if self.cut_by_stop => self.stop.signal(),
            _ => None,
        }
    }

    /// The bytes of the files still to read, when every one is a mapped
    /// file (`None` for live captures, standard input, pipes and compressed
    /// files, whose length is not known).
    pub fn input_bytes(&self) -> Option<u64> {
        let Input::Files(files) = &self.input else {
            return None;
        };
        files
            .iter()
            .map(|f| match &f.reader {
                Reader::Mapped(m) => Some(m.len() as u64),
                Reader::Libpcap { .. } | Reader::Piped { .. } => None,
            })
            .sum()
    }

    /// The frame counters so far.
    pub fn counts(&self) -> FrameCounts {
        let mut c = self.counts;
        c.incomplete = self.reasm.given_up();
        c.incomplete_by = self.reasm.given_up_by();
        c.duplicate_fragments = self.reasm.duplicates();
        c
    }

    /// The counters, with libpcap's statistics read now for a live capture.
    pub fn stats(&mut self) -> CaptureStats {
        self.refresh_pcap_stats();
        CaptureStats {
            counts: self.counts(),
            pcap: self.pcap,
        }
    }

    /// The fragmented datagrams given up so far (the first thousand).
    pub fn incomplete(&self) -> &[IncompleteDatagram] {
        self.reasm.records()
    }

    fn refresh_pcap_stats(&mut self) {
        if let Input::Live(live) = &mut self.input
            && let Ok(s) = live.cap.stats()
        {
            self.pcap = Some(PcapStats {
                received: u64::from(s.received),
                dropped_by_kernel: u64::from(s.dropped),
                dropped_by_interface: u64::from(s.if_dropped),
            });
        }
    }

    /// The next frame; `None` at the end of the input, or once stopped. After an
    /// error the source is finished: the frames before it were delivered.
    pub fn next_frame(&mut self) -> Result<Option<Frame<'_>>, CaptureError> {
        if !self.reassembled.is_empty() {
            let data = std::mem::take(&mut self.reassembled);
            self.reasm.recycle(data);
        }
        let header = match self.read() {
            Ok(Some(h)) => h,
            Ok(None) => {
                // A stream ends when a stop closes it: cut short too.
                self.cut_by_stop |= !self.finished && self.stop.is_stopped();
                self.finish()?;
                return Ok(None);
            }
            Err(e) => {
                // The read's error is the one to tell.
                let _ = self.finish();
                return Err(e);
            }
        };
        if let Some((len, first)) = &mut self.window {
            let first = *first.get_or_insert(header.ts);
            if header.ts.since(first) > *len {
                self.finish()?;
                return Ok(None);
            }
        }
        self.number += 1;
        let number = self.number;
        let counts = &mut self.counts;
        counts.frames += 1;
        counts.bytes += u64::from(header.cap_len);
        self.reasm.expire(header.ts);
        let cut = header.cap_len < header.orig_len;
        let lens = (header.orig_len, header.cap_len);
        let data: &[u8] = match (header.at, &self.input) {
            (At::Map(offset, len), Input::Files(files)) => match files.front() {
                Some(OfflineFile {
                    reader: Reader::Mapped(m),
                    ..
                }) => m.bytes(offset, len),
                _ => &[],
            },
            _ => &self.buf,
        };
        let class = match dissect(header.link, data, cut) {
            Dissected::Udp(udp) => classify_udp(udp, number, header.ts, lens),
            Dissected::Fragment(frag) => {
                counts.ip_fragments += 1;
                match self.reasm.add(number, header.ts, &frag) {
                    Added::Held => FrameClass::Fragment,
                    Added::Conflict => FrameClass::Malformed,
                    Added::Complete(data) => {
                        counts.reassembled += 1;
                        self.reassembled = data;
                        match reassembled_udp(&frag.key, &self.reassembled) {
                            Dissected::Udp(udp) => classify_udp(udp, number, header.ts, lens),
                            _ => FrameClass::Malformed,
                        }
                    }
                }
            }
            Dissected::NotUdp => FrameClass::NotUdp,
            Dissected::NotIp => FrameClass::NotIp,
            Dissected::Truncated => FrameClass::Truncated,
            Dissected::Malformed => FrameClass::Malformed,
        };
        count(counts, &class);
        let fragment_frames = match class {
            FrameClass::Udp(_) if !self.reassembled.is_empty() => self.reasm.completed_frames(),
            _ => &[],
        };
        Ok(Some(Frame {
            number,
            ts: header.ts,
            orig_len: header.orig_len,
            cap_len: header.cap_len,
            class,
            data,
            link: header.link,
            fragment_frames,
        }))
    }

    /// Reads the next frame into `buf`.
    fn read(&mut self) -> Result<Option<Header>, CaptureError> {
        loop {
            if self.finished
                || self.stop.is_stopped()
                || self.max_udp.is_some_and(|n| self.counts.udp >= n)
            {
                return Ok(None);
            }
            match &mut self.input {
                Input::Files(files) if self.merge => {
                    let Some(i) = earliest(files)? else {
                        return Ok(None);
                    };
                    let file = &mut files[i];
                    let Some((header, rejected)) = file.ahead.take() else {
                        continue;
                    };
                    file.packets += 1;
                    if rejected {
                        self.number += 1;
                        self.counts.frames += 1;
                        self.counts.filtered += 1;
                        continue;
                    }
                    std::mem::swap(&mut self.buf, &mut file.ahead_buf);
                    return Ok(Some(header));
                }
                Input::Files(files) => {
                    let Some(file) = files.front_mut() else {
                        return Ok(None);
                    };
                    let next = match file.next_record(&mut self.buf, false) {
                        // A stream stopped mid-record: the end, not an error.
                        Err(_) if self.stop.is_stopped() => return Ok(None),
                        next => next?,
                    };
                    match next {
                        Some((_, true)) => {
                            // Numbered as in the file, as Wireshark numbers it.
                            file.packets += 1;
                            self.number += 1;
                            self.counts.frames += 1;
                            self.counts.filtered += 1;
                        }
                        Some((header, false)) => {
                            file.packets += 1;
                            file.last_ts = Some(header.ts);
                            // Where one file follows another, time should not
                            // go backwards: if it does, they overlap.
                            if let Some((previous, end)) = self.boundary.take()
                                && header.ts < end
                            {
                                self.warnings.push(format!(
                                    "{} starts {:.3} s before {previous} ends: read one after the other, time goes backwards there; --merge reads them in time order",
                                    file.name,
                                    end.since(header.ts) as f64 / 1e9
                                ));
                            }
                            return Ok(Some(header));
                        }
                        None => {
                            if let Some(ended) = files.pop_front()
                                && let Some(end) = ended.last_ts
                            {
                                self.boundary = Some((ended.name, end));
                            }
                        }
                    }
                }
                Input::Live(live) => match live.cap.next_packet() {
                    Ok(p) => {
                        if let Some(savefile) = &mut live.savefile {
                            savefile.write(&p);
                        }
                        self.buf.clear();
                        self.buf.extend_from_slice(p.data);
                        let header = header_of(p.header, live.link, At::Buf);
                        if let Some(savefile) = &mut live.savefile
                            && savefile.due()
                        {
                            savefile.next(&live.cap)?;
                        }
                        return Ok(Some(header));
                    }
                    Err(pcap::Error::TimeoutExpired) => {}
                    // pcap_breakloop: a stop.
                    Err(pcap::Error::NoMorePackets) => return Ok(None),
                    Err(e) => {
                        return Err(CaptureError::Live {
                            interface: live.interface.clone(),
                            reason: pcap_reason(&e),
                        });
                    }
                },
            }
        }
    }

    /// The end: incomplete datagrams are given up, statistics read, the
    /// savefile flushed (a write error, such as a full disk, is an error).
    fn finish(&mut self) -> Result<(), CaptureError> {
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        self.reasm.finish();
        self.refresh_pcap_stats();
        if let Input::Live(live) = &mut self.input
            && let Some(savefile) = &mut live.savefile
        {
            savefile.flush()?;
        }
        Ok(())
    }
}

/// Counts a frame under its class.
fn count(counts: &mut FrameCounts, class: &FrameClass<'_>) {
    match class {
        FrameClass::Udp(d) => {
            counts.udp += 1;
            if d.truncated_by_capture() {
                counts.udp_truncated += 1;
            }
        }
        FrameClass::NotUdp => counts.not_udp += 1,
        FrameClass::NotIp => counts.not_ip += 1,
        FrameClass::Fragment => counts.fragment += 1,
        FrameClass::Truncated => counts.truncated += 1,
        FrameClass::Malformed => counts.malformed += 1,
    }
}

/// Classifies one frame on its own: what [`Source`] does with each frame, without
/// IP reassembly (a fragment is [`FrameClass::Fragment`]) and without counters.
/// `cut` says the capture kept less than the frame's length on the wire; a
/// datagram's frame lengths are as [`Framer::frame`](super::Framer::frame) gives them.
///
/// ```
/// use lwarscope::capture::synth::{Link, udp_frame};
/// use lwarscope::capture::{FrameClass, LinkType, Timestamp, classify_frame};
/// use lwarscope::proto::lwar::wire::APP_ID;
/// let bytes = [&APP_ID.to_be_bytes()[..], &[0; 8]].concat();
/// let frame = udp_frame(
///     Link::Ethernet,
///     "10.0.0.1:5000".parse().unwrap(),
///     "10.0.0.2:32422".parse().unwrap(),
///     &bytes,
/// );
/// let class = classify_frame(LinkType::Ethernet, &frame, false, 1, Timestamp(0));
/// assert!(matches!(class, FrameClass::Udp(d) if d.payload == &bytes[..]));
/// ```
pub fn classify_frame(
    link: LinkType,
    data: &[u8],
    cut: bool,
    number: u64,
    ts: Timestamp,
) -> FrameClass<'_> {
    match dissect(link, data, cut) {
        Dissected::Udp(udp) => {
            let lens = super::framer::frame_lens(&udp, data, cut);
            classify_udp(udp, number, ts, lens)
        }
        Dissected::Fragment(_) => FrameClass::Fragment,
        Dissected::NotUdp => FrameClass::NotUdp,
        Dissected::NotIp => FrameClass::NotIp,
        Dissected::Truncated => FrameClass::Truncated,
        Dissected::Malformed => FrameClass::Malformed,
    }
}

/// A UDP datagram, whatever it carries: the engine tells the protocols apart.
/// `lens`: its frame's length on the wire and captured.
fn classify_udp(udp: Udp<'_>, frame: u64, ts: Timestamp, lens: (u32, u32)) -> FrameClass<'_> {
    FrameClass::Udp(Datagram {
        frame_len: lens.0,
        frame_cap_len: lens.1,
        digest: None,
        probes: None,
        frame,
        ts,
        src: SocketAddr::new(udp.src, udp.src_port),
        dst: SocketAddr::new(udp.dst, udp.dst_port),
        payload: udp.payload,
        payload_len: udp.payload_len,
    })
}

// `time_t` and `suseconds_t` are `i64` here, not on every platform.
#[allow(clippy::useless_conversion)]
fn header_of(h: &pcap::PacketHeader, link: LinkType, at: At) -> Header {
    // Every capture is opened with nanosecond precision: `tv_usec` holds nanoseconds.
    Header {
        ts: super::mapped::timestamp(i64::from(h.ts.tv_sec), i64::from(h.ts.tv_usec)),
        cap_len: h.caplen,
        orig_len: h.len,
        link,
        at,
    }
}

/// What a file's reader needs of the file to read its next record: its
/// name and packets so far (for errors), its link type and its capture
/// filter.
struct Reading<'a> {
    name: &'a str,
    packets: u64,
    link: LinkType,
    filter: &'a mut Option<FileFilter>,
}

impl Reading<'_> {
    /// Whether the capture filter rejects a frame of `link`.
    fn rejects(&mut self, link: LinkType, data: &[u8]) -> Result<bool, CaptureError> {
        match self.filter {
            Some(f) => f.rejects(link, data),
            None => Ok(false),
        }
    }

    /// A read error after the packets so far.
    fn read_error(&self, reason: String) -> CaptureError {
        CaptureError::FileRead {
            path: self.name.to_owned(),
            packets: self.packets,
            reason,
        }
    }

    /// The file ends inside a record.
    fn cut_off(&self) -> CaptureError {
        CaptureError::CutOff {
            path: self.name.to_owned(),
            packets: self.packets,
        }
    }

    /// libpcap's next record, copied into `buf` unless the filter rejects it
    /// (copied all the same when `copy`).
    fn libpcap(
        mut self,
        cap: &mut Capture<Offline>,
        inflater: &mut Option<Inflater>,
        buf: &mut Vec<u8>,
        copy: bool,
    ) -> Result<Option<(Header, bool)>, CaptureError> {
        match cap.next_packet() {
            Ok(p) => {
                let header = header_of(p.header, self.link, At::Buf);
                let rejected = self.rejects(self.link, p.data)?;
                if !rejected || copy {
                    buf.clear();
                    buf.extend_from_slice(p.data);
                }
                Ok(Some((header, rejected)))
            }
            Err(pcap::Error::NoMorePackets) => {
                // A compressed stream that ended early may still end at
                // a record boundary.
                match inflater.as_mut().and_then(|i| i.finish()) {
                    Some(why) => Err(self.read_error(why)),
                    None => Ok(None),
                }
            }
            Err(e) => Err(pcap_file_error(
                self.name,
                self.packets,
                inflater.as_mut(),
                &e,
            )),
        }
    }

    /// The mapped file's next record, left in the map unless `copy`.
    fn mapped(
        mut self,
        m: &mut MappedFile,
        buf: &mut Vec<u8>,
        copy: bool,
    ) -> Result<Option<(Header, bool)>, CaptureError> {
        match m.next() {
            // Read from pages the file no longer has: zeros, not the file.
            Ok(Next::Shrunk) => Err(CaptureError::Changed {
                path: self.name.to_owned(),
                packets: self.packets,
                now: match std::fs::metadata(self.name) {
                    Ok(meta) => format!("now {} bytes", meta.len()),
                    Err(_) => "removed".to_owned(),
                },
            }),
            Ok(Next::Packet(r)) => {
                let rejected = self.rejects(r.link, r.data)?;
                let at = if copy {
                    buf.clear();
                    buf.extend_from_slice(r.data);
                    At::Buf
                } else {
                    At::Map(r.offset, r.data.len())
                };
                let header = Header {
                    ts: r.ts,
                    cap_len: r.cap_len,
                    orig_len: r.orig_len,
                    link: r.link,
                    at,
                };
                Ok(Some((header, rejected)))
            }
            Ok(Next::End) => Ok(None),
            Ok(Next::Cut) => Err(self.cut_off()),
            Err(reason) => Err(self.read_error(reason)),
        }
    }

    /// The pcapng stream's next record, read into `buf`.
    fn piped(
        mut self,
        file: &mut PipedFile<std::io::PipeReader>,
        inflater: &mut Inflater,
        buf: &mut Vec<u8>,
    ) -> Result<Option<(Header, bool)>, CaptureError> {
        let next = file.next(buf);
        // A corrupt compressed stream ends the pipe early: the stream's
        // error is the one to tell.
        let stream_error =
            |this: &Self, inflater: &mut Inflater| inflater.finish().map(|r| this.read_error(r));
        match next {
            Ok(PipedNext::Packet(r)) => {
                let rejected = self.rejects(r.link, buf)?;
                let header = Header {
                    ts: r.ts,
                    cap_len: r.cap_len,
                    orig_len: r.orig_len,
                    link: r.link,
                    at: At::Buf,
                };
                Ok(Some((header, rejected)))
            }
            Ok(PipedNext::End) => match stream_error(&self, inflater) {
                Some(e) => Err(e),
                None => Ok(None),
            },
            Ok(PipedNext::Cut) => {
                Err(stream_error(&self, inflater).unwrap_or_else(|| self.cut_off()))
            }
            Err(reason) => {
                Err(stream_error(&self, inflater).unwrap_or_else(|| self.read_error(reason)))
            }
        }
    }
}

impl OfflineFile {
    /// The next record of this file, and whether the capture filter rejects
    /// it; `None` at its end. The frame's bytes are copied into `buf` when
    /// libpcap read it, or when `copy` (frames read ahead); otherwise they
    /// stay in the mapped file.
    fn next_record(
        &mut self,
        buf: &mut Vec<u8>,
        copy: bool,
    ) -> Result<Option<(Header, bool)>, CaptureError> {
        let reading = Reading {
            name: &self.name,
            packets: self.packets,
            link: self.link,
            filter: &mut self.filter,
        };
        match &mut self.reader {
            Reader::Libpcap { cap, inflater } => reading.libpcap(cap, inflater, buf, copy),
            Reader::Mapped(m) => reading.mapped(m, buf, copy),
            Reader::Piped { file, inflater } => reading.piped(file, inflater, buf),
        }
    }
}

/// Reads each file's next frame ahead where it has none, and returns the file
/// whose frame comes first in time (the earlier file at equal times); `None`
/// when every file has ended.
fn earliest(files: &mut VecDeque<OfflineFile>) -> Result<Option<usize>, CaptureError> {
    let mut best: Option<(usize, Timestamp)> = None;
    for (i, file) in files.iter_mut().enumerate() {
        if file.ahead.is_none() {
            let mut buf = std::mem::take(&mut file.ahead_buf);
            let next = file.next_record(&mut buf, true);
            file.ahead_buf = buf;
            match next? {
                Some(ahead) => file.ahead = Some(ahead),
                None => continue,
            }
        }
        if let Some((h, _)) = &file.ahead
            && best.is_none_or(|(_, ts)| h.ts < ts)
        {
            best = Some((i, h.ts));
        }
    }
    Ok(best.map(|(i, _)| i))
}

/// The error of a failed libpcap read in a file: cut off, or another read error.
fn pcap_file_error(
    name: &str,
    packets: u64,
    inflater: Option<&mut Inflater>,
    err: &pcap::Error,
) -> CaptureError {
    // A corrupt compressed stream ends libpcap's input early: the stream's
    // error is the one to tell.
    if let Some(why) = inflater.and_then(|i| i.finish()) {
        return CaptureError::FileRead {
            path: name.to_owned(),
            packets,
            reason: why,
        };
    }
    let reason = pcap_reason(err);
    // libpcap: "truncated dump file; tried to read ..." (pcap) and
    // "truncated pcapng dump file; tried to read ..." (pcapng).
    if reason.contains("truncated") {
        CaptureError::CutOff {
            path: name.to_owned(),
            packets,
        }
    } else {
        CaptureError::FileRead {
            path: name.to_owned(),
            packets,
            reason,
        }
    }
}

fn open_file(
    path: &Path,
    how: FileReader,
    stop: &Arc<AtomicBool>,
) -> Result<OfflineFile, CaptureError> {
    let stdin = path.as_os_str() == "-";
    let name = if stdin {
        STDIN_NAME.to_string()
    } else {
        path.display().to_string()
    };
    let file = |reader, link| OfflineFile {
        reader,
        name: name.clone(),
        link,
        packets: 0,
        filter: None,
        ahead: None,
        ahead_buf: Vec::new(),
        last_ts: None,
    };
    // A FIFO is opened once, by the thread that reads it: opening it here to
    // check it would take its writer's first connection.
    let stream = super::compressed::is_stream(path);
    if !stdin
        && !stream
        && let Some((reader, link)) = open_in_place(path, how, &name)?
    {
        return Ok(file(reader, link));
    }
    let unreadable = |e: std::io::Error| CaptureError::FileUnreadable {
        path: name.clone(),
        reason: e.to_string(),
    };
    let compression = if stream {
        // Read once, by a thread (its first bytes tell the compression).
        Some(Compression::Stream)
    } else if stdin {
        None
    } else {
        Compression::of_file(path).map_err(unreadable)?
    };
    let (cap, inflater) = match compression {
        // libpcap reads `-` as standard input.
        None => (
            Capture::from_file_with_precision(path, Precision::Nano).map_err(|e| {
                CaptureError::NotPcap {
                    path: name.clone(),
                    reason: pcap_reason(&e),
                }
            })?,
            None,
        ),
        Some(c) => match open_compressed(path, c, stop, &name)? {
            Opened::Piped(reader, link) => return Ok(file(reader, link)),
            Opened::Libpcap(cap, inflater) => (cap, Some(inflater)),
        },
    };
    let dlt = cap.get_datalink();
    let link = link_type(dlt, &name)?;
    Ok(file(Reader::Libpcap { cap, inflater }, link))
}

/// A file that is there (not standard input, not a FIFO), checked: missing,
/// unreadable or a directory is an error. A regular file, uncompressed, is
/// read in place when `how` says so (its reader and link type); `None`
/// leaves it to libpcap or to the inflating thread (compressed, or not
/// mappable).
fn open_in_place(
    path: &Path,
    how: FileReader,
    name: &str,
) -> Result<Option<(Reader, LinkType)>, CaptureError> {
    let name = name.to_owned();
    match std::fs::File::open(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(CaptureError::FileNotFound { path: name })
        }
        Err(e) => Err(CaptureError::FileUnreadable {
            path: name,
            reason: e.to_string(),
        }),
        Ok(f) if f.metadata().is_ok_and(|m| m.is_dir()) => Err(CaptureError::FileUnreadable {
            path: name,
            reason: "is a directory".into(),
        }),
        // A regular file, not compressed: read in place.
        Ok(f) if how == FileReader::Mapped && f.metadata().is_ok_and(|m| m.is_file()) => {
            match MappedFile::open(&f) {
                Ok((m, link)) => Ok(Some((Reader::Mapped(m), link))),
                Err(MapError::Open(OpenError::NotPcap(reason)))
                    if Compression::of_file(path).ok().flatten().is_none() =>
                {
                    Err(CaptureError::NotPcap { path: name, reason })
                }
                Err(MapError::Open(OpenError::Unsupported(dlt))) => {
                    Err(CaptureError::UnsupportedLinkType {
                        input: name,
                        linktype: dlt,
                        name: dlt_name(dlt),
                    })
                }
                // Compressed, left to libpcap, or not mappable: below.
                Err(_) => Ok(None),
            }
        }
        Ok(_) => Ok(None),
    }
}

/// A compressed file or a stream, opened through the inflating thread.
enum Opened {
    /// pcapng: parsed here, every interface with its link type.
    Piped(Reader, LinkType),
    /// Classic pcap: libpcap reads the pipe the inflater writes into.
    Libpcap(Capture<Offline>, Inflater),
}

/// Starts the thread that inflates `path` (compressed as `c`, or a stream)
/// and opens what it gives: a pcapng stream by the piped reader, anything
/// else by libpcap.
fn open_compressed(
    path: &Path,
    c: Compression,
    stop: &Arc<AtomicBool>,
    name: &str,
) -> Result<Opened, CaptureError> {
    let unreadable = |e: std::io::Error| CaptureError::FileUnreadable {
        path: name.to_owned(),
        reason: e.to_string(),
    };
    let (reader, inflater) = match c {
        Compression::Stream => Inflater::stream(path, Arc::clone(stop)),
        _ => Inflater::start(path, c),
    }
    .map_err(unreadable)?;
    // pcapng: parsed here, every interface with its link type.
    if inflater.head() == PCAPNG_MAGIC {
        return match PipedFile::open(reader) {
            Ok((f, link)) => Ok(Opened::Piped(Reader::Piped { file: f, inflater }, link)),
            Err(e) => Err(piped_open_error(e, inflater, c, name)),
        };
    }
    let spare = reader.try_clone().map_err(unreadable)?;
    let fd = std::os::fd::IntoRawFd::into_raw_fd(reader);
    // SAFETY: the descriptor is the pipe's read end, which nothing else
    // owns once `reader` gave it up: the capture takes it over.
    match unsafe { Capture::from_raw_fd_with_precision(fd, Precision::Nano) } {
        Ok(cap) => {
            // Only the capture holds the read end now: when it is
            // closed, the inflater stops.
            drop(spare);
            Ok(Opened::Libpcap(cap, inflater))
        }
        Err(e) => {
            if let Some(why) = inflater.abandon(spare) {
                return Err(cut_before_first(name.to_owned(), why));
            }
            let reason = pcap_reason(&e);
            let reason = match c {
                Compression::Stream => reason,
                _ => format!("{reason}, inside {} compression", c.name()),
            };
            Err(CaptureError::NotPcap {
                path: name.to_owned(),
                reason,
            })
        }
    }
}

/// Why a pcapng stream inflated from `c` did not open: its decompression's
/// failure first, else the reader's.
fn piped_open_error(
    e: PipedOpenError,
    mut inflater: Inflater,
    c: Compression,
    name: &str,
) -> CaptureError {
    let name = name.to_owned();
    let why = inflater.finish();
    let in_compression = |reason: String| match c {
        Compression::Stream => reason,
        _ => format!("{reason}, inside {} compression", c.name()),
    };
    match (e, why) {
        (_, Some(why)) => cut_before_first(name, why),
        (PipedOpenError::Open(OpenError::Unsupported(dlt)), None) => {
            CaptureError::UnsupportedLinkType {
                input: name,
                linktype: dlt,
                name: dlt_name(dlt),
            }
        }
        (PipedOpenError::Open(OpenError::NotPcap(reason)), None) => CaptureError::NotPcap {
            path: name,
            reason: in_compression(reason),
        },
        (PipedOpenError::Open(OpenError::UseLibpcap), None) => CaptureError::NotPcap {
            path: name,
            reason: in_compression("unknown file format".to_owned()),
        },
        (PipedOpenError::Io(e), None) => CaptureError::FileUnreadable {
            path: name,
            reason: e.to_string(),
        },
    }
}

/// A compressed file (or stream) whose decompression failed before it gave
/// the capture's first bytes: cut off (or damaged) inside its first block. It
/// is a capture cut short, as a compressed capture cut later is ("read error
/// after N packets"), not a file of another kind: zstd and deflate decode a
/// block whole (zstd's up to 128 KiB), so a cut inside the first leaves
/// nothing before it to analyse.
fn cut_before_first(path: String, why: String) -> CaptureError {
    CaptureError::FileRead {
        path,
        packets: 0,
        reason: format!(
            "{why} (cut off or damaged inside its first compressed block: nothing before the cut can be decoded)"
        ),
    }
}

/// The first bytes of a pcapng file (a section header block's type).
const PCAPNG_MAGIC: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];

fn link_type(dlt: pcap::Linktype, input: &str) -> Result<LinkType, CaptureError> {
    LinkType::from_dlt(dlt.0).ok_or_else(|| CaptureError::UnsupportedLinkType {
        input: input.to_string(),
        linktype: dlt.0,
        name: dlt_name(dlt.0),
    })
}

/// An interface lwarscope can capture on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface {
    pub name: String,
    pub description: Option<String>,
    pub loopback: bool,
    pub up: bool,
    pub running: bool,
}

/// The interfaces libpcap can capture on, as `tcpdump -D` lists them.
pub fn list_interfaces() -> Result<Vec<Interface>, CaptureError> {
    let devices = pcap::Device::list().map_err(|e| CaptureError::Live {
        interface: "(listing interfaces)".into(),
        reason: pcap_reason(&e),
    })?;
    Ok(devices
        .into_iter()
        .map(|d| Interface {
            loopback: d.flags.is_loopback(),
            up: d.flags.is_up(),
            running: d.flags.is_running(),
            name: d.name,
            description: d.desc,
        })
        .collect())
}

fn open_live(opts: &LiveOptions) -> Result<LiveInput, CaptureError> {
    let name = opts.interface.as_str();
    let names: Vec<String> = list_interfaces()
        .map(|l| l.into_iter().map(|i| i.name).collect())
        .unwrap_or_default();
    let unknown = || CaptureError::UnknownInterface {
        interface: name.to_string(),
        available: names.clone(),
    };
    if !names.is_empty() && !names.iter().any(|n| n == name) {
        return Err(unknown());
    }
    let live_err = |e: &pcap::Error| {
        let reason = pcap_reason(e);
        let lower = reason.to_lowercase();
        if lower.contains("permission") || lower.contains("not permitted") {
            CaptureError::PermissionDenied {
                interface: name.to_string(),
                binary: std::env::current_exe()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|_| "<binary>".into()),
            }
        } else if lower.contains("no such device") {
            unknown()
        } else {
            CaptureError::Live {
                interface: name.to_string(),
                reason,
            }
        }
    };
    let mut inactive = Capture::from_device(name)
        .map_err(|e| live_err(&e))?
        .snaplen(opts.snaplen)
        // The "any" device has no promiscuous mode, and libpcap's warning would
        // fail the activation.
        .promisc(opts.promiscuous && name != "any")
        .immediate_mode(opts.immediate)
        .timeout(READ_TIMEOUT_MS)
        .precision(Precision::Nano);
    if let Some(size) = opts.buffer_size {
        inactive = inactive.buffer_size(size);
    }
    let mut cap = inactive.open().map_err(|e| live_err(&e))?;
    let link = link_type(cap.get_datalink(), name)?;
    let filter = opts.filter.as_deref().unwrap_or(default_filter(link));
    cap.filter(filter, true)
        .map_err(|e| CaptureError::InvalidFilter {
            filter: filter.to_owned(),
            reason: pcap_reason(&e),
        })?;
    let savefile = match &opts.savefile {
        Some(path) => Some(super::rotate::RotatingSavefile::open(
            &cap,
            path,
            opts.rotation,
            opts.snaplen,
        )?),
        None => None,
    };
    Ok(LiveInput {
        cap,
        interface: name.to_string(),
        link,
        savefile,
    })
}
