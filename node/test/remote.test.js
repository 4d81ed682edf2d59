'use strict';
// The transport option, the handshake and a sidecar that cannot be
// trusted, against stand-ins reached as transports.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { Sidecar } = require('..');
const { newSidecar, run, within, waitUntil, BIN } = require('./helpers');
const { startSshd } = require('./sshd');

const HOSTILE = path.join(__dirname, 'fixtures', 'hostile-sidecar.js');
// The bound is generous (a busy machine starts node slowly); the test of
// a sidecar that never answers sets a short one.
const hostile = (t, mode, options = {}) => newSidecar(t, { transport: [process.execPath, HOSTILE, mode], helloTimeout: 30000, ...options });

test('transport: a command reaching the real sidecar; pid is the transport; stderr marked', async (t) => {
  // sh stands for ssh: it writes a line of its own, then becomes the sidecar.
  const sc = newSidecar(t, { transport: ['sh', '-c', `echo transport-here >&2; exec "$0"`, BIN], hello: true });
  const term = sc.spawn('sh', ['-c', 'echo through-the-transport']);
  assert.ok(sc.pid > 0);
  const r = await run(term);
  assert.match(r.output, /through-the-transport/);
  assert.ok(sc.lines.includes('transport sh: transport-here'), sc.lines.join('\n'));
  assert.strictEqual(sc.remote.protocol, 1);
  assert.ok(sc.remote.features.includes('hello') && sc.remote.features.includes('signal'));
});

test('transport: sidecar.pid is the transport process\'s pid', async (t) => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-pid-')), 'pid');
  t.after(() => fs.rmSync(path.dirname(file), { recursive: true, force: true }));
  // A shell that notes its own pid and becomes the sidecar, as ssh runs one.
  const sc = newSidecar(t, { transport: ['sh', '-c', 'echo $$ > "$0"; exec "$1"', file, BIN], hello: true });
  await sc.handshake(); // answered: the shell wrote its pid and is the sidecar now
  const pid = Number(fs.readFileSync(file, 'utf8').trim());
  assert.ok(pid > 0);
  assert.strictEqual(sc.pid, pid);
  const r = await run(sc.spawn('sh', ['-c', 'echo $$']));
  assert.notStrictEqual(Number(r.output.trim()), pid, "a terminal's pid is its child's");
});

test('transport must be an argv', () => {
  assert.throws(() => new Sidecar({ transport: 'ssh host' }), /non-empty array of strings/);
  assert.throws(() => new Sidecar({ transport: [] }), /non-empty array of strings/);
});

test('handshake: the current sidecar answers', async (t) => {
  const sc = newSidecar(t);
  const h = await sc.handshake();
  assert.strictEqual(h.protocol, 1);
  assert.ok(h.os);
});

test('handshake: an old sidecar does not answer; without the handshake it serves terminals', async (t) => {
  const sc = hostile(t, 'old', { helloTimeout: 2000 });
  const t0 = Date.now();
  // It sends nothing at all, so it may as well be a transport that has
  // not got through: the message names both.
  await assert.rejects(sc.handshake(), /did not answer HELLO within 2000 ms, and not one byte came back: .*older than the handshake.*ptyplex remote install/);
  assert.ok(Date.now() - t0 < 10000);
  const term = await sc.open('sh', []);
  assert.strictEqual(term.pid, 4242);

  // With hello: true the terminals fail with the reason instead.
  const strict = hostile(t, 'old', { hello: true, helloTimeout: 2000 });
  await assert.rejects(strict.open('sh', []), /did not answer HELLO.*before sh started/);
});

test('handshake: a newer sidecar with unknown features is fine', async (t) => {
  const sc = hostile(t, 'newer');
  const h = await sc.handshake();
  assert.strictEqual(h.version, 'v9.0.0');
  assert.ok(h.features.includes('teleport'));
});

