//! Capture files read in place: classic pcap (both byte orders, micro- and
//! nanosecond timestamps) and pcapng (every section, each interface with its
//! own link type, time stamp resolution and offset), parsed over a memory
//! map of the file with no copy and no allocation per packet.
//!
//! What it hands over is what libpcap hands over for the same file (opened
//! with nanosecond precision): the same frames, timestamps, captured and
//! original lengths, the same snapshot-length rules (a classic pcap record
//! longer than the file's snapshot length is cut to it, a pcapng one is an
//! error) and the same "cut off" at a record that ends early;
//! `tests/capture/readers.rs` compares both over every capture of the
//! corpus. Where libpcap gives up, it reads on: a pcapng file whose
//! interfaces have different link types (Ethernet, raw IP, Linux cooked
//! captures...), or whose sections change byte order. Files it does not
//! know how to read exactly as libpcap does (pcap versions before 2.4,
//! Kuznetzov's modified pcap) are left to libpcap.
//!
//! Parsing is over a byte slice and a position: nothing here can panic on
//! any bytes (every length is checked before it is used, arithmetic on
//! values from the file wraps or saturates as libpcap's C does), and every
//! error names what is wrong and at which byte offset.

use super::Timestamp;
use super::link::LinkType;

/// The largest captured length libpcap accepts for the link types lwarscope
/// reads (`MAXIMUM_SNAPLEN`); a larger record is corrupt.
pub(crate) const MAX_SNAPLEN: u32 = 262_144;

/// The largest pcapng block libpcap accepts (`INITIAL_MAX_BLOCKSIZE`).
const MAX_BLOCK: u32 = 16 * 1024 * 1024;

/// The largest section header block libpcap accepts (`BT_SHB_INSANE_MAX`).
const MAX_SHB: u32 = 1024 * 1024;

const PCAP_MICRO: u32 = 0xa1b2_c3d4;
const PCAP_NANO: u32 = 0xa1b2_3c4d;
const PCAP_KUZNETZOV: u32 = 0xa1b2_cd34;
const BT_SHB: u32 = 0x0a0d_0d0a;
const BT_IDB: u32 = 1;
const BT_PB: u32 = 2;
const BT_SPB: u32 = 3;
const BT_EPB: u32 = 6;
const BYTE_ORDER_MAGIC: u32 = 0x1a2b_3c4d;

/// One packet record, borrowed from the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Record<'a> {
    pub ts: Timestamp,
    pub cap_len: u32,
    pub orig_len: u32,
    pub link: LinkType,
    pub data: &'a [u8],
    /// Where `data` starts in the file.
    pub offset: usize,
}

/// What the next read found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next<'a> {
    Packet(Record<'a>),
    /// The end of the file, at a record boundary.
    End,
    /// The file ends inside a record (or block): what libpcap calls a
    /// truncated dump file.
    Cut,
    /// The file shrank while it was read (`MappedFile` only): what was read
    /// from its lost pages were zeros (`capture::shrink`).
    Shrunk,
}

/// Why a file cannot be read from the start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OpenError {
    /// Not a capture file lwarscope reads (the reason, for users).
    NotPcap(String),
    /// Its (first) link type is not one lwarscope reads: the DLT.
    Unsupported(i32),
    /// A capture, but one libpcap reads more faithfully: use it.
    UseLibpcap,
}

/// Which byte order the file (or section) was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    Little,
    Big,
}

impl Order {
    fn u16(self, b: [u8; 2]) -> u16 {
        match self {
            Order::Little => u16::from_le_bytes(b),
            Order::Big => u16::from_be_bytes(b),
        }
    }

    fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            Order::Little => u32::from_le_bytes(b),
            Order::Big => u32::from_be_bytes(b),
        }
    }

    fn u64(self, b: [u8; 8]) -> u64 {
        match self {
            Order::Little => u64::from_le_bytes(b),
            Order::Big => u64::from_be_bytes(b),
        }
    }
}

/// `N` bytes at `at`, if the slice holds them.
fn bytes<const N: usize>(data: &[u8], at: usize) -> Option<[u8; N]> {
    let end = at.checked_add(N)?;
    data.get(at..end)?.try_into().ok()
}

/// A time stamp as libpcap hands it over (`tv_sec`, and `tv_usec` holding
/// nanoseconds), made a [`Timestamp`] as `Source` always did: a negative part
/// counts as zero.
pub(crate) fn timestamp(secs: i64, nanos: i64) -> Timestamp {
    let secs = u64::try_from(secs).unwrap_or(0);
    let nanos = u64::try_from(nanos).unwrap_or(0);
    Timestamp(secs.saturating_mul(1_000_000_000).saturating_add(nanos))
}

