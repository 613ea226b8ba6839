// Webhook signatures, like Stripe's: the header
//   Odds-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
// signed at each attempt (t is the send time). A receiver recomputes the HMAC over the
// raw bytes it received, compares in constant time, and refuses a t too far from its
// own clock (a captured request cannot be replayed later). verifySignature is what the
// docs' snippet does; the tests' receivers use it.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'Odds-Signature';
/** How far a signature's t may be from the receiver's clock by default (Stripe's tolerance). */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** body: the raw bytes, or the pieces that are sent one after another as the body. */
export function signatureHeader(secret: string, body: Buffer | string | readonly Buffer[], unixSeconds: number): string {
  return `t=${unixSeconds},v1=${hmacHex(secret, unixSeconds, body)}`;
}

function hmacHex(secret: string, t: number, body: Buffer | string | readonly Buffer[]): string {
  const hmac = createHmac('sha256', secret).update(`${t}.`);
  if (Array.isArray(body)) for (const piece of body as readonly Buffer[]) hmac.update(piece);
  else hmac.update(body as Buffer | string);
  return hmac.digest('hex');
}

/** A new secret: 32 random bytes, base64url, with a prefix that says what it is. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/**
 * Whether `header` signs `body` with `secret` and its t is within toleranceSeconds of
 * nowSeconds. Several v1 entries are accepted (one per secret while a secret rotates).
 */
export function verifySignature(secret: string, body: Buffer | string, header: string, nowSeconds: number, toleranceSeconds = DEFAULT_TOLERANCE_SECONDS): boolean {
  let t = NaN;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't' && /^\d+$/.test(value)) t = Number(value);
    else if (key === 'v1') signatures.push(value);
  }
  if (!Number.isFinite(t) || Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const expected = Buffer.from(hmacHex(secret, t, body), 'hex');
  return signatures.some((s) => {
    const given = Buffer.from(s, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
