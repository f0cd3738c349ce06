/**
 * Keeps the BM25 indexes (knowledge.bm25-index.ts) of large knowledge bases in memory, current
 * and within a memory budget. A company's index is built in the background on its first search
 * (that search, and every one until the index is ready, runs in SQL), from one snapshot of its
 * chunks and corpus statistics. Every change to a company's chunks bumps its corpus version and
 * logs the chunks touched (migration 0205); the change notification (migration 0014) makes each
 * instance read the chunks touched since its index's version and apply them, so a document
 * added on one instance is found on the others within the notification's lag. A failed build or
 * update drops the index (searches go back to SQL) and builds it again a little later. Indexes
 * are used only while the notification listener is connected; the least recently searched go
 * first when the bytes held would pass the budget. Each index comes with the company's title
 * index (knowledge.title-index.ts, the docstore lane's titles), built from the same snapshot and
 * kept current by the same changes (a document's title is read again whenever its chunks change).
 */
import type { Db } from '../../db/database.js';
import { Bm25Index } from './knowledge.bm25-index.js';
import * as indexRepo from './knowledge.index.repo.js';
import { createTrigramReader, TitleIndex } from './knowledge.title-index.js';
import type { LaneFilters, LaneHit } from './knowledge.search.types.js';

export interface Bm25LanesOptions {
  db: Db;
  /** Companies with more chunks than this are held (smaller ones are in knowledge.memory-lanes.ts). */
  minChunks: number;
  /** Companies with more chunks than this stay in SQL. */
  maxChunks: number;
  /** Bytes held for all companies together. */
  budgetBytes: number;
  /** Whether change notifications are being received. */
  isEnabled: () => boolean;
  log: { warn(obj: object, msg: string): void };
  /** Waited for before each page of a build (tests pause a build there). */
  beforePage?: () => Promise<void>;
  /** Wait after a failed build or update before the next (default 1 s). */
  retryDelayMs?: number;
}

interface Held {
  index: Bm25Index | null;
  /** The titles of the same snapshot and changes (set with `index`). */
  titles: TitleIndex | null;
  building: boolean;
  /** A refresh is running; `dirty`: a change came in since it read the log. */
  refreshing: boolean;
  dirty: boolean;
  /** The company is outside [minChunks, maxChunks] or the budget (as of `skippedAt`'s version). */
  skipped: boolean;
  timer: NodeJS.Timeout | null;
  searchedAt: number;
  prunedAt: number;
}

/**
 * Estimated bytes of an index of this corpus (chunks' fields, ~1 posting per 1.4 tokens) and of
 * its titles (~170 bytes of trigram postings and ids per chunk on SciFact).
 */
export function estimatedBytes(corpus: { chunk_count: number; token_total: number }): number {
  return corpus.chunk_count * 260 + corpus.token_total * 5;
}

