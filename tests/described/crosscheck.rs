//! The Starstrike cross-check: `protocols/starstrike.ksy`, served by the
//! generic analysis of described protocols, against the built-in Starstrike
//! analyzer, on the whole Starstrike corpus (`captures/strs-*.pcap`). Two
//! independent paths (a hand-written decoder and analyzer; a description
//! interpreted) must decode the same field values at the same byte spans and
//! give the same sequence findings: `lost`, `not-captured`, `reordered`,
//! `duplicate-packet` (and no finding at all across the 65535 -> 0 wrap of
//! `strs-wrap`), the same loss estimate, and the same malformed packets;
//! the numbers of packets of an unknown type, which only the generic
//! analysis takes (issue 30), are counted back as the built-in counts them.

use lwarscope::capture::{FrameClass, Source};
use lwarscope::engine::{Finding, Observer};
use lwarscope::proto::field::{Field, FieldSink, FieldType, Value};
use lwarscope::proto::{self, DecodeAs};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Default)]
struct Collect(Vec<Finding>);
impl Observer for Collect {
    fn finding(&mut self, f: &Finding) {
        self.0.push(*f);
    }
}

const COMPARED: &[&str] = &[
    "lost",
    "not-captured",
    "reordered",
    "duplicate-packet",
    "malformed",
    "truncated",
];

/// Per (client, direction): the compared findings, and the loss estimate.
type Outcome = BTreeMap<(String, &'static str), (BTreeMap<String, u64>, Option<(u64, u64)>)>;

fn corpus() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("strs-"))
                && p.extension().is_some_and(|e| e == "pcap")
        })
        .collect();
    files.sort();
    files
}

fn analyse(pcap: &Path, protocol: &str) -> Outcome {
    let d: DecodeAs = format!("udp.port==7777,{protocol}").parse().unwrap();
    let mut engine = proto::engine_with(Default::default(), &[d]);
    let mut seen = Collect::default();
    let mut source = Source::files(&[pcap]).unwrap();
    while let Some(frame) = source.next_frame().unwrap() {
        if let FrameClass::Udp(d) = frame.class {
            engine.observe(&d, &mut seen).expect("taken by the port");
        }
    }
    engine.finish(&mut seen);
    let mut out = Outcome::new();
    let mut clients = BTreeMap::new();
    engine.for_each_session(|s| {
        assert_eq!(s.protocol.name, protocol);
        clients.insert(s.id, s.client.to_string());
        for dir in [
            lwarscope::engine::Direction::ClientToServer,
            lwarscope::engine::Direction::ServerToClient,
        ] {
            let loss = s.dir(dir).loss().map(|l| (l.expected, l.lost));
            let mut zero = BTreeMap::new();
            for k in COMPARED {
                zero.insert((*k).to_owned(), 0);
            }
            // A client may reconnect from the same address: one entry each.
            let key = (format!("{}#{}", s.client, s.id), dir.name());
            out.insert(key, (zero, loss));
        }
    });
    for f in &seen.0 {
        let name = f.kind.name();
        if COMPARED.contains(&name) {
            let key = (
                format!("{}#{}", clients[&f.session], f.session),
                f.direction.name(),
            );
            let (counts, loss) = out.get_mut(&key).unwrap();
            // The second difference (issue 30): the built-in analyzer judges
            // a missing number no window of the peer reached after it could
            // have arrived an unconfirmed `not-captured`, out of the loss
            // estimate; the generic analysis calls every unacknowledged
            // missing number lost. Counted as the generic analysis does.
            if protocol == "strs"
                && name == "not-captured"
                && f.detail.to_string().starts_with("unconfirmed:")
            {
                *counts.get_mut("lost").unwrap() += 1;
                if let Some((_, lost)) = loss {
                    *lost += f.numbers();
                }
                continue;
            }
            *counts.get_mut(name).unwrap() += 1;
            // The generic analysis reads the sequence number of a packet whose
            // type is not in its enum (it is before the body) and takes it,
            // malformed, not lost, as the built-in analyzer does; the
            // comparison below counts every damaged header as lost to the
            // description (`damaged_headers`), so this one is counted so here.
            if protocol == "strs_ksy"
                && name == "malformed"
                && f.detail.to_string().starts_with("unknown-type")
            {
                *counts.get_mut("lost").unwrap() += 1;
                if let Some((_, lost)) = loss {
                    *lost += 1;
                }
            }
        }
    }
    out
}

/// One direction of one session: client, direction, findings, loss.
type Row = (
    String,
    &'static str,
    BTreeMap<String, u64>,
    Option<(u64, u64)>,
);

/// Renumbers sessions in order, so two runs compare by client and order.
fn normalise(o: Outcome) -> Vec<Row> {
    let mut v: Vec<_> = o
        .into_iter()
        .map(|((c, d), (f, l))| {
            let (client, id) = c.split_once('#').unwrap();
            (id.parse::<usize>().unwrap(), client.to_owned(), d, f, l)
        })
        .collect();
    v.sort_by(|a, b| (a.0, &a.1, a.2).cmp(&(b.0, &b.1, b.2)));
    v.into_iter().map(|(_, c, d, f, l)| (c, d, f, l)).collect()
}

