// The JetStream settings read from the environment, and opening a writer or a replica
// from them: what the start path calls when LOG=nats (the composition root does not
// call it yet).
//
//   LOG                 'file' (default: the local log in DATA_DIR) or 'nats'
//   ROLE                'writer' (default) or 'replica'
//   NATS_URL            default nats://127.0.0.1:4222
//   NATS_STREAM         default ODDS
//   NATS_BOARD          the board's name in the subjects, default main
//   NATS_MAX_AGE_MS     stream retention by age, default 7 days
//   NATS_MAX_BYTES      stream retention by size, default 8 GiB
//   REPLICA_ID          this node's name in the usage buckets, default the host name
import { hostname } from 'node:os';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Clock } from '../engine/clock.ts';
import type { EngineOptions } from '../engine/engine.ts';
import { NatsBatchLog } from '../persistence/nats/natsBatchLog.ts';
import { NatsCheckpointStore } from '../persistence/nats/natsCheckpoints.ts';
import { openBoardStream } from '../persistence/nats/natsStream.ts';
import type { ColdStore } from './ingest.ts';
import { Replica } from './replica.ts';
import { ReplicaWriter } from './replicaWriter.ts';

export interface NatsSettings {
  role: 'writer' | 'replica';
  url: string;
  stream: string;
  board: string;
  maxAgeMs: number | undefined;
  maxBytes: number | undefined;
  replicaId: string;
}

function positiveInt(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const text = env[name];
  if (text === undefined || text === '') return undefined;
  if (!/^[1-9]\d*$/.test(text) || !Number.isSafeInteger(Number(text))) throw new Error(`${name} must be a positive integer, got ${text}`);
  return Number(text);
}

/** The JetStream settings, or null when LOG is not 'nats'. Throws on a bad value, naming the variable. */
export function natsSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): NatsSettings | null {
  const log = env.LOG === undefined || env.LOG === '' ? 'file' : env.LOG;
  if (log !== 'file' && log !== 'nats') throw new Error(`LOG must be file or nats, got ${log}`);
  const role = env.ROLE === undefined || env.ROLE === '' ? 'writer' : env.ROLE;
  if (role !== 'writer' && role !== 'replica') throw new Error(`ROLE must be writer or replica, got ${role}`);
  if (log === 'file') {
    if (role === 'replica') throw new Error('ROLE=replica needs LOG=nats: a replica follows the writer through the JetStream stream');
    return null;
  }
  const url = env.NATS_URL || 'nats://127.0.0.1:4222';
  if (!/^(nats|tls|wss?):\/\/[^\s]+$/.test(url)) throw new Error(`NATS_URL must be a nats:// address, got ${url}`);
  const replicaId = (env.REPLICA_ID || hostname()).replace(/[^A-Za-z0-9_-]/g, '_');
  return {
    role,
    url,
    stream: env.NATS_STREAM || 'ODDS',
    board: env.NATS_BOARD || 'main',
    maxAgeMs: positiveInt(env, 'NATS_MAX_AGE_MS'),
    maxBytes: positiveInt(env, 'NATS_MAX_BYTES'),
    replicaId,
  };
}

export interface ReplicatedStartOptions {
  dataDir: string;
  clock: Clock;
  cold: ColdStore;
  engineOptions?: EngineOptions;
  fsync?: boolean;
  warn?: (line: string) => void;
}

export type ReplicatedNode =
  | { role: 'writer'; nc: NatsConnection; writer: ReplicaWriter; close(): Promise<void> }
  | { role: 'replica'; nc: NatsConnection; replica: Replica; close(): Promise<void> };

/** Connects and opens the writer (restored, ready to ingest) or the replica (restored and following). */
export async function openReplicatedNode(settings: NatsSettings, options: ReplicatedStartOptions): Promise<ReplicatedNode> {
  const nc = await connect({ servers: settings.url, name: `odds-${settings.role}-${settings.replicaId}` });
  try {
    const streamOptions = { stream: settings.stream, board: settings.board, maxAgeMs: settings.maxAgeMs, maxBytes: settings.maxBytes };
    const checkpoints = await NatsCheckpointStore.open(nc, { stream: settings.stream });
    if (settings.role === 'writer') {
      const log = await NatsBatchLog.open(nc, streamOptions);
      const writer = await ReplicaWriter.open({ ...options, log, checkpoints });
      return {
        role: 'writer',
        nc,
        writer,
        async close() {
          await writer.close();
          await nc.close();
        },
      };
    }
    const board = await openBoardStream(nc, { ...streamOptions, manage: false });
    const replica = await Replica.open({ ...options, board, checkpoints });
    await replica.follow();
    return {
      role: 'replica',
      nc,
      replica,
      async close() {
        await replica.close();
        await nc.close();
      },
    };
  } catch (error) {
    await nc.close();
    throw error;
  }
}
