// A real nginx (Debian's package, /usr/sbin/nginx; .ci/run installs it) in front of a
// test server: the reference configuration docs/nginx.conf with its two addresses
// replaced, or a bare `proxy_pass` with nginx's defaults (HTTP/1.0 upstream,
// Connection: close, buffering on). Runs in its own temp prefix, in the foreground,
// stopped by close().
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const NGINX = process.env.NGINX_BIN ?? '/usr/sbin/nginx';
export const REFERENCE_CONFIG = new URL('../../docs/nginx.conf', import.meta.url);

export type NginxSetup = 'reference' | 'default';

export interface RunningNginx {
  port: number;
  /** nginx's error log so far (for failure messages). */
  errors(): string;
  close(): Promise<void>;
}

export function nginxAvailable(): boolean {
  return existsSync(NGINX);
}

/** A free port on 127.0.0.1 (bound and released: nginx binds it right after). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address() as net.AddressInfo;
      probe.close(() => resolve(address.port));
    });
  });
}

/** The server config for a setup, proxying to 127.0.0.1:upstreamPort and listening on 127.0.0.1:port. */
export function siteConfig(setup: NginxSetup, upstreamPort: number, port: number): string {
  if (setup === 'default') {
    return `server {\n    listen 127.0.0.1:${port};\n    location / {\n        proxy_pass http://127.0.0.1:${upstreamPort};\n    }\n}\n`;
  }
  const reference = readFileSync(REFERENCE_CONFIG, 'utf8');
  const site = reference.replace(/server 127\.0\.0\.1:8080;/, `server 127.0.0.1:${upstreamPort};`).replace(/listen 80;/, `listen 127.0.0.1:${port};`);
  if (site === reference || !site.includes(`127.0.0.1:${upstreamPort}`) || !site.includes(`listen 127.0.0.1:${port};`)) {
    throw new Error('docs/nginx.conf no longer has `server 127.0.0.1:8080;` and `listen 80;` for the test to replace');
  }
  return site;
}

export async function startNginx(setup: NginxSetup, upstreamPort: number): Promise<RunningNginx> {
  const dir = mkdtempSync(join(tmpdir(), 'odds-nginx-'));
  // Workers may run as another user (nobody when started as root): they write the temp files.
  chmodSync(dir, 0o755);
  for (const sub of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) {
    mkdirSync(join(dir, sub));
    chmodSync(join(dir, sub), 0o777);
  }
  const port = await freePort();
  writeFileSync(join(dir, 'site.conf'), siteConfig(setup, upstreamPort, port));
  writeFileSync(
    join(dir, 'nginx.conf'),
    [
      'worker_processes 1;',
      `error_log ${join(dir, 'error.log')} warn;`,
      `pid ${join(dir, 'nginx.pid')};`,
      'daemon off;',
      'events { worker_connections 256; }',
      'http {',
      '    access_log off;',
      `    client_body_temp_path ${join(dir, 'client_body')};`,
      `    proxy_temp_path ${join(dir, 'proxy')};`,
      `    fastcgi_temp_path ${join(dir, 'fastcgi')};`,
      `    uwsgi_temp_path ${join(dir, 'uwsgi')};`,
      `    scgi_temp_path ${join(dir, 'scgi')};`,
      `    include ${join(dir, 'site.conf')};`,
      '}',
      '',
    ].join('\n'),
  );
  const errorLog = join(dir, 'error.log');
  const child: ChildProcess = spawn(NGINX, ['-p', dir, '-e', errorLog, '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const errors = () => `${stderr}${existsSync(errorLog) ? readFileSync(errorLog, 'utf8') : ''}`;
  const started = Date.now();
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() - started > 10_000) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`nginx did not start: ${errors()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port,
    errors,
    async close() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
