// The tick archive's files: ARCHIVE_DIR/<UTC day>/<first seq>-<last seq>.parquet.
//
// A file is written under a temporary name (*.parquet.<n>.tmp), read back and checked,
// fsync'd, renamed to its final name and the directory fsync'd: a file with a final
// name is whole. The seqs in a name are the first and last log records whose changes
// the file holds; within a day directory a file whose range lies inside another's
// was merged into it (compaction writes the merged file first, then deletes its
// inputs), so a crash between the two leaves files that opening the archive deletes.
// Records only grow (the log's index), so the archive holds every record up to the
// largest last seq of any file.

import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface ArchiveFile {
  path: string;
  day: string;
  first: number;
  last: number;
  bytes: number;
  /** Modification time: with path and bytes, what identifies this version of the file (a merge may rewrite a day's only file in place). */
  mtimeMs: number;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const FILE = /^(\d{16})-(\d{16})\.parquet$/;

export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Epoch ms of a day's midnight (UTC). */
export function dayStart(day: string): number {
  return Date.parse(`${day}T00:00:00Z`);
}

export function isDay(text: string): boolean {
  return DAY.test(text) && !Number.isNaN(dayStart(text)) && dayOf(dayStart(text)) === text;
}

export function archiveFileName(first: number, last: number): string {
  return `${String(first).padStart(16, '0')}-${String(last).padStart(16, '0')}.parquet`;
}

/** The day directories of the archive, oldest first. */
export function listDays(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => isDay(name))
    .sort();
}

/** Files of one day (whole ones only: temporaries are left out), by first seq. */
export function listDayFiles(dir: string, day: string): ArchiveFile[] {
  const dayDir = join(dir, day);
  if (!existsSync(dayDir)) return [];
  const files: ArchiveFile[] = [];
  for (const name of readdirSync(dayDir)) {
    const match = FILE.exec(name);
    if (match === null) continue;
    const path = join(dayDir, name);
    const stat = statSync(path);
    files.push({ path, day, first: Number(match[1]), last: Number(match[2]), bytes: stat.size, mtimeMs: stat.mtimeMs });
  }
  return files.sort((a, b) => a.first - b.first || b.last - a.last);
}

/** Every whole file of the archive, oldest day first. */
export function listArchiveFiles(dir: string): ArchiveFile[] {
  return listDays(dir).flatMap((day) => listDayFiles(dir, day));
}

/**
 * The whole files of the days that can hold a change with fromMs <= time_ms <= toMs: a
 * day directory holds only changes applied that UTC day (a flush writes one file per day
 * its records fall in, a merge stays within its day).
 */
export function listArchiveFilesBetween(dir: string, fromMs: number, toMs: number): ArchiveFile[] {
  return listDays(dir)
    .filter((day) => dayStart(day) <= toMs && dayStart(day) + 86_400_000 > fromMs)
    .flatMap((day) => liveFiles(listDayFiles(dir, day)));
}

/**
 * True when `file` is an input of a merge whose output `others` holds: another file of
 * its day whose range holds its range and is longer. Such a file is left only between a
 * merge's rename and its deletions (a crash, or a deletion that failed): its rows are in
 * the other file, so reads skip it and the next start or maintenance deletes it.
 */
export function isCovered(file: ArchiveFile, others: readonly ArchiveFile[]): boolean {
  return others.some((other) => other !== file && other.first <= file.first && other.last >= file.last && other.last - other.first > file.last - file.first);
}

/** The files of one day's listing that are not covered by another (what reads and merges use). */
export function liveFiles(files: readonly ArchiveFile[]): ArchiveFile[] {
  return files.filter((file) => !isCovered(file, files));
}

/**
 * Cleans what a crash can leave: temporaries (never renamed, so never counted) and
 * files a merged file covers (a compaction that stopped before deleting its inputs).
 * Returns what it deleted.
 */
export function tidyArchive(dir: string): string[] {
  const deleted: string[] = [];
  for (const day of listDays(dir)) {
    const dayDir = join(dir, day);
    for (const name of readdirSync(dayDir)) {
      if (name.endsWith('.tmp')) {
        rmSync(join(dayDir, name), { force: true });
        deleted.push(join(dayDir, name));
      }
    }
    const files = listDayFiles(dir, day);
    for (const file of files) {
      if (isCovered(file, files)) {
        rmSync(file.path, { force: true });
        deleted.push(file.path);
      }
    }
  }
  return deleted;
}

export function ensureDayDir(dir: string, day: string): string {
  const dayDir = join(dir, day);
  mkdirSync(dayDir, { recursive: true });
  return dayDir;
}

/** SQL text of a string literal. */
export function sqlString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** read_parquet over files, as SQL (a list that is never empty: callers check). */
export function readParquetSql(files: readonly string[]): string {
  // by name: files written before a column was added read it as null
  return `read_parquet([${files.map(sqlString).join(', ')}], union_by_name = true)`;
}
