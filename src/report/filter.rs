//! The display filter language of `-Y EXPR`: selects packets (and findings) by
//! message type, sequence number, peer, player, finding kind and more.
//!
//! # Grammar
//!
//! ```text
//! expr       := or
//! or         := and { ("||" | "or") and }
//! and        := unary { ("&&" | "and") unary }
//! unary      := ("!" | "not") unary | primary
//! primary    := "(" expr ")" | field op value | field "in" set | name
//! op         := "==" | "!=" | "<" | ">" | "<=" | ">=" | "contains" | "matches" | "~"
//!               (and Wireshark's words: eq ne lt gt le ge)
//! set        := "{" value-or-range { [","] value-or-range } "}"   (range: 10..20)
//! value      := word | "quoted string"
//! name       := a field that stands alone (malformed, finding, seqno, player),
//!               a message type (Join), a finding kind (resend, violation,
//!               violation/wrong-sender), a violation rule (wrong-sender) or a
//!               direction (c2s, s2c)
//! ```
//!
//! # Fields
//!
//! | field | value | meaning |
//! |-------|-------|---------|
//! | `type` | message type (`Join`, `update`...) | the packet carries such a message |
//! | `seqno` | number | a reliable message, or a finding on the packet, with that seqno (a finding for a gap of numbers, by any of them; `seqno` alone: any reliable message) |
//! | `ack` | number | the header's ack |
//! | `ts`, `timestamp` | number | the header's timestamp (sender's ms) |
//! | `frame` | number | the capture's frame number |
//! | `len` | number | the UDP payload length |
//! | `src`, `dst`, `peer` | `ip` or `ip:port` (`[::1]:32422`) | source, destination, either |
//! | `port` | number | source or destination port |
//! | `player` | `gen:index` or `index` | a message naming that player (`player` alone: any) |
//! | `finding` | kind, `violation/<rule>` or rule | a finding raised on the packet (`finding` alone: any) |
//! | `severity` | `note`, `warning`, `error` | a finding of that severity (`>=` works) |
//! | `session` | number | the session (0-based, as in the report) |
//! | `dir` | `c2s` or `s2c` | the direction |
//! | `malformed` | (alone) | the packet, or part of it, could not be decoded |
//! | `time`, `frame.time_relative` | seconds (`2.5`) | capture time since the first packet |
//! | `frame.time_epoch` | seconds since 1970 | capture time |
//! | `udp.length` | number | the UDP header's length: 8 + the payload's (`len`) |
//! | `frame.len` | number | the length on the wire of the frame that carried the datagram, link header included (of a reassembled datagram: its last fragment's frame) |
//! | `frame.cap_len` | number | the bytes of that frame the capture kept (`frame.len` or fewer) |
//! | `lwar`, `strs`, `bg`, `vessel`... | (alone) | the packet is of that protocol (its name or title, `starstrike`, any case; `!lwar`: of another) |
//! | `udp`, `ip`, `ipv6` | (alone) | the packet came over UDP (every packet does), IPv4, IPv6 |
//!
//! Only the packets of a known protocol reach the filter: the skipped
//! traffic is counted in the report, not filtered.
//! Wireshark's names work as aliases: `ip.src`, `ip.dst`, `ip.addr` (and
//! `ipv6.*`) for `src`, `dst`, `peer`; `udp.srcport`, `udp.dstport`,
//! `udp.port`; `frame.number` for `frame`. Addresses take a CIDR block
//! (`ip.src == 10.0.0.0/8`). `contains` (case-sensitive) and `matches` (a
//! regular expression, case-insensitive as Wireshark's; `(?-i)` makes it
//! sensitive) apply to text and bytes fields: `lwar.chat.text contains "gg"`,
//! `lwar.name matches "^bot[0-9]+$"`. `field in {1 2 5..9}` holds when the
//! field equals one of the values or falls in one of the ranges. An unknown
//! name gets a suggestion: `reorder` -> did you mean `reordered`?
//!
//! Each protocol's registered fields are there too, by their `proto.field` name
//! (`lwar.name`, `lwar.input.aim_x`, `strs.seq`): numbers compare with every
//! operator (`0x` hexadecimal works), text and `a:b` pairs with `==` and `!=`,
//! enums by number or by name (any case); a name alone holds when the packet has
//! such a field. A field holds when *any* of its occurrences matches. `lwarscope
//! --list-fields` lists them. A field test walks only the groups of fields
//! that may hold its field (`FieldSink::wants_any`, as `-T fields` does:
//! `lwar.name` skips the header and every message type without a name).
//!
//! Fields of messages and findings (`type`, `seqno`, `player`, `finding`,
//! `severity`) hold when *any* message or finding matches, and `a != b` is always
//! `!(a == b)`: `seqno != 3` selects the packets without a message of seqno 3.
//! Ordered comparisons (`<`, `>`...) work on numbers and severities only.
//!
//! Examples: `Join`, `type == Update && dir == s2c`, `resend || lost`,
//! `seqno >= 10 && seqno <= 20`, `peer == 10.0.0.2:32422`, `player == 0:1`,
//! `finding == violation/wrong-sender`, `!(Input || Update)`.
//!
//! A compiled [`Filter`] evaluates without allocating.

use crate::capture::Datagram;
use crate::engine::{
    Detail, Direction, Finding, FindingKind, PacketEvent, Rule, SessionId, Severity,
};
use crate::proto::dissect::{Dissector, MessageItem};
use crate::proto::field::{FieldDef, FieldSet, FieldSink, FieldType, GroupDefs, Value};
use std::cell::Cell;
use std::fmt;
use std::net::{IpAddr, SocketAddr};

/// A filter expression that does not parse: what is wrong, and at which column.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: {message}")]
pub struct FilterError {
    /// 1-based column (in characters) of the offending token.
    pub column: usize,
    pub message: String,
}

impl FilterError {
    /// The error with the expression and a caret under the column:
    ///
    /// ```text
    /// column 10: expected a value after `==`
    ///   seqno ==
    ///            ^
    /// ```
    pub fn render<'a>(&'a self, expr: &'a str) -> impl fmt::Display + 'a {
        fmt::from_fn(move |f| {
            writeln!(f, "{self}")?;
            writeln!(f, "  {expr}")?;
            write!(f, "  {:>width$}", "^", width = self.column)
        })
    }
}

/// A compiled display filter.
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    root: Node,
    /// Where `time` counts from: the first packet evaluated, unless set.
    origin: std::sync::OnceLock<crate::capture::Timestamp>,
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Or(Box<Node>, Box<Node>),
    And(Box<Node>, Box<Node>),
    Not(Box<Node>),
    Test(Test),
    Field(FieldTest),
}

/// A test of a protocol's registered field (`strs.seq >= 10`, `lwar.name ==
/// "ann"`, or the name alone: the packet has such a field).
#[derive(Debug, Clone, PartialEq)]
struct FieldTest {
    def: &'static FieldDef,
    /// `None`: the field is present.
    test: Option<(Cmp, Literal)>,
}

/// The value a registered field is compared with.
#[derive(Debug, Clone, PartialEq)]
enum Literal {
    Number(f64),
    /// `a:b`.
    Pair(u32, u32),
    /// Text, or an enum's name (compared without case).
    Text(Box<str>),
    /// `contains`: bytes found within a text or bytes field.
    Contains(Box<[u8]>),
    /// `matches`: a regular expression over a text, bytes or enum name.
    Matches(Pattern),
}

/// A compiled `matches` pattern; patterns compare by their source.
#[derive(Debug, Clone)]
struct Pattern(regex::bytes::Regex);

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_str() == other.0.as_str()
    }
}

impl FieldTest {
    fn holds(&self, v: &Value<'_>) -> bool {
        let Some((cmp, lit)) = &self.test else {
            return true;
        };
        match (lit, v) {
            (Literal::Number(n), v) => v.as_f64().is_some_and(|x| match cmp {
                Cmp::Eq => x == *n,
                Cmp::Lt => x < *n,
                Cmp::Gt => x > *n,
                Cmp::Le => x <= *n,
                Cmp::Ge => x >= *n,
            }),
            (Literal::Pair(a, b), Value::Pair(x, y)) => (a, b) == (x, y),
            (Literal::Text(t), Value::Text(bytes)) => *bytes == t.as_bytes(),
            (Literal::Text(t), Value::Enum { name: Some(n), .. }) => n.eq_ignore_ascii_case(t),
            (Literal::Contains(needle), Value::Text(bytes)) => contains(bytes, needle),
            (Literal::Matches(p), Value::Text(bytes)) => p.0.is_match(bytes),
            (Literal::Matches(p), Value::Enum { name: Some(n), .. }) => p.0.is_match(n.as_bytes()),
            _ => false,
        }
    }
}

/// Whether `needle` occurs in `haystack` (an empty needle always does).
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}

/// Looks for a field that satisfies a [`FieldTest`] in a packet's walk.
struct FieldMatch<'t> {
    test: &'t FieldTest,
    found: bool,
}

