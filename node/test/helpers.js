'use strict';
// Shared pieces of the package's tests. They drive the real sidecar binary
// (bin/ptyplex-sidecar, built by `make build`) with real programs.

const path = require('path');
const fs = require('fs');
const { Sidecar } = require('..');

const BIN = process.env.PTYPLEX_SIDECAR_PATH || path.join(__dirname, '..', '..', 'bin', 'ptyplex-sidecar');
if (!fs.existsSync(BIN)) throw new Error(`${BIN} is missing: run make build first`);
// Generous: the tests run on small, busy machines; waits end at their event.
const DEADLINE = 30000;

// soakSize picks a loop's size: the short round make test-node runs, or
// the full one make soak runs (PTYPLEX_SOAK=1), as internal/testing/testsize
// does for the Go tests. The short round still crosses every path the full
// one does; the full one finds what is rare.
function soakSize(short, full) {
  return process.env.PTYPLEX_SOAK === '1' ? full : short;
}

function newSidecar(t, options = {}) {
  const lines = [];
  const sc = new Sidecar({ path: BIN, logger: (l) => lines.push(l), ...options });
  sc.lines = lines;
  t.after(() => sc.close());
  return sc;
}

// within rejects if p does not settle within ms, naming what was awaited.
function within(p, what, ms = DEADLINE) {
  let timer;
  const timeout = new Promise((_, rej) => {
    timer = setTimeout(() => rej(new Error(`timed out waiting for ${what}`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

// run collects a terminal's output until onExit; exit.output is what had
// arrived when onExit fired.
function run(term) {
  const chunks = [];
  term.onData((d) => chunks.push(d));
  return within(
    new Promise((resolve) => {
      term.onExit((e) => {
        const output = chunks.length && Buffer.isBuffer(chunks[0]) ? Buffer.concat(chunks) : chunks.join('');
        resolve({ ...e, output });
      });
    }),
    `exit of ${term._file}`,
  );
}

// waitOutput resolves with everything received once it contains want.
function waitOutput(term, want, what = JSON.stringify(want)) {
  let got = '';
  let disp;
  const p = new Promise((resolve, reject) => {
    disp = term.onData((d) => {
      got += d;
      if (got.includes(want)) resolve(got);
    });
    term.onExit(() => reject(new Error(`exited before output ${what}; got ${JSON.stringify(got.slice(-200))}`)));
  });
  return within(p, `output ${what}`).finally(() => disp.dispose());
}

// waitUntil polls cond (for states that send no event, such as a process
// disappearing) until it holds or the deadline passes.
async function waitUntil(cond, what, ms = DEADLINE) {
  const end = Date.now() + ms;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function alive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

// cleanup registers fn to run after test t, the last registered first, as
// Go's t.Cleanup does (node's t.after runs its hooks in the order they were
// registered). So a host closes before the persistent server it used is
// stopped, and that before the directory holding the server's socket is
// removed: in the other order the stop finds no socket, or a host that
// reconnects starts a new server, and the server outlives the test.
const stacks = new WeakMap();
function cleanup(t, fn) {
  let stack = stacks.get(t);
  if (!stack) {
    stack = [];
    stacks.set(t, stack);
    t.after(async () => {
      let first;
      while (stack.length) {
        try {
          await stack.pop()();
        } catch (err) {
          first ??= err;
        }
      }
      if (first) throw first;
    });
  }
  stack.push(fn);
}

module.exports = { BIN, DEADLINE, soakSize, newSidecar, within, run, waitOutput, waitUntil, alive, cleanup };
