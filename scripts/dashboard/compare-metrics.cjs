// Compares two rocketmq-exporter scrapes (Prometheus text): the metric names,
// each metric's label names, and its topic/group label values, ours vs Java.
//
//   node compare-metrics.cjs OURS_METRICS JAVA_METRICS REPORT.md
//
// Exits 1 when a metric Java's scrape has is missing from ours, or its label
// names or topic/group values differ. Metrics only ours has are listed.
// Series of the JVM and of the exporter itself (jvm_*, process_*) are ignored.
'use strict';

const fs = require('fs');

const [oursFile, javaFile, reportFile] = process.argv.slice(2);

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
  if (!a) { verdict = 'MISSING in ours'; bad++; }
  else if (!b) verdict = 'only ours';
  else if (fmt(a.labels) !== fmt(b.labels)) { verdict = `LABELS differ: ours ${fmt(a.labels)}`; bad++; }
  else if (fmt(a.values) !== fmt(b.values)) { verdict = `topic/group values differ: ours ${fmt(a.values)} / Java ${fmt(b.values)}`; bad++; }
  lines.push(`| ${name} | ${b ? 'yes' : '-'} | ${a ? 'yes' : '-'} | ${verdict} |`);
}
lines.push('', `${java.size} metrics in Java's scrape, ${ours.size} in ours; ${bad} differences.`, '');
fs.writeFileSync(reportFile, lines.join('\n'));
console.log(lines.join('\n'));
process.exit(bad ? 1 : 0);
