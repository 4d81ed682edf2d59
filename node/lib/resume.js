'use strict';
// Resuming after a dropped transport. With options.reconnect, a connection
// to a persistent sidecar that ends without this host closing it (ssh
// killed, the network gone, a laptop that slept) is not the end of its
// terminals: they live on in the persistent server, so this host starts
// the transport again, with backoff, and ATTACHes every terminal at the
// byte offset it had received (PROTOCOL.md, "Persistent terminals").
// onData goes on with no gap and no repeat; input written meanwhile is
// held, bounded, and sent after the ATTACHes. With options.keepalive the
// host PINGs the sidecar (PROTOCOL.md, "PING and PONG") and takes a
// connection that answers nothing for too long for a dead one, which TCP
// alone may take minutes to notice.
//
// The state, on the Sidecar: _gen stays the dropped connection, marked
// suspended, so that spawn, attach, list and every terminal's write see
// it and hold their frames in gen.held; _down says how the resuming goes.
// A reconnect attempt is a connection of its own (gen.attempt) that
// becomes _gen only once its handshake has succeeded.

const { T, controlFrame } = require('./frames');
const { Emitter } = require('./events');

// Defaults: the attempts wait 250 ms, 0.5 s, 1 s, ... up to 15 s between
// them, about 75 s in all before giving up; a laptop that sleeps longer
// gets its terminals back from a new host that attaches (list, attach).
const RECONNECT_DEFAULTS = Object.freeze({ attempts: 10, initialDelay: 250, maxDelay: 15000, queueLimit: 1 << 20 });
// A dead connection is noticed within interval + timeout: 15 s.
const KEEPALIVE_DEFAULTS = Object.freeze({ interval: 5000, timeout: 10000 });

function checkNumbers(what, given, defaults, rules) {
  if (typeof given !== 'object' || Array.isArray(given)) {
    throw new TypeError(`ptyplex: ${what} must be true, false or an object { ${Object.keys(defaults).join(', ')} }`);
  }
  const out = { ...defaults };
  for (const [k, v] of Object.entries(given)) {
    if (!(k in defaults)) throw new TypeError(`ptyplex: ${what}.${k} is not an option (${Object.keys(defaults).join(', ')} are)`);
    if (v === undefined) continue;
    if (typeof v !== 'number' || Number.isNaN(v) || !rules[k](v)) throw new TypeError(`ptyplex: ${what}.${k} must be ${rules[k].says} (not ${JSON.stringify(v)})`);
    // node fires a timer set past its longest delay after 1 ms: a
    // keepalive interval of 2 ** 32 would PING every millisecond. Such a
    // delay waits the longest node can (24.8 days), as meant.
    out[k] = rules[k].ms ? Math.min(v, MAX_TIMER) : v;
  }
  return out;
}

const whole = Object.assign((v) => Number.isSafeInteger(v) && v >= 0, { says: 'a whole number, 0 or more' });
const positive = Object.assign((v) => Number.isFinite(v) && v > 0, { says: 'a number of milliseconds above 0', ms: true });
const delay = Object.assign((v) => Number.isFinite(v) && v >= 0, { says: 'a number of milliseconds, 0 or more', ms: true });
// The longest delay setTimeout and setInterval take.
const MAX_TIMER = 2 ** 31 - 1;
const count = Object.assign((v) => v === Infinity || (Number.isSafeInteger(v) && v >= 1), { says: 'a whole number, 1 or more, or Infinity' });

function reconnectOptions(o) {
  if (o === undefined || o === null || o === false) return null;
  if (o === true) return { ...RECONNECT_DEFAULTS };
  return checkNumbers('reconnect', o, RECONNECT_DEFAULTS, { attempts: count, initialDelay: delay, maxDelay: delay, queueLimit: whole });
}

