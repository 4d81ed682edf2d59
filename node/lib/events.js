'use strict';
// node-pty's IEvent/IDisposable shapes: an event is a function that takes a
// listener and returns { dispose() }.

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
    for (const e of this.listeners.slice()) e.listener.call(undefined, value);
  }

  get size() {
    return this.listeners.length;
  }

  clear() {
    this.listeners = [];
  }
}

module.exports = { Emitter };
