# Sourced by the bench scripts: medians, a clock, and what a trace and its staging hold.
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
now() { date +%s.%N; }
# The number of events in a trace.
trace_calls() { "$1" summary --json "$2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])'; }
# Bytes of the staging directories kept (`cairn run --keep-staging`) beside trace $1.
staged_bytes() { du -b -s "$(dirname "$1")"/."$(basename "$1")".staging-* | awk '{s += $1} END {print s}'; }
# Bytes of the records the tracer staged under the staging directories given (their
# segments' chunks up to the first empty slot: without the chunks' unused room).
record_bytes() {
    python3 - "$@" <<'PY'
import os, struct, sys
HEADER, CHUNK, CHUNK_HEADER = 64 * 1024, 256 * 1024, 32
total = 0
for top in sys.argv[1:]:
    for directory, _, names in os.walk(top):
        for name in names:
            if not name.endswith(".seg"):
                continue
            data = open(os.path.join(directory, name), "rb").read()
            for start in range(HEADER, len(data) - CHUNK + 1, CHUNK):
                chunk = data[start:start + CHUNK]
                if chunk[:4] != b"CHNK":
                    continue
                at = CHUNK_HEADER
                while at + 8 <= CHUNK:
                    word = struct.unpack_from("<I", chunk, at)[0]
                    if word == 0:
                        break
                    at += 8 + (((word & 0xFFFFFF) + 7) & ~7)
                total += at - CHUNK_HEADER
print(total)
PY
}
# The result line of a benchmark: NAME CAIRN TRACE "UNTRACED TIMES" "TRACED TIMES" — the
# trace's events, bytes and staging, and the medians of the times.
report_trace() {
    # shellcheck disable=SC2086
    report_line "$1" "$(trace_calls "$2" "$3")" "$(stat -c %s "$3")" "$(staged_bytes "$3")" \
        "$(median $4)" "$(median $5)"
}
# One result line: name calls trace-bytes staged untraced-median traced-median.
report_line() {
    awk -v n="$1" -v c="$2" -v b="$3" -v s="$4" -v u="$5" -v t="$6" \
        'BEGIN { printf "%-20s %9d %8d %10.4f %10d %10.4f %10.4f %7.3f\n", n, c, b, b / c, s, u, t, t / u }'
}
report_header() {
    printf '%-20s %9s %8s %10s %10s %10s %10s %7s\n' "$1" calls "trace B" "B/call" "staged B" "untraced s" "traced s" ratio
}
# A program of the IOR tree (`ior`, `mdtest`): $1 itself if it is a binary, else built from
# the IOR source tree $1 in the work directory $2 (not bundled: CI cannot fetch). $3 names it.
# IOR's HDF5 backend is built in when Debian's parallel HDF5 (libhdf5-openmpi-dev, which
# scripts/install-deps.sh installs) is there.
ior_tree_program() {
    if [ -d "$1" ]; then
        cp -r "$1" "$2/ior-src"
        local hdf5=()
        if [ -d /usr/include/hdf5/openmpi ]; then
            hdf5=(--with-hdf5 CC=mpicc.openmpi CPPFLAGS=-I/usr/include/hdf5/openmpi
                LDFLAGS=-L/usr/lib/x86_64-linux-gnu/hdf5/openmpi)
        fi
        (cd "$2/ior-src" && ./bootstrap && ./configure "${hdf5[@]}" && make -j2) \
            >"$2/ior-build.log" 2>&1
        echo "$2/ior-src/src/$3"
    else
        echo "$1"
    fi
}
# Alternating rounds of a job untraced and traced: `alternate ROUNDS DATA_DIR` calls the
# caller's `run` (the job, its arguments after any prefix given) bare, then as
# `run "$cairn" run -q -o trace.cairn --`, DATA_DIR emptied before each, ROUNDS times; the
# walls (seconds) go to the arrays `untraced` and `traced`, the last trace stays in
# trace.cairn.
alternate() {
    untraced=()
    traced=()
    local start
    for _ in $(seq "$1"); do
        rm -rf "${2:?}"/* trace.cairn
        start=$(now)
        run
        untraced+=("$(echo "$(now) - $start" | bc)")
        rm -rf "${2:?}"/*
        start=$(now)
        run "$cairn" run -q -o trace.cairn --
        traced+=("$(echo "$(now) - $start" | bc)")
    done
}
