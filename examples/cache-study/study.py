#!/usr/bin/env python3
"""Run `nixcut refs --paths-from` over shards of a path list on a Ray cluster.

    study.py --cache URL --list FILE --out DIR [--shards N] [--address ADDR]
             [--nixcut PATH] [--batch N] [--cpus-per-task N]

FILE holds one entry a line: a store path, base name, hash or narinfo URL, optionally
after a release label and a tab (`24.05<TAB>/nix/store/...`). The driver reads it once
and hands it to every task through Ray's object store (the workers need no copy of it);
task K runs

    nixcut refs --cache URL --paths-from - --shard K/N --format jsonl \\
        --output DIR/part-K.jsonl

so the dataset is DIR/part-*.jsonl, one record per entry (docs/cache-study.md in the
nixcut repository has the record's fields). DIR must be reachable from every worker
under the same name (a local directory on one machine; a shared file system on a
cluster). Rerunning the same command resumes: a shard with DIR/part-K.jsonl.done is
skipped by nixcut at once, a shard cut short goes on after its last complete record.

Prints one JSON line at the end: shards, entries, seconds, and the records with an error.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import ray


@ray.remote
def run_shard(
    nixcut: str, cache: str, paths: bytes, k: int, n: int, out: str, batch: int
) -> dict:
    """One shard: nixcut reads the list on stdin and appends its records to `out`."""
    start = time.monotonic()
    cmd = [
        nixcut, "--quiet", "--cache", cache, "refs", "--paths-from", "-",
        "--shard", f"{k}/{n}", "--format", "jsonl", "--output", out,
        "--batch", str(batch),
    ]
    proc = subprocess.run(cmd, input=paths, capture_output=True)
    if proc.returncode != 0:
        raise RuntimeError(
            f"shard {k}/{n}: nixcut exited {proc.returncode}: "
            + proc.stderr.decode(errors="replace")
        )
    return {"shard": k, "seconds": time.monotonic() - start}


def count_records(out_dir: str) -> tuple[int, int]:
    """Records and records with an `error` in the dataset."""
    records = errors = 0
    for name in sorted(os.listdir(out_dir)):
        if not (name.startswith("part-") and name.endswith(".jsonl")):
            continue
        with open(os.path.join(out_dir, name), encoding="utf-8") as f:
            for line in f:
                records += 1
                errors += "error" in json.loads(line)
    return records, errors


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", required=True, help="binary cache URL")
    ap.add_argument("--list", required=True, help="path list (see above)")
    ap.add_argument("--out", required=True, help="dataset directory")
    ap.add_argument("--shards", type=int, default=16)
    ap.add_argument("--address", default=None,
                    help="Ray cluster address (default: start a local one)")
    ap.add_argument("--nixcut", default="nixcut", help="nixcut on every worker")
    ap.add_argument("--batch", type=int, default=32,
                    help="entries per write: what an interruption loses at most")
    ap.add_argument("--cpus-per-task", type=float, default=1.0)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    out_dir = os.path.abspath(a.out)
    with open(a.list, "rb") as f:
        paths = f.read()
    ray.init(address=a.address, log_to_driver=False)
    start = time.monotonic()
    shared = ray.put(paths)
    task = run_shard.options(num_cpus=a.cpus_per_task)
    pending = [
        task.remote(a.nixcut, a.cache, shared, k, a.shards,
                    os.path.join(out_dir, f"part-{k}.jsonl"), a.batch)
        for k in range(a.shards)
    ]
    ray.get(pending)
    seconds = time.monotonic() - start
    records, errors = count_records(out_dir)
    print(json.dumps({"shards": a.shards, "records": records, "errors": errors,
                      "seconds": round(seconds, 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