impl FieldSink for FieldMatch<'_> {
    fn field(&mut self, f: crate::proto::field::Field<'_>) {
        if !self.found && std::ptr::eq(f.def, self.test.def) {
            self.found = self.test.holds(&f.value);
        }
    }

    /// Only the groups that may hold the tested field: the walk skips the
    /// others (a message type, a node, a header without it), as it does for
    /// `-T fields`.
    fn wants_any(&mut self, key: usize, defs: &GroupDefs<'_>) -> bool {
        group_holds(key, self.test.def, defs)
    }

    /// The tested field alone: the walk passes over the group's others.
    fn wanted(&mut self, table: &'static [FieldDef]) -> FieldSet {
        FieldSet::only(table, self.test.def)
    }
}

/// Slots of [`GROUPS`].
const GROUP_SLOTS: usize = 256;

thread_local! {
    /// Whether a group (by its key) holds a field (by its definition's
    /// address), direct-mapped: a filter asks the same few groups of every
    /// packet, and the answer never changes (keys and definitions are
    /// static), so it is worked out once a run rather than once a packet;
    /// a miss is listed again. Per thread, as a filter may be shared between
    /// threads (the terminal UI's).
    static GROUPS: [Cell<(usize, usize, bool)>; GROUP_SLOTS] =
        const { [const { Cell::new((0, 0, false)) }; GROUP_SLOTS] };
}

/// Whether the group `key`, whose definitions `defs` lists, holds `def`.
fn group_holds(key: usize, def: &'static FieldDef, defs: &GroupDefs<'_>) -> bool {
    let d = std::ptr::from_ref(def) as usize;
    let slot = ((key / 8) ^ (d / std::mem::size_of::<FieldDef>().max(1))) % GROUP_SLOTS;
    GROUPS.with(|groups| {
        let cell = &groups[slot];
        match cell.get() {
            (k, f, holds) if k == key && f == d => holds,
            _ => {
                let mut holds = false;
                defs(&mut |g| holds = holds || std::ptr::eq(g, def));
                cell.set((key, d, holds));
                holds
            }
        }
    })
}

/// An ordered comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmp {
    Eq,
    Lt,
    Gt,
    Le,
    Ge,
}

impl Cmp {
    fn holds<T: Ord>(self, a: T, b: T) -> bool {
        match self {
            Cmp::Eq => a == b,
            Cmp::Lt => a < b,
            Cmp::Gt => a > b,
            Cmp::Le => a <= b,
            Cmp::Ge => a >= b,
        }
    }

