'use strict';
// Persistent terminals: new Sidecar({ persist }), list() and attach(),
// against the real `ptyplex-sidecar --persist NAME` server.
const test = require('node:test');
const assert = require('node:assert');
const childProcess = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { BIN, within, run, waitOutput, waitUntil, alive, cleanup, soakSize } = require('./helpers');
const { Sidecar } = require('..');

// server gives a test its own persistent server: a private runtime
// directory and a name, stopped (every terminal with it) afterwards.
function server(t) {
  const runtimeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-npmpersist-'));
  const name = `n${process.pid}x${Math.random().toString(36).slice(2, 8)}`;
  const env = { PTYPLEX_RUNTIME_DIR: runtimeDir };
  const sidecar = (options = {}) => {
    const lines = [];
    const sc = new Sidecar({ path: BIN, persist: name, env, logger: (l) => lines.push(l), ...options });
    sc.lines = lines;
    cleanup(t, () => sc.close());
    return sc;
  };
  cleanup(t, () => {
    childProcess.spawnSync(BIN, ['--persist', name, '--stop'], { env: { ...process.env, ...env }, stdio: 'ignore', timeout: 20000 });
    fs.rmSync(runtimeDir, { recursive: true, force: true });
  });
  return { name, env, runtimeDir, sidecar };
}

// numbered is what the flood of terminal k writes, as the PTY delivers it
// (onlcr turns each \n into \r\n). The multibyte characters make chunk
// boundaries fall inside characters, which pty.offset must count right.
function numbered(k, lines) {
  let s = '';
  for (let i = 0; i < lines; i++) s += `t${k} ${String(i).padStart(7, '0')} \u00e9\u20ac\r\n`;
  return Buffer.from(s, 'utf8');
}

