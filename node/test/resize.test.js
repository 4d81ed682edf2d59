'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { newSidecar, run, waitOutput, within } = require('./helpers');

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

// node-pty's third argument: the size in pixels, read by programs with
// TIOCGWINSZ (python3 prints rows, cols, xpixel, ypixel).
test('resize with pixelSize sets ws_xpixel and ws_ypixel; without it they are 0', { skip: process.platform === 'win32' && 'no winsize' }, async (t) => {
  const sc = newSidecar(t);
  const script = 'import fcntl, termios, struct, sys\nfor _ in range(2):\n    sys.stdin.readline()\n    print(struct.unpack("HHHH", fcntl.ioctl(0, termios.TIOCGWINSZ, b"\\0" * 8)), flush=True)';
  const term = sc.spawn('python3', ['-c', script]);
  const done = run(term);
  term.resize(100, 30, { width: 1000.7, height: 600 });
  term.write('\r');
  await waitOutput(term, '(30, 100, 1000, 600)');
  term.resize(100, 30);
  term.write('\r');
  const r = await done;
  assert.match(r.output, /\(30, 100, 1000, 600\)\r\n.*\(30, 100, 0, 0\)\r\n$/s);
});

// As node-pty's ioctl on the closed descriptor: resize throws once the
// terminal has exited, in an onExit listener and later, and the size stays.
// write() and kill() stay quiet.
test('resize after the exit throws and keeps the size', async (t) => {
  const sc = newSidecar(t);
  const want = process.platform === 'win32' ? /Cannot resize a pty that has already exited/ : /^Error: ioctl\(2\) failed, EBADF$/;
  for (const file of ['true', '/nonexistent/program']) {
    const term = sc.spawn(file, [], { cols: 100, rows: 30 });
    term.on('error', () => {}); // the one that cannot start says so
    const inListener = await within(
      new Promise((resolve) =>
        term.onExit(() => {
          try {
            term.resize(120, 40);
            resolve(null);
          } catch (err) {
            resolve(err);
          }
        }),
      ),
      `exit of ${file}`,
    );
    assert.match(String(inListener), want, `${file}: in onExit`);
    assert.throws(() => term.resize(50, 20), want, `${file}: after onExit`);
    assert.deepStrictEqual([term.cols, term.rows], [100, 30], file);
    term.write('ignored');
    term.kill();
    term.kill('SIGTERM');
  }
});
