//! `lwarscope check FILE...`: the CI gate.
//!
//! Rules come from flags (`--deny malformed,violation,lost`, `--max
//! resend-rate=5%`, `--min packets=1`) and/or a TOML file (`--rules FILE`):
//!
//! ```toml
//! deny = ["malformed", "violation/wrong-sender"]
//! [max]
//! resend-rate = "5%"
//! ack-delay-p95 = "250ms"
//! reordered = 0
//! [min]
//! packets = 1
//! ```
//!
//! A rule names a finding kind (`resend`, `lost`, `violation`...), a violation
//! rule (`violation/<rule>`, or namespaced: `lwar.violation.after-disconnect`), a
//! session outcome (`timed-out`, `rejected`: the sessions that ended so), or a
//! metric: `resend-rate` (a fraction or a
//! percentage), `ack-delay-p50`/`ack-delay-p95` (the worst session direction, in
//! ms; `250ms` or `0.25s` also read), `jitter` (worst, ms), `unacked` (reliable
//! messages never acked at the end, all sessions), `packets` (lwar packets),
//! `sessions`, `loss` (packets lost before the capture point, estimated from the
//! sender's clock: the worst session direction, `2%` or `0.02`). A rate
//! (`resend-rate`, `loss`) written without `%` is a fraction, and is refused
//! from 1 up (`loss=5` would be 500 %, a gate that never fails): write `5%`. `--expect FILE.json` compares the counts per message type, finding
//! kind, violation rule, malformed reason and session with an expected summary,
//! or with any simulator's ground truth, each in its own form
//! ([`crate::proto::truth`]: lwar, Starstrike, Battlegrounds, Vessel, described, mixed;
//! the `-d` a truth names applies before the user's).
//!
//! `--allow NAME` (or `allow = [...]` in the rules file) accepts a known
//! deviation: the findings of that kind or rule no longer count in any rule, so
//! `--deny violation --allow lwar.violation.after-disconnect` fails on every other
//! violation.
//!
//! Each file gets a [`Verdict`]; the exit status is 0 when every file passes, 1
//! when a rule failed, 2 on an error ([`exit_code`]).
//!
//! No rule passes on nothing: a capture (or `--window`) with no packet of a
//! known protocol (a game on another port, a capture begun after the
//! handshake, DNS only) is an error, exit status 2, in the verdict line, the
//! JSON verdicts and JUnit (case `packets of a known protocol`), with why and
//! what to try: `no packet of a known protocol among 566 UDP datagrams; port
//! 7455: 556 datagrams, 99 % decode as Battlegrounds: try -d
//! udp.port==7455,bg` when a protocol's decoder reads most of a busy port's
//! datagrams (see [`super::skipped`]), else `(top port 7455: 556); ... try -d
//! udp.port==7455,PROTO`. A capture that has packets of a known protocol and
//! a port that decodes mostly as one gets the same note on standard error,
//! one line (`lwarscope: FILE: ...`). An error, not a failure:
//! nothing was judged, as for a file that cannot be read; the rules did not
//! find the game at fault. The rules may say otherwise: a `min packets` rule
//! decides instead (`--min packets=0` accepts an empty capture, `--min
//! packets=1` fails it as a rule, exit status 1), and so does `max packets=0`.
//!
//! A file's name is shown escaped ([`crate::text`]): a control character in
//! it (an escape sequence, a newline that would forge a `PASS` line, a C1
//! control) is written `\u{1b}`, `\n`, `\u{9b}` in the verdict line and in
//! JUnit, where any other text has the characters XML 1.0 forbids escaped the
//! same way, so the file is always well-formed; JSON keeps the name whole.

use super::Outcome;
pub use crate::engine::summary::compare;
use crate::engine::{FindingKind, Rule};
use crate::text::{printable, xml};
use quick_xml::Writer;
use quick_xml::events::BytesText;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Write};
use std::path::Path;

/// A rule set that cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("rule `{rule}`: {reason}")]
    BadRule { rule: String, reason: String },
    #[error("cannot read {path}: {source}", path = crate::text::printable(.path))]
    Read {
        path: String,
        #[source]
        source: io::Error,
    },
    #[error("rules file {path}: {message}", path = crate::text::printable(.path))]
    RulesFile { path: String, message: String },
    #[error("expected result {path}: {message}", path = crate::text::printable(.path))]
    Expect { path: String, message: String },
}

/// What a rule measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    Finding(FindingKind),
    Violation(Rule),
    ResendRate,
    AckDelayP50,
    AckDelayP95,
    Jitter,
    Unacked,
    Packets,
    Sessions,
    /// Packets lost before the capture point, estimated: the worst direction.
    Loss,
    /// Sessions that ended in this lifecycle state (`timed-out`, `rejected`).
    Outcome(&'static str),
}

/// Findings that no rule counts: known deviations a CI run accepts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Allowed {
    pub kinds: Vec<FindingKind>,
    pub rules: Vec<Rule>,
}

