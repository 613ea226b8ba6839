// What `npm run repair -- DATA_DIR` does, and what a refused start quotes: a look at
// every checkpoint and at the log from the newest valid checkpoint on, then a plan.
//
// The rule: repair never deletes a record that no valid checkpoint covers unless the
// operator passes --drop-from-record=N, naming the first record that will be lost (the
// plan prints N; any other number is refused). Without it repair does only what loses
// nothing:
//   - a damaged checkpoint newer than a valid one is set aside (renamed *.damaged, kept
//     for inspection) when the log still holds every record after the valid one up
//     to the damaged one's index;
//   - a segment wholly covered by the newest valid checkpoint that holds damage is
//     deleted (a start steps over it already; nothing in it is needed);
//   - a segment whose 24-byte header alone is damaged (every record behind it reads
//     whole) gets its header rewritten.
// With the flag it also cuts the log at its first damaged record (truncating that
// segment and deleting the later ones), or drops the log after the newest valid
// checkpoint when the log no longer reaches back to it.
// A DATA_DIR whose checkpoints are all damaged cannot be rebuilt (the board a
// checkpoint held is not in the log): repair says so and changes nothing.

import { readFileSync, statSync } from 'node:fs';
import { CheckpointDamagedError, listCheckpoints, readCheckpointFile, type CheckpointFile } from './checkpointFiles.ts';
import { walDir } from './fileBatchLog.ts';
import { encodeSegmentHeader, listSegments, scanSegment, SEGMENT_HEADER_BYTES, type SegmentFile } from './segments.ts';
import { nodeStorage, writeFullySync, type Storage } from './storage.ts';

export interface RepairOptions {
  /** The first record the operator agrees to lose (--drop-from-record=N); without it nothing uncovered is dropped. */
  dropFromRecord?: number | null;
  /** Only say what would be done (a refused start quotes this). */
  dryRun?: boolean;
  storage?: Storage;
}

export interface RepairPlan {
  /** What was found and what is (or would be) done, one line each. */
  lines: string[];
  /** Anything found that a start would stop at or step over. */
  damaged: boolean;
  /** The first record a full repair would lose (the value --drop-from-record must name), or null when it loses nothing. */
  losesFrom: number | null;
  /** How many records from losesFrom are known to be lost (records after unreadable damage cannot be counted exactly). */
  losesRecords: number;
  /** False when the plan needs --drop-from-record and it was not given (or named another record), or when nothing can be restored. */
  complete: boolean;
  /** True when repair changed files. */
  changed: boolean;
}

interface CheckedCheckpoint {
  file: CheckpointFile;
  damage: CheckpointDamagedError | null;
}

function checkCheckpoints(dataDir: string): CheckedCheckpoint[] {
  return listCheckpoints(dataDir).map((file) => {
    try {
      readCheckpointFile(file);
      return { file, damage: null };
    } catch (error) {
      if (error instanceof CheckpointDamagedError) return { file, damage: error };
      return { file, damage: new CheckpointDamagedError(file.path, 0, 'file', `unreadable: ${(error as Error).message}`) };
    }
  });
}

interface LogProblem {
  /** Only the 24-byte segment header is damaged: its records read whole behind a rewritten one (a lossless repair). */
  headerOnly?: boolean;
  segment: SegmentFile;
  /** Offset the segment is cut at. */
  offset: number;
  /** The first record lost. */
  index: number;
  detail: string;
  torn: boolean;
}

interface LogLook {
  /** Segments wholly before `needFrom` (not needed). */
  covered: SegmentFile[];
  needed: SegmentFile[];
  /** Covered segments with damage in them. */
  coveredDamaged: SegmentFile[];
  problem: LogProblem | null;
  /** The last record the log holds, as far as it can be read (after a problem: counted in later segments). */
  lastIndex: number;
}

