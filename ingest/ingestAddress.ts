// DATA_DIR/ingest-address: where the ingest listener of the server that owns DATA_DIR
// listens (`http://host:port`), written once it takes batches and removed when it
// closes. `npm run feed` with DATA_DIR reads it, so a feed run beside the server posts
// to that very server and no other: not to a default port some other service may hold.
// A listener bound to every interface (0.0.0.0, ::) is written as its loopback address.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const INGEST_ADDRESS_FILE = 'ingest-address';

export function ingestAddressOf(host: string, port: number): string {
  const local = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `http://${local}:${port}`;
}

export function writeIngestAddress(dataDir: string, host: string, port: number): void {
  writeFileSync(join(dataDir, INGEST_ADDRESS_FILE), `${ingestAddressOf(host, port)}\n`);
}

export function removeIngestAddress(dataDir: string): void {
  rmSync(join(dataDir, INGEST_ADDRESS_FILE), { force: true });
}

/** The address a running server wrote, or null when there is no file (no server running on that DATA_DIR). */
export function readIngestAddress(dataDir: string): string | null {
  try {
    const text = readFileSync(join(dataDir, INGEST_ADDRESS_FILE), 'utf8').trim();
    return text === '' ? null : text;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}