impl Allowed {
    /// A finding kind (`resend`), or a rule (`after-disconnect`,
    /// `violation/after-disconnect`, `lwar.violation.after-disconnect`).
    pub fn add(&mut self, name: &str) -> Result<(), CheckError> {
        let name = name.trim();
        match Metric::parse(name) {
            Some(Metric::Finding(k)) => self.kinds.push(k),
            Some(Metric::Violation(r)) => self.rules.push(r),
            _ => match crate::proto::rule_by_name(name) {
                Some(r) => self.rules.push(r),
                None => {
                    return Err(CheckError::BadRule {
                        rule: format!("allow {name}"),
                        reason: "--allow takes a finding kind or a violation rule \
                                 (violation/RULE or PROTO.violation.RULE)"
                            .into(),
                    });
                }
            },
        }
        Ok(())
    }

    /// Counts are kept by a rule's short name (as in the summary), so a rule
    /// allowed by its full name allows that name's count.
    fn allows_rule(&self, r: Rule) -> bool {
        self.rules.iter().any(|a| a.name() == r.name())
            || self.kinds.contains(&FindingKind::VIOLATION)
    }
}

impl Metric {
    /// Every name [`Metric::parse`] takes (rules by their short and full
    /// names), for the suggestion of an unknown one.
    fn names() -> impl Iterator<Item = &'static str> {
        const METRICS: [&str; 8] = [
            "resend-rate",
            "ack-delay-p50",
            "ack-delay-p95",
            "jitter",
            "unacked",
            "packets",
            "sessions",
            "loss",
        ];
        let states = crate::proto::REGISTRY
            .iter()
            .flat_map(|p| p.info.states.iter().copied());
        METRICS
            .into_iter()
            .chain(crate::proto::all_kinds().map(|k| k.name()))
            .chain(crate::proto::all_rules().map(|r| r.name()))
            .chain(states)
    }

    pub fn parse(name: &str) -> Option<Metric> {
        Some(match name {
            "resend-rate" => Metric::ResendRate,
            "ack-delay-p50" => Metric::AckDelayP50,
            "ack-delay-p95" => Metric::AckDelayP95,
            "jitter" => Metric::Jitter,
            "unacked" => Metric::Unacked,
            "packets" => Metric::Packets,
            "sessions" => Metric::Sessions,
            "loss" => Metric::Loss,
            _ => match name.strip_prefix("violation/") {
                Some(rule) => Metric::Violation(crate::proto::rule_by_name(rule)?),
                None => match crate::proto::kind_by_name(name) {
                    Some(k) => Metric::Finding(k),
                    None => match crate::proto::rule_by_name(name) {
                        Some(r) if name.contains(".violation.") => Metric::Violation(r),
                        _ => Metric::Outcome(crate::proto::state_by_name(name)?),
                    },
                },
            },
        })
    }

    /// The value in an outcome: counts, a fraction, or milliseconds; allowed
    /// findings do not count.
    pub fn value(self, o: &Outcome, allowed: &Allowed) -> f64 {
        let evicted = o.summary.evicted.unwrap_or_default();
        // The worst over the sessions held and those evicted (folded in when
        // they left).
        let worst = |f: &dyn Fn(&super::DirView) -> Option<f64>, evicted: Option<f64>| {
            o.sessions
                .iter()
                .flat_map(|s| [f(&s.c2s), f(&s.s2c)])
                .chain([evicted])
                .flatten()
                .fold(0.0, f64::max)
        };
        let ms = |us: Option<u64>| us.map(|us| us as f64 / 1e3);
        match self {
            Metric::Finding(k) if allowed.kinds.contains(&k) => 0.0,
            Metric::Finding(k) if k == FindingKind::VIOLATION => {
                let all = o.summary.findings.get(k.name()).copied().unwrap_or(0);
                let accepted: u64 = allowed
                    .rules
                    .iter()
                    .map(|r| o.summary.violations.get(r.name()).copied().unwrap_or(0))
                    .sum();
                all.saturating_sub(accepted) as f64
            }
            Metric::Finding(k) => o.summary.findings.get(k.name()).copied().unwrap_or(0) as f64,
            Metric::Violation(r) if allowed.allows_rule(r) => 0.0,
            Metric::Violation(r) => o.summary.violations.get(r.name()).copied().unwrap_or(0) as f64,
            Metric::Outcome(state) => o
                .summary
                .sessions
                .iter()
                .filter(|s| s.state == state)
                .count() as f64,
            Metric::ResendRate => o.resend_rate(),
            Metric::AckDelayP50 => worst(&|d| d.ack_p50_ms, ms(evicted.ack_p50_max_us)),
            Metric::AckDelayP95 => worst(&|d| d.ack_p95_ms, ms(evicted.ack_p95_max_us)),
            Metric::Jitter => worst(
                &|d| Some(d.jitter_ms),
                Some(evicted.jitter_max_ns as f64 / 1e6),
            ),
            Metric::Unacked => {
                o.sessions
                    .iter()
                    .map(|s| (s.c2s.unacked + s.s2c.unacked) as f64)
                    .sum::<f64>()
                    + evicted.unacked as f64
            }
            Metric::Packets => o.capture.packets() as f64,
            Metric::Loss => worst(&|d| d.loss, evicted.loss_max.map(|l| l.fraction())),
            Metric::Sessions => o.summary.session_count() as f64,
        }
    }

    /// Reads a limit: `5%` or `0.05` for rates, `250`, `250ms` or `0.25s` for
    /// delays, a whole number for counts; why not, when it cannot.
    ///
    /// A rate written without `%` is a fraction, and only below 1: `loss=5`
    /// would be 500 %, a gate that can never fail, and `loss=1` (100 %) is as
    /// likely meant as 1 %, so both are refused, suggesting `5%`.
    fn limit(self, text: &str) -> Result<f64, String> {
        let text = text.trim();
        let invalid = || "the value is not a valid number for this rule".to_owned();
        match self {
            Metric::ResendRate | Metric::Loss => match text.strip_suffix('%') {
                Some(p) => p.trim().parse::<f64>().ok().map(|p| p / 100.0),
                None => match text.parse::<f64>() {
                    Ok(v) if v >= 1.0 && v.is_finite() => {
                        return Err(format!(
                            "a rate without `%` is a fraction, so {text} would be {}%: \
                             write `{text}%` for {text} percent (or `{}` as a fraction)",
                            significant(v * 100.0, 0),
                            v / 100.0,
                        ));
                    }
                    v => v.ok(),
                },
            },
            Metric::AckDelayP50 | Metric::AckDelayP95 | Metric::Jitter => {
                if let Some(ms) = text.strip_suffix("ms") {
                    ms.trim().parse().ok()
                } else if let Some(s) = text.strip_suffix('s') {
                    s.trim().parse::<f64>().ok().map(|s| s * 1e3)
                } else {
                    text.parse().ok()
                }
            }
            _ => text.parse::<u64>().ok().map(|n| n as f64),
        }
        .filter(|v: &f64| v.is_finite() && *v >= 0.0)
        .ok_or_else(invalid)
    }

    /// A value in the rule's unit, with digits enough that two different
    /// values never read the same (`0.04 ms`, not `0.0 ms`).
    pub fn show(self, v: f64) -> String {
        match self {
            Metric::ResendRate | Metric::Loss => format!("{}%", significant(v * 100.0, 2)),
            Metric::AckDelayP50 | Metric::AckDelayP95 | Metric::Jitter => {
                format!("{} ms", significant(v, 1))
            }
            _ => format!("{v}"),
        }
    }
}

