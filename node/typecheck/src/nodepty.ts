// A program typed the way programs against node-pty are: `import * as pty`,
// node-pty's interface names, listeners typed by the events. Only the
// module name differs from node-pty.
import * as pty from 'ptyplex';
import type { IDisposable, IEvent, IExitEvent, IPty, IPtyForkOptions } from 'ptyplex';

const options: IPtyForkOptions = {
  name: 'xterm-256color',
  cols: 100,
  rows: 30,
  cwd: process.cwd(),
  env: { ...process.env, PTYPLEX_TYPECHECK: 'nodepty' },
};
const term: IPty = pty.spawn('/bin/sh', ['-c', 'echo "$PTYPLEX_TYPECHECK $COLUMNS"; exit 3'], options);
// The class is exported for instanceof, which narrows to it.
if (!(term instanceof pty.Terminal) || typeof term.terminalId !== 'string') throw new Error('spawn did not return a Terminal');
// node-pty 1.2's third argument, the size in pixels.
term.resize(100, 30, { width: 1000, height: 600 });
// node-pty 1.2's setParentWindow, optional in its IPty: a host calls it
// when there is one (an Electron window's handle). Only a Windows ConPTY
// of node-pty's own build takes it; everywhere else it answers false.
const handle = Buffer.alloc(8);
if (term.setParentWindow?.(handle) !== false) throw new Error('setParentWindow did not answer false');
if (term.setParentWindow && term.setParentWindow(handle)) throw new Error('setParentWindow took the window');
const onData: IEvent<string> = term.onData;
let out = '';
const sub: IDisposable = onData((data: string) => {
  out += data;
});
term.onExit(({ exitCode, signal }: IExitEvent) => {
  sub.dispose();
  if (exitCode !== 3 || (signal ?? 0) !== 0 || !out.includes('nodepty')) {
    console.error(`unexpected: exitCode ${exitCode}, signal ${signal}, output ${JSON.stringify(out)}`);
    process.exit(1);
  }
  console.log(`nodepty ok: pid ${term.pid > 0}, ${term.cols}x${term.rows}`);
  process.exit(0);
});
