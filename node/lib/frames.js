'use strict';
// The frame codec of the ptyplex sidecar protocol (PROTOCOL.md, section 1):
// [u32 LE length][u8 type][body], length counting the type byte and body.

const T = Object.freeze({
  OPEN: 0x01,
  INPUT: 0x02,
  RESIZE: 0x03,
  CLOSE: 0x04,
  CREDIT: 0x05,
  SIGNAL: 0x06,
  FOREGROUND: 0x07,
  OPENED: 0x81,
  OUTPUT: 0x82,
  EXIT: 0x83,
  ERROR: 0x84,
  FOREGROUND_INFO: 0x85,
  HELLO: 0x10,
  HELLO_REPLY: 0x90,
  // The keepalive (PROTOCOL.md, "PING and PONG").
  PING: 0x11,
  PONG: 0x91,
  // The persistent server's (PROTOCOL.md, "Persistent terminals").
  LIST: 0x20,
  ATTACH: 0x21,
  DETACH: 0x22,
  REVIVE: 0x2c,
  LISTED: 0xa0,
  ATTACHED: 0xa1,
  SNAPSHOT: 0xa2,
  DETACHED: 0xa3,
});

// The frame protocol's major version, sent and checked in HELLO.
const PROTOCOL_VERSION = 1;

const MAX_FRAME = 16 << 20;

function controlFrame(type, obj) {
  const body = Buffer.from(JSON.stringify(obj), 'utf8');
  const f = Buffer.allocUnsafe(5 + body.length);
  f.writeUInt32LE(1 + body.length, 0);
  f[4] = type;
  body.copy(f, 5);
  return f;
}

// dataFrame builds an INPUT frame; idBuf is the id's UTF-8 encoding.
function dataFrame(type, idBuf, data) {
  const f = Buffer.allocUnsafe(7 + idBuf.length + data.length);
  f.writeUInt32LE(3 + idBuf.length + data.length, 0);
  f[4] = type;
  f.writeUInt16LE(idBuf.length, 5);
  idBuf.copy(f, 7);
  data.copy(f, 7 + idBuf.length);
  return f;
}

// FrameParser turns stdout chunks into frames without copying OUTPUT
// payloads: an OUTPUT frame that straddles chunks is handed on piecewise,
// onOutput(id, bytes) per piece, as OUTPUT is a byte stream that may be cut
// anywhere. Other frames go to onFrame(type, body) whole.
//
// The other end may be a remote peer sending anything, so the work per
// chunk must not depend on how much of an incomplete frame came before:
// the pieces of an incomplete frame are kept in a list with their total
// length and joined once, when the frame (or the part of its header that
// decides how to go on) is complete.
//
// onOutputStart(id, n), if given, is called when an OUTPUT frame that
// straddles chunks begins to stream, with the length of its whole payload,
// before any of it is handed on: a host refuses there (by throwing) a
// frame larger than the credit it granted, however slowly the rest comes.
class FrameParser {
  constructor(onFrame, onOutput, onOutputStart) {
    this.onFrame = onFrame;
    this.onOutput = onOutput || null;
    this.onOutputStart = onOutputStart || null;
    this.pieces = []; // the incomplete frame (or header) so far
    this.plen = 0; // their total length
    this.head = Buffer.alloc(7); // a copy of its first bytes (length, type, id length)
    this.outId = null; // the OUTPUT frame being streamed
    this.outLeft = 0; // its payload bytes still to come
    this.rest = null; // while a callback runs: what of the chunk is still to parse
  }

  /**
   * A parser that goes on from where this one is, for a look ahead at
   * bytes this one will be given later: frames go to onFrame, OUTPUT
   * payloads are skipped.
   */
  fork(onFrame) {
    const p = new FrameParser(onFrame, () => {});
    p.pieces = this.pieces.slice(); // pieces are never written to: sharing them is safe
    p.plen = this.plen;
    this.head.copy(p.head);
    p.outId = this.outId;
    p.outLeft = this.outLeft;
    // Called from a listener of ours: the rest of the chunk being parsed
    // comes first.
    if (this.rest && this.rest.length) p.push(this.rest);
    return p;
  }

  push(chunk) {
    let off = 0;
    while (off < chunk.length) {
      if (this.outLeft > 0) {
        const n = Math.min(this.outLeft, chunk.length - off);
        this.outLeft -= n;
        this.rest = chunk.subarray(off + n);
        this.onOutput(this.outId, chunk.subarray(off, off + n));
        off += n;
      } else if (this.plen > 0) {
        const need = this._need();
        const take = Math.min(need - this.plen, chunk.length - off);
        this._keep(chunk.subarray(off, off + take));
        off += take;
        if (this.plen < need) break; // the whole chunk went into the pieces
        const whole = this.pieces.length === 1 ? this.pieces[0] : Buffer.concat(this.pieces, this.plen);
        this.pieces = [];
        this.plen = 0;
        this._parse(whole, 0, chunk.subarray(off));
      } else {
        // Parses to the end of the chunk: whole frames, then the start
        // of one kept or streamed.
        this._parse(chunk, off, null);
        break;
      }
    }
    this.rest = null;
  }

