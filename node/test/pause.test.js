'use strict';
const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const { newSidecar, run, waitUntil, within } = require('./helpers');

// Bytes the process has written so far (its write(2) total).
function wchar(pid) {
  const m = /wchar: (\d+)/.exec(fs.readFileSync(`/proc/${pid}/io`, 'latin1'));
  return Number(m[1]);
}

// A paused terminal running `yes` must hold the child back through credit:
// what reaches this process stays within the credit window, the child
// stops writing, and after resume the stream continues intact.
test('pause with yes flooding keeps memory bounded and resumes intact', async (t) => {
  const window = 256 << 10;
  const sc = newSidecar(t, { creditWindow: window });
  const term = sc.spawn('yes', [], { encoding: null });
  let before = 0;
  let after = [];
  let paused = false;
  let hit;
  term.onData((d) => {
    if (paused) after.push(d);
    else before += d.length;
    if (hit) hit();
  });
  const done = run(term);
  await within(new Promise((r) => (hit = () => before > 4 * window && r())), 'the flood');
  hit = null;
  term.pause();
  paused = true;
  await term.ready;
  const yesPid = term.pid;

  // While paused, the host's buffer fills up to the window and stops.
  await waitUntil(() => term._queued >= window * 0.75, 'the paused buffer to fill');
  // Give the flood every chance to overrun: another terminal streams 32
  // MiB through the same sidecar meanwhile (a clock made of real work).
  const other = await run(sc.spawn('/bin/sh', ['-c', `head -c ${32 << 20} /dev/zero`], { encoding: null }));
  assert.strictEqual(other.output.length, 32 << 20);
  const w1 = wchar(yesPid);
  const other2 = await run(sc.spawn('/bin/sh', ['-c', `head -c ${8 << 20} /dev/zero`], { encoding: null }));
  assert.strictEqual(other2.output.length, 8 << 20);
  const w2 = wchar(yesPid);
  assert.strictEqual(after.length, 0, 'no onData while paused');
  assert.ok(term._queued <= window, `paused buffer ${term._queued} > window ${window}`);
  // yes is blocked: while 8 MiB went by elsewhere it wrote at most what
  // was left of its credit plus what the PTY buffers.
  assert.ok(w2 - w1 < window + (256 << 10), `yes wrote ${w2 - w1} bytes while paused`);

  term.resume();
  paused = true; // keep collecting into after
  await within(new Promise((r) => (hit = () => Buffer.concat(after).length > 4 * window && r())), 'the flood after resume');
  hit = null;
  term.kill();
  await done;
  // Everything after the pause continues the y\r\n pattern: nothing lost.
  const s = Buffer.concat(after).toString('latin1');
  const phase = before % 3; // where in "y\r\n" the pause fell
  const full = 'y\r\n'.repeat(Math.ceil(s.length / 3) + 2).slice(phase);
  assert.ok(full.startsWith(s) || s.startsWith(full.slice(0, s.length)), 'stream broken after resume');
  assert.strictEqual(s, full.slice(0, s.length));
});
