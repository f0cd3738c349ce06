/**
 * The chat family's multipart/form-data body. A chat form is small — a message, or one audio
 * file within CHAT_MAX_AUDIO_BYTES — so it is read whole (Fastify enforces the size) and parsed
 * by the runtime's own implementation of the Fetch standard's form-data parsing
 * (`Response.formData()`): on a one-line message that takes about a tenth of a streaming
 * parser's time, all of it before the turn can start (docs/decisions.md).
 */
import { AppErrors } from '../../http/errors.js';
import type { AudioPart } from './chat.schemas.js';

/** Parts a chat form may have (its fields are six). */
const MAX_PARTS = 30;

/** The form's fields by name, `audio` as an AudioPart; refuses other files and repeated fields. */
export async function parseChatForm(body: Buffer, contentType: string, maxAudioBytes: number): Promise<Record<string, string | AudioPart>> {
  let form: FormData;
  try {
    form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
  } catch (error) {
    throw AppErrors.validation(`The multipart form could not be read: ${(error as Error).message}`);
  }
  const fields: Record<string, string | AudioPart> = {};
  let parts = 0;
  for (const [name, value] of form) {
    if (++parts > MAX_PARTS) throw AppErrors.validation(`The form has more than ${MAX_PARTS} parts`);
    if (Object.hasOwn(fields, name)) throw AppErrors.validation(`Invalid field '${name}': given more than once`);
    if (typeof value === 'string') {
      fields[name] = value;
      continue;
    }
    if (name !== 'audio') throw AppErrors.validation(`Invalid field '${name}': only 'audio' may be a file`);
    if (value.size > maxAudioBytes) throw AppErrors.payloadTooLarge(`The audio file is larger than ${maxAudioBytes} bytes (CHAT_MAX_AUDIO_BYTES)`);
    fields[name] = { buffer: Buffer.from(await value.arrayBuffer()), filename: value.name, mimetype: value.type || 'application/octet-stream' };
  }
  return fields;
}
