// The package loads with import as well as require, with the same objects.
import test from 'node:test';
import assert from 'node:assert';
import { createRequire } from 'node:module';
// open and native are node-pty's exports too: a named import of them must link.
import ptyplex, { spawn, fork, createTerminal, open, native, Sidecar, resolveSidecar } from 'ptyplex';

const require = createRequire(import.meta.url);

test('import and require give the same API', () => {
  const cjs = require('ptyplex');
  assert.strictEqual(Sidecar, cjs.Sidecar);
  assert.strictEqual(spawn, cjs.spawn);
  assert.strictEqual(resolveSidecar, cjs.resolveSidecar);
  assert.strictEqual(ptyplex.spawn, cjs.spawn);
  // node-pty's deprecated aliases.
  assert.strictEqual(fork, cjs.spawn);
  assert.strictEqual(createTerminal, cjs.spawn);
  assert.strictEqual(typeof new Sidecar().spawn, 'function');
});

test("node-pty's open and native are exported, in both module systems", () => {
  const cjs = require('ptyplex');
  for (const name of ['spawn', 'fork', 'createTerminal', 'open', 'native']) {
    assert.ok(Object.hasOwn(cjs, name), `require('ptyplex') has ${name}`);
    assert.ok(Object.hasOwn(ptyplex, name), `the default export has ${name}`);
  }
  assert.strictEqual(open, cjs.open);
  assert.strictEqual(native, null);
  assert.throws(() => open(), /ptyplex does not support open\(\)/);
});
