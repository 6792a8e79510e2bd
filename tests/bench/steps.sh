#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# steps.sh: where a turn's time goes, step by step. Runs N text turns of
# `baton run --json` with the fake coder (BATON_TRACE_PERF=1) and prints,
# as a markdown table, the median and p90 (nearest rank) of each step's
# duration: the time from the previous mark to this one, and the whole
# turn. The turns run in one bench-time, as the fixed figure of bench.sh
# (several batons in rounds, the first rotating, after W turns each not
# counted: the first creates the store), each baton with a home of its own
# (an older baton refuses a newer store's schema). bench-time -s stamps its
# own clock just before posix_spawn and just after wait4, so the first row,
# spawn -> main, is the parent's clock against baton's first mark (exec,
# loading, linking), and the last, done -> reaped, baton's last mark until
# its parent has it back (exit, unmapping, reaping). All marks are
# CLOCK_REALTIME in microseconds. Then bench-time's own medians, and how
# many "done" steps took over 1 ms: the closes that checkpoint the WAL.
#
# usage: steps.sh [-n N] [-w W] BENCH_TIME SCRATCH FAKE_CODER REPLAY LABEL=BATON...
#   SCRATCH  a directory for the homes, the working directory and the marks
#            (not under /tmp if it is to look like a user's home)
# Called by tests/scripts/bench.sh (section steps); figures only, exit 0
# unless an argument is wrong.
set -uo pipefail

usage() { sed -n '4,23p' "$0" >&2; exit 2; }
n=21 warm=3
while getopts n:w:h o; do
    case "$o" in
    n) n="$OPTARG" ;;
    w) warm="$OPTARG" ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 5 ] || usage
bench_time="$1"
shift
mkdir -p "$1/work" "$1/marks" || exit 1
# absolute paths: the turns run in $scratch/work
scratch="$(readlink -f "$1")" fake="$(readlink -f "$2")" replay="$(readlink -f "$3")"
shift 3
labels=() batons=()
for a in "$@"; do
    [ "${a#*=}" != "$a" ] || usage
    labels+=("${a%%=*}") batons+=("$(readlink -f "${a#*=}")")
done

# All turns in one bench-time (as the fixed figure: rounds, the first
# baton rotating); per baton, its stderr (the marks) and bench-time's stamps.
spec=()
for ((i = 0; i < ${#batons[@]}; i++)); do
    rm -f "$scratch/marks/$i.err" "$scratch/marks/$i.stamps"
    [ "$i" -gt 0 ] && spec+=(";")
    spec+=("${labels[$i]}" -E "$scratch/marks/$i.err" -s "$scratch/marks/$i.stamps"
        -C "$scratch/work" -e BATON_TRACE_PERF=1 -e "BATON_HOME=$scratch/home-$i"
        -e "BATON_CODEX_BIN=$fake" -e "FAKE_CODER_REPLAY=$replay"
        -- "${batons[$i]}" run --json --approval never -m baton-test "Say hello banana")
done
"$bench_time" -n "$n" -w "$warm" "${spec[@]}" >"$scratch/bench-time.out" || exit 0

# step durations: "<baton> <run> <step>\t<ms>" per line; a turn is the
# marks from "main" to "done", paired in order with a spawn/reaped stamp
k=${#batons[@]}
for ((i = 0; i < k; i++)); do
    awk -v b="$i" -v w="$warm" '
        FNR == NR && $1 == "spawn" { spawn[++ns] = $2; next }
        FNR == NR && $1 == "reaped" { reaped[++nr] = $2; next }
        FNR == NR { next }
        $1 == "baton" && $2 == "perf:" {
            step = $5; for (f = 6; f <= NF; f++) step = step " " $f
            if (step == "main") { t++; m[t] = 0 }
            if (step == "main") step = "spawn -> main (exec, loader)"
            d[t, ++m[t]] = step; v[t, m[t]] = $3; if (step == "done") ok[t] = 1
        }
        END {
            if (t != ns) printf "steps: %s: %d turns marked, %d spawned\n", b, t, ns > "/dev/stderr"
            for (r = w + 1; r <= t && r <= ns; r++) {
                if (!ok[r]) { printf "steps: turn %d of %s: no done mark\n", r, b > "/dev/stderr"; continue }
                prev = spawn[r]
                for (j = 1; j <= m[r]; j++) { printf "%d %d %s\t%.3f\n", b, r, d[r, j], (v[r, j] - prev) / 1e3; prev = v[r, j] }
                printf "%d %d %s\t%.3f\n", b, r, "done -> reaped (exit)", (reaped[r] - prev) / 1e3
            }
        }' "$scratch/marks/$i.stamps" "$scratch/marks/$i.err"
done >"$scratch/steps.tsv"

# the table: steps in the order of the first baton's marks
awk -F'\t' -v k="$k" -v labels="$(printf '%s\t' "${labels[@]}")" '
    function sortv(a, c,   x, y, t) {
        for (x = 2; x <= c; x++) { t = a[x]; for (y = x - 1; y >= 1 && a[y] > t; y--) a[y + 1] = a[y]; a[y + 1] = t }
    }
    function rank(a, c, p,   x) { x = int(c * p + 0.999999); if (x < 1) x = 1; return a[x] }
    {
        split($1, h, " "); b = h[1]; run = h[2]
        step = $1; sub(/^[0-9]+ [0-9]+ /, "", step)
        if (!(step in seen)) { seen[step] = 1; order[++ns] = step }
        c = ++cnt[b, step]; val[b, step, c] = $2
        if (step == "done") { nd[b]++; if ($2 > 1) { cc = ++ccnt[b]; cval[b, cc] = $2 } }
        tot[b, run] += $2; runs[b, run] = 1
    }
    END {
        split(labels, lab, "\t")
        printf "| step |"; for (b = 0; b < k; b++) printf " %s: median | p90 |", lab[b + 1]; print ""
        printf "|---|"; for (b = 0; b < k; b++) printf "---|---|"; print ""
        for (s = 1; s <= ns; s++) {
            printf "| %s |", order[s]
            for (b = 0; b < k; b++) {
                c = cnt[b, order[s]]; delete a
                for (x = 1; x <= c; x++) a[x] = val[b, order[s], x]
                sortv(a, c)
                if (c) printf " %.2f ms | %.2f |", rank(a, c, 0.5), rank(a, c, 0.9); else printf " - | - |"
            }
            print ""
        }
        printf "| **whole turn, spawn -> reaped** |"
        for (b = 0; b < k; b++) {
            c = 0; delete a
            for (key in runs) { split(key, h, SUBSEP); if (h[1] == b) a[++c] = tot[key] }
            sortv(a, c)
            printf " **%.2f ms** | %.2f |", rank(a, c, 0.5), rank(a, c, 0.9)
        }
        print ""
        for (b = 0; b < k; b++) {
            c = ccnt[b]; delete a
            for (x = 1; x <= c; x++) a[x] = cval[b, x]
            sortv(a, c)
            printf "%s: \"done\" over 1 ms on %d of %d turns (a close that checkpoints the WAL)", lab[b + 1], c, nd[b]
            if (c) printf ": median %.2f ms, max %.2f", rank(a, c, 0.5), a[c]
            print ""
        }
    }' "$scratch/steps.tsv"
echo "bench-time, the same turns (traced):"
cat "$scratch/bench-time.out"
exit 0
