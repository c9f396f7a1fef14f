//! Live savefiles that rotate, as dumpcap's `-b` does: a new file after a
//! duration or a size, the oldest deleted past a number of files. Files switch
//! between two frames, so nothing is lost between them.

use super::CaptureError;
use super::synth::PcapFile;
use pcap::{Active, Capture};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// When to start a new file (`-b duration:SECS`, `-b filesize:KB`) and how many
/// to keep (`-b files:N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rotation {
    pub duration: Option<Duration>,
    /// In bytes.
    pub filesize: Option<u64>,
    /// Files kept; older ones are deleted.
    pub files: Option<usize>,
}

impl Rotation {
    /// Adds one `-b KEY:VALUE` condition.
    pub fn add(&mut self, spec: &str) -> Result<(), String> {
        let (key, value) = spec.split_once(':').ok_or_else(|| {
            format!("`{spec}`: expected KEY:VALUE (duration:SECS, filesize:KB, files:N)")
        })?;
        let number = || {
            value
                .parse::<u64>()
                .ok()
                .filter(|v| *v > 0)
                .ok_or_else(|| format!("`{spec}`: `{value}` is not a positive whole number"))
        };
        match key {
            "duration" => self.duration = Some(Duration::from_secs(number()?)),
            "filesize" => self.filesize = Some(number()?.saturating_mul(1000)),
            "files" => self.files = Some(number()? as usize),
            _ => {
                return Err(format!(
                    "`{spec}`: unknown condition `{key}` (duration, filesize, files)"
                ));
            }
        }
        Ok(())
    }

    /// Whether a condition that starts a new file is set (`files` alone is not one).
    pub fn rotates(&self) -> bool {
        self.duration.is_some() || self.filesize.is_some()
    }
}

/// The savefile of a live capture, rotated by [`Rotation`].
pub(crate) struct RotatingSavefile {
    base: PathBuf,
    rotation: Rotation,
    /// Written with std's I/O (`PcapFile`), so that a write error is seen:
    /// libpcap's dumper drops a buffer it failed to write.
    current: PcapFile,
    /// The files' LINKTYPE and snapshot length.
    linktype: u32,
    snaplen: u32,
    started: Instant,
    /// Bytes written to the current file (record headers included).
    written: u64,
    index: u64,
    kept: VecDeque<PathBuf>,
}

/// A pcap file's header, and each record's.
const FILE_HEADER: u64 = 24;
const RECORD_HEADER: u64 = 16;

impl RotatingSavefile {
    pub(crate) fn open(
        cap: &Capture<Active>,
        base: &Path,
        rotation: Rotation,
        snaplen: i32,
    ) -> Result<Self, CaptureError> {
        let mut kept = VecDeque::new();
        let first = if rotation.rotates() {
            name(base, 1)
        } else {
            base.to_path_buf()
        };
        let dlt = cap.get_datalink().0;
        let linktype =
            super::LinkType::from_dlt(dlt).map_or(dlt as u32, super::synth::file_linktype);
        let snaplen = u32::try_from(snaplen).unwrap_or(262_144);
        let current = create(&first, linktype, snaplen)?;
        kept.push_back(first);
        Ok(RotatingSavefile {
            base: base.to_path_buf(),
            rotation,
            current,
            linktype,
            snaplen,
            started: Instant::now(),
            written: FILE_HEADER,
            index: 1,
            kept,
        })
    }

    /// Writes a frame to the current file.
    pub(crate) fn write(&mut self, packet: &pcap::Packet<'_>) {
        // Nanoseconds: the capture is opened with nanosecond precision.
        let h = packet.header;
        self.current
            .record(h.ts.tv_sec as u32, h.ts.tv_usec as u32, packet.data, h.len);
        self.written += RECORD_HEADER + packet.data.len() as u64;
    }

    /// Whether the current file is done: it reached its size, or its time.
    /// As dumpcap, a file ends after the frame that takes it past its size.
    pub(crate) fn due(&self) -> bool {
        self.rotation
            .filesize
            .is_some_and(|max| self.written >= max)
            || self
                .rotation
                .duration
                .is_some_and(|d| self.started.elapsed() >= d)
    }

    /// Starts the next file (between two frames: nothing is lost), deleting
    /// the oldest past `files`.
    pub(crate) fn next(&mut self, _cap: &Capture<Active>) -> Result<(), CaptureError> {
        self.flush()?;
        self.index += 1;
        let path = name(&self.base, self.index);
        self.current = create(&path, self.linktype, self.snaplen)?;
        self.kept.push_back(path);
        if let Some(n) = self.rotation.files {
            while self.kept.len() > n {
                if let Some(old) = self.kept.pop_front() {
                    let _ = std::fs::remove_file(old);
                }
            }
        }
        self.started = Instant::now();
        self.written = FILE_HEADER;
        Ok(())
    }

    /// Flushes the current file: an error here (a full disk) is the first
    /// word of what buffering hid.
    pub(crate) fn flush(&mut self) -> Result<(), CaptureError> {
        self.current.flush().map_err(|e| CaptureError::Savefile {
            path: self
                .kept
                .back()
                .map_or_else(String::new, |p| p.display().to_string()),
            reason: e.to_string(),
        })
    }
}

fn create(path: &Path, linktype: u32, snaplen: u32) -> Result<PcapFile, CaptureError> {
    PcapFile::with_snaplen(path, linktype, true, snaplen).map_err(|e| CaptureError::Savefile {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

/// `out.pcap` -> `out_00001.pcap`: numbered in order, so a listing sorts them.
pub(crate) fn name(base: &Path, index: u64) -> PathBuf {
    let stem = base
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let file = match base.extension() {
        Some(ext) => format!("{stem}_{index:05}.{}", ext.to_string_lossy()),
        None => format!("{stem}_{index:05}"),
    };
    base.with_file_name(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_parse_and_refuse_the_rest() {
        let mut r = Rotation::default();
        r.add("duration:10").unwrap();
        r.add("filesize:100").unwrap();
        r.add("files:3").unwrap();
        assert_eq!(r.duration, Some(Duration::from_secs(10)));
        assert_eq!(r.filesize, Some(100_000));
        assert_eq!(r.files, Some(3));
        assert!(r.rotates());
        for bad in ["duration", "duration:0", "size:10", "files:x"] {
            assert!(Rotation::default().add(bad).is_err(), "{bad}");
        }
        let mut files_only = Rotation::default();
        files_only.add("files:2").unwrap();
        assert!(!files_only.rotates());
    }

    #[test]
    fn names_are_numbered_before_the_extension() {
        assert_eq!(
            name(Path::new("/t/out.pcap"), 7),
            Path::new("/t/out_00007.pcap")
        );
        assert_eq!(name(Path::new("cap"), 12), Path::new("cap_00012"));
    }
}
