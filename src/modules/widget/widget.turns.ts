/**
 * A visitor's message through the chat module's one turn (support query, notifications, tools,
 * hand-off — the same as every channel): the deployment's agent_key, channel `web`, the visitor
 * (or the identified customer) as the end user. Streamed with the chat family's events through
 * its stream hub, so a reload mid-answer resumes by `Last-Event-ID` the way the chat family does;
 * history, feedback and resumes reach only the visitor's own conversations.
 */
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { AppErrors } from '../../http/errors.js';
import {
  resumeStream,
  streamPrepared,
  type ChatModule,
  type PreparedTurn,
  type StreamEvent,
  type StreamOptions,
} from '../chat/index.js';
import type { MessageBody, WidgetMessage } from './widget.schemas.js';
import type { WidgetRecord, WidgetService } from './widget.service.js';
import type { Visitor } from './widget.tokens.js';

/** Turns started here, for a resume's ownership check while they are kept (bounded). */
const TURNS_KEPT = 10_000;
const HISTORY_LIMIT = 100;

interface StoredCitation {
  document_id: string;
  title: string;
}

export function createWidgetTurns(deps: {
  widget: WidgetService;
  chat: Pick<ChatModule, 'turns' | 'streams' | 'resume' | 'conversations'>;
  stream: StreamOptions;
}) {
  const { widget, chat } = deps;
  const turns = new Map<string, string>();
  const started = (turnId: string, conversationId: string) => {
    if (turns.size >= TURNS_KEPT) turns.delete(turns.keys().next().value as string);
    turns.set(turnId, conversationId);
  };

  /** Citations as the widget shows them: title and, for a document from the web, its address. */
  async function links(record: WidgetRecord, citations: readonly StoredCitation[]) {
    const urls = await widget.documentUrls(
      record,
      citations.map((citation) => citation.document_id),
    );
    return citations.map((citation) => ({
      document_id: citation.document_id,
      title: citation.title,
      url: urls.get(citation.document_id) ?? null,
    }));
  }

  async function prepare(record: WidgetRecord, visitor: Visitor, body: MessageBody): Promise<PreparedTurn> {
    if (record.status !== 'active')
      throw AppErrors.conflict(
        record.status === 'paused'
          ? 'This assistant is paused and takes no messages for now; try again later'
          : `This assistant is not available (its deployment is ${record.status})`,
      );
    const text = body.text?.trim() ?? '';
    if (!text) throw AppErrors.validation("Invalid field 'text': is required and must not be blank");
    if (body.conversation_id !== undefined) await widget.mustOwn(record, visitor, body.conversation_id);
    const customer = widget.customerOf(visitor);
    const turn = await chat.turns.prepare(
      widget.caller(record),
      {
        agent_key: record.agentKey,
        query: text,
        user: widget.userOf(visitor),
        ...(body.conversation_id !== undefined ? { conversation_id: body.conversation_id } : {}),
      },
      customer ? { customer } : {},
    );
    return turn;
  }

  return {
    /** A new turn streamed as server-sent events; a new conversation becomes the visitor's. */
    async stream(
      reply: FastifyReply,
      record: WidgetRecord,
      visitor: Visitor,
      body: MessageBody,
      log: FastifyBaseLogger,
    ): Promise<void> {
      const turn = await prepare(record, visitor, body);
      // A new conversation becomes the visitor's once the turn produces its first output (as the
      // chat module writes the conversation itself): the insert runs beside the streamed answer,
      // not beside the writes and the search on the way to the first token; `end` waits for it.
      let bound: Promise<void> | undefined;
      const bind = () => {
        if (body.conversation_id !== undefined) return Promise.resolve();
        bound ??= widget.bind(record, visitor, turn.conversation.id);
        return bound;
      };
      started(turn.id, turn.conversation.id);
      await streamPrepared(chat as ChatModule, reply, turn, deps.stream, log, {
        settled: bind,
        rewrite: async (event: StreamEvent) => {
          if (event.type !== 'start') bind().catch(() => undefined);
          return event.type === 'chunk' && event.kind === 'citations'
            ? { ...event, citations: await links(record, event.citations as StoredCitation[]) }
            : event;
        },
      });
    },

    /** A new turn answered whole. */
    async whole(record: WidgetRecord, visitor: Visitor, body: MessageBody, signal: AbortSignal) {
      const turn = await prepare(record, visitor, body);
      // The binding is written beside the turn; the answer is returned once both are done.
      const bound = body.conversation_id === undefined ? widget.bind(record, visitor, turn.conversation.id) : undefined;
      bound?.catch(() => undefined);
      const result = await chat.turns.run(turn, signal);
      await bound;
      const message: WidgetMessage = {
        id: result.message_id ?? turn.id,
        role: 'assistant',
        content: result.agent_response_text,
        created_at: new Date(turn.startedAt + result.response_time_ms).toISOString(),
      };
      return { conversation_id: result.conversation_id, message };
    },

    /** The rest of a streamed answer after `Last-Event-ID`; 404 for a turn not of this visitor. */
    async resume(reply: FastifyReply, record: WidgetRecord, visitor: Visitor, lastEventId: string): Promise<void> {
      const cursor = chat.resume.cursor(lastEventId);
      await widget.turnConversation(record, visitor, cursor.turnId, turns.get(cursor.turnId));
      await resumeStream(chat as ChatModule, reply, widget.caller(record), lastEventId, deps.stream);
    },

    /** The messages of the visitor's conversation (default: its latest), oldest first. */
    async history(record: WidgetRecord, visitor: Visitor, conversationId: string | undefined) {
      const id = conversationId ?? (await widget.latest(record, visitor));
      if (!id) return { conversation_id: null, data: [] };
      await widget.mustOwn(record, visitor, id);
      const page = await chat.conversations
        .messages(widget.caller(record), id, { limit: HISTORY_LIMIT, order: 'desc' })
        // A first turn still answering: its conversation row is written with the first output.
        .catch((error: unknown) => {
          if ((error as { statusCode?: number }).statusCode === 404) return { data: [] };
          throw error;
        });
      const messages = page.data.slice().reverse();
      const cited = await links(
        record,
        messages.flatMap((message) => message.citations),
      );
      const byDocument = new Map(cited.map((link) => [link.document_id, link.url]));
      return {
        conversation_id: id,
        data: messages.map((message) => ({
          id: message.id,
          role: message.role,
          content: message.content,
          created_at: message.created_at,
          ...(message.role === 'assistant'
            ? {
                citations: message.citations.map((citation) => ({
                  document_id: citation.document_id,
                  title: citation.title,
                  url: byDocument.get(citation.document_id) ?? null,
                })),
              }
            : {}),
        })),
      };
    },

    /** Rates the visitor's conversation 1–5 (it sets the support query's satisfaction). */
    async feedback(record: WidgetRecord, visitor: Visitor, conversationId: string, rating: number, comment: string) {
      await widget.mustOwn(record, visitor, conversationId);
      const { feedback, created } = await chat.conversations.feedback(
        widget.caller(record),
        conversationId,
        rating,
        comment,
      );
      return {
        created,
        feedback: {
          conversation_id: feedback.conversation_id,
          rating: feedback.rating,
          comment: feedback.comment,
          updated_at: feedback.updated_at,
        },
      };
    },
  };
}

export type WidgetTurns = ReturnType<typeof createWidgetTurns>;
