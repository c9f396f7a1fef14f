#!/usr/bin/env bash
# Whole-process benchmark of lwarscope against the C floor: makes simulated
# captures with `lwarscope sim -w`, then times, on each, a minimal C program
# reading it with libpcap (benches/floor.c: pcap_next_ex, link/IP/UDP headers,
# the lwar appId, a fixed-length message walk, nothing else), the Rust decode
# floor (examples/decode_floor.rs) and each lwarscope command, over several
# runs. Prints a markdown table of the median packets/s, each command's ratio
# to the C floor's packets/s, and peak RSS (GNU time's maximum resident set
# size). The C and Rust floors must print the same totals, or it stops.
#
# Usage: benches/whole.sh [-n RUNS] [-s "SIZES"] [-c CLIENTS] [-o DIR] [-C "COMMANDS"] [-d]
#   -n RUNS      runs of each command (default 3); the median is reported
#   -s SIZES     capture sizes in packets (default "1000000 10000000")
#   -c CLIENTS   simulated clients (default 8)
#   -o DIR       where captures and logs go (default bench-out/, gitignored);
#                captures are kept and reused by later runs unless -d
#   -C COMMANDS  the commands to time (default: all of
#                "cfloor floor floor-libpcap report check jsonl packets fields verbose hex")
#   -d           delete the captures made here when done (a 10M one is 1.4 GB)
# Environment: LWARSCOPE_THREADS is passed on to lwarscope (see README).
# Needs: cargo, cc and libpcap's headers, and GNU time as /usr/bin/time. The
# captures take ~133 bytes a packet on disk (1.4 GB for 10 million): the
# first run warms the page cache.
set -euo pipefail

runs=3
sizes="1000000 10000000"
clients=8
out=bench-out
commands="cfloor floor floor-libpcap report check jsonl packets fields verbose hex"
delete=0
while getopts "n:s:c:o:C:dh" opt; do
    case $opt in
    n) runs=$OPTARG ;;
    s) sizes=$OPTARG ;;
    c) clients=$OPTARG ;;
    o) out=$OPTARG ;;
    C) commands=$OPTARG ;;
    d) delete=1 ;;
    *) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
    esac
done
[[ -x /usr/bin/time ]] || { echo "error: GNU time (/usr/bin/time) is needed for peak RSS" >&2; exit 2; }

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cargo build --release --quiet --bin lwarscope --example decode_floor
target=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
bin=$target/release/lwarscope
floor=$target/release/examples/decode_floor
mkdir -p "$out"
cfloor=$out/floor-c
cc -O2 -o "$cfloor" benches/floor.c -lpcap

# One timed run: prints "wall_seconds cpu_seconds maxrss_kb". The wall time is
# taken around GNU time (finer than its 10 ms); CPU time and peak RSS from `time -v`.
timed() {
    local log=$out/time.txt start end
    start=$EPOCHREALTIME
    /usr/bin/time -v -o "$log" "$@" >/dev/null 2>>"$out/stderr.log"
    end=$EPOCHREALTIME
    awk -v a="$start" -v b="$end" -F': ' '
        /User time/ { cpu += $2 } /System time/ { cpu += $2 }
        /Maximum resident set size/ { rss = $2 }
        END { printf "%.4f %.2f %d\n", b - a, cpu, rss }' "$log"
}

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

run() {
    local cmd=$1 pcap=$2
    case $cmd in
    cfloor) timed "$cfloor" "$pcap" ;;
    floor) timed "$floor" "$pcap" ;;
    floor-libpcap) timed "$floor" --libpcap "$pcap" ;;
    report) timed "$bin" -r "$pcap" ;;
    check) timed "$bin" check "$pcap" ;;
    jsonl) timed "$bin" -r "$pcap" --format jsonl ;;
    packets) timed "$bin" -r "$pcap" --packets ;;
    fields) timed "$bin" -r "$pcap" -T fields -e frame.number -e frame.time_epoch -e ip.src -e udp.srcport -e lwar.seqno ;;
    verbose) timed "$bin" -r "$pcap" -V ;;
    hex) timed "$bin" -r "$pcap" -x ;;
    *) echo "error: unknown command $cmd" >&2; exit 2 ;;
    esac
}

