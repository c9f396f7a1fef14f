//! Vessel's simulator (`sim --proto vessel`): vessels and an environment at
//! 60 packets a second each way, encoded with prost ([`super::wire`]'s
//! messages), over a network with the usual faults, and the ground truth of
//! what the capture must show, from what the simulator decided (never from
//! running the analyzer).
//!
//! **Peers.** Vessel k plays situation `k mod 5`: 0 joins (no id), is issued
//! `vessel-k` and uses it; 1 speaks version "0.0.1" and gets version-only
//! replies; 2 is denied (joinStatus false); 3 rejoins with the stale id
//! `stale-k` and is issued `vessel-k`; 4 joins, then crashes at 40% of the
//! play time. A vessel stops sending once it has received a refusal. Sync
//! numbers start at a random value and go +1 per packet sent (they wrap). The
//! environment answers from the first vessel packet it receives, every tick:
//! while the vessel is heard from within the last 6 s (a refused vessel: 2
//! ticks); it sends an issued id until it receives a vessel packet carrying
//! it. One-way delay 5 ms; the tap is beside the environment (it sees the
//! vessel's packets 4 ms after they leave, the environment's 1 ms after).
//!
//! **Faults**, per packet and direction, at most one each: lost before the
//! tap (never captured, never delivered), damaged (cut 2 bytes short by the
//! network: its last field is a message of at least 3 bytes, so no proto3
//! decoder accepts it: captured malformed, not delivered), duplicated
//! (captured and delivered twice), reordered (delayed 2 ticks), missed by the
//! tap (delivered, not captured).
//!
//! **Truth**, per session (vessel address): the final state, the packets
//! captured per direction, the messages by type, and what each finding of the
//! contract must count, from the fates of the packets: `malformed` (damaged),
//! `duplicates` (second copies, version-only replies aside), `reordered` (a
//! packet captured after one its sender sent later), the sync numbers
//! skipped per direction (lost, damaged or missed, below a later number
//! captured), the notes, and the violations (`sent-after-refusal`: a vessel
//! packet captured more than 1 s after the first refusal captured).

use super::wire::{
    EnvironmentToVessel, HealthSensor, PORT, Position, ShipInput, ShipSensors, VesselToEnvironment,
    VisibleObject, VisualSensors,
};
use crate::capture::Timestamp;
use crate::capture::synth::{Link, PcapWriter, udp_frame};
use crate::proto::sim::{SimOutcome, SimRequest};
use prost::Message;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::net::SocketAddr;

const TICK_US: u64 = 16_667;
const DELAY_US: u64 = 5_000;
const TAP_C2S_US: u64 = 4_000;
const TAP_S2C_US: u64 = 1_000;
const ENV_OFFSET_US: u64 = 8_000;
const LINGER_US: u64 = 6_000_000;
const REFUSED_LINGER_US: u64 = 2 * TICK_US;
const T0_US: u64 = 1_700_000_000_000_000;

/// What vessel k plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Join,
    Version,
    Denied,
    Stale,
    Crash,
}

