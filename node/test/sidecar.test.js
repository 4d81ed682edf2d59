'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { newSidecar, run, waitOutput, waitUntil, alive, within, BIN } = require('./helpers');
const { Sidecar, resolveSidecar } = require('..');

test('the sidecar killed under live terminals: they exit with exitCode null, pending opens reject, the next open restarts it', async (t) => {
  const sc = newSidecar(t);
  const deaths = [];
  sc.onDeath((d) => deaths.push(d));
  const terms = [0, 1, 2].map((i) => sc.spawn('/bin/sh', ['-c', `echo "up ${i}"; exec sleep 1000`]));
  const done = terms.map(run);
  await Promise.all(terms.map((term, i) => waitOutput(term, `up ${i}`)));
  const pids = terms.map((term) => term.pid);
  const first = sc.pid;
  // Stop the sidecar so that an OPEN sent now stays pending, then kill it.
  process.kill(first, 'SIGSTOP');
  const pending = sc.open('sleep', ['1000']);
  process.kill(first, 'SIGKILL');
  await assert.rejects(within(pending, 'the pending open to fail'), /ptyplex-sidecar killed by SIGKILL before sleep started/);
  for (const r of await Promise.all(done)) assert.strictEqual(r.exitCode, null);
  assert.deepStrictEqual(deaths, [{ code: null, signal: 'SIGKILL', error: null }]);
  assert.ok(sc.lines.some((l) => l.includes('terminal(s) lost')), sc.lines.join('\n'));
  // The watchdog takes the children down with the sidecar.
  await waitUntil(() => pids.every((p) => !alive(p)), 'the terminals\' processes to be gone');

  const r = await run(sc.spawn('/bin/sh', ['-c', 'echo again']));
  assert.strictEqual(r.output, 'again\r\n');
  assert.ok(sc.pid === 0 || sc.pid !== first);
});

test('open timeout: a sidecar that never answers', async (t) => {
  // sleep reads nothing and writes nothing: a hung sidecar.
  const sc = newSidecar(t, { path: '/bin/sleep', args: ['1000'], openTimeout: 200 });
  const term = sc.spawn('sh');
  const r = run(term);
  await assert.rejects(term.ready, /did not open sh within 200 ms/);
  assert.strictEqual((await r).exitCode, 1);
  sc._gen.child.kill();
});

test('close ends every terminal and the sidecar', async (t) => {
  const sc = new Sidecar({ path: BIN });
  const term = sc.spawn('sleep', ['1000']);
  const done = run(term);
  await term.ready;
  const pid = sc.pid;
  await within(sc.close(), 'close');
  const r = await done;
  assert.strictEqual(r.signal, 9);
  assert.ok(!alive(pid));
});

test('binary resolution: env var, platform package, PATH, and an error naming all three', () => {
  assert.strictEqual(resolveSidecar({ PTYPLEX_SIDECAR_PATH: BIN, PATH: '' }), BIN);
  const path = require('path');
  assert.strictEqual(resolveSidecar({ PATH: `/nonexistent${path.delimiter}${path.dirname(BIN)}` }), BIN);
  assert.throws(
    () => resolveSidecar({ PTYPLEX_SIDECAR_PATH: '/nonexistent/sidecar', PATH: '/nonexistent' }),
    (err) =>
      err.code === 'PTYPLEX_SIDECAR_NOT_FOUND' &&
      /PTYPLEX_SIDECAR_PATH=\/nonexistent\/sidecar is not an executable file/.test(err.message) &&
      /@ptyplex\/sidecar-linux-x64 is not installed/.test(err.message.replace(process.arch, 'x64')) &&
      /no ptyplex-sidecar on PATH/.test(err.message),
  );
  // A Sidecar that cannot find its binary fails the spawn, not later.
  const sc = new Sidecar();
  const saved = { ...process.env };
  process.env.PTYPLEX_SIDECAR_PATH = '/nonexistent/sidecar';
  process.env.PATH = '/nonexistent';
  try {
    assert.throws(() => sc.spawn('sh'), /cannot find ptyplex-sidecar/);
  } finally {
    process.env.PATH = saved.PATH;
    process.env.PTYPLEX_SIDECAR_PATH = saved.PTYPLEX_SIDECAR_PATH;
    if (saved.PTYPLEX_SIDECAR_PATH === undefined) delete process.env.PTYPLEX_SIDECAR_PATH;
  }
});

