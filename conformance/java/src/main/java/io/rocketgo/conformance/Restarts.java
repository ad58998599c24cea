package io.rocketgo.conformance;

import static io.rocketgo.conformance.Scenarios.body;
import static io.rocketgo.conformance.Scenarios.check;
import static io.rocketgo.conformance.Scenarios.createTopic;
import static io.rocketgo.conformance.Scenarios.msg;
import static io.rocketgo.conformance.Scenarios.producer;
import static io.rocketgo.conformance.Scenarios.pushConsumer;
import static io.rocketgo.conformance.Scenarios.sendOk;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.client.producer.TransactionSendResult;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageAccessor;
import org.apache.rocketmq.common.message.MessageExt;

import io.rocketgo.conformance.Driver.Ctx;

/**
 * Delivery-time accuracy helpers and the restart scenarios
 * (conformance/scenario/table.go): set up clients, reach the restart point
 * (the harness announces when the broker will be stopped), send the pending
 * work before that instant, wait for the broker to come back, then check
 * nothing was lost, nothing came early, and report how late things were.
 */
final class Restarts {
    private Restarts() {
    }

    /** First consumption time (unix ms) of each body, plus every delivery. */
    static final class Clock {
        final Map<String, Long> first = new ConcurrentHashMap<>();
        final Scenarios.Bodies got = new Scenarios.Bodies();

        MessageListenerConcurrently listener() {
            return (msgs, ctx) -> {
                long now = System.currentTimeMillis();
                for (MessageExt m : msgs) {
                    first.putIfAbsent(body(m), now);
                }
                got.add(msgs);
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            };
        }
    }

    /** A promised delivery: never before earliest; lateness measured from want. */
    static final class Due {
        final String body;
        final long want;
        final long earliest;

        Due(String body, long want, long earliest) {
            this.body = body;
            this.want = want;
            this.earliest = earliest;
        }
    }

    /** Fails on an early arrival; returns each message's lateness in ms. */
    static List<Long> checkDue(Clock clock, List<Due> ds) {
        List<Long> late = new ArrayList<>();
        for (Due d : ds) {
            long at = clock.first.get(d.body);
            check(at >= d.earliest, "%s consumed at %d, %d ms before its delivery time %d (earliest allowed %d)",
                d.body, at, d.want - at, d.want, d.earliest);
            late.add(at - d.want);
        }
        return late;
    }

    /** Lateness as min/p50/max. */
    static String spread(List<Long> ms) {
        if (ms.isEmpty()) {
            return "n/a";
        }
        List<Long> s = new ArrayList<>(ms);
        Collections.sort(s);
        return String.format("%+d/%+d/%+d ms (n=%d)", s.get(0), s.get(s.size() / 2), s.get(s.size() - 1), s.size());
    }

    static List<String> bodies(List<Due> ds) {
        List<String> out = new ArrayList<>();
        for (Due d : ds) {
            out.add(d.body);
        }
        return out;
    }

    static int duplicates(Scenarios.Bodies got, List<String> want) {
        int n = 0;
        for (String w : want) {
            List<MessageExt> l = got.seen.get(w);
            if (l != null && l.size() > 1) {
                n += l.size() - 1;
            }
        }
        return n;
    }

    /** {pending at the kill, due while down}. */
    static int[] phases(List<Due> ds, long[] window) {
        int pending = 0;
        int down = 0;
        for (Due d : ds) {
            if (d.want >= window[1]) {
                pending++;
                if (d.want < window[2]) {
                    down++;
                }
            }
        }
        return new int[] {pending, down};
    }

    static String windowString(long[] w) {
        return String.format("broker down %.1fs", (w[2] - w[1]) / 1000.0);
    }

    /** Sets a 5.x timer property: the 5.x API when present, else the raw property (4.9.8). */
    static void timerProperty(Message m, String setter, String property, long value) throws Exception {
        try {
            Driver.call(m, setter, value);
        } catch (NoSuchMethodException e) {
            MessageAccessor.putProperty(m, property, Long.toString(value));
        }
    }

