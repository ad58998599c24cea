package io.rocketgo.grpcsmoke;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.ConsumeResult;
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
 * Producer sends N messages, SimpleConsumer receives and acks them all.
 * Args: endpoint topic group n deadlineMs [fifoTopic fifoGroup txnTopic txnGroup].
 * Prints "SENT id", "ACKED id" and a final "SMOKE sent=.. acked=.." line;
 * with the optional topics also "FIFO order=.. OK|FAIL" (one message group
 * received in send order) and "TXN committed=.. checked=.. OK|FAIL" (a
 * committed transaction, and an open one the server checks back through
 * the telemetry stream and the checker commits); exits 0 when all hold.
 */
public final class Smoke {
    public static void main(String[] args) throws Exception {
        String endpoint = args[0], topic = args[1], group = args[2];
        int n = Integer.parseInt(args[3]);
        long deadline = System.currentTimeMillis() + Long.parseLong(args[4]);
        ClientServiceProvider provider = ClientServiceProvider.loadService();
        ClientConfiguration cfg = ClientConfiguration.newBuilder().setEndpoints(endpoint).enableSsl(false)
            .setRequestTimeout(Duration.ofSeconds(5)).build();
        Set<String> sent = new HashSet<>();
        try (Producer producer = provider.newProducerBuilder().setClientConfiguration(cfg).setTopics(topic).build()) {
            for (int i = 0; i < n; i++) {
                Message m = provider.newMessageBuilder().setTopic(topic).setTag("TagA").setKeys("key-" + i)
                    .setBody(("smoke-" + i).getBytes(StandardCharsets.UTF_8)).build();
                SendReceipt r = producer.send(m);
                sent.add(r.getMessageId().toString());
                System.out.println("SENT " + r.getMessageId());
            }
        }
        Set<String> acked = new HashSet<>();
        try (SimpleConsumer consumer = provider.newSimpleConsumerBuilder().setClientConfiguration(cfg)
            .setConsumerGroup(group).setAwaitDuration(Duration.ofSeconds(5))
            .setSubscriptionExpressions(Collections.singletonMap(topic, new FilterExpression("*", FilterExpressionType.TAG)))
            .build()) {
            while (acked.size() < sent.size() && System.currentTimeMillis() < deadline) {
                List<MessageView> views = consumer.receive(16, Duration.ofSeconds(30));
                for (MessageView v : views) {
                    consumer.ack(v);
                    acked.add(v.getMessageId().toString());
                    System.out.println("ACKED " + v.getMessageId() + " tag=" + v.getTag().orElse("") + " attempt=" + v.getDeliveryAttempt());
                }
            }
        }
        boolean ok = acked.containsAll(sent) && sent.size() == n;
        System.out.println("SMOKE sent=" + sent.size() + " acked=" + acked.size() + (ok ? " OK" : " FAIL"));
        if (args.length >= 9) {
            ok &= fifo(provider, cfg, args[5], args[6], deadline);
            ok &= txn(provider, cfg, args[7], args[8], deadline);
        }
        if (args.length >= 11) {
            ok &= push(provider, cfg, args[9], args[10], deadline);
        }
        System.exit(ok ? 0 : 1);
    }

    private static SimpleConsumer consumer(ClientServiceProvider provider, ClientConfiguration cfg, String topic, String group) throws Exception {
        return provider.newSimpleConsumerBuilder().setClientConfiguration(cfg).setConsumerGroup(group)
            .setAwaitDuration(Duration.ofSeconds(5))
            .setSubscriptionExpressions(Collections.singletonMap(topic, new FilterExpression("*", FilterExpressionType.TAG)))
            .build();
    }

    private static boolean fifo(ClientServiceProvider provider, ClientConfiguration cfg, String topic, String group, long deadline) throws Exception {
        final int n = 10;
        List<String> want = new ArrayList<>();
        try (Producer producer = provider.newProducerBuilder().setClientConfiguration(cfg).setTopics(topic).build()) {
            for (int i = 0; i < n; i++) {
                String body = "fifo-" + i;
                producer.send(provider.newMessageBuilder().setTopic(topic).setMessageGroup("order-1")
                    .setBody(body.getBytes(StandardCharsets.UTF_8)).build());
                want.add(body);
            }
        }
        List<String> got = new ArrayList<>();
        try (SimpleConsumer consumer = consumer(provider, cfg, topic, group)) {
            while (got.size() < n && System.currentTimeMillis() < deadline) {
                for (MessageView v : consumer.receive(16, Duration.ofSeconds(30))) {
                    got.add(StandardCharsets.UTF_8.decode(v.getBody()).toString());
                    consumer.ack(v);
                }
            }
        }
        boolean ok = got.equals(want);
        System.out.println("FIFO order=" + got + (ok ? " OK" : " FAIL"));
        return ok;
    }

