# shellcheck shell=bash
# bench/private_nginx.sh - a private nginx on 127.0.0.1 for the crawl
# benchmarks; bench_crawl.sh, bench_warc.sh and bench_lastmod.sh source it.
# Its nginx.conf, pid file, logs and temporary folders all live in one
# folder of the caller's, so a run neither needs nor touches the system's
# nginx service. One worker process (the crawlers get the other core),
# static files only, sendfile, keep-alive without a request cap, no gzip.
#
#   nginx_find          set nginx_bin to the nginx binary ("" if none)
#   free_ports N        print N distinct free TCP ports of 127.0.0.1
#   nginx_conf DIR ROOT PORTS TYPES [HTTP [SERVER]]
#                       write DIR/nginx.conf: ROOT served on each port of
#                       PORTS (space-separated), TYPES inside types { },
#                       HTTP and SERVER extra directives of the http and
#                       server blocks; no access log unless HTTP has one
#   nginx_start DIR PORT
#                       start nginx on DIR/nginx.conf in the background
#                       (its pid in nginx_pid) and wait up to 5 s for PORT
#                       to accept; status 1 (nginx stopped, nginx_pid
#                       empty, DIR/error.log and DIR/stderr kept) if not
#   nginx_stop          stop it gracefully (QUIT) and wait; nothing if not
#                       started
nginx_pid=

nginx_find() {
    nginx_bin=$(command -v nginx ||
        { [ -x /usr/sbin/nginx ] && echo /usr/sbin/nginx; } || true)
}

free_ports() {
    python3 - "$1" <<'PY'
import socket, sys
ss = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))
PY
}

nginx_conf() {
    local dir=$1 root=$2 ports=$3 types=$4 http=${5:-} server=${6:-}
    local listen='' access='access_log off;' p
    for p in $ports; do
        listen="$listen listen 127.0.0.1:$p;"
    done
    case "$http" in *access_log*) access= ;; esac
    mkdir -p "$dir"
    cat >"$dir/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 1024; }
http {
    $access
    client_body_temp_path $dir/body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
    types { $types }
    default_type application/octet-stream;
    sendfile on;
    keepalive_requests 1000000;
    $http
    server {
        $listen
        root $root;
        index index.html;
        gzip off;
        $server
    }
}
CONF
}

nginx_port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

nginx_start() {
    local dir=$1 port=$2
    "$nginx_bin" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" \
        2>>"$dir/stderr" &
    nginx_pid=$!
    for _ in $(seq 50); do
        nginx_port_open "$port" && return 0
        kill -0 "$nginx_pid" 2>/dev/null || break
        sleep 0.1
    done
    nginx_port_open "$port" && return 0
    kill "$nginx_pid" 2>/dev/null || true
    wait "$nginx_pid" 2>/dev/null || true
    nginx_pid=
    return 1
}

nginx_stop() {
    [ -n "$nginx_pid" ] || return 0
    kill -QUIT "$nginx_pid" 2>/dev/null || true
    wait "$nginx_pid" 2>/dev/null || true
    nginx_pid=
}
