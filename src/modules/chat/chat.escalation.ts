/**
 * When an agent hands a conversation to a person and its escalation settings name a contact
 * address, a job (enqueued with the turn) e-mails the transcript there and tells the team
 * (`email_sent`). Mail goes through the platform mailer: SMTP, or the outbox when none is set.
 */
import type { Db } from '../../db/database.js';
import type { JobDefinition } from '../../jobs/queue.js';
import type { Clock } from '../../lib/clock.js';
import type { Mailer } from '../../ports/mailer.js';
import { findAgent } from '../agents/index.js';
import type { AgentNotifier } from './chat.ports.js';
import * as repo from './chat.repo.js';

export const ESCALATION_EMAIL_JOB = 'chat.escalation-email';

export interface EscalationEmailJob {
  companyId: string;
  conversationId: string;
  agentId: string;
  queryId: string | null;
  to: string;
}

const TRANSCRIPT_MESSAGES = 20;

export function createEscalationMailer(deps: {
  db: Db;
  clock: Clock;
  mailer: Pick<Mailer, 'send'>;
  notifications: AgentNotifier | null;
}) {
  return async function sendEscalationEmail(job: EscalationEmailJob): Promise<void> {
    const { db } = deps;
    const conversation = await repo.findConversation(db, job.companyId, job.conversationId, null);
    const agent = await findAgent(db, job.companyId, job.agentId);
    if (!conversation || !agent) return;
    const messages = await repo.recentMessages(db, job.companyId, job.conversationId, TRANSCRIPT_MESSAGES);
    const subject = `[${agent.title}] A customer asked for a person: ${conversation.title || 'conversation'}`.slice(
      0,
      200,
    );
    const text = [
      `${agent.title} handed a conversation over to your team.`,
      `Conversation: ${conversation.id}${conversation.external_user_id ? ` (user ${conversation.external_user_id})` : ''}`,
      ...(job.queryId ? [`Support query: ${job.queryId}`] : []),
      '',
      ...messages.map((message) => `${message.role === 'user' ? 'Customer' : agent.title}: ${message.content}`),
    ].join('\n');
    const started = deps.clock.now().getTime();
    await deps.mailer.send({ to: job.to, subject, text, kind: 'escalation', companyId: job.companyId });
    await deps.notifications?.notify(db, {
      companyId: job.companyId,
      senderId: null,
      notificationType: 'email_sent',
      category: 'agent',
      priority: 'high',
      title: `${agent.title} e-mailed ${job.to}`,
      message: `The conversation “${conversation.title}” was escalated and its transcript sent to ${job.to}.`,
      metadata: {
        agent_id: agent.id,
        ...(job.queryId ? { query_id: job.queryId } : {}),
        action_type: 'escalation_email',
        recipient_email: job.to,
        email_subject: subject,
        execution_time: `${((deps.clock.now().getTime() - started) / 1000).toFixed(1)}s`,
      },
    });
  };
}

export function chatJobs(chat: {
  sendEscalationEmail(job: EscalationEmailJob): Promise<void>;
}): JobDefinition<EscalationEmailJob>[] {
  return [
    {
      name: ESCALATION_EMAIL_JOB,
      handler: (data) => chat.sendEscalationEmail(data),
      concurrency: 1,
      retryLimit: 3,
      pollingIntervalSeconds: 1,
    },
  ];
}
