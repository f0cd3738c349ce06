/** HubSpot CRM v3: config only for now; vendor calls are not built yet. */
import { Type } from '@sinclair/typebox';
import { BaseUrl, SecretText, unavailableConnector } from '../fields.js';

export const hubspotConnector = unavailableConnector({
  type: 'hubspot',
  name: 'HubSpot',
  description: 'CRM: find a contact by e-mail and log a note of the conversation on it.',
  listed: true,
  secretKeys: ['access_token'],
  config: Type.Object(
    {
      access_token: SecretText('Private app access token'),
      portal_id: Type.Optional(Type.String({ pattern: '^[0-9]{1,20}$', description: 'The HubSpot account (hub) id.' })),
      base_url: BaseUrl('https://api.hubapi.com'),
    },
    { additionalProperties: false },
  ),
});
