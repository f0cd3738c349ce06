/**
 * What the widget keeps in the page's `localStorage` (never cookies), per widget key: the visitor
 * token, the conversation, and an answer being streamed (its last event id and the text so far,
 * so a reload mid-answer resumes it). Storage may be refused (private modes, sandboxed frames):
 * then the widget works for the page's life only.
 */
export interface Pending {
  /** The `id:` of the last event read (`<turn>:<seq>:<mark>`). */
  lastEventId: string;
  text: string;
  conversationId: string | null;
  /** The visitor's message this answer is for. */
  question: string;
}

export interface Stored {
  token: string | null;
  /** The identified customer the token is for (null: anonymous). */
  userId: string | null;
  conversationId: string | null;
  pending: Pending | null;
}

const EMPTY: Stored = { token: null, userId: null, conversationId: null, pending: null };

export function createStore(key: string) {
  const name = `switchboard:${key}`;
  let memory: Stored = { ...EMPTY };
  const storage = (): Storage | null => {
    try {
      return window.localStorage;
    } catch {
      return null;
    }
  };
  try {
    const raw = storage()?.getItem(name);
    if (raw) memory = { ...EMPTY, ...(JSON.parse(raw) as Partial<Stored>) };
  } catch {
    memory = { ...EMPTY };
  }
  return {
    get(): Stored {
      return memory;
    },
    set(patch: Partial<Stored>): void {
      memory = { ...memory, ...patch };
      try {
        storage()?.setItem(name, JSON.stringify(memory));
      } catch {
        // full or refused: kept in memory
      }
    },
    clear(): void {
      memory = { ...EMPTY };
      try {
        storage()?.removeItem(name);
      } catch {
        // refused
      }
    },
  };
}

export type Store = ReturnType<typeof createStore>;
