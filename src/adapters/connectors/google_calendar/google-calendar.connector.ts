/** Google Calendar API v3: config only for now; vendor calls (JWT-bearer grant) are not built yet. */
import { Type } from '@sinclair/typebox';
import { BaseUrl, ServiceAccountCredentials, Text, unavailableConnector } from '../fields.js';

/** Whether `zone` is an IANA time zone this runtime knows. */
function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export const googleCalendarConnector = unavailableConnector({
  type: 'google_calendar',
  name: 'Google Calendar',
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
      : undefined,
});
