-- The questions of the cache study, over the dataset of `nixcut refs --paths-from`
-- (one JSON record per line in DATASET/*.jsonl). query.py substitutes DATASET and runs
-- each statement under its name line; README.md defines every figure.

-- name: setup
-- (`references` is a keyword of SQL: quoted.)
CREATE OR REPLACE VIEW records AS
SELECT * FROM read_json('DATASET/*.jsonl', format = 'newline_delimited', columns = {
    schema_version: 'INTEGER', input: 'VARCHAR', release: 'VARCHAR', path: 'VARCHAR',
    nar_hash: 'VARCHAR', nar_size: 'UBIGINT', file_size: 'UBIGINT', scanned: 'BOOLEAN',
    bytes_scanned: 'UBIGINT',
    "references": 'STRUCT(path VARCHAR, nar_size UBIGINT, verdict VARCHAR, rule VARCHAR,
                        registered BOOLEAN, self_reference BOOLEAN, evidence_count UBIGINT,
                        kinds MAP(VARCHAR, UBIGINT))[]',
    gpu: 'MAP(VARCHAR, UBIGINT)', gpu_generic_bytes: 'UBIGINT', warnings: 'VARCHAR[]',
    error: 'STRUCT(stage VARCHAR, message VARCHAR)'
});

-- name: setup
-- One row per store path studied (a path listed under several releases is studied
-- once per release, with the same result).
CREATE OR REPLACE VIEW paths AS
SELECT DISTINCT ON (path) * FROM records WHERE path IS NOT NULL ORDER BY path;

-- name: setup
CREATE OR REPLACE VIEW edges AS
SELECT path AS src, ref.path AS dst, ref.verdict AS verdict
FROM (SELECT path, unnest("references") AS ref FROM paths)
WHERE NOT ref.self_reference;

-- name: setup
-- The NAR size of every path named: its own record's, else its referrers' (a path
-- outside the list still weighs what its narinfo says).
CREATE OR REPLACE VIEW sizes AS
SELECT path, max(nar_size) AS nar_size FROM (
    SELECT path, nar_size FROM paths
    UNION ALL
    SELECT ref.path, ref.nar_size FROM (SELECT unnest("references") AS ref FROM paths)
) GROUP BY path;

-- name: removable
-- Per store path: the bytes its closure loses when its own `removable` references go
-- (everything else unchanged), largest first.
WITH RECURSIVE
roots AS (SELECT DISTINCT src AS root FROM edges WHERE verdict = 'removable'),
whole(root, node) AS (
    SELECT root, root FROM roots
    UNION
    SELECT w.root, e.dst FROM whole w JOIN edges e ON e.src = w.node
),
kept(root, node) AS (
    SELECT root, root FROM roots
    UNION
    SELECT k.root, e.dst FROM kept k JOIN edges e ON e.src = k.node
    WHERE NOT (e.src = k.root AND e.verdict = 'removable')
),
gone AS (SELECT root, node FROM whole EXCEPT SELECT root, node FROM kept)
SELECT r.root AS path,
       regexp_replace(r.root, '^.*/[0-9a-z]{32}-', '') AS name,
       CAST(coalesce(sum(s.nar_size), 0) AS UBIGINT) AS removable_bytes,
       CAST(count(g.node) AS UBIGINT) AS removable_paths,
       (SELECT CAST(count(*) AS UBIGINT) FROM edges e
         WHERE e.src = r.root AND e.verdict = 'removable') AS removable_references
FROM roots r
LEFT JOIN gone g ON g.root = r.root
LEFT JOIN sizes s ON s.path = g.node
GROUP BY r.root
ORDER BY removable_bytes DESC, path;

-- name: gpu
-- Bytes per GPU base architecture across the study, largest first.
SELECT arch, CAST(sum(bytes) AS UBIGINT) AS bytes, CAST(count(*) AS UBIGINT) AS paths
FROM (SELECT unnest(map_keys(gpu)) AS arch, unnest(map_values(gpu)) AS bytes FROM paths)
GROUP BY arch
ORDER BY bytes DESC, arch;

-- name: releases
-- Per release (in label order): its paths and their NAR bytes, and those that no
-- earlier release has.
WITH rp AS (
    SELECT DISTINCT release, path, nar_size FROM records
    WHERE release IS NOT NULL AND path IS NOT NULL
),
first_seen AS (SELECT path, min(release) AS release FROM rp GROUP BY path)
SELECT rp.release,
       CAST(count(*) AS UBIGINT) AS paths,
       CAST(coalesce(sum(rp.nar_size), 0) AS UBIGINT) AS bytes,
       CAST(count(*) FILTER (WHERE f.release = rp.release) AS UBIGINT) AS new_paths,
       CAST(coalesce(sum(rp.nar_size) FILTER (WHERE f.release = rp.release), 0) AS UBIGINT)
           AS new_bytes
FROM rp JOIN first_seen f ON f.path = rp.path
GROUP BY rp.release
ORDER BY rp.release;