    /**
     * Runs a send until it succeeds, fails with something other than broker
     * flow control (SYSTEM_BUSY, which a loaded Java broker answers when every
     * client sends at the announced moment), or the deadline passes.
     */
    static <T> T busyRetry(long deadlineMs, java.util.concurrent.Callable<T> send) throws Exception {
        while (true) {
            try {
                return send.call();
            } catch (MQBrokerException e) {
                if (e.getResponseCode() != 2 || System.currentTimeMillis() > deadlineMs) {
                    throw e;
                }
                Thread.sleep(200);
            }
        }
    }

    static void sendOkBusy(DefaultMQProducer p, Message m, long deadlineMs) throws Exception {
        busyRetry(deadlineMs, () -> {
            sendOk(p, m);
            return null;
        });
    }

    /** Default messageDelayLevel entries 2-4. */
    static final long[] DELAY_LEVEL_MS = {0, 1000, 5000, 10000, 30000};

    /** Delay levels 2-4 sent right before the broker is killed. */
    static void delayRestart(Ctx c) throws Exception {
        String topic = c.name("delay_restart");
        createTopic(c, topic, 2);
        DefaultMQProducer p = producer(c, "delay_restart_p");
        Clock clock = new Clock();
        DefaultMQPushConsumer pc = pushConsumer(c, "delay_restart_c", "delay_restart_c");
        pc.subscribe(topic, "*");
        pc.registerMessageListener(clock.listener());
        pc.start();
        c.step = "waiting for the restart plan";
        long killAt = c.planRestart(topic);
        List<Due> ds = new ArrayList<>();
        for (int level = 2; level <= 4; level++) {
            for (int i = 0; i < 2; i++) {
                String b = "delay-L" + level + "-" + i;
                Message m = msg(topic, b);
                m.setDelayTimeLevel(level);
                long sent = System.currentTimeMillis();
                sendOkBusy(p, m, killAt);
                ds.add(new Due(b, sent + DELAY_LEVEL_MS[level], sent + DELAY_LEVEL_MS[level]));
            }
        }
        check(System.currentTimeMillis() <= killAt, "sends finished %d ms after the announced kill",
            System.currentTimeMillis() - killAt);
        c.step = "waiting for the broker to come back";
        long[] w = c.awaitRestart();
        c.step = "consuming after the restart";
        List<String> want = bodies(ds);
        clock.got.await(c, want);
        List<Long> late = checkDue(clock, ds);
        int[] ph = phases(ds, w);
        check(ph[0] > 0, "no delayed message was pending when the broker stopped (%s)", windowString(w));
        c.note = String.format("lateness min/p50/max %s; %d/%d pending at the kill, %d due while down; %d duplicate deliveries; %s",
            spread(late), ph[0], ds.size(), ph[1], duplicates(clock.got, want), windowString(w));
    }

    /** TIMER_DELIVER_MS offsets from the announced kill (see goclient/restart.go). */
    static final long[] TIMER_OFFSETS_MS = {-1500, 1500, 3000, 8000, 15000, 25000};
    static final long[] TIMER_DELAY_SEC = {5, 12};

