// The JetStream settings from the environment (defaults, and every bad value refused
// naming its variable) and opening a writer and a replica from them on a real
// nats-server: a replica before any writer is refused, a replica after it follows.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../engine/clock.ts';
import { loadBoard } from '../../engine/loadBoard.ts';
import { openReplicatedNode, type ReplicatedNode } from '../../ingest/replicaStart.ts';
import { natsSettingsFromEnv } from '../../service/replicatedStart.ts';
import { NOW, testBoard } from '../helpers/app.ts';
import { startNatsServer, type NatsTestServer } from '../../fixtures/harness/natsServer.ts';
import { openCold, randomBatch, seededRandom, tempDir } from './replica-helpers.ts';

describe('JetStream settings from the environment', () => {
  it('LOG unset or file: no JetStream; LOG=nats: the defaults', () => {
    assert.equal(natsSettingsFromEnv({}), null);
    assert.equal(natsSettingsFromEnv({ LOG: 'file' }), null);
    const settings = natsSettingsFromEnv({ LOG: 'nats', REPLICA_ID: 'r.1' });
    assert.deepEqual(settings, { role: 'writer', url: 'nats://127.0.0.1:4222', stream: 'ODDS', board: 'main', maxAgeMs: undefined, maxBytes: undefined, replicaId: 'r_1' });
    assert.equal(natsSettingsFromEnv({ LOG: 'nats', ROLE: 'replica', NATS_MAX_AGE_MS: '60000' })?.maxAgeMs, 60_000);
  });

  it('a bad value is refused, naming the variable', () => {
    assert.throws(() => natsSettingsFromEnv({ LOG: 'kafka' }), /LOG="kafka" is not allowed/);
    assert.throws(() => natsSettingsFromEnv({ LOG: 'nats', ROLE: 'reader' }), /ROLE="reader" is not allowed/);
    assert.throws(() => natsSettingsFromEnv({ ROLE: 'replica' }), /replica needs LOG=nats/);
    assert.throws(() => natsSettingsFromEnv({ LOG: 'nats', NATS_URL: 'http://x' }), /NATS_URL/);
    assert.throws(() => natsSettingsFromEnv({ LOG: 'nats', NATS_MAX_BYTES: '-5' }), /NATS_MAX_BYTES/);
    assert.throws(() => natsSettingsFromEnv({ LOG: 'nats', NATS_MAX_AGE_MS: '1h' }), /NATS_MAX_AGE_MS/);
  });
});

describe('opening a writer and a replica from the settings', () => {
  const clock = new ManualClock(NOW);
  const board = testBoard('small');
  const dirs = [tempDir('start-writer-'), tempDir('start-replica-')];
  const colds = dirs.map((dir) => openCold(dir, board, clock));
  let nats: NatsTestServer;
  const nodes: ReplicatedNode[] = [];

  before(async () => {
    nats = await startNatsServer();
  });
  after(async () => {
    for (const node of nodes) await node.close();
    for (const cold of colds) cold.close();
    await nats?.dispose();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('a replica before any writer is refused; after the writer it restores and follows', async () => {
    const replicaSettings = natsSettingsFromEnv({ LOG: 'nats', ROLE: 'replica', NATS_URL: nats.url, REPLICA_ID: 'r1' })!;
    const options = (i: number) => ({ dataDir: dirs[i], clock, cold: colds[i], fsync: false, warn: () => {} });
    await assert.rejects(openReplicatedNode(replicaSettings, options(1)), /does not exist yet: start the writer first/);

    const writerNode = await openReplicatedNode(natsSettingsFromEnv({ LOG: 'nats', NATS_URL: nats.url })!, options(0));
    nodes.push(writerNode);
    assert.equal(writerNode.role, 'writer');
    if (writerNode.role !== 'writer') return;
    assert.equal(writerNode.writer.fresh, true);
    loadBoard(writerNode.writer.engine, board);
    await writerNode.writer.checkpointNow();

    const replicaNode = await openReplicatedNode(replicaSettings, options(1));
    nodes.push(replicaNode);
    assert.equal(replicaNode.role, 'replica');
    if (replicaNode.role !== 'replica') return;
    const random = seededRandom(7);
    const result = await writerNode.writer.ingest.submit(randomBatch(writerNode.writer.engine, random, 10));
    assert.ok(await replicaNode.replica.caughtUpTo(result.index));
    assert.equal(replicaNode.replica.engine.seq, writerNode.writer.engine.seq);
    assert.equal(await replicaNode.replica.measureLag(), 0);
  });
});
