/**
 * Google Calendar API v3 with a service account (JWT-bearer grant, scope `auth/calendar`): the
 * live check reads the calendar (`GET /calendar/v3/calendars/{id}`), `free_busy` asks
 * `POST /calendar/v3/freeBusy` for a bounded range, `book_event` inserts an event
 * (`POST /calendar/v3/calendars/{id}/events`). Times go out as UTC instants with the config's
 * time zone, and summaries are written in that zone.
 */
import { Type } from '@sinclair/typebox';
import { ConnectorError, type ConnectorContext, type ConnectorDefinition } from '../../../ports/connectors.js';
import { BaseUrl, ServiceAccountCredentials, Text, apiRoot } from '../fields.js';
import type { GoogleApi } from '../google-api.js';
import { privateKeyProblem, type ServiceAccountKey } from '../google-auth.js';

export type GoogleCalendarConfig = {
  calendar_id: string;
  timezone?: string;
  credentials: ServiceAccountKey;
  base_url?: string;
};

const VENDOR = 'Google Calendar';
const SCOPES = ['https://www.googleapis.com/auth/calendar'];
const DAY_MS = 24 * 3600 * 1000;
const MAX_FREE_BUSY_DAYS = 31;
const MAX_EVENT_DAYS = 14;
/** RFC 3339 with an offset (Google refuses a timeMin without one). */
const INSTANT = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|z|[+-]\\d{2}:\\d{2})$';

/** Whether `zone` is an IANA time zone this runtime knows. */
function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function instant(value: unknown, field: string): Date {
  const text = String(value);
  const date = new Date(text);
  if (!new RegExp(INSTANT).test(text) || Number.isNaN(date.getTime())) {
    throw new ConnectorError(
      VENDOR,
      `${field} must be an ISO 8601 date-time with an offset, got ${text.slice(0, 40)}`,
      {
        retryable: false,
        code: 'invalid_input',
      },
    );
  }
  return date;
}

function formatter(zone: string) {
  const day = new Intl.DateTimeFormat('en-GB', {
    timeZone: zone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
  });
  const time = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit' });
  return {
    span(start: Date, end: Date): string {
      const sameDay = day.format(start) === day.format(end);
      return sameDay
        ? `${day.format(start)}, ${time.format(start)}–${time.format(end)}`
        : `${day.format(start)} ${time.format(start)} – ${day.format(end)} ${time.format(end)}`;
    },
  };
}

export function credentialsProblem(credentials: unknown): { key: string; problem: string } | undefined {
  const key = (credentials as { private_key?: unknown } | undefined)?.private_key;
  if (typeof key !== 'string') return undefined; // the schema names it
  const problem = privateKeyProblem(key);
  return problem ? { key: 'credentials', problem } : undefined;
}