function lookAtLog(dataDir: string, needFrom: number): LogLook {
  const all = listSegments(walDir(dataDir));
  let first = 0;
  while (first + 1 < all.length && all[first + 1].firstIndex <= needFrom) first++;
  const covered = all.slice(0, first);
  const needed = all.slice(first);
  const coveredDamaged: SegmentFile[] = [];
  for (const segment of covered) {
    const scan = scanSegment(readFileSync(segment.path), segment.firstIndex);
    if (scan.problem !== null) coveredDamaged.push(segment);
  }
  let problem: LogProblem | null = null;
  let lastIndex = needFrom - 1;
  if (needed.length > 0 && needed[0].firstIndex > needFrom) {
    problem = { segment: needed[0], offset: 0, index: needFrom, detail: `records ${needFrom} to ${needed[0].firstIndex - 1} are missing: the log starts at ${needed[0].firstIndex}`, torn: false };
  }
  for (let i = 0; i < needed.length; i++) {
    const segment = needed[i];
    if (problem === null && i > 0 && segment.firstIndex !== lastIndex + 1) {
      problem = { segment, offset: 0, index: lastIndex + 1, detail: `segment starts at record ${segment.firstIndex} but the one before ends at ${lastIndex}`, torn: false };
    }
    const bytes = readFileSync(segment.path);
    let scan = scanSegment(bytes, segment.firstIndex, undefined, needFrom - 1);
    if (problem === null && scan.problem !== null && scan.problem.offset === 0 && scan.records === 0 && bytes.length > SEGMENT_HEADER_BYTES) {
      // the segment header alone may be damaged: read the records behind a rewritten one
      const fixed = Buffer.from(bytes);
      encodeSegmentHeader(segment.firstIndex).copy(fixed, 0);
      const again = scanSegment(fixed, segment.firstIndex, undefined, needFrom - 1);
      if (again.records > 0 && (again.problem === null || (again.problem.torn && i === needed.length - 1))) {
        problem = { headerOnly: true, segment, offset: 0, index: segment.firstIndex, detail: scan.problem.detail, torn: false };
        scan = again;
      }
    }
    if (problem === null && scan.problem !== null) {
      problem = { segment, offset: scan.validEnd, index: scan.problem.index, detail: `${scan.problem.detail} (at offset ${scan.problem.offset})`, torn: scan.problem.torn && i === needed.length - 1 };
    }
    lastIndex = Math.max(lastIndex, scan.lastIndex);
  }
  return { covered, needed, coveredDamaged, problem, lastIndex };
}

