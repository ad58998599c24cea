// gRPC SDK conformance driver for rocketmq-client-nodejs (conformance/grpcsdk).
//
//   node driver.js ENDPOINT PREFIX name:timeoutSeconds...
//
// Runs every named scenario at once against the proxy's gRPC port ENDPOINT
// and prints one line per scenario:
//
//   PASS name seconds[: detail]
//   FAIL name seconds: reason
//
// Topic PREFIX_name and group PREFIX_name_g are created by the Go harness
// with the message type and group settings the scenario needs. Every wait is
// a receive or a condition polled with a deadline. NODE_PATH points at the
// SDK installed by scripts/grpcsdk.sh.
'use strict';

const sdk = require('rocketmq-client-nodejs');
const pb = require('rocketmq-client-nodejs/proto/apache/rocketmq/v2/definition_pb');

const { Producer, SimpleConsumer, PushConsumer, FilterExpression, ConsumeResult } = sdk;
const [, , ENDPOINT, PREFIX, ...SCENARIOS] = process.argv;
const SHARED_COUNT = Number(process.env.SHARED_COUNT || 20);

class Check extends Error {}

function require_(ok, why) {
  if (!ok) throw new Check(why);
}

const base = () => ({ endpoints: ENDPOINT, namespace: '', sslEnabled: false, requestTimeout: 10000 });
const body = m => m.body.toString('utf8');
const pause = ms => new Promise(r => setTimeout(r, ms));

// started starts a client, up to three times: start-up (route, then
// settings over the telemetry stream) times out on a loaded machine, and what
// the scenario checks comes after it.
async function started(make) {
  let last;
  for (let i = 0; i < 3; i++) {
    const c = make();
    try {
      await c.startup();
      return c;
    } catch (e) {
      last = e;
      try { await c.shutdown(); } catch (e2) { /* never started */ }
    }
  }
  throw last;
}

const producer = (topic, checker) => started(() => new Producer({ ...base(), topic, checker }));

const simple = (topic, group, expr) => started(() => new SimpleConsumer({ ...base(), consumerGroup: group,
  awaitDuration: 5000, subscriptions: new Map([[topic, expr || FilterExpression.SUB_ALL]]) }));

const push = (topic, group, consume) => started(() => new PushConsumer({ ...base(), consumerGroup: group,
  subscriptions: new Map([[topic, FilterExpression.SUB_ALL]]), messageListener: { consume } }));

async function shutdown(...cs) {
  for (const c of cs) {
    try { await c.shutdown(); } catch (e) { /* already down */ }
  }
}

async function receiveAll(c, want, deadline, invisibleMs = 20000) {
  const got = [];
  const seen = new Set();
  while (seen.size < want && Date.now() < deadline) {
    for (const m of await c.receive(16, invisibleMs)) {
      got.push(m);
      seen.add(body(m));
      await c.ack(m);
    }
  }
  return got;
}

async function receiveFor(c, windowMs) {
  const got = [];
  const end = Date.now() + windowMs;
  while (Date.now() < end) {
    for (const m of await c.receive(16, 20000)) {
      got.push(m);
      await c.ack(m);
    }
  }
  return got;
}

// waitUntil polls cond every 200 ms until it holds or the deadline passes.
async function waitUntil(cond, deadline) {
  while (!cond() && Date.now() < deadline) await pause(200);
  return cond();
}

// fifoOrder: FIFO under redelivery: never back to an earlier message (a
// redelivery repeats the current one), every message, and the failed "2" came again.
function fifoOrder(log, n) {
  const v = log.map(Number);
  return v.every((x, i) => i === 0 || v[i - 1] <= x) && new Set(v).size === n &&
    v[v.length - 1] === n - 1 && v.filter(x => x === 2).length >= 2;
}

const eqSet = (a, b) => a.size === b.size && [...a].every(x => b.has(x));

