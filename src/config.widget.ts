/** The web widget's settings (DESIGN §12), read from the environment src/config.ts is given. */
import { bool, int, type Env } from './config.parse.js';

/** Origins, visitor tokens and the limits of the widget's public routes. */
export interface WidgetConfig {
  /** WIDGET_ALLOW_ANY_ORIGIN: accept `*` in a deployment's `allowed_origins` (off: exact origins only). */
  allowAnyOrigin: boolean;
  /** WIDGET_VISITOR_TOKEN_TTL_HOURS: how long a visitor token is valid. */
  visitorTokenTtlSeconds: number;
  /** RATE_LIMIT_WIDGET_VISITOR_PER_MINUTE: messages (and their resumes) per visitor. */
  visitorPerMinute: number;
  /** RATE_LIMIT_WIDGET_ADDRESS_PER_MINUTE: every widget route per client address. */
  addressPerMinute: number;
  /** RATE_LIMIT_WIDGET_SESSIONS_PER_MINUTE: new visitor sessions per client address. */
  sessionsPerMinute: number;
}

export function widgetConfig(env: Env): WidgetConfig {
  return {
    allowAnyOrigin: bool(env, 'WIDGET_ALLOW_ANY_ORIGIN', false),
    visitorTokenTtlSeconds: int(env, 'WIDGET_VISITOR_TOKEN_TTL_HOURS', 24 * 30, 1, 24 * 366) * 3600,
    visitorPerMinute: int(env, 'RATE_LIMIT_WIDGET_VISITOR_PER_MINUTE', 20, 1, 10_000_000),
    addressPerMinute: int(env, 'RATE_LIMIT_WIDGET_ADDRESS_PER_MINUTE', 300, 1, 10_000_000),
    sessionsPerMinute: int(env, 'RATE_LIMIT_WIDGET_SESSIONS_PER_MINUTE', 30, 1, 10_000_000),
  };
}
