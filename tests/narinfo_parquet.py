"""Write a binary cache's narinfos as a narinfo dataset in Parquet, with DuckDB.

Used by tests/load_parquet.rs: the producer is DuckDB's own Parquet writer
(`COPY ... TO ... (FORMAT parquet)`), in the layout public narinfo datasets use
(`StorePath`, `References`, `NarSize`, `FileSize`, `Deriver`, `NarHash`, `URL`,
`Compression`).

usage: narinfo_parquet.py CACHE_DIR OUT REFS PATHS CODEC ROW_GROUP_SIZE [PARTS]
  REFS   list   References as VARCHAR[] (a Parquet list<string>)
         string References as one space-separated VARCHAR, as in the .narinfo
  PATHS  full   StorePath, References and Deriver as full store paths
         base   as base names (`<hash>-<name>`)
  CODEC  a DuckDB Parquet compression: snappy, zstd, gzip, uncompressed
  PARTS  when given, OUT is a directory and the rows are written to PARTS files
         (`PARTITION_BY` a bucket column, which DuckDB leaves out of the files)
"""

import os
import sys

import duckdb


def narinfos(cache):
    store_dir = "/nix/store"
    info = os.path.join(cache, "nix-cache-info")
    if os.path.exists(info):
        for line in open(info):
            if line.startswith("StoreDir:"):
                store_dir = line.split(":", 1)[1].strip()
    for name in sorted(os.listdir(cache)):
        if not name.endswith(".narinfo"):
            continue
        fields = {}
        for line in open(os.path.join(cache, name)):
            if ":" in line:
                k, v = line.split(":", 1)
                fields[k.strip()] = v.strip()
        yield store_dir, fields


def main():
    cache, out, refs_as, paths_as, codec, group = sys.argv[1:7]
    parts = int(sys.argv[7]) if len(sys.argv) > 7 else 0
    rows = []
    for i, (store_dir, f) in enumerate(narinfos(cache)):
        def path(base):
            return base if paths_as == "base" else f"{store_dir}/{base}"

        sp = f["StorePath"]
        base = sp[len(store_dir) + 1:]
        refs = [path(r) for r in f.get("References", "").split()]
        deriver = f.get("Deriver")
        rows.append((
            path(base),
            refs if refs_as == "list" else " ".join(refs),
            int(f["NarSize"]),
            int(f["FileSize"]) if "FileSize" in f else None,
            path(deriver) if deriver else None,
            f.get("NarHash"),
            f.get("URL"),
            f.get("Compression"),
            i % parts if parts else 0,
        ))
    con = duckdb.connect()
    refs_type = "VARCHAR[]" if refs_as == "list" else "VARCHAR"
    con.execute(
        f"""CREATE TABLE narinfo ("StorePath" VARCHAR, "References" {refs_type},
            "NarSize" UBIGINT, "FileSize" BIGINT, "Deriver" VARCHAR, "NarHash" VARCHAR,
            "URL" VARCHAR, "Compression" VARCHAR, bucket INTEGER)"""
    )
    con.executemany("INSERT INTO narinfo VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    options = f"FORMAT parquet, COMPRESSION {codec}, ROW_GROUP_SIZE {int(group)}"
    if parts:
        con.execute(f"COPY narinfo TO '{out}' ({options}, PARTITION_BY (bucket))")
    else:
        con.execute(
            f"""COPY (SELECT * EXCLUDE (bucket) FROM narinfo) TO '{out}' ({options})"""
        )
    print(len(rows))


if __name__ == "__main__":
    main()
