// The ES module forms: a default import and named imports, and the host
// API (Sidecar) with its own types.
import pty, { Sidecar, spawn } from 'ptyplex';
import type { SidecarDeath, Terminal } from 'ptyplex';

if (pty.spawn !== spawn) {
  throw new Error('the default import and the named import differ');
}
const lines: string[] = [];
const sidecar = new Sidecar({ logger: (line: string) => lines.push(line), openTimeout: 10_000 });
sidecar.onDeath((d: SidecarDeath) => lines.push(`death ${d.code} ${d.signal}`));
const term: Terminal = await sidecar.open('/bin/sh', ['-c', 'read x; echo "got $x"'], { encoding: 'utf8' });
await term.ready;
let out = '';
term.onData((s) => {
  out += s;
});
term.write('esm\r');
const code = await new Promise<number>((resolve) => term.onExit((e) => resolve(e.exitCode)));
await sidecar.close();
if (code !== 0 || !out.includes('got esm')) {
  console.error(`unexpected: exitCode ${code}, output ${JSON.stringify(out)}; log ${lines.join(' | ')}`);
  process.exit(1);
}
console.log('esm ok');