    /** Timer messages due before, during and after the outage. */
    static void timerRestart(Ctx c) throws Exception {
        String topic = c.name("timer_restart");
        createTopic(c, topic, 2);
        DefaultMQProducer p = producer(c, "timer_restart_p");
        Clock clock = new Clock();
        DefaultMQPushConsumer pc = pushConsumer(c, "timer_restart_c", "timer_restart_c");
        pc.subscribe(topic, "*");
        pc.registerMessageListener(clock.listener());
        pc.start();
        c.step = "waiting for the restart plan";
        long killAt = c.planRestart(topic);
        List<Due> ds = new ArrayList<>();
        for (long off : TIMER_OFFSETS_MS) {
            String b = String.format("timer-at-kill%+dms", off);
            long deliverMs = killAt + off;
            Message m = msg(topic, b);
            timerProperty(m, "setDeliverTimeMs", "TIMER_DELIVER_MS", deliverMs);
            sendOkBusy(p, m, killAt);
            ds.add(new Due(b, deliverMs, Extra.earliestTimerDelivery(deliverMs)));
        }
        for (long sec : TIMER_DELAY_SEC) {
            String b = "timer-delay-" + sec + "s";
            Message m = msg(topic, b);
            timerProperty(m, "setDelayTimeSec", "TIMER_DELAY_SEC", sec);
            long sent = System.currentTimeMillis();
            sendOkBusy(p, m, killAt);
            ds.add(new Due(b, sent + sec * 1000, Extra.earliestTimerDelivery(sent + sec * 1000)));
        }
        check(System.currentTimeMillis() <= killAt, "sends finished %d ms after the announced kill",
            System.currentTimeMillis() - killAt);
        c.step = "waiting for the broker to come back";
        long[] w = c.awaitRestart();
        c.step = "consuming after the restart";
        List<String> want = bodies(ds);
        clock.got.await(c, want);
        List<Long> late = checkDue(clock, ds);
        for (String b : want) {
            MessageExt d = clock.got.seen.get(b).get(0);
            check(topic.equals(d.getTopic()), "%s delivered with topic %s", b, d.getTopic());
        }
        int[] ph = phases(ds, w);
        check(ph[1] > 0, "no timer came due while the broker was down (%s)", windowString(w));
        List<Long> afterUp = new ArrayList<>();
        for (int i = 0; i < ds.size(); i++) {
            if (ds.get(i).want >= w[2]) {
                afterUp.add(late.get(i));
            }
        }
        c.note = String.format("lateness min/p50/max %s, of those due after the restart %s; %d/%d pending at the kill, %d due while down; %d duplicate deliveries; %s",
            spread(late), spread(afterUp), ph[0], ds.size(), ph[1], duplicates(clock.got, want), windowString(w));
    }

    static final String[] TXN_BODIES = {"now-commit", "now-rollback", "doubt-commit-0", "doubt-rollback-0",
        "doubt-commit-1", "doubt-rollback-1"};

