// Lets the front (front.ts) give a whole connection to uWebSockets.js, so that uWS
// reads and writes it itself with nothing relayed. Two things are needed that Node
// does not offer:
//   - looking at a connection's first bytes without taking them: recv(2) with
//     MSG_PEEK leaves them in the kernel for whoever reads the socket next;
//   - a descriptor uWS can own: dup(2) of the accepted socket's, so that Node closing
//     its own descriptor afterwards does not close the connection (a socket closes when
//     its last descriptor does; close(2) sends nothing while another is open).
// Both are libc calls, made through koffi (an FFI package shipping prebuilt binaries).
// uWS takes the duplicate with app.adoptSocket(fd), which builds from 20.4x have and
// 20.30 does not; where either part is missing the front relays instead.
import { createRequire } from 'node:module';

const MSG_PEEK = 0x2;
const MSG_DONTWAIT = 0x40;
const EAGAIN = 11;
const EINTR = 4;

/** What a peek found: bytes copied into the buffer (0: the peer closed), nothing yet, or a socket error. */
export type PeekResult = number | 'again' | 'error';

export interface SocketCalls {
  /** Copies up to buf.length waiting bytes of fd into buf without consuming them; never blocks. */
  peek(fd: number, buf: Buffer): PeekResult;
  /** A second descriptor for the same socket, or -1. */
  dup(fd: number): number;
}

export type SocketCallsLoad = { ok: true; calls: SocketCalls } | { ok: false; reason: string };

let loaded: SocketCallsLoad | undefined;

/** Loads once per process; on anything but Linux, or without koffi, says why not. */
export function loadSocketCalls(): SocketCallsLoad {
  loaded ??= load();
  return loaded;
}

interface Koffi {
  load(path: string): { func(signature: string): (...args: unknown[]) => number };
  errno(): number;
}

function load(): SocketCallsLoad {
  if (process.platform !== 'linux') return { ok: false, reason: `peeking at a socket is implemented for Linux only (this is ${process.platform})` };
  let koffi: Koffi;
  try {
    koffi = createRequire(import.meta.url)('koffi') as Koffi;
  } catch (error) {
    return { ok: false, reason: `the koffi package does not load here (${error instanceof Error ? error.message.split('\n')[0] : String(error)})` };
  }
  try {
    const libc = koffi.load('libc.so.6');
    const recv = libc.func('long recv(int fd, _Out_ uint8_t *buf, size_t len, int flags)');
    const dup = libc.func('int dup(int fd)');
    return {
      ok: true,
      calls: {
        peek(fd, buf) {
          for (;;) {
            const n = recv(fd, buf, buf.length, MSG_PEEK | MSG_DONTWAIT);
            if (n >= 0) return n;
            const errno = koffi.errno();
            if (errno === EINTR) continue;
            return errno === EAGAIN ? 'again' : 'error';
          }
        },
        dup: (fd) => dup(fd),
      },
    };
  } catch (error) {
    return { ok: false, reason: `libc's recv and dup cannot be bound (${error instanceof Error ? error.message : String(error)})` };
  }
}
