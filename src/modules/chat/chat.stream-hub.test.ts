import { describe, expect, it } from 'vitest';
import type { AnswerRow } from './chat.repo.js';
import { storedEvents } from './chat.resume.js';
import type { StreamEvent } from './chat.schemas.js';
import { createStreamHub, parseEventId, type StreamSink } from './chat.stream-hub.js';

const TURN = '11111111-2222-4333-8444-555555555555';
const owner = { turnId: TURN, companyId: 'company-a', agentId: 'agent-a' };
const ev = (type: StreamEvent['type'], content = '', extra: Record<string, unknown> = {}): StreamEvent => ({
  type,
  content,
  conversation_id: 'c',
  ...extra,
});

function sink() {
  const received: { id: string; event: StreamEvent }[] = [];
  let closed = false;
  let gone = false;
  let onGone: (() => void) | null = null;
  const value: StreamSink = {
    get gone() {
      return gone;
    },
    onGone: (listener) => (onGone = listener),
    send: (event, id) => received.push({ id, event }),
    close: () => (closed = true),
  };
  const leave = () => {
    gone = true;
    onGone?.();
  };
  return { value, received, leave, closed: () => closed };
}

const options = { resumeMs: 60_000, maxTurns: 10, maxEvents: 100 };

describe('stream hub', () => {
  it('numbers events and marks what the client has: answer characters, citations, error, end', () => {
    const hub = createStreamHub(options);
    const turn = hub.open(owner);
    const client = sink();
    turn.attach(client.value, -1);
    turn.push(ev('start'));
    turn.push(ev('agent_text_chunk', '\n Hi'));
    turn.push(ev('agent_text_chunk', ' there'));
    turn.push(ev('chunk', '{}', { kind: 'citations', citations: [] }));
    turn.push(ev('end'));
    turn.end();
    expect(client.received.map((r) => r.id)).toEqual([
      `${TURN}:0:0`,
      `${TURN}:1:2`,
      `${TURN}:2:8`,
      `${TURN}:3:c`,
      `${TURN}:4:e`,
    ]);
    expect(client.closed()).toBe(true);
    expect(parseEventId(`${TURN}:2:8`)).toEqual({ turnId: TURN, seq: 2, mark: 8 });
    expect(parseEventId(`${TURN}:4:e`)).toEqual({ turnId: TURN, seq: 4, mark: 'e' });
    expect(parseEventId('1:2:3')).toBeNull();
    expect(parseEventId(`${TURN}:2`)).toBeNull();
  });

  it('replays the kept events after a sequence number, then follows the live ones until the end', () => {
    const hub = createStreamHub(options);
    const turn = hub.open(owner);
    turn.push(ev('start'));
    turn.push(ev('agent_text_chunk', 'a'));
    turn.push(ev('agent_text_chunk', 'b'));
    const late = sink();
    expect(turn.attach(late.value, 1)).toBe(true);
    turn.push(ev('end'));
    turn.end();
    expect(late.received.map((r) => r.event.content)).toEqual(['b', '']);
    expect(late.closed()).toBe(true);
  });

  it('finds turns only for their company and bound agent', () => {
    const hub = createStreamHub(options);
    hub.open(owner);
    expect(hub.find('company-a', null, TURN)).toBeDefined();
    expect(hub.find('company-a', 'agent-a', TURN)).toBeDefined();
    expect(hub.find('company-b', null, TURN)).toBeUndefined();
    expect(hub.find('company-a', 'agent-b', TURN)).toBeUndefined();
  });

  it('abandons a turn nobody listens to after the resume window; a reconnect or a holder keeps it', () => {
    const hub = createStreamHub({ ...options, resumeMs: 0 });
    const turn = hub.open(owner);
    const first = sink();
    turn.attach(first.value, -1);
    const waiting = new AbortController();
    turn.hold(waiting.signal);
    first.leave();
    expect(turn.signal.aborted).toBe(false);
    waiting.abort();
    expect(turn.signal.aborted).toBe(true);
  });

  it('bounds memory: ended turns are evicted first, then new turns and long turns are unbuffered', () => {
    const hub = createStreamHub({ resumeMs: 60_000, maxTurns: 2, maxEvents: 3 });
    const id = (n: number) => `${TURN.slice(0, -1)}${n}`;
    const a = hub.open({ ...owner, turnId: id(1) });
    a.end();
    hub.open({ ...owner, turnId: id(2) });
    const c = hub.open({ ...owner, turnId: id(3) });
    expect(hub.find('company-a', null, id(1))).toBeUndefined();
    expect(c.buffered).toBe(true);
    expect(hub.open({ ...owner, turnId: id(4) }).buffered).toBe(false);
    for (const content of ['a', 'b', 'c', 'd']) c.push(ev('agent_text_chunk', content));
    expect(c.buffered).toBe(false);
    expect(c.attach(sink().value, 0)).toBe(false);
    expect(c.attach(sink().value, 3)).toBe(true);
    hub.close();
    expect(hub.size).toBe(0);
  });
  it('makes room by evicting the turns that ended longest ago, never a running one', () => {
    const hub = createStreamHub({ resumeMs: 60_000, maxTurns: 3, maxEvents: 3 });
    const id = (n: number) => `${TURN.slice(0, -1)}${n}`;
    const running = hub.open({ ...owner, turnId: id(1) });
    const first = hub.open({ ...owner, turnId: id(2) });
    const second = hub.open({ ...owner, turnId: id(3) });
    second.end();
    first.end();
    // `second` ended first: it goes first, `first` stays for a reconnect.
    expect(hub.open({ ...owner, turnId: id(4) }).buffered).toBe(true);
    expect(hub.find('company-a', null, id(3))).toBeUndefined();
    expect(hub.find('company-a', null, id(2))).toBe(first);
    expect(hub.open({ ...owner, turnId: id(5) }).buffered).toBe(true);
    expect(hub.find('company-a', null, id(2))).toBeUndefined();
    // Nothing ended is left: the next turn runs unbuffered, the running ones all stay.
    expect(hub.open({ ...owner, turnId: id(6) }).buffered).toBe(false);
    expect(hub.find('company-a', null, id(1))).toBe(running);
    expect(hub.size).toBe(4);
    hub.close();
  });
});

