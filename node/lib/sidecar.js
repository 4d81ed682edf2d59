'use strict';
// Sidecar: one ptyplex-sidecar process hosting many terminals.

const childProcess = require('child_process');
const fs = require('fs');
const pathModule = require('path');
const { T, PROTOCOL_VERSION, controlFrame, FrameParser } = require('./frames');
const { Emitter } = require('./events');
const { resolveSidecar } = require('./resolve');
const { signalNumber } = require('./signals');
const { Terminal } = require('./terminal');
const { FrameWriter } = require('./writer');
const { installPersist, checkName, persistEnv, idPrefix } = require('./persist');
const { installResume, reconnectOptions, keepaliveOptions } = require('./resume');
const { installOptions, findPtyplex, installArgv, MARK: INSTALLED_MARK } = require('./install');

const DEFAULT_OPEN_TIMEOUT = 10000;
const DEFAULT_CREDIT_WINDOW = 1 << 20;
// Generous: it includes what the transport does first (ssh connecting and
// authenticating).
const DEFAULT_HELLO_TIMEOUT = 15000;
const VERSION = require('../package.json').version;
const FRAME_NAMES = { [T.OPENED]: 'OPENED', [T.ERROR]: 'ERROR', [T.EXIT]: 'EXIT', [T.FOREGROUND_INFO]: 'FOREGROUND', [T.HELLO_REPLY]: 'HELLO' };
// READ_AHEAD_LIMIT bounds the bytes _awaitPid reads ahead of the event
// loop looking for an OPENED: the credit windows of a few busy terminals.
const READ_AHEAD_LIMIT = 8 << 20;
// PASTE_HELLO_WAIT bounds the handshake a host that did not begin with one
// makes when a paste first fills a piece (writer.js): a current sidecar
// answers at once, one older than HELLO never does, and the paste then
// goes on unpaced, as it always did, after this one pause.
const PASTE_HELLO_WAIT = 2000;
// CLOSE_BOUND is how long close() waits for the sidecar to end after its
// stdin was closed before it ends it (a child that does not read the
// input queued before: the sidecar reads nothing more, the end included).
const CLOSE_BOUND = 15000;
// CLOSE_STALL: after close(), a sidecar that took none of what is left to
// write, and sent nothing, for this long is not going to (it holds input
// back for a child that does not read): what is left is dropped
// (Sidecar#_watchClose). Long enough for a busy machine's HELLO answer
// and PONGs (over 1 s measured with 2 CPUs under load).
const CLOSE_STALL = 3000;

// sleepFor blocks the thread for ms (a fraction of a millisecond) between
// _awaitPid's reads that find nothing. Atomics.wait sleeps; where it is
// not allowed (an Electron renderer: its main thread may not block in
// it, and without cross-origin isolation there is no SharedArrayBuffer
// at all) the wait spins instead. Decided on first use, not at load: a
// SharedArrayBuffer made at load would fail the require itself there.
let napper;
function sleepFor(ms) {
  if (napper === undefined) {
    try {
      napper = new Int32Array(new SharedArrayBuffer(4));
      Atomics.wait(napper, 0, 0, 0);
    } catch {
      napper = null;
    }
  }
  if (napper) {
    Atomics.wait(napper, 0, 0, ms);
    return;
  }
  const end = performance.now() + ms;
  while (performance.now() < end);
}

// MAX_TIMER is the longest delay setTimeout takes: beyond it (Infinity
// included) node fires after 1 ms, so a longer timeout means no timer.
const MAX_TIMER = 2 ** 31 - 1;

// timeoutOption checks a timeout option in milliseconds: a number, 0 or
// more; Infinity (or anything past MAX_TIMER) waits for ever.
function timeoutOption(name, v, dflt) {
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'number' || Number.isNaN(v) || v < 0) {
    throw new TypeError(`ptyplex: ${name} must be a number of milliseconds, 0 or more, or Infinity (not ${JSON.stringify(v)})`);
  }
  return v;
}

// bridgeArgs says whether args make the sidecar a bridge to a persistent
// server (--persist NAME or --persist=NAME, with one dash or two, as Go's
// flag package takes them).
function bridgeArgs(args) {
  return args.some((a) => /^--?persist(=|$)/.test(a));
}

// peerError is an error whose message already names the sidecar (or the
// transport that reached it), so reports do not prefix it again.
function peerError(message) {
  const err = new Error(message);
  err.peer = true;
  return err;
}