#[test]
fn described_starstrike_gives_the_built_ins_sequence_findings_on_the_corpus() {
    let files = corpus();
    assert!(files.len() >= 10, "the Starstrike corpus");
    let mut total_lost = 0;
    let mut total_reordered = 0;
    let mut total_dup = 0;
    for pcap in &files {
        let built_in = normalise(analyse(pcap, "strs"));
        let described = normalise(analyse(pcap, "strs_ksy"));
        // A deliberate difference (issue 30; the others are counted back in
        // `analyse`): the built-in still reads the sequence number of a
        // header that does not decode (its magic or type damaged, or cut
        // short after the number): a malformed packet of its session, not
        // lost as well; the description stops at the damaged
        // field, so those numbers are lost to it (never acknowledged: the
        // receiver dropped them).
        let damaged = damaged_headers(pcap);
        let mut expected = built_in.clone();
        for (client, dir, f, loss) in &mut expected {
            let n = damaged.get(&(client.clone(), *dir)).copied().unwrap_or(0);
            *f.get_mut("lost").unwrap() += n;
            if let Some((_, lost)) = loss {
                *lost += n;
            }
        }
        assert_eq!(described, expected, "{}", pcap.display());
        for (_, _, f, _) in &built_in {
            total_lost += f["lost"];
            total_reordered += f["reordered"];
            total_dup += f["duplicate-packet"];
        }
    }
    // The comparison is not of zeros: the corpus has every kind.
    eprintln!("lost {total_lost}, reordered {total_reordered}, duplicates {total_dup}");
    assert!(total_lost > 0 && total_reordered > 0 && total_dup > 0);
}

/// Per (client, direction): the datagrams whose header keeps its sequence
/// number (8 bytes or more) but does not decode (short, its magic or packet
/// type damaged).
fn damaged_headers(pcap: &Path) -> BTreeMap<(String, &'static str), u64> {
    use lwarscope::proto::starstrike::wire::PacketType;
    let mut out = BTreeMap::new();
    let mut source = Source::files(&[pcap]).unwrap();
    while let Some(frame) = source.next_frame().unwrap() {
        if let FrameClass::Udp(d) = frame.class {
            let p = d.payload;
            let damaged = p.len() >= 8
                && (p.len() < 12
                    || &p[..4] != b"STRS"
                    || PacketType::from_u16(u16::from_be_bytes([p[4], p[5]])).is_none());
            if damaged {
                let key = if d.src.port() == 7777 {
                    (d.dst.to_string(), "s2c")
                } else {
                    (d.src.to_string(), "c2s")
                };
                *out.entry(key).or_default() += 1;
            }
        }
    }
    out
}

/// Leaf values in wire order: (offset, len, value as text or number).
#[derive(Default)]
struct Leaves(Vec<(usize, usize, String)>);
impl FieldSink for Leaves {
    fn field(&mut self, f: Field<'_>) {
        if f.def.ty == FieldType::Node {
            return;
        }
        let v = match f.value {
            Value::Text(t) => String::from_utf8_lossy(t).trim_end_matches('\0').to_owned(),
            Value::Bytes(b) => format!(
                "{}",
                u64::from_be_bytes({
                    let mut x = [0u8; 8];
                    let n = b.len().min(8);
                    x[8 - n..].copy_from_slice(&b[..n]);
                    x
                })
            ),
            v => match v.as_f64() {
                Some(x) if x.is_nan() => "NaN".to_owned(),
                Some(x) => format!("{x}"),
                None => v.to_string(),
            },
        };
        self.0.push((f.offset, f.len, v));
    }
}

#[test]
fn described_starstrike_decodes_the_same_fields_on_the_corpus() {
    let strs = proto::by_name("strs").unwrap().info.dissector;
    let ksy = proto::by_name("strs_ksy").unwrap().info.dissector;
    let mut packets = 0;
    let mut fields = 0;
    for pcap in corpus() {
        let mut source = Source::files(&[&pcap]).unwrap();
        while let Some(frame) = source.next_frame().unwrap() {
            let FrameClass::Udp(d) = frame.class else {
                continue;
            };
            let (mut a, mut b) = (Leaves::default(), Leaves::default());
            let ra = strs.fields(d.payload, &mut a);
            let rb = ksy.fields(d.payload, &mut b);
            assert_eq!(
                ra.is_ok(),
                rb.is_ok(),
                "{} frame {}: {ra:?} / {rb:?}",
                pcap.display(),
                d.frame
            );
            if ra.is_ok() {
                assert_eq!(b.0, a.0, "{} frame {}", pcap.display(), d.frame);
                packets += 1;
                fields += a.0.len();
            }
        }
    }
    eprintln!("{packets} packets, {fields} fields");
    assert!(
        packets > 1000 && fields > 10 * packets / 2,
        "{packets} {fields}"
    );
}
