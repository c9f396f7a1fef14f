//! The counts the tracker ends with: what the JSON summary carries, what `check`
//! rules test, and what the simulator's ground truth states in the same form.
//!
//! Maps are keyed by stable names (message types as the specification names them,
//! finding kinds and malformed reasons in kebab-case) and leave out zero counts, so
//! that two summaries compare equal exactly when they count the same things.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Counts by name; zero counts are left out.
pub type Counts = BTreeMap<String, u64>;

/// What one direction of one session carried.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DirectionSummary {
    /// lwar packets (datagrams) captured, malformed ones included.
    pub packets: u64,
    /// Their UDP payload bytes.
    pub bytes: u64,
    /// Messages by type, counting those decoded before an error too.
    pub messages: Counts,
    /// Findings by kind raised on this direction's packets.
    pub findings: Counts,
    /// Violations by rule (the sub-kinds of the `violation` findings).
    #[serde(default, skip_serializing_if = "Counts::is_empty")]
    pub violations: Counts,
    /// Malformed packets by reason (a frame cut by the capture is a `truncated`
    /// finding, not counted here).
    #[serde(default, skip_serializing_if = "Counts::is_empty")]
    pub malformed: Counts,
    /// Reliable messages captured for the first time.
    pub first_sends: u64,
    /// Packets lost before the capture point: counted by the protocol when it
    /// numbers its packets (Starstrike's sequence numbers, Battlegrounds'
    /// movement counters: `DirState::count_expected`, `count_lost`), estimated
    /// from the sender's clock otherwise (lwar: `engine::loss`, absent before
    /// the sender's tick is known). An estimate: `--expect` ignores it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<super::LossEstimate>,
    /// Reliable messages captured again before an ack could come back: the
    /// sender repeating by design.
    #[serde(default)]
    pub repeats: u64,
    /// Reliable messages captured again after an ack could have come back (a
    /// loss, or a spurious resend).
    pub resends: u64,
}

/// One session: a client endpoint and a server endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SessionSummary {
    /// The client's address, `ip:port` (`[ip]:port` for IPv6).
    pub client: String,
    /// The server's address.
    pub server: String,
    /// Lifecycle state at the end: `connecting`, `syncing`, `playing`,
    /// `disconnecting`, `closed`, `rejected` or `timed-out`.
    pub state: String,
    pub c2s: DirectionSummary,
    pub s2c: DirectionSummary,
}

/// The whole capture.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Summary {
    /// Messages by type over every session.
    pub messages: Counts,
    /// Their bytes (the UDP payloads that carried them) by type, over every
    /// session, evicted ones included (the messages table's column). Not
    /// serialised: the JSON gives them in `message_rates`.
    #[serde(skip)]
    pub message_bytes: Counts,
    /// Findings by kind over every session.
    pub findings: Counts,
    /// Violations by rule over every session.
    #[serde(default, skip_serializing_if = "Counts::is_empty")]
    pub violations: Counts,
    /// Malformed packets by reason (a frame cut by the capture is a `truncated`
    /// finding, not counted here).
    pub malformed: Counts,
    /// Sessions in the order they were first seen.
    pub sessions: Vec<SessionSummary>,
    /// What the sessions evicted to bound memory add to the totals (absent when
    /// none was): their counts are in `messages`, `findings`..., and here what
    /// the per-session lists cannot hold, so metrics over sessions stay exact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evicted: Option<EvictedTotals>,
}

/// The totals of evicted sessions, both directions together, and the worst
/// of their directions for the metrics a gate takes the worst of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EvictedTotals {
    pub sessions: u64,
    pub packets: u64,
    pub first_sends: u64,
    pub repeats: u64,
    pub resends: u64,
    /// The highest median ack delay of an evicted direction, in µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ack_p50_max_us: Option<u64>,
    /// The highest 95th percentile ack delay of an evicted direction, in µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ack_p95_max_us: Option<u64>,
    /// The highest jitter of an evicted direction, in ns (rounded up).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub jitter_max_ns: u64,
    /// Reliable messages the evicted sessions captured and never saw acked.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unacked: u64,
    /// The loss estimate of the evicted direction that lost the most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_max: Option<super::LossEstimate>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl EvictedTotals {
    /// Adds another's totals, keeping the worst of each worst-of value.
    pub fn add(&mut self, o: &EvictedTotals) {
        self.sessions += o.sessions;
        self.packets += o.packets;
        self.first_sends += o.first_sends;
        self.repeats += o.repeats;
        self.resends += o.resends;
        self.ack_p50_max_us = self.ack_p50_max_us.max(o.ack_p50_max_us);
        self.ack_p95_max_us = self.ack_p95_max_us.max(o.ack_p95_max_us);
        self.jitter_max_ns = self.jitter_max_ns.max(o.jitter_max_ns);
        self.unacked += o.unacked;
        self.loss_max = worse_loss(self.loss_max, o.loss_max);
    }

    /// Folds in one direction of an evicted session.
    pub fn fold_direction(&mut self, d: &super::DirState) {
        self.ack_p50_max_us = self.ack_p50_max_us.max(d.ack_delay_us(0.5));
        self.ack_p95_max_us = self.ack_p95_max_us.max(d.ack_delay_us(0.95));
        let jitter_ns = (d.jitter_ms * 1e6).ceil();
        if jitter_ns.is_finite() && jitter_ns > 0.0 {
            self.jitter_max_ns = self.jitter_max_ns.max(jitter_ns as u64);
        }
        self.unacked += d.unacked() as u64;
        self.loss_max = worse_loss(self.loss_max, d.loss());
    }
}

