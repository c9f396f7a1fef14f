//! Writing frames back out: what `-r in.pcap -Y FILTER -w out.pcapng` keeps.
//!
//! Frames are written whole, with their link header, original length and
//! timestamp, in pcapng (the default, as tshark: one interface per link type,
//! nanosecond timestamps, a comment naming what was selected) or classic pcap
//! (one link type per file, nanosecond timestamps). The frames of the fragments
//! of a reassembled datagram are held back until the datagram is complete, so
//! that a selected datagram is written with every fragment, in order; the hold
//! is bounded, and what it had to drop is counted.

use super::{Frame, LinkType, Timestamp};
use pcap_file::DataLink;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::pcapng::blocks::section_header::{SectionHeaderBlock, SectionHeaderOption};
use std::borrow::Cow;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The file format of an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ExportFormat {
    /// pcapng: every link type in one file, with comments.
    #[default]
    Pcapng,
    /// Classic pcap (libpcap's format): one link type per file.
    Pcap,
}

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path}: classic pcap holds one link type, and the capture mixes {first:?} and {other:?} (use -F pcapng)"
    )]
    MixedLinkTypes {
        path: String,
        first: LinkType,
        other: LinkType,
    },
}

/// Bytes of fragment frames held for datagrams not complete yet.
const HOLD_BYTES: usize = 16 << 20;

enum Sink {
    Pcapng {
        writer: PcapNgWriter<BufWriter<File>>,
        /// Link types in interface order.
        interfaces: Vec<LinkType>,
    },
    Pcap {
        /// The file until the first frame names the link type of the header.
        file: Option<BufWriter<File>>,
        writer: Option<PcapWriter<BufWriter<File>>>,
        link: Option<LinkType>,
    },
}

/// One held fragment frame.
struct Held {
    number: u64,
    ts: Timestamp,
    orig_len: u32,
    link: LinkType,
    data: Vec<u8>,
}

/// Writes selected frames to a file.
pub struct FrameWriter {
    path: PathBuf,
    sink: Sink,
    held: VecDeque<Held>,
    held_bytes: usize,
    /// Fragment frames dropped from the hold to keep it bounded, and frames of
    /// selected datagrams that were no longer held.
    dropped: u64,
    written: u64,
}

impl FrameWriter {
    /// Creates `path` (truncating it). `comment` says what is selected (the
    /// display filter), written in a pcapng file's section header.
    pub fn create(
        path: &Path,
        format: ExportFormat,
        comment: Option<String>,
    ) -> Result<Self, ExportError> {
        let io = |source| ExportError::Io {
            path: path.display().to_string(),
            source,
        };
        let file = BufWriter::with_capacity(256 * 1024, File::create(path).map_err(io)?);
        let sink = match format {
            ExportFormat::Pcapng => {
                let mut options = vec![SectionHeaderOption::UserApplication(Cow::Owned(format!(
                    "lwarscope {}",
                    env!("CARGO_PKG_VERSION")
                )))];
                if let Some(c) = &comment {
                    options.push(SectionHeaderOption::Comment(Cow::Owned(c.clone())));
                }
                let section = SectionHeaderBlock {
                    options,
                    ..SectionHeaderBlock::default()
                };
                let writer = PcapNgWriter::with_section_header(file, section)
                    .map_err(|e| pcap_io(path, e))?;
                Sink::Pcapng {
                    writer,
                    interfaces: Vec::new(),
                }
            }
            // The header waits for the first frame: it names the link type.
            ExportFormat::Pcap => Sink::Pcap {
                file: Some(file),
                writer: None,
                link: None,
            },
        };
        Ok(FrameWriter {
            path: path.to_path_buf(),
            sink,
            held: VecDeque::new(),
            held_bytes: 0,
            dropped: 0,
            written: 0,
        })
    }

    /// Frames written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Frames of selected datagrams that could not be written because the hold
    /// had dropped them to stay bounded.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Keeps a fragment's frame until its datagram is complete (or the hold
    /// needs the room).
    pub fn hold(&mut self, frame: &Frame<'_>) {
        while self.held_bytes + frame.data.len() > HOLD_BYTES {
            match self.held.pop_front() {
                Some(h) => self.held_bytes -= h.data.len(),
                None => break,
            }
        }
        self.held_bytes += frame.data.len();
        self.held.push_back(Held {
            number: frame.number,
            ts: frame.ts,
            orig_len: frame.orig_len,
            link: frame.link,
            data: frame.data.to_vec(),
        });
    }

    /// Writes a frame; for the frame that completes a reassembled datagram,
    /// the held frames of its other fragments first, in order.
    pub fn write(&mut self, frame: &Frame<'_>) -> Result<(), ExportError> {
        if let Some((_, earlier)) = frame.fragment_frames.split_last() {
            for &n in earlier {
                let held = self.held.iter().position(|h| h.number == n);
                match held.and_then(|i| self.held.remove(i)) {
                    Some(h) => {
                        self.held_bytes -= h.data.len();
                        self.put(h.link, h.ts, h.orig_len, &h.data)?;
                    }
                    None => self.dropped += 1,
                }
            }
        }
        self.put(frame.link, frame.ts, frame.orig_len, frame.data)
    }