test('a host SIGKILLed mid-flood, again and again: each new one attaches from the saved offsets and the streams are byte-identical', async (t) => {
  const { name, runtimeDir } = server(t);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-npmhost-'));
  cleanup(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  const stop = path.join(dir, 'stop');
  // Each floods numbered lines until the stop file exists (looked for
  // every 1000 lines), so that every kill comes in the middle of a flood.
  const terminals = [1, 2, 3, 4].map((k) => ({
    // Two with Buffers, two decoded as UTF-8.
    encoding: k % 2 ? null : 'utf8',
    script: `exec awk 'BEGIN { for (i = 0; ; i++) { printf "t${k} %07d \\303\\251\\342\\202\\254\\n", i; ` +
      `if (i % 1000 == 999) { if ((getline l < "${stop}") >= 0) exit; close("${stop}") } } }'`,
  }));
  fs.writeFileSync(path.join(dir, 'spec.json'), JSON.stringify({ runtimeDir, terminals }));
  const sizes = () => terminals.map((_, i) => {
    try {
      return fs.statSync(path.join(dir, `${i}.out`)).size;
    } catch {
      return 0;
    }
  });
  const host = path.join(__dirname, 'fixtures', 'persist-host.js');
  // Ten hosts killed under make soak (PTYPLEX_SOAK=1); four in make test.
  const ROUNDS = soakSize(4, 10);
  const STEP = 64 << 10;
  for (let round = 0; round <= ROUNDS; round++) {
    const before = sizes();
    if (round === ROUNDS) fs.writeFileSync(stop, '');
    const child = childProcess.spawn(process.execPath, [host, BIN, name, dir, round === 0 ? 'open' : 'attach'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise((r) => child.on('exit', (code, signal) => r({ code, signal })));
    if (round === ROUNDS) {
      const e = await within(exited, `the last host to see every terminal exit; stderr: ${stderr}`);
      assert.deepStrictEqual(e, { code: 0, signal: null }, stderr);
      break;
    }
    try {
      await waitUntil(() => sizes().every((s, i) => s >= before[i] + STEP), `round ${round}'s host to receive ${STEP} more bytes of each terminal`);
    } catch (err) {
      const list = childProcess.spawnSync(BIN, ['--persist', name, '--list'], { env: { ...process.env, PTYPLEX_RUNTIME_DIR: runtimeDir }, encoding: 'utf8', timeout: 20000 });
      err.message += `; received ${sizes()} (before ${before}); host stderr: ${stderr}; the server's terminals: ${list.stdout}${list.stderr}`;
      throw err;
    }
    child.kill('SIGKILL');
    assert.deepStrictEqual(await within(exited, 'the host to die'), { code: null, signal: 'SIGKILL' }, stderr);
  }
  for (let i = 0; i < terminals.length; i++) {
    const got = fs.readFileSync(path.join(dir, `${i}.out`));
    const line = numbered(i + 1, 1).length;
    const lines = got.length / line;
    assert.ok(Number.isInteger(lines) && lines % 1000 === 0 && lines >= (ROUNDS * STEP) / line, `terminal ${i}: ${got.length} bytes, not whole thousands of lines`);
    assert.ok(got.equals(numbered(i + 1, lines)), `terminal ${i}: the bytes differ from what the program wrote`);
    assert.deepStrictEqual(JSON.parse(fs.readFileSync(path.join(dir, `${i}.exit`), 'utf8')), { exitCode: 0, signal: 0 });
  }
});

test('list shows the terminals; spawn as today; attach continues from the offset; close leaves them running', async (t) => {
  const { sidecar } = server(t);
  const sc = sidecar();
  const a = sc.spawn('/bin/sh', ['-c', 'echo one; read x; echo "got $x"; exec sleep 1000'], { cols: 100, rows: 30 });
  const b = sc.spawn('sleep', ['1000']);
  await waitOutput(a, 'one\r\n');
  await b.ready;
  const list = await within(sc.list(), 'LISTED');
  assert.deepStrictEqual(list.map((e) => [e.terminalId, e.pid, e.attached, e.exited]), [[a.terminalId, a.pid, true, false], [b.terminalId, b.pid, true, false]]);
  assert.strictEqual(list[0].cmd, '/bin/sh');
  assert.deepStrictEqual([list[0].cols, list[0].rows], [100, 30]);
  assert.strictEqual(list[0].produced, a.offset);
  const offset = a.offset;
  const detached = new Promise((r) => a.onDetach(r));
  await within(sc.close(), 'close');
  assert.match((await within(detached, 'onDetach at close')).reason, /closed/);
  assert.ok(alive(a.pid) && alive(b.pid), 'the terminals outlived their host');

  const sc2 = sidecar();
  const again = await within((async () => (await sc2.list()).find((e) => e.terminalId === a.terminalId))(), 'LISTED');
  assert.strictEqual(again.attached, false);
  const a2 = sc2.attach(a.terminalId, { offset });
  await within(a2.ready, 'ATTACHED');
  assert.strictEqual(a2.pid, a.pid);
  assert.strictEqual(a2.lost, 0);
  a2.write('hello\r');
  const got = await waitOutput(a2, 'got hello\r\n');
  assert.ok(!got.includes('one'), `the bytes before the offset came again: ${JSON.stringify(got)}`);
  // spawn goes on with ids the server has not seen.
  const c = sc2.spawn('/bin/sh', ['-c', 'echo three']);
  assert.strictEqual((await run(c)).output, 'three\r\n');
  assert.ok(![a.terminalId, b.terminalId].includes(c.terminalId), c.terminalId);
  a2.kill();
  const r = await run(a2);
  assert.strictEqual(r.signal, 1);
});

test('hello with persist: the handshake names the persist feature, and terminals work behind it', async (t) => {
  const { sidecar } = server(t);
  const sc = sidecar({ hello: true });
  const term = sc.spawn('/bin/sh', ['-c', 'echo behind the handshake']);
  const h = await within(sc.handshake(), 'HELLO');
  assert.ok(h.features.includes('persist'), JSON.stringify(h.features));
  assert.strictEqual((await run(term)).output, 'behind the handshake\r\n');
  assert.deepStrictEqual(await within(sc.list(), 'LISTED'), []);
});

test("the persistent server's terminals get node-pty's terminal attributes too", async (t) => {
  const { sidecar } = server(t);
  const r = await run(sidecar().spawn('/bin/sh', ['-c', `stty -a | tr ' ' '\\n' | grep -E -x -e '-?(ixany|imaxbel|brkint|hupcl)' | sort | tr '\\n' ' '`]));
  assert.strictEqual(r.output, 'brkint hupcl imaxbel ixany ');
});

test('attach: an unknown id and an offset past the end reject with the server\'s reason; malformed options throw', async (t) => {
  const { sidecar } = server(t);
  const sc = sidecar();
  const a = sc.spawn('/bin/sh', ['-c', 'printf 12345; exec sleep 1000']);
  await waitOutput(a, '12345');
  const unknown = sc.attach('nosuch');
  await assert.rejects(within(unknown.ready, 'the refusal'), /cannot attach terminal "nosuch": ATTACH refused: no terminal "nosuch" on this server/);
  const sc2 = sidecar();
  const past = sc2.attach(a.terminalId, { offset: 900 });
  await assert.rejects(within(past.ready, 'the refusal'), new RegExp(`ATTACH refused: offset 900 is past the 5 bytes terminal "${a.terminalId}" has produced`));
  for (const offset of [-1, 1.5, '3', NaN]) {
    assert.throws(() => sc2.attach(a.terminalId, { offset }), /offset must be a whole number of bytes/);
  }
  assert.throws(() => sc2.attach(''), /attach needs a terminal id/);
  assert.throws(() => new Sidecar({ persist: '../x' }), /persist must be a name/);
  assert.throws(() => new Sidecar({ path: BIN }).attach('t1'), /needs a persistent sidecar/);
  await assert.rejects(new Sidecar({ path: BIN }).list(), /needs a persistent sidecar/);
  // Nothing changed: the first host still holds t1, and writes to it.
  a.write('x');
  assert.deepStrictEqual((await sc.list()).map((e) => [e.terminalId, e.attached]), [[a.terminalId, true]]);
});

test('a second host takes a terminal over: the first gets onDetach, and its writes then throw', async (t) => {
  const { sidecar } = server(t);
  const sc = sidecar();
  // No echo: all the output is the program's, so once "got before" has
  // come, a.offset covers everything about it.
  const a = sc.spawn('/bin/sh', ['-c', 'stty -echo; echo ready; while read l; do echo "got $l"; done']);
  await waitOutput(a, 'ready\r\n');
  a.write('before\r');
  await waitOutput(a, 'got before\r\n');
  const detached = new Promise((r) => a.onDetach(r));
  const sc2 = sidecar();
  const b = sc2.attach(a.terminalId, { offset: a.offset });
  await within(b.ready, 'ATTACHED');
  assert.strictEqual((await within(detached, 'onDetach')).reason, 'taken over by another connection');
  assert.throws(() => a.write('x'), /cannot write to terminal "p[0-9a-z]+-1": this host no longer holds it \(taken over by another connection\)/);
  b.write('after\r');
  const got = await waitOutput(b, 'got after\r\n');
  assert.ok(!got.includes('before'), JSON.stringify(got));
  // detach() lets it go on without this host.
  const gone = new Promise((r) => b.onDetach(r));
  b.detach();
  assert.strictEqual((await within(gone, 'DETACHED')).reason, 'detached as asked');
  assert.strictEqual((await sc2.list())[0].attached, false);
});

test('ring mode: bytes that fell out of the journal are reported as lost and a SNAPSHOT repaints the screen', async (t) => {
  const { sidecar } = server(t);
  const sc = sidecar();
  const a = sc.spawn('/bin/sh', ['-c', 'i=0; while [ $i -lt 3000 ]; do echo "row $i"; i=$((i+1)); done; echo LAST; exec sleep 1000'], { journal: 4096 });
  await a.ready;
  await within(sc.close(), 'close');
  const sc2 = sidecar();
  await waitUntil(async () => {
    const e = (await sc2.list())[0];
    return e.produced > 20000 && e.start > 0;
  }, 'the journal to have let bytes go');
  const b = sc2.attach(a.terminalId, { offset: 0 });
  const got = waitOutput(b, 'LAST');
  await within(b.ready, 'ATTACHED');
  assert.ok(b.lost > 0, `lost ${b.lost}`);
  const text = await got;
  // The repaint (PROTOCOL.md, SNAPSHOT): the main screen with default
  // modes and pen first, then the screen cleared from the home position.
  const clear = text.indexOf('\x1b[H\x1b[2J');
  assert.ok(text.startsWith('\x1b[?1049l\x1b[0m') && clear > 0 && clear < 200, JSON.stringify(text.slice(0, 120)));
  assert.ok(!text.includes('row 0\r'), 'the snapshot covers only what the journal holds');
  // After LAST the program writes nothing more: the offset is the end.
  assert.strictEqual(b.offset, (await sc2.list())[0].produced);
});

// serverPid is the pid of the newest server in the log of persistent
// server name, under runtimeDir.
function serverPid(runtimeDir, name) {
  const find = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        const got = find(p);
        if (got) return got;
      } else if (e.name === `${name}.log`) return p;
    }
    return null;
  };
  const log = find(runtimeDir);
  assert.ok(log, `no ${name}.log under ${runtimeDir}`);
  const all = [...fs.readFileSync(log, 'utf8').matchAll(/serving on .* \(pid (\d+)\)/g)];
  assert.ok(all.length, `no pid in ${log}`);
  return Number(all[all.length - 1][1]);
}

