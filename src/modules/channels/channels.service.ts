/**
 * The channels' inbound side (DESIGN §12): a vendor's request for a deployment is verified by the
 * vendor's own scheme before anything else is read, then acknowledged at once — its customer
 * messages written (deduplicated by the vendor's ids) in one transaction with who answers them:
 * this instance's worker when it runs workers and has room (claimed in that transaction), else
 * their jobs. The answer comes from the answering task (channels.answer.ts), never from the request.
 *
 * Refusals: an unknown deployment, or one of another channel → 404; a bad signature, a stale
 * timestamp, a wrong token → 401 with nothing written (a burst of them on one deployment → one
 * security notification per quarter hour); a malformed body → 400. A deployment that is not
 * active answers 200 (vendors retry otherwise) and logs it at most once a minute.
 */
import type { Executor } from '../../db/database.js';
import type { CoherentCache } from '../../lib/coherent-cache.js';
import { AppErrors } from '../../http/errors.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { ChannelVendors, TeamsChannelConfig } from '../../ports/channels.js';
import type { ChannelDeployment } from '../deployments/index.js';
import { ANSWER_JOB, createAnswerer, type AnswerDeps } from './channels.answer.js';
import { allowedHosts, createDelivery } from './channels.delivery.js';
import {
  parseJson,
  peekActivity,
  readSlack,
  readTeams,
  readWhatsapp,
  type Inbound,
  type InboundEvent,
} from './channels.inbound.js';
import * as repo from './channels.repo.js';
import { createTargets, type ChannelTarget, type TargetSources } from './channels.targets.js';
import type { ChannelName } from './channels.tables.js';
import { sameSecret, serviceHostAllowed, verifyMetaSignature, verifySlackSignature } from './channels.verify.js';

/** Refusals on one deployment within a minute (on one instance) that make a burst. */
export const REFUSAL_BURST = 5;
const BURST_WINDOW_MS = 60_000;
const SECURITY_NOTICE_SECONDS = 15 * 60;
/** Default of `inProcessLimit`: events held and answered at once outside the queue's loops. */
export const IN_PROCESS_LIMIT = 16;

export interface ChannelNotifier {
  notify(
    executor: Executor,
    input: {
      companyId: string;
      senderId: null;
      notificationType: 'system';
      category: 'security';
      priority: 'high';
      title: string;
      message: string;
      metadata: Record<string, string>;
      actionUrl: string;
    },
  ): Promise<unknown>;
}

export interface ChannelsDeps extends Omit<AnswerDeps, 'delivery' | 'notice' | 'queue' | 'target' | 'deployments'> {
  queue: Pick<JobQueue, 'send' | 'workerId'>;
  deployments: TargetSources['deployments'] & AnswerDeps['deployments'];
  integrations: TargetSources['integrations'];
  /** Deployments and their integrations, kept coherent by the serving-change notifications. */
  targets?: CoherentCache<ChannelTarget> | null;
  vendors: ChannelVendors;
  notifications: ChannelNotifier;
  /** Unix seconds (Slack's timestamp window). */
  now?: () => number;
  /** Events answered at once on the accepting instance, at most (beyond: the queue's workers). */
  inProcessLimit?: number;
}

export interface ChannelReply {
  status: 200;
  body: unknown;
  contentType?: string;
}

type Headers = Record<string, string | string[] | undefined>;
const OK: ChannelReply = { status: 200, body: '' };

