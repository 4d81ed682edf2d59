'use strict';
// pid right after spawn, as node-pty gives it: the read waits for OPENED
// without running any listener and without disturbing other streams.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const { newSidecar, run, waitOutput, BIN, DEADLINE } = require('./helpers');

const nap = new Int32Array(new SharedArrayBuffer(4));

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

test('where the thread may not block in Atomics.wait and there is no SharedArrayBuffer (an Electron renderer), the package loads and pid is still there at once', async () => {
  const { execFile } = require('child_process');
  // A renderer's main thread, as far as this package can tell: no
  // SharedArrayBuffer without cross-origin isolation, and Atomics.wait refused.
  const script = `delete globalThis.SharedArrayBuffer;
    Atomics.wait = () => { throw new TypeError('Atomics.wait cannot be called in this context'); };
    const { Sidecar } = require(${JSON.stringify(require.resolve('..'))});
    const sc = new Sidecar({ path: ${JSON.stringify(BIN)} });
    const t = sc.spawn('/bin/sh', ['-c', 'echo "pid=$$"']);
    const pid = t.pid;
    let out = '';
    t.onData((d) => (out += d));
    t.onExit(() => process.stdout.write(JSON.stringify({ pid, out })));`;
  const got = await new Promise((res, rej) =>
    execFile(process.execPath, ['-e', script], { timeout: DEADLINE }, (err, stdout, stderr) => (err ? rej(new Error(`${err.message}\n${stderr}`)) : res(stdout))),
  );
  const { pid, out } = JSON.parse(got);
  assert.ok(pid > 0, `pid ${pid}`);
  assert.strictEqual(out, `pid=${pid}\r\n`);
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

test('pid at once after spawn behind a paste the pipe to the sidecar could not take yet', async (t) => {
  const sc = newSidecar(t);
  // A terminal that counts what it is sent, and a paste into it larger
  // than the pipe holds: the OPENs that follow wait behind it.
  const paste = 4 << 20;
  const sink = sc.spawn('/bin/sh', ['-c', `stty raw -echo; echo ready; head -c ${paste} | wc -c`]);
  const sunk = run(sink);
  await waitOutput(sink, 'ready');
  sink.write(Buffer.alloc(paste, 0x61));
  const terms = [];
  for (let i = 0; i < 5; i++) {
    const term = sc.spawn('/bin/sh', ['-c', 'echo "pid=$$"']);
    terms.push({ pid: term.pid, done: run(term) });
  }
  for (const [i, { pid, done }] of terms.entries()) {
    assert.ok(pid > 0, `terminal ${i}: pid ${pid} right after spawn`);
    assert.strictEqual((await done).output, `pid=${pid}\r\n`, `terminal ${i}`);
  }
  // The paste arrived whole, its frames pushed on by the waits and then by the event loop.
  assert.strictEqual((await sunk).output.trim().split(/\s+/).pop(), String(paste));
});

test('pid of a program that cannot start is 0, and ready says why', async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn('/nonexistent/program', []);
  assert.strictEqual(term.pid, 0);
  await assert.rejects(term.ready, /nonexistent/);
});

test('pid read inside onData and onExit listeners, beside floods', async (t) => {
  const sc = newSidecar(t);
  // The floods' output must come through whole and in order: a read-ahead
  // that jumped over a chunk the event loop had already read shows here.
  const lines = 300000;
  const want = Array.from({ length: lines }, (_, i) => `${i + 1}\r\n`).join('');
  const floods = [];
  const flooded = (f) => {
    let text = '';
    f.onData((d) => (text += d));
    return new Promise((resolve) => f.onExit(() => resolve(text)));
  };
  for (let i = 0; i < 3; i++) floods.push(flooded(sc.spawn('/bin/sh', ['-c', `seq 1 ${lines}`])));
  const zero = [];
  // A restart-on-exit loop: each terminal's onExit spawns the next and
  // reads its pid there, in the middle of the parser's frames.
  const cycles = 30;
  await new Promise((resolve) => {
    let n = 0;
    const next = () => {
      const term = sc.spawn('/bin/sh', ['-c', 'echo "pid=$$"']);
      const pid = term.pid;
      if (!(pid > 0)) zero.push(`onExit spawn ${n}`);
      let out = '';
      term.onData((d) => (out += d));
      term.onExit(() => {
        if (pid > 0 && out !== `pid=${pid}\r\n`) zero.push(`spawn ${n}: output ${JSON.stringify(out)}`);
        if (++n === cycles) resolve();
        else next();
      });
    };
    next();
  });
  // And from onData of a flood, while it streams.
  const flood = sc.spawn('/bin/sh', ['-c', `seq 1 ${lines}`]);
  let spawned = 0;
  const inData = [];
  await new Promise((resolve) => {
    flood.onData(() => {
      if (spawned < 20) {
        spawned++;
        const term = sc.spawn('/bin/true');
        if (!(term.pid > 0)) zero.push(`onData spawn ${spawned}`);
        inData.push(new Promise((r) => term.onExit(r)));
      }
    });
    flood.onExit(resolve);
  });
  const texts = await Promise.all(floods);
  await Promise.all(inData);
  assert.deepStrictEqual(zero, []);
  texts.forEach((text, i) => assert.ok(text === want, `flood ${i}: ${text.length} characters of ${want.length}, or out of order`));
  assert.deepStrictEqual(sc.lines.filter((l) => /corrupt/.test(l)), []);
});

test('output read ahead by a pid read reaches listeners attached after an await', { skip: process.platform !== 'linux' && 'reads /proc' }, async (t) => {
  const sc = newSidecar(t);
  await sc.open('/bin/true'); // warm
  const round = async () => {
    const first = sc.spawn('/bin/sh', ['-c', 'echo hello']);
    assert.ok(first.pid > 0);
    // Without yielding to the event loop, until the sidecar has reaped
    // first: its output is in the pipe by then (the PTY is read to its end
    // before the reap), so reading the next pid reads it ahead.
    const end = Date.now() + 10000;
    while (fs.existsSync(`/proc/${first.pid}`) && Date.now() < end) Atomics.wait(nap, 0, 0, 1);
    const second = sc.spawn('/bin/true');
    assert.ok(second.pid > 0);
    await null;
    return Promise.all([run(first), run(second)]);
  };
  for (let i = 0; i < 10; i++) {
    // From a timer callback, as a host's code runs: ticks queued there run
    // before the await's continuation, the event loop's next poll after it.
    const [r] = await new Promise((resolve, reject) => setTimeout(() => round().then(resolve, reject), 0));
    assert.strictEqual(r.output, 'hello\r\n', `round ${i}`);
  }
});
