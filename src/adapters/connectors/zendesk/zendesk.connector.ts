/** Zendesk Support API v2 (help desk): config only for now; vendor calls are not built yet. */
import { Type } from '@sinclair/typebox';
import { BaseUrl, Email, SecretText, unavailableConnector } from '../fields.js';

export const zendeskConnector = unavailableConnector({
  type: 'zendesk',
  name: 'Zendesk',
  description:
    'Help desk: open a ticket with the conversation when a customer asks for a person; read a ticket status.',
  listed: true,
  secretKeys: ['api_token'],
  config: Type.Object(
    {
      subdomain: Type.String({
        pattern: '^[a-z0-9][a-z0-9-]{0,62}$',
        maxLength: 63,
        description: 'The account subdomain: acme for acme.zendesk.com.',
      }),
      email: Email('The agent e-mail the API token belongs to.'),
      api_token: SecretText('Zendesk API token'),
      base_url: BaseUrl('https://{subdomain}.zendesk.com'),
    },
    { additionalProperties: false },
  ),
});
