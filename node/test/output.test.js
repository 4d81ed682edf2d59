'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { newSidecar, run, soakSize } = require('./helpers');

const MIB = 1 << 20;

// node-pty can fire onExit before the last output (its issue #72); here
// every byte the child wrote must have arrived when onExit fires.
const EXIT_REPS = soakSize(24, 100);
test(`1 MiB then exit: all of it before onExit, ${EXIT_REPS} times`, async (t) => {
  const sc = newSidecar(t);
  const script = `head -c ${MIB} /dev/zero | tr '\\0' x`;
  const reps = EXIT_REPS;
  const parallel = 4;
  let next = 0;
  const worker = async () => {
    while (next < reps) {
      const i = next++;
      const r = await run(sc.spawn('/bin/sh', ['-c', script], { encoding: null }));
      assert.strictEqual(r.exitCode, 0, `run ${i}`);
      assert.strictEqual(r.output.length, MIB, `run ${i}: bytes before onExit`);
      assert.ok(r.output.every((b) => b === 0x78), `run ${i}: content`);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
});

test('output arrives in order', async (t) => {
  const sc = newSidecar(t);
  const r = await run(sc.spawn('seq', ['1', '200000']));
  const want = Array.from({ length: 200000 }, (_, i) => `${i + 1}\r\n`).join('');
  assert.strictEqual(r.exitCode, 0);
  assert.ok(r.output === want, `got ${r.output.length} chars, want ${want.length}`);
});