impl Role {
    fn of(k: usize) -> Role {
        [
            Role::Join,
            Role::Version,
            Role::Denied,
            Role::Stale,
            Role::Crash,
        ][k % 5]
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    Clean,
    Lost,
    Damaged,
    Duplicated,
    Reordered,
    Missed,
}

/// A packet in flight to a peer (what it means to the receiver).
#[derive(Debug, Clone)]
struct Delivery {
    at: u64,
    session: usize,
    to_vessel: bool,
    version_only: bool,
    join: bool,
    id: String,
}

/// One captured frame and what the truth needs of it.
#[derive(Debug, Clone)]
struct Captured {
    ts: u64,
    order: u64,
    session: usize,
    c2s: bool,
    payload: Vec<u8>,
    /// The sender's packet count (unbounded sync), for sync-bearing packets.
    index: Option<u64>,
    readable: bool,
    second_copy: bool,
    version_only: bool,
}

struct Vessel {
    addr: SocketAddr,
    role: Role,
    start: u64,
    version: &'static str,
    id: String,
    sync: u64,
    stopped: bool,
    crash_at: u64,
}

struct Env {
    first_heard: Option<u64>,
    last_heard: u64,
    refused: bool,
    issued: Option<String>,
    used: bool,
    sync: u64,
}

/// Runs a simulation: the captured frames in capture order, and the truth.
fn simulate(req: &SimRequest) -> (Vec<Captured>, Value) {
    let mut rng = ChaCha8Rng::seed_from_u64(req.seed);
    let n = req.clients.max(1);
    let env_addr = SocketAddr::from(([10, 7, 0, 100], PORT));
    let mut vessels: Vec<Vessel> = (0..n).map(|k| Vessel::new(k, req, &mut rng)).collect();
    let mut envs: Vec<Env> = (0..n).map(|_| Env::new(&mut rng)).collect();
    let mut net = Network::new(req, rng);
    let end = req.duration_ms * 1000;
    for i in 0..end / TICK_US {
        for k in 0..n {
            let t = vessels[k].start + i * TICK_US;
            if t >= end {
                continue;
            }
            net.vessel_step(&mut vessels[k], k, i, t);
            net.env_step(&mut envs[k], &vessels[k], k, i, t + ENV_OFFSET_US, end);
        }
    }
    let mut frames = net.frames;
    frames.sort_by_key(|f| (f.ts, f.order));
    let truth = truth(req, &vessels, &envs, &frames, env_addr);
    (frames, truth)
}

impl Vessel {
    /// Vessel `k` of the simulation: its address, role, start and first sync.
    fn new(k: usize, req: &SimRequest, rng: &mut ChaCha8Rng) -> Vessel {
        let role = Role::of(k);
        Vessel {
            addr: SocketAddr::from((
                [10, 7, (k / 250) as u8, (k % 250 + 1) as u8],
                41_000 + k as u16,
            )),
            role,
            start: k as u64 * 50_000,
            version: if role == Role::Version {
                "0.0.1"
            } else {
                "0.0.2"
            },
            id: if role == Role::Stale {
                format!("stale-{k}")
            } else {
                String::new()
            },
            sync: rng.random_range(0..256),
            stopped: false,
            crash_at: req.duration_ms * 400,
        }
    }
}

impl Env {
    fn new(rng: &mut ChaCha8Rng) -> Env {
        Env {
            first_heard: None,
            last_heard: 0,
            refused: false,
            issued: None,
            used: false,
            sync: rng.random_range(0..256),
        }
    }
}

/// The network between the peers: what is in flight, the fates drawn for
/// each direction, and the frames the tap captured.
struct Network {
    rng: ChaCha8Rng,
    c2s: [(Fate, f64); 5],
    s2c: [(Fate, f64); 5],
    flight: Vec<Delivery>,
    frames: Vec<Captured>,
    order: u64,
}

impl Network {
    fn new(req: &SimRequest, rng: ChaCha8Rng) -> Network {
        let rates = |c2s: bool| {
            let pick = |r: crate::proto::sim::Rates| if c2s { r.c2s } else { r.s2c };
            [
                (Fate::Lost, pick(req.loss)),
                (Fate::Damaged, pick(req.corrupt)),
                (Fate::Duplicated, pick(req.duplicate)),
                (Fate::Reordered, pick(req.reorder)),
                (Fate::Missed, pick(req.tap_miss)),
            ]
        };
        Network {
            rng,
            c2s: rates(true),
            s2c: rates(false),
            flight: Vec::new(),
            frames: Vec::new(),
            order: 0,
        }
    }

    /// Vessel `k` at its tick `i` (time `t`): it reads what reached it, then
    /// sends its input unless it was refused or crashed.
    fn vessel_step(&mut self, v: &mut Vessel, k: usize, i: u64, t: u64) {
        self.flight.retain(|d| {
            if d.to_vessel && d.session == k && d.at <= t {
                if d.version_only || !d.join {
                    v.stopped = true;
                }
                if !d.id.is_empty() && d.join {
                    v.id = d.id.clone();
                }
                false
            } else {
                true
            }
        });
        let crashed = v.role == Role::Crash && t >= v.crash_at;
        if v.stopped || crashed {
            return;
        }
        let sync = v.sync;
        v.sync += 1;
        let m = VesselToEnvironment {
            protocol_version: v.version.into(),
            vessel_id: v.id.clone(),
            sync_number: (sync % 256) as u32,
            ship_input: Some(ShipInput {
                throttle_left_engine: 0.25 + (i % 4) as f32 / 8.0,
                throttle_right_engine: 0.5,
                fire_gun: i.is_multiple_of(3),
                ..Default::default()
            }),
        };
        let meaning = Delivery {
            at: 0,
            session: k,
            to_vessel: false,
            version_only: false,
            join: true,
            id: v.id.clone(),
        };
        let fate = draw(&mut self.rng, &self.c2s);
        let sent = (t, k, true, m.encode_to_vec(), Some(sync), false);
        send(
            &mut self.frames,
            &mut self.flight,
            &mut self.order,
            sent,
            meaning,
            fate,
        );
    }

