/**
 * `switchboard seed --demo`: realistic support history for dashboards and benchmarks, written
 * through the functions the platform itself uses. Small runs replay each conversation through
 * the recorder (open → agent turns → rating → close) on a simulated clock, with notes and
 * notifications; large runs (more than PLATFORM_PATH_MAX queries) add rows in bulk with one
 * generate_series statement per batch (insertSyntheticQueries) with the same distributions.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { insertAgent } from '../agents/index.js';
import type { NotificationType, Notifier } from '../team-notifications/index.js';
import { createSupportRecorder } from './support-queries.recorder.js';
import { analyzeSupportTables, insertSyntheticQueries, upsertEndUser } from './support-queries.repo.js';
import type { QueryType } from './support-queries.tables.js';

export const PLATFORM_PATH_MAX = 10_000;
const DAY_MS = 86_400_000;

const AGENTS = [
  ['Ava – billing desk', 'Answers billing and payment questions, issues refunds within policy'],
  ['Noor – technical support', 'Troubleshoots integrations, API errors and configuration'],
  ['Sam – accounts', 'Handles sign-in, password and profile requests'],
  ['Leo – product questions', 'Explains features and collects feature requests'],
  ['Maya – onboarding', 'Guides new customers through setup'],
  ['Omar – Arabic support', 'Bilingual support for Arabic-speaking customers'],
] as const;

export const DEMO_SUBJECTS: Record<QueryType, string[]> = {
  billing: [
    'I was charged twice this month',
    'Refund for the annual plan',
    'Invoice shows the wrong VAT number',
    'How do I change my payment card?',
  ],
  account: [
    'Cannot log in after password reset',
    'Change the e-mail address on my account',
    'Two-factor codes are not arriving',
    'Please close my account',
  ],
  bug_report: [
    'Export to CSV crashes on large files',
    'Dashboard shows an error after the update',
    'Webhook deliveries fail with 500',
    'Search returns nothing for Arabic text',
  ],
  feature_request: [
    'Could you add dark mode?',
    'Suggestion: scheduled reports by e-mail',
    'Please add SSO with Okta',
    'Would be nice to tag conversations',
  ],
  technical_support: [
    'How do I connect the Slack integration?',
    'API returns 401 with a new key',
    'How to configure the webhook secret',
    'Setup of the WhatsApp channel',
  ],
  general_inquiry: [
    'What are your support hours?',
    'Do you offer a discount for non-profits?',
    'Where is my data stored?',
    'Which languages does the agent speak?',
  ],
};
const TOOLS = [
  'kb_search',
  'crm_lookup',
  'send_email',
  'create_ticket',
  'refund_payment',
  'slack_notify',
  'order_status',
];
/** Which tool calls tell the team, and how (the other tools are routine). */
const TOOL_NOTICES: Record<string, { type: NotificationType; title: string }> = {
  send_email: { type: 'email_sent', title: 'Agent sent an e-mail' },
  slack_notify: { type: 'slack_message', title: 'Agent posted to the team channel' },
  crm_lookup: { type: 'api_call', title: 'Agent looked up the customer in the CRM' },
  refund_payment: { type: 'tool_usage', title: 'Agent issued a refund' },
};
const TYPE_WEIGHTS: [QueryType, number][] = [
  ['general_inquiry', 0.28],
  ['technical_support', 0.24],
  ['billing', 0.16],
  ['account', 0.12],
  ['bug_report', 0.12],
  ['feature_request', 0.08],
];

export interface DemoOptions {
  companyId: string;
  queries: number;
  days: number;
  /** Seeded pseudo-random generator for repeatable runs. */
  seed?: number;
  onProgress?: (done: number) => void;
}

export interface DemoDeps {
  db: Db;
  clock: Clock;
  notifications: Notifier;
}

