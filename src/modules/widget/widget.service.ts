/**
 * The web widget's rules (DESIGN §12): a web deployment's publishable key and snippet, the
 * settings it serves, visitor sessions (identified by `user_hash` or anonymous), and what a
 * visitor may reach — only the conversations the widget started for that visitor.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../../db/database.js';
import type { ChatCaller, CompanyContext } from '../../http/caller.js';
import { AppErrors } from '../../http/errors.js';
import type { CoherentCache } from '../../lib/coherent-cache.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { directionOf, MASK, storedSettings, type WidgetSettings } from './widget.settings.js';
import * as repo from './widget.repo.js';
import { customerVisitorId, identityHashValid, type Visitor, type VisitorTokens } from './widget.tokens.js';
import type { SessionBody, WidgetInfo, WidgetKeyInfo } from './widget.schemas.js';
import type { VerifiedCustomer } from '../chat/index.js';

/** A key's web deployment as the public routes use it (cached; every change to either clears it). */
export interface WidgetRecord {
  key: string;
  deploymentId: string;
  companyId: string;
  agentId: string;
  status: string;
  /** The chat agent_key of the deployment: agent:<deployable id>:web:<region slug>. */
  agentKey: string;
  settings: WidgetSettings;
}

export interface WidgetServiceDeps {
  db: Db;
  box: SecretBox;
  tokens: VisitorTokens;
  publicBaseUrl: string;
  /** The widget script's version (the snippet's `?v=`). */
  scriptVersion: string;
  records: CoherentCache<WidgetRecord> | null;
}

/** The associated data of a sealed identity secret (a sealed value opens only where it was sealed). */
export const identitySecretContext = (companyId: string) => `deployment-widget-identity:${companyId}`;

const newKey = () => `pk_${randomBytes(24).toString('base64url')}`;
const KEY = /^pk_[A-Za-z0-9_-]{20,64}$/;

/** Conversation owners are immutable once written: a bounded in-process map spares the lookups. */
const OWNERS_KEPT = 10_000;

