'use strict';
// Resuming after a dropped transport (the reconnect and keepalive
// options), against the real persistent server, reached over a real ssh
// to 127.0.0.1 (sshd.js) or directly. Every wait ends at its event or
// its deadline; nothing sleeps for a fixed time.
const test = require('node:test');
const assert = require('node:assert');
const childProcess = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { Sidecar } = require('..');
const { FrameParser, T } = require('../lib/frames');
const { BIN, within, waitOutput, waitUntil, cleanup, soakSize } = require('./helpers');
const { startSshd } = require('./sshd');

// The resume test's rounds. The issue asks for 10; a round (four ssh
// connections, three drops, the floods stopped and checked) takes 5 to 9 s
// on a busy 2-core machine, so `make test-node` runs 2 and make soak
// (PTYPLEX_SOAK=1) or PTYPLEX_RESUME_ROUNDS=10 runs the full count (74 to
// 82 s measured at load averages of 5 to 15).
const ROUNDS = Number(process.env.PTYPLEX_RESUME_ROUNDS || soakSize(2, 10));

// server gives a test its own persistent server (a private runtime
// directory and a name), stopped with its terminals afterwards.
function server(t) {
  const runtimeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-resume-'));
  const name = `r${process.pid}x${Math.random().toString(36).slice(2, 8)}`;
  cleanup(t, () => {
    childProcess.spawnSync(BIN, ['--persist', name, '--stop'], { env: { ...process.env, PTYPLEX_RUNTIME_DIR: runtimeDir }, stdio: 'ignore', timeout: 20000 });
    fs.rmSync(runtimeDir, { recursive: true, force: true });
  });
  // The command that runs the bridge, after ssh ... or on its own.
  const bridge = ['env', `PTYPLEX_RUNTIME_DIR=${runtimeDir}`, BIN, '--persist', name];
  return { name, runtimeDir, bridge };
}

function newHost(t, options) {
  const lines = [];
  const sc = new Sidecar({ logger: (l) => lines.push(l), helloTimeout: 60000, openTimeout: 60000, ...options });
  sc.lines = lines;
  cleanup(t, () => sc.close());
  return sc;
}

// next resolves with the next event of the Sidecar, within the deadline.
function next(sc, event, ms) {
  return within(new Promise((resolve) => sc.once(event, resolve)), `the sidecar's ${event} event; log:\n${sc.lines.join('\n')}`, ms);
}

// numbered is what flood k writes, as the PTY delivers it (\n becomes
// \r\n); the multibyte characters put chunk boundaries, and so the
// offsets a drop leaves, inside characters.
function numbered(k, lines) {
  let s = '';
  for (let i = 0; i < lines; i++) s += `t${k} ${String(i).padStart(7, '0')} \u00e9\u20ac\r\n`;
  return Buffer.from(s, 'utf8');
}

// flood starts terminal k writing numbered lines until the stop file
// exists (looked for every 1000 lines), collecting what onData gives.
function flood(sc, k, stop, encoding) {
  const script = `exec awk 'BEGIN { for (i = 0; ; i++) { printf "t${k} %07d \\303\\251\\342\\202\\254\\n", i; ` +
    `if (i % 1000 == 999) { if ((getline l < "${stop}") >= 0) exit; close("${stop}") } } }'`;
  const pty = sc.spawn('/bin/sh', ['-c', script], { encoding, detached: 'park', env: { PATH: process.env.PATH, LC_ALL: 'C' } });
  const f = { k, pty, chunks: [], size: 0 };
  pty.onData((d) => {
    const b = typeof d === 'string' ? Buffer.from(d, 'utf8') : d;
    f.chunks.push(b);
    f.size += b.length;
  });
  f.exited = within(new Promise((resolve) => pty.onExit(resolve)), `flood ${k} to end`, 60000);
  return f;
}

// checkFlood: the stream is whole thousands of lines, byte for byte what
// awk wrote, and pty.offset counted every byte.
function checkFlood(f) {
  const got = Buffer.concat(f.chunks);
  const line = numbered(f.k, 1).length;
  const lines = got.length / line;
  assert.ok(Number.isInteger(lines) && lines % 1000 === 0, `flood ${f.k}: ${got.length} bytes, not whole thousands of lines`);
  const want = numbered(f.k, lines);
  if (!got.equals(want)) {
    let i = 0;
    while (i < got.length && got[i] === want[i]) i++;
    assert.fail(`flood ${f.k}: the bytes differ from what the program wrote at byte ${i}: ${JSON.stringify(got.subarray(Math.max(0, i - 40), i + 40).toString('utf8'))}`);
  }
  assert.strictEqual(f.pty.offset, got.length, `flood ${f.k}: pty.offset`);
}

// echoer: a terminal that prints each line it is sent, once (no echo by
// the line discipline, cat's copy only).
async function echoer(sc) {
  const pty = sc.spawn('/bin/sh', ['-c', 'stty -echo; echo ready; exec cat'], { env: { PATH: process.env.PATH } });
  const e = { pty, out: '' };
  pty.onData((d) => (e.out += d));
  await waitUntil(() => e.out.includes('ready\r\n'), 'the echoing terminal to start');
  return e;
}

