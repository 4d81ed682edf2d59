'use strict';
// Another local user who creates /tmp/ptyplex-UID first (mode 0777) must not
// take the persistent sidecar away from the user whose directory that was:
// the bridge then finds the server in the cache directory under HOME, as
// the Go client and the CLI do. The victim and the attacker are both fresh
// users (useradd), so that the planted directory never gets in the way of
// other tests run as root.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const crypto = require('crypto');
const { execFileSync, spawnSync } = require('child_process');
const { BIN } = require('./helpers');

function needRoot(t) {
  if (process.getuid() === 0) return true;
  if (process.env.PTYPLEX_NO_ROOT_TESTS === '1') {
    t.skip('PTYPLEX_NO_ROOT_TESTS=1: skipping a test that acts as a second user');
    return false;
  }
  throw new Error('this test acts as a second local user and must run as root (CI does); set PTYPLEX_NO_ROOT_TESTS=1 to skip it explicitly');
}

// useradd and userdel, found in PATH or else in the system directories:
// root's PATH in a non-login shell, and many containers', has no /usr/sbin.
function admin(prog) {
  for (const dir of (process.env.PATH || '').split(path.delimiter).filter(Boolean).concat(['/usr/sbin', '/sbin'])) {
    const p = path.join(dir, prog);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {}
  }
  return prog;
}

function newUser(t) {
  const name = `ptyn${crypto.randomBytes(4).toString('hex')}`;
  execFileSync(admin('useradd'), ['--system', '--no-create-home', '--user-group', '--shell', '/usr/sbin/nologin', name]);
  t.after(() => spawnSync(admin('userdel'), [name]));
  const uid = Number(execFileSync('id', ['-u', name]).toString().trim());
  const gid = Number(execFileSync('id', ['-g', name]).toString().trim());
  return { name, uid, gid };
}

test('a /tmp/ptyplex-UID another user made first: the persistent sidecar falls back to the cache directory', (t) => {
  if (!needRoot(t)) return;
  const victim = newUser(t);
  const attacker = newUser(t);
  const planted = `/tmp/ptyplex-${victim.uid}`;
  t.after(() => fs.rmSync(planted, { recursive: true, force: true }));
  execFileSync('mkdir', ['-m', '0777', planted], { uid: attacker.uid, gid: attacker.gid });

  // The binary and the package where the victim may read them.
  const pub = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-squat-'));
  t.after(() => fs.rmSync(pub, { recursive: true, force: true }));
  fs.chmodSync(pub, 0o755);
  const bin = path.join(pub, 'ptyplex-sidecar');
  fs.copyFileSync(BIN, bin);
  fs.chmodSync(bin, 0o755);
  const home = path.join(pub, 'home');
  fs.mkdirSync(home, { mode: 0o700 });
  fs.chownSync(home, victim.uid, victim.gid);

  const script = `
    const { Sidecar } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const sc = new Sidecar({ path: ${JSON.stringify(bin)}, persist: 'squat', logger: (l) => process.stderr.write(l + '\\n') });
    const term = sc.spawn('sh', ['-c', 'echo squat-ok']);
    let out = '';
    term.onData((d) => { out += d; });
    term.onExit(() => { process.stdout.write(JSON.stringify(out)); sc.close(); });
  `;
  const env = { HOME: home, PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C' };
  const as = { uid: victim.uid, gid: victim.gid, env, cwd: '/', timeout: 60000 };
  try {
    const r = spawnSync(process.execPath, ['-e', script], as);
    const out = String(r.stdout);
    assert.strictEqual(r.status, 0, `node as the victim: ${r.status} ${r.signal}\n${out}\n${r.stderr}`);
    assert.match(out, /squat-ok/, String(r.stderr));
    // The server's socket is in the victim's cache directory.
    assert.ok(fs.existsSync(path.join(home, '.cache', 'ptyplex', 'sessions', 'sidecar', 'squat.sock')), 'the socket is under HOME/.cache');
  } finally {
    // Before the cleanups above remove the binary and the users.
    spawnSync(bin, ['--persist', 'squat', '--stop'], as);
  }
});
