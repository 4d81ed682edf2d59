'use strict';
// The frame parser against every way a stream can be cut into chunks.
const test = require('node:test');
const assert = require('node:assert');
const { T, controlFrame, dataFrame, FrameParser } = require('../lib/frames');

function outputFrame(id, data) {
  return dataFrame(T.OUTPUT, Buffer.from(id), Buffer.from(data));
}

test('frames cut at every byte boundary parse the same', () => {
  const stream = Buffer.concat([
    controlFrame(T.OPENED, { terminalId: 'a', pid: 1 }),
    outputFrame('a', 'hello '),
    outputFrame('bé', 'x'.repeat(3000)),
    outputFrame('a', ''),
    controlFrame(T.EXIT, { terminalId: 'a', exitCode: 0 }),
    outputFrame('a', 'world'),
  ]);
  const parse = (chunks) => {
    const got = [];
    const p = new FrameParser(
      (type, body) => got.push([type, body.toString()]),
      (id, data) => {
        const last = got[got.length - 1];
        if (last && last[0] === 'out' && last[1] === id) last[2] += data.toString();
        else got.push(['out', id, data.toString()]);
      },
    );
    for (const c of chunks) p.push(c);
    return got;
  };
  const whole = parse([stream]);
  assert.deepStrictEqual(whole, [
    [T.OPENED, '{"terminalId":"a","pid":1}'],
    ['out', 'a', 'hello '],
    ['out', 'bé', 'x'.repeat(3000)],
    ['out', 'a', ''],
    [T.EXIT, '{"terminalId":"a","exitCode":0}'],
    ['out', 'a', 'world'],
  ]);
  for (let cut = 1; cut < stream.length; cut++) {
    assert.deepStrictEqual(parse([stream.subarray(0, cut), stream.subarray(cut)]), whole, `cut at ${cut}`);
  }
  // Byte by byte, an OUTPUT payload arrives in many pieces; joined per
  // run of the same terminal (and without the empty one) it is the same.
  const norm = (frames) => {
    const out = [];
    for (const f of frames) {
      if (f[0] === 'out' && f[2] === '') continue;
      const last = out[out.length - 1];
      if (f[0] === 'out' && last && last[0] === 'out' && last[1] === f[1]) last[2] += f[2];
      else out.push([...f]);
    }
    return out;
  };
  const bytes = [];
  for (let i = 0; i < stream.length; i++) bytes.push(stream.subarray(i, i + 1));
  assert.deepStrictEqual(norm(parse(bytes)), norm(whole));
});

test('a corrupt length throws', () => {
  const p = new FrameParser(() => {}, () => {});
  const bad = Buffer.alloc(5);
  assert.throws(() => p.push(bad), /corrupt frame stream/);
});

test('random cuts of a mixed stream parse the same as the whole', () => {
  const parts = [];
  for (let i = 0; i < 40; i++) {
    if (i % 3 === 0) parts.push(controlFrame(T.EXIT, { terminalId: `t${i}`, message: 'y'.repeat(i * 997) }));
    else parts.push(outputFrame(`t${i}`, String(i).repeat(i * 311)));
  }
  parts.push(Buffer.from([9, 0, 0, 0, 0x99, 1, 2, 3, 4, 5, 6, 7, 8])); // an unknown type
  const stream = Buffer.concat(parts);
  const parse = (chunks) => {
    const frames = [];
    const out = new Map();
    const p = new FrameParser(
      (type, body) => frames.push([type, body.toString('hex')]),
      (id, data) => out.set(id, (out.get(id) || '') + data.toString()),
    );
    for (const c of chunks) p.push(c);
    return { frames, out: [...out] };
  };
  const whole = parse([stream]);
  let seed = 7;
  const rnd = (n) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  // 12 rounds (half of them 1 to 9 byte cuts); 50 under make soak.
  const rounds = process.env.PTYPLEX_SOAK === '1' ? 50 : 12;
  for (let round = 0; round < rounds; round++) {
    const chunks = [];
    for (let off = 0; off < stream.length; ) {
      const n = 1 + rnd(round % 2 ? 9 : 5000);
      chunks.push(stream.subarray(off, off + n));
      off += n;
    }
    assert.deepStrictEqual(parse(chunks), whole, `round ${round}`);
  }
});

// A large frame in many chunks is joined once, not once per chunk: the
// work per chunk does not grow with what came before (a remote peer picks
// the frame sizes). bench/decoder.js shows the time this saves.
test('an incomplete frame is joined once, when it completes', () => {
  const size = 8 << 20;
  const frame = Buffer.alloc(4 + size);
  frame.writeUInt32LE(size, 0);
  frame[4] = T.ERROR;
  let got = null;
  const p = new FrameParser((type, body) => (got = [type, body.length]), () => {});
  const concat = Buffer.concat;
  let joins = 0;
  let joined = 0;
  Buffer.concat = (list, len) => {
    joins++;
    joined += len === undefined ? list.reduce((a, b) => a + b.length, 0) : len;
    return concat(list, len);
  };
  try {
    for (let off = 0; off < frame.length; off += 64 << 10) p.push(frame.subarray(off, off + (64 << 10)));
  } finally {
    Buffer.concat = concat;
  }
  assert.deepStrictEqual(got, [T.ERROR, size - 1]);
  assert.strictEqual(joins, 1);
  assert.strictEqual(joined, frame.length);
});

test('an oversized length throws at once, before its body is buffered', () => {
  const p = new FrameParser(() => {}, () => {});
  const hdr = Buffer.alloc(5);
  hdr.writeUInt32LE((16 << 20) + 1, 0);
  hdr[4] = T.OUTPUT;
  p.push(hdr.subarray(0, 3));
  assert.throws(() => p.push(hdr.subarray(3)), /frame length 16777217/);
});

test('onOutputStart sees a straddling OUTPUT frame whole, before any of its payload', () => {
  const frame = outputFrame('big', 'z'.repeat(100000));
  const events = [];
  const p = new FrameParser(
    () => {},
    (id, data) => events.push(['piece', id, data.length]),
    (id, n) => events.push(['start', id, n]),
  );
  for (let i = 0; i < 20; i++) p.push(frame.subarray(i, i + 1)); // the header and id a byte at a time
  p.push(frame.subarray(20));
  assert.deepStrictEqual(events[0], ['start', 'big', 100000]);
  assert.strictEqual(events.filter((e) => e[0] === 'start').length, 1);
  assert.strictEqual(events.slice(1).reduce((n, e) => n + e[2], 0), 100000);
  // A throwing hook refuses the frame before any of it is handed on.
  const q = new FrameParser(() => {}, () => assert.fail('payload handed on'), () => {
    throw new Error('too big');
  });
  assert.throws(() => q.push(frame.subarray(0, 12)), /too big/);
});
