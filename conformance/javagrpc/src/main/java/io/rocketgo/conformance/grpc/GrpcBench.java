package io.rocketgo.conformance.grpc;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;

/**
 * gRPC load driver of scripts/bench-grpc.sh: the official RocketMQ 5 gRPC
 * client (rocketmq-client-java) against one endpoint, one mode per run, one
 * JSON line on stdout at the end (client libraries' prints go to stderr).
 *
 * <pre>
 * --mode send --endpoint H:P --topic T --seconds D [--inflight 64] [--size 1024] [--max 2000000]
 *     closed loop: --inflight async sends outstanding, D seconds or --max messages;
 *     {"mode":"send","messages":n,"errors":e,"seconds":s,"tps":x,"p50Ms":a,"p99Ms":b}
 * --mode recv --endpoint H:P --topic T --group G --seconds D [--threads 4] [--batch 32] [--max N]
 *     SimpleConsumer receive + async ack of the backlog, D seconds or --max acked messages;
 *     {"mode":"recv","messages":n,"errors":e,"seconds":s,"tps":x}
 * --mode e2e --endpoint H:P --topic T --group G --seconds D [--rate 500] [--size 1024]
 *     paced producer (--rate msg/s) and a receive + ack loop at once; the send time
 *     (epoch microseconds) rides in the message property "benchSendUs";
 *     {"mode":"e2e","sent":n,"received":r,"seconds":s,"e2eP50Ms":a,"e2eP99Ms":b}
 * </pre>
 *
 * Every loop is bounded by its count and its deadline; the in-flight bound is a
 * semaphore released by the send futures, the pacing a park until the next
 * slot (load shaping, never a wait for some other event).
 */
public final class GrpcBench {
    private static final ClientServiceProvider SP = ClientServiceProvider.loadService();
    private static final PrintStream OUT = System.out;
    private static final String SEND_US = "benchSendUs";

    private GrpcBench() {
    }

    public static void main(String[] argv) {
        System.setOut(System.err);
        int code = 0;
        try {
            Map<String, String> a = new HashMap<>();
            for (int i = 0; i + 1 < argv.length; i += 2) {
                if (!argv[i].startsWith("--")) {
                    throw new IllegalArgumentException("flag expected: " + argv[i]);
                }
                a.put(argv[i].substring(2), argv[i + 1]);
            }
            String mode = FailoverLoad.str(a, "mode");
            switch (mode) {
                case "send":
                    send(a);
                    break;
                case "recv":
                    recv(a);
                    break;
                case "e2e":
                    e2e(a);
                    break;
                default:
                    throw new IllegalArgumentException("unknown --mode " + mode);
            }
        } catch (Throwable t) {
            OUT.println("{\"fatal\":\"" + FailoverLoad.oneLine(t).replace('"', '\'') + "\"}");
            code = 2;
        }
        OUT.flush();
        System.exit(code);
    }

    static long nowMicros() {
        Instant n = Instant.now();
        return n.getEpochSecond() * 1_000_000L + n.getNano() / 1000;
    }

    static ClientConfiguration conf(Map<String, String> a) {
        return ClientConfiguration.newBuilder().setEndpoints(FailoverLoad.str(a, "endpoint")).enableSsl(false)
            .setRequestTimeout(Duration.ofMillis(FailoverLoad.num(a, "request-timeout-ms", 5000))).build();
    }

    static Producer producer(Map<String, String> a) throws Exception {
        ClientConfiguration c = conf(a);
        String topic = FailoverLoad.str(a, "topic");
        return Driver.started(() -> SP.newProducerBuilder().setClientConfiguration(c).setTopics(topic).build());
    }

    static SimpleConsumer consumer(Map<String, String> a) throws Exception {
        ClientConfiguration c = conf(a);
        String topic = FailoverLoad.str(a, "topic");
        String group = FailoverLoad.str(a, "group");
        return Driver.started(() -> SP.newSimpleConsumerBuilder().setClientConfiguration(c)
            .setConsumerGroup(group).setAwaitDuration(Duration.ofSeconds(2))
            .setSubscriptionExpressions(Collections.singletonMap(topic, FilterExpression.SUB_ALL)).build());
    }

