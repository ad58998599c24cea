package io.rocketgo.conformance.grpc;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.ConsumeResult;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;
import org.apache.rocketmq.client.apis.consumer.PushConsumer;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.SendReceipt;
import org.apache.rocketmq.client.apis.producer.Transaction;
import org.apache.rocketmq.client.apis.producer.TransactionResolution;

/**
 * The official RocketMQ 5 gRPC client (rocketmq-client-java) against one
 * proxy endpoint: every argument {@code name:timeoutSeconds} is a scenario,
 * run each on its own thread, and every one ends with one line
 *
 * <pre>
 *   PASS name seconds[: detail]
 *   FAIL name seconds: reason
 * </pre>
 *
 * System properties: {@code endpoint} (ip:port of the gRPC port),
 * {@code prefix} (topic {@code prefix_name}, group {@code prefix_name_g};
 * the Go harness creates both with the type and group settings the
 * scenario needs: conformance/grpcsdk). Never a sleep for synchronisation:
 * every wait is a receive or a latch with a deadline.
 */
public final class Driver {
    private static final ClientServiceProvider SP = ClientServiceProvider.loadService();
    private static String endpoint;
    private static String prefix;

    private Driver() {
    }

    /** A failed check: the scenario's FAIL reason. */
    static final class Check extends Exception {
        Check(String m) {
            super(m);
        }
    }

    interface Body {
        String run(String topic, String group, long deadline) throws Exception;
    }

    public static void main(String[] args) throws Exception {
        endpoint = System.getProperty("endpoint");
        prefix = System.getProperty("prefix", "g");
        Map<String, Body> all = new HashMap<>();
        all.put("send_normal", Driver::sendNormal);
        all.put("send_fifo", Driver::sendFifo);
        all.put("send_delay", Driver::sendDelay);
        all.put("recall", Driver::recall);
        all.put("send_transaction", Driver::sendTransaction);
        all.put("simple_ack", Driver::simpleAck);
        all.put("simple_change_invisible", Driver::simpleChangeInvisible);
        all.put("simple_redeliver", Driver::simpleRedeliver);
        all.put("push_retry_dlq", Driver::pushRetryDlq);
        all.put("push_auto_renew", Driver::pushAutoRenew);
        all.put("push_no_auto_renew", Driver::pushNoAutoRenew);
        all.put("fifo_redeliver", Driver::fifoRedeliver);
        all.put("filter_tag", Driver::filterTag);
        all.put("filter_sql", Driver::filterSql);
        all.put("transaction_check", Driver::transactionCheck);
        all.put("shared_4x", Driver::shared4x);
        all.put("admin_relay", Driver::adminRelay);
        all.put("auth_pubsub", Driver::authPubSub);
        all.put("refused_send", Driver::refusedSend);
        all.put("refused_receive", Driver::refusedReceive);
        ExecutorService pool = Executors.newCachedThreadPool();
        List<Future<?>> fs = new ArrayList<>();
        for (String a : args) {
            String[] p = a.split(":");
            String name = p[0];
            long secs = p.length > 1 ? Long.parseLong(p[1]) : 60;
            // name@label: the scenario with the credentials, TLS switch and
            // expectation of that label (ak.L, sk.L, ssl.L, expect.L).
            String base = name.contains("@") ? name.substring(0, name.indexOf('@')) : name;
            String label = name.contains("@") ? name.substring(name.indexOf('@') + 1) : "";
            fs.add(pool.submit(() -> {
                LABEL.set(label);
                runOne(name, base, all.get(base), secs);
            }));
        }
        for (Future<?> f : fs) {
            f.get();
        }
        System.out.flush();
        System.exit(0);
    }

    private static void runOne(String name, String base, Body b, long secs) {
        long t0 = System.nanoTime();
        String line;
        try {
            if (b == null) {
                throw new Check("unknown scenario");
            }
            // topic / group (or topic.LABEL / group.LABEL) override the names.
            String topic = labelled("topic").isEmpty() ? System.getProperty("topic", prefix + "_" + base) : labelled("topic");
            String group = labelled("group").isEmpty() ? System.getProperty("group", prefix + "_" + base + "_g") : labelled("group");
            String detail = b.run(topic, group, System.currentTimeMillis() + secs * 1000);
            line = "PASS " + name + " " + elapsed(t0) + (detail == null ? "" : ": " + oneLine(detail));
        } catch (Throwable e) {
            String why = e instanceof Check ? e.getMessage() : e.getClass().getSimpleName() + ": " + e.getMessage();
            line = "FAIL " + name + " " + elapsed(t0) + ": " + oneLine(why);
        }
        synchronized (System.out) {
            System.out.println(line);
            System.out.flush();
        }
    }

