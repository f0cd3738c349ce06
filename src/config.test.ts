import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      databaseUrl: undefined,
      invitationTtlDays: 7,
      bootstrap: { adminEmail: 'admin@example.com', apiKey: undefined, apiToken: undefined },
      rateLimits: {
        insightsPerHour: 1000,
        insightsPerMinute: 100,
        publicPerMinute: 600,
        chatConversationsPerMinute: 100,
        chatMessagesPerMinute: 60,
        chatStreamsPerMinute: 30,
      },
    });
    expect(config.dataDir).toMatch(/\/data$/);
    expect(Object.isFrozen(config.rateLimits)).toBe(true);
  });

  const bad: [Record<string, string>, string][] = [
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    [{ REDIS_URL: 'http://x' }, 'REDIS_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ RUN_WORKERS: 'maybe' }, 'RUN_WORKERS'],
    [{ BOOTSTRAP_API_KEY: 'short' }, 'BOOTSTRAP_API_KEY'],
    [{ BOOTSTRAP_API_KEY: 'xx_0123456789abcdefghijkl' }, 'BOOTSTRAP_API_KEY'],
    [{ BOOTSTRAP_API_TOKEN: 'sk_0123456789abcdefghijkl' }, 'BOOTSTRAP_API_TOKEN'],
    [{ BOOTSTRAP_ADMIN_EMAIL: 'nobody' }, 'BOOTSTRAP_ADMIN_EMAIL'],
    [{ RATE_LIMIT_PUBLIC_PER_MINUTE: '0' }, 'RATE_LIMIT_PUBLIC_PER_MINUTE'],
    [{ INVITATION_TTL_DAYS: '1.5' }, 'INVITATION_TTL_DAYS'],
    [{ SMTP_URL: 'ftp://mail' }, 'SMTP_URL'],
  ];
  for (const [env, variable] of bad) {
    it(`stops on a bad ${variable} and names it`, () => {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(new RegExp(`^Invalid configuration: ${variable} `));
    });
  }
});
