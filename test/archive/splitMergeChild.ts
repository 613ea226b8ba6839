// Child process of archive-split-crash.test.ts: opens the tick archive in argv[2] (a day
// of argv[3] changes, generated as one plain file, finished), lets its maintenance split
// that day, prints "merged" and exits. The test SIGKILLs it at a stage of the merge.
import { TickArchive } from '../../persistence/archive/tickArchive.ts';

const [dir, rowsText, nowText] = process.argv.slice(2);
const rows = Number(rowsText);
const archive = await TickArchive.open({
  dir: dir!,
  retentionDays: 30,
  intervalMs: 0,
  // fsync'd as the service does: what a SIGKILL leaves is what a restart finds either way
  fsync: true,
  now: () => Number(nowText),
  warn: (line) => process.stderr.write(`${line}\n`),
  source: { rowsOf: () => {} },
  log: { lastIndex: rows, firstIndex: () => rows + 1, replay: () => {}, archived: () => {} },
  compaction: { splitParts: 16 },
});
process.stdout.write('open\n');
await archive.flush();
await archive.close();
process.stdout.write('merged\n');
