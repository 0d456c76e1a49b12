import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addressKey } from '../../src/accounts/sign-in-throttle.ts';

describe('sign-in throttle address keys', () => {
  it('counts an IPv4 address on its own, also when it arrives IPv4-mapped', () => {
    assert.equal(addressKey('203.0.113.7'), 'ip:203.0.113.7');
    assert.equal(addressKey('::ffff:203.0.113.7'), 'ip:203.0.113.7');
    assert.notEqual(addressKey('203.0.113.7'), addressKey('203.0.113.8'));
  });

  it('counts a whole IPv6 /64 as one client, so rotating addresses inside it gains nothing', () => {
    assert.equal(addressKey('2001:db8:1:2::1'), addressKey('2001:db8:1:2:ffff:ffff:ffff:fffe'));
    assert.equal(addressKey('2001:db8:1:2::1'), 'ip:2001:db8:1:2::/64');
    assert.notEqual(addressKey('2001:db8:1:2::1'), addressKey('2001:db8:1:3::1'));
  });
});
