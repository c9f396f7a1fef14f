#!/usr/bin/env bash
# Whole-process benchmark of lwarscope against the C floor: makes simulated
# captures with `lwarscope sim -w`, then times, on each, a minimal C program
# reading it with libpcap (benches/floor.c: pcap_next_ex, link/IP/UDP headers,
# the lwar appId, a fixed-length message walk, nothing else), the Rust decode
# floor (examples/decode_floor.rs) and each lwarscope command, over several
# runs. Prints a markdown table of the median packets/s, each command's ratio
# to the C floor's packets/s, and peak RSS (GNU time's maximum resident set
# size). The C and Rust floors must print the same totals, or it stops.
# With -I, it also counts each command's instructions a packet on each
# thread (callgrind), which the machine's load does not change.
#
# Usage: benches/whole.sh [-n RUNS] [-s "SIZES"] [-c CLIENTS] [-o DIR] [-C "COMMANDS"]
#                         [-P "PROTOCOLS"] [-t "THREADS"] [-I PACKETS] [-d]
#   -n RUNS      runs of each command (default 3); the median is reported
#   -s SIZES     capture sizes in packets (default "1000000 10000000")
#   -c CLIENTS   simulated clients (default 8)
#   -o DIR       where captures and logs go (default bench-out/, gitignored);
#                captures are kept and reused by later runs unless -d
#   -C COMMANDS  the commands to time (default: all of
#                "cfloor floor floor-libpcap report check jsonl packets fields verbose hex")
#   -P PROTOCOLS the captures to time them on (default "lwar"): any of lwar,
#                starstrike, battlegrounds (`lwarscope sim --proto`) and mixed
#                (the three merged by time with mergecap, a third of the
#                packets each). The floors read lwar only: on the others they
#                are not run and there is no ratio (the lwar capture's C floor
#                is still the one to compare packets/s with).
#   -t THREADS   run each lwarscope command once per value, with
#                LWARSCOPE_THREADS set to it: "1 2" shows one thread against
#                two in the same run (default: the environment's)
#   -I PACKETS   also count instructions a packet (valgrind --tool=callgrind
#                --separate-threads=yes --dump-instr=no), once per command,
#                protocol and thread count, on the first PACKETS packets of
#                the first size's capture (editcap -r; 200000 takes about a
#                minute for jsonl, two for -V: valgrind is ~50x slower). The
#                startup is left out: the same command on the first 1000
#                packets is counted too and subtracted, so the figure is what
#                each further packet costs. Columns: the main thread (the
#                engine's: analysis and output), the other threads (the
#                reader's with two threads), their total and its ratio to the
#                C floor's. lwarscope commands run with LWARSCOPE_THREADS set
#                (-t's value, else the environment's, else 2). Off by default.
#   -d           delete the captures made here when done (a 10M one is 1.4 GB)
# Environment: LWARSCOPE_THREADS is passed on to lwarscope (see benches/NOTEBOOK.md).
# Needs: cargo, cc and libpcap's headers, GNU time as /usr/bin/time, for -P
# other than lwar Wireshark's editcap and mergecap, for -I valgrind and editcap. The
# captures take ~133 bytes a packet on disk (1.4 GB for 10 million): the
# first run warms the page cache.
set -euo pipefail

runs=3
sizes="1000000 10000000"
clients=8
out=bench-out
commands="cfloor floor floor-libpcap report check jsonl packets fields verbose hex"
protocols=lwar
threads=""
delete=0
instr=0
while getopts "n:s:c:o:C:P:t:I:dh" opt; do
    case $opt in
    n) runs=$OPTARG ;;
    s) sizes=$OPTARG ;;
    c) clients=$OPTARG ;;
    o) out=$OPTARG ;;
    C) commands=$OPTARG ;;
    P) protocols=$OPTARG ;;
    t) threads=$OPTARG ;;
    I) instr=$OPTARG ;;
    d) delete=1 ;;
    *) sed -n '2,48p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
    esac
