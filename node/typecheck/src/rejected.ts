// What the types must refuse: each marked line below is an error, and the
// compile fails if one is not. Compiled, never run.
import * as pty from 'ptyplex';
// @ts-expect-error the package has no default export without esModuleInterop (require('ptyplex').default is undefined)
import ptyDefault from 'ptyplex';

export function rejected(): void {
  void ptyDefault;
  // @ts-expect-error cols is a number
  pty.spawn('sh', [], { cols: '80' });
  // @ts-expect-error env values are strings
  pty.spawn('sh', [], { env: { A: 1 } });
  const t = pty.spawn('sh', [], {});
  // @ts-expect-error onData's listener gets a string
  t.onData((d: number) => d);
  // @ts-expect-error exitCode is a number
  t.onExit((e) => e.exitCode.toUpperCase());
  // @ts-expect-error pid is read-only
  t.pid = 1;
  // @ts-expect-error resize takes two numbers
  t.resize(80);
  // @ts-expect-error pixelSize is { width, height } in numbers
  t.resize(80, 24, { width: '1000', height: 600 });
  // @ts-expect-error kill takes a signal name or number
  t.kill(true);
  // @ts-expect-error no such method
  t.flush();
  // @ts-expect-error terminals come from spawn, not new
  new pty.Terminal();
}