/** Looks at DATA_DIR and repairs what the rules above allow (or, dryRun, only says so). */
export function repairDataDir(dataDir: string, options: RepairOptions = {}): RepairPlan {
  const storage = options.storage ?? nodeStorage;
  const dry = options.dryRun === true;
  const lines: string[] = [];
  const say = (line: string) => lines.push(line);
  const act = (line: string, action: () => void) => {
    say(dry ? `would ${line}` : line);
    if (!dry) action();
  };
  const checkpoints = checkCheckpoints(dataDir);
  let changed = false;
  const base = checkpoints.find((c) => c.damage === null) ?? null;
  for (const c of checkpoints) {
    say(c.damage === null ? `checkpoint ${c.file.path}: valid (covers records up to ${c.file.logIndex})` : `checkpoint ${c.file.path}: DAMAGED: ${c.damage.message}`);
  }
  if (checkpoints.length > 0 && base === null) {
    say('no valid checkpoint: the board it held is not in the log, so DATA_DIR cannot be rebuilt; nothing was changed (move DATA_DIR aside to start a new board)');
    return { lines, damaged: true, losesFrom: null, losesRecords: 0, complete: false, changed: false };
  }
  const baseIndex = base?.file.logIndex ?? 0;
  const log = lookAtLog(dataDir, baseIndex + 1);
  const newerDamaged = checkpoints.filter((c) => c.damage !== null && c.file.logIndex > baseIndex);
  // the first record a full repair loses: the log's first damage after the base, or a
  // damaged newer checkpoint the log does not reach (its records exist nowhere else)
  let losesFrom: number | null = null;
  let losesRecords = 0;
  const logReaches = log.problem === null || log.problem.headerOnly === true ? log.lastIndex : log.problem.index - 1;
  if (log.problem !== null && !log.problem.torn && log.problem.headerOnly !== true) {
    losesFrom = log.problem.index;
    losesRecords = Math.max(1, log.lastIndex - log.problem.index + 1);
  }
  for (const c of newerDamaged) {
    if (c.file.logIndex > logReaches && (losesFrom === null || logReaches + 1 < losesFrom)) {
      losesFrom = logReaches + 1;
      losesRecords = Math.max(losesRecords, c.file.logIndex - logReaches);
    }
  }
  const damaged = newerDamaged.length > 0 || log.coveredDamaged.length > 0 || log.problem !== null;
  const allowed = losesFrom === null || options.dropFromRecord === losesFrom;

  for (const segment of log.coveredDamaged) {
    act(`delete ${segment.path}: damaged, but every record in it is covered by checkpoint ${base?.file.path} (not needed to start)`, () => {
      storage.unlinkSync(segment.path);
      changed = true;
    });
  }
  if (log.problem !== null) {
    const p = log.problem;
    const later = log.needed.slice(log.needed.indexOf(p.segment) + 1);
    const laterBytes = later.reduce((sum, s) => sum + statSync(s.path).size, 0);
    const cutBytes = statSync(p.segment.path).size - p.offset;
    const what =
      `cut ${p.segment.path} at offset ${p.offset} (${cutBytes} bytes: ${p.detail})` +
      (later.length > 0 ? ` and delete ${later.length} later segment(s), ${laterBytes} bytes: ${later.map((s) => s.name).join(', ')}` : '');
    if (p.headerOnly === true) {
      act(`rewrite the segment header of ${p.segment.path} (${p.detail}; every record behind it reads whole: nothing is lost)`, () => {
        const fd = storage.openSync(p.segment.path, 'r+');
        try {
          const header = encodeSegmentHeader(p.segment.firstIndex);
          writeFullySync(storage, fd, header, 0);
          storage.fsyncSync(fd);
        } finally {
          storage.closeSync(fd);
        }
        changed = true;
      });
    } else if (p.torn) {
      say(`the log ends in a torn write at record ${p.index} (never acknowledged); a start cuts it by itself`);
    } else if (allowed) {
      act(`${what}; records ${p.index} to ${log.lastIndex >= p.index ? log.lastIndex : p.index} are LOST (no valid checkpoint covers them)`, () => {
        const fd = storage.openSync(p.segment.path, 'r+');
        try {
          storage.ftruncateSync(fd, p.offset);
          storage.fsyncSync(fd);
        } finally {
          storage.closeSync(fd);
        }
        for (const s of later) storage.unlinkSync(s.path);
        storage.syncDirSync(walDir(dataDir));
        changed = true;
      });
    } else {
      say(`records ${p.index} to ${log.lastIndex >= p.index ? log.lastIndex : p.index} are damaged or unreadable and no valid checkpoint covers them: repair would ${what}`);
    }
  }
  for (const c of newerDamaged) {
    const reached = c.file.logIndex <= logReaches;
    if (reached || allowed) {
      act(`set ${c.file.path} aside as ${c.file.path}.damaged (${reached ? `the log holds every record it covers, from ${baseIndex + 1} to ${c.file.logIndex}` : `records ${logReaches + 1} to ${c.file.logIndex} it alone held are LOST`})`, () => {
        storage.renameSync(c.file.path, `${c.file.path}.damaged`);
        storage.syncDirSync(dataDir);
        changed = true;
      });
    } else {
      say(`checkpoint ${c.file.path} is damaged and the log holds only up to record ${logReaches} of the ${c.file.logIndex} it covers: records ${logReaches + 1} to ${c.file.logIndex} exist nowhere else`);
    }
  }
  if (!allowed) {
    say(
      `nothing that loses records was done: to drop records from ${losesFrom} on (${losesRecords} or more), run \`npm run repair -- ${dataDir} --drop-from-record=${losesFrom}\`` +
        (options.dropFromRecord != null ? ` (--drop-from-record=${options.dropFromRecord} does not name the first record lost, ${losesFrom})` : ''),
    );
  }
  if (!damaged) say(`no damage: ${checkpoints.length} checkpoint(s), log records ${baseIndex + 1} to ${log.lastIndex} readable after ${base === null ? 'no checkpoint' : base.file.path}`);
  else say(`keeps: ${base === null ? 'no checkpoint (the log replays onto an empty board)' : base.file.path} and log records ${baseIndex + 1} to ${losesFrom === null ? log.lastIndex : losesFrom - 1}`);
  return { lines, damaged, losesFrom, losesRecords, complete: allowed, changed };
}