done
[[ -x /usr/bin/time ]] || { echo "error: GNU time (/usr/bin/time) is needed for peak RSS" >&2; exit 2; }
if ((instr)); then
    command -v valgrind >/dev/null || { echo "error: -I needs valgrind" >&2; exit 2; }
    command -v editcap >/dev/null || { echo "error: -I needs editcap (Wireshark's)" >&2; exit 2; }
    ((instr > 1000)) || { echo "error: -I takes more than 1000 packets" >&2; exit 2; }
fi

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

# The command line of command $1 on capture $2, into the array argv.
command_of() {
    local cmd=${1%@*} pcap=$2
    case $cmd in
    cfloor) argv=("$cfloor" "$pcap") ;;
    floor) argv=("$floor" "$pcap") ;;
    floor-libpcap) argv=("$floor" --libpcap "$pcap") ;;
    report) argv=("$bin" -r "$pcap") ;;
    check) argv=("$bin" check "$pcap") ;;
    jsonl) argv=("$bin" -r "$pcap" --format jsonl) ;;
    packets) argv=("$bin" -r "$pcap" --packets) ;;
    fields) argv=("$bin" -r "$pcap" -T fields -e frame.number -e frame.time_epoch -e ip.src -e udp.srcport -e lwar.seqno) ;;
    verbose) argv=("$bin" -r "$pcap" -V) ;;
    hex) argv=("$bin" -r "$pcap" -x) ;;
    *) echo "error: unknown command $cmd" >&2; exit 2 ;;
    esac
}

run() {
    if [[ $1 == *@* ]]; then
        export LWARSCOPE_THREADS=${1#*@}
    fi
    command_of "$1" "$2"
    timed "${argv[@]}"
}

# Instructions of one run of command $1 on capture $2 under callgrind:
# prints "main_thread other_threads".
counted() {
    local cg=$out/callgrind.$$ threads=${LWARSCOPE_THREADS:-2}
    [[ $1 == *@* ]] && threads=${1#*@}
    command_of "$1" "$2"
    rm -f "$cg".*
    LWARSCOPE_THREADS=$threads valgrind --tool=callgrind --separate-threads=yes --dump-instr=no \
        --callgrind-out-file="$cg.%p" "${argv[@]}" >/dev/null 2>>"$out/stderr.log"
    # One file a thread, PID-01 the main one.
    awk '/^totals:/ { if (FILENAME ~ /-01$/) m += $2; else o += $2 } END { printf "%d %d\n", m, o }' "$cg".*
    rm -f "$cg".*
}

label() {
    local t=""
    if [[ $1 == *@* ]]; then
        t=", ${1#*@} thread"
        [[ ${1#*@} == 1 ]] || t+=s
    fi
    printf '%s%s\n' "$(label_of "${1%@*}")" "$t"
}

label_of() {
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

# The commands as run: with -t, each lwarscope command once per thread count.
expanded=""
for cmd in $commands; do
    case $cmd in
    cfloor | floor | floor-libpcap) expanded+=" $cmd" ;;
    *)
        if [[ -n $threads ]]; then
            for t in $threads; do expanded+=" $cmd@$t"; done
        else
            expanded+=" $cmd"
        fi
        ;;
    esac
done
commands=$expanded

# The capture of protocol $1 with $2 packets.
capture_path() {
    case $1 in
    lwar) echo "$out/sim-$2-c$clients.pcap" ;;
    *) echo "$out/sim-$1-$2-c$clients.pcap" ;;
    esac
}

# Makes capture $3 of protocol $1 with $2 packets.
make_capture() {
    local proto=$1 n=$2 pcap=$3
    echo "making $pcap ..." >&2
    case $proto in
    lwar | starstrike | battlegrounds) sim_packets "$proto" "$n" "$pcap" ;;
    mixed)
        local third=$((n / 3)) parts=() p
        for p in lwar starstrike battlegrounds; do
            sim_packets "$p" "$(if [[ $p == battlegrounds ]]; then echo $((n - 2 * third)); else echo "$third"; fi)" "$out/part-$p.pcap"
            parts+=("$out/part-$p.pcap")
        done
        mergecap -F pcap -w "$pcap" "${parts[@]}"
        rm -f "${parts[@]}"
        ;;
    esac
}

