#!/bin/sh
# Measures what fence run adds per notified call (a write-flag open) and at startup.
# Usage: bench/notify-cost.sh [path/to/fence]   (default: target/<host tuple>/release/fence)
# Runs in a tmpfs directory when /dev/shm exists, as the figures in the README assume.
# Bare and fenced runs alternate, so that a change of load on a shared machine hits both.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
fence=${1:-$here/../target/$(rustc --print host-tuple)/release/fence}
# The runs below start from another directory: make a relative path absolute.
fence=$(cd "$(dirname "$fence")" && pwd)/$(basename "$fence")
work=$(mktemp -d "${BENCH_DIR:-/dev/shm}/fence-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/notify_cost" "$here/notify_cost.c"
# The file is written in a folder that exists when the sandbox starts (Landlock grants it
# whole: the call goes to the kernel), as most writes are; a file at the worktree's root
# (a held folder) is written by the supervisor, which is measured too.
mkdir "$work/src"
cd "$work/src"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
: >bare.txt
: >fenced.txt
: >root.txt
for i in 1 2 3 4 5 6 7; do
    ../notify_cost 100000 >>bare.txt
    "$fence" run --quiet-blocks --worktree "$work" -- ../notify_cost 100000 2>/dev/null >>fenced.txt
    (cd "$work" && "$fence" run --quiet-blocks --worktree "$work" -- ./notify_cost 20000 2>/dev/null) >>root.txt
done
bare=$(median <bare.txt)
fenced=$(median <fenced.txt)
root=$(median <root.txt)
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "open(O_WRONLY)+close, bare:        $bare us"
echo "open(O_WRONLY)+close, fence run:   $fenced us"
echo "added per notified call:           $(echo "$fenced $bare" | awk '{printf "%.2f", $1-$2}') us"
echo "same at the worktree's root, carried out by the supervisor: $(echo "$root $bare" | awk '{printf "%.2f", $1-$2}') us added"
# CPU time (user + system of both sides, fence's threads included) per call: what the
# call costs the machine, and its wall time on an idle one (target and supervisor run in
# turn); less disturbed than wall time by other work.
if [ -x /usr/bin/time ]; then
    cpu() { /usr/bin/time -f '%U %S' "$@" 2>&1 >/dev/null | tail -1 | awk '{print $1 + $2}'; }
    : >bare-cpu.txt
    : >fenced-cpu.txt
    for i in 1 2 3 4 5; do
        cpu ../notify_cost 100000 >>bare-cpu.txt
        cpu "$fence" run --quiet-blocks --worktree "$work" -- ../notify_cost 100000 >>fenced-cpu.txt
    done
    bare_cpu=$(median <bare-cpu.txt)
    fenced_cpu=$(median <fenced-cpu.txt)
    echo "CPU time per call, bare:           $(echo "$bare_cpu" | awk '{printf "%.2f", $1 * 10}') us"
    echo "CPU time per call, fence run:      $(echo "$fenced_cpu" | awk '{printf "%.2f", $1 * 10}') us"
    echo "CPU time added per notified call:  $(echo "$fenced_cpu $bare_cpu" | awk '{printf "%.2f", ($1 - $2) * 10}') us"
fi
