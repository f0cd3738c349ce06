/**
 * Integration secrets at rest and in flight: sealed in the database (never in clear), masked in
 * every answer, absent from the logs of requests that used them, bound to their row, and a start
 * with another key refused with a clear message.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { createContainer } from '../src/container.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { createTenant, type TestTenant } from './helpers/factories.js';
import { startFakeSlack, type FakeSlack } from './helpers/fake-slack.js';
import { createLoggedTestApp, integrationsApi, type LoggedTestApp } from './helpers/integrations.js';
import { createScratchDatabase } from './helpers/scratch-db.js';

let t: LoggedTestApp;
let slack: FakeSlack;
let tenant: TestTenant;
beforeAll(async () => {
  t = await createLoggedTestApp({ ALLOW_PRIVATE_URLS: 'true' });
  slack = await startFakeSlack();
  tenant = await createTenant(t.container);
});
afterAll(async () => {
  await slack.close();
  await t.close();
});

describe('secrets never leak', () => {
  it('are sealed in the row, masked in every answer and absent from the logs, including the live check', async () => {
    const api = integrationsApi(t.app, tenant);
    const created = await api.create({
      name: 'Slack',
      type: 'slack',
      config: { bot_token: slack.token, channel: '#support', base_url: slack.baseUrl },
    });
    expect(created.statusCode).toBe(201);
    const { id } = created.json();
    const answers = [
      created,
      await api.get(id),
      await api.list(),
      await api.update(id, { name: 'Team Slack', config: { channel: 'C0SUPPORT' } }),
      await api.test(id),
    ];
    expect(answers.at(-1)!.json()).toMatchObject({
      ok: true,
      detail: 'Connected to Slack workspace Acme as switchboard',
    });
    for (const answer of answers) expect(answer.body).not.toContain(slack.token);
    expect(created.json().config.bot_token).toBe(`••••${slack.token.slice(-4)}`);

    const row = await sql<{ config: string }>`select config::text as config from integrations where id = ${id}`.execute(
      t.container.db,
    );
    const stored = row.rows[0]!.config;
    expect(stored).not.toContain(slack.token);
    expect(stored).not.toContain(slack.token.slice(5));
    expect(JSON.parse(stored).bot_token).toMatch(/^enc:v1:[A-Za-z0-9_-]+$/);
    expect(JSON.parse(stored).channel).toBe('C0SUPPORT');

    // The vendor got the token: the request used it.
    expect(slack.requests.at(-1)!.headers.authorization).toBe(`Bearer ${slack.token}`);
    const logs = t.logs.join('\n');
    expect(logs).toContain('integration tested');
    expect(logs).toContain('"path":"/api/public/integrations"');
    expect(logs).not.toContain(slack.token);
    expect(logs).not.toContain(slack.token.slice(5, 20));
  });

  it('keeps a failing check free of the secret too', async () => {
    const api = integrationsApi(t.app, tenant);
    const bad = 'xoxb-0000-0000-wrongtokenvalue';
    const { id } = (
      await api.create({
        name: 'Slack',
        type: 'slack',
        config: { bot_token: bad, channel: '#support', base_url: slack.baseUrl },
      })
    ).json();
    const res = await api.test(id);
    expect(res.json()).toMatchObject({ ok: false, detail: 'Slack: invalid_auth (the bot token was refused)' });
    expect(res.body + t.logs.join('\n')).not.toContain(bad);
  });

  it('binds a sealed value to its row: copied to another integration it reads as missing, never as garbage', async () => {
    const api = integrationsApi(t.app, tenant);
    const source = (
      await api.create({ name: 'A', type: 'slack', config: { bot_token: slack.token, channel: '#support' } })
    ).json();
    const target = (
      await api.create({
        name: 'B',
        type: 'slack',
        config: { bot_token: 'xoxb-other-token-000000000', channel: '#support' },
      })
    ).json();
    await sql`update integrations set config = (select config from integrations where id = ${source.id}) where id = ${target.id}`.execute(
      t.container.db,
    );
    expect((await api.get(target.id)).json().config).toEqual({ channel: '#support' });
    const check = await api.test(target.id);
    expect(check.json()).toMatchObject({
      ok: false,
      detail: expect.stringMatching(/stored config is not valid: config.bot_token is required/),
    });
  });

  it('shows short secrets without any of their characters', async () => {
    const res = await integrationsApi(t.app, tenant).create({
      name: 'Mail',
      type: 'smtp',
      config: { host: 'mail.example.com', username: 'bot', password: 'hunter2', from: 'bot@example.com' },
    });
    expect(res.json().config).toMatchObject({ password: '••••', username: 'bot' });
  });
});

describe('the secret key', () => {
  it('is validated: 32 bytes as hex or base64', () => {
    const key = randomBytes(32);
    expect(loadConfig({ SECRET_KEY: key.toString('hex').toUpperCase() }).integrations.secretKeyHex).toBe(
      key.toString('hex'),
    );
    expect(loadConfig({ SECRET_KEY: key.toString('base64') }).integrations.secretKeyHex).toBe(key.toString('hex'));
    expect(loadConfig({ SECRET_KEY: key.toString('base64url') }).integrations.secretKeyHex).toBe(key.toString('hex'));
    for (const bad of ['short', randomBytes(16).toString('hex'), randomBytes(31).toString('base64')]) {
      expect(() => loadConfig({ SECRET_KEY: bad })).toThrow(ConfigError);
    }
  });

  it('is generated once into DATA_DIR with a warning, and another key on the same database fails start-up', async () => {
    const db = await createScratchDatabase();
    const dataDir = await mkdtemp(path.join(tmpdir(), 'switchboard-secret-'));
    const start = async (env: Record<string, string>) => {
      const lines: string[] = [];
      const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
      const config = loadConfig({
        NODE_ENV: 'test',
        RUN_WORKERS: 'false',
        DATABASE_URL: db.url,
        DATA_DIR: dataDir,
        ...env,
      });
      const container = createContainer({ config, databaseUrl: db.url, log });
      try {
        await migrateToLatest(container.db);
        await container.start();
        return { lines, error: null };
      } catch (error) {
        return { lines, error: error as Error };
      } finally {
        await container.close();
      }
    };
    try {
      const first = await start({});
      expect(first.error).toBeNull();
      expect(first.lines.join('\n')).toMatch(/SECRET_KEY is not set: generated a key/);
      expect((await stat(path.join(dataDir, 'secret.key'))).mode & 0o777).toBe(0o600);
      const second = await start({});
      expect(second.error).toBeNull();
      expect(second.lines).toEqual([]);
      const wrong = await start({ SECRET_KEY: randomBytes(32).toString('hex') });
      expect(wrong.error?.message).toMatch(
        /SECRET_KEY does not match the key the stored integration secrets were encrypted with/,
      );
    } finally {
      await rm(dataDir, { recursive: true, force: true });
      await db.drop();
    }
  });
});
