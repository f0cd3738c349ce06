/**
 * Crash durability of a chat turn. Before the model, a tool or a voice step starts, the turn is
 * written to `chat_pending_turns` (its conversation row first): the customer's question is
 * durable from then on. The turn's own write deletes it. A process that dies mid-turn (killed,
 * out of memory, the machine lost) leaves its rows behind; every process beats a heartbeat in
 * `chat_turn_owners`, and the sweep — at start and then periodically, where workers run — turns
 * the rows of owners whose heartbeat stopped (or of any owner, once a turn is far older than a
 * turn may last) into a failed turn: the question and an empty answer marked `error` in one
 * write with the support query (as a turn that failed on its own is recorded), so the
 * conversation is never left empty and the question is never lost. Idempotent: a turn whose
 * answer was written before the process died is only removed from the journal.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { ChatDeployments, SupportRecorder } from './chat.ports.js';
import * as repo from './chat.repo.js';

export interface TurnJournalDeps {
  db: Db;
  supportQueries: SupportRecorder | null;
  deployments: ChatDeployments | null;
  /** How often the heartbeat is written and the sweep runs (ms). */
  heartbeatMs: number;
  /** A turn older than this is recovered whatever its owner (ms): well past the turn time limit. */
  staleTurnMs: number;
  log: { info?(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

export interface PendingTurn {
  id: string;
  companyId: string;
  conversationId: string;
  agentId: string;
  deploymentId: string | null;
  query: string;
}

/** Missed heartbeats after which an owner is taken for dead. */
const MISSED_BEATS = 3;
const SWEEP_BATCH = 100;

export function createTurnJournal(deps: TurnJournalDeps) {
  const { db } = deps;
  /** This process: a new id at each start, so a restarted process never claims its old turns. */
  const owner = randomUUID();
  let timer: NodeJS.Timeout | null = null;
  let beating: Promise<void> | null = null;
  let sweeping: Promise<number> | null = null;

  async function beat() {
    await db
      .insertInto('chat_turn_owners')
      .values({ id: owner })
      .onConflict((oc) => oc.column('id').doUpdateSet({ seen_at: sql`now()` }))
      .execute();
  }

  /** Records one interrupted turn as failed, and removes it from the journal (one transaction). */
  async function recover(turn: PendingTurn): Promise<boolean> {
    return db.transaction().execute(async (trx) => {
      // Locked, so two sweeps (two instances) never record one turn twice.
      const still = await trx
        .selectFrom('chat_pending_turns')
        .select('id')
        .where('id', '=', turn.id)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (!still) return false;
      const answered = await trx
        .selectFrom('conversation_messages')
        .select('id')
        .where('company_id', '=', turn.companyId)
        .where('id', '=', turn.id)
        .executeTakeFirst();
      if (!answered) {
        const support = deps.supportQueries
          ? deps.supportQueries.turnRecord({
              companyId: turn.companyId,
              agentId: turn.agentId,
              query: turn.query,
              turn: null,
            })
          : null;
        await repo.writeTurn(trx, {
          companyId: turn.companyId,
          conversationId: turn.conversationId,
          messages: [
            { id: randomUUID(), role: 'user', content: turn.query },
            {
              id: turn.id,
              role: 'assistant',
              content: '',
              model: null,
              was_resolved: false,
              finish_reason: 'error',
            },
          ],
          support,
          refuseClosed: false,
        });
      }
      await trx.deleteFrom('chat_pending_turns').where('id', '=', turn.id).execute();
      return !answered;
    });
  }

  async function sweepOnce(): Promise<number> {
    let recovered = 0;
    for (;;) {
      const rows = await db
        .selectFrom('chat_pending_turns as p')
        .leftJoin('chat_turn_owners as o', 'o.id', 'p.owner')
        .select(['p.id', 'p.company_id', 'p.conversation_id', 'p.agent_id', 'p.deployment_id', 'p.query', 'p.owner'])
        .where('p.owner', '<>', owner)
        .where((eb) =>
          eb.or([
            eb('o.id', 'is', null),
            eb('o.seen_at', '<', sql<Date>`now() - make_interval(secs => ${(deps.heartbeatMs * MISSED_BEATS) / 1000})`),
            eb('p.started_at', '<', sql<Date>`now() - make_interval(secs => ${deps.staleTurnMs / 1000})`),
          ]),
        )
        .orderBy('p.started_at')
        .limit(SWEEP_BATCH)
        .execute();
      for (const row of rows) {
        const turn: PendingTurn = {
          id: row.id,
          companyId: row.company_id,
          conversationId: row.conversation_id,
          agentId: row.agent_id,
          deploymentId: row.deployment_id,
          query: row.query,
        };
        try {
          if (!(await recover(turn))) continue;
          recovered += 1;
          if (turn.deploymentId && deps.deployments) {
            await deps.deployments
              .logEvent(
                turn.deploymentId,
                'error',
                'Chat turn interrupted (the service stopped while answering): recorded as failed, the question kept',
              )
              .catch(() => undefined);
          }
        } catch (error) {
          deps.log.warn({ turn_id: turn.id, error: (error as Error).message }, 'interrupted chat turn not recovered');
        }
      }
      if (rows.length < SWEEP_BATCH) break;
    }
    // Owners long silent, with no turn left, are forgotten.
    await db
      .deleteFrom('chat_turn_owners')
      .where('seen_at', '<', sql<Date>`now() - make_interval(secs => ${deps.staleTurnMs / 1000})`)
      .where((eb) =>
        eb.not(
          eb.exists(eb.selectFrom('chat_pending_turns').select('id').whereRef('owner', '=', 'chat_turn_owners.id')),
        ),
      )
      .execute();
    if (recovered) deps.log.warn({ recovered }, 'interrupted chat turns recorded as failed');
    return recovered;
  }

  return {
    owner,

    /**
     * Writes the turn before it starts: its conversation row already written, or `conversation`, a
     * new one written with it in the same statement (one round trip, one commit).
     */
    async begin(turn: PendingTurn, conversation?: repo.NewConversation): Promise<void> {
      // A process that has not beaten yet (not started) would read as dead to a sweeper.
      beating ??= beat().catch((error: Error) => deps.log.warn({ error: error.message }, 'chat turn heartbeat failed'));
      await beating;
      await repo.insertPendingTurn(
        db,
        {
          id: turn.id,
          company_id: turn.companyId,
          conversation_id: turn.conversationId,
          agent_id: turn.agentId,
          deployment_id: turn.deploymentId,
          query: turn.query,
          owner,
        },
        conversation,
      );
    },

    /** The turn's records are written (or it was refused): out of the journal. */
    async end(turnId: string): Promise<void> {
      await repo.deletePendingTurn(db, turnId, owner);
    },

    /** Interrupted turns of dead owners recorded as failed; returns how many. */
    sweep(): Promise<number> {
      sweeping ??= sweepOnce().finally(() => {
        sweeping = null;
      });
      return sweeping;
    },

    /**
     * Starts the heartbeat (every process serving turns) and, with `sweep`, the recovery of
     * interrupted turns: at once, then at each beat.
     */
    async start(options: { sweep: boolean }): Promise<void> {
      beating = beat();
      await beating;
      if (options.sweep) await this.sweep();
      timer = setInterval(() => {
        beating = beat().catch((error: Error) => deps.log.warn({ error: error.message }, 'chat turn heartbeat failed'));
        if (options.sweep)
          this.sweep().catch((error: Error) => deps.log.warn({ error: error.message }, 'chat turn sweep failed'));
      }, deps.heartbeatMs);
      timer.unref();
    },

    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      timer = null;
      await Promise.allSettled([beating, sweeping]);
    },
  };
}

export type TurnJournal = ReturnType<typeof createTurnJournal>;
