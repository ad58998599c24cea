package io.rocketgo.conformance;

import static io.rocketgo.conformance.Scenarios.admin;
import static io.rocketgo.conformance.Scenarios.body;
import static io.rocketgo.conformance.Scenarios.check;
import static io.rocketgo.conformance.Scenarios.createTopic;
import static io.rocketgo.conformance.Scenarios.msg;
import static io.rocketgo.conformance.Scenarios.orNull;
import static io.rocketgo.conformance.Scenarios.producer;
import static io.rocketgo.conformance.Scenarios.pushConsumer;
import static io.rocketgo.conformance.Scenarios.sendOk;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import org.apache.rocketmq.client.QueryResult;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageAccessor;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

import io.rocketgo.conformance.Driver.Ctx;

/** Timer, rebalance, dead-letter and mqadmin-engine scenarios (conformance/scenario/table.go). */
final class Extra {
    private Extra() {
    }

    /** The 5.x broker's default timerPrecisionMs. */
    static final long TIMER_PRECISION_MS = 1000;

    /**
     * Earliest legitimate delivery of a timer message asking for deliverMs:
     * the broker rounds the time down to its tick, one tick earlier when it
     * already sits on a boundary.
     */
    static long earliestTimerDelivery(long deliverMs) {
        if (deliverMs % TIMER_PRECISION_MS == 0) {
            return deliverMs - TIMER_PRECISION_MS;
        }
        return deliverMs / TIMER_PRECISION_MS * TIMER_PRECISION_MS;
    }

    /** Three timer messages (TIMER_DELIVER_MS = now + 3, 3.5, 4 s): none early, own topic; lateness reported. */
    static void timer(Ctx c) throws Exception {
        String topic = c.name("timer");
        createTopic(c, topic, 2);
        DefaultMQProducer p = producer(c, "timer_p");
        Restarts.Clock clock = new Restarts.Clock();
        DefaultMQPushConsumer pc = pushConsumer(c, "timer_c", "timer_c");
        pc.subscribe(topic, "*");
        pc.registerMessageListener(clock.listener());
        pc.start();
        long base = System.currentTimeMillis();
        List<Restarts.Due> ds = new ArrayList<>();
        long[] offsets = {3000, 3500, 4000};
        for (int i = 0; i < offsets.length; i++) {
            long deliverMs = base + offsets[i];
            Message m = msg(topic, "timer-" + i);
            // 4.9.8 has no API (and 5.x rejects the name in putUserProperty).
            Restarts.timerProperty(m, "setDeliverTimeMs", "TIMER_DELIVER_MS", deliverMs);
            sendOk(p, m);
            ds.add(new Restarts.Due("timer-" + i, deliverMs, earliestTimerDelivery(deliverMs)));
        }
        List<String> want = Restarts.bodies(ds);
        clock.got.await(c, want);
        List<Long> late = Restarts.checkDue(clock, ds);
        for (String b : want) {
            MessageExt d = clock.got.seen.get(b).get(0);
            check(topic.equals(d.getTopic()), "timer message %s delivered with topic %s", b, d.getTopic());
        }
        c.note = "lateness min/p50/max " + Restarts.spread(late);
    }

    /** Which member consumed each body. */
    static final class Arrivals {
        final Map<String, List<String>> by = new ConcurrentHashMap<>();

        MessageListenerConcurrently listener(String member) {
            return (msgs, ctx) -> {
                for (MessageExt m : msgs) {
                    by.computeIfAbsent(body(m), k -> new CopyOnWriteArrayList<>()).add(member);
                }
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            };
        }
    }

    static final int REBALANCE_QUEUES = 8;

    /** Sends one probe per queue, waits for all; returns queueId -> consuming members. */
    static Map<Integer, List<String>> probeRound(Ctx c, DefaultMQProducer p, List<MessageQueue> mqs, Arrivals a,
        String tag, List<String> sent) throws Exception {
        List<String> bodies = new ArrayList<>();
        for (MessageQueue mq : mqs) {
            String b = tag + "-q" + mq.getQueueId();
            bodies.add(b);
            sent.add(b);
            SendResult r = p.send(msg(mq.getTopic(), b), mq);
            check(r.getSendStatus() == SendStatus.SEND_OK && r.getMessageQueue().getQueueId() == mq.getQueueId(),
                "probe send %s: %s", b, r);
        }
        while (true) {
            Map<Integer, List<String>> out = new LinkedHashMap<>();
            for (int i = 0; i < mqs.size(); i++) {
                List<String> ms = a.by.get(bodies.get(i));
                if (ms != null) {
                    out.put(mqs.get(i).getQueueId(), new ArrayList<>(ms));
                }
            }
            if (out.size() == mqs.size()) {
                return out;
            }
            check(c.remainingMillis() > 2000, "round %s: %d/%d queues delivered: %s", tag, out.size(), mqs.size(), out);
            Thread.sleep(50);
        }
    }

