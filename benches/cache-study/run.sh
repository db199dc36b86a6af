#!/usr/bin/env bash
# The per-entry cost of `nixcut refs --paths-from` (docs/scale.md, "Cache-wide study"):
# serve the binary cache directory CACHE with nginx on 127.0.0.1 (access log of bytes
# sent per request), study every entry of LIST in one process, and print one JSON line:
# entries, wall and CPU seconds (user + system: what a busy machine does not inflate),
# peak memory, bytes nginx sent by kind (nar, narinfo, ls, other), and the NAR and file
# (compressed) bytes of the records studied.
#
#   benches/cache-study/run.sh CACHE LIST [NIXCUT]     (NIXCUT: target/release/nixcut)
#
# A cache to try: `nix copy --to 'file:///tmp/cache?compression=xz&write-nar-listing=true'`
# of paths of the local store; the list is their store paths.
set -euo pipefail
cache=$(realpath "$1")
list=$(realpath "$2")
nixcut=$(realpath "${3:-target/release/nixcut}")
work=$(mktemp -d)
nginx_pid=
cleanup() { [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$work/nginx"
cat >"$work/nginx/nginx.conf" <<CONF
daemon off;
worker_processes 2;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
  log_format sent '\$uri \$bytes_sent';
  access_log $work/nginx/access.log sent;
  client_body_temp_path $work/nginx/body;
  keepalive_requests 1000000;
  default_type application/octet-stream;
  server { listen 127.0.0.1:$port; root $cache; }
}
CONF
"$(command -v nginx || echo /usr/sbin/nginx)" -p "$work/nginx" -c "$work/nginx/nginx.conf" &
nginx_pid=$!
url=http://127.0.0.1:$port
for _ in $(seq 50); do
  python3 -c "import urllib.request; urllib.request.urlopen('$url/nix-cache-info')" 2>/dev/null && break
  sleep 0.1
done
: >"$work/nginx/access.log"
XDG_CACHE_HOME=$work/xdg python3 - "$nixcut" "$url" "$list" "$work/records.jsonl" "$work/nginx/access.log" <<'PY'
import json, resource, subprocess, sys, time
nixcut, url, entries, records, log = sys.argv[1:]
start = time.monotonic()
subprocess.run([nixcut, "--no-cache", "--cache", url, "refs", "--paths-from", entries,
                "--format", "jsonl", "--output", records, "--quiet"], check=True)
wall = time.monotonic() - start
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
n = errors = nar = file_ = 0
for line in open(records):
    r = json.loads(line)
    n += 1
    errors += "error" in r
    if r["scanned"]:
        nar += r["nar_size"] or 0
        file_ += r["file_size"] or 0
sent = {"nar": 0, "narinfo": 0, "ls": 0, "other": 0}
for line in open(log):
    uri, _, b = line.rstrip().rpartition(" ")
    kind = ("narinfo" if uri.endswith(".narinfo") else "ls" if uri.endswith(".ls")
            else "nar" if uri.startswith("/nar/") else "other")
    sent[kind] += int(b)
print(json.dumps({"entries": n, "errors": errors, "wall_seconds": round(wall, 3),
                  "cpu_seconds": round(ru.ru_utime + ru.ru_stime, 3),
                  "max_rss_kib": ru.ru_maxrss, "sent": sent, "nar_bytes": nar,
                  "file_bytes": file_}))
PY
