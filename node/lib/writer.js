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

const fs = require('fs');

// The longest pause between two tries at a full pipe (ms): the sidecar
// reads its stdin all the time, and a pipe stays full only while it holds
// input back (a terminal whose child does not read, PROTOCOL.md's INPUT
// bounds), which is no time to poll fast.
const MAX_RETRY_MS = 16;

class FrameWriter {
  constructor(stream) {
    this._stream = stream;
    const h = stream._handle;
    // On Windows the pipe is a handle with no descriptor (fd is -1).
    this._fd = process.platform !== 'win32' && h && Number.isInteger(h.fd) && h.fd >= 0 ? h.fd : -1;
    this._queue = [];
    this._queued = 0;
    this._timer = null;
    this._retry = 0;
    this._ending = false; // end() was called: the stream ends once the queue is written
    this._ended = false;
    this._broken = false;
  }

  /** Whether this writer, not the stream, sends the frames (and flushNow can push them). */
  get direct() {
    return this._fd >= 0;
  }

  /** Bytes not yet in the pipe. */
  get pending() {
    return this.direct ? this._queued : this._stream.writableLength;
  }

  write(buf) {
    if (!this.direct) {
      this._stream.write(buf);
      return;
    }
    if (this._broken || this._ending) return;
    this._queue.push(buf);
    this._queued += buf.length;
    if (this._queue.length === 1) this._flush();
  }

  /** Ends the stream once every frame is in the pipe. */
  end() {
    if (!this.direct) {
      this._stream.end();
      return;
    }
    this._ending = true;
    if (this._queue.length === 0 || this._broken) this._endStream();
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
    while (this._queue.length) {
      // Node closes the descriptor when the sidecar exits (the stream is
      // destroyed before its 'exit'), and the number may then name a file
      // this process opened since: never write to it past that point.
      const h = this._stream._handle;
      if (this._stream.destroyed || !h || h.fd !== this._fd) {
        this._drop();
        return true;
      }
      const b = this._queue[0];
      let n;
      try {
        n = fs.writeSync(this._fd, b, 0, b.length);
      } catch (err) {
        if (err.code === 'EAGAIN' || err.code === 'EWOULDBLOCK') return false;
        this._drop();
        return true;
      }
      this._queued -= n;
      if (n < b.length) this._queue[0] = b.subarray(n);
      else this._queue.shift();
    }
    return true;
  }

  _drop() {
    this._broken = true;
    this._queue = [];
    this._queued = 0;
  }

  // _flush pushes the queue on from the event loop, trying again after a
  // pause while the pipe is full; the pending timer keeps the event loop
  // alive, as a write node's stream has not finished does. The pause
  // grows only while the sidecar takes nothing: a paste it reads as fast
  // as it comes goes on a pipeful a millisecond.
  _flush() {
    clearTimeout(this._timer);
    this._timer = null;
    const before = this._queued;
    if (this.flushNow()) {
      this._retry = 0;
      if (this._ending) this._endStream();
      return;
    }
    const moved = this._queued < before;
    this._retry = moved || !this._retry ? 1 : Math.min(this._retry * 2, MAX_RETRY_MS);
    this._timer = setTimeout(() => this._flush(), this._retry);
  }
}

module.exports = { FrameWriter };
