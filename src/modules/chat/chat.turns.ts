/**
 * One chat turn: `prepare` checks everything that can be refused before a reply starts (agent
 * key, token binding, deployment, conversation state, form fields) and opens the conversation;
 * `run` transcribes audio, lets the runtime answer (outside any transaction), then writes the
 * turn — both messages, the support query and the team notifications (chat.turn-write.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/database.js';
import type { ChatCaller } from '../../http/caller.js';
import { AppError, AppErrors } from '../../http/errors.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { Clock } from '../../lib/clock.js';
import { notAudioReason } from '../../lib/audio-sniff.js';
import type { CoherentCache } from '../../lib/coherent-cache.js';
import type { LlmMessage } from '../../ports/llm.js';
import { findAgent, type AgentRow } from '../agents/index.js';
import { parseAgentKey } from './chat.agent-key.js';
import type {
  AgentNotifier,
  ChatDeployments,
  ChatSpeech,
  ServedWorkflow,
  SupportRecorder,
  WorkflowRouter,
} from './chat.ports.js';
import * as repo from './chat.repo.js';
import { parseHistory, transcribe } from './chat.turn-input.js';
import { createTurnWriter } from './chat.turn-write.js';
import type { PreparedTurn, TurnResult } from './chat.turn-types.js';
import type { TurnJournal } from './chat.turn-journal.js';
import type { ChatRuntime, TurnOptions, TurnOutcome } from './chat.runtime.js';
import { toolChunk } from './chat.tool-records.js';
import type { ToolAction } from './chat.tools.js';
import type { AudioPart, ChatForm, StreamEvent } from './chat.schemas.js';
import { checkAgentAllowed } from './chat.service.js';
import { createWorkflowRoute, handoffChunk } from './chat.workflow-route.js';
import type { Handoff as HandoffService } from './chat.handoff.js';
import { HANDOFF_REASONS } from './chat.runtime.js';
import { customerStatus, handoffStatusChunk } from './chat.turn-hold.js';
import { AbortLimit } from '../../lib/abort-limit.js';

export interface TurnsDeps {
  db: Db;
  clock: Clock;
  runtime: ChatRuntime;
  historyLimit: number;
  llmTimeoutMs: number;
  supportQueries: SupportRecorder | null;
  notifications: AgentNotifier | null;
  deployments: ChatDeployments | null;
  speech: ChatSpeech;
  queue: Pick<JobQueue, 'send'> | null;
  /** Agents and live deployments as last read (found ones only), cleared on every change to them. */
  serving: CoherentCache<ServingRecord> | null;
  metrics: TurnMetrics | null;
  /** Workflows behind agent keys (the workflows module); null: keys name agents only. */
  workflows?: WorkflowRouter | null;
  /** Called once a turn's records have committed. */
  turnCommitted?: ((companyId: string) => void) | null;
  /** Turns in progress (chat.turn-journal.ts): the question durable before the turn's work starts. */
  journal?: Pick<TurnJournal, 'begin' | 'end' | 'owner'> | null;
  /** Hand-off transitions: a turn starts one when the agent escalates; a person's conversation takes no agent turn. */
  handoff?: HandoffService | null;
  log: { warn(obj: object, msg: string): void };
}

/** Counters of turns and of the tools they use (the container's Prometheus counters). */
export interface TurnMetrics {
  chatTurns: { inc(labels: { finish: string; provider: string }): void };
  toolCalls: { inc(labels: { tool: string; outcome: string }): void };
}

