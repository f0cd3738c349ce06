/**
 * Notion API (bearer internal-integration token, `Notion-Version: 2022-06-28`): `GET /v1/users/me`
 * checks the token, `POST /v1/search` finds pages (cursor pages followed up to a bound), and a
 * note is a page added to the configured database: its schema is read first
 * (`GET /v1/databases/{id}`) to name the property of type `title`, then `POST /v1/pages` with a
 * paragraph of ≤ 2000-character rich-text pieces. Errors are `{object:"error", status, code,
 * message}`; 429 `rate_limited` carries Retry-After.
 *
 * Version 2022-06-28: its database object holds the properties (the title property is read from
 * it) and pages are created under `database_id`. 2025-09-03 moves properties to data sources
 * and page parents to `data_source_id`; moving to it is a change of these calls, not of a header.
 */
import { Type } from '@sinclair/typebox';
import { ConnectorError, type ConnectorContext, type ConnectorDefinition } from '../../../ports/connectors.js';
import { BaseUrl, SecretText, apiRoot } from '../fields.js';
import { commonErrorMessage, type ConnectorHttp } from '../http.js';

export interface NotionConfig {
  access_token: string;
  database_id: string;
  base_url?: string;
}

const VENDOR = 'Notion';
export const NOTION_VERSION = '2022-06-28';
/** Notion's limit on one rich-text object's content. */
export const RICH_TEXT_MAX = 2000;
const SEARCH_MAX_RESULTS = 25;
const SEARCH_MAX_REQUESTS = 3;

/** The words of Notion's error shape: `code: message`. */
export function notionErrorMessage(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return commonErrorMessage(body);
  const { code, message } = body as Record<string, unknown>;
  if (typeof message !== 'string') return commonErrorMessage(body);
  return typeof code === 'string' ? `${code}: ${message}` : message;
}

/** Text cut into pieces of at most `max` characters, never splitting a surrogate pair. */
export function splitText(text: string, max = RICH_TEXT_MAX): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > max) {
    let cut = max;
    const code = rest.charCodeAt(cut - 1);
    if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
    pieces.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  if (rest) pieces.push(rest);
  return pieces;
}

const richText = (text: string) => splitText(text).map((content) => ({ type: 'text', text: { content } }));

interface NotionPage {
  object?: string;
  id?: string;
  url?: string;
  properties?: Record<string, { type?: string; title?: { plain_text?: string }[] }>;
}

/** A page's title: the plain text of its property of type `title`. */
export function pageTitle(page: NotionPage): string {
  const property = Object.values(page.properties ?? {}).find((candidate) => candidate?.type === 'title');
  return (property?.title ?? []).map((piece) => piece.plain_text ?? '').join('') || 'Untitled';
}

export function notionConnector(http: ConnectorHttp): ConnectorDefinition<NotionConfig> {
  async function call(
    method: 'GET' | 'POST',
    path: string,
    context: ConnectorContext<NotionConfig>,
    json?: unknown,
  ): Promise<Record<string, unknown>> {
    const answer = await http.request({
      vendor: VENDOR,
      method,
      url: `${apiRoot(context.config, 'https://api.notion.com')}/v1/${path}`,
      headers: { authorization: `Bearer ${context.config.access_token}`, 'notion-version': NOTION_VERSION },
      json,
      signal: context.signal,
      errorMessage: notionErrorMessage,
    });
    if (!answer.body || typeof answer.body !== 'object') {
      throw new ConnectorError(VENDOR, `unexpected answer to ${method} /v1/${path.split('?')[0]}`, {
        status: answer.status,
        retryable: false,
      });
    }
    return answer.body as Record<string, unknown>;
  }

  return {
    type: 'notion',
    name: VENDOR,
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
    async test(context) {
      const me = await call('GET', 'users/me', context);
      const bot = me.bot as { workspace_name?: string | null } | undefined;
      const workspace = bot?.workspace_name ? ` workspace ${bot.workspace_name}` : '';
      const name = typeof me.name === 'string' && me.name ? ` as ${me.name}` : '';
      return { detail: `Connected to Notion${workspace}${name}` };
    },
    tools: () => [
      {
        name: 'search_pages',
        description: 'Search the Notion pages shared with the integration by title; returns titles, ids and links.',
        input: Type.Object(
          { query: Type.String({ minLength: 1, maxLength: 200, description: 'Words to look for in page titles.' }) },
          { additionalProperties: false },
        ),
        notification: 'tool_usage',
        async run(input, context) {
          const pages: { id: string; title: string; url: string | null }[] = [];
          let cursor: string | undefined;
          for (let request = 0; request < SEARCH_MAX_REQUESTS && pages.length < SEARCH_MAX_RESULTS; request += 1) {
            const body = await call('POST', 'search', context, {
              query: String(input.query),
              filter: { property: 'object', value: 'page' },
              page_size: SEARCH_MAX_RESULTS - pages.length,
              ...(cursor ? { start_cursor: cursor } : {}),
            });
            const results = Array.isArray(body.results) ? (body.results as NotionPage[]) : [];
            for (const page of results) {
              if (page?.object === 'page' && page.id && pages.length < SEARCH_MAX_RESULTS) {
                pages.push({ id: page.id, title: pageTitle(page), url: page.url ?? null });
              }
            }
            if (body.has_more !== true || typeof body.next_cursor !== 'string') break;
            cursor = body.next_cursor;
          }
          const titles = pages.slice(0, 5).map((page) => page.title);
          const more = pages.length > titles.length ? ` and ${pages.length - titles.length} more` : '';
          return {
            summary: pages.length
              ? `Found ${pages.length} page(s): ${titles.join(', ')}${more}`
              : `No pages found for "${String(input.query)}"`,
            data: { pages },
          };
        },
      },
      {
        name: 'add_note',
        description: "Add a note (a page with a title and text) to the team's Notion database.",
        input: Type.Object(
          {
            title: Type.String({ minLength: 1, maxLength: RICH_TEXT_MAX, description: 'The note title.' }),
            text: Type.String({ minLength: 1, maxLength: 50 * RICH_TEXT_MAX, description: 'The note text.' }),
          },
          { additionalProperties: false },
        ),
        notification: 'api_call',
        async run(input, context) {
          const databaseId = context.config.database_id;
          const database = await call('GET', `databases/${encodeURIComponent(databaseId)}`, context);
          const properties = (database.properties ?? {}) as Record<string, { type?: string }>;
          const titleProperty = Object.entries(properties).find(([, property]) => property?.type === 'title')?.[0];
          if (!titleProperty) {
            throw new ConnectorError(VENDOR, `database ${databaseId} has no title property`, { retryable: false });
          }
          const page = await call('POST', 'pages', context, {
            parent: { database_id: databaseId },
            properties: { [titleProperty]: { title: richText(String(input.title)) } },
            children: [{ object: 'block', type: 'paragraph', paragraph: { rich_text: richText(String(input.text)) } }],
          });
          if (typeof page.id !== 'string') {
            throw new ConnectorError(VENDOR, 'unexpected answer: no page id', { retryable: false });
          }
          return {
            summary: `Added note "${String(input.title)}" to Notion`,
            data: { id: page.id, url: typeof page.url === 'string' ? page.url : null },
          };
        },
      },
    ],
  };
}
