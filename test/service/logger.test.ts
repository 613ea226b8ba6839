// The log on stdout: JSON lines for files and pipes, readable lines on a terminal,
// LOG_FORMAT forcing either; and the ready line naming the live board, the API
// reference and the API, whose addresses answer. The terminal is a real pseudo-terminal
// (util-linux's `script`), so `auto` is decided by the same isatty a user's shell gives.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLogger, readableLine } from '../../service/logger.ts';

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'odds-logger-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

interface Started {
  output: string;
  readyLine: string;
}

/** Starts `npm start`'s entry on a small board (through a pseudo-terminal when terminal), waits for the ready line, then stops it with SIGINT. */
function startService(name: string, env: Record<string, string>, terminal: boolean, probe: (readyLine: string) => Promise<void> = async () => {}): Promise<Started> {
  const command = [process.execPath, '--import', 'tsx', 'service/main.ts'];
  const argv = terminal ? ['script', ['-qefc', command.join(' '), '/dev/null']] as const : [command[0]!, command.slice(1)] as const;
  const child = spawn(argv[0], [...argv[1]], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', INGEST_PORT: '0', BOARD: 'small', SIM_RATE: '0', NOW: '2026-11-21T12:00:00Z', DATA_DIR: join(dir, name), ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no ready line within 60 s: ${output}`));
    }, 60_000);
    let found = false;
    child.stdout.on('data', () => {
      if (found) return;
      const readyLine = output.split(/\r?\n/).find((line) => line.includes(' ready in ') && /\/docs/.test(line));
      if (readyLine === undefined) return;
      found = true;
      clearTimeout(timer);
      const stop = () => {
      // through script, the signal goes to the service in the pseudo-terminal's foreground
      if (terminal) child.stdin.write('\u0003');
      else child.kill('SIGINT');
      };
      probe(readyLine).then(
        () => {
          stop();
          void exited.then(() => resolve({ output, readyLine }));
        },
        (error: unknown) => {
          stop();
          reject(error);
        },
      );
    });
  });
}

describe('log format', () => {
  it('writes a readable line from a JSON one: time, level, message, error and request id', () => {
    const line = readableLine(JSON.stringify({ level: 50, time: '2026-11-21T12:00:01.250Z', msg: 'internal error', err: { message: 'boom' }, requestId: 'ab-1' }));
    assert.equal(line, '12:00:01 error internal error: boom [request ab-1]\n');
    assert.equal(readableLine('not json\n'), 'not json\n');
  });

  it('keeps JSON for a given destination unless pretty is asked for', () => {
    const json: string[] = [];
    createLogger('info', { write: (l: string) => void json.push(l) }).info({ event: 'x' }, 'hello');
    assert.equal(JSON.parse(json[0]!).msg, 'hello');
    const pretty: string[] = [];
    createLogger('info', { write: (l: string) => void pretty.push(l) }, 'pretty').info({ event: 'x' }, 'hello nats://u:secret@h:4222');
    assert.match(pretty[0]!, /^\d\d:\d\d:\d\d info  hello nats:\/\/u:\*\*\*@h:4222\n$/);
  });

  it('a pipe gets JSON lines; the ready line names the live board, the API reference and the API, and they answer', async () => {
    const answers: Record<string, [number, string]> = {};
    const { output, readyLine } = await startService('pipe', {}, false, async (line) => {
      const fields = JSON.parse(line);
      for (const url of [fields.boardUrl, fields.docsUrl, `${fields.apiUrl}/status`]) {
        const response = await fetch(url);
        answers[url] = [response.status, response.headers.get('content-type') ?? ''];
      }
    });
    const ready = JSON.parse(readyLine);
    assert.equal(ready.event, 'ready');
    for (const line of output.split('\n').filter((l) => l.startsWith('{'))) JSON.parse(line);
    assert.match(ready.msg, /^small board \(seed 42, [\d,]+ live rows\) ready in [\d.]+s: live board http:\/\/127\.0\.0\.1:(\d+)\/, API reference http:\/\/127\.0\.0\.1:\1\/docs, API http:\/\/127\.0\.0\.1:\1\/api\/v1; /);
    assert.equal(ready.boardUrl, `http://127.0.0.1:${ready.port}/`);
    assert.equal(ready.docsUrl, `http://127.0.0.1:${ready.port}/docs`);
    assert.deepEqual(answers, {
      [`http://127.0.0.1:${ready.port}/`]: [200, 'text/html; charset=utf-8'],
      [`http://127.0.0.1:${ready.port}/docs`]: [200, 'text/html; charset=utf-8'],
      [`http://127.0.0.1:${ready.port}/api/v1/status`]: [200, 'application/json; charset=utf-8'],
    });
  });

  it('a terminal gets readable lines, and LOG_FORMAT=json forces JSON there', async () => {
    const readable = await startService('tty', {}, true);
    assert.match(readable.readyLine, /^\d\d:\d\d:\d\d info  small board \(seed 42, [\d,]+ live rows\) ready in [\d.]+s: live board http:\/\/127\.0\.0\.1:\d+\/, API reference /);
    assert.doesNotMatch(readable.output, /\{"level"/);
    const forced = await startService('tty-json', { LOG_FORMAT: 'json' }, true);
    assert.equal(JSON.parse(forced.readyLine).event, 'ready');
  });

  it('LOG_FORMAT=pretty forces readable lines into a pipe', async () => {
    const { readyLine } = await startService('pipe-pretty', { LOG_FORMAT: 'pretty' }, false);
    assert.match(readyLine, /^\d\d:\d\d:\d\d info  small board/);
  });
});
