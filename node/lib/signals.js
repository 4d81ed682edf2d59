'use strict';
const os = require('os');

// signalNumber maps 'SIGINT', 'INT' or a number to the local signal
// number, or returns undefined for names this platform does not have.
function signalNumber(sig) {
  if (typeof sig === 'number') return Number.isInteger(sig) && sig > 0 && sig <= 64 ? sig : undefined;
  if (typeof sig !== 'string') return undefined;
  let name = sig.trim().toUpperCase();
  if (!name.startsWith('SIG')) name = 'SIG' + name;
  return os.constants.signals[name] ?? realTimeNumber(name);
}

function signalName(num) {
  for (const [name, n] of Object.entries(os.constants.signals)) if (n === num) return name;
  return realTimeName(num);
}

// Linux's real-time signals, 34..64 as the C library leaves them to
// programs (it keeps 32 and 33), are not in os.constants.signals; the
// sidecar names them as kill -l does (SIGRTMIN, SIGRTMIN+3, SIGRTMAX-2,
// SIGRTMAX), in EXIT among other places.
const RTMIN = 34;
const RTMAX = 64;

function realTimeNumber(name) {
  if (process.platform !== 'linux') return undefined;
  const m = /^SIGRT(MIN|MAX)(?:([+-])(\d{1,2}))?$/.exec(name);
  if (!m) return undefined;
  const n = m[3] === undefined ? 0 : Number(m[3]);
  let num;
  if (m[1] === 'MIN') num = m[2] === '-' ? undefined : RTMIN + n;
  else num = m[2] === '+' ? undefined : RTMAX - n;
  return num !== undefined && num >= RTMIN && num <= RTMAX ? num : undefined;
}

function realTimeName(num) {
  if (process.platform !== 'linux' || !Number.isInteger(num) || num < RTMIN || num > RTMAX) return undefined;
  if (num === RTMIN) return 'SIGRTMIN';
  if (num === RTMAX) return 'SIGRTMAX';
  return num <= 49 ? `SIGRTMIN+${num - RTMIN}` : `SIGRTMAX-${RTMAX - num}`;
}

module.exports = { signalNumber, signalName };
