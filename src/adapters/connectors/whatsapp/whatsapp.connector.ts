/** WhatsApp Cloud API (business messaging, not listed): config only for now; vendor calls are not built yet. */
import { Type } from '@sinclair/typebox';
import { BaseUrl, SecretText, unavailableConnector } from '../fields.js';

export const whatsappConnector = unavailableConnector({
  type: 'whatsapp',
  name: 'WhatsApp Business',
  description: "Business messaging: send a message to a customer's number.",
  listed: false,
  secretKeys: ['access_token'],
  config: Type.Object(
    {
      access_token: SecretText('System-user access token'),
      phone_number_id: Type.String({ pattern: '^[0-9]{1,30}$', description: 'The sending phone number id.' }),
      api_version: Type.Optional(
        Type.String({ pattern: '^v[0-9]{1,3}\\.[0-9]{1,2}$', description: 'Graph API version, e.g. v21.0.' }),
      ),
      base_url: BaseUrl('https://graph.facebook.com'),
    },
    { additionalProperties: false },
  ),
});
