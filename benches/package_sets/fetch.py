#!/usr/bin/env python3
"""The plain concurrent client of benches/package_sets/run.sh: fetch every narinfo
listed in FILE (one URL path a line) from http://HOST:PORT with N threads (default 16),
each over one kept-alive connection, reading each body whole. Prints the count.

    fetch.py HOST PORT FILE [N]
"""
import http.client
import sys
import threading


def main():
    host, port, listing = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 16
    with open(listing) as f:
        paths = [line.strip() for line in f if line.strip()]
    counts = [0] * n

    def worker(k):
        conn = http.client.HTTPConnection(host, port)
        for p in paths[k::n]:
            conn.request("GET", p)
            r = conn.getresponse()
            body = r.read()
            if r.status != 200 or not body:
                raise SystemExit(f"{p}: HTTP {r.status}")
            counts[k] += 1
        conn.close()

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(sum(counts))


main()
