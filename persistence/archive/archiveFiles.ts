// The tick archive's files: ARCHIVE_DIR/<UTC day>/<first seq>-<last seq>.parquet, and a
// finished day's split directory ARCHIVE_DIR/<UTC day>/<first seq>-<last seq>.parts/.
//
// A file is written under a temporary name (*.parquet.<n>.tmp), read back and checked,
// fsync'd, renamed to its final name and the directory fsync'd: a file with a final
// name is whole. The seqs in a name are the first and last log records whose changes
// the file holds; within a day directory a file whose range lies inside another's
// was merged into it (compaction writes the merged file first, then deletes its
// inputs), so a crash between the two leaves files that opening the archive deletes.
// Records only grow (the log's index), so the archive holds every record up to the
// largest last seq of any file.
//
// A finished day is split by event_key into part files (part-<hex>.parquet: the keys
// from that two-hex-digit prefix up to the next part's), so a query for one event reads
// one part per day, not every row group of the whole day. The parts and a manifest
// (MANIFEST_NAME: the split count, each part's rows, bytes and sha256) are written and
// fsync'd in a temporary directory (*.parts.<n>.tmp), which one rename installs: a
// directory with a final name is whole. Its range covers files of the same range
// (the day's single file it was rewritten from), so those are its inputs too.

import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';

export interface ArchiveFile {
  path: string;
  day: string;
  first: number;
  last: number;
  bytes: number;
  /** Modification time: with path and bytes, what identifies this version of the file (a merge may rewrite a day's only file in place). */
  mtimeMs: number;
  /** A split day (path: its directory; bytes: its parts'; mtimeMs: its manifest's), or null: one Parquet file. */
  split: SplitDay | null;
}

/** A finished day split by event_key prefix: its manifest, and its parts' paths. */
export interface SplitDay {
  manifest: SplitManifest;
  /** Path of each part file, in the manifest's order (key order). */
  paths: readonly string[];
}

/** One part of a split day, as its manifest lists it. */
export interface SplitPart {
  /** The first two hex digits of the event_keys it holds, from (inclusive) to the next part's `from`. */
  from: string;
  name: string;
  rows: number;
  bytes: number;
  sha256: string;
}

/**
 * A split day's manifest.json: written and fsync'd before the directory is renamed into
 * place, so an installed directory always has one. Parts that would be empty are not
 * written (and not listed).
 */
export interface SplitManifest {
  format: typeof MANIFEST_FORMAT;
  /** The files' layout (the archive's MERGED_LAYOUT when written). */
  layout: string;
  first: number;
  last: number;
  rows: number;
  /** How many key ranges the day is split into (16, 64 or 256): part i holds keys whose first byte b has floor(b * parts / 256) = i. */
  parts: number;
  files: SplitPart[];
}

export const MANIFEST_NAME = 'manifest.json';
export const MANIFEST_FORMAT = 'odds-archive-split-day/1';
/** Split counts a day may be written with: divisors of 256, so each part is a range of first bytes. */
export const SPLIT_COUNTS = [16, 64, 256] as const;

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const FILE = /^(\d{16})-(\d{16})\.parquet$/;
const SPLIT_DIR = /^(\d{16})-(\d{16})\.parts$/;

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

/** The directory name of a split day holding records first..last. */
export function splitDirName(first: number, last: number): string {
  return archiveFileName(first, last).replace(/\.parquet$/, '.parts');
}

/** The two-hex-digit prefix part `index` of `parts` starts at. */
export function partFrom(index: number, parts: number): string {
  return ((index * 256) / parts).toString(16).padStart(2, '0');
}

/** The part (of `parts`) an event_key falls in. */
export function partIndexOf(key: string, parts: number): number {
  return Math.floor((Number.parseInt(key.slice(0, 2), 16) * parts) / 256);
}

/** A part's key range as SQL over event_key (lowercase hex sorts as text). */
export function partRangeSql(index: number, parts: number): string {
  const from = `event_key >= ${sqlString(partFrom(index, parts))}`;
  return index === parts - 1 ? from : `${from} AND event_key < ${sqlString(partFrom(index + 1, parts))}`;
}

export function partFileName(from: string): string {
  return `part-${from}.parquet`;
}

/** The manifest as written (JSON, one part a line). */
export function manifestText(manifest: SplitManifest): string {
  const { files, ...head } = manifest;
  return `${JSON.stringify(head).slice(0, -1)},"files":[\n${files.map((file) => JSON.stringify(file)).join(',\n')}\n]}\n`;
}

/** sha256 of a file, hex (read in chunks, off the event loop's long turns). */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Reads and checks a split day's manifest (throws with what is wrong). */
export function readManifest(dir: string): SplitManifest {
  const path = join(dir, MANIFEST_NAME);
  let manifest: SplitManifest;
  try {
    manifest = JSON.parse(readFileSync(path, 'utf8')) as SplitManifest;
  } catch (error) {
    throw new Error(`${path} cannot be read: ${(error as Error).message}`);
  }
  const match = SPLIT_DIR.exec(basename(dir));
  const ok =
    manifest !== null &&
    typeof manifest === 'object' &&
    manifest.format === MANIFEST_FORMAT &&
    typeof manifest.layout === 'string' &&
    (SPLIT_COUNTS as readonly number[]).includes(manifest.parts) &&
    Array.isArray(manifest.files) &&
    (match === null || (manifest.first === Number(match[1]) && manifest.last === Number(match[2]))) &&
    manifest.files.every((file, i) => typeof file === 'object' && file !== null && /^[0-9a-f]{2}$/.test(file.from) && partFrom(partIndexOf(file.from, manifest.parts), manifest.parts) === file.from && file.name === partFileName(file.from) && Number.isSafeInteger(file.rows) && file.rows > 0 && Number.isSafeInteger(file.bytes) && (i === 0 || file.from > manifest.files[i - 1].from)) &&
    manifest.rows === manifest.files.reduce((sum, file) => sum + file.rows, 0);
  if (!ok) throw new Error(`${path} is not a split day's manifest for this directory (format ${MANIFEST_FORMAT})`);
  return manifest;
}

