/**
 * A short-lived in-process cache that stays coherent across instances: it is only used while
 * the database listener is connected, and every change to the tables behind it sends a
 * notification (migrations 0003, 0004) that clears it on every instance; the instance making a
 * change also clears it itself right away. Used for authenticated callers (keyed by credential
 * hash; unknown credentials are never cached) and for company records.
 */
export interface CoherentCache<T> {
  get(key: string): T | undefined;
  /** Stores a value looked up while `generation` was current; dropped if the cache was cleared since. */
  set(key: string, value: T, generation: number): void;
  readonly generation: number;
  clear(): void;
}

export function createCoherentCache<T>(options: {
  ttlMs: number;
  maxEntries: number;
  isEnabled: () => boolean;
  now?: () => number;
}): CoherentCache<T> {
  const entries = new Map<string, { value: T; expiresAt: number }>();
  const now = options.now ?? Date.now;
  let generation = 0;
  return {
    get(key) {
      if (options.ttlMs <= 0 || !options.isEnabled()) return undefined;
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.expiresAt <= now()) {
        entries.delete(key);
        return undefined;
      }
      return entry.value;
    },
    set(key, value, at) {
      if (at !== generation || options.ttlMs <= 0 || !options.isEnabled()) return;
      if (entries.size >= options.maxEntries) entries.delete(entries.keys().next().value as string);
      entries.set(key, { value, expiresAt: now() + options.ttlMs });
    },
    get generation() {
      return generation;
    },
    clear() {
      generation += 1;
      entries.clear();
    },
  };
}