/// `v` with `decimals` decimals, or more when it is small and not zero, so that
/// at least two significant digits show (up to 6 decimals): `19.94`, `0.0041`.
fn significant(v: f64, decimals: usize) -> String {
    let mut d = decimals;
    while d < 6 && v != 0.0 && v.abs() < 10f64.powi(1 - d as i32) {
        d += 1;
    }
    format!("{v:.d$}")
}

/// Above or below.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// `--deny`: a count that must be zero.
    Deny,
    Max,
    Min,
}

/// One rule: a metric and its bound.
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    /// The rule as written: `deny lost`, `max resend-rate=5%`.
    pub name: String,
    pub metric: Metric,
    pub bound: Bound,
    pub value: f64,
}

impl Limit {
    /// `name` for `--deny`, `name=value` for `--max` and `--min`.
    pub fn parse(text: &str, bound: Bound) -> Result<Limit, CheckError> {
        let bad = |reason: &str| CheckError::BadRule {
            rule: text.to_owned(),
            reason: reason.to_owned(),
        };
        let unknown = || {
            let name = text.split_once('=').map_or(text, |(n, _)| n).trim();
            let hint = super::filter::nearest(name, Metric::names())
                .map(|n| format!("; did you mean `{n}`?"))
                .unwrap_or_default();
            bad(&format!(
                "unknown name: use a finding kind (resend, lost, malformed, violation...), \
                 violation/<rule>, a session outcome (timed-out, rejected), resend-rate, loss, \
                 ack-delay-p50, ack-delay-p95, jitter, unacked, packets or sessions{hint}"
            ))
        };
        if bound == Bound::Deny {
            let metric = Metric::parse(text.trim()).ok_or_else(unknown)?;
            if !matches!(
                metric,
                Metric::Finding(_) | Metric::Violation(_) | Metric::Outcome(_)
            ) {
                return Err(bad(
                    "--deny takes finding kinds and session outcomes; use --max for metrics",
                ));
            }
            return Ok(Limit {
                name: format!("deny {}", text.trim()),
                metric,
                bound,
                value: 0.0,
            });
        }
        let (name, value) = text
            .split_once('=')
            .ok_or_else(|| bad("expected NAME=VALUE"))?;
        let metric = Metric::parse(name.trim()).ok_or_else(unknown)?;
        let value = metric.limit(value).map_err(|why| bad(&why))?;
        let word = if bound == Bound::Max { "max" } else { "min" };
        Ok(Limit {
            name: format!("{word} {}={}", name.trim(), value_text(text)),
            metric,
            bound,
            value,
        })
    }

