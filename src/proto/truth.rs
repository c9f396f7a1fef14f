//! `check --expect FILE`: what an analysis is compared with. Every simulator's
//! ground truth (`captures/*.truth.json`), each in its own form, and
//! lwarscope's own summary:
//!
//! - lwar (`sim-*.truth.json`: its `summary`) and lwarscope's `--format json`
//!   or `jsonl` output (its `summary`, or a bare summary): the counts per
//!   message type, finding kind, violation rule, malformed reason and session
//!   ([`compare`]).
//! - Starstrike (`strs-*.truth.json`: `config`, `sessions`, `findings`): per
//!   session (by its addresses) its state, the packets captured each way and
//!   the findings by label (`lost`, `violation/input-range`), every label the
//!   truth lists and none it does not.
//! - Battlegrounds (`bg-*.truth.json`, `"protocol": "bg"`): the frames, the
//!   number of sessions and the state of each, and per direction over every
//!   session the findings by label (every count of the direction: those it
//!   lists, `malformed` as the sum of its reasons, and no other), the
//!   malformed packets by reason, and the PROPs rebuilt (s2c).
//! - Described protocols (`ksy-*.truth.json`: `description`, `frames`,
//!   `sessions`): the frames, and per session its state and each direction's
//!   findings by label, exactly.
//! - Mixed (`mixed-lwar-strs.truth.json`: `lwar` and `strs` side by side):
//!   the Starstrike sessions as above, and the other sessions with the totals
//!   they add up to as lwar's summary.
//! - Vessel (`vessel-*.truth.json`: `"simulator": "lwarscope sim --proto
//!   vessel"`, `sessions` by the vessel's address): per session its state,
//!   the packets each way, the messages by type, and the findings by the
//!   truth's names (`malformed`, `duplicates`, `reordered`, `issued`,
//!   `refused`, `denied`, `violations`), the sync numbers skipped each way
//!   (`skipped_c2s`, `skipped_s2c`: the direction's loss count). `rejoin` (an
//!   `issued` whose detail says rejoin) is counted within `issued`.
//!
//! A truth is what its simulator's own test analyses, with the same `-d`: a
//! Battlegrounds capture begun mid-session names its `decode_as`, and a
//! Starstrike truth decodes its servers' ports as Starstrike (a datagram whose
//! magic the network damaged is then its session's malformed packet), as if
//! given on the command line before the user's own `-d`.
//!
//! A difference reads as `session 10.0.1.2:50001 -> 10.0.0.1:7777
//! findings.malformed: expected 7, got 5`. A file that is none of these is a
//! one-line error saying what `--expect` takes.

use super::DecodeAs;
use crate::engine::summary::{Counts, DirectionSummary, SessionSummary, Summary, compare};
use serde::Deserialize;
use serde_json::Value;

/// What `--expect` takes, as read from its file.
#[derive(Debug, Clone, PartialEq)]
pub struct Expected {
    kind: Kind,
    decode_as: Vec<DecodeAs>,
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// lwar's truth (its `summary`) or lwarscope's own summary.
    Summary(Box<Summary>),
    Starstrike(super::starstrike::sim::Truth),
    Battlegrounds(BgTruth),
    Described(DescribedTruth),
    Mixed {
        lwar: Box<Summary>,
        strs: super::starstrike::sim::Truth,
    },
    Vessel(VesselTruth),
}

/// Vessel's truth: per vessel address, the counts of its session.
#[derive(Debug, Clone, PartialEq, Deserialize)]
struct VesselTruth {
    environment: String,
    sessions: std::collections::BTreeMap<String, std::collections::BTreeMap<String, Value>>,
}

