import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { API_KEY_PATTERN, apiKeyHint, generateApiKey, hashApiKey } from '../../../src/domain/api-key.ts';

const HEX_64 = 'a'.repeat(32) + '0123456789abcdef'.repeat(2);

describe('generated API keys', () => {
  it('have the documented shape <prefix>_live_sk_<64 lowercase hex>', () => {
    const key = generateApiKey('wagw');
    assert.match(key.plaintext, /^wagw_live_sk_[0-9a-f]{64}$/);
    assert.match(key.plaintext, API_KEY_PATTERN);
  });

  it('are never repeated across a thousand generations', () => {
    const keys = new Set<string>();
    const hashes = new Set<string>();
    for (let index = 0; index < 1000; index++) {
      const key = generateApiKey('wagw');
      keys.add(key.plaintext);
      hashes.add(key.hash);
    }
    assert.equal(keys.size, 1000);
    assert.equal(hashes.size, 1000);
  });

  it('are stored as the SHA-256 hex of the plaintext, never the plaintext itself', () => {
    const key = generateApiKey('wagw');
    const expected = createHash('sha256').update(key.plaintext, 'utf8').digest('hex');
    assert.equal(key.hash, expected);
    assert.equal(hashApiKey(key.plaintext), expected);
    assert.match(key.hash, /^[0-9a-f]{64}$/);
    assert.ok(!key.hash.includes(key.plaintext.slice(-64)), 'the hash does not contain the secret');
  });

  it('are hinted as "<prefix>_live_sk_…" and the last four characters only', () => {
    const key = generateApiKey('wagw');
    assert.equal(key.hint, `wagw_live_sk_…${key.plaintext.slice(-4)}`);
    assert.equal(apiKeyHint(`wagw_live_sk_${HEX_64}`), 'wagw_live_sk_…cdef');
  });

  it('the hint reveals at most four characters of the secret', () => {
    const key = generateApiKey('wagw');
    const secret = key.plaintext.slice('wagw_live_sk_'.length);
    const revealed = key.hint.slice('wagw_live_sk_…'.length);
    assert.equal(revealed.length, 4);
    assert.ok(!key.hint.includes(secret.slice(0, 5)));
  });

  it('take a custom prefix, and keys of every allowed prefix have the accepted shape', () => {
    const key = generateApiKey('acme2');
    assert.match(key.plaintext, /^acme2_live_sk_[0-9a-f]{64}$/);
    assert.match(key.plaintext, API_KEY_PATTERN);
    assert.equal(key.hint, `acme2_live_sk_…${key.plaintext.slice(-4)}`);
  });
});

describe('the key pattern refuses anything but the exact shape', () => {
  const pattern = API_KEY_PATTERN;

  it('accepts a well-formed key', () => {
    assert.match(`wagw_live_sk_${HEX_64}`, pattern);
  });

  const refused: [string, string][] = [
    ['uppercase hex', `wagw_live_sk_${HEX_64.toUpperCase()}`],
    ['one uppercase hex digit', `wagw_live_sk_${HEX_64.slice(0, 63)}F`],
    ['a prefix with an uppercase letter', `Wagw_live_sk_${HEX_64}`],
    ['a prefix starting with a digit', `1wagw_live_sk_${HEX_64}`],
    ['a prefix of 17 characters', `abcdefghijklmnopq_live_sk_${HEX_64}`],
    ['a prefix with punctuation', `a.b_live_sk_${HEX_64}`],
    ['a test-mode marker', `wagw_test_sk_${HEX_64}`],
    ['63 hex digits', `wagw_live_sk_${HEX_64.slice(1)}`],
    ['65 hex digits', `wagw_live_sk_${HEX_64}0`],
    ['a non-hex letter', `wagw_live_sk_${HEX_64.slice(0, 63)}g`],
    ['a trailing newline', `wagw_live_sk_${HEX_64}\n`],
    ['leading whitespace', ` wagw_live_sk_${HEX_64}`],
    ['the empty string', ''],
  ];
  for (const [what, candidate] of refused) {
    it(`refuses ${what}`, () => {
      assert.doesNotMatch(candidate, pattern);
    });
  }
});
