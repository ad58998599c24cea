#!/usr/bin/env python3
"""bench-scale-report.py: renders scripts/bench-scale.sh's metrics.tsv
(curve, x, side, key, value per line) as a markdown report, one table per
curve (ours, Java, ours/Java at each size), and one SVG plot per curve
(small multiples, one panel per headline metric, Java and ours as lines).
Standard library only; the SVG is written by hand.

    bench-scale-report.py metrics.tsv --out bench/results-scale.md --plots bench
"""
import argparse
import html
import math
import os
import sys

CURVES = {
    "topics": {
        "title": "Topics (x 8 queues) in topics.json",
        "x": "topics",
        "rows": [
            ("reg_body_kb", "REGISTER_BROKER body, KiB", True),
            ("reg_reply_ms", "name server reply to that registration, ms", True),
            ("reg_done_ms", "exec -> that registration answered, ms", True),
            ("start_ms", "broker start: exec -> first SEND_OK, ms", True),
            ("route_p50_ms", "route query p50, ms", True),
            ("route_p99_ms", "route query p99, ms", True),
            ("rss_mb", "broker RSS, MiB", True),
            ("java_heap_mb", "Java heap used after a full GC, MiB", False),
            ("create_p50_ms", "UPDATE_AND_CREATE_TOPIC p50 (rewrites topics.json), ms", True),
            ("create_max_ms", "UPDATE_AND_CREATE_TOPIC max, ms", True),
            ("persist_write_p50_ms", "topics.json write p50 (inotify), ms", True),
            ("topics_json_kb", "topics.json, KiB", True),
            ("reg_count", "registrations seen (start + 20 creates)", True),
            ("reg_max_kb", "largest registration body, KiB", True),
            ("route_missing", "route queries not answered SUCCESS", True),
        ],
        "plot": ["reg_body_kb", "reg_reply_ms", "start_ms", "route_p99_ms", "rss_mb", "create_p50_ms"],
    },
    "idle": {
        "title": "Idle clients heartbeating every 5 s",
        "x": "clients",
        "rows": [
            ("rss_per_client_kb", "broker RSS per client, KiB", True),
            ("rss_mb", "broker RSS, MiB", True),
            ("cpu_us_per_hb", "broker CPU per heartbeat, us", True),
            ("net_cpu_us_per_hb", "same, minus the idle broker's CPU, us", True),
            ("hb_p99_ms", "heartbeat p99, ms", True),
            ("ramp_ms", "ramp: all connected + first heartbeat, ms", True),
            ("threads", "broker threads", True),
            ("hb_failed", "heartbeats failed", True),
        ],
        "plot": ["rss_per_client_kb", "cpu_us_per_hb", "hb_p99_ms", "ramp_ms"],
    },
    "hold": {
        "title": "Held long-polling pulls",
        "x": "pulls",
        "rows": [
            ("rss_per_pull_kb", "broker RSS per held pull, KiB", True),
            ("rss_mb", "broker RSS with the pulls held, MiB", True),
            ("wake_p50_ms", "wake latency p50 (send -> pull reply), ms", True),
            ("wake_p99_ms", "wake latency p99, ms", True),
            ("wake_max_ms", "wake latency max, ms", True),
            ("woken", "pulls woken with the message", True),
            ("not_held", "pulls answered early or never", True),
        ],
        "plot": ["rss_per_pull_kb", "wake_p50_ms", "wake_p99_ms"],
    },
    "offsets": {
        "title": "Consumer groups x 8 queues committing offsets every second",
        "x": "groups",
        "rows": [
            ("cpu_us_per_commit", "broker CPU per UPDATE_CONSUMER_OFFSET, us", True),
            ("net_cpu_us_per_commit", "same, minus the idle broker's CPU, us", True),
            ("commit_p99_ms", "commit p99, ms", True),
            ("commits", "commits in the window", True),
            ("commit_failed", "commits failed", True),
            ("persist_write_p50_ms", "consumerOffset.json write p50 (inotify), ms", True),
            ("persist_write_max_ms", "consumerOffset.json write max, ms", True),
            ("persists_seen", "persists seen in the window", True),
            ("offsets_json_kb", "consumerOffset.json, KiB", True),
            ("create_groups_ms", "creating the groups one by one, ms", True),
            ("rss_mb", "broker RSS, MiB", True),
        ],
        "plot": ["cpu_us_per_commit", "persist_write_p50_ms"],
    },
    "restart": {
        "title": "Restart after kill -9 with a filled commit log",
        "x": "GiB",
        "rows": [
            ("restart_ms", "restart: exec -> first SEND_OK, ms", True),
            ("rss_mb", "broker RSS after the restart, MiB", True),
            ("data_gib", "messages in the commit log, GiB", True),
            ("segments_gib", "segment files, GiB (apparent size, preallocated ones included)", True),
            ("disk_mib", "commit log on disk, MiB (sparse)", True),
            ("fill_s", "fill time for this step, s", True),
        ],
        "plot": ["restart_ms", "rss_mb"],
    },
    "twogroup": {
        "title": "Two broker sets x 3 replicas, kill -9 of set A's master",
        "x": "window",
        "xlabels": {"1": "before", "2": "during", "3": "after"},
        "rows": [
            ("b_tps", "set B send TPS (SEND_OK/s)", True),
            ("b_tps_vs_before", "set B TPS / its TPS before", True),
            ("b_p50_ms", "set B send p50, ms", True),
            ("b_p99_ms", "set B send p99, ms", True),
            ("b_p99_vs_before", "set B p99 / its p99 before", True),
            ("b_max_ms", "set B send max, ms", True),
            ("b_failed", "set B failed sends", True),
            ("b_cpu_pct", "set B brokers' CPU, % of a core", True),
            ("a_tps", "set A send TPS (SEND_OK/s)", True),
            ("a_p99_ms", "set A send p99, ms", True),
            ("a_failed", "set A failed sends (the Go client spins on the dead master)", True),
            ("a_cpu_pct", "set A brokers' CPU, % of a core", True),
            ("ctl_cpu_pct", "controllers' CPU, % of a core", True),
            ("client_cpu_pct", "client process CPU (both loads), % of a core", True),
            ("a_server_failover_ms", "kill -> new A master named and answering, ms", True),
            ("a_client_recovery_ms", "kill -> A's load acknowledged again (route refresh), ms", True),
            ("window_s", "window length, s", True),
        ],
        "plot": ["b_tps", "b_p99_ms", "b_cpu_pct", "a_tps", "a_p99_ms", "a_failed"],
    },
}

