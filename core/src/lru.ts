/** A small bounded map that evicts the least recently used entry. */
export class LruCache<K, V> {
  private readonly map = new Map<K, V>();

  /** onEvict runs for every entry dropped by eviction or clear() (e.g. to wipe key material). */
  constructor(readonly max: number, private readonly onEvict?: (value: V) => void) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError('LruCache max must be a positive integer');
  }

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }

  set(key: K, value: V): void {
    const old = this.map.get(key);
    this.map.delete(key);
    this.map.set(key, value);
    if (old !== undefined && old !== value) this.onEvict?.(old);
    if (this.map.size > this.max) {
      const oldest = this.map.keys().next().value as K;
      const v = this.map.get(oldest)!;
      this.map.delete(oldest);
      this.onEvict?.(v);
    }
  }

  clear(): void {
    if (this.onEvict) for (const v of this.map.values()) this.onEvict(v);
    this.map.clear();
  }
}
