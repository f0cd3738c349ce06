/**
 * The answering job (a task job of the queue, `channels.answer {eventId}`): a customer message
 * accepted from a vendor becomes one chat turn and its answer goes back into the vendor thread.
 *
 * A thread's events are worked one at a time, oldest first: the holder of one goes on with the
 * thread's next when it finishes. An event's answer is kept before it is sent, so a crash between
 * the turn and the delivery re-sends it without a second turn; a run that fails unexpectedly is
 * handed back and tried again later (at most MAX_ATTEMPTS times), and a dead worker's events are
 * handed back by the queue's sweep.
 */
import type { Db, Executor } from '../../db/database.js';
import { AppError } from '../../http/errors.js';
import type { ChatCaller } from '../../http/caller.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { ChannelVendors } from '../../ports/channels.js';
import { ConnectorError } from '../../ports/connectors.js';
import type { AudioFile } from '../../ports/speech.js';
import { findAgent } from '../agents/index.js';
import type { ChatModule, PreparedTurn } from '../chat/index.js';
import type { ChannelDeployment } from '../deployments/index.js';
import type { Delivery } from './channels.delivery.js';
import type { Source } from './channels.format.js';
import { languageOf, noVoiceReply, unavailableReply } from './channels.language.js';
import * as repo from './channels.repo.js';
import type { Targets } from './channels.targets.js';

export const ANSWER_JOB = 'channels.answer';
export const MAX_ATTEMPTS = 4;
/** Teams shows "typing…" for a few seconds; it is sent again this often while the agent thinks. */
const TYPING_EVERY_MS = 3000;
const PRUNE_EVERY_MS = 10 * 60_000;

export interface AnswerJob {
  eventId: string;
}

