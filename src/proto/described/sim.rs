//! Capture generators for the example layouts of `protocols/vessel.ksy` and
//! `protocols/timewarp.ksy`: scripted games with faults, written to a pcap,
//! and the findings the generic analysis must give (the ground truth, from
//! what the script did, never from running the analyzer). The packets are
//! encoded here byte by byte from the layouts, not by lwarscope's decoder.
//!
//! `tests/described/captures.rs` regenerates `captures/ksy-*.pcap` and their
//! `.truth.json` byte for byte and checks the analysis against the truth.

use crate::capture::Timestamp;
use crate::capture::synth::{Link, PcapWriter, udp_frame};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::Path;

/// One datagram of a scripted capture.
#[derive(Debug, Clone)]
pub struct Frame {
    pub ms: u64,
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub payload: Vec<u8>,
}

/// A scripted capture and its truth.
#[derive(Debug, Clone)]
pub struct Script {
    pub frames: Vec<Frame>,
    pub truth: Value,
}

/// Capture time of the first frame: 2023-11-14 22:13:20 UTC, as the others.
const T0_MS: u64 = 1_700_000_000_000;

impl Script {
    /// Writes the pcap (Ethernet, nanosecond timestamps) and the truth JSON.
    pub fn write(&self, pcap: &Path, truth: &Path) -> Result<(), crate::capture::CaptureError> {
        let mut w = PcapWriter::create(pcap, crate::capture::LinkType::Ethernet)?;
        for f in &self.frames {
            let ts = Timestamp::from_millis(T0_MS + f.ms);
            w.write(ts, &udp_frame(Link::Ethernet, f.src, f.dst, &f.payload));
        }
        w.finish()?;
        let text = serde_json::to_string_pretty(&self.truth).unwrap_or_default() + "\n";
        std::fs::write(truth, text).map_err(|e| crate::capture::CaptureError::Savefile {
            path: truth.display().to_string(),
            reason: e.to_string(),
        })
    }
}

/// `sim --proto vessel`: writes [`vessel`]'s capture (and its truth).
pub fn sim_vessel(
    req: &crate::proto::sim::SimRequest,
) -> Result<crate::proto::sim::SimOutcome, String> {
    scripted(req, "Vessel", vessel())
}

/// `sim --proto timewarp`: writes [`timewarp`]'s capture (and its truth).
pub fn sim_timewarp(
    req: &crate::proto::sim::SimRequest,
) -> Result<crate::proto::sim::SimOutcome, String> {
    scripted(req, "Timewarp", timewarp())
}

/// A script is fixed, faults included: fault rates are refused by name.
fn scripted(
    req: &crate::proto::sim::SimRequest,
    title: &str,
    script: Script,
) -> Result<crate::proto::sim::SimOutcome, String> {
    if req.byte_order.is_some() {
        return Err(crate::proto::sim::unsupported(title, "--byte-order"));
    }
    for (rates, option) in [
        (req.loss, "--loss"),
        (req.duplicate, "--dup"),
        (req.reorder, "--reorder"),
        (req.corrupt, "--corrupt"),
        (req.tap_miss, "--tap-miss"),
    ] {
        if !rates.is_zero() {
            return Err(format!(
                "{}: the {title} capture is a fixed script with its own faults",
                crate::proto::sim::unsupported(title, option)
            ));
        }
    }
    let truth_path = req.write.with_extension("truth.json");
    let (pcap, truth) = (req.write.as_path(), truth_path.as_path());
    if req.truth {
        script.write(pcap, truth).map_err(|e| e.to_string())?;
    } else {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        script
            .write(pcap, &dir.path().join("truth.json"))
            .map_err(|e| e.to_string())?;
    }
    Ok(crate::proto::sim::SimOutcome {
        frames: script.frames.len() as u64,
        sessions: script.truth["sessions"].as_array().map_or(0, Vec::len),
        truth: req.truth.then_some(truth_path),
    })
}

fn addr(s: &str) -> SocketAddr {
    s.parse()
        .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 1)))
}

/// Vessel's ship input, as laid out in `vessel.ksy`: throttles (f4be),
/// thrusters (u1), gun trigger (u1).
fn vessel_input_bytes(out: &mut Vec<u8>, left: f32, right: f32, thrusters: u8, gun: u8) {
    out.extend(left.to_be_bytes());
    out.extend(right.to_be_bytes());
    out.push(thrusters);
    out.push(gun);
}

