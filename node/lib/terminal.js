'use strict';
// Terminal: one PTY hosted by a ptyplex sidecar, with node-pty's IPty API.

const fs = require('fs');
const path = require('path');
const { StringDecoder } = require('string_decoder');
const { T, controlFrame, dataFrame } = require('./frames');
const { Emitter, callListener } = require('./events');
const { signalNumber } = require('./signals');

// Environment variables node-pty removes from a child's environment: they
// describe the host's terminal, not the new one.
const SANITIZED = ['TMUX', 'TMUX_PANE', 'STY', 'WINDOW', 'WINDOWID', 'TERMCAP', 'COLUMNS', 'LINES'];
// Largest INPUT payload per frame; bigger writes are split.
const INPUT_CHUNK = 64 << 10;

// inputCut is where the INPUT frame that starts at off in buf ends: after
// INPUT_CHUNK bytes, moved back to the start of the UTF-8 character the
// limit falls in (three bytes at most), so that no character is split
// between two frames: a console that decodes each read on its own
// (Windows' under Wine) shows the halves of a split one as U+FFFD. Bytes
// that are no UTF-8 are cut at the limit.
function inputCut(buf, off) {
  const end = off + INPUT_CHUNK;
  if (end >= buf.length) return buf.length;
  for (let i = end; i > off && i > end - 4; i--) {
    if ((buf[i] & 0xc0) !== 0x80) return i;
  }
  return end;
}
// The longest a read of pid blocks waiting for the terminal to open.
const SYNC_PID_LIMIT = 2000;

// checkType throws, as node-pty does, for an option set to a value of the
// wrong type; unset and falsy values take their defaults.
function checkType(name, value, type) {
  if (value && typeof value !== type) throw new Error(`${name} must be a ${type} (not a ${typeof value})`);
}

// size turns a number node-pty would take into a window dimension: whole,
// and within what the PTY's u16 can hold.
function size(v) {
  return Math.min(Math.max(Math.trunc(v), 1), 65535);
}

// pixels turns a size in pixels into the winsize's u16: whole, 0 (unknown)
// for what is not a number.
function pixels(v) {
  const n = Math.trunc(Number(v));
  return Number.isFinite(n) ? Math.min(Math.max(n, 0), 65535) : 0;
}

// isUtf8 says whether an encoding name is UTF-8 however it is spelled
// ('utf8', 'utf-8', 'UTF8'), as Buffer and StringDecoder take them all.
function isUtf8(encoding) {
  return typeof encoding === 'string' && /^utf-?8$/i.test(encoding);
}

// bufferEncoding is the encoding strings are written in: node-pty encodes
// them with the terminal's encoding.
function bufferEncoding(encoding) {
  return typeof encoding === 'string' && Buffer.isEncoding(encoding) ? encoding : 'utf8';
}

// commandLineRefusal says why args as a string cannot be sent to host's
// sidecar, or null when it can: the sidecar's HELLO, when the handshake
// was made, says whether it serves commandLine; otherwise the sidecar is
// taken to run where we do (a local one; a transport's is known only from
// the handshake).
function commandLineRefusal(host) {
  const remote = host.remote;
  if (remote ? remote.features.includes('commandLine') : process.platform === 'win32') return null;
  if (remote && remote.os === 'windows') {
    return 'args as a command-line string needs a sidecar that lists the commandLine feature (this one is older): pass an array';
  }
  return 'args as a string is not supported on unix.';
}