/// How a link type read from a file maps to lwarscope's, as libpcap maps
/// LINKTYPE_ values to DLT_ values (the upper bits of a classic pcap header's
/// field carry FCS information, not the type).
fn link_of(linktype: u32) -> Result<LinkType, i32> {
    let lt = (linktype & 0x03ff_ffff) as i32;
    LinkType::from_dlt(lt).ok_or(lt)
}

/// A classic pcap file's parameters.
#[derive(Debug, Clone, Copy)]
struct Pcap {
    order: Order,
    nanos: bool,
    /// The file's snapshot length, as libpcap adjusts it.
    snapshot: u32,
    link: LinkType,
}

/// A pcapng interface.
#[derive(Debug, Clone, Copy)]
struct Iface {
    link: Result<LinkType, i32>,
    snapshot: u32,
    /// Time stamp units per second.
    tsresol: u64,
    binary: bool,
    tsoffset: i64,
}

/// The reader's state for a pcapng file: the current section.
#[derive(Debug, Clone)]
struct Ng {
    order: Order,
    ifaces: Vec<Iface>,
}

#[derive(Debug, Clone)]
enum Format {
    Pcap(Pcap),
    Ng(Ng),
}

/// Reads records from the bytes of a whole capture file, front to back, or
/// from a window on them that moves forward ([`Parser::discard`]: a stream).
#[derive(Debug, Clone)]
pub(crate) struct Parser {
    format: Format,
    /// The offset of the next record or block.
    pos: usize,
    /// The offset in the file of the first byte of the data `next` is given.
    base: usize,
}

impl Parser {
    /// Checks the file header (and, for pcapng, finds the first interface)
    /// and returns the parser and the first link type.
    pub fn open(data: &[u8]) -> Result<(Parser, LinkType), OpenError> {
        let Some(magic) = bytes::<4>(data, 0) else {
            return Err(OpenError::NotPcap(match data.len() {
                0 => "the file is empty".to_owned(),
                n => format!("{n} bytes, too short for a capture file header"),
            }));
        };
        if u32::from_le_bytes(magic) == BT_SHB {
            return open_ng(data);
        }
        let (order, magic) = match (u32::from_le_bytes(magic), u32::from_be_bytes(magic)) {
            (m @ (PCAP_MICRO | PCAP_NANO | PCAP_KUZNETZOV), _) => (Order::Little, m),
            (_, m @ (PCAP_MICRO | PCAP_NANO | PCAP_KUZNETZOV)) => (Order::Big, m),
            _ => return Err(OpenError::NotPcap("unknown file format".to_owned())),
        };
        if magic == PCAP_KUZNETZOV {
            return Err(OpenError::UseLibpcap);
        }
        let Some(header) = bytes::<24>(data, 0) else {
            return Err(OpenError::NotPcap(format!(
                "the pcap file header is cut off: 24 bytes needed, {} present",
                data.len()
            )));
        };
        let field =
            |at: usize| order.u32([header[at], header[at + 1], header[at + 2], header[at + 3]]);
        let major = order.u16([header[4], header[5]]);
        let minor = order.u16([header[6], header[7]]);
        // Older versions swap the length fields, which libpcap undoes by guesswork.
        if (major, minor) != (2, 4) {
            return Err(OpenError::UseLibpcap);
        }
        let snaplen = field(16);
        let link = link_of(field(20)).map_err(OpenError::Unsupported)?;
        let snapshot = match snaplen {
            0 => MAX_SNAPLEN,
            s if s > MAX_SNAPLEN => MAX_SNAPLEN,
            s => s,
        };
        Ok((
            Parser {
                format: Format::Pcap(Pcap {
                    order,
                    nanos: magic == PCAP_NANO,
                    snapshot,
                    link,
                }),
                pos: 24,
                base: 0,
            },
            link,
        ))
    }

    /// The offset of the next record or block.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The offset in the file of the first byte `next` is to be given.
    pub fn base(&self) -> usize {
        self.base
    }

    /// The first `n` bytes of the window are gone: `next` is given the data
    /// from `base() + n` on. `n` is at most `position() - base()`.
    pub fn discard(&mut self, n: usize) {
        debug_assert!(self.base + n <= self.pos);
        self.base += n;
    }

