// Seed: a little data for the dashboard check (scripts/dashboard-check.sh).
//
//   java -cp 'conformance/.cache/java-server/lib/*' scripts/dashboard/Seed.java NSADDR OUTFILE
//
// Creates DashTopic (4 queues, message.type NORMAL) and sends 8 traced messages with keys into it, one
// queue per message in turn; DashConsumerGroup consumes them (traced) and stores its
// offsets; DashDlqGroup sends the one message of DashDlqTopic straight to its DLQ.
// Writes OUTFILE (JSON: message ids) and keeps the producer and the consumer
// connected until its standard input closes, so the producer and consumer pages
// have live clients to show.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.protocol.body.ClusterInfo;
import org.apache.rocketmq.remoting.protocol.admin.TopicStatsTable;
import org.apache.rocketmq.remoting.protocol.admin.TopicOffset;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

public class Seed {
    static final String TOPIC = "DashTopic";
    static final String DLQ_TOPIC = "DashDlqTopic";
    static final String GROUP = "DashConsumerGroup";
    static final String DLQ_GROUP = "DashDlqGroup";
    static final int COUNT = 8;

    public static void main(String[] args) throws Exception {
        String ns = args[0];
        Path out = Path.of(args[1]);
        System.setProperty("rocketmq.client.logUseSlf4j", "false");

        DefaultMQAdminExt admin = new DefaultMQAdminExt();
        admin.setNamesrvAddr(ns);
        admin.setInstanceName("seed-admin");
        admin.start();
        // The broker's port is open before its first registration reaches
        // the name server: wait (bounded) until the cluster lists it.
        ClusterInfo ci = admin.examineBrokerClusterInfo();
        for (long end = System.currentTimeMillis() + 60_000; ci.getBrokerAddrTable().isEmpty(); ci = admin.examineBrokerClusterInfo()) {
            if (System.currentTimeMillis() > end) {
                throw new IllegalStateException("no broker registered with " + ns + " within 60 s");
            }
            Thread.sleep(200); // polling the name server with a deadline
        }
        String brokerAddr = ci.getBrokerAddrTable().values().iterator().next().selectBrokerAddr();
        for (String t : new String[] {TOPIC, DLQ_TOPIC}) {
            TopicConfig tc = new TopicConfig(t, 4, 4);
            // The topic page lists NORMAL topics by default, and a topic
            // without the message.type attribute is UNSPECIFIED there.
            tc.setAttributes(Map.of("+message.type", "NORMAL"));
            admin.createAndUpdateTopicConfig(brokerAddr, tc);
        }
        waitRoute(admin, TOPIC);
        waitRoute(admin, DLQ_TOPIC);

        DefaultMQProducer producer = new DefaultMQProducer("DashProducerGroup", true, null);
        producer.setNamesrvAddr(ns);
        producer.setInstanceName("seed-producer");
        producer.start();
        List<String> ids = new ArrayList<>();
        List<String> offsetIds = new ArrayList<>();
        for (int i = 0; i < COUNT; i++) {
            Message m = new Message(TOPIC, "TagA", "key-" + i, ("hello dashboard " + i).getBytes(StandardCharsets.UTF_8));
            m.putUserProperty("seq", Integer.toString(i));
            SendResult r = producer.send(m, (mqs, msg, arg) -> mqs.get((Integer) arg % mqs.size()), i);
            ids.add(r.getMsgId());
            offsetIds.add(r.getOffsetMsgId());
        }
        Message dm = new Message(DLQ_TOPIC, "TagD", "dlq-key-0", "to the DLQ".getBytes(StandardCharsets.UTF_8));
        SendResult dr = producer.send(dm, (mqs, msg, arg) -> mqs.get(0), 0);

        AtomicInteger consumed = new AtomicInteger();
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(GROUP, true, null);
        consumer.setNamesrvAddr(ns);
        consumer.setInstanceName("seed-consumer");
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(TOPIC, "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            consumed.addAndGet(msgs.size());
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();

        DefaultMQPushConsumer dlq = new DefaultMQPushConsumer(DLQ_GROUP);
        dlq.setNamesrvAddr(ns);
        dlq.setInstanceName("seed-dlq");
        dlq.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        dlq.subscribe(DLQ_TOPIC, "*");
        dlq.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            ctx.setDelayLevelWhenNextConsume(-1); // straight to %DLQ%
            return ConsumeConcurrentlyStatus.RECONSUME_LATER;
        });
        dlq.start();

        long deadline = System.currentTimeMillis() + 60_000;
        while (consumed.get() < COUNT || dlqDepth(admin) < 1) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("seed: consumed " + consumed.get() + "/" + COUNT + ", dlq " + dlqDepth(admin));
            }
            Thread.sleep(200);
        }
        dlq.shutdown();
        consumer.getDefaultMQPushConsumerImpl().persistConsumerOffset();

        StringBuilder sb = new StringBuilder();
        sb.append("{\"topic\":\"").append(TOPIC).append("\",\"group\":\"").append(GROUP)
            .append("\",\"dlqGroup\":\"").append(DLQ_GROUP).append("\",\"brokerAddr\":\"").append(brokerAddr)
            .append("\",\"dlqMsgId\":\"").append(dr.getMsgId()).append("\",\"msgIds\":[");
        for (int i = 0; i < ids.size(); i++) {
            sb.append(i > 0 ? "," : "").append('"').append(ids.get(i)).append('"');
        }
        sb.append("],\"offsetMsgIds\":[");
        for (int i = 0; i < offsetIds.size(); i++) {
            sb.append(i > 0 ? "," : "").append('"').append(offsetIds.get(i)).append('"');
        }
        sb.append("]}\n");
        Files.writeString(out, sb.toString());
        admin.shutdown();
        System.out.println("SEEDED " + sb.toString().trim());
        System.out.flush();

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        while (in.readLine() != null) {
            // hold the clients until stdin closes
        }
        consumer.shutdown();
        producer.shutdown();
    }

    static void waitRoute(DefaultMQAdminExt admin, String topic) throws Exception {
        long deadline = System.currentTimeMillis() + 20_000;
        while (true) {
            try {
                if (!admin.examineTopicRouteInfo(topic).getQueueDatas().isEmpty()) {
                    return;
                }
            } catch (Exception e) {
                if (System.currentTimeMillis() > deadline) {
                    throw e;
                }
            }
            Thread.sleep(200);
        }
    }

    static long dlqDepth(DefaultMQAdminExt admin) {
        try {
            TopicStatsTable st = admin.examineTopicStats("%DLQ%" + DLQ_GROUP);
            long n = 0;
            for (TopicOffset o : st.getOffsetTable().values()) {
                n += o.getMaxOffset() - o.getMinOffset();
            }
            return n;
        } catch (Exception e) {
            return 0;
        }
    }
}
