/**
 * The built-in `builtin:kb` responder on a small English + Arabic knowledge base ingested through
 * the documents API (no LLM provider configured, no embedder: full-text and docstore lanes).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { chat, chatSetup, type ChatSetup } from './helpers/chat.js';
import { readChatStream } from './helpers/sse-client.js';
import { uploadArticle, waitForTask } from './knowledge/helpers.js';

let t: TestApp;
let base: string;
let setup: ChatSetup;
let docs: Record<string, string>;

const ARTICLES = [
  {
    document_title: 'Returns and refunds',
    content:
      'Q: How long do refunds take?\nA: Refunds are paid to the original card within 5 business days after we receive the item. ' +
      'Q: Can I return a sale item?\nA: Sale items can be returned within 14 days in their original packaging.',
  },
  {
    document_title: 'Shipping',
    content:
      'We ship to every GCC country. Express delivery takes two business days and costs 30 SAR. Standard delivery is free for orders above 200 SAR.',
  },
  {
    document_title: 'الحساب وكلمة المرور',
    content:
      'س: كيف أعيد تعيين كلمة المرور؟\nج: اضغط على "نسيت كلمة المرور" في صفحة تسجيل الدخول وسنرسل لك رابطاً عبر البريد الإلكتروني. ' +
      'الرابط صالح لمدة ساعة واحدة. س: كيف أغير رقم الجوال؟\nج: يمكنك تغيير رقم الجوال من صفحة الملف الشخصي بعد التحقق برمز يصلك برسالة نصية.',
  },
];

beforeAll(async () => {
  t = await createTestApp({ EMBEDDINGS_PROVIDER: 'none' });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  setup = await chatSetup(t.app, t.container, { languages: ['en', 'ar'] });
  docs = {};
  for (const article of ARTICLES) {
    const upload = await uploadArticle(t.app, setup.tenant.headers, article);
    expect((await waitForTask(t, setup.tenant.headers, upload.task_id)).status).toBe('completed');
    docs[article.document_title] = upload.document_id;
  }
});
afterAll(async () => t?.close());

describe('builtin:kb responder', () => {
  it('answers an English FAQ question with the answer passage and cites it', async () => {
    const res = await chat(t.app, setup, { query: 'How long does a refund take?' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.was_resolved).toBe(true);
    expect(body.agent_response_text).toContain('Refunds are paid to the original card within 5 business days');
    expect(body.agent_response_text).not.toContain('How long do refunds take?');
    expect(body.agent_response_text).toContain('Sources: Returns and refunds');
    const messages = await t.app.inject({
      method: 'GET',
      url: `/api/v1/chat/conversations/${body.conversation_id}/messages`,
      headers: setup.token,
    });
    expect(messages.json().data[1].citations[0].document_id).toBe(docs['Returns and refunds']);
  });

  it('answers an Arabic question in Arabic from the Arabic article', async () => {
    const res = await chat(t.app, setup, { query: 'كيف يمكنني إعادة تعيين كلمة المرور؟' });
    const body = res.json();
    expect(body.was_resolved).toBe(true);
    expect(body.agent_response_text).toContain('نسيت كلمة المرور');
    expect(body.agent_response_text).toContain('المصادر: الحساب وكلمة المرور');
  });

  it('streams the answer sentence by sentence with a citations chunk before end', async () => {
    const events = await readChatStream(`${base}/api/v1/chat/agent/stream`, setup.token, {
      agent_key: setup.agentKey,
      query: 'How much does express delivery cost?',
    });
    const types = events.map((event) => event.type);
    expect(types[0]).toBe('start');
    expect(types.slice(-2)).toEqual(['chunk', 'end']);
    expect(types.filter((type) => type === 'agent_text_chunk').length).toBeGreaterThanOrEqual(2);
    const text = events
      .filter((e) => e.type === 'agent_text_chunk')
      .map((e) => e.data.content)
      .join('');
    expect(text).toContain('costs 30 SAR');
    const chunk = events.at(-2)!.data as unknown as {
      kind: string;
      citations: { document_id: string }[];
      content: string;
    };
    expect(chunk.kind).toBe('citations');
    expect(chunk.citations[0]!.document_id).toBe(docs.Shipping);
    expect(JSON.parse(chunk.content).citations).toEqual(chunk.citations);
    expect(events.at(-1)!.data.was_resolved).toBe(true);
  });

  it.each([
    [
      'What is the weather in Paris tomorrow?',
      "I couldn't find an answer to that in our knowledge base. Would you like me to connect you with a member of our team?",
    ],
    ['ما هي عاصمة اليابان؟', 'لم أجد إجابة عن سؤالك في قاعدة المعرفة لدينا. هل تريد أن أحولك إلى أحد أعضاء فريقنا؟'],
  ])('says it found nothing for %s, offers a person, and tells the team', async (query, expected) => {
    const res = await chat(t.app, setup, { query, user: 'visitor-7' });
    expect(res.json()).toMatchObject({ agent_response_text: expected, was_resolved: false });
    const notes = await t.app.inject({
      method: 'GET',
      url: '/team-notifications?notification_type=agent_action&limit=100',
      headers: setup.tenant.headers,
    });
    expect(
      notes
        .json()
        .data.some(
          (n: { title: string; message: string }) =>
            n.title === 'Helper could not answer a question' && n.message.includes(query),
        ),
    ).toBe(true);
  });

  it('hands the conversation to a person when asked, marking the support query escalated', async () => {
    const res = await chat(t.app, setup, { query: 'I want to talk to a human please' });
    expect(res.json().was_resolved).toBe(false);
    expect(res.json().agent_response_text).toMatch(/handing this conversation to a member of our team/);
    const conversation = (
      await t.app.inject({
        method: 'GET',
        url: `/api/v1/chat/conversations/${res.json().conversation_id}`,
        headers: setup.token,
      })
    ).json();
    const query = (
      await t.app.inject({
        method: 'GET',
        url: `/customer-support/${conversation.support_query_id}`,
        headers: setup.tenant.headers,
      })
    ).json();
    expect(query.status).toBe('in_progress');
    expect(query.metadata.escalated_to_human).toBe(true);
  });

  it("searches only the agent's collections when it has some", async () => {
    const collection = await t.app.inject({
      method: 'POST',
      url: '/api/public/collections',
      headers: setup.tenant.headers,
      payload: { name: 'Shipping only', company_id: setup.tenant.companyId },
    });
    expect(collection.statusCode).toBe(201);
    const collectionId = collection.json().id as string;
    const upload = await uploadArticle(t.app, setup.tenant.headers, {
      document_title: 'Gift cards',
      content: 'Gift cards never expire and can be used online.',
      collection_id: collectionId,
    });
    expect((await waitForTask(t, setup.tenant.headers, upload.task_id)).status).toBe('completed');
    const scoped = await chatSetup(t.app, t.container, {});
    // The scoped agent belongs to another company: it must not see this company's knowledge at all.
    expect((await chat(t.app, scoped, { query: 'Do gift cards expire?' })).json().was_resolved).toBe(false);
    const agent = await t.app.inject({
      method: 'PUT',
      url: `/api/public/agents/${setup.agentId}`,
      headers: setup.tenant.headers,
      payload: { collection_ids: [collectionId] },
    });
    expect(agent.statusCode).toBe(200);
    expect((await chat(t.app, setup, { query: 'Do gift cards expire?' })).json().agent_response_text).toContain(
      'Gift cards never expire',
    );
    expect((await chat(t.app, setup, { query: 'How long does a refund take?' })).json().was_resolved).toBe(false);
    await t.app.inject({
      method: 'PUT',
      url: `/api/public/agents/${setup.agentId}`,
      headers: setup.tenant.headers,
      payload: { collection_ids: [] },
    });
  });
});
