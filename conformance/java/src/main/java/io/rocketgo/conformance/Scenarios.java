package io.rocketgo.conformance;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.rocketmq.client.QueryResult;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.store.ReadOffsetType;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.listener.MessageListenerOrderly;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.client.producer.TransactionSendResult;
import org.apache.rocketmq.client.utils.MessageUtil;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

import io.rocketgo.conformance.Driver.Ctx;

/** The Java implementation of the scenario table (conformance/scenario/table.go). */
final class Scenarios {
    private Scenarios() {
    }

    static void run(String name, Ctx c) throws Exception {
        switch (name) {
            case "admin_route": adminRoute(c); break;
            case "send_push": sendPush(c); break;
            case "pull": pull(c); break;
            case "tag_filter": tagFilter(c); break;
            case "broadcast": broadcast(c); break;
            case "orderly": orderly(c); break;
            case "query": query(c); break;
            case "admin_group": adminGroup(c); break;
            case "offset_resume": offsetResume(c); break;
            case "delay": delay(c); break;
            case "retry": retry(c); break;
            case "transaction": transaction(c); break;
            case "request_reply": requestReply(c); break;
            case "sql92": sql92(c); break;
            case "timer": Extra.timer(c); break;
            case "recall": Recall.recall(c); break;
            case "rebalance": Extra.rebalance(c); break;
            case "dlq": Extra.dlq(c); break;
            case "admin_tools": Extra.adminTools(c); break;
            case "push_fresh": Fresh.pushFresh(c); break;
            case "lite_then_push": Fresh.liteThenPush(c); break;
            case "retry_twice": Fresh.retryTwiceBoth(c); break;
            case "delay_restart": Restarts.delayRestart(c); break;
            case "timer_restart": Restarts.timerRestart(c); break;
            case "txn_restart": Restarts.txnRestart(c); break;
            default: throw new IllegalArgumentException("unknown scenario " + name);
        }
    }

    // ---- helpers ---------------------------------------------------------

    static void check(boolean ok, String fmt, Object... args) {
        if (!ok) {
            throw new AssertionError(String.format(fmt, args));
        }
    }

    static String body(MessageExt m) {
        return new String(m.getBody(), StandardCharsets.UTF_8);
    }

