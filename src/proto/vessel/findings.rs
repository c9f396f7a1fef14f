//! Vessel's own registered findings: kinds, rules and details. The contract
//! of each (what the capture must show for it to be raised) is in
//! [`super::analysis`].

use super::wire::{DecodeError, ErrorKind, FIELDS};
use crate::engine::{Detail, DetailFormat, ProtoDetail};
use std::fmt;

crate::protocol_kinds! { "vessel";
    /// syncNumbers a newer packet skipped and that were never captured by the
    /// end: lost before the tap, or missed by the tap (Vessel has no acks to
    /// tell which): a note, with the numbers and how many in the detail.
    SYNC_SKIPPED = "sync-skipped", Sequence, Note, 17;
    /// The environment denied the vessel's join (joinStatus false in a
    /// packet that is not a version-only reply): the session is `denied`.
    JOIN_DENIED = "join-denied", Protocol, Note, 18;
    /// The environment answered with another protocol version than the
    /// vessel's (a version-only reply): the session is `version-mismatch`.
    VERSION_REFUSED = "version-refused", Protocol, Note, 19;
    /// The environment issued a vesselID: a join (the vessel sent none), or a
    /// rejoin that got another id than the one the vessel sent.
    ID_ISSUED = "vessel-id-issued", Protocol, Note, 20;
}

crate::protocol_rules! { "vessel";
    /// A syncNumber above 255 (the specification keeps it in one byte):
    /// such a packet takes no place in the sequence.
    SYNC_RANGE = "sync-range", 0;
    /// The vessel went on sending more than 1 s after the first refusal
    /// captured (a denial, or a version-only reply): once per session.
    SENT_AFTER_REFUSAL = "sent-after-refusal", 1;
    /// The environment sent more than its version while the vessel's version
    /// (its latest packet captured) differs from its own.
    FULL_REPLY_ON_MISMATCH = "full-reply-on-mismatch", 2;
    /// The environment stopped sending an issued vesselID before the vessel
    /// used it (the vessel's next two packets captured still do not carry it).
    ID_WITHDRAWN = "id-withdrawn", 3;
    /// A vessel packet carrying another id than the one issued, after the
    /// vessel used the issued one or more than 1 s after it was issued.
    WRONG_VESSEL_ID = "wrong-vessel-id", 4;
    /// throttleLeftEngine or throttleRightEngine outside [0, 1] (NaN
    /// included).
    THROTTLE_RANGE = "throttle-range", 5;
}

/// The malformed reasons, by [`ErrorKind`]'s ordinal.
pub const MALFORMED: [&str; 7] = crate::names_of!(ErrorKind::ALL);

// Decode errors: a[0] = kind | offset << 8, a[1] = field | wire << 32 |
// (def index + 1) << 40, a[2] = needed, a[3] = left.

static DECODE: DetailFormat = DetailFormat {
    name: "vessel.decode",
    fmt: |a, f| write!(f, "{}", unpack_decode(a)),
};

fn unpack_decode(a: &[u64; 4]) -> DecodeError {
    let def = (a[1] >> 40) as usize;
    DecodeError {
        kind: ErrorKind::from_ordinal(a[0] & 0xff),
        offset: (a[0] >> 8) as usize,
        field: a[1] as u32,
        wire: (a[1] >> 32) as u8,
        def: def.checked_sub(1).and_then(|i| FIELDS.get(i)),
        needed: a[2],
        left: a[3],
    }
}

/// A decode error as a finding's detail.
pub fn decode(e: DecodeError) -> ProtoDetail {
    let def = e
        .def
        .and_then(|d| FIELDS.iter().position(|x| std::ptr::eq(x, d)))
        .map_or(0, |i| i as u64 + 1);
    ProtoDetail {
        format: &DECODE,
        args: [
            e.kind.ordinal() as u64 | (e.offset as u64) << 8,
            u64::from(e.field) | u64::from(e.wire) << 32 | def << 40,
            e.needed,
            e.left,
        ],
    }
}

// Everything else: a[0] is the tag.

static EVENT: DetailFormat = DetailFormat {
    name: "vessel.event",
    fmt: event,
};

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