test('revive(): after the server is SIGKILLed, a dead terminal runs again with its args and cwd, its old screen first', async (t) => {
  const { name, runtimeDir, sidecar } = server(t);
  const jdir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-npmrevive-'));
  cleanup(t, () => fs.rmSync(jdir, { recursive: true, force: true }));
  const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-npmrevive-cwd-')));
  cleanup(t, () => fs.rmSync(cwd, { recursive: true, force: true }));
  const args = ['--journal-dir', path.join(jdir, 'j')];
  const sc = sidecar({ args });
  const a = sc.spawn('/bin/sh', ['-c', 'echo "run in $(pwd) with [$1]"; exec cat', 'zero', 'one arg'], { cwd, cols: 90, rows: 20 });
  const want = `run in ${cwd} with [one arg]`;
  await waitOutput(a, `${want}\r\n`);
  const pid = a.pid;
  const spid = serverPid(runtimeDir, name);
  process.kill(spid, 'SIGKILL');
  await waitUntil(() => !alive(spid), 'the server SIGKILLed to be gone');

  const sc2 = sidecar({ args });
  const dead = (await sc2.list()).find((e) => e.terminalId === a.terminalId);
  assert.ok(dead && dead.dead === true && dead.exited, JSON.stringify(dead));
  const b = sc2.revive(a.terminalId);
  let out = '';
  b.onData((d) => (out += d));
  await within(b.ready, 'OPENED');
  assert.ok(b.pid > 0 && b.pid !== pid, `revived pid ${b.pid}, old ${pid}`);
  assert.deepStrictEqual([b.cols, b.rows, b.viewing, b.terminalId], [90, 20, false, a.terminalId]);
  // The old screen (a repaint: escape sequences around the old line),
  // then the program's new run.
  await waitUntil(() => out.split(want).length === 3, "the old screen, then the new run");
  assert.ok(out.endsWith(`${want}\r\n`) && out.indexOf(want) < out.lastIndexOf(want), JSON.stringify(out));
  b.write('typed\r');
  await waitOutput(b, 'typed\r\ntyped\r\n'); // the echo, and cat's
  const live = (await sc2.list()).find((e) => e.terminalId === a.terminalId);
  assert.ok(live && !live.dead && !live.exited && live.attached && live.pid === b.pid, JSON.stringify(live));

  // Refusals reject ready, with the server's reason; a bad id throws.
  await assert.rejects(within(sc2.revive('nosuch').ready, 'the refusal'), /cannot start terminal "nosuch": REVIVE refused: no dead terminal "nosuch"/);
  assert.throws(() => sc2.revive(a.terminalId), /is already open on this host/);
  assert.throws(() => sc2.revive(''), /revive needs a terminal id/);
  assert.throws(() => new Sidecar({ path: BIN }).revive('t1'), /needs a persistent sidecar/);
});

