package io.rocketgo.conformance;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.impl.MQClientManager;
import org.apache.rocketmq.client.impl.factory.MQClientInstance;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.MessageQueueSelector;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.client.producer.TransactionSendResult;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

/**
 * Load and consume tool for the master/slave (HA) scenarios, driven by the Go
 * orchestrator through javadriver.RunTool. One mode per run; every event is
 * one flushed stdout line, and every mode ends by itself (count and deadline).
 *
 * <pre>
 * produce --namesrv A --topic T --count N [--threads K] --deadline-ms D
 *         [--kinds single,batch,keyed,compressed,delay,txn] [--key-prefix P]
 *         [--group G] [--sync | --async W] [--batch-size 8] [--body-size 128]
 *         [--send-timeout-ms 3000] [--retries 2]
 *   ACK &lt;key&gt; &lt;msgId&gt; &lt;queueId&gt; &lt;queueOffset&gt; &lt;status&gt; &lt;kind&gt;
 *   ERR &lt;key&gt; &lt;exceptionClass&gt; &lt;one-line message&gt;
 *   TXN &lt;key&gt; &lt;msgId&gt; &lt;ROLLBACK_MESSAGE|UNKNOW&gt; &lt;status&gt;
 *   CHECK &lt;key&gt; &lt;msgId&gt; &lt;answer&gt;
 *   DONE acked=&lt;n&gt; failed=&lt;m&gt; rolledback=&lt;r&gt; unresolved=&lt;u&gt; ms=&lt;elapsed&gt;
 * consume|pull --namesrv A --topic T --group G --deadline-ms D --expect N [--from-slave-ok] [--rate R]
 *         [--pull-threshold Q]
 *   MSG &lt;key&gt; &lt;msgId&gt; &lt;queueId&gt; &lt;queueOffset&gt; &lt;brokerName&gt;
 *   ROUTE &lt;brokerName&gt; &lt;id=addr,...|-&gt;   (the client's own route, on change)
 *   PROGRESS distinct=&lt;n&gt; deliveries=&lt;m&gt; ms=&lt;elapsed&gt;   (every second)
 *   DONE distinct=&lt;n&gt; deliveries=&lt;m&gt; ms=&lt;elapsed&gt;
 * offsets --namesrv A --topic T --group G [--all]
 *   OFF &lt;brokerName&gt; &lt;queueId&gt; &lt;offset&gt; &lt;brokerId&gt; &lt;addr&gt;   (-1: none committed)
 *   DONE queues=&lt;n&gt; errors=&lt;m&gt;
 * topic --namesrv A --topic T [--queues 4] [--deadline-ms D] [--wait-slaves]
 *   TOPIC &lt;topic&gt; &lt;brokerName&gt; &lt;masterAddr&gt;
 *   SLAVE-HAS|SLAVE-MISSING &lt;topic&gt; &lt;brokerName&gt; &lt;brokerId&gt; &lt;addr&gt; &lt;ms&gt;   (--wait-slaves)
 *   DONE brokers=&lt;n&gt;
 * </pre>
 *
 * produce: keys are P-&lt;index&gt; (unique per run), tags the kind. Kinds take
 * turns so each gets an even share of the N messages (a batch unit is
 * --batch-size consecutive keys, one ACK per message with queueOffset+i).
 * Sends are synchronous (--sync, the default) unless --async W keeps W
 * callback sends in flight per thread (txn is always synchronous). A failed
 * send prints ERR and the run goes on (no route while a master is down fails
 * fast). txn: of every 10 indexes one is rolled back (TXN ... ROLLBACK_MESSAGE),
 * one answers UNKNOW (TXN ... UNKNOW, then ACK ... txn when the check-back
 * commits it), the rest commit; a txn ACK has queueOffset -1 (assigned at
 * commit) and its END_TRANSACTION is oneway, so it is weaker than a send ACK.
 * delay uses delayTimeLevel 1..3; compressed bodies are 6000 bytes
 * (over the client's 4 KiB compressMsgBodyOverHowmuch). DONE comes after the
 * unknown transactions are resolved or the deadline passed.
 *
 * <p>consume (DefaultMQPushConsumer) and pull (DefaultLitePullConsumer in
 * subscribe mode, auto-commit): CLUSTERING, CONSUME_FROM_FIRST_OFFSET; every
 * delivery is printed (redeliveries too); the run ends at --expect distinct
 * keys or the deadline, then shuts the consumer down (committing offsets,
 * at most 10 s more) and prints DONE. Without --from-slave-ok it first waits
 * for a route with a master; with it any route will do (a slave-only one).
 * --rate paces deliveries (per second) so a test can act in the middle;
 * --pull-threshold caps the messages the client caches per queue (Java's
 * pullThresholdForQueue, 1000) so that, after a kill, it must pull again.
 *
 * <p>offsets: QUERY_CONSUMER_OFFSET per queue of the topic's route, to the
 * master, or to the lowest slave when the master is not in the route (--all:
 * every broker of the route).
 *
 * <p>produce, consume and pull take --poll-namesrv-ms (the client's route
 * refresh, Java's 30000 default). offsets exits 1 when a query failed. A
 * fatal error (bad arguments, a client that does not start) prints
 * {@code FATAL <class> <message>} and exits 2. Compiles against 4.9.8 and
 * 5.3.3: types that moved packages are only used through {@code var} or
 * reflection.
 */
