// CommonJS with `import = require`, and node-pty's deprecated names.
import pty = require('ptyplex');

const term = pty.fork('/bin/sh', ['-c', 'kill -TERM $$'], {});
term.on('exit', (exitCode: number, signal?: number) => {
  if (signal !== 15) {
    console.error(`unexpected: exitCode ${exitCode}, signal ${signal}`);
    process.exit(1);
  }
  console.log('cjs ok');
  process.exit(0);
});
if (pty.createTerminal !== pty.spawn) {
  throw new Error('createTerminal is not spawn');
}