    /** Null when the round shows one live owner per queue, averaging spread; else why not. */
    static String unsettled(Map<Integer, List<String>> round, Set<String> live) {
        Map<String, Integer> owned = new HashMap<>();
        for (var e : round.entrySet()) {
            if (e.getValue().size() != 1) {
                return "queue " + e.getKey() + " consumed by " + e.getValue();
            }
            String m = e.getValue().get(0);
            if (!live.contains(m)) {
                return "queue " + e.getKey() + " consumed by departed " + m;
            }
            owned.merge(m, 1, Integer::sum);
        }
        int n = live.size();
        int lo = REBALANCE_QUEUES / n, hi = (REBALANCE_QUEUES + n - 1) / n;
        for (String m : live) {
            int k = owned.getOrDefault(m, 0);
            if (k < lo || k > hi) {
                return "unbalanced " + owned + " over " + n + " members";
            }
        }
        return null;
    }

    /** Two members, a third joins, one leaves: queues settle to one live owner each. */
    static void rebalance(Ctx c) throws Exception {
        String topic = c.name("rebalance");
        createTopic(c, topic, REBALANCE_QUEUES);
        DefaultMQProducer p = producer(c, "rebalance_p");
        List<MessageQueue> mqs = new ArrayList<>();
        while (mqs.size() != REBALANCE_QUEUES && c.remainingMillis() > 0) {
            var got = orNull(() -> p.fetchPublishMessageQueues(topic));
            mqs = got == null ? new ArrayList<>() : new ArrayList<>(got);
            if (mqs.size() != REBALANCE_QUEUES) {
                Thread.sleep(200);
            }
        }
        check(mqs.size() == REBALANCE_QUEUES, "publish queues of %s: %s", topic, mqs);
        mqs.sort(Comparator.comparingInt(MessageQueue::getQueueId));
        Arrivals a = new Arrivals();
        Map<String, DefaultMQPushConsumer> members = new LinkedHashMap<>();
        List<String> sent = new ArrayList<>();
        int[] round = {0};
        for (String name : new String[] {"m1", "m2", "m3", "-m1"}) {
            if (name.startsWith("-")) {
                members.remove(name.substring(1)).shutdown();
            } else {
                DefaultMQPushConsumer pc = pushConsumer(c, "rebalance_c", name);
                pc.subscribe(topic, "*");
                pc.registerMessageListener(a.listener(name));
                pc.start();
                members.put(name, pc);
                if (members.size() < 2) {
                    continue;
                }
            }
            Set<String> live = new TreeSet<>(members.keySet());
            String why = "no round";
            while (why != null) {
                check(c.remainingMillis() > 5000, "members %s never settled: %s", live, why);
                round[0]++;
                c.step = "after " + name + " round " + round[0] + " (last: " + why + ")";
                why = unsettled(probeRound(c, p, mqs, a, String.format("%s-r%02d", name, round[0]), sent), live);
                if (why != null) {
                    Thread.sleep(500);
                }
            }
        }
        List<String> lost = new ArrayList<>();
        for (String b : sent) {
            if (!a.by.containsKey(b)) {
                lost.add(b);
            }
        }
        check(lost.isEmpty(), "%d probes never consumed: %s", lost.size(), lost);
        c.note = "settled in " + round[0] + " probe rounds";
    }

