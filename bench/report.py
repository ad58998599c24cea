#!/usr/bin/env python3
"""Turns the raw metrics of scripts/bench-compare.sh into bench/results.md.

Input: a TSV of `side pair metric value` lines (side = ours | java | java8g |
java54; java8g is the Java 5.3.3 broker with the stock 8 GiB heap profile,
java54 the Java 5.4.0 broker with the main heap profile).
Output (stdout): a markdown table of medians over the pairs, ours vs Java
(per load generator; Java 5.4.0 in columns of its own when it ran), then
notes with the heap profiles and exact commands.
"""
import argparse
import math
import statistics
import sys

MQBENCH, GO, JAVA, APACHE = "mqbench", "go-client", "java-client", "apache-benchmark"


def metrics(a):
    """(metric, label, generator, unit, better) rows in table order."""
    rate = f"{int(a.client_rate):,}" if a.client_rate else "?"
    gb = a.restart_gb or "?"
    rows = [("send_tps_1", "Send TPS, 1 KiB, 1 producer (ASYNC_FLUSH)", MQBENCH, "msg/s", "high")]
    for t in (8, 64):
        rows.append((f"send_tps_{t}", f"Send TPS, {t} producers (ASYNC_FLUSH)", MQBENCH, "msg/s", "high"))
        rows.append((f"go_send_tps_{t}", f"Send TPS, {t} producers (ASYNC_FLUSH)", GO, "msg/s", "high"))
        rows.append((f"java_send_tps_{t}", f"Send TPS, {t} producers (ASYNC_FLUSH)", JAVA, "msg/s", "high"))
        rows.append((f"apache_send_tps_{t}", f"Send TPS, {t} producer threads (ASYNC_FLUSH, 9 s window)", APACHE, "msg/s", "high"))
    rows += [
        ("sync_tps_1", "SYNC_FLUSH TPS, 1 producer", MQBENCH, "msg/s", "high"),
        ("sync_tps_16", "SYNC_FLUSH TPS, 16 producers", MQBENCH, "msg/s", "high"),
        ("sync_tps_64", "SYNC_FLUSH TPS, 64 producers", MQBENCH, "msg/s", "high"),
        ("sync_tps_256", "SYNC_FLUSH TPS, 256 producers", MQBENCH, "msg/s", "high"),
        ("openloop_rate", "Open-loop rate (half of Java's peak)", MQBENCH, "msg/s", None),
        ("openloop_p99_ms", "Send p99 at that open-loop rate", MQBENCH, "ms", "low"),
        ("e2e_p99_ms_5k", "End-to-end p99 at 5k msg/s", MQBENCH, "ms", "low"),
        ("go_e2e_p99_ms", f"End-to-end p99 at {rate} msg/s", GO, "ms", "low"),
        ("go_e2e_send_tps", f"Rate the producer reached (target {rate} msg/s)", GO, "msg/s", None),
        ("go_e2e_ready_s", "Push consumer of a new group: start to first probe delivered", GO, "s", "low"),
        ("java_e2e_p99_ms", f"End-to-end p99 at {rate} msg/s", JAVA, "ms", "low"),
        ("java_e2e_send_tps", f"Rate the producer reached (target {rate} msg/s)", JAVA, "msg/s", None),
        ("java_e2e_ready_s", "Push consumer of a new group: start to first probe delivered", JAVA, "s", "low"),
        ("e2e_p99_ms_1ps", "End-to-end p99 at 1 msg/s", MQBENCH, "ms", "low"),
        ("consume_tps", "Consume catch-up TPS from a backlog", MQBENCH, "msg/s", "high"),
        ("go_consume_tps", "Consume catch-up TPS from a backlog", GO, "msg/s", "high"),
        ("java_consume_tps", "Consume catch-up TPS from a backlog", JAVA, "msg/s", "high"),
        ("apache_consume_tps", "Consume catch-up TPS from a backlog (best 9 s window)", APACHE, "msg/s", "high"),
        ("go_consume_first_ms", "Push consumer start() to first backlog message", GO, "ms", "low"),
        ("java_consume_first_ms", "Push consumer start() to first backlog message", JAVA, "ms", "low"),
        ("cpu_us_per_msg", "Broker CPU per message (64 producers)", MQBENCH, "µs", "low"),
        ("rss_idle_anon_kb", "Idle RSS, anonymous", "", "MiB", "low"),
        ("rss_idle_file_kb", "Idle RSS, file-backed", "", "MiB", "low"),
        ("rss_loaded_anon_kb", "Loaded RSS, anonymous", "", "MiB", "low"),
        ("rss_loaded_file_kb", "Loaded RSS, file-backed", "", "MiB", "low"),
        ("cold_start_ms", "Cold start to first SEND_OK", MQBENCH, "ms", "low"),
        ("restart_ms", f"Restart after kill -9 with a {gb} GiB CommitLog, to first SEND_OK", MQBENCH, "ms", "low"),
        ("restart_store_mib", "CommitLog size at that kill -9", "", "MiB", None),
    ]
    return rows


