'use strict';
// Finding the ptyplex-sidecar binary: PTYPLEX_SIDECAR_PATH, then the
// installed platform package, then PATH.

const fs = require('fs');
const path = require('path');

const ENV_VAR = 'PTYPLEX_SIDECAR_PATH';
const BINARY = process.platform === 'win32' ? 'ptyplex-sidecar.exe' : 'ptyplex-sidecar';

function platformPackage(platform = process.platform, arch = process.arch) {
  return `@ptyplex/sidecar-${platform}-${arch}`;
}

function isExecutable(p) {
  try {
    const st = fs.statSync(p);
    if (!st.isFile()) return false;
    // Windows has no execute bit (X_OK means F_OK there): the name says it.
    if (process.platform !== 'win32') fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

// asarUnpacked maps a path inside an Electron app's asar archive
// (resources/app.asar/node_modules/...) to the same path in the directory
// beside it where electron-builder and electron-forge put the files named
// by asarUnpack (resources/app.asar.unpacked/...). Electron's fs reads
// into the archive, so the packed path looks like an executable file, but
// no program can be started from inside it: the unpacked copy is the one
// to run, as node-pty runs its spawn-helper from there.
function asarUnpacked(p) {
  return p.replace(/\.asar(?=[\\/])/, '.asar.unpacked');
}

// splitPath splits a PATH value into its directories. On Windows an
// entry may be in double quotes, and must be when the directory's name
// has a ';' in it: the quotes group, and are not part of the name (as
// cmd.exe and Go's filepath.SplitList read it).
function splitPath(value) {
  if (process.platform !== 'win32') return value.split(path.delimiter);
  const dirs = [];
  let dir = '';
  let quoted = false;
  for (const ch of value) {
    if (ch === '"') quoted = !quoted;
    else if (ch === ';' && !quoted) {
      dirs.push(dir);
      dir = '';
    } else dir += ch;
  }
  dirs.push(dir);
  return dirs;
}

// resolveSidecar returns the path of the binary to run or throws an Error
// that names the three places it looked.
function resolveSidecar(env = process.env) {
  const tried = [];
  const fromEnv = env[ENV_VAR];
  if (fromEnv) {
    if (isExecutable(fromEnv)) return fromEnv;
    tried.push(`${ENV_VAR}=${fromEnv} is not an executable file`);
  } else {
    tried.push(`${ENV_VAR} is not set`);
  }
  const pkg = platformPackage();
  try {
    const p = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), 'bin', BINARY);
    const unpacked = asarUnpacked(p);
    if (unpacked !== p && isExecutable(unpacked)) return unpacked;
    if (isExecutable(p)) return p;
    tried.push(`${pkg} is installed but ${p} is not an executable file`);
  } catch {
    tried.push(`${pkg} is not installed (npm installs it as an optional dependency on ${process.platform}-${process.arch})`);
  }
  for (const dir of splitPath(env.PATH || '')) {
    if (!dir) continue;
    const p = path.join(dir, BINARY);
    if (isExecutable(p)) return p;
  }
  tried.push(`no ${BINARY} on PATH`);
  const err = new Error(`cannot find ${BINARY}: ${tried.join('; ')}`);
  err.code = 'PTYPLEX_SIDECAR_NOT_FOUND';
  throw err;
}

module.exports = { resolveSidecar, platformPackage, ENV_VAR, BINARY };