    /// The next packet, the end, or a cut; an error says what is wrong at
    /// which offset (of the file). `data` holds the file's bytes from
    /// `base()` on. After an error or a cut the parser stays where it was.
    pub fn next<'a>(&mut self, data: &'a [u8]) -> Result<Next<'a>, String> {
        let base = self.base;
        match &mut self.format {
            Format::Pcap(p) => {
                let p = *p;
                next_pcap(&p, data, base, &mut self.pos)
            }
            Format::Ng(ng) => next_ng(ng, data, base, &mut self.pos),
        }
    }
}

/// The bytes of `data` (which starts at `base` in the file) from offset `at`.
fn from(data: &[u8], base: usize, at: usize) -> &[u8] {
    at.checked_sub(base)
        .and_then(|i| data.get(i..))
        .unwrap_or_default()
}

fn next_pcap<'a>(
    p: &Pcap,
    data: &'a [u8],
    base: usize,
    pos: &mut usize,
) -> Result<Next<'a>, String> {
    let at = *pos;
    let rest = from(data, base, at);
    if rest.is_empty() {
        return Ok(Next::End);
    }
    let Some(h) = bytes::<16>(rest, 0) else {
        return Ok(Next::Cut);
    };
    let word = |i: usize| p.order.u32([h[i], h[i + 1], h[i + 2], h[i + 3]]);
    let (secs, frac, caplen, len) = (word(0), word(4), word(8), word(12));
    if caplen > MAX_SNAPLEN {
        return Err(format!(
            "the record at byte {at} claims {caplen} captured bytes, more than the largest record libpcap accepts ({MAX_SNAPLEN})"
        ));
    }
    let Some(body) = rest.get(16..16 + caplen as usize) else {
        return Ok(Next::Cut);
    };
    // libpcap keeps the first `snapshot` bytes of a longer record.
    let kept = caplen.min(p.snapshot);
    let frac = i64::from(frac as i32);
    *pos = at + 16 + caplen as usize;
    Ok(Next::Packet(Record {
        ts: timestamp(
            i64::from(secs as i32),
            if p.nanos { frac } else { frac * 1000 },
        ),
        cap_len: kept,
        orig_len: len,
        link: p.link,
        data: &body[..kept as usize],
        offset: at + 16,
    }))
}

/// A pcapng block: its type, where it starts, and its body (between the
/// length and the trailer).
struct Block<'a> {
    kind: u32,
    at: usize,
    body: &'a [u8],
}

/// The block at `at` (of the file; `data` starts at `base`); `Ok(None)` at
/// the end of the file, `Err(None)` when the file ends inside it,
/// `Err(Some(why))` when it is malformed. `order` is the section's byte
/// order; a section header block carries its own.
fn block(
    data: &[u8],
    base: usize,
    at: usize,
    order: Order,
) -> Result<Option<(Block<'_>, Order)>, Option<String>> {
    let rest = from(data, base, at);
    if rest.is_empty() {
        return Ok(None);
    }
    let Some(head) = bytes::<8>(rest, 0) else {
        return Err(None);
    };
    let kind_bytes = [head[0], head[1], head[2], head[3]];
    let mut order = order;
    if u32::from_le_bytes(kind_bytes) == BT_SHB {
        // A new section may change the byte order: its magic tells.
        match bytes::<4>(rest, 8) {
            None => return Err(None),
            Some(m) if u32::from_le_bytes(m) == BYTE_ORDER_MAGIC => order = Order::Little,
            Some(m) if u32::from_be_bytes(m) == BYTE_ORDER_MAGIC => order = Order::Big,
            Some(_) => {
                return Err(Some(format!(
                    "the section header block at byte {at} has a bad byte-order magic"
                )));
            }
        }
    }
    let kind = order.u32(kind_bytes);
    let len = order.u32([head[4], head[5], head[6], head[7]]);
    if len < 12 {
        return Err(Some(format!(
            "the block at byte {at} has a length of {len}, less than 12"
        )));
    }
    if !len.is_multiple_of(4) {
        return Err(Some(format!(
            "the block at byte {at} has a length of {len}, not a multiple of 4"
        )));
    }
    let max = if kind == BT_SHB { MAX_SHB } else { MAX_BLOCK };
    if len > max {
        return Err(Some(format!(
            "the block at byte {at} claims {len} bytes, more than the largest block libpcap accepts ({max})"
        )));
    }
    let Some(whole) = rest.get(..len as usize) else {
        return Err(None);
    };
    let n = whole.len();
    let trailer = order.u32([whole[n - 4], whole[n - 3], whole[n - 2], whole[n - 1]]);
    if trailer != len {
        return Err(Some(format!(
            "the block at byte {at} has a length of {len} in its header and {trailer} in its trailer"
        )));
    }
    Ok(Some((
        Block {
            kind,
            at,
            body: &whole[8..n - 4],
        },
        order,
    )))
}