test('revive() after an attach read the dead terminal: the revived terminal reports the size the server starts it at', async (t) => {
  const { name, runtimeDir, sidecar } = server(t);
  const jdir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-npmrevive-'));
  cleanup(t, () => fs.rmSync(jdir, { recursive: true, force: true }));
  const args = ['--journal-dir', path.join(jdir, 'j')];
  const a = sidecar({ args }).spawn('/bin/sh', ['-c', 'echo ready; exec cat'], { cols: 100, rows: 30 });
  await waitOutput(a, 'ready');
  const spid = serverPid(runtimeDir, name);
  process.kill(spid, 'SIGKILL');
  await waitUntil(() => !alive(spid), 'the server SIGKILLed to be gone');

  const sc2 = sidecar({ args });
  // The attach replays the dead terminal and takes it out of the list.
  const dead = sc2.attach(a.terminalId);
  const gone = await run(dead);
  assert.ok(gone.output.includes('ready'), JSON.stringify(gone.output));
  const b = sc2.revive(a.terminalId);
  await within(b.ready, 'OPENED');
  assert.deepStrictEqual([b.cols, b.rows], [100, 30]);
});

test("a host that runs the bridge through args (--persist NAME --readopt) keeps its server where --list finds it", async (t) => {
  const { name, env, runtimeDir } = server(t);
  // Not the persist option: a node-pty style host, as the README's --readopt advice runs it.
  const sc = new Sidecar({ path: BIN, args: ['--persist', name, '--readopt'], env, logger: () => {} });
  cleanup(t, () => sc.close());
  const term = sc.spawn('/bin/sh', ['-c', 'echo ready; exec cat'], {});
  await waitOutput(term, 'ready');
  // The server's log is in env's runtime directory, and --list run with that env finds the terminal.
  assert.ok(serverPid(runtimeDir, name) > 0);
  const listed = childProcess.spawnSync(BIN, ['--persist', name, '--list'], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 20000 });
  assert.strictEqual(listed.status, 0, listed.stderr);
  assert.match(listed.stdout, new RegExp(`\\b${term.pid}\\b`));
});