/// The parts of a Battlegrounds truth that an analysis shows.
#[derive(Debug, Clone, PartialEq, Deserialize)]
struct BgTruth {
    decode_as: Option<String>,
    frames: u64,
    sessions: u64,
    state: String,
    c2s: BgDirection,
    s2c: BgDirection,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct BgDirection {
    malformed: Counts,
    props: u64,
    /// The findings by label (`sig-gap`, `violation/auth-repeat`); the
    /// simulator's own figures (`movement`) are not numbers and left out.
    #[serde(flatten)]
    counts: std::collections::BTreeMap<String, Value>,
}

/// A described protocol's truth.
#[derive(Debug, Clone, PartialEq, Deserialize)]
struct DescribedTruth {
    frames: u64,
    sessions: Vec<DescribedSession>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct DescribedSession {
    client: String,
    server: String,
    state: String,
    c2s: Counts,
    s2c: Counts,
}

/// What `--expect` takes, said when a file is none of it.
const TAKES: &str = "--expect takes a simulator's *.truth.json (lwar, Starstrike, \
                     Battlegrounds, Vessel, described, mixed) or lwarscope's --format json output";

/// Reads an expected result: a simulator's truth or a summary, by its form.
/// `Err`: one line saying why not.
pub fn read(text: &str) -> Result<Expected, String> {
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        // A jsonl stream: its last line, the summary.
        Err(e) => match text.lines().rev().find(|l| !l.trim().is_empty()) {
            Some(last) => match serde_json::from_str(last) {
                Ok(v) => v,
                Err(_) => return Err(format!("not JSON ({e}): {TAKES}")),
            },
            None => return Err(format!("empty: {TAKES}")),
        },
    };
    let Some(object) = value.as_object() else {
        return Err(format!("not a JSON object: {TAKES}"));
    };
    let has = |k: &str| object.contains_key(k);
    let typed =
        |what: &str, r: Result<Kind, serde_json::Error>| r.map_err(|e| format!("{what}, but {e}"));
    let kind = if has("lwar") && has("strs") {
        let lwar = summary_of(&value["lwar"]).ok_or_else(|| {
            "a mixed truth, but its `lwar` has no summary (`lwar.summary`)".to_owned()
        })?;
        typed(
            "a mixed truth",
            lwar.and_then(|lwar| {
                Ok(Kind::Mixed {
                    lwar: Box::new(lwar),
                    strs: serde_json::from_value(value["strs"].clone())?,
                })
            }),
        )?
    } else if value["simulator"] == "lwarscope sim --proto vessel" {
        typed(
            "a Vessel truth",
            serde_json::from_value(value.clone()).map(Kind::Vessel),
        )?
    } else if value["protocol"] == "bg" {
        typed(
            "a Battlegrounds truth",
            serde_json::from_value(value.clone()).map(Kind::Battlegrounds),
        )?
    } else if has("description") && has("sessions") {
        typed(
            "a described protocol's truth",
            serde_json::from_value(value.clone()).map(Kind::Described),
        )?
    } else if has("config") && has("sessions") && has("findings") {
        typed(
            "a Starstrike truth",
            serde_json::from_value(value.clone()).map(Kind::Starstrike),
        )?
    } else if let Some(summary) = summary_of(&value) {
        typed("a summary", summary.map(|s| Kind::Summary(Box::new(s))))?
    } else {
        return Err(format!(
            "not a ground truth or summary lwarscope knows: {TAKES}"
        ));
    };
    let decode_as = match &kind {
        Kind::Battlegrounds(t) => match &t.decode_as {
            Some(d) => vec![
                d.parse()
                    .map_err(|e| format!("a Battlegrounds truth, but its decode_as {e}"))?,
            ],
            None => Vec::new(),
        },
        Kind::Starstrike(t) | Kind::Mixed { strs: t, .. } => starstrike_ports(t)?,
        Kind::Summary(_) | Kind::Described(_) | Kind::Vessel(_) => Vec::new(),
    };
    Ok(Expected { kind, decode_as })
}

/// A summary: a document's `summary` member, or the object itself when it
/// has a summary's members; `None` when it is neither.
fn summary_of(value: &Value) -> Option<Result<Summary, serde_json::Error>> {
    let s = match value.get("summary") {
        Some(s) if s.is_object() => s,
        _ => value,
    };
    ["messages", "findings", "sessions"]
        .iter()
        .all(|k| s.get(k).is_some())
        .then(|| serde_json::from_value(s.clone()))
}

/// The servers' ports of a Starstrike truth, decoded as Starstrike.
fn starstrike_ports(t: &super::starstrike::sim::Truth) -> Result<Vec<DecodeAs>, String> {
    let mut out: Vec<DecodeAs> = Vec::new();
    for s in &t.sessions {
        let port = s
            .server
            .parse::<std::net::SocketAddr>()
            .map_err(|_| {
                format!(
                    "a Starstrike truth, but `{}` is not a server address",
                    s.server
                )
            })?
            .port();
        let d: DecodeAs = format!("udp.port=={port},strs").parse()?;
        if !out.contains(&d) {
            out.push(d);
        }
    }
    Ok(out)
}

impl Expected {
    /// The ports the truth decodes as a protocol (`-d`), before the user's.
    pub fn decode_as(&self) -> &[DecodeAs] {
        &self.decode_as
    }