class Terminal {
  // Created by Sidecar#spawn; options are node-pty's IPtyForkOptions.
  constructor(host, id, file, args, options) {
    // node-pty's defaults: sh, no arguments; on Windows the shell that
    // %COMSPEC% names, as LinkCode's host and cmd.exe's own children do.
    if (file === undefined || file === null || file === '') {
      file = process.platform === 'win32' ? process.env.COMSPEC || 'cmd.exe' : 'sh';
    }
    if (typeof file !== 'string') throw new TypeError('file must be a string');
    if (args === undefined || args === null) args = [];
    // node-pty takes a command-line string only on Windows, where it is the
    // child's line after the program as it is (how cmd.exe /c is given a
    // command with quotes): sent as OPEN's commandLine, which only a
    // sidecar listing that feature serves (an older one would drop it and
    // start file with no arguments).
    let commandLine;
    if (typeof args === 'string') {
      const refusal = commandLineRefusal(host);
      if (refusal) throw new Error(refusal);
      commandLine = args;
      args = [];
    }
    if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) {
      throw new TypeError('args must be an array of strings');
    }
    const opt = options || {};
    for (const [name, type] of [['name', 'string'], ['cols', 'number'], ['rows', 'number'], ['cwd', 'string'],
      ['env', 'object'], ['uid', 'number'], ['gid', 'number'], ['encoding', 'string']]) {
      checkType(name, opt[name], type);
    }
    // The child runs as the sidecar's user: refuse a request to be someone
    // else rather than ignore it.
    for (const [name, own] of [['uid', process.getuid], ['gid', process.getgid]]) {
      const v = opt[name];
      if (v !== undefined && v !== null && v !== -1 && !(own && v === own.call(process))) {
        throw new Error(`ptyplex does not support the ${name} option (the child runs as the sidecar's user)`);
      }
    }
    // As node-pty: 0, NaN and unset mean the default.
    this.cols = size(opt.cols || 80);
    this.rows = size(opt.rows || 24);
    const envIn = opt.env || process.env;
    const env = Object.assign({}, envIn);
    // node-pty removes the host terminal's variables only from an
    // environment it inherits; an explicit one is the caller's choice.
    if (envIn === process.env) for (const k of SANITIZED) delete env[k];
    for (const [k, v] of Object.entries(env)) {
      if (v === undefined) delete env[k];
      else env[k] = String(v);
    }
    this._name = opt.name || env.TERM || 'xterm';
    env.TERM = this._name;
    // Resolved here: the sidecar's own cwd is where we were when it started.
    const cwd = path.resolve(opt.cwd || '.');
    env.PWD = cwd; // as node-pty sets it: programs that are not shells read it
    const encoding = opt.encoding === undefined ? 'utf8' : opt.encoding;
    this._decoder = encoding === null ? null : new StringDecoder(encoding);
    this._writeEncoding = bufferEncoding(encoding);
    this.handleFlowControl = !!opt.handleFlowControl;
    // node-pty's names for them, which its own tests read.
    this._flowControlPause = opt.flowControlPause || '\x13';
    this._flowControlResume = opt.flowControlResume || '\x11';

    this._pid = 0;
    this._pidWaited = false;
    this._ptsName = undefined;
    this._file = file;
    this._program = file; // the file it ran: process once it has ended (persist.js sets an attached one's)
    this._process = file;
    this._host = host;
    this._id = id;
    this._idBuf = Buffer.from(id, 'utf8');
    this._state = 'pending'; // pending -> live -> exited (or failed)
    this._features = new Set();
    this._paused = false;
    this._queue = []; // output held back while paused (or for open(): _holdForOpen)
    this._openHold = false;
    this._heldExit = null;
    this._queued = 0;
    this._unacked = 0; // bytes delivered but not yet granted back as credit
    this._credit = host.creditWindow; // what the sidecar may still send us: granted minus received
    this._uncapped = false; // CLOSE lifted the sidecar's gate: credit no longer applies
    this._fgWaiters = [];
    this._pendingKill = undefined;
    this._failure = null;
    this._readyPromise = null;
    this._readyResolve = null;
    this._readyReject = null;
    this._legacy = new Map(); // node-pty's on('data'|'exit'|'error')

    this._onData = new Emitter();
    this._onExit = new Emitter();
    this.onData = this._onData.event;
    this.onExit = this._onExit.event;
    // Persistence (persist.js): bytes of output delivered, what ATTACHED
    // said fell out of the journal, and the end of this host's hold.
    this._offset = 0;
    this._utf8Tail = EMPTY; // bytes of an incomplete UTF-8 character held by the decoder
    this.lost = 0;
    // A persistent terminal this host views (attach with view) rather than holds, and its viewer number.
    this.viewing = false;
    this.viewer = 0;
    this._snapshotDue = false; // an ATTACHED reported loss: its SNAPSHOT comes next, before any OUTPUT
    this._resized = false; // resize() was called: the server's reports of the size are older (persist.js)
    this._detachReason = null;
    // The holder generation the persistent server last gave this host for
    // the terminal (OPENED, a holder's ATTACHED, a hand-over), null when
    // none: what a resume after a drop sends as ATTACH's resume (resume.js).
    this._holdGen = null;
    this._onDetach = new Emitter();
    this.onDetach = this._onDetach.event;