/** What a turn reads before it can answer: an agent row, or the live deployment it is served by. */
export type ServingRecord = AgentRow | { deploymentId: string } | ServedWorkflow;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function createTurns(deps: TurnsDeps) {
  const { db, clock } = deps;
  const { saveTurn } = createTurnWriter(deps);

  /** A found record from the serving cache, else loaded (and kept if found while nothing changed). */
  async function cached<T extends ServingRecord>(
    key: string,
    load: () => Promise<T | undefined>,
  ): Promise<T | undefined> {
    const cache = deps.serving;
    if (!cache) return load();
    const hit = cache.get(key);
    if (hit) return hit as T;
    const generation = cache.generation;
    const value = await load();
    if (value) cache.set(key, value, generation);
    return value;
  }
  const loadAgent = (companyId: string, agentId: string) =>
    cached(`agent:${companyId}:${agentId}`, () => findAgent(db, companyId, agentId));
  const liveDeployment = (companyId: string, key: { agentId: string; channel: string; region: string }) =>
    cached(`deployment:${companyId}:${key.agentId}:${key.channel}:${key.region}`, async () => ({
      deploymentId: (await deps.deployments!.resolveForChat(companyId, key.agentId, key.channel, key.region)).id,
    }));
  const router = deps.workflows;
  const workflows = router
    ? createWorkflowRoute({
        db,
        router,
        loadAgent,
        notifications: deps.notifications,
        supportQueries: deps.supportQueries,
        findWorkflow: (companyId, id) => cached(`workflow:${companyId}:${id}`, () => router.find(companyId, id)),
      })
    : null;

  /**
   * A new conversation (its id is made here), written behind the reply: `persist` starts the
   * insert when the turn produces its first output or ends, so that it does not compete with
   * the knowledge search and the model call on the way to the first token. The turn is saved
   * only once the row exists.
   */
  function newConversation(
    caller: ChatCaller,
    form: ChatForm,
    agent: AgentRow,
    key: { channel: string; region: string },
    deploymentId: string | null,
    query: string,
    workflowId: string | null,
  ) {
    const history = deps.historyLimit ? parseHistory(form.messages).slice(-deps.historyLimit) : [];
    const now = clock.now();
    const conversation: repo.ConversationRow = {
      id: randomUUID(),
      company_id: caller.companyId,
      agent_id: agent.id,
      deployment_id: deploymentId,
      chat_token_id: caller.tokenId,
      title: query.split('\n', 1)[0]!.slice(0, 80),
      status: 'open',
      external_user_id: form.user ?? null,
      end_user_id: null,
      support_query_id: null,
      workflow_id: workflowId,
      channel: key.channel,
      region: key.region,
      message_count: 0,
      last_message_at: null,
      closed_at: null,
      created_at: now,
      updated_at: now,
      handler: 'bot',
      assignee_id: null,
      handoff_reason: null,
      handoff_at: null,
    };
    // The inserts name their columns: the row's counters and handler are left to the defaults.
    let written: Promise<void> | null = null;
    const persist = () => (written ??= repo.insertConversation(db, conversation).then(() => undefined));
    // The row written by the caller's own statement (the turn journal's), unless a write started.
    const writeWith = (write: (row: repo.NewConversation) => Promise<void>) =>
      written ? null : (written = write(conversation));
    return { conversation, history, persist, writeWith };
  }

  /** A stored conversation to continue: the token's, this agent's, still open; with its history. */
  async function existingConversation(
    caller: ChatCaller,
    conversationId: string,
    agent: AgentRow,
    workflowId: string | null,
  ) {
    if (!UUID.test(conversationId)) throw AppErrors.validation("Invalid field 'conversation_id': must be a UUID");
    const conversation = await repo.findConversation(db, caller.companyId, conversationId, caller.agentId);
    if (!conversation) throw AppErrors.notFound('Conversation', conversationId);
    if (conversation.agent_id !== agent.id && !(workflowId && conversation.workflow_id === workflowId)) {
      throw AppErrors.conflict(
        `Conversation ${conversation.id} belongs to agent ${conversation.agent_id}, not ${agent.id}`,
      );
    }
    if (conversation.status === 'closed') throw AppErrors.conflict(`Conversation ${conversation.id} is closed`);
    const history = (await repo.recentMessages(
      db,
      caller.companyId,
      conversation.id,
      deps.historyLimit,
    )) as LlmMessage[];
    return { conversation, history, persist: () => Promise.resolve(), writeWith: undefined };
  }

  /**
   * The agent (from the serving cache when warm), and its knowledge search started at once: the
   * search is the longest step before the model, and overlaps the rest of `prepare`.
   */
  async function agentAndRetrieval(caller: ChatCaller, agentId: string, query: string | null, conversationId?: string) {
    // A workflow the cache holds skips the agent lookup (a miss, never cached, would read every turn).
    const found = deps.serving?.get(`workflow:${caller.companyId}:${agentId}`)
      ? undefined
      : await loadAgent(caller.companyId, agentId);
    // Not an agent: a workflow's key, whose router picks the agent for this question.
    const routed = found ? null : await workflows?.route(caller, agentId, query, conversationId);
    const agent = found ?? routed?.agent;
    if (!agent) throw AppErrors.notFound('Agent', agentId);
    const abort = new AbortController();
    const retrieval = query ? deps.runtime.retrieve(caller.companyId, query, agent.collection_ids, abort.signal) : null;
    retrieval?.catch(() => undefined);
    return { agent, routed, retrieval, abort };
  }

  /**
   * A message to a person's conversation: stored with no agent turn. Null when a person released
   * it meanwhile (the agent answers after all).
   */
  async function holdForPerson(
    turn: PreparedTurn,
    emit: (event: Omit<StreamEvent, 'conversation_id'>) => void,
  ): Promise<TurnResult | null> {
    // The search started for the agent runs to its end: a released conversation still needs it.
    const held = await deps.handoff!.customerMessage({
      companyId: turn.caller.companyId,
      conversationId: turn.conversation.id,
      content: turn.query,
    });
    if (!held) return null;
    const status = customerStatus(held.status);
    emit(handoffStatusChunk(status));
    return {
      conversation_id: turn.conversation.id,
      agent_response_text: '',
      response_time_ms: clock.now().getTime() - turn.startedAt,
      was_resolved: false,
      message_id: null,
      finish_reason: 'stop',
      usage: null,
      held: { status },
    };
  }

  return {
    /**
     * `serving.deployment: false` serves the agent without a live deployment of the key's channel
     * and region (a voice agent's turn: the active voice agent is what serves it).
     */
    async prepare(
      caller: ChatCaller,
      form: ChatForm,
      options: TurnOptions = {},
      serving: { deployment?: boolean } = {},
    ): Promise<PreparedTurn> {
      const startedAt = clock.now().getTime();
      const key = parseAgentKey(form.agent_key);
      checkAgentAllowed(caller, key.agentId);
      const audio = form.audio ?? null;
      if (audio && !Buffer.isBuffer((audio as Partial<AudioPart>).buffer))
        throw AppErrors.validation("Invalid field 'audio': must be a file part of a multipart form");
      // The audio is checked before the engine is: a file that is not audio is a 415 even without one.
      const notAudio = audio ? notAudioReason('audio', audio) : null;
      if (notAudio) throw AppErrors.unsupportedMediaType(notAudio);
      if (audio && !deps.speech.stt) {
        throw AppErrors.unavailable(
          deps.speech.reason ?? 'Speech-to-text is not configured: set ELEVENLABS_API_KEY or STT_URL to send audio',
        );
      }
      const query = form.query?.trim() ?? '';
      if (!query && !audio) throw AppErrors.validation("Invalid field 'query': is required (or send an audio file)");
      // The deployment check runs alongside the agent lookup; an unknown agent is reported first.
      const deployment =
        deps.deployments && serving.deployment !== false
          ? liveDeployment(caller.companyId, key)
          : Promise.resolve(null);
      deployment.catch(() => undefined);
      const { agent, routed, retrieval, abort } = await agentAndRetrieval(
        caller,
        key.agentId,
        query !== '' && !audio ? query : null,
        form.conversation_id,
      );
      const workflowId = routed?.workflowId ?? null;
      try {
        const [live, existing] = await Promise.allSettled([
          deployment,
          form.conversation_id !== undefined
            ? existingConversation(caller, form.conversation_id, agent, workflowId)
            : Promise.resolve(null),
        ]);
        if (live.status === 'rejected') throw live.reason;
        if (existing.status === 'rejected') throw existing.reason;
        const deploymentId = live.value?.deploymentId ?? null;
        const { conversation, history, persist, writeWith } =
          existing.value ?? newConversation(caller, form, agent, key, deploymentId, query, workflowId);
        const persisting = workflows?.withHandoff(caller, routed, conversation.id, persist) ?? persist;
        return {
          id: randomUUID(),
          caller,
          agent,
          conversation,
          persist: persisting,
          // A workflow's hand-off is written after the row: the row is then written on its own.
          writeWith: persisting === persist ? writeWith : undefined,
          deploymentId,
          history,
          query,
          audio,
          startedAt,
          retrieval,
          abort,
          options,
          handoff: routed?.handoff ?? null,
          held: Boolean(deps.handoff) && conversation.handler !== 'bot',
        };
      } catch (error) {
        abort.abort();
        throw error;
      }
    },

    /**
     * Answers the prepared turn, sending events through `emit` (streaming) as they happen. `keep`
     * writes what the caller keeps of an answer that finished (a channel's answer before it is
     * sent) at the same time as the turn's records, not after them; the turn fails if it fails.
     */
    async run(
      turn: PreparedTurn,
      clientSignal: AbortSignal,
      send: (event: Omit<StreamEvent, 'conversation_id'>) => void = () => undefined,
      keep?: (answer: Pick<TurnOutcome, 'text' | 'citations'>) => Promise<void>,
    ): Promise<TurnResult> {
      // The first output of the turn starts writing a new conversation's row (saveTurn waits for it).
      let producing = false;
      const emit = (event: Omit<StreamEvent, 'conversation_id'>) => {
        send(event);
        if (producing) return;
        producing = true;
        turn.persist().catch(() => undefined);
      };
      const { signal } = turn.abort;
      const limit = new AbortLimit(turn.abort, clientSignal, deps.llmTimeoutMs);
      const conversationId = turn.conversation.id;
      let text = '';
      const actions: ToolAction[] = [];
      let outcome: TurnOutcome | null = null;
      let failure: unknown = null;
      let journaled = false;
      try {
        if (turn.audio && deps.speech.stt) {
          const heard = await transcribe(deps.speech.stt, turn.audio, signal);
          turn.query = [heard.trim(), turn.query].filter(Boolean).join('\n');
          emit({ type: 'transcribed_text', content: heard });
          if (!turn.query) throw AppErrors.validation('The audio contained no speech');
        }
        if (turn.held) {
          const held = await holdForPerson(turn, emit);
          if (held) {
            limit.release();
            return held;
          }
        }
        const input = {
          companyId: turn.caller.companyId,
          agent: turn.agent,
          query: turn.query,
          history: turn.history,
          options: turn.options,
        };
        // The agent's tools are read while the question is written.
        const tools = deps.runtime.tools(input);
        tools.catch(() => undefined);
        // The question is durable before the model, a tool or a voice step starts.
        if (deps.journal) {
          const journal = deps.journal;
          const pending = {
            id: turn.id,
            companyId: turn.caller.companyId,
            conversationId,
            agentId: turn.agent.id,
            deploymentId: turn.deploymentId,
            query: turn.query,
          };
          // A new conversation's row and the journal's in one statement, else the row first.
          const together = turn.writeWith?.((row) => journal.begin(pending, row));
          if (together) await together;
          else {
            await turn.persist();
            await journal.begin(pending);
          }
          journaled = true;
        }
        if (turn.handoff) emit(handoffChunk(turn.handoff));
        outcome = await deps.runtime.respond(
          input,
          signal,
          (delta) => {
            text += delta;
            emit({ type: 'agent_text_chunk', content: delta });
          },
          turn.retrieval ?? undefined,
          (action) => {
            actions.push(action);
            emit(toolChunk(action));
          },
          tools,
        );
        // The model stops quietly when its signal aborts; past the time limit that is a failure.
        if (limit.timedOut)
          throw new AppError(504, `The agent did not answer within ${deps.llmTimeoutMs} ms`, 'GatewayTimeout');
        if (outcome.citations.length)
          emit({
            type: 'chunk',
            content: JSON.stringify({ kind: 'citations', citations: outcome.citations }),
            kind: 'citations',
            citations: outcome.citations,
          });
        if (outcome.escalated && deps.handoff)
          emit(handoffStatusChunk('waiting', outcome.handoffReason ?? HANDOFF_REASONS.couldNotAnswer));
      } catch (error) {
        failure = error;
      }
      const finish = limit.callerAborted ? 'aborted' : failure ? 'error' : 'stop';
      limit.release();
      deps.metrics?.chatTurns.inc({ finish, provider: turn.agent.model.split(':', 1)[0]! });
      // Every tool a turn calls is counted here. The knowledge search is the one tool so far (the
      // support query records it as `knowledge_base` in tools_used); tools the model calls will
      // count with their own names and outcome.
      if (outcome && outcome.retrieved > 0) deps.metrics?.toolCalls.inc({ tool: 'knowledge_base', outcome: 'ok' });
      for (const action of actions) {
        deps.metrics?.toolCalls.inc({
          tool: `${action.integration_type}.${action.connector_tool}`,
          outcome: action.status === 'ok' ? 'ok' : 'error',
        });
      }
      const elapsed = clock.now().getTime() - turn.startedAt;
      const final =
        finish === 'stop' && outcome
          ? outcome
          : { text, citations: [], resolved: false, escalated: false, retrieved: 0, model: turn.agent.model, actions };
      let messageId: string | null = null;
      const kept = keep && finish === 'stop' && outcome && turn.query ? keep(outcome) : undefined;
      try {
        messageId = turn.query ? await saveTurn(turn, final, finish, elapsed, journaled) : null;
        journaled = false; // out of the journal with the write's own statement
      } finally {
        await kept?.catch(() => undefined);
        // The write failed (or was refused): out of the journal, behind the answer rather than before
        // it. A row left by a failed delete is only removed by the sweep (the turn's answer is found written).
        if (journaled) void deps.journal!.end(turn.id).catch(() => undefined);
      }
      await kept;
      const failed = actions.filter((action) => action.status === 'failed');
      if (turn.deploymentId && deps.deployments && failed.length) {
        for (const action of failed)
          await deps.deployments
            .logEvent(turn.deploymentId, 'warning', `Tool ${action.tool} failed: ${action.summary}`)
            .catch(() => undefined);
      }
      if (turn.deploymentId && deps.deployments && finish === 'error') {
        await deps.deployments
          .logEvent(
            turn.deploymentId,
            'error',
            `Chat turn failed: ${failure instanceof Error ? failure.message : String(failure)}`,
          )
          .catch(() => undefined);
      }
      if (failure && finish === 'error') {
        if (failure instanceof AppError) throw failure;
        if (limit.timedOut)
          throw new AppError(504, `The agent did not answer within ${deps.llmTimeoutMs} ms`, 'GatewayTimeout');
        throw failure;
      }
      return {
        conversation_id: conversationId,
        agent_response_text: final.text,
        response_time_ms: elapsed,
        was_resolved: final.resolved,
        message_id: messageId,
        finish_reason: finish,
        usage: final.usage ?? null,
      };
    },
  };
}

export type Turns = ReturnType<typeof createTurns>;
