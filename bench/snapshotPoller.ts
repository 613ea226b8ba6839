// The client side of the snapshot bench's live polls, run as its own process (pinned
// to another core than the server) so that what it measures is the server: a poller
// in the server's process would wait on the server's event loop to read its own
// response and would gunzip bodies on the server's threadpool.
//
//   node --import tsx bench/snapshotPoller.ts <url> <pollMs> <seconds> <clockShiftMs>
//
// Polls <url> every pollMs with If-None-Match (a 304 costs no body), each request
// after the previous response ended. Prints one JSON line: time to first byte per
// poll (request sent to response headers, ms), staleness per poll (the server's
// clock at the response minus the answered version's syncToken: the server's clock
// is Date.now() + clockShiftMs), when each poll was sent (Date.now()), polls
// and new versions (200s).
import http from 'node:http';
import { createGunzip } from 'node:zlib';

const [url, pollMsText, secondsText, shiftText] = process.argv.slice(2);
const pollMs = Number(pollMsText);
const seconds = Number(secondsText);
const shift = Number(shiftText);
if (url === undefined || !(pollMs > 0) || !(seconds > 0) || !Number.isFinite(shift)) {
  process.stderr.write('usage: snapshotPoller.ts <url> <pollMs> <seconds> <clockShiftMs>\n');
  process.exit(2);
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The body's syncToken, gunzipping only its first bytes; the rest of the body is read and dropped. */
function syncTokenOf(res: http.IncomingMessage): Promise<number> {
  return new Promise((resolve, reject) => {
    const gunzip = createGunzip();
    let text = '';
    let token = -1;
    const done = (): void => {
      res.unpipe(gunzip);
      gunzip.destroy();
      res.resume();
    };
    gunzip.on('data', (chunk: Buffer) => {
      if (token >= 0) return;
      text += chunk.toString('latin1');
      const match = /"syncToken":"(\d+)"/.exec(text);
      if (match !== null) {
        token = Number(match[1]);
        done();
      }
    });
    gunzip.on('error', (error) => (token >= 0 ? undefined : reject(error)));
    res.pipe(gunzip);
    res.on('end', () => (token >= 0 ? resolve(token) : reject(new Error('no syncToken in the body'))));
    res.on('error', reject);
  });
}

const ttfb: number[] = [];
const staleness: number[] = [];
/** When each poll was sent, Date.now() (for a trace beside the server's). */
const sentAt: number[] = [];
let bodies = 0;
let etag = '';
let tokenOfEtag = 0;
const deadline = performance.now() + seconds * 1000;
while (performance.now() < deadline) {
  const sent = performance.now();
  sentAt.push(Date.now());
  await new Promise<void>((resolve, reject) => {
    const req = http.get(url, { agent, headers: etag === '' ? {} : { 'If-None-Match': etag } }, (res) => {
      ttfb.push(performance.now() - sent);
      const now = Date.now() + shift;
      if (res.statusCode === 304) {
        staleness.push(now - tokenOfEtag);
        res.resume().on('end', resolve);
        return;
      }
      if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}`));
      bodies++;
      etag = String(res.headers.etag);
      syncTokenOf(res).then((token) => {
        tokenOfEtag = token;
        staleness.push(now - token);
        resolve();
      }, reject);
    });
    req.on('error', reject);
  });
  const wait = pollMs - (performance.now() - sent);
  if (wait > 0) await sleep(wait);
}
agent.destroy();
process.stdout.write(`${JSON.stringify({ ttfb, staleness, sentAt, polls: ttfb.length, bodies })}\n`);
