#!/usr/bin/env python3
"""bench_wal.py - the crawl state's WAL on a large crawl (issue 20): its
peak size and the crawl's rate, for one or more crawl binaries.

    python3 bench/gen_static_site.py SITE --port PORT --pages 200000
    python3 bench/bench_wal.py --site SITE --port PORT [--runs 3] \\
        NAME=CRAWL_BINARY [NAME=CRAWL_BINARY ...]

The site of the crawl benchmark (bench/gen_static_site.py; 200,000
articles make 216,052 pages) is served by a private nginx on
127.0.0.1:PORT (the port it was generated for), as in bench/bench_crawl.sh
and bench/bench_workers.py.  Each binary crawls it --runs times, in
rotating order, with a fresh --state DIR and the benchmark's options
(--no-robots --delay 0 --concurrency 32 --per-host 32 --max-depth 100
--expect 300000 --quiet), while a sampler reads the size of
DIR/crawl.db-wal every 10 ms (st_size: the bytes the file holds, what a
full disk sees).  Reported per binary: the medians of the peak WAL size,
of the pages per second (pages from --stats-json over the wall time of the
process) and of crawl.db's final size, and each run's numbers.

--full-disk MIB (root: it mounts a tmpfs) instead: the room a state needs
to resume after a full disk (docs/DESIGN.md section 10).  One crawl with
room gives crawl.db's final size D_end; then for each binary the state is
put on a MIB tmpfs, the crawl fills it (exit 1), the tmpfs is grown to
what DIR uses plus B + W + (D_end - D_fail) and no more (B bloom.snap's
size, W = (1,024 + 64) x (8,192 + 24) + 32 the WAL's bound, D_fail
crawl.db's size at the failure), and the same command is run again, up
to three times while it fails: its exit status, the WAL's size at the
failure, and the pages of the crawl in --stats-json are printed.  Nothing
is contacted outside 127.0.0.1.
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def wait_port(port, seconds=10.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def start_nginx(tmp, root, port):
    d = os.path.join(tmp, "nginx")
    os.makedirs(d)
    conf = os.path.join(d, "nginx.conf")
    with open(conf, "w") as fh:
        fh.write("""worker_processes 1;