    /// The rule applied to the measured value `v`.
    pub fn result(&self, v: f64) -> RuleResult {
        RuleResult {
            name: self.name.clone(),
            metric: Some(self.metric_name().to_owned()),
            measured: Some(self.metric.show(v)),
            limit: match self.bound {
                Bound::Deny => Some("0 (denied)".to_owned()),
                Bound::Max => Some(format!("<= {}", self.metric.show(self.value))),
                Bound::Min => Some(format!(">= {}", self.metric.show(self.value))),
            },
            value: Some(v),
            failure: self.failure(v),
        }
    }

    /// `None` when the rule holds, else why not.
    pub fn check(&self, o: &Outcome, allowed: &Allowed) -> Option<String> {
        self.failure(self.metric.value(o, allowed))
    }

    /// Why the measured value `v` breaks the rule, if it does.
    fn failure(&self, v: f64) -> Option<String> {
        let failed = match self.bound {
            Bound::Deny | Bound::Max => v > self.value,
            Bound::Min => v < self.value,
        };
        failed.then(|| match self.bound {
            Bound::Deny => format!("{} {} (denied)", self.metric.show(v), self.metric_name()),
            Bound::Max => format!(
                "{} is {}, above {}",
                self.metric_name(),
                self.metric.show(v),
                self.metric.show(self.value)
            ),
            Bound::Min => format!(
                "{} is {}, below {}",
                self.metric_name(),
                self.metric.show(v),
                self.metric.show(self.value)
            ),
        })
    }

    fn metric_name(&self) -> &str {
        let n = self.name.split_once(' ').map_or(&*self.name, |(_, n)| n);
        n.split_once('=').map_or(n, |(n, _)| n)
    }
}

fn value_text(text: &str) -> &str {
    text.split_once('=').map_or("", |(_, v)| v.trim())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    max: BTreeMap<String, toml::Value>,
    #[serde(default)]
    min: BTreeMap<String, toml::Value>,
}

fn toml_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        _ => String::new(),
    }
}

/// Every rule a run checks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rules {
    pub limits: Vec<Limit>,
    /// Findings no rule counts.
    pub allowed: Allowed,
    /// The expected result (a simulator's truth or a summary), and the file
    /// it came from.
    pub expect: Option<(String, crate::proto::truth::Expected)>,
}

impl Rules {
    /// Adds the rules of a TOML text (`path` names it in errors).
    pub fn add_toml(&mut self, text: &str, path: &str) -> Result<(), CheckError> {
        let file: RulesFile = toml::from_str(text).map_err(|e| CheckError::RulesFile {
            path: path.to_owned(),
            message: e.message().to_owned(),
        })?;
        for d in &file.deny {
            self.limits.push(Limit::parse(d, Bound::Deny)?);
        }
        for a in &file.allow {
            self.allowed.add(a)?;
        }
        for (map, bound) in [(&file.max, Bound::Max), (&file.min, Bound::Min)] {
            for (name, value) in map {
                let text = format!("{name}={}", toml_text(value));
                // Named with its table and file: `rules file r.toml: rule
                // `[max] loss = 5`: ...`.
                let limit = Limit::parse(&text, bound).map_err(|e| match e {
                    CheckError::BadRule { reason, .. } => CheckError::RulesFile {
                        path: path.to_owned(),
                        message: format!(
                            "rule `[{}] {name} = {}`: {reason}",
                            if bound == Bound::Max { "max" } else { "min" },
                            match value {
                                toml::Value::String(s) => format!("{s:?}"),
                                v => toml_text(v),
                            }
                        ),
                    },
                    e => e,
                })?;
                self.limits.push(limit);
            }
        }
        Ok(())
    }

    /// The rules of `lwarscope check`'s arguments: the rules file first, then the
    /// flags, then the expected result.
    pub fn from_args(args: &super::CheckArgs) -> Result<Rules, CheckError> {
        // A rules or expected-result file is small: read at most this much,
        // so that `--expect /dev/zero` is an error, not a read until memory
        // runs out.
        const MAX_RULES_FILE: u64 = 16 << 20;
        let read = |p: &Path| {
            use std::io::Read;
            let err = |source| CheckError::Read {
                path: p.display().to_string(),
                source,
            };
            let mut text = String::new();
            std::fs::File::open(p)
                .and_then(|f| f.take(MAX_RULES_FILE + 1).read_to_string(&mut text))
                .map_err(err)?;
            if text.len() as u64 > MAX_RULES_FILE {
                return Err(err(std::io::Error::other(format!(
                    "larger than {} MiB: not a rules or result file",
                    MAX_RULES_FILE >> 20
                ))));
            }
            Ok(text)
        };
        let mut rules = Rules::default();
        if let Some(path) = &args.rules {
            rules.add_toml(&read(path)?, &path.display().to_string())?;
        }
        for d in &args.deny {
            rules.limits.push(Limit::parse(d, Bound::Deny)?);
        }
        for a in &args.allow {
            rules.allowed.add(a)?;
        }
        for m in &args.max {
            rules.limits.push(Limit::parse(m, Bound::Max)?);
        }
        for m in &args.min {
            rules.limits.push(Limit::parse(m, Bound::Min)?);
        }
        if let Some(path) = &args.expect {
            let name = path.display().to_string();
            let expected =
                crate::proto::truth::read(&read(path)?).map_err(|message| CheckError::Expect {
                    path: name.clone(),
                    message,
                })?;
            rules.expect = Some((name, expected));
        }
        Ok(rules)
    }

