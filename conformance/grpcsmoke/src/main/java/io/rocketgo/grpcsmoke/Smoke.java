package io.rocketgo.grpcsmoke;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.SendReceipt;

/**
 * Producer sends N messages, SimpleConsumer receives and acks them all.
 * Args: endpoint topic group n deadlineMs. Prints "SENT id", "ACKED id" and
 * a final "SMOKE sent=.. acked=.." line; exits 0 when every sent message
 * was received and acked.
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
        System.exit(ok ? 0 : 1);
    }
}
