#!/bin/sh
# Measures what fence run adds per notified call (a write-flag open) and at startup.
# Usage: bench/notify-cost.sh [path/to/fence]   (default: target/release/fence)
# Runs in a tmpfs directory when /dev/shm exists, as the figures in the README assume.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
fence=${1:-$here/../target/release/fence}
work=$(mktemp -d "${BENCH_DIR:-/dev/shm}/fence-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/notify_cost" "$here/notify_cost.c"
cd "$work"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
bare=$(for i in 1 2 3 4 5; do ./notify_cost 100000; done | median)
fenced=$(for i in 1 2 3 4 5; do "$fence" run --worktree "$work" -- ./notify_cost 100000; done | median)
echo "open(O_WRONLY)+close, bare:        $bare us"
echo "open(O_WRONLY)+close, fence run:   $fenced us"
echo "added per notified call:           $(echo "$fenced $bare" | awk '{printf "%.2f", $1-$2}') us"
t0=$(date +%s%N); for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done; t1=$(date +%s%N)
for i in 1 2 3 4 5 6 7 8 9 10; do "$fence" run --worktree "$work" -- /bin/true; done; t2=$(date +%s%N)
echo "startup, bare /bin/true:           $(( (t1 - t0) / 10000 )) us"
echo "startup, fence run -- /bin/true:   $(( (t2 - t1) / 10000 )) us"
printf 'i=0; while [ $i -lt 2000 ]; do /bin/true; i=$((i+1)); done\n' > "$work/loop.sh"
bare=$( { /usr/bin/time -f %e sh "$work/loop.sh"; } 2>&1 )
fenced=$( { /usr/bin/time -f %e "$fence" run --worktree "$work" -- sh "$work/loop.sh"; } 2>&1 )
echo "2,000 execs, bare:                 $bare s"
echo "2,000 execs, fence run:            $fenced s"
