"""Reads lwarscope's Parquet tables with DuckDB, an independent reader, and
checks them against lwarscope's own --format json of the same captures.

Usage: python3 tests/duckdb_parquet.py TABLES_DIR FLEET.json

TABLES_DIR is the --out of `lwarscope -r DIR --format parquet`, FLEET.json the
output of `lwarscope -r DIR --format json -z io,stat,1` (one document, one
element per capture, with the 1 s intervals the intervals table holds by
default). Exits 1 with the differences on standard error; run by
tests/report/parquet.rs. DuckDB missing is an error, never a skip.
"""

import json
import sys

import duckdb  # noqa: E402  (an ImportError must fail the test)


def main() -> int:
    tables, fleet_json = sys.argv[1], sys.argv[2]
    with open(fleet_json, encoding="utf-8") as f:
        fleet = json.load(f)
    db = duckdb.connect()
    sessions = f"read_parquet('{tables}/sessions/*.parquet')"
    findings = f"read_parquet('{tables}/findings/*.parquet')"
    intervals = f"read_parquet('{tables}/intervals/*.parquet')"
    problems = []

    def rows(sql, *params):
        return db.execute(sql, list(params)).fetchall()

    captures = [c for c in fleet["captures"] if "error" not in c]
    in_tables = [r[0] for r in rows(f"SELECT DISTINCT capture FROM {sessions} ORDER BY 1")]
    with_sessions = sorted(
        c["capture"]["files"][0] for c in captures if c["summary"]["sessions"]
    )
    if in_tables != with_sessions:
        problems.append(f"captures in sessions: {in_tables} != {with_sessions}")

    total_sessions = total_findings = total_intervals = 0
    for c in captures:
        name = c["capture"]["files"][0]
        summary = c["summary"]
        want = []

        def r6(x):
            return None if x is None else round(x, 6)

        for s in summary["sessions"]:
            player = s.get("player") or {}
            for d in ("c2s", "s2c"):
                x = s[d]
                loss = x.get("loss")
                ack = x.get("ack_delay") or {}
                want.append(
                    (
                        s["session"],
                        s["protocol"],
                        s["client"],
                        s["server"],
                        d,
                        player.get("id"),
                        player.get("name"),
                        s["state"],
                        x["packets"],
                        x["bytes"],
                        x["first_sends"],
                        x.get("repeats", 0),
                        x["resends"],
                        x["reordered"],
                        x["gaps"],
                        x["lost"],
                        x["unacked"],
                        loss["lost"] if loss else None,
                        loss["expected"] if loss else None,
                        r6(x.get("loss_rate")),
                        r6(ack.get("p50_ms")),
                        r6(ack.get("p95_ms")),
                        r6(ack.get("max_ms")),
                        ack.get("samples", 0),
                        r6(x["jitter_ms"]),
                    )
                )
        got = [
            tuple(r6(v) if isinstance(v, float) else v for v in r)
            for r in rows(
                f"""SELECT session, protocol, client, server, direction, player, player_name,
                           state, packets, bytes, first_sends, repeats, resends, reordered,
                           gaps, lost, unacked, loss_lost, loss_expected, loss,
                           ack_delay_p50_ms, ack_delay_p95_ms, ack_delay_max_ms,
                           ack_delay_samples, jitter_ms
                    FROM {sessions} WHERE capture = ?""",
                name,
            )
        ]
        key = lambda r: tuple("" if v is None else str(v) for v in r)  # noqa: E731
        got, want = sorted(got, key=key), sorted(want, key=key)
        if got != want:
            diff = [(a, b) for a, b in zip(got, want) if a != b][:1] or [(got, want)]
            problems.append(f"{name}: sessions differ:\n  parquet {diff[0][0]}\n  json    {diff[0][1]}")
        total_sessions += len(want)

        want_f = [
            (
                f["kind"],
                f["rule"],
                f["severity"],
                f["frame"],
                f["session"],
                f["dir"],
                f["seqno"],
                f["detail"],
                round(f["time"] * 1e6),
            )
            for f in c["findings"]
        ]
        got_f = rows(
            f"""SELECT kind, rule, severity, frame, session, direction, seqno, detail,
                       epoch_us(time)
                FROM {findings} WHERE capture = ?""",
            name,
        )
        # JSON's times are f64 seconds: a microsecond either way is its rounding.
        def close(a, b):
            return a[:-1] == b[:-1] and abs(a[-1] - b[-1]) <= 1

        if len(got_f) != len(want_f) or not all(map(close, got_f, want_f)):
            diff = next(
                (i for i, (a, b) in enumerate(zip(got_f, want_f)) if not close(a, b)),
                min(len(got_f), len(want_f)),
            )
            problems.append(
                f"{name}: findings differ ({len(got_f)} rows, json {len(want_f)}), "
                f"first at row {diff}: {got_f[diff:diff + 1]} != {want_f[diff:diff + 1]}"
            )
        total_findings += len(want_f)

        (io,) = [x for x in c["statistics"] if x["type"] == "io_stat"]
        want_i = []
        for i, iv in enumerate(io["intervals"]):
            for d in ("c2s", "s2c"):
                x = iv[d]
                want_i.append(
                    (
                        i,
                        round(iv["start"], 6),
                        round(iv["end"], 6),
                        d,
                        x["packets"],
                        x["bytes"],
                        x["lost"],
                        x["resends"],
                        x["ack_delay_samples"],
                        None if x["ack_delay_max_ms"] is None else round(x["ack_delay_max_ms"], 6),
                    )
                )
        got_i = [
            (r[0], round(r[1], 6), round(r[2], 6), *r[3:9],
             None if r[9] is None else round(r[9], 6))
            for r in rows(
                f"""SELECT interval, start_s, end_s, direction, packets, bytes, lost, resends,
                           ack_delay_samples, ack_delay_max_ms
                    FROM {intervals} WHERE capture = ? ORDER BY interval, direction""",
                name,
            )
        ]
        if got_i != want_i:
            problems.append(f"{name}: intervals differ:\n  parquet {got_i[:4]}\n  json    {want_i[:4]}")
        total_intervals += len(want_i)

        counts = dict(
            rows(f"SELECT kind, sum(numbers) FROM {findings} WHERE capture = ? GROUP BY kind", name)
        )
        if counts != summary["findings"]:
            problems.append(f"{name}: findings by kind {counts} != summary {summary['findings']}")

    (n_sessions,) = rows(f"SELECT count(*) FROM {sessions}")[0]
    (n_findings,) = rows(f"SELECT count(*) FROM {findings}")[0]
    (n_intervals,) = rows(f"SELECT count(*) FROM {intervals}")[0]
    if (n_sessions, n_findings, n_intervals) != (total_sessions, total_findings, total_intervals):
        problems.append(
            f"row counts: sessions {n_sessions} != {total_sessions}, "
            f"findings {n_findings} != {total_findings}, "
            f"intervals {n_intervals} != {total_intervals}"
        )

    # docs/parquet.md's query: sessions ranked by loss across the folder.
    ranked = rows(
        f"""SELECT capture, protocol, client, server, direction, loss, loss_lost, packets
            FROM {sessions}
            WHERE loss IS NOT NULL
            ORDER BY loss DESC, capture, client, direction
            LIMIT 5"""
    )
    if not ranked or any(r[5] is None for r in ranked):
        problems.append(f"the ranking query: {ranked}")

    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    print(
        f"duckdb {duckdb.__version__}: {len(captures)} captures, "
        f"{n_sessions} sessions rows, {n_findings} findings rows, "
        f"{n_intervals} intervals rows agree with --format json"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
