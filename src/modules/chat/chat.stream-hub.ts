/**
 * The events of streamed turns, kept in process so that a client that reconnects with
 * `Last-Event-ID` gets the rest of the same turn instead of starting another one.
 *
 * Every event of a turn gets an id `<turn id>:<seq>:<mark>` (see `eventId`). A turn stays here
 * while it runs and for `resumeMs` after its end. A turn that nobody listens to (its client left
 * and no reconnect arrived) keeps running for `resumeMs`, then its signal aborts (the model call
 * is cancelled and the partial reply is stored as `aborted`). Memory is bounded: at most
 * `maxTurns` turns keep their events (ended ones are evicted first) and at most
 * `maxEvents` events per turn; a turn past either bound is unbuffered, and a reconnect to it
 * waits for its end and is answered from the stored reply.
 */
import type { StreamEvent } from './chat.schemas.js';

/** Where a client is in a turn: the parts of an event id. */
export interface EventCursor {
  turnId: string;
  seq: number;
  /** Answer characters received (leading whitespace not counted), or `c` after the citations chunk, `x` after an error, `e` after the end. */
  mark: number | 'c' | 'x' | 'e';
}

const ID = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}):(\d{1,9}):(\d{1,9}|[cxe])$/i;

export function eventId(cursor: EventCursor): string {
  return `${cursor.turnId}:${cursor.seq}:${cursor.mark}`;
}

/** The cursor of a `Last-Event-ID`, or null when it is not one of ours. */
export function parseEventId(value: string): EventCursor | null {
  const match = ID.exec(value.trim());
  if (!match) return null;
  const mark = match[3]!;
  return {
    turnId: match[1]!.toLowerCase(),
    seq: Number(match[2]),
    mark: /^\d+$/.test(mark) ? Number(mark) : (mark.toLowerCase() as 'c' | 'x' | 'e'),
  };
}

/** A connected client: events with their ids, then `close` once the turn has ended. */
export interface StreamSink {
  /** The client went away. */
  readonly gone: boolean;
  /** Calls `listener` once when the client goes away (one listener: the turn it is attached to). */
  onGone(listener: () => void): void;
  send(event: StreamEvent, id: string): void;
  close(): void;
}

export interface TurnOwner {
  turnId: string;
  companyId: string;
  agentId: string;
}

export interface StreamHubOptions {
  /** How long a turn is kept after its end, and kept running without a client. */
  resumeMs: number;
  maxTurns: number;
  maxEvents: number;
}

/** A kept event: its id is made again when it is replayed (a kept id string is ≈ 150 bytes an event). */
interface Entry {
  seq: number;
  mark: EventCursor['mark'];
  event: StreamEvent;
}

/** One streamed turn: its events (while buffered), its listeners, and the signal that abandons it. */
export class LiveTurn {
  readonly signal: AbortSignal;
  readonly done: Promise<void>;
  ended = false;
  private events: Entry[] | null;
  private readonly sinks = new Set<StreamSink>();
  private holders = 0;
  private seq = 0;
  private chars = 0;
  private abandon: NodeJS.Timeout | null = null;
  private resolveDone!: () => void;

  /** `controller`: the turn's own abort (chat.turn-types.ts), so that the turn holds one signal, not two. */
  constructor(
    readonly owner: TurnOwner,
    buffered: boolean,
    private readonly options: StreamHubOptions,
    private readonly onEnd: (turn: LiveTurn) => void,
    private readonly controller = new AbortController(),
  ) {
    this.events = buffered ? [] : null;
    this.signal = this.controller.signal;
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
  }

  get buffered(): boolean {
    return this.events !== null;
  }

  /** The id of the last event sent, if any (`-1` before the first). */
  get lastSeq(): number {
    return this.seq - 1;
  }

  /** Sends an event to every listener and keeps it for reconnects. */
  push(event: StreamEvent): void {
    if (this.ended) return;
    const seq = this.seq++;
    const mark = this.markOf(event);
    if (this.events) {
      if (this.events.length < this.options.maxEvents) this.events.push({ seq, mark, event });
      else this.events = null;
    }
    if (this.sinks.size === 0) return;
    const id = eventId({ turnId: this.owner.turnId, seq, mark });
    for (const sink of this.sinks) sink.send(event, id);
  }