test("attach() and a viewer report the terminal's own size, not 80x24; a resize right after attach() stands", async (t) => {
  const { sidecar } = server(t);
  const a = sidecar().spawn('/bin/sh', ['-c', 'stty -echo; echo ready; exec cat'], { cols: 100, rows: 30 });
  await waitOutput(a, 'ready');
  a.resize(132, 43);
  const lister = sidecar();
  // The RESIZE has reached the server once LISTED says so.
  await waitUntil(async () => (await lister.list()).some((e) => e.terminalId === a.terminalId && e.cols === 132), 'the resize to reach the server');

  const view = sidecar().attach(a.terminalId, { view: true });
  await within(view.ready, 'the viewer attached');
  assert.deepStrictEqual([view.cols, view.rows], [132, 43]);

  const held = sidecar().attach(a.terminalId);
  await within(held.ready, 'the takeover');
  assert.deepStrictEqual([held.cols, held.rows], [132, 43]);

  // This host's own resize, sent before the LISTED that attach() asked for was answered, is not undone by it.
  const again = sidecar().attach(a.terminalId);
  again.resize(90, 20);
  await within(again.ready, 'the second takeover');
  await waitUntil(async () => (await lister.list()).some((e) => e.terminalId === a.terminalId && e.cols === 90 && e.rows === 20), 'the resize to reach the server');
  assert.deepStrictEqual([again.cols, again.rows], [90, 20]);
});

