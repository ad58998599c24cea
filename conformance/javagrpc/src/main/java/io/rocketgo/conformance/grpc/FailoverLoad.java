package io.rocketgo.conformance.grpc;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.SendReceipt;

/**
 * gRPC client load of the failover suite (conformance/failover,
 * load_grpc.go): the official RocketMQ 5 gRPC client (rocketmq-client-java
 * 5.0.8) sends keyed messages from a few threads through one proxy endpoint,
 * and a SimpleConsumer receives and acks, one flushed stdout line per event,
 * until told to stop on stdin, the count is reached or the deadline passes.
 * The lines are FailoverTool's (conformance/java), so the Go side parses
 * both alike:
 *
 * <pre>
 * --endpoint H:P --topic T --group G --prefix P --count N --threads K --pace-ms M --deadline-ms D
 *      [--request-timeout-ms 3000] [--max-attempts 3] [--invisible-ms 15000]
 *   READY                                               (producer and consumer started)
 *   ACK &lt;key&gt; &lt;startUs&gt; &lt;endUs&gt; SEND_OK &lt;messageId&gt;
 *   ERR &lt;key&gt; &lt;startUs&gt; &lt;endUs&gt; &lt;exceptionClass&gt; &lt;one-line message&gt;
 *   MSG &lt;key&gt; - -1 &lt;deliveryAttempt&gt; -1                 (a gRPC message carries no store host)
 *   SENT acked=&lt;n&gt; failed=&lt;m&gt;
 *   DONE acked=&lt;n&gt; failed=&lt;m&gt; deliveries=&lt;d&gt; ms=&lt;elapsed&gt;
 *   FATAL &lt;class&gt; &lt;message&gt;                           (exit 2)
 * </pre>
 *
 * The producer keeps the client's defaults but for the request timeout and
 * the attempts (3, the SDK's default: one send and two retries with its
 * backoff). Never a sleep for synchronisation: the pacing waits on the STOP
 * latch.
 */
public final class FailoverLoad {
    private static final ClientServiceProvider SP = ClientServiceProvider.loadService();
    private static final PrintStream OUT = System.out;

    private FailoverLoad() {
    }

    static synchronized void emit(String line) {
        OUT.println(line);
        OUT.flush();
    }

