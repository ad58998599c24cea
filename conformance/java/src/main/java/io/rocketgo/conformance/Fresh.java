package io.rocketgo.conformance;

import static io.rocketgo.conformance.Scenarios.body;
import static io.rocketgo.conformance.Scenarios.check;
import static io.rocketgo.conformance.Scenarios.createTopic;
import static io.rocketgo.conformance.Scenarios.msg;
import static io.rocketgo.conformance.Scenarios.producer;
import static io.rocketgo.conformance.Scenarios.sendOk;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

import io.rocketgo.conformance.Driver.Ctx;

/**
 * Push consumers that start just before the first sends (issue #19 §1):
 * a new group with the default CONSUME_FROM_LAST_OFFSET, a random instance
 * name, an 8-queue topic created through the admin API just before.
 */
final class Fresh {
    private Fresh() {
    }

    /** A push consumer as a new user writes one: defaults everywhere but the name server. */
    static DefaultMQPushConsumer defaultPush(Ctx c, String group) {
        DefaultMQPushConsumer pc = new DefaultMQPushConsumer(c.name(group));
        pc.setNamesrvAddr(c.namesrv);
        pc.setInstanceName("i" + System.nanoTime());
        check(pc.getConsumeFromWhere() == ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET,
            "default consumeFromWhere %s", pc.getConsumeFromWhere());
        c.onClose(pc::shutdown);
        return pc;
    }

    /** How many times push_fresh and lite_then_push run their procedure: CONFORMANCE_REPEAT, else 8. */
    static int repeat() {
        String v = System.getenv("CONFORMANCE_REPEAT");
        return v == null || v.isEmpty() ? 8 : Integer.parseInt(v);
    }

    interface Run {
        void run() throws Exception;
    }

    /** Runs r repeat() times; fails with the first failure and how many runs failed. */
    static void repeated(Ctx c, Run r) throws Exception {
        int n = repeat();
        int failed = 0;
        Throwable first = null;
        for (int i = 0; i < n && c.remainingMillis() > 0; i++) {
            try {
                r.run();
            } catch (Exception | AssertionError e) {
                failed++;
                if (first == null) {
                    first = e;
                }
            } finally {
                c.closeAll();
            }
        }
        if (first != null) {
            throw new AssertionError(failed + " of " + n + " runs failed; first: " + Driver.describe(first), first);
        }
        c.note = n + " runs";
    }

    /** S1, repeated. */
    static void pushFresh(Ctx c) throws Exception {
        repeated(c, () -> pushFreshOnce(c));
    }

    /** S2, repeated. */
    static void liteThenPush(Ctx c) throws Exception {
        repeated(c, () -> liteThenPushOnce(c));
    }

    /** S1: subscribe with a tag, start, send 10 tagged messages at once: all 10 consumed within 30 s. */
    static void pushFreshOnce(Ctx c) throws Exception {
        String topic = c.name("fresh_" + System.nanoTime());
        createTopic(c, topic, 8);
        Scenarios.Bodies got = new Scenarios.Bodies();
        DefaultMQPushConsumer pc = defaultPush(c, "fresh_c_" + System.nanoTime());
        pc.subscribe(topic, "TagF");
        pc.registerMessageListener(got.listener());
        pc.start();
        DefaultMQProducer p = producer(c, "fresh_p");
        List<String> want = Scenarios.seq("fresh", 10);
        for (String b : want) {
            Message m = msg(topic, b);
            m.setTags("TagF");
            sendOk(p, m);
        }
        awaitWithin(c, got, want, 30_000);
    }

    /** S2: a lite pull consumer of G polls an empty topic once and stops; a push consumer of G then gets all 4 sends. */
    static void liteThenPushOnce(Ctx c) throws Exception {
        String topic = c.name("lite_" + System.nanoTime());
        createTopic(c, topic, 8);
        String group = "lite_g_" + System.nanoTime();
        DefaultLitePullConsumer lc = new DefaultLitePullConsumer(c.name(group));
        lc.setNamesrvAddr(c.namesrv);
        lc.setInstanceName("i" + System.nanoTime());
        lc.setPollTimeoutMillis(1000);
        lc.subscribe(topic, "*");
        lc.start();
        List<MessageExt> none = lc.poll(1000);
        check(none.isEmpty(), "poll of an empty topic returned %d messages", none.size());
        lc.shutdown();
        Scenarios.Bodies got = new Scenarios.Bodies();
        DefaultMQPushConsumer pc = defaultPush(c, group);
        pc.subscribe(topic, "*");
        pc.registerMessageListener(got.listener());
        pc.start();
        DefaultMQProducer p = producer(c, "lite_p");
        List<String> want = Scenarios.seq("lite", 4);
        for (String b : want) {
            sendOk(p, msg(topic, b));
        }
        awaitWithin(c, got, want, 30_000);
    }

