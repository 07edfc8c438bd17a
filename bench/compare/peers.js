// Times GoRules ZEN and json-rules-engine on the comparison table and inputs,
// and records every decision for the answer check.
//
//   node peers.js --inputs INPUTS.jsonl --decisions DIR [--repetitions N]
//
// For each engine and hit policy (FIRST, COLLECT): cold start (load and
// compile the table, then the first evaluation), a warm-up pass over every
// input that records the decisions (DIR/<engine>-<policy>.txt, one line per
// input: the selected rule ids joined by ",", "-" for none), then timed passes
// over every input, in process (inputs already parsed) and end to end (each
// input's JSON text parsed, then evaluated), each checked against the warm-up
// pass's decisions. One evaluation at a time, each awaited, as a caller that
// needs the answer does; for ZEN, whose evaluate() runs off the main thread,
// also 64 evaluations in flight at a time. Prints the timings as JSON.
//
// ZEN: ZenEngine.createDecision on a precompiled ZenDecisionContent, then
// ZenDecision.evaluate (the package's typings, index.d.ts, list no faster or
// synchronous evaluation). json-rules-engine: Engine.run.
'use strict';

const fs = require('fs');
const path = require('path');

const {Engine} = require('json-rules-engine');
const {ZenEngine, ZenDecisionContent} = require('@gorules/zen-engine');

const tables = path.join(__dirname, 'tables');

function parseArgs(argv) {
  const args = {repetitions: 3};
  for (let i = 0; i < argv.length; i += 2) {
    const [name, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`${name} needs a value`);
    if (name === '--inputs') args.inputs = value;
    else if (name === '--decisions') args.decisions = value;
    else if (name === '--repetitions') args.repetitions = Number(value);
    else throw new Error(`unknown option ${name}`);
  }
  if (!args.inputs || !args.decisions) {
    throw new Error('usage: node peers.js --inputs INPUTS.jsonl --decisions DIR [--repetitions N]');
  }
  return args;
}

// A pass's clocks: elapsed time, and the processor time of the whole process
// (every thread: ZEN evaluates on worker threads), which a busy machine
// inflates less.
function startPass() { return {wall: process.hrtime.bigint(), cpu: process.cpuUsage()}; }
function endPass(start) {
  const cpu = process.cpuUsage(start.cpu);
  return {ns: Number(process.hrtime.bigint() - start.wall), cpuNs: (cpu.user + cpu.system) * 1000};
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function summarize(passes, count) {
  const perEval = passes.map((pass) => pass.ns / count);
  return {
    repetitions: passes.length,
    nsPerEval: {median: median(perEval), min: Math.min(...perEval), max: Math.max(...perEval)},
    cpuNsPerEval: median(passes.map((pass) => pass.cpuNs / count)),
    evalsPerSecond: 1e9 / median(perEval),
  };
}

// Measures one engine/policy: `load` builds the evaluator (cold start), which
// maps an input object to its decision text.
async function measure({engine, policy, load, lines, inputs, repetitions, decisionsDir, inFlight}) {
  const coldStart = startPass();
  const evaluate = await load();
  await evaluate(inputs[0]);
  const coldStartNs = endPass(coldStart).ns;

  // The warm-up pass, from JSON text, records the decisions; every timed pass
  // is checked against them.
  const decisions = new Array(lines.length);
  for (let i = 0; i < lines.length; ++i) decisions[i] = await evaluate(JSON.parse(lines[i]));
  fs.writeFileSync(path.join(decisionsDir, `${engine}-${policy}.txt`), decisions.join('\n') + '\n');
  const check = (pass, what) => {
    const differing = pass.findIndex((decision, i) => decision !== decisions[i]);
    if (differing >= 0) throw new Error(`${engine} ${policy} ${what}: input ${differing + 1} decided differently`);
  };

  const inProcess = [];
  const endToEnd = [];
  const concurrent = [];
  let pass = new Array(lines.length);
  for (let r = 0; r < repetitions; ++r) {
    let start = startPass();
    for (let i = 0; i < inputs.length; ++i) pass[i] = await evaluate(inputs[i]);
    inProcess.push(endPass(start));
    check(pass, 'in process');
    start = startPass();
    for (let i = 0; i < lines.length; ++i) pass[i] = await evaluate(JSON.parse(lines[i]));
    endToEnd.push(endPass(start));
    check(pass, 'end to end');
    if (inFlight) {
      // `inFlight` evaluations at a time: what an engine that evaluates off
      // the main thread gains when the caller does not wait for each answer.
      pass = [];
      start = startPass();
      for (let i = 0; i < inputs.length; i += inFlight) {
        pass.push(...await Promise.all(inputs.slice(i, i + inFlight).map(evaluate)));
      }
      concurrent.push(endPass(start));
      check(pass, `${inFlight} in flight`);
    }
  }
  const results = [
    {engine, policy, mode: 'in-process', count: inputs.length, coldStartNs, ...summarize(inProcess, inputs.length)},
    {engine, policy, mode: 'end-to-end', count: lines.length, coldStartNs, ...summarize(endToEnd, lines.length)},
  ];
  if (inFlight) {
    results.push({engine, policy, mode: 'in-process-concurrent', inFlight, count: inputs.length, coldStartNs,
                  ...summarize(concurrent, inputs.length)});
  }
  return results;
}

function zenLoader(policy) {
  return async () => {
    const content = new ZenDecisionContent(fs.readFileSync(path.join(tables, `zen-status-${policy}.json`)));
    const decision = new ZenEngine().createDecision(content);
    if (policy === 'first') {
      return async (input) => {
        const {result} = await decision.evaluate(input);
        return result && result.rule !== undefined ? result.rule : '-';
      };
    }
    return async (input) => {
      const {result} = await decision.evaluate(input);
      return result.length > 0 ? result.map((row) => row.rule).join(',') : '-';
    };
  };
}

function jreLoader(policy) {
  return async () => {
    const module = path.join(tables, 'json-rules-engine-status.js');
    delete require.cache[require.resolve(module)];
    const {operators, rules} = require(module);
    const engine = new Engine([], {allowUndefinedFacts: false});
    for (const [name, operator] of Object.entries(operators)) engine.addOperator(name, operator);
    for (const rule of rules) engine.addRule(rule);
    if (policy === 'first') engine.on('success', () => engine.stop());
    return async (input) => {
      const {events} = await engine.run(input);
      return events.length > 0 ? events.map((event) => event.type).join(',') : '-';
    };
  };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const lines = fs.readFileSync(args.inputs, 'utf8').split('\n').filter((line) => line.length > 0);
  const inputs = lines.map((line) => JSON.parse(line));
  fs.mkdirSync(args.decisions, {recursive: true});
  const results = [];
  for (const policy of ['first', 'collect']) {
    const common = {policy, lines, inputs, decisionsDir: args.decisions};
    results.push(...await measure(
        {...common, engine: 'zen', load: zenLoader(policy), repetitions: args.repetitions, inFlight: 64}));
    results.push(...await measure(
        {...common, engine: 'json-rules-engine', load: jreLoader(policy), repetitions: args.repetitions}));
  }
  process.stdout.write(JSON.stringify({results}, null, 2) + '\n');
}

main().catch((error) => {
  process.stderr.write(`peers.js: ${error.stack || error}\n`);
  process.exit(1);
});
