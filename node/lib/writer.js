'use strict';
// FrameWriter: the frames to a sidecar's stdin, written by this package
// rather than handed to node's stream.
//
// Reading pid right after spawn waits for the sidecar's OPENED with the
// event loop blocked (Sidecar#_awaitPid), which works only once the OPEN
// is in the pipe. Data handed to node's stream that the pipe could not
// take at once (a large write() to a terminal just before, a paste) stays
// in libuv, which sends it only when the event loop runs again: an OPEN
// behind it could not be sent from inside the wait, and pid read 0. Here,
// where the pipe has a descriptor of its own (not on Windows), the frames
// are written to it directly, without blocking (the pipe is non-blocking):
// what the pipe does not take waits in this queue, and both the event loop
// and a pid read can push it on.
//
// A paste waits here, not in the pipe. The sidecar stops reading frames
// while a terminal's input queue is full, reading on only a bounded way
// (PROTOCOL.md, INPUT) for the CREDITs that let an echoing child (cat, a
// shell) go on: its output waits for credit and it reads no input till it
// has. A CREDIT written into the stream behind a whole paste would never
// be reached, and host and sidecar would wait for each other for ever. So
// at most INPUT_WINDOW bytes of INPUT are let out ahead of the pipe (given
// to it, or, on Windows, to node's stream) at a time; the frames behind
// them wait in order, and a CREDIT goes ahead of those that wait (here,
// where this writer writes the pipe, ahead of every frame not begun).
// Credit concerns output only: taking it ahead of input sent before it
// changes nothing the child sees, and every other frame keeps its place.
// And the event loop runs between two windows of a paste written here:
// the output that came meanwhile is read, and its CREDIT sent, before
// more INPUT goes out.
//
// That bounds what waits ahead of a CREDIT in the pipe, not what the
// sidecar has still to read of what went before it: the sidecar reads on
// only 1 MiB past the INPUT it holds back, and with a small credit window
// (64 KiB or less) an echoing child stops so early that more than that is
// always between the two. So INPUT also goes out in pieces of at most
// PIECE bytes, as the Go client sends it (PROTOCOL.md, INPUT): behind
// each a PING, and the next piece only once its PONG came back. The
// sidecar answers a PING when it has taken every frame before it, so no
// more than a piece it has not taken is ever out, and a CREDIT, which
// overtakes what waits here, is always within its look-ahead. Only a
// sidecar that answers PING (options.pace says which) is paced; small
// writes are counted, not PINGed: a PING goes out only when a piece fills.

const fs = require('fs');
const { T, controlFrame } = require('./frames');

// The longest pause between two tries at a full pipe (ms): the sidecar
// reads its stdin all the time, and a pipe stays full only while it holds
// input back (a terminal whose child does not read, PROTOCOL.md's INPUT
// bounds), which is no time to poll fast.
const MAX_RETRY_MS = 16;

// INPUT_WINDOW bounds the INPUT let out ahead of the pipe (and what is
// written here between two turns of the event loop). A CREDIT behind it
// is reached once the child has read that much and what the pipe holds
// (a few hundred KiB), which it can only do with credit left: so the
// window is kept well below the credit window (1 MiB by default, granted
// back by quarters). Two of Terminal#write's frames: a paste still goes
// on as fast as the pipe takes it.
const INPUT_WINDOW = 128 << 10;

// PIECE is the most INPUT out that the sidecar has not confirmed taking:
// half its look-ahead, leaving room for the frames beside it (other
// terminals', RESIZE, the PING itself).
const PIECE = 512 << 10;

// inputFor says whether INPUT frame buf is for terminal id.
function inputFor(buf, id) {
  const n = buf.readUInt16LE(5);
  return n === Buffer.byteLength(id) && buf.toString('utf8', 7, 7 + n) === id;
}

