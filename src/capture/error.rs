//! What can go wrong while capturing: each error is one line a user can act on.

use std::fmt;

/// An error opening or reading a capture. `Display` gives one line, ready for users.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CaptureError {
    /// The capture file does not exist.
    #[error("{path}: no such file", path = crate::text::printable(.path))]
    FileNotFound { path: String },
    /// The capture file exists but cannot be opened (permissions, a directory...).
    #[error("{path}: cannot open: {reason}", path = crate::text::printable(.path))]
    FileUnreadable { path: String, reason: String },
    /// The file is neither a classic pcap nor a pcapng file.
    #[error("{path}: not a pcap or pcapng file ({reason})", path = crate::text::printable(.path))]
    NotPcap { path: String, reason: String },
    /// The file ends in the middle of a record: the packets before it were delivered.
    #[error("{path}: file cut off in the middle of a record, after {packets} complete packets", path = crate::text::printable(.path))]
    CutOff { path: String, packets: u64 },
    /// libpcap failed to read a file for another reason (a corrupt block...).
    #[error("{path}: read error after {packets} packets: {reason}", path = crate::text::printable(.path))]
    FileRead {
        path: String,
        packets: u64,
        reason: String,
    },
    /// The file shrank while it was read (another process truncated or
    /// rewrote it): what was read after that is not the file's.
    #[error(
        "{path}: changed while being read ({now}, after {packets} packets; the file was truncated or rewritten by another process)",
        path = crate::text::printable(.path)
    )]
    Changed {
        path: String,
        packets: u64,
        /// What the file is now: "now 1234 bytes", "removed".
        now: String,
    },
    /// The link type is not one lwarscope can read IP packets from.
    #[error(
        "{input}: unsupported link type {linktype} ({name}); supported: Ethernet, Linux SLL and SLL2, BSD NULL and LOOP, raw IPv4/IPv6",
        input = crate::text::printable(.input)
    )]
    UnsupportedLinkType {
        input: String,
        linktype: i32,
        name: String,
    },
    /// The process may not capture packets.
    #[error(
        "no permission to capture on {interface}: run as root, or give the binary the capabilities: setcap cap_net_raw,cap_net_admin=eip {binary}"
    )]
    PermissionDenied { interface: String, binary: String },
    /// No interface has that name.
    #[error("unknown interface '{interface}' (available: {})", Names(.available))]
    UnknownInterface {
        interface: String,
        available: Vec<String>,
    },
    /// libpcap rejected the capture filter.
    #[error("invalid capture filter '{filter}': {reason}")]
    InvalidFilter { filter: String, reason: String },
    /// The `-w` file cannot be created.
    #[error("{path}: cannot write the capture: {reason}", path = crate::text::printable(.path))]
    Savefile { path: String, reason: String },
    /// Any other libpcap failure on a live interface.
    #[error("capture on {interface} failed: {reason}")]
    Live { interface: String, reason: String },
}

/// A comma-separated list of names, or `none`.
struct Names<'a>(&'a [String]);

impl fmt::Display for Names<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("none");
        }
        f.write_str(&self.0.join(", "))
    }
}

/// libpcap's message for an error, without the crate's prefix.
pub(crate) fn pcap_reason(err: &pcap::Error) -> String {
    match err {
        pcap::Error::PcapError(msg) => msg.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_is_one_line() {
        let errors = [
            CaptureError::UnknownInterface {
                interface: "eth9".into(),
                available: vec!["lo".into(), "eth0".into()],
            },
            CaptureError::PermissionDenied {
                interface: "lo".into(),
                binary: "/usr/bin/lwarscope".into(),
            },
            CaptureError::CutOff {
                path: "a.pcap".into(),
                packets: 3,
            },
        ];
        for e in errors {
            assert!(!e.to_string().contains('\n'), "{e}");
        }
        let e = CaptureError::UnknownInterface {
            interface: "eth9".into(),
            available: vec!["lo".into(), "eth0".into()],
        };
        assert_eq!(
            e.to_string(),
            "unknown interface 'eth9' (available: lo, eth0)"
        );
    }
}
