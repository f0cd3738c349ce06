/**
 * The event types an endpoint subscribes to: what each means, which resource its `data` is (as
 * the API shows it, from the module that owns it) and an example payload. `webhook.test` is what
 * POST /webhooks/{id}/test sends; it is not subscribed to.
 */

/** The resource an event's `data` is; the container gives the webhooks module a reader of each. */
export type ResourceKind = 'support_query' | 'notification' | 'deployment' | 'document' | 'conversation';

export interface EventTypeEntry {
  type: string;
  description: string;
  resource: ResourceKind;
  /** `data` of the example payload. */
  example: Record<string, unknown>;
}

const COMPANY = '3f1e6a52-8c1d-4b7e-9a51-0c2b7d4e9f10';
const AGENT = '8b0f2c6e-51a4-4d8e-b1f7-2e9c4a6d3b21';
const AT = '2026-03-14T09:26:53.589Z';

const SUPPORT_QUERY = {
  id: '6d2a9e41-0f3b-4c8d-a7e5-91b2c3d4e5f6',
  company_id: COMPANY,
  user_id: 'c4e8a1b2-7d3f-4e9a-8b6c-5d4e3f2a1b0c',
  agent_id: AGENT,
  deployment_id: '1a2b3c4d-5e6f-4a8b-9c0d-1e2f3a4b5c6d',
  conversation_id: '9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a',
  query_type: 'technical',
  status: 'open',
  priority: 'medium',
  subject: 'The export to CSV stops at 1,000 rows',
  description: 'The export to CSV stops at 1,000 rows',
  resolution: '',
  metadata: {
    agent_actions_count: 0,
    tools_used: [],
    customer_satisfaction: null,
    resolution_method: null,
    escalated_to_human: false,
  },
  created_at: AT,
  updated_at: AT,
  resolved_at: null,
  user: { id: 'c4e8a1b2-7d3f-4e9a-8b6c-5d4e3f2a1b0c', email: 'dana@example.com', name: 'Dana Ruiz' },
  agent: {
    id: AGENT,
    title: 'Support agent',
    task_description: 'Answers product questions from the knowledge base.',
    performance_metrics: {
      total_queries_handled: 42,
      avg_resolution_time: 5.2,
      success_rate: 88.1,
      customer_satisfaction_avg: 4.4,
    },
  },
  notes: [],
};

const NOTIFICATION = {
  id: '2b7c9d1e-3f4a-4b5c-8d6e-7f8091a2b3c4',
  company_id: COMPANY,
  sender_id: null,
  notification_type: 'email_sent',
  category: 'agent',
  priority: 'medium',
  status: 'unread',
  read_at: null,
  title: 'Escalation e-mail sent',
  message: 'The support agent escalated a conversation to support@example.com.',
  metadata: { agent_id: AGENT, recipient_email: 'support@example.com' },
  action_url: null,
  expires_at: null,
  created_at: AT,
  updated_at: AT,
  sender: null,
  recipients: [],
};

const DEPLOYMENT = {
  id: '1a2b3c4d-5e6f-4a8b-9c0d-1e2f3a4b5c6d',
  deployable_type: 'agent',
  deployable_id: AGENT,
  agent_id: AGENT,
  company_id: COMPANY,
  user_id: 'e1d2c3b4-a596-4877-8695-a4b3c2d1e0f9',
  channel: 'web',
  region_id: '5c6d7e8f-9a0b-4c1d-8e2f-3a4b5c6d7e8f',
  languages: 'en',
  status: 'active',
  config: {},
  error: null,
  agent_key: `agent:${AGENT}:web:eu-west`,
  created_at: AT,
  updated_at: AT,
};

const DOCUMENT = {
  id: 'doc_7e6d5c4b-3a29-4187-9f6e-5d4c3b2a1908',
  title: 'Exports and limits',
  categories: ['product'],
  questions: [],
  collection_id: null,
  company_id: COMPANY,
  source_type: 'article',
  source_url: null,
  file_name: null,
  mime_type: 'text/plain',
  size_bytes: 2048,
  language: 'english',
  task_id: 'task_0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
  status: 'completed',
  error: null,
  chunk_count: 4,
  embedding_status: 'completed',
  embedding_error: null,
  created_by_id: 'e1d2c3b4-a596-4877-8695-a4b3c2d1e0f9',
  created_at: AT,
  updated_at: AT,
  completed_at: AT,
};

const CONVERSATION = {
  id: '9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a',
  status: 'handoff',
  channel: 'web',
  agent_id: AGENT,
  assignee_id: null,
  support_query_id: SUPPORT_QUERY.id,
  user: 'customer-4711',
  created_at: AT,
  updated_at: AT,
  title: 'The export to CSV stops at 1,000 rows',
  handoff_reason: 'The customer asked for a person',
  message_count: 3,
  messages: [
    {
      id: '0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e',
      role: 'user',
      content: 'Can I talk to a person, please?',
      author_id: null,
      delivery_status: null,
      delivery_error: null,
      created_at: AT,
    },
  ],
};

export const EVENT_TYPES: readonly EventTypeEntry[] = [
  {
    type: 'support_query.created',
    description: 'A customer started a conversation with an agent: its support query was opened.',
    resource: 'support_query',
    example: SUPPORT_QUERY,
  },
  {
    type: 'support_query.updated',
    description:
      'A support query changed (an agent turn, an escalation, a rating, a reassignment, closing) without being resolved by the change.',
    resource: 'support_query',
    example: {
      ...SUPPORT_QUERY,
      status: 'in_progress',
      metadata: { ...SUPPORT_QUERY.metadata, agent_actions_count: 1 },
    },
  },
  {
    type: 'support_query.resolved',
    description: 'A support query became resolved (by the agent, or by a person after an escalation).',
    resource: 'support_query',
    example: {
      ...SUPPORT_QUERY,
      status: 'resolved',
      resolution: 'Exports of more than 1,000 rows are split into files; the agent explained how to join them.',
      resolved_at: AT,
      metadata: { ...SUPPORT_QUERY.metadata, agent_actions_count: 2, resolution_method: 'automated' },
    },
  },
  {
    type: 'conversation.handoff',
    description:
      'A conversation went from its agent to a person: the agent escalated, the customer asked for a person, or a person took over. Waiting for a person, or already assigned.',
    resource: 'conversation',
    example: CONVERSATION,
  },
  {
    type: 'notification.created',
    description: 'The platform told the team something (an agent sent an e-mail, used a tool, a deployment failed …).',
    resource: 'notification',
    example: NOTIFICATION,
  },
  {
    type: 'deployment.status_changed',
    description: 'A deployment moved to another status (deploying, active, failed, paused, cancelled …).',
    resource: 'deployment',
    example: DEPLOYMENT,
  },
  {
    type: 'document.ingested',
    description: 'A document finished ingesting: its text is searchable by agents. The text itself is not sent.',
    resource: 'document',
    example: DOCUMENT,
  },
  {
    type: 'document.failed',
    description: 'A document could not be ingested; `error` says why.',
    resource: 'document',
    example: { ...DOCUMENT, status: 'failed', error: 'The PDF has no text layer', chunk_count: 0, completed_at: null },
  },
];

/** What POST /webhooks/{id}/test sends. */
export const TEST_EVENT_TYPE = 'webhook.test';

export const EVENT_TYPE_NAMES = EVENT_TYPES.map((entry) => entry.type);

export function eventType(type: string): EventTypeEntry | undefined {
  return EVENT_TYPES.find((entry) => entry.type === type);
}
