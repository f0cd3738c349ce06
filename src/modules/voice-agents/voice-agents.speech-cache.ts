/**
 * The cache of finished syntheses (DESIGN §9, speech): an engine whose output is a pure function
 * of its input (the offline espeak-ng engine resets its state before every sentence) gives the
 * same bytes for the same (text, voice, settings, format), so a repeated request — a greeting, a
 * sentence every answer ends with, a client that asks again — is answered from memory. Each
 * company has its own partition, bounded in bytes (least recently used out first), and the
 * partitions are bounded in number, so the whole is bounded by SPEECH_CACHE_BYTES; a hit never
 * crosses companies since the partition is chosen by the caller's company before any key is read.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';

export interface SpeechCacheOptions {
  /** All partitions together; 0 turns the cache off. */
  maxBytes: number;
  /** One company's partition. */
  companyBytes: number;
}

export interface SpeechCache {
  /** A finished synthesis, as the chunks it was served in (complete files when it was sent as such). */
  get(companyId: string, key: string): readonly Buffer[] | undefined;
  /** Keeps a finished synthesis (one larger than a quarter of a partition is not kept). */
  set(companyId: string, key: string, parts: readonly Buffer[]): void;
  /** The largest body kept: a synthesis past it stops being collected for the cache. */
  readonly maxEntryBytes: number;
  stats(): { companies: number; entries: number; bytes: number };
}

/** The key of a synthesis: a digest of every input that shapes the bytes, in a fixed order. */
export function speechCacheKey(input: {
  engine: string;
  voiceId: string;
  offlineVoice: string | undefined;
  format: string;
  text: string;
  modelId: string | undefined;
  languageCode: string | undefined;
  speed: number | undefined;
  stability: number | undefined;
  similarityBoost: number | undefined;
  style: number | undefined;
}): string {
  const fields = [
    input.engine,
    input.voiceId,
    input.offlineVoice ?? null,
    input.format,
    input.modelId ?? null,
    input.languageCode ?? null,
    input.speed ?? null,
    input.stability ?? null,
    input.similarityBoost ?? null,
    input.style ?? null,
    input.text,
  ];
  return createHash('sha256').update(JSON.stringify(fields)).digest('base64url');
}

const bytesOf = (parts: readonly Buffer[]) => parts.reduce((sum, part) => sum + part.length, 0);

export function createSpeechCache(options: SpeechCacheOptions): SpeechCache | null {
  if (options.maxBytes <= 0 || options.companyBytes <= 0) return null;
  const companyBytes = Math.min(options.companyBytes, options.maxBytes);
  const maxEntryBytes = Math.max(1, Math.floor(companyBytes / 4));
  const partitions = new LRUCache<string, LRUCache<string, readonly Buffer[]>>({
    max: Math.max(1, Math.floor(options.maxBytes / companyBytes)),
  });
  const partition = (companyId: string) => {
    let found = partitions.get(companyId);
    if (!found) {
      found = new LRUCache<string, readonly Buffer[]>({
        maxSize: companyBytes,
        maxEntrySize: maxEntryBytes,
        sizeCalculation: (parts) => Math.max(1, bytesOf(parts)),
      });
      partitions.set(companyId, found);
    }
    return found;
  };
  return {
    maxEntryBytes,
    get: (companyId, key) => partitions.get(companyId)?.get(key),
    set(companyId, key, parts) {
      const size = bytesOf(parts);
      if (size > 0 && size <= maxEntryBytes) partition(companyId).set(key, parts);
    },
    stats() {
      let entries = 0;
      let bytes = 0;
      for (const cache of partitions.values()) {
        entries += cache.size;
        bytes += cache.calculatedSize;
      }
      return { companies: partitions.size, entries, bytes };
    },
  };
}
