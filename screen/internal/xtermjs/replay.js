// replay.js feeds byte streams to xterm.js headless and prints what it
// shows, for the screen package's differential test (diff_test.go).
// Protocol: one JSON object per input line, {"cols":N,"rows":N,"data":
// "<base64>"}; one JSON object per output line, in the same order,
// {"lines":[...],"row":R,"col":C} (lines trimmed of trailing blanks,
// cursor 0-based, a pending wrap shown on the last column), or
// {"error":"..."} when xterm.js threw. The process exits when stdin closes.
'use strict';
const { Terminal } = require('@xterm/headless');
const { Unicode11Addon } = require('@xterm/addon-unicode11');
const readline = require('readline');

let current = null; // {term, resolve} of the request being replayed

// xterm.js parses asynchronously, so an exception inside it cannot be
// caught around write(): it surfaces here, and only ends that request.
process.on('uncaughtException', (err) => {
  if (!current) throw err;
  const c = current;
  current = null;
  try { c.term.dispose(); } catch (_) { /* already broken */ }
  c.resolve({ error: String(err && err.message || err) });
});

function snapshot(term) {
  const buf = term.buffer.active;
  const lines = [];
  for (let y = 0; y < term.rows; y++) {
    const l = buf.getLine(buf.baseY + y);
    lines.push(l ? l.translateToString(true) : '');
  }
  return { lines, row: buf.cursorY, col: Math.min(buf.cursorX, term.cols - 1) };
}

function replay(req) {
  return new Promise((resolve) => {
    const term = new Terminal({ cols: req.cols, rows: req.rows, scrollback: 1000, allowProposedApi: true });
    // Unicode 11 widths (emoji wide), as xterm.js is set up in practice
    // (VS Code, ttyd); the built-in default is Unicode 6.
    term.loadAddon(new Unicode11Addon());
    term.unicode.activeVersion = '11';
    current = { term, resolve };
    term.write(Buffer.from(req.data, 'base64'), () => {
      if (!current || current.term !== term) return;
      current = null;
      const res = snapshot(term);
      term.dispose();
      resolve(res);
    });
  });
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
let chain = Promise.resolve();
rl.on('line', (line) => {
  if (!line.trim()) return;
  const req = JSON.parse(line);
  chain = chain.then(() => replay(req)).then((res) => {
    process.stdout.write(JSON.stringify(res) + '\n');
  });
});