    /// Every difference between the truth and an analysis (`actual`, of
    /// `frames` frames); empty when they agree.
    pub fn differences(&self, actual: &Summary, frames: u64) -> Vec<String> {
        let mut out = Vec::new();
        let mut used = vec![false; actual.sessions.len()];
        match &self.kind {
            Kind::Summary(expected) => return compare(expected, actual),
            Kind::Starstrike(t) => {
                starstrike(&mut out, t, actual, &mut used);
                not_expected(&mut out, actual, &used);
            }
            Kind::Mixed { lwar, strs } => {
                starstrike(&mut out, strs, actual, &mut used);
                // The other sessions, and the totals they add up to, are lwar's.
                let mut rest = Summary::default();
                for (s, _) in actual.sessions.iter().zip(&used).filter(|(_, u)| !**u) {
                    for d in [&s.c2s, &s.s2c] {
                        add(&mut rest.messages, &d.messages);
                        add(&mut rest.findings, &d.findings);
                        add(&mut rest.violations, &d.violations);
                        add(&mut rest.malformed, &d.malformed);
                    }
                    rest.sessions.push(s.clone());
                }
                out.extend(compare(lwar, &rest));
            }
            Kind::Battlegrounds(t) => battlegrounds(&mut out, t, actual, frames),
            Kind::Vessel(t) => {
                for (client, e) in &t.sessions {
                    let Some(a) = take(&mut out, actual, &mut used, client, &t.environment) else {
                        continue;
                    };
                    vessel(&mut out, client, &t.environment, e, a);
                }
                not_expected(&mut out, actual, &used);
            }
            Kind::Described(t) => {
                number(&mut out, "frames", t.frames, frames);
                for e in &t.sessions {
                    let Some(a) = take(&mut out, actual, &mut used, &e.client, &e.server) else {
                        continue;
                    };
                    let at = format!("session {} -> {}", e.client, e.server);
                    state(&mut out, &at, &e.state, &a.state);
                    counts(
                        &mut out,
                        &format!("{at} c2s.findings"),
                        &e.c2s,
                        &labels(&a.c2s),
                    );
                    counts(
                        &mut out,
                        &format!("{at} s2c.findings"),
                        &e.s2c,
                        &labels(&a.s2c),
                    );
                }
                not_expected(&mut out, actual, &used);
            }
        }
        out
    }
}

/// Starstrike's sessions: each matched by its addresses (marked in `used`).
fn starstrike(
    out: &mut Vec<String>,
    t: &super::starstrike::sim::Truth,
    actual: &Summary,
    used: &mut [bool],
) {
    for e in &t.sessions {
        let Some(a) = take(out, actual, used, &e.client, &e.server) else {
            continue;
        };
        let at = format!("session {} -> {}", e.client, e.server);
        state(out, &at, &e.state, &a.state);
        number(
            out,
            &format!("{at} c2s.packets"),
            e.packets[0],
            a.c2s.packets,
        );
        number(
            out,
            &format!("{at} s2c.packets"),
            e.packets[1],
            a.s2c.packets,
        );
        let mut got = labels(&a.c2s);
        add(&mut got, &labels(&a.s2c));
        counts(out, &format!("{at} findings"), &e.findings, &got);
    }
}

/// A Vessel session against its truth, in the truth's names.
fn vessel(
    out: &mut Vec<String>,
    client: &str,
    server: &str,
    e: &std::collections::BTreeMap<String, Value>,
    a: &SessionSummary,
) {
    let at = format!("session {client} -> {server}");
    if let Some(s) = e.get("state").and_then(Value::as_str) {
        state(out, &at, s, &a.state);
    }
    let mut got = Counts::new();
    got.insert("c2s_packets".into(), a.c2s.packets);
    got.insert("s2c_packets".into(), a.s2c.packets);
    add(&mut got, &a.c2s.messages);
    add(&mut got, &a.s2c.messages);
    for (d, key) in [(&a.c2s, "skipped_c2s"), (&a.s2c, "skipped_s2c")] {
        if let Some(l) = d.loss {
            got.insert(key.into(), l.lost);
        }
        for (kind, name) in [
            ("malformed", "malformed"),
            ("duplicate-packet", "duplicates"),
            ("reordered", "reordered"),
            ("vessel-id-issued", "issued"),
            ("version-refused", "refused"),
            ("join-denied", "denied"),
            ("violation", "violations"),
        ] {
            if let Some(&n) = d.findings.get(kind) {
                *got.entry(name.into()).or_default() += n;
            }
        }
    }
    let expected: Counts = e
        .iter()
        .filter(|(k, _)| *k != "state" && *k != "rejoin")
        .filter_map(|(k, v)| Some((k.clone(), v.as_u64()?)))
        .collect();
    got.retain(|_, n| *n > 0);
    counts(out, &at, &expected, &got);
}

/// A Battlegrounds capture: every session is the truth's.
fn battlegrounds(out: &mut Vec<String>, t: &BgTruth, actual: &Summary, frames: u64) {
    number(out, "frames", t.frames, frames);
    number(out, "sessions", t.sessions, actual.sessions.len() as u64);
    for a in &actual.sessions {
        let at = format!("session {} -> {}", a.client, a.server);
        state(out, &at, &t.state, &a.state);
    }
    for (dir, e) in [("c2s", &t.c2s), ("s2c", &t.s2c)] {
        fn pick<'a>(dir: &str, s: &'a SessionSummary) -> &'a DirectionSummary {
            if dir == "c2s" { &s.c2s } else { &s.s2c }
        }
        let side = |s| pick(dir, s);
        let (mut got, mut malformed, mut props) = (Counts::new(), Counts::new(), 0);
        for s in &actual.sessions {
            add(&mut got, &labels(side(s)));
            add(&mut malformed, &side(s).malformed);
            props += side(s).messages.get("PROP").copied().unwrap_or(0);
        }
        let mut expected: Counts = e
            .counts
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.as_u64()?)))
            .collect();
        let bad: u64 = e.malformed.values().sum();
        if bad > 0 {
            expected.insert("malformed".into(), bad);
        }
        counts(out, &format!("{dir}.findings"), &expected, &got);
        counts(out, &format!("{dir}.malformed"), &e.malformed, &malformed);
        if dir == "s2c" {
            number(out, "s2c.messages.PROP", e.props, props);
        }
    }
}

