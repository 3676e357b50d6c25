#!/bin/bash
# CPU samples of the graph compiles only, ours vs native ResNet18 (bench/compile_perf_child.py), then the
# symbols whose self samples differ most (glibc malloc's _int_malloc / malloc_consolidate / unlink_chunk: see
# docs/performance.md, "Compile-time history"). Needs Linux perf (user-space sampling: perf_event_paranoid <= 2).
#   bench/compile_perf.sh [OUTDIR]      extra environment for both runs via the caller (e.g. LD_PRELOAD=...)
# Ours runs under run.py's own allocator choice (MindSpore's jemalloc where shipped, adapter/allocator.py): the
# glibc samples above need ADAPTER_MALLOC=system.
set -e
cd "$(dirname "$0")/.."
out=${1:-/tmp/compile_perf}
run() {  # NAME SCRIPT ARGS...
    local d=$out/$1; shift
    rm -rf "$d"; mkdir -p "$d"; mkfifo "$d/ctl" "$d/ack"
    PERF_CTL=$d/ctl PERF_ACK=$d/ack GLOG_v=4 perf record -q -F 499 -D -1 --control "fifo:$d/ctl,$d/ack" \
        -o "$d/perf.data" -- .venv/bin/python bench/compile_perf_child.py "$@" > "$d/stdout.txt" 2> "$d/stderr.txt"
    perf report -i "$d/perf.data" --no-children --sort sym -g none -q --stdio -n 2>/dev/null \
        | awk '{n=$2; $1=$2=$3=""; sub(/^ +/, ""); print n "\t" $0}' > "$d/symbols.tsv"
}
run native bench/native_resnet.py --arch resnet18 --steps 2
run ours run.py --no-compile-cache --original bench/train_step.py --arch resnet18 --steps 2
.venv/bin/python - "$out" <<'PY'
import collections, sys
def load(name):
    c = collections.Counter()
    for line in open(f"{sys.argv[1]}/{name}/symbols.tsv"):
        n, _, sym = line.rstrip("\n").partition("\t")
        if n.isdigit():
            c[sym[:100]] += int(n)
    return c
a, b = load("native"), load("ours")
print(f"samples at 499 Hz in the compiles: native {sum(a.values())}, ours {sum(b.values())}")
print(" native   ours   diff  symbol")
for k in sorted(set(a) | set(b), key=lambda k: a[k] - b[k])[:25]:
    print(f"{a[k]:7d} {b[k]:6d} {b[k] - a[k]:+6d}  {k}")
PY
