/**
 * Composition root: the database, queue, adapters and every module's service, built from the
 * validated config. Nothing else constructs these; tests build a container of their own.
 */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createOutboxMailer } from './adapters/outbox/outbox-mailer.js';
import { createSmtpMailer } from './adapters/smtp/smtp-mailer.js';
import type { Config } from './config.js';
import { createDatabase, type Db, type DatabaseHandle } from './db/database.js';
import { createJobQueue, type JobQueue } from './jobs/queue.js';
import { systemClock, type Clock } from './lib/clock.js';
import { createMetrics, modelCallMetrics, type Metrics } from './lib/metrics.js';
import { createCpuPool, type CpuPool } from './lib/cpu-pool.js';
import { cpuPoolOptions } from './cpu-kinds.js';
import { SPEECH_KIND } from './adapters/espeak/espeak-tts.js';
import { createCompaniesService, type Company, type CompaniesService } from './modules/companies/index.js';
import { createCoherentCache } from './lib/coherent-cache.js';
import { createListPages, pagesChanged, type ListPages } from './http/list-cache.js';
import {
  createIdentityService,
  createSignInService,
  type IdentityService,
  type SignInService,
} from './modules/identity/index.js';
import { listen } from './db/listener.js';
import type { ChatCaller, UserCaller } from './http/caller.js';
import type { Mailer } from './ports/mailer.js';
import { createKnowledgeAdapters } from './adapters/knowledge/knowledge-adapters.js';
import { createInboxService, type InboxService } from './modules/inbox/index.js';
import { createKnowledgeModule, SEARCH_SESSION_SETTINGS, type KnowledgeModule } from './modules/knowledge/index.js';
import { createLlmClient } from './adapters/llm/llm-client.js';
import { createModelDispatcher } from './adapters/llm/model-dispatcher.js';
import { speechFromConfig } from './adapters/speech/speech-adapters.js';
import { ttsFromConfig } from './adapters/tts/tts-adapters.js';
import { createElevenLabsVoices } from './adapters/elevenlabs/elevenlabs-voices.js';
import { createAgentsService, type AgentsService } from './modules/agents/index.js';
import type { LanguageModels } from './ports/llm.js';
import {
  chatJobs,
  CONVERSATION_EVENTS_CHANNEL,
  createChatModule,
  type ChatModule,
  type ServingRecord,
} from './modules/chat/index.js';
import { createProtocolFronts, type ProtocolFronts } from './container.protocols.js';
import {
  createRollupFolder,
  createSupportQueriesService,
  type SupportQueriesService,
} from './modules/support-queries/index.js';
import { createTeamNotificationsService, type TeamNotificationsService } from './modules/team-notifications/index.js';
import { createDeploymentsService, deploymentJobs, type DeploymentsService } from './modules/deployments/index.js';
import { createWorkflowsService, type WorkflowsService } from './modules/workflows/index.js';
import { createConnectors } from './adapters/connectors/connectors.js';
import { createSecretBox, loadSecretKey } from './lib/secret-box.js';
import { createIntegrationsModule, type IntegrationsModule } from './modules/integrations/index.js';
import { createWidgetModule, type WidgetModule, type WidgetRecord } from './modules/widget/index.js';
import {
  channelJobs,
  createChannelsService,
  type ChannelsService,
  type ChannelTarget,
} from './modules/channels/index.js';
import { createWebhookSender } from './adapters/webhooks/webhook-sender.js';
import { orNull, systemReader } from './container.readers.js';
import { createWebhooksModule, WEBHOOK_EVENTS_CHANNEL, type WebhooksModule } from './modules/webhooks/index.js';
import {
  createVoiceAgentsModule,
  createVoiceRespond,
  createVoiceSpeechService,
  type VoiceAgentsService,
  type VoiceRespond,
  type VoiceSpeechService,
} from './modules/voice-agents/index.js';

