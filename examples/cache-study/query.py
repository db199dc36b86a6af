#!/usr/bin/env python3
"""Answer the cache study's questions (queries.sql) from a dataset with DuckDB.

    query.py DATASET [--json] [--top N]

DATASET is the directory of `*.jsonl` record files that study.py (or `nixcut refs
--paths-from ... --format jsonl --output FILE`) wrote. Prints each answer as a table,
or with --json one JSON object {"removable": [...], "gpu": [...], "releases": [...]},
each a list of rows (objects keyed by column); --top N cuts the removable list (tables
only: --json prints every row).
"""
import argparse
import json
import os
import re
import sys

import duckdb

HERE = os.path.dirname(os.path.abspath(__file__))


def statements(sql: str) -> list[tuple[str, str]]:
    """(name, statement) for each statement after a line `-- name: NAME`."""
    out: list[tuple[str, str]] = []
    for chunk in re.split(r"^-- name:", sql, flags=re.MULTILINE)[1:]:
        name, _, body = chunk.partition("\n")
        out.append((name.strip(), body.strip().rstrip(";")))
    return out


def answers(dataset: str) -> dict[str, list[dict]]:
    """Every named query's rows, the setup statements run first."""
    if not any(n.endswith(".jsonl") for n in os.listdir(dataset)):
        raise SystemExit(f"{dataset}: no *.jsonl files")
    with open(os.path.join(HERE, "queries.sql"), encoding="utf-8") as f:
        sql = f.read()
    # A path quoted inside a SQL string literal.
    literal = os.path.abspath(dataset).replace("'", "''")
    con = duckdb.connect()
    result: dict[str, list[dict]] = {}
    for name, stmt in statements(sql):
        cur = con.execute(stmt.replace("DATASET", literal))
        if name == "setup":
            continue
        cols = [d[0] for d in cur.description]
        result[name] = [dict(zip(cols, row)) for row in cur.fetchall()]
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--top", type=int, default=20)
    a = ap.parse_args()
    res = answers(a.dataset)
    if a.json:
        print(json.dumps(res))
        return 0
    for name, rows in res.items():
        if name == "removable":
            rows = rows[: a.top]
        print(f"== {name} ({len(rows)} rows)")
        if rows:
            cols = list(rows[0])
            print("\t".join(cols))
            for r in rows:
                print("\t".join(str(r[c]) for c in cols))
    return 0


if __name__ == "__main__":
    sys.exit(main())