impl Block<'_> {
    fn too_short(&self) -> String {
        format!(
            "the block of type {} at byte {} is too short for its content",
            self.kind, self.at
        )
    }

    /// `N` bytes of the body at `at`.
    fn field<const N: usize>(&self, at: usize) -> Result<[u8; N], String> {
        bytes::<N>(self.body, at).ok_or_else(|| self.too_short())
    }
}

fn open_ng(data: &[u8]) -> Result<(Parser, LinkType), OpenError> {
    // What libpcap needs to call it pcapng: the length and the byte-order magic.
    let order = match bytes::<4>(data, 8) {
        Some(m) if u32::from_le_bytes(m) == BYTE_ORDER_MAGIC => Order::Little,
        Some(m) if u32::from_be_bytes(m) == BYTE_ORDER_MAGIC => Order::Big,
        _ => return Err(OpenError::NotPcap("unknown file format".to_owned())),
    };
    let shb = match block(data, 0, 0, order) {
        Ok(Some((b, _))) => b,
        Ok(None) | Err(None) => {
            return Err(OpenError::NotPcap(
                "the pcapng section header block is cut off".to_owned(),
            ));
        }
        Err(Some(why)) => return Err(OpenError::NotPcap(why)),
    };
    let mut ng = Ng {
        order,
        ifaces: Vec::new(),
    };
    section(&mut ng, &shb, order, true).map_err(OpenError::NotPcap)?;
    // The first interface gives the file's link type (for a capture filter);
    // packets before any interface, or no interface at all, are errors, as
    // libpcap has them.
    let mut at = shb.body.len() + 12;
    let mut scan = ng.clone();
    let first = loop {
        let (b, o) = match block(data, 0, at, scan.order) {
            Ok(Some(b)) => b,
            Ok(None) => {
                return Err(OpenError::NotPcap(
                    "the capture file has no interface description blocks".to_owned(),
                ));
            }
            Err(None) => {
                return Err(OpenError::NotPcap(format!(
                    "the file is cut off in the block at byte {at}, before any interface description block"
                )));
            }
            Err(Some(why)) => return Err(OpenError::NotPcap(why)),
        };
        match b.kind {
            BT_IDB => break interface(&b, scan.order).map_err(OpenError::NotPcap)?,
            BT_EPB | BT_SPB | BT_PB => {
                return Err(OpenError::NotPcap(format!(
                    "the packet block at byte {at} comes before any interface description block"
                )));
            }
            BT_SHB => {
                section(&mut scan, &b, o, false).map_err(OpenError::NotPcap)?;
            }
            _ => {}
        }
        at += b.body.len() + 12;
    };
    let link = first.link.map_err(OpenError::Unsupported)?;
    Ok((
        Parser {
            format: Format::Ng(ng),
            pos: shb.body.len() + 12,
            base: 0,
        },
        link,
    ))
}

/// Starts a section: its byte order, its version, no interfaces yet.
fn section(ng: &mut Ng, b: &Block<'_>, order: Order, first: bool) -> Result<(), String> {
    let version = b.field::<4>(4)?;
    let (major, minor) = (
        order.u16([version[0], version[1]]),
        order.u16([version[2], version[3]]),
    );
    // libpcap checks the minor version of the first section only.
    if major != 1 || (first && !(minor == 0 || minor == 2)) {
        return Err(format!(
            "the section at byte {} has pcapng version {major}.{minor}; versions 1.0 and 1.2 are read",
            b.at
        ));
    }
    ng.order = order;
    ng.ifaces.clear();
    Ok(())
}

