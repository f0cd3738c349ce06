/**
 * The hand-off's transitions (DESIGN §13; the diagram is in chat.handoff-state.ts): a person
 * assigns, takes over, releases, closes and replies; a turn starts a hand-off; a customer writes
 * while a person has the conversation. Each transition locks the conversation row, checks its
 * state on the locked row (two people assigning at once: the second sees the first's assignment
 * and gets a 409), writes, and stages its events in the same transaction; the events are
 * published after the commit. A reply is delivered on the conversation's channel after it
 * commits (chat.delivery.ts); the outcome is stored on the message and published.
 */
import type { Db, Executor } from '../../db/database.js';
import { AppErrors } from '../../http/errors.js';
import { hasRole } from '../../lib/roles.js';
import type { ConversationEvent, ConversationEvents, EventMessage } from './chat.conversation-events.js';
import type { DeliveryOutcome, DeliveryRegistry } from './chat.delivery.js';
import * as repo from './chat.handoff.repo.js';
import { inboxStatus } from './chat.handoff-state.js';
import type { SupportRecorder } from './chat.ports.js';
import type { ConversationRow } from './chat.repo.js';

/** A person of the company acting on a conversation (their role was checked by the route). */
export interface Person {
  companyId: string;
  userId: string;
}

export interface HandoffDeps {
  db: Db;
  events: ConversationEvents;
  deliveries: DeliveryRegistry;
  supportQueries: SupportRecorder | null;
}

type Locked = NonNullable<Awaited<ReturnType<typeof repo.lockConversation>>>;

export const TAKEN_OVER = 'A person took over the conversation';

function eventMessage(row: repo.HandoffMessageRow): EventMessage {
  return {
    id: row.id,
    role: row.role as EventMessage['role'],
    content: row.content,
    author_id: row.author_id,
    delivery_status: row.delivery_status,
    delivery_error: row.delivery_error,
    created_at: row.created_at.toISOString(),
  };
}

