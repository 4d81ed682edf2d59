'use strict';
const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { newSidecar, run, waitOutput, waitUntil } = require('./helpers');

test('env, cwd and name reach the child; env replaces the environment', async (t) => {
  const sc = newSidecar(t);
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-node-')));
  t.after(() => fs.rmSync(dir, { recursive: true }));
  const r = await run(
    sc.spawn('/bin/sh', ['-c', 'echo "term=$TERM foo=$FOO home=${HOME-unset} cwd=$(pwd)"'], {
      name: 'xterm-test',
      cwd: dir,
      env: { FOO: 'bar baz', PATH: process.env.PATH },
    }),
  );
  assert.strictEqual(r.output, `term=xterm-test foo=bar baz home=unset cwd=${dir}\r\n`);
});

test('an explicit env without PATH: a bare name is found on the default path, as execvp finds it', async (t) => {
  const sc = newSidecar(t);
  const r = await run(sc.spawn('sh', ['-c', 'echo ran'], { env: { HOME: '/tmp', LANG: 'C.UTF-8' } }));
  assert.deepStrictEqual(r, { exitCode: 0, signal: 0, output: 'ran\r\n' });
});

test('an executable without a #! line runs under /bin/sh, as execvp runs it', async (t) => {
  const sc = newSidecar(t);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-node-'));
  t.after(() => fs.rmSync(dir, { recursive: true }));
  const file = path.join(dir, 'noshebang');
  fs.writeFileSync(file, 'echo "script-ran $1"\n', { mode: 0o755 });
  const r = await run(sc.spawn(file, ['arg']));
  assert.deepStrictEqual(r, { exitCode: 0, signal: 0, output: 'script-ran arg\r\n' });
});

test('defaults: process.env, process.cwd(), TERM from env or xterm, 80x24', async (t) => {
  const sc = newSidecar(t);
  process.env.PTYPLEX_NODE_TEST = 'inherited';
  process.env.TMUX = 'host-tmux';
  t.after(() => {
    delete process.env.PTYPLEX_NODE_TEST;
    delete process.env.TMUX;
  });
  // An inherited environment loses the host terminal's variables (TMUX,
  // COLUMNS, ...), as with node-pty; PWD is the child's directory.
  const term = sc.spawn('/bin/sh', ['-c', 'echo "$PTYPLEX_NODE_TEST $(pwd) $(stty size) ${TMUX-none} $PWD"'], {
    cols: 0, // node-pty: 0 means the default
  });
  assert.deepStrictEqual([term.cols, term.rows], [80, 24]);
  const r = await run(term);
  assert.strictEqual(r.output, `inherited ${process.cwd()} 24 80 none ${process.cwd()}\r\n`);
  // An explicit environment is the caller's: kept whole (node-pty's rule).
  const explicit = sc.spawn('/bin/sh', ['-c', 'echo "${TMUX-none} ${COLUMNS-none} $PWD"'], {
    env: { ...process.env, TMUX: 'x', COLUMNS: '99' },
    cwd: '/',
  });
  assert.strictEqual((await run(explicit)).output, 'x 99 /\r\n');
});

test('options node-pty refuses or coerces', async (t) => {
  const sc = newSidecar(t);
  assert.throws(() => sc.spawn('sh', [], { cols: '80' }), /cols must be a number \(not a string\)/);
  assert.throws(() => sc.spawn('sh', [], { name: 5 }), /name must be a string/);
  // node-pty's words: a command-line string is for Windows.
  assert.throws(() => sc.spawn('sh', '-c true'), /^Error: args as a string is not supported on unix\.$/);
  // A uid other than our own would run the child as someone else: refused, not ignored.
  if (process.getuid) {
    assert.throws(() => sc.spawn('sh', [], { uid: process.getuid() + 1 }), /does not support the uid option/);
    assert.throws(() => sc.spawn('sh', [], { gid: process.getgid() + 1 }), /does not support the gid option/);
  }
  const term = sc.spawn('/bin/sh', ['-c', 'stty size'], { cols: 100.7, rows: 70000, uid: process.getuid && process.getuid() });
  assert.deepStrictEqual([term.cols, term.rows], [100, 65535]);
  assert.strictEqual((await run(term)).output, '65535 100\r\n');
  // No file: node-pty runs sh.
  const sh = sc.spawn(undefined, ['-c', 'echo from-sh']);
  assert.strictEqual((await run(sh)).output, 'from-sh\r\n');
});

test('strings are written in the terminal\'s encoding', async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn('/bin/sh', ['-c', 'stty raw -echo; head -c 2 | od -An -tx1'], { encoding: 'latin1' });
  const done = run(term);
  term.write('é\n');
  const r = await done;
  assert.match(r.output, /e9 0a/);
});

test('once the terminal has ended, process is the file it ran, as in node-pty', async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn('/bin/sh', ['-c', 'exec sleep 1000']);
  const done = run(term);
  await waitUntil(async () => (await term.getProcess()) === 'sleep', 'sleep in the foreground');
  term.kill();
  await done;
  assert.strictEqual(term.process, '/bin/sh');
  assert.strictEqual(await term.getProcess(), '/bin/sh');
});

test('process names the foreground process; pid is the child', async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn('/bin/sh', ['-c', 'set -m; echo ready; sleep 1000; echo done; read x']);
  assert.strictEqual(term.process, '/bin/sh');
  const done = run(term);
  await waitOutput(term, 'ready');
  assert.ok(term.pid > 0);
  // Once the shell has handed the terminal to sleep, both ways of asking
  // say so (the getter reads /proc on Linux, getProcess asks the sidecar).
  await waitUntil(() => term.process === 'sleep', 'process to be sleep');
  await waitUntil(async () => (await term.getProcess()) === 'sleep', 'getProcess to be sleep');
  // Ended by this test, not kill(signal), which signals the shell: with
  // set -m, sleep leads the terminal's foreground process group.
  const stat = fs.readFileSync(`/proc/${term.pid}/stat`, 'latin1');
  const tpgid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[5]);
  process.kill(tpgid, 'SIGTERM');
  await waitOutput(term, 'done');
  assert.strictEqual(await term.getProcess(), '/bin/sh');
  assert.strictEqual(term.process, '/bin/sh');
  term.kill();
  await done;
});

test('a relative cwd is taken from this process, not the sidecar', async (t) => {
  const sc = newSidecar(t);
  await run(sc.spawn('true')); // the sidecar starts here
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-node-')));
  fs.mkdirSync(path.join(dir, 'sub'));
  const was = process.cwd();
  process.chdir(dir);
  t.after(() => {
    process.chdir(was);
    fs.rmSync(dir, { recursive: true });
  });
  const r = await run(sc.spawn('pwd', [], { cwd: 'sub' }));
  assert.strictEqual(r.output, `${dir}/sub\r\n`);
});

test('ptsName is the slave device the child has open (Linux)', { skip: process.platform !== 'linux' && 'reads /proc' }, async (t) => {
  const sc = newSidecar(t);
  const term = sc.spawn('/bin/sh', ['-c', 'tty; read x']);
  const atOnce = term.ptsName; // right after spawn, as node-pty has it
  const out = await waitOutput(term, '\r\n');
  assert.strictEqual(atOnce, term.ptsName);
  assert.match(term.ptsName, /^\/dev\/pts\/\d+$/);
  assert.ok(out.includes(term.ptsName), `tty printed ${JSON.stringify(out)}, ptsName ${term.ptsName}`);
  const done = run(term);
  term.write('\n');
  await done;
});