    static String oneLine(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null && sb.length() < 400; c = c.getCause()) {
            if (sb.length() > 0) {
                sb.append(" <- ");
            }
            sb.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage());
        }
        return sb.toString().replace('\n', ' ').replace('\r', ' ');
    }

    static long nowMicros() {
        Instant n = Instant.now();
        return n.getEpochSecond() * 1_000_000L + n.getNano() / 1000;
    }

    public static void main(String[] argv) {
        // Keep stdout to our lines: client libraries may print.
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
            load(a);
        } catch (Throwable t) {
            emit("FATAL " + t.getClass().getSimpleName() + " " + oneLine(t));
            code = 2;
        }
        // Client libraries leave non-daemon threads behind.
        System.exit(code);
    }

    static String str(Map<String, String> a, String k) {
        String v = a.get(k);
        if (v == null) {
            throw new IllegalArgumentException("--" + k + " is required");
        }
        return v;
    }

    static long num(Map<String, String> a, String k, long def) {
        String v = a.get(k);
        return v == null ? def : Long.parseLong(v);
    }

    static void load(Map<String, String> a) throws Exception {
        long start = System.nanoTime();
        String endpoint = str(a, "endpoint");
        String topic = str(a, "topic");
        String group = str(a, "group");
        String prefix = str(a, "prefix");
        long count = num(a, "count", 1000);
        int threads = (int) Math.max(1, num(a, "threads", 1));
        long pace = num(a, "pace-ms", 0);
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(num(a, "deadline-ms", 600000));
        Duration invisible = Duration.ofMillis(num(a, "invisible-ms", 15000));
        ClientConfiguration conf = ClientConfiguration.newBuilder().setEndpoints(endpoint).enableSsl(false)
            .setRequestTimeout(Duration.ofMillis(num(a, "request-timeout-ms", 3000))).build();

        Producer p = Driver.started(() -> SP.newProducerBuilder().setClientConfiguration(conf).setTopics(topic)
            .setMaxAttempts((int) num(a, "max-attempts", 3)).build());
        SimpleConsumer c = Driver.started(() -> SP.newSimpleConsumerBuilder().setClientConfiguration(conf)
            .setConsumerGroup(group).setAwaitDuration(Duration.ofSeconds(5))
            .setSubscriptionExpressions(Collections.singletonMap(topic, FilterExpression.SUB_ALL)).build());
        emit("READY");

        CountDownLatch stopSend = new CountDownLatch(1), eof = new CountDownLatch(1);
        Thread in = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    if (line.trim().equals("STOP")) {
                        stopSend.countDown();
                    }
                }
            } catch (Exception e) {
                // treated as the end of input
            }
            stopSend.countDown();
            eof.countDown();
        }, "stdin");
        in.setDaemon(true);
        in.start();

        AtomicLong deliveries = new AtomicLong();
        Thread recv = new Thread(() -> {
            while (eof.getCount() > 0 && System.nanoTime() - deadline < 0) {
                List<MessageView> got;
                try {
                    got = c.receive(16, invisible);
                } catch (Exception e) {
                    continue; // the proxy answers again once a master is back
                }
                for (MessageView m : got) {
                    String key = m.getKeys().isEmpty() ? "-" : String.join(",", m.getKeys());
                    deliveries.incrementAndGet();
                    emit("MSG " + key + " - -1 " + m.getDeliveryAttempt() + " -1");
                    try {
                        c.ack(m);
                    } catch (Exception e) {
                        // comes back after its invisible time: a duplicate delivery
                    }
                }
            }
        }, "receive");
        recv.setDaemon(true);
        recv.start();

        AtomicLong next = new AtomicLong(), acked = new AtomicLong(), failed = new AtomicLong();
        List<Thread> senders = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread w = new Thread(() -> {
                while (stopSend.getCount() > 0 && System.nanoTime() - deadline < 0) {
                    long i = next.getAndIncrement();
                    if (i >= count) {
                        return;
                    }
                    String key = prefix + "-" + i;
                    Message m = SP.newMessageBuilder().setTopic(topic).setTag("failover").setKeys(key)
                        .setBody(("failover " + key).getBytes(StandardCharsets.UTF_8)).build();
                    long s = nowMicros();
                    try {
                        SendReceipt r = p.send(m);
                        acked.incrementAndGet();
                        emit("ACK " + key + " " + s + " " + nowMicros() + " SEND_OK " + r.getMessageId());
                    } catch (Exception ex) {
                        long e = nowMicros();
                        if (ex instanceof InterruptedException) {
                            Thread.currentThread().interrupt();
                        }
                        failed.incrementAndGet();
                        emit("ERR " + key + " " + s + " " + e + " " + ex.getClass().getSimpleName() + " " + oneLine(ex));
                    }
                    try {
                        // Pacing of the load (as the Go senders), cut short by STOP.
                        if (pace > 0 && stopSend.await(pace, TimeUnit.MILLISECONDS)) {
                            return;
                        }
                    } catch (InterruptedException ie) {
                        return;
                    }
                }
            }, "send-" + t);
            w.start();
            senders.add(w);
        }
        for (Thread w : senders) {
            w.join();
        }
        emit("SENT acked=" + acked.get() + " failed=" + failed.get());
        eof.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        Thread stop = new Thread(() -> {
            try {
                c.close();
                p.close();
            } catch (Exception e) {
                // exiting anyway
            }
        }, "shutdown");
        stop.setDaemon(true);
        stop.start();
        stop.join(5000);
        emit("DONE acked=" + acked.get() + " failed=" + failed.get() + " deliveries=" + deliveries.get()
            + " ms=" + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
    }
}