export function createHandoff(deps: HandoffDeps) {
  const { db, events } = deps;

  function statusChanged(row: Locked, actorId: string | null): ConversationEvent {
    return events.make({
      type: 'handoff',
      company_id: row.company_id,
      conversation_id: row.id,
      status: inboxStatus(row),
      reason: row.handoff_reason,
      assignee_id: row.assignee_id,
      actor_id: actorId,
    });
  }

  /** Runs `move` on the locked, open conversation; stages its events; publishes them after the commit. */
  async function transition<T>(
    person: Person,
    conversationId: string,
    move: (trx: Executor, row: Locked, staged: ConversationEvent[]) => Promise<T>,
  ): Promise<T> {
    const staged: ConversationEvent[] = [];
    const result = await db.transaction().execute(async (trx) => {
      const row = await repo.lockConversation(trx, person.companyId, conversationId);
      if (!row) throw AppErrors.notFound('Conversation', conversationId);
      if (row.status === 'closed') throw AppErrors.conflict(`Conversation ${conversationId} is closed`);
      const value = await move(trx, row, staged);
      await events.stage(trx, staged);
      return value;
    });
    events.publish(staged);
    return result;
  }

  /** A person the conversation may go to: a member of the company who may answer (developer or above). */
  async function checkAssignee(companyId: string, userId: string) {
    const member = await repo.findMember(db, companyId, userId);
    if (!member) throw AppErrors.validation(`Invalid field 'assignee_id': ${userId} is not a member of this company`);
    if (!hasRole(member.role, 'developer')) {
      throw AppErrors.validation(
        `Invalid field 'assignee_id': ${userId} is a ${member.role}; only developers and above answer conversations`,
      );
    }
  }

  function refuseOthersConversation(row: Locked, person: Person, allowedAssignee?: string) {
    if (row.handler === 'assigned' && row.assignee_id !== person.userId && row.assignee_id !== allowedAssignee) {
      throw AppErrors.conflict(`Conversation ${row.id} is already assigned to ${row.assignee_id}`);
    }
  }

  async function escalateQuery(trx: Executor, row: Locked) {
    if (deps.supportQueries && row.support_query_id)
      await deps.supportQueries.escalate(trx, { companyId: row.company_id, queryId: row.support_query_id });
  }

  /** To `assigned` with `assigneeId`: from a hand-off, or from the current assignee passing it on. */
  async function assignTo(trx: Executor, row: Locked, person: Person, assigneeId: string, staged: ConversationEvent[]) {
    if (row.handler === 'assigned' && row.assignee_id === assigneeId) return row;
    const moved = await repo.setHandler(trx, row.company_id, row.id, { handler: 'assigned', assigneeId });
    staged.push(statusChanged(moved, person.userId));
    return moved;
  }

  async function deliver(person: Person, row: Locked, message: repo.HandoffMessageRow): Promise<DeliveryOutcome> {
    const member = await repo.findMember(db, person.companyId, person.userId);
    const outcome = await deps.deliveries.deliver({
      companyId: row.company_id,
      conversationId: row.id,
      channel: row.channel ?? 'api',
      deploymentId: row.deployment_id,
      agentId: row.agent_id,
      externalUserId: row.external_user_id,
      messageId: message.id,
      content: message.content,
      authorId: person.userId,
      authorName: member ? `${member.first_name} ${member.last_name}`.trim() || member.email : 'Support',
      createdAt: message.created_at,
    });
    const event = events.make({
      type: 'delivery',
      company_id: row.company_id,
      conversation_id: row.id,
      message_id: message.id,
      delivery_status: outcome.status,
      delivery_error: outcome.error,
    });
    await db.transaction().execute(async (trx) => {
      await repo.setDelivery(trx, row.company_id, message.id, outcome.status, outcome.error);
      await events.stage(trx, [event]);
    });
    events.publish([event]);
    return outcome;
  }

  return {
    /** `POST …/assign`: a waiting conversation to a person (the caller when `assigneeId` is omitted). */
    async assign(person: Person, conversationId: string, assigneeId = person.userId): Promise<ConversationRow> {
      if (assigneeId !== person.userId) await checkAssignee(person.companyId, assigneeId);
      return transition(person, conversationId, async (trx, row, staged) => {
        if (row.handler === 'bot') {
          throw AppErrors.conflict(
            `Conversation ${row.id} is answered by the agent: take it over (POST /api/public/conversations/${row.id}/takeover) to answer it`,
          );
        }
        refuseOthersConversation(row, person, assigneeId);
        return assignTo(trx, row, person, assigneeId, staged);
      });
    },

    /** `POST …/takeover`: a person takes the conversation from the agent (or from the waiting queue). */
    async takeover(person: Person, conversationId: string): Promise<ConversationRow> {
      return transition(person, conversationId, async (trx, row, staged) => {
        refuseOthersConversation(row, person);
        if (row.handler === 'assigned') return row;
        const moved = await repo.setHandler(trx, row.company_id, row.id, {
          handler: 'assigned',
          assigneeId: person.userId,
          ...(row.handler === 'bot' ? { reason: TAKEN_OVER, startedAt: new Date() } : {}),
        });
        await escalateQuery(trx, row);
        staged.push(statusChanged(moved, person.userId));
        return moved;
      });
    },

    /** `POST …/release`: back to the agent, which answers the next customer message. */
    async release(person: Person, conversationId: string): Promise<ConversationRow> {
      return transition(person, conversationId, async (trx, row, staged) => {
        if (row.handler === 'bot') throw AppErrors.conflict(`Conversation ${row.id} is already answered by the agent`);
        const moved = await repo.setHandler(trx, row.company_id, row.id, {
          handler: 'bot',
          assigneeId: null,
          reason: null,
        });
        staged.push(statusChanged(moved, person.userId));
        return moved;
      });
    },

    /** `POST …/close`: the conversation ends; its support query is resolved by this person. */
    async close(person: Person, conversationId: string, resolution?: string): Promise<ConversationRow> {
      return transition(person, conversationId, async (trx, row, staged) => {
        const closed = await repo.closeConversation(trx, row.company_id, row.id);
        if (deps.supportQueries && row.support_query_id) {
          await deps.supportQueries.resolveByPerson(trx, {
            companyId: row.company_id,
            queryId: row.support_query_id,
            userId: person.userId,
            resolution,
          });
        }
        staged.push(statusChanged(closed, person.userId));
        return closed;
      });
    },

    /**
     * `POST …/messages`: a person's reply, stored (role human) and published, then delivered on
     * the conversation's channel; a waiting conversation is assigned to its author.
     */
    async reply(person: Person, conversationId: string, content: string) {
      const { row, message } = await transition(person, conversationId, async (trx, locked, staged) => {
        if (locked.handler === 'bot') {
          throw AppErrors.conflict(
            `Conversation ${locked.id} is answered by the agent: take it over (POST /api/public/conversations/${locked.id}/takeover) before replying`,
          );
        }
        const current =
          locked.handler === 'handoff' ? await assignTo(trx, locked, person, person.userId, staged) : locked;
        const written = await repo.insertMessage(trx, {
          companyId: person.companyId,
          conversationId: locked.id,
          role: 'human',
          content,
          authorId: person.userId,
          deliveryStatus: deps.deliveries.has(locked.channel) ? 'pending' : 'delivered',
        });
        staged.push(
          events.make({
            type: 'message',
            company_id: person.companyId,
            conversation_id: locked.id,
            message: eventMessage(written),
          }),
        );
        return { row: current, message: written };
      });
      if (!deps.deliveries.has(row.channel)) return message;
      const outcome = await deliver(person, row, message);
      return { ...message, delivery_status: outcome.status, delivery_error: outcome.error };
    },

    /** After the commit of a transaction that staged `staged` (a turn's hand-off). */
    publish(staged: readonly ConversationEvent[]): void {
      events.publish(staged);
    },

    /**
     * Inside a turn's transaction: the agent escalated, so the conversation waits for a person
     * (unless a person already has it). The event is returned for the caller to publish after its commit.
     */
    async startInTurn(
      trx: Executor,
      input: { companyId: string; conversationId: string; reason: string },
    ): Promise<ConversationEvent | null> {
      const moved = await repo.startHandoff(trx, input.companyId, input.conversationId, input.reason);
      if (!moved) return null;
      const event = events.make({
        type: 'handoff',
        company_id: input.companyId,
        conversation_id: input.conversationId,
        status: 'handoff',
        reason: input.reason,
        assignee_id: null,
        actor_id: null,
      });
      await events.stage(trx, [event]);
      return event;
    },

    /**
     * A customer's message while a person has the conversation: stored with no agent turn and
     * published to the inbox. Answers the conversation's status; null (nothing written) when it
     * is the agent's again.
     */
    async customerMessage(input: { companyId: string; conversationId: string; content: string }) {
      return transition({ companyId: input.companyId, userId: '' }, input.conversationId, async (trx, row, staged) => {
        // Released while the turn was prepared: the agent answers it after all.
        if (row.handler === 'bot') return null;
        const written = await repo.insertMessage(trx, {
          companyId: input.companyId,
          conversationId: row.id,
          role: 'user',
          content: input.content,
          authorId: null,
          deliveryStatus: null,
        });
        staged.push(
          events.make({
            type: 'message',
            company_id: input.companyId,
            conversation_id: row.id,
            message: eventMessage(written),
          }),
        );
        return { status: inboxStatus(row), messageId: written.id };
      });
    },
  };
}

export type Handoff = ReturnType<typeof createHandoff>;
