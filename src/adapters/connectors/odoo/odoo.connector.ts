/** Odoo external JSON-RPC (ERP, not listed): config only for now; vendor calls are not built yet. */
import { Type } from '@sinclair/typebox';
import { HttpUrl, SecretText, Text, unavailableConnector } from '../fields.js';

export const odooConnector = unavailableConnector({
  type: 'odoo',
  name: 'Odoo',
  description: "ERP: look up an invoice or a product's stock.",
  listed: false,
  secretKeys: ['api_key'],
  config: Type.Object(
    {
      url: HttpUrl('The Odoo server root; calls go to {url}/jsonrpc.'),
      database: Text(200, { description: 'The Odoo database name.' }),
      username: Text(320, { description: 'The login the API key belongs to.' }),
      api_key: SecretText('Odoo API key'),
    },
    { additionalProperties: false },
  ),
});