export function createBm25Lanes(options: Bm25LanesOptions) {
  const { db, minChunks, maxChunks, budgetBytes, isEnabled, log } = options;
  const retryDelayMs = options.retryDelayMs ?? 1000;
  const held = new Map<string, Held>();
  const queryTrigrams = createTrigramReader((pieces) => indexRepo.textTrigrams(db, pieces));
  let closed = false;

  const heldBytes = (except?: Held) => {
    let total = 0;
    for (const entry of held.values())
      if (entry !== except) total += (entry.index?.bytes ?? 0) + (entry.titles?.bytes ?? 0);
    return total;
  };

  function evict(keep: Held) {
    while (heldBytes() > budgetBytes) {
      const oldest = [...held]
        .filter(([, entry]) => entry.index && entry !== keep)
        .sort((a, b) => a[1].searchedAt - b[1].searchedAt)[0];
      if (!oldest) return;
      held.delete(oldest[0]);
    }
  }

  function schedule(companyId: string, entry: Held, delayMs: number) {
    if (closed || entry.building || entry.timer) return;
    entry.timer = setTimeout(() => {
      entry.timer = null;
      void build(companyId, entry);
    }, delayMs);
    entry.timer.unref();
  }

  async function build(companyId: string, entry: Held) {
    if (entry.building || closed || held.get(companyId) !== entry) return;
    entry.building = true;
    entry.dirty = false;
    try {
      const corpus = await indexRepo.corpusState(db, companyId);
      const fits = (state: typeof corpus) =>
        state.chunk_count > minChunks &&
        state.chunk_count <= maxChunks &&
        estimatedBytes(state) <= budgetBytes - heldBytes(entry);
      if (!fits(corpus)) {
        entry.skipped = true;
        entry.index = null;
        entry.titles = null;
        return;
      }
      let index: Bm25Index | null = null;
      const titles = new TitleIndex();
      let sliceStart = performance.now();
      const slice = async () => {
        if (performance.now() - sliceStart > 5) {
          await new Promise((resolve) => setImmediate(resolve));
          sliceStart = performance.now();
        }
      };
      await indexRepo.readAllChunks(
        db,
        companyId,
        2000,
        (state) => (index = fits(state) ? new Bm25Index(state) : null),
        async (rows) => {
          await options.beforePage?.();
          if (!index || closed) return;
          for (let i = 0; i < rows.length; i++) {
            index.add(rows[i]!);
            if ((i & 63) === 63) await slice();
          }
        },
        {
          asciiReadHere: await queryTrigrams.asciiReadHere(),
          onPage: async (rows) => {
            await options.beforePage?.();
            if (!index || closed) return;
            for (let i = 0; i < rows.length; i += 256) {
              titles.add(rows.slice(i, i + 256));
              await slice();
            }
          },
        },
      );
      if (held.get(companyId) !== entry || closed) return;
      if (!index) {
        entry.skipped = true;
        return;
      }
      (index as Bm25Index).trim();
      titles.trim();
      entry.index = index;
      entry.titles = titles;
      evict(entry);
    } catch (error) {
      // An index being replaced (compaction) stays: it is kept current by the log all along.
      log.warn({ err: error, companyId }, 'building the in-memory BM25 index failed; searches stay in SQL');
      entry.building = false;
      schedule(companyId, entry, retryDelayMs);
      return;
    } finally {
      entry.building = false;
    }
    // Changes made since the snapshot are read from the log now.
    if (entry.index) void refresh(companyId, entry);
  }

  /** Applies the chunks changed since the index's version, until no change is pending. */
  async function refresh(companyId: string, entry: Held) {
    if (entry.refreshing || !entry.index) {
      entry.dirty = true;
      return;
    }
    entry.refreshing = true;
    try {
      do {
        entry.dirty = false;
        const index: Bm25Index | null = entry.index;
        if (!index || closed) return;
        const maxIds = Math.max(10_000, Math.floor(index.size / 4));
        const changes = await indexRepo.changesSince(
          db,
          companyId,
          index.version,
          maxIds,
          await queryTrigrams.asciiReadHere(),
        );
        if (entry.index !== index) return;
        if (changes.kind === 'current') continue;
        if (changes.kind === 'rebuild') {
          // The log no longer reaches back to this index: a new one, searches in SQL meanwhile.
          entry.index = null;
          entry.titles = null;
          schedule(companyId, entry, 0);
          return;
        }
        const slots = index.slotsOf(changes.ids);
        const counts = await index.countRemoved(slots);
        if (entry.index !== index) return;
        // From here on synchronous: a search sees the index before or after the whole change.
        index.remove(slots, counts);
        for (const row of changes.rows) index.add(row);
        index.corpus = changes.corpus;
        const titles = entry.titles!;
        titles.replace(changes.titles);
        // Many dead slots: a fresh index replaces this one once built (this one serves meanwhile).
        if (index.deadSlots > index.size / 4 || titles.deadSlots > titles.size / 4) schedule(companyId, entry, 0);
        if (Date.now() - entry.prunedAt > 60_000) {
          entry.prunedAt = Date.now();
          await indexRepo.pruneChanges(db, companyId, 600);
        }
      } while (entry.dirty);
    } catch (error) {
      log.warn({ err: error, companyId }, 'updating the in-memory BM25 index failed; rebuilding it');
      entry.index = null;
      entry.titles = null;
      schedule(companyId, entry, retryDelayMs);
    } finally {
      entry.refreshing = false;
    }
  }

  return {
    /** A company's knowledge changed (no id: anything may have changed, e.g. the listener reconnected). */
    changed(companyId?: string) {
      if (companyId === undefined) {
        for (const entry of held.values()) if (entry.timer) clearTimeout(entry.timer);
        held.clear();
        return;
      }
      const entry = held.get(companyId);
      if (!entry) return;
      if (entry.skipped) {
        // Its size may have crossed a limit: judged again at its next search.
        held.delete(companyId);
        return;
      }
      if (entry.index) void refresh(companyId, entry);
      else entry.dirty = true;
    },

    /**
     * The full-text lane from memory for these lexemes, or null when it must run in SQL (the
     * index is then prepared).
     */
    search(companyId: string, lexemes: string[], filters: LaneFilters, depth: number): LaneHit[] | null {
      if (closed || !isEnabled()) return null;
      let entry = held.get(companyId);
      if (!entry) {
        entry = {
          index: null,
          titles: null,
          building: false,
          refreshing: false,
          dirty: false,
          skipped: false,
          timer: null,
          searchedAt: 0,
          prunedAt: 0,
        };
        held.set(companyId, entry);
      }
      entry.searchedAt = Date.now();
      if (!entry.index) {
        if (!entry.skipped) schedule(companyId, entry, 0);
        return null;
      }
      return entry.index.search(lexemes, filters, depth);
    },

    /**
     * The documents whose titles reach the docstore lane's similarity with `query`, from the
     * company's title index (held with its BM25 index), or null when SQL must find them.
     */
    async titleMatches(companyId: string, query: string): Promise<string[] | null> {
      if (closed || !isEnabled() || !held.get(companyId)?.titles) return null;
      let trigrams: string[];
      try {
        trigrams = await queryTrigrams(query);
      } catch (error) {
        log.warn({ err: error, companyId }, 'reading the trigrams of a query failed; its titles are scanned in SQL');
        return null;
      }
      // Read after the round trip: the titles held now.
      const entry = held.get(companyId);
      if (!entry?.index || !entry.titles || closed || !isEnabled()) return null;
      return entry.titles.matches(trigrams);
    },

    /** Whether the company's searches are answered from memory now, and at which version. */
    heldVersion(companyId: string): number | null {
      if (!isEnabled()) return null;
      return held.get(companyId)?.index?.version ?? null;
    },

    /** Each held company's chunks and bytes (the metrics gauge). */
    stats(): { companyId: string; chunks: number; bytes: number }[] {
      return [...held]
        .filter(([, entry]) => entry.index)
        .map(([companyId, entry]) => ({
          companyId,
          chunks: entry.index!.size,
          bytes: entry.index!.bytes + (entry.titles?.bytes ?? 0),
        }));
    },

    close() {
      closed = true;
      for (const entry of held.values()) if (entry.timer) clearTimeout(entry.timer);
      held.clear();
    },
  };
}

export type Bm25Lanes = ReturnType<typeof createBm25Lanes>;
