#!/usr/bin/env python3
"""bench-tail-report.py: writes bench/results-tail.md from the metrics TSV of
scripts/bench-tail.sh (side, pair, key, value per line). Standard library
only. Usage: bench-tail-report.py METRICS OUT REV STARTED LOAD_START LOAD_END KNOBS
"""
import statistics
import sys
from collections import defaultdict

ROWS = [  # (prefix pattern, label)
    ("single_send_{r}", "single broker, open-loop sync sends, {r} msg/s"),
    ("single_e2e_{r}", "single broker, end to end (send → held pull reply), {r} msg/s"),
    ("syncpair_send_{r}", "SYNC_MASTER pair (inSyncReplicas=2), open-loop sync sends, {r} msg/s"),
    ("asyncpair_lag_{r}", "ASYNC_MASTER replication lag (master SEND_OK → slave shows it), {r} msg/s"),
    ("asyncpair_send_{r}", "ASYNC_MASTER pair, master send latency during the lag step, {r} msg/s"),
]
STATS = ["p50", "p99", "p999", "max"]


def load(path):
    m = defaultdict(lambda: defaultdict(dict))  # m[side][key][pair] = value
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 4:
                continue
            side, pair, key, val = parts
            try:
                m[side][key][int(pair)] = float(val)
            except ValueError:
                pass
    return m


def med(m, side, key):
    vals = list(m.get(side, {}).get(key, {}).values())
    return statistics.median(vals) if vals else None


def each(m, side, key):
    d = m.get(side, {}).get(key, {})
    return " / ".join(fmt(d[p]) for p in sorted(d)) if d else "n/a"


def fmt(v):
    if v is None:
        return "n/a"
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "n/a"
    return f"{a / b:.2f}"


def main():
    metrics, out, rev, started, load_start, load_end, knobs = sys.argv[1:8]
    m = load(metrics)
    prefixes = []
    keys = set()
    for side in m:
        keys.update(m[side].keys())
    for pat, label in ROWS:
        head = pat.split("{r}")[0]
        rates = []
        for k in keys:
            if k.startswith(head) and k.endswith("_p50_ms"):
                r = k[len(head):-len("_p50_ms")]
                if r.isdigit():
                    rates.append(int(r))
        for r in sorted(rates):
            prefixes.append((f"{head}{r}", label.format(r=f"{r:,}")))
    lines = [
        "# The tail: rocketgo vs the Java 5.3.3 name server + broker",
        "",
        f"`make bench-tail` (scripts/bench-tail.sh) at {rev}, started {started}; {knobs}.",
        f"Load average (1/5/15 min) at the start {load_start}, at the end {load_end}. Sessions alternate",
        "Java, ours on fresh servers on 127.0.0.1 of one 2-core VM, load generator included; each cell is",
        "the median over the pairs, the per-pair figures follow in the second table. Latencies in ms;",
        "open-loop latency runs from each message's scheduled send time.",
        "",
        "| measurement | side | p50 | p99 | p99.9 | max | CPU µs/msg | load | steal % |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for prefix, label in prefixes:
        for side in ("ours", "java"):
            if side not in m:
                continue
            cells = [fmt(med(m, side, f"{prefix}_{s}_ms")) for s in STATS]
            cpu = fmt(med(m, side, f"{prefix}_cpu_us_per_msg"))
            ld = fmt(med(m, side, f"{prefix}_load"))
            st = fmt(med(m, side, f"{prefix}_steal_pct"))
            lines.append(f"| {label} | {side} | " + " | ".join(cells) + f" | {cpu} | {ld} | {st} |")
        if "ours" in m and "java" in m:
            cells = [ratio(med(m, "ours", f"{prefix}_{s}_ms"), med(m, "java", f"{prefix}_{s}_ms")) for s in STATS]
            cpu = ratio(med(m, "ours", f"{prefix}_cpu_us_per_msg"), med(m, "java", f"{prefix}_cpu_us_per_msg"))
            lines.append(f"| | ours/Java | " + " | ".join(cells) + f" | {cpu} | | |")
    lines += [
        "",
        "Per pair (pair 1 / pair 2 / ...):",
        "",
        "| measurement | side | p99 | p99.9 | max | load |",
        "|---|---|---|---|---|---|",
    ]
    for prefix, label in prefixes:
        for side in ("ours", "java"):
            if side not in m:
                continue
            lines.append(
                f"| {label} | {side} | {each(m, side, prefix + '_p99_ms')} | {each(m, side, prefix + '_p999_ms')} | "
                f"{each(m, side, prefix + '_max_ms')} | {each(m, side, prefix + '_load')} |"
            )
    errs = []
    for side in m:
        for k, d in m[side].items():
            if (k.endswith("_errors") or k.endswith("_missing")) and any(v for v in d.values()):
                errs.append(f"{side} {k}: {each(m, side, k)}")
    lines += ["", "Send errors / messages missing on the slave: " + ("; ".join(errs) if errs else "none") + "."]
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
