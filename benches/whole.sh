#!/usr/bin/env bash
# Whole-process benchmark of lwarscope: makes simulated captures with
# `lwarscope sim -w`, then times the report (`-r`), `check`, `--format jsonl` and
# the decode-only floor (examples/decode_floor.rs: libpcap read + codec, nothing
# else) on each, over several runs. Prints a markdown table of the median
# packets/s and peak RSS (GNU time's maximum resident set size), and the ratio of
# the report's packets/s to the floor's.
#
# Usage: benches/whole.sh [-n RUNS] [-s "SIZES"] [-c CLIENTS] [-o DIR]
#   -n RUNS     runs of each command (default 3); the median is reported
#   -s SIZES    capture sizes in packets (default "1000000 10000000")
#   -c CLIENTS  simulated clients (default 8)
#   -o DIR      where captures and logs go (default bench-out/, gitignored);
#               captures are kept and reused by later runs
# Needs: cargo, and GNU time as /usr/bin/time. The captures take ~133 bytes a
# packet on disk (1.4 GB for 10 million): the first run warms the page cache.
set -euo pipefail

runs=3
sizes="1000000 10000000"
clients=8
out=bench-out
while getopts "n:s:c:o:h" opt; do
    case $opt in
    n) runs=$OPTARG ;;
    s) sizes=$OPTARG ;;
    c) clients=$OPTARG ;;
    o) out=$OPTARG ;;
    *) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
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

echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "Load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "Runs: $runs, median shown; $clients simulated clients; lwarscope $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo

declare -A secs cpus rss
for n in $sizes; do
    pcap=$out/sim-$n-c$clients.pcap
    if [[ ! -s $pcap ]]; then
        echo "making $pcap ..." >&2
        "$bin" sim -w "$pcap" --packets "$n" --clients "$clients" --no-truth >/dev/null
    fi
    cat "$pcap" >/dev/null # into the page cache
    declare -A samples_s=() samples_c=() samples_m=()
    for ((r = 0; r < runs; r++)); do
        # Round-robin over the commands, so that load changes hit them all alike.
        for cmd in floor report check jsonl; do
            case $cmd in
            floor) res=$(timed "$floor" "$pcap") ;;
            report) res=$(timed "$bin" -r "$pcap") ;;
            check) res=$(timed "$bin" check "$pcap") ;;
            jsonl) res=$(timed "$bin" -r "$pcap" --format jsonl) ;;
            esac
            read -r wall cpu kb <<<"$res"
            samples_s[$cmd]+="$wall"$'\n'
            samples_c[$cmd]+="$cpu"$'\n'
            samples_m[$cmd]+="$kb"$'\n'
        done
    done
    for cmd in floor report check jsonl; do
        secs[$n,$cmd]=$(printf %s "${samples_s[$cmd]}" | median)
        cpus[$n,$cmd]=$(printf %s "${samples_c[$cmd]}" | median)
        rss[$n,$cmd]=$(printf %s "${samples_m[$cmd]}" | sort -g | tail -1)
    done
    unset samples_s samples_c samples_m
done

label() {
    case $1 in
    floor) echo "decode-only floor (\`examples/decode_floor\`)" ;;
    report) echo "report (\`lwarscope -r\`)" ;;
    check) echo "\`lwarscope check\`" ;;
    jsonl) echo "\`lwarscope -r --format jsonl > /dev/null\`" ;;
    esac
}

echo "| packets | command | median wall time | packets/s | median CPU time | packets/CPU-s | peak RSS |"
echo "|--------:|:--------|-----------------:|----------:|----------------:|--------------:|---------:|"
for n in $sizes; do
    for cmd in floor report check jsonl; do
        s=${secs[$n,$cmd]}
        awk -v n="$n" -v s="$s" -v c="${cpus[$n,$cmd]}" -v m="${rss[$n,$cmd]}" -v l="$(label $cmd)" 'BEGIN {
            pps = (s > 0) ? n / s : 0
            # CPU time comes in 10 ms steps: no rate from less than 50 ms of it.
            cps = (c >= 0.05) ? sprintf("%.2f M", n / c / 1e6) : "-"
            printf "| %d | %s | %.3f s | %.2f M | %.2f s | %s | %.1f MB |\n", n, l, s, pps / 1e6, c, cps, m / 1024 }'
    done
done
echo
for n in $sizes; do
    awk -v n="$n" -v f="${secs[$n,floor]}" -v r="${secs[$n,report]}" 'BEGIN {
        printf "%d packets: report / floor = %.0f%% of the floor'"'"'s packets/s\n", n, 100 * f / r }'
done
set -- $sizes
if (($# >= 2)); then
    first=$1
    last=${!#}
    awk -v a="${rss[$first,report]}" -v b="${rss[$last,report]}" -v f="$first" -v l="$last" 'BEGIN {
        printf "report peak RSS: %.1f MB on %d packets, %.1f MB on %d (x%.2f)\n", a / 1024, f, b / 1024, l, b / a }'
fi
echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
