//! The protocols lwarscope understands, each in its own folder: its wire format,
//! its analysis rules and its simulator. Nothing outside `proto/` names a
//! protocol's types; the rest of the crate sees protocols through this registry.

pub mod battlegrounds;
pub mod dissect;
pub mod field;
pub mod lwar;

use crate::engine::{Engine, Entry, FindingKind, ProtocolInfo, Rule, TrackerConfig};

/// A registered protocol: its data, how to recognise its datagrams, and how to
/// make its tracker.
pub struct Protocol {
    pub info: &'static ProtocolInfo,
    /// True for a datagram of this protocol (its appId, its magic).
    pub probe: fn(&[u8]) -> bool,
    /// Its tracker on the engine.
    pub tracker: fn(TrackerConfig) -> Box<dyn crate::engine::ProtocolTracker>,
}

/// Every protocol, in the order datagrams are offered to them.
pub static REGISTRY: &[Protocol] = &[lwar::PROTOCOL, battlegrounds::PROTOCOL];

/// An engine serving every registered protocol.
pub fn engine(config: TrackerConfig) -> Engine {
    Engine::new(
        REGISTRY
            .iter()
            .map(|p| Entry {
                probe: p.probe,
                tracker: (p.tracker)(config),
            })
            .collect(),
    )
}

/// The protocol that recognises a datagram; for bytes none recognises (a
/// payload the capture cut before its magic), the first registered.
pub fn protocol_of(payload: &[u8]) -> &'static ProtocolInfo {
    REGISTRY
        .iter()
        .find(|p| (p.probe)(payload))
        .unwrap_or(&REGISTRY[0])
        .info
}

/// True when a registered protocol recognises the datagram.
pub fn recognise(payload: &[u8]) -> bool {
    REGISTRY.iter().any(|p| (p.probe)(payload))
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
        for r in all_rules() {
            assert!(r.ordinal() < crate::engine::MAX_RULES, "{r}");
            assert_eq!(rule_by_name(r.name()), Some(r));
            assert_eq!(rule_by_name(&r.full_name().to_string()), Some(r));
        }
        assert_eq!(
            kind_by_name("lwar.input-gap").map(|k| k.name()),
            Some("input-gap")
        );
        for p in REGISTRY {
            assert!(p.info.message_types.len() <= crate::engine::MAX_MESSAGE_TYPES);
            assert!(p.info.malformed.len() <= crate::engine::MAX_MALFORMED);
        }
    }
}
