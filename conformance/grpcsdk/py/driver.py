"""gRPC SDK conformance driver for rocketmq-python-client (conformance/grpcsdk).

    python driver.py ENDPOINT PREFIX name:timeoutSeconds...

Runs every named scenario on its own thread against the proxy's gRPC port
ENDPOINT and prints one line per scenario:

    PASS name seconds[: detail]
    FAIL name seconds: reason

Topic PREFIX_name and group PREFIX_name_g are created by the Go harness with
the message type and group settings the scenario needs. Every wait is a
receive or a condition with a deadline.
"""

import os
import sys
import threading
import time
import traceback

from rocketmq import (ClientConfiguration, ConsumeResult, Credentials,
                      FilterExpression, Message, MessageListener, Producer,
                      PushConsumer, SimpleConsumer, TransactionChecker,
                      TransactionResolution)
from rocketmq.grpc_protocol import FilterType

ENDPOINT = sys.argv[1]
PREFIX = sys.argv[2]
OUT = threading.Lock()
SHARED_COUNT = int(os.environ.get("SHARED_COUNT", "20"))


class Check(Exception):
    pass


def require(ok, why):
    if not ok:
        raise Check(why)


def now_ms():
    return int(time.time() * 1000)


def conf():
    return ClientConfiguration(ENDPOINT, Credentials(), request_timeout=10)


def started(make):
    """Starts a client, up to three times: start-up (route, then settings
    over the telemetry stream) times out on a loaded machine, and what the
    scenario checks comes after it."""
    last = None
    for _ in range(3):
        c = make()
        try:
            c.startup()
            return c
        except Exception as e:
            last = e
            try:
                c.shutdown()
            except Exception:
                pass
    raise last


def producer(topic, checker=None):
    return started(lambda: Producer(conf(), (topic,), checker))


def simple(topic, group, expr=None):
    return started(lambda: SimpleConsumer(conf(), group, {topic: expr or FilterExpression()}, await_duration=5))


def msg(topic, body, tag=None, group=None, delivery=None, props=None, keys=True):
    m = Message()
    m.topic = topic
    m.body = body.encode()
    if keys:
        m.keys = body
    if tag:
        m.tag = tag
    if group:
        m.message_group = group
    if delivery:
        # compat: rocketmq-python-client 5.1.2 puts delivery_timestamp into
        # the protobuf Timestamp's seconds as is (its doc says ms): give it seconds.
        m.delivery_timestamp = delivery // 1000
    for k, v in (props or {}).items():
        m.add_property(k, v)
    return m


def body(m):
    return m.body.decode()


def recv(c, n, invisible):
    """c.receive, again after a pause when the proxy has not got the
    consumer's settings yet: rocketmq-python-client 5.1.2's startup returns
    before its settings went over the telemetry stream, and Apache's proxy
    answers a receive before them with INTERNAL_ERROR (a NullPointerException)."""
    for i in range(10):
        try:
            return c.receive(n, invisible) or []
        except Exception as e:
            if "settings" not in str(e) or i == 9:
                raise
            threading.Event().wait(0.5)
    return []


def receive_all(c, want, deadline, ack=True, invisible=20):
    got, seen = [], set()
    while len(seen) < want and now_ms() < deadline:
        for m in recv(c, 16, invisible):
            got.append(m)
            seen.add(body(m))
            if ack:
                c.ack(m)
    return got


def receive_for(c, window_ms):
    got = []
    end = now_ms() + window_ms
    while now_ms() < end:
        for m in recv(c, 16, 20):
            got.append(m)
            c.ack(m)
    return got


def wait_until(cond, deadline):
    ev = threading.Event()
    while not cond() and now_ms() < deadline:
        ev.wait(0.2)
    return cond()


def closing(*clients):
    class _C:
        def __enter__(self):
            return clients

        def __exit__(self, *a):
            for c in clients:
                try:
                    c.shutdown()
                except Exception:
                    pass
    return _C()


def send_normal(topic, group, deadline):
    n = 10
    p, c = producer(topic), simple(topic, group)
    with closing(p, c):
        sent = set()
        for i in range(n):
            r = p.send(msg(topic, f"{topic}-{i}"))
            require(r.message_id, f"send {i} has no message id")
            sent.add(f"{topic}-{i}")
        got = {body(m) for m in receive_all(c, n, deadline)}
        require(got == sent, f"received {len(got)}/{n}")
    return f"sent and received {n}"


def send_fifo(topic, group, deadline):
    n = 10
    p, c = producer(topic), simple(topic, group)
    with closing(p, c):
        for i in range(n):
            p.send(msg(topic, str(i), group="mg", keys=False))
        order = []
        while len(order) < n and now_ms() < deadline:
            for m in recv(c, 16, 20):
                require(m.message_group == "mg", f"message group lost: {m.message_group}")
                order.append(body(m))
                c.ack(m)
    require(order == [str(i) for i in range(n)], f"order {order}")
    return f"in order {len(order)}"