/// A direction's findings by label: kinds (`lost`), and each violation by its
/// rule (`violation/input-range`) rather than as `violation`.
fn labels(d: &DirectionSummary) -> Counts {
    let mut out: Counts = d
        .findings
        .iter()
        .filter(|(k, _)| *k != "violation")
        .map(|(k, n)| (k.clone(), *n))
        .collect();
    for (rule, n) in &d.violations {
        *out.entry(format!("violation/{rule}")).or_default() += n;
    }
    out
}

fn add(to: &mut Counts, from: &Counts) {
    for (k, n) in from {
        *to.entry(k.clone()).or_default() += n;
    }
}

/// The first session of these addresses not matched yet, or `missing`.
fn take<'a>(
    out: &mut Vec<String>,
    actual: &'a Summary,
    used: &mut [bool],
    client: &str,
    server: &str,
) -> Option<&'a SessionSummary> {
    let found = actual
        .sessions
        .iter()
        .enumerate()
        .find(|(i, a)| !used[*i] && a.client == client && a.server == server);
    match found {
        Some((i, a)) => {
            used[i] = true;
            Some(a)
        }
        None => {
            out.push(format!("session {client} -> {server}: missing"));
            None
        }
    }
}

fn not_expected(out: &mut Vec<String>, actual: &Summary, used: &[bool]) {
    for (a, _) in actual.sessions.iter().zip(used).filter(|(_, u)| !**u) {
        out.push(format!(
            "session {} -> {}: not expected",
            a.client, a.server
        ));
    }
}

fn state(out: &mut Vec<String>, at: &str, expected: &str, got: &str) {
    if expected != got {
        out.push(format!("{at} state: expected {expected}, got {got}"));
    }
}

fn number(out: &mut Vec<String>, at: &str, expected: u64, got: u64) {
    if expected != got {
        out.push(format!("{at}: expected {expected}, got {got}"));
    }
}

/// Counts by name, a missing name counting 0.
fn counts(out: &mut Vec<String>, at: &str, expected: &Counts, got: &Counts) {
    let keys: std::collections::BTreeSet<&String> = expected.keys().chain(got.keys()).collect();
    for k in keys {
        let (x, y) = (
            expected.get(k).copied().unwrap_or(0),
            got.get(k).copied().unwrap_or(0),
        );
        if x != y {
            out.push(format!("{at}.{k}: expected {x}, got {y}"));
        }
    }
}