class Sidecar {
  /**
   * options.path: the binary (default: resolveSidecar()); options.logger:
   * called with each stderr line of the sidecar and with our own notes;
   * options.openTimeout: ms to wait for a terminal to start;
   * options.creditWindow: bytes a terminal may have in flight to us;
   * options.transport: the command that reaches a sidecar, as an argv
   * (['ssh', '-T', 'host', 'ptyplex-sidecar']), run instead of path;
   * options.env: the transport's environment (default process.env);
   * options.hello: begin with the handshake and fail every terminal, with
   * a message saying what to install, when the sidecar is too old or
   * speaks another protocol; options.helloTimeout: ms it may take.
   * options.persist: a name; the sidecar is then `ptyplex-sidecar
   * --persist NAME`, whose terminals outlive this host (see list, attach).
   * With a transport the argv runs the persistent sidecar (`ssh host
   * ptyplex-sidecar --persist NAME`) and persist (a name or true) only
   * says to expect one: the handshake then checks the peer's `persist`.
   * options.reconnect, options.keepalive: resume after a dropped
   * transport (resume.js). options.install: install the sidecar over the
   * transport on first connect (install.js).
   */
  constructor(options = {}) {
    const tr = options.transport;
    if (tr !== undefined && tr !== null && (!Array.isArray(tr) || !tr.length || tr.some((a) => typeof a !== 'string') || !tr[0])) {
      throw new TypeError('ptyplex: transport must be a non-empty array of strings, the command that reaches a sidecar');
    }
    this.transport = tr ? [...tr] : null;
    this._env = options.env;
    // With a transport, persistence is the business of the transport's
    // argv (it runs `ptyplex-sidecar --persist NAME` over there); the
    // option then only says that this host expects it, and true will do.
    const p = options.persist;
    this.persist = p === undefined || p === null || p === false ? null : this.transport && p === true ? true : checkName(p);
    this._reconnect = reconnectOptions(options.reconnect);
    this._install = installOptions(options.install, this.transport);
    this._installed = null; // the installed sidecar's path on the other machine, once known
    this._keepalive = keepaliveOptions(options.keepalive, !!this._reconnect);
    if (this._reconnect && !this.transport && !this.persist) {
      // A plain sidecar's terminals die with it: there is nothing to resume.
      throw new TypeError('ptyplex: reconnect needs a persistent sidecar: the persist option, or a transport running `ptyplex-sidecar --persist NAME`');
    }
    // Resuming rests on the handshake (it tells a persistent peer from a
    // plain one) and so does a transport expected to be persistent.
    // So does the keepalive: only a sidecar that says so answers PING.
    this.hello = !!options.hello || !!this._reconnect || !!this._keepalive || !!(this.transport && this.persist);
    this.helloTimeout = timeoutOption('helloTimeout', options.helloTimeout, DEFAULT_HELLO_TIMEOUT);
    /** The sidecar's HELLO ({ version, protocol, features, os, arch }) once a handshake succeeded. */
    this.remote = null;
    this.path = options.path;
    this.logger = options.logger || null;
    this.openTimeout = timeoutOption('openTimeout', options.openTimeout, DEFAULT_OPEN_TIMEOUT);
    const cw = options.creditWindow;
    // Checked here, as the other options are: the sidecar refuses a
    // window that is no whole number of bytes, and each OPEN then failed.
    if (cw !== undefined && cw !== null && cw !== 0 && !(Number.isSafeInteger(cw) && cw > 0)) {
      throw new TypeError(`ptyplex: creditWindow must be a whole number of bytes, 1 or more (not ${JSON.stringify(cw)})`);
    }
    this.creditWindow = cw || DEFAULT_CREDIT_WINDOW;
    this._args = options.args || [];
    this._gen = null; // the running sidecar process and its terminals
    this._nextId = 1;
    // Terminals on a persistent server outlive this host: ids must not
    // collide with those of hosts before or beside it.
    this._idPrefix = this.persist || this._reconnect ? idPrefix() : 't';
    this._onDeath = new Emitter();
    /** Fires { code, signal, error } when the sidecar process ends unasked (after a reconnect gave up, too). */
    this.onDeath = this._onDeath.event;
    this._down = null; // while a dropped connection is being resumed (resume.js)
    this._initResume();
  }

  // _persistent: the terminals are a persistent server's (by our option,
  // or as the peer's HELLO said); they outlive the connection.
  get _persistent() {
    // reconnect: the handshake refuses a peer that is not persistent.
    return !!this.persist || !!this._reconnect || !!(this.remote && this.remote.features.includes('persist'));
  }

  /**
   * The handshake: sends HELLO (starting the sidecar if need be) and
   * resolves with the sidecar's answer. It rejects, saying what to do,
   * when none comes within helloTimeout (a sidecar older than the
   * handshake drops HELLO unanswered) or the answer is another protocol
   * version; a malformed answer ends the sidecar as any corrupt frame does.
   */
  handshake() {
    const gen = this._start();
    if (!gen.hello) gen.hello = this._handshake(gen);
    // One a paste asked for (_answersPing) did not hold the event loop:
    // awaited here, it does, as one asked here does.
    else if (gen.helloTimer) gen.helloTimer.ref();
    return gen.hello;
  }

  // _handshake sends HELLO and settles with the answer. The event loop is
  // kept alive while it waits (the pending timer does that); afterwards
  // an idle sidecar lets go of it again, as after a terminal's end.
  // weak: the wait for the answer does not hold the event loop (a paste's
  // question, which must not keep a script alive once its terminals ended).
  _handshake(gen, weak = false) {
    const p = this._ask(gen, weak);
    p.then(
      () => this._refresh(gen),
      () => this._refresh(gen),
    );
    return p;
  }

