//! Vessel's own registered findings: kinds, rules and details. The contract
//! of each (what the capture must show for it to be raised) is in
//! [`super::analysis`].

use super::wire::{DecodeError, ErrorKind, FIELDS};
use crate::engine::finding::{Arg, ArgsReader, ArgsWriter};

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

/// A decode error in a finding's numbers: its kind, where, the field and
/// wire type, the declared field (by its index in [`FIELDS`]), the lengths.
impl Arg for DecodeError {
    const BITS: u32 = 8 + 48 + 32 + 8 + 16 + 64 + 64;
    fn put(self, w: &mut ArgsWriter) {
        let def = self
            .def
            .and_then(|d| FIELDS.iter().position(|x| std::ptr::eq(x, d)))
            .map_or(0, |i| i as u16 + 1);
        w.put(self.kind.ordinal() as u8);
        w.put(self.offset);
        w.put(self.field);
        w.put(self.wire);
        w.put(def);
        w.put(self.needed);
        w.put(self.left);
    }
    fn take(r: &mut ArgsReader<'_>) -> Self {
        let kind: u8 = r.take();
        let (offset, field, wire, def) = (r.take(), r.take(), r.take(), r.take::<u16>());
        DecodeError {
            kind: ErrorKind::from_ordinal(u64::from(kind)),
            offset,
            field,
            wire,
            def: usize::from(def).checked_sub(1).and_then(|i| FIELDS.get(i)),
            needed: r.take(),
            left: r.take(),
        }
    }
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

crate::proto_details! { "vessel";
    /// A decode error as a finding's detail.
    pub fn decode(error: DecodeError) -> ProtoDetail => |f| write!(f, "{error}");

    /// `n` numbers from `first` never captured.
    pub fn skipped(first: u32, n: u32) => |f| {
        let last = (u64::from(first) + u64::from(n)).wrapping_sub(1) % 256;
        if n == 1 {
            write!(f, "syncNumber {first}")?;
        } else {
            write!(f, "syncNumbers {first} to {last} ({n})")?;
        }
        f.write_str(" not captured: lost before the tap or missed by it (Vessel has no acks to tell)")
    };

    /// A syncNumber above 255.
    pub fn sync_range(value: u32) => |f| write!(f, "syncNumber {value} is above 255");

    /// A vessel packet `after_ns` after the refusal of `frame` (`version`: a
    /// version-only reply, else a denial).
    pub fn after_refusal(frame: u64, after_ns: u64, version: bool) => |f| {
        write!(
            f,
            "vessel packet {:.3} s after the {} of frame {frame} (1 s allowed for what was in flight)",
            secs(after_ns),
            if version { "version-only reply" } else { "denial" },
        )
    };

    /// A full environment packet while the versions differ (the vessel's
    /// version in `vessel_frame`).
    pub fn full_reply(vessel_frame: u64) => |f| {
        write!(
            f,
            "a full packet while the vessel's version (frame {vessel_frame}) differs from the environment's"
        )
    };

    /// The id issued in `issued` withdrawn; the second vessel packet without it `next`.
    pub fn withdrawn(issued: u64, next: u64) => |f| {
        write!(
            f,
            "the environment's packets stopped carrying the vesselID it issued in frame {issued}; \
             the vessel's next two packets (the second in frame {next}) do not carry it"
        )
    };

    /// Another id than the one issued in `issued`.
    pub fn wrong_id(issued: u64, used: bool, after_ns: u64) => |f| {
        write!(f, "vesselID other than the one issued in frame {issued}")?;
        if used {
            f.write_str(", after the vessel had used it")
        } else {
            write!(f, ", {:.3} s after it was issued", secs(after_ns))
        }
    };

    /// A throttle outside [0, 1] (`right`: the right engine's).
    pub fn throttle(right: bool, value: f32) => |f| {
        let engine = if right { "throttleRightEngine" } else { "throttleLeftEngine" };
        write!(f, "{engine} = {value} outside [0, 1]")
    };

    /// A denial.
    pub fn denied() => |f| f.write_str("joinStatus false: the vessel must stop sending");

    /// A version-only reply; the vessel's latest packet `vessel_frame` (0: none).
    pub fn version_refused(vessel_frame: u64) => |f| {
        f.write_str("version-only reply: the environment's version differs from the vessel's")?;
        if vessel_frame == 0 {
            f.write_str(" (no vessel packet captured before it)")
        } else {
            write!(f, " (frame {vessel_frame})")
        }
    };

    /// An id issued; `rejoin`: the vessel had sent another in `frame`.
    pub fn issued(rejoin: bool, frame: u64) => |f| {
        f.write_str("vesselID issued")?;
        if rejoin {
            write!(f, " to a vessel that sent another one (frame {frame}): a rejoin with a new id")
        } else {
            f.write_str(" to a vessel that sent none (a join)")
        }
    };
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
        assert_eq!(crate::engine::finding::round_trip(e), e);
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
