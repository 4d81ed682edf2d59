'use strict';
// node-pty's IEvent/IDisposable shapes: an event is a function that takes a
// listener and returns { dispose() }.

// callListener calls a user's listener so that what it throws cannot unwind
// into our code. Events are fired from the frame parser's callbacks, which
// treat any exception as a corrupt stream and kill the sidecar with every
// terminal on it; node-pty instead lets a listener's exception become an
// ordinary uncaught exception and its other terminals go on. So it is
// rethrown on the next tick: process.on('uncaughtException') sees it (or
// the process dies with it, as under node-pty), and the parser, the other
// listeners and every terminal carry on.
function callListener(listener, ...args) {
  try {
    listener.call(undefined, ...args);
  } catch (err) {
    process.nextTick(() => {
      throw err;
    });
  }
}

class Emitter {
  constructor() {
    this.listeners = [];
    this.event = (listener) => {
      if (typeof listener !== 'function') throw new TypeError('listener must be a function');
      const entry = { listener };
      this.listeners.push(entry);
      return {
        dispose: () => {
          const i = this.listeners.indexOf(entry);
          if (i >= 0) this.listeners.splice(i, 1);
        },
      };
    };
  }

  fire(value) {
    // A copy: listeners may dispose themselves while we iterate.
    for (const e of this.listeners.slice()) callListener(e.listener, value);
  }

  get size() {
    return this.listeners.length;
  }

  clear() {
    this.listeners = [];
  }
}

module.exports = { Emitter, callListener };
