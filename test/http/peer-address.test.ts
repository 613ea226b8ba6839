// The client's address as per-address limits key it (http/transport/peerAddress.ts):
// every spelling of one address gives one text, whichever transport reported it, and
// the PROXY v2 header the uWS front writes names exactly the client's address.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { canonicalAddress, proxyV2Header } from '../../http/transport/peerAddress.ts';

const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((b) => b.join('.'));
const groups = fc.array(fc.nat(0xffff), { minLength: 8, maxLength: 8 });

describe('peer addresses', () => {
  it('an IPv4 address, plain or mapped into IPv6 in any spelling, is its dotted text', () => {
    fc.assert(
      fc.property(v4, (address) => {
        const [a, b, c, d] = address.split('.').map(Number) as [number, number, number, number];
        const hex = `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
        for (const spelling of [address, `::ffff:${address}`, `::FFFF:${hex}`, `0000:0000:0000:0000:0000:ffff:${hex}`]) {
          assert.equal(canonicalAddress(spelling), address, spelling);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('an IPv6 address uncompressed (as uWS reports it) and compressed (as node:http does) is one text, the URL parser\'s', () => {
    fc.assert(
      fc.property(groups, (g) => {
        const full = g.map((x) => x.toString(16).padStart(4, '0')).join(':');
        const expected = new URL(`http://[${full}]/`).hostname.slice(1, -1);
        const canonical = canonicalAddress(full);
        if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return; // mapped IPv4: the test above
        assert.equal(canonical, expected);
        assert.equal(canonicalAddress(canonical), canonical);
        assert.equal(canonicalAddress(`${canonical}%eth0`), canonical);
      }),
      { numRuns: 500 },
    );
  });

  it('what is not an address is the empty text (not counted)', () => {
    for (const text of ['', undefined, null, 'localhost', '1.2.3', '::g', '1.2.3.4.5']) assert.equal(canonicalAddress(text), '');
  });

  it('the PROXY v2 header carries the client address and port, and LOCAL when it is unknown', () => {
    const tcp4 = proxyV2Header({ remoteAddress: '::ffff:203.0.113.7', remotePort: 40000, localAddress: '127.0.0.1', localPort: 8080 });
    assert.deepEqual([...tcp4.subarray(12, 16)], [0x21, 0x11, 0, 12]);
    assert.deepEqual([...tcp4.subarray(16, 20)], [203, 0, 113, 7]);
    assert.equal(tcp4.readUInt16BE(24), 40000);
    const mixed = proxyV2Header({ remoteAddress: '198.51.100.1', remotePort: 1, localAddress: '::1', localPort: 2 });
    assert.equal(mixed[13], 0x21, 'both ends as IPv6');
    assert.deepEqual([...mixed.subarray(16, 32)], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 51, 100, 1]);
    const local = proxyV2Header({});
    assert.deepEqual([...local.subarray(12)], [0x20, 0, 0, 0]);
  });
});
