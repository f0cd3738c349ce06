/**
 * Every connector the platform knows, built once by the container from the integrations
 * config: the HTTP kinds share one client (network policy, time limit, size cap); SMTP gets the
 * same policy through its own resolver check. Kinds not built yet store and validate their
 * config and fail their test saying so.
 */
import type { ChannelVendors } from '../../ports/channels.js';
import type { ConnectorDefinition } from '../../ports/connectors.js';
import { createChannelVendors } from './channel-vendors.js';
import { customApiConnector } from './custom_api/custom-api.connector.js';
import { gmailConnector } from './gmail/gmail.connector.js';
import { createGoogleApi } from './google-api.js';
import { createGoogleTokens } from './google-auth.js';
import { googleCalendarConnector } from './google_calendar/google-calendar.connector.js';
import { hubspotConnector } from './hubspot/hubspot.connector.js';
import { mcpConnector } from './mcp/mcp.connector.js';
import { createConnectorHttp } from './http.js';
import type { ResolveAddresses } from './network-guard.js';
import { notionConnector } from './notion/notion.connector.js';
import { odooConnector } from './odoo/odoo.connector.js';
import { shopifyConnector } from './shopify/shopify.connector.js';
import { slackConnector } from './slack/slack.connector.js';
import { smtpConnector } from './smtp/smtp.connector.js';
import { createTeamsAuth } from './teams/teams.auth.js';
import { teamsConnector } from './teams/teams.connector.js';
import { whatsappConnector } from './whatsapp/whatsapp.connector.js';
import { zendeskConnector } from './zendesk/zendesk.connector.js';

export interface ConnectorsOptions {
  /** ALLOW_PRIVATE_URLS. */
  allowPrivate: boolean;
  /** INTEGRATION_TIMEOUT_MS. */
  timeoutMs: number;
  /** INTEGRATION_MAX_RESPONSE_KB, in bytes. */
  maxResponseBytes: number;
  resolve?: ResolveAddresses;
}

export function createConnectors(options: ConnectorsOptions): {
  definitions: ConnectorDefinition[];
  /** Slack, WhatsApp and Teams as channels (DESIGN §12), on the same guarded client. */
  channels: ChannelVendors;
  close(): Promise<void>;
} {
  const http = createConnectorHttp(options);
  const teamsAuth = createTeamsAuth(http);
  const googleTokens = createGoogleTokens(http);
  const google = createGoogleApi(http, googleTokens);
  const definitions = [
    shopifyConnector(http),
    zendeskConnector(http),
    hubspotConnector(http),
    slackConnector(http),
    whatsappConnector(http),
    notionConnector(http),
    odooConnector(http),
    googleCalendarConnector(google),
    gmailConnector(google, googleTokens),
    smtpConnector(options),
    customApiConnector(http),
    mcpConnector(http),
    teamsConnector(teamsAuth),
  ] as ConnectorDefinition[];
  return { definitions, channels: createChannelVendors(http, teamsAuth), close: () => http.close() };
}
