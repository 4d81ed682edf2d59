'use strict';
// Persistent terminals (PROTOCOL.md, "Persistent terminals"): with
// new Sidecar({ persist: NAME }) the sidecar is `ptyplex-sidecar --persist
// NAME`, a bridge to a per-user server whose terminals outlive this host.
// This file adds what a host needs to come back to them: list(), attach()
// by byte offset (as the holder, or with { view: true } as one more
// viewer, output only), revive() of a terminal a dead server left, and
// the frames that answer those.

const { T, controlFrame } = require('./frames');
const { Emitter } = require('./events');
const { Terminal, holdGenOf } = require('./terminal');

// The environment the bridge gets: only what decides where the server's
// socket is, so that this host and `ptyplex-sidecar --persist NAME --list`
// run from a shell find the same server. Children get theirs from OPEN.
// HOME and XDG_CACHE_HOME are the fallback when /tmp/ptyplex-UID is not
// ours (another user made it first): the cache directory, as the Go
// client and the CLI use.
const PERSIST_ENV = ['PTYPLEX_RUNTIME_DIR', 'XDG_RUNTIME_DIR', 'TMPDIR', 'HOME', 'XDG_CACHE_HOME'];

// The persistent server's features, which ATTACHED does not repeat.
const PERSIST_FEATURES = ['signal', 'foreground', 'persist'];
// TAKEN_OVER is the server's DETACHED reason when another connection
// takes a terminal over; a refused resume is reported with it too.
const TAKEN_OVER = 'taken over by another connection';
// TAKEN_SINCE matches the server's refusal of an ATTACH whose resume is
// older than a takeover (PROTOCOL.md, "Holder generations"); the id is
// quoted the Go way, which the ERROR's terminalId makes needless to check.
const TAKEN_SINCE = /^ATTACH refused: terminal .* was taken over by another connection since this one held it/;

function checkName(name) {
  // The server's socket is NAME.sock: the bridge checks the name too, but
  // a clear error here beats a dead sidecar later.
  if (typeof name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) {
    throw new TypeError(`ptyplex: persist must be a name of letters, digits, '.', '_' and '-' (not ${JSON.stringify(name)})`);
  }
  return name;
}

function persistEnv(from) {
  const env = {};
  for (const k of PERSIST_ENV) if (typeof from[k] === 'string' && from[k]) env[k] = from[k];
  return env;
}

// idPrefix names the terminals one host spawns on a persistent server,
// which outlive it: a host that comes back must not choose an id that its
// predecessor's terminals still hold.
function idPrefix() {
  return `p${process.pid.toString(36)}${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}-`;
}

function isWhole(n) {
  return Number.isSafeInteger(n) && n >= 0;
}