export interface Container extends ProtocolFronts {
  config: Readonly<Config>;
  log: Logger;
  clock: Clock;
  db: Db;
  databaseUrl: string;
  redis: Redis | null;
  queue: JobQueue;
  /** Prometheus instruments of this container, served by GET /metrics. */
  metrics: Metrics;
  /** Worker threads for CPU-heavy work (speech, document extraction), bounded queues per kind. */
  cpu: CpuPool;
  /** Serialized list pages per company, cleared on every change to what they show. */
  listPages: ListPages;
  mailer: Mailer;
  companies: CompaniesService;
  identity: IdentityService;
  signIn: SignInService;
  /** Knowledge base: documents, collections, ingestion; `search` and `collectionsReadiness` for other modules. */
  knowledge: KnowledgeModule;
  /** Language models of LLM_PROVIDERS (the port the chat runtime streams from). */
  llm: LanguageModels;
  agents: AgentsService;
  /** Chat: conversations and agent turns (the chat family). */
  chat: ChatModule;
  /** The inbox: conversations handed to people (over chat's hand-off, events and deliveries). */
  inbox: InboxService;
  /** Support queries: the recorder the platform writes through and the family's reads. */
  supportQueries: SupportQueriesService;
  /** Team notifications: `notify` for the platform and the family's reads. */
  notifications: TeamNotificationsService;
  /** Deployments: lifecycle, roll-out job, logs; `resolveForChat` and `logEvent` for chat. */
  deployments: DeploymentsService;
  /** Workflows: several agents behind one chat key; `routing` for chat turns and roll-outs. */
  workflows: WorkflowsService;
  /** Integrations and their connectors; `registry` gives the tools of an integration. */
  integrations: IntegrationsModule;
  /** Channels: deployments on Slack, WhatsApp and Teams answer there (inbound routes, answering jobs, delivery). */
  channels: ChannelsService;
  /** Outbound webhooks: endpoints, the delivery log, and the worker that fans events out and sends them. */
  webhooks: WebhooksModule;
  /** Voice agents: records and the curated voice catalog (checked when the container is built). */
  voiceAgents: VoiceAgentsService;
  /** Text to speech and speech to text of the voice agents family. */
  voiceSpeech: VoiceSpeechService;
  /** Voice turns: a voice agent's main agent answers through the chat turn, spoken. */
  voiceRespond: VoiceRespond;
  widget: WidgetModule;
  /** Starts the job queue (and its workers when config.runWorkers). */
  start(): Promise<void>;
  /** Stops workers, then closes the queue, Redis and the database pool. */
  close(): Promise<void>;
}

export interface ContainerOptions {
  config: Readonly<Config>;
  databaseUrl: string;
  log: Logger;
  clock?: Clock;
}

