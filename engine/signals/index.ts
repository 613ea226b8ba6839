// engine/signals: derived signals (devig, DFS edges, cross-book arbitrage) kept as
// incremental result books. Start at signalBooks.ts for the books, engineSignals.ts
// for how the engine feeds them (engine.subscribe), historicalReplay.ts and
// arbitrageReplay.ts for /historical/* (replay from the price rings).

export { DEVIG_METHODS, devig, devigInto, devigMethodCode, isDevigMethod, type DevigMethod } from './devig.ts';
export { DEVIG_MULTIPLICATIVE, DEVIG_ADDITIVE, DEVIG_POWER, DEVIG_SHIN, DEVIG_WORST } from './devig.ts';
export { SourceTable } from './sourceTable.ts';
export { QuoteBatch } from './quoteBatch.ts';
export { sideCode, SIDE_NAMES, outcomeSetOf } from './sides.ts';
export { marketGroupId, marketGroupIdOf, groupLineOf, groupScopeOf, type GroupKeyInput } from './groupKey.ts';
export { MarketGroups, NONE, type GroupRowInput } from './marketGroups.ts';
export { evaluateArbitrage, arbitrageRecord, ArbitrageScratch } from './arbitrage.ts';
export { breakevenProbability, fairPriceAmerican, edgeRecord } from './edges.ts';
export { RankedSet, MATCH_ALL, type RankCursor, type RankFilter, type RankedPage } from './rankedSet.ts';
export { ArbitrageBook, type ArbitrageQuery } from './arbitrageBook.ts';
export { EdgeBook, type EdgeQuery } from './edgeBook.ts';
export { SignalBooks, type QuoteSource } from './signalBooks.ts';
export { RowQuoteSource } from './rowQuoteSource.ts';
export { bruteForceArbitrage, bruteForceEdges, type OddsRowJson, type BruteForceEdgeOptions } from './bruteForce.ts';
export { evaluateAt, type QuoteAt, type HistoricalArbitrageOptions } from './historical.ts';
export { EngineSignals } from './engineSignals.ts';
export { ArbitrageReplay, type LiveGroups } from './arbitrageReplay.ts';
export {
  entryInForce,
  historicalArbitrage,
  historicalOdds,
  quotesAt,
  type HistoricalArbitrageQuery,
  type HistoricalOdds,
  type HistoricalOddsRow,
} from './historicalReplay.ts';
export {
  DEFAULT_SIGNALS_CONFIG,
  signalsConfig,
  baseLegDecimalOf,
  type SignalsConfig,
  type ArbitrageRecord,
  type ArbitrageLeg,
  type ArbitrageType,
  type EdgeRecord,
} from './records.ts';