for (const [mode, want] of [
  ['otherprotocol', /speaks protocol 2, this host speaks 1: install/],
  ['garbagehello', /answered HELLO with a malformed frame/],
  ['errorhello', /answered HELLO with ERROR "unknown frame type 0x10"/],
]) {
  test(`handshake: ${mode}`, async (t) => {
    const sc = hostile(t, mode);
    await assert.rejects(within(sc.handshake(), 'the handshake'), want);
  });
}

// Each violation ends the sidecar with an error naming it, the terminal
// ends, and the event loop stays free meanwhile.
for (const [mode, want] of [
  ['overcredit', /got OUTPUT beyond the 4096 byte credit window/],
  ['stranger', /OUTPUT for terminal "never-opened", which is not open/],
  ['exittwice', /EXIT for terminal "t1", which is not open/],
  ['garbage', /corrupt frame stream/],
]) {
  test(`hostile sidecar: ${mode}`, async (t) => {
    const sc = hostile(t, mode, { creditWindow: 4096 });
    const died = new Promise((resolve) => sc.onDeath(resolve));
    const term = sc.spawn('sh', []);
    // Paused, nothing is granted back: all the credit there is, is the window.
    term.pause();
    term.on('error', () => {});
    const exited = new Promise((resolve) => term.onExit(resolve));
    const d = await within(died, 'the end of the hostile sidecar');
    assert.match(d.error.message, want);
    term.resume(); // its end waits behind what it holds
    await within(exited, 'the terminal to end');
    assert.ok(sc.lines.some((l) => want.test(l)), sc.lines.join('\n'));
  });
}

test('hostile sidecar: SNAPSHOTs no ATTACHED announced are ignored', async (t) => {
  const sc = hostile(t, 'snapshots', { persist: true });
  const term = sc.spawn('sh', []);
  const r = await run(term);
  assert.strictEqual(r.output, 'real output');
  assert.strictEqual(term.offset, 'real output'.length);
  assert.ok(sc.lines.some((l) => /ignored a SNAPSHOT/.test(l)), sc.lines.join('\n'));
});

test('hostile sidecar: reading the pid while frames flood in before OPENED holds a bounded read-ahead', async (t) => {
  const sc = hostile(t, 'flood', { openTimeout: 120000 });
  await sc.open('sh', []); // the first is served: the stand-in is up
  const term = sc.spawn('sh', []);
  term.on('error', () => {});
  const before = process.memoryUsage().rss;
  const pid = term.pid; // reads ahead, synchronously, for the OPENED
  const grown = process.memoryUsage().rss - before;
  t.diagnostic(`RSS grew by ${(grown / (1 << 20)).toFixed(0)} MiB while reading the pid (${pid})`);
  assert.ok(grown < 32 << 20, `reading the pid grew RSS by ${(grown / (1 << 20)).toFixed(0)} MiB`);
  assert.ok(pid === 0 || pid === 4242);
  await within(term.ready, 'the OPENED after the flood', 120000);
  assert.strictEqual(term.pid, 4242);
});

