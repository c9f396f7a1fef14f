//! The protocols lwarscope understands, each in its own folder: its wire format,
//! its analysis rules and its simulator. Nothing outside `proto/` names a
//! protocol's types; the rest of the crate sees protocols through this registry.

pub mod battlegrounds;
pub mod codec;
pub mod described;
pub mod layout;
pub mod lwar;
pub mod replay;
pub mod sim;
pub mod starstrike;
pub mod truth;
pub mod vessel;
pub mod wire_error;

// The dissector and field vocabulary is the engine's (below every protocol
// and every output); protocols name it as their own.
pub use crate::engine::{digits, dissect, field};

use crate::engine::{
    Engine, Entry, FindingKind, Probe, ProtocolInfo, Recognition, Rule, TrackerConfig,
};
use std::sync::OnceLock;

/// The names of every value of an enum, in `ALL` order, as a constant array:
/// what a protocol registers as its message types and malformed reasons.
/// `names_of!(MessageType::ALL)` needs `MessageType::name` to be a `const fn`.
#[macro_export]
macro_rules! names_of {
    ($all:expr) => {{
        let mut names = [""; $all.len()];
        let mut i = 0;
        while i < names.len() {
            names[i] = $all[i].name();
            i += 1;
        }
        names
    }};
}

/// A registered protocol: its data, how to recognise its datagrams, and how to
/// make its tracker.
pub struct Protocol {
    pub info: &'static ProtocolInfo,
    /// How a datagram says it is of this protocol (its appId, its magic, its
    /// handshake; a described protocol's magic or port).
    pub probe: Probe,
    /// Whether every datagram says so, or only a flow's first.
    pub recognition: Recognition,
    /// Its tracker on the engine.
    pub tracker: MakeTracker,
    /// Its simulator for `sim --proto NAME`, where it has one.
    pub sim: Option<sim::SimFn>,
}

/// How a protocol's tracker is made.
#[derive(Clone, Copy)]
pub enum MakeTracker {
    /// A built-in protocol's: from the configuration alone.
    Builtin(fn(TrackerConfig) -> Box<dyn crate::engine::ProtocolTracker>),
    /// A described protocol's: the generic analyzer over its description.
    Described(&'static described::Described),
}

impl MakeTracker {
    pub fn make(self, config: TrackerConfig) -> Box<dyn crate::engine::ProtocolTracker> {
        match self {
            MakeTracker::Builtin(f) => f(config),
            MakeTracker::Described(d) => described::tracker(d, config),
        }
    }
}

/// Every protocol, in the order datagrams are offered to them: the built-in
/// ones, then the described ones (the shipped `protocols/*.ksy` and those
/// loaded with `-X proto:FILE`), so a description never takes a built-in
/// protocol's datagrams unless a port is decoded as it (`-d`).
///
/// Built once, the first time it is used, and kept for the life of the
/// process ([`registry`]); descriptions to load must be given before that
/// ([`described::load_files`]). `REGISTRY` derefs to the slice, so
/// `REGISTRY.iter()`, `REGISTRY[i]` and `for p in REGISTRY` all work.
pub static REGISTRY: Registry = Registry;

/// The registry's handle: a slice of every [`Protocol`], built once.
#[derive(Debug, Clone, Copy)]
pub struct Registry;

impl std::ops::Deref for Registry {
    type Target = [Protocol];
    fn deref(&self) -> &'static [Protocol] {
        registry()
    }
}

impl IntoIterator for Registry {
    type Item = &'static Protocol;
    type IntoIter = std::slice::Iter<'static, Protocol>;
    fn into_iter(self) -> Self::IntoIter {
        registry().iter()
    }
}

impl IntoIterator for &Registry {
    type Item = &'static Protocol;
    type IntoIter = std::slice::Iter<'static, Protocol>;
    fn into_iter(self) -> Self::IntoIter {
        registry().iter()
    }
}

/// Every protocol: built on first use from the built-ins and the descriptions,
/// then the same slice for the life of the process (leaked once: a protocol
/// lives as long as the process that loaded it).
pub fn registry() -> &'static [Protocol] {
    static CELL: OnceLock<&'static [Protocol]> = OnceLock::new();
    CELL.get_or_init(|| {
        let mut all = vec![
            lwar::PROTOCOL,
            starstrike::PROTOCOL,
            battlegrounds::PROTOCOL,
            vessel::PROTOCOL,
        ];
        all.extend(described::protocols());
        Box::leak(all.into_boxed_slice())
    })
}

