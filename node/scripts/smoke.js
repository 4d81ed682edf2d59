'use strict';
// Smoke test of an installed ptyplex: run from a scratch project that
// installed the packed tarballs. It must find the sidecar in the platform
// package, on its own.
const assert = require('assert');
const path = require('path');
const pty = require('ptyplex');

(async () => {
  const bin = pty.resolveSidecar();
  assert.ok(bin.includes(path.join('node_modules', '@ptyplex', `sidecar-${process.platform}-${process.arch}`)), bin);
  const esm = await import('ptyplex');
  assert.strictEqual(esm.spawn, pty.spawn);
  const win = process.platform === 'win32';
  // On Windows (make test-windows runs this under wine node.exe) cmd.exe
  // on ConPTY, whose output comes with the console's VT sequences.
  const term = win
    ? pty.spawn('cmd.exe', ['/c', 'echo smoke %TERM%& exit 5'], { name: 'xterm-256color', cols: 90, rows: 20, useConpty: true })
    : pty.spawn('/bin/sh', ['-c', 'echo "smoke $TERM $(stty size)"; exit 5'], { name: 'xterm-256color', cols: 90, rows: 20 });
  let out = '';
  term.onData((d) => (out += d));
  const exit = await new Promise((r) => term.onExit(r));
  if (win) assert.match(out, /smoke xterm-256color\b/);
  else assert.strictEqual(out, 'smoke xterm-256color 20 90\r\n');
  assert.deepStrictEqual(exit, { exitCode: 5, signal: 0 });
  // The package and its sidecar name the same build.
  const line = require('child_process').execFileSync(bin, ['--version']).toString();
  assert.ok(pty.build.version !== 'dev' && line.startsWith(`ptyplex-sidecar ${pty.build.version} (commit ${pty.build.commit},`), `${JSON.stringify(pty.build)} vs ${line}`);
  if (process.env.PTYPLEX_EXPECT_VERSION) assert.strictEqual(`${pty.build.version} ${pty.build.commit}`, process.env.PTYPLEX_EXPECT_VERSION);
  console.log(`smoke ok: ${bin}, ${line.trim()}`);
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
