'use strict';
// Throughput of one terminal through a naive host decoder, beside node-pty
// and this package's own decoder, in one process, alternating.
//
// The naive host is what a Node host that writes its own codec typically
// does, and so a case the sidecar's frame sizes must serve well: on every
// stdout chunk it concatenates its carry with the chunk (Buffer.concat),
// copies every frame body out (Buffer.from), and copies the remainder into
// the next carry. It talks to ptyplex-sidecar directly, without this
// package.
//
// Each run: a child in raw mode cats an N MiB file of 80-column text
// (`stty raw -echo; exec cat FILE`, as the Go bench does), timed from the
// spawn (or OPEN) to the later of the exit and the last byte. The sidecars
// are started once, before the first run, as a host keeps its sidecar.
//
// Usage: node naive-host.js [--mib 32] [--runs 5] [--credit N]
//          [--impls naive,package,node-pty] [--sidecars PATH,PATH...] [--json]
// --credit N: the naive host opens with a credit window of N bytes and
// grants back what it received each time a quarter of it has arrived (0:
// no credit, the terminal is not throttled). --sidecars: several binaries
// to compare; the naive host runs once against each per run.
// Prints MB/s medians and each run's ratio to node-pty; --json prints one
// JSON object instead: {runs: [{name: MB/s, ...}, ...]}. NAIVE_STATS=1 in the
// environment also prints each naive host's chunk and frame counts and CPU.

const childProcess = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const MIB = Number(arg('mib', 32));
const RUNS = Number(arg('runs', 5));
const CREDIT = Number(arg('credit', 0));
const JSON_OUT = process.argv.includes('--json');
const defaultSidecar = process.env.PTYPLEX_SIDECAR_PATH || path.join(__dirname, '..', '..', 'bin', 'ptyplex-sidecar');
const SIDECARS = arg('sidecars', defaultSidecar).split(',');
const IMPLS = arg('impls', 'naive,package,node-pty').split(',');

const OPEN = 0x01;
const CREDIT_T = 0x05;
const OPENED = 0x81;
const OUTPUT = 0x82;
const EXIT = 0x83;
const ERROR = 0x84;

function makeFile(bytes) {
  const line = 'the quick brown fox jumps over the lazy dog 0123456789 ABCDEFGHIJKLMNOPQRSTUVW\n';
  const block = Buffer.from(line.repeat(Math.ceil((1 << 20) / line.length))).subarray(0, 1 << 20);
  const p = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-naive-')), `flood-${bytes}.txt`);
  const fd = fs.openSync(p, 'w');
  for (let left = bytes; left > 0; left -= block.length) fs.writeSync(fd, block, 0, Math.min(left, block.length));
  fs.closeSync(fd);
  return p;
}

function jsonFrame(type, obj) {
  const body = Buffer.from(JSON.stringify(obj));
  const f = Buffer.alloc(5 + body.length);
  f.writeUInt32LE(1 + body.length, 0);
  f[4] = type;
  body.copy(f, 5);
  return f;
}