/// An engine serving every registered protocol.
pub fn engine(config: TrackerConfig) -> Engine {
    Engine::new(
        REGISTRY
            .iter()
            .map(|p| Entry {
                probe: p.probe,
                recognition: p.recognition,
                tracker: p.tracker.make(config),
            })
            .collect(),
    )
}

/// An engine serving every registered protocol, with the ports the user
/// decodes as a protocol (`-d`).
pub fn engine_with(config: TrackerConfig, decode_as: &[DecodeAs]) -> Engine {
    let mut engine = engine(config);
    for d in decode_as {
        engine.decode_port_as(d.port, d.index);
    }
    engine
}

/// The protocol that recognises a datagram by its own bytes; for bytes none
/// recognises (a payload the capture cut before its magic), the first
/// registered.
pub fn protocol_of(payload: &[u8]) -> &'static ProtocolInfo {
    REGISTRY
        .iter()
        .find(|p| p.probe.payload(payload))
        .unwrap_or(&REGISTRY[0])
        .info
}

/// A registered protocol by its short name (`lwar`, `strs`) or its title, in
/// any case (`Starstrike`, `starstrike`).
pub fn by_name(name: &str) -> Option<&'static Protocol> {
    REGISTRY
        .iter()
        .find(|p| p.info.name.eq_ignore_ascii_case(name) || p.info.title.eq_ignore_ascii_case(name))
}

/// A port the user decodes as a protocol: tshark's `-d udp.port==N,proto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeAs {
    pub port: u16,
    /// The protocol's index in [`REGISTRY`].
    pub index: usize,
}

impl std::str::FromStr for DecodeAs {
    type Err = String;

    /// `udp.port==7777,starstrike` (spaces allowed around `==` and `,`).
    fn from_str(s: &str) -> Result<Self, String> {
        let names = || {
            REGISTRY
                .iter()
                .map(|p| p.info.name)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (selector, proto) = s
            .split_once(',')
            .ok_or_else(|| format!("`{s}`: expected udp.port==N,PROTOCOL"))?;
        let port = selector
            .trim()
            .strip_prefix("udp.port")
            .and_then(|r| r.trim_start().strip_prefix("=="))
            .ok_or_else(|| format!("`{s}`: only udp.port==N can be decoded as a protocol"))?
            .trim();
        let port: u16 = port
            .parse()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| format!("`{s}`: `{port}` is not a UDP port (1-65535)"))?;
        let proto = proto.trim();
        let index = by_name(proto)
            .and_then(|p| REGISTRY.iter().position(|q| std::ptr::eq(p, q)))
            .ok_or_else(|| format!("`{s}`: unknown protocol `{proto}` (known: {})", names()))?;
        Ok(DecodeAs { port, index })
    }
}

/// A protocol preference users may set (`-o name:value`, tshark's form).
#[derive(Debug, Clone, Copy)]
pub struct PrefDef {
    pub name: &'static str,
    /// The values it takes.
    pub values: &'static [&'static str],
    pub doc: &'static str,
}

/// Every protocol preference.
pub static PREFERENCES: &[PrefDef] = &[PrefDef {
    name: battlegrounds::analysis::BYTE_ORDER_PREF,
    values: &["be", "le", "auto"],
    doc: "Battlegrounds' byte order: be (big-endian, the reference's), le (little-endian, \
          the first notes'), auto (decided per session from its own bytes; the default)",
}];

impl std::str::FromStr for crate::engine::Preference {
    type Err = String;

    /// `bg.byte_order:le` (also `bg.byte_order=le`), checked against
    /// [`PREFERENCES`].
    fn from_str(s: &str) -> Result<Self, String> {
        let (name, value) = s
            .split_once(':')
            .or_else(|| s.split_once('='))
            .ok_or_else(|| format!("`{s}`: expected NAME:VALUE, such as bg.byte_order:be"))?;
        let (name, value) = (name.trim(), value.trim());
        let def = PREFERENCES
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                let known: Vec<_> = PREFERENCES.iter().map(|p| p.name).collect();
                format!(
                    "`{s}`: unknown preference `{name}` (known: {})",
                    known.join(", ")
                )
            })?;
        let value = def
            .values
            .iter()
            .find(|v| v.eq_ignore_ascii_case(value))
            .ok_or_else(|| {
                format!(
                    "`{s}`: {} takes {}, not `{value}`",
                    def.name,
                    def.values.join(", ")
                )
            })?;
        Ok(crate::engine::Preference {
            name: def.name,
            value,
        })
    }
}