/** mulberry32: a small seeded PRNG, so a demo run can be repeated exactly. */
function prng(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function seedDemo(
  deps: DemoDeps,
  options: DemoOptions,
): Promise<{ agents: number; endUsers: number; queries: number }> {
  const random = prng(options.seed ?? 42);
  const now = deps.clock.now();
  const { db } = deps;
  const agentIds: string[] = [];
  for (const [title, task] of AGENTS) {
    agentIds.push(
      (await insertAgent(db, { company_id: options.companyId, title, task_description: task, created_by: null })).id,
    );
  }
  const endUserCount = Math.max(10, Math.min(5000, Math.ceil(options.queries / 8)));
  const endUserIds: string[] = [];
  for (let i = 0; i < endUserCount; i++) {
    const external = `demo-${randomUUID().slice(0, 8)}`;
    endUserIds.push(
      (
        await upsertEndUser(db, options.companyId, external, {
          email: random() < 0.7 ? `${external}@customers.example` : null,
          name: `Customer ${i + 1}`,
        })
      ).id,
    );
  }
  const from = new Date(now.getTime() - options.days * DAY_MS);
  if (options.queries > PLATFORM_PATH_MAX) {
    const batch = 100_000;
    for (let done = 0; done < options.queries; done += batch) {
      await insertSyntheticQueries(db, {
        companyId: options.companyId,
        agentIds,
        endUserIds,
        count: Math.min(batch, options.queries - done),
        from,
        to: now,
        subjects: DEMO_SUBJECTS,
        tools: TOOLS,
      });
      options.onProgress?.(Math.min(done + batch, options.queries));
    }
  } else {
    for (let i = 0; i < options.queries; i++) {
      await replayConversation(deps, options.companyId, { random, from, now, agentIds, endUserIds });
      if ((i + 1) % 500 === 0) options.onProgress?.(i + 1);
    }
  }
  // Fresh planner statistics: a freshly seeded table otherwise looks empty to the planner.
  await analyzeSupportTables(db);
  await seedTeamNotices(deps, options.companyId, random, from, now);
  return { agents: agentIds.length, endUsers: endUserIds.length, queries: options.queries };
}

function pickWeighted<T>(random: () => number, weights: [T, number][]): T {
  let r = random();
  for (const [value, weight] of weights) if ((r -= weight) < 0) return value;
  return weights[weights.length - 1]![0];
}

function pick<T>(random: () => number, values: readonly T[]): T {
  return values[Math.floor(random() * values.length)]!;
}

interface ReplayContext {
  random: () => number;
  from: Date;
  now: Date;
  agentIds: string[];
  endUserIds: string[];
}

/** One conversation as the platform would record it, on a clock that moves with the story. */
async function replayConversation(deps: DemoDeps, companyId: string, context: ReplayContext) {
  const { random } = context;
  let at = new Date(context.from.getTime() + Math.sqrt(random()) * (context.now.getTime() - context.from.getTime()));
  const clock: Clock = { now: () => at };
  const recorder = createSupportRecorder({ clock });
  const queryType = pickWeighted(random, TYPE_WEIGHTS);
  const subject = pick(random, DEMO_SUBJECTS[queryType]);
  const agentId = pick(random, context.agentIds);
  await deps.db.transaction().execute(async (trx) => {
    const { id } = await recorder.openForConversation(trx, {
      companyId,
      endUserId: pick(random, context.endUserIds),
      agentId,
      deploymentId: null,
      conversationId: randomUUID(),
      subject,
      description: `${subject}. I tried the help centre first but could not find an answer.`,
      queryType,
    });
    // A few conversations have not had an agent turn yet.
    if (random() < 0.03) return;
    const minutes = Math.exp(Math.log(2) + random() * Math.log(400));
    const escalated = random() < 0.15;
    const tools = TOOLS.filter(() => random() < 0.25);
    const advance = (m: number) => {
      at = new Date(Math.min(at.getTime() + m * 60_000, context.now.getTime()));
    };
    advance(1);
    await recorder.recordAgentTurn(trx, {
      companyId,
      queryId: id,
      resolved: false,
      escalated,
      toolsUsed: tools,
      agentActions: 1 + tools.length,
    });
    if (escalated) {
      await recorder.addNote(trx, {
        companyId,
        queryId: id,
        userId: null,
        content: 'Escalated to a human: the customer asked for an exception to policy.',
        isInternal: true,
      });
      await deps.notifications.notify(trx, {
        companyId,
        notificationType: 'agent_action',
        category: 'agent',
        priority: 'high',
        title: 'Conversation escalated',
        message: subject,
        metadata: { agent_id: agentId, query_id: id, action_type: 'escalation' },
        createdAt: at,
      });
    }
    for (const tool of tools) {
      const kind = TOOL_NOTICES[tool];
      if (!kind) continue;
      const metadata: Record<string, string> = {
        agent_id: agentId,
        query_id: id,
        action_type: tool,
        tool_used: tool,
        execution_time: `${(0.2 + random() * 2).toFixed(1)}s`,
      };
      if (tool === 'send_email')
        Object.assign(metadata, { recipient_email: 'customer@example.com', email_subject: `Re: ${subject}` });
      await deps.notifications.notify(trx, {
        companyId,
        notificationType: kind.type,
        category: 'agent',
        priority: 'low',
        title: kind.title,
        message: subject,
        metadata,
        createdAt: at,
      });
    }
    const resolvedAt = at.getTime() + minutes * 60_000;
    if (resolvedAt > context.now.getTime() || random() < 0.05) return;
    advance(minutes);
    await recorder.recordAgentTurn(trx, {
      companyId,
      queryId: id,
      resolved: true,
      escalated: false,
      resolution: escalated ? 'Resolved by the support team.' : 'Answered from the knowledge base.',
      agentActions: 1,
    });
    if (random() < 0.6)
      await recorder.recordSatisfaction(trx, {
        companyId,
        queryId: id,
        rating: Math.max(1, Math.min(5, Math.round(5 - 4 * random() ** 3 - (escalated ? 1 : 0)))),
      });
    if (random() < 0.5) {
      advance(60 * 24);
      await recorder.close(trx, { companyId, queryId: id });
    }
  });
}

/** A few notifications that are not about a single query: deployments, security, members, billing. */
async function seedTeamNotices(deps: DemoDeps, companyId: string, random: () => number, from: Date, now: Date) {
  const notices = [
    {
      notificationType: 'system',
      category: 'deployment',
      title: 'Deployment active',
      message: 'Web chat in eu-west is serving',
    },
    {
      notificationType: 'system',
      category: 'security',
      title: 'Failed sign-in burst',
      message: '25 failed API key checks in one minute',
      priority: 'urgent',
    },
    {
      notificationType: 'system',
      category: 'user',
      title: 'Member joined',
      message: 'A new member accepted an invitation',
    },
    {
      notificationType: 'system',
      category: 'billing',
      title: 'Invoice issued',
      message: 'Your monthly invoice is available',
    },
    {
      notificationType: 'system',
      category: 'system',
      title: 'Maintenance window',
      message: 'Scheduled maintenance on Sunday 02:00 UTC',
      expiresAt: new Date(now.getTime() + 7 * DAY_MS),
    },
  ] as const;
  await deps.db.transaction().execute(async (trx) => {
    for (let i = 0; i < 20; i++) {
      const notice = pick(random, notices);
      await deps.notifications.notify(trx, {
        companyId,
        priority: 'medium',
        ...notice,
        createdAt: new Date(from.getTime() + random() * (now.getTime() - from.getTime())),
      });
    }
  });
}
