'use strict';
const test = require('node:test');
const assert = require('node:assert');
const os = require('os');
const { BIN, DEADLINE, newSidecar, run, waitOutput, waitUntil, within } = require('./helpers');

const SIG = os.constants.signals;

test('exit codes and signal deaths, in node-pty shape', async (t) => {
  const sc = newSidecar(t);
  const cases = [
    ['exit 0', { exitCode: 0, signal: 0 }],
    ['exit 3', { exitCode: 3, signal: 0 }],
    ['exit 255', { exitCode: 255, signal: 0 }],
    ['kill -TERM $$', { exitCode: 0, signal: SIG.SIGTERM }],
    ['kill -KILL $$', { exitCode: 0, signal: SIG.SIGKILL }],
    ['kill -SEGV $$', { exitCode: 0, signal: SIG.SIGSEGV }],
  ];
  if (process.platform === 'linux') {
    // Real-time signals: the sidecar names them as kill -l does
    // (SIGRTMIN+3, SIGRTMAX-2); node-pty reports their numbers.
    cases.push(['kill -37 $$', { exitCode: 0, signal: 37 }], ['kill -62 $$', { exitCode: 0, signal: 62 }]);
  }
  await Promise.all(
    cases.map(async ([script, want]) => {
      const r = await run(sc.spawn('/bin/sh', ['-c', script]));
      assert.deepStrictEqual({ exitCode: r.exitCode, signal: r.signal }, want, script);
    }),
  );
});

// Each signal is delivered to the child (the shell); the script reports
// the ones it traps, and the untrappable one ends it.
test('kill with SIGINT, SIGTERM and SIGKILL', async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn('/bin/sh', [
    '-c',
    `trap 'echo got-INT' INT; trap 'echo got-TERM' TERM; echo ready; while :; do sleep 1; done`,
  ]);
  const done = run(term);
  await waitOutput(term, 'ready');
  term.kill('SIGINT');
  await waitOutput(term, 'got-INT');
  term.kill('TERM'); // node-pty also takes names without SIG
  await waitOutput(term, 'got-TERM');
  term.kill('SIGKILL');
  const r = await done;
  assert.deepStrictEqual({ exitCode: r.exitCode, signal: r.signal }, { exitCode: 0, signal: SIG.SIGKILL });
});

// node-pty's kill(signal) is process.kill(pid, signal): the child alone.
// Sent to the foreground process group instead, it would kill the command
// the shell runs, and the shell would live on.
test('kill(signal) reaches the child, not the foreground job it runs', async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn('sh', [], { env: { PATH: process.env.PATH, PS1: '$ ' } });
  const done = run(term);
  await term.ready;
  term.write('sleep 30\r');
  // The interactive shell has handed the terminal to sleep.
  await waitUntil(() => term.process === 'sleep', 'sleep in the foreground');
  const t0 = Date.now();
  term.kill('SIGKILL');
  const r = await within(done, 'the shell to die of SIGKILL', 15000);
  assert.deepStrictEqual({ exitCode: r.exitCode, signal: r.signal }, { exitCode: 0, signal: SIG.SIGKILL });
  assert.ok(Date.now() - t0 < 15000, 'the exit came before sleep would have ended');
});

test('kill() without a signal ends the terminal with SIGHUP', async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn('sleep', ['1000']);
  const done = run(term);
  await term.ready;
  term.kill();
  const r = await done;
  assert.deepStrictEqual({ exitCode: r.exitCode, signal: r.signal }, { exitCode: 0, signal: SIG.SIGHUP });
});

// node-pty does process.kill(pid, signal || 'SIGHUP').
test('kill with a falsy signal (null, empty, 0) is kill() without one', async (t) => {
  const sc = newSidecar(t);
  await Promise.all(
    [null, '', 0, false].map(async (sig) => {
      const term = sc.spawn('sleep', ['1000']);
      const done = run(term);
      await term.ready;
      term.kill(sig);
      const r = await done;
      assert.deepStrictEqual({ exitCode: r.exitCode, signal: r.signal }, { exitCode: 0, signal: SIG.SIGHUP }, `kill(${JSON.stringify(sig)})`);
    }),
  );
  assert.ok(!sc.lines.some((l) => /unknown signal/.test(l)), sc.lines.join('\n'));
});

test('kill before the terminal opened is applied once it runs', async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn('sleep', ['1000']);
  term.kill('SIGTERM');
  const r = await run(term);
  assert.strictEqual(r.signal, SIG.SIGTERM);
});

test('kill with an unknown signal is ignored, as by node-pty, and leaves the terminal alone', async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn('cat');
  const done = run(term);
  term.kill('SIGNOPE');
  assert.ok(sc.lines.some((l) => /unknown signal, ignored/.test(l)), `logged: ${sc.lines}`);
  term.write('alive\n');
  await waitOutput(term, 'alive\r\nalive');
  term.kill();
  await done;
});

test('a program that cannot start: ready rejects, onExit fires with code 1', async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn('/nonexistent/program');
  const errors = [];
  term.on('error', (e) => errors.push(e));
  const r = await run(term);
  assert.deepStrictEqual({ exitCode: r.exitCode, signal: r.signal }, { exitCode: 1, signal: 0 });
  await assert.rejects(term.ready, /cannot start \/nonexistent\/program/);
  assert.strictEqual(errors.length, 1);
  // Said once: the sidecar's reason begins with it already.
  assert.strictEqual(errors[0].message.split('cannot start').length, 2, errors[0].message);
  assert.match(errors[0].message, /^cannot start \/nonexistent\/program: /);
  await assert.rejects(sc.open('sh', [], { cwd: '/nonexistent/dir' }), /^Error: cannot start sh: cwd \/nonexistent\/dir/);
  // The sidecar's stderr reached the logger: a pipe of its own, written by
  // a goroutine of the sidecar's, so it may come after the ERROR frame.
  await waitUntil(() => sc.lines.some((l) => l.includes('/nonexistent/program')), "the sidecar's stderr line about it");
});

