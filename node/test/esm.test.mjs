// The package loads with import as well as require, with the same objects.
import test from 'node:test';
import assert from 'node:assert';
import { createRequire } from 'node:module';
import ptyplex, { spawn, fork, createTerminal, Sidecar, resolveSidecar } from 'ptyplex';

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