    /** Transactions in doubt across a broker restart. */
    static void txnRestart(Ctx c) throws Exception {
        String topic = c.name("txn_restart");
        createTopic(c, topic, 2);
        List<Long> unknownAt = new java.util.concurrent.CopyOnWriteArrayList<>();
        Map<String, Integer> after = new ConcurrentHashMap<>();
        long[] firstLate = {0};
        boolean[] restarted = {false};
        TransactionMQProducer p = new TransactionMQProducer(c.name("txn_restart_p"));
        p.setNamesrvAddr(c.namesrv);
        p.setInstanceName(c.name("txn_restart_p"));
        // The broker reaches a producer only after its next heartbeat on a
        // new connection; 5 s instead of the default 30 s keeps the wait short.
        p.setHeartbeatBrokerInterval(5000);
        p.setTransactionListener(new TransactionListener() {
            @Override
            public LocalTransactionState executeLocalTransaction(Message m, Object arg) {
                String b = new String(m.getBody(), java.nio.charset.StandardCharsets.UTF_8);
                if (b.equals("now-commit")) {
                    return LocalTransactionState.COMMIT_MESSAGE;
                }
                if (b.equals("now-rollback")) {
                    return LocalTransactionState.ROLLBACK_MESSAGE;
                }
                return LocalTransactionState.UNKNOW;
            }

            @Override
            public LocalTransactionState checkLocalTransaction(MessageExt m) {
                String b = body(m);
                synchronized (restarted) {
                    if (!restarted[0]) {
                        unknownAt.add(System.currentTimeMillis());
                        return LocalTransactionState.UNKNOW;
                    }
                    if (firstLate[0] == 0) {
                        firstLate[0] = System.currentTimeMillis();
                    }
                }
                after.merge(b, 1, Integer::sum);
                return b.startsWith("doubt-commit") || b.equals("now-commit")
                    ? LocalTransactionState.COMMIT_MESSAGE : LocalTransactionState.ROLLBACK_MESSAGE;
            }
        });
        p.start();
        c.onClose(p::shutdown);
        Scenarios.Bodies got = new Scenarios.Bodies();
        DefaultMQPushConsumer pc = pushConsumer(c, "txn_restart_c", "txn_restart_c");
        pc.subscribe(topic, "*");
        pc.registerMessageListener(got.listener());
        pc.start();
        c.step = "waiting for the restart plan";
        long killAt = c.planRestart(topic);
        for (int i = 0; i < TXN_BODIES.length; i++) {
            Message m = msg(topic, TXN_BODIES[i]);
            m.setTags("TagTxn");
            m.setKeys(c.name("txn_key_" + TXN_BODIES[i]));
            m.putUserProperty("seq", Integer.toString(i));
            TransactionSendResult r = busyRetry(killAt, () -> p.sendMessageInTransaction(m, null));
            check(r.getSendStatus() == SendStatus.SEND_OK, "half send %s: %s", TXN_BODIES[i], r);
        }
        check(System.currentTimeMillis() <= killAt, "half sends finished %d ms after the announced kill",
            System.currentTimeMillis() - killAt);
        c.step = "waiting for the broker to come back";
        long[] w = c.awaitRestart();
        synchronized (restarted) {
            restarted[0] = true;
        }
        c.step = "consuming the commits after the restart";
        List<String> commit = List.of("now-commit", "doubt-commit-0", "doubt-commit-1");
        got.await(c, commit);
        c.step = "waiting for every doubtful half message to be checked back after the restart";
        for (String b : List.of("doubt-commit-0", "doubt-commit-1", "doubt-rollback-0", "doubt-rollback-1")) {
            while (after.getOrDefault(b, 0) == 0) {
                check(c.remainingMillis() > 0, "%s never checked back after the restart", b);
                Thread.sleep(100);
            }
        }
        // Give a rolled-back message every chance to show up.
        Thread.sleep(2000);
        for (String b : List.of("now-rollback", "doubt-rollback-0", "doubt-rollback-1")) {
            check(!got.seen.containsKey(b), "rolled-back %s delivered %d times", b,
                got.seen.getOrDefault(b, List.of()).size());
        }
        int extra = 0;
        for (int i = 0; i < TXN_BODIES.length; i++) {
            String b = TXN_BODIES[i];
            List<MessageExt> ms = got.seen.get(b);
            if (ms == null) {
                continue;
            }
            Set<String> copies = new HashSet<>();
            for (MessageExt m : ms) {
                copies.add(m.getQueueId() + "/" + m.getQueueOffset());
                check(topic.equals(m.getTopic()) && "TagTxn".equals(m.getTags())
                        && c.name("txn_key_" + b).equals(m.getKeys()) && Integer.toString(i).equals(m.getUserProperty("seq")),
                    "%s consumed as topic %s tag %s keys %s seq %s, not as sent", b, m.getTopic(), m.getTags(),
                    m.getKeys(), m.getUserProperty("seq"));
            }
            // A check-back after the crash may ask about a transaction already
            // decided (the checker's progress is persisted lazily, on the Java
            // broker too) and the producer commits again: at-least-once, so
            // extra copies are allowed, never more than commit decisions.
            int commits = after.getOrDefault(b, 0) + (b.equals("now-commit") ? 1 : 0);
            check(copies.size() <= commits, "%s stored in %d queue positions %s after %d commit decisions", b,
                copies.size(), copies, commits);
            extra += copies.size() - 1;
        }
        int beforeKill = 0;
        for (long at : unknownAt) {
            if (at < w[1]) {
                beforeKill++;
            }
        }
        c.note = String.format("first deciding check-back %.1fs after the broker was back; %d check-backs answered UNKNOW (%d before the kill); %d re-committed copies; %d duplicate deliveries; %s",
            (firstLate[0] - w[2]) / 1000.0, unknownAt.size(), beforeKill, extra, duplicates(got, commit), windowString(w));
    }
}
