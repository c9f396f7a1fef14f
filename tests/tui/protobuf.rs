//! The terminal UI reads a protobuf description's packets as their
//! direction's message: the session's reader is kept per direction (a
//! description whose sides send two messages reads a client's packet as the
//! client's message and a server's as the server's, even where the content
//! cannot tell them apart, as the environment's version-only reply of Vessel).
//! Its own binary: the description must be loaded before the registry is
//! first used.

use lwarscope::capture::{FrameClass, OwnedDatagram, Source};
use lwarscope::tui::app::SourceInfo;
use lwarscope::tui::data::MemoryFeed;
use std::path::Path;

/// Vessel's packets, moved from port 39461 (the built-in `vessel`'s) to
/// `port`.
fn datagrams(port: u16) -> Vec<OwnedDatagram> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut source = Source::files(&[root.join("captures/vessel-clean.pcap")]).unwrap();
    let mut out = Vec::new();
    while let Some(frame) = source.next_frame().unwrap() {
        if let FrameClass::Udp(d) = frame.class {
            let mut d = d.to_owned_datagram();
            for a in [&mut d.src, &mut d.dst] {
                if a.port() == 39461 {
                    a.set_port(port);
                }
            }
            out.push(d);
        }
    }
    out
}

#[test]
fn each_packet_is_read_as_its_directions_message() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("lwarscope-pbtui-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let yaml = std::fs::read_to_string(root.join("protocols/vessel-protobuf.yaml"))
        .unwrap()
        .replace("39461", "40461");
    std::fs::write(dir.join("vessel-protobuf.yaml"), yaml).unwrap();
    std::fs::copy(
        root.join("protocols/vessel.proto"),
        dir.join("vessel.proto"),
    )
    .unwrap();
    lwarscope::proto::described::load_files(&[dir.join("vessel-protobuf.yaml")]).unwrap();
    let _ = std::fs::remove_dir_all(&dir);

    let info = SourceInfo {
        label: "vessel-clean".into(),
        live: false,
    };
    let app = lwarscope::tui::load_app(MemoryFeed::new(datagrams(40461)), info).unwrap();
    let mut payload = Vec::new();
    let mut version_only = 0;
    for i in 0..app.rows.len() {
        let row = app.row(i).unwrap();
        assert!(app.payload(&row, &mut payload));
        let protocol = app.protocol(&row, &payload);
        assert_eq!(protocol.name, "vessel_pb");
        let (src, _) = app.addresses(&row).unwrap();
        let want = if src.port() == 40461 {
            "environmentToVessel"
        } else {
            "vesselToEnvironment"
        };
        let mut got = Vec::new();
        app.dissector(&row, &payload)
            .messages(&payload, &mut |m| got.push(m.type_name))
            .unwrap();
        assert_eq!(got, [want], "row {i}");
        // protocolVersion alone: nothing in it tells the messages apart.
        if payload.len() < 10 && want == "environmentToVessel" {
            version_only += 1;
            let mut by_content = Vec::new();
            protocol
                .dissector
                .messages(&payload, &mut |m| by_content.push(m.type_name))
                .unwrap();
            assert_eq!(by_content, ["vesselToEnvironment"], "row {i}");
        }
    }
    assert_eq!(version_only, 2);
}