describe('storedEvents', () => {
  const answer: AnswerRow = {
    id: TURN,
    conversation_id: 'c',
    content: 'Hi there',
    citations: [{ document_id: 'd', title: 'T', snippet: 's' }] as unknown as AnswerRow['citations'],
    was_resolved: true,
    response_time_ms: 12,
    finish_reason: 'stop',
  };

  it('sends the rest of the text, the citations and end after a mark inside the text', () => {
    const events = storedEvents(answer, { turnId: TURN, seq: 1, mark: 2 });
    expect(events.map((e) => [e.event.type, e.event.content.slice(0, 6), e.id])).toEqual([
      ['agent_text_chunk', ' there', `${TURN}:2:8`],
      ['chunk', '{"kind', `${TURN}:3:c`],
      ['end', '', `${TURN}:4:e`],
    ]);
    expect(events[2]!.event).toMatchObject({ message_id: TURN, was_resolved: true, response_time_ms: 12 });
  });

  it('sends only end after the citations, and nothing after end', () => {
    expect(storedEvents(answer, { turnId: TURN, seq: 3, mark: 'c' }).map((e) => e.event.type)).toEqual(['end']);
    expect(storedEvents(answer, { turnId: TURN, seq: 4, mark: 'e' })).toEqual([]);
  });

  it('ends a failed turn with an error event unless the client had it', () => {
    const failed = { ...answer, finish_reason: 'error' as const, citations: [] };
    expect(storedEvents(failed, { turnId: TURN, seq: 2, mark: 8 }).map((e) => e.event.type)).toEqual(['error', 'end']);
    expect(storedEvents(failed, { turnId: TURN, seq: 3, mark: 'x' }).map((e) => e.event.type)).toEqual(['end']);
  });
});