test("a program that cannot start: 'close' comes before 'exit', as for any other exit", async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn('/nonexistent/program');
  const order = [];
  term.on('error', () => order.push('error'));
  term.on('close', () => order.push('close'));
  term.on('exit', (code) => order.push(`exit ${code}`));
  await run(term);
  assert.deepStrictEqual(order, ['error', 'close', 'exit 1']);
});

// node-pty emits no 'error' here; a program with no 'error' listener must
// not die of one, as it would of an EventEmitter's unhandled 'error'.
test('a program that cannot start does not crash a host with no error listener', async () => {
  const { execFile } = require('child_process');
  const script = `const { Sidecar } = require(${JSON.stringify(require.resolve('..'))});
    const t = new Sidecar({ path: ${JSON.stringify(BIN)} }).spawn('/nonexistent/program');
    t.onExit((e) => process.stdout.write(JSON.stringify(e)));`;
  const out = await new Promise((res, rej) =>
    execFile(process.execPath, ['-e', script], { timeout: DEADLINE }, (err, stdout, stderr) => (err ? rej(new Error(`${err.message}\n${stderr}`)) : res(stdout))),
  );
  assert.deepStrictEqual(JSON.parse(out), { exitCode: 1, signal: 0 });
});

test('nothing of the session outlives onExit', async (t) => {
  const sc = newSidecar(t);
  const r = await run(sc.spawn('/bin/sh', ['-c', 'sleep 1000 & echo "bg=$!"; (trap "" HUP; exec sleep 1001) & echo "nohup=$!"']));
  const { waitUntil, alive } = require('./helpers');
  for (const name of ['bg', 'nohup']) {
    const pid = Number(new RegExp(`${name}=(\\d+)`).exec(r.output)[1]);
    await waitUntil(() => !alive(pid), `${name} (pid ${pid}) to be gone`);
  }
});

test("node-pty's EventEmitter-style methods: once, removeListener, removeAllListeners, listeners, 'close' before 'exit'", async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn('/bin/sh', ['-c', 'read x; echo "got $x"']);
  const order = [];
  const never = () => order.push('removed listener ran');
  term.once('data', never);
  term.removeListener('data', never); // the once wrapper goes too
  term.on('data', never);
  assert.deepStrictEqual(term.listeners('data'), [never]);
  term.removeAllListeners('data');
  assert.deepStrictEqual(term.listeners('data'), []);
  term.on('close', () => order.push('close'));
  term.on('exit', (code) => order.push(`exit ${code}`));
  const done = run(term);
  term.write('x\n');
  const r = await done;
  assert.match(r.output, /got x/);
  assert.deepStrictEqual(order, ['close', 'exit 0']);
  assert.strictEqual(term.emit('nothing-here'), false);
});

test("emit('data') and emit('exit') reach the onData and onExit listeners too, as in node-pty", async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn('cat');
  const seen = [];
  term.onData((d) => seen.push(`onData ${d}`));
  term.on('data', (d) => seen.push(`on ${d}`));
  term.onExit((e) => seen.push(`onExit ${e.exitCode} ${e.signal}`));
  term.on('exit', (code, signal) => seen.push(`on exit ${code} ${signal}`));
  assert.strictEqual(term.emit('data', 'x'), true);
  assert.strictEqual(term.emit('exit', 7, 2), true);
  assert.deepStrictEqual(seen, ['onData x', 'on x', 'onExit 7 2', 'on exit 7 2']);
  const done = run(term);
  term.kill();
  await done;
});

test("setParentWindow, node-pty 1.2's, answers false and leaves the terminal as it was", async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn('/bin/sh', ['-c', 'read x; echo "got $x"']);
  const done = run(term);
  // A host written for node-pty 1.2 hands it an Electron window's handle.
  assert.strictEqual(term.setParentWindow(Buffer.alloc(8)), false);
  await term.ready;
  assert.strictEqual(term.setParentWindow(Buffer.alloc(8)), false);
  term.write('y\n');
  const r = await done;
  assert.match(r.output, /got y/);
  assert.strictEqual(r.exitCode, 0);
});

test('destroy ends the terminal as kill() does', async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn('cat');
  const done = run(term);
  await term.ready;
  term.destroy();
  const r = await done;
  assert.strictEqual(r.signal, SIG.SIGHUP);
});

test('open(): listeners added right after the await get a short program\'s whole output and its exit', async (t) => {
  const sc = newSidecar(t);
  // A program that is done before open() resolves: its OUTPUT and EXIT
  // often come in the same read as its OPENED, before the caller's
  // continuation runs.
  for (let i = 0; i < 40; i++) {
    const term = await sc.open('/bin/sh', ['-c', `echo hello-${i}`]);
    let out = '';
    term.onData((d) => {
      out += d;
    });
    const e = await within(new Promise((resolve) => term.onExit(resolve)), `the exit of open ${i}`);
    assert.strictEqual(e.exitCode, 0);
    assert.strictEqual(out, `hello-${i}\r\n`, `open ${i}`);
  }
});
