/** createWidgetModule(deps) → the web widget: its service, turns, events, script and config rules. */
import type { WidgetConfig } from '../../config.widget.js';
import type { Db } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { CoherentCache } from '../../lib/coherent-cache.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { ChatModule, StreamOptions } from '../chat/index.js';
import { createWidgetConfigRules } from './widget.config.js';
import { conversationStatusOnly, type ConversationEvents } from './widget.events.js';
import { createWidgetScript } from './widget.script.js';
import { createWidgetService, type WidgetRecord } from './widget.service.js';
import { createVisitorTokens, visitorTokenKey } from './widget.tokens.js';
import { createWidgetTurns } from './widget.turns.js';

export { widgetKeyRoutes, widgetPublicRoutes, widgetScriptRoute } from './widget.routes.js';
export type { ConversationEvent, ConversationEvents } from './widget.events.js';
export type { WidgetRecord } from './widget.service.js';

export interface WidgetModuleDeps {
  db: Db;
  clock: Clock;
  config: WidgetConfig;
  /** The instance's SECRET_KEY: seals identity secrets (through `box`) and keys visitor tokens. */
  secretKey: Buffer;
  box: SecretBox;
  publicBaseUrl: string;
  chat: Pick<ChatModule, 'turns' | 'streams' | 'resume' | 'conversations'>;
  stream: StreamOptions;
  /** The built script (dist/web/widget.js). */
  scriptFile: string;
  /** Keys' deployments, kept coherent by the serving-change notifications (migration 0120). */
  records: CoherentCache<WidgetRecord> | null;
  /** A person's replies and the hand-off status of a conversation; default: its open/closed state. */
  events?: ConversationEvents | null;
}

export function createWidgetModule(deps: WidgetModuleDeps) {
  const script = createWidgetScript(deps.scriptFile);
  const tokens = createVisitorTokens({
    key: visitorTokenKey(deps.secretKey),
    ttlSeconds: deps.config.visitorTokenTtlSeconds,
    clock: deps.clock,
  });
  const service = createWidgetService({
    db: deps.db,
    box: deps.box,
    tokens,
    publicBaseUrl: deps.publicBaseUrl,
    get scriptVersion() {
      return script.version;
    },
    records: deps.records,
  });
  const caller = (companyId: string) => ({ kind: 'chat' as const, tokenId: null, companyId, agentId: null });
  return {
    service,
    script,
    turns: createWidgetTurns({ widget: service, chat: deps.chat, stream: deps.stream }),
    events:
      deps.events ??
      conversationStatusOnly(
        async (companyId, id) =>
          (await deps.chat.conversations.get(caller(companyId), id).catch(() => null))?.status ?? 'open',
      ),
    /** The deployments module's `ChannelConfigRules`: `config.widget` checked, its secret sealed. */
    configRules: createWidgetConfigRules({ box: deps.box, allowAnyOrigin: deps.config.allowAnyOrigin }),
  };
}

export type WidgetModule = ReturnType<typeof createWidgetModule>;