label() {
    case $1 in
    cfloor) echo "C floor (\`benches/floor.c\`, libpcap)" ;;
    floor) echo "Rust decode floor (\`examples/decode_floor\`)" ;;
    floor-libpcap) echo "Rust decode floor through libpcap (\`decode_floor --libpcap\`)" ;;
    report) echo "report (\`lwarscope -r\`)" ;;
    check) echo "\`lwarscope check\`" ;;
    jsonl) echo "\`lwarscope -r --format jsonl\`" ;;
    packets) echo "\`lwarscope -r --packets\`" ;;
    fields) echo "\`lwarscope -r -T fields\` (5 fields)" ;;
    verbose) echo "\`lwarscope -r -V\`" ;;
    hex) echo "\`lwarscope -r -x\`" ;;
    esac
}

echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "Load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "Runs: $runs, median shown; $clients simulated clients; lwarscope $(git rev-parse --short HEAD 2>/dev/null || echo '?'); LWARSCOPE_THREADS=${LWARSCOPE_THREADS:-default}"
echo

declare -A secs cpus rss made
for n in $sizes; do
    pcap=$out/sim-$n-c$clients.pcap
    if [[ ! -s $pcap ]]; then
        echo "making $pcap ..." >&2
        "$bin" sim -w "$pcap" --packets "$n" --clients "$clients" --no-truth >/dev/null
        made[$n]=1
    fi
    cat "$pcap" >/dev/null # into the page cache
    c_totals=$("$cfloor" "$pcap")
    r_totals=$("$floor" "$pcap")
    if [[ $c_totals != "$r_totals" ]]; then
        echo "error: the floors disagree on $pcap: C \"$c_totals\", Rust \"$r_totals\"" >&2
        exit 1
    fi
    echo "$n packets: both floors: $c_totals"
    declare -A samples_s=() samples_c=() samples_m=()
    for ((r = 0; r < runs; r++)); do
        # Round-robin over the commands, so that load changes hit them all alike.
        for cmd in $commands; do
            read -r wall cpu kb <<<"$(run "$cmd" "$pcap")"
            samples_s[$cmd]+="$wall"$'\n'
            samples_c[$cmd]+="$cpu"$'\n'
            samples_m[$cmd]+="$kb"$'\n'
        done
    done
    for cmd in $commands; do
        secs[$n,$cmd]=$(printf %s "${samples_s[$cmd]}" | median)
        cpus[$n,$cmd]=$(printf %s "${samples_c[$cmd]}" | median)
        rss[$n,$cmd]=$(printf %s "${samples_m[$cmd]}" | sort -g | tail -1)
    done
    unset samples_s samples_c samples_m
    if ((delete)) && [[ -n ${made[$n]:-} ]]; then
        rm -f "$pcap"
    fi
done
echo

echo "| packets | command | median wall time | packets/s | x C floor | median CPU time | peak RSS |"
echo "|--------:|:--------|-----------------:|----------:|----------:|----------------:|---------:|"
for n in $sizes; do
    for cmd in $commands; do
        s=${secs[$n,$cmd]}
        base=${secs[$n,cfloor]:-}
        awk -v n="$n" -v s="$s" -v b="$base" -v c="${cpus[$n,$cmd]}" -v m="${rss[$n,$cmd]}" -v l="$(label "$cmd")" 'BEGIN {
            pps = (s > 0) ? n / s : 0
            ratio = (b != "" && s > 0) ? sprintf("%.2f", b / s) : "-"
            printf "| %d | %s | %.3f s | %.2f M | %s | %.2f s | %.1f MB |\n", n, l, s, pps / 1e6, ratio, c, m / 1024 }'
    done
done
echo
set -- $sizes
if (($# >= 2)); then
    first=$1
    last=${!#}
    for cmd in $commands; do
        awk -v a="${rss[$first,$cmd]}" -v b="${rss[$last,$cmd]}" -v f="$first" -v l="$last" -v c="$cmd" 'BEGIN {
            printf "%s peak RSS: %.1f MB on %d packets, %.1f MB on %d (x%.2f)\n", c, a / 1024, f, b / 1024, l, b / a }'
    done
fi
echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