    /// Whether the rules say what an empty capture gives: a `min packets`
    /// rule (`--min packets=0` accepts one, `--min packets=1` fails it as a
    /// rule) or `max packets=0`.
    fn judge_empty(&self) -> bool {
        self.limits.iter().any(|l| {
            l.metric == Metric::Packets
                && (l.bound == Bound::Min || (l.bound == Bound::Max && l.value == 0.0))
        })
    }

    /// Checks one outcome against every rule. An outcome with no packet of a
    /// known protocol is an error (exit status 2), with why and what to try,
    /// unless the rules judge the number of packets themselves
    /// (`Rules::judge_empty`): no rule can pass on nothing.
    pub fn check(&self, file: &str, o: &Outcome) -> Verdict {
        if o.capture.packets() == 0 && !self.judge_empty() {
            return Verdict {
                error_case: NOTHING_KNOWN,
                ..Verdict::error(file, nothing_known(o))
            };
        }
        let mut results: Vec<RuleResult> = self
            .limits
            .iter()
            .map(|l| l.result(l.metric.value(o, &self.allowed)))
            .collect();
        if let Some((path, expected)) = &self.expect {
            let diffs = expected.differences(&o.summary, o.capture.frames);
            let failure = (!diffs.is_empty()).then(|| {
                let shown = diffs.iter().take(8).cloned().collect::<Vec<_>>().join("; ");
                if diffs.len() > 8 {
                    format!("{shown}; and {} more differences", diffs.len() - 8)
                } else {
                    shown
                }
            });
            results.push(RuleResult {
                name: format!("expect {path}"),
                metric: None,
                measured: None,
                limit: None,
                value: None,
                failure,
            });
        }
        Verdict {
            file: file.to_owned(),
            window: None,
            results,
            error: None,
            error_case: "read capture",
        }
    }
}

/// The JUnit test case of a capture with no packet of a known protocol.
const NOTHING_KNOWN: &str = "packets of a known protocol";

/// Why an outcome has no packet of a known protocol, and what to try: `no
/// packet of a known protocol among 1234 UDP datagrams (top port 7455: 556);
/// ...try -d udp.port==7455,PROTO`.
fn nothing_known(o: &Outcome) -> String {
    let u = &o.unknown;
    let none = "no packet of a known protocol";
    if u.recognised > 0 {
        return format!(
            "{none} in the part judged ({} in the whole capture)",
            u.recognised
        );
    }
    match u.top_port {
        Some(_) if let Some(h) = u.ports.suggestion() => {
            format!("{none} among {} UDP datagrams; {h}", u.datagrams)
        }
        Some((port, n)) => {
            let names: Vec<&str> = crate::proto::REGISTRY.iter().map(|p| p.info.name).collect();
            format!(
                "{none} among {} UDP datagrams (top port {port}: {n}); if the game uses \
                 another port or the capture began after its handshake, try \
                 -d udp.port=={port},PROTO (PROTO: {})",
                u.datagrams,
                names.join(", ")
            )
        }
        None if o.capture.frames > 0 => format!(
            "{none}: none of its {} frames is a UDP datagram (a capture filter that \
             leaves the game out?)",
            o.capture.frames
        ),
        None => format!("{none}: the capture holds no frame"),
    }
}

/// One rule applied to one file.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RuleResult {
    /// The rule as written: `max resend-rate=25%`.
    #[serde(rename = "rule")]
    pub name: String,
    /// What the rule measures (`resend-rate`), the value measured in its
    /// unit (`19.94%`) and the limit it must keep (`<= 25.00%`); `None` for
    /// `--expect`, which compares whole summaries.
    pub metric: Option<String>,
    pub measured: Option<String>,
    pub limit: Option<String>,
    /// The measured value in the rule's unit: a count, a fraction, ms.
    pub value: Option<f64>,
    /// Why it failed; `None` when it passed.
    pub failure: Option<String>,
}