    static Message message(String topic, byte[] body) {
        return SP.newMessageBuilder().setTopic(topic).setTag("bench").setBody(body)
            .addProperty(SEND_US, Long.toString(nowMicros())).build();
    }

    /** Percentile (0..1) of the first n samples, in milliseconds. */
    static double pct(long[] us, int n, double q) {
        if (n == 0) {
            return -1;
        }
        long[] s = Arrays.copyOf(us, n);
        Arrays.sort(s);
        int i = (int) Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1));
        return s[i] / 1000.0;
    }

    static String fmt(double v) {
        return String.format(java.util.Locale.ROOT, "%.3f", v);
    }

    static void send(Map<String, String> a) throws Exception {
        String topic = FailoverLoad.str(a, "topic");
        long seconds = FailoverLoad.num(a, "seconds", 10);
        int inflight = (int) FailoverLoad.num(a, "inflight", 64);
        int max = (int) FailoverLoad.num(a, "max", 2_000_000);
        byte[] body = new byte[(int) FailoverLoad.num(a, "size", 1024)];
        Arrays.fill(body, (byte) 'x');
        Producer p = producer(a);
        long[] lat = new long[max];
        AtomicLong done = new AtomicLong(), errors = new AtomicLong();
        Semaphore slots = new Semaphore(inflight);
        long start = System.nanoTime(), deadline = start + TimeUnit.SECONDS.toNanos(seconds);
        int issued = 0;
        while (issued < max && System.nanoTime() - deadline < 0) {
            if (!slots.tryAcquire(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                break;
            }
            long s = System.nanoTime();
            CompletableFuture<?> f = p.sendAsync(message(topic, body));
            f.whenComplete((r, ex) -> {
                if (ex == null) {
                    int i = (int) done.getAndIncrement();
                    if (i < lat.length) {
                        lat[i] = (System.nanoTime() - s) / 1000;
                    }
                } else {
                    errors.incrementAndGet();
                }
                slots.release();
            });
            issued++;
        }
        // Drain what is in flight (bounded by the request timeout).
        slots.tryAcquire(inflight, 30, TimeUnit.SECONDS);
        double secs = (System.nanoTime() - start) / 1e9;
        int n = (int) Math.min(done.get(), lat.length);
        OUT.println("{\"mode\":\"send\",\"messages\":" + done.get() + ",\"errors\":" + errors.get()
            + ",\"seconds\":" + fmt(secs) + ",\"tps\":" + fmt(done.get() / secs)
            + ",\"p50Ms\":" + fmt(pct(lat, n, 0.50)) + ",\"p99Ms\":" + fmt(pct(lat, n, 0.99)) + "}");
        closeQuietly(p, null);
    }

    /** Receive + ack loop of one thread until the deadline or max acked; e2e latencies into lat when given. */
    static void receiveLoop(SimpleConsumer c, int batch, long deadline, long max, AtomicLong acked, AtomicLong errors,
        AtomicLong idx, long[] lat, Duration invisible) {
        while (System.nanoTime() - deadline < 0 && acked.get() < max) {
            List<MessageView> got;
            try {
                got = c.receive(batch, invisible);
            } catch (Exception e) {
                errors.incrementAndGet();
                continue;
            }
            long now = nowMicros();
            List<CompletableFuture<Void>> acks = new ArrayList<>(got.size());
            for (MessageView m : got) {
                if (lat != null) {
                    String v = m.getProperties().get(SEND_US);
                    if (v != null) {
                        int i = (int) idx.getAndIncrement();
                        if (i < lat.length) {
                            lat[i] = now - Long.parseLong(v);
                        }
                    }
                }
                acks.add(c.ackAsync(m));
            }
            for (CompletableFuture<Void> f : acks) {
                try {
                    f.get(10, TimeUnit.SECONDS);
                    acked.incrementAndGet();
                } catch (Exception e) {
                    errors.incrementAndGet();
                }
            }
        }
    }

    static void recv(Map<String, String> a) throws Exception {
        long seconds = FailoverLoad.num(a, "seconds", 10);
        int threads = (int) FailoverLoad.num(a, "threads", 4);
        int batch = (int) FailoverLoad.num(a, "batch", 32);
        long max = FailoverLoad.num(a, "max", Long.MAX_VALUE);
        SimpleConsumer c = consumer(a);
        AtomicLong acked = new AtomicLong(), errors = new AtomicLong();
        long start = System.nanoTime(), deadline = start + TimeUnit.SECONDS.toNanos(seconds);
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread w = new Thread(() -> receiveLoop(c, batch, deadline, max, acked, errors, null, null,
                Duration.ofSeconds(30)), "recv-" + t);
            w.start();
            ts.add(w);
        }
        for (Thread w : ts) {
            w.join();
        }
        double secs = (System.nanoTime() - start) / 1e9;
        OUT.println("{\"mode\":\"recv\",\"messages\":" + acked.get() + ",\"errors\":" + errors.get()
            + ",\"seconds\":" + fmt(secs) + ",\"tps\":" + fmt(acked.get() / secs) + "}");
        closeQuietly(null, c);
    }

    static void e2e(Map<String, String> a) throws Exception {
        String topic = FailoverLoad.str(a, "topic");
        long seconds = FailoverLoad.num(a, "seconds", 10);
        long rate = Math.max(1, FailoverLoad.num(a, "rate", 500));
        int threads = (int) FailoverLoad.num(a, "threads", 4);
        byte[] body = new byte[(int) FailoverLoad.num(a, "size", 1024)];
        Arrays.fill(body, (byte) 'x');
        Producer p = producer(a);
        SimpleConsumer c = consumer(a);
        long total = rate * seconds;
        long[] lat = new long[(int) Math.min(total, 5_000_000)];
        AtomicLong acked = new AtomicLong(), errors = new AtomicLong(), idx = new AtomicLong(), sent = new AtomicLong();
        long start = System.nanoTime(), sendEnd = start + TimeUnit.SECONDS.toNanos(seconds);
        // The receivers stop once every sent message is acked, or 10 s after the last send.
        long recvEnd = sendEnd + TimeUnit.SECONDS.toNanos(10);
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread w = new Thread(() -> receiveLoop(c, 32, recvEnd, total, acked, errors, idx, lat,
                Duration.ofSeconds(30)), "recv-" + t);
            w.start();
            ts.add(w);
        }
        long period = 1_000_000_000L / rate;
        Semaphore slots = new Semaphore(256);
        for (long i = 0; i < total && System.nanoTime() - sendEnd < 0; i++) {
            long slot = start + i * period;
            long wait = slot - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
            }
            if (!slots.tryAcquire(5, TimeUnit.SECONDS)) {
                break;
            }
            p.sendAsync(message(topic, body)).whenComplete((r, ex) -> {
                if (ex == null) {
                    sent.incrementAndGet();
                } else {
                    errors.incrementAndGet();
                }
                slots.release();
            });
        }
        slots.tryAcquire(256, 30, TimeUnit.SECONDS);
        for (Thread w : ts) {
            w.join();
        }
        double secs = (System.nanoTime() - start) / 1e9;
        int n = (int) Math.min(idx.get(), lat.length);
        OUT.println("{\"mode\":\"e2e\",\"sent\":" + sent.get() + ",\"received\":" + acked.get() + ",\"errors\":"
            + errors.get() + ",\"rate\":" + rate + ",\"seconds\":" + fmt(secs) + ",\"e2eP50Ms\":"
            + fmt(pct(lat, n, 0.50)) + ",\"e2eP99Ms\":" + fmt(pct(lat, n, 0.99)) + "}");
        closeQuietly(p, c);
    }

    static void closeQuietly(Producer p, SimpleConsumer c) {
        Thread stop = new Thread(() -> {
            try {
                if (c != null) {
                    c.close();
                }
                if (p != null) {
                    p.close();
                }
            } catch (Exception e) {
                // exiting anyway
            }
        }, "shutdown");
        stop.setDaemon(true);
        stop.start();
        try {
            stop.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
