'use strict';
// Viewers of a persistent terminal: attach(id, { view: true }) against the
// real `ptyplex-sidecar --persist NAME` server.
const test = require('node:test');
const assert = require('node:assert');
const childProcess = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { BIN, within, waitOutput, waitUntil, cleanup } = require('./helpers');
const { Sidecar } = require('..');

function server(t) {
  const runtimeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-npmview-'));
  const name = `v${process.pid}x${Math.random().toString(36).slice(2, 8)}`;
  const env = { PTYPLEX_RUNTIME_DIR: runtimeDir };
  const sidecar = () => {
    const sc = new Sidecar({ path: BIN, persist: name, env, logger: () => {} });
    cleanup(t, () => sc.close());
    return sc;
  };
  cleanup(t, () => {
    childProcess.spawnSync(BIN, ['--persist', name, '--stop'], { env: { ...process.env, ...env }, stdio: 'ignore', timeout: 20000 });
    fs.rmSync(runtimeDir, { recursive: true, force: true });
  });
  return { sidecar, name, env };
}

test('a viewer sees what the holder sees, cannot type, and takes the terminal when the holder hands it over', async (t) => {
  const { sidecar } = server(t);
  const a = sidecar();
  const held = a.spawn('/bin/sh', ['-c', 'stty -echo; echo ready; exec cat'], {});
  await waitOutput(held, 'ready');
  const b = sidecar();
  const view = b.attach(held.terminalId, { view: true });
  const replayed = waitOutput(view, 'ready');
  await within(view.ready, 'the viewer attached');
  assert.strictEqual(view.viewing, true);
  assert.ok(view.viewer > 0, `viewer number ${view.viewer}`);
  assert.strictEqual(held.viewing, false);
  await replayed;
  assert.throws(() => view.write('no\n'), /only views it/);
  assert.throws(() => view.resize(10, 10), /only views it/);
  assert.throws(() => view.kill(), /only views it/);
  const listed = await within(b.list(), 'LISTED');
  const e = listed.find((x) => x.terminalId === held.terminalId);
  assert.ok(e && e.attached && e.viewers && e.viewers.length === 1 && e.viewers[0].viewer === view.viewer, JSON.stringify(e));

  const both = Promise.all([waitOutput(held, 'one'), waitOutput(view, 'one')]);
  held.write('one\n');
  await both;

  const detached = within(new Promise((resolve) => held.onDetach(resolve)), 'the old holder detached');
  held.handOver(view.viewer);
  const { reason } = await detached;
  assert.match(reason, new RegExp(`handed over to viewer ${view.viewer}`));
  await waitUntil(() => !view.viewing, 'the viewer to become the holder');
  const two = waitOutput(view, 'two');
  view.write('two\n');
  await two;
  assert.strictEqual(view.lost, 0);
});

test("a viewer's getProcess resolves with the foreground process's name, as the process getter knows it", async (t) => {
  const { sidecar } = server(t);
  const a = sidecar();
  const held = a.spawn('/bin/sh', ['-c', 'stty -echo; echo ready; exec cat'], {});
  await waitOutput(held, 'ready');
  const view = sidecar().attach(held.terminalId, { view: true });
  const errors = [];
  view.on('error', (e) => errors.push(e.message));
  await within(view.ready, 'the viewer attached');
  const name = await within(view.getProcess(), "the viewer's getProcess");
  assert.strictEqual(typeof name, 'string');
  if (process.platform === 'linux') assert.strictEqual(name, 'cat');
  assert.strictEqual(name, view.process);
  assert.deepStrictEqual(errors, []);
});

test("a viewer resumed after its connection dropped takes the viewer number the server gave it again, and the holder can hand over to it", async (t) => {
  const { sidecar, name, env } = server(t);
  const a = sidecar();
  const held = a.spawn('/bin/sh', ['-c', 'stty -echo; echo ready; exec cat'], {});
  await waitOutput(held, 'ready');
  const b = new Sidecar({ path: BIN, env, transport: ['env', `PTYPLEX_RUNTIME_DIR=${env.PTYPLEX_RUNTIME_DIR}`, BIN, '--persist', name], reconnect: { initialDelay: 10 }, logger: () => {} });
  cleanup(t, () => b.close());
  const view = b.attach(held.terminalId, { view: true });
  await within(view.ready, 'the viewer attached');
  const before = view.viewer;
  const reconnected = within(new Promise((resolve) => b.once('reconnected', resolve)), 'the viewer reconnected');
  process.kill(b.pid, 'SIGKILL');
  await reconnected;
  // 'reconnected' fires as the ATTACHs go out, and the viewer's number
  // changes when its ATTACHED arrives. A LIST asked after them may be
  // answered first (the server sends ATTACHED from the terminal's own
  // queue, and LISTED at once), so the number is awaited first.
  await waitUntil(() => view.viewer !== before, "the viewer's new number");
  const listed = await within(b.list(), 'LISTED');
  const e = listed.find((x) => x.terminalId === held.terminalId);
  assert.ok(e && e.viewers && e.viewers.length === 1, JSON.stringify(e));
  assert.notStrictEqual(e.viewers[0].viewer, before);
  assert.strictEqual(view.viewer, e.viewers[0].viewer);
  const detached = within(new Promise((resolve) => held.onDetach(resolve)), 'the holder handed over');
  held.handOver(view.viewer);
  assert.match((await detached).reason, /handed over/);
  await waitUntil(() => !view.viewing, 'the viewer to become the holder');
});

test("a viewer's kill throws whatever the signal while the terminal runs; after its exit write and kill do nothing", async (t) => {
  const { sidecar } = server(t);
  const a = sidecar();
  const held = a.spawn('/bin/sh', ['-c', 'stty -echo; echo ready; exec cat'], {});
  await waitOutput(held, 'ready');
  const view = sidecar().attach(held.terminalId, { view: true });
  await within(view.ready, 'the viewer attached');
  assert.throws(() => view.kill('SIGBOGUS'), /only views it/);
  // A holder's unknown signal is let go with a note, as node-pty swallows it.
  assert.doesNotThrow(() => held.kill('SIGBOGUS'));
  const exited = within(new Promise((resolve) => view.onExit(resolve)), "the viewer's onExit");
  held.kill();
  await exited;
  assert.doesNotThrow(() => view.write('x'));
  assert.doesNotThrow(() => view.kill());
  assert.doesNotThrow(() => view.kill('SIGBOGUS'));
});
