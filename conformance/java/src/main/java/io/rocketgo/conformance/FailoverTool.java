package io.rocketgo.conformance;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * Java client load of the failover suite (conformance/failover, load_java.go):
 * sync sends with unique keys from a few threads and a push consumer that
 * reports every delivery, one flushed stdout line per event, until told to
 * stop on stdin, the count is reached or the deadline passes.
 *
 * <pre>
 * load --namesrv A --topic T --prefix P --count N --threads K --pace-ms M --deadline-ms D
 *      [--send-timeout-ms 3000] [--retries 2] [--poll-namesrv-ms 30000]
 *   READY                                                    (producer and consumer started)
 *   ACK &lt;key&gt; &lt;startUs&gt; &lt;endUs&gt; &lt;sendStatus&gt; &lt;offsetMsgId|-&gt;
 *   ERR &lt;key&gt; &lt;startUs&gt; &lt;endUs&gt; &lt;exceptionClass&gt; &lt;one-line message&gt;
 *   MSG &lt;key&gt; &lt;storeHost ip:port&gt; &lt;commitLogOffset&gt; &lt;queueId&gt; &lt;queueOffset&gt;
 *   SENT acked=&lt;n&gt; failed=&lt;m&gt;                               (every sender has ended)
 *   DONE acked=&lt;n&gt; failed=&lt;m&gt; deliveries=&lt;d&gt; ms=&lt;elapsed&gt;   (the last line)
 *   FATAL &lt;class&gt; &lt;message&gt;                                (exit 2)
 * stdin: "STOP" ends the senders (sends in flight finish); end of input also
 * ends the consumer, then DONE and exit.
 * </pre>
 *
 * Keys are P-&lt;index&gt;, index 0..N-1 handed out across the threads; each
 * thread waits --pace-ms after each send. Times are wall-clock microseconds
 * since the epoch (the Go side compares them with its own clock). The
 * producer uses the client's defaults but for the send timeout, the retries
 * and the route refresh (--poll-namesrv-ms, the client's 30 s default), as
 * the Go client load does. The consumer is CLUSTERING from the first offset.
 */
public final class FailoverTool {
    private FailoverTool() {
    }

    /** One line of output (HaTool's writer: whole lines, DONE last). */
    static void emit(String line) {
        HaTool.emit(line);
    }

    public static void main(String[] argv) {
        // Keep stdout to our lines: client libraries may print.
        System.setOut(System.err);
        int code = 0;
        try {
            if (argv.length == 0 || !argv[0].equals("load")) {
                throw new IllegalArgumentException("usage: FailoverTool load --flag value ...");
            }
            load(new HaTool.Args(java.util.Arrays.copyOfRange(argv, 1, argv.length)));
        } catch (Throwable t) {
            emit("FATAL " + t.getClass().getSimpleName() + " " + HaTool.oneLine(Driver.describe(t)));
            code = 2;
        }
        // Client libraries leave non-daemon threads behind.
        System.exit(code);
    }

    static long nowMicros() {
        Instant n = Instant.now();
        return n.getEpochSecond() * 1_000_000L + n.getNano() / 1000;
    }

    static String hostPort(SocketAddress a) {
        if (a instanceof InetSocketAddress) {
            InetSocketAddress i = (InetSocketAddress) a;
            return (i.getAddress() == null ? i.getHostString() : i.getAddress().getHostAddress()) + ":" + i.getPort();
        }
        return "-";
    }

    static void load(HaTool.Args a) throws Exception {
        long start = System.nanoTime();
        String namesrv = a.str("namesrv", null);
        String topic = a.str("topic", null);
        String prefix = a.str("prefix", null);
        int count = (int) a.num("count", null);
        int threads = (int) Math.max(1, a.num("threads", 1L));
        long pace = a.num("pace-ms", 0L);
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(a.num("deadline-ms", null));
        int poll = (int) a.num("poll-namesrv-ms", 30000L);
        String group = prefix.replaceAll("[^A-Za-z0-9_-]", "_");

        DefaultMQProducer p = new DefaultMQProducer(group + "_p");
        p.setNamesrvAddr(namesrv);
        p.setPollNameServerInterval(poll);
        p.setInstanceName(HaTool.instance(group + "_p"));
        p.setSendMsgTimeout((int) a.num("send-timeout-ms", 3000L));
        p.setRetryTimesWhenSendFailed((int) a.num("retries", 2L));

        AtomicLong deliveries = new AtomicLong();
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group + "_c");
        c.setNamesrvAddr(namesrv);
        c.setPollNameServerInterval(poll);
        c.setInstanceName(HaTool.instance(group + "_c"));
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(topic, "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                String key = m.getKeys() == null || m.getKeys().isEmpty() ? "-" : m.getKeys().replace(' ', ',');
                deliveries.incrementAndGet();
                emit("MSG " + key + " " + hostPort(m.getStoreHost()) + " " + m.getCommitLogOffset() + " "
                    + m.getQueueId() + " " + m.getQueueOffset());
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        p.start();
        c.start();
        emit("READY");

        // stdin: STOP ends the senders, end of input ends the run.
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
                    Message m = new Message(topic, "failover", key, ("failover " + key).getBytes(StandardCharsets.UTF_8));
                    long s = nowMicros();
                    try {
                        SendResult r = p.send(m);
                        long e = nowMicros();
                        String id = r.getOffsetMsgId() == null ? "-" : r.getOffsetMsgId();
                        acked.incrementAndGet();
                        emit("ACK " + key + " " + s + " " + e + " " + r.getSendStatus() + " " + id);
                    } catch (Exception ex) {
                        long e = nowMicros();
                        if (ex instanceof InterruptedException) {
                            Thread.currentThread().interrupt();
                        }
                        failed.incrementAndGet();
                        emit("ERR " + key + " " + s + " " + e + " " + ex.getClass().getSimpleName() + " "
                            + HaTool.oneLine(Driver.describe(ex)));
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
        HaTool.shutdownWithin(5000, () -> {
            c.shutdown();
            p.shutdown();
        });
        emit("DONE acked=" + acked.get() + " failed=" + failed.get() + " deliveries=" + deliveries.get() + " ms=" + HaTool.elapsedMs(start));
    }
}
