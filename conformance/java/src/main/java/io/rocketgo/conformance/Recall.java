package io.rocketgo.conformance;

import static io.rocketgo.conformance.Scenarios.admin;
import static io.rocketgo.conformance.Scenarios.check;
import static io.rocketgo.conformance.Scenarios.createTopic;
import static io.rocketgo.conformance.Scenarios.msg;
import static io.rocketgo.conformance.Scenarios.producer;
import static io.rocketgo.conformance.Scenarios.pushConsumer;

import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;

import io.rocketgo.conformance.Driver.Ctx;

/**
 * Message recall (5.3): DefaultMQProducer.recallMessage with the recall
 * handle of a timer send. Only the 5.x client has the API; it is called
 * reflectively so the class compiles against 4.9 as well.
 */
final class Recall {
    private Recall() {
    }

    /** Java's ILLEGAL_OPERATION. */
    static final int ILLEGAL_OPERATION = 604;

    /**
     * Three timer messages on one queue: "gone" and "keep" due in 10 s, a
     * sentinel two ticks later. "gone" is recalled: "keep" and the sentinel
     * arrive, "gone" never, and the topic holds exactly those two (the
     * sentinel's slot is delivered after gone's). Then handles the broker
     * refuses (due already, another topic, another broker) answer
     * ILLEGAL_OPERATION with Java's remarks, and a handle that does not
     * decode fails in the client.
     */
    static void recall(Ctx c) throws Exception {
        String topic = c.name("recall");
        String other = c.name("recall_o");
        createTopic(c, topic, 1);
        createTopic(c, other, 1);
        DefaultMQProducer p = producer(c, "recall_p");
        Restarts.Clock clock = new Restarts.Clock();
        DefaultMQPushConsumer pc = pushConsumer(c, "recall_c", "recall_c");
        pc.subscribe(topic, "*");
        pc.registerMessageListener(clock.listener());
        pc.start();

        long at = System.currentTimeMillis() + 10000;
        SendResult gone = timerSend(p, topic, "recall-gone", at);
        SendResult keep = timerSend(p, topic, "recall-keep", at);
        SendResult sentinel = timerSend(p, topic, "recall-sentinel", at + 2 * Extra.TIMER_PRECISION_MS);
        String handle = (String) Driver.call(gone, "getRecallHandle");
        check(handle != null && !handle.isEmpty(), "timer send result without recall handle: %s", gone);
        check(Driver.call(keep, "getRecallHandle") != null, "control send result without recall handle: %s", keep);

        String id = recallMessage(p, topic, handle);
        check(gone.getMsgId().equals(id), "recall answered msgId %s, sent %s", id, gone.getMsgId());

        // What the broker refuses, with a handle the client accepts.
        String[] raw = new String(Base64.getUrlDecoder().decode(handle), StandardCharsets.UTF_8).split(" ");
        check(raw.length == 5 && raw[0].equals("v1") && raw[1].equals(topic), "handle %s", Arrays.toString(raw));
        long past = System.currentTimeMillis() - 1000;
        refused(p, topic, v1(topic, raw[2], past, raw[4]), "recall failed, timestamp invalid");
        refused(p, other, handle, "recall failed, topic not match");
        refused(p, topic, v1(topic, raw[2] + "-x", Long.parseLong(raw[3]), raw[4]), "recall failed, broker service not available");
        try {
            recallMessage(p, topic, "not-a-handle");
            throw new AssertionError("recall of a malformed handle succeeded");
        } catch (MQClientException e) {
            check(e.getMessage().contains("recall handle is invalid"), "malformed handle: %s", e.getMessage());
        }

        List<String> want = List.of("recall-keep", "recall-sentinel");
        clock.got.await(c, want);
        check(!clock.got.seen.containsKey("recall-gone"), "recalled message consumed");
        var stats = admin(c).examineTopicStats(topic);
        long max = 0;
        for (var e : stats.getOffsetTable().entrySet()) {
            max += e.getValue().getMaxOffset();
        }
        check(max == 2, "topic holds %d messages after the recall, want 2 (keep, sentinel)", max);
        long late = clock.first.get("recall-keep") - at;
        check(late >= -Extra.TIMER_PRECISION_MS, "control delivered %d ms early", -late);
        c.note = "control lateness " + late + " ms; recalled msgId " + id;
    }

    static SendResult timerSend(DefaultMQProducer p, String topic, String body, long at) throws Exception {
        Message m = msg(topic, body);
        Driver.call(m, "setDeliverTimeMs", at);
        SendResult r = p.send(m);
        check(r.getSendStatus() == SendStatus.SEND_OK, "send %s: %s", body, r);
        return r;
    }

    static String v1(String topic, String broker, long ts, String id) {
        String s = String.join(" ", "v1", topic, broker, Long.toString(ts), id);
        return Base64.getUrlEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    static void refused(DefaultMQProducer p, String topic, String handle, String remark) throws Exception {
        try {
            recallMessage(p, topic, handle);
            throw new AssertionError("recall on " + topic + " succeeded, want " + remark);
        } catch (MQBrokerException e) {
            check(e.getResponseCode() == ILLEGAL_OPERATION && remark.equals(e.getErrorMessage()),
                "recall refused with %d %s, want %d %s", e.getResponseCode(), e.getErrorMessage(), ILLEGAL_OPERATION, remark);
        }
    }

    /** DefaultMQProducer.recallMessage(topic, handle), unwrapped. */
    static String recallMessage(DefaultMQProducer p, String topic, String handle) throws Exception {
        try {
            return (String) Driver.call(p, "recallMessage", topic, handle);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof Exception) {
                throw (Exception) e.getCause();
            }
            throw e;
        }
    }
}