public final class HaTool {
    private HaTool() {
    }

    private static final PrintStream OUT = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);

    /** Set once DONE is out: the DONE line is always the last one. */
    private static boolean finished; // guarded by OUT

    /**
     * Writes one line and flushes it (lines from many threads never
     * interleave). Nothing is written after DONE (a check-back arriving while
     * the producer shuts down is still answered, but not reported).
     */
    static void emit(String line) {
        synchronized (OUT) {
            if (finished) {
                return;
            }
            finished = line.startsWith("DONE ");
            OUT.print(line);
            OUT.print('\n');
            OUT.flush();
        }
    }

    public static void main(String[] argv) {
        // The 4.9 client logs some lines to System.out: keep stdout ours.
        System.setOut(System.err);
        int code = 0;
        try {
            if (argv.length == 0) {
                throw new IllegalArgumentException("usage: HaTool produce|consume|pull|offsets|topic --flag value ...");
            }
            Args a = new Args(Arrays.copyOfRange(argv, 1, argv.length));
            switch (argv[0]) {
                case "produce": produce(a); break;
                case "consume": consume(a, false); break;
                case "pull": consume(a, true); break;
                case "offsets": code = offsets(a); break;
                case "topic": topic(a); break;
                default: throw new IllegalArgumentException("unknown mode " + argv[0]);
            }
        } catch (Throwable t) {
            emit("FATAL " + t.getClass().getSimpleName() + " " + oneLine(Driver.describe(t)));
            code = 2;
        }
        // Client libraries leave non-daemon threads behind.
        System.exit(code);
    }

    // ---- arguments -------------------------------------------------------

    /** {@code --name value} pairs; {@code --sync}, {@code --from-slave-ok}, {@code --all} take no value. */
    static final class Args {
        private static final Set<String> FLAGS = Set.of("sync", "from-slave-ok", "all", "wait-slaves");
        private final Map<String, String> m = new HashMap<>();

        Args(String[] args) {
            for (int i = 0; i < args.length; i++) {
                if (!args[i].startsWith("--")) {
                    throw new IllegalArgumentException("unexpected argument " + args[i]);
                }
                String k = args[i].substring(2);
                if (FLAGS.contains(k)) {
                    m.put(k, "true");
                } else if (i + 1 < args.length) {
                    m.put(k, args[++i]);
                } else {
                    throw new IllegalArgumentException("--" + k + " needs a value");
                }
            }
        }

        String str(String k, String def) {
            String v = m.get(k);
            if (v == null && def == null) {
                throw new IllegalArgumentException("missing --" + k);
            }
            return v == null ? def : v;
        }

        long num(String k, Long def) {
            String v = m.get(k);
            if (v == null) {
                if (def == null) {
                    throw new IllegalArgumentException("missing --" + k);
                }
                return def;
            }
            return Long.parseLong(v);
        }

        boolean flag(String k) {
            return m.containsKey(k);
        }
    }

    static String oneLine(String s) {
        String t = s == null ? "" : s.replaceAll("\\s+", " ").trim();
        return t.length() > 300 ? t.substring(0, 300) : t;
    }

    static String instance(String group) {
        return group + "_" + ProcessHandle.current().pid() + "_" + System.nanoTime();
    }

    static long elapsedMs(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    // ---- produce ---------------------------------------------------------

    static final List<String> KINDS = List.of("single", "batch", "keyed", "compressed", "delay", "txn");

    /**
     * Hands out message indexes, each kind in turn (round-robin) but keeping
     * the message count per kind even: a batch unit takes batchSize
     * consecutive indexes, so the next units go to the other kinds.
     */
    static final class Alloc {
        private final String[] kinds;
        private final long[] given;
        private final int count, batchSize;
        private int next, turn;

        Alloc(String[] kinds, int count, int batchSize) {
            this.kinds = kinds;
            this.given = new long[kinds.length];
            this.count = count;
            this.batchSize = batchSize;
        }

        /** {kindIndex, first, size} or null when every index is handed out. */
        synchronized int[] take() {
            if (next >= count) {
                return null;
            }
            int k = turn;
            for (int i = 1; i < kinds.length; i++) {
                int c = (turn + i) % kinds.length;
                if (given[c] < given[k]) {
                    k = c;
                }
            }
            turn = (k + 1) % kinds.length;
            int size = kinds[k].equals("batch") ? Math.min(batchSize, count - next) : 1;
            int[] u = {k, next, size};
            next += size;
            given[k] += size;
            return u;
        }
    }

    static final class Producer {
        final String topic, prefix;
        final int bodySize;
        final long deadline; // nanoTime
        final long sendTimeout;
        DefaultMQProducer plain;
        TransactionMQProducer txn;
        Semaphore window; // async mode only
        int windowPermits;
        final AtomicLong acked = new AtomicLong(), failed = new AtomicLong(), rolledBack = new AtomicLong();
        /** UNKNOW half messages waiting for a check-back: key -> {msgId, queueId, status}. */
        final Map<String, String[]> pending = new ConcurrentHashMap<>();

        Producer(Args a) {
            topic = a.str("topic", null);
            prefix = a.str("key-prefix", "ha");
            bodySize = (int) a.num("body-size", 128L);
            deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(a.num("deadline-ms", null));
            sendTimeout = a.num("send-timeout-ms", 3000L);
        }

        boolean expired() {
            return System.nanoTime() - deadline >= 0;
        }

        String key(int n) {
            return prefix + "-" + n;
        }

        /** The index n of key P-n, or -1. */
        int index(String key) {
            if (key == null || !key.startsWith(prefix + "-")) {
                return -1;
            }
            try {
                return Integer.parseInt(key.substring(prefix.length() + 1));
            } catch (NumberFormatException e) {
                return -1;
            }
        }

        Message message(String kind, int n) {
            int size = kind.equals("compressed") ? Math.max(bodySize, 6000) : bodySize;
            StringBuilder b = new StringBuilder(size + 32).append(key(n)).append(' ').append(kind).append(' ');
            while (b.length() < size) {
                b.append("rocketgo-ha-");
            }
            Message m = new Message(topic, kind, key(n), b.toString().getBytes(StandardCharsets.UTF_8));
            if (kind.equals("delay")) {
                m.setDelayTimeLevel(1 + n % 3);
            }
            return m;
        }

        void ack(String key, String msgId, int queueId, long queueOffset, String status, String kind) {
            acked.incrementAndGet();
            emit("ACK " + key + " " + msgId + " " + queueId + " " + queueOffset + " " + status + " " + kind);
        }

        void err(String key, Throwable t) {
            failed.incrementAndGet();
            emit("ERR " + key + " " + t.getClass().getSimpleName() + " " + oneLine(Driver.describe(t)));
        }

        void acked(String kind, List<String> keys, SendResult r) {
            String[] ids = r.getMsgId() == null ? new String[0] : r.getMsgId().split(",");
            MessageQueue mq = r.getMessageQueue();
            int qid = mq == null ? -1 : mq.getQueueId();
            for (int i = 0; i < keys.size(); i++) {
                String id = ids.length == keys.size() ? ids[i] : r.getMsgId();
                ack(keys.get(i), id, qid, r.getQueueOffset() + i, String.valueOf(r.getSendStatus()), kind);
            }
        }

        /** Local transaction decision by message index: of every 10, one rolled back (n%10==3), one unknown (n%10==7), eight committed. */
        LocalTransactionState decide(int n) {
            switch (Math.floorMod(n, 10)) {
                case 3: return LocalTransactionState.ROLLBACK_MESSAGE;
                case 7: return LocalTransactionState.UNKNOW;
                default: return LocalTransactionState.COMMIT_MESSAGE;
            }
        }
    }

    static void produce(Args a) throws Exception {
        long start = System.nanoTime();
        Producer p = new Producer(a);
        String namesrv = a.str("namesrv", null);
        int count = (int) a.num("count", null);
        int threads = (int) Math.max(1, a.num("threads", 1L));
        int batchSize = (int) Math.max(1, a.num("batch-size", 8L));
        int retries = (int) a.num("retries", 2L);
        long async = a.flag("sync") ? 0 : a.num("async", 0L);
        String group = a.str("group", "hatool_p_" + p.prefix.replaceAll("[^A-Za-z0-9_-]", "_"));
        String[] kinds = a.str("kinds", "single").split(",");
        for (String k : kinds) {
            if (!KINDS.contains(k)) {
                throw new IllegalArgumentException("unknown kind " + k + ", want one of " + KINDS);
            }
        }
        List<String> kindList = Arrays.asList(kinds);
        if (kindList.stream().anyMatch(k -> !k.equals("txn"))) {
            p.plain = new DefaultMQProducer(group);
            p.plain.setNamesrvAddr(namesrv);
            p.plain.setPollNameServerInterval((int) a.num("poll-namesrv-ms", 30000L));
            p.plain.setInstanceName(instance(group));
            p.plain.setSendMsgTimeout((int) p.sendTimeout);
            p.plain.setRetryTimesWhenSendFailed(retries);
            p.plain.setRetryTimesWhenSendAsyncFailed(retries);
            p.plain.start();
        }
        if (kindList.contains("txn")) {
            p.txn = new TransactionMQProducer(group + "_txn");
            p.txn.setNamesrvAddr(namesrv);
            p.txn.setPollNameServerInterval((int) a.num("poll-namesrv-ms", 30000L));
            p.txn.setInstanceName(instance(group + "_txn"));
            p.txn.setSendMsgTimeout((int) p.sendTimeout);
            p.txn.setRetryTimesWhenSendFailed(retries);
            p.txn.setTransactionListener(new TransactionListener() {
                @Override
                public LocalTransactionState executeLocalTransaction(Message m, Object arg) {
                    return p.decide(p.index(m.getKeys()));
                }

                @Override
                public LocalTransactionState checkLocalTransaction(MessageExt m) {
                    int n = p.index(m.getKeys());
                    // An unknown one is committed on check-back; a committed one
                    // whose oneway END_TRANSACTION was lost stays committed.
                    LocalTransactionState s = n >= 0 && p.decide(n) == LocalTransactionState.ROLLBACK_MESSAGE
                        ? LocalTransactionState.ROLLBACK_MESSAGE : LocalTransactionState.COMMIT_MESSAGE;
                    String id = m.getMsgId();
                    emit("CHECK " + m.getKeys() + " " + id + " " + s);
                    String[] was = m.getKeys() == null ? null : p.pending.remove(m.getKeys());
                    if (was != null && s == LocalTransactionState.COMMIT_MESSAGE) {
                        p.ack(m.getKeys(), was[0], Integer.parseInt(was[1]), -1, was[2], "txn");
                    }
                    return s;
                }
            });
            p.txn.start();
        }
        if (async > 0) {
            p.windowPermits = (int) (async * threads);
            p.window = new Semaphore(p.windowPermits);
        }
        Alloc alloc = new Alloc(kinds, count, batchSize);
        MessageQueueSelector byKey = (mqs, msg, arg) -> mqs.get(Math.floorMod(arg.hashCode(), mqs.size()));
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread w = new Thread(() -> {
                int[] u;
                while (!p.expired() && (u = alloc.take()) != null) {
                    sendUnit(p, kinds[u[0]], u[1], u[2], byKey);
                }
            }, "produce-" + t);
            w.start();
            workers.add(w);
        }
        for (Thread w : workers) {
            w.join();
        }
        if (p.window != null) {
            // In-flight async sends end by their own timeout.
            long wait = Math.max(0, TimeUnit.NANOSECONDS.toMillis(p.deadline - System.nanoTime())) + p.sendTimeout;
            if (p.window.tryAcquire(p.windowPermits, wait, TimeUnit.MILLISECONDS)) {
                p.window.release(p.windowPermits);
            }
        }
        // Unknown transactions resolve through the broker's check-back.
        while (!p.pending.isEmpty() && !p.expired()) {
            Thread.sleep(100);
        }
        emit("DONE acked=" + p.acked.get() + " failed=" + p.failed.get() + " rolledback=" + p.rolledBack.get()
            + " unresolved=" + p.pending.size() + " ms=" + elapsedMs(start));
        shutdownWithin(5000, () -> {
            if (p.plain != null) {
                p.plain.shutdown();
            }
            if (p.txn != null) {
                p.txn.shutdown();
            }
        });
    }

    static void sendUnit(Producer p, String kind, int first, int size, MessageQueueSelector byKey) {
        List<String> keys = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            keys.add(p.key(first + i));
        }
        boolean async = p.window != null && !kind.equals("txn");
        if (async) {
            try {
                p.window.acquire();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                for (String k : keys) {
                    p.err(k, e);
                }
                return;
            }
        }
        try {
            switch (kind) {
                case "batch": {
                    List<Message> batch = new ArrayList<>(size);
                    for (int i = 0; i < size; i++) {
                        batch.add(p.message(kind, first + i));
                    }
                    if (async) {
                        p.plain.send((Collection<Message>) batch, callback(p, kind, keys), p.sendTimeout);
                    } else {
                        p.acked(kind, keys, p.plain.send((Collection<Message>) batch, p.sendTimeout));
                    }
                    return;
                }
                case "keyed": {
                    Message m = p.message(kind, first);
                    if (async) {
                        p.plain.send(m, byKey, keys.get(0), callback(p, kind, keys), p.sendTimeout);
                    } else {
                        p.acked(kind, keys, p.plain.send(m, byKey, keys.get(0), p.sendTimeout));
                    }
                    return;
                }
                case "txn": {
                    TransactionSendResult r = p.txn.sendMessageInTransaction(p.message(kind, first), null);
                    MessageQueue mq = r.getMessageQueue();
                    String qid = String.valueOf(mq == null ? -1 : mq.getQueueId());
                    String status = String.valueOf(r.getSendStatus());
                    LocalTransactionState st = r.getLocalTransactionState();
                    if (st == LocalTransactionState.COMMIT_MESSAGE) {
                        // The real queue offset is assigned when the broker commits.
                        p.ack(keys.get(0), r.getMsgId(), Integer.parseInt(qid), -1, status, kind);
                    } else if (st == LocalTransactionState.UNKNOW) {
                        p.pending.put(keys.get(0), new String[] {r.getMsgId(), qid, status});
                        emit("TXN " + keys.get(0) + " " + r.getMsgId() + " " + st + " " + status);
                    } else {
                        p.rolledBack.incrementAndGet();
                        emit("TXN " + keys.get(0) + " " + r.getMsgId() + " " + st + " " + status);
                    }
                    return;
                }
                default: { // single, compressed, delay
                    Message m = p.message(kind, first);
                    if (async) {
                        p.plain.send(m, callback(p, kind, keys), p.sendTimeout);
                    } else {
                        p.acked(kind, keys, p.plain.send(m, p.sendTimeout));
                    }
                }
            }
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            if (async) {
                // Refused before it was issued: no callback will come.
                p.window.release();
            }
            for (String k : keys) {
                p.err(k, e);
            }
        }
    }

    static SendCallback callback(Producer p, String kind, List<String> keys) {
        return new SendCallback() {
            @Override
            public void onSuccess(SendResult r) {
                try {
                    p.acked(kind, keys, r);
                } finally {
                    p.window.release();
                }
            }

            @Override
            public void onException(Throwable e) {
                try {
                    for (String k : keys) {
                        p.err(k, e);
                    }
                } finally {
                    p.window.release();
                }
            }
        };
    }

    /** Runs r on a daemon thread and waits at most ms for it. */
    static void shutdownWithin(long ms, Runnable r) throws InterruptedException {
        Thread t = new Thread(() -> {
            try {
                r.run();
            } catch (RuntimeException e) {
                // a client that failed to start
            }
        }, "shutdown");
        t.setDaemon(true);
        t.start();
        t.join(ms);
    }

    // ---- consume / pull --------------------------------------------------

    static final class Seen {
        final Set<String> distinct = ConcurrentHashMap.newKeySet();
        final AtomicLong deliveries = new AtomicLong();
        final long rate, deadline; // rate: deliveries per second, 0 = unpaced
        private long nextDue; // guarded by this

        Seen(long rate, long deadline) {
            this.rate = rate;
            this.deadline = deadline;
        }

        /** When the next delivery may be reported: one every 1/rate s, from the first one on. */
        synchronized long due() {
            long now = System.nanoTime();
            long due = nextDue - now > 0 ? nextDue : now;
            nextDue = due + 1_000_000_000L / rate;
            return due;
        }

        void add(MessageExt m, String brokerName) {
            String key = m.getKeys() == null || m.getKeys().isEmpty() ? "-" : m.getKeys().replace(' ', ',');
            if (rate > 0) {
                // Paced so a test can act in the middle of a run (never past the deadline).
                long due = due();
                long wait = Math.min(due, deadline) - System.nanoTime();
                if (wait > 0) {
                    try {
                        TimeUnit.NANOSECONDS.sleep(wait);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
            deliveries.incrementAndGet();
            distinct.add(key);
            emit("MSG " + key + " " + m.getMsgId() + " " + m.getQueueId() + " " + m.getQueueOffset() + " "
                + (brokerName == null ? "-" : brokerName));
        }
    }

    static void consume(Args a, boolean pull) throws Exception {
        long start = System.nanoTime();
        String namesrv = a.str("namesrv", null);
        String topic = a.str("topic", null);
        String group = a.str("group", null);
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(a.num("deadline-ms", null));
        long expect = a.num("expect", null);
        awaitRoute(namesrv, topic, !a.flag("from-slave-ok"), deadline);
        Seen seen = new Seen(a.num("rate", 0L), deadline);
        MQClientInstance factory;
        Runnable close;
        DefaultLitePullConsumer lite = null;
        if (pull) {
            lite = new DefaultLitePullConsumer(group);
            lite.setNamesrvAddr(namesrv);
            lite.setPollNameServerInterval((int) a.num("poll-namesrv-ms", 30000L));
            lite.setInstanceName(instance(group));
            lite.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
            lite.setAutoCommit(true);
            lite.setPollTimeoutMillis(1000);
            if (a.num("pull-threshold", 0L) > 0) {
                lite.setPullThresholdForQueue((int) a.num("pull-threshold", 0L));
            }
            lite.subscribe(topic, "*");
            lite.start();
            factory = clientOf(lite);
            DefaultLitePullConsumer l = lite;
            close = () -> {
                l.commitSync();
                l.shutdown();
            };
        } else {
            DefaultMQPushConsumer pc = new DefaultMQPushConsumer(group);
            pc.setNamesrvAddr(namesrv);
            pc.setPollNameServerInterval((int) a.num("poll-namesrv-ms", 30000L));
            pc.setInstanceName(instance(group));
            pc.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
            if (a.num("pull-threshold", 0L) > 0) {
                pc.setPullThresholdForQueue((int) a.num("pull-threshold", 0L));
            }
            pc.subscribe(topic, "*");
            pc.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
                for (MessageExt m : msgs) {
                    String bn = m.getBrokerName() != null ? m.getBrokerName()
                        : ctx.getMessageQueue() == null ? null : ctx.getMessageQueue().getBrokerName();
                    seen.add(m, bn);
                }
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            });
            pc.start();
            factory = pc.getDefaultMQPushConsumerImpl().getmQClientFactory();
            close = pc::shutdown;
        }
        String route = null;
        long nextRoute = 0, nextProgress = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        while (seen.distinct.size() < expect && System.nanoTime() - deadline < 0) {
            if (System.nanoTime() - nextRoute >= 0) {
                route = printRoute(factory, topic, route);
                nextRoute = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500);
            }
            if (System.nanoTime() - nextProgress >= 0) {
                emit("PROGRESS distinct=" + seen.distinct.size() + " deliveries=" + seen.deliveries.get() + " ms=" + elapsedMs(start));
                nextProgress += TimeUnit.SECONDS.toNanos(1);
            }
            if (lite != null) {
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                for (MessageExt m : lite.poll(Math.max(1, Math.min(500, left)))) {
                    seen.add(m, m.getBrokerName());
                }
            } else {
                Thread.sleep(50);
            }
        }
        // Shutdown commits the consumed offsets (bounded: a dead master's
        // address may still be in the client's table).
        shutdownWithin(10000, close);
        emit("DONE distinct=" + seen.distinct.size() + " deliveries=" + seen.deliveries.get() + " ms=" + elapsedMs(start));
    }

    /** The lite pull consumer's client instance (its impl field differs by version; found by type). */
    static MQClientInstance clientOf(DefaultLitePullConsumer lite) throws Exception {
        for (var f : DefaultLitePullConsumer.class.getDeclaredFields()) {
            if (f.getName().equals("defaultLitePullConsumerImpl")) {
                f.setAccessible(true);
                Object impl = f.get(lite);
                for (var g : impl.getClass().getDeclaredFields()) {
                    if (MQClientInstance.class.isAssignableFrom(g.getType())) {
                        g.setAccessible(true);
                        return (MQClientInstance) g.get(impl);
                    }
                }
            }
        }
        return null;
    }

    /** Prints the client's route of topic when it differs from last; returns it. */
    static String printRoute(MQClientInstance factory, String topic, String last) {
        if (factory == null) {
            return last;
        }
        var route = factory.getTopicRouteTable().get(topic);
        StringBuilder all = new StringBuilder();
        if (route != null) {
            Map<String, TreeMap<Long, String>> byName = new TreeMap<>();
            for (var bd : route.getBrokerDatas()) {
                byName.put(bd.getBrokerName(), new TreeMap<>(bd.getBrokerAddrs()));
            }
            for (var e : byName.entrySet()) {
                StringBuilder b = new StringBuilder();
                for (var id : e.getValue().entrySet()) {
                    b.append(b.length() == 0 ? "" : ",").append(id.getKey()).append('=').append(id.getValue());
                }
                all.append("ROUTE ").append(e.getKey()).append(' ').append(b.length() == 0 ? "-" : b).append('\n');
            }
        }
        String now = all.toString();
        if (!now.equals(last)) {
            for (String line : now.split("\n")) {
                if (!line.isEmpty()) {
                    emit(line);
                }
            }
        }
        return now;
    }

    /** Waits (to the deadline) for a route of topic, with a master when wantMaster. */
    static void awaitRoute(String namesrv, String topic, boolean wantMaster, long deadline) throws Exception {
        DefaultMQAdminExt adm = admin(namesrv);
        try {
            while (System.nanoTime() - deadline < 0) {
                try {
                    var route = adm.examineTopicRouteInfo(topic);
                    boolean ok = route != null && !route.getQueueDatas().isEmpty();
                    if (ok && wantMaster) {
                        ok = route.getBrokerDatas().stream().anyMatch(bd -> bd.getBrokerAddrs().get(0L) != null);
                    }
                    if (ok) {
                        return;
                    }
                } catch (Exception e) {
                    // TOPIC_NOT_EXIST until it is created
                }
                Thread.sleep(200);
            }
        } finally {
            adm.shutdown();
        }
    }

    static DefaultMQAdminExt admin(String namesrv) throws Exception {
        DefaultMQAdminExt adm = new DefaultMQAdminExt(5000);
        adm.setNamesrvAddr(namesrv);
        adm.setInstanceName(instance("hatool_admin"));
        adm.start();
        return adm;
    }

    // ---- offsets ---------------------------------------------------------

    /** Prints the group's committed offset of every queue of topic; returns the exit code. */
    static int offsets(Args a) throws Exception {
        String namesrv = a.str("namesrv", null);
        String topic = a.str("topic", null);
        String group = a.str("group", null);
        boolean all = a.flag("all");
        DefaultMQAdminExt adm = admin(namesrv);
        int queues = 0, errors = 0;
        try {
            Object api = MQClientManager.getInstance().getOrCreateMQClientInstance(adm).getMQClientAPIImpl();
            var route = adm.examineTopicRouteInfo(topic);
            Map<String, Integer> readQueues = new TreeMap<>();
            for (var qd : route.getQueueDatas()) {
                readQueues.put(qd.getBrokerName(), qd.getReadQueueNums());
            }
            Map<String, TreeMap<Long, String>> addrs = new TreeMap<>();
            for (var bd : route.getBrokerDatas()) {
                addrs.put(bd.getBrokerName(), new TreeMap<>(bd.getBrokerAddrs()));
            }
            for (var e : readQueues.entrySet()) {
                TreeMap<Long, String> ids = addrs.getOrDefault(e.getKey(), new TreeMap<>());
                // Without --all: the master, or the lowest slave when the master is gone.
                Set<Long> ask = new HashSet<>(all || ids.isEmpty() ? ids.keySet() : Set.of(ids.firstKey()));
                for (int q = 0; q < e.getValue(); q++) {
                    queues++;
                    for (var id : ids.entrySet()) {
                        if (!ask.contains(id.getKey())) {
                            continue;
                        }
                        try {
                            long off = queryOffset(api, id.getValue(), group, topic, e.getKey(), q);
                            emit("OFF " + e.getKey() + " " + q + " " + off + " " + id.getKey() + " " + id.getValue());
                        } catch (Exception ex) {
                            errors++;
                            emit("ERR " + e.getKey() + ":" + q + " " + ex.getClass().getSimpleName() + " " + oneLine(Driver.describe(ex)));
                        }
                    }
                }
            }
        } finally {
            adm.shutdown();
        }
        emit("DONE queues=" + queues + " errors=" + errors);
        return errors == 0 ? 0 : 1;
    }

    /** QUERY_CONSUMER_OFFSET against one broker address; -1 when the broker has none (QUERY_NOT_FOUND). */
    static long queryOffset(Object api, String addr, String group, String topic, String brokerName, int queueId) throws Exception {
        Object h = Driver.newOf("org.apache.rocketmq.remoting.protocol.header.QueryConsumerOffsetRequestHeader",
            "org.apache.rocketmq.common.protocol.header.QueryConsumerOffsetRequestHeader");
        Driver.call(h, "setConsumerGroup", group);
        Driver.call(h, "setTopic", topic);
        Driver.call(h, "setQueueId", Integer.valueOf(queueId));
        try {
            Driver.call(h, "setBrokerName", brokerName); // 5.x RpcRequestHeader
        } catch (NoSuchMethodException e) {
            // 4.9 headers carry no broker name
        }
        for (Method m : api.getClass().getMethods()) {
            Class<?>[] pt = m.getParameterTypes();
            if (m.getName().equals("queryConsumerOffset") && pt.length == 3 && pt[1].isInstance(h)) {
                try {
                    return (Long) m.invoke(api, addr, h, 5000L);
                } catch (java.lang.reflect.InvocationTargetException ite) {
                    Throwable c = ite.getCause();
                    if (c instanceof MQBrokerException && ((MQBrokerException) c).getResponseCode() == 22) {
                        return -1; // QUERY_NOT_FOUND
                    }
                    if (c instanceof Exception) {
                        throw (Exception) c;
                    }
                    throw ite;
                }
            }
        }
        throw new NoSuchMethodException("MQClientAPIImpl.queryConsumerOffset");
    }

    // ---- topic -----------------------------------------------------------

    /** Creates topic on every master of the cluster(s) and waits for its route. */
    static void topic(Args a) throws Exception {
        long start = System.nanoTime();
        String namesrv = a.str("namesrv", null);
        String topic = a.str("topic", null);
        int queues = (int) a.num("queues", 4L);
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(a.num("deadline-ms", 30000L));
        DefaultMQAdminExt adm = admin(namesrv);
        int brokers = 0;
        try {
            // Brokers register a few seconds after they start.
            while (brokers == 0 && System.nanoTime() - deadline < 0) {
                var cluster = Scenarios.orNull(adm::examineBrokerClusterInfo);
                if (cluster != null) {
                    for (var bd : cluster.getBrokerAddrTable().values()) {
                        String master = bd.getBrokerAddrs().get(0L);
                        if (master == null) {
                            continue;
                        }
                        adm.createAndUpdateTopicConfig(master, new TopicConfig(topic, queues, queues, 6));
                        emit("TOPIC " + topic + " " + bd.getBrokerName() + " " + master);
                        brokers++;
                    }
                }
                if (brokers == 0) {
                    Thread.sleep(200);
                }
            }
            if (a.flag("wait-slaves")) {
                awaitSlaves(adm, topic, start, deadline);
            }
        } finally {
            adm.shutdown();
        }
        awaitRoute(namesrv, topic, true, deadline);
        emit("DONE brokers=" + brokers);
    }

    /**
     * Waits (to the deadline) until every slave in the cluster lists topic in
     * its topic config (a Java 5.x slave copies the master's every 60 s).
     */
    static void awaitSlaves(DefaultMQAdminExt adm, String topic, long start, long deadline) throws Exception {
        var cluster = adm.examineBrokerClusterInfo();
        for (var bd : cluster.getBrokerAddrTable().values()) {
            for (var id : new TreeMap<>(bd.getBrokerAddrs()).entrySet()) {
                if (id.getKey() == 0L) {
                    continue;
                }
                boolean has = false;
                while (!has && System.nanoTime() - deadline < 0) {
                    var all = Scenarios.orNull(() -> adm.getAllTopicConfig(id.getValue(), 5000));
                    has = all != null && all.getTopicConfigTable().containsKey(topic);
                    if (!has) {
                        Thread.sleep(500);
                    }
                }
                emit((has ? "SLAVE-HAS " : "SLAVE-MISSING ") + topic + " " + bd.getBrokerName() + " " + id.getKey() + " "
                    + id.getValue() + " " + elapsedMs(start));
            }
        }
    }
}
