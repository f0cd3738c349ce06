/** createChatModule(deps) → the conversations service and the turn runner the routes use. */
import type { ChatConfig } from '../../config.js';
import type { Db } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { CoherentCache } from '../../lib/coherent-cache.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { LanguageModels } from '../../ports/llm.js';
import type { Mailer } from '../../ports/mailer.js';
import { createConversationEvents } from './chat.conversation-events.js';
import { createDeliveryRegistry } from './chat.delivery.js';
import { createEscalationMailer } from './chat.escalation.js';
import { createHandoff } from './chat.handoff.js';
import type {
  AgentNotifier,
  AgentTools,
  ChatDeployments,
  ChatSpeech,
  KnowledgeSearch,
  SupportRecorder,
  WorkflowRouter,
} from './chat.ports.js';
import { createChatRuntime } from './chat.runtime.js';
import { createResume } from './chat.resume.js';
import { createConversationsService } from './chat.service.js';
import { createStreamHub } from './chat.stream-hub.js';
import { createTurnJournal } from './chat.turn-journal.js';
import { createTurns, type ServingRecord, type TurnMetrics } from './chat.turns.js';

export interface ChatModuleDeps {
  db: Db;
  clock: Clock;
  llm: LanguageModels;
  config: ChatConfig;
  knowledge?: KnowledgeSearch | null;
  supportQueries?: SupportRecorder | null;
  notifications?: AgentNotifier | null;
  deployments?: ChatDeployments | null;
  speech?: ChatSpeech | null;
  /** The tools of an agent's integrations (the integrations module). */
  tools?: AgentTools | null;
  /** Escalation e-mails are jobs (sent with the turn) that go through the mailer. */
  queue?: Pick<JobQueue, 'send'> | null;
  mailer?: Pick<Mailer, 'send'> | null;
  /** Agents and live deployments that turns read, kept coherent by change notifications. */
  serving?: CoherentCache<ServingRecord> | null;
  /** Turn and tool-call counters (GET /metrics). */
  metrics?: TurnMetrics | null;
  /** Workflows behind agent keys: each turn's agent picked by the workflow's router. */
  workflows?: WorkflowRouter | null;
  /** Called once a turn's records have committed (the agents list's figures moved). */
  turnCommitted?: ((companyId: string) => void) | null;
  /** How long a channel's deliverer may take to send a person's reply (default 10 s). */
  deliveryTimeoutMs?: number;
  log: { warn(obj: object, msg: string): void };
}

/** Bounds of the stream hub: turns whose events are kept, and events kept per turn. */
const STREAM_MAX_TURNS = 1000;
const STREAM_MAX_EVENTS = 5000;

export function createChatModule(deps: ChatModuleDeps) {
  const supportQueries = deps.supportQueries ?? null;
  const deployments = deps.deployments ?? null;
  const runtime = createChatRuntime({
    llm: deps.llm,
    knowledge: deps.knowledge ?? null,
    retrievalTopK: deps.config.retrievalTopK,
    tools: deps.tools ?? null,
    maxToolSteps: deps.config.maxToolSteps,
  });
  const notifications = deps.notifications ?? null;
  const streams = createStreamHub({
    resumeMs: deps.config.streamResumeMs,
    maxTurns: STREAM_MAX_TURNS,
    maxEvents: STREAM_MAX_EVENTS,
  });
  // Conversation events (hand-off, a person's replies) and the per-channel delivery of replies.
  const events = createConversationEvents({ db: deps.db, log: deps.log });
  const deliveries = createDeliveryRegistry({ timeoutMs: deps.deliveryTimeoutMs ?? 10_000 });
  const handoff = createHandoff({ db: deps.db, events, deliveries, supportQueries });
  const journal = createTurnJournal({
    db: deps.db,
    supportQueries,
    deployments,
    heartbeatMs: deps.config.turnSweepMs,
    // Past any turn's own time limit (the model's, plus tools and the write), whoever runs it.
    staleTurnMs: deps.config.llmTimeoutMs * 2 + 5 * 60_000,
    log: deps.log,
  });
  return {
    /** Turns in progress, kept so a process dying mid-turn leaves a recorded failed turn (`start`/`stop`/`sweep`). */
    journal,
    /** Hand-off transitions: the inbox's (assign, take over, release, close, reply) and the turn's. */
    handoff,
    runtime,
    /**
     * Events of conversations: `subscribe` (streams), `stage` + `publish` (writers), `heard` (the
     * container's LISTEN connection on CONVERSATION_EVENTS_CHANNEL).
     */
    events,
    /** The delivery seam: channel modules `register(channel, deliverer)` here (chat.delivery.ts). */
    deliveries,
    /** Streamed turns kept in process for reconnects (`Last-Event-ID`). */
    streams,
    resume: createResume({ db: deps.db, hub: streams }),
    sendEscalationEmail: deps.mailer
      ? createEscalationMailer({ db: deps.db, clock: deps.clock, mailer: deps.mailer, notifications })
      : async () => undefined,
    conversations: createConversationsService({ db: deps.db, clock: deps.clock, supportQueries, deployments }),
    turns: createTurns({
      db: deps.db,
      clock: deps.clock,
      runtime,
      historyLimit: deps.config.historyLimit,
      llmTimeoutMs: deps.config.llmTimeoutMs,
      supportQueries,
      notifications,
      queue: deps.mailer ? (deps.queue ?? null) : null,
      deployments,
      speech: deps.speech ?? { stt: null, reason: null },
      serving: deps.serving ?? null,
      metrics: deps.metrics ?? null,
      workflows: deps.workflows ?? null,
      turnCommitted: deps.turnCommitted ?? null,
      journal,
      handoff,
      log: deps.log,
    }),
  };
}

export type ChatModule = ReturnType<typeof createChatModule>;