/// The estimate with the larger loss fraction.
fn worse_loss(
    a: Option<super::LossEstimate>,
    b: Option<super::LossEstimate>,
) -> Option<super::LossEstimate> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y.fraction() > x.fraction() { y } else { x }),
        (x, y) => x.or(y),
    }
}

impl Summary {
    /// Every session the capture had: those listed and those evicted.
    pub fn session_count(&self) -> u64 {
        self.sessions.len() as u64 + self.evicted.map_or(0, |e| e.sessions)
    }

    /// Resends per reliable message over every session, evicted ones included.
    pub fn resend_rate(&self) -> f64 {
        let e = self.evicted.unwrap_or_default();
        let (mut first, mut repeats, mut resent) = (e.first_sends, e.repeats, e.resends);
        for s in &self.sessions {
            for d in [&s.c2s, &s.s2c] {
                first += d.first_sends;
                repeats += d.repeats;
                resent += d.resends;
            }
        }
        resend_rate(first, repeats, resent)
    }
}

/// Adds `n` to the count named `name`, leaving zero counts out.
pub fn bump(counts: &mut Counts, name: &str, n: u64) {
    if n > 0 {
        *counts.entry(name.to_owned()).or_insert(0) += n;
    }
}

/// Resends (after an ack could have come back) per reliable message captured
/// (first sends, repeats by design and resends), as a fraction; 0 when there
/// was none.
pub fn resend_rate(first_sends: u64, repeats: u64, resends: u64) -> f64 {
    match first_sends + repeats + resends {
        0 => 0.0,
        total => resends as f64 / total as f64,
    }
}

impl Summary {
    /// Adds another protocol's summary into this one.
    pub fn merge(&mut self, other: Summary) {
        for (mine, theirs) in [
            (&mut self.messages, other.messages),
            (&mut self.message_bytes, other.message_bytes),
            (&mut self.findings, other.findings),
            (&mut self.violations, other.violations),
            (&mut self.malformed, other.malformed),
        ] {
            for (name, n) in theirs {
                bump(mine, &name, n);
            }
        }
        self.sessions.extend(other.sessions);
        if let Some(theirs) = other.evicted {
            self.evicted.get_or_insert_default().add(&theirs);
        }
    }
}

/// The differences between an expected summary and an actual one, as
/// `findings.resend: expected 3, got 5`. Sessions are matched by their
/// addresses, in order: the second session of an address pair (a client that
/// reconnected from the same port) with the second.
pub fn compare(expected: &Summary, actual: &Summary) -> Vec<String> {
    let mut out = Vec::new();
    counts(&mut out, "messages", &expected.messages, &actual.messages);
    counts(&mut out, "findings", &expected.findings, &actual.findings);
    counts(
        &mut out,
        "violations",
        &expected.violations,
        &actual.violations,
    );
    counts(
        &mut out,
        "malformed",
        &expected.malformed,
        &actual.malformed,
    );
    let mut used = vec![false; actual.sessions.len()];
    for e in &expected.sessions {
        let found = actual
            .sessions
            .iter()
            .enumerate()
            .find(|(i, a)| !used[*i] && a.client == e.client && a.server == e.server);
        let Some((i, a)) = found else {
            out.push(format!("session {} -> {}: missing", e.client, e.server));
            continue;
        };
        used[i] = true;
        let at = format!("session {} -> {}", e.client, e.server);
        if e.state != a.state {
            out.push(format!("{at} state: expected {}, got {}", e.state, a.state));
        }
        compare_direction(&mut out, &format!("{at} c2s"), &e.c2s, &a.c2s);
        compare_direction(&mut out, &format!("{at} s2c"), &e.s2c, &a.s2c);
    }
    let unexpected = actual
        .sessions
        .iter()
        .zip(&used)
        .filter(|(_, used)| !**used);
    for (a, _) in unexpected {
        out.push(format!(
            "session {} -> {}: not expected",
            a.client, a.server
        ));
    }
    out
}

/// The differences of one direction of a session.
fn compare_direction(out: &mut Vec<String>, at: &str, x: &DirectionSummary, y: &DirectionSummary) {
    number(out, &format!("{at}.packets"), x.packets, y.packets);
    number(out, &format!("{at}.bytes"), x.bytes, y.bytes);
    number(
        out,
        &format!("{at}.first_sends"),
        x.first_sends,
        y.first_sends,
    );
    number(out, &format!("{at}.resends"), x.resends, y.resends);
    counts(out, &format!("{at}.messages"), &x.messages, &y.messages);
    counts(out, &format!("{at}.findings"), &x.findings, &y.findings);
    counts(
        out,
        &format!("{at}.violations"),
        &x.violations,
        &y.violations,
    );
    counts(out, &format!("{at}.malformed"), &x.malformed, &y.malformed);
}

/// The keys of two count maps whose counts differ (a missing key counts 0).
fn counts(out: &mut Vec<String>, at: &str, e: &BTreeMap<String, u64>, a: &BTreeMap<String, u64>) {
    let keys: std::collections::BTreeSet<&String> = e.keys().chain(a.keys()).collect();
    for k in keys {
        let (x, y) = (
            e.get(k).copied().unwrap_or(0),
            a.get(k).copied().unwrap_or(0),
        );
        if x != y {
            out.push(format!("{at}.{k}: expected {x}, got {y}"));
        }
    }
}

fn number(out: &mut Vec<String>, at: &str, x: u64, y: u64) {
    if x != y {
        out.push(format!("{at}: expected {x}, got {y}"));
    }
}
