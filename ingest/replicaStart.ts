// Opening a writer or a replica of a board whose log is a JetStream stream, from its
// settings (service/config.ts reads them: LOG, ROLE, NATS_URL, NATS_STREAM, NATS_BOARD,
// NATS_MAX_AGE_MS, NATS_MAX_BYTES, REPLICA_ID): what the start path calls when LOG=nats.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Clock } from '../engine/clock.ts';
import type { EngineOptions, OddsEngine } from '../engine/engine.ts';
import { NatsBatchLog } from '../persistence/nats/natsBatchLog.ts';
import { NatsCheckpointStore } from '../persistence/nats/natsCheckpoints.ts';
import { natsConnectOptions } from '../persistence/nats/natsUrl.ts';
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

export interface ReplicatedStartOptions {
  dataDir: string;
  clock: Clock;
  cold: ColdStore;
  engineOptions?: EngineOptions;
  fsync?: boolean;
  warn?: (line: string) => void;
  /**
   * Called with the engine once it holds a restored board (a checkpoint, or a log to
   * replay onto an empty one), before the log after it replays: what follows the engine
   * and keeps state the board does not determine (the steam detector) subscribes here,
   * so it sees every replayed batch as the writer did. Not called for a fresh start
   * (nothing restored: the caller builds such listeners once the board is loaded).
   */
  restored?: (engine: OddsEngine) => void;
}

export type ReplicatedNode =
  | { role: 'writer'; nc: NatsConnection; checkpoints: NatsCheckpointStore; writer: ReplicaWriter; close(): Promise<void> }
  | { role: 'replica'; nc: NatsConnection; checkpoints: NatsCheckpointStore; replica: Replica; close(): Promise<void> };

/** Connects and opens the writer (restored, ready to ingest) or the replica (restored and following). */
export async function openReplicatedNode(settings: NatsSettings, options: ReplicatedStartOptions): Promise<ReplicatedNode> {
  const nc = await connect({ ...natsConnectOptions(settings.url), name: `odds-${settings.role}-${settings.replicaId}` });
  try {
    const streamOptions = { stream: settings.stream, board: settings.board, maxAgeMs: settings.maxAgeMs, maxBytes: settings.maxBytes };
    const checkpoints = await NatsCheckpointStore.open(nc, { stream: settings.stream });
    if (settings.role === 'writer') {
      const log = await NatsBatchLog.open(nc, streamOptions);
      const writer = await ReplicaWriter.open({ ...options, log, checkpoints });
      return {
        role: 'writer',
        nc,
        checkpoints,
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
      checkpoints,
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
