/**
 * The `Database` type the query builder is typed with, assembled from each module's
 * <module>.tables.ts (kept in step with migrations/ by hand). This is the one kernel file that
 * names module files, type-only and only their table declarations, which import nothing but
 * src/db/columns.ts: the arrows point one way.
 */
import type { Generated } from 'kysely';
import type { DefaultTimestamp } from './columns.js';
import type { AgentsTables } from '../modules/agents/agents.tables.js';
import type { ChannelsTables } from '../modules/channels/channels.tables.js';
import type { ChatTables } from '../modules/chat/chat.tables.js';
import type { CompaniesTables } from '../modules/companies/companies.tables.js';
import type { DeploymentsTables } from '../modules/deployments/deployments.tables.js';
import type { IdentityTables } from '../modules/identity/identity.tables.js';
import type { IntegrationsTables } from '../modules/integrations/integrations.tables.js';
import type { KnowledgeTables } from '../modules/knowledge/knowledge.tables.js';
import type { SupportTables } from '../modules/support-queries/support-queries.tables.js';
import type { NotificationTables } from '../modules/team-notifications/team-notifications.tables.js';
import type { WebhooksTables } from '../modules/webhooks/webhooks.tables.js';
import type { VoiceAgentsTables } from '../modules/voice-agents/voice-agents.tables.js';
import type { WorkflowsTables } from '../modules/workflows/workflows.tables.js';

/** Mail the outbox adapter keeps when no SMTP server is configured (or one refused it). */
export interface EmailOutboxTable {
  id: Generated<string>;
  company_id: string | null;
  recipient: string;
  subject: string;
  body_text: string;
  kind: string;
  error: string | null;
  created_at: DefaultTimestamp;
}

/** Every table of the database: each module's tables plus the kernel's own. */
export interface Database
  extends
    CompaniesTables,
    IdentityTables,
    AgentsTables,
    KnowledgeTables,
    SupportTables,
    NotificationTables,
    ChatTables,
    ChannelsTables,
    DeploymentsTables,
    IntegrationsTables,
    VoiceAgentsTables,
    WorkflowsTables,
    WebhooksTables {
  email_outbox: EmailOutboxTable;
}
