// Types of the ptyplex package: node-pty's API (IPty, IEvent, IDisposable)
// plus the Sidecar host object. Like node-pty's, the module has no default
// export: require('ptyplex').default is undefined, so only an ES module
// (index.mjs) or esModuleInterop gets one, the module object itself.

/// <reference types="node" />

export interface IDisposable {
  dispose(): void;
}

/** An event: call it with a listener; dispose the result to stop listening. */
export interface IEvent<T> {
  (listener: (e: T) => any): IDisposable;
}

export interface IExitEvent {
  /**
   * The exit status; 0 when a signal ended the child. At run time it is
   * null when the status is unknown: the sidecar died under the terminal
   * (or reconnecting gave up), a resumed terminal the server no longer
   * has, and an attach to a dead terminal of a persistent server (one a
   * server that died left: its bytes replayed, then this exit). Typed
   * number, as node-pty types it, so that code written against node-pty's
   * IExitEvent (wrappers, Promise<number>) still compiles; check for null
   * where these cases can happen.
   */
  exitCode: number;
  /** The number of the signal that ended the child, or 0. */
  signal?: number;
}

/** node-pty's options common to every platform. */
export interface IBasePtyForkOptions {
  /** TERM for the child (default: env.TERM, else "xterm"). */
  name?: string;
  /** Default 80 (also for 0 or NaN); fractions are cut, values above 65535 clamped. */
  cols?: number;
  /** Default 24, as cols. */
  rows?: number;
  cwd?: string;
  /** The child's whole environment (default: process.env). PWD is set to cwd. */
  env?: { [key: string]: string | undefined };
  /** Output decoding and the encoding of written strings (default "utf8"); null delivers Buffers. */
  encoding?: string | null;
  /** Treat writes of flowControlPause/flowControlResume as pause()/resume(). */
  handleFlowControl?: boolean;
  flowControlPause?: string;
  flowControlResume?: string;
}

export interface IPtyForkOptions extends IBasePtyForkOptions {
  /** Not supported: spawn throws unless it is this process's own uid (the child runs as the sidecar's user). */
  uid?: number;
  /** Not supported, as uid. */
  gid?: number;
}

/**
 * node-pty's Windows options: accepted. The Windows sidecar always uses
 * ConPTY (useConpty: false, winpty, is not offered); useConptyDll and
 * conptyInheritCursor are accepted and have no effect.
 */
export interface IWindowsPtyForkOptions extends IBasePtyForkOptions {
  useConpty?: boolean;
  useConptyDll?: boolean;
  conptyInheritCursor?: boolean;
}

/**
 * node-pty's IPty, member for member and no more, so that a class written
 * to implement node-pty's IPty (a mock, a wrapper) implements this one.
 * spawn returns a Terminal, which has the rest.
 */
export interface IPty {
  /**
   * The child's pid. Read before the terminal has opened, it blocks until the
   * sidecar's answer arrives (at most 2 s; then 0 until it opens); 0 for a
   * program that cannot start. `await ready` waits without blocking.
   */
  readonly pid: number;
  readonly cols: number;
  readonly rows: number;
  /** The foreground process's name (argv[0]). */
  readonly process: string;
  handleFlowControl: boolean;
  /** Strings; Buffers when the terminal was spawned with encoding null (typed as node-pty types it). */
  readonly onData: IEvent<string>;
  readonly onExit: IEvent<IExitEvent>;
  /**
   * Throws, as node-pty, for sizes that are not positive numbers and once the terminal has exited.
   * pixelSize sets the window's size in pixels too (ws_xpixel, ws_ypixel; 0 without it); ignored
   * on Windows and by sidecars older than it.
   */
  resize(columns: number, rows: number, pixelSize?: { width: number, height: number }): void;
  clear(): void;
  write(data: string | Buffer): void;
  /** A signal name, as node-pty types it; a Terminal takes numbers too. */
  kill(signal?: string): void;
  pause(): void;
  resume(): void;
  /**
   * node-pty 1.2's: the handle (HWND) of the window hosting the terminal,
   * for ConPTY's console window. Optional, as node-pty declares it, so that
   * a class implementing node-pty's IPty implements this one. A Terminal
   * has it and answers false: the window is not passed to the sidecar's
   * ConPTY (node-pty too answers false except on Windows with useConptyDll).
   */
  setParentWindow?(handle: Buffer): boolean;
}