# A simulated capture $3 of exactly $2 packets of protocol $1. Only lwar's
# simulator stops at a packet count (--packets): the others run for the
# simulated time that their rate (measured on a minute) says gives a few
# more, and editcap keeps the first $2.
sim_packets() {
    local proto=$1 n=$2 pcap=$3 probe frames secs
    if [[ $proto == lwar ]]; then
        "$bin" sim -w "$pcap" --packets "$n" --clients "$clients" --no-truth >/dev/null
        return
    fi
    command -v editcap >/dev/null || { echo "error: -P $proto needs editcap (Wireshark's)" >&2; exit 2; }
    probe=$out/probe-$proto.pcap
    frames=$("$bin" sim --proto "$proto" -w "$probe" -d 60 --clients "$clients" --no-truth 2>&1 >/dev/null | sed -n 's/.*: \([0-9]*\) frames.*/\1/p')
    rm -f "$probe"
    secs=$(((n * 60 / frames) * 21 / 20 + 60))
    "$bin" sim --proto "$proto" -w "$pcap.full" -d "$secs" --clients "$clients" --no-truth >/dev/null
    editcap -F pcap -r "$pcap.full" "$pcap" "1-$n"
    rm -f "$pcap.full"
}

for proto in $protocols; do
    case $proto in
    lwar | starstrike | battlegrounds) ;;
    mixed) command -v mergecap >/dev/null || { echo "error: -P mixed needs mergecap (Wireshark's)" >&2; exit 2; } ;;
    *) echo "error: unknown protocol $proto (lwar, starstrike, battlegrounds, mixed)" >&2; exit 2 ;;
    esac
done

# Instructions a packet of each command in $3 on the first $instr packets of
# capture $2 (protocol $1), less the same on its first 1000: into ins_m (main
# thread) and ins_o (the others).
declare -A ins_m ins_o
count_instructions() {
    local proto=$1 pcap=$2 big=$out/instr-$instr.pcap small=$out/instr-1000.pcap cmd m1 o1 m0 o0
    editcap -F pcap -r "$pcap" "$big" "1-$instr"
    editcap -F pcap -r "$pcap" "$small" "1-1000"
    for cmd in $3; do
        echo "counting instructions: $proto $cmd ..." >&2
        read -r m1 o1 <<<"$(counted "$cmd" "$big")"
        read -r m0 o0 <<<"$(counted "$cmd" "$small")"
        ins_m[$proto,$cmd]=$(((m1 - m0) / (instr - 1000)))
        ins_o[$proto,$cmd]=$(((o1 - o0) / (instr - 1000)))
    done
    rm -f "$big" "$small"
}

