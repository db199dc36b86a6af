# Sourced by the HTTP benchmarks: `start_nginx WORK` serves WORK/cache with nginx
# (2 workers, keep-alive, no access log) on a free port of 127.0.0.1, configured in
# WORK/nginx; sets `nginx_pid` (for the caller's cleanup to kill), `port` and `url`.
start_nginx() {
  local work=$1 nginx_bin
  nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  mkdir -p "$work/nginx"
  cat >"$work/nginx/nginx.conf" <<CONF
daemon off;
worker_processes 2;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $work/nginx/body;
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  default_type application/octet-stream;
  types { text/x-nix-narinfo narinfo; }
  server {
    listen 127.0.0.1:$port;
    root $work/cache;
  }
}
CONF
  "$nginx_bin" -p "$work/nginx" -c "$work/nginx/nginx.conf" &
  nginx_pid=$!
  url=http://127.0.0.1:$port
  for _ in $(seq 50); do
    python3 -c "import urllib.request; urllib.request.urlopen('$url/nix-cache-info')" 2>/dev/null && break
    sleep 0.1
  done
}