// Methods mixed into Sidecar.prototype.
const sidecarMethods = {
  /**
   * Every terminal of the persistent server, attached or not, as LISTED
   * gives them ({ terminalId, pid, cmd, args, cols, rows, produced, start,
   * attached, detached, exited, exitCode, signal }).
   */
  list() {
    if (!this._persistent) return Promise.reject(notPersistent('list'));
    const gen = this._start();
    // A suspended connection (resume.js) holds the LIST for the next one.
    if (gen.dead && !gen.suspended) return Promise.reject(new Error('ptyplex-sidecar is not running'));
    return new Promise((resolve, reject) => {
      gen.listWaits.push({ resolve, reject });
      this._refresh(gen); // a caller awaiting the list keeps the loop alive
      this._sendTo(gen, controlFrame(T.LIST, {}));
    });
  },

  /**
   * Takes terminal terminalId of the persistent server over and returns it
   * as an IPty whose onData goes on from options.offset (the bytes of it
   * received before, which the old host saved from pty.offset). With
   * options.view it views the terminal instead: the same output, from its
   * own offset and credit, while the holder keeps it; write, resize and
   * kill throw until the holder hands it over (handOver).
   */
  attach(terminalId, options = {}) {
    if (!this._persistent) throw notPersistent('attach');
    if (typeof terminalId !== 'string' || !terminalId || Buffer.byteLength(terminalId) > 65535) {
      throw new TypeError(`ptyplex: attach needs a terminal id, a non-empty string (not ${JSON.stringify(terminalId)})`);
    }
    const offset = options.offset === undefined ? 0 : options.offset;
    const view = options.view === undefined ? false : options.view;
    if (typeof view !== 'boolean') {
      throw new TypeError(`ptyplex: attach: view must be true or false (not ${JSON.stringify(view)})`);
    }
    if (!isWhole(offset)) {
      throw new TypeError(`ptyplex: attach: offset must be a whole number of bytes (not ${JSON.stringify(offset)})`);
    }
    const gen = this._start();
    if (gen.terms.has(terminalId)) throw new Error(`ptyplex: terminal ${JSON.stringify(terminalId)} is already open on this host`);
    const term = new Terminal(this, terminalId, 'sh', [], { encoding: options.encoding, cols: options.cols, rows: options.rows });
    term._openBody = null;
    term._file = `terminal ${JSON.stringify(terminalId)}`;
    term._program = term._process = term._file; // until LISTED names its program
    term._attaching = { offset };
    term._offset = offset;
    term.viewing = view;
    // Its pid comes with the LISTED asked for below: never block for it.
    term._pidWaited = true;
    gen.terms.set(terminalId, term);
    term._gen = gen;
    this._sendTo(gen, controlFrame(T.LIST, {}));
    gen.listWaits.push({ resolve: (entries) => term._listed(entries), reject: () => {} });
    const body = { terminalId, offset, credit: this.creditWindow };
    if (view) body.mode = 'view';
    this._sendTo(gen, controlFrame(T.ATTACH, body));
    this._refresh(gen);
    return term;
  },

  /**
   * Starts terminal terminalId again, which a persistent server that died
   * left behind (list() marks it dead; --journal-dir): the same command,
   * args, cwd, env and size in a new terminal under the same id, held by
   * this host. Its onData begins with the old terminal's screen, then the
   * new program's output; `ready` resolves with OPENED (its new pid) and
   * rejects with the server's refusal (no dead terminal of that id, the
   * program cannot be started again).
   */
  revive(terminalId, options = {}) {
    if (!this._persistent) throw notPersistent('revive');
    if (typeof terminalId !== 'string' || !terminalId || Buffer.byteLength(terminalId) > 65535) {
      throw new TypeError(`ptyplex: revive needs a terminal id, a non-empty string (not ${JSON.stringify(terminalId)})`);
    }
    const gen = this._start();
    if (gen.terms.has(terminalId)) throw new Error(`ptyplex: terminal ${JSON.stringify(terminalId)} is already open on this host`);
    const term = new Terminal(this, terminalId, 'sh', [], { encoding: options.encoding });
    term._openBody = null;
    term._file = `terminal ${JSON.stringify(terminalId)}`;
    term._program = term._process = term._file; // until LISTED names its program
    gen.terms.set(terminalId, term);
    term._gen = gen;
    // The server starts it at the dead terminal's size, which LISTED,
    // answered before the REVIVE is, gives. Not its pid: that is the
    // dead one's, and OPENED brings the new one.
    this._sendTo(gen, controlFrame(T.LIST, {}));
    gen.listWaits.push({ resolve: () => term._revivedSize(), reject: () => {} });
    // No _openFrame: a REVIVE in flight when a connection drops is not
    // sent again (the server may have revived it already); it fails as
    // an attach in flight does, and list() tells which happened.
    this._sendTo(gen, controlFrame(T.REVIVE, { terminalId, credit: this.creditWindow }));
    this._armOpenTimeout(gen, term);
    this._refresh(gen);
    return term;
  },

  // _persistFrame handles the frames of persistence; false for the rest.
  _persistFrame(gen, type, body) {
    if (!this._persistent) return false;
    if (type !== T.LISTED && type !== T.ATTACHED && type !== T.SNAPSHOT && type !== T.DETACHED && type !== T.ERROR) return false;
    let msg;
    try {
      msg = JSON.parse(body.toString('utf8'));
    } catch {
      msg = null;
    }
    if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) {
      if (type === T.ERROR) return false;
      throw peerErr(`ptyplex-sidecar sent a malformed persistence frame 0x${type.toString(16)} (not a JSON object)`);
    }
    if (type === T.LISTED) {
      const w = gen.listWaits.shift();
      if (!w || !Array.isArray(msg.terminals)) throw peerErr('protocol violation by ptyplex-sidecar: a LISTED nobody asked for, or without terminals');
      const entries = msg.terminals.filter((e) => e && typeof e.terminalId === 'string');
      // A dead terminal's size, for its revive: an attach that reads the
      // dead terminal's bytes takes it out of later LISTEDs, and REVIVE's
      // OPENED does not say the size the server starts it at.
      for (const e of entries) {
        if (e.dead && isWhole(e.cols) && e.cols > 0 && isWhole(e.rows) && e.rows > 0) {
          if (!this._deadSizes) this._deadSizes = new Map();
          this._deadSizes.set(e.terminalId, { cols: e.cols, rows: e.rows, cmd: e.cmd });
        }
      }
      w.resolve(entries);
      this._refresh(gen);
      return true;
    }
    const term = gen.terms.get(msg.terminalId);
    if (type === T.ERROR) {
      // An ATTACH refused: the server says why (unknown id, offset past the end).
      if (!term || !term._attaching) return false;
      if (term._attaching.reopen) {
        // Its OPEN was in flight when the connection dropped, and the
        // server never got it (resume.js): it is sent now.
        term._attaching = null;
        this._sendTo(gen, term._openFrame);
        return true;
      }
      gen.terms.delete(term._id);
      // Its input still waiting in the package has nowhere to go.
      if (gen.out && gen.out.dropInput) gen.out.dropInput(term._id);
      if (term._attaching.resume && term._attaching.holdGen !== null && TAKEN_SINCE.test(String(msg.message))) {
        // Resuming after a drop: another connection became the holder
        // while this host was away (and may have let it go since). The
        // server kept it as it was; this host lost it as it loses a
        // terminal taken over while connected (onDetach, writes throw),
        // and never asks again without resume, which would steal it back.
        term._attaching = null;
        this._log(`terminal ${JSON.stringify(term._id)} not attached again after the connection dropped: ${msg.message}`);
        term._detached(TAKEN_OVER);
        this._refresh(gen);
        return true;
      }
      if (term._attaching.resume) {
        // Resuming after a drop (resume.js), the server no longer has it
        // (stopped and started again, or the exit long forgotten): it
        // ends as a terminal of a dead sidecar does.
        term._attaching = null;
        term._emitError(new Error(`cannot attach terminal ${JSON.stringify(term._id)} again after the connection dropped: ${msg.message}`));
        term._exited(null, 0);
        this._refresh(gen);
        return true;
      }
      term._failed(new Error(`cannot attach terminal ${JSON.stringify(term._id)}: ${msg.message}`));
      this._refresh(gen);
      return true;
    }
    if (!term) {
      throw peerErr(`protocol violation by ptyplex-sidecar: frame 0x${type.toString(16)} for terminal ${JSON.stringify(msg.terminalId)}, which is not open here`);
    }
    switch (type) {
      case T.ATTACHED:
        if (!term._attaching && term.viewing && msg.mode === 'hold' && isWhole(msg.offset) && isWhole(msg.lost)) {
          // The holder handed the terminal over to this viewer: it goes
          // on from where it was, as the holder; lost bytes, if any, are
          // repainted by the SNAPSHOT that follows.
          term.viewing = false;
          term._holdGen = holdGenOf(msg);
          term.lost += msg.lost;
          term._snapshotDue = msg.lost > 0;
          break;
        }
        if (!term._attaching || !isWhole(msg.offset) || !isWhole(msg.lost)) {
          throw peerErr(`protocol violation by ptyplex-sidecar: an unasked or malformed ATTACHED for terminal ${JSON.stringify(term._id)}`);
        }
        if (term._attaching.resume) {
          // Attached again after a drop (resume.js): output goes on from
          // what was received; bytes the journal let go meanwhile (ring
          // mode) are counted and repainted by the SNAPSHOT that follows.
          if (msg.offset !== term._attaching.offset) {
            throw peerErr(`protocol violation by ptyplex-sidecar: ATTACHED at ${msg.offset} for terminal ${JSON.stringify(term._id)}, asked for ${term._attaching.offset}`);
          }
          term._attaching = null;
          // The generation a later resume sends (none for a viewer). One
          // whose ATTACHED never came (the connection dropped again)
          // keeps the one it had: the server takes a resume with it still.
          term._holdGen = holdGenOf(msg);
          term.lost += msg.lost;
          term._snapshotDue = msg.lost > 0;
          // A viewer attached again is a new viewer to the server, under
          // a new number: the old one names nobody a holder can hand to.
          if (term.viewing && isWhole(msg.viewer) && msg.viewer > 0) term.viewer = msg.viewer;
          break;
        }
        term._attaching = null;
        term._snapshotDue = msg.lost > 0;
        // With bytes lost, the SNAPSHOT that follows moves the offset on.
        term._offset = msg.offset;
        term.lost = msg.lost;
        term.viewing = msg.mode === 'view';
        term.viewer = term.viewing && isWhole(msg.viewer) ? msg.viewer : 0;
        term._opened({ pid: term._pid, features: PERSIST_FEATURES, holdGen: msg.holdGen });
        break;
      case T.SNAPSHOT:
        if (typeof msg.data !== 'string' || !isWhole(msg.offset)) {
          throw peerErr(`protocol violation by ptyplex-sidecar: a malformed SNAPSHOT for terminal ${JSON.stringify(term._id)}`);
        }
        // Only the repaint an ATTACHED announced (bytes lost), and only
        // one: a SNAPSHOT at any other time would replace the terminal's
        // output and move its offset at the peer's whim. The Go client
        // ignores them too.
        if (!term._snapshotDue && term.viewing && !term._attaching && isWhole(msg.lost) && msg.lost > 0) {
          // A viewer fell out of the server's journal: skipped forward.
          term.lost += msg.lost;
          term._snapshot(msg);
          break;
        }
        if (!term._snapshotDue) {
          this._log(`ignored a SNAPSHOT for terminal ${JSON.stringify(term._id)} that no ATTACHED announced`);
          break;
        }
        term._snapshotDue = false;
        term._snapshot(msg);
        break;
      case T.DETACHED:
        gen.terms.delete(term._id);
        // This host no longer holds it: its input still waiting in the
        // package is nobody's now, and paced out (to be refused) it would
        // hold up this host's other terminals.
        if (gen.out && gen.out.dropInput) gen.out.dropInput(term._id);
        term._detached(String(msg.reason || 'detached'));
        this._refresh(gen);
        break;
    }
    return true;
  },
};