test("a viewer skipped forward takes the size the repaint was drawn at, a holder's resize meanwhile included", async (t) => {
  const { sidecar } = server(t);
  const a = sidecar().spawn('/bin/sh', ['-c', 'stty -echo; echo ready; read x; seq 1 300000; echo END; exec cat'], { cols: 100, rows: 30, journal: 256 << 10 });
  await waitOutput(a, 'ready');
  const view = sidecar({ creditWindow: 64 << 10 }).attach(a.terminalId, { view: true });
  await within(view.ready, 'the viewer attached');
  assert.deepStrictEqual([view.cols, view.rows], [100, 30]);
  view.pause(); // it grants no credit: the flood leaves it behind the journal
  a.resize(120, 40);
  a.write('go\n');
  await waitOutput(a, 'END');
  const end = waitOutput(view, 'END');
  view.resume();
  await end;
  assert.ok(view.lost > 0, `lost ${view.lost}`);
  assert.deepStrictEqual([view.cols, view.rows], [120, 40]);
});

test("an attached terminal that has ended names the program it ran in process, as node-pty falls back to the file", async (t) => {
  const { sidecar } = server(t);
  const a = sidecar().spawn('/bin/sh', ['-c', 'stty -echo; echo ready; read x; echo bye'], {});
  await waitOutput(a, 'ready');
  const b = sidecar().attach(a.terminalId);
  await within(b.ready, 'the takeover');
  const done = run(b);
  b.write('x\n');
  const r = await done;
  assert.match(r.output, /bye/);
  assert.strictEqual(b.process, '/bin/sh');
  assert.strictEqual(await within(b.getProcess(), 'getProcess'), '/bin/sh');
});

test("pty.offset leaves out a character's start for every spelling of UTF-8 ('utf-8', 'UTF8'): a new host attached from it gets the character whole", async (t) => {
  const { sidecar } = server(t);
  for (const encoding of ['utf-8', 'UTF8']) {
    const a = sidecar();
    // The euro sign's first two bytes, then, after a line, its last one.
    const term = a.spawn('/bin/sh', ['-c', "stty -echo; printf 'A\\342\\202'; read x; printf '\\254B'; read y"], { encoding });
    let out = '';
    term.onData((d) => (out += d));
    await waitUntil(() => out === 'A' && term._offset === 3, 'A and the start of the euro sign');
    assert.strictEqual(term.offset, 1, `${encoding}: pty.offset leaves out the incomplete character`);
    await within(a.close(), 'close');
    const b = sidecar();
    const again = b.attach(term.terminalId, { offset: term.offset, encoding });
    await within(again.ready, 'the attach');
    const got = waitOutput(again, 'B');
    again.write('x\n');
    assert.strictEqual(await got, '\u20acB', encoding);
    again.kill();
    await run(again);
  }
});

test("a bridge that fails to start says why in the terminal's error, not only to the logger", async (t) => {
  // No logger: the error is all a host sees.
  const sc = new Sidecar({ path: BIN, persist: `f${process.pid}`, env: { PTYPLEX_RUNTIME_DIR: '/proc/no-such-dir' } });
  cleanup(t, () => sc.close());
  const term = sc.spawn('sh', []);
  const err = within(new Promise((resolve) => term.on('error', resolve)), 'the error');
  const exit = within(new Promise((resolve) => term.onExit(resolve)), 'onExit');
  const listed = sc.list();
  assert.match((await err).message, /^ptyplex-sidecar exited with status 1: .*\/proc\/no-such-dir.* before sh started$/);
  await assert.rejects(listed, /exited with status 1: .*\/proc\/no-such-dir.* before it answered LIST/);
  assert.deepStrictEqual(await exit, { exitCode: 1, signal: 0 });
});