def send_delay(topic, group, deadline):
    p, c = producer(topic), simple(topic, group)
    with closing(p, c):
        at = now_ms() + 4000
        p.send(msg(topic, "delayed", delivery=at))
        got = receive_all(c, 1, deadline)
        t = now_ms()
        require(len(got) == 1, "delayed message not received")
        require(t >= at - 1000, f"delivered {at - t} ms early")
    return f"delivered {t - at} ms after its time"


class Resolve(TransactionChecker):
    def __init__(self, fn):
        self.fn = fn
        self.calls = 0

    def check(self, message):
        self.calls += 1
        return self.fn(message)


def send_transaction(topic, group, deadline):
    p = producer(topic, Resolve(lambda m: TransactionResolution.ROLLBACK))
    c = simple(topic, group)
    with closing(p, c):
        t1 = p.begin_transaction()
        p.send(msg(topic, "commit"), t1)
        t2 = p.begin_transaction()
        p.send(msg(topic, "rollback"), t2)
        t2.rollback()
        t1.commit()
        got = {body(m) for m in receive_all(c, 1, deadline)}
        require("commit" in got, f"committed message not received: {got}")
        got |= {body(m) for m in receive_for(c, 4000)}
        require("rollback" not in got, "rolled-back message delivered")
    return "commit delivered, rollback not"


def simple_ack(topic, group, deadline):
    n = 5
    p, c = producer(topic), simple(topic, group)
    with closing(p, c):
        for i in range(n):
            p.send(msg(topic, f"ack-{i}"))
        got = {body(m) for m in receive_all(c, n, deadline, invisible=15)}
        require(len(got) == n, f"received {len(got)}/{n}")
        again = receive_for(c, 20000)
        require(not again, f"acked messages delivered again: {[body(m) for m in again]}")
    return f"{n} acked, none redelivered"


def first(c, deadline, invisible):
    while now_ms() < deadline:
        ms = recv(c, 1, invisible)
        if ms:
            return ms[0]
    return None


def simple_change_invisible(topic, group, deadline):
    p, c = producer(topic), simple(topic, group)
    with closing(p, c):
        mid = str(p.send(msg(topic, "civ")).message_id)
        m = first(c, deadline, 60)
        require(m is not None, "not received")
        t0 = now_ms()
        c.change_invisible_duration(m, 2)
        again = first(c, deadline, 60)
        waited = now_ms() - t0
        require(again is not None, "not redelivered after the invisible time was changed to 2 s")
        require(str(again.message_id) == mid, f"another message came back: {again.message_id}")
        require(waited < 30000, f"came back after {waited} ms: the 60 s invisible time held")
        require(again.delivery_attempt == 2, f"delivery attempt {again.delivery_attempt}")
        c.ack(again)
    return f"back after {waited} ms, attempt 2"


def simple_redeliver(topic, group, deadline):
    p, c = producer(topic), simple(topic, group)
    with closing(p, c):
        mid = str(p.send(msg(topic, "redeliver")).message_id)
        attempts, first_at, back = [], 0, 0
        while len(attempts) < 2 and now_ms() < deadline:
            for m in recv(c, 1, 3):
                require(str(m.message_id) == mid, f"unexpected message {m.message_id}")
                attempts.append(m.delivery_attempt)
                if len(attempts) == 1:
                    first_at = now_ms()
                else:
                    back = now_ms() - first_at
                    c.ack(m)
        require(attempts == [1, 2], f"delivery attempts {attempts}")
        require(back >= 2000, f"came back after {back} ms, before its 3 s invisible time")
    return f"back after {back} ms, attempts {attempts}"


class Listener(MessageListener):
    def __init__(self, fn):
        self.fn = fn

    def consume(self, message):
        return self.fn(message)


def push(topic, group, fn):
    return started(lambda: PushConsumer(conf(), group, Listener(fn), {topic: FilterExpression()}))


def push_retry_dlq(topic, group, deadline):
    seen = []
    p = producer(topic)
    pc = push(topic, group, lambda m: (seen.append(m.delivery_attempt), ConsumeResult.FAILURE)[1])
    with closing(p, pc):
        p.send(msg(topic, "dlq"))
        require(wait_until(lambda: len(seen) >= 3, deadline), f"deliveries {seen} before the deadline")
        dlq = "%DLQ%" + group
        d, last, got = None, None, []
        while not got and now_ms() < deadline:
            # The DLQ topic has a route once the broker moved the message there.
            try:
                if d is None:
                    d = simple(dlq, group + "_dlq")
                got = receive_all(d, 1, deadline)
            except Exception as e:
                last = e
                threading.Event().wait(0.5)
        with closing(*([d] if d else [])):
            require(got, f"nothing in {dlq} after deliveries {seen}: {last}")
            require(len(seen) == 3, f"deliveries before the DLQ: {seen}")
            require(body(got[0]) == "dlq", f"DLQ holds {body(got[0])}")
    return f"3 deliveries {seen}, then {dlq}"


