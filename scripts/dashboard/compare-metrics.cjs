// Compares two rocketmq-exporter scrapes (Prometheus text): the metric names,
// each metric's label names, and its topic/group label values, ours vs Java.
//
//   node compare-metrics.cjs OURS_METRICS JAVA_METRICS REPORT.md [UNSUPPORTED.md]
//
// Exits 1 when a metric Java's scrape has is missing from ours, or its label
// names differ, unless compat/UNSUPPORTED.md's "Dashboard and exporter"
// section names it in backticks (`rocketmq_x`, or a prefix `rocketmq_x_*`).
// Values differ by nature (rates, offsets, times) and are not compared;
// topic/group label values are listed for information (Java has its own
// system topics and groups). Metrics only ours has are listed. Series of the
// JVM and of the exporter itself (jvm_*, process_*) are ignored.
'use strict';

const fs = require('fs');
const path = require('path');

const [oursFile, javaFile, reportFile, ledgerArg] = process.argv.slice(2);
const ledgerFile = ledgerArg || path.join(__dirname, '..', '..', 'compat', 'UNSUPPORTED.md');

// The names the ledger's "Dashboard and exporter" section explains.
function ledgerNames(file) {
  const doc = fs.readFileSync(file, 'utf8');
  const start = doc.search(/^## Dashboard and exporter/m);
  if (start < 0) return [];
  const rest = doc.slice(start + 1);
  const end = rest.search(/^## /m);
  const section = end < 0 ? rest : rest.slice(0, end);
  return [...section.matchAll(/`([a-zA-Z_:][a-zA-Z0-9_:]*\*?)`/g)].map((m) => m[1]);
}
const listedNames = ledgerNames(ledgerFile);
const listed = (name) => listedNames.some((n) => (n.endsWith('*') ? name.startsWith(n.slice(0, -1)) : n === name));

function parse(file) {
  const m = new Map(); // name → {labels:Set, values:Set}
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const mm = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s/.exec(line);
    if (!mm || /^(jvm_|process_|system_|tomcat_|logback_|http_)/.test(mm[1])) continue;
    const e = m.get(mm[1]) || {labels: new Set(), values: new Set()};
    const names = [];
    const vals = [];
    for (const p of (mm[3] || '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)) {
      names.push(p[1]);
      if (/^(topic|group|consumer_group)$/.test(p[1])) vals.push(`${p[1]}=${p[2]}`);
    }
    e.labels.add(names.sort().join(','));
    if (vals.length) e.values.add(vals.sort().join(','));
    m.set(mm[1], e);
  }
  return m;
}

const ours = parse(oursFile);
const java = parse(javaFile);
const lines = ['# rocketmq-exporter scrape: ours vs Java 5.3.3', '', '| metric | Java | ours | verdict |', '|---|---|---|---|'];
let bad = 0;
const fmt = (s) => [...s].sort().join(' / ') || '(none)';
for (const name of [...new Set([...ours.keys(), ...java.keys()])].sort()) {
  const a = ours.get(name);
  const b = java.get(name);
  let verdict = 'same';
  let diff = false;
  if (!a) { verdict = 'MISSING in ours'; diff = true; }
  else if (!b) verdict = 'only ours';
  else if (fmt(a.labels) !== fmt(b.labels)) { verdict = `LABELS differ: ours ${fmt(a.labels)}, Java ${fmt(b.labels)}`; diff = true; }
  else if (fmt(a.values) !== fmt(b.values)) {
    const only = (x, y) => [...x].filter((v) => !y.has(v)).sort().join(' / ') || '(none)';
    verdict = `same (topic/group values: only ours ${only(a.values, b.values)}; only Java ${only(b.values, a.values)})`;
  }
  if (diff && listed(name)) verdict += ' (listed in compat/UNSUPPORTED.md)';
  else if (diff) bad++;
  lines.push(`| ${name} | ${b ? 'yes' : '-'} | ${a ? 'yes' : '-'} | ${verdict} |`);
}
lines.push('', `${java.size} metrics in Java's scrape, ${ours.size} in ours; ${bad} differences not listed in compat/UNSUPPORTED.md.`, '');
fs.writeFileSync(reportFile, lines.join('\n'));
console.log(lines.join('\n'));
process.exit(bad ? 1 : 0);