  /** The turn is over: listeners are closed, and it is kept `resumeMs` for late reconnects. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.clearAbandon();
    for (const sink of this.sinks) sink.close();
    this.sinks.clear();
    this.resolveDone();
    this.onEnd(this);
  }

  /**
   * Sends the kept events after `afterSeq`, then the live ones until the end. False when the
   * events are no longer kept (unbuffered turn): the caller waits for `done` instead.
   */
  attach(sink: StreamSink, afterSeq: number): boolean {
    if (!this.events && afterSeq < this.lastSeq) return false;
    for (const entry of this.events ?? []) {
      if (entry.seq > afterSeq)
        sink.send(entry.event, eventId({ turnId: this.owner.turnId, seq: entry.seq, mark: entry.mark }));
    }
    if (this.ended || sink.gone) {
      sink.close();
      return true;
    }
    this.sinks.add(sink);
    this.clearAbandon();
    sink.onGone(() => this.detach(sink));
    return true;
  }

  /** Keeps the turn running while `signal` has not aborted (a reconnect waiting for the end). */
  hold(signal: AbortSignal): void {
    if (this.ended || signal.aborted) return;
    this.holders++;
    this.clearAbandon();
    signal.addEventListener(
      'abort',
      () => {
        this.holders--;
        this.scheduleAbandon();
      },
      { once: true },
    );
  }

  /** Aborts the turn now (shutdown). */
  abort(reason: Error): void {
    this.clearAbandon();
    this.controller.abort(reason);
  }

  private detach(sink: StreamSink) {
    if (!this.sinks.delete(sink)) return;
    this.scheduleAbandon();
  }

  private scheduleAbandon() {
    if (this.ended || this.sinks.size > 0 || this.holders > 0 || this.abandon) return;
    const abandon = () => this.controller.abort(new Error('client disconnected'));
    if (this.options.resumeMs === 0) return abandon();
    this.abandon = setTimeout(abandon, this.options.resumeMs);
    this.abandon.unref();
  }

  private clearAbandon() {
    if (this.abandon) clearTimeout(this.abandon);
    this.abandon = null;
  }

  private markOf(event: StreamEvent): EventCursor['mark'] {
    if (event.type === 'end') return 'e';
    if (event.type === 'error') return 'x';
    if (event.type === 'chunk' && event.kind === 'citations') return 'c';
    if (event.type === 'agent_text_chunk') {
      // The stored answer is trimmed: leading whitespace is not counted.
      this.chars += this.chars === 0 ? event.content.trimStart().length : event.content.length;
    }
    return this.chars;
  }
}

export function createStreamHub(options: StreamHubOptions) {
  const turns = new Map<string, LiveTurn>();
  const expiries = new Map<string, NodeJS.Timeout>();

  function evict(turnId: string) {
    clearTimeout(expiries.get(turnId));
    expiries.delete(turnId);
    turns.delete(turnId);
  }

  function onEnd(turn: LiveTurn) {
    const turnId = turn.owner.turnId;
    if (options.resumeMs === 0) return evict(turnId);
    const timer = setTimeout(() => evict(turnId), options.resumeMs);
    timer.unref();
    expiries.set(turnId, timer);
  }

  return {
    /**
     * Registers a new turn, abandoned through `controller` (else one of its own); past `maxTurns`,
     * ended turns are evicted first, else it is unbuffered.
     */
    open(owner: TurnOwner, controller?: AbortController): LiveTurn {
      // Past the bound, the turns that ended longest ago make room (`expiries` is in end order),
      // without walking the running ones: thousands may be open at once.
      for (const turnId of expiries.keys()) {
        if (turns.size < options.maxTurns) break;
        evict(turnId);
      }
      const turn = new LiveTurn(owner, turns.size < options.maxTurns, options, onEnd, controller);
      turns.set(owner.turnId, turn);
      return turn;
    },

    /** A kept turn of this company (and of `agentId` when the token is bound to one). */
    find(companyId: string, agentId: string | null, turnId: string): LiveTurn | undefined {
      const turn = turns.get(turnId);
      if (!turn || turn.owner.companyId !== companyId) return undefined;
      if (agentId && turn.owner.agentId !== agentId) return undefined;
      return turn;
    },

    get size() {
      return turns.size;
    },

    /** Aborts every running turn and forgets them all (the app is closing). */
    close() {
      for (const turn of turns.values()) if (!turn.ended) turn.abort(new Error('server closing'));
      for (const turnId of [...turns.keys()]) evict(turnId);
    },
  };
}

export type StreamHub = ReturnType<typeof createStreamHub>;
