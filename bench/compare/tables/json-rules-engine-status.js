// The comparison table, json-rules-engine encoding: the rules of
// status-first.yaml / zen-status-first.json as json-rules-engine rule objects.
//
// json-rules-engine has no arithmetic in conditions, so the quorum arithmetic
// lives in custom operators (its documented extension point), applied to a
// fact and another fact ({fact: 'clusterSize'} as the value). It has no hit
// policy either: the rules carry decreasing priorities, so the engine runs them
// one priority set at a time in table order; FIRST stops the engine at the
// first success (engine.stop()), COLLECT lets every rule run.
'use strict';

const operators = {
  // 2 * fact >= value: a majority (or half) of value.
  twiceAtLeast: (fact, value) => 2 * fact >= value,
  twiceLessThan: (fact, value) => 2 * fact < value,
  twiceGreaterThan: (fact, value) => 2 * fact > value,
  // The quorum of value members: floor(value / 2) + 1.
  isQuorumOf: (fact, value) => fact === Math.floor(value / 2) + 1,
  isNotQuorumOf: (fact, value) => fact !== Math.floor(value / 2) + 1,
};

const is = (fact, operator, value) => ({fact, operator, value});
const ofFact = (fact) => ({fact});

const table = [
  ['mark-unknown-not-ready', [is('unknown', 'greaterThan', 0)]],
  ['quorum-lost', [is('clusterSize', 'greaterThan', 0), is('notReady', 'twiceAtLeast', ofFact('clusterSize'))]],
  ['minority-not-ready', [is('notReady', 'greaterThan', 0), is('notReady', 'twiceLessThan', ofFact('clusterSize'))]],
  ['ready-condition-stale',
   [is('readyCondition', 'equal', false), is('ready', 'twiceGreaterThan', ofFact('clusterSize'))]],
  ['all-members-ready-stale',
   [is('allMembersReady', 'equal', false), is('clusterSize', 'greaterThan', 0),
    is('ready', 'greaterThanInclusive', ofFact('clusterSize'))]],
  ['not-all-members-ready-stale',
   [is('allMembersReady', 'equal', true), is('ready', 'lessThan', ofFact('clusterSize'))]],
  ['bootstrap', [is('clusterSize', 'equal', 0), is('replicas', 'greaterThan', 0)]],
  ['scale-up',
   [is('clusterSize', 'greaterThan', 0), is('replicas', 'greaterThan', ofFact('clusterSize')),
    is('backupReady', 'equal', true)]],
  ['scale-down', [is('replicas', 'greaterThan', 0), is('replicas', 'lessThan', ofFact('clusterSize'))]],
  ['statefulset-out-of-sync', [is('stsReplicas', 'notEqual', ofFact('clusterSize'))]],
  ['pdb-stale', [is('clusterSize', 'greaterThan', 0), is('pdbMinAvailable', 'isNotQuorumOf', ofFact('clusterSize'))]],
  ['superfluous-member-entries', [is('members', 'greaterThan', ofFact('clusterSize'))]],
  ['in-sync',
   [is('replicas', 'greaterThan', 0), is('clusterSize', 'equal', ofFact('replicas')),
    is('stsReplicas', 'equal', ofFact('replicas')), is('stsReadyReplicas', 'equal', ofFact('replicas')),
    is('members', 'equal', ofFact('replicas')), is('ready', 'equal', ofFact('replicas')),
    is('notReady', 'equal', 0), is('unknown', 'equal', 0), is('readyCondition', 'equal', true),
    is('allMembersReady', 'equal', true), is('backupReady', 'equal', true),
    is('pdbMinAvailable', 'isQuorumOf', ofFact('replicas'))]],
];

// Rule options for `new Rule(...)` / engine.addRule(...), in table order.
const rules = table.map(([id, all], index) => ({
  name: id,
  priority: table.length - index,
  conditions: {all},
  event: {type: id},
}));

module.exports = {operators, rules};
