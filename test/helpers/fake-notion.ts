/**
 * A Notion API peer (`base_url` = its url): bearer token and `Notion-Version` checked (401
 * `unauthorized`, 400 `missing_version`), `GET /v1/users/me`, `POST /v1/search` (pages only,
 * cursor paging of `page_size`), `GET /v1/databases/{id}` (404 `object_not_found`) and
 * `POST /v1/pages` (title property and rich-text lengths validated: 400 `validation_error`).
 * Errors `{object:"error", status, code, message}`. Faults come from the vendor peer underneath.
 */
import { startVendorPeer, type PeerAnswer, type PeerRequest, type VendorPeer } from './vendor-peer.js';

export interface FakeNotion extends VendorPeer {
  baseUrl: string;
  token: string;
  databaseId: string;
  /** Titles of the pages the search knows (page `i` has id `page-i`). */
  pages: string[];
  created: { title: string; texts: string[] }[];
}

const error = (status: number, code: string, message: string): PeerAnswer => ({
  status,
  body: { object: 'error', status, code, message, request_id: 'b4c0ffee-0000-4000-8000-000000000000' },
});

const bare = (id: string) => id.replace(/-/g, '').toLowerCase();

export async function startFakeNotion(token = 'ntn_peer0000000000000000000000000000000001'): Promise<FakeNotion> {
  const databaseId = '8f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
  const pages = ['Returns policy', 'Shipping times', 'Escalation playbook'];
  const created: FakeNotion['created'] = [];
  const page = (title: string, index: number) => ({
    object: 'page',
    id: `page-${index}`,
    url: `https://www.notion.so/page-${index}`,
    properties: { Name: { id: 'title', type: 'title', title: [{ type: 'text', plain_text: title }] } },
  });
  const peer = await startVendorPeer((request: PeerRequest): PeerAnswer => {
    if (request.headers.authorization !== `Bearer ${token}`) return error(401, 'unauthorized', 'API token is invalid.');
    if (!request.headers['notion-version']) {
      return error(400, 'missing_version', 'Notion-Version header failed validation: should be defined');
    }
    if (request.method === 'POST' && request.body && request.json === undefined) {
      return error(400, 'invalid_json', 'Error parsing JSON body.');
    }
    const body = (request.json ?? {}) as Record<string, unknown>;
    const path = request.path.split('?')[0]!;
    if (request.method === 'GET' && path === '/v1/users/me') {
      return {
        status: 200,
        body: { object: 'user', id: 'bot-1', type: 'bot', name: 'Switchboard', bot: { workspace_name: 'Acme' } },
      };
    }
    if (request.method === 'POST' && path === '/v1/search') {
      const filter = body.filter as { property?: string; value?: string } | undefined;
      if (filter && (filter.property !== 'object' || !['page', 'database'].includes(String(filter.value)))) {
        return error(400, 'validation_error', 'body.filter.value should be "page" or "database"');
      }
      const size = Number(body.page_size ?? 100);
      if (!Number.isInteger(size) || size < 1 || size > 100) {
        return error(400, 'validation_error', 'body.page_size should be ≤ 100');
      }
      const query = String(body.query ?? '').toLowerCase();
      const matching = pages.map(page).filter((_, i) => pages[i]!.toLowerCase().includes(query) || query === '');
      const start = body.start_cursor ? Number(String(body.start_cursor).replace('cursor-', '')) : 0;
      const slice = matching.slice(start, start + size);
      const more = start + size < matching.length;
      return {
        status: 200,
        body: {
          object: 'list',
          results: slice,
          next_cursor: more ? `cursor-${start + size}` : null,
          has_more: more,
          type: 'page_or_database',
          page_or_database: {},
        },
      };
    }
    const database = /^\/v1\/databases\/([^/]+)$/.exec(path);
    if (request.method === 'GET' && database) {
      if (bare(decodeURIComponent(database[1]!)) !== bare(databaseId)) {
        return error(
          404,
          'object_not_found',
          `Could not find database with ID: ${database[1]}. Make sure the relevant pages and databases are shared with your integration.`,
        );
      }
      return {
        status: 200,
        body: {
          object: 'database',
          id: databaseId,
          title: [{ plain_text: 'Support notes' }],
          properties: {
            Tags: { id: 'a%3Ab', name: 'Tags', type: 'multi_select', multi_select: { options: [] } },
            Subject: { id: 'title', name: 'Subject', type: 'title', title: {} },
          },
        },
      };
    }
    if (request.method === 'POST' && path === '/v1/pages') {
      const parent = body.parent as { database_id?: string } | undefined;
      if (!parent?.database_id || bare(parent.database_id) !== bare(databaseId)) {
        return error(404, 'object_not_found', 'Could not find database.');
      }
      const properties = (body.properties ?? {}) as Record<string, { title?: { text?: { content?: string } }[] }>;
      const keys = Object.keys(properties);
      if (keys.some((key) => key !== 'Subject' && key !== 'Tags')) {
        return error(400, 'validation_error', `${keys.join(', ')} is not a property that exists.`);
      }
      const rich = [
        ...(properties.Subject?.title ?? []),
        ...((body.children as { paragraph?: { rich_text?: { text?: { content?: string } }[] } }[]) ?? []).flatMap(
          (block) => block.paragraph?.rich_text ?? [],
        ),
      ];
      if (rich.some((piece) => (piece.text?.content ?? '').length > 2000)) {
        return error(
          400,
          'validation_error',
          'body.children[0].paragraph.rich_text[0].text.content.length should be ≤ 2000',
        );
      }
      const title = (properties.Subject?.title ?? []).map((piece) => piece.text?.content ?? '').join('');
      const blocks = (body.children as { paragraph?: { rich_text?: { text?: { content?: string } }[] } }[]) ?? [];
      created.push({ title, texts: (blocks[0]?.paragraph?.rich_text ?? []).map((piece) => piece.text?.content ?? '') });
      const id = `created-${created.length}`;
      return { status: 200, body: { object: 'page', id, url: `https://www.notion.so/${id}`, properties: {} } };
    }
    return error(400, 'invalid_request_url', 'Invalid request URL.');
  });
  return Object.assign(peer, { baseUrl: peer.url, token, databaseId, pages, created });
}