declare -A secs cpus rss done_cmds
for proto in $protocols; do
for n in $sizes; do
    made=0
    pcap=$(capture_path "$proto" "$n")
    if [[ ! -s $pcap ]]; then
        make_capture "$proto" "$n" "$pcap"
        made=1
    fi
    cat "$pcap" >/dev/null # into the page cache
    these=""
    if [[ $proto == lwar ]]; then
        c_totals=$("$cfloor" "$pcap")
        r_totals=$("$floor" "$pcap")
        if [[ $c_totals != "$r_totals" ]]; then
            echo "error: the floors disagree on $pcap: C \"$c_totals\", Rust \"$r_totals\"" >&2
            exit 1
        fi
        echo "$proto, $n packets: both floors: $c_totals"
        these=$commands
    else
        for cmd in $commands; do
            case $cmd in cfloor | floor | floor-libpcap) ;; *) these+=" $cmd" ;; esac
        done
        echo "$proto, $n packets: $pcap ($(du -m "$pcap" | cut -f1) MB)"
    fi
    done_cmds[$proto,$n]=$these
    declare -A samples_s=() samples_c=() samples_m=()
    for ((r = 0; r < runs; r++)); do
        # Round-robin over the commands, so that load changes hit them all alike.
        for cmd in $these; do
            read -r wall cpu kb <<<"$(run "$cmd" "$pcap")"
            samples_s[$cmd]+="$wall"$'\n'
            samples_c[$cmd]+="$cpu"$'\n'
            samples_m[$cmd]+="$kb"$'\n'
        done
    done
    for cmd in $these; do
        secs[$proto,$n,$cmd]=$(printf %s "${samples_s[$cmd]}" | median)
        cpus[$proto,$n,$cmd]=$(printf %s "${samples_c[$cmd]}" | median)
        rss[$proto,$n,$cmd]=$(printf %s "${samples_m[$cmd]}" | sort -g | tail -1)
    done
    unset samples_s samples_c samples_m
    if ((instr)) && [[ $n == "${sizes%% *}" ]]; then
        count_instructions "$proto" "$pcap" "$these"
    fi
    if ((delete && made)); then
        rm -f "$pcap"
    fi
done
done
echo

if ((instr)); then
    echo "Instructions a packet: callgrind on the first $instr packets of each protocol's ${sizes%% *}-packet capture, less the first 1000 (the startup)."
    echo
    echo "| capture | packets | command | median wall time | packets/s | x C floor | median CPU time | peak RSS | instructions a packet, main thread | other threads | total | x C floor (instructions) |"
    echo "|:--------|--------:|:--------|-----------------:|----------:|----------:|----------------:|---------:|----:|----:|----:|----:|"
else
    echo "| capture | packets | command | median wall time | packets/s | x C floor | median CPU time | peak RSS |"
    echo "|:--------|--------:|:--------|-----------------:|----------:|----------:|----------------:|---------:|"
fi
for proto in $protocols; do
    for n in $sizes; do
        for cmd in ${done_cmds[$proto,$n]}; do
            s=${secs[$proto,$n,$cmd]}
            base=""
            [[ $proto == lwar ]] && base=${secs[$proto,$n,cfloor]:-}
            im="" io="" ib=""
            if ((instr)); then
                im=${ins_m[$proto,$cmd]:-} io=${ins_o[$proto,$cmd]:-}
                [[ $proto == lwar ]] && ib=${ins_m[lwar,cfloor]:-}
            fi
            awk -v p="$proto" -v n="$n" -v s="$s" -v b="$base" -v c="${cpus[$proto,$n,$cmd]}" -v m="${rss[$proto,$n,$cmd]}" -v l="$(label "$cmd")" \
                -v I="$instr" -v im="$im" -v io="$io" -v ib="$ib" 'BEGIN {
                pps = (s > 0) ? n / s : 0
                ratio = (b != "" && s > 0) ? sprintf("%.2f", b / s) : "-"
                printf "| %s | %d | %s | %.3f s | %.2f M | %s | %.2f s | %.1f MB |", p, n, l, s, pps / 1e6, ratio, c, m / 1024
                if (I > 0) {
                    if (im == "") printf " - | - | - | - |"
                    else printf " %d | %d | %d | %s |", im, io, im + io, (ib > 0) ? sprintf("%.2f", (im + io) / ib) : "-"
                }
                printf "\n" }'
        done
    done
done
echo
set -- $sizes
if (($# >= 2)); then
    first=$1
    last=${!#}
    for proto in $protocols; do
        for cmd in ${done_cmds[$proto,$first]}; do
            awk -v a="${rss[$proto,$first,$cmd]}" -v b="${rss[$proto,$last,$cmd]}" -v f="$first" -v l="$last" -v c="$cmd" -v p="$proto" 'BEGIN {
                printf "%s %s peak RSS: %.1f MB on %d packets, %.1f MB on %d (x%.2f)\n", p, c, a / 1024, f, b / 1024, l, b / a }'
        done
    done
fi
echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
