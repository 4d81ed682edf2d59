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
  // node-pty's pause() and resume() return its socket; ours the terminal.
  assert.strictEqual(term.pause(), term);
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

  assert.strictEqual(term.resume(), term);
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

test('handleFlowControl: XOFF and XON written by the host pause and resume, and are not sent', async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn('/bin/sh', ['-c', 'stty raw -echo; echo ready; head -c 2 | od -An -c'], { handleFlowControl: true });
  let out = '';
  let hit;
  term.onData((d) => {
    out += d;
    if (hit) hit();
  });
  const done = run(term);
  await within(new Promise((r) => (hit = () => out.includes('ready') && r())), 'ready');
  term.write('\x13');
  assert.strictEqual(term._paused, true);
  term.write('\x11');
  assert.strictEqual(term._paused, false);
  term.write('ab'); // raw mode: had XOFF/XON been sent, head would read them first
  const r = await done;
  assert.match(r.output, /a\s+b/);
  assert.ok(!/023|021/.test(r.output), `a flow control byte reached the child: ${JSON.stringify(r.output)}`);
});

test("handleFlowControl with the host's own pause and resume strings (node-pty's _flowControlPause/_flowControlResume)", async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn('cat', [], { handleFlowControl: true, flowControlPause: 'abc', flowControlResume: 'def' });
  assert.strictEqual(term.handleFlowControl, true);
  assert.strictEqual(term._flowControlPause, 'abc');
  assert.strictEqual(term._flowControlResume, 'def');
  await term.ready;
  term.write('abc');
  assert.strictEqual(term._paused, true);
  term.write('def');
  assert.strictEqual(term._paused, false);
  const done = run(term);
  term.kill();
  await done;
});

// node-pty fires onExit on a paused terminal; so do we, after delivering
// the output the pause held back (node-pty loses it).
test('a paused terminal still reports its exit, after the output it held', async (t) => {
  const sc = newSidecar(t);
  const n = 200000; // well within the credit window: the EXIT is not held back by credit
  const cases = [
    ['pause()', {}, (term) => term.pause()],
    ['handleFlowControl and XOFF', { handleFlowControl: true }, (term) => term.write('\x13')],
  ];
  for (const [what, opts, pause] of cases) {
    const term = sc.spawn('/bin/sh', ['-c', `echo ready; read x; head -c ${n} /dev/zero | tr '\\0' x; exit 3`], opts);
    let out = '';
    let exit = null;
    let hit;
    term.onData((d) => {
      assert.strictEqual(exit, null, `${what}: onData after onExit`);
      out += d;
      if (hit) hit();
    });
    const exited = within(new Promise((r) => term.onExit((e) => r((exit = e)))), `${what}: onExit while paused`);
    await within(new Promise((r) => (hit = () => out.includes('ready') && r())), `${what}: ready`);
    hit = null;
    pause(term);
    assert.strictEqual(term._paused, true, what);
    const seen = out.length;
    term.write('go\r');
    assert.deepStrictEqual(await exited, { exitCode: 3, signal: 0 }, what);
    assert.ok(out.length > seen, `${what}: the held output came`);
    assert.strictEqual((out.match(/x/g) || []).length, n, `${what}: every byte before the exit`);
  }
  // kill() of a paused terminal ends it, and the exit comes.
  const term = sc.spawn('sleep', ['1000']);
  await term.ready;
  term.pause();
  term.kill();
  assert.deepStrictEqual(await within(new Promise((r) => term.onExit(r)), 'onExit after kill() while paused'), { exitCode: 0, signal: 1 });
});
