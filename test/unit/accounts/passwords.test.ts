import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hashPassword, PasswordHasher, verifyPassword } from '../../../src/accounts/passwords.ts';

describe('password hashing', () => {
  it("hashes at OWASP's scrypt cost (N=2^17, r=8, p=1) unless the gateway was built with another", async () => {
    const stored = await new PasswordHasher().hash('correct horse battery staple');
    assert.match(stored, /^scrypt\$17\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    assert.match(await hashPassword('x'), /^scrypt\$17\$/);
    assert.ok(await verifyPassword('correct horse battery staple', stored));
    assert.equal(await verifyPassword('correct horse battery stapler', stored), false);
  });

  it('a cheaper hasher names its cost in the hash, and any hasher verifies it by the cost it names', async () => {
    const cheap = new PasswordHasher(10);
    const stored = await cheap.hash('pässword');
    assert.match(stored, /^scrypt\$10\$8\$1\$/);
    assert.ok(await new PasswordHasher().verify('pässword', stored));
    // The same text in another Unicode form is the same password.
    assert.ok(await cheap.verify('pa\u0308ssword', stored));
  });

  it("checks an unknown email against a decoy at the hasher's own cost, made once", async () => {
    const hasher = new PasswordHasher(10);
    const decoy = await hasher.decoy();
    assert.match(decoy, /^scrypt\$10\$/);
    assert.equal(await hasher.decoy(), decoy);
    assert.equal(await hasher.verify('anything', decoy), false);
  });
});