    /// The environment of session `k` at time `te`: it reads what reached it,
    /// then answers while the vessel is heard (a refused one for a shorter
    /// while), until the end `end`.
    fn env_step(&mut self, e: &mut Env, v: &Vessel, k: usize, i: u64, te: u64, end: u64) {
        self.flight.retain(|d| {
            if !d.to_vessel && d.session == k && d.at <= te {
                e.first_heard.get_or_insert(d.at);
                e.last_heard = d.at;
                if let Some(id) = &e.issued
                    && *id == d.id
                {
                    e.used = true;
                }
                false
            } else {
                true
            }
        });
        if e.first_heard.is_none() {
            return;
        }
        let refused = v.version != "0.0.2" || v.role == Role::Denied;
        e.refused = refused;
        let linger = if refused {
            REFUSED_LINGER_US
        } else {
            LINGER_US
        };
        if te > e.last_heard + linger || te >= end {
            return;
        }
        if !refused && e.issued.is_none() {
            e.issued = Some(format!("vessel-{k}"));
        }
        let (m, version_only, index) = env_message(e, v, i);
        let meaning = Delivery {
            at: 0,
            session: k,
            to_vessel: true,
            version_only,
            join: m.join_status,
            id: m.vessel_id.clone(),
        };
        let fate = draw(&mut self.rng, &self.s2c);
        let sent = (te, k, false, m.encode_to_vec(), index, version_only);
        send(
            &mut self.frames,
            &mut self.flight,
            &mut self.order,
            sent,
            meaning,
            fate,
        );
    }
}

/// What the environment sends at tick `i`: to a vessel of another version,
/// its own version only (no sync number); else the game state, with the
/// issued id until the vessel uses it. With whether it is version-only and
/// its unbounded sync count.
fn env_message(e: &mut Env, v: &Vessel, i: u64) -> (EnvironmentToVessel, bool, Option<u64>) {
    if v.version != "0.0.2" {
        let m = EnvironmentToVessel {
            protocol_version: "0.0.2".into(),
            ..Default::default()
        };
        return (m, true, None);
    }
    let sync = e.sync;
    e.sync += 1;
    let id = match (&e.issued, e.used) {
        (Some(id), false) => id.clone(),
        _ => String::new(),
    };
    let objects = (0..(i % 4))
        .map(|o| VisibleObject {
            r#type: (o % 2) as i32,
            position: Some(Position {
                x: o as f64 * 10.0,
                y: 5.5,
            }),
            orientation: 1.5,
            velocity: None,
        })
        .collect();
    let m = EnvironmentToVessel {
        protocol_version: "0.0.2".into(),
        join_status: v.role != Role::Denied,
        vessel_id: id,
        sync_number: (sync % 256) as u32,
        ship_input: Some(ShipInput {
            throttle_left_engine: 0.5,
            throttle_right_engine: 0.5,
            ..Default::default()
        }),
        ship_sensors: Some(ShipSensors {
            visual: Some(VisualSensors {
                visible_objects: objects,
            }),
            health: Some(HealthSensor { health: 100 }),
        }),
    };
    (m, false, Some(sync))
}

fn draw(rng: &mut ChaCha8Rng, rates: &[(Fate, f64); 5]) -> Fate {
    let x: f64 = rng.random();
    let mut acc = 0.0;
    for &(fate, p) in rates {
        acc += p;
        if x < acc {
            return fate;
        }
    }
    Fate::Clean
}

type Sent = (u64, usize, bool, Vec<u8>, Option<u64>, bool);

fn send(
    frames: &mut Vec<Captured>,
    flight: &mut Vec<Delivery>,
    order: &mut u64,
    (t, session, c2s, payload, index, version_only): Sent,
    meaning: Delivery,
    fate: Fate,
) {
    let tap = if c2s { TAP_C2S_US } else { TAP_S2C_US };
    let delay = if fate == Fate::Reordered {
        2 * TICK_US
    } else {
        0
    };
    let mut capture = |payload: Vec<u8>, second_copy: bool, readable: bool| {
        *order += 1;
        frames.push(Captured {
            ts: t + tap + delay + u64::from(second_copy) * 100,
            order: *order,
            session,
            c2s,
            payload,
            index,
            readable,
            second_copy,
            version_only,
        });
    };
    match fate {
        Fate::Lost => return,
        Fate::Damaged => {
            let cut = payload.len().saturating_sub(2);
            capture(payload[..cut].to_vec(), false, false);
            return;
        }
        Fate::Missed => {}
        Fate::Duplicated => {
            capture(payload.clone(), false, true);
            capture(payload, true, true);
        }
        Fate::Clean | Fate::Reordered => capture(payload, false, true),
    }
    flight.push(Delivery {
        at: t + DELAY_US + delay,
        ..meaning
    });
}

/// The truth, per session, from the fates of the packets.
fn truth(
    req: &SimRequest,
    vessels: &[Vessel],
    envs: &[Env],
    frames: &[Captured],
    env_addr: SocketAddr,
) -> Value {
    let capture_end = frames.iter().map(|f| f.ts).max().unwrap_or(0);
    let mut sessions = BTreeMap::new();
    for (k, v) in vessels.iter().enumerate() {
        let mine: Vec<&Captured> = frames.iter().filter(|f| f.session == k).collect();
        if mine.is_empty() {
            continue;
        }
        let mut m: Counts = BTreeMap::new();
        m.insert("violations".into(), json!(0));
        for c2s in [true, false] {
            direction_truth(&mut m, &mine, c2s);
        }
        let first_refusal = session_notes(&mut m, v, &envs[k], &mine);
        if first_refusal.is_some_and(|t| sent_after_refusal(&mine, t)) {
            add(&mut m, "violations", 1);
            add(&mut m, "sent_after_refusal", 1);
        }
        let state = session_state(v, &mine, first_refusal.is_some(), capture_end);
        m.insert("state".into(), json!(state));
        sessions.insert(v.addr.to_string(), Value::Object(m.into_iter().collect()));
    }
    json!({
        "simulator": "lwarscope sim --proto vessel",
        "environment": env_addr.to_string(),
        "seed": req.seed,
        "clients": req.clients,
        "duration_ms": req.duration_ms,
        "faults": {
            "loss": [req.loss.c2s, req.loss.s2c],
            "duplicate": [req.duplicate.c2s, req.duplicate.s2c],
            "reorder": [req.reorder.c2s, req.reorder.s2c],
            "corrupt": [req.corrupt.c2s, req.corrupt.s2c],
            "tap_miss": [req.tap_miss.c2s, req.tap_miss.s2c],
        },
        "sessions": sessions,
    })
}

/// A session's figures in its truth, by name.
type Counts = BTreeMap<String, Value>;

/// Adds `n` to the figure `key` (a figure of 0 is left out).
fn add(m: &mut Counts, key: &str, n: u64) {
    if n > 0 {
        let e = m.entry(key.into()).or_insert(json!(0));
        *e = json!(e.as_u64().unwrap_or(0) + n);
    }
}

/// One direction's packets, malformed, duplicates, messages by type,
/// reorders, and the numbers below the newest captured never captured
/// readable.
fn direction_truth(m: &mut Counts, mine: &[&Captured], c2s: bool) {
    let dir: Vec<&&Captured> = mine.iter().filter(|f| f.c2s == c2s).collect();
    let key = if c2s { "c2s_packets" } else { "s2c_packets" };
    m.insert(key.into(), json!(dir.len()));
    let mut newest: Option<u64> = None;
    let mut seen = std::collections::BTreeSet::new();
    for f in &dir {
        if !f.readable {
            add(m, "malformed", 1);
            continue;
        }
        if f.second_copy && !f.version_only {
            add(m, "duplicates", 1);
            continue;
        }
        let name = match (c2s, f.version_only) {
            (true, _) => "vesselToEnvironment",
            (false, true) => "versionOnly",
            (false, false) => "environmentToVessel",
        };
        add(m, name, 1);
        if let Some(ix) = f.index {
            if newest.is_some_and(|n| ix < n) {
                add(m, "reordered", 1);
            }
            newest = Some(newest.map_or(ix, |n| n.max(ix)));
            seen.insert(ix);
        }
    }
    if let (Some(first), Some(last)) = (seen.first(), newest) {
        let skipped = (*first..last).filter(|ix| !seen.contains(ix)).count() as u64;
        add(m, if c2s { "skipped_c2s" } else { "skipped_s2c" }, skipped);
    }
}

/// The session's notes (refused, denied, issued, rejoin); returns when the
/// environment's first refusal was captured, if it was.
fn session_notes(m: &mut Counts, v: &Vessel, e: &Env, mine: &[&Captured]) -> Option<u64> {
    let refusals = mine.iter().filter(|f| {
        !f.c2s && f.readable && (f.version_only || (f.index.is_some() && v.role == Role::Denied))
    });
    let first_refusal = refusals.map(|f| f.ts).min();
    if v.role == Role::Version && first_refusal.is_some() {
        add(m, "refused", 1);
    }
    if v.role == Role::Denied && first_refusal.is_some() {
        add(m, "denied", 1);
    }
    let issued_captured = mine
        .iter()
        .any(|f| !f.c2s && f.readable && e.issued.is_some() && id_in(&f.payload));
    if issued_captured {
        add(m, "issued", 1);
        if v.role == Role::Stale {
            add(m, "rejoin", 1);
        }
    }
    first_refusal
}

/// Whether the vessel sent an in-date packet more than a second after the
/// refusal captured at `refused`. Out-of-date packets are not judged: a
/// vessel packet captured after one it sent later.
fn sent_after_refusal(mine: &[&Captured], refused: u64) -> bool {
    let mut newest = None;
    mine.iter().filter(|f| f.c2s && !f.second_copy).any(|f| {
        let in_date = match f.index {
            Some(ix) if f.readable => {
                let d = newest.is_none_or(|n| ix > n);
                newest = Some(newest.map_or(ix, |n: u64| n.max(ix)));
                d
            }
            _ => true,
        };
        in_date && f.ts > refused + 1_000_000
    })
}

/// The session's state at the capture's end.
fn session_state(v: &Vessel, mine: &[&Captured], refused: bool, capture_end: u64) -> &'static str {
    let last = |c2s: bool| mine.iter().filter(|f| f.c2s == c2s).map(|f| f.ts).max();
    let silent = |c2s: bool, limit: u64| last(c2s).is_none_or(|l| capture_end - l > limit);
    if v.role == Role::Version && refused {
        "version-mismatch"
    } else if v.role == Role::Denied && refused {
        "denied"
    } else if last(true).is_some_and(|l| capture_end - l > 5_000_000)
        || last(false).is_some_and(|l| capture_end - l > 5_000_000)
    {
        "timed-out"
    } else if silent(true, 1_000_000) && silent(false, 1_000_000) {
        "closed"
    } else {
        "open"
    }
}