function notPersistent(what) {
  return new Error(`ptyplex: ${what} needs a persistent sidecar: new Sidecar({ persist: NAME })`);
}

function peerErr(message) {
  const err = new Error(message);
  err.peer = true;
  return err;
}

// Methods mixed into Terminal.prototype.
const terminalMethods = {
  /**
   * Lets the terminal go on without this host: it keeps running on the
   * server, to be attached again (from pty.offset) later.
   */
  detach() {
    if (this._state !== 'live' && this._state !== 'pending') return;
    if (!this._host._persistent) throw notPersistent('detach');
    this._host._sendTo(this._gen, controlFrame(T.DETACH, { terminalId: this._id }));
  },

  /**
   * Gives the terminal, which this host holds, to its viewer number
   * viewer (pty.viewer on the viewing host; list() shows them): it goes
   * on as the holder, and this host's onDetach fires.
   */
  handOver(viewer) {
    if (!this._host._persistent) throw notPersistent('handOver');
    if (!Number.isSafeInteger(viewer) || viewer < 1) {
      throw new TypeError(`ptyplex: handOver needs a viewer's number, a whole number from 1 (not ${JSON.stringify(viewer)})`);
    }
    this._refuseViewing('hand over');
    if (this._state !== 'live') return;
    this._host._sendTo(this._gen, controlFrame(T.DETACH, { terminalId: this._id, to: viewer }));
  },

  // _refuseViewing throws for what only a holder may do.
  _refuseViewing(what) {
    if (this.viewing) {
      throw new Error(`ptyplex: cannot ${what} terminal ${JSON.stringify(this._id)}: this host only views it`);
    }
  },

  _listed(entries) {
    const e = entries.find((x) => x.terminalId === this._id);
    if (e && Number.isInteger(e.pid) && e.pid > 0 && !this._pid) this._pid = e.pid;
    // An attached terminal has the size its holders gave it, not the
    // 80x24 of a new one: a host sizes its screen from cols and rows.
    if (e) this._serverSize(e);
    if (e) this._ran(e.cmd);
  },

  // _ran names the program the server runs in the terminal: what process
  // says until the foreground process is known (elsewhere than on Linux,
  // for a viewer, always), and once the terminal has ended, as node-pty
  // falls back to the file it ran.
  _ran(cmd) {
    if (typeof cmd !== 'string' || !cmd) return;
    this._program = cmd;
    if (this._state === 'pending') this._process = cmd;
  },

  // _serverSize takes the terminal's size from what the server says (a
  // LISTED entry, a SNAPSHOT), unless this host resized it since: the
  // server's answer may predate that RESIZE.
  _serverSize(m) {
    if (this._resized || !isWhole(m.cols) || m.cols < 1 || !isWhole(m.rows) || m.rows < 1) return;
    this.cols = m.cols;
    this.rows = m.rows;
  },

  // _revivedSize takes a revived terminal's size from the dead terminal it
  // replaces, as the last LISTED that showed it dead gave it (this one's,
  // or an earlier one's when an attach since took it out of the list).
  _revivedSize() {
    const sizes = this._host._deadSizes;
    const e = sizes && sizes.get(this._id);
    if (!e) return;
    sizes.delete(this._id);
    this.cols = e.cols;
    this.rows = e.rows;
    this._ran(e.cmd);
  },

  // _snapshot delivers the server's repaint, which stands in for the
  // bytes that fell out of its journal; output goes on from its offset.
  _snapshot(msg) {
    // The size it was drawn at: a viewer has no other news of a holder's resize.
    this._serverSize(msg);
    this._offset = msg.offset;
    this._utf8Tail = this._utf8Tail.subarray(0, 0);
    // A character the decoder began is not going to be completed.
    if (this._decoder) this._decoder.end();
    if (msg.data.length) this._onData.fire(this._decoder ? msg.data : Buffer.from(msg.data, 'utf8'));
  },

  _detached(reason) {
    this._state = 'detached';
    this._detachReason = reason;
    for (const w of this._fgWaiters.splice(0)) w(this._process);
    if (this._readyReject) this._readyReject(new Error(`terminal ${JSON.stringify(this._id)} detached before it was attached: ${reason}`));
    this._onDetach.fire({ reason });
  },
};

function installPersist(Sidecar) {
  Object.assign(Sidecar.prototype, sidecarMethods);
  Object.assign(Terminal.prototype, terminalMethods);
}

module.exports = { installPersist, checkName, persistEnv, idPrefix };