JAVA_COLOR, OURS_COLOR = "#d9822b", "#2b6cd9"


def read_metrics(path):
    data, loads = {}, {}
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 5:
                continue
            curve, x, side, key, value = parts
            if curve == "load":
                loads[x] = value
                continue
            data.setdefault(curve, {}).setdefault((key, x), {})[side] = value
    return data, loads


def num(v):
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def fmt(v):
    f = num(v)
    if f is None:
        return "n/a" if v in (None, "", "null", "nan") else str(v)
    if f == int(f) and abs(f) >= 10:
        return f"{int(f):,}"
    if abs(f) >= 100:
        return f"{f:,.0f}"
    if abs(f) >= 10:
        return f"{f:.1f}"
    return f"{f:.2f}".rstrip("0").rstrip(".") if f else "0"


def ratio(ours, java):
    o, j = num(ours), num(java)
    if o is None or j is None or j == 0:
        return "n/a"
    r = o / j
    return f"{r:.2f}" if r >= 0.1 else f"{r:.3f}"


def xs_of(curve_data):
    xs = sorted({x for (_, x) in curve_data}, key=lambda s: float(s))
    return xs


def label_x(x, spec=None):
    if spec and x in spec.get("xlabels", {}):
        return spec["xlabels"][x]
    f = float(x)
    if f >= 1000 and f % 1000 == 0:
        return f"{int(f // 1000)}k"
    return x


def table(name, spec, cd):
    xs = xs_of(cd)
    out = [f"### {spec['title']}", ""]
    head = "| metric |" + "".join(f" {label_x(x, spec)} Java | {label_x(x, spec)} ours | ours/Java |" for x in xs)
    out.append(head)
    out.append("|---|" + "---:|---:|---:|" * len(xs))
    for key, label, _ in spec["rows"]:
        if not any((key, x) in cd for x in xs):
            continue
        row = f"| {label} |"
        for x in xs:
            v = cd.get((key, x), {})
            row += f" {fmt(v.get('java'))} | {fmt(v.get('ours'))} | {ratio(v.get('ours'), v.get('java'))} |"
        out.append(row)
    out.append("")
    out.append(f"![{spec['title']}](scale-{name}.svg)")
    out.append("")
    return out


def nice_max(v):
    if v <= 0:
        return 1.0
    e = 10 ** math.floor(math.log10(v))
    for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if m * e >= v:
            return m * e
    return 10 * e