    private static String elapsed(long t0) {
        return String.format("%.1f", (System.nanoTime() - t0) / 1e9);
    }

    private static String oneLine(String s) {
        return String.valueOf(s).replace('\n', ' ').replace('\r', ' ');
    }

    /** The label of the scenario this thread runs ("" for none). */
    private static final ThreadLocal<String> LABEL = ThreadLocal.withInitial(() -> "");

    private static String labelled(String key) {
        return System.getProperty(key + "." + LABEL.get(), "");
    }

    /**
     * The client configuration: TLS when ssl.LABEL is true (the SDK trusts
     * any server certificate), credentials when ak.LABEL is set
     * (StaticSessionCredentialsProvider: the SDK signs every call with
     * MQv2-HMAC-SHA1 over x-mq-date-time).
     */
    private static ClientConfiguration conf() {
        org.apache.rocketmq.client.apis.ClientConfigurationBuilder b = ClientConfiguration.newBuilder()
            .setEndpoints(endpoint).enableSsl(Boolean.parseBoolean(labelled("ssl")))
            .setRequestTimeout(Duration.ofSeconds(10));
        if (!labelled("ak").isEmpty()) {
            b.setCredentialProvider(new org.apache.rocketmq.client.apis.StaticSessionCredentialsProvider(
                labelled("ak"), labelled("sk")));
        }
        return b.build();
    }