    /**
     * Bound of the first retry: delay level 3 (10 s) plus one rebalance
     * interval (20 s) plus 2 s. A consumer of a new group reads its
     * %RETRY% topic's route before its first heartbeat creates that topic;
     * when its route refresh 10 ms after start does not see it either, the
     * retry queue is first pulled at the next rebalance. Against the Java
     * 5.3.3 broker the first retry then comes after 20.0 s (4.9.8, 5.3.3
     * clients); against ours 10.1 s (4.9.x) and 20.0 s (5.3.3). The issue's
     * 20 s bound holds for 4.9.3 on both.
     */
    static final long FIRST_RETRY_BOUND_MS = 32_000;

    /** S3 with both answers side by side: RECONSUME_LATER and null. */
    static void retryTwiceBoth(Ctx c) throws Exception {
        Throwable[] err = new Throwable[2];
        String[] notes = new String[2];
        Thread[] ts = new Thread[2];
        ConsumeConcurrentlyStatus[] answers = {ConsumeConcurrentlyStatus.RECONSUME_LATER, null};
        for (int i = 0; i < 2; i++) {
            int k = i;
            ts[i] = new Thread(() -> {
                try {
                    notes[k] = retryTwice(c, answers[k]);
                } catch (Throwable e) {
                    err[k] = e;
                }
            }, "retry-twice-" + i);
            ts[i].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        for (int i = 0; i < 2; i++) {
            if (err[i] != null) {
                throw new AssertionError("answer " + answers[i] + ": " + Driver.describe(err[i]), err[i]);
            }
        }
        c.note = "RECONSUME_LATER " + notes[0] + "; null " + notes[1];
    }

    /**
     * S3: maxReconsumeTimes 2; the listener answers {@code answer} (null or
     * RECONSUME_LATER) while reconsumeTimes &lt; 2: every message comes back
     * twice, the first retry within 20 s and the second within 60 s of it.
     */
    static String retryTwice(Ctx c, ConsumeConcurrentlyStatus answer) throws Exception {
        String topic = c.name("retry2_" + System.nanoTime());
        createTopic(c, topic, 8);
        Map<String, List<long[]>> attempts = new ConcurrentHashMap<>();
        DefaultMQPushConsumer pc = defaultPush(c, "retry2_c_" + System.nanoTime());
        pc.setMaxReconsumeTimes(2);
        pc.subscribe(topic, "*");
        pc.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            boolean again = false;
            for (MessageExt m : msgs) {
                attempts.computeIfAbsent(body(m), k -> new CopyOnWriteArrayList<>())
                    .add(new long[] {m.getReconsumeTimes(), System.currentTimeMillis()});
                again |= m.getReconsumeTimes() < 2;
            }
            synchronized (attempts) {
                attempts.notifyAll();
            }
            return again ? answer : ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        pc.start();
        DefaultMQProducer p = producer(c, "retry2_p" + (answer == null ? "_null" : "_later"));
        List<String> want = Scenarios.seq("retry2", 8);
        Map<String, Long> sentAt = new ConcurrentHashMap<>();
        for (String b : want) {
            sentAt.put(b, System.currentTimeMillis());
            sendOk(p, msg(topic, b));
        }
        long deadline = System.currentTimeMillis() + Math.min(c.remainingMillis(), 110_000);
        synchronized (attempts) {
            while (true) {
                List<String> short_ = new ArrayList<>();
                for (String b : want) {
                    List<long[]> a = attempts.get(b);
                    if (a == null || a.size() < 3) {
                        short_.add(b + "=" + (a == null ? 0 : a.size()));
                    }
                }
                if (short_.isEmpty()) {
                    break;
                }
                long left = deadline - System.currentTimeMillis();
                check(left > 0, "messages without 3 attempts: %s", short_);
                attempts.wait(Math.min(left, 200));
            }
        }
        long worst1 = 0;
        long worst2 = 0;
        for (String b : want) {
            List<long[]> a = attempts.get(b);
            check(a.get(0)[0] == 0 && a.get(1)[0] == 1 && a.get(2)[0] == 2,
                "%s: reconsumeTimes %d,%d,%d, want 0,1,2", b, a.get(0)[0], a.get(1)[0], a.get(2)[0]);
            long first = a.get(1)[1] - a.get(0)[1];
            long second = a.get(2)[1] - a.get(1)[1];
            check(first <= FIRST_RETRY_BOUND_MS, "%s: first retry after %d ms (> %d ms)", b, first, FIRST_RETRY_BOUND_MS);
            check(second <= 60_000, "%s: second retry %d ms after the first (> 60 s)", b, second);
            worst1 = Math.max(worst1, first);
            worst2 = Math.max(worst2, second);
        }
        return String.format("slowest retries %.1f s / %.1f s", worst1 / 1e3, worst2 / 1e3);
    }

    private static void awaitWithin(Ctx c, Scenarios.Bodies got, List<String> want, long ms) throws InterruptedException {
        long deadline = System.currentTimeMillis() + ms;
        synchronized (got) {
            while (true) {
                List<String> miss = got.missing(want);
                if (miss.isEmpty()) {
                    return;
                }
                long left = deadline - System.currentTimeMillis();
                check(left > 0 && c.remainingMillis() > 0, "%d/%d not consumed within %d ms: %s",
                    miss.size(), want.size(), ms, miss);
                got.wait(Math.min(left, 200));
            }
        }
    }
}