class FrameWriter {
  // options.stream: write through node's stream, as on Windows, even
  // where there is a descriptor (the tests run Windows' path so).
  // options.pace: called when a piece of INPUT is full, says whether the
  // sidecar answers PING: true, false, or a promise of either (while the
  // handshake that tells is under way). Without it nothing is paced.
  constructor(stream, options = {}) {
    this._stream = stream;
    const h = stream._handle;
    // On Windows the pipe is a handle with no descriptor (fd is -1).
    this._fd = !options.stream && process.platform !== 'win32' && h && Number.isInteger(h.fd) && h.fd >= 0 ? h.fd : -1;
    this._queue = []; // { buf, input, size }: frames let out, the first perhaps partly written
    this._queued = 0;
    this._waiting = []; // frames held back behind INPUT that has not left yet, in order
    this._waitHead = 0; // the first of _waiting not yet let out
    this._waitingBytes = 0;
    this._inputOut = 0; // bytes of INPUT let out and not in the pipe yet
    this._written = 0; // bytes written to the pipe, all told
    this._soon = null; // the event loop's next turn, between two windows of a paste
    this._timer = null;
    this._retry = 0;
    this._ending = false; // end() was called: the stream ends once the queue is written
    this._ended = false;
    this._broken = false;
    this._pace = options.pace || null;
    this._piece = 0; // INPUT let out since the last PONG of a paste's PING
    this._gate = null; // { body } a PING whose PONG INPUT waits for, or { asking: true }
    this._pings = 0;
    this._writing = false; // inside _write
    this._lost = null; // the frames not wholly written when the pipe broke, for unsent()
    this._taken = false; // unsent() was called: nothing more is kept
  }

  /** Whether this writer, not the stream, sends the frames (and flushNow can push them). */
  get direct() {
    return this._fd >= 0;
  }

  /** Bytes not yet in the pipe. */
  get pending() {
    return (this.direct ? this._queued : this._stream.writableLength) + this._waitingBytes;
  }

  write(buf) {
    if (this._broken || this._ending) return;
    const input = buf[4] === T.INPUT;
    const idle = this._queue.length === 0;
    // A CREDIT overtakes the frames that wait, and so does a HELLO (it
    // concerns no terminal; a paste may wait for its answer, asked as a
    // piece filled) and the keepalive's PING (the pacing PINGs are this
    // writer's own, which go out behind their pieces: _admits); anything
    // else waits behind them, and INPUT too once the window is out or its
    // piece is full.
    if (buf[4] !== T.CREDIT && buf[4] !== T.HELLO && buf[4] !== T.PING && (this._waitingBytes > 0 || (input && !this._admits(buf)))) {
      this._waiting.push(buf);
      this._waitingBytes += buf.length;
    } else {
      this._letOut(buf, input);
    }
    // (_admits may have let a PING out.) A write from inside _write (a
    // HELLO that pacing asks for) is written by the loop already running.
    if (this.direct && idle && this._queue.length && !this._writing) this._flush();
  }

  // _fits says whether INPUT frame buf may be let out now: within the
  // window, or alone (a frame larger than the window goes on its own).
  _fits(buf) {
    return this._inputOut === 0 || this._inputOut + buf.length <= INPUT_WINDOW;
  }

  // _admits says whether INPUT frame buf may be let out now, counting it
  // into its piece if so: within the window, and within the piece or
  // after the PONG of the PING sent behind the full one.
  _admits(buf) {
    if (!this._fits(buf)) return false;
    if (!this._pace) return true;
    if (this._gate) return false;
    const n = buf.length;
    if (this._piece === 0 || this._piece + n <= PIECE) {
      this._piece += n;
      return true;
    }
    // Closed while _pace runs: asking, it writes a HELLO, and what that
    // write sets off must not let this INPUT (or any behind it) past.
    const gate = { asking: true };
    this._gate = gate;
    const answers = this._pace();
    if (answers === true) {
      this._gate = null;
      this._ping();
      return false;
    }
    if (answers && typeof answers.then === 'function') {
      // The handshake that tells is under way: the INPUT waits for it
      // (and is then paced, or not, by what it said).
      answers.then(() => this._open(gate));
      return false;
    }
    // Not a sidecar that answers PING: unpaced, as before there was any.
    this._gate = null;
    this._piece = n;
    return true;
  }

  // _ping lets out a PING behind the full piece and closes the gate
  // until its PONG.
  _ping() {
    const f = controlFrame(T.PING, { paste: ++this._pings });
    this._gate = { body: f.subarray(5) };
    this._letOut(f, false);
  }

  /**
   * The sidecar said whether it answers PING (its HELLO answer came):
   * INPUT waiting for that goes on, paced or not as it said.
   */
  paceKnown() {
    if (this._gate && this._gate.asking) this._open(this._gate);
  }

  /** Takes a PONG's body: the answer to a paste's PING opens its gate. */
  ponged(body) {
    const gate = this._gate;
    if (!gate || !gate.body || !gate.body.equals(body)) return; // a keepalive's, or one from before
    this._piece = 0;
    this._open(gate);
  }

