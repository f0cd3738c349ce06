import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expandQuery } from '../../src/modules/knowledge/knowledge.expansion.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTenant } from '../helpers/factories.js';
import { uploadArticle, waitForTask } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ EMBEDDINGS_PROVIDER: 'none' });
});
afterAll(async () => t?.close());

describe('query expansion', () => {
  it('adds the support-domain equivalents of a query, in English and Arabic', () => {
    expect(expandQuery('When will I get my money back?').text.split(' ')).toContain('refund');
    expect(expandQuery("I can't remember my login details").text.split(' ')).toContain('password');
    expect(expandQuery('Can I split the cost into smaller payments?').text).toMatch(/instalment/);
    expect(expandQuery('متى سأسترجع فلوسي؟').text).toMatch(/استرداد/);
    expect(expandQuery('What is the capital of Japan?').text).toBe('');
  });

  it.each([
    ['with the text lanes in SQL', '0'],
    ['from the in-process index', '10000'],
  ])('finds the article a reworded question shares no word with, %s', async (_, maxChunks) => {
    const app =
      maxChunks === '0' ? await createTestApp({ EMBEDDINGS_PROVIDER: 'none', SEARCH_MEMORY_MAX_CHUNKS: '0' }) : t;
    try {
      const tenant = await createTenant(app.container, 'developer');
      const articles = [
        ['Refunds', 'Refunds are processed within 7 business days to the original card.'],
        ['Delivery', 'Orders are delivered in 2 to 4 business days; delivery is free above 200 SAR.'],
        ['Password', 'If you forgot your password, select Forgot password on the sign-in page.'],
      ];
      const ids = new Map<string, string>();
      for (const [title, content] of articles) {
        const upload = await uploadArticle(app.app, tenant.headers, { document_title: title, content });
        await waitForTask(app, tenant.headers, upload.task_id);
        ids.set(upload.document_id, title!);
      }
      const search = async (query: string, expand?: boolean) => {
        // The in-process index learns a query's words on first sight; the second search reads them from it.
        await app.container.knowledge.search(tenant.companyId, { query, topK: 3, expand });
        const { results } = await app.container.knowledge.search(tenant.companyId, { query, topK: 3, expand });
        return results.map((result) => ids.get(result.document_id));
      };
      expect((await search('When will I get my money back?'))[0]).toBe('Refunds');
      expect((await search("I can't remember my login details"))[0]).toBe('Password');
      // Without the expansion the first shares no word with its article.
      expect(await search('When will I get my money back?', false)).not.toContain('Refunds');
      // The query's own words still rank first: the expansion weighs less.
      expect((await search('When is my delivery free?'))[0]).toBe('Delivery');
    } finally {
      if (app !== t) await app.close();
    }
  });
});