export function googleCalendarConnector(google: GoogleApi): ConnectorDefinition<GoogleCalendarConfig> {
  function call(context: ConnectorContext<GoogleCalendarConfig>, method: 'GET' | 'POST', path: string, json?: unknown) {
    return google.request({
      vendor: VENDOR,
      credentials: context.config.credentials,
      scopes: SCOPES,
      method,
      url: `${apiRoot(context.config, 'https://www.googleapis.com')}/calendar/v3${path}`,
      json,
      signal: context.signal,
    });
  }
  const calendarPath = (config: GoogleCalendarConfig) => `/calendars/${encodeURIComponent(config.calendar_id)}`;
  const zoneOf = (config: GoogleCalendarConfig) => config.timezone ?? 'UTC';

  return {
    type: 'google_calendar',
    name: VENDOR,
    description: 'Calendar: check free/busy time in a range and book an event.',
    listed: true,
    secretKeys: ['credentials'],
    config: Type.Object(
      {
        calendar_id: Text(320, { description: 'The calendar id (often an e-mail address).' }),
        timezone: Type.Optional(Text(64, { description: 'IANA zone name, e.g. Europe/Paris (default UTC).' })),
        credentials: ServiceAccountCredentials,
        base_url: BaseUrl('https://www.googleapis.com'),
      },
      { additionalProperties: false },
    ),
    refine: (config) =>
      typeof config.timezone === 'string' && !isTimeZone(config.timezone)
        ? { key: 'timezone', problem: `is not a known time zone name: ${config.timezone}` }
        : credentialsProblem(config.credentials),
    async test(context) {
      const answer = await call(context, 'GET', calendarPath(context.config));
      const body = (answer.body ?? {}) as { summary?: unknown; timeZone?: unknown };
      const name = typeof body.summary === 'string' ? body.summary : context.config.calendar_id;
      const zone = typeof body.timeZone === 'string' ? ` (${body.timeZone})` : '';
      return { detail: `Connected to Google Calendar ${name}${zone}` };
    },
    tools: (config) => [
      {
        name: 'free_busy',
        description: `Check when the calendar ${config.calendar_id} is busy between two date-times (at most ${MAX_FREE_BUSY_DAYS} days apart); answers the busy slots in ${zoneOf(config)}.`,
        input: Type.Object(
          {
            time_min: Type.String({
              pattern: INSTANT,
              description: 'Start, ISO 8601 with offset (2026-03-02T09:00:00+01:00).',
            }),
            time_max: Type.String({ pattern: INSTANT, description: 'End, ISO 8601 with offset, after time_min.' }),
          },
          { additionalProperties: false },
        ),
        notification: 'tool_usage',
        async run(input, context) {
          const start = instant(input.time_min, 'time_min');
          const end = instant(input.time_max, 'time_max');
          if (end <= start || end.getTime() - start.getTime() > MAX_FREE_BUSY_DAYS * DAY_MS) {
            throw new ConnectorError(
              VENDOR,
              `time_max must be after time_min and at most ${MAX_FREE_BUSY_DAYS} days later`,
              { retryable: false, code: 'invalid_input' },
            );
          }
          const zone = zoneOf(context.config);
          const id = context.config.calendar_id;
          const answer = await call(context, 'POST', '/freeBusy', {
            timeMin: start.toISOString(),
            timeMax: end.toISOString(),
            timeZone: zone,
            items: [{ id }],
          });
          const calendars = ((answer.body ?? {}) as { calendars?: Record<string, unknown> }).calendars ?? {};
          const entry = (calendars[id] ?? {}) as { busy?: unknown; errors?: { reason?: string }[] };
          if (Array.isArray(entry.errors) && entry.errors.length) {
            const reason = String(entry.errors[0]?.reason ?? 'unknown');
            throw new ConnectorError(VENDOR, `free/busy not available for ${id} (${reason})`, {
              status: answer.status,
              retryable: reason === 'backendError',
              code: reason,
            });
          }
          const busy = (Array.isArray(entry.busy) ? entry.busy : [])
            .map((slot) => slot as { start?: unknown; end?: unknown })
            .filter((slot) => typeof slot.start === 'string' && typeof slot.end === 'string')
            .map((slot) => ({ start: String(slot.start), end: String(slot.end) }));
          const format = formatter(zone);
          const range = format.span(start, end);
          const summary = busy.length
            ? `Busy ${busy.length} time${busy.length === 1 ? '' : 's'} in ${range} (${zone}): ${busy
                .slice(0, 10)
                .map((slot) => format.span(new Date(slot.start), new Date(slot.end)))
                .join('; ')}${busy.length > 10 ? '; …' : ''}`
            : `Free for all of ${range} (${zone})`;
          return {
            summary,
            data: {
              calendar_id: id,
              time_zone: zone,
              time_min: start.toISOString(),
              time_max: end.toISOString(),
              busy,
            },
          };
        },
      },
      {
        name: 'book_event',
        description: `Book an event in the calendar ${config.calendar_id} (times in ISO 8601 with offset; ${zoneOf(config)} is the calendar's zone). Check free_busy first.`,
        input: Type.Object(
          {
            summary: Type.String({ minLength: 1, maxLength: 300, description: 'The event title.' }),
            start: Type.String({ pattern: INSTANT, description: 'Start, ISO 8601 with offset.' }),
            end: Type.String({ pattern: INSTANT, description: 'End, ISO 8601 with offset, after start.' }),
            attendee_email: Type.Optional(
              Type.String({ format: 'email', maxLength: 320, description: 'Invite this person (optional).' }),
            ),
            description: Type.Optional(Type.String({ maxLength: 4000, description: 'Notes for the event.' })),
          },
          { additionalProperties: false },
        ),
        notification: 'api_call',
        async run(input, context) {
          const start = instant(input.start, 'start');
          const end = instant(input.end, 'end');
          if (end <= start || end.getTime() - start.getTime() > MAX_EVENT_DAYS * DAY_MS) {
            throw new ConnectorError(VENDOR, `end must be after start and at most ${MAX_EVENT_DAYS} days later`, {
              retryable: false,
              code: 'invalid_input',
            });
          }
          const attendee = typeof input.attendee_email === 'string' ? input.attendee_email : undefined;
          if (attendee !== undefined && !/^[^\s@<>,;"]+@[^\s@<>,;"]+\.[^\s@<>,;"]+$/.test(attendee)) {
            throw new ConnectorError(VENDOR, 'attendee_email is not an e-mail address', {
              retryable: false,
              code: 'invalid_input',
            });
          }
          const zone = zoneOf(context.config);
          const title = String(input.summary).slice(0, 300);
          const query = attendee ? '?sendUpdates=all' : '';
          const answer = await call(context, 'POST', `${calendarPath(context.config)}/events${query}`, {
            summary: title,
            ...(typeof input.description === 'string' && input.description ? { description: input.description } : {}),
            start: { dateTime: start.toISOString(), timeZone: zone },
            end: { dateTime: end.toISOString(), timeZone: zone },
            ...(attendee ? { attendees: [{ email: attendee }] } : {}),
          });
          const event = (answer.body ?? {}) as { id?: unknown; htmlLink?: unknown; status?: unknown };
          const who = attendee ? ` with ${attendee}` : '';
          return {
            summary: `Booked "${title}" on ${formatter(zone).span(start, end)} (${zone})${who}`,
            data: {
              id: typeof event.id === 'string' ? event.id : null,
              status: typeof event.status === 'string' ? event.status : null,
              html_link: typeof event.htmlLink === 'string' ? event.htmlLink : null,
              start: start.toISOString(),
              end: end.toISOString(),
              time_zone: zone,
            },
          };
        },
      },
    ],
  };
}
