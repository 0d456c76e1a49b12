import { LRUCache } from 'lru-cache';

/**
 * An LRU cache that is built on its first write. lru-cache lays out every slot up front (for a
 * 50,000-entry cache, about 8 ms of a core and a few hundred kilobytes), which every gateway paid
 * at construction for caches that a given process may never fill: a node that never sends has no
 * use for the receipts' cache, and the test suite builds hundreds of gateways. Reads before the
 * first write find nothing, as an empty cache would say.
 */
export class LazyLru<K extends {}, V extends {}> {
  private cache: LRUCache<K, V> | undefined;

  constructor(private readonly options: LRUCache.Options<K, V, unknown>) {}

  get(key: K): V | undefined {
    return this.cache?.get(key);
  }

  set(key: K, value: V): void {
    this.cache ??= new LRUCache<K, V>(this.options);
    this.cache.set(key, value);
  }

  delete(key: K): void {
    this.cache?.delete(key);
  }

  clear(): void {
    this.cache?.clear();
  }

  *entries(): IterableIterator<[K, V]> {
    if (this.cache !== undefined) yield* this.cache.entries();
  }
}