/// An interface description block: link type, snapshot length, and the time
/// stamp options (`if_tsresol`, `if_tsoffset`), checked as libpcap checks them.
fn interface(b: &Block<'_>, order: Order) -> Result<Iface, String> {
    let fixed = b.field::<8>(0)?;
    let linktype = order.u16([fixed[0], fixed[1]]);
    let snaplen = order.u32([fixed[4], fixed[5], fixed[6], fixed[7]]);
    let mut iface = Iface {
        link: link_of(u32::from(linktype)),
        snapshot: if snaplen == 0 || snaplen > MAX_SNAPLEN {
            MAX_SNAPLEN
        } else {
            snaplen
        },
        tsresol: 1_000_000,
        binary: false,
        tsoffset: 0,
    };
    let (mut saw_resol, mut saw_offset) = (false, false);
    let mut at = 8;
    let bad = |what: String| format!("the interface description block at byte {}: {what}", b.at);
    while at < b.body.len() {
        let head = b.field::<4>(at)?;
        let code = order.u16([head[0], head[1]]);
        let len = order.u16([head[2], head[3]]);
        let value = at + 4;
        let padded = usize::from(len).div_ceil(4) * 4;
        if b.body.len() - value < padded {
            return Err(b.too_short());
        }
        match code {
            0 if len != 0 => return Err(bad(format!("opt_endofopt has length {len}"))),
            0 => break,
            9 => {
                if len != 1 {
                    return Err(bad(format!("if_tsresol has length {len}, not 1")));
                }
                if saw_resol {
                    return Err(bad("more than one if_tsresol".to_owned()));
                }
                saw_resol = true;
                let r = b.body[value];
                if r & 0x80 != 0 {
                    let shift = r & 0x7f;
                    if shift > 63 {
                        return Err(bad(format!("if_tsresol 2^-{shift} is too fine")));
                    }
                    iface.binary = true;
                    iface.tsresol = 1u64 << shift;
                } else {
                    if r > 19 {
                        return Err(bad(format!("if_tsresol 10^-{r} is too fine")));
                    }
                    iface.binary = false;
                    iface.tsresol = 10u64.pow(u32::from(r));
                }
            }
            14 => {
                if len != 8 {
                    return Err(bad(format!("if_tsoffset has length {len}, not 8")));
                }
                if saw_offset {
                    return Err(bad("more than one if_tsoffset".to_owned()));
                }
                saw_offset = true;
                iface.tsoffset = order.u64(b.field::<8>(value)?) as i64;
            }
            _ => {}
        }
        at = value + padded;
    }
    Ok(iface)
}

fn next_ng<'a>(
    ng: &mut Ng,
    data: &'a [u8],
    base: usize,
    pos: &mut usize,
) -> Result<Next<'a>, String> {
    loop {
        let (b, order) = match block(data, base, *pos, ng.order) {
            Ok(Some(b)) => b,
            Ok(None) => return Ok(Next::End),
            Err(None) => return Ok(Next::Cut),
            Err(Some(why)) => return Err(why),
        };
        let next = b.at + b.body.len() + 12;
        let o = ng.order;
        let word = |f: [u8; 4]| o.u32(f);
        let (iface, ts, caplen, len, start) = match b.kind {
            BT_EPB => {
                let f = b.field::<20>(0)?;
                let w = |i: usize| word([f[i], f[i + 1], f[i + 2], f[i + 3]]);
                let ts = u64::from(w(4)) << 32 | u64::from(w(8));
                (w(0), ts, w(12), w(16), 20)
            }
            BT_PB => {
                let f = b.field::<20>(0)?;
                let w = |i: usize| word([f[i], f[i + 1], f[i + 2], f[i + 3]]);
                let ts = u64::from(w(4)) << 32 | u64::from(w(8));
                (u32::from(o.u16([f[0], f[1]])), ts, w(12), w(16), 20)
            }
            BT_SPB => {
                let len = word(b.field::<4>(0)?);
                let snapshot = ng.ifaces.first().map_or(MAX_SNAPLEN, |i| i.snapshot);
                (0, 0, len.min(snapshot), len, 4)
            }
            BT_IDB => {
                let iface = interface(&b, o)?;
                ng.ifaces.push(iface);
                *pos = next;
                continue;
            }
            BT_SHB => {
                section(ng, &b, order, false)?;
                *pos = next;
                continue;
            }
            _ => {
                *pos = next;
                continue;
            }
        };
        let Some(i) = ng.ifaces.get(iface as usize) else {
            return Err(format!(
                "the packet block at byte {} names interface {iface}, which its section does not describe",
                b.at
            ));
        };
        let link = match i.link {
            Ok(l) => l,
            Err(dlt) => {
                return Err(format!(
                    "the packet block at byte {} is on interface {iface}, whose link type {dlt} ({}) lwarscope does not read",
                    b.at,
                    super::link::dlt_name(dlt)
                ));
            }
        };
        if caplen > i.snapshot {
            return Err(format!(
                "the packet block at byte {} claims {caplen} captured bytes, more than its interface's snapshot length ({})",
                b.at, i.snapshot
            ));
        }
        let Some(packet) = b.body.get(start..start + caplen as usize) else {
            return Err(b.too_short());
        };
        *pos = next;
        return Ok(Next::Packet(Record {
            ts: ng_timestamp(i, ts),
            cap_len: caplen,
            orig_len: len,
            link,
            data: packet,
            offset: b.at + 8 + start,
        }));
    }
}

