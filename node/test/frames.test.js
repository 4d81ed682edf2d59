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