def fifo_redeliver(topic, group, deadline):
    n = 6
    log, tries, done = [], {}, []
    p = producer(topic)
    for i in range(n):
        p.send(msg(topic, str(i), group="og", keys=False))

    def consume(m):
        b = body(m)
        tries[b] = tries.get(b, 0) + 1
        log.append(b)
        if b == "2" and tries[b] == 1:
            return ConsumeResult.FAILURE
        done.append(b)
        return ConsumeResult.SUCCESS

    pc = push(topic, group, consume)
    with closing(p, pc):
        wait_until(lambda: len(done) >= n, deadline)
    require(fifo_order(log, n), f"consumed {log}, want 0..5 in order with 2 delivered again before 3")
    return f"order {log}"


def fifo_order(log, n):
    """FIFO under redelivery: never back to an earlier message (a redelivery
    repeats the current one), every message, and the failed "2" came again."""
    vals = [int(b) for b in log]
    return (all(a <= b for a, b in zip(vals, vals[1:])) and set(vals) == set(range(n))
            and vals.count(2) >= 2)


def filter_tag(topic, group, deadline):
    p = producer(topic)
    c = simple(topic, group, FilterExpression("A||C", FilterType.TAG))
    with closing(p, c):
        for i in range(9):
            tag = "ABC"[i % 3]
            p.send(msg(topic, f"{tag}{i}", tag=tag, keys=False))
        got = {body(m) for m in receive_all(c, 6, deadline)}
        got |= {body(m) for m in receive_for(c, 3000)}
        require(got == {"A0", "C2", "A3", "C5", "A6", "C8"}, f"received {sorted(got)}")
    return f"tags A||C: {len(got)}"


def filter_sql(topic, group, deadline):
    p = producer(topic)
    c = simple(topic, group, FilterExpression("n >= 5 AND color = 'red'", FilterType.SQL))
    with closing(p, c):
        for i in range(10):
            p.send(msg(topic, f"s{i}", props={"n": str(i), "color": "red" if i % 2 == 0 else "blue"}, keys=False))
        got = {body(m) for m in receive_all(c, 2, deadline)}
        got |= {body(m) for m in receive_for(c, 3000)}
        require(got == {"s6", "s8"}, f"received {sorted(got)}")
    return f"SQL92 filter: {sorted(got)}"


def transaction_check(topic, group, deadline):
    checker = Resolve(lambda m: TransactionResolution.COMMIT if body(m) == "checked" else TransactionResolution.ROLLBACK)
    p, c = producer(topic, checker), simple(topic, group)
    with closing(p, c):
        t = p.begin_transaction()
        p.send(msg(topic, "checked"), t)
        got = {body(m) for m in receive_all(c, 1, deadline)}
        require("checked" in got, f"not committed by the check-back ({checker.calls} checks)")
        require(checker.calls >= 1, "delivered without a check")
    return f"committed by check-back after {checker.calls} check(s)"


def shared_4x(topic, group, deadline):
    got, deliveries = set(), []

    def consume(m):
        got.add(body(m))
        deliveries.append(1)
        return ConsumeResult.SUCCESS

    pc = push(topic, group, consume)
    p = producer(topic)
    with closing(pc, p):
        for i in range(SHARED_COUNT):
            p.send(msg(topic, f"shared-{i}"))
        end = min(deadline, now_ms() + 15000)
        wait_until(lambda: False, end)
    return f"grpc got={len(got)} deliveries={len(deliveries)} sent={SHARED_COUNT}"


def run(name, secs):
    t0 = time.time()
    fn = globals().get(name)
    try:
        if fn is None or name.startswith("_"):
            raise Check("unknown scenario")
        detail = fn(f"{PREFIX}_{name}", f"{PREFIX}_{name}_g", now_ms() + secs * 1000)
        line = f"PASS {name} {time.time() - t0:.1f}" + (f": {detail}" if detail else "")
    except Check as e:
        line = f"FAIL {name} {time.time() - t0:.1f}: {e}"
    except Exception as e:  # a client error is the scenario's failure
        traceback.print_exc(file=sys.stderr)
        line = f"FAIL {name} {time.time() - t0:.1f}: {type(e).__name__}: {e}"
    with OUT:
        print(" ".join(line.split()), flush=True)


def main():
    threads = []
    for a in sys.argv[3:]:
        name, _, secs = a.partition(":")
        th = threading.Thread(target=run, args=(name, int(secs or 60)), daemon=True)
        th.start()
        threads.append(th)
    for th in threads:
        th.join()
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
