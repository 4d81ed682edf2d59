'use strict';
// A listener that throws: as under node-pty, an ordinary uncaught
// exception, and every terminal goes on.
const test = require('node:test');
const assert = require('node:assert');
const { execFile } = require('child_process');
const { BIN, DEADLINE } = require('./helpers');

// The host runs in a node process of its own, so that it can have a
// process.on('uncaughtException') handler; it prints what happened as JSON.
// Each step waits on the one before (input releases the next line), so
// nothing depends on timing.
const HOST = `
const { Sidecar } = require(${JSON.stringify(require.resolve('..'))});
const sc = new Sidecar({ path: ${JSON.stringify(BIN)} });
const r = { uncaught: [], a: '', b: '', exits: {} };
const a = sc.spawn('/bin/sh', ['-c', 'echo a1; read x; echo a2']);
const b = sc.spawn('/bin/sh', ['-c', 'read x; echo b1']);
let threw = false;
// a's onData throws on its first chunk; a's on('exit') throws too.
a.onData((d) => {
  r.a += d;
  if (!threw) { threw = true; throw new Error('data-bug'); }
});
a.on('exit', () => { throw new Error('exit-bug'); });
b.on('data', (d) => { r.b += d; });
process.on('uncaughtException', (e) => {
  r.uncaught.push(e.message);
  // Each exception lets the next step go: a prints a2 and exits, then b.
  if (e.message === 'data-bug') a.write('go\\r');
  if (e.message === 'exit-bug') b.write('go\\r');
});
a.onExit((e) => { r.exits.a = e; });
b.onExit((e) => { r.exits.b = e; });
// Node exits once no terminal is left.
process.on('exit', () => process.stdout.write(JSON.stringify(r)));
`;

test('a listener that throws is an uncaught exception; the terminals go on', async () => {
  // timeout: a host whose terminals never end is killed, and fails here.
  const out = await new Promise((res, rej) =>
    execFile(process.execPath, ['-e', HOST], { timeout: DEADLINE }, (err, stdout, stderr) => (err ? rej(new Error(`${err.message}\n${stdout}\n${stderr}`)) : res(stdout))),
  );
  const r = JSON.parse(out);
  assert.deepStrictEqual(r.uncaught, ['data-bug', 'exit-bug']);
  assert.match(r.a, /a1[^]*a2/);
  assert.match(r.b, /b1/);
  assert.deepStrictEqual(r.exits, { a: { exitCode: 0, signal: 0 }, b: { exitCode: 0, signal: 0 } });
});