test('hostile sidecar: a 16 MiB frame trickled in keeps the event loop free', async (t) => {
  const sc = hostile(t, 'bigerror');
  const term = await sc.open('sh', []);
  const errors = [];
  term.on('error', (e) => errors.push(e.message.length));
  // The largest gap between timer ticks while the frame arrives.
  let worst = 0;
  let last = Date.now();
  const tick = setInterval(() => {
    const now = Date.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 5);
  t.after(() => clearInterval(tick));
  await within(
    new Promise((resolve) => term.on('error', resolve)),
    'the 16 MiB ERROR',
    60000,
  );
  clearInterval(tick);
  assert.ok(errors[0] > 15 << 20);
  assert.ok(worst < 500, `event loop blocked for ${worst} ms`);
});

test('hostile sidecar: a 16 MiB OUTPUT frame a byte at a time is refused at its header, the event loop free', async (t) => {
  const sc = hostile(t, 'trickle', { creditWindow: 4096 });
  const died = new Promise((resolve) => sc.onDeath(resolve));
  let worst = 0;
  let last = Date.now();
  const tick = setInterval(() => {
    const now = Date.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 5);
  t.after(() => clearInterval(tick));
  const term = sc.spawn('sh', []);
  term.on('error', () => {});
  const exited = new Promise((resolve) => term.onExit(resolve));
  const t0 = Date.now();
  const d = await within(died, 'the refusal');
  const took = Date.now() - t0;
  clearInterval(tick);
  const want = /terminal "t1" got an OUTPUT frame of 16777211 bytes, beyond the 4096 byte credit window/;
  assert.match(d.error.message, want);
  // Byte by byte the whole frame takes the stand-in a minute or more.
  assert.ok(took < 10000, `refused after ${took} ms`);
  assert.ok(worst < 500, `event loop blocked for ${worst} ms`);
  await within(exited, 'the terminal to end');
  assert.ok(sc.lines.some((l) => want.test(l)), sc.lines.join('\n'));
});

test('a terminal over a real ssh to 127.0.0.1, with the handshake', async (t) => {
  const srv = await startSshd(t);
  if (!srv) return t.skip('no /usr/sbin/sshd: install openssh-server');
  // Generous bounds: ssh's key exchange on a loaded machine is slow.
  const sc = newSidecar(t, { transport: [...srv.ssh, BIN], hello: true, helloTimeout: 60000, openTimeout: 60000 });
  const term = sc.spawn('sh', ['-c', 'echo $((6*7)) over ssh; seq 1 20000 | tail -1; exit 5']);
  const r = await run(term);
  assert.match(r.output, /42 over ssh/, sc.lines.join('\n'));
  assert.match(r.output, /20000/);
  assert.strictEqual(r.exitCode, 5);
  assert.ok(sc.pid > 0);
  assert.strictEqual(sc.remote.protocol, 1);
  await sc.close();
  assert.ok(sc.lines.some((l) => l.startsWith('transport ssh: ')), sc.lines.join('\n'));
});

test('hello: true: reading pid before the handshake ended does not wait for it', async (t) => {
  const sc = newSidecar(t, { hello: true });
  const term = sc.spawn('sh', ['-c', 'exit 0']);
  const t0 = Date.now();
  const pid = term.pid; // the OPEN is held behind the handshake: nothing to wait for
  assert.ok(Date.now() - t0 < 500, `pid took ${Date.now() - t0} ms`);
  assert.strictEqual(pid, 0);
  const r = await run(term);
  assert.strictEqual(r.exitCode, 0);
  assert.ok(term.pid > 0, 'known once it opened');
});

test('a failing transport ends the handshake at once; what it said is logged, marked', async (t) => {
  const sc = newSidecar(t, { transport: ['sh', '-c', "echo 'Permission denied (publickey).' >&2; exit 255"], helloTimeout: 20000 });
  const t0 = Date.now();
  await assert.rejects(within(sc.handshake(), 'the handshake'), /ended before answering HELLO/);
  assert.ok(Date.now() - t0 < 10000);
  // stderr may be read after the exit was seen.
  await waitUntil(() => sc.lines.includes('transport sh: Permission denied (publickey).'), 'the transport\'s line');
  assert.ok(sc.lines.some((l) => /exited with status 255/.test(l)), sc.lines.join('\n'));
});

test('a transport that exits is named, with what it said last, its CR LF a plain line end', async (t) => {
  const said = 'ssh: connect to host 127.0.0.1 port 1: Connection refused';
  const sc = newSidecar(t, { transport: ['sh', '-c', `printf '${said}\\r\\n' >&2; exit 255`], hello: true, helloTimeout: 20000 });
  const term = sc.spawn('sh', []);
  const err = within(new Promise((resolve) => term.on('error', resolve)), 'the error');
  const exit = within(new Promise((resolve) => term.onExit(resolve)), 'onExit');
  assert.strictEqual((await err).message, `the transport (sh) exited with status 255: ${said} before sh started`);
  await exit;
  assert.ok(sc.lines.includes(`transport sh: ${said}`), JSON.stringify(sc.lines));
  assert.ok(!sc.lines.some((l) => l.includes('\r') || l.includes('ptyplex-sidecar exited')), JSON.stringify(sc.lines));
});

test('a transport that writes text before the frames (a .bashrc that echoes): the error quotes it and says what to look for', async (t) => {
  // sh stands for ssh running a login shell whose startup file echoes a line.
  const sc = newSidecar(t, { transport: ['sh', '-c', 'echo "Welcome to the build box"; exec "$0"', BIN] });
  const term = sc.spawn('sh', []);
  const err = within(new Promise((resolve) => term.on('error', resolve)), 'the error');
  const death = within(new Promise((resolve) => sc.onDeath(resolve)), 'onDeath');
  const { message } = await err;
  assert.match(message, /^protocol violation by the sidecar reached through \[.*\]: corrupt frame stream: frame length \d+, which reads as text \("Welcome to the build box\\n/);
  assert.match(message, /a shell startup file \(\.bashrc\) or a banner/);
  assert.match(message, / before sh started$/);
  assert.strictEqual((await death).error.message.split('protocol violation').length, 2, 'said once');
});

test("through a transport, process and ptsName come from the terminal's sidecar, not from this machine's /proc, where its pid is another process", { skip: process.platform !== 'linux' && 'reads /proc' }, async (t) => {
  // A terminal here whose pid the stand-in gives as its own: this
  // machine's /proc says sleep runs in the foreground of that pid's tty.
  const here = newSidecar(t).spawn('sh', ['-c', 'exec sleep 100']);
  await within(here.ready, 'the local terminal');
  await waitUntil(() => here.process === 'sleep', 'sleep in the foreground here');
  const sc = newSidecar(t, { transport: [process.execPath, HOSTILE, 'foreign', String(here.pid)] });
  const term = sc.spawn('bash', []);
  await within(term.ready, 'OPENED');
  assert.strictEqual(term.pid, here.pid);
  assert.strictEqual(await within(term.getProcess(), 'FOREGROUND'), 'remote-shell');
  assert.strictEqual(term.process, 'remote-shell');
  assert.strictEqual(term.ptsName, undefined);
  here.kill();
});

test('a transport that gives back not one byte is not taken for an old sidecar alone', async (t) => {
  const sc = newSidecar(t, { transport: ['sh', '-c', "printf 'connecting to 10.255.255.1\\r\\n' >&2; exec sleep 60"], helloTimeout: 300 });
  await assert.rejects(
    sc.handshake(),
    /did not answer HELLO within 300 ms, and not one byte came back: either the transport \(sh\) has not reached the sidecar \(the machine unreachable .*\); it said last: "connecting to 10.255.255.1", or the sidecar there is older/,
  );
  // A sidecar that talks but does not answer is an old one.
  const chatty = hostile(t, 'oldchatty', { helloTimeout: 2000 });
  await assert.rejects(chatty.handshake(), /did not answer HELLO within 2000 ms: it is older than the handshake.*ptyplex remote install/);
});

test('reconnect: a first connection that drops before its handshake answer is not resumed, as in the Go client', async (t) => {
  const sc = newSidecar(t, { transport: ['sh', '-c', 'exec sleep 60'], reconnect: { initialDelay: 10 } });
  const events = [];
  for (const e of ['disconnected', 'reconnected', 'gaveup']) sc.on(e, () => events.push(e));
  const term = sc.spawn('sh', []);
  const err = within(new Promise((resolve) => term.on('error', resolve)), 'the error');
  const exit = within(new Promise((resolve) => term.onExit(resolve)), 'onExit');
  process.kill(sc.pid, 'SIGKILL');
  assert.match(
    (await err).message,
    /^the transport \(sh\) killed by SIGKILL \(on the first connection, before its handshake succeeded: reconnect resumes only a connection that completed one\) before sh started$/,
  );
  assert.strictEqual((await exit).exitCode, 1);
  assert.deepStrictEqual(events, []);
});

test('an idle sidecar after the handshake does not hold the event loop', async (t) => {
  const script = `const { Sidecar } = require(${JSON.stringify(path.join(__dirname, '..'))});
new Sidecar({ path: ${JSON.stringify(BIN)} }).handshake().then((h) => console.log('protocol', h.protocol));`;
  const child = require('child_process').spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.kill('SIGKILL')); // should the test fail with it still running
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const code = await within(new Promise((resolve) => child.on('exit', resolve)), 'the script to end by itself');
  assert.strictEqual(code, 0);
  assert.strictEqual(out.trim(), 'protocol 1');
});

// node-pty takes args as a string on Windows: the child's command line
// after the program, as it is. It goes out as OPEN's commandLine (args
// empty) to a sidecar whose HELLO lists that feature, wherever the host
// runs; an older Windows sidecar, which would drop it and start the
// program with no arguments, and a Unix one get none.
const WINDOWS = path.join(__dirname, 'fixtures', 'windows-sidecar.js');

test("args as a string: OPEN's commandLine to a Windows sidecar that lists the feature", async (t) => {
  const sc = newSidecar(t, { transport: [process.execPath, WINDOWS], hello: true, helloTimeout: 30000 });
  await sc.handshake();
  const line = '/d /c ""C:\\dir with spaces\\p.exe" 5" & echo "a b"';
  const sent = async (args) => JSON.parse((await run(sc.spawn('cmd.exe', args))).output);
  assert.deepStrictEqual(await sent(line), { cmd: 'cmd.exe', args: [], commandLine: line });
  // An empty line is the program alone, as node-pty has it; an array is args.
  assert.deepStrictEqual(await sent(''), { cmd: 'cmd.exe', args: [] });
  assert.deepStrictEqual(await sent(['/c', 'echo "a b"']), { cmd: 'cmd.exe', args: ['/c', 'echo "a b"'] });
});

test('args as a string: refused for a Windows sidecar without the feature, and a Unix one', async (t) => {
  const old = newSidecar(t, { transport: [process.execPath, WINDOWS, 'old'], hello: true, helloTimeout: 30000 });
  await old.handshake();
  assert.throws(() => old.spawn('cmd.exe', '/c echo x'), /^Error: args as a command-line string needs a sidecar that lists the commandLine feature \(this one is older\): pass an array$/);
  const unix = newSidecar(t, { hello: true });
  await unix.handshake();
  assert.throws(() => unix.spawn('sh', '-c true'), /^Error: args as a string is not supported on unix\.$/);
});

// A large write is cut into INPUT frames at UTF-8 character starts: a
// console that decodes each read on its own (Windows' under Wine) shows
// the halves of a character split between frames as U+FFFD.
test('write: INPUT frames are cut at character starts', async (t) => {
  const sc = newSidecar(t, { transport: [process.execPath, WINDOWS], hello: true, helloTimeout: 30000 });
  await sc.handshake();
  const term = sc.spawn('record-input', []);
  let out = '';
  term.onData((d) => { out += d; });
  // 'a' then two-byte characters: the 64 KiB limit falls inside one.
  const text = 'a' + '\u00e9'.repeat(40000) + '\u4e2d'.repeat(30000);
  const bytes = Buffer.byteLength(text);
  term.write(text);
  await waitUntil(() => out.split('\n').filter(Boolean).reduce((n, l) => n + Number(l.split(' ')[0]), 0) >= bytes, 'every INPUT frame answered');
  const frames = out.split('\n').filter(Boolean).map((l) => l.split(' '));
  assert.ok(frames.length >= 3, out);
  for (const [len, mid] of frames) {
    assert.strictEqual(mid, 'false', `a frame starts inside a character: ${out}`);
    assert.ok(Number(len) <= 64 << 10 && Number(len) > (64 << 10) - 4 || len === frames[frames.length - 1][0], out);
  }
  term.kill();
});
