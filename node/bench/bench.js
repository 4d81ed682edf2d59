'use strict';
// Benchmark: the same script through ptyplex and through node-pty.
//   bulk: a child writes N MiB and exits; time from spawn to onExit.
//   echo: one keystroke written to cat in cooked mode, time until its echo.
// Usage: node bench.js [--runs N] [--keys N] [--mib 1,8,32]
// Prints Markdown tables; ratios are ptyplex over node-pty in this run.

const path = require('path');
const ptyplex = require('..');
let nodePty;
try {
  nodePty = require('node-pty');
} catch (err) {
  console.error('node-pty is not installed here: run `make bench-node` (it builds node-pty from source)');
  process.exit(1);
}

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const RUNS = Number(arg('runs', 7));
const KEYS = Number(arg('keys', 2000));
const SIZES = arg('mib', '1,8,32').split(',').map(Number);

if (!process.env.PTYPLEX_SIDECAR_PATH) {
  process.env.PTYPLEX_SIDECAR_PATH = path.join(__dirname, '..', '..', 'bin', 'ptyplex-sidecar');
}
const impls = { ptyplex: ptyplex.spawn, 'node-pty': nodePty.spawn };
const opts = { name: 'xterm-256color', cols: 120, rows: 40, cwd: process.cwd(), env: process.env };

// cpuOf returns the user+system CPU seconds of a process from /proc (0
// where there is no /proc).
function cpuOf(pid) {
  try {
    const st = require('fs').readFileSync(`/proc/${pid}/stat`, 'latin1');
    const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // USER_HZ
  } catch {
    return 0;
  }
}

function bulk(spawn, mib) {
  return new Promise((resolve) => {
    const sidecarPid = spawn === ptyplex.spawn ? ptyplex.defaultSidecar().pid : 0;
    const side0 = sidecarPid ? cpuOf(sidecarPid) : 0;
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    const term = spawn('/bin/sh', ['-c', `head -c ${mib << 20} /dev/zero | tr '\\0' x`], opts);
    const want = mib << 20;
    let got = 0;
    let last = t0;
    let exitAt = 0n;
    let exitCpu = null;
    let grace = null;
    // The clock stops at the later of onExit and the last byte. node-pty may
    // fire onExit first; its late bytes are waited for (up to 250 ms of
    // silence), so that losing or delaying output is never a speed-up.
    const finish = () => {
      clearTimeout(grace);
      const end = last > exitAt ? last : exitAt;
      const c = exitCpu;
      resolve({
        s: Number(end - t0) / 1e9,
        got,
        short: gotAtExit < want,
        host: (c.user + c.system) / 1e6,
        side: sidecarPid ? cpuOf(sidecarPid) - side0 : 0,
      });
    };
    let gotAtExit = 0;
    term.onData((d) => {
      got += d.length;
      last = process.hrtime.bigint();
      if (exitAt && got >= want) finish();
      else if (exitAt) grace.refresh();
    });
    term.onExit(() => {
      exitAt = process.hrtime.bigint();
      exitCpu = process.cpuUsage(cpu0);
      gotAtExit = got;
      if (got >= want) finish();
      else grace = setTimeout(finish, 250);
    });
  });
}