    /// Drops held fragment frames of datagrams that completed unselected.
    pub fn forget(&mut self, frame: &Frame<'_>) {
        for &n in frame.fragment_frames {
            if let Some(i) = self.held.iter().position(|h| h.number == n)
                && let Some(h) = self.held.remove(i)
            {
                self.held_bytes -= h.data.len();
            }
        }
    }

    fn put(
        &mut self,
        link: LinkType,
        ts: Timestamp,
        orig_len: u32,
        data: &[u8],
    ) -> Result<(), ExportError> {
        let timestamp = Duration::from_nanos(ts.nanos());
        let path = &self.path;
        match &mut self.sink {
            Sink::Pcapng { writer, interfaces } => {
                let interface_id = match interfaces.iter().position(|l| *l == link) {
                    Some(i) => i,
                    None => {
                        let idb = InterfaceDescriptionBlock {
                            linktype: DataLink::from(link.dlt() as u32),
                            snaplen: 0,
                            options: vec![InterfaceDescriptionOption::IfTsResol(9)],
                        };
                        writer
                            .write_pcapng_block(idb)
                            .map_err(|e| pcap_io(path, e))?;
                        interfaces.push(link);
                        interfaces.len() - 1
                    }
                };
                let epb = EnhancedPacketBlock {
                    interface_id: interface_id as u32,
                    timestamp,
                    original_len: orig_len,
                    data: Cow::Borrowed(data),
                    options: vec![],
                };
                writer
                    .write_pcapng_block(epb)
                    .map_err(|e| pcap_io(path, e))?;
            }
            Sink::Pcap {
                file,
                writer,
                link: first,
            } => {
                match *first {
                    Some(l) if l != link => {
                        return Err(ExportError::MixedLinkTypes {
                            path: path.display().to_string(),
                            first: l,
                            other: link,
                        });
                    }
                    Some(_) => {}
                    None => {
                        let Some(file) = file.take() else {
                            return Ok(());
                        };
                        let header = PcapHeader {
                            datalink: DataLink::from(link.dlt() as u32),
                            ts_resolution: pcap_file::TsResolution::NanoSecond,
                            snaplen: 262_144,
                            endianness: pcap_file::Endianness::native(),
                            ..PcapHeader::default()
                        };
                        let w =
                            PcapWriter::with_header(file, header).map_err(|e| pcap_io(path, e))?;
                        *writer = Some(w);
                        *first = Some(link);
                    }
                }
                if let Some(w) = writer {
                    w.write_packet(&PcapPacket::new(timestamp, orig_len, data))
                        .map_err(|e| pcap_io(path, e))?;
                }
            }
        }
        self.written += 1;
        Ok(())
    }

    /// Ends a pcapng file with a note about the whole export (a run cut short
    /// by a signal), in an Interface Statistics Block's comment, which
    /// Wireshark shows with the file's properties; `false` for classic pcap,
    /// which has no place for one.
    pub fn note(&mut self, text: &str) -> Result<bool, ExportError> {
        let path = &self.path;
        let Sink::Pcapng { writer, interfaces } = &mut self.sink else {
            return Ok(false);
        };
        if interfaces.is_empty() {
            // A statistics block names an interface: one with no packet.
            let idb = InterfaceDescriptionBlock {
                linktype: DataLink::ETHERNET,
                snaplen: 0,
                options: vec![InterfaceDescriptionOption::IfTsResol(9)],
            };
            writer
                .write_pcapng_block(idb)
                .map_err(|e| pcap_io(path, e))?;
            interfaces.push(LinkType::Ethernet);
        }
        let isb = pcap_file::pcapng::blocks::interface_statistics::InterfaceStatisticsBlock {
            interface_id: 0,
            timestamp: 0,
            options: vec![
                pcap_file::pcapng::blocks::interface_statistics::InterfaceStatisticsOption::Comment(
                    Cow::Owned(text.to_owned()),
                ),
            ],
        };
        writer
            .write_pcapng_block(isb)
            .map_err(|e| pcap_io(path, e))?;
        Ok(true)
    }

    /// Flushes the file: errors that buffering hid (a full disk) surface here.
    pub fn finish(self) -> Result<u64, ExportError> {
        let path = self.path.display().to_string();
        let io = |source| ExportError::Io {
            path: path.clone(),
            source,
        };
        match self.sink {
            Sink::Pcapng { writer, .. } => {
                writer.into_inner().flush().map_err(io)?;
            }
            Sink::Pcap { file, writer, .. } => match (writer, file) {
                (Some(w), _) => w.into_writer().flush().map_err(io)?,
                // Nothing selected: a valid, empty pcap (Ethernet's header).
                (None, Some(file)) => PcapWriter::new(file)
                    .map_err(|e| pcap_io(&self.path, e))?
                    .into_writer()
                    .flush()
                    .map_err(io)?,
                (None, None) => {}
            },
        }
        Ok(self.written)
    }
}

fn pcap_io(path: &Path, e: pcap_file::PcapError) -> ExportError {
    let source = match e {
        pcap_file::PcapError::IoError(e) => e,
        other => std::io::Error::other(other.to_string()),
    };
    ExportError::Io {
        path: path.display().to_string(),
        source,
    }
}