/// A pcapng time stamp in nanoseconds, computed as libpcap does (with its
/// wrapping arithmetic on absurd values).
fn ng_timestamp(i: &Iface, t: u64) -> Timestamp {
    const NS: u64 = 1_000_000_000;
    let secs = (t / i.tsresol).wrapping_add(i.tsoffset as u64);
    let frac = t % i.tsresol;
    let frac = match i.tsresol {
        NS => frac,
        r if i.binary => frac.wrapping_mul(NS) / r,
        r if r > NS => frac / (r / NS),
        r => frac.wrapping_mul(NS / r),
    };
    // libpcap stores them in a time_t and an int.
    timestamp(secs as i64, i64::from(frac as i32))
}

/// Bytes of the file handed back to the kernel at a time: what is read stays
/// out of the process's resident memory, which stays flat on any file size.
const RELEASE: usize = 4 << 20;

/// A capture file mapped into memory, read front to back.
pub(crate) struct MappedFile {
    /// First, so that it is dropped before the map is unmapped.
    watch: super::shrink::Watch,
    map: memmap2::Mmap,
    parser: Parser,
    /// Bytes before this offset were handed back (`MADV_DONTNEED`).
    released: usize,
    /// Bytes before this offset were mapped in ahead (`MADV_POPULATE_READ`).
    populated: usize,
}

impl MappedFile {
    /// Maps `file` (a regular file) and checks its header; the first link type.
    pub fn open(file: &std::fs::File) -> Result<(MappedFile, LinkType), MapError> {
        // SAFETY: the map is read only, and only through `&[u8]` slices that
        // the parser bounds-checks. Another process truncating the file while
        // it is read makes the kernel raise SIGBUS on the lost pages: the
        // watch (`capture::shrink`) replaces them with zeros and the reader
        // stops at the next record with `CaptureError::Changed`.
        let map = unsafe { memmap2::Mmap::map(file) }.map_err(|_| MapError::Io)?;
        let watch = super::shrink::Watch::new(map.as_ptr(), map.len());
        let _ = map.advise(memmap2::Advice::Sequential);
        let (parser, link) = Parser::open(&map).map_err(MapError::Open)?;
        Ok((
            MappedFile {
                watch,
                map,
                parser,
                released: 0,
                populated: 0,
            },
            link,
        ))
    }

    /// The next record. A record's `data` stays valid as long as the file.
    pub fn next(&mut self) -> Result<Next<'_>, String> {
        let pos = self.parser.position();
        if pos - self.released.min(pos) >= RELEASE {
            let upto = pos & !(RELEASE - 1);
            // SAFETY: DONTNEED on a read-only file mapping only drops the
            // pages from this process: touching them again reads them back
            // from the file, so no slice handed out is invalidated.
            let _ = unsafe {
                self.map.unchecked_advise_range(
                    memmap2::UncheckedAdvice::DontNeed,
                    self.released,
                    upto - self.released,
                )
            };
            self.released = upto;
        }
        if pos >= self.populated {
            // The next chunk's pages in one call rather than a page fault per
            // 64 KiB (kernels before 5.14 refuse it: the faults then do it).
            let start = pos & !(RELEASE - 1);
            let len = RELEASE.min(self.map.len() - start);
            let _ = self
                .map
                .advise_range(memmap2::Advice::PopulateRead, start, len);
            self.populated = start + RELEASE;
        }
        let next = self.parser.next(&self.map);
        // The record's header was read now, its data by the caller after the
        // previous call: a page lost in either is caught here.
        if self.watch.shrunk() {
            return Ok(Next::Shrunk);
        }
        next
    }

    /// The file's length.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// The bytes at `offset..offset + len` (a record's data), empty if out of range.
    pub fn bytes(&self, offset: usize, len: usize) -> &[u8] {
        offset
            .checked_add(len)
            .and_then(|end| self.map.get(offset..end))
            .unwrap_or_default()
    }
}

