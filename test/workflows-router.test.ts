/**
 * The rules router in isolation (no I/O): scores per keyword, query type and language, whole-word
 * Latin keywords and Arabic keywords inside words, the language gate, ties, stickiness, and the
 * model router's fallbacks with a language-model port that fails, stalls or answers oddly.
 */
import { describe, expect, it } from 'vitest';
import type { LanguageModels, LlmRequest } from '../src/ports/llm.js';
import {
  createRouter,
  routeByRules,
  scoreSteps,
  scriptLanguage,
  type RoutableWorkflow,
} from '../src/modules/workflows/workflows.router.js';

const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';
const C = '00000000-0000-4000-8000-00000000000c';
const D = '00000000-0000-4000-8000-00000000000d';

const step = (name: string, agent: string, when: Partial<RoutableWorkflow['steps'][number]['when']>) => ({
  name,
  agent_id: agent,
  when: { query_types: [], keywords: [], languages: [], ...when },
});
const workflow: RoutableWorkflow = {
  id: '00000000-0000-4000-8000-000000000001',
  company_id: '00000000-0000-4000-8000-000000000002',
  name: 'Desk',
  description: '',
  default_agent_id: D,
  router: 'rules',
  steps: [
    step('billing', A, { query_types: ['billing'], keywords: ['pay', 'فاتورة'] }),
    step('technical', B, { query_types: ['technical_support'], keywords: ['display', 'شاشة'], languages: ['en'] }),
    step('arabic', C, { languages: ['ar'] }),
  ],
};

describe('rules router', () => {
  it('tells scripts apart', () => {
    expect(scriptLanguage('Where is my invoice?')).toBe('latin');
    expect(scriptLanguage('أين الفاتورة؟ invoice')).toBe('ar');
    expect(scriptLanguage('Где мой счёт?')).toBe('ru');
    expect(scriptLanguage('12345')).toBe('latin');
  });

  it('matches a Latin keyword as a whole word only, an Arabic one inside a word', () => {
    const scores = (query: string) =>
      Object.fromEntries(scoreSteps(workflow.steps, query).map((s) => [s.step.name, s.score]));
    expect(scores('The display is blank')).toMatchObject({ billing: 0, technical: 3 });
    expect(scores('Can I pay by card?')).toMatchObject({ billing: 3 + 2, technical: 0 });
    expect(scores('أريد نسخة من الفاتورة')).toMatchObject({ billing: 3, technical: 0, arabic: 1 });
  });

  it('never applies a step to a question in a language it does not list', () => {
    const scores = scoreSteps(workflow.steps, 'الشاشة لا تعمل');
    expect(scores.find((s) => s.step.name === 'technical')!.score).toBe(0);
    expect(routeByRules(workflow, { query: 'الشاشة لا تعمل', currentAgentId: null })).toMatchObject({
      agentId: C,
      step: 'arabic',
      reason: 'language ar',
    });
  });

  it('picks the highest score, the first step on a tie, and the default agent when nothing applies', () => {
    expect(routeByRules(workflow, { query: 'How do I pay for the display?', currentAgentId: null })).toMatchObject({
      agentId: A,
      step: 'billing',
    });
    expect(routeByRules(workflow, { query: 'Hello', currentAgentId: null })).toMatchObject({
      agentId: D,
      step: null,
      reason: 'no step applies: the default agent',
    });
  });

  it('stays with the current agent unless another step scores higher than all of its own', () => {
    const held = { currentAgentId: B };
    expect(routeByRules(workflow, { query: 'Thanks! And then?', ...held })).toMatchObject({ agentId: B });
    expect(routeByRules(workflow, { query: 'How do I pay for the display?', ...held })).toMatchObject({
      agentId: A,
      step: 'billing',
    });
    // Both steps apply; the current agent's scores as high: it keeps the conversation.
    expect(routeByRules(workflow, { query: 'I cannot pay, the display is blank', currentAgentId: A })).toMatchObject({
      agentId: A,
      reason: 'the conversation stays with its agent',
    });
    // An agent no longer in the workflow holds nothing.
    expect(
      routeByRules(workflow, { query: 'Thanks!', currentAgentId: '00000000-0000-4000-8000-0000000000ff' }),
    ).toMatchObject({
      agentId: D,
    });
  });
});

describe('model router', () => {
  function models(reply: (request: LlmRequest) => AsyncIterable<string>): LanguageModels {
    return {
      providers: () => ['fake'],
      checkModel: (model) => (model.startsWith('fake:') ? null : `provider of ${model} is not configured`),
      stream: (request) => reply(request),
    };
  }
  const byModel = { ...workflow, router: 'fake:m' };
  async function* say(...parts: string[]) {
    for (const part of parts) yield part;
  }

  it('follows the step the model names (quotes and case forgiven), and keeps the agent on "none"', async () => {
    const router = createRouter({ llm: models(() => say('"Tech', 'nical".')), timeoutMs: 1000 });
    expect(await router.route(byModel, { query: 'Can I pay?', currentAgentId: null })).toMatchObject({
      agentId: B,
      by: 'model',
    });
    const none = createRouter({ llm: models(() => say('none')), timeoutMs: 1000 });
    expect(await none.route(byModel, { query: 'Hi', currentAgentId: A })).toMatchObject({ agentId: A, by: 'model' });
  });

  it('falls back to the rules on an error, an unknown name, a provider gone, or no answer in time', async () => {
    const failing = createRouter({
      llm: models(() => ({
        [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error('HTTP 500')) }),
      })),
      timeoutMs: 1000,
    });
    const unknown = createRouter({ llm: models(() => say('sales')), timeoutMs: 1000 });
    const stalled = createRouter({
      llm: models((request) => ({
        async *[Symbol.asyncIterator]() {
          // Nothing until the router gives up (as a stalled provider), then the stream ends.
          await new Promise((resolve) => request.signal.addEventListener('abort', resolve, { once: true }));
          if (!request.signal.aborted) yield 'billing';
        },
      })),
      timeoutMs: 50,
    });
    for (const router of [failing, unknown, stalled]) {
      expect(await router.route(byModel, { query: 'Can I pay by card?', currentAgentId: null })).toMatchObject({
        agentId: A,
        by: 'fallback',
        reason: expect.stringContaining('the model router failed; rules decided'),
      });
    }
    const gone = createRouter({ llm: models(() => say('billing')), timeoutMs: 1000 });
    expect(
      await gone.route({ ...workflow, router: 'elsewhere:m' }, { query: 'Can I pay?', currentAgentId: null }),
    ).toMatchObject({ by: 'fallback', agentId: A });
  });
});
