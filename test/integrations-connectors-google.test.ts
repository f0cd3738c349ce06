/**
 * Google Calendar and Gmail against a Google peer: the service-account JWT-bearer grant (signed
 * assertion checked with the key pair's public half, refused for a stranger's key, an expired
 * lifetime or an undelegated user), the token cache, each kind's live check and tools with their
 * failures (Google's error shape, 403 rateLimitExceeded, 429 with Retry-After, 5xx), the SSRF guard
 * on `token_uri`, and the live check through the API — the private key in no answer and no log.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gmailConnector, type GmailConfig } from '../src/adapters/connectors/gmail/gmail.connector.js';
import { createGoogleApi } from '../src/adapters/connectors/google-api.js';
import { createGoogleTokens, privateKeyProblem, type GoogleTokens } from '../src/adapters/connectors/google-auth.js';
import {
  googleCalendarConnector,
  type GoogleCalendarConfig,
} from '../src/adapters/connectors/google_calendar/google-calendar.connector.js';
import { createConnectorHttp, type ConnectorHttp } from '../src/adapters/connectors/http.js';
import { createTenant } from './helpers/factories.js';
import { CALENDAR_SCOPE, GMAIL_SEND_SCOPE, startFakeGoogle, type FakeGoogle } from './helpers/fake-google.js';
import { createLoggedTestApp, integrationsApi, type LoggedTestApp } from './helpers/integrations.js';
import { failure, signal, tool } from './helpers/connectors.js';

const options = { allowPrivate: true, timeoutMs: 3_000, maxResponseBytes: 64 * 1024 };

let google: FakeGoogle;
let http: ConnectorHttp;
/** A line from the middle of the private key: it must never show up anywhere. */
let keyLine: string;
beforeAll(async () => {
  google = await startFakeGoogle();
  http = createConnectorHttp(options);
  keyLine = google.credentials.private_key.split('\n')[5]!;
});
afterAll(async () => {
  await http.close();
  await google.close();
});

/** Fresh tokens and connectors, so each test sees its own cache. */
function connectors() {
  const tokens = createGoogleTokens(http);
  const api = createGoogleApi(http, tokens);
  return { tokens, calendar: googleCalendarConnector(api), gmail: gmailConnector(api, tokens) };
}

const calendarConfig = (overrides: Partial<GoogleCalendarConfig> = {}): GoogleCalendarConfig => ({
  calendar_id: 'team@acme.example',
  timezone: 'Europe/Paris',
  credentials: google.credentials,
  base_url: google.url,
  ...overrides,
});
const gmailConfig = (overrides: Partial<GmailConfig> = {}): GmailConfig => ({
  sender: 'agent@acme.example',
  credentials: google.credentials,
  base_url: google.url,
  ...overrides,
});