    /** Every message of t's cause chain, with the exception classes. */
    private static String chain(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null && sb.length() < 4000; c = c.getCause()) {
            sb.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage()).append(" <- ");
        }
        return sb.toString();
    }

    /** PASS when t's chain contains expect.LABEL (any failure when it is empty). */
    private static String expectRefusal(Throwable t) throws Check {
        String why = chain(t);
        String want = labelled("expect");
        require(why.contains(want), "refused, but not with \"" + want + "\": " + why);
        return "refused: " + why;
    }

    /** A few messages sent, received and acked with the label's client. */
    private static String authPubSub(String topic, String group, long deadline) throws Exception {
        int n = 3;
        Set<String> sent = new HashSet<>();
        try (Producer p = producer(topic); SimpleConsumer c = simple(topic, group, all())) {
            for (int i = 0; i < n; i++) {
                String b = LABEL.get() + "-" + i + "-" + System.nanoTime();
                p.send(msg(topic, b));
                sent.add(b);
            }
            Set<String> got = new HashSet<>();
            while (!got.containsAll(sent) && System.currentTimeMillis() < deadline) {
                for (MessageView m : c.receive(16, Duration.ofSeconds(20))) {
                    got.add(body(m));
                    c.ack(m);
                }
            }
            require(got.containsAll(sent), "received " + got + " of " + sent);
        }
        return "sent, received and acked " + n;
    }

    /**
     * One send must fail with expect.LABEL. The producer declares no topics:
     * the SDK's start would otherwise wait for its settings, which the
     * proxy refuses without Pub on them (the start then times out without
     * the refusal's text).
     */
    private static String refusedSend(String topic, String group, long deadline) throws Exception {
        try (Producer p = SP.newProducerBuilder().setClientConfiguration(conf()).build()) {
            SendReceipt r = p.send(msg(topic, "refused-" + LABEL.get()));
            throw new Check("send accepted: " + r.getMessageId());
        } catch (Check c) {
            throw c;
        } catch (Throwable t) {
            return expectRefusal(t);
        }
    }

    /**
     * One receive must fail with expect.LABEL. With open.LABEL the consumer
     * starts on that topic (one it may subscribe: its settings pass), then
     * subscribes to the scenario's topic and drops the open one, so the
     * receive asks for the scenario's topic.
     */
    private static String refusedReceive(String topic, String group, long deadline) throws Exception {
        String start = labelled("open").isEmpty() ? topic : labelled("open");
        try (SimpleConsumer c = SP.newSimpleConsumerBuilder().setClientConfiguration(conf()).setConsumerGroup(group)
            .setAwaitDuration(Duration.ofSeconds(2)).setSubscriptionExpressions(new HashMap<>(Collections.singletonMap(start, all()))).build()) {
            if (!start.equals(topic)) {
                c.subscribe(topic, all());
                c.unsubscribe(start);
            }
            List<MessageView> got = c.receive(16, Duration.ofSeconds(15));
            throw new Check("receive accepted (" + got.size() + " messages)");
        } catch (Check c) {
            throw c;
        } catch (Throwable t) {
            return expectRefusal(t);
        }
    }

    interface Starter<T> {
        T start() throws Exception;
    }

    /**
     * Starts a client, up to three times: a client's start-up (route, then
     * settings over the telemetry stream) times out on a loaded machine, and
     * what the scenario checks comes after it.
     */
    static <T> T started(Starter<T> s) throws Exception {
        Exception last = null;
        for (int i = 0; i < 3; i++) {
            try {
                return s.start();
            } catch (Exception e) {
                last = e;
            }
        }
        throw last;
    }

    private static Producer producer(String topic) throws Exception {
        return started(() -> SP.newProducerBuilder().setClientConfiguration(conf()).setTopics(topic).build());
    }

    private static SimpleConsumer simple(String topic, String group, FilterExpression f) throws Exception {
        return started(() -> SP.newSimpleConsumerBuilder().setClientConfiguration(conf()).setConsumerGroup(group)
            .setAwaitDuration(Duration.ofSeconds(5))
            .setSubscriptionExpressions(Collections.singletonMap(topic, f)).build());
    }

    private static FilterExpression all() {
        return FilterExpression.SUB_ALL;
    }

    private static Message msg(String topic, String body) {
        return SP.newMessageBuilder().setTopic(topic).setBody(body.getBytes(StandardCharsets.UTF_8)).setKeys(body).build();
    }

    private static String body(MessageView m) {
        ByteBuffer b = m.getBody().duplicate();
        byte[] a = new byte[b.remaining()];
        b.get(a);
        return new String(a, StandardCharsets.UTF_8);
    }

    private static void require(boolean ok, String why) throws Check {
        if (!ok) {
            throw new Check(why);
        }
    }

    /** Receives until want distinct bodies arrived (acking each) or the deadline. */
    private static List<MessageView> receiveAll(SimpleConsumer c, int want, long deadline, boolean ack) throws Exception {
        List<MessageView> got = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        while (seen.size() < want && System.currentTimeMillis() < deadline) {
            for (MessageView m : c.receive(16, Duration.ofSeconds(20))) {
                got.add(m);
                seen.add(body(m));
                if (ack) {
                    c.ack(m);
                }
            }
        }
        return got;
    }

    /** Receives for window ms and returns what arrived (acked). */
    private static List<MessageView> receiveFor(SimpleConsumer c, long windowMs) throws Exception {
        List<MessageView> got = new ArrayList<>();
        long end = System.currentTimeMillis() + windowMs;
        while (System.currentTimeMillis() < end) {
            for (MessageView m : c.receive(16, Duration.ofSeconds(20))) {
                got.add(m);
                c.ack(m);
            }
        }
        return got;
    }

    private static Set<String> bodies(List<MessageView> ms) {
        Set<String> s = new HashSet<>();
        for (MessageView m : ms) {
            s.add(body(m));
        }
        return s;
    }

    private static String sendNormal(String topic, String group, long deadline) throws Exception {
        int n = 10;
        Set<String> sent = new HashSet<>();
        try (Producer p = producer(topic); SimpleConsumer c = simple(topic, group, all())) {
            for (int i = 0; i < n; i++) {
                SendReceipt r = p.send(msg(topic, topic + "-" + i));
                require(r.getMessageId() != null, "send " + i + " has no message id");
                sent.add(topic + "-" + i);
            }
            Set<String> got = bodies(receiveAll(c, n, deadline, true));
            require(got.equals(sent), "received " + got.size() + "/" + n + ": " + got);
        }
        return "sent and received " + n;
    }

    private static String sendFifo(String topic, String group, long deadline) throws Exception {
        int n = 10;
        List<String> order = new ArrayList<>();
        try (Producer p = producer(topic); SimpleConsumer c = simple(topic, group, all())) {
            for (int i = 0; i < n; i++) {
                p.send(SP.newMessageBuilder().setTopic(topic).setMessageGroup("mg")
                    .setBody(String.valueOf(i).getBytes(StandardCharsets.UTF_8)).build());
            }
            while (order.size() < n && System.currentTimeMillis() < deadline) {
                for (MessageView m : c.receive(16, Duration.ofSeconds(20))) {
                    require("mg".equals(m.getMessageGroup().orElse(null)), "message group lost: " + m.getMessageGroup());
                    order.add(body(m));
                    c.ack(m);
                }
            }
        }
        List<String> want = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            want.add(String.valueOf(i));
        }
        require(order.equals(want), "order " + order);
        return "in order " + order.size();
    }

    /**
     * Message recall (Producer.recallMessage): "gone" and "keep" due in 10 s (room for a loaded machine before the recall),
     * a sentinel two ticks later; "gone" is recalled with its send receipt's
     * recall handle. keep and the sentinel arrive, gone never (its slot is
     * delivered before the sentinel's). A handle that does not decode and one
     * already due are refused with INTERNAL_SERVER_ERROR and Java's text.
     */
    private static String recall(String topic, String group, long deadline) throws Exception {
        try (Producer p = producer(topic); SimpleConsumer c = simple(topic, group, all())) {
            long at = System.currentTimeMillis() + 10000;
            SendReceipt gone = p.send(SP.newMessageBuilder().setTopic(topic).setDeliveryTimestamp(at)
                .setBody("gone".getBytes(StandardCharsets.UTF_8)).build());
            p.send(SP.newMessageBuilder().setTopic(topic).setDeliveryTimestamp(at)
                .setBody("keep".getBytes(StandardCharsets.UTF_8)).build());
            p.send(SP.newMessageBuilder().setTopic(topic).setDeliveryTimestamp(at + 2000)
                .setBody("sentinel".getBytes(StandardCharsets.UTF_8)).build());
            String handle = gone.getRecallHandle();
            require(handle != null && !handle.isEmpty(), "send receipt of a delay message without recall handle");
            String id;
            try {
                id = p.recallMessage(topic, handle).getMessageId().toString();
            } catch (org.apache.rocketmq.client.apis.ClientException e) {
                throw new Check("recall of " + new String(java.util.Base64.getUrlDecoder().decode(handle), StandardCharsets.UTF_8)
                    + " at " + System.currentTimeMillis() + " (due " + at + "): " + e.getMessage());
            }
            require(id.equals(gone.getMessageId().toString()), "recall answered " + id + ", sent " + gone.getMessageId());
            refusedRecall(p, topic, "not-a-handle", "recall handle is invalid");
            String past = java.util.Base64.getUrlEncoder().encodeToString(("v1 " + topic + " " + brokerOf(handle) + " "
                + (System.currentTimeMillis() - 1000) + " " + id).getBytes(StandardCharsets.UTF_8));
            refusedRecall(p, topic, past, "recall failed, timestamp invalid");
            List<MessageView> got = receiveAll(c, 2, deadline, true);
            // Queues are popped in turn: look a little longer for "gone".
            got.addAll(receiveFor(c, 2000));
            Set<String> b = bodies(got);
            require(b.contains("keep") && b.contains("sentinel"), "control messages not received: " + b);
            require(!b.contains("gone"), "recalled message received");
            return "recalled " + id + "; received " + b;
        }
    }

    private static String brokerOf(String handle) {
        String raw = new String(java.util.Base64.getUrlDecoder().decode(handle), StandardCharsets.UTF_8);
        return raw.split(" ")[2];
    }

    private static void refusedRecall(Producer p, String topic, String handle, String text) throws Exception {
        try {
            p.recallMessage(topic, handle);
        } catch (org.apache.rocketmq.client.apis.ClientException e) {
            require(e.getMessage() != null && e.getMessage().contains(text) && e.getMessage().contains("50001"),
                "recall refused with " + e.getMessage() + ", want INTERNAL_SERVER_ERROR " + text);
            return;
        }
        throw new Check("recall of " + handle + " succeeded, want " + text);
    }

    private static String sendDelay(String topic, String group, long deadline) throws Exception {
        long delayMs = 4000;
        try (Producer p = producer(topic); SimpleConsumer c = simple(topic, group, all())) {
            long at = System.currentTimeMillis() + delayMs;
            p.send(SP.newMessageBuilder().setTopic(topic).setDeliveryTimestamp(at)
                .setBody("delayed".getBytes(StandardCharsets.UTF_8)).build());
            List<MessageView> got = receiveAll(c, 1, deadline, true);
            long now = System.currentTimeMillis();
            require(got.size() == 1, "delayed message not received");
            require(now >= at - 1000, "delivered " + (at - now) + " ms early");
            require(got.get(0).getDeliveryTimestamp().isPresent(), "no delivery timestamp on the message");
            return "delivered " + (now - at) + " ms after its time";
        }
    }

    private static String sendTransaction(String topic, String group, long deadline) throws Exception {
        try (Producer p = started(() -> SP.newProducerBuilder().setClientConfiguration(conf()).setTopics(topic)
            .setTransactionChecker(m -> TransactionResolution.ROLLBACK).build());
             SimpleConsumer c = simple(topic, group, all())) {
            Transaction t1 = p.beginTransaction();
            p.send(msg(topic, "commit"), t1);
            Transaction t2 = p.beginTransaction();
            p.send(msg(topic, "rollback"), t2);
            t2.rollback();
            t1.commit();
            List<MessageView> got = receiveAll(c, 1, deadline, true);
            require(bodies(got).contains("commit"), "committed message not received: " + bodies(got));
            got.addAll(receiveFor(c, 4000));
            require(!bodies(got).contains("rollback"), "rolled-back message delivered");
            return "commit delivered, rollback not";
        }
    }

    private static String simpleAck(String topic, String group, long deadline) throws Exception {
        int n = 5;
        try (Producer p = producer(topic); SimpleConsumer c = simple(topic, group, all())) {
            for (int i = 0; i < n; i++) {
                p.send(msg(topic, "ack-" + i));
            }
            Set<String> got = new HashSet<>();
            while (got.size() < n && System.currentTimeMillis() < deadline) {
                for (MessageView m : c.receive(16, Duration.ofSeconds(15))) {
                    got.add(body(m));
                    c.ack(m);
                }
            }
            require(got.size() == n, "received " + got.size() + "/" + n);
            // Acked within a 15 s invisible time: nothing may come back.
            List<MessageView> again = receiveFor(c, 20000);
            require(again.isEmpty(), "acked messages delivered again: " + bodies(again));
        }
        return n + " acked, none redelivered";
    }

    private static String simpleChangeInvisible(String topic, String group, long deadline) throws Exception {
        try (Producer p = producer(topic); SimpleConsumer c = simple(topic, group, all())) {
            String id = p.send(msg(topic, "civ")).getMessageId().toString();
            MessageView first = null;
            while (first == null && System.currentTimeMillis() < deadline) {
                List<MessageView> ms = c.receive(1, Duration.ofSeconds(60));
                if (!ms.isEmpty()) {
                    first = ms.get(0);
                }
            }
            require(first != null, "not received");
            long t0 = System.currentTimeMillis();
            c.changeInvisibleDuration(first, Duration.ofSeconds(2));
            MessageView again = null;
            while (again == null && System.currentTimeMillis() < deadline) {
                List<MessageView> ms = c.receive(1, Duration.ofSeconds(60));
                if (!ms.isEmpty()) {
                    again = ms.get(0);
                }
            }
            long waited = System.currentTimeMillis() - t0;
            require(again != null, "not redelivered after the invisible time was changed to 2 s");
            require(id.equals(again.getMessageId().toString()), "another message came back: " + again.getMessageId());
            require(waited < 30000, "came back after " + waited + " ms: the 60 s invisible time held");
            require(again.getDeliveryAttempt() == 2, "delivery attempt " + again.getDeliveryAttempt());
            c.ack(again);
            return "back after " + waited + " ms, attempt 2";
        }
    }

    private static String simpleRedeliver(String topic, String group, long deadline) throws Exception {
        try (Producer p = producer(topic); SimpleConsumer c = simple(topic, group, all())) {
            String id = p.send(msg(topic, "redeliver")).getMessageId().toString();
            List<Integer> attempts = new ArrayList<>();
            long firstAt = 0;
            long backAfter = 0;
            while (attempts.size() < 2 && System.currentTimeMillis() < deadline) {
                for (MessageView m : c.receive(1, Duration.ofSeconds(3))) {
                    require(id.equals(m.getMessageId().toString()), "unexpected message " + m.getMessageId());
                    attempts.add(m.getDeliveryAttempt());
                    if (attempts.size() == 1) {
                        firstAt = System.currentTimeMillis();
                    } else {
                        backAfter = System.currentTimeMillis() - firstAt;
                        c.ack(m);
                    }
                }
            }
            require(attempts.size() == 2, "deliveries " + attempts);
            require(attempts.get(0) == 1 && attempts.get(1) == 2, "delivery attempts " + attempts);
            require(backAfter >= 2000, "came back after " + backAfter + " ms, before its 3 s invisible time");
            return "back after " + backAfter + " ms, attempts " + attempts;
        }
    }

    /** One PushConsumer delivery: attempt and when it arrived. */
    static final class Delivery {
        final int attempt;
        final long at;

        Delivery(int attempt, long at) {
            this.attempt = attempt;
            this.at = at;
        }

        @Override
        public String toString() {
            return "attempt " + attempt;
        }
    }

    /**
     * The proxy's receipt-handle auto-renew under a real PushConsumer (its
     * receives ask auto_renew with no invisible duration): the server's
     * defaultInvisibleTimeMills is short (the Go harness sets it; property
     * invisibleMs says how short) and the listener holds the first delivery
     * holdMs (3 invisible times by default) before SUCCESS. Renewed, the
     * message is not delivered again while held, nor after the ack
     * (watched for quietMs, 2 invisible times by default).
     */
    private static String pushAutoRenew(String topic, String group, long deadline) throws Exception {
        long invisible = Long.getLong("invisibleMs", 3000);
        long hold = Long.getLong("holdMs", 3 * invisible);
        long quiet = Long.getLong("quietMs", 2 * invisible);
        List<Delivery> seen = new CopyOnWriteArrayList<>();
        Object released = new Object();
        AtomicInteger done = new AtomicInteger();
        try (Producer p = producer(topic);
             PushConsumer pc = started(() -> SP.newPushConsumerBuilder().setClientConfiguration(conf()).setConsumerGroup(group)
                 .setSubscriptionExpressions(Collections.singletonMap(topic, all()))
                 .setMessageListener(m -> {
                     seen.add(new Delivery(m.getDeliveryAttempt(), System.currentTimeMillis()));
                     if (seen.size() == 1) {
                         long until = System.currentTimeMillis() + hold;
                         synchronized (released) {
                             // Holding the message is the scenario: the wait
                             // ends at its time (nothing notifies it).
                             for (long left = hold; left > 0; left = until - System.currentTimeMillis()) {
                                 try {
                                     released.wait(left);
                                 } catch (InterruptedException e) {
                                     Thread.currentThread().interrupt();
                                     break;
                                 }
                             }
                         }
                     }
                     done.incrementAndGet();
                     synchronized (done) {
                         done.notifyAll();
                     }
                     return ConsumeResult.SUCCESS;
                 }).build())) {
            String id = p.send(msg(topic, "renew")).getMessageId().toString();
            while (done.get() < 1 && System.currentTimeMillis() < deadline) {
                synchronized (done) {
                    done.wait(200);
                }
            }
            require(done.get() >= 1, "the message was not consumed before the deadline (deliveries " + seen + ")");
            long end = Math.min(deadline, System.currentTimeMillis() + quiet);
            while (seen.size() == 1 && System.currentTimeMillis() < end) {
                synchronized (done) {
                    done.wait(200);
                }
            }
            require(seen.size() == 1, "delivered again while held " + hold + " ms over a " + invisible
                + " ms invisible time, or after the ack: " + seen);
            require(seen.get(0).attempt == 1, "first delivery " + seen.get(0));
            return "held " + hold + " ms over a " + invisible + " ms invisible time: one delivery, none in the "
                + quiet + " ms after the ack (message " + id + ")";
        }
    }

    /**
     * Without the proxy's auto-renew (enableProxyAutoRenew=false) a
     * PushConsumer 5.0.8's receives carry no invisible duration and are
     * refused (ILLEGAL_INVISIBLE_TIME, as Java's ReceiveMessageActivity):
     * it gets nothing within windowMs (3 invisible times by default), and
     * the message is still there, never delivered, for a SimpleConsumer of
     * the group (which sends an invisible duration).
     */
    private static String pushNoAutoRenew(String topic, String group, long deadline) throws Exception {
        long invisible = Long.getLong("invisibleMs", 3000);
        long window = Long.getLong("windowMs", 3 * invisible);
        List<Delivery> seen = new CopyOnWriteArrayList<>();
        String id;
        try (Producer p = producer(topic)) {
            id = p.send(msg(topic, "norenew")).getMessageId().toString();
            try (PushConsumer pc = started(() -> SP.newPushConsumerBuilder().setClientConfiguration(conf()).setConsumerGroup(group)
                .setSubscriptionExpressions(Collections.singletonMap(topic, all()))
                .setMessageListener(m -> {
                    seen.add(new Delivery(m.getDeliveryAttempt(), System.currentTimeMillis()));
                    synchronized (seen) {
                        seen.notifyAll();
                    }
                    return ConsumeResult.SUCCESS;
                }).build())) {
                long end = Math.min(deadline, System.currentTimeMillis() + window);
                while (seen.isEmpty() && System.currentTimeMillis() < end) {
                    synchronized (seen) {
                        seen.wait(200);
                    }
                }
                require(seen.isEmpty(), "the PushConsumer received without auto-renew: " + seen);
            }
        }
        try (SimpleConsumer c = simple(topic, group, all())) {
            List<MessageView> got = new ArrayList<>();
            while (got.isEmpty() && System.currentTimeMillis() < deadline) {
                got = c.receive(1, Duration.ofSeconds(10));
            }
            require(!got.isEmpty(), "the message is gone: not consumed by the PushConsumer, not received by a SimpleConsumer");
            MessageView m = got.get(0);
            c.ack(m);
            require(id.equals(m.getMessageId().toString()), "unexpected message " + m.getMessageId());
            require(m.getDeliveryAttempt() == 1, "the SimpleConsumer got it at attempt " + m.getDeliveryAttempt());
            return "PushConsumer got nothing in " + window + " ms; a SimpleConsumer then received it at attempt 1";
        }
    }

    private static String pushRetryDlq(String topic, String group, long deadline) throws Exception {
        // The Go harness created the group with retryMaxTimes 2: 3 deliveries, then the DLQ.
        AtomicInteger attempts = new AtomicInteger();
        List<Integer> seen = new CopyOnWriteArrayList<>();
        try (Producer p = producer(topic);
             PushConsumer pc = started(() -> SP.newPushConsumerBuilder().setClientConfiguration(conf()).setConsumerGroup(group)
                 .setSubscriptionExpressions(Collections.singletonMap(topic, all()))
                 .setMessageListener(m -> {
                     attempts.incrementAndGet();
                     seen.add(m.getDeliveryAttempt());
                     return ConsumeResult.FAILURE;
                 }).build())) {
            String id = p.send(msg(topic, "dlq")).getMessageId().toString();
            String dlq = "%DLQ%" + group;
            while (attempts.get() < 3 && System.currentTimeMillis() < deadline) {
                synchronized (attempts) {
                    attempts.wait(200);
                }
            }
            require(attempts.get() >= 3, "deliveries " + seen + " before the deadline");
            // The DLQ topic exists once the broker moved the message there;
            // a consumer of a topic without a route fails to start.
            SimpleConsumer d = null;
            Exception last = null;
            while (d == null && System.currentTimeMillis() < deadline) {
                try {
                    d = simple(dlq, group + "_dlq", all());
                } catch (Exception e) {
                    last = e;
                    synchronized (attempts) {
                        attempts.wait(500);
                    }
                }
            }
            require(d != null, "no consumer of " + dlq + " could start: " + last);
            try (SimpleConsumer dc = d) {
                List<MessageView> got = new ArrayList<>();
                while (got.isEmpty() && System.currentTimeMillis() < deadline) {
                    got = dc.receive(1, Duration.ofSeconds(20));
                }
                require(!got.isEmpty(), "nothing in " + dlq + " after " + attempts.get() + " deliveries " + seen);
                dc.ack(got.get(0));
                require(attempts.get() == 3, "deliveries before the DLQ: " + seen);
                String dlqBody = body(got.get(0));
                require("dlq".equals(dlqBody), "DLQ holds " + dlqBody);
                return "3 deliveries " + seen + ", then " + dlq + " (message " + id + ")";
            }
        }
    }

    private static String fifoRedeliver(String topic, String group, long deadline) throws Exception {
        int n = 6;
        List<String> log = new CopyOnWriteArrayList<>();
        Map<String, Integer> tries = new ConcurrentHashMap<>();
        AtomicInteger done = new AtomicInteger();
        try (Producer p = producer(topic)) {
            for (int i = 0; i < n; i++) {
                p.send(SP.newMessageBuilder().setTopic(topic).setMessageGroup("og")
                    .setBody(String.valueOf(i).getBytes(StandardCharsets.UTF_8)).build());
            }
            try (PushConsumer pc = started(() -> SP.newPushConsumerBuilder().setClientConfiguration(conf()).setConsumerGroup(group)
                .setSubscriptionExpressions(Collections.singletonMap(topic, all()))
                .setMessageListener(m -> {
                    String b = body(m);
                    int t = tries.merge(b, 1, Integer::sum);
                    log.add(b);
                    if ("2".equals(b) && t == 1) {
                        return ConsumeResult.FAILURE;
                    }
                    done.incrementAndGet();
                    return ConsumeResult.SUCCESS;
                }).build())) {
                while (done.get() < n && System.currentTimeMillis() < deadline) {
                    synchronized (done) {
                        done.wait(200);
                    }
                }
            }
        }
        require(fifoOrder(log, n), "consumed " + log + ", want 0..5 in order with 2 delivered again before 3");
        return "order " + log;
    }

    /**
     * FIFO under redelivery: the deliveries never go back to an earlier
     * message (a redelivery repeats the current one: at least once, in
     * order), every message arrives, and the failed "2" came again.
     */
    static boolean fifoOrder(List<String> log, int n) {
        int prev = -1;
        int twos = 0;
        for (String b : log) {
            int v = Integer.parseInt(b);
            if (v < prev) {
                return false;
            }
            prev = v;
            twos += v == 2 ? 1 : 0;
        }
        return prev == n - 1 && twos >= 2 && new HashSet<>(log).size() == n;
    }

    private static String filterTag(String topic, String group, long deadline) throws Exception {
        try (Producer p = producer(topic);
             SimpleConsumer c = simple(topic, group, new FilterExpression("A||C", FilterExpressionType.TAG))) {
            for (int i = 0; i < 9; i++) {
                String tag = new String[] {"A", "B", "C"}[i % 3];
                p.send(SP.newMessageBuilder().setTopic(topic).setTag(tag)
                    .setBody((tag + i).getBytes(StandardCharsets.UTF_8)).build());
            }
            List<MessageView> got = receiveAll(c, 6, deadline, true);
            got.addAll(receiveFor(c, 3000));
            Set<String> b = bodies(got);
            require(b.equals(Set.of("A0", "C2", "A3", "C5", "A6", "C8")), "received " + b);
            return "tags A||C: " + b.size();
        }
    }

    private static String filterSql(String topic, String group, long deadline) throws Exception {
        try (Producer p = producer(topic);
             SimpleConsumer c = simple(topic, group, new FilterExpression("n >= 5 AND color = 'red'", FilterExpressionType.SQL92))) {
            for (int i = 0; i < 10; i++) {
                p.send(SP.newMessageBuilder().setTopic(topic).addProperty("n", String.valueOf(i))
                    .addProperty("color", i % 2 == 0 ? "red" : "blue")
                    .setBody(("s" + i).getBytes(StandardCharsets.UTF_8)).build());
            }
            List<MessageView> got = receiveAll(c, 2, deadline, true);
            got.addAll(receiveFor(c, 3000));
            Set<String> b = bodies(got);
            require(b.equals(Set.of("s6", "s8")), "received " + b);
            return "SQL92 filter: " + b;
        }
    }

    private static String transactionCheck(String topic, String group, long deadline) throws Exception {
        AtomicInteger checks = new AtomicInteger();
        try (Producer p = started(() -> SP.newProducerBuilder().setClientConfiguration(conf()).setTopics(topic)
            .setTransactionChecker(m -> {
                checks.incrementAndGet();
                return "checked".equals(body(m)) ? TransactionResolution.COMMIT : TransactionResolution.ROLLBACK;
            }).build());
             SimpleConsumer c = simple(topic, group, all())) {
            Transaction t = p.beginTransaction();
            p.send(msg(topic, "checked"), t);
            // Neither commit nor rollback: the broker asks back through the
            // proxy's telemetry stream and the checker commits.
            List<MessageView> got = receiveAll(c, 1, deadline, true);
            require(bodies(got).contains("checked"), "not committed by the check-back (" + checks.get() + " checks)");
            require(checks.get() >= 1, "delivered without a check");
            return "committed by check-back after " + checks.get() + " check(s)";
        }
    }

    private static String shared4x(String topic, String group, long deadline) throws Exception {
        // The Go harness runs a 4.x remoting push consumer in the same group
        // at the same time and adds up both sides.
        int n = Integer.parseInt(System.getProperty("shared.count", "20"));
        Set<String> got = ConcurrentHashMap.newKeySet();
        AtomicInteger deliveries = new AtomicInteger();
        try (PushConsumer pc = started(() -> SP.newPushConsumerBuilder().setClientConfiguration(conf()).setConsumerGroup(group)
            .setSubscriptionExpressions(Collections.singletonMap(topic, all()))
            .setMessageListener(m -> {
                got.add(body(m));
                deliveries.incrementAndGet();
                return ConsumeResult.SUCCESS;
            }).build());
             Producer p = producer(topic)) {
            for (int i = 0; i < n; i++) {
                p.send(msg(topic, "shared-" + i));
            }
            long end = Math.min(deadline, System.currentTimeMillis() + Long.getLong("shared.window.ms", 15000));
            while (System.currentTimeMillis() < end) {
                synchronized (got) {
                    got.wait(200);
                }
            }
        }
        return "grpc got=" + got.size() + " deliveries=" + deliveries.get() + " sent=" + n;
    }

    private static String adminRelay(String topic, String group, long deadline) throws Exception {
        // A PushConsumer that stays up while the Go harness asks the broker
        // for its running info (thread dump) and has it consume a message
        // directly; both reach this client through the proxy's telemetry
        // stream, which the SDK answers by itself.
        AtomicInteger deliveries = new AtomicInteger();
        try (PushConsumer pc = started(() -> SP.newPushConsumerBuilder().setClientConfiguration(conf()).setConsumerGroup(group)
            .setSubscriptionExpressions(Collections.singletonMap(topic, all()))
            .setMessageListener(m -> {
                deliveries.incrementAndGet();
                return ConsumeResult.SUCCESS;
            }).build())) {
            // Up until the harness says it is done (relay.done.file exists) or the deadline.
            java.io.File done = new java.io.File(System.getProperty("relay.done.file", "/nonexistent"));
            while (System.currentTimeMillis() < deadline && !done.exists()) {
                synchronized (deliveries) {
                    deliveries.wait(100);
                }
            }
            require(done.exists(), "the harness never finished (relay.done.file)");
        }
        return "deliveries=" + deliveries.get();
    }

}