def svg_plot(name, spec, cd, path):
    keys = [k for k in spec["plot"] if any((k, x) in cd for x in xs_of(cd))]
    if not keys:
        return False
    labels = {k: l for k, l, _ in spec["rows"]}
    xs = xs_of(cd)
    pw, ph, cols = 300, 190, min(3, len(keys))
    rows = (len(keys) + cols - 1) // cols
    W, H = cols * pw + 20, rows * ph + 70
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
         'font-family="sans-serif" font-size="11">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="10" y="18" font-size="14" font-weight="bold">{html.escape(spec["title"])}: ours vs Java 5.3.3</text>',
         f'<line x1="{W - 190}" y1="14" x2="{W - 170}" y2="14" stroke="{JAVA_COLOR}" stroke-width="2"/>'
         f'<text x="{W - 165}" y="18">Java</text>',
         f'<line x1="{W - 120}" y1="14" x2="{W - 100}" y2="14" stroke="{OURS_COLOR}" stroke-width="2"/>'
         f'<text x="{W - 95}" y="18">rocketgo</text>']
    for i, key in enumerate(keys):
        ox, oy = 10 + (i % cols) * pw, 30 + (i // cols) * ph
        left, top, w, h = ox + 45, oy + 22, pw - 65, ph - 60
        vals = [num(cd.get((key, x), {}).get(side)) for x in xs for side in ("java", "ours")]
        vmax = nice_max(max([v for v in vals if v is not None] or [1]))
        title = labels.get(key, key).split(" (")[0]  # the panel's width: the table has the full label
        s.append(f'<text x="{ox + 5}" y="{oy + 12}" font-weight="bold">{html.escape(title)}</text>')
        s.append(f'<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="none" stroke="#999"/>')
        for t in range(5):
            v = vmax * t / 4
            y = top + h - h * t / 4
            s.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + w}" y2="{y:.1f}" stroke="#eee"/>')
            s.append(f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end">{fmt(v)}</text>')

        def px(j):
            return left + (w * (j + 0.5) / len(xs))

        for j, x in enumerate(xs):
            s.append(f'<text x="{px(j):.1f}" y="{top + h + 14}" text-anchor="middle">{label_x(x, spec)}</text>')
        s.append(f'<text x="{left + w / 2}" y="{top + h + 28}" text-anchor="middle" fill="#555">{spec["x"]}</text>')
        for side, color in (("java", JAVA_COLOR), ("ours", OURS_COLOR)):
            pts = []
            for j, x in enumerate(xs):
                v = num(cd.get((key, x), {}).get(side))
                if v is not None:
                    pts.append((px(j), top + h - h * v / vmax))
            if len(pts) > 1:
                s.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="'
                         + " ".join(f"{a:.1f},{b:.1f}" for a, b in pts) + '"/>')
            for a, b in pts:
                s.append(f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3" fill="{color}"/>')
    s.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(s) + "\n")
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("metrics")
    ap.add_argument("--out", required=True)
    ap.add_argument("--plots", required=True)
    ap.add_argument("--started", default="")
    ap.add_argument("--minutes", default="")
    ap.add_argument("--load-start", default="")
    ap.add_argument("--rev", default="")
    ap.add_argument("--quick", default="")
    a = ap.parse_args()
    data, loads = read_metrics(a.metrics)
    out = [
        "# Cost curves: rocketgo vs the Java 5.3.3 name server + broker",
        "",
        f"`make bench-scale` (scripts/bench-scale.sh) at {a.rev}, started {a.started}, {a.minutes} minutes"
        + (", reduced sizes (QUICK=1)" if a.quick else "") + ".",
        f"Load average (1/5/15 min) at the start: {a.load_start}; after each curve: "
        + ", ".join(f"{c} {v}" for c, v in loads.items()) + ".",
        "Each point runs Java first, then ours, on fresh servers on 127.0.0.1, under `nice -n 19` on a shared 2-core",
        "machine: absolute CPU and latency figures are noisy, the ratios (same run) are what to read.",
        "Java: the 5.3.3 jars from Maven, G1, -Xms1g -Xmx1g (its RSS mostly shows the heap it has touched,",
        "not its live data: see the heap row). Ours: cmd/mqnamesrv + cmd/mqbroker. Same broker.conf for both.",
        "",
    ]
    for name, spec in CURVES.items():
        cd = data.get(name)
        if not cd:
            continue
        out += table(name, spec, cd)
        os.makedirs(a.plots, exist_ok=True)
        svg_plot(name, spec, cd, os.path.join(a.plots, f"scale-{name}.svg"))
    with open(a.out, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    sys.exit(main())
