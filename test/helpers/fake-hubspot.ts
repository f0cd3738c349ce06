/**
 * A HubSpot CRM v3 peer (`base_url` = its url): bearer token checked (401
 * `INVALID_AUTHENTICATION`), `GET /crm/v3/objects/contacts`, `POST …/contacts/search` (EQ on
 * email) and `POST /crm/v3/objects/notes` (hs_timestamp required, association type 202 to an
 * existing contact, else 400 `VALIDATION_ERROR`). Errors `{status:"error", message,
 * correlationId, category}`. Faults come from the vendor peer underneath.
 */
import { randomUUID } from 'node:crypto';
import { startVendorPeer, type PeerAnswer, type PeerRequest, type VendorPeer } from './vendor-peer.js';

export interface FakeHubspot extends VendorPeer {
  baseUrl: string;
  token: string;
  notes: { id: string; body: string; timestamp: string; contactId: string }[];
}

export const HUBSPOT_CONTACTS = [
  {
    id: '501',
    properties: {
      email: 'ana@example.com',
      firstname: 'Ana',
      lastname: 'Lima',
      phone: '+351 555 0101',
      company: 'Lima Lda',
    },
  },
];

const error = (status: number, category: string, message: string): PeerAnswer => ({
  status,
  body: { status: 'error', message, correlationId: randomUUID(), category },
});

export async function startFakeHubspot(token = 'pat-eu1-peer-0000-0000-000000000001'): Promise<FakeHubspot> {
  const notes: FakeHubspot['notes'] = [];
  const peer = await startVendorPeer((request: PeerRequest): PeerAnswer => {
    if (request.headers.authorization !== `Bearer ${token}`) {
      return error(
        401,
        'INVALID_AUTHENTICATION',
        'Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview',
      );
    }
    const path = request.path.split('?')[0]!;
    if (request.method === 'POST' && request.body && request.json === undefined) {
      return error(400, 'VALIDATION_ERROR', 'Invalid input JSON on line 1');
    }
    const body = (request.json ?? {}) as Record<string, unknown>;
    if (request.method === 'GET' && path === '/crm/v3/objects/contacts') {
      return { status: 200, body: { results: HUBSPOT_CONTACTS.slice(0, 1), paging: { next: { after: '502' } } } };
    }
    if (request.method === 'POST' && path === '/crm/v3/objects/contacts/search') {
      const filter = (
        body.filterGroups as { filters?: { propertyName?: string; operator?: string; value?: string }[] }[]
      )?.[0]?.filters?.[0];
      if (!filter || filter.propertyName !== 'email' || filter.operator !== 'EQ') {
        return error(400, 'VALIDATION_ERROR', 'Invalid filter');
      }
      const found = HUBSPOT_CONTACTS.filter((contact) => contact.properties.email === filter.value?.toLowerCase());
      return { status: 200, body: { total: found.length, results: found } };
    }
    if (request.method === 'POST' && path === '/crm/v3/objects/notes') {
      const properties = (body.properties ?? {}) as Record<string, unknown>;
      if (typeof properties.hs_timestamp !== 'string' || Number.isNaN(Date.parse(properties.hs_timestamp))) {
        return error(400, 'VALIDATION_ERROR', 'Property values were not valid: hs_timestamp is required');
      }
      if (String(properties.hs_note_body ?? '').length > 65_536) {
        return error(
          400,
          'VALIDATION_ERROR',
          'Property values were not valid: hs_note_body is longer than 65536 characters',
        );
      }
      const association = (body.associations as { to?: { id?: string }; types?: Record<string, unknown>[] }[])?.[0];
      const type = association?.types?.[0];
      if (!association || type?.associationCategory !== 'HUBSPOT_DEFINED' || type.associationTypeId !== 202) {
        return error(400, 'VALIDATION_ERROR', 'Invalid association type');
      }
      const contactId = String(association.to?.id);
      if (!HUBSPOT_CONTACTS.some((contact) => contact.id === contactId)) {
        return error(
          400,
          'VALIDATION_ERROR',
          `One or more associations are invalid: contact ${contactId} does not exist`,
        );
      }
      const note = {
        id: String(9000 + notes.length + 1),
        body: String(properties.hs_note_body ?? ''),
        timestamp: properties.hs_timestamp,
        contactId,
      };
      notes.push(note);
      return {
        status: 201,
        body: { id: note.id, properties: { hs_note_body: note.body, hs_timestamp: note.timestamp }, archived: false },
      };
    }
    return error(404, 'OBJECT_NOT_FOUND', 'Resource not found');
  });
  return Object.assign(peer, { baseUrl: peer.url, token, notes });
}
