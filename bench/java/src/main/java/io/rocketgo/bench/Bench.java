package io.rocketgo.bench;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * Load generator on the official Java client, the counterpart of
 * bench/goclient: sync-send producer threads sharing one DefaultMQProducer
 * (closed loop or paced to rate=), and a push consumer of a new group from
 * the first offset. Bodies carry mqbench's stamp ("RGBENCH1" + big-endian
 * send time in unix nanoseconds). Prints one JSON line with mqbench's -json
 * field names on stdout.
 *
 * <pre>
 * Bench produce ns=127.0.0.1:9876 topic=T threads=8 size=1024 duration=10 [warmup=2] [rate=5000] [count=N]
 * Bench consume ns=127.0.0.1:9876 topic=T group=G [count=N] duration=300 [warmup=1] [idle=2]
 * </pre>
 */
public final class Bench {
    static final byte[] MAGIC = "RGBENCH1".getBytes(StandardCharsets.US_ASCII);
    static final int STAMP_LEN = MAGIC.length + 8;

    private Bench() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            System.err.println("usage: Bench produce|consume key=value ...");
            System.exit(2);
        }
        Map<String, String> kv = new HashMap<>();
        for (int i = 1; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            if (eq < 0) {
                System.err.println("bad argument (want key=value): " + args[i]);
                System.exit(2);
            }
            kv.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        String json;
        switch (args[0]) {
            case "produce" -> json = produce(kv);
            case "consume" -> json = consume(kv);
            default -> {
                System.err.println("unknown command " + args[0]);
                System.exit(2);
                return;
            }
        }
        System.out.println(json);
        System.out.flush();
        System.exit(0); // client threads may linger after shutdown
    }

    static long wallNanos() { // the same clock Go's time.Now().UnixNano() reads (µs resolution here)
        java.time.Instant now = java.time.Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    static byte[] body(int size, long sentNanos) {
        byte[] b = new byte[Math.max(size, STAMP_LEN)];
        System.arraycopy(MAGIC, 0, b, 0, MAGIC.length);
        ByteBuffer.wrap(b, MAGIC.length, 8).putLong(sentNanos);
        for (int i = STAMP_LEN; i < b.length; i++) {
            b[i] = (byte) ('a' + i % 26);
        }
        return b;
    }

    /** Send time stamped in body, or -1. */
    static long stampOf(byte[] b) {
        if (b == null || b.length < STAMP_LEN) {
            return -1;
        }
        for (int i = 0; i < MAGIC.length; i++) {
            if (b[i] != MAGIC[i]) {
                return -1;
            }
        }
        return ByteBuffer.wrap(b, MAGIC.length, 8).getLong();
    }

    /** Growable array of latency samples in microseconds. */
    static final class Samples {
        long[] v = new long[1 << 14];
        int n;

        void add(long us) {
            if (n == v.length) {
                v = Arrays.copyOf(v, n * 2);
            }
            v[n++] = us;
        }

        void addAll(Samples o) {
            for (int i = 0; i < o.n; i++) {
                add(o.v[i]);
            }
        }

        String json() {
            if (n == 0) {
                return "{\"samples\":0,\"mean\":0,\"p50\":0,\"p90\":0,\"p99\":0,\"p999\":0,\"max\":0}";
            }
            long[] s = Arrays.copyOf(v, n);
            Arrays.sort(s);
            double sum = 0;
            for (long x : s) {
                sum += x;
            }
            return String.format(java.util.Locale.ROOT,
                "{\"samples\":%d,\"mean\":%.3f,\"p50\":%.3f,\"p90\":%.3f,\"p99\":%.3f,\"p999\":%.3f,\"max\":%.3f}",
                n, sum / n / 1000, q(s, 0.50), q(s, 0.90), q(s, 0.99), q(s, 0.999), s[n - 1] / 1000.0);
        }

        static double q(long[] s, double p) { // nearest rank, ms
            int i = (int) (p * s.length + 0.5) - 1;
            i = Math.min(Math.max(i, 0), s.length - 1);
            return s[i] / 1000.0;
        }
    }

    static String summary(String role, String mode, String topic, int threads, int size, double rate, double secs,
                          long msgs, long bytes, Map<String, Long> errors, Samples lat) {
        long errTotal = 0;
        StringBuilder e = new StringBuilder("{");
        for (Map.Entry<String, Long> en : new TreeMap<>(errors).entrySet()) {
            if (e.length() > 1) {
                e.append(',');
            }
            e.append('"').append(en.getKey().replace("\\", "\\\\").replace("\"", "'")).append("\":").append(en.getValue());
            errTotal += en.getValue();
        }
        e.append('}');
        double tps = secs > 0 ? msgs / secs : 0;
        return String.format(java.util.Locale.ROOT,
            "{\"generator\":\"java-client\",\"role\":\"%s\",\"mode\":\"%s\",\"topic\":\"%s\",\"threads\":%d,\"size\":%d,"
                + "\"rate\":%.1f,\"seconds\":%.3f,\"messages\":%d,\"bytes\":%d,\"tps\":%.1f,\"mbps\":%.3f,"
                + "\"errors\":%s,\"errorTotal\":%d,\"latencyMs\":%s}",
            role, mode, topic, threads, size, rate, secs, msgs, bytes, tps, secs > 0 ? bytes / secs / 1e6 : 0,
            e, errTotal, lat.json());
    }

    static String produce(Map<String, String> kv) throws Exception {
        String topic = kv.getOrDefault("topic", "BenchmarkTest");
        int threads = Integer.parseInt(kv.getOrDefault("threads", "8"));
        int size = Integer.parseInt(kv.getOrDefault("size", "1024"));
        double rate = Double.parseDouble(kv.getOrDefault("rate", "0"));
        long count = Long.parseLong(kv.getOrDefault("count", "0"));
        long durationNanos = (long) (Double.parseDouble(kv.getOrDefault("duration", "30")) * 1e9);
        long warmupNanos = (long) (Double.parseDouble(kv.getOrDefault("warmup", "0")) * 1e9);

        DefaultMQProducer p = new DefaultMQProducer(kv.getOrDefault("group", "javaclient_producer"));
        p.setNamesrvAddr(kv.getOrDefault("ns", "127.0.0.1:9876"));
        p.setInstanceName("javaclient-" + System.nanoTime());
        p.setSendMsgTimeout(3000);
        p.setCompressMsgBodyOverHowmuch(Integer.MAX_VALUE); // as Apache's benchmark Producer without -c
        p.start();
        try {
            // The first send fetches the route; keep it off the clock.
            p.send(new Message(topic, body(size, wallNanos())));

            AtomicLong budget = new AtomicLong(count > 0 ? count : Long.MAX_VALUE);
            long[] sent = new long[threads];
            Samples[] lat = new Samples[threads];
            @SuppressWarnings("unchecked")
            Map<String, Long>[] errs = new Map[threads];
            CountDownLatch done = new CountDownLatch(threads);
            // Sends during the warm-up (JIT, connections) run but are not counted.
            long start = System.nanoTime();
            long measured = start + warmupNanos;
            long deadline = measured + durationNanos;
            for (int t = 0; t < threads; t++) {
                final int id = t;
                lat[id] = new Samples();
                errs[id] = new HashMap<>();
                Thread th = new Thread(() -> {
                    try {
                        for (long k = 0; ; k++) {
                            if (budget.getAndDecrement() <= 0) {
                                return;
                            }
                            if (rate > 0) {
                                long due = start + (long) ((k * threads + id) / rate * 1e9);
                                long wait = due - System.nanoTime();
                                if (wait > 0) {
                                    TimeUnit.NANOSECONDS.sleep(wait);
                                }
                            }
                            long t0 = System.nanoTime();
                            if (t0 >= deadline) {
                                return;
                            }
                            try {
                                SendResult r = p.send(new Message(topic, body(size, wallNanos())));
                                if (t0 < measured) {
                                    continue;
                                }
                                if (r.getSendStatus() == SendStatus.SEND_OK) {
                                    sent[id]++;
                                    lat[id].add((System.nanoTime() - t0) / 1000);
                                } else {
                                    errs[id].merge(r.getSendStatus().name(), 1L, Long::sum);
                                }
                            } catch (Exception ex) {
                                if (t0 < measured) {
                                    continue;
                                }
                                String k2 = ex.getClass().getSimpleName();
                                errs[id].merge(k2, 1L, Long::sum);
                            }
                        }
                    } catch (InterruptedException ie) {
                        Thread.currentThread().interrupt();
                    } finally {
                        done.countDown();
                    }
                }, "bench-producer-" + t);
                th.setDaemon(true);
                th.start();
            }
            done.await();
            double secs = (System.nanoTime() - measured) / 1e9;
            long msgs = 0;
            Samples all = new Samples();
            Map<String, Long> errors = new HashMap<>();
            for (int t = 0; t < threads; t++) {
                msgs += sent[t];
                all.addAll(lat[t]);
                errs[t].forEach((k, v) -> errors.merge(k, v, Long::sum));
            }
            return summary("produce", "sync", topic, threads, size, rate, secs, msgs, msgs * size, errors, all);
        } finally {
            p.shutdown();
        }
    }

    static String consume(Map<String, String> kv) throws Exception {
        String topic = kv.getOrDefault("topic", "BenchmarkTest");
        long count = Long.parseLong(kv.getOrDefault("count", "0"));
        long durationMs = (long) (Double.parseDouble(kv.getOrDefault("duration", "30")) * 1000);
        long warmupNanos = (long) (Double.parseDouble(kv.getOrDefault("warmup", "0")) * 1e9);
        long idleNanos = (long) (Double.parseDouble(kv.getOrDefault("idle", "0")) * 1e9);

        Object lock = new Object();
        long[] tally = new long[4]; // msgs, bytes, first receive (ns), last receive (ns); guarded by lock
        long[] firstWall = {0}; // wall-clock ns of the first receive; guarded by lock
        Samples lat = new Samples(); // guarded by lock
        CountDownLatch reached = new CountDownLatch(1);

        DefaultMQPushConsumer c = new DefaultMQPushConsumer(kv.getOrDefault("group", "javaclient_consumer"));
        c.setNamesrvAddr(kv.getOrDefault("ns", "127.0.0.1:9876"));
        c.setInstanceName("javaclient-" + System.nanoTime());
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(topic, "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            long now = wallNanos();
            long mono = System.nanoTime();
            synchronized (lock) {
                if (tally[0] == 0 && !msgs.isEmpty()) {
                    tally[2] = mono;
                    firstWall[0] = now;
                    System.err.printf("consume %s: first message%n", topic); // bench-compare waits for this line
                }
                for (MessageExt m : msgs) {
                    tally[0]++;
                    tally[1] += m.getBody() == null ? 0 : m.getBody().length;
                    long sent = stampOf(m.getBody());
                    if (sent < 0) {
                        sent = m.getBornTimestamp() * 1_000_000L;
                    }
                    // With a warm-up, only messages sent that long after the first one
                    // arrived count: the consumer is known to be up, whatever its start cost.
                    if (warmupNanos <= 0 || sent >= firstWall[0] + warmupNanos) {
                        lat.add((now - sent) / 1000);
                    }
                }
                tally[3] = mono;
                if (count > 0 && tally[0] >= count) {
                    reached.countDown();
                }
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        long start = System.nanoTime();
        c.start();
        System.err.printf("consume %s: started in %.3f s%n", topic, (System.nanoTime() - start) / 1e9);
        long end = start + durationMs * 1_000_000L;
        while (System.nanoTime() < end && !reached.await(100, TimeUnit.MILLISECONDS)) {
            if (idleNanos > 0) {
                synchronized (lock) {
                    if (tally[0] > 0 && System.nanoTime() - tally[3] >= idleNanos) {
                        break;
                    }
                }
            }
        }
        String out;
        synchronized (lock) {
            System.err.printf("consume %s: %d messages, first after %.3f s, last after %.3f s, stop after %.3f s%n",
                topic, tally[0], tally[0] > 0 ? (tally[2] - start) / 1e9 : -1.0, tally[0] > 0 ? (tally[3] - start) / 1e9 : -1.0,
                (System.nanoTime() - start) / 1e9);
            // Catch-up rate: first to last message received (start-up and
            // rebalance excluded); with fewer than two messages, the whole run.
            double secs = tally[0] > 1 && tally[3] > tally[2] ? (tally[3] - tally[2]) / 1e9 : (System.nanoTime() - start) / 1e9;
            out = summary("consume", "push", topic, 0, 0, 0, secs, tally[0], tally[1], new HashMap<>(), lat);
            if (tally[0] > 0) { // from starting the consumer to the first message
                out = out.substring(0, out.length() - 1)
                    + String.format(java.util.Locale.ROOT, ",\"firstMs\":%.3f}", (tally[2] - start) / 1e6);
            }
        }
        long t0 = System.nanoTime();
        c.shutdown();
        System.err.printf("consume %s: shutdown took %.3f s%n", topic, (System.nanoTime() - t0) / 1e9);
        return out;
    }
}
