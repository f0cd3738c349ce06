/**
 * The visitor's conversation: the session (visitor token, made on first need, again after a 401),
 * history after a reload, a message's streamed answer (its progress kept in localStorage so a
 * reload mid-answer resumes it by `Last-Event-ID`), and the conversation's events stream (the
 * hand-off status and a person's replies), reconnected when it drops.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type Api, type Citation, type Identity, type Message } from './api';
import type { SseEvent } from './sse';
import type { Store } from './store';

export type Handoff = 'bot' | 'handoff' | 'assigned' | 'closed';
export type Activity = { kind: 'thinking' } | { kind: 'tool'; status: 'ok' | 'failed'; summary: string } | null;

export interface ShownMessage extends Message {
  /** Still streaming. */
  partial?: boolean;
  failed?: boolean;
}

interface StreamEventData {
  type: string;
  content?: string;
  conversation_id?: string;
  kind?: string;
  citations?: Citation[];
  status?: string;
  summary?: string;
  handoff?: { status?: string };
}

const RECONNECT_MS = [1000, 2000, 5000, 10000, 30000];

function parse<T>(data: string): T | null {
  try {
    return JSON.parse(data) as T;
  } catch {
    return null;
  }
}

export function useConversation(api: Api, store: Store, emit: (name: string, payload: unknown) => void) {
  const [messages, setMessages] = useState<ShownMessage[]>([]);
  const [busy, setBusy] = useState(false);
  const [activity, setActivity] = useState<Activity>(null);
  const [handoff, setHandoff] = useState<Handoff>('bot');
  const [error, setError] = useState<string | null>(null);
  const [unread, setUnread] = useState(0);
  const identity = useRef<Identity | null>(null);
  const events = useRef<AbortController | null>(null);
  const live = useRef({ messages, busy });
  live.current = { messages, busy };

  const update = (change: (list: ShownMessage[]) => ShownMessage[]) =>
    setMessages((list) => {
      const next = change(list);
      live.current.messages = next;
      return next;
    });

  async function token(fresh = false): Promise<string> {
    const stored = store.get();
    if (stored.token && !fresh) return stored.token;
    const session = await api.session(identity.current ?? {});
    store.set({
      token: session.visitor_token,
      userId: session.identified ? (identity.current?.user_id ?? null) : null,
    });
    return session.visitor_token;
  }

  /** Runs `call` with the visitor's token, with a new session once if the token was refused. */
  async function authed<T>(call: (token: string) => Promise<T>): Promise<T> {
    try {
      return await call(await token());
    } catch (caught) {
      if (!(caught instanceof ApiError) || caught.status !== 401) throw caught;
      store.set({ token: null, conversationId: null, pending: null });
      return call(await token(true));
    }
  }

  async function loadHistory(): Promise<ShownMessage[]> {
    const { conversationId } = store.get();
    if (!store.get().token) return [];
    const page = await authed((t) => api.history(t, conversationId)).catch((caught: unknown) => {
      if (caught instanceof ApiError && caught.status === 404) {
        store.set({ conversationId: null, pending: null });
        return { conversation_id: null, data: [] as Message[] };
      }
      throw caught;
    });
    if (page.conversation_id && page.conversation_id !== store.get().conversationId)
      store.set({ conversationId: page.conversation_id });
    return page.data;
  }

  function listen(conversationId: string) {
    if (events.current) return;
    const controller = new AbortController();
    events.current = controller;
    let attempt = 0;
    const loop = async () => {
      while (!controller.signal.aborted) {
        const reconnect = attempt > 0;
        try {
          await authed((t) =>
            api.events(
              t,
              conversationId,
              (event) => {
                attempt = 0;
                onConversationEvent(event);
              },
              controller.signal,
            ),
          );
        } catch (caught) {
          if (controller.signal.aborted) return;
          if (caught instanceof ApiError && caught.status === 404) return;
        }
        if (controller.signal.aborted) return;
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS[Math.min(attempt++, RECONNECT_MS.length - 1)]));
        // Replies may have come while disconnected: read them again.
        if (reconnect && !live.current.busy) loadHistory().then(setHistory, () => undefined);
      }
    };
    void loop();
  }

  function onConversationEvent(event: SseEvent) {
    if (event.event === 'handoff') {
      const data = parse<{ status?: Handoff }>(event.data);
      if (data?.status) setHandoff(data.status);
      return;
    }
    // Events may have been missed (the service lost its notifications): read the conversation again.
    if (event.event === 'resync') {
      if (!live.current.busy) loadHistory().then(setHistory, () => undefined);
      return;
    }
    if (event.event !== 'message') return;
    const data = parse<{ message?: Message }>(event.data);
    const message = data?.message;
    if (!message || message.role !== 'human') return;
    if (live.current.messages.some((shown) => shown.id === message.id)) return;
    update((list) => [
      ...list,
      { id: message.id, role: 'human', content: message.content, created_at: message.created_at },
    ]);
    setUnread((n) => n + 1);
    emit('message', { role: 'human', content: message.content, id: message.id });
  }

  function setHistory(data: ShownMessage[]) {
    update(() => data);
  }

  /** Reads one answer's events into the last (assistant) message; true when it ended. */
  async function readAnswer(
    t: string,
    body: { text?: string; conversation_id?: string },
    question: string,
    lastEventId?: string,
  ) {
    let ended = false;
    let text = store.get().pending?.text ?? '';
    let last = lastEventId ?? null;
    const patch = (change: Partial<ShownMessage>) =>
      update((list) => list.map((m, i) => (i === list.length - 1 && m.role === 'assistant' ? { ...m, ...change } : m)));
    const onEvent = (event: SseEvent) => {
      const data = parse<StreamEventData>(event.data);
      if (!data) return;
      if (event.id) last = event.id;
      if (data.type === 'start' && data.conversation_id) {
        if (store.get().conversationId !== data.conversation_id) store.set({ conversationId: data.conversation_id });
      } else if (data.type === 'agent_text_chunk' && data.content) {
        text += data.content;
        setActivity(null);
        patch({ content: text });
      } else if (data.type === 'chunk' && data.kind === 'citations') {
        patch({ citations: data.citations ?? [] });
      } else if (data.type === 'chunk' && data.kind === 'tool') {
        setActivity({ kind: 'tool', status: data.status === 'failed' ? 'failed' : 'ok', summary: data.summary ?? '' });
      } else if (data.type === 'chunk' && data.kind === 'handoff') {
        const status = data.handoff?.status;
        setHandoff(status === 'assigned' ? 'assigned' : status === 'closed' ? 'closed' : 'handoff');
      } else if (data.type === 'error') {
        patch({ failed: true });
        setError(data.content || null);
      } else if (data.type === 'end') {
        ended = true;
      }
      if (last && !ended)
        store.set({ pending: { lastEventId: last, text, conversationId: store.get().conversationId, question } });
    };
    const status = await api.send(t, body, onEvent, last ? { lastEventId: last } : {});
    return { ended: ended || status === 204, last };
  }

  /** Streams the answer to `text` (or resumes the kept one); retries a dropped stream by its last id. */
  async function answer(question: string, resume: boolean) {
    setBusy(true);
    live.current.busy = true;
    setActivity({ kind: 'thinking' });
    setError(null);
    try {
      let last = resume ? store.get().pending?.lastEventId : undefined;
      for (let tries = 0; ; tries++) {
        const conversationId = store.get().conversationId;
        const body = last ? {} : { text: question, ...(conversationId ? { conversation_id: conversationId } : {}) };
        const outcome = await authed((t) => readAnswer(t, body, question, last));
        if (outcome.ended) break;
        last = outcome.last ?? undefined;
        if (!last || tries >= 3) throw new Error('the answer stopped');
        await new Promise((resolve) => setTimeout(resolve, 1000 * (tries + 1)));
      }
      store.set({ pending: null });
      // The conversation is the visitor's once its first answer has ended: its events may be read.
      const conversationId = store.get().conversationId;
      if (conversationId) listen(conversationId);
      // The stored conversation (with its citation links and ids) replaces what was streamed.
      const history = await loadHistory().catch(() => null);
      if (history && history.length) setHistory(history);
      else
        update((list) =>
          list.filter((m) => !(m.role === 'assistant' && !m.content)).map((m) => ({ ...m, partial: false })),
        );
      const final = live.current.messages[live.current.messages.length - 1];
      if (final && final.role === 'assistant')
        emit('message', { role: 'assistant', content: final.content, id: final.id });
    } catch (caught) {
      store.set({ pending: null });
      if (caught instanceof ApiError && caught.status === 404 && resume) {
        const history = await loadHistory().catch(() => []);
        setHistory(history);
      } else {
        update((list) => list.map((m) => (m.partial ? { ...m, partial: false, failed: !m.content } : m)));
        setError(caught instanceof ApiError ? caught.message : null);
        update((list) => list.filter((m) => !(m.role === 'assistant' && !m.content && !m.failed)));
      }
    } finally {
      setActivity(null);
      setBusy(false);
      live.current.busy = false;
    }
  }

  /** After a load: the history, and an answer that was streaming when the page went away. */
  async function restore() {
    const stored = store.get();
    if (!stored.token || (!stored.conversationId && !stored.pending && !stored.userId)) return;
    const history = await loadHistory().catch(() => [] as Message[]);
    const pending = store.get().pending;
    const conversationId = store.get().conversationId;
    if (conversationId) listen(conversationId);
    const n = history.length;
    const done =
      pending && n >= 2 && history[n - 1]!.role === 'assistant' && history[n - 2]!.content === pending.question;
    if (!pending || done) {
      store.set({ pending: null });
      setHistory(history);
      return;
    }
    const asked = n > 0 && history[n - 1]!.role === 'user' && history[n - 1]!.content === pending.question;
    setHistory([
      ...history,
      ...(asked ? [] : [{ id: `q-${pending.lastEventId}`, role: 'user' as const, content: pending.question }]),
      { id: `a-${pending.lastEventId}`, role: 'assistant', content: pending.text, partial: true },
    ]);
    await answer(pending.question, true);
  }

  async function send(text: string) {
    const question = text.trim();
    if (!question || live.current.busy) return;
    update((list) => [
      ...list,
      { id: `q-${Date.now()}`, role: 'user', content: question },
      { id: `a-${Date.now()}`, role: 'assistant', content: '', partial: true },
    ]);
    emit('message', { role: 'user', content: question });
    store.set({ pending: null });
    await answer(question, false);
  }

  async function identify(given: Identity) {
    identity.current = given;
    const stored = store.get();
    const same = given.user_id && stored.userId === given.user_id;
    if (same) return;
    const session = await api.session(given).catch(() => null);
    if (!session) return;
    const userId = session.identified ? (given.user_id ?? null) : null;
    // Another person on this browser: their conversation is not this one.
    if (userId !== stored.userId) {
      events.current?.abort();
      events.current = null;
      store.set({ token: session.visitor_token, userId, conversationId: null, pending: null });
      setHistory([]);
      setHandoff('bot');
      await restore();
    } else store.set({ token: session.visitor_token, userId });
  }

  useEffect(() => {
    void restore();
    return () => events.current?.abort();
  }, []);

  return { messages, busy, activity, handoff, error, unread, clearUnread: () => setUnread(0), send, identify };
}
