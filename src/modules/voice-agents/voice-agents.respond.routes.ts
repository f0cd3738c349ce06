/**
 * `POST /voice-agents/{id}/respond` (multipart: `audio` or `text`, optional `conversation_id`,
 * `user`): a voice turn. `Accept: text/event-stream` streams events; otherwise one audio body with
 * the texts in headers. Any member of the company may talk to its voice agents. The rules are in
 * voice-agents.respond.ts.
 */
import { Readable } from 'node:stream';
import fastifyMultipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { companyContext } from '../../http/auth.js';
import { AppError, AppErrors, errorResponses, truncateQuoted } from '../../http/errors.js';
import { findUnsafeInput } from '../../http/validation.js';
import { headerText, type RespondInput, type VoiceEvent, type VoiceRespond } from './voice-agents.respond.js';
import { startEventStream } from '../../http/sse.js';

const errors = errorResponses('detail');

/** The multipart form, for the OpenAPI document (the handler reads the parts itself). */
const RespondForm = Type.Object({
  audio: Type.Optional(
    Type.String({
      format: 'binary',
      contentMediaType: 'application/octet-stream',
      description: 'The spoken question.',
    }),
  ),
  text: Type.Optional(Type.String({ maxLength: 8000, description: 'The question as text (instead of audio).' })),
  conversation_id: Type.Optional(Type.String({ maxLength: 100, description: 'continue a stored voice conversation' })),
  user: Type.Optional(Type.String({ maxLength: 200, description: 'end-user id of your system' })),
});
const FIELDS = new Set(['text', 'conversation_id', 'user']);
const FIELD_MAX: Record<string, number> = { conversation_id: 100, user: 200 };

/** The form: `audio` (file), `text`, `conversation_id`, `user`; anything else is a 400 naming it. */
async function readForm(request: FastifyRequest): Promise<RespondInput> {
  if (!request.isMultipart())
    throw AppErrors.unsupportedMediaType('Send the turn as multipart/form-data (field audio or text)');
  const input: Record<string, unknown> = {};
  try {
    for await (const part of request.parts()) {
      const name = truncateQuoted(part.fieldname).replace(/\0/g, '\\0');
      const unsafe = findUnsafeInput([part.fieldname, part.type === 'file' ? part.filename : String(part.value)]);
      if (unsafe) throw AppErrors.validation(`Invalid field '${name}': ${unsafe.problem}`);
      if (Object.hasOwn(input, part.fieldname))
        throw AppErrors.validation(`Invalid field '${name}': given more than once`);
      if (part.type === 'file') {
        if (part.fieldname !== 'audio')
          throw AppErrors.validation(`Invalid field '${name}': only 'audio' may be a file`);
        input.audio = { buffer: await part.toBuffer(), filename: part.filename, mimetype: part.mimetype };
      } else {
        if (!FIELDS.has(part.fieldname)) throw AppErrors.validation(`Invalid field '${name}': unknown field`);
        const value = String(part.value);
        if (FIELD_MAX[part.fieldname] && value.length > FIELD_MAX[part.fieldname]!)
          throw AppErrors.validation(`Invalid field '${name}': at most ${FIELD_MAX[part.fieldname]} characters`);
        input[part.fieldname] = value;
      }
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    const { statusCode, message } = error as { statusCode?: number; message?: string };
    if (statusCode === 413) throw AppErrors.payloadTooLarge("Invalid field 'audio': the audio or a field is too large");
    throw AppErrors.validation(`The multipart form could not be read: ${truncateQuoted(message ?? 'unknown error')}`);
  }
  return input as RespondInput;
}

/** Aborts when the client goes away before the answer is complete. */
function disconnectSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

/**
 * Server-sent events on the hijacked reply: `event: <type>` / `data: <json>`. Each event goes to
 * the socket as it is written: Node corks the socket on a write until the next tick, which would
 * hold a text event back behind whatever the same tick does next (as chat.sse.ts explains).
 */
function eventStream(reply: FastifyReply) {
  const raw = startEventStream(reply);
  return (event: VoiceEvent) => {
    if (raw.destroyed || raw.writableEnded) return;
    raw.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    raw.socket?.uncork();
  };
}

export function voiceRespondRoutes(respond: VoiceRespond, maxAudioBytes: number): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(fastifyMultipart, {
      limits: { fileSize: maxAudioBytes, files: 1, fields: 3, fieldSize: 32_768 },
      throwFileSizeLimit: true,
    });
    app.post(
      '/voice-agents/:id/respond',
      {
        schema: {
          operationId: 'respondVoiceAgent',
          tags: ['voice-agents'],
          summary: 'A spoken turn with a voice agent (multipart: audio or text, optional conversation_id, user)',
          description:
            "Transcribes `audio` (or takes `text`, at most 8000 characters), lets the voice agent's main agent answer through the chat turn (conversation on channel voice), and speaks the answer with the voice agent's voice and settings. Accept: text/event-stream streams events start, transcribed_text, agent_text_chunk…, audio_chunk {index, format, content_type, text, text_to_audio_ms, audio (base64)} per finished sentence, each a complete file (the first sentence may come in two: its first moment, then the rest with text \"\"; play the chunks one after another) (citation markers and the sources line are never spoken), citations {citations: [{document_id, chunk_id, collection_id, title, score, text}]} when the answer relied on knowledge passages, end {conversation_id, message_id} (errors as error then end); otherwise one audio body in the voice agent's output_format with headers x-conversation-id, x-message-id, x-transcribed-text and x-agent-text (percent-encoded UTF-8, at most 4096 bytes each; x-agent-text-truncated: true when cut). Inactive voice agent or none without a main agent → 409. Any member may call it.",
          consumes: ['multipart/form-data'],
          multipartBody: RespondForm,
          params: Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false }),
          querystring: Type.Object(
            {
              output_format: Type.Optional(
                Type.String({
                  maxLength: 40,
                  description:
                    "This turn's audio format instead of the voice agent's (ElevenLabs' query form); one the engine does not serve → 400 listing those it does.",
                  examples: ['wav_16000'],
                }),
              ),
            },
            { additionalProperties: false },
          ),
          response: {
            200: Type.Unsafe<unknown>({
              type: 'string',
              format: 'binary',
              description: 'audio in the output_format, or text/event-stream events',
            }),
            ...errors,
          },
        },
      },
      async (request, reply) => {
        const signal = disconnectSignal(reply);
        const prepared = await respond.prepare(
          companyContext(request),
          request.params.id,
          {
            ...(await readForm(request)),
            ...(request.query.output_format ? { output_format: request.query.output_format } : {}),
          },
          signal,
        );
        if (/text\/event-stream/.test(request.headers.accept ?? '')) {
          const send = eventStream(reply);
          return respond.stream(prepared, signal, send).finally(() => reply.raw.end());
        }
        const { result, audio, transcript } = await respond.whole(prepared, signal);
        const agentText = headerText(result.agent_response_text);
        reply.header('x-conversation-id', result.conversation_id).header('x-agent-text', agentText.value);
        if (result.message_id) reply.header('x-message-id', result.message_id);
        if (agentText.truncated) reply.header('x-agent-text-truncated', 'true');
        if (transcript !== null) reply.header('x-transcribed-text', headerText(transcript).value);
        return reply
          .code(200)
          .type(audio.contentType)
          .send(audio.bytes ?? Readable.from(audio.body));
      },
    );
  };
}