fn vessel_header(out: &mut Vec<u8>, msg_type: u8, sync: u8) {
    let version = b"1.0";
    out.push(version.len() as u8);
    out.extend(version);
    out.push(msg_type);
    out.push(sync);
}

/// A vessel's packet: its input state.
pub fn vessel_input(sync: u8, vessel_id: Option<u32>, left: f32, right: f32) -> Vec<u8> {
    let mut p = Vec::new();
    vessel_header(&mut p, 1, sync);
    match vessel_id {
        Some(id) => {
            p.push(1);
            p.extend(id.to_be_bytes());
        }
        None => p.push(0),
    }
    vessel_input_bytes(
        &mut p,
        left,
        right,
        0b0000_0101,
        u8::from(sync.is_multiple_of(7)),
    );
    p
}

/// The environment's packet: join status, the input it applies, health and
/// `objects` sensor readings (type, x, y, orientation, vx, vy).
pub fn environment_state(sync: u8, new_id: Option<u32>, objects: u8) -> Vec<u8> {
    let mut p = Vec::new();
    vessel_header(&mut p, 2, sync);
    p.push(1); // joinStatus
    match new_id {
        Some(id) => {
            p.push(1);
            p.extend(id.to_be_bytes());
        }
        None => p.push(0),
    }
    vessel_input_bytes(&mut p, 0.5, 0.5, 0b0000_0101, 0);
    p.extend(100i32.to_be_bytes());
    p.push(objects);
    for k in 0..objects {
        p.push(1 + k % 2);
        for v in [10.0f32 * f32::from(k), 25.0, 1.5, -1.0, 2.0] {
            p.extend(v.to_be_bytes());
        }
    }
    p
}

/// `captures/ksy-vessel-faults.pcap`: one vessel and the environment for
/// about 12 s at 30 Hz each way, sync numbers wrapping from 255 to 0, with:
/// a vessel packet lost before the tap (`lost`), a vessel packet delayed past
/// two newer ones (`reordered`: stale, the environment discards it), three
/// environment packets lost in a row (`lost` x3), one environment packet
/// duplicated (`duplicate-packet`), a throttle of 1.5 (`violation/valid`), an
/// environment packet cut short by its sender (`malformed`), and the vessel
/// falling silent for the last 6 s (the session `timed-out`, timeout 5 s).
pub fn vessel() -> Script {
    let vessel = addr("10.0.2.1:40000");
    let env = addr("10.0.0.1:7600");
    let mut frames = Vec::new();
    let (mut c_sync, mut s_sync) = (200u8, 10u8);
    let mut delayed: Option<(u64, Vec<u8>)> = None;
    for step in 0..360u64 {
        let ms = step * 33;
        // The vessel: silent after step 180 (about 6 s before the end).
        if step < 180 {
            let id = (step > 3).then_some(7);
            let left = if step == 120 { 1.5 } else { 0.25 };
            let p = vessel_input(c_sync, id, left, 0.75);
            c_sync = c_sync.wrapping_add(1);
            match step {
                // Lost before the tap (sync 250 after 50 packets from 200).
                50 => {}
                // Held back: sent now, captured after two newer packets.
                90 => delayed = Some((ms + 70, p)),
                _ => frames.push(Frame {
                    ms,
                    src: vessel,
                    dst: env,
                    payload: p,
                }),
            }
        }
        if let Some((at, p)) = delayed.take_if(|(at, _)| *at <= ms + 1) {
            frames.push(Frame {
                ms: at,
                src: vessel,
                dst: env,
                payload: p,
            });
        }
        let new_id = (step <= 3).then_some(7);
        let mut p = environment_state(s_sync, new_id, (step % 4) as u8);
        s_sync = s_sync.wrapping_add(1);
        match step {
            // Three lost in a row.
            200..=202 => continue,
            // Cut by the sender inside the sensor readings.
            150 => {
                let keep = p.len().saturating_sub(6);
                p.truncate(keep);
            }
            _ => {}
        }
        let f = Frame {
            ms: ms + 10,
            src: env,
            dst: vessel,
            payload: p,
        };
        if step == 100 {
            let mut dup = f.clone();
            dup.ms += 1;
            frames.push(f);
            frames.push(dup);
        } else {
            frames.push(f);
        }
    }
    frames.sort_by_key(|f| f.ms);
    let truth = json!({
        "description": "protocols/vessel.ksy",
        "frames": frames.len(),
        "sessions": [{
            "client": vessel.to_string(),
            "server": env.to_string(),
            "state": "timed-out",
            "c2s": {
                "not-captured": 1,
                "reordered": 1,
                "violation/valid": 1,
            },
            "s2c": {
                "not-captured": 3,
                "duplicate-packet": 1,
                "malformed": 1,
            },
        }],
    });
    Script { frames, truth }
}

