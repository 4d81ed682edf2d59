'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { newSidecar, run, waitOutput } = require('./helpers');

test('resize sets the size and sends SIGWINCH', async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn('/bin/sh', ['-c', `trap 'echo "winch $(stty size)"' WINCH; echo "start $(stty size)"; while :; do sleep 1; done`], {
    cols: 100,
    rows: 30,
  });
  const done = run(term);
  await waitOutput(term, 'start 30 100');
  term.resize(132, 43);
  assert.deepStrictEqual([term.cols, term.rows], [132, 43]);
  await waitOutput(term, 'winch 43 132');
  // node-pty's rule: non-positive, NaN and infinite sizes throw; the rest is taken.
  for (const [c, r] of [[0, 10], [10, -1], [NaN, 10], [Infinity, 10]]) {
    assert.throws(() => term.resize(c, r), /resizing must be done using positive cols and rows/);
  }
  term.resize(90.9, 30);
  assert.deepStrictEqual([term.cols, term.rows], [90, 30]);
  await waitOutput(term, 'winch 30 90');
  term.kill();
  await done;
});
