'use strict';
const test = require('node:test');
const assert = require('node:assert');
const path = require('path');
const os = require('os');
const { newSidecar, run, waitOutput, waitUntil, BIN } = require('./helpers');

// Against a sidecar without SIGNAL and FOREGROUND (OPENED lists no
// features): kill(signal) falls back to CLOSE, process to /proc.
test('fallbacks when the sidecar has no SIGNAL or FOREGROUND', async (t) => {
  const sc = newSidecar(t, { path: process.execPath, args: [path.join(__dirname, 'fixtures', 'seed-sidecar.js'), BIN] });
  const term = sc.spawn('/bin/sh', ['-c', `trap 'echo got-INT' INT; echo ready; exec sleep 1000`]);
  const done = run(term);
  await waitOutput(term, 'ready');
  assert.strictEqual(term._features.size, 0);
  // ready is printed just before the exec.
  await waitUntil(async () => (await term.getProcess()) === 'sleep', 'getProcess to read sleep from /proc');
  term.kill('SIGINT');
  const r = await done;
  assert.strictEqual(r.signal, os.constants.signals.SIGHUP, 'CLOSE ends the terminal with SIGHUP');
  assert.ok(!r.output.includes('got-INT'));
});