/// A long Vessel run with loss: one vessel and the environment exchanging
/// packets at 30 Hz each way for `seconds`, each packet (the first and last
/// of each direction excepted: a loss must lie between two captured numbers)
/// lost before the tap with probability `loss_permille` / 1000, drawn from
/// `seed`. The sync numbers go round their 256-step cycle many times; the
/// truth counts the packets the script dropped, per direction (`lost` each).
pub fn vessel_lossy(seconds: u64, loss_permille: u64, seed: u64) -> Script {
    let vessel = addr("10.0.2.1:40000");
    let env = addr("10.0.0.1:7600");
    let steps = seconds * 30;
    let mut rng = seed | 1;
    let mut lose = |step: u64| {
        // xorshift64*: the same drops for the same seed, everywhere.
        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        let r = rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33;
        step > 0 && step + 1 < steps && r % 1000 < loss_permille
    };
    let mut frames = Vec::new();
    let mut lost = [0u64; 2];
    for step in 0..steps {
        let ms = step * 33;
        let sync = (step % 256) as u8;
        let p = vessel_input(sync.wrapping_add(200), Some(7), 0.25, 0.75);
        if lose(step) {
            lost[0] += 1;
        } else {
            frames.push(Frame {
                ms,
                src: vessel,
                dst: env,
                payload: p,
            });
        }
        let p = environment_state(sync.wrapping_add(10), None, (step % 4) as u8);
        if lose(step) {
            lost[1] += 1;
        } else {
            frames.push(Frame {
                ms: ms + 10,
                src: env,
                dst: vessel,
                payload: p,
            });
        }
    }
    let findings = |n: u64| {
        if n == 0 {
            json!({})
        } else {
            json!({ "not-captured": n })
        }
    };
    let truth = json!({
        "description": "protocols/vessel.ksy",
        "frames": frames.len(),
        "sessions": [{
            "client": vessel.to_string(),
            "server": env.to_string(),
            "state": "open",
            "c2s": findings(lost[0]),
            "s2c": findings(lost[1]),
        }],
    });
    Script { frames, truth }
}

fn tw(flag: u8, body: &[u8]) -> Vec<u8> {
    let mut p = vec![flag];
    p.extend(body);
    p
}

/// One ship entry of UPDATE_GAME_DATA, 24 bytes, little-endian.
fn ship(id: u8, angle: u8) -> Vec<u8> {
    let mut s = vec![1, id];
    for v in [100.0f32 + f32::from(id), 50.0, 1.5, -0.5] {
        s.extend(v.to_le_bytes());
    }
    s.extend([angle, 0b1001, 18, 40, 0]);
    s.extend(0u16.to_le_bytes());
    s
}

fn update(ships: u8, bad_angle: bool) -> Vec<u8> {
    let mut b = vec![ships];
    for i in 0..ships {
        b.extend(ship(i + 1, if bad_angle && i == 0 { 200 } else { 90 }));
    }
    tw(10, &b)
}