function parseConfig(raw: string): Record<string, unknown> {
  try {
    const value = JSON.parse(raw) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function toRecord(row: repo.WidgetDeploymentRow): WidgetRecord {
  return {
    key: row.key!,
    deploymentId: row.id,
    companyId: row.company_id,
    agentId: row.agent_id,
    status: row.status,
    agentKey: `agent:${row.deployable_id}:web:${row.region_slug}`,
    settings: storedSettings(parseConfig(row.config)),
  };
}

export function createWidgetService(deps: WidgetServiceDeps) {
  const { db } = deps;
  const owners = new Map<string, string>();
  const remember = (conversationId: string, visitorId: string) => {
    if (owners.size >= OWNERS_KEPT) owners.delete(owners.keys().next().value as string);
    owners.set(conversationId, visitorId);
  };

  async function webDeployment(context: CompanyContext, deploymentId: string) {
    const row = await repo.findDeployment(db, context.companyId, deploymentId);
    if (!row) throw AppErrors.notFound('Deployment', deploymentId);
    if (row.channel !== 'web')
      throw AppErrors.conflict(
        `Deployment ${deploymentId} is on channel ${row.channel}; the widget serves web deployments`,
      );
    return row;
  }

  function keyInfo(row: repo.WidgetDeploymentRow, key: string): WidgetKeyInfo {
    const { identity_secret, ...settings } = storedSettings(parseConfig(row.config));
    const src = `${deps.publicBaseUrl}/widget.js?v=${deps.scriptVersion}`;
    return {
      deployment_id: row.id,
      key,
      snippet: `<script src="${src}" data-key="${key}" async></script>`,
      settings: { ...settings, identity_secret: identity_secret ? MASK : null },
    };
  }

  const service = {
    /** The deployment's key (made on first read) with its snippet and settings. */
    async keyFor(context: CompanyContext, deploymentId: string): Promise<WidgetKeyInfo> {
      const row = await webDeployment(context, deploymentId);
      const key = row.key ?? (await repo.ensureKey(db, context.companyId, row.id, newKey()));
      return keyInfo(row, key);
    },

    /** A new key; the old one opens nothing from now on (on every instance: the change is heard). */
    async rotate(context: CompanyContext, deploymentId: string): Promise<WidgetKeyInfo> {
      const row = await webDeployment(context, deploymentId);
      const key = newKey();
      await repo.replaceKey(db, context.companyId, row.id, key);
      deps.records?.clear();
      return keyInfo(row, key);
    },

    /** The web deployment of a publishable key; 404 for an unknown, rotated or non-web key. */
    async resolve(key: string): Promise<WidgetRecord> {
      const cached = deps.records?.get(key);
      if (cached) return cached;
      if (!KEY.test(key)) throw AppErrors.notFound('Widget key', key.slice(0, 80));
      const generation = deps.records?.generation ?? 0;
      const row = await repo.findByKey(db, key);
      if (!row) throw AppErrors.notFound('Widget key', key);
      const record = toRecord(row);
      deps.records?.set(key, record, generation);
      return record;
    },

    info(record: WidgetRecord): WidgetInfo {
      const { settings } = record;
      return {
        title: settings.title,
        greeting: settings.greeting,
        color: settings.color,
        position: settings.position,
        placeholder: settings.placeholder,
        language: settings.language,
        direction: directionOf(settings.language),
        theme: settings.theme,
        available: record.status === 'active',
      };
    },

    /**
     * A visitor session: identified (that customer, on every device) when `user_hash` is the
     * HMAC of `user_id` under the deployment's identity secret; anonymous otherwise.
     */
    async startSession(record: WidgetRecord, body: SessionBody) {
      const sealed = record.settings.identity_secret;
      const secret =
        sealed !== null && body.user_id !== undefined && body.user_hash !== undefined
          ? deps.box.open(sealed, identitySecretContext(record.companyId))
          : null;
      const identified = secret !== null && identityHashValid(secret, body.user_id!, body.user_hash!);
      // The e-mail is the customer's (for tools) only when the company's server signed it too.
      const emailVerified =
        identified && body.email !== undefined && body.email_hash !== undefined
          ? identityHashValid(secret, body.email, body.email_hash)
          : false;
      const visitor = identified
        ? {
            visitorId: customerVisitorId(record.deploymentId, body.user_id!),
            deploymentId: record.deploymentId,
            userId: body.user_id!,
            name: body.name ?? null,
            email: body.email ?? null,
            emailVerified,
          }
        : { deploymentId: record.deploymentId, userId: null, name: null, email: null, emailVerified: false };
      const { token, visitorId } = await deps.tokens.sign(visitor);
      return { visitor_token: token, visitor_id: visitorId, identified };
    },

    visitor(record: WidgetRecord, authorization: string | undefined): Promise<Visitor> {
      return deps.tokens.verify(authorization, record.deploymentId);
    },

    /** The chat caller of a widget turn: the deployment's company, no chat token. */
    caller(record: WidgetRecord): ChatCaller {
      return { kind: 'chat', tokenId: null, companyId: record.companyId, agentId: null };
    },

    /** The verified customer a turn's tools may act for (none for an anonymous visitor). */
    customerOf(visitor: Visitor): VerifiedCustomer | undefined {
      if (!visitor.userId) return undefined;
      return { userId: visitor.userId, name: visitor.name, email: visitor.emailVerified ? visitor.email : null };
    },

    /** The end user a turn records: the identified customer's id, else the visitor. */
    userOf(visitor: Visitor): string {
      return visitor.userId ?? `widget-visitor:${visitor.visitorId}`;
    },

    /** 404 unless the conversation is this visitor's on this widget (the same answer for any other). */
    async mustOwn(record: WidgetRecord, visitor: Visitor, conversationId: string): Promise<void> {
      const known = owners.get(conversationId);
      const owner = known ?? (await repo.ownerOf(db, record.deploymentId, conversationId));
      if (owner && !known) remember(conversationId, owner);
      if (owner !== visitor.visitorId) throw AppErrors.notFound('Conversation', conversationId);
    },

    /** Records a new conversation as the visitor's. */
    async bind(record: WidgetRecord, visitor: Visitor, conversationId: string): Promise<void> {
      await repo.bindConversation(db, {
        conversation_id: conversationId,
        company_id: record.companyId,
        deployment_id: record.deploymentId,
        visitor_id: visitor.visitorId,
      });
      remember(conversationId, visitor.visitorId);
    },

    /** The visitor's latest conversation here, if any. */
    latest(record: WidgetRecord, visitor: Visitor): Promise<string | undefined> {
      return repo.latestConversation(db, record.deploymentId, visitor.visitorId);
    },

    /** The conversation of a turn this visitor may resume; 404 for a turn of anyone else. */
    async turnConversation(record: WidgetRecord, visitor: Visitor, turnId: string, live: string | undefined) {
      const conversationId = live ?? (await repo.conversationOfAnswer(db, record.companyId, turnId));
      if (!conversationId) throw AppErrors.notFound('Turn', turnId);
      await service.mustOwn(record, visitor, conversationId).catch(() => {
        throw AppErrors.notFound('Turn', turnId);
      });
      return conversationId;
    },

    /** Web addresses of the cited documents that have one. */
    documentUrls(record: WidgetRecord, documentIds: readonly string[]) {
      return repo.documentUrls(db, record.companyId, documentIds);
    },
  };
  return service;
}

export type WidgetService = ReturnType<typeof createWidgetService>;