export interface AnswerDeps {
  db: Db;
  queue: Pick<JobQueue, 'send'>;
  vendors: ChannelVendors;
  delivery: Delivery;
  deployments: {
    logEvent(id: string, level: 'info' | 'warning' | 'error', message: string): Promise<void>;
  };
  /** The deployment and its integration's config (channels.targets.ts). */
  target: Targets;
  turns: Pick<ChatModule['turns'], 'prepare' | 'run'>;
  endUsers: {
    ensureEndUser(
      executor: Executor,
      companyId: string,
      externalId: string,
      profile: { name?: string | null },
    ): Promise<unknown>;
  };
  /** Whether speech to text is configured (voice notes are transcribed). */
  speechToText: boolean;
  /** Logs a throttled line in the deployment's log (at most one a minute per kind). */
  notice(deploymentId: string, kind: string, level: 'info' | 'warning' | 'error', message: string): Promise<void>;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

type Outcome = { error: string | null };
/** An answer to send, and whether it is kept on its event already (null: nothing to say). */
type Answered = { answer: repo.StoredAnswer; saved: boolean } | null;

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

export function createAnswerer(deps: AnswerDeps) {
  const { db } = deps;
  let prunedAt = 0;

  async function sources(companyId: string, citations: { document_id: string; title: string }[]): Promise<Source[]> {
    const unique = [...new Map(citations.map((citation) => [citation.document_id, citation])).values()];
    const urls = await repo.documentSources(
      db,
      companyId,
      unique.map((citation) => citation.document_id),
    );
    return unique.map((citation) => ({ title: citation.title, url: urls.get(citation.document_id) ?? null }));
  }

  /**
   * Prepares the turn on the thread's conversation; a closed or deleted one is replaced by a new
   * one, which `link` records as the thread's (called once the turn is under way, not before it).
   */
  async function prepare(
    deployment: ChannelDeployment,
    thread: repo.ThreadRow,
    event: repo.EventRow,
    audio: AudioFile | undefined,
  ): Promise<{ turn: PreparedTurn; link: () => Promise<void> }> {
    const caller: ChatCaller = { kind: 'chat', tokenId: null, companyId: deployment.company_id, agentId: null };
    const form = {
      agent_key: deployment.agent_key,
      query: event.input.text,
      ...(event.input.user ? { user: event.input.user.id.slice(0, 200) } : {}),
      ...(audio ? { audio } : {}),
    };
    if (thread.conversation_id) {
      try {
        const turn = await deps.turns.prepare(caller, { ...form, conversation_id: thread.conversation_id });
        return { turn, link: () => Promise.resolve() };
      } catch (error) {
        const gone = error instanceof AppError && (error.statusCode === 404 || error.statusCode === 409);
        if (!gone || !/^Conversation/.test(error.message)) throw error;
      }
    }
    const turn = await deps.turns.prepare(caller, form);
    // The conversation's row first (the turn writes it before the model), then the thread names it.
    return {
      turn,
      link: () => turn.persist().then(() => repo.setThreadConversation(db, thread, turn.conversation.id)),
    };
  }

  /** The agent's answer to a customer message (Markdown), or null when there is nothing to say. */
  async function converse(
    deployment: ChannelDeployment,
    thread: repo.ThreadRow,
    event: repo.EventRow,
    config: Record<string, unknown>,
  ): Promise<Answered> {
    const language = () =>
      languageOf({
        locale: event.input.locale ?? null,
        phone: thread.channel === 'whatsapp' ? thread.thread_key : null,
        deploymentLanguages: deployment.languages,
      });
    let audio: AudioFile | undefined;
    if (event.input.audio) {
      if (!deps.speechToText) return { answer: { text: noVoiceReply(language()), sources: [] }, saved: false };
      audio = await deps.vendors.whatsapp.downloadMedia(
        config as never,
        event.input.audio.media_id,
        AbortSignal.timeout(60_000),
      );
    }
    const user = event.input.user;
    let typing: NodeJS.Timeout | undefined;
    if (thread.channel === 'teams') {
      void deps.delivery.typing(thread, config);
      typing = setInterval(() => void deps.delivery.typing(thread, config), TYPING_EVERY_MS);
    }
    try {
      const { turn, link } = await prepare(deployment, thread, event, audio);
      // Written beside the model's answer, off the way to it: the end user's vendor name (the
      // turn's own records upsert the same row) and the thread → conversation link.
      let beside: Promise<unknown> | undefined;
      const besideTurn = () =>
        (beside ??= Promise.all([
          link(),
          user && deps.endUsers.ensureEndUser(db, deployment.company_id, user.id.slice(0, 200), { name: user.name }),
        ]));
      // The answer is kept (fenced: only this holder writes) at the same time as the turn's records.
      let kept: Answered = null;
      const keep = async (final: { text: string; citations: { document_id: string; title: string }[] }) => {
        const text = final.text.trim();
        if (!text) return;
        const stored = { text, sources: await sources(deployment.company_id, final.citations) };
        kept = { answer: stored, saved: await repo.saveAnswer(db, event, stored) };
      };
      try {
        await deps.turns.run(turn, new AbortController().signal, () => besideTurn().catch(() => undefined), keep);
      } finally {
        // A turn that failed still started its conversation: the thread names it all the same.
        await besideTurn().catch(() => undefined);
      }
      await besideTurn();
      return kept;
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      if (error.statusCode < 500) {
        await deps.notice(
          deployment.id,
          'turn-refused',
          'warning',
          `${thread.channel} message not answered: ${error.message}`,
        );
        return null;
      }
      // The turn failed (provider down, time limit): the customer hears so; the turn logged why.
      return { answer: { text: unavailableReply(language()), sources: [] }, saved: false };
    } finally {
      clearInterval(typing);
    }
  }

  async function welcome(deployment: ChannelDeployment): Promise<Answered> {
    const agent = await findAgent(db, deployment.company_id, deployment.agent_id);
    const text = agent?.welcome_message.trim();
    return text ? { answer: { text, sources: [] }, saved: false } : null;
  }

  /** Answers one held event; what went wrong for good (said in the deployment log), or null. */
  async function answer(event: repo.EventRow): Promise<Outcome> {
    const found = await deps.target(event.deployment_id);
    if (!found) return { error: 'the deployment no longer exists' };
    const { deployment, integration } = found;
    if (deployment.status !== 'active') {
      await deps.notice(
        deployment.id,
        'inactive',
        'info',
        `${deployment.channel} message not answered: the deployment is ${deployment.status}`,
      );
      return { error: `the deployment is ${deployment.status}` };
    }
    const thread = event.thread ?? (await repo.findThread(db, event.deployment_id, event.thread_key));
    if (!integration || !integration.is_active || !thread) {
      const why = `${deployment.channel} message not answered: the deployment's integration is missing or inactive`;
      await deps.notice(deployment.id, 'integration', 'error', why);
      return { error: why };
    }
    let stored = event.state === 'answered' ? event.answer : null;
    if (!stored) {
      const answered =
        event.kind === 'welcome'
          ? await welcome(deployment)
          : await converse(deployment, thread, event, integration.config);
      if (!answered) return { error: null };
      const saved = answered.saved || (await repo.saveAnswer(db, event, answered.answer));
      if (!saved) return { error: 'the event was handed to another worker' };
      stored = answered.answer;
    }
    try {
      await deps.delivery.sendToThread(
        thread,
        integration.config,
        stored.text,
        stored.sources,
        event.input.reply_to_id,
      );
    } catch (error) {
      if (error instanceof ConnectorError && !error.retryable) {
        await deps.deployments
          .logEvent(deployment.id, 'error', `Reply not delivered: ${error.message}`)
          .catch(() => undefined);
        return { error: error.message };
      }
      throw error;
    }
    return { error: null };
  }

  async function release(event: repo.EventRow) {
    await db.transaction().execute(async (trx) => {
      const released = await repo.releaseEvents(trx, { only: event });
      for (const id of released)
        await deps.queue.send(trx, ANSWER_JOB, { eventId: id }, { startAfterSeconds: 5 * event.attempts });
    });
  }

  /** Works a held event, then the thread's next ones; never throws (a failed run is handed back). */
  async function run(first: repo.EventRow): Promise<void> {
    let event: repo.EventRow | undefined = first;
    while (event) {
      let outcome: Outcome;
      try {
        outcome = await answer(event);
      } catch (error) {
        deps.log.warn({ err: error, eventId: event.id, attempt: event.attempts }, 'channel event failed');
        if (event.attempts < MAX_ATTEMPTS) {
          await release(event).catch((failure: unknown) =>
            deps.log.error({ err: failure }, 'channel event release failed'),
          );
          return;
        }
        outcome = { error: describe(error) };
        await deps.deployments
          .logEvent(
            event.deployment_id,
            'error',
            `Message not answered after ${event.attempts} attempts: ${outcome.error}`,
          )
          .catch(() => undefined);
      }
      const done: repo.EventRow = event;
      event = await db
        .transaction()
        .execute((trx) => repo.finishAndClaimNext(trx, done, outcome.error?.slice(0, 2000) ?? null));
    }
    if (Date.now() - prunedAt > PRUNE_EVERY_MS) {
      prunedAt = Date.now();
      await repo.pruneOld(db).catch((error: unknown) => deps.log.warn({ err: error }, 'channel pruning failed'));
    }
  }

  return {
    run,
    claim: (trx: Executor, job: AnswerJob, workerId: number | null) => repo.claimEvent(trx, job.eventId, workerId),
    async requeue(trx: Executor, workerIds: readonly number[]) {
      const ids = await repo.releaseEvents(trx, { workerIds });
      for (const id of ids) await deps.queue.send(trx, ANSWER_JOB, { eventId: id });
      return ids.length;
    },
    async release(trx: Executor, event: repo.EventRow) {
      const ids = await repo.releaseEvents(trx, { only: event });
      for (const id of ids) await deps.queue.send(trx, ANSWER_JOB, { eventId: id }, { startAfterSeconds: 10 });
    },
  };
}

export type Answerer = ReturnType<typeof createAnswerer>;