test(`resume over ssh: the ssh client SIGKILLed mid-flood 3 times a round, ${ROUNDS} rounds; streams byte-identical, keys typed in the gaps arrive once and in order`, async (t) => {
  const srv = await startSshd(t);
  if (!srv) return t.skip('no /usr/sbin/sshd: install openssh-server');
  const { bridge } = server(t);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-resume-stop-'));
  cleanup(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  const STEP = 16 << 10;
  const t0 = Date.now();
  const gaps = [];
  for (let round = 0; round < ROUNDS; round++) {
    const sc = newHost(t, { transport: [...srv.ssh, ...bridge], reconnect: { initialDelay: 10, maxDelay: 200, attempts: 50 } });
    const stop = path.join(dir, `stop${round}`);
    // Two floods with Buffers, two decoded as UTF-8.
    const floods = [1, 2, 3, 4].map((k) => flood(sc, k, stop, k % 2 ? null : 'utf8'));
    const echo = await echoer(sc);
    let keys = 'ready\r\n';
    const sizes = () => floods.map((f) => f.size);
    const grow = async (what) => {
      const before = sizes();
      await waitUntil(() => floods.every((f, i) => f.size >= before[i] + STEP), `round ${round}: ${what} (received ${sizes()}, before ${before}); log:\n${sc.lines.join('\n')}`);
    };
    for (let kill = 0; kill < 3; kill++) {
      await grow(`each flood to grow by ${STEP} bytes before kill ${kill}`);
      const pid = sc.pid;
      assert.ok(pid > 0);
      const disconnected = next(sc, 'disconnected');
      const reconnected = next(sc, 'reconnected');
      process.kill(pid, 'SIGKILL');
      const d = await disconnected;
      assert.match(d.error.message, /dropped: it was killed by SIGKILL/);
      // Typed while nothing carries them: held, then sent after the ATTACHes.
      assert.ok(sc.reconnecting && sc.pid === 0);
      for (let i = 0; i < 3; i++) {
        const k = `key ${round}.${kill}.${i} \u00e9`;
        echo.pty.write(`${k}\r`);
        keys += `${k}\r\n`;
      }
      const r = await reconnected;
      assert.ok(r.attempt >= 1 && r.ms >= 0, JSON.stringify(r));
      gaps.push(r.ms);
      assert.ok(sc.pid > 0 && sc.pid !== pid, 'pid is the new transport\'s');
    }
    await grow('the floods to go on after the last reconnect');
    fs.writeFileSync(stop, '');
    const exits = await Promise.all(floods.map((f) => f.exited));
    for (const e of exits) assert.deepStrictEqual(e, { exitCode: 0, signal: 0 });
    for (const f of floods) checkFlood(f);
    echo.pty.write('end\r');
    keys += 'end\r\n';
    await waitUntil(() => echo.out.length >= keys.length, `round ${round}: the keys to come back (got ${JSON.stringify(echo.out)})`);
    assert.strictEqual(echo.out, keys);
    echo.pty.kill();
    await within(sc.close(), 'close');
    t.diagnostic(`round ${round} done at ${Date.now() - t0} ms`);
  }
  t.diagnostic(`${ROUNDS} rounds in ${Date.now() - t0} ms; drop to reconnected: ${gaps.join(', ')} ms`);
});

test('keepalive: an ssh client stopped (SIGSTOP) is detected, killed and replaced; no byte lost or repeated', async (t) => {
  const srv = await startSshd(t);
  if (!srv) return t.skip('no /usr/sbin/sshd: install openssh-server');
  const { bridge } = server(t);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-resume-stop-'));
  cleanup(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  const stop = path.join(dir, 'stop');
  const sc = newHost(t, { transport: [...srv.ssh, ...bridge], reconnect: { initialDelay: 10 }, keepalive: { interval: 300, timeout: 1000 } });
  const f = flood(sc, 1, stop, 'utf8');
  await waitUntil(() => f.size >= 32 << 10, 'the flood to start');
  assert.ok(sc.remote.features.includes('keepalive'), JSON.stringify(sc.remote.features));
  const pid = sc.pid;
  cleanup(t, () => {
    for (const sig of ['SIGCONT', 'SIGKILL']) {
      try {
        process.kill(pid, sig);
      } catch {
        // gone already: the keepalive killed it
      }
    }
  });
  const disconnected = next(sc, 'disconnected');
  const reconnected = next(sc, 'reconnected');
  const t0 = Date.now();
  process.kill(pid, 'SIGSTOP');
  const d = await disconnected;
  const took = Date.now() - t0;
  assert.match(d.error.message, /did not answer a PING within 1000 ms \(keepalive.timeout\)/);
  // The transport's argv is named once, not again in the reason.
  assert.strictEqual(d.error.message.split(JSON.stringify(sc.transport)).length - 1, 1, d.error.message);
  // interval + timeout, and the machine's slowness.
  assert.ok(took < 10000, `detected after ${took} ms`);
  await reconnected;
  assert.notStrictEqual(sc.pid, pid);
  const at = f.size;
  await waitUntil(() => f.size >= at + (32 << 10), 'the flood to go on after the reconnect');
  fs.writeFileSync(stop, '');
  assert.deepStrictEqual(await f.exited, { exitCode: 0, signal: 0 });
  checkFlood(f);
  t.diagnostic(`detected in ${took} ms`);
});

test('queue bound: input written while disconnected is held up to queueLimit bytes; past it write throws, the rest arrives once, in order', async (t) => {
  const { bridge } = server(t);
  const sc = newHost(t, { transport: bridge, reconnect: { queueLimit: 64, initialDelay: 10 } });
  const echo = await echoer(sc);
  const pid = sc.pid;
  const disconnected = next(sc, 'disconnected');
  const reconnected = next(sc, 'reconnected');
  process.kill(pid, 'SIGKILL');
  await disconnected;
  const line = (i) => `line ${i} ${'x'.repeat(12)}\r`; // 20 bytes
  for (let i = 0; i < 3; i++) echo.pty.write(line(i));
  assert.throws(
    () => echo.pty.write(line(3)),
    (err) => {
      assert.match(err.message, /^ptyplex: cannot write 20 byte\(s\) to terminal "p[0-9a-z]+-1": the connection is down \(the connection to .* dropped: it was killed by SIGKILL\) and 60 byte\(s\) of input already wait for it; reconnect.queueLimit is 64 bytes$/);
      return true;
    },
  );
  echo.pty.write('end\r'); // 4 more bytes fit: 64 exactly
  // Other requests wait too, and are answered on the next connection.
  const listed = sc.list();
  const late = sc.spawn('/bin/sh', ['-c', 'echo spawned in the gap']);
  let lateOut = '';
  late.onData((d) => (lateOut += d));
  await reconnected;
  assert.deepStrictEqual((await within(listed, 'LISTED')).map((e) => [e.terminalId, e.attached]), [[echo.pty.terminalId, true]]);
  await waitUntil(() => lateOut.includes('spawned in the gap'), 'the output of the terminal spawned in the gap');
  await waitUntil(() => echo.out.includes('end\r\n'), `the held input to come back (got ${JSON.stringify(echo.out)})`);
  assert.strictEqual(echo.out, `ready\r\n${line(0)}\n${line(1)}\n${line(2)}\nend\r\n`);
  // Connected again, writes go straight out.
  echo.pty.write(`${'y'.repeat(200)}\r`);
  await waitOutput(echo.pty, 'yyy\r\n');
});

test('gave up: a transport that fails after the first connection; after the attempts, gaveup, onDeath, and the terminals exit with exitCode null', async (t) => {
  const { bridge } = server(t);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-resume-flag-'));
  cleanup(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  const flag = path.join(dir, 'refuse');
  // Works until the flag file exists, as ssh to a host that went away.
  const transport = ['sh', '-c', 'if [ -e "$0" ]; then echo "connection refused" >&2; exit 255; fi; exec "$@"', flag, ...bridge];
  const sc = newHost(t, { transport, reconnect: { attempts: 3, initialDelay: 10, maxDelay: 40 } });
  const term = sc.spawn('/bin/sh', ['-c', 'echo hi; exec sleep 1000']);
  await waitOutput(term, 'hi\r\n');
  const exited = within(new Promise((resolve) => term.onExit(resolve)), 'onExit');
  const death = within(new Promise((resolve) => sc.onDeath(resolve)), 'onDeath');
  const gaveup = next(sc, 'gaveup');
  const events = [];
  for (const e of ['disconnected', 'reconnected']) sc.on(e, () => events.push(e));
  fs.writeFileSync(flag, '');
  process.kill(sc.pid, 'SIGKILL');
  const g = await gaveup;
  assert.strictEqual(g.attempts, 3);
  assert.match(g.error.message, /^gave up reconnecting to the sidecar reached through .* after 3 attempt\(s\) \(the last: .*ended before answering HELLO.*\); the connection to .* dropped: it was killed by SIGKILL$/);
  assert.deepStrictEqual(await exited, { exitCode: null, signal: 0 });
  assert.strictEqual((await death).error, g.error);
  assert.deepStrictEqual(events, ['disconnected'], 'one drop, no reconnect');
  assert.strictEqual(sc.lines.filter((l) => /^transport sh: connection refused$/.test(l)).length, 3, sc.lines.join('\n'));
  assert.ok(!sc.reconnecting && sc.pid === 0);
  term.write('ignored'); // an exited terminal drops input, as node-pty's does
  // The program runs on in the server: a host that connects later finds it.
  fs.rmSync(flag);
  const list = await within(sc.list(), 'LISTED on a new connection');
  assert.deepStrictEqual(list.map((e) => [e.terminalId, e.exited]), [[term.terminalId, false]]);
});

test('a reconnect whose transport hangs says the machine may be unreachable, not that the sidecar is old', async (t) => {
  const { bridge } = server(t);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-resume-gate-'));
  cleanup(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  const gate = path.join(dir, 'gate');
  // Hangs while the gate file exists, as ssh to a host that drops packets.
  const transport = ['sh', '-c', 'while [ -e "$0" ]; do sleep 0.01; done; exec "$@"', gate, ...bridge];
  const sc = newHost(t, { transport, helloTimeout: 3000, reconnect: { attempts: 1, initialDelay: 10 } });
  const term = sc.spawn('/bin/sh', ['-c', 'echo hi; exec sleep 1000']);
  await waitOutput(term, 'hi\r\n');
  const gaveup = next(sc, 'gaveup');
  fs.writeFileSync(gate, '');
  process.kill(sc.pid, 'SIGKILL');
  const g = await gaveup;
  assert.match(g.error.message, /\(the last: .* not one byte came back: the transport \(sh\) has not reached the sidecar: the machine is unreachable/);
  assert.doesNotMatch(g.error.message, /install/);
  fs.rmSync(gate);
});

test('a UTF-8 character split by the drop: the decoder keeps its start, the rest comes after the reattach, nothing replaced', async (t) => {
  const { bridge } = server(t);
  const sc = newHost(t, { transport: bridge, reconnect: { initialDelay: 10 } });
  // The euro sign's first two bytes, then, after a key, its last one.
  const term = sc.spawn('/bin/sh', ['-c', "stty -echo; printf 'A\\342\\202'; read x; printf '\\254B\\n'; exec sleep 1000"], { env: { PATH: process.env.PATH, LC_ALL: 'C' } });
  let out = '';
  term.onData((d) => (out += d));
  await waitUntil(() => out === 'A' && term._offset === 3, 'A and the start of the euro sign');
  assert.strictEqual(term.offset, 1, 'pty.offset leaves out the incomplete character');
  const reconnected = next(sc, 'reconnected');
  process.kill(sc.pid, 'SIGKILL');
  await next(sc, 'disconnected');
  term.write('x\r');
  await reconnected;
  await waitUntil(() => out.includes('B'), 'the rest');
  assert.strictEqual(out, 'A\u20acB\r\n');
  assert.strictEqual(term.offset, 7);
});

test('reconnect: options checked; a plain sidecar is refused with a clear error', async (t) => {
  assert.throws(() => new Sidecar({ path: BIN, reconnect: true }), /reconnect needs a persistent sidecar/);
  assert.throws(() => new Sidecar({ transport: ['x'], reconnect: { attempts: 0 } }), /reconnect.attempts must be a whole number, 1 or more, or Infinity/);
  assert.throws(() => new Sidecar({ transport: ['x'], reconnect: { tries: 3 } }), /reconnect.tries is not an option/);
  assert.throws(() => new Sidecar({ transport: ['x'], keepalive: { interval: 0 } }), /keepalive.interval must be a number of milliseconds above 0/);
  const sc = newHost(t, { transport: [BIN], reconnect: true });
  await assert.rejects(within(sc.open('sh', []), 'the refusal'), /is not a persistent sidecar \(its HELLO lists no "persist"\).*ptyplex-sidecar --persist NAME/);
});

test("keepalive times past node's longest timer wait that long, not 1 ms: no PING flood, no live connection taken for dead", async (t) => {
  // The host's frames are recorded on their way to the sidecar.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-ka-'));
  cleanup(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  const rec = path.join(dir, 'frames');
  const sc = newHost(t, {
    transport: ['/bin/sh', '-c', `tee "$0" | "$1"`, rec, BIN],
    keepalive: { interval: 2 ** 32, timeout: 2 ** 32 },
  });
  await within(sc.handshake(), 'the handshake');
  // A third of a second on the clock of a program: node would have fired
  // a timer set past its range about 300 times meanwhile.
  const term = sc.spawn('/bin/sh', ['-c', 'sleep 0.3; echo done']);
  await waitOutput(term, 'done');
  await sc.close();
  const pings = [];
  new FrameParser((type) => type === T.PING && pings.push(type), () => {}).push(fs.readFileSync(rec));
  assert.strictEqual(pings.length, 0, `${pings.length} PING(s) sent`);
});

test('an idle sidecar with reconnect and a fast keepalive does not hold the event loop', async (t) => {
  const { bridge } = server(t);
  const script = `const { Sidecar } = require(${JSON.stringify(path.join(__dirname, '..'))});
const sc = new Sidecar({ transport: ${JSON.stringify(bridge)}, reconnect: true, keepalive: { interval: 20, timeout: 5000 } });
sc.spawn('/bin/sh', ['-c', 'echo bye']).onExit((e) => console.log('exit', e.exitCode, sc.remote.features.includes('keepalive')));`;
  const child = childProcess.spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  cleanup(t, () => child.kill('SIGKILL')); // should the test fail with it still running
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const code = await within(new Promise((resolve) => child.on('exit', resolve)), 'the script to end by itself');
  assert.strictEqual(code, 0);
  assert.strictEqual(out.trim(), 'exit 0 true');
});

test('a terminal whose OPEN was in flight at the drop is attached, or opened, on the next connection: one terminal either way', async (t) => {
  const { bridge } = server(t);
  const sc = newHost(t, { transport: bridge, reconnect: { initialDelay: 10 } });
  await within(sc.handshake(), 'HELLO');
  // Spawned and dropped in the same tick: the OPEN may or may not have
  // reached the server.
  const term = sc.spawn('/bin/sh', ['-c', 'echo opened; exec sleep 1000'], { env: { PATH: process.env.PATH } });
  let out = '';
  term.onData((d) => (out += d));
  process.kill(sc.pid, 'SIGKILL');
  await next(sc, 'reconnected');
  await within(term.ready, 'the terminal to run');
  await waitUntil(() => out.includes('opened\r\n'), 'its output');
  assert.strictEqual(out, 'opened\r\n');
  const list = await within(sc.list(), 'LISTED');
  assert.deepStrictEqual(list.map((e) => [e.terminalId, e.pid, e.attached]), [[term.terminalId, term.pid, true]]);
  assert.ok(term.pid > 0);
});

test('keepalive: an event loop blocked longer than the timeout does not make a live connection look dead', async (t) => {
  const { bridge } = server(t);
  const sc = newHost(t, { transport: bridge, reconnect: { initialDelay: 10 }, keepalive: { interval: 50, timeout: 200 } });
  const echo = await echoer(sc);
  let drops = 0;
  sc.on('disconnected', () => drops++);
  // The event loop blocks for 1 s right after a PING went out, so its
  // PONG comes while nothing reads it. (A look at the frames sent: the
  // test's only use of the package's insides.)
  const send = sc._sendTo;
  const blocked = new Promise((resolve) => {
    sc._sendTo = function (gen, buf) {
      send.call(this, gen, buf);
      if (buf[4] !== 0x11 || sc._sendTo === send) return; // PING
      sc._sendTo = send;
      setImmediate(() => {
        const until = Date.now() + 1000;
        while (Date.now() < until);
        resolve();
      });
    };
  });
  await within(blocked, 'a PING and the block after it');
  echo.pty.write('after the block\r');
  await waitUntil(() => echo.out.includes('after the block\r\n'), 'the echo');
  assert.strictEqual(drops, 0, sc.lines.join('\n'));
});

test('keepalive without ssh: a stopped bridge is detected, and the drop names the transport once', async (t) => {
  // A bridge that handed the host's pipes to the server carries no frame,
  // and stopping it stalls nothing: this one copies (PTYPLEX_BRIDGE_COPY),
  // as a bridge to an older server does, and stands for a hung transport.
  const bridge = server(t).bridge.slice();
  bridge.splice(2, 0, 'PTYPLEX_BRIDGE_COPY=1');
  const sc = newHost(t, { transport: bridge, reconnect: { initialDelay: 10 }, keepalive: { interval: 200, timeout: 600 } });
  const term = sc.spawn('/bin/sh', ['-c', 'stty -echo; echo ready; exec cat']);
  await waitOutput(term, 'ready\r\n');
  const pid = sc.pid;
  cleanup(t, () => {
    for (const sig of ['SIGCONT', 'SIGKILL']) {
      try {
        process.kill(pid, sig);
      } catch {
        // gone already: the keepalive killed it
      }
    }
  });
  const disconnected = next(sc, 'disconnected');
  const reconnected = next(sc, 'reconnected');
  process.kill(pid, 'SIGSTOP');
  const d = await disconnected;
  assert.match(d.error.message, /dropped: it sent nothing for \d+ ms and did not answer a PING within 600 ms/);
  assert.strictEqual(d.error.message.split(JSON.stringify(sc.transport)).length - 1, 1, d.error.message);
  await reconnected;
  term.write('still here\r');
  await waitOutput(term, 'still here\r\n');
});

test('keepalive: a paste held for longer than the timeout by a program that reads nothing leaves the connection alive; the paste arrives whole once it reads', { skip: process.platform === 'win32' && 'a Unix shell and a FIFO' }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-heldpaste-'));
  cleanup(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  const fifo = path.join(dir, 'go');
  childProcess.execFileSync('mkfifo', [fifo]);
  const timeout = 500;
  const sc = newHost(t, { transport: server(t).bridge, reconnect: { initialDelay: 10 }, keepalive: { interval: 50, timeout } });
  let drops = 0;
  sc.on('disconnected', () => drops++);
  const n = 20 << 20; // past the 16 MiB the server queues
  const term = sc.spawn('/bin/sh', ['-c', `stty raw -echo; echo ready; cat ${fifo} >/dev/null; head -c ${n} >/dev/null; echo GOT`]);
  await waitOutput(term, 'ready');
  term.write(Buffer.alloc(n, 'x'));
  // Four keepalive timeouts with the paste held: the keepalive took the
  // connection for dead within one (the server answered no PING until
  // the program read, and the package sent none while the paste waited).
  await new Promise((resolve) => setTimeout(resolve, 4 * timeout));
  assert.strictEqual(drops, 0, `the connection was taken for dead while the paste was held; log:\n${sc.lines.join('\n')}`);
  fs.closeSync(fs.openSync(fifo, 'w'));
  await waitOutput(term, 'GOT');
  assert.strictEqual(drops, 0);
});

// Holder generations (PROTOCOL.md, "Holder generations"): a resume sends
// the holdGen the server last gave this host, and the server refuses it
// when another connection took the terminal over meanwhile.

// gated is a transport that, while the gate file exists, waits before it
// runs the bridge, as ssh to a host unreachable for a while: a reconnect
// attempt waits there until the test removes the gate.
function gated(t, bridge) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-resume-gate-'));
  cleanup(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  const gate = path.join(dir, 'gate');
  return { gate, transport: ['sh', '-c', 'while [ -e "$0" ]; do sleep 0.01; done; exec "$@"', gate, ...bridge] };
}

// sentAttaches records the bodies of the ATTACH frames sc sends (a look
// at the frames on their way out: the tests' only use of the insides).
// A frame held (behind the handshake, or while disconnected) goes through
// _sendTo again when it is sent: it counts then.
function sentAttaches(sc) {
  const bodies = [];
  const send = sc._sendTo;
  sc._sendTo = function (gen, buf) {
    const out = gen && !gen.suspended && !gen.dead && !gen.held;
    if (out && buf[4] === T.ATTACH) bodies.push(JSON.parse(buf.subarray(5).toString('utf8')));
    return send.call(this, gen, buf);
  };
  return bodies;
}

// awayAndTakenOver: host A holds an echoing terminal; its transport is
// killed and, while its reconnect waits at the gate, host B attaches the
// terminal as holder (its onData from 0: "ready" again). A wrote a line
// in the gap, held for the resume.
async function awayAndTakenOver(t) {
  const { bridge } = server(t);
  const { gate, transport } = gated(t, bridge);
  const a = newHost(t, { transport, reconnect: { initialDelay: 10 } });
  const echo = await echoer(a);
  const id = echo.pty.terminalId;
  const aDetach = [];
  echo.pty.onDetach((e) => aDetach.push(e));
  fs.writeFileSync(gate, '');
  const disconnected = next(a, 'disconnected');
  process.kill(a.pid, 'SIGKILL');
  await disconnected;
  echo.pty.write('typed in the gap\r');
  const b = newHost(t, { transport: bridge, persist: true });
  const bt = b.attach(id, { offset: 0 });
  const bDetach = [];
  bt.onDetach((e) => bDetach.push(e));
  let bOut = '';
  bt.onData((d) => (bOut += d));
  await within(bt.ready, "B's ATTACHED");
  await waitUntil(() => bOut === 'ready\r\n', `B's replay of "ready" (got ${JSON.stringify(bOut)})`);
  const bState = () => ({ out: bOut, detach: bDetach });
  return { a, b, echo, id, gate, aDetach, bt, bState };
}

// resumeThrough removes the gate and waits until A's resume was answered
// if refused: the server reads A's frames in order and writes an ERROR at
// once, as it writes LISTED, so a LIST sent after 'reconnected' is
// answered after the ATTACHes' refusals and after the input held behind
// them was taken or refused. (An ATTACHED comes from the terminal's own
// queue, and may come after that LISTED.)
async function resumeThrough(a, gate) {
  const reconnected = next(a, 'reconnected');
  fs.rmSync(gate);
  await reconnected;
  return within(a.list(), "A's LIST after the resume");
}

test('resume after a takeover: the host that took the terminal over keeps it; the resuming host gets onDetach "taken over", its input of the gap reaches nobody', async (t) => {
  const { a, b, echo, id, gate, aDetach, bt, bState } = await awayAndTakenOver(t);
  await resumeThrough(a, gate);
  assert.deepStrictEqual(aDetach, [{ reason: 'taken over by another connection' }], `A's onDetach; B's: ${JSON.stringify(bState().detach)}; A's log:\n${a.lines.join('\n')}`);
  assert.match(a.lines.join('\n'), new RegExp(`terminal "${id}" not attached again after the connection dropped: ATTACH refused: terminal "${id}" was taken over by another connection since this one held it`));
  assert.throws(() => echo.pty.write('x'), /this host no longer holds it \(taken over by another connection\)/);
  assert.ok(!a.reconnecting);
  // B still holds it, and its input (only its) reaches the program.
  assert.deepStrictEqual((await within(b.list(), "B's LIST")).map((e) => [e.terminalId, e.attached]), [[id, true]]);
  bt.write('after\r');
  await waitUntil(() => bState().out.includes('after\r\n'), `B's echo (got ${JSON.stringify(bState().out)})`);
  assert.strictEqual(bState().out, 'ready\r\nafter\r\n');
  assert.deepStrictEqual(bState().detach, []);
  // A no longer resumes it: another drop leaves it alone.
  const again = next(a, 'reconnected');
  process.kill(a.pid, 'SIGKILL');
  await again;
  await within(a.list(), "A's LIST after a second drop");
  bt.write('still B\r');
  await waitUntil(() => bState().out.includes('still B\r\n'), `B's echo after A's second drop (got ${JSON.stringify(bState().out)})`);
  assert.deepStrictEqual(bState().detach, []);
});

test('resume after a takeover and a detach: the resuming host still gets onDetach "taken over"; the terminal stays detached', async (t) => {
  const { a, b, echo, id, gate, aDetach, bt } = await awayAndTakenOver(t);
  const gone = new Promise((r) => bt.onDetach(r));
  bt.detach();
  assert.strictEqual((await within(gone, "B's DETACHED")).reason, 'detached as asked');
  await resumeThrough(a, gate);
  assert.deepStrictEqual(aDetach, [{ reason: 'taken over by another connection' }], `A's log:\n${a.lines.join('\n')}`);
  assert.throws(() => echo.pty.write('x'), /this host no longer holds it \(taken over by another connection\)/);
  assert.deepStrictEqual((await within(b.list(), "B's LIST")).map((e) => [e.terminalId, e.attached, e.exited]), [[id, false, false]]);
  // The line A held in the gap never reached the program: a host that
  // attaches now sees only "ready".
  const c = newHost(t, { transport: b.transport, persist: true });
  const ct = c.attach(id, { offset: 0 });
  let cOut = '';
  ct.onData((d) => (cOut += d));
  await within(ct.ready, "C's ATTACHED");
  ct.write('from C\r');
  await waitUntil(() => cOut.includes('from C\r\n'), `C's echo (got ${JSON.stringify(cOut)})`);
  assert.strictEqual(cOut, 'ready\r\nfrom C\r\n');
});

test('resume without a takeover sends the holdGen last given, from OPENED and then from the resume\'s ATTACHED, and takes the terminal back as before', async (t) => {
  const { bridge } = server(t);
  const a = newHost(t, { transport: bridge, reconnect: { initialDelay: 10 } });
  const echo = await echoer(a);
  const id = echo.pty.terminalId;
  const detaches = [];
  echo.pty.onDetach((e) => detaches.push(e));
  const sent = sentAttaches(a);
  // LIST's holdGen is the server's word on the current one: compared
  // with, never sent.
  const holdGen = async () => (await within(a.list(), 'LISTED')).find((e) => e.terminalId === id).holdGen;
  const gens = [await holdGen()];
  assert.ok(Number.isSafeInteger(gens[0]) && gens[0] >= 1, `OPENED's holdGen, as LISTED shows it: ${gens[0]}`);
  for (let drop = 0; drop < 2; drop++) {
    const reconnected = next(a, 'reconnected');
    process.kill(a.pid, 'SIGKILL');
    await reconnected;
    gens.push(await holdGen());
    assert.ok(gens[drop + 1] > gens[drop], `the resume's holdGen ${gens[drop + 1]} is past ${gens[drop]}`);
    echo.pty.write(`after drop ${drop}\r`);
    await waitUntil(() => echo.out.includes(`after drop ${drop}\r\n`), `the echo after drop ${drop} (got ${JSON.stringify(echo.out)})`);
  }
  assert.deepStrictEqual(sent.map((b) => [b.terminalId, b.resume, b.mode]), [[id, gens[0], undefined], [id, gens[1], undefined]]);
  assert.deepStrictEqual(detaches, []);
  assert.strictEqual(echo.out, 'ready\r\nafter drop 0\r\nafter drop 1\r\n');
});

test("a resume whose ATTACHED was lost in another drop resumes with the holdGen it had, and the server takes it", async (t) => {
  const { bridge } = server(t);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-resume-mute-'));
  cleanup(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  const mute = path.join(dir, 'mute');
  const relay = [process.execPath, path.join(__dirname, 'fixtures', 'mute-relay.js'), mute, ...bridge];
  const a = newHost(t, { transport: relay, reconnect: { initialDelay: 10 } });
  const echo = await echoer(a);
  const id = echo.pty.terminalId;
  const detaches = [];
  echo.pty.onDetach((e) => detaches.push(e));
  const sent = sentAttaches(a);
  const b = newHost(t, { transport: bridge, persist: true }); // only lists
  const holdGen = async (sc) => (await within(sc.list(), 'LISTED')).find((e) => e.terminalId === id).holdGen;
  const g0 = await holdGen(a);
  // The next connection carries the resume's ATTACH out and loses every
  // answer: once the server has taken it (a new holdGen, which B's LIST
  // shows), that connection dies too.
  fs.writeFileSync(mute, '');
  const first = next(a, 'reconnected');
  process.kill(a.pid, 'SIGKILL');
  await first;
  let g1;
  await waitUntil(async () => (g1 = await holdGen(b)) > g0, `the server to take the resume (holdGen ${g1}, was ${g0})`);
  fs.rmSync(mute);
  const second = next(a, 'reconnected');
  process.kill(a.pid, 'SIGKILL');
  await second;
  const g2 = await holdGen(a);
  assert.ok(g2 > g1, `the second resume's holdGen ${g2} is past ${g1}`);
  assert.deepStrictEqual(sent.map((e) => [e.terminalId, e.resume]), [[id, g0], [id, g0]]);
  echo.pty.write('after two drops\r');
  await waitUntil(() => echo.out.includes('after two drops\r\n'), `the echo (got ${JSON.stringify(echo.out)}); log:\n${a.lines.join('\n')}`);
  assert.strictEqual(echo.out, 'ready\r\nafter two drops\r\n');
  assert.deepStrictEqual(detaches, []);
});

test('a viewer resumes as a viewer, without resume; once handed the terminal, it resumes with the holdGen of the hand-over, and a takeover since is reported', async (t) => {
  const { bridge } = server(t);
  const { gate, transport } = gated(t, bridge);
  const h = newHost(t, { transport: bridge, persist: true });
  const held = h.spawn('/bin/sh', ['-c', 'stty -echo; echo ready; exec cat'], { env: { PATH: process.env.PATH } });
  await waitOutput(held, 'ready\r\n');
  const id = held.terminalId;
  const v = newHost(t, { transport, reconnect: { initialDelay: 10 } });
  const sent = sentAttaches(v);
  const view = v.attach(id, { view: true });
  let out = '';
  view.onData((d) => (out += d));
  await within(view.ready, 'the viewer attached');
  const holdGen = async () => (await within(v.list(), 'LISTED')).find((e) => e.terminalId === id).holdGen;
  // Dropped as a viewer: it comes back viewing, with no resume, under a
  // new viewer number (which its ATTACHED brings: that comes from the
  // terminal's queue, and may come after a LISTED asked later).
  const before = view.viewer;
  let reconnected = next(v, 'reconnected');
  process.kill(v.pid, 'SIGKILL');
  await reconnected;
  await waitUntil(() => view.viewer !== before, "the viewer's new number");
  assert.ok(view.viewing);
  assert.deepStrictEqual(sent.slice(1).map((e) => [e.mode, e.resume]), [['view', undefined]]);
  // Handed over: the ATTACHED "mode":"hold" carries the holdGen it resumes with.
  held.handOver(view.viewer);
  await waitUntil(() => !view.viewing, `the viewer ${view.viewer} to become the holder; holder's log:\n${h.lines.join('\n')}\nviewer's log:\n${v.lines.join('\n')}`);
  const gHand = await holdGen();
  reconnected = next(v, 'reconnected');
  process.kill(v.pid, 'SIGKILL');
  await reconnected;
  const gResumed = await holdGen();
  assert.ok(gResumed > gHand, `${gResumed} after ${gHand}`);
  assert.deepStrictEqual(sent.slice(2).map((e) => [e.mode, e.resume]), [[undefined, gHand]]);
  view.write('mine\r');
  await waitUntil(() => out.includes('mine\r\n'), `the echo (got ${JSON.stringify(out)})`);
  // Dropped again, and the first host takes it back meanwhile.
  const detaches = [];
  view.onDetach((e) => detaches.push(e));
  fs.writeFileSync(gate, '');
  const down = next(v, 'disconnected');
  process.kill(v.pid, 'SIGKILL');
  await down;
  const back = h.attach(id, { offset: 0 });
  await within(back.ready, "the first host's ATTACHED");
  await resumeThrough(v, gate);
  assert.deepStrictEqual(sent.slice(3).map((e) => [e.mode, e.resume]), [[undefined, gResumed]]);
  assert.deepStrictEqual(detaches, [{ reason: 'taken over by another connection' }], `log:\n${v.lines.join('\n')}`);
  assert.deepStrictEqual((await within(h.list(), 'LISTED')).map((e) => [e.terminalId, e.attached]), [[id, true]]);
});

test('a server that gives no holdGen (an older one): the resume sends no resume and takes the terminal back, as before holder generations', async (t) => {
  const { bridge } = server(t);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-resume-old-'));
  cleanup(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  const relay = ['env', 'PTYPLEX_RELAY_NO_HOLDGEN=1', process.execPath, path.join(__dirname, 'fixtures', 'mute-relay.js'), path.join(dir, 'never'), ...bridge];
  const { gate, transport } = gated(t, relay);
  const a = newHost(t, { transport, reconnect: { initialDelay: 10 } });
  const echo = await echoer(a);
  const id = echo.pty.terminalId;
  const sent = sentAttaches(a);
  assert.strictEqual((await within(a.list(), 'LISTED')).find((e) => e.terminalId === id).holdGen, undefined, 'the relay hides holdGen');
  const aDetach = [];
  echo.pty.onDetach((e) => aDetach.push(e));
  fs.writeFileSync(gate, '');
  const down = next(a, 'disconnected');
  process.kill(a.pid, 'SIGKILL');
  await down;
  const b = newHost(t, { transport: bridge, persist: true });
  const bt = b.attach(id, { offset: 0 });
  const bDetached = within(new Promise((r) => bt.onDetach(r)), "B's onDetach");
  await within(bt.ready, "B's ATTACHED");
  await resumeThrough(a, gate);
  assert.deepStrictEqual(sent.map((e) => [e.terminalId, e.resume]), [[id, undefined]]);
  assert.strictEqual((await bDetached).reason, 'taken over by another connection');
  assert.deepStrictEqual(aDetach, []);
  echo.pty.write('taken back\r');
  await waitUntil(() => echo.out.includes('taken back\r\n'), `the echo (got ${JSON.stringify(echo.out)})`);
});
