// Picks the transport at start-up: a native uWebSockets.js binary when one loads here
// (loadUws.ts) and the front can give it connections whole, else node:http.
// TRANSPORT=uws|node forces one; a forced uws that cannot load is a start-up error that
// lists why each binary was passed over.
import { loadUws } from './loadUws.ts';
import { NodeTransport } from './nodeTransport.ts';
import type { Transport, TransportChoice } from './transport.ts';
import { UwsTransport } from './uwsTransport.ts';

/** TRANSPORT from the environment: 'uws', 'node', or unset/'auto'. */
export function transportChoiceFromEnv(env: NodeJS.ProcessEnv = process.env): TransportChoice {
  const value = (env.TRANSPORT ?? '').trim().toLowerCase();
  if (value === '' || value === 'auto') return 'auto';
  if (value === 'uws' || value === 'node') return value;
  throw new Error(`TRANSPORT must be uws or node (or unset to pick automatically), got ${env.TRANSPORT}`);
}

let uwsTransport: UwsTransport | undefined;

/**
 * uwsDirect: uWS is to listen on the port itself (UWS_DIRECT=1). Otherwise, unforced,
 * uWS is picked only where the front can hand it whole connections (socket adoption,
 * uWS 20.4x and later): where it would have to relay every request to uWS, node:http
 * answering on the port itself is faster (docs/http.md has the measurements).
 */
export function selectTransport(choice: TransportChoice, uwsDirect = false): Transport {
  if (choice === 'node') return new NodeTransport('node:http (TRANSPORT=node)');
  const uws = loadUws();
  if (uws.ok) {
    uwsTransport ??= new UwsTransport(uws.uws, uws.description);
    if (choice === 'uws' || uwsDirect) return uwsTransport;
    const adoption = uwsTransport.adoption();
    if (adoption.ok) return uwsTransport;
    return new NodeTransport(`node:http (faster here than relaying to ${uws.description}: ${adoption.reason}; UWS_DIRECT=1 behind a proxy or TRANSPORT=uws selects it)`);
  }
  if (choice === 'uws') {
    throw new Error(`TRANSPORT=uws but no native uWebSockets.js binary loads here (${uws.summary}):\n  ${uws.attempts.join('\n  ')}`);
  }
  return new NodeTransport(`node:http (${uws.summary})`);
}
