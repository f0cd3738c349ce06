/** Gmail API users.messages.send: config only for now; vendor calls are not built yet. */
import { Type } from '@sinclair/typebox';
import { BaseUrl, Email, ServiceAccountCredentials, unavailableConnector } from '../fields.js';

export const gmailConnector = unavailableConnector({
  type: 'gmail',
  name: 'Gmail',
  description: 'E-mail through Google Workspace: send an e-mail as the configured sender.',
  listed: true,
  secretKeys: ['credentials'],
  config: Type.Object(
    {
      sender: Email('The mailbox mail is sent as (domain-wide delegation).'),
      credentials: ServiceAccountCredentials,
      base_url: BaseUrl('https://gmail.googleapis.com'),
    },
    { additionalProperties: false },
  ),
});
