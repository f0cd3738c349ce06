/**
 * Data migrations re-run against rows written the old way: each one must change what it names
 * and nothing else.
 */
import { readFile } from 'node:fs/promises';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant } from './helpers/factories.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});

afterAll(async () => {
  await t.close();
});

async function migration(name: string): Promise<string> {
  return readFile(new URL(`../migrations/${name}`, import.meta.url), 'utf8');
}

describe('0016 strips credentials from stored website addresses', () => {
  it('keeps the address and drops user:password@, leaving other addresses alone', async () => {
    const tenant = await createTenant(t.container);
    const urls = [
      'https://user:s3cret@docs.example.com/help?x=1',
      'http://token@example.org/a',
      'https://example.com/path/with@sign',
      'https://example.com/?q=a@b',
      null,
    ];
    const rows = await t.container.db
      .insertInto('kb_documents')
      .values(
        urls.map((url, index) => ({
          company_id: tenant.companyId,
          title: `Page ${index}`,
          source_type: url ? ('website' as const) : ('article' as const),
          source_url: url,
        })),
      )
      .returning(['id', 'title'])
      .execute();

    await sql.raw(await migration('0016_strip_source_url_credentials.sql')).execute(t.container.db);

    const after = await t.container.db
      .selectFrom('kb_documents')
      .select(['title', 'source_url'])
      .where(
        'id',
        'in',
        rows.map((row) => row.id),
      )
      .orderBy('title')
      .execute();
    expect(after.map((row) => row.source_url)).toEqual([
      'https://docs.example.com/help?x=1',
      'http://example.org/a',
      'https://example.com/path/with@sign',
      'https://example.com/?q=a@b',
      null,
    ]);
  });
});

describe('0105 strips credentials from stored integration addresses', () => {
  it('drops user:password@ from clear config values, leaving sealed values and other keys alone', async () => {
    const tenant = await createTenant(t.container);
    const configs = [
      { base_url: 'https://user:s3cret@api.example.com/v1', auth_type: 'none' },
      { url: 'https://admin:p@ss@odoo.example.com', database: 'prod', api_key: 'enc:v1:abc' },
      { base_url: 'https://api.example.com/@handle', channel: '#a@b' },
    ];
    const rows = await t.container.db
      .insertInto('integrations')
      .values(
        configs.map((config, index) => ({
          company_id: tenant.companyId,
          name: `I${index}`,
          type: 'custom_api',
          config: JSON.stringify(config) as never,
        })),
      )
      .returning(['id'])
      .execute();

    await sql.raw(await migration('0105_strip_integration_url_credentials.sql')).execute(t.container.db);

    const after = await t.container.db
      .selectFrom('integrations')
      .select(['name', 'config'])
      .where(
        'id',
        'in',
        rows.map((row) => row.id),
      )
      .orderBy('name')
      .execute();
    expect(after.map((row) => row.config)).toEqual([
      { base_url: 'https://api.example.com/v1', auth_type: 'none' },
      { url: 'https://odoo.example.com', database: 'prod', api_key: 'enc:v1:abc' },
      { base_url: 'https://api.example.com/@handle', channel: '#a@b' },
    ]);
  });
});