    /** Always RECONSUME_LATER, maxReconsumeTimes 1: the message ends in %DLQ%group intact. */
    static void dlq(Ctx c) throws Exception {
        String topic = c.name("dlq");
        String group = c.name("dlq_c");
        createTopic(c, topic, 2);
        // The broker creates %RETRY%<group> on the first heartbeat, but the
        // client learns its route only on its 30 s refresh: create it first.
        createTopic(c, "%RETRY%" + group, 1);
        DefaultMQProducer p = producer(c, "dlq_p");
        List<Integer> attempts = new CopyOnWriteArrayList<>();
        DefaultMQPushConsumer pc = pushConsumer(c, "dlq_c", "dlq_c");
        pc.setMaxReconsumeTimes(1);
        pc.setConsumeMessageBatchMaxSize(1);
        pc.subscribe(topic, "*");
        pc.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                attempts.add(m.getReconsumeTimes());
            }
            ctx.setDelayLevelWhenNextConsume(1); // 1 s instead of 10 s
            return ConsumeConcurrentlyStatus.RECONSUME_LATER;
        });
        pc.start();
        String key = c.name("dlq_key");
        Message m = new Message(topic, "TagD", key, "dead-letter".getBytes(StandardCharsets.UTF_8));
        m.putUserProperty("color", "red");
        sendOk(p, m);
        String dlqTopic = "%DLQ%" + group;
        DefaultMQAdminExt adm = admin(c);
        QueryResult q = null;
        while (c.remainingMillis() > 0) {
            q = orNull(() -> adm.queryMessage(dlqTopic, key, 32, 0, Long.MAX_VALUE));
            if (q != null && !q.getMessageList().isEmpty()) {
                break;
            }
            Thread.sleep(300);
        }
        check(q != null && q.getMessageList().size() == 1, "query %s by key %s: %s", dlqTopic, key,
            q == null ? null : q.getMessageList());
        MessageExt d = q.getMessageList().get(0);
        check(dlqTopic.equals(d.getTopic()), "dead letter in topic %s, want %s", d.getTopic(), dlqTopic);
        check("dead-letter".equals(body(d)), "dead letter body %s", body(d));
        check("TagD".equals(d.getTags()) && key.equals(d.getKeys()) && "red".equals(d.getUserProperty("color")),
            "dead letter lost properties: %s", d.getProperties());
        check(topic.equals(d.getProperty("RETRY_TOPIC")), "dead letter RETRY_TOPIC %s, want %s", d.getProperty("RETRY_TOPIC"), topic);
        check(attempts.equals(List.of(0, 1)), "consume attempts with reconsumeTimes %s, want [0, 1]", attempts);
    }

    /**
     * mqadmin engine calls not covered by admin_route / admin_group / query:
     * getBrokerConfig, topicClusterList, producerConnection, consumerConnection,
     * consumerStatus (running info), queryMsgByUniqueKey, deleteSubGroup, deleteTopic.
     */
    static void adminTools(Ctx c) throws Exception {
        String topic = c.name("admin_tools");
        String pgroup = c.name("admin_tools_p");
        String cgroup = c.name("admin_tools_c");
        createTopic(c, topic, 4);
        DefaultMQAdminExt a = admin(c);

        c.step = "getBrokerConfig";
        // getBrokerConfig
        var props = a.getBrokerConfig(c.broker);
        check("DefaultCluster".equals(props.getProperty("brokerClusterName")) && props.getProperty("brokerName") != null,
            "getBrokerConfig: brokerClusterName=%s brokerName=%s", props.getProperty("brokerClusterName"), props.getProperty("brokerName"));
        check(c.broker.endsWith(":" + props.getProperty("listenPort")), "getBrokerConfig: listenPort %s, broker %s",
            props.getProperty("listenPort"), c.broker);

        c.step = "topicClusterList";
        // topicClusterList
        Set<String> clusters = a.getTopicClusterList(topic);
        check(clusters.equals(Set.of("DefaultCluster")), "topicClusterList: %s", clusters);

        c.step = "producerConnection";
        // producerConnection: the producer's heartbeat registers it.
        DefaultMQProducer p = producer(c, "admin_tools_p");
        SendResult r = p.send(new Message(topic, "TagT", "k-tools", "tools-1".getBytes(StandardCharsets.UTF_8)));
        check(r.getSendStatus() == SendStatus.SEND_OK, "send: %s", r);
        int producers = 0;
        while (producers == 0 && c.remainingMillis() > 2000) {
            var pconn = orNull(() -> a.examineProducerConnectionInfo(pgroup, topic));
            producers = pconn == null ? 0 : pconn.getConnectionSet().size();
            if (producers == 0) {
                Thread.sleep(200);
            }
        }
        check(producers == 1, "producerConnection %s: %d connections", pgroup, producers);

        c.step = "queryMsgByUniqueKey";
        // queryMsgByUniqueKey: viewMessage with the client message id.
        MessageExt byUniq = null;
        while (byUniq == null && c.remainingMillis() > 2000) {
            byUniq = orNull(() -> a.viewMessage(topic, r.getMsgId()));
            if (byUniq == null) {
                Thread.sleep(300);
            }
        }
        check(byUniq != null && "tools-1".equals(body(byUniq)) && r.getMsgId().equals(byUniq.getMsgId()),
            "queryMsgByUniqueKey %s: %s", r.getMsgId(), byUniq);

        c.step = "consumerConnection";
        // consumerConnection and consumerStatus (running info relayed to the client).
        Scenarios.Bodies got = new Scenarios.Bodies();
        DefaultMQPushConsumer pc = pushConsumer(c, "admin_tools_c", "admin_tools_c");
        pc.subscribe(topic, "TagT");
        pc.registerMessageListener(got.listener());
        pc.start();
        got.await(c, List.of("tools-1"));
        Object conn = null;
        while (conn == null && c.remainingMillis() > 2000) {
            conn = orNull(() -> a.examineConsumerConnectionInfo(cgroup));
            if (conn == null) {
                Thread.sleep(200);
            }
        }
        check(conn != null, "consumerConnection %s: not online", cgroup);
        var cc = a.examineConsumerConnectionInfo(cgroup);
        check(cc.getConnectionSet().size() == 1, "consumerConnection: %d connections", cc.getConnectionSet().size());
        check("CLUSTERING".equals(String.valueOf(cc.getMessageModel())), "consumerConnection: model %s", cc.getMessageModel());
        var sub = cc.getSubscriptionTable().get(topic);
        check(sub != null && "TagT".equals(sub.getSubString()), "consumerConnection: subscription %s", cc.getSubscriptionTable());
        String clientId = cc.getConnectionSet().iterator().next().getClientId();
        var running = a.getConsumerRunningInfo(cgroup, clientId, false);
        check(running != null && running.getSubscriptionSet().stream().anyMatch(s -> topic.equals(s.getTopic())),
            "consumerStatus: subscriptions %s", running == null ? null : running.getSubscriptionSet());
        long queues = running.getMqTable().keySet().stream().filter(mq -> topic.equals(mq.getTopic())).count();
        check(queues == 4, "consumerStatus: %d queues of %s in mqTable", queues, topic);
        pc.shutdown();

        c.step = "deleteSubGroup";
        // deleteSubGroup
        Object sg = Driver.newOf("org.apache.rocketmq.remoting.protocol.subscription.SubscriptionGroupConfig",
            "org.apache.rocketmq.common.subscription.SubscriptionGroupConfig");
        String delGroup = c.name("admin_tools_del");
        Driver.call(sg, "setGroupName", delGroup);
        Driver.call(a, "createAndUpdateSubscriptionGroupConfig", c.broker, sg);
        check(orNull(() -> a.examineSubscriptionGroupConfig(c.broker, delGroup)) != null, "updateSubGroup %s: not readable", delGroup);
        a.deleteSubscriptionGroup(c.broker, delGroup);
        Object gone = orNull(() -> a.examineSubscriptionGroupConfig(c.broker, delGroup));
        check(gone == null, "deleteSubGroup %s: still readable: %s", delGroup, gone);

        c.step = "deleteTopic";
        p.shutdown(); // no client of the topic left to touch it
        // deleteTopic -c DefaultCluster: broker, then name server.
        a.deleteTopicInBroker(Collections.singleton(c.broker), topic);
        try {
            Driver.call(a, "deleteTopicInNameServer", Set.of(c.namesrv), topic); // 5.x
        } catch (NoSuchMethodException e) {
            // 4.9.8 has only (addrs, topic, clusterName); 5.x's 3-argument form is (addrs, clusterName, topic).
            Driver.call(a, "deleteTopicInNameServer", Set.of(c.namesrv), topic, "DefaultCluster");
        }
        boolean listed = true;
        while (listed && c.remainingMillis() > 2000) {
            var all = orNull(() -> a.fetchAllTopicList());
            listed = all == null || all.getTopicList().contains(topic);
            if (listed) {
                Thread.sleep(200);
            }
        }
        check(!listed, "deleteTopic: %s still in topicList (route %s, broker topic config %s)", topic,
            orNull(() -> a.examineTopicRouteInfo(topic)), orNull(() -> a.examineTopicStats(topic)) != null);
        check(orNull(() -> a.examineTopicRouteInfo(topic)) == null, "deleteTopic: %s still routed", topic);
    }
}
