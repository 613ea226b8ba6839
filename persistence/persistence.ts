// One handle on everything persistence/ offers, opened once by the server: the
// database, the repositories, the data versions the response cache reads, API keys,
// usage metering and the key check built from them.

import type { Board } from '../engine/model.ts';
import { ApiKeys } from './apiKeys.ts';
import { ColdWrites, type ColdRecordChange } from './coldWrites.ts';
import { dbPathFromEnv, openDatabase, type Db } from './database.ts';
import { DATA_SETS, DataVersions, type DataSet } from './dataVersion.ts';
import { EventsRepository, type EventStatusChange } from './eventsRepository.ts';
import { KeyChecker } from './keyCheck.ts';
import { loadCold, loadedAt, type LoadColdOptions, type LoadColdResult } from './loadCold.ts';
import { PlayersRepository } from './playersRepository.ts';
import { SeasonsRepository } from './seasonsRepository.ts';
import { StatsRepository } from './statsRepository.ts';
import { TeamsRepository } from './teamsRepository.ts';
import { UsageMeter } from './usageMeter.ts';

export interface OpenPersistenceOptions {
  /** Database file; default DB_PATH, else ./data/odds.db. */
  path?: string;
  /** Where DB_PATH and RATE_LIMIT_ENFORCE are read; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Override RATE_LIMIT_ENFORCE=1. */
  enforce?: boolean;
  /** Usage flush period in ms (default 5000; 0 = only on flush()/close()). */
  flushIntervalMs?: number;
}

export class Persistence {
  readonly events: EventsRepository;
  readonly teams: TeamsRepository;
  readonly players: PlayersRepository;
  readonly stats: StatsRepository;
  readonly seasons: SeasonsRepository;
  readonly apiKeys: ApiKeys;
  readonly usage: UsageMeter;
  /** Whether a presented API key is live, counting the request against it. */
  readonly keyChecker: KeyChecker;
  /** Upserts from the write path, and the look-ups its validator makes. */
  readonly coldWrites: ColdWrites;
  private readonly versions: DataVersions;

  constructor(
    readonly db: Db,
    options: { enforce: boolean; flushIntervalMs?: number },
  ) {
    this.versions = new DataVersions(loadedAt(db) ?? 0);
    this.events = new EventsRepository(db, this.versions);
    this.teams = new TeamsRepository(db);
    this.players = new PlayersRepository(db);
    this.stats = new StatsRepository(db);
    this.seasons = new SeasonsRepository(db);
    this.apiKeys = new ApiKeys(db);
    this.usage = new UsageMeter(db, { enforce: options.enforce, flushIntervalMs: options.flushIntervalMs });
    this.keyChecker = new KeyChecker(this.apiKeys, this.usage);
    this.coldWrites = new ColdWrites(db);
  }

  /** Cold records from the write path, in one transaction; the caches of what they touched move. */
  applyColdChanges(changes: readonly ColdRecordChange[], now: number): void {
    if (changes.length === 0) return;
    this.versions.bump(this.coldWrites.apply(changes), now);
  }

  /** Loads the board's cold data unless this database already holds it (see loadCold.ts). */
  loadCold(board: Board, options?: LoadColdOptions): LoadColdResult {
    const result = loadCold(this.db, board, options);
    if (result.loaded) this.versions.bump(DATA_SETS, board.options.now);
    else if (result.reconciled > 0) this.versions.bump(['events'], board.options.now);
    return result;
  }

  /** The engine's event status / live-market changes, written in one transaction. */
  updateEventStatuses(changes: readonly EventStatusChange[], now: number): number {
    return this.events.updateStatuses(changes, now);
  }

  /** Moves whenever the data behind a repository changes; per data set, or overall without one. */
  version(set?: DataSet): number {
    return this.versions.version(set);
  }

  /** Epoch ms of a data set's last change (meta.updated for lists whose rows carry no time). */
  changedAt(set: DataSet): number {
    return this.versions.changedAt(set);
  }

  /** Flushes usage counts, then closes the database. */
  close(): void {
    this.usage.close();
    this.db.close();
  }
}

export function openPersistence(options: OpenPersistenceOptions = {}): Persistence {
  const env = options.env ?? process.env;
  const db = openDatabase(options.path ?? dbPathFromEnv(env));
  return new Persistence(db, {
    enforce: options.enforce ?? env.RATE_LIMIT_ENFORCE === '1',
    flushIntervalMs: options.flushIntervalMs,
  });
}
