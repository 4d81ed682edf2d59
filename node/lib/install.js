'use strict';
// install: putting the sidecar on the other machine on first connect.
//
// The package does not re-implement `ptyplex remote install` (the uname
// probe, the copy, the SHA-256 and --version checks, the manifest that
// keeps it from replacing files it did not write): it runs the `ptyplex`
// binary, found beside the ptyplex-sidecar it resolves (a source tree's
// bin/, a release's directory) or on PATH, or named by install.ptyplex.
// The npm platform packages ship only ptyplex-sidecar, so an npm install
// alone has no ptyplex to run: install then fails saying so.
//
// With install, transport is the command that reaches the machine and
// runs its last argument as a shell command line there (`ssh -T host`,
// `sh -c`), as `ptyplex remote install -- TRANSPORT` takes it, without
// the sidecar. The first connection runs, as its transport, a local sh
// that installs (the install's stdout captured, its stderr going to the
// logger as the transport's), names the installed sidecar on stderr and
// execs the transport with it, so the connection's pid is the transport's
// as usual; later connections (reconnects too) use the path it named.

const fs = require('fs');
const path = require('path');
const { resolveSidecar } = require('./resolve');

const MARK = 'ptyplex-installed: ';

// The wrapper: $1 ptyplex, $2 --from or '', $3 --dir or '', $4 what
// follows the sidecar's path in the command line, then the transport.
const SCRIPT = [
  'bin=$1 from=$2 dir=$3 rest=$4; shift 4',
  'p=$("$bin" remote install -q ${from:+--from "$from"} ${dir:+--dir "$dir"} -- "$@") || exit 1',
  'p=$(printf "%s\\n" "$p" | tail -n 1)',
  `printf '${MARK}%s\\n' "$p" >&2`,
  'exec "$@" "$p$rest"',
].join('\n');

function installOptions(o, transport) {
  if (o === undefined || o === null || o === false) return null;
  if (!transport) throw new TypeError('ptyplex: install needs the transport option: the command that reaches the other machine (ssh -T host)');
  const out = { ptyplex: null, from: null, dir: null };
  if (o === true) return out;
  if (typeof o !== 'object' || Array.isArray(o)) throw new TypeError('ptyplex: install must be true or an object { ptyplex, from, dir }');
  for (const [k, v] of Object.entries(o)) {
    if (!(k in out)) throw new TypeError(`ptyplex: install.${k} is not an option (ptyplex, from, dir are)`);
    if (v !== undefined && v !== null && (typeof v !== 'string' || !v)) throw new TypeError(`ptyplex: install.${k} must be a non-empty string`);
    if (v) out[k] = v;
  }
  return out;
}

function executable(p) {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

// findPtyplex: install.ptyplex, beside the sidecar, then PATH.
function findPtyplex(opts, sidecarPath, env) {
  if (opts.ptyplex) return opts.ptyplex;
  const tried = [];
  let side = sidecarPath;
  if (!side) {
    try {
      side = resolveSidecar();
    } catch {
      side = null;
    }
  }
  if (side) {
    const p = path.join(path.dirname(side), 'ptyplex');
    if (executable(p)) return p;
    tried.push(p);
  }
  for (const dir of ((env && env.PATH) || process.env.PATH || '').split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, 'ptyplex');
    if (executable(p)) return p;
  }
  tried.push('PATH');
  throw new Error(
    `ptyplex: install needs the ptyplex binary, which runs \`ptyplex remote install\`; not found (looked at ${tried.join(', ')}). ` +
      'The npm platform packages ship only ptyplex-sidecar: pass install.ptyplex, or install ptyplex from a release',
  );
}

// installArgv: the first connection's command, the wrapper around the transport.
function installArgv(opts, ptyplexBin, transport, rest) {
  return ['sh', '-c', SCRIPT, 'ptyplex-install', ptyplexBin, opts.from || '', opts.dir || '', rest, ...transport];
}

module.exports = { installOptions, findPtyplex, installArgv, MARK };