/// Whether an environment packet carries a vesselID.
fn id_in(payload: &[u8]) -> bool {
    EnvironmentToVessel::decode(payload).is_ok_and(|m| !m.vessel_id.is_empty())
}

/// `lwarscope sim --proto vessel`: writes the capture and (if asked) its truth
/// beside it (`FILE.truth.json`).
pub fn sim_request(req: &SimRequest) -> Result<SimOutcome, String> {
    if req.byte_order.is_some() {
        return Err(crate::proto::sim::unsupported("Vessel", "--byte-order"));
    }
    let (frames, truth) = simulate(req);
    let env_addr = SocketAddr::from(([10, 7, 0, 100], PORT));
    let vessels: Vec<SocketAddr> = (0..req.clients.max(1))
        .map(|k| {
            SocketAddr::from((
                [10, 7, (k / 250) as u8, (k % 250 + 1) as u8],
                41_000 + k as u16,
            ))
        })
        .collect();
    let mut w = PcapWriter::create(&req.write, crate::capture::LinkType::Ethernet)
        .map_err(|e| e.to_string())?;
    for f in &frames {
        let v = vessels[f.session];
        let (src, dst) = if f.c2s { (v, env_addr) } else { (env_addr, v) };
        w.write(
            Timestamp((T0_US + f.ts) * 1000),
            &udp_frame(Link::Ethernet, src, dst, &f.payload),
        );
    }
    w.finish().map_err(|e| e.to_string())?;
    let truth_path = req.write.with_extension("truth.json");
    if req.truth {
        let text = serde_json::to_string_pretty(&truth).unwrap_or_default() + "\n";
        std::fs::write(&truth_path, text)
            .map_err(|e| format!("{}: {e}", crate::text::path(&truth_path)))?;
    }
    Ok(SimOutcome {
        frames: frames.len() as u64,
        sessions: truth["sessions"].as_object().map_or(0, |s| s.len()),
        truth: req.truth.then_some(truth_path),
    })
}
