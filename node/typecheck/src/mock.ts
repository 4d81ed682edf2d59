// Classes that implement IPty as they would implement node-pty's: a mock
// for tests and a wrapper that forwards to a real terminal, with exactly
// node-pty's members. IPty must ask for no more (TS2420 otherwise), and a
// terminal from spawn must still be an IPty. Compiled, not run.
import * as pty from 'ptyplex';
import type { IDisposable, IEvent, IPty } from 'ptyplex';

export class MockPty implements IPty {
  readonly pid = 1;
  readonly cols = 80;
  readonly rows = 24;
  readonly process = 'mock';
  handleFlowControl = false;
  readonly onData: IEvent<string> = () => ({ dispose() {} });
  readonly onExit: IEvent<{ exitCode: number, signal?: number }> = () => ({ dispose() {} });
  resize() {}
  clear() {}
  write() {}
  kill() {}
  pause() {}
  resume() {}
}

// node-pty's signatures spelled out, forwarding to a spawned terminal.
export class LoggingPty implements IPty {
  constructor(private readonly inner: IPty, private readonly log: (line: string) => void) {}
  get pid(): number { return this.inner.pid; }
  get cols(): number { return this.inner.cols; }
  get rows(): number { return this.inner.rows; }
  get process(): string { return this.inner.process; }
  get handleFlowControl(): boolean { return this.inner.handleFlowControl; }
  set handleFlowControl(v: boolean) { this.inner.handleFlowControl = v; }
  get onData(): IEvent<string> { return this.inner.onData; }
  get onExit(): IEvent<{ exitCode: number, signal?: number }> { return this.inner.onExit; }
  resize(columns: number, rows: number, pixelSize?: { width: number, height: number }): void { this.log(`resize ${columns}x${rows}`); this.inner.resize(columns, rows, pixelSize); }
  clear(): void { this.inner.clear(); }
  write(data: string | Buffer): void { this.inner.write(data); }
  kill(signal?: string): void { this.inner.kill(signal); }
  pause(): void { this.inner.pause(); }
  resume(): void { this.inner.resume(); }
}

export function both(): IDisposable[] {
  const ptys: IPty[] = [new MockPty(), new LoggingPty(pty.spawn('sh', [], {}), console.log), pty.spawn('sh', [], {})];
  return ptys.map((p) => p.onData((d: string) => d.length));
}
