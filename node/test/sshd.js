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

// startSshd resolves with { ssh, stop } where ssh is the client argv up to
// and including the destination; null when openssh-server is missing.
async function startSshd(t) {
  if (!fs.existsSync(SSHD)) return null;
  if (process.getuid() === 0) fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 }); // sshd's privilege separation dir
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptyplex-sshd-'));
  fs.chmodSync(dir, 0o700);
  const keygen = (f) => childProcess.execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'ptyplex-test', '-f', f]);
  const hostKey = path.join(dir, 'host_key');
  const userKey = path.join(dir, 'user_key');
  keygen(hostKey);
  keygen(userKey);
  fs.writeFileSync(path.join(dir, 'authorized_keys'), fs.readFileSync(userKey + '.pub'), { mode: 0o600 });
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
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  const sshd = childProcess.spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  sshd.stderr.on('data', (d) => (log += d));
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
    if (Date.now() > deadline) throw new Error(`ssh to the test sshd fails: ${r.stderr}\nsshd: ${log}`);
    await new Promise((resolve) => setTimeout(resolve, 20)); // between attempts, bounded by the deadline
  }
  return { ssh, stop };
}

module.exports = { startSshd };
