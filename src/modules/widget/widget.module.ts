/** createWidgetModule(deps) → the web widget: its service, turns, events, script and config rules. */
import { fileURLToPath } from 'node:url';
import type { WidgetConfig } from '../../config.widget.js';
import type { Db } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { CoherentCache } from '../../lib/coherent-cache.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { ChatModule, StreamOptions } from '../chat/index.js';
import { createWidgetConfigRules } from './widget.config.js';
import { createWidgetScript } from './widget.script.js';
import { createWidgetService, type WidgetRecord } from './widget.service.js';
import { createVisitorTokens, visitorTokenKey } from './widget.tokens.js';
import { createWidgetTurns } from './widget.turns.js';

export interface WidgetModuleDeps {
  db: Db;
  clock: Clock;
  config: WidgetConfig;
  /** The instance's SECRET_KEY: seals identity secrets (through `box`) and keys visitor tokens. */
  secretKey: Buffer;
  box: SecretBox;
  publicBaseUrl: string;
  chat: Pick<ChatModule, 'turns' | 'streams' | 'resume' | 'conversations' | 'events'>;
  stream: StreamOptions;
  /** The built script; default dist/web/widget.js (the same from src/ and from dist/). */
  scriptFile?: string;
  /** Keys' deployments, kept coherent by the serving-change notifications (migration 0120). */
  records: CoherentCache<WidgetRecord> | null;
}

export function createWidgetModule(deps: WidgetModuleDeps) {
  const script = createWidgetScript(
    deps.scriptFile ?? fileURLToPath(new URL('../../../dist/web/widget.js', import.meta.url)),
  );
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
  return {
    service,
    script,
    turns: createWidgetTurns({ widget: service, chat: deps.chat, stream: deps.stream }),
    /** The chat module: conversation events (hand-off status, a person's replies) reach the widget from it. */
    chat: deps.chat,
    /** The deployments module's `ChannelConfigRules`: `config.widget` checked, its secret sealed. */
    configRules: createWidgetConfigRules({ box: deps.box, allowAnyOrigin: deps.config.allowAnyOrigin }),
  };
}

export type WidgetModule = ReturnType<typeof createWidgetModule>;
