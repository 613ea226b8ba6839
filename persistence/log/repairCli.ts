// `npm run repair -- DATA_DIR [--dry-run] [--drop-from-record=N]`: makes a damaged
// DATA_DIR startable again, explicitly, by the rules of repair.ts: it prints every
// checkpoint and log problem it finds and what it keeps and drops; it never deletes a
// record no valid checkpoint covers unless --drop-from-record names the first record
// lost (the number it printed). Exit status: 0 when DATA_DIR is now startable, 1 when
// something is left (records it would not drop without the flag, or nothing valid to
// restore), 2 for a usage error.

import { DataDirLock, DataDirLockedError } from './dataDirLock.ts';
import { repairDataDir } from './repair.ts';

const invokedDirectly = process.argv[1] !== undefined && /repairCli\.ts$/.test(process.argv[1]);
if (invokedDirectly) {
  const args = process.argv.slice(2);
  const dataDir = args.find((a) => !a.startsWith('--'));
  const drop = args.find((a) => a.startsWith('--drop-from-record='));
  const unknown = args.filter((a) => a.startsWith('--') && a !== '--dry-run' && !a.startsWith('--drop-from-record='));
  const dropFromRecord = drop === undefined ? null : Number(drop.slice('--drop-from-record='.length));
  if (dataDir === undefined || unknown.length > 0 || (dropFromRecord !== null && !(Number.isSafeInteger(dropFromRecord) && dropFromRecord > 0))) {
    process.stderr.write('usage: npm run repair -- DATA_DIR [--dry-run] [--drop-from-record=N]\n');
    process.exit(2);
  }
  // repair changes files a running board writes: it takes the same lock a start takes
  let lock: DataDirLock;
  try {
    lock = DataDirLock.acquire(dataDir);
  } catch (error) {
    process.stderr.write(`${error instanceof DataDirLockedError ? error.message : String(error)}\n`);
    process.exit(1);
  }
  const plan = repairDataDir(dataDir, { dropFromRecord, dryRun: args.includes('--dry-run') });
  lock.release();
  for (const line of plan.lines) process.stdout.write(`${line}\n`);
  process.exit(plan.complete ? 0 : 1);
}