// NaiveHost is a sidecar host with the naive decoder. Its terminals get
// onData(Buffer) and onExit callbacks.
class NaiveHost {
  constructor(bin) {
    this.child = childProcess.spawn(bin, [], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.terms = new Map();
    this.next = 1;
    this.child.on('exit', (code, sig) => {
      for (const t of this.terms.values()) t.exit(new Error(`${bin} ended (${sig || code}) under a live terminal`));
      this.terms.clear();
    });
    let carry = Buffer.alloc(0);
    this.stats = { chunks: 0, frames: 0, bytes: 0 };
    this.child.stdout.on('data', (chunk) => {
      this.stats.chunks++;
      this.stats.bytes += chunk.length;
      const buf = Buffer.concat([carry, chunk]);
      let off = 0;
      while (buf.length - off >= 5) {
        const len = buf.readUInt32LE(off);
        if (buf.length - off - 4 < len) break;
        const type = buf[off + 4];
        const body = Buffer.from(buf.subarray(off + 5, off + 4 + len));
        off += 4 + len;
        this.stats.frames++;
        this.frame(type, body);
      }
      carry = Buffer.from(buf.subarray(off));
    });
  }

  frame(type, body) {
    if (type === OUTPUT) {
      const n = body.readUInt16LE(0);
      const t = this.terms.get(body.toString('utf8', 2, 2 + n));
      if (t) t.data(body.subarray(2 + n));
      return;
    }
    const msg = JSON.parse(body.toString('utf8'));
    const t = this.terms.get(msg.terminalId);
    if (!t) return;
    if (type === EXIT || type === ERROR) {
      this.terms.delete(msg.terminalId);
      t.exit(type === ERROR ? new Error(msg.message) : null);
    }
    if (type === OPENED) t.opened = true;
  }

  spawn(cmd, args, onData, onExit) {
    const id = `n${this.next++}`;
    const t = {
      unacked: 0,
      data: (d) => {
        onData(d);
        if (CREDIT > 0) {
          t.unacked += d.length;
          if (t.unacked >= CREDIT / 4) {
            this.child.stdin.write(jsonFrame(CREDIT_T, { terminalId: id, bytes: t.unacked }));
            t.unacked = 0;
          }
        }
      },
      exit: onExit,
    };
    this.terms.set(id, t);
    const open = { terminalId: id, cols: 80, rows: 24, cmd, args, cwd: process.cwd(), env: { PATH: process.env.PATH, TERM: 'xterm' } };
    if (CREDIT > 0) open.credit = CREDIT;
    this.child.stdin.write(jsonFrame(OPEN, open));
  }

  close() {
    this.child.stdin.end();
    return new Promise((r) => this.child.once('exit', r));
  }
}

let scratch = null; // the flood file's directory, removed at the end or on failure
let lost = 0; // runs that never got all their bytes (node-pty's issue #72)

// timed runs start(onData, onExit) and resolves with MB/s. The clock stops
// at the later of the exit and the last byte; a host whose exit comes
// before all output (node-pty) gets 250 ms of silence to deliver the rest.
// cpuOf is a process's user+system CPU in ms from /proc (0 without /proc).
function cpuOf(pid) {
  try {
    const st = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // USER_HZ
  } catch {
    return 0;
  }
}

// cpu records the CPU (ms) of this process and the sidecar (pid, if any)
// spent in the last timed run, per implementation.
const cpu = {};

function timed(name, want, start, sidecarPid) {
  return new Promise((resolve, reject) => {
    const c0 = process.cpuUsage();
    const s0 = sidecarPid ? cpuOf(sidecarPid) : 0;
    const t0 = process.hrtime.bigint();
    let got = 0;
    let last = t0;
    let exitAt = 0n;
    let grace = null;
    const finish = () => {
      clearTimeout(grace);
      if (got > want) return reject(new Error(`got ${got} bytes, want ${want}`));
      if (got < want) lost++;
      const c = process.cpuUsage(c0);
      cpu[name] = { host: (c.user + c.system) / 1e3, sidecar: sidecarPid ? cpuOf(sidecarPid) - s0 : 0 };
      const end = last > exitAt ? last : exitAt;
      resolve(want / 1e6 / (Number(end - t0) / 1e9));
    };
    start(
      (d) => {
        got += d.length;
        last = process.hrtime.bigint();
        if (exitAt && got >= want) finish();
        else if (exitAt) grace.refresh();
      },
      (err) => {
        if (err) return reject(err);
        exitAt = process.hrtime.bigint();
        if (got >= want) finish();
        else grace = setTimeout(finish, 250);
      },
    );
  });
}

(async () => {
  const want = MIB << 20;
  const file = makeFile(want);
  scratch = path.dirname(file);
  const script = ['-c', `stty raw -echo; exec cat ${file}`];
  const impls = [];
  const hosts = [];
  let pkgSidecar = null;
  for (const name of IMPLS) {
    if (name === 'naive') {
      for (const bin of SIDECARS) {
        const host = new NaiveHost(bin);
        hosts.push(host);
        const label = SIDECARS.length > 1 ? `naive ${path.basename(bin)}` : 'naive';
        impls.push([label, () => timed(label, want, (d, e) => host.spawn('/bin/sh', script, d, e), host.child.pid)]);
      }
    } else if (name === 'package') {
      const { Sidecar } = require('..');
      pkgSidecar = new Sidecar({ path: SIDECARS[0] });
      const opts = { name: 'xterm', cols: 80, rows: 24, encoding: null };
      impls.push([
        'package',
        () =>
          timed(
            'package',
            want,
            (d, e) => {
              const t = pkgSidecar.spawn('/bin/sh', script, opts);
              t.onData(d);
              t.onExit(() => e(null));
            },
            pkgSidecar.pid,
          ),
      ]);
    } else if (name === 'node-pty') {
      let nodePty;
      try {
        nodePty = require('node-pty');
      } catch {
        console.error('node-pty is not installed in node/bench: run `make bench-node` once (it builds node-pty from source)');
        process.exit(3);
      }
      const opts = { name: 'xterm', cols: 80, rows: 24, encoding: null };
      impls.push([
        'node-pty',
        () =>
          timed('node-pty', want, (d, e) => {
            const t = nodePty.spawn('/bin/sh', script, opts);
            t.onData(d);
            t.onExit(() => e(null));
          }),
      ]);
    } else {
      throw new Error(`unknown implementation ${name}`);
    }
  }
  // Round 0 warms up (page cache, lazy loading) and is not counted.
  const runs = [];
  for (let r = -1; r < RUNS; r++) {
    const order = r % 2 ? [...impls].reverse() : impls;
    const res = {};
    for (const [name, run] of order) {
      const l0 = lost;
      res[name] = await run();
      if (lost > l0) res[`${name} lost`] = 1;
      res[`${name} cpu`] = cpu[name];
    }
    if (r < 0) continue;
    runs.push(res);
    console.error(`run ${r + 1}/${RUNS}: ${Object.entries(res).filter(([k]) => !k.endsWith(' lost') && !k.endsWith(' cpu')).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', ')}`);
  }
  if (process.env.NAIVE_STATS) {
    for (const h of hosts) {
      const f = fs.readFileSync(`/proc/${h.child.pid}/stat`, 'latin1');
      const x = f.slice(f.lastIndexOf(')') + 2).split(' ').map(Number);
      const c = process.cpuUsage();
      console.error(JSON.stringify({ ...h.stats, sidecarUser: x[11], sidecarSys: x[12], childUser: x[13], childSys: x[14], nodeUserMs: c.user / 1e3, nodeSysMs: c.system / 1e3 }));
    }
  }
  for (const h of hosts) await h.close();
  if (pkgSidecar) await pkgSidecar.close();
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
  if (JSON_OUT) {
    console.log(JSON.stringify({ mib: MIB, credit: CREDIT, runs }));
    return;
  }
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const range = (xs) => `${med(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)})`;
  console.log(`${MIB} MiB, raw mode, ${RUNS} alternating runs, credit ${CREDIT || 'none'}; load average ${os.loadavg()[0].toFixed(2)}\n`);
  console.log('| host | MB/s, median (min–max) | ratio to node-pty, median (min–max) | runs with output lost | CPU ms/MiB: host + sidecar, median |');
  console.log('|---|---|---|---|---|');
  for (const [name] of impls) {
    const v = runs.map((r) => r[name]);
    const rat = runs[0]['node-pty'] ? range(runs.map((r) => r[name] / r['node-pty'])) : '–';
    const l = runs.filter((r) => r[`${name} lost`]).length;
    const h = med(runs.map((r) => r[`${name} cpu`].host)) / MIB;
    const sc = med(runs.map((r) => r[`${name} cpu`].sidecar)) / MIB;
    console.log(
      `| ${name} | ${med(v).toFixed(0)} (${Math.min(...v).toFixed(0)}–${Math.max(...v).toFixed(0)}) | ${rat} | ${l}/${RUNS} | ${h.toFixed(1)} + ${sc.toFixed(1)} |`,
    );
  }
})().catch((err) => {
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  console.error(err.message);
  process.exit(1);
});
