/**
 * What the workflow router adds to a turn.
 *
 *   npx tsx bench/workflows/router.ts [--calls 20000] [--samples 200]
 *
 * 1. Rules: `routeByRules` on a six-step workflow (keywords in English and Arabic, query types,
 *    an Arabic-only desk) over English and Arabic questions, in process, each call timed; against
 *    the support-queries classifier alone (the baseline: the one piece of work the rules must do),
 *    measured in the same run. Target: < 1 ms p50.
 * 2. Model: the model router (`createRouter`, the real model client) against the fake OpenAI
 *    provider in a process of its own, paired with the same request sent straight through the
 *    adapter (the peer's latency, the baseline), alternated so both see the machine alike. The
 *    router's cost over the peer is the median of the paired differences.
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createLlmClient } from '../../src/adapters/llm/llm-client.js';
import { classifyQueryType } from '../../src/modules/support-queries/index.js';
import {
  createRouter,
  routeByRules,
  routerPrompt,
  type RoutableWorkflow,
} from '../../src/modules/workflows/workflows.router.js';
import { startFakeProviderProcess } from '../lib/harness.js';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '20000' }, samples: { type: 'string', default: '200' } },
});
const calls = Number(values.calls);
const samples = Number(values.samples);

const id = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;
const step = (name: string, agent: number, when: Partial<RoutableWorkflow['steps'][number]['when']>) => ({
  name,
  agent_id: id(agent),
  when: { query_types: [], keywords: [], languages: [], ...when },
});
const workflow: RoutableWorkflow = {
  id: id(9),
  company_id: id(8),
  name: 'Front desk',
  description: 'Billing, technical support, accounts, sales and returns, in English and Arabic',
  default_agent_id: id(1),
  router: 'fake:gpt-test',
  steps: [
    step('billing', 1, { query_types: ['billing'], keywords: ['invoice', 'refund', 'فاتورة', 'استرداد', 'دفع'] }),
    step('technical', 2, { query_types: ['technical_support', 'bug_report'], keywords: ['install', 'تثبيت', 'خطأ'] }),
    step('account', 3, { query_types: ['account'], keywords: ['password', 'كلمة المرور', 'حساب'] }),
    step('sales', 4, { keywords: ['pricing plan', 'demo', 'enterprise', 'عرض سعر', 'باقة'] }),
    step('returns', 5, { keywords: ['return', 'exchange', 'إرجاع', 'استبدال'] }),
    step('arabic desk', 6, { languages: ['ar'] }),
  ],
};
const QUESTIONS = [
  'When is the invoice for my subscription sent?',
  'I was charged twice, can I get a refund?',
  'How do I install the SDK on Windows?',
  'The app crashes when I open the settings page',
  'I forgot my password and cannot log in',
  'Do you have an enterprise pricing plan?',
  'Can I return a sale item after two weeks?',
  'Hello, I have a question about your opening hours',
  'متى تصل الفاتورة الشهرية؟',
  'كيف يتم تثبيت التطبيق على الجوال؟',
  'نسيت كلمة المرور ولا أستطيع الدخول إلى حسابي',
  'أريد إرجاع المنتج واستبداله بمقاس آخر',
  'هل لديكم عرض سعر للشركات؟',
  'مرحباً، ما هي ساعات العمل لديكم؟',
];

function quantiles(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99) };
}
const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;
const ms = (value: number) => `${value.toFixed(3)} ms`;

function timeEach(work: (question: string, index: number) => unknown): number[] {
  for (let i = 0; i < 2000; i++) work(QUESTIONS[i % QUESTIONS.length]!, i);
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const question = QUESTIONS[i % QUESTIONS.length]!;
    const t0 = performance.now();
    work(question, i);
    times.push(performance.now() - t0);
  }
  return times;
}

// 1. Rules, every third call continuing a conversation (sticky check) with another step's agent.
const classifier = quantiles(timeEach((question) => classifyQueryType(question)));
const rules = quantiles(
  timeEach((question, index) =>
    routeByRules(workflow, { query: question, currentAgentId: index % 3 === 0 ? id((index % 6) + 1) : null }),
  ),
);
console.log(`rules router (${calls} calls, ${QUESTIONS.length} questions, 6 steps)`);
console.log(`  classifier alone  p50 ${us(classifier.p50)}  p95 ${us(classifier.p95)}  p99 ${us(classifier.p99)}`);
console.log(`  rules router      p50 ${us(rules.p50)}  p95 ${us(rules.p95)}  p99 ${us(rules.p99)}`);
console.log(`  ratio p50 ${(rules.p50 / classifier.p50).toFixed(2)}× the classifier`);

// 2. Model router over the fake provider (a step name as its reply).
const peer = await startFakeProviderProcess();
try {
  await peer.script({ tokens: ['technical'] });
  const llm = createLlmClient({
    providers: [{ name: 'fake', type: 'openai', baseUrl: peer.url, apiKey: 'sk-bench', models: ['gpt-test'] }],
  });
  const router = createRouter({ llm, timeoutMs: 5000 });
  const direct = async (question: string) => {
    for await (const part of llm.stream({
      model: 'fake:gpt-test',
      messages: [
        { role: 'system', content: routerPrompt(workflow, null) },
        { role: 'user', content: question },
      ],
      temperature: 0,
      maxTokens: 20,
      signal: AbortSignal.timeout(5000),
    }))
      void part;
  };
  const viaRouter = async (question: string) => {
    const decision = await router.route(workflow, { query: question, currentAgentId: null });
    if (decision.by !== 'model') throw new Error(`the model router fell back: ${decision.reason}`);
  };
  for (let i = 0; i < 20; i++) {
    await direct(QUESTIONS[i % QUESTIONS.length]!);
    await viaRouter(QUESTIONS[i % QUESTIONS.length]!);
  }
  const peerTimes: number[] = [];
  const routerTimes: number[] = [];
  const differences: number[] = [];
  for (let i = 0; i < samples; i++) {
    const question = QUESTIONS[i % QUESTIONS.length]!;
    const order = i % 2 === 0 ? [direct, viaRouter] : [viaRouter, direct];
    const times = new Map<unknown, number>();
    for (const run of order) {
      const t0 = performance.now();
      await run(question);
      times.set(run, performance.now() - t0);
    }
    peerTimes.push(times.get(direct)!);
    routerTimes.push(times.get(viaRouter)!);
    differences.push(times.get(viaRouter)! - times.get(direct)!);
  }
  const p = quantiles(peerTimes);
  const r = quantiles(routerTimes);
  const d = quantiles(differences);
  console.log(`model router (${samples} paired samples, fake OpenAI peer in its own process)`);
  console.log(`  peer call alone   p50 ${ms(p.p50)}  p95 ${ms(p.p95)}`);
  console.log(`  model router      p50 ${ms(r.p50)}  p95 ${ms(r.p95)}`);
  console.log(`  added over the peer: median of paired differences ${ms(d.p50)}`);
} finally {
  await peer.close();
}
console.log(
  `load average after: ${loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')}`,
);
