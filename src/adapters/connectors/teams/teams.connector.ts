/**
 * Microsoft Teams through the Bot Framework (team messaging): an Azure Bot's app id and password
 * (client secret), the tenant for single-tenant bots, and where its tokens and keys come from.
 * The live check is the client-credentials grant itself (the bot's credentials accepted by
 * Microsoft's token endpoint). A `teams` deployment answers in Teams through it (DESIGN §12);
 * agents get no tool from it.
 */
import { Type } from '@sinclair/typebox';
import type { ConnectorDefinition } from '../../../ports/connectors.js';
import type { TeamsChannelConfig } from '../../../ports/channels.js';
import { HttpUrl, SecretText } from '../fields.js';
import type { TeamsAuth } from './teams.auth.js';

/** The Bot Framework's service hosts (Teams, Web Chat and the other channels), the default of service_url_hosts. */
export const BOT_FRAMEWORK_SERVICE_HOSTS = ['smba.trafficmanager.net', '*.botframework.com', '*.teams.microsoft.com'];

const HOST =
  '^(\\*\\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,62}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*(:[0-9]{1,5})?$';

export function teamsConnector(auth: TeamsAuth): ConnectorDefinition<TeamsChannelConfig> {
  return {
    type: 'teams',
    name: 'Microsoft Teams',
    description: 'Team messaging: deploy an agent as a Teams bot (Azure Bot / Bot Framework) that answers in chats.',
    listed: true,
    secretKeys: ['app_password'],
    config: Type.Object(
      {
        app_id: Type.String({
          pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
          description: "The bot's Microsoft App ID (a GUID).",
        }),
        app_password: SecretText("The bot's client secret (Microsoft App password)"),
        tenant_id: Type.Optional(
          Type.String({
            pattern: '^[A-Za-z0-9.-]{1,100}$',
            description: 'The Entra tenant of a single-tenant bot (omit for multi-tenant bots).',
          }),
        ),
        token_url: Type.Optional(
          HttpUrl(
            'OAuth 2.0 token endpoint (default https://login.microsoftonline.com/{tenant_id or botframework.com}/oauth2/v2.0/token).',
          ),
        ),
        openid_metadata_url: Type.Optional(
          HttpUrl(
            "OpenID metadata of the tokens Teams sends (default Bot Framework's https://login.botframework.com/v1/.well-known/openidconfiguration).",
          ),
        ),
        service_url_hosts: Type.Optional(
          Type.Array(Type.String({ minLength: 1, maxLength: 260, pattern: HOST }), {
            minItems: 1,
            maxItems: 20,
            description: `Hosts an activity's serviceUrl may name: host, host:port or *.domain (default ${BOT_FRAMEWORK_SERVICE_HOSTS.join(', ')}).`,
          }),
        ),
      },
      { additionalProperties: false },
    ),
    async test(context) {
      await auth.accessToken(context.config, context.signal);
      return { detail: `Microsoft accepted the credentials of bot ${context.config.app_id}` };
    },
    tools: () => [],
  };
}
