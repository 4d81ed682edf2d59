'use strict';
// What a paste leaves behind once its terminal has ended: nothing that
// keeps the host's process alive. node-pty's scripts end when their last
// terminal has, whatever was still to be written to it.

const test = require('node:test');
const assert = require('node:assert');
const childProcess = require('child_process');
const path = require('path');
const { once } = require('events');
const { BIN, within } = require('./helpers');

const ROOT = path.join(__dirname, '..');
const OLD = path.join(__dirname, 'fixtures', 'seed-sidecar.js');

// script is a host that opens a child reading 100 bytes of its input and
// exiting, pastes 1 MiB into it (two pieces: the pace asks the sidecar
// for HELLO), and prints "exited" at the child's exit; it must then end
// on its own.
function script(sidecarArgs) {
  return `
    const { Sidecar } = require(${JSON.stringify(ROOT)});
    const sc = new Sidecar(${JSON.stringify(sidecarArgs)});
    const term = sc.spawn('/bin/sh', ['-c', 'stty raw -echo; echo ready; head -c 100 >/dev/null'], {});
    let sent = false;
    term.onData((d) => {
      if (!sent && d.includes('ready')) {
        sent = true;
        term.write(Buffer.alloc(1 << 20, 0x61));
      }
    });
    term.onExit(() => console.log('exited'));
  `;
}

async function hostEnds(t, sidecarArgs) {
  const child = childProcess.spawn(process.execPath, ['-e', script(sidecarArgs)], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.exitCode === null && child.kill('SIGKILL'));
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (s) => (out += s));
  const ended = once(child, 'exit');
  await within(
    (async () => {
      while (!out.includes('exited')) await once(child.stdout, 'data');
    })(),
    "the child's exit in the host",
  );
  const start = Date.now();
  // Well below helloTimeout (15 s), which the process waited out before.
  const [code] = await within(ended, 'the host to end on its own after its terminal exited', 8000);
  assert.strictEqual(code, 0);
  t.diagnostic(`the host ended ${Date.now() - start} ms after its terminal`);
}

test('a paste into a sidecar older than HELLO leaves no timer behind: the host ends once its terminal has', { skip: process.platform === 'win32' && 'a Unix shell and stty' }, async (t) => {
  await hostEnds(t, { path: process.execPath, args: [OLD, BIN, 'prehello'] });
});

test('a paste into a current sidecar leaves nothing behind either', { skip: process.platform === 'win32' && 'a Unix shell and stty' }, async (t) => {
  await hostEnds(t, { path: BIN });
});