/// The configuration with the user's preferences (kept for the life of the
/// process: they are given once, on the command line).
pub fn config_with(preferences: &[crate::engine::Preference]) -> TrackerConfig {
    TrackerConfig {
        preferences: if preferences.is_empty() {
            &[]
        } else {
            Box::leak(preferences.to_vec().into_boxed_slice())
        },
        ..TrackerConfig::default()
    }
}

/// Every finding kind of every protocol: the shared ones, then each protocol's.
pub fn all_kinds() -> impl Iterator<Item = FindingKind> {
    FindingKind::SHARED
        .iter()
        .copied()
        .chain(REGISTRY.iter().flat_map(|p| p.info.kinds.iter().copied()))
}

/// Every rule of every protocol.
pub fn all_rules() -> impl Iterator<Item = Rule> {
    REGISTRY.iter().flat_map(|p| p.info.rules.iter().copied())
}

/// A finding kind by the name users type: `resend`, `input-gap`, or
/// namespaced, `lwar.input-gap`.
pub fn kind_by_name(name: &str) -> Option<FindingKind> {
    all_kinds().find(|k| {
        k.name() == name
            || name
                .strip_prefix(k.def().proto)
                .and_then(|rest| rest.strip_prefix('.'))
                == Some(k.name())
    })
}

/// A session lifecycle state of a registered protocol, by name (`timed-out`).
pub fn state_by_name(name: &str) -> Option<&'static str> {
    REGISTRY
        .iter()
        .flat_map(|p| p.info.states.iter().copied())
        .find(|s| *s == name)
}

