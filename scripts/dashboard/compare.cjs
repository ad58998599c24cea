// Compares the dashboard's REST replies recorded against rocketgo and against
// the Java reference (check.cjs's api.json), after normalising what differs
// by nature between two runs: message ids, addresses and ports, times, rates,
// physical offsets.
//
//   node compare.cjs OURS_DIR JAVA_DIR REPORT.md
//
// Differences listed in known-diffs.json (step, JSON-path regex, reason) are
// reported but do not fail; any other difference, and any reply one side got
// and the other did not, exits 1.
'use strict';

const fs = require('fs');
const path = require('path');

const [oursDir, javaDir, reportFile] = process.argv.slice(2);
// (entries with an "error" instead of a "path" are check.cjs's known dashboard errors)
const known = JSON.parse(fs.readFileSync(path.join(__dirname, 'known-diffs.json'), 'utf8')).filter((k) => k.path !== undefined);

// Keys whose values are times, rates, sizes of a run or physical positions.
const VOLATILE = new RegExp('^(' + [
  '.*[Tt]imestamp', '.*[Tt]ime', '.*[Tt]imes?tamp\\w*', 'bornTime\\w*', 'storeTime\\w*', 'lastUpdate\\w*',
  'consumeTps', 'inTPS', 'outTPS', '.*[Tt]ps', 'pullRT', 'pullTPS', 'consumeRT', 'consumeOKTPS', 'consumeFailedTPS',
  'commitLogOffset', 'preparedTransactionOffset', 'queueOffset\\w*', 'physicOffset', 'storeSize',
  'costTime', 'uptime', 'pid', 'startTimestamp', 'timeSpan', 'date', 'taskId', 'bodyCRC',
  'brokerVersion', 'brokerVersionDesc', 'version', 'jstack', 'requestId', 'spentTimeMills', 'clientAddr', 'subVersion',
].join('|') + ')$', 'i');

function load(dir) {
  const recs = JSON.parse(fs.readFileSync(path.join(dir, 'api.json'), 'utf8'));
  const seed = JSON.parse(fs.readFileSync(path.join(dir, 'seed.json'), 'utf8'));
  return {recs, seed};
}

// String substitutions of one side: its ids and addresses → placeholders.
function subst(seed) {
  const pairs = [];
  seed.msgIds.forEach((id, i) => pairs.push([id, `<msgId#${i}>`]));
  seed.offsetMsgIds.forEach((id, i) => pairs.push([id, `<offsetMsgId#${i}>`]));
  pairs.push([seed.dlqMsgId, '<dlqMsgId>']);
  const [host, port] = seed.brokerAddr.split(':');
  pairs.push([`${host}:${port}`, '<broker>']);
  pairs.push([`${host}:${Number(port) - 2}`, '<broker-vip>']);
  pairs.push([`${host}:${Number(port) + 1}`, '<broker-ha>']);
  // Offset message ids not in the seed (a DLQ message's ORIGIN_MESSAGE_ID):
  // the broker's address as they carry it, IPv4 then port in hex.
  const hexAddr = host.split('.').map((n) => Number(n).toString(16).padStart(2, '0')).join('') +
    Number(port).toString(16).padStart(8, '0');
  pairs.push([hexAddr.toUpperCase(), '<broker-hex>']);
  return (s) => {
    for (const [a, b] of pairs) s = s.split(a).join(b);
    s = s.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:<port>');
    s = s.replace(/(^|[^\d.])\d{13}(?![\d.])/g, '$1<ms>');
    s = s.replace(/\b\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?\b/g, '<datetime>');
    return s;
  };
}

