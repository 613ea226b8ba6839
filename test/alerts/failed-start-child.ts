// The child of failed-start.test.ts: starts the app on DATA_DIR (argv[2]), where a
// directory stands in the way of the ingest address file, so the start fails after the
// webhook delivery thread started; prints what the start answered, then starts again
// once the directory is gone (the data dir's lock and alerts.db were let go) and closes.
// The process must then exit by itself: if anything the failed start opened still runs
// (the delivery thread, a listener, a timer), it does not, and the line printed after
// 5 s names what holds it.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { INGEST_ADDRESS_FILE } from '../../ingest/ingestAddress.ts';
import { startTestApp } from '../helpers/app.ts';

const dataDir = process.argv[2]!;
const say = (line: unknown) => process.stdout.write(`${JSON.stringify(line)}\n`);

try {
  const t = await startTestApp({ dataDir, env: { ALERTS_TICK_MS: '20' } });
  say({ started: true });
  await t.close();
} catch (error) {
  say({ refused: error instanceof Error ? error.message : String(error) });
}
rmSync(join(dataDir, INGEST_ADDRESS_FILE), { recursive: true, force: true });
const t = await startTestApp({ dataDir, env: { ALERTS_TICK_MS: '20' } });
say({ restarted: t.app.alerts !== null && (await t.app.alerts.list()).length === 0 });
await t.close();
setTimeout(() => say({ stillOpen: process.getActiveResourcesInfo() }), 5000).unref();