// echo types keys one at a time into cat, each as soon as the previous
// echo came back (gap 0) or gap ms later (a typing pace), and returns the
// latencies in µs.
function echo(spawn, keys, gap) {
  return new Promise((resolve) => {
    const term = spawn('cat', [], opts);
    const lat = [];
    let t0 = 0n;
    let want = null;
    let buf = '';
    const key = () => {
      want = String.fromCharCode(97 + (lat.length % 26));
      buf = '';
      t0 = process.hrtime.bigint();
      term.write(want);
    };
    term.onData((d) => {
      if (want === null) return;
      buf += d;
      if (!buf.includes(want)) return;
      lat.push(Number(process.hrtime.bigint() - t0) / 1e3);
      if (lat.length % 64 === 0) term.write('\r'); // keep cat's line short
      if (lat.length === keys) {
        want = null;
        term.kill();
        return;
      }
      if (gap) setTimeout(key, gap);
      else setImmediate(key);
    });
    term.onExit(() => resolve(lat));
    // Start once cat runs: the first byte of output or a short settle.
    setTimeout(key, 300);
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

(async () => {
  const load0 = require('os').loadavg()[0];
  const rows = [];
  const cpuRows = [];
  for (const mib of SIZES) {
    const res = { ptyplex: [], 'node-pty': [] };
    const host = { ptyplex: [], 'node-pty': [] };
    const side = [];
    const short = { ptyplex: 0, 'node-pty': 0 };
    const lost = { ptyplex: 0, 'node-pty': 0 };
    await bulk(ptyplex.spawn, 1); // warm the sidecar up
    for (let r = 0; r < RUNS; r++) {
      for (const [name, spawn] of r % 2 ? Object.entries(impls).reverse() : Object.entries(impls)) {
        const m = await bulk(spawn, mib);
        if (m.short) short[name]++;
        if (m.got < mib << 20) lost[name]++;
        res[name].push(m.s);
        host[name].push(m.host);
        if (name === 'ptyplex') side.push(m.side);
      }
    }
    const a = (mib * 1.048576) / median(res.ptyplex);
    const b = (mib * 1.048576) / median(res['node-pty']);
    rows.push(
      `| bulk ${mib} MiB, then exit | ${a.toFixed(0)} MB/s | ${b.toFixed(0)} MB/s | ${(a / b).toFixed(2)}× |` +
        ` ${short.ptyplex}/${RUNS}, ${lost.ptyplex} lost | ${short['node-pty']}/${RUNS}, ${lost['node-pty']} lost |`,
    );
    const ha = median(host.ptyplex) * 1000;
    const hb = median(host['node-pty']) * 1000;
    cpuRows.push(
      `| bulk ${mib} MiB | ${ha.toFixed(0)} ms | ${hb.toFixed(0)} ms | ${(ha / hb).toFixed(2)}× | ${(median(side) * 1000).toFixed(0)} ms |`,
    );
  }
  // Echo in rounds that alternate the two, so both see the same load.
  const ROUNDS = 8;
  for (const [label, gap, keys] of [['back to back', 0, KEYS], ['10 ms apart', 10, Math.ceil(KEYS / 4)]]) {
    const la = [];
    const lb = [];
    for (let r = 0; r < ROUNDS; r++) {
      la.push(...(await echo(ptyplex.spawn, Math.ceil(keys / ROUNDS), gap)));
      lb.push(...(await echo(nodePty.spawn, Math.ceil(keys / ROUNDS), gap)));
    }
    for (const p of [50, 99]) {
      const x = pct(la, p);
      const y = pct(lb, p);
      rows.push(`| echo p${p}, keys ${label} | ${x.toFixed(0)} µs | ${y.toFixed(0)} µs | ${(x / y).toFixed(2)}× | | |`);
    }
  }
  const cpus = require('os').cpus().length;
  console.log(
    `${RUNS} runs per size, alternating (median), ${KEYS} keystrokes back to back and ${Math.ceil(KEYS / 4)} 10 ms apart, in 8 alternating rounds; node ${process.version}, ${cpus} CPUs, ` +
      `load average ${load0.toFixed(2)} before and ${require('os').loadavg()[0].toFixed(2)} after\n`,
  );
  console.log('Ratios are ptyplex / node-pty: above 1 is faster for throughput, below 1 is faster for echo.');
  console.log('Throughput is timed to the later of onExit and the last byte.');
  console.log('"short" counts runs where onExit fired before all output had arrived; "lost", runs where some never came.\n');
  console.log('| measure | ptyplex | node-pty | ratio | ptyplex short | node-pty short |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
  console.log('\nCPU time of the host process (its event loop and libuv) per run, median; the sidecar\'s own CPU beside it:\n');
  console.log('| run | host CPU, ptyplex | host CPU, node-pty | ratio | sidecar CPU |');
  console.log('|---|---|---|---|---|');
  for (const r of cpuRows) console.log(r);
  await ptyplex.defaultSidecar().close();
})();