  _ask(gen, weak) {
    return new Promise((resolve, reject) => {
      let timer = null;
      const arm = () => {
        if (this.helloTimeout > MAX_TIMER) return;
        timer = setTimeout(expire, this.helloTimeout);
        if (weak) timer.unref();
        gen.helloTimer = timer;
      };
      const expire = () => {
        gen.helloWait = null;
        gen.helloExpired = true;
        if (this.transport && !gen.heard) {
          // Not one byte came back: nothing says the transport reached
          // a sidecar at all (ssh still connecting to a host that drops
          // its packets). An old sidecar is silent too, but not after a
          // sidecar answered on the connection before.
          const said = gen.said ? `; it said last: ${JSON.stringify(gen.said)}` : '';
          reject(
            peerError(
              this.remote
                ? `${this._name()} did not answer HELLO within ${this.helloTimeout} ms, and not one byte came back: ` +
                    `${this._who()} has not reached the sidecar: the machine is unreachable or slow to connect, or the transport hangs${said} ` +
                    '(the sidecar there answered HELLO on the previous connection)'
                : `${this._name()} did not answer HELLO within ${this.helloTimeout} ms, and not one byte came back: ` +
                    `either ${this._who()} has not reached the sidecar (the machine unreachable or slow to connect, a password or ` +
                    `host key prompt, a command that hangs)${said}, or the sidecar there is older than the handshake and drops HELLO ` +
                    "unanswered; run the transport's command by hand to see which, and if an old sidecar starts, install a current " +
                    'one on that machine (ptyplex remote install HOST), or connect without the hello option',
            ),
          );
          return;
        }
        reject(
          peerError(
            `${this._name()} did not answer HELLO within ${this.helloTimeout} ms: it is older than the handshake ` +
              '(or not a ptyplex-sidecar); install a current one on that machine (ptyplex remote install HOST), ' +
              'or connect without the hello option',
          ),
        );
      };
      // As for opens, an install on first connect does not count.
      if (gen.installing) gen.installing.push(arm);
      else arm();
      gen.helloWait = {
        resolve: (h) => {
          clearTimeout(timer);
          if (h.protocol !== PROTOCOL_VERSION) {
            reject(
              peerError(
                `${this._name()} (version ${JSON.stringify(h.version)}) speaks protocol ${h.protocol}, this host ` +
                  `speaks ${PROTOCOL_VERSION}: install the sidecar matching ptyplex ${VERSION} on that machine ` +
                  '(ptyplex remote install HOST)',
              ),
            );
            return;
          }
          this.remote = h;
          if (this._reconnect && !h.features.includes('persist')) {
            reject(
              peerError(
                `${this._name()} is not a persistent sidecar (its HELLO lists no "persist"), so a dropped connection ` +
                  'could not be resumed: run `ptyplex-sidecar --persist NAME` through the transport, or connect without the reconnect option',
              ),
            );
            return;
          }
          if (this.transport && this.persist && !h.features.includes('persist')) {
            reject(peerError(`${this._name()} is not a persistent sidecar (its HELLO lists no "persist"): run \`ptyplex-sidecar --persist NAME\` through the transport`));
            return;
          }
          resolve(h);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      if (!gen.dead) gen.out.write(controlFrame(T.HELLO, { version: VERSION, protocol: PROTOCOL_VERSION, features: ['hello'] }));
    });
  }

  // _who names the process this host started, for messages about its end.
  _who() {
    return this.transport ? `the transport (${pathModule.basename(this.transport[0])})` : 'ptyplex-sidecar';
  }

  // _howEnded says how gen's process ended, with what it said last on
  // stderr when that says why: a transport's (ssh's "Connection refused"),
  // or a local sidecar's that failed (a bridge that cannot make its
  // runtime directory). Without a logger the error is all a host sees.
  _howEnded(gen, how) {
    const what = how.signal ? `killed by ${how.signal}` : `exited with status ${how.code}`;
    return this._told(how) && gen.said ? `${what}: ${gen.said}` : what;
  }

  // _told says whether the last stderr line of gen's process says why it
  // ended: always a transport's; a local sidecar's when it failed (not
  // when a signal ended it or it shut down in order, where the last line
  // is about something else).
  _told(how) {
    return !!this.transport || (!how.signal && how.code !== 0 && how.code !== null && how.code !== undefined);
  }

  // _name says which sidecar, for messages.
  _name() {
    return this.transport ? `the sidecar reached through ${JSON.stringify(this.transport)}` : 'ptyplex-sidecar';
  }

  /** The sidecar's pid (the transport's, with options.transport), or 0 when none is running (as while reconnecting). */
  get pid() {
    return this._gen && !this._gen.suspended ? this._gen.child.pid || 0 : 0;
  }

  /** node-pty's spawn: returns at once; the terminal opens in the background. */
  spawn(file, args, options) {
    const id = `${this._idPrefix}${this._nextId++}`;
    const term = new Terminal(this, id, file, args, options);
    const gen = this._start();
    gen.terms.set(id, term);
    term._gen = gen;
    const open = controlFrame(T.OPEN, term._openBody);
    this._sendTo(gen, open);
    term._openBody = null;
    // Kept until OPENED: after a drop it is sent again if the server
    // never got it (resume.js), and after a sidecar that shut down
    // before reading it, to the next one (_died).
    term._openFrame = open;
    this._armOpenTimeout(gen, term);
    this._refresh(gen);
    return term;
  }

  // _armOpenTimeout fails term, whose OPEN (or REVIVE) was sent, if no
  // OPENED comes within openTimeout.
  _armOpenTimeout(gen, term) {
    if (!(this.openTimeout > 0) || this.openTimeout > MAX_TIMER) return;
    const id = term._id;
    const arm = () => {
      if (term._state !== 'pending' || !gen.terms.has(id)) return;
      term._timer = setTimeout(() => {
        if (term._state !== 'pending' || !gen.terms.has(id)) return;
        // The id stays reserved: a late OPENED is answered with CLOSE.
        gen.terms.delete(id);
        gen.abandoned.add(id);
        this._refresh(gen);
        term._failed(new Error(`ptyplex-sidecar did not open ${term._file} within ${this.openTimeout} ms`));
      }, this.openTimeout);
      term._timer.unref();
    };
    // An install on first connect (copying binaries over ssh) takes
    // what it takes: the open's clock starts once the sidecar is there.
    if (gen.installing) gen.installing.push(arm);
    else arm();
  }

  /**
   * Like spawn, but resolves once the terminal runs and rejects if it
   * cannot start. Output and the exit wait for the listeners the caller
   * adds right after the await (until the next macrotask).
   */
  open(file, args, options) {
    let term;
    try {
      term = this.spawn(file, args, options);
    } catch (err) {
      return Promise.reject(err);
    }
    term._holdForOpen();
    return term.ready.then(
      () => {
        setImmediate(() => term._releaseOpen());
        return term;
      },
      (err) => {
        term._releaseOpen();
        throw err;
      },
    );
  }

  /** Ends the sidecar: every terminal is killed and reports its exit. */
  close() {
    if (this._down) return this._closeDown();
    const gen = this._gen;
    if (!gen) return Promise.resolve();
    gen.closing = true;
    this._refresh(gen); // a caller awaiting close keeps the loop alive
    // The end of stdin goes out behind what was written before close(),
    // paced as ever: a persistent server's terminals outlive the
    // connection, and the input written to them must reach them.
    gen.out.end();
    if (gen.dead) return gen.exited;
    const local = !this.transport && process.platform !== 'win32';
    this._watchClose(gen, local);
    if (!gen.closeBound) {
      gen.closeBound = setTimeout(() => {
        if (gen.dead) return;
        this._log(`${this._who()} did not end within ${CLOSE_BOUND} ms of close(): ending it`);
        gen.child.kill(local ? 'SIGTERM' : 'SIGKILL');
      }, CLOSE_BOUND);
      gen.closeBound.unref();
      gen.exited.then(() => clearTimeout(gen.closeBound));
    }
    return gen.exited;
  }

  // _watchClose drops what close() left to write once the sidecar stops
  // taking it (nothing of it went out, and no byte came back, for
  // CLOSE_STALL ms): one holding
  // input back for a child that does not read reads nothing more, the end
  // of stdin included (PROTOCOL.md, INPUT), and a bridge writing to a
  // server that does so neither. A local one is then sent SIGTERM, which
  // ends either as the end of its input does (a plain sidecar shuts down,
  // a bridge leaves its terminals detached on the server). A transport
  // (ssh) is not ended for that: over there the end may yet come
  // through; it gets the bound.
  _watchClose(gen, local) {
    let left = gen.out.pending;
    let since = Date.now();
    const look = () => {
      gen.closeStall = null;
      if (gen.dead || gen.out.pending === 0) return;
      // Bytes from it (output, a PONG, the HELLO answer) say it is alive.
      if (gen.out.pending < left || gen.lastRx >= since) {
        left = gen.out.pending;
        since = Date.now();
        gen.closeStall = setTimeout(look, CLOSE_STALL).unref();
        return;
      }
      this._log(`${this._who()} took none of the ${gen.out.pending} byte(s) left to write, and sent nothing, for ${CLOSE_STALL} ms after close(): dropping them`);
      gen.out.abandon();
      gen.out.end();
      if (local) gen.child.kill('SIGTERM');
    };
    if (left > 0 && !gen.closeStall) gen.closeStall = setTimeout(look, CLOSE_STALL).unref();
  }

  // _answersPing says whether gen's sidecar answers PING, for the pace of
  // a paste (writer.js): from its HELLO answer, or, if nobody asked for
  // one, after asking now (a promise, settled once it answered or after
  // PASTE_HELLO_WAIT; no answer by then: unpaced until one comes).
  _answersPing(gen) {
    if (gen.pingable !== undefined) return gen.pingable;
    if (gen.paceAsked || gen.dead) return false;
    gen.paceAsked = true;
    if (!gen.hello) {
      // Weak, as the wait below: the terminals' pipes hold the event loop
      // while the paste matters; once they ended, an old sidecar's silence
      // must not keep the script alive for helloTimeout.
      gen.hello = this._handshake(gen, true);
      // Its failure (an old sidecar) only means the paste goes unpaced.
      gen.hello.catch(() => {});
    }
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, PASTE_HELLO_WAIT);
      timer.unref();
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      gen.hello.then(done, done);
    });
  }

  // _notePeer takes what a HELLO answer says about PING: INPUT that waits
  // for it goes on. Called with the parsed body, by the dispatch or by a
  // pid read that sees the answer first (twice is harmless).
  _notePeer(gen, msg) {
    if (msg === null || typeof msg !== 'object' || !Array.isArray(msg.features)) return;
    gen.pingable = msg.features.includes('keepalive');
    gen.out.paceKnown();
  }

  _log(line) {
    if (this.logger) this.logger(line);
  }

  _start() {
    if (this._gen) return this._gen;
    this._gen = this._connect();
    return this._gen;
  }

  // _connect starts a sidecar (or its transport) and, with hello, the
  // handshake; _start makes it the current one, a reconnect attempt only
  // once it answered.
  _connect() {
    let path, args, env, mark;
    if (this.transport && this._install) {
      // What follows the installed sidecar's path in the command line the
      // transport runs (the name was checked: letters, digits, . _ -).
      const rest = typeof this.persist === 'string' ? ` --persist ${this.persist}` : '';
      if (this._installed) [path, ...args] = [...this.transport, `${this._installed}${rest}`];
      else [path, ...args] = installArgv(this._install, findPtyplex(this._install, this.path, this._env), this.transport, rest);
      env = this._env || process.env;
      mark = `transport ${pathModule.basename(this.transport[0])}: `;
    } else if (this.transport) {
      [path, ...args] = this.transport;
      // ssh and kubectl need ours (HOME, SSH_AUTH_SOCK, KUBECONFIG); the
      // remote sidecar's comes from the other side.
      env = this._env || process.env;
      // ssh passes the remote sidecar's stderr on too: the mark says
      // which way a line came.
      mark = `transport ${pathModule.basename(path)}: `;
    } else {
      path = this.path || resolveSidecar();
      args = this.persist ? ['--persist', this.persist, ...this._args] : this._args;
      // An empty environment: OPEN carries the child's whole environment,
      // so the child sees exactly options.env (node-pty's semantics)
      // rather than options.env merged over ours. A bridge (persist, or
      // --persist among args, as a --readopt host runs it) gets what
      // places the server's socket, or it would start a server where
      // `ptyplex-sidecar --persist NAME --list` run from a shell, and
      // Sidecar({ persist: NAME }), never look.
      env = this.persist || bridgeArgs(this._args) ? persistEnv(this._env || process.env) : {};
      mark = '';
    }
    const installing = !!(this.transport && this._install && !this._installed);
    // windowsHide: no console window for the sidecar when the host is a GUI
    // program (Electron); its stdio are these pipes either way.
    // detached (setsid) on Unix: a sidecar in our process group would get
    // what the terminal we run in sends it (^C's SIGINT, SIGHUP, a shell's
    // kill of the job), shut down and end every terminal, even when this
    // process traps the signal; node-pty's children are in sessions of
    // their own. It still ends when we do: at the end of its stdin, or by
    // its watchdog. A transport (ssh) stays in our group, where it can
    // ask for a password on our terminal.
    const detached = !this.transport && process.platform !== 'win32';
    const child = childProcess.spawn(path, args, { stdio: ['pipe', 'pipe', 'pipe'], env, windowsHide: true, detached });
    // abandoned: ids whose open timed out; their late frames are answered
    // (OPENED with CLOSE) or dropped.
    // suspended: dropped and being resumed (resume.js); attempt: a
    // reconnect attempt not yet answering; lastRx: when it last sent us
    // bytes (the keepalive's clock).
    const gen = { child, terms: new Map(), abandoned: new Set(), closing: false, dead: false, refed: true, hello: null, helloWait: null, held: null, listWaits: [],
      suspended: false, attempt: false, resumable: false, lastRx: Date.now(), ka: null,
      // heard: a byte came from it; said: the last line on its stderr.
      heard: false, said: '',
      // installing: while the first connect installs, the timers (open,
      // HELLO) waiting to start once it has.
      installing: installing ? [] : null,
      // pingable: whether it answers PING, once its HELLO answer said;
      // paceAsked: a paste asked for that answer (writer.js's pace).
      pingable: undefined, paceAsked: false, helloExpired: false, closeBound: null, closeStall: null,
      // helloTimer: the HELLO answer's timeout (handshake() refs a paste's).
      helloTimer: null };
    let exitedResolve;
    gen.exited = new Promise((r) => (exitedResolve = r));
    const parser = new FrameParser(
      (type, body) => this._frame(gen, type, body),
      (id, data) => {
        const term = gen.terms.get(id);
        if (!term) {
          if (gen.abandoned.has(id)) return;
          throw peerError(`protocol violation by ${this._name()}: OUTPUT for terminal ${JSON.stringify(id)}, which is not open`);
        }
        if (term._state !== 'live') {
          throw peerError(`protocol violation by ${this._name()}: OUTPUT for terminal ${JSON.stringify(id)} before its OPENED`);
        }
        // Closing lifts every gate in the sidecar; until then a peer
        // sending more than it was granted is not one to buffer for.
        if (!gen.closing && !term._spend(data.length)) {
          throw peerError(
            `protocol violation by ${this._name()}: terminal ${JSON.stringify(id)} got OUTPUT beyond the ${this.creditWindow} byte credit window it was granted`,
          );
        }
        term._output(data);
      },
      // An OUTPUT frame that comes in pieces is checked whole at its
      // start: a peer announcing 16 MiB and sending it a byte at a time
      // is refused at once, not once the credit ran out.
      (id, n) => {
        const term = gen.terms.get(id);
        if (!term || term._state !== 'live' || gen.closing) return; // the pieces say what is wrong, as for a whole frame
        if (!term._affords(n)) {
          throw peerError(
            `protocol violation by ${this._name()}: terminal ${JSON.stringify(id)} got an OUTPUT frame of ${n} bytes, beyond the ${this.creditWindow} byte credit window it was granted`,
          );
        }
      },
    );
    gen.parser = parser;
    gen.out = new FrameWriter(child.stdin, { pace: () => this._answersPing(gen) });
    gen.peek = null; // bytes read ahead by _awaitPid, not yet parsed
    gen.push = (chunk) => {
      if (gen.dead) return;
      try {
        parser.push(chunk);
      } catch (e) {
        // The parser's own errors (a corrupt stream) say what, not who.
        const err = e.peer ? e : peerError(`protocol violation by ${this._name()}: ${e.message}`);
        this._log(err.message);
        child.kill('SIGKILL');
        this._died(gen, { error: err });
      }
    };
    child.stdout.on('data', (chunk) => {
      gen.lastRx = Date.now();
      gen.heard = true;
      if (!gen.peek) return gen.push(chunk);
      // Behind what was read ahead, and seen by its scanner: a listener
      // that reads a pid during the drain reads on from after this chunk.
      this._stash(gen.peek, chunk);
      this._drainPeek(gen);
    });
    // The last frames (EXITs at shutdown) may be in a read-ahead.
    child.stdout.on('end', () => this._drainPeek(gen));
    let errTail = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (s) => {
      const lines = (errTail + s).split('\n');
      errTail = lines.pop();
      for (let l of lines) {
        // ssh ends its own lines with CR LF.
        if (l.endsWith('\r')) l = l.slice(0, -1);
        if (l.trim()) gen.said = l.trim().slice(0, 512);
        if (this._install && l.startsWith(INSTALLED_MARK)) {
          this._installed = l.slice(INSTALLED_MARK.length);
          this._log(`installed: ${this._installed}`);
          const arms = gen.installing || [];
          gen.installing = null;
          for (const arm of arms) arm();
        } else {
          this._log(mark + l);
        }
      }
    });
    child.stdin.on('error', () => {}); // a dead sidecar shows up as 'exit'
    child.on('error', (err) => {
      this._log(`${this.transport ? 'transport' : 'ptyplex-sidecar'} (${path}): ${err.message}`);
      this._died(gen, { error: err });
      exitedResolve();
    });
    child.on('exit', (code, signal) => {
      // stdout may still hold frames: let it end before tearing down
      // (bounded, in case something inherited the pipe).
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        this._drainPeek(gen);
        if (errTail) {
          const l = errTail.replace(/\r$/, '');
          errTail = '';
          if (l.trim()) gen.said = l.trim().slice(0, 512);
          this._log(mark + l);
        }
        this._died(gen, { code, signal });
        exitedResolve();
      };
      // stderr too: its last line says why a transport ended.
      const open = [child.stdout, child.stderr].filter((st) => !(st.readableEnded || st.destroyed));
      if (!open.length) finish();
      else {
        let n = open.length;
        for (const st of open) st.once('close', () => --n === 0 && finish());
        setTimeout(finish, 1000).unref();
      }
    });
    if (this.hello) {
      gen.held = [];
      gen.hello = this._handshake(gen);
      gen.hello.then((h) => {
        const held = gen.held;
        gen.held = null;
        for (const b of held) this._sendTo(gen, b);
        this._connected(gen, h);
      }, () => {});
      // A sidecar we cannot use is not used: its terminals fail with
      // the reason, which says what to install.
      gen.hello.catch((err) => {
        if (gen.dead) return;
        child.kill('SIGKILL');
        this._died(gen, { error: err });
      });
    }
    return gen;
  }

  // _sendTo writes a frame to gen's sidecar; frames for a sidecar that
  // died are dropped (its terminals have ended).
  _sendTo(gen, buf) {
    if (gen && gen.suspended) {
      // Dropped, being resumed: sent, in order, after the terminals'
      // ATTACHes on the next connection. CREDIT is not (resume.js).
      if (buf[4] !== T.CREDIT) gen.held.push(buf);
      return;
    }
    if (!gen || gen.dead) return;
    // With options.hello nothing goes out before the handshake has
    // succeeded: a sidecar we cannot use gets no terminals.
    if (gen.held) gen.held.push(buf);
    else gen.out.write(buf);
  }

  // _awaitPid reads the sidecar's stdout synchronously, blocking the event
  // loop, until OPENED or ERROR for terminal id has come, and returns the
  // pid (0 after an ERROR, after limitMs, or when it cannot be done). What
  // it reads is only looked at here: it is parsed as usual (frames
  // dispatched, output delivered) on the event loop's next turn, or before
  // the next chunk or the end the event loop reads, so no listener runs
  // inside this call and the stream keeps its order. Frames of ours that
  // the pipe had no room for yet (the OPEN behind a large write) are
  // pushed on from here as the sidecar reads them (FrameWriter). It gives
  // up at once when the order could break (output the stream has
  // buffered but not emitted), or when our frames wait in node's stream
  // (Windows), which only the event loop sends: the sidecar could never
  // answer while we wait.
  _awaitPid(gen, id, limitMs) {
    if (!gen || gen.dead) return 0;
    const out = gen.child.stdout;
    const fd = out._handle && out._handle.fd;
    if (!(fd >= 0) || out.readableLength > 0 || out.isPaused() || (!gen.out.direct && gen.out.pending > 0)) return 0;
    if (gen.peek && gen.peek.broken) return 0;
    // Held behind the handshake, the OPEN has not even been sent.
    if (gen.held) return 0;
    if (!gen.peek) {
      const seen = new Map(); // terminal id -> pid, 0 for ERROR
      const scanner = gen.parser.fork((type, body) => {
        // A paste's PONG, or the HELLO answer it waits for, lets the
        // frames behind it (the OPEN) go on from inside this wait; the
        // dispatch sees them again later, which changes nothing.
        if (type === T.PONG) return gen.out.ponged(body);
        if (type === T.HELLO_REPLY) {
          try {
            this._notePeer(gen, JSON.parse(body.toString('utf8')));
          } catch {
            // The dispatch reports it.
          }
          return;
        }
        if (type !== T.OPENED && type !== T.ERROR) return;
        try {
          const msg = JSON.parse(body.toString('utf8'));
          if (!seen.has(msg.terminalId)) seen.set(msg.terminalId, type === T.OPENED ? msg.pid || 0 : 0);
        } catch {
          // _frame reports it when the real parser gets there.
        }
      });
      gen.peek = { scanner, seen, chunks: [], bytes: 0, eof: false, draining: false, broken: false };
      // setImmediate, not nextTick: a listener attached after an await
      // must not miss what was read ahead, as it would not with node-pty
      // (nothing arrives before the event loop polls). New chunks drain
      // these first anyway.
      setImmediate(() => this._drainPeek(gen));
    }
    const peek = gen.peek;
    const deadline = Date.now() + limitMs;
    let nap = 0.02;
    let buf = null; // a chunk read keeps its buffer: a new one for the next
    // What is read ahead stays in memory until the event loop parses it:
    // a peer that floods frames without the OPENED must not make this
    // hold more than a bound. The pid then comes with OPENED.
    while (!peek.seen.has(id) && !peek.eof && peek.bytes <= READ_AHEAD_LIMIT) {
      if (gen.out.pending > 0) gen.out.flushNow();
      if (!buf) buf = Buffer.allocUnsafe(64 << 10);
      let n;
      try {
        n = fs.readSync(fd, buf, 0, buf.length, null);
      } catch (err) {
        if (err.code !== 'EAGAIN' && err.code !== 'EWOULDBLOCK') break;
        if (Date.now() >= deadline) break;
        sleepFor(nap);
        nap = Math.min(nap * 2, 0.2);
        continue;
      }
      if (n === 0) {
        peek.eof = true; // the event loop sees the end too
        break;
      }
      nap = 0.02;
      const chunk = buf.subarray(0, n);
      buf = null;
      if (!this._stash(peek, chunk)) break;
    }
    return peek.seen.get(id) || 0;
  }

  // _stash appends chunk to what peek holds for the parser, in stream
  // order, and lets its scanner look at it. false: the scanner found the
  // stream corrupt (the real parser reports it when it gets there).
  _stash(peek, chunk) {
    peek.chunks.push(chunk);
    peek.bytes += chunk.length;
    if (peek.broken) return false;
    try {
      peek.scanner.push(chunk);
      return true;
    } catch {
      peek.broken = true;
      return false;
    }
  }

  // _drainPeek parses what _awaitPid read ahead. A listener that reads a
  // pid meanwhile goes on with the same look-ahead (its scanner has seen
  // every chunk read so far), and what it reads is drained here too.
  _drainPeek(gen) {
    const peek = gen.peek;
    if (!peek || peek.draining) return;
    peek.draining = true;
    for (let i = 0; i < peek.chunks.length; i++) gen.push(peek.chunks[i]);
    if (gen.peek === peek) gen.peek = null;
  }

  // _refresh keeps the event loop alive exactly while terminals exist, as
  // node-pty does: an idle sidecar does not hold a script open.
  _refresh(gen) {
    const want = (gen.terms.size > 0 || gen.closing || gen.listWaits.length > 0) && !gen.dead;
    if (want === gen.refed) return;
    gen.refed = want;
    const c = gen.child;
    for (const s of [c, c.stdin, c.stdout, c.stderr]) {
      if (s && typeof s.ref === 'function') want ? s.ref() : s.unref();
    }
    // A pipe's handle hides behind _handle on some versions.
    for (const s of [c.stdin, c.stdout, c.stderr]) {
      if (s && s._handle && typeof s._handle.ref === 'function') want ? s._handle.ref() : s._handle.unref();
    }
  }

  _frame(gen, type, body) {
    if (this._persistFrame(gen, type, body)) return;
    if (type === T.PONG) {
      // A paste's (writer.js); the keepalive's counts as any byte does.
      gen.out.ponged(body);
      return;
    }
    const name = FRAME_NAMES[type];
    if (!name) return; // newer sidecars may send more; the protocol says skip them
    let msg;
    try {
      msg = JSON.parse(body.toString('utf8'));
    } catch {
      msg = undefined;
    }
    const isObject = msg !== null && typeof msg === 'object' && !Array.isArray(msg);
    if (type === T.HELLO_REPLY) {
      const w = gen.helloWait;
      gen.helloWait = null;
      if (isObject) this._notePeer(gen, msg);
      if (!w && gen.helloExpired && isObject) {
        // Asked, but later than helloTimeout: that handshake failed, and
        // the answer still says whether PING is answered.
        gen.helloExpired = false;
        return;
      }
      if (!w) throw peerError(`protocol violation by ${this._name()}: a HELLO answer nobody asked for`);
      if (!isObject || !Number.isInteger(msg.protocol) || msg.protocol < 0) {
        const err = peerError(`${this._name()} answered HELLO with a malformed frame (not a JSON object with a protocol number)`);
        w.reject(err);
        throw err;
      }
      w.resolve({ version: String(msg.version ?? ''), protocol: msg.protocol, features: Array.isArray(msg.features) ? msg.features : [], os: msg.os, arch: msg.arch });
      return;
    }
    if (!isObject) throw peerError(`${this._name()} sent a malformed ${name} frame (not a JSON object)`);
    const term = gen.terms.get(msg.terminalId);
    if (!term) {
      if (gen.abandoned.has(msg.terminalId)) {
        if (type === T.OPENED) this._sendTo(gen, controlFrame(T.CLOSE, { terminalId: msg.terminalId }));
        if (type === T.EXIT || type === T.ERROR) gen.abandoned.delete(msg.terminalId);
        return;
      }
      if (type === T.ERROR && !msg.terminalId && gen.helloWait) {
        // Not about a terminal: a sidecar refusing the handshake.
        const w = gen.helloWait;
        gen.helloWait = null;
        w.reject(peerError(`${this._name()} answered HELLO with ERROR ${JSON.stringify(msg.message)}`));
        return;
      }
      if (type === T.OPENED || type === T.EXIT) {
        // A second EXIT, or frames for a terminal never opened: the
        // peer's idea of which terminals exist is not ours.
        throw peerError(`protocol violation by ${this._name()}: ${name} for terminal ${JSON.stringify(msg.terminalId)}, which is not open`);
      }
      return;
    }
    if (type === T.OPENED && term._state !== 'pending') {
      throw peerError(`protocol violation by ${this._name()}: a second OPENED for terminal ${JSON.stringify(msg.terminalId)}`);
    }
    switch (type) {
      case T.OPENED:
        clearTimeout(term._timer);
        term._opened(msg);
        break;
      case T.ERROR:
        if (term._state === 'pending') {
          clearTimeout(term._timer);
          gen.terms.delete(term._id);
          // This sidecar's reasons for a program begin with "cannot start
          // FILE:" already (a bad cwd's does not); others' may say anything.
          const reason = String(msg.message);
          term._failed(new Error(reason.startsWith('cannot start ') ? reason : `cannot start ${term._file}: ${reason}`));
          this._refresh(gen);
        } else {
          // A refused FOREGROUND is answered by its promise, not as an error.
          if (/^FOREGROUND\b/.test(String(msg.message)) && term._fgWaiters.length) term._foregroundRefused();
          else term._emitError(new Error(msg.message));
        }
        break;
      case T.EXIT: {
        gen.terms.delete(term._id);
        // Its input still waiting in the package has nobody to read it.
        if (gen.out && gen.out.dropInput) gen.out.dropInput(term._id);
        this._refresh(gen);
        if (term._state !== 'live') return;
        // node-pty's shape: a signal death is exit code 0 and the signal's number.
        const sig = msg.signal ? signalNumber(msg.signal) || 0 : 0;
        const code = msg.exitCode === null || msg.exitCode === undefined ? null : sig ? 0 : msg.exitCode;
        term._exited(code, sig);
        break;
      }
      case T.FOREGROUND_INFO:
        term._foreground(msg);
        break;
      default:
      // Newer sidecars may send more; nothing to do.
    }
  }

  _died(gen, how) {
    if (gen.dead) return;
    gen.dead = true;
    this._stopKeepalive(gen);
    if (gen.helloWait) {
      const w = gen.helloWait;
      gen.helloWait = null;
      const detail = how.error ? how.error.message : this._told(how) ? `${this._who()} ${this._howEnded(gen, how)}` : '';
      w.reject(peerError(`${this._name()} ended before answering HELLO${detail ? `: ${detail}` : ''}`));
    }
    // A reconnect attempt that failed: the attempt loop goes on.
    if (gen.attempt) return this._refresh(gen);
    // A connection that ended unasked, whose terminals can be resumed.
    if (!gen.closing && gen.resumable && this._reconnect && this._gen === gen) return this._suspend(gen, how);
    if (this._gen === gen) this._gen = null;
    gen.out.unsent(); // frees what never went out: nothing resumes it
    let why = how.error ? how.error.message : this._howEnded(gen, how);
    const lead = how.error && how.error.peer ? '' : `${this._who()} `;
    if (this._reconnect && !gen.closing && !(how.error && how.error.peer)) {
      // As in the Go client, whose Start fails then: only a connection
      // whose handshake succeeded is resumed.
      why += ' (on the first connection, before its handshake succeeded: reconnect resumes only a connection that completed one)';
    }
    const terms = [...gen.terms.values()];
    gen.terms.clear();
    for (const w of gen.listWaits.splice(0)) w.reject(new Error(`${lead}${why} before it answered LIST`));
    // A sidecar that ended unasked with status 0 shut down in order (a
    // signal sent to it): it answered every OPEN it had read before, and
    // read none after, so an unanswered one never started. It goes to a
    // new sidecar, as a spawn from the onExit of a terminal the shutdown
    // ended would have under node-pty; once only, in case that one does
    // the same.
    let reopened = 0;
    const reopen = !gen.closing && !how.error && !how.signal && how.code === 0 && !this.transport && !this._persistent;
    for (const term of terms) {
      clearTimeout(term._timer);
      if (reopen && term._state === 'pending' && term._openFrame && !term._reopened) {
        term._reopened = true;
        this._log(`${lead}${why} before ${term._file} started: opening it on a new sidecar`);
        const next = this._start();
        next.terms.set(term._id, term);
        term._gen = next;
        term._pidWaited = false;
        this._sendTo(next, term._openFrame);
        this._armOpenTimeout(next, term);
        this._refresh(next);
        reopened++;
        continue;
      }
      if (term._state === 'pending') term._failed(new Error(`${lead}${why} before ${term._file} ${term._attaching ? 'was attached' : 'started'}`));
      // A persistent server's terminal did not end with the connection.
      else if (term._state === 'live' && this._persistent) term._detached(gen.closing ? 'the host closed its connection' : `the connection ended: ${lead}${why}`);
      else if (term._state === 'live') term._exited(null, 0);
    }
    this._refresh(gen);
    if (!gen.closing) {
      this._log(`${lead}${why}; ${terms.length - reopened} terminal(s) lost`);
      this._onDeath.fire({ code: how.code === undefined ? null : how.code, signal: how.signal || null, error: how.error || null });
    }
  }
}

installPersist(Sidecar);
installResume(Sidecar);

module.exports = { Sidecar, DEFAULT_CREDIT_WINDOW, DEFAULT_OPEN_TIMEOUT, DEFAULT_HELLO_TIMEOUT };