describe('service-account token grant', () => {
  const request = (tokens: GoogleTokens, extra: Record<string, unknown> = {}) =>
    tokens.accessToken({
      vendor: 'Google Calendar',
      credentials: google.credentials,
      scopes: [CALENDAR_SCOPE],
      signal: signal(),
      ...extra,
    });

  it('signs an RS256 assertion the token endpoint accepts, and answers its bearer token', async () => {
    const { tokens } = connectors();
    expect(await request(tokens, { subject: 'agent@acme.example' })).toMatch(/^ya29\./);
    const claims = google.grants.at(-1)!;
    expect(claims).toMatchObject({
      iss: google.credentials.client_email,
      aud: `${google.url}/token`,
      scope: CALENDAR_SCOPE,
      sub: 'agent@acme.example',
    });
    expect(Number(claims.exp) - Number(claims.iat)).toBeLessThanOrEqual(3600);
    const form = new URLSearchParams(google.requests.at(-1)!.body);
    expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    const header = JSON.parse(Buffer.from(form.get('assertion')!.split('.')[0]!, 'base64url').toString());
    expect(header).toEqual({ alg: 'RS256', typ: 'JWT', kid: google.credentials.private_key_id });
  });

  it('is refused for a key the service account does not have (invalid_grant), without quoting it', async () => {
    const { tokens } = connectors();
    const error = await failure(
      request(tokens, { credentials: { ...google.credentials, private_key: google.strangerKey } }),
    );
    expect(error).toMatchObject({ status: 400, retryable: false, code: 'invalid_grant' });
    expect(error.message).toBe(
      'Google Calendar: token grant refused (HTTP 400) invalid_grant (the service account key or its claims were refused): Invalid JWT Signature.',
    );
    expect(error.message).not.toContain(keyLine);
  });

  it('is refused for a user the service account may not act as (unauthorized_client)', async () => {
    const { tokens } = connectors();
    const error = await failure(request(tokens, { subject: 'boss@acme.example' }));
    expect(error).toMatchObject({ status: 401, retryable: false, code: 'unauthorized_client' });
    expect(error.message).toMatch(/domain-wide delegation/);
  });

  it('caches the token: two calls, one grant; a refused bearer (401) forgets it', async () => {
    const { tokens, calendar } = connectors();
    await calendar.test({ config: calendarConfig(), signal: signal() });
    await calendar.test({ config: calendarConfig(), signal: signal() });
    expect(tokens.grants).toBe(1);
    google.fail({
      kind: 'status',
      status: 401,
      body: { error: { code: 401, message: 'Invalid Credentials', status: 'UNAUTHENTICATED' } },
    });
    expect(await failure(calendar.test({ config: calendarConfig(), signal: signal() }))).toMatchObject({
      status: 401,
      code: 'UNAUTHENTICATED',
      retryable: false,
    });
    await calendar.test({ config: calendarConfig(), signal: signal() });
    expect(tokens.grants).toBe(2);
  });

  it('does not hand one key token to another key naming the same account', async () => {
    const { tokens } = connectors();
    await request(tokens);
    const error = await failure(
      request(tokens, { credentials: { ...google.credentials, private_key: google.strangerKey } }),
    );
    expect(error.code).toBe('invalid_grant');
  });

  it('calls token_uri through the SSRF guard', async () => {
    const guarded = createConnectorHttp({ ...options, allowPrivate: false });
    try {
      const error = await failure(request(createGoogleTokens(guarded)));
      expect(error.message).toMatch(/refused to call 127\.0\.0\.1:\d+: 127\.0\.0\.1 is a private or reserved address/);
    } finally {
      await guarded.close();
    }
  });

  it('reads only PEM PKCS#8 RSA keys', () => {
    expect(privateKeyProblem(google.credentials.private_key)).toBeUndefined();
    expect(privateKeyProblem(google.credentials.private_key.replace(/\n/g, '\\n'))).toBeUndefined();
    expect(privateKeyProblem('k')).toMatch(/PEM PKCS#8/);
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' });
    expect(privateKeyProblem(ec.toString())).toBe('private_key must be an RSA key, got ec');
    expect(privateKeyProblem('-----BEGIN PRIVATE KEY-----\nnot base64\n-----END PRIVATE KEY-----')).toMatch(
      /not a readable/,
    );
  });
});

describe('Google Calendar connector', () => {
  it('tests by reading the calendar', async () => {
    const { calendar } = connectors();
    expect(await calendar.test({ config: calendarConfig(), signal: signal() })).toEqual({
      detail: 'Connected to Google Calendar Acme support team (Europe/Paris)',
    });
    expect(google.requests.at(-1)).toMatchObject({ method: 'GET', path: '/calendar/v3/calendars/team%40acme.example' });
    const error = await failure(
      calendar.test({ config: calendarConfig({ calendar_id: 'nobody@acme.example' }), signal: signal() }),
    );
    expect(error).toMatchObject({
      status: 404,
      code: 'notFound',
      message: 'Google Calendar: request refused (HTTP 404): Not Found (notFound)',
    });
  });

  it('free_busy: busy slots in the configured zone, a free range, bounded ranges, a calendar it cannot see', async () => {
    const { calendar } = connectors();
    const freeBusy = tool(calendar, calendarConfig(), 'free_busy');
    expect(freeBusy.notification).toBe('tool_usage');
    const context = { config: calendarConfig(), signal: signal() };
    const busy = await freeBusy.run(
      { time_min: '2026-03-02T08:00:00+01:00', time_max: '2026-03-02T18:00:00+01:00' },
      context,
    );
    expect(busy.summary).toBe(
      'Busy 1 time in Mon, 2 Mar 2026, 08:00–18:00 (Europe/Paris): Mon, 2 Mar 2026, 10:00–11:00',
    );
    expect(busy.data).toMatchObject({ busy: [{ start: '2026-03-02T09:00:00Z', end: '2026-03-02T10:00:00Z' }] });
    expect(google.requests.at(-1)!.json).toEqual({
      timeMin: '2026-03-02T07:00:00.000Z',
      timeMax: '2026-03-02T17:00:00.000Z',
      timeZone: 'Europe/Paris',
      items: [{ id: 'team@acme.example' }],
    });
    const free = await freeBusy.run({ time_min: '2026-03-03T08:00:00Z', time_max: '2026-03-03T10:00:00Z' }, context);
    expect(free.summary).toBe('Free for all of Tue, 3 Mar 2026, 09:00–11:00 (Europe/Paris)');
    const calls = google.requests.length;
    expect(
      await failure(freeBusy.run({ time_min: '2026-03-01T00:00:00Z', time_max: '2026-04-15T00:00:00Z' }, context)),
    ).toMatchObject({ code: 'invalid_input', retryable: false });
    expect(
      await failure(freeBusy.run({ time_min: '2026-03-01T10:00', time_max: '2026-03-01T11:00' }, context)),
    ).toMatchObject({
      code: 'invalid_input',
    });
    expect(google.requests.length).toBe(calls);
    const unseen = { config: calendarConfig({ calendar_id: 'other@acme.example' }), signal: signal() };
    expect(
      await failure(freeBusy.run({ time_min: '2026-03-03T08:00:00Z', time_max: '2026-03-03T10:00:00Z' }, unseen)),
    ).toMatchObject({
      code: 'notFound',
      message: 'Google Calendar: free/busy not available for other@acme.example (notFound)',
    });
  });

  it('book_event: inserts the event with the zone; attendees need delegation; Google refusals', async () => {
    const { calendar } = connectors();
    const book = tool(calendar, calendarConfig(), 'book_event');
    expect(book.notification).toBe('api_call');
    const context = { config: calendarConfig(), signal: signal() };
    const outcome = await book.run(
      {
        summary: 'Call with Dana',
        start: '2026-03-04T14:00:00Z',
        end: '2026-03-04T14:30:00Z',
        description: 'Order #1042',
      },
      context,
    );
    expect(outcome.summary).toBe('Booked "Call with Dana" on Wed, 4 Mar 2026, 15:00–15:30 (Europe/Paris)');
    expect(outcome.data).toMatchObject({ id: expect.any(String), status: 'confirmed', time_zone: 'Europe/Paris' });
    expect(google.events.at(-1)).toMatchObject({
      calendarId: 'team@acme.example',
      summary: 'Call with Dana',
      description: 'Order #1042',
      start: { dateTime: '2026-03-04T14:00:00.000Z', timeZone: 'Europe/Paris' },
      end: { dateTime: '2026-03-04T14:30:00.000Z', timeZone: 'Europe/Paris' },
    });
    const invite = await failure(
      book.run(
        {
          summary: 'Call',
          start: '2026-03-04T15:00:00Z',
          end: '2026-03-04T15:30:00Z',
          attendee_email: 'dana@example.com',
        },
        context,
      ),
    );
    expect(invite).toMatchObject({ status: 403, code: 'forbiddenForServiceAccounts', retryable: false });
    expect(google.requests.at(-1)!.path).toMatch(/\/events\?sendUpdates=all$/);
    expect(
      await failure(book.run({ summary: 'Call', start: '2026-03-04T15:00:00Z', end: '2026-03-04T14:00:00Z' }, context)),
    ).toMatchObject({ code: 'invalid_input' });
  });

  it('maps 403 rateLimitExceeded and 429 (Retry-After) to retryable errors, 5xx too', async () => {
    const { calendar } = connectors();
    const context = { config: calendarConfig(), signal: signal() };
    await calendar.test(context); // the token is cached: the faults below reach the API call
    google.fail({
      kind: 'status',
      status: 403,
      body: {
        error: {
          code: 403,
          message: 'Rate Limit Exceeded',
          errors: [{ domain: 'usageLimits', reason: 'rateLimitExceeded', message: 'Rate Limit Exceeded' }],
        },
      },
    });
    expect(await failure(calendar.test(context))).toMatchObject({
      status: 403,
      retryable: true,
      code: 'rateLimitExceeded',
      message: 'Google Calendar: rate limit reached (HTTP 403): Rate Limit Exceeded (rateLimitExceeded)',
    });
    google.fail({
      kind: 'status',
      status: 429,
      headers: { 'retry-after': '20' },
      body: { error: { code: 429, message: 'Too many requests', status: 'RESOURCE_EXHAUSTED' } },
    });
    expect(await failure(calendar.test(context))).toMatchObject({
      status: 429,
      retryable: true,
      retryAfterMs: 20_000,
      code: 'RESOURCE_EXHAUSTED',
    });
    google.fail({
      kind: 'status',
      status: 503,
      body: { error: { code: 503, message: 'Backend Error', status: 'UNAVAILABLE' } },
    });
    expect(await failure(calendar.test(context))).toMatchObject({ status: 503, retryable: true });
  });
});

describe('Gmail connector', () => {
  it('tests with a grant for the sender and the gmail.send scope', async () => {
    const { gmail } = connectors();
    expect(await gmail.test({ config: gmailConfig(), signal: signal() })).toEqual({
      detail: `Authorised to send Gmail as agent@acme.example (service account ${google.credentials.client_email})`,
    });
    expect(google.grants.at(-1)).toMatchObject({ sub: 'agent@acme.example', scope: GMAIL_SEND_SCOPE });
    const error = await failure(gmail.test({ config: gmailConfig({ sender: 'boss@acme.example' }), signal: signal() }));
    expect(error.code).toBe('unauthorized_client');
  });

  it('send_email: an RFC 2822 message, base64url in raw, the subject RFC 2047-encoded', async () => {
    const { gmail } = connectors();
    const send = tool(gmail, gmailConfig(), 'send_email');
    expect(send.notification).toBe('email_sent');
    const outcome = await send.run(
      { to: 'dana@example.com', subject: 'Réservation confirmée ✓', body: 'Bonjour Dana,\nà demain.' },
      { config: gmailConfig(), signal: signal() },
    );
    expect(outcome.summary).toBe('E-mail sent to dana@example.com: Réservation confirmée ✓');
    expect(outcome.data).toMatchObject({
      recipient_email: 'dana@example.com',
      email_subject: 'Réservation confirmée ✓',
      id: expect.any(String),
    });
    expect(google.requests.at(-1)!.path).toBe('/gmail/v1/users/me/messages/send');
    const mail = google.sent.at(-1)!;
    expect(mail.headers.from).toBe('agent@acme.example');
    expect(mail.headers.to).toBe('dana@example.com');
    expect(mail.headers.subject).toMatch(/^=\?UTF-8\?[BQ]\?/);
    expect(mail.subject).toBe('Réservation confirmée ✓');
    expect(mail.headers['content-type']).toMatch(/^text\/plain; charset=utf-8/);
    expect(mail.body.replace(/\r\n/g, '\n').trimEnd()).toBe('Bonjour Dana,\nà demain.');
  });

  it('send_email: every line of the message ends in CRLF, whatever line breaks the body had', async () => {
    const { gmail } = connectors();
    const context = { config: gmailConfig(), signal: signal() };
    await tool(gmail, gmailConfig(), 'send_email').run(
      { to: 'dana@example.com', subject: 'Lines', body: `One\nTwo\r\nThree\rFour ${'long '.repeat(30)}\nEnd` },
      context,
    );
    const mail = google.sent.at(-1)!;
    expect(mail.raw).not.toMatch(/(^|[^\r])\n/);
    expect(mail.raw).not.toMatch(/\r(?!\n)/);
    expect(mail.body.split('\r\n').slice(0, 4)).toEqual(['One', 'Two', 'Three', expect.stringMatching(/^Four long/)]);
  });

  it('refuses more than one address, and reports Google refusals', async () => {
    const { gmail } = connectors();
    const send = tool(gmail, gmailConfig(), 'send_email');
    const context = { config: gmailConfig(), signal: signal() };
    const calls = google.requests.length;
    for (const to of [
      'a@example.com, b@example.com',
      'Dana <dana@example.com>',
      'dana@example.com\r\nBcc: x@example.com',
    ]) {
      expect(await failure(send.run({ to, subject: 'Hi', body: 'x' }, context))).toMatchObject({
        code: 'invalid_input',
      });
    }
    expect(google.requests.length).toBe(calls);
    await gmail.test(context);
    google.fail({
      kind: 'status',
      status: 429,
      headers: { 'retry-after': '5' },
      body: {
        error: {
          code: 429,
          message: 'User-rate limit exceeded',
          errors: [{ reason: 'rateLimitExceeded' }],
          status: 'RESOURCE_EXHAUSTED',
        },
      },
    });
    expect(await failure(send.run({ to: 'dana@example.com', subject: 'Hi', body: 'x' }, context))).toMatchObject({
      status: 429,
      retryable: true,
      retryAfterMs: 5000,
    });
    google.fail({
      kind: 'status',
      status: 500,
      body: { error: { code: 500, message: 'Internal error', status: 'INTERNAL' } },
    });
    expect(await failure(send.run({ to: 'dana@example.com', subject: 'Hi', body: 'x' }, context))).toMatchObject({
      status: 500,
      retryable: true,
    });
  });
});

describe('live check through the API', () => {
  let t: LoggedTestApp;
  beforeAll(async () => {
    t = await createLoggedTestApp({ ALLOW_PRIVATE_URLS: 'true', INTEGRATION_TIMEOUT_MS: '3000' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers ok for good credentials, the grant refusal for a wrong key; the key never shows', async () => {
    const tenant = await createTenant(t.container);
    const api = integrationsApi(t.app, tenant);
    const answers: string[] = [];
    const check = async (body: Record<string, unknown>) => {
      const created = await api.create(body);
      answers.push(created.body);
      expect(created.statusCode).toBe(201);
      const res = await api.test(created.json().id);
      answers.push(res.body);
      expect(res.statusCode).toBe(200);
      return res.json() as { ok: boolean; detail: string };
    };
    const calendarBody = (credentials = google.credentials) => ({
      name: 'Calendar',
      type: 'google_calendar',
      config: { calendar_id: 'team@acme.example', timezone: 'Europe/Paris', credentials, base_url: google.url },
    });
    expect(await check(calendarBody())).toMatchObject({
      ok: true,
      detail: 'Connected to Google Calendar Acme support team (Europe/Paris)',
    });
    expect(
      await check({
        name: 'Mail',
        type: 'gmail',
        config: { sender: 'agent@acme.example', credentials: google.credentials, base_url: google.url },
      }),
    ).toMatchObject({ ok: true, detail: expect.stringMatching(/^Authorised to send Gmail as agent@acme\.example/) });
    expect(await check(calendarBody({ ...google.credentials, private_key: google.strangerKey }))).toMatchObject({
      ok: false,
      detail: expect.stringMatching(/^Google Calendar: token grant refused \(HTTP 400\) invalid_grant/),
    });
    const bad = await api.create(calendarBody({ ...google.credentials, private_key: 'not a key' }));
    answers.push(bad.body);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().detail).toMatch(/config\.credentials.*PEM PKCS#8/);
    const listed = await api.list();
    answers.push(listed.body);
    for (const text of [...answers, ...t.logs]) {
      expect(text).not.toContain(keyLine);
      expect(text).not.toContain(google.strangerKey.split('\n')[5]!);
    }
  });
});