  // _open lifts gate (if it is still the one) and lets out what waited
  // behind it.
  _open(gate) {
    if (this._gate !== gate) return;
    this._gate = null;
    if (this._broken) return;
    const idle = this._queue.length === 0;
    this._release();
    if (this.direct && idle && this._queue.length && !this._writing) this._flush();
    if (!this.direct && this._ending && this._waitingBytes === 0) this._endStream();
  }

  // _letOut hands buf on: to the queue the pipe is written from, or to
  // node's stream, whose callback says when it is in the pipe.
  _letOut(buf, input) {
    if (input) this._inputOut += buf.length;
    if (!this.direct) {
      this._stream.write(buf, input ? (err) => this._left(buf.length, err) : undefined);
      return;
    }
    const e = { buf, input, size: buf.length, whole: buf };
    this._queued += buf.length;
    if (buf[4] !== T.CREDIT) {
      this._queue.push(e);
      return;
    }
    // Behind a frame begun and the CREDITs before it, ahead of the rest.
    const q = this._queue;
    let i = q.length && q[0].buf.length < q[0].size ? 1 : 0;
    while (i < q.length && q[i].buf[4] === T.CREDIT && q[i].buf.length === q[i].size) i++;
    q.splice(i, 0, e);
  }

  // _left: n bytes of INPUT are in the pipe (or could not be written):
  // what waits behind them may follow.
  _left(n, err) {
    this._inputOut -= n;
    if (err) this._drop();
    this._release();
    if (!this.direct && this._ending && this._waitingBytes === 0) this._endStream();
  }

  // _release lets out the frames that wait, in order, up to the first
  // INPUT that does not fit the window or waits for a PONG.
  _release() {
    const w = this._waiting;
    while (this._waitHead < w.length) {
      const buf = w[this._waitHead];
      const input = buf[4] === T.INPUT;
      if (input && !this._admits(buf)) break;
      w[this._waitHead++] = undefined;
      this._waitingBytes -= buf.length;
      this._letOut(buf, input);
    }
    if (this._waitHead === w.length) {
      this._waiting = [];
      this._waitHead = 0;
    } else if (this._waitHead >= 1024 && this._waitHead * 2 >= w.length) {
      this._waiting = w.slice(this._waitHead);
      this._waitHead = 0;
    }
  }

  /**
   * Drops the INPUT for terminal id that still waits here: its terminal
   * ended (EXIT), so it has no reader, and paced out it would only hold
   * up the other terminals' input behind it (and an id freed by the EXIT
   * may be opened again: that terminal must not get it). INPUT already
   * let out goes on (a frame may be partly written).
   */
  dropInput(id) {
    const w = this._waiting;
    let kept = 0;
    for (let i = this._waitHead; i < w.length; i++) {
      const buf = w[i];
      if (buf[4] === T.INPUT && inputFor(buf, id)) {
        this._waitingBytes -= buf.length;
        continue;
      }
      w[this._waitHead + kept++] = buf;
    }
    if (this._waitHead + kept === w.length) return;
    w.length = this._waitHead + kept;
    if (this._broken) return;
    const idle = this._queue.length === 0;
    this._release();
    if (this.direct && idle && this._queue.length && !this._writing) this._flush();
    if (this._ending && this._waitingBytes === 0 && (!this.direct || this._queue.length === 0)) this._endStream();
  }

  /** Ends the stream once every frame is in the pipe. */
  end() {
    this._ending = true;
    if (this._broken || (this._waitingBytes === 0 && (!this.direct || this._queue.length === 0))) this._endStream();
  }

  /**
   * Drops every frame not yet begun (those that wait here, and in the
   * queue all but a frame partly written, which must be finished for the
   * stream to stay whole); returns how many bytes were not in the pipe
   * (those dropped and the rest of a frame begun): more than 0 says the
   * sidecar was not keeping up. close() does this: the sidecar is ending,
   * and a paste the child does not read would keep its end from ever
   * being written.
   */
  abandon() {
    let n = this._waitingBytes;
    this._waiting = [];
    this._waitHead = 0;
    this._waitingBytes = 0;
    this._gate = null;
    if (this.direct && this._queue.length) {
      const first = this._queue[0];
      const begun = first.buf.length < first.size;
      const keep = begun ? [first] : [];
      for (const e of this._queue) n += e.buf.length;
      this._queue = keep;
      this._queued = begun ? first.buf.length : 0;
      this._inputOut = begun && first.input ? first.size : 0;
    }
    return n;
  }