    this._openBody = {
      terminalId: id,
      cols: this.cols,
      rows: this.rows,
      cmd: file,
      args,
      cwd,
      env,
      credit: host.creditWindow,
      // node-pty sets IUTF8 for its utf8 encoding (older sidecars ignore this).
      utf8: encoding === 'utf8',
      // node-pty's terminal attributes (IXANY: after ^S any key restarts
      // output), not the kernel's defaults; older sidecars ignore this.
      nodePtyTermios: true,
    };
    if (commandLine) this._openBody.commandLine = commandLine;
    // A persistent server's options (persist.js): what happens to output
    // while no host holds the terminal, and the size of its journal.
    if (opt.detached !== undefined) this._openBody.detached = opt.detached;
    if (opt.journal !== undefined) this._openBody.journal = opt.journal;
    if (opt.orphanMs !== undefined) this._openBody.orphanMs = opt.orphanMs;
  }

  /**
   * The child's pid. node-pty's spawn forks before it returns, so programs
   * read pid at once; here the spawn happens in the sidecar, and reading
   * pid before OPENED has arrived waits for it (a millisecond or so, with
   * the event loop blocked as node-pty's fork blocks it; at most
   * SYNC_PID_LIMIT ms, after which it is 0). `await term.ready` waits
   * without blocking.
   */
  get pid() {
    if (this._pid === 0 && this._state === 'pending' && !this._pidWaited) {
      // Once: after a wait that gave up, pid is 0 until OPENED is parsed.
      this._pidWaited = true;
      this._pid = this._host._awaitPid(this._gen, this._id, SYNC_PID_LIMIT);
    }
    return this._pid;
  }

  /**
   * node-pty's ptsName, the terminal's slave device (/dev/pts/N). On Linux
   * it is read from the child's standard descriptors; elsewhere, or once
   * the child no longer has the terminal open on any of them, undefined.
   * (node-pty's fd, the master descriptor, lives in the sidecar: there is
   * none in this process.)
   */
  get ptsName() {
    // pid first: read at once after spawn, it waits for the sidecar's answer.
    if (this._ptsName === undefined && this._localProc() && this.pid > 0 &&
        this._state !== 'exited' && this._state !== 'failed') {
      for (const fd of [0, 1, 2]) {
        try {
          const name = fs.readlinkSync(`/proc/${this._pid}/fd/${fd}`);
          if (/^\/dev\/pts\/\d+$/.test(name)) {
            this._ptsName = name;
            break;
          }
        } catch (_) {
          // Not ours to read, or the child is gone: no name.
        }
      }
    }
    return this._ptsName;
  }

  // _localProc says whether this machine's /proc shows the terminal's
  // processes: on Linux, with a sidecar this host started (or the
  // persistent server its bridge reaches). A transport may reach another
  // machine, or another pid namespace, where pid names some other process
  // here; its sidecar is asked instead.
  _localProc() {
    return process.platform === 'linux' && !this._host.transport;
  }

  /**
   * The name of the terminal's foreground process (node-pty: process); once
   * the terminal has ended, the file it ran, as node-pty falls back to it.
   */
  get process() {
    if (this._state === 'exited' || this._state === 'failed') return this._program;
    if (this._localProc() && this._pid > 0 && this._state === 'live') {
      const name = linuxForeground(this._pid);
      if (name) this._process = name;
    } else if (this._features.has('foreground') && this._state === 'live' && !this.viewing) {
      // No synchronous way here: answer what we know and ask for next time.
      this.getProcess().catch(() => {});
    }
    return this._process;
  }

  /** Resolves once the terminal runs (pid known); rejects if it cannot start. */
  get ready() {
    if (!this._readyPromise) {
      if (this._failure) this._readyPromise = Promise.reject(this._failure);
      else if (this._state !== 'pending') this._readyPromise = Promise.resolve();
      else {
        this._readyPromise = new Promise((res, rej) => {
          this._readyResolve = res;
          this._readyReject = rej;
        });
      }
    }
    return this._readyPromise;
  }

  /**
   * The bytes of this terminal's output delivered to onData since it was
   * opened (a persistent server's byte offset): a host that saves it can
   * attach again from it. A character not yet complete counts once it is
   * delivered.
   */
  get offset() {
    return this._offset - this._utf8Tail.length;
  }

  /** The terminal's id in the protocol: what attach takes on a persistent server. */
  get terminalId() {
    return this._id;
  }

  /**
   * Asks the sidecar for the foreground process's name. A viewer of a
   * persistent terminal may not ask (the server refuses FOREGROUND from a
   * viewer): it resolves with what the process getter knows, as node-pty's
   * getProcess always resolves with a name.
   */
  getProcess() {
    if (this._state !== 'live' || !this._features.has('foreground') || this.viewing) {
      return Promise.resolve(this.process);
    }
    return new Promise((resolve) => {
      this._fgWaiters.push(resolve);
      this._host._sendTo(this._gen, controlFrame(T.FOREGROUND, { terminalId: this._id }));
    });
  }

  write(data) {
    if (this.handleFlowControl) {
      if (data === this._flowControlPause) {
        this.pause();
        return;
      }
      if (data === this._flowControlResume) {
        this.resume();
        return;
      }
    }
    if (this._state === 'detached') {
      throw new Error(`ptyplex: cannot write to terminal ${JSON.stringify(this._id)}: this host no longer holds it (${this._detachReason})`);
    }
    // After the exit there is nothing to refuse: a write does nothing,
    // viewed or held.
    if (this._state === 'exited' || this._state === 'failed') return;
    if (this.viewing) this._refuseViewing('write to');
    const buf = typeof data === 'string' ? Buffer.from(data, this._writeEncoding) : Buffer.from(data);
    // While the connection is down the input waits for the next one, up
    // to reconnect.queueLimit; past it this throws, and nothing of data is queued.
    if (this._gen && this._gen.suspended) this._host._holdInput(this, buf.length);
    for (let off = 0; off < buf.length; ) {
      const end = inputCut(buf, off);
      this._host._sendTo(this._gen, dataFrame(T.INPUT, this._idBuf, buf.subarray(off, end)));
      off = end;
    }
  }

  /**
   * pixelSize ({ width, height }, node-pty's third argument) sets the
   * window's size in pixels too, which programs read with TIOCGWINSZ;
   * without it that is 0, as in node-pty. A sidecar older than RESIZE's
   * pixel fields ignores them; on Windows there are none.
   */
  resize(cols, rows, pixelSize) {
    // What node-pty refuses, with its words; the rest it takes.
    if (cols <= 0 || rows <= 0 || isNaN(cols) || isNaN(rows) || cols === Infinity || rows === Infinity) {
      throw new Error('resizing must be done using positive cols and rows');
    }
    if (this.viewing) this._refuseViewing('resize');
    // node-pty's ioctl on the closed descriptor fails, and cols and rows
    // keep the last size; programs that resize from an onExit listener
    // (or later) see that error, so they get it here too.
    if (this._state === 'exited' || this._state === 'failed') {
      throw new Error(process.platform === 'win32' ? 'Cannot resize a pty that has already exited' : 'ioctl(2) failed, EBADF');
    }
    cols = size(cols);
    rows = size(rows);
    this.cols = cols;
    this.rows = rows;
    this._resized = true; // the size is this host's now, not the one a LISTED reported (persist.js)
    if (this._state === 'pending' || this._state === 'live') {
      const body = { terminalId: this._id, cols, rows };
      const pixelWidth = pixels(pixelSize && pixelSize.width);
      const pixelHeight = pixels(pixelSize && pixelSize.height);
      if (pixelWidth || pixelHeight) Object.assign(body, { pixelWidth, pixelHeight });
      this._host._sendTo(this._gen, controlFrame(T.RESIZE, body));
    }
  }

  /**
   * kill() ends the terminal (CLOSE: SIGHUP to its process group, SIGKILL
   * 3 s later). kill(signal) delivers signal to the child process alone,
   * as node-pty's process.kill(pid, signal) does, when the sidecar
   * supports SIGNAL, and falls back to CLOSE otherwise.
   */
  kill(signal) {
    // node-pty sends signal || 'SIGHUP': null, '', 0 and the like mean no
    // signal, not an unknown one.
    if (!signal) signal = undefined;
    if (this._state === 'exited' || this._state === 'failed') return;
    // A viewer may not kill, whatever the signal: the refusal comes before
    // an unknown signal is let go with a note.
    if (this.viewing) this._refuseViewing('kill');
    if (signal !== undefined && signalNumber(signal) === undefined) {
      // node-pty swallows the error of process.kill; so do we, with a note.
      this._host._log(`terminal ${this._id}: kill(${JSON.stringify(signal)}): unknown signal, ignored`);
      return;
    }
    if (this._state === 'pending') {
      this._pendingKill = signal === undefined ? null : signal;
      return;
    }
    if (this._state !== 'live') return;
    if (signal !== undefined && this._features.has('signal')) {
      // target "child": not the foreground process group, which would spare
      // a shell running a command and signal the command instead. A
      // sidecar older than the field ignores it and signals the group.
      this._host._sendTo(this._gen, controlFrame(T.SIGNAL, { terminalId: this._id, signal, target: 'child' }));
    } else {
      // From the CLOSE on the sidecar reads this terminal unthrottled.
      this._uncapped = true;
      this._host._sendTo(this._gen, controlFrame(T.CLOSE, { terminalId: this._id }));
    }
  }

  /**
   * Stops onData until resume() or the exit, which delivers what was held
   * first; the sidecar stops reading once the credit window is used.
   */
  pause() {
    this._paused = true;
    return this; // node-pty returns its socket's pause(), the socket
  }

  resume() {
    if (!this._paused) return this;
    this._paused = false;
    while (this._queue.length && !this._paused) this._deliverHeld();
    return this;
  }

  _deliverHeld() {
    const b = this._queue.shift();
    this._queued -= b.length;
    this._deliver(b);
  }

  /** node-pty clears the line on Windows only; nothing to do here. */
  clear() {}

  /**
   * node-pty 1.2's setParentWindow(handle) makes a window the owner of
   * ConPTY's console window, and answers whether the request went to
   * ConPTY: false unless on Windows with its own conpty.dll. The sidecar
   * has no such request, so the answer is false here, everywhere; hosts
   * written for node-pty 1.2 call it when it is there.
   */
  setParentWindow() {
    return false;
  }

  // node-pty's legacy listeners: on('data'), on('exit', (code, signal)), and
  // ours: on('error') for frames the sidecar sent about this terminal.
  on(event, listener) {
    if (!this._legacy.has(event)) this._legacy.set(event, []);
    const list = this._legacy.get(event);
    let disp;
    if (event === 'data') disp = this.onData(listener);
    else if (event === 'exit') disp = this.onExit((e) => listener(e.exitCode, e.signal));
    list.push({ listener, disp });
    return this;
  }

  addListener(event, listener) {
    return this.on(event, listener);
  }

  once(event, listener) {
    const wrapped = (...a) => {
      this.removeListener(event, wrapped);
      listener(...a);
    };
    wrapped.listener = listener; // so that removeListener(event, listener) finds it
    return this.on(event, wrapped);
  }

  removeListener(event, listener) {
    const list = this._legacy.get(event) || [];
    const i = list.findIndex((e) => e.listener === listener || e.listener.listener === listener);
    if (i >= 0) {
      if (list[i].disp) list[i].disp.dispose();
      list.splice(i, 1);
    }
    return this;
  }

  /** Removes every legacy listener of event, or of all events. */
  removeAllListeners(event) {
    for (const name of event === undefined ? [...this._legacy.keys()] : [event]) {
      for (const e of this._legacy.get(name) || []) if (e.disp) e.disp.dispose();
      this._legacy.delete(name);
    }
    return this;
  }

  /** The legacy listeners of event, as once registered them unwrapped. */
  listeners(event) {
    return (this._legacy.get(event) || []).map((e) => e.listener.listener || e.listener);
  }

  /**
   * Calls the listeners of event; true if there were any. As in node-pty,
   * 'data' reaches the onData listeners too and 'exit' the onExit ones (with
   * {exitCode, signal}): on('data') and on('exit') are built on them here.
   */
  emit(event, ...args) {
    if (event === 'data' || event === 'exit') {
      const emitter = event === 'data' ? this._onData : this._onExit;
      const any = emitter.size > 0;
      emitter.fire(event === 'data' ? args[0] : { exitCode: args[0], signal: args[1] });
      return any;
    }
    const list = (this._legacy.get(event) || []).slice();
    for (const e of list) callListener(e.listener, ...args);
    return list.length > 0;
  }

  /** node-pty's destroy: ends the terminal, as kill() does. */
  destroy() {
    this.kill();
  }

  /** Changes how output is decoded from now on (null: Buffers). */
  setEncoding(encoding) {
    if (this._decoder) {
      const rest = this._decoder.end();
      if (rest.length) this._onData.fire(rest);
    }
    this._decoder = encoding ? new StringDecoder(encoding) : null;
    this._utf8Tail = EMPTY;
    this._writeEncoding = bufferEncoding(encoding);
  }

  off(event, listener) {
    return this.removeListener(event, listener);
  }

  _emitError(err) {
    const list = this._legacy.get('error') || [];
    if (list.length === 0) this._host._log(`terminal ${this._id}: ${err.message}`);
    for (const e of list.slice()) callListener(e.listener, err);
  }

  // --- called by the Sidecar --------------------------------------------

  _opened(msg) {
    this._openFrame = null;
    this._pid = msg.pid;
    this._holdGen = holdGenOf(msg);
    this._state = 'live';
    this._features = new Set(Array.isArray(msg.features) ? msg.features : []);
    if (this._readyResolve) this._readyResolve();
    if (this._pendingKill !== undefined) {
      const k = this._pendingKill;
      this._pendingKill = undefined;
      this.kill(k === null ? undefined : k);
    }
  }

  // _failed: the terminal never ran (ERROR for its OPEN, open timeout, or
  // the sidecar died before OPENED).
  _failed(err) {
    if (this._state !== 'pending') return;
    this._state = 'failed';
    this._failure = err;
    if (this._readyReject) this._readyReject(err);
    this._emitError(err);
    // node-pty reports a program it cannot start as exit code 1, after
    // its PTY's 'close' as for any exit: a host that frees the terminal
    // on 'close' frees this one too.
    this.emit('close');
    this._onExit.fire({ exitCode: 1, signal: 0 });
  }

  // _spend counts OUTPUT against the credit granted; false when the
  // sidecar sent more than it was allowed (a peer not to be trusted).
  _spend(n) {
    if (this._uncapped) return true;
    this._credit -= n;
    return this._credit >= 0;
  }

  // _affords says whether n more bytes of OUTPUT fit the credit left,
  // without spending it.
  _affords(n) {
    return this._uncapped || n <= this._credit;
  }

  _output(data) {
    this._snapshotDue = false; // a SNAPSHOT comes before output, or not at all
    if (this._paused || this._openHold || this._queue.length) {
      this._queue.push(data);
      this._queued += data.length;
      return;
    }
    this._deliver(data);
  }

  _deliver(data) {
    // Grant back before emitting: a listener that pauses keeps what it got.
    // A persistent server takes a grant as the host's word that it has
    // the bytes and drops them from its journal, so there the grant waits
    // until the listeners have had them (a host killed in between must
    // find them again when it attaches from what it saved).
    //
    // The grant also counts only what the listeners got: the bytes of a
    // character the decoder still holds are acknowledged once it is
    // complete. Acknowledged earlier, a host killed in between would
    // attach from pty.offset, a few bytes before what the server may
    // already have dropped, and get a SNAPSHOT instead of the bytes.
    const late = this._host._persistent;
    const before = this.offset;
    if (!late) {
      this._unacked += data.length;
      this._grant();
    }
    this._offset += data.length;
    if (this._decoder) {
      if (isUtf8(this._writeEncoding)) this._utf8Tail = utf8Tail(this._utf8Tail, data);
      const s = this._decoder.write(data);
      if (s.length) this._onData.fire(s);
    } else {
      this._onData.fire(data);
    }
    if (late) {
      this._unacked += this.offset - before;
      this._grant();
    }
  }

  _grant() {
    // While the connection is down nothing is granted: the next ATTACH
    // sets the window afresh (resume.js).
    if (this._unacked >= this._host.creditWindow / 4 && this._state === 'live' && !this._gen.suspended) {
      this._host._sendTo(this._gen, controlFrame(T.CREDIT, { terminalId: this._id, bytes: this._unacked }));
      this._credit += this._unacked;
      this._unacked = 0;
    }
  }

  // open() resolves with the terminal once it runs, and its caller adds
  // its listeners in the continuation, which runs only after whatever came
  // in the same read as the OPENED (a short program's whole output and
  // its EXIT). So until a macrotask after that, output and the exit are
  // held, then given to the listeners in order.
  _holdForOpen() {
    this._openHold = true;
  }

  _releaseOpen() {
    if (!this._openHold) return;
    this._openHold = false;
    const e = this._heldExit;
    this._heldExit = null;
    if (e) this._exited(e.exitCode, e.signal);
    else while (this._queue.length && !this._paused) this._deliverHeld();
  }

  _exited(exitCode, signal) {
    if (this._openHold) {
      this._state = 'exited';
      this._heldExit = { exitCode, signal };
      return;
    }
    this._state = 'exited';
    for (const w of this._fgWaiters.splice(0)) w(this._program);
    // node-pty fires onExit on a paused terminal too (its socket is
    // destroyed, and what was not read yet is lost), and programs wait for
    // it. Here nothing is lost: the output pause() held back is delivered
    // first, paused or not, since with the child gone there is nothing
    // left to hold back, and then the exit. (The sidecar sends EXIT only
    // once it has read all of the child's output, so an exit comes while
    // paused unless more than the credit window was still unread; that
    // waits for resume(), as the child's output does.)
    while (this._queue.length) this._deliverHeld();
    this._finish({ exitCode, signal });
  }

  _finish(e) {
    if (this._decoder) {
      const rest = this._decoder.end();
      if (rest.length) this._onData.fire(rest);
    }
    // node-pty: 'close' (its PTY closed) comes before the exit.
    this.emit('close');
    this._onExit.fire(e);
  }

  // _foregroundRefused answers the oldest FOREGROUND with what is known:
  // the server refused it (the terminal changed hands meanwhile), and
  // its waiter would otherwise wait forever.
  _foregroundRefused() {
    const w = this._fgWaiters.shift();
    if (w) w(this._process);
  }

  _foreground(msg) {
    if (msg.process) this._process = msg.process;
    const w = this._fgWaiters.shift();
    if (w) w(this._process);
  }
}

