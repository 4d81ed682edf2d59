'use strict';
// A paste larger than the sidecar holds for a terminal (16 MiB of INPUT),
// into a child that echoes it. The child stops reading once its output
// waits for credit, the sidecar then stops reading frames, and only a
// CREDIT it can reach lets the child go on: the package must not write its
// CREDITs behind the whole paste.

const test = require('node:test');
const assert = require('node:assert');
const childProcess = require('child_process');
const { once } = require('events');
const { Sidecar } = require('..');
const { BIN, within } = require('./helpers');
const { FrameWriter } = require('../lib/writer');
const { T, controlFrame, dataFrame } = require('../lib/frames');

const PASTE = 20 << 20;
// Generous: the paste takes a second or so here; a deadlock takes for ever.
const PASTE_DEADLINE = 90000;

// pattern is n printable bytes that do not repeat with any short period,
// so that a byte lost, doubled or moved shows.
function pattern(n) {
  const b = Buffer.allocUnsafe(n);
  let x = 12345;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    b[i] = 0x21 + ((x >>> 16) % 94);
  }
  return b;
}

// echoPaste writes PASTE bytes into a raw, silent cat and resolves once
// every byte has come back, failing at the first that differs.
async function echoPaste(term) {
  const want = pattern(PASTE);
  let got = 0;
  let ready = false;
  const done = new Promise((resolve, reject) => {
    term.onData((d) => {
      if (!ready) {
        // 'ready' is alone on its line; the paste is written once it came.
        if (!d.includes('ready')) return;
        ready = true;
        term.write(want);
        return;
      }
      if (got + d.length > PASTE || !want.subarray(got, got + d.length).equals(d)) {
        reject(new Error(`the echo differs from the paste within bytes ${got}..${got + d.length}`));
        return;
      }
      got += d.length;
      if (got === PASTE) resolve();
    });
    term.onExit((e) => reject(new Error(`cat exited (${JSON.stringify(e)}) after echoing ${got} bytes`)));
  });
  await within(done, `the echo of a ${PASTE}-byte paste`, PASTE_DEADLINE).catch((err) => {
    throw new Error(`${err.message}: ${got} of ${PASTE} bytes came back`);
  });
  assert.strictEqual(got, PASTE);
}

const CAT = ['-c', 'stty raw -echo; echo ready; exec cat'];

// pasteSidecar is a sidecar for one paste. A paste that stuck would keep
// close() waiting for ever (the end of stdin goes behind it): then the
// sidecar is killed first, and the test fails rather than hangs.
function pasteSidecar(t) {
  const sc = new Sidecar({ path: BIN });
  sc.done = false;
  t.after(() => {
    const gen = sc._gen;
    if (!sc.done && gen && !gen.dead) gen.child.kill('SIGKILL');
    return sc.close();
  });
  return sc;
}

test('a 20 MiB paste into a raw cat comes back whole: the CREDITs are not stuck behind it', { skip: process.platform === 'win32' && 'a Unix shell and stty' }, async (t) => {
  const sc = pasteSidecar(t);
  const term = await sc.open('/bin/sh', CAT, { encoding: null });
  assert.ok(term._gen.out.direct, 'the frames are written to the descriptor');
  await echoPaste(term);
  sc.done = true;
});

test("a 20 MiB paste into a raw cat comes back whole through node's stream (Windows' way)", { skip: process.platform === 'win32' && 'a Unix shell and stty' }, async (t) => {
  const sc = pasteSidecar(t);
  const term = await sc.open('/bin/sh', CAT, { encoding: null });
  // Nothing waits in the first writer once the OPEN is answered.
  assert.strictEqual(term._gen.out.pending, 0);
  term._gen.out = new FrameWriter(term._gen.child.stdin, { stream: true });
  assert.ok(!term._gen.out.direct);
  await echoPaste(term);
  sc.done = true;
});

// frameReader collects the frames a child echoes back from its stdin.
function frameReader(child) {
  const frames = [];
  let buf = Buffer.alloc(0);
  child.stdout.on('data', (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    while (buf.length >= 5 && buf.length >= 4 + buf.readUInt32LE(0)) {
      const n = 4 + buf.readUInt32LE(0);
      frames.push({ type: buf[4], size: n, body: buf.subarray(5, n) });
      buf = buf.subarray(n);
    }
  });
  return frames;
}

for (const mode of ['descriptor', 'stream']) {
  test(`frames to a pipe that is full (${mode}): a CREDIT overtakes the INPUT that waits, nothing else moves`, { skip: process.platform === 'win32' && 'a Unix shell' }, async (t) => {
    // A reader that reads nothing until SIGUSR1, then copies its stdin
    // out: until then the pipe fills and the rest waits in the writer.
    const child = childProcess.spawn('/bin/sh', ['-c', 'trap "exec cat" USR1; echo waiting; while :; do sleep 0.05; done'], { stdio: ['pipe', 'pipe', 'ignore'] });
    child.stdin.on('error', () => {});
    t.after(() => child.kill('SIGKILL'));
    const [line] = await once(child.stdout, 'data');
    assert.match(String(line), /waiting/);
    const frames = frameReader(child);
    const w = new FrameWriter(child.stdin, { stream: mode === 'stream' });
    assert.strictEqual(w.direct, mode === 'descriptor');
    const id = Buffer.from('t1');
    const piece = Buffer.alloc(64 << 10, 0x61);
    const sent = [];
    const send = (f, what) => {
      sent.push(what);
      w.write(f);
    };
    // 4 MiB of INPUT, far more than the pipe and the window hold, then a
    // RESIZE and an INPUT behind it, then a CREDIT.
    for (let i = 0; i < 64; i++) send(dataFrame(T.INPUT, id, piece), `input ${i}`);
    send(controlFrame(T.RESIZE, { terminalId: 't1', cols: 90, rows: 30 }), 'resize');
    send(dataFrame(T.INPUT, id, Buffer.from('last')), 'input last');
    send(controlFrame(T.CREDIT, { terminalId: 't1', bytes: 4096 }), 'credit');
    assert.ok(w.pending > 2 << 20, `most of the paste waits in the writer (${w.pending} bytes)`);
    child.kill('SIGUSR1');
    const total = sent.length;
    await within(
      (async () => {
        while (frames.length < total) await new Promise((r) => setImmediate(r));
      })(),
      'every frame through the pipe',
    );
    const names = frames.map((f) => {
      if (f.type === T.CREDIT) return 'credit';
      if (f.type === T.RESIZE) return 'resize';
      assert.strictEqual(f.type, T.INPUT);
      return f.body.subarray(4).toString() === 'last' ? 'input last' : 'input';
    });
    const credit = names.indexOf('credit');
    // Every frame came whole (none cut into by another): the sizes are theirs.
    for (const f of frames) if (f.type === T.INPUT && f.size > 100) assert.strictEqual(f.size, 7 + 2 + piece.length);
    // The CREDIT went ahead of the INPUT that waited (at most the window,
    // 512 KiB, and what the pipe held were ahead of it) ...
    const ahead = frames.slice(0, credit).reduce((n, f) => n + f.size, 0);
    assert.ok(credit < 64, `the CREDIT came at ${credit}, after ${ahead} bytes`);
    assert.ok(ahead <= (512 << 10) + (1 << 20), `${ahead} bytes ahead of the CREDIT`);
    // ... and the rest kept its order: 64 pieces, the RESIZE, the last INPUT.
    const rest = names.filter((n) => n !== 'credit');
    assert.deepStrictEqual(rest, [...Array(64).fill('input'), 'resize', 'input last']);
  });
}