def load(path):
    data = {}
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 4:
                continue
            side, _pair, metric, value = parts
            try:
                v = float(value)
            except ValueError:
                continue
            if math.isnan(v):
                continue
            data.setdefault((side, metric), []).append(v)
    return data


def fmt(v, unit, metric):
    if v is None:
        return "n/a"
    if metric.endswith("_kb"):
        v = v / 1024
    if unit in ("msg/s",):
        return f"{v:,.0f}"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.2f}"


def ratio(o, j):
    return f"{o / j:.2f}" if o is not None and j not in (None, 0) else "n/a"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("metrics")
    for k in ("started", "step", "pairs", "size", "queues", "backlog", "segment", "rev", "java-heap",
              "heap-fitted", "heap-stock", "client-rate", "minutes", "client-warmup", "client-e2e-warmup", "restart-gb", "fill-size", "skipped",
              "load", "shared"):
        ap.add_argument("--" + k, default="")
    a = ap.parse_args()
    data = load(a.metrics)

    def med(side, metric):
        vals = data.get((side, metric))
        return statistics.median(vals) if vals else None

    heap_main = {"stock": "stock 8 GiB"}.get(a.java_heap, "fitted 1 GiB")
    stock_col = any(side == "java8g" for side, _ in data)
    j54_col = any(side == "java54" for side, _ in data)
    out = sys.stdout
    out.write("# rocketgo vs Apache RocketMQ 5.3.x" + (" and 5.4.0" if j54_col else "") + " broker\n\n")
    took = f", {a.minutes} min" if a.minutes else ""
    order = "Java 5.3.3/ours/Java 5.4.0 round(s)" if j54_col else "Java/ours pair(s)"
    out.write(f"Generated by `scripts/bench-compare.sh` (started {a.started}{took}, rev {a.rev}). "
              f"Medians over {a.pairs} alternating {order}; {a.step} per step, "
              f"{a.size}-byte bodies, {a.queues} queues, backlog {a.backlog} messages, "
              f"commit-log segments of {a.segment} bytes on both; "
              "everything on 127.0.0.1 of one machine. Load generators: `mqbench` (remoting, pre-encoded "
              "frames), the official Go client (`go-client`, bench/goclient) and the official Java client "
              f"5.3.3 (`java-client`, bench/java). Java broker heap: **{heap_main}**"
              + (" (the stock 8 GiB profile has its own column)" if stock_col else "") + "."
              + (f" Java 5.4.0 (its jars from Maven Central, the same JVM flags and {heap_main} heap) "
                 "runs after ours in every round; its columns are `Java 5.4.0`, `ours/Java 5.4.0` and "
                 "`5.4.0/5.3.3` (the two Java releases against each other)." if j54_col else ""))
    if a.load:
        out.write(f" Load average (1/5/15 min) at the start and the end: {a.load}.")
    if a.shared:
        out.write(" " + a.shared)
    if a.skipped:
        out.write(f" Skipped in this run: {a.skipped}.")
    out.write("\n\n")
    java_head = f"Java 5.3.3 ({heap_main})" if j54_col else f"Java ({heap_main})"
    head = f"| metric | generator | unit | ours | {java_head} | ours/Java |"
    rule = "|---|---|---|---:|---:|---:|"
    if j54_col:
        head += " Java 5.4.0 | ours/Java 5.4.0 | 5.4.0/5.3.3 |"
        rule += "---:|---:|---:|"
    if stock_col:
        head += " Java (stock 8 GiB) | ours/Java 8 GiB |"
        rule += "---:|---:|"
    out.write(head + " better |\n" + rule + "---|\n")
    for metric, label, gen, unit, better in metrics(a):
        o, j, s, j54 = med("ours", metric), med("java", metric), med("java8g", metric), med("java54", metric)
        if o is None and j is None and s is None and j54 is None:
            continue
        hint = {"high": "higher", "low": "lower", None: ""}[better]
        row = f"| {label} | {gen} | {unit} | {fmt(o, unit, metric)} | {fmt(j, unit, metric)} | {ratio(o, j)} |"
        if j54_col:
            row += f" {fmt(j54, unit, metric)} | {ratio(o, j54)} | {ratio(j54, j)} |"
        if stock_col:
            row += f" {fmt(s, unit, metric)} | {ratio(o, s)} |"
        out.write(row + f" {hint} |\n")

    out.write("\nNotes: producers in the TPS rows are synchronous senders (one request in flight each); "
              "mqbench spreads them over up to 4 (ASYNC) / 8 (SYNC) connections, the official clients share "
              "one producer instance (one connection per broker, as the clients do). The mqbench open-loop and "
              "end-to-end rows use async sends at a fixed rate with latency counted from the scheduled send "
              "time; for the clients' end-to-end rows a push consumer of a new topic starts, one-message mqbench "
              "probes go out until it has received one (the 'start to first probe' row: the Java 5.3.3 broker "
              "sometimes answers a new group's first pulls SUBSCRIPTION_NOT_LATEST until the client's next "
              "rebalance, ~20 s), then the client's producer sends synchronously from 32 threads paced to the "
              "rate after an uncounted paced warm-up of "
              f"{a.client_e2e_warmup or '?'} s (a fresh consumer JVM spends its first seconds compiling); latency "
              "is receive time minus the send time stamped in the body, for messages sent that warm-up plus "
              "2 s or more after the consumer's first message. Client send steps start with "
              f"{a.client_warmup or '?'} of uncounted sending (JIT, routes). Catch-up TPS of the clients is "
              "counted from the first to the last message received (start-up and rebalance excluded); "
              "mqbench's from its start. CPU and RSS are read from /proc of the broker process: ours is one "
              "process with the name server inside, Java's broker JVM excludes its name server. The restart "
              f"row fills the commit log to {a.restart_gb or '?'} GiB with {a.fill_size or '?'}-byte messages "
              "after the backlog rows, then kill -9 and times exec to the first SEND_OK of a one-message "
              "send straight to the broker. Raw per-run values are in the metrics.tsv of the run's work "
              "directory.\n\n")
    out.write("Java broker JVM flags (appended to javaserver.sh's `-server -XX:+UseG1GC "
              "-XX:-OmitStackTraceInFastThrow`):\n\n")
    out.write(f"- fitted: `{a.heap_fitted}`\n")
    out.write(f"- stock (runbroker.sh of 5.3.3 on JDK >= 9, GC log omitted): `{a.heap_stock}`\n\n")
    out.write("Commands per step (N = threads, T = topic, R = rate, S = step seconds):\n\n")
    w = (a.client_warmup or "").rstrip("s")
    out.write("```\n"
              f"mqbench produce -n NS -t T -mode sync -threads N -conns min(N,4) -size {a.size} -duration {a.step}\n"
              "mqbench consume -n NS -t BenchBacklog -g G -from first -count BACKLOG -duration 300s\n"
              f"goclient produce -n NS -t T -threads N -size {a.size} -duration S -warmup {a.client_warmup}\n"
              "goclient consume -n NS -t BenchBacklog -g G -count BACKLOG -duration 300s\n"
              f"goclient consume -n NS -t E2E -g G -warmup W+2s -idle 5s &  <probes>;  goclient produce -n NS -t E2E -threads 32 "
              f"-rate {a.client_rate} -size {a.size} -duration S -warmup Ws   (W = {a.client_e2e_warmup})\n"
              "java -Xms512m -Xmx512m -XX:+UseG1GC -Drocketmq.serialize.type=ROCKETMQ -cp <bench/java build> "
              f"io.rocketgo.bench.Bench produce ns=NS topic=T threads=N size={a.size} duration=S warmup={w}\n"
              "java ... io.rocketgo.bench.Bench consume ns=NS topic=BenchBacklog group=G count=BACKLOG duration=300\n"
              "java ... Bench consume ns=NS topic=E2E group=G warmup=W+2 idle=5 &  <probes>;  java ... Bench produce ns=NS topic=E2E "
              f"threads=32 rate={a.client_rate} size={a.size} duration=S warmup=W\n"
              f"mqbench produce -n NS -t BenchFill -mode async -threads 4 -conns 2 -inflight 4 -size {a.fill_size} "
              "-count <to the GiB target>; kill -9 <broker>; restart; first SEND_OK\n"
              "```\n")


if __name__ == "__main__":
    main()