test("an Electron app's asar archive: the platform package's binary is run from app.asar.unpacked", (t) => {
  // An app packed by electron-builder: the package and the platform
  // package inside resources/app.asar (a plain directory here, as
  // Electron's fs shows the archive), the binary listed in asarUnpack and
  // so in resources/app.asar.unpacked, from where alone it can be started.
  const fs = require('fs');
  const os = require('os');
  const path = require('path');
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-asar-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const mods = path.join(root, 'resources', 'app.asar', 'node_modules');
  const pkg = path.join(mods, 'ptyplex');
  fs.cpSync(path.join(__dirname, '..', 'lib'), path.join(pkg, 'lib'), { recursive: true });
  fs.copyFileSync(path.join(__dirname, '..', 'package.json'), path.join(pkg, 'package.json'));
  const platform = `sidecar-${process.platform}-${process.arch}`;
  const packed = path.join(mods, '@ptyplex', platform);
  fs.mkdirSync(path.join(packed, 'bin'), { recursive: true });
  fs.writeFileSync(path.join(packed, 'package.json'), JSON.stringify({ name: `@ptyplex/${platform}`, version: '0.0.0' }));
  const unpackedBin = path.join(root, 'resources', 'app.asar.unpacked', 'node_modules', '@ptyplex', platform, 'bin');
  fs.mkdirSync(unpackedBin, { recursive: true });
  const binary = path.join(unpackedBin, path.basename(BIN));
  fs.copyFileSync(BIN, binary);
  fs.chmodSync(binary, 0o755);
  const { resolveSidecar: resolveInApp } = require(pkg);
  assert.strictEqual(resolveInApp({ PATH: '' }), binary);
});

test('creditWindow is checked when the Sidecar is made, not by the sidecar at each open', () => {
  for (const bad of [-1, 1000.5, '4096', NaN, Infinity]) {
    assert.throws(() => new Sidecar({ creditWindow: bad }), /creditWindow must be a whole number of bytes/, String(bad));
  }
  assert.strictEqual(new Sidecar({ creditWindow: 4096 }).creditWindow, 4096);
  assert.strictEqual(new Sidecar({}).creditWindow, 1 << 20);
});

test('openTimeout and helloTimeout: Infinity waits for ever (node would fire its timer after 1 ms); what is no number of milliseconds throws', async (t) => {
  const sc = newSidecar(t, { openTimeout: Infinity, helloTimeout: Infinity, hello: true });
  const r = await run(sc.spawn('/bin/sh', ['-c', 'echo opened']));
  assert.deepStrictEqual([r.output, r.exitCode], ['opened\r\n', 0]);
  for (const [name, bad] of [['openTimeout', -5], ['openTimeout', NaN], ['helloTimeout', '5000'], ['helloTimeout', NaN]]) {
    assert.throws(() => new Sidecar({ [name]: bad }), new RegExp(`${name} must be a number of milliseconds`), `${name} ${bad}`);
  }
});

test('an idle sidecar does not keep the script alive', async () => {
  const { execFile } = require('child_process');
  const script = `const {Sidecar}=require(${JSON.stringify(require.resolve('..'))});
    const sc=new Sidecar({path:${JSON.stringify(BIN)}});
    const t=sc.spawn('/bin/sh',['-c','echo hi']);
    t.onData(d=>process.stdout.write(d)); t.onExit(e=>process.stdout.write('exit '+e.exitCode));`;
  const out = await within(
    new Promise((res, rej) => execFile(process.execPath, ['-e', script], (err, stdout) => (err ? rej(err) : res(stdout)))),
    'the script to end',
  );
  assert.strictEqual(out, 'hi\r\nexit 0');
});

test('a terminal that opens after its timeout is closed again', async (t) => {
  const sc = newSidecar(t, { openTimeout: 100 });
  await run(sc.spawn('true')); // the sidecar runs
  process.kill(sc.pid, 'SIGSTOP');
  const late = sc.spawn('sleep', ['1000']);
  await assert.rejects(within(late.ready, 'the open timeout'), /did not open sleep within 100 ms/);
  const gen = sc._gen;
  assert.ok(gen.abandoned.has(late._id));
  process.kill(sc.pid, 'SIGCONT');
  // OPENED arrives late, is answered with CLOSE, and the EXIT clears the id.
  await waitUntil(() => !gen.abandoned.has(late._id), 'the late terminal to be closed');
  assert.strictEqual(late.pid, 0);
});
