'use strict';
// The package on Windows, run under `wine node.exe` by make test-windows
// (and on a real Windows machine as it is): node-pty's API over the
// ConPTY sidecar, and a host written the way LinkCode's is.
const test = require('node:test');
const assert = require('node:assert');

if (process.platform !== 'win32') {
  test('Windows only', { skip: 'these tests run on Windows (make test-windows runs them under Wine)' }, () => {});
  return;
}

const fs = require('fs');
const os = require('os');
const path = require('path');
const childProcess = require('child_process');
const { BIN, newSidecar, within, run, waitOutput, waitUntil } = require('./helpers');
const { FrameParser, controlFrame, T } = require('../lib/frames');
const { resolveSidecar } = require('../lib/resolve');

function gone(pid) {
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return e.code === 'ESRCH';
  }
}

test('spawn cmd.exe: onData gets its output, onExit its exit code', async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn('cmd.exe', ['/c', 'echo from-cmd-via-node& exit 4'], { cols: 100, rows: 30, useConpty: true, conptyInheritCursor: false });
  const e = await run(term);
  assert.match(e.output, /from-cmd-via-node/);
  assert.strictEqual(e.exitCode, 4);
  assert.strictEqual(e.signal, 0);
});

test("node-pty's module-level spawn(): cmd.exe on the package's own sidecar", async (t) => {
  const pty = require('..');
  t.after(() => pty.defaultSidecar().close());
  const term = pty.spawn('cmd.exe', ['/c', 'echo via-module-spawn %TERM%& exit 9'], {
    name: 'xterm-256color', cols: 80, rows: 24, cwd: os.tmpdir(), env: process.env, useConpty: true, conptyInheritCursor: true,
  });
  const exited = run(term);
  await within(term.ready, 'the terminal to open');
  assert.ok(term.pid > 0, `pid ${term.pid}`);
  const e = await exited;
  assert.match(e.output, /via-module-spawn xterm-256color/);
  assert.deepStrictEqual({ exitCode: e.exitCode, signal: e.signal }, { exitCode: 9, signal: 0 });
});

test('the default file is %COMSPEC%, typed input gets its answer, SIGQUIT and SIGBREAK are refused', async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn(undefined, [], { env: { ...process.env } });
  assert.strictEqual(term.process, process.env.COMSPEC);
  term.write('set /a 6*7+1000\r');
  await waitOutput(term, '1042');
  // A signal with no Windows meaning is refused, and the terminal runs on.
  const refused = new Promise((resolve) => term.on('error', resolve));
  term.kill('SIGQUIT');
  const err = await within(refused, "the sidecar's refusal of SIGQUIT");
  assert.match(err.message, /SIGQUIT.*not supported on Windows/);
  // SIGBREAK is a Windows name (21, what node's kill sends there), and the
  // pseudo-console has no key that raises CTRL_BREAK_EVENT: refused too.
  const refusedBreak = new Promise((resolve) => term.once('error', resolve));
  term.kill('SIGBREAK');
  const errBreak = await within(refusedBreak, "the sidecar's refusal of SIGBREAK");
  assert.match(errBreak.message, /SIGBREAK.*not supported on Windows/);
  term.write('exit 0\r');
  const e = await run(term);
  assert.strictEqual(e.exitCode, 0);
});

test('kill() ends the whole tree', async (t) => {
  const sc = newSidecar(t);
  const script = "const cp=require('child_process');" +
    "const kids=[0,1].map(()=>cp.spawn(process.execPath,['-e','setInterval(()=>{},1e6)'],{stdio:'ignore'}));" +
    "console.log('PIDS '+[process.pid,...kids.map(k=>k.pid)].join(' ')+' READY');setInterval(()=>{},1e6)";
  const term = sc.spawn(process.execPath, ['-e', script], {});
  const out = await waitOutput(term, 'READY');
  const pids = out.match(/PIDS ([\d ]+) READY/)[1].trim().split(' ').map(Number);
  pids.push(term.pid);
  assert.ok(pids.every((p) => !gone(p)), `the tree runs: ${pids}`);
  const exited = run(term);
  term.kill();
  const e = await exited;
  // The job ended by SIGHUP's meaning, reported as node-pty reports a
  // signal death (node/README.md).
  assert.deepStrictEqual({ exitCode: e.exitCode, signal: e.signal }, { exitCode: 0, signal: 1 });
  await waitUntil(() => pids.every(gone), `the end of processes ${pids}`);
});