/// `captures/ksy-timewarp-faults.pcap`: a client connects (ping, initial and
/// confirmed connection, three game-state chunks and the check), then the
/// server updates it at 10 Hz; faults: one update duplicated
/// (`duplicate-packet`), one with an angle of 200 (`violation/valid`, max
/// 127), one cut short by the sender and one with an unknown FLAG
/// (`malformed` x2), one of 25 ships, over the 548-byte budget (`oversize`).
/// A second client is refused (RESPONSE_SERVER_FULL) and says no more; a
/// third pings twice from an address ending in 255 and the server answers
/// both (`violation/dropped-address`: one incident, as the server drops such
/// addresses). The first falls silent after 3 s while the server keeps
/// sending for 11 s more (every session `timed-out`, timeout 10 s).
pub fn timewarp() -> Script {
    let server = addr("10.0.0.1:7711");
    let c1 = addr("10.0.3.1:41000");
    let c2 = addr("10.0.3.2:41001");
    let c3 = addr("10.0.3.255:41002");
    let mut f = Frames(Vec::new());
    let (info, req, check) = timewarp_connect(&mut f, c1, server);
    // A second client, refused.
    f.at(150, c2, server, tw(3, &req));
    let full = 65532u16.to_le_bytes();
    f.at(155, server, c2, tw(4, &full));
    // A third pings from an address ending in 255, twice: the server answers
    // both, though it must drop that address.
    for ms in [170, 180] {
        f.at(ms, c3, server, tw(1, &[]));
        f.at(ms + 2, server, c3, tw(2, &info));
    }
    timewarp_play(&mut f, c1, server, &check);
    let mut frames = f.0;
    frames.sort_by_key(|f| f.ms);
    let truth = json!({
        "description": "protocols/timewarp.ksy",
        "frames": frames.len(),
        "sessions": [
            {
                "client": c1.to_string(),
                "server": server.to_string(),
                "state": "timed-out",
                "c2s": {},
                "s2c": {
                    "duplicate-packet": 1,
                    "violation/valid": 1,
                    "malformed": 2,
                    "oversize": 1,
                },
            },
            {
                "client": c2.to_string(),
                "server": server.to_string(),
                "state": "timed-out",
                "c2s": {},
                "s2c": {},
            },
            {
                "client": c3.to_string(),
                "server": server.to_string(),
                "state": "timed-out",
                "c2s": {},
                "s2c": {
                    "violation/dropped-address": 1,
                },
            },
        ],
    });
    Script { frames, truth }
}

/// The frames of a script, as they are written.
struct Frames(Vec<Frame>);

impl Frames {
    fn at(&mut self, ms: u64, src: SocketAddr, dst: SocketAddr, payload: Vec<u8>) {
        self.0.push(Frame {
            ms,
            src,
            dst,
            payload,
        });
    }
}

/// Timewarp's connection of `c1`: ping and info, the request, FLAG + ID
/// (the game type description only follows RESPONSE_UNKNOWN_GAME_TYPE), the
/// configuration in chunks, the check. Returns the info, request and check
/// payloads the rest of the script sends again.
fn timewarp_connect(
    f: &mut Frames,
    c1: SocketAddr,
    server: SocketAddr,
) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    f.at(0, c1, server, tw(1, &[]));
    let mut info = vec![1, 8, 2, 5];
    info.extend(b"arena");
    f.at(5, server, c1, tw(2, &info));
    let mut req = 3u16.to_le_bytes().to_vec();
    req.extend([2, 1, 4]);
    f.at(20, c1, server, tw(3, &req));
    let resp = 7u16.to_le_bytes();
    f.at(25, server, c1, tw(4, &resp));
    let mut conf = 7u16.to_le_bytes().to_vec();
    conf.push(1);
    let mut name = [0u8; 16];
    name[..5].copy_from_slice(b"alice");
    conf.extend(name);
    conf.push(3);
    f.at(40, c1, server, tw(5, &conf));
    for chunk in 1..=3u8 {
        let data = [chunk; 20];
        let mut b = vec![chunk, 4];
        b.extend(20u16.to_le_bytes());
        b.extend(data);
        f.at(40 + 10 * u64::from(chunk), server, c1, tw(6, &b));
    }
    let mut last = vec![4, 4];
    last.extend(0u16.to_le_bytes());
    last.extend(0x1234_5678u32.to_le_bytes());
    last.extend(0x9abc_def0u32.to_le_bytes());
    f.at(80, server, c1, tw(6, &last));
    let mut check = 0x1234_5678u32.to_le_bytes().to_vec();
    check.extend(0x9abc_def0u32.to_le_bytes());
    f.at(95, c1, server, tw(7, &check));
    f.at(100, server, c1, tw(8, &[]));
    (info, req, check)
}

/// Play: updates at 10 Hz for 14 s, with a duplicate, a cut one, an unknown
/// type and an oversize one; the client's events until 3 s.
fn timewarp_play(f: &mut Frames, c1: SocketAddr, server: SocketAddr, check: &[u8]) {
    for k in 0..140u64 {
        let ms = 200 + k * 100;
        let mut u = update(4, k == 30);
        match k {
            40 => {
                u.truncate(u.len() - 10);
            }
            50 => u = tw(0x42, &[0; 8]),
            60 => u = update(25, false),
            _ => {}
        }
        if k == 20 {
            f.at(ms, server, c1, u.clone());
        }
        f.at(ms + 1, server, c1, u);
        if ms < 3_000 && k % 5 == 0 {
            f.at(ms + 30, c1, server, tw(7, check));
        }
    }
}
