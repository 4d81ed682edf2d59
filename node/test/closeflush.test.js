'use strict';
// close() right after a write: the input goes out first when the sidecar
// keeps taking it. On a persistent server the terminal outlives the
// connection, and a command or paste written before close() must reach
// it, as it did before close() learnt to drop a paste the child never
// reads (that one is dropped still: persist.test.js, paste.test.js).
const test = require('node:test');
const assert = require('node:assert');
const childProcess = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { Sidecar } = require('..');
const { BIN, within, waitOutput, waitUntil, cleanup } = require('./helpers');

test('close() right after a 4 MiB paste into a terminal on a persistent server that reads it: all of it arrives, and the terminal runs on', { skip: process.platform === 'win32' && 'a Unix shell' }, async (t) => {
  const runtimeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-closeflush-'));
  const name = `cf${process.pid}x${Math.random().toString(36).slice(2, 8)}`;
  const env = { PTYPLEX_RUNTIME_DIR: runtimeDir };
  cleanup(t, () => {
    childProcess.spawnSync(BIN, ['--persist', name, '--stop'], { env: { ...process.env, ...env }, stdio: 'ignore', timeout: 20000 });
    fs.rmSync(runtimeDir, { recursive: true, force: true });
  });
  const file = path.join(runtimeDir, 'got');
  const sc = new Sidecar({ path: BIN, persist: name, env });
  cleanup(t, () => sc.close());
  const term = sc.spawn('/bin/sh', ['-c', `stty raw -echo; echo ready; exec cat > ${file}`]);
  await waitOutput(term, 'ready');
  const want = Buffer.concat([Buffer.alloc(4 << 20, 0x61), Buffer.from('END!')]);
  term.write(want);
  await within(sc.close(), 'close() after the paste');
  const size = () => (fs.existsSync(file) ? fs.statSync(file).size : 0);
  await waitUntil(() => size() >= want.length, `the whole paste in the file (${want.length} bytes)`, 20000).catch((err) => {
    throw new Error(`${err.message}; it holds ${size()}`);
  });
  assert.ok(fs.readFileSync(file).equals(want), 'the file is the paste, byte for byte');
  const sc2 = new Sidecar({ path: BIN, persist: name, env });
  cleanup(t, () => sc2.close());
  const listed = await within(sc2.list(), 'LIST');
  assert.ok(listed.some((e) => e.terminalId === term.terminalId && !e.dead), `the terminal runs on: ${JSON.stringify(listed)}`);
});