const scenarios = {
  async send_normal(topic, group, deadline) {
    const n = 10;
    const p = await producer(topic);
    const c = await simple(topic, group);
    try {
      const sent = new Set();
      for (let i = 0; i < n; i++) {
        const r = await p.send({ topic, body: Buffer.from(`${topic}-${i}`), keys: [`${topic}-${i}`] });
        require_(r.messageId, `send ${i} has no message id`);
        sent.add(`${topic}-${i}`);
      }
      const got = new Set((await receiveAll(c, n, deadline)).map(body));
      require_(eqSet(got, sent), `received ${got.size}/${n}`);
      return `sent and received ${n}`;
    } finally { await shutdown(p, c); }
  },

  async send_fifo(topic, group, deadline) {
    const n = 10;
    const p = await producer(topic);
    const c = await simple(topic, group);
    try {
      for (let i = 0; i < n; i++) await p.send({ topic, messageGroup: 'mg', body: Buffer.from(String(i)) });
      const order = [];
      while (order.length < n && Date.now() < deadline) {
        for (const m of await c.receive(16, 20000)) {
          require_(m.messageGroup === 'mg', `message group lost: ${m.messageGroup}`);
          order.push(body(m));
          await c.ack(m);
        }
      }
      require_(order.join(',') === [...Array(n).keys()].join(','), `order ${order}`);
      return `in order ${order.length}`;
    } finally { await shutdown(p, c); }
  },

  async send_delay(topic, group, deadline) {
    const p = await producer(topic);
    const c = await simple(topic, group);
    try {
      const at = Date.now() + 4000;
      await p.send({ topic, body: Buffer.from('delayed'), deliveryTimestamp: new Date(at) });
      const got = await receiveAll(c, 1, deadline);
      const now = Date.now();
      require_(got.length === 1, 'delayed message not received');
      require_(now >= at - 1000, `delivered ${at - now} ms early`);
      return `delivered ${now - at} ms after its time`;
    } finally { await shutdown(p, c); }
  },

  async send_transaction(topic, group, deadline) {
    const p = await producer(topic, { check: async () => pb.TransactionResolution.ROLLBACK });
    const c = await simple(topic, group);
    try {
      const t1 = p.beginTransaction();
      await p.send({ topic, body: Buffer.from('commit') }, t1);
      const t2 = p.beginTransaction();
      await p.send({ topic, body: Buffer.from('rollback') }, t2);
      await t2.rollback();
      await t1.commit();
      const got = new Set((await receiveAll(c, 1, deadline)).map(body));
      require_(got.has('commit'), `committed message not received: ${[...got]}`);
      for (const m of await receiveFor(c, 4000)) got.add(body(m));
      require_(!got.has('rollback'), 'rolled-back message delivered');
      return 'commit delivered, rollback not';
    } finally { await shutdown(p, c); }
  },

  async simple_ack(topic, group, deadline) {
    const n = 5;
    const p = await producer(topic);
    const c = await simple(topic, group);
    try {
      for (let i = 0; i < n; i++) await p.send({ topic, body: Buffer.from(`ack-${i}`) });
      const got = new Set((await receiveAll(c, n, deadline, 15000)).map(body));
      require_(got.size === n, `received ${got.size}/${n}`);
      const again = await receiveFor(c, 20000);
      require_(again.length === 0, `acked messages delivered again: ${again.map(body)}`);
      return `${n} acked, none redelivered`;
    } finally { await shutdown(p, c); }
  },

  async simple_change_invisible(topic, group, deadline) {
    const p = await producer(topic);
    const c = await simple(topic, group);
    const first = async () => {
      while (Date.now() < deadline) {
        const ms = await c.receive(1, 60000);
        if (ms.length) return ms[0];
      }
      return null;
    };
    try {
      const id = (await p.send({ topic, body: Buffer.from('civ') })).messageId;
      const m = await first();
      require_(m, 'not received');
      const t0 = Date.now();
      await c.changeInvisibleDuration(m, 2000);
      const again = await first();
      const waited = Date.now() - t0;
      require_(again, 'not redelivered after the invisible time was changed to 2 s');
      require_(again.messageId === id, `another message came back: ${again.messageId}`);
      require_(waited < 30000, `came back after ${waited} ms: the 60 s invisible time held`);
      require_(again.deliveryAttempt === 2, `delivery attempt ${again.deliveryAttempt}`);
      await c.ack(again);
      return `back after ${waited} ms, attempt 2`;
    } finally { await shutdown(p, c); }
  },

  async simple_redeliver(topic, group, deadline) {
    const p = await producer(topic);
    const c = await simple(topic, group);
    try {
      const id = (await p.send({ topic, body: Buffer.from('redeliver') })).messageId;
      const attempts = [];
      let firstAt = 0;
      let back = 0;
      while (attempts.length < 2 && Date.now() < deadline) {
        for (const m of await c.receive(1, 3000)) {
          require_(m.messageId === id, `unexpected message ${m.messageId}`);
          attempts.push(m.deliveryAttempt);
          if (attempts.length === 1) {
            firstAt = Date.now();
          } else {
            back = Date.now() - firstAt;
            await c.ack(m);
          }
        }
      }
      require_(attempts.join(',') === '1,2', `delivery attempts ${attempts}`);
      require_(back >= 2000, `came back after ${back} ms, before its 3 s invisible time`);
      return `back after ${back} ms, attempts ${attempts}`;
    } finally { await shutdown(p, c); }
  },

  async push_retry_dlq(topic, group, deadline) {
    const seen = [];
    const p = await producer(topic);
    const pc = await push(topic, group, async m => { seen.push(m.deliveryAttempt); return ConsumeResult.FAILURE; });
    try {
      await p.send({ topic, body: Buffer.from('dlq') });
      require_(await waitUntil(() => seen.length >= 3, deadline), `deliveries ${seen} before the deadline`);
      const dlq = `%DLQ%${group}`;
      let d = null;
      let last = null;
      while (!d && Date.now() < deadline) {
        try { d = await simple(dlq, `${group}_dlq`); } catch (e) { last = e; await pause(500); }
      }
      require_(d, `no consumer of ${dlq} could start: ${last}`);
      try {
        const got = await receiveAll(d, 1, deadline);
        require_(got.length, `nothing in ${dlq} after deliveries ${seen}`);
        require_(seen.length === 3, `deliveries before the DLQ: ${seen}`);
        require_(body(got[0]) === 'dlq', `DLQ holds ${body(got[0])}`);
        return `3 deliveries ${seen}, then ${dlq}`;
      } finally { await shutdown(d); }
    } finally { await shutdown(p, pc); }
  },

  async fifo_redeliver(topic, group, deadline) {
    const n = 6;
    const log = [];
    const tries = {};
    let done = 0;
    const p = await producer(topic);
    for (let i = 0; i < n; i++) await p.send({ topic, messageGroup: 'og', body: Buffer.from(String(i)) });
    const pc = await push(topic, group, async m => {
      const b = body(m);
      tries[b] = (tries[b] || 0) + 1;
      log.push(b);
      if (b === '2' && tries[b] === 1) return ConsumeResult.FAILURE;
      done++;
      return ConsumeResult.SUCCESS;
    });
    try {
      await waitUntil(() => done >= n, deadline);
    } finally { await shutdown(p, pc); }
    require_(fifoOrder(log, n), `consumed ${log}, want 0..5 in order with 2 delivered again before 3`);
    return `order ${log}`;
  },

  async filter_tag(topic, group, deadline) {
    const p = await producer(topic);
    const c = await simple(topic, group, new FilterExpression('A||C', pb.FilterType.TAG));
    try {
      for (let i = 0; i < 9; i++) {
        const tag = 'ABC'[i % 3];
        await p.send({ topic, tag, body: Buffer.from(`${tag}${i}`) });
      }
      const got = new Set((await receiveAll(c, 6, deadline)).map(body));
      for (const m of await receiveFor(c, 3000)) got.add(body(m));
      require_(eqSet(got, new Set(['A0', 'C2', 'A3', 'C5', 'A6', 'C8'])), `received ${[...got].sort()}`);
      return `tags A||C: ${got.size}`;
    } finally { await shutdown(p, c); }
  },

  async filter_sql(topic, group, deadline) {
    const p = await producer(topic);
    const c = await simple(topic, group, new FilterExpression("n >= 5 AND color = 'red'", pb.FilterType.SQL));
    try {
      for (let i = 0; i < 10; i++) {
        await p.send({ topic, body: Buffer.from(`s${i}`),
          properties: new Map([['n', String(i)], ['color', i % 2 === 0 ? 'red' : 'blue']]) });
      }
      const got = new Set((await receiveAll(c, 2, deadline)).map(body));
      for (const m of await receiveFor(c, 3000)) got.add(body(m));
      require_(eqSet(got, new Set(['s6', 's8'])), `received ${[...got].sort()}`);
      return `SQL92 filter: ${[...got].sort()}`;
    } finally { await shutdown(p, c); }
  },

  async transaction_check(topic, group, deadline) {
    let checks = 0;
    const p = await producer(topic, { check: async m => {
      checks++;
      return body(m) === 'checked' ? pb.TransactionResolution.COMMIT : pb.TransactionResolution.ROLLBACK;
    } });
    const c = await simple(topic, group);
    try {
      const t = p.beginTransaction();
      await p.send({ topic, body: Buffer.from('checked') }, t);
      const got = new Set((await receiveAll(c, 1, deadline)).map(body));
      require_(got.has('checked'), `not committed by the check-back (${checks} checks)`);
      require_(checks >= 1, 'delivered without a check');
      return `committed by check-back after ${checks} check(s)`;
    } finally { await shutdown(p, c); }
  },

  async shared_4x(topic, group, deadline) {
    const got = new Set();
    let deliveries = 0;
    const pc = await push(topic, group, async m => { got.add(body(m)); deliveries++; return ConsumeResult.SUCCESS; });
    const p = await producer(topic);
    try {
      for (let i = 0; i < SHARED_COUNT; i++) await p.send({ topic, body: Buffer.from(`shared-${i}`) });
      await waitUntil(() => false, Math.min(deadline, Date.now() + 15000));
    } finally { await shutdown(pc, p); }
    return `grpc got=${got.size} deliveries=${deliveries} sent=${SHARED_COUNT}`;
  },
};

async function run(arg) {
  const [name, secs] = arg.split(':');
  const t0 = Date.now();
  let line;
  try {
    const fn = scenarios[name];
    if (!fn) throw new Check('unknown scenario');
    const detail = await fn(`${PREFIX}_${name}`, `${PREFIX}_${name}_g`, Date.now() + Number(secs || 60) * 1000);
    line = `PASS ${name} ${((Date.now() - t0) / 1000).toFixed(1)}${detail ? ': ' + detail : ''}`;
  } catch (e) {
    if (!(e instanceof Check)) console.error(e);
    const why = e instanceof Check ? e.message : `${e.name}: ${e.message}`;
    line = `FAIL ${name} ${((Date.now() - t0) / 1000).toFixed(1)}: ${why}`;
  }
  process.stdout.write(line.replace(/\s+/g, ' ') + '\n');
}

Promise.all(SCENARIOS.map(run)).then(() => process.exit(0));
