// A host of persistent terminals, typed: list, attach from a saved offset,
// onDetach. Compiled, never run (it would leave a server behind).
import { Sidecar } from 'ptyplex';
import type { AttachOptions, IDetachEvent, PersistentTerminal, ReviveOptions, SidecarGaveUp, SidecarReconnected, Terminal } from 'ptyplex';

export async function persistentHost(saved: Map<string, number>): Promise<number> {
  const sc = new Sidecar({ persist: 'editor', env: { XDG_RUNTIME_DIR: '/run/user/1000' } });
  const entries: PersistentTerminal[] = await sc.list();
  let bytes = 0;
  for (const e of entries.filter((x) => !x.exited)) {
    const options: AttachOptions = { offset: saved.get(e.terminalId) ?? 0, encoding: 'utf8' };
    const term: Terminal = sc.attach(e.terminalId, options);
    await term.ready;
    term.onData(() => saved.set(term.terminalId, term.offset));
    term.onDetach(({ reason }: IDetachEvent) => console.log(reason, term.lost));
    bytes += e.produced - e.start;
  }
  const fresh = sc.spawn('bash', [], { detached: 'park', journal: 1 << 20 });
  // open takes the same options as spawn.
  const opened: Terminal = await sc.open('bash', ['-l'], { detached: 'ring', journal: 1 << 22, orphanMs: -1, cols: 120 });
  opened.detach();
  fresh.detach();
  // @ts-expect-error detached is "ring" or "park"
  sc.spawn('bash', [], { detached: 'keep' });
  // @ts-expect-error offset is read-only
  fresh.offset = 3;
  // @ts-expect-error attach takes the terminal's id
  sc.attach(7);
  await sc.close();
  return bytes;
}

// A remote persistent sidecar that is resumed after a drop, typed.
export function resumingHost(log: (line: string) => void): Sidecar {
  const sc = new Sidecar({
    transport: ['ssh', '-T', 'build-box', 'ptyplex-sidecar', '--persist', 'editor'],
    persist: true,
    reconnect: { attempts: Infinity, initialDelay: 100, maxDelay: 5000, queueLimit: 1 << 16 },
    keepalive: { interval: 2000, timeout: 4000 },
  });
  sc.on('disconnected', ({ error, code, signal }) => log(`${error.message} ${code} ${signal}`));
  sc.on('reconnected', (e: SidecarReconnected) => log(`back after ${e.ms} ms, attempt ${e.attempt}`));
  sc.once('gaveup', (e: SidecarGaveUp) => log(`${e.attempts}: ${e.error.message}`));
  sc.onReconnected(({ ms }) => log(String(ms + sc.pid)));
  if (sc.reconnecting) log('down');
  new Sidecar({ transport: ['sh'], reconnect: true, keepalive: false });
  new Sidecar({ transport: ['ssh', '-T', 'box'], persist: 'editor', install: { dir: '~/.ptyplex', from: 'dist' }, reconnect: true });
  new Sidecar({ transport: ['ssh', '-T', 'box'], install: true });
  // @ts-expect-error install.dir is a path
  new Sidecar({ transport: ['ssh', '-T', 'box'], install: { dir: 3 } });
  // @ts-expect-error the events are disconnected, reconnected and gaveup
  sc.on('exit', () => {});
  // @ts-expect-error reconnected gives { attempt, ms }
  sc.on('reconnected', (e: SidecarGaveUp) => e);
  // @ts-expect-error attempts is a number
  new Sidecar({ reconnect: { attempts: 'many' } });
  return sc;
}

// A viewer of a persistent terminal, and a holder that hands it over, typed.
export async function viewerHost(id: string): Promise<number> {
  const sc = new Sidecar({ persist: 'editor' });
  const view: Terminal = sc.attach(id, { view: true, encoding: 'utf8' });
  await view.ready;
  const n: number = view.viewer;
  const watching: boolean = view.viewing;
  const entries: PersistentTerminal[] = await sc.list();
  for (const e of entries) for (const v of e.viewers ?? []) console.log(e.terminalId, v.viewer, v.sent, v.lost);
  const held: Terminal = sc.attach(id);
  held.handOver(n);
  // @ts-expect-error view is true or false
  sc.attach(id, { view: 'yes' });
  // @ts-expect-error viewing is read-only
  view.viewing = false;
  await sc.close();
  return watching ? n : 0;
}

// A host that starts again the terminals a dead server left, typed.
export async function reviveHost(): Promise<number[]> {
  const sc = new Sidecar({ persist: 'editor' });
  const pids: number[] = [];
  for (const e of (await sc.list()).filter((x) => x.dead === true)) {
    const missing: number = e.crashLost ?? 0;
    if (missing) console.log(`${e.terminalId}: the crash lost ${missing} bytes`);
    const options: ReviveOptions = { encoding: null };
    const term: Terminal = sc.revive(e.terminalId, options);
    await term.ready;
    term.onData(() => pids.length);
    pids.push(term.pid);
  }
  sc.revive('t1');
  // @ts-expect-error revive takes the terminal's id
  sc.revive(7);
  // @ts-expect-error revive starts the program of the dead terminal: no offset
  sc.revive('t1', { offset: 3 });
  await sc.close();
  return pids;
}