    static List<String> seq(String prefix, int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(String.format("%s-%03d", prefix, i));
        }
        return out;
    }

    static Message msg(String topic, String body) {
        return new Message(topic, body.getBytes(StandardCharsets.UTF_8));
    }

    static DefaultMQAdminExt admin(Ctx c) throws Exception {
        DefaultMQAdminExt a = new DefaultMQAdminExt(5000);
        a.setNamesrvAddr(c.namesrv);
        a.setInstanceName(c.name("admin") + "_" + System.nanoTime());
        a.setAdminExtGroup(c.name("admin_grp"));
        a.start();
        c.onClose(a::shutdown);
        return a;
    }

    static void createTopic(Ctx c, String topic, int queues) throws Exception {
        DefaultMQAdminExt a = admin(c);
        a.createAndUpdateTopicConfig(c.broker, new TopicConfig(topic, queues, queues, 6));
        waitRoute(c, a, topic);
    }

    static void waitRoute(Ctx c, DefaultMQAdminExt a, String topic) throws Exception {
        Exception last = null;
        while (c.remainingMillis() > 0) {
            try {
                var route = a.examineTopicRouteInfo(topic);
                if (route != null && !route.getQueueDatas().isEmpty()) {
                    return;
                }
            } catch (Exception e) {
                last = e;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("no route for " + topic, last);
    }

    static DefaultMQProducer producer(Ctx c, String group) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer(c.name(group));
        p.setNamesrvAddr(c.namesrv);
        p.setInstanceName(c.name(group));
        p.setSendMsgTimeout(5000);
        p.start();
        c.onClose(p::shutdown);
        return p;
    }

    static DefaultMQPushConsumer pushConsumer(Ctx c, String group, String instance) {
        DefaultMQPushConsumer pc = new DefaultMQPushConsumer(c.name(group));
        pc.setNamesrvAddr(c.namesrv);
        pc.setInstanceName(c.name(instance));
        pc.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.onClose(pc::shutdown);
        return pc;
    }

    static void sendOk(DefaultMQProducer p, Message m) throws Exception {
        SendResult r = p.send(m);
        check(r.getSendStatus() == SendStatus.SEND_OK, "send %s: %s", new String(m.getBody(), StandardCharsets.UTF_8), r);
    }

    /** Thread-safe record of consumed messages by body. */
    static final class Bodies {
        final Map<String, List<MessageExt>> seen = new ConcurrentHashMap<>();

        MessageListenerConcurrently listener() {
            return (msgs, ctx) -> {
                add(msgs);
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            };
        }

        void add(List<MessageExt> msgs) {
            for (MessageExt m : msgs) {
                seen.computeIfAbsent(body(m), k -> new CopyOnWriteArrayList<>()).add(m);
            }
            synchronized (this) {
                notifyAll();
            }
        }

        List<String> missing(Collection<String> want) {
            List<String> miss = new ArrayList<>();
            for (String w : want) {
                // The list is created empty an instant before the message is added.
                List<MessageExt> l = seen.get(w);
                if (l == null || l.isEmpty()) {
                    miss.add(w);
                }
            }
            return miss;
        }

        void await(Ctx c, Collection<String> want) throws InterruptedException {
            synchronized (this) {
                while (!missing(want).isEmpty()) {
                    long left = c.remainingMillis();
                    if (left <= 0) {
                        List<String> miss = missing(want);
                        throw new AssertionError(miss.size() + "/" + want.size() + " bodies not consumed: "
                            + miss.subList(0, Math.min(5, miss.size())));
                    }
                    wait(Math.min(left, 200));
                }
            }
        }
    }

    // ---- scenarios -------------------------------------------------------

    /** mqadmin updateTopic -c, topicList, topicRoute, topicStatus, clusterList, brokerStatus. */
    static void adminRoute(Ctx c) throws Exception {
        DefaultMQAdminExt a = admin(c);
        var cluster = a.examineBrokerClusterInfo();
        while (cluster.getClusterAddrTable().isEmpty() && c.remainingMillis() > 0) {
            Thread.sleep(200);
            cluster = a.examineBrokerClusterInfo();
        }
        check(cluster.getClusterAddrTable().containsKey("DefaultCluster"), "clusterList: no DefaultCluster in %s", cluster.getClusterAddrTable());
        List<String> masters = new ArrayList<>();
        for (var bd : cluster.getBrokerAddrTable().values()) {
            String addr = bd.getBrokerAddrs().get(0L);
            check(addr != null, "clusterList: broker %s has no master", bd.getBrokerName());
            masters.add(addr);
        }
        check(masters.contains(c.broker), "clusterList: masters %s do not include %s", masters, c.broker);
        // updateTopic -c DefaultCluster: create on every master.
        String topic = c.name("admin_route");
        for (String addr : masters) {
            a.createAndUpdateTopicConfig(addr, new TopicConfig(topic, 4, 4, 6));
        }
        waitRoute(c, a, topic);
        var route = a.examineTopicRouteInfo(topic);
        check(route.getQueueDatas().size() == 1 && route.getQueueDatas().get(0).getWriteQueueNums() == 4,
            "topicRoute: %s", route.getQueueDatas());
        check(route.getBrokerDatas().get(0).getBrokerAddrs().get(0L).equals(c.broker), "topicRoute brokers: %s", route.getBrokerDatas());
        boolean listed = false;
        while (!listed && c.remainingMillis() > 0) {
            listed = a.fetchAllTopicList().getTopicList().contains(topic);
            if (!listed) {
                Thread.sleep(200);
            }
        }
        check(listed, "topicList does not include %s", topic);
        DefaultMQProducer p = producer(c, "admin_route_p");
        sendOk(p, msg(topic, "one"));
        var stats = a.examineTopicStats(topic);
        long max = 0;
        for (var e : stats.getOffsetTable().entrySet()) {
            check(e.getKey().getTopic().equals(topic), "topicStatus: foreign queue %s", e.getKey());
            max += e.getValue().getMaxOffset();
        }
        check(stats.getOffsetTable().size() == 4 && max == 1, "topicStatus: %d queues, sum maxOffset %d", stats.getOffsetTable().size(), max);
        var kv = a.fetchBrokerRuntimeStats(c.broker);
        check(kv.getTable().containsKey("brokerVersionDesc") && kv.getTable().containsKey("putTps"),
            "brokerStatus: keys %s", kv.getTable().keySet());
    }

    /** Sync, async, oneway and batch sends, then a clustering push consumer. */
    static void sendPush(Ctx c) throws Exception {
        String topic = c.name("send_push");
        createTopic(c, topic, 4);
        DefaultMQProducer p = producer(c, "send_push_p");
        List<String> want = new ArrayList<>();
        java.util.function.BiFunction<String, String, Message> mk = (b, tag) -> {
            Message m = new Message(topic, tag, "key-" + b, b.getBytes(StandardCharsets.UTF_8));
            m.putUserProperty("color", "c-" + b);
            return m;
        };
        for (String b : seq("sync", 3)) {
            want.add(b);
            sendOk(p, mk.apply(b, "TagSync"));
        }
        CountDownLatch asyncDone = new CountDownLatch(3);
        AtomicReference<Throwable> asyncErr = new AtomicReference<>();
        for (String b : seq("async", 3)) {
            want.add(b);
            p.send(mk.apply(b, "TagAsync"), new SendCallback() {
                @Override
                public void onSuccess(SendResult r) {
                    if (r.getSendStatus() != SendStatus.SEND_OK) {
                        asyncErr.compareAndSet(null, new AssertionError("async status " + r));
                    }
                    asyncDone.countDown();
                }

                @Override
                public void onException(Throwable e) {
                    asyncErr.compareAndSet(null, e);
                    asyncDone.countDown();
                }
            });
        }
        check(asyncDone.await(c.remainingMillis(), TimeUnit.MILLISECONDS), "async sends did not complete");
        if (asyncErr.get() != null) {
            throw new AssertionError("async send", asyncErr.get());
        }
        for (String b : seq("oneway", 3)) {
            want.add(b);
            p.sendOneway(mk.apply(b, "TagOneway"));
        }
        List<Message> batch = new ArrayList<>();
        for (String b : seq("batch", 3)) {
            want.add(b);
            batch.add(mk.apply(b, "TagBatch"));
        }
        SendResult br = p.send(batch);
        check(br.getSendStatus() == SendStatus.SEND_OK, "batch send: %s", br);

        Bodies got = new Bodies();
        DefaultMQPushConsumer pc = pushConsumer(c, "send_push_c", "send_push_c");
        pc.subscribe(topic, "*");
        pc.registerMessageListener(got.listener());
        pc.start();
        got.await(c, want);
        for (String b : want) {
            MessageExt m = got.seen.get(b).get(0);
            String kind = b.substring(0, b.indexOf('-'));
            String wantTag = "Tag" + Character.toUpperCase(kind.charAt(0)) + kind.substring(1);
            check(wantTag.equals(m.getTags()), "%s: tag %s want %s", b, m.getTags(), wantTag);
            check(("key-" + b).equals(m.getKeys()), "%s: keys %s", b, m.getKeys());
            check(("c-" + b).equals(m.getUserProperty("color")), "%s: color %s", b, m.getUserProperty("color"));
            check(topic.equals(m.getTopic()) && m.getMsgId() != null, "%s: topic %s id %s", b, m.getTopic(), m.getMsgId());
        }
    }

    /** Lite-pull consumer in assign mode reads every queue from offset 0. */
    static void pull(Ctx c) throws Exception {
        String topic = c.name("pull");
        createTopic(c, topic, 4);
        DefaultMQProducer p = producer(c, "pull_p");
        List<String> want = seq("pull", 8);
        for (String b : want) {
            sendOk(p, msg(topic, b));
        }
        DefaultLitePullConsumer lc = new DefaultLitePullConsumer(c.name("pull_c"));
        lc.setNamesrvAddr(c.namesrv);
        lc.setInstanceName(c.name("pull_c"));
        lc.setAutoCommit(false);
        lc.setPollTimeoutMillis(1000);
        c.onClose(lc::shutdown);
        lc.start();
        Collection<MessageQueue> mqs = lc.fetchMessageQueues(topic);
        check(mqs.size() == 4, "fetchMessageQueues: %s", mqs);
        lc.assign(mqs);
        for (MessageQueue mq : mqs) {
            lc.seek(mq, 0);
        }
        Bodies got = new Bodies();
        int total = 0;
        while (!got.missing(want).isEmpty() && c.remainingMillis() > 0) {
            List<MessageExt> msgs = lc.poll(1000);
            total += msgs.size();
            got.add(msgs);
        }
        check(got.missing(want).isEmpty(), "not pulled: %s", got.missing(want));
        // At-least-once: the lite-pull client may re-read a queue when seek()
        // races a pull already in flight, but nothing outside the sent set may
        // appear.
        check(total >= want.size(), "pulled %d messages, want %d", total, want.size());
        check(want.containsAll(got.seen.keySet()), "unexpected bodies: %s", got.seen.keySet());
    }

    /** Subscription "TagA || TagB" never delivers TagC. */
    static void tagFilter(Ctx c) throws Exception {
        String topic = c.name("tag_filter");
        createTopic(c, topic, 4);
        DefaultMQProducer p = producer(c, "tag_filter_p");
        List<String> want = new ArrayList<>();
        for (String tag : new String[] {"TagC", "TagA", "TagB"}) {
            for (String b : seq(tag, 4)) {
                sendOk(p, new Message(topic, tag, b.getBytes(StandardCharsets.UTF_8)));
                if (!tag.equals("TagC")) {
                    want.add(b);
                }
            }
        }
        Bodies got = new Bodies();
        DefaultMQPushConsumer pc = pushConsumer(c, "tag_filter_c", "tag_filter_c");
        pc.subscribe(topic, "TagA || TagB");
        pc.registerMessageListener(got.listener());
        pc.start();
        got.await(c, want);
        for (String b : got.seen.keySet()) {
            check(!b.startsWith("TagC"), "filtered-out message %s delivered", b);
        }
    }

    /** Two broadcasting consumers of one group each see every message. */
    static void broadcast(Ctx c) throws Exception {
        String topic = c.name("broadcast");
        createTopic(c, topic, 4);
        DefaultMQProducer p = producer(c, "broadcast_p");
        List<String> want = seq("bc", 8);
        for (String b : want) {
            sendOk(p, msg(topic, b));
        }
        List<Bodies> sets = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Bodies got = new Bodies();
            sets.add(got);
            DefaultMQPushConsumer pc = pushConsumer(c, "broadcast_c", "broadcast_c" + i);
            Driver.setEnum(pc, "setMessageModel", "BROADCASTING");
            pc.subscribe(topic, "*");
            pc.registerMessageListener(got.listener());
            pc.start();
        }
        for (Bodies got : sets) {
            got.await(c, want);
        }
    }

    /** Queue-selector sends per order id, orderly consumption in step order. */
    static void orderly(Ctx c) throws Exception {
        String topic = c.name("orderly");
        createTopic(c, topic, 4);
        DefaultMQProducer p = producer(c, "orderly_p");
        int orders = 6, steps = 5;
        List<String> want = new ArrayList<>();
        for (int s = 0; s < steps; s++) {
            for (int o = 0; o < orders; o++) {
                String b = "order" + o + "-step" + s;
                want.add(b);
                SendResult r = p.send(msg(topic, b), (mqs, m, arg) -> mqs.get((Integer) arg % mqs.size()), o);
                check(r.getSendStatus() == SendStatus.SEND_OK && r.getMessageQueue().getQueueId() == o % 4,
                    "selector send %s: %s", b, r);
            }
        }
        Map<Integer, List<Integer>> seen = new ConcurrentHashMap<>();
        Bodies got = new Bodies();
        DefaultMQPushConsumer pc = pushConsumer(c, "orderly_c", "orderly_c");
        pc.subscribe(topic, "*");
        pc.registerMessageListener((MessageListenerOrderly) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                String b = body(m);
                int o = Integer.parseInt(b.substring(5, b.indexOf('-')));
                int s = Integer.parseInt(b.substring(b.indexOf("step") + 4));
                seen.computeIfAbsent(o, k -> new CopyOnWriteArrayList<>()).add(s);
            }
            got.add(msgs);
            return ConsumeOrderlyStatus.SUCCESS;
        });
        pc.start();
        got.await(c, want);
        for (var e : seen.entrySet()) {
            int next = 0;
            for (int s : e.getValue()) {
                check(s <= next, "order%d consumed out of order: %s", e.getKey(), e.getValue());
                if (s == next) {
                    next++;
                }
            }
        }
    }

    /** queryMsgByKey and queryMsgById (offset message id). */
    static void query(Ctx c) throws Exception {
        String topic = c.name("query");
        createTopic(c, topic, 2);
        DefaultMQProducer p = producer(c, "query_p");
        String key = c.name("key");
        Message m = new Message(topic, "TagQ", key, "find-me".getBytes(StandardCharsets.UTF_8));
        SendResult r = p.send(m);
        check(r.getSendStatus() == SendStatus.SEND_OK, "send: %s", r);
        DefaultMQAdminExt a = admin(c);
        QueryResult q = null;
        while (c.remainingMillis() > 0) {
            try {
                q = a.queryMessage(topic, key, 32, 0, Long.MAX_VALUE);
                if (!q.getMessageList().isEmpty()) {
                    break;
                }
            } catch (Exception e) {
                // index not built yet: QUERY_NOT_FOUND
            }
            Thread.sleep(300);
        }
        check(q != null && q.getMessageList().size() == 1, "queryMsgByKey %s: %s", key, q == null ? null : q.getMessageList());
        MessageExt byKey = q.getMessageList().get(0);
        check("find-me".equals(body(byKey)) && key.equals(byKey.getKeys()), "queryMsgByKey: %s", byKey);
        MessageExt byId = a.viewMessage(topic, r.getOffsetMsgId());
        check("find-me".equals(body(byId)) && r.getOffsetMsgId().equals(byId.getMsgId()) || "find-me".equals(body(byId)),
            "queryMsgById: %s", byId);
        check(byId.getStoreHost().toString().contains(c.broker.substring(c.broker.indexOf(':'))),
            "queryMsgById: store host %s, broker %s", byId.getStoreHost(), c.broker);
    }

    /** updateSubGroup, consumerProgress, resetOffsetByTime. */
    static void adminGroup(Ctx c) throws Exception {
        String topic = c.name("admin_group");
        String group = c.name("admin_group_c");
        createTopic(c, topic, 2);
        DefaultMQAdminExt a = admin(c);
        Object sub = Driver.newOf("org.apache.rocketmq.remoting.protocol.subscription.SubscriptionGroupConfig",
            "org.apache.rocketmq.common.subscription.SubscriptionGroupConfig");
        Driver.call(sub, "setGroupName", group);
        Driver.call(sub, "setRetryMaxTimes", 3);
        Driver.call(a, "createAndUpdateSubscriptionGroupConfig", c.broker, sub);
        Object back = a.examineSubscriptionGroupConfig(c.broker, group);
        check(back != null && Integer.valueOf(3).equals(Driver.call(back, "getRetryMaxTimes")), "updateSubGroup: read back %s", back);

        long before = System.currentTimeMillis() - 1000;
        DefaultMQProducer p = producer(c, "admin_group_p");
        List<String> want = seq("ag", 4);
        for (String b : want) {
            sendOk(p, msg(topic, b));
        }
        Bodies got = new Bodies();
        DefaultMQPushConsumer pc = pushConsumer(c, "admin_group_c", "admin_group_c");
        pc.subscribe(topic, "*");
        pc.registerMessageListener(got.listener());
        pc.start();
        got.await(c, want);
        // consumerProgress: offsets are committed by the client every 5 s.
        long brokerOff = -1, consumerOff = -2;
        while (c.remainingMillis() > 0) {
            var stats = orNull(() -> a.examineConsumeStats(group));
            if (stats == null) {
                Thread.sleep(500); // CONSUMER_NOT_ONLINE / empty table until the first commit
                continue;
            }
            brokerOff = 0;
            consumerOff = 0;
            for (var e : stats.getOffsetTable().entrySet()) {
                if (e.getKey().getTopic().equals(topic)) {
                    brokerOff += e.getValue().getBrokerOffset();
                    consumerOff += e.getValue().getConsumerOffset();
                }
            }
            if (brokerOff == want.size() && consumerOff == brokerOff) {
                break;
            }
            Thread.sleep(500);
        }
        check(brokerOff == want.size() && consumerOff == brokerOff, "consumerProgress: broker %d consumer %d", brokerOff, consumerOff);
        // resetOffsetByTime to before the sends: every message comes again.
        Map<MessageQueue, Long> reset = a.resetOffsetByTimestamp(topic, group, before, true);
        long sum = 0;
        for (var e : reset.entrySet()) {
            sum += e.getValue();
        }
        check(reset.size() == 2 && sum == 0, "resetOffsetByTime: %s", reset);
        synchronized (got) {
            while (c.remainingMillis() > 0) {
                int again = 0;
                for (String b : want) {
                    again += got.seen.get(b).size() >= 2 ? 1 : 0;
                }
                if (again == want.size()) {
                    return;
                }
                got.wait(200);
            }
        }
        throw new AssertionError("messages not redelivered after resetOffsetByTime");
    }

    /** Calls f, mapping any exception to null (for polling). */
    static <T> T orNull(java.util.concurrent.Callable<T> f) {
        try {
            return f.call();
        } catch (Exception e) {
            return null;
        }
    }

    /** A restarted consumer resumes from its committed offsets. */
    static void offsetResume(Ctx c) throws Exception {
        String topic = c.name("offset_resume");
        createTopic(c, topic, 2);
        DefaultMQProducer p = producer(c, "offset_resume_p");
        List<String> first = seq("first", 6), second = seq("second", 6);
        for (String b : first) {
            sendOk(p, msg(topic, b));
        }
        Bodies got1 = new Bodies();
        DefaultMQPushConsumer c1 = pushConsumer(c, "offset_resume_c", "offset_resume_c1");
        c1.subscribe(topic, "*");
        c1.registerMessageListener(got1.listener());
        c1.start();
        got1.await(c, first);
        // The consumed offset moves after the listener returns: wait for it,
        // then shutdown persists it synchronously.
        var store = c1.getDefaultMQPushConsumerImpl().getOffsetStore();
        long consumed = -1;
        while (c.remainingMillis() > 0) {
            consumed = 0;
            for (MessageQueue mq : c1.fetchSubscribeMessageQueues(topic)) {
                consumed += Math.max(0, store.readOffset(mq, ReadOffsetType.READ_FROM_MEMORY));
            }
            if (consumed == first.size()) {
                break;
            }
            Thread.sleep(50);
        }
        check(consumed == first.size(), "consumed offset %d, want %d", consumed, first.size());
        c1.shutdown();
        // Shutdown commits offsets oneway and unregisters: wait until the
        // broker has both before the restart.
        DefaultMQAdminExt a = admin(c);
        String group = c.name("offset_resume_c");
        long committed = -1;
        boolean online = true;
        while (c.remainingMillis() > 0) {
            var stats = orNull(() -> a.examineConsumeStats(group));
            committed = 0;
            if (stats != null) {
                for (var e : stats.getOffsetTable().entrySet()) {
                    committed += Math.max(0, e.getValue().getConsumerOffset());
                }
            }
            online = orNull(() -> a.examineConsumerConnectionInfo(group)) != null;
            if (committed == first.size() && !online) {
                break;
            }
            Thread.sleep(100);
        }
        check(committed == first.size() && !online, "after shutdown: committed %d of %d, still online %s", committed, first.size(), online);
        for (String b : second) {
            sendOk(p, msg(topic, b));
        }
        Bodies got2 = new Bodies();
        DefaultMQPushConsumer c2 = pushConsumer(c, "offset_resume_c", "offset_resume_c2");
        c2.subscribe(topic, "*");
        c2.registerMessageListener(got2.listener());
        c2.start();
        got2.await(c, second);
        for (String b : got2.seen.keySet()) {
            check(!b.startsWith("first"), "restarted consumer got already-consumed %s", b);
        }
    }

    /** Delay level 1 = 1 s, three messages: none before send time + 1 s; lateness reported. */
    static void delay(Ctx c) throws Exception {
        String topic = c.name("delay");
        createTopic(c, topic, 2);
        DefaultMQProducer p = producer(c, "delay_p");
        Restarts.Clock clock = new Restarts.Clock();
        DefaultMQPushConsumer pc = pushConsumer(c, "delay_c", "delay_c");
        pc.subscribe(topic, "*");
        pc.registerMessageListener(clock.listener());
        pc.start();
        List<Restarts.Due> ds = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Message m = msg(topic, "delayed-1s-" + i);
            m.setDelayTimeLevel(1);
            long sent = System.currentTimeMillis();
            sendOk(p, m);
            ds.add(new Restarts.Due("delayed-1s-" + i, sent + 1000, sent + 1000));
        }
        List<String> want = Restarts.bodies(ds);
        clock.got.await(c, want);
        List<Long> late = Restarts.checkDue(clock, ds);
        for (String b : want) {
            MessageExt d = clock.got.seen.get(b).get(0);
            check(d.getStoreTimestamp() - d.getBornTimestamp() >= 1000, "%s stored %d ms after birth", b,
                d.getStoreTimestamp() - d.getBornTimestamp());
        }
        c.note = "lateness min/p50/max " + Restarts.spread(late);
    }

    /** RECONSUME_LATER once: redelivered with reconsumeTimes 1. */
    static void retry(Ctx c) throws Exception {
        String topic = c.name("retry");
        createTopic(c, topic, 2);
        DefaultMQProducer p = producer(c, "retry_p");
        Map<String, List<Integer>> attempts = new ConcurrentHashMap<>();
        Bodies got = new Bodies();
        DefaultMQPushConsumer pc = pushConsumer(c, "retry_c", "retry_c");
        pc.subscribe(topic, "*");
        pc.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            MessageExt m = msgs.get(0);
            List<Integer> a = attempts.computeIfAbsent(body(m), k -> new CopyOnWriteArrayList<>());
            a.add(m.getReconsumeTimes());
            if (a.size() == 1) {
                ctx.setDelayLevelWhenNextConsume(1); // 1 s instead of 10 s
                return ConsumeConcurrentlyStatus.RECONSUME_LATER;
            }
            got.add(msgs);
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        pc.start();
        sendOk(p, msg(topic, "retry-me"));
        got.await(c, List.of("retry-me"));
        List<Integer> a = attempts.get("retry-me");
        check(a.get(0) == 0 && a.get(1) == 1, "reconsumeTimes per attempt %s, want [0, 1]", a);
    }

    /** Commit delivered, rollback never, unknown resolved by check-back. */
    static void transaction(Ctx c) throws Exception {
        String topic = c.name("transaction");
        createTopic(c, topic, 2);
        Map<String, Integer> checked = new ConcurrentHashMap<>();
        TransactionMQProducer p = new TransactionMQProducer(c.name("transaction_p"));
        p.setNamesrvAddr(c.namesrv);
        p.setInstanceName(c.name("transaction_p"));
        p.setTransactionListener(new TransactionListener() {
            @Override
            public LocalTransactionState executeLocalTransaction(Message m, Object arg) {
                String b = new String(m.getBody(), StandardCharsets.UTF_8);
                if (b.startsWith("commit")) {
                    return LocalTransactionState.COMMIT_MESSAGE;
                }
                if (b.startsWith("rollback")) {
                    return LocalTransactionState.ROLLBACK_MESSAGE;
                }
                return LocalTransactionState.UNKNOW;
            }

            @Override
            public LocalTransactionState checkLocalTransaction(MessageExt m) {
                checked.merge(body(m), 1, Integer::sum);
                return body(m).startsWith("unknown") ? LocalTransactionState.COMMIT_MESSAGE : LocalTransactionState.ROLLBACK_MESSAGE;
            }
        });
        p.start();
        c.onClose(p::shutdown);
        Bodies got = new Bodies();
        DefaultMQPushConsumer pc = pushConsumer(c, "transaction_c", "transaction_c");
        pc.subscribe(topic, "*");
        pc.registerMessageListener(got.listener());
        pc.start();
        for (String b : new String[] {"commit-1", "rollback-1", "unknown-1"}) {
            TransactionSendResult r = p.sendMessageInTransaction(msg(topic, b), null);
            check(r.getSendStatus() == SendStatus.SEND_OK, "half send %s: %s", b, r);
        }
        got.await(c, List.of("commit-1", "unknown-1"));
        check(!got.seen.containsKey("rollback-1"), "rolled-back message delivered");
        check(checked.getOrDefault("unknown-1", 0) > 0, "unknown-1 delivered without a check-back");
    }

    /** producer.request answered through a reply message. */
    static void requestReply(Ctx c) throws Exception {
        String topic = c.name("request_reply");
        createTopic(c, topic, 2);
        DefaultMQProducer replier = producer(c, "request_reply_r");
        DefaultMQPushConsumer pc = pushConsumer(c, "request_reply_c", "request_reply_c");
        pc.subscribe(topic, "*");
        pc.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            try {
                for (MessageExt m : msgs) {
                    Message reply = MessageUtil.createReplyMessage(m, ("reply-to-" + body(m)).getBytes(StandardCharsets.UTF_8));
                    replier.send(reply);
                }
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            } catch (Exception e) {
                return ConsumeConcurrentlyStatus.RECONSUME_LATER;
            }
        });
        pc.start();
        DefaultMQProducer p = producer(c, "request_reply_p");
        Exception last = null;
        for (int attempt = 0; c.remainingMillis() > 0; attempt++) {
            String b = "question-" + attempt;
            try {
                Message r = p.request(msg(topic, b), Math.min(8000, Math.max(1000, c.remainingMillis() - 500)));
                String got = new String(r.getBody(), StandardCharsets.UTF_8);
                check(("reply-to-" + b).equals(got), "reply %s to %s", got, b);
                return;
            } catch (AssertionError e) {
                throw e;
            } catch (Exception e) {
                last = e;
            }
        }
        throw new AssertionError("no reply", last);
    }

    /** SQL92 "a > 5". */
    static void sql92(Ctx c) throws Exception {
        String topic = c.name("sql92");
        createTopic(c, topic, 2);
        DefaultMQProducer p = producer(c, "sql92_p");
        List<String> want = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            String b = "a=" + i;
            Message m = msg(topic, b);
            m.putUserProperty("a", Integer.toString(i));
            sendOk(p, m);
            if (i > 5) {
                want.add(b);
            }
        }
        Bodies got = new Bodies();
        DefaultMQPushConsumer pc = pushConsumer(c, "sql92_c", "sql92_c");
        pc.subscribe(topic, MessageSelector.bySql("a > 5"));
        pc.registerMessageListener(got.listener());
        pc.start();
        got.await(c, want);
        for (String b : got.seen.keySet()) {
            check(Integer.parseInt(b.substring(2)) > 5, "message %s does not match 'a > 5'", b);
        }
    }
}
