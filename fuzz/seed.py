#!/usr/bin/env python3
"""Seeds the fuzz corpora (fuzz/corpus/<target>/) from captures/ and a few
hand-made inputs. Run from the repository root: python3 fuzz/seed.py

- frames: runs of 8 frames of each capture, in the target's format (link
  selector, flags, u16 LE length, bytes), cut and whole; IPv4 and IPv6
  fragments, in order, out of order, overlapping.
- capture_file: each capture's first 12 records as pcap, as pcapng (editcap,
  when installed), gzip- and zstd-compressed, and (Ethernet captures) as a
  pcapng file with Ethernet and raw IP interfaces, plain and gzip-compressed.
- display_filter: expressions (README, tests), each with a few payloads.
- rules_file: rules files and expected results (truth files).
- description: each shipped description (protocols/*.ksy), a NUL, then
  payloads of its captures; the protobuf description of Vessel, a NUL, its
  .proto, a NUL, then payloads of the Vessel captures;
- decode, strs_decode, bg_decode, described_decode: the captures' payloads;
  described_decode also the shipped descriptions (protocols/*.ksy), for the
  description parser.
"""

import gzip
import os
import shutil
import struct
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAPTURES = os.path.join(ROOT, "captures")
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
LINKS = {1: 0, 113: 1, 276: 2, 0: 3, 108: 4, 101: 5, 12: 5}


def records(path):
    """(linktype, [(ts, bytes)]) of a classic pcap file."""
    with open(path, "rb") as f:
        data = f.read()
    magic = data[:4]
    endian = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    out, at = [], 24
    while at + 16 <= len(data):
        sec, frac, cap, _orig = struct.unpack(endian + "IIII", data[at:at + 16])
        out.append(((sec, frac), data[at + 16:at + 16 + cap]))
        at += 16 + cap
    return linktype, data[:24], out, endian


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def frame_record(link, flags, frame):
    return bytes([link, flags]) + struct.pack("<H", len(frame)) + frame


