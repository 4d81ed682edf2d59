'use strict';
const os = require('os');

// signalNumber maps 'SIGINT', 'INT' or a number to the local signal
// number, or returns undefined for names this platform does not have.
function signalNumber(sig) {
  if (typeof sig === 'number') return Number.isInteger(sig) && sig > 0 && sig <= 64 ? sig : undefined;
  if (typeof sig !== 'string') return undefined;
  let name = sig.trim().toUpperCase();
  if (!name.startsWith('SIG')) name = 'SIG' + name;
  return os.constants.signals[name];
}

function signalName(num) {
  for (const [name, n] of Object.entries(os.constants.signals)) if (n === num) return name;
  return undefined;
}

module.exports = { signalNumber, signalName };