fn event(a: &[u64; 4], f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match a[0] {
        0 => {
            let (first, n) = (a[1], a[2]);
            let last = (first + n - 1) % 256;
            if n == 1 {
                write!(f, "syncNumber {first}")?;
            } else {
                write!(f, "syncNumbers {first} to {last} ({n})")?;
            }
            f.write_str(
                " not captured: lost before the tap or missed by it (Vessel has no acks to tell)",
            )
        }
        1 => write!(f, "syncNumber {} is above 255", a[1]),
        2 => write!(
            f,
            "vessel packet {:.3} s after the {} of frame {} (1 s allowed for what was in flight)",
            secs(a[2]),
            if a[3] == 0 {
                "denial"
            } else {
                "version-only reply"
            },
            a[1]
        ),
        3 => write!(
            f,
            "a full packet while the vessel's version (frame {}) differs from the environment's",
            a[1]
        ),
        4 => write!(
            f,
            "the environment's packets stopped carrying the vesselID it issued in frame {}; the vessel's next two packets (the second in frame {}) do not carry it",
            a[1], a[2]
        ),
        5 => {
            write!(f, "vesselID other than the one issued in frame {}", a[1])?;
            if a[2] == 1 {
                f.write_str(", after the vessel had used it")
            } else {
                write!(f, ", {:.3} s after it was issued", secs(a[3]))
            }
        }
        6 => write!(
            f,
            "{} = {} outside [0, 1]",
            if a[1] == 0 {
                "throttleLeftEngine"
            } else {
                "throttleRightEngine"
            },
            f32::from_bits(a[2] as u32)
        ),
        7 => f.write_str("joinStatus false: the vessel must stop sending"),
        8 => {
            f.write_str("version-only reply: the environment's version differs from the vessel's")?;
            if a[1] == 0 {
                f.write_str(" (no vessel packet captured before it)")
            } else {
                write!(f, " (frame {})", a[1])
            }
        }
        9 => {
            f.write_str("vesselID issued")?;
            match a[1] {
                0 => f.write_str(" to a vessel that sent none (a join)"),
                _ => write!(
                    f,
                    " to a vessel that sent another one (frame {}): a rejoin with a new id",
                    a[2]
                ),
            }
        }
        _ => Ok(()),
    }
}

fn ev(tag: u64, b: u64, c: u64, d: u64) -> Detail {
    Detail::Proto(ProtoDetail {
        format: &EVENT,
        args: [tag, b, c, d],
    })
}

/// `n` numbers from `first` never captured.
pub fn skipped(first: u32, n: u32) -> Detail {
    ev(0, u64::from(first), u64::from(n), 0)
}

/// A syncNumber above 255.
pub fn sync_range(value: u32) -> Detail {
    ev(1, u64::from(value), 0, 0)
}

/// A vessel packet `after_ns` after the refusal of `frame`.
pub fn after_refusal(frame: u64, after_ns: u64, version: bool) -> Detail {
    ev(2, frame, after_ns, u64::from(version))
}

/// A full environment packet while the versions differ (the vessel's
/// version in `vessel_frame`).
pub fn full_reply(vessel_frame: u64) -> Detail {
    ev(3, vessel_frame, 0, 0)
}

/// The id issued in `issued` withdrawn; the second vessel packet without it `next`.
pub fn withdrawn(issued: u64, next: u64) -> Detail {
    ev(4, issued, next, 0)
}

/// Another id than the one issued in `issued`.
pub fn wrong_id(issued: u64, used: bool, after_ns: u64) -> Detail {
    ev(5, issued, u64::from(used), after_ns)
}

/// A throttle outside [0, 1] (`right`: the right engine's).
pub fn throttle(right: bool, value: f32) -> Detail {
    ev(6, u64::from(right), u64::from(value.to_bits()), 0)
}

/// A denial.
pub fn denied() -> Detail {
    ev(7, 0, 0, 0)
}

/// A version-only reply; the vessel's latest packet `vessel_frame` (0: none).
pub fn version_refused(vessel_frame: u64) -> Detail {
    ev(8, vessel_frame, 0, 0)
}

/// An id issued; `rejoin`: the vessel had sent another in `frame`.
pub fn issued(rejoin: bool, frame: u64) -> Detail {
    ev(9, u64::from(rejoin), frame, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_read_as_the_errors_and_events() {
        let e = DecodeError {
            kind: ErrorKind::WireType,
            offset: 3,
            field: 4,
            wire: 2,
            def: FIELDS.iter().find(|d| d.name == "vessel.syncNumber"),
            needed: 0,
            left: 0,
        };
        assert_eq!(decode(e).to_string(), e.to_string());
        assert_eq!(
            skipped(254, 4).to_string(),
            "syncNumbers 254 to 1 (4) not captured: lost before the tap or missed by it (Vessel has no acks to tell)"
        );
        assert_eq!(
            after_refusal(12, 1_500_000_000, true).to_string(),
            "vessel packet 1.500 s after the version-only reply of frame 12 (1 s allowed for what was in flight)"
        );
        assert_eq!(
            throttle(true, 1.5).to_string(),
            "throttleRightEngine = 1.5 outside [0, 1]"
        );
        assert_eq!(
            rules::SENT_AFTER_REFUSAL.full_name().to_string(),
            "vessel.violation.sent-after-refusal"
        );
    }
}