    private static boolean txn(ClientServiceProvider provider, ClientConfiguration cfg, String topic, String group, long deadline) throws Exception {
        AtomicInteger checks = new AtomicInteger();
        Set<String> want = new HashSet<>();
        Set<String> got = new HashSet<>();
        try (Producer producer = provider.newProducerBuilder().setClientConfiguration(cfg).setTopics(topic)
            .setTransactionChecker(view -> {
                checks.incrementAndGet();
                System.out.println("CHECK " + view.getMessageId());
                return TransactionResolution.COMMIT;
            }).build()) {
            Transaction committed = producer.beginTransaction();
            SendReceipt r1 = producer.send(provider.newMessageBuilder().setTopic(topic).setBody("txn-commit".getBytes(StandardCharsets.UTF_8)).build(), committed);
            committed.commit();
            want.add(r1.getMessageId().toString());
            Transaction open = producer.beginTransaction(); // never ended: the server checks it back
            SendReceipt r2 = producer.send(provider.newMessageBuilder().setTopic(topic).setBody("txn-orphan".getBytes(StandardCharsets.UTF_8)).build(), open);
            want.add(r2.getMessageId().toString());
            try (SimpleConsumer consumer = consumer(provider, cfg, topic, group)) {
                while (!got.containsAll(want) && System.currentTimeMillis() < deadline) {
                    for (MessageView v : consumer.receive(16, Duration.ofSeconds(30))) {
                        got.add(v.getMessageId().toString());
                        consumer.ack(v);
                    }
                }
            }
        }
        boolean ok = got.containsAll(want) && checks.get() > 0;
        System.out.println("TXN committed=" + got.size() + " checked=" + checks.get() + (ok ? " OK" : " FAIL"));
        return ok;
    }

    /** A PushConsumer fails each message once: it comes back (attempt 2) and is then consumed. */
    private static boolean push(ClientServiceProvider provider, ClientConfiguration cfg, String topic, String group, long deadline) throws Exception {
        final int n = 5;
        Set<String> want = new HashSet<>();
        ConcurrentHashMap<String, Integer> attempts = new ConcurrentHashMap<>();
        Set<String> done = ConcurrentHashMap.newKeySet();
        try (PushConsumer consumer = provider.newPushConsumerBuilder().setClientConfiguration(cfg).setConsumerGroup(group)
            .setSubscriptionExpressions(Collections.singletonMap(topic, new FilterExpression("*", FilterExpressionType.TAG)))
            .setMessageListener(v -> {
                String id = v.getMessageId().toString();
                attempts.merge(id, 1, Integer::sum);
                if (v.getDeliveryAttempt() < 2) {
                    return ConsumeResult.FAILURE;
                }
                done.add(id);
                return ConsumeResult.SUCCESS;
            }).build()) {
            try (Producer producer = provider.newProducerBuilder().setClientConfiguration(cfg).setTopics(topic).build()) {
                for (int i = 0; i < n; i++) {
                    want.add(producer.send(provider.newMessageBuilder().setTopic(topic)
                        .setBody(("push-" + i).getBytes(StandardCharsets.UTF_8)).build()).getMessageId().toString());
                }
            }
            while (!done.containsAll(want) && System.currentTimeMillis() < deadline) {
                Thread.sleep(100); // polling the listener's progress; the deadline bounds it
            }
        }
        boolean ok = done.containsAll(want);
        for (String id : want) {
            ok &= attempts.getOrDefault(id, 0) >= 2;
        }
        System.out.println("PUSH consumed=" + done.size() + " of " + n + " attempts=" + attempts.values() + (ok ? " OK" : " FAIL"));
        return ok;
    }

    private Smoke() {
    }
}