daemon off;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    types {{ text/html html; }}
    default_type application/octet-stream;
    sendfile on;
    keepalive_timeout 65s;
    keepalive_requests 1000000;
    server {{ listen 127.0.0.1:{port}; root {root}; index index.html;
             etag off; gzip off; }}
}}
""".format(d=d, port=port, root=root))
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    proc = subprocess.Popen([nginx, "-p", d, "-c", conf, "-e",
                             os.path.join(d, "error.log")])
    if not wait_port(port):
        proc.kill()
        sys.exit("bench_wal: nginx did not start on port %d" % port)
    return proc


WAL_BOUND = (1024 + 64) * (8192 + 24) + 32


def crawl_cmd(binary, port, state, stats):
    return [binary, "--state", state, "--no-robots", "--delay", "0",
            "--concurrency", "32", "--per-host", "32", "--max-depth", "100",
            "--expect", "300000", "--quiet", "--stats-json", stats,
            "http://127.0.0.1:%d/" % port]


def one_run(binary, port, rundir):
    state = os.path.join(rundir, "state")
    stats = os.path.join(rundir, "stats.json")
    wal = os.path.join(state, "crawl.db-wal")
    cmd = crawl_cmd(binary, port, state, stats)
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            try:
                peak[0] = max(peak[0], os.stat(wal).st_size)
            except OSError:
                pass
            time.sleep(0.01)
    t = threading.Thread(target=sample)
    t.start()
    t0 = time.monotonic()
    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode
    wall = time.monotonic() - t0
    done.set()
    t.join()
    with open(stats) as fh:
        pages = json.load(fh)["pages"]
    db = os.path.getsize(os.path.join(state, "crawl.db"))
    shutil.rmtree(state)
    return {"rc": rc, "pages": pages, "wall": wall, "rate": pages / wall,
            "wal_peak": peak[0], "db": db}


def full_disk(crawls, port, tmp, mib):
    ref = os.path.join(tmp, "ref")
    os.makedirs(ref)
    stats = os.path.join(ref, "stats.json")
    subprocess.run(crawl_cmd(crawls[-1][1], port, os.path.join(ref, "state"),
                             stats), stdout=subprocess.DEVNULL, check=True)
    d_end = os.path.getsize(os.path.join(ref, "state", "crawl.db"))
    # B: the snapshot's size, the same for every run of this filter (a
    # crawl that failed before its first snapshot has none yet).
    b = os.path.getsize(os.path.join(ref, "state", "bloom.snap"))
    print("reference (%s): crawl.db %d bytes at the end, bloom.snap %d"
          % (crawls[-1][0], d_end, b))
    for name, binary in crawls:
        mnt = os.path.join(tmp, "mnt-" + name)
        os.makedirs(mnt)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dm" % mib,
                        "tmpfs", mnt], check=True)
        try:
            state = os.path.join(mnt, "state")
            stats = os.path.join(tmp, name + ".json")
            cmd = crawl_cmd(binary, port, state, stats)
            r = subprocess.run(cmd, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
            fs = os.statvfs(mnt)
            used = (fs.f_blocks - fs.f_bfree) * fs.f_frsize
            d_fail = os.path.getsize(os.path.join(state, "crawl.db"))
            wal = os.path.getsize(os.path.join(state, "crawl.db-wal")) \
                if os.path.exists(os.path.join(state, "crawl.db-wal")) else 0
            room = b + WAL_BOUND + max(0, d_end - d_fail)
            size = (used + room + 4095) // 4096 * 4096
            print("%s: %d MiB tmpfs: exit %d (%s); DIR uses %d bytes: "
                  "crawl.db %d, WAL %d, bloom.snap B %d; grown by B + W + "
                  "(D_end - D_fail) = %d + %d + %d = %d to %d bytes"
                  % (name, mib, r.returncode, r.stderr.strip()[-160:], used,
                     d_fail, wal, b, b, WAL_BOUND, max(0, d_end - d_fail),
                     room, size), flush=True)
            subprocess.run(["mount", "-o", "remount,size=%d" % size, mnt],
                           check=True)
            for attempt in range(3):
                r = subprocess.run(cmd, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
                try:  # a run refused at the start writes no stats
                    with open(stats) as fh:
                        st = json.load(fh)
                except ValueError:
                    st = {}
                print("%s: resume %d: exit %d, pages %s, outcome %s %s"
                      % (name, attempt + 1, r.returncode, st.get("pages"),
                         st.get("outcome"), r.stderr.strip()[-160:]),
                      flush=True)
                if r.returncode == 0:
                    break
        finally:
            subprocess.run(["umount", mnt])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--site", required=True,
                    help="gen_static_site.py's OUTDIR")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--full-disk", type=int, metavar="MIB",
                    help="the resume after a full disk instead (root)")
    ap.add_argument("crawls", nargs="+", metavar="NAME=BINARY")
    a = ap.parse_args()
    crawls = [c.split("=", 1) for c in a.crawls]
    with tempfile.TemporaryDirectory(prefix="bench_wal.") as tmp:
        nginx = start_nginx(tmp, os.path.join(os.path.abspath(a.site), "www"),
                            a.port)
        results = {name: [] for name, _ in crawls}
        if a.full_disk:
            try:
                full_disk(crawls, a.port, tmp, a.full_disk)
            finally:
                nginx.terminate()
                nginx.wait()
            return
        try:
            for run in range(a.runs):
                order = crawls[run % len(crawls):] + crawls[:run % len(crawls)]
                for name, binary in order:
                    r = one_run(binary, a.port, tmp)
                    results[name].append(r)
                    print("run %d %-8s rc %d pages %d wall %.2f s %.0f "
                          "pages/s WAL peak %.1f MiB crawl.db %.1f MiB"
                          % (run + 1, name, r["rc"], r["pages"], r["wall"],
                             r["rate"], r["wal_peak"] / 2**20,
                             r["db"] / 2**20), flush=True)
        finally:
            nginx.terminate()
            nginx.wait()
    print("load average at the end: %.2f %.2f %.2f" % os.getloadavg())
    print("| crawl | pages | pages/s (median) | WAL peak (median) | "
          "crawl.db |")
    print("|---|---:|---:|---:|---:|")
    for name, _ in crawls:
        rs = results[name]
        print("| %s | %d | %.0f | %.1f MiB | %.1f MiB |"
              % (name, rs[0]["pages"],
                 statistics.median(r["rate"] for r in rs),
                 statistics.median(r["wal_peak"] for r in rs) / 2**20,
                 statistics.median(r["db"] for r in rs) / 2**20))


if __name__ == "__main__":
    main()
