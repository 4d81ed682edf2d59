'use strict';
// A paste under way when the connection drops (reconnect). The pace keeps
// most of a paste in this process, behind the PONG of the piece before:
// that part never left, so the next connection gets it. Only what was in
// the dead transport is lost, as the README says.
const test = require('node:test');
const assert = require('node:assert');
const childProcess = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { Sidecar } = require('..');
const { BIN, within, waitOutput, waitUntil, cleanup } = require('./helpers');

// pattern is n printable bytes with no short period: a byte lost, doubled
// or moved shows.
function pattern(n) {
  const b = Buffer.allocUnsafe(n);
  let x = 12345;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    b[i] = 0x21 + ((x >>> 16) % 94);
  }
  return b;
}

test('a connection that drops mid-paste: what this host never sent of the paste, and the resize behind it, go out on the next connection, once and in order', { skip: process.platform === 'win32' && 'a Unix shell' }, async (t) => {
  const runtimeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-resumepaste-'));
  const name = `rp${process.pid}x${Math.random().toString(36).slice(2, 8)}`;
  const env = { ...process.env, PTYPLEX_RUNTIME_DIR: runtimeDir };
  cleanup(t, () => {
    childProcess.spawnSync(BIN, ['--persist', name, '--stop'], { env, stdio: 'ignore', timeout: 20000 });
    fs.rmSync(runtimeDir, { recursive: true, force: true });
  });
  // A bridge that copies the frames (as one to an older server does): one
  // killed is a dropped connection, as an ssh killed is.
  const transport = ['env', 'PTYPLEX_BRIDGE_COPY=1', `PTYPLEX_RUNTIME_DIR=${runtimeDir}`, BIN, '--persist', name];
  const sc = new Sidecar({ transport, reconnect: { initialDelay: 10 }, helloTimeout: 60000, openTimeout: 60000 });
  cleanup(t, () => sc.close());
  const file = path.join(runtimeDir, 'got');
  // Raw: every byte of the paste reaches the file as written. cat runs
  // in the background (its input the terminal's still), so that the shell
  // can print the size at each SIGWINCH.
  const script = `stty raw -echo; exec 3<&0; cat <&3 > ${file} & trap 'stty size <&3' WINCH; echo ready; while :; do wait; done`;
  const term = sc.spawn('/bin/sh', ['-c', script], { cols: 80, rows: 24 });
  await waitOutput(term, 'ready');
  const N = 8 << 20;
  const want = pattern(N);
  const disconnected = within(new Promise((resolve) => sc.once('disconnected', resolve)), 'the drop');
  const reconnected = within(new Promise((resolve) => sc.once('reconnected', resolve)), 'the reconnect');
  term.write(want);
  term.resize(100, 40);
  const out = term._gen.out;
  process.kill(sc.pid, 'SIGKILL');
  await disconnected;
  // Every frame wholly written to the dead transport may be lost.
  const inTransport = out._written;
  await reconnected;
  const size = waitOutput(term, '40 100', 'the resize that waited behind the paste');
  term.write('END!');
  await within(
    (async () => {
      for (;;) {
        const c = fs.existsSync(file) ? fs.readFileSync(file) : Buffer.alloc(0);
        if (c.subarray(-4).toString() === 'END!') return;
        await new Promise((r) => setTimeout(r, 50));
      }
    })(),
    'the file to end with the END! written after the reconnect',
    60000,
  );
  const body = fs.readFileSync(file).subarray(0, -4);
  let a = 0;
  while (a < body.length && body[a] === want[a]) a++;
  const rest = body.length - a;
  const from = N - rest; // where the part after the gap begins in the paste
  t.diagnostic(`${body.length} of ${N} bytes arrived; ${inTransport} bytes had been written to the dead transport; the gap is ${from - a} bytes at ${a}`);
  assert.ok(want.subarray(from).equals(body.subarray(a)), 'what follows the gap is the rest of the paste');
  assert.ok(from >= a, 'nothing doubled');
  assert.ok(body.length === N || from <= inTransport, `only what was in the dead transport is missing (resumed from ${from}, ${inTransport} written)`);
  await size;
  term.kill();
});

test('what the listeners of an attach the drop failed write goes out after what the writer had not sent, and is not lost', { skip: process.platform === 'win32' && 'a Unix shell' }, async (t) => {
  const runtimeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-resumepaste-'));
  const name = `rp${process.pid}x${Math.random().toString(36).slice(2, 8)}`;
  const env = { ...process.env, PTYPLEX_RUNTIME_DIR: runtimeDir };
  cleanup(t, () => {
    childProcess.spawnSync(BIN, ['--persist', name, '--stop'], { env, stdio: 'ignore', timeout: 20000 });
    fs.rmSync(runtimeDir, { recursive: true, force: true });
  });
  const transport = ['env', 'PTYPLEX_BRIDGE_COPY=1', `PTYPLEX_RUNTIME_DIR=${runtimeDir}`, BIN, '--persist', name];
  // Another host's terminal, for this one to attach.
  const other = new Sidecar({ transport, persist: true });
  cleanup(t, () => other.close());
  const target = other.spawn('/bin/sh', ['-c', 'exec sleep 100000']);
  await within(target.ready, 'the other terminal');
  await within(other.close(), 'the other host to let it go');
  const sc = new Sidecar({ transport, reconnect: { initialDelay: 10 }, helloTimeout: 60000, openTimeout: 60000 });
  cleanup(t, () => sc.close());
  const echo = sc.spawn('/bin/sh', ['-c', 'stty -echo; echo ready; exec cat']);
  let out = '';
  echo.onData((d) => (out += d));
  await waitOutput(echo, 'ready');
  const reconnected = within(new Promise((resolve) => sc.once('reconnected', resolve)), 'the reconnect');
  // A paste waiting behind its PONG, then an attach whose answer the drop
  // cuts off: it fails, and its listener writes.
  echo.write(Buffer.alloc(1 << 20, 0x61));
  echo.write('\r');
  const late = sc.attach(target.terminalId);
  let failed = false;
  late.on('error', () => {});
  late.onExit(() => {
    failed = true;
    echo.write('from the listener\r');
  });
  process.kill(sc.pid, 'SIGKILL');
  await reconnected;
  // If the attach got its answer before the drop, nothing failed: nothing to check.
  if (!failed) return t.diagnostic('the attach was answered before the drop');
  await waitUntil(() => out.includes('from the listener\r\n'), `the listener's line echoed (got ${JSON.stringify(out.slice(-80))})`);
});
