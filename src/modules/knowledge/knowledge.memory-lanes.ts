/**
 * Keeps the text indexes of small knowledge bases in memory and coherent across instances.
 * A company's index is built in the background on its first search (that search, and every
 * one until the index is ready, runs in SQL). Every change to a company's documents or corpus
 * sends a notification with the company's id (migration 0014); each instance drops that index
 * and rebuilds it once the changes have settled. The indexes are used only while the
 * notification listener is connected, and least recently searched ones go first when the
 * chunks held would pass the budget.
 */
import type { Db } from '../../db/database.js';
import { createLexicon, plainWords, type Lexicon } from './knowledge.lexicon.js';
import * as searchRepo from './knowledge.search.repo.js';
import type { LaneFilters, TextLanes } from './knowledge.search.types.js';
import { TextIndex, type IndexSnapshot } from './knowledge.text-index.js';

export interface MemoryLanesOptions {
  db: Db;
  /** A company's knowledge is held when it has at most this many chunks (0: never). */
  maxChunks: number;
  /** Chunks held for all companies together. */
  budgetChunks: number;
  /** Whether change notifications are being received. */
  isEnabled: () => boolean;
  /** Quiet time after a change before the index is rebuilt (changes come in bursts during ingestion). */
  rebuildDelayMs?: number;
  log: { warn(obj: object, msg: string): void };
  /** The query words' reading shared with the other in-process lanes (default: its own). */
  lexicon?: Lexicon;
}

export interface MemoryLanesInput {
  query: string;
  configs: string[];
  filters: LaneFilters;
  depth: number;
  fulltext: boolean;
  docstore: boolean;
}

interface Held {
  index: TextIndex | null;
  /** Moves on every change; a build started before the last change is thrown away. */
  generation: number;
  building: boolean;
  tooLarge: boolean;
  timer: NodeJS.Timeout | null;
  searchedAt: number;
}

/** Words of the knowledge base, under the configuration a query in their script is read with. */
function vocabulary(snapshot: IndexSnapshot, limit: number): [string, string][] {
  const words = new Set<string>();
  const add = (text: string) => {
    for (const word of text.match(/[\p{L}0-9]+/gu) ?? []) {
      if (words.size >= limit) return;
      if (word.length <= 100) words.add(word);
    }
  };
  for (const document of snapshot.documents) add(document.title);
  for (const chunk of snapshot.chunks) add(chunk.text);
  return [...words].map((word) => [/[\u0600-\u06FF]/.test(word) ? 'arabic' : 'english', word]);
}

export function createMemoryLanes(options: MemoryLanesOptions) {
  const { db, maxChunks, budgetChunks, isEnabled, log } = options;
  const rebuildDelayMs = options.rebuildDelayMs ?? 250;
  const held = new Map<string, Held>();
  const lexicon =
    options.lexicon ??
    createLexicon(db, { onError: (error) => log.warn({ err: error }, 'looking up query words failed') });
  let closed = false;

  function heldChunks() {
    let total = 0;
    for (const entry of held.values()) total += entry.index?.size ?? 0;
    return total;
  }

  function evict() {
    while (heldChunks() > budgetChunks) {
      const [companyId] = [...held]
        .filter(([, entry]) => entry.index)
        .sort((a, b) => a[1].searchedAt - b[1].searchedAt)[0]!;
      held.delete(companyId);
    }
  }

  function schedule(companyId: string, entry: Held, delayMs: number) {
    if (closed || entry.building) return;
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = setTimeout(() => {
      entry.timer = null;
      void build(companyId, entry);
    }, delayMs);
    entry.timer.unref();
  }

  async function build(companyId: string, entry: Held) {
    if (entry.building || closed) return;
    const generation = entry.generation;
    entry.building = true;
    try {
      const snapshot = await searchRepo.textIndexSnapshot(db, companyId, maxChunks);
      const index = snapshot ? await TextIndex.build(snapshot) : null;
      if (snapshot) await lexicon.learn(vocabulary(snapshot, 50_000));
      if (entry.generation !== generation || held.get(companyId) !== entry) return;
      if (!index) {
        entry.tooLarge = true;
        return;
      }
      entry.index = index;
      evict();
    } catch (error) {
      log.warn({ err: error, companyId }, 'building the in-memory text index failed; searches stay in SQL');
    } finally {
      entry.building = false;
      // Changed while building: build again once the changes settle.
      if (entry.generation !== generation && held.get(companyId) === entry) schedule(companyId, entry, rebuildDelayMs);
    }
  }

  return {
    lexicon,

    /** A company's knowledge changed (no id: anything may have changed, e.g. the listener reconnected). */
    changed(companyId?: string) {
      const targets =
        companyId === undefined
          ? [...held.entries()]
          : held.has(companyId)
            ? [[companyId, held.get(companyId)!] as const]
            : [];
      for (const [id, entry] of targets) {
        entry.generation += 1;
        entry.index = null;
        entry.tooLarge = false;
        if (companyId === undefined) {
          if (entry.timer) clearTimeout(entry.timer);
          held.delete(id);
        } else {
          schedule(id, entry, rebuildDelayMs);
        }
      }
    },

    /** The text lanes from memory, or null when they must run in SQL (the index is then prepared). */
    search(companyId: string, input: MemoryLanesInput): TextLanes | null {
      if (maxChunks <= 0 || closed || !isEnabled()) return null;
      let entry = held.get(companyId);
      if (!entry) {
        entry = { index: null, generation: 0, building: false, tooLarge: false, timer: null, searchedAt: 0 };
        held.set(companyId, entry);
      }
      entry.searchedAt = Date.now();
      if (!entry.index) {
        if (!entry.building && !entry.tooLarge && !entry.timer) schedule(companyId, entry, 0);
        return null;
      }
      const lexed = lexicon.lex(input.query, input.configs);
      if (!lexed) return null;
      return entry.index.search({ ...input, lexed });
    },

    /** Whether a search of the company would be answered from memory now (tests, stats). */
    isHeld(companyId: string, query?: string, configs: string[] = ['english']) {
      if (!isEnabled() || !held.get(companyId)?.index) return false;
      return query === undefined || (plainWords(query) !== null && lexicon.lex(query, configs) !== null);
    },

    close() {
      closed = true;
      for (const entry of held.values()) if (entry.timer) clearTimeout(entry.timer);
      held.clear();
    },
  };
}

export type MemoryLanes = ReturnType<typeof createMemoryLanes>;
