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

module.exports = { spawn, fork, createTerminal, Sidecar, Terminal, defaultSidecar, resolveSidecar, build };
