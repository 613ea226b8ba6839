// The typed client of the odds service: see oddsClient.ts (calls, cursor iteration, ETag
// revalidation), streamSync.ts (an in-memory board kept by the push stream, the
// recommended way), boardSync.ts (the same by polling the delta feed) and
// signalStream.ts (the trader screens and steam moves over the signal stream).
export { OddsApiError, OddsClient, type ListPath, type OddsClientOptions, type RowOf, type Schemas } from './oddsClient.ts';
export { BoardSync, REBOOTSTRAP_NOTE, asksRebootstrap, type DeltaRow, type OddsRow, type Snapshot, type SyncOptions, type WalkResult } from './boardSync.ts';
export { StreamSync, type StreamFilter, type StreamSyncOptions, type WebSocketConstructor } from './streamSync.ts';
export { SignalStream, SignalSubscription, type GroupTopic, type SignalRecords, type SignalRequest, type SignalStreamOptions, type SignalTopic, type SteamMove } from './signalStream.ts';
export type { EtagStats } from './etagCache.ts';
export type { components, operations, paths } from './schema.ts';