/// The result of one file.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Verdict {
    pub file: String,
    /// The part of the file judged (`--window START..END`, as given); `None`
    /// for all of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<String>,
    pub results: Vec<RuleResult>,
    /// The file could not be analysed (unreadable, not a capture), or holds
    /// no packet of a known protocol.
    pub error: Option<String>,
    /// The JUnit test case an error is reported as (`read capture`).
    #[serde(skip)]
    pub error_case: &'static str,
}

impl RuleResult {
    /// `resend-rate 19.94% <= 25.00%`, or `malformed 0` for a denied kind.
    pub fn shown(&self) -> String {
        let metric = self.metric.as_deref().unwrap_or(&self.name);
        match (&self.measured, &self.limit) {
            (Some(m), Some(l)) if !l.ends_with("(denied)") => format!("{metric} {m} {l}"),
            (Some(m), _) => format!("{metric} {m}"),
            _ => self.name.clone(),
        }
    }
}

impl Verdict {
    pub fn error(file: &str, error: impl fmt::Display) -> Verdict {
        Verdict {
            file: file.to_owned(),
            window: None,
            results: Vec::new(),
            error: Some(error.to_string()),
            error_case: "read capture",
        }
    }

    pub fn passed(&self) -> bool {
        self.error.is_none() && self.results.iter().all(|r| r.failure.is_none())
    }

    /// The verdict line: `PASS file (3 rules)`, `FAIL file: why; why`, `ERROR file: why`.
    pub fn line(&self, color: bool) -> impl fmt::Display + '_ {
        fmt::from_fn(move |f| {
            let paint = |f: &mut fmt::Formatter<'_>, code: &str, word: &str| {
                if color {
                    write!(f, "\x1b[{code}m{word}\x1b[0m")
                } else {
                    f.write_str(word)
                }
            };
            if let Some(e) = &self.error {
                paint(f, "1;31", "ERROR")?;
                write!(f, " {}", printable(&self.file))?;
                if let Some(w) = &self.window {
                    write!(f, " [window {}]", printable(w))?;
                }
                return write!(f, ": {}", printable(e));
            }
            if self.passed() {
                paint(f, "1;32", "PASS")?;
                let n = self.results.len();
                write!(f, "  {}", printable(&self.file))?;
                if let Some(w) = &self.window {
                    write!(f, " [window {}]", printable(w))?;
                }
                write!(f, " ({n} rule{})", if n == 1 { "" } else { "s" })?;
                // What was measured, so a pass close to its limit shows.
                for (i, r) in self
                    .results
                    .iter()
                    .filter(|r| r.measured.is_some())
                    .enumerate()
                {
                    f.write_str(if i == 0 { ": " } else { ", " })?;
                    write!(f, "{}", printable(&r.shown()))?;
                }
                return Ok(());
            }
            paint(f, "1;31", "FAIL")?;
            write!(f, "  {}", printable(&self.file))?;
            if let Some(w) = &self.window {
                write!(f, " [window {}]", printable(w))?;
            }
            f.write_str(": ")?;
            let failed = self
                .results
                .iter()
                .filter_map(|r| r.failure.as_ref().map(|why| (r, why)));
            for (i, (r, why)) in failed.enumerate() {
                if i > 0 {
                    f.write_str("; ")?;
                }
                write!(f, "{} [{}]", printable(why), printable(&r.name))?;
            }
            Ok(())
        })
    }
}

/// 0 when every file passes, 1 when a rule failed, 2 when a file could not be
/// analysed.
pub fn exit_code(verdicts: &[Verdict]) -> u8 {
    if verdicts.iter().any(|v| v.error.is_some()) {
        2
    } else if verdicts.iter().all(Verdict::passed) {
        0
    } else {
        1
    }
}