/** Manifests read, by directory: installed directories never change, so each is parsed once per version. */
const manifests = new Map<string, { mtimeMs: number; size: number; manifest: SplitManifest }>();

function splitEntry(dir: string, day: string, first: number, last: number): ArchiveFile {
  const stat = statSync(join(dir, MANIFEST_NAME), { throwIfNoEntry: false });
  if (stat === undefined) throw new Error(`${dir} has no ${MANIFEST_NAME}: the split day is damaged (an installed day always has one)`);
  let known = manifests.get(dir);
  if (known === undefined || known.mtimeMs !== stat.mtimeMs || known.size !== stat.size) {
    known = { mtimeMs: stat.mtimeMs, size: stat.size, manifest: readManifest(dir) };
    if (manifests.size > 10_000) manifests.clear();
    manifests.set(dir, known);
  }
  const { manifest } = known;
  return { path: dir, day, first, last, bytes: manifest.files.reduce((sum, file) => sum + file.bytes, 0), mtimeMs: stat.mtimeMs, split: { manifest, paths: manifest.files.map((file) => join(dir, file.name)) } };
}

/**
 * What is wrong with an installed split day, '' when nothing: its manifest readable and
 * each part there with the bytes the manifest lists (sizes only: checking the sha256s
 * reads every byte; `sha256sum` against the manifest does that by hand).
 */
export function checkSplitDay(file: ArchiveFile): string {
  if (file.split === null) return '';
  for (const [i, part] of file.split.manifest.files.entries()) {
    const stat = statSync(file.split.paths[i], { throwIfNoEntry: false });
    if (stat === undefined) return `${file.split.paths[i]} is missing`;
    if (stat.size !== part.bytes) return `${file.split.paths[i]} has ${stat.size} bytes, its manifest says ${part.bytes}`;
  }
  return '';
}

/** The Parquet files an entry reads: its parts (a split day) or itself. */
export function parquetPaths(file: ArchiveFile): readonly string[] {
  return file.split === null ? [file.path] : file.split.paths;
}

/** The Parquet files of an entry that can hold rows with these event_keys (null: any): a split day's parts for them, or the file. */
export function parquetPathsFor(file: ArchiveFile, keys: readonly string[] | null): readonly string[] {
  if (file.split === null) return [file.path];
  if (keys === null) return file.split.paths;
  const { parts, files } = file.split.manifest;
  const wanted = new Set(keys.map((key) => partFrom(partIndexOf(key, parts), parts)));
  return file.split.paths.filter((_, i) => wanted.has(files[i].from));
}

/** The day directories of the archive, oldest first. */
export function listDays(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => isDay(name))
    .sort();
}

/** Files and split days of one day (whole ones only: temporaries are left out), by first seq. */
export function listDayFiles(dir: string, day: string): ArchiveFile[] {
  const dayDir = join(dir, day);
  if (!existsSync(dayDir)) return [];
  const files: ArchiveFile[] = [];
  for (const name of readdirSync(dayDir)) {
    const split = SPLIT_DIR.exec(name);
    if (split !== null) {
      files.push(splitEntry(join(dayDir, name), day, Number(split[1]), Number(split[2])));
      continue;
    }
    const match = FILE.exec(name);
    if (match === null) continue;
    const path = join(dayDir, name);
    const stat = statSync(path);
    files.push({ path, day, first: Number(match[1]), last: Number(match[2]), bytes: stat.size, mtimeMs: stat.mtimeMs, split: null });
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
 * True when `file` is an input of a merge whose output `others` holds: another entry of
 * its day whose range holds its range and is longer, or a split day of the same range
 * (rewritten from this single file). Such a file is left only between a merge's rename
 * and its deletions (a crash, or a deletion that failed): its rows are in the other
 * entry, so reads skip it and the next start or maintenance deletes it.
 */
export function isCovered(file: ArchiveFile, others: readonly ArchiveFile[]): boolean {
  return others.some(
    (other) =>
      other !== file &&
      other.first <= file.first &&
      other.last >= file.last &&
      (other.last - other.first > file.last - file.first || (other.split !== null && file.split === null)),
  );
}

/** The files of one day's listing that are not covered by another (what reads and merges use). */
export function liveFiles(files: readonly ArchiveFile[]): ArchiveFile[] {
  return files.filter((file) => !isCovered(file, files));
}

/**
 * Cleans what a crash can leave: temporaries (files and split directories never
 * renamed, so never counted, and covered split days renamed away to be deleted) and
 * entries a merged one covers (a compaction that stopped before deleting its inputs).
 * Returns what it deleted.
 */
export function tidyArchive(dir: string): string[] {
  const deleted: string[] = [];
  for (const day of listDays(dir)) {
    const dayDir = join(dir, day);
    for (const name of readdirSync(dayDir)) {
      if (name.endsWith('.tmp')) {
        rmSync(join(dayDir, name), { force: true, recursive: true });
        deleted.push(join(dayDir, name));
      }
    }
    const files = listDayFiles(dir, day);
    for (const file of files) {
      if (isCovered(file, files)) {
        rmSync(file.path, { force: true, recursive: true });
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
