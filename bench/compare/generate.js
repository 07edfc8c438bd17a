// Writes the comparison's input set: COUNT flat status documents, one JSON
// object per line, drawn with a fixed seed so that every run and every machine
// gets the same file. A third are healthy clusters; the others carry one to
// three faults (members NotReady or Unknown, stale conditions, no backup,
// scaling, a cluster still to bootstrap, an out-of-sync StatefulSet or
// PodDisruptionBudget, superfluous member entries).
//
// Each line carries ruleplane's snapshot envelope (apiVersion, kind,
// observedAt) beside the twelve inputs; ZEN and json-rules-engine ignore it.
//
//   node generate.js OUTPUT.jsonl [COUNT] [SEED]
'use strict';

const fs = require('fs');

// mulberry32: a small, well-mixed 32-bit generator; the same sequence
// everywhere for a given seed.
function makeRandom(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function generate(count, seed) {
  const random = makeRandom(seed);
  const integer = (low, high) => low + Math.floor(random() * (high - low + 1));
  const pick = (items) => items[integer(0, items.length - 1)];
  const clamp = (value, low, high) => Math.max(low, Math.min(high, value));

  const faults = [
    (s) => {  // members NotReady past the grace period
      const k = Math.min(integer(1, Math.max(1, s.clusterSize)), s.ready);
      s.ready -= k;
      s.notReady += k;
      s.stsReadyReplicas = clamp(s.stsReadyReplicas - k, 0, 7);
    },
    (s) => {  // members NotReady, still within the grace period
      s.ready -= Math.min(integer(1, 2), s.ready);
    },
    (s) => {  // members Unknown (lease expired) past the grace period
      const k = Math.min(integer(1, 2), s.ready);
      s.ready -= k;
      s.unknown += k;
    },
    (s) => { s.readyCondition = !s.readyCondition; },
    (s) => { s.allMembersReady = !s.allMembersReady; },
    (s) => { s.backupReady = false; },
    (s) => { s.replicas = integer(0, 7); },  // scale up or down
    (s) => {  // not bootstrapped yet
      Object.assign(s, {clusterSize: 0, members: 0, ready: 0, notReady: 0, unknown: 0, stsReadyReplicas: 0});
      s.stsReplicas = pick([0, 0, s.replicas]);
      s.readyCondition = false;
      s.allMembersReady = false;
    },
    (s) => {
      s.stsReplicas = integer(0, 7);
      s.stsReadyReplicas = integer(0, s.stsReplicas);
    },
    (s) => { s.pdbMinAvailable = integer(0, 4); },
    (s) => {  // entries left behind by a scale-down
      const k = integer(1, 2);
      s.members = clamp(s.members + k, 0, 9);
      s.notReady = clamp(s.notReady + pick([0, k]), 0, 9);
    },
  ];

  const lines = [];
  for (let i = 0; i < count; ++i) {
    const n = pick([1, 3, 3, 3, 3, 5, 5, 7]);
    const s = {
      apiVersion: 'ruleplane.dev/v1',
      kind: 'StatusBenchSnapshot',
      observedAt: '2024-05-01T10:00:00Z',
      replicas: n,
      clusterSize: n,
      stsReplicas: n,
      stsReadyReplicas: n,
      members: n,
      ready: n,
      notReady: 0,
      unknown: 0,
      readyCondition: true,
      allMembersReady: true,
      backupReady: true,
      pdbMinAvailable: Math.floor(n / 2) + 1,
    };
    if (random() >= 1 / 3) {
      const faultCount = integer(1, 3);
      for (let f = 0; f < faultCount; ++f) pick(faults)(s);
    }
    lines.push(JSON.stringify(s));
  }
  return lines.join('\n') + '\n';
}

function main() {
  const [output, count = '100000', seed = '20240501'] = process.argv.slice(2);
  if (!output) {
    process.stderr.write('usage: node generate.js OUTPUT.jsonl [COUNT] [SEED]\n');
    process.exit(2);
  }
  fs.writeFileSync(output, generate(Number(count), Number(seed)));
}

main();
