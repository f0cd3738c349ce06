/** Notion API (notes workspace): config only for now; vendor calls are not built yet. */
import { Type } from '@sinclair/typebox';
import { BaseUrl, SecretText, unavailableConnector } from '../fields.js';

export const notionConnector = unavailableConnector({
  type: 'notion',
  name: 'Notion',
  description: 'Notes workspace: search pages and add a note page to a database.',
  listed: true,
  secretKeys: ['access_token'],
  config: Type.Object(
    {
      access_token: SecretText('Internal integration token'),
      database_id: Type.String({
        pattern: '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$',
        description: 'The database notes are added to (32 hex digits, dashes optional).',
      }),
      base_url: BaseUrl('https://api.notion.com'),
    },
    { additionalProperties: false },
  ),
});