/// A rule by its short name (`after-disconnect`) or its namespaced one
/// (`lwar.violation.after-disconnect`).
pub fn rule_by_name(name: &str) -> Option<Rule> {
    all_rules().find(|r| r.name() == name || r.full_name().to_string() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::capture::{Datagram, Timestamp};
    use crate::engine::{Observer, PacketEvent};

    fn dgram<'a>(payload: &'a [u8], src: &str, dst: &str, frame: u64) -> Datagram<'a> {
        Datagram::new(
            frame,
            Timestamp::from_millis(frame),
            src.parse().unwrap(),
            dst.parse().unwrap(),
            payload,
        )
    }

    /// The protocol of every packet the engine analysed.
    #[derive(Default)]
    struct Seen(Vec<(u64, &'static str)>);
    impl Observer for Seen {
        fn packet(&mut self, e: &PacketEvent<'_>) -> crate::engine::Flow {
            self.0.push((e.datagram.frame, e.protocol.name));
            crate::engine::Flow::Continue
        }
    }

    fn lwar_header() -> Vec<u8> {
        let mut p = lwar::wire::APP_ID.to_be_bytes().to_vec();
        p.extend([0; 8]);
        p
    }

    #[test]
    fn the_engine_recognises_by_probe_skips_the_rest_and_counts_it() {
        let mut engine = engine(TrackerConfig::default());
        let mut seen = Seen::default();
        let lwar = lwar_header();
        let (a, b) = ("10.0.0.1:5000", "10.0.0.2:32422");
        assert!(engine.observe(&dgram(&lwar, a, b, 1), &mut seen).is_some());
        // Off every flow lwar keeps: someone else's.
        let c = "10.0.0.3:6000";
        assert!(
            engine
                .observe(&dgram(b"hello", c, b, 2), &mut seen)
                .is_none()
        );
        let mut cut = dgram(b"\xf2\x70", c, b, 3);
        cut.payload_len = 20;
        assert!(engine.observe(&cut, &mut seen).is_none());
        assert_eq!(seen.0, [(1, "lwar")]);
        assert_eq!(engine.recognised(), 1);
        let u = engine.unrecognised();
        assert_eq!((u.other, u.cut), (2, 1));
        // On the flow of lwar's session: lwar's (its mark damaged, malformed).
        assert!(
            engine
                .observe(&dgram(b"hello", b, a, 4), &mut seen)
                .is_some()
        );
        assert_eq!(seen.0, [(1, "lwar"), (4, "lwar")]);
        assert_eq!(engine.summary().findings.get("malformed"), Some(&1));
        assert_eq!(engine.unrecognised().other, 2);
    }

    #[test]
    fn a_port_decoded_as_a_protocol_takes_its_traffic_whatever_the_bytes() {
        let d: DecodeAs = "udp.port==4000,lwar".parse().unwrap();
        let mut engine = engine_with(TrackerConfig::default(), &[d]);
        let mut seen = Seen::default();
        let flow = engine.observe(
            &dgram(b"not lwar", "10.0.0.1:5000", "10.0.0.2:4000", 1),
            &mut seen,
        );
        assert_eq!(flow, Some(crate::engine::Flow::Continue));
        // Another port: probed as usual.
        assert!(
            engine
                .observe(
                    &dgram(b"not lwar", "10.0.0.1:5000", "10.0.0.2:4001", 2),
                    &mut seen
                )
                .is_none()
        );
        assert_eq!(seen.0, [(1, "lwar")]);
        let mut sessions = Vec::new();
        engine.for_each_session(|s| sessions.push(s.recognised_by));
        assert_eq!(sessions, [crate::engine::RecognisedBy::Port]);
        // Its bytes are lwar's to judge: not an lwar packet.
        assert_eq!(engine.summary().findings.get("malformed"), Some(&1));
    }

    #[test]
    fn count_stops_after_n_recognised_datagrams() {
        let mut engine = engine(TrackerConfig::default());
        engine.stop_after(2);
        let lwar = lwar_header();
        let (a, b) = ("10.0.0.1:5000", "10.0.0.2:32422");
        // The other traffic off lwar's flow: not counted.
        let c = "10.0.0.3:6000";
        let flows: Vec<_> = (1..=3)
            .map(|i| {
                if i == 2 {
                    engine.observe(&dgram(b"other", c, b, i), &mut ())
                } else {
                    engine.observe(&dgram(&lwar, a, b, i), &mut ())
                }
            })
            .collect();
        use crate::engine::Flow::{Continue, Stop};
        assert_eq!(flows, [Some(Continue), None, Some(Stop)]);
    }

    #[test]
    fn decode_as_takes_tsharks_form_and_refuses_the_rest() {
        let d: DecodeAs = "udp.port==7000,lwar".parse().unwrap();
        assert_eq!((d.port, REGISTRY[d.index].info.name), (7000, "lwar"));
        let d: DecodeAs = "udp.port == 9 , lwar".parse().unwrap();
        assert_eq!(d.port, 9);
        for (bad, says) in [
            ("udp.port==7000", "expected udp.port==N,PROTOCOL"),
            ("tcp.port==7000,lwar", "only udp.port==N"),
            ("udp.port==0,lwar", "is not a UDP port"),
            ("udp.port==70000,lwar", "is not a UDP port"),
            (
                "udp.port==7000,quake",
                "unknown protocol `quake` (known: lwar",
            ),
        ] {
            let e = bad.parse::<DecodeAs>().unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn every_kind_and_rule_fits_its_counters_and_has_a_unique_name() {
        let kinds: Vec<_> = all_kinds().collect();
        for k in &kinds {
            assert!(k.ordinal() < crate::engine::MAX_KINDS, "{k}");
            assert_eq!(kind_by_name(k.name()), Some(*k));
        }
        let mut names: Vec<_> = kinds.iter().map(|k| k.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), kinds.len());
        // A rule's short name is unique within its protocol (protocols may
        // share one, `wrong-direction`: typed alone it means all of them); its
        // full name is unique.
        for r in all_rules() {
            assert!(r.ordinal() < crate::engine::MAX_RULES, "{r}");
            assert_eq!(rule_by_name(r.name()).map(|x| x.name()), Some(r.name()));
            assert_eq!(rule_by_name(&r.full_name().to_string()), Some(r));
            let same = all_rules()
                .filter(|x| x.name() == r.name() && x.def().proto == r.def().proto)
                .count();
            assert_eq!(same, 1, "{}", r.full_name());
        }
        assert_eq!(
            kind_by_name("lwar.input-gap").map(|k| k.name()),
            Some("input-gap")
        );
        // Each protocol's own kinds use slots 16 and up (below, the shared
        // kinds') and never a shared kind's name; its rules are in slot order.
        for p in REGISTRY {
            for k in p.info.kinds {
                assert!((17..crate::engine::MAX_KINDS).contains(&k.ordinal()), "{k}");
                assert!(FindingKind::shared(k.name()).is_none(), "{k}");
                assert_eq!(k.def().proto, p.info.name, "{k}");
            }
            for (i, r) in p.info.rules.iter().enumerate() {
                assert_eq!(r.ordinal(), i, "{}", r.full_name());
                assert_eq!(r.def().proto, p.info.name, "{r}");
            }
        }
        let mut protocols: Vec<_> = REGISTRY.iter().map(|p| p.info.name).collect();
        protocols.sort();
        protocols.dedup();
        assert_eq!(protocols.len(), REGISTRY.len(), "protocol names are unique");
        for p in REGISTRY {
            assert!(p.info.message_types.len() <= crate::engine::MAX_MESSAGE_TYPES);
            assert!(p.info.malformed.len() <= crate::engine::MAX_MALFORMED);
        }
    }
}
