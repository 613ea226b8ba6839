// TRUSTED_PROXIES: behind a reverse proxy every connection comes from the proxy's address, so
// the per-address allowance of anonymous push-stream connections (STREAM_MAX_ANONYMOUS_CONNECTIONS)
// would be shared by all its clients. A request from a trusted proxy counts as the address its
// X-Forwarded-For names (walked from the right past trusted proxies); from anyone else the header
// is ignored, so a client cannot buy itself more places by writing one.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ClientAddresses, parseTrustedProxies } from '../../http/clientAddress.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { eventually } from '../../fixtures/harness/eventually.ts';
import { openSocket, openSse, type Opened } from '../stream/openStreams.ts';

describe('the client address behind trusted proxies', () => {
  const addresses = new ClientAddresses(parseTrustedProxies('127.0.0.1, 10.0.0.0/8, fd00::/8')!);

  it('walks X-Forwarded-For from the right past every trusted proxy to the first untrusted address', () => {
    assert.equal(addresses.resolve('127.0.0.1', '203.0.113.7'), '203.0.113.7');
    assert.equal(addresses.resolve('127.0.0.1', '198.51.100.1, 203.0.113.7, 10.1.2.3'), '203.0.113.7');
    assert.equal(addresses.resolve('127.0.0.1', '203.0.113.7,fd00::5'), '203.0.113.7');
    assert.equal(addresses.resolve('127.0.0.1', '[2001:db8::1]:443'), '2001:db8::1');
    assert.equal(addresses.resolve('127.0.0.1', '203.0.113.7:51234'), '203.0.113.7');
    assert.equal(addresses.resolve('::ffff:127.0.0.1', '::ffff:203.0.113.7'), '203.0.113.7');
  });

  it('ignores the header from an untrusted peer and stops at what is not an address', () => {
    assert.equal(addresses.resolve('198.51.100.9', '203.0.113.7'), '198.51.100.9');
    assert.equal(addresses.resolve('127.0.0.1', ''), '127.0.0.1');
    assert.equal(addresses.resolve('127.0.0.1', 'unknown'), '127.0.0.1');
    assert.equal(addresses.resolve('127.0.0.1', '203.0.113.7, 10.0.0.1, garbage'), '127.0.0.1');
    // every entry trusted: the leftmost one the walk reached is all there is to go on
    assert.equal(addresses.resolve('127.0.0.1', '10.0.0.2, 10.0.0.1'), '10.0.0.2');
    assert.equal(new ClientAddresses([]).resolve('127.0.0.1', '203.0.113.7'), '127.0.0.1');
  });

  it('TRUSTED_PROXIES accepts addresses and CIDR blocks and refuses anything else', () => {
    assert.deepEqual(parseTrustedProxies(''), []);
    assert.deepEqual(parseTrustedProxies(' 127.0.0.1 , ::1,10.0.0.0/8 '), ['127.0.0.1', '::1', '10.0.0.0/8']);
    for (const bad of ['localhost', '10.0.0.0/33', 'fd00::/129', '10.0.0.0/x', '1.2.3', '10.0.0.0/']) {
      assert.equal(parseTrustedProxies(bad), null, bad);
    }
  });
});

describe('per-address stream limits behind a trusted proxy', () => {
  let trusting: TestApp;
  let plain: TestApp;
  before(async () => {
    const env = { STREAM_MAX_ANONYMOUS_CONNECTIONS: '2' };
    trusting = await startTestApp({ size: 'small', env: { ...env, TRUSTED_PROXIES: '127.0.0.1' } });
    plain = await startTestApp({ size: 'small', env });
  });
  after(async () => {
    await trusting.close();
    await plain.close();
  });

  const forwarded = (address: string): Record<string, string> => ({ 'X-Forwarded-For': address });

  it('from the trusted proxy, each forwarded client has its own allowance, WebSocket and SSE counted together', async () => {
    const open: Opened[] = [];
    try {
      for (const client of ['203.0.113.7', '203.0.113.8']) {
        open.push(await openSse(trusting.port, '127.0.0.1', undefined, forwarded(client)));
        open.push(await openSocket(trusting.port, '127.0.0.1', forwarded(client)));
      }
      assert.deepEqual(open.map((o) => o.status), [200, 101, 200, 101]);
      const third = await openSse(trusting.port, '127.0.0.1', undefined, forwarded('203.0.113.7'));
      const thirdSocket = await openSocket(trusting.port, '127.0.0.1', forwarded('203.0.113.8'));
      assert.equal(third.status, 429, third.body);
      assert.equal(thirdSocket.status, 429, thirdSocket.body);
      assert.equal(JSON.parse(third.body).code, 'too_many_connections');
      // a client writing its own X-Forwarded-For from an untrusted address is counted as itself
      const spoofA = await openSse(trusting.port, '127.0.0.2', undefined, forwarded('198.51.100.1'));
      const spoofB = await openSocket(trusting.port, '127.0.0.2', forwarded('198.51.100.2'));
      open.push(spoofA, spoofB);
      assert.deepEqual([spoofA.status, spoofB.status], [200, 101]);
      const spoofC = await openSse(trusting.port, '127.0.0.2', undefined, forwarded('198.51.100.3'));
      assert.equal(spoofC.status, 429, spoofC.body);
    } finally {
      for (const o of open) o.close();
    }
  });

  it('without TRUSTED_PROXIES the header changes nothing: the TCP peer is the client', async () => {
    assert.ok(await eventually(() => plain.app.stream.stats().clients === 0, 10_000));
    const open: Opened[] = [];
    try {
      open.push(await openSse(plain.port, '127.0.0.1', undefined, forwarded('203.0.113.7')));
      open.push(await openSocket(plain.port, '127.0.0.1', forwarded('203.0.113.8')));
      assert.deepEqual(open.map((o) => o.status), [200, 101]);
      const third = await openSse(plain.port, '127.0.0.1', undefined, forwarded('203.0.113.9'));
      assert.equal(third.status, 429, third.body);
    } finally {
      for (const o of open) o.close();
    }
  });
});
