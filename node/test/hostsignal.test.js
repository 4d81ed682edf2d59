'use strict';
// Signals meant for the host: the sidecar is not in its process group.
const test = require('node:test');
const assert = require('node:assert');
const path = require('path');
const readline = require('readline');
const { spawn } = require('child_process');
const { newSidecar, run, waitUntil, alive, within, BIN } = require('./helpers');

test("a ^C to the host's process group reaches the host, not its terminals; the host's SIGKILL still ends them", { skip: process.platform === 'win32' && 'process groups' }, async (t) => {
  // detached: a group of its own, as a shell runs a job.
  const host = spawn(process.execPath, [path.join(__dirname, 'fixtures', 'signal-host.js'), BIN], { detached: true, stdio: ['pipe', 'pipe', 'inherit'] });
  t.after(() => {
    try {
      process.kill(-host.pid, 'SIGKILL');
    } catch {
      // gone already
    }
  });
  const lines = readline.createInterface({ input: host.stdout });
  const waiters = [];
  const seen = [];
  lines.on('line', (l) => {
    seen.push(l);
    for (const w of waiters.splice(0)) w();
  });
  const line = (re, what) =>
    within(
      new Promise((resolve) => {
        const look = () => {
          const l = seen.find((x) => re.test(x));
          if (l) resolve(l);
          else waiters.push(look);
        };
        look();
      }),
      what,
    );
  await line(/^ready$/, 'the terminal to run');
  // What the terminal driver does on ^C: SIGINT to the foreground group.
  process.kill(-host.pid, 'SIGINT');
  await line(/^sigint$/, 'the host to get SIGINT');
  host.stdin.write('go\n');
  const exit = await line(/^exit /, "the terminal's exit");
  assert.strictEqual(exit, `exit {"exitCode":0,"signal":0} ${JSON.stringify('up\r\ngo\r\nchild-finished\r\n')}`, seen.join('\n'));

  const [, sidecarPid, childPid] = (await line(/^sleeping /, 'the second terminal')).split(' ').map(Number);
  assert.ok(alive(sidecarPid) && alive(childPid));
  host.kill('SIGKILL');
  await waitUntil(() => !alive(sidecarPid) && !alive(childPid), 'the sidecar and the terminal to end with their host');
});

test('a terminal opened from the onExit of one a signalled sidecar ended runs on a new sidecar', async (t) => {
  const sc = newSidecar(t);
  const first = sc.spawn('sleep', ['1000']);
  await first.ready;
  const old = sc.pid;
  const second = new Promise((resolve) => {
    first.onExit(() => resolve(run(sc.spawn('/bin/sh', ['-c', 'echo respawned']))));
  });
  process.kill(old, 'SIGTERM');
  const r = await within(second, 'the second terminal');
  assert.deepStrictEqual(r, { exitCode: 0, signal: 0, output: 'respawned\r\n' }, sc.lines.join('\n'));
  assert.notStrictEqual(sc.pid, old);
  assert.ok(sc.lines.some((l) => l.includes('opening it on a new sidecar')), sc.lines.join('\n'));
});
