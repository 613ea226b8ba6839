// `npm run repair -- DATA_DIR`: makes a damaged log startable again, explicitly. It
// finds the first bad frame of DATA_DIR/wal, says what it will drop (that frame and
// every record after it, in its segment and the later ones), then truncates the
// segment there and deletes the later segments. Records it drops are lost: run it
// only after reading what it prints. A log without damage is left alone.

import { readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import { walDir } from './fileBatchLog.ts';
import { listSegments, scanSegment } from './segments.ts';

export interface RepairResult {
  damaged: boolean;
  lines: string[];
}

export function repairLog(dataDir: string): RepairResult {
  const segments = listSegments(walDir(dataDir));
  const lines: string[] = [];
  let expected = segments.length > 0 ? segments[0].firstIndex : 1;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    const bytes = readFileSync(segment.path);
    const scan = segment.firstIndex === expected ? scanSegment(bytes, segment.firstIndex) : null;
    const problem = scan === null ? { offset: 0, detail: `segment starts at record ${segment.firstIndex}, expected ${expected}` } : scan.problem;
    if (problem === null) {
      expected = scan!.lastIndex + 1;
      continue;
    }
    const keep = scan === null ? 0 : scan.validEnd;
    const firstDropped = scan === null ? segment.firstIndex : scan.lastIndex + 1;
    const later = segments.slice(i + 1);
    const laterBytes = later.reduce((sum, s) => sum + statSync(s.path).size, 0);
    lines.push(`damaged record in ${segment.path} at offset ${problem.offset}: ${problem.detail}`);
    lines.push(
      `dropping ${bytes.length - keep} bytes of ${segment.path} from offset ${keep} (records from ${firstDropped} on)` +
        (later.length > 0 ? ` and ${later.length} later segment(s), ${laterBytes} bytes: ${later.map((s) => s.name).join(', ')}` : ''),
    );
    truncateSync(segment.path, keep);
    for (const s of later) rmSync(s.path);
    lines.push(`the log now ends at record ${firstDropped - 1}`);
    return { damaged: true, lines };
  }
  lines.push(`no damage: ${segments.length} segment(s), records up to ${expected - 1}`);
  return { damaged: false, lines };
}

const invokedDirectly = process.argv[1] !== undefined && /repairCli\.ts$/.test(process.argv[1]);
if (invokedDirectly) {
  const dataDir = process.argv[2];
  if (dataDir === undefined) {
    process.stderr.write('usage: npm run repair -- DATA_DIR\n');
    process.exit(2);
  }
  const result = repairLog(dataDir);
  for (const line of result.lines) process.stdout.write(`${line}\n`);
}
