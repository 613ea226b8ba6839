// Checkpoints in a JetStream object store, so a machine with an empty disk can start
// from the newest one instead of replaying the whole stream (which retention may have
// cut anyway). Objects are named like the local files (checkpoint-<index, 16 digits>)
// and carry in their metadata the log index they cover, the stream sequence of that
// record's commit (where a reader resumes) and the body's CRC-32. The store keeps the
// newest `keep` (default 2): the one before the newest stays while readers may be
// downloading it.
//
// Beside them one object, start-board, records what the writer loaded when the log
// began (the fixture board's size, seed and NOW, or size 'none'): the cold data of that
// board (events, teams, players...) is not in the stream, so a node with a new SQLite
// file generates the same board from it rather than from its own settings and clock.
//
// Next to each local checkpoint file the stream position goes in a small JSON file
// (stream-position.json): the local checkpoint format knows only the log index.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { StorageType } from '@nats-io/jetstream';
import { Objm, type ObjectStore } from '@nats-io/obj';
import { checkpointName } from '../log/checkpointFiles.ts';
import { crc32 } from '../log/crc32.ts';

export interface StoredCheckpoint {
  name: string;
  logIndex: number;
  /** Stream sequence of the commit of record logIndex (0 when the log was empty). */
  streamSeq: number;
}

/** What the writer loaded when the log began. */
export interface StartBoardRecord {
  size: string;
  seed: number;
  now: number;
}

const START_BOARD = 'start-board';

export class NatsCheckpointStore {
  private constructor(
    private readonly store: ObjectStore,
    private readonly keep: number,
  ) {}

  /** Opens (creating) the bucket; default name <stream>_CHECKPOINTS. */
  static async open(nc: NatsConnection, options: { bucket?: string; stream?: string; keep?: number } = {}): Promise<NatsCheckpointStore> {
    const bucket = options.bucket ?? `${options.stream ?? 'ODDS'}_CHECKPOINTS`;
    const store = await new Objm(nc).create(bucket, { storage: StorageType.File });
    return new NatsCheckpointStore(store, options.keep ?? 2);
  }

  async put(logIndex: number, streamSeq: number, body: Uint8Array): Promise<StoredCheckpoint> {
    const name = checkpointName(logIndex);
    await this.store.putBlob({ name, metadata: { logIndex: String(logIndex), streamSeq: String(streamSeq), crc: String(crc32(body) >>> 0) } }, body);
    const all = await this.list();
    for (const old of all.slice(this.keep)) await this.store.delete(old.name);
    return { name, logIndex, streamSeq };
  }

  /** Stored checkpoints, newest first. */
  async list(): Promise<StoredCheckpoint[]> {
    const infos = await this.store.list();
    const out: StoredCheckpoint[] = [];
    for (const info of infos) {
      if (info.deleted) continue;
      const logIndex = Number(info.metadata?.logIndex);
      const streamSeq = Number(info.metadata?.streamSeq);
      if (Number.isSafeInteger(logIndex) && Number.isSafeInteger(streamSeq)) out.push({ name: info.name, logIndex, streamSeq });
    }
    return out.sort((a, b) => b.logIndex - a.logIndex);
  }

  /** Records the board the log began with (the writer, once, when it loads it). */
  async putStartBoard(record: StartBoardRecord): Promise<void> {
    await this.store.putBlob({ name: START_BOARD }, new TextEncoder().encode(JSON.stringify(record)));
  }

  /** The board the log began with, or null when no writer recorded one. */
  async startBoard(): Promise<StartBoardRecord | null> {
    const body = await this.store.getBlob(START_BOARD);
    if (body === null) return null;
    const record = JSON.parse(new TextDecoder().decode(body)) as Partial<StartBoardRecord>;
    if (typeof record.size !== 'string' || typeof record.seed !== 'number' || typeof record.now !== 'number') throw new Error('the start-board record in the object store is malformed');
    return { size: record.size, seed: record.seed, now: record.now };
  }

  async newest(): Promise<StoredCheckpoint | null> {
    return (await this.list())[0] ?? null;
  }

  /** The body of a stored checkpoint, CRC checked. */
  async read(checkpoint: StoredCheckpoint): Promise<Uint8Array> {
    const info = await this.store.info(checkpoint.name);
    const body = await this.store.getBlob(checkpoint.name);
    if (info === null || body === null) throw new Error(`checkpoint ${checkpoint.name} is no longer in the object store`);
    if (String(crc32(body) >>> 0) !== info.metadata?.crc) throw new Error(`checkpoint ${checkpoint.name} in the object store fails its CRC check`);
    return body;
  }
}

const POSITION_FILE = 'stream-position.json';

/** Records that the local checkpoint of `logIndex` resumes the stream after `streamSeq`. */
export function writeStreamPosition(dataDir: string, logIndex: number, streamSeq: number): void {
  const path = join(dataDir, POSITION_FILE);
  writeFileSync(`${path}.tmp`, JSON.stringify({ logIndex, streamSeq }));
  renameSync(`${path}.tmp`, path);
}

/** The stream sequence recorded for the local checkpoint of `logIndex`, or null when none (or another index) is recorded. */
export function readStreamPosition(dataDir: string, logIndex: number): number | null {
  try {
    const saved = JSON.parse(readFileSync(join(dataDir, POSITION_FILE), 'utf8')) as { logIndex?: unknown; streamSeq?: unknown };
    return saved.logIndex === logIndex && typeof saved.streamSeq === 'number' ? saved.streamSeq : null;
  } catch {
    return null;
  }
}
