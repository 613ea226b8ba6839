// The typed client of the odds service: see oddsClient.ts (calls, cursor iteration, ETag
// revalidation) and boardSync.ts (an in-memory board kept equal to the service's).
export { OddsApiError, OddsClient, type ListPath, type OddsClientOptions, type RowOf, type Schemas } from './oddsClient.ts';
export { BoardSync, type DeltaRow, type OddsRow, type Snapshot, type SyncOptions, type WalkResult } from './boardSync.ts';
export type { EtagStats } from './etagCache.ts';
export type { components, operations, paths } from './schema.ts';