function norm(v, sub, key) {
  if (key !== undefined && VOLATILE.test(key) && (typeof v === 'number' || typeof v === 'string')) return '<v>';
  if (typeof v === 'string') {
    const s = sub(v);
    // Stringified JSON inside a reply (trace data, properties): normalise it too.
    if (/^[[{]/.test(s)) {
      try { return norm(JSON.parse(s), sub); } catch (e) { /* not JSON */ }
    }
    return s;
  }
  if (Array.isArray(v)) {
    const a = v.map((x) => norm(x, sub));
    // Order of most lists comes from hash maps on either side: compare sorted.
    return a.map((x) => JSON.stringify(x)).sort().map((x) => JSON.parse(x));
  }
  if (v && typeof v === 'object') {
    const o = {};
    for (const k of Object.keys(v).sort()) o[sub(k)] = norm(v[k], sub, k);
    return o;
  }
  return v;
}

function keyOf(r, sub) {
  let q = sub(decodeURIComponent(r.query || ''));
  q = q.replace(/(begin|end|beginTime|endTime|date)=\d+/g, '$1=<t>');
  let b = r.body ? sub(r.body) : '';
  b = b.replace(/"(begin|end|taskId)":("[^"]*"|\d+)/g, '"$1":"<v>"');
  return `${r.step} ${r.method} ${r.path}${q}${b ? ' ' + b : ''}`;
}

function index(side) {
  const sub = subst(side.seed);
  const m = new Map();
  for (const r of side.recs) {
    if (r.path.endsWith('csrf-token')) continue;
    const k = keyOf(r, sub);
    m.set(k, {step: r.step, path: r.path, status: r.status, json: norm(r.json !== undefined ? r.json : r.text, sub)});
  }
  return m;
}

function diff(a, b, at, out) {
  if (JSON.stringify(a) === JSON.stringify(b)) return;
  const isObj = (x) => x && typeof x === 'object' && !Array.isArray(x);
  if (isObj(a) && isObj(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!(k in a)) out.push({at: `${at}.${k}`, ours: '(absent)', java: b[k]});
      else if (!(k in b)) out.push({at: `${at}.${k}`, ours: a[k], java: '(absent)'});
      else diff(a[k], b[k], `${at}.${k}`, out);
    }
    return;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    for (let i = 0; i < a.length; i++) diff(a[i], b[i], `${at}[${i}]`, out);
    return;
  }
  out.push({at, ours: a, java: b});
}

const short = (v) => {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > 160 ? s.slice(0, 157) + '...' : s;
};

function knownReason(step, at) {
  const k = known.find((x) => (!x.step || new RegExp(x.step).test(step)) && new RegExp(x.path).test(at));
  return k ? k.reason : null;
}

const ours = index(load(oursDir));
const java = index(load(javaDir));
const lines = ['# rocketmq-dashboard: ours vs Java 5.3.3 (normalised REST replies)', ''];
let failures = 0;
let knownCount = 0;
const perStep = new Map();
const note = (step, bad) => {
  const s = perStep.get(step) || {replies: 0, bad: 0, known: 0};
  s.replies++;
  if (bad === 'bad') s.bad++;
  if (bad === 'known') s.known++;
  perStep.set(step, s);
};
const body = [];
for (const k of [...new Set([...ours.keys(), ...java.keys()])].sort()) {
  const a = ours.get(k);
  const b = java.get(k);
  const step = (a || b).step;
  if (!a || !b) {
    const reason = knownReason(step, a ? '(java missing)' : '(ours missing)');
    body.push(`- ${reason ? 'KNOWN' : 'DIFF'} \`${k}\`: only ${a ? 'ours' : 'Java'} made this call${reason ? ` — ${reason}` : ''}`);
    if (reason) { knownCount++; note(step, 'known'); } else { failures++; note(step, 'bad'); }
    continue;
  }
  const d = [];
  if (a.status !== b.status) d.push({at: '(http status)', ours: a.status, java: b.status});
  diff(a.json, b.json, '$', d);
  if (!d.length) { note(step, 'same'); continue; }
  let bad = 0;
  const sub = [];
  for (const x of d) {
    const reason = knownReason(step, x.at);
    if (reason) knownCount++; else bad++;
    sub.push(`  - ${reason ? 'KNOWN' : 'DIFF'} \`${x.at}\`: ours ${short(x.ours)} / Java ${short(x.java)}${reason ? ` — ${reason}` : ''}`);
  }
  body.push(`- \`${k}\` (${d.length} differences)`);
  body.push(...sub);
  failures += bad;
  note(step, bad ? 'bad' : 'known');
}
lines.push('| step | replies | verdict |', '|---|---|---|');
for (const [step, s] of perStep) {
  lines.push(`| ${step} | ${s.replies} | ${s.bad ? `DIFFERENT (${s.bad})` : s.known ? `same but known differences (${s.known})` : 'same'} |`);
}
lines.push('', `${failures} unexplained differences, ${knownCount} known (known-diffs.json).`, '', '## Details', '', ...body, '');
fs.writeFileSync(reportFile, lines.join('\n'));
console.log(lines.slice(0, 4 + perStep.size + 2).join('\n'));
process.exit(failures ? 1 : 0);