/// Why a file cannot be mapped and read.
#[derive(Debug)]
pub(crate) enum MapError {
    /// Not mappable (the caller reads it another way).
    Io,
    Open(OpenError),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pcap_header(order: Order, magic: u32, snaplen: u32, link: u32) -> Vec<u8> {
        let mut v = Vec::new();
        let w32 = |v: &mut Vec<u8>, x: u32| match order {
            Order::Little => v.extend_from_slice(&x.to_le_bytes()),
            Order::Big => v.extend_from_slice(&x.to_be_bytes()),
        };
        w32(&mut v, magic);
        match order {
            Order::Little => {
                v.extend_from_slice(&2u16.to_le_bytes());
                v.extend_from_slice(&4u16.to_le_bytes());
            }
            Order::Big => {
                v.extend_from_slice(&2u16.to_be_bytes());
                v.extend_from_slice(&4u16.to_be_bytes());
            }
        }
        w32(&mut v, 0);
        w32(&mut v, 0);
        w32(&mut v, snaplen);
        w32(&mut v, link);
        v
    }

    fn record(order: Order, secs: u32, frac: u32, caplen: u32, len: u32, data: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        for x in [secs, frac, caplen, len] {
            match order {
                Order::Little => v.extend_from_slice(&x.to_le_bytes()),
                Order::Big => v.extend_from_slice(&x.to_be_bytes()),
            }
        }
        v.extend_from_slice(data);
        v
    }

