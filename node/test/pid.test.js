'use strict';
// pid right after spawn, as node-pty gives it: the read waits for OPENED
// without running any listener and without disturbing other streams.

const test = require('node:test');
const assert = require('node:assert');
const { newSidecar, run, waitOutput } = require('./helpers');

test('pid is the child at once after spawn, before any await', async (t) => {
  const sc = newSidecar(t);
  // A cold sidecar answers too; the fresh process's start-up is part of the wait.
  const term = sc.spawn('/bin/sh', ['-c', 'echo "pid=$$"']);
  const pid = term.pid;
  assert.ok(pid > 0, `pid ${pid}`);
  assert.strictEqual(term.pid, pid, 'the same pid on a second read');
  const r = await run(term);
  assert.strictEqual(r.output, `pid=${pid}\r\n`);
  assert.strictEqual(r.exitCode, 0);
});

test('reading pid ahead runs no listener inside it and keeps other streams whole', async (t) => {
  const sc = newSidecar(t);
  const lines = 100000;
  const flood = sc.spawn('/bin/sh', ['-c', `seq 1 ${lines}`]);
  let inside = false;
  let ranInside = 0;
  let text = '';
  flood.onData((d) => {
    if (inside) ranInside++;
    text += d;
  });
  const floodDone = new Promise((resolve) => flood.onExit(resolve));
  await waitOutput(flood, '\n100\r\n');
  // Spawn while the flood streams: each pid read reads the flood's frames
  // ahead of the event loop.
  const terms = [];
  for (let i = 0; i < 40; i++) {
    const term = sc.spawn('/bin/sh', ['-c', 'echo "pid=$$"']);
    inside = true;
    const pid = term.pid;
    inside = false;
    assert.ok(pid > 0, `terminal ${i}: pid ${pid}`);
    terms.push({ pid, done: run(term) });
  }
  for (const { pid, done } of terms) {
    const r = await done;
    assert.strictEqual(r.output, `pid=${pid}\r\n`);
  }
  const e = await floodDone;
  assert.strictEqual(e.exitCode, 0);
  assert.strictEqual(ranInside, 0, 'a listener ran inside a pid read');
  const want = Array.from({ length: lines }, (_, i) => `${i + 1}\r\n`).join('');
  assert.ok(text === want, `the flood's output differs (got ${text.length} of ${want.length} characters)`);
});

test('pid of a program that cannot start is 0, and ready says why', async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn('/nonexistent/program', []);
  assert.strictEqual(term.pid, 0);
  await assert.rejects(term.ready, /nonexistent/);
});