// The paste rule through the bridge (PROTOCOL.md, INPUT): pieces behind
// PINGs, which the server answers through it.
test('a 20 MiB paste into a raw cat on the server with a 4 KiB credit window comes back whole', { skip: process.platform === 'win32' && 'a Unix shell and stty' }, async (t) => {
  const { sidecar } = server(t);
  const sc = sidecar({ creditWindow: 4096 });
  const term = await sc.open('/bin/sh', ['-c', 'stty raw -echo; echo ready; exec cat'], { encoding: null });
  await waitOutput(term, 'ready');
  const want = Buffer.alloc(20 << 20);
  for (let i = 0; i < want.length; i++) want[i] = 0x21 + ((i * 7919) % 94);
  let got = 0;
  const done = new Promise((resolve, reject) => {
    term.onData((d) => {
      if (!want.subarray(got, got + d.length).equals(d)) reject(new Error(`the echo differs within bytes ${got}..${got + d.length}`));
      got += d.length;
      if (got === want.length) resolve();
    });
  });
  const start = Date.now();
  term.write(want);
  await within(done, 'the echo of the paste', 90000).catch((err) => {
    throw new Error(`${err.message}: ${got} of ${want.length} bytes came back`);
  });
  t.diagnostic(`${want.length} bytes echoed in ${Date.now() - start} ms, ${term._gen.out._pings} PINGs`);
  assert.ok(term._gen.out._pings > 0, 'the paste was paced');
});

test('close() during a paste a terminal on the server never reads: the bridge ends at once and the terminal goes on, detached', { skip: process.platform === 'win32' && 'a Unix shell' }, async (t) => {
  const { sidecar } = server(t);
  const sc = sidecar();
  const term = await sc.open('/bin/sh', ['-c', 'stty raw -echo; echo ready; exec sleep 100000'], { encoding: null });
  await waitOutput(term, 'ready');
  const detached = new Promise((resolve) => term.onDetach(resolve));
  term.write(Buffer.alloc(24 << 20, 0x61));
  // The server holds 16 MiB and reads no more: the rest waits here.
  await waitUntil(() => term._gen.out.pending > 0 && term._gen.out.pending < 9 << 20, 'the paste to wait for the server');
  // Well within the bound after which close() ends the bridge anyway.
  await within(sc.close(), 'close() with a paste stuck', 10000);
  await within(detached, 'onDetach');
  const sc2 = sidecar();
  const listed = await sc2.list();
  assert.ok(listed.some((e) => e.terminalId === term._id && !e.dead), `the terminal runs on: ${JSON.stringify(listed)}`);
});

test("a takeover drops the terminal's input still waiting in the package: the host's other terminals do not wait for it to be paced out and refused", { skip: process.platform === 'win32' && 'a Unix shell and stty' }, async (t) => {
  const runtimeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-dd-'));
  const name = `dd${process.pid}`;
  cleanup(t, () => {
    childProcess.spawnSync(BIN, ['--persist', name, '--stop'], { env: { ...process.env, PTYPLEX_RUNTIME_DIR: runtimeDir }, stdio: 'ignore', timeout: 20000 });
    fs.rmSync(runtimeDir, { recursive: true, force: true });
  });
  const env = { PTYPLEX_RUNTIME_DIR: runtimeDir };
  const lines = [];
  const a = new Sidecar({ path: BIN, persist: name, env, logger: (l) => lines.push(l) });
  const b = new Sidecar({ path: BIN, persist: name, env });
  cleanup(t, () => Promise.all([a.close(), b.close()]));
  const other = await a.open('/bin/sh', ['-c', 'stty -echo; echo ready; exec cat'], { encoding: 'utf8' });
  await waitOutput(other, 'ready');
  const term = await a.open('/bin/sh', ['-c', 'stty raw -echo; echo ready; exec sleep 100000'], { encoding: null });
  await waitOutput(term, 'ready');
  term.write(Buffer.alloc(256 << 20, 'q'));
  const out = term._gen.out;
  await waitUntil(() => out._waitingBytes > 0 && out._gate, 'the paste held back');
  let waitingAtDetach = -1;
  const detached = new Promise((resolve) => term.onDetach(() => { waitingAtDetach = out._waitingBytes; resolve(); }));
  b.attach(term._id);
  await within(detached, 'the DETACHED of the takeover');
  const start = Date.now();
  other.write('after\n');
  await waitOutput(other, 'after');
  t.diagnostic(`waiting at the DETACHED: ${waitingAtDetach} bytes; a keystroke to another terminal echoed in ${Date.now() - start} ms`);
  assert.strictEqual(waitingAtDetach, 0, "the input of the terminal taken over was dropped at its DETACHED");
});
