'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { newSidecar, run, waitOutput } = require('./helpers');

test('50 terminals at once share one sidecar', async (t) => {
  const sc = newSidecar(t);
  const terms = [];
  for (let i = 0; i < 50; i++) {
    terms.push(sc.spawn('/bin/sh', ['-c', `echo "hello ${i}"; read line; echo "got $line"; exit ${i % 7}`]));
  }
  const pid = sc.pid;
  assert.ok(pid > 0);
  const done = terms.map(run);
  await Promise.all(terms.map((term, i) => waitOutput(term, `hello ${i}`)));
  const pids = new Set(terms.map((term) => term.pid));
  assert.strictEqual(pids.size, 50);
  terms.forEach((term, i) => term.write(`line${i}\r`));
  const results = await Promise.all(done);
  results.forEach((r, i) => {
    assert.strictEqual(r.exitCode, i % 7, `terminal ${i}`);
    assert.ok(r.output.endsWith(`got line${i}\r\n`), `terminal ${i}: ${JSON.stringify(r.output)}`);
  });
  assert.strictEqual(sc.pid, pid, 'one sidecar process');
});
