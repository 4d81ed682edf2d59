// modes.js feeds byte streams to xterm.js headless and prints what it
// shows and the modes it is in, for sidecar/persist's SNAPSHOT
// differential (e2e_snapmodes_test.go): one JSON request per input line,
// {"cols":N,"rows":N,"data":"<base64>"}; one JSON answer per output line,
// in the same order. Besides the public API (buffer.active.type, modes),
// it reads xterm.js's internals for what the API does not expose (mouse
// encoding, cursor style, scroll region, charsets, tab stops, the pen),
// so it is tied to the pinned @xterm/headless version.
'use strict';
const { Terminal } = require('@xterm/headless');
const { Unicode11Addon } = require('@xterm/addon-unicode11');
const readline = require('readline');

// charsetName names a G0-G3 designation by the glyph it maps 'q' to (DEC
// special graphics: a line), or 'B' for ASCII.
function charsetName(cs) {
  if (!cs) return 'B';
  return 'map:' + Object.keys(cs).sort().map((k) => k + cs[k]).join('').slice(0, 40);
}

function state(term, title) {
  const buf = term.buffer.active;
  const core = term._core;
  const lines = [];
  for (let y = 0; y < term.rows; y++) {
    const l = buf.getLine(buf.baseY + y);
    lines.push(l ? l.translateToString(true) : '');
  }
  const b = core.buffer;
  const cs = core._charsetService;
  const attr = core._inputHandler._curAttrData;
  const dec = core.coreService.decPrivateModes;
  return {
    lines,
    row: buf.cursorY,
    col: Math.min(buf.cursorX, term.cols - 1),
    modes: {
      bufferType: buf.type,
      // The cursor past the last column: a wrap is pending.
      pendingWrap: buf.cursorX >= term.cols && term.modes.wraparoundMode,
      cursorHidden: core.coreService.isCursorHidden,
      ...term.modes,
      mouseEncoding: core.coreMouseService.activeEncoding,
      cursorStyle: dec.cursorStyle === undefined ? 'default' : dec.cursorStyle,
      cursorBlink: dec.cursorBlink === undefined ? 'default' : dec.cursorBlink,
      optionCursorBlink: core.optionsService.rawOptions.cursorBlink,
      // What the cursor does: the mode if set, else the option.
      blinks: dec.cursorBlink === undefined ? !!core.optionsService.rawOptions.cursorBlink : dec.cursorBlink,
      title,
      scrollRegion: [b.scrollTop, b.scrollBottom],
      glevel: cs.glevel,
      charsets: [0, 1, 2, 3].map((i) => charsetName(cs._charsets[i])),
      // The set in use, which DECRC restores without the designations.
      charset: charsetName(cs.charset),
      tabs: Object.keys(b.tabs).map(Number).filter((k) => b.tabs[k]).sort((x, y) => x - y).join(','),
      sgr: [attr.fg, attr.bg, attr.extended ? attr.extended.underlineStyle : 0, attr.extended ? attr.extended.underlineColor : 0].join(','),
    },
  };
}

function replay(req) {
  return new Promise((resolve) => {
    const term = new Terminal({ cols: req.cols, rows: req.rows, scrollback: 1000, allowProposedApi: true });
    term.loadAddon(new Unicode11Addon());
    term.unicode.activeVersion = '11';
    let title = '';
    term.onTitleChange((t) => { title = t; });
    term.write(Buffer.from(req.data, 'base64'), () => {
      const res = state(term, title);
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
  chain = chain.then(() => replay(req)).catch((e) => ({ error: String(e && e.message || e) })).then((res) => {
    process.stdout.write(JSON.stringify(res) + '\n');
  });
});