    /// A file truncated by another process while it is mapped: the pages past
    /// its new end raise SIGBUS, which `capture::shrink` turns into zeros and
    /// `Next::Shrunk` at the next record, not the death of the process.
    #[test]
    fn a_file_truncated_while_mapped_is_shrunk_not_a_crash() {
        let mut bytes = pcap_header(Order::Little, 0xa1b2_c3d4, 65535, 1);
        let data = [0x5a; 1000];
        // About 1 MiB of records: many pages beyond the cut.
        for i in 0..1000 {
            bytes.extend(record(Order::Little, i, 0, 1000, 1000, &data));
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ring.pcap");
        std::fs::write(&path, &bytes).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let (mut m, _) = MappedFile::open(&file).unwrap();
        for _ in 0..10 {
            assert!(matches!(m.next(), Ok(Next::Packet(r)) if r.data == data));
        }
        // As tcpdump -C/-W reopening the file: cut to its header.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(24)
            .unwrap();
        let mut read = 10;
        let end = loop {
            match m.next() {
                Ok(Next::Packet(r)) => {
                    // The caller touches the data: a lost page here too.
                    std::hint::black_box(r.data.iter().map(|&b| u32::from(b)).sum::<u32>());
                    read += 1;
                }
                other => break other.map(|n| format!("{n:?}")),
            }
        };
        assert_eq!(end, Ok("Shrunk".to_owned()));
        // Pages still cached before the cut may be read; never the whole file.
        assert!(
            read < 1000,
            "{read} records read from a file cut to its header"
        );
        // Another map of another file is watched on its own.
        let other = dir.path().join("other.pcap");
        std::fs::write(&other, &bytes).unwrap();
        let file = std::fs::File::open(&other).unwrap();
        let (mut m2, _) = MappedFile::open(&file).unwrap();
        let mut n = 0;
        while let Ok(Next::Packet(_)) = m2.next() {
            n += 1;
        }
        assert_eq!(n, 1000);
    }

    #[test]
    fn classic_pcap_in_both_byte_orders_and_precisions() {
        for order in [Order::Little, Order::Big] {
            for (magic, want) in [(PCAP_MICRO, 5_000_007_000u64), (PCAP_NANO, 5_000_000_007)] {
                let mut f = pcap_header(order, magic, 65535, 1);
                f.extend(record(order, 5, 7, 3, 60, b"abc"));
                let (mut p, link) = Parser::open(&f).unwrap();
                assert_eq!(link, LinkType::Ethernet);
                let Next::Packet(r) = p.next(&f).unwrap() else {
                    panic!("a packet")
                };
                assert_eq!(
                    (r.ts, r.cap_len, r.orig_len, r.data),
                    (Timestamp(want), 3, 60, &b"abc"[..])
                );
                assert_eq!(p.next(&f).unwrap(), Next::End);
            }
        }
    }

    #[test]
    fn a_record_beyond_the_snapshot_length_is_cut_to_it_as_libpcap_does() {
        let mut f = pcap_header(Order::Little, PCAP_MICRO, 2, 1);
        f.extend(record(Order::Little, 1, 0, 4, 4, b"abcd"));
        f.extend(record(Order::Little, 2, 0, 1, 1, b"e"));
        let (mut p, _) = Parser::open(&f).unwrap();
        let Next::Packet(r) = p.next(&f).unwrap() else {
            panic!()
        };
        assert_eq!((r.cap_len, r.orig_len, r.data), (2, 4, &b"ab"[..]));
        let Next::Packet(r) = p.next(&f).unwrap() else {
            panic!()
        };
        assert_eq!(r.data, b"e");
    }

    #[test]
    fn bad_records_say_what_and_where() {
        let mut f = pcap_header(Order::Little, PCAP_MICRO, 0, 1);
        f.extend(record(Order::Little, 1, 0, 0, 0, b""));
        f.extend(record(Order::Little, 1, 0, u32::MAX, 0, b""));
        let (mut p, _) = Parser::open(&f).unwrap();
        // A zero-length record is a packet.
        assert!(matches!(p.next(&f).unwrap(), Next::Packet(r) if r.data.is_empty()));
        let e = p.next(&f).unwrap_err();
        assert!(e.contains("at byte 40") && e.contains("4294967295"), "{e}");
        // Cut inside a header, inside data.
        let mut f = pcap_header(Order::Little, PCAP_MICRO, 0, 1);
        f.extend(record(Order::Little, 1, 0, 10, 10, b"abc"));
        let (mut p, _) = Parser::open(&f).unwrap();
        assert_eq!(p.next(&f).unwrap(), Next::Cut);
        let (mut p, _) = Parser::open(&f[..30]).unwrap();
        assert_eq!(p.next(&f[..30]).unwrap(), Next::Cut);
    }

    #[test]
    fn headers_that_are_not_captures() {
        assert!(matches!(Parser::open(b""), Err(OpenError::NotPcap(_))));
        assert!(
            matches!(Parser::open(b"hello, world"), Err(OpenError::NotPcap(r)) if r == "unknown file format")
        );
        let f = pcap_header(Order::Little, PCAP_MICRO, 0, 105);
        assert_eq!(Parser::open(&f).err(), Some(OpenError::Unsupported(105)));
        let f = pcap_header(Order::Big, PCAP_KUZNETZOV, 0, 1);
        assert_eq!(Parser::open(&f).err(), Some(OpenError::UseLibpcap));
        let f = pcap_header(Order::Little, PCAP_MICRO, 0, 1);
        assert!(matches!(Parser::open(&f[..10]), Err(OpenError::NotPcap(_))));
    }

    #[test]
    fn no_bytes_make_it_panic() {
        // Every prefix and many single-byte corruptions of a small pcapng
        // and a pcap file: any result but a panic.
        let mut ng = Vec::new();
        let le = |v: &mut Vec<u8>, x: u32| v.extend_from_slice(&x.to_le_bytes());
        // SHB
        le(&mut ng, BT_SHB);
        le(&mut ng, 28);
        le(&mut ng, BYTE_ORDER_MAGIC);
        ng.extend_from_slice(&[1, 0, 0, 0]);
        ng.extend_from_slice(&[0xff; 8]);
        le(&mut ng, 28);
        // IDB with if_tsresol 9
        le(&mut ng, BT_IDB);
        le(&mut ng, 28);
        ng.extend_from_slice(&[1, 0, 0, 0]);
        le(&mut ng, 0);
        ng.extend_from_slice(&[9, 0, 1, 0, 9, 0, 0, 0]);
        le(&mut ng, 28);
        // EPB with 4 bytes
        le(&mut ng, BT_EPB);
        le(&mut ng, 36);
        for x in [0, 1, 2, 4, 4] {
            le(&mut ng, x);
        }
        ng.extend_from_slice(b"abcd");
        le(&mut ng, 36);
        let (mut p, _) = Parser::open(&ng).unwrap();
        let Next::Packet(r) = p.next(&ng).unwrap() else {
            panic!()
        };
        assert_eq!(r.ts, Timestamp((1u64 << 32) + 2));
        let mut pcap = pcap_header(Order::Little, PCAP_NANO, 0, 1);
        pcap.extend(record(Order::Little, 1, 2, 4, 4, b"abcd"));
        for file in [ng, pcap] {
            for n in 0..=file.len() {
                drain(&file[..n]);
            }
            for i in 0..file.len() {
                for v in [0u8, 1, 0x7f, 0x80, 0xff] {
                    let mut f = file.clone();
                    f[i] = v;
                    drain(&f);
                }
            }
        }
    }

    fn drain(f: &[u8]) {
        if let Ok((mut p, _)) = Parser::open(f) {
            for _ in 0..100 {
                match p.next(f) {
                    Ok(Next::Packet(_)) => {}
                    _ => break,
                }
            }
        }
    }
}