// keepaliveOptions: on by default with reconnect (resuming needs a dead
// connection noticed), off by default without.
function keepaliveOptions(o, byDefault) {
  if (o === undefined || o === null) return byDefault ? { ...KEEPALIVE_DEFAULTS } : null;
  if (o === false) return null;
  if (o === true) return { ...KEEPALIVE_DEFAULTS };
  return checkNumbers('keepalive', o, KEEPALIVE_DEFAULTS, { interval: positive, timeout: positive });
}

const EVENTS = ['disconnected', 'reconnected', 'gaveup'];

// The frame types _unsentRequests sends again after a drop.
const RESENT = new Set([T.INPUT, T.RESIZE, T.SIGNAL, T.CLOSE, T.FOREGROUND, T.DETACH]);

// frameTerminal is the terminal id a frame of ours names (undefined when
// none): INPUT's in its binary header, the others' in their JSON body.
function frameTerminal(buf) {
  if (buf[4] === T.INPUT) return buf.toString('utf8', 7, 7 + buf.readUInt16LE(5));
  try {
    return JSON.parse(buf.toString('utf8', 5)).terminalId;
  } catch {
    return undefined;
  }
}

function peerError(message) {
  const err = new Error(message);
  err.peer = true;
  return err;
}

// Methods mixed into Sidecar.prototype.
const sidecarMethods = {
  _initResume() {
    this._events = {};
    for (const name of EVENTS) this._events[name] = new Emitter();
    this._legacyListeners = [];
    /** Fires { error, code, signal } when the connection drops and resuming begins. */
    this.onDisconnected = this._events.disconnected.event;
    /** Fires { attempt, ms } once a new connection is up and every terminal's ATTACH was sent on it (their answers follow). */
    this.onReconnected = this._events.reconnected.event;
    /** Fires { error, attempts } when no attempt succeeded; the terminals then exit. */
    this.onGaveUp = this._events.gaveup.event;
  },

  /** on('disconnected' | 'reconnected' | 'gaveup', listener): the same events, EventEmitter-style. */
  on(event, listener) {
    const e = this._events[event];
    if (!e) throw new TypeError(`ptyplex: a Sidecar has no event ${JSON.stringify(event)} (${EVENTS.join(', ')})`);
    this._legacyListeners.push({ event, listener, disp: e.event(listener) });
    return this;
  },

  once(event, listener) {
    const wrapped = (v) => {
      this.off(event, wrapped);
      listener(v);
    };
    wrapped.listener = listener;
    return this.on(event, wrapped);
  },

  off(event, listener) {
    const i = this._legacyListeners.findIndex((e) => e.event === event && (e.listener === listener || e.listener.listener === listener));
    if (i >= 0) this._legacyListeners.splice(i, 1)[0].disp.dispose();
    return this;
  },

  removeListener(event, listener) {
    return this.off(event, listener);
  },

  /** True while a dropped connection is being resumed. */
  get reconnecting() {
    return !!this._down;
  },

  // _connected runs once a connection's handshake succeeded.
  _connected(gen, h) {
    if (gen.dead) return;
    gen.resumable = !!this._reconnect && h.features.includes('persist');
    // An older sidecar drops PING unanswered: it would be taken for dead.
    if (this._keepalive && h.features.includes('keepalive')) this._startKeepalive(gen);
  },

  // The keepalive: a PING every interval; any byte from the sidecar
  // within timeout after a PING says the connection lives (a PONG comes
  // behind the output already queued, so output is as good). No byte: the
  // transport is killed (SIGKILL: a stopped or wedged ssh would not heed
  // less) and the connection counts as dropped. The timers are unref'd:
  // the terminals' pipes keep the event loop alive, the keepalive never.
  _startKeepalive(gen) {
    const { interval, timeout } = this._keepalive;
    let seq = 0;
    gen.kaWaits = new Set();
    gen.ka = setInterval(() => {
      if (gen.dead) return this._stopKeepalive(gen);
      const sent = Date.now();
      // now: answered as soon as the sidecar reads it, even while a
      // paste waits for a child that reads nothing (a sidecar without
      // "pingNow" answers it in its turn); it overtakes the frames that
      // wait here too (FrameWriter).
      this._sendTo(gen, controlFrame(T.PING, { seq: ++seq, now: true }));
      const wait = setTimeout(() => {
        gen.kaWaits.delete(wait);
        // The verdict waits for the event loop's next poll: after it was
        // blocked (a long synchronous listener), timers run before the
        // bytes that came meanwhile are read, and would kill a live one.
        setImmediate(() => {
          if (gen.dead || gen.lastRx >= sent) return;
          const err = peerError(
            `${this._name()} sent nothing for ${Date.now() - gen.lastRx} ms and did not answer a PING within ${timeout} ms ` +
              '(keepalive.timeout): the connection is taken for dead and its transport killed',
          );
          this._log(err.message);
          gen.child.kill('SIGKILL');
          this._died(gen, { error: err });
        });
      }, timeout);
      wait.unref();
      gen.kaWaits.add(wait);
    }, interval);
    gen.ka.unref();
  },

  _stopKeepalive(gen) {
    if (gen.ka) clearInterval(gen.ka);
    gen.ka = null;
    for (const w of gen.kaWaits || []) clearTimeout(w);
    if (gen.kaWaits) gen.kaWaits.clear();
  },

  // _suspend: gen dropped and its terminals can be resumed. Live ones wait
  // (no onExit). One whose OPEN was in flight waits too: whether the
  // server got it is unknown, so the next connection ATTACHes it at 0 and
  // sends the OPEN again only if the server says it has no such terminal.
  // One whose attach() was in flight fails, as with a dead sidecar.
  _suspend(gen, how) {
    let why = how.error ? how.error.message : `it ${how.signal ? 'was ' : ''}${this._howEnded(gen, how)}`;
    // A reason that names the sidecar itself (the keepalive's) says "it":
    // the transport's argv once in a message is enough.
    if (why.startsWith(`${this._name()} `)) why = `it ${why.slice(this._name().length + 1)}`;
    const cause = peerError(`the connection to ${this._name()} dropped: ${why}`);
    // Taken before any listener runs (a terminal failing below): what the
    // writer had not sent went before whatever they write now.
    const unsent = gen.out.unsent();
    gen.suspended = true;
    gen.held = [];
    gen.heldInput = 0;
    gen.dropCause = cause;
    for (const w of gen.listWaits.splice(0)) w.reject(new Error(`${cause.message}, before it answered LIST`));
    for (const term of [...gen.terms.values()]) {
      if (term._state !== 'pending') continue;
      if (term._openFrame && !term._attaching) {
        term._reopen = true;
        continue;
      }
      clearTimeout(term._timer);
      gen.terms.delete(term._id);
      term._failed(new Error(`${cause.message}, before ${term._file} ${term._attaching ? 'was attached' : 'started'}`));
    }
    // First in what the next connection gets: what the terminals left
    // asked for before the drop and this host had not sent.
    gen.held = this._unsentRequests(gen, unsent).concat(gen.held);
    this._refresh(gen); // its process is gone: the backoff timer holds the event loop now
    const d = { gen, since: Date.now(), attempt: 0, cause, lastError: cause, timer: null, trying: null };
    this._down = d;
    this._log(`${cause.message}; reconnecting to resume ${gen.terms.size} terminal(s)`);
    this._events.disconnected.fire({ error: cause, code: how.code === undefined ? null : how.code, signal: how.signal || null });
    this._schedule(d);
  },

  // _unsentRequests keeps, of the frames gen's writer had not wholly
  // written (unsent: a paste paced behind its PONGs, and what was written
  // after it; one cut short the peer never took, reading frames whole),
  // in order, the requests of its terminals that resume: input, resizes,
  // signals, closes, detaches, FOREGROUND questions.
  // Those were not in the dead transport, so sent again they arrive once.
  // Not kept: CREDIT and PING (the ATTACH sets the window afresh, the
  // pace and the keepalive begin again) and what the suspend answered
  // already (LIST, ATTACH: failed) or resends its own way (OPEN).
  _unsentRequests(gen, unsent) {
    const kept = [];
    for (const buf of unsent) {
      if (!RESENT.has(buf[4])) continue;
      const id = frameTerminal(buf);
      const term = id === undefined ? undefined : gen.terms.get(id);
      if (term && (term._state === 'live' || term._reopen)) kept.push(buf);
    }
    return kept;
  },

  // _schedule waits before the next attempt: initialDelay, doubling up
  // to maxDelay. Without terminals to resume the timer does not hold the
  // event loop (an idle sidecar never does).
  _schedule(d) {
    if (this._down !== d) return;
    const r = this._reconnect;
    if (d.attempt >= r.attempts) return this._giveUp(d, null);
    d.attempt++;
    const wait = Math.min(r.maxDelay, r.initialDelay * 2 ** (d.attempt - 1));
    d.timer = setTimeout(() => this._attempt(d), wait);
    if (d.gen.terms.size === 0) d.timer.unref();
  },

  _attempt(d) {
    d.timer = null;
    if (this._down !== d) return;
    let gen;
    try {
      gen = this._connect();
    } catch (err) {
      d.lastError = err;
      this._log(`reconnect attempt ${d.attempt} failed: ${err.message}`);
      return this._schedule(d);
    }
    gen.attempt = true;
    d.trying = gen;
    gen.hello.then(
      () => {
        d.trying = null;
        if (this._down !== d) return; // closed meanwhile: _closeDown killed it
        if (gen.dead) return this._schedule(d);
        this._resume(d, gen);
      },
      (err) => {
        d.trying = null;
        if (this._down !== d) return;
        d.lastError = err;
        this._log(`reconnect attempt ${d.attempt} failed: ${err.message}`);
        // A peer that is no longer persistent will not become one.
        if (/is not a persistent sidecar/.test(err.message)) return this._giveUp(d, null);
        this._schedule(d);
      },
    );
  },

  // _resume makes gen the connection: every live terminal is ATTACHed at
  // the bytes it has received, then what was held goes out in order
  // (input, resizes, kills, OPENs of terminals spawned meanwhile).
  //
  // The offset is every byte received: those delivered to onData, those
  // pause() queued (they are still delivered, from the queue), and the
  // start of a UTF-8 character the decoder holds. The decoder keeps that
  // tail and the server sends the rest of the character next, so a
  // decoded stream goes on exactly as a byte stream does (pty.offset,
  // which excludes the tail, is what a new host attaching from saved
  // state uses instead). The credit window starts afresh, less what
  // pause() holds; the ATTACH offset acknowledges every byte before it.
  _resume(d, gen) {
    const old = d.gen;
    gen.attempt = false;
    this._down = null;
    gen.terms = old.terms;
    gen.abandoned = old.abandoned;
    const lists = []; // the LISTs sent here are answered before those held
    let n = 0;
    for (const term of gen.terms.values()) {
      term._gen = gen;
      if (term._reopen) {
        // Its OPEN was in flight at the drop: attached from 0 if the
        // server started it (its pid from the LIST, as attach() does),
        // else (an ERROR) opened now (persist.js).
        term._reopen = false;
        term._pidWaited = true;
        term._attaching = { offset: 0, reopen: true };
        lists.push({ resolve: (entries) => term._listed(entries), reject: () => {} });
        this._sendTo(gen, controlFrame(T.LIST, {}));
        this._sendTo(gen, controlFrame(T.ATTACH, { terminalId: term._id, offset: 0, credit: this.creditWindow }));
        n++;
        continue;
      }
      if (term._state !== 'live') continue; // spawned meanwhile: its OPEN is held
      const offset = term._offset + term._queued;
      const credit = Math.max(0, this.creditWindow - term._queued);
      term._credit = credit;
      term._unacked = 0;
      // A holder sends the holder generation it was last given, if the
      // server gave one (PROTOCOL.md, "Holder generations"): the server
      // refuses the ATTACH if another connection took the terminal over
      // meanwhile, where a plain ATTACH would take it back. A viewer
      // comes back as a viewer.
      const holdGen = term.viewing ? null : term._holdGen;
      term._attaching = { offset, resume: true, holdGen };
      const body = { terminalId: term._id, offset, credit };
      if (term.viewing) body.mode = 'view';
      else if (holdGen !== null) body.resume = holdGen;
      this._sendTo(gen, controlFrame(T.ATTACH, body));
      n++;
    }
    gen.listWaits = [...lists, ...old.listWaits];
    for (const b of old.held) this._sendTo(gen, b);
    old.held = null;
    old.suspended = false;
    this._gen = gen;
    this._refresh(gen);
    const ms = Date.now() - d.since;
    this._log(`reconnected to ${this._name()} after ${ms} ms (attempt ${d.attempt}); ${n} terminal(s) attached again`);
    this._events.reconnected.fire({ attempt: d.attempt, ms });
  },

  // _giveUp: no attempt succeeded. The terminals end here as those of a
  // dead sidecar do (onExit with exitCode null, signal 0; pending ones
  // fail), though their programs may run on in the persistent server,
  // where list() and attach() on a later connection find them.
  _giveUp(d, err) {
    if (this._down !== d) return;
    this._down = null;
    clearTimeout(d.timer);
    if (d.trying && !d.trying.dead) d.trying.child.kill('SIGKILL');
    const error =
      err ||
      peerError(`gave up reconnecting to ${this._name()} after ${d.attempt} attempt(s) (the last: ${d.lastError.message}); ${d.cause.message}`);
    const old = d.gen;
    old.suspended = false;
    old.held = null;
    if (this._gen === old) this._gen = null;
    const terms = [...old.terms.values()];
    old.terms.clear();
    for (const w of old.listWaits.splice(0)) w.reject(error);
    this._log(`${error.message}; ${terms.length} terminal(s) lost`);
    this._events.gaveup.fire({ error, attempts: d.attempt });
    for (const term of terms) {
      clearTimeout(term._timer);
      if (term._state === 'pending') term._failed(error);
      else if (term._state === 'live') term._exited(null, 0);
    }
    this._onDeath.fire({ code: null, signal: null, error });
  },

  // _closeDown: close() while resuming. The terminals are let go as a
  // persistent connection's are at close (onDetach); they run on.
  _closeDown() {
    const d = this._down;
    this._down = null;
    clearTimeout(d.timer);
    if (d.trying && !d.trying.dead) d.trying.child.kill('SIGKILL');
    const old = d.gen;
    old.suspended = false;
    old.held = null;
    old.closing = true;
    if (this._gen === old) this._gen = null;
    const terms = [...old.terms.values()];
    old.terms.clear();
    for (const w of old.listWaits.splice(0)) w.reject(new Error('the host closed the connection before it answered LIST'));
    for (const term of terms) {
      clearTimeout(term._timer);
      if (term._state === 'pending') term._failed(new Error(`the host closed the connection before ${term._file} started`));
      else if (term._state === 'live') term._detached('the host closed its connection');
    }
    return Promise.resolve();
  },

  // _holdInput counts input written while the connection is down against
  // reconnect.queueLimit (all terminals together: it bounds this
  // process's memory), or throws.
  _holdInput(term, n) {
    const gen = term._gen;
    const limit = this._reconnect.queueLimit;
    if (gen.heldInput + n > limit) {
      throw new Error(
        `ptyplex: cannot write ${n} byte(s) to terminal ${JSON.stringify(term._id)}: the connection is down (${gen.dropCause.message}) ` +
          `and ${gen.heldInput} byte(s) of input already wait for it; reconnect.queueLimit is ${limit} bytes`,
      );
    }
    gen.heldInput += n;
  },
};

function installResume(Sidecar) {
  for (const [k, v] of Object.entries(Object.getOwnPropertyDescriptors(sidecarMethods))) Object.defineProperty(Sidecar.prototype, k, v);
}

module.exports = { installResume, reconnectOptions, keepaliveOptions, RECONNECT_DEFAULTS, KEEPALIVE_DEFAULTS };
