// Keyless push-stream connections per client address, one count for every door of the
// push streams (the odds stream's WebSocket and SSE, the signal stream's WebSocket and SSE).
import { HttpError } from '../errors.ts';

/**
 * Open push-stream connections without a key, per client address, WebSocket and SSE
 * together (one instance serves both routes): checked at the WebSocket handshake or the
 * SSE request (past the cap: 429 too_many_connections), counted from open to close.
 * The address is the transport's peer (peerAddress.ts); one the transport cannot know
 * ('') is not counted rather than lumping every such client under one key.
 */
export class AnonymousConnections {
  private readonly open = new Map<string, number>();

  constructor(private readonly max: number) {}

  check(address: string): void {
    if (address === '' || (this.open.get(address) ?? 0) < this.max) return;
    throw new HttpError(
      'too_many_connections',
      `an address holds at most ${this.max} push-stream connections without an API key (STREAM_MAX_ANONYMOUS_CONNECTIONS): close one, or subscribe several filters on one connection, or send a key`,
    );
  }

  /** The address held now, to pass to closed(); null when it is not counted. */
  opened(address: string): string | null {
    if (address === '') return null;
    this.open.set(address, (this.open.get(address) ?? 0) + 1);
    return address;
  }

  closed(address: string): void {
    const left = (this.open.get(address) ?? 1) - 1;
    if (left <= 0) this.open.delete(address);
    else this.open.set(address, left);
  }

  /** opened() for a stream that ends once: the returned release may be called any number of times. */
  hold(address: string): () => void {
    let held = this.opened(address);
    return () => {
      if (held !== null) this.closed(held);
      held = null;
    };
  }
}