  _endStream() {
    if (this._ended) return;
    this._ended = true;
    this._stream.end();
  }

  /**
   * Writes what the pipe takes now, without blocking; true once nothing
   * waits. A pipe whose reader is gone (EPIPE) drops what waits: the
   * sidecar's end is reported by its exit.
   */
  flushNow() {
    return this._write(Infinity) !== 'full';
  }

  // _write writes what the pipe takes, until inputBudget bytes of INPUT
  // are in: 'done' once nothing waits (or nothing can be written),
  // 'full' when the pipe is, 'more' when the budget is spent.
  _write(inputBudget) {
    this._writing = true;
    try {
      return this._writeQueue(inputBudget);
    } finally {
      this._writing = false;
    }
  }

  _writeQueue(inputBudget) {
    let input = 0;
    while (this._queue.length) {
      if (input >= inputBudget) return 'more';
      // Node closes the descriptor when the sidecar exits (the stream is
      // destroyed before its 'exit'), and the number may then name a file
      // this process opened since: never write to it past that point.
      const h = this._stream._handle;
      if (this._stream.destroyed || !h || h.fd !== this._fd) {
        this._drop();
        return 'done';
      }
      const e = this._queue[0];
      const b = e.buf;
      let n;
      try {
        n = fs.writeSync(this._fd, b, 0, b.length);
      } catch (err) {
        if (err.code === 'EAGAIN' || err.code === 'EWOULDBLOCK') return 'full';
        this._drop();
        return 'done';
      }
      this._queued -= n;
      this._written += n;
      if (n < b.length) {
        e.buf = b.subarray(n);
        continue;
      }
      this._queue.shift();
      // Only once the whole frame is in: a frame begun is finished first.
      if (e.input) {
        input += e.size;
        this._left(e.size);
      }
    }
    return 'done';
  }

  _drop() {
    // What was not wholly written is known not to have been read as a
    // frame (a peer reads frames whole): kept for unsent(), unless that
    // was asked already (a connection over which nothing resumes).
    if (!this._taken) this._lost = this._unwritten();
    this._broken = true;
    this._gate = null;
    this._queue = [];
    this._queued = 0;
    this._waiting = [];
    this._waitHead = 0;
    this._waitingBytes = 0;
  }

  // _unwritten lists, whole and in the order they would have gone, the
  // frames not wholly in the pipe: the queue's (a frame begun too: the
  // peer, which reads frames whole, never took it) and those waiting.
  // Only where this writer writes the pipe: frames handed to node's
  // stream are the stream's.
  _unwritten() {
    const out = [];
    for (const e of this._queue) out.push(e.whole);
    for (let i = this._waitHead; i < this._waiting.length; i++) out.push(this._waiting[i]);
    return out;
  }

  /**
   * The connection dropped: takes the frames not wholly written (whole,
   * in order) and writes nothing more. A reconnect sends the input and
   * requests among them on the next connection (resume.js): a paste paced
   * behind its PONGs, and what followed it, had not left this process.
   */
  unsent() {
    if (!this._broken) this._drop();
    const out = this._lost || [];
    this._lost = null;
    this._taken = true;
    return out;
  }

  // _flush pushes the queue on from the event loop, trying again after a
  // pause while the pipe is full; the pending timer keeps the event loop
  // alive, as a write node's stream has not finished does. The pause
  // grows only while the sidecar takes nothing: a paste it reads as fast
  // as it comes goes on a pipeful a millisecond. A window of INPUT
  // written, it goes on at the event loop's next turn, after the output
  // that came meanwhile has been read and its credit granted.
  _flush() {
    clearTimeout(this._timer);
    this._timer = null;
    clearImmediate(this._soon);
    this._soon = null;
    const before = this._written;
    const state = this._write(INPUT_WINDOW);
    if (state === 'more') {
      this._retry = 0;
      this._soon = setImmediate(() => this._flush());
      return;
    }
    if (state === 'done') {
      this._retry = 0;
      // (Frames may still wait behind a gate.)
      if (this._ending && this._waitingBytes === 0) this._endStream();
      return;
    }
    const moved = this._written > before;
    this._retry = moved || !this._retry ? 1 : Math.min(this._retry * 2, MAX_RETRY_MS);
    this._timer = setTimeout(() => this._flush(), this._retry);
  }
}

module.exports = { FrameWriter, PIECE, INPUT_WINDOW };
