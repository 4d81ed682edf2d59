'use strict';
// install: the sidecar put on the other machine on first connect, by
// the ptyplex binary beside the sidecar (bin/ptyplex, built with it).
const test = require('node:test');
const assert = require('node:assert');
const childProcess = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { Sidecar } = require('..');
const { BIN, within, run, waitOutput, waitUntil, cleanup } = require('./helpers');
const { startSshd } = require('./sshd');

const PTYPLEX = path.join(path.dirname(BIN), 'ptyplex');

function tmp(t, prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  cleanup(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function newHost(t, options) {
  const lines = [];
  const sc = new Sidecar({ path: BIN, logger: (l) => lines.push(l), helloTimeout: 60000, openTimeout: 60000, ...options });
  sc.lines = lines;
  cleanup(t, () => sc.close());
  return sc;
}

test('install over a real ssh: the first connection installs, the next ones use what it installed', async (t) => {
  if (!fs.existsSync(PTYPLEX)) return t.skip(`no ${PTYPLEX}: make build`);
  const srv = await startSshd(t);
  if (!srv) return t.skip('no /usr/sbin/sshd: install openssh-server');
  // Never the real ~/.ptyplex: sshd logs in as this user.
  const dir = path.join(tmp(t, 'ptyplex-install-'), 'root');
  const sc = newHost(t, { transport: srv.ssh, install: { dir }, hello: true });
  const r = await run(sc.spawn('sh', ['-c', 'echo installed and running']));
  assert.match(r.output, /installed and running/, sc.lines.join('\n'));
  const installed = sc.lines.find((l) => l.startsWith('installed: '));
  assert.ok(installed, sc.lines.join('\n'));
  const sidecar = installed.slice('installed: '.length);
  assert.ok(sidecar.startsWith(dir + path.sep) && sidecar.endsWith('/ptyplex-sidecar'), sidecar);
  assert.ok(fs.existsSync(sidecar) && fs.existsSync(path.join(path.dirname(sidecar), 'ptyplex')));
  await sc.close();
  // A new connection of the same host: no second install.
  const r2 = await run(sc.spawn('sh', ['-c', 'echo again']));
  assert.match(r2.output, /again/);
  assert.strictEqual(sc.lines.filter((l) => l.startsWith('installed: ')).length, 1, sc.lines.join('\n'));
});

test('install with persist and reconnect, sh -c as the transport: resumed on the installed sidecar without installing again', async (t) => {
  if (!fs.existsSync(PTYPLEX)) return t.skip(`no ${PTYPLEX}: make build`);
  const root = tmp(t, 'ptyplex-install-');
  const runtimeDir = path.join(root, 'run');
  fs.mkdirSync(runtimeDir, { mode: 0o700 });
  const name = `i${process.pid}x${Math.random().toString(36).slice(2, 8)}`;
  const env = { ...process.env, PTYPLEX_RUNTIME_DIR: runtimeDir };
  cleanup(t, () => childProcess.spawnSync(BIN, ['--persist', name, '--stop'], { env, stdio: 'ignore', timeout: 20000 }));
  const sc = newHost(t, { transport: ['sh', '-c'], env, persist: name, install: { dir: path.join(root, 'inst') }, reconnect: { initialDelay: 10 } });
  const term = sc.spawn('/bin/sh', ['-c', 'stty -echo; echo ready; exec cat']);
  await waitOutput(term, 'ready\r\n');
  assert.ok(sc.remote.features.includes('persist'));
  const reconnected = within(new Promise((resolve) => sc.once('reconnected', resolve)), 'reconnected');
  process.kill(sc.pid, 'SIGKILL');
  await reconnected;
  term.write('still here\r');
  await waitOutput(term, 'still here\r\n');
  assert.strictEqual(sc.lines.filter((l) => l.startsWith('installed: ')).length, 1, sc.lines.join('\n'));
});

test('install: checked options; a ptyplex that cannot be found, or an install that fails, says why', async (t) => {
  assert.throws(() => new Sidecar({ install: true }), /install needs the transport option/);
  assert.throws(() => new Sidecar({ transport: ['sh', '-c'], install: { form: 'x' } }), /install.form is not an option/);
  const empty = tmp(t, 'ptyplex-install-');
  const sc = newHost(t, { transport: ['sh', '-c'], install: true, path: path.join(empty, 'ptyplex-sidecar'), env: { PATH: empty } });
  assert.throws(() => sc.spawn('sh', []), /install needs the ptyplex binary.*npm platform packages ship only ptyplex-sidecar: pass install.ptyplex/);
  // An install that fails (no binaries for that platform: a fake uname) ends the handshake; the logger has the reason.
  const fake = tmp(t, 'ptyplex-install-');
  fs.writeFileSync(path.join(fake, 'uname'), '#!/bin/sh\necho Plan9 mips\n', { mode: 0o755 });
  const bad = newHost(t, { transport: ['env', `PATH=${fake}:${process.env.PATH}`, 'sh', '-c'], install: { ptyplex: PTYPLEX, dir: path.join(fake, 'inst') }, helloTimeout: 20000 });
  await assert.rejects(within(bad.handshake(), 'the handshake'), /ended before answering HELLO/);
  await waitUntil(() => bad.lines.some((l) => /^transport env: .*no ptyplex build for Plan9 mips/.test(l)), `the install's reason in the log: ${bad.lines.join('\n')}`);
});

test('install: the open timeout starts once the install finished, however long the install took', async (t) => {
  if (!fs.existsSync(PTYPLEX)) return t.skip(`no ${PTYPLEX}: make build`);
  // A uname that holds the install's first probe until the test lets it
  // go, one and a half open timeouts later. The open timeout is long
  // enough for an open on a loaded machine (300 ms was not, once).
  const fake = tmp(t, 'ptyplex-install-');
  const fifo = path.join(fake, 'go');
  childProcess.execFileSync('mkfifo', [fifo]);
  const real = childProcess.execSync('command -v uname', { shell: '/bin/sh' }).toString().trim();
  fs.writeFileSync(
    path.join(fake, 'uname'),
    `#!/bin/sh\nif [ ! -e ${fake}/done ]; then : > ${fake}/started; read x < ${fifo}; : > ${fake}/done; fi\nexec ${real} "$@"\n`,
    { mode: 0o755 },
  );
  const openTimeout = 2000;
  const sc = newHost(t, { transport: ['env', `PATH=${fake}:${process.env.PATH}`, 'sh', '-c'], install: { ptyplex: PTYPLEX, dir: path.join(fake, 'inst') }, openTimeout });
  const term = sc.spawn('sh', ['-c', 'echo opened after a slow install']);
  let failed = null;
  term.ready.catch((err) => (failed = err));
  await waitUntil(() => fs.existsSync(path.join(fake, 'started')), 'the install to probe uname');
  await new Promise((r) => setTimeout(r, 1.5 * openTimeout));
  fs.writeFileSync(fifo, 'go\n');
  const r = await run(term);
  assert.strictEqual(failed, null, `the open failed: ${failed}`);
  assert.match(r.output, /opened after a slow install/, sc.lines.join('\n'));
});