// node-pty's args as a string on Windows: the command line after the
// program as it is, the only way to give cmd.exe /c a command that holds
// quotes (an array's "a b" reaches cmd.exe as \"a b\"), and to run a
// program whose path has spaces through it.
test('args as a string: cmd.exe /c gets the line as it is', async (t) => {
  const sc = newSidecar(t);
  const e = await run(sc.spawn('cmd.exe', '/c echo "a b"& exit 3', {}));
  // conhost's own sequences (clear, cursor) taken out.
  assert.match(e.output.replace(/\x1b\[[0-?]*[ -/]*[@-~]/g, ''), /^"a b" ?\r?$/m);
  assert.strictEqual(e.exitCode, 3);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'with spaces '));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const prog = path.join(dir, 'node copy.exe');
  fs.copyFileSync(process.execPath, prog);
  const code = await run(sc.spawn('cmd.exe', `/d /c ""${prog}" -e "process.exit(5)""`, {}));
  assert.strictEqual(code.exitCode, 5, code.output);
});

test('resolveSidecar finds ptyplex-sidecar.exe on PATH', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-path-'));
  const exe = path.join(dir, 'ptyplex-sidecar.exe');
  fs.copyFileSync(BIN, exe);
  try {
    assert.strictEqual(resolveSidecar({ PATH: dir }).toLowerCase(), exe.toLowerCase());
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('resolveSidecar finds ptyplex-sidecar.exe through a quoted PATH entry', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex path; quoted-'));
  const exe = path.join(dir, 'ptyplex-sidecar.exe');
  fs.copyFileSync(BIN, exe);
  try {
    assert.strictEqual(resolveSidecar({ PATH: `"${dir}"` }).toLowerCase(), exe.toLowerCase());
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// LinkCode's desktop host (sidecar.ts, whose source is not in this
// repository) on Windows, as its issue describes it: it looks for
// linkcode-pty.exe among its resources, spawns it with windowsHide, and
// opens %COMSPEC% (an already resolved path) speaking the seed protocol:
// no HELLO, no extensions. ptyplex-sidecar.exe under that name must serve
// it unchanged.
test("LinkCode's host path: linkcode-pty.exe, windowsHide, %COMSPEC%", async (t) => {
  const resources = fs.mkdtempSync(path.join(os.tmpdir(), 'linkcode-'));
  t.after(() => fs.rmSync(resources, { recursive: true, force: true }));
  fs.copyFileSync(BIN, path.join(resources, 'linkcode-pty.exe'));
  const binary = path.join(resources, process.platform === 'win32' ? 'linkcode-pty.exe' : 'linkcode-pty');
  assert.ok(fs.existsSync(binary));
  const child = childProcess.spawn(binary, [], { stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
  t.after(() => child.kill());
  let output = '';
  const exit = new Promise((resolve, reject) => {
    const parser = new FrameParser(
      (type, body) => {
        const msg = JSON.parse(body.toString());
        if (type === T.EXIT) resolve(msg);
        if (type === T.ERROR) reject(new Error(msg.message));
      },
      (id, data) => { output += data.toString('utf8'); },
    );
    child.stdout.on('data', (c) => parser.push(c));
  });
  const shell = process.env.COMSPEC;
  assert.ok(shell && path.isAbsolute(shell), `COMSPEC is ${shell}`);
  child.stdin.write(controlFrame(T.OPEN, { terminalId: 'lc1', cols: 80, rows: 24, cmd: shell, args: ['/c', 'echo linkcode-path& exit 6'], cwd: os.tmpdir(), env: { ...process.env } }));
  const msg = await within(exit, 'EXIT from linkcode-pty.exe');
  assert.match(output, /linkcode-path/);
  assert.strictEqual(msg.exitCode, 6);
  const closed = new Promise((r) => child.on('exit', (code) => r(code)));
  child.stdin.end();
  assert.strictEqual(await within(closed, 'linkcode-pty.exe to exit'), 0);
});
