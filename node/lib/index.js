'use strict';
// ptyplex: node-pty's API over ptyplex-sidecar.

const { Sidecar } = require('./sidecar');
const { Terminal } = require('./terminal');
const { resolveSidecar } = require('./resolve');

// The build the package was packed from (make npm writes lib/build.json):
// the version and commit its ptyplex-sidecar's --version reports too. A
// source tree has none.
let build;
try {
  build = Object.freeze(require('./build.json'));
} catch {
  build = Object.freeze({ version: 'dev', commit: 'unknown' });
}

let shared = null;

/** The Sidecar behind the module-level spawn(), created on first use. */
function defaultSidecar() {
  if (!shared) shared = new Sidecar();
  return shared;
}

/** node-pty's spawn(file, args, options). */
function spawn(file, args, options) {
  return defaultSidecar().spawn(file, args, options);
}

// node-pty's deprecated names for spawn, which older programs still call.
const fork = spawn;
const createTerminal = spawn;

// node-pty's open() makes a PTY pair with no process and hands back its
// descriptors, which here would live in the sidecar. It is exported, so
// that an ES module's `import { open }` written for node-pty links, and it
// throws when called.
function open() {
  throw new Error('ptyplex does not support open() (a PTY pair with no process: its descriptors would live in the sidecar); use spawn()');
}

// node-pty's native binding (null there on Windows). There is none here;
// exported only so that `import { native }` links.
const native = null;

module.exports = { spawn, fork, createTerminal, open, native, Sidecar, Terminal, defaultSidecar, resolveSidecar, build };
