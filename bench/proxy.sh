#!/usr/bin/env bash
# The domain proxy against a direct connection, both under `fence run`, on loopback:
# throughput of a large download (median of three), and time to first byte of small
# requests (median).
#
#   bench/proxy.sh [SIZE_MB] [REQUESTS]     (defaults: 1024 MB, 200 requests)
#
# The server is a small Python program that answers every GET with sendfile(2) from a
# sparse file, so it is not the bottleneck. Direct: `--allow-net 127.0.0.1:PORT`, curl
# without proxy. Proxied: `--allow-domain bench.test --resolve bench.test:127.0.0.1`, curl
# through HTTP_PROXY (plain HTTP through the proxy). Needs python3 and curl; builds fence
# in release mode.
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb=${1:-1024}
requests=${2:-200}

cargo build --release -q -p fence
fence=$PWD/target/$(rustc --print host-tuple)/release/fence
work=$(mktemp -d /tmp/fence-bench-proxy-XXXXXX)
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
truncate -s "${size_mb}M" "$work/big"
: > "$work/small"

cat > "$work/server.py" <<'EOF'
import os, socket, sys, threading
root = sys.argv[1]
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(('127.0.0.1', 0))
srv.listen(128)
print(srv.getsockname()[1], flush=True)
def serve(c):
    with c:
        head = b''
        while b'\r\n\r\n' not in head:
            chunk = c.recv(65536)
            if not chunk:
                return
            head += chunk
        path = head.split(b' ')[1].decode().rsplit('/', 1)[-1]
        f = os.path.join(root, path)
        size = os.path.getsize(f)
        c.sendall(f'HTTP/1.1 200 OK\r\nContent-Length: {size}\r\nConnection: close\r\n\r\n'.encode())
        with open(f, 'rb') as fh:
            if size:
                c.sendfile(fh)
while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF
python3 "$work/server.py" "$work" > "$work/port" &
server=$!
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(cat "$work/port")

cat > "$work/run.sh" <<EOF
#!/usr/bin/env bash
# \$1: direct or proxy
if [ "\$1" = direct ]; then url=http://127.0.0.1:$port; opt=(--noproxy '*'); else url=http://bench.test:$port; opt=(); fi
for i in 1 2 3; do
  curl -sS "\${opt[@]}" -o /dev/null -w 'throughput %{speed_download}\n' "\$url/big"
done
for i in \$(seq $requests); do
  curl -sS "\${opt[@]}" -o /dev/null -w 'ttfb %{time_starttransfer}\n' "\$url/small"
done
EOF
chmod +x "$work/run.sh"

cd "$work"
"$fence" run --quiet-blocks --worktree "$work" --allow-net "127.0.0.1:$port" -- ./run.sh direct > direct.out 2>/dev/null
"$fence" run --quiet-blocks --worktree "$work" --allow-domain bench.test --resolve bench.test:127.0.0.1 -- ./run.sh proxy > proxy.out 2>/dev/null

python3 - "$size_mb" <<'EOF'
import statistics, sys
def read(name):
    tp, ttfb = [], []
    for line in open(name):
        k, v = line.split()
        if k == 'throughput':
            tp.append(float(v))
        else:
            ttfb.append(float(v) * 1000)
    return statistics.median(tp), statistics.median(ttfb), len(ttfb)
d_tp, d_lat, n = read('direct.out')
p_tp, p_lat, _ = read('proxy.out')
print(f'{sys.argv[1]} MB download (median of 3): direct {d_tp / 1e6:.0f} MB/s, proxy {p_tp / 1e6:.0f} MB/s: proxy at {100 * p_tp / d_tp:.0f}% of direct')
print(f'time to first byte, median of {n}: direct {d_lat:.2f} ms, proxy {p_lat:.2f} ms: +{p_lat - d_lat:.2f} ms')
EOF