  // _keep adds a piece of the incomplete frame, noting its first bytes.
  _keep(piece) {
    if (this.plen < this.head.length) piece.copy(this.head, this.plen, 0, Math.min(piece.length, this.head.length - this.plen));
    this.pieces.push(piece);
    this.plen += piece.length;
  }

  // _need says how many bytes the pieces must reach before parsing can go
  // on: the header, then for a streamed OUTPUT its id, else the frame.
  _need() {
    if (this.plen < 5) return 5;
    const len = this.head.readUInt32LE(0);
    checkLength(len, this.head.subarray(0, Math.min(this.plen, this.head.length)));
    if (this.head[4] === T.OUTPUT && this.onOutput && len >= 3) {
      if (this.plen < 7) return 7;
      const idLen = this.head.readUInt16LE(5);
      if (idLen === 0 || 3 + idLen > len) throw new Error('corrupt OUTPUT frame: bad id length');
      return 7 + idLen;
    }
    return 4 + len;
  }

  // _parse parses buf from off. tail is what follows buf in the chunk
  // being pushed (null when buf is that chunk): a fork made by a listener
  // must see it.
  _parse(buf, off, tail) {
    const restAt = (o) => (o < buf.length || !tail ? buf.subarray(o) : tail);
    while (buf.length - off >= 5) {
      const len = buf.readUInt32LE(off);
      checkLength(len, buf.subarray(off));
      const type = buf[off + 4];
      const have = buf.length - off - 4;
      if (have >= len) {
        const body = buf.subarray(off + 5, off + 4 + len);
        off += 4 + len;
        this.rest = restAt(off);
        if (type === T.OUTPUT && this.onOutput) {
          const [id, data] = splitData(body);
          this.onOutput(id, data);
        } else {
          this.onFrame(type, body);
        }
        continue;
      }
      // Incomplete. An OUTPUT whose id is here streams what it has.
      if (type === T.OUTPUT && this.onOutput && have >= 3) {
        const idLen = buf.readUInt16LE(off + 5);
        if (idLen === 0 || 3 + idLen > len) throw new Error('corrupt OUTPUT frame: bad id length');
        if (have >= 3 + idLen) {
          this.outId = buf.toString('utf8', off + 7, off + 7 + idLen);
          if (this.onOutputStart) this.onOutputStart(this.outId, len - 3 - idLen);
          const data = buf.subarray(off + 7 + idLen);
          this.outLeft = len - 3 - idLen - data.length;
          off = buf.length;
          this.rest = tail;
          if (data.length) this.onOutput(this.outId, data);
        }
      }
      break;
    }
    if (off < buf.length) {
      // Copied, so that a small remainder does not pin a large chunk;
      // each byte is copied at most once here and once when joined.
      this._keep(Buffer.from(buf.subarray(off)));
    }
  }
}

// checkLength refuses a frame length no peer may send; start is what the
// stream holds from that header on, which the error quotes when it is
// text: a line that reached stdout ahead of the sidecar's frames (a shell
// startup file run by ssh that echoes, a banner) always has a length
// above the limit, and quoting it says at once what went wrong.
function checkLength(len, start) {
  if (len >= 1 && len <= MAX_FRAME) return;
  let why = `corrupt frame stream: frame length ${len}`;
  const head = start.subarray(0, 4);
  if (head.length === 4 && head.every((b) => b === 9 || b === 10 || b === 13 || (b >= 0x20 && b !== 0x7f))) {
    const text = start.subarray(0, 60).toString('utf8');
    why += `, which reads as text (${JSON.stringify(text)}${start.length > 60 ? '...' : ''}: something writes to stdout where only the sidecar's frames belong, such as a shell startup file (.bashrc) or a banner on the other side of the transport, or the program is not ptyplex-sidecar)`;
  }
  throw new Error(why);
}

// splitData splits an OUTPUT body into its terminal id and payload.
function splitData(body) {
  if (body.length < 2) throw new Error('corrupt OUTPUT frame: no id length');
  const n = body.readUInt16LE(0);
  if (n === 0 || 2 + n > body.length) throw new Error('corrupt OUTPUT frame: bad id length');
  return [body.toString('utf8', 2, 2 + n), body.subarray(2 + n)];
}

module.exports = { T, MAX_FRAME, PROTOCOL_VERSION, controlFrame, dataFrame, FrameParser, splitData };
