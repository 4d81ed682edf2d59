'use strict';
// A real OpenSSH server on 127.0.0.1 for the tests that reach a sidecar
// over ssh: keys, config and known_hosts in a temporary directory, a free
// port, nothing of the system's ssh configuration read or changed.
const childProcess = require('child_process');
const fs = require('fs');
const net = require('net');
const os = require('os');
const path = require('path');

const SSHD = '/usr/sbin/sshd';

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

// Starts on a fresh port when sshd exits at once: the free port is found
// by closing a listener, and another process may take it first.
const BIND_ATTEMPTS = 5;

// startSshd resolves with { ssh, stop } where ssh is the client argv up to
// and including the destination; null when openssh-server is missing, or
// a failure when PTYPLEX_REQUIRE_SSHD is set (make test-node sets it: CI
// installs openssh-server, and a skip there would hide the ssh tests).
async function startSshd(t) {
  if (!fs.existsSync(SSHD)) {
    if (process.env.PTYPLEX_REQUIRE_SSHD) throw new Error(`no ${SSHD} (PTYPLEX_REQUIRE_SSHD is set): install openssh-server`);
    return null;
  }
  if (process.getuid() === 0) fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 }); // sshd's privilege separation dir
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-sshd-'));
  fs.chmodSync(dir, 0o700);
  const keygen = (f) => childProcess.execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'ptyplex-test', '-f', f]);
  const hostKey = path.join(dir, 'host_key');
  const userKey = path.join(dir, 'user_key');
  keygen(hostKey);
  keygen(userKey);
  fs.writeFileSync(path.join(dir, 'authorized_keys'), fs.readFileSync(userKey + '.pub'), { mode: 0o600 });
  for (let attempt = 1; ; attempt++) {
    const srv = await listen(t, dir, hostKey, userKey);
    if (srv.ssh) return srv;
    if (attempt === BIND_ATTEMPTS) throw new Error(`the test sshd exited while starting, ${attempt} times: ${srv.log}`);
  }
}

// listen starts sshd on a free port and waits until a login works. It
// resolves with { ssh, stop }, or { log } when sshd exited meanwhile.
async function listen(t, dir, hostKey, userKey) {
  const port = await freePort();
  const known = path.join(dir, 'known_hosts');
  fs.writeFileSync(known, `[127.0.0.1]:${port} ${fs.readFileSync(hostKey + '.pub')}`, { mode: 0o600 });
  const config = path.join(dir, 'sshd_config');
  fs.writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
      `PidFile ${path.join(dir, 'sshd.pid')}`,
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin prohibit-password',
      'UsePAM no',
      'StrictModes no',
      'LogLevel ERROR',
      // bash reads ~/.bashrc for a command from sshd only as a top-level
      // shell: SHLVL=1 keeps the machine's rc file (one here ran pyenv's
      // start-up, seconds per login, a minute when its lock was stale) out
      // of every ssh command of the tests.
      'SetEnv SHLVL=1',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  const sshd = childProcess.spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  let exited = false;
  sshd.stderr.on('data', (d) => (log += d));
  sshd.on('exit', () => (exited = true));
  const user = os.userInfo().username;
  const ssh = ['ssh', '-F', '/dev/null', '-p', String(port), '-i', userKey, '-o', `UserKnownHostsFile=${known}`,
    '-o', 'StrictHostKeyChecking=yes', '-o', 'BatchMode=yes', '-o', 'IdentitiesOnly=yes', '-o', 'ConnectTimeout=10', '-o', 'LogLevel=ERROR', '-T', `${user}@127.0.0.1`];
  const stop = () => {
    sshd.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  t.after(stop);
  // Ready once a login works; sshd listens a moment after it starts.
  const deadline = Date.now() + 30000;
  for (;;) {
    const r = childProcess.spawnSync(ssh[0], [...ssh.slice(1), 'true'], { encoding: 'utf8' });
    if (r.status === 0) break;
    if (exited) return { log };
    if (Date.now() > deadline) throw new Error(`ssh to the test sshd fails: ${r.stderr}\nsshd: ${log}`);
    await new Promise((resolve) => setTimeout(resolve, 20)); // between attempts, bounded by the deadline
  }
  return { ssh, stop };
}

module.exports = { startSshd };