/** The terminal spawn returns: node-pty's IPty and what node-pty's object has beyond it, and ours. */
export interface Terminal extends IPty {
  /**
   * No signal: end the terminal (SIGHUP, SIGKILL 3 s later). A signal: deliver it to the
   * child process alone, as node-pty does. A falsy one (null, '', 0) is no signal; an unknown
   * one is ignored, as node-pty ignores it.
   */
  kill(signal?: string | number | null): void;
  on(event: 'data', listener: (data: string) => void): this;
  on(event: 'exit', listener: (exitCode: number, signal?: number) => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  on(event: 'close', listener: () => void): this;
  addListener(event: string, listener: (...args: any[]) => void): this;
  once(event: string, listener: (...args: any[]) => void): this;
  removeListener(event: string, listener: (...args: any[]) => void): this;
  off(event: string, listener: (...args: any[]) => void): this;
  removeAllListeners(event?: string): this;
  listeners(event: string): Function[];
  emit(event: string, ...args: any[]): boolean;
  /** Ends the terminal, as kill(). */
  destroy(): void;
  /** node-pty 1.2's; always false here (see IPty). */
  setParentWindow(handle: Buffer): boolean;
  /** Output decoding from now on; null: Buffers. */
  setEncoding(encoding: string | null): void;
  /** node-pty's ptsName (/dev/pts/N), read from the child on Linux with a local sidecar; undefined elsewhere and through a transport. */
  readonly ptsName: string | undefined;
  /** Resolves when the terminal runs; rejects with the reason it could not start. */
  readonly ready: Promise<void>;
  /**
   * Asks the sidecar for the foreground process's name; a viewer, which the
   * server does not answer, resolves with what `process` knows.
   */
  getProcess(): Promise<string>;
  /** The terminal's id in the protocol: what Sidecar#attach takes. */
  readonly terminalId: string;
  /**
   * Bytes of output delivered to onData since the terminal was opened (a
   * persistent server's byte offset; a character not yet complete counts
   * once delivered). Save it to attach again from it.
   */
  readonly offset: number;
  /** Bytes the server's journal had let go before the offset attach asked for (then a SNAPSHOT came first). */
  readonly lost: number;
  /**
   * Fires when this host no longer holds the terminal (taken over, detach(),
   * the connection ended); writes then throw. A terminal that another
   * connection took over while a dropped connection was being resumed is
   * reported so when the resume finds it ("taken over by another
   * connection"), and is not taken back.
   */
  readonly onDetach: IEvent<IDetachEvent>;
  /** Lets the terminal run on without this host (persistent sidecars only); a viewer stops viewing. */
  detach(): void;
  /**
   * True while this host only views the terminal (attach with view: true):
   * write, resize, kill and handOver throw; false once the holder handed
   * it over, and for terminals this host holds.
   */
  readonly viewing: boolean;
  /**
   * This viewer's number on the server (what the holder's handOver names);
   * 0 if this host never viewed the terminal. After a hand-over it keeps
   * the number it had as a viewer (viewing tells which it is now), as the
   * Go client's ViewerNumber does.
   */
  readonly viewer: number;
  /**
   * Gives the terminal, which this host holds, to the viewer numbered
   * viewer: it goes on as the holder, and this host's onDetach fires
   * ("handed over to viewer N"). A number that is no viewer is refused by
   * the server (logged), and nothing changes.
   */
  handOver(viewer: number): void;
}

export interface IDetachEvent {
  /** Why: "taken over by another connection", "detached as asked", ... */
  reason: string;
}

/** spawn's options for a persistent sidecar's terminals. */
export interface IPersistForkOptions extends IPtyForkOptions {
  /** While no host holds it: "ring" keeps reading, losing the oldest bytes; "park" blocks the child. */
  detached?: 'ring' | 'park';
  /** The journal's size in bytes (default the server's, 4 MiB). */
  journal?: number;
  /** Milliseconds the terminal may run with no host holding it before the server closes it (default the server's --orphan-timeout, 3 h; -1: never). */
  orphanMs?: number;
}

export interface AttachOptions {
  /** Bytes of the terminal already received (a previous pty.offset; default 0). */
  offset?: number;
  /** Output decoding (default "utf8"); null delivers Buffers. */
  encoding?: string | null;
  /**
   * View the terminal instead of taking it over (default false): the same
   * output from offset, within this host's own credit, while its holder
   * keeps it. A viewer that falls behind the server's journal gets the
   * server's repaint of the screen in onData instead of the bytes it
   * missed (lost counts them); it never slows the holder.
   */
  view?: boolean;
}

export interface ReviveOptions {
  /** Output decoding (default "utf8"); null delivers Buffers. */
  encoding?: string | null;
}

/** One viewer of a persistent terminal, as LISTED gives it. */
export interface PersistentViewer {
  /** Its number: what Terminal#handOver takes. */
  viewer: number;
  /** The offset of the next byte the server is to send it. */
  sent: number;
  /** Bytes it was skipped past since it attached. */
  lost: number;
}

/** One terminal of a persistent server, as LISTED gives it. */
export interface PersistentTerminal {
  terminalId: string;
  pid: number;
  cmd: string;
  args?: string[];
  cols: number;
  rows: number;
  /** Bytes produced since OPEN; the journal holds [start, produced). */
  produced: number;
  start: number;
  attached: boolean;
  detached: 'ring' | 'park';
  exited: boolean;
  exitCode?: number;
  signal?: string;
  /** Running with no host holding it: milliseconds before the server closes it (the orphan timeout). */
  orphanInMs?: number;
  /** Exited with no host holding it: milliseconds before the server drops it (--keep-exited). */
  dropInMs?: number;
  /** The connections that view it (attach with view: true); absent when none do. */
  viewers?: PersistentViewer[];
  /** Left by a server that died (--journal-dir, docs/persist.md): attach() replays what was kept, revive() starts it again. */
  dead?: boolean;
  /** A dead terminal's bytes past produced that its server had read but the crash lost; absent when none were. */
  crashLost?: number;
  /** With --journal-dir: why its output no longer reaches the directory (a full disk, say); it runs on, and this clears once the disk has room again. */
  journalDirError?: string;
}

/**
 * The terminal class, for `instanceof`: terminals come from spawn, open,
 * attach and revive, never from `new`.
 */
export declare const Terminal: { readonly prototype: Terminal } & (abstract new (...args: never[]) => Terminal);

export interface SidecarOptions {
  /** The ptyplex-sidecar binary (default: resolveSidecar()). */
  path?: string;
  /** Receives each stderr line of the sidecar and the package's own notes. */
  logger?: (line: string) => void;
  /** Milliseconds to wait for a terminal to start (default 10000; 0 or Infinity: forever). */
  openTimeout?: number;
  /** Bytes of output a terminal may have in flight to this process (default 1 MiB). */
  creditWindow?: number;
  /** Extra arguments for the sidecar (e.g. ["--record", file]). */
  args?: string[];
  /**
   * The command that reaches a sidecar, run instead of path and args:
   * ["ssh", "-T", "host", "ptyplex-sidecar"]. pid is then the transport's,
   * and its stderr lines reach logger marked "transport ssh: ".
   */
  transport?: string[];
  /**
   * The transport's environment (default process.env). Without a transport, a persistent
   * sidecar (persist, or --persist NAME in args) takes from it only what places the server's
   * socket (PTYPLEX_RUNTIME_DIR, XDG_RUNTIME_DIR, TMPDIR, HOME, XDG_CACHE_HOME); a plain one, nothing.
   */
  env?: NodeJS.ProcessEnv;
  /**
   * Begin with the handshake; frames wait for it, and when the sidecar is too
   * old or speaks another protocol every terminal fails with the reason.
   */
  hello?: boolean;
  /** Milliseconds the handshake may take, transport start-up included (default 15000; Infinity: forever). */
  helloTimeout?: number;
  /**
   * Run `ptyplex-sidecar --persist NAME`: terminals outlive this host, to be
   * listed and attached again. env then only chooses the server's runtime
   * directory (PTYPLEX_RUNTIME_DIR, XDG_RUNTIME_DIR). With transport the
   * transport's argv runs the persistent sidecar, and persist (a name or
   * true) only says to expect one: the handshake checks its "persist".
   */
  persist?: string | true;
  /**
   * Resume after the transport drops without a CLOSE: reconnect with
   * backoff and attach every terminal again at the bytes it received.
   * Needs a persistent sidecar (persist, or a transport running
   * `ptyplex-sidecar --persist NAME`); turns the handshake on. true: the
   * defaults.
   */
  reconnect?: boolean | ReconnectOptions;
  /**
   * PING the sidecar every interval and treat no answer within timeout as
   * a dropped connection (its transport is killed). On by default with
   * reconnect; used only with a sidecar whose HELLO lists "keepalive".
   */
  keepalive?: boolean | KeepaliveOptions;
  /**
   * Install the sidecar on the other machine on first connect, with the
   * ptyplex binary's `remote install` (found beside the sidecar, on PATH,
   * or install.ptyplex). transport is then the command that reaches the
   * machine and runs its last argument as a shell command line (["ssh",
   * "-T", "host"]), without the sidecar; persist NAME adds --persist NAME.
   */
  install?: boolean | InstallOptions;
}

export interface InstallOptions {
  /** The ptyplex binary that runs the install (default: beside the sidecar, then PATH). */
  ptyplex?: string;
  /** make release's output, for another platform's binaries (ptyplex remote install --from). */
  from?: string;
  /** The installation root over there (--dir; default ~/.ptyplex). */
  dir?: string;
}

export interface ReconnectOptions {
  /** Attempts before giving up (default 10; Infinity: never give up). */
  attempts?: number;
  /** Milliseconds before the first attempt, doubling for each next one (default 250). */
  initialDelay?: number;
  /** The longest wait between attempts, in milliseconds (default 15000). */
  maxDelay?: number;
  /** Bytes of input, all terminals together, held while disconnected (default 1 MiB); past it write throws. */
  queueLimit?: number;
}

export interface KeepaliveOptions {
  /** Milliseconds between PINGs (default 5000). */
  interval?: number;
  /** Milliseconds a PING may go unanswered, with nothing else received (default 10000). */
  timeout?: number;
}

/** The connection dropped; the terminals wait (no onExit) while it is resumed. */
export interface SidecarDisconnected {
  /** Why: the transport's end, or the keepalive's verdict. */
  error: Error;
  code: number | null;
  signal: string | null;
}

/**
 * A new connection is up and every terminal's ATTACH is sent on it (ahead
 * of anything queued meanwhile). Each terminal's answer comes after this
 * event: its output goes on from there, and a viewer's `viewer` number is
 * the new one from then, or, for one that another connection took over
 * meanwhile, its onDetach fires ("taken over by another connection"); a
 * call made now goes out after those ATTACHes.
 */
export interface SidecarReconnected {
  /** Which attempt succeeded (1 is the first). */
  attempt: number;
  /** Milliseconds from the drop. */
  ms: number;
}

/** No attempt succeeded; the terminals then exit (exitCode null, signal 0). */
export interface SidecarGaveUp {
  error: Error;
  attempts: number;
}

/** What a sidecar says about itself in its HELLO. */
export interface SidecarHello {
  version: string;
  protocol: number;
  features: string[];
  os?: string;
  arch?: string;
}

export interface SidecarDeath {
  code: number | null;
  signal: string | null;
  error: Error | null;
}

export declare class Sidecar {
  constructor(options?: SidecarOptions);
  /** The running sidecar's pid, or 0. */
  readonly pid: number;
  readonly onDeath: IEvent<SidecarDeath>;
  /** With reconnect: the connection dropped and is being resumed. */
  readonly onDisconnected: IEvent<SidecarDisconnected>;
  /** With reconnect: resumed; sidecar.pid is the new transport's. */
  readonly onReconnected: IEvent<SidecarReconnected>;
  /** With reconnect: every attempt failed; onDeath fires too. */
  readonly onGaveUp: IEvent<SidecarGaveUp>;
  /** True while a dropped connection is being resumed (pid is then 0). */
  readonly reconnecting: boolean;
  on(event: 'disconnected', listener: (e: SidecarDisconnected) => void): this;
  on(event: 'reconnected', listener: (e: SidecarReconnected) => void): this;
  on(event: 'gaveup', listener: (e: SidecarGaveUp) => void): this;
  once(event: 'disconnected', listener: (e: SidecarDisconnected) => void): this;
  once(event: 'reconnected', listener: (e: SidecarReconnected) => void): this;
  once(event: 'gaveup', listener: (e: SidecarGaveUp) => void): this;
  off(event: 'disconnected' | 'reconnected' | 'gaveup', listener: (e: any) => void): this;
  removeListener(event: 'disconnected' | 'reconnected' | 'gaveup', listener: (e: any) => void): this;
  /** The sidecar's HELLO once a handshake succeeded, else null. */
  readonly remote: SidecarHello | null;
  /** Sends HELLO and resolves with the answer; rejects, saying what to install, for an old or mismatched sidecar. */
  handshake(): Promise<SidecarHello>;
  /**
   * args as a string (Windows only, as in node-pty) is the command line after file, given to the
   * child as it is: how cmd.exe /c gets a command with quotes. Elsewhere it throws.
   */
  spawn(file?: string, args?: string[] | string, options?: IPersistForkOptions | IWindowsPtyForkOptions): Terminal;
  /**
   * Like spawn, resolving once the terminal runs (rejecting if it cannot start). Its output and
   * exit wait until the macrotask after that, for listeners added right after the await.
   */
  open(file?: string, args?: string[] | string, options?: IPersistForkOptions | IWindowsPtyForkOptions): Promise<Terminal>;
  /** With persist: every terminal of the server, attached or not. */
  list(): Promise<PersistentTerminal[]>;
  /** With persist: takes a terminal over; its onData goes on from options.offset. `ready` rejects with the server's refusal. */
  attach(terminalId: string, options?: AttachOptions): Terminal;
  /**
   * With persist: starts a dead terminal (list() marks it dead) again, its
   * command, args, cwd, env and size in a new terminal under the same id,
   * which this host holds; onData begins with the old screen, then the new
   * program's output. `ready` rejects with the server's refusal.
   */
  revive(terminalId: string, options?: ReviveOptions): Terminal;
  /**
   * Ends the connection; with persist the terminals go on (onDetach), else
   * they are killed. Input written before goes out first while the sidecar
   * takes it; once it takes none and sends nothing for 3 s (a paste its
   * program does not read), the rest is dropped, so this never waits for that.
   */
  close(): Promise<void>;
}

/**
 * node-pty's spawn, on the shared Sidecar. args as a string (Windows only, as in node-pty) is the
 * command line after file, given to the child as it is; elsewhere it throws.
 */
export declare function spawn(file?: string, args?: string[] | string, options?: IPtyForkOptions | IWindowsPtyForkOptions): Terminal;
/** node-pty's deprecated names for spawn. */
export declare const fork: typeof spawn;
export declare const createTerminal: typeof spawn;
/** node-pty's open (a PTY pair with no process): not supported, it throws. */
export declare function open(options?: unknown): never;
/** node-pty's native binding: there is none (null, as node-pty's on Windows). */
export declare const native: null;
export declare function defaultSidecar(): Sidecar;
/** The sidecar binary: $PTYPLEX_SIDECAR_PATH, the platform package, then PATH. */
export declare function resolveSidecar(env?: NodeJS.ProcessEnv): string;

/** The build the package was packed from by `make npm`: the same version and commit as its ptyplex-sidecar's --version (in a source tree: "dev", "unknown"). */
export declare const build: { readonly version: string; readonly commit: string };