// holdGenOf is the holder generation an OPENED or ATTACHED carries, null
// without one (a plain sidecar's, a persistent server older than them, a
// viewer's ATTACHED).
function holdGenOf(msg) {
  return Number.isSafeInteger(msg.holdGen) && msg.holdGen >= 0 ? msg.holdGen : null;
}

// utf8Tail returns the bytes at the end of the stream that begin a UTF-8
// character not yet complete, given the previous such bytes (prev) and the
// data that followed them.
function utf8Tail(prev, data) {
  const last = data.length >= 4 ? data.subarray(data.length - 4) : Buffer.concat([prev, data]);
  const n = last.length;
  for (let k = 1; k <= 4 && k <= n; k++) {
    const b = last[n - k];
    if ((b & 0xc0) === 0x80) continue; // a continuation byte
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > k ? last.subarray(n - k) : EMPTY;
  }
  return EMPTY; // no lead byte within reach: the decoder emits replacements
}
const EMPTY = Buffer.alloc(0);

// linuxForeground reads the tty's foreground process group from the
// session leader's stat and names its leader by argv[0], as node-pty does.
function linuxForeground(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const tpgid = Number(fields[5]);
    if (!(tpgid > 0)) return undefined;
    const cmdline = fs.readFileSync(`/proc/${tpgid}/cmdline`);
    const end = cmdline.indexOf(0);
    const argv0 = cmdline.toString('utf8', 0, end < 0 ? cmdline.length : end);
    if (argv0) return argv0;
    return fs.readFileSync(`/proc/${tpgid}/comm`, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

module.exports = { Terminal, holdGenOf };
