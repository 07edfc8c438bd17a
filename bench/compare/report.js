// Checks that every engine gave the same answer for every input, and prints
// the side-by-side table with the ratios ruleplane/peer.
//
//   node report.js RESULTS_DIR INPUTS.jsonl
//
// RESULTS_DIR holds what run.sh collected: ruleplane.json and peers.json (the
// timings), decisions/<engine>-<policy>.txt (one decision per input line),
// batch-<policy>.jsonl (the output of `ruleplane plan --batch`) and
// batch-<policy>.times (per run of the whole process: elapsed, user and system
// seconds).
// Exits 1 when any two engines disagree on any input, printing the first few.
'use strict';

const fs = require('fs');
const path = require('path');

const policies = ['first', 'collect'];
const maxShown = 5;

function readLines(file) {
  const text = fs.readFileSync(file, 'utf8');
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

// `ruleplane plan --batch` output -> decision lines in the decisions format.
function batchDecisions(file, count) {
  const decisions = new Array(count).fill('(no output)');
  for (const line of readLines(file)) {
    const result = JSON.parse(line);
    let decision;
    if (result.error !== undefined) {
      decision = `error: ${result.error}`;
    } else {
      const [ruleSet] = result.ruleSets;
      decision = ruleSet.violation !== undefined ? `violation: ${ruleSet.violation}` :
                 ruleSet.matchedRules.length > 0 ? ruleSet.matchedRules.join(',') : '-';
    }
    decisions[result.line - 1] = decision;
  }
  return decisions;
}

// Compares every engine's decisions for one policy with ruleplane's; returns
// the number of disagreeing inputs.
function checkAnswers(policy, answers, inputs) {
  const [reference, ...others] = Object.keys(answers);
  const differing = [];
  for (let i = 0; i < inputs.length; ++i) {
    const seen = new Set(Object.values(answers).map((decisions) => decisions[i]));
    if (seen.size > 1) differing.push(i);
  }
  for (const name of Object.keys(answers)) {
    if (answers[name].length !== inputs.length) {
      console.log(`${policy}: ${name} gave ${answers[name].length} decisions for ${inputs.length} inputs`);
      return Math.max(differing.length, 1);
    }
  }
  if (differing.length === 0) {
    console.log(`answers, ${policy.toUpperCase()}: ${[reference, ...others].join(', ')} agree on all ` +
                `${inputs.length} inputs`);
    return 0;
  }
  console.log(`answers, ${policy.toUpperCase()}: ${differing.length} of ${inputs.length} inputs decided ` +
              `differently; the first ${Math.min(maxShown, differing.length)}:`);
  for (const i of differing.slice(0, maxShown)) {
    console.log(`  input ${i + 1}: ${inputs[i]}`);
    for (const name of Object.keys(answers)) console.log(`    ${name.padEnd(30)} ${answers[name][i]}`);
  }
  return differing.length;
}

function stats(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return {median: sorted[Math.floor(sorted.length / 2)], min: sorted[0], max: sorted[sorted.length - 1]};
}

function formatNs(ns) {
  if (ns >= 1e9) return `${(ns / 1e9).toFixed(2)} s`;
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(1)} ms`;
  if (ns >= 1e4) return `${(ns / 1e3).toFixed(1)} µs`;
  return `${ns.toFixed(0)} ns`;
}

function formatRate(perSecond) {
  if (perSecond >= 1e6) return `${(perSecond / 1e6).toFixed(2)} M/s`;
  if (perSecond >= 1e3) return `${(perSecond / 1e3).toFixed(1)} k/s`;
  return `${perSecond.toFixed(0)} /s`;
}

function formatRatio(ours, theirs) {
  const ratio = ours / theirs;
  return `${ratio.toPrecision(2)} (${(1 / ratio).toFixed(ratio < 0.1 ? 0 : 1)}x)`;
}

function table(rows) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => row[c].length)));
  return rows.map((row) => row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c])))
                                 .join('  ').trimEnd()).join('\n');
}

function main() {
  const [resultsDir, inputsFile] = process.argv.slice(2);
  if (!resultsDir || !inputsFile) {
    process.stderr.write('usage: node report.js RESULTS_DIR INPUTS.jsonl\n');
    process.exit(2);
  }
  const inputs = readLines(inputsFile);
  const timings = [
    ...JSON.parse(fs.readFileSync(path.join(resultsDir, 'ruleplane.json'), 'utf8')).results,
    ...JSON.parse(fs.readFileSync(path.join(resultsDir, 'peers.json'), 'utf8')).results,
  ];
  const decisionsDir = path.join(resultsDir, 'decisions');

  let disagreements = 0;
  for (const policy of policies) {
    const answers = {};
    for (const engine of ['ruleplane', 'zen', 'json-rules-engine']) {
      answers[engine] = readLines(path.join(decisionsDir, `${engine}-${policy}.txt`));
    }
    answers['ruleplane plan --batch'] = batchDecisions(path.join(resultsDir, `batch-${policy}.jsonl`), inputs.length);
    disagreements += checkAnswers(policy, answers, inputs);
  }

  const find = (engine, policy, mode) => timings.find((t) => t.engine === engine && t.policy === policy && t.mode === mode);
  const label = {'ruleplane': 'ruleplane', 'zen': 'GoRules ZEN', 'json-rules-engine': 'json-rules-engine'};
  const modeLabel = {'in-process': 'in process', 'in-process-concurrent': 'in process, 64 in flight',
                     'end-to-end': 'end to end, JSON text'};
  const comparedWith = {'in-process': 'in-process', 'in-process-concurrent': 'in-process', 'end-to-end': 'end-to-end'};
  const versions = JSON.parse(fs.readFileSync(path.join(__dirname, 'package.json'), 'utf8')).dependencies;
  console.log(`\n${inputs.length} inputs, 13 rules over 12 inputs. Time per evaluation over all inputs: elapsed ` +
              `median/min/max of the repetitions, and the median processor time of the whole process (all threads). ` +
              `ruleplane/peer: the elapsed medians (same policy and mode), and how many times faster ruleplane is.`);
  console.log(`peers: @gorules/zen-engine ${versions['@gorules/zen-engine']}, json-rules-engine ` +
              `${versions['json-rules-engine']}, Node ${process.version}\n`);

  const targets = [];
  for (const policy of policies) {
    const rows = [[`${policy.toUpperCase()}`, 'mode', 'median', 'min', 'max', 'CPU', 'evals/s', 'cold start',
                   'reps', 'ruleplane/peer']];
    const ours = {'in-process': find('ruleplane', policy, 'in-process'), 'end-to-end': find('ruleplane', policy, 'end-to-end')};
    for (const engine of ['ruleplane', 'zen', 'json-rules-engine']) {
      for (const mode of ['in-process', 'in-process-concurrent', 'end-to-end']) {
        const t = find(engine, policy, mode);
        if (t === undefined) continue;
        const mine = engine === 'ruleplane';
        rows.push([label[engine], mine && mode === 'in-process' ? 'matcher (facts prepared)' : modeLabel[mode],
                   formatNs(t.nsPerEval.median), formatNs(t.nsPerEval.min), formatNs(t.nsPerEval.max),
                   formatNs(t.cpuNsPerEval), formatRate(t.evalsPerSecond), formatNs(t.coldStartNs), String(t.repetitions),
                   mine ? '' : formatRatio(ours[comparedWith[mode]].nsPerEval.median, t.nsPerEval.median)]);
      }
      if (engine === 'ruleplane') {
        const runs = readLines(path.join(resultsDir, `batch-${policy}.times`)).map((line) => line.split(' ').map(Number));
        const s = stats(runs.map(([elapsed]) => elapsed * 1e9));
        const cpu = stats(runs.map(([, user, system]) => (user + system) * 1e9));
        const zen = find('zen', policy, 'end-to-end');
        rows.push(['ruleplane', 'plan --batch, whole process', formatNs(s.median / inputs.length),
                   formatNs(s.min / inputs.length), formatNs(s.max / inputs.length), formatNs(cpu.median / inputs.length),
                   formatRate(inputs.length * 1e9 / s.median), `${formatNs(s.median)} total`, String(runs.length),
                   '']);
        targets.push({policy, what: 'plan --batch (whole process) vs ZEN end to end', ours: s.median / inputs.length,
                      theirs: zen.nsPerEval.median, needed: null});
      }
    }
    console.log(table(rows) + '\n');
    // Against ZEN's faster in-process mode.
    const zenInProcess = Math.min(
        ...['in-process', 'in-process-concurrent'].map((mode) => find('zen', policy, mode))
            .filter((t) => t !== undefined).map((t) => t.nsPerEval.median));
    const zen = {'end-to-end': find('zen', policy, 'end-to-end')};
    targets.push({policy, what: 'matcher vs ZEN in process (its faster mode)', ours: ours['in-process'].nsPerEval.median,
                  theirs: zenInProcess, needed: 100});
    targets.push({policy, what: 'end to end vs ZEN end to end', ours: ours['end-to-end'].nsPerEval.median,
                  theirs: zen['end-to-end'].nsPerEval.median, needed: 10});
    const zenCpuInProcess = Math.min(
        ...['in-process', 'in-process-concurrent'].map((mode) => find('zen', policy, mode))
            .filter((t) => t !== undefined).map((t) => t.cpuNsPerEval));
    targets.push({policy, what: 'processor time: matcher vs ZEN in process', ours: ours['in-process'].cpuNsPerEval,
                  theirs: zenCpuInProcess, needed: null});
    targets.push({policy, what: 'processor time: end to end vs ZEN end to end', ours: ours['end-to-end'].cpuNsPerEval,
                  theirs: zen['end-to-end'].cpuNsPerEval, needed: null});
  }

  console.log('ruleplane against ZEN (medians; the targets are on elapsed time):');
  let met = true;
  for (const {policy, what, ours, theirs, needed} of targets) {
    const times = theirs / ours;
    const verdict = needed === null ? '' : times >= needed ? `  target >= ${needed}x: met` : `  target >= ${needed}x: NOT met`;
    if (needed !== null && times < needed) met = false;
    console.log(`  ${policy.toUpperCase().padEnd(8)} ${what.padEnd(50)} ${times.toFixed(1).padStart(8)}x faster${verdict}`);
  }
  console.log(disagreements === 0 ? `\nall answers agree; targets ${met ? 'met' : 'NOT met'}` :
                                    `\nANSWERS DISAGREE on ${disagreements} input(s)`);
  process.exit(disagreements === 0 ? 0 : 1);
}

main();
