/*
 * The C floor of the whole-process benchmark (benches/whole.sh): the least a
 * program must do to find every lwar message of a capture, written the way a
 * C programmer would with libpcap. pcap_next_ex reads each frame; the link
 * (Ethernet with VLAN tags, Linux cooked v1/v2, BSD loopback, raw IP), IPv4
 * or IPv6 and UDP headers are walked by hand; a payload that starts with
 * lwar's appId (0xf27087c5) is a packet, whose messages are walked by the
 * fixed lengths of the specification (a table per type: header, fixed body,
 * and the string or entries the last fixed byte counts). No tracking, no
 * output but the totals, which examples/decode_floor.rs prints too:
 *
 *     N lwar packets, N messages, N decode errors
 *
 * Not handled (the Rust floor handles them, the benchmark captures have none):
 * IP fragments, IPv6 extension headers.
 *
 * Build: cc -O2 -o floor benches/floor.c -lpcap
 * Run:   ./floor FILE
 */
#include <pcap/pcap.h>
#include <stdint.h>
#include <stdio.h>

#define APP_ID 0xf27087c5u

/* Per message type: header length (5 reliable, 1 unreliable), the fixed body
 * length (including the u8 length or count), whether that last byte counts a
 * string's bytes (1) or entries (0), and an entry's length.
 * Checked against the Rust codec by tests/lwar/floor_c.rs. */
struct msg_type {
    uint8_t id, head, fixed, string, entry;
};
static const struct msg_type TYPES[] = {
    /* Connect */ {1, 5, 1, 1, 0},
    /* Disconnect */ {2, 5, 0, 0, 0},
    /* Join */ {3, 5, 5, 1, 0},
    /* Leave */ {4, 5, 4, 0, 0},
    /* Chat */ {5, 5, 5, 1, 0},
    /* Add */ {6, 5, 9, 0, 0},
    /* Remove */ {7, 5, 4, 0, 0},
    /* Selection */ {8, 5, 9, 0, 0},
    /* Name */ {9, 5, 5, 1, 0},
    /* Synced */ {10, 5, 0, 0, 0},
    /* Stats */ {101, 1, 1, 0, 10},
    /* Input */ {103, 1, 22, 0, 0},
    /* Full */ {104, 1, 0, 0, 0},
    /* Collision */ {105, 1, 12, 0, 0},
    /* Update */ {110, 1, 1, 0, 11},
    /* UpdatePos */ {111, 1, 1, 0, 8},
    /* UpdateRay */ {112, 1, 1, 0, 12},
    /* UpdateCircle */ {113, 1, 1, 0, 10},
};

static const struct msg_type *by_id[256];

static uint16_t be16(const u_char *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t be32(const u_char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The UDP payload of a frame (NULL if none): `len` is what was captured of it. */
static const u_char *udp_payload(int dlt, const u_char *p, uint32_t caplen, uint32_t *len) {
    const u_char *end = p + caplen;
    uint16_t ethertype;
    switch (dlt) {
    case DLT_EN10MB:
        if (caplen < 14) return NULL;
        ethertype = be16(p + 12);
        p += 14;
        while ((ethertype == 0x8100 || ethertype == 0x88a8) && end - p >= 4) {
            ethertype = be16(p + 2);
            p += 4;
        }
        break;
    case DLT_LINUX_SLL:
        if (caplen < 16) return NULL;
        ethertype = be16(p + 14);
        p += 16;
        break;
    case DLT_LINUX_SLL2:
        if (caplen < 20) return NULL;
        ethertype = be16(p);
        p += 20;
        break;
    case DLT_NULL:
    case DLT_LOOP:
        if (caplen < 4) return NULL;
        p += 4;
        ethertype = (*p >> 4) == 6 ? 0x86dd : 0x0800;
        break;
    default: /* raw IP */
        if (caplen < 1) return NULL;
        ethertype = (*p >> 4) == 6 ? 0x86dd : 0x0800;
        break;
    }
    const u_char *udp, *ip_end;
    if (ethertype == 0x0800) {
        if (end - p < 20 || (p[0] >> 4) != 4 || p[9] != 17) return NULL;
        if (be16(p + 6) & 0x3fff) return NULL; /* a fragment */
        unsigned ihl = (p[0] & 0x0f) * 4u;
        ip_end = p + be16(p + 2);
        udp = p + ihl;
    } else if (ethertype == 0x86dd) {
        if (end - p < 40 || (p[0] >> 4) != 6 || p[6] != 17) return NULL;
        ip_end = p + 40 + be16(p + 4);
        udp = p + 40;
    } else {
        return NULL;
    }
    if (end - udp < 8) return NULL;
    const u_char *payload = udp + 8, *stop = udp + be16(udp + 4);
    if (stop > ip_end) stop = ip_end;
    if (stop > end) stop = end;
    if (stop < payload) return NULL;
    *len = (uint32_t)(stop - payload);
    return payload;
}

int main(int argc, char **argv) {
    char errbuf[PCAP_ERRBUF_SIZE];
    uint64_t packets = 0, messages = 0, errors = 0;
    for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++) by_id[TYPES[i].id] = &TYPES[i];
    if (argc != 2) {
        fprintf(stderr, "usage: floor FILE\n");
        return 2;
    }
    pcap_t *pcap = pcap_open_offline_with_tstamp_precision(argv[1], PCAP_TSTAMP_PRECISION_NANO, errbuf);
    if (!pcap) {
        fprintf(stderr, "error: %s\n", errbuf);
        return 2;
    }
    int dlt = pcap_datalink(pcap);
    struct pcap_pkthdr *h;
    const u_char *frame;
    int r;
    while ((r = pcap_next_ex(pcap, &h, &frame)) == 1) {
        uint32_t len;
        const u_char *p = udp_payload(dlt, frame, h->caplen, &len);
        if (!p || len < 4 || be32(p) != APP_ID) continue;
        packets++;
        if (len < 12) {
            errors++;
            continue;
        }
        for (uint32_t off = 12; off < len;) {
            const struct msg_type *t = by_id[p[off]];
            uint32_t avail = len - off;
            if (!t || avail < (uint32_t)t->head + t->fixed) {
                errors++;
                break;
            }
            uint32_t total = t->head + t->fixed;
            if (t->string)
                total += p[off + total - 1];
            else if (t->entry)
                total += (uint32_t)p[off + total - 1] * t->entry;
            if (avail < total) {
                errors++;
                break;
            }
            messages++;
            off += total;
        }
    }
    if (r == -1) {
        fprintf(stderr, "error: %s\n", pcap_geterr(pcap));
        return 2;
    }
    printf("%llu lwar packets, %llu messages, %llu decode errors\n", (unsigned long long)packets,
           (unsigned long long)messages, (unsigned long long)errors);
    pcap_close(pcap);
    return 0;
}
