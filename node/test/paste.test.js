'use strict';
// A paste larger than the sidecar holds for a terminal (16 MiB of INPUT),
// into a child that echoes it. The child stops reading once its output
// waits for credit, the sidecar then stops reading frames, and only a
// CREDIT it can reach lets the child go on: the package must not write its
// CREDITs behind the whole paste.

const test = require('node:test');
const assert = require('node:assert');
const childProcess = require('child_process');
const path = require('path');
const { once } = require('events');
const { Sidecar } = require('..');
const { BIN, within, waitOutput, waitUntil } = require('./helpers');
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
// every byte has come back, failing at the first that differs, with the
// milliseconds it took.
async function echoPaste(term) {
  const want = pattern(PASTE);
  let got = 0;
  let start = 0;
  let ready = false;
  const done = new Promise((resolve, reject) => {
    term.onData((d) => {
      if (!ready) {
        // 'ready' is alone on its line; the paste is written once it came.
        if (!d.includes('ready')) return;
        ready = true;
        start = Date.now();
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
  return Date.now() - start;
}

const CAT = ['-c', 'stty raw -echo; echo ready; exec cat'];

// pasteSidecar is a sidecar for one paste. A paste that stuck would keep
// close() waiting for ever (the end of stdin goes behind it): then the
// sidecar is killed first, and the test fails rather than hangs.
function pasteSidecar(t, options = {}) {
  const sc = new Sidecar({ path: BIN, ...options });
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
  t.diagnostic(`${PASTE} bytes echoed in ${await echoPaste(term)} ms with the default window`);
  sc.done = true;
});

test("a 20 MiB paste into a raw cat comes back whole through node's stream (Windows' way)", { skip: process.platform === 'win32' && 'a Unix shell and stty' }, async (t) => {
  const sc = pasteSidecar(t);
  const term = await sc.open('/bin/sh', CAT, { encoding: null });
  // Nothing waits in the first writer once the OPEN is answered.
  assert.strictEqual(term._gen.out.pending, 0);
  term._gen.out = new FrameWriter(term._gen.child.stdin, { stream: true });
  assert.ok(!term._gen.out.direct);
  t.diagnostic(`${PASTE} bytes echoed in ${await echoPaste(term)} ms with the default window`);
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

// A small credit window: the child stops reading after a few KiB of its
// echo, and the sidecar, holding 16 MiB, reads on only 1 MiB for the
// CREDIT. The package must keep at most a piece of its paste out beyond
// what the sidecar confirmed taking (a PING behind each, PROTOCOL.md INPUT).
for (const [window, mode, hello] of [
  [64 << 10, 'descriptor', false],
  [4 << 10, 'descriptor', false],
  [64 << 10, 'stream', false],
  [4 << 10, 'descriptor', true],
]) {
  const how = `${mode === 'stream' ? "through node's stream" : 'on the descriptor'}${hello ? ', after the handshake' : ''}`;
  test(`a 20 MiB paste into a raw cat with a ${window >> 10} KiB credit window comes back whole (${how})`, { skip: process.platform === 'win32' && 'a Unix shell and stty' }, async (t) => {
    const sc = pasteSidecar(t, { creditWindow: window, hello });
    const term = await sc.open('/bin/sh', CAT, { encoding: null });
    if (mode === 'stream') {
      assert.strictEqual(term._gen.out.pending, 0);
      term._gen.out = new FrameWriter(term._gen.child.stdin, { stream: true, pace: term._gen.out._pace });
    }
    const ms = await echoPaste(term);
    t.diagnostic(`${PASTE} bytes echoed in ${ms} ms with a ${window}-byte window (${how}), ${term._gen.out._pings} PINGs`);
    // Without the handshake, the first full piece asked for it.
    assert.ok(sc.remote && sc.remote.features.includes('keepalive'), 'the sidecar said it answers PING');
    sc.done = true;
  });
}

// stuckPaste opens a child that never reads its input and pastes more
// into it than the sidecar holds; it resolves once the sidecar holds the
// rest back and the package has some of it still to write.
async function stuckPaste(t) {
  const lines = [];
  const sc = pasteSidecar(t, { logger: (l) => lines.push(l) });
  // Raw: a cooked line discards what does not fit, a raw one fills and the writes block.
  const term = await sc.open('/bin/sh', ['-c', 'stty raw -echo; echo ready; exec sleep 100000'], { encoding: null });
  const exited = new Promise((resolve) => term.onExit(resolve));
  await waitOutput(term, 'ready');
  term.write(pattern(24 << 20));
  await waitUntil(() => lines.some((l) => l.includes('holding back further frames')) && term._gen.out.pending > 0, 'the sidecar to hold the paste back');
  return { sc, term, exited };
}

test('close() during a paste the child never reads ends the sidecar, without waiting for the paste', { skip: process.platform === 'win32' && 'a Unix shell' }, async (t) => {
  const { sc, exited } = await stuckPaste(t);
  // Well within the bound after which close() would kill the sidecar anyway.
  await within(sc.close(), 'close() with a paste stuck', 10000);
  const e = await within(exited, 'the exit of the terminal');
  assert.ok(e, 'onExit fired');
  sc.done = true;
});

test('a sidecar that dies while a paste waits ends its terminal, and writes after do nothing', { skip: process.platform === 'win32' && 'a Unix shell' }, async (t) => {
  const { sc, term, exited } = await stuckPaste(t);
  const died = new Promise((resolve) => sc.onDeath(resolve));
  term._gen.child.kill('SIGKILL');
  await within(died, 'onDeath');
  await within(exited, 'the exit of the terminal');
  term.write('more');
  assert.strictEqual(sc._gen, null);
  await within(sc.close(), 'close() after the death');
  sc.done = true;
});

test('a paste into a sidecar older than the handshake goes on unpaced once the HELLO it asked went unanswered', { skip: process.platform === 'win32' && 'a Unix shell and stty' }, async (t) => {
  const old = path.join(__dirname, 'fixtures', 'seed-sidecar.js');
  const sc = new Sidecar({ path: process.execPath, args: [old, BIN, 'prehello'] });
  t.after(() => sc.close());
  const term = await sc.open('/bin/sh', CAT, { encoding: null });
  // Larger than a piece, not than the sidecar holds: unpaced it goes through.
  const want = pattern(4 << 20);
  const got = [];
  let n = 0;
  const done = new Promise((resolve) => {
    term.onData((d) => {
      got.push(d);
      n += d.length;
      if (n >= want.length) resolve();
    });
  });
  await waitOutput(term, 'ready');
  const start = Date.now();
  term.write(want);
  await within(done, 'the echo of the paste');
  t.diagnostic(`${want.length} bytes echoed in ${Date.now() - start} ms`);
  assert.ok(Buffer.concat(got).subarray(-want.length).equals(want), 'the echo is the paste');
  assert.strictEqual(sc.remote, null, 'no HELLO answer');
  assert.ok(term._gen.paceAsked, 'the paste asked for the handshake');
  assert.strictEqual(term._gen.out._pings, 0, 'and sent no PING');
});

test('the pace of INPUT: a PING behind each full piece, the next piece after its PONG, a CREDIT meanwhile, keystrokes never PINGed', { skip: process.platform === 'win32' && 'a Unix shell' }, async (t) => {
  // cat copies the frames back, so what went into the pipe, in order, is seen.
  const child = childProcess.spawn('cat', [], { stdio: ['pipe', 'pipe', 'ignore'] });
  child.stdin.on('error', () => {});
  t.after(() => child.kill('SIGKILL'));
  const frames = frameReader(child);
  const w = new FrameWriter(child.stdin, { pace: () => true });
  const id = Buffer.from('t1');
  const until = (n, what) =>
    within(
      (async () => {
        while (frames.length < n) await new Promise((r) => setImmediate(r));
      })(),
      what,
    );
  // 2000 keystrokes: 18 KiB, no piece full, no PING.
  for (let i = 0; i < 2000; i++) w.write(dataFrame(T.INPUT, id, Buffer.from('k')));
  await until(2000, 'the keystrokes');
  // A paste of 32 frames of 64 KiB with a RESIZE in the middle.
  const piece = Buffer.alloc(64 << 10, 0x61);
  for (let i = 0; i < 32; i++) {
    w.write(dataFrame(T.INPUT, id, piece));
    if (i === 20) w.write(controlFrame(T.RESIZE, { terminalId: 't1', cols: 90, rows: 30 }));
  }
  const kinds = () => frames.slice(2000).map((f) => (f.type === T.INPUT ? 'i' : f.type === T.PING ? 'P' : f.type === T.CREDIT ? 'C' : 'R'));
  // The first piece: what the keystrokes left of 512 KiB, then its PING.
  await until(2000 + 8, 'the first piece and its PING');
  const firstPing = frames.findIndex((f) => f.type === T.PING);
  assert.ok(firstPing > 2000, 'no PING among the keystrokes');
  const inFirst = firstPing - 2000;
  assert.ok(inFirst >= 7 && inFirst <= 8, `${inFirst} frames in the first piece`);
  // Nothing more goes until the PONG, but a CREDIT does.
  w.write(controlFrame(T.CREDIT, { terminalId: 't1', bytes: 4096 }));
  await until(firstPing + 2, 'the CREDIT behind the PING');
  assert.strictEqual(frames[firstPing + 1].type, T.CREDIT);
  assert.strictEqual(frames.length, firstPing + 2, 'nothing but the CREDIT passed the PING');
  // PONGs (as the sidecar would echo the PINGs) let each piece go: each
  // PING answered once it has come through cat (a loaded machine brings
  // a piece in several reads, and a PING answered twice opens nothing).
  const total = 2000 + 32 + 1 + 1 + 4;
  let answered = 0;
  await within(
    (async () => {
      while (frames.length < total) {
        const pings = frames.filter((f) => f.type === T.PING);
        if (pings.length > answered) {
          answered = pings.length;
          w.ponged(pings[pings.length - 1].body);
        }
        await new Promise((r) => setImmediate(r));
      }
    })(),
    'every frame',
  );
  const k = kinds();
  // Every input and the RESIZE in order, a PING after each full piece only.
  assert.deepStrictEqual(
    k.filter((x) => x === 'i' || x === 'R').join(''),
    'i'.repeat(21) + 'R' + 'i'.repeat(11),
  );
  const pings = k.filter((x) => x === 'P').length;
  assert.strictEqual(pings, 4, `PINGs: ${k.join('')}`);
  for (let i = 0, run = 0; i < k.length; i++) {
    if (k[i] === 'i') run++;
    if (k[i] === 'P') {
      assert.ok(run <= 8, `a piece of ${run} frames`);
      run = 0;
    }
  }
});

test("a terminal's end drops its input still waiting in the package: another terminal's keystrokes do not wait for it to be paced out", { skip: process.platform === 'win32' && 'a Unix shell and stty' }, async (t) => {
  const lines = [];
  const sc = pasteSidecar(t, { logger: (l) => lines.push(l) });
  const other = await sc.open('/bin/sh', ['-c', 'stty -echo; echo ready; exec cat'], { encoding: 'utf8' });
  await waitOutput(other, 'ready');
  const term = await sc.open('/bin/sh', ['-c', 'stty raw -echo; echo ready; exec sleep 100000'], { encoding: null });
  const exited = new Promise((resolve) => term.onExit(resolve));
  await waitOutput(term, 'ready');
  term.write(pattern(64 << 20));
  const out = term._gen.out;
  await waitUntil(() => lines.some((l) => l.includes('holding back further frames')) && out._waitingBytes > 0, 'the sidecar to hold the paste back');
  let waitingAtExit = -1;
  term.onExit(() => {
    waitingAtExit = out._waitingBytes;
  });
  process.kill(term.pid, 'SIGKILL');
  await within(exited, 'the exit of the terminal');
  assert.strictEqual(waitingAtExit, 0, "the ended terminal's input was dropped at its EXIT");
  const start = Date.now();
  other.write('after\n');
  await waitOutput(other, 'after');
  t.diagnostic(`a keystroke after the end echoed in ${Date.now() - start} ms`);
  sc.done = true;
});
