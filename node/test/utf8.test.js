'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { newSidecar, run, waitOutput, within } = require('./helpers');

// The child prints part of a character and then blocks reading input, so
// the sidecar has to send the part in an OUTPUT frame of its own.
const SPLIT = `stty raw -echo; printf 'a\\303'; read x; printf '\\251b\\360\\237'; read x; printf '\\230\\200c'; read x`;

test('UTF-8 split across frames decodes whole characters', async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn('/bin/sh', ['-c', SPLIT]);
  const chunks = [];
  term.onData((d) => chunks.push(d));
  const done = run(term);
  await waitOutput(term, 'a');
  term.write('\n');
  await waitOutput(term, 'é');
  term.write('\n');
  await waitOutput(term, '😀c');
  term.write('\n');
  const r = await done;
  assert.strictEqual(r.output, 'aéb😀c');
  assert.ok(chunks.every((c) => !c.includes('\ufffd')), JSON.stringify(chunks));
  assert.ok(chunks.length >= 3, `the output came in ${chunks.length} chunks`);
});

test('encoding null delivers the raw bytes, split where the frames split', async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn('/bin/sh', ['-c', SPLIT], { encoding: null });
  const chunks = [];
  let wake;
  term.onData((d) => {
    chunks.push(d);
    if (wake) wake();
  });
  const done = run(term);
  const next = (n) =>
    within(
      new Promise((r) => {
        wake = () => Buffer.concat(chunks).length >= n && r();
        wake();
      }),
      `${n} bytes`,
    );
  await next(2);
  assert.ok(Buffer.isBuffer(chunks[0]));
  assert.deepStrictEqual(Buffer.concat(chunks), Buffer.from([0x61, 0xc3]));
  term.write('\n');
  await next(5);
  term.write('\n');
  await next(8);
  term.write('\n');
  const r = await done;
  assert.deepStrictEqual(r.output, Buffer.from('aéb😀c'));
});

test('an incomplete character at exit is not lost', async (t) => {
  const sc = newSidecar(t);
  const r = await run(sc.spawn('/bin/sh', ['-c', `printf 'x\\303'`]));
  assert.strictEqual(r.output, 'x\ufffd');
});

test('with the default utf8 encoding, a backspace in cooked mode erases a whole character (IUTF8, as node-pty sets it)', async (t) => {
  const sc = newSidecar(t);
  const script = `stty -echo; echo ready; read x; printf '%s' "$x" | od -An -tx1`;
  for (const [encoding, want] of [[undefined, / 61\r\n/], [null, / 61 c3/]]) {
    const term = sc.spawn('/bin/sh', ['-c', script], { encoding });
    const done = run(term);
    await waitOutput(term, 'ready');
    term.write(Buffer.from('a\xc3\xa9\x7f\n', 'latin1'));
    const r = await done;
    const text = Buffer.isBuffer(r.output) ? r.output.toString('latin1') : r.output;
    assert.match(text, want, `encoding ${encoding}`);
  }
});

// node-pty's flags that the kernel's defaults lack, as stty shows them (off: -ixany), and
// what ^S then any key does.
const TERMIOS = `stty -echo; stty -a | tr ' ' '\\n' | grep -E -x -e '-?(ixany|imaxbel|brkint|hupcl)' | sort | tr '\\n' ' '; echo; echo ready; read x; echo after`;

test("node-pty's terminal attributes: ixany, imaxbel, brkint, hupcl; after ^S any key restarts output", async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn('/bin/sh', ['-c', TERMIOS]);
  const done = run(term);
  await waitOutput(term, 'ready');
  term.write('\x13go\r'); // ^S stops output; the g restarts it (IXANY), the line ends the read
  const r = await done;
  assert.strictEqual(r.output, 'brkint hupcl imaxbel ixany \r\nready\r\nafter\r\n');
});
