// Snapshot scenarios for the HTTP bench: a dashboard polling an unchanged
// board with If-None-Match, for both variants, against a uWS hello world (target: 80%
// or more). Full-body throughput (MB/s) is measured in bench/snapshot.bench.ts with 1
// and 8 connections: a prebuilt-Buffer ceiling for a body of tens of MB would make uWS
// buffer a copy per connection, which is what the route is built to avoid.
import type { App } from '../../service/app.ts';
import type { Scenario } from './scenario.ts';

export function scenarios(_app: App): Scenario[] {
  return [
    { name: 'snapshot 304', path: '/api/v1/snapshot', ifNoneMatch: true, reference: 'hello' },
    { name: 'snapshot include_history 304', path: '/api/v1/snapshot?include_history=true', ifNoneMatch: true, reference: 'hello' },
  ];
}
