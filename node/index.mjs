// ES module entry: the same objects as require('ptyplex').
import cjs from './lib/index.js';

export const { spawn, fork, createTerminal, open, native, Sidecar, Terminal, defaultSidecar, resolveSidecar, build } = cjs;
export default cjs;
