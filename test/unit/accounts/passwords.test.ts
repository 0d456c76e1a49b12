import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hashPassword, PasswordHasher, verifyPassword } from '../../../src/accounts/passwords.ts';

describe('password hashing', () => {
  it("hashes at OWASP's scrypt cost (N=2^17, r=8, p=1) unless the gateway was built with another", async () => {
    // Each hash at this cost takes a core about a third of a second; they run side by side on
    // libuv's thread pool, as a server's concurrent sign-ins would.
    const [stored, other] = await Promise.all([new PasswordHasher().hash('correct horse battery staple'), hashPassword('x')]);
    assert.match(stored, /^scrypt\$17\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    assert.match(other, /^scrypt\$17\$/);
    const [right, wrong] = await Promise.all([
      verifyPassword('correct horse battery staple', stored),
      verifyPassword('correct horse battery stapler', stored),
    ]);
    assert.ok(right);
    assert.equal(wrong, false);
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