    /// Whether some number of `lo..=hi` (`lo <= hi`) passes `cmp v`.
    fn holds_in(self, lo: u64, hi: u64, v: u64) -> bool {
        match self {
            Cmp::Eq => lo <= v && v <= hi,
            Cmp::Lt | Cmp::Le => self.holds(lo, v),
            Cmp::Gt | Cmp::Ge => self.holds(hi, v),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Num {
    Seqno,
    Ack,
    Timestamp,
    Frame,
    Len,
    Port,
    SrcPort,
    DstPort,
    Session,
    /// The UDP header's length: the payload's and the header's 8 bytes.
    UdpLength,
    /// The frame's length on the wire.
    FrameLen,
    /// The frame's bytes captured.
    FrameCapLen,
}

/// Which clock `time` fields read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Clock {
    /// Seconds since the first packet the filter saw.
    Relative,
    /// Seconds since 1970.
    Epoch,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Src,
    Dst,
    Peer,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Addr {
    Ip(IpAddr),
    Socket(SocketAddr),
    /// A CIDR block: `10.0.0.0/8`.
    Net(ipnet::IpNet),
}

impl Addr {
    fn matches(self, a: SocketAddr) -> bool {
        match self {
            Addr::Ip(ip) => a.ip() == ip,
            Addr::Socket(s) => a == s,
            Addr::Net(net) => net.contains(&a.ip()),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PlayerPat {
    Any,
    /// `generation:index`.
    Id(u32, u32),
    Index(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FindingPat {
    Any,
    Kind(FindingKind),
    /// One protocol's rule, by its full name (`strs.violation.wrong-direction`).
    Rule(Rule),
    /// Every protocol's rule of that short name (`wrong-direction`).
    RuleNamed(&'static str),
}

impl FindingPat {
    fn matches(self, f: &Finding) -> bool {
        match self {
            FindingPat::Any => true,
            FindingPat::Kind(k) => f.kind == k,
            FindingPat::Rule(r) => f.rule == Some(r),
            FindingPat::RuleNamed(n) => f.rule.is_some_and(|r| r.name() == n),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Test {
    Num(Num, Cmp, u64),
    Reliable,
    /// A message type's name, as a protocol registers it.
    Type(&'static str),
    Addr(Side, Addr),
    Player(PlayerPat),
    Finding(FindingPat),
    Severity(Cmp, Severity),
    Dir(Direction),
    Malformed,
    Time(Clock, Cmp, f64),
    /// A protocol's name alone (`lwar`, `strs`, `bg`): the packet is of it.
    Proto(&'static str),
    /// `udp`, `ip`, `ipv6` alone: the packet came over it.
    Layer(Layer),
}

/// The layers below the protocols, by the name tshark gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layer {
    Udp,
    Ip,
    Ipv6,
}

impl Layer {
    const NAMES: [(&'static str, Layer); 3] = [
        ("udp", Layer::Udp),
        ("ip", Layer::Ip),
        ("ipv6", Layer::Ipv6),
    ];
}

/// What a filter is evaluated against: a packet, or a finding on its own (for
/// the findings raised at the end of a capture).
#[derive(Clone, Copy)]
struct Ctx<'a> {
    frame: u64,
    /// Capture time of the packet (or the finding), and of the first packet.
    ts: crate::capture::Timestamp,
    origin: crate::capture::Timestamp,
    session: SessionId,
    dir: Direction,
    datagram: Option<&'a Datagram<'a>>,
    dissector: Option<&'static dyn Dissector>,
    /// The packet's protocol (none for a finding on its own).
    protocol: Option<&'static crate::engine::ProtocolInfo>,
    findings: &'a [Finding],
}

impl Ctx<'_> {
    /// True when a decodable message, in order, satisfies `pred`.
    fn any_message(&self, mut pred: impl FnMut(&MessageItem<'_>) -> bool) -> bool {
        let (Some(dissector), Some(d)) = (self.dissector, self.datagram) else {
            return false;
        };
        let mut found = false;
        let _ = dissector.messages(d.payload, &mut |m| found = found || pred(m));
        found
    }

    /// A number of the packet's header (`ack`, `timestamp`), if it decodes.
    fn header(&self, name: &str) -> Option<u64> {
        let (dissector, d) = (self.dissector?, self.datagram?);
        let mut value = None;
        let _ = dissector.header(d.payload, &mut |h| {
            if h.name == name {
                value = Some(h.value);
            }
        });
        value
    }

    /// The packet's header does not decode.
    fn undecodable(&self) -> bool {
        match (self.dissector, self.datagram) {
            (Some(dissector), Some(d)) => dissector.header(d.payload, &mut |_| {}).is_err(),
            _ => false,
        }
    }
}

impl Filter {
    /// Parses and checks an expression.
    pub fn parse(expr: &str) -> Result<Filter, FilterError> {
        let mut p = Parser {
            lexer: Lexer { src: expr, pos: 0 },
            peeked: None,
            depth: 0,
            terms: 0,
        };
        let root = p.or()?;
        match p.next()? {
            (Tok::End, _) => Ok(Filter {
                root,
                origin: std::sync::OnceLock::new(),
            }),
            (tok, at) => Err(p.error(at, format!("unexpected {tok} after a whole expression"))),
        }
    }

    /// Counts `time` from `origin` (the capture's first packet) rather than
    /// from the first packet evaluated: for filters that may see packets out of
    /// order, as the terminal UI's.
    pub fn with_origin(self, origin: crate::capture::Timestamp) -> Filter {
        let _ = self.origin.set(origin);
        self
    }

    /// True when the packet is selected.
    pub fn matches(&self, event: &PacketEvent<'_>) -> bool {
        let ts = event.datagram.ts;
        let ctx = Ctx {
            frame: event.datagram.frame,
            ts,
            origin: *self.origin.get_or_init(|| ts),
            session: event.session,
            dir: event.direction,
            datagram: Some(event.datagram),
            dissector: Some(event.dissector()),
            protocol: Some(event.protocol),
            findings: event.findings,
        };
        eval(&self.root, &ctx)
    }

    /// True when a finding on its own (one raised at the end of the capture, with
    /// no packet) is selected: packet fields are false, finding fields apply.
    pub fn matches_finding(&self, finding: &Finding) -> bool {
        let ctx = Ctx {
            frame: finding.frame,
            ts: finding.ts,
            origin: *self.origin.get_or_init(|| finding.ts),
            session: finding.session,
            dir: finding.direction,
            datagram: None,
            dissector: None,
            protocol: None,
            findings: std::slice::from_ref(finding),
        };
        eval(&self.root, &ctx)
    }
}

fn eval(node: &Node, ctx: &Ctx<'_>) -> bool {
    match node {
        Node::Or(a, b) => eval(a, ctx) || eval(b, ctx),
        Node::And(a, b) => eval(a, ctx) && eval(b, ctx),
        Node::Not(a) => !eval(a, ctx),
        Node::Test(t) => test(t, ctx),
        Node::Field(t) => {
            let (Some(dissector), Some(d)) = (ctx.dissector, ctx.datagram) else {
                return false;
            };
            let mut m = FieldMatch {
                test: t,
                found: false,
            };
            let _ = dissector.fields(d.payload, &mut m);
            m.found
        }
    }
}

/// A registered field of any protocol, by its `proto.field` name.
fn registered(name: &str) -> Option<&'static FieldDef> {
    crate::proto::REGISTRY
        .iter()
        .flat_map(|p| p.info.dissector.field_defs().iter())
        .find(|f| f.name == name)
}

/// Whether a finding's sequence number passes `cmp v`. A finding that
/// stands for a gap of numbers ([`Detail::Missed`]: `first` to `last`,
/// wrapping past the top of the number space when `last < first`) passes
/// when one of them does, as a field that occurs more than once does in
/// Wireshark's filters: `seqno == 6` selects the finding of the gap 4 to 7.
fn finding_seqno_holds(f: &Finding, cmp: Cmp, v: u64) -> bool {
    match f.detail {
        Detail::Missed { first, last, .. } if first != last => {
            let (first, last) = (u64::from(first), u64::from(last));
            if first <= last {
                cmp.holds_in(first, last, v)
            } else {
                cmp.holds_in(first, u64::MAX, v) || cmp.holds_in(0, last, v)
            }
        }
        _ => f.seqno.is_some_and(|s| cmp.holds(u64::from(s), v)),
    }
}

fn test(t: &Test, ctx: &Ctx<'_>) -> bool {
    let d = ctx.datagram;
    match *t {
        Test::Num(field, cmp, v) => match field {
            Num::Seqno => {
                ctx.any_message(|m| m.seqno.is_some_and(|s| cmp.holds(s as u64, v)))
                    || ctx.findings.iter().any(|f| finding_seqno_holds(f, cmp, v))
            }
            Num::Ack => ctx.header("ack").is_some_and(|a| cmp.holds(a, v)),
            Num::Timestamp => ctx.header("timestamp").is_some_and(|t| cmp.holds(t, v)),
            Num::Frame => cmp.holds(ctx.frame, v),
            Num::Len => d.is_some_and(|d| cmp.holds(d.payload_len as u64, v)),
            Num::UdpLength => d.is_some_and(|d| cmp.holds(d.payload_len as u64 + 8, v)),
            Num::FrameLen => d.is_some_and(|d| cmp.holds(u64::from(d.frame_len), v)),
            Num::FrameCapLen => d.is_some_and(|d| cmp.holds(u64::from(d.frame_cap_len), v)),
            Num::Port => d.is_some_and(|d| {
                cmp.holds(d.src.port() as u64, v) || cmp.holds(d.dst.port() as u64, v)
            }),
            Num::SrcPort => d.is_some_and(|d| cmp.holds(d.src.port() as u64, v)),
            Num::DstPort => d.is_some_and(|d| cmp.holds(d.dst.port() as u64, v)),
            Num::Session => cmp.holds(ctx.session as u64, v),
        },
        Test::Reliable => ctx.any_message(|m| m.seqno.is_some()),
        Test::Type(ty) => ctx.any_message(|m| m.type_name == ty),
        Test::Addr(side, addr) => d.is_some_and(|d| match side {
            Side::Src => addr.matches(d.src),
            Side::Dst => addr.matches(d.dst),
            Side::Peer => addr.matches(d.src) || addr.matches(d.dst),
        }),
        Test::Player(pat) => ctx.any_message(|m| {
            m.player.is_some_and(|(generation, index)| match pat {
                PlayerPat::Any => true,
                PlayerPat::Id(g, i) => (generation, index) == (g, i),
                PlayerPat::Index(i) => index == i,
            })
        }),
        Test::Finding(pat) => ctx.findings.iter().any(|f| pat.matches(f)),
        Test::Severity(cmp, s) => ctx.findings.iter().any(|f| cmp.holds(f.severity(), s)),
        Test::Dir(dir) => ctx.dir == dir,
        Test::Time(clock, cmp, secs) => {
            let t = match clock {
                Clock::Relative => ctx.ts.nanos() as f64 / 1e9 - ctx.origin.nanos() as f64 / 1e9,
                Clock::Epoch => ctx.ts.secs_f64(),
            };
            match cmp {
                Cmp::Eq => t == secs,
                Cmp::Lt => t < secs,
                Cmp::Gt => t > secs,
                Cmp::Le => t <= secs,
                Cmp::Ge => t >= secs,
            }
        }
        Test::Proto(name) => ctx.protocol.is_some_and(|p| p.name == name),
        Test::Layer(layer) => d.is_some_and(|d| match layer {
            Layer::Udp => true,
            Layer::Ip => d.src.is_ipv4(),
            Layer::Ipv6 => d.src.is_ipv6(),
        }),
        Test::Malformed => {
            ctx.undecodable()
                || ctx
                    .findings
                    .iter()
                    .any(|f| f.kind == FindingKind::MALFORMED || f.kind == FindingKind::TRUNCATED)
        }
    }
}

// ---------------------------------------------------------------------------
// Lexer

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok<'a> {
    LParen,
    RParen,
    Not,
    And,
    Or,
    /// A comparison; `None` is `!=`.
    Op(Option<Cmp>, &'static str),
    LBrace,
    RBrace,
    Comma,
    /// `~`, Wireshark's `matches`.
    Tilde,
    Word(&'a str),
    Str(&'a str),
    End,
}

impl fmt::Display for Tok<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::LParen => f.write_str("`(`"),
            Tok::RParen => f.write_str("`)`"),
            Tok::Not => f.write_str("`!`"),
            Tok::And => f.write_str("`&&`"),
            Tok::Or => f.write_str("`||`"),
            Tok::Op(_, s) => write!(f, "`{s}`"),
            Tok::LBrace => f.write_str("`{`"),
            Tok::RBrace => f.write_str("`}`"),
            Tok::Comma => f.write_str("`,`"),
            Tok::Tilde => f.write_str("`~`"),
            Tok::Word(w) => write!(f, "`{w}`"),
            Tok::Str(s) => write!(f, "\"{s}\""),
            Tok::End => f.write_str("the end"),
        }
    }
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
}

const SPECIAL: &str = "()!=<>&|\"{},~";

impl<'a> Lexer<'a> {
    fn column(&self, byte: usize) -> usize {
        self.src[..byte.min(self.src.len())].chars().count() + 1
    }

    /// The next token and the byte offset where it starts.
    fn next(&mut self) -> Result<(Tok<'a>, usize), FilterError> {
        let rest = &self.src[self.pos..];
        let trimmed = rest.trim_start();
        self.pos += rest.len() - trimmed.len();
        let at = self.pos;
        let two = trimmed.get(..2).unwrap_or("");
        let (tok, len) = match two {
            "&&" => (Tok::And, 2),
            "||" => (Tok::Or, 2),
            "==" => (Tok::Op(Some(Cmp::Eq), "=="), 2),
            "!=" => (Tok::Op(None, "!="), 2),
            "<=" => (Tok::Op(Some(Cmp::Le), "<="), 2),
            ">=" => (Tok::Op(Some(Cmp::Ge), ">="), 2),
            _ => match trimmed.chars().next() {
                None => (Tok::End, 0),
                Some('(') => (Tok::LParen, 1),
                Some(')') => (Tok::RParen, 1),
                Some('{') => (Tok::LBrace, 1),
                Some('}') => (Tok::RBrace, 1),
                Some(',') => (Tok::Comma, 1),
                Some('~') => (Tok::Tilde, 1),
                Some('!') => (Tok::Not, 1),
                Some('<') => (Tok::Op(Some(Cmp::Lt), "<"), 1),
                Some('>') => (Tok::Op(Some(Cmp::Gt), ">"), 1),
                Some('=') => return Err(self.error(at, "`=` is not an operator: use `==`")),
                Some('&') => return Err(self.error(at, "`&` is not an operator: use `&&`")),
                Some('|') => return Err(self.error(at, "`|` is not an operator: use `||`")),
                Some('"') => match trimmed[1..].find('"') {
                    Some(end) => (Tok::Str(&trimmed[1..1 + end]), end + 2),
                    None => return Err(self.error(at, "unclosed quote")),
                },
                Some(_) => {
                    let len = trimmed
                        .find(|c: char| c.is_whitespace() || SPECIAL.contains(c))
                        .unwrap_or(trimmed.len());
                    let word = &trimmed[..len];
                    let tok = match word {
                        "and" => Tok::And,
                        "or" => Tok::Or,
                        "not" => Tok::Not,
                        _ => Tok::Word(word),
                    };
                    (tok, len)
                }
            },
        };
        self.pos += len;
        Ok((tok, at))
    }

    fn error(&self, byte: usize, message: impl Into<String>) -> FilterError {
        FilterError {
            column: self.column(byte),
            message: message.into(),
        }
    }
}

// ---------------------------------------------------------------------------
// Parser

struct Parser<'a> {
    lexer: Lexer<'a>,
    peeked: Option<(Tok<'a>, usize)>,
    /// Open `(` and `!` around the token being parsed.
    depth: usize,
    /// Tests and operators so far.
    terms: usize,
}

/// How deep `(` and `!` may nest: parsing and evaluating recurse that deep.
const MAX_DEPTH: usize = 64;
/// How many tests and operators an expression may have.
const MAX_TERMS: usize = 1024;

/// The fields, for error messages.
const FIELDS: &str = "type, seqno, ack, ts, timestamp, frame, len, src, dst, peer, port, player, finding, severity, session, dir, malformed, time";

/// Every name a filter knows by itself, and Wireshark's aliases.
const NAMES: &[&str] = &[
    "type",
    "seqno",
    "ack",
    "ts",
    "timestamp",
    "frame",
    "len",
    "src",
    "dst",
    "peer",
    "port",
    "player",
    "finding",
    "kind",
    "severity",
    "session",
    "dir",
    "malformed",
    "time",
    "frame.time_relative",
    "frame.time_epoch",
    "frame.number",
    "frame.len",
    "frame.cap_len",
    "ip.src",
    "ip.dst",
    "ip.addr",
    "ipv6.src",
    "ipv6.dst",
    "ipv6.addr",
    "udp.port",
    "udp.srcport",
    "udp.dstport",
    "udp.length",
    "udp",
    "ip",
    "ipv6",
];

/// The known name closest to an unknown one, if one is close: a typo, or a
/// word cut short (`reorder` for `reordered`).
fn suggestion(word: &str) -> Option<String> {
    let registry = crate::proto::REGISTRY.iter();
    let candidates = NAMES
        .iter()
        .copied()
        .chain(
            registry
                .clone()
                .flat_map(|p| p.info.message_types.iter().copied()),
        )
        .chain(
            registry
                .clone()
                .flat_map(|p| p.info.dissector.field_defs().iter().map(|f| f.name)),
        )
        .chain(registry.clone().map(|p| p.info.name))
        .chain(crate::proto::all_kinds().map(|k| k.name()))
        .chain(crate::proto::all_rules().map(|r| r.name()))
        .chain(["c2s", "s2c", "note", "warning", "error"]);
    nearest(word, candidates).map(str::to_owned)
}

/// The candidate closest to `word`, if one is close: a typo, or a word cut
/// short (`reorder` for `reordered`). What `-Y`, `-e` and `check --deny`
/// suggest for a name they do not know.
pub(crate) fn nearest<'a>(
    word: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
    let lower = word.to_ascii_lowercase();
    let budget = (word.chars().count() / 3).max(1);
    candidates
        .filter(|c| *c != word)
        .map(|c| {
            let d = strsim::damerau_levenshtein(&lower, &c.to_ascii_lowercase());
            // A word cut short costs only what is missing, up to a budget.
            let prefix = word.len() >= 4 && c.starts_with(word);
            (if prefix { d.min(budget) } else { d }, c)
        })
        .filter(|(d, _)| *d <= budget)
        .min_by_key(|(d, c)| (*d, c.len()))
        .map(|(_, c)| c)
}

/// `; did you mean `x`?` when a known name is close, else nothing.
fn did_you_mean(word: &str) -> String {
    suggestion(word)
        .map(|s| format!("; did you mean `{s}`?"))
        .unwrap_or_default()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Time(Clock),
    Num(Num),
    Type,
    Addr(Side),
    Player,
    Finding,
    Severity,
    Dir,
    Malformed,
}

/// A number as written: decimal, `0x` hexadecimal, or with a fraction.
fn number(value: &str) -> Option<f64> {
    match value
        .strip_prefix("0x")
        .or_else(|| value.strip_prefix("0X"))
    {
        Some(hex) => u64::from_str_radix(hex, 16).ok().map(|v| v as f64),
        None => value.parse::<f64>().ok().filter(|v| v.is_finite()),
    }
}

/// The error for a field no protocol registers.
fn unknown_field(word: &str) -> String {
    match word.split_once('.') {
        Some((proto, _)) if crate::proto::by_name(proto).is_some() => {
            format!(
                "unknown field `{word}`: `{proto}` registers no such field{}",
                did_you_mean(word)
            )
        }
        _ => format!(
            "unknown field `{word}` (fields: {FIELDS}, and each protocol's proto.field){}",
            did_you_mean(word)
        ),
    }
}

/// An unsigned number as written: decimal or `0x` hexadecimal.
fn unsigned(value: &str) -> Option<u64> {
    match value
        .strip_prefix("0x")
        .or_else(|| value.strip_prefix("0X"))
    {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => value.parse().ok(),
    }
}

fn field(name: &str) -> Option<Field> {
    Some(match name {
        "type" => Field::Type,
        "seqno" => Field::Num(Num::Seqno),
        "ack" => Field::Num(Num::Ack),
        "ts" | "timestamp" => Field::Num(Num::Timestamp),
        "frame" => Field::Num(Num::Frame),
        "len" => Field::Num(Num::Len),
        "port" => Field::Num(Num::Port),
        "session" => Field::Num(Num::Session),
        "src" => Field::Addr(Side::Src),
        "dst" => Field::Addr(Side::Dst),
        "peer" => Field::Addr(Side::Peer),
        "player" => Field::Player,
        // `kind`, as the TUI's findings pane names a finding's kind.
        "finding" | "kind" => Field::Finding,
        "severity" => Field::Severity,
        "dir" => Field::Dir,
        "malformed" => Field::Malformed,
        "time" | "frame.time_relative" => Field::Time(Clock::Relative),
        "frame.time_epoch" => Field::Time(Clock::Epoch),
        // Wireshark's names.
        "frame.number" => Field::Num(Num::Frame),
        "frame.len" => Field::Num(Num::FrameLen),
        "frame.cap_len" => Field::Num(Num::FrameCapLen),
        "ip.src" | "ipv6.src" => Field::Addr(Side::Src),
        "ip.dst" | "ipv6.dst" => Field::Addr(Side::Dst),
        "ip.addr" | "ipv6.addr" => Field::Addr(Side::Peer),
        "udp.port" => Field::Num(Num::Port),
        "udp.srcport" => Field::Num(Num::SrcPort),
        "udp.dstport" => Field::Num(Num::DstPort),
        "udp.length" => Field::Num(Num::UdpLength),
        _ => return None,
    })
}

/// A message type of a registered protocol, by name (any case).
fn message_type(name: &str) -> Option<&'static str> {
    crate::proto::REGISTRY
        .iter()
        .flat_map(|p| p.info.message_types.iter().copied())
        .find(|t| t.eq_ignore_ascii_case(name))
}

fn direction(name: &str) -> Option<Direction> {
    [Direction::ClientToServer, Direction::ServerToClient]
        .into_iter()
        .find(|d| d.name() == name)
}

fn finding_pat(name: &str) -> Option<FindingPat> {
    let rule = |name: &str| {
        crate::proto::rule_by_name(name).map(|r| {
            if r.name() == name {
                FindingPat::RuleNamed(r.name())
            } else {
                FindingPat::Rule(r)
            }
        })
    };
    if let Some(name) = name.strip_prefix("violation/") {
        return rule(name);
    }
    crate::proto::kind_by_name(name)
        .map(FindingPat::Kind)
        .or_else(|| rule(name))
}

fn severity(name: &str) -> Option<Severity> {
    [Severity::Note, Severity::Warning, Severity::Error]
        .into_iter()
        .find(|s| s.name() == name)
}

fn player(value: &str) -> Option<PlayerPat> {
    match value.split_once(':') {
        Some((g, i)) => Some(PlayerPat::Id(
            g.parse::<u16>().ok()?.into(),
            i.parse::<u16>().ok()?.into(),
        )),
        None => value
            .parse::<u16>()
            .ok()
            .map(|i| PlayerPat::Index(i.into())),
    }
}

fn addr(value: &str) -> Option<Addr> {
    value
        .parse::<SocketAddr>()
        .map(Addr::Socket)
        .or_else(|_| value.parse::<IpAddr>().map(Addr::Ip))
        .or_else(|_| value.parse::<ipnet::IpNet>().map(|n| Addr::Net(n.trunc())))
        .ok()
}

/// An operator after a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// A comparison; `None` is `!=`. With the operator as written.
    Cmp(Option<Cmp>, &'static str),
    Contains,
    Matches,
    In,
}

impl Op {
    fn text(self) -> &'static str {
        match self {
            Op::Cmp(_, s) => s,
            Op::Contains => "contains",
            Op::Matches => "matches",
            Op::In => "in",
        }
    }
}

/// Wireshark's operators in words.
fn word_op(w: &str) -> Option<Op> {
    Some(match w {
        "contains" => Op::Contains,
        "matches" => Op::Matches,
        "in" => Op::In,
        "eq" => Op::Cmp(Some(Cmp::Eq), "eq"),
        "ne" => Op::Cmp(None, "ne"),
        "lt" => Op::Cmp(Some(Cmp::Lt), "lt"),
        "gt" => Op::Cmp(Some(Cmp::Gt), "gt"),
        "le" => Op::Cmp(Some(Cmp::Le), "le"),
        "ge" => Op::Cmp(Some(Cmp::Ge), "ge"),
        _ => return None,
    })
}

impl<'a> Parser<'a> {
    fn next(&mut self) -> Result<(Tok<'a>, usize), FilterError> {
        match self.peeked.take() {
            Some(t) => Ok(t),
            None => self.lexer.next(),
        }
    }

    fn peek(&mut self) -> Result<Tok<'a>, FilterError> {
        if self.peeked.is_none() {
            self.peeked = Some(self.lexer.next()?);
        }
        Ok(self.peeked.map(|(t, _)| t).unwrap_or(Tok::End))
    }

    fn error(&self, byte: usize, message: impl Into<String>) -> FilterError {
        self.lexer.error(byte, message)
    }

    /// Counts one more test or operator at byte `at`: an expression has a bounded
    /// size, so that evaluating (and dropping) it never runs out of stack.
    fn term(&mut self, at: usize) -> Result<(), FilterError> {
        self.terms += 1;
        if self.terms > MAX_TERMS {
            return Err(self.error(
                at,
                format!("the expression is too long (more than {MAX_TERMS} tests and operators)"),
            ));
        }
        Ok(())
    }

    /// Enters a `(` or `!` at byte `at`.
    fn nest(&mut self, at: usize) -> Result<(), FilterError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(at, format!("`(` and `!` nest more than {MAX_DEPTH} deep")));
        }
        self.term(at)
    }

    fn or(&mut self) -> Result<Node, FilterError> {
        let mut left = self.and()?;
        while self.peek()? == Tok::Or {
            let (_, at) = self.next()?;
            self.term(at)?;
            left = Node::Or(Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Node, FilterError> {
        let mut left = self.unary()?;
        while self.peek()? == Tok::And {
            let (_, at) = self.next()?;
            self.term(at)?;
            left = Node::And(Box::new(left), Box::new(self.unary()?));
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Node, FilterError> {
        if self.peek()? == Tok::Not {
            let (_, at) = self.next()?;
            self.nest(at)?;
            let inner = self.unary()?;
            self.depth -= 1;
            return Ok(Node::Not(Box::new(inner)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Node, FilterError> {
        match self.next()? {
            (Tok::LParen, open) => {
                self.nest(open)?;
                let inner = self.or()?;
                self.depth -= 1;
                match self.next()? {
                    (Tok::RParen, _) => Ok(inner),
                    (Tok::End, at) => Err(self.error(
                        at,
                        format!(
                            "missing `)` to close the `(` of column {}",
                            self.lexer.column(open)
                        ),
                    )),
                    (tok, at) => Err(self.error(at, format!("expected `)`, found {tok}"))),
                }
            }
            (Tok::Word(word), at) => {
                self.term(at)?;
                let op = match self.peek()? {
                    Tok::Op(cmp, op) => Some(Op::Cmp(cmp, op)),
                    Tok::Tilde => Some(Op::Matches),
                    Tok::Word(w) => word_op(w),
                    _ => None,
                };
                let Some(op) = op else {
                    return match registered(word) {
                        Some(def) => Ok(Node::Field(FieldTest { def, test: None })),
                        None => self.bare(word, at).map(Node::Test),
                    };
                };
                let (_, op_at) = self.next()?;
                if op == Op::In {
                    return self.set(word, at, op_at);
                }
                let (value, value_at) = match self.next()? {
                    (Tok::Word(v) | Tok::Str(v), v_at) => (v, v_at),
                    (tok, v_at) => {
                        return Err(self.error(
                            v_at,
                            format!("expected a value after `{}`, found {tok}", op.text()),
                        ));
                    }
                };
                self.test(word, at, op, op_at, value, value_at)
            }
            (Tok::Str(s), at) => Err(self.error(
                at,
                format!("expected a field or a name, found the string \"{s}\""),
            )),
            (Tok::End, at) => Err(self.error(at, "expected an expression")),
            (tok, at) => Err(self.error(at, format!("expected an expression, found {tok}"))),
        }
    }

    /// `word op value`, for a registered field or a filter's own.
    fn test(
        &self,
        word: &str,
        at: usize,
        op: Op,
        op_at: usize,
        value: &str,
        value_at: usize,
    ) -> Result<Node, FilterError> {
        if let Some(def) = registered(word) {
            let test = match op {
                Op::Cmp(cmp, text) => {
                    self.field_comparison(def, cmp, text, op_at, value, value_at)?
                }
                Op::Contains | Op::Matches => self.text_test(def, op, op_at, value, value_at)?,
                Op::In => return Err(self.error(op_at, "`in` takes a set: `in {1 2 3}`")),
            };
            return Ok(match op {
                Op::Cmp(None, _) => Node::Not(Box::new(Node::Field(test))),
                _ => Node::Field(test),
            });
        }
        let Some(field) = field(word) else {
            return Err(self.error(at, unknown_field(word)));
        };
        let Op::Cmp(cmp, text) = op else {
            return Err(self.error(
                op_at,
                format!(
                    "`{}` applies to text and bytes fields (`lwar.name`, `lwar.chat.text`...), not to `{word}`",
                    op.text()
                ),
            ));
        };
        let test = self.comparison(field, cmp, text, op_at, value, value_at)?;
        Ok(match cmp {
            Some(_) => Node::Test(test),
            None => Node::Not(Box::new(Node::Test(test))),
        })
    }

    /// `word in { a b 5..9 }`: equal to one value or within one range.
    fn set(&mut self, word: &str, at: usize, op_at: usize) -> Result<Node, FilterError> {
        match self.next()? {
            (Tok::LBrace, _) => {}
            (tok, a) => {
                return Err(self.error(a, format!("expected `{{` after `in`, found {tok}")));
            }
        }
        let eq = Op::Cmp(Some(Cmp::Eq), "==");
        let mut node: Option<Node> = None;
        loop {
            let item = match self.next()? {
                (Tok::RBrace, a) => {
                    return node
                        .ok_or_else(|| self.error(a, "an empty set: `in {}` holds nothing"));
                }
                (Tok::Comma, _) => continue,
                (Tok::Word(v), v_at) if v.contains("..") => {
                    self.term(v_at)?;
                    let (lo, hi) = v.split_once("..").unwrap_or((v, ""));
                    let hi_at = v_at + lo.len() + 2;
                    if lo.is_empty() || hi.is_empty() {
                        return Err(self.error(v_at, format!("`{v}` is not a range: write 5..9")));
                    }
                    let ge = Op::Cmp(Some(Cmp::Ge), "..");
                    let le = Op::Cmp(Some(Cmp::Le), "..");
                    Node::And(
                        Box::new(self.test(word, at, ge, v_at, lo, v_at)?),
                        Box::new(self.test(word, at, le, hi_at, hi, hi_at)?),
                    )
                }
                (Tok::Word(v) | Tok::Str(v), v_at) => {
                    self.term(v_at)?;
                    self.test(word, at, eq, op_at, v, v_at)?
                }
                (Tok::End, a) => return Err(self.error(a, "missing `}` to close the set")),
                (tok, a) => {
                    return Err(self.error(
                        a,
                        format!("expected a value or `}}` in the set, found {tok}"),
                    ));
                }
            };
            node = Some(match node {
                None => item,
                Some(n) => Node::Or(Box::new(n), Box::new(item)),
            });
        }
    }

    /// `proto.field contains "x"` or `matches "re"`, on text and bytes (and,
    /// for `matches`, enum names).
    fn text_test(
        &self,
        def: &'static FieldDef,
        op: Op,
        op_at: usize,
        value: &str,
        value_at: usize,
    ) -> Result<FieldTest, FilterError> {
        let applies = match def.ty {
            FieldType::Text | FieldType::Bytes => true,
            FieldType::Enum => op == Op::Matches,
            _ => false,
        };
        if !applies {
            return Err(self.error(
                op_at,
                format!(
                    "`{}` applies to text and bytes, and `{}` holds {}",
                    op.text(),
                    def.name,
                    def.ty.noun()
                ),
            ));
        }
        let lit = if op == Op::Contains {
            Literal::Contains(value.as_bytes().into())
        } else {
            let re = regex::bytes::RegexBuilder::new(value)
                .case_insensitive(true)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| {
                    let why = e.to_string();
                    let last = why.lines().last().unwrap_or("").trim();
                    let last = last.strip_prefix("error: ").unwrap_or(last).to_owned();
                    self.error(value_at, format!("bad regular expression: {last}"))
                })?;
            Literal::Matches(Pattern(re))
        };
        Ok(FieldTest {
            def,
            test: Some((Cmp::Eq, lit)),
        })
    }

    /// `field op value`; `cmp` is `None` for `!=`, compiled as `!(field == value)`.
    fn comparison(
        &self,
        field: Field,
        cmp: Option<Cmp>,
        op: &str,
        op_at: usize,
        value: &str,
        value_at: usize,
    ) -> Result<Test, FilterError> {
        let ordered = !matches!(cmp, None | Some(Cmp::Eq));
        let eq_only = |name: &str| -> Result<(), FilterError> {
            if ordered {
                Err(self.error(
                    op_at,
                    format!("`{op}` does not apply to `{name}`: use `==` or `!=`"),
                ))
            } else {
                Ok(())
            }
        };
        let bad = |what: &str| self.error(value_at, format!("`{value}` is not {what}"));
        let cmp = cmp.unwrap_or(Cmp::Eq);
        Ok(match field {
            Field::Num(num) => Test::Num(num, cmp, unsigned(value).ok_or_else(|| bad("a number"))?),
            Field::Time(clock) => {
                let secs = value
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| bad("a time in seconds"))?;
                Test::Time(clock, cmp, secs)
            }
            Field::Type => {
                eq_only("type")?;
                Test::Type(message_type(value).ok_or_else(|| bad("a message type"))?)
            }
            Field::Addr(side) => {
                eq_only("an address")?;
                Test::Addr(
                    side,
                    addr(value).ok_or_else(|| bad("an ip, ip:port or CIDR block"))?,
                )
            }
            Field::Player => {
                eq_only("player")?;
                Test::Player(player(value).ok_or_else(|| bad("a player id (gen:index or index)"))?)
            }
            Field::Finding => {
                eq_only("finding")?;
                Test::Finding(finding_pat(value).ok_or_else(|| bad("a finding kind"))?)
            }
            Field::Severity => Test::Severity(
                cmp,
                severity(value).ok_or_else(|| bad("a severity (note, warning, error)"))?,
            ),
            Field::Dir => {
                eq_only("dir")?;
                Test::Dir(direction(value).ok_or_else(|| bad("a direction (c2s, s2c)"))?)
            }
            Field::Malformed => {
                return Err(self.error(
                    op_at,
                    "`malformed` stands alone: write `malformed` or `!malformed`",
                ));
            }
        })
    }

    /// `proto.field op value`; `cmp` is `None` for `!=`.
    fn field_comparison(
        &self,
        def: &'static FieldDef,
        cmp: Option<Cmp>,
        op: &str,
        op_at: usize,
        value: &str,
        value_at: usize,
    ) -> Result<FieldTest, FilterError> {
        let bad = |what: &str| {
            self.error(
                value_at,
                format!(
                    "`{value}` is not {what} (`{}` holds {})",
                    def.name,
                    def.ty.noun()
                ),
            )
        };
        let lit = match def.ty {
            FieldType::Unsigned
            | FieldType::Signed
            | FieldType::Float
            | FieldType::Bits
            | FieldType::Bool => Literal::Number(number(value).ok_or_else(|| bad("a number"))?),
            FieldType::Enum => match number(value) {
                Some(n) => Literal::Number(n),
                None => Literal::Text(value.into()),
            },
            FieldType::Pair => {
                let (a, b) = value.split_once(':').ok_or_else(|| bad("a pair a:b"))?;
                match (a.parse(), b.parse()) {
                    (Ok(a), Ok(b)) => Literal::Pair(a, b),
                    _ => return Err(bad("a pair a:b")),
                }
            }
            FieldType::Text | FieldType::Bytes => Literal::Text(value.into()),
            FieldType::Node => {
                return Err(self.error(
                    op_at,
                    format!("`{}` has no value of its own: write it alone", def.name),
                ));
            }
        };
        let cmp = cmp.unwrap_or(Cmp::Eq);
        if cmp != Cmp::Eq && !matches!(lit, Literal::Number(_)) {
            return Err(self.error(
                op_at,
                format!(
                    "`{op}` compares numbers: use `==` or `!=` with `{}`",
                    def.name
                ),
            ));
        }
        Ok(FieldTest {
            def,
            test: Some((cmp, lit)),
        })
    }

    /// A name standing alone.
    fn bare(&self, word: &str, at: usize) -> Result<Test, FilterError> {
        match field(word) {
            Some(Field::Malformed) => return Ok(Test::Malformed),
            Some(Field::Finding) => return Ok(Test::Finding(FindingPat::Any)),
            Some(Field::Num(Num::Seqno)) => return Ok(Test::Reliable),
            Some(Field::Player) => return Ok(Test::Player(PlayerPat::Any)),
            Some(_) => {
                return Err(self.error(
                    at,
                    format!("field `{word}` needs a comparison, e.g. `{word} == ...`"),
                ));
            }
            None => {}
        }
        if let Some(t) = message_type(word) {
            return Ok(Test::Type(t));
        }
        if let Some(pat) = finding_pat(word) {
            return Ok(Test::Finding(pat));
        }
        if let Some(d) = direction(word) {
            return Ok(Test::Dir(d));
        }
        if let Some(p) = crate::proto::by_name(word) {
            return Ok(Test::Proto(p.info.name));
        }
        if let Some((_, layer)) = Layer::NAMES.iter().find(|(n, _)| *n == word) {
            return Ok(Test::Layer(*layer));
        }
        Err(self.error(
            at,
            format!(
                "unknown name `{word}`: not a field, message type, finding kind or direction{}",
                did_you_mean(word)
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::Timestamp;
    use crate::engine::{Detail, Finding};
    use crate::proto::lwar::wire::{MessageRepr, PacketRepr};

    fn dgram(payload: &[u8], frame: u64) -> Datagram<'_> {
        Datagram::new(
            frame,
            Timestamp::from_millis(frame),
            "10.0.0.1:5000".parse().unwrap(),
            "10.0.0.2:32422".parse().unwrap(),
            payload,
        )
    }

    fn finding(kind: FindingKind, rule: Option<Rule>) -> Finding {
        Finding {
            kind,
            rule,
            frame: 7,
            ts: Timestamp(0),
            session: 2,
            direction: Direction::ClientToServer,
            seqno: Some(4),
            detail: Detail::None,
        }
    }

    fn join_packet() -> Vec<u8> {
        PacketRepr {
            header: crate::proto::lwar::wire::Header {
                ack: 3,
                timestamp: 1000,
            },
            messages: vec![
                MessageRepr::Join {
                    seqno: 4,
                    player: crate::proto::lwar::wire::Id::new(1, 2),
                    name: b"alice".to_vec(),
                },
                MessageRepr::Synced { seqno: 5 },
            ],
        }
        .to_bytes()
    }

    fn eval_on(expr: &str, payload: &[u8], findings: &[Finding]) -> bool {
        eval_datagram(expr, &dgram(payload, 7), findings)
    }

    fn eval_datagram(expr: &str, d: &Datagram<'_>, findings: &[Finding]) -> bool {
        let filter = Filter::parse(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
        let event = PacketEvent {
            datagram: d,
            protocol: &crate::proto::lwar::INFO,
            session: 2,
            direction: Direction::ClientToServer,
            findings,
            acks: Default::default(),
            ack_samples: [&[], &[]],
            resends: 0,
            dissector: None,
        };
        filter.matches(&event)
    }

    fn eval_at(expr: &str, payload: &[u8], frame: u64, origin_ms: u64) -> bool {
        let filter = Filter::parse(expr)
            .unwrap_or_else(|e| panic!("{expr}: {e}"))
            .with_origin(Timestamp::from_millis(origin_ms));
        let d = dgram(payload, frame);
        filter.matches(&PacketEvent {
            datagram: &d,
            protocol: &crate::proto::lwar::INFO,
            session: 2,
            direction: Direction::ClientToServer,
            findings: &[],
            acks: Default::default(),
            ack_samples: [&[], &[]],
            resends: 0,
            dissector: None,
        })
    }

    /// A field test is handed only the groups that may hold its field (the
    /// header, a message type), as `-T fields` is: `lwar.name` is looked for
    /// in Join's fields, not in the header's nor Synced's; `lwar.ack` in the
    /// header's alone. Before, every field of the packet was handed over.
    #[test]
    fn a_field_test_walks_only_the_groups_that_may_hold_its_field() {
        struct Seen<'t>(FieldMatch<'t>, Vec<&'static str>);
        impl FieldSink for Seen<'_> {
            fn field(&mut self, f: crate::proto::field::Field<'_>) {
                self.1.push(f.def.name);
                self.0.field(f);
            }
            fn wants_any(&mut self, key: usize, defs: &GroupDefs<'_>) -> bool {
                self.0.wants_any(key, defs)
            }
        }
        let p = join_packet();
        let dissector = crate::proto::lwar::INFO.dissector;
        for (expr, found, handed) in [
            (
                "lwar.name == \"alice\"",
                true,
                &[
                    "lwar.message",
                    "lwar.type",
                    "lwar.seqno",
                    "lwar.player",
                    "lwar.name_len",
                    "lwar.name",
                ][..],
            ),
            (
                "lwar.ack == 3",
                true,
                &["lwar.app_id", "lwar.ack", "lwar.timestamp"][..],
            ),
            ("lwar.update.health", false, &[][..]),
        ] {
            let filter = Filter::parse(expr).unwrap();
            let Node::Field(test) = &filter.root else {
                panic!("{expr}: not a field test");
            };
            // Twice: the second answers come from the cache.
            for _ in 0..2 {
                let mut seen = Seen(FieldMatch { test, found: false }, Vec::new());
                let _ = dissector.fields(&p, &mut seen);
                assert_eq!((seen.0.found, &seen.1[..]), (found, handed), "{expr}");
            }
            assert_eq!(eval_on(expr, &p, &[]), found, "{expr}");
        }
    }

    #[test]
    fn wireshark_names_sets_cidr_time_and_text_operators() {
        let p = join_packet();
        // dgram(): 10.0.0.1:5000 -> 10.0.0.2:32422, frame 7 at 7 ms.
        for (expr, want) in [
            ("ip.src == 10.0.0.1", true),
            ("ip.src == 10.0.0.0/8", true),
            ("ip.src == 10.0.1.0/24", false),
            ("ip.dst == 10.0.0.2/32", true),
            ("ip.addr == 10.0.0.2", true),
            ("ipv6.addr == ::1", false),
            ("udp.srcport == 5000", true),
            ("udp.srcport == 32422", false),
            ("udp.dstport == 32422", true),
            ("udp.port == 5000 && udp.port == 32422", true),
            ("frame.number == 7", true),
            ("frame.number eq 7 and seqno ge 4", true),
            ("seqno == 0x4", true),
            ("frame in {1 2 7}", true),
            ("frame in {1, 2, 3}", false),
            ("frame in {5..9}", true),
            ("frame in {8..9 1}", false),
            ("type in {Join Leave}", true),
            ("lwar.name in {\"bob\" \"alice\"}", true),
            ("lwar.name contains \"lic\"", true),
            ("lwar.name contains \"LIC\"", false),
            ("lwar.name matches \"^AL\"", true),
            ("lwar.name ~ \"(?-i)^AL\"", false),
            ("lwar.name matches \"ice$\"", true),
            ("lwar.type matches \"^syn\"", true),
            ("lwar.chat.text contains \"x\"", false),
        ] {
            assert_eq!(eval_on(expr, &p, &[]), want, "{expr}");
        }
        // Time: the packet is at 7 ms; the origin at 2 ms.
        for (expr, want) in [
            ("time == 0.005", true),
            ("frame.time_relative > 0.004", true),
            ("time < 0.005", false),
            ("frame.time_epoch == 0.007", true),
            ("frame.time_epoch >= 1", false),
        ] {
            assert_eq!(eval_at(expr, &p, 7, 2), want, "{expr}");
        }
        // Without an origin, time counts from the first packet evaluated.
        let filter = Filter::parse("time >= 0.003").unwrap();
        let (a, b) = (dgram(&p, 10), dgram(&p, 14));
        let event = |d| PacketEvent {
            datagram: d,
            protocol: &crate::proto::lwar::INFO,
            session: 0,
            direction: Direction::ClientToServer,
            findings: &[],
            acks: Default::default(),
            ack_samples: [&[], &[]],
            resends: 0,
            dissector: None,
        };
        assert!(!filter.matches(&event(&a)));
        assert!(filter.matches(&event(&b)));
    }

    #[test]
    fn frame_len_and_cap_len_are_the_frames_lengths_on_the_wire_and_captured() {
        let p = join_packet();
        // Whole, in an Ethernet frame: 14 + 20 + 8 bytes of headers.
        let whole = dgram(&p, 7);
        let wire = p.len() as u64 + 42;
        // Padded to Ethernet's 60 bytes, then cut by a snaplen of 54.
        let cut = Datagram {
            frame_len: 200,
            frame_cap_len: 54,
            ..whole
        };
        for (d, expr, want) in [
            (&whole, format!("frame.len == {wire}"), true),
            (&whole, format!("frame.cap_len == {wire}"), true),
            (&whole, format!("frame.len > {wire}"), false),
            (
                &whole,
                format!("frame.len eq {wire} && udp.length == {}", p.len() + 8),
                true,
            ),
            (&cut, "frame.len == 200".to_owned(), true),
            (&cut, "frame.cap_len == 54".to_owned(), true),
            (&cut, "frame.len in {100..300}".to_owned(), true),
            (&cut, "frame.cap_len >= 60".to_owned(), false),
        ] {
            assert_eq!(eval_datagram(&expr, d, &[]), want, "{expr}");
        }
        // A finding on its own has no frame.
        let f = finding(FindingKind::LOST, None);
        assert!(!Filter::parse("frame.len > 0").unwrap().matches_finding(&f));
    }

    #[test]
    fn protocol_and_layer_names_stand_alone_as_in_tshark() {
        let p = join_packet();
        // An lwar packet over IPv4 UDP; its payload's length in udp.length + 8.
        let len = p.len() as u64;
        for (expr, want) in [
            ("lwar", true),
            ("!lwar", false),
            ("strs", false),
            ("starstrike", false),
            ("bg", false),
            ("vessel", false),
            ("!strs && !bg", true),
            ("udp", true),
            ("ip", true),
            ("ipv6", false),
            ("lwar && ip.addr == 10.0.0.2", true),
            (&format!("udp.length == {}", len + 8), true),
            (&format!("udp.length == {len}"), false),
            (&format!("len == {len}"), true),
        ] {
            assert_eq!(eval_on(expr, &p, &[]), want, "{expr}");
        }
        // A finding on its own has no packet: no protocol, no layer.
        let f = finding(FindingKind::LOST, None);
        for expr in ["lwar", "udp", "ip"] {
            assert!(!Filter::parse(expr).unwrap().matches_finding(&f), "{expr}");
        }
        assert!(Filter::parse("!lwar").unwrap().matches_finding(&f));
        for (expr, column, message) in [
            (
                "frame.len",
                1,
                "field `frame.len` needs a comparison, e.g. `frame.len == ...`",
            ),
            (
                "lwarr",
                1,
                "unknown name `lwarr`: not a field, message type, finding kind or direction; did you mean `lwar`?",
            ),
            (
                "udp == 3",
                1,
                "unknown field `udp` (fields: type, seqno, ack, ts, timestamp, frame, len, src, dst, peer, port, player, finding, severity, session, dir, malformed, time, and each protocol's proto.field)",
            ),
        ] {
            let e = err(expr);
            assert_eq!((e.column, e.message.as_str()), (column, message), "{expr}");
        }
    }

    #[test]
    fn the_new_operators_say_what_cannot_apply() {
        for (expr, column, message) in [
            (
                "seqno contains 1",
                7,
                "`contains` applies to text and bytes fields (`lwar.name`, `lwar.chat.text`...), not to `seqno`",
            ),
            (
                "lwar.seqno matches \"1\"",
                12,
                "`matches` applies to text and bytes, and `lwar.seqno` holds a number",
            ),
            (
                "lwar.name ~ \"(\"",
                13,
                "bad regular expression: unclosed group",
            ),
            ("frame in {}", 11, "an empty set: `in {}` holds nothing"),
            ("frame in {1 2", 14, "missing `}` to close the set"),
            ("frame in 1", 10, "expected `{` after `in`, found `1`"),
            ("frame in {..4}", 11, "`..4` is not a range: write 5..9"),
            ("frame in {1..x}", 14, "`x` is not a number"),
            (
                "ip.src == 10.0.0.0/33",
                11,
                "`10.0.0.0/33` is not an ip, ip:port or CIDR block",
            ),
            ("time > soon", 8, "`soon` is not a time in seconds"),
        ] {
            let e = err(expr);
            assert_eq!((e.column, e.message.as_str()), (column, message), "{expr}");
        }
    }

    #[test]
    fn unknown_names_get_the_closest_known_one() {
        for (expr, hint) in [
            ("reorder", "; did you mean `reordered`?"),
            ("resned", "; did you mean `resend`?"),
            ("Jion", "; did you mean `Join`?"),
            ("lwar.nme == \"a\"", "; did you mean `lwar.name`?"),
            ("ip.sorce == 1.2.3.4", "; did you mean `ip.src`?"),
            ("sqeno == 4", "; did you mean `seqno`?"),
        ] {
            let e = err(expr);
            assert!(e.message.ends_with(hint), "{expr}: {}", e.message);
        }
        assert!(!err("zzzzzz").message.contains("did you mean"));
    }

    #[test]
    fn registered_fields_compare_by_their_type() {
        let p = join_packet();
        for (expr, want) in [
            ("lwar.name == \"alice\"", true),
            ("lwar.name == alice", true),
            ("lwar.name == bob", false),
            ("lwar.name != bob", true),
            ("lwar.player == 1:2", true),
            ("lwar.player == 2:1", false),
            ("lwar.seqno >= 5", true),
            ("lwar.seqno > 5", false),
            ("lwar.ack == 3 && lwar.timestamp < 1001", true),
            ("lwar.app_id == 0xf27087c5", true),
            ("lwar.type == join && lwar.type == Synced", true),
            ("lwar.type == 3", true),
            ("lwar.type == Input", false),
            ("lwar.name", true),
            ("lwar.chat.text", false),
            ("!lwar.update", true),
        ] {
            assert_eq!(eval_on(expr, &p, &[]), want, "{expr}");
        }
        // A packet whose header does not decode has no fields.
        assert!(!eval_on("lwar.ack == 3", b"\xf2\x70\x87\xc5\x00", &[]));
    }

    #[test]
    fn registered_fields_refuse_what_cannot_apply() {
        for (expr, column, says) in [
            ("lwar.nope == 1", 1, "`lwar` registers no such field"),
            ("nope.x == 1", 1, "unknown field `nope.x`"),
            (
                "lwar.seqno == abc",
                15,
                "`abc` is not a number (`lwar.seqno` holds a number)",
            ),
            ("lwar.player == 7", 16, "is not a pair a:b"),
            ("lwar.name < z", 11, "`<` compares numbers"),
            ("lwar.message == 1", 14, "has no value of its own"),
        ] {
            let e = err(expr);
            assert_eq!(e.column, column, "{expr}: {e}");
            assert!(e.message.contains(says), "{expr}: {e}");
        }
    }

    fn err(expr: &str) -> FilterError {
        Filter::parse(expr).expect_err(expr)
    }

    #[test]
    fn parses_precedence_and_aliases() {
        let a = Filter::parse("Join || Leave && c2s").unwrap();
        let b = Filter::parse("Join or (Leave and c2s)").unwrap();
        assert_eq!(a, b);
        let c = Filter::parse("!Join").unwrap();
        let d = Filter::parse("not Join").unwrap();
        assert_eq!(c, d);
        assert_eq!(
            Filter::parse("seqno != 3").unwrap().root,
            Node::Not(Box::new(Node::Test(Test::Num(Num::Seqno, Cmp::Eq, 3))))
        );
        assert_eq!(
            Filter::parse("type == update").unwrap(),
            Filter::parse("Update").unwrap()
        );
    }

    #[test]
    fn evaluates_packet_fields() {
        let p = join_packet();
        let yes = [
            "Join",
            "type == Synced",
            "seqno == 5",
            "seqno",
            "seqno >= 4 && seqno < 5",
            "ack == 3",
            "ts == 1000",
            "timestamp > 999",
            "frame == 7",
            "len == 32",
            "src == 10.0.0.1",
            "src == 10.0.0.1:5000",
            "dst == 10.0.0.2:32422",
            "peer == 10.0.0.2",
            "port == 32422",
            "port == 5000",
            "player == 1:2",
            "player == 2",
            "player",
            "session == 2",
            "dir == c2s",
            "c2s",
            "!s2c",
            "seqno != 9",
            "!(Update || Input)",
            "type == \"Join\"",
        ];
        for expr in yes {
            assert!(eval_on(expr, &p, &[]), "{expr} should match");
        }
        let no = [
            "Update",
            "type != Join",
            "seqno == 6",
            "seqno > 5",
            "ack < 3",
            "frame != 7",
            "src == 10.0.0.2",
            "dst == 10.0.0.2:1",
            "port == 1",
            "port != 5000",
            "player == 2:2",
            "player == 3",
            "finding",
            "malformed",
            "s2c",
            "session >= 3",
        ];
        for expr in no {
            assert!(!eval_on(expr, &p, &[]), "{expr} should not match");
        }
    }

    #[test]
    fn evaluates_findings_and_severity() {
        let p = join_packet();
        let f = [
            finding(FindingKind::RESEND, None),
            finding(
                FindingKind::VIOLATION,
                Some(crate::proto::lwar::findings::rules::WRONG_SENDER),
            ),
        ];
        for expr in [
            "resend",
            "finding",
            "finding == resend",
            "violation",
            "violation/wrong-sender",
            "finding == violation/wrong-sender",
            "wrong-sender",
            "severity == error",
            "severity >= warning",
            "resend && Join",
        ] {
            assert!(eval_on(expr, &p, &f), "{expr} should match");
        }
        for expr in [
            "lost",
            "finding != resend",
            "violation/after-disconnect",
            "severity < note",
            "malformed",
        ] {
            assert!(!eval_on(expr, &p, &f), "{expr} should not match");
        }
    }

    #[test]
    fn malformed_packets() {
        let short = [0xf2u8, 0x70, 0x87];
        assert!(eval_on("malformed", &short, &[]));
        assert!(!eval_on("Join || seqno || ack == 0", &short, &[]));
        assert!(eval_on("len == 3 && port == 5000", &short, &[]));
        let mut cut = join_packet();
        cut.truncate(20);
        let f = [finding(FindingKind::TRUNCATED, None)];
        assert!(eval_on("malformed && truncated", &cut, &f));
        // What decoded before the error still counts.
        assert!(eval_on("Join", &join_packet()[..], &[]));
    }

    #[test]
    fn findings_alone() {
        let filter = Filter::parse("lost && seqno == 4 && session == 2").unwrap();
        assert!(filter.matches_finding(&finding(FindingKind::LOST, None)));
        assert!(!filter.matches_finding(&finding(FindingKind::GAP, None)));
        let packet_only = Filter::parse("Join || port == 5000").unwrap();
        assert!(!packet_only.matches_finding(&finding(FindingKind::LOST, None)));
    }

    #[test]
    fn a_gap_finding_matches_by_any_of_its_numbers() {
        let gap = |first, last| Finding {
            seqno: Some(first),
            detail: Detail::Missed {
                first,
                last,
                count: 4,
                reason: None,
            },
            ..finding(FindingKind::LOST, None)
        };
        let holds = |expr: &str, f: &Finding| Filter::parse(expr).unwrap().matches_finding(f);
        let four_to_seven = gap(4, 7);
        for (expr, want) in [
            ("seqno == 4", true),
            ("seqno == 6", true),
            ("seqno == 7", true),
            ("seqno == 8", false),
            ("seqno == 3", false),
            ("seqno > 6", true),
            ("seqno > 7", false),
            ("seqno >= 7", true),
            ("seqno < 5", true),
            ("seqno < 4", false),
            ("seqno <= 4", true),
            ("seqno != 6", false),
            ("lost && seqno >= 5 && seqno <= 6", true),
        ] {
            assert_eq!(holds(expr, &four_to_seven), want, "{expr}");
        }
        // 254, 255, 0, 1: the numbers wrapped.
        let wrapped = gap(254, 1);
        for (expr, want) in [
            ("seqno == 255", true),
            ("seqno == 0", true),
            ("seqno == 1", true),
            ("seqno == 2", false),
            ("seqno == 100", false),
            ("seqno < 1", true),
            ("seqno > 254", true),
        ] {
            assert_eq!(holds(expr, &wrapped), want, "{expr}");
        }
        // A finding for one number, as before.
        assert!(holds("seqno == 4", &finding(FindingKind::LOST, None)));
        assert!(!holds("seqno == 5", &finding(FindingKind::LOST, None)));
    }

    #[test]
    fn error_columns() {
        let cases = [
            ("seqno ==", 9, "expected a value"),
            ("seqno == x", 10, "is not a number"),
            ("Join &&", 8, "expected an expression"),
            ("(Join", 6, "missing `)`"),
            ("Join)", 5, "unexpected `)`"),
            ("foo == 1", 1, "unknown field `foo`"),
            ("Jion", 1, "unknown name `Jion`"),
            ("Join = 1", 6, "use `==`"),
            ("Join & Leave", 6, "use `&&`"),
            ("type < Join", 6, "does not apply"),
            ("frame", 1, "needs a comparison"),
            ("src == 1.2.3", 8, "not an ip"),
            ("player == a:b", 11, "not a player id"),
            ("finding == nope", 12, "not a finding kind"),
            ("dir == up", 8, "not a direction"),
            ("malformed == 1", 11, "stands alone"),
            ("\"open", 1, "unclosed quote"),
            ("", 1, "expected an expression"),
            ("Join ||  ", 10, "expected an expression"),
            ("é == 1", 1, "unknown field"),
            ("Join || é", 9, "unknown name"),
        ];
        for (expr, column, text) in cases {
            let e = err(expr);
            assert_eq!(e.column, column, "{expr}: {e}");
            assert!(e.message.contains(text), "{expr}: {e}");
        }
    }

    #[test]
    fn renders_a_caret_under_the_column() {
        let expr = "seqno == x";
        let e = err(expr);
        let text = e.render(expr).to_string();
        assert_eq!(
            text,
            "column 10: `x` is not a number\n  seqno == x\n           ^"
        );
    }

    #[test]
    fn names_are_unambiguous() {
        // A bare name must mean one thing: no message type shares a name with a
        // finding kind, a rule, a direction or a field.
        for t in crate::proto::REGISTRY
            .iter()
            .flat_map(|p| p.info.message_types)
        {
            let n = t.to_ascii_lowercase();
            assert!(crate::proto::kind_by_name(&n).is_none(), "{n}");
            assert!(crate::proto::rule_by_name(&n).is_none(), "{n}");
            assert!(field(&n).is_none(), "{n}");
            assert!(direction(&n).is_none(), "{n}");
        }
    }

    #[test]
    fn deep_or_long_expressions_are_refused_not_a_stack_overflow() {
        let deep = "(".repeat(10_000) + "Join";
        let e = err(&deep);
        assert_eq!(e.column, 65);
        assert_eq!(e.message, "`(` and `!` nest more than 64 deep");
        let e = err(&"!".repeat(60_000));
        assert_eq!(e.message, "`(` and `!` nest more than 64 deep");
        let long = vec!["Join"; 100_000].join(" && ");
        let e = err(&long);
        assert_eq!(
            e.message,
            "the expression is too long (more than 1024 tests and operators)"
        );
        // Within the bounds, nesting still works.
        let ok = "(".repeat(60) + "Join" + &")".repeat(60);
        assert!(Filter::parse(&ok).is_ok());
        assert!(Filter::parse(&vec!["Join"; 500].join(" || ")).is_ok());
    }
}
