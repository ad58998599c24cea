package io.rocketgo.conformance;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.tools.command.MQAdminStartup;

/**
 * The Java side of the auth scenarios (conformance/auth_test.go): the real
 * client signing with {@code AclClientRPCHook}, and Java's own mqadmin.
 * Every event is one stdout line; every mode ends by itself.
 *
 * <pre>
 * send --namesrv A --topic T --count N [--ak AK --sk SK]
 *   SENT &lt;status&gt; | ERR &lt;responseCode&gt; &lt;one-line message&gt;
 *   DONE sent=&lt;n&gt; failed=&lt;m&gt;
 * consume --namesrv A --topic T --group G --expect N --deadline-ms D [--ak AK --sk SK]
 *   DONE got=&lt;n&gt;
 * admin [--ak AK --sk SK] -- &lt;mqadmin arguments&gt;
 *   mqadmin's own output
 * popconsume --namesrv A --topic T --group G --expect N --deadline-ms D --invisible-ms I --grace-ms W
 *   a push consumer with clientRebalance=false: it asks the broker
 *   (QUERY_ASSIGNMENT) and pops when the group is in POP mode (mqadmin
 *   setConsumeMode); after N messages it keeps listening W ms, so a message
 *   delivered again after its invisible time would show
 *   GOT &lt;body&gt; &lt;reconsumeTimes&gt; &lt;POP_CK&gt;
 *   DONE got=&lt;n&gt;
 * </pre>
 */
public final class AuthTool {
    private AuthTool() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            throw new IllegalArgumentException("mode required: send, consume, admin");
        }
        int dash = Arrays.asList(args).indexOf("--");
        String[] own = dash < 0 ? args : Arrays.copyOfRange(args, 0, dash);
        Map<String, String> o = options(Arrays.copyOfRange(own, 1, own.length));
        RPCHook hook = null;
        if (o.containsKey("ak")) {
            hook = new AclClientRPCHook(new SessionCredentials(o.get("ak"), o.get("sk")));
        }
        switch (args[0]) {
            case "send":
                send(o, hook);
                break;
            case "consume":
                consume(o, hook);
                break;
            case "popconsume":
                popConsume(o, hook);
                break;
            case "admin":
                String[] rest = dash < 0 ? new String[0] : Arrays.copyOfRange(args, dash + 1, args.length);
                MQAdminStartup.main0(rest, hook);
                break;
            default:
                throw new IllegalArgumentException("unknown mode " + args[0]);
        }
        System.out.flush();
        System.exit(0);
    }

    private static Map<String, String> options(String[] a) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i + 1 < a.length; i += 2) {
            if (!a[i].startsWith("--")) {
                throw new IllegalArgumentException("bad option " + a[i]);
            }
            m.put(a[i].substring(2), a[i + 1]);
        }
        return m;
    }

    private static String oneLine(Throwable t) {
        String s = t.getClass().getSimpleName() + ": " + t.getMessage();
        return s.replace('\n', ' ');
    }

    /** The broker's refusal inside a client exception (a send that is not retried wraps it). */
    private static MQBrokerException brokerCause(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof MQBrokerException) {
                return (MQBrokerException) c;
            }
        }
        return null;
    }

    private static void send(Map<String, String> o, RPCHook hook) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer("authtool_pg", hook);
        p.setNamesrvAddr(o.get("namesrv"));
        p.setRetryTimesWhenSendFailed(0);
        p.setSendMsgTimeout(5000);
        p.start();
        int n = Integer.parseInt(o.getOrDefault("count", "1"));
        int sent = 0;
        int failed = 0;
        try {
            for (int i = 0; i < n; i++) {
                Message m = new Message(o.get("topic"), "tagA", ("auth " + i).getBytes(StandardCharsets.UTF_8));
                try {
                    SendResult r = p.send(m);
                    System.out.println("SENT " + r.getSendStatus());
                    sent++;
                } catch (Exception e) {
                    MQBrokerException be = brokerCause(e);
                    if (be != null) {
                        System.out.println("ERR " + be.getResponseCode() + " " + oneLine(be));
                    } else {
                        System.out.println("ERR -1 " + oneLine(e));
                    }
                    failed++;
                }
            }
        } finally {
            p.shutdown();
        }
        System.out.println("DONE sent=" + sent + " failed=" + failed);
    }

    private static void consume(Map<String, String> o, RPCHook hook) throws Exception {
        int expect = Integer.parseInt(o.get("expect"));
        long deadline = Long.parseLong(o.getOrDefault("deadline-ms", "30000"));
        AtomicInteger got = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(expect);
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(o.get("group"), hook, new AllocateMessageQueueAveragely());
        c.setNamesrvAddr(o.get("namesrv"));
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(o.get("topic"), "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (int i = 0; i < msgs.size(); i++) {
                got.incrementAndGet();
                done.countDown();
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        try {
            done.await(deadline, TimeUnit.MILLISECONDS);
        } finally {
            c.shutdown();
        }
        System.out.println("DONE got=" + got.get());
    }

    private static void popConsume(Map<String, String> o, RPCHook hook) throws Exception {
        int expect = Integer.parseInt(o.get("expect"));
        long deadline = Long.parseLong(o.getOrDefault("deadline-ms", "60000"));
        long grace = Long.parseLong(o.getOrDefault("grace-ms", "0"));
        AtomicInteger got = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(expect);
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(o.get("group"), hook, new AllocateMessageQueueAveragely());
        c.setNamesrvAddr(o.get("namesrv"));
        // 5.x-only setters, called reflectively so the class still compiles
        // in the 4.9 profiles (which never run this mode).
        DefaultMQPushConsumer.class.getMethod("setClientRebalance", boolean.class).invoke(c, false);
        DefaultMQPushConsumer.class.getMethod("setPopInvisibleTime", long.class)
            .invoke(c, Long.parseLong(o.getOrDefault("invisible-ms", "60000")));
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(o.get("topic"), "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (org.apache.rocketmq.common.message.MessageExt m : msgs) {
                System.out.println("GOT " + new String(m.getBody(), StandardCharsets.UTF_8).replace(' ', '_') + " "
                    + m.getReconsumeTimes() + " " + String.valueOf(m.getProperty("POP_CK")).replace(' ', '_'));
                got.incrementAndGet();
                done.countDown();
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        try {
            done.await(deadline, TimeUnit.MILLISECONDS);
            Thread.sleep(grace);
        } finally {
            c.shutdown();
        }
        System.out.println("DONE got=" + got.get());
    }
}
