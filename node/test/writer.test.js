'use strict';
// FrameWriter: frames written straight to the sidecar's stdin descriptor,
// so that a pid read can push them on with the event loop blocked.

const test = require('node:test');
const assert = require('node:assert');
const childProcess = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { once } = require('events');
const { FrameWriter } = require('../lib/writer');
const { waitUntil } = require('./helpers');

test('frames still waiting when the reader dies are dropped, never written to a file that got its descriptor number', { skip: process.platform === 'win32' && 'no descriptor on Windows' }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-writer-'));
  const files = [];
  t.after(() => {
    for (const f of files) fs.closeSync(f);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  // A reader that never reads: what the pipe cannot hold waits in the
  // writer. A background job keeps the pipe open (on its descriptor 3)
  // past the child's exit, so the writer goes on trying (no EPIPE) after
  // node closed its end.
  const child = childProcess.spawn('/bin/sh', ['-c', 'exec 3<&0; sleep 30 & echo $!; exec sleep 30'], { stdio: ['pipe', 'pipe', 'ignore'] });
  child.stdin.on('error', () => {});
  const [line] = await once(child.stdout, 'data');
  const job = Number(String(line).trim());
  t.after(() => process.kill(job, 'SIGKILL'));
  const w = new FrameWriter(child.stdin);
  assert.ok(w.direct, 'the writer writes to the descriptor');
  const fd = child.stdin._handle.fd;
  w.write(Buffer.alloc(4 << 20, 0x61));
  assert.ok(w.pending > 0, 'more than the pipe holds waits');
  child.kill('SIGKILL');
  await once(child, 'exit');
  // Node closed the pipe with the child's exit; files opened now take the
  // lowest free numbers, the pipe's among them.
  for (let i = 0; i < 64 && !files.includes(fd); i++) files.push(fs.openSync(path.join(dir, `f${i}`), 'w+'));
  assert.ok(files.includes(fd), `a file got descriptor ${fd}`);
  w.write(Buffer.from('after the exit'));
  w.flushNow();
  await waitUntil(() => w.pending === 0 && !w._timer, 'the writer to let go of what waited');
  for (const f of files) assert.strictEqual(fs.fstatSync(f).size, 0, `file on descriptor ${f} was written to`);
});
