import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LazyLru } from '../../../src/domain/lazy-lru.ts';

describe('a cache built on its first write', () => {
  it('answers as an empty cache until written, then as the LRU cache it builds', () => {
    const cache = new LazyLru<string, number>({ max: 2 });
    assert.equal(cache.get('a'), undefined);
    cache.delete('a');
    cache.clear();
    assert.deepEqual([...cache.entries()], []);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);
    assert.equal(cache.get('a'), undefined, 'the least recently used entry left at the bound');
    assert.deepEqual(
      new Map(cache.entries()),
      new Map([
        ['b', 2],
        ['c', 3],
      ]),
    );
    cache.delete('b');
    assert.equal(cache.get('b'), undefined);
    cache.clear();
    assert.equal(cache.get('c'), undefined);
  });

  it('keeps the options it was given, such as a time to live', async () => {
    const cache = new LazyLru<string, number>({ max: 10, ttl: 20 });
    cache.set('a', 1);
    assert.equal(cache.get('a'), 1);
    await new Promise((resolve) => setTimeout(resolve, 40));
    assert.equal(cache.get('a'), undefined, 'expired after its time to live');
  });
});