export function createChannelsService(deps: ChannelsDeps) {
  const { db } = deps;
  const now = deps.now ?? (() => Date.now() / 1000);
  const delivery = createDelivery(deps.vendors);
  const refusals = new Map<string, { count: number; since: number }>();
  const inProcessLimit = deps.inProcessLimit ?? IN_PROCESS_LIMIT;
  /** Events this instance holds and works outside the queue's task loops. */
  let running = 0;

  async function notice(deploymentId: string, kind: string, level: 'info' | 'warning' | 'error', message: string) {
    if (await repo.takeNotice(db, deploymentId, kind, 60))
      await deps.deployments.logEvent(deploymentId, level, message);
  }

  const targets = createTargets(deps, deps.targets);
  const answerer = createAnswerer({ ...deps, delivery, notice, target: targets });

  /** The deployment of `channel` the route names, and its integration's config (secrets in clear). */
  async function target(deploymentId: string, channel: ChannelName) {
    const found = await targets(deploymentId);
    if (!found || found.deployment.channel !== channel)
      throw AppErrors.notFound(`Deployment on ${channel}`, deploymentId);
    const { deployment, integration } = found;
    const config = integration?.type === channel ? integration.config : undefined;
    return { deployment, config };
  }

  /** A refused request: 401, nothing written — but a burst of them notifies the company once. */
  async function refuse(deployment: ChannelDeployment, reason: string): Promise<never> {
    const at = Date.now();
    const seen = refusals.get(deployment.id);
    const current = seen && at - seen.since < BURST_WINDOW_MS ? seen : { count: 0, since: at };
    current.count++;
    refusals.set(deployment.id, current);
    if (refusals.size > 10_000) refusals.delete(refusals.keys().next().value!);
    if (
      current.count === REFUSAL_BURST &&
      (await repo.takeNotice(db, deployment.id, 'refused', SECURITY_NOTICE_SECONDS))
    ) {
      const message = `${REFUSAL_BURST} requests to the ${deployment.channel} route of deployment ${deployment.id} were refused within a minute (last: ${reason}). Check the integration's secrets, or someone is probing the route.`;
      await db.transaction().execute(async (trx) => {
        await deps.notifications.notify(trx, {
          companyId: deployment.company_id,
          senderId: null,
          notificationType: 'system',
          category: 'security',
          priority: 'high',
          title: `Refused ${deployment.channel} requests`,
          message,
          metadata: { deployment_id: deployment.id, channel: deployment.channel, reason },
          actionUrl: `/deployments/${deployment.id}`,
        });
      });
      await deps.deployments.logEvent(deployment.id, 'warning', message);
    }
    throw AppErrors.unauthorized(reason);
  }

  /** A verified request's content: acknowledged, and its messages queued (or why nothing is done). */
  async function accept(deployment: ChannelDeployment, inbound: Inbound): Promise<ChannelReply> {
    if (inbound.kind === 'challenge') return { status: 200, body: { challenge: inbound.challenge } };
    if (deployment.status !== 'active') {
      await notice(
        deployment.id,
        'inactive',
        'info',
        `${deployment.channel} event not answered: the deployment is ${deployment.status}`,
      );
      return OK;
    }
    if (inbound.kind === 'ignored') return OK;
    const channel = deployment.channel as ChannelName;
    // Slots of this instance's answering capacity, taken before the write (given back if unused).
    const workerId = deps.queue.workerId();
    const slots = workerId === null ? 0 : Math.min(inbound.events.length, Math.max(0, inProcessLimit - running));
    running += slots;
    let claimed: repo.EventRow[] = [];
    try {
      claimed = await write({ id: deployment.id, company_id: deployment.company_id, channel }, inbound.events, slots);
    } finally {
      running -= slots - claimed.length;
    }
    for (const event of claimed) start(event);
    return OK;
  }

  /**
   * Writes accepted events with who answers them: this instance's worker for at most `slots` of
   * them (returned, held), else their jobs. A message starting its own thread is tried first as
   * one statement without a transaction (a new thread's); otherwise one transaction.
   */
  async function write(
    target: { id: string; company_id: string; channel: ChannelName },
    events: readonly InboundEvent[],
    slots: number,
  ): Promise<repo.EventRow[]> {
    const workerId = deps.queue.workerId();
    const claim = workerId !== null && slots > 0 ? { workerId, max: slots } : undefined;
    const [first] = events;
    if (claim && events.length === 1 && first!.startsThread && !first!.followUpOnly) {
      const started = await repo.acceptThreadStart(db, target, first!, claim.workerId);
      if (started) return [started];
    }
    return db.transaction().execute(async (trx) => {
      const result = await repo.acceptEvents(trx, target, events, claim);
      const held = result.claimed;
      // An event of an existing thread: claimed under the thread lock the write took, else its job.
      for (const waiting of result.waiting) {
        const event =
          claim && held.length < slots ? await repo.claimNext(trx, waiting.thread, claim.workerId) : undefined;
        if (event) held.push(event);
        else await deps.queue.send(trx, ANSWER_JOB, { eventId: waiting.id });
      }
      return held;
    });
  }

  /**
   * Works an event held by this instance since its acceptance committed (the claim was durable
   * with it: if this process dies, the sweep of dead workers hands it back). Started after the
   * acknowledgement is written; a run that fails is handed back to the queue, as a worker's would be.
   */
  function start(event: repo.EventRow) {
    setImmediate(() => {
      answerer
        .run(event)
        .catch(async (error: unknown) => {
          deps.log.warn({ err: error, eventId: event.id }, 'channel event failed here');
          await db.transaction().execute((trx) => answerer.release(trx, event));
        })
        .catch((error: unknown) => deps.log.error({ err: error, eventId: event.id }, 'channel event release failed'))
        .finally(() => running--);
    });
  }

  async function sendToConversation(companyId: string, conversationId: string, text: string, signal?: AbortSignal) {
    const thread = await repo.threadOfConversation(db, companyId, conversationId);
    if (!thread) return false;
    const integration = (await targets(thread.deployment_id))?.integration;
    if (!integration?.is_active || integration.type !== thread.channel) return false;
    await delivery.sendToThread(thread, integration.config, text, [], undefined, signal);
    return true;
  }

  return {
    /** `POST /channels/slack/{id}/events`. */
    async slackEvents(deploymentId: string, headers: Headers, raw: Buffer): Promise<ChannelReply> {
      const { deployment, config } = await target(deploymentId, 'slack');
      if (typeof config?.signing_secret !== 'string')
        return refuse(deployment, "the deployment's Slack integration has no signing_secret");
      const check = verifySlackSignature(config.signing_secret, headers, raw, now());
      if (!check.ok) return refuse(deployment, check.reason);
      return accept(deployment, readSlack(parseJson(raw, 'Slack event')));
    },

    /** `GET /channels/whatsapp/{id}/webhook`: Meta's verification handshake. */
    async whatsappHandshake(deploymentId: string, query: Record<string, string | undefined>): Promise<ChannelReply> {
      const { deployment, config } = await target(deploymentId, 'whatsapp');
      if (query['hub.mode'] !== 'subscribe')
        throw AppErrors.validation("Invalid parameter 'hub.mode': must be subscribe");
      const challenge = query['hub.challenge'];
      if (!challenge || challenge.length > 1000)
        throw AppErrors.validation("Invalid parameter 'hub.challenge': is required");
      if (typeof config?.verify_token !== 'string')
        return refuse(deployment, "the deployment's WhatsApp integration has no verify_token");
      if (!sameSecret(config.verify_token, query['hub.verify_token'] ?? ''))
        return refuse(deployment, 'hub.verify_token does not match');
      return { status: 200, body: challenge, contentType: 'text/plain; charset=utf-8' };
    },

    /** `POST /channels/whatsapp/{id}/webhook`: Cloud API notifications. */
    async whatsappNotification(deploymentId: string, headers: Headers, raw: Buffer): Promise<ChannelReply> {
      const { deployment, config } = await target(deploymentId, 'whatsapp');
      if (typeof config?.app_secret !== 'string')
        return refuse(deployment, "the deployment's WhatsApp integration has no app_secret");
      const check = verifyMetaSignature(config.app_secret, headers, raw);
      if (!check.ok) return refuse(deployment, check.reason);
      return accept(deployment, readWhatsapp(parseJson(raw, 'WhatsApp notification'), String(config.phone_number_id)));
    },

    /** `POST /channels/teams/{id}/messages`: Bot Framework activities. */
    async teamsActivity(deploymentId: string, headers: Headers, raw: Buffer): Promise<ChannelReply> {
      const { deployment, config } = await target(deploymentId, 'teams');
      if (typeof config?.app_password !== 'string')
        return refuse(deployment, "the deployment's Teams integration is not set up");
      const authorization = Array.isArray(headers.authorization) ? headers.authorization[0] : headers.authorization;
      const peek = peekActivity(raw);
      const check = await deps.vendors.teams.verify(config as unknown as TeamsChannelConfig, authorization, peek);
      if (!check.ok) return refuse(deployment, check.reason);
      if (!serviceHostAllowed(peek.serviceUrl, allowedHosts(config))) {
        return refuse(deployment, "the activity's serviceUrl host is not among service_url_hosts");
      }
      return accept(deployment, readTeams(parseJson(raw, 'Bot Framework activity')));
    },

    /**
     * Sends `text` (Markdown) into the vendor thread a conversation answers — the same delivery as
     * the agent's answers (a person's reply during a hand-off, DESIGN §13). False when the
     * conversation is not a channel's; throws ConnectorError when the vendor refuses.
     */
    sendToConversation,

    /**
     * The chat module's deliverer of a channel (chat.delivery.ts): a person's reply during a
     * hand-off goes into the conversation's vendor thread; an Error says why it could not.
     */
    deliverer: {
      async deliver(
        reply: { companyId: string; conversationId: string; channel: string; content: string },
        signal: AbortSignal,
      ) {
        if (!(await sendToConversation(reply.companyId, reply.conversationId, reply.content, signal))) {
          throw new Error(
            `Conversation ${reply.conversationId} has no ${reply.channel} thread to answer, or its deployment's integration is missing or inactive`,
          );
        }
      },
    },

    /** The answering job as a task of the queue (channels.jobs.ts). */
    answerTask: answerer,
  };
}

export type ChannelsService = ReturnType<typeof createChannelsService>;
