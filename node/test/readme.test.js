'use strict';
const test = require('node:test');
const assert = require('node:assert');
const childProcess = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

// The state file of node/README.md's persist example: a host killed while
// it saves must leave the previous file whole, or its next start dies
// parsing half a JSON file. The README's own save line runs in a child
// whose write stops half way and then SIGKILLs the child, as a kill in
// the middle of the write would.
test('README: the persist example saves its state file whole or not at all', (t) => {
  const readme = fs.readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
  const line = readme.split('\n').find((l) => l.startsWith('const save = '));
  assert.ok(line, 'node/README.md has no line starting "const save = "');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-readme-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const script = [
    "const fs = require('fs');",
    "const STATE = 'terminals.json';",
    'const saved = { a: 1 };',
    line,
    'save();',
    "saved.b = 'x'.repeat(1 << 16);",
    'const write = fs.writeFileSync;',
    "fs.writeFileSync = (file, data) => { write(file, data.slice(0, data.length >> 1)); process.kill(process.pid, 'SIGKILL'); };",
    'save();',
  ].join('\n');
  const r = childProcess.spawnSync(process.execPath, ['-e', script], { cwd: dir, encoding: 'utf8' });
  assert.strictEqual(r.signal, 'SIGKILL', `the child was not killed in its second save: ${r.status} ${r.stderr}`);
  const text = fs.readFileSync(path.join(dir, 'terminals.json'), 'utf8');
  let state;
  assert.doesNotThrow(() => (state = JSON.parse(text)), `the state file after a kill mid-save: ${text.slice(0, 80)}...`);
  assert.deepStrictEqual(state, { a: 1 });
});