/// Writes the verdicts as JUnit XML: one test suite per file, one test case per
/// rule (an unreadable file is one case with an `<error>`).
pub fn write_junit(out: impl Write, verdicts: &[Verdict]) -> io::Result<()> {
    let mut w = Writer::new_with_indent(out, b' ', 2);
    w.get_mut()
        .write_all(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")?;
    let count = |v: &Verdict| -> (usize, usize, usize) {
        match &v.error {
            Some(_) => (1, 0, 1),
            None => (
                v.results.len(),
                v.results.iter().filter(|r| r.failure.is_some()).count(),
                0,
            ),
        }
    };
    let (tests, failures, errors) = verdicts
        .iter()
        .map(count)
        .fold((0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2));
    w.create_element("testsuites")
        .with_attribute(("name", "lwarscope check"))
        .with_attribute(("tests", tests.to_string().as_str()))
        .with_attribute(("failures", failures.to_string().as_str()))
        .with_attribute(("errors", errors.to_string().as_str()))
        .write_inner_content(|w| {
            for v in verdicts {
                let (tests, failures, errors) = count(v);
                // A window judged is named as the verdict line names it, and
                // kept as a property for tools that read them.
                // Names and messages as XML 1.0 allows them: the file's name
                // escaped as the verdict line shows it, any other text with
                // the characters XML forbids escaped.
                let file = printable(&v.file).to_string();
                let name = match &v.window {
                    Some(window) => format!("{file} [window {}]", printable(window)),
                    None => file.clone(),
                };
                w.create_element("testsuite")
                    .with_attribute(("name", name.as_str()))
                    .with_attribute(("tests", tests.to_string().as_str()))
                    .with_attribute(("failures", failures.to_string().as_str()))
                    .with_attribute(("errors", errors.to_string().as_str()))
                    .write_inner_content(|w| {
                        if let Some(window) = &v.window {
                            w.create_element("properties").write_inner_content(|w| {
                                w.create_element("property")
                                    .with_attribute(("name", "window"))
                                    .with_attribute(("value", &*xml(window)))
                                    .write_empty()?;
                                Ok(())
                            })?;
                        }
                        if let Some(e) = &v.error {
                            w.create_element("testcase")
                                .with_attribute(("name", v.error_case))
                                .with_attribute(("classname", file.as_str()))
                                .write_inner_content(|w| {
                                    let e = xml(e);
                                    w.create_element("error")
                                        .with_attribute(("message", &*e))
                                        .write_text_content(BytesText::new(&e))?;
                                    Ok(())
                                })?;
                        }
                        for r in &v.results {
                            let case = w
                                .create_element("testcase")
                                .with_attribute(("name", &*xml(&r.name)))
                                .with_attribute(("classname", file.as_str()));
                            match (&r.failure, &r.measured) {
                                (None, None) => {
                                    case.write_empty()?;
                                }
                                (None, Some(_)) => {
                                    let shown = xml(&r.shown()).into_owned();
                                    case.write_inner_content(|w| {
                                        w.create_element("system-out")
                                            .write_text_content(BytesText::new(&shown))?;
                                        Ok(())
                                    })?;
                                }
                                (Some(why), _) => {
                                    let why = xml(why);
                                    case.write_inner_content(|w| {
                                        w.create_element("failure")
                                            .with_attribute(("message", &*why))
                                            .write_text_content(BytesText::new(&why))?;
                                        Ok(())
                                    })?;
                                }
                            }
                        }
                        Ok(())
                    })?;
            }
            Ok(())
        })?;
    w.get_mut().write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Summary;

    #[test]
    fn parses_limits() {
        let l = Limit::parse("resend-rate=5%", Bound::Max).unwrap();
        assert_eq!(l.metric, Metric::ResendRate);
        assert!((l.value - 0.05).abs() < 1e-12);
        assert_eq!(l.name, "max resend-rate=5%");
        let l = Limit::parse("resend-rate=0.1", Bound::Max).unwrap();
        assert!((l.value - 0.1).abs() < 1e-12);
        let l = Limit::parse("ack-delay-p95=0.25s", Bound::Max).unwrap();
        assert!((l.value - 250.0).abs() < 1e-9);
        let l = Limit::parse("ack-delay-p95 = 250ms", Bound::Max).unwrap();
        assert!((l.value - 250.0).abs() < 1e-9);
        assert_eq!(
            Limit::parse("violation/wrong-sender", Bound::Deny)
                .unwrap()
                .metric,
            Metric::Violation(crate::proto::lwar::findings::rules::WRONG_SENDER)
        );
        assert_eq!(
            Limit::parse("packets=1", Bound::Min).unwrap().metric,
            Metric::Packets
        );
        for (bad, bound) in [
            ("resends", Bound::Deny),
            ("resend-rate", Bound::Deny),
            ("lost", Bound::Max),
            ("lost=x", Bound::Max),
            ("lost=-1", Bound::Max),
            ("resend-rate=five", Bound::Max),
            // A bare rate of 1 or more: 500 %, 100 %, a gate that never fails.
            ("loss=5", Bound::Max),
            ("loss=1", Bound::Max),
            ("resend-rate=5", Bound::Min),
            ("violation/nope=1", Bound::Max),
        ] {
            assert!(Limit::parse(bad, bound).is_err(), "{bad}");
        }
    }

    #[test]
    fn reads_a_rules_file() {
        let mut rules = Rules::default();
        rules
            .add_toml(
                "deny = [\"malformed\", \"violation\"]\n[max]\nresend-rate = \"5%\"\nreordered = 0\n[min]\npackets = 1\n",
                "rules.toml",
            )
            .unwrap();
        let names: Vec<_> = rules.limits.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "deny malformed",
                "deny violation",
                "max reordered=0",
                "max resend-rate=5%",
                "min packets=1"
            ]
        );
        let e = Rules::default()
            .add_toml("[max]\nloss = 5", "r.toml")
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "rules file r.toml: rule `[max] loss = 5`: a rate without `%` is a fraction, \
             so 5 would be 500%: write `5%` for 5 percent (or `0.05` as a fraction)"
        );
        let mut rules = Rules::default();
        rules
            .add_toml("[max]\nloss = 0.05\nresend-rate = \"5%\"", "r.toml")
            .unwrap();
        assert!(rules.limits.iter().all(|l| (l.value - 0.05).abs() < 1e-12));
        let e = Rules::default()
            .add_toml("dney = [\"lost\"]", "r.toml")
            .unwrap_err();
        assert!(e.to_string().contains("r.toml"), "{e}");
        assert!(
            Rules::default()
                .add_toml("[max]\nresends = 1", "r.toml")
                .is_err()
        );
    }

    #[test]
    fn exit_codes() {
        let lost = Limit::parse("lost", Bound::Deny).unwrap();
        let pass = Verdict {
            file: "a".into(),
            window: None,
            results: vec![lost.result(0.0)],
            error: None,
            error_case: "read capture",
        };
        let mut fail = pass.clone();
        fail.results[0].failure = Some("3 lost (denied)".into());
        let err = Verdict::error("c", "cannot open");
        assert_eq!(exit_code(std::slice::from_ref(&pass)), 0);
        assert_eq!(exit_code(&[pass.clone(), fail.clone()]), 1);
        assert_eq!(exit_code(&[fail.clone(), err.clone()]), 2);
        assert_eq!(pass.line(false).to_string(), "PASS  a (1 rule): lost 0");
        assert_eq!(
            fail.line(false).to_string(),
            "FAIL  a: 3 lost (denied) [deny lost]"
        );
        assert_eq!(err.line(false).to_string(), "ERROR c: cannot open");
    }

    #[test]
    fn values_show_with_enough_digits_to_tell_them_apart() {
        assert_eq!(significant(19.94, 2), "19.94");
        assert_eq!(significant(0.0, 1), "0.0");
        assert_eq!(significant(0.04, 1), "0.040");
        assert_eq!(significant(0.0041, 1), "0.0041");
        assert_eq!(significant(0.00000001, 1), "0.000000");
        assert_eq!(significant(250.0, 1), "250.0");
        // A failure never reads `0.0 ms, above 0.0 ms`.
        let l = Limit::parse("ack-delay-p95=0.01ms", Bound::Max).unwrap();
        let r = l.result(0.04);
        assert_eq!(
            r.failure.as_deref(),
            Some("ack-delay-p95 is 0.040 ms, above 0.010 ms")
        );
        let l = Limit::parse("resend-rate=25%", Bound::Max).unwrap();
        let r = l.result(0.1994);
        assert_eq!(r.shown(), "resend-rate 19.94% <= 25.00%");
        assert_eq!(r.failure, None);
        let l = Limit::parse("packets=1", Bound::Min).unwrap();
        assert_eq!(l.result(899.0).shown(), "packets 899 >= 1");
        assert_eq!(
            l.result(0.0).failure.as_deref(),
            Some("packets is 0, below 1")
        );
    }

    #[test]
    fn compares_summaries() {
        let mut e = Summary::default();
        e.findings.insert("resend".into(), 3);
        e.sessions.push(crate::engine::SessionSummary {
            client: "1.2.3.4:5".into(),
            server: "1.2.3.4:32422".into(),
            state: "closed".into(),
            ..Default::default()
        });
        let mut a = e.clone();
        assert!(compare(&e, &a).is_empty());
        a.findings.insert("resend".into(), 5);
        a.sessions[0].state = "timed-out".into();
        a.sessions[0].c2s.packets = 2;
        let d = compare(&e, &a);
        assert_eq!(
            d,
            [
                "findings.resend: expected 3, got 5",
                "session 1.2.3.4:5 -> 1.2.3.4:32422 state: expected closed, got timed-out",
                "session 1.2.3.4:5 -> 1.2.3.4:32422 c2s.packets: expected 0, got 2",
            ]
        );
        a.sessions[0].client = "9.9.9.9:1".into();
        let d = compare(&e, &a);
        assert!(d.iter().any(|x| x.ends_with("missing")), "{d:?}");
        assert!(d.iter().any(|x| x.ends_with("not expected")), "{d:?}");
    }

    /// Two sessions of one address pair (a client that reconnected from the
    /// same port) are matched in order. Regression (found by the rules_file
    /// fuzz target): both were compared with the first, so a summary differed
    /// from itself, and an extra session of the pair went unnoticed.
    #[test]
    fn sessions_of_one_address_pair_are_matched_in_order() {
        let session = |packets| crate::engine::SessionSummary {
            client: "1.2.3.4:5".into(),
            server: "1.2.3.4:32422".into(),
            state: "closed".into(),
            c2s: crate::engine::DirectionSummary {
                packets,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut e = Summary::default();
        e.sessions.push(session(10));
        e.sessions.push(session(20));
        assert_eq!(compare(&e, &e), Vec::<String>::new());
        let mut fewer = e.clone();
        fewer.sessions.pop();
        assert_eq!(
            compare(&e, &fewer),
            ["session 1.2.3.4:5 -> 1.2.3.4:32422: missing"]
        );
        assert_eq!(
            compare(&fewer, &e),
            ["session 1.2.3.4:5 -> 1.2.3.4:32422: not expected"]
        );
    }
}
