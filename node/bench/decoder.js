'use strict';
// How long the frame parser holds the event loop for one large frame that
// arrives in 64 KiB chunks, as a pipe delivers it: the slowest chunk and the
// total. A remote peer chooses the frame sizes, so this must stay linear.
//   node bench/decoder.js [MiB] [path/to/frames.js]
const path = require('path');
const mib = Number(process.argv[2] || 8);
const framesPath = path.resolve(process.argv[3] || path.join(__dirname, '..', 'lib', 'frames.js'));
const { FrameParser } = require(framesPath);

function run(type) {
  const size = mib << 20;
  const frame = Buffer.alloc(4 + size);
  frame.writeUInt32LE(size, 0);
  frame[4] = type;
  let frames = 0;
  const p = new FrameParser(() => frames++, () => {});
  let worst = 0;
  const t0 = process.hrtime.bigint();
  for (let off = 0; off < frame.length; off += 64 << 10) {
    const c0 = process.hrtime.bigint();
    p.push(frame.subarray(off, Math.min(off + (64 << 10), frame.length)));
    worst = Math.max(worst, Number(process.hrtime.bigint() - c0) / 1e6);
  }
  const total = Number(process.hrtime.bigint() - t0) / 1e6;
  if (frames !== 1) throw new Error(`parsed ${frames} frames, want 1`);
  return { total, worst };
}

for (const [name, type] of [['control frame (0x84)', 0x84], ['unknown type (0x99)', 0x99]]) {
  const r = run(type);
  console.log(`${mib} MiB ${name} in 64 KiB chunks: ${r.total.toFixed(1)} ms in all, slowest chunk ${r.worst.toFixed(2)} ms (${framesPath})`);
}