def checksum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4_fragment(ident, offset, more, data):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(data), ident,
                    (0x2000 if more else 0) | (offset // 8), 64, 17, 0,
                    bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
    h = h[:10] + struct.pack("!H", checksum(h)) + h[12:]
    return h + data


def ipv6_fragment(ident, offset, more, data):
    frag = struct.pack("!BBHI", 17, 0, (offset // 8) << 3 | (1 if more else 0), ident)
    h = struct.pack("!IHBB16s16s", 0x60000000, len(frag) + len(data), 44, 64,
                    b"\0" * 15 + b"\1", b"\0" * 15 + b"\2")
    return h + frag + data


def udp(payload, sport=5000, dport=32422):
    return struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload


def fragment_seeds(payloads):
    seeds = []
    for p in payloads[:4]:
        d = udp(p)
        for make in (ipv4_fragment, ipv6_fragment):
            pieces = [(o, d[o:o + 32]) for o in range(0, len(d), 32)]
            frags = [make(7, o, o + 32 < len(d), c) for o, c in pieces]
            in_order = b"".join(frame_record(5, 0, f) for f in frags)
            seeds.append(in_order)
            seeds.append(b"".join(frame_record(5, 0, f) for f in reversed(frags)))
            # An overlap: the second fragment again, shifted by 8 bytes.
            if len(pieces) > 1:
                o, c = pieces[1]
                over = make(7, o + 8, True, d[o + 8:o + 40])
                seeds.append(frame_record(5, 0, frags[0]) + frame_record(5, 0, over)
                             + b"".join(frame_record(5, 0, f) for f in frags[1:]))
            # A timeout: the last fragment 31 s later.
            seeds.append(b"".join(frame_record(5, 0, f) for f in frags[:-1])
                         + frame_record(5, 2, frags[-1]))
    return seeds


def pcap_bytes(header, endian, recs):
    out = bytearray(header)
    for (sec, frac), frame in recs:
        out += struct.pack(endian + "IIII", sec, frac, len(frame), len(frame)) + frame
    return bytes(out)


def ng_block(kind, body):
    body = body + b"\0" * (-len(body) % 4)
    n = 12 + len(body)
    return struct.pack("<II", kind, n) + body + struct.pack("<I", n)


def pcapng_mixed(recs):
    """Ethernet frames on interface 0, the same without their Ethernet header
    on a raw IP interface 1, alternately."""
    out = ng_block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    out += ng_block(1, struct.pack("<HHI", 1, 0, 0))
    out += ng_block(1, struct.pack("<HHI", 101, 0, 0))
    for i, ((sec, frac), frame) in enumerate(recs):
        iface, data = (0, frame) if i % 2 == 0 else (1, frame[14:])
        units = sec * 1_000_000 + frac
        out += ng_block(6, struct.pack("<IIIII", iface, units >> 32, units & 0xFFFFFFFF,
                                       len(data), len(data)) + data)
    return out


def udp_payload(frame, linktype):
    """The UDP payload of an Ethernet / raw IPv4 or IPv6 frame, if plain."""
    at = 14 if linktype == 1 else 0
    if linktype == 1 and frame[12:14] == b"\x81\x00":
        at += 4
    if at >= len(frame):
        return None
    v = frame[at] >> 4
    if v == 4:
        ihl = (frame[at] & 15) * 4
        if frame[at + 9] != 17:
            return None
        return frame[at + ihl + 8:]
    if v == 6 and len(frame) > at + 40 and frame[at + 6] == 17:
        return frame[at + 48:]
    return None


def main():
    if os.path.isdir(CORPUS) and "--keep" not in sys.argv:
        for t in ("frames", "capture_file", "display_filter", "rules_file"):
            shutil.rmtree(os.path.join(CORPUS, t), ignore_errors=True)
    names = sorted(n for n in os.listdir(CAPTURES) if n.endswith(".pcap"))
    payloads = {"lwar": [], "strs": [], "bg": [], "ksy": [], "vessel": []}
    for name in names:
        path = os.path.join(CAPTURES, name)
        linktype, header, recs, endian = records(path)
        link = LINKS.get(linktype, 0)
        stem = name[:-5]
        # frames: runs of 8, whole and cut.
        for i in range(0, min(len(recs), 64), 8):
            run = recs[i:i + 8]
            write("frames", f"{stem}-{i}", b"".join(frame_record(link, 0, f) for _, f in run))
            write("frames", f"{stem}-{i}-cut", b"".join(
                frame_record(link, 1, f[:60]) for _, f in run))
        # capture_file: the first 12 records.
        small = pcap_bytes(header, endian, recs[:12])
        write("capture_file", f"{stem}.pcap", small)
        write("capture_file", f"{stem}.pcap.gz", gzip.compress(small))
        if shutil.which("zstd"):
            zst = subprocess.run(["zstd", "-q", "-c"], input=small, capture_output=True).stdout
            write("capture_file", f"{stem}.pcap.zst", zst)
        if shutil.which("editcap"):
            tmp_in = os.path.join(CORPUS, ".in.pcap")
            tmp_out = os.path.join(CORPUS, ".out.pcapng")
            with open(tmp_in, "wb") as f:
                f.write(small)
            if subprocess.run(["editcap", "-F", "pcapng", tmp_in, tmp_out],
                              capture_output=True).returncode == 0:
                with open(tmp_out, "rb") as f:
                    ng = f.read()
                write("capture_file", f"{stem}.pcapng", ng)
                # Compressed pcapng: read by lwarscope's own parser as it comes.
                write("capture_file", f"{stem}.pcapng.gz", gzip.compress(ng))
            for t in (tmp_in, tmp_out):
                if os.path.exists(t):
                    os.remove(t)
        if linktype == 1:
            # Ethernet and raw IP interfaces in one pcapng file (libpcap
            # refuses it), plain and compressed.
            mixed = pcapng_mixed(recs[:12])
            write("capture_file", f"{stem}-mixed.pcapng", mixed)
            write("capture_file", f"{stem}-mixed.pcapng.gz", gzip.compress(mixed))
        kind = ("strs" if stem.startswith("strs") else "bg" if stem.startswith("bg")
                else "ksy" if stem.startswith("ksy")
                else "vessel" if stem.startswith("vessel") else "lwar")
        for _, f in recs[:40]:
            p = udp_payload(f, linktype)
            if p is not None:
                payloads[kind].append(p)
    for i, s in enumerate(fragment_seeds(payloads["lwar"] + payloads["strs"])):
        write("frames", f"fragments-{i}", s)

    for kind, target in (("lwar", "decode"), ("strs", "strs_decode"), ("bg", "bg_decode"),
                         ("ksy", "described_decode")):
        for i, p in enumerate(payloads[kind][:200]):
            write(target, f"capture-{i}", p)
    protocols = os.path.join(ROOT, "protocols")
    for name in sorted(os.listdir(protocols)):
        if name.endswith(".ksy"):
            with open(os.path.join(protocols, name), "rb") as f:
                write("described_decode", f"ksy-{name}", f.read())
    # description: each shipped description, a NUL, then packets of its
    # captures (a u8 length and the bytes each).
    for name, kind in (("vessel.ksy", "ksy"), ("timewarp.ksy", "ksy"),
                       ("starstrike.ksy", "strs")):
        with open(os.path.join(protocols, name), "rb") as f:
            ksy = f.read()
        packets = payloads[kind][:60]
        for i in range(0, len(packets), 12):
            tail = b"".join(bytes([min(len(p), 255)]) + p[:255] for p in packets[i:i + 12])
            write("description", f"{name}-{i}", ksy + b"\0" + tail)
    # A protobuf description: the YAML, a NUL, the .proto, a NUL, then
    # Vessel's packets.
    with open(os.path.join(protocols, "vessel-protobuf.yaml"), "rb") as f:
        yaml = f.read()
    with open(os.path.join(protocols, "vessel.proto"), "rb") as f:
        proto = f.read()
    packets = payloads["vessel"][:60]
    for i in range(0, len(packets), 12):
        tail = b"".join(bytes([min(len(p), 255)]) + p[:255] for p in packets[i:i + 12])
        write("description", f"vessel-protobuf-{i}", yaml + b"\0" + proto + b"\0" + tail)

    exprs = [
        "type == Join && seqno > 1", "Join || Leave && c2s", "Join or (Leave and c2s)",
        "!Connect", "not Join", "resend || lost", "resend && dir == c2s",
        "reordered || violation || malformed", "lost && seqno == 4 && session == 2",
        "frame == 3", "time >= 0.003", "seqno != 3", "strs.input.move_x > 0.5",
        "strs.type == 0x0300", "type == update", "Join || port == 5000",
        "len > 100 && ip.src == 127.0.0.1", "lwar.seqno == 2", "truncated",
        "bg.op_sig > 3", "violation.after-disconnect", "((frame > 1))",
        "!(resend)", "ip.addr == ::1", "udp.port in {7777 32422}",
    ]
    samples = payloads["lwar"][:3] + payloads["strs"][:2] + payloads["bg"][:2]
    tail = b"".join(bytes([min(len(p), 255)]) + p[:255] for p in samples)
    for i, e in enumerate(exprs):
        write("display_filter", f"expr-{i}", e.encode())
        write("display_filter", f"expr-{i}-payloads", e.encode() + b"\0" + tail)

    rules = [
        'deny = ["malformed", "violation"]\nallow = ["after-disconnect"]\n[max]\nresend-rate = "5%"\n',
        '[max]\nack-delay-p95 = 250\njitter = "30ms"\nunacked = 3\nloss = 0.02\nsessions = 10\n',
        '[min]\npackets = 10\n[max]\ntimed-out = 0\nrejected = 0\n"lwar.violation.after-disconnect" = 0\n',
    ]
    for i, r in enumerate(rules):
        write("rules_file", f"rules-{i}.toml", r.encode())
    for name in sorted(os.listdir(CAPTURES)):
        if name.endswith(".truth.json") and os.path.getsize(os.path.join(CAPTURES, name)) < 16384:
            with open(os.path.join(CAPTURES, name), "rb") as f:
                write("rules_file", name, f.read())
    for t in sorted(os.listdir(CORPUS)):
        print(t, len(os.listdir(os.path.join(CORPUS, t))))


if __name__ == "__main__":
    main()