export function createContainer(options: ContainerOptions): Container {
  const { config, log } = options;
  const clock = options.clock ?? systemClock;
  const database: DatabaseHandle = createDatabase(options.databaseUrl, config.databasePoolMax, SEARCH_SESSION_SETTINGS);
  const db = database.db;
  const redis = config.redisUrl
    ? new Redis(config.redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2000, lazyConnect: false })
    : null;
  redis?.on('error', (error) => log.warn({ err: error }, 'redis error'));
  const metrics = createMetrics();
  const queue = createJobQueue({
    connectionString: options.databaseUrl,
    db,
    schema: config.jobsSchema,
    timings: config.workerTimings,
    onError: (error) => log.error({ err: error }, 'job queue error'),
    onJobDone: (name, outcome, seconds) => {
      metrics.jobDuration.observe({ queue: name, outcome }, seconds);
      // A job of this process may have written what a list shows (the notification follows).
      listPages.clear();
    },
  });
  metrics.watchPool('app', database.pool);
  metrics.watchQueues(() => queue.depth());
  const cpu = createCpuPool(cpuPoolOptions(config.cpuPool, metrics, SPEECH_KIND));
  metrics.watchCpuPool(() => cpu.stats());
  // Authenticated callers, company records, and the agents and deployments chat turns serve are
  // cached briefly, and only while a LISTEN connection guarantees that every instance hears of
  // each change (migrations 0003, 0004, 0041).
  const changeListener = listen(
    options.databaseUrl,
    {
      switchboard_credentials_changed: () => {
        callers.clear();
        companyRecords.clear();
      },
      switchboard_serving_changed: () => servingChanged(),
      // Agents, deployments, regions or collections changed: the company's id, or a table's name
      // when every company's pages must go (migrations 0092–0094).
      switchboard_lists_changed: (payload) => pagesChanged(listPages, payload),
      // The payload is a company's id (migration 0014); its documents are on its list pages too.
      switchboard_knowledge_changed: (companyId) => {
        knowledge.knowledgeChanged(companyId);
        pagesChanged(listPages, companyId);
      },
      // Hand-off events written by another instance (the chat module's conversation events).
      [CONVERSATION_EVENTS_CHANNEL]: (payload) => chat.events.heard(payload),
      // An event entered the outbox (migration 0160): this process's webhook sender, if it runs, fans it out.
      [WEBHOOK_EVENTS_CHANNEL]: () => webhooks.dispatcher.wake(),
    },
    (error) => log.warn({ err: error }, 'change listener failed; caches are off until it reconnects'),
  );
  const cacheOptions = { ttlMs: config.cacheTtlMs, maxEntries: 10_000, isEnabled: () => changeListener.connected };
  const callers = createCoherentCache<UserCaller | ChatCaller>(cacheOptions);
  const companyRecords = createCoherentCache<Company>(cacheOptions);
  const serving = createCoherentCache<ServingRecord>(cacheOptions);
  const widgetRecords = createCoherentCache<WidgetRecord>(cacheOptions);
  const channelTargets = createCoherentCache<ChannelTarget>(cacheOptions);
  const servingChanged = () => [serving, widgetRecords, channelTargets].forEach((cache) => cache.clear());
  // Serialized list pages per company (src/http/list-cache.ts): at most 1,000 of 64 KiB.
  const listPages = createListPages({ ...cacheOptions, maxEntries: 1_000 });
  const mailer = config.mail.smtpUrl
    ? createSmtpMailer({
        url: config.mail.smtpUrl,
        from: config.mail.from,
        db,
        onError: (error) => log.warn({ err: error }, 'SMTP delivery failed; message kept in the outbox'),
      })
    : createOutboxMailer(db);

  const companies = createCompaniesService({
    db,
    mailer,
    clock,
    invitationTtlDays: config.invitationTtlDays,
    publicBaseUrl: config.publicBaseUrl,
    credentialsChanged: () => callers.clear(),
    companyRecords,
  });
  const identity = createIdentityService({ db, companies, callers });
  const signIn = createSignInService({
    db,
    clock,
    mailer,
    companies,
    settings: config.signIn,
    publicBaseUrl: config.publicBaseUrl,
  });
  const knowledgeAdapters = createKnowledgeAdapters(config.knowledge);
  const knowledge = createKnowledgeModule(config.knowledge, {
    db,
    queue,
    clock,
    log: log.child({ module: 'knowledge' }),
    changesHeard: () => changeListener.connected,
    cpu,
    ...knowledgeAdapters,
  });
  // Every model-provider call goes through this one dispatcher (LLM_HTTP2, LLM_CA_FILE).
  const modelDispatcher = createModelDispatcher(config.chat.llmHttp);
  const llm = createLlmClient({
    providers: config.chat.llmProviders,
    dispatcher: modelDispatcher,
    observer: modelCallMetrics(metrics),
  });
  const supportQueries = createSupportQueriesService({ db, clock, ...config.insights });
  // Support rollups are folded in the background where jobs run (readers add what is pending).
  const rollupFolder = createRollupFolder({ db, log: log.child({ module: 'support-queries' }) });
  const agents = createAgentsService({
    db,
    llm,
    collections: knowledge,
    performance: supportQueries,
    // The integrations module is built below; a tool rule is checked against its listing.
    tools: { forAgent: (companyId, agent) => integrations.agentTools.forAgent(companyId, agent) },
    servingChanged: () => serving.clear(),
  });
  const notifications = createTeamNotificationsService({ db, clock });
  const deployments = createDeploymentsService({
    db,
    queue,
    notifications,
    knowledge,
    // The integrations module is built below; the roll-out runs the live check when a job runs.
    integrations: {
      checkIntegration: (companyId, id) => integrations.check(companyId, id),
      integrationFacts: (companyId, id) => integrations.facts(companyId, id),
    },
    // Workflows are built below (they ask deployments whether one is live before a delete).
    workflows: { find: (companyId, id) => workflows.routing.find(companyId, id) },
    publicBaseUrl: config.publicBaseUrl,
    log: log.child({ module: 'deployments' }),
    servingChanged,
    channelConfig: { prepare: (input) => widget.configRules.prepare(input) },
  });
  for (const job of deploymentJobs(deployments)) queue.defineTask(job);
  const workflows = createWorkflowsService({
    db,
    llm,
    deployments,
    servingChanged: () => serving.clear(),
    log: log.child({ module: 'workflows' }),
  });

  const speech = speechFromConfig(config.speech, cpu);
  const chat = createChatModule({
    db,
    clock,
    llm,
    config: config.chat,
    knowledge,
    supportQueries,
    notifications,
    deployments,
    speech,
    // The integrations module is built below; its tools are read when a turn runs.
    tools: {
      forAgent: (companyId, agent) => integrations.agentTools.forAgent(companyId, agent),
      run: (companyId, tool, input, signal) => integrations.agentTools.run(companyId, tool, input, signal),
    },
    queue,
    mailer,
    serving,
    metrics,
    workflows: workflows.routing,
    // A committed turn moved its agent's figures: this instance's agents list shows them at once.
    turnCommitted: (companyId) => listPages.clearCompany(companyId),
    deliveryTimeoutMs: config.integrations.timeoutMs,
    log: log.child({ module: 'chat' }),
  });
  for (const job of chatJobs(chat)) queue.define(job);

  // Integration secrets are sealed with SECRET_KEY, or with a key generated once into DATA_DIR.
  const secretKey = loadSecretKey({
    configuredHex: config.integrations.secretKeyHex,
    dataDir: config.dataDir,
    onGenerated: (file) =>
      log.warn(
        { file },
        'SECRET_KEY is not set: generated a key for integration secrets; keep this file (or set SECRET_KEY)',
      ),
  });
  const connectors = createConnectors({
    allowPrivate: config.integrations.allowPrivateUrls,
    timeoutMs: config.integrations.timeoutMs,
    maxResponseBytes: config.integrations.maxResponseBytes,
  });
  const box = createSecretBox(secretKey);
  const integrations = createIntegrationsModule({
    db,
    box,
    connectors: connectors.definitions,
    timeoutMs: config.integrations.timeoutMs,
    log: log.child({ module: 'integrations' }),
    changed: () => channelTargets.clear(),
  });
  const channels = createChannelsService({
    db,
    queue,
    vendors: connectors.channels,
    deployments,
    integrations,
    targets: channelTargets,
    notifications,
    turns: chat.turns,
    endUsers: supportQueries,
    speechToText: speech.stt !== null,
    log: log.child({ module: 'channels' }),
  });
  for (const job of channelJobs(channels)) queue.defineTask(job);
  // A person's reply during a hand-off reaches the customer through the channel's own delivery.
  for (const channel of ['slack', 'whatsapp', 'teams']) chat.deliveries.register(channel, channels.deliverer);
  const inbox = createInboxService({ db, chat });
  const webhookSender = createWebhookSender({
    allowPrivate: config.webhooks.allowPrivateUrls,
    timeoutMs: config.webhooks.timeoutMs,
    maxResponseBytes: config.webhooks.maxResponseBytes,
  });
  const webhooks = createWebhooksModule(
    {
      schedule: config.webhooks.retrySchedule,
      perEndpoint: config.webhooks.endpointConcurrency,
      concurrency: config.webhooks.concurrency,
      pollMs: config.webhooks.pollMs,
      leaseMs: config.webhooks.leaseMs,
      retentionDays: config.webhooks.retentionDays,
    },
    {
      db,
      clock,
      box,
      sender: webhookSender,
      // Events carry their resource as the API shows it, read as the company's owner would.
      readers: {
        support_query: (companyId, id) => orNull(() => supportQueries.get(systemReader(companyId), id)),
        notification: (companyId, id) => orNull(() => notifications.get(systemReader(companyId), id)),
        deployment: (companyId, id) => orNull(() => deployments.get(systemReader(companyId), id)),
        conversation: (companyId, id) => orNull(() => inbox.get(systemReader(companyId), id)),
        // A document's text is not sent (it may be megabytes): GET /documents/{id} has it.
        document: async (companyId, id) => {
          const document = await orNull(() => knowledge.getDocument(systemReader(companyId), id));
          if (!document) return null;
          const { content: _content, ...rest } = document;
          return rest;
        },
      },
      onDisabled: async (trx, input) => {
        await notifications.notify(trx, {
          companyId: input.companyId,
          notificationType: 'system',
          category: 'system',
          priority: 'high',
          title: 'Webhook endpoint disabled',
          // The origin only: a receiver's path or query may hold a token of its own.
          message: `Deliveries to ${input.origin} failed for the whole retry schedule, so the endpoint was disabled. Fix the receiver, then enable it again (PATCH /api/public/webhooks/${input.endpointId} with enabled: true) and retry the failed deliveries.`,
          metadata: { webhook_id: input.endpointId },
        });
      },
      log: log.child({ module: 'webhooks' }),
    },
  );
  // With ElevenLabs, its voice list (cached) is accepted besides the catalog's voices.
  const { elevenLabs } = config.tts;
  const providerVoices = elevenLabs.apiKey
    ? createElevenLabsVoices({
        apiKey: elevenLabs.apiKey,
        baseUrl: elevenLabs.baseUrl,
        timeoutMs: config.tts.timeoutMs,
      })
    : null;
  const voiceAgents = createVoiceAgentsModule({ db, providerVoices });
  const voiceSpeech = createVoiceSpeechService({
    tts: { ...ttsFromConfig(config.tts, cpu), cache: config.tts.cache },
    stt: speech,
    maxAudioBytes: config.chat.maxAudioBytes,
    providerVoices,
  });

  const stream = { heartbeatMs: config.chat.heartbeatMs, retryMs: config.chat.streamRetryMs };
  const widget = createWidgetModule({
    db,
    clock,
    config: config.widget,
    secretKey,
    box,
    publicBaseUrl: config.publicBaseUrl,
    chat,
    stream,
    records: widgetRecords,
  });

  let closed = false;
  return {
    config,
    log,
    clock,
    db,
    databaseUrl: options.databaseUrl,
    redis,
    queue,
    metrics,
    cpu,
    listPages,
    mailer,
    companies,
    identity,
    signIn,
    knowledge,
    llm,
    agents,
    chat,
    inbox,
    supportQueries,
    notifications,
    deployments,
    workflows,
    integrations,
    channels,
    webhooks,
    voiceAgents,
    voiceSpeech,
    ...createProtocolFronts({
      config,
      db,
      clock,
      chat,
      knowledge,
      supportQueries,
      voiceSpeech,
      log: log.child({ module: 'mcp' }),
      embedding: knowledgeAdapters.embedding,
    }),
    voiceRespond: createVoiceRespond({ db, turns: chat.turns, speech: voiceSpeech }),
    widget,
    async start() {
      await integrations.verifySecretKey();
      await integrations.sealClearSecrets();
      await queue.start({ workers: config.runWorkers });
      if (config.runWorkers) await knowledge.recover();
      if (config.runWorkers) rollupFolder.start();
      if (config.runWorkers && config.webhooks.worker) webhooks.dispatcher.start();
      // Every process serving turns beats; where workers run, interrupted turns are recorded.
      await chat.journal.start({ sweep: config.runWorkers });
    },
    async close() {
      if (closed) return;
      closed = true;
      await chat.journal.stop();
      await webhooks.dispatcher.stop();
      await queue.stop();
      await rollupFolder.stop();
      await cpu.close(config.shutdownTimeoutMs);
      await changeListener.close();
      await mailer.close();
      if (redis) await redis.quit().catch(() => redis.disconnect());
      await knowledge.close();
      await connectors.close();
      await webhookSender.close();
      await modelDispatcher.destroy(); // turns have ended or were cancelled by now
      await database.close();
    },
  };
}
